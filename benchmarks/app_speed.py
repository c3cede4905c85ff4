"""Speed of the explorer's server-side work, measured with the app's own logic (no Streamlit, no browser).

Usage:
    python benchmarks/app_speed.py [--checkpoint DIR | --options options.json --weights weights.hdf5]
                                   [--device cpu] [--occurrences 200] [--moves 20] [--trials 5]
                                   [--threads N] [--parts abcd] [--phases] [--profile]

Model: --checkpoint (our format) or --options + --weights (published ELMo); else the app's default model
(``elmo_core.model.loading.load_embedder``: the same rule as the command line and the app).

(a) slider path: what the explorer page runs when a weight slider moves: ``app.explore.frame.compute_frame`` (scalar
    mix, warm-started projection + Procrustes, layer-0 / mix / reference neighbours, the four similarity
    matrices, the mix's separation score) and the page's three figures of the frame (``app.render.map_chart.frame_chart``, ``app.render.figures.frame_*``)
    with their JSON as st.plotly_chart sends it, for --occurrences occurrences of one word, one per sentence, without labels (the costlier
    separation path) and with two labels; median and per-phase medians over --moves moves, after warm-up.
(b) a new set of 20 labelled sentences to its first full view: tokenizing, picking the word, the biLM on
    the new sentences (empty activation cache), finding + tokenizing + embedding the word's reference-corpus
    sentences, then the first view (a fresh projection, all separation scores); median over --trials.
    Twice: "bank" (20 bank sentences; few reference sentences) and, as the worst case, 20 sentences with
    "the", whose reference sentences hit the app's cap (``app.serving.corpus.MAX_REFERENCE_SENTENCES``).
(c) UMAP: import + first fit in a fresh process (numba JIT) vs the same fit warm, and the warm-started refit.
(d) t-SNE and the new views, on the (a) set of --occurrences unlabelled occurrences, after warm-up: a t-SNE map
    from scratch (``compute_frame`` with projection "tsne" and no previous frame: PCA init, capped iterations;
    target 1 s at 200 points) and a warm-started t-SNE refit (a slider move); the small multiples
    (``app.explore.layer_maps.layer_maps``: each layer projected with UMAP, then aligned) first and after a slider move
    (layer fits reused); and two models compared after a slider move (``app.explore.compare.compare``: two frames
    with the "auto" projection, UMAP at 200 points, warm-started, + alignment), here
    the same model under two keys; medians of --trials.

The benchmark calls the functions the page calls, so it cannot drift from it. Streamlit's own overhead (script rerun, websocket, browser rendering) is not included.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import plotly.io as pio

ROOT = Path(__file__).resolve().parent.parent

from app.explore import (  # noqa: E402
    activations,
    compare,  # noqa: E402
    inputs,
    mixing,
    projections,
)
from app.explore.controls import Controls  # noqa: E402
from app.explore.examples import EXAMPLE_SETS  # noqa: E402
from app.explore.frame import compute_frame, occurrence_layers  # noqa: E402
from app.explore.frame_neighbours import Reference  # noqa: E402
from app.explore.layer_maps import layer_maps  # noqa: E402
from app.render import figures, map_chart  # noqa: E402
from app.session import widgets  # noqa: E402
from elmo_core.data.reference import REFERENCE_DIR, ReferenceCorpus  # noqa: E402

K = 10  # neighbours shown (the page's default)

EXTRA_BANK = """\
[river] Children skipped stones from the bank of the lake.
[river] The heron stood motionless on the far bank.
[river] Reeds covered the bank where the ducks nested.
[river] Heavy rain had eroded the steep bank.
[money] The bank approved our mortgage after a week.
[money] She transferred the money to her bank in Zurich.
[money] The bank charges a fee for every transfer.
[money] A bank manager called me about the loan.
"""


# ---- model ------------------------------------------------------------------------------------------------
def load_model(args):
    from elmo_core.model.loading import load_embedder

    embedder = load_embedder(args.options, args.weights, args.checkpoint, device=args.device)
    source = (
        f"ELMo files {args.weights}"
        if args.options
        else f"checkpoint {args.checkpoint}"
        if args.checkpoint
        else "default model (assets/default)"
    )
    return embedder, source


# ---- reference corpus (app.serving.corpus.reference_for_word, the page's own search) -----------------------------
def reference_lines() -> list[str]:
    """The shipped reference corpus's sentences (tokenized, space-joined); [] when it is missing."""
    try:
        return ReferenceCorpus.load(REFERENCE_DIR).sentences
    except (FileNotFoundError, ValueError):
        return []


