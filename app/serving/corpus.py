"""The reference corpus (``ELMO_EXPLORER_REFERENCE``): read once per server process, searched for a word's
sentences, and those sentences embedded with a session's model for the reference neighbours."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from app.explore.activations import TokenTable
from app.explore.text import hide_paths
from app.render.safe import md
from app.serving.caches import embed
from app.serving.settings import allow_server_paths
from app.serving.startup import LoadedModel
from elmo_core import INDEX_FILE, REFERENCE_DIR, Progress, ReferenceCorpus, word_forms

DEFAULT_REFERENCE = REFERENCE_DIR
MAX_REFERENCE_SENTENCES = 60  # reference sentences embedded per word (benchmarks/type_vectors.py times it)


def reference_path() -> Path:
    """The reference corpus folder (``ELMO_EXPLORER_REFERENCE``, default assets/reference)."""
    return Path(os.environ.get("ELMO_EXPLORER_REFERENCE", DEFAULT_REFERENCE))


@st.cache_resource(show_spinner="Reading the reference corpus…", max_entries=2)
def _reference_corpus(path: str, mtime: float) -> tuple[ReferenceCorpus | None, str]:
    try:
        return ReferenceCorpus.load(path), ""
    except (FileNotFoundError, ValueError) as err:
        return None, str(err)


def reference_corpus() -> tuple[ReferenceCorpus | None, str]:
    """The reference corpus, read once per server process (about 1 s), or None and why not."""
    p = reference_path()
    index = p / INDEX_FILE
    if not index.is_file():
        return None, f"no reference corpus at {p}"
    return _reference_corpus(str(p), index.stat().st_mtime)


def reference_available() -> bool:
    return reference_corpus()[0] is not None


def reference_size() -> int:
    """The reference corpus's number of sentences; 0 without one."""
    corpus = reference_corpus()[0]
    return len(corpus) if corpus is not None else 0


def reference_for_word(
    word: str, inflections: bool, limit: int = MAX_REFERENCE_SENTENCES
) -> tuple[list[tuple[str, ...]], int]:
    """Up to ``limit`` reference sentences (tokens) that hold the word or, with ``inflections``, its regular
    forms (``elmo_core.word_forms``: whole tokens, case and a possessive ending ignored), evenly spread over
    all that do; and how many do. ([], 0): none, or no corpus."""
    corpus = reference_corpus()[0]
    if corpus is None or not word.strip():
        return [], 0
    return corpus.contexts(word_forms(word, inflections=inflections), limit)


@st.cache_resource
def _reference_tables() -> dict:
    return {}


def reference_table(
    model: LoadedModel, word: str, inflections: bool, progress: Progress | None = None
) -> tuple[TokenTable | None, int, str]:
    """The word's reference sentences embedded with this model (only new ones run the biLM: the activation
    cache is per model), as a token table; how many reference sentences hold the word; a note when there is
    no table. ``progress(fraction, text)`` is called while the biLM runs.

    Returns: (table or None, total, note).
    """
    corpus, why = reference_corpus()
    if corpus is None:
        why = why if allow_server_paths() else hide_paths(why)  # a visitor is not shown the server's folders
        return (
            None,
            0,
            (
                f"No reference corpus ({md(why)}): reference neighbours are skipped (set "
                "ELMO_EXPLORER_REFERENCE to a folder made by scripts/build_reference_corpus.py)."
            ),
        )
    tokens, total = reference_for_word(word, inflections)
    if not tokens:
        return None, 0, f"“{md(word)}” does not occur in the reference corpus ({len(corpus):,} sentences)."
    key = (model.key, word.casefold(), inflections, len(tokens), str(reference_path()))
    memo = _reference_tables()
    if key in memo:
        return memo[key], total, ""
    if progress is not None:
        progress(0.0, f"running the biLM: 0/{len(tokens):,} sentences")  # the bar is up before the first batch
    try:
        acts, _ = embed(model, tokens, progress)
    except Exception as err:  # a user's model failing on some sentence: say so, keep the page
        return None, 0, f"The biLM failed on the reference sentences: {md(err)}"
    table = TokenTable.of_tokenized(tokens, acts)
    memo[key] = table
    while len(memo) > 4:  # each holds a copy of its activations (a few MB), outside the shared cache
        memo.pop(next(iter(memo)))
    return table, total, ""
