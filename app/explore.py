"""The explorer's logic, free of Streamlit: input parsing, occurrences, scalar mix, projection,
neighbours, similarity and separation scores, export and the shareable view.

Dims: L + 1 biLM layers (layer 0 = context-free char-CNN token vector, 1..L = biLSTM layers),
N tokens of all sentences stacked, n occurrences of the target word, D = 2P.
Everything returns numpy arrays or small dataclasses; ``app/views/explorer.py`` only wires them to
widgets and ``app/figures.py`` draws them.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.clusters import discover
from app.safe import visible
from elmo_core.embedder import Progress, embed_in_chunks
from elmo_core.metrics import chance_random_neighbour, nn_scores_from_similarity
from elmo_core.wordforms import is_form, same_case, word_forms

# ---- caps ------------------------------------------------------------------------------------------
MAX_LINES = 500  # sentences embedded per set
MAX_LINE_CHARS = 1000  # characters kept per line (the tokenizer is slow on huge lines)
MAX_TOKENS_PER_LINE = 100  # tokens kept per sentence
MAX_TOKEN_BYTES = 48  # the char-CNN reads the first 48 UTF-8 bytes of a token (ELMo max_characters_per_token 50 - 2)
MAX_CONTEXT_POINTS = 1500  # grey context tokens drawn on the map
MAX_URL_TEXT = 4000  # longer inputs are not put in the shareable link
MAX_LABEL_CHARS = 40  # characters between a label's brackets; a longer "[...]" stays part of the sentence, with a note
MAX_RAW_LINE_CHARS = MAX_LINE_CHARS + MAX_LABEL_CHARS + 4  # a line with its "[label] "
MAX_TEXT_CHARS = MAX_LINES * (MAX_RAW_LINE_CHARS + 1)  # the text box holds at most what can be used
MIN_POINTS_FOR_MAP = 3  # a 2-D projection of fewer points means nothing
MIN_POINTS_FOR_UMAP = 15  # below this, PCA is the honest choice (see APP_NOTES.md)

_BLAS_CONTROLLER = None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """NumPy/SciPy BLAS calls inside run on one thread (also usable as a decorator).

    The explorer's matrices are small (hundreds to a few thousand rows), so a second BLAS thread gains
    nothing; on a busy 2-core server (other sessions, the biLM, the UMAP warm-up) waiting for it to be
    scheduled made each small product take milliseconds (benchmarks/app_speed.py: slider path 588 -> 354 ms).
    threadpoolctl's limit is process-wide: overlapping sessions may leave it at 1 or restore the default,
    both harmless. torch's own thread pool is not affected.
    """
    global _BLAS_CONTROLLER
    try:
        if _BLAS_CONTROLLER is None:
            from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn
            _BLAS_CONTROLLER = ThreadpoolController()
        limit = _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # threadpoolctl missing or unable to see the BLAS: run as is
        limit = contextlib.nullcontext()
    with limit:
        yield


_LABEL = re.compile(rf"^\s*\[([^\[\]]{{0,{MAX_LABEL_CHARS}}})\]\s*(.*)$", re.DOTALL)
_LONG_LABEL = re.compile(rf"^\s*\[[^\[\]]{{{MAX_LABEL_CHARS + 1},}}\]")  # looks like a label, but too long for one
LABEL_HELP = (f"A sense label is the text in square brackets at the start of a line, at most {MAX_LABEL_CHARS} "
              "characters: `[river] We sat on the bank.` Labels colour the map and score how well the senses "
              "separate. Longer bracketed text is read as part of the sentence, with a note.")


# ---- input -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Line:
    """One input sentence: its text (label removed), optional sense label and the model's tokens."""

    text: str
    label: str | None
    tokens: tuple[str, ...]


@dataclass
class ParsedInput:
    lines: list[Line]
    notes: list[str] = field(default_factory=list)  # caps and oddities, shown to the user


