"""Teacher-assisted training: each auxiliary loss falls, export drops the heads, resume stays exact.

The real teachers (GloVe, MiniLM) are training extras and are not installed for the tests: the lexical
targets are replaced by fixed random vectors and the contextual targets are a file in the teacher's format.
"""

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from elmo_core.model.embedder import Embedder
from elmo_core.training import teacher
from elmo_core.training.batches import anchor_epoch_batches, anchor_index
from elmo_core.training.checkpoints import load_language_model
from elmo_core.training.train import read_sentences, train
from tests.training.test_train import TEXT, corpus, make_cfg  # noqa: F401  (corpus is a fixture)

K_CTX = 6


@pytest.fixture
def fake_glove(monkeypatch):
    """Random but fixed 50-d targets of rank 4 (so an 8-d layer 0 can reach them) for every word but the specials."""

    def targets(words):
        gen = torch.Generator().manual_seed(11)
        vecs = torch.randn(len(words), 4, generator=gen) @ torch.randn(4, 50, generator=gen)
        has = torch.tensor([not (w.startswith("<") and w.endswith(">")) for w in words])
        return vecs * has.unsqueeze(1), has

    monkeypatch.setattr(teacher, "lexical_targets", targets)
    monkeypatch.setattr(teacher, "check_glove", lambda: None)  # the stand-in needs no training extras


@pytest.fixture
def ctx_file(corpus, tmp_path):  # noqa: F811
    """Contextual targets for train.txt in the format ``teacher.precompute`` writes."""
    sents = read_sentences(corpus / "train.txt")
    gen = np.random.default_rng(5)
    word = {}
    rows = []
    for s in sents:
        for i, tok in enumerate(s):
            # A target that depends on the token and on its left neighbour: learnable, and contextual.
            prev = s[i - 1] if i else "<S>"
            for w in (tok, prev):
                word.setdefault(w, gen.normal(size=K_CTX))
            rows.append(word[tok] + 0.5 * word[prev])
    offsets = np.cumsum([0] + [len(s) for s in sents])
    path = tmp_path / "ctx.safetensors"
    meta = {"dim": K_CTX, "sentences": len(sents), "tokens": int(offsets[-1])}
    save_file(
        {
            "states": torch.tensor(np.array(rows), dtype=torch.float16),
            "mask": torch.ones(len(rows), dtype=torch.uint8),
            "offsets": torch.tensor(offsets),
        },
        str(path),
        metadata={"meta": json.dumps(meta)},
    )
    return path


def _losses(run):
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    return [r for r in rows if "loss" in r]


@pytest.fixture
def small_glove(monkeypatch):
    """Fixed random 4-d lexical vectors, so that side bags (K = 4) fit the tiny model's projection (P = 8)."""

    def targets(words):
        gen = torch.Generator().manual_seed(13)
        has = torch.tensor([not (w.startswith("<") and w.endswith(">")) for w in words])
        return torch.randn(len(words), 4, generator=gen) * has.unsqueeze(1), has

    monkeypatch.setattr(teacher, "lexical_targets", targets)
    monkeypatch.setattr(teacher, "check_glove", lambda: None)
    monkeypatch.setattr(teacher, "GLOVE_DIM", 4)


SIDE_BAG = dict(side_bag_weight=1.0, side_bag_min_id=3, side_bag_saturation=0.5, side_bag_scale=1.0)


OCCURRENCE = dict(occurrence_weight=5.0, occurrence_min_id=3, anchor_group=2, bag_teacher=True)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["lexical", "contextual", "similarity", "occurrence"])
def test_auxiliary_loss_falls(kind, corpus, tmp_path, fake_glove, ctx_file):  # noqa: F811
    extra = {
        "lexical": {"lexical_weight": 1.0},
        "contextual": {"contextual_weight": 1.0, "contextual_targets": str(ctx_file)},
        "similarity": {"similarity_weight": 5.0, "contextual_targets": str(ctx_file)},
        "occurrence": {**OCCURRENCE, "contextual_targets": str(ctx_file)},
    }[kind]
    run = tmp_path / "run"
    # The occurrence term learns slowest here: the tiny corpus repeats each sentence, and its 8-d layers are small.
    train(make_cfg(corpus, run, max_steps=400 if kind == "occurrence" else 200, **extra), progress=False)
    rows = _losses(run)
    assert kind in rows[0]
    first, last = rows[0][kind], rows[-1][kind]
    if kind == "occurrence":  # KL between "which occurrence is nearest" distributions, in nats
        assert first > 0.02
        assert last < 0.6 * first
        return
    if kind == "similarity":  # squared cosine differences: the student's own geometry moves to the teacher's
        assert first > 0.05
        assert last < 0.6 * first
        return
    # Cosine distance to random targets starts near 1; the head and the biLM must learn to point at them.
    assert first > 0.6
    assert last < 0.6 * first


