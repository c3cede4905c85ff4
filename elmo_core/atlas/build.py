"""Building an atlas folder from a corpus file: in one process, or shared among the ranks of a torchrun job with
``embed``'s machinery (``elmo_core.model.shards``: units, per-rank journals, resume after a killed rank, one merge
on rank 0), so that N ranks give the same vectors and occurrence index as one process, bit for bit (the same
biLM calls on the same kind of device and thread count).

What a rank keeps of a sentence: the float16 layer vectors (k, L, D) of its k kept occurrences. Sentences with no
kept word are not embedded at all. The merge (rank 0) sorts the occurrences by word, writes the folder's files
(``elmo_core.atlas.store``), builds the nearest-neighbour index (``elmo_core.atlas.ann``) and renames the folder
into place (replacing an earlier atlas there) only when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from elmo_core.atlas import ann
from elmo_core.atlas.store import (
    ANN,
    FORMAT,
    MANIFEST,
    OCCURRENCES,
    SENTENCE_OFFSETS,
    SENTENCES,
    VECTORS,
    WORD_OFFSETS,
    WORDS,
)
from elmo_core.atlas.words import (
    DEFAULT_MIN_COUNT,
    choose_words,
    occurrence_table,
    read_corpus,
    read_stop_words,
    sentences_digest,
)
from elmo_core.model.embed_file import plan_batches, plan_units, run_calls
from elmo_core.model.shards import Ranks, run_sharded
from elmo_core.paths import STOP_WORDS

STAGING = "atlas.partial"  # the merge's folder, inside the parts folder


def check_output(out: Path) -> None:
    """Refuse an output that cannot be an atlas folder: a file, a folder with other things in it (never
    replaced), a missing or unwritable parent. Raises: ValueError naming the path."""
    if out.exists() and not out.is_dir() or out.is_symlink():
        raise ValueError(f"the output {out} is a file or a link; give the path of a folder for the atlas")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ValueError(f"the output folder {out} holds files but no atlas; give a new or empty folder")
    if not out.parent.is_dir():
        what = "is a file, not a folder" if out.parent.exists() else "does not exist"
        raise ValueError(f"the output's parent folder {out.parent} {what}")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write beside {out} (permission denied): the atlas is built in {out.parent}")


def weights_sha256(embedder) -> str:
    """sha256 of the biLM's parameters (names, shapes and bytes, in state_dict order): names the model exactly."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in embedder.bilm.state_dict().items():
        digest.update(f"{name}{tuple(tensor.shape)}{tensor.dtype}".encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(dtype=torch.uint8).numpy())
    return digest.hexdigest()


