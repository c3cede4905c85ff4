"""The published English ELMo models' table: what each model is and where its files are published.

The table (``PUBLISHED``) is the one place that names them: where AllenNLP publishes each model's
``options.json`` and ``weights.hdf5`` and what the model is (docs/ELMO_SPEC.md section 1.2). The files
themselves define the model: a downloaded ``options.json`` is read like any other, and the table's figures
are what the user is shown and a check that the right file arrived (its parameter count, and the weights'
size where it is known). ``elmo_core.model.published`` keeps them in the local cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_BASE_URL = "https://allennlp.s3.amazonaws.com/models/elmo/"
OPTIONS = "options.json"
WEIGHTS = "weights.hdf5"


@dataclass(frozen=True)
class PublishedModel:
    """One published model. ``stem`` is its folder and file stem under the base URL; parameters counts
    every weight of the biLM (char table, CNN, highways, projection, LSTMs: ELMO_SPEC.md 1.2);
    ``weights_bytes`` is the size of weights.hdf5 where it is known, checked before a byte is kept."""

    name: str
    title: str
    stem: str
    parameters: int
    lstm_dim: int
    projection_dim: int
    highway: int
    trained_on: str
    weights_bytes: int | None = None

    def paths(self) -> dict[str, str]:
        """{cache file name: path under the base URL}, in the published layout."""
        return {
            OPTIONS: f"{self.stem}/elmo_{self.stem}_options.json",
            WEIGHTS: f"{self.stem}/elmo_{self.stem}_weights.hdf5",
        }

    def urls(self, base_url: str | None = None) -> dict[str, str]:
        """{cache file name: URL} under ``base_url`` (default: ``resolve_base_url``)."""
        base = resolve_base_url(base_url)
        return {file: base + path for file, path in self.paths().items()}

    @property
    def architecture(self) -> str:
        """One line: "2-layer biLSTM 4096/512, 2 highway" (cell size / projection = output per direction)."""
        return f"2-layer biLSTM {self.lstm_dim}/{self.projection_dim}, {self.highway} highway"

    @property
    def approx_bytes(self) -> int:
        """The weights' size: exact where known, else 4 bytes per parameter (float32), which is what an
        HDF5 file of this layout holds apart from a few kB of metadata."""
        return self.weights_bytes if self.weights_bytes is not None else 4 * self.parameters


_WMT = "1B Word Benchmark (about 800M tokens of news)"
PUBLISHED: dict[str, PublishedModel] = {
    m.name: m
    for m in (
        PublishedModel(
            name="small",
            title="Small",
            stem="2x1024_128_2048cnn_1xhighway",
            parameters=13_593_296,
            lstm_dim=1024,
            projection_dim=128,
            highway=1,
            trained_on=_WMT,
        ),
        PublishedModel(
            name="medium",
            title="Medium",
            stem="2x2048_256_2048cnn_1xhighway",
            parameters=28_027_728,
            lstm_dim=2048,
            projection_dim=256,
            highway=1,
            trained_on=_WMT,
        ),
        PublishedModel(
            name="original",
            title="Original",
            stem="2x4096_512_2048cnn_2xhighway",
            parameters=93_600_848,
            lstm_dim=4096,
            projection_dim=512,
            highway=2,
            trained_on=_WMT,
            weights_bytes=374_434_792,
        ),
        PublishedModel(
            name="original-5.5b",
            title="Original (5.5B)",
            stem="2x4096_512_2048cnn_2xhighway_5.5B",
            parameters=93_600_848,
            lstm_dim=4096,
            projection_dim=512,
            highway=2,
            trained_on="Wikipedia and WMT 2008-2012 news crawl (5.5B tokens)",
        ),
    )
}


def published_model(name: str) -> PublishedModel:
    """The table's entry for ``name`` (case-insensitive).
    Raises: KeyError: an unknown name; the message lists the known ones and the nearest."""
    import difflib

    key = str(name).strip().lower()
    if key in PUBLISHED:
        return PUBLISHED[key]
    near = difflib.get_close_matches(key, PUBLISHED, n=1)
    hint = f" (did you mean '{near[0]}'?)" if near else ""
    raise KeyError(f"no published ELMo model '{name}'{hint}; the published models are {', '.join(PUBLISHED)}")


def resolve_base_url(base_url: str | None = None) -> str:
    """The base URL of the published layout: ``base_url``, else ``$ELMO_CORE_BASE_URL``, else AllenNLP's,
    always ending in "/". Raises: ValueError: not an http(s) URL, or one without a host name."""
    from urllib.parse import urlsplit

    base = base_url or os.environ.get("ELMO_CORE_BASE_URL") or DEFAULT_BASE_URL
    if not base.lower().startswith(("http://", "https://")):
        raise ValueError(f"the base URL must start with http:// or https://, got {base!r}")
    try:
        host = urlsplit(base).hostname
    except ValueError:  # a malformed port or IPv6 address
        host = None
    if not host:
        raise ValueError(f"the base URL {base!r} names no host; give one such as https://mirror.example.org/elmo/")
    return base if base.endswith("/") else base + "/"
