"""Two replicas of the explorer behind HAProxy (``deploy/haproxy.cfg``, started by ``deploy/replicas.py``), all on
127.0.0.1, driven by headless Chromium: sessions spread over both replicas, a session stays on its replica, a
link opens the same view on either, and when a replica is killed its sessions reconnect to the other, where the
page comes back from its URL and keeps working. The replicas share one read-only model cache
(``ELMO_CORE_CACHE``, the fixture biLM under the published name "small", their startup model), which nothing
writes.

Which replica served a page is read from the page: a ``fetch`` from it returns HAProxy's ``X-Elmo-Replica``
header, and the browser holds HAProxy's ``ELMO_REPLICA`` cookie. Which replica holds a session's websocket
is read from HAProxy's statistics (open connections per replica); that the page ran again after a reconnect,
from the messages its websocket received (Chromium's performance log).

Needs Debian's ``haproxy``, ``chromium`` and ``chromium-driver``: skipped without them, unless
``ELMO_REQUIRE_BROWSER=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import shutil
import stat
import tempfile
import urllib.parse
from pathlib import Path

import pytest

from deploy.replicas import Cluster, find_haproxy
from tests.app.test_browser import (
    CHROME_FLAGS,
    CHROMEDRIVER,
    CHROMIUM,
    FIRST_PAGE_TIMEOUT,
    MAP_DATA_JS,
    SCROLL_TO_MAP_JS,
    _browser_missing,
    _find,
    _map_points,
    _page_errors,
    _s_values,
    _skip_or_fail,
    _wait,
)
from tests.conftest import ALLENNLP

pytestmark = [pytest.mark.browser, pytest.mark.multiprocess, pytest.mark.download_server]

LINK = "/?ex=bank&word=bank"  # 12 occurrences: a PCA map, a function of the link alone
REPLICAS = ("replica1", "replica2")
REPLICA_OF_PAGE_JS = "return await fetch('/_stcore/health').then(r => r.headers.get('x-elmo-replica'));"


@pytest.fixture
def read_only_cache(tmp_path):
    """A model cache holding the fixture biLM as the published "small" (fetched from a local mirror, as
    ``python -m elmo_core download small`` would), then made read-only; its permissions are given back after."""
    from elmo_core.model import published, published_table
    from elmo_core.model.download import Policy
    from tests.mirror import Mirror

    cache = tmp_path / "models"
    paths = published_table.PUBLISHED["small"].paths()
    files = {
        paths["options.json"]: (ALLENNLP / "options.json").read_bytes(),
        paths["weights.hdf5"]: (ALLENNLP / "lm_weights.hdf5").read_bytes(),
    }
    with Mirror(files) as mirror:
        published.download("small", cache, mirror.url, policy=Policy(connect_timeout=2, read_timeout=5, retries=1))
    _chmod_tree(cache, writable=False)  # what a read-only mount gives a non-root replica
    try:
        yield cache
    finally:
        _chmod_tree(cache, writable=True)


def _chmod_tree(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~write)


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every file and folder under ``root``: (mode, size, modification time). Reading changes none of them;
    root ignores permissions, so this, not the read-only bits, is what shows that nothing wrote."""
    return {
        str(p.relative_to(root)): (p.stat().st_mode, p.stat().st_size, p.stat().st_mtime_ns)
        for p in [root, *root.rglob("*")]
    }


def _replica_env(cache: Path, tmp_path: Path) -> dict[str, str | None]:
    """The tests' fast start (CPU, no UMAP compile, no reference corpus) on the shared cache's "small"."""
    return {
        "ELMO_CORE_CACHE": str(cache),
        "ELMO_EXPLORER_MODEL": "small",
        "ELMO_CORE_BASE_URL": "http://127.0.0.1:9/",  # nothing listens there: no download could reach out
        "ELMO_EXPLORER_DEVICE": "cpu",
        "ELMO_EXPLORER_UMAP_WARMUP": "0",
        "ELMO_EXPLORER_REFERENCE": str(tmp_path / "no-reference"),
        **{
            key: None
            for key in (
                "ELMO_EXPLORER_OPTIONS",
                "ELMO_EXPLORER_WEIGHTS",
                "ELMO_EXPLORER_CHECKPOINT",
                "ELMO_EXPLORER_ALLOW_SERVER_PATHS",
                "ELMO_EXPLORER_ALLOW_DOWNLOADS",
                "ELMO_EXPLORER_SESSION_MB",
            )
        },
    }


