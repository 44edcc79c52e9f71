"""Tests for lessons/indexing/parsing.py: the page's tensor text and x[...] expressions, read
with messages that name the bad value."""

from __future__ import annotations

import pytest
import torch

from lessons.indexing import cases, parsing, presets, tracing


# ------------------------------------------------------------------------------ parsing
class TestParsing:
    def test_page_limit_fits_the_notes_one_hot(self):
        # 002:997-1012: 4 labels, class_num 10
        assert parsing.parse_tensor(presets.PRESETS_BY_KEY["one_hot"].first, "dest").shape == (
            4,
            10,
        )
        with pytest.raises(ValueError, match="over the page limit of 6x10"):
            parsing.parse_tensor("[[" + ", ".join(["0"] * 11) + "]]", "x")

    def test_smoke(self):
        t = parsing.parse_tensor("[[1, 2], [3, 4.5]]", "input")
        assert t.dtype == torch.float32 and t.shape == (2, 2)
        assert parsing.parse_tensor("[1, 2]", "x").dtype == torch.int64
        assert parsing.parse_src("6") == 6 and parsing.parse_src("1.23") == 1.23
        assert parsing.parse_tensor(parsing.format_tensor(t), "t").tolist() == t.tolist()

    @pytest.mark.parametrize(
        ("text", "kind", "message"),
        [
            ("[[1, a], [3, 4]]", "values", r"input\[0\]\[1\] = 'a' is not a number"),
            ("[[0, 1.5]]", "index", r"index\[0\]\[1\] = 1.5: an index must hold whole numbers"),
            ("[]", "values", r"is empty"),
            ("", "values", r"is empty"),
            ("[[1, 2], [3]]", "values", r"ragged"),
            ("[[1, 2], [3, 4]", "values", r"missing '\]'"),
            ("[1,, 2]", "values", r"stray ','"),
            (
                "[" + ", ".join(["[0, 0, 0, 0, 0, 0, 0]"] * 7) + "]",
                "values",
                r"over the page limit of 6x10",
            ),
            ("[" + ", ".join(["1"] * 9) + "]", "values", r"9, over the page limit of 8"),
            ("[[[[1]]]]", "values", r"4 dims"),
            ("[1, 99999999999999999999]", "values", r"input\[1\] = 9+: whole numbers must fit"),
            ("[[0, -99999999999999999999]]", "index", r"must fit in int64"),
            ("[1.5, 1e39]", "values", r"input\[1\] = '1e39' is too large for float32"),
            ("5", "values", r"must be a list"),
        ],
    )
    def test_exception(self, text, kind, message):
        name = "index" if kind == "index" else "input"
        with pytest.raises(ValueError, match=message):
            parsing.parse_tensor(text, name, kind=kind)

    def test_grid_edits(self):
        assert parsing.cells_to_tables(parsing.parse_cells("[1, 2]", "x")) == [[["1", "2"]]]
        tables = parsing.cells_to_tables(parsing.parse_cells("[[[1], [2]], [[3], [4]]]", "x"))
        assert len(tables) == 2 and tables[1] == [["3"], ["4"]]
        assert (
            parsing.apply_grid_edits("[[1, 2], [3, 4]]", "x", 0, {1: {"0": "7"}})
            == "[[1, 2], [7, 4]]"
        )
        assert parsing.apply_grid_edits("[1, 2]", "x", 0, {"0": {"1": "[9,"}}) == "[1, 9]"
        assert parsing.apply_grid_edits("[1, 2]", "x", 0, {0: {1: None}}) == "[1, ?]"
        edited = parsing.apply_grid_edits("[[[1], [2]], [[3], [4]]]", "x", 1, {0: {0: "abc"}})
        with pytest.raises(ValueError, match=r"x\[1\]\[0\]\[0\] = 'abc' is not a number"):
            parsing.parse_tensor(edited, "x")

    def test_scalar_src_overflow_is_a_message(self):
        trace, err, _ = cases.run_case("scatter", "[0, 0]", "[1]", "99999999999999999999", 0)
        assert trace is None and "src = 99999999999999999999: whole numbers must fit" in str(err)
        with pytest.raises(parsing.IndexingError, match="torch refused"):
            tracing.trace_scatter(torch.zeros(2, dtype=torch.int64), 0, torch.tensor([1]), 2**70)

    def test_huge_index_list_is_not_called_ragged(self):
        with pytest.raises(ValueError, match="99999999999999999999 does not fit in int64"):
            parsing.parse_index_expression("[0, 99999999999999999999]")

    def test_run_case_bad_inputs_keep_message(self):
        bad = {
            ("[[1, 2, 3], [4, 5, 6]]", "[[0, 0], [3, 0]]", 1): "out of bounds",
            ("[[1, 2, 3], [4, 5, 6]]", "[[0, -1], [0, 0]]", 1): "negative",
            ("[[1, 2, 3], [4, 5, 6]]", "[[0.5, 0], [1, 0]]", 1): "whole numbers",
            ("[[1, 2, 3], [4, 5, 6]]", "[0, 2]", 1): "same number of dims",
            ("[[1, 2, 3], [4, 5, 6]]", "[[0]]", 2): "out of range",
            ("[[1, x, 3], [4, 5, 6]]", "[[0]]", 1): "not a number",
            ("[]", "[[0]]", 1): "empty",
        }
        for (first, index, dim), message in bad.items():
            trace, err, _ = cases.run_case("gather", first, index, "", dim)
            assert trace is None and message in str(err), (first, index, str(err))


class TestPageHelpers:
    def test_grid_tables(self):
        assert parsing.grid_tables("[[1, 2], [3, 4]]", "x") == [[["1", "2"], ["3", "4"]]]
        assert parsing.grid_tables("[[1, 2], [3]]", "x") is None  # ragged: no grid
        assert parsing.grid_tables("[[1, 2", "x") is None  # does not parse: no grid
        assert parsing.grid_tables("6", "src") is None  # a scalar has no grid
        ten = "[" + ", ".join(["[" + ", ".join(["0"] * 10) + "]"] * 6) + "]"
        assert parsing.grid_tables(ten, "x") is not None  # 60 cells
        assert parsing.grid_tables(ten, "x", max_cells=59) is None

    def test_size_limits(self):
        limits = parsing.size_limits()
        assert limits == ["1-D up to 8", "2-D up to 6x10", "3-D up to 3x4x4"]
        assert limits[1].template == "{n}-D up to {shape}"

    def test_link_checks(self):
        checks = parsing.LINK_CHECKS
        assert checks["first"]("[[1, 2], [3, 4]]") and not checks["first"]("[[1, a]]")
        assert checks["index"]("[[0, 1.5]]")  # parses: the page explains why torch needs int64
        assert checks["index"]("[[0, 3]]")  # out of range for torch, still a usable link
        assert checks["src"]("6") and not checks["src"]("[[1, 2]")
        assert checks["expr"](":, [0, 2]") and not checks["expr"]("open('x')")
        assert not checks["x"]("[" * 600 + "]" * 600)  # over MAX_TENSOR_CHARS
        assert not checks["expr"]("0, " * 200)  # over MAX_EXPR_CHARS
