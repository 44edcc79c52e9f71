"""Tests for lessons/batchnorm/notes_demos.py: the notes' BatchNorm lessons run live (the
formula, a batch of one and drop_last, evaluating twice), each with its script."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from core.notes import run_live
from lessons.batchnorm.layer import SimConfig
from lessons.batchnorm.notes_demos import (
    batch_of_one,
    batch_of_one_snippet,
    clamp_element,
    drop_last_snippet,
    explain_loader,
    formula_check,
    formula_latex,
    formula_snippet,
    loader_run,
    loader_snippet,
    repeated_eval,
    repeated_eval_config,
    repeated_eval_snippet,
)
from lessons.batchnorm.stream import Stream, sample_batch

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))
TORCH_ONE_VALUE = "Expected more than 1 value per channel when training"


class TestFormulaCheck:
    @pytest.mark.parametrize("spatial,index", [((), (5, 2, 0)), ((6,), (3, 1, 4)),
                                               ((4, 4), (7, 0, 13))])
    def test_matches_reference(self, spatial, index):
        x = sample_batch(DEFAULT_STREAM, 2, 8, spatial, seed=1)
        sample, channel, position = index
        check = formula_check(x, sample=sample, channel=channel, position=position, eps=1e-3,
                              weight=1.5, bias=0.25)
        # the real module, built independently of formula_check
        module = (nn.BatchNorm2d if len(spatial) == 2 else nn.BatchNorm1d)(3, eps=1e-3).train()
        with torch.no_grad():
            module.weight.fill_(1.5)
            module.bias.fill_(0.25)
            y = module(x)
        element = y[sample, channel].flatten()[position]
        assert check.y_module == element.item()
        torch.testing.assert_close(torch.tensor(check.y_formula, dtype=torch.float32), element)
        assert check.matches and check.ulps < 16
        # the formula with the *unbiased* variance is not what the module computes
        assert not check.matches_unbiased
        dims = [0, *range(2, x.dim())]
        assert check.mean == pytest.approx(x.double().mean(dims)[channel].item(), rel=1e-12)
        assert check.var_biased == pytest.approx(
            x.double().var(dims, correction=0)[channel].item(), rel=1e-12)
        assert check.n == 8 * int(np.prod(spatial))
        assert check.var_unbiased == pytest.approx(check.var_biased * check.n / (check.n - 1))
        assert check.x == x[sample, channel].flatten()[position].item()

    def test_affine_false(self):
        x = sample_batch(DEFAULT_STREAM, 0, 4, (2, 2))
        check = formula_check(x, sample=0, channel=0, eps=1e-5)
        assert check.weight is None and check.matches
        assert check.y_formula == pytest.approx(
            (check.x - check.mean) / math.sqrt(check.var_biased + 1e-5))

    def test_exception(self):
        x = torch.randn(4, 3)
        with pytest.raises(ValueError, match=r"sample must be an integer in \[0, 3\], got 4"):
            formula_check(x, sample=4, channel=0)
        with pytest.raises(ValueError, match=r"position must be an integer in \[0, 0\], got 1"):
            formula_check(x, sample=0, channel=0, position=1)
        with pytest.raises(ValueError, match="give both weight and bias"):
            formula_check(x, sample=0, channel=0, weight=1.0)
        with pytest.raises(ValueError, match="eps must be > 0"):
            formula_check(x, sample=0, channel=0, eps=0.0)
        with pytest.raises(ValueError, match=TORCH_ONE_VALUE):
            formula_check(torch.randn(1, 3), sample=0, channel=0)

    def test_snippet_runs_and_agrees(self):
        config = SimConfig(stream=DEFAULT_STREAM, batch_size=8, spatial=(4, 4), eps=1e-3)
        run = run_live(formula_snippet(config, 2, sample=5, channel=1, position=7, weight=2.0,
                                       bias=-1.0))
        assert not run.raised, run.error
        x = sample_batch(DEFAULT_STREAM, 2, 8, (4, 4))
        check = formula_check(x, sample=5, channel=1, position=7, eps=1e-3, weight=2.0,
                              bias=-1.0)
        assert run.output.splitlines() == [
            f"x = {check.x:.7g}, E[x] = {check.mean:.7g}, Var[x] = {check.var_biased:.7g}",
            f"formula: {check.y_formula:.7g}, nn.BatchNorm2d: {check.y_module:.7g}, "
            f"|diff| = {check.abs_diff:.1e}",
        ]
        bare = run_live(formula_snippet(SimConfig(stream=DEFAULT_STREAM, spatial=()), 0,
                                        sample=0, channel=2))
        assert not bare.raised and "nn.BatchNorm1d" in bare.output


class TestBatchOfOne:
    @pytest.mark.parametrize("spatial_dims,shape", [(0, "[1, 3]"), (2, "[1, 3, 1, 1]")])
    def test_torch_error_live(self, spatial_dims, shape):
        result = batch_of_one(3, spatial_dims)
        assert result.train_error == (f"ValueError: {TORCH_ONE_VALUE}, got input size "
                                      f"torch.Size({shape})")
        assert len(result.eval_output) == 3  # eval() with running statistics works

    def test_snippet(self):
        run = run_live(batch_of_one_snippet(4, 2))
        assert not run.raised
        assert f"train(): ValueError: {TORCH_ONE_VALUE}, got input size torch.Size([1, 4, 1, 1])" \
            in run.output
        assert run.output.splitlines()[-1].startswith("eval(): [")

    def test_exception(self):
        with pytest.raises(ValueError, match="spatial_dims must be 0"):
            batch_of_one(3, 1)
        with pytest.raises(ValueError, match="channels must be an integer"):
            batch_of_one(0)


class TestDropLast:
    def test_last_batch_of_one_and_drop_last(self):
        without = loader_run(9, 4, drop_last=False)
        with_drop = loader_run(9, 4, drop_last=True)
        assert without.batch_sizes == (4, 4, 1)
        assert without.failed_batch == 2 and without.batches_trained == 2
        assert without.error == (f"ValueError: {TORCH_ONE_VALUE}, got input size "
                                 "torch.Size([1, 3])")
        assert with_drop.batch_sizes == (4, 4) and with_drop.error is None
        assert with_drop.dropped == 1 and with_drop.batches_trained == 2
        assert explain_loader(without, with_drop).startswith(
            "9 = 2 × 4 + 1: the last batch holds a single sample and training stops at batch 2")

    @pytest.mark.parametrize("size,batch,start", [
        (8, 4, "8 is a multiple of 4"),
        (10, 4, "The last batch holds 2 samples"),
        (5, 1, "Every batch holds one sample"),
        (1, 4, "1 = 0 × 4 + 1"),
    ])
    def test_explanations(self, size, batch, start):
        runs = [loader_run(size, batch, drop_last=d) for d in (False, True)]
        assert explain_loader(*runs).startswith(start)

    def test_batch_size_one_is_not_fixed_by_drop_last(self):
        run = loader_run(5, 1, drop_last=True)
        assert run.failed_batch == 0 and TORCH_ONE_VALUE in run.error

    def test_snippet(self):
        run = run_live(loader_snippet(9, 4))
        assert not run.raised
        assert run.output.splitlines() == [
            "drop_last=False: batch sizes [4, 4, 1]",
            f"  ValueError: {TORCH_ONE_VALUE}, got input size torch.Size([1, 3])",
            "drop_last=True: batch sizes [4, 4]",
            "  trained on every batch",
        ]

    def test_exception(self):
        with pytest.raises(ValueError, match=r"dataset size must be an integer in \[1, 1000\]"):
            loader_run(0, 4, drop_last=False)
        with pytest.raises(ValueError, match="batch size must be an integer"):
            loader_snippet(9, 1000)


class TestRepeatedEval:
    def test_untracked_depends_on_the_batch(self):
        config = SimConfig(stream=DEFAULT_STREAM, spatial=(4, 4))
        tracked, untracked = repeated_eval(config)
        assert tracked.track_running_stats and not untracked.track_running_stats
        assert tracked.verdict == "identical" and tracked.max_abs_diff == 0.0
        assert untracked.verdict == "differ" and untracked.max_abs_diff > 0.1
        assert untracked.batch_mates[0] != untracked.batch_mates[1]
        assert not torch.equal(*untracked.outputs)
        assert torch.equal(*tracked.outputs)

    def test_tracked_matches_the_real_module(self):
        """The tracked pass is plain eval() with the buffers of 30 training steps."""
        config = SimConfig(stream=DEFAULT_STREAM, spatial=(3,), seed=2)
        tracked, _ = repeated_eval(config, sample=5)
        module = nn.BatchNorm1d(3)
        with torch.no_grad():
            for k in range(30):
                module(sample_batch(DEFAULT_STREAM, k, 16, (3,), seed=2))
            expected = module.eval()(sample_batch(DEFAULT_STREAM, 30, 12, (3,), seed=2))[5]
        torch.testing.assert_close(tracked.outputs[0], expected)

    def test_whole_test_set_in_one_batch_is_rounding_only(self):
        _, untracked = repeated_eval(SimConfig(stream=DEFAULT_STREAM, spatial=(4, 4)),
                                     eval_batch=12)
        assert untracked.verdict in ("identical", "rounding")
        assert untracked.max_abs_diff < 1e-5

    def test_batch_of_one_in_eval_without_running_stats(self):
        tracked, untracked = repeated_eval(SimConfig(stream=DEFAULT_STREAM, spatial=()),
                                           eval_batch=11)
        assert tracked.verdict == "identical"
        assert untracked.verdict == "error" and TORCH_ONE_VALUE in untracked.error

    def test_injected_nan_is_left_out(self):
        stream = Stream(mean=(0.0,), std=(1.0,), nan_step=3)
        tracked, untracked = repeated_eval(SimConfig(stream=stream, spatial=(2,)))
        assert tracked.verdict == "identical" and untracked.verdict == "differ"

    def test_snippet_agrees(self):
        config = SimConfig(stream=DEFAULT_STREAM, spatial=(4, 4), seed=1, eps=1e-3)
        tracked, untracked = repeated_eval(config, eval_batch=3)
        run = run_live(repeated_eval_snippet(config, eval_batch=3))
        assert not run.raised, run.error
        assert run.output.splitlines() == [
            f"track_running_stats=True: max |pass 1 - pass 2| = {tracked.max_abs_diff:.3g}",
            f"track_running_stats=False: max |pass 1 - pass 2| = {untracked.max_abs_diff:.3g}",
        ]

    def test_exception(self):
        config = SimConfig(stream=DEFAULT_STREAM)
        with pytest.raises(ValueError, match=r"evaluation batch size must be an integer in "
                                             r"\[1, 12\], got 13"):
            repeated_eval(config, eval_batch=13)
        with pytest.raises(ValueError, match="sample must be in"):
            repeated_eval(config, sample=12)
        with pytest.raises(ValueError, match="keep it under"):
            repeated_eval(SimConfig(stream=DEFAULT_STREAM, spatial=(200, 200)))


class TestHelpers:
    def test_clamp_element(self):
        config = SimConfig(stream=DEFAULT_STREAM, batch_size=16, spatial=(4, 4))
        assert clamp_element(config, 3, 5) == (3, 5)
        assert clamp_element(config, 200, 99_999) == (15, 15)
        flat = SimConfig(stream=DEFAULT_STREAM, batch_size=4, spatial=())
        assert clamp_element(flat, 9, 7) == (3, 0)  # no spatial axes: position 0

    def test_formula_latex(self):
        x = sample_batch(DEFAULT_STREAM, 1, 4, (2, 2))
        check = formula_check(x, sample=1, channel=2, position=3, weight=1.5, bias=0.25)
        general, filled = formula_latex(check)
        assert general.endswith(r"\cdot\gamma + \beta")
        assert filled.startswith("y_{1,2,1,1} = ") and filled.endswith(f"= {check.y_formula:.7g}")
        assert r"\cdot 1.5 + 0.25" in filled
        bare, _ = formula_latex(formula_check(x, sample=0, channel=0))
        assert "gamma" not in bare

    def test_finite(self):
        x = sample_batch(Stream(mean=(0.0,), std=(1.0,), nan_step=0), 0, 4, (2,))
        assert not formula_check(x, sample=1, channel=0).finite
        assert formula_check(sample_batch(DEFAULT_STREAM, 0, 4, (2,)), sample=0, channel=0).finite

    def test_repeated_eval_config(self):
        config = SimConfig(stream=DEFAULT_STREAM, batch_size=64, spatial=(4, 4), eps=1e-3, seed=2)
        demo, notice = repeated_eval_config(config, 4, 2)
        assert demo == SimConfig(stream=DEFAULT_STREAM, spatial=(4, 4), eps=1e-3, seed=2)
        assert notice is None
        capped, notice = repeated_eval_config(config, 1000, 2)
        assert capped.spatial == (73, 73) and "capped at 73" in notice

    def test_drop_last_snippet(self):
        run = run_live(drop_last_snippet(3, 0, 9, 4))
        assert not run.raised, run.error
        assert run.output.splitlines()[0].startswith(f"train(): ValueError: {TORCH_ONE_VALUE}")
        assert "drop_last=True: batch sizes [4, 4]" in run.output
