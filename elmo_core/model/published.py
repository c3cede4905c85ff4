"""The published English ELMo models: the local cache that holds them, and getting them into it.

Which models there are, and where each one's files are published, is the table's
(``elmo_core.model.published_table``: ``PUBLISHED``, ``published_model``, ``resolve_base_url``).

The cache: ``CACHE/NAME/options.json``, ``CACHE/NAME/weights.hdf5`` and ``CACHE/NAME/manifest.json`` (each
file's bytes, sha256 and source URL, written only after both files passed every check). CACHE is the
``cache_dir`` argument, else ``$ELMO_CORE_CACHE``, else the platform's user cache folder (``platformdirs``:
``~/.cache/elmo-core`` on Linux), never a temporary folder, so a model survives reboots. A model folder is
self-contained: copying it to another machine's cache is how to work offline.

Nothing here touches the network unless ``download`` is called; loading reads only the cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from elmo_core.model.config import BiLMConfig
from elmo_core.model.download import DownloadError, Policy, fetch, sha256_of
from elmo_core.model.elmo_hdf5 import check_elmo_files
from elmo_core.model.published_table import (
    DEFAULT_BASE_URL,
    OPTIONS,
    WEIGHTS,
    PublishedModel,
    published_model,
    resolve_base_url,
)
from elmo_core.model.strict_json import loads_strict

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "elmo-core-cache/1"


def resolve_cache_dir(cache_dir: str | Path | None = None) -> Path:
    """The cache folder: ``cache_dir``, else ``$ELMO_CORE_CACHE``, else the platform's user cache folder for
    elmo-core (``platformdirs.user_cache_dir``). Read at call time; nothing is created."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    if os.environ.get("ELMO_CORE_CACHE"):
        return Path(os.environ["ELMO_CORE_CACHE"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("elmo-core", appauthor=False))


@dataclass(frozen=True)
class CacheEntry:
    """What the cache holds for one model. ``state``: "cached" (manifest and files of the recorded sizes),
    "missing" (nothing usable) or "damaged" (``detail`` says what)."""

    model: PublishedModel
    folder: Path
    state: str
    detail: str = ""

    @property
    def options(self) -> Path:
        return self.folder / OPTIONS

    @property
    def weights(self) -> Path:
        return self.folder / WEIGHTS

    def manifest(self) -> dict:
        """The manifest as written by ``download``. Raises: OSError, ValueError when unreadable."""
        return loads_strict((self.folder / MANIFEST).read_text(encoding="utf-8"), str(self.folder / MANIFEST))


def cache_entry(name: str, cache_dir: str | Path | None = None) -> CacheEntry:
    """Where ``name`` would be cached and whether it is, by the manifest and the files' sizes (no hashing:
    ``verify`` rehashes). Reads only the model's folder. Raises: KeyError for an unknown name."""
    model = published_model(name)
    folder = resolve_cache_dir(cache_dir) / model.name
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        part = folder / (WEIGHTS + ".part")
        if part.is_file() and part.stat().st_size:
            return CacheEntry(
                model,
                folder,
                "missing",
                f"{part.stat().st_size:,} bytes of {WEIGHTS} downloaded; the next download resumes them",
            )
        return CacheEntry(model, folder, "missing")
    try:
        files = loads_strict(manifest_path.read_text(encoding="utf-8"), str(manifest_path))["files"]
        recorded = {file: int(files[file]["bytes"]) for file in (OPTIONS, WEIGHTS)}
    except (OSError, ValueError, KeyError, TypeError):
        return CacheEntry(model, folder, "damaged", f"its {MANIFEST} is unreadable")
    for file, size in recorded.items():
        path = folder / file
        if not path.is_file():
            return CacheEntry(model, folder, "damaged", f"{file} is missing")
        if path.stat().st_size != size:
            return CacheEntry(
                model, folder, "damaged", f"{file} has {path.stat().st_size:,} bytes, but {size:,} were verified"
            )
    return CacheEntry(model, folder, "cached")


def download_command(name: str, cache_dir: str | Path | None = None, base_url: str | None = None) -> str:
    """The command line that puts ``name`` into the cache this process uses: with ``--cache-dir`` and
    ``--base-url`` when they are not the defaults (set here or by ``ELMO_CORE_CACHE`` / ``ELMO_CORE_BASE_URL``),
    so that it fills the same cache when run from another shell."""
    import shlex

    import platformdirs

    command = f"python -m elmo_core download {published_model(name).name}"
    cache = resolve_cache_dir(cache_dir)
    if cache != Path(platformdirs.user_cache_dir("elmo-core", appauthor=False)):
        command += f" --cache-dir {shlex.quote(str(cache))}"
    base = resolve_base_url(base_url)
    if base != DEFAULT_BASE_URL:
        command += f" --base-url {shlex.quote(base)}"
    return command


def cached_files(name: str, cache_dir: str | Path | None = None, base_url: str | None = None) -> tuple[Path, Path]:
    """(options.json, weights.hdf5) of a cached model, after checking their sizes against the manifest.
    ``base_url`` only goes into the download command an error message gives (with ``cache_dir``).

    Raises:
        KeyError: an unknown name.
        FileNotFoundError: not in the cache; the message gives the folder and the command that downloads it.
        ValueError: in the cache but damaged (a file missing or of another size than verified).
    """
    entry = cache_entry(name, cache_dir)
    if entry.state == "missing":
        raise FileNotFoundError(
            f"the published model '{entry.model.name}' is not in the cache ({entry.folder}); "
            f"download it with: {download_command(name, cache_dir, base_url)}"
        )
    if entry.state == "damaged":
        raise ValueError(
            f"the cached '{entry.model.name}' in {entry.folder} is damaged: {entry.detail}; "
            f"download it again with: {download_command(name, cache_dir, base_url)} --force"
        )
    return entry.options, entry.weights


def verify(name: str, cache_dir: str | Path | None = None) -> list[str]:
    """Rehash a cached model's files against its manifest.

    Returns: the problems found, one line each (empty when every file is as verified at download).
    Raises: KeyError; FileNotFoundError when the model is not cached.
    """
    entry = cache_entry(name, cache_dir)
    if entry.state == "missing":
        raise FileNotFoundError(f"'{entry.model.name}' is not in the cache ({entry.folder})")
    if entry.state == "damaged":
        return [entry.detail]
    problems = []
    for file, record in entry.manifest()["files"].items():
        digest = sha256_of(entry.folder / file)
        if digest != record["sha256"]:
            problems.append(f"{file}: sha256 {digest[:16]}... differs from the verified {record['sha256'][:16]}...")
    return problems


# progress(file name, bytes done, bytes total or None)
FileProgress = Callable[[str, int, "int | None"], None]


def _check_options(path: Path) -> None:
    BiLMConfig.from_options_json(path)  # the options define the model: they must be a readable options file


def mismatch_note(entry: CacheEntry) -> str | None:
    """A line when the cached options describe another size than the table's (a mirror serving other files
    under the published names: legitimate, e.g. a test model, but worth saying), else None."""
    try:
        size = int(entry.manifest()["parameters"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if size == entry.model.parameters:
        return None
    return (
        f"note: the cached options.json describes a model of {size:,} parameters, not the "
        f"{entry.model.parameters:,} of the published {entry.model.title}; it is used as it is"
    )


def _dangling_link(folder: Path) -> DownloadError | None:
    """The error for a cache folder (or a folder above it) that is a symbolic link to nothing, else None."""
    for path in (folder, *folder.parents):
        if path.is_symlink() and not path.exists():
            return DownloadError(
                f"the cache folder {path} is a symbolic link to {os.readlink(path)}, which does not exist; create "
                "that folder, or choose another one with --cache-dir or ELMO_CORE_CACHE"
            )
        if path.exists():
            return None
    return None


def _not_writable(folder: Path, exc: OSError) -> DownloadError:
    return DownloadError(
        f"cannot write to the cache folder {folder} ({exc.strerror or exc}); choose a writable "
        "one with --cache-dir or ELMO_CORE_CACHE"
    )


def download(
    name: str,
    cache_dir: str | Path | None = None,
    base_url: str | None = None,
    *,
    policy: Policy = Policy(),
    progress: FileProgress | None = None,
    force: bool = False,
    on_wait: Callable[[], None] | None = None,
    notice: Callable[[str], None] | None = None,
    session=None,
    sleep=None,
) -> CacheEntry:
    """Put a published model into the cache, unless it is already there (then nothing is fetched).

    Steps, under a lock on the model's folder (``filelock``) so that several processes end with one good
    copy (a second one waits, then finds the model cached): options.json is fetched and must be a readable
    options file (it defines the model; ``mismatch_note`` tells when it is not the table's size); weights.hdf5 is
    streamed (timeouts, retries, resume, length check: ``download.fetch``) and checked against those options,
    every dataset read (``elmo_hdf5.check_elmo_files``); only then are the files renamed into place and the
    manifest (sizes, sha256, URLs) written.

    Args:
        force: fetch again even when the cache holds the model (a damaged copy is always fetched again).
        on_wait: called once when another process holds the lock (the CLI prints a line).
        notice: called with one line ("weights.hdf5: ...; retrying in 2 s ...") before each retry.
        policy, session, sleep: passed to ``download.fetch``.
    Returns: the model's ``CacheEntry`` (state "cached").
    Raises:
        KeyError: an unknown name.
        ValueError: a base URL that is not http(s).
        DownloadError: the network failed after retries, the server answered 4xx, a file was refused by a
            check, or the cache folder is not writable; one line, with the URL where one was involved.
    """
    from filelock import FileLock, Timeout

    model = published_model(name)
    urls = model.urls(base_url)
    entry = cache_entry(name, cache_dir)
    if entry.state == "cached" and not force:
        return entry
    folder = entry.folder
    dangling = _dangling_link(folder)
    if dangling is not None:
        raise dangling
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / ".lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if on_wait is not None:
                on_wait()
            lock.acquire()
    except OSError as exc:
        raise _not_writable(folder, exc) from None
    try:
        entry = cache_entry(name, cache_dir)
        if entry.state == "cached" and not force:
            return entry  # another process finished it while this one waited
        try:
            (folder / MANIFEST).unlink(missing_ok=True)  # from here on the folder is not "cached" until done
            kwargs = {"policy": policy, "session": session, **({"sleep": sleep} if sleep else {})}
            damaged = entry.state == "damaged"
            for file in (OPTIONS, WEIGHTS):
                if force or damaged:  # a damaged copy is not resumed: its bytes may be wrong anywhere
                    for path in (folder / file, folder / (file + ".part"), folder / (file + ".part.json")):
                        path.unlink(missing_ok=True)
                elif (folder / file).exists():
                    # A whole file without a manifest is an interrupted earlier run's, possibly from another
                    # mirror: fetched again (resuming it without the server's validator could splice versions).
                    (folder / file).unlink()
            checks = {OPTIONS: _check_options, WEIGHTS: lambda part: check_elmo_files(folder / OPTIONS, part, WEIGHTS)}
            for file in (OPTIONS, WEIGHTS):
                fetch(
                    urls[file],
                    folder / file,
                    validate=checks[file],
                    expected_size=model.weights_bytes if file == WEIGHTS else None,
                    progress=(lambda done, total, f=file: progress(f, done, total)) if progress else None,
                    notice=(lambda line, f=file: notice(f"{f}: {line}")) if notice else None,
                    **kwargs,
                )
            files = {
                file: {"bytes": (folder / file).stat().st_size, "sha256": sha256_of(folder / file), "url": urls[file]}
                for file in (OPTIONS, WEIGHTS)
            }
            parameters = BiLMConfig.from_options_json(folder / OPTIONS).num_parameters()
            manifest = {
                "format": MANIFEST_FORMAT,
                "model": model.name,
                "parameters": parameters,
                "files": files,
                "verified_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
            tmp = folder / (MANIFEST + ".tmp")
            tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, folder / MANIFEST)
        except PermissionError as exc:
            raise _not_writable(folder, exc) from None
        except OSError as exc:
            raise DownloadError(f"writing into the cache folder {folder} failed ({exc.strerror or exc})") from None
        return cache_entry(name, cache_dir)
    finally:
        lock.release()
