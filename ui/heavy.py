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

:func:`heavy_result` (the three around a shared cache). Work that may be heavy, its result
shared by the whole server: this session's last result for the same settings, else what the
shared cache holds now (asked without computing, :class:`SharedWorkMarks`), else, after the
click when above the budget, computed once for the server, as a heavy job above the budget;
it is then this session's last result. ``None`` while it waits for its click, and the page
shows its cheap version.

The budget (:func:`budget_s`, 2 s) and :data:`HEAVY_JOBS` come from ``TP_HEAVY_BUDGET_S``
(seconds, > 0) and ``TP_HEAVY_JOBS`` (a positive integer) when set; the budget is read on every
call so a test may change the environment.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Generic, TypeVar

import streamlit as st

from ui import turns
from ui.caching import SHARED_TTL_S, NotCached, bounded_cache, held_in_cache
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


# ------------------------------------------------------------------------------------------
# The three around a shared cache
# ------------------------------------------------------------------------------------------
# Results of heavy work kept for the whole server, every page's: 48 holds the saliency page's
# recent maps (32) and sanity checks (16) at once.
@bounded_cache(max_entries=48, ttl=SHARED_TTL_S)
def _shared_work(key: tuple, _work: Callable[[], R] | None, _ran: list,
                 _probe: bool = False) -> tuple[R, float, float]:  # fmt: skip
    # One result per key (a gate and the signature of its work) for the whole server: Streamlit
    # computes a key once while other sessions asking for it wait, and replays what the work
    # drew (its progress bar) on a hit. ``_ran`` tells the caller the work ran here.
    if _probe or _work is None:
        raise NotCached
    _ran.append(True)
    return _timed(_work)


def _timed(work: Callable[[], R]) -> tuple[R, float, float]:
    """``work()``, the seconds it took, and when it was done (``time.time()``)."""
    t0 = time.perf_counter()
    value = work()
    return value, time.perf_counter() - t0, time.time()


class SharedWorkMarks:
    """The keys of shared work being computed now, to ask the shared cache without waiting.

    Whether a result is made is asked of the cache itself (:meth:`held`): a list of the keys
    made would outlive the cache's entries (evicted, expired), and a key it still named would
    open a heavy view with no click and outside the queue, computing it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.computing: dict[Hashable, int] = {}  # key -> callers computing it now

    def held(self, key: Hashable, probe: Callable[[], R]) -> R | None:
        """``probe()`` (the shared cache asked with ``_probe=True``) when the cache holds the
        result now, else None; never computes. Skipped while ``key`` is being computed
        (:meth:`marked`): on a miss Streamlit takes the key's compute lock, and waiting there
        for someone else's long computation would hold this script's turn (ui.turns), stopping
        every other page, with nothing on screen."""
        with self._lock:
            if self.computing.get(key):
                return None
            return held_in_cache(probe)

    @contextmanager
    def marked(self, key: Hashable) -> Iterator[None]:
        """Mark ``key`` as being computed for the block (see :meth:`held`)."""
        with self._lock:
            self.computing[key] = self.computing.get(key, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                left = self.computing.pop(key) - 1
                if left:
                    self.computing[key] = left


_marks = SharedWorkMarks()


@dataclass(frozen=True)
class HeavyResult(Generic[R]):
    """What :func:`heavy_result` found: ``value``, made in ``seconds`` at ``made_at``
    (``time.time()``), or ``error``, the message of a failure it keeps (then ``value`` is
    None). ``kept``: this session's last result for the same signature (nothing was asked of
    the shared cache, nothing ran); ``ran``: the work ran in this script run (else it came
    from the shared cache, or from another session's run)."""

    value: R | None
    seconds: float = 0.0
    made_at: float = 0.0
    kept: bool = False
    ran: bool = False
    error: str | None = None

    @property
    def age_s(self) -> float:
        """Seconds since the result was made."""
        return time.time() - self.made_at


def heavy_result(
    key: str, signature: Hashable, expected_s: float, work: Callable[[], R], *, what: str | None,
    label: str, shared: bool = True, note: str | None = None,
    errors: tuple[type[Exception], ...] = (), slot=None,
) -> HeavyResult[R] | None:  # fmt: skip
    """The result of ``work()``, the work ``signature`` names; None while it waits for its click.

    In this order: this session's last result of gate ``key`` when it was for ``signature``
    (``kept``); else, when ``shared``, the shared cache's result if it holds it now (asked
    without computing, :class:`SharedWorkMarks`); else, after :func:`heavy_gate`'s click when
    ``expected_s`` is above the budget (``what``: the work, for its texts; None: this work
    never waits for a click), ``work()``: once for the whole server (kept in a shared cache
    under ``(key, signature)``, so ``signature`` must hold every setting the result depends on,
    as plain values), or, not ``shared`` (a key that is not safe to share, such as an uploaded
    file's name), for this session alone; as one of the server's heavy jobs
    (:func:`heavy_job`, named by ``label``) when ``expected_s`` is above the budget, at once
    otherwise, under the caption ``note``. What was found or computed becomes this session's
    last result of ``key``.

    ``slot`` (an ``st.empty``; a new one here when None) holds what the probe and the work draw:
    a cache hit replays the progress bar its computation drew, a heavy job shows its place in
    the queue. It is emptied when this returns or raises. An exception of a type in ``errors``
    becomes the result's ``error`` (its message: a ``core.text.T`` or a string) and is kept
    like a result, so a rerun does not run failing work again; any other is the caller's."""
    last = st.session_state.get(_last_key(key))
    if last is not None and last[0] == signature:
        return dataclasses.replace(last[1], kept=True, ran=False)
    slot = st.empty() if slot is None else slot
    cache_key = (key, signature)
    try:
        held = None
        if shared:
            with slot.container():
                held = _marks.held(cache_key, lambda: _shared_work(cache_key, None, [], True))
        if what is not None and not heavy_gate(key, expected_s, signature, what=what,
                                               ready=held is not None):  # fmt: skip
            return None
        if held is not None:
            found = HeavyResult(*held)
        else:
            job = heavy_job(label) if expected_s > budget_s() else nullcontext()
            with slot.container(), job:
                if note is not None:
                    st.caption(note)
                found = _run_work(cache_key, work, shared, errors)
    finally:
        slot.empty()
    st.session_state[_last_key(key)] = (signature, found)
    return found


def _last_key(key: str) -> str:
    return f"_heavy.{key}.last"  # session state, not a widget: never in the URL


def _run_work(cache_key: tuple, work: Callable[[], R], shared: bool,
              errors: tuple[type[Exception], ...]) -> HeavyResult[R]:  # fmt: skip
    ran: list = []
    try:
        if not shared:
            return HeavyResult(*_timed(work), ran=True)
        with _marks.marked(cache_key):
            made = _shared_work(cache_key, work, ran)
        return HeavyResult(*made, ran=bool(ran))
    except errors as error:
        message = error.args[0] if len(error.args) == 1 else str(error)  # a core.text.T or str
        return HeavyResult(None, ran=True, error=message)


def shared_if(shared: bool, cached: Callable[..., R]) -> Callable[..., R]:
    """``cached`` (a function cached for the whole server) when ``shared``, else the function
    it caches (``functools.wraps`` keeps it as ``__wrapped__``), for a result that must stay in
    its session: its key would not be safe to share (an uploaded file's name)."""
    return cached if shared else cached.__wrapped__  # type: ignore[attr-defined]
