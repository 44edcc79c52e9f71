"""Filling NaN holes in optical flow with multi-scale masked box means (the notes' method, fast).

The method (from the project notes): for every channel separately, and for every odd window size
``k`` in ``3, 5, 9, 17, 33, ...`` (``2**j + 1`` up to ``max_window``), take the zero-padded masked
box mean ``sum(box(x * valid)) / sum(box(valid))``; average those means over the scales whose window
holds at least one valid sample; replace only the NaN values. A hole with no valid sample inside the
largest window stays NaN and is counted in :attr:`FillResult.unfilled`.

Three implementations of the same definition live here:

* :func:`notes_gradual_mean_torch` -- **the reference**: the method of the notes' ``F.avg_pool2d``
  version (``count_include_pad=True``, stride 1, padding ``k // 2``), slow on a CPU; its
  docstring lists where it differs from the notes' code as printed.
* :func:`loop_reference` -- a plain per-pixel Python loop, for tests on tiny inputs.

And one that is *not* the same definition: :func:`notes_gradual_mean_numpy`, the notes' first,
per-pixel NumPy ``gradual_mean`` (000:79), reproduced bit for bit with its quirks (windows 32, 16,
8, 4, 2 that are not centred, a zero border, an early break that leaves holes NaN, in-place
sequential filling). It is far less accurate on smooth fields; the page shows by how much.
* :func:`gradual_mean_fill` -- the fast one, with an OpenCV backend (``cv2.boxFilter``) and a torch
  backend (CPU or CUDA, summed-area table gathered only at the holes).

Everything else here feeds the Flow page: synthetic fields with ground truth, Farneback flow from
image pairs, hole masks, ``.flo`` / ``.npy`` loading, the usual alternatives (``cv2.inpaint``,
nearest-valid fill), endpoint-error metrics, timing and the code snippet.
"""

from __future__ import annotations

import io
import math
import os
import platform
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from core.images import decode_image as decode_rgb
from core.images import read_image_size
from core.notes import NotesCallout, NotesRef, run_live
from core.text import N_, T

__all__ = [
    "BACKENDS",
    "FLO_MAGIC",
    "MASK_KINDS",
    "MAX_SIDE",
    "METHODS",
    "METHOD_CV2",
    "METHOD_TORCH",
    "NOTES_REFERENCE_DEFAULT_MAX_PIXELS",
    "NOTES_REFERENCE_MS_PER_UNIT",
    "OTHER_METHODS",
    "WINDOWED_METHODS",
    "NOTES_CLAIM_MS",
    "NOTES_GRADUAL_MEAN_PYTORCH",
    "NOTES_NUMPY_MAX_HOLES",
    "NOTES_NUMPY_METHOD",
    "NOTES_TORCH_METHOD",
    "SOURCES",
    "SYNTHETIC_FIELDS",
    "Comparison",
    "FillResult",
    "FlowCase",
    "FlowSpec",
    "MethodResult",
    "apply_holes",
    "build_flow",
    "case_from_flow",
    "case_from_images",
    "check_fillable",
    "combine_methods",
    "compare_methods",
    "decode_image",
    "device_label",
    "endpoint_error",
    "epe_stats",
    "estimate_notes_ms",
    "farneback_flow",
    "flow_to_rgb",
    "fb_consistency_mask",
    "gradual_mean_fill",
    "inpaint_fill",
    "load_flo",
    "load_flow_file",
    "load_npy",
    "loop_reference",
    "make_hole_mask",
    "nearest_fill",
    "notes_callouts",
    "notes_gradual_mean_numpy",
    "notes_gradual_mean_torch",
    "notes_numpy_snippet_for",
    "notes_reference_on_by_default",
    "notes_reference_work",
    "notes_speed_claim",
    "notes_window_sizes",
    "run_method",
    "save_flo",
    "scale_means",
    "snippet_for",
    "synthetic_flow",
    "window_sizes",
]

Backend = Literal["auto", "cv2", "torch"]
BACKENDS: tuple[str, ...] = ("auto", "cv2", "torch")
FLO_MAGIC = 202021.25
FLO_UNKNOWN = 1e9  # Middlebury marks unknown flow with values above 1e9; we turn them into NaN
MAX_SIDE = 2048  # size cap for images and flow files (pixels per side)
SYNTHETIC_FIELDS: tuple[str, ...] = (
    "translation",
    "rotation",
    "zoom",
    "shear",
    "vortex",
    "piecewise",
)
MASK_KINDS: tuple[str, ...] = ("random", "blobs", "stripes", "border", "fb")
SOURCES: tuple[str, ...] = ("synthetic", "stereo", "affine")
#: A synthetic case's description, per field (one catalog message each).
SYNTHETIC_DESCRIPTIONS: dict[str, str] = {
    "translation": N_("synthetic translation"),
    "rotation": N_("synthetic rotation"),
    "zoom": N_("synthetic zoom"),
    "shear": N_("synthetic shear"),
    "vortex": N_("synthetic vortex"),
    "piecewise": N_("synthetic piecewise"),
}
#: The notes' NumPy loop costs a few hundred microseconds per hole pixel on a small CPU.
NOTES_NUMPY_MAX_HOLES = 25_000
NOTES_NUMPY_METHOD = N_("notes' NumPy loop (000:79)")
NOTES_TORCH_METHOD = N_("notes' avg_pool2d (reference)")


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def window_sizes(max_window: int) -> tuple[int, ...]:
    """The odd window sizes ``3, 5, 9, 17, ...`` (``2**j + 1``) up to and including ``max_window``.

    Raises:
        ValueError: if ``max_window`` is not an integer of the form ``2**k + 1`` with ``k >= 1``.
            Non-conforming values are rejected, never rounded, so a page or a script can't
            silently run a different experiment from the one it asked for.

    >>> window_sizes(33)
    (3, 5, 9, 17, 33)
    """
    if isinstance(max_window, bool) or not isinstance(max_window, (int, np.integer)):
        raise ValueError(
            f"max_window must be an integer 2**k + 1 (3, 5, 9, 17, 33, ...), got {max_window!r}"
        )
    m = int(max_window)
    if m < 3 or (m - 1) & (m - 2) != 0:
        raise ValueError(f"max_window must be 2**k + 1 (3, 5, 9, 17, 33, 65, 129, ...), got {m}")
    if m > 4097:
        raise ValueError(f"max_window must be at most 4097, got {m}")
    return tuple(2**j + 1 for j in range(1, int(math.log2(m - 1)) + 1))


def _as_numpy_hwc(flow: np.ndarray | torch.Tensor, name: str = "flow") -> np.ndarray:
    """Validate an (H, W, C) float array or tensor; return it as a NumPy array (no copy if
    possible)."""
    if isinstance(flow, torch.Tensor):
        if not flow.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got dtype {flow.dtype}")
        arr = flow.detach().to("cpu", torch.float32).numpy()
    elif isinstance(flow, np.ndarray):
        arr = flow
    else:
        raise ValueError(
            f"{name} must be a NumPy array or a torch tensor, got {type(flow).__name__}"
        )
    _check_hwc(arr.shape, arr.dtype, name)
    return arr


def _validate_flow(flow: np.ndarray | torch.Tensor) -> None:
    """Shape/dtype/finiteness checks shared by the fill functions (no device copies)."""
    if isinstance(flow, torch.Tensor):
        _check_hwc(tuple(flow.shape), None, "flow")
        if not flow.is_floating_point():
            raise ValueError(f"flow must be a floating-point tensor, got dtype {flow.dtype}")
        if bool(torch.isinf(flow).any()):
            raise ValueError("flow contains infinite values; only NaN may mark a hole")
    else:
        arr = _as_numpy_hwc(flow)
        if np.isinf(arr).any():
            raise ValueError("flow contains infinite values; only NaN may mark a hole")


def _check_hwc(shape: tuple[int, ...], dtype: object, name: str) -> None:
    if len(shape) != 3:
        raise ValueError(
            f"{name} must have shape (H, W, C), e.g. (240, 320, 2) for u/v flow, got shape "
            f"{tuple(shape)}"
        )
    h, w, c = shape
    if h < 1 or w < 1 or c < 1:
        raise ValueError(f"{name} must not be empty, got shape {tuple(shape)}")
    if isinstance(dtype, np.dtype) and not np.issubdtype(dtype, np.floating):
        raise ValueError(f"{name} must hold floats (NaN marks a hole), got dtype {dtype}")


# --------------------------------------------------------------------------------------------
# result type
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FillResult:
    """What :func:`gradual_mean_fill` returns.

    Attributes:
        filled: the filled flow, same type (ndarray/tensor), layout (H, W, C), dtype and device
            as the input. Only NaN values were replaced.
        scales_used: (H, W, C) uint8 -- for each hole value, how many window sizes had at least
            one valid sample (0 for valid values and for holes left unfilled).
        unfilled: number of hole *values* (pixel x channel) still NaN because no valid sample lies
            within the largest window.
        holes: number of NaN values in the input.
        windows: the window sizes used, e.g. ``(3, 5, 9, 17, 33)``.
        backend: the backend that ran (``"cv2"`` or ``"torch"``).
        device: where it ran (``"cpu"`` or ``"cuda:N"``).
    """

    filled: np.ndarray | torch.Tensor
    scales_used: np.ndarray
    unfilled: int
    holes: int
    windows: tuple[int, ...]
    backend: str
    device: str


# --------------------------------------------------------------------------------------------
# the reference: the notes' avg_pool2d version, and a per-pixel loop
# --------------------------------------------------------------------------------------------


