"""Streamlit caches bounded in entries, in time and in bytes.

``st.cache_data`` and ``st.cache_resource`` bound a cache by its number of entries
(``max_entries``) and by the time since an entry was last written (``ttl``), never by size: one
4096x4096 warp kept the server at 1.25 GB for as long as its entry lived. A class of 50 shares one
server process, so :func:`bounded_cache` adds a byte bound: a result larger than ``max_bytes`` is
computed and returned to the session that asked for it, but not kept in the shared cache: that
session alone keeps its latest such result (a session-scoped cache of one entry, dropped when
the session ends), and any other session computes it again. Teaching views produce results far
below the bound; only the heavy corners of a page (the largest sizes a link can ask for) go past
it.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Literal, ParamSpec, TypeVar

import numpy as np
import streamlit as st
import torch
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

#: An entry lives at most this long (a lesson's hour), then is computed again on the next call:
#: memory held for a page nobody has opened since is given back.
SHARED_TTL_S = 3600

#: Results above this size are not shared. The teaching views' results are a few MB at most
#: (a 1024x1024 RGB warp with its comparisons is ~15 MB); 32 MB keeps them shared while one
#: 4096x4096 float result (hundreds of MB) is not held for the next hour by every cache entry.
MAX_SHARED_BYTES = 32 * 2**20

#: Models are the point of their caches (loading one costs seconds): the offered architectures
#: are at most ResNet-50's ~100 MB, and an uploaded state_dict is capped by the upload limit.
MAX_SHARED_MODEL_BYTES = 256 * 2**20

#: Lists longer than this are measured from a sample of their first items (a cheap estimate).
_SAMPLE = 256

P = ParamSpec("P")
R = TypeVar("R")


class _NotKept(Exception):
    """Raised inside the session-scoped cache to keep it from storing a result that the shared
    cache holds already (or that is small enough to share)."""

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


class _Oversize(Exception):
    """Raised inside the cached function to keep Streamlit from storing ``value`` (Streamlit's
    caches store nothing when the function raises); caught by the wrapper, which returns it."""

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


def size_in_bytes(obj: object, _seen: set[int] | None = None, _depth: int = 0) -> int:
    """An estimate of the memory ``obj`` holds, in bytes, counting shared parts once.

    Exact for numpy arrays (``nbytes``), tensors (their storage), ``bytes``/``str``, modules
    (parameters and buffers) and plotly figures (their data and layout); containers, dataclasses
    and plain objects are measured through their items and attributes; anything else counts as
    ``sys.getsizeof``.

    >>> size_in_bytes(np.zeros((4, 4), np.float32))
    64
    """
    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 12 or obj is None or isinstance(obj, (bool, int, float)):
        return 0 if id(obj) in seen or obj is None else sys.getsizeof(obj)
    seen.add(id(obj))
    deeper = functools.partial(_sum_sizes, seen=seen, depth=_depth + 1)
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, torch.Tensor):
        if obj.is_meta or obj.layout != torch.strided:
            return int(obj.element_size() * obj.nelement())
        return int(max(obj.untyped_storage().nbytes(), obj.element_size() * obj.nelement()))
    if isinstance(obj, (bytes, bytearray, str)):
        return len(obj)
    if isinstance(obj, memoryview):
        return obj.nbytes
    if isinstance(obj, torch.nn.Module):
        return deeper([*obj.parameters(), *obj.buffers()])
    if _is_plotly_figure(obj):
        return deeper([obj.to_dict()])
    if isinstance(obj, dict):
        return deeper([*obj.keys(), *obj.values()])
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)
        if len(items) > _SAMPLE:
            return deeper(items[:_SAMPLE]) * len(items) // _SAMPLE
        return deeper(items)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return deeper([getattr(obj, f.name, None) for f in dataclasses.fields(obj)])
    size = sys.getsizeof(obj)
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        size += deeper(list(attributes.values()))
    return size


def _sum_sizes(items: list, *, seen: set[int], depth: int) -> int:
    return sum(size_in_bytes(item, seen, depth) for item in items)


def _is_plotly_figure(obj: object) -> bool:
    # No plotly import here: a figure is whatever has plotly's BaseFigure among its classes.
    return any(cls.__name__ == "BaseFigure" for cls in type(obj).__mro__)


def bounded_cache(
    *,
    max_entries: int,
    ttl: float | str | timedelta,
    max_bytes: int | None = MAX_SHARED_BYTES,
    kind: Literal["data", "resource"] = "data",
    show_spinner: bool = False,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate ``func`` like ``st.cache_data`` (``kind="data"``) or ``st.cache_resource``
    (``kind="resource"``), with at most ``max_entries`` entries each kept at most ``ttl``
    (seconds, or a string such as ``"1h"``), and results whose :func:`size_in_bytes` is above
    ``max_bytes`` computed and returned but not shared (the asking session keeps its latest one).

    ``max_bytes=None`` keeps every result (for a live object whose identity is the point, such
    as a sampler every session reads; say why where it is used). Arguments are hashed as
    Streamlit does (a name starting with ``_`` is left out of the key). The decorated function
    has Streamlit's ``clear()``.

    Raises:
        ValueError: if ``max_entries`` is below 1, ``max_bytes`` is negative or ``kind`` is not
            ``"data"`` or ``"resource"``.
    """
    if max_entries < 1:
        raise ValueError(f"max_entries must be at least 1, got {max_entries!r}")
    if max_bytes is not None and max_bytes < 0:
        raise ValueError(f"max_bytes must be None or at least 0, got {max_bytes!r}")
    if kind not in ("data", "resource"):
        raise ValueError(f"kind must be 'data' or 'resource', got {kind!r}")
    streamlit_cache = st.cache_data if kind == "data" else st.cache_resource

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)  # Streamlit keys the cache on func's name, source and parameters
        def measured(*args: P.args, **kwargs: P.kwargs) -> R:
            value = func(*args, **kwargs)
            if max_bytes is not None and size_in_bytes(value) > max_bytes:
                raise _Oversize(value)
            return value

        cached = streamlit_cache(show_spinner=show_spinner, max_entries=max_entries, ttl=ttl)(
            measured
        )

        def shared(*args: P.args, **kwargs: P.kwargs) -> tuple[R, bool]:
            """The result from the shared cache, and whether it was too large to be kept there."""
            try:
                return cached(*args, **kwargs), False
            except _Oversize as oversize:
                return oversize.value, True  # type: ignore[return-value]

        @functools.wraps(func)
        def kept_for_session(*args: P.args, _compute: Callable, **kwargs: P.kwargs) -> R:
            value, oversize = _compute()
            if not oversize:
                raise _NotKept(value)  # shared already: nothing is kept per session
            return value

        # A result too large to share is still the one this session asked for (often after a
        # click on a heavy view): the session keeps its latest one, so its next rerun does not
        # compute it again; Streamlit drops it when the session ends.
        kept_for_session.__qualname__ += ".kept_for_session"
        in_session = st.cache_resource(
            show_spinner=False, max_entries=1, ttl=ttl, scope="session"
        )(kept_for_session)

        @functools.wraps(func)
        def bounded(*args: P.args, **kwargs: P.kwargs) -> R:
            if max_bytes is None or get_script_run_ctx() is None:
                return shared(*args, **kwargs)[0]
            try:
                return in_session(*args, _compute=lambda: shared(*args, **kwargs), **kwargs)
            except _NotKept as small:
                return small.value  # type: ignore[return-value]

        # clear() empties the shared cache; the sessions' own copies go with their sessions (or
        # with st.cache_resource.clear()).
        bounded.clear = cached.clear  # type: ignore[attr-defined]
        return bounded

    return decorate


class NotCached(Exception):
    """Raised by a cached function asked only whether its cache holds a result (its ``_probe``
    argument, left out of the key) when it does not: Streamlit stores nothing when the function
    raises, so asking never computes."""


def held_in_cache(probe: Callable[[], R]) -> R | None:
    """``probe()``, a cached function called so that it raises :class:`NotCached` on a miss:
    the result when the cache holds it now, else None. Asking the cache itself, not a list of
    the keys made, which would outlive the cache's evicted and expired entries."""
    try:
        return probe()
    except NotCached:
        return None
