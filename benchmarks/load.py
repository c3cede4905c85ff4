"""Load test of the explorer: N sessions at once, each speaking Streamlit's websocket protocol as a browser tab
does, that open a link, type sentence sets, move a layer-weight slider and drag it; prints each action's median and
p95 latency, the messages a drag sends, the bytes a set costs, and the servers' memory.

    python -m benchmarks.load                                  # its own server on 127.0.0.1, 8 sessions
    python -m benchmarks.load --sessions 30 --replicas 2       # its own 2 replicas behind HAProxy (deploy/)
    python -m benchmarks.load --url http://127.0.0.1:8501 --pid 1234   # any running server or balancer
    python -m benchmarks.load --sessions 30 --browser-drags 5  # and a real Chromium that drags w_2 meanwhile

First one warm-up visit per replica (``--cold``: none), as the teacher who tried the link before the class: the
sessions then meet servers that have loaded the model and the libraries. Then all sessions at once. A session:
GET the page (as a browser does first; through a balancer this sets its sticky cookie, which the websocket then
sends), open the websocket, run the page with the link's query (``--open``, default the bank example), then take
sentence sets from a shared queue until none are left (or ``--seconds`` passed): type one into the text box, then
move the top layer's slider ``--moves`` times (one step, as the keyboard moves it), then drag it ``--drags`` times
(a whole unit). Four timings: open (GET to the first run finished), new set, slider move, release to map (each: the
request sent to the run finished). A slider inside a fragment is moved as the browser moves it, as a rerun of that
fragment only. What a tab does not do here: load the page's JavaScript and draw.

A drag, as the protocol sees it: while the button is down the browser redraws the map itself (the Vega params bound
to the slider, app/render/map_live.py) and sends nothing, since a Streamlit slider tells the server its value only on
release; the release sends ONE rerun with the new value. So a session's drag is that one BackMsg, and the session
counts the BackMsgs it sends before and at the release (0 and 1: what this client sends, by construction). What a
real page sends is measured by ``--browser-drags K``: one headless Chromium (benchmarks/live_drag.py), alongside the
N sessions, opens the same link and drags the w_2 slider K times with the mouse, counting the websocket frames the
page sent while the button was down and at the release (Chrome's performance log) and the release to the end of the
run it started, in the page. Bytes per set: the websocket payload a session received for a new set's run (cached
large messages arrive as references; a new set's map is new), and of it the map's Arrow data (its Vega-Lite rows).

Every action is checked against what the page shows, read from the page's own messages: no exception or error
box; the word in the page's URL (which the app keeps in sync with the view) occurs in the page's text box; the
map (the Vega-Lite chart with the map's widget key; its points are the rows of the Arrow data the page sends it,
those of role "occurrence") has exactly as many points as that word has occurrences in that
text (counted with elmo_core's tokenizer and word forms, as the page's options in its URL ask); after a slider
move the URL holds the new weights and the map's points moved.

Memory: the RSS of the servers it started (or those given with ``--pid``), sampled every 0.5 s (peak of their
sum) and their own peaks (VmHWM); and the CPU time they used, as cores busy on average. Loopback only unless
``--url`` says otherwise; nothing downloaded. The sets are drawn from the first 3,000 sentences of the reference
corpus (assets/reference/) around frequent words, seeded, so runs are comparable. The servers get
ELMO_EXPLORER_DEVICE=cpu and ELMO_EXPLORER_UMAP_WARMUP=0 unless the environment sets them (the rest of the
environment is passed through). It reports its own CPU too: it shares the machine with the servers it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import shutil
import statistics
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MAP_KEY = "explorer_map_chart"  # app.session.keys.MAP_CHART (not imported: the benchmark reads the page, not the app)
TEXT_KEY = "explorer_sentences"  # app.session.keys.SENTENCES
MIN_POINTS_FOR_MAP = 3  # app.explore.projections.MIN_POINTS_FOR_MAP: fewer occurrences get no map
OCCURRENCE = (
    "occurrence"  # app.render.map_spec.OCCURRENCE: the map's rows that are the word's occurrences (not the grey
)
# other words, not the query's ring)
MAX_SESSIONS = 100
CACHE_RUNS = 2  # runs a cached message survives unused (the browser, too, drops what recent runs did not use)


def rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of process ``pid`` in MiB, from /proc/PID/status; (0, 0) once it is gone."""
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, value = line.split(":")
                    fields[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) process ``pid`` has used, from /proc/PID/stat; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


