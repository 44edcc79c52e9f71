"""A class through a real load balancer: two `streamlit run` replicas behind Debian's nginx.

nginx runs the config that deploy/nginx_conf.py renders for docker-compose, pointed at two local
replicas and with its pid, logs and temp folders in a tmp folder. Browser contexts (one per
student) open lesson pages through it; each must see every response, its websockets and an
upload come from one replica, and both replicas must serve some students.

A route cookie names a replica (``r1``, ``r2``: the order the config lists them). Half of the
students arrive with one, checked first by asking nginx; the others arrive without a cookie, as
a real browser does, and nginx sends them to the replica with the fewest open connections.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from websockets.sync.client import connect as websocket_connect

from deploy.nginx_conf import CLASS_SIZE, PAGE_OPEN_REQUESTS, ROUTE_COOKIE, route_name
from testing.nginx import Proxy, answer_for, nginx_path, start_nginx, stop_nginx
from testing.servers import StreamlitServer, address, start_replica, stop_server
from tests.e2e.conftest import installed
from tests.e2e.test_browser import (
    assert_rendered,
    page_url,
    upload_home_png,
    wait_for_script,
)

pytestmark = pytest.mark.e2e

PINNED_PER_REPLICA = 3  # students whose route cookie names a given replica
FRESH_STUDENTS = 2  # students without a cookie: nginx picks their replica
FRESH_REQUESTS = 10  # cookie-less requests one after another: least_conn alternates ties
PAGES_VISITED = ("indexing", "home")
TABS_PER_STUDENT = 2  # each holds a websocket through nginx
BURST_THREADS = 32  # requests in flight at once, as ~6 per browser of a class loading a page
ACCESS_LOG_TIMEOUT_S = 30
# On a deep link the frontend first looks for the server under the page's path (it cannot tell
# a page from a base URL path), gets 404 there, then uses the root: expected, on any server.
BASE_PATH_PROBE = re.compile(r"^http://[^/]+/[^/]+/_stcore/(health|host-config)$")
ACCESS_LINE = re.compile(
    r'"(?P<request>[^"]*)" (?P<status>\d+) route=(?P<route>\S+) '
    r"upstream=(?P<upstream>.*) upstream_status="
)


@pytest.fixture(scope="module")
def replicas() -> Iterator[list[StreamlitServer]]:
    started: list[StreamlitServer] = []
    try:
        for name in ("replica-a", "replica-b"):
            started.append(start_replica(name))
        yield started
    finally:
        for server in started:
            stop_server(server)


@pytest.fixture(scope="module")
def proxy(replicas, tmp_path_factory) -> Iterator[Proxy]:
    installed(nginx_path)
    running = start_nginx([address(s) for s in replicas], tmp_path_factory.mktemp("nginx"))
    yield running
    stop_nginx(running)


def routes_by_replica(proxy_url: str, upstreams: list[str]) -> dict[str, list[str]]:
    """PINNED_PER_REPLICA students' route cookies per replica, each checked with nginx."""
    chosen: dict[str, list[str]] = {}
    for index, upstream in enumerate(upstreams):
        route = route_name(index)
        assert answer_for(proxy_url, route) == (upstream, route), route
        chosen[upstream] = [route] * PINNED_PER_REPLICA
    return chosen


