"""A class answers a question at once: 50 students' answers on the teacher's live tally, at
Streamlit's protocol level.

Run: python -m benchmarks.class_questions [--students 50] [--config sqlite|redis|both]

Target: a student's answer is on the teacher's tally within 2 s (p95) with every student
answering at once, and the tally is exact (its counts are the answers sent, one per seat).

Per configuration (the servers of ``benchmarks.class_session``: ``sqlite``, one server with the
default store; ``redis``, Debian's ``redis-server`` and two replicas behind nginx, every tab
connected through nginx):

1. The class is created and one question of four choices asked through the class store API
   (``core.class_store.open_store`` on the store the server uses; ``core.questions``'
   ``question_state`` of a question on page ``home``, with the class's teacher key).
2. The teacher is a protocol tab on the teacher link ``/?class=CODE&teacher=KEY`` (it reopens
   the class as its teacher): it runs the fragment timers the server announces (the tally's
   every second, the sidebar's counts every 2 s), and each tally it is sent is read: the
   markdown "**Answered: N of M students**" (when, N, M) and the bar chart's per-choice counts
   (the bars' text labels in the plotly spec).
3. ``--students`` tabs open ``/?class=CODE`` at once (``benchmarks.class_session.StudentTab``:
   the page and query string the server sends, the seat included, and the fragment timers it
   announces). Each finds the radio ``class.answer`` in the deltas: its widget id, its options
   and the fragment it is drawn in (``Delta.fragment_id``).
4. Burst 1: every student answers at once (student ``i`` picks choice ``i % 4``) as a browser
   does when a radio in a fragment changes: a ``rerun_script`` with the tab's page and query
   string, ``widget_states`` holding the radio's value and ``fragment_id`` naming its fragment
   (so only the fragment reruns; the radio's on_change writes the answer to the store). In
   Streamlit 1.67 a radio's value travels as ``string_value``, the option's label (not an
   ``int_value`` index). A student's own answer run is the first run that starts after the
   send with the radio's fragment in its ``metadata.run.fragment_ids`` (or a whole run: counted
   as "whole-page answer runs", target 0); its end is its ``script_finished``, or the next run's
   ``new_session`` when a timer's run started before that run's messages left the server
   (Streamlit then sends it as FINISHED_EARLY_FOR_RERUN or drops it): counted as "cut short".
   Each burst leaves as a teacher's tally arrives: the answers just missed its read of the store
   and wait nearly a whole poll (1 s) for the next, the slow phase of the poll, chosen rather
   than left to chance since a burst's answers all share one phase.
5. Burst 2: 20 students whose answer was not D change it to D: answered must stay at 50 and
   the counts move by exactly 20 (D up, the others down).
6. Reload: one student's websocket closes and a new one opens ``/?class=CODE&seat=SEAT`` (a
   reload keeps its seat in the address): the radio must show the stored answer, and answering
   again must move one count without adding to ``answered`` (nor to the joined count M).

Latency per answer (answers are anonymous on the tally): the answers are ordered by when each
student's own answer run ended (the on_change callback wrote the answer before that run went
on), and the ``k``-th is counted as on the tally at the first teacher tally, received after the
burst began, that shows ``N >= k`` (burst 2: D's count up by ``>= k``); its latency is that
moment minus that student's send. The sends of a burst leave within a few milliseconds, so the
pairing hardly matters for the distribution. Answers whose run never ended are left out and
counted.

Printed, never asserted: p50 / p95 / max answer-to-tally latency against the target, time until
the tally shows every answer, the students' own answer runs, whether the final tally and the
store (``current_round``) hold exactly the counts sent, the servers' CPU-seconds over each burst,
the slowest ``/_stcore/health`` answer, the machine's load average before and after, the
client's CPU-seconds (it shares the machine with the servers), and errors (exception elements,
failed runs, closed websockets, tracebacks in the server logs).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.class_session import (
    ClassRun,
    Servers,
    StudentTab,
    _server_log_errors,
    redis_servers,
    sqlite_servers,
    student,
)
from benchmarks.classroom import DONE, FRAGMENT_DONE, RERUN_EARLY, Watch, _pct
from core.class_store import ClassRound
from core.class_view import CLASS_PARAM, SEAT_PARAM, TEACHER_PARAM
from core.questions import Choice, Question, question_state

TARGET_TALLY_P95_S = 2.0
#: The radio's key (ui.class_questions.ANSWER_KEY): its widget id contains it.
ANSWER_KEY = "class.answer"
#: The teacher's tally reads the store this often (ui.class_questions.TALLY_POLL_S).
TALLY_POLL_S = 1.0
CHOICES = 4
#: Burst 2: this many students change their answer to this choice (D).
CHANGERS = 20
CHANGE_TO = 3
SLUG = "home"
TEACHER_TIMEOUT_S = 120.0
JOIN_TIMEOUT_S = 150.0
#: The teacher's counts of joined students refresh every 2 s (ui.classroom.TEACHER_POLL_S).
COUNTS_TIMEOUT_S = 10.0
SETTLE_S = 2.0
BURST_TIMEOUT_S = 30.0
TALLY_LINE = re.compile(r"Answered: (\d+) of (\d+) students?")


# --- Pure helpers -------------------------------------------------------------------------------


def benchmark_question() -> Question:
    """The question the class is asked: four choices, the first right, nothing on the page
    hidden."""
    texts = ("`x[0]` is a view", "`x[0]` is a copy", "It depends on the dtype", "It raises")
    choices = tuple(Choice(text, f"Because of how indexing works ({n}).")
                    for n, text in enumerate(texts))  # fmt: skip
    return Question("benchmark-view-or-copy", "Is `x[0]` a view or a copy?", choices, 0,
                    "`x[0].data_ptr() == x.data_ptr()` is True")  # fmt: skip


def first_choices(students: int, choices: int = CHOICES) -> list[int]:
    """Burst 1: student ``i`` picks ``i % choices``."""
    return [i % choices for i in range(students)]


def changers(picked: Sequence[int], count: int = CHANGERS, to: int = CHANGE_TO) -> list[int]:
    """Burst 2: the first ``count`` students (indexes into ``picked``) whose answer is not
    ``to``; ``ValueError`` when fewer than ``count`` are."""
    found = [i for i, choice in enumerate(picked) if choice != to][:count]
    if len(found) < count:
        raise ValueError(f"only {len(found)} students did not pick {to}, {count} should change")
    return found


def counts_of(picked: Sequence[int], choices: int = CHOICES) -> tuple[int, ...]:
    """How many picked each choice: ``counts[i]`` is ``picked.count(i)``."""
    return tuple(sum(1 for choice in picked if choice == i) for i in range(choices))


def parse_tally(markdown: str) -> tuple[int, int] | None:
    """``(N, M)`` from the tally's "**Answered: N of M students**"; None for other markdown."""
    found = TALLY_LINE.search(markdown)
    return None if found is None else (int(found[1]), int(found[2]))


