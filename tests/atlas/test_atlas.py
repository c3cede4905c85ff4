"""elmo_core.atlas: an atlas of a few hundred reference sentences (the bundled default model) holds every
occurrence of its words with the vectors ``embed`` gives, and its nearest contexts agree with exact search."""

from __future__ import annotations

import lzma
import shutil

import numpy as np
import pytest

from elmo_core import Atlas, Embedder, build_atlas
from elmo_core.atlas.store import OCCURRENCES, VECTORS
from elmo_core.atlas.words import read_corpus, read_stop_words
from elmo_core.model.shards import Ranks, parts_folder
from elmo_core.paths import REFERENCE_CORPUS


def small_corpus(bank: int = 60, other: int = 240) -> list[str]:
    """``bank`` reference sentences with the word "bank" (any case) and ``other`` sentences without."""
    with lzma.open(REFERENCE_CORPUS / "sentences.txt.xz", "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    has = [line for line in lines if "bank" in line.casefold().split()]
    rest = [line for line in lines[:2000] if "bank" not in line.casefold().split()]
    return [line for pair in zip(has[:bank], rest[:bank]) for line in pair] + rest[bank:other]


@pytest.fixture(scope="module")
def embedder():
    return Embedder.bundled("default", device="cpu")


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("atlas")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(small_corpus()) + "\n", encoding="utf-8")
    manifest = build_atlas(corpus, folder / "atlas", embedder, "default", batch_size=16, max_tokens=400)
    return corpus, folder / "atlas", manifest


def test_occurrences_of_bank_are_every_bank_token_with_embeds_vectors(built, embedder):
    corpus, folder, manifest = built
    sentences = read_corpus(corpus)
    expected = [(i, p) for i, tokens in enumerate(sentences) for p, t in enumerate(tokens) if t.casefold() == "bank"]
    atlas = Atlas.open(folder)
    vectors, ids, positions = atlas.occurrences("bank")
    assert len(expected) >= 60 and list(zip(ids.tolist(), positions.tolist())) == expected
    assert vectors.dtype == np.float32 and vectors.shape == (len(expected), 3, 256)
    assert atlas.occurrences("Bank")[1].tolist() == ids.tolist() and atlas.count("bank") == len(expected)
    for row in (0, 7, len(expected) - 1):
        tokens = atlas.sentence(int(ids[row]))
        assert tokens == sentences[ids[row]] and tokens[positions[row]].casefold() == "bank"
        layers = embedder.embed_sentence(tokens)[:, positions[row]]  # (3, 256), one sentence alone
        np.testing.assert_allclose(vectors[row], layers.astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-3)
    assert manifest["counts"]["occurrences"] == atlas.num_occurrences and manifest["model"]["dim"] == 256


def test_words_are_frequent_and_no_stop_words(built):
    corpus, folder, manifest = built
    atlas = Atlas.open(folder)
    words = atlas.words()
    assert words == sorted(words) and "bank" in words
    assert not set(words) & read_stop_words() and "the" not in words
    counts = {}
    for tokens in read_corpus(corpus):
        for t in tokens:
            counts[t.casefold()] = counts.get(t.casefold(), 0) + 1
    assert all(counts[w] >= manifest["min_count"] for w in words)
    assert all(atlas.count(w) == counts[w] for w in words)  # every occurrence kept
    occ = np.load(folder / OCCURRENCES)
    assert np.array_equal(occ, occ[np.lexsort((occ[:, 2], occ[:, 1], occ[:, 0]))])  # word, sentence, position


def test_nearest_finds_the_query_itself_and_the_index_agrees_with_exact_search(built):
    atlas = Atlas.open(built[1])
    vectors, ids, positions = atlas.occurrences("bank")
    for mix in (None, [0.0, 0.0, 1.0], [0.2, 0.5, 0.3]):
        exact = atlas.nearest(vectors[3], 10, mix, exact=True)
        assert exact.words[0] == "bank" and (exact.sentences[0], exact.positions[0]) == (ids[3], positions[3])
        assert exact.cosines[0] == pytest.approx(1.0, abs=1e-5) and np.all(np.diff(exact.cosines) <= 0)
    rng = np.random.default_rng(0)
    recall = []
    for row in rng.choice(atlas.num_occurrences, 40, replace=False):
        q = np.asarray(np.load(built[1] / VECTORS, mmap_mode="r")[row], dtype=np.float32)
        got, want = atlas.nearest(q, 10), atlas.nearest(q, 10, exact=True)
        recall.append(len(set(got.rows.tolist()) & set(want.rows.tolist())) / 10)
        same = np.isin(got.rows, want.rows)
        np.testing.assert_allclose(got.cosines[same], want.cosines[np.isin(want.rows, got.rows)], atol=1e-6)
    assert np.mean(recall) >= 0.95


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be"),
        ({"k": True}, "k must be"),
        ({"weights": [1, -1, 0]}, "weights must be"),
        ({"weights": [0, 0, 0]}, "weights must be"),
        ({"weights": [1, 1]}, "weights must be"),
        ({"query_vector": np.zeros((2, 256))}, "query_vector must be"),
        ({"query_vector": np.full((3, 256), np.nan)}, "query_vector holds NaN"),
        ({"query_vector": np.zeros((3, 256))}, "all zeros"),
        ({"query_vector": np.zeros(256)}, "all zeros"),
        ({"query_vector": np.ones((3, 256)) * (1 + 1j)}, "real numbers"),
        ({"weights": [1e308, 1e308, 1e308]}, "weights must be"),
        ({"weights": [1 + 1j, 1, 1]}, "weights must be"),
        ({"candidates": 3}, "candidates must be"),
    ],
)
def test_bad_queries_are_value_errors(built, kwargs, message):
    atlas = Atlas.open(built[1])
    args = {"query_vector": atlas.occurrences("bank")[0][0], "k": 5} | kwargs
    with pytest.raises(ValueError, match=message):
        atlas.nearest(**args)


