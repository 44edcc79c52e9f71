"""Page scripts take turns: one computes at a time in this process (by default), the rest wait.

Why: Streamlit runs every session's script in its own thread, and all of them share one GIL with
the event loop that sends the pages out. When a class of 50 opens a lesson link at once, 50
threads round-robin on the GIL: each page takes 50x longer, and the event loop gets so little
of the GIL that even a page's title reached each student only when every script had finished
(``benchmarks/classroom.py``: first element p95 equal to the last). With turns, a page draws its
title, then waits (holding no GIL) until a turn is free (:data:`SLOTS`); the event loop sends
the titles at once and the pages follow one after another, so the first students are done in a
fraction of the burst instead of all at the end. A turn held past :data:`HOLD_LIMIT_S`, or by a
thread that ended without giving it back, stops counting: nobody waits forever.

A page calls :func:`take_turn` right after its title; ``app.py`` wraps the page in
:func:`turn_released` so the turn is given back however the script ends (finished, an exception,
a rerun, a stop). Fragment reruns do not pass through ``app.py`` and take no turn (they are
short by design). Never call :func:`take_turn` inside a cached function: a thread holding a
cache's lock must never wait for a turn.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: Scripts computing at once. One: a page's work is mostly Python (figures, protobufs) that the
#: GIL serializes anyway, and a second script in flight only takes the GIL from the event loop.
#: Measured with 50 sessions at once (benchmarks/classroom.py, 2 cores): with one turn the first
#: element's p95 was 1.1-2.0 s against 3.4-5.7 s with two, p50 0.7-1 s lower, the last page
#: about as late. Override with ``TP_SCRIPT_TURNS`` (a positive integer).
DEFAULT_SLOTS = 1


def _slots_from_env(raw: str | None) -> int:
    """``TP_SCRIPT_TURNS`` as a positive integer; ``DEFAULT_SLOTS`` when unset or invalid."""
    try:
        value = int(raw) if raw is not None else DEFAULT_SLOTS
    except ValueError:
        return DEFAULT_SLOTS
    return value if value > 0 else DEFAULT_SLOTS


SLOTS = _slots_from_env(os.environ.get("TP_SCRIPT_TURNS"))

#: A turn held longer than this stops counting: heavy work one student asked for (SmoothGrad,
#: a 720p flow comparison, a page's first imports) must not make the whole class wait behind it.
#: A normal page view holds a turn for 60-110 ms of CPU.
HOLD_LIMIT_S = 2.0
#: At most this long between two looks of a waiting script for holders whose thread ended (a
#: release wakes one waiter at once; this only bounds how long a lost turn goes unnoticed).
#: Not shorter: 50 waiters polling every 0.1 s took enough GIL to delay the first elements.
_DEAD_CHECK_S = 0.5


class _Turns:
    """Turns held by script threads: at most ``slots`` count at once. A holder whose thread has
    ended (a script run that never reached app.py's release, e.g. a test calling a page function
    directly) or that has held its turn longer than :data:`HOLD_LIMIT_S` no longer counts, so a
    lost release or a long computation can delay others by at most the hold limit, never
    forever."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self._changed = threading.Condition()
        self._holders: dict[int, tuple[threading.Thread, float]] = {}

    def _counting_since(self, now: float) -> list[float]:
        """When each holder that still counts took its turn; forgets holders whose thread ended."""
        for ident, (thread, _) in list(self._holders.items()):
            if not thread.is_alive():
                del self._holders[ident]
        return [since for _, since in self._holders.values() if now - since < HOLD_LIMIT_S]

    def _wait_s(self, now: float) -> float:
        """0 when a turn is free; else how long to wait before looking again: until the oldest
        counting holder passes the hold limit, at most :data:`_DEAD_CHECK_S`."""
        counting = self._counting_since(now)
        if len(counting) < self.slots:
            return 0.0
        return min(_DEAD_CHECK_S, max(0.01, HOLD_LIMIT_S - (now - min(counting))))

    def holds(self) -> bool:
        return threading.get_ident() in self._holders

    def take(self) -> None:
        me = threading.current_thread()
        with self._changed:
            if me.ident in self._holders:
                return
            while (wait := self._wait_s(time.monotonic())) > 0:
                self._changed.wait(wait)
            self._holders[me.ident] = (me, time.monotonic())

    def release(self) -> None:
        with self._changed:
            if self._holders.pop(threading.get_ident(), None) is not None:
                self._changed.notify()


_turns = _Turns(SLOTS)


def holds_turn() -> bool:
    """Whether the calling script thread holds a turn now."""
    return _turns.holds()


def take_turn() -> None:
    """Block until this script may compute; a no-op when this thread holds a turn already."""
    _turns.take()


def release_turn() -> None:
    """Give this thread's turn back; a no-op when it holds none."""
    _turns.release()


@contextmanager
def turn_released() -> Iterator[None]:
    """Run the block; whatever it raised (rerun, stop, error), give back a turn it took."""
    try:
        yield
    finally:
        release_turn()