def notes_gradual_mean_torch(
    flow: np.ndarray | torch.Tensor,
    max_window: int = 33,
    *,
    device: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray | torch.Tensor:
    """REFERENCE: the method of the notes' vectorised ``gradual_mean_pytorch`` (000:80).

    Per channel: ``x0 = where(valid, x, 0)``; for each window ``k`` in :func:`window_sizes`,
    ``num = avg_pool2d(x0 * valid, k, 1, k // 2, count_include_pad=True)`` and
    ``den = avg_pool2d(valid, ...)``; the scale's mean is ``num / den`` where ``den > 0``.
    The means are averaged over the contributing scales and written into the NaN values only.
    ``avg_pool2d`` costs ``k**2`` per pixel, so this is slow on a CPU (seconds at 1080p).

    On a single finite (1, C, H, W) flow it gives the notes' output (same NaN pattern, values
    within float32 rounding: here the scales are added one by one, the notes ``torch.sum`` a
    concatenated tensor; a test runs the notes' code as printed). It is not a copy of the
    notes' code; it differs in:

    * **Layout**: it takes one (H, W, C) flow, array or tensor, and pools a contiguous
      (1, C, H, W) copy; the notes take a (batch, C, H, W) tensor.
    * **Batch**: the notes' version fails for batch > 1. It concatenates the scales along dim 0,
      the batch dim, so step 5's ``torch.sum(..., dim=0, keepdims=True)`` sums batch items *and*
      scales into one (1, C, H, W) mean, and ``mean_filtered_tensor[nan_mask]`` with the
      (B, C, H, W) mask raises IndexError ("The shape of the mask [2, ...] at index 0 does not
      match the shape of the indexed tensor [1, ...]"); were it not checked, the batch items'
      fills would be mixed. A (C, H, W) input with C > 1 fails the same way.
    * **NaN guards**: the notes divide every scale's ``num / den`` and let ``0 / 0`` make NaN
      where a window has no valid sample, then ``nan_to_num`` the ratios and count the non-NaN
      ones; here ``den > 0`` is tested explicitly and nothing is divided by zero. The notes'
      ``torch.nan_to_num`` also turns +-inf into +-3.4e38, which then leaks into the fills
      (a hole near an inf is filled with values of order 1e36); here infinities are rejected.
    * **Window checks**: the notes *warn* (UserWarning "max_window_size 32 is not aligned with
      max filter size 17") and carry on with the largest ``2**k + 1`` below a size that is not
      one, and crash on 2 (IndexError, no window at all) and 1 (OverflowError); here
      :func:`window_sizes` raises ValueError for anything but ``2**k + 1``.
    * **dtype**: the notes compute in the input's dtype (float64 stays float64); here the
      pooling runs in float32 and the result is cast back.
    * **Reporting**: the notes ``print("nan still exist after filtering.")``; this returns
      quietly (:func:`gradual_mean_fill` counts them in :attr:`FillResult.unfilled`).
    * **Device**: ``device=`` can move the work; the notes run where the tensor is.

    Args:
        flow: (H, W, C) float array or tensor, NaN marks a hole.
        max_window: largest window, ``2**k + 1``.
        device: where to run; default: the tensor's device, or ``"cpu"`` for arrays.
        progress: called as ``progress(done, total)`` after each window (``total`` = number of
            windows), so a caller can show real progress on this slow reference.

    Returns:
        The filled flow, same type, layout and dtype as ``flow`` (a tensor stays on its device).
    """
    windows = window_sizes(max_window)
    _validate_flow(flow)
    is_tensor = isinstance(flow, torch.Tensor)
    src = flow if is_tensor else torch.from_numpy(np.ascontiguousarray(flow))
    dev = torch.device(device) if device is not None else src.device
    # (1, C, H, W), made contiguous: a permuted view is channels-last to ATen, and its
    # channels-last avg_pool2d kernel is ~2.2x slower at C=2 than the plain NCHW one
    x = src.to(dev, torch.float32).permute(2, 0, 1).unsqueeze(0).contiguous()
    valid = ~torch.isnan(x)
    vf = valid.float()
    x0 = torch.where(valid, x, torch.zeros_like(x))  # NaN -> 0 *before* the masked sums
    total = torch.zeros_like(x)
    count = torch.zeros_like(x)
    for done, k in enumerate(windows, start=1):
        num = F.avg_pool2d(x0 * vf, k, stride=1, padding=k // 2, count_include_pad=True)
        den = F.avg_pool2d(vf, k, stride=1, padding=k // 2, count_include_pad=True)
        ok = den > 0
        total += torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), 0.0)
        count += ok.float()
        if progress is not None:
            progress(done, len(windows))
    fill = torch.where(count > 0, total / count.clamp_min(1), torch.full_like(total, float("nan")))
    out = torch.where(valid, x, fill)[0].permute(1, 2, 0)
    if is_tensor:
        return out.to(flow.device, flow.dtype)
    return out.cpu().numpy().astype(flow.dtype, copy=False)


def loop_reference(flow: np.ndarray, max_window: int = 33) -> np.ndarray:
    """A plain per-pixel, per-channel Python loop of the same definition (tests only: tiny inputs).

    Args:
        flow: (H, W, C) float array, NaN marks a hole.
        max_window: largest window, ``2**k + 1``.

    Returns:
        (H, W, C) float64 array: holes filled where possible, everything else unchanged.
    """
    windows = window_sizes(max_window)
    x = _as_numpy_hwc(flow).astype(np.float64)
    h, w, c_count = x.shape
    out = x.copy()
    for c in range(c_count):
        for y in range(h):
            for xx in range(w):
                if not math.isnan(x[y, xx, c]):
                    continue
                means = []
                for k in windows:
                    r = k // 2
                    s, n = 0.0, 0
                    for yy in range(max(0, y - r), min(h, y + r + 1)):
                        for xs in range(max(0, xx - r), min(w, xx + r + 1)):
                            v = x[yy, xs, c]
                            if not math.isnan(v):
                                s += v
                                n += 1
                    if n > 0:
                        means.append(s / n)
                if means:
                    out[y, xx, c] = sum(means) / len(means)
    return out


def notes_window_sizes(max_window_size: int = 32) -> tuple[int, ...]:
    """The NumPy notes' windows: ``max_window_size`` halved (``//``) while it is above 1.

    >>> notes_window_sizes(32)
    (32, 16, 8, 4, 2)
    """
    if isinstance(max_window_size, bool) or not isinstance(max_window_size, (int, np.integer)):
        raise ValueError(f"max_window_size must be an integer >= 2, got {max_window_size!r}")
    size = int(max_window_size)
    if not 2 <= size <= 4096:
        raise ValueError(f"max_window_size must be between 2 and 4096, got {size}")
    sizes = []
    while size > 1:
        sizes.append(size)
        size //= 2
    return tuple(sizes)


def _notes_nanmean(rows: np.ndarray) -> np.ndarray:
    """``np.nanmean(window, axis=(0, 1))`` for a window given as fresh (C, N) rows, bit for bit.

    ``np.sum`` over axes (0, 1) of an (h, w, C) array adds the values of each channel one at a
    time in row-major order (the reduced axes are the outer ones), so the total here is a
    ``cumsum`` along each row (sequential too; a plain ``sum`` along a contiguous row would add
    pairwise and round differently). The count and the float32 / intp division are nanmean's.
    Its "Mean of empty slice" warning is not raised: ``warnings`` filters are process-wide and
    the server runs sessions in threads. ``rows`` is overwritten (NaN -> 0).
    """
    nan = np.isnan(rows)
    rows[nan] = 0
    cnt = rows.shape[1] - np.count_nonzero(nan, axis=1)
    tot = np.cumsum(rows, axis=1)[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.divide(tot, cnt, out=tot, casting="unsafe")  # 0 / 0 -> NaN: no valid sample


def notes_gradual_mean_numpy(
    flow: np.ndarray,
    max_window_size: int = 32,
    *,
    nan_mask: np.ndarray | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """The notes' ORIGINAL NumPy ``gradual_mean`` (000:79, with its ``crop_rect``), faithfully.

    Same output, bit for bit, as the notes' code as printed (a test runs both), including its
    quirks, which make it a different and less accurate method from the vectorised one:

    * **Windows** ``max_window_size, //2, ...`` while above 1: 32, 16, 8, 4, 2 (even sizes).
    * **Not centred**: window ``w`` around hole ``(cx, cy)`` is the rectangle
      ``(cx - w//2, cy - w//2, cx + w, cy + w)`` (left, top, right, bottom; right/bottom
      exclusive): ``1.5 w`` pixels a side, reaching ``w - 1`` pixels right/down and ``w // 2``
      left/up. On a sloped field every window mean is biased down-right.
    * **Zero border**: ``crop_rect`` pads the parts outside the image with ``cv2.BORDER_CONSTANT``
      value 0, and those zeros are not NaN, so ``np.nanmean`` counts them as valid flow: holes
      near the border are pulled towards 0.
    * **Early break**: the windows run from largest to smallest; a window whose mean is NaN in
      any channel is *appended*, then the loop stops, so the pixel's average is NaN (the hole
      stays unfilled) although the larger windows had valid samples.
    * **Sequential, in place**: holes are visited in ``np.where`` order (row by row) and each
      fill is written into the array the next windows read, so earlier fills count as data.
      With the default mask this makes the early break unreachable: every window reaches the
      row above its hole, which is the zero border or was already visited and filled, so every
      hole gets a value and nothing stays NaN (an all-NaN flow comes back all zeros). Only a
      caller's ``nan_mask`` that leaves NaN pixels out can trigger the break.
    * **Whole pixel**: a pixel is a hole if its channel *sum* is NaN (any channel NaN), and all
      its channels are overwritten, the valid ones too.

    The only change from the printed code is speed-neutral for the result: ``crop_rect`` pads
    the *whole image* with ``cv2.copyMakeBorder`` for every window of every hole (O(H*W) work
    each); here only the window is built (zeros, then the part inside the image). It is still a
    per-pixel Python loop (about 5 ``nanmean`` calls per hole): keep the input small.

    Args:
        flow: (H, W, C) float array, C >= 2, NaN marks a hole, no infinities.
        max_window_size: the largest (first) window, an integer >= 2; the notes' default 32.
        nan_mask: optional (H, W) array, the notes' argument: the holes to visit are where it
            is NaN. Default: ``np.sum(flow, axis=-1)`` (a pixel with any NaN channel).
        progress: optional ``progress(done, total)`` called now and then with hole counts.

    Returns:
        (H, W, C) array of ``flow``'s dtype: a copy, holes filled where the loop could.

    Raises:
        ValueError: bad shape/dtype, infinities, C == 1 (the notes' ``crop_rect`` fails there:
            ``cv2.copyMakeBorder`` returns a one-channel image as (H, W), and the ``[..., :, :]``
            crop raises IndexError), or a bad ``max_window_size``.
    """
    sizes = notes_window_sizes(max_window_size)
    if not isinstance(flow, np.ndarray):
        raise ValueError(f"flow must be a NumPy array, got {type(flow).__name__}")
    _check_hwc(flow.shape, flow.dtype, "flow")
    if np.isinf(flow).any():
        raise ValueError("flow contains infinite values; only NaN may mark a hole")
    h, w, c_count = flow.shape
    if c_count == 1:
        raise ValueError(
            "the notes' NumPy gradual_mean needs at least 2 channels, got shape "
            f"{flow.shape}: their crop_rect loses the channel axis of a one-channel image"
        )
    src = flow.copy()  # copy.deepcopy(raw_array) in the notes
    if nan_mask is None:
        nan_mask = np.sum(src, axis=-1)
    elif not isinstance(nan_mask, np.ndarray) or nan_mask.shape != (h, w):
        got = nan_mask.shape if isinstance(nan_mask, np.ndarray) else type(nan_mask).__name__
        raise ValueError(f"nan_mask must be an (H, W) = ({h}, {w}) array, got {got}")
    nan_ys, nan_xs = np.where(np.isnan(nan_mask))
    total = int(nan_ys.size)
    step = max(1, total // 100)
    for i, (cx, cy) in enumerate(zip(nan_xs.tolist(), nan_ys.tolist(), strict=True)):
        means = []
        for size in sizes:
            half = size // 2
            left, top, right, bottom = cx - half, cy - half, cx + size, cy + size
            if left >= 0 and top >= 0 and right <= w and bottom <= h:
                window = np.ascontiguousarray(src[top:bottom, left:right].transpose(2, 0, 1))
            else:  # crop_rect: zero-valued constant border outside the image
                window = np.zeros((c_count, bottom - top, right - left), src.dtype)
                y0, y1, x0, x1 = max(top, 0), min(bottom, h), max(left, 0), min(right, w)
                window[:, y0 - top:y1 - top, x0 - left:x1 - left] = (
                    src[y0:y1, x0:x1].transpose(2, 0, 1)
                )
            means.append(_notes_nanmean(window.reshape(c_count, -1)))
            if np.isnan(np.sum(means[-1], axis=-1)):
                break  # after appending the NaN mean: this hole stays NaN
        src[cy, cx] = np.array(means).mean(axis=0)
        if progress is not None and (i + 1) % step == 0:
            progress(i + 1, total)
    if progress is not None:
        progress(total, total)
    return src


# --------------------------------------------------------------------------------------------
# the fast implementations
# --------------------------------------------------------------------------------------------


def _hole_box(holes_any: np.ndarray, radius: int) -> tuple[int, int, int, int]:
    """Bounding box (y0, y1, x0, x1) of the holes grown by ``radius``: all a hole's window reads."""
    h, w = holes_any.shape
    rows = np.flatnonzero(holes_any.any(axis=1))
    cols = np.flatnonzero(holes_any.any(axis=0))
    return (
        max(0, int(rows[0]) - radius),
        min(h, int(rows[-1]) + radius + 1),
        max(0, int(cols[0]) - radius),
        min(w, int(cols[-1]) + radius + 1),
    )


def _scatter_rows(dst: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> None:
    """``dst[idx] = rows`` for a C-contiguous (N, C) ``dst``, moving each row as one opaque
    item (a ``void`` view): about 10x faster than 2-D fancy assignment."""
    item = np.dtype((np.void, dst.shape[1] * dst.itemsize))
    src = np.ascontiguousarray(rows, dtype=dst.dtype)
    dst.view(item).reshape(-1)[idx] = src.view(item).reshape(-1)


def _fill_shared_cv2(
    x: np.ndarray,
    holes_any: np.ndarray,
    windows: tuple[int, ...],
    out: np.ndarray,
    scales_used: np.ndarray,
) -> int:
    """Fill ``out`` in place where all C channels of ``x`` share the hole mask ``holes_any``.

    Args:
        x: (H, W, C) float32, C-contiguous; NaN exactly where ``holes_any`` is True.
        holes_any: (H, W) bool, at least one True.
        windows: window sizes.
        out: (H, W, C) float32 copy of ``x`` to write the fill into.
        scales_used: (H, W, C) uint8 zeros to write the per-hole scale count into.

    Returns:
        The number of hole *values* left NaN (pixels x C).
    """
    h, w, c_count = x.shape
    y0, y1, x0, x1 = _hole_box(holes_any, windows[-1] // 2)
    crop_holes = holes_any[y0:y1, x0:x1]
    # data with NaN -> 0 (before any sum: 0 * NaN is NaN), plus ONE shared valid-count channel
    crop = x[y0:y1, x0:x1]
    valid = np.logical_not(crop_holes).astype(np.float32)
    stack = np.empty((crop.shape[0], crop.shape[1], c_count + 1), np.float32)  # (h, w, C + 1)
    if c_count == 1:
        stack[..., 0] = crop[..., 0]
        stack[..., 1] = valid
    else:  # one interleaving pass, no temporary planes
        pairs = [i for c in range(c_count + 1) for i in (c, c)]
        cv2.mixChannels([crop, valid], [stack], pairs)
    cv2.patchNaNs(stack.reshape(stack.shape[0], -1), 0)  # in place, never the caller's memory
    idx = np.flatnonzero(crop_holes)
    n = idx.size
    total = np.zeros((c_count, n), np.float32)
    count = np.zeros(n, np.float32)
    boxed = np.empty_like(stack)  # one output buffer for every scale: no fresh pages per scale
    flat = boxed.reshape(-1, c_count + 1)
    for k in windows:
        cv2.boxFilter(stack, -1, (k, k), dst=boxed, normalize=False,
                      borderType=cv2.BORDER_CONSTANT)
        # only what the holes need: gather the hole pixels, then work on contiguous planes
        g = np.take(flat, idx, axis=0).T.copy()  # (C + 1, n)
        den = g[c_count]  # exact integer counts
        count += np.minimum(den, 1.0)
        np.maximum(den, 1.0, out=den)  # where den == 0 the sums are exactly 0 too -> adds 0
        total += g[:c_count] / den
    with np.errstate(invalid="ignore", divide="ignore"):
        fill = total / count  # 0 / 0 -> NaN: no valid sample in the largest window
    cw = crop_holes.shape[1]
    gidx = idx + y0 * w if cw == w else (idx // cw + y0) * w + (idx % cw + x0)
    _scatter_rows(out.reshape(-1, c_count), gidx, fill.T)
    _scatter_rows(scales_used.reshape(-1, c_count), gidx,
                  np.repeat(count.astype(np.uint8)[:, None], c_count, axis=1))
    return c_count * int(n - np.count_nonzero(count))


def _fill_cv2(x: np.ndarray, windows: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """cv2 backend on a float32 (H, W, C) array. Returns (filled, scales_used, unfilled, holes).

    Why it is fast: (1) all channels plus the valid count go through *one* multi-channel
    ``cv2.boxFilter`` per scale (O(1) per pixel whatever the window, where avg_pool2d pays
    ``k**2``); (2) when the channels share their holes (u and v of a flow, the usual case) they
    share one count channel; (3) the filter runs only on the bounding box of the holes grown by
    the largest radius; (4) the divisions and the scale average run only on the gathered hole
    pixels, on contiguous float32 planes; (5) no ``where=`` masks: a window with no valid sample
    has a data sum of exactly 0, so ``sum / max(count, 1)`` adds 0 and ``min(count, 1)`` counts
    the scale.
    """
    h, w, c_count = x.shape
    holes = np.isnan(x)  # (H, W, C)
    scales_used = np.zeros((h, w, c_count), np.uint8)
    out = x.copy()
    if c_count == 1:
        masks = [holes[..., 0]]
    else:
        masks = [m.view(bool) for m in cv2.split(holes.view(np.uint8))]
    if not any(m.any() for m in masks):
        return out, scales_used, 0, 0
    if all(np.array_equal(masks[0], m) for m in masks[1:]):
        unfilled = _fill_shared_cv2(x, masks[0], windows, out, scales_used)
        return out, scales_used, unfilled, c_count * int(np.count_nonzero(masks[0]))
    # channels with different holes: each channel with its own mask
    unfilled = 0
    for c, m in enumerate(masks):
        if not m.any():
            continue
        xc = np.ascontiguousarray(x[..., c : c + 1])
        oc = xc.copy()
        uc = np.zeros((h, w, 1), np.uint8)
        unfilled += _fill_shared_cv2(xc, m, windows, oc, uc)
        out[..., c] = oc[..., 0]
        scales_used[..., c] = uc[..., 0]
    return out, scales_used, unfilled, int(np.count_nonzero(holes))


def _fill_torch(
    x: torch.Tensor, windows: tuple[int, ...]
) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """torch backend on a float32 (H, W, C) tensor, any device.

    One zero-padded summed-area table (float64, so differences stay exact to ~1e-9) of the data
    channels and the valid masks; each scale's box sums are then four gathers *at the hole
    pixels only*. Returns (filled, scales_used uint8, unfilled, holes).
    """
    h, w, c_count = x.shape
    dev = x.device
    holes = torch.isnan(x)
    n_holes = int(holes.sum())
    scales_used = torch.zeros((h, w, c_count), dtype=torch.uint8, device=dev)
    out = x.clone()
    if n_holes == 0:
        return out, scales_used, 0, 0
    holes_any = holes.any(dim=2)
    r_max = windows[-1] // 2
    # crop to the holes' bounding box grown by the largest radius
    rows = torch.nonzero(holes_any.any(dim=1)).flatten()
    cols = torch.nonzero(holes_any.any(dim=0)).flatten()
    y0 = max(0, int(rows[0]) - r_max)
    y1 = min(h, int(rows[-1]) + r_max + 1)
    x0 = max(0, int(cols[0]) - r_max)
    x1 = min(w, int(cols[-1]) + r_max + 1)
    crop = x[y0:y1, x0:x1]
    crop_holes = holes[y0:y1, x0:x1]
    ch, cw = crop.shape[:2]
    stack = torch.cat([torch.where(crop_holes, 0.0, crop), (~crop_holes).to(crop.dtype)], dim=2)
    # summed-area table with r_max zeros of padding on every side and one leading zero row/col
    hp, wp = ch + 2 * r_max + 1, cw + 2 * r_max + 1
    sat = torch.zeros((hp, wp, 2 * c_count), dtype=torch.float64, device=dev)
    sat[r_max + 1 : r_max + 1 + ch, r_max + 1 : r_max + 1 + cw] = stack
    sat = sat.cumsum_(0).cumsum_(1).reshape(hp * wp, 2 * c_count)
    hole_idx = torch.nonzero(holes_any[y0:y1, x0:x1].flatten()).flatten()
    hy = hole_idx // cw
    hx = hole_idx % cw
    base = (hy + r_max) * wp + (hx + r_max)  # top-left corner index for radius 0, shifted below
    n = hole_idx.numel()
    total = torch.zeros((n, c_count), dtype=torch.float64, device=dev)
    count = torch.zeros((n, c_count), dtype=torch.float64, device=dev)
    for k in windows:
        r = k // 2
        a = sat.index_select(0, base + (r + 1) * wp + (r + 1))
        b = sat.index_select(0, base - r * wp + (r + 1))
        c = sat.index_select(0, base + (r + 1) * wp - r)
        d = sat.index_select(0, base - r * wp - r)
        box = a - b - c + d
        num, den = box[:, :c_count], box[:, c_count:]
        ok = den > 0.5
        total += torch.where(ok, num / torch.where(ok, den, 1.0), 0.0)
        count += ok
    fill = torch.where(count > 0, total / count.clamp_min(1), float("nan")).to(x.dtype)
    gy = hy + y0
    gx = hx + x0
    hole_vals = holes[gy, gx]
    out[gy, gx] = torch.where(hole_vals, fill, out[gy, gx])
    scales_used[gy, gx] = torch.where(hole_vals & (count > 0), count, 0).to(torch.uint8)
    unfilled = int((hole_vals & (count == 0)).sum())
    return out, scales_used, unfilled, n_holes


def _resolve_backend(backend: str, flow: np.ndarray | torch.Tensor, device: str | None) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend != "auto":
        return backend
    target = device
    if target is None and isinstance(flow, torch.Tensor):
        target = str(flow.device)
    # measured: on a CPU the cv2 backend is fastest; on a GPU the torch one (no host round trip)
    return "torch" if target is not None and target.startswith("cuda") else "cv2"


def gradual_mean_fill(
    flow: np.ndarray | torch.Tensor,
    max_window: int = 33,
    *,
    backend: Backend = "auto",
    device: str | None = None,
) -> FillResult:
    """Fill NaN holes with the average over scales of masked box means (the notes' method, fast).

    Same output as :func:`notes_gradual_mean_torch` (to 1e-5) at a fraction of the cost.

    Args:
        flow: (H, W, C) float array or tensor (any float dtype), NaN marks a hole. Each channel
            uses its own holes. The input is never modified.
        max_window: largest window size, ``2**k + 1`` (3, 5, 9, 17, 33, 65, 129, ...); any other
            value raises ``ValueError`` (it is not rounded).
        backend: ``"cv2"`` (NumPy + ``cv2.boxFilter``, CPU), ``"torch"`` (CPU or CUDA) or
            ``"auto"``: torch on a CUDA device, cv2 otherwise (the fastest of each, measured).
        device: where the torch backend runs; default: the tensor's device, or ``"cpu"``.

    Returns:
        :class:`FillResult`; ``.filled`` has the input's type, layout, dtype and device.

    Raises:
        ValueError: bad shape or dtype, infinite values, bad ``max_window``/``backend``.

    >>> import numpy as np
    >>> f = np.ones((4, 4, 2), np.float32); f[1, 2] = np.nan
    >>> r = gradual_mean_fill(f, 3)
    >>> float(r.filled[1, 2, 0]), r.unfilled
    (1.0, 0)
    """
    windows = window_sizes(max_window)
    is_tensor = isinstance(flow, torch.Tensor)
    _validate_flow(flow)
    chosen = _resolve_backend(backend, flow, device)
    if chosen == "cv2":
        if device is not None and not str(device).startswith("cpu"):
            raise ValueError(f"the cv2 backend runs on the CPU only, got device {device!r}")
        src = flow.detach().to("cpu", torch.float32).numpy() if is_tensor else flow
        x = np.ascontiguousarray(src, dtype=np.float32)
        filled, used, unfilled, n_holes = _fill_cv2(x, windows)
        dev = "cpu"
        if is_tensor:
            result: np.ndarray | torch.Tensor = torch.from_numpy(filled).to(flow.device, flow.dtype)
        else:
            result = filled.astype(flow.dtype, copy=False)
    else:
        src_t = flow if is_tensor else torch.from_numpy(np.ascontiguousarray(flow))
        dev_t = torch.device(device) if device is not None else src_t.device
        xt = src_t.to(dev_t, torch.float32)  # may alias the input: _fill_torch only reads it
        filled_t, used_t, unfilled, n_holes = _fill_torch(xt, windows)
        used = used_t.cpu().numpy()
        dev = str(dev_t)
        if is_tensor:
            result = filled_t.to(flow.device, flow.dtype)
        else:
            result = filled_t.cpu().numpy().astype(flow.dtype, copy=False)
    return FillResult(
        filled=result,
        scales_used=used,
        unfilled=unfilled,
        holes=n_holes,
        windows=windows,
        backend=chosen,
        device=dev,
    )


def scale_means(flow: np.ndarray, max_window: int = 33) -> dict[int, np.ndarray]:
    """Each scale's masked box mean on its own (what every scale contributes), for the page.

    Args:
        flow: (H, W, C) float array, NaN marks a hole.
        max_window: largest window, ``2**k + 1``.

    Returns:
        ``{k: (H, W, C) float32}`` -- the masked mean for window ``k`` at every pixel, NaN where
        that window holds no valid sample.
    """
    windows = window_sizes(max_window)
    x = np.ascontiguousarray(_as_numpy_hwc(flow), dtype=np.float32)
    valid = ~np.isnan(x)
    x0 = np.where(valid, x, 0).astype(np.float32)
    vf = valid.astype(np.float32)
    out: dict[int, np.ndarray] = {}
    for k in windows:
        num = np.stack(
            [
                cv2.boxFilter(
                    x0[..., c], -1, (k, k), normalize=False, borderType=cv2.BORDER_CONSTANT
                )
                for c in range(x.shape[2])
            ],
            axis=2,
        )
        den = np.stack(
            [
                cv2.boxFilter(
                    vf[..., c], -1, (k, k), normalize=False, borderType=cv2.BORDER_CONSTANT
                )
                for c in range(x.shape[2])
            ],
            axis=2,
        )
        mean = np.full_like(num, np.nan)
        np.divide(num, den, out=mean, where=den > 0.5)
        out[k] = mean
    return out


# --------------------------------------------------------------------------------------------
# flow sources: synthetic fields with ground truth, Farneback flow from image pairs
# --------------------------------------------------------------------------------------------


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


def _sample_image(name: str, max_side: int) -> np.ndarray:
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


# --------------------------------------------------------------------------------------------
# hole masks
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# file loading
# --------------------------------------------------------------------------------------------


def save_flo(flow: np.ndarray) -> bytes:
    """Encode (H, W, 2) flow as Middlebury ``.flo`` bytes (NaN written as the 'unknown' 1e10)."""
    arr = np.asarray(flow, np.float32)
    if arr.ndim != 3 or arr.shape[2] != 2:
        raise ValueError(f".flo holds (H, W, 2) flow, got shape {arr.shape}")
    h, w = arr.shape[:2]
    body = np.where(np.isnan(arr), np.float32(1e10), arr).astype("<f4").tobytes()
    return np.array([FLO_MAGIC], "<f4").tobytes() + np.array([w, h], "<i4").tobytes() + body


def load_flo(data: bytes, *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Decode Middlebury ``.flo`` bytes into (H, W, 2) float32 flow.

    Layout: float32 magic 202021.25, int32 width, int32 height, then H*W*2 float32 (u, v
    interleaved, row-major), little-endian. Values above 1e9 mean "unknown" and become NaN.

    Raises:
        ValueError: wrong magic number, bad sizes, truncated or oversized data.
    """
    if len(data) < 12:
        raise ValueError(
            T("this .flo file is truncated: {n} bytes, but the header alone needs 12",
              n=len(data))
        )
    magic = float(np.frombuffer(data[:4], "<f4")[0])
    if magic != FLO_MAGIC:
        raise ValueError(
            T("not a Middlebury .flo file: the magic number is {magic!r}, expected {expected} "
              "(the bytes 'PIEH')", magic=magic, expected=FLO_MAGIC)
        )
    w, h = (int(v) for v in np.frombuffer(data[4:12], "<i4"))
    if w < 1 or h < 1:
        raise ValueError(T("this .flo file declares an invalid size {w}x{h} (width x height)",
                           w=w, h=h))
    if max(w, h) > max_side:
        raise ValueError(
            T("this .flo file is {h}x{w} pixels, over the size cap of {max_side} pixels per "
              "side", h=h, w=w, max_side=max_side)
        )
    expected = 12 + 8 * w * h
    if len(data) < expected:
        raise ValueError(
            T("this .flo file is truncated: {w}x{h} flow needs {expected} bytes, got {n}",
              w=w, h=h, expected=expected, n=len(data))
        )
    if len(data) > expected:
        raise ValueError(
            T("this .flo file has {extra} bytes more than its {w}x{h} header says",
              extra=len(data) - expected, w=w, h=h)
        )
    flow = np.frombuffer(data[12:], "<f4").reshape(h, w, 2).astype(np.float32)
    flow[~(np.abs(flow) < FLO_UNKNOWN)] = np.nan  # unknown (>1e9), inf and NaN -> hole
    return flow


def load_npy(data: bytes, *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Decode ``.npy`` bytes holding (H, W, 2) float flow: the header (dtype, shape) is checked
    before any data is read, and nothing is ever unpickled.

    Returns (H, W, 2) float32; NaN marks holes, infinities become NaN too.

    Raises:
        ValueError: not a .npy file, object/non-float dtype, wrong shape, over the size cap.
    """
    if not data.startswith(b"\x93NUMPY"):
        raise ValueError(T("this is not a readable .npy file (it does not start with the NumPy "
                           "magic bytes); save the flow with np.save"))
    # The header (dtype, shape) is read and checked before any data: a few hundred bytes can
    # declare a shape of terabytes, which np.load would allocate before finding the file short.
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]} is not supported")
    except Exception as exc:  # malformed header text, unknown dtype, EOF from arbitrary bytes
        raise ValueError(T("this is not a readable .npy file: {exc}", exc=str(exc))) from None
    if dtype.hasobject:
        # Object arrays are stored as a pickle, which could run code: never read.
        raise ValueError(
            T("this .npy file holds Python objects (object dtype); only plain float arrays "
              "are accepted -- save it with np.save(path, flow.astype(np.float32))")
        )
    if len(shape) != 3 or shape[2] != 2:
        raise ValueError(
            T("a flow .npy must have shape (H, W, 2) (u, v per pixel), got shape {shape}",
              shape=str(shape))
        )
    if not np.issubdtype(dtype, np.floating):
        raise ValueError(T("a flow .npy must hold floats (NaN marks holes), got dtype {dtype}",
                           dtype=str(dtype)))
    if max(shape[:2]) > max_side:
        raise ValueError(
            T("this flow is {h}x{w} pixels, over the size cap of {max_side} pixels per side",
              h=shape[0], w=shape[1], max_side=max_side)
        )
    if min(shape[:2]) < 1:
        raise ValueError(T("this flow is empty: shape {shape}", shape=str(shape)))
    count = shape[0] * shape[1] * 2
    offset = stream.tell()
    if len(data) - offset != count * dtype.itemsize:
        raise ValueError(
            T("this .npy file holds {n} bytes of data, but its header declares {shape} {dtype}, "
              "{expected} bytes; save the flow again with np.save", n=len(data) - offset,
              shape=str(shape), dtype=str(dtype), expected=count * dtype.itemsize)
        )
    arr = np.frombuffer(data, dtype, count, offset=offset)
    arr = arr.reshape(shape[::-1]).transpose() if fortran else arr.reshape(shape)
    out = arr.astype(np.float32)
    out[np.isinf(out)] = np.nan
    return out


def load_flow_file(name: str, data: bytes, *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Load an uploaded ``.flo`` or ``.npy`` flow file by its extension (see the loaders)."""
    suffix = Path(name).suffix.lower()
    if suffix == ".flo":
        return load_flo(data, max_side=max_side)
    if suffix == ".npy":
        return load_npy(data, max_side=max_side)
    raise ValueError(T("flow files must end in .flo or .npy, got {name!r}", name=name))


# --------------------------------------------------------------------------------------------
# alternatives and metrics
# --------------------------------------------------------------------------------------------


def nearest_fill(flow: np.ndarray) -> np.ndarray:
    """Fill each channel's NaN with the value of the nearest valid pixel of that channel.

    Uses ``cv2.distanceTransformWithLabels`` (L2, 5x5 mask: nearest up to a tiny approximation).
    (H, W, C) float -> (H, W, C) float32; a channel with no valid pixel stays NaN.
    """
    x = _as_numpy_hwc(flow).astype(np.float32)
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
    x = _as_numpy_hwc(flow).astype(np.float32)
    out = x.copy()
    for c in range(x.shape[2]):
        holes = np.isnan(x[..., c])
        if not holes.any() or holes.all():
            continue
        src = np.where(holes, 0.0, x[..., c]).astype(np.float32)
        out[..., c] = cv2.inpaint(src, holes.astype(np.uint8), radius, flags[method])
    return out


def endpoint_error(estimate: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Endpoint error ``||estimate - reference||_2`` over channels: (H, W, C) x2 -> (H, W)."""
    if estimate.shape != reference.shape:
        raise ValueError(f"shapes differ: {estimate.shape} vs {reference.shape}")
    d = np.asarray(estimate, np.float64) - np.asarray(reference, np.float64)
    return np.sqrt(np.sum(d * d, axis=2))


def epe_stats(epe: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(mean, median) of an EPE map over ``mask`` pixels where it is finite (NaN if none)."""
    vals = epe[mask]
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return float("nan"), float("nan")
    return float(vals.mean()), float(np.median(vals))


# --------------------------------------------------------------------------------------------
# what the page builds: a case (flow with holes + reference) and a comparison of methods
# --------------------------------------------------------------------------------------------

# rotation 2 degrees, scale 1.03 about the centre, then shifted by (4, -3) px
AFFINE_DEMO = {"angle": 2.0, "scale": 1.03, "shift": (4.0, -3.0)}


@dataclass(frozen=True)
class FlowSpec:
    """Everything that defines a built-in flow case (its ``repr`` is valid Python, for snippets).

    source: ``synthetic`` | ``stereo`` (scikit-image motorcycle pair, Farneback) | ``affine``
    (motorcycle_left and a copy warped by a known affine: Farneback with ground truth).
    field/height/width/magnitude/noise: the synthetic field. mask: a :data:`MASK_KINDS` entry
    (``fb`` needs an image source). fraction/hole_size/fb_threshold/seed: mask parameters.
    max_side: images are downscaled to this many pixels on the long side.
    """

    source: str = "synthetic"
    field: str = "rotation"
    height: int = 240
    width: int = 320
    magnitude: float = 4.0
    noise: float = 0.0
    mask: str = "random"
    fraction: float = 0.3
    hole_size: int = 12
    fb_threshold: float = 1.0
    seed: int = 0
    max_side: int = 480


@dataclass(frozen=True)
class FlowCase:
    """A flow with holes and what to measure it against.

    flow: (H, W, 2) float32, NaN = hole. reference: (H, W, 2) float32 or None.
    reference_kind: ``"ground truth"``, ``"pre-mask flow"`` or ``"none"``.
    mask: (H, W) bool, True where any channel is a hole. images: the image pair or None.
    """

    flow: np.ndarray
    reference: np.ndarray | None
    reference_kind: str
    mask: np.ndarray
    images: tuple[np.ndarray, np.ndarray] | None = None
    description: str = ""


def _mask_for(
    spec: FlowSpec, h: int, w: int, fwd: np.ndarray | None, bwd: np.ndarray | None
) -> np.ndarray:
    if spec.mask == "fb":
        if fwd is None or bwd is None:
            raise ValueError(
                T("the forward-backward mask needs an image pair (stereo, affine or uploaded "
                  "images); pick another mask for this source")
            )
        return fb_consistency_mask(fwd, bwd, spec.fb_threshold)
    return make_hole_mask(
        spec.mask, h, w, fraction=spec.fraction, size=spec.hole_size, seed=spec.seed
    )


def build_flow(spec: FlowSpec) -> FlowCase:
    """Build the flow case that ``spec`` describes (synthetic field or a scikit-image pair)."""
    if spec.source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {spec.source!r}")
    if spec.source == "synthetic":
        observed, truth = synthetic_flow(
            spec.field, spec.height, spec.width, magnitude=spec.magnitude, noise=spec.noise,
            seed=spec.seed,
        )
        mask = _mask_for(spec, spec.height, spec.width, None, None)
        return FlowCase(apply_holes(observed, mask), truth, N_("ground truth"), mask, None,
                        SYNTHETIC_DESCRIPTIONS.get(spec.field, f"synthetic {spec.field}"))
    left = _sample_image("motorcycle_left.png", spec.max_side)
    if spec.source == "stereo":
        right = _sample_image("motorcycle_right.png", spec.max_side)
        fwd, bwd = farneback_flow(left, right)
        mask = _mask_for(spec, *fwd.shape[:2], fwd, bwd)
        return FlowCase(apply_holes(fwd, mask), fwd, N_("pre-mask flow"), mask, (left, right),
                        N_("Farneback on the motorcycle stereo pair"))
    h, w = left.shape[:2]
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), AFFINE_DEMO["angle"],
                                     AFFINE_DEMO["scale"])
    matrix[:, 2] += AFFINE_DEMO["shift"]
    warped, truth = affine_pair(left, matrix)
    fwd, bwd = farneback_flow(left, warped)
    mask = _mask_for(spec, h, w, fwd, bwd)
    return FlowCase(apply_holes(fwd, mask), truth, N_("ground truth"), mask, (left, warped),
                    N_("Farneback on an image and its affine-warped copy"))


def case_from_flow(flow: np.ndarray, spec: FlowSpec) -> FlowCase:
    """A case from a loaded flow file: its own NaN are the holes (no reference to compare
    with); a file without NaN gets ``spec``'s mask and is compared with its pre-mask flow.

    Raises:
        ValueError: the file has no finite value at all (every pixel NaN: no valid flow), or a
            bad shape or mask setting.
    """
    x = _as_numpy_hwc(flow).astype(np.float32)
    if not np.isfinite(x).any():
        raise ValueError(
            T("this file holds no valid flow: every pixel is NaN (all {h}x{w} pixels are "
              "holes), so there is nothing to fill from", h=x.shape[0], w=x.shape[1])
        )
    holes = np.isnan(x).any(axis=2)
    if holes.any():
        return FlowCase(x, None, "none", holes, None, N_("uploaded flow with its own holes"))
    mask = _mask_for(spec, x.shape[0], x.shape[1], None, None)
    return FlowCase(apply_holes(x, mask), x, N_("pre-mask flow"), mask, None, N_("uploaded flow"))


def case_from_images(img1: np.ndarray, img2: np.ndarray, spec: FlowSpec) -> FlowCase:
    """A case from an uploaded image pair: Farneback flow, ``spec``'s mask, pre-mask reference."""
    fwd, bwd = farneback_flow(img1, img2)
    mask = _mask_for(spec, *fwd.shape[:2], fwd, bwd)
    return FlowCase(apply_holes(fwd, mask), fwd, N_("pre-mask flow"), mask, (img1, img2),
                    N_("Farneback on the uploaded pair"))


@dataclass(frozen=True)
class MethodResult:
    """One filling method's output and scores. ``epe`` is (H, W) or None without a reference;
    ``mean_epe``/``median_epe`` are over the hole pixels (NaN without a reference).
    ``fill`` is the full :class:`FillResult` for the gradual-mean backends, else None."""

    name: str
    filled: np.ndarray
    ms: float
    device: str
    unfilled: int
    epe: np.ndarray | None
    mean_epe: float
    median_epe: float
    max_diff_vs_notes: float | None = None
    fill: FillResult | None = None


@dataclass(frozen=True)
class Comparison:
    """Everything the page shows: each method's result, the main fill and the scale set."""

    methods: tuple[MethodResult, ...]
    fill: FillResult
    windows: tuple[int, ...]
    hole_pixels: int
    reference_kind: str
    per_scale: dict[int, np.ndarray] = field(default_factory=dict)


#: The methods :func:`run_method` knows, in the order :func:`compare_methods` lists them.
METHOD_CV2 = N_("gradual mean (cv2 backend)")
METHOD_TORCH = N_("gradual mean (torch backend)")
OTHER_METHODS: tuple[str, ...] = (N_("cv2.inpaint Telea"), N_("cv2.inpaint Navier-Stokes"),
                                  N_("nearest valid"))
METHODS: tuple[str, ...] = (METHOD_CV2, METHOD_TORCH, NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD,
                            *OTHER_METHODS)
#: Methods whose output depends on ``max_window`` (the others ignore it).
WINDOWED_METHODS: frozenset[str] = frozenset(
    {METHOD_CV2, METHOD_TORCH, NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD}
)


def _timed(fn: Callable[[], object], repeats: int, device: str) -> tuple[object, float]:
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    times, result = [], None
    for _ in range(max(1, repeats)):
        sync()
        t0 = time.perf_counter()
        result = fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return result, statistics.median(times)


def check_fillable(case: FlowCase) -> None:
    """Raise ValueError when ``case.flow`` has no finite value at all (nothing to fill from)."""
    if not np.isfinite(case.flow).any():
        raise ValueError(
            T("the flow has no valid value at all (every pixel is NaN), so there is nothing to "
              "fill from; use a smaller hole fraction or another file")
        )


def _check_device(device: str) -> None:
    if not (device == "cpu" or (device.startswith("cuda") and torch.cuda.is_available())):
        raise ValueError(f"device must be 'cpu' or an available 'cuda:N', got {device!r}")


def run_method(
    case: FlowCase,
    name: str,
    *,
    max_window: int = 33,
    device: str = "cpu",
    repeats: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> MethodResult:
    """Fill ``case.flow`` with one method of :data:`METHODS`, time it and score it on the holes.

    ``device`` is used by the torch backend and the notes' avg_pool2d reference; the others run
    on the CPU. ``progress(done, total)`` gets the reference's windows or the NumPy loop's hole
    pixels. ``max_diff_vs_notes`` is left None (:func:`combine_methods` fills it in).

    Raises:
        ValueError: unknown ``name``, all-NaN flow, bad ``max_window`` or ``device``, or more
            than :data:`NOTES_NUMPY_MAX_HOLES` hole pixels for the NumPy loop.
    """
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    window_sizes(max_window)
    check_fillable(case)
    _check_device(device)
    x = case.flow
    if name == NOTES_NUMPY_METHOD:
        numpy_holes = int(np.count_nonzero(np.isnan(x).any(axis=2)))
        if numpy_holes > NOTES_NUMPY_MAX_HOLES:
            raise ValueError(
                f"the notes' NumPy loop visits one hole pixel at a time and is limited to "
                f"{NOTES_NUMPY_MAX_HOLES:,} hole pixels; this flow has {numpy_holes:,}: pick a "
                "smaller size or fewer holes, or switch the NumPy loop off"
            )
    fill: FillResult | None = None
    if name == METHOD_CV2:
        fill, ms = _timed(  # type: ignore[assignment]
            lambda: gradual_mean_fill(x, max_window, backend="cv2"), repeats, "cpu")
        out, dev = fill.filled, "cpu"  # type: ignore[union-attr]
    elif name == METHOD_TORCH:
        xt = torch.from_numpy(x).to(device)
        fill_t, ms = _timed(
            lambda: gradual_mean_fill(xt, max_window, backend="torch"), repeats, device)
        out, dev = fill_t.filled.cpu().numpy(), device  # type: ignore[union-attr]
    elif name == NOTES_TORCH_METHOD:
        xt = torch.from_numpy(x).to(device)
        notes_t, ms = _timed(
            lambda: notes_gradual_mean_torch(xt, max_window, progress=progress), repeats, device)
        out, dev = notes_t.cpu().numpy(), device  # type: ignore[union-attr]
    elif name == NOTES_NUMPY_METHOD:
        out, ms = _timed(
            lambda: notes_gradual_mean_numpy(x, max_window - 1, progress=progress), 1, "cpu")
        dev = "cpu"
    else:
        fn = {
            "cv2.inpaint Telea": lambda: inpaint_fill(x, "telea"),
            "cv2.inpaint Navier-Stokes": lambda: inpaint_fill(x, "ns"),
            "nearest valid": lambda: nearest_fill(x),
        }[name]
        out, ms = _timed(fn, repeats, "cpu")
        dev = "cpu"
    filled = np.asarray(out, np.float32)
    unfilled = int(np.count_nonzero(np.isnan(filled)))
    ref = case.reference
    if ref is None:
        return MethodResult(name, filled, ms, dev, unfilled, None, float("nan"), float("nan"),
                            None, fill)
    epe = endpoint_error(filled, ref)
    mean, median = epe_stats(epe, case.mask)
    return MethodResult(name, filled, ms, dev, unfilled, epe, mean, median, None, fill)


def combine_methods(
    case: FlowCase,
    results: list[MethodResult] | tuple[MethodResult, ...],
    *,
    max_window: int = 33,
    per_scale: dict[int, np.ndarray] | None = None,
) -> Comparison:
    """The :class:`Comparison` of ``results`` from :func:`run_method`, in :data:`METHODS` order.

    Fills each row's ``max_diff_vs_notes`` from the notes' avg_pool2d row when there is one
    (the gradual-mean rows and the NumPy loop; 0 for the reference itself).

    Raises:
        ValueError: no cv2 gradual-mean row (it is the page's main fill), or a method twice.
    """
    windows = window_sizes(max_window)
    names = [r.name for r in results]
    if len(set(names)) != len(names):
        raise ValueError(f"each method may appear once, got {names}")
    by_name = {r.name: r for r in results}
    main = by_name.get(METHOD_CV2)
    if main is None or main.fill is None:
        raise ValueError(f"the results must include {METHOD_CV2!r} (the main fill)")
    notes_row = by_name.get(NOTES_TORCH_METHOD)
    notes = notes_row.filled if notes_row is not None else None

    def diff(r: MethodResult) -> float | None:
        if notes is None or r.name in OTHER_METHODS:
            return None
        if r.name == NOTES_TORCH_METHOD:
            return 0.0
        d = np.abs(np.asarray(r.filled, np.float32) - notes)
        return float(np.nanmax(d)) if np.isfinite(d).any() else 0.0

    rows = tuple(
        replace(by_name[n], max_diff_vs_notes=diff(by_name[n])) for n in METHODS if n in by_name
    )
    return Comparison(rows, main.fill, windows, int(np.count_nonzero(case.mask)),
                      case.reference_kind, dict(per_scale or {}))


def compare_methods(
    case: FlowCase,
    *,
    max_window: int = 33,
    device: str = "cpu",
    repeats: int = 1,
    with_notes: bool = True,
    with_notes_numpy: bool = False,
    with_per_scale: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Comparison:
    """Fill ``case.flow`` with every method, time each on ``device`` and score it on the holes.

    Methods: the gradual mean (cv2 backend on the CPU, torch backend on ``device``), the notes'
    avg_pool2d reference (on ``device``; skipped if ``with_notes`` is False), the notes'
    original NumPy loop :func:`notes_gradual_mean_numpy` with ``max_window_size =
    max_window - 1`` (windows 32, 16, 8, 4, 2 for 33; CPU, one run; only if
    ``with_notes_numpy``, at most :data:`NOTES_NUMPY_MAX_HOLES` hole pixels, ``progress`` gets
    its ``(done, total)`` hole counts), ``cv2.inpaint`` Telea and Navier-Stokes, and
    nearest-valid fill (CPU). Each is one :func:`run_method`; :func:`combine_methods` joins them.

    Raises:
        ValueError: all-NaN flow (nothing to fill from), bad ``max_window`` or ``device``, or
            more than :data:`NOTES_NUMPY_MAX_HOLES` hole pixels with ``with_notes_numpy``.
    """
    window_sizes(max_window)
    check_fillable(case)
    _check_device(device)
    names = [METHOD_CV2, METHOD_TORCH]
    if with_notes:
        names.append(NOTES_TORCH_METHOD)
    if with_notes_numpy:
        names.append(NOTES_NUMPY_METHOD)
    names.extend(OTHER_METHODS)
    results = [
        run_method(case, n, max_window=max_window, device=device, repeats=repeats,
                   progress=progress if n == NOTES_NUMPY_METHOD else None)
        for n in names
    ]
    per_scale = scale_means(case.flow, max_window) if with_per_scale else None
    return combine_methods(case, results, max_window=max_window, per_scale=per_scale)


# --------------------------------------------------------------------------------------------
# how long the notes' reference will take: say it before it runs
# --------------------------------------------------------------------------------------------

#: Above this many pixels the page leaves the notes' avg_pool2d reference off by default
#: (480x640 and larger: seconds on a 2-core CPU, tens of seconds at 720x1280).
NOTES_REFERENCE_DEFAULT_MAX_PIXELS = 240 * 320
#: The reference's cost on this 2-core CPU, in ms per megapixel per 1000 units of sum(k**2)
#: over its windows (avg_pool2d adds k*k values per pixel, twice per window). In CPU time, like
#: :data:`METHOD_COST_MS` (torch 2.14.1, 2 threads): 5,300 at 240x320 (small flows pay a fixed
#: overhead), 2,400 at 480x640, 1,900 at max_window 129, rounded up to 8,000 so that a time
#: announced before a run is rarely too short. (Wall time on a machine busy with other work was
#: 21.5 s at 720x1280, max_window 33, i.e. ~15,600: the queue of heavy jobs keeps such runs
#: apart.) The page replaces it with its own latest measurement once the reference has run.
NOTES_REFERENCE_MS_PER_UNIT = 8_000.0


def notes_reference_on_by_default(shape: tuple[int, ...]) -> bool:
    """Whether the page runs the notes' avg_pool2d reference by default for an (H, W, ...) flow:
    only up to :data:`NOTES_REFERENCE_DEFAULT_MAX_PIXELS` pixels (240x320)."""
    return int(shape[0]) * int(shape[1]) <= NOTES_REFERENCE_DEFAULT_MAX_PIXELS


def notes_reference_work(shape: tuple[int, ...], max_window: int) -> float:
    """The reference's work in units of megapixels x sum(k**2) / 1000 over its windows.

    >>> round(notes_reference_work((1000, 1000, 2), 33), 3)  # 9+25+81+289+1089 = 1493
    1.493
    """
    h, w = int(shape[0]), int(shape[1])
    if h < 1 or w < 1:
        raise ValueError(f"shape must have a positive height and width, got {tuple(shape)}")
    return h * w / 1e6 * sum(k * k for k in window_sizes(max_window)) / 1e3


def estimate_notes_ms(
    shape: tuple[int, ...], max_window: int, ms_per_unit: float = NOTES_REFERENCE_MS_PER_UNIT
) -> float:
    """Expected time of :func:`notes_gradual_mean_torch` on an (H, W, 2) flow, from a measured
    rate in ms per :func:`notes_reference_work` unit (the page passes its latest measurement).

    >>> round(estimate_notes_ms((720, 1280, 2), 33, 15_600.0) / 1e3, 1)
    21.5
    """
    if not (math.isfinite(ms_per_unit) and ms_per_unit > 0):
        raise ValueError(f"ms_per_unit must be a positive rate, got {ms_per_unit!r}")
    return notes_reference_work(shape, max_window) * ms_per_unit


#: What every other method costs on this 2-core CPU (torch 2.14.1, OpenCV 4), in CPU
#: milliseconds, measured with ``run_method`` on random 30 % holes at 240x320, 480x640 and
#: 720x1280 with max_window 33 and 129 on a busy machine. CPU time, not wall time: it is what a
#: run takes from the class, and on an idle server the wall time is at most this. Rounded up,
#: so an announced time is rarely too short.
#: - the gradual mean: per megapixel per window size (cv2: 54 ms at 720x1280 with 5 sizes,
#:   173 ms with 7; torch: ~0.3 s of set-up, then 0.7-0.9 s at 720x1280);
#: - ``cv2.inpaint``: per hole pixel (its cost follows the holes: Telea 1.2 s and
#:   Navier-Stokes 0.9 s for 276,506 holes, both channels);
#: - the notes' NumPy loop: per hole pixel, a fixed part plus a part per window area
#:   (114 us a hole at max_window 33, 622 us at 129);
#: - nearest valid fill: per megapixel.
METHOD_COST_MS: dict[str, float] = {
    "cv2_per_mpx_window": 30.0,
    "torch_setup": 300.0,
    "torch_per_mpx_window": 150.0,
    "telea_per_hole": 4.5e-3,
    "ns_per_hole": 3.5e-3,
    "numpy_per_hole": 80e-3,
    "numpy_per_hole_area": 25e-6,
    "nearest_per_mpx": 70.0,
}


def estimate_method_ms(
    name: str,
    shape: tuple[int, ...],
    max_window: int,
    holes: int,
    *,
    notes_ms_per_unit: float = NOTES_REFERENCE_MS_PER_UNIT,
) -> float:
    """Expected milliseconds of ``run_method(case, name, max_window=max_window)`` on an
    (H, W, 2) flow ``shape`` with ``holes`` hole pixels, said before it runs.

    The notes' avg_pool2d reference uses :func:`estimate_notes_ms` at ``notes_ms_per_unit`` (the
    page passes its latest measurement); the others use :data:`METHOD_COST_MS`. The methods
    that ignore ``max_window`` (inpainting, nearest valid) ignore it here too.

    >>> round(estimate_method_ms("cv2.inpaint Telea", (720, 1280, 2), 33, 276_506))
    1244

    Raises:
        ValueError: unknown ``name``, bad ``max_window``, a shape without a positive height and
            width, or a negative hole count.
    """
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    windows = window_sizes(max_window)
    h, w = int(shape[0]), int(shape[1])
    if h < 1 or w < 1:
        raise ValueError(f"shape must have a positive height and width, got {tuple(shape)}")
    if holes < 0:
        raise ValueError(f"holes must be >= 0, got {holes!r}")
    c = METHOD_COST_MS
    mpx = h * w / 1e6
    if name == METHOD_CV2:
        return mpx * len(windows) * c["cv2_per_mpx_window"]
    if name == METHOD_TORCH:
        return c["torch_setup"] + mpx * len(windows) * c["torch_per_mpx_window"]
    if name == NOTES_TORCH_METHOD:
        return estimate_notes_ms(shape, max_window, notes_ms_per_unit)
    if name == NOTES_NUMPY_METHOD:
        area = sum(k * k for k in notes_window_sizes(max_window - 1))
        return holes * (c["numpy_per_hole"] + area * c["numpy_per_hole_area"])
    if name == "cv2.inpaint Telea":
        return holes * c["telea_per_hole"]
    if name == "cv2.inpaint Navier-Stokes":
        return holes * c["ns_per_hole"]
    return mpx * c["nearest_per_mpx"]


# --------------------------------------------------------------------------------------------
# the notes' own words: the "3 ms" claim and the window check, checked live
# --------------------------------------------------------------------------------------------

#: The notes' vectorised ``gradual_mean_pytorch`` exactly as printed at 000:80 (the notes lost
#: their indentation; only that is restored). Callouts run it to show what the notes' code does.
NOTES_GRADUAL_MEAN_PYTORCH = '''import copy
import warnings
import numpy as np
import torch
from torch.nn import functional as F


def gradual_mean_pytorch(raw_tensor, max_window_size=33):
    """
    Compute the gradual mean of a tensor using PyTorch functions.
    Args:
    raw_tensor: a PyTorch tensor of shape (batch_size, channels, height, width)
    containing the input data
    max_window_size: an integer specifying the maximum size of the filter window
    Returns:
    raw_tensor_fil: a PyTorch tensor of the same shape as raw_tensor
    containing the filtered data
    """

    # 1. Calculate filters window size
    max_iters = int(np.log2(max_window_size - 1))
    window_sizes = np.logspace(1, max_iters, max_iters, base=2, dtype=np.int64) + 1
    if window_sizes[-1] != max_window_size:
        warnings.warn(
            f"max_window_size {max_window_size} is not aligned with max filter size {window_sizes[-1]}",
            UserWarning,
        )

    # 2. Get non-nan tensor and mask
    nan_mask = torch.isnan(raw_tensor)
    valid_mask = torch.logical_not(nan_mask)
    valid_tensor = torch.nan_to_num(raw_tensor, nan=0.0)

    # 3. Smoothen non-nan tensor and mar
    filtered_tensor = torch.cat(
        [
            F.avg_pool2d(valid_tensor, ws, stride=1, padding=ws // 2)
            / F.avg_pool2d(valid_mask.float(), ws, stride=1, padding=ws // 2)
            for ws in window_sizes
        ],
        dim=0,
    )

    # 4. In case there were still nan
    valid_filtered_mask = torch.logical_not(torch.isnan(filtered_tensor))
    valid_filtered_tensor = torch.nan_to_num(filtered_tensor, nan=0.0)

    # 5. Mean merge all filtered tensor
    mean_filtered_tensor = torch.sum(
        valid_filtered_tensor, dim=0, keepdims=True
    ) / torch.sum(valid_filtered_mask, dim=0, keepdims=True)

    # 6. Replace NaN values in the input tensor
    raw_tensor_filtered = copy.deepcopy(raw_tensor)
    raw_tensor_filtered[nan_mask] = mean_filtered_tensor[nan_mask]

    if torch.sum(torch.isnan(raw_tensor_filtered)) > 0:
        print("nan still exist after filtering.")

    return raw_tensor_filtered'''  # noqa: E501 (the notes' line, as printed)

#: The notes' speed claim (000:79): "vectorised with PyTorch it gets to about 3 ms".
NOTES_CLAIM_MS = 3.0
NOTES_CLAIM_REF = "000:79"
NOTES_CLAIM_ZH = "用 pytorch 向量化一下可以到 3ms 这样"


def device_label(device: str) -> str:
    """A person's name for a torch device string: ``"cuda:0"`` -> ``"cuda:0 (NVIDIA H200)"``,
    ``"cpu"`` -> ``"CPU (AMD EPYC, 2 cores)"`` (the model from /proc/cpuinfo where there is one).
    """
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device must be 'cpu' or an available 'cuda:N', got {device!r}")
        return T("{device} (GPU: {name})", device=device,
                 name=torch.cuda.get_device_name(torch.device(device)))
    if device != "cpu":
        raise ValueError(f"device must be 'cpu' or an available 'cuda:N', got {device!r}")
    model = platform.processor() or platform.machine() or "unknown model"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return T("CPU ({model}, {cores} cores)", model=model, cores=os.cpu_count())


def notes_speed_claim(measured_ms: float, device: str, shape: tuple[int, ...]) -> str:
    """The sentence the page prints beside the notes' "about 3 ms" claim (000:79).

    Args:
        measured_ms: the measured time of the vectorised (avg_pool2d) version, in ms.
        device: where it ran (``"cpu"`` or ``"cuda:N"``).
        shape: the flow's (H, W, C).
    """
    if not (math.isfinite(measured_ms) and measured_ms > 0):
        raise ValueError(f"measured_ms must be a positive time, got {measured_ms!r}")
    h, w = shape[0], shape[1]
    # A T of T's: the page translates each part (ui: the head, the verdict, the GPU hint).
    head = T(
        "The notes give neither the flow size nor the device for their 3 ms. Here the "
        "vectorised avg_pool2d version took {ms:.1f} ms for this {h}x{w} flow on {where}: ",
        ms=measured_ms, h=h, w=w, where=device_label(device),
    )
    if measured_ms <= NOTES_CLAIM_MS:
        verdict = T("within the notes' 3 ms.")
    else:
        verdict = T("{ratio:.0f}x the notes' 3 ms.", ratio=measured_ms / NOTES_CLAIM_MS)
    extra: str = ""
    if device == "cpu" and not torch.cuda.is_available():
        extra = T(" There is no GPU on this machine, so a GPU figure cannot be measured here.")
    elif device == "cpu":
        extra = T(" Pick the GPU in the sidebar to time it there.")
    return T("{head}{verdict}{extra}", head=head, verdict=verdict, extra=extra)


_ALIGN_DEMO = """

x = torch.arange(2 * 6 * 6, dtype=torch.float32).reshape(1, 2, 6, 6)
x[0, :, 2, 3] = float("nan")
y = gradual_mean_pytorch(x, max_window_size=32)  # the notes: a warning, then it runs
print("notes' gradual_mean_pytorch(max_window_size=32): ran, NaN left:",
      int(torch.isnan(y).sum()))

from lessons.flow.fill import window_sizes  # the app

try:
    window_sizes(32)
except ValueError as err:
    print("app: ValueError:", err)
"""

_SPEED_DEMO = """

import time

device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(1, 2, 120, 160, device=device)
x[torch.rand_like(x) < 0.3] = float("nan")
gradual_mean_pytorch(x)  # warm-up
times = []
for _ in range(3):
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    gradual_mean_pytorch(x)
    if device == "cuda":
        torch.cuda.synchronize()
    times.append((time.perf_counter() - t0) * 1e3)
print(f"device={device} flow=1x2x120x160 median={sorted(times)[1]:.2f} ms")
"""


def _align_callout() -> NotesCallout:
    run = run_live(NOTES_GRADUAL_MEAN_PYTORCH + _ALIGN_DEMO)
    warned = re.search(r"not aligned with max filter size (\d+)", run.output)
    ran = "ran, NaN left" in run.output
    refused = "app: ValueError:" in run.output
    today_args: tuple[tuple[str, str], ...] = ()
    if warned and ran and refused:
        today = N_(
            "Today the notes' function still only warns ('max_window_size 32 is not aligned "
            "with max filter size {k}') and then fills with windows up to {k}x{k}, a smaller "
            "experiment than the one asked for. The app refuses 32 with a ValueError that asks "
            "for 2**k + 1 (3, 5, 9, 17, 33, ...), so a page never runs other windows than it "
            "shows."
        )
        today_args = (("k", warned[1]),)
        verdict = "differs from the app"
    elif run.raised:
        today = N_("Today the notes' function does not get that far: {error}.")
        today_args = (("error", str(run.error)),)
        verdict = "out of date"
    elif not warned and ran:
        today = N_("Today the notes' function runs on 32 without a warning; the app still "
                   "refuses it.")
        verdict = "differs from the app"
    else:
        today = N_("Unexpected result, see the run below: {transcript}")
        today_args = (("transcript", run.transcript),)
        verdict = "differs from the app"
    return NotesCallout(
        key="flow_max_window_not_aligned",
        title=N_("gradual_mean_pytorch warns and carries on when max_window is not 2**k + 1"),
        ref=NotesRef.parse("000:80"),
        quote_zh="if window_sizes[-1] != max_window_size:\n    warnings.warn(",
        gloss_en=(
            "If the largest window it can build (2**k + 1) is not the max_window_size asked "
            "for, the function issues a UserWarning and goes on with the smaller windows."
        ),
        verdict=verdict,
        today=today,
        today_args=today_args,
        run=run,
    )


_SPEED_WITHIN = N_(
    "The notes' own function takes {ms} ms on a 120x160 two-channel flow on {where}: within "
    "the notes' 3 ms. The notes name neither the frame size nor the device, and the time grows "
    "with both the pixel count and the windows (avg_pool2d adds k*k values per pixel: {adds} "
    "per pixel and channel for windows 3 to 33), so the 3 ms cannot be reproduced from the "
    "notes alone."
)
_SPEED_WITHIN_NO_GPU = N_(
    "The notes' own function takes {ms} ms on a 120x160 two-channel flow on CPU ({model}, "
    "{cores} cores): within the notes' 3 ms. The notes name neither the frame size nor the "
    "device, and the time grows with both the pixel count and the windows (avg_pool2d adds "
    "k*k values per pixel: {adds} per pixel and channel for windows 3 to 33), so the 3 ms "
    "cannot be reproduced from the notes alone. There is no GPU on this machine to try it on."
)
_SPEED_SLOWER = N_(
    "The notes' own function takes {ms} ms on a 120x160 two-channel flow on {where}: {ratio}x "
    "slower than the notes' 3 ms. The notes name neither the frame size nor the device, and the "
    "time grows with both the pixel count and the windows (avg_pool2d adds k*k values per "
    "pixel: {adds} per pixel and channel for windows 3 to 33), so the 3 ms cannot be "
    "reproduced from the notes alone."
)
_SPEED_SLOWER_NO_GPU = N_(
    "The notes' own function takes {ms} ms on a 120x160 two-channel flow on CPU ({model}, "
    "{cores} cores): {ratio}x slower than the notes' 3 ms. The notes name neither the frame "
    "size nor the device, and the time grows with both the pixel count and the windows "
    "(avg_pool2d adds k*k values per pixel: {adds} per pixel and channel for windows 3 to "
    "33), so the 3 ms cannot be reproduced from the notes alone. There is no GPU on this "
    "machine to try it on."
)


def _speed_callout() -> NotesCallout:
    run = run_live(NOTES_GRADUAL_MEAN_PYTORCH + _SPEED_DEMO)
    found = re.search(r"device=(\w+) flow=\S+ median=([\d.]+) ms", run.output)
    if found is None:
        today = N_("The timing did not run: {transcript}")
        today_args: tuple[tuple[str, str], ...] = (("transcript", run.transcript),)
    else:
        ms = float(found[2])
        where = device_label("cuda:0" if found[1] == "cuda" else "cpu")
        no_gpu = found[1] == "cpu" and not torch.cuda.is_available()
        # One catalog message per case (the callout translates ``today`` as one template).
        if ms <= NOTES_CLAIM_MS and no_gpu:
            today = _SPEED_WITHIN_NO_GPU
        elif ms <= NOTES_CLAIM_MS:
            today = _SPEED_WITHIN
        elif no_gpu:
            today = _SPEED_SLOWER_NO_GPU
        else:
            today = _SPEED_SLOWER
        today_args = (
            ("ms", f"{ms:.1f}"), ("where", str(where)),
            *((key, str(where.args[key])) for key in ("model", "cores") if no_gpu),
            ("ratio", f"{ms / NOTES_CLAIM_MS:.0f}"),
            ("adds", f"{sum(k * k for k in window_sizes(33)):,}"),
        )
    return NotesCallout(
        key="flow_three_ms",
        title=N_("'Vectorised with PyTorch it gets to about 3 ms': at what size, on what device?"),
        ref=NotesRef.parse(NOTES_CLAIM_REF),
        quote_zh=NOTES_CLAIM_ZH,
        gloss_en="Vectorised with PyTorch, it gets down to about 3 ms.",
        verdict="incomplete",
        today=today,
        today_args=today_args,
        run=run,
    )


def notes_callouts() -> list[NotesCallout]:
    """The Flow page's "the notes say / PyTorch today does" checks, each from a live run."""
    return [_align_callout(), _speed_callout()]


# --------------------------------------------------------------------------------------------
# snippet
# --------------------------------------------------------------------------------------------

_SNIPPET_FILL = '''

def gradual_mean_fill(flow, max_window={max_window}):
    """Fill NaN with the average, over windows 3, 5, 9, ..., max_window, of the masked box mean."""
    valid = ~np.isnan(flow)
    x0 = np.where(valid, flow, 0).astype(np.float32)  # NaN -> 0 before summing
    v = valid.astype(np.float32)
    total = np.zeros_like(x0)
    count = np.zeros_like(x0)
    k = 3
    while k <= max_window:
        box = dict(ddepth=-1, ksize=(k, k), normalize=False, borderType=cv2.BORDER_CONSTANT)
        num = cv2.boxFilter(x0, **box)  # sum of the valid values in the k x k window
        den = cv2.boxFilter(v, **box)  # how many valid values
        ok = den > 0.5
        total += np.where(ok, num / np.maximum(den, 1), 0)
        count += ok
        k = 2 * k - 1  # 3, 5, 9, 17, 33, ...
    fill = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return np.where(valid, flow, fill)  # replace only the holes


filled = gradual_mean_fill(flow, {max_window})
unfilled = int(np.isnan(filled).sum())  # no valid value within the largest window
print(f"filled {{int(np.isnan(flow).sum()) - unfilled}} hole values, {{unfilled}} left NaN")
'''


_SNIPPET_NOTES_NUMPY = '''
from lessons.flow.fill import (
    endpoint_error,
    epe_stats,
    notes_gradual_mean_numpy,
    notes_gradual_mean_torch,
)

notes_loop = notes_gradual_mean_numpy(flow, {size})  # notes 000:79, windows {sizes}
vectorised = notes_gradual_mean_torch(flow, {max_window})  # avg_pool2d, windows {windows}
holes = np.isnan(flow).any(axis=2)
print("NaN left by the notes' loop:", int(np.isnan(notes_loop).sum()))
{compare}'''

_SNIPPET_NOTES_NUMPY_EPE = '''
for name, filled in (("notes' loop", notes_loop), ("avg_pool2d", vectorised)):
    mean_epe, median_epe = epe_stats(endpoint_error(filled, case.reference), holes)
    print(f"{name}: mean EPE on the holes {mean_epe:.3f} px")
'''

_SNIPPET_NOTES_NUMPY_DIFF = '''print("largest |difference| on the holes:",
      float(np.nanmax(np.abs(notes_loop - vectorised)[holes], initial=0.0)))
'''


def notes_numpy_snippet_for(
    spec: FlowSpec | None, max_window: int = 33, *, upload_name: str | None = None
) -> str:
    """Python code that runs the notes' NumPy loop beside the avg_pool2d version on the page's
    flow and prints their EPE against the reference (or their difference, for an upload).

    Args and the runnable setting are those of :func:`snippet_for`; the loop uses
    ``max_window_size = max_window - 1`` (32, 16, 8, 4, 2 for 33), as the page does.
    """
    windows = window_sizes(max_window)
    head = _snippet_head(spec, upload_name)
    has_reference = spec is not None
    return head + _SNIPPET_NOTES_NUMPY.format(
        size=max_window - 1,
        sizes=", ".join(map(str, notes_window_sizes(max_window - 1))),
        max_window=max_window,
        windows=", ".join(map(str, windows)),
        compare=_SNIPPET_NOTES_NUMPY_EPE if has_reference else _SNIPPET_NOTES_NUMPY_DIFF,
    )


def _snippet_head(spec: FlowSpec | None, upload_name: str | None) -> str:
    head = "import cv2\nimport numpy as np\n\n"
    if spec is not None:
        return head + (
            "from lessons.flow.fill import FlowSpec, build_flow\n\n"
            f"case = build_flow({spec!r})\n"
            "flow = case.flow  # (H, W, 2) float32, NaN = hole\n"
        )
    name = upload_name or "my_flow.flo"
    safe = name if name.replace(".", "").replace("_", "").replace("-", "").isalnum() else (
        "my_flow" + Path(name).suffix
    )
    return head + (
        "from lessons.flow.fill import load_flow_file\n\n"
        f"with open({safe!r}, 'rb') as f:\n"
        f"    flow = load_flow_file({safe!r}, f.read())  # (H, W, 2) float32, NaN = hole\n"
    )


def snippet_for(
    spec: FlowSpec | None, max_window: int = 33, *, upload_name: str | None = None
) -> str:
    """Python code that rebuilds the page's flow and fills it with plain NumPy + OpenCV.

    Args:
        spec: the built-in case, or None for an uploaded file/pair.
        max_window: largest window, ``2**k + 1``.
        upload_name: the uploaded file name (used when ``spec`` is None).

    Returns:
        Source text that defines ``flow`` and ``filled``; runnable from the repository root
        (for an upload, after saving the file next to it).
    """
    window_sizes(max_window)
    return _snippet_head(spec, upload_name) + _SNIPPET_FILL.format(max_window=max_window)


def flow_to_rgb(*flows: np.ndarray) -> list[np.ndarray]:
    """Colour-wheel pictures of flows with ONE shared scale (``torchvision.utils.flow_to_image``).

    Args:
        flows: (H, W, 2) float arrays of the same shape; NaN marks a hole.

    Returns:
        One (H, W, 3) uint8 RGB image per flow; holes are drawn black.
    """
    from torchvision.utils import flow_to_image

    if not flows:
        return []
    shape = flows[0].shape
    for f in flows:
        if f.shape != shape or f.ndim != 3 or f.shape[2] != 2:
            raise ValueError(f"flows must all be (H, W, 2) of one shape, got {f.shape}")
    batch = np.stack([np.nan_to_num(np.asarray(f, np.float32), nan=0.0) for f in flows])
    # one call on the whole batch: flow_to_image normalises by the batch's largest vector
    imgs = flow_to_image(torch.from_numpy(batch).permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    out = imgs.numpy().copy()
    for i, f in enumerate(flows):
        out[i][np.isnan(f).any(axis=2)] = 0
    return list(out)