class MemoryWatch:
    """Samples the summed RSS of ``pids`` every ``every`` seconds in a thread; ``peak_sum`` is its maximum. Also
    the CPU time they use while it watches (``stop``: in CPU seconds, and as cores busy on average)."""

    def __init__(self, pids: list[int], every: float = 0.5):
        self.pids, self.every = pids, every
        self.start = {pid: rss_mb(pid)[0] for pid in pids}
        self.peak_sum = sum(self.start.values())
        self.cpu_start, self.t0 = {pid: cpu_seconds(pid) for pid in pids}, time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> float:
        return sum(rss_mb(pid)[0] for pid in self.pids)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.peak_sum = max(self.peak_sum, self.now())

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        per = {pid: rss_mb(pid) for pid in self.pids}
        cpu = {pid: cpu_seconds(pid) - self.cpu_start[pid] for pid in self.pids}
        wall = time.monotonic() - self.t0
        return {
            "start_mb": self.start,
            "final_mb": {p: v[0] for p, v in per.items()},
            "peak_mb": {p: v[1] for p, v in per.items()},
            "peak_sum_mb": self.peak_sum,
            "final_sum_mb": sum(v[0] for v in per.values()),
            "cpu_s": cpu,
            "wall_s": wall,
            "cores_busy": {p: c / wall for p, c in cpu.items()} if wall > 0 else {},
        }


# ---- what to type ------------------------------------------------------------------------------------------
def sentence_sets(count: int, size: int, seed: int = 0) -> list[str]:
    """``count`` texts of ``size`` reference sentences, each set around one frequent word (the 100 most frequent
    words, mostly function words, are skipped)."""
    from elmo_core.data.reference import ReferenceCorpus

    lines = [ln.strip() for ln in ReferenceCorpus.load().sentences[:3000] if 5 <= len(ln.split()) <= 40]
    counts = collections.Counter(w.lower() for ln in lines for w in set(ln.split()) if w.isalpha() and len(w) > 3)
    words = [w for w, n in counts.most_common(700)[100:] if n >= size][:150]
    rng = random.Random(seed)
    out = []
    for i in range(count):
        pattern = re.compile(rf"(?<!\w){re.escape(words[i % len(words)])}(?!\w)", re.IGNORECASE)
        pool = [ln for ln in lines if pattern.search(ln)]
        out.append("\n".join(rng.sample(pool, min(size, len(pool)))))
    return out


def occurrences_in(text: str, word: str, inflections: bool, fold_case: bool) -> int:
    """How many tokens of ``text`` count as ``word``, by elmo_core's tokenizer and word forms (a leading
    ``[label]`` on a line is not part of the sentence)."""
    from elmo_core.data.text import clean_line, split_lines
    from elmo_core.data.tokenize import tokenize
    from elmo_core.data.wordforms import is_form, same_case, word_forms

    forms = word_forms(word, inflections=inflections)
    n = 0
    for raw in split_lines(text):
        line = re.sub(r"^\s*\[[^\[\]]{0,40}\]\s*", "", clean_line(raw))
        n += sum(1 for tok in tokenize(line) if is_form(tok, forms) and (fold_case or same_case(tok, word)))
    return n


# ---- one browser-like session ------------------------------------------------------------------------------
def vega_rows(chart) -> list[dict]:
    """The rows of a Vega-Lite chart element's data (``VegaLiteChart`` proto: named datasets and inline data, each
    Arrow IPC bytes), one dict per row."""
    import pyarrow as pa

    blobs = [d.data.data for d in chart.datasets] + ([chart.data.data] if chart.data.data else [])
    return [row for blob in blobs if blob for row in pa.ipc.open_stream(blob).read_all().to_pylist()]


