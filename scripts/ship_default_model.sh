#!/usr/bin/env bash
# Ship trained runs as the two bundled models: copy each run's last export into assets/<name> (weights as
# float16: half the size, widened to float32 on load), then measure it (held-out perplexity and the sense
# probes into evaluation.json). The layer probes for the app's Layers page are refreshed for the default.
# Usage: scripts/ship_default_model.sh DEFAULT_RUN [LM_ONLY_RUN]
#   e.g. scripts/ship_default_model.sh runs/default runs/ablation-lm   (without LM_ONLY_RUN, assets/lm-only stays)
# Needs data/corpus (python -m elmo_core corpus build data/corpus); WordNet for the weak WordNet probe.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
ship() {  # ship RUN NAME
  local run=$1 name=$2
  mkdir -p "assets/$name"
  "$py" - "$run/last" "assets/$name" <<'PY'
import sys, json, shutil
from pathlib import Path
import torch
from safetensors.torch import load_file, save_file
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
for f in ("options.json", "vocab.txt"):
    shutil.copyfile(src / f, dst / f)
save_file({k: v.to(torch.float16).contiguous() for k, v in load_file(str(src / "model.safetensors")).items()},
          str(dst / "model.safetensors"), metadata={"format": "elmo_core.model.bilm"})
from safetensors import safe_open
with safe_open(str(src / "softmax.safetensors"), "pt") as f:
    meta = f.metadata()
save_file({k: v.to(torch.float16).contiguous() for k, v in load_file(str(src / "softmax.safetensors")).items()},
          str(dst / "softmax.safetensors"), metadata=meta)
PY
  cp "$run/config.json" "assets/$name/train_config.json"
  chmod 644 assets/$name/*
  "$py" -m elmo_core evaluate --checkpoint "assets/$name" ${WORDNET_DIR:+--wordnet-dir "$WORDNET_DIR"} \
    --out "assets/$name/evaluation.json"
}
ship "${1:?default run}" default
if [ -n "${2:-}" ]; then ship "$2" lm-only; fi
"$py" -m elmo_core probe --task all --checkpoint assets/default --out assets/probes/default_probes.json
