"""lessons.warp.cost: the page's cost model, which decides whether a view waits for a click."""

from __future__ import annotations

import numpy as np
import pytest

from lessons.warp.affine import compare_warps
from lessons.warp.cost import estimate_warp_seconds, preview_dsize
from lessons.warp.validation import MAX_OUTPUT_SIDE, validate_dsize


class TestEstimateWarpSeconds:
    """The page's cost model: what decides whether a view waits for a click (ui.heavy)."""

    def test_grows_with_the_output_the_mode_and_the_notes(self):
        est = estimate_warp_seconds
        assert est(451, 300) < est(1024, 1024) < est(2048, 2048)
        assert est(1024, 1024, "nearest") < est(1024, 1024, "bilinear") < est(
            1024, 1024, "bicubic")
        assert est(1024, 1024, notes=True) > est(1024, 1024)

    def test_teaching_sizes_fit_the_budget_and_the_largest_does_not(self):
        assert estimate_warp_seconds(902, 600, "bicubic", notes=True) < 2.0  # Double
        assert estimate_warp_seconds(1024, 1024, "bicubic", notes=True) < 2.0
        assert estimate_warp_seconds(
            MAX_OUTPUT_SIDE, MAX_OUTPUT_SIDE, "nearest") > 2.0

    @pytest.mark.parametrize(("args", "match"), [
        ((10, 10, "lanczos"), "lanczos"), ((0, 10, "bilinear"), "0x10")])
    def test_exception(self, args, match):
        with pytest.raises(ValueError, match=match):
            estimate_warp_seconds(*args)

    def test_the_output_cap_is_the_largest_input_side(self):
        from core.images import DEFAULT_MAX_SIDE

        assert MAX_OUTPUT_SIDE == DEFAULT_MAX_SIDE
        assert validate_dsize((2048, 2048)) == (2048, 2048)
        with pytest.raises(ValueError, match="cap of 2048"):
            validate_dsize((2049, 8))


class TestPreviewDsize:
    def test_the_corner_fits_the_budget_and_stays_inside_the_output(self):
        for dsize, mode, notes in (((2048, 2048), "bicubic", True), ((2048, 1500), "bilinear",
                                                                       False)):
            w, h = preview_dsize(dsize, mode, notes=notes, seconds=2.0)
            assert (w, h) != dsize and w <= dsize[0] and h <= dsize[1]
            assert estimate_warp_seconds(w, h, mode, notes=notes) <= 2.0

    def test_a_cheap_output_is_its_own_preview(self):
        assert preview_dsize((451, 300), "bilinear", seconds=2.0) == (451, 300)

    def test_the_corner_is_the_same_pixels_as_the_whole(self):
        img = np.random.default_rng(0).integers(0, 256, (40, 50, 3), np.uint8)
        M = np.array([[0.9, -0.2, 6.0], [0.25, 1.1, -3.0]])
        whole = compare_warps(img, M, (64, 48))
        corner = compare_warps(img, M, (32, 24))
        assert np.array_equal(corner.reference, whole.reference[:24, :32])
        assert np.abs(corner.warped.astype(int) - whole.warped[:24, :32].astype(int)).max() <= 1

    def test_exception(self):
        with pytest.raises(ValueError, match="seconds must be positive"):
            preview_dsize((100, 100), seconds=0)
        with pytest.raises(ValueError, match="interpolation"):
            preview_dsize((100, 100), "cubic")