def arrow_bytes(chart) -> int:
    """The size of a Vega-Lite chart element's Arrow data (its datasets and inline data), bytes."""
    return sum(len(d.data.data) for d in chart.datasets) + len(chart.data.data)


@dataclass
class Page:
    """What the page shows, from the messages of its runs: widgets by key, the map, the URL's query."""

    query: str = ""
    widgets: dict = field(default_factory=dict)  # user key -> (widget id, fragment id, element proto)
    map_rows: list[dict] | None = None  # the contexts map's points (``vega_rows``); None: no map drawn
    map_bytes: int = 0  # the size of the map's Arrow data in the last run
    errors: list[str] = field(default_factory=list)

    def params(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(self.query))

    def map_points(self) -> list[tuple[str, list[float], list[float]]]:
        """The word's occurrences on the map: (legend name, xs, ys) per legend entry."""
        traces: dict[str, tuple[list[float], list[float]]] = {}
        for row in self.map_rows or []:
            if row.get("role") == OCCURRENCE:
                xs, ys = traces.setdefault(str(row.get("series", "")), ([], []))
                xs.append(row.get("x"))
                ys.append(row.get("y"))
        return [(name, xs, ys) for name, (xs, ys) in traces.items()]


class Session:
    """One tab: an HTTP GET of the page, then Streamlit's websocket protocol (protobuf BackMsg / ForwardMsg),
    keeping what a browser keeps: its cookies, the URL's query string, the cached large messages."""

    def __init__(self, url: str, timeout: float):
        self.url, self.timeout = url.rstrip("/"), timeout
        self.ws = None
        self.page = Page()
        # hash -> (a cacheable ForwardMsg, the run it was last used in): the browser's message cache, which the
        # server is told about with every rerun and which forgets what the last CACHE_RUNS runs did not use
        self.cache: dict[str, tuple[bytes, int]] = {}
        self.runs = 0
        self.text = ""  # the last text typed
        self.replica = ""  # behind deploy/haproxy.cfg: the replica that holds the session
        self.sent = 0  # BackMsgs sent on the websocket
        self.run_bytes = 0  # websocket payload received during the last run (bytes as they travelled)

    async def open(self, query: str) -> None:
        import websockets

        cookies = await asyncio.to_thread(self._get_page)
        ws_url = re.sub(r"^http", "ws", self.url) + "/_stcore/stream"
        headers = {"Cookie": cookies} if cookies else {}
        self.ws = await websockets.connect(
            ws_url,
            subprotocols=["streamlit"],
            additional_headers=headers,
            max_size=None,
            open_timeout=self.timeout,
            ping_interval=None,
        )
        self.page.query = query
        await self.rerun({})

    def _get_page(self) -> str:
        """GET / as a browser's first request; returns the Cookie header the server (or balancer) asked for."""
        with urllib.request.urlopen(self.url + "/", timeout=self.timeout) as r:
            r.read()
            self.replica = r.headers.get("X-Elmo-Replica", "")  # deploy/haproxy.cfg names the replica
            return "; ".join(c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or [])

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def rerun(self, widgets: dict[str, object], fragment: str = "") -> None:
        """Send a rerun with these widget values (by user key), as the browser sends one when a widget changes,
        and read the page's messages until the run finished."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.page.query
        state.page_script_hash = ""
        if fragment:
            state.fragment_id = fragment
        self.runs += 1
        self.cache = {h: (d, run) for h, (d, run) in self.cache.items() if run >= self.runs - CACHE_RUNS}
        state.cached_message_hashes.extend(self.cache)
        for key, value in widgets.items():
            w = state.widget_states.widgets.add()
            w.id = self.page.widgets[key][0]
            if isinstance(value, str):
                w.string_value = value
            else:  # a slider's value travels as an array (one value, or a range's two)
                w.double_array_value.data.extend([float(value)])
        self.page.errors, self.page.map_rows = [], None  # both full and fragment runs draw the map anew
        self.page.map_bytes = 0
        await self.ws.send(msg.SerializeToString())
        self.sent += 1
        await self._until_finished()

    async def _until_finished(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        done = (
            ForwardMsg.FINISHED_SUCCESSFULLY,
            ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
            ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        )
        deadline = time.monotonic() + self.timeout
        self.run_bytes = 0
        while True:
            data = await asyncio.wait_for(self.ws.recv(), max(1.0, deadline - time.monotonic()))
            self.run_bytes += len(data)
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            if fwd.WhichOneof("type") == "ref_hash":  # a large message this tab has: take it from the cache
                data = self.cache[fwd.ref_hash][0]
                fwd = ForwardMsg()
                fwd.ParseFromString(data)
            if fwd.metadata.cacheable or fwd.hash in self.cache:
                self.cache[fwd.hash] = (data, self.runs)
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._element(fwd.delta.new_element, fwd.delta.fragment_id)
            elif kind == "page_info_changed":
                self.page.query = fwd.page_info_changed.query_string
            elif kind == "script_finished" and fwd.script_finished in done:
                return

    def _element(self, element, fragment_id: str) -> None:
        which = element.WhichOneof("type")
        if which == "exception":
            self.page.errors.append(f"exception: {element.exception.type}: {element.exception.message[:200]}")
            return
        if which == "alert" and element.alert.format == element.alert.ERROR:
            self.page.errors.append(f"error box: {element.alert.body[:200]}")
            return
        widget = getattr(element, which, None)
        widget_id = getattr(widget, "id", "") if widget is not None else ""
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):
            key = widget_id.split("-", 2)[2]  # "$$ID-<hash>-<user key>"
            self.page.widgets[key] = (widget_id, fragment_id, widget)
            if key == MAP_KEY:
                self.page.map_rows = vega_rows(widget)
                self.page.map_bytes = arrow_bytes(widget)

    # ---- checks of what the page shows ---------------------------------------------------------------------
    def page_text(self) -> str:
        """The text box's text as the page holds it (set by the app, e.g. from a link), else the text typed."""
        entry = self.page.widgets.get(TEXT_KEY)
        if entry is not None and entry[2].set_value:
            return entry[2].value
        return self.text

    def check_map(self) -> list[str]:
        """The URL's word occurs in the page's text, and the map shows each of its occurrences once."""
        if self.page.errors:
            return self.page.errors
        params = self.page.params()
        word = params.get("word", "")
        if not word:
            return [f"the page's URL names no word (query {self.page.query!r})"]
        expected = occurrences_in(self.page_text(), word, params.get("infl") == "1", params.get("case") != "exact")
        if self.page.map_rows is None:
            if 0 < expected < MIN_POINTS_FOR_MAP:
                return []  # too few points for a map: the page says so instead
            return [
                f"the page drew no map (no chart with key {MAP_KEY}) for {word!r}, which occurs "
                f"{expected} times in the page's text"
            ]
        shown = sum(len(x) for _, x, _ in self.page.map_points())
        if expected == 0 or shown != expected:
            return [f"the map shows {shown} points for {word!r}, which occurs {expected} times in the page's text"]
        return []


