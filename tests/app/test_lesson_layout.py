"""ui.lesson and ui.charts: the shared header, picture-first order, legible charts with alt."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path.cwd()))
    import plotly.graph_objects as go
    import streamlit as st

    from ui.charts import show_chart
    from ui.lesson import lesson_layout

    layout = lesson_layout("A lesson", "the red bar.")
    with layout.details:
        st.header("Details")
        st.text("secondary")
    with layout.controls:
        n = st.slider("n", 1, 5, 3, key="lesson.n")
    with layout.figure:
        show_chart(go.Figure(go.Bar(x=[1, 2], y=[n, 1])), alt="Two bars", key="lesson.chart")


def test_header_figure_controls_details_in_order():
    at = AppTest.from_function(_page, default_timeout=60)
    at.run()
    assert not at.exception
    assert at.title[0].value == "A lesson"
    assert at.markdown[0].value == "**Look at:** the red bar."
    # the slider lives in the controls column, drawn after the figure column
    assert at.slider(key="lesson.n").value == 3
    assert at.header[0].value == "Details"
    chart = at.get("plotly_chart")[0]
    assert chart.proto.spec  # the figure is there
    assert '"size":14' in chart.proto.spec.replace(" ", "")
