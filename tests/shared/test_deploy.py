"""Deployment files, checked without Docker: the Dockerfile, compose, nginx config and CI install.

The running system (two replicas behind nginx) is tested in tests/e2e/test_replicas.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from deploy import nginx_conf
from deploy.nginx_conf import (
    COMPOSE_UPSTREAMS,
    ROUTE_COOKIE,
    compose_config,
    max_upload_mb,
    render,
    route_name,
)
from tests.sources import imports_of
from tests.sources import sources as source_files

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_FLAGS = {
    "--server.fileWatcherType": "none",
    "--server.runOnSave": "false",
    "--server.headless": "true",
    "--server.address": "0.0.0.0",
}


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction, with continuation lines joined and comments gone."""
    logical, pending = [], ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending += stripped
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip() + " "
            continue
        logical.append(pending)
        pending = ""
    assert not pending, "Dockerfile ends inside a continued line"
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1]) for text in logical]


def arguments_of(keyword: str) -> list[str]:
    return [args for key, args in dockerfile_instructions() if key == keyword]


def test_dockerfile_installs_cpu_torch_before_the_requirements():
    runs = " && ".join(arguments_of("RUN"))
    cpu_index = runs.find("--index-url https://download.pytorch.org/whl/cpu")
    requirements = runs.find("pip install -r requirements.txt")
    assert 0 <= cpu_index < requirements, "torch must come from the CPU index, before PyPI"


def test_dockerfile_runs_as_a_non_root_user():
    keywords = [key for key, _ in dockerfile_instructions()]
    users = arguments_of("USER")
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    assert keywords.index("USER") < keywords.index("CMD")


def test_dockerfile_healthcheck_asks_streamlit_health():
    (healthcheck,) = arguments_of("HEALTHCHECK")
    # the port Streamlit listens on (STREAMLIT_SERVER_PORT, 8501 unless a replica sets its own)
    assert "http://localhost:%s/_stcore/health" in healthcheck
    assert "os.environ['STREAMLIT_SERVER_PORT']" in healthcheck
    assert "STREAMLIT_SERVER_PORT=8501" in " ".join(arguments_of("ENV"))
    # python-slim has no curl: the check must not depend on it.
    assert "curl" not in healthcheck and "urllib" in healthcheck


def test_dockerfile_runs_streamlit_with_production_flags():
    assert arguments_of("EXPOSE") == ["8501"]
    (cmd,) = arguments_of("CMD")
    argv = json.loads(cmd)  # exec form: signals reach streamlit, not a shell
    assert argv[:3] == ["streamlit", "run", "app.py"]
    flags = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert flags == PRODUCTION_FLAGS


