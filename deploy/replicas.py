"""K replicas of the explorer behind HAProxy on one machine, without Docker: a class server with more cores than
one Streamlit process can use. Each replica is ``streamlit run app/streamlit_app.py`` on its own loopback port;
HAProxy (``deploy/haproxy.cfg``, Debian package ``haproxy``) listens on ``--bind`` and shares the sessions out.

    python deploy/replicas.py --replicas 4 --bind 0.0.0.0:8501    # until Ctrl-C; the balancer's URL is printed

The replicas inherit this process's environment (``ELMO_EXPLORER_*``, ``ELMO_CORE_CACHE``: point every replica at
one model cache, which they only read while ``ELMO_EXPLORER_ALLOW_DOWNLOADS`` is unset). Every process started
here is tracked by its PID and stopped by it (its own process group), also when a start fails half way.
``tests/app/test_replicas.py`` and ``benchmarks/load.py --replicas K`` use the ``Cluster`` class.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "deploy" / "haproxy.cfg"
MAX_REPLICAS = 8  # the listed servers deploy/haproxy.cfg has slots for


def find_haproxy() -> str | None:
    """The haproxy binary: on PATH, or Debian's /usr/sbin (not on a normal user's PATH)."""
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.access(p, os.X_OK)), None
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def healthy(url: str, timeout: float = 2) -> bool:
    """Whether Streamlit at ``url`` answers "ok" on /_stcore/health (through a balancer: some replica does)."""
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=timeout) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 15) -> None:
    """Stop a process started here, with its process group (its own session), by its PID."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=wait)
    except ProcessLookupError:
        pass


class ServerStats(NamedTuple):
    """One replica in HAProxy's statistics."""

    status: str  # "UP", "DOWN", "MAINT", ... (a replica that is starting or gone is not "UP")
    connections: int  # open now: a session's websocket is one (HTTP requests come and go)


