"""A class session with 50 following students, measured at Streamlit's protocol level.

Run: python -m benchmarks.class_session [--students 50] [--minutes 1] [--idle-seconds 20]
     [--config sqlite|redis|both]

One teacher and ``--students`` following students for ``--minutes``; the teacher changes a
control every 5 s. The teacher is simulated: this script creates the class and publishes each
view through the class store API with the class's teacher key (``core.class_store.open_store``
on the store the server uses, ``core.class_view.view_state`` of the warp page with a new
``warp.angle``): the write a teacher's session makes after its run, without that session's own
page runs and its count polling (a real teacher adds one session's work to the server).

Each student is a websocket to ``/_stcore/stream`` that does what a browser tab does, as in
``benchmarks/classroom.py``: it opens ``/?class=CODE`` (a ``rerun_script`` with that query
string and page_name ""), keeps the page the server names (``new_session.page_script_hash``,
``navigation.page_script_hash``) and the query string it sets (``page_info_changed``: the seat,
then the teacher's parameters) and sends both in every later request, and runs each fragment
timer an ``auto_rerun`` announces at its interval (a ``rerun_script`` with ``fragment_id`` and
``is_auto_rerun``), dropping its timers when a full run starts or a ``stop_auto_rerun`` names
them. It sends no widget states: the server keeps each keyed control's value from the last run.

Per configuration it prints:

- follow latency p50 / p95 / max over every (student, change): from the start of the teacher's
  publish to the end (``script_finished``) of the student's first whole run that ends with the
  new ``warp.angle`` in the query string the server last sent;
- the changes each student missed (never shown before the run ended; should be 0), whether a
  later change was shown then, and how many students were ever shown "Rejoin the teacher"
  (they left the teacher's view: a student here never touches a control);
- idle polling: students following, nothing published for ``--idle-seconds``: the server's
  CPU-seconds over the fragment reruns the students' timers actually sent (one per student per
  tick), in milliseconds;
- the slowest ``/_stcore/health`` answer (``benchmarks.classroom.Watch`` polls each server
  directly every 0.25 s) over the whole run and while the teacher changed controls; errors
  (exception elements, failed runs, closed websockets, tracebacks in the server logs).

Two configurations: ``sqlite``, one server with the default store (SQLite in a fresh
``TP_DATA_DIR``); ``redis``, Debian's ``redis-server`` on a free port and two replicas with
``TP_CLASS_STORE=redis://...`` behind Debian's nginx (the config ``deploy/nginx_conf.py``
renders), the students connected through nginx. Targets are printed beside the figures, never
asserted: follow p95 <= 2 s, health <= 1 s, idle polling <= 2 ms of server CPU per student per
tick. The client shares the machine with the servers (its CPU-seconds are printed), and the
machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import shutil
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.classroom import (
    DONE,
    FRAGMENT_DONE,
    RERUN_EARLY,
    Watch,
    _cpu_seconds,
    _pct,
    _tree_cpu_seconds,
)
from core.class_store import ENV_DATA_DIR, ENV_STORE, SQLITE_FILE, ClassStore, open_store
from core.class_view import CLASS_PARAM, View, view_state
from testing.nginx import start_nginx, stop_nginx
from testing.redis_server import start_redis, stop_redis
from testing.servers import StreamlitServer, address, start_replica, start_server, stop_server

CHANGE_EVERY_S = 5.0
#: The control the teacher moves; the initial view's value and the changes' values differ from
#: each other and from the slider's default (30), which a link leaves out.
ANGLE_KEY = "warp.angle"
INITIAL_ANGLE = "20"
TARGET_FOLLOW_P95_S = 2.0
TARGET_HEALTH_S = 1.0
TARGET_IDLE_TICK_MS = 2.0
#: Time for every student to open the class and land on the teacher's view (a burst of joins).
JOIN_TIMEOUT_S = 300.0
#: Before the joins: the servers' own CPU with no session, beside the idle polling figure.
ALONE_S = 3.0
#: After the joins, before the idle phase: the last join's runs and timers settle.
SETTLE_S = 2.0
#: After the last change: time for the slowest student to show it before it counts as missed.
TAIL_S = 20.0
REPLICAS = 2
#: The key of the "Rejoin the teacher" button (ui.classroom.REJOIN_KEY), which only a student
#: who left the teacher's view is shown.
REJOIN_BUTTON = "class.rejoin"


def angle_of(change: int) -> str:
    """The ``warp.angle`` of change ``change`` (0 is the initial view): 20, then 31 to 80."""
    return INITIAL_ANGLE if change == 0 else str(31 + (change - 1) % 50)


@dataclass
class Change:
    """One published view: its ``warp.angle`` and when the publish started (perf_counter)."""

    angle: str
    published_at: float


@dataclass
class ClassRun:
    """What the students share with the teacher: the class, its changes, the signal to stop."""

    code: str
    changes: list[Change] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def change_shown(self, query: str) -> int | None:
        """The latest change whose angle ``query`` (a query string the server sent) holds."""
        angles = parse_qs(query).get(ANGLE_KEY, [])
        for index in range(len(self.changes) - 1, -1, -1):
            if self.changes[index].angle in angles:
                return index
        return None


class StudentTab:
    """One student's browser tab at the protocol level: the page hash and query string the
    server last sent, the fragment timers it announced, and when each change was shown."""

    def __init__(self, ws, class_run: ClassRun) -> None:
        self.ws, self.class_run = ws, class_run
        self.page_hash = ""
        self.query = f"{CLASS_PARAM}={class_run.code}"
        self.timers: dict[str, tuple[float, asyncio.Task]] = {}
        self.ticks: list[float] = []  # perf_counter of each fragment rerun sent
        self.shown: dict[int, float] = {}  # change -> perf_counter of the run's end
        self.detached = False  # the server showed this student "Rejoin the teacher"
        self.recent: deque[tuple[float, str]] = deque(maxlen=8)  # the last messages' kinds
        self.heard = -1  # the latest change a query string from the server held
        self.went_back = 0  # query strings that held an older change than one heard before
        self.ready = asyncio.Event()  # the initial view is shown
        self.errors: list[str] = []

    def request(self, fragment_id: str = "") -> bytes:
        """A ``rerun_script`` as the browser sends it: its page and query string (page_name
        "" and no hash on the first, so the server opens the main page)."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.page_name = ""
        if fragment_id:
            msg.rerun_script.fragment_id = fragment_id
            msg.rerun_script.is_auto_rerun = True
        return msg.SerializeToString()

    def _start_timer(self, fragment_id: str, interval: float) -> None:
        running = self.timers.get(fragment_id)
        if running is not None and running[0] == interval:
            return  # the browser keeps a timer announced again with the same interval
        self._stop_timers([fragment_id])
        task = asyncio.create_task(self._timer(fragment_id, interval))
        self.timers[fragment_id] = (interval, task)

    def _stop_timers(self, fragment_ids: list[str]) -> None:
        for fragment_id in fragment_ids:
            running = self.timers.pop(fragment_id, None)
            if running is not None:
                running[1].cancel()

    async def _timer(self, fragment_id: str, interval: float) -> None:
        """``setInterval``: a fragment rerun every ``interval`` seconds, whatever is running."""
        started = time.perf_counter()
        beats = 0
        while True:
            beats += 1
            await asyncio.sleep(max(0.0, started + beats * interval - time.perf_counter()))
            payload = self.request(fragment_id)  # the page and query of this moment
            self.ticks.append(time.perf_counter())
            try:
                await self.ws.send(payload)
            except websockets.ConnectionClosed:
                return  # the reader reports the closed websocket

    def take(self, fm: ForwardMsg) -> None:
        """Update the tab from one ForwardMsg, as the browser's handlers do."""
        kind = fm.WhichOneof("type")
        if kind == "script_finished":
            self.recent.append((time.perf_counter(), ForwardMsg.ScriptFinishedStatus.Name(
                fm.script_finished)))  # fmt: skip
        elif kind != "delta":
            self.recent.append((time.perf_counter(), kind))
        if kind == "new_session":
            self.page_hash = fm.new_session.page_script_hash
            if not fm.metadata.run.fragment_ids:  # a whole run: the browser drops its timers
                self._stop_timers(list(self.timers))
        elif kind == "navigation":
            self.page_hash = fm.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = fm.page_info_changed.query_string
            change = self.class_run.change_shown(self.query)
            if change is not None:
                self.went_back += change < self.heard
                self.heard = max(self.heard, change)
        elif kind == "auto_rerun":
            self._start_timer(fm.auto_rerun.fragment_id, fm.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            self._stop_timers(list(fm.stop_auto_rerun.fragment_ids))
        elif kind == "delta" and fm.delta.HasField("new_element"):
            element = fm.delta.new_element
            if element.WhichOneof("type") == "exception":
                self.errors.append(f"exception: {element.exception.message[:80]}")
            elif element.WhichOneof("type") == "button" and REJOIN_BUTTON in element.button.id:
                self.detached = True
        elif kind == "script_finished":
            self._finished(fm.script_finished)

    def _finished(self, status: int) -> None:
        if status == DONE:
            # A whole run ended: the view it shows is the one its query string holds now (a
            # run that opened the new view and then put the old one back does not count).
            change = self.class_run.change_shown(self.query)
            if change is not None and change not in self.shown:
                self.shown[change] = time.perf_counter()
            if 0 in self.shown:
                self.ready.set()
        elif status not in (RERUN_EARLY, FRAGMENT_DONE):
            self.errors.append(f"finished {ForwardMsg.ScriptFinishedStatus.Name(status)}")

    def stuck(self) -> str:
        """What the tab last heard, for a student who stopped following: its query string,
        timers and last messages (seconds before now)."""
        now = time.perf_counter()
        heard = ", ".join(f"{kind} {now - at:.0f} s" for at, kind in self.recent)
        return f"query {self.query!r}, {len(self.timers)} timer(s), last messages: {heard}"

    def close(self) -> None:
        self._stop_timers(list(self.timers))


async def student(ws_url: str, class_run: ClassRun, tabs: list[StudentTab],
                  make_tab: Callable[[Any], StudentTab] | None = None) -> None:
    """One student from ``/?class=CODE`` until the class run stops; never raises. ``make_tab``
    builds the tab on its websocket (``None`` when the connection failed); by default a
    ``StudentTab`` of ``class_run``."""
    if make_tab is None:
        make_tab = functools.partial(StudentTab, class_run=class_run)
    tab = None
    try:
        async with websockets.connect(
            ws_url, subprotocols=["streamlit", "benchmark"], max_size=None, open_timeout=60
        ) as ws:
            tab = make_tab(ws)
            tabs.append(tab)
            await ws.send(tab.request())
            reader = asyncio.create_task(_read(ws, tab))
            stop = asyncio.create_task(class_run.stop.wait())
            await asyncio.wait({reader, stop}, return_when=asyncio.FIRST_COMPLETED)
            tab.close()
            reader.cancel()
            stop.cancel()
            if reader.done() and not reader.cancelled() and reader.exception() is not None:
                raise reader.exception()
    except Exception as error:  # a benchmark reports a failed student and goes on
        if tab is None:
            tab = make_tab(None)
            tabs.append(tab)
        tab.errors.append(f"{type(error).__name__}: {str(error)[:80]}")
        tab.ready.set()


async def _read(ws, tab: StudentTab) -> None:
    while True:
        tab.take(ForwardMsg.FromString(await ws.recv()))


@dataclass
class Servers:
    """A configuration's processes: Streamlit servers, and nginx and Redis where it has them."""

    name: str
    url: str  # where students connect
    streamlit: list[StreamlitServer]
    store: ClassStore
    store_pid: int | None = None
    proxy_pid: int | None = None

    def cpu_seconds(self) -> float:
        return sum(_cpu_seconds(server.process.pid) for server in self.streamlit)

    def others_cpu_seconds(self) -> float:
        """Redis and nginx (master and workers): work the replicas' CPU does not include."""
        total = _cpu_seconds(self.store_pid) if self.store_pid else 0.0
        return total + (_tree_cpu_seconds(self.proxy_pid) if self.proxy_pid else 0.0)


async def _publish(store: ClassStore, code: str, key: str, class_run: ClassRun) -> None:
    """The teacher's write: the next change's view, timed from the start of the publish."""
    index = len(class_run.changes)
    class_run.changes.append(Change(angle_of(index), time.perf_counter()))
    view = View("warp", ((ANGLE_KEY, (angle_of(index),)),))
    await asyncio.to_thread(store.publish, code, key, view_state(view))


@dataclass
class Phases:
    """When each phase began and the servers' CPU-seconds then."""

    alone_cpu_per_s: float = 0.0
    joined_at: float = 0.0
    idle: tuple[float, float] = (0.0, 0.0)
    idle_cpu: float = 0.0
    idle_others_cpu: float = 0.0
    follow: tuple[float, float] = (0.0, 0.0)
    follow_cpu: float = 0.0


async def _join(ws_url: str, class_run: ClassRun, count: int, tabs: list[StudentTab]) -> list:
    """``count`` students open the class at once; returns their tasks once each shows the
    teacher's view (or failed, or ``JOIN_TIMEOUT_S`` passed)."""
    started = time.perf_counter()
    students = [asyncio.create_task(student(ws_url, class_run, tabs)) for _ in range(count)]
    while len(tabs) < count and time.perf_counter() - started < JOIN_TIMEOUT_S:
        await asyncio.sleep(0.1)
    with suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(tab.ready.wait() for tab in tabs)),
                               max(0.0, started + JOIN_TIMEOUT_S - time.perf_counter()))
    return students


