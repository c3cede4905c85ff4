"""Corpus mode's sources (the Corpus page): the reference corpus's words and a word's every sentence embedded on
demand with a session's model (cached per model and word), and the atlases under ``ELMO_EXPLORER_ATLAS``, each
opened once per server process. A visitor never sees a server path: an atlas is named by its folder's name."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import streamlit as st

from app.explore.corpus_view import CorpusWord, occurrence_positions
from app.serving.corpus import reference_corpus, reference_path
from app.serving.limits import working_memory
from app.serving.memory import CALL_SENTENCES
from app.serving.settings import for_visitor
from app.serving.startup import LoadedModel
from elmo_core import Atlas, Progress, embed_in_chunks, is_form, read_stop_words, word_forms

ATLAS_SETTING = "ELMO_EXPLORER_ATLAS"
MANIFEST = "manifest.json"
MAX_CORPUS_SENTENCES = 1000  # reference sentences embedded per word at most (evenly spread over all that hold it)
MAX_ATLAS_OCCURRENCES = 20000  # atlas occurrences kept per word at most (evenly spread), for the page's memory
MAX_ATLASES = 50  # atlas folders offered under ELMO_EXPLORER_ATLAS
PICKER_WORDS = 3000  # words the word picker offers (most frequent first); any other can be typed
MIN_PICKER_COUNT = 5  # as the atlas's threshold (elmo_core.atlas.DEFAULT_MIN_COUNT)
REFERENCE = "the reference corpus"
_memo_lock = threading.Lock()


# ---- the atlases ------------------------------------------------------------------------------------------------
def atlas_root() -> Path | None:
    """``ELMO_EXPLORER_ATLAS``: an atlas folder, or a folder of atlas folders; None when unset."""
    value = os.environ.get(ATLAS_SETTING, "").strip()
    return Path(value).expanduser() if value else None


def atlas_folders() -> dict[str, Path]:
    """{folder name: folder} of the atlases the setting names (itself, or its subfolders with a manifest), sorted;
    {} when unset or when it names neither (``open_atlas`` says why for the setting itself)."""
    root = atlas_root()
    if root is None:
        return {}
    if (root / MANIFEST).is_file() or not root.is_dir():
        return {root.name or "atlas": root}
    try:
        found = sorted(p for p in root.iterdir() if p.is_dir() and (p / MANIFEST).is_file())
    except OSError:
        found = []
    return {p.name: p for p in found[:MAX_ATLASES]} or {root.name or "atlas": root}


@st.cache_resource(show_spinner="Opening the atlas…", max_entries=8)
def _open_atlas(path: str, mtime: float) -> tuple[Atlas | None, str]:
    try:
        return Atlas.open(path), ""
    except (FileNotFoundError, ValueError, OSError) as err:
        return None, str(err)


def open_atlas(name: str) -> tuple[Atlas | None, str]:
    """The atlas named ``name`` (``atlas_folders``), opened once per server process (again when its manifest
    changes), or None and why not, in words a visitor may see (no server path)."""
    folder = atlas_folders().get(name)
    if folder is None:
        return None, f"there is no atlas named “{name}” on this server"
    try:  # any file of the atlas rewritten, cut or removed: open it again (and say what is wrong with it)
        mtime = float(max((p.stat().st_mtime_ns for p in folder.iterdir()), default=0))
    except OSError:
        mtime = 0.0
    atlas, why = _open_atlas(str(folder), mtime)
    if atlas is None:
        why = for_visitor(why.replace(str(folder), f"“{folder.name}”"))
    return atlas, why


@st.cache_data(show_spinner=False, max_entries=8)
def _atlas_words(path: str, mtime: float) -> list[tuple[str, int]]:
    atlas = Atlas.open(path)
    counted = sorted(((w, atlas.count(w)) for w in atlas.words()), key=lambda wc: (-wc[1], wc[0]))
    return counted[:PICKER_WORDS]


def atlas_words(name: str) -> list[tuple[str, int]]:
    """The atlas's most frequent words with their occurrence counts, most frequent first."""
    atlas, _ = open_atlas(name)
    if atlas is None:
        return []
    return _atlas_words(str(atlas.folder), (atlas.folder / MANIFEST).stat().st_mtime)


# ---- the reference corpus -----------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def stop_words() -> frozenset[str]:
    """The atlas's stop words (``assets/stop_words.txt``): never offered as words, never shown as telling words."""
    try:
        return read_stop_words()
    except (OSError, ValueError):
        return frozenset()


@st.cache_data(show_spinner=False, max_entries=2)
def _reference_words(path: str, size: int) -> list[tuple[str, int]]:
    corpus = reference_corpus()[0]
    if corpus is None:
        return []
    counts = np.diff(corpus.offsets)
    stops = stop_words()
    order = np.argsort(-counts, kind="stable")
    out = []
    for r in order.tolist():
        if counts[r] < MIN_PICKER_COUNT or len(out) >= PICKER_WORDS:
            break
        w = str(corpus.words[r])
        if any(ch.isalpha() for ch in w) and w not in stops:
            out.append((w, int(counts[r])))
    return out


