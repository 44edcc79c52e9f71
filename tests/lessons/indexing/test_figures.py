"""Tests for lessons/indexing/figures.py: a colour per source cell, clickable cells, legible
text, rows of equal cell width."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from core.figure_style import MIN_FONT_PX
from lessons.indexing import presets, tracing
from lessons.indexing.figures import (
    ROW_UNITS,
    figure_rows,
    figure_units,
    is_touch_user_agent,
    picture_shapes,
    row_weights,
    source_coloring,
    tensor_figure,
    trace_figures,
)


# ------------------------------------------------------------------------------ plots
class TestPlots:
    def test_colour_per_source(self):
        t = presets.run_preset("gather").trace
        c = source_coloring(t)
        for out_pos, in_pos in t.links:
            assert c.by_operand["out"][out_pos] == c.by_operand["input"][in_pos]
        t = presets.run_preset("scatter_y2").trace
        c = source_coloring(t)
        assert set(c.marks) == set(t.collisions) and c.marks[(0, 0)] == "×2"
        assert (1, 0) not in c.by_operand["out"]  # never written: no source colour

    def test_figures(self):
        t = tracing.trace_scatter(
            torch.zeros(2, 3, 4), 2, torch.tensor([[[0, 0]], [[1, 3]]]), torch.ones(2, 1, 2)
        )
        figs = trace_figures(t, {"src": [(0, 0, 0)], "out": [(0, 0, 0)]})
        assert set(figs) == {"dest", "index", "src", "out"}
        out = figs["out"]
        clicks = [tr for tr in out.data if tr.type == "scatter"]
        assert len(clicks) == 2  # one clickable layer per slice
        assert [list(p) for p in clicks[1].customdata][:2] == [[1, 0, 0], [1, 0, 1]]
        heat = [tr for tr in out.data if tr.type == "heatmap"][0]
        assert "×2" in heat.text[0][0]
        assert any(s.line.width == 4 for s in out.layout.shapes)
        fig = tensor_figure(torch.tensor(3.5), "x")
        assert fig.data[0].text[0][0] == "3.5"

    def test_click_target_covers_whole_cells(self):
        # a click anywhere in a cell must select it, not only near its centre
        fig = tensor_figure(torch.arange(6).reshape(2, 3), "out", clickable=True)
        bars = [tr for tr in fig.data if tr.type == "bar"]
        assert len(bars) == 1 and fig.layout.barmode == "overlay"
        bar = bars[0]
        cells = set()
        for x, base, height, pos in zip(bar.x, bar.base, bar.y, bar.customdata, strict=True):
            row, col = pos
            assert (x, base, base + height) == (col, row - 0.5, row + 0.5)
            cells.add((row, col))
        assert bar.width == 1.0 and cells == set(tracing.positions((2, 3)))
        assert not [tr for tr in tensor_figure(torch.arange(3), "x").data if tr.type == "bar"]

    @pytest.mark.parametrize("shape", [(), (8,), (6, 10), (3, 4, 4)])
    def test_text_is_legible_without_restyling(self, shape):
        # every size the figure sets is >= the projector minimum (12-13 px texts before)
        t = torch.arange(max(1, math.prod(shape)), dtype=torch.float32).reshape(shape) / 3
        fig = tensor_figure(t, "out", marks={(0,) * len(shape): "×2"}, clickable=True)
        sizes = [fig.layout.font.size, fig.layout.title.font.size]
        sizes.append(fig.layout.title.subtitle.font.size)
        sizes += [tr.textfont.size for tr in fig.data if tr.type == "heatmap"]
        sizes += [a.font.size for a in fig.layout.annotations]
        assert all(s is not None and s >= MIN_FONT_PX for s in sizes), sizes
        assert "<sup>" not in fig.layout.title.text  # a superscript shrinks text below 14 px

    def test_rows_of_equal_cell_width(self):
        gather = {"input": (2, 3), "index": (2, 2), "out": (2, 2)}
        assert figure_rows(gather) == [[("input", 5), ("index", 5), ("out", 5)]]
        one_hot = {"dest": (4, 10), "index": (4, 1), "out": (4, 10)}
        assert figure_rows(one_hot) == [[("dest", 11), ("index", 5)], [("out", 11)]]
        # the page's largest tensors: one picture a row, never over the budget
        big = {"dest": (6, 10), "index": (6, 10), "src": (6, 10), "out": (6, 10)}
        rows = figure_rows(big)
        assert [name for row in rows for name, _ in row] == list(big)
        assert all(sum(u for _, u in row) <= ROW_UNITS for row in rows)
        assert figure_units((3, 4, 4)) == 15 and figure_units(()) == 5

    @given(
        shapes=st.lists(
            st.lists(st.integers(1, 10), min_size=0, max_size=3).map(tuple),
            min_size=1,
            max_size=4,
        )
    )
    def test_rows_keep_order_and_budget(self, shapes):
        named = {f"t{k}": shape for k, shape in enumerate(shapes)}
        rows = figure_rows(named)
        assert [name for row in rows for name, _ in row] == list(named)
        assert all(sum(u for _, u in row) <= ROW_UNITS for row in rows)

    @pytest.mark.parametrize(
        ("agent", "touch"),
        [
            ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Mobile Safari", True),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148", True),
            ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537", False),
            ("", False),
            (None, False),
        ],
    )
    def test_touch_browsers_pick_cells_in_the_box(self, agent, touch):
        # A phone tap selected the cell tapped before: the page turns the picture's selection
        # off for these browsers and the "Explain cell" box picks the cell.
        assert is_touch_user_agent(agent) is touch


def test_row_weights_pad_only_when_there_are_several_rows():
    assert row_weights([("input", 5), ("out", 5)], 1) == [5, 5]
    assert row_weights([("dest", 11), ("index", 5)], 2) == [11, 5]
    assert row_weights([("out", 11)], 2) == [11, ROW_UNITS - 11]


def test_picture_shapes_leave_out_a_scalar_src():
    one_hot = presets.run_preset("one_hot").trace
    assert picture_shapes(one_hot) == {"dest": (4, 10), "index": (4, 1), "out": (4, 10)}
    y2 = presets.run_preset("scatter_y2").trace
    assert list(picture_shapes(y2)) == ["dest", "index", "src", "out"]
