"""Peak working memory of one biLM forward pass against ``BiLMConfig.inference_bytes``, the estimate the
layer-0 vocabulary pass (``Embedder.type_vectors``) and the app's model checks rely on.

    python -m benchmarks.working_memory

Each case runs in a fresh process (one thread, float32, CPU): the model is built and warmed up on a two-token
batch, then one ``embed_batch`` of B sentences of T tokens runs; "measured" is the growth of the peak resident
set size over the resident size just before it (``ru_maxrss``; Linux). Models: the shipped default, the
published Small's architecture, and the 5.1M-parameter wide model of the hostile-input review (one filter of
width 1 x 16,384, LSTM cells of 16,384, projection 16).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
MODELS = {
    "default": json.loads((ROOT / "assets" / "default" / "options.json").read_text()),
    "small": {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": 128,
            "cell_clip": 3,
            "proj_clip": 3,
            "dim": 1024,
            "n_layers": 2,
        },
        "char_cnn": {
            "activation": "relu",
            "filters": FILTERS,
            "n_highway": 1,
            "embedding": {"dim": 16},
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    },
    "wide": {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": 16,
            "cell_clip": 3,
            "proj_clip": 3,
            "dim": 16384,
            "n_layers": 1,
        },
        "char_cnn": {
            "activation": "relu",
            "filters": [[1, 16384]],
            "n_highway": 0,
            "embedding": {"dim": 4},
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    },
}
SHAPES = [(1024, 1), (64, 40), (8, 200)]  # (sentences, tokens): the vocabulary pass, a page, long lines

CHILD = r"""
import json, resource, sys, torch
torch.set_num_threads(1)
from elmo_core import Embedder
from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
config = BiLMConfig.from_dict(json.loads(sys.argv[1])); b, t = int(sys.argv[2]), int(sys.argv[3])
embedder = Embedder(BiLM(config), device="cpu")
embedder.embed_batch([["ab", "cd"]])
before = int(open("/proc/self/statm").read().split()[1]) * 4096
embedder.embed_batch([[f"word{i}" for i in range(t)] for _ in range(b)], batch_size=b)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"measured": peak - before, "estimate": config.inference_bytes(b * (t + 2)),
                  "type_vector_batch": embedder.type_vector_batch()}))
"""


def main() -> None:
    print(
        f"{'model':<8} {'B x T':>9} {'measured MB':>12} {'estimate MB':>12} {'estimate/measured':>18}  "
        "type_vectors batch"
    )
    for name, options in MODELS.items():
        for b, t in SHAPES:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, json.dumps(options), str(b), str(t)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            row = json.loads(out)
            print(
                f"{name:<8} {f'{b} x {t}':>9} {row['measured'] / 1e6:>12.0f} {row['estimate'] / 1e6:>12.0f} "
                f"{row['estimate'] / max(row['measured'], 1):>18.1f}  {row['type_vector_batch']}"
            )


if __name__ == "__main__":
    main()
