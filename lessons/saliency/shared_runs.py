"""Process-wide notes about the saliency page's shared caches: what is being computed now, and
how long one image through each model took.

Pure module (no Streamlit). The page keeps one :class:`SharedRuns` for the whole server (in
``st.cache_resource``) beside its shared caches of maps and sanity checks. Whether a map is made
is asked of its cache, never kept here (:func:`held`): a list of made keys would outlive the
cache's entries (evicted after 32, gone after an hour), and a key it still named would open a
heavy view with no click and outside the queue, computing it again.

>>> runs = SharedRuns()
>>> with computing(runs, ("map", 1)):
...     held(runs, ("map", 1), lambda: "cached") is None
True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

R = TypeVar("R")


class NotInSharedCache(Exception):
    """Raised by a shared cached function called with ``_probe=True`` when its cache does not
    hold the result: Streamlit stores nothing when the function raises, so asking never
    computes nor fills the cache."""


@dataclass
class SharedRuns:
    """The keys being computed now (key -> callers computing it) and the last measured time of
    one image through the model, forward + backward, in ms, by ``(model key, one pass)``: one
    pass is the vanilla gradient, the other methods send images in batches."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    computing: dict[tuple, int] = field(default_factory=dict)
    per_image_ms: dict[tuple[str, bool], float] = field(default_factory=dict)


def held(runs: SharedRuns, key: tuple, probe: Callable[[], R]) -> R | None:
    """``probe()`` (a shared cached function called with ``_probe=True``) when its cache holds
    the result now, else None; never computes. Asked under ``runs.lock`` and skipped while
    ``key`` is being computed (:func:`computing`): on a miss Streamlit takes the key's compute
    lock, and waiting there for someone else's long computation would hold this script's turn
    (ui.turns), stopping every other page, with nothing on screen."""
    with runs.lock:
        if runs.computing.get(key):
            return None
        try:
            return probe()
        except NotInSharedCache:
            return None


@contextlib.contextmanager
def computing(runs: SharedRuns, key: tuple) -> Iterator[None]:
    """Mark ``key`` as being computed for the block (see :func:`held`)."""
    with runs.lock:
        runs.computing[key] = runs.computing.get(key, 0) + 1
    try:
        yield
    finally:
        with runs.lock:
            left = runs.computing.pop(key) - 1
            if left:
                runs.computing[key] = left


#: Used to announce a run's time before any gradient pass was measured (forward + backward, CPU):
#: one image alone (vanilla), and per image in batches (SmoothGrad n=25 in batches of 8 took
#: 0.98 s here, ~40 ms an image; benchmarks/saliency.py). A single pass's time says little about
#: a batched one, so each kind falls back to its own figure.
FALLBACK_PER_IMAGE_MS = 160.0
FALLBACK_BATCHED_PER_IMAGE_MS = 40.0


def announced_per_image_ms(runs: SharedRuns, model_key: str, method: str) -> float:
    """The per-image time (ms) to announce a ``method`` run with: the last one measured on this
    model for a run of its kind (one pass: vanilla; batched: the others), else the fallback of
    that kind. Never the warm-up's time: it includes one-time initialisation (seconds on a cold
    CPU)."""
    one_pass = method == "vanilla"
    with runs.lock:
        measured = runs.per_image_ms.get((model_key, one_pass))
    return measured or (FALLBACK_PER_IMAGE_MS if one_pass else FALLBACK_BATCHED_PER_IMAGE_MS)


def one_pass_ms(runs: SharedRuns, model_key: str, otherwise: float) -> float:
    """The last measured time (ms) of one vanilla pass on this model, else ``otherwise``."""
    with runs.lock:
        return runs.per_image_ms.get((model_key, True)) or otherwise


def record_per_image_ms(runs: SharedRuns, model_key: str, method: str, ms: float) -> None:
    """Keep a run's measured time per image (ms) for the next announcements of its kind."""
    with runs.lock:
        runs.per_image_ms[(model_key, method == "vanilla")] = ms