def build_atlas(
    corpus: str | Path,
    out: str | Path,
    embedder,
    model_name: str,
    min_count: int = DEFAULT_MIN_COUNT,
    stop_words: str | Path = STOP_WORDS,
    batch_size: int = 64,
    max_tokens: int = 1024,
    ranks: Ranks | None = None,
    progress: Callable[[str], None] | None = None,
    advance: Callable[[int], None] = lambda n: None,
    stop: Callable[[], type[BaseException] | None] = lambda: None,
    planned: Callable[[int], None] = lambda n: None,
) -> dict | None:
    """Build the atlas of ``corpus`` (one whitespace-tokenized sentence per line) into the folder ``out``.

    Args:
        embedder: an ``Embedder``; model_name: what the manifest calls it.
        min_count, stop_words: which words are kept (``elmo_core.atlas.words``).
        batch_size, max_tokens: the biLM calls, as ``embed``'s options (``plan_batches``).
        ranks: this process's place in a torchrun job (default: one process, ``Ranks(0, 1, 0)``).
        progress: one line now and then (ranks' units, the merge's stages); advance(n): n more sentences done;
        planned(n): called once, before embedding, with the number of sentences to embed (those with a kept word).
    Returns: the manifest on the rank that wrote the atlas, None on the others.
    Raises: FileNotFoundError, ValueError for a bad corpus or output; whatever embedding or writing raises.
    """
    corpus, out = Path(corpus), Path(out)
    ranks = ranks or Ranks(0, 1, 0)
    say = progress or (lambda line: None)
    check_output(out)
    sentences = read_corpus(corpus)
    stops = read_stop_words(stop_words)
    words, _ = choose_words(sentences, min_count, stops)
    if not len(words):  # before any work: an atlas of nothing has no index to build
        raise ValueError(
            f"no word of {corpus} occurs at least {min_count} times (stop words, numbers and punctuation left out): "
            "nothing to keep; give a larger corpus or a smaller --min-count"
        )
    table = occurrence_table(sentences, words)  # sentence order
    bounds = np.searchsorted(table[:, 1], np.arange(len(sentences) + 1))
    todo = np.flatnonzero(np.diff(bounds)).tolist()  # the sentences with a kept word: only these are embedded
    sub = [sentences[i] for i in todo]
    planned(len(sub))
    lengths = [len(s) for s in sub]
    units = plan_units(plan_batches(lengths, batch_size, max_tokens), lengths)
    model = {"name": model_name, "weights_sha256": weights_sha256(embedder)}
    model |= {"layers": int(embedder.num_layers), "dim": int(embedder.dim)}
    identity = {
        "format": FORMAT,
        "input": sentences_digest(sentences),
        "model": model["weights_sha256"],
        "min_count": min_count,
        "stop_words": sorted(stops),
        "batch_size": batch_size,
        "max_tokens": max_tokens,
    }

    def run_unit(k: int):
        for j, layers in run_calls(embedder.embed_batch, sub, units[k], "all", stop):
            i = todo[j]
            yield j, layers[:, table[bounds[i] : bounds[i + 1], 2], :].transpose(1, 0, 2).astype(np.float16)

    manifest = {
        "format": FORMAT,
        "model": model,
        "corpus": {"name": corpus.name, "sha256": identity["input"]},
        "min_count": min_count,
        "stop_words": {"count": len(stops), "sha256": hashlib.sha256("\n".join(sorted(stops)).encode()).hexdigest()},
        "batch": {"batch_size": batch_size, "max_tokens": max_tokens},
        "counts": {
            "sentences": len(sentences),
            "tokens": sum(len(s) for s in sentences),
            "words": len(words),
            "occurrences": len(table),
            "embedded_sentences": len(todo),
        },
        "index": {"library": "faiss", "kind": "IndexHNSWSQ 8-bit, inner product", "mix": "equal", "M": ann.HNSW_M},
    }
    manifest["index"]["ef_construction"] = ann.EF_CONSTRUCTION

    def merge(folder: Path, read: Callable[[int], np.ndarray]) -> None:
        say(f"merging {len(table):,} occurrences of {len(words):,} words")
        staging = folder / STAGING
        shutil.rmtree(staging, ignore_errors=True)  # a merge killed half way
        staging.mkdir()
        _write_vectors(folder, staging, table, todo, read, model)
        order = np.argsort(table[:, 0], kind="stable")  # by word; sentence and position order kept
        occ = table[order]
        np.save(staging / OCCURRENCES, occ, allow_pickle=False)
        np.save(staging / WORD_OFFSETS, np.searchsorted(occ[:, 0], np.arange(len(words) + 1)).astype(np.int64))
        np.save(staging / WORDS, np.array(words, dtype=str), allow_pickle=False)
        _write_sentences(staging, sentences)
        say(f"building the nearest-neighbour index over {len(table):,} occurrences")
        vectors = np.load(staging / VECTORS, mmap_mode="r")
        import faiss

        manifest["index"]["version"] = faiss.__version__
        ann.write_index(ann.build_index(vectors), staging / ANN)
        del vectors
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if out.exists():  # an earlier atlas (check_output allowed it): moved aside, removed with the parts
            out.rename(folder / "replaced")
        staging.rename(out)

    wrote = run_sharded(run_unit, len(units), len(sub), out, ranks, identity, merge, "<f2", progress, advance, stop)
    return manifest if wrote else None


def _write_vectors(folder, staging, table, todo, read, model) -> None:
    """vectors.npy in word order: the ranks' float16 rows copied first in sentence order into a scratch file
    (sequential), then gathered by word a chunk at a time."""
    n, shape = len(table), (model["layers"], model["dim"])
    scratch = np.lib.format.open_memmap(folder / "by-sentence.npy", "w+", np.float16, (n, *shape))
    row = 0
    for j in range(len(todo)):
        rows = read(j)
        scratch[row : row + len(rows)] = rows
        row += len(rows)
    if row != n:
        raise ValueError(f"the ranks' parts hold {row} occurrences, the plan {n}: remove {folder} and build again")
    order = np.argsort(table[:, 0], kind="stable")
    vectors = np.lib.format.open_memmap(staging / VECTORS, "w+", np.float16, (n, *shape))
    for first in range(0, n, ann.CHUNK):
        vectors[first : first + ann.CHUNK] = scratch[order[first : first + ann.CHUNK]]
    vectors.flush()
    del vectors, scratch
    (folder / "by-sentence.npy").unlink()


def _write_sentences(staging: Path, sentences: list[list[str]]) -> None:
    data = [(" ".join(tokens) + "\n").encode("utf-8") for tokens in sentences]
    (staging / SENTENCES).write_bytes(b"".join(data))
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    np.save(staging / SENTENCE_OFFSETS, offsets, allow_pickle=False)
