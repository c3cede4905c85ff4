"""benchmarks/live_drag.py and the drag of benchmarks/load.py, without a browser: the frame-time figures from time
stamps, the websocket frames read from Chrome's performance log, the map's message among a run's ForwardMsgs, the
messages a protocol session sends per drag, and the limits of the load test's arguments."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from benchmarks.live_drag import (
    MAP_KEY,
    forward_kind,
    frame_times,
    labels_moved,
    map_message_bytes,
    payload_bytes,
    performance_messages,
    stats_ms,
)
from benchmarks.load import MAX_SESSIONS, Page, Session, Traffic, drag_messages, p95, slider_target
from tests.conftest import ROOT


def test_frame_times_count_the_redraws_while_the_button_is_down():
    raf = [0.0, 16.0, 32.0, 48.0, 80.0, 96.0, 112.0]  # one long frame: 48 -> 80
    redraws = [5.0, 20.0, 50.0, 100.0, 200.0]  # 5: before the press; 200: after the last frame and the release
    figures = frame_times(raf, redraws, start=10.0, end=150.0, events=[18.0, 40.0, 99.0])
    assert figures["redraws"] == 3  # 20, 50, 100
    assert figures["intervals"] == [30.0, 50.0]
    assert figures["frames"] == [16.0, 32.0, 16.0]  # 20 in 16..32, 50 in 48..80, 100 in 96..112
    assert figures["longest_frame"] == 32.0
    assert figures["lags"] == [2.0, 10.0, 1.0]  # each redraw from the last event before it
    # a redraw after the last recorded frame has no frame time; no events, no lags
    late = frame_times([0.0, 16.0], [20.0], 0.0, 30.0)
    assert late == {"redraws": 1, "intervals": [], "frames": [], "longest_frame": 16.0, "lags": []}
    assert frame_times([], [], 0.0, 1.0)["longest_frame"] == 0.0


def test_stats_and_p95():
    values = [float(v) for v in range(1, 21)]
    assert stats_ms(values) == {"n": 20, "median_ms": 10.5, "p95_ms": 19.05, "max_ms": 20.0}
    assert p95(values) == pytest.approx(19.05)
    assert p95([7.0]) == 7.0 and stats_ms([]) == {"n": 0}


def _entry(method: str, **params) -> dict:
    return {"message": json.dumps({"message": {"method": method, "params": params}}), "level": "INFO"}


def test_websocket_frames_from_the_performance_log():
    binary = bytes(range(200))
    entries = [
        _entry("Network.webSocketFrameSent", response={"opcode": 2, "payloadData": base64.b64encode(b"abc").decode()}),
        _entry(
            "Network.webSocketFrameReceived", response={"opcode": 2, "payloadData": base64.b64encode(binary).decode()}
        ),
        _entry("Network.webSocketFrameReceived", response={"opcode": 1, "payloadData": "γγ"}),
        _entry("Network.requestWillBeSent", request={"url": "http://x/"}),
    ]
    sent = performance_messages(entries, "Network.webSocketFrameSent")
    received = performance_messages(entries, "Network.webSocketFrameReceived")
    assert len(sent) == 1 and payload_bytes(sent[0]) == 3
    assert [payload_bytes(f) for f in received] == [200, 4]  # base64 decoded; text as UTF-8
    assert performance_messages(entries, "Network.webSocketCreated") == []


def test_the_maps_message_among_a_runs_forward_msgs():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def chart(key: str, rows: bytes) -> bytes:
        msg = ForwardMsg()
        element = msg.delta.new_element.vega_lite_chart
        element.id = f"$$ID-0123abcd-{key}"
        element.data.data = rows
        return msg.SerializeToString()

    finished = ForwardMsg()
    finished.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    other, the_map = chart("explorer_other_chart", b"x" * 50), chart(MAP_KEY, b"y" * 900)
    payloads = [other, the_map, finished.SerializeToString()]
    assert forward_kind(the_map) == ("delta", MAP_KEY)
    assert forward_kind(payloads[2]) == ("script_finished", "")
    assert map_message_bytes(payloads) == len(the_map) > 900
    assert map_message_bytes([other]) == 0


def test_labels_moved_counts_changed_added_and_removed_marks():
    before = ["a · x = 1, y = 2", "b · x = 3, y = 4", "c · x = 5, y = 6"]
    assert labels_moved(before, list(before)) == 0
    assert labels_moved(before, ["a · x = 1.5, y = 2", "b · x = 3, y = 4", "c · x = 5, y = 7"]) == 2
    assert labels_moved(before, before[:2]) == 1


def test_slider_target_moves_up_or_down_inside_the_range():
    assert slider_target(0.0, -5.0, 5.0, 1.0) == 1.0
    assert slider_target(4.5, -5.0, 5.0, 1.0) == 3.5  # up would pass the top
    assert slider_target(4.9, -5.0, 5.0, 0.1) == 5.0
    assert slider_target(5.0, -5.0, 5.0, 0.1) == 4.9


class _Socket:
    """A websocket that records what is sent and answers each message with the page's run: the map's chart, a
    new URL, the end of the run."""

    def __init__(self, slider_id: str):
        self.sent: list[bytes] = []
        self.slider_id = slider_id
        self.queue: list[bytes] = []

    async def send(self, data: bytes) -> None:
        import pandas as pd
        from streamlit import dataframe_util
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.sent.append(data)
        back = BackMsg()
        back.ParseFromString(data)
        value = back.rerun_script.widget_states.widgets[0].double_array_value.data[0]
        chart = ForwardMsg()
        element = chart.delta.new_element.vega_lite_chart
        element.id = f"$$ID-00-{MAP_KEY}"
        table = pd.DataFrame({"x": [value, 1.0, 2.0], "y": [0.0, 1.0, 2.0], "series": ["river"] * 3})
        table["role"] = "occurrence"
        element.data.data = dataframe_util.convert_anything_to_arrow_bytes(table)
        page = ForwardMsg()
        page.page_info_changed.query_string = f"word=bank&w=0,0,{value}"
        end = ForwardMsg()
        end.script_finished = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
        self.queue += [chart.SerializeToString(), page.SerializeToString(), end.SerializeToString()]

    async def recv(self) -> bytes:
        return self.queue.pop(0)


def test_a_protocol_drag_is_one_message_at_the_release():
    import asyncio

    from benchmarks.load import slide

    s = Session("http://127.0.0.1:9", 5)
    slider = SimpleNamespace(min=-5.0, max=5.0)
    s.page = Page(
        query="word=bank&w=0,0,0",
        widgets={"explorer_w_2": ("$$ID-ab-explorer_w_2", "fragment-1", slider)},
        map_rows=[{"role": "occurrence", "series": "river", "x": x, "y": 0.0} for x in (0.0, 1.0, 2.0)],
    )
    s.text = "The bank. A bank. The bank of the river."
    s.ws = _Socket("$$ID-ab-explorer_w_2")
    seconds, value, problems = asyncio.run(slide(s, 2, 1.0))
    assert problems == [] and value == 1.0 and seconds >= 0
    assert s.sent == 1 and len(s.ws.sent) == 1
    from streamlit.proto.BackMsg_pb2 import BackMsg

    back = BackMsg()
    back.ParseFromString(s.ws.sent[0])
    assert back.rerun_script.fragment_id == "fragment-1"  # the release reruns the slider's fragment
    assert list(back.rerun_script.widget_states.widgets[0].double_array_value.data) == [1.0]
    assert s.page.map_bytes > 0 and s.run_bytes > s.page.map_bytes
    # the same value again: the map does not move, and the check says so
    s.page.query = "word=bank&w=0,0,0"
    _, _, problems = asyncio.run(slide(s, 2, 1.0))
    assert problems == ["moved w_2 to 1.0, the map did not change"] and s.sent == 2


def test_drag_messages_reports_sessions_and_browser():
    traffic = Traffic(drag_before_release=[0, 0, 0], drag_at_release=[1, 1, 1], set_bytes=[100, 300], map_bytes=[40])
    browser = {
        "open": {"open_s": 3.5},
        "drags": [
            {"sent_during": 0, "sent_at_release": 1, "redraws": 12, "at_s": 4.0},
            {"sent_during": 0, "sent_at_release": 1, "redraws": 11, "at_s": 7.0},
        ],
    }
    out = drag_messages(traffic, browser)
    assert out["sessions_before_release"] == {0: 3} and out["sessions_at_release"] == {1: 3}
    assert out["browser_during"] == [0, 0] and out["browser_at_release"] == [1, 1]
    assert out["browser_redraws"] == [12, 11]
    assert out["set_bytes"]["median_s"] == 200.0 and out["map_arrow_bytes"]["n"] == 1
    text = "\n".join(out["lines"])
    assert "before the release {0: 3}, at the release {1: 3}" in text
    assert "[0, 0], at the release [1, 1]" in text and "drags began at 4, 7 s" in text
    assert "browser" not in drag_messages(traffic, None)["lines"][0]


def _load_args(*extra: str) -> subprocess.CompletedProcess:
    """benchmarks.load with arguments that fail at parsing or at once (no server started: an unreachable URL)."""
    command = [sys.executable, "-m", "benchmarks.load", "--url", "http://127.0.0.1:9", "--sets", "0", *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_load_test_takes_up_to_100_sessions():
    assert MAX_SESSIONS == 100
    refused = _load_args("--sessions", "101")
    assert refused.returncode == 2 and "--sessions must be 1..100" in refused.stderr
    assert "--drags must be 0..20" in _load_args("--drags", "21").stderr
    assert "--browser-drags 0..50" in _load_args("--browser-drags", "51").stderr
    # 100 passes the parser: the run then fails only for want of a server (every session's open refused)
    accepted = _load_args("--sessions", "100", "--timeout", "5", "--cold")
    assert "must be" not in accepted.stderr and "100 sessions, 0 sets" in accepted.stdout
    assert accepted.returncode == 1 and "Connection refused" in accepted.stdout + accepted.stderr
