"""elmo_core.model.config: BiLMConfig from options.json (checked before anything is allocated), its parameter count
and its round trip. Loading weights with these options is tested in test_weights.py."""

from __future__ import annotations

import copy
import json

import pytest

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig

FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]


def published(dim: int, proj: int, highway: int) -> dict:
    return {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": proj,
            "cell_clip": 3,
            "proj_clip": 3,
            "dim": dim,
            "n_layers": 2,
        },
        "char_cnn": {
            "activation": "relu",
            "filters": FILTERS,
            "n_highway": highway,
            "embedding": {"dim": 16},
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    }


def test_parameter_counts_match_published_models():
    """ELMO_SPEC.md section 1.2: Small 13,593,296 and Original 93,600,848 parameters, counted without building
    the model and by the built one alike."""
    for dim, proj, highway, expected in [(1024, 128, 1, 13_593_296), (4096, 512, 2, 93_600_848)]:
        cfg = BiLMConfig.from_dict(published(dim, proj, highway))
        assert cfg.num_parameters() == expected
        if dim == 1024:  # the Original is built only by count: 375 MB of float32
            assert BiLM(cfg).num_parameters() == expected


def test_the_fixture_options_and_the_round_trip(allennlp_files, tmp_path):
    cfg = BiLMConfig.from_options_json(allennlp_files[0])
    assert cfg.num_parameters() == 105_120 and cfg.num_layers == 3 and cfg.output_dim == 2 * cfg.projection_dim
    cfg.save(tmp_path / "options.json")
    again = BiLMConfig.from_options_json(tmp_path / "options.json")
    assert again == cfg and json.loads((tmp_path / "options.json").read_text())["lstm"] == cfg.to_dict()["lstm"]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda o: o["lstm"].pop("dim"), "dim"),
        (lambda o: o["lstm"].update(n_layers=0), r"lstm.n_layers = 0 is outside the supported range"),
        (lambda o: o["char_cnn"].update(filters="wide"), "filters"),
        (lambda o: o.pop("char_cnn"), "char_cnn"),
    ],
)
def test_bad_options_are_named(change, message):
    options = copy.deepcopy(published(1024, 128, 1))
    change(options)
    with pytest.raises(ValueError, match=message):
        BiLMConfig.from_dict(options)
    with pytest.raises(ValueError, match="JSON object"):
        BiLMConfig.from_dict(["not", "an", "object"])


def test_the_parameter_budget(monkeypatch):
    cfg = BiLMConfig.from_dict(published(4096, 512, 2))
    cfg.check_budget(100_000_000)
    with pytest.raises(ValueError, match="93,600,848 parameters .* over this server's budget of 1,000,000"):
        cfg.check_budget(1_000_000)
    monkeypatch.setenv("ELMO_MAX_PARAMETERS", "50000000")
    with pytest.raises(ValueError, match="budget of 50,000,000"):
        cfg.check_budget()


def test_a_file_that_is_not_json(tmp_path):
    bad = tmp_path / "options.json"
    bad.write_text("{lstm: ", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        BiLMConfig.from_options_json(bad)
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="not a UTF-8 JSON options file"):
        BiLMConfig.from_options_json(bad)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda o: o["lstm"].update(use_skip_connection=o["lstm"].pop("use_skip_connections")),
            "unknown key 'lstm.use_skip_connection'; did you mean 'lstm.use_skip_connections'?",
        ),
        (lambda o: o["lstm"].update(cell_clp=3), "unknown key 'lstm.cell_clp'; did you mean 'lstm.cell_clip'?"),
        (
            lambda o: o["char_cnn"].update(activaton="tanh"),
            "unknown key 'char_cnn.activaton'; did you mean 'char_cnn.activation'?",
        ),
        (lambda o: o["char_cnn"]["embedding"].update(dims=8), "unknown key 'char_cnn.embedding.dims'; did you mean"),
        (lambda o: o.update(colour=1), r"unknown key 'colour' \(known here: lstm, char_cnn, bidirectional"),
        (lambda o: o.update(n_epochs=[1]), "training key 'n_epochs' must be a number or true/false, got list"),
        (lambda o: o.update(lstm=[1]), "'lstm' must be a JSON object, got list"),
        (lambda o: o["char_cnn"]["filters"].append([[[1]]]), "nested deeper than an options file"),
    ],
)
def test_every_key_is_known_or_the_file_is_refused(change, message, tmp_path):
    """A misspelt key used to be ignored and its default taken: without the final s of use_skip_connections the
    residual connection was silently off (layer 2 off by up to 3.0)."""
    options = copy.deepcopy(published(1024, 128, 1))
    change(options)
    (tmp_path / "my_options.json").write_text(json.dumps(options))
    with pytest.raises(ValueError, match=r"^my_options\.json: " + message):
        BiLMConfig.from_options_json(tmp_path / "my_options.json")


def test_training_keys_are_kept(tmp_path):
    options = {**published(1024, 128, 1), "n_epochs": 10, "dropout": 0.1, "bidirectional": True}
    cfg = BiLMConfig.from_dict(options)
    assert cfg.extra == {"n_epochs": 10, "dropout": 0.1, "bidirectional": True}
    assert cfg.to_dict()["n_epochs"] == 10


@pytest.mark.parametrize(
    "data, message",
    [
        (b"[" * 30000 + b"]" * 30000, "nested deeper than an options file"),  # Python's parser would recurse to death
        (b"{" + b" " * 70000 + b"}", "70,002 bytes, more than an options file"),
        (b"\xff\xfe", "not a UTF-8 JSON options file"),
        (b'{"lstm": ', "not valid JSON"),
    ],
)
def test_malformed_options_bytes_are_one_value_error_naming_the_file(data, message, tmp_path):
    with pytest.raises(ValueError, match=r"^upload\.json: " + message):
        BiLMConfig.from_json_bytes(data, "upload.json")
    (tmp_path / "o.json").write_bytes(data)
    with pytest.raises(ValueError, match=r"^o\.json: " + message):
        BiLMConfig.from_options_json(tmp_path / "o.json")


def test_a_key_given_twice_is_refused_naming_it(allennlp_files, tmp_path):
    """The reported case: options.json with use_skip_connections true, then false. JSON keeps the last one
    silently, so the residual connection was off and layer 2 differed by up to 1.94; now the file is refused."""
    text = allennlp_files[0].read_text()
    twice = text.replace(
        '"use_skip_connections": true,', '"use_skip_connections": true, "use_skip_connections": false,'
    )
    assert twice != text
    (tmp_path / "options.json").write_text(twice)
    message = r"^options\.json: the key 'use_skip_connections' appears twice in one object"
    with pytest.raises(ValueError, match=message):
        BiLMConfig.from_options_json(tmp_path / "options.json")
    with pytest.raises(ValueError, match=message.replace("options", "upload")):
        BiLMConfig.from_json_bytes(twice.encode(), "upload.json")


def test_a_dim_given_twice_is_named_not_a_shape_error(allennlp_files, tmp_path):
    """A second lstm.dim used to load the options and fail later on the weights' shapes."""
    from elmo_core.model.weights import load_bilm_from_elmo_files

    options, weights = allennlp_files
    (tmp_path / "options.json").write_text(options.read_text().replace('"dim": 64', '"dim": 64, "dim": 32'))
    with pytest.raises(ValueError, match=r"^options\.json: the key 'dim' appears twice in one object"):
        load_bilm_from_elmo_files(tmp_path / "options.json", weights)
