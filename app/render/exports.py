"""The explorer's downloads, in formats other tools read, each carrying the settings that produced it.

Every export names the model, the raw layer weights w, s = softmax(w), γ, whether layer norm was on, the
word and the sentences; occurrences, sentences and tokens are numbered from 1, as the page numbers them
(#1 is the first occurrence, sentence 1 the first line). No Streamlit here.

Formats:
    CSV (vectors, map coordinates): one row per occurrence; the settings repeat in every row, so a row is
        self-contained when rows are filtered or pasted elsewhere.
    .npz: the arrays plus ``settings`` (a JSON string) and ``sentences``, all readable with
        ``np.load(f, allow_pickle=False)``.
    TensorFlow Embedding Projector: ``vectors.tsv`` (one vector per line, tab-separated, no header) and
        ``metadata.tsv`` (a header row, then one row per vector), plus ``settings.json``, zipped.

Text cells are made safe for spreadsheets and TSV readers (``safe_cell``): tabs and line breaks become
spaces, and a cell that starts like a formula (=, +, -, @) gets a leading apostrophe.
Dims: n occurrences, D = 2P, L + 1 layers.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from app.explore.controls import Controls
from app.explore.inputs import Line, Occurrence

FORMULA_PREFIXES = ("=", "+", "-", "@")  # what spreadsheets read as the start of a formula (OWASP CSV injection)
_BREAKS = re.compile(r"[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
FORMAT = "elmo-explorer-export/1"


@dataclass(frozen=True)
class Settings:
    """What produced an export: the explorer's ``controls`` (their ``model``: the model's name as shown; their
    ``word``: the word drawn) and what the frame computed from them: s = softmax(w) and the projection method the
    map used ("" without a map)."""

    controls: Controls
    s: tuple[float, ...]
    projection: str = ""

    @classmethod
    def of_frame(cls, frame, model: str) -> Settings:
        """The settings of an ``app.explore.frame.Frame`` drawn with the model shown as ``model``."""
        return cls(
            replace(frame.controls, word=frame.word, model=model),
            tuple(float(v) for v in frame.s),
            frame.projection.method,
        )

    def as_dict(self) -> dict:
        c = self.controls
        return {
            "model": c.model,
            "word": c.word,
            "w": [float(v) for v in c.weights],
            "s": [round(v, 6) for v in self.s],
            "gamma": float(c.gamma),
            "layer_norm": bool(c.layer_norm),
            "projection": self.projection,
            "inflections": bool(c.inflections),
            "mix": "ELMo = gamma * sum_j s_j * h_j, s = softmax(w); h_j: layer j"
            + (" after layer norm per sentence" if c.layer_norm else ""),
        }

    def columns(self) -> list[str]:
        """The settings as CSV cells, in the order of ``SETTINGS_HEADER``."""
        c = self.controls
        return [
            safe_cell(c.model),
            " ".join(f"{v:g}" for v in c.weights),
            " ".join(f"{v:.4f}" for v in self.s),
            f"{c.gamma:g}",
            "yes" if c.layer_norm else "no",
        ]


SETTINGS_HEADER = ["model", "w", "s", "gamma", "layer_norm"]


def safe_cell(text: object) -> str:
    """``text`` as one safe TSV/CSV cell: tabs, line breaks and other separators become one space, and a
    leading =, +, -, @ (also after spaces) is neutralised with an apostrophe, so no spreadsheet runs it."""
    out = _BREAKS.sub(" ", str(text))
    if out.lstrip().startswith(FORMULA_PREFIXES):
        out = "'" + out
    return out


def sentence_records(lines: Sequence[Line]) -> list[dict]:
    """[{"sentence": 1-based number, "label", "text", "tokens"}] for every sentence of the input."""
    return [
        {"sentence": i + 1, "label": ln.label or "", "text": ln.text, "tokens": list(ln.tokens)}
        for i, ln in enumerate(lines)
    ]


def settings_json(settings: Settings, lines: Sequence[Line], occurrences: Sequence[Occurrence]) -> bytes:
    """The settings, the sentences and the occurrences (1-based numbers) as UTF-8 JSON."""
    doc = {
        "format": FORMAT,
        "settings": settings.as_dict(),
        "sentences": sentence_records(lines),
        "occurrences": [
            {
                "occurrence": i + 1,
                "sentence": o.line + 1,
                "token": o.position + 1,
                "form": o.token,
                "label": o.label or "",
            }
            for i, o in enumerate(occurrences)
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")


def _occurrence_cells(i: int, occ: Occurrence, lines: Sequence[Line]) -> list[str]:
    return [
        str(i + 1),
        str(occ.line + 1),
        str(occ.position + 1),
        safe_cell(occ.token),
        safe_cell(occ.label or ""),
        safe_cell(lines[occ.line].text),
    ]


OCCURRENCE_HEADER = ["occurrence", "sentence", "token_in_sentence", "token", "label", "sentence_text"]


def vectors_csv(lines: Sequence[Line], occurrences: Sequence[Occurrence], x: np.ndarray, settings: Settings) -> bytes:
    """CSV, one row per occurrence (numbered as on the page): where it is, its sentence, the settings, then
    the D vector values ``v0 .. v{D-1}``. Raises ValueError when x does not have one row per occurrence."""
    x = np.asarray(x)
    if x.ndim != 2 or len(x) != len(occurrences):
        raise ValueError(f"{len(occurrences)} occurrences but vectors of shape {x.shape}")
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(OCCURRENCE_HEADER + SETTINGS_HEADER + [f"v{d}" for d in range(x.shape[1])])
    for i, (occ, vec) in enumerate(zip(occurrences, x)):
        writer.writerow(_occurrence_cells(i, occ, lines) + settings.columns() + [f"{v:.6g}" for v in vec])
    return buf.getvalue().encode("utf-8")


def coords_csv(
    lines: Sequence[Line],
    occurrences: Sequence[Occurrence],
    coords: np.ndarray,
    settings: Settings,
    clusters: Sequence[int] | None = None,
) -> bytes:
    """CSV of the map: one row per occurrence with x, y (no units), its cluster (1-based, when given), the
    projection method and the settings."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(OCCURRENCE_HEADER + ["x", "y", "cluster", "projection"] + SETTINGS_HEADER)
    for i, (occ, (cx, cy)) in enumerate(zip(occurrences, coords)):
        writer.writerow(
            _occurrence_cells(i, occ, lines)
            + [f"{cx:.6g}", f"{cy:.6g}", _cluster_cell(clusters, i), settings.projection]
            + settings.columns()
        )
    return buf.getvalue().encode("utf-8")