def reference_tokens(word: str, lines: list[str]) -> list[tuple[str, ...]]:
    """The word's reference sentences as the page finds them (``corpus.reference_for_word``: its forms, its
    cap ``MAX_REFERENCE_SENTENCES``); [] without a corpus."""
    import streamlit.logger

    streamlit.logger.set_log_level("error")  # "No runtime found" warnings: its cache works without a server
    from app.serving.corpus import reference_for_word

    return reference_for_word(word, inflections=False)[0]


# ---- the page's work --------------------------------------------------------------------------------------
class Timer:
    def __init__(self):
        self.phases: dict[str, float] = {}

    def __call__(self, name: str):
        timer = self

        class _Phase:
            def __enter__(self):
                self.start = time.perf_counter()

            def __exit__(self, *exc):
                timer.phases[name] = timer.phases.get(name, 0.0) + time.perf_counter() - self.start

        return _Phase()


def full_update(
    table: activations.TokenTable,
    occurrences,
    word: str,
    w,
    ref: activations.TokenTable | None,
    state: dict,
    timer: Timer,
    gamma: float = 1.0,
    layer_norm: bool = False,
) -> None:
    """One run of the explorer's live view: ``compute_frame`` (the function the page calls; projection "auto",
    no context words, query #1, k = 10), the page's three figures of the frame, and their JSON."""
    controls = Controls(weights=tuple(w), gamma=gamma, layer_norm=layer_norm, k=K, same_word=False)
    with timer("compute_frame"):
        frame = compute_frame(
            table,
            occurrences,
            controls,
            state.get("frame"),
            model_key="model",
            word=word,
            reference=Reference(ref, len(ref.lines) if ref else 0),
        )
        state["frame"] = frame
    with timer("figures"):
        # the page's colour: its default ("label") where it means something, else the first that does
        color_by = widgets.color_by_choices(
            {}, any(o.label for o in occurrences), len(inputs.spellings(occurrences)) > 1, frame.offers_clusters()
        )[0]
        figs = (
            map_chart.frame_chart(frame, occurrences, table, color_by),
            figures.frame_heatmaps(frame, occurrences),
            figures.frame_separation(frame),
        )
    with timer("export"):
        occurrence_layers(table, frame)
    with timer("figure JSON"):  # what st.vega_lite_chart and st.plotly_chart do with each figure before sending it
        from streamlit import dataframe_util

        for fig in figs:
            if fig is None:
                continue
            if isinstance(fig, map_chart.MapChart):  # the contexts map: a Vega-Lite spec and its rows (Arrow)
                json.dumps(fig.spec)
                dataframe_util.convert_anything_to_arrow_bytes(fig.data)
            else:
                pio.to_json(fig, validate=False)


# ---- (a) slider path --------------------------------------------------------------------------------------
def occurrence_set(n_occ: int, labelled: bool) -> tuple[list[inputs.Line], str]:
    """``n_occ`` reference-corpus sentences that contain "the" exactly once (one occurrence per sentence,
    about 20 tokens each); with ``labelled``, two made-up labels alternate (the scores' cost, not meaning)."""
    lines = []
    for text in reference_lines():
        toks = text.split(" ")[: inputs.MAX_TOKENS_PER_LINE]  # stored tokenized
        if sum(t.casefold() == "the" for t in toks) == 1 and 8 <= len(toks) <= 40:
            label = ("a" if len(lines) % 2 else "b") if labelled else None
            lines.append(inputs.Line(text, label, tuple(toks)))
            if len(lines) == n_occ:
                break
    if len(lines) < n_occ:
        raise SystemExit(f"only {len(lines)} suitable reference sentences for {n_occ} occurrences")
    return lines, "the"


