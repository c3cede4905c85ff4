"""elmo_core against the real AllenNLP ``_ElmoBiLm``, timed side by side by an external harness, and the table in docs/performance.md.

Usage (from the repository root):
    python benchmarks/allennlp_compare.py                      # table for small + original, random + real text
    python benchmarks/allennlp_compare.py --write             # ... and write it into docs/performance.md
    python benchmarks/allennlp_compare.py --configs small --workloads random --repeats 3

Timing is done by a harness that is not part of this repository, at ``$ELMO_BENCH_HARNESS``: it imports
AllenNLP's own numerical modules from AllenNLP's source for the reference (nothing of AllenNLP is imported or
copied by elmo_core), loads the same random weights of the published sizes into both, and times the
reference and every ``--compare`` embedder in one process, alternating their order per repeat; the protocol
is in docs/performance.md ("How the AllenNLP comparison is timed"). This script only supplies the ``--compare`` factories below (``make_float32()``,
``make_bfloat16()``), one fresh process per (config, workload), and the real-text workload: 20-token
windows of the first 3,000 sentences of ``assets/reference/`` in place of the harness's random words (real text repeats
words, which elmo_core's one-CNN-pass-per-distinct-token exploits). Each process measures the fp32
matmul peak (2048^3, same thread count) right after its runs, and "% of peak" divides each embedder's
analytic GFLOP/s (the harness's FLOP count of the full reference computation: every one of the 50 character
windows, all positions) by it. elmo_core skips the all-padding character windows, so for the character CNN
it does less work than that count; see docs/performance.md for the profile.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the project's workspace keeps the harness in its shared folder beside the checkout
HARNESS = Path(os.environ.get("ELMO_BENCH_HARNESS", ROOT.parent / "shared" / "perf" / "allennlp_bench.py"))
TABLE_PAGE = ROOT / "docs" / "performance.md"  # the page that holds the table
MARK_START, MARK_END = "<!-- allennlp-compare:start -->", "<!-- allennlp-compare:end -->"
FLOAT32, BFLOAT16 = "benchmarks.allennlp_compare:make_float32()", "benchmarks.allennlp_compare:make_bfloat16()"


# ---- the --compare factories (called by the harness with its options and weight files) ----------------
def _make(options_file: str, weight_file: str, dtype: str):
    import torch

    from elmo_core import Embedder

    torch.set_num_threads(int(os.environ.get("ELMO_BENCH_THREADS", torch.get_num_threads())))
    embedder = Embedder.from_elmo_files(options_file, weight_file, device="cpu", dtype=dtype)

    def embed(batch):
        return embedder.embed_batch(batch, batch_size=len(batch))

    return embed


def make_float32(options_file: str, weight_file: str):
    """Stateless float32 ``Embedder.embed_batch`` (token strings in, numpy arrays out), one call per batch."""
    return _make(options_file, weight_file, "float32")


def make_bfloat16(options_file: str, weight_file: str):
    """The same in bfloat16 (only offered on CPUs with native bfloat16; see ``fast_dtypes``)."""
    return _make(options_file, weight_file, "bfloat16")


# ---- one (config, workload) in this process -----------------------------------------------------------
def _load_harness():
    if not HARNESS.is_file():
        raise SystemExit(
            f"error: no timing harness at {HARNESS}; set ELMO_BENCH_HARNESS to its file "
            "(docs/performance.md says what it does)"
        )
    spec = importlib.util.spec_from_file_location("allennlp_bench", HARNESS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_text_windows(count: int, seed: int) -> list[list[str]]:
    """``count`` 20-token windows of real English (the harness's sentence length), in file order."""
    from elmo_core.data.reference import ReferenceCorpus

    tokens = " ".join(ReferenceCorpus.load().sentences[:3000]).split()
    n = len(tokens) // 20
    return [tokens[(i % n) * 20 : (i % n + 1) * 20] for i in range(count)]


def run_case(
    config: str, workload: str, threads: int, repeats: int, batches64: int, compare: list[str], batch_sizes: list[int]
) -> dict:
    harness = _load_harness()
    if workload == "real":
        harness.random_sentences = real_text_windows
    os.chdir(ROOT)  # the harness imports the --compare module relative to the working directory
    result = harness.bench_config(
        config,
        threads,
        repeats,
        batches64,
        harness.SRC_DEFAULT,
        harness.WEIGHTS_DIR_DEFAULT,
        compare,
        batch_sizes=tuple(batch_sizes),
    )
    result["workload"] = workload
    result["matmul_peak"] = harness.matmul_peak(threads)
    return result


# ---- the table ----------------------------------------------------------------------------------------
def table(results: list[dict]) -> str:
    lines = [
        "| model | workload | batch | AllenNLP tok/s | elmo_core fp32 tok/s | ratio | fp32 % of matmul peak "
        "| bf16 tok/s | AllenNLP ids / CNN / LSTM | matmul peak GFLOP/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        peak = res["matmul_peak"]["gflops_median"]
        for bs in sorted({r["batch_size"] for r in res["runs"]}):
            rows = {r["embedder"]: r for r in res["runs"] if r["batch_size"] == bs}
            ref, ours, bf = rows["allennlp"], rows.get(FLOAT32), rows.get(BFLOAT16)
            f = ref.get("stage_frac", {})
            share = (
                (f"{100 * f['batch_to_ids']:.0f}% / {100 * f['token_embedder']:.0f}% / {100 * f['elmo_lstm']:.0f}%")
                if f
                else ""
            )
            lines.append(
                f"| {res['config']} | {res['workload']} | {bs} | {ref['tokens_per_s']:,.0f} | "
                f"{ours['tokens_per_s']:,.0f} | **{ours['tokens_per_s'] / ref['tokens_per_s']:.2f}x** | "
                f"{100 * ours['gflops'] / peak:.0f}% | "
                f"{'%s (%.2fx fp32)' % (format(bf['tokens_per_s'], ',.0f'), bf['tokens_per_s'] / ours['tokens_per_s']) if bf else 'not offered'} | "  # noqa: UP031
                f"{share} | {peak:.0f} |"
            )
    streams = "; ".join(
        f"{res['config']}/{res['workload']} {res['matmul_peak']['gemv_32MiB_GBps']:.0f} / "
        f"{res['matmul_peak']['gemv_302MB_GBps']:.0f}"
        for res in results
        if "gemv_302MB_GBps" in res["matmul_peak"]
    )
    if streams:
        lines += [
            "",
            "Weight streaming in the same processes (batch 1 is bound by it and by per-step overhead: every time "
            "step reads every recurrent and projection weight), float32 matrix-vector products over a 32 MiB / 302 MB set of "
            f"weights, GB/s: {streams}.",
        ]
    return "\n".join(lines)


def write_table(text: str) -> None:
    page = TABLE_PAGE.read_text(encoding="utf-8")
    if MARK_START not in page:
        raise SystemExit(f"docs/performance.md has no {MARK_START} ... {MARK_END} block to replace")
    block = f"{MARK_START}\n{text}\n{MARK_END}"
    TABLE_PAGE.write_text(
        re.sub(re.escape(MARK_START) + ".*?" + re.escape(MARK_END), lambda _: block, page, flags=re.S),
        encoding="utf-8",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="*", default=["small", "original"], choices=["small", "original"])
    ap.add_argument("--workloads", nargs="*", default=["random", "real"], choices=["random", "real"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batches64", type=int, default=3)
    ap.add_argument("--batch-sizes", nargs="*", type=int, default=[1, 64])
    ap.add_argument(
        "--real-batch-sizes",
        nargs="*",
        type=int,
        default=[64],
        help="batch sizes for the real-text workload (64 only by default, to keep the run short)",
    )
    ap.add_argument("--json", type=Path, help="also write all results here")
    ap.add_argument("--write", action="store_true", help="replace the table in docs/performance.md")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print("RESULT " + json.dumps(run_case(*json.loads(args.case))), flush=True)
        return
    from elmo_core.model.embedder import fast_dtypes

    compare = [FLOAT32] + ([BFLOAT16] if "bfloat16" in fast_dtypes("cpu") else [])
    results = []
    for config in args.configs:
        for workload in args.workloads:
            sizes = args.real_batch_sizes if workload == "real" else args.batch_sizes
            case = json.dumps([config, workload, args.threads, args.repeats, args.batches64, compare, sizes])
            print(f"# {config} / {workload} ...", file=sys.stderr, flush=True)
            proc = subprocess.run([sys.executable, __file__, "--case", case], cwd=ROOT, capture_output=True, text=True)
            lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
            if proc.returncode or not lines:
                raise SystemExit(f"{config}/{workload} failed:\n{proc.stderr[-3000:]}")
            results.append(json.loads(lines[-1][len("RESULT ") :]))
    import torch

    text = (
        f"{args.threads} threads, torch {torch.__version__}, stateless elmo_core `embed_batch` vs AllenNLP "
        f"`batch_to_ids` + `_ElmoBiLm`, random weights, 20-token sentences, median of {args.repeats} "
        f"alternating repeats; regenerate with `python benchmarks/allennlp_compare.py --write`.\n\n" + table(results)
    )
    if BFLOAT16 not in compare:
        text += (
            "\n\nbf16: not offered on this CPU (no AVX512-BF16/AMX; PyTorch's fallback bfloat16 GEMM is "
            "50-100x slower than float32 here, see docs/performance.md)."
        )
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.write:
        write_table(text)


if __name__ == "__main__":
    main()
