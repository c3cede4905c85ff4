"""The live map in a real browser: frame times while a weight slider or γ is dragged, the messages a drag sends, and
the bytes each example set costs to open.

    python -m benchmarks.live_drag                              # its own server (python -m app.launch), every set
    python -m benchmarks.live_drag --url http://127.0.0.1:8501 --json drag.json

One headless Chromium (Debian's), at 1,024 x 768 and at 1,400 x 1,000 CSS pixels, opens every example set's link
(``/?ex=NAME&word=NAME``, the names of app/explore/examples.py) and drags the top layer's slider (w_2) and then γ
with the mouse: press on the slider's thumb, ``--steps`` moves of ``--step-px`` pixels ``--pause`` seconds apart,
release. Before each drag the page gets a requestAnimationFrame loop (every frame's time stamp) and a
MutationObserver on the map's SVG (each callback: one redraw of the map, its time stamp). From them, for the time
the button was down:

  redraws       the map's redraws (mutation callbacks; one per slider step that changed the value, if it keeps up)
  interval      the time between consecutive redraws (ms; bounded below by the drag's own pace, ``--pause``)
  frame         per redraw, the animation frame it fell in: from that frame's start to the next frame's start,
                when the redraw can be on screen (ms; 16.7 at 60 Hz when a redraw fits in a frame)
  longest       the longest animation frame while the button was down (ms)
  lag           per redraw, from the bridge's event on the slider (its value moved) to the redraw (ms): the cost
                of one redraw (Vega's params, transforms and SVG)
  labels moved  the marks' aria-labels ("series · head · ... x = X, y = Y") differ from those before the drag
                while the button is still down (the map moved in the browser, before anything reached the server)
  sent          websocket frames the page sent while the button was down, and at the release (Chrome's
                performance log, Network.webSocketFrameSent): 0 and 1 expected
  release       from the release (pointerup) to the end of the run it started (the ForwardMsg script_finished
                received: the released map's data arrived before it), in the page's clock

Opening a set: the websocket frames received from the navigation until the page's first run finished (Chrome's
Network.webSocketFrameReceived, payload bytes as sent, decoded from base64), and of those the message that carries
the map (its Vega-Lite chart: the Arrow rows with x, y and the live columns). Every figure is one drag on one page
with nothing else running on the server; the machine (2 cores) is shared by the server and the browser.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

EXAMPLES = ("bank", "play", "spring", "cell", "match", "light")  # app.explore.examples.EXAMPLE_SETS (word = name)
SIZES = ((1024, 768), (1400, 1000))
SLIDERS = {"w_2": ".st-key-explorer_w_2", "γ": ".st-key-explorer_gamma"}  # app.session.keys: the rail's sliders
MAP_KEY = "explorer_map_chart"  # app.session.keys.MAP_CHART
MAP_SVG = f".st-key-{MAP_KEY} [data-testid=stVegaLiteChart] svg"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1400,1100",
]

# Runs before the page's own scripts: the time stamp and size of every websocket message the page receives (and,
# while __ld.keep, from the page's start and during a drag, its bytes, to be read as ForwardMsgs here).
HOOK_JS = """
window.__ld = {recv: [], keep: true, mark: 0};
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener('message', (ev) => {
    const rec = {t: performance.now(), n: ev.data.byteLength === undefined ? ev.data.length : ev.data.byteLength};
    window.__ld.recv.push(rec);
    if (window.__ld.keep && ev.data.byteLength !== undefined) {
      const b = new Uint8Array(ev.data); let s = '';
      for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192));
      rec.b64 = btoa(s);
    }
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
"""
LABELS_JS = f"return [...document.querySelectorAll('{MAP_SVG} [aria-label]')].map(e => e.getAttribute('aria-label'))"
# Before a drag: the animation-frame loop, the map's redraws, the bridge's events on the slider, the button's times.
ARM_JS = f"""
const L = window.__ld, input = arguments[0];
L.raf = []; L.mut = []; L.live = []; L.down = null; L.up = null; L.keep = true; L.mark = L.recv.length;
L.obs = new MutationObserver(() => L.mut.push(performance.now()));
L.obs.observe(document.querySelector('{MAP_SVG}'), {{subtree: true, attributes: true, childList: true,
                                                      characterData: true}});
