"""The explorer's reference corpus (elmo_core.data.reference, assets/reference/): its files, index, vocabulary and
selection. The layer-0 vocabulary neighbours are in test_type_vectors.py and test_embedder.py."""

from __future__ import annotations

import collections
import lzma

import numpy as np
import pytest

from elmo_core.data import reference as rf
from elmo_core.paths import corpus_dir


@pytest.fixture(scope="module")
def shipped():
    return rf.ReferenceCorpus.load()


@pytest.fixture(scope="module")
def token_sets(shipped):
    return [{t.casefold() for t in s.split(" ") if rf.is_word(t)} for s in shipped.sentences]


# ---- the shipped files ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_every_listed_sentence_holds_its_word_and_every_word_is_listed(shipped, token_sets):
    listed = collections.defaultdict(set)
    for r, word in enumerate(shipped.words.tolist()):
        ids = shipped.postings[shipped.offsets[r] : shipped.offsets[r + 1]]
        assert len(ids) and np.all(np.diff(ids) > 0), word  # ascending, no repeats
        for i in ids.tolist():
            assert word in token_sets[i], (word, shipped.sentences[i])
            listed[i].add(word)
    assert all(listed[i] == words for i, words in enumerate(token_sets))  # nothing left out of the index


def test_the_coverage_claim(shipped):
    assert len(shipped) >= 50_000
    top = shipped.meta["top_words"]
    assert len(top) == 2000 and len(set(top)) == 2000
    counts = {w: shipped.count(w) for w in top}
    assert min(counts.values()) >= 40, sorted(counts.items(), key=lambda kv: kv[1])[:5]
    from app.explore.examples import EXAMPLE_SETS

    for word in {e.word for e in EXAMPLE_SETS.values()}:  # the old 3,000 sentences: 4 usable for "bank", 1 "spring"
        assert shipped.count(word) >= 150, (word, shipped.count(word))
    for word in ("bat", "pitch", "bark"):  # none there
        assert shipped.count(word) >= 50, (word, shipped.count(word))


def test_the_top_words_are_those_of_the_built_corpus(shipped):
    import hashlib

    train = corpus_dir() / "train.txt"
    if not train.is_file():
        pytest.skip(f"no built corpus at {train}")
    if hashlib.sha1(train.read_bytes()).hexdigest() != shipped.meta["corpus_train_sha1"]:
        pytest.skip("the corpus was rebuilt since assets/reference/ was made: rerun scripts/build_reference_corpus.py")
    counts = rf.word_counts(train.read_text(encoding="utf-8").splitlines(), fold=True)
    assert [w for w, _ in counts.most_common(2000)] == shipped.meta["top_words"]


def test_no_probe_sentence_is_a_reference_sentence(shipped, tmp_path):
    from elmo_core.data.corpus.build import probe_sentences
    from elmo_core.paths import probe_data_dir

    probes = probe_sentences(tmp_path)  # the shipped probe TSVs (no WordNet in an empty folder)
    wordnet = probe_data_dir() / "wordnet"
    if wordnet.is_dir():  # the WordNet examples too, where `probe --prepare` has fetched them
        from elmo_core.data.senses import read_wordnet_examples

        probes |= {" ".join(it.tokens) for it in read_wordnet_examples(wordnet, min_senses=1)}
    assert len(probes) > 700
    lowered = {s.lower() for s in shipped.sentences}
    assert not [p for p in probes if p.lower() in lowered]
    # the build records how many pool sentences it kept out as probe sentences, next to its other exclusions
    dropped = shipped.meta["dropped"]
    assert set(dropped) == {
        "probe sentence",
        "offensive term",
        "source kept out (fortunes)",
        "Brown document the POS probe tests on",
    }
    assert dropped["probe sentence"] == 0 and dropped["offensive term"] == 387


def test_no_shipped_sentence_has_an_offensive_term(shipped):
    terms = rf.read_terms()
    assert not [s for s in shipped.sentences if rf.offensive_tokens(s.split(" "), terms)]


def test_the_vocabulary_is_cased_and_by_frequency(shipped):
    assert len(shipped.vocab) == 50_000 and len(set(shipped.vocab.tolist())) == 50_000
    assert np.all(np.diff(shipped.vocab_counts) <= 0) and shipped.vocab_counts[-1] >= 1
    assert all(rf.is_word(w) for w in shipped.vocab.tolist())
    assert {"The", "the", "Bank", "bank"} <= set(shipped.vocabulary(5000))


def test_the_vocabulary_for_layer0_neighbours_leaves_out_offensive_terms(shipped):
    terms = rf.read_terms()
    listed = [w for w in shipped.vocab.tolist() if rf.offensive_tokens([w], terms)]
    assert "bitch" in listed  # the training split has them: the filter has work to do
    words = shipped.vocabulary()
    assert not set(listed) & set(words)
    assert len(words) == 50_000 - len(listed)
    assert len(shipped.vocabulary(1000)) == 1000 and shipped.vocabulary(1000) == words[:1000]
    words.clear()  # the list is the caller's: the corpus keeps its own (made once, asked for on every run)
    assert len(shipped.vocabulary()) == 50_000 - len(listed)


