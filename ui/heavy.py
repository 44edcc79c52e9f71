"""Heavy work waits for a click, takes its place in one queue, and is computed once.

A class of 50 shares one process, so one view that costs many CPU-seconds slows every student.
A lesson link is user input: anyone can write ``?warp.out_w=4096`` into one. Three pieces keep
that work in check; a page uses them around any computation that can be slow:

:func:`heavy_gate` (the click). Work whose expected time is above :func:`budget_s` runs only
after this session clicked a button that states the expected time, for exactly these settings
(``signature``: a hashable of them; a click for one setting does not unlock another). The rule
is the same whether the settings came from a link or from this session's own widgets: telling
the two apart would need tracking which run changed which control, and a student who drags a
slider to a heavy value is as well served by a button that says "about 12 s" as a link's
visitor is. Until the click, the page shows a cheap version (fewer steps, a placeholder).
Work whose result is already computed for everyone (``ready=True``) needs no click.
:func:`may_run` is the decision alone, for a page that must choose its cheap version before it
draws the button (BatchNorm draws its chart first, then the button under it with
:func:`offer_run`).

:func:`heavy_job` (the queue). At most :data:`HEAVY_JOBS` heavy jobs run at once in the
process; the others wait in arrival order (FIFO tickets) and see "Waiting for the server: N
job(s) ahead of yours", updated every :data:`POLL_S` seconds. A script entering a heavy job
gives back its turn (:mod:`ui.turns`) first: the job is bounded by this queue, and while it
waits or runs the light pages of everyone else go on. The turn is not taken again afterwards
(the job may run inside a cached function, where waiting for a turn is forbidden); the rest of
that script is a page's drawing, which is short.

:func:`compute_once` (one computation per key). Two sessions asking for the same long result
at once compute it once: the first computes, the others wait for its result (a per-key lock).
A finished result is kept for :data:`ONCE_TTL_S` seconds, at most :data:`ONCE_MAX_ENTRIES` of
them, only to hand it to the sessions that were waiting; the page's own ``st.cache_data``
keeps it after that. When the first caller's run stops (the student reran the page, an
error), a waiting caller computes it instead: nobody gets another session's exception.

The budget (:func:`budget_s`, 2 s) and :data:`HEAVY_JOBS` come from ``TP_HEAVY_BUDGET_S``
(seconds, > 0) and ``TP_HEAVY_JOBS`` (a positive integer) when set; the budget is read on every
call so a test may change the environment.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import streamlit as st

from ui import turns
from ui.i18n import _, ngettext

R = TypeVar("R")

#: Expected seconds above which work waits for a click (2 s: a page view that keeps a student
#: waiting longer than this, and takes the server's CPU from the class for as long, must be
#: asked for).
DEFAULT_BUDGET_S = 2.0
#: Heavy jobs running at once. One: the machine has few cores and a heavy job uses them all
#: (torch's intra-op threads), so a second job at once would only make both finish later.
DEFAULT_HEAVY_JOBS = 1
#: How often a waiting job looks at its place in the queue and redraws it.
POLL_S = 0.5
#: How long a computed result stays for callers that waited for it, and how many are kept.
ONCE_TTL_S = 60.0
ONCE_MAX_ENTRIES = 8
#: Signatures this session clicked for, per gate key (the last few: going back to a setting
#: clicked a moment ago does not ask again).
_CLICKED_KEPT = 8


def _positive(raw: str | None, default: float, kind: type) -> float:
    try:
        value = kind(raw) if raw is not None else default
    except ValueError:
        return default
    return value if value > 0 else default


def budget_s() -> float:
    """The budget in seconds: ``TP_HEAVY_BUDGET_S`` when it is a positive number, else 2."""
    return float(_positive(os.environ.get("TP_HEAVY_BUDGET_S"), DEFAULT_BUDGET_S, float))


HEAVY_JOBS = int(_positive(os.environ.get("TP_HEAVY_JOBS"), DEFAULT_HEAVY_JOBS, int))


# ------------------------------------------------------------------------------------------
# The click
# ------------------------------------------------------------------------------------------
def _clicked_key(key: str) -> str:
    return f"_heavy.{key}.clicked"  # session state, not a widget: never in the URL


def _clicked(key: str, signature: Hashable) -> None:
    kept = [s for s in st.session_state.get(_clicked_key(key), ()) if s != signature]
    st.session_state[_clicked_key(key)] = tuple([*kept, signature][-_CLICKED_KEPT:])


def may_run(key: str, expected_s: float, signature: Hashable, *, ready: bool = False) -> bool:
    """Whether the work may run now: cheap enough (``expected_s <= budget``), already computed
    for everyone (``ready``), or this session clicked the button of gate ``key`` for exactly
    this ``signature``. Draws nothing."""
    if ready or expected_s <= budget_s():
        return True
    return signature in st.session_state.get(_clicked_key(key), ())


def offer_run(key: str, expected_s: float, signature: Hashable, *, what: str = "",
              message: str | None = None, label: str | None = None) -> None:
    """Draw the warning and the button (key ``f"{key}.run"``) that lets the work run.

    ``message`` replaces the default warning ("... takes about N s on this server ..."),
    ``label`` the button's "Run {what} (about {seconds} s)"; both are already translated."""
    seconds = max(1.0, expected_s)
    if message is None:
        message = _("{what} takes about {seconds:.0f} s on this server, which is shared with "
                    "everyone using it, so it waits until you ask for it.").format(
                        what=what[:1].upper() + what[1:], seconds=seconds)
    if label is None:
        label = _("Run {what} (about {seconds:.0f} s)").format(what=what, seconds=seconds)
    st.warning(message, icon=":material/hourglass:")
    st.button(label, key=f"{key}.run", on_click=_clicked, args=(key, signature),
              icon=":material/play_arrow:")


