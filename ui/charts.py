"""Show a Plotly figure the one way every page does: legible, with alt text, no covering toolbar.

Figures that depend only on their arguments are built once per process with
:func:`shared_figure` and shared by every session: building a figure (``make_subplots``, plotly's
validation, :func:`core.figure_style.legible`) cost 20-80 ms each, several times per page, for
every student of a class opening the same link.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, ParamSpec

import plotly.graph_objects as go
import streamlit as st

from core.figure_style import legible, mark_legible
from ui.caching import MAX_SHARED_BYTES, bounded_cache
from ui.i18n import current_language

#: Plotly's mode bar sat on top of subplot titles on a phone; Streamlit's own element toolbar
#: (full screen) stays, and drag-to-zoom / double-click-to-reset still work without the bar.
CHART_CONFIG: dict[str, Any] = {"displayModeBar": False, "displaylogo": False}

#: A shared figure lives at most this long without being asked for again (a lesson's hour).
SHARED_FIGURE_TTL_S = 3600

#: A figure larger than this (its data and layout) is not kept: see ui.caching.
SHARED_FIGURE_MAX_BYTES = MAX_SHARED_BYTES

_SHARED = "_tp_shared"  # marks a figure built by shared_figure: legible already, never mutated

P = ParamSpec("P")


def shared_figure(max_entries: int) -> Callable[[Callable[P, go.Figure]], Callable[P, go.Figure]]:
    """Decorate a deterministic figure builder: built and made legible once per process and
    arguments, then the same figure object is returned to every session.

    The returned figure is shared: callers pass it to :func:`show_chart` and never change it
    (``st.plotly_chart`` only reads it). Arguments are the cache key, so keep them small
    (settings, numbers, tuples), not tensors; an argument whose name starts with ``_`` is left
    out of the key, as Streamlit's caches do (this session's copy of data the key names, such
    as an image beside its digest). At most ``max_entries`` figures per builder are kept, each
    for at most :data:`SHARED_FIGURE_TTL_S` seconds, and none above
    :data:`SHARED_FIGURE_MAX_BYTES` (built again for each caller).
    """
    if max_entries < 1:
        raise ValueError(f"max_entries must be at least 1, got {max_entries}")

    def decorate(build: Callable[P, go.Figure]) -> Callable[P, go.Figure]:
        cached, names = _cached_builder(build, max_entries)

        @functools.wraps(build)
        def shared(*args: P.args, **kwargs: P.kwargs) -> go.Figure:
            key = _figure_key(names, args, kwargs)
            return cached(current_language(), key, build, args, kwargs)

        shared.clear = cached.clear  # type: ignore[attr-defined]
        return shared

    return decorate


#: One cache wrapper per builder's code object. A page script runs again on every rerun and
#: defines its builders anew, but from the same compiled code (Streamlit keeps it): making the
#: ``st.cache_resource`` wrapper again each time read the builder's source (``inspect``) and
#: cost ~3 ms per page run, for every student of a class.
_BUILDERS: dict[types.CodeType, tuple[Callable[..., go.Figure], tuple[str, ...]]] = {}


def _cached_builder(
    build: Callable[..., go.Figure], max_entries: int
) -> tuple[Callable[..., go.Figure], tuple[str, ...]]:
    """The cached wrapper of ``build`` and its positional parameter names, made once."""
    code = build.__code__
    if code not in _BUILDERS:

        def build_shared(language: str, key: tuple, _build, _args: tuple, _kwargs: dict):
            # Only ``language`` and ``key`` are hashed; ``_build`` is this run's builder (its
            # module globals are this run's), the underscored values travel unhashed.
            # Marked legible: show_chart's legible() then returns it untouched, so sessions
            # reading it concurrently never see it written. ``language`` is part of the key:
            # the builder's titles and labels are in the session's language (ui.i18n).
            del language, key
            fig = mark_legible(legible(_build(*_args, **_kwargs)))
            setattr(fig, _SHARED, True)
            _keep_dict(fig)
            return fig

        # The cache's own name; the code's hash keeps an edited builder from reading figures
        # its old version built (a page edited while the server runs).
        build_shared.__qualname__ = f"{build.__qualname__}.shared.{hash(code) & 0xFFFFFFFF:08x}"
        build_shared.__module__ = build.__module__
        # A figure above SHARED_FIGURE_MAX_BYTES is built for the caller but not kept.
        cached = bounded_cache(
            kind="resource",
            max_entries=max_entries,
            ttl=SHARED_FIGURE_TTL_S,
            max_bytes=SHARED_FIGURE_MAX_BYTES,
        )(build_shared)
        names = code.co_varnames[: code.co_argcount]
        _BUILDERS[code] = (cached, names)
    return _BUILDERS[code]


def _keep_dict(fig: go.Figure) -> None:
    """Make ``fig.to_dict()`` return one dict made now. ``st.plotly_chart`` calls it for every
    session and plotly deep-copies the whole figure each time (0.5-1 ms a figure); a shared
    figure never changes, so its dict is made once. Callers only read it (Streamlit turns it
    into JSON)."""
    spec = fig.to_dict()
    object.__setattr__(fig, "to_dict", lambda: spec)  # plotly's __setattr__ checks properties


def _figure_key(names: tuple[str, ...], args: tuple, kwargs: dict[str, Any]) -> tuple:
    """The hashed part of a builder's arguments: every one whose name has no leading ``_``."""
    pairs = zip(names, args, strict=False)  # fewer arguments than names: defaults apply
    positional = tuple(value for name, value in pairs if not name.startswith("_"))
    positional += args[len(names):]  # a builder's *args have no names: all of them are hashed
    named = tuple(sorted((k, v) for k, v in kwargs.items() if not k.startswith("_")))
    return positional + named


def is_shared(fig: go.Figure) -> bool:
    """Whether ``fig`` came from a :func:`shared_figure` builder (shared, read-only)."""
    return getattr(fig, _SHARED, False)


def show_chart(fig: go.Figure, *, alt: str, **kwargs: Any):
    """``st.plotly_chart`` with :func:`core.figure_style.legible` applied and ``alt`` text set.

    ``alt`` says what the chart shows for someone who cannot see it (axe-core's image-alt rule).
    Other keyword arguments (``key``, ``on_select``, ``height`` ...) go to ``st.plotly_chart``.
    A shared figure is marked legible already, so ``legible`` leaves it untouched (other
    sessions read it).
    """
    if not alt.strip():
        raise ValueError("a chart needs alt text that says what it shows")
    return st.plotly_chart(legible(fig), alt=alt, config=CHART_CONFIG, **kwargs)
