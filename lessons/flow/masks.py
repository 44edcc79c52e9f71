"""Hole masks: where a flow loses its values ((H, W) bool, True = hole).

Synthetic masks (random pixels, blobs, stripes, a border band) and the forward-backward check
of an image pair's two flows; :func:`apply_holes` writes the NaN.
"""

from __future__ import annotations

import cv2
import numpy as np

MASK_KINDS: tuple[str, ...] = ("random", "blobs", "stripes", "border", "fb")


def fb_consistency_mask(
    forward: np.ndarray, backward: np.ndarray, threshold: float = 1.0
) -> np.ndarray:
    """Forward-backward check: a hole where following the flow there and back misses by more
    than ``threshold`` pixels (the notes' "mask out where the resampled result changes a lot").

    Args:
        forward, backward: (H, W, 2) float32 flows img1->img2 and img2->img1.
        threshold: allowed round-trip error in pixels (> 0).

    Returns:
        (H, W) bool, True = unreliable (hole). Points that leave the frame are holes too.
    """
    if forward.shape != backward.shape or forward.ndim != 3 or forward.shape[2] != 2:
        raise ValueError(
            f"forward and backward flow must both be (H, W, 2), got {forward.shape} and "
            f"{backward.shape}"
        )
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0 pixels, got {threshold}")
    h, w = forward.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    mx = xx + forward[..., 0]
    my = yy + forward[..., 1]
    back = cv2.remap(backward.astype(np.float32), mx, my, cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=(np.nan, np.nan))
    err = np.linalg.norm(forward + back, axis=2)
    outside = (mx < 0) | (mx > w - 1) | (my < 0) | (my > h - 1)
    return ~(err <= threshold) | outside


def make_hole_mask(
    kind: str,
    height: int,
    width: int,
    *,
    fraction: float = 0.3,
    size: int = 12,
    seed: int = 0,
) -> np.ndarray:
    """A synthetic hole mask ((H, W) bool, True = hole).

    Args:
        kind: ``random`` (each pixel a hole with probability ``fraction``), ``blobs`` (random
            discs of radius ~``size`` until ``fraction`` is covered), ``stripes`` (vertical
            stripes ``size`` wide covering ``fraction``), ``border`` (a band ``size`` wide
            along all four edges). (``fb`` needs an image pair: see :func:`fb_consistency_mask`.)
        fraction: target hole fraction in (0, 1] (random, blobs, stripes).
        size: blob radius / stripe width / band width in pixels (>= 1).
        seed: RNG seed.
    """
    if kind not in MASK_KINDS or kind == "fb":
        raise ValueError(
            f"kind must be one of random, blobs, stripes, border (fb needs an image pair), "
            f"got {kind!r}"
        )
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    if size < 1:
        raise ValueError(f"size must be >= 1 pixel, got {size}")
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.random((height, width)) < fraction
    if kind == "border":
        m = np.zeros((height, width), bool)
        m[:size] = m[-size:] = True
        m[:, :size] = m[:, -size:] = True
        return m
    if kind == "stripes":
        period = max(size + 1, round(size / fraction))
        m = np.zeros((height, width), bool)
        offset = int(rng.integers(0, period))
        for x0 in range(offset - period, width, period):
            m[:, max(0, x0) : max(0, x0 + size)] = True
        return m
    canvas = np.zeros((height, width), np.uint8)
    target = fraction * height * width
    for _ in range(10_000):
        if np.count_nonzero(canvas) >= target:
            break
        cx, cy = int(rng.integers(0, width)), int(rng.integers(0, height))
        r = max(1, int(rng.integers(max(1, size // 2), size + 1)))
        cv2.circle(canvas, (cx, cy), r, 1, thickness=-1)
    return canvas.astype(bool)


def apply_holes(flow: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A copy of (H, W, C) ``flow`` with NaN in every channel where (H, W) ``mask`` is True."""
    if mask.shape != flow.shape[:2]:
        raise ValueError(f"mask shape {mask.shape} does not match flow shape {flow.shape[:2]}")
    out = flow.astype(np.float32, copy=True)
    out[mask] = np.nan
    return out