def slider_path(embedder, model_key, n_occ, moves, labelled, ref_lines, profile=False):
    cache = activations.ActivationCache(2**31)
    lines, word = occurrence_set(n_occ, labelled)
    acts, _ = cache.get_many(model_key, embedder.embed_batch, [ln.tokens for ln in lines])
    table = activations.TokenTable(lines, acts)
    occurrences = inputs.find_occurrences(lines, word)
    ref_toks = reference_tokens(word, ref_lines)
    ref = None
    if ref_toks:
        ref_acts, _ = cache.get_many(model_key, embedder.embed_batch, ref_toks)
        ref = activations.TokenTable.of_tokenized(ref_toks, ref_acts)
    state: dict = {}
    num_layers = table.num_layers
    rng = np.random.default_rng(0)
    full_update(table, occurrences, word, [0.0] * num_layers, ref, state, Timer())  # first view + warm-up
    full_update(table, occurrences, word, [0.1] + [0.0] * (num_layers - 1), ref, state, Timer())
    totals, per_phase = [], []
    w = [0.0] * num_layers
    for _ in range(moves):
        j = int(rng.integers(num_layers))
        w[j] = float(np.clip(w[j] + rng.choice([-0.5, 0.5]), *mixing.W_RANGE))  # one slider, a few steps
        timer = Timer()
        start = time.perf_counter()
        full_update(table, occurrences, word, list(w), ref, state, timer)
        totals.append(time.perf_counter() - start)
        per_phase.append(timer.phases)
    phases = {name: statistics.median(p.get(name, 0.0) for p in per_phase) for name in per_phase[0]}
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        for _ in range(moves):
            j = int(rng.integers(num_layers))
            w[j] = float(np.clip(w[j] + rng.choice([-0.5, 0.5]), *mixing.W_RANGE))
            full_update(table, occurrences, word, list(w), ref, state, Timer())
        prof.disable()
        print(f"cProfile of {moves} slider moves ({'labelled' if labelled else 'unlabelled'}), by cumulative time:")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    return statistics.median(totals), phases, table.num_tokens, len(occurrences), ref


# ---- (b) new sentences to first full view ----------------------------------------------------------------
def worst_case_text() -> str:
    """20 example-set sentences with "the": a word with the page's full number of reference sentences to
    embed (``app.serving.corpus.MAX_REFERENCE_SENTENCES``)."""
    lines = [
        ln
        for e in EXAMPLE_SETS.values()
        for ln in e.text.splitlines()
        if " the " in f" {ln.split('] ', 1)[-1].lower()} "
    ]
    return "\n".join(lines[:20]) + "\n"


def first_view(embedder, model_key, trials, ref_lines, text=None, word=None):
    text = text or EXAMPLE_SETS["bank"].text + EXTRA_BANK
    results = []
    for trial in range(trials):
        timer = Timer()
        cache = activations.ActivationCache(2**30)  # a new set: nothing cached
        start = time.perf_counter()
        with timer("tokenize"):
            parsed = inputs.parse_input(text)
            inputs.word_counts(parsed.lines)
            word = word or inputs.suggest_word(parsed.lines)
            occurrences = inputs.find_occurrences(parsed.lines, word)
        with timer("biLM (new sentences)"):
            acts, computed = cache.get_many(model_key, embedder.embed_batch, [ln.tokens for ln in parsed.lines])
            table = activations.TokenTable(parsed.lines, acts)
        with timer("reference (find + tokenize + biLM)"):
            ref_toks = reference_tokens(word, ref_lines)
            ref = None
            if ref_toks:
                ref_acts, _ = cache.get_many(model_key, embedder.embed_batch, ref_toks)
                ref = activations.TokenTable.of_tokenized(ref_toks, ref_acts)
        view = Timer()
        with timer("first view (projection, figures, scores)"):
            full_update(table, occurrences, word, [0.0] * table.num_layers, ref, {}, view)
        total = time.perf_counter() - start
        if trial == 0:
            info = dict(
                sentences=len(parsed.lines),
                occurrences=len(occurrences),
                word=word,
                reference=len(ref_toks),
                computed=computed,
            )
        results.append((total, timer.phases))
    total = statistics.median(r[0] for r in results)
    phases = {name: statistics.median(r[1][name] for r in results) for name in results[0][1]}
    return total, phases, info


