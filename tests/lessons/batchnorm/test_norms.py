"""Tests for lessons/batchnorm/norms.py: BatchNorm, LayerNorm, InstanceNorm and GroupNorm by hand
against the real modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.batchnorm.norms import (
    NORM_SPATIAL,
    compare_norms,
    demo_samples,
    group_choices,
    norm_group_ids,
    norms_on_stream,
)
from lessons.batchnorm.stream import Stream, sample_batch

TOL = {torch.float32: 1e-5, torch.float64: 1e-10}


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

    @pytest.mark.parametrize(("channels", "divisors", "start"), [
        (1, [1], 0), (3, [1, 3], 0), (4, [1, 2, 4], 1), (8, [1, 2, 4, 8], 2)])
    def test_group_choices_start_on_the_largest_proper_divisor(self, channels, divisors, start):
        assert group_choices(channels) == (divisors, start)

    def test_demo_samples(self):
        assert [demo_samples(n) for n in (1, 2, 5, 6, 256)] == [2, 2, 5, 6, 6]

    def test_norms_on_stream(self):
        stream = Stream(mean=(1.0, 2.0), std=(1.0, 1.0))
        results = norms_on_stream(stream, 3, 2, seed=4)
        expected = compare_norms(sample_batch(stream, 0, 3, NORM_SPATIAL, seed=4), 2)
        assert [r.max_abs_diff for r in results] == [r.max_abs_diff for r in expected]
        assert results[0].stats_shape == (2,) and results[2].stats_shape == (3, 2)
        poisoned = norms_on_stream(Stream(mean=(1.0,), std=(1.0,), nan_step=0), 2, 1)
        assert all(np.isfinite(r.max_abs_diff) for r in poisoned)  # the NaN is left out
