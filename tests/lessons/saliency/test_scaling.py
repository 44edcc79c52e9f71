"""lessons.saliency.scaling: the app's scaling, the notes' (000:2) bit for bit, and the two
compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lessons.saliency import maps
from lessons.saliency import scaling as S
from lessons.saliency.models import LoadedModel


class TestScalePercentile:
    def test_all_zero_map_gives_all_zero_image(self) -> None:
        with np.errstate(all="raise"):
            out = S.scale_percentile(torch.zeros(5, 7))
        assert out.dtype == np.uint8 and out.shape == (5, 7) and not out.any()

    def test_matches_reference(self) -> None:
        s = np.random.default_rng(0).random((20, 30)) ** 3
        expected = np.round(np.clip(s / (np.percentile(s, 99) + 1e-12), 0, 1) * 255)
        np.testing.assert_array_equal(S.scale_percentile(s, 99), expected.astype(np.uint8))

    @settings(max_examples=40, deadline=None)
    @given(
        s=arrays(
            np.float32,
            st.tuples(st.integers(1, 16), st.integers(1, 16)),
            elements=st.floats(0, 1e6, width=32),
        ),
        percentile=st.floats(1, 100),
    )
    def test_property_never_divides_by_zero(self, s: np.ndarray, percentile: float) -> None:
        with np.errstate(all="raise"):
            out = S.scale_percentile(s, percentile)
        assert out.shape == s.shape and out.dtype == np.uint8
        order = np.argsort(s, axis=None, kind="stable")
        assert (np.diff(out.ravel()[order].astype(int)) >= 0).all()  # monotone
        if s.max() > 0:
            # s / (p + 1e-12) reaches 255 once p is far above the 1e-12 guard (p >= 1e-9: 254.7)
            assert out.max() == 255 or np.percentile(s, percentile) < 1e-9

    def test_exception(self) -> None:
        with pytest.raises(ValueError, match="2-D map"):
            S.scale_percentile(np.zeros((2, 2, 2)))
        with pytest.raises(ValueError, match="percentile must be in"):
            S.scale_percentile(np.zeros((2, 2)), percentile=0)
        with pytest.raises(ValueError, match="NaN"):
            S.scale_percentile(np.full((2, 2), np.nan))

    def test_mass_above_percentile(self) -> None:
        s = np.arange(100, dtype=np.float64).reshape(10, 10)  # P99 = 98.01: only 99 is above
        assert S.mass_above_percentile(s, 99) == pytest.approx(99 / s.sum())
        assert S.mass_above_percentile(s, 50) == pytest.approx(s[s >= 49.5].sum() / s.sum())
        assert S.mass_above_percentile(torch.zeros(3, 3)) == 0.0  # an all-zero map


def notes_formula(s: np.ndarray) -> np.ndarray:
    """The notes' formula, written independently: np.uint8(clip(255 (s - P1) / (P99 - P1)))."""
    p1, p99 = np.percentile(s, 1), np.percentile(s, 99)
    return np.clip(255 * (s - p1) / (p99 - p1), 0, 255).astype(np.uint8)


