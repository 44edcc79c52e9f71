"""Both warps timed on the current image: cv2.warpAffine on the CPU, the torch path on a device.

On CUDA, ``torch.cuda.synchronize()`` runs before the clock starts and before it stops: CUDA
calls return before their kernel has finished.

Nothing here imports Streamlit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from lessons.warp.affine import cv2_flags, warp_affine, warp_affine_cv2, writable
from lessons.warp.theta import affine_to_theta
from lessons.warp.validation import (
    validate_affine,
    validate_device,
    validate_dsize,
    validate_image,
    validate_modes,
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


def _median_ms(fn: Callable[[], object], repeats: int, sync: Callable[[], None]) -> float:
    """The median of ``repeats`` timed calls of ``fn`` in milliseconds, after one warm-up;
    ``sync`` runs before the clock starts and before it stops."""
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
    validate_modes(mode, padding_mode)
    dev = validate_device(device)
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
    x = torch.from_numpy(writable(img3)).to(dev).permute(2, 0, 1)[None].to(dtype)
    theta = affine_to_theta(m, img3.shape[:2], (h, w), align_corners).to(dev, dtype)

    def kernel() -> torch.Tensor:
        with torch.no_grad():
            grid = F.affine_grid(theta, [1, x.shape[1], h, w], align_corners=align_corners)
            return F.grid_sample(
                x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners
            )

    kernel_ms = _median_ms(kernel, repeats, sync)
    return WarpTiming(str(dev), int(repeats), (w, h), cv2_ms, torch_ms, kernel_ms)
