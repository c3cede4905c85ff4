"""The live map's server side, and the choice it rests on (no Streamlit, no browser).

    python -m benchmarks.live_map                       # the default model, the example sets and 300 occurrences
    python -m benchmarks.live_map --occurrences 300 --trials 3

For each example set and for --occurrences occurrences of "bank" from the reference corpus (one per sentence):
(1) the fixed axes' fit (``app.explore.live_map.fixed_axes``: once per set of points) and a released move on them
    (``compute_frame`` with the fixed axes already fitted), median ms;
(2) what the page receives for the map: the map's Arrow rows as Streamlit sends them (IPC stream bytes) with the
    live columns and without them (the map before the live map), and the spec's JSON bytes;
(3) the alternative the issue names for a UMAP map, precomputed aligned frames to interpolate during a drag:
    umap-learn's AlignedUMAP over 3 frames (the three corners of the weights: each layer alone) of the same
    points, against one warm-started UMAP refit (what a release costs) and the preview's fit
    (``live_map.preview``). Medians of --trials after one warm-up run.
The browser's side (frame times during a drag, websocket frames): ``benchmarks/live_drag.py``.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
import warnings

import pyarrow as pa

from app.explore import activations, inputs, live_map, mixing, projections
from app.explore.controls import Controls
from app.explore.examples import EXAMPLE_SETS
from app.explore.frame import compute_frame
from app.render.map_chart import frame_chart


def _ms(fn, trials: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(trials):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def arrow_bytes(table: pa.Table) -> int:
    """Bytes of the Arrow IPC stream of ``table`` (how Streamlit serialises a chart's data)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return len(sink.getvalue())


def set_of(name: str, embedder):
    ex = EXAMPLE_SETS[name]
    parsed = inputs.parse_input(ex.text)
    table = activations.TokenTable(parsed.lines, embedder.embed_batch([list(ln.tokens) for ln in parsed.lines]))
    return table, inputs.find_occurrences(parsed.lines, ex.word)


def reference_set(word: str, n: int, embedder):
    from elmo_core.data.reference import ReferenceCorpus

    corpus = ReferenceCorpus.load()
    found, _ = corpus.contexts([word], n)
    lines = [inputs.Line(" ".join(t), None, tuple(t)) for t in found]
    table = activations.TokenTable(lines, embedder.embed_batch([list(ln.tokens) for ln in lines]))
    return table, inputs.find_occurrences(lines, word)


def measure_set(label: str, table, occ, trials: int, umap: bool) -> dict:
    rows = table.rows(occ)
    layers = table.layers(False)[:, rows]
    controls = Controls(same_word=False, weights=(0.0, 0.0, 0.0))
    first = compute_frame(table, occ, controls, word="w")
    moved = Controls(same_word=False, weights=(0.0, 0.0, 2.0), gamma=1.5)
    out = {
        "set": label,
        "points": len(occ),
        "fit_ms": _ms(lambda: live_map.fixed_axes(layers, len(rows)), trials),
        "move_ms": _ms(lambda: compute_frame(table, occ, moved, first, word="w"), trials),
    }
    bind = [f".st-key-w{j} input[type=range]" for j in range(table.num_layers)] + [".st-key-g input[type=range]"]
    live_chart = frame_chart(first, occ, table, "label", title="t", bind=bind)
    plain_chart = frame_chart(first, occ, table, "label", title="t")
    out["rows_bytes_live"] = arrow_bytes(live_chart.data)
    out["rows_bytes_before"] = arrow_bytes(plain_chart.data)
    out["spec_bytes_live"] = len(json.dumps(live_chart.spec))
    if umap:
        out.update(_umap_choice(table, occ, trials))
    return out


def _umap_choice(table, occ, trials: int) -> dict:
    """AlignedUMAP over the three one-layer corners against a warm-started UMAP refit and the preview's fit."""
    umap = projections.import_umap()
    rows = table.rows(occ)
    corners = [projections.l2_normalise(table.layers(False)[j][rows]) for j in range(table.num_layers)]
    relations = [{i: i for i in range(len(rows))} for _ in range(len(corners) - 1)]

    def aligned():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            umap.AlignedUMAP(n_neighbors=min(15, len(rows) - 1), random_state=0).fit(corners, relations=relations)

    umap_frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0,) * 3, projection="umap"), word="w")
    refit = Controls(same_word=False, weights=(0.0, 0.0, 1.0), projection="umap")
    s = mixing.softmax([0.0, 0.0, 0.0])
    layers = table.layers(False)[:, rows]
    return {
        "aligned_umap_ms": _ms(aligned, max(1, trials // 2)),
        "umap_refit_ms": _ms(lambda: compute_frame(table, occ, refit, umap_frame, word="w"), trials),
        "preview_fit_ms": _ms(lambda: live_map.preview(layers, len(rows), s, umap_frame.coords[: len(rows)]), trials),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--occurrences", type=int, default=300, help="occurrences of 'bank' from the reference corpus")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    from elmo_core.model.loading import load_embedder

    embedder = load_embedder(device="cpu")
    results = [measure_set(name, *set_of(name, embedder), args.trials, umap=False) for name in EXAMPLE_SETS]
    results.append(
        measure_set(
            f"bank x {args.occurrences} (reference corpus)",
            *reference_set("bank", args.occurrences, embedder),
            args.trials,
            umap=True,
        )
    )
    cols = ["set", "points", "fit_ms", "move_ms", "rows_bytes_before", "rows_bytes_live", "spec_bytes_live"]
    print(" | ".join(cols))
    for r in results:
        print(" | ".join(f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c]) for c in cols))
    last = results[-1]
    print(
        f"UMAP at {last['points']} points: AlignedUMAP over 3 frames {last['aligned_umap_ms']:.0f} ms, "
        f"a warm-started refit {last['umap_refit_ms']:.0f} ms, the preview's fit {last['preview_fit_ms']:.1f} ms"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
