"""The biLM runs the page waits for, each behind a progress bar: the sentences (kept for the session), the
word's reference sentences, and another model's run of the same sentences for the Compare tab."""

from __future__ import annotations

import time

import streamlit as st

from app.explore import activations, inputs
from app.render.safe import md
from app.render.words import embedding_note
from app.serving import caches, corpus, models
from app.session import keys, widgets
from app.views.explorer_parts.common import ss


def embed_lines(model: models.LoadedModel, lines: list[inputs.Line]) -> activations.TokenTable | None:
    """Stacked activations of all sentences; the biLM only runs for sentences it has not seen."""
    key = (model.key, tuple(ln.tokens for ln in lines))
    memo = ss.get(keys.private("table"))
    if memo is not None and memo[0] == key:
        return memo[1]
    bar = st.empty()
    start = time.perf_counter()
    try:
        with st.spinner("Running the biLM…"):
            acts, computed = caches.embed(
                model,
                [ln.tokens for ln in lines],
                lambda f, text: bar.progress(f, text=text),
                activations.PROGRESS_FROM,
            )
    except Exception as err:
        st.error(f"The biLM failed on this input: {md(err)}")
        return None
    seconds = time.perf_counter() - start
    bar.empty()
    table = activations.TokenTable(lines, acts)
    ss[keys.private("table")] = (key, table)
    ss["_timings"] = embedding_note(seconds, computed, table)
    return table


def reference_table(
    model: models.LoadedModel, word: str, inflections: bool
) -> tuple[activations.TokenTable | None, int, str]:
    """The word's reference sentences, embedded on demand (with a progress bar) and cached per model."""
    bar = st.empty()
    try:
        return corpus.reference_table(
            model,
            word,
            inflections,
            lambda f, text: bar.progress(f, text=f"Embedding the reference sentences for “{md(word)}”: {text}"),
        )
    finally:
        bar.empty()


def embed_for(loaded: models.LoadedModel, lines) -> activations.TokenTable | None:
    """Another model's activations of the same sentences (the shared cache; progress for long sets)."""
    key = (loaded.key, tuple(ln.tokens for ln in lines))
    kept = widgets.comparison_table(ss, key)
    if kept is not None:
        return kept
    bar = st.empty()
    try:
        with st.spinner(f"Running {md(loaded.display_name)} on the sentences…"):
            acts, _ = caches.embed(
                loaded,
                [ln.tokens for ln in lines],
                lambda f, text: bar.progress(f, text=text),
                activations.PROGRESS_FROM,
            )
    except Exception as err:
        st.error(f"{md(loaded.display_name)} failed on these sentences: {md(err)}")
        return None
    bar.empty()
    table = activations.TokenTable(lines, acts)
    widgets.keep_comparison_table(ss, key, table)
    return table