def heavy_gate(key: str, expected_s: float, signature: Hashable, *, what: str,
               ready: bool = False, message: str | None = None,
               label: str | None = None) -> bool:
    """True when the work may run now (see :func:`may_run`); otherwise draws the warning and
    the button (:func:`offer_run`) and returns False, and the page shows a cheap version.

    ``key``: the gate's name (``"warp.large"``; the button's key is ``"warp.large.run"``).
    ``expected_s``: the work's estimated seconds on this server. ``signature``: a hashable of
    every setting the work depends on, made of plain values (numbers, strings, tuples, classes
    from ``core``): an instance of a class defined in a page script never equals one from an
    earlier run, since the script defines the class anew each run. ``what``: the work,
    translated, for the texts ("the 2048×2048 warp")."""
    if may_run(key, expected_s, signature, ready=ready):
        return True
    offer_run(key, expected_s, signature, what=what, message=message, label=label)
    return False


# ------------------------------------------------------------------------------------------
# The queue
# ------------------------------------------------------------------------------------------
class JobQueue:
    """At most ``slots`` jobs at once; the rest wait in the order they arrived.

    Each job takes a ticket; a job runs when fewer than ``slots`` tickets ahead of it are
    still held (running or waiting). ``ahead(ticket)`` is what the waiting page shows."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"slots must be a positive integer, got {slots!r}")
        self.slots = slots
        self._changed = threading.Condition()
        self._next = 0
        self._held: list[int] = []  # tickets not yet finished, in arrival order

    def _ahead(self, ticket: int) -> int:
        return self._held.index(ticket)

    def ahead(self, ticket: int) -> int:
        """Jobs ahead of ``ticket`` (running or waiting); below ``slots``: it may run."""
        with self._changed:
            return self._ahead(ticket)

    @contextmanager
    def slot(self, on_wait: Callable[[int], None] | None = None,
             poll_s: float = POLL_S) -> Iterator[None]:
        """Hold a place for the block. While waiting, ``on_wait(jobs_ahead)`` is called at
        once and then every ``poll_s`` seconds (outside the queue's lock, so it may draw or
        raise: the ticket is given back however the wait or the block ends)."""
        with self._changed:
            ticket = self._next
            self._next += 1
            self._held.append(ticket)
        try:
            while True:
                with self._changed:
                    ahead = self._ahead(ticket)
                    if ahead < self.slots:
                        break
                    if on_wait is None:
                        self._changed.wait(poll_s)
                        continue
                on_wait(ahead)
                with self._changed:
                    if self._ahead(ticket) >= self.slots:
                        self._changed.wait(poll_s)
            yield
        finally:
            with self._changed:
                self._held.remove(ticket)
                self._changed.notify_all()

    @property
    def waiting(self) -> int:
        """Jobs waiting for a place now (not running)."""
        with self._changed:
            return max(0, len(self._held) - self.slots)


_queue = JobQueue(HEAVY_JOBS)


@contextmanager
def heavy_job(label: str = "") -> Iterator[None]:
    """Run the block as one of at most :data:`HEAVY_JOBS` heavy jobs in this process.

    While the job waits, an ``st.empty`` shows its place ("Waiting for the server: 2 job(s)
    ahead of yours", with ``label``, translated, naming the work), cleared when it starts.
    Gives back this script's turn first (see the module docstring)."""
    turns.release_turn()
    place = None

    def show(ahead: int) -> None:
        nonlocal place
        if place is None:
            place = st.empty()
        text = ngettext("Waiting for the server: {n} job ahead of yours.",
                        "Waiting for the server: {n} jobs ahead of yours.", ahead).format(n=ahead)
        place.info(f"{label} · {text}" if label else text, icon=":material/hourglass_top:")

    with _queue.slot(show):
        if place is not None:
            place.empty()
        yield


# ------------------------------------------------------------------------------------------
# One computation per key
# ------------------------------------------------------------------------------------------
class _Running:
    """A computation in flight: the lock its computing caller holds, then its result."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False
        self.result: object = None
        self.waiters = 0


class ComputeOnce:
    """Concurrent callers with the same key share one computation (see :func:`compute_once`)."""

    def __init__(self, ttl_s: float = ONCE_TTL_S, max_entries: int = ONCE_MAX_ENTRIES) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._running: dict[Hashable, _Running] = {}
        self._done: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()

    def _finished(self, key: Hashable) -> tuple[bool, object]:
        """(True, result) when ``key`` finished less than ttl ago; drops stale entries."""
        now = time.monotonic()
        for old in [k for k, (at, _v) in self._done.items() if now - at > self.ttl_s]:
            del self._done[old]
        if key in self._done:
            return True, self._done[key][1]
        return False, None

    def __call__(self, key: Hashable, fn: Callable[[], R],
                 on_wait: Callable[[], None] | None = None) -> R:
        waited = False
        while True:
            with self._lock:
                found, value = self._finished(key)
                if found:
                    return value  # type: ignore[return-value]
                running = self._running.get(key)
                if running is None:
                    running = self._running[key] = _Running()
                    running.lock.acquire()
                    mine = True
                else:
                    mine = False
                    running.waiters += 1
            if mine:
                break
            try:
                if not waited and on_wait is not None:
                    on_wait()
                waited = True
                with running.lock:  # released when the computing caller finished or gave up
                    if running.done:
                        return running.result  # type: ignore[return-value]
            finally:
                with self._lock:
                    running.waiters -= 1
            # the computing caller gave up (stopped, an error): try again, maybe computing it
        try:
            result = fn()
            running.result, running.done = result, True
            with self._lock:
                self._done[key] = (time.monotonic(), result)
                while len(self._done) > self.max_entries:
                    self._done.popitem(last=False)
            return result
        finally:
            with self._lock:
                self._running.pop(key, None)
            running.lock.release()

    def waiting(self, key: Hashable) -> int:
        """Callers waiting now for the computation of ``key`` (0 when none is running)."""
        with self._lock:
            running = self._running.get(key)
            return running.waiters if running is not None else 0

    def clear(self) -> None:
        """Forget finished results (tests)."""
        with self._lock:
            self._done.clear()


_once = ComputeOnce()


def compute_once(key: Hashable, fn: Callable[[], R],
                 on_wait: Callable[[], None] | None = None) -> R:
    """``fn()``, computed once for concurrent callers with the same ``key`` in this process.

    The first caller computes; a caller arriving meanwhile calls ``on_wait()`` once (to say
    so on its page) and gets the first caller's result. If the first caller's ``fn`` raises
    (its run stopped, an error), the exception is its own; a waiting caller computes instead."""
    return _once(key, fn, on_wait)
