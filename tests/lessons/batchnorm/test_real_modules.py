"""Tests for lessons/batchnorm/real_modules.py: the real nn.BatchNorm's anatomy and
torchvision's FrozenBatchNorm2d."""

from __future__ import annotations

import pytest
import torch

from lessons.batchnorm.layer import BNState, simulate
from lessons.batchnorm.modes import compare_modes
from lessons.batchnorm.real_modules import (
    anatomy_of,
    frozen_check,
    make_module,
    module_anatomy,
    torch_error_for,
)
from lessons.batchnorm.stream import Stream, sample_batch

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))


class TestRealModules:
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

    def test_anatomy_of_a_fresh_module(self):
        assert anatomy_of(3, 2) == module_anatomy(make_module(3, 2))
        bare = anatomy_of(2, 1, momentum=None, affine=False, track_running_stats=False)
        assert bare.optimizer_tensors == 0 and bare.buffers == ()
        assert "BatchNorm1d(2" in bare.module_repr and "momentum=None" in bare.module_repr

    def test_torch_error_for(self):
        assert torch_error_for((4, 3)) is None
        assert "Expected more than 1 value per channel" in torch_error_for((1, 3))
        assert torch_error_for((1, 3), training=False) is None  # eval() with running statistics
