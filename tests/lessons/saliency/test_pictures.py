"""lessons.saliency.pictures: colour, overlay against cv2, PNG, and the page's pictures of one
map."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import torch

from lessons.saliency import pictures as S
from lessons.saliency.scaling import compare_scalings, mass_above_percentile, scale_percentile


def decode(png: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB) if image.ndim == 3 else image


class TestOverlay:
    def test_overlay_matches_cv2(self) -> None:
        rng = np.random.default_rng(1)
        image = rng.integers(0, 256, (8, 10, 3), dtype=np.uint8)
        sal = rng.integers(0, 256, (8, 10), dtype=np.uint8)
        heat = cv2.cvtColor(cv2.applyColorMap(sal, cv2.COLORMAP_JET), cv2.COLOR_BGR2RGB)
        expected = cv2.addWeighted(image, 0.7, heat, 0.3, 0.0)
        np.testing.assert_array_equal(S.overlay(image, sal, 0.3, "jet"), expected)
        np.testing.assert_array_equal(S.overlay(image, sal, 0.0), image)
        # a smaller map is resized to the image
        assert S.overlay(image, sal[:4, :5], 0.5).shape == image.shape

    def test_png_round_trip(self) -> None:
        picture = np.random.default_rng(2).integers(0, 256, (6, 5, 3), dtype=np.uint8)
        decoded = cv2.cvtColor(
            cv2.imdecode(np.frombuffer(S.png_bytes(picture), np.uint8), cv2.IMREAD_COLOR),
            cv2.COLOR_BGR2RGB,
        )
        np.testing.assert_array_equal(decoded, picture)



    def test_exception(self) -> None:
        with pytest.raises(ValueError, match="colormap must be one of"):
            S.overlay(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8), 0.5, "rainbowz")
        with pytest.raises(ValueError, match="alpha must be in"):
            S.overlay(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8), 1.5)
        with pytest.raises(ValueError, match="uint8 numpy array"):
            S.colorize(np.zeros((4, 4), np.float32))


class TestMakePictures:
    def test_app_scaling_by_default(self) -> None:
        saliency = torch.rand(8, 8, generator=torch.Generator().manual_seed(0)) ** 3
        view = np.random.default_rng(1).integers(0, 256, (8, 8, 3), dtype=np.uint8)
        pictures = S.make_pictures(saliency, view, False, 95.0, 0.3, "viridis")
        assert not pictures.notes_scaled
        scaled = scale_percentile(saliency, 95.0)
        np.testing.assert_array_equal(decode(pictures.map_png), scaled)
        np.testing.assert_array_equal(decode(pictures.heat_png), S.colorize(scaled, "viridis"))
        np.testing.assert_array_equal(
            decode(pictures.overlay_png), S.overlay(view, scaled, 0.3, "viridis"))  # fmt: skip
        np.testing.assert_array_equal(decode(pictures.view_png), view)
        assert pictures.share == pytest.approx(mass_above_percentile(saliency, 95.0))
        # the comparison is always at the notes' percentile, whatever the map is drawn with
        np.testing.assert_array_equal(pictures.comparison.app, compare_scalings(saliency).app)
        assert pictures.notes_png is not None

    def test_the_notes_scaling_when_asked_and_defined(self) -> None:
        saliency = torch.rand(8, 8, generator=torch.Generator().manual_seed(2))
        view = np.zeros((8, 8, 3), np.uint8)
        pictures = S.make_pictures(saliency, view, True, 80.0, 0.5, "jet")
        assert pictures.notes_scaled
        np.testing.assert_array_equal(decode(pictures.map_png), pictures.comparison.notes)
        flat = S.make_pictures(torch.full((8, 8), 0.5), view, True, 99.0, 0.5, "jet")
        assert not flat.notes_scaled and flat.notes_png is None  # undefined: the app's instead
        assert "divide by zero" in flat.comparison.notes_error


def test_downloads_name_the_map_by_method_and_class() -> None:
    view = np.zeros((8, 8, 3), np.uint8)
    pictures = S.make_pictures(torch.rand(8, 8), view, False, 99.0, 0.5, "jet")
    (map_label, map_png, map_name, map_key), overlay = S.downloads(pictures, "smoothgrad", 285)
    assert (map_label, map_name, map_key) == ("Map (PNG)", "saliency_smoothgrad_285.png",
                                              "saliency.download_map")  # fmt: skip
    assert map_png is pictures.map_png and overlay[1] is pictures.overlay_png
    assert overlay[2:] == ("saliency_overlay_smoothgrad_285.png", "saliency.download_overlay")


def test_sanity_thumbnails_are_the_row_in_colour() -> None:
    from lessons.saliency.sanity import RandomizationResult, thumbnails

    grey = [np.full((4, 4), level, np.uint8) for level in (0, 80, 160, 255)]
    result = RandomizationResult("vanilla", ("c", "b", "a"), (0.5, 0.4, 0.3), grey[0],
                                 tuple(grey[1:]))  # fmt: skip
    coloured, captions = S.sanity_thumbnails(result, "jet")
    maps, expected = thumbnails(result)
    assert captions == expected and len(coloured) == len(maps) == 4
    for picture, single in zip(coloured, maps, strict=True):
        assert picture.shape == (4, 4, 3) and picture.dtype == np.uint8
        assert np.array_equal(picture, S.colorize(single, "jet"))