def dockerignored() -> set[str]:
    lines = (line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def test_dockerignore_keeps_local_state_out_of_the_image():
    ignored = dockerignored()
    assert {".git", ".venv", "venv", "screenshots", "test-artifacts", "**/__pycache__"} <= ignored


APP_SOURCES = ("app.py", "lessons", "ui", "core")
NOT_IN_THE_IMAGE = ("tests", "testing", "benchmarks", "docs", "tools", "deploy", ".ci")


def test_dockerignore_ships_the_app_without_tests_and_benchmarks():
    assert set(NOT_IN_THE_IMAGE) <= dockerignored()
    assert not set(APP_SOURCES + (".streamlit", "locales", "requirements.txt")) & dockerignored()
    # The image still runs: nothing the app imports lives in a folder left out of it.
    for source in APP_SOURCES:
        paths = [ROOT / source] if source.endswith(".py") else source_files(f"{source}/**/*.py")
        for path in paths:
            left_out = [m for _, m in imports_of(path) if m.split(".")[0] in NOT_IN_THE_IMAGE]
            assert not left_out, f"{path.relative_to(ROOT)} imports {left_out}"
    # and the Dockerfile copies nothing it leaves out
    for args in arguments_of("COPY"):
        sources = [a for a in args.split() if not a.startswith("--")][:-1]
        assert not set(sources) & dockerignored(), args


def test_visitors_see_no_tracebacks():
    """Uncaught exceptions show a generic message; the traceback goes to the server log only."""
    client = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["client"]
    assert client["showErrorDetails"] == "none"


REPLICA_LIMITS = {"mem_limit": "6g", "pids_limit": "512", "cpus": "2"}


def test_compose_limits_each_replica_and_keeps_its_root_read_only():
    compose = (ROOT / "deploy" / "docker-compose.yml").read_text()
    replica = compose[compose.index("x-replica: &replica") : compose.index("\nservices:")]
    for key, value in REPLICA_LIMITS.items():
        assert re.search(rf"^  {key}: {value}$", replica, re.M), key
    assert re.search(r"^  read_only: true$", replica, re.M)
    assert re.search(r"^    - /tmp:size=\d+m$", replica, re.M)  # tmpfs, counted in mem_limit
    # the torch hub cache stays writable, in a folder the image gives the app user
    assert "    - torch-hub:/home/app/.cache\n" in replica and "\n  torch-hub:\n" in compose
    assert "chown -R app:app /home/app/.cache" in " ".join(arguments_of("RUN"))
    nginx = compose[compose.index("\n  nginx:\n") :]
    assert "mem_limit:" in nginx and "pids_limit:" in nginx


def test_checked_in_nginx_conf_is_the_rendered_one():
    checked_in = (ROOT / "deploy" / "nginx.conf").read_text()
    assert checked_in == compose_config(), "run: python deploy/nginx_conf.py > deploy/nginx.conf"


def test_nginx_conf_pins_sessions_with_open_source_nginx():
    conf = compose_config()
    assert re.search(r"^\s*sticky\b", conf, re.M) is None, "`sticky` is nginx-plus only"
    # a browser without a route: the replica with the fewest connections, counted across workers
    balance = conf[conf.index("upstream tp_balance {") :]
    balance = balance[: balance.index("}")]
    assert "least_conn;" in balance and "zone tp_balance" in balance
    assert f"map $cookie_{ROUTE_COOKIE} $tp_upstream" in conf
    assert "proxy_pass http://$tp_upstream;" in conf and "proxy_pass http://streamlit" not in conf
    assert f'add_header Set-Cookie "{ROUTE_COOKIE}=$tp_answered; Path=/;' in conf
    for index, upstream in enumerate(COMPOSE_UPSTREAMS):
        route = route_name(index)
        port = upstream.rsplit(":", 1)[1]
        assert f"{route} tp_{route};" in conf and f"~:{port}$ {route};" in conf
        pinned = conf[conf.index(f"upstream tp_{route} {{") :]
        pinned = pinned[: pinned.index("}")]
        others = [u for u in COMPOSE_UPSTREAMS if u != upstream]
        assert f"server {upstream};" in pinned
        assert all(f"server {other} backup;" in pinned for other in others)  # when it is down


def test_replicas_need_distinct_ports():
    """nginx tells the replica that answered by its port: two on one port cannot be pinned."""
    with pytest.raises(ValueError, match="distinct ports"):
        render(["app1:8501", "app2:8501"], 80)
    with pytest.raises(ValueError, match="host:port"):
        render(["app1"], 80)


def test_nginx_conf_upgrades_websockets_and_admits_the_upload_cap():
    conf = compose_config()
    assert "proxy_http_version 1.1;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $connection_upgrade;" in conf
    stream = conf[conf.index("location /_stcore/stream") :]
    assert "proxy_read_timeout 1h;" in stream[: stream.index("}")]
    (body_mb,) = re.findall(r"client_max_body_size (\d+)m;", conf)
    assert int(body_mb) > max_upload_mb() == 200


def test_compose_runs_the_rendered_upstreams_with_one_cookie_secret():
    compose = (ROOT / "deploy" / "docker-compose.yml").read_text()
    for upstream in COMPOSE_UPSTREAMS:
        service, port = upstream.split(":")
        if port == "8501":  # the image's port
            assert re.search(rf"^  {service}: \*replica$", compose, re.M), service
        else:
            block = compose[compose.index(f"\n  {service}:\n") :]
            block = block[: block.index("\n\n")]
            assert "<<: *replica\n" in block and f'STREAMLIT_SERVER_PORT: "{port}"' in block
    assert "STREAMLIT_SERVER_COOKIE_SECRET: ${STREAMLIT_SERVER_COOKIE_SECRET:?" in compose
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in compose


def test_every_replica_shares_one_redis_class_store_that_survives_a_restart():
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    services = compose["services"]
    replicas = [upstream.split(":")[0] for upstream in COMPOSE_UPSTREAMS]
    for name in replicas:
        assert services[name]["environment"]["TP_CLASS_STORE"] == "redis://redis:6379/0", name
        assert services[name]["depends_on"]["redis"] == {"condition": "service_healthy"}, name
    redis_service = services["redis"]
    assert "ports" not in redis_service  # only the replicas reach it
    command = redis_service["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert any(volume.endswith(":/data") for volume in redis_service["volumes"])


def test_disconnected_sessions_expire_sooner_than_streamlits_default():
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert 0 < server["disconnectedSessionTTL"] < 120


def test_ci_installs_nginx_for_the_replica_test():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "command -v nginx" in ci and re.search(r"apt-get install -y [^)]*\bnginx\b", ci)


def test_nginx_conf_limits_requests_and_connections_per_address():
    """Keyed by the client's address, and sized for a class of 50 behind one school NAT."""
    conf = compose_config()
    assert nginx_conf.CLASS_SIZE >= 50
    assert "limit_req_zone $binary_remote_addr zone=tp_requests:" in conf
    assert "limit_conn_zone $binary_remote_addr zone=tp_connections:" in conf
    (rate,) = re.findall(r"zone=tp_requests:\w+ rate=(\d+)r/s;", conf)
    (burst,) = re.findall(r"limit_req zone=tp_requests burst=(\d+) nodelay;", conf)
    (connections,) = re.findall(r"limit_conn tp_connections (\d+);", conf)
    # every student's browser opens a page at once; then two requests a second each
    assert int(burst) >= nginx_conf.CLASS_SIZE * nginx_conf.PAGE_OPEN_REQUESTS
    assert int(rate) >= nginx_conf.CLASS_SIZE * 2
    # two tabs' websockets per student, plus a page load's parallel requests
    assert int(connections) >= nginx_conf.CLASS_SIZE * 2 + 6
    (workers,) = re.findall(r"worker_connections (\d+);", conf)
    assert int(workers) >= 2 * int(connections)  # one address at its limit fits in one worker
    assert "limit_req_status 429;" in conf and "limit_conn_status 429;" in conf


SECURITY_HEADERS = (
    "add_header X-Content-Type-Options nosniff always;",
    "add_header Referrer-Policy same-origin always;",
)


def test_nginx_conf_sends_security_headers_and_no_version_or_upstream():
    conf = compose_config()
    assert re.search(r"^    server_tokens off;$", conf, re.M)
    for header in SECURITY_HEADERS:
        assert header in conf
    assert "add_header Content-Security-Policy \"frame-ancestors 'self'\" always;" in conf
    assert "add_header X-Frame-Options SAMEORIGIN always;" in conf
    # The replicas' internal addresses are for tests only.
    assert "X-Upstream" not in conf
    assert "add_header X-Upstream $upstream_addr always;" in render(
        COMPOSE_UPSTREAMS, 80, expose_upstream=True
    )


def test_a_course_page_can_be_allowed_to_embed_the_app():
    lms = "https://moodle.example.edu"
    conf = render(COMPOSE_UPSTREAMS, 80, frame_ancestors=(lms, "http://localhost:8000"))
    assert (
        "add_header Content-Security-Policy "
        f"\"frame-ancestors 'self' {lms} http://localhost:8000\" always;"
    ) in conf
    assert "X-Frame-Options" not in conf  # it cannot name another site
    # a frame on another site gets the route cookie only as SameSite=None over HTTPS
    assert f'"{ROUTE_COOKIE}=$tp_answered; Path=/; HttpOnly; SameSite=None; Secure"' in conf
    for bad in ("moodle.example.edu", "https://a.edu; add_header X 1", "'unsafe-inline'", "*"):
        with pytest.raises(ValueError, match="origin like https://host"):
            render(COMPOSE_UPSTREAMS, 80, frame_ancestors=(bad,))


def nginx_binary() -> str:
    path = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if not path:
        pytest.skip("nginx is not installed (apt-get install nginx)")
    return path


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def local_config(run_dir: Path, listen: int, **options) -> Path:
    """The generated config for replicas on local ports, runnable by this user in run_dir."""
    conf = run_dir / "nginx.conf"
    upstreams = [f"127.0.0.1:{closed_port()}", f"127.0.0.1:{closed_port()}"]
    user = "root" if os.geteuid() == 0 else None
    conf.write_text(render(upstreams, listen, run_dir=run_dir, user=user, **options))
    return conf


@pytest.mark.parametrize(
    "options",
    [{}, {"frame_ancestors": ("https://moodle.example.edu",), "expose_upstream": True}],
    ids=["default", "embedded-with-upstream"],
)
def test_nginx_accepts_the_generated_config(tmp_path, options):
    conf = local_config(tmp_path, 8080, **options)
    result = subprocess.run(
        [nginx_binary(), "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"),
         "-c", str(conf)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_nginx_answers_a_flood_from_one_address_with_429(tmp_path, monkeypatch):
    """The limit works: with a tiny burst, one address's flood is refused with 429, which still
    carries the security headers. (The replicas are down: requests that pass get 502.)"""
    monkeypatch.setattr(nginx_conf, "REQUEST_BURST", 5)
    monkeypatch.setattr(nginx_conf, "REQUESTS_PER_SECOND", 1)
    port = closed_port()
    conf = local_config(tmp_path, port)
    process = subprocess.Popen(
        [nginx_binary(), "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(conf),
         "-g", "daemon off;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        statuses, refused = [], None
        for _ in range(200):  # at 1 r/s after a burst of 5, far more than can pass
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
                if error.code == 429:
                    refused = error.headers
                    break
            except OSError:
                assert process.poll() is None, (tmp_path / "error.log").read_text()
                time.sleep(0.1)  # nginx still starting
        assert refused is not None, statuses
        assert set(statuses[:-1]) == {502} and len(statuses) >= 6, statuses
        assert refused["X-Content-Type-Options"] == "nosniff"
        assert refused["X-Frame-Options"] == "SAMEORIGIN"
        assert refused["Server"] == "nginx" and "X-Upstream" not in refused  # no version
    finally:
        process.terminate()
        process.wait(timeout=15)
