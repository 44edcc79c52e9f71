"""ui.charts.shared_figure: one build per process and arguments, legible, marked read-only."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
import streamlit as st

from core.figure_style import MIN_FONT_PX
from ui.charts import is_shared, shared_figure

builds: list[tuple] = []


@shared_figure(max_entries=2)
def _line(slope: int, title: str) -> go.Figure:
    builds.append((slope, title))
    return go.Figure(go.Scatter(y=[0, slope]), layout={"title": title, "font": {"size": 8}})


@pytest.fixture(autouse=True)
def _fresh_cache():
    st.cache_resource.clear()
    builds.clear()
    yield
    st.cache_resource.clear()


def test_the_same_arguments_get_the_same_figure_built_once():
    first = _line(1, "a")
    again = _line(1, "a")
    assert again is first
    assert builds == [(1, "a")]
    other = _line(2, "a")
    assert other is not first and builds == [(1, "a"), (2, "a")]


def test_a_shared_figure_is_legible_and_marked():
    fig = _line(3, "b")
    assert is_shared(fig)
    assert fig.layout.font.size >= MIN_FONT_PX
    assert not is_shared(go.Figure())


def test_at_most_max_entries_figures_are_kept():
    for slope in range(4):
        _line(slope, "c")
    _line(0, "c")  # evicted by the two after it: built again
    assert builds.count((0, "c")) == 2


def test_a_builder_needs_a_positive_bound():
    with pytest.raises(ValueError, match="max_entries"):
        shared_figure(0)


def test_each_language_gets_its_own_figure(monkeypatch):
    """A builder's titles are in the session's language: a Chinese session must not get the
    English figure an English session built (the language is part of the key)."""
    import ui.charts

    english = _line(5, "d")
    monkeypatch.setattr(ui.charts, "current_language", lambda: "zh")
    chinese = _line(5, "d")
    assert chinese is not english and builds == [(5, "d"), (5, "d")]
    assert _line(5, "d") is chinese
