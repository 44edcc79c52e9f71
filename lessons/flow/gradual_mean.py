"""The notes' hole-filling method, fast: the average over scales of masked box means.

The method (from the project notes): for every channel separately, and for every odd window size
``k`` in ``3, 5, 9, 17, 33, ...`` (``2**j + 1`` up to ``max_window``), take the zero-padded masked
box mean ``sum(box(x * valid)) / sum(box(valid))``; average those means over the scales whose window
holds at least one valid sample; replace only the NaN values. A hole with no valid sample inside the
largest window stays NaN and is counted in :attr:`FillResult.unfilled`.

:func:`gradual_mean_fill` runs it with an OpenCV backend (``cv2.boxFilter``) or a torch backend
(CPU or CUDA, summed-area table gathered only at the holes); :func:`scale_means` gives each scale's
mean on its own. The checks every flow function shares (:func:`window_sizes`,
:func:`as_numpy_hwc`, :func:`validate_flow`) are here too. The slow versions the fast one is
measured against are in :mod:`lessons.flow.references`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np
import torch

Backend = Literal["auto", "cv2", "torch"]
BACKENDS: tuple[str, ...] = ("auto", "cv2", "torch")


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


def as_numpy_hwc(flow: np.ndarray | torch.Tensor, name: str = "flow") -> np.ndarray:
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
    check_hwc(arr.shape, arr.dtype, name)
    return arr


def validate_flow(flow: np.ndarray | torch.Tensor) -> None:
    """Shape/dtype/finiteness checks shared by the fill functions (no device copies)."""
    if isinstance(flow, torch.Tensor):
        check_hwc(tuple(flow.shape), None, "flow")
        if not flow.is_floating_point():
            raise ValueError(f"flow must be a floating-point tensor, got dtype {flow.dtype}")
        if bool(torch.isinf(flow).any()):
            raise ValueError("flow contains infinite values; only NaN may mark a hole")
    else:
        arr = as_numpy_hwc(flow)
        if np.isinf(arr).any():
            raise ValueError("flow contains infinite values; only NaN may mark a hole")


def check_hwc(shape: tuple[int, ...], dtype: object, name: str) -> None:
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
    validate_flow(flow)
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
    x = np.ascontiguousarray(as_numpy_hwc(flow), dtype=np.float32)
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
