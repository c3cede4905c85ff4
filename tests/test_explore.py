"""app/explore.py, the explorer's logic without Streamlit.

Expected values are worked out by hand in the comments, or follow from the definitions (softmax, cosine,
Procrustes) on small arrays built for the purpose.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

from app import explore as ex  # noqa: E402
from app.examples import EXAMPLE_SETS  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"


def split(text: str) -> list[str]:
    return text.split()


# ---- input parsing ------------------------------------------------------------------------------------------
def test_parse_labels_and_tokens():
    parsed = ex.parse_input("[river] We sat on the bank .\n\n  plain line here \n[ money ]I went to the bank",
                            tokenizer=split)
    assert [ln.label for ln in parsed.lines] == ["river", None, "money"]
    assert parsed.lines[0].tokens == ("We", "sat", "on", "the", "bank", ".")
    assert parsed.lines[0].text == "We sat on the bank ."
    assert parsed.lines[2].tokens == ("I", "went", "to", "the", "bank")
    assert parsed.notes == []


def test_parse_label_edge_cases():
    assert ex.parse_label("[] no label") == (None, "no label")
    assert ex.parse_label("[a b]  x") == ("a b", "x")
    assert ex.parse_label("not [a] label") == (None, "not [a] label")
    parsed = ex.parse_input("[lonely]\n[x] ok", tokenizer=split)
    assert len(parsed.lines) == 1 and "label but no sentence" in parsed.notes[0]


def test_a_label_longer_than_the_limit_is_read_as_sentence_with_a_note():
    limit = "x" * ex.MAX_LABEL_CHARS
    assert ex.MAX_LABEL_CHARS == 40 and ex.parse_label(f"[{limit}] the bank") == (limit, "the bank")
    long = "financial institution where money is kept"  # 42 characters
    text = f"[river] the bank\n\n[{long}] my bank\n[{limit}] a bank"
    parsed = ex.parse_input(text, tokenizer=split)
    assert [(ln.label, ln.text) for ln in parsed.lines] == [
        ("river", "the bank"), (None, f"[{long}] my bank"), (limit, "a bank")]
    # the line number counts the empty line, as the text box shows it
    assert parsed.notes == [f"Line 3: '[{long}]' is longer than 40 characters, so it was read as part of the "
                            "sentence, not as a label. Shorten it to 40 characters or fewer to use it as a label."]
    many = ex.parse_input("\n".join(f"[{'ab ' * 20}] bank {i}" for i in range(7)), tokenizer=split)
    first = "[" + ("ab " * 20)[:45] + "…]"  # the first one, cut
    assert many.notes == [f"Lines 1, 2, 3, 4, 5 and 2 more: their bracketed text (e.g. '{first}') is longer than "
                          "40 characters, so it was read as part of the sentence, not as a label. Shorten it to 40 "
                          "characters or fewer to use it as a label."]
    assert "at most 40 characters" in ex.LABEL_HELP  # the text box's help states the limit


def test_parse_caps_lines_tokens_and_long_tokens():
    text = "\n".join(f"line {i}" for i in range(1200))
    parsed = ex.parse_input(text, tokenizer=split, max_lines=500)
    assert len(parsed.lines) == 500
    assert parsed.lines[-1].tokens == ("line", "499")
    assert "first 500 of 1200" in parsed.notes[0]

    long = ex.parse_input(" ".join(["w"] * 150), tokenizer=split)
    assert len(long.lines[0].tokens) == ex.MAX_TOKENS_PER_LINE
    assert any("longer than 100 tokens" in n for n in long.notes)

    sixty = ex.parse_input("a " + "x" * 60 + " b", tokenizer=split)
    assert sixty.lines[0].tokens[1] == "x" * 60  # kept; the char-CNN truncates it itself
    assert any("48 UTF-8 bytes" in n for n in sixty.notes)
    # 13 emoji = 52 bytes: also over the byte limit although only 13 characters
    assert any("48 UTF-8 bytes" in n for n in ex.parse_input("😀" * 13, tokenizer=split).notes)


def test_parse_with_moses_tokenizer_non_latin_and_emoji():
    parsed = ex.parse_input("[x] Don't go to the bank 😀.\nПривет, мир.\n日本語です")
    assert parsed.lines[0].tokens == ("Don", "'t", "go", "to", "the", "bank", "😀", ".")
    assert parsed.lines[1].tokens == ("Привет", ",", "мир", ".")
    assert "".join(parsed.lines[2].tokens) == "日本語です"  # Moses splits CJK into characters


def test_decode_upload():
    assert ex.decode_upload("[a] x\n".encode("utf-8-sig")) == "[a] x\n"
    with pytest.raises(ValueError, match="binary"):
        ex.decode_upload(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(ValueError, match="not UTF-8 text \\(byte 4 of the file, value 0xe9"):
        ex.decode_upload(b"caf\xe9")  # 1-based: c a f é
    text = "[a] café bank\n[b] river bank\n"
    assert ex.decode_upload(text.encode("utf-16")) == text  # BOM + UTF-16 (little-endian here)
    assert ex.decode_upload(b"\xfe\xff" + text.encode("utf-16-be")) == text


# ---- words and occurrences ---------------------------------------------------------------------------------------
LINES = [ex.Line("", "a", ("The", "Bank", "is", "open", ".")),
         ex.Line("", "b", ("banks", "and", "the", "bank", "banked", "banking")),
         ex.Line("", None, ("The", "river", "."))]


def test_word_counts_and_suggestion():
    counts = dict(ex.word_counts(LINES))
    assert counts["the"] == 3 and counts["bank"] == 2 and "." not in counts
    assert ex.word_counts(LINES)[0] == ("the", 3)
    assert ex.suggest_word(LINES) == "bank"  # "the" is a stopword


def test_find_occurrences_case_insensitive_and_inflections():
    occ = ex.find_occurrences(LINES, "BANK")
    assert [(o.line, o.position, o.token, o.label) for o in occ] == [(0, 1, "Bank", "a"), (1, 3, "bank", "b")]
    occ = ex.find_occurrences(LINES, "bank", inflections=True)
    assert [o.token for o in occ] == ["Bank", "banks", "bank", "banked", "banking"]
    assert ex.find_occurrences(LINES, "absent") == []


def test_highlight_parts():
    toks = ("a", "b", "c", "d", "e")
    assert ex.highlight_parts(toks, 2) == ("a b", "c", "d e")
    assert ex.highlight_parts(toks, 2, window=1) == ("… b", "c", "d …")


# ---- mixing --------------------------------------------------------------------------------------------------
def test_softmax_and_scalar_mix_values():
    s = ex.softmax([0.0, 0.0, np.log(2.0)])
    np.testing.assert_allclose(s, [0.25, 0.25, 0.5])
    layers = np.stack([np.full((2, 3), 1.0), np.full((2, 3), 2.0), np.full((2, 3), 4.0)]).astype(np.float32)
    # gamma * (0.25*1 + 0.25*2 + 0.5*4) = 2 * 2.75
    np.testing.assert_allclose(ex.scalar_mix(layers, [0, 0, np.log(2.0)], 2.0), np.full((2, 3), 5.5), rtol=1e-6)
    np.testing.assert_allclose(ex.scalar_mix(layers, [0, 0, 0], 1.0), np.full((2, 3), 7 / 3), rtol=1e-6)
    with pytest.raises(ValueError):
        ex.scalar_mix(layers, [0, 0], 1.0)


def test_scalar_mix_matches_elmo_core():
    torch = pytest.importorskip("torch")
    from elmo_core import ScalarMix
    rng = np.random.default_rng(0)
    layers = rng.normal(size=(3, 7, 5)).astype(np.float32)
    w = [0.3, -1.2, 0.8]
    ref = ScalarMix(3, initial_w=w, initial_gamma=1.7, trainable=False)(torch.from_numpy(layers)).numpy()
    np.testing.assert_allclose(ex.scalar_mix(layers, w, 1.7), ref, rtol=1e-5, atol=1e-6)


def test_sentence_layer_norm_matches_elmo_core_per_sentence():
    torch = pytest.importorskip("torch")
    from elmo_core.mix import whole_tensor_norm
    rng = np.random.default_rng(1)
    acts = (rng.normal(size=(3, 9, 4)) * 3 + 1).astype(np.float32)
    offsets = np.array([0, 4, 9])
    out = ex.sentence_layer_norm(acts, offsets)
    for a, b in [(0, 4), (4, 9)]:
        for j in range(3):
            block = torch.from_numpy(acts[j, a:b][None])
            ref = whole_tensor_norm(block, torch.ones(1, b - a, dtype=torch.bool))[0].numpy()
            np.testing.assert_allclose(out[j, a:b], ref, rtol=1e-5, atol=1e-5)
        assert abs(out[:, a:b].mean(axis=(1, 2))).max() < 1e-5


def test_token_table_rows_and_mix():
    lines = [ex.Line("", None, ("a", "b")), ex.Line("", None, ("c", "d", "e"))]
    acts = [np.arange(2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2),
            np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2) + 100]
    table = ex.TokenTable(lines, acts)
    assert table.acts.shape == (2, 5, 2) and table.num_layers == 2
    assert table.row(1, 2) == 4 and table.token(4) == "e" and table.token(1) == "b"
    np.testing.assert_array_equal(table.acts[:, 4], acts[1][:, 2])
    mixed = table.mix([0.0, 0.0], 1.0)
    np.testing.assert_allclose(mixed[0], (acts[0][0, 0] + acts[0][1, 0]) / 2)
    with pytest.raises(ValueError):
        ex.TokenTable(lines, acts[:1])
    ref = ex.TokenTable.of_tokenized([("a", "b"), ("c", "d", "e")], acts)
    assert [(ln.text, ln.label, ln.tokens) for ln in ref.lines] == [("a b", None, ("a", "b")),
                                                                     ("c d e", None, ("c", "d", "e"))]
    np.testing.assert_array_equal(ref.acts, table.acts)


def test_presets():
    assert ex.preset_weights("equal", 3) == (0.0, 0.0, 0.0)
    s_top = ex.softmax(ex.preset_weights("top", 3))
    s_bottom = ex.softmax(ex.preset_weights("bottom", 3))
    assert s_top[2] > 0.9999 and s_bottom[0] > 0.9999
    assert ex.fit_weights((1.0,), 3) == (1.0, 0.0, 0.0) and ex.fit_weights((1, 2, 3, 4), 3) == (1, 2, 3)


# ---- activation cache --------------------------------------------------------------------------------------
def test_activation_cache_only_embeds_new_sentences_and_is_bounded():
    calls = []

    def embed_batch(sentences):
        calls.append([tuple(s) for s in sentences])
        return [np.full((3, len(s), 4), len(s), np.float32) for s in sentences]

    cache = ex.ActivationCache(max_bytes=3 * 3 * 4 * 4 * 10)  # room for 10 tokens of (3, ., 4) float32
    out, computed = cache.get_many("m", embed_batch, [("a", "b"), ("c",)])
    assert computed == 2 and out[0].shape == (3, 2, 4) and not out[0].flags.writeable
    out, computed = cache.get_many("m", embed_batch, [("c",), ("a", "b"), ("d",)])
    assert computed == 1 and calls[-1] == [("d",)]
    assert out[1][0, 0, 0] == 2.0
    _, computed = cache.get_many("other-model", embed_batch, [("c",)])
    assert computed == 1  # keyed by model id too
    cache.get_many("m", embed_batch, [tuple("xyzuvw")])  # 6 tokens: evicts the oldest entries
    assert cache.nbytes <= cache.max_bytes


def test_activation_cache_reports_progress_on_the_new_sentences_only():
    def embed_batch(sentences):
        return [np.zeros((3, len(s), 4), np.float32) for s in sentences]

    cache = ex.ActivationCache()
    cache.get_many("m", embed_batch, [("a",), ("b",)])
    seen: list = []
    new = [(w,) for w in "cdefg"]
    _, computed = cache.get_many("m", embed_batch, [("a",), ("b",), *new], chunk_size=2,
                                 progress=lambda f, text: seen.append((round(f, 3), text)))
    assert computed == 5 and seen == [(0.4, "running the biLM: 2/5 sentences"), (0.8, "running the biLM: 4/5 sentences"),
                                      (1.0, "running the biLM: 5/5 sentences")]
    seen.clear()
    cache.get_many("m", embed_batch, [("x",), ("y",)], progress=lambda f, text: seen.append(f), progress_from=3)
    assert seen == []  # two new sentences: below progress_from, no bar
    cache.get_many("m", embed_batch, [("u",), ("v",), ("w",)], progress=lambda f, text: seen.append(f), progress_from=3)
    assert seen == [1.0]


def test_activation_cache_with_fixture_model():
    from elmo_core import Embedder
    e = Embedder.from_elmo_files(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5", device="cpu")
    cache = ex.ActivationCache()
    sents = [("The", "bank", "."), ("Play", "ball", "!")]
    out, computed = cache.get_many("fixture", e.embed_batch, sents)
    assert computed == 2 and out[0].shape == (3, 3, 32)
    np.testing.assert_allclose(out[1], e.embed_sentence(list(sents[1])), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[0][0, :, :16], out[0][0, :, 16:])  # layer 0 is duplicated to 2P


# ---- projection --------------------------------------------------------------------------------------------
def test_nearly_identical_detects_layer0_like_vectors():
    rng = np.random.default_rng(0)
    base = rng.normal(size=64)
    noise = rng.normal(size=(5, 64))
    # the "layer 0 only" mix: one vector plus 4.5e-5 of other layers (cosine distance ~1e-9)
    assert ex.nearly_identical(base + 4.5e-5 * noise)
    assert ex.nearly_identical(np.stack([base, 3 * base]))  # length does not matter, direction does
    assert not ex.nearly_identical(base + 0.05 * noise)  # real differences: cosine distance ~1e-3
    assert not ex.nearly_identical(np.stack([base, -base]))
    assert not ex.nearly_identical(base[None])  # one point: nothing to compare
    assert not ex.nearly_identical(np.stack([base, np.zeros(64)]))
    # the mixed vectors of a real model: layer 0 is the same for every occurrence of a spelling
    layers = np.stack([np.tile(base, (4, 1)), rng.normal(size=(4, 64)), rng.normal(size=(4, 64))])
    assert ex.nearly_identical(ex.scalar_mix(layers, ex.preset_weights("bottom", 3), 1.0))
    assert not ex.nearly_identical(ex.scalar_mix(layers, ex.preset_weights("equal", 3), 1.0))


def test_pca_2d_recovers_a_plane():
    rng = np.random.default_rng(0)
    plane = rng.normal(size=(30, 2)) * [5.0, 1.0]
    basis = np.linalg.qr(rng.normal(size=(10, 2)))[0].T  # (2, 10) orthonormal rows
    coords = ex.pca_2d(plane @ basis)
    aligned = ex.procrustes_align(coords, plane - plane.mean(0))
    np.testing.assert_allclose(aligned, plane - plane.mean(0), atol=1e-8)


def test_procrustes_undoes_rotation_reflection_scale_shift():
    rng = np.random.default_rng(2)
    ref = rng.normal(size=(12, 2))
    theta = 0.7
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]) @ np.diag([1, -1])
    moved = 3.0 * ref @ rot + [5.0, -2.0]
    np.testing.assert_allclose(ex.procrustes_align(moved, ref), ref, atol=1e-10)


def test_project_small_inputs_and_fallbacks():
    rng = np.random.default_rng(0)
    assert ex.project(rng.normal(size=(2, 8))).coords is None
    assert "at least 3" in ex.project(rng.normal(size=(1, 8))).note
    p = ex.project(rng.normal(size=(10, 8)), "auto")
    assert p.method == "pca" and p.coords.shape == (10, 2) and "too few" in p.note
    same = ex.project(np.ones((5, 8)), "auto")
    assert same.coords.shape == (5, 2) and np.all(same.coords == 0)
    with pytest.raises(ValueError):
        ex.project(rng.normal(size=(5, 3)), "mds")


def test_project_pca_is_stable_under_small_changes():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12, 16))
    first = ex.project(x, "pca").coords
    second = ex.project(x + rng.normal(size=x.shape) * 1e-3, "pca", previous=first).coords
    assert np.abs(second - first).max() < 0.01  # aligned: no sign flips or rotation


def test_project_tsne_warm_start():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(size=(10, 8)) + 5, rng.normal(size=(10, 8)) - 5])
    first = ex.project(x, "tsne")
    assert first.method == "tsne" and first.coords.shape == (20, 2)
    again = ex.project(x, "tsne", previous=first.coords)
    assert again.coords.shape == (20, 2)


def test_tsne_is_bounded_and_starts_from_pca(monkeypatch):
    from sklearn import manifold
    rng = np.random.default_rng(5)
    x = ex.l2_normalise(np.concatenate([rng.normal(size=(15, 8)) + 3, rng.normal(size=(15, 8)) - 3]))
    made = []
    real = manifold.TSNE

    def spy(**kw):
        made.append(kw)
        return real(**kw)

    monkeypatch.setattr(manifold, "TSNE", spy)
    coords, iterations = ex.tsne_fit(x, 0)
    assert made[-1]["init"] == "pca" and made[-1]["max_iter"] == ex.TSNE_MAX_ITER < 1000
    assert iterations <= ex.TSNE_MAX_ITER and coords.shape == (30, 2)
    # the two groups stay apart after the capped run: every point is nearer its own group's centre
    centres = np.stack([coords[:15].mean(0), coords[15:].mean(0)])
    nearest = np.argmin(((coords[:, None] - centres[None]) ** 2).sum(-1), axis=1)
    assert nearest.tolist() == [0] * 15 + [1] * 15
    _, warm_iterations = ex.tsne_fit(x, 0, coords)
    assert made[-1]["max_iter"] == ex.TSNE_WARM_ITER and made[-1]["early_exaggeration"] == 1.0
    assert warm_iterations <= ex.TSNE_WARM_ITER
    np.testing.assert_array_equal(made[-1]["init"], coords.astype(np.float32))


def test_umap_projection_separates_clusters_and_stays_put():
    pytest.importorskip("umap")
    warm = ex.UmapWarmUp().run_now()
    assert warm.state == "ready", warm.error
    rng = np.random.default_rng(5)
    centers = np.zeros((2, 16))
    centers[0, 0], centers[1, 1] = 1.0, 1.0
    x = np.concatenate([centers[0] + rng.normal(size=(15, 16)) * 0.05, centers[1] + rng.normal(size=(15, 16)) * 0.05])
    first = ex.project(x, "auto")
    assert first.method == "umap"
    a, b = first.coords[:15], first.coords[15:]
    gap = np.linalg.norm(a.mean(0) - b.mean(0))
    assert gap > 3 * max(a.std(0).max(), b.std(0).max())
    second = ex.project(x + rng.normal(size=x.shape) * 1e-3, "umap", previous=first.coords)
    scale = np.ptp(first.coords, axis=0).max()
    assert np.median(np.linalg.norm(second.coords - first.coords, axis=1)) < 0.2 * scale


# ---- neighbours, similarity, separation ------------------------------------------------------------------------
def test_cosine_neighbours_order_exclude_and_ties():
    cand = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [-1.0, 0.0]])
    found = ex.cosine_neighbours(np.array([1.0, 0.0]), cand, k=3)
    assert [n.index for n in found] == [0, 3, 2]  # tie 0/3 (cos 1) kept in row order
    np.testing.assert_allclose([n.similarity for n in found], [1.0, 1.0, np.sqrt(0.5)])
    assert [n.index for n in ex.cosine_neighbours(np.array([1.0, 0.0]), cand, 2, exclude=[0])] == [3, 2]
    assert ex.cosine_neighbours(np.array([1.0, 0.0]), cand[:0], 3) == []


def test_cosine_matrix_and_unique_types():
    m = ex.cosine_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    np.testing.assert_allclose(m, [[1, 0, np.sqrt(.5)], [0, 1, np.sqrt(.5)], [np.sqrt(.5), np.sqrt(.5), 1]])
    words, vecs = ex.unique_types(["a", ".", "b", "a"], np.arange(8.0).reshape(4, 2))
    assert words == ["a", "b"]
    np.testing.assert_array_equal(vecs, [[0, 1], [4, 5]])


def test_knn_accuracy_and_silhouette_with_labels():
    x = np.array([[1, 0.1], [1, 0.2], [1, 0.0], [0.1, 1], [0.2, 1], [0.0, 1]])
    labels = ["a", "a", "a", "b", "b", "b"]
    sep = ex.separation(x, labels)
    assert sep.knn_accuracy == 1.0
    assert sep.chance == pytest.approx(2 * 3 * 2 / (6 * 5))  # 0.4
    assert sep.silhouette > 0.8
    # identical vectors (layer 0 of one spelling): ties split evenly -> (3-1)/5 = 0.4 for every point
    same = ex.separation(np.ones((6, 2)), labels)
    assert same.knn_accuracy == pytest.approx(0.4)
    mixed_up = ex.separation(x, ["a", "b", "a", "b", "a", "b"])
    assert mixed_up.knn_accuracy < 0.5


def test_separation_without_labels_and_too_few():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(size=(8, 4)) * 0.05 + [1, 0, 0, 0], rng.normal(size=(8, 4)) * 0.05 + [0, 1, 0, 0]])
    sep = ex.separation(x, [None] * 16)
    assert sep.knn_accuracy is None and sep.silhouette > 0.8 and "2 groups" in sep.note
    assert ex.separation(x[:3], [None] * 3).silhouette is None
    partial = ex.separation(x, ["a"] * 4 + [None] * 8 + ["b"] * 4)
    assert partial.knn_accuracy == 1.0 and "8 unlabelled" in partial.note


# ---- export and the URL view -------------------------------------------------------------------------------------
def test_picker_puts_the_exact_word_before_longer_words_then_frequency():
    counts = [("then", 30), ("the", 449), ("there", 5), ("bank", 12), ("battle", 50), ("bat", 3), ("them", 5)]
    counts.sort(key=lambda kv: (-kv[1], kv[0]))  # as word_counts gives them
    order = ex.picker_order(counts)
    assert sorted(order) == sorted(w for w, _ in counts)  # every word once
    # what a prefix filter shows when one types "the" or "bat": the word itself, then the others by frequency
    assert [w for w in order if w.startswith("the")] == ["the", "then", "them", "there"]
    assert [w for w in order if w.startswith("bat")] == ["bat", "battle"]
    assert order[0] == "the"  # no typing: the most frequent word first
    lines = ex.parse_input("Then the dog saw the cat .\nThe end , then .").lines
    assert ex.picker_order(ex.word_counts(lines))[:2] == ["the", "then"]


def test_case_grouping_decides_which_tokens_are_the_word():
    lines = ex.parse_input("Spring came early .\nIn spring the river rose .\nThe spring broke .\nSPRING sale").lines
    folded = ex.find_occurrences(lines, "spring")
    assert [o.token for o in folded] == ["Spring", "spring", "spring", "SPRING"]
    exact = ex.find_occurrences(lines, "spring", fold_case=False)
    assert [(o.line, o.token) for o in exact] == [(1, "spring"), (2, "spring")]
    assert [o.token for o in ex.find_occurrences(lines, "Spring", fold_case=False)] == ["Spring"]
    assert ex.spellings(folded) == ["spring", "SPRING", "Spring"]  # most frequent first, then by code point
    assert dict(ex.word_counts(lines))["spring"] == 4
    exact_counts = dict(ex.word_counts(lines, fold_case=False))
    assert (exact_counts["spring"], exact_counts["Spring"], exact_counts["SPRING"]) == (2, 1, 1)
    assert "the" in dict(ex.word_counts(lines)) and "The" not in dict(ex.word_counts(lines))
    assert ex.suggest_word(lines, fold_case=False) == "spring"
    infl = ex.find_occurrences(ex.parse_input("Springs and springs").lines, "spring", True, fold_case=False)
    assert [o.token for o in infl] == ["springs"]


def test_pca_axes_have_a_fixed_orientation():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(9, 6))
    coords = ex.pca_2d(x)
    np.testing.assert_allclose(ex.pca_2d(-x), coords, atol=1e-12)  # the sign flip of the data is undone
    for axis in range(2):
        assert coords[np.argmax(np.abs(coords[:, axis])), axis] > 0


# ---- example sets and figures ----------------------------------------------------------------------------------


def test_layer0_type_neighbours_one_row_per_spelling_without_the_query():
    lines = [ex.Line("a bank b", None, ("a", "bank", "b")), ex.Line("bank c", None, ("bank", "c"))]
    # layer 0 is equal for equal spellings; "a" is closest to "bank", then "c", then "b"
    vec = {"a": [1.0, 0.1], "bank": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 0.5]}
    acts = [np.array([[vec[t] for t in line.tokens]] * 3, dtype=np.float32) for line in lines]
    table = ex.TokenTable(lines, acts)
    found = ex.layer0_type_neighbours(table, None, row=1, k=5)
    assert [w for w, _ in found] == ["a", "c", "b"]
    assert found[0][1] == pytest.approx(1.0 / np.sqrt(1.01))


def test_uploaded_text_is_cut_to_what_is_used():
    text = "\n".join(f"sentence {i} " + "x" * (2000 if i == 3 else 5) for i in range(5000))
    box, note = ex.text_for_box(text, "big.txt")
    assert len(box.split("\n")) == ex.MAX_LINES and len(box) <= ex.MAX_TEXT_CHARS
    assert note == "From big.txt: only the first 500 of its 5,000 lines were read."  # the cut: parse_input's note
    assert ex.parse_input(box, str.split).lines == ex.parse_input(text, str.split).lines[:3] + \
        ex.parse_input(box, str.split).lines[3:4] + ex.parse_input(text, str.split).lines[4:500]


@pytest.mark.parametrize("text", ["", "\n\n", " \t\n\u200b\n"])
def test_an_empty_upload_is_refused_rather_than_clearing_the_box(text):
    with pytest.raises(ValueError, match=r"^empty\.txt holds no text .*your sentences are unchanged$"):
        ex.text_for_box(text, "empty.txt")


def test_an_uploaded_long_line_is_reported_cut_once():
    text = "[river] the bank " + "w " * 1500 + "\nshort bank line"
    box, note = ex.text_for_box(text, "long.txt")
    shown = [n for n in [note, *ex.parse_input(box, str.split).notes] if n]  # what the page shows after an upload
    assert shown == ["1 line(s) longer than 1000 characters were cut.",
                     "1 sentence(s) longer than 100 tokens were cut."]
    assert sum("characters were cut" in n or "first 1,044 characters" in n for n in shown) == 1
    # a cut parse_input cannot see (invisible characters took the room) is the upload note's, again once
    hidden = "a " + "\u200b" * 600 + "y" * 900
    box, note = ex.text_for_box(hidden, "z.txt")
    assert note == "From z.txt: 1 line(s) were cut to their first 1,044 characters."
    assert not any("characters were cut" in n for n in ex.parse_input(box, str.split).notes)


def test_all_zero_vectors_are_left_out_of_separation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 4))
    labels = ["a", "a", "a", "b", "b", "b"]
    with_zero = np.concatenate([x, np.zeros((2, 4))])
    got = ex.separation(with_zero, labels + ["a", "b"])
    want = ex.separation(x, labels)
    assert got.silhouette == pytest.approx(want.silhouette) and got.knn_accuracy == pytest.approx(want.knn_accuracy)
    assert "2 all-zero vector(s) left out" in got.note
    assert list(ex.zero_rows(with_zero)) == [False] * 6 + [True, True]


def test_control_and_zero_width_characters_do_not_make_sentences_or_tokens():
    parsed = ex.parse_input("[river] We sat on the ba\u200bnk\x0cof the river.\u2028Then\u200b we left.\n"
                            "\ufeff[money] The bank\x85raised rates.", str.split)
    assert [ln.label for ln in parsed.lines] == ["river", "money"]
    assert parsed.lines[0].tokens == ("We", "sat", "on", "the", "bank", "of", "the", "river.", "Then", "we", "left.")
    assert parsed.lines[1].tokens == ("The", "bank", "raised", "rates.")


def test_exact_case_occurrences_still_follow_the_one_rule():
    # elmo_core.wordforms decides which tokens are the word (whole tokens, a possessive ending off,
    # inflections); without case folding they must also have the typed capitals (wordforms.same_case)
    lines = ex.parse_input("The Bank was shut .\nThe bank 's door .\nRiver-Bank and Banks .").lines
    lines = list(lines) + [ex.Line("Bank\u2019s vault", None, ("Bank\u2019s", "vault"))]  # a token that kept it
    assert [o.token for o in ex.find_occurrences(lines, "Bank", fold_case=False)] == ["Bank", "Bank\u2019s"]
    assert [o.token for o in ex.find_occurrences(lines, "Bank", True, fold_case=False)] == ["Bank", "Banks",
                                                                                            "Bank\u2019s"]
    assert [o.token for o in ex.find_occurrences(lines, "bank", True)] == ["Bank", "bank", "Banks", "Bank\u2019s"]


def test_the_token_budget_counts_both_copies_of_the_table():
    assert ex.tokens_in_budget(96 * 2**20, 3, 256) == 96 * 2**20 // (3 * 256 * 4 * 2) == 16384
    assert ex.tokens_in_budget(10, 3, 256) == 0


@pytest.mark.parametrize("method", ["umap", "tsne"])
def test_identical_vectors_share_one_spot_in_umap_and_tsne(method):
    """Layer 0 gives every occurrence of a spelling the same vector; the map must not scatter them."""
    if method == "umap":
        pytest.importorskip("umap")
    rng = np.random.default_rng(3)
    spellings = rng.normal(size=(6, 8))
    which = np.array([0] * 8 + [1] * 4 + [2, 3, 4, 5] * 2)
    p = ex.project(spellings[which], method)
    assert p.method == method
    for k in range(6):
        spots = p.coords[which == k]
        np.testing.assert_array_equal(spots, np.repeat(spots[:1], len(spots), axis=0))
    assert len(np.unique(p.coords, axis=0)) == 6
    # two spellings among sixteen occurrences: too few distinct vectors for UMAP, so PCA with a note saying why
    two = ex.project(spellings[[0] * 14 + [1] * 2], method)
    assert two.method == "pca" and "Only 2 distinct vectors among the 16 points" in two.note
    assert len(np.unique(two.coords, axis=0)) == 2


def test_distinct_rows_keep_the_order_of_first_appearance():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [0.5, 0.5], [3.0, 4.0]], dtype=np.float32)
    first, inverse = ex.distinct_rows(x)
    assert first.tolist() == [0, 1, 3] and inverse.tolist() == [0, 1, 0, 2, 1]
    np.testing.assert_array_equal(x[first][inverse], x)
