"""Show a Plotly figure the one way every page does: legible, with alt text, no covering toolbar."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st

from core.figure_style import legible

#: Plotly's mode bar sat on top of subplot titles on a phone; Streamlit's own element toolbar
#: (full screen) stays, and drag-to-zoom / double-click-to-reset still work without the bar.
CHART_CONFIG: dict[str, Any] = {"displayModeBar": False, "displaylogo": False}


def show_chart(fig: go.Figure, *, alt: str, **kwargs: Any):
    """``st.plotly_chart`` with :func:`core.figure_style.legible` applied and ``alt`` text set.

    ``alt`` says what the chart shows for someone who cannot see it (axe-core's image-alt rule).
    Other keyword arguments (``key``, ``on_select``, ``height`` ...) go to ``st.plotly_chart``.
    """
    if not alt.strip():
        raise ValueError("a chart needs alt text that says what it shows")
    return st.plotly_chart(legible(fig), alt=alt, config=CHART_CONFIG, **kwargs)