def chart_counts(spec: str) -> tuple[int, ...] | None:
    """The per-choice counts of the tally's bar chart (``core.tally.tally_figure`` labels each
    bar with its count): from the plotly spec's first trace's ``text``; None when the spec is
    not such a chart."""
    try:
        texts = json.loads(spec)["data"][0]["text"]
        return tuple(int(text) for text in texts)
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def inclusion_latencies(sent: Sequence[float], finished: Sequence[float | None],
                        shown: Sequence[tuple[float, int]]) -> list[float | None]:  # fmt: skip
    """Seconds from each answer's send to the first tally that includes it (None: never shown,
    or its run never ended).

    ``sent[i]`` and ``finished[i]`` are answer ``i``'s send and the end of its own run
    (perf_counter seconds, ``finished[i]`` None when it never ended); ``shown`` is the tally's
    ``(time, count)`` in time order, the count being how many of these answers it shows. The
    answers are anonymous: the ``k``-th to finish is counted as shown at the first tally with
    ``count >= k``.

    >>> inclusion_latencies([0.0, 0.0, 0.0], [0.3, 0.1, None], [(0.5, 1), (1.2, 2)])
    [1.2, 0.5, None]
    """
    if len(sent) != len(finished):
        raise ValueError(f"one end per send, got {len(sent)} sends and {len(finished)} ends")
    done = sorted((i for i, end in enumerate(finished) if end is not None),
                  key=lambda i: finished[i])  # fmt: skip
    latencies: list[float | None] = [None] * len(sent)
    for k, i in enumerate(done, start=1):
        at = next((t for t, count in shown if count >= k), None)
        if at is not None:
            latencies[i] = at - sent[i]
    return latencies