def decode_upload(data: bytes, name: str = "file") -> str:
    """Text of an uploaded .txt file (UTF-8, BOM allowed; UTF-16 when it starts with a UTF-16 BOM).

    Raises:
        ValueError: the bytes are not UTF-8 text (e.g. a binary file), with a message for the user.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a byte-order mark (e.g. Windows "Unicode")
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise ValueError(f"{name} starts like UTF-16 text but cannot be decoded as UTF-16; "
                             "upload a UTF-8 .txt file with one sentence per line") from None
    if b"\x00" in data[:65536]:
        raise ValueError(f"{name} looks like a binary file (it contains NUL bytes); upload a UTF-8 .txt file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(f"{name} is not UTF-8 text (byte {err.start + 1} of the file, value 0x{data[err.start]:02x}, "
                         "cannot be decoded; perhaps Latin-1 or Windows-1252); "
                         "upload a UTF-8 .txt file with one sentence per line") from None


def text_for_box(text: str, name: str = "the file") -> tuple[str, str]:
    """An uploaded text cut to what the explorer uses: the first ``MAX_LINES`` non-empty lines (as
    ``elmo_core.text`` defines lines), each at most ``MAX_RAW_LINE_CHARS`` characters.

    Returns:
        (text for the text box, a note for the user or ""). A long line whose sentence is still longer than
        ``MAX_LINE_CHARS`` in the box is not in the note: ``parse_input`` says that it was cut.

    Raises:
        ValueError: the file holds no text (empty, or blank lines only), with a message for the user: replacing
            the sentences with nothing would only lose them.
    """
    from elmo_core.text import clean_line, split_lines
    lines = [ln for ln in split_lines(text) if ln.strip()]
    if not any(clean_line(ln).strip() for ln in lines):  # invisible characters only count as nothing too
        raise ValueError(f"{name} holds no text (it is empty or has only blank lines); your sentences are unchanged")
    notes = []
    if len(lines) > MAX_LINES:
        notes.append(f"only the first {MAX_LINES} of its {len(lines):,} lines were read")
        lines = lines[:MAX_LINES]
    # A line cut here nearly always keeps a sentence over MAX_LINE_CHARS, which parse_input cuts again and reports
    # under the text box: this note only counts the cuts parse_input cannot see (the line's label, spaces or
    # invisible characters took the room), so each cut is reported once.
    unseen = sum(len(parse_label(clean_line(ln[:MAX_RAW_LINE_CHARS]))[1]) <= MAX_LINE_CHARS
                 for ln in lines if clean_line(ln[MAX_RAW_LINE_CHARS:]).strip())
    if unseen:
        notes.append(f"{unseen} line(s) were cut to their first {MAX_RAW_LINE_CHARS:,} characters")
    lines = [ln[:MAX_RAW_LINE_CHARS] for ln in lines]
    return "\n".join(lines), (f"From {name}: " + "; ".join(notes) + ".") if notes else ""


def fit_budget(lines: Sequence[Line], max_tokens: int) -> tuple[list[Line], str]:
    """The first sentences whose tokens together stay within ``max_tokens`` (a session's memory bound).

    Returns:
        (kept lines, a note for the user or "").
    """
    total, kept = 0, []
    for line in lines:
        if total + len(line.tokens) > max_tokens:
            break
        total += len(line.tokens)
        kept.append(line)
    if len(kept) == len(lines):
        return list(lines), ""
    return kept, (f"Only the first {len(kept)} of {len(lines)} sentences are used: together they have "
                  f"{total:,} tokens, the most one session may keep for this model (its vectors take memory "
                  "on the server; ELMO_EXPLORER_SESSION_MB).")


def tokens_in_budget(budget_bytes: int, num_layers: int, dim: int) -> int:
    """How many tokens' activations fit in ``budget_bytes``: float32 (L + 1, D) per token, twice (the token
    table and its layer-normed copy)."""
    return budget_bytes // (num_layers * dim * 4 * 2)


def parse_label(raw: str) -> tuple[str | None, str]:
    """``"[river] We sat on the bank."`` -> ``("river", "We sat on the bank.")``; no label -> ``(None, raw)``."""
    m = _LABEL.match(raw)
    if not m:
        return None, raw.strip()
    label = " ".join(m.group(1).split()) or None
    return label, m.group(2).strip()


def parse_input(text: str, tokenizer: Callable[[str], list[str]] | None = None,
                max_lines: int = MAX_LINES) -> ParsedInput:
    """Split the text box into labelled, tokenized sentences (one per non-empty line), applying the caps.

    Args:
        text: raw text, one sentence per line, each optionally starting with ``[label]``.
        tokenizer: str -> tokens; default ``elmo_core.tokenize`` (Moses, as in ELMo's training data).
        max_lines: keep at most this many sentences.
    """
    if tokenizer is None:
        from elmo_core.tokenize import tokenize as tokenizer
    from elmo_core.text import clean_line, split_lines
    numbered = [(i, ln) for i, ln in enumerate((clean_line(raw) for raw in split_lines(text)), 1) if ln.strip()]
    notes: list[str] = []
    if len(numbered) > max_lines:
        notes.append(f"Only the first {max_lines} of {len(numbered)} lines are used (cap of {max_lines} sentences).")
        numbered = numbered[:max_lines]
    lines: list[Line] = []
    long_lines = cut_lines = label_only = 0
    long_tokens: list[str] = []
    long_labels: list[tuple[int, str]] = []  # (line number in the text, the bracketed text) read as sentence
    for number, raw in numbered:
        label, sentence = parse_label(raw)
        if label is None and (m := _LONG_LABEL.match(raw)):
            long_labels.append((number, m.group(0).strip()))
        if len(sentence) > MAX_LINE_CHARS:
            sentence, long_lines = sentence[:MAX_LINE_CHARS], long_lines + 1
        tokens = tokenizer(sentence)
        if not tokens:
            label_only += 1
            continue
        if len(tokens) > MAX_TOKENS_PER_LINE:
            tokens, cut_lines = tokens[:MAX_TOKENS_PER_LINE], cut_lines + 1
        long_tokens += [t for t in tokens if len(t.encode("utf-8")) > MAX_TOKEN_BYTES]
        lines.append(Line(sentence, label, tuple(tokens)))
    if long_lines:
        notes.append(f"{long_lines} line(s) longer than {MAX_LINE_CHARS} characters were cut.")
    if cut_lines:
        notes.append(f"{cut_lines} sentence(s) longer than {MAX_TOKENS_PER_LINE} tokens were cut.")
    if label_only:
        notes.append(f"{label_only} line(s) had a label but no sentence and were skipped.")
    if long_tokens:
        example = long_tokens[0] if len(long_tokens[0]) <= 30 else long_tokens[0][:30] + "…"
        notes.append(f"{len(long_tokens)} token(s) are longer than {MAX_TOKEN_BYTES} UTF-8 bytes (e.g. '{example}'): "
                     f"the char-CNN reads only their first {MAX_TOKEN_BYTES} bytes, as the original ELMo does.")
    if long_labels:
        notes.append(long_label_note(long_labels))
    return ParsedInput(lines, notes)


def long_label_note(long_labels: Sequence[tuple[int, str]]) -> str:
    """The note for lines that start with a bracketed text too long to be a label ((line number, "[text]") each):
    they say which lines, quote the first, and that it was read as part of the sentence."""
    numbers = [str(n) for n, _ in long_labels]
    first = long_labels[0][1]
    quoted = f"'{visible(first if len(first) <= 50 else first[:46] + '…]')}'"
    if len(numbers) == 1:
        what = f"Line {numbers[0]}: {quoted} is"
    else:
        listed = (f"{', '.join(numbers[:-1])} and {numbers[-1]}" if len(numbers) <= 5
                  else f"{', '.join(numbers[:5])} and {len(numbers) - 5} more")
        what = f"Lines {listed}: their bracketed text (e.g. {quoted}) is"
    return (f"{what} longer than {MAX_LABEL_CHARS} characters, so it was read as part of the sentence, not as a "
            f"label. Shorten it to {MAX_LABEL_CHARS} characters or fewer to use it as a label.")


# ---- words and occurrences ------------------------------------------------------------------------
_STOPWORDS = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being it its this that "
    "these those he she they we you i me him her them us my your his our their not no do does did have has had "
    "will would can could should may might must shall there here then than so if when while what which who whom "
    "how all any each some such into onto over under about after before up down out off again very just also "
    "'s n't".split())


@functools.lru_cache(maxsize=65536)  # called per token on every slider move (neighbour candidates)
def is_wordlike(token: str) -> bool:
    """True when the token has at least one letter or digit (any script)."""
    return any(ch.isalnum() for ch in token)


def word_counts(lines: Sequence[Line], fold_case: bool = True) -> list[tuple[str, int]]:
    """(word, count) for every word-like token, most frequent first, then alphabetical. With ``fold_case``
    the words are case-folded ("The" and "the" are one word), else spelled as written."""
    fold = str.casefold if fold_case else str
    counts = Counter(fold(t) for line in lines for t in line.tokens if is_wordlike(t))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def picker_order(counts: Sequence[tuple[str, int]]) -> list[str]:
    """The word picker's options: most frequent first, except that a word comes before every longer word that
    starts with it, so a prefix filter shows the exact match first (typing "the" lists "the" before "then"
    and "there", and Enter picks it), then the other matches by frequency.

    Args:
        counts: (word, count), most frequent first (``word_counts``).
    """
    known = {word for word, _ in counts}
    out: list[str] = []
    placed: set[str] = set()
    for word, _ in counts:
        for end in range(1, len(word) + 1):  # its shorter words first, shortest first
            prefix = word[:end]
            if prefix in known and prefix not in placed:
                placed.add(prefix)
                out.append(prefix)
    return out


def suggest_word(lines: Sequence[Line], fold_case: bool = True) -> str | None:
    """The most frequent non-stopword that occurs at least twice (else the most frequent word)."""
    counts = word_counts(lines, fold_case)
    for word, n in counts:
        if n >= 2 and word.casefold() not in _STOPWORDS:
            return word
    return counts[0][0] if counts else None


def spellings(occurrences: Sequence["Occurrence"]) -> list[str]:
    """The distinct spellings of the occurrences as written, most frequent first ("Spring", "spring")."""
    counts = Counter(o.token for o in occurrences)
    return [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@dataclass(frozen=True)
class Occurrence:
    line: int  # index into the parsed lines
    position: int  # token index within the line
    token: str  # the token as written
    label: str | None


def find_occurrences(lines: Sequence[Line], word: str, inflections: bool = False,
                     fold_case: bool = True) -> list[Occurrence]:
    """Every token that counts as ``word`` (``elmo_core.wordforms``: ignoring case and a possessive ending,
    whole tokens; with ``inflections`` also its regular noun and verb forms), in reading order. Without
    ``fold_case`` a token must also have the word's capitals as typed (``wordforms.same_case``: "Spring"
    finds "Spring" and "Springs", not "spring" or "SPRING"). This only groups tokens: the biLM always reads
    them as written."""
    forms = word_forms(word, inflections=inflections)
    return [Occurrence(i, j, tok, line.label)
            for i, line in enumerate(lines) for j, tok in enumerate(line.tokens)
            if is_form(tok, forms) and (fold_case or same_case(tok, word))]


def highlight_parts(tokens: Sequence[str], position: int, window: int | None = None) -> tuple[str, str, str]:
    """(before, word, after) as detokenized-ish text, for highlighting the word in a sentence.

    ``window`` keeps at most that many tokens on each side (with "…").
    """
    lo, hi = 0, len(tokens)
    if window is not None:
        lo, hi = max(0, position - window), min(len(tokens), position + window + 1)
    before = " ".join(tokens[lo:position])
    after = " ".join(tokens[position + 1:hi])
    if lo > 0:
        before = "… " + before
    if hi < len(tokens):
        after = after + " …"
    return before, tokens[position], after


# ---- activations --------------------------------------------------------------------------------------
PROGRESS_FROM = 33  # sentences to embed: fewer finish before a progress bar would tell the user anything


class ActivationCache:
    """Thread-safe LRU of biLM activations keyed by (model id, tokens), bounded in bytes.

    Only the sentences not cached yet go through the biLM, in one ``embed_batch`` call per chunk.
    Stored arrays are read-only: callers that need to change them must copy.
    """

    def __init__(self, max_bytes: int = 512 * 2**20):
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, tuple[str, ...]], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, model_id: str, embed_batch: Callable[[list[list[str]]], list[np.ndarray]],
                 token_lists: Sequence[Sequence[str]], chunk_size: int = 32, progress: Progress | None = None,
                 progress_from: int = 1) -> tuple[list[np.ndarray], int]:
        """Activations (L + 1, n_i, D) for each sentence, and how many had to be computed.

        Args:
            progress: ``elmo_core.embedder.Progress``, called after each computed chunk (its counts are of the
                sentences that run the biLM), and only when at least ``progress_from`` sentences do.
        """
        keys = [(model_id, tuple(tokens)) for tokens in token_lists]
        found: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
        with self._lock:
            for key in keys:
                if key in self._items:
                    self._items.move_to_end(key)
                    found[key] = self._items[key]
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        start = 0
        report = progress if len(missing) >= progress_from else None
        for done, arrays in embed_in_chunks(embed_batch, [k[1] for k in missing], chunk_size, report):
            for key, array in zip(missing[start:done], arrays):
                array = np.ascontiguousarray(array, dtype=np.float32)
                array.setflags(write=False)
                found[key] = array
                self._put(key, array)  # chunk by chunk, so a rerun that stops this one keeps what is done
            start = done
        return [found[k] for k in keys], len(missing)

    def _put(self, key, array: np.ndarray) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = array
            self._bytes += array.nbytes
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self._bytes -= old.nbytes


class TokenTable:
    """All tokens of a sentence set with their biLM activations stacked: ``acts`` (L + 1, N, D).

    ``offsets[i]`` is the row of line i's first token, so token j of line i is row ``offsets[i] + j``.
    """

    def __init__(self, lines: Sequence[Line], activations: Sequence[np.ndarray]):
        if len(lines) != len(activations):
            raise ValueError(f"{len(lines)} lines but {len(activations)} activation arrays")
        for line, a in zip(lines, activations):
            if a.ndim != 3 or a.shape[1] != len(line.tokens):
                raise ValueError(f"activations {a.shape} do not match {len(line.tokens)} tokens")
        self.lines = list(lines)
        lengths = [len(line.tokens) for line in lines]
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        if activations:
            self.acts = np.concatenate(activations, axis=1)  # (L+1, N, D)
        else:
            self.acts = np.zeros((0, 0, 0), np.float32)
        self.line_of_row = np.repeat(np.arange(len(lines)), lengths)
        self._tokens = [t for line in self.lines for t in line.tokens]  # row -> token
        self._normed: np.ndarray | None = None

    @classmethod
    def of_tokenized(cls, sentences: Sequence[Sequence[str]], activations: Sequence[np.ndarray]) -> TokenTable:
        """A table of already tokenized sentences without labels (the reference corpus's hits)."""
        return cls([Line(" ".join(t), None, tuple(t)) for t in sentences], activations)

    @property
    def num_layers(self) -> int:
        return self.acts.shape[0]

    @property
    def num_tokens(self) -> int:
        return self.acts.shape[1]

    def row(self, line: int, position: int) -> int:
        return int(self.offsets[line] + position)

    def rows(self, occurrences: Sequence[Occurrence]) -> np.ndarray:
        return np.array([self.row(o.line, o.position) for o in occurrences], dtype=np.int64)

    def token(self, row: int) -> str:
        return self._tokens[int(row)]

    def layers(self, layer_norm: bool = False) -> np.ndarray:
        """(L + 1, N, D) raw activations, or each layer normalised per sentence (see ``sentence_layer_norm``)."""
        if not layer_norm:
            return self.acts
        if self._normed is None:
            self._normed = sentence_layer_norm(self.acts, self.offsets)
        return self._normed

    def mix(self, w: Sequence[float], gamma: float, layer_norm: bool = False) -> np.ndarray:
        """(N, D) ELMo vectors gamma * sum_j softmax(w)_j h_j for every token."""
        return scalar_mix(self.layers(layer_norm), w, gamma)


def softmax(w: Sequence[float]) -> np.ndarray:
    """s = softmax(w), float64, sums to 1."""
    w = np.asarray(w, dtype=np.float64)
    e = np.exp(w - w.max())
    return e / e.sum()


@one_blas_thread()
def scalar_mix(layers: np.ndarray, w: Sequence[float], gamma: float) -> np.ndarray:
    """ELMo's scalar mix: gamma * sum_j s_j * layers[j] with s = softmax(w).

    Args:
        layers: (L + 1, ..., D) activations.
        w: L + 1 raw weights.
    Returns:
        (..., D) float32.
    Source: Peters et al. 2018 eq. (1); same as ``elmo_core.ScalarMix`` without layer norm.
    """
    if len(w) != layers.shape[0]:
        raise ValueError(f"{len(w)} weights for {layers.shape[0]} layers")
    s = softmax(w).astype(np.float32)
    return (np.float32(gamma) * np.tensordot(s, layers, axes=1)).astype(np.float32, copy=False)


def sentence_layer_norm(acts: np.ndarray, offsets: np.ndarray, eps: float = 1e-13) -> np.ndarray:
    """Normalise each layer of each sentence with one mean and variance over all its (token, feature) values.

    This is AllenNLP's ``ScalarMix(do_layer_norm=True)`` applied to a batch of one sentence (whole-tensor
    statistics, not per-token LayerNorm), so a sentence's vectors do not depend on the other sentences.
    Statistics exclude ``<S>``/``</S>`` (bilm-tf's choice; AllenNLP includes them).
    """
    out = np.empty_like(acts)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if b <= a:
            continue
        block = acts[:, a:b].astype(np.float64)
        mean = block.mean(axis=(1, 2), keepdims=True)
        var = ((block - mean) ** 2).mean(axis=(1, 2), keepdims=True)
        out[:, a:b] = ((block - mean) / np.sqrt(var + eps)).astype(np.float32)
    return out


# ---- projection ---------------------------------------------------------------------------------------
PROJECTIONS = ("auto", "pca", "umap", "tsne")
PROJECTION_NAMES = {"auto": "auto (PCA or UMAP)", "pca": "PCA", "umap": "UMAP", "tsne": "t-SNE"}

_UMAP_LOCK = threading.Lock()  # numba's default threading layer breaks when several threads run UMAP at once
_UMAP_IMPORT_LOCK = threading.Lock()
NUMBA_CACHE_SUBDIR = "numba-cache"  # under the virtual environment: where `make app` puts UMAP's compiled code


def numba_cache_dir() -> str | None:
    """Where numba keeps UMAP's compiled code: ``NUMBA_CACHE_DIR`` when set (the Makefile and the Dockerfile set
    it), else ``<virtual environment>/numba-cache`` in a virtual environment whose folder is writable (the one
    `make app` fills, so that a server started without the Makefile, e.g. by ``elmo-explorer``, finds it too),
    else None (numba's own default: beside the package's sources, or the user's cache folder)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    if sys.prefix == sys.base_prefix or not os.access(sys.prefix, os.W_OK):
        return None
    return os.path.join(sys.prefix, NUMBA_CACHE_SUBDIR)


def import_umap():
    """``import umap`` with numba's on-disk cache on for all of UMAP's compiled functions.

    umap-learn marks one of its ~130 numba functions ``cache=True`` (pynndescent most of its own), so numba's
    cache alone kept the first fit in every process at 11-13 s of compiling on 2 idle cores. During this import
    ``numba.njit`` defaults to ``cache=True``: the first fit then reads the compiled code from the cache that
    ``UmapWarmUp.run_now`` (`make app`, the Docker build) filled: import and first fit 2-3 s in a fresh process
    instead of about 40 s with an empty cache. numba keys the cache by each source file's stamp and the CPU, so an
    upgraded package or another machine compiles again (once). A function numba cannot cache (a closure) is
    compiled as before.
    """
    if "umap" in sys.modules:
        return sys.modules["umap"]
    with _UMAP_IMPORT_LOCK:
        if "umap" in sys.modules:
            return sys.modules["umap"]
        folder = numba_cache_dir()
        if folder and not os.environ.get("NUMBA_CACHE_DIR") and "numba" not in sys.modules:
            os.environ["NUMBA_CACHE_DIR"] = folder  # read when numba is imported
        import numba
        if folder and not numba.config.CACHE_DIR:  # numba was imported before: tell it now
            numba.config.CACHE_DIR = folder
        plain = numba.njit

        def njit(*args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:  # @numba.njit without arguments
                return plain(cache=True)(args[0])
            kwargs.setdefault("cache", True)
            return plain(*args, **kwargs)

        numba.njit = njit
        try:
            import umap
        finally:
            numba.njit = plain
        return umap


class UmapWarmUp:
    """UMAP's import and first fits in a fresh process: 'off', 'warming', 'ready' or 'failed'.

    Started once per server process in a background thread (``app.resources.umap_warm_up``), and run once at
    install by `make app` and the Docker build (``run_now``), which fills numba's on-disk cache: the warm-up then
    takes about 3 s instead of about 40 s. The maps never depend on this state ("auto" is UMAP from
    ``MIN_POINTS_FOR_UMAP`` points, always): a UMAP map asked for while it is 'warming' waits for it (the page's
    spinner says so), and 'failed' only says why every UMAP map falls back to PCA.
    """

    def __init__(self):
        self.state = "off"
        self.error = ""
        self.seconds = 0.0
        self._thread: threading.Thread | None = None

    def start(self) -> "UmapWarmUp":
        if self._thread is None:
            from app import background
            self.state = "warming"
            self._thread = background.start(self._run, "umap-warm-up")
        return self

    def run_now(self) -> "UmapWarmUp":
        """Warm up in the calling thread (`make app`, the Docker build, tests)."""
        self.state = "warming"
        self._run()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a started warm-up ended (tests); True when ready."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.state == "ready"

    def _run(self) -> None:
        import time

        from app import background
        start = time.perf_counter()
        try:
            rng = np.random.default_rng(0)
            x = rng.normal(size=(40, 16)).astype(np.float32)
            background.check()
            first = _umap_fit(x, seed=0, init=None)
            background.check()
            _umap_fit(x, seed=0, init=first)  # the warm-started path as well
            self.state = "ready"
        except background.Stopped:  # the process is exiting
            self.state = "off"
            return
        except Exception as err:  # umap missing or broken: every UMAP map falls back to PCA and says so
            self.state, self.error = "failed", f"{type(err).__name__}: {err}"
        self.seconds = time.perf_counter() - start
        if background.stopping():
            return
        try:  # t-SNE's first fit in a process loads and initialises its extension (seconds): do it here too
            tsne_fit(l2_normalise(np.random.default_rng(0).normal(size=(40, 16)).astype(np.float32)), 0)
        except Exception:  # t-SNE then pays it on first use; nothing else depends on it
            pass


def _umap_fit(x: np.ndarray, seed: int, init: np.ndarray | None) -> np.ndarray:
    import warnings

    umap = import_umap()
    n = len(x)
    data, metric = x, "cosine"
    if init is not None:
        # A warm-started refit (every slider move) gets the cosine distances precomputed: for fewer than
        # 4096 points UMAP computes all pairs itself, through a Python-level loop over its numba metric
        # (about 45 ms of a 100 ms refit at n = 200). Same distances up to float rounding; the first fit
        # keeps metric="cosine" because its "pca" init needs the vectors, not the distances.
        data, metric = cosine_distances(x), "precomputed"
    with _UMAP_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer = umap.UMAP(n_components=2, n_neighbors=max(2, min(15, n - 1)), min_dist=0.1, metric=metric,
                            random_state=seed, init="pca" if init is None else init,
                            n_epochs=None if init is None else 60)
        return reducer.fit_transform(data).astype(np.float64)


TSNE_MAX_ITER = 400  # a fit from scratch: scikit-learn's 250 early-exaggeration steps, then 150 more
TSNE_WARM_ITER = 250  # a refit that starts from the previous layout (scikit-learn's minimum)


def tsne_fit(x: np.ndarray, seed: int, init: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """t-SNE (scikit-learn, cosine metric) of the rows of ``x`` (n, D), n >= 5, bounded in time.

    A fit from scratch starts from PCA and stops after ``TSNE_MAX_ITER`` iterations (scikit-learn's default of
    1,000 took 3 s at 200 points on 2 busy cores); a refit from ``init`` (n, 2), the previous layout, runs
    ``TSNE_WARM_ITER`` iterations without early exaggeration, which would blow the settled layout apart.
    The Barnes-Hut gradient runs on one OpenMP thread: on a shared 2-core server its threads waited for each
    other (benchmarks/app_speed.py: 1.6 s on one thread vs 25-35 s on two for 500 iterations at load 6).

    Returns: ((n, 2) float64 coordinates, scikit-learn's ``n_iter_``: the iterations run, at most the cap).
    """
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits
    n = len(x)
    perplexity = float(min(30.0, max(2.0, (n - 1) / 3)))
    warm = init is not None
    tsne = TSNE(n_components=2, perplexity=perplexity, metric="cosine", random_state=seed,
                init=init.astype(np.float32) if warm else "pca", early_exaggeration=1.0 if warm else 12.0,
                max_iter=TSNE_WARM_ITER if warm else TSNE_MAX_ITER)
    with threadpool_limits(limits=1):  # OpenMP and BLAS
        coords = tsne.fit_transform(x).astype(np.float64)
    return coords, int(tsne.n_iter_)


@dataclass
class Projection:
    coords: np.ndarray | None  # (n, 2), None when no map can be drawn
    method: str  # "pca", "umap", "tsne" or "none"
    note: str = ""  # what the user should know (fallbacks, too few points)


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero): Euclidean geometry then equals cosine geometry."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


SAME_VECTOR_TOL = 1e-6  # max pairwise cosine distance below which vectors count as one (float noise)


def nearly_identical(x: np.ndarray, tol: float = SAME_VECTOR_TOL) -> bool:
    """True when the rows of ``x`` (n >= 2) all point the same way up to float noise: max pairwise cosine
    distance < ``tol``. E.g. layer 0 (context-free): every occurrence of one spelling gets the same vector, and
    the "layer 0 only" mix (s_0 = 0.99991, not exactly 1) leaves only tiny residues from layers 1 and 2.

    Uses the bound 1 - cos(a, b) = |a - b|^2 / 2 <= 2 max_i |x_i - c|^2 for unit rows and their mean c
    (O(n D) instead of all pairs); it only errs towards "not identical". Zero rows never count as identical.
    """
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return False
    norms = np.linalg.norm(x, axis=1)
    if not np.all(norms > 0):
        return False
    unit = x / norms[:, None]
    centre = unit.mean(axis=0)
    return float(2.0 * np.max(np.sum((unit - centre) ** 2, axis=1))) < tol


def pca_2d(x: np.ndarray) -> np.ndarray:
    """(n, 2) coordinates on the first two principal components (zeros where the data has no variance).

    Each axis points so that its largest coordinate (in absolute value, the first such point) is positive: the
    signs of singular vectors are arbitrary, and this makes the map a function of the data alone.
    """
    xc = x.astype(np.float64) - x.mean(axis=0, keepdims=True)
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    coords = np.zeros((len(x), 2))
    k = min(2, len(s))
    coords[:, :k] = u[:, :k] * s[:k]
    if len(coords):
        extreme = coords[np.argmax(np.abs(coords), axis=0), [0, 1]]
        coords *= np.where(extreme < 0, -1.0, 1.0)
    return coords


def procrustes_align(coords: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Rotate/reflect, scale and shift ``coords`` onto ``reference`` (same points, same order), least squares.

    Used so that a re-projection after a slider move does not flip or spin the map.
    """
    mu_c, mu_r = coords.mean(axis=0), reference.mean(axis=0)
    c, r = coords - mu_c, reference - mu_r
    norm = float((c ** 2).sum())
    if norm == 0.0 or not np.isfinite(norm):
        return coords
    u, s, vt = np.linalg.svd(c.T @ r)
    rotation = u @ vt
    scale = s.sum() / norm
    return scale * c @ rotation + mu_r


@one_blas_thread()
def distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bit-identical rows of x (n, D): (first, inverse) with ``x[first]`` the distinct rows in order of first
    appearance and ``x[first][inverse]`` equal to x. Rows are compared as raw bytes: ``np.unique(x, axis=0)``,
    which sorts them as numbers, took 4.5-5.7 ms for 200 x 768 on every map against 0.2 ms here."""
    x = np.ascontiguousarray(x)
    rows = x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


def project(x: np.ndarray, method: str = "auto", previous: np.ndarray | None = None, seed: int = 0) -> Projection:
    """2-D map of the rows of ``x`` in cosine geometry: a function of its arguments alone, so that a link draws
    the same map whenever and wherever it is opened (never of the server's state, such as UMAP's warm-up: a
    UMAP fit asked for while the warm-up runs waits for it).

    Args:
        x: (n, D) vectors.
        method: "auto" (PCA below ``MIN_POINTS_FOR_UMAP`` points, else UMAP), "pca", "umap" or "tsne".
        previous: (n, 2) layout of the same points from the last call: UMAP and t-SNE start from it and
            every result is Procrustes-aligned to it, so the map stays put while weights change.
        seed: random seed (UMAP, t-SNE).
    Raises: what UMAP or t-SNE raise when they fail (``app.frame`` then shows PCA and says why).
    """
    if method not in PROJECTIONS:
        raise ValueError(f"unknown projection {method!r}; choose one of {PROJECTIONS}")
    n = len(x)
    if n < MIN_POINTS_FOR_MAP:
        return Projection(None, "none", f"A 2-D map needs at least {MIN_POINTS_FOR_MAP} points; there are {n}.")
    if previous is not None and previous.shape != (n, 2):
        previous = None
    x = l2_normalise(np.asarray(x, dtype=np.float32))
    note = ""
    chosen = method
    if method == "auto":
        chosen = "pca" if n < MIN_POINTS_FOR_UMAP else "umap"
        if chosen == "pca":
            note = f"PCA, because {n} points are too few for UMAP to mean anything (needs {MIN_POINTS_FOR_UMAP})."
    if chosen == "umap" and n < 4:
        chosen, note = "pca", f"UMAP needs at least 4 points; showing PCA for {n}."
    if chosen == "tsne" and n < 5:
        chosen, note = "pca", f"t-SNE needs at least 5 points; showing PCA for {n}."
    if float(np.ptp(x, axis=0).max()) == 0.0:
        return Projection(np.zeros((n, 2)), "pca", "All points have the same vector (e.g. layer 0 alone for one "
                          "spelling): they sit on one spot.")
    # UMAP and t-SNE would scatter identical vectors (layer 0: every occurrence of a spelling) around their spot;
    # they are fitted on the distinct vectors, and each occurrence takes its vector's place. (PCA keeps every row,
    # so a repeated vector still weighs as often as it occurs.)
    first, inverse = distinct_rows(x)
    distinct = x[first]
    fit_x, fit_previous = x, previous
    if chosen in ("umap", "tsne") and len(distinct) < n:
        if len(distinct) < (4 if chosen == "umap" else 5):
            chosen, note = "pca", (f"Only {len(distinct)} distinct vectors among the {n} points (identical ones share "
                                   f"a spot): showing PCA.")
        else:
            fit_x, fit_previous = distinct, None if previous is None else previous[first]
    if chosen == "pca":
        coords = pca_2d(x)
    elif chosen == "umap":
        coords = _umap_fit(fit_x, seed, fit_previous)
    else:
        coords, _ = tsne_fit(fit_x, seed, fit_previous)
    # Identical vectors get one spot, bit for bit (PCA's rows can differ in the last bit by their position).
    coords = coords[inverse] if fit_x is not x else coords[first][inverse]
    if previous is not None:
        coords = procrustes_align(coords, previous)
    return Projection(coords, chosen, note)


# ---- similarity, neighbours, separation -----------------------------------------------------------------
@one_blas_thread()
def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """(n, n) cosine similarities of the rows of x (0 for zero vectors)."""
    from sklearn.metrics.pairwise import cosine_similarity
    return cosine_similarity(x).astype(np.float64)


def cosine_distances(x: np.ndarray, sims: np.ndarray | None = None) -> np.ndarray:
    """(n, n) float64 cosine distances 1 - cos, clipped to [0, 2], zero diagonal (as scikit-learn's
    ``cosine_distances``), from the vectors or from their ``cosine_matrix`` when given."""
    d = 1.0 - (cosine_matrix(x) if sims is None else sims)
    np.clip(d, 0.0, 2.0, out=d)
    np.fill_diagonal(d, 0.0)
    return d


@dataclass(frozen=True)
class Neighbour:
    index: int  # row in the candidate matrix
    similarity: float


def cosine_neighbours(query: np.ndarray, candidates: np.ndarray, k: int = 10,
                      exclude: Sequence[int] = ()) -> list[Neighbour]:
    """The k candidate rows most cosine-similar to ``query`` (D,), best first, ties in row order."""
    if len(candidates) == 0 or k <= 0:
        return []
    # scikit-learn's cosine_similarity without its input validation (a few ms on every slider move):
    # rows scaled to unit length (zero rows stay zero), then one matrix-vector product.
    dtype = np.result_type(candidates.dtype, query.dtype, np.float32)
    cand = np.asarray(candidates, dtype=dtype)
    q = np.asarray(query, dtype=dtype).reshape(-1)
    with one_blas_thread():
        norms = np.sqrt(np.einsum("ij,ij->i", cand, cand))
        q_norm = float(np.sqrt(q @ q))
        sims = (cand @ (q / q_norm if q_norm > 0 else q)) / np.where(norms > 0, norms, 1.0)
    order = np.argsort(-sims, kind="stable")
    skip = set(int(i) for i in exclude)
    out = []
    for i in order:
        if int(i) in skip:
            continue
        out.append(Neighbour(int(i), float(sims[i])))
        if len(out) == k:
            break
    return out


def unique_types(tokens: Sequence[str], vectors: np.ndarray) -> tuple[list[str], np.ndarray]:
    """One row per distinct word-like token spelling (first occurrence): for context-free layer-0 vectors,
    which are equal for equal spellings."""
    seen: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if is_wordlike(tok) and tok not in seen:
            seen[tok] = i
    words = list(seen)
    rows = np.array(list(seen.values()), dtype=np.int64)
    return words, vectors[rows] if len(rows) else vectors[:0]


def layer0_type_neighbours(table: TokenTable, ref: TokenTable | None, row: int, k: int) -> list[tuple[str, float]]:
    """The k word types nearest to token ``row`` of ``table`` by layer-0 (context-free) cosine, among the
    types of ``table`` and of ``ref`` (the reference sentences, or None); the query's own spelling is left out.

    Returns: [(word, cosine similarity)], best first (the GloVe-like column of the paper's Table 4).
    """
    layer0 = table.layers(False)[0]
    tokens = [table.token(r) for r in range(table.num_tokens)]
    vectors = layer0
    if ref is not None:
        tokens += [ref.token(r) for r in range(ref.num_tokens)]
        vectors = np.concatenate([layer0, ref.layers(False)[0]])
    types, type_vecs = unique_types(tokens, vectors)
    exclude = [i for i, t in enumerate(types) if t == table.token(row)]
    return [(types[nb.index], nb.similarity) for nb in cosine_neighbours(layer0[row], type_vecs, k, exclude)]


@dataclass
class Separation:
    """How well the occurrences' vectors separate the senses (or group at all, without labels)."""

    silhouette: float | None  # mean cosine silhouette in [-1, 1]
    knn_accuracy: float | None  # leave-one-out 1-NN accuracy (labels only), ties split evenly
    chance: float | None  # 1-NN accuracy expected from a random neighbour
    note: str = ""


def knn_accuracy(x: np.ndarray, labels: Sequence[str]) -> float:
    """Leave-one-out 1-nearest-neighbour (cosine) accuracy; a tie between neighbours counts fractionally.

    The tie rule matters for layer 0, where every occurrence of one spelling has the same vector: the
    score then equals the share of same-label points among the tied ones, not a lucky tie-break.
    """
    return _knn_accuracy(cosine_matrix(x), labels)


def _knn_accuracy(sims: np.ndarray, labels: Sequence[str]) -> float:
    return float(np.mean(nn_scores_from_similarity(sims, labels)))


def zero_rows(x: np.ndarray) -> np.ndarray:
    """(n,) bool: rows of ``x`` (n, D) that are all zero (no direction, so no cosine similarity)."""
    x = np.asarray(x)
    return ~np.any(x != 0, axis=1) if x.ndim == 2 else np.zeros(len(x), bool)


@one_blas_thread()
def separation(x: np.ndarray, labels: Sequence[str | None]) -> Separation:
    """Silhouette (cosine) and, with sense labels, leave-one-out 1-NN accuracy.

    Without labels (fewer than 2 distinct ones), the silhouette is that of the best 2..6-cluster split found
    by average-linkage clustering (``app.clusters.discover``, clusters of ``min_cluster_size`` or more; also
    when it is too low to count as clusters): how clearly the occurrences fall into groups at all.
    """
    from sklearn.metrics import silhouette_score
    zero = zero_rows(x)
    if zero.any():  # an all-zero vector has no direction: no cosine, so no score may use it
        keep = np.flatnonzero(~zero)
        found = separation(x[keep], [labels[i] for i in keep]) if len(keep) else Separation(None, None, None, "")
        left_out = f"{int(zero.sum())} all-zero vector(s) left out."
        return dataclasses.replace(found, note=" ".join(t for t in (found.note, left_out) if t))
    n = len(x)
    given = [i for i, lab in enumerate(labels) if lab]
    distinct = {labels[i] for i in given}
    if len(distinct) >= 2 and len(given) >= 3:
        xs, ls = x[given], [labels[i] for i in given]
        note = "" if len(given) == n else f"{n - len(given)} unlabelled occurrence(s) left out."
        chance = float(np.mean(chance_random_neighbour(ls)))
        sims = cosine_matrix(xs)  # one similarity matrix for both scores
        sil = (float(silhouette_score(cosine_distances(xs, sims), ls, metric="precomputed"))
               if len(distinct) < len(ls) else None)
        return Separation(sil, _knn_accuracy(sims, ls), chance, note)
    if n < 4:
        return Separation(None, None, None, "Too few occurrences for a score.")
    if float(np.ptp(x, axis=0).max()) == 0.0:
        return Separation(None, None, None, "All vectors are identical.")
    found = discover(x)  # the Senses tab's split: one answer to "how many groups" on the page
    if found is None or found.best is None:
        return Separation(None, None, None, "No grouping found.")
    weak = "" if found.clear else " (no clear clusters)"
    return Separation(found.silhouette, None, None,
                      f"No sense labels: silhouette of the best split into {found.best} groups{weak}.")


# ---- slider ranges and presets (the link itself: ``app.state``) ----------------------------------------------
W_RANGE = (-5.0, 5.0)
GAMMA_RANGE = (0.1, 3.0)


def fit_weights(weights: Sequence[float], num_layers: int) -> tuple[float, ...]:
    """Pad with zeros / cut to ``num_layers`` values (a link made with another model)."""
    w = tuple(weights)[:num_layers]
    return w + (0.0,) * (num_layers - len(w))


def preset_weights(name: str, num_layers: int) -> tuple[float, ...]:
    """Raw w for a preset: "equal" (s_j = 1/(L+1)), "top" (s_L ~ 1) or "bottom" (layer 0 only, s_0 ~ 1).

    The extremes use w = +-5 (the slider range): with three layers the chosen one gets s = 0.99991.
    """
    lo, hi = W_RANGE
    if name == "equal":
        return (0.0,) * num_layers
    if name == "top":
        return (lo,) * (num_layers - 1) + (hi,)
    if name == "bottom":
        return (hi,) + (lo,) * (num_layers - 1)
    raise ValueError(f"unknown preset {name!r}")