@dataclass
class Student:
    """One browser context: its page, and every response it got from the proxy."""

    context: object
    page: object
    proxy_url: str
    expected_upstream: str | None
    responses: list[tuple[str, int, str | None]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    route: str | None = None

    def record(self, response) -> None:
        if response.url.startswith(self.proxy_url):
            self.responses.append(
                (response.url, response.status, response.headers.get("x-upstream"))
            )

    def upstreams_seen(self) -> set[str | None]:
        return {upstream for _, _, upstream in self.responses}

    def remember_route(self) -> None:
        cookies = {c["name"]: c["value"] for c in self.context.cookies(self.proxy_url)}
        self.route = cookies.get(ROUTE_COOKIE)


def open_student(browser, proxy_url: str, route: str | None, upstream: str | None) -> Student:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    if route is not None:
        context.add_cookies([{"name": ROUTE_COOKIE, "value": route, "url": proxy_url}])
    page = context.new_page()
    student = Student(context, page, proxy_url, upstream)
    page.on("response", student.record)
    page.on("pageerror", lambda error: student.page_errors.append(str(error)))
    return student


def upload_png(page, tmp_path: Path) -> None:
    """Through nginx: the upload PUT carries the XSRF token and must reach the session's replica."""
    upload_home_png(page, tmp_path)


def assert_pinned(student: Student) -> None:
    seen = student.upstreams_seen()
    label = f"student with route {student.route}"
    assert student.responses, f"{label}: no responses recorded"
    assert len(seen) == 1 and None not in seen, f"{label}: answered by {seen}"
    if student.expected_upstream is not None:
        assert seen == {student.expected_upstream}, f"{label}: expected {student.expected_upstream}"
    failed = [
        (url, status)
        for url, status, _ in student.responses
        if status >= 400 and not (status == 404 and BASE_PATH_PROBE.match(url))
    ]
    assert not failed, f"{label}: failed requests {failed}"
    assert not student.page_errors, f"{label}: errors in the page {student.page_errors}"
    assert student.route, f"{label}: nginx did not set the {ROUTE_COOKIE} cookie"


def access_lines_by_route(log: str) -> dict[str, list[re.Match]]:
    lines: dict[str, list[re.Match]] = {}
    for match in map(ACCESS_LINE.search, log.splitlines()):
        if match:
            lines.setdefault(match["route"], []).append(match)
    return lines


def websocket_lines(lines: list[re.Match]) -> list[re.Match]:
    """Upgraded (101) requests of /_stcore/stream: the sessions' websockets."""
    return [
        m for m in lines if m["request"].startswith("GET /_stcore/stream ") and m["status"] == "101"
    ]


def wait_for_closed_websockets(proxy: Proxy, routes: list[str]) -> dict[str, list[re.Match]]:
    """nginx logs a websocket when it closes, i.e. shortly after its browser context closed."""
    deadline = time.monotonic() + ACCESS_LOG_TIMEOUT_S
    while True:
        by_route = access_lines_by_route(proxy.access_log())
        logged = [len(websocket_lines(by_route.get(route, []))) for route in routes]
        if min(logged) >= len(PAGES_VISITED) or time.monotonic() > deadline:
            return by_route
        time.sleep(0.5)


def test_a_class_through_nginx_stays_on_its_replicas(browser, replicas, proxy, tmp_path):
    upstreams = [address(server) for server in replicas]
    pinned = routes_by_replica(proxy.url, upstreams)
    plan = [(route, owner) for owner, routes in pinned.items() for route in routes]
    plan += [(None, None)] * FRESH_STUDENTS
    students = [open_student(browser, proxy.url, route, owner) for route, owner in plan]
    try:
        for slug in PAGES_VISITED:
            for student in students:  # the whole class opens the link, then everyone waits
                student.page.goto(page_url(proxy.url, slug), wait_until="commit")
            for student in students:
                wait_for_script(student.page)
                assert_rendered(student.page, slug)
        upload_png(students[-1].page, tmp_path)  # a fresh student: the route nginx chose
        for student in students:
            student.remember_route()
    finally:
        for student in students:
            student.context.close()

    for student in students:
        assert_pinned(student)
    # The upload and the st.image of it (served from the replica's memory under /media/) both
    # reached the uploader's replica: assert_pinned checked their X-Upstream like the others'.
    uploader = students[-1].responses
    uploads = [(url, status) for url, status, _ in uploader if "/_stcore/upload_file/" in url]
    assert uploads and all(status < 300 for _, status in uploads), uploads
    assert any("/media/" in url and status == 200 for url, status, _ in uploader), uploader
    served = {upstream for student in students for upstream in student.upstreams_seen()}
    assert served == set(upstreams), f"replicas that served students: {served}"

    # Playwright shows no websocket headers; nginx's access log shows where each one went.
    routes = [student.route for student in students]
    by_route = wait_for_closed_websockets(proxy, routes)
    for student in students:
        lines = by_route.get(student.route, [])
        assert len(websocket_lines(lines)) >= len(PAGES_VISITED), f"{student.route}: {lines}"
        assert {m["upstream"] for m in lines} == student.upstreams_seen(), student.route


def test_browsers_without_a_route_are_spread_evenly(replicas, proxy):
    """A class arriving at once is split evenly, not by coin tosses: with nothing open, nginx's
    least_conn takes the replicas in turn, and each response names the replica that answered.
    A route nginx does not know is treated as none."""
    upstreams = [address(server) for server in replicas]
    answers = [answer_for(proxy.url) for _ in range(FRESH_REQUESTS)]
    answers.append(answer_for(proxy.url, "no-such-replica"))
    counts = {upstream: 0 for upstream in upstreams}
    for upstream, route in answers:
        counts[upstream] += 1
        assert route == route_name(upstreams.index(upstream)), (upstream, route)
    assert max(counts.values()) - min(counts.values()) <= 1, counts


@dataclass
class Counter:
    requests: int = 0

    def count(self, request) -> None:
        self.requests += 1


def test_a_page_open_fits_the_request_limits_sizing(browser, proxy):
    """nginx's per-address burst is CLASS_SIZE x PAGE_OPEN_REQUESTS: a real browser opening a
    page with an empty cache must make no more requests than that assumes."""
    for slug in PAGES_VISITED:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        counter = Counter()
        try:
            page = context.new_page()
            page.on("request", counter.count)
            page.goto(page_url(proxy.url, slug), wait_until="commit")
            wait_for_script(page)
            assert_rendered(page, slug)
        finally:
            context.close()
        print(f"{slug}: {counter.requests} requests to open with an empty cache")
        assert 0 < counter.requests <= PAGE_OPEN_REQUESTS, (
            f"{slug}: {counter.requests} requests; raise PAGE_OPEN_REQUESTS in deploy/nginx_conf.py"
        )


@pytest.fixture(scope="module")
def default_proxy(replicas, tmp_path_factory) -> Iterator[Proxy]:
    """nginx with the config compose runs (no X-Upstream), in front of the same replicas."""
    installed(nginx_path)
    running = start_nginx(
        [address(s) for s in replicas], tmp_path_factory.mktemp("nginx-default"),
        expose_upstream=False,
    )  # fmt: skip
    yield running
    stop_nginx(running)


def test_the_default_config_sends_security_headers_and_no_upstream(default_proxy):
    for path in ("/", "/_stcore/health", "/no-such-file"):
        request = urllib.request.Request(default_proxy.url + path)
        try:
            response = urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:  # Streamlit's 404 gets the same headers
            response = error
        with response:
            headers = response.headers
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert headers["Referrer-Policy"] == "same-origin", path
        assert headers["Content-Security-Policy"] == "frame-ancestors 'self'", path
        assert headers["X-Frame-Options"] == "SAMEORIGIN", path
        assert headers["Server"] == "nginx", path  # no version
        assert "X-Upstream" not in headers, path  # the replicas' addresses stay inside


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_class_behind_one_address_is_not_rate_limited(default_proxy):
    """A class of CLASS_SIZE behind one school NAT opens a page at once: every tab's websocket
    stays open (two tabs each) while the rest of their page loads' requests arrive as fast as
    this client can send them, all from one address. None may be refused (429)."""
    ws_url = default_proxy.url.replace("http", "ws", 1) + "/_stcore/stream"
    tabs = CLASS_SIZE * TABS_PER_STUDENT
    requests = CLASS_SIZE * PAGE_OPEN_REQUESTS - tabs  # a websocket's opening is a request too
    with ExitStack() as open_tabs:
        for _ in range(tabs):  # a refused one raises InvalidStatus (429)
            open_tabs.enter_context(
                websocket_connect(ws_url, subprotocols=["streamlit"], open_timeout=60)
            )
        with ThreadPoolExecutor(BURST_THREADS) as pool:
            statuses = list(pool.map(_status, [default_proxy.url + "/_stcore/health"] * requests))
    counts = {status: statuses.count(status) for status in set(statuses)}
    assert counts == {200: requests}, counts
    assert "limiting" not in default_proxy.error_log(), default_proxy.error_log()[-2000:]
