"""Shared test fixtures: the two reference test sets (tiny weights + outputs from the original TF code), the
app's test environment and AppTest helpers, and the probes' tiny data."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ALLENNLP = FIXTURES / "allennlp-elmo"
BILM_TF = FIXTURES / "bilm-tf" / "model"


# ---- scratch files: in one folder of the run's own, removed at its end, never loose in the system's -------------
@pytest.fixture(scope="session", autouse=True)
def scratch_tmpdir(tmp_path_factory):
    """Every temporary file of the run goes into one folder made for it and removed when the run ends: ``tempfile``
    in this process (``mkdtemp``, ``NamedTemporaryFile``...) and, through ``TMPDIR``, every process a test starts
    (servers, torchrun ranks, Chromium's profiles, shell scripts' ``mktemp``). The tests' own files are in
    ``tmp_path``, which pyproject.toml's ``tmp_path_retention_policy = "failed"`` deletes after a passing run. The
    folder sits directly in the system's temporary folder, not under pytest's deeper base folder: Chromium puts its
    singleton socket in ``TMPDIR``, and a Unix socket's path must stay under 108 bytes."""
    tmp_path_factory.getbasetemp()  # pytest's base folder first, in the system's temporary folder, not in ours
    folder = Path(tempfile.mkdtemp(prefix="elmo-tests-"))
    saved_env, saved_tempdir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = saved_tempdir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def allennlp_files():
    return ALLENNLP / "options.json", ALLENNLP / "lm_weights.hdf5"


@pytest.fixture
def copied(tmp_path, allennlp_files):
    """The allennlp fixture's options and a copy of its weights in tmp_path, for tests that change the weights."""
    options, weights = allennlp_files
    target = tmp_path / "weights.hdf5"
    shutil.copy(weights, target)
    return options, target


@pytest.fixture(scope="session")
def bilm_tf_files():
    return BILM_TF / "options.json", BILM_TF / "lm_weights.hdf5"


@pytest.fixture(scope="session")
def fixture_sentences():
    return json.loads((ALLENNLP / "sentences.json").read_text())


@pytest.fixture
def tiny_embedder(allennlp_files):
    from elmo_core import Embedder

    return Embedder.from_elmo_files(*allennlp_files, device="cpu")


@pytest.fixture(scope="module")
def embedder(allennlp_files):
    """The fixture biLM, loaded once per test module (the app tests compare the page's vectors with it)."""
    from elmo_core import Embedder

    return Embedder.from_elmo_files(*allennlp_files, device="cpu")


@pytest.fixture(scope="module")
def fixture_bilm(allennlp_files):
    """The fixture biLM as a bare ``elmo_core.model.bilm.BiLM`` (no Embedder around it)."""
    from elmo_core.model.weights import load_bilm_from_elmo_files

    return load_bilm_from_elmo_files(*allennlp_files)


# ---- the app under AppTest -------------------------------------------------------------------------------------
ROOT = FIXTURES.parent.parent
APP = str(ROOT / "app" / "streamlit_app.py")
APP_TIMEOUT = 90  # seconds for one AppTest run: generous, the machine may be busy


def set_app_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Point the app at the fixture biLM, on the CPU, without the reference corpus, a background UMAP compile or any
    setting of the caller's environment that changes what the app loads; its files go under ``tmp_path``."""
    monkeypatch.setenv("ELMO_EXPLORER_OPTIONS", str(ALLENNLP / "options.json"))
    monkeypatch.setenv("ELMO_EXPLORER_WEIGHTS", str(ALLENNLP / "lm_weights.hdf5"))
    monkeypatch.setenv("ELMO_EXPLORER_DEVICE", "cpu")
    monkeypatch.setenv("ELMO_EXPLORER_UMAP_WARMUP", "0")  # no background numba compile during tests
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "no-reference.txt"))
    monkeypatch.delenv("ELMO_EXPLORER_ALLOW_SERVER_PATHS", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_CHECKPOINT", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_SESSION_MB", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_MODEL", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_ALLOW_DOWNLOADS", raising=False)
    # the published models: an empty cache of the test's own, and a base URL nothing listens on (the discard
    # port of this machine), so that no test sees the user's cache or reaches the network
    monkeypatch.setenv("ELMO_CORE_CACHE", str(tmp_path / "elmo-core-cache"))
    monkeypatch.setenv("ELMO_CORE_BASE_URL", "http://127.0.0.1:9/")