@pytest.mark.slow
def test_side_bag_loss_falls(corpus, tmp_path, small_glove):  # noqa: F811
    run = tmp_path / "run"
    train(make_cfg(corpus, run, max_steps=300, **SIDE_BAG), progress=False)
    rows = _losses(run)
    # A relative squared error: about 1 while the top layer ignores the bags, well under it once it carries them
    # (the logged value is a running mean, so the first row already lags behind the first step).
    assert rows[0]["side_bag"] > 0.7
    assert rows[-1]["side_bag"] < 0.4


def test_resume_exact_with_side_bags(corpus, tmp_path, small_glove):  # noqa: F811
    _assert_resume_exact(corpus, tmp_path, 3, **SIDE_BAG, side_bag_inclusive=True)


def test_side_bags():
    table = torch.tensor([[0.0, 0], [0, 0], [0, 0], [1, 0], [0, 1], [2, 2]])
    keep = torch.tensor([False, False, False, True, True, False])  # id 5 is left out (frequent, or no vector)
    words = torch.tensor([[0, 3, 4, 3, 1], [0, 4, 5, 1, 1]])
    bags = teacher.side_bags(words, torch.tensor([3, 2]), table, keep, saturation=0.5)
    assert bags.shape == (2, 3, 4)
    t = torch.tanh
    # Sentence "3 4 3": sums (not means) of what lies strictly before, then strictly after, each token.
    torch.testing.assert_close(
        bags[0], t(0.5 * torch.tensor([[0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]]))
    )
    # "4 5": 5 is not kept, so "4" sees nothing after it and "5" sees "4" before it (the padding is masked out).
    torch.testing.assert_close(bags[1, :2], t(0.5 * torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])))
    # Inclusive: each side also holds the token itself ("through t", "from t").
    inc = teacher.side_bags(words, torch.tensor([3, 2]), table, keep, saturation=0.5, inclusive=True)
    torch.testing.assert_close(
        inc[0], t(0.5 * torch.tensor([[1.0, 0.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0], [2.0, 1.0, 1.0, 0.0]]))
    )
    torch.testing.assert_close(inc[1, :2], t(0.5 * torch.tensor([[0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]])))


def test_export_drops_heads_and_embeds_identically(corpus, tmp_path, fake_glove, ctx_file):  # noqa: F811
    run = tmp_path / "run"
    train(
        make_cfg(corpus, run, max_steps=5, lexical_weight=1.0, contextual_weight=1.0, contextual_targets=str(ctx_file)),
        progress=False,
    )
    state = load_file(str(run / "checkpoint" / "model.safetensors"))
    assert any(k.startswith("lexical_head.") for k in state) and any(k.startswith("contextual_head.") for k in state)
    exported = load_file(str(run / "last" / "model.safetensors"))
    assert not any("head" in k for k in exported)
    # The exported folder is a plain biLM: it embeds exactly like the trained model's biLM.
    from elmo_core.model.bilm import BiLM
    from elmo_core.model.config import BiLMConfig

    bilm = BiLM(BiLMConfig.from_dict(json.loads((run / "last" / "options.json").read_text())))
    bilm.load_state_dict({k[len("bilm.") :]: v for k, v in state.items() if k.startswith("bilm.")})
    emb_trained = Embedder(bilm.eval(), device="cpu")
    emb_exported = Embedder.from_checkpoint(run / "last", device="cpu")
    sent = TEXT[5].split()
    np.testing.assert_array_equal(emb_trained.embed_sentence(sent), emb_exported.embed_sentence(sent))
    model, _ = load_language_model(run / "last")  # perplexity tooling still loads it
    assert model.lexical_head is None and model.contextual_head is None


