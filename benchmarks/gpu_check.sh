#!/usr/bin/env bash
# One prepared GPU check (issue 13), about 8 minutes on one GPU; everything goes to one folder.
#
#   benchmarks/gpu_check.sh [OUT_DIR]      (default: $OUT if set, else ./gpu_check)
#
#   env.txt              nvidia-smi, torch and CUDA versions
#   tests.txt            pytest with ELMO_TEST_DEVICE=cuda: tests/model/test_device.py (fixtures at 1e-6 on the GPU,
#                        stateless invariance, bf16/fp16 closeness, an autocast training step) and the embedder,
#                        biLM and training tests (train() picks CUDA by itself when it is there)
#   throughput.md        benchmarks/embed_throughput.py on cuda, float32 and bfloat16, Small and Original, batch 1/64
#   bf16_deviation.md    benchmarks/bf16_deviation.py on cuda: per-layer 1 - cos of bf16 vs fp32 on all 3000
#                        reference sentences (+ .json)
#   train_speed.txt      2 minutes of training the default model's architecture (autocast bf16, Adam, batch 64)
#   summary.txt          exit status of each part
# Each part has its own timeout and a failure does not stop the others.
# Environment (all optional; scripts/gpu_session.sh uses them to fit this check after a training run):
#   GPU_CHECK_QUICK=1      shorter limits (under 5 minutes in all), 2 throughput repeats, 30 s of training speed
#   GPU_CHECK_DEADLINE=T   a Unix time: no part runs past it (a part's limit is cut to what is left; a part with
#                          under 5 s left is skipped and summary.txt says so)
#   GPU_CHECK_PARTS="..."  run only these parts (names as in summary.txt, e.g. "env.txt tests.txt")
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-gpu_check}}
mkdir -p "$OUT_DIR"
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON; elif [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
: > "$OUT_DIR/summary.txt"

QUICK=${GPU_CHECK_QUICK:-0}
lim() {  # lim FULL_S QUICK_S: this part's limit in seconds
  if [ "$QUICK" = 1 ]; then echo "$2"; else echo "$1"; fi
}
REPEATS=$(lim 5 2)
export TRAIN_SPEED_SECONDS=$(lim 120 30)

part() {  # part NAME TIMEOUT_S COMMAND... ; stdout+stderr -> $OUT_DIR/NAME
  local name=$1 limit=$2; shift 2
  if [ -n "${GPU_CHECK_PARTS:-}" ] && [[ " $GPU_CHECK_PARTS " != *" $name "* ]]; then
    return 0
  fi
  if [ -n "${GPU_CHECK_DEADLINE:-}" ]; then
    local left=$((GPU_CHECK_DEADLINE - $(date +%s)))
    if [ "$left" -lt 5 ]; then
      echo "$name skipped: ${left}s left before GPU_CHECK_DEADLINE" | tee -a "$OUT_DIR/summary.txt"
      return 0
    fi
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  local start=$SECONDS
  # -k: a part that ignores SIGTERM (a hung CUDA call) is killed 5 s later rather than outliving its limit.
  timeout -k 5 "$limit" "$@" > "$OUT_DIR/$name" 2>&1
  local rc=$?
  echo "$name rc=$rc ${limit}s-limit took=$((SECONDS - start))s" | tee -a "$OUT_DIR/summary.txt"
}

part env.txt "$(lim 60 30)" bash -c "nvidia-smi; $PY -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))'"
part tests.txt "$(lim 240 100)" env ELMO_TEST_DEVICE=cuda "$PY" -m pytest -q -p no:cacheprovider \
  tests/model/test_device.py tests/model/test_embedder.py tests/model/test_bilm.py tests/model/test_char_cnn.py tests/training/test_train.py
part throughput.md "$(lim 150 60)" "$PY" benchmarks/embed_throughput.py --device cuda --dtypes float32 bfloat16 \
  --no-reference --repeats "$REPEATS" --threads 4
part bf16_deviation.md "$(lim 90 45)" "$PY" benchmarks/bf16_deviation.py --device cuda --json "$OUT_DIR/bf16_deviation.json"
part train_speed.txt "$(lim 180 60)" "$PY" - <<'EOF'
"""TRAIN_SPEED_SECONDS (2 minutes) of biLM training on the GPU: tokens/s of the default model's architecture
(autocast bf16)."""
import json, os, random, time
from pathlib import Path

import torch

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.training.lm import BiLanguageModel
from elmo_core.training.batches import make_batch
from elmo_core.data.vocab import Vocabulary

options = json.loads(Path("assets/default/options.json").read_text())
rng = random.Random(0)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(20000)]
weights = [1.0 / (r + 1) for r in range(len(words))]  # Zipf-like, as in running text
vocab = Vocabulary(["<S>", "</S>", "<UNK>", *dict.fromkeys(words)])
device = torch.device("cuda")
model = BiLanguageModel(BiLM(BiLMConfig.from_dict(options), 0.1), len(vocab)).to(device)
opt = torch.optim.Adam(model.parameters(), 1e-3)
tokens, steps, start = 0, 0, None
while True:
    char_ids, wids = make_batch([rng.choices(words, weights, k=25) for _ in range(64)], vocab)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(char_ids.to(device), wids.to(device))
    opt.zero_grad()
    loss.mean.backward()
    opt.step()
    steps += 1
    if steps == 5:  # warm-up excluded
        torch.cuda.synchronize()
        start, tokens = time.time(), 0
    elif start:
        tokens += loss.tokens
        if time.time() - start > float(os.environ.get("TRAIN_SPEED_SECONDS", 120)):
            torch.cuda.synchronize()
            break
seconds = time.time() - start
print(f"{steps - 5} steps, {tokens} tokens in {seconds:.0f} s: {tokens / seconds:,.0f} tokens/s, "
      f"last loss {loss.mean.item():.3f}, peak {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
EOF
echo "all parts done; results in $OUT_DIR" | tee -a "$OUT_DIR/summary.txt"
