"""From a saliency map to the pictures the page shows: colour, overlay on the model's view, PNG.

Pure module (no Streamlit). :func:`make_pictures` does it all once for one map: it scales the
``(S, S)`` map (the app's way or the notes', :mod:`lessons.saliency.scaling`), colours it,
blends it over the ``(S, S, 3)`` uint8 picture the model sees and encodes each picture as PNG,
so the page (and its shared cache) only hands bytes to ``st.image`` and the download buttons.

>>> picture = overlay(view, scale_percentile(saliency, 99), alpha=0.5, colormap="jet")
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import torch

from core import figure_style
from core.text import N_, T
from lessons.saliency.sanity import RandomizationResult, thumbnails
from lessons.saliency.scaling import (
    NOTES_PERCENTILE,
    ScalingComparison,
    compare_scalings,
    mass_above_percentile,
    scale_percentile,
)

#: The colour maps the page offers, by name: OpenCV's ``COLORMAP_*`` constants.
COLORMAPS: dict[str, int] = {
    "jet": cv2.COLORMAP_JET,
    "inferno": cv2.COLORMAP_INFERNO,
    "viridis": cv2.COLORMAP_VIRIDIS,
    "turbo": cv2.COLORMAP_TURBO,
    "magma": cv2.COLORMAP_MAGMA,
    "hot": cv2.COLORMAP_HOT,
    "bone": cv2.COLORMAP_BONE,
}


def _colormap(colormap: str | int) -> int:
    if isinstance(colormap, str):
        if colormap not in COLORMAPS:
            raise ValueError(f"colormap must be one of {', '.join(COLORMAPS)}, got {colormap!r}")
        return COLORMAPS[colormap]
    return int(colormap)


def colorize(saliency_u8: np.ndarray, colormap: str | int = "jet") -> np.ndarray:
    """(H, W) uint8 -> (H, W, 3) uint8 RGB through ``cv2.applyColorMap``."""
    if not isinstance(saliency_u8, np.ndarray) or saliency_u8.dtype != np.uint8:
        raise ValueError("saliency_u8 must be a uint8 numpy array (use scale_percentile)")
    if saliency_u8.ndim != 2:
        raise ValueError(f"saliency_u8 must be (H, W), got shape {saliency_u8.shape}")
    bgr = cv2.applyColorMap(np.ascontiguousarray(saliency_u8), _colormap(colormap))
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def overlay(
    image: np.ndarray,
    saliency_u8: np.ndarray,
    alpha: float = 0.5,
    colormap: str | int = "jet",
) -> np.ndarray:
    """Blend a colour-mapped saliency map over ``image``.

    Args:
        image: (H, W, 3) uint8 RGB.
        saliency_u8: (h, w) uint8; resized (bilinear) to (H, W) if needed.
        alpha: weight of the heat map, in [0, 1].
        colormap: a name from ``COLORMAPS`` or a cv2 COLORMAP_* constant.

    Returns:
        (H, W, 3) uint8 RGB = (1 - alpha) * image + alpha * applyColorMap(saliency).
    """
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3:
        raise ValueError("image must be an (H, W, 3) uint8 RGB numpy array")
    if image.shape[2] != 3:
        raise ValueError(f"image must have 3 channels, got shape {image.shape}")
    if not (0.0 <= alpha <= 1.0):
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    h, w = image.shape[:2]
    if saliency_u8.ndim == 2 and saliency_u8.shape != (h, w):
        saliency_u8 = cv2.resize(saliency_u8, (w, h), interpolation=cv2.INTER_LINEAR)
    heat = colorize(saliency_u8, colormap)
    return cv2.addWeighted(np.ascontiguousarray(image), 1.0 - alpha, heat, alpha, 0.0)


def sanity_thumbnails(
    result: RandomizationResult, colormap: str
) -> tuple[list[np.ndarray], list[tuple[str, T]]]:
    """The sanity check's row of maps (:func:`lessons.saliency.sanity.thumbnails`), each
    coloured with ``colormap`` ((H, W, 3) uint8 RGB), and their (caption, alt) texts."""
    maps, captions = thumbnails(result)
    return [colorize(m, colormap) for m in maps], captions


def png_bytes(image: np.ndarray) -> bytes:
    """(H, W) or (H, W, 3) RGB uint8 -> PNG file bytes (for download buttons): OpenCV's default
    compression, through :func:`core.figure_style.png_bytes`.

    Raises:
        ValueError: for another dtype or shape.
    """
    return figure_style.png_bytes(image, fast=False)


@dataclass(frozen=True)
class Pictures:
    """What the page draws from one map: scaled, coloured and encoded once (PNG bytes go to
    st.image and the download buttons as they are)."""

    comparison: ScalingComparison
    notes_scaled: bool  # the map is the notes' scaling (else the app's)
    share: float  # of the total saliency at or above the percentile
    map_png: bytes  # the (S, S) uint8 map in grey (download)
    heat_png: bytes  # the map through the colormap
    overlay_png: bytes
    app_png: bytes  # the app's scaling, coloured
    notes_png: bytes | None  # the notes' scaling, coloured (None: undefined on a flat map)
    view_png: bytes  # what the model sees


def make_pictures(
    saliency: torch.Tensor, view: np.ndarray, use_notes: bool, percentile: float,
    alpha: float, colormap: str,
) -> Pictures:  # fmt: skip
    """Scale the (S, S) map the notes' way (``use_notes`` and defined) or the app's, colour it,
    blend it over ``view`` (S, S, 3) uint8 and encode each picture.

    Raises:
        ValueError: a map :func:`~lessons.saliency.scaling.scale_percentile` rejects, a bad
            ``percentile``, ``alpha`` or ``colormap``.
    """
    comparison = compare_scalings(saliency, NOTES_PERCENTILE)
    notes_scaled = use_notes and comparison.notes is not None
    saliency_u8 = comparison.notes if notes_scaled else scale_percentile(saliency, percentile)
    notes_png = None
    if comparison.notes is not None:
        notes_png = png_bytes(colorize(comparison.notes, colormap))
    return Pictures(
        comparison=comparison,
        notes_scaled=notes_scaled,
        share=mass_above_percentile(saliency, percentile),
        map_png=png_bytes(saliency_u8),
        heat_png=png_bytes(colorize(saliency_u8, colormap)),
        overlay_png=png_bytes(overlay(view, saliency_u8, alpha, colormap)),
        app_png=png_bytes(colorize(comparison.app, colormap)),
        notes_png=notes_png,
        view_png=png_bytes(view),
    )


def downloads(pictures: Pictures, method: str, target: int) -> list[tuple[str, bytes, str, str]]:
    """The page's PNG downloads of one map, each (label, bytes, file name, widget key): the map
    in grey and the overlay, named by the ``method`` and the explained class ``target``."""
    files = f"{method}_{target}.png"
    return [(N_("Map (PNG)"), pictures.map_png, f"saliency_{files}", "saliency.download_map"),
            (N_("Overlay (PNG)"), pictures.overlay_png, f"saliency_overlay_{files}",
             "saliency.download_overlay")]  # fmt: skip
