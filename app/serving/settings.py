"""The explorer's settings: environment variables, read at call time (no Streamlit here).

Streamlit's config.toml cannot hold app-specific sections, so the app is configured by these:
    ELMO_EXPLORER_OPTIONS + ELMO_EXPLORER_WEIGHTS   published-format model to use instead of the default
    ELMO_EXPLORER_CHECKPOINT                        our format (dir with options.json + model.safetensors)
    ELMO_EXPLORER_MODEL                             a named startup model instead: a bundled one ("default",
                                                    "lm-only") or a published one in the cache ("small",
                                                    "original", ...; never downloaded by the app itself: a
                                                    published name that is not cached starts on the default,
                                                    and the log and the page say why)
    ELMO_EXPLORER_DEVICE                            "cpu", "cuda", ... (default: GPU when there is one)
    ELMO_EXPLORER_REFERENCE                         the reference corpus folder (sentences.txt.xz + index.npz,
                                                    made by scripts/build_reference_corpus.py; default
                                                    assets/reference)
    ELMO_EXPLORER_ATLAS                             the Corpus page's atlases: an atlas folder or a folder of them
                                                    (``python -m elmo_core atlas build``; ``app.serving.corpus_mode``)
    ELMO_EXPLORER_TYPE_VECTORS=0                    no layer-0 vocabulary vectors (layer-0 neighbours come
                                                    from the input's own word types)
    ELMO_EXPLORER_TYPE_VOCAB                        vocabulary size for layer-0 neighbours (default 50000)
    ELMO_EXPLORER_TYPE_MODELS                       models whose vocabulary vectors are kept (default 3)
    ELMO_EXPLORER_ALLOW_SERVER_PATHS=1              allow loading weights from paths on the server, and show the
                                                    server's folders and mirror URL on the page (otherwise the page
                                                    says "the server's model cache" and the log has them:
                                                    ``for_visitor``)
    ELMO_EXPLORER_ALLOW_DOWNLOADS=1                 a Download button for the published models that are not
                                                    cached (off by default: a class server should not fetch
                                                    374 MB because a student clicked)
    ELMO_CORE_CACHE, ELMO_CORE_BASE_URL             the published models' cache folder and mirror
                                                    (``elmo_core.cache_entry``, ``elmo_core.download``)
    ELMO_EXPLORER_UMAP_WARMUP=0                     do not load UMAP in the background (tests; the first UMAP map
                                                    loads it)
    NUMBA_CACHE_DIR                                 numba's cache of UMAP's compiled code (default: <venv>/
                                                    numba-cache, which `make app` fills: ``explore.import_umap``)
    ELMO_EXPLORER_CACHE_MB                          activation cache size, all sessions (default 256 MB)
    ELMO_EXPLORER_MODEL_MB                          memory for user-loaded models, all sessions (default 1024 MB;
                                                    reserved before a load: ``app.serving.memory.ModelRegistry``)
    ELMO_EXPLORER_WORK_MB                           working memory of the biLM calls, all sessions (default 1024 MB;
                                                    a user's model whose page call needs more is refused:
                                                    ``app.serving.memory.WorkingMemory``)
    ELMO_EXPLORER_MODEL_IDLE_MIN                    a loaded model idle this long may make room for others (20)
    ELMO_EXPLORER_MAX_PARAMETERS                    largest model a user may load (default 200M parameters)
    ELMO_EXPLORER_WEIGHTS_UPLOAD_MB                 largest weights upload (default 1024 MB)
    ELMO_EXPLORER_SESSION_MB                        activations one session keeps for its sentences (96 MB)
"""

from __future__ import annotations

import logging
import os
import re
import threading

log = logging.getLogger(__name__)

