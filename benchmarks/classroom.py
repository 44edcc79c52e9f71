"""A class opening the same lesson link at once, measured at Streamlit's protocol level.

Run: python -m benchmarks.classroom [--sessions 50] [--pages home flow] [--live-seconds 60]
     [--replicas 2] [--soak 1000] [--url URL]

Starts one ``streamlit run app.py`` of its own (or uses ``--url``; then no CPU or RSS figures)
and speaks the browser's protocol with no browser: a websocket to ``/_stcore/stream``, one
``rerun_script`` BackMsg whose ``page_name`` is the page's URL path, then ForwardMsgs until
``script_finished``. For each page it prints:

- one session alone, three times: the first view's time (the page's shared work computed, when
  the server had not served it yet) and the median time from the request to the end of the
  script;
- ``--sessions`` sessions sending the same request at the same moment: p50 / p95 / max time to
  the end of the script and p95 time to the first element, errors, the ratio p95(N) / p50(1),
  the slowest ``/_stcore/health`` answer during the burst, the server's CPU-seconds per view, this
  client's own CPU-seconds for the whole burst (it shares the machine) and the server's peak RSS.

``--live-seconds S`` (default 60; 0 skips it) then opens the memory page on ``--sessions``
sessions, switches its "Live" toggle on the way a browser does (a rerun carrying the widget's
new state) and, like the browser's timer, asks for the live fragment every interval the server
announced (``auto_rerun``) for S seconds. It prints each session's refresh count, the longest
gap between two refreshes (p50 / p95 / max over the sessions), the slowest health answer, and
the server's CPU-milliseconds per fragment rerun.

``--replicas K`` (default 2; 1 skips it) then starts K fresh replicas behind Debian's nginx
(the config ``deploy/nginx_conf.py`` renders) and prints, per page, the throughput of the same
burst sent to one replica directly and through nginx to all K (medians of three bursts each,
alternated), with their ratio and errors,
the cores the one replica kept busy (its CPU-seconds over the burst's time), the ceiling that
leaves (min(K, CPUs / those cores)) and the cores this client and nginx took from the replicas
during the burst through nginx (they share the machine).

``--soak N`` then reruns the warp page N times on one session and prints RSS after a 50-rerun
warm-up and at the end. Timings are printed, never asserted: they depend on the machine and its
load (printed before and after). The client runs on the same machine and takes CPU from the
server, so the figures are a little worse than a class on its own laptops would see.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from lessons.registry import available_pages
from testing.nginx import start_nginx, stop_nginx
from testing.servers import address, start_replica, start_server, stop_server

DONE = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")
RERUN_EARLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
FRAGMENT_DONE = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_FRAGMENT_RUN_SUCCESSFULLY")
VIEW_TIMEOUT_S = 300.0
#: Bursts per side in the replica comparison (medians): one burst lasts about a second, and
#: single bursts gave ratios from 1.4 to 2.0 for the same page in one evening.
REPLICA_REPEATS = 3


@dataclass
class View:
    """One session's view of a page: seconds to the first element and to the script's end."""

    first_s: float | None
    end_s: float | None
    error: str = ""


def _rerun_request(page_name: str) -> bytes:
    msg = BackMsg()
    msg.rerun_script.page_name = page_name
    msg.rerun_script.query_string = ""
    return msg.SerializeToString()


async def _until_finished(ws, started: float) -> View:
    """Read ForwardMsgs until the script ends; an exception element counts as an error."""
    first = None
    error = ""
    while True:
        fm = ForwardMsg.FromString(await ws.recv())
        kind = fm.WhichOneof("type")
        if kind == "delta":
            first = first or time.perf_counter() - started
            element = fm.delta.new_element if fm.delta.HasField("new_element") else None
            if element is not None and element.WhichOneof("type") == "exception":
                error = error or f"exception: {element.exception.message[:80]}"
        elif kind == "script_finished":
            if fm.script_finished == RERUN_EARLY:
                continue
            end = time.perf_counter() - started
            ok = fm.script_finished == DONE
            return View(first, end, error or ("" if ok else f"finished {fm.script_finished}"))


async def one_view(ws_url: str, page_name: str) -> View:
    """Open a new session, ask for ``page_name`` and time it; never raises."""
    started = time.perf_counter()
    try:
        async with websockets.connect(
            ws_url, subprotocols=["streamlit", "benchmark"], max_size=None, open_timeout=60
        ) as ws:
            await ws.send(_rerun_request(page_name))
            return await asyncio.wait_for(_until_finished(ws, started), VIEW_TIMEOUT_S)
    except Exception as error:  # a benchmark reports a failed session and goes on
        return View(None, None, f"{type(error).__name__}: {str(error)[:80]}")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_seconds(pid: int) -> float:
    """CPU-seconds of ``pid`` and its direct children (nginx's master and its workers)."""
    total = _cpu_seconds(pid)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        if int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Watch:
    """While a burst runs: the slowest /_stcore/health answer and the server's peak RSS."""

    def __init__(self, base: str, pid: int | None) -> None:
        self.base, self.pid = base, pid
        self.health_max_s = 0.0
        self.health: list[tuple[float, float]] = []  # (perf_counter at the request, seconds)
        self.rss_peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            try:
                urllib.request.urlopen(self.base + "/_stcore/health", timeout=30).read()
                took = time.perf_counter() - t0
            except Exception:
                took = 30.0
            self.health_max_s = max(self.health_max_s, took)
            self.health.append((t0, took))
            if self.pid is not None:
                self.rss_peak_mb = max(self.rss_peak_mb, _rss_mb(self.pid))
            self._stop.wait(0.25)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def measure_page(base: str, pid: int | None, slug: str, sessions: int) -> str:
    ws_url = base.replace("http", "ws", 1) + "/_stcore/stream"
    page_name = "" if slug == "home" else slug
    alone = [await one_view(ws_url, page_name) for _ in range(3)]
    alone_s = statistics.median(v.end_s for v in alone if v.end_s is not None)
    # The first view computes what the page shares (its caches were empty, unless --url
    # pointed at a server that served it already); the next two get it from the caches.
    first_s = alone[0].end_s if alone[0].end_s is not None else float("nan")
    cpu0 = _cpu_seconds(pid) if pid else None
    client0 = time.process_time()
    with Watch(base, pid) as watch:
        views = await asyncio.gather(*(one_view(ws_url, page_name) for _ in range(sessions)))
    client_cpu = time.process_time() - client0
    ends = [v.end_s for v in views if v.end_s is not None]
    firsts = [v.first_s for v in views if v.first_s is not None]
    errors = [v.error for v in views if v.error]
    cpu = f"{(_cpu_seconds(pid) - cpu0) / sessions:.2f}" if pid else "-"
    rss = f"{watch.rss_peak_mb:.0f}" if pid else "-"
    if not ends:
        dashes = " - |" * 9
        return f"| {slug} | {first_s:.2f} | {alone_s:.2f} |{dashes} {len(errors)}: {errors[0]} |"
    p95 = _pct(ends, 0.95)
    return (
        f"| {slug} | {first_s:.2f} | {alone_s:.2f} | {_pct(ends, 0.5):.2f} | {p95:.2f} | "
        f"{max(ends):.2f} | "
        f"{_pct(firsts, 0.95):.2f} | {p95 / alone_s:.1f} | {watch.health_max_s:.2f} | {cpu} | "
        f"{client_cpu:.1f} | {rss} | {len(errors)}{': ' + errors[0] if errors else ''} |"
    )


@dataclass
class LiveView:
    """One session on the live page: refresh completion times and what went wrong."""

    refreshes: list[float]
    error: str = ""

    def longest_gap(self, started: float, ended: float) -> float:
        """The longest time without a refresh between ``started`` and ``ended``."""
        marks = [started, *self.refreshes, ended]
        return max(b - a for a, b in zip(marks, marks[1:], strict=False))


def _live_toggle_id(fm: ForwardMsg) -> str | None:
    if fm.WhichOneof("type") != "delta" or not fm.delta.HasField("new_element"):
        return None
    element = fm.delta.new_element
    if element.WhichOneof("type") == "checkbox" and element.checkbox.id.endswith("memory.live"):
        return element.checkbox.id
    return None


async def _switch_live_on(ws) -> tuple[str, float]:
    """Open the memory page and turn Live on; return the live fragment's id and interval."""
    await ws.send(_rerun_request("memory"))
    toggle_id = None
    while True:
        fm = ForwardMsg.FromString(await ws.recv())
        toggle_id = toggle_id or _live_toggle_id(fm)
        if fm.WhichOneof("type") == "script_finished" and fm.script_finished != RERUN_EARLY:
            break
    if toggle_id is None:
        raise RuntimeError("no Live toggle on the memory page")
    msg = BackMsg()
    msg.rerun_script.page_name = "memory"
    state = msg.rerun_script.widget_states.widgets.add()
    state.id, state.bool_value = toggle_id, True
    await ws.send(msg.SerializeToString())
    while True:
        fm = ForwardMsg.FromString(await ws.recv())
        if fm.WhichOneof("type") == "auto_rerun":
            return fm.auto_rerun.fragment_id, fm.auto_rerun.interval


async def _browser_timer(ws, fragment_id: str, interval: float, until: float) -> None:
    """What the browser's timer does: ask for the fragment every ``interval`` seconds."""
    msg = BackMsg()
    msg.rerun_script.page_name = "memory"
    msg.rerun_script.fragment_id = fragment_id
    msg.rerun_script.is_auto_rerun = True
    payload = msg.SerializeToString()
    while time.perf_counter() < until:
        await asyncio.sleep(interval)
        await ws.send(payload)


async def live_view(ws_url: str, seconds: float, started: float, ready) -> LiveView:
    """One viewer of the live page for ``seconds``; calls ``ready()`` once Live is on (or the
    session failed); never raises."""
    view = LiveView([])
    try:
        async with websockets.connect(
            ws_url, subprotocols=["streamlit", "benchmark"], max_size=None, open_timeout=60
        ) as ws:
            try:
                fragment_id, interval = await _switch_live_on(ws)
            finally:
                ready()
            until = started + seconds
            timer = asyncio.create_task(_browser_timer(ws, fragment_id, interval, until))
            try:
                while time.perf_counter() < until:
                    try:
                        raw = await asyncio.wait_for(ws.recv(), until - time.perf_counter())
                    except TimeoutError:
                        break
                    fm = ForwardMsg.FromString(raw)
                    if (fm.WhichOneof("type") == "script_finished"
                            and fm.script_finished == FRAGMENT_DONE):
                        view.refreshes.append(time.perf_counter())
            finally:
                timer.cancel()
    except Exception as error:  # a benchmark reports a failed session and goes on
        view.error = f"{type(error).__name__}: {str(error)[:80]}"
        ready()
    return view


async def measure_live(base: str, pid: int | None, sessions: int, seconds: float) -> None:
    ws_url = base.replace("http", "ws", 1) + "/_stcore/stream"
    waiting = {"sessions": sessions}
    steady: dict[str, float] = {}  # when every session is live: the clock and the server's CPU

    def ready() -> None:
        waiting["sessions"] -= 1
        if waiting["sessions"] == 0:
            steady["at"] = time.perf_counter()
            steady["cpu"] = _cpu_seconds(pid) if pid else 0.0

    started = time.perf_counter()
    with Watch(base, pid) as watch:
        views = await asyncio.gather(
            *(live_view(ws_url, seconds, started, ready) for _ in range(sessions))
        )
    ended = started + seconds
    cpu_end = _cpu_seconds(pid) if pid else 0.0
    # The first refresh of each session comes after it opened the page and switched Live on.
    gaps = [v.longest_gap(v.refreshes[0], ended) for v in views if v.refreshes]
    # Steady state: from the moment every session was live (the arrival is the burst above).
    steady_at = steady.get("at", ended)
    steady_gaps = [v.longest_gap(steady_at, ended) for v in views if not v.error]
    steady_health = max((took for t, took in watch.health if t >= steady_at), default=0.0)
    counts = [len(v.refreshes) for v in views]
    errors = [v.error for v in views if v.error]
    # CPU per refresh only from the moment every session was live: opening the page is not a
    # refresh.
    steady_refreshes = sum(
        1 for v in views for t in v.refreshes if t >= steady.get("at", float("inf"))
    )
    cpu_ms = (
        f"{1000 * (cpu_end - steady['cpu']) / steady_refreshes:.1f}"
        if pid and steady_refreshes
        else "-"
    )
    print(f"\n## {sessions} sessions on the live memory page for {seconds:.0f} s")
    print("| refreshes per session (min / median) | longest gap p50 (s) | p95 (s) | max (s) | "
          "max once all live (s) | health max (s) | once all live (s) | "
          "server CPU-ms per refresh | RSS peak (MB) | errors |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    if not gaps:
        print(f"| 0 | - | - | - | - | {watch.health_max_s:.2f} | - | - | - | {len(errors)}: "
              f"{errors[0] if errors else ''} |")
        return
    rss = f"{watch.rss_peak_mb:.0f}" if pid else "-"
    print(f"| {min(counts)} / {statistics.median(counts):.0f} | {_pct(gaps, 0.5):.2f} | "
          f"{_pct(gaps, 0.95):.2f} | {max(gaps):.2f} | {max(steady_gaps, default=0):.2f} | "
          f"{watch.health_max_s:.2f} | {steady_health:.2f} | {cpu_ms} | {rss} | "
          f"{len(errors)}{': ' + errors[0] if errors else ''} |")


async def soak(base: str, pid: int | None, reruns: int) -> None:
    ws_url = base.replace("http", "ws", 1) + "/_stcore/stream"
    async with websockets.connect(ws_url, subprotocols=["streamlit", "benchmark"],
                                  max_size=None) as ws:  # fmt: skip
        rss = []
        for i in range(reruns):
            started = time.perf_counter()
            await ws.send(_rerun_request("warp"))
            view = await _until_finished(ws, started)
            if view.error:
                print(f"soak rerun {i}: {view.error}")
            if pid and (i == 49 or (i + 1) % 100 == 0 or i == reruns - 1):
                rss.append(_rss_mb(pid))
    if pid and len(rss) >= 2:
        print(f"\nsoak: {reruns} reruns of warp on one session: RSS {rss[0]:.0f} MB after 50, "
              f"{rss[-1]:.0f} MB at the end ({rss[-1] - rss[0]:+.0f} MB); every 100 reruns: "
              + " ".join(f"{mb:.0f}" for mb in rss[1:]))  # fmt: skip
        # RSS is a sawtooth (cycles wait for a full collection): compare peaks, not two points.
        half = len(rss) // 2
        first = max(rss[1 : half + 1], default=rss[0])
        second = max(rss[half + 1 :], default=rss[-1])
        print(f"soak: highest RSS in the first half {first:.0f} MB, in the second half "
              f"{second:.0f} MB ({second - first:+.0f} MB)")


async def _burst(base: str, page_name: str, sessions: int) -> tuple[float, list[str]]:
    """``sessions`` views at once: seconds until the last one finished, and the errors."""
    ws_url = base.replace("http", "ws", 1) + "/_stcore/stream"
    started = time.perf_counter()
    views = await asyncio.gather(*(one_view(ws_url, page_name) for _ in range(sessions)))
    return time.perf_counter() - started, [v.error for v in views if v.error]


async def measure_replicas(slugs: list[str], sessions: int, count: int) -> None:
    """Throughput of one replica alone, then of ``count`` replicas behind nginx (the config of
    deploy/nginx_conf.py, sticky by cookie), for the same burst of ``sessions`` at once."""
    servers = [start_replica(f"classroom-replica-{i}") for i in range(count)]
    proxy = None
    try:
        proxy = start_nginx([address(s) for s in servers], Path(tempfile.mkdtemp()))
        print(f"\n## Throughput: {sessions} sessions at once, one replica vs {count} behind "
              "nginx (views per second until the last view finished; medians of "
              f"{REPLICA_REPEATS} bursts each)")
        # One replica's cores: its CPU-seconds over the burst's time (its own threads, the event
        # loop's I/O and OpenMP let it use more than one). The ceiling: what {count} replicas could
        # reach on this machine's cores if nothing else ran (the client and nginx do).
        # Client and nginx: the cores this benchmark and nginx took during the burst through
        # nginx, which the replicas could not use.
        print(f"| page | 1 replica (views/s) | 1 replica's cores | ceiling | client + nginx "
              f"cores | {count} replicas (views/s) | ratio | errors |")
        print("|---|---|---|---|---|---|---|---|")
        for slug in slugs:
            page_name = "" if slug == "home" else slug
            for server in servers:  # warm every replica: imports, models, shared caches
                await _burst(server.url, page_name, 2)
            ones, manys, cores, others, errors = [], [], [], [], []
            for _ in range(REPLICA_REPEATS):  # alternated, so a slow moment hits both sides
                cpu0 = _cpu_seconds(servers[0].process.pid)
                one_s, one_errors = await _burst(servers[0].url, page_name, sessions)
                cores.append((_cpu_seconds(servers[0].process.pid) - cpu0) / one_s)
                nginx0, client0 = _tree_cpu_seconds(proxy.process.pid), time.process_time()
                many_s, many_errors = await _burst(proxy.url, page_name, sessions)
                others.append((_tree_cpu_seconds(proxy.process.pid) - nginx0
                               + time.process_time() - client0) / many_s)  # fmt: skip
                ones.append(one_s)
                manys.append(many_s)
                errors += one_errors + many_errors
            one_s, many_s = statistics.median(ones), statistics.median(manys)
            cores, others = statistics.median(cores), statistics.median(others)
            print(f"| {slug} | {sessions / one_s:.1f} | {cores:.2f} | "
                  f"{min(count, os.cpu_count() / cores):.2f} | {others:.2f} | "
                  f"{sessions / many_s:.1f} | {one_s / many_s:.2f} | "
                  f"{len(errors)}{': ' + errors[0] if errors else ''} |", flush=True)  # fmt: skip
    finally:
        if proxy is not None:
            stop_nginx(proxy)
        for server in servers:
            stop_server(server)


async def main_async(args: argparse.Namespace) -> None:
    slugs = args.pages or [p.slug for p in available_pages()]
    server = None if args.url else start_server("classroom-benchmark")
    base = args.url or server.url
    pid = None if server is None else server.process.pid
    print(f"server {base}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    try:
        print(f"\n## {args.sessions} sessions opening the same page at once")
        print("| page | first view, cold (s) | alone p50 (s) | p50 (s) | p95 (s) | max (s) | "
              "first element p95 (s) | p95 / alone | health max (s) | server CPU-s per view | "
              "client CPU-s | RSS peak (MB) | errors |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for slug in slugs:
            print(await measure_page(base, pid, slug, args.sessions), flush=True)
        if args.live_seconds > 0:
            await measure_live(base, pid, args.sessions, args.live_seconds)
        if args.soak:
            await soak(base, pid, args.soak)
    finally:
        if server is not None:
            stop_server(server)
    if args.replicas > 1:
        await measure_replicas(slugs, args.sessions, args.replicas)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50, help="sessions at once per page")
    parser.add_argument("--pages", nargs="*", help="slugs (default: every page)")
    parser.add_argument("--live-seconds", type=float, default=60.0,
                        help="seconds of the live memory page scenario (0 skips it)")
    parser.add_argument("--soak", type=int, default=0, help="reruns of warp on one session")
    parser.add_argument("--replicas", type=int, default=2,
                        help="then compare one replica with this many behind nginx (1 skips it)")
    parser.add_argument("--url", help="use a running server instead of starting one")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
