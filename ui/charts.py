"""Show a Plotly figure the one way every page does: legible, with alt text, no covering toolbar.

Figures that depend only on their arguments are built once per process with
:func:`shared_figure` and shared by every session: building a figure (``make_subplots``, plotly's
validation, :func:`core.figure_style.legible`) cost 20-80 ms each, several times per page, for
every student of a class opening the same link.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec

import plotly.graph_objects as go
import streamlit as st

from core.figure_style import legible, mark_legible
from ui.i18n import current_language

#: Plotly's mode bar sat on top of subplot titles on a phone; Streamlit's own element toolbar
#: (full screen) stays, and drag-to-zoom / double-click-to-reset still work without the bar.
CHART_CONFIG: dict[str, Any] = {"displayModeBar": False, "displaylogo": False}

#: A shared figure lives at most this long without being asked for again (a lesson's hour).
SHARED_FIGURE_TTL_S = 3600

_SHARED = "_tp_shared"  # marks a figure built by shared_figure: legible already, never mutated

P = ParamSpec("P")


def shared_figure(max_entries: int) -> Callable[[Callable[P, go.Figure]], Callable[P, go.Figure]]:
    """Decorate a deterministic figure builder: built and made legible once per process and
    arguments, then the same figure object is returned to every session.

    The returned figure is shared: callers pass it to :func:`show_chart` and never change it
    (``st.plotly_chart`` only reads it). Arguments are the cache key, so keep them small
    (settings, numbers, tuples), not tensors. At most ``max_entries`` figures per builder are
    kept, each for at most :data:`SHARED_FIGURE_TTL_S` seconds after its last use.
    """
    if max_entries < 1:
        raise ValueError(f"max_entries must be at least 1, got {max_entries}")

    def decorate(build: Callable[P, go.Figure]) -> Callable[P, go.Figure]:
        def build_shared(language: str, *args: P.args, **kwargs: P.kwargs) -> go.Figure:
            # Marked legible: show_chart's legible() then returns it untouched, so sessions
            # reading it concurrently never see it written. ``language`` is part of the key:
            # the builder's titles and labels are in the session's language (ui.i18n).
            del language
            fig = mark_legible(legible(build(*args, **kwargs)))
            setattr(fig, _SHARED, True)
            return fig

        build_shared.__qualname__ = f"{build.__qualname__}.shared"  # the cache's own name
        build_shared.__module__ = build.__module__
        cached = st.cache_resource(
            show_spinner=False, max_entries=max_entries, ttl=SHARED_FIGURE_TTL_S
        )(build_shared)

        @functools.wraps(build)
        def shared(*args: P.args, **kwargs: P.kwargs) -> go.Figure:
            return cached(current_language(), *args, **kwargs)

        shared.clear = cached.clear  # type: ignore[attr-defined]
        return shared

    return decorate


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
