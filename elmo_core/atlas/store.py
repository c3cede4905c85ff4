"""An atlas folder: its layout (written by ``elmo_core.atlas.build``) and ``Atlas``, which reads it.

Files (docs/ATLAS.md, "Storage"; every array a ``.npy`` read with ``allow_pickle=False``, memory-mapped):

* ``manifest.json``: ``format`` (``FORMAT``), the model (name, sha256 of its weights, layers, dim), the threshold,
  the stop words' count and hash, the counts, the index's settings;
* ``vectors.npy`` float16 (N, L, D): every kept occurrence's layer vectors (L = 3 for ELMo), in the order of
  ``occurrences.npy`` int32 (N, 3): (word id, sentence id, position), sorted by word, then sentence, then
  position, so a word's occurrences are rows ``word_offsets[w]:word_offsets[w + 1]`` (``word_offsets.npy``
  int64 (W + 1,)) of both;
* ``words.npy`` str (W,): the kept words (case-folded), sorted; the word id is the place in it;
* ``sentences.txt``: sentence i is line i (its tokens joined by single spaces, UTF-8), bytes
  ``sentence_offsets[i]:sentence_offsets[i + 1]`` with the line break (``sentence_offsets.npy`` int64 (S + 1,));
* ``ann.faiss``: the nearest-neighbour index (``elmo_core.atlas.ann``), row i of ``vectors.npy`` with id i.
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import NamedTuple

import numpy as np

from elmo_core.atlas import ann
from elmo_core.atlas.words import word_key
from elmo_core.model.strict_json import loads_strict

FORMAT = "elmo-explorer-atlas/1"
MANIFEST = "manifest.json"
VECTORS, OCCURRENCES, WORD_OFFSETS, WORDS = "vectors.npy", "occurrences.npy", "word_offsets.npy", "words.npy"
SENTENCES, SENTENCE_OFFSETS, ANN = "sentences.txt", "sentence_offsets.npy", "ann.faiss"
MAPPED = (VECTORS, OCCURRENCES, WORD_OFFSETS, SENTENCE_OFFSETS)  # memory-mapped when an atlas is opened
FILES = (MANIFEST, VECTORS, OCCURRENCES, WORD_OFFSETS, WORDS, SENTENCES, SENTENCE_OFFSETS, ANN)
EXACT_CHUNK = 65_536  # occurrences scored at a time by the exact search


class Neighbours(NamedTuple):
    """The k nearest occurrences, best first: ``rows`` int64 (k,) (rows of ``vectors.npy``), ``words`` list[str],
    ``sentences`` int32 (k,), ``positions`` int32 (k,), ``cosines`` float32 (k,) in the requested mix."""

    rows: np.ndarray
    words: list[str]
    sentences: np.ndarray
    positions: np.ndarray
    cosines: np.ndarray


def _file(folder: Path, name: str) -> Path:
    path = folder / name
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ValueError(f"the atlas file {path} is a link or not a regular file; an atlas holds plain files only")
    if not path.exists():
        raise ValueError(f"the atlas {folder} is incomplete: {name} is missing (rebuild it with atlas build)")
    return path


def _array(folder: Path, name: str, dtype: str, ndim: int) -> np.ndarray:
    try:
        array = np.load(_file(folder, name), mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"the atlas file {folder / name} is damaged ({exc})") from None
    if array.dtype != np.dtype(dtype) or array.ndim != ndim:
        raise ValueError(
            f"the atlas file {folder / name} holds {array.dtype} {array.shape}, not {dtype} of {ndim} axes"
        )
    return array


def _weights(weights, layers: int) -> np.ndarray:
    if weights is None:
        return np.full(layers, 1.0 / layers, dtype=np.float32)
    try:
        if np.iscomplexobj(weights):
            raise TypeError("complex")
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be {layers} numbers, got {weights!r}") from None
    with np.errstate(over="ignore"):
        total = w.sum() if w.shape == (layers,) else np.nan
    if w.shape != (layers,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not 0 < total < np.inf:
        raise ValueError(f"weights must be {layers} finite numbers >= 0, not all 0 (one per layer), got {weights!r}")
    return (w / w.sum()).astype(np.float32)


class Atlas:
    """A built atlas, opened read-only; arrays are memory-mapped, so opening costs little whatever its size."""

    def __init__(self, folder: Path, manifest: dict, arrays: dict[str, np.ndarray]):
        self.folder, self.manifest = folder, manifest
        self._vectors, self._occurrences = arrays[VECTORS], arrays[OCCURRENCES]
        self._word_offsets, self._sentence_offsets = arrays[WORD_OFFSETS], arrays[SENTENCE_OFFSETS]
        self._words = [str(w) for w in arrays[WORDS]]
        self._index = None
        self.num_occurrences, self.num_layers, self.dim = self._vectors.shape
        # The arrays are memory-mapped: reading past the end of a file cut short while the atlas is open kills the
        # process (SIGBUS, which Python cannot catch), so each read first checks that no file changed size.
        self._sizes = {name: (folder / name).stat().st_size for name in (*MAPPED, SENTENCES)}

    def _unchanged(self) -> None:
        """Raises: ValueError when a file of the atlas was removed or changed size since it was opened."""
        for name, size in self._sizes.items():
            try:
                now = (self.folder / name).stat().st_size
            except OSError:
                now = None
            if now != size:
                raise ValueError(
                    f"the atlas {self.folder} changed on disk since it was opened ({name} "
                    f"{'is gone' if now is None else 'changed size'}): open it again"
                )

    @classmethod
    def open(cls, folder: str | Path) -> Atlas:
        """Open the atlas in ``folder`` (``python -m elmo_core atlas build``), reading nothing outside it.
        Raises: FileNotFoundError when the folder or its manifest is missing; ValueError for a file that is
        missing, damaged, a link, of another format version or inconsistent with the manifest."""
        folder = Path(folder)
        if not folder.exists():
            raise FileNotFoundError(f"no atlas at {folder}: the folder does not exist")
        if not folder.is_dir():
            raise ValueError(f"{folder} is not a folder; an atlas is a folder (python -m elmo_core atlas build)")
        if not (folder / MANIFEST).exists():
            raise FileNotFoundError(f"{folder} has no {MANIFEST}: not an atlas (python -m elmo_core atlas build)")
        try:
            manifest = loads_strict(_file(folder, MANIFEST).read_bytes(), str(folder / MANIFEST))
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"the atlas manifest {folder / MANIFEST} cannot be read ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else None
            raise ValueError(f"{folder} is an atlas of format {found!r}; this library reads {FORMAT!r}: rebuild it")
        kinds = dict(zip(MAPPED, (("<f2", 3), ("<i4", 2), ("<i8", 1), ("<i8", 1)), strict=True))
        arrays = {name: _array(folder, name, *kind) for name, kind in kinds.items()}
        try:
            arrays[WORDS] = np.load(_file(folder, WORDS), allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"the atlas file {folder / WORDS} is damaged ({exc})") from None
        _check(folder, manifest, arrays, _file(folder, SENTENCES).stat().st_size)
        _file(folder, ANN)
        return cls(folder, manifest, arrays)

    # ---- words and occurrences -------------------------------------------------------------------
    def words(self) -> list[str]:
        """The kept words (case-folded), sorted."""
        return list(self._words)

    def word_id(self, word: str) -> int:
        """The id of ``word`` (case-folded first). Raises: ValueError for a word the atlas does not hold."""
        if not isinstance(word, str):
            raise ValueError(f"a word is a str, got {type(word).__name__}")
        key = word_key(word.strip()) or word
        at = bisect.bisect_left(self._words, key)
        if at == len(self._words) or self._words[at] != key:
            raise ValueError(
                f"{word!r} is not in this atlas: it keeps words with at least {self.manifest.get('min_count')} "
                "occurrences that are not stop words (Atlas.words() lists them)"
            )
        return at

    def count(self, word: str) -> int:
        """How many occurrences of ``word`` the atlas holds. Raises: ValueError as ``word_id``."""
        w = self.word_id(word)
        return int(self._word_offsets[w + 1] - self._word_offsets[w])

    def occurrences(self, word: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every occurrence of ``word`` (case-folded first) in the corpus, by sentence then position.
        Returns: (vectors float32 (n, L, D): the layer vectors, stored as float16; sentence ids int32 (n,);
        positions int32 (n,): token index in ``sentence(i)``). Raises: ValueError as ``word_id``."""
        w = self.word_id(word)
        self._unchanged()
        a, b = int(self._word_offsets[w]), int(self._word_offsets[w + 1])
        occ = np.asarray(self._occurrences[a:b])
        return np.asarray(self._vectors[a:b], dtype=np.float32), occ[:, 1].copy(), occ[:, 2].copy()

    def sentence(self, i: int) -> list[str]:
        """Sentence ``i`` (line i of the corpus) as its tokens. Raises: ValueError for an id out of range, or when
        the atlas's files changed on disk since it was opened or its sentences cannot be read."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(self._sentence_offsets) - 1:
            raise ValueError(f"sentence ids are whole numbers from 0 to {len(self._sentence_offsets) - 2}, got {i!r}")
        a, b = int(self._sentence_offsets[i]), int(self._sentence_offsets[i + 1])
        self._unchanged()
        try:
            with open(self.folder / SENTENCES, "rb") as f:
                f.seek(a)
                return f.read(b - a).decode("utf-8").rstrip("\n").split()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"the atlas file {self.folder / SENTENCES} cannot be read ({exc})") from None

    @property
    def num_sentences(self) -> int:
        return len(self._sentence_offsets) - 1

    # ---- nearest contexts ------------------------------------------------------------------------
    def nearest(self, query_vector, k: int = 10, weights=None, exact: bool = False, candidates: int | None = None):
        """The ``k`` occurrences (of any word) nearest to ``query_vector`` by cosine in the mix ``weights``.

        Args:
            query_vector: float (L, D), e.g. one row of ``occurrences(word)[0]`` (mixed with ``weights``), or
                (D,), a vector already mixed.
            k: 1..N results. weights: L numbers >= 0 (not all 0), the layer weights s_j of the mix
                sum_j s_j h_j (normalised to sum 1; None: equal). Cosine ignores ELMo's gamma.
            exact: True: score every occurrence (chunked brute force, exact); False: the index's candidates.
            candidates: how many candidates the index proposes for exact re-ranking (default max(20 k, 200)).
        Returns: ``Neighbours``, best first (ties: lower row first). Only which candidates are looked at is
            approximate; their cosines and order are exact (docs/ATLAS.md).
        Raises: ValueError for a query of another shape or not finite, a bad k, weights or candidates, or an
            atlas whose files changed on disk since it was opened.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= self.num_occurrences:
            raise ValueError(f"k must be a whole number from 1 to {self.num_occurrences}, got {k!r}")
        w = _weights(weights, self.num_layers)
        try:
            if np.iscomplexobj(query_vector):
                raise TypeError("complex")
            q = np.asarray(query_vector, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValueError("query_vector must be an array of real numbers") from None
        if q.shape not in ((self.num_layers, self.dim), (self.dim,)):
            raise ValueError(
                f"query_vector must be of shape ({self.num_layers}, {self.dim}) or ({self.dim},), got {q.shape}"
            )
        if not np.all(np.isfinite(q)):
            raise ValueError("query_vector holds NaN or infinite values")
        if not np.any(q):
            raise ValueError("query_vector is all zeros: a cosine needs a direction")
        mixed = ann.mix_rows(q[None], w)[0] if q.ndim == 2 else q / max(float(np.linalg.norm(q)), 1e-30)
        self._unchanged()
        if exact:
            rows, scores = self._exact(mixed, w, k)
        else:
            n = candidates if candidates is not None else max(20 * k, 200)
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < k:
                raise ValueError(f"candidates must be a whole number >= k ({k}), got {candidates!r}")
            equal = np.full(self.num_layers, 1.0 / self.num_layers, dtype=np.float32)
            probe = ann.mix_rows(q[None], equal)[0] if q.ndim == 2 else mixed
            found = np.sort(ann.search(self._ann(), probe, min(int(n), self.num_occurrences)))
            scores = ann.mix_rows(self._vectors[found], w) @ mixed
            rows, scores = _top(found, scores, k)
        occ = np.asarray(self._occurrences[rows])
        return Neighbours(rows, [self._words[i] for i in occ[:, 0]], occ[:, 1].copy(), occ[:, 2].copy(), scores)

    def _exact(self, mixed: np.ndarray, w: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        best_rows, best_scores = np.empty(0, np.int64), np.empty(0, np.float32)
        for first in range(0, self.num_occurrences, EXACT_CHUNK):
            scores = ann.mix_rows(self._vectors[first : first + EXACT_CHUNK], w) @ mixed
            rows = np.arange(first, first + len(scores), dtype=np.int64)
            best_rows, best_scores = _top(np.concatenate([best_rows, rows]), np.concatenate([best_scores, scores]), k)
        return best_rows, best_scores

    def _ann(self):
        if self._index is None:
            index = ann.read_index(_file(self.folder, ANN))
            if index.ntotal != self.num_occurrences or index.d != self.dim:
                raise ValueError(f"the atlas's index {self.folder / ANN} does not match its vectors: rebuild the atlas")
            self._index = index
        return self._index


def _top(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (rows, scores): score descending, then row ascending."""
    if len(rows) > k:
        keep = np.argpartition(-scores, k - 1)[:k]
        cut = scores[keep].min()
        keep = np.flatnonzero(scores >= cut)  # every row tied with the k-th, for a deterministic tie order
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:k]
    return rows[order].astype(np.int64), scores[order].astype(np.float32)


def _check(folder: Path, manifest: dict, arrays: dict[str, np.ndarray], sentence_bytes: int) -> None:
    """The arrays agree with each other and with the manifest. Raises: ValueError naming what disagrees."""
    vectors, occ, offsets = arrays[VECTORS], arrays[OCCURRENCES], arrays[WORD_OFFSETS]
    words, sentence_offsets = arrays[WORDS], arrays[SENTENCE_OFFSETS]
    model, counts = manifest.get("model", {}), manifest.get("counts", {})
    n, s = len(vectors), len(sentence_offsets) - 1
    problems = []
    if words.dtype.kind != "U" or words.ndim != 1:
        problems.append(f"{WORDS} is not a list of words")
    if (vectors.shape[1:] != (model.get("layers"), model.get("dim"))) or counts.get("occurrences") != n:
        problems.append(f"{VECTORS} {vectors.shape} disagrees with the manifest")
    if occ.shape != (n, 3):
        problems.append(f"{OCCURRENCES} {occ.shape} is not ({n}, 3)")
    if len(offsets) != len(words) + 1 or (len(offsets) and (offsets[0] != 0 or offsets[-1] != n)):
        problems.append(f"{WORD_OFFSETS} does not cover the {n} occurrences of {len(words)} words")
    elif np.any(np.diff(offsets) < 0):
        problems.append(f"{WORD_OFFSETS} is not ascending")
    if s < 0 or counts.get("sentences") != s or sentence_offsets[0] != 0 or sentence_offsets[-1] != sentence_bytes:
        problems.append(f"{SENTENCE_OFFSETS} does not cover {SENTENCES}")
    elif np.any(np.diff(sentence_offsets) < 1):
        problems.append(f"{SENTENCE_OFFSETS} is not ascending")
    if not problems and n and (occ[:, 1].min() < 0 or occ[:, 1].max() >= s or occ[:, 0].min() < 0):
        problems.append(f"{OCCURRENCES} points outside the sentences")
    if not problems and n and not np.array_equal(np.repeat(np.arange(len(words)), np.diff(offsets)), occ[:, 0]):
        problems.append(f"{OCCURRENCES} is not sorted by word as {WORD_OFFSETS} says")
    if problems:
        raise ValueError(f"the atlas {folder} is damaged: {'; '.join(problems)}")
