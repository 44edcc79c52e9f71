"""OpenCV affine matrices through ``F.affine_grid`` + ``F.grid_sample``, checked against OpenCV.

Conventions (all sizes follow OpenCV):

* ``M`` is OpenCV's (2, 3) matrix. It maps a *source* pixel ``(x, y)`` to a *destination*
  pixel, with pixel centres at integer coordinates: ``dst = M @ [x, y, 1]``.
  ``cv2.warpAffine`` fills every destination pixel ``d`` with ``src(M^-1 d)``.
* ``F.affine_grid(theta, size)`` works the other way round: ``size = (N, C, H_out, W_out)``
  is the resolution of the *output* grid, and ``theta`` maps normalized *output*
  coordinates to normalized *input* coordinates in ``[-1, 1]``.
* Hence ``theta = N_src @ M^-1 @ N_dst^-1`` (3x3, top two rows kept), where ``N`` maps pixel
  coordinates to normalized ones for the chosen ``align_corners``:

  - ``align_corners=False``: ``x_n = (2x + 1) / W - 1`` (the image edges are -1 and 1)
  - ``align_corners=True``:  ``x_n = 2x / (W - 1) - 1`` (the corner pixel centres are -1 and 1)

Flag mapping between the two paths (measured, see ``tests/lessons/warp/test_affine.py``):

==================  ===========================================================
grid_sample         cv2.warpAffine
==================  ===========================================================
``nearest``         ``INTER_NEAREST``
``bilinear``        ``INTER_LINEAR``
``bicubic``         ``INTER_CUBIC`` (both use the cubic convolution kernel, A = -0.75)
``zeros``           ``BORDER_CONSTANT`` with value 0
``border``          ``BORDER_REPLICATE``
``reflection``      ``BORDER_REFLECT`` (``fedcba|abcdef``) when ``align_corners=False``:
                    the mirror is the image edge, half a pixel outside the border pixel;
                    ``BORDER_REFLECT_101`` (``fedcb|abcdef``) when ``align_corners=True``:
                    the mirror is the centre of the border pixel.
==================  ===========================================================

Nothing here imports Streamlit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from core.notes import NotesCallout, NotesRef, run_live
from core.text import N_, T

INTERPOLATIONS: tuple[str, ...] = ("bilinear", "nearest", "bicubic")
PADDING_MODES: tuple[str, ...] = ("zeros", "border", "reflection")
#: Largest output side. The lesson (half a pixel of offset, what dsize crops or extends) reads
#: the same on a 600 px output as on a huge one, and the figure shows ~600 px anyway; 2048 is
#: the largest side an input image has (core.images.DEFAULT_MAX_SIDE), so "Same as input"
#: always fits. A 4096 x 4096 view cost 10-16 CPU-s and a 2 GB peak on a 2-core server.
MAX_OUTPUT_SIDE = 2048
#: The page's cost of one view, CPU-seconds per output megapixel and interpolation mode: both
#: warps, their difference, the tie test and the page's images and figures (measured through
#: the page on a 2-core machine shared with other work: 1024 x 1024 took 0.5-0.8 s, 2048 x 2048
#: 4.7-5.6 s, 4096 x 4096 10-16 s). A view with the notes' theta warps twice (its own and the
#: correct one, for the comparison), which adds about a fifth.
WARP_SECONDS_PER_MPX: dict[str, float] = {"nearest": 0.9, "bilinear": 1.1, "bicubic": 1.2}
WARP_BASE_SECONDS = 0.3
WARP_NOTES_FACTOR = 1.2
MIN_SIDE = 2  # align_corners=True divides by (W - 1); a 1-pixel side has no extent to map
BORDER_PX = 2  # pixels excluded on every side for the "interior" error
TIE_PX = 1e-3  # nearest: a sample this close to k + 0.5 is a rounding tie
MAX_GRID_POINTS = 625  # sampling-grid markers drawn by the page (25 x 25)
# cv2.warpAffine's BORDER_REFLECT* folds an out-of-range coordinate back one image length per
# step, so its time grows with how far outside the image it samples (measured: 451x300 output,
# 1000 image widths away: 0.4 s; 10^7 px away: minutes). Reflection reads further than this
# many source widths/heights outside the image are refused.
MAX_REFLECTION_REACH = 100
MAX_POINT_COORD = 1e6  # px; cv2.getAffineTransform solves in float32 (overflow past ~3e38)

CV2_INTERPOLATION: dict[str, int] = {
    "nearest": cv2.INTER_NEAREST,
    "bilinear": cv2.INTER_LINEAR,
    "bicubic": cv2.INTER_CUBIC,
}
CV2_INTERPOLATION_NAMES: dict[int, str] = {
    cv2.INTER_NEAREST: "cv2.INTER_NEAREST",
    cv2.INTER_LINEAR: "cv2.INTER_LINEAR",
    cv2.INTER_CUBIC: "cv2.INTER_CUBIC",
}
CV2_BORDER_NAMES: dict[int, str] = {
    cv2.BORDER_CONSTANT: "cv2.BORDER_CONSTANT",
    cv2.BORDER_REPLICATE: "cv2.BORDER_REPLICATE",
    cv2.BORDER_REFLECT: "cv2.BORDER_REFLECT",
    cv2.BORDER_REFLECT_101: "cv2.BORDER_REFLECT_101",
}


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _fmt_matrix(m: np.ndarray) -> str:
    rows = ", ".join("[" + ", ".join(f"{v:.4g}" for v in row) + "]" for row in np.atleast_2d(m))
    return f"[{rows}]"


def validate_affine(M: np.ndarray | Sequence[Sequence[float]] | torch.Tensor) -> np.ndarray:
    """Check an OpenCV affine matrix and return it as a float64 (2, 3) array.

    Args:
        M: (2, 3) array-like; a (3, 3) matrix whose last row is ``[0, 0, 1]`` is accepted too.

    Returns:
        (2, 3) float64 copy of ``M``.

    Raises:
        ValueError: wrong shape, NaN/inf entries, or a singular (non-invertible) 2x2 part.

    >>> validate_affine([[1, 0, 5], [0, 1, 0]]).shape
    (2, 3)
    """
    if isinstance(M, torch.Tensor):
        M = M.detach().cpu().numpy()
    try:
        m = np.array(M, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(
            T("the affine matrix must be numbers in a 2x3 array, got {M!r}", M=M)
        ) from error
    if m.shape == (3, 3):
        if not np.allclose(m[2], [0.0, 0.0, 1.0]):
            raise ValueError(
                T(
                    "a 3x3 matrix is affine only if its last row is [0, 0, 1], got {row}",
                    row=m[2].tolist(),
                )
            )
        m = m[:2]
    if m.shape != (2, 3):
        raise ValueError(
            T("the affine matrix must have shape 2x3 (OpenCV's M), got {shape}", shape=m.shape)
        )
    if not np.isfinite(m).all():
        bad = [f"M[{r}][{c}]={m[r, c]}" for r, c in zip(*np.nonzero(~np.isfinite(m)), strict=True)]
        raise ValueError(
            T(
                "the affine matrix contains NaN or infinite entries ({bad}); "
                "every entry must be a finite number",
                bad=", ".join(bad),
            )
        )
    a = m[:, :2]
    scale = float(np.abs(a).max())
    with np.errstate(over="ignore"):
        det = float(np.linalg.det(a))
    if not math.isfinite(det) or not math.isfinite(scale * scale):
        raise ValueError(
            T(
                "the affine matrix's 2x2 part {a} is too large to invert: its "
                "determinant overflows. Use entries of a sane size (a scale of 1e6 is already a "
                "million-fold zoom)",
                a=_fmt_matrix(a),
            )
        )
    if scale == 0.0 or abs(det) <= 1e-12 * scale * scale:
        raise ValueError(
            T(
                "the affine matrix is singular: its 2x2 part {a} has determinant "
                "{det:.3g}, so it squashes the image onto a line (or a point) and cannot be "
                "inverted. Use a non-zero scale, and shears whose product is not 1.",
                a=_fmt_matrix(a),
                det=det,
            )
        )
    return m


# The sizes _validate_hw checks, each with its own sentence (a translation needs the whole).
_HW_TOO_SMALL = {
    "the image": N_(
        "the image is {w}x{h} pixels (width x height); warping needs at least "
        "{min_side}x{min_side} pixels"
    ),
    "the source size": N_(
        "the source size is {w}x{h} pixels (width x height); warping needs at least "
        "{min_side}x{min_side} pixels"
    ),
    "the output size": N_(
        "the output size is {w}x{h} pixels (width x height); warping needs at least "
        "{min_side}x{min_side} pixels"
    ),
    "the size": N_(
        "the size is {w}x{h} pixels (width x height); warping needs at least "
        "{min_side}x{min_side} pixels"
    ),
}


def _validate_hw(hw: Sequence[int], what: str) -> tuple[int, int]:
    try:
        h, w = (int(v) for v in hw)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what} must be a pair (height, width), got {hw!r}") from error
    if h < MIN_SIDE or w < MIN_SIDE:
        template = _HW_TOO_SMALL.get(
            what,
            f"{what} is {{w}}x{{h}} pixels (width x height); warping needs at least "
            "{min_side}x{min_side} pixels",
        )
        raise ValueError(T(template, w=w, h=h, min_side=MIN_SIDE))
    return h, w


def validate_dsize(dsize: Sequence[int]) -> tuple[int, int]:
    """Check an OpenCV-style output size ``(width, height)`` and return it as ints.

    Raises:
        ValueError: not two integers, a side below 2 pixels (e.g. 0), or above MAX_OUTPUT_SIDE.
    """
    try:
        w, h = (v for v in dsize)
    except (TypeError, ValueError) as error:
        raise ValueError(
            T("the output size must be a pair (width, height), got {dsize!r}", dsize=dsize)
        ) from error
    for template, v in (
        (N_("the output width must be a whole number of pixels, got {v}"), w),
        (N_("the output height must be a whole number of pixels, got {v}"), h),
    ):
        if isinstance(v, float) and not float(v).is_integer():
            raise ValueError(T(template, v=v))
    w, h = int(w), int(h)
    if w < MIN_SIDE or h < MIN_SIDE:
        raise ValueError(
            T(
                "the output size {w}x{h} (width x height) is too small: each side needs at "
                "least {min_side} pixels",
                w=w,
                h=h,
                min_side=MIN_SIDE,
            )
        )
    if w > MAX_OUTPUT_SIDE or h > MAX_OUTPUT_SIDE:
        raise ValueError(
            T(
                "the output size {w}x{h} (width x height) is over the cap of {cap} "
                "pixels per side; choose a smaller output size",
                w=w,
                h=h,
                cap=MAX_OUTPUT_SIDE,
            )
        )
    return w, h


def estimate_warp_seconds(out_w: int, out_h: int, mode: str = "bilinear", *,
                          notes: bool = False) -> float:
    """About how many seconds the warp page takes to show a ``out_w`` x ``out_h`` output with
    interpolation ``mode`` (and the notes' theta, which warps a second time), on a CPU like
    the 2-core one it was measured on (see :data:`WARP_SECONDS_PER_MPX`).

    >>> round(estimate_warp_seconds(451, 300), 2)
    0.45
    >>> estimate_warp_seconds(2048, 2048, "bicubic", notes=True) > 2
    True

    Raises:
        ValueError: a side below 1 pixel or an unknown ``mode``.
    """
    if mode not in WARP_SECONDS_PER_MPX:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {mode!r}")
    if out_w < 1 or out_h < 1:
        raise ValueError(f"the output size must be positive, got {out_w}x{out_h}")
    mpx = out_w * out_h / 1e6
    return WARP_BASE_SECONDS + WARP_SECONDS_PER_MPX[mode] * mpx * (
        WARP_NOTES_FACTOR if notes else 1.0)


def preview_dsize(dsize: tuple[int, int], mode: str = "bilinear", *, notes: bool = False,
                  seconds: float = 2.0) -> tuple[int, int]:
    """The largest top-left crop ``(w, h)`` of a ``dsize`` output that
    :func:`estimate_warp_seconds` puts within ``seconds``, halving the longer side from
    ``dsize`` down (never below :data:`MIN_SIDE`).

    A smaller dsize crops the same output (OpenCV's M maps pixels to pixels; dsize only says
    how much of the destination to compute), so the crop is the heavy view's own top-left
    corner, shown while the whole waits for a click.

    >>> preview_dsize((2048, 2048), "bicubic", notes=True)
    (1024, 1024)
    >>> preview_dsize((300, 200))
    (300, 200)

    Raises:
        ValueError: a side below 1 pixel, an unknown ``mode`` or ``seconds`` not positive.
    """
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds!r}")
    out_w, out_h = dsize
    side = max(out_w, out_h)
    while side > MIN_SIDE and estimate_warp_seconds(
        min(out_w, side), min(out_h, side), mode, notes=notes
    ) > seconds:
        side = max(MIN_SIDE, side // 2)
    return min(out_w, side), min(out_h, side)


def validate_image(img: np.ndarray) -> np.ndarray:
    """Check an image for warping and return it as an (H, W, C) array (a view when possible).

    Args:
        img: (H, W, C) with C in {1, 3, 4}, or a grayscale (H, W); dtype uint8 or floating.

    Raises:
        ValueError: wrong rank or channel count, unsupported dtype, NaN/inf values, or a side
            below 2 pixels (e.g. a 1x1 image).
    """
    if not isinstance(img, np.ndarray):
        raise ValueError(T("the image must be a numpy array, got {kind}", kind=type(img).__name__))
    if img.ndim == 2:
        img = img[:, :, None]
    if img.ndim != 3 or img.shape[2] not in (1, 3, 4):
        raise ValueError(
            T(
                "the image must be (H, W), (H, W, 1), (H, W, 3) or (H, W, 4), got shape {shape}",
                shape=img.shape,
            )
        )
    if img.dtype != np.uint8 and img.dtype not in (np.float32, np.float64):
        raise ValueError(
            T("the image must be uint8, float32 or float64, got {dtype}", dtype=img.dtype)
        )
    _validate_hw(img.shape[:2], "the image")
    if img.dtype != np.uint8 and not np.isfinite(img).all():
        raise ValueError(T("the image contains NaN or infinite values"))
    return img


def reflection_reach(
    M: np.ndarray | Sequence[Sequence[float]], src_hw: Sequence[int], dsize: Sequence[int]
) -> float:
    """How far outside the source image the output samples, in source widths/heights.

    The farthest sample of an affine warp is at a corner of the output, so only the four
    output corners are mapped back with ``M^-1``. 0 when every sample is inside the image.
    """
    m = validate_affine(M)
    sh, sw = _validate_hw(src_hw, "the source size")
    w, h = validate_dsize(dsize)
    corners = np.array([[0, 0, 1], [w - 1, 0, 1], [0, h - 1, 1], [w - 1, h - 1, 1]], np.float64)
    x, y = (corners @ np.linalg.inv(_to3(m))[:2].T).T
    out_x = np.maximum(-x, x - (sw - 1)).max() / sw
    out_y = np.maximum(-y, y - (sh - 1)).max() / sh
    return float(max(out_x, out_y, 0.0))


def _check_reflection_reach(m: np.ndarray, src_hw: Sequence[int], dsize: Sequence[int]) -> None:
    reach = reflection_reach(m, src_hw, dsize)
    if reach > MAX_REFLECTION_REACH:
        raise ValueError(
            T(
                "with reflection padding this output samples the input up to {reach:,.0f} "
                "image widths/heights outside it (the limit is {limit}); "
                "cv2.warpAffine folds such far samples back one image length at a time, which "
                "would take minutes. Use zeros or border padding, or a transform that keeps the "
                "output nearer the image",
                reach=reach,
                limit=MAX_REFLECTION_REACH,
            )
        )


def _validate_modes(mode: str, padding_mode: str) -> None:
    if mode not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {mode!r}")
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"padding must be one of {', '.join(PADDING_MODES)}, got {padding_mode!r}")


def _validate_device(device: str) -> torch.device:
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            T("unknown torch device {device!r}; use 'cpu' or 'cuda:N'", device=device)
        ) from error
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                T(
                    "device {device!r} asked for, but PyTorch sees no CUDA GPU; use 'cpu'",
                    device=device,
                )
            )
        index = dev.index or 0
        if index >= torch.cuda.device_count():
            raise ValueError(
                T(
                    "device {device!r} does not exist: PyTorch sees {count} GPU(s)",
                    device=device,
                    count=torch.cuda.device_count(),
                )
            )
    elif dev.type != "cpu":
        raise ValueError(
            T("device {device!r} is not supported here; use 'cpu' or 'cuda:N'", device=device)
        )
    return dev


# --------------------------------------------------------------------------------------------
# Matrices
# --------------------------------------------------------------------------------------------


def normalization_matrix(width: int, height: int, align_corners: bool = False) -> np.ndarray:
    """The 3x3 matrix N taking pixel coordinates to grid_sample's normalized coordinates.

    ``align_corners=False``: ``x_n = (2x + 1)/W - 1``;
    ``align_corners=True``: ``x_n = 2x/(W-1) - 1``.

    Returns:
        (3, 3) float64.

    >>> normalization_matrix(4, 2) @ [0, 0, 1]
    array([-0.75, -0.5 ,  1.  ])
    """
    h, w = _validate_hw((height, width), "the size")
    if align_corners:
        return np.array([[2 / (w - 1), 0, -1], [0, 2 / (h - 1), -1], [0, 0, 1]], dtype=np.float64)
    return np.array([[2 / w, 0, 1 / w - 1], [0, 2 / h, 1 / h - 1], [0, 0, 1]], dtype=np.float64)


def normalization_formula(align_corners: bool) -> str:
    """LaTeX for the pixel -> normalized formula of the given ``align_corners``."""
    if align_corners:
        return r"x_n = \frac{2x}{W-1} - 1,\qquad y_n = \frac{2y}{H-1} - 1"
    return r"x_n = \frac{2x + 1}{W} - 1,\qquad y_n = \frac{2y + 1}{H} - 1"


def _to3(m: np.ndarray) -> np.ndarray:
    return np.vstack([m, [0.0, 0.0, 1.0]])


def affine_to_theta(
    M: np.ndarray | Sequence[Sequence[float]],
    src_hw: Sequence[int],
    dst_hw: Sequence[int],
    align_corners: bool = False,
) -> torch.Tensor:
    """Turn OpenCV's ``M`` into the ``theta`` that ``F.affine_grid`` needs.

    ``theta = N_src @ M^-1 @ N_dst^-1`` (top two rows), with N for ``align_corners``.

    Args:
        M: (2, 3) OpenCV matrix, source pixel -> destination pixel.
        src_hw: (H, W) of the input image.
        dst_hw: (H, W) of the output image (``dsize`` reversed); may differ from ``src_hw``.
        align_corners: the value that will be passed to affine_grid and grid_sample.

    Returns:
        (1, 2, 3) float64 tensor (cast it to the image dtype before affine_grid).

    Raises:
        ValueError: ``M`` singular or not finite, or a size below 2x2.

    >>> affine_to_theta([[1, 0, 0], [0, 1, 0]], (4, 4), (4, 4)).squeeze(0)
    tensor([[1., 0., 0.],
            [0., 1., 0.]], dtype=torch.float64)
    """
    m = validate_affine(M)
    sh, sw = _validate_hw(src_hw, "the source size")
    dh, dw = _validate_hw(dst_hw, "the output size")
    n_src = normalization_matrix(sw, sh, align_corners)
    n_dst = normalization_matrix(dw, dh, align_corners)
    theta = n_src @ np.linalg.inv(_to3(m)) @ np.linalg.inv(n_dst)
    return torch.from_numpy(np.ascontiguousarray(theta[:2])).unsqueeze(0)


def theta_to_affine(
    theta: torch.Tensor | np.ndarray,
    src_hw: Sequence[int],
    dst_hw: Sequence[int],
    align_corners: bool = False,
) -> np.ndarray:
    """The exact inverse of :func:`affine_to_theta`: ``M = (N_src^-1 @ theta @ N_dst)^-1``.

    Args:
        theta: (1, 2, 3) or (2, 3) tensor or array.
        src_hw, dst_hw, align_corners: as in :func:`affine_to_theta`.

    Returns:
        (2, 3) float64 OpenCV matrix.

    Raises:
        ValueError: bad shape, non-finite or singular theta, or a size below 2x2.
    """
    if isinstance(theta, torch.Tensor):
        theta = theta.detach().to("cpu", torch.float64).numpy()
    t = np.asarray(theta, dtype=np.float64)
    if t.shape == (1, 2, 3):
        t = t[0]
    if t.shape != (2, 3):
        raise ValueError(f"theta must have shape (1, 2, 3) or (2, 3), got {t.shape}")
    t = validate_affine(t)
    sh, sw = _validate_hw(src_hw, "the source size")
    dh, dw = _validate_hw(dst_hw, "the output size")
    n_src = normalization_matrix(sw, sh, align_corners)
    n_dst = normalization_matrix(dw, dh, align_corners)
    m_inv = np.linalg.inv(n_src) @ _to3(t) @ n_dst
    return np.linalg.inv(m_inv)[:2]


def notes_affine2theta(
    M: np.ndarray | Sequence[Sequence[float]],
    in_size: Sequence[int],
    out_size: Sequence[int],
) -> torch.Tensor:
    """THE NOTES' VERSION, kept for comparison: off by half a pixel with align_corners=False.

    It normalizes with ``x_n = 2x/W - 1`` (``N = [[2/W, 0, -1], [0, 2/H, -1]]``), which is
    neither of grid_sample's conventions: with ``align_corners=False`` every sample lands at
    ``M^-1 (d + 0.5) - 0.5`` instead of ``M^-1 d`` (zero shift only for pure translations);
    with ``align_corners=True`` the scale is off by W/(W-1). Use :func:`affine_to_theta`.

    Args:
        M: (2, 3) OpenCV matrix.
        in_size: (H, W) of the input image.
        out_size: (H, W) of the output image.

    Returns:
        (1, 2, 3) float64 tensor.
    """
    m = validate_affine(M)
    ih, iw = _validate_hw(in_size, "the source size")
    oh, ow = _validate_hw(out_size, "the output size")

    def notes_n(w: int, h: int) -> np.ndarray:
        return np.array([[2.0 / w, 0, -1.0], [0, 2.0 / h, -1.0], [0, 0, 1.0]])

    theta = np.linalg.inv(notes_n(ow, oh) @ _to3(m) @ np.linalg.inv(notes_n(iw, ih)))
    return torch.from_numpy(np.ascontiguousarray(theta[:2])).unsqueeze(0)


def notes_shift_px(M: np.ndarray | Sequence[Sequence[float]]) -> tuple[float, float]:
    """Where the notes' theta samples relative to OpenCV, with align_corners=False, in pixels.

    The shift is the same for every output pixel: ``A^-1 (0.5, 0.5) - (0.5, 0.5)``, with A the
    2x2 part of M. Returns ``(dx, dy)`` in source pixels.
    """
    m = validate_affine(M)
    half = np.array([0.5, 0.5])
    dx, dy = np.linalg.solve(m[:, :2], half) - half
    return float(dx), float(dy)


# --------------------------------------------------------------------------------------------
# Three ways to build M
# --------------------------------------------------------------------------------------------


def matrix_from_params(
    angle_deg: float = 0.0,
    scale: float = 1.0,
    shear_x: float = 0.0,
    shear_y: float = 0.0,
    tx: float = 0.0,
    ty: float = 0.0,
    center: Sequence[float] = (0.0, 0.0),
) -> np.ndarray:
    """Compose M = T(tx, ty) @ R(center, angle, scale) @ Shear(center).

    The rotation and scale come from ``cv2.getRotationMatrix2D(center, angle, scale)``
    (positive angle = counter-clockwise on screen). The shear ``[[1, shear_x], [shear_y, 1]]``
    acts about the same centre, then the result is translated by ``(tx, ty)`` pixels.

    Returns:
        (2, 3) float64.

    Raises:
        ValueError: non-finite values, scale <= 0, or shear_x * shear_y == 1 (singular).

    >>> matrix_from_params(tx=3).tolist()
    [[1.0, 0.0, 3.0], [0.0, 1.0, 0.0]]
    """
    values = {"angle": angle_deg, "scale": scale, "shear x": shear_x, "shear y": shear_y}
    values |= {"tx": tx, "ty": ty, "centre x": center[0], "centre y": center[1]}
    for name, v in values.items():
        if not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite number, got {v}")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    cx, cy = float(center[0]), float(center[1])
    rot = _to3(cv2.getRotationMatrix2D((cx, cy), float(angle_deg), float(scale)))
    to_c = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]], dtype=np.float64)
    from_c = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], dtype=np.float64)
    shear = np.array([[1, shear_x, 0], [shear_y, 1, 0], [0, 0, 1]], dtype=np.float64)
    trans = np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]], dtype=np.float64)
    return validate_affine((trans @ rot @ to_c @ shear @ from_c)[:2])


def matrix_from_entries(entries: Sequence[float]) -> np.ndarray:
    """Six numbers ``[a, b, c, d, e, f]`` -> ``[[a, b, c], [d, e, f]]``, validated."""
    flat = list(entries)
    if len(flat) != 6:
        raise ValueError(f"a 2x3 matrix needs 6 numbers, got {len(flat)}")
    return validate_affine(np.array(flat, dtype=np.float64).reshape(2, 3))


def _triangle_area(pts: np.ndarray) -> float:
    (x0, y0), (x1, y1), (x2, y2) = pts
    return 0.5 * abs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0))


# matrix_from_points' messages for each side, whole sentences (one catalog message each).
_POINT_ERRORS = {
    "source": {
        "nan": N_("source points contain NaN or infinite values: {values}"),
        "range": N_(
            "source point coordinates must lie within ±{limit:,.0f} px "
            "(OpenCV solves in float32), got {largest:.3g}"
        ),
        "collinear": N_(
            "the three source points {shown} are collinear (they lie on one line), so "
            "they do not define an invertible affine map; move one point off the line"
        ),
    },
    "destination": {
        "nan": N_("destination points contain NaN or infinite values: {values}"),
        "range": N_(
            "destination point coordinates must lie within ±{limit:,.0f} px "
            "(OpenCV solves in float32), got {largest:.3g}"
        ),
        "collinear": N_(
            "the three destination points {shown} are collinear (they lie on one line), so "
            "they do not define an invertible affine map; move one point off the line"
        ),
    },
}


def matrix_from_points(
    src_pts: Sequence[Sequence[float]], dst_pts: Sequence[Sequence[float]]
) -> np.ndarray:
    """The M that sends three source points onto three destination points.

    Uses ``cv2.getAffineTransform`` (float32 points, as OpenCV requires).

    Args:
        src_pts: three (x, y) source pixel coordinates.
        dst_pts: three (x, y) destination pixel coordinates.

    Returns:
        (2, 3) float64.

    Raises:
        ValueError: not 3 points each, non-finite values, or collinear (or repeated) points on
            either side: three points on a line do not pin down an invertible affine map.
    """
    sets = {}
    for name, pts in (("source", src_pts), ("destination", dst_pts)):
        texts = _POINT_ERRORS[name]
        try:
            arr = np.array(pts, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name} points must be three (x, y) pairs, got {pts!r}") from error
        if arr.shape != (3, 2):
            raise ValueError(f"{name} points must be three (x, y) pairs, got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(T(texts["nan"], values=arr.tolist()))
        if np.abs(arr).max() > MAX_POINT_COORD:
            raise ValueError(
                T(texts["range"], limit=MAX_POINT_COORD, largest=float(np.abs(arr).max()))
            )
        span = float(np.ptp(arr, axis=0).max())
        if span == 0.0 or _triangle_area(arr) <= 1e-6 * span * span:
            shown = ", ".join(f"({x:g}, {y:g})" for x, y in arr)
            raise ValueError(T(texts["collinear"], shown=shown))
        sets[name] = arr
    m = cv2.getAffineTransform(
        sets["source"].astype(np.float32), sets["destination"].astype(np.float32)
    )
    return validate_affine(m)


def parse_matrix_text(text: str) -> np.ndarray:
    """Parse a 2x3 matrix typed or pasted as text, then validate it.

    Accepts two lines of three numbers separated by spaces or commas; brackets are ignored,
    so ``[[1, 0, 5], [0, 1, 0]]`` pasted from Python works too. ``nan`` and ``inf`` parse (and
    are then rejected by :func:`validate_affine` with a clear message).

    Returns:
        (2, 3) float64.

    Raises:
        ValueError: a token that is not a number, a wrong count, NaN/inf, or a singular matrix.

    >>> parse_matrix_text("1 0 5\\n0 1 0").tolist()
    [[1.0, 0.0, 5.0], [0.0, 1.0, 0.0]]
    """
    cleaned = text.replace("[", " ").replace("]", " ").replace(",", " ").replace(";", "\n")
    rows = [line.split() for line in cleaned.splitlines() if line.strip()]
    tokens = [tok for row in rows for tok in row]
    values = []
    for tok in tokens:
        try:
            values.append(float(tok))
        except ValueError:
            raise ValueError(T("{tok!r} in the matrix is not a number", tok=tok)) from None
    if len(values) != 6:
        raise ValueError(
            T(
                "the matrix needs 6 numbers (2 rows of 3: a b c / d e f), got {count}",
                count=len(values),
            )
        )
    return validate_affine(np.array(values).reshape(2, 3))


def default_points(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Three source points spread over a ``width`` x ``height`` image and a gently moved copy.

    Returns:
        ``(src, dst)``, each (3, 2) float64 ``(x, y)`` pixel coordinates, rounded to 0.1 px.
    """
    w, h = float(width), float(height)
    src = np.array([[0.2 * w, 0.2 * h], [0.8 * w, 0.2 * h], [0.2 * w, 0.8 * h]])
    dst = np.array([[0.25 * w, 0.12 * h], [0.85 * w, 0.32 * h], [0.12 * w, 0.82 * h]])
    return np.round(src, 1), np.round(dst, 1)


def is_grayscale(img: np.ndarray) -> bool:
    """True for (H, W), (H, W, 1), or colour images whose channels are all equal."""
    if img.ndim == 2 or img.shape[-1] == 1:
        return True
    return bool((img[..., :3] == img[..., :1]).all())


def max_pool_preview(diff: np.ndarray, max_side: int = 400) -> tuple[np.ndarray, int]:
    """Shrink a (H, W) error map by an integer factor, keeping each block's MAX (no hiding).

    Returns:
        ``(preview, factor)``: preview is (ceil(H/f), ceil(W/f)) float32 and pixel (i, j) of it
        covers rows ``i*f .. i*f+f-1`` and columns ``j*f .. j*f+f-1`` of ``diff``.
    """
    if diff.ndim != 2:
        raise ValueError(f"expected a (H, W) map, got shape {diff.shape}")
    if max_side < 1:
        raise ValueError(f"max_side must be positive, got {max_side}")
    h, w = diff.shape
    f = max(1, math.ceil(max(h, w) / max_side))
    if f == 1:
        return diff.astype(np.float32), 1
    ph, pw = math.ceil(h / f) * f, math.ceil(w / f) * f
    padded = np.full((ph, pw), -np.inf, dtype=np.float64)
    padded[:h, :w] = diff
    pooled = padded.reshape(ph // f, f, pw // f, f).max(axis=(1, 3))
    return pooled.astype(np.float32), f


def image_preview(img: np.ndarray, max_side: int = 640) -> tuple[np.ndarray, float, float]:
    """Shrink an image (area averaging) so its longest side is at most ``max_side``, for plots.

    Returns:
        ``(preview, sx, sy)``: preview is (h, w, C) of the input dtype; one preview pixel spans
        ``sx`` x ``sy`` source pixels, so preview pixel (i, j) is centred on source coordinate
        ``(j*sx + (sx-1)/2, i*sy + (sy-1)/2)``.
    """
    img3 = validate_image(img)
    h, w = img3.shape[:2]
    if max(h, w) <= max_side:
        return img3, 1.0, 1.0
    scale = max_side / max(h, w)
    pw, ph = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(img3, (pw, ph), interpolation=cv2.INTER_AREA)
    return small.reshape(ph, pw, img3.shape[2]), w / pw, h / ph


def crop_around(
    img: np.ndarray, xs: np.ndarray, ys: np.ndarray, margin: int = 1
) -> tuple[np.ndarray, int, int] | None:
    """The part of ``img`` (H, W, C) covering points ``(xs, ys)`` plus ``margin`` pixels.

    Returns:
        ``(crop, x0, y0)`` with crop = img[y0:y1, x0:x1], or None when no pixel is covered.
    """
    h, w = img.shape[:2]
    x0 = max(0, math.floor(float(np.min(xs))) - margin)
    x1 = min(w, math.ceil(float(np.max(xs))) + margin + 1)
    y0 = max(0, math.floor(float(np.min(ys))) - margin)
    y1 = min(h, math.ceil(float(np.max(ys))) + margin + 1)
    if x0 >= x1 or y0 >= y1:
        return None
    return img[y0:y1, x0:x1], x0, y0


def matrix_latex(m: np.ndarray, digits: int = 4) -> str:
    """A LaTeX ``bmatrix`` of ``m`` (2-D), numbers shown with ``digits`` significant digits."""
    rows = [" & ".join(f"{float(v):.{digits}g}" for v in row) for row in np.atleast_2d(m)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


# --------------------------------------------------------------------------------------------
# Warping
# --------------------------------------------------------------------------------------------


def cv2_flags(mode: str, padding_mode: str, align_corners: bool) -> tuple[int, int]:
    """The ``(interpolation, borderMode)`` flags of cv2.warpAffine matching grid_sample's modes.

    ``reflection`` is ``BORDER_REFLECT`` with ``align_corners=False`` and ``BORDER_REFLECT_101``
    with ``align_corners=True`` (measured: the other pairing differs by up to 8 grey levels).
    """
    _validate_modes(mode, padding_mode)
    if padding_mode == "zeros":
        border = cv2.BORDER_CONSTANT
    elif padding_mode == "border":
        border = cv2.BORDER_REPLICATE
    else:
        border = cv2.BORDER_REFLECT_101 if align_corners else cv2.BORDER_REFLECT
    return CV2_INTERPOLATION[mode], border


def warp_affine_cv2(
    img: np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    interpolation: int | str = cv2.INTER_LINEAR,
    border: int = cv2.BORDER_CONSTANT,
) -> np.ndarray:
    """The OpenCV reference: ``cv2.warpAffine(img, M, dsize, flags=..., borderMode=...)``.

    Args:
        img: (H, W, C) or (H, W); uint8, float32 or float64.
        M: (2, 3) source -> destination matrix.
        dsize: output ``(width, height)``.
        interpolation: ``cv2.INTER_NEAREST/LINEAR/CUBIC`` or the grid_sample name
            (``"nearest"``, ``"bilinear"``, ``"bicubic"``).
        border: ``cv2.BORDER_CONSTANT`` (value 0), ``BORDER_REPLICATE``, ``BORDER_REFLECT`` or
            ``BORDER_REFLECT_101``; see :func:`cv2_flags` for the grid_sample equivalents.

    Returns:
        (H_out, W_out, C) array of the input dtype (C as in the input; 2-D input gives C=1).
    """
    img3 = validate_image(img)
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    if isinstance(interpolation, str):
        _validate_modes(interpolation, "zeros")
        interpolation = CV2_INTERPOLATION[interpolation]
    if interpolation not in CV2_INTERPOLATION_NAMES:
        raise ValueError(f"interpolation flag {interpolation} is not INTER_NEAREST/LINEAR/CUBIC")
    if border not in CV2_BORDER_NAMES:
        raise ValueError(
            f"border flag {border} is not one of {', '.join(CV2_BORDER_NAMES.values())}"
        )
    if border in (cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101):
        _check_reflection_reach(m, img3.shape[:2], (w, h))
    src = img3 if img3.shape[2] > 1 else img3[:, :, 0]
    out = cv2.warpAffine(
        np.ascontiguousarray(src), m, (w, h), flags=interpolation, borderMode=border, borderValue=0
    )
    return out.reshape(h, w, img3.shape[2])


def _writable(arr: np.ndarray) -> np.ndarray:
    """torch.from_numpy warns on read-only arrays (e.g. cached images): copy those only."""
    if arr.flags.writeable and arr.flags.c_contiguous:
        return arr
    return np.array(arr, order="C")


def _sample_with_theta(
    img3: np.ndarray,
    theta: torch.Tensor,
    w: int,
    h: int,
    *,
    align_corners: bool,
    mode: str,
    padding_mode: str,
    dev: torch.device,
) -> np.ndarray:
    dtype = torch.float64 if img3.dtype == np.float64 else torch.float32
    x = torch.from_numpy(_writable(img3)).to(dev).permute(2, 0, 1).unsqueeze(0)
    x = x.to(dtype)
    th = theta.to(device=dev, dtype=dtype)
    with torch.no_grad():
        grid = F.affine_grid(th, [1, x.shape[1], h, w], align_corners=align_corners)
        y = F.grid_sample(
            x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        )
        y = y[0].permute(1, 2, 0)
        if img3.dtype == np.uint8:
            y = y.round().clamp(0, 255).to(torch.uint8)
    return y.cpu().numpy()


def warp_affine(
    img: np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    device: str = "cpu",
) -> np.ndarray:
    """Warp like ``cv2.warpAffine(img, M, dsize)`` with ``F.affine_grid`` + ``F.grid_sample``.

    Args:
        img: (H, W, C) or (H, W); uint8 (rounded and clipped back to uint8) or float32/float64.
        M: (2, 3) OpenCV matrix, source pixel -> destination pixel.
        dsize: output ``(width, height)``, independent of the input size.
        align_corners, mode, padding_mode: passed to affine_grid / grid_sample.
        device: torch device string, e.g. ``"cpu"`` or ``"cuda:0"``.

    Returns:
        (H_out, W_out, C) numpy array, same dtype as ``img``.

    Raises:
        ValueError: bad image, matrix, size, mode or device.
    """
    img3 = validate_image(img)
    w, h = validate_dsize(dsize)
    _validate_modes(mode, padding_mode)
    dev = _validate_device(device)
    theta = affine_to_theta(M, img3.shape[:2], (h, w), align_corners)
    return _sample_with_theta(
        img3,
        theta,
        w,
        h,
        align_corners=align_corners,
        mode=mode,
        padding_mode=padding_mode,
        dev=dev,
    )


# --------------------------------------------------------------------------------------------
# Comparison, grid, timing, snippet
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WarpErrors:
    """Absolute differences between two warps, in the image's units (grey levels for uint8).

    ``*_interior`` excludes ``border_px`` pixels on every side of the output; NaN when the
    output is too small to have an interior.
    """

    max_interior: float
    mean_interior: float
    max_whole: float
    mean_whole: float
    border_px: int = BORDER_PX


def warp_errors(a: np.ndarray, b: np.ndarray, border_px: int = BORDER_PX) -> WarpErrors:
    """Max and mean of ``|a - b|`` over the interior (``border_px`` excluded) and the whole image.

    Args:
        a, b: arrays of the same shape (H, W[, C]); compared in float64.
    """
    if a.shape != b.shape:
        raise ValueError(f"cannot compare images of shapes {a.shape} and {b.shape}")
    if border_px < 0:
        raise ValueError(f"border_px must be >= 0, got {border_px}")
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    h, w = d.shape[:2]
    inner = d[border_px : h - border_px, border_px : w - border_px]
    if inner.size:
        max_in, mean_in = float(inner.max()), float(inner.mean())
    else:
        max_in = mean_in = float("nan")
    return WarpErrors(max_in, mean_in, float(d.max()), float(d.mean()), border_px)


@dataclass(frozen=True)
class AffineMatrices:
    """The pieces of ``theta = N_src @ M^-1 @ N_dst^-1`` for display (all float64).

    Attributes:
        m: (2, 3) OpenCV matrix; m_inv: (3, 3) its inverse (destination -> source pixels).
        n_src, n_dst: (3, 3) pixel -> normalized for the source / output sizes.
        theta: (2, 3) the theta actually used (the notes' one when ``notes`` is True).
        correct_theta: (2, 3) the correct theta; formula: LaTeX of the normalization.
    """

    m: np.ndarray
    m_inv: np.ndarray
    n_src: np.ndarray
    n_dst: np.ndarray
    theta: np.ndarray
    correct_theta: np.ndarray
    align_corners: bool
    notes: bool
    formula: str


def affine_matrices(
    M: np.ndarray | Sequence[Sequence[float]],
    src_hw: Sequence[int],
    dst_hw: Sequence[int],
    align_corners: bool = False,
    *,
    notes: bool = False,
) -> AffineMatrices:
    """N_src, M^-1, N_dst and theta for the given sizes and ``align_corners``."""
    m = validate_affine(M)
    sh, sw = _validate_hw(src_hw, "the source size")
    dh, dw = _validate_hw(dst_hw, "the output size")
    correct = affine_to_theta(m, (sh, sw), (dh, dw), align_corners)[0].numpy()
    used = notes_affine2theta(m, (sh, sw), (dh, dw))[0].numpy() if notes else correct
    return AffineMatrices(
        m=m,
        m_inv=np.linalg.inv(_to3(m)),
        n_src=normalization_matrix(sw, sh, align_corners),
        n_dst=normalization_matrix(dw, dh, align_corners),
        theta=used,
        correct_theta=correct,
        align_corners=align_corners,
        notes=notes,
        formula=normalization_formula(align_corners),
    )


@dataclass(frozen=True)
class SamplingGrid:
    """A subsampled set of output pixels and where grid_sample reads them in the input.

    All arrays are (K,) float64: ``out_x, out_y`` output pixel coordinates; ``in_x, in_y``
    input pixel coordinates actually sampled (from affine_grid, unnormalized the way
    grid_sample does); ``ref_x, ref_y`` where OpenCV samples (``M^-1 @ out``).
    """

    out_x: np.ndarray
    out_y: np.ndarray
    in_x: np.ndarray
    in_y: np.ndarray
    ref_x: np.ndarray
    ref_y: np.ndarray
    step: int


def _grid_coords(n: int, step: int) -> np.ndarray:
    idx = np.arange(0, n, step)
    if idx[-1] != n - 1:
        idx = np.append(idx, n - 1)
    return idx


def sampling_grid(
    theta: torch.Tensor | np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    src_hw: Sequence[int],
    dst_hw: Sequence[int],
    align_corners: bool = False,
    max_points: int = MAX_GRID_POINTS,
) -> SamplingGrid:
    """Input coordinates sampled for a subsampled set of output pixels (corners included).

    Args:
        theta: (1, 2, 3) or (2, 3), the theta given to affine_grid.
        M: (2, 3) OpenCV matrix (for the reference positions).
        src_hw, dst_hw: (H, W) of the input and output.
        max_points: about how many output pixels to keep (a regular stride in x and y).
    """
    m = validate_affine(M)
    sh, sw = _validate_hw(src_hw, "the source size")
    dh, dw = _validate_hw(dst_hw, "the output size")
    if max_points < 4:
        raise ValueError(f"max_points must be at least 4, got {max_points}")
    step = max(1, math.ceil(math.sqrt(dh * dw / max_points)))
    xs, ys = _grid_coords(dw, step), _grid_coords(dh, step)
    return _grid_at(theta, m, (sh, sw), (dh, dw), align_corners, xs, ys, step)


def zoom_grid(
    theta: torch.Tensor | np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    src_hw: Sequence[int],
    dst_hw: Sequence[int],
    align_corners: bool = False,
    radius: int = 3,
) -> SamplingGrid:
    """Every output pixel in a (2*radius+1)^2 window, for a close-up of where samples land.

    The window is centred on the output pixel whose OpenCV sample point is closest to the
    centre of the input image, so the close-up shows image content whenever any is visible.
    """
    m = validate_affine(M)
    sh, sw = _validate_hw(src_hw, "the source size")
    dh, dw = _validate_hw(dst_hw, "the output size")
    if radius < 1:
        raise ValueError(f"radius must be at least 1, got {radius}")
    coarse = sampling_grid(theta, m, (sh, sw), (dh, dw), align_corners)
    k = int(np.argmin(np.hypot(coarse.ref_x - (sw - 1) / 2, coarse.ref_y - (sh - 1) / 2)))
    cx, cy = int(coarse.out_x[k]), int(coarse.out_y[k])
    xs = np.arange(max(0, cx - radius), min(dw, cx + radius + 1))
    ys = np.arange(max(0, cy - radius), min(dh, cy + radius + 1))
    return _grid_at(theta, m, (sh, sw), (dh, dw), align_corners, xs, ys, 1)


def _grid_at(
    theta: torch.Tensor | np.ndarray,
    m: np.ndarray,
    src_hw: tuple[int, int],
    dst_hw: tuple[int, int],
    align_corners: bool,
    xs: np.ndarray,
    ys: np.ndarray,
    step: int,
) -> SamplingGrid:
    sh, sw = src_hw
    dh, dw = dst_hw
    th = torch.as_tensor(np.asarray(theta, dtype=np.float64)).reshape(1, 2, 3)
    n_dst = normalization_matrix(dw, dh, align_corners)
    # Only the needed rows/columns of the normalized base grid, exactly as affine_grid builds it.
    base_x = torch.from_numpy(n_dst[0, 0] * xs.astype(np.float64) + n_dst[0, 2])
    base_y = torch.from_numpy(n_dst[1, 1] * ys.astype(np.float64) + n_dst[1, 2])
    gy, gx = torch.meshgrid(base_y, base_x, indexing="ij")
    norm = torch.stack([gx, gy, torch.ones_like(gx)], -1) @ th[0].T  # (len(ys), len(xs), 2)
    n_src_inv = np.linalg.inv(normalization_matrix(sw, sh, align_corners))
    in_xy = norm.numpy() @ n_src_inv[:2, :2].T + n_src_inv[:2, 2]
    oy, ox = np.meshgrid(ys.astype(np.float64), xs.astype(np.float64), indexing="ij")
    m_inv = np.linalg.inv(_to3(m))
    ref_x = m_inv[0, 0] * ox + m_inv[0, 1] * oy + m_inv[0, 2]
    ref_y = m_inv[1, 0] * ox + m_inv[1, 1] * oy + m_inv[1, 2]
    return SamplingGrid(
        out_x=ox.ravel(),
        out_y=oy.ravel(),
        in_x=in_xy[..., 0].ravel(),
        in_y=in_xy[..., 1].ravel(),
        ref_x=ref_x.ravel(),
        ref_y=ref_y.ravel(),
        step=step,
    )


def source_coordinates(
    M: np.ndarray | Sequence[Sequence[float]], dsize: Sequence[int]
) -> np.ndarray:
    """Exact (float64) source pixel coordinates OpenCV samples for every output pixel.

    Returns:
        (H_out, W_out, 2) float64 ``(x, y)`` = ``M^-1 @ (j, i, 1)``.
    """
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    m_inv = np.linalg.inv(_to3(m))
    oy, ox = np.mgrid[0:h, 0:w].astype(np.float64)
    x = m_inv[0, 0] * ox + m_inv[0, 1] * oy + m_inv[0, 2]
    y = m_inv[1, 0] * ox + m_inv[1, 1] * oy + m_inv[1, 2]
    return np.stack([x, y], -1)


def near_ties(
    M: np.ndarray | Sequence[Sequence[float]], dsize: Sequence[int], tol: float = TIE_PX
) -> np.ndarray:
    """(H_out, W_out) bool: output pixels whose source x or y is within ``tol`` px of k + 0.5.

    There nearest-neighbour rounding is a tie, and OpenCV and grid_sample (computing the
    position in float32) may pick different neighbours.
    """
    xy = source_coordinates(M, dsize)
    return (np.abs(xy - np.floor(xy) - 0.5) < tol).any(axis=-1)


@dataclass(frozen=True)
class WarpComparison:
    """Everything the page shows for one warp, computed once.

    Attributes:
        reference: (H_out, W_out, C) cv2.warpAffine result.
        warped: (H_out, W_out, C) affine_grid + grid_sample result (same dtype).
        difference: (H_out, W_out) float32, max over channels of |warped - reference|.
        errors: :class:`WarpErrors` of warped vs reference.
        matrices: :class:`AffineMatrices` (theta actually used included).
        grid: :class:`SamplingGrid` for the overlay.
        zoom: :class:`SamplingGrid` of every output pixel in a 7x7 window (the close-up).
        cv2_interpolation, cv2_border: OpenCV flag names used for the reference.
        notes: True when the notes' ``affine2theta`` was used.
        notes_shift: ``(dx, dy)`` px by which the notes' theta misplaces every sample with
            align_corners=False (see :func:`notes_shift_px`).
        grid_offset_px: mean distance (px) between grid_sample's and OpenCV's sample points.
        differing_pixels: output pixels where the two results differ in any channel.
        differing_off_ties: of those, the ones whose OpenCV sample point is NOT within
            ``TIE_PX`` of a nearest-neighbour rounding tie (x or y at k + 0.5). For ``nearest``
            with the correct theta this is 0: the libraries only disagree on how to round ties.
    """

    reference: np.ndarray
    warped: np.ndarray
    difference: np.ndarray
    errors: WarpErrors
    matrices: AffineMatrices
    grid: SamplingGrid
    zoom: SamplingGrid
    cv2_interpolation: str
    cv2_border: str
    notes: bool
    notes_shift: tuple[float, float]
    grid_offset_px: float
    differing_pixels: int
    differing_off_ties: int


def compare_warps(
    img: np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    device: str = "cpu",
    notes: bool = False,
) -> WarpComparison:
    """Warp ``img`` with both paths and measure how far apart they are.

    Args:
        img: (H, W, C) or (H, W); uint8 or float.
        M: (2, 3) OpenCV matrix. dsize: output ``(width, height)``.
        align_corners, mode, padding_mode, device: as in :func:`warp_affine`.
        notes: use the notes' :func:`notes_affine2theta` instead of :func:`affine_to_theta`.

    Raises:
        ValueError: any bad input (see :func:`warp_affine`).
    """
    img3 = validate_image(img)
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    _validate_modes(mode, padding_mode)
    dev = _validate_device(device)
    mats = affine_matrices(m, img3.shape[:2], (h, w), align_corners, notes=notes)
    theta = torch.from_numpy(mats.theta).unsqueeze(0)
    warped = _sample_with_theta(
        img3,
        theta,
        w,
        h,
        align_corners=align_corners,
        mode=mode,
        padding_mode=padding_mode,
        dev=dev,
    )
    interp, border = cv2_flags(mode, padding_mode, align_corners)
    reference = warp_affine_cv2(img3, m, (w, h), interpolation=interp, border=border)
    diff = np.abs(warped.astype(np.float64) - reference.astype(np.float64)).max(axis=2)
    grid = sampling_grid(mats.theta, m, img3.shape[:2], (h, w), align_corners)
    offset = float(np.hypot(grid.in_x - grid.ref_x, grid.in_y - grid.ref_y).mean())
    differs = (warped != reference).any(axis=2)
    # Tie test only where the results differ (cheap even for 4096 x 4096 outputs).
    iy, ix = np.nonzero(differs)
    m_inv = np.linalg.inv(_to3(m))
    sx = m_inv[0, 0] * ix + m_inv[0, 1] * iy + m_inv[0, 2]
    sy = m_inv[1, 0] * ix + m_inv[1, 1] * iy + m_inv[1, 2]
    off_ties = ~(
        (np.abs(sx - np.floor(sx) - 0.5) < TIE_PX) | (np.abs(sy - np.floor(sy) - 0.5) < TIE_PX)
    )
    return WarpComparison(
        reference=reference,
        warped=warped,
        difference=diff.astype(np.float32),
        errors=warp_errors(warped, reference),
        matrices=mats,
        grid=grid,
        zoom=zoom_grid(mats.theta, m, img3.shape[:2], (h, w), align_corners),
        cv2_interpolation=CV2_INTERPOLATION_NAMES[interp],
        cv2_border=CV2_BORDER_NAMES[border],
        notes=notes,
        notes_shift=notes_shift_px(m),
        grid_offset_px=offset,
        differing_pixels=int(differs.sum()),
        differing_off_ties=int(off_ties.sum()),
    )


@dataclass(frozen=True)
class WarpTiming:
    """Median wall-clock times in milliseconds over ``repeats`` runs (after one warm-up).

    Attributes:
        cv2_ms: cv2.warpAffine (always on the CPU).
        torch_ms: the whole torch path: numpy -> device -> affine_grid + grid_sample -> numpy.
        torch_kernel_ms: affine_grid + grid_sample only, on a tensor already on ``device``.
    """

    device: str
    repeats: int
    size: tuple[int, int]
    cv2_ms: float
    torch_ms: float
    torch_kernel_ms: float

    @property
    def ratio(self) -> float:
        """torch end-to-end time / cv2 time."""
        return self.torch_ms / self.cv2_ms if self.cv2_ms > 0 else float("inf")


def _median_ms(fn, repeats: int, sync) -> float:
    fn()  # warm-up: first call allocates, loads kernels, builds caches
    sync()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()  # GPU calls return before the kernel ends: wait for it inside the timed region
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def time_warps(
    img: np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    device: str = "cpu",
    repeats: int = 5,
) -> WarpTiming:
    """Time cv2.warpAffine and the torch path on ``device``.

    On CUDA, ``torch.cuda.synchronize()`` runs before the clock starts and before it stops.

    Raises:
        ValueError: bad input, or ``repeats`` outside 1..100.
    """
    if not 1 <= int(repeats) <= 100:
        raise ValueError(f"repeats must be between 1 and 100, got {repeats}")
    img3 = validate_image(img)
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    _validate_modes(mode, padding_mode)
    dev = _validate_device(device)
    interp, border = cv2_flags(mode, padding_mode, align_corners)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    cv2_ms = _median_ms(
        lambda: warp_affine_cv2(img3, m, (w, h), interpolation=interp, border=border),
        repeats,
        lambda: None,
    )
    torch_ms = _median_ms(
        lambda: warp_affine(
            img3,
            m,
            (w, h),
            align_corners=align_corners,
            mode=mode,
            padding_mode=padding_mode,
            device=str(dev),
        ),
        repeats,
        sync,
    )
    dtype = torch.float64 if img3.dtype == np.float64 else torch.float32
    x = torch.from_numpy(_writable(img3)).to(dev).permute(2, 0, 1)[None].to(dtype)
    theta = affine_to_theta(m, img3.shape[:2], (h, w), align_corners).to(dev, dtype)

    def kernel() -> torch.Tensor:
        with torch.no_grad():
            grid = F.affine_grid(theta, [1, x.shape[1], h, w], align_corners=align_corners)
            return F.grid_sample(
                x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners
            )

    kernel_ms = _median_ms(kernel, repeats, sync)
    return WarpTiming(str(dev), int(repeats), (w, h), cv2_ms, torch_ms, kernel_ms)


def snippet_for(
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    device: str = "cpu",
    notes: bool = False,
    image_code: str = "np.array(Image.open(Path(skimage.data.data_dir) / 'chelsea.png')"
    ".convert('RGB'))",
) -> str:
    """A self-contained script reproducing the current warp; it defines ``img``, ``out``, ``ref``.

    Args:
        M, dsize, align_corners, mode, padding_mode, device: the current settings.
        notes: reproduce the notes' (half-pixel-off) normalization instead of the correct one.
        image_code: a Python expression producing the (H, W, 3) uint8 input.

    Returns:
        Python source; ``exec`` it and compare its ``out`` with :func:`warp_affine`.
    """
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    _validate_modes(mode, padding_mode)
    interp, border = cv2_flags(mode, padding_mode, align_corners)
    rows = ",\n    ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in m)
    if notes:
        norm = (
            "def to_normalized(w, h):\n"
            "    # THE NOTES' VERSION: 2x/W - 1 matches neither grid_sample convention\n"
            "    # (half a pixel off with align_corners=False).\n"
            "    return np.array([[2 / w, 0, -1], [0, 2 / h, -1], [0, 0, 1]])\n"
        )
    else:
        norm = (
            "def to_normalized(w, h):\n"
            '    """3x3: pixel coordinates -> the [-1, 1] coordinates grid_sample reads."""\n'
            "    if align_corners:  # x_n = 2x / (W - 1) - 1\n"
            "        return np.array([[2 / (w - 1), 0, -1], [0, 2 / (h - 1), -1], [0, 0, 1]])\n"
            "    # x_n = (2x + 1) / W - 1\n"
            "    return np.array([[2 / w, 0, 1 / w - 1], [0, 2 / h, 1 / h - 1], [0, 0, 1]])\n"
        )
    return f"""from pathlib import Path

import cv2
import numpy as np
import skimage.data
import torch
import torch.nn.functional as F
from PIL import Image

img = {image_code}  # (H, W, 3) uint8: use your own image here
M = np.array([
    {rows},
])  # OpenCV: source pixel -> destination pixel
out_w, out_h = {w}, {h}  # dsize: OpenCV's output canvas; theta below is recomputed from it
align_corners = {bool(align_corners)}
device = {str(device)!r}


{norm}

# affine_grid maps OUTPUT normalized coords to INPUT normalized coords: invert M, normalize.
h, w = img.shape[:2]
M3 = np.vstack([M, [0, 0, 1]])
theta = to_normalized(w, h) @ np.linalg.inv(M3) @ np.linalg.inv(to_normalized(out_w, out_h))
theta = torch.tensor(theta[:2], dtype=torch.float32, device=device).unsqueeze(0)  # (1, 2, 3)

x = torch.from_numpy(img).to(device).permute(2, 0, 1).unsqueeze(0).float()  # (1, C, H, W)
grid = F.affine_grid(theta, [1, x.shape[1], out_h, out_w], align_corners=align_corners)
y = F.grid_sample(x, grid, mode={mode!r}, padding_mode={padding_mode!r},
                  align_corners=align_corners)
out = y[0].permute(1, 2, 0).round().clamp(0, 255).to(torch.uint8).cpu().numpy()

ref = cv2.warpAffine(img, M, (out_w, out_h), flags={CV2_INTERPOLATION_NAMES[interp]},
                     borderMode={CV2_BORDER_NAMES[border]})
diff = np.abs(out.astype(int) - ref.astype(int))[2:-2, 2:-2]  # 2 px border excluded
print(f"interior |grid_sample - cv2.warpAffine|: max {{diff.max()}}, mean {{diff.mean():.4f}}")
"""


# --------------------------------------------------------------------------------------------
# What the output size does (notes 000:18)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CanvasCheck:
    """Whether the output size acts as OpenCV's ``dsize`` canvas, measured on one warp.

    Attributes:
        dsize: the output ``(width, height)``; src_size: the input's ``(width, height)``.
        window: ``(width, height)`` of the top-left window the two sizes share.
        max_abs_vs_src_size: max ``|warp(dsize) - warp(src_size)|`` over that window (0 when
            changing the size only crops or extends the canvas).
        identity: ``M`` is the identity.
        max_abs_vs_input_crop: for the identity, max ``|warp(dsize) - img|`` over the window
            (0 when the output is the input's top-left crop); ``None`` otherwise.
    """

    dsize: tuple[int, int]
    src_size: tuple[int, int]
    window: tuple[int, int]
    max_abs_vs_src_size: float
    identity: bool
    max_abs_vs_input_crop: float | None


def canvas_check(
    img: np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    warped: np.ndarray | None = None,
) -> CanvasCheck:
    """Compare the warp at ``dsize`` with the warp at the input's own size, on the top-left
    window they share.

    Because theta is recomputed from the output size (``N_dst``), output pixel ``(x, y)`` reads
    the input at ``M^-1 (x, y)`` whatever the size, exactly like ``cv2.warpAffine``: the size
    only crops or extends the canvas. This measures it (CPU, one extra warp).

    Args:
        img: (H, W, C) or (H, W) uint8/float. M: (2, 3). dsize: ``(width, height)``.
        align_corners, mode, padding_mode: as in :func:`warp_affine`.
        warped: the warp at ``dsize`` if already computed (saves one grid_sample).

    Raises:
        ValueError: as :func:`warp_affine`, or ``warped`` of the wrong size.
    """
    img3 = validate_image(img)
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    sh, sw = img3.shape[:2]
    options = {"align_corners": align_corners, "mode": mode, "padding_mode": padding_mode}
    out = warp_affine(img3, m, (w, h), **options) if warped is None else warped
    if out.shape[:2] != (h, w):
        raise ValueError(f"warped must be the {w}x{h} output, got shape {out.shape}")
    same = warp_affine(img3, m, (sw, sh), **options) if (w, h) != (sw, sh) else out
    ww, wh = min(w, sw), min(h, sh)

    def max_abs(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.abs(a[:wh, :ww].astype(np.float64) - b[:wh, :ww].astype(np.float64)).max())

    identity = bool(np.array_equal(m, np.eye(2, 3)))
    return CanvasCheck(
        dsize=(w, h),
        src_size=(sw, sh),
        window=(ww, wh),
        max_abs_vs_src_size=max_abs(out, same),
        identity=identity,
        max_abs_vs_input_crop=max_abs(out, img3) if identity else None,
    )


def output_size_caption_parts(check: CanvasCheck, channels: int = 3) -> list[T]:
    """The sentences of :func:`output_size_caption`, each one catalog message (the page
    translates each and joins them)."""
    w, h = check.dsize
    sw, sh = check.src_size
    ww, wh = check.window
    parts = [
        T(
            "`F.affine_grid(theta, size=(1, {channels}, {h}, {w}))`: **size is the output "
            "grid's resolution**, {h}×{w} sample points. Because theta is recomputed from this "
            "size (N_dst in θ = N_src·M⁻¹·N_dst⁻¹), output pixel (x, y) still reads the input at "
            "M⁻¹·(x, y), exactly where cv2.warpAffine reads it: the output size works as "
            "OpenCV's `dsize = (width, height)`, a canvas over the destination plane. Shrinking "
            "keeps its top-left window, enlarging adds room on the right and at the bottom; how "
            "densely the input is sampled is set by M alone.",
            channels=channels,
            h=h,
            w=w,
        )
    ]
    if check.dsize != check.src_size:
        shrunk = (w, h) == (ww, wh)
        exact = check.max_abs_vs_src_size == 0
        values = {"w": w, "h": h, "ww": ww, "wh": wh, "sw": sw, "sh": sh}
        if shrunk and exact:
            parts.append(
                T(
                    "Checked now: this {w}×{h} output is exactly the top-left {w}×{h} window "
                    "of the warp at the input's size {sw}×{sh}.",
                    **values,
                )
            )
        elif shrunk:
            parts.append(
                T(
                    "Checked now: this {w}×{h} output is within {diff:.3g} (float32 rounding "
                    "of the sample positions) of the top-left {w}×{h} window of the warp at "
                    "the input's size {sw}×{sh}.",
                    diff=check.max_abs_vs_src_size,
                    **values,
                )
            )
        elif exact:
            parts.append(
                T(
                    "Checked now: the top-left {ww}×{wh} window of this {w}×{h} output is "
                    "exactly the same window of the warp at the input's size {sw}×{sh}.",
                    **values,
                )
            )
        else:
            parts.append(
                T(
                    "Checked now: the top-left {ww}×{wh} window of this {w}×{h} output is "
                    "within {diff:.3g} (float32 rounding of the sample positions) of the same "
                    "window of the warp at the input's size {sw}×{sh}.",
                    diff=check.max_abs_vs_src_size,
                    **values,
                )
            )
        crop = check.max_abs_vs_input_crop
        if crop is not None:
            if crop == 0 and shrunk:
                template = N_(
                    "With the identity M, that window is exactly the input's top-left crop "
                    "`img[:{wh}, :{ww}]`, not a resampled copy of the whole image."
                )
            elif crop == 0:
                template = N_(
                    "With the identity M, that window is exactly the input's top-left crop "
                    "`img[:{wh}, :{ww}]`."
                )
            elif shrunk:
                template = N_(
                    "With the identity M, that window is within {crop:.3g} of the input's "
                    "top-left crop `img[:{wh}, :{ww}]`, not a resampled copy of the whole image."
                )
            else:
                template = N_(
                    "With the identity M, that window is within {crop:.3g} of the input's "
                    "top-left crop `img[:{wh}, :{ww}]`."
                )
            parts.append(T(template, crop=crop, wh=wh, ww=ww))
    return parts


def output_size_caption(check: CanvasCheck, channels: int = 3) -> str:
    """The warp page's caption on the output size, with the live numbers of ``check``."""
    return " ".join(output_size_caption_parts(check, channels))


AFFINE_GRID_SIZE_CODE = """import torch
import torch.nn.functional as F

img = torch.arange(64.0).reshape(1, 1, 8, 8)  # an 8x8 image, pixel value = 8 * y + x


def to_normalized(w, h):  # pixel -> grid_sample coordinates, align_corners=False
    return torch.tensor([[2 / w, 0, 1 / w - 1], [0, 2 / h, 1 / h - 1], [0, 0, 1.0]])


def sample(theta, h, w):  # affine_grid with size (1, 1, h, w), then grid_sample
    grid = F.affine_grid(theta, [1, 1, h, w], align_corners=False)
    return F.grid_sample(img, grid, align_corners=False)[0, 0]


fixed = torch.tensor([[[1.0, 0, 0], [0, 1.0, 0]]])  # one theta for every size
print("fixed theta, size 4x4, row 0:", sample(fixed, 4, 4)[0].tolist())
# theta = N_src M^-1 N_dst^-1 with M = identity, recomputed for the 4x4 output
theta = (to_normalized(8, 8) @ torch.linalg.inv(to_normalized(4, 4)))[:2].unsqueeze(0)
small = sample(theta, 4, 4)
print("theta from the output size, row 0:", small[0].tolist())
crop_diff = (small - img[0, 0, :4, :4]).abs().max().item()
print("max |difference| from the crop img[:4, :4]:", crop_diff)
# the notes' shrink branch: a grid at the input's size, then dst[:, :, :H2, :W2]
branch_diff = (sample(fixed, 8, 8)[:4, :4] - small).abs().max().item()
print("max |difference| of the notes' full-size-then-crop:", branch_diff)
"""


def _printed(output: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)


# The callout's "today" for each outcome of the live check: whole sentences, one catalog
# message each, filled with the run's numbers (``today_args``).
_TODAY = {
    (True, True): N_(
        "With one fixed theta, affine_grid's size only sets how many points cover the "
        "same [-1, 1] square: a 4x4 grid resamples the whole 8x8 image, row 0 reads "
        "{fixed_row} (blends of pixels across the full width). So the notes are right "
        "about affine_grid alone. But a theta recomputed from the output size, as this "
        "app's affine_to_theta and the notes' own affine2theta(M, in_size, out_size) do, "
        "makes the size act exactly as OpenCV's dsize: "
        "the 4x4 output IS the top-left crop img[:4, :4]. The notes' 'keep resolution when "
        "shrinking' branch (a full-size grid, then dst[:, :, :H2, :W2]) therefore gives "
        "the same pixels at the cost of a full-size grid; it is not needed."
    ),
    (True, False): N_(
        "With one fixed theta, affine_grid's size only sets how many points cover the "
        "same [-1, 1] square: a 4x4 grid resamples the whole 8x8 image, row 0 reads "
        "{fixed_row} (blends of pixels across the full width). So the notes are right "
        "about affine_grid alone. But a theta recomputed from the output size, as this "
        "app's affine_to_theta and the notes' own affine2theta(M, in_size, out_size) do, "
        "makes the size act exactly as OpenCV's dsize: "
        "the 4x4 output IS the top-left crop img[:4, :4]. The notes' 'keep resolution when "
        "shrinking' branch (a full-size grid, then dst[:, :, :H2, :W2]) therefore gives "
        "pixels within {branch_diff} at the cost of a full-size grid; it is not needed."
    ),
    (False, True): N_(
        "With one fixed theta, affine_grid's size only sets how many points cover the "
        "same [-1, 1] square: a 4x4 grid resamples the whole 8x8 image, row 0 reads "
        "{fixed_row} (blends of pixels across the full width). So the notes are right "
        "about affine_grid alone. But a theta recomputed from the output size, as this "
        "app's affine_to_theta and the notes' own affine2theta(M, in_size, out_size) do, "
        "makes the size act exactly as OpenCV's dsize: "
        "the 4x4 output is within {crop_diff} of the crop img[:4, :4]. The notes' 'keep "
        "resolution when shrinking' branch (a full-size grid, then dst[:, :, :H2, :W2]) "
        "therefore gives the same pixels at the cost of a full-size grid; it is not needed."
    ),
    (False, False): N_(
        "With one fixed theta, affine_grid's size only sets how many points cover the "
        "same [-1, 1] square: a 4x4 grid resamples the whole 8x8 image, row 0 reads "
        "{fixed_row} (blends of pixels across the full width). So the notes are right "
        "about affine_grid alone. But a theta recomputed from the output size, as this "
        "app's affine_to_theta and the notes' own affine2theta(M, in_size, out_size) do, "
        "makes the size act exactly as OpenCV's dsize: "
        "the 4x4 output is within {crop_diff} of the crop img[:4, :4]. The notes' 'keep "
        "resolution when shrinking' branch (a full-size grid, then dst[:, :, :H2, :W2]) "
        "therefore gives pixels within {branch_diff} at the cost of a full-size grid; it is "
        "not needed."
    ),
}


def _affine_grid_size_callout() -> NotesCallout:
    run = run_live(AFFINE_GRID_SIZE_CODE)
    lines = _printed(run.output)
    try:
        fixed_row = lines["fixed theta, size 4x4, row 0"]
        crop_diff = float(lines["max |difference| from the crop img[:4, :4]"])
        branch_diff = float(lines["max |difference| of the notes' full-size-then-crop"])
    except (KeyError, ValueError):
        today = N_("The check did not run as expected: {output}.")
        today_args = (("output", repr(run.error or run.output)),)
    else:
        today = _TODAY[(crop_diff == 0, branch_diff == 0)]
        today_args = (
            ("fixed_row", fixed_row),
            ("crop_diff", f"{crop_diff:g}"),
            ("branch_diff", f"{branch_diff:g}"),
        )
    return NotesCallout(
        key="affine_grid_size_vs_dsize",
        title=N_("affine_grid's size vs OpenCV's dsize"),
        ref=NotesRef.parse("000:18"),
        quote_zh="size 代表的是输出网格的分辨率而非 OpenCV 的从输出空间中截取的区域大小 dsize",
        gloss_en="size is the resolution of the output grid, not OpenCV's dsize, the size of "
        "the region cut out of the output space.",
        verdict="incomplete",
        today=today,
        today_args=today_args,
        run=run,
    )


def notes_callouts() -> list[NotesCallout]:
    """Where the notes' warp lesson is incomplete, checked live."""
    return [_affine_grid_size_callout()]