async def _idle(servers: Servers, seconds: float, phases: Phases) -> None:
    """Students following, nothing published: the servers' CPU over ``seconds``."""
    cpu0, others0, idle0 = servers.cpu_seconds(), servers.others_cpu_seconds(), time.perf_counter()
    await asyncio.sleep(seconds)
    phases.idle = (idle0, time.perf_counter())
    phases.idle_cpu = servers.cpu_seconds() - cpu0
    phases.idle_others_cpu = servers.others_cpu_seconds() - others0


async def _teach(servers: Servers, key: str, class_run: ClassRun, tabs: list[StudentTab],
                 minutes: float, phases: Phases) -> None:
    """A change every ``CHANGE_EVERY_S`` for ``minutes``; then until every student shows the
    last one, at most ``TAIL_S`` more."""
    cpu0, follow0 = servers.cpu_seconds(), time.perf_counter()
    count = max(1, round(minutes * 60 / CHANGE_EVERY_S))
    for index in range(count):
        await asyncio.sleep(max(0.0, follow0 + index * CHANGE_EVERY_S - time.perf_counter()))
        await _publish(servers.store, class_run.code, key, class_run)
    await asyncio.sleep(max(0.0, follow0 + count * CHANGE_EVERY_S - time.perf_counter()))
    last, tail_end = len(class_run.changes) - 1, time.perf_counter() + TAIL_S
    while time.perf_counter() < tail_end and any(
        last not in tab.shown for tab in tabs if not tab.errors
    ):
        await asyncio.sleep(0.1)
    phases.follow = (follow0, time.perf_counter())
    phases.follow_cpu = servers.cpu_seconds() - cpu0


