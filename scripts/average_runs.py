"""Average the weights of training runs that share a starting point (a "model soup", Wortsman et al. 2022).

Usage:
    python scripts/average_runs.py OUT RUN [RUN ...]     e.g. runs/soup79 runs/default runs/stage9

Each RUN is a training run folder (``checkpoint/model.safetensors`` + ``vocab.txt`` + ``config.json``, as
``python -m elmo_core train`` writes it). The runs must have one vocabulary and one architecture: fine-tunes of one
checkpoint (stage 8 and 9 both started from stage 7f), or weight averaging is meaningless. Writes:

* ``OUT/checkpoint/model.safetensors``: the float32 mean of every tensor the runs' checkpoints share (biLM,
  softmax, teacher heads), with ``meta.json`` naming the runs. There is no optimizer state, so ``--resume`` cannot
  continue it; a config with ``"init_from": "OUT"`` trains on from it with a fresh optimizer.
* ``OUT/last``: the inference export (options.json, model.safetensors, softmax.safetensors, vocab.txt), what
  ``scripts/ship_default_model.sh OUT`` ships.
* ``OUT/vocab.txt`` and ``OUT/config.json`` (the first run's).

Raises SystemExit when the vocabularies or tensor shapes differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from elmo_core.model.strict_json import loads_strict

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("runs", type=Path, nargs="+")
    args = ap.parse_args()
    import torch
    from safetensors.torch import load_file, save_file

    from elmo_core.training.checkpoints import export_model, load_language_model

    vocabs = {(run / "vocab.txt").read_text(encoding="utf-8") for run in args.runs}
    if len(vocabs) != 1:
        sys.exit("the runs have different vocabularies: their weights cannot be averaged")
    states = [load_file(str(run / "checkpoint" / "model.safetensors")) for run in args.runs]
    shared = [k for k in states[0] if all(k in s for s in states[1:])]
    for key in shared:
        if len({tuple(s[key].shape) for s in states}) != 1:
            sys.exit(f"{key} has different shapes in the runs: not one architecture")
    mean = {k: (sum(s[k].double() for s in states) / len(states)).float().contiguous() for k in shared}

    (args.out / "checkpoint").mkdir(parents=True, exist_ok=True)
    save_file(mean, str(args.out / "checkpoint" / "model.safetensors"))
    steps = [
        loads_strict((run / "checkpoint" / "meta.json").read_text(), "meta.json", constants=True).get("step")
        for run in args.runs
    ]
    (args.out / "checkpoint" / "meta.json").write_text(
        json.dumps({"average_of": [str(r) for r in args.runs], "steps": steps, "resumable": False}, indent=1)
    )
    for name in ("vocab.txt", "config.json"):
        shutil.copyfile(args.runs[0] / name, args.out / name)

    # The export: the first run's exported model as the frame, the mean's biLM and softmax tensors in it.
    model, vocab = load_language_model(args.runs[0] / "last")
    own = model.state_dict()
    found = {k: mean[k] for k in own if k in mean}
    missing = [k for k in own if k not in mean]
    if missing:
        sys.exit(f"the checkpoints lack {missing[:3]}...: cannot export")
    model.load_state_dict(found)
    with torch.no_grad():
        export_model(model, vocab, args.out / "last")
    print(f"averaged {len(shared)} tensors of {len(args.runs)} runs (steps {steps}) into {args.out}")


if __name__ == "__main__":
    main()
