"""Where grid_sample reads the input for each output pixel, next to where OpenCV reads it.

The page draws these points over the input (a sampling grid thinned to about
:data:`MAX_GRID_POINTS` pixels, and a close-up of neighbouring pixels): with the correct theta
each grid_sample point sits on OpenCV's; with the notes' theta all of them are off by the same
half-pixel shift.

Nothing here imports Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from lessons.warp.theta import normalization_matrix
from lessons.warp.validation import homogeneous, validate_affine, validate_dsize, validate_hw

MAX_GRID_POINTS = 625  # sampling-grid markers drawn by the page (25 x 25)


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
    sh, sw = validate_hw(src_hw, "the source size")
    dh, dw = validate_hw(dst_hw, "the output size")
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
    sh, sw = validate_hw(src_hw, "the source size")
    dh, dw = validate_hw(dst_hw, "the output size")
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
    m_inv = np.linalg.inv(homogeneous(m))
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
    m_inv = np.linalg.inv(homogeneous(m))
    oy, ox = np.mgrid[0:h, 0:w].astype(np.float64)
    x = m_inv[0, 0] * ox + m_inv[0, 1] * oy + m_inv[0, 2]
    y = m_inv[1, 0] * ox + m_inv[1, 1] * oy + m_inv[1, 2]
    return np.stack([x, y], -1)
