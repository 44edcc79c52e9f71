"""lessons.warp.theta: M to theta = N_src M^-1 N_dst^-1 and back, and the notes' affine2theta."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.warp.affine import compare_warps, warp_affine_cv2
from lessons.warp.theta import (
    affine_matrices,
    affine_to_theta,
    normalization_matrix,
    notes_shift_px,
    theta_to_affine,
)
from lessons.warp.validation import homogeneous
from tests.lessons.warp.cases import interior, matrices, random_matrix, sides, smooth_image


@settings(max_examples=60, deadline=None)
@given(matrices, sides, sides, sides, sides, st.booleans())
def test_round_trip(params, sh, sw, dh, dw, align_corners):
    M = random_matrix(*params, sw, sh)
    theta = affine_to_theta(M, (sh, sw), (dh, dw), align_corners)
    assert theta.shape == (1, 2, 3)
    back = theta_to_affine(theta, (sh, sw), (dh, dw), align_corners)
    np.testing.assert_allclose(back, M, rtol=0, atol=1e-6)


@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_theta_and_formula(align_corners):
    theta = affine_to_theta(np.eye(2, 3), (30, 40), (30, 40), align_corners)
    np.testing.assert_allclose(theta[0].numpy(), np.eye(2, 3), atol=1e-12)
    n = normalization_matrix(40, 30, align_corners)
    x_n = n @ [0, 0, 1]
    expected = -1.0 if align_corners else 1 / 40 - 1  # (2*0 + 1)/W - 1
    assert x_n[0] == pytest.approx(expected)


def test_theta_matches_facts_formula():
    """theta = N_src @ M^-1 @ N_dst^-1, written out by hand for a 2x scale-up."""
    M = np.array([[2.0, 0, 0], [0, 2.0, 0]])  # 10x10 -> 20x20
    theta = affine_to_theta(M, (10, 10), (20, 20), align_corners=False)[0].numpy()
    # output pixel j -> source x = j/2; normalized: out x_o = (2j+1)/20 - 1, in (2x+1)/10 - 1
    # => j = 10(x_o + 1) - 0.5, x_in = (j + 1)/10 - 1 = x_o + 0.05: theta = [[1, 0, 0.05], ...]
    np.testing.assert_allclose(theta, [[1, 0, 0.05], [0, 1, 0.05]], atol=1e-12)


def test_notes_shift_matches_facts():
    """facts.md: ~0.36 px for a 30 degree x1.3 warp of an 8x8 image (align_corners=False)."""
    M = cv2.getRotationMatrix2D((4, 4), 30, 1.3)
    assert math.hypot(*notes_shift_px(M)) == pytest.approx(0.36, abs=0.005)
    assert notes_shift_px(np.array([[1.0, 0, 3], [0, 1, -2]])) == (0.0, 0.0)


@pytest.mark.parametrize("align_corners", [False, True])
def test_applied_m_is_the_warp_the_notes_theta_really_does(align_corners):
    """theta_to_affine reads the notes' theta back as an OpenCV matrix (the page's M_θ):
    cv2.warpAffine with it gives the notes' grid_sample warp."""
    M = cv2.getRotationMatrix2D((20, 15), 30, 1.3)
    (sh, sw), (dh, dw) = (30, 45), (25, 38)
    correct = affine_matrices(M, (sh, sw), (dh, dw), align_corners)
    np.testing.assert_array_equal(correct.applied_m, M)
    applied = affine_matrices(M, (sh, sw), (dh, dw), align_corners, notes=True).applied_m
    if align_corners:  # rescaled about the top-left pixel: S_dst M S_src^-1
        s_src, s_dst = (np.diag([(w - 1) / w, (h - 1) / h, 1]) for w, h in ((sw, sh), (dw, dh)))
        expected = (s_dst @ homogeneous(M) @ np.linalg.inv(s_src))[:2]
    else:  # M's 2x2 part; the translation off by half a pixel passed through M
        expected = M + np.c_[np.zeros((2, 2)), -M[:, :2] @ notes_shift_px(M)]
        np.testing.assert_allclose(applied[:, 2] - M[:, 2], M[:, :2] @ [0.5, 0.5] - 0.5)
    np.testing.assert_allclose(applied, expected, atol=1e-9)
    img = smooth_image(sh, sw)
    notes_warp = compare_warps(img, M, (dw, dh), align_corners=align_corners, notes=True).warped
    assert interior(notes_warp, warp_affine_cv2(img, applied, (dw, dh))).max() <= 2