def _assert_resume_exact(corpus, tmp_path, split_at, **extra):  # noqa: F811
    """Seven steps straight and the same run stopped after ``split_at`` then resumed end with identical weights."""
    train(make_cfg(corpus, tmp_path / "straight", max_steps=7, **extra), progress=False)
    train(make_cfg(corpus, tmp_path / "split", max_steps=split_at, **extra), progress=False)
    train(make_cfg(corpus, tmp_path / "split", max_steps=7, **extra), resume=True, progress=False)
    a = load_file(str(tmp_path / "straight" / "checkpoint" / "model.safetensors"))
    b = load_file(str(tmp_path / "split" / "checkpoint" / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)


def test_resume_exact_with_teachers(corpus, tmp_path, fake_glove, ctx_file):  # noqa: F811
    _assert_resume_exact(
        corpus, tmp_path, 3, lexical_weight=0.5, contextual_weight=0.5, contextual_targets=str(ctx_file)
    )


@pytest.mark.parametrize("directional, forms", [(False, False), (True, False), (False, True)])
def test_resume_exact_with_anchor_batches_and_occurrence_loss(
    directional,
    forms,
    corpus,
    tmp_path,
    fake_glove,
    ctx_file,  # noqa: F811
):  # noqa: F811
    _assert_resume_exact(
        corpus,
        tmp_path,
        4,
        **OCCURRENCE,
        similarity_weight=1.0,
        contextual_targets=str(ctx_file),
        bag_directional=directional,
        occurrence_forms=forms,
    )


def test_context_bags():
    table = torch.tensor([[0.0, 0], [0, 0], [0, 0], [1, 0], [0, 1], [2, 2]])
    has = torch.tensor([False, False, False, True, True, False])  # id 5 has no lexical vector
    words = torch.tensor([[0, 3, 4, 3, 1], [0, 4, 5, 1, 1]])  # <S> ... </S>, the second sentence padded
    bags = teacher.context_bags(words, torch.tensor([3, 2]), table, has)
    assert bags.shape == (2, 3, 2)
    torch.testing.assert_close(bags[0], torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]))
    # "4" has no known neighbour (5 is unknown): zeros; "5" sees "4".
    torch.testing.assert_close(bags[1, :2], torch.tensor([[0.0, 0.0], [0.0, 1.0]]))