class TestNotesRecipe:
    """000:2: loss gradient, sum |grad| over channels, cvglue.scale_min_max(.., 99), uint8."""

    def test_hand_computed_example(self) -> None:
        s = np.arange(101, dtype=np.float32)  # P1 = 1, P99 = 99 (linear interpolation)
        out = S.scale_like_notes(s)
        assert out.dtype == np.uint8
        # 255 * 49 / 98 = 127.5 -> 127 (truncated); 255 * 1 / 98 = 2.6 -> 2; 0 and 1 clip to 0
        assert [int(out[i]) for i in (0, 1, 2, 50, 98, 99, 100)] == [0, 0, 2, 127, 252, 255, 255]
        # the app divides by P99 and rounds: 50 / 99 * 255 = 128.8 -> 129
        assert int(S.scale_percentile(s.reshape(1, -1), 99)[0, 50]) == 129

    def test_keeps_the_notes_shape_and_float32(self) -> None:
        s = np.random.default_rng(4).random((1, 1, 6, 5), dtype=np.float32)
        scaled = S.cvglue_scale_min_max(s, 0, 255, percentile=99)
        assert scaled.shape == (1, 1, 6, 5) and scaled.dtype == np.float32
        assert scaled.min() == 0 and scaled.max() == 255
        assert S.cvglue_scale_min_max(s, -1.0, 1.0).min() == -1.0  # percentile 100 = min-max

    def test_matches_reference_on_chelsea(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        sal = maps.vanilla_saliency(lite0.model, x_cat, 285, objective="loss", reduce="sum")
        ours = S.scale_like_notes(sal)
        np.testing.assert_array_equal(ours, notes_formula(sal.numpy()))
        # the notes' own steps: loss.backward(), x.grad, keepdims, [0].transpose, np.uint8
        xx = x_cat.clone().requires_grad_(True)
        F.cross_entropy(lite0.model.forward(xx), torch.tensor([285])).backward()
        saliency_map = torch.sum(torch.abs(xx.grad), axis=1, keepdims=True).detach().numpy()
        scaled = np.uint8(notes_formula(saliency_map)[0].transpose((1, 2, 0)))
        np.testing.assert_array_equal(ours, scaled[..., 0])

    def test_app_default_differs_from_the_notes(
        self, lite0: LoadedModel, x_cat: torch.Tensor
    ) -> None:
        loss_map = maps.vanilla_saliency(lite0.model, x_cat, 285, objective="loss", reduce="sum")
        same_map = S.compare_scalings(loss_map)
        # measured on chelsea: up to 8 grey levels apart, 98.9% of the pixels differ
        assert same_map.max_diff is not None and 6 <= same_map.max_diff <= 10
        assert same_map.share_differing is not None and same_map.share_differing > 0.9
        assert 0 < same_map.p_low < same_map.p_high
        np.testing.assert_array_equal(same_map.notes, S.scale_like_notes(loss_map))
        np.testing.assert_array_equal(same_map.app, S.scale_percentile(loss_map, 99))
        # the whole default recipe (class score, /P99, rounded) is far from the notes' map
        score_map = maps.vanilla_saliency(lite0.model, x_cat, 285, objective="logit", reduce="sum")
        full = np.abs(S.scale_percentile(score_map, 99).astype(int) - same_map.notes.astype(int))
        assert full.max() > 100

    @settings(max_examples=60, deadline=None)
    @given(
        s=arrays(
            st.sampled_from([np.float32, np.float64]),
            st.tuples(st.integers(1, 16), st.integers(1, 16)),
            elements=st.floats(0, 1e6, width=32),
        )
    )
    def test_property_bit_for_bit(self, s: np.ndarray) -> None:
        if np.percentile(s, 99) == np.percentile(s, 1):
            with pytest.raises(ValueError, match="undefined"):
                S.scale_like_notes(s)
            return
        np.testing.assert_array_equal(S.scale_like_notes(s), notes_formula(s))

    def test_flat_map(self) -> None:
        flat = np.full((4, 4), 0.25, dtype=np.float32)
        with np.errstate(all="ignore"):  # why the app refuses: the formula gives 0 / 0 = NaN
            assert np.isnan(255 * (flat - 0.25) / (0.25 - 0.25)).all()
        with pytest.raises(ValueError, match=r"undefined for this map: P99 == P1 == 0\.25"):
            S.scale_like_notes(flat)
        compared = S.compare_scalings(flat)
        assert compared.notes is None and compared.max_diff is None
        assert "divide by zero" in (compared.notes_error or "")
        assert compared.app.max() == 255  # the app: 0.25 / (0.25 + 1e-12) -> full colour

    def test_exception(self) -> None:
        with pytest.raises(ValueError, match=r"percentile must be in \(50, 100\]"):
            S.cvglue_scale_min_max(np.arange(4.0), 0, 255, percentile=50)
        with pytest.raises(ValueError, match="max_v must be greater than min_v"):
            S.cvglue_scale_min_max(np.arange(4.0), 255, 0)
        with pytest.raises(ValueError, match="NaN or Inf"):
            S.scale_like_notes(np.array([0.0, np.inf]))
        with pytest.raises(ValueError, match="empty"):
            S.scale_like_notes(np.zeros((0, 3)))
