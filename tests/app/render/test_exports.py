"""app.render.exports: Embedding Projector files, CSV and .npz, each with the settings, numbered from 1, made safe."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import numpy as np
import pytest

from app.explore import inputs
from app.explore.controls import Controls
from app.render import exports

LINES = [
    inputs.Line("=cmd bank here", "=HYPERLINK(x)", ("=cmd", "bank", "here")),
    inputs.Line("No word", None, ("No", "word")),
    inputs.Line("a\tbank", "river", ("a", "bank\tx")),
]
OCC = [inputs.Occurrence(0, 1, "bank", "=HYPERLINK(x)"), inputs.Occurrence(2, 1, "bank\tx", "river")]
X = np.array([[0.5, -1.25], [2.0, 3.0]], dtype=np.float32)
SETTINGS = exports.Settings(
    Controls(model="lm-only", word="bank", weights=(0.0, 1.0, -0.5), gamma=2.0, layer_norm=True),
    (0.25, 0.5, 0.25),
    "pca",
)


def test_safe_cell():
    assert exports.safe_cell("a\tb\nc\r\nd") == "a b c d"
    for bad in ("=1+1", "+1", "-2", "@SUM(A1)", "  =x"):
        assert exports.safe_cell(bad).startswith("'"), bad
    assert exports.safe_cell("bank") == "bank" and exports.safe_cell("a=b") == "a=b"
    assert exports.safe_cell("x\u2028=y") == "x =y"


def test_projector_files_have_a_header_one_row_per_vector_and_safe_labels():
    vectors, metadata = exports.projector_tsv(LINES, OCC, X, clusters=[1, -1])
    rows = vectors.decode().splitlines()
    assert rows == ["0.5\t-1.25", "2\t3"]
    meta = metadata.decode().splitlines()
    assert meta[0].split("\t") == exports.METADATA_HEADER
    assert len(meta) == 1 + len(OCC)
    cells = [m.split("\t") for m in meta[1:]]
    assert all(len(c) == len(exports.METADATA_HEADER) for c in cells)  # no tab inside a cell
    first, second = (dict(zip(exports.METADATA_HEADER, c)) for c in cells)
    assert first["label"] == "'=HYPERLINK(x)" and first["occurrence"] == "1" and first["sentence"] == "1"
    assert first["token_in_sentence"] == "2" and first["cluster"] == "2" and first["context"] == "'=cmd [bank] here"
    assert second["token"] == "bank x" and second["sentence"] == "3" and second["cluster"] == ""
    with pytest.raises(ValueError, match="non-finite"):
        exports.projector_tsv(LINES, OCC, np.array([[np.nan, 0], [0, 0]]))
    with pytest.raises(ValueError, match="2 occurrences"):
        exports.projector_tsv(LINES, OCC, X[:1])


def test_projector_zip_carries_the_settings_and_the_sentences():
    data = exports.projector_zip(LINES, OCC, X, SETTINGS)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert sorted(z.namelist()) == ["metadata.tsv", "settings.json", "vectors.tsv"]
        doc = json.loads(z.read("settings.json"))
    assert doc["settings"]["model"] == "lm-only" and doc["settings"]["w"] == [0.0, 1.0, -0.5]
    assert doc["settings"]["s"] == [0.25, 0.5, 0.25] and doc["settings"]["gamma"] == 2.0
    assert doc["settings"]["layer_norm"] is True and doc["settings"]["word"] == "bank"
    assert [s["sentence"] for s in doc["sentences"]] == [1, 2, 3]
    assert doc["sentences"][1] == {"sentence": 2, "label": "", "text": "No word", "tokens": ["No", "word"]}
    assert doc["occurrences"][1] == {"occurrence": 2, "sentence": 3, "token": 2, "form": "bank\tx", "label": "river"}


def test_vectors_csv_counts_from_one_and_repeats_the_settings():
    rows = list(csv.reader(io.StringIO(exports.vectors_csv(LINES, OCC, X, SETTINGS).decode())))
    assert rows[0] == exports.OCCURRENCE_HEADER + exports.SETTINGS_HEADER + ["v0", "v1"]
    assert rows[1] == [
        "1",
        "1",
        "2",
        "bank",
        "'=HYPERLINK(x)",
        "'=cmd bank here",
        "lm-only",
        "0 1 -0.5",
        "0.2500 0.5000 0.2500",
        "2",
        "yes",
        "0.5",
        "-1.25",
    ]
    assert rows[2][:3] == ["2", "3", "2"] and rows[2][5] == "a bank"
    coords = list(
        csv.reader(
            io.StringIO(exports.coords_csv(LINES, OCC, np.array([[1.0, 2.0], [3, 4]]), SETTINGS, [0, 1]).decode())
        )
    )
    assert coords[0][6:10] == ["x", "y", "cluster", "projection"]
    assert coords[1][:3] == ["1", "1", "2"] and coords[1][6:10] == ["1", "2", "1", "pca"]
    assert coords[2][8] == "2"


def test_npz_holds_arrays_settings_and_sentences_without_pickle():
    layers = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    data = exports.npz_bytes({"layers": layers}, SETTINGS, LINES, OCC)
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        np.testing.assert_array_equal(z["layers"], layers)
        assert list(z["sentences"]) == ["=cmd bank here", "No word", "a\tbank"]
        doc = json.loads(str(z["settings"]))
    assert doc["settings"]["layer_norm"] is True and doc["occurrences"][0]["occurrence"] == 1


def test_file_names_and_png_config():
    assert exports.file_stem("bank", "weights.hdf5", "map") == "elmo_bank_weights_map"
    assert exports.file_stem("naïve/../x", "lm-only", "mix") == "elmo_na_ve_x_lm-only_mix"
    assert exports.png_config("elmo_x")["toImageButtonOptions"] == {"format": "png", "filename": "elmo_x", "scale": 2}


def test_the_projector_export_is_refused_for_non_finite_vectors():
    assert exports.projector_refusal(np.ones((3, 4), dtype=np.float32)) == ""
    bad = np.ones((3, 4))
    bad[1, 2] = np.inf
    assert "non-finite values" in exports.projector_refusal(bad)
    assert "non-finite values" in exports.projector_refusal(np.full((2, 2), np.nan))
