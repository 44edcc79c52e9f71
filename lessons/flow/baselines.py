"""The usual alternatives to the gradual mean, for the page's comparison: nearest-valid fill
and ``cv2.inpaint`` (Telea, Navier-Stokes), each channel with its own holes.
"""

from __future__ import annotations

import cv2
import numpy as np

from lessons.flow.gradual_mean import as_numpy_hwc


def nearest_fill(flow: np.ndarray) -> np.ndarray:
    """Fill each channel's NaN with the value of the nearest valid pixel of that channel.

    Uses ``cv2.distanceTransformWithLabels`` (L2, 5x5 mask: nearest up to a tiny approximation).
    (H, W, C) float -> (H, W, C) float32; a channel with no valid pixel stays NaN.
    """
    x = as_numpy_hwc(flow).astype(np.float32)
    out = x.copy()
    for c in range(x.shape[2]):
        holes = np.isnan(x[..., c])
        if not holes.any() or holes.all():
            continue
        _, labels = cv2.distanceTransformWithLabels(
            holes.astype(np.uint8), cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL
        )
        valid_idx = np.flatnonzero(~holes)
        lut = np.zeros(int(labels.max()) + 1, np.int64)
        lut[labels.ravel()[valid_idx]] = valid_idx
        chan = x[..., c].ravel()
        out[..., c] = chan[lut[labels]].reshape(holes.shape)
    return out


def inpaint_fill(flow: np.ndarray, method: str = "telea", radius: int = 5) -> np.ndarray:
    """``cv2.inpaint`` (``telea`` or ``ns`` = Navier-Stokes) per channel with its own holes.

    (H, W, C) float -> (H, W, C) float32; a channel with no valid pixel stays NaN.
    """
    flags = {"telea": cv2.INPAINT_TELEA, "ns": cv2.INPAINT_NS}
    if method not in flags:
        raise ValueError(f"method must be 'telea' or 'ns', got {method!r}")
    x = as_numpy_hwc(flow).astype(np.float32)
    out = x.copy()
    for c in range(x.shape[2]):
        holes = np.isnan(x[..., c])
        if not holes.any() or holes.all():
            continue
        src = np.where(holes, 0.0, x[..., c]).astype(np.float32)
        out[..., c] = cv2.inpaint(src, holes.astype(np.uint8), radius, flags[method])
    return out
