"""Tests for lessons.flow.fill: cases, the methods run on them, their comparison and their
expected cost."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from lessons.flow.fill import (
    METHOD_CV2,
    METHOD_TORCH,
    METHODS,
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_TORCH_METHOD,
    OTHER_METHODS,
    FlowCase,
    FlowSpec,
    build_flow,
    case_from_flow,
    case_from_image_files,
    combine_methods,
    compare_methods,
    comparison_methods,
    estimate_method_ms,
    estimate_notes_ms,
    method_settings,
    notes_reference_on_by_default,
    notes_reference_work,
    run_method,
)
from lessons.flow.references import notes_gradual_mean_numpy


def test_compare_methods():
    case = build_flow(FlowSpec(height=48, width=64, field="vortex", mask="blobs", hole_size=5))
    comp = compare_methods(case, max_window=17, with_per_scale=True)
    names = [m.name for m in comp.methods]
    assert len(names) == 6 and "notes' avg_pool2d (reference)" in names
    for m in comp.methods[:2]:
        assert m.max_diff_vs_notes is not None and m.max_diff_vs_notes <= 1e-5
        assert m.ms >= 0 and np.isfinite(m.mean_epe)
    assert comp.windows == (3, 5, 9, 17) and set(comp.per_scale) == set(comp.windows)
    all_nan = FlowCase(np.full((8, 8, 2), np.nan, np.float32), None, "none",
                       np.ones((8, 8), bool))
    with pytest.raises(ValueError, match="every pixel is NaN"):
        compare_methods(all_nan)


def test_all_nan_file_says_it_has_no_valid_flow():
    # An all-NaN upload is a bad file, not a mask setting: the message must say so (the page
    # used to answer it with "lower the hole fraction").
    with pytest.raises(ValueError, match="no valid flow: every pixel is NaN") as err:
        case_from_flow(np.full((8, 8, 2), np.nan, np.float32), FlowSpec())
    assert "fraction" not in str(err.value)


def test_run_method_rows_combine_to_compare_methods():
    case = build_flow(FlowSpec(height=40, width=48, field="zoom", mask="blobs", hole_size=4))
    rows = [run_method(case, n, max_window=9) for n in reversed(METHODS)
            if n != NOTES_NUMPY_METHOD]
    comp = combine_methods(case, rows, max_window=9)
    whole = compare_methods(case, max_window=9)
    assert [m.name for m in comp.methods] == [m.name for m in whole.methods]
    for a, b in zip(comp.methods, whole.methods, strict=True):
        np.testing.assert_array_equal(a.filled, b.filled)
        assert (a.max_diff_vs_notes is None) == (b.max_diff_vs_notes is None)
    np.testing.assert_array_equal(comp.fill.scales_used, whole.fill.scales_used)
    with pytest.raises(ValueError, match="method must be one of"):
        run_method(case, "bilinear")
    with pytest.raises(ValueError, match="main fill"):
        combine_methods(case, rows[:2], max_window=9)


def test_notes_reference_default_and_expected_time():
    assert notes_reference_on_by_default((240, 320, 2))
    assert not notes_reference_on_by_default((480, 640, 2))
    assert not notes_reference_on_by_default((720, 1280, 2))
    # the work grows with the pixels and with sum(k**2) over the windows
    assert notes_reference_work((720, 1280), 33) == pytest.approx(12 * 1493 * 0.0768 / 1e3)
    small = estimate_notes_ms((240, 320), 33, 1000.0)
    assert estimate_notes_ms((720, 1280), 33, 1000.0) == pytest.approx(12 * small)
    assert estimate_notes_ms((240, 320), 65, 1000.0) > 3 * small
    with pytest.raises(ValueError, match="ms_per_unit"):
        estimate_notes_ms((240, 320), 33, 0.0)
    with pytest.raises(ValueError, match="max_window"):
        estimate_notes_ms((240, 320), 32)


def test_compare_methods_with_the_notes_numpy_loop():
    case = build_flow(FlowSpec(height=40, width=48, field="rotation", mask="random", seed=1))
    calls = []
    comp = compare_methods(case, max_window=33, with_notes_numpy=True,
                           progress=lambda d, t: calls.append((d, t)))
    names = [m.name for m in comp.methods]
    assert names[:4] == ["gradual mean (cv2 backend)", "gradual mean (torch backend)",
                         NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD]
    assert names[-1] == "nearest valid"
    row = comp.methods[3]
    np.testing.assert_array_equal(row.filled, notes_gradual_mean_numpy(case.flow, 32))
    assert row.device == "cpu" and row.ms > 0 and row.unfilled == 0
    assert row.mean_epe > 3 * comp.methods[2].mean_epe
    assert row.max_diff_vs_notes is not None and row.max_diff_vs_notes > 0.5
    holes = int(case.mask.sum())
    assert calls[-1] == (holes, holes)
    assert len(compare_methods(case, max_window=9).methods) == 6  # off by default


def test_compare_methods_bounds_the_notes_numpy_loop():
    case = build_flow(FlowSpec(height=240, width=320, mask="random", fraction=0.4))
    assert case.mask.sum() > NOTES_NUMPY_MAX_HOLES
    with pytest.raises(ValueError, match=f"limited to {NOTES_NUMPY_MAX_HOLES:,} hole pixels"):
        compare_methods(case, with_notes_numpy=True)


def test_estimate_method_ms_follows_size_windows_and_holes() -> None:
    big, small = (720, 1280, 2), (240, 320, 2)
    for name in METHODS:
        assert estimate_method_ms(name, big, 33, 276_506) > estimate_method_ms(name, small, 33,
                                                                               22_857)
    # the window count matters for the gradual means and the notes' versions, not the others
    for name in (METHOD_CV2, METHOD_TORCH, NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD):
        assert estimate_method_ms(name, big, 129, 1000) > estimate_method_ms(name, big, 33, 1000)
    for name in OTHER_METHODS:
        assert estimate_method_ms(name, big, 129, 1000) == estimate_method_ms(name, big, 33, 1000)
    # the notes' reference is estimate_notes_ms at the rate given
    assert estimate_method_ms(NOTES_TORCH_METHOD, big, 65, 0, notes_ms_per_unit=500.0) == (
        pytest.approx(estimate_notes_ms(big, 65, 500.0)))
    # the NumPy loop: a few hundred microseconds a hole at the largest window
    assert estimate_method_ms(NOTES_NUMPY_METHOD, small, 129, 25_000) / 25_000 == (
        pytest.approx(0.626, rel=0.01))


def test_estimate_method_ms_exception() -> None:
    with pytest.raises(ValueError, match="got 'nope'"):
        estimate_method_ms("nope", (240, 320, 2), 33, 10)
    with pytest.raises(ValueError, match="max_window"):
        estimate_method_ms(METHOD_CV2, (240, 320, 2), 32, 10)
    with pytest.raises(ValueError, match="holes must be >= 0"):
        estimate_method_ms(METHOD_CV2, (240, 320, 2), 33, -1)
    with pytest.raises(ValueError, match="positive height"):
        estimate_method_ms(METHOD_CV2, (0, 320, 2), 33, 0)


def test_comparison_methods_run_in_table_order():
    assert comparison_methods(with_notes=True, with_notes_numpy=True) == list(METHODS)
    plain = comparison_methods(with_notes=False, with_notes_numpy=False)
    assert plain[:2] == [METHOD_CV2, METHOD_TORCH] and plain[2:] == list(OTHER_METHODS)
    assert NOTES_NUMPY_METHOD in comparison_methods(with_notes=False, with_notes_numpy=True)


def test_method_settings_are_what_a_result_is_keyed_on():
    assert method_settings(METHOD_CV2, 9, "cuda:0") == (9, "cpu")
    assert method_settings(METHOD_TORCH, 9, "cuda:0") == (9, "cuda:0")
    assert method_settings(NOTES_TORCH_METHOD, 65, "cpu") == (65, "cpu")
    assert method_settings(NOTES_NUMPY_METHOD, 65, "cuda:0") == (65, "cpu")
    for name in OTHER_METHODS:  # they ignore the window: one result for every max_window
        assert method_settings(name, 129, "cuda:0") == (33, "cpu")
    with pytest.raises(ValueError, match="got 'nope'"):
        method_settings("nope", 33, "cpu")


def _png(h: int, w: int, seed: int) -> bytes:
    img = (np.random.default_rng(seed).random((h, w, 3)) * 255).astype(np.uint8)
    ok, data = cv2.imencode(".png", img)
    assert ok
    return data.tobytes()


def test_case_from_image_files():
    case = case_from_image_files((_png(40, 48, 0), _png(40, 48, 1)), FlowSpec(mask="fb"))
    assert case.flow.shape == (40, 48, 2) and case.reference_kind == "pre-mask flow"
    assert case.images is not None and case.images[0].shape == (40, 48, 3)


def test_case_from_image_files_exception():
    with pytest.raises(ValueError, match="two files, got 1"):
        case_from_image_files((_png(40, 48, 0),), FlowSpec())
    with pytest.raises(ValueError, match="the second image: "):
        case_from_image_files((_png(40, 48, 0), b"not an image"), FlowSpec())
    with pytest.raises(ValueError, match="the first image is 40x48 pixels, over the size cap"):
        case_from_image_files((_png(40, 48, 0), _png(40, 48, 1)), FlowSpec(), max_side=32)
    with pytest.raises(ValueError, match="same size"):
        case_from_image_files((_png(40, 48, 0), _png(40, 40, 1)), FlowSpec())
