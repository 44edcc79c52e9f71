"""Tests for lessons/batchnorm/layer.py: the hand-written BatchNorm against nn.BatchNorm1d/2d, the
simulation, the norm comparison, the Keras converter and the snippet."""

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

from core.notes import NotesRef, run_live
from lessons.batchnorm.layer import (
    MAX_STEPS,
    NOTES_REFS,
    BNState,
    SimConfig,
    Stream,
    affordable_steps,
    batch_of_one,
    batch_of_one_snippet,
    cap_spatial,
    compare_modes,
    compare_norms,
    estimate_simulate_seconds,
    explain_loader,
    explain_update,
    formula_check,
    formula_snippet,
    frozen_check,
    keras_to_pytorch_momentum,
    loader_run,
    loader_snippet,
    make_module,
    manual_batchnorm,
    module_anatomy,
    norm_group_ids,
    notes_callouts,
    parse_channel_values,
    pytorch_to_keras_momentum,
    repeated_eval,
    repeated_eval_snippet,
    sample_batch,
    simulate,
    snippet_for,
    torch_error_for,
)

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


class TestStreamAndSimulate:
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
        with pytest.raises(ValueError, match="must be > 0, got 0.0"):
            Stream(mean=(0.0,), std=(0.0,))
        with pytest.raises(ValueError, match="std for channel 1 must be > 0, got -1.0"):
            Stream(mean=(0.0, 0.0), std=(1.0, -1.0))
        with pytest.raises(ValueError, match="NaN/inf"):
            Stream(mean=(float("nan"),), std=(1.0,))
        # finite in float64 but inf (or inf squared) in the float32 batches
        with pytest.raises(ValueError, match="std for channel 0 is 1e\\+39; keep it within"):
            Stream(mean=(0.0,), std=(1e39,))
        with pytest.raises(ValueError, match="mean after the shift for channel 0 is -1e\\+30"):
            Stream(mean=(0.0,), std=(1.0,), shift_step=1, shifted_mean=(-1e30,),
                   shifted_std=(1.0,))
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            simulate(DEFAULT_STREAM, 1, 1)
        with pytest.raises(ValueError, match="steps must be an integer in \\[0, 2000\\]"):
            simulate(DEFAULT_STREAM, 5000, 4)
        with pytest.raises(ValueError, match="batch size must be >= 1, got 0"):
            simulate(DEFAULT_STREAM, 1, 0)

    def test_parse_channel_values(self):
        assert parse_channel_values("1, 2;3", 3, name="mean") == (1.0, 2.0, 3.0)
        assert parse_channel_values(" 4 ", 2, name="mean") == (4.0, 4.0)
        with pytest.raises(ValueError, match="mean for channel 1 is NaN"):
            parse_channel_values("1, nan", 2, name="mean")
        with pytest.raises(ValueError, match="'abc' is not a number"):
            parse_channel_values("abc", 2, name="std")
        with pytest.raises(ValueError, match="got 2 values for 3 channels"):
            parse_channel_values("1, 2", 3, name="std")
        with pytest.raises(ValueError, match="infinite"):
            parse_channel_values("inf", 1, name="std")

    def test_cap_spatial(self):
        assert cap_spatial(4, dims=2, batch_size=16, channels=3).notice is None
        capped = cap_spatial(4096, dims=2, batch_size=16, channels=3)
        assert capped.side == 73 and 16 * 3 * 73**2 <= 262_144 < 16 * 3 * 74**2
        assert "capped at 73" in capped.notice
        assert cap_spatial(10**6, dims=1, batch_size=2, channels=2).side == 65_536
        assert cap_spatial(99, dims=0, batch_size=2, channels=2).notice is None

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

    def test_sample_batch_is_deterministic_per_index(self):
        a = sample_batch(DEFAULT_STREAM, 7, 4, (2,), seed=3)
        b = sample_batch(DEFAULT_STREAM, 7, 4, (2,), seed=3)
        c = sample_batch(DEFAULT_STREAM, 8, 4, (2,), seed=3)
        assert torch.equal(a, b) and not torch.equal(a, c)


