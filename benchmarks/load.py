"""Load test of the explorer's server memory: N concurrent sessions (Streamlit's AppTest, one thread each, all
in this process, so they share the app's caches exactly as browser sessions of one server do) work through
M sentence sets; prints the process's RSS every few sets, its peak and its final value.

    python benchmarks/load.py                      # 8 sessions, 100 sets of 60 sentences, default model
    python benchmarks/load.py --sessions 8 --sets 100 --sentences 60 --seconds 600

Loopback only: nothing listens on a port and nothing is downloaded. Bounded in count (--sets) and time
(--seconds: sessions stop taking new sets after it). Sentence sets are drawn from
assets/reference_sentences.txt around frequent words (seeded, so runs are comparable).
"""
from __future__ import annotations

import argparse
import collections
import gc
import os
import queue
import random
import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MiB, from /proc/self/status."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def sentence_sets(count: int, size: int, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` (text, word) pairs: ``size`` reference sentences that contain a frequent word."""
    lines = [ln.strip() for ln in (ROOT / "assets" / "reference_sentences.txt").read_text(encoding="utf-8").splitlines()
             if 5 <= len(ln.split()) <= 40]
    counts = collections.Counter(w.lower() for ln in lines for w in set(ln.split()) if w.isalpha() and len(w) > 3)
    words = [w for w, n in counts.most_common(400) if n >= size][:150]
    rng = random.Random(seed)
    out = []
    for i in range(count):
        word = words[i % len(words)]
        pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
        pool = [ln for ln in lines if pattern.search(ln)]
        out.append(("\n".join(rng.sample(pool, min(size, len(pool)))), word))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--sets", type=int, default=100, help="sentence sets in all, shared out to the sessions")
    parser.add_argument("--sentences", type=int, default=60, help="sentences per set")
    parser.add_argument("--seconds", type=float, default=600, help="stop handing out sets after this long")
    parser.add_argument("--timeout", type=float, default=180, help="AppTest timeout per page run")
    args = parser.parse_args()
    if not 1 <= args.sessions <= 32 or not 1 <= args.sets <= 1000:
        parser.error("--sessions must be 1..32 and --sets 1..1000")

    os.environ.setdefault("ELMO_EXPLORER_UMAP_WARMUP", "0")  # PCA maps: the memory of interest is ours, not numba's
    os.environ.setdefault("ELMO_EXPLORER_DEVICE", "cpu")
    from streamlit.testing.v1 import AppTest

    # CPython's compile() is not safe to call from several threads at once (it fails with "AST constructor
    # recursion depth mismatch"); a real server compiles each page once and caches it, AppTest compiles on
    # every run, so its calls are serialised here. The rest of each run (the biLM, the figures) overlaps.
    import builtins
    _compile, _compile_lock = builtins.compile, threading.Lock()

    def compile_one_at_a_time(*a, **k):
        with _compile_lock:
            return _compile(*a, **k)
    builtins.compile = compile_one_at_a_time

    import torch
    torch.set_num_threads(1)  # 8 sessions on a small machine: one thread each
    sets = sentence_sets(args.sets, args.sentences)
    work: queue.Queue = queue.Queue()
    for item in enumerate(sets):
        work.put(item)
    start_rss, _ = rss_mb()
    print(f"{args.sessions} sessions, {len(sets)} sets of {args.sentences} sentences; RSS at start "
          f"{start_rss:,.0f} MiB", flush=True)
    done, errors, lock = [0], [], threading.Lock()
    t0 = time.monotonic()
    samples: list[float] = []
    stop = threading.Event()

    def sampler() -> None:
        while not stop.is_set():
            samples.append(rss_mb()[0])
            stop.wait(0.25)

    def session(index: int) -> None:
        at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=args.timeout)
        at.run()
        while time.monotonic() - t0 < args.seconds:
            try:
                number, (text, word) = work.get_nowait()
            except queue.Empty:
                return
            try:
                at.text_area(key="sentences").input(text).run()
                if at.selectbox(key="word").value != word:
                    at.selectbox(key="word").set_value(word).run()
                if at.exception:
                    raise RuntimeError(at.exception[0].value)
            except Exception as err:  # report, keep the others going
                with lock:
                    errors.append(f"session {index}, set {number}: {err}")
            with lock:
                done[0] += 1
                if done[0] % 10 == 0:
                    now, _ = rss_mb()
                    print(f"  {done[0]:4d} sets  {time.monotonic() - t0:6.0f} s  RSS {now:,.0f} MiB", flush=True)

    threading.Thread(target=sampler, daemon=True).start()
    threads = [threading.Thread(target=session, args=(i,), name=f"session-{i}") for i in range(args.sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    elapsed = time.monotonic() - t0
    gc.collect()
    final, peak = rss_mb()
    print(f"done: {done[0]} sets in {elapsed:.0f} s, {len(errors)} errors")
    for e in errors[:5]:
        print("  error:", e)
    print(f"RSS: start {start_rss:,.0f} MiB, peak {max(samples + [peak]):,.0f} MiB, final {final:,.0f} MiB "
          "(sessions ended, caches kept)")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