def seat_of(query: str) -> str | None:
    """The seat in a query string the server sent (``class=CODE&seat=SEAT``)."""
    seats = parse_qs(query).get(SEAT_PARAM, [])
    return seats[0] if seats else None


# --- The tabs -----------------------------------------------------------------------------------


class TeacherTab(StudentTab):
    """The teacher's tab on the teacher link: the tallies it was sent, as they arrived."""

    def __init__(self, ws, class_run: ClassRun, teacher_key: str) -> None:
        super().__init__(ws, class_run)
        self.query = f"{CLASS_PARAM}={class_run.code}&{TEACHER_PARAM}={teacher_key}"
        self.answered: list[tuple[float, int, int]] = []  # (perf_counter, N, M) per tally
        self.counts: list[tuple[float, tuple[int, ...]]] = []  # (perf_counter, bars) per tally

    def take(self, fm: ForwardMsg) -> None:
        super().take(fm)
        if fm.WhichOneof("type") != "delta" or not fm.delta.HasField("new_element"):
            return
        element = fm.delta.new_element
        kind = element.WhichOneof("type")
        if kind == "markdown" and (tally := parse_tally(element.markdown.body)) is not None:
            self.answered.append((time.perf_counter(), *tally))
            self.ready.set()
        elif kind == "plotly_chart" and (bars := chart_counts(element.plotly_chart.spec)):
            self.counts.append((time.perf_counter(), bars))

    def joined(self) -> int | None:
        """The M of the last tally (students joined)."""
        return self.answered[-1][2] if self.answered else None

    def bars(self) -> tuple[int, ...] | None:
        return self.counts[-1][1] if self.counts else None


