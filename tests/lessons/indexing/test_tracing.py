"""Tests for lessons/indexing/tracing.py and lessons/indexing/figures.py: links agree with
torch, presets match the notes, snippets reproduce what the page shows, pitfalls show up on
real tensors."""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.figure_style import MIN_FONT_PX
from core.text import T
from lessons.indexing import tracing as ix
from lessons.indexing.figures import (
    ROW_UNITS,
    figure_rows,
    figure_units,
    is_touch_user_agent,
    source_coloring,
    tensor_figure,
    trace_figures,
)

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exec(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<snippet>", "exec"), namespace)
    return namespace


# ------------------------------------------------------------------------------ strategies
@st.composite
def gather_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    d = dim % ndim
    ishape = tuple(
        draw(st.integers(1, 4)) if k == d else draw(st.integers(1, shape[k])) for k in range(ndim)
    )
    n = math.prod(ishape)
    values = draw(st.lists(st.integers(0, shape[d] - 1), min_size=n, max_size=n))
    x = torch.arange(math.prod(shape)).reshape(shape) * 10 + 1  # distinct values
    return x, dim, torch.tensor(values, dtype=torch.int64).reshape(ishape)


@st.composite
def scatter_cases(draw, reduces=ix.SCATTER_REDUCES):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    d = dim % ndim
    ishape = tuple(
        draw(st.integers(1, 4)) if k == d else draw(st.integers(1, shape[k])) for k in range(ndim)
    )
    sshape = tuple(s + draw(st.integers(0, 1)) for s in ishape)  # src may be larger than index
    n = math.prod(ishape)
    values = draw(st.lists(st.integers(0, shape[d] - 1), min_size=n, max_size=n))
    reduce = draw(st.sampled_from(reduces))
    include_self = draw(st.booleans())
    dtype = torch.float64 if reduce == "mean" else torch.int64
    dest = torch.tensor(
        draw(st.lists(st.integers(-3, 3), min_size=math.prod(shape), max_size=math.prod(shape))),
        dtype=dtype,
    ).reshape(shape)
    src = torch.tensor(
        draw(st.lists(st.integers(-3, 3), min_size=math.prod(sshape), max_size=math.prod(sshape))),
        dtype=dtype,
    ).reshape(sshape)
    return (
        dest,
        dim,
        torch.tensor(values, dtype=torch.int64).reshape(ishape),
        src,
        reduce,
        include_self,
    )


@st.composite
def index_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    x = torch.arange(math.prod(shape)).reshape(shape)
    n_items = draw(st.integers(1, ndim))
    mode = draw(st.sampled_from(["basic", "lists", "mask", "mixed"]))
    length = draw(st.integers(1, 4))
    mask_used = False
    items: list = []
    for k in range(n_items):
        s = shape[k]
        kinds = ["slice", "int"]
        if mode in ("lists", "mixed"):
            kinds.append("list")
        if mode in ("mask", "mixed") and not mask_used:
            kinds.append("mask")
        kind = draw(st.sampled_from(kinds))
        if kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-s, s)))
            stop = draw(st.one_of(st.none(), st.integers(-s, s)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(slice(start, stop, step))
        elif kind == "int":
            items.append(draw(st.integers(-s, s - 1)))
        elif kind == "list":
            vals = draw(st.lists(st.integers(-s, s - 1), min_size=length, max_size=length))
            items.append(torch.tensor(vals, dtype=torch.int64))
        else:
            vals = draw(st.lists(st.booleans(), min_size=s, max_size=s))
            items.append(torch.tensor(vals, dtype=torch.bool))
            mask_used = True
    return x, tuple(items)


# ------------------------------------------------------------------------------ gather
class TestGather:
    def test_smoke(self):
        t = ix.trace_gather(torch.tensor([[1, 2, 3], [4, 5, 6]]), 1, torch.tensor([[0, 0], [2, 0]]))
        assert t.result.tolist() == [[1, 1], [6, 4]]
        assert t.links == [((0, 0), (0, 0)), ((0, 1), (0, 0)), ((1, 0), (1, 2)), ((1, 1), (1, 0))]

    def test_exception(self):
        x = torch.tensor([[1, 2, 3], [4, 5, 6]])
        with pytest.raises(ValueError, match=r"dim=2 is out of range .* between -2 and 1"):
            ix.trace_gather(x, 2, torch.tensor([[0]]))
        with pytest.raises(ValueError, match=r"float.*int64"):
            ix.trace_gather(x, 1, torch.tensor([[0.0, 1.0]]))
        with pytest.raises(ValueError, match=r"index has 1 dim\(s\) but input has 2"):
            ix.trace_gather(x, 1, torch.tensor([0, 2]))
        with pytest.raises(ValueError, match=r"index.size\(0\) = 3 is larger than input.size\(0\)"):
            ix.trace_gather(x, 1, torch.zeros(3, 1, dtype=torch.int64))
        with pytest.raises(ix.IndexingError) as info:
            ix.trace_gather(x, 1, torch.tensor([[0, 0], [3, 0]]))
        assert info.value.torch_error == "index 3 is out of bounds for dimension 1 with size 3"
        assert "0..2" in str(info.value)
        with pytest.raises(ix.IndexingError, match="no negative") as info:
            ix.trace_gather(x, 1, torch.tensor([[0, -1], [0, 0]]))
        assert "-1" in info.value.torch_error

    def test_matches_reference(self):
        rng = np.random.default_rng(0)
        a = rng.integers(0, 100, (3, 4, 5))
        idx = rng.integers(0, 4, (3, 6, 5))
        t = ix.trace_gather(torch.from_numpy(a), 1, torch.from_numpy(idx))
        np.testing.assert_array_equal(t.result.numpy(), np.take_along_axis(a, idx, axis=1))

    def test_duplicates(self):
        t = ix.trace_gather(torch.tensor([5, 6, 7]), 0, torch.tensor([2, 2, 2, 0]))
        assert t.result.tolist() == [7, 7, 7, 5]
        assert [i for _, i in t.links] == [(2,), (2,), (2,), (0,)]

    @PROPERTY
    @given(gather_cases())
    def test_links_rebuild_result(self, case):
        x, dim, index = case
        t = ix.trace_gather(x, dim, index)
        assert torch.equal(t.result, torch.gather(x, dim, index))
        assert len(t.links) == t.result.numel()
        assert {o for o, _ in t.links} == set(ix.positions(t.result.shape))
        rebuilt = torch.full_like(t.result, -1)
        for out_pos, in_pos in t.links:
            rebuilt[out_pos] = x[in_pos]
        assert torch.equal(rebuilt, t.result)


# ------------------------------------------------------------------------------ scatter
def _rebuild_scatter(dest, src, links, reduce, include_self, scalar):
    """Recompute a scatter from the links alone, in plain Python."""
    groups: dict = defaultdict(list)
    for s, d in links:
        groups[d].append(s)
    out = dest.clone()
    candidates = {}
    for d, srcs in groups.items():
        vals = [src if scalar else src[s].item() for s in srcs]
        with_self = reduce in ("add", "multiply", "scatter_add") or include_self
        own = [dest[d].item()] if with_self else []
        if reduce is None:
            candidates[d] = vals
            continue
        allv = own + vals
        if reduce in ("add", "sum", "scatter_add"):
            out[d] = sum(allv)
        elif reduce in ("multiply", "prod"):
            out[d] = math.prod(allv)
        elif reduce == "mean":
            out[d] = sum(allv) / len(allv)
        elif reduce == "amax":
            out[d] = max(allv)
        elif reduce == "amin":
            out[d] = min(allv)
    return out, groups, candidates


class TestScatter:
    def test_smoke(self):
        t = ix.trace_scatter(torch.zeros(2, 4), 1, torch.tensor([[2], [3]]), 1.23)
        assert t.result[0, 2].item() == pytest.approx(1.23)
        assert t.links == [((0, 0), (0, 2)), ((1, 0), (1, 3))]
        assert t.scalar_src and not t.collisions

    def test_exception(self):
        dest = torch.zeros(3, 5)
        idx = torch.tensor([[0, 1], [2, 0]])
        with pytest.raises(ValueError, match="reduce='max' is not supported"):
            ix.trace_scatter(dest, 0, idx, torch.ones(2, 2), "max")
        with pytest.raises(ValueError, match="dtype torch.int64 but dest has torch.float32"):
            ix.trace_scatter(dest, 0, idx, torch.ones(2, 2, dtype=torch.int64))
        with pytest.raises(ValueError, match="src has 1 dim"):
            ix.trace_scatter(dest, 0, idx, torch.ones(4))
        with pytest.raises(ValueError, match=r"index.size\(1\) = 2 is larger than src.size\(1\)"):
            ix.trace_scatter(dest, 0, idx, torch.ones(2, 1))
        with pytest.raises(ValueError, match="needs a tensor src"):
            ix.trace_scatter(dest, 0, idx, 1.0, "sum")
        with pytest.raises(ValueError, match=r"dim=-3 is out of range"):
            ix.trace_scatter(dest, -3, idx, 1.0)
        with pytest.raises(ix.IndexingError) as info:
            ix.trace_scatter(dest, 0, torch.tensor([[0, 5]]), torch.ones(1, 2))
        assert info.value.torch_error == "index 5 is out of bounds for dimension 0 with size 3"

    def test_matches_reference(self):
        src = torch.arange(1, 11).reshape(2, 5)
        t = ix.trace_scatter(
            torch.zeros(3, 5, dtype=src.dtype), 0, torch.tensor([[0, 1, 2, 0]]), src
        )
        assert t.result.tolist() == [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]]
        t = ix.trace_scatter(torch.full((2, 4), 2.0), 1, torch.tensor([[2], [3]]), 1.23, "multiply")
        assert t.result[0, 2].item() == pytest.approx(2.46)

    def test_collisions_and_winner(self):
        t = ix.run_preset("scatter_y2").trace
        # the notes' y2 (002:926): only column 0 collides (002:940)
        assert set(t.collisions) == {(0, 0)}
        assert t.collisions[(0, 0)] == ((0, 0), (1, 0))
        for d, w in t.winners.items():
            assert torch.equal(t.result[d], t.operands["src"][w])

    def test_float_scalar_into_int_dest(self):
        # the page promotes an int dest to float32, so 1.23 is written as 1.23, not 1
        trace, err, snippet = ix.run_case(
            "scatter", "[[0, 0, 0], [0, 0, 0]]", "[[2], [0]]", "1.23", 1
        )
        assert err is None and trace.result.dtype == torch.float32
        assert trace.result[0, 2].item() == pytest.approx(1.23)
        assert ix.explain_element(trace, (0, 2)).formula == "out[0][2] = scalar = 1.23"
        assert torch.equal(_exec(snippet)["out"], trace.result)
        # called directly, torch truncates; the formula says so instead of claiming 1.23
        t = ix.trace_scatter(torch.zeros(2, dtype=torch.int64), 0, torch.tensor([1]), 1.23)
        assert t.result.tolist() == [0, 1]
        assert ix.explain_element(t, (1,)).formula == "out[1] = scalar = 1.23 (cast to int64: 1)"

    def test_scatter_add_mode(self):
        t = ix.trace_scatter(
            torch.zeros(3), 0, torch.tensor([0, 1, 0, 1, 2, 2]), torch.arange(1.0, 7.0),
            "scatter_add",
        )  # fmt: skip
        assert t.result.tolist() == [4.0, 6.0, 11.0]
        assert t.call == "dest.clone().scatter_add_(0, index, src)" and not t.warnings
        with pytest.raises(ValueError, match="scatter_add_ needs a tensor src, got the scalar 2"):
            ix.trace_scatter(torch.zeros(3), 0, torch.tensor([0]), 2, "scatter_add")
        _, err, snippet = ix.run_case("scatter", "[0, 0]", "[1, 1]", "[2, 3]", 0, "scatter_add")
        assert err is None and _exec(snippet)["out"].tolist() == [0, 5]

    def test_legacy_reduce_warning_is_reported(self):
        t = ix.trace_scatter(torch.zeros(3), 0, torch.tensor([0, 0]), torch.ones(2), "multiply")
        assert any("deprecated" in w for w in t.warnings)

    @PROPERTY
    @given(scatter_cases())
    def test_links_rebuild_result(self, case):
        dest, dim, index, src, reduce, include_self = case
        t = ix.trace_scatter(dest, dim, index, src, reduce, include_self=include_self)
        assert len(t.links) == index.numel()
        assert [s for s, _ in t.links] == list(ix.positions(index.shape))
        rebuilt, groups, cands = _rebuild_scatter(dest, src, t.links, reduce, include_self, False)
        assert t.collisions == {d: tuple(v) for d, v in groups.items() if len(v) > 1}
        untouched = [p for p in ix.positions(dest.shape) if p not in groups]
        for p in untouched:
            assert t.result[p] == dest[p]
        if reduce is None:
            for d, vals in cands.items():
                assert t.result[d].item() in vals
        else:
            torch.testing.assert_close(t.result, rebuilt)

    @PROPERTY
    @given(scatter_cases(reduces=(None, "add", "multiply")), st.integers(-5, 5))
    def test_scalar_src(self, case, value):
        dest, dim, index, _, reduce, _ = case
        t = ix.trace_scatter(dest, dim, index, value, reduce)
        assert t.scalar_src and len(t.links) == index.numel()
        rebuilt, groups, _ = _rebuild_scatter(dest, value, t.links, reduce, True, True)
        if reduce is None:
            for d in groups:
                assert t.result[d].item() == value
        else:
            torch.testing.assert_close(t.result, rebuilt)


# ------------------------------------------------------------------------------ x[...]
def _writes_through(x: torch.Tensor, key) -> bool | None:
    """Ground truth for view vs copy: does writing into the result change x?"""
    y = x.clone()
    r = y[key]
    if r.numel() == 0:
        return None
    r.fill_(-12345)
    return bool((y == -12345).any())


class TestIndex:
    def test_smoke(self):
        x = torch.arange(12).reshape(3, 4)
        t = ix.trace_index(x, (slice(1, None), slice(None, None, 2)))
        assert t.result.tolist() == [[4, 6], [8, 10]]
        assert t.is_view and t.storage.result_offset == 4 and t.storage.result_stride == (4, 2)
        assert t.links[1] == ((0, 1), (1, 2))

    def test_exception(self):
        x = torch.arange(12).reshape(3, 4)
        with pytest.raises(ValueError, match="float"):
            ix.trace_index(x, (torch.tensor([0.5]),))
        with pytest.raises(ix.IndexingError) as info:
            ix.trace_index(x, (5,))
        assert "out of bounds" in info.value.torch_error
        with pytest.raises(ix.IndexingError, match="too many indices"):
            ix.trace_index(x, (0, 0, 0))
        with pytest.raises(ValueError, match="float"):
            ix.parse_index_expression(":, 1.5")
        with pytest.raises(ValueError, match="not supported"):
            ix.parse_index_expression("__import__('os')")
        with pytest.raises(ValueError, match="empty"):
            ix.parse_index_expression("  ")
        # the message names the offending piece (it used to speak of slices for a list)
        with pytest.raises(ValueError, match=r"'\[False\]\*4' is not a whole number"):
            ix.parse_index_expression("[[True, False], [False]*4]")
        with pytest.raises(ValueError, match=r"'\+1' is not a whole number"):
            ix.parse_index_expression("+1:")

    def test_parse_index_expression(self):
        items = ix.parse_index_expression("..., -1:, None, [[0], [2]], [True, False]")
        assert items[0] is Ellipsis and items[1] == slice(-1, None, None) and items[2] is None
        assert items[3].dtype == torch.int64 and items[3].shape == (2, 1)
        assert items[4].dtype == torch.bool

    def test_view_vs_copy_by_storage(self):
        x = torch.arange(12.0).reshape(3, 4)
        cases = {
            "1:, ::2": True,
            "1": True,
            "..., -1": True,
            ":, [0, 2]": False,
            "[True, False, True]": False,
            "[0, 2], [1, 3]": False,
        }
        for expr, view in cases.items():
            t = ix.trace_index(x, ix.parse_index_expression(expr))
            assert t.is_view is view, expr
            assert (t.storage.source_ptr == t.storage.result_ptr) is view
            assert _writes_through(x, ix.parse_index_expression(expr)) is view
        # a 0-d integer tensor is basic indexing in torch: measured, not assumed
        t = ix.trace_index(x, (torch.tensor(1),))
        assert t.is_view is _writes_through(x, torch.tensor(1))

    @PROPERTY
    @given(index_cases())
    def test_links_rebuild_result(self, case):
        x, items = case
        try:
            expected = x[items]
        except (IndexError, RuntimeError):
            with pytest.raises(ix.IndexingError):
                ix.trace_index(x, items)
            return
        t = ix.trace_index(x, items)
        assert torch.equal(t.result, expected)
        assert len(t.links) == t.result.numel()
        rebuilt = torch.full_like(t.result, -1)
        for out_pos, in_pos in t.links:
            rebuilt[out_pos] = x[in_pos]
        assert torch.equal(rebuilt, t.result)
        truth = _writes_through(x, items)
        if truth is not None:
            assert t.is_view is truth
            assert t.storage.same_storage is truth
        has_int = any(isinstance(i, int) for i in items)
        has_tensor = any(isinstance(i, torch.Tensor) for i in items)
        if not (has_int and has_tensor):  # numpy and torch differ on int + array mixes
            np_items = tuple(i.numpy() if isinstance(i, torch.Tensor) else i for i in items)
            np.testing.assert_array_equal(t.result.numpy(), x.numpy()[np_items])

    def test_mask_with_list_mixture(self):
        x = torch.arange(24).reshape(2, 3, 4)
        items = (torch.tensor([True, False, True]).unsqueeze(0).expand(2, 3)[0], slice(None))
        t = ix.trace_index(x, (slice(None), *items))
        assert torch.equal(t.result, x[:, torch.tensor([True, False, True]), :])
        items = (torch.tensor([1, 0]), torch.tensor([True, False, True]))
        t = ix.trace_index(x, items)  # list (2,) broadcasts with the mask's 2 hits
        assert torch.equal(t.result, x[torch.tensor([1, 0]), torch.tensor([True, False, True])])
        assert [i for _, i in t.links][:2] == [(1, 0, 0), (1, 0, 1)]

    def test_run_index_case_limits(self):
        _, err, _ = ix.run_index_case(ix.INDEX_DEFAULT_X, "None, None, None")
        assert "draws up to 3 dims" in str(err)
        _, err, _ = ix.run_index_case(ix.INDEX_DEFAULT_X, "[" + ", ".join(["0"] * 60) + "]")
        assert "draws up to 128" in str(err)
        t, err, snippet = ix.run_index_case(ix.INDEX_DEFAULT_X, "1, 2")
        assert err is None and t.result.dim() == 0 and t.is_view
        assert ix.explain_element(t, ()).formula == "out = x[1][2] = 6"

    def test_snippet_reproduces(self):
        x = torch.arange(12).reshape(3, 4)
        for expr in ix.INDEX_PRESETS.values():
            items = ix.parse_index_expression(expr)
            t = ix.trace_index(x, items)
            ns = _exec(ix.index_snippet(x, items))
            assert torch.equal(ns["out"], t.result) and ns["is_view"] is t.is_view, expr


# ------------------------------------------------------------------------------ explain
class TestExplain:
    def test_gather_formula_from_issue(self):
        t = ix.run_preset("gather").trace
        e = ix.explain_element(t, (1, 0))
        assert e.formula == "out[1][0] = input[1][index[1][0]] = input[1][2] = 6"
        assert e.sources == {"input": ((1, 2),), "index": ((1, 0),)}

    def test_scatter_formulas(self):
        t = ix.run_preset("scatter_y1").trace
        assert ix.explain_element(t, (2, 0)).formula == "out[2][0] = src[1][0] = 0.5735"
        e = ix.explain_element(t, (1, 0))
        assert e.formula == "out[1][0] = dest[1][0] = 0.0" and "keeps dest" in e.note
        t = ix.run_preset("scatter_y2").trace
        e = ix.explain_element(t, (0, 0))
        assert e.formula == "out[0][0] = src[0][0] = 0.3992 or src[1][0] = 0.5735 -> 0.5735"
        assert "unspecified" in e.note and "CUDA" in e.note
        t = ix.run_preset("group_means").trace
        e = ix.explain_element(t, (2,))
        assert e.formula == "out[2] = dest[2] + src[4] + src[5] = 0.0 + 5.0 + 6.0 = 11.0"
        assert "scatter_add_ adds" in e.note
        t = ix.run_preset("scatter_scalar_6").trace
        assert ix.explain_element(t, (2, 0)).formula == "out[2][0] = scalar = 6"
        assert ix.explain_element(t, (1, 0)).formula == "out[1][0] = dest[1][0] = 0.0"
        t = ix.trace_scatter(
            torch.tensor([5.0, 0.0]),
            0,
            torch.tensor([0, 0]),
            torch.tensor([1.0, 3.0]),
            "amax",
            include_self=False,
        )
        assert (
            ix.explain_element(t, (0,)).formula
            == "out[0] = max(src[0], src[1]) = max(1.0, 3.0) = 3.0"
        )

    def test_index_formula(self):
        t = ix.trace_index(torch.arange(12).reshape(3, 4), ix.parse_index_expression("[0, 2], 1"))
        assert ix.explain_element(t, (1,)).formula == "out[1] = x[2][1] = 9"

    def test_exception(self):
        t = ix.run_preset("gather").trace
        with pytest.raises(ValueError, match=r"out\[2\]\[0\] is not an element"):
            ix.explain_element(t, (2, 0))

    def test_position_from_selection(self):
        sel = {"selection": {"points": [{"x": 0, "y": 1, "customdata": [1, 0]}]}}
        assert ix.position_from_selection(sel, (2, 2)) == (1, 0)
        assert ix.position_from_selection(sel, (1, 1)) is None  # stale: out of range now
        assert ix.position_from_selection(sel, (2, 2, 2)) is None  # stale: other ndim
        assert ix.position_from_selection({"selection": {"points": []}}, (2, 2)) is None
        assert ix.position_from_selection(None, (2, 2)) is None
        assert ix.position_from_selection({"selection": {"points": [{"x": 1}]}}, (2,)) is None


# ------------------------------------------------------------------------------ presets & snippets
class TestPresets:
    @pytest.mark.parametrize("preset", ix.PRESETS, ids=lambda p: p.key)
    def test_matches_reference(self, preset):
        run = ix.run_preset(preset)
        ns = _exec(run.snippet)
        if preset.notes_error:
            assert preset.expected is None
            assert run.trace is None
            assert run.error.torch_error == "index 3 is out of bounds for dimension 1 with size 3"
            assert ns["error"] == run.error.torch_error
            return
        assert run.error is None
        assert ix.matches_expected(preset, run.trace.result), run.trace.result
        cmp = ix.compare_with_notes(preset, run.trace)
        assert cmp.matches and not cmp.mismatches and cmp.dtype_ok
        assert torch.equal(ns["out"], run.trace.result)
        assert ns["out"].dtype == run.trace.result.dtype == preset.expected_dtype
        if run.group is not None:
            assert torch.equal(ns["means"], run.group.means)
            assert run.group.sums.tolist() == [4.0, 6.0, 11.0]
            assert run.group.means.tolist() == [2.0, 3.0, 5.5]
            assert run.group.counts.tolist() == [2, 2, 2]
            assert run.group.agree

    @pytest.mark.parametrize("preset", ix.PRESETS, ids=lambda p: p.key)
    def test_notes_code_runs_and_agrees(self, preset):
        """The notes' own code (shown on the page) runs as-is and gives the page's result."""
        ns = _exec(preset.notes_code)
        got = ns[preset.notes_result]
        run = ix.run_preset(preset)
        if preset.notes_error:
            assert got == run.error.torch_error
            return
        got = torch.as_tensor(got)
        if preset.key == "group_means":  # the notes divide the sums by the group sizes
            assert torch.equal(got, run.group.means)
        else:
            assert torch.equal(got, run.trace.result) and got.dtype == run.trace.result.dtype
        live = ix.run_notes_code(preset.key)
        assert live.error is None and live.output

    def test_presets_cite_the_notes(self):
        for preset in ix.PRESETS:
            assert preset.notes_ref.file in ("002", "004"), preset.key
            assert preset.notes_code.startswith("import"), preset.key
            if not preset.verbatim:
                assert preset.notes_code_changes, preset.key  # says what differs
        variations = [p.key for p in ix.PRESETS if not p.verbatim]
        assert variations == ["one_hot_resize"]
        with pytest.raises(ValueError, match="a notes reference looks like"):
            ix.Preset("k", "t", "gather", "[1]", "[0]", "", 0, ref="notes 2", verbatim=True)

    def test_compare_with_notes(self):
        y2 = ix.PRESETS_BY_KEY["scatter_y2"]
        trace = ix.run_preset(y2).trace
        # the other duplicate write winning changes only the collided cell: reported as such
        other = trace.result.clone()
        other[0, 0] = trace.operands["src"][0, 0]
        cmp = ix.compare_with_notes(y2, dataclasses.replace(trace, result=other))
        assert not cmp.matches and cmp.mismatches == ((0, 0),) and cmp.only_at_collisions
        # printed precision: 4 decimals -> atol 5e-5
        near = trace.result.clone()
        near[1, 1] += 4e-5
        assert ix.compare_with_notes(y2, dataclasses.replace(trace, result=near)).matches
        near[1, 1] += 2e-5
        cmp = ix.compare_with_notes(y2, dataclasses.replace(trace, result=near))
        assert cmp.mismatches == ((1, 1),) and not cmp.only_at_collisions and cmp.atol == 5e-5
        # dtype is part of the notes' output: float 6. is not int 6
        p6 = ix.PRESETS_BY_KEY["scatter_scalar_6"]
        t6 = ix.run_preset(p6).trace
        as_int = dataclasses.replace(t6, result=t6.result.long())
        assert not ix.compare_with_notes(p6, as_int).dtype_ok
        assert not ix.matches_expected(p6, t6.result.long())
        assert ix.compare_with_notes(ix.PRESETS_BY_KEY["gather_out_of_range"], t6) is None

    @pytest.mark.parametrize(
        ("dest", "src", "means"),
        [
            ("[0, 0, 0]", "[1, 2, 3, 4]", [2.0, 3.0]),  # int src: the snippet must still run
            ("[0.0, 0.0, 0.0, 0.0]", "[1.0, 2.0, 3.0, 5.0]", [2.0, 3.5]),
        ],
    )
    def test_group_means_snippet_reproduces(self, dest, src, means):
        trace, err, snippet = ix.run_case("scatter", dest, "[0, 1, 0, 1]", src, 0, "add")
        gm = ix.group_means_for(trace)
        assert err is None and gm is not None and gm.means.tolist()[:2] == means
        ns = _exec(snippet + ix.GROUP_MEANS_SNIPPET)
        assert torch.equal(ns["means"], gm.means[ns["groups"]])
        assert torch.equal(ns["means_reduce"][ns["groups"]], gm.means_reduce[ns["groups"]])

    def test_group_means_need_a_zero_dest(self):
        # out = dest + group sums: dividing by the counts is no mean when dest is not zero
        trace, _, _ = ix.run_case("scatter", "[10, 0, 0]", "[0, 1, 0, 1]", "[1, 2, 3, 4]", 0, "add")
        assert ix.group_means_for(trace) is None
        trace, _, _ = ix.run_case("scatter", "[0, 0, 0]", "[0, 1, 0, 1]", "[1, 2, 3, 4]", 0, "sum")
        assert ix.group_means_for(trace) is None
        assert ix.group_means_for(ix.run_preset("group_means").trace) is not None

    def test_preset_is_loaded(self):
        p = ix.PRESETS_BY_KEY["gather"]
        assert ix.preset_is_loaded(p, "gather", [p.first, p.index, ""], 1)
        assert not ix.preset_is_loaded(p, "gather", [p.first, "[[1, 1], [2, 0]]", ""], 1)
        assert not ix.preset_is_loaded(p, "scatter", [p.first, p.index, ""], 1)
        g = ix.PRESETS_BY_KEY["group_means"]
        texts = [g.first, g.index, g.src]
        assert ix.preset_is_loaded(g, "scatter", texts, 0, "scatter_add", False)
        assert not ix.preset_is_loaded(g, "scatter", texts, 0, "add", True)
        assert not ix.preset_is_loaded(g, "scatter", texts, 0, None, True)

    def test_exception(self):
        with pytest.raises(ValueError, match="unknown preset 'nope'"):
            ix.run_preset("nope")

    @settings(max_examples=25, deadline=None)
    @given(st.sampled_from(["gather", "scatter"]), st.integers(1, 3), st.integers(0, 2**31))
    def test_random_cases_are_valid_and_snippets_reproduce(self, op, ndim, seed):
        texts = ix.random_case(op, ndim, seed)
        assert texts == ix.random_case(op, ndim, seed)  # reproducible from the seed
        trace, err, snippet = ix.run_case(
            op, texts["first"], texts["index"], texts["src"], int(texts["dim"])
        )
        assert err is None, err
        assert trace.result.dim() == ndim
        assert torch.equal(_exec(snippet)["out"], trace.result)


# ------------------------------------------------------------------------------ parsing
class TestParsing:
    def test_page_limit_fits_the_notes_one_hot(self):
        # 002:997-1012: 4 labels, class_num 10
        assert ix.parse_tensor(ix.PRESETS_BY_KEY["one_hot"].first, "dest").shape == (4, 10)
        with pytest.raises(ValueError, match="over the page limit of 6x10"):
            ix.parse_tensor("[[" + ", ".join(["0"] * 11) + "]]", "x")

    def test_smoke(self):
        t = ix.parse_tensor("[[1, 2], [3, 4.5]]", "input")
        assert t.dtype == torch.float32 and t.shape == (2, 2)
        assert ix.parse_tensor("[1, 2]", "x").dtype == torch.int64
        assert ix.parse_src("6") == 6 and ix.parse_src("1.23") == 1.23
        assert ix.parse_tensor(ix.format_tensor(t), "t").tolist() == t.tolist()

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
            ix.parse_tensor(text, name, kind=kind)

    def test_grid_edits(self):
        assert ix.cells_to_tables(ix.parse_cells("[1, 2]", "x")) == [[["1", "2"]]]
        tables = ix.cells_to_tables(ix.parse_cells("[[[1], [2]], [[3], [4]]]", "x"))
        assert len(tables) == 2 and tables[1] == [["3"], ["4"]]
        assert (
            ix.apply_grid_edits("[[1, 2], [3, 4]]", "x", 0, {1: {"0": "7"}}) == "[[1, 2], [7, 4]]"
        )
        assert ix.apply_grid_edits("[1, 2]", "x", 0, {"0": {"1": "[9,"}}) == "[1, 9]"
        assert ix.apply_grid_edits("[1, 2]", "x", 0, {0: {1: None}}) == "[1, ?]"
        edited = ix.apply_grid_edits("[[[1], [2]], [[3], [4]]]", "x", 1, {0: {0: "abc"}})
        with pytest.raises(ValueError, match=r"x\[1\]\[0\]\[0\] = 'abc' is not a number"):
            ix.parse_tensor(edited, "x")

    def test_scalar_src_overflow_is_a_message(self):
        trace, err, _ = ix.run_case("scatter", "[0, 0]", "[1]", "99999999999999999999", 0)
        assert trace is None and "src = 99999999999999999999: whole numbers must fit" in str(err)
        with pytest.raises(ix.IndexingError, match="torch refused"):
            ix.trace_scatter(torch.zeros(2, dtype=torch.int64), 0, torch.tensor([1]), 2**70)

    def test_huge_index_list_is_not_called_ragged(self):
        with pytest.raises(ValueError, match="99999999999999999999 does not fit in int64"):
            ix.parse_index_expression("[0, 99999999999999999999]")

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
            trace, err, _ = ix.run_case("gather", first, index, "", dim)
            assert trace is None and message in str(err), (first, index, str(err))


# ------------------------------------------------------------------------------ pitfalls
class TestPitfalls:
    @pytest.mark.parametrize("number", range(1, 9))
    def test_matches_reference(self, number):
        for seed, n in [(0, 4), (1, 2), (7, 6), (123, 3)]:
            demo = ix.run_pitfall(number, seed=seed, n=n)
            assert demo.holds, (number, seed, n, demo.verdict)
            ns = _exec(demo.snippet)
            for name, value in demo.values.items():
                if isinstance(value, torch.Tensor):
                    assert torch.equal(ns[name], value), (number, name)
                else:
                    assert ns[name] == value, (number, name)

    def test_chained_assignment_snippet_for_every_seed(self):
        # seeds whose selected values are all even once made the page force a mask that the
        # snippet did not reproduce (seed 14 is such a seed)
        for seed in range(40):
            for n in range(2, 7):
                demo = ix.run_pitfall(3, seed=seed, n=n)
                ns = _exec(demo.snippet)
                assert demo.holds, (seed, n, demo.verdict)
                assert torch.equal(ns["fixed"], demo.values["fixed"]), (seed, n)
                assert torch.equal(ns["chained"], demo.values["chained"]), (seed, n)

    def test_refs(self):
        for number in ix.PITFALL_TITLES:
            demo = ix.run_pitfall(number)
            assert demo.ref == ix.PITFALL_REFS[number]
        assert ix.run_pitfall(1).ref == "002:421-430" and ix.run_pitfall(3).ref == "002:534-540"
        assert ix.run_pitfall(4).ref is None  # duplicates with += are not in the notes

    def test_exception(self):
        with pytest.raises(ValueError, match="1 to 8, got 9"):
            ix.run_pitfall(9)
        with pytest.raises(ValueError, match="2 to 6, got 7"):
            ix.run_pitfall(1, n=7)


# ------------------------------------------------------------------------------ plots
class TestPlots:
    def test_colour_per_source(self):
        t = ix.run_preset("gather").trace
        c = source_coloring(t)
        for out_pos, in_pos in t.links:
            assert c.by_operand["out"][out_pos] == c.by_operand["input"][in_pos]
        t = ix.run_preset("scatter_y2").trace
        c = source_coloring(t)
        assert set(c.marks) == set(t.collisions) and c.marks[(0, 0)] == "×2"
        assert (1, 0) not in c.by_operand["out"]  # never written: no source colour

    def test_figures(self):
        t = ix.trace_scatter(
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
        assert bar.width == 1.0 and cells == set(ix.positions((2, 3)))
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
        # Bug (issue 12): a phone tap selected the cell tapped before; the page turns the
        # picture's selection off for these browsers and the "Explain cell" box picks the cell.
        assert is_touch_user_agent(agent) is touch


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_scatter_and_prechecked_range():
    dest = torch.zeros(3, device="cuda")
    t = ix.trace_scatter(
        dest,
        0,
        torch.zeros(64, dtype=torch.int64, device="cuda"),
        torch.arange(64.0, device="cuda"),
    )
    assert t.collisions[(0,)] == tuple((k,) for k in range(64))
    assert t.result[0].item() in set(range(64))
    with pytest.raises(ix.IndexingError, match="out of range"):  # no device assert
        ix.trace_gather(torch.ones(2, 3, device="cuda"), 1, torch.tensor([[0, 3]], device="cuda"))
    assert torch.cuda.synchronize() is None


# ------------------------------------------------------------------------------ notes callouts
class TestNotesCallouts:
    @pytest.fixture(scope="class")
    def callouts(self):
        return {c.key: c for c in ix.notes_callouts()}

    def test_smoke(self, callouts):
        assert list(callouts) == [
            "gather_unique_rows",
            "gather_error_text",
            "pitfall1_arange_recipe",
            "chained_slice_assignment",
        ]
        wanted = set(ix.PRESET_CALLOUTS.values()) | set(ix.PITFALL_CALLOUTS.values())
        assert {k for keys in wanted for k in keys} == set(callouts)

    def test_gather_allows_duplicates(self, callouts):
        c = callouts["gather_unique_rows"]
        assert c.verdict == "wrong" and str(c.ref) == "002:1056"
        assert not c.run.raised and c.run.output == "[[1, 1], [6, 4]]"
        assert c.today_text.startswith("gather accepts repeated values in a row")
        assert "gave [[1, 1], [6, 4]]" in c.today_text

    def test_gather_error_text(self, callouts):
        c = callouts["gather_error_text"]
        assert c.verdict == "out of date" and c.quote_zh == ix.NOTES_GATHER_ERROR
        assert c.run.error == "RuntimeError: index 3 is out of bounds for dimension 1 with size 3"
        assert "still refuses index 3, with another message" in c.today_text
        assert c.run.error in c.today_text and "Invalid index in gather" not in c.run.error

    def test_pitfall1_recipe_raises(self, callouts):
        c = callouts["pitfall1_arange_recipe"]
        assert c.verdict == "wrong" and c.run.error_type == "IndexError"
        assert "shape mismatch" in c.run.error and "[4], [3]" in c.run.error
        assert c.today_text.startswith("With the notes' shapes (tmp_a 4x3, tmp_b_inds of 3 values)")
        assert (
            "has shape (4, 3)" in c.today_text and "pairs only rows 0-2: [2, 3, 7]" in c.today_text
        )

    def test_chained_slices_write(self, callouts):
        c = callouts["chained_slice_assignment"]
        assert c.verdict == "wrong" and c.run.output.splitlines() == ["-7", "False"]
        assert c.today_text.startswith("a[1:][0][2] = -7 wrote into a: a[1][2] is now -7")
        assert "b holds -7: False" in c.today_text

    def test_today_follows_the_run(self, monkeypatch):
        """The sentence is chosen from the run: a different torch result changes it."""
        monkeypatch.setattr(ix, "CHAINED_SLICE_CODE", "print(5)\nprint(False)")
        assert ix._chained_slice_callout().today_text.startswith(
            "a[1:][0][2] = -7 left a[1][2] at 5"
        )
        monkeypatch.setattr(ix, "GATHER_DUPLICATES_CODE", "raise RuntimeError('unique please')")
        assert "refuses repeated index values" in ix._gather_unique_callout().today_text
        monkeypatch.setattr(ix, "GATHER_ERROR_CODE", "print('ok')")
        assert "no longer raises" in ix._gather_error_callout().today_text
        monkeypatch.setattr(ix, "PITFALL1_RECIPE_CODE", "print('(4, 3)')\nprint('[1]')")
        assert ix._pitfall1_recipe_callout().today_text.startswith("The recipe ran without error")


class TestTranslatableTexts:
    """The texts the page translates keep their English and carry their template (issue 15)."""

    def test_menu_labels_are_written_out(self):
        for p in ix.PRESETS:
            source = f"notes {p.ref}" if p.verbatim else f"variation of notes {p.ref}"
            assert p.menu_label == p.menu == f"{p.title} · {source}"
        with pytest.raises(ValueError, match="menu of 'x'"):
            dataclasses.replace(ix.PRESETS[0], key="x", menu="x · notes 002:921")
        assert all(ix.PITFALL_LABELS[n] == f"{n}. {t}" for n, t in ix.PITFALL_TITLES.items())

    def test_errors_and_explanations_are_templates(self):
        with pytest.raises(ix.IndexingError) as info:
            ix.parse_tensor("[[1, 2], [3]]", "input")
        message = info.value.args[0]
        assert isinstance(message, T) and message.template.startswith("{name} is ragged")
        assert str(message).startswith("input is ragged")
        trace = ix.trace_gather(torch.tensor([[1, 2, 3]]), 1, torch.tensor([[2, 0]]))
        note = ix.explain_element(trace, (0, 0)).note
        assert isinstance(note, T) and note == (
            "gather keeps every coordinate of out[0][0] except dim 1, which it reads from "
            "index[0][0] = 2."
        )

    def test_torch_refusal_keeps_its_hint_apart(self):
        with pytest.raises(ix.IndexingError) as info:
            ix.trace_gather(torch.tensor([[1, 2, 3]]), 1, torch.tensor([[3]]))
        err = info.value
        assert err.torch_error and str(err).startswith(f"torch refused: {err.torch_error}. ")
        assert isinstance(err.hint, T) and str(err).endswith(str(err.hint))
