"""elmo_core.paths: the shipped assets resolve in a checkout, and prepared data follow $ELMO_DATA_DIR."""

from __future__ import annotations

from pathlib import Path

from elmo_core import paths


def test_assets_are_found():
    models = [folder / "options.json" for folder in paths.BUNDLED_MODELS.values()]
    from elmo_core.data.reference import INDEX_FILE, SENTENCES_FILE

    for path in (
        paths.DEFAULT_MODEL_DIR / "options.json",
        paths.REFERENCE_CORPUS / INDEX_FILE,
        paths.REFERENCE_CORPUS / SENTENCES_FILE,
        paths.OWN_SENTENCES,
        paths.SENSE_PROBE,
        paths.DEFAULT_PROBE_RESULTS,
        *models,
    ):
        assert path.is_file(), path
    assert paths.REPO_ROOT == Path(__file__).resolve().parent.parent  # the tests run from a checkout


def test_data_dirs_follow_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_DATA_DIR", str(tmp_path))
    assert paths.data_dir() == tmp_path
    assert paths.probe_data_dir() == tmp_path / "probes" and paths.corpus_dir() == tmp_path / "corpus"
    monkeypatch.delenv("ELMO_DATA_DIR")
    assert paths.data_dir() == paths.REPO_ROOT / "data"