@contextlib.contextmanager
def _chromium():
    """Headless Chromium as tests/app/test_browser.py starts it, without the back/forward cache: a page left for
    another is closed, websocket and all, instead of being kept (with its session open on its replica) for a
    Back that never comes, so a replica's open connections are the sessions the test has open."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*CHROME_FLAGS, "--disable-features=BackForwardCache", "--window-size=1400,2600"]:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="elmo-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # the websocket's messages
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)  # never Selenium Manager
    driver.set_script_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _replica_of_page(driver) -> str:
    """The replica that answers this page's requests now (HAProxy's X-Elmo-Replica header, seen by the page)."""
    return driver.execute_script(REPLICA_OF_PAGE_JS)


def _websockets(cluster: Cluster) -> dict[str, int]:
    return {name: s.connections for name, s in cluster.servers().items()}


def _query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def _same_points(a: list, b: list) -> bool:
    return [t[0] for t in a] == [t[0] for t in b] and all(
        ta[1] == pytest.approx(tb[1], abs=1e-9) and ta[2] == pytest.approx(tb[2], abs=1e-9) for ta, tb in zip(a, b)
    )


def _map_unlike(driver, other: list, timeout: float = FIRST_PAGE_TIMEOUT) -> list:
    """The map once it is drawn and differs from ``other`` (the page before, or another view)."""
    return _wait(
        driver,
        "the map",
        lambda d: (lambda m: m if m and m != other else None)(d.execute_script(SCROLL_TO_MAP_JS + MAP_DATA_JS)),
        timeout,
    )


def _socket_events(driver) -> list[tuple[str, object]]:
    """The page's websocket events since the last call, from Chromium's performance log: ("opened", url) and
    ("message", ForwardMsg) for each message the server sent."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    events = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.webSocketCreated":
            events.append(("opened", message["params"]["url"]))
        elif message["method"] == "Network.webSocketFrameReceived" and message["params"]["response"]["opcode"] == 2:
            msg = ForwardMsg()
            msg.ParseFromString(base64.b64decode(message["params"]["response"]["payloadData"]))
            events.append(("message", msg))
    return events


