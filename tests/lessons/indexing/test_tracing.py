"""Tests for lessons/indexing/tracing.py: the links of gather, scatter and x[...] agree with
torch, and the notes callouts about them are decided by today's torch."""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.text import T
from lessons.indexing import (
    cases,
    examples,
    explanation,
    parsing,
    presets,
    seeded_pitfalls,
    snippets,
    tracing,
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
def scatter_cases(draw, reduces=tracing.SCATTER_REDUCES):
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
        t = tracing.trace_gather(
            torch.tensor([[1, 2, 3], [4, 5, 6]]), 1, torch.tensor([[0, 0], [2, 0]])
        )
        assert t.result.tolist() == [[1, 1], [6, 4]]
        assert t.links == [((0, 0), (0, 0)), ((0, 1), (0, 0)), ((1, 0), (1, 2)), ((1, 1), (1, 0))]

    def test_exception(self):
        x = torch.tensor([[1, 2, 3], [4, 5, 6]])
        with pytest.raises(ValueError, match=r"dim=2 is out of range .* between -2 and 1"):
            tracing.trace_gather(x, 2, torch.tensor([[0]]))
        with pytest.raises(ValueError, match=r"float.*int64"):
            tracing.trace_gather(x, 1, torch.tensor([[0.0, 1.0]]))
        with pytest.raises(ValueError, match=r"index has 1 dim\(s\) but input has 2"):
            tracing.trace_gather(x, 1, torch.tensor([0, 2]))
        with pytest.raises(ValueError, match=r"index.size\(0\) = 3 is larger than input.size\(0\)"):
            tracing.trace_gather(x, 1, torch.zeros(3, 1, dtype=torch.int64))
        with pytest.raises(parsing.IndexingError) as info:
            tracing.trace_gather(x, 1, torch.tensor([[0, 0], [3, 0]]))
        assert info.value.torch_error == "index 3 is out of bounds for dimension 1 with size 3"
        assert "0..2" in str(info.value)
        with pytest.raises(parsing.IndexingError, match="no negative") as info:
            tracing.trace_gather(x, 1, torch.tensor([[0, -1], [0, 0]]))
        assert "-1" in info.value.torch_error

    def test_matches_reference(self):
        rng = np.random.default_rng(0)
        a = rng.integers(0, 100, (3, 4, 5))
        idx = rng.integers(0, 4, (3, 6, 5))
        t = tracing.trace_gather(torch.from_numpy(a), 1, torch.from_numpy(idx))
        np.testing.assert_array_equal(t.result.numpy(), np.take_along_axis(a, idx, axis=1))

    def test_duplicates(self):
        t = tracing.trace_gather(torch.tensor([5, 6, 7]), 0, torch.tensor([2, 2, 2, 0]))
        assert t.result.tolist() == [7, 7, 7, 5]
        assert [i for _, i in t.links] == [(2,), (2,), (2,), (0,)]

    @PROPERTY
    @given(gather_cases())
    def test_links_rebuild_result(self, case):
        x, dim, index = case
        t = tracing.trace_gather(x, dim, index)
        assert torch.equal(t.result, torch.gather(x, dim, index))
        assert len(t.links) == t.result.numel()
        assert {o for o, _ in t.links} == set(tracing.positions(t.result.shape))
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
        t = tracing.trace_scatter(torch.zeros(2, 4), 1, torch.tensor([[2], [3]]), 1.23)
        assert t.result[0, 2].item() == pytest.approx(1.23)
        assert t.links == [((0, 0), (0, 2)), ((1, 0), (1, 3))]
        assert t.scalar_src and not t.collisions

    def test_exception(self):
        dest = torch.zeros(3, 5)
        idx = torch.tensor([[0, 1], [2, 0]])
        with pytest.raises(ValueError, match="reduce='max' is not supported"):
            tracing.trace_scatter(dest, 0, idx, torch.ones(2, 2), "max")
        with pytest.raises(ValueError, match="dtype torch.int64 but dest has torch.float32"):
            tracing.trace_scatter(dest, 0, idx, torch.ones(2, 2, dtype=torch.int64))
        with pytest.raises(ValueError, match="src has 1 dim"):
            tracing.trace_scatter(dest, 0, idx, torch.ones(4))
        with pytest.raises(ValueError, match=r"index.size\(1\) = 2 is larger than src.size\(1\)"):
            tracing.trace_scatter(dest, 0, idx, torch.ones(2, 1))
        with pytest.raises(ValueError, match="needs a tensor src"):
            tracing.trace_scatter(dest, 0, idx, 1.0, "sum")
        with pytest.raises(ValueError, match=r"dim=-3 is out of range"):
            tracing.trace_scatter(dest, -3, idx, 1.0)
        with pytest.raises(parsing.IndexingError) as info:
            tracing.trace_scatter(dest, 0, torch.tensor([[0, 5]]), torch.ones(1, 2))
        assert info.value.torch_error == "index 5 is out of bounds for dimension 0 with size 3"

    def test_matches_reference(self):
        src = torch.arange(1, 11).reshape(2, 5)
        t = tracing.trace_scatter(
            torch.zeros(3, 5, dtype=src.dtype), 0, torch.tensor([[0, 1, 2, 0]]), src
        )
        assert t.result.tolist() == [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]]
        t = tracing.trace_scatter(
            torch.full((2, 4), 2.0), 1, torch.tensor([[2], [3]]), 1.23, "multiply"
        )
        assert t.result[0, 2].item() == pytest.approx(2.46)

    def test_collisions_and_winner(self):
        t = presets.run_preset("scatter_y2").trace
        # the notes' y2 (002:926): only column 0 collides (002:940)
        assert set(t.collisions) == {(0, 0)}
        assert t.collisions[(0, 0)] == ((0, 0), (1, 0))
        for d, w in t.winners.items():
            assert torch.equal(t.result[d], t.operands["src"][w])

    def test_float_scalar_into_int_dest(self):
        # the page promotes an int dest to float32, so 1.23 is written as 1.23, not 1
        trace, err, snippet = cases.run_case(
            "scatter", "[[0, 0, 0], [0, 0, 0]]", "[[2], [0]]", "1.23", 1
        )
        assert err is None and trace.result.dtype == torch.float32
        assert trace.result[0, 2].item() == pytest.approx(1.23)
        assert explanation.explain_element(trace, (0, 2)).formula == "out[0][2] = scalar = 1.23"
        assert torch.equal(_exec(snippet)["out"], trace.result)
        # called directly, torch truncates; the formula says so instead of claiming 1.23
        t = tracing.trace_scatter(torch.zeros(2, dtype=torch.int64), 0, torch.tensor([1]), 1.23)
        assert t.result.tolist() == [0, 1]
        assert (
            explanation.explain_element(t, (1,)).formula
            == "out[1] = scalar = 1.23 (cast to int64: 1)"
        )

    def test_scatter_add_mode(self):
        t = tracing.trace_scatter(
            torch.zeros(3), 0, torch.tensor([0, 1, 0, 1, 2, 2]), torch.arange(1.0, 7.0),
            "scatter_add",
        )  # fmt: skip
        assert t.result.tolist() == [4.0, 6.0, 11.0]
        assert t.call == "dest.clone().scatter_add_(0, index, src)" and not t.warnings
        with pytest.raises(ValueError, match="scatter_add_ needs a tensor src, got the scalar 2"):
            tracing.trace_scatter(torch.zeros(3), 0, torch.tensor([0]), 2, "scatter_add")
        _, err, snippet = cases.run_case("scatter", "[0, 0]", "[1, 1]", "[2, 3]", 0, "scatter_add")
        assert err is None and _exec(snippet)["out"].tolist() == [0, 5]

    def test_legacy_reduce_warning_is_reported(self):
        t = tracing.trace_scatter(
            torch.zeros(3), 0, torch.tensor([0, 0]), torch.ones(2), "multiply"
        )
        assert any("deprecated" in w for w in t.warnings)

    @PROPERTY
    @given(scatter_cases())
    def test_links_rebuild_result(self, case):
        dest, dim, index, src, reduce, include_self = case
        t = tracing.trace_scatter(dest, dim, index, src, reduce, include_self=include_self)
        assert len(t.links) == index.numel()
        assert [s for s, _ in t.links] == list(tracing.positions(index.shape))
        rebuilt, groups, cands = _rebuild_scatter(dest, src, t.links, reduce, include_self, False)
        assert t.collisions == {d: tuple(v) for d, v in groups.items() if len(v) > 1}
        untouched = [p for p in tracing.positions(dest.shape) if p not in groups]
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
        t = tracing.trace_scatter(dest, dim, index, value, reduce)
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
        t = tracing.trace_index(x, (slice(1, None), slice(None, None, 2)))
        assert t.result.tolist() == [[4, 6], [8, 10]]
        assert t.is_view and t.storage.result_offset == 4 and t.storage.result_stride == (4, 2)
        assert t.links[1] == ((0, 1), (1, 2))

    def test_exception(self):
        x = torch.arange(12).reshape(3, 4)
        with pytest.raises(ValueError, match="float"):
            tracing.trace_index(x, (torch.tensor([0.5]),))
        with pytest.raises(parsing.IndexingError) as info:
            tracing.trace_index(x, (5,))
        assert "out of bounds" in info.value.torch_error
        with pytest.raises(parsing.IndexingError, match="too many indices"):
            tracing.trace_index(x, (0, 0, 0))
        with pytest.raises(ValueError, match="float"):
            parsing.parse_index_expression(":, 1.5")
        with pytest.raises(ValueError, match="not supported"):
            parsing.parse_index_expression("__import__('os')")
        with pytest.raises(ValueError, match="empty"):
            parsing.parse_index_expression("  ")
        # the message names the offending piece (it used to speak of slices for a list)
        with pytest.raises(ValueError, match=r"'\[False\]\*4' is not a whole number"):
            parsing.parse_index_expression("[[True, False], [False]*4]")
        with pytest.raises(ValueError, match=r"'\+1' is not a whole number"):
            parsing.parse_index_expression("+1:")

    def test_parse_index_expression(self):
        items = parsing.parse_index_expression("..., -1:, None, [[0], [2]], [True, False]")
        assert items[0] is Ellipsis and items[1] == slice(-1, None, None) and items[2] is None
        assert items[3].dtype == torch.int64 and items[3].shape == (2, 1)
        assert items[4].dtype == torch.bool

    def test_view_vs_copy_by_storage(self):
        x = torch.arange(12.0).reshape(3, 4)
        views = {
            "1:, ::2": True,
            "1": True,
            "..., -1": True,
            ":, [0, 2]": False,
            "[True, False, True]": False,
            "[0, 2], [1, 3]": False,
        }
        for expr, view in views.items():
            t = tracing.trace_index(x, parsing.parse_index_expression(expr))
            assert t.is_view is view, expr
            assert (t.storage.source_ptr == t.storage.result_ptr) is view
            assert _writes_through(x, parsing.parse_index_expression(expr)) is view
        # a 0-d integer tensor is basic indexing in torch: measured, not assumed
        t = tracing.trace_index(x, (torch.tensor(1),))
        assert t.is_view is _writes_through(x, torch.tensor(1))

    @PROPERTY
    @given(index_cases())
    def test_links_rebuild_result(self, case):
        x, items = case
        try:
            expected = x[items]
        except (IndexError, RuntimeError):
            with pytest.raises(parsing.IndexingError):
                tracing.trace_index(x, items)
            return
        t = tracing.trace_index(x, items)
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
        t = tracing.trace_index(x, (slice(None), *items))
        assert torch.equal(t.result, x[:, torch.tensor([True, False, True]), :])
        items = (torch.tensor([1, 0]), torch.tensor([True, False, True]))
        t = tracing.trace_index(x, items)  # list (2,) broadcasts with the mask's 2 hits
        assert torch.equal(t.result, x[torch.tensor([1, 0]), torch.tensor([True, False, True])])
        assert [i for _, i in t.links][:2] == [(1, 0, 0), (1, 0, 1)]

    def test_run_index_case_limits(self):
        _, err, _ = cases.run_index_case(examples.INDEX_DEFAULT_X, "None, None, None")
        assert "draws up to 3 dims" in str(err)
        _, err, _ = cases.run_index_case(
            examples.INDEX_DEFAULT_X, "[" + ", ".join(["0"] * 60) + "]"
        )
        assert "draws up to 128" in str(err)
        t, err, snippet = cases.run_index_case(examples.INDEX_DEFAULT_X, "1, 2")
        assert err is None and t.result.dim() == 0 and t.is_view
        assert explanation.explain_element(t, ()).formula == "out = x[1][2] = 6"

    def test_snippet_reproduces(self):
        x = torch.arange(12).reshape(3, 4)
        for expr in examples.INDEX_PRESETS.values():
            items = parsing.parse_index_expression(expr)
            t = tracing.trace_index(x, items)
            ns = _exec(snippets.index_snippet(x, items))
            assert torch.equal(ns["out"], t.result) and ns["is_view"] is t.is_view, expr


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_scatter_and_prechecked_range():
    dest = torch.zeros(3, device="cuda")
    t = tracing.trace_scatter(
        dest,
        0,
        torch.zeros(64, dtype=torch.int64, device="cuda"),
        torch.arange(64.0, device="cuda"),
    )
    assert t.collisions[(0,)] == tuple((k,) for k in range(64))
    assert t.result[0].item() in set(range(64))
    with pytest.raises(parsing.IndexingError, match="out of range"):  # no device assert
        tracing.trace_gather(
            torch.ones(2, 3, device="cuda"), 1, torch.tensor([[0, 3]], device="cuda")
        )
    assert torch.cuda.synchronize() is None


