"""Tests for lessons/indexing/presets.py, cases.py, snippets.py and examples.py: presets match
the notes, every snippet reproduces what the page shows, random examples are valid."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.indexing import cases, examples, presets


def _exec(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<snippet>", "exec"), namespace)
    return namespace


# ------------------------------------------------------------------------------ presets & snippets
class TestPresets:
    @pytest.mark.parametrize("preset", presets.PRESETS, ids=lambda p: p.key)
    def test_matches_reference(self, preset):
        run = presets.run_preset(preset)
        ns = _exec(run.snippet)
        if preset.notes_error:
            assert preset.expected is None
            assert run.trace is None
            assert run.error.torch_error == "index 3 is out of bounds for dimension 1 with size 3"
            assert ns["error"] == run.error.torch_error
            return
        assert run.error is None
        cmp = presets.compare_with_notes(preset, run.trace)
        assert cmp.matches and not cmp.mismatches and cmp.dtype_ok
        assert torch.equal(ns["out"], run.trace.result)
        assert ns["out"].dtype == run.trace.result.dtype == preset.expected_dtype
        if run.group is not None:
            assert torch.equal(ns["means"], run.group.means)
            assert run.group.sums.tolist() == [4.0, 6.0, 11.0]
            assert run.group.means.tolist() == [2.0, 3.0, 5.5]
            assert run.group.counts.tolist() == [2, 2, 2]
            assert run.group.agree

    @pytest.mark.parametrize("preset", presets.PRESETS, ids=lambda p: p.key)
    def test_notes_code_runs_and_agrees(self, preset):
        """The notes' own code (shown on the page) runs as-is and gives the page's result."""
        ns = _exec(preset.notes_code)
        got = ns[preset.notes_result]
        run = presets.run_preset(preset)
        if preset.notes_error:
            assert got == run.error.torch_error
            return
        got = torch.as_tensor(got)
        if preset.key == "group_means":  # the notes divide the sums by the group sizes
            assert torch.equal(got, run.group.means)
        else:
            assert torch.equal(got, run.trace.result) and got.dtype == run.trace.result.dtype
        live = presets.run_notes_code(preset.key)
        assert live.error is None and live.output

    def test_presets_cite_the_notes(self):
        for preset in presets.PRESETS:
            assert preset.notes_ref.file in ("002", "004"), preset.key
            assert preset.notes_code.startswith("import"), preset.key
            if not preset.verbatim:
                assert preset.notes_code_changes, preset.key  # says what differs
        variations = [p.key for p in presets.PRESETS if not p.verbatim]
        assert variations == ["one_hot_resize"]
        with pytest.raises(ValueError, match="a notes reference looks like"):
            presets.Preset("k", "t", "gather", "[1]", "[0]", "", 0, ref="notes 2", verbatim=True)

    def test_compare_with_notes(self):
        y2 = presets.PRESETS_BY_KEY["scatter_y2"]
        trace = presets.run_preset(y2).trace
        # the other duplicate write winning changes only the collided cell: reported as such
        other = trace.result.clone()
        other[0, 0] = trace.operands["src"][0, 0]
        cmp = presets.compare_with_notes(y2, dataclasses.replace(trace, result=other))
        assert not cmp.matches and cmp.mismatches == ((0, 0),) and cmp.only_at_collisions
        # printed precision: 4 decimals -> atol 5e-5
        near = trace.result.clone()
        near[1, 1] += 4e-5
        assert presets.compare_with_notes(y2, dataclasses.replace(trace, result=near)).matches
        near[1, 1] += 2e-5
        cmp = presets.compare_with_notes(y2, dataclasses.replace(trace, result=near))
        assert cmp.mismatches == ((1, 1),) and not cmp.only_at_collisions and cmp.atol == 5e-5
        # dtype is part of the notes' output: float 6. is not int 6
        p6 = presets.PRESETS_BY_KEY["scatter_scalar_6"]
        t6 = presets.run_preset(p6).trace
        as_int = dataclasses.replace(t6, result=t6.result.long())
        assert not presets.compare_with_notes(p6, as_int).dtype_ok
        assert not presets.compare_with_notes(p6, as_int).matches
        assert presets.compare_with_notes(presets.PRESETS_BY_KEY["gather_out_of_range"], t6) is None

    @pytest.mark.parametrize(
        ("dest", "src", "means"),
        [
            ("[0, 0, 0]", "[1, 2, 3, 4]", [2.0, 3.0]),  # int src: the snippet must still run
            ("[0.0, 0.0, 0.0, 0.0]", "[1.0, 2.0, 3.0, 5.0]", [2.0, 3.5]),
        ],
    )
    def test_group_means_snippet_reproduces(self, dest, src, means):
        trace, err, snippet = cases.run_case("scatter", dest, "[0, 1, 0, 1]", src, 0, "add")
        gm = cases.group_means_for(trace)
        assert err is None and gm is not None and gm.means.tolist()[:2] == means
        ns = _exec(snippet + cases.GROUP_MEANS_SNIPPET)
        assert torch.equal(ns["means"], gm.means[ns["groups"]])
        assert torch.equal(ns["means_reduce"][ns["groups"]], gm.means_reduce[ns["groups"]])

    def test_group_means_need_a_zero_dest(self):
        # out = dest + group sums: dividing by the counts is no mean when dest is not zero
        trace, _, _ = cases.run_case(
            "scatter", "[10, 0, 0]", "[0, 1, 0, 1]", "[1, 2, 3, 4]", 0, "add"
        )
        assert cases.group_means_for(trace) is None
        trace, _, _ = cases.run_case(
            "scatter", "[0, 0, 0]", "[0, 1, 0, 1]", "[1, 2, 3, 4]", 0, "sum"
        )
        assert cases.group_means_for(trace) is None
        assert cases.group_means_for(presets.run_preset("group_means").trace) is not None

    def test_preset_is_loaded(self):
        p = presets.PRESETS_BY_KEY["gather"]
        assert presets.preset_is_loaded(p, "gather", [p.first, p.index, ""], 1)
        assert not presets.preset_is_loaded(p, "gather", [p.first, "[[1, 1], [2, 0]]", ""], 1)
        assert not presets.preset_is_loaded(p, "scatter", [p.first, p.index, ""], 1)
        g = presets.PRESETS_BY_KEY["group_means"]
        texts = [g.first, g.index, g.src]
        assert presets.preset_is_loaded(g, "scatter", texts, 0, "scatter_add", False)
        assert not presets.preset_is_loaded(g, "scatter", texts, 0, "add", True)
        assert not presets.preset_is_loaded(g, "scatter", texts, 0, None, True)

    def test_exception(self):
        with pytest.raises(ValueError, match="unknown preset 'nope'"):
            presets.run_preset("nope")

    @settings(max_examples=25, deadline=None)
    @given(st.sampled_from(["gather", "scatter"]), st.integers(1, 3), st.integers(0, 2**31))
    def test_random_cases_are_valid_and_snippets_reproduce(self, op, ndim, seed):
        texts = examples.random_case(op, ndim, seed)
        assert texts == examples.random_case(op, ndim, seed)  # reproducible from the seed
        trace, err, snippet = cases.run_case(
            op, texts["first"], texts["index"], texts["src"], int(texts["dim"])
        )
        assert err is None, err
        assert trace.result.dim() == ndim
        assert torch.equal(_exec(snippet)["out"], trace.result)


class TestPageWords:
    def test_page_values(self):
        values = presets.PRESETS_BY_KEY["scatter_y2"].page_values()
        assert values["op"] == "scatter" and values["dim"] == 0 and values["reduce"] == "none"
        assert set(values) == {"op", "first", "index", "src", "dim", "reduce", "include_self"}
        assert presets.PRESETS_BY_KEY["group_means"].page_values()["reduce"] == "scatter_add"

    def test_source_note(self):
        error = presets.source_note(presets.PRESETS_BY_KEY["gather_out_of_range"])
        assert error.startswith("From the notes 002:1041, verbatim: the same call.")
        unprinted = presets.source_note(presets.PRESETS_BY_KEY["group_means"])
        assert "The notes print no output for it" in unprinted
        assert unprinted.args["ref"].template == "notes {ref}"  # translated with the page
        assert presets.source_note(presets.PRESETS_BY_KEY["gather"]) is None  # usual citation
        assert presets.source_note(presets.PRESETS_BY_KEY["one_hot_resize"]) is None

    def test_notes_verdict(self):
        gather = presets.PRESETS_BY_KEY["gather"]
        ok, message = presets.notes_verdict(gather, presets.run_preset(gather).trace)
        assert ok and message.startswith(
            "Matches the documented output (notes 002:1035), compared exactly, dtype int64"
        )
        y1 = presets.PRESETS_BY_KEY["scatter_y1"]
        ok, message = presets.notes_verdict(y1, presets.run_preset(y1).trace)
        assert ok and "to the printed 4 decimals (atol 5e-05)" in message
        means = presets.PRESETS_BY_KEY["group_means"]
        ok, message = presets.notes_verdict(means, presets.run_preset(means).trace)
        assert ok and message.startswith("Matches what the notes' code gives")
        y2 = presets.PRESETS_BY_KEY["scatter_y2"]
        trace = presets.run_preset(y2).trace
        other = trace.result.clone()
        other[0, 0] = trace.operands["src"][0, 0]
        ok, message = presets.notes_verdict(y2, dataclasses.replace(trace, result=other))
        assert not ok and "only at collided cell(s) out[0][0]" in message
        p6 = presets.PRESETS_BY_KEY["scatter_scalar_6"]
        t6 = presets.run_preset(p6).trace
        ok, message = presets.notes_verdict(p6, dataclasses.replace(t6, result=t6.result.long()))
        assert not ok and "dtype int64 instead of float32" in message
        variation = presets.PRESETS_BY_KEY["one_hot_resize"]
        assert presets.notes_verdict(variation, presets.run_preset(variation).trace) is None

    def test_random_values_and_examples(self):
        values = examples.random_values("scatter", 2, 5)
        assert values["dim"] == int(examples.random_case("scatter", 2, 5)["dim"])
        assert values["reduce"] == "none" and {"first", "index", "src"} <= set(values)
        label = next(iter(examples.INDEX_PRESETS))
        assert examples.example_for_expression("1:,   ::2") == label  # spacing aside
        assert examples.example_for_expression("0, 1:3") == examples.CUSTOM_EXAMPLE