class TestModesAndModules:
    def test_compare_modes_matches_module(self):
        history = simulate(DEFAULT_STREAM, 10, 16, spatial=(4, 4))
        x = sample_batch(DEFAULT_STREAM, 9, 16, (4, 4))
        comp = compare_modes(x, history.state, eps=1e-5, weight=torch.ones(3),
                             bias=torch.zeros(3))
        bn = make_module(3, 2, state=history.state)
        with torch.no_grad():
            torch.testing.assert_close(comp.y_eval, bn.eval()(x))
            torch.testing.assert_close(comp.y_train, bn.train()(x))
        np.testing.assert_allclose(comp.train_mean, 0.0, atol=1e-5)
        np.testing.assert_allclose(comp.train_std, 1.0, atol=1e-4)
        assert comp.max_abs_gap > 0.05  # after 10 steps the running stats still lag
        assert "running statistics" in comp.eval_source

    def test_untracked_eval_uses_batch_stats(self):
        x = sample_batch(DEFAULT_STREAM, 0, 16, (4,))
        comp = compare_modes(x, BNState.fresh(3, track_running_stats=False), eps=1e-5,
                             track_running_stats=False)
        assert comp.eval_uses_batch_stats and comp.max_abs_gap == 0.0
        assert "track_running_stats=False" in comp.eval_source

    def test_anatomy(self):
        anatomy = module_anatomy(make_module(3, 2))
        assert [p[0] for p in anatomy.parameters] == ["weight", "bias"]
        assert [b[0] for b in anatomy.buffers] == ["running_mean", "running_var",
                                                   "num_batches_tracked"]
        assert anatomy.state_dict_keys == ("weight", "bias", "running_mean", "running_var",
                                           "num_batches_tracked")
        assert anatomy.optimizer_tensors == 2
        bare = module_anatomy(make_module(3, 0, affine=False, track_running_stats=False))
        assert bare.parameters == () and bare.buffers == () and bare.state_dict_keys == ()

    def test_explain_update(self):
        history = simulate(DEFAULT_STREAM, 3, 8, spatial=(2,))
        ex = explain_update(history, 0, 0.1)
        assert ex.new_mean == pytest.approx(0.9 * ex.old_mean + 0.1 * ex.batch_mean, rel=1e-5)
        assert ex.new_var == pytest.approx(0.9 * ex.old_var + 0.1 * ex.batch_var_unbiased,
                                           rel=1e-5)
        assert ex.batch_var_unbiased == pytest.approx(ex.batch_var_biased * 16 / 15, rel=1e-6)
        assert explain_update(simulate(DEFAULT_STREAM, 0, 8), 0, 0.1) is None

    def test_frozen_matches_eval(self):
        history = simulate(DEFAULT_STREAM, 4, 8, spatial=(3,))
        x = sample_batch(DEFAULT_STREAM, 3, 8, (3,))
        w, b = torch.tensor([1.0, 2.0, 0.5]), torch.tensor([0.0, 1.0, -1.0])
        comp = compare_modes(x, history.state, eps=1e-3, weight=w, bias=b)
        check = frozen_check(x, history.state, comp.y_eval, eps=1e-3, weight=w, bias=b)
        assert check.parameters == 0
        assert set(check.buffers) == {"weight", "bias", "running_mean", "running_var"}
        assert check.max_abs_diff_vs_eval < 1e-5
        with pytest.raises(ValueError, match="needs running statistics"):
            frozen_check(x, BNState.fresh(3, track_running_stats=False), comp.y_eval, eps=1e-3)

    def test_keras_momentum(self):
        assert pytorch_to_keras_momentum(0.1) == pytest.approx(0.9)
        assert keras_to_pytorch_momentum(0.99) == pytest.approx(0.01)
        assert keras_to_pytorch_momentum(pytorch_to_keras_momentum(0.3)) == pytest.approx(0.3)
        with pytest.raises(ValueError, match="cumulative average"):
            pytorch_to_keras_momentum(None)
        with pytest.raises(ValueError, match="got 2"):
            keras_to_pytorch_momentum(2)