L.run = true; const loop = (t) => {{ L.raf.push(t); if (L.run) requestAnimationFrame(loop); }};
requestAnimationFrame(loop);
L.onLive = () => L.live.push(performance.now()); input.addEventListener('elmo-live', L.onLive);
L.input = input;
document.addEventListener('pointerdown', () => {{ L.down = performance.now(); }}, {{capture: true, once: true}});
document.addEventListener('pointerup', () => {{ L.up = performance.now(); }}, {{capture: true, once: true}});
"""
DISARM_JS = """
const L = window.__ld; L.run = false; L.obs.disconnect(); L.input.removeEventListener('elmo-live', L.onLive);
L.keep = false;
return {raf: L.raf, mut: L.mut, live: L.live, down: L.down, up: L.up};
"""
KEPT_JS = "const L = window.__ld; return L.recv.slice(L.mark).map(r => [r.t, r.n, r.b64 || ''])"


# ---- figures (no browser) --------------------------------------------------------------------------------------
def p95(values: list[float]) -> float:
    """The 95th percentile (inclusive method: between the values, never outside them); the value itself for one."""
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


def stats_ms(values: list[float]) -> dict:
    """n, median, p95 and max of ``values`` (ms); {"n": 0} for none."""
    if not values:
        return {"n": 0}
    return {"n": len(values), "median_ms": statistics.median(values), "p95_ms": p95(values), "max_ms": max(values)}


def frame_times(
    raf: list[float], redraws: list[float], start: float, end: float, events: list[float] | None = None
) -> dict:
    """The drag's figures from the animation frames' time stamps ``raf``, the map's redraws' ``redraws`` and the
    bridge's events ``events`` on the slider (ms, one clock), counting what lies in [start, end] (the button down):

    redraws: how many; intervals: between consecutive redraws; frames: per redraw, from the start of the animation
    frame it fell in to the next frame's start (a redraw after the last recorded frame has none); longest_frame:
    the longest interval between consecutive frames that overlaps [start, end] (0 with fewer than two frames);
    lags: per redraw, the time since the last event before it (the bound param's new value to the map redrawn)."""
    inside = sorted(t for t in redraws if start <= t <= end)
    ticks = sorted(raf)
    frames = []
    for t in inside:
        before = [r for r in ticks if r <= t]
        after = [r for r in ticks if r > t]
        if before and after:
            frames.append(after[0] - before[-1])
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False) if b >= start and a <= end]
    lags = []
    for t in inside:
        last = [e for e in events or [] if e <= t]
        if last:
            lags.append(t - max(last))
    return {
        "redraws": len(inside),
        "intervals": [b - a for a, b in zip(inside, inside[1:], strict=False)],
        "frames": frames,
        "longest_frame": max(gaps, default=0.0),
        "lags": lags,
    }


def performance_messages(entries: list[dict], method: str) -> list[dict]:
    """The CDP events named ``method`` in Chrome's performance log entries (each {"message": JSON text})."""
    out = []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == method:
            out.append(message["params"])
    return out


def payload_bytes(frame: dict) -> int:
    """A websocket frame's payload size as it travelled: CDP gives a binary frame (opcode 2) base64-encoded, a text
    frame (opcode 1) as text."""
    response = frame["response"]
    data = response.get("payloadData", "")
    if response.get("opcode") == 2:
        return len(base64.b64decode(data))
    return len(data.encode("utf-8"))