@pytest.fixture
def app_env(monkeypatch, tmp_path):
    """The app's test environment (``set_app_env``) for one test."""
    set_app_env(monkeypatch, tmp_path)


def _clear_streamlit_caches() -> None:
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture(scope="module")
def fresh_caches_per_module():
    """Streamlit's caches emptied once before a test module (models and activations stay across its tests)."""
    _clear_streamlit_caches()
    yield


@pytest.fixture
def fresh_caches():
    """Streamlit's caches emptied before each test (tests that count what a session holds)."""
    _clear_streamlit_caches()
    yield


def start_app(path: str = APP, timeout: float = APP_TIMEOUT, **query):
    """An AppTest of ``path`` run once, with the given URL query parameters."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(path, default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def no_errors(at) -> None:
    """The last run raised nothing and showed no error box."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# ---- probe results as a results file holds them -----------------------------------------------------------------
def fake_task(task: str, s: list[float] | None) -> dict:
    """A task result as a results file holds it (JSON), with made-up numbers."""
    from elmo_core.probes import TASKS

    own = {
        "wsd": {"mix_linear": 0.6, "mix_equal": 0.65},
        "pos": {"layers_converged": [True, True, False]},
        "loo_sense": {
            "mix_equal": 0.62,
            "mfs": 0.0,
            "chance_uniform": 0.45,
            "silhouette": [-0.08, None, 0.1],
            "silhouette_mix_equal": 0.02,
            "silhouette_bag_of_context": None,
        },
    }[task]
    paper = TASKS[task].paper
    mix = (
        {"mix_learned": 0.72, "s": s, "w": [0.0, 0.0, 0.0], "gamma": 1.0}
        if s is not None
        else {"mix_learned": None, "s": None, "w": None, "gamma": None}
    )
    return {
        "task": task,
        "title": f"{task} probe",
        "metric": "accuracy",
        "layers": [0.5, 0.7, 0.6],
        **mix,
        "layer_scale": [1.0, 1.0, 1.0],
        "baselines": {"mfs": 0.55},
        "paper": dataclasses.asdict(paper) if paper is not None else None,
        "data": {"source": "test", "n_train": 10, "n_test": 5, "split": "test", "subsample": "all"},
        "seconds": 0.1,
        **own,
    }


@pytest.fixture
def fixture_report(embedder, tmp_path):
    """(path, ProbeReport) of a results file for the fixture biLM with made-up results of the three tasks
    (the leave-one-out one has no learned mix)."""
    from elmo_core import probes

    data = probes.new_report(embedder).to_json()
    data["tasks"] = {
        "wsd": fake_task("wsd", [0.2, 0.3, 0.5]),
        "pos": fake_task("pos", [0.1, 0.6, 0.3]),
        "loo_sense": fake_task("loo_sense", None),
    }
    path = tmp_path / "probes.json"
    path.write_text(json.dumps(data))
    return path, probes.ProbeReport.from_json(data, probes.result_types())