# ---- the sessions ------------------------------------------------------------------------------------------
def weights_in(query: str) -> list[float]:
    w = dict(urllib.parse.parse_qsl(query)).get("w", "")
    return [float(v) for v in w.split(",")] if w else []


async def warm_up(url: str, replicas: int, query: str, timeout: float) -> list[str]:
    """Open the link once on every replica (one server: once), as the teacher who tried it before the class:
    the model, the libraries and the page's code are then loaded. Returns the replicas warmed."""
    seen: list[str] = []
    for _ in range(2 * replicas):
        s = Session(url, timeout)
        try:
            await s.open(query)
        finally:
            await s.close()
        seen.append(s.replica)
        if len(set(seen)) >= replicas:
            break
    return sorted(set(seen))


def slider_target(current: float, low: float, high: float, step: float) -> float:
    """Where a move of ``step`` takes a slider at ``current`` in [low, high]: up by ``step``, or down by it where
    up would pass ``high`` (rounded to 0.1, the sliders' step)."""
    up = current + step
    return round(up if up <= high + 1e-9 else current - step, 1)


@dataclass
class Traffic:
    """What the sessions measured besides the timings: BackMsgs sent per drag, before and at the release, and the
    bytes of each new set's run and of its map's Arrow data."""

    drag_before_release: list[int] = field(default_factory=list)
    drag_at_release: list[int] = field(default_factory=list)
    set_bytes: list[int] = field(default_factory=list)
    map_bytes: list[int] = field(default_factory=list)


