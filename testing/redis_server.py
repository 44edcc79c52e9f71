"""Real ``redis-server`` processes on free loopback ports, for the class store's tests.

Each server keeps nothing on disk (``--save "" --appendonly no``), writes its output to
``test-artifacts/redis-<name>.log`` and is stopped through its own process, so nothing else on
the machine is touched. ``start_redis(port=old.port)`` brings a stopped one back on its port.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from testing.servers import ARTIFACTS, free_port, stop_process

READY_TIMEOUT_S = 20


@dataclass
class RedisServer:
    """A running server: its port, URL (``redis://127.0.0.1:<port>/0``), process and log."""

    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def answers_ping(port: int) -> bool:
    """Whether a Redis server on 127.0.0.1:``port`` answers ``PING`` with ``+PONG``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def start_redis(name: str = "redis", port: int | None = None) -> RedisServer:
    """Start ``redis-server`` on ``port`` (a free one when None) and wait until it answers PING.

    Raises ``RuntimeError`` when Debian's ``redis-server`` is not installed or the server does
    not answer within ``READY_TIMEOUT_S`` seconds (its log is in the message).
    """
    executable = shutil.which("redis-server")
    if executable is None:
        raise RuntimeError("redis-server is not installed: apt-get install -y redis-server")
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port() if port is None else port
    log_path = ARTIFACTS / f"redis-{name}.log"
    command = [
        executable, "--port", str(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--daemonize", "no",
    ]  # fmt: skip
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            command, cwd=ARTIFACTS, stdout=log_file, stderr=subprocess.STDOUT
        )
    server = RedisServer(port, process, log_path)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not answers_ping(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_redis(server)
            raise RuntimeError(f"redis-server did not answer on port {port}:\n{server.log()}")
        time.sleep(0.05)
    return server


def stop_redis(server: RedisServer) -> None:
    """Stop the server's process (only that one); what it held is gone."""
    if server.process.poll() is None:
        stop_process(server.process)