def render_markdown(markdown: str) -> str:
    """The HTML that CommonMark with tables and strikethrough makes of ``markdown`` (what a page would show)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)


BANK_TEXT = """[river] We sat on the bank of the river.
[river] The river bank was muddy.
[river] Reeds covered the bank where the ducks nested.
[money] The bank raised its rates.
[money] I paid the cheque into the bank.
[money] A bank manager called me about the loan."""


@pytest.fixture(scope="module")
def bank(embedder):
    """(token table, occurrences of "bank") of six labelled sentences on the tiny fixture biLM: the input of
    ``app.explore.frame.compute_frame`` and ``app.explore.compare.compare``."""
    from app.explore import activations, inputs

    parsed = inputs.parse_input(BANK_TEXT)
    table = activations.TokenTable(parsed.lines, embedder.embed_batch([list(ln.tokens) for ln in parsed.lines]))
    return table, inputs.find_occurrences(parsed.lines, "bank")


def frame_of(at):
    """The ``app.explore.frame.Frame`` the explorer page drew in its last run (an AppTest of the app)."""
    return at.session_state["explorer_frame"]


PROBE_DATA = FIXTURES / "probes"  # tiny WordNet-format files and two Brown documents


def check_task_result(result, num_layers: int, task: str) -> None:
    """What every probe result must hold (elmo_core.probes.TaskResult), and that it survives JSON."""
    from elmo_core import probes

    entry = probes.TASKS[task]
    assert result.task == task and isinstance(result, entry.result_type) and result.title == entry.title
    assert len(result.layers) == num_layers and len(result.layer_scale) == num_layers
    values = [*result.layers, *([result.mix_learned] if result.has_mix else []), *result.baselines.values()]
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in values)
    if result.has_mix:  # a task that trains something learns a mix and has a training split
        assert len(result.s) == num_layers and len(result.w) == num_layers and result.gamma > 0
        assert abs(sum(result.s) - 1.0) < 1e-6 and all(0 < v < 1 for v in result.s)
        assert result.data.n_train > 0
    else:
        assert result.mix_learned is None and result.w is None and result.gamma is None and result.mix_learned_how
    assert result.paper == entry.paper and (result.paper is None or result.paper.layer_1 and result.paper.layer_2)
    assert result.data.n_test > 0
    assert type(result).from_json(json.loads(json.dumps(result.to_json()))) == result  # JSON round trip


# ---- hostile text: what a crafted link, label or file may hold (issue 10) ------------------------------------
LINK = "[click me](https://example.org/login)"
IMAGE = "![x](http://host/pixel.png)"
STYLED = ":red[**ALERT**] $x^2$ <b>bold</b> &amp; :material/home:"
LABEL_LINK = '<a href="https://example.org">link</a>'  # 37 characters: fits a [label]
LABEL_BIG = '<span style="font-size:80px">big'
SCRIPT_LABEL = "</script><script>alert(1)</script>"  # 35 characters: fits a [label]
# One corpus for every export and text-producing render function: each entry is a hostile string and what it aims at.
HOSTILE = [
    SCRIPT_LABEL,  # an inline <script> (the HTML map's embedded spec)
    "</SCRIPT ><img src=x onerror=alert(2)>",  # upper case, a space before ">", an event handler
    "<!--<script>alert(3)//",  # an HTML comment opened inside a script block changes how the block ends
    "x\u2028alert(4)\u2029y",  # line and paragraph separators: line breaks in older JavaScript
    '"};alert(5);//',  # closes a JSON string and object if quotes are not escaped
    LINK,  # a markdown link
    IMAGE,  # a markdown image
    "<https://example.org/a> www.example.org mail@example.org",  # GFM autolinks
    STYLED,  # Streamlit colour directives, bold, KaTeX, HTML, an entity
    LABEL_LINK,  # an HTML anchor
    LABEL_BIG,  # inline style
    "&lt;script&gt;alert(6)&lt;/script&gt;",  # entities: must show as typed, not be decoded into a tag
    r"$\href{javascript:alert(7)}{x}$",  # KaTeX link
    "$$x$$ \\ \\url{javascript:alert(8)}",  # display math, a LaTeX line break, \url
    "' + alert(9) + '",  # a Vega expression string breakout
    '{"expr": "alert(10)"}',  # a Vega expression object written as text
    "datum.x + alert(11)",  # a Vega expression
    "abc\u202etxt.exe",  # a right-to-left override: would show "abcexe.txt"
    "a\u200bb\u200dc\ufeffd\u2060e",  # zero-width characters
    "a\x00b\x07c\x1bd\x7fe",  # control characters
    '=HYPERLINK("http://example.org")',  # spreadsheet formulas
    "+1+1",
    "-2+3",
    "@SUM(A1)",
    " =1+1",
    "w" * 5000,  # a very long word
]


# ---- hostile model files (issue 26): made by the tests from the fixture biLM, never committed ---------------------
def crafted_weights(tmp_path: Path, how: str, mark: float = 0.0) -> bytes:
    """The fixture biLM's weights.hdf5 bytes, crafted: "unwritten" (CNN_proj/W_proj declared but never written: h5py
    would read zeros), "chunk bomb" (char_embed, 261 x 4, in one gzip chunk of 4,096 x 4,096: 64 MiB to inflate; the
    review's 16,384 x 16,384, 1 GiB, takes seconds to write and is test_weights'), or "marked" (intact,
    char_embed[1, 0] set to ``mark``: another model, another upload key)."""
    import shutil

    import h5py
    import numpy as np

    path = tmp_path / f"{how.replace(' ', '_')}_{mark:g}.hdf5"
    shutil.copy(ALLENNLP / "lm_weights.hdf5", path)
    with h5py.File(path, "a") as f:
        if how == "marked":
            f["char_embed"][1, 0] = mark
        else:
            name = {"unwritten": "CNN_proj/W_proj", "chunk bomb": "char_embed"}[how]
            shape, dtype = f[name].shape, f[name].dtype
            del f[name]
            if how == "unwritten":
                f.create_dataset(name, shape=shape, dtype=dtype)
            else:
                f.create_dataset(
                    name,
                    shape=shape,
                    dtype=dtype,
                    chunks=(4096, 4096),
                    maxshape=(None, None),
                    compression="gzip",
                    data=np.ones(shape, dtype),
                )
    return path.read_bytes()


def misspelt_options() -> bytes:
    """The fixture biLM's options.json with "use_skip_connection" (no final s): silently no residual, once."""
    options = json.loads((ALLENNLP / "options.json").read_text())
    options["lstm"]["use_skip_connection"] = options["lstm"].pop("use_skip_connections")
    return json.dumps(options).encode()


