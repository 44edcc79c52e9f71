"""Real ``streamlit run app.py`` servers on free loopback ports, for browser tests and benchmarks.

Each server writes its output to ``test-artifacts/server-<name>.log`` (a full pipe would block
it) and is stopped through its process, so nothing else on the machine is touched.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
HEALTH_TIMEOUT_S = 120
#: Replicas behind one load balancer share a cookie secret, as deployed (Streamlit signs its
#: cookies with it); any value will do as long as every replica has the same one.
COOKIE_SECRET = "torch-playground-replica-test-secret"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class StreamlitServer:
    """A running server: its base URL (``http://127.0.0.1:<port>``), process and log file."""

    url: str
    process: subprocess.Popen
    log_path: Path
    started_at: float

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def address(server: StreamlitServer) -> str:
    """``127.0.0.1:<port>``: the server as an nginx upstream names it."""
    return server.url.removeprefix("http://")


def _wait_healthy(server: StreamlitServer) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{server.log()}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"streamlit was not healthy after {HEALTH_TIMEOUT_S} s:\n{server.log()}")


def start_server(name: str, env: dict[str, str] | None = None) -> StreamlitServer:
    """Start ``streamlit run app.py`` on a free port and wait until it answers its health check.

    ``env`` adds variables to this process's environment for the server (e.g. a shared
    ``STREAMLIT_SERVER_COOKIE_SECRET`` for replicas).
    """
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    log_path = ARTIFACTS / f"server-{name}.log"
    log_file = log_path.open("w")
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env} if env else None,
    )
    server = StreamlitServer(f"http://127.0.0.1:{port}", process, log_path, time.monotonic())
    try:
        _wait_healthy(server)
    except Exception:
        stop_server(server)
        raise
    return server


def start_replica(name: str, env: dict[str, str] | None = None) -> StreamlitServer:
    """A server that can stand behind a load balancer with the others (``COOKIE_SECRET``);
    ``env`` adds variables as in :func:`start_server` (e.g. the class store they share)."""
    return start_server(name, env={**(env or {}), "STREAMLIT_SERVER_COOKIE_SECRET": COOKIE_SECRET})


def stop_process(process: subprocess.Popen) -> None:
    """Terminate ``process``; kill it when it has not ended after 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_server(server: StreamlitServer) -> None:
    """Stop the server's process (only that one)."""
    stop_process(server.process)