class TestNorms:
    @settings(max_examples=25, deadline=None)
    @given(n=st.integers(1, 4), c=st.sampled_from([1, 2, 4, 6]), h=st.integers(2, 4),
           w=st.integers(1, 4), dtype=st.sampled_from([torch.float32, torch.float64]),
           data=st.data())
    def test_matches_reference(self, n, c, h, w, dtype, data):
        groups = data.draw(st.sampled_from([g for g in range(1, c + 1) if c % g == 0]))
        x = torch.randn(n, c, h, w, dtype=dtype) * 2 + 1
        results = compare_norms(x, groups)
        assert [r.name for r in results] == ["BatchNorm", "LayerNorm", "InstanceNorm",
                                             "GroupNorm"]
        for r in results:
            assert r.max_abs_diff < TOL[dtype] * 10, r
        assert results[0].stats_shape == (c,) and results[3].stats_shape == (n, groups)

    def test_group_ids(self):
        assert norm_group_ids("BatchNorm", 2, 3).tolist() == [[0, 0], [1, 1], [2, 2]]
        assert norm_group_ids("LayerNorm", 2, 3).tolist() == [[0, 1], [0, 1], [0, 1]]
        assert len(np.unique(norm_group_ids("InstanceNorm", 2, 3))) == 6
        assert norm_group_ids("GroupNorm", 1, 4, 2).ravel().tolist() == [0, 0, 1, 1]

    def test_exception(self):
        with pytest.raises(ValueError, match="groups must divide the 3 channels, got 2"):
            compare_norms(torch.randn(2, 3, 2, 2), 2)
        with pytest.raises(ValueError, match="unknown normalization"):
            norm_group_ids("FooNorm", 1, 1)


class TestSnippet:
    @pytest.mark.parametrize(
        "config,steps",
        [
            (SimConfig(stream=DEFAULT_STREAM), 10),
            (SimConfig(stream=Stream(mean=(1.0, 0.0), std=(2.0, 1.0), shift_step=2,
                                     shifted_mean=(3.0, 0.0), shifted_std=(1.0, 1.0)),
                       batch_size=4, spatial=(5,), momentum=None, eps=1e-3, affine=False), 4),
            (SimConfig(stream=DEFAULT_STREAM, batch_size=8, spatial=(),
                       track_running_stats=False, seed=3), 2),
            (SimConfig(stream=Stream(mean=(0.0,), std=(1.0,), nan_step=1), batch_size=4,
                       spatial=(2, 2)), 3),
            (SimConfig(stream=DEFAULT_STREAM), 0),
        ],
    )
    def test_snippet_runs_and_matches_core(self, config, steps, capsys):
        namespace: dict = {}
        exec(compile(snippet_for(config, steps), "<snippet>", "exec"), namespace)
        assert "train(): mean" in capsys.readouterr().out
        bn = namespace["bn"]
        history = simulate(config.stream, steps, config.batch_size, spatial=config.spatial,
                           momentum=config.momentum, eps=config.eps, affine=config.affine,
                           track_running_stats=config.track_running_stats, seed=config.seed)
        if history.state.tracked:
            torch.testing.assert_close(history.state.running_mean, bn.running_mean,
                                       equal_nan=True)
            torch.testing.assert_close(history.state.running_var, bn.running_var,
                                       equal_nan=True)
            assert history.state.num_batches_tracked == int(bn.num_batches_tracked) == steps
        else:
            assert bn.running_mean is None
        x = sample_batch(config.stream, max(steps - 1, 0), config.batch_size, config.spatial,
                         seed=config.seed)
        torch.testing.assert_close(namespace["x"], x, equal_nan=True)
        weight = torch.ones(config.channels) if config.affine else None
        bias = torch.zeros(config.channels) if config.affine else None
        comp = compare_modes(x, history.state, eps=config.eps, weight=weight, bias=bias,
                             track_running_stats=config.track_running_stats,
                             momentum=config.momentum)
        torch.testing.assert_close(namespace["y_train"], comp.y_train, equal_nan=True)
        torch.testing.assert_close(namespace["y_eval"], comp.y_eval, equal_nan=True)

    def test_exception(self):
        with pytest.raises(ValueError, match="steps must be an integer"):
            snippet_for(SimConfig(stream=DEFAULT_STREAM), -1)


# --------------------------------------------------------------------------------------------
# The notes' lessons, run live (issue 11 §5) and the notes callouts (§3)
# --------------------------------------------------------------------------------------------

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
