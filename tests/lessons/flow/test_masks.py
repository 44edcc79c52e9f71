"""Tests for lessons.flow.masks: synthetic hole masks and the forward-backward check."""

from __future__ import annotations

import numpy as np
import pytest

from lessons.flow.masks import fb_consistency_mask, make_hole_mask


def test_hole_masks():
    for kind in ("random", "blobs", "stripes"):
        m = make_hole_mask(kind, 100, 120, fraction=0.3, size=6, seed=0)
        assert m.dtype == bool and 0.2 < m.mean() < 0.45, kind
    band = make_hole_mask("border", 50, 60, size=3)
    assert band[0].all() and band[:, -1].all() and not band[3:-3, 3:-3].any()
    with pytest.raises(ValueError, match="fb needs an image pair"):
        make_hole_mask("fb", 10, 10)
    with pytest.raises(ValueError, match="fraction"):
        make_hole_mask("random", 10, 10, fraction=0)


def test_fb_consistency_mask():
    fwd = np.full((20, 30, 2), 1.0, np.float32)
    bwd = -fwd
    m = fb_consistency_mask(fwd, bwd, 0.5)
    assert not m[:-2, :-2].any()  # consistent inside
    assert m[:, -1].all()  # leaves the frame
    bad = bwd.copy()
    bad[5:10, 5:10] += 3.0
    assert fb_consistency_mask(fwd, bad, 0.5)[6, 6]
    with pytest.raises(ValueError, match="threshold"):
        fb_consistency_mask(fwd, bwd, 0)