async def run_class(servers: Servers, args: argparse.Namespace) -> None:
    """One class on ``servers``: the joins, the idle phase, the teacher's changes; then the
    figures."""
    code, key = servers.store.create_class()
    class_run = ClassRun(code)
    await _publish(servers.store, code, key, class_run)  # the view the students open
    ws_url = servers.url.replace("http", "ws", 1) + "/_stcore/stream"
    tabs: list[StudentTab] = []
    phases = Phases()
    watches = [Watch(server.url, server.process.pid) for server in servers.streamlit]
    client0 = time.process_time()
    with ExitStack() as watching:
        for watch in watches:
            watching.enter_context(watch)
        cpu0 = servers.cpu_seconds()
        await asyncio.sleep(ALONE_S)
        phases.alone_cpu_per_s = (servers.cpu_seconds() - cpu0) / ALONE_S
        joins0 = time.perf_counter()
        students = await _join(ws_url, class_run, args.students, tabs)
        phases.joined_at = time.perf_counter() - joins0
        await asyncio.sleep(SETTLE_S)
        await _idle(servers, args.idle_seconds, phases)
        await _teach(servers, key, class_run, tabs, args.minutes, phases)
        class_run.stop.set()
        await asyncio.gather(*students)
    report(servers, class_run, tabs, phases, watches, time.process_time() - client0, args)


