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


@shared_figure(max_entries=4)
def _image(digest: str, _pixels: list[int]) -> go.Figure:
    builds.append((digest, tuple(_pixels)))
    return go.Figure(go.Scatter(y=_pixels))


def test_underscored_arguments_are_not_part_of_the_key():
    """The digest names the pixels: a second session's copy of them is not hashed (hashing a
    flow field or an image on every run was a third of the flow page's CPU with a class)."""
    first = _image("abc", [1, 2])
    assert _image("abc", [9, 9]) is first
    assert builds == [("abc", (1, 2))]
    assert _image("def", [9, 9]) is not first


BUILDER_SOURCE = """
from ui.charts import shared_figure
import plotly.graph_objects as go
@shared_figure(max_entries=4)
def redefined(slope):
    RUNS.append(RUN)
    return go.Figure(go.Scatter(y=[0, slope]))
"""


def test_a_builder_defined_again_by_a_rerun_shares_its_cache():
    """A page script defines its builders again on every run, from the same compiled code:
    the figures are still shared, and a miss runs this run's builder."""
    code = compile(BUILDER_SOURCE, "page_script.py", "exec")
    runs: list[int] = []
    first_run = {"RUNS": runs, "RUN": 1}
    second_run = {"RUNS": runs, "RUN": 2}
    exec(code, first_run)
    exec(code, second_run)
    # one cache wrapper for both (making it again read the source: ~3 ms a run)
    assert first_run["redefined"].clear.__self__ is second_run["redefined"].clear.__self__
    fig = first_run["redefined"](1)
    assert second_run["redefined"](1) is fig
    second_run["redefined"](2)
    assert runs == [1, 2]


def test_star_args_stay_in_the_key():
    @shared_figure(max_entries=4)
    def bars(*heights: int) -> go.Figure:
        return go.Figure(go.Bar(y=list(heights)))

    assert bars(1, 2) is not bars(1, 3)


def test_a_shared_figure_hands_out_one_dict():
    """st.plotly_chart asks every session's figure for to_dict(), a deep copy each time: the
    shared figure makes it once, equal to plotly's own."""
    fig = _line(6, "e")
    assert fig.to_dict() is fig.to_dict()
    assert fig.to_dict() == go.Figure.to_dict(fig)
