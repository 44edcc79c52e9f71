"""What the warp lesson accepts, and the checks that say why an input is refused.

Every check raises a ``ValueError`` whose message names the bad value and is written for a
person (the page shows it as it is, translated): matrices (:func:`validate_affine`), images
(:func:`validate_image`), sizes (:func:`validate_hw`, :func:`validate_dsize`), sampling modes,
devices, and reflection padding that would read too far outside the image.

Nothing here imports Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from core.text import N_, T

INTERPOLATIONS: tuple[str, ...] = ("bilinear", "nearest", "bicubic")
PADDING_MODES: tuple[str, ...] = ("zeros", "border", "reflection")
#: Largest output side. The lesson (half a pixel of offset, what dsize crops or extends) reads
#: the same on a 600 px output as on a huge one, and the figure shows ~600 px anyway; 2048 is
#: the largest side an input image has (core.images.DEFAULT_MAX_SIDE), so "Same as input"
#: always fits. A 4096 x 4096 view cost 10-16 CPU-s and a 2 GB peak on a 2-core server.
MAX_OUTPUT_SIDE = 2048
MIN_SIDE = 2  # align_corners=True divides by (W - 1); a 1-pixel side has no extent to map
# cv2.warpAffine's BORDER_REFLECT* folds an out-of-range coordinate back one image length per
# step, so its time grows with how far outside the image it samples (measured: 451x300 output,
# 1000 image widths away: 0.4 s; 10^7 px away: minutes). Reflection reads further than this
# many source widths/heights outside the image are refused.
MAX_REFLECTION_REACH = 100


def homogeneous(m: np.ndarray) -> np.ndarray:
    """A (2, 3) affine matrix as its (3, 3) homogeneous form (last row ``[0, 0, 1]``)."""
    return np.vstack([m, [0.0, 0.0, 1.0]])


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


# The sizes validate_hw checks, each with its own sentence (a translation needs the whole).
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


def validate_hw(hw: Sequence[int], what: str) -> tuple[int, int]:
    """Check a size ``(height, width)`` of at least :data:`MIN_SIDE` on each side; ``what``
    names it in the message ("the image", "the output size").

    Raises:
        ValueError: not two integers, or a side below :data:`MIN_SIDE` pixels.
    """
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
    validate_hw(img.shape[:2], "the image")
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
    sh, sw = validate_hw(src_hw, "the source size")
    w, h = validate_dsize(dsize)
    corners = np.array([[0, 0, 1], [w - 1, 0, 1], [0, h - 1, 1], [w - 1, h - 1, 1]], np.float64)
    x, y = (corners @ np.linalg.inv(homogeneous(m))[:2].T).T
    out_x = np.maximum(-x, x - (sw - 1)).max() / sw
    out_y = np.maximum(-y, y - (sh - 1)).max() / sh
    return float(max(out_x, out_y, 0.0))


def check_reflection_reach(m: np.ndarray, src_hw: Sequence[int], dsize: Sequence[int]) -> None:
    """Refuse reflection padding that reads over :data:`MAX_REFLECTION_REACH` image sizes away.

    Args:
        m: (2, 3) matrix. src_hw: the input's ``(H, W)``. dsize: the output ``(width, height)``.

    Raises:
        ValueError: the output samples further outside the input than the limit.
    """
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


def validate_modes(mode: str, padding_mode: str) -> None:
    """Check grid_sample's ``mode`` and ``padding_mode`` against :data:`INTERPOLATIONS` and
    :data:`PADDING_MODES`.

    Raises:
        ValueError: either is not one of the lesson's choices.
    """
    if mode not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {mode!r}")
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"padding must be one of {', '.join(PADDING_MODES)}, got {padding_mode!r}")


def validate_device(device: str) -> torch.device:
    """The ``torch.device`` of ``"cpu"`` or an existing ``"cuda:N"``.

    Raises:
        ValueError: an unknown name, CUDA without a GPU, a GPU index that does not exist, or
            another device type.
    """
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


def is_grayscale(img: np.ndarray) -> bool:
    """True for (H, W), (H, W, 1), or colour images whose channels are all equal."""
    if img.ndim == 2 or img.shape[-1] == 1:
        return True
    return bool((img[..., :3] == img[..., :1]).all())
