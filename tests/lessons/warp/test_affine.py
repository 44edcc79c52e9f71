"""Tests for lessons.warp.affine: OpenCV matrices through affine_grid/grid_sample vs
cv2.warpAffine."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from core.images import load_sample
from lessons.warp import affine as warp

# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------


def smooth_image(h: int, w: int) -> np.ndarray:
    """(h, w, 3) uint8: a gradient plus low-frequency sinusoids (a few grey levels per pixel)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    u, v = xx / max(w - 1, 1), yy / max(h - 1, 1)
    chans = [
        40 + 150 * u + 50 * v,
        128 + 80 * np.sin(2 * np.pi * 1.5 * u) * np.cos(2 * np.pi * v),
        200 - 120 * v + 30 * np.sin(2 * np.pi * 2 * (u + v) / 2),
    ]
    return np.clip(np.rint(np.stack(chans, -1)), 0, 255).astype(np.uint8)


def random_matrix(
    angle: float,
    scale: float,
    shx: float,
    shy: float,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    w: int,
    h: int,
) -> np.ndarray:
    """The issue's family: rotation, scale, shear, translation up to +-W (fx, fy in -1..1)."""
    return warp.matrix_from_params(
        angle, scale, shx, shy, tx=fx * w, ty=fy * h, center=(cx * (w - 1), cy * (h - 1))
    )


unit = st.floats(-1.0, 1.0)
matrices = st.tuples(
    st.floats(-180.0, 180.0),  # angle
    st.floats(0.3, 3.0),  # scale
    st.floats(-0.5, 0.5),  # shear x
    st.floats(-0.5, 0.5),  # shear y
    unit,  # tx / W
    unit,  # ty / H
    st.floats(0.0, 1.0),  # centre x / W
    st.floats(0.0, 1.0),  # centre y / H
)
sides = st.integers(16, 80)


