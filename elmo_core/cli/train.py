"""``python -m elmo_core train`` (train a biLM from a config) and ``teacher`` (precompute the contextual
teacher states a training config may name)."""

from __future__ import annotations

import json
from pathlib import Path


def cmd_train(args) -> int:
    from elmo_core.model.strict_json import NotJSONError, loads_strict
    from elmo_core.training.train import TrainConfig, train

    cfg = TrainConfig.load(args.config)
    for item in args.set or []:
        key, _, value = item.partition("=")
        if key not in TrainConfig.__dataclass_fields__:
            raise ValueError(f"unknown config key {key!r}")
        old = getattr(cfg, key)
        try:
            # JSON as written: TrainConfig.validate judges the type, so "false" (a string) or 2.7 for a whole
            # number is an error rather than quietly True or 2; a key given twice in an object is refused.
            new = value if isinstance(old, str) else loads_strict(value, f"--set {key}")
        except NotJSONError:
            raise ValueError(
                f"--set {key}={value}: not a JSON value (a number, true, false or a quoted string)"
            ) from None
        setattr(cfg, key, new)  # train() validates the whole config before it writes anything
    result = train(cfg, resume=args.resume, progress=not args.quiet)
    print(json.dumps({k: v for k, v in result.items() if k != "param_groups"}, indent=1))
    return 0


def add_train_parser(sub) -> None:
    p = sub.add_parser("train", help="train a biLM (see configs/)")
    p.add_argument("config")
    p.add_argument("--resume", action="store_true", help="continue the run's checkpoint exactly")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_train)


def cmd_teacher(args) -> int:
    """``python -m elmo_core teacher TRAIN_TXT OUT``: precompute contextual teacher states for training."""
    import torch

    from elmo_core.training.teacher import precompute

    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        json.dumps(
            precompute(args.train_txt, args.out, args.sentences, args.layers, args.dim, args.batch_size), indent=1
        )
    )
    return 0


def add_teacher_parser(sub) -> None:
    p = sub.add_parser("teacher", help="precompute contextual teacher states for training (training extras needed)")
    p.add_argument("train_txt", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--sentences", type=int, default=100000)
    p.add_argument("--layers", type=int, nargs="+", default=[4])
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=0)
    p.set_defaults(func=cmd_teacher)
