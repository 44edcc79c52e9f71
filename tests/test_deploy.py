"""Deployment files, checked without Docker: the Dockerfile, compose, nginx config and CI install.

The running system (two replicas behind nginx) is tested in tests/e2e/test_replicas.py.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from deploy.nginx_conf import (
    COMPOSE_UPSTREAMS,
    ROUTE_COOKIE,
    compose_config,
    max_upload_mb,
    render,
    route_name,
)

ROOT = Path(__file__).resolve().parents[1]
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


def test_dockerignore_keeps_local_state_out_of_the_image():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", "venv", "screenshots", "test-artifacts", "**/__pycache__"} <= ignored


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
    assert "add_header X-Upstream $upstream_addr always;" in conf
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


def test_disconnected_sessions_expire_sooner_than_streamlits_default():
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert 0 < server["disconnectedSessionTTL"] < 120


def test_ci_installs_nginx_for_the_replica_test():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "command -v nginx" in ci and re.search(r"apt-get install -y [^)]*\bnginx\b", ci)