def _full_run_after_reconnect(driver, seen: list) -> bool:
    """Whether, since the socket was opened again, the page ran the whole script to its end (a fragment's
    run ends with another status). ``seen`` collects the events across calls."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    seen.extend(_socket_events(driver))
    opened = [i for i, (kind, _) in enumerate(seen) if kind == "opened"]
    return bool(opened) and any(
        kind == "message"
        and msg.WhichOneof("type") == "script_finished"
        and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
        for kind, msg in seen[opened[-1] :]
    )


def _press(driver, key: str, times: int) -> None:
    from selenium.webdriver.common.keys import Keys

    slider = _find(driver, f".st-key-{key} input[type=range]")
    driver.execute_script("arguments[0].focus();", slider)
    for _ in range(times):
        slider.send_keys(Keys.ARROW_RIGHT)


def _s_of(w: list[float]) -> list[str]:
    total = sum(math.exp(v) for v in w)
    return [f"{math.exp(v) / total:.3f}" for v in w]


def test_two_replicas_behind_haproxy(tmp_path, read_only_cache):
    reason = _browser_missing() or (
        None if find_haproxy() else "haproxy not found: install Debian's haproxy (apt-get install haproxy)"
    )
    if reason:
        _skip_or_fail(reason)
    cache_before = _snapshot(read_only_cache)
    with (
        Cluster(2, env=_replica_env(read_only_cache, tmp_path), log_dir=tmp_path / "logs") as cluster,
        _chromium() as d,
    ):
        # 1. four fresh browser sessions (no cookie): the balancer spreads them over both replicas; each page is
        # served by the replica its cookie names, which also holds its websocket, and every one draws one map
        served, maps = [], []
        for _ in range(4):
            d.delete_all_cookies()
            d.get(cluster.url + LINK)
            maps.append(_map_points(d, FIRST_PAGE_TIMEOUT))
            name = _replica_of_page(d)
            assert name in REPLICAS and d.get_cookie("ELMO_REPLICA")["value"] == name
            assert "ELMO_REPLICA" not in d.execute_script("return document.cookie")  # HTTP-only: no page script
            _wait(
                d,
                f"the session's websocket on {name} alone (open websockets: {_websockets(cluster)} at first)",
                lambda d: _websockets(cluster) == {r: int(r == name) for r in REPLICAS},
            )
            served.append(name)
        assert set(served) == set(REPLICAS), served
        assert all(_same_points(m, maps[0]) for m in maps), "one link, one picture, whichever replica drew it"
        assert _query(d.current_url)["model"] == "small"  # the shared cache's model, named in the link

        # 2. stickiness: the session moves a slider, reloads, asks again and again: always the same replica
        home, other = served[-1], next(r for r in REPLICAS if r != served[-1])
        _press(d, "explorer_w_1", 3)
        _wait(d, "w_1 = 0.3 in the URL", lambda d: _query(d.current_url).get("w") == "0,0.3,0")
        link, view = d.current_url, _map_points(d)
        assert view != maps[0]
        d.refresh()  # a new session from the URL, on the replica of the cookie
        assert _same_points(_map_unlike(d, maps[0]), view)
        assert {_replica_of_page(d) for _ in range(5)} == {home}
        _wait(d, f"the websocket still on {home}", lambda d: _websockets(cluster) == {home: 1, other: 0})

        # 3. the link opened on the other replica (its cookie set by hand) draws the same view
        d.get(cluster.url + "/_stcore/health")  # any address of the site (a cookie is set on its own site)
        d.delete_all_cookies()
        d.add_cookie({"name": "ELMO_REPLICA", "value": other, "path": "/"})
        d.get(link)
        there = _map_unlike(d, maps[0])
        assert _replica_of_page(d) == other
        _wait(d, f"the websocket on {other}", lambda d: _websockets(cluster) == {home: 0, other: 1})
        assert _same_points(there, view)
        assert _s_values(d) == _s_of([0, 0.3, 0]) and _query(d.current_url) == _query(link)

        # 4. that replica dies (SIGKILL) while the tab shows the link's view, its last run a whole page's run:
        # the tab reconnects through the balancer to the live replica, which runs the page from the tab's URL
        # (the same view), and the next slider move works there. (After a slider move, a fragment's run,
        # Streamlit's frontend asks for that full run by itself; after a full run only the app's auto-rerun
        # fragment makes it ask: without it the new session never runs and drops the slider moves.)
        before_kill, url_before, s_before = there, d.current_url, _s_values(d)
        _socket_events(d)  # forget what came before
        cluster.kill(other)
        _wait(d, f"the tab's websocket on {home}", lambda d: _websockets(cluster).get(home) == 1, 30)
        # the new session on its new replica runs the whole page, from the URL the tab sends (a slider move
        # before that run ends would name a fragment the new session does not know yet)
        seen: list = []
        _wait(
            d, f"a full run of the page on {home} after the reconnect", lambda d: _full_run_after_reconnect(d, seen), 60
        )
        assert _replica_of_page(d) == home and d.get_cookie("ELMO_REPLICA")["value"] == home
        _wait(d, f"HAProxy to mark {other} DOWN", lambda d: cluster.servers()[other].status == "DOWN", 30)
        assert _same_points(_map_points(d), before_kill)
        assert d.current_url == url_before and _s_values(d) == s_before
        _press(d, "explorer_w_2", 2)
        expected = _s_of([0, 0.3, 0.2])
        _wait(d, f"s = {expected} after a move on {home}", lambda d: _s_values(d) == expected, 30)
        _wait(d, "w_2 = 0.2 in the URL", lambda d: _query(d.current_url).get("w") == "0,0.3,0.2")
        assert _map_points(d) != before_kill
        assert not _page_errors(d)

    # 5. the shared model cache was only read: not a file or folder added, changed or touched
    assert _snapshot(read_only_cache) == cache_before
    for replica in REPLICAS:
        log = (tmp_path / "logs" / f"{replica}.log").read_text()
        assert "Traceback" not in log, log[-3000:]