# ---- (d) t-SNE, small multiples, comparison ----------------------------------------------------------------
def views_rows(embedder, model_key, n_occ, trials) -> list:
    cache = activations.ActivationCache(2**31)
    lines, word = occurrence_set(n_occ, False)
    acts, _ = cache.get_many(model_key, embedder.embed_batch, [ln.tokens for ln in lines])
    table = activations.TokenTable(lines, acts)
    occ = inputs.find_occurrences(lines, word)
    w = (0.0,) * table.num_layers

    def median_of(fn) -> float:
        times = []
        for _ in range(trials):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    tsne = Controls(weights=w, projection="tsne")
    compute_frame(table, occ, tsne, model_key="m", word=word)  # warm-up
    fresh = median_of(lambda: compute_frame(table, occ, tsne, model_key="m", word=word))
    first = compute_frame(table, occ, tsne, model_key="m", word=word)
    moved = Controls(weights=(0.0,) * (table.num_layers - 1) + (0.5,), projection="tsne")
    refit = median_of(lambda: compute_frame(table, occ, moved, first, model_key="m", word=word))
    umap_frame = compute_frame(table, occ, Controls(weights=w, projection="umap"), model_key="m", word=word)
    maps_first = median_of(lambda: layer_maps(table, umap_frame))
    maps = layer_maps(table, umap_frame)
    umap_moved = compute_frame(
        table,
        occ,
        Controls(weights=(0.0,) * (table.num_layers - 1) + (0.5,), projection="umap"),
        umap_frame,
        model_key="m",
        word=word,
    )
    maps_moved = median_of(lambda: layer_maps(table, umap_moved, maps))
    sides = compare.compare([("a", "m", table), ("b", "m2", table)], occ, Controls(weights=w), word)
    compared = median_of(
        lambda: compare.compare(
            [("a", "m", table), ("b", "m2", table)],
            occ,
            Controls(weights=(0.0,) * (table.num_layers - 1) + (0.5,)),
            word,
            sides,
        )
    )
    n = len(occ)
    return [
        (
            f"(d) t-SNE map from scratch (PCA init, at most {projections.TSNE_MAX_ITER} iterations), {n} occurrences, "
            f"whole compute_frame; median of {trials}",
            ms(fresh),
            "1 s",
            {},
        ),
        (
            f"(d) t-SNE warm-started refit after a slider move ({projections.TSNE_WARM_ITER} iterations), {n} occurrences; "
            f"median of {trials}",
            ms(refit),
            "",
            {},
        ),
        (
            f"(d) layers side by side, UMAP, {n} occurrences: first (three UMAP fits); median of {trials}",
            ms(maps_first),
            "",
            {},
        ),
        (
            f"(d) layers side by side after a slider move (fits reused, re-aligned); median of {trials}",
            ms(maps_moved),
            "",
            {},
        ),
        (
            f"(d) two models compared after a slider move (two frames, warm-started UMAP, alignment), {n} occurrences; "
            f"median of {trials}",
            ms(compared),
            "",
            {},
        ),
    ]


# ---- (c) UMAP cold vs warm --------------------------------------------------------------------------------
UMAP_CHILD = r"""
import json, sys, time
import numpy as np
from app.explore.projections import _umap_fit, import_umap, l2_normalise  # the app's own UMAP call (parameters, warm-start path)
t0 = time.perf_counter()
import_umap()  # as the app imports it: numba's on-disk cache on for every UMAP function (`make app` fills it)
t1 = time.perf_counter()
x = l2_normalise(np.random.default_rng(0).normal(size=(200, 256)).astype(np.float32) + 0.3)
a = time.perf_counter(); first = _umap_fit(x, 0, None); b = time.perf_counter()
fits = []
for _ in range(3):
    c = time.perf_counter(); _umap_fit(x, 0, None); fits.append(time.perf_counter() - c)
_umap_fit(x, 0, first)  # first warm-started refit (may compile a little)
refits = []
for _ in range(5):
    e = time.perf_counter(); _umap_fit(x, 0, first); refits.append(time.perf_counter() - e)
print(json.dumps({"import": t1 - t0, "first": b - a, "warm": float(np.median(fits)), "refit": float(np.median(refits))}))
"""