async def slide(s: Session, layer: int, step: float) -> tuple[float, float, list[str]]:
    """Moves w_``layer`` by ``step`` (see ``slider_target``) as the browser does on release: one rerun with the
    new value (of its fragment, if it is in one). Returns (seconds to the run's end, the value, problems)."""
    key = f"explorer_w_{layer}"
    if key not in s.page.widgets:
        return 0.0, 0.0, [f"the page has no slider {key}"]
    _, fragment, slider = s.page.widgets[key]
    before = s.page.map_points()
    current = weights_in(s.page.query) or [0.0] * (layer + 1)
    value = slider_target(current[layer], slider.min, slider.max, step)
    start = time.monotonic()
    await s.rerun({key: value}, fragment=fragment)
    seconds = time.monotonic() - start
    problems = s.check_map()
    shown = weights_in(s.page.query)
    if not problems and (len(shown) <= layer or abs(shown[layer] - value) > 1e-9):
        problems = [f"moved w_{layer} to {value}, the URL says w={shown}"]
    if not problems and before and s.page.map_points() == before:  # (no map: nothing to move)
        problems = [f"moved w_{layer} to {value}, the map did not change"]
    return seconds, value, problems


async def drive(
    args, url: str, sets: list[str]
) -> tuple[dict[str, list[float]], list[str], int, dict[str, int], Traffic]:
    """Runs the sessions; returns (timings per action, errors, sets done, sessions per replica, traffic)."""
    queue: asyncio.Queue = asyncio.Queue()
    for item in enumerate(sets):
        queue.put_nowait(item)
    times: dict[str, list[float]] = {"open": [], "new set": [], "slider move": [], "release to map": []}
    traffic = Traffic()
    errors: list[str] = []
    replicas: collections.Counter = collections.Counter()
    done, t0 = [0], time.monotonic()

    async def one(index: int) -> None:
        s = Session(url, args.timeout)
        try:
            start = time.monotonic()
            await s.open(args.open)
            times["open"].append(time.monotonic() - start)
            replicas[s.replica or "(no balancer)"] += 1
            errors.extend(f"session {index}, open: {e}" for e in s.check_map())
            while time.monotonic() - t0 < args.seconds and not queue.empty():
                number, text = queue.get_nowait()
                s.text = text
                start = time.monotonic()
                await s.rerun({TEXT_KEY: text})
                times["new set"].append(time.monotonic() - start)
                traffic.set_bytes.append(s.run_bytes)
                if s.page.map_rows is not None:
                    traffic.map_bytes.append(s.page.map_bytes)
                errors.extend(f"session {index}, set {number}: {e}" for e in s.check_map())
                for move in range(args.moves):
                    seconds, _, problems = await slide(s, args.layer, 0.1)
                    if seconds:
                        times["slider move"].append(seconds)
                    errors.extend(f"session {index}, set {number}, move {move + 1}: {e}" for e in problems)
                for drag in range(args.drags):
                    # the button down: the browser redraws the map from the bound params; this client, like the
                    # page, sends nothing until the release
                    sent = s.sent
                    traffic.drag_before_release.append(s.sent - sent)
                    seconds, _, problems = await slide(s, args.layer, 1.0)  # the release: one rerun
                    traffic.drag_at_release.append(s.sent - sent)
                    if seconds:
                        times["release to map"].append(seconds)
                    errors.extend(f"session {index}, set {number}, drag {drag + 1}: {e}" for e in problems)
                done[0] += 1
                if done[0] % 10 == 0:
                    print(f"  {done[0]:4d} sets  {time.monotonic() - t0:6.0f} s", flush=True)
        except Exception as err:  # one broken session must not hide the others' figures
            errors.append(f"session {index}: {type(err).__name__}: {err}")
        finally:
            await s.close()

    await asyncio.gather(*(one(i) for i in range(args.sessions)))
    return times, errors, done[0], dict(replicas), traffic


