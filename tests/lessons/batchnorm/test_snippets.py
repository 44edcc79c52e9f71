"""Tests for lessons/batchnorm/snippets.py: the page's closing script reproduces its run."""

from __future__ import annotations

import pytest
import torch

from lessons.batchnorm.layer import SimConfig, simulate
from lessons.batchnorm.modes import compare_modes
from lessons.batchnorm.snippets import snippet_for
from lessons.batchnorm.stream import Stream, sample_batch

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))


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
