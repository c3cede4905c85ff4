"""What `pip install .` ships: every package folder, the assets inside elmo_core, the app's Streamlit settings,
and no code that reaches outside the installed packages at run time (tests/, docs outside the repository)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_listed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for pkg in ("elmo_core", "app")
        for p in (ROOT / pkg).rglob("__init__.py")
    }
    asset_folders = {
        f"elmo_core.assets.{d.name}" for d in (ROOT / "assets").iterdir() if d.is_dir() and d.name.isidentifier()
    }
    assert found | {"elmo_core.assets"} | asset_folders == listed


def test_console_scripts_point_at_functions():
    import importlib

    for name, target in _pyproject()["project"]["scripts"].items():
        module, _, func = target.partition(":")
        assert callable(getattr(importlib.import_module(module), func)), name


def test_package_data_covers_every_asset():
    data = _pyproject()["tool"]["setuptools"]["package-data"]["elmo_core.assets"]
    assets = ROOT / "assets"
    for path in assets.rglob("*"):
        if path.is_file():
            rel = path.relative_to(assets).as_posix()
            assert any(Path(rel).match(pattern) for pattern in data), rel


def test_no_run_time_code_reads_tests_or_outside_documents():
    # a docstring or path that points outside the repository (../) or into tests/ breaks an installed copy
    for path in [*(ROOT / "elmo_core").rglob("*.py"), *(ROOT / "app").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.\./shared|\"tests\"|'tests'|tests/fixtures", text), path


def test_the_app_imports_its_packages_without_path_edits():
    # `app` and `elmo_core` are installed packages; a script that patches the import path hides that they
    # are not (elmo_core.data.fetch's import of a data-prep helper from its scratch folder is another matter)
    for path in (ROOT / "app").rglob("*.py"):
        assert "sys.path" not in path.read_text(encoding="utf-8"), path


def test_no_large_file_is_committed_outside_assets():
    """Only the shipped models and data (assets/) may be large: a training checkpoint committed once is
    downloaded by every clone forever (resume from the shipped weights with init_from instead)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if listing.returncode != 0:
        pytest.skip("not a git checkout: nothing is committed here")
    large = [
        (name, (root / name).stat().st_size)
        for name in listing.stdout.decode().split("\0")
        if name
        and not name.startswith("assets/")
        and (root / name).is_file()
        and (root / name).stat().st_size > 2_000_000
    ]
    assert large == [], f"files over 2 MB outside assets/: {large}"


def test_the_apps_javascript_is_package_data():
    """The live map's bridge is read from the installed package: a wheel without it would draw a map that never moves."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = sorted(p.name for p in (ROOT / "app" / "views").glob("*.js"))
    assert shipped == ["live_bridge.js"] and "*.js" in data["app.views"]