class BrowserDrags(threading.Thread):
    """``--browser-drags``: one headless Chromium (benchmarks.live_drag.DragBrowser, 1,400 x 1,000) that opens
    ``url`` and drags the w_``layer`` slider ``count`` times with the mouse while the sessions run. ``result``:
    its open and each drag's figures; ``error``: what stopped it."""

    def __init__(self, url: str, count: int, layer: int, timeout: float):
        super().__init__(daemon=True)
        self.url, self.count, self.layer, self.timeout = url, count, layer, timeout
        self.result: dict = {"drags": []}
        self.error = ""
        self.t0 = time.monotonic()

    def run(self) -> None:
        from benchmarks.live_drag import DragBrowser

        browser = None
        try:
            browser = DragBrowser(1400, 1000)
            self.result["open"] = browser.open(self.url, self.timeout)
            for _ in range(self.count):
                at = time.monotonic() - self.t0
                drag = browser.drag(f".st-key-explorer_w_{self.layer}", timeout=self.timeout)
                drag["at_s"] = at  # the drag's start, seconds after the sessions started
                self.result["drags"].append(drag)
                time.sleep(0.5)
        except Exception as err:
            self.error = f"{type(err).__name__}: {err}"
        finally:
            if browser is not None:
                browser.close()


def p95(values: list[float]) -> float:
    """The 95th percentile (inclusive method: between the values, never outside them); the value itself for one."""
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "median_s": statistics.median(values), "p95_s": p95(values), "max_s": max(values)}


def browser_problems(result: dict) -> list[str]:
    """The browser's drags that sent a frame while the button was down, or other than one at the release, or left
    the map unmoved."""
    out = []
    for i, d in enumerate(result.get("drags", []), 1):
        if d["sent_during"] or d["sent_at_release"] != 1:
            out.append(f"browser drag {i}: {d['sent_during']} frames sent during it, {d['sent_at_release']} at release")
        if not d["redraws"] or not d["labels_moved_before_release"]:
            out.append(f"browser drag {i}: the map did not move while the button was down")
    return out


def drag_messages(traffic: Traffic, browser: dict | None) -> dict:
    """The messages per drag (sessions: BackMsgs; browser: websocket frames sent), before and at the release, and
    the bytes per set, as figures and as the lines to print."""

    def counts(values: list[int]) -> dict[int, int]:
        return dict(sorted(collections.Counter(values).items()))

    out = {
        "sessions_before_release": counts(traffic.drag_before_release),
        "sessions_at_release": counts(traffic.drag_at_release),
        "set_bytes": summary([float(b) for b in traffic.set_bytes]),
        "map_arrow_bytes": summary([float(b) for b in traffic.map_bytes]),
    }
    lines = [
        f"messages per drag, sessions ({len(traffic.drag_at_release)} drags; count: drags): before the release "
        f"{out['sessions_before_release']}, at the release {out['sessions_at_release']}"
    ]
    if browser is not None:
        drags = browser.get("drags", [])
        out["browser_during"] = [d["sent_during"] for d in drags]
        out["browser_at_release"] = [d["sent_at_release"] for d in drags]
        out["browser_redraws"] = [d["redraws"] for d in drags]
        lines.append(
            f"browser ({len(drags)} mouse drags on w_2): websocket frames sent while the button was down "
            f"{out['browser_during']}, at the release {out['browser_at_release']}; map redraws during each "
            f"{out['browser_redraws']}"
            + (f"; open {browser['open']['open_s']:.2f} s" if "open" in browser else "")
            + "; drags began at "
            + ", ".join(f"{d.get('at_s', 0):.0f}" for d in drags)
            + " s"
        )
    for name in ("set_bytes", "map_arrow_bytes"):
        f = out[name]
        if f["n"]:
            what = "received for a new set's run" if name == "set_bytes" else "of it the map's Arrow data"
            lines.append(
                f"bytes {what}: median {f['median_s']:,.0f}, p95 {f['p95_s']:,.0f}, max {f['max_s']:,.0f} "
                f"({f['n']} sets)"
            )
    return {**out, "lines": lines}