def umap_cold_warm():
    out = subprocess.run(
        [sys.executable, "-c", UMAP_CHILD, str(ROOT)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---- main -------------------------------------------------------------------------------------------------
def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def model_rows(args) -> list:
    """(a) and (b): load the model, warm up torch and UMAP in this process, then measure."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    embedder, source = load_model(args)
    print(
        f"model: {source}; {embedder.num_layers} layers x {embedder.dim}, {embedder.num_parameters:,} "
        f"parameters, device {embedder.device}; torch threads {torch.get_num_threads()}, CPUs {os.cpu_count()}"
    )
    embedder.embed_batch([["A", "warm", "up", "sentence", "."]] * 4)
    from app.serving.warm_up import UmapWarmUp

    warm = UmapWarmUp()
    warm.run_now()
    print(
        f"in-process UMAP warm-up (the app runs it in a background thread at start-up): {warm.seconds:.1f} s "
        f"({warm.state})"
    )
    ref_lines = reference_lines()
    model_key = "bench"
    rows = []
    for labelled in (False, True) if "a" in args.parts else ():
        med, phases, n_tokens, n_occ, ref = slider_path(
            embedder, model_key, args.occurrences, args.moves, labelled, ref_lines, args.profile and not labelled
        )
        what = "two labels" if labelled else "no labels"
        rows.append(
            (
                f"(a) slider move, {n_occ} occurrences ({what}), {n_tokens} tokens, "
                f"{0 if ref is None else ref.num_tokens} reference tokens; median of {args.moves}",
                ms(med),
                "300 ms",
                phases,
            )
        )
    if "d" in args.parts:
        rows += views_rows(embedder, model_key, args.occurrences, args.trials)
    for text, word in ((None, None), (worst_case_text(), "the")) if "b" in args.parts else ():
        total, phases, info = first_view(embedder, model_key, args.trials, ref_lines, text, word)
        rows.append(
            (
                f"(b) new set of {info['sentences']} sentences -> first full view ('{info['word']}', "
                f"{info['occurrences']} occurrences, {info['reference']} reference sentences embedded); "
                f"median of {args.trials}",
                ms(total),
                "3 s",
                phases,
            )
        )
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoint", help="our checkpoint dir (options.json + model.safetensors)")
    p.add_argument("--options", help="published ELMo options.json (with --weights)")
    p.add_argument("--weights", help="published ELMo weights.hdf5 (with --options)")
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: GPU when there is one, as the app)")
    p.add_argument("--occurrences", type=int, default=200)
    p.add_argument("--moves", type=int, default=20)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads for the biLM (default: torch's default, as the app). On a machine where "
        "another process keeps a core busy, 1 avoids waiting for the busy core at every step",
    )
    p.add_argument("--parts", default="abcd", help="which of (a), (b), (c), (d) to run, e.g. --parts ad (default abcd)")
    p.add_argument("--phases", action="store_true", help="print every phase's median, not only the largest")
    p.add_argument(
        "--profile",
        action="store_true",
        help="also run the unlabelled slider moves under cProfile and print the top functions",
    )
    args = p.parse_args(argv)
    if bool(args.options) != bool(args.weights):
        p.error("--options and --weights go together")

    rows = []
    if "a" in args.parts or "b" in args.parts or "d" in args.parts:
        rows += model_rows(args)
    if "c" in args.parts:
        u = umap_cold_warm()
        rows.append(("(c) UMAP in a fresh process: import umap", ms(u["import"]), "", {}))
        rows.append(
            (
                "(c) UMAP first fit in a fresh process (numba JIT), n = 200, D = 256",
                ms(u["first"]),
                "at start-up, in the background",
                {},
            )
        )
        rows.append(("(c) UMAP same fit, warm; median of 3", ms(u["warm"]), "", {}))
        rows.append(
            ("(c) UMAP warm-started refit (60 epochs, as on a slider move), warm; median of 5", ms(u["refit"]), "", {})
        )

    print()
    print("| case | time | target | largest parts (median) |")
    print("|---|---|---|---|")
    for name, value, target, parts in rows:
        top = sorted(parts.items(), key=lambda kv: -kv[1])[: None if args.phases else 4]
        print(f"| {name} | {value} | {target} | {', '.join(f'{k} {ms(v)}' for k, v in top)} |")
    print()
    given = argv if argv is not None else sys.argv[1:]
    print("command: python " + " ".join([os.path.relpath(__file__, ROOT), *given]))


if __name__ == "__main__":
    main()