def test_the_files_are_small(shipped):
    sizes = {f: (rf.REFERENCE_DIR / f).stat().st_size for f in (rf.SENTENCES_FILE, rf.INDEX_FILE)}
    assert sum(sizes.values()) < 8 * 2**20, sizes


# ---- the offensive filter ---------------------------------------------------------------------------------------
def test_the_filter_matches_whole_tokens_any_case_and_hyphen_parts():
    terms = rf.read_terms()
    assert rf.offensive_tokens("The NEGRO spiritual".split(), terms) == ["NEGRO"]
    assert rf.offensive_tokens("a Half-Breed scout".split(), terms) == ["Half-Breed"]
    assert rf.offensive_tokens("a so-called coon-hunt".split(), terms) == ["coon-hunt"]
    # ordinary words that a broad profanity list would drop, and words that merely contain a term
    clean = "They kill the savage hell-hound ; the ass and the cock ; do not niggle ; a queer Japanese coconut"
    assert rf.offensive_tokens(clean.split(), terms) == []


def test_read_terms(tmp_path):
    p = tmp_path / "terms.txt"
    p.write_text("# a comment\nFoo  # trailing\n\nbar-baz\n", encoding="utf-8")
    assert rf.read_terms(p) == {"foo", "bar-baz"}
    p.write_text("two words\n", encoding="utf-8")
    with pytest.raises(ValueError, match="single tokens"):
        rf.read_terms(p)


# ---- selection, files, lookup -------------------------------------------------------------------------------------
def test_selection_meets_the_needs_and_prefers_the_first_tier():
    modern = [f"m{i} apple" for i in range(30)] + [f"m{i} pear" for i in range(3)]
    older = [f"o{i} pear" for i in range(10)] + [f"o{i} plum" for i in range(10)]
    cands, tiers = modern + older, [0] * len(modern) + [1] * len(older)
    picked = rf.select_sentences(cands, tiers, {"pear": 5, "plum": 2}, size=10, seed=3)
    words = collections.Counter(w for i in picked for w in cands[i].split()[1:])
    assert words["pear"] == 5 and words["plum"] == 2  # exactly what is needed: the first pass stops there
    assert sum(cands[i].startswith("m") for i in picked if "pear" in cands[i]) == 3  # all 3 modern pears first
    assert len(picked) == 10 and len(set(picked)) == 10
    assert sum(tiers[i] == 1 for i in picked) == 2 + 2  # the older text only where modern lacks the word
    assert picked == rf.select_sentences(cands, tiers, {"pear": 5, "plum": 2}, size=10, seed=3)
    assert picked != rf.select_sentences(cands, tiers, {"pear": 5, "plum": 2}, size=10, seed=4)


def _small_corpus(tmp_path):
    sentences = ["The bank of the river .", "She banks at the Bank .", "Nothing here , 1961 .", "A bank 's rate ."]
    rf.write_reference(tmp_path, sentences, [("the", 3), ("bank", 2)], {"note": "test"})
    return sentences


def test_write_and_load_round_trip(tmp_path):
    sentences = _small_corpus(tmp_path)
    corpus = rf.ReferenceCorpus.load(tmp_path)
    assert corpus.sentences == sentences and corpus.meta == {"note": "test"}
    assert corpus.count("BANK") == 3 and corpus.count("banks") == 1 and corpus.count("1961") == 0
    assert corpus.tokens(3) == ("A", "bank", "'s", "rate", ".")  # split, not tokenized again
    assert corpus.vocabulary() == ["the", "bank"]
    with np.load(tmp_path / rf.INDEX_FILE, allow_pickle=False) as z:  # no pickled object in the file
        assert z["postings"].dtype == np.int32 and z["words"].dtype.kind == "U"


def test_contexts_spread_evenly_and_count_all(tmp_path):
    _small_corpus(tmp_path)
    corpus = rf.ReferenceCorpus.load(tmp_path)
    found, total = corpus.contexts({"bank"}, limit=10)
    assert total == 3 and [corpus.sentences.index(" ".join(s)) for s in found] == [0, 1, 3]
    found, total = corpus.contexts({"bank", "banks"}, limit=2)
    assert total == 3 and [corpus.sentences.index(" ".join(s)) for s in found] == [0, 3]
    assert corpus.contexts({"nothing", "here"}, limit=5)[1] == 1
    assert corpus.contexts({"absent"}, limit=5) == ([], 0)


def test_a_damaged_corpus_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError):
        rf.ReferenceCorpus.load(tmp_path)
    _small_corpus(tmp_path)
    with lzma.open(tmp_path / rf.SENTENCES_FILE, "wt", encoding="utf-8") as f:
        f.write("only one sentence\n")  # the index points past it
    with pytest.raises(ValueError, match="does not fit"):
        rf.ReferenceCorpus.load(tmp_path)
    (tmp_path / rf.SENTENCES_FILE).write_bytes(b"not xz at all")
    with pytest.raises(ValueError, match="not a readable reference corpus"):
        rf.ReferenceCorpus.load(tmp_path)
    with pytest.raises(ValueError, match="empty"):
        rf.write_reference(tmp_path / "x", ["a b", "  "], [], {})