def server_env() -> dict[str, str]:
    return {
        "ELMO_EXPLORER_UMAP_WARMUP": os.environ.get("ELMO_EXPLORER_UMAP_WARMUP", "0"),
        "ELMO_EXPLORER_DEVICE": os.environ.get("ELMO_EXPLORER_DEVICE", "cpu"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument(
        "--sets",
        type=int,
        default=None,
        help="sentence sets in all, shared out to the sessions (default: 2 per session)",
    )
    parser.add_argument("--sentences", type=int, default=30, help="sentences per set")
    parser.add_argument("--moves", type=int, default=3, help="slider moves (one step) after each set")
    parser.add_argument("--drags", type=int, default=1, help="slider drags (a whole unit) after the moves")
    parser.add_argument(
        "--browser-drags",
        type=int,
        default=0,
        help="also run one headless Chromium alongside the sessions that drags the slider this many times "
        "with the mouse (benchmarks/live_drag.py) and counts the websocket frames it sends",
    )
    parser.add_argument("--layer", type=int, default=2, help="the layer whose slider moves")
    parser.add_argument("--open", default="ex=bank&word=bank", help="the link's query string every session opens")
    parser.add_argument("--seconds", type=float, default=600, help="stop handing out sets after this long")
    parser.add_argument("--timeout", type=float, default=300, help="longest wait for one page run")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running server or balancer (http://host:port); default: start one here")
    where.add_argument(
        "--replicas",
        type=int,
        default=0,
        help="start this many replicas behind HAProxy here (deploy/replicas.py) instead of one server",
    )
    parser.add_argument(
        "--pid",
        type=int,
        action="append",
        default=[],
        help="with --url: a local server process whose memory to report (repeat for several)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="no warm-up visit: the sessions meet a server that "
        "has not yet loaded the model and the libraries (default: one visit per replica first)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    if not 1 <= args.sessions <= MAX_SESSIONS:
        parser.error(f"--sessions must be 1..{MAX_SESSIONS}")
    args.sets = 2 * args.sessions if args.sets is None else args.sets
    if not 0 <= args.sets <= 1000:
        parser.error("--sets must be 0..1000")
    if not 0 <= args.drags <= 20 or not 0 <= args.browser_drags <= 50:
        parser.error("--drags must be 0..20 and --browser-drags 0..50")
    if args.browser_drags:
        from benchmarks.live_drag import browser_missing

        if browser_missing():
            parser.error(f"--browser-drags: {browser_missing()}")
    sets = sentence_sets(args.sets, args.sentences)

    from deploy.replicas import Cluster

    cluster = None if args.url else Cluster(max(args.replicas, 1), env=server_env())
    try:
        if cluster is None:
            url, pids, what = args.url, args.pid, args.url
        elif args.replicas:
            cluster.start()
            url, what = cluster.url, f"{args.replicas} replicas behind HAProxy at {cluster.url}"
        else:  # one server, no balancer: the process `make app` runs
            cluster.start_replicas()
            url, what = cluster.members[0].url, f"one server at {cluster.members[0].url}"
        pids = args.pid if cluster is None else list(cluster.pids.values())
        started = sum(rss_mb(pid)[0] for pid in pids)
        if not args.cold:
            asyncio.run(warm_up(url, max(args.replicas, 1), args.open, args.timeout))
        watch = MemoryWatch(pids)
        print(
            f"{args.sessions} sessions, {len(sets)} sets of {args.sentences} sentences, {args.moves} slider moves "
            f"and {args.drags} drags each"
            + (f", a browser dragging {args.browser_drags} times" if args.browser_drags else "")
            + f"; {what}; server RSS after start {started:,.0f} MiB"
            + ("" if args.cold else f", after a warm-up visit {sum(watch.start.values()):,.0f} MiB"),
            flush=True,
        )
        browser = None
        if args.browser_drags:
            browser = BrowserDrags(f"{url}/?{args.open}", args.browser_drags, args.layer, args.timeout)
            browser.start()
        t0, own_cpu = time.monotonic(), time.process_time()
        times, errors, done, replicas, traffic = asyncio.run(drive(args, url, sets))
        elapsed, own_cpu = time.monotonic() - t0, time.process_time() - own_cpu  # the sessions' side, on this machine
        if any(n != 1 for n in traffic.drag_at_release):
            errors.append(f"a session's drag sent other than one message: {traffic.drag_at_release}")
        if browser is not None:
            browser.join(args.timeout + 60)
            if browser.error:
                errors.append(f"browser: {browser.error}")
            errors.extend(browser_problems(browser.result))
        time.sleep(2)  # let the last runs' garbage go
        memory = watch.stop()
    finally:
        if cluster is not None:
            cluster.stop()
    if cluster is not None and not errors:
        shutil.rmtree(cluster.log_dir, ignore_errors=True)  # the servers' logs are kept only when something failed
    figures = {name: summary(v) for name, v in times.items()}
    if browser is not None and browser.result["drags"]:
        figures["browser release to map"] = summary([d["release_to_map_s"] for d in browser.result["drags"]])
    print(
        f"done: {done} of {len(sets)} sets in {elapsed:.0f} s, {len(errors)} errors"
        + (f" (the servers' logs: {cluster.log_dir})" if cluster and errors else "")
    )
    for e in errors[:8]:
        print("  error:", e)
    if args.replicas or any(name != "(no balancer)" for name in replicas):
        print("sessions per replica:", ", ".join(f"{k} {v}" for k, v in sorted(replicas.items())))
    print(f"{'action':22s} {'n':>4s} {'median':>8s} {'p95':>8s} {'max':>8s}")
    for name, f in figures.items():
        if f["n"]:
            print(f"{name:22s} {f['n']:4d} {f['median_s']:7.2f}s {f['p95_s']:7.2f}s {f['max_s']:7.2f}s")
    messages = drag_messages(traffic, browser.result if browser is not None else None)
    for line in messages["lines"]:
        print(line)
    if pids:
        print(
            f"server RSS (MiB): start {sum(memory['start_mb'].values()):,.0f}, peak of the sum "
            f"{memory['peak_sum_mb']:,.0f}, final {memory['final_sum_mb']:,.0f} (sessions closed); "
            f"each process's peak: {', '.join(f'{v:,.0f}' for v in memory['peak_mb'].values())}"
        )
        print(
            f"server CPU: {sum(memory['cpu_s'].values()):,.0f} s in {memory['wall_s']:.0f} s, cores busy on average: "
            + ", ".join(f"{v:.2f}" for v in memory["cores_busy"].values())
        )
    print(f"this load generator's CPU: {own_cpu:.0f} s ({own_cpu / max(elapsed, 1e-9):.2f} cores)")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "args": {k: str(v) for k, v in vars(args).items()},
                    "sets_done": done,
                    "seconds": elapsed,
                    "generator_cpu_s": own_cpu,
                    "errors": errors,
                    "timings": figures,
                    "replicas": replicas,
                    "memory": memory,
                    "drag_messages": {k: v for k, v in messages.items() if k != "lines"},
                    "browser": browser.result if browser is not None else None,
                    "raw": times,
                },
                indent=1,
            )
        )
    incomplete = done < len(sets) and elapsed < args.seconds
    return 1 if errors or incomplete or len(times["open"]) < args.sessions else 0


if __name__ == "__main__":
    raise SystemExit(main())
