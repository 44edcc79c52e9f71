"""Debian's nginx in front of local replicas, with the config ``deploy/nginx_conf.py`` renders.

nginx runs as an ordinary process (``daemon off``) on a free port, with its pid, logs and temp
folders in a folder of the caller's; when it stops, its logs are copied to ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from deploy.nginx_conf import ROUTE_COOKIE, render
from testing.servers import ARTIFACTS, free_port, stop_process

NGINX_START_TIMEOUT_S = 30


def nginx_path() -> str:
    """The nginx binary: ``TP_NGINX``, else ``nginx`` on the PATH or in /usr/sbin.

    Raises FileNotFoundError, saying how to install it, when there is none.
    """
    path = (
        os.environ.get("TP_NGINX")
        or shutil.which("nginx")
        or shutil.which("nginx", path="/usr/sbin")  # not on an unprivileged user's PATH
    )
    if not path:
        raise FileNotFoundError(
            "nginx not found: install Debian's `nginx` (apt-get install nginx) or set TP_NGINX "
            "to an nginx binary. The replica test runs it as an ordinary process."
        )
    return path


@dataclass
class Proxy:
    """A running nginx: its base URL, process and the folder with its config and logs."""

    url: str
    process: subprocess.Popen
    run_dir: Path

    def access_log(self) -> str:
        path = self.run_dir / "access.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def error_log(self) -> str:
        path = self.run_dir / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


def answer_for(proxy_url: str, route: str | None = None) -> tuple[str, str | None]:
    """The X-Upstream of a health request through nginx sent with ``route`` as the cookie, and
    the route cookie the response sets."""
    headers = {"Cookie": f"{ROUTE_COOKIE}={route}"} if route else {}
    request = urllib.request.Request(f"{proxy_url}/_stcore/health", headers=headers)
    with urllib.request.urlopen(request, timeout=5) as response:
        cookies = response.headers.get_all("Set-Cookie") or []
        routes = [m[1] for m in (re.match(rf"{ROUTE_COOKIE}=([^;]*);", c) for c in cookies) if m]
        return response.headers["X-Upstream"], routes[0] if routes else None


def upstream_for(proxy_url: str, route: str | None = None) -> str:
    """The X-Upstream of a health request through nginx, sent with ``route`` as the cookie."""
    return answer_for(proxy_url, route)[0]


def _wait_for_proxy(proxy: Proxy) -> None:
    deadline = time.monotonic() + NGINX_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proxy.process.poll() is not None:
            raise RuntimeError(f"nginx exited early:\n{proxy.error_log()}")
        try:
            upstream_for(proxy.url)
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nginx did not answer in {NGINX_START_TIMEOUT_S} s:\n{proxy.error_log()}")


def start_nginx(upstreams: list[str], run_dir: Path, *, expose_upstream: bool = True) -> Proxy:
    """nginx on a free port in front of ``upstreams`` (``host:port`` each) with the generated
    config; by default the tests' variant, whose responses name the replica that answered
    (X-Upstream)."""
    port = free_port()
    conf = run_dir / "nginx.conf"
    # Started by root, nginx's workers would drop to `nobody`, who cannot write the temp
    # folders in a root-owned tmp dir (static files and uploads spill there).
    worker_user = "root" if os.geteuid() == 0 else None
    conf.write_text(
        render(upstreams, port, run_dir=run_dir, user=worker_user, expose_upstream=expose_upstream)
    )
    command = [
        nginx_path(), "-p", str(run_dir), "-e", str(run_dir / "error.log"), "-c", str(conf),
        "-g", "daemon off;",
    ]  # fmt: skip
    output = (run_dir / "nginx.out").open("w")
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    proxy = Proxy(f"http://127.0.0.1:{port}", process, run_dir)
    try:
        _wait_for_proxy(proxy)
    except Exception:
        stop_nginx(proxy)
        raise
    return proxy


def stop_nginx(proxy: Proxy) -> None:
    """Stop nginx's process and keep its logs in ``test-artifacts/``."""
    stop_process(proxy.process)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "nginx-replicas-access.log").write_text(proxy.access_log())
    (ARTIFACTS / "nginx-replicas-error.log").write_text(proxy.error_log())
