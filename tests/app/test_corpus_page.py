"""The Corpus page (app/views/corpus.py) in AppTest with the tiny fixture biLM: the reference corpus's "bank" (every
sentence embedded on demand), an atlas built here with the same biLM, the user's sentences on the same map, and
hostile inputs (an empty word, a word not in the source, a huge one, a missing atlas) as clear messages."""

from __future__ import annotations

import collections
import json
import lzma
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from streamlit.testing.v1 import AppTest  # noqa: E402

from app.render.safe import shown  # noqa: E402
from elmo_core import REFERENCE_DIR  # noqa: E402
from tests.conftest import ALLENNLP, no_errors  # noqa: E402

PAGE = str(ROOT / "app" / "views" / "corpus.py")
TIMEOUT = 180  # the first run embeds bank's 297 reference sentences (a few seconds with the fixture biLM)

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches_per_module")


def fixture_corpus(bank: int = 40, other: int = 160) -> list[str]:
    """``bank`` reference sentences with "bank" and ``other`` without, interleaved."""
    with lzma.open(REFERENCE_DIR / "sentences.txt.xz", "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    has = [line for line in lines if "bank" in line.casefold().split()][:bank]
    rest = [line for line in lines[:2000] if "bank" not in line.casefold().split()][:other]
    return has + rest


def build_fixture_atlas(folder: Path) -> Path:
    """An atlas of ``fixture_corpus`` with the tiny fixture biLM in ``folder``/news (a few seconds)."""
    from elmo_core import Embedder, build_atlas

    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(fixture_corpus()) + "\n", encoding="utf-8")
    embedder = Embedder.from_elmo_files(ALLENNLP / "options.json", ALLENNLP / "lm_weights.hdf5", device="cpu")
    build_atlas(corpus, folder / "news", embedder, "fixture", min_count=3, batch_size=32, max_tokens=800)
    return folder / "news"


@pytest.fixture(scope="module")
def atlas_dir(tmp_path_factory) -> Path:
    return build_fixture_atlas(tmp_path_factory.mktemp("atlases"))


@pytest.fixture
def reference(monkeypatch):
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(REFERENCE_DIR))
    monkeypatch.delenv("ELMO_EXPLORER_ATLAS", raising=False)


def start() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()


def series(at: AppTest) -> dict[str, int]:
    """Points per legend entry of the map, as the page sends them."""
    import pyarrow as pa

    proto = at.get("vega_lite_chart")[0].proto
    blobs = [d.data.data for d in proto.datasets] + ([proto.data.data] if proto.data.data else [])
    rows = [row for blob in blobs for row in pa.ipc.open_stream(blob).read_all().to_pylist()]
    return dict(collections.Counter(r["series"] for r in rows if r["role"] != "query"))


def text(at: AppTest) -> str:
    return "\n".join(
        shown(e.value) for kind in ("markdown", "caption", "info", "warning", "error") for e in at.get(kind)
    )


def test_the_reference_corpus_shows_every_occurrence_of_bank(reference):
    at = start()
    no_errors(at)
    assert at.selectbox(key="corpus_source").value == "reference"
    assert at.selectbox(key="corpus_word").value == "bank"
    assert "311 occurrences of “bank” in the reference corpus" in text(at)  # 297 sentences, some with two
    assert sum(series(at).values()) == 311
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    bound = {p["name"]: p["bind"]["element"] for p in spec["params"] if isinstance(p.get("bind"), dict)}
    assert bound == {
        "live_w0": ".st-key-corpus_w_0 input[type=range]",
        "live_w1": ".st-key-corpus_w_1 input[type=range]",
        "live_w2": ".st-key-corpus_w_2 input[type=range]",
        "live_gamma": ".st-key-corpus_gamma input[type=range]",
    }
    assert "Sense groups" in text(at) and "needs an atlas" in text(at)
    # a weight moved by the rail: the groups and the map follow, the embedding is not run again
    at.slider(key="corpus_w_2").set_value(5.0).run()
    no_errors(at)
    assert "s = softmax(w) = (0.007, 0.007, 0.987)" in text(at)


def test_typed_sentences_are_placed_among_the_corpus_occurrences(reference):
    at = start()
    at.text_area(key="corpus_typed").input("We sat on the bank of the river.\nThe bank raised its rates.").run()
    no_errors(at)
    assert series(at)["your sentences"] == 2
    assert sum(series(at).values()) == 313


def _type_word(at: AppTest, word: str) -> AppTest:
    """A word typed into the "or any word" box."""
    return at.text_input(key="corpus_other_word").input(word).run()


def test_hostile_words_are_clear_messages(reference):
    at = start()
    _type_word(at, "zzqxqz")
    no_errors(at)
    assert "“zzqxqz” does not occur in the reference corpus (60,000 sentences)." in text(at)
    assert sum(series(at).values()) == 311  # the previous state kept: bank's map stays, and the page says so
    assert "The map still shows “bank”." in text(at)
    _type_word(at, "x" * 200)
    no_errors(at)
    assert "is not one word" in text(at)
    _type_word(at, "the bank")
    no_errors(at)
    assert "is not one word" in text(at)
    _type_word(at, "   ")  # blank: the picker's word again
    no_errors(at)
    assert sum(series(at).values()) == 311
    at.text_area(key="corpus_typed").input(("the bank " * 60 + "\n") * 100).run()
    no_errors(at)
    assert "Only your first 50 sentences are placed (of 100)." in text(at)
    assert series(at)["your sentences"] == 50 * 50  # each line cut to 100 tokens: 50 occurrences each


def test_an_atlas_opens_with_every_occurrence_and_a_missing_one_is_an_error_without_its_path(
    reference, atlas_dir, monkeypatch
):
    from elmo_core import Atlas

    monkeypatch.setenv("ELMO_EXPLORER_ATLAS", str(atlas_dir.parent))  # a folder of atlases
    at = start()
    no_errors(at)
    assert at.selectbox(key="corpus_source").value == "atlas:news"
    assert at.selectbox(key="corpus_word_atlas_0").value == "bank"
    count = Atlas.open(atlas_dir).count("bank")
    assert sum(series(at).values()) == count
    assert f"{count} occurrences of “bank” in the atlas “news”" in text(at)
    assert str(atlas_dir) not in text(at)
    monkeypatch.setenv("ELMO_EXPLORER_ATLAS", str(atlas_dir.parent / "gone"))
    at = start()
    no_errors(at)  # an atlas that does not open is not the first thing a visitor sees: the reference corpus is
    assert at.selectbox(key="corpus_source").value == "reference"
    assert sum(series(at).values()) == 311
    at.selectbox(key="corpus_source").set_value("atlas:gone").run()
    assert not at.exception
    (error,) = at.error
    assert "The atlas cannot be opened" in error.value and str(atlas_dir.parent) not in error.value