def test_directional_bags():
    table = torch.tensor([[0.0, 0], [0, 0], [0, 0], [1, 0], [0, 1], [2, 2]])
    has = torch.tensor([False, False, False, True, True, False])
    words = torch.tensor([[0, 3, 4, 3, 1], [0, 4, 5, 1, 1]])
    bags = teacher.directional_bags(words, torch.tensor([3, 2]), table, has)
    assert bags.shape == (2, 3, 4)
    # Sentence "3 4 3": before each token, then after it; nothing on a side gives zeros.
    torch.testing.assert_close(
        bags[0], torch.tensor([[0.0, 0.0, 0.5, 0.5], [1.0, 0.0, 1.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    )
    # "4 5": 5 has no lexical vector, so "4" sees nothing after it and "5" sees "4" before it.
    torch.testing.assert_close(bags[1, :2], torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]))
    # The two sides together weigh the same tokens as the whole-sentence bag.
    whole = teacher.context_bags(words, torch.tensor([3, 2]), table, has)
    torch.testing.assert_close(whole[0, 1], (bags[0, 1, :2] + bags[0, 1, 2:]) / 2)


def test_anchor_batches():
    tokens = ["<S>", "</S>", "<UNK>", "the", "a", ".", "bank", "river", "money", "play"]
    sents = [np.array(x) for x in ([6, 7, 5], [6, 8, 5], [3, 6, 7, 8], [9, 3], [9, 4, 5], [6, 9], [4, 5])]
    index = anchor_index(sents, tokens, group=2, min_id=6)
    words, holders = index[0]  # all these sentences fall in the shortest length band
    assert words.tolist() == [6, 7, 8, 9]  # "the", "a", "." are below min_id; every anchor is in >= 2 sentences
    assert [h.tolist() for h in holders] == [[0, 1, 2, 5], [0, 2], [1, 2], [3, 4, 5]]
    batches = anchor_epoch_batches(index, num_batches=5, batch_size=4, group=2, seed=1, epoch=0)
    assert len(batches) == 5
    for batch in batches:
        assert len(set(batch.tolist())) == len(batch)  # a sentence at most once per batch
        counts = {w: sum(w in sents[i] for i in batch) for w in (6, 7, 8, 9)}
        assert max(counts.values()) >= 2  # at least one word occurs in two sentences of the batch
    again = anchor_epoch_batches(index, num_batches=5, batch_size=4, group=2, seed=1, epoch=0)
    assert all((a == b).all() for a, b in zip(batches, again))


def test_init_from_continues_a_run(corpus, tmp_path, fake_glove):  # noqa: F811
    train(make_cfg(corpus, tmp_path / "base", max_steps=4), progress=False)
    base = load_file(str(tmp_path / "base" / "checkpoint" / "model.safetensors"))
    train(
        make_cfg(corpus, tmp_path / "cont", max_steps=1, lr=0.0, lexical_weight=1.0, init_from=str(tmp_path / "base")),
        progress=False,
    )
    cont = load_file(str(tmp_path / "cont" / "checkpoint" / "model.safetensors"))
    for key, value in base.items():  # lr 0: the biLM and softmax are the base run's, untouched
        torch.testing.assert_close(cont[key], value, rtol=0, atol=0, msg=key)
    assert (tmp_path / "cont" / "vocab.txt").read_text() == (tmp_path / "base" / "vocab.txt").read_text()


# ---- word pieces -> Moses tokens ----------------------------------------------------------------------------
HARD = [
    # (sentence as Moses tokens, the word pieces expected for each token, lowercased and accent-stripped)
    (["I", "can", "'t", "go", "."], [["i"], ["can"], ["'", "t"], ["go"], ["."]]),
    (["the", "U.S.", "army"], [["the"], ["u", ".", "s", "."], ["army"]]),
    (["it", "cost", "$", "3.5", "million"], [["it"], ["cost"], ["$"], ["3", ".", "5"], ["million"]]),
    (["a", "well-known", "fact"], [["a"], ["well", "-", "known"], ["fact"]]),
    (["Café", "Zoë"], [["cafe"], ["zoe"]]),
    (["nice", "😀", "!"], [["nice"], ["[UNK]"], ["!"]]),
]


@pytest.fixture(scope="module")
def wordpiece():
    """A real WordPiece tokenizer with all-MiniLM-L6-v2's vocabulary (tests/fixtures, Apache-2.0)."""
    tokenizers = pytest.importorskip("tokenizers")
    from pathlib import Path

    vocab = Path(__file__).parents[1] / "fixtures" / "minilm_vocab.txt"
    return tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=True, strip_accents=True)


@pytest.mark.parametrize("tokens, expected", HARD)
def test_alignment_hard_cases(wordpiece, tokens, expected):
    text, spans = teacher.token_spans(tokens)
    enc = wordpiece.encode(text)
    pieces = teacher.align_wordpieces(spans, enc.offsets)
    assert [[enc.tokens[j] for j in idx] for idx in pieces] == expected


def test_alignment_long_token_and_dropped_characters(wordpiece):
    long = "pneumonoultramicroscopicsilicovolcanoconiosis" + "x" * 15  # 60 characters
    tokens = ["a", long, "\u200b", "b"]  # a zero-width space that the tokenizer drops entirely
    text, spans = teacher.token_spans(tokens)
    enc = wordpiece.encode(text)
    pieces = teacher.align_wordpieces(spans, enc.offsets)
    assert len(long) == 60
    assert len(pieces[1]) > 3  # the long token is split into many pieces, all assigned to it
    assert "".join(enc.tokens[j].removeprefix("##") for j in pieces[1]) == long
    assert pieces[2] == []  # no pieces: this token gets no contextual target (masked)
    assert [enc.tokens[j] for j in pieces[3]] == ["b"]
    # Special pieces ([CLS], [SEP]) have empty offsets and belong to no token.
    assert sorted(j for idx in pieces for j in idx) == [j for j, (a, b) in enumerate(enc.offsets) if b > a]


def test_alignment_truncated_sentence():
    spans = [(0, 3), (4, 7), (8, 11)]
    offsets = [(0, 0), (0, 3), (4, 7), (0, 0)]  # [CLS] tok1 tok2 [SEP]: the third token was cut off
    assert teacher.align_wordpieces(spans, offsets) == [[1], [2], []]
