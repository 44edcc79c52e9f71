"""One sampler per server process for the live memory chart.

If every viewer of the memory page on a real GPU read the device's counters (torch, NVML)
itself at each refresh, 50 students at 1 s would make 50 device reads a second. A
:class:`LiveSampler` reads them once per tick in one background thread and keeps a bounded
history that every session's chart draws from. The thread runs only while someone reads: when
no session has asked for samples for ``idle_stop_s`` it ends, so a class that has left costs
nothing, and the next reader starts it again. Pure Python (``threading``), no Streamlit.

>>> from lessons.memory.backends import SimulatedGpu
>>> gpu = SimulatedGpu(8)
>>> sampler = LiveSampler(lambda: [gpu.state()])
>>> [p.device for p in sampler.points(60.0)] == [gpu.state().label]
True
>>> sampler.close()
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from lessons.memory.backends import MemoryState
from lessons.memory.figures import LivePoint, live_point

#: The shortest refresh on the memory page: one fragment rerun costs ~20 ms of server CPU, so
#: 50 viewers at one refresh a second stay within one core.
MIN_INTERVAL_S = 1.0
#: History kept, in seconds (the page's longest window is 600 s).
KEEP_S = 600.0
#: Most points kept whatever the clock does (a bound on memory, not a display choice).
MAX_POINTS = 8 * 1200


class LiveSampler:
    """Read ``read()`` (one :class:`MemoryState` per device) every ``interval_s`` seconds while
    anyone calls :meth:`points`; share the history with every caller.

    Args:
        read: returns the current state of each device; it may raise (a GPU reset, NVML gone):
            the error is kept in :attr:`error` and the next tick tries again.
        interval_s: seconds between reads, at least ``floor_s``.
        keep_s: seconds of history kept.
        idle_stop_s: the thread ends after this long without a reader.
        floor_s: the smallest ``interval_s`` accepted (tests use a shorter one).
        clock: wall-clock seconds, stamped on the points (the chart's time axis).
    """

    def __init__(
        self,
        read: Callable[[], Sequence[MemoryState]],
        *,
        interval_s: float = MIN_INTERVAL_S,
        keep_s: float = KEEP_S,
        idle_stop_s: float = 10.0,
        floor_s: float = MIN_INTERVAL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not interval_s >= floor_s:
            raise ValueError(
                f"interval_s must be at least {floor_s:g} s (50 viewers within one core), "
                f"got {interval_s!r}"
            )
        if not keep_s > 0 or not idle_stop_s > 0:
            raise ValueError(
                f"keep_s and idle_stop_s must be positive, got {keep_s!r}, {idle_stop_s!r}"
            )
        self.interval_s, self.keep_s, self.idle_stop_s = interval_s, keep_s, idle_stop_s
        self._read, self._clock = read, clock
        self._lock = threading.Lock()
        self._points: deque[LivePoint] = deque(maxlen=MAX_POINTS)
        self._latest: tuple[MemoryState, ...] = ()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._last_reader = 0.0
        #: Device reads made so far (one per tick, however many sessions watch).
        self.reads = 0
        #: The last read's error as text, or None after a good read.
        self.error: str | None = None

    @property
    def running(self) -> bool:
        """Whether the sampling thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def points(self, window_s: float) -> list[LivePoint]:
        """The points of the last ``window_s`` seconds, oldest first. Marks a reader, and starts
        the sampler (with one read in the caller's thread, so there is a point at once) when it
        is not running."""
        with self._lock:
            self._last_reader = time.monotonic()
            start = not self.running and not self._closed.is_set()
        if start:
            self._start()
        with self._lock:
            cutoff = self._clock() - window_s
            return [p for p in self._points if p.t >= cutoff]

    def latest(self) -> tuple[MemoryState, ...]:
        """The states of the last good read (empty before the first)."""
        with self._lock:
            return self._latest

    def close(self) -> None:
        """Stop the thread for good (process shutdown, tests)."""
        self._closed.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5)

    def _start(self) -> None:
        self._sample_once()
        with self._lock:
            if self.running:  # another reader started it meanwhile
                return
            self._thread = threading.Thread(target=self._run, name="live-sampler", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(self.interval_s):
            with self._lock:
                if time.monotonic() - self._last_reader > self.idle_stop_s:
                    self._thread = None  # nobody watches: end, the next reader restarts it
                    return
            self._sample_once()

    def _sample_once(self) -> None:
        try:
            states = tuple(self._read())
        except Exception as error:  # a device read must never kill the sampler
            self.error = f"{type(error).__name__}: {error}"
            return
        now = self._clock()
        with self._lock:
            self.reads += 1
            self.error = None
            self._latest = states
            self._points.extend(live_point(now, s) for s in states)
            while self._points and self._points[0].t < now - self.keep_s:
                self._points.popleft()
