"""Time cv2.warpAffine vs affine_grid + grid_sample at 1920x1080, and print their agreement.

Run: ``python -m benchmarks.warp [--repeats N]``. Uses the CPU, and CUDA too when PyTorch
sees a GPU (timed with torch.cuda.synchronize() around every measurement).
"""

from __future__ import annotations

import argparse

import cv2
import numpy as np
import torch

from lessons.warp.affine import compare_warps
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.theta import notes_shift_px
from lessons.warp.timing import time_warps
from lessons.warp.validation import INTERPOLATIONS

W, H = 1920, 1080


def test_image(h: int, w: int) -> np.ndarray:
    """(h, w, 3) uint8: gradient plus low-frequency sinusoids, with a grid of sharp lines."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    u, v = xx / (w - 1), yy / (h - 1)
    img = np.stack(
        [
            40 + 150 * u + 50 * v,
            128 + 80 * np.sin(2 * np.pi * 3 * u) * np.cos(2 * np.pi * 2 * v),
            200 - 120 * v + 30 * np.sin(2 * np.pi * 4 * (u + v)),
        ],
        -1,
    )
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


TRANSFORMS = {
    "rotate 30, scale 1.3 (facts.md case)": dict(angle_deg=30, scale=1.3),
    "rotate -75, scale 0.5, shear 0.3": dict(angle_deg=-75, scale=0.5, shear_x=0.3),
    "rotate 170, scale 2.5, shear -0.2/0.4": dict(
        angle_deg=170, scale=2.5, shear_x=-0.2, shear_y=0.4
    ),
    "scale 0.8 only": dict(scale=0.8),
    "translate (+37.25, -12.5) px only": dict(tx=37.25, ty=-12.5),
}


def accuracy_table() -> None:
    img = test_image(240, 320)
    dsize = (300, 260)  # differs from the 320x240 input
    print(
        f"\nInterior error vs cv2.warpAffine, uint8 grey levels, 320x240 -> {dsize[0]}x{dsize[1]}"
    )
    print(
        f"{'transform':42s} {'align':>5s}  {'correct mean/max':>18s}  {'notes mean/max':>16s}"
        f"  {'shift px':>8s}"
    )
    for name, params in TRANSFORMS.items():
        M = matrix_from_params(**params, center=(159.5, 119.5))
        shift = float(np.hypot(*notes_shift_px(M)))
        for align in (False, True):
            good = compare_warps(img, M, dsize, align_corners=align).errors
            bad = compare_warps(img, M, dsize, align_corners=align, notes=True).errors
            print(
                f"{name:42s} {str(align):>5s}  {good.mean_interior:9.4f} / {good.max_interior:4.0f}"
                f"  {bad.mean_interior:8.3f} / {bad.max_interior:4.0f}  {shift:8.3f}"
            )


def timing_table(repeats: int) -> None:
    img = test_image(H, W)
    M = matrix_from_params(30, 1.3, 0.1, 0, 20, -10, center=((W - 1) / 2, (H - 1) / 2))
    devices = ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    print(
        f"\nTiming at {W}x{H} -> {W}x{H}, uint8 RGB, median of {repeats} "
        f"(torch threads: {torch.get_num_threads()}, cv2 threads: {cv2.getNumThreads()})"
    )
    print(
        f"{'device':7s} {'mode':9s} {'padding':10s} {'cv2 ms':>8s} {'torch e2e ms':>13s} "
        f"{'kernel ms':>10s} {'e2e/cv2':>8s}"
    )
    for device in devices:
        for mode in INTERPOLATIONS:
            for padding in ("zeros", "reflection"):
                t = time_warps(
                    img,
                    M,
                    (W, H),
                    mode=mode,
                    padding_mode=padding,
                    device=device,
                    repeats=repeats,
                )
                print(
                    f"{device:7s} {mode:9s} {padding:10s} {t.cv2_ms:8.2f} {t.torch_ms:13.2f} "
                    f"{t.torch_kernel_ms:10.2f} {t.ratio:7.1f}x"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"torch {torch.__version__}, OpenCV {cv2.__version__}, "
        f"CUDA available: {torch.cuda.is_available()}"
    )
    accuracy_table()
    timing_table(args.repeats)


if __name__ == "__main__":
    main()
