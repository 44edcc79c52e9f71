"""Tests for lessons/batchnorm/modes.py: train() vs eval() on one batch, the last update of the
buffers, and PyTorch's momentum against Keras'."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lessons.batchnorm.layer import BNState, SimConfig, simulate
from lessons.batchnorm.modes import (
    compare_modes,
    compare_run,
    explain_update,
    fresh_affine,
    half_life_text,
    keras_to_pytorch_momentum,
    pytorch_to_keras_momentum,
    shown_batch,
    update_latex,
)
from lessons.batchnorm.real_modules import make_module
from lessons.batchnorm.stream import Stream, sample_batch

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))


class TestModes:
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

    def test_explain_update(self):
        history = simulate(DEFAULT_STREAM, 3, 8, spatial=(2,))
        ex = explain_update(history, 0, 0.1)
        assert ex.new_mean == pytest.approx(0.9 * ex.old_mean + 0.1 * ex.batch_mean, rel=1e-5)
        assert ex.new_var == pytest.approx(0.9 * ex.old_var + 0.1 * ex.batch_var_unbiased,
                                           rel=1e-5)
        assert ex.batch_var_unbiased == pytest.approx(ex.batch_var_biased * 16 / 15, rel=1e-6)
        assert explain_update(simulate(DEFAULT_STREAM, 0, 8), 0, 0.1) is None

    def test_keras_momentum(self):
        assert pytorch_to_keras_momentum(0.1) == pytest.approx(0.9)
        assert keras_to_pytorch_momentum(0.99) == pytest.approx(0.01)
        assert keras_to_pytorch_momentum(pytorch_to_keras_momentum(0.3)) == pytest.approx(0.3)
        with pytest.raises(ValueError, match="cumulative average"):
            pytorch_to_keras_momentum(None)
        with pytest.raises(ValueError, match="got 2"):
            keras_to_pytorch_momentum(2)

    def test_compare_run_is_compare_modes_on_the_shown_batch(self):
        config = SimConfig(stream=DEFAULT_STREAM, batch_size=8, spatial=(3,), momentum=0.3)
        state = simulate(DEFAULT_STREAM, 4, 8, spatial=(3,), momentum=0.3).state
        ours = compare_run(config, 4, state)
        x = sample_batch(DEFAULT_STREAM, 3, 8, (3,))
        assert torch.equal(shown_batch(config, 4), x) and torch.equal(ours.x, x)
        expected = compare_modes(x, state, eps=config.eps, weight=torch.ones(3),
                                 bias=torch.zeros(3), momentum=0.3)
        torch.testing.assert_close(ours.y_eval, expected.y_eval)
        torch.testing.assert_close(ours.y_train, expected.y_train)
        assert torch.equal(shown_batch(config, 0), sample_batch(DEFAULT_STREAM, 0, 8, (3,)))

    def test_fresh_affine(self):
        weight, bias = fresh_affine(SimConfig(stream=DEFAULT_STREAM))
        assert torch.equal(weight, torch.ones(3)) and torch.equal(bias, torch.zeros(3))
        assert fresh_affine(SimConfig(stream=DEFAULT_STREAM, affine=False)) == (None, None)

    def test_caught_up_after_a_long_run_only(self):
        config = SimConfig(stream=DEFAULT_STREAM)
        for steps, expected in ((1, False), (100, True)):
            state = simulate(DEFAULT_STREAM, steps, 16, spatial=(4, 4)).state
            assert compare_run(config, steps, state).caught_up(0) is expected, steps

    def test_update_latex_has_the_numbers(self):
        history = simulate(DEFAULT_STREAM, 2, 8, spatial=(2,))
        e = explain_update(history, 1, 0.1)
        mean_line, var_line = update_latex(e)
        assert mean_line.startswith(r"\text{running\_mean} \leftarrow")
        assert mean_line.endswith(f"= {e.new_mean:.4g}") and f"{e.batch_mean:.4g}" in mean_line
        assert r"\sigma^2_{B,\text{unbiased}}" in var_line
        assert var_line.endswith(f"= {e.new_var:.4g}")

    @pytest.mark.parametrize(("momentum", "start"), [
        (0.0, "with m = 0"), (1.0, "with m = 1"), (0.1, "the buffers forget old batches with a "
                                                         "half-life of 6.6 steps")])
    def test_half_life_text(self, momentum, start):
        assert half_life_text(momentum).startswith(start)
