"""lessons.warp.theta: M to theta = N_src M^-1 N_dst^-1 and back, and the notes' affine2theta."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.warp.theta import (
    affine_to_theta,
    normalization_matrix,
    notes_shift_px,
    theta_to_affine,
)
from tests.lessons.warp.cases import matrices, random_matrix, sides


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