# The hostile-input review's wide model: 5,194,788 parameters (a 20.8 MB upload), LSTM cells of 16,384 with a
# projection of 16: small on disk, 833 KB of working memory per token position.
WIDE_OPTIONS = {
    "lstm": {
        "use_skip_connections": True,
        "projection_dim": 16,
        "cell_clip": 3,
        "proj_clip": 3,
        "dim": 16384,
        "n_layers": 1,
    },
    "char_cnn": {
        "activation": "relu",
        "filters": [[1, 16384]],
        "n_highway": 0,
        "embedding": {"dim": 4},
        "n_characters": 262,
        "max_characters_per_token": 50,
    },
}


@pytest.fixture(scope="session")
def wide_model_files(tmp_path_factory) -> tuple[bytes, bytes]:
    """(options.json, weights.hdf5) bytes of the wide model, random weights (seeded)."""
    import torch

    from elmo_core.model.bilm import BiLM
    from elmo_core.model.config import BiLMConfig
    from elmo_core.model.elmo_hdf5 import export_elmo_hdf5

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("wide") / "wide.hdf5"
    export_elmo_hdf5(BiLM(BiLMConfig.from_dict(WIDE_OPTIONS)), path)
    return json.dumps(WIDE_OPTIONS).encode(), path.read_bytes()


@pytest.fixture(scope="module")
def default_bank():
    """(layers float32 (3, 12, 256), labels) of "bank" in the explorer's "bank" example set, with the shipped
    default model: the numbers issue 29 measured the Senses tab and "fit s" on."""
    from app.explore import activations, inputs
    from app.explore.examples import EXAMPLE_SETS
    from elmo_core import Embedder

    example = EXAMPLE_SETS["bank"]
    parsed = inputs.parse_input(example.text)
    table = activations.TokenTable(
        parsed.lines, Embedder.default(device="cpu").embed_batch([list(ln.tokens) for ln in parsed.lines])
    )
    occurrences = inputs.find_occurrences(parsed.lines, example.word)
    return table.acts[:, table.rows(occurrences)], [o.label for o in occurrences]
