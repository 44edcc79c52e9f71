"""Fixtures for the browser suite: a real `streamlit run` server and headless Debian Chromium.

Nothing here downloads a browser: Chromium comes from the system (apt's `chromium`), found with
``shutil.which`` or the ``TP_CHROMIUM`` environment variable, and Playwright only drives it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "screenshots"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
HEALTH_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class StreamlitServer:
    url: str
    process: subprocess.Popen
    log_path: Path
    started_at: float

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


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
    """Start ``streamlit run app.py`` on a free port; output goes to a file (a full pipe blocks).

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


def stop_process(process: subprocess.Popen) -> None:
    """Terminate ``process``; kill it when it has not ended after 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_server(server: StreamlitServer) -> None:
    stop_process(server.process)


def chromium_path() -> str:
    path = os.environ.get("TP_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.fail(
            "Chromium not found: install Debian's `chromium` (apt-get install chromium) or set "
            "TP_CHROMIUM to a Chromium binary. Never run `playwright install`."
        )
    return path


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server() -> Iterator[StreamlitServer]:
    """One warm server shared by the page-by-page tests."""
    running = start_server("shared")
    yield running
    stop_server(running)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