def interior(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return d[warp.BORDER_PX : -warp.BORDER_PX, warp.BORDER_PX : -warp.BORDER_PX]


def covered_fraction(M: np.ndarray, src_hw: tuple[int, int], dsize: tuple[int, int]) -> float:
    xy = warp.source_coordinates(M, dsize)
    h, w = src_hw
    inside = (xy[..., 0] >= 0) & (xy[..., 0] <= w - 1) & (xy[..., 1] >= 0) & (xy[..., 1] <= h - 1)
    return float(inside.mean())


def seeded_cases(n: int, seed: int = 7, min_cover: float = 0.3):
    """n random cases (image, M, dsize) whose output is at least ``min_cover`` image content."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < n:
        sh, sw, dh, dw = (int(v) for v in rng.integers(24, 96, 4))
        params = (
            rng.uniform(-180, 180),
            rng.uniform(0.3, 3),
            *rng.uniform(-0.5, 0.5, 2),
            *rng.uniform(-1, 1, 2),
            *rng.uniform(0, 1, 2),
        )
        M = random_matrix(*params, sw, sh)
        if covered_fraction(M, (sh, sw), (dw, dh)) >= min_cover:
            cases.append((smooth_image(sh, sw), M, (dw, dh)))
    return cases


# ------------------------------------------------------------------------------------------
# Smoke and exceptions
# ------------------------------------------------------------------------------------------


def test_smoke():
    img = smooth_image(30, 40)
    M = warp.matrix_from_params(20, 1.2, center=(20, 15))
    out = warp.warp_affine(img, M, (50, 25))
    assert out.shape == (25, 50, 3) and out.dtype == np.uint8
    cmp = warp.compare_warps(img, M, (50, 25), mode="nearest", padding_mode="reflection")
    assert cmp.reference.shape == cmp.warped.shape == (25, 50, 3)
    assert cmp.difference.shape == (25, 50)
    assert cmp.cv2_interpolation == "cv2.INTER_NEAREST"
    assert cmp.cv2_border == "cv2.BORDER_REFLECT"
    assert cmp.matrices.theta.shape == (2, 3) and cmp.matrices.n_src.shape == (3, 3)
    assert cmp.grid.in_x.size <= warp.MAX_GRID_POINTS * 2
    timing = warp.time_warps(img, M, (50, 25), repeats=1)
    assert timing.cv2_ms > 0 and timing.torch_ms > 0 and timing.torch_kernel_ms > 0


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: warp.affine_to_theta([[1, 2, 0], [2, 4, 0]], (8, 8), (8, 8)), "singular"),
        (lambda: warp.affine_to_theta(np.zeros((2, 3)), (8, 8), (8, 8)), "singular"),
        (lambda: warp.affine_to_theta([[1, 0, np.nan], [0, 1, 0]], (8, 8), (8, 8)), "NaN"),
        (lambda: warp.affine_to_theta([[1, 0, 0], [0, np.inf, 0]], (8, 8), (8, 8)), "M[1][1]=inf"),
        (lambda: warp.affine_to_theta([[1, 0], [0, 1]], (8, 8), (8, 8)), "2x3"),
        (lambda: warp.validate_affine(np.eye(3) * 2), "last row"),
        (lambda: warp.matrix_from_entries([1, 0, 0, 0, 0, 0]), "singular"),
        (lambda: warp.matrix_from_params(scale=0), "scale must be positive"),
        (lambda: warp.matrix_from_params(shear_x=1, shear_y=1), "singular"),
        (lambda: warp.matrix_from_params(angle_deg=math.nan), "angle"),
        (
            lambda: warp.matrix_from_points([(0, 0), (1, 1), (2, 2)], [(0, 0), (1, 0), (0, 1)]),
            "source points (0, 0), (1, 1), (2, 2) are collinear",
        ),
        (
            lambda: warp.matrix_from_points([(0, 0), (1, 0), (0, 1)], [(5, 5), (5, 5), (6, 7)]),
            "destination points",
        ),
        (lambda: warp.matrix_from_points([(0, 0), (1, 0)], [(0, 0), (1, 0)]), "three"),
        (
            lambda: warp.matrix_from_points(
                [(0, 0), (1e39, 0), (0, 1e39)], [(0, 0), (9, 0), (0, 9)]
            ),
            "source point coordinates must lie within ±1,000,000 px",
        ),
        (
            lambda: warp.matrix_from_points(
                [(0, 0), (9, 0), (0, 9)], [(0, 0), (-1e200, 0), (0, 9)]
            ),
            "destination point coordinates",
        ),
        (lambda: warp.parse_matrix_text("1e300 0 0\n0 1e300 0"), "too large to invert"),
        (lambda: warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (0, 8)), "0x8"),
        (lambda: warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 0)), "too small"),
        (lambda: warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (5000, 8)), "cap of 2048"),
        (lambda: warp.warp_affine(np.zeros((1, 1, 3), np.uint8), np.eye(2, 3), (8, 8)), "1x1"),
        (
            lambda: warp.warp_affine(np.zeros((8, 8, 2), np.uint8), np.eye(2, 3), (8, 8)),
            "(8, 8, 2)",
        ),
        (lambda: warp.warp_affine(np.zeros((8, 8), np.int64), np.eye(2, 3), (8, 8)), "int64"),
        (
            lambda: warp.warp_affine(np.full((8, 8), np.nan, np.float32), np.eye(2, 3), (8, 8)),
            "NaN",
        ),
        (lambda: warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), mode="area"), "area"),
        (
            lambda: warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), padding_mode="wrap"),
            "wrap",
        ),
        (lambda: warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), device="tpu"), "tpu"),
        (lambda: warp.time_warps(smooth_image(8, 8), np.eye(2, 3), (8, 8), repeats=0), "repeats"),
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
    assert warp.reflection_reach(far, (8, 8), (8, 8)) == pytest.approx(1e6 / 8, rel=1e-3)
    for call in (
        lambda: warp.compare_warps(
            img, far, (8, 8), padding_mode="reflection", align_corners=align_corners
        ),
        lambda: warp.time_warps(img, far, (8, 8), padding_mode="reflection", repeats=1),
        lambda: warp.warp_affine_cv2(img, far, (8, 8), border=cv2.BORDER_REFLECT_101),
    ):
        with pytest.raises(ValueError, match="reflection padding .* 125,000 image widths"):
            call()
    # zeros/border padding stay allowed (cv2 clips or fills in constant time) ...
    assert warp.compare_warps(img, far, (8, 8), padding_mode="border").errors.max_whole <= 2
    # ... and so does reflection a sane distance away (the page's sliders reach ~30 at most).
    near = np.array([[0.1, 0, 0], [0, 0.1, 0]])  # output 80 px -> source 790 px: reach 97.6
    assert warp.reflection_reach(near, (8, 8), (80, 80)) < warp.MAX_REFLECTION_REACH
    warp.compare_warps(img, near, (80, 80), padding_mode="reflection")
    assert warp.reflection_reach(np.eye(2, 3), (8, 8), (8, 8)) == 0.0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_exception_cuda_without_gpu():
    with pytest.raises(ValueError, match="no CUDA GPU"):
        warp.warp_affine(smooth_image(8, 8), np.eye(2, 3), (8, 8), device="cuda:0")


@pytest.mark.parametrize("shape", [(20, 24), (20, 24, 1)])
def test_grayscale_is_warped_as_one_channel(shape):
    img = smooth_image(20, 24)[:, :, 0].reshape(shape)
    M = warp.matrix_from_params(25, 0.8, center=(12, 10))
    out = warp.warp_affine(img, M, (30, 18))
    ref = warp.warp_affine_cv2(img, M, (30, 18))
    assert out.shape == ref.shape == (18, 30, 1)
    assert interior(out, ref).max() <= 2


# ------------------------------------------------------------------------------------------
# Matrices
# ------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(matrices, sides, sides, sides, sides, st.booleans())
def test_round_trip(params, sh, sw, dh, dw, align_corners):
    M = random_matrix(*params, sw, sh)
    theta = warp.affine_to_theta(M, (sh, sw), (dh, dw), align_corners)
    assert theta.shape == (1, 2, 3)
    back = warp.theta_to_affine(theta, (sh, sw), (dh, dw), align_corners)
    np.testing.assert_allclose(back, M, rtol=0, atol=1e-6)


@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_theta_and_formula(align_corners):
    theta = warp.affine_to_theta(np.eye(2, 3), (30, 40), (30, 40), align_corners)
    np.testing.assert_allclose(theta[0].numpy(), np.eye(2, 3), atol=1e-12)
    n = warp.normalization_matrix(40, 30, align_corners)
    x_n = n @ [0, 0, 1]
    expected = -1.0 if align_corners else 1 / 40 - 1  # (2*0 + 1)/W - 1
    assert x_n[0] == pytest.approx(expected)


def test_theta_matches_facts_formula():
    """theta = N_src @ M^-1 @ N_dst^-1, written out by hand for a 2x scale-up."""
    M = np.array([[2.0, 0, 0], [0, 2.0, 0]])  # 10x10 -> 20x20
    theta = warp.affine_to_theta(M, (10, 10), (20, 20), align_corners=False)[0].numpy()
    # output pixel j -> source x = j/2; normalized: out x_o = (2j+1)/20 - 1, in (2x+1)/10 - 1
    # => j = 10(x_o + 1) - 0.5, x_in = (j + 1)/10 - 1 = x_o + 0.05: theta = [[1, 0, 0.05], ...]
    np.testing.assert_allclose(theta, [[1, 0, 0.05], [0, 1, 0.05]], atol=1e-12)


def test_matrix_from_params_matches_cv2():
    M = warp.matrix_from_params(33, 1.7, center=(30, 20))
    np.testing.assert_allclose(M, cv2.getRotationMatrix2D((30, 20), 33, 1.7), atol=1e-12)
    sheared = warp.matrix_from_params(0, 1, shear_x=0.5, center=(10, 10), tx=3)
    # The centre moves only by the translation; a point right of it moves by the shear.
    np.testing.assert_allclose(sheared @ [10, 10, 1], [13, 10], atol=1e-12)
    np.testing.assert_allclose(sheared @ [10, 12, 1], [14, 12], atol=1e-12)


def test_matrix_from_points_maps_points():
    src = [(0, 0), (40, 0), (0, 30)]
    dst = [(5, 3), (42, 10), (-2, 31)]
    M = warp.matrix_from_points(src, dst)
    mapped = np.hstack([np.array(src, float), np.ones((3, 1))]) @ M.T
    np.testing.assert_allclose(mapped, dst, atol=1e-3)


# ------------------------------------------------------------------------------------------
# Accuracy against cv2.warpAffine (the acceptance tests)
# ------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(matrices, sides, sides, sides, sides, st.booleans())
def test_matches_reference_bilinear(params, sh, sw, dh, dw, align_corners):
    img = smooth_image(sh, sw)
    M = random_matrix(*params, sw, sh)
    out = warp.warp_affine(img, M, (dw, dh), align_corners=align_corners)
    ref = cv2.warpAffine(img, M, (dw, dh), flags=cv2.INTER_LINEAR)
    d = interior(out, ref)
    assert d.mean() <= 0.5
    assert d.max() <= 2


@settings(max_examples=40, deadline=None)
@given(matrices, sides, sides, sides, sides, st.booleans())
def test_matches_reference_nearest_except_ties(params, sh, sw, dh, dw, align_corners):
    img = smooth_image(sh, sw)
    M = random_matrix(*params, sw, sh)
    out = warp.warp_affine(img, M, (dw, dh), align_corners=align_corners, mode="nearest")
    ref = cv2.warpAffine(img, M, (dw, dh), flags=cv2.INTER_NEAREST)
    xy = warp.source_coordinates(M, (dw, dh))
    near_tie = (np.abs(xy - np.floor(xy) - 0.5) < 1e-3).any(axis=-1)
    differs = (out != ref).any(axis=-1)
    assert not (differs & ~near_tie).any(), np.argwhere(differs & ~near_tie)[:5]


def test_nearest_ties_are_the_only_exception():
    """A shift of exactly half a pixel is a tie: the two libraries may round differently."""
    img = np.tile(np.arange(16, dtype=np.uint8) * 10, (4, 1))[..., None]
    M = np.array([[1.0, 0, 0.5], [0, 1, 0]])  # source x = j - 0.5 for every output pixel j
    xy = warp.source_coordinates(M, (16, 4))
    assert (np.abs(xy[..., 0] - np.floor(xy[..., 0]) - 0.5) < 1e-3).all()
    out = warp.warp_affine(img, M, (16, 4), mode="nearest")
    ref = warp.warp_affine_cv2(img, M, (16, 4), interpolation="nearest")
    # Away from ties they agree exactly: shift by 0.25 px instead.
    M2 = np.array([[1.0, 0, 0.25], [0, 1, 0]])
    assert not warp.near_ties(M2, (16, 4)).any() and warp.near_ties(M, (16, 4)).all()
    out2 = warp.warp_affine(img, M2, (16, 4), mode="nearest")
    ref2 = warp.warp_affine_cv2(img, M2, (16, 4), interpolation="nearest")
    assert (out2 == ref2).all()
    assert out.shape == ref.shape


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", warp.PADDING_MODES)
@pytest.mark.parametrize("mode", warp.INTERPOLATIONS)
def test_matches_reference_every_mode(mode, padding_mode, align_corners):
    """The documented flag mapping holds for every mode, including the reflection variant."""
    img = smooth_image(40, 56)
    M = warp.matrix_from_params(37, 1.4, 0.2, -0.1, tx=6, ty=-4, center=(20, 30))
    cmp = warp.compare_warps(
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
    M = warp.matrix_from_params(37, 0.6, tx=6, ty=-4, center=(20, 30))  # shows lots of border
    out = warp.warp_affine(img, M, (64, 48), align_corners=align_corners, padding_mode="reflection")
    right, wrong = (
        (cv2.BORDER_REFLECT_101, cv2.BORDER_REFLECT)
        if align_corners
        else (cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101)
    )
    assert warp.cv2_flags("bilinear", "reflection", align_corners)[1] == right
    good = interior(out, warp.warp_affine_cv2(img, M, (64, 48), border=right))
    bad = interior(out, warp.warp_affine_cv2(img, M, (64, 48), border=wrong))
    assert good.max() <= 1
    assert bad.max() >= 3 * max(good.max(), 1)


def test_float_image_matches_reference_closely():
    img = smooth_image(33, 47).astype(np.float32) / 255
    M = warp.matrix_from_params(-70, 2.2, 0.3, 0.1, tx=-5, ty=9, center=(10, 20))
    for align_corners in (False, True):
        out = warp.warp_affine(img, M, (41, 61), align_corners=align_corners)
        assert out.dtype == np.float32
        ref = warp.warp_affine_cv2(img, M, (41, 61))
        assert interior(out, ref).max() < 1e-4


@pytest.mark.parametrize("align_corners", [False, True])
def test_notes_version_is_clearly_worse(align_corners):
    """The lesson: the notes' 2x/W - 1 normalization misplaces samples; the test keeps it true."""
    correct_means, notes_means = [], []
    for img, M, dsize in seeded_cases(8):
        good = warp.compare_warps(img, M, dsize, align_corners=align_corners)
        bad = warp.compare_warps(img, M, dsize, align_corners=align_corners, notes=True)
        correct_means.append(good.errors.mean_interior)
        notes_means.append(bad.errors.mean_interior)
        shift = math.hypot(*warp.notes_shift_px(M))
        if not align_corners and shift > 0.1:
            assert bad.errors.mean_interior > good.errors.mean_interior + 0.2
            # The sampling grid shows the same shift the formula predicts.
            assert bad.grid_offset_px == pytest.approx(shift, rel=1e-6)
        assert good.grid_offset_px < 1e-6
    assert max(correct_means) <= 0.5
    assert np.mean(notes_means) >= 0.5
    assert np.mean(notes_means) >= 20 * np.mean(correct_means)


def test_notes_shift_matches_facts():
    """facts.md: ~0.36 px for a 30 degree x1.3 warp of an 8x8 image (align_corners=False)."""
    M = cv2.getRotationMatrix2D((4, 4), 30, 1.3)
    assert math.hypot(*warp.notes_shift_px(M)) == pytest.approx(0.36, abs=0.005)
    assert warp.notes_shift_px(np.array([[1.0, 0, 3], [0, 1, -2]])) == (0.0, 0.0)


def test_sampling_grid_matches_affine_grid():
    img_hw, dst_hw = (30, 40), (25, 35)
    M = warp.matrix_from_params(15, 0.9, 0.1, 0, 3, 2, (20, 15))
    for align_corners in (False, True):
        theta = warp.affine_to_theta(M, img_hw, dst_hw, align_corners)
        g = warp.sampling_grid(theta, M, img_hw, dst_hw, align_corners, max_points=10_000)
        full = F.affine_grid(theta, [1, 1, *dst_hw], align_corners=align_corners)[0].numpy()
        n_inv = np.linalg.inv(warp.normalization_matrix(40, 30, align_corners))
        px = full @ n_inv[:2, :2].T + n_inv[:2, 2]
        np.testing.assert_allclose(g.in_x, px[..., 0].ravel(), atol=1e-9)
        np.testing.assert_allclose(g.in_y, px[..., 1].ravel(), atol=1e-9)
        np.testing.assert_allclose(g.in_x, g.ref_x, atol=1e-9)
    zoom = warp.zoom_grid(theta, M, img_hw, dst_hw, True, radius=3)
    assert zoom.out_x.size == 49 and np.ptp(zoom.out_x) == 6
    np.testing.assert_allclose(zoom.in_y, zoom.ref_y, atol=1e-9)
    notes_theta = warp.notes_affine2theta(M, img_hw, dst_hw)
    off = warp.zoom_grid(notes_theta, M, img_hw, dst_hw, False)
    dx, dy = warp.notes_shift_px(M)
    np.testing.assert_allclose(off.in_x - off.ref_x, dx, atol=1e-9)
    np.testing.assert_allclose(off.in_y - off.ref_y, dy, atol=1e-9)
    crop = warp.crop_around(smooth_image(30, 40), zoom.in_x, zoom.in_y)
    assert crop is not None and crop[0].shape[0] >= 7
    assert warp.crop_around(smooth_image(30, 40), np.array([-50.0]), np.array([-50.0])) is None
    small = warp.sampling_grid(theta, M, img_hw, dst_hw, True, max_points=50)
    assert small.step > 1 and small.out_x.max() == 34 and small.out_y.max() == 24


# ------------------------------------------------------------------------------------------
# Snippet
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("align_corners", "mode", "padding_mode", "notes"),
    [
        (False, "bilinear", "zeros", False),
        (True, "nearest", "reflection", False),
        (False, "bicubic", "border", False),
        (False, "bilinear", "zeros", True),
    ],
)
def test_snippet_runs_and_matches_core(align_corners, mode, padding_mode, notes, capsys):
    img = load_sample("chelsea.png").rgb
    M = warp.matrix_from_params(-25, 1.3, 0.2, 0, 10, -5, (200, 150))
    dsize = (320, 200)
    code = warp.snippet_for(
        M, dsize, align_corners=align_corners, mode=mode, padding_mode=padding_mode, notes=notes
    )
    namespace: dict = {}
    exec(compile(code, "<warp snippet>", "exec"), namespace)
    assert "interior |grid_sample - cv2.warpAffine|" in capsys.readouterr().out
    np.testing.assert_array_equal(namespace["img"], img)
    cmp = warp.compare_warps(
        img,
        M,
        dsize,
        align_corners=align_corners,
        mode=mode,
        padding_mode=padding_mode,
        notes=notes,
    )
    np.testing.assert_array_equal(namespace["out"], cmp.warped)
    np.testing.assert_array_equal(namespace["ref"], cmp.reference)


