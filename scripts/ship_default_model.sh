#!/usr/bin/env bash
# Ship a trained run as the default model: copy its best export into assets/default, then measure it
# (held-out perplexity + sense probe, and the layer probes for the app's Layers page).
# Usage: scripts/ship_default_model.sh [RUN_DIR]   (default runs/default; needs data/corpus and the probe data:
#        python -m elmo_core.corpus build data/corpus && python -m elmo_core probe --prepare)
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-runs/default}
py=${PYTHON:-.venv/bin/python}
for f in options.json model.safetensors softmax.safetensors vocab.txt; do
  install -m 644 "$run/best/$f" "assets/default/$f"
done
cp "$run/config.json" assets/default/train_config.json
chmod 644 assets/default/train_config.json
"$py" -m elmo_core evaluate --checkpoint assets/default --out assets/default/evaluation.json
"$py" -m elmo_core probe --task all --checkpoint assets/default --out assets/probes/default_probes.json
