"""The published models' table: the architectures it names, lookup by name, the base URL and the files' URLs."""

from __future__ import annotations

import pytest

from elmo_core.model import published_table as table
from elmo_core.model.config import BiLMConfig


def test_the_table_matches_the_architectures_it_names():
    spec = {
        "small": (1024, 128, 1),
        "medium": (2048, 256, 1),
        "original": (4096, 512, 2),
        "original-5.5b": (4096, 512, 2),
    }
    for name, model in table.PUBLISHED.items():
        dim, proj, highway = spec[name]
        options = {
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
                "n_highway": highway,
                "embedding": {"dim": 16},
                "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
                "n_characters": 262,
                "max_characters_per_token": 50,
            },
        }
        assert BiLMConfig.from_dict(options).num_parameters() == model.parameters, name
        assert (model.lstm_dim, model.projection_dim, model.highway) == (dim, proj, highway)
        assert model.stem.startswith(f"2x{dim}_{proj}_2048cnn_{highway}xhighway")
    assert table.PUBLISHED["original"].weights_bytes == 374_434_792
    assert table.PUBLISHED["original"].urls()["weights.hdf5"] == (
        "https://allennlp.s3.amazonaws.com/models/elmo/2x4096_512_2048cnn_2xhighway/"
        "elmo_2x4096_512_2048cnn_2xhighway_weights.hdf5"
    )


def test_names_and_urls(monkeypatch):
    assert table.published_model("Original").name == "original"
    with pytest.raises(KeyError, match="did you mean 'small'"):
        table.published_model("smal")
    monkeypatch.setenv("ELMO_CORE_BASE_URL", "http://mirror.example/elmo")
    assert table.PUBLISHED["small"].urls()["options.json"].startswith("http://mirror.example/elmo/2x1024_128_")
    assert table.PUBLISHED["small"].urls("https://other/")["options.json"].startswith("https://other/2x1024")
    with pytest.raises(ValueError, match="http:// or https://"):
        table.resolve_base_url("file:///etc/")


@pytest.mark.parametrize("url", ["http://", "https:///elmo/", "http://:8080/"])
def test_a_base_url_without_a_host_is_refused(url):
    with pytest.raises(ValueError, match=r"names no host; give one such as https://mirror.example.org/elmo/"):
        table.resolve_base_url(url)
