"""Keep Python's garbage collector cheap and regular in a long-running server.

Why: ``.streamlit/config.toml`` turns off Streamlit's ``gc.collect(2)`` after every script run
(it walked the millions of objects torch, plotly and OpenCV create at import, 60-300 ms under
the GIL per run, most of a class's CPU). Python's own collector then runs a full collection only
when the objects that survived since the last one exceed a quarter of all long-lived objects,
and with millions of module objects counted that took so long that a 1,000-rerun soak of the
warp page grew RSS by 373 MB of uncollected cycles. ``gc.freeze()`` moves every object alive now
to a permanent generation the collector never visits: module objects are not garbage, so
freezing them after imports makes full collections both cheap and frequent again.

:func:`after_script_run` runs at the end of every script run. It freezes only when new modules
were imported since the last freeze (a page's first visit), after one full collection so no
garbage is frozen with them: a handful of times in a server's life. And every
:data:`COLLECT_EVERY` runs, but at most once every :data:`COLLECT_INTERVAL_S` seconds, it makes
one full collection, which after the freeze walks only the objects made since: about 1 ms with
one session, against 60-300 ms unfrozen, and the warp soak's RSS stayed flat instead of a
170 MB sawtooth between the collector's own full collections. With a class on the server the
objects made since include every session's widgets and the shared caches, and one collection
took ~20-40 ms: every 10 runs that was ~10% of a class's CPU (py-spy during
``benchmarks/classroom.py``), so the interval spaces them out when runs come fast.

Frozen objects are never collected as cycles: a cache entry alive at a freeze and evicted later
is freed by reference counting only. Freezes are rare, so this stays bounded.
"""

from __future__ import annotations

import gc
import sys
import threading
import time

#: Script runs between two full collections ...
COLLECT_EVERY = 10
#: ... and seconds at least (a class of 50 opening a page at once: one collection, not five).
COLLECT_INTERVAL_S = 2.0

_lock = threading.Lock()
_frozen_at_modules = 0
_runs = 0
_collected_at = 0.0  # time.monotonic() of the last full collection


def freeze_after_imports() -> bool:
    """Collect, then freeze every live object, when ``sys.modules`` grew since the last freeze.

    Returns whether it froze. Cheap when nothing was imported (a length comparison).
    """
    global _frozen_at_modules
    if len(sys.modules) == _frozen_at_modules:
        return False
    with _lock:
        modules = len(sys.modules)
        if modules == _frozen_at_modules:
            return False
        gc.collect()
        gc.freeze()
        _frozen_at_modules = modules
        return True


def after_script_run() -> None:
    """Freeze after new imports; otherwise one full collection once :data:`COLLECT_EVERY` runs
    and :data:`COLLECT_INTERVAL_S` seconds have passed since the last (the run counter is
    approximate under threads; it only spaces collections out)."""
    global _runs, _collected_at
    if freeze_after_imports():
        return
    _runs += 1
    now = time.monotonic()
    if _runs >= COLLECT_EVERY and now - _collected_at >= COLLECT_INTERVAL_S:
        _runs, _collected_at = 0, now
        gc.collect()