# the settings that name a place on the server (the published models' own two come from ``elmo_core`` resolved)
PATH_SETTINGS = (
    "ELMO_EXPLORER_OPTIONS",
    "ELMO_EXPLORER_WEIGHTS",
    "ELMO_EXPLORER_CHECKPOINT",
    "ELMO_EXPLORER_REFERENCE",
    "ELMO_EXPLORER_ATLAS",
    "ELMO_EXPLORER_PROBES",
    "ELMO_DATA_DIR",
    "ELMO_WORDNET_DIR",
    "ELMO_BROWN_DIR",
    "NUMBA_CACHE_DIR",
)
CACHE_WORDS = "the server's model cache"
MIRROR_WORDS = "the server's mirror"
_URL = re.compile(r"""https?://[^\s,;)'"]*""")
_logged: set[str] = set()
_logged_lock = threading.Lock()


def env_flag(name: str, default: bool = False) -> bool:
    """The variable as a switch: "1", "true", "yes", "on" (any case) are True; unset: ``default``."""
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


def env_int(name: str, default: int) -> int:
    """The variable as an integer; ``default`` when unset or not a whole number."""
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def allow_server_paths() -> bool:
    """Whether a visitor may load weights from paths on the server (``ELMO_EXPLORER_ALLOW_SERVER_PATHS=1``); also
    whether the page may show the server's folders in its messages."""
    return env_flag("ELMO_EXPLORER_ALLOW_SERVER_PATHS")


def allow_downloads() -> bool:
    """Whether the model panel may download a published model (``ELMO_EXPLORER_ALLOW_DOWNLOADS=1``)."""
    return env_flag("ELMO_EXPLORER_ALLOW_DOWNLOADS")


def device() -> str | None:
    """The torch device the app's models run on (``ELMO_EXPLORER_DEVICE``); None: the GPU when there is one."""
    return os.environ.get("ELMO_EXPLORER_DEVICE") or None


def for_visitor(text: object) -> str:
    """``text`` as a visitor may see it: with ``ELMO_EXPLORER_ALLOW_SERVER_PATHS=1`` unchanged; otherwise the
    published models' cache folder becomes "the server's model cache", a URL of their mirror "the server's mirror",
    any other URL "a URL in the server's log", and the other path settings and absolute paths "…"
    (``app.explore.text.hide_paths``). A line that changed goes to the server's log as it was, once per process,
    for the operator."""
    from app.explore.text import hide_paths

    text = str(text)
    if allow_server_paths():
        return text
    shown = text
    for value, words in sorted(_places().items(), key=lambda item: -len(item[0])):
        if value.startswith(("http://", "https://")):
            shown = re.sub(re.escape(value) + r"""[^\s,;)'"]*""", words, shown)
        else:
            shown = shown.replace(value, words)
    shown = hide_paths(_URL.sub("a URL in the server's log", shown))
    if shown != text:
        with _logged_lock:
            new = text not in _logged and len(_logged) < 10_000
            _logged.add(text)
        if new:
            log.info("shown to visitors without the server's folders and URLs: %s", text)
    return shown


def _places() -> dict[str, str]:
    """{a folder or URL this server is configured with, as written and as resolved: the words a visitor sees}."""
    from elmo_core import PUBLISHED, cache_entry

    name = next(iter(PUBLISHED))
    folders = [(os.environ.get(v), "…") for v in PATH_SETTINGS]
    folders += [(os.environ.get("ELMO_CORE_CACHE"), CACHE_WORDS), (str(cache_entry(name).folder.parent), CACHE_WORDS)]
    places = {raw: words for raw, words in folders if raw and len(raw) > 1 and os.path.isabs(os.path.expanduser(raw))}
    try:  # the mirror as resolved: a model's URL less its path in the published layout
        url, path = PUBLISHED[name].urls()["options.json"], PUBLISHED[name].paths()["options.json"]
        base = url[: -len(path)] if url.endswith(path) else ""
    except ValueError:  # not an http(s) URL: the setting itself is replaced
        base = ""
    for raw in (os.environ.get("ELMO_CORE_BASE_URL"), base, base.rstrip("/")):
        if raw:
            places[raw] = MIRROR_WORDS
    return places
