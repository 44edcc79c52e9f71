"""lessons.warp.affine: an OpenCV matrix through affine_grid + grid_sample agrees with
cv2.warpAffine (the flag mapping, every mode, the rounding ties), and the notes' theta does not."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.warp.affine import (
    TIE_PX,
    compare_warps,
    cv2_flags,
    notes_callouts,
    warp_affine,
    warp_affine_cv2,
)
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.sampling import MAX_GRID_POINTS, source_coordinates
from lessons.warp.theta import notes_shift_px
from lessons.warp.timing import time_warps
from lessons.warp.validation import INTERPOLATIONS, PADDING_MODES
from tests.lessons.warp.cases import (
    interior,
    matrices,
    random_matrix,
    seeded_cases,
    sides,
    smooth_image,
)


def test_smoke():
    img = smooth_image(30, 40)
    M = matrix_from_params(20, 1.2, center=(20, 15))
    out = warp_affine(img, M, (50, 25))
    assert out.shape == (25, 50, 3) and out.dtype == np.uint8
    cmp = compare_warps(img, M, (50, 25), mode="nearest", padding_mode="reflection")
    assert cmp.reference.shape == cmp.warped.shape == (25, 50, 3)
    assert cmp.difference.shape == (25, 50)
    assert cmp.cv2_interpolation == "cv2.INTER_NEAREST"
    assert cmp.cv2_border == "cv2.BORDER_REFLECT"
    assert cmp.matrices.theta.shape == (2, 3) and cmp.matrices.n_src.shape == (3, 3)
    assert cmp.grid.in_x.size <= MAX_GRID_POINTS * 2
    timing = time_warps(img, M, (50, 25), repeats=1)
    assert timing.cv2_ms > 0 and timing.torch_ms > 0 and timing.torch_kernel_ms > 0


@pytest.mark.parametrize("shape", [(20, 24), (20, 24, 1)])
def test_grayscale_is_warped_as_one_channel(shape):
    img = smooth_image(20, 24)[:, :, 0].reshape(shape)
    M = matrix_from_params(25, 0.8, center=(12, 10))
    out = warp_affine(img, M, (30, 18))
    ref = warp_affine_cv2(img, M, (30, 18))
    assert out.shape == ref.shape == (18, 30, 1)
    assert interior(out, ref).max() <= 2


# ------------------------------------------------------------------------------------------
# Accuracy against cv2.warpAffine
# ------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(matrices, sides, sides, sides, sides, st.booleans())
def test_matches_reference_bilinear(params, sh, sw, dh, dw, align_corners):
    img = smooth_image(sh, sw)
    M = random_matrix(*params, sw, sh)
    out = warp_affine(img, M, (dw, dh), align_corners=align_corners)
    ref = cv2.warpAffine(img, M, (dw, dh), flags=cv2.INTER_LINEAR)
    d = interior(out, ref)
    assert d.mean() <= 0.5
    assert d.max() <= 2


@settings(max_examples=40, deadline=None)
@given(matrices, sides, sides, sides, sides, st.booleans())
def test_matches_reference_nearest_except_ties(params, sh, sw, dh, dw, align_corners):
    img = smooth_image(sh, sw)
    M = random_matrix(*params, sw, sh)
    out = warp_affine(img, M, (dw, dh), align_corners=align_corners, mode="nearest")
    ref = cv2.warpAffine(img, M, (dw, dh), flags=cv2.INTER_NEAREST)
    xy = source_coordinates(M, (dw, dh))
    near_tie = (np.abs(xy - np.floor(xy) - 0.5) < 1e-3).any(axis=-1)
    differs = (out != ref).any(axis=-1)
    assert not (differs & ~near_tie).any(), np.argwhere(differs & ~near_tie)[:5]


def test_nearest_ties_are_the_only_exception():
    """A shift of exactly half a pixel is a tie: the two libraries may round differently."""
    img = np.tile(np.arange(16, dtype=np.uint8) * 10, (4, 1))[..., None]
    M = np.array([[1.0, 0, 0.5], [0, 1, 0]])  # source x = j - 0.5 for every output pixel j
    xy = source_coordinates(M, (16, 4))
    assert (np.abs(xy[..., 0] - np.floor(xy[..., 0]) - 0.5) < 1e-3).all()
    out = warp_affine(img, M, (16, 4), mode="nearest")
    ref = warp_affine_cv2(img, M, (16, 4), interpolation="nearest")
    # Away from ties they agree exactly: shift by 0.25 px instead.
    M2 = np.array([[1.0, 0, 0.25], [0, 1, 0]])
    xy2 = source_coordinates(M2, (16, 4))
    assert not (np.abs(xy2 - np.floor(xy2) - 0.5) < TIE_PX).any()
    out2 = warp_affine(img, M2, (16, 4), mode="nearest")
    ref2 = warp_affine_cv2(img, M2, (16, 4), interpolation="nearest")
    assert (out2 == ref2).all()
    assert out.shape == ref.shape


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("mode", INTERPOLATIONS)
def test_matches_reference_every_mode(mode, padding_mode, align_corners):
    """The documented flag mapping holds for every mode, including the reflection variant."""
    img = smooth_image(40, 56)
    M = matrix_from_params(37, 1.4, 0.2, -0.1, tx=6, ty=-4, center=(20, 30))
    cmp = compare_warps(
        img, M, (64, 48), align_corners=align_corners, mode=mode, padding_mode=padding_mode
    )
    assert cmp.errors.mean_interior <= 0.5
    if mode == "nearest":  # identical except at rounding ties (sample within 1e-3 px of k + 0.5)
        assert cmp.differing_off_ties == 0
    else:
        assert cmp.errors.max_interior <= 2


@pytest.mark.parametrize("align_corners", [False, True])
def test_reflection_variant_depends_on_align_corners(align_corners):
    """BORDER_REFLECT <-> align_corners=False, BORDER_REFLECT_101 <-> True; not the other way."""
    img = smooth_image(40, 56)
    M = matrix_from_params(37, 0.6, tx=6, ty=-4, center=(20, 30))  # shows lots of border
    out = warp_affine(img, M, (64, 48), align_corners=align_corners, padding_mode="reflection")
    right, wrong = (
        (cv2.BORDER_REFLECT_101, cv2.BORDER_REFLECT)
        if align_corners
        else (cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101)
    )
    assert cv2_flags("bilinear", "reflection", align_corners)[1] == right
    good = interior(out, warp_affine_cv2(img, M, (64, 48), border=right))
    bad = interior(out, warp_affine_cv2(img, M, (64, 48), border=wrong))
    assert good.max() <= 1
    assert bad.max() >= 3 * max(good.max(), 1)


def test_float_image_matches_reference_closely():
    img = smooth_image(33, 47).astype(np.float32) / 255
    M = matrix_from_params(-70, 2.2, 0.3, 0.1, tx=-5, ty=9, center=(10, 20))
    for align_corners in (False, True):
        out = warp_affine(img, M, (41, 61), align_corners=align_corners)
        assert out.dtype == np.float32
        ref = warp_affine_cv2(img, M, (41, 61))
        assert interior(out, ref).max() < 1e-4


@pytest.mark.parametrize("align_corners", [False, True])
def test_notes_version_is_clearly_worse(align_corners):
    """The lesson: the notes' 2x/W - 1 normalization misplaces samples; the test keeps it true."""
    correct_means, notes_means = [], []
    for img, M, dsize in seeded_cases(8):
        good = compare_warps(img, M, dsize, align_corners=align_corners)
        bad = compare_warps(img, M, dsize, align_corners=align_corners, notes=True)
        correct_means.append(good.errors.mean_interior)
        notes_means.append(bad.errors.mean_interior)
        shift = math.hypot(*notes_shift_px(M))
        if not align_corners and shift > 0.1:
            assert bad.errors.mean_interior > good.errors.mean_interior + 0.2
            # The sampling grid shows the same shift the formula predicts.
            assert bad.grid_offset_px == pytest.approx(shift, rel=1e-6)
        assert good.grid_offset_px < 1e-6
    assert max(correct_means) <= 0.5
    assert np.mean(notes_means) >= 0.5
    assert np.mean(notes_means) >= 20 * np.mean(correct_means)


