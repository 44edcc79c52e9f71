"""Where the page's flows come from: synthetic fields with ground truth, Farneback flow from
image pairs (uploaded, or scikit-image's motorcycle pictures), and an image warped by a known
affine. Every flow is (H, W, 2) float32, u (x) and v (y) displacements in pixels.
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np

from core.images import decode_image as decode_rgb
from core.images import read_image_size
from core.text import N_, T

MAX_SIDE = 2048  # size cap for images and flow files (pixels per side)
SYNTHETIC_FIELDS: tuple[str, ...] = (
    "translation",
    "rotation",
    "zoom",
    "shear",
    "vortex",
    "piecewise",
)
#: A synthetic case's description, per field (one catalog message each).
SYNTHETIC_DESCRIPTIONS: dict[str, str] = {
    "translation": N_("synthetic translation"),
    "rotation": N_("synthetic rotation"),
    "zoom": N_("synthetic zoom"),
    "shear": N_("synthetic shear"),
    "vortex": N_("synthetic vortex"),
    "piecewise": N_("synthetic piecewise"),
}


def _check_size(height: int, width: int, what: str, max_side: int = MAX_SIDE) -> None:
    for name, v in (("height", height), ("width", width)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 8:
            raise ValueError(f"{what} {name} must be an integer >= 8, got {v!r}")
    if max(height, width) > max_side:
        raise ValueError(
            T("{what} is {height}x{width} pixels, over the size cap of {max_side} pixels per "
              "side; use a smaller one", what=what, height=height, width=width, max_side=max_side)
        )


def synthetic_flow(
    kind: str,
    height: int = 240,
    width: int = 320,
    *,
    magnitude: float = 4.0,
    noise: float = 0.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic flow field and its ground truth.

    Args:
        kind: one of :data:`SYNTHETIC_FIELDS`: ``translation`` (constant), ``rotation`` (about the
            centre), ``zoom`` (expansion from the centre), ``shear`` (u grows with y),
            ``vortex`` (a Gaussian swirl), ``piecewise`` (a rectangle moving against the
            background: a motion discontinuity).
        height, width: size in pixels (8 ... :data:`MAX_SIDE`).
        magnitude: the largest displacement, about, in pixels.
        noise: std of Gaussian noise added to the observed flow (ground truth stays clean).
        seed: seed for the noise.

    Returns:
        ``(observed, truth)``, each (H, W, 2) float32 with u (x) and v (y) displacements.
    """
    if kind not in SYNTHETIC_FIELDS:
        raise ValueError(f"kind must be one of {', '.join(SYNTHETIC_FIELDS)}, got {kind!r}")
    _check_size(height, width, "the synthetic flow")
    if not math.isfinite(magnitude) or not math.isfinite(noise) or noise < 0:
        raise ValueError(f"magnitude must be finite and noise >= 0, got {magnitude}, {noise}")
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
    dx, dy = xx - cx, yy - cy
    half = max(cx, cy, 1.0)
    m = float(magnitude)
    if kind == "translation":
        u = np.full_like(xx, 0.8 * m)
        v = np.full_like(xx, -0.6 * m)
    elif kind == "rotation":
        theta = m / half  # the corners move about `magnitude` pixels
        c, s = math.cos(theta), math.sin(theta)
        u = (c - 1) * dx - s * dy
        v = s * dx + (c - 1) * dy
    elif kind == "zoom":
        u = m / half * dx
        v = m / half * dy
    elif kind == "shear":
        u = m / half * dy
        v = np.zeros_like(xx)
    elif kind == "vortex":
        sigma = 0.35 * min(width, height)
        amp = m * np.exp(-(dx**2 + dy**2) / (2 * sigma**2)) / sigma
        u = -amp * dy
        v = amp * dx
    else:  # piecewise
        u = np.full_like(xx, 0.5 * m)
        v = np.full_like(xx, 0.25 * m)
        inside = (np.abs(dx) < width / 5) & (np.abs(dy) < height / 4)
        u[inside] = -0.8 * m
        v[inside] = 0.5 * m
    truth = np.stack([u, v], axis=2).astype(np.float32)
    observed = truth.copy()
    if noise > 0:
        rng = np.random.default_rng(seed)
        observed += rng.normal(0.0, noise, truth.shape).astype(np.float32)
    return observed, truth