# ------------------------------------------------------------------------------------------
# GPU
# ------------------------------------------------------------------------------------------


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu():
    img = smooth_image(64, 80)
    M = warp.matrix_from_params(40, 1.5, 0.2, 0, 4, 3, (40, 32))
    cpu = warp.warp_affine(img, M, (90, 70))
    gpu = warp.warp_affine(img, M, (90, 70), device="cuda:0")
    assert np.abs(cpu.astype(int) - gpu.astype(int)).max() <= 1
    timing = warp.time_warps(img, M, (90, 70), device="cuda:0", repeats=2)
    assert timing.device == "cuda:0"


def test_previews_keep_the_max_and_the_geometry():
    diff = np.zeros((1000, 700), np.float32)
    diff[999, 3] = 7.0
    pooled, factor = warp.max_pool_preview(diff, max_side=400)
    assert factor == 3 and pooled.shape == (334, 234) and pooled.max() == 7.0
    assert pooled[333, 1] == 7.0
    small, sx, sy = warp.image_preview(smooth_image(300, 451), max_side=200)
    assert max(small.shape[:2]) == 200 and small.dtype == np.uint8
    assert sx == pytest.approx(451 / small.shape[1]) and sy == pytest.approx(300 / small.shape[0])
    same, sx1, _ = warp.image_preview(smooth_image(30, 40))
    assert same.shape == (30, 40, 3) and sx1 == 1.0
    with pytest.raises(ValueError, match="shape"):
        warp.max_pool_preview(np.zeros((3, 3, 3)))


