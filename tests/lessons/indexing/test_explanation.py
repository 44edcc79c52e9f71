"""Tests for lessons/indexing/explanation.py: one element's formula with the real numbers, the
clicked cell read back, and the words the page shows around the pictures."""

from __future__ import annotations

import pytest
import torch

from lessons.indexing import explanation, parsing, presets, tracing


# ------------------------------------------------------------------------------ explain
class TestExplain:
    def test_gather_formula_of_the_notes_example(self):
        t = presets.run_preset("gather").trace
        e = explanation.explain_element(t, (1, 0))
        assert e.formula == "out[1][0] = input[1][index[1][0]] = input[1][2] = 6"
        assert e.sources == {"input": ((1, 2),), "index": ((1, 0),)}

    def test_scatter_formulas(self):
        t = presets.run_preset("scatter_y1").trace
        assert explanation.explain_element(t, (2, 0)).formula == "out[2][0] = src[1][0] = 0.5735"
        e = explanation.explain_element(t, (1, 0))
        assert e.formula == "out[1][0] = dest[1][0] = 0.0" and "keeps dest" in e.note
        t = presets.run_preset("scatter_y2").trace
        e = explanation.explain_element(t, (0, 0))
        assert e.formula == "out[0][0] = src[0][0] = 0.3992 or src[1][0] = 0.5735 -> 0.5735"
        assert "unspecified" in e.note and "CUDA" in e.note
        t = presets.run_preset("group_means").trace
        e = explanation.explain_element(t, (2,))
        assert e.formula == "out[2] = dest[2] + src[4] + src[5] = 0.0 + 5.0 + 6.0 = 11.0"
        assert "scatter_add_ adds" in e.note
        t = presets.run_preset("scatter_scalar_6").trace
        assert explanation.explain_element(t, (2, 0)).formula == "out[2][0] = scalar = 6"
        assert explanation.explain_element(t, (1, 0)).formula == "out[1][0] = dest[1][0] = 0.0"
        t = tracing.trace_scatter(
            torch.tensor([5.0, 0.0]),
            0,
            torch.tensor([0, 0]),
            torch.tensor([1.0, 3.0]),
            "amax",
            include_self=False,
        )
        assert (
            explanation.explain_element(t, (0,)).formula
            == "out[0] = max(src[0], src[1]) = max(1.0, 3.0) = 3.0"
        )

    def test_index_formula(self):
        t = tracing.trace_index(
            torch.arange(12).reshape(3, 4), parsing.parse_index_expression("[0, 2], 1")
        )
        assert explanation.explain_element(t, (1,)).formula == "out[1] = x[2][1] = 9"

    def test_exception(self):
        t = presets.run_preset("gather").trace
        with pytest.raises(ValueError, match=r"out\[2\]\[0\] is not an element"):
            explanation.explain_element(t, (2, 0))

    def test_position_from_selection(self):
        sel = {"selection": {"points": [{"x": 0, "y": 1, "customdata": [1, 0]}]}}
        assert explanation.position_from_selection(sel, (2, 2)) == (1, 0)
        assert explanation.position_from_selection(sel, (1, 1)) is None  # stale: out of range now
        assert explanation.position_from_selection(sel, (2, 2, 2)) is None  # stale: other ndim
        assert explanation.position_from_selection({"selection": {"points": []}}, (2, 2)) is None
        assert explanation.position_from_selection(None, (2, 2)) is None
        assert (
            explanation.position_from_selection({"selection": {"points": [{"x": 1}]}}, (2,)) is None
        )


class TestPageWords:
    def test_cell_labels(self):
        assert explanation.cell_labels((2, 1)) == {"out[0][0]": (0, 0), "out[1][0]": (1, 0)}
        assert explanation.cell_labels(()) == {"out": ()}

    def test_alt_texts(self):
        trace = presets.run_preset("gather").trace
        alts = explanation.alt_texts(trace, ["input", "index"], (1, 0))
        assert set(alts) == {"input", "index", "out"}
        assert alts["input"].startswith("input tensor, shape (2, 3), each cell's value printed")
        assert "out[1][0] and its sources framed in black" in alts["out"]
        assert alts["out"].template.startswith("out tensor, shape {shape}")

    def test_collisions(self):
        y2 = presets.run_preset("scatter_y2").trace
        assert explanation.collision_listing(y2) == "out[0][0] <- src[0][0], src[1][0]"
        warn, sentences = explanation.collision_note(y2, "scalar")
        assert warn and "unspecified" in sentences[1] and "out[0][0] <- src" in sentences[0]
        scalar = tracing.trace_scatter(torch.zeros(3), 0, torch.tensor([1, 1]), 2.0, "add")
        assert explanation.collision_listing(scalar, "标量") == "out[1] <- 标量, 标量"
        warn, (combined,) = explanation.collision_note(scalar)
        assert not warn and "With reduce='add' all writes are combined" in combined
        assert explanation.collision_note(presets.run_preset("gather").trace) is None

    def test_storage_view(self):
        x = torch.arange(12).reshape(3, 4)
        view = explanation.storage_view(tracing.trace_index(x, (slice(1, None),)))
        assert "is a **view**" in view.message and view.metrics[0] == ("same data_ptr", "True")
        assert view.metrics[1] == ("storage_offset (out / x)", "4 / 0")
        copy = explanation.storage_view(tracing.trace_index(x, (torch.tensor([0, 2]),)))
        assert "is a **copy**" in copy.message and copy.metrics[0][1] == "False"
        assert copy.pointers.startswith("x.untyped_storage().data_ptr() = 0x")
        with pytest.raises(ValueError, match="a gather trace has no storage report"):
            explanation.storage_view(presets.run_preset("gather").trace)
