"""The slow versions the fast fill is measured against, and the notes' first method.

* :func:`notes_gradual_mean_torch` -- **the reference**: the method of the notes' ``F.avg_pool2d``
  version (``count_include_pad=True``, stride 1, padding ``k // 2``), slow on a CPU; its
  docstring lists where it differs from the notes' code as printed.
* :func:`loop_reference` -- a plain per-pixel Python loop of the same definition, for tests on
  tiny inputs.
* :func:`notes_gradual_mean_numpy` -- *not* the same definition: the notes' first, per-pixel
  NumPy ``gradual_mean`` (000:79), reproduced bit for bit with its quirks (windows 32, 16, 8, 4, 2
  that are not centred, a zero border, an early break that leaves holes NaN, in-place sequential
  filling). It is far less accurate on smooth fields; the page shows by how much. The notes' code
  as printed is :mod:`lessons.flow.notes_as_printed`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from lessons.flow.gradual_mean import as_numpy_hwc, check_hwc, validate_flow, window_sizes


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
    validate_flow(flow)
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
    x = as_numpy_hwc(flow).astype(np.float64)
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
    check_hwc(flow.shape, flow.dtype, "flow")
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
