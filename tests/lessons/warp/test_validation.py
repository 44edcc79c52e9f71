"""lessons.warp.validation: every refused input raises a ValueError that names it, through
the functions that check it."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
import torch

from lessons.warp.affine import compare_warps, warp_affine, warp_affine_cv2
from lessons.warp.matrix_inputs import matrix_from_params, matrix_from_points, parse_matrix_text
from lessons.warp.theta import affine_to_theta
from lessons.warp.timing import time_warps
from lessons.warp.validation import MAX_REFLECTION_REACH, reflection_reach, validate_affine
from tests.lessons.warp.cases import (
    smooth_image,
)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: affine_to_theta([[1, 2, 0], [2, 4, 0]], (8, 8), (8, 8)), "singular"),
        (lambda: affine_to_theta(np.zeros((2, 3)), (8, 8), (8, 8)), "singular"),
        (lambda: affine_to_theta([[1, 0, np.nan], [0, 1, 0]], (8, 8), (8, 8)), "NaN"),
        (lambda: affine_to_theta([[1, 0, 0], [0, np.inf, 0]], (8, 8), (8, 8)), "M[1][1]=inf"),
        (lambda: affine_to_theta([[1, 0], [0, 1]], (8, 8), (8, 8)), "2x3"),
        (lambda: validate_affine(np.eye(3) * 2), "last row"),
        (lambda: matrix_from_params(scale=0), "scale must be positive"),
        (lambda: matrix_from_params(shear_x=1, shear_y=1), "singular"),
        (lambda: matrix_from_params(angle_deg=math.nan), "angle"),
        (
            lambda: matrix_from_points([(0, 0), (1, 1), (2, 2)], [(0, 0), (1, 0), (0, 1)]),
            "source points (0, 0), (1, 1), (2, 2) are collinear",
        ),
        (
            lambda: matrix_from_points([(0, 0), (1, 0), (0, 1)], [(5, 5), (5, 5), (6, 7)]),
            "destination points",
        ),
        (lambda: matrix_from_points([(0, 0), (1, 0)], [(0, 0), (1, 0)]), "three"),
        (
            lambda: matrix_from_points([(0, 0), (1e39, 0), (0, 1e39)], [(0, 0), (9, 0), (0, 9)]),
            "source point coordinates must lie within ±1,000,000 px",
        ),
        (
            lambda: matrix_from_points([(0, 0), (9, 0), (0, 9)], [(0, 0), (-1e200, 0), (0, 9)]),
            "destination point coordinates",
        ),
        (lambda: parse_matrix_text("1e300 0 0\n0 1e300 0"), "too large to invert"),
        (lambda: warp_affine(smooth_image(8, 8), np.eye(2, 3), (0, 8)), "0x8"),
        (lambda: warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 0)), "too small"),
        (lambda: warp_affine(smooth_image(8, 8), np.eye(2, 3), (5000, 8)), "cap of 2048"),
        (lambda: warp_affine(np.zeros((1, 1, 3), np.uint8), np.eye(2, 3), (8, 8)), "1x1"),
        (
            lambda: warp_affine(np.zeros((8, 8, 2), np.uint8), np.eye(2, 3), (8, 8)),
            "(8, 8, 2)",
        ),
        (lambda: warp_affine(np.zeros((8, 8), np.int64), np.eye(2, 3), (8, 8)), "int64"),
        (
            lambda: warp_affine(np.full((8, 8), np.nan, np.float32), np.eye(2, 3), (8, 8)),
            "NaN",
        ),
        (lambda: warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), mode="area"), "area"),
        (
            lambda: warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), padding_mode="wrap"),
            "wrap",
        ),
        (lambda: warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), device="tpu"), "tpu"),
        (lambda: time_warps(smooth_image(8, 8), np.eye(2, 3), (8, 8), repeats=0), "repeats"),
    ],
)
def test_exception(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value)


@pytest.mark.parametrize("align_corners", [False, True])
def test_exception_reflection_far_outside(align_corners):
    """cv2's BORDER_REFLECT* time grows with the distance sampled: far reads are refused."""
    img = smooth_image(8, 8)
    far = np.array([[1.0, 0, 1e6], [0, 1, 0]])  # every sample ~125,000 image widths away
    assert reflection_reach(far, (8, 8), (8, 8)) == pytest.approx(1e6 / 8, rel=1e-3)
    for call in (
        lambda: compare_warps(
            img, far, (8, 8), padding_mode="reflection", align_corners=align_corners
        ),
        lambda: time_warps(img, far, (8, 8), padding_mode="reflection", repeats=1),
        lambda: warp_affine_cv2(img, far, (8, 8), border=cv2.BORDER_REFLECT_101),
    ):
        with pytest.raises(ValueError, match="reflection padding .* 125,000 image widths"):
            call()
    # zeros/border padding stay allowed (cv2 clips or fills in constant time) ...
    assert compare_warps(img, far, (8, 8), padding_mode="border").errors.max_whole <= 2
    # ... and so does reflection a sane distance away (the page's sliders reach ~30 at most).
    near = np.array([[0.1, 0, 0], [0, 0.1, 0]])  # output 80 px -> source 790 px: reach 97.6
    assert reflection_reach(near, (8, 8), (80, 80)) < MAX_REFLECTION_REACH
    compare_warps(img, near, (80, 80), padding_mode="reflection")
    assert reflection_reach(np.eye(2, 3), (8, 8), (8, 8)) == 0.0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_exception_cuda_without_gpu():
    with pytest.raises(ValueError, match="no CUDA GPU"):
        warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), device="cuda:0")