def _server_log_errors(servers: Servers) -> list[str]:
    found = []
    for server in servers.streamlit:
        lines = server.log().splitlines()
        found += [f"{server.log_path.name}: {line.strip()[:100]}" for line in lines
                  if "Traceback" in line or " ERROR " in line or "Exception" in line]  # fmt: skip
    return found


def _idle_line(servers: Servers, phases: Phases, ticks: int, students: int) -> str:
    """Idle polling: the servers' CPU per fragment rerun the students' timers sent."""
    if not ticks:
        return "idle polling: the students sent no tick"
    idle_s = phases.idle[1] - phases.idle[0]
    line = (f"idle polling: {1000 * phases.idle_cpu / idle_s:.0f} ms of server CPU per second "
            f"for {ticks} ticks ({ticks / students / idle_s:.2f} per student per second): "
            f"{1000 * phases.idle_cpu / ticks:.2f} ms per student per tick (target <= "
            f"{TARGET_IDLE_TICK_MS:.0f} ms); the servers alone, before the joins: "
            f"{1000 * phases.alone_cpu_per_s:.0f} ms per second")  # fmt: skip
    if servers.store_pid:
        line += f"; Redis + nginx {1000 * phases.idle_others_cpu / ticks:.2f} ms per tick"
    return line


def _missed_detail(class_run: ClassRun, tabs: list[StudentTab]) -> str:
    """Which changes were missed, and whether those students showed a later one (skipped it:
    the next change came first, or a run put the older view back) or none (stuck or detached:
    what the tab last heard)."""
    last = len(class_run.changes) - 1
    went_back = sum(tab.went_back for tab in tabs)
    # A run reopened an older view after the new one's address had been sent.
    parts = [f"{went_back} query string(s) went back to an older view"] if went_back else []
    skipped: Counter[str] = Counter()
    for tab in tabs:
        gaps = [i for i in range(1, last + 1) if i not in tab.shown]
        if not gaps or tab.errors:
            continue
        if any(i > gaps[0] for i in tab.shown):
            skipped[f"#{','.join(map(str, gaps))} then a later one shown"] += 1
        else:
            parts.append(f"#{','.join(map(str, gaps))} none after: {tab.stuck()}")
    parts += [f"{what} ({n} student(s))" for what, n in skipped.most_common()]
    return "" if not parts else "; " + "; ".join(parts[:8])


