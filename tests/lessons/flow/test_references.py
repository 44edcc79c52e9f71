"""Tests for lessons.flow.references: the app's versions of the notes' code against the code as
printed (lessons.flow.notes_as_printed)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from core.notes import NotesRef, normalise_notes_text, notes_lines
from lessons.flow import notes_as_printed as notes_code
from lessons.flow.fill import (
    endpoint_error,
    epe_stats,
)
from lessons.flow.masks import make_hole_mask
from lessons.flow.notes_checks import (
    NOTES_CLAIM_REF,
    NOTES_CLAIM_ZH,
    NOTES_GRADUAL_MEAN_PYTORCH,
)
from lessons.flow.references import (
    notes_gradual_mean_numpy,
    notes_gradual_mean_torch,
    notes_window_sizes,
)
from lessons.flow.sources import synthetic_flow
from tests.lessons.flow.flow_cases import random_flow
from tests.notes_marks import needs_notes


def test_reference_pools_plain_nchw(monkeypatch):
    # The reference must time avg_pool2d as the notes run it, on a plain (1, C, H, W) tensor.
    # A permuted (H, W, C) view is channels-last to ATen, whose channels-last avg_pool2d kernel
    # was measured 2.2x slower at C=2: that inflated the notes' time and the notes/best ratio.
    import lessons.flow.references as ff

    seen = []
    real = ff.F.avg_pool2d

    def spy(t, *args, **kwargs):
        seen.append(t.is_contiguous())
        return real(t, *args, **kwargs)

    monkeypatch.setattr(ff.F, "avg_pool2d", spy)
    x = random_flow(np.random.default_rng(9), 12, 16, 2, 0.3, True)
    notes_gradual_mean_torch(x, 9)
    notes_gradual_mean_torch(torch.from_numpy(x), 9)
    assert seen and all(seen), seen


def test_notes_reference_reports_progress_per_window():
    x = random_flow(np.random.default_rng(3), 12, 14, 2, 0.3, True)
    seen: list[tuple[int, int]] = []
    notes_gradual_mean_torch(x, 17, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


# --------------------------------------------------------------------------------------------
# the notes' own code (lessons/flow/notes_as_printed.py: both functions transcribed as printed)
# --------------------------------------------------------------------------------------------

TRANSCRIPTION = Path(notes_code.__file__)


def _notes_text(ref: str) -> str:
    # the notes escape the quotes inside their code lines as \" ; code has plain quotes
    return notes_lines(NotesRef.parse(ref)).replace('\\"', '"')


@needs_notes
def test_transcription_and_snippet_are_the_notes_verbatim():
    text = TRANSCRIPTION.read_text(encoding="utf-8")
    split = text.index("# --- notes 000:80")
    numpy_part = text[text.index("import cv2"):split]
    torch_part = text[text.index("\n", split) + 1:]
    assert normalise_notes_text(numpy_part) in _notes_text("000:79")
    assert normalise_notes_text(torch_part) in _notes_text("000:80")
    # the callouts run the same text
    assert normalise_notes_text(NOTES_GRADUAL_MEAN_PYTORCH) == normalise_notes_text(torch_part)
    assert NOTES_CLAIM_ZH in _notes_text(NOTES_CLAIM_REF)


def _notes_numpy_case(rng: np.random.Generator) -> tuple[np.ndarray, int]:
    h, w = (int(v) for v in rng.integers(1, 24, 2))
    c = int(rng.integers(2, 4))
    x = (rng.standard_normal((h, w, c)) * 5).astype(rng.choice([np.float32, np.float64]))
    p = float(rng.random())
    if rng.random() < 0.5:
        x[rng.random((h, w)) < p] = np.nan
    else:  # own masks per channel: a pixel with one NaN channel is a hole too
        x[rng.random((h, w, c)) < p] = np.nan
    return x, int(rng.choice([2, 3, 4, 8, 16, 32, 33]))


@pytest.mark.parametrize("seed", range(60))
def test_notes_numpy_matches_the_notes_code_bit_for_bit(seed):
    x, size = _notes_numpy_case(np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the notes' nanmean: empty slices
        expected = notes_code.gradual_mean(x, max_window_size=size)
    before = x.copy()
    got = notes_gradual_mean_numpy(x, size)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()
    np.testing.assert_array_equal(x, before)  # the input is never modified


def test_notes_numpy_early_break_with_a_callers_mask_bit_for_bit():
    # The break is reached only when a visited hole's window holds nothing valid: a caller's
    # nan_mask that visits (5, 5) inside a 6x6 NaN block and leaves the rest of it NaN.
    x = np.ones((12, 12, 2), np.float32)
    x[3:9, 3:9] = np.nan
    mask = np.zeros((12, 12))
    mask[5, 5] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = notes_code.gradual_mean(x, nan_mask=mask)
    got = notes_gradual_mean_numpy(x, nan_mask=mask)
    assert got.tobytes() == expected.tobytes()
    assert np.isnan(got[5, 5]).all()  # the larger windows saw valid ones; the 2-window did not


def test_notes_numpy_default_mask_leaves_no_nan():
    # With the default mask every window reaches the row above (zero border or filled), so
    # the early break never fires: even an all-NaN flow comes back (all zeros).
    x = random_flow(np.random.default_rng(2), 20, 24, 2, 0.97, False)
    assert not np.isnan(notes_gradual_mean_numpy(x)).any()
    assert (notes_gradual_mean_numpy(np.full((6, 7, 2), np.nan, np.float32)) == 0).all()


def test_notes_numpy_window_is_not_centred():
    # u = x on an 80x80 ramp, one hole at (30, 30): the notes' window w covers
    # x in [30 - w//2, 30 + w), so every mean sits right of the hole; a centred window is exact.
    u = np.tile(np.arange(80, dtype=np.float32), (80, 1))
    x = np.stack([u, np.zeros_like(u)], axis=2)
    x[30, 30] = np.nan
    means = []
    for w in (32, 16, 8, 4, 2):
        cols = np.arange(30 - w // 2, 30 + w, dtype=np.float64)
        rows = len(cols)
        means.append((cols.sum() * rows - 30.0) / (rows * rows - 1))  # minus the hole itself
    expected = float(np.mean(means))  # 32.6: 2.6 px right of the truth
    assert expected > 32.5
    assert notes_window_sizes(32) == (32, 16, 8, 4, 2)
    assert notes_gradual_mean_numpy(x, 32)[30, 30, 0] == pytest.approx(expected, abs=1e-4)
    assert notes_gradual_mean_torch(x, 33)[30, 30, 0] == pytest.approx(30.0, abs=1e-4)


def test_notes_numpy_zero_border_pulls_towards_zero():
    # A constant 5.0 field with a hole in the corner: crop_rect pads with 0, and nanmean
    # counts those zeros. Window w holds w*w - 1 fives among (w + w//2)**2 - 1 values.
    x = np.full((40, 40, 2), 5.0, np.float32)
    x[0, 0] = np.nan
    expected = np.mean([5 * (w * w - 1) / ((w + w // 2) ** 2 - 1) for w in (32, 16, 8, 4, 2)])
    got = notes_gradual_mean_numpy(x, 32)[0, 0]
    np.testing.assert_allclose(got, [expected, expected], rtol=1e-6)
    assert got[0] < 2.2  # measured 2.13, not 5
    np.testing.assert_allclose(notes_gradual_mean_torch(x, 33)[0, 0], [5.0, 5.0])


def test_notes_numpy_overwrites_every_channel_of_a_hole_pixel():
    x = np.full((9, 9, 2), 1.0, np.float32)
    x[4, 4] = (np.nan, 7.0)  # only u is missing; the notes' mask is the channel *sum*
    out = notes_gradual_mean_numpy(x, 4)
    # windows 4 (6x6 values) and 2 (3x3), each holding the pixel's own v = 7 among ones
    assert out[4, 4, 0] == 1.0
    assert out[4, 4, 1] == pytest.approx((42 / 36 + 15 / 9) / 2, rel=1e-6)


def test_notes_numpy_progress_and_exceptions():
    x = random_flow(np.random.default_rng(3), 10, 12, 2, 0.5, True)
    seen = []
    notes_gradual_mean_numpy(x, 8, progress=lambda done, total: seen.append((done, total)))
    holes = int(np.isnan(x[..., 0]).sum())
    assert seen[-1] == (holes, holes) and all(t == holes for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    for bad in (1, 0, 4097, 2.0, True):
        with pytest.raises(ValueError, match="max_window_size"):
            notes_gradual_mean_numpy(x, bad)
    with pytest.raises(ValueError, match="at least 2 channels"):
        notes_gradual_mean_numpy(x[..., :1])
    with pytest.raises(ValueError, match="NumPy array"):
        notes_gradual_mean_numpy(torch.from_numpy(x))
    with pytest.raises(ValueError, match=r"nan_mask must be an \(H, W\)"):
        notes_gradual_mean_numpy(x, nan_mask=np.zeros((3, 3)))


def test_notes_code_fails_on_one_channel_as_the_app_says():
    x = np.ones((6, 7, 1), np.float32)
    x[2, 3] = np.nan
    with pytest.raises(IndexError, match="too many indices"):
        notes_code.gradual_mean(x)


@pytest.mark.parametrize(("kind", "mask_kind"), [("rotation", "random"), ("rotation", "blobs"),
                                                 ("zoom", "random"), ("translation", "random")])
def test_notes_numpy_is_far_worse_than_avg_pool2d_on_smooth_fields(kind, mask_kind):
    # Measured on 64x80, noise 0.3, 30% holes: rotation 1.20 vs 0.17 px (random) and 1.61 vs
    # 0.36 (blobs), zoom 1.20 vs 0.17, translation 1.01 vs 0.05: the off-centre windows bias
    # every sloped field, and the zero border drags the holes near the edge towards 0.
    observed, truth = synthetic_flow(kind, 64, 80, magnitude=6.0, noise=0.3, seed=1)
    mask = make_hole_mask(mask_kind, 64, 80, fraction=0.3, size=6, seed=2)
    holed = observed.copy()
    holed[mask] = np.nan
    notes_numpy, _ = epe_stats(endpoint_error(notes_gradual_mean_numpy(holed, 32), truth), mask)
    avg_pool, _ = epe_stats(endpoint_error(notes_gradual_mean_torch(holed, 33), truth), mask)
    assert notes_numpy > 3 * avg_pool, (notes_numpy, avg_pool)
    assert notes_numpy > 0.7


# --------------------------------------------------------------------------------------------
# the notes' vectorised version (000:80) against the app's reference
# --------------------------------------------------------------------------------------------


def test_notes_torch_code_agrees_with_the_reference_on_one_flow():
    x = random_flow(np.random.default_rng(11), 30, 40, 2, 0.4, False)
    notes = notes_code.gradual_mean_pytorch(torch.from_numpy(x).permute(2, 0, 1)[None], 33)
    ours = notes_gradual_mean_torch(x, 33)
    np.testing.assert_allclose(notes[0].permute(1, 2, 0).numpy(), ours, rtol=1e-6, atol=1e-6,
                               equal_nan=True)


def test_notes_torch_code_fails_for_a_batch_of_two():
    # As printed, step 5 sums over dim 0, which after torch.cat holds batch x scales, so the
    # (1, C, H, W) mean cannot be indexed by the (2, C, H, W) NaN mask.
    x = torch.from_numpy(random_flow(np.random.default_rng(12), 8, 8, 2, 0.3, True))
    batch = torch.stack([x, x]).permute(0, 3, 1, 2)  # (2, 2, 8, 8)
    with pytest.raises(IndexError, match=r"shape of the mask \[2, 2, 8, 8\] at index 0 does "
                                         r"not match the shape of the indexed tensor \[1, 2, 8"):
        notes_code.gradual_mean_pytorch(batch)
    one = notes_code.gradual_mean_pytorch(batch[:1])  # batch 1 runs
    assert not torch.isnan(one).any()


def test_notes_torch_code_window_checks():
    x = torch.from_numpy(random_flow(np.random.default_rng(13), 8, 8, 2, 0.3, True))
    x = x.permute(2, 0, 1)[None]
    with pytest.warns(UserWarning, match="max_window_size 32 is not aligned with max filter "
                                         "size 17"):
        notes_code.gradual_mean_pytorch(x, 32)
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        notes_code.gradual_mean_pytorch(x, 2)
    with np.errstate(divide="ignore"), pytest.raises(OverflowError):
        notes_code.gradual_mean_pytorch(x, 1)  # int(np.log2(0)) = int(-inf)
    with pytest.raises(ValueError, match="2\\*\\*k \\+ 1.*32"):
        notes_gradual_mean_torch(x[0].permute(1, 2, 0), 32)


def test_reference_docstring_lists_the_differences():
    doc = notes_gradual_mean_torch.__doc__ or ""
    assert "kept as written" not in doc
    for point in ("**Layout**", "**Batch**", "**NaN guards**", "**Window checks**",
                  "batch > 1", "IndexError"):
        assert point in doc, point