def forward_kind(data: bytes) -> tuple[str, str]:
    """(what a ForwardMsg is, the user key of the element it adds or ""): "script_finished", "delta", ..."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    msg.ParseFromString(data)
    kind = msg.WhichOneof("type") or ""
    if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        element = msg.delta.new_element
        widget = getattr(element, element.WhichOneof("type") or "", None)
        widget_id = getattr(widget, "id", "")
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):
            return kind, widget_id.split("-", 2)[2]
    return kind, ""


def map_message_bytes(payloads: list[bytes]) -> int:
    """The size of the (last) ForwardMsg among ``payloads`` that draws the contexts map; 0 when none does."""
    sizes = [len(p) for p in payloads if forward_kind(p) == ("delta", MAP_KEY)]
    return sizes[-1] if sizes else 0


def labels_moved(before: list[str], during: list[str]) -> int:
    """How many marks' aria-labels differ between two readings of the map (marks added or gone count too)."""
    return sum(a != b for a, b in zip(before, during, strict=False)) + abs(len(before) - len(during))


# ---- the browser -----------------------------------------------------------------------------------------------
def browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    return f"{' and '.join(missing)} not found (Debian's chromium and chromium-driver)" if missing else None


class DragBrowser:
    """One headless Chromium whose viewport is ``width`` x ``height``, with Chrome's performance log (the
    websocket frames) and HOOK_JS in every page."""

    def __init__(self, width: int, height: int):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="elmo-live-drag-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS + [f"--user-data-dir={self.profile}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK_JS})
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            time.sleep(0.5)  # Chromium's last processes may still write into the profile just after quit
            shutil.rmtree(self.profile, ignore_errors=True)

    def _log(self) -> list[dict]:
        return self.driver.get_log("performance")  # drains it: each call returns what came since the last

    def _wait(self, what: str, check, timeout: float, every: float = 0.05):
        end = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"no {what} in {timeout:.0f} s")
            time.sleep(every)

    def _run_finished(self, timeout: float) -> tuple[float, list[bytes], list[float]]:
        """Waits for the ForwardMsg script_finished among the messages kept since the last ARM_JS (or open);
        returns its time stamp (page clock, ms), the kept messages' bytes and their time stamps."""
        kept: list[tuple[float, bytes]] = []

        def finished():
            for t, _n, b64 in self.driver.execute_script(KEPT_JS)[len(kept) :]:
                kept.append((t, base64.b64decode(b64) if b64 else b""))
                if b64 and forward_kind(kept[-1][1])[0] == "script_finished":
                    return t
            return None

        done = self._wait("script_finished", finished, timeout, every=0.1)
        return done, [b for _, b in kept], [t for t, _ in kept]

    def open(self, url: str, timeout: float = 300) -> dict:
        """Opens ``url``; waits for the map's marks and the first run's end. Returns the seconds to the map's
        marks, the websocket frames received (count, payload bytes) and the map's message size."""
        self._log()
        start = time.monotonic()
        self.driver.get(url)
        self._wait("map", lambda: len(self.driver.execute_script(LABELS_JS)) > 0, timeout)
        to_map = time.monotonic() - start
        _, payloads, _ = self._run_finished(timeout)
        time.sleep(0.3)
        received = performance_messages(self._log(), "Network.webSocketFrameReceived")
        return {
            "open_s": to_map,
            "frames_received": len(received),
            "bytes_received": sum(payload_bytes(f) for f in received),
            "map_message_bytes": map_message_bytes(payloads),
            "points": len(self.driver.execute_script(LABELS_JS)),
        }

    def drag(self, slider: str, steps: int = 12, step_px: int = 4, pause: float = 0.05, timeout: float = 300) -> dict:
        """Drags the thumb of the slider in the element ``slider`` (a CSS selector) by ``steps`` moves of
        ``step_px`` pixels (towards the middle of its range), ``pause`` seconds apart, then releases it; see the
        module's docstring for what it returns."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By

        d = self.driver
        box = d.find_element(By.CSS_SELECTOR, slider)
        d.execute_script("arguments[0].scrollIntoView({block: 'nearest'})", box)
        time.sleep(0.2)
        input_ = box.find_element(By.CSS_SELECTOR, "input[type=range]")
        thumb = d.execute_script("return arguments[0].parentElement.parentElement", input_)  # react-aria's thumb
        low, high, value = (float(input_.get_attribute(a)) for a in ("min", "max", "value"))
        direction = 1 if value <= (low + high) / 2 else -1
        before = d.execute_script(LABELS_JS)
        d.execute_script(ARM_JS, input_)
        self._log()
        actions = ActionChains(d, duration=0).click_and_hold(thumb)
        for _ in range(steps):
            actions.pause(pause).move_by_offset(direction * step_px, 0)
        actions.perform()
        time.sleep(0.1)
        during = d.execute_script(LABELS_JS)
        dragged_to = float(input_.get_attribute("value"))
        sent_during = performance_messages(self._log(), "Network.webSocketFrameSent")
        ActionChains(d, duration=0).release().perform()
        finished, _, _ = self._run_finished(timeout)
        time.sleep(0.2)
        sent_release = performance_messages(self._log(), "Network.webSocketFrameSent")
        page = d.execute_script(DISARM_JS)
        if page["down"] is None or page["up"] is None:
            raise RuntimeError(f"the drag on {slider} saw no pointerdown/pointerup")
        figures = frame_times(page["raf"], page["mut"], page["down"], page["up"], page["live"])
        return {
            "from": value,
            "to": dragged_to,
            "live_events": sum(1 for t in page["live"] if page["down"] <= t <= page["up"]),
            **figures,
            "labels_moved_before_release": labels_moved(before, during),
            "points": len(before),
            "sent_during": len(sent_during),
            "sent_at_release": len(sent_release),
            "bytes_sent_at_release": sum(payload_bytes(f) for f in sent_release),
            "release_to_map_s": (finished - page["up"]) / 1000,
            "redraws_after_release": sum(1 for t in page["mut"] if t > page["up"]),
        }


# ---- a server of its own ---------------------------------------------------------------------------------------
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log: Path) -> tuple[subprocess.Popen, str]:
    """``python -m app.launch`` on a free local port (ELMO_EXPLORER_DEVICE=cpu, no UMAP warm-up unless set), in
    its own process group; returns it and its URL once healthy."""
    port = free_port()
    env = dict(
        os.environ,
        ELMO_EXPLORER_DEVICE=os.environ.get("ELMO_EXPLORER_DEVICE", "cpu"),
        ELMO_EXPLORER_UMAP_WARMUP=os.environ.get("ELMO_EXPLORER_UMAP_WARMUP", "0"),
    )
    command = [sys.executable, "-m", "app.launch", "--server.port", str(port), "--server.address", "127.0.0.1"]
    command += ["--server.headless", "true"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 180
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    stop_server(proc)
    raise SystemExit(f"the server did not start (log: {log})")


def stop_server(proc: subprocess.Popen) -> None:
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# ---- the run ---------------------------------------------------------------------------------------------------
def _ms(f: dict) -> str:
    return f"{f['median_ms']:6.1f} {f['p95_ms']:6.1f}" if f.get("n") else f"{'-':>6s} {'-':>6s}"


def run(args, url: str) -> tuple[list[dict], list[str]]:
    rows, problems = [], []
    for width, height in SIZES:
        browser = DragBrowser(width, height)
        try:
            browser.open(f"{url}/?ex={args.examples[0]}&word={args.examples[0]}", args.timeout)  # untimed warm-up
            for name in args.examples:
                opened = browser.open(f"{url}/?ex={name}&word={name}", args.timeout)
                for slider, selector in SLIDERS.items():
                    drag = browser.drag(selector, args.steps, args.step_px, args.pause, args.timeout)
                    row = {"size": f"{width}x{height}", "set": name, "slider": slider, **opened, **drag}
                    rows.append(row)
                    where = f"{row['size']} {name} {slider}"
                    if drag["sent_during"]:
                        problems.append(f"{where}: {drag['sent_during']} frames sent during the drag")
                    if drag["sent_at_release"] != 1:
                        problems.append(f"{where}: {drag['sent_at_release']} frames sent at the release")
                    if not drag["redraws"] or not drag["labels_moved_before_release"]:
                        problems.append(f"{where}: the map did not move during the drag ({drag['redraws']} redraws)")
                    if drag["to"] == drag["from"]:
                        problems.append(f"{where}: the slider did not move")
                    print(
                        f"  {where:24s} {drag['from']:5.2f}->{drag['to']:5.2f} redraws {drag['redraws']:3d} "
                        f"frame {_ms(stats_ms(drag['frames']))} ms, release {drag['release_to_map_s']:.2f} s",
                        flush=True,
                    )
        finally:
            browser.close()
    return rows, problems


def table(rows: list[dict]) -> str:
    head = (
        f"{'size':9s} {'set':6s} {'slider':6s} {'redraws':>7s} {'live ev':>7s} {'frame med':>9s} {'p95':>6s} "
        f"{'intvl med':>9s} {'p95':>6s} {'lag med':>7s} {'p95':>6s} {'longest':>7s} {'moved':>5s} {'sent drag':>9s} {'release':>7s} "
        f"{'rel. s':>6s} {'open rx B':>9s} {'map msg B':>9s}"
    )
    lines = [head]
    for r in rows:
        frames, intervals, lags = stats_ms(r["frames"]), stats_ms(r["intervals"]), stats_ms(r["lags"])
        lines.append(
            f"{r['size']:9s} {r['set']:6s} {r['slider']:6s} {r['redraws']:7d} {r['live_events']:7d} "
            f"{_ms(frames).split()[0]:>9s} {_ms(frames).split()[1]:>6s} {_ms(intervals).split()[0]:>9s} "
            f"{_ms(intervals).split()[1]:>6s} {_ms(lags).split()[0]:>7s} {_ms(lags).split()[1]:>6s} "
            f"{r['longest_frame']:7.1f} "
            f"{r['labels_moved_before_release']:2d}/{r['points']:<2d} {r['sent_during']:9d} "
            f"{r['sent_at_release']:7d} {r['release_to_map_s']:6.2f} {r['bytes_received']:9,d} "
            f"{r['map_message_bytes']:9,d}"
        )
    every = [f for r in rows for f in r["frames"]]
    gaps = [f for r in rows for f in r["intervals"]]
    release = [r["release_to_map_s"] * 1000 for r in rows]
    lags = [f for r in rows for f in r["lags"]]
    lines.append(
        f"all drags: frame {_ms(stats_ms(every))} ms (median, p95 of {len(every)} redraws), interval "
        f"{_ms(stats_ms(gaps))} ms, lag {_ms(stats_ms(lags))} ms, release to map {_ms(stats_ms(release))} ms, frames sent during drags "
        f"{sum(r['sent_during'] for r in rows)}, at releases {sum(r['sent_at_release'] for r in rows)} "
        f"({len(rows)} drags)"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running explorer (http://host:port); default: start one here")
    parser.add_argument("--examples", nargs="+", default=list(EXAMPLES), choices=EXAMPLES)
    parser.add_argument("--steps", type=int, default=12, help="mouse moves per drag")
    parser.add_argument("--step-px", type=int, default=4, help="pixels per move")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between moves")
    parser.add_argument("--timeout", type=float, default=300, help="longest wait for a page's run")
    parser.add_argument("--json", type=Path, help="also write every drag's figures to this file")
    args = parser.parse_args()
    if not 1 <= args.steps <= 100 or not 1 <= args.step_px <= 50 or not 0 <= args.pause <= 2:
        parser.error("--steps 1..100, --step-px 1..50, --pause 0..2")
    missing = browser_missing()
    if missing:
        parser.error(missing)
    proc, log = None, Path(tempfile.mkdtemp(prefix="elmo-live-drag-server-")) / "server.log"
    url = args.url.rstrip("/") if args.url else None
    if url is None:
        proc, url = start_server(log)
    try:
        rows, problems = run(args, url)
    finally:
        if proc is not None:
            stop_server(proc)
    print(table(rows))
    for p in problems:
        print("  problem:", p)
    if args.json:
        args.json.write_text(json.dumps({"url": url, "args": vars(args) | {"json": str(args.json)}, "drags": rows}))
    if proc is not None and not problems:
        shutil.rmtree(log.parent, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