# ------------------------------------------------------------------------------ notes callouts
class TestNotesCallouts:
    @pytest.fixture(scope="class")
    def callouts(self):
        return {c.key: c for c in tracing.notes_callouts()}

    def test_smoke(self, callouts):
        assert list(callouts) == [
            "gather_unique_rows",
            "gather_error_text",
            "pitfall1_arange_recipe",
            "chained_slice_assignment",
        ]
        wanted = set(tracing.PRESET_CALLOUTS.values()) | set(tracing.PITFALL_CALLOUTS.values())
        assert {k for keys in wanted for k in keys} == set(callouts)

    def test_gather_allows_duplicates(self, callouts):
        c = callouts["gather_unique_rows"]
        assert c.verdict == "wrong" and str(c.ref) == "002:1056"
        assert not c.run.raised and c.run.output == "[[1, 1], [6, 4]]"
        assert c.today_text.startswith("gather accepts repeated values in a row")
        assert "gave [[1, 1], [6, 4]]" in c.today_text

    def test_gather_error_text(self, callouts):
        c = callouts["gather_error_text"]
        assert c.verdict == "out of date" and c.quote_zh == tracing.NOTES_GATHER_ERROR
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
        monkeypatch.setattr(tracing, "CHAINED_SLICE_CODE", "print(5)\nprint(False)")
        assert tracing._chained_slice_callout().today_text.startswith(
            "a[1:][0][2] = -7 left a[1][2] at 5"
        )
        monkeypatch.setattr(
            tracing, "GATHER_DUPLICATES_CODE", "raise RuntimeError('unique please')"
        )
        assert "refuses repeated index values" in tracing._gather_unique_callout().today_text
        monkeypatch.setattr(tracing, "GATHER_ERROR_CODE", "print('ok')")
        assert "no longer raises" in tracing._gather_error_callout().today_text
        monkeypatch.setattr(tracing, "PITFALL1_RECIPE_CODE", "print('(4, 3)')\nprint('[1]')")
        assert tracing._pitfall1_recipe_callout().today_text.startswith(
            "The recipe ran without error"
        )


