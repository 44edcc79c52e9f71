"""lessons.warp.figures: the previews the figures draw keep every error and the geometry."""

from __future__ import annotations

import numpy as np
import pytest

from lessons.warp.affine import compare_warps
from lessons.warp.figures import (
    HEAT_MAX_SIDE,
    diff_figure,
    grid_figure,
    heat_height,
    image_preview,
    max_pool_preview,
    profile_figure,
    zoom_figure,
)
from lessons.warp.matrix_inputs import matrix_from_params
from tests.lessons.warp.cases import smooth_image


def test_previews_keep_the_max_and_the_geometry():
    diff = np.zeros((1000, 700), np.float32)
    diff[999, 3] = 7.0
    pooled, factor = max_pool_preview(diff, max_side=400)
    assert factor == 3 and pooled.shape == (334, 234) and pooled.max() == 7.0
    assert pooled[333, 1] == 7.0
    small, sx, sy = image_preview(smooth_image(300, 451), max_side=200)
    assert max(small.shape[:2]) == 200 and small.dtype == np.uint8
    assert sx == pytest.approx(451 / small.shape[1]) and sy == pytest.approx(300 / small.shape[0])
    same, sx1, _ = image_preview(smooth_image(30, 40))
    assert same.shape == (30, 40, 3) and sx1 == 1.0
    with pytest.raises(ValueError, match="shape"):
        max_pool_preview(np.zeros((3, 3, 3)))


def test_figures_draw_the_comparison_in_the_given_language():
    """Every builder draws from the comparison alone, titles through ``translate``."""
    img = smooth_image(300, 451)
    result = compare_warps(img, matrix_from_params(30, 1.0, center=(225, 149.5)), (451, 300))
    heat = diff_figure(result, translate=lambda message: f"«{message}»")
    assert heat.layout.title.text == "«|grid_sample − cv2| (max of 2×2)»"
    assert heat.layout.height == heat_height((451, 300)) == 230
    assert max(np.shape(heat.data[0].z)) <= HEAT_MAX_SIDE
    profile = profile_figure(result, 150)
    assert [trace.name for trace in profile.data] == ["cv2.warpAffine", "F.grid_sample"]
    grid = grid_figure(result, img)
    assert grid.data[1].x.size == result.grid.in_x.size  # one dot per sampled output pixel
    zoom = zoom_figure(result, img)
    assert zoom.data[-1].marker.color == "lime"  # the correct theta's samples