# ------------------------------------------------------------------------------------------
# The notes on affine_grid's size, checked live (notes 000:18)
# ------------------------------------------------------------------------------------------


def test_notes_callout_affine_grid_size():
    (callout,) = notes_callouts()
    assert (callout.key, str(callout.ref), callout.verdict) == (
        "affine_grid_size_vs_dsize",
        "000:18",
        "incomplete",
    )
    # the quote is checked at its line by tests/shared/test_notes.py
    assert not callout.run.raised
    assert callout.run.output.splitlines() == [
        "fixed theta, size 4x4, row 0: [4.5, 6.5, 8.5, 10.5]",
        "theta from the output size, row 0: [0.0, 1.0, 2.0, 3.0]",
        "max |difference| from the crop img[:4, :4]: 0.0",
        "max |difference| of the notes' full-size-then-crop: 0.0",
    ]
    assert "row 0 reads [4.5, 6.5, 8.5, 10.5]" in callout.today_text
    assert "the 4x4 output IS the top-left crop img[:4, :4]" in callout.today_text
    assert "gives the same pixels at the cost of a full-size grid; it is not needed" in (
        callout.today_text
    )


# ------------------------------------------------------------------------------------------
# GPU
# ------------------------------------------------------------------------------------------


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu():
    img = smooth_image(64, 80)
    M = matrix_from_params(40, 1.5, 0.2, 0, 4, 3, (40, 32))
    cpu = warp_affine(img, M, (90, 70))
    gpu = warp_affine(img, M, (90, 70), device="cuda:0")
    assert np.abs(cpu.astype(int) - gpu.astype(int)).max() <= 1
    timing = time_warps(img, M, (90, 70), device="cuda:0", repeats=2)
    assert timing.device == "cuda:0"
