"""From OpenCV's affine matrix ``M`` to the ``theta`` of ``F.affine_grid``, and back.

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

The notes' ``affine2theta`` normalizes with ``x_n = 2x / W - 1`` instead
(:func:`notes_affine2theta`); :func:`theta_to_affine` reads any theta back as the OpenCV matrix
it really applies, which shows what that costs.

Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from lessons.warp.validation import homogeneous, validate_affine, validate_hw


def normalization_matrix(width: int, height: int, align_corners: bool = False) -> np.ndarray:
    """The 3x3 matrix N taking pixel coordinates to grid_sample's normalized coordinates.

    ``align_corners=False``: ``x_n = (2x + 1)/W - 1``;
    ``align_corners=True``: ``x_n = 2x/(W-1) - 1``.

    Returns:
        (3, 3) float64.

    >>> normalization_matrix(4, 2) @ [0, 0, 1]
    array([-0.75, -0.5 ,  1.  ])
    """
    h, w = validate_hw((height, width), "the size")
    if align_corners:
        return np.array([[2 / (w - 1), 0, -1], [0, 2 / (h - 1), -1], [0, 0, 1]], dtype=np.float64)
    return np.array([[2 / w, 0, 1 / w - 1], [0, 2 / h, 1 / h - 1], [0, 0, 1]], dtype=np.float64)


def normalization_formula(align_corners: bool) -> str:
    """LaTeX for the pixel -> normalized formula of the given ``align_corners``."""
    if align_corners:
        return r"x_n = \frac{2x}{W-1} - 1,\qquad y_n = \frac{2y}{H-1} - 1"
    return r"x_n = \frac{2x + 1}{W} - 1,\qquad y_n = \frac{2y + 1}{H} - 1"


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
    sh, sw = validate_hw(src_hw, "the source size")
    dh, dw = validate_hw(dst_hw, "the output size")
    n_src = normalization_matrix(sw, sh, align_corners)
    n_dst = normalization_matrix(dw, dh, align_corners)
    theta = n_src @ np.linalg.inv(homogeneous(m)) @ np.linalg.inv(n_dst)
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
    sh, sw = validate_hw(src_hw, "the source size")
    dh, dw = validate_hw(dst_hw, "the output size")
    n_src = normalization_matrix(sw, sh, align_corners)
    n_dst = normalization_matrix(dw, dh, align_corners)
    m_inv = np.linalg.inv(n_src) @ homogeneous(t) @ n_dst
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
    ih, iw = validate_hw(in_size, "the source size")
    oh, ow = validate_hw(out_size, "the output size")

    def notes_n(w: int, h: int) -> np.ndarray:
        return np.array([[2.0 / w, 0, -1.0], [0, 2.0 / h, -1.0], [0, 0, 1.0]])

    theta = np.linalg.inv(notes_n(ow, oh) @ homogeneous(m) @ np.linalg.inv(notes_n(iw, ih)))
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


@dataclass(frozen=True)
class AffineMatrices:
    """The pieces of ``theta = N_src @ M^-1 @ N_dst^-1`` for display (all float64).

    Attributes:
        m: (2, 3) OpenCV matrix; m_inv: (3, 3) its inverse (destination -> source pixels).
        n_src, n_dst: (3, 3) pixel -> normalized for the source / output sizes.
        theta: (2, 3) the theta actually used (the notes' one when ``notes`` is True).
        correct_theta: (2, 3) the correct theta; formula: LaTeX of the normalization.
        applied_m: (2, 3) the OpenCV matrix ``theta`` really applies, read back with
            :func:`theta_to_affine`: ``m`` itself for the correct theta. For the notes' theta
            with ``align_corners=False`` it keeps m's 2x2 part ``A`` and moves its translation
            by ``A (1/2, 1/2) - (1/2, 1/2)`` (destination pixels); with ``align_corners=True``
            it is ``S_dst M S_src^-1`` with ``S = diag((W - 1) / W, (H - 1) / H)``, a
            rescaling about the top-left pixel.
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
    applied_m: np.ndarray


def affine_matrices(
    M: np.ndarray | Sequence[Sequence[float]],
    src_hw: Sequence[int],
    dst_hw: Sequence[int],
    align_corners: bool = False,
    *,
    notes: bool = False,
) -> AffineMatrices:
    """N_src, M^-1, N_dst and theta for the given sizes and ``align_corners``.

    Args:
        M: (2, 3) OpenCV matrix. src_hw, dst_hw: ``(H, W)`` of the input and the output.
        notes: theta from the notes' :func:`notes_affine2theta` instead of
            :func:`affine_to_theta` (the correct one is returned too).

    Raises:
        ValueError: ``M`` singular or not finite, or a size below 2x2.
    """
    m = validate_affine(M)
    sh, sw = validate_hw(src_hw, "the source size")
    dh, dw = validate_hw(dst_hw, "the output size")
    correct = affine_to_theta(m, (sh, sw), (dh, dw), align_corners)[0].numpy()
    used = notes_affine2theta(m, (sh, sw), (dh, dw))[0].numpy() if notes else correct
    return AffineMatrices(
        m=m,
        m_inv=np.linalg.inv(homogeneous(m)),
        n_src=normalization_matrix(sw, sh, align_corners),
        n_dst=normalization_matrix(dw, dh, align_corners),
        theta=used,
        correct_theta=correct,
        align_corners=align_corners,
        notes=notes,
        formula=normalization_formula(align_corners),
        applied_m=theta_to_affine(used, (sh, sw), (dh, dw), align_corners) if notes else m,
    )


def matrix_latex(m: np.ndarray, digits: int = 4) -> str:
    """A LaTeX ``bmatrix`` of ``m`` (2-D), numbers shown with ``digits`` significant digits."""
    rows = [" & ".join(f"{float(v):.{digits}g}" for v in row) for row in np.atleast_2d(m)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def matrix_markdown(name: str, value: np.ndarray) -> str:
    """``name = [matrix]`` as inline maths in display style (no scroll region around it)."""
    return f"$\\displaystyle {name} = {matrix_latex(value)}$"