def reference_words() -> list[tuple[str, int]]:
    """The reference corpus's most frequent words (not stop words) with their sentence counts, most frequent first."""
    corpus = reference_corpus()[0]
    return [] if corpus is None else _reference_words(str(reference_path()), len(corpus))


@st.cache_resource(show_spinner=False)
def _embedded() -> dict:
    return {}


def reference_word(model: LoadedModel, word: str, progress: Progress | None = None) -> tuple[CorpusWord | None, str]:
    """Every occurrence of ``word`` in the reference corpus (its sentences, at most ``MAX_CORPUS_SENTENCES`` evenly
    spread, embedded with ``model`` a batch at a time, ``progress`` told after each), kept per (model, word) for
    every session; or None and why not."""
    corpus, why = reference_corpus()
    if corpus is None:
        return None, f"There is no reference corpus on this server ({for_visitor(why)})."
    forms = word_forms(word, inflections=False)
    ids = corpus.sentence_ids(forms) if forms else np.zeros(0, np.int64)
    if not len(ids):
        return None, f"“{word}” does not occur in the reference corpus ({len(corpus):,} sentences)."
    key = (model.key, word.casefold(), str(reference_path()))
    memo = _embedded()
    with _memo_lock:
        if key in memo:
            return memo[key], ""
    total = len(ids)
    if total > MAX_CORPUS_SENTENCES:
        ids = ids[np.linspace(0, total - 1, MAX_CORPUS_SENTENCES).round().astype(int)]
    sentences = [corpus.tokens(int(i)) for i in ids]
    sent, pos = occurrence_positions(sentences, lambda tok: is_form(tok, forms))
    memory = working_memory()
    parts = []
    for first_done, arrays in _chunks(memory, model, sentences, progress):
        first = first_done - len(arrays)
        for i, acts in enumerate(arrays):
            here = pos[sent == first + i]
            parts.append(np.ascontiguousarray(acts[:, here], dtype=np.float32))
    layers = np.concatenate(parts, axis=1) if parts else np.zeros((0, 0, 0), np.float32)
    found = CorpusWord(word.casefold(), tuple(sentences), sent, pos, layers, total, REFERENCE)
    with _memo_lock:
        memo[key] = found
        while len(memo) > 8:  # each holds its occurrences' vectors (n x (L + 1) x D floats: a few MB)
            memo.pop(next(iter(memo)))
    return found, ""


def _chunks(memory, model: LoadedModel, sentences, progress):
    return embed_in_chunks(lambda chunk: memory.embed_batch(model.embedder, chunk), sentences, CALL_SENTENCES, progress)


# ---- an atlas's word ---------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _atlas_memo() -> dict:
    return {}


def atlas_word(name: str, word: str) -> tuple[CorpusWord | None, str]:
    """Every occurrence of ``word`` in the atlas ``name`` (at most ``MAX_ATLAS_OCCURRENCES``, evenly spread), kept
    per (atlas, word) for every session; or None and why not."""
    atlas, why = open_atlas(name)
    if atlas is None:
        return None, why
    key = (str(atlas.folder), atlas.manifest.get("corpus", {}).get("sha256", ""), word.casefold())
    memo = _atlas_memo()
    with _memo_lock:
        if key in memo:
            return memo[key], ""
    try:  # the visitor's own word, said as typed (the library's message names its API and quotes it as Python)
        atlas.word_id(word)
    except ValueError:
        if word.casefold() in stop_words():
            return None, f"“{word}” is a stop word: an atlas keeps none of them (they occur everywhere)."
        least = atlas.manifest.get("min_count", "a few")
        return (
            None,
            f"“{word}” is not in the atlas “{name}”: it keeps the words that occur at least {least} times there.",
        )
    try:  # an atlas changed on disk since it was opened (elmo_core.Atlas checks each read)
        vectors, sentence_ids, positions = atlas.occurrences(word)
        total = len(positions)
        if total > MAX_ATLAS_OCCURRENCES:
            keep = np.linspace(0, total - 1, MAX_ATLAS_OCCURRENCES).round().astype(int)
            vectors, sentence_ids, positions = vectors[keep], sentence_ids[keep], positions[keep]
        unique, occ_sentence = np.unique(sentence_ids, return_inverse=True)
        sentences = tuple(tuple(atlas.sentence(int(i))) for i in unique)
    except ValueError as err:
        return None, for_visitor(str(err).replace(str(atlas.folder), f"“{atlas.folder.name}”"))
    layers = np.ascontiguousarray(np.transpose(vectors, (1, 0, 2)), dtype=np.float32)
    found = CorpusWord(
        word.casefold(),
        sentences,
        occ_sentence.astype(np.int64),
        positions.astype(np.int64),
        layers,
        total,
        f"the atlas “{name}”",
    )
    with _memo_lock:
        memo[key] = found
        while len(memo) > 8:
            memo.pop(next(iter(memo)))
    return found, ""


def atlas_model(name: str) -> tuple[str, int, int]:
    """(model name, layers, dim) the atlas was built with; ("", 0, 0) when it cannot be opened."""
    atlas, _ = open_atlas(name)
    if atlas is None:
        return "", 0, 0
    model = atlas.manifest.get("model") or {}
    return str(model.get("name", "")), int(atlas.num_layers), int(atlas.dim)