def report(servers: Servers, class_run: ClassRun, tabs: list[StudentTab], phases: Phases,
           watches: list[Watch], client_cpu: float, args: argparse.Namespace) -> None:
    changes = range(1, len(class_run.changes))
    latencies = [tab.shown[i] - class_run.changes[i].published_at
                 for tab in tabs for i in changes if i in tab.shown]  # fmt: skip
    missed = [sum(1 for i in changes if i not in tab.shown) for tab in tabs]
    errors = [error for tab in tabs for error in tab.errors] + _server_log_errors(servers)
    idle0, idle1 = phases.idle
    ticks = sum(1 for tab in tabs for t in tab.ticks if idle0 <= t < idle1)
    follow0, follow1 = phases.follow
    health = [(t, took) for watch in watches for t, took in watch.health]
    health_max = max((took for _, took in health), default=float("nan"))
    health_follow = max((took for t, took in health if follow0 <= t < follow1),
                        default=float("nan"))  # fmt: skip
    follows = len(latencies)
    print(f"\n## {servers.name}: {len(tabs)} students, {len(changes)} change(s), one every "
          f"{CHANGE_EVERY_S:.0f} s, {args.idle_seconds:.0f} s idle")
    print(f"every student on the teacher's view {phases.joined_at:.1f} s after the joins began "
          f"({sum(1 for tab in tabs if 0 in tab.shown)} of {len(tabs)})")
    if latencies:
        p95 = _pct(latencies, 0.95)
        print(f"follow latency: p50 {_pct(latencies, 0.5):.2f} s, p95 {p95:.2f} s "
              f"(target <= {TARGET_FOLLOW_P95_S:.0f} s), max {max(latencies):.2f} s "
              f"over {follows} (student, change) pairs")
    else:
        print("follow latency: no student showed a change")
    print(f"missed changes: {sum(missed)} in all, at most {max(missed, default=0)} per student "
          f"(target 0)" + _missed_detail(class_run, tabs))
    print(f"students shown \"Rejoin the teacher\" (detached): "
          f"{sum(1 for tab in tabs if tab.detached)} (target 0)")
    print(_idle_line(servers, phases, ticks, len(tabs)))
    if follows:
        # The polling goes on while students follow: take it out at the idle phase's rate.
        polling = phases.idle_cpu / (idle1 - idle0) * (follow1 - follow0)
        print(f"while following: {phases.follow_cpu:.1f} server CPU-s over "
              f"{follow1 - follow0:.0f} s, {phases.follow_cpu / follows:.3f} CPU-s per follow, "
              f"{(phases.follow_cpu - polling) / follows:.3f} without the polling")
    print(f"health max: {health_max:.2f} s over the run (joins included), {health_follow:.2f} s "
          f"while following (target <= {TARGET_HEALTH_S:.0f} s)")
    rss = ", ".join(f"{watch.rss_peak_mb:.0f}" for watch in watches)
    print(f"server RSS peak: {rss} MB; client CPU {client_cpu:.1f} s")
    print(f"errors: {len(errors)}" + "".join(f"\n  {error}" for error in errors[:5]))