class TestTranslatableTexts:
    """The texts the page translates keep their English and carry their template."""

    def test_menu_labels_are_written_out(self):
        for p in presets.PRESETS:
            source = f"notes {p.ref}" if p.verbatim else f"variation of notes {p.ref}"
            assert p.menu_label == p.menu == f"{p.title} · {source}"
        with pytest.raises(ValueError, match="menu of 'x'"):
            dataclasses.replace(presets.PRESETS[0], key="x", menu="x · notes 002:921")
        assert all(
            seeded_pitfalls.PITFALL_LABELS[n] == f"{n}. {t}"
            for n, t in seeded_pitfalls.PITFALL_TITLES.items()
        )

    def test_errors_and_explanations_are_templates(self):
        with pytest.raises(parsing.IndexingError) as info:
            parsing.parse_tensor("[[1, 2], [3]]", "input")
        message = info.value.args[0]
        assert isinstance(message, T) and message.template.startswith("{name} is ragged")
        assert str(message).startswith("input is ragged")
        trace = tracing.trace_gather(torch.tensor([[1, 2, 3]]), 1, torch.tensor([[2, 0]]))
        note = explanation.explain_element(trace, (0, 0)).note
        assert isinstance(note, T) and note == (
            "gather keeps every coordinate of out[0][0] except dim 1, which it reads from "
            "index[0][0] = 2."
        )

    def test_torch_refusal_keeps_its_hint_apart(self):
        with pytest.raises(parsing.IndexingError) as info:
            tracing.trace_gather(torch.tensor([[1, 2, 3]]), 1, torch.tensor([[3]]))
        err = info.value
        assert err.torch_error and str(err).startswith(f"torch refused: {err.torch_error}. ")
        assert isinstance(err.hint, T) and str(err).endswith(str(err.hint))

    def test_every_torch_refusal_translates_with_one_tr(self):
        """x[...]'s hint is a fixed sentence; it is a template too, so the message is a T
        whose values are torch's words (kept) and the hint (translated)."""
        with pytest.raises(parsing.IndexingError) as info:
            tracing.trace_index(torch.arange(3), (torch.tensor([5]),))
        err = info.value
        assert (
            isinstance(err.hint, T)
            and not err.hint.args
            and err.hint.template.startswith("Check that every integer lies in -size..size-1")
        )
        assert err.args[0].args == {"text": err.torch_error, "hint": err.hint}