def decode_image(data: bytes, name: str = "image", *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Decode uploaded bytes into an (H, W, 3) uint8 RGB image, refusing images over the cap.

    Decoding is the app's shared one (:func:`core.images.decode_image`: header size check
    before any pixel is decoded, EXIF orientation, every image mode). Unlike the other pages
    nothing is downscaled here: the two images of a pair must keep their sizes to match.

    Raises:
        ValueError: for unreadable files, and for images over ``max_side`` pixels a side.
    """
    try:
        # The cap is checked on the header's size, before any pixel is decoded (EXIF rotation
        # does not change the longer side); no downscaling after it.
        w, h = read_image_size(data)
        if max(h, w) <= max_side:
            rgb = decode_rgb(data, max_side=2**31 - 1).rgb
    except ValueError as error:
        detail = error.args[0] if len(error.args) == 1 else str(error)
        raise ValueError(T("{name}: {error}", name=name, error=detail)) from error
    if max(h, w) > max_side:
        raise ValueError(
            T("{name} is {h}x{w} pixels, over the size cap of {max_side} pixels per side; "
              "downscale it first", name=name, h=h, w=w, max_side=max_side)
        )
    return rgb


def _to_gray(img: np.ndarray, name: str) -> np.ndarray:
    if not isinstance(img, np.ndarray) or img.ndim not in (2, 3):
        raise ValueError(f"{name} must be an (H, W) or (H, W, 3) image array")
    if img.ndim == 3 and img.shape[2] not in (1, 3, 4):
        raise ValueError(f"{name} must have 1, 3 or 4 channels, got {img.shape[2]}")
    img8 = img if img.dtype == np.uint8 else np.clip(img, 0, 255).astype(np.uint8)
    if img8.ndim == 2:
        return img8
    if img8.shape[2] == 1:
        return img8[..., 0]
    code = cv2.COLOR_RGB2GRAY if img8.shape[2] == 3 else cv2.COLOR_RGBA2GRAY
    return cv2.cvtColor(img8, code)


def farneback_flow(
    img1: np.ndarray, img2: np.ndarray, *, max_side: int = MAX_SIDE
) -> tuple[np.ndarray, np.ndarray]:
    """Dense optical flow both ways with ``cv2.calcOpticalFlowFarneback``.

    Args:
        img1, img2: (H, W) or (H, W, 3) uint8 images of the same size (at most ``max_side``).

    Returns:
        ``(forward, backward)``, each (H, W, 2) float32: ``img1(p) ~ img2(p + forward(p))``.

    Raises:
        ValueError: different sizes, over the size cap, or too small.
    """
    g1, g2 = _to_gray(img1, "the first image"), _to_gray(img2, "the second image")
    if g1.shape != g2.shape:
        raise ValueError(
            T("the two images must have the same size, got {h1}x{w1} and {h2}x{w2}; resize or "
              "crop one of them", h1=g1.shape[0], w1=g1.shape[1], h2=g2.shape[0], w2=g2.shape[1])
        )
    _check_size(g1.shape[0], g1.shape[1], T("the image pair"), max_side)
    params = dict(pyr_scale=0.5, levels=4, winsize=15, iterations=3, poly_n=5, poly_sigma=1.2,
                  flags=0)
    fwd = cv2.calcOpticalFlowFarneback(g1, g2, None, **params)
    bwd = cv2.calcOpticalFlowFarneback(g2, g1, None, **params)
    return fwd.astype(np.float32), bwd.astype(np.float32)


def sample_image(name: str, max_side: int) -> np.ndarray:
    """scikit-image's sample picture ``name`` as (H, W, 3) uint8 RGB, at most ``max_side`` px a
    side (downscaled with INTER_AREA when larger).

    Raises:
        ValueError: the sample is missing from this installation.
    """
    import skimage.data

    path = Path(skimage.data.__file__).parent / name
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None:
        raise ValueError(T("scikit-image sample {name} is missing from this installation",
                           name=name))
    h, w = bgr.shape[:2]
    scale = min(1.0, max_side / max(h, w))
    if scale < 1.0:
        bgr = cv2.resize(bgr, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def affine_pair(image: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Warp ``image`` by a 2x3 affine ``matrix``; return ``(warped, ground_truth_flow)``.

    A pixel p of ``image`` lands at ``matrix @ [p, 1]`` in ``warped``, so the true flow is
    ``matrix @ [p, 1] - p`` ((H, W, 2) float32).
    """
    h, w = image.shape[:2]
    a = np.asarray(matrix, np.float64)
    if a.shape != (2, 3):
        raise ValueError(f"matrix must be 2x3, got shape {a.shape}")
    warped = cv2.warpAffine(image, a, (w, h), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REFLECT101)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    u = a[0, 0] * xx + a[0, 1] * yy + a[0, 2] - xx
    v = a[1, 0] * xx + a[1, 1] * yy + a[1, 2] - yy
    return warped, np.stack([u, v], axis=2).astype(np.float32)
