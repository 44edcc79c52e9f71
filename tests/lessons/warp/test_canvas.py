"""lessons.warp.canvas: the output size is OpenCV's dsize canvas (notes 000:18)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from core.images import load_sample
from lessons.warp.affine import CV2_INTERPOLATION, warp_affine
from lessons.warp.canvas import (
    SIZE_MODES,
    CanvasCheck,
    canvas_check,
    output_size_caption,
    preset_size,
)
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.validation import INTERPOLATIONS
from tests.lessons.warp.cases import (
    IDENTITY,
    smooth_image,
)


@pytest.mark.parametrize("mode", INTERPOLATIONS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_half_size_is_the_top_left_crop(mode, align_corners):
    img = load_sample("chelsea.png").rgb
    h, w = img.shape[:2]
    half = (round(w / 2), round(h / 2))
    out = warp_affine(img, IDENTITY, half, mode=mode, align_corners=align_corners)
    np.testing.assert_array_equal(out, img[: half[1], : half[0]])
    ref = cv2.warpAffine(img, IDENTITY, half, flags=CV2_INTERPOLATION[mode])
    np.testing.assert_array_equal(out, ref)  # cv2's dsize crops the same way


def test_canvas_check_and_caption_for_the_crop():
    img = load_sample("chelsea.png").rgb
    check = canvas_check(img, IDENTITY, (226, 150))
    assert check == CanvasCheck((226, 150), (451, 300), (226, 150), 0.0, True, 0.0)
    caption = output_size_caption(check)
    assert "denser" not in caption and "densely the input is sampled is set by M alone" in caption
    assert "only changes how densely" not in caption
    assert "works as OpenCV's `dsize = (width, height)`, a canvas" in caption
    assert "this 226×150 output is exactly the top-left 226×150 window" in caption
    assert "exactly the input's top-left crop `img[:150, :226]`, not a resampled copy" in caption


def test_canvas_check_enlarge_and_rotation():
    img = smooth_image(40, 60)
    big = canvas_check(img, IDENTITY, (120, 80))
    assert (big.window, big.max_abs_vs_src_size, big.max_abs_vs_input_crop) == ((60, 40), 0, 0)
    assert "the top-left 60×40 window of this 120×80 output is exactly" in (
        output_size_caption(big)
    )
    m = matrix_from_params(25, 1.3, center=(30, 20))
    rot = canvas_check(img, m, (37, 55))
    assert rot.window == (37, 40) and not rot.identity and rot.max_abs_vs_input_crop is None
    assert rot.max_abs_vs_src_size <= 1  # float32 sample positions: at most one grey level
    same = canvas_check(img, m, (60, 40))
    assert "Checked now" not in output_size_caption(same)


def test_canvas_check_uses_a_given_warp_and_rejects_a_wrong_one():
    img = smooth_image(20, 30)
    out = warp_affine(img, IDENTITY, (10, 8))
    assert canvas_check(img, IDENTITY, (10, 8), warped=out).max_abs_vs_input_crop == 0
    with pytest.raises(ValueError, match="warped must be the 11x8 output"):
        canvas_check(img, IDENTITY, (11, 8), warped=out)


@pytest.mark.parametrize(
    ("size_mode", "size"),
    [
        ("Same as input", (451, 300)),
        ("Half (shrink)", (226, 150)),
        ("Double (enlarge)", (902, 600)),
    ],
)
def test_preset_sizes(size_mode, size):
    assert preset_size(size_mode, 451, 300) == size
    assert size_mode in SIZE_MODES


def test_preset_size_of_a_tiny_image_is_left_to_validation_and_custom_is_no_preset():
    assert preset_size("Half (shrink)", 2, 2) == (1, 1)  # validate_dsize refuses it
    with pytest.raises(ValueError, match="'Custom'"):
        preset_size("Custom", 451, 300)
