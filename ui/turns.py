"""Page scripts take turns: one computes at a time in this process (by default), the rest wait.

Why: Streamlit runs every session's script in its own thread, and all of them share one GIL with
the event loop that sends the pages out. When a class of 50 opens a lesson link at once, 50
threads round-robin on the GIL: each page takes 50x longer, and the event loop gets so little
of the GIL that even a page's title reached each student only when every script had finished
(``benchmarks/classroom.py``: first element p95 equal to the last). With turns, a page draws its
title, then waits on a lock (which holds no GIL) until a turn is free (:data:`SLOTS`); the event
loop sends the titles at once and the pages follow one after another, so the first students are
done in a fraction of the burst instead of all at the end.

A page calls :func:`take_turn` right after its title; ``app.py`` wraps the page in
:func:`turn_released` so the turn is given back however the script ends (finished, an exception,
a rerun, a stop). Fragment reruns do not pass through ``app.py`` and take no turn (they are
short by design). Never call :func:`take_turn` inside a cached function: a thread holding a
cache's lock must never wait for a turn.
"""

from __future__ import annotations

import os
import threading
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
_turns = threading.BoundedSemaphore(SLOTS)
_held = threading.local()


def holds_turn() -> bool:
    """Whether the calling script thread holds a turn now."""
    return getattr(_held, "turn", False)


def take_turn() -> None:
    """Block until this script may compute; a no-op when this thread holds a turn already."""
    if holds_turn():
        return
    _turns.acquire()
    _held.turn = True


def release_turn() -> None:
    """Give this thread's turn back; a no-op when it holds none."""
    if holds_turn():
        _held.turn = False
        _turns.release()


@contextmanager
def turn_released() -> Iterator[None]:
    """Run the block; whatever it raised (rerun, stop, error), give back a turn it took."""
    try:
        yield
    finally:
        release_turn()
