"""lessons.warp.sampling: the sampling grid is exactly where affine_grid sends each output pixel."""

from __future__ import annotations

import numpy as np
import torch.nn.functional as F

from lessons.warp.figures import crop_around
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.sampling import sampling_grid, zoom_grid
from lessons.warp.theta import (
    affine_to_theta,
    normalization_matrix,
    notes_affine2theta,
    notes_shift_px,
)
from tests.lessons.warp.cases import (
    smooth_image,
)


def test_sampling_grid_matches_affine_grid():
    img_hw, dst_hw = (30, 40), (25, 35)
    M = matrix_from_params(15, 0.9, 0.1, 0, 3, 2, (20, 15))
    for align_corners in (False, True):
        theta = affine_to_theta(M, img_hw, dst_hw, align_corners)
        g = sampling_grid(theta, M, img_hw, dst_hw, align_corners, max_points=10_000)
        full = F.affine_grid(theta, [1, 1, *dst_hw], align_corners=align_corners)[0].numpy()
        n_inv = np.linalg.inv(normalization_matrix(40, 30, align_corners))
        px = full @ n_inv[:2, :2].T + n_inv[:2, 2]
        np.testing.assert_allclose(g.in_x, px[..., 0].ravel(), atol=1e-9)
        np.testing.assert_allclose(g.in_y, px[..., 1].ravel(), atol=1e-9)
        np.testing.assert_allclose(g.in_x, g.ref_x, atol=1e-9)
    zoom = zoom_grid(theta, M, img_hw, dst_hw, True, radius=3)
    assert zoom.out_x.size == 49 and np.ptp(zoom.out_x) == 6
    np.testing.assert_allclose(zoom.in_y, zoom.ref_y, atol=1e-9)
    notes_theta = notes_affine2theta(M, img_hw, dst_hw)
    off = zoom_grid(notes_theta, M, img_hw, dst_hw, False)
    dx, dy = notes_shift_px(M)
    np.testing.assert_allclose(off.in_x - off.ref_x, dx, atol=1e-9)
    np.testing.assert_allclose(off.in_y - off.ref_y, dy, atol=1e-9)
    crop = crop_around(smooth_image(30, 40), zoom.in_x, zoom.in_y)
    assert crop is not None and crop[0].shape[0] >= 7
    assert crop_around(smooth_image(30, 40), np.array([-50.0]), np.array([-50.0])) is None
    small = sampling_grid(theta, M, img_hw, dst_hw, True, max_points=50)
    assert small.step > 1 and small.out_x.max() == 34 and small.out_y.max() == 24
