"""A store of results shared by every session of one server: each key computed once.

The Flow page keeps its fills here (one per case, method, window and device): a class opening
the same lesson asks for the same fills, and a fill costs up to seconds of CPU. The page holds
the one store in ``st.cache_resource``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable


class SharedResults:
    """Results shared by every session of this server: at most ``max_entries``, each kept
    ``ttl_s`` seconds. A key being computed is computed once; other sessions asking for it
    meanwhile wait and get the same result. (Not ``st.cache_data``: it replays the progress
    bar that a long fill draws, into a block that no longer exists.) Results are shared
    objects: read them, never write to them.

    >>> store = SharedResults(max_entries=2, ttl_s=60)
    >>> store.get_or_compute(("a",), lambda: 1)[0], store.ready(("a",)), store.ready(("b",))
    (1, True, False)
    """

    def __init__(self, max_entries: int, ttl_s: float) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        if not ttl_s > 0:
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s}")
        self.max_entries, self.ttl_s = max_entries, ttl_s
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple, tuple[object, float]] = OrderedDict()
        self._key_locks: dict[tuple, threading.Lock] = {}

    def ready(self, key: tuple) -> bool:
        """Whether ``key`` is computed and fresh (a get would not compute it)."""
        with self._lock:
            hit = self._items.get(key)
            return hit is not None and time.time() - hit[1] < self.ttl_s

    def get_or_compute(self, key: tuple, compute: Callable[[], object]) -> tuple[object, float]:
        """``(value, time it was computed)``; compute only on a miss or an expired entry."""
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None and time.time() - hit[1] < self.ttl_s:
                    self._items.move_to_end(key)
                    return hit
            item = (compute(), time.time())
            with self._lock:
                self._items[key] = item
                self._items.move_to_end(key)
                while len(self._items) > self.max_entries:
                    old, _item = self._items.popitem(last=False)
                    self._key_locks.pop(old, None)
            return item