class AnswerTab(StudentTab):
    """A student's tab that answers the class question through the radio's fragment."""

    def __init__(self, ws, class_run: ClassRun, query: str | None = None) -> None:
        super().__init__(ws, class_run)
        if query is not None:
            self.query = query  # a reload: the address with the seat
        self.radio_id = ""
        self.options: list[str] = []
        self.fragment_id = ""
        self.shown_choice: int | None = None  # what the radio showed when last drawn
        self.whole_runs: list[float] = []  # perf_counter of each whole-page run's start
        self.sent: list[tuple[float, int]] = []  # (perf_counter, choice) per answer
        self.finished: list[float | None] = []  # the end of each answer's own run
        # Answer runs that ended as FINISHED_EARLY_FOR_RERUN, or whose end never came before
        # the next run started.
        self.cut_short = 0
        self._answer_runs: dict[str, int] = {}  # script_run_id -> answer index

    def answer_request(self, choice: int) -> bytes:
        """What a browser sends when the radio (in its fragment) changes to ``choice``."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.page_name = ""
        msg.rerun_script.fragment_id = self.fragment_id
        widget = msg.rerun_script.widget_states.widgets.add()
        widget.id = self.radio_id
        widget.string_value = self.options[choice]
        return msg.SerializeToString()

    async def answer(self, choice: int) -> None:
        payload = self.answer_request(choice)
        self.sent.append((time.perf_counter(), choice))
        self.finished.append(None)
        try:
            await self.ws.send(payload)
        except Exception as error:  # the reader reports a closed websocket too
            self.errors.append(f"answer not sent: {type(error).__name__}")

    def take(self, fm: ForwardMsg) -> None:
        super().take(fm)
        kind = fm.WhichOneof("type")
        run = fm.metadata.run
        if kind == "new_session":
            if not run.fragment_ids:
                self.whole_runs.append(time.perf_counter())
            # Another run started before the answer's run was said to end: the server was done
            # with it (its script_finished, and its deltas, were dropped from the queue when the
            # next run started before they left), as the browser sees it too.
            for cut in [r for r in self._answer_runs if r != run.script_run_id]:
                self._end(self._answer_runs.pop(cut), cut_short=True)
            waiting = bool(self.finished) and self.finished[-1] is None
            if waiting and (not run.fragment_ids or self.fragment_id in run.fragment_ids):
                self._answer_runs[run.script_run_id] = len(self.finished) - 1
        elif kind == "script_finished":
            index = self._answer_runs.pop(run.script_run_id, None)
            # A run whose messages were still queued when the next run (a timer's) started
            # is sent as FINISHED_EARLY_FOR_RERUN (Streamlit's ForwardMsgQueue rewrites it),
            # though it ran to its end; the browser takes it as the run's end too.
            if index is not None and fm.script_finished in (DONE, FRAGMENT_DONE, RERUN_EARLY):
                self._end(index, cut_short=fm.script_finished == RERUN_EARLY)
            if self.radio_id and fm.script_finished in (DONE, FRAGMENT_DONE, RERUN_EARLY):
                # The run that drew the question's radio is over. Not only on DONE: a timer's
                # run that started first can have its end rewritten, as above.
                self.ready.set()
        elif kind == "delta" and fm.delta.HasField("new_element"):
            element = fm.delta.new_element
            if element.WhichOneof("type") == "radio" and ANSWER_KEY in element.radio.id:
                self._radio(element.radio, fm.delta.fragment_id)

    def _end(self, index: int, cut_short: bool) -> None:
        self.finished[index] = time.perf_counter()
        self.cut_short += cut_short

    def _radio(self, radio, fragment_id: str) -> None:
        self.radio_id, self.options, self.fragment_id = radio.id, list(radio.options), fragment_id
        if radio.set_value:
            value = radio.raw_value if radio.HasField("raw_value") else None
            self.shown_choice = self.options.index(value) if value in self.options else None
        elif radio.HasField("default"):
            self.shown_choice = radio.default

    def answered_last(self) -> bool:
        return bool(self.finished) and self.finished[-1] is not None


# --- The phases ---------------------------------------------------------------------------------


async def until(check: Callable[[], bool], timeout_s: float) -> float | None:
    """Seconds until ``check()`` held (polled every 20 ms), or None after ``timeout_s``."""
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > timeout_s:
            return None
        await asyncio.sleep(0.02)
    return time.perf_counter() - started


@dataclass
class Burst:
    """One burst of answers: who answered what, what the tally and the store showed."""

    name: str
    answers: list[tuple[AnswerTab, int]]
    expected: tuple[int, ...]  # the counts every seat's latest answer makes
    started: float = 0.0
    latencies: list[float | None] = field(default_factory=list)
    own_runs: list[float] = field(default_factory=list)  # send to the student's run's end
    all_shown_s: float | None = None  # until the tally showed exactly ``expected``
    tally: tuple[int, ...] | None = None
    answered_range: tuple[int, int] | None = None  # min, max N the tally showed meanwhile
    stored: ClassRound | None = None
    server_cpu: float = 0.0
    whole_runs: int = 0  # whole-page runs the answering students had during the burst
    cut_short: int = 0  # answer runs cut short by the next run (AnswerTab.cut_short)


async def run_burst(servers: Servers, code: str, teacher: TeacherTab, burst: Burst,
                    counted: Callable[[float, int, tuple[int, ...]], int]) -> None:  # fmt: skip
    """Send ``burst.answers`` at once; wait until each student's run ended and the tally shows
    ``burst.expected`` (at most ``BURST_TIMEOUT_S``); then the figures. ``counted(t, N, bars)``
    says how many of this burst's answers a tally shows.

    The answers leave as the teacher's next tally arrives: they just missed its read of the
    store and wait nearly a whole ``TALLY_POLL_S`` for the next, the slow phase of the poll (a
    burst's answers all share one phase, so it is chosen rather than left to chance)."""
    tallies = len(teacher.counts)
    await until(lambda: len(teacher.counts) > tallies, 2 * TALLY_POLL_S + 1.0)
    cpu0 = servers.cpu_seconds()
    marks = [len(tab.finished) for tab, _ in burst.answers]
    cut0 = sum(tab.cut_short for tab, _ in burst.answers)
    burst.started = time.perf_counter()
    await asyncio.gather(*(tab.answer(choice) for tab, choice in burst.answers))
    burst.all_shown_s = await until(
        lambda: teacher.bars() == burst.expected
        and all(tab.answered_last() for tab, _ in burst.answers), BURST_TIMEOUT_S)  # fmt: skip
    if burst.all_shown_s is not None:  # until the tally showed it (not the wait's last poll)
        first = next(t for t, bars in teacher.counts
                     if t >= burst.started and bars == burst.expected)  # fmt: skip
        burst.all_shown_s = first - burst.started
    burst.server_cpu = servers.cpu_seconds() - cpu0
    burst.cut_short = sum(tab.cut_short for tab, _ in burst.answers) - cut0
    sent = [tab.sent[mark][0] for (tab, _), mark in zip(burst.answers, marks, strict=True)]
    ends = [tab.finished[mark] for (tab, _), mark in zip(burst.answers, marks, strict=True)]
    burst.own_runs = [end - t for t, end in zip(sent, ends, strict=True) if end is not None]
    shown = _tallies(teacher, burst.started, counted)
    burst.latencies = inclusion_latencies(sent, ends, shown)
    during = [n for t, n, _ in teacher.answered if t >= burst.started]
    burst.answered_range = (min(during), max(during)) if during else None
    burst.tally = teacher.bars()
    burst.stored = await asyncio.to_thread(servers.store.current_round, code)
    burst.whole_runs = sum(1 for tab, _ in burst.answers for t in tab.whole_runs
                           if t >= burst.started)  # fmt: skip


def _tallies(teacher: TeacherTab, since: float,
             counted: Callable[[float, int, tuple[int, ...]], int]) -> list[tuple[float, int]]:
    """``(time, answers of the burst shown)`` per tally since ``since``: a tally is its
    markdown line and then its chart; the pair is timed at the line."""
    shown = []
    for t, n, _ in teacher.answered:
        if t < since:
            continue
        bars = next((b for tb, b in teacher.counts if tb >= t), None)
        shown.append((t, counted(t, n, bars or ())))
    return shown


@dataclass
class Reload:
    """A student reconnecting with its seat and answering again."""

    seat: str | None = None
    ready_s: float | None = None
    restored: bool = False  # the radio showed the stored answer
    burst: Burst | None = None
    joined_after: int | None = None
    errors: list[str] = field(default_factory=list)


async def reload_and_answer(servers: Servers, code: str, teacher: TeacherTab, old: AnswerTab,
                            picked: dict[str, int], ws_url: str, tasks: list[asyncio.Task],
                            runs: list[ClassRun]) -> Reload:  # fmt: skip
    """``old`` closes; a new tab opens its address with its seat, then answers the next
    choice. The new tab's task joins ``tasks`` and its run ``runs`` (stopped at the end)."""
    result = Reload(seat=seat_of(old.query))
    if result.seat is None:
        result.errors.append("the student's query string holds no seat")
        return result
    old.class_run.stop.set()
    await asyncio.sleep(0.5)  # the websocket closes and the server ends the session
    run, tabs = ClassRun(code), []
    runs.append(run)
    query = f"{CLASS_PARAM}={code}&{SEAT_PARAM}={result.seat}"
    tasks.append(asyncio.create_task(student(ws_url, run, tabs, functools.partial(
        AnswerTab, class_run=run, query=query))))  # fmt: skip
    result.ready_s = await until(lambda: bool(tabs) and tabs[0].ready.is_set(), 60.0)
    if result.ready_s is None or tabs[0].errors or not tabs[0].radio_id:
        result.errors += tabs[0].errors if tabs else ["the reloaded tab never connected"]
        return result
    tab = tabs[0]
    result.restored = tab.shown_choice == picked[result.seat]
    choice = (picked[result.seat] + 1) % CHOICES
    picked[result.seat] = choice
    expected = counts_of(list(picked.values()))
    base = teacher.bars() or ()
    result.burst = Burst("reload", [(tab, choice)], expected)
    await run_burst(servers, code, teacher, result.burst,
                    lambda t, n, bars: int(bars == expected and bars != base))  # fmt: skip
    result.joined_after = teacher.joined()
    return result


@dataclass
class Outcome:
    """A configuration's run: the phases' figures."""

    students: int
    joined_s: float | None = None
    ready: int = 0
    teacher_m: int | None = None
    bursts: list[Burst] = field(default_factory=list)
    reload: Reload | None = None
    health_max: float = float("nan")
    client_cpu: float = 0.0
    errors: list[str] = field(default_factory=list)
    unready: list[str] = field(default_factory=list)  # students never shown the radio: why


async def run_question(servers: Servers, args: argparse.Namespace) -> Outcome:
    """One class on ``servers``: the teacher, the joins, two bursts and a reload."""
    store, outcome = servers.store, Outcome(args.students)
    code, key = store.create_class()
    question = benchmark_question()
    store.ask(code, key, question_state(SLUG, question), len(question.choices))
    ws_url = servers.url.replace("http", "ws", 1) + "/_stcore/stream"
    watches = [Watch(server.url, server.process.pid) for server in servers.streamlit]
    client0, tasks, runs = time.process_time(), [], []
    teacher_tabs: list[StudentTab] = []
    tabs: list[StudentTab] = []
    with ExitStack() as watching:
        for watch in watches:
            watching.enter_context(watch)
        runs.append(ClassRun(code))
        tasks.append(asyncio.create_task(student(ws_url, runs[0], teacher_tabs, functools.partial(
            TeacherTab, class_run=runs[0], teacher_key=key))))  # fmt: skip
        if await until(lambda: bool(teacher_tabs) and teacher_tabs[0].ready.is_set(),
                       TEACHER_TIMEOUT_S) is None or teacher_tabs[0].errors:  # fmt: skip
            outcome.errors.append("the teacher's tab showed no tally")
        else:
            await _students_answer(servers, code, teacher_tabs[0], tabs, ws_url, tasks, runs,
                                   outcome, args)  # fmt: skip
        for run in runs:
            run.stop.set()
        await asyncio.gather(*tasks)
    outcome.health_max = max((watch.health_max_s for watch in watches), default=float("nan"))
    outcome.client_cpu = time.process_time() - client0
    outcome.errors += [error for tab in [*teacher_tabs, *tabs] for error in tab.errors]
    if outcome.reload is not None:
        outcome.errors += outcome.reload.errors
    outcome.errors += _server_log_errors(servers)
    return outcome


async def _students_answer(servers: Servers, code: str, teacher: TeacherTab,
                           tabs: list[StudentTab], ws_url: str, tasks: list[asyncio.Task],
                           runs: list[ClassRun], outcome: Outcome,
                           args: argparse.Namespace) -> None:  # fmt: skip
    """The joins, burst 1 (everyone answers), burst 2 (some change) and the reload."""
    for _ in range(args.students):
        run = ClassRun(code)
        runs.append(run)
        tasks.append(asyncio.create_task(student(ws_url, run, tabs, functools.partial(
            AnswerTab, class_run=run))))  # fmt: skip
    outcome.joined_s = await until(lambda: len(tabs) == args.students
                                   and all(tab.ready.is_set() for tab in tabs), JOIN_TIMEOUT_S)
    live = [tab for tab in tabs if isinstance(tab, AnswerTab) and tab.radio_id
            and not tab.errors and seat_of(tab.query)]  # fmt: skip
    outcome.ready = len(live)
    outcome.unready = [f"{'radio drawn' if getattr(tab, 'radio_id', '') else 'no radio'}, "
                       f"{tab.stuck()}" for tab in tabs if tab not in live and not tab.errors]
    await until(lambda: teacher.joined() == len(live), COUNTS_TIMEOUT_S)
    outcome.teacher_m = teacher.joined()
    await asyncio.sleep(SETTLE_S)
    if not live:
        return
    first = first_choices(len(live))
    picked = {seat_of(tab.query): choice for tab, choice in zip(live, first, strict=True)}
    burst = Burst(f"burst 1: {len(live)} answer at once", list(zip(live, first, strict=True)),
                  counts_of(first))  # fmt: skip
    await run_burst(servers, code, teacher, burst, lambda t, n, bars: n)
    outcome.bursts.append(burst)
    moving = changers(first, min(CHANGERS, sum(1 for c in first if c != CHANGE_TO)))
    for i in moving:
        picked[seat_of(live[i].query)] = CHANGE_TO
    base = burst.expected[CHANGE_TO]
    burst = Burst(f"burst 2: {len(moving)} change their answer to {'ABCDEF'[CHANGE_TO]}",
                  [(live[i], CHANGE_TO) for i in moving],
                  counts_of(list(picked.values())))  # fmt: skip
    await asyncio.sleep(SETTLE_S)
    await run_burst(servers, code, teacher, burst,
                    lambda t, n, bars: bars[CHANGE_TO] - base if bars else 0)  # fmt: skip
    outcome.bursts.append(burst)
    await asyncio.sleep(SETTLE_S)
    unmoved = next(i for i in range(len(live)) if i not in moving)
    outcome.reload = await reload_and_answer(servers, code, teacher, live[unmoved], picked,
                                             ws_url, tasks, runs)  # fmt: skip


# --- The report ---------------------------------------------------------------------------------


def _seconds(values: Sequence[float]) -> str:
    if not values:
        return "none"
    return (f"p50 {_pct(list(values), 0.5):.2f} s, p95 {_pct(list(values), 0.95):.2f} s, "
            f"max {max(values):.2f} s")  # fmt: skip


def _burst_lines(burst: Burst, students: int) -> list[str]:
    shown = [latency for latency in burst.latencies if latency is not None]
    lines = [f"{burst.name}:"]
    if shown:
        p95 = _pct(shown, 0.95)
        lines.append(f"  answer-to-tally {_seconds(shown)} over {len(shown)} of "
                     f"{len(burst.answers)} answers (target p95 <= {TARGET_TALLY_P95_S:.0f} s: "
                     f"{p95 / TARGET_TALLY_P95_S:.2f}x)")  # fmt: skip
    else:
        lines.append("  answer-to-tally: no answer reached the tally")
    all_shown = "never" if burst.all_shown_s is None else f"{burst.all_shown_s:.2f} s"
    lines.append(f"  the tally showed every answer after {all_shown}; the students' own answer "
                 f"runs {_seconds(burst.own_runs)} ({len(burst.own_runs)} ended, "
                 f"{burst.cut_short} of them cut short by a timer's run)")  # fmt: skip
    stored = burst.stored
    store_counts = None if stored is None else stored.counts
    exact = burst.tally == burst.expected and store_counts == burst.expected
    lines.append(f"  counts sent {burst.expected}, tally {burst.tally}, store {store_counts} "
                 f"(answered {None if stored is None else stored.answered} of {students}): "
                 f"{'exact' if exact else 'NOT exact'}")  # fmt: skip
    if burst.answered_range is not None:
        low, high = burst.answered_range
        lines.append(f"  tally's N meanwhile {low}-{high}; whole-page runs of the answering "
                     f"students: {burst.whole_runs} (target 0); server CPU "
                     f"{burst.server_cpu:.1f} s ({1000 * burst.server_cpu / len(burst.answers):.0f}"
                     f" ms per answer, polling included)")  # fmt: skip
    return lines


def report(servers: Servers, outcome: Outcome) -> None:
    print(f"\n## {servers.name}: {outcome.students} students, one question of {CHOICES} "
          "choices")
    joined = "never" if outcome.joined_s is None else f"{outcome.joined_s:.1f} s"
    print(f"every student showing the question's radio after {joined} ({outcome.ready} of "
          f"{outcome.students}); the teacher's tally says M = {outcome.teacher_m}")
    if outcome.unready:
        print(f"not ready: {len(outcome.unready)}" + "".join(f"\n  {why}"
                                                             for why in outcome.unready[:3]))
    for burst in outcome.bursts:
        print("\n".join(_burst_lines(burst, outcome.ready)))
    reload = outcome.reload
    if reload is not None and reload.burst is not None:
        burst = reload.burst
        stored = burst.stored
        kept = (stored is not None and stored.answered == outcome.ready
                and burst.answered_range == (outcome.ready, outcome.ready))  # fmt: skip
        shown = "never" if burst.all_shown_s is None else f"{burst.all_shown_s:.2f} s"
        print(f"reload: back with its seat after {reload.ready_s:.2f} s, the radio "
              f"{'showed' if reload.restored else 'did NOT show'} its stored answer; answering "
              f"again: tally {burst.tally} (sent {burst.expected}) after {shown}, store "
              f"{None if stored is None else stored.counts}, answered "
              f"{None if stored is None else stored.answered} (target {outcome.ready}: "
              f"{'kept' if kept else 'NOT kept'}), the tally's N {burst.answered_range}, M "
              f"{reload.joined_after}")  # fmt: skip
    elif reload is not None:
        print(f"reload: failed ({'; '.join(reload.errors[:3])})")
    print(f"health max: {outcome.health_max:.2f} s; client CPU {outcome.client_cpu:.1f} s")
    print(f"errors: {len(outcome.errors)}" + "".join(f"\n  {e}" for e in outcome.errors[:5]))


async def main_async(args: argparse.Namespace) -> None:
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; the question is asked "
          "through the class store API with the teacher key; the teacher's tab opens the "
          "teacher link")  # fmt: skip
    configs = {"sqlite": sqlite_servers, "redis": redis_servers}
    for name in ("sqlite", "redis"):
        if args.config in (name, "both"):
            with configs[name]("class-questions") as servers:
                report(servers, await run_question(servers, args))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50, help="students answering at once")
    parser.add_argument("--config", choices=("sqlite", "redis", "both"), default="both")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