def test_a_missing_word_and_a_bad_sentence_id_are_value_errors(built):
    atlas = Atlas.open(built[1])
    with pytest.raises(ValueError, match="'the' is not in this atlas"):
        atlas.occurrences("the")
    with pytest.raises(ValueError, match="sentence ids"):
        atlas.sentence(atlas.num_sentences)


def test_a_corpus_that_keeps_no_word_is_one_error_before_any_work(embedder, tmp_path):
    from elmo_core.cli import main

    for name, text in (("empty.txt", ""), ("punct.txt", "1 , 2 .\n3 ; 4 !\n" * 20)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match="no word of .* occurs at least 5 times"):
            build_atlas(tmp_path / name, tmp_path / "out", embedder, "default")
        assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".elmo-parts*"))
    assert main(["atlas", "build", str(tmp_path / "empty.txt"), "--out", str(tmp_path / "out")]) == 2


def test_missing_damaged_or_foreign_atlases_are_refused(built, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Atlas.open(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError, match="not an atlas"):
        Atlas.open(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(built[1], copy)
    manifest = (copy / "manifest.json").read_text()
    (copy / "manifest.json").write_text(manifest.replace("elmo-explorer-atlas/1", "elmo-explorer-atlas/9"))
    with pytest.raises(ValueError, match="format 'elmo-explorer-atlas/9'"):
        Atlas.open(copy)
    (copy / "manifest.json").write_text(manifest)
    vectors = (copy / VECTORS).read_bytes()
    (copy / VECTORS).write_bytes(vectors[:1000])
    with pytest.raises(ValueError, match="damaged"):
        Atlas.open(copy)
    (copy / VECTORS).unlink()
    (copy / VECTORS).symlink_to(built[1] / VECTORS)
    with pytest.raises(ValueError, match="link"):
        Atlas.open(copy)
    (copy / VECTORS).unlink()
    (copy / VECTORS).write_bytes(vectors)
    (copy / "ann.faiss").write_bytes(b"not an index")
    atlas = Atlas.open(copy)
    with pytest.raises(ValueError, match="cannot be read"):
        atlas.nearest(atlas.occurrences("bank")[0][0], 5)
    assert atlas.nearest(atlas.occurrences("bank")[0][0], 5, exact=True).words[0] == "bank"


def test_an_atlas_cut_short_while_open_is_a_value_error_not_a_crash(built, tmp_path):
    """A file of an open atlas truncated in place (a disk that filled up, a careless copy) would make the next read
    of its memory map kill the process (SIGBUS); every read checks the files' sizes first."""
    copy = tmp_path / "open"
    shutil.copytree(built[1], copy)
    atlas = Atlas.open(copy)
    vectors, sentences, _ = atlas.occurrences("bank")
    assert atlas.sentence(int(sentences[0]))
    with open(copy / VECTORS, "r+b") as f:
        f.truncate(1000)
    for read in (lambda: atlas.occurrences("bank"), lambda: atlas.nearest(vectors[0], 3, exact=True)):
        with pytest.raises(ValueError, match="changed on disk since it was opened .*vectors.npy changed size"):
            read()
    (copy / VECTORS).write_bytes((built[1] / VECTORS).read_bytes())
    assert atlas.count("bank") == len(vectors) and len(atlas.occurrences("bank")[0]) == len(vectors)
    (copy / "sentences.txt").unlink()
    with pytest.raises(ValueError, match="sentences.txt is gone"):
        atlas.sentence(int(sentences[0]))


@pytest.mark.slow
def test_two_ranks_in_one_process_resume_after_a_crash_and_equal_one_process(built, embedder, tmp_path):
    """Rank 1 'crashes' with a half-written record and is run again; rank 0 then merges: the same bytes as the
    one-process atlas (the vectors and the occurrence index)."""
    corpus, one, _ = built
    out = tmp_path / "two"
    args = (corpus, out, embedder, "default")
    kw = {"batch_size": 16, "max_tokens": 400}
    assert build_atlas(*args, ranks=Ranks(1, 2, 1), **kw) is None
    folder = next(tmp_path.glob(".elmo-parts-*"))
    lines = (folder / "rank-1.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "rank-1.jsonl").write_bytes(b"".join(lines[:-2]) + lines[-2][:9])
    with open(folder / "rank-1.f16", "ab") as f:
        f.write(b"\x01" * 77)
    said = []
    build_atlas(*args, ranks=Ranks(1, 2, 1), progress=said.append, **kw)
    assert said[0].startswith("rank 1: ") and said[0].endswith(" already done") and ", 0 already" not in said[0]
    assert build_atlas(*args, ranks=Ranks(0, 2, 0), **kw) is not None
    for name in (VECTORS, OCCURRENCES, "word_offsets.npy", "words.npy", "sentences.txt", "sentence_offsets.npy"):
        assert (out / name).read_bytes() == (one / name).read_bytes(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two"] and not parts_folder(out, {}).exists()