def test_parse_matrix_text_and_helpers():
    np.testing.assert_array_equal(
        warp.parse_matrix_text("[[1, 0, 5],\n [0, 1, -2]]"), [[1, 0, 5], [0, 1, -2]]
    )
    with pytest.raises(ValueError, match="'x' in the matrix is not a number"):
        warp.parse_matrix_text("1 0 x\n0 1 0")
    with pytest.raises(ValueError, match="NaN"):
        warp.parse_matrix_text("nan 0 0\n0 1 0")
    src, dst = warp.default_points(451, 300)
    assert warp.matrix_from_points(src, dst).shape == (2, 3)
    assert warp.is_grayscale(np.dstack([smooth_image(5, 5)[..., 0]] * 3))
    assert not warp.is_grayscale(smooth_image(5, 5))
    assert warp.matrix_latex(np.eye(2, 3)).startswith(r"\begin{bmatrix}1 & 0 & 0")


# ------------------------------------------------------------------------------------------
# The output size is OpenCV's dsize canvas (issue 11 §2; notes 000:18)
# ------------------------------------------------------------------------------------------

IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


@pytest.mark.parametrize("mode", warp.INTERPOLATIONS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_half_size_is_the_top_left_crop(mode, align_corners):
    img = load_sample("chelsea.png").rgb
    h, w = img.shape[:2]
    half = (round(w / 2), round(h / 2))
    out = warp.warp_affine(img, IDENTITY, half, mode=mode, align_corners=align_corners)
    np.testing.assert_array_equal(out, img[: half[1], : half[0]])
    ref = cv2.warpAffine(img, IDENTITY, half, flags=warp.CV2_INTERPOLATION[mode])
    np.testing.assert_array_equal(out, ref)  # cv2's dsize crops the same way


def test_canvas_check_and_caption_for_the_crop():
    img = load_sample("chelsea.png").rgb
    check = warp.canvas_check(img, IDENTITY, (226, 150))
    assert check == warp.CanvasCheck((226, 150), (451, 300), (226, 150), 0.0, True, 0.0)
    caption = warp.output_size_caption(check)
    assert "denser" not in caption and "densely the input is sampled is set by M alone" in caption
    assert "only changes how densely" not in caption
    assert "works as OpenCV's `dsize = (width, height)`, a canvas" in caption
    assert "this 226×150 output is exactly the top-left 226×150 window" in caption
    assert "exactly the input's top-left crop `img[:150, :226]`, not a resampled copy" in caption


def test_canvas_check_enlarge_and_rotation():
    img = smooth_image(40, 60)
    big = warp.canvas_check(img, IDENTITY, (120, 80))
    assert (big.window, big.max_abs_vs_src_size, big.max_abs_vs_input_crop) == ((60, 40), 0, 0)
    assert "the top-left 60×40 window of this 120×80 output is exactly" in (
        warp.output_size_caption(big)
    )
    m = warp.matrix_from_params(25, 1.3, center=(30, 20))
    rot = warp.canvas_check(img, m, (37, 55))
    assert rot.window == (37, 40) and not rot.identity and rot.max_abs_vs_input_crop is None
    assert rot.max_abs_vs_src_size <= 1  # float32 sample positions: at most one grey level
    same = warp.canvas_check(img, m, (60, 40))
    assert "Checked now" not in warp.output_size_caption(same)


def test_canvas_check_uses_a_given_warp_and_rejects_a_wrong_one():
    img = smooth_image(20, 30)
    out = warp.warp_affine(img, IDENTITY, (10, 8))
    assert warp.canvas_check(img, IDENTITY, (10, 8), warped=out).max_abs_vs_input_crop == 0
    with pytest.raises(ValueError, match="warped must be the 11x8 output"):
        warp.canvas_check(img, IDENTITY, (11, 8), warped=out)


def test_notes_callout_affine_grid_size():
    (callout,) = warp.notes_callouts()
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


class TestEstimateWarpSeconds:
    """The page's cost model: what decides whether a view waits for a click (ui.heavy)."""

    def test_grows_with_the_output_the_mode_and_the_notes(self):
        est = warp.estimate_warp_seconds
        assert est(451, 300) < est(1024, 1024) < est(2048, 2048)
        assert est(1024, 1024, "nearest") < est(1024, 1024, "bilinear") < est(
            1024, 1024, "bicubic")
        assert est(1024, 1024, notes=True) > est(1024, 1024)

    def test_teaching_sizes_fit_the_budget_and_the_largest_does_not(self):
        assert warp.estimate_warp_seconds(902, 600, "bicubic", notes=True) < 2.0  # Double
        assert warp.estimate_warp_seconds(1024, 1024, "bicubic", notes=True) < 2.0
        assert warp.estimate_warp_seconds(
            warp.MAX_OUTPUT_SIDE, warp.MAX_OUTPUT_SIDE, "nearest") > 2.0

    @pytest.mark.parametrize(("args", "match"), [
        ((10, 10, "lanczos"), "lanczos"), ((0, 10, "bilinear"), "0x10")])
    def test_exception(self, args, match):
        with pytest.raises(ValueError, match=match):
            warp.estimate_warp_seconds(*args)

    def test_the_output_cap_is_the_largest_input_side(self):
        from core.images import DEFAULT_MAX_SIDE

        assert warp.MAX_OUTPUT_SIDE == DEFAULT_MAX_SIDE
        assert warp.validate_dsize((2048, 2048)) == (2048, 2048)
        with pytest.raises(ValueError, match="cap of 2048"):
            warp.validate_dsize((2049, 8))


class TestPreviewDsize:
    def test_the_corner_fits_the_budget_and_stays_inside_the_output(self):
        for dsize, mode, notes in (((2048, 2048), "bicubic", True), ((2048, 1500), "bilinear",
                                                                       False)):
            w, h = warp.preview_dsize(dsize, mode, notes=notes, seconds=2.0)
            assert (w, h) != dsize and w <= dsize[0] and h <= dsize[1]
            assert warp.estimate_warp_seconds(w, h, mode, notes=notes) <= 2.0

    def test_a_cheap_output_is_its_own_preview(self):
        assert warp.preview_dsize((451, 300), "bilinear", seconds=2.0) == (451, 300)

    def test_the_corner_is_the_same_pixels_as_the_whole(self):
        img = np.random.default_rng(0).integers(0, 256, (40, 50, 3), np.uint8)
        M = np.array([[0.9, -0.2, 6.0], [0.25, 1.1, -3.0]])
        whole = warp.compare_warps(img, M, (64, 48))
        corner = warp.compare_warps(img, M, (32, 24))
        assert np.array_equal(corner.reference, whole.reference[:24, :32])
        assert np.abs(corner.warped.astype(int) - whole.warped[:24, :32].astype(int)).max() <= 1

    def test_exception(self):
        with pytest.raises(ValueError, match="seconds must be positive"):
            warp.preview_dsize((100, 100), seconds=0)
        with pytest.raises(ValueError, match="interpolation"):
            warp.preview_dsize((100, 100), "cubic")