@dataclass
class Replica:
    name: str  # the server's name in HAProxy, and the value of its ELMO_REPLICA cookie
    port: int
    proc: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Cluster:
    """``with Cluster(2, env={...}) as c: c.url``: K replicas and HAProxy, all on 127.0.0.1 unless ``bind``
    says otherwise for the balancer. ``env``: extra environment for the replicas."""

    replicas: int = 2
    env: dict[str, str | None] = field(default_factory=dict)
    bind: str | None = None  # host:port for the balancer; None: 127.0.0.1 on a free port
    log_dir: Path | None = None
    start_timeout: float = 120  # all replicas healthy (they start together: on 2 busy cores ~10-30 s)
    members: list[Replica] = field(default_factory=list)
    haproxy: subprocess.Popen | None = None

    def __post_init__(self):
        if not 1 <= self.replicas <= MAX_REPLICAS:
            raise ValueError(f"replicas must be 1..{MAX_REPLICAS} (the slots in {CONFIG.name})")
        self.bind = self.bind or f"127.0.0.1:{free_port()}"
        self.stats_bind = f"127.0.0.1:{free_port()}"
        self.log_dir = Path(self.log_dir or tempfile.mkdtemp(prefix="elmo-replicas-"))
        self.log_dir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        host, _, port = self.bind.rpartition(":")
        return f"http://{'127.0.0.1' if host in ('', '0.0.0.0') else host}:{port}"

    @property
    def pids(self) -> dict[str, int]:
        return {r.name: r.proc.pid for r in self.members}

    def replica(self, name: str) -> Replica:
        return next(r for r in self.members if r.name == name)

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- start and stop ---------------------------------------------------------------------------------------
    def start(self) -> None:
        """The replicas, then HAProxy once every replica answers its health check."""
        if find_haproxy() is None:
            raise FileNotFoundError("haproxy not found: install it (Debian: apt-get install haproxy)")
        self.start_replicas()
        self.start_balancer()

    def start_replicas(self) -> None:
        """The replicas alone (``benchmarks/load.py`` measures one of them without a balancer)."""
        env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's app, whichever copy is installed
        for key, value in self.env.items():  # None: not in the replicas' environment
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        self._deadline = time.monotonic() + self.start_timeout
        for i in range(1, self.replicas + 1):  # all at once: their imports overlap
            port = free_port()
            log = self.log_dir / f"replica{i}.log"
            with open(log, "wb") as out:  # the child keeps its own copy of the file
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "streamlit",
                        "run",
                        "app/streamlit_app.py",
                        "--server.headless",
                        "true",
                        "--server.port",
                        str(port),
                        "--server.address",
                        "127.0.0.1",
                        "--browser.gatherUsageStats",
                        "false",
                        "--server.fileWatcherType",
                        "none",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            self.members.append(Replica(f"replica{i}", port, proc, log))
        for r in self.members:
            self._wait(
                lambda r=r: healthy(r.url),
                r.proc,
                r.name,
                r.log,
                f"gave no 'ok' on /_stcore/health within {self.start_timeout:.0f} s",
                0.3,
            )

    def start_balancer(self) -> None:
        """HAProxy in front of the replicas; returns once it sees every one of them UP."""
        haproxy = find_haproxy()
        if haproxy is None:
            raise FileNotFoundError("haproxy not found: install it (Debian: apt-get install haproxy)")
        lb_env = {k: v for k, v in os.environ.items() if not k.startswith(("ELMO_REPLICA", "ELMO_LB_"))}
        lb_env.update(
            ELMO_LB_BIND=self.bind,
            ELMO_LB_STATS=self.stats_bind,
            **{f"ELMO_REPLICA_{i}": f"127.0.0.1:{r.port}" for i, r in enumerate(self.members, 1)},
        )
        self.haproxy_log = self.log_dir / "haproxy.log"
        # -db: stay in the foreground (this process owns it and stops it by PID)
        with open(self.haproxy_log, "wb") as out:
            self.haproxy = subprocess.Popen(
                [haproxy, "-db", "-f", str(CONFIG)],
                env=lb_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait(
            lambda: [s.status for s in self.servers().values()] == ["UP"] * len(self.members),
            self.haproxy,
            "haproxy",
            self.haproxy_log,
            "did not see every replica UP",
            0.2,
        )

    def _wait(self, ready, proc: subprocess.Popen, name: str, log: Path, late: str, pause: float) -> None:
        """Until ``ready()``; the process's exit or the start deadline raise, with the end of its log."""
        while not ready():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            if time.monotonic() > self._deadline:
                raise TimeoutError(f"{name} {late}:\n{log.read_text()[-3000:]}")
            time.sleep(pause)

    def stop(self) -> None:
        if self.haproxy is not None:
            stop(self.haproxy)
        for r in self.members:
            stop(r.proc)

    def kill(self, name: str) -> None:
        """A replica's crash: SIGKILL to its process group, no goodbye to its sessions."""
        stop(self.replica(name).proc, signal.SIGKILL)

    # ---- what the balancer sees -------------------------------------------------------------------------------
    def servers(self) -> dict[str, ServerStats]:
        """{replica name: what HAProxy's statistics say of it now}; {} while the statistics do not answer."""
        try:
            with urllib.request.urlopen(f"http://{self.stats_bind}/stats;csv", timeout=2) as r:
                text = r.read().decode().lstrip("# ")
        except OSError:
            return {}
        return {
            row["svname"]: ServerStats(row["status"].split()[0], int(row["scur"] or 0))
            for row in csv.DictReader(io.StringIO(text))
            if row["pxname"] == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND")
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=2, help=f"1..{MAX_REPLICAS}")
    parser.add_argument("--bind", default="127.0.0.1:8501", help="the balancer's address (default 127.0.0.1:8501)")
    args = parser.parse_args()
    # SIGTERM (systemd, kill) stops the replicas and HAProxy too: they run in process groups of their own
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with Cluster(args.replicas, bind=args.bind) as cluster:
        print(
            f"{args.replicas} replicas (PIDs {cluster.pids}) behind HAProxy (PID {cluster.haproxy.pid}) at "
            f"{cluster.url}; statistics at http://{cluster.stats_bind}/stats; logs in {cluster.log_dir}",
            flush=True,
        )
        try:
            while all(r.proc.poll() is None for r in cluster.members) and cluster.haproxy.poll() is None:
                time.sleep(1)
            print("a process exited; stopping the others", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