def _cluster_cell(clusters: Sequence[int] | None, i: int) -> str:
    return "" if clusters is None or clusters[i] < 0 else str(int(clusters[i]) + 1)


def npz_bytes(
    arrays: Mapping[str, np.ndarray], settings: Settings, lines: Sequence[Line], occurrences: Sequence[Occurrence]
) -> bytes:
    """The arrays in NumPy's .npz format with ``settings`` (the ``settings_json`` text, a 0-d str array) and
    ``sentences`` (str array, sentence 1 first). Read with ``np.load(io.BytesIO(data), allow_pickle=False)``."""
    buf = io.BytesIO()
    np.savez(
        buf,
        **{k: np.asarray(v) for k, v in arrays.items()},
        settings=np.array(settings_json(settings, lines, occurrences).decode("utf-8")),
        sentences=np.array([ln.text for ln in lines], dtype=str),
    )
    return buf.getvalue()


METADATA_HEADER = ["label", "token", "occurrence", "sentence", "token_in_sentence", "cluster", "context"]


def projector_tsv(
    lines: Sequence[Line], occurrences: Sequence[Occurrence], x: np.ndarray, clusters: Sequence[int] | None = None
) -> tuple[bytes, bytes]:
    """(vectors.tsv, metadata.tsv) for projector.tensorflow.org ("Load" -> the two files).

    vectors.tsv: n lines of D tab-separated values, no header; metadata.tsv: the header ``METADATA_HEADER``
    (the Projector needs one when there is more than one column), then one line per vector in the same order.
    A vector with a non-finite value is refused (the Projector would fail on it). Raises ValueError.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) != len(occurrences):
        raise ValueError(f"{len(occurrences)} occurrences but vectors of shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("some vectors have non-finite values; the Projector cannot read them")
    vectors = "".join("\t".join(f"{v:.6g}" for v in row) + "\n" for row in x)
    meta = ["\t".join(METADATA_HEADER)]
    for i, occ in enumerate(occurrences):
        before, target, after = _context(lines[occ.line].tokens, occ.position)
        meta.append(
            "\t".join(
                [
                    safe_cell(occ.label or "(no label)"),
                    safe_cell(occ.token),
                    str(i + 1),
                    str(occ.line + 1),
                    str(occ.position + 1),
                    _cluster_cell(clusters, i),
                    safe_cell(f"{before} [{target}] {after}".strip()),
                ]
            )
        )
    return vectors.encode("utf-8"), ("\n".join(meta) + "\n").encode("utf-8")


def projector_refusal(x: np.ndarray) -> str:
    """Why the vectors cannot go to the Embedding Projector ("" when they can: all values finite)."""
    if np.isfinite(np.asarray(x, dtype=np.float64)).all():
        return ""
    return "No Projector export: some vectors have non-finite values, which the Projector cannot read."


def _context(tokens: Sequence[str], position: int, window: int = 10) -> tuple[str, str, str]:
    lo, hi = max(0, position - window), min(len(tokens), position + window + 1)
    return " ".join(tokens[lo:position]), tokens[position], " ".join(tokens[position + 1 : hi])


def projector_zip(
    lines: Sequence[Line],
    occurrences: Sequence[Occurrence],
    x: np.ndarray,
    settings: Settings,
    clusters: Sequence[int] | None = None,
) -> bytes:
    """A zip with vectors.tsv, metadata.tsv (``projector_tsv``) and settings.json (``settings_json``)."""
    vectors, metadata = projector_tsv(lines, occurrences, x, clusters)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("vectors.tsv", vectors)
        z.writestr("metadata.tsv", metadata)
        z.writestr("settings.json", settings_json(settings, lines, occurrences))
    return buf.getvalue()


def file_stem(word: str, model: str, what: str) -> str:
    """A file name without extension, e.g. ``elmo_bank_default_mix``: letters, digits, "-" and "_" only."""

    def part(text: str, limit: int) -> str:
        return re.sub(r"[^0-9A-Za-z-]+", "_", text).strip("_")[:limit] or "x"

    return f"elmo_{part(word, 30)}_{part(model.rsplit('.', 1)[0] if '.' in model else model, 30)}_{part(what, 20)}"


def png_config(stem: str) -> dict:
    """plotly.js config for ``st.plotly_chart``: the toolbar's camera button saves ``stem``.png at 2x."""
    return {"toImageButtonOptions": {"format": "png", "filename": stem, "scale": 2}, "displaylogo": False}
