"""Tests for lessons.flow.gradual_mean: the fast fill equals the notes' avg_pool2d reference and
a per-pixel loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.flow.baselines import inpaint_fill, nearest_fill
from lessons.flow.gradual_mean import gradual_mean_fill, scale_means, window_sizes
from lessons.flow.references import (
    loop_reference,
    notes_gradual_mean_torch,
)
from tests.lessons.flow.flow_cases import CPU_BACKENDS, TOL, random_flow


def _assert_all_agree(x: np.ndarray, max_window: int, *, loop: bool = True) -> None:
    ref = notes_gradual_mean_torch(x, max_window)
    expected_unfilled = int(np.isnan(ref).sum())
    for backend in CPU_BACKENDS:
        r = gradual_mean_fill(x, max_window, backend=backend)
        np.testing.assert_allclose(r.filled, ref, **TOL, err_msg=backend)
        assert r.unfilled == expected_unfilled, backend
        assert r.holes == int(np.isnan(x).sum())
        assert r.filled.dtype == x.dtype and r.filled.shape == x.shape
    if loop:
        np.testing.assert_allclose(loop_reference(x, max_window), ref, **TOL)


def test_smoke():
    f = np.ones((6, 7, 2), np.float32)
    f[2, 3] = np.nan
    r = gradual_mean_fill(f, 5)
    assert r.windows == (3, 5)
    assert r.unfilled == 0 and r.holes == 2
    np.testing.assert_allclose(r.filled, 1.0)
    assert r.scales_used[2, 3].tolist() == [2, 2]
    assert r.scales_used[0, 0].tolist() == [0, 0]


def test_window_sizes():
    assert window_sizes(3) == (3,)
    assert window_sizes(33) == (3, 5, 9, 17, 33)
    assert window_sizes(129)[-1] == 129


@pytest.mark.parametrize("bad", [0, 1, 2, 4, 8, 32, 34, 100, -3])
def test_exception_max_window(bad):
    with pytest.raises(ValueError, match=r"2\*\*k \+ 1.*" + str(bad)):
        gradual_mean_fill(np.zeros((4, 4, 2), np.float32), bad)


@pytest.mark.parametrize("bad", [True, 33.0, "33", None])
def test_exception_max_window_type(bad):
    with pytest.raises(ValueError, match="max_window"):
        gradual_mean_fill(np.zeros((4, 4, 2), np.float32), bad)


def test_exception_inputs():
    with pytest.raises(ValueError, match=r"\(H, W, C\)"):
        gradual_mean_fill(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="floats"):
        gradual_mean_fill(np.zeros((4, 4, 2), np.int32))
    with pytest.raises(ValueError, match="floating-point tensor"):
        gradual_mean_fill(torch.zeros(4, 4, 2, dtype=torch.int64))
    inf = np.zeros((4, 4, 2), np.float32)
    inf[1, 1, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        gradual_mean_fill(inf)
    with pytest.raises(ValueError, match="backend"):
        gradual_mean_fill(np.zeros((4, 4, 2), np.float32), backend="numba")
    with pytest.raises(ValueError, match="NumPy array or a torch tensor"):
        gradual_mean_fill([[1.0]])


EDGE_CASES = {
    "no_nan": lambda rng: (rng.standard_normal((9, 11, 2)) * 3).astype(np.float32),
    "all_nan": lambda rng: np.full((7, 8, 2), np.nan, np.float32),
    "single_valid": lambda rng: _single_valid(),
    "holes_touch_every_border": lambda rng: _border_holes(rng),
    "c1": lambda rng: random_flow(rng, 10, 12, 1, 0.4, True),
    "c2_own_masks": lambda rng: random_flow(rng, 10, 12, 2, 0.4, False),
    "c3_shared": lambda rng: random_flow(rng, 10, 12, 3, 0.5, True),
    "c3_own_masks": lambda rng: random_flow(rng, 10, 12, 3, 0.5, False),
    "mostly_holes": lambda rng: random_flow(rng, 12, 12, 2, 0.95, True),
}


def _single_valid() -> np.ndarray:
    x = np.full((13, 14, 2), np.nan, np.float32)
    x[4, 9] = (2.5, -1.0)
    return x


def _border_holes(rng: np.random.Generator) -> np.ndarray:
    x = (rng.standard_normal((10, 13, 2)) * 2).astype(np.float32)
    x[0, :] = x[-1, :] = np.nan
    x[:, 0] = x[:, -1] = np.nan
    return x


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
@pytest.mark.parametrize("max_window", [3, 5, 9])
def test_matches_reference_edge_cases(case, max_window):
    x = EDGE_CASES[case](np.random.default_rng(1))
    _assert_all_agree(x, max_window)


def test_all_nan_reports_everything_unfilled():
    x = np.full((7, 8, 2), np.nan, np.float32)
    for backend in CPU_BACKENDS:
        r = gradual_mean_fill(x, 9, backend=backend)
        assert r.unfilled == r.holes == x.size
        assert np.isnan(r.filled).all()
        assert not r.scales_used.any()


def test_hole_wider_than_max_window_is_counted():
    # a 21x21 hole in a 31x31 field: with max_window=9 (radius 4) the inner 13x13 block sees
    # no valid sample, so 169 pixels x 2 channels stay NaN and are reported
    x = np.ones((31, 31, 2), np.float32)
    x[5:26, 5:26] = np.nan
    ref = notes_gradual_mean_torch(x, 9)
    for backend in CPU_BACKENDS:
        r = gradual_mean_fill(x, 9, backend=backend)
        assert r.unfilled == 13 * 13 * 2
        assert np.isnan(r.filled[9:22, 9:22]).all()
        assert not np.isnan(r.filled[8, 8]).any()
        np.testing.assert_allclose(r.filled, ref, **TOL)
    # a larger window reaches the centre
    assert gradual_mean_fill(x, 33).unfilled == 0


def test_scales_used_counts_contributing_windows():
    x = _single_valid()
    r = gradual_mean_fill(x, 33)
    # (4, 9) is valid -> 0; (4, 10) is 1 px away -> all 5 windows; (4, 0) is 9 px away, beyond
    # radius 8 (window 17) but within 16 (window 33) -> 1 window
    assert r.scales_used[4, 9].tolist() == [0, 0]
    assert r.scales_used[4, 10].tolist() == [5, 5]
    assert r.scales_used[4, 0].tolist() == [1, 1]
    assert r.scales_used[8, 5].tolist() == [3, 3]  # 4 px away: windows 9, 17, 33
    for backend in CPU_BACKENDS:
        assert np.array_equal(gradual_mean_fill(x, 33, backend=backend).scales_used,
                              r.scales_used)


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 20),
    w=st.integers(1, 20),
    c=st.integers(1, 3),
    p=st.floats(0.0, 1.0),
    shared=st.booleans(),
    max_window=st.sampled_from([3, 5, 9, 17]),
    seed=st.integers(0, 2**16),
)
def test_matches_reference_random(h, w, c, p, shared, max_window, seed):
    x = random_flow(np.random.default_rng(seed), h, w, c, p, shared)
    _assert_all_agree(x, max_window, loop=h * w <= 100)


def test_matches_reference_larger_and_cropped():
    # holes only in one corner: exercises the bounding-box crop of the fast backends
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((90, 120, 2)) * 4).astype(np.float32)
    x[60:80, 90:110][rng.random((20, 20)) < 0.6] = np.nan
    x[3, 100] = np.nan
    _assert_all_agree(x, 33, loop=False)
    _assert_all_agree(x, 129, loop=False)


@pytest.mark.parametrize("backend", ["auto", *CPU_BACKENDS])
def test_input_never_modified_numpy(backend):
    x = random_flow(np.random.default_rng(4), 20, 30, 2, 0.3, True)
    before = x.copy()
    gradual_mean_fill(x, 9, backend=backend)
    notes_gradual_mean_torch(x, 9)
    loop_reference(x[:5, :5], 3)
    nearest_fill(x)
    inpaint_fill(x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_input_never_modified_tensor(backend):
    x = torch.from_numpy(random_flow(np.random.default_rng(5), 20, 30, 2, 0.3, True))
    before = x.clone()
    r = gradual_mean_fill(x, 9, backend=backend)
    assert isinstance(r.filled, torch.Tensor) and r.filled.dtype == x.dtype
    assert r.filled.data_ptr() != x.data_ptr()
    torch.testing.assert_close(x, before, equal_nan=True)


def test_layout_and_dtype_preserved():
    x = random_flow(np.random.default_rng(6), 12, 10, 2, 0.3, True).astype(np.float64)
    for backend in CPU_BACKENDS:
        r = gradual_mean_fill(x, 5, backend=backend)
        assert r.filled.dtype == np.float64 and r.filled.shape == x.shape
        np.testing.assert_allclose(r.filled, notes_gradual_mean_torch(x, 5), **TOL)
    t = torch.from_numpy(x)
    out = notes_gradual_mean_torch(t, 5)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    half = t.to(torch.bfloat16)  # NumPy has no bfloat16: the cv2 path must convert first
    for backend in CPU_BACKENDS:
        r = gradual_mean_fill(half, 5, backend=backend)
        assert r.filled.dtype == torch.bfloat16 and r.unfilled == 0


def test_auto_backend_on_cpu_is_cv2():
    # "auto" picks the measured-fastest backend for the device: cv2 on the CPU
    x = random_flow(np.random.default_rng(10), 10, 12, 2, 0.3, True)
    assert gradual_mean_fill(x, 5).backend == "cv2"
    r = gradual_mean_fill(torch.from_numpy(x), 5)
    assert r.backend == "cv2" and r.device == "cpu" and isinstance(r.filled, torch.Tensor)
    assert gradual_mean_fill(x, 5, device="cpu").backend == "cv2"


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_matches_reference_cuda():
    x = random_flow(np.random.default_rng(7), 64, 80, 2, 0.3, True)
    ref = notes_gradual_mean_torch(x, 33)
    xt = torch.from_numpy(x).cuda()
    r = gradual_mean_fill(xt, 33)
    assert r.backend == "torch" and r.device.startswith("cuda")
    assert r.filled.is_cuda
    np.testing.assert_allclose(r.filled.cpu().numpy(), ref, **TOL)


def test_scale_means_match_definition():
    x = random_flow(np.random.default_rng(8), 15, 17, 2, 0.4, True)
    per = scale_means(x, 9)
    total = np.zeros_like(x)
    count = np.zeros_like(x)
    for m in per.values():
        ok = ~np.isnan(m)
        total += np.where(ok, m, 0)
        count += ok
    with np.errstate(invalid="ignore"):
        fill = np.where(np.isnan(x), total / count, x)
    np.testing.assert_allclose(fill, notes_gradual_mean_torch(x, 9), **TOL)
