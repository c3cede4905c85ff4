"""The explorer server's memory with a model loaded the way a user loads it: what the upload check does with the
hostile-input review's wide model, and the peak resident memory of the app's two largest biLM calls (the layer-0
vocabulary pass of the reference corpus's 50,000 words, and one page call of 32 sentences of 100 tokens), both
bounded by ``ELMO_EXPLORER_WORK_MB`` (``app.serving.memory.WorkingMemory``).

    nice .venv/bin/python benchmarks/app_memory.py [--words 50000] [--threads 2] [--cases wide-refused,wide,...]

Each case runs in a fresh process on the CPU, calling the app's own functions (``app.serving``, outside a
Streamlit server): "rss" is the resident set size after the model is in memory, "peak" the process's peak
(``VmHWM``, reset before each call) during the call; both include Python, torch and the app's imports (about
350 MB). Cases:

* ``wide-refused``: the wide model (5,194,788 parameters, LSTM cells of 16,384, projection 16; a 20.8 MB upload,
  random weights) uploaded with the defaults: refused before its weights are read (the message is printed);
* ``wide``: the same with ``ELMO_EXPLORER_WORK_MB=2700``, which lets it load: its vocabulary pass and a page call;
* ``original``: a model of the published Original's size (93.6M parameters, random weights; not read from an
  upload, which would need its 374 MB file) at the defaults;
* ``default``: the shipped default model at the defaults.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, logging, os, sys, time
from pathlib import Path
case, call, words_wanted, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
import torch
if threads:
    torch.set_num_threads(threads)
import streamlit.logger
streamlit.logger.set_log_level("error")
logging.disable(logging.WARNING)
from app.serving import caches, corpus, limits, memory, uploads
from app.serving.startup import LoadedModel
from elmo_core import BiLM, BiLMConfig, Embedder, export_elmo_hdf5

def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096

def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

def reset_peak():  # Linux: the peak resident size (VmHWM) starts again from the current one
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

WIDE = {"lstm": {"use_skip_connections": True, "projection_dim": 16, "cell_clip": 3, "proj_clip": 3, "dim": 16384,
                 "n_layers": 1},
        "char_cnn": {"activation": "relu", "filters": [[1, 16384]], "n_highway": 0, "embedding": {"dim": 4},
                     "n_characters": 262, "max_characters_per_token": 50}}
FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
ORIGINAL = {"lstm": {"use_skip_connections": True, "projection_dim": 512, "cell_clip": 3, "proj_clip": 3,
                     "dim": 4096, "n_layers": 2},
            "char_cnn": {"activation": "relu", "filters": FILTERS, "n_highway": 2, "embedding": {"dim": 16},
                         "n_characters": 262, "max_characters_per_token": 50}}
out = {"case": case}
torch.manual_seed(0)
if case.startswith("wide"):
    if case == "wide":
        os.environ["ELMO_EXPLORER_WORK_MB"] = "2700"
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        export_elmo_hdf5(BiLM(BiLMConfig.from_dict(WIDE)), Path(folder) / "wide.hdf5")
        options, weights = json.dumps(WIDE).encode(), (Path(folder) / "wide.hdf5").read_bytes()
    reset_peak()
    before = rss()
    try:
        model = uploads.load_uploaded_model(options, weights, "wide.hdf5", session="bench")
    except ValueError as err:
        out.update(refused=str(err), rss_before=before, rss_after=rss(), peak=peak())
        print(json.dumps(out))
        sys.exit(0)
elif case == "original":
    config = BiLMConfig.from_dict(ORIGINAL)
    model = LoadedModel("bench", Embedder(BiLM(config), device="cpu", name="original-size"), "bench")
else:
    model = LoadedModel("bench", Embedder.bundled("default", device="cpu"), "bench")
config = model.embedder.bilm.config
work = limits.working_memory()
out.update(parameters=model.embedder.num_parameters, work_mb=work.max_bytes // 2**20,
           call_positions=work.positions(config), call_estimate=config.inference_bytes(work.positions(config)),
           vocab_batch=model.embedder.type_vector_batch(
               memory_bytes=work.vocabulary_budget() // memory.VOCABULARY_MARGIN))
out["estimate_vocab"] = config.inference_bytes(3 * out["vocab_batch"])
out["held_vocab"] = memory.VOCABULARY_MARGIN * out["estimate_vocab"]
model.embedder.embed_batch([["ab", "cd"]])  # warmed up: one-off buffers (oneDNN's packed weights) are the model's
reference = corpus.reference_corpus()[0]
words = reference.vocabulary(words_wanted)
from app.serving.type_vectors import TypeVectors
sentences = [[f"word{i}"] * 100 for i in range(32)]
out["rss"] = rss()
reset_peak()
start = time.perf_counter()
if call == "vocab":
    types = TypeVectors(words, lambda chunk: work.type_vectors(model.embedder, chunk)).run_now()
    assert types.state == "ready", types.error
    out.update(words=len(words), vectors=types._vectors.nbytes)
else:
    caches.embed(model, sentences)
out.update(seconds=time.perf_counter() - start, peak=peak())
print(json.dumps(out))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--words", type=int, default=50000, help="vocabulary words of the layer-0 pass (the app's 50,000)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--cases", default="wide-refused,wide,original,default")
    args = p.parse_args()
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("ELMO_EXPLORER_")}
    mb = 2**20
    for case in args.cases.split(","):
        for call in ("vocab", "page") if case != "wide-refused" else ("upload",):
            run = subprocess.run(
                [sys.executable, "-c", CHILD, case, call, str(args.words), str(args.threads)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env=env,
            )
            if run.returncode:
                print(f"{case} {call}: failed\n{run.stderr[-2000:]}")
                continue
            row = json.loads(run.stdout.strip().splitlines()[-1])
            if "refused" in row:
                print(
                    f"{case}: refused before its weights were read: {row['refused']}\n"
                    f"    RSS {row['rss_before'] / mb:,.0f} MB before the upload, {row['rss_after'] / mb:,.0f} MB "
                    f"after; peak {row['peak'] / mb:,.0f} MB"
                )
                continue
            head = (
                f"{case}: {row['parameters']:,} parameters, ELMO_EXPLORER_WORK_MB={row['work_mb']}, RSS with the "
                f"model {row['rss'] / mb:,.0f} MB"
            )
            if call == "vocab":
                print(
                    f"{head}; vocabulary pass of {row['words']:,} words, {row['vocab_batch']} a call (estimate "
                    f"{row['estimate_vocab'] / mb:,.0f} MB, held {row['held_vocab'] / mb:,.0f} MB): "
                    f"peak {row['peak'] / mb:,.0f} MB "
                    f"(+{(row['peak'] - row['rss']) / mb:,.0f}, of which {row['vectors'] / mb:,.0f} MB its "
                    f"vectors; {row['seconds']:.0f} s)"
                )
            else:
                print(
                    f"{head}; page call of 32 x 100 tokens, {row['call_positions']:,} positions a call (estimate "
                    f"{row['call_estimate'] / mb:,.0f} MB): peak {row['peak'] / mb:,.0f} MB "
                    f"(+{(row['peak'] - row['rss']) / mb:,.0f}; {row['seconds']:.1f} s)"
                )


if __name__ == "__main__":
    main()
