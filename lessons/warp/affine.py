"""OpenCV's affine ``M`` warped two ways, ``F.affine_grid`` + ``F.grid_sample`` and
``cv2.warpAffine``, and compared: the computation behind the page's picture.

``theta`` comes from :func:`lessons.warp.theta.affine_to_theta` (the conventions are in that
module). Flag mapping between the two paths (measured, see
``tests/lessons/warp/test_affine.py``):

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

The notes' one claim about this lesson that needs a caveat (affine_grid's ``size`` is not
OpenCV's ``dsize``) is checked live here too (:func:`notes_callouts`).

Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from core.notes import NotesCallout, NotesRef, run_live
from core.text import N_
from lessons.warp.sampling import SamplingGrid, sampling_grid, zoom_grid
from lessons.warp.theta import AffineMatrices, affine_matrices, affine_to_theta, notes_shift_px
from lessons.warp.validation import (
    check_reflection_reach,
    homogeneous,
    validate_affine,
    validate_device,
    validate_dsize,
    validate_image,
    validate_modes,
)

BORDER_PX = 2  # pixels excluded on every side for the "interior" error
TIE_PX = 1e-3  # nearest: a sample this close to k + 0.5 is a rounding tie

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
# The two warps
# --------------------------------------------------------------------------------------------


def cv2_flags(mode: str, padding_mode: str, align_corners: bool) -> tuple[int, int]:
    """The ``(interpolation, borderMode)`` flags of cv2.warpAffine matching grid_sample's modes.

    ``reflection`` is ``BORDER_REFLECT`` with ``align_corners=False`` and ``BORDER_REFLECT_101``
    with ``align_corners=True`` (measured: the other pairing differs by up to 8 grey levels).
    """
    validate_modes(mode, padding_mode)
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
        validate_modes(interpolation, "zeros")
        interpolation = CV2_INTERPOLATION[interpolation]
    if interpolation not in CV2_INTERPOLATION_NAMES:
        raise ValueError(f"interpolation flag {interpolation} is not INTER_NEAREST/LINEAR/CUBIC")
    if border not in CV2_BORDER_NAMES:
        raise ValueError(
            f"border flag {border} is not one of {', '.join(CV2_BORDER_NAMES.values())}"
        )
    if border in (cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101):
        check_reflection_reach(m, img3.shape[:2], (w, h))
    src = img3 if img3.shape[2] > 1 else img3[:, :, 0]
    out = cv2.warpAffine(
        np.ascontiguousarray(src), m, (w, h), flags=interpolation, borderMode=border, borderValue=0
    )
    return out.reshape(h, w, img3.shape[2])


def writable(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself, or a C-contiguous copy when it is read-only or not contiguous:
    torch.from_numpy warns on read-only arrays (e.g. cached images)."""
    if arr.flags.writeable and arr.flags.c_contiguous:
        return arr
    return np.array(arr, order="C")


def sample_with_theta(
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
    """``F.affine_grid`` + ``F.grid_sample`` of an image with a given ``theta``, on ``dev``.

    Args:
        img3: (H, W, C) uint8 or float, already validated. theta: (1, 2, 3).
        w, h: the output size. align_corners, mode, padding_mode: as in :func:`warp_affine`.

    Returns:
        (h, w, C) numpy array of the input dtype (uint8 rounded and clipped).
    """
    dtype = torch.float64 if img3.dtype == np.float64 else torch.float32
    x = torch.from_numpy(writable(img3)).to(dev).permute(2, 0, 1).unsqueeze(0)
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
    validate_modes(mode, padding_mode)
    dev = validate_device(device)
    theta = affine_to_theta(M, img3.shape[:2], (h, w), align_corners)
    return sample_with_theta(
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
# The two warps compared
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
class WarpCase:
    """One call of :func:`compare_warps` in a few hashable fields, the image named by its digest:
    the page's key for a comparison and its figures, so fifty students on the same sample and
    settings share one set (the pixels travel beside the key, unhashed).

    Build it with :meth:`of`.
    """

    image_digest: str
    matrix: tuple[tuple[float, ...], ...]
    dsize: tuple[int, int]
    align_corners: bool
    mode: str
    padding_mode: str
    device: str
    notes: bool

    @classmethod
    def of(
        cls,
        image_digest: str,
        M: np.ndarray | Sequence[Sequence[float]],
        dsize: tuple[int, int],
        *,
        align_corners: bool,
        mode: str,
        padding_mode: str,
        device: str,
        notes: bool,
    ) -> WarpCase:
        """The case of an image (by its digest), a (2, 3) ``M`` and the settings, as given."""
        rows = tuple(tuple(float(v) for v in row) for row in np.asarray(M, dtype=np.float64))
        return cls(image_digest, rows, dsize, align_corners, mode, padding_mode, device, notes)

    @property
    def affine(self) -> np.ndarray:
        """The (2, 3) float64 matrix M."""
        return np.array(self.matrix, dtype=np.float64)

    @property
    def sampling(self) -> dict[str, bool | str]:
        """``align_corners``, ``mode`` and ``padding_mode``, as keyword arguments."""
        return {"align_corners": self.align_corners, "mode": self.mode,
                "padding_mode": self.padding_mode}  # fmt: skip

    @property
    def profile_row(self) -> int:
        """The output row the profile chart draws: the middle one."""
        return self.dsize[1] // 2


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
    validate_modes(mode, padding_mode)
    dev = validate_device(device)
    mats = affine_matrices(m, img3.shape[:2], (h, w), align_corners, notes=notes)
    theta = torch.from_numpy(mats.theta).unsqueeze(0)
    warped = sample_with_theta(
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
    m_inv = np.linalg.inv(homogeneous(m))
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


# --------------------------------------------------------------------------------------------
# affine_grid's size vs OpenCV's dsize: the notes checked live (notes 000:18)
# --------------------------------------------------------------------------------------------


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
