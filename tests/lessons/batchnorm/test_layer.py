"""Tests for lessons/batchnorm/layer.py: the hand-written BatchNorm against nn.BatchNorm1d/2d,
its training on the stream (simulate and its cost model), and the notes callouts."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

from core.notes import NotesRef
from lessons.batchnorm.layer import (
    MAX_STEPS,
    NOTES_REFS,
    BNState,
    SimConfig,
    affordable_steps,
    estimate_simulate_seconds,
    manual_batchnorm,
    notes_callouts,
    simulate,
    simulate_config,
)
from lessons.batchnorm.real_modules import make_module, torch_error_for
from lessons.batchnorm.stream import Stream, sample_batch

TOL = {torch.float32: 1e-5, torch.float64: 1e-10}
DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))


def _assert_state_matches(state: BNState, module: nn.Module, tol: float) -> None:
    if module.running_mean is None:
        assert not state.tracked
        return
    torch.testing.assert_close(state.running_mean, module.running_mean, rtol=tol, atol=tol)
    torch.testing.assert_close(state.running_var, module.running_var, rtol=tol, atol=tol)
    assert state.num_batches_tracked == int(module.num_batches_tracked)


class TestManualBatchnorm:
    def test_smoke(self):
        x = torch.randn(8, 3, 5)
        y, state = manual_batchnorm(x, BNState.fresh(3), training=True, momentum=0.1, eps=1e-5)
        assert y.shape == x.shape and y.dtype == x.dtype
        assert state.num_batches_tracked == 1
        assert state.running_mean.shape == (3,)

    def test_fresh_state_is_like_a_new_module(self):
        state = BNState.fresh(4)
        bn = nn.BatchNorm1d(4)
        _assert_state_matches(state, bn, 0.0)
        untracked = BNState.fresh(4, track_running_stats=False)
        assert untracked.running_mean is None and untracked.num_batches_tracked is None
        by_kw = BNState(running_mean=torch.zeros(2), running_var=torch.ones(2),
                        num_batches_tracked=torch.tensor(3))
        assert by_kw.num_batches_tracked == 3

    def test_exception(self):
        state = BNState.fresh(3)
        with pytest.raises(ValueError, match=r"\(N, C\), \(N, C, L\) or \(N, C, H, W\)"):
            manual_batchnorm(torch.randn(3), state, training=True, momentum=0.1, eps=1e-5)
        with pytest.raises(ValueError, match="momentum must be in \\[0, 1\\].*got 1.5"):
            manual_batchnorm(torch.randn(4, 3), state, training=True, momentum=1.5, eps=1e-5)
        with pytest.raises(ValueError, match="eps must be a finite number >= 0, got -1"):
            manual_batchnorm(torch.randn(4, 3), state, training=True, momentum=0.1, eps=-1)
        with pytest.raises(ValueError, match="4 channels"):
            manual_batchnorm(torch.randn(4, 4), state, training=True, momentum=0.1, eps=1e-5)
        with pytest.raises(ValueError, match="weight must have shape \\(3,\\)"):
            manual_batchnorm(torch.randn(4, 3), state, training=True, momentum=0.1, eps=1e-5,
                             weight=torch.ones(2))
        with pytest.raises(ValueError, match="track_running_stats=False means there are no"):
            manual_batchnorm(torch.randn(4, 3), state, training=True, momentum=0.1, eps=1e-5,
                             track_running_stats=False)
        with pytest.raises(ValueError, match="all three buffers"):
            BNState(running_mean=torch.zeros(3), running_var=None, num_batches_tracked=0)

    @pytest.mark.parametrize("shape", [(1, 3), (1, 3, 1), (1, 3, 1, 1)])
    @pytest.mark.parametrize("training,track", [(True, True), (True, False), (False, False)])
    def test_one_value_per_channel_raises_like_torch(self, shape, training, track):
        x = torch.randn(shape)
        module = make_module(3, len(shape) - 2, track_running_stats=track).train(training)
        with pytest.raises(ValueError) as torch_err:
            module(x)
        with pytest.raises(ValueError) as our_err:
            manual_batchnorm(x, BNState.fresh(3, track_running_stats=track), training=training,
                             momentum=0.1, eps=1e-5, track_running_stats=track)
        assert str(our_err.value) == str(torch_err.value)
        assert "Expected more than 1 value per channel when training" in str(our_err.value)

    def test_one_value_per_channel_is_fine_in_eval_with_running_stats(self):
        x = torch.randn(1, 3)
        bn = nn.BatchNorm1d(3).eval()
        y, _ = manual_batchnorm(x, BNState.fresh(3), training=False, momentum=0.1, eps=1e-5)
        torch.testing.assert_close(y, bn(x).detach())

    def test_batch_of_one_with_spatial_positions_trains(self):
        # torch counts values per channel (N*H*W), not samples
        assert torch_error_for((1, 3, 2, 2)) is None
        assert "Expected more than 1 value" in torch_error_for((1, 3, 1, 1))

    def test_biased_for_output_unbiased_for_running_var(self):
        x = torch.tensor([[1.0], [3.0]], dtype=torch.float64)  # n = 2, mean 2, biased var 1
        y, state = manual_batchnorm(x, BNState.fresh(1, dtype=torch.float64), training=True,
                                    momentum=1.0, eps=1e-12)
        torch.testing.assert_close(y.flatten(), torch.tensor([-1.0, 1.0], dtype=torch.float64))
        assert state.running_var.item() == pytest.approx(2.0)  # unbiased: 1 * 2 / (2 - 1)
        assert state.running_mean.item() == pytest.approx(2.0)

    @pytest.mark.parametrize("shape", [(4, 2), (4, 2, 3)])
    def test_nan_and_inf_propagate_like_torch_without_warnings(self, shape):
        x = torch.randn(shape)
        x[0, 0] = float("nan")
        x[1, 1] = float("inf")
        module = nn.BatchNorm1d(2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. numpy's "invalid value encountered"
            y, state = manual_batchnorm(x, BNState.fresh(2), training=True, momentum=0.1,
                                        eps=1e-5)
        with torch.no_grad():
            torch.testing.assert_close(y, module(x), equal_nan=True)
        torch.testing.assert_close(state.running_mean, module.running_mean, equal_nan=True)
        torch.testing.assert_close(state.running_var, module.running_var, equal_nan=True)

    def test_does_not_modify_inputs(self):
        state = BNState.fresh(2)
        x = torch.randn(5, 2)
        x_copy = x.clone()
        manual_batchnorm(x, state, training=True, momentum=0.5, eps=1e-5)
        assert torch.equal(x, x_copy)
        assert torch.equal(state.running_mean, torch.zeros(2)) and state.num_batches_tracked == 0

    def test_not_using_f_batch_norm(self, monkeypatch):
        def boom(*args, **kwargs):
            raise AssertionError("F.batch_norm must not be used")

        monkeypatch.setattr(F, "batch_norm", boom)
        monkeypatch.setattr(torch, "batch_norm", boom)
        manual_batchnorm(torch.randn(4, 2), BNState.fresh(2), training=True, momentum=0.1,
                         eps=1e-5)

    @pytest.mark.parametrize("threads", [1, 3])
    @pytest.mark.parametrize("shape", [(2, 3), (3, 4), (64, 3), (300, 2), (2, 3, 1), (4, 3, 5),
                                       (2, 2, 3, 3)])
    def test_matches_reference_badly_conditioned(self, shape, threads):
        """Tiny spread next to the mean: y = x * alpha + beta cancels, so only the same
        arithmetic order as torch's kernel stays within 1e-5 (a textbook (x - mean) * invstd
        in float32 is off by up to ~1e-3 here)."""
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)  # (N, C) input is reduced in per-thread chunks
        try:
            gen = torch.Generator().manual_seed(sum(shape) + threads)
            channels = shape[1]
            module = make_module(channels, len(shape) - 2, momentum=0.3, eps=1e-8)
            with torch.no_grad():
                module.weight.copy_(torch.rand(channels, generator=gen) * 2 + 0.1)
                module.bias.copy_(torch.randn(channels, generator=gen))
            state = BNState.fresh(channels)
            for training in (True, True, False, True, False):
                x = 5.0 + 1e-3 * torch.randn(shape, generator=gen)
                module.train(training)
                with torch.no_grad():
                    expected = module(x)
                    y, state = manual_batchnorm(x, state, training=training, momentum=0.3,
                                                eps=1e-8, weight=module.weight,
                                                bias=module.bias)
                torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)
                _assert_state_matches(state, module, 1e-5)
        finally:
            torch.set_num_threads(previous)

    @settings(max_examples=300, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(
        data=st.data(),
        spatial_dims=st.sampled_from([0, 1, 2]),
        batch=st.integers(1, 5),
        channels=st.integers(1, 4),
        affine=st.booleans(),
        track=st.booleans(),
        momentum=st.one_of(st.none(), st.floats(0.0, 1.0)),
        eps=st.sampled_from([0.0, 1e-8, 1e-5, 1e-3, 0.1, 1.0, 3.0]),
        dtype=st.sampled_from([torch.float32, torch.float64]),
        modes=st.lists(st.booleans(), min_size=1, max_size=5),
        seed=st.integers(0, 2**16),
    )
    def test_matches_reference(self, data, spatial_dims, batch, channels, affine, track,
                               momentum, eps, dtype, modes, seed):
        """Output and all three buffers equal nn.BatchNorm1d/2d after every step."""
        spatial = tuple(data.draw(st.integers(1, 4), label=f"s{i}") for i in range(spatial_dims))
        if spatial_dims == 2 and data.draw(st.booleans(), label="square"):
            spatial = (spatial[0], spatial[0])
        shape = (batch, channels, *spatial)
        gen = torch.Generator().manual_seed(seed)
        module = make_module(channels, spatial_dims, momentum=momentum, eps=eps, affine=affine,
                             track_running_stats=track).to(dtype)
        if affine:  # non-trivial affine parameters
            with torch.no_grad():
                module.weight.copy_(torch.rand(channels, generator=gen, dtype=dtype) * 2 + 0.1)
                module.bias.copy_(torch.randn(channels, generator=gen, dtype=dtype))
        state = BNState.fresh(channels, track_running_stats=track, dtype=dtype)
        tol = TOL[dtype]
        for training in modes:
            offset = torch.randn(1, channels, *([1] * spatial_dims), generator=gen, dtype=dtype)
            x = offset * 3 + torch.randn(shape, generator=gen, dtype=dtype) * 2
            module.train(training)
            uses_batch = training or not track
            if uses_batch and (batch * math.prod(spatial) == 1 or eps == 0.0):
                with pytest.raises(ValueError) as torch_err:
                    module(x)
                with pytest.raises(ValueError) as our_err:
                    manual_batchnorm(x, state, training=training, momentum=momentum, eps=eps,
                                     weight=module.weight, bias=module.bias,
                                     track_running_stats=track)
                assert str(our_err.value) == str(torch_err.value)
                return  # torch counts the failed batch in num_batches_tracked; stop here
            with torch.no_grad():
                expected = module(x)
                y, state = manual_batchnorm(x, state, training=training, momentum=momentum,
                                            eps=eps, weight=module.weight, bias=module.bias,
                                            track_running_stats=track)
            torch.testing.assert_close(y, expected, rtol=tol, atol=tol)
            _assert_state_matches(state, module, tol)


class TestSimulate:
    def test_smoke(self):
        history = simulate(DEFAULT_STREAM, 5, 8, spatial=(2, 2))
        assert history.batch_mean.shape == (5, 3)
        assert history.running_mean.shape == (6, 3)
        assert history.state.num_batches_tracked == 5

    def test_matches_reference(self):
        """Replaying the same batches through a real nn.BatchNorm2d gives the same buffers."""
        stream = Stream(mean=(1.0, -2.0), std=(0.5, 2.0), shift_step=3, shifted_mean=(4.0, 0.0),
                        shifted_std=(1.0, 1.0))
        for momentum in (0.1, None, 0.0, 1.0):
            history = simulate(stream, 7, 4, spatial=(3, 3), momentum=momentum, seed=5)
            bn = nn.BatchNorm2d(2, momentum=momentum)
            for k in range(7):
                bn(sample_batch(stream, k, 4, (3, 3), seed=5))
                np.testing.assert_allclose(history.running_mean[k + 1],
                                           bn.running_mean.double().numpy(), rtol=1e-6,
                                           atol=1e-6)
                np.testing.assert_allclose(history.running_var[k + 1],
                                           bn.running_var.double().numpy(), rtol=1e-6, atol=1e-6)
            _assert_state_matches(history.state, bn, 1e-6)

    def test_shift_and_true_stats(self):
        stream = Stream(mean=(0.0,), std=(1.0,), shift_step=2, shifted_mean=(5.0,),
                        shifted_std=(2.0,))
        history = simulate(stream, 4, 64, spatial=(4,))
        np.testing.assert_array_equal(history.true_mean[:, 0], [0, 0, 5, 5])
        np.testing.assert_array_equal(history.true_var[:, 0], [1, 1, 4, 4])
        assert history.batch_mean[3, 0] == pytest.approx(5.0, abs=0.2)
        assert history.shift_step == 2

    def test_running_stats_converge_to_population(self):
        history = simulate(DEFAULT_STREAM, 300, 32, spatial=(4, 4))
        np.testing.assert_allclose(history.running_mean[-1], [2.0, -1.0, 0.5], atol=0.1)
        np.testing.assert_allclose(history.running_var[-1], [9.0, 0.25, 1.0], rtol=0.1)

    def test_cumulative_average_is_the_plain_mean(self):
        history = simulate(DEFAULT_STREAM, 20, 8, spatial=(3,), momentum=None)
        np.testing.assert_allclose(history.running_mean[-1], history.batch_mean.mean(0),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(history.factors, 1.0 / np.arange(1, 21))

    def test_untracked(self):
        history = simulate(DEFAULT_STREAM, 3, 8, track_running_stats=False)
        assert history.running_mean is None and not history.state.tracked

    def test_nan_poisons_running_stats(self):
        stream = Stream(mean=(0.0, 0.0), std=(1.0, 1.0), nan_step=2)
        history = simulate(stream, 6, 8, spatial=(2,))
        assert history.first_nan_step == 3
        assert np.isnan(history.running_mean[-1, 0]) and np.isfinite(history.running_mean[-1, 1])

    def test_exception(self):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            simulate(DEFAULT_STREAM, 1, 1)
        with pytest.raises(ValueError, match="steps must be an integer in \\[0, 2000\\]"):
            simulate(DEFAULT_STREAM, 5000, 4)
        with pytest.raises(ValueError, match="batch size must be >= 1, got 0"):
            simulate(DEFAULT_STREAM, 1, 0)

    def test_simulate_reports_each_step_without_changing_the_result(self):
        calls: list[tuple[int, int]] = []
        with_hook = simulate(DEFAULT_STREAM, 6, 4, spatial=(2, 2),
                             on_step=lambda done, total: calls.append((done, total)))
        plain = simulate(DEFAULT_STREAM, 6, 4, spatial=(2, 2))
        assert calls == [(k, 6) for k in range(1, 7)]
        np.testing.assert_array_equal(with_hook.running_mean, plain.running_mean)
        simulate(DEFAULT_STREAM, 0, 4, on_step=lambda done, total: calls.append((done, total)))
        assert len(calls) == 6  # no step, no call

    def test_estimate_grows_with_steps_and_batch_values(self):
        small = SimConfig(stream=DEFAULT_STREAM, batch_size=16, spatial=(4, 4))
        large = SimConfig(stream=DEFAULT_STREAM, batch_size=256, spatial=(18, 18))
        assert estimate_simulate_seconds(small, 0) == 0.0
        # the page's default (60 steps of 768 values) is far under a second; a long history
        # of the largest batches is minutes, which the page gates behind a click
        assert estimate_simulate_seconds(small, 60) < 0.2
        assert estimate_simulate_seconds(large, MAX_STEPS) > 60
        assert estimate_simulate_seconds(large, 20) == pytest.approx(
            2 * estimate_simulate_seconds(large, 10))
        with pytest.raises(ValueError, match="steps"):
            estimate_simulate_seconds(small, -1)

    def test_affordable_steps_fit_the_budget(self):
        large = SimConfig(stream=DEFAULT_STREAM, batch_size=256, spatial=(18, 18))
        n = affordable_steps(large, 3.0)
        assert 1 <= n < MAX_STEPS
        assert estimate_simulate_seconds(large, n) <= 3.0 < estimate_simulate_seconds(large, n + 1)
        assert affordable_steps(large, 0.0) == 1  # always at least one step
        small = SimConfig(stream=DEFAULT_STREAM, batch_size=2, spatial=())
        assert affordable_steps(small, 1e9) == MAX_STEPS


class TestNotesCallouts:
    @pytest.fixture(scope="class")
    def callouts(self):
        return {c.key: c for c in notes_callouts()}

    def test_keys_refs_and_verdicts(self, callouts):
        assert {k: (str(c.ref), c.verdict) for k, c in callouts.items()} == {
            "bn_formula_missing": ("000:11", "incomplete"),
            "bn_variance_biased_unbiased": ("002:804", "incomplete"),
            "bn_running_stats_forget": ("002:783", "incomplete"),
            "bn_untracked_has_no_running_stats": ("002:789-791", "wrong"),
        }
        for callout in callouts.values():
            assert not callout.run.raised, (callout.key, callout.run.error)
        assert NotesRef.parse(NOTES_REFS["untracked"]) == \
            callouts["bn_untracked_has_no_running_stats"].ref

    def test_formula(self, callouts):
        c = callouts["bn_formula_missing"]
        diff = float(c.run.output.rsplit("=", 1)[1])
        assert diff < 1e-5
        assert c.today_text.startswith("The notes stop at 'as follows'")
        assert "Var the biased variance" in c.today_text and f"{diff:.1e}" in c.today_text

    def test_variance(self, callouts):
        c = callouts["bn_variance_biased_unbiased"]
        lines = dict(line.split(": ", 1) for line in c.run.output.splitlines())
        assert set(lines) == {"biased", "unbiased"}
        assert ("normalizes with the biased variance Σ(x − E[x])²/n of the mini-batch"
                in c.today_text)
        assert "updates running_var with the unbiased variance Σ(x − E[x])²/(n − 1)" in c.today_text

    def test_running_stats_forget(self, callouts):
        c = callouts["bn_running_stats_forget"]
        values = [float(line.rsplit(":", 1)[1]) for line in c.run.output.splitlines()]
        overall, ema, cumulative = values
        assert abs(ema - overall) > 1.0 and cumulative == pytest.approx(overall, abs=1e-3)
        assert c.today_text.startswith("With the default momentum=0.1 the buffers are an "
                                  "exponential moving average that forgets")
        assert f"running_mean is {ema:.3f}" in c.today_text and "65%" in c.today_text

    def test_untracked(self, callouts):
        c = callouts["bn_untracked_has_no_running_stats"]
        assert c.run.output.splitlines() == ["before: None None",
                                             "after train() and eval(): None None",
                                             "buffers: []"]
        assert c.today_text.startswith("With track_running_stats=False there is no running_mean "
                                  "or running_var")


class TestSimConfig:
    def test_sizes(self):
        config = SimConfig(stream=DEFAULT_STREAM, batch_size=16, spatial=(4, 4))
        assert config.shape == (16, 3, 4, 4) and config.module_name == "BatchNorm2d"
        assert config.values == 768 and config.values_per_channel == 256
        flat = SimConfig(stream=DEFAULT_STREAM, batch_size=5, spatial=())
        assert flat.values_per_channel == 5 and flat.module_name == "BatchNorm1d"

    def test_simulate_config_is_simulate_with_the_settings(self):
        config = SimConfig(stream=DEFAULT_STREAM, batch_size=4, spatial=(3,), momentum=None,
                           eps=1e-3, affine=False, seed=7)
        ours = simulate_config(config, 5)
        plain = simulate(DEFAULT_STREAM, 5, 4, spatial=(3,), momentum=None, eps=1e-3,
                         affine=False, seed=7)
        np.testing.assert_array_equal(ours.running_mean, plain.running_mean)
        np.testing.assert_array_equal(ours.batch_var, plain.batch_var)

    def test_simulate_config_reports_steps(self):
        calls: list[int] = []
        simulate_config(SimConfig(stream=DEFAULT_STREAM), 3, lambda done, total: calls.append(done))
        assert calls == [1, 2, 3]

    def test_exception(self):
        with pytest.raises(ValueError, match="batch size must be >= 1, got 0"):
            _ = SimConfig(stream=DEFAULT_STREAM, batch_size=0).shape