@contextmanager
def sqlite_servers(name: str) -> Iterator[Servers]:
    """One server with the default store: SQLite in a fresh ``TP_DATA_DIR``; ``name`` names
    its log and temporary folder."""
    data = tempfile.mkdtemp(prefix=f"{name}-")
    server = None
    try:
        server = start_server(f"{name}-sqlite", env={ENV_DATA_DIR: data, ENV_STORE: ""})
        # The file the server's default store opens in its TP_DATA_DIR.
        store = open_store(f"sqlite://{Path(data) / SQLITE_FILE}")
        yield Servers("SQLite, one server", server.url, [server], store)
    finally:
        if server is not None:
            stop_server(server)
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def redis_servers(name: str) -> Iterator[Servers]:
    """Redis and ``REPLICAS`` replicas behind nginx, where clients connect; after the run, the
    websockets nginx sent to each replica."""
    redis = start_redis(name)
    replicas: list[StreamlitServer] = []
    proxy = None
    run_dir = Path(tempfile.mkdtemp(prefix=f"{name}-nginx-"))
    try:
        for i in range(REPLICAS):
            replicas.append(start_replica(f"{name}-redis-{i}", env={ENV_STORE: redis.url}))
        proxy = start_nginx([address(s) for s in replicas], run_dir)
        yield Servers(f"Redis, {REPLICAS} replicas behind nginx", proxy.url, replicas,
                      open_store(redis.url), redis.process.pid, proxy.process.pid)
        websockets_to = [line.split("upstream=")[1].split()[0] for line in
                         proxy.access_log().splitlines() if "/_stcore/stream" in line]  # fmt: skip
        print("students per replica (nginx's access log): "
              + ", ".join(str(websockets_to.count(address(s))) for s in replicas))
    finally:
        if proxy is not None:
            stop_nginx(proxy)
        for server in replicas:
            stop_server(server)
        stop_redis(redis)
        shutil.rmtree(run_dir, ignore_errors=True)


async def sqlite_config(args: argparse.Namespace) -> None:
    """One server with the default store: SQLite in a fresh ``TP_DATA_DIR``."""
    with sqlite_servers("class-session") as servers:
        await run_class(servers, args)


async def redis_config(args: argparse.Namespace) -> None:
    """Redis and ``REPLICAS`` replicas behind nginx; the students connect through nginx."""
    with redis_servers("class-session") as servers:
        await run_class(servers, args)


async def main_async(args: argparse.Namespace) -> None:
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}; the teacher publishes "
          "through the class store API with the teacher key (the write a teacher's session "
          "makes)")
    if args.config in ("sqlite", "both"):
        await sqlite_config(args)
    if args.config in ("redis", "both"):
        await redis_config(args)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50, help="following students")
    parser.add_argument("--minutes", type=float, default=1.0,
                        help="minutes of the teacher changing a control every 5 s")
    parser.add_argument("--idle-seconds", type=float, default=20.0,
                        help="seconds with students following and no change (polling cost)")
    parser.add_argument("--config", choices=("sqlite", "redis", "both"), default="both")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
