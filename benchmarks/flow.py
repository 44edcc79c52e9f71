"""Benchmark: NaN filling of a 1920x1080x2 flow with 30% random holes, max_window=33.

Run from the repository root:  python -m benchmarks.flow [--repeats N] [--notes-repeats N]

Prints the median milliseconds of the notes' avg_pool2d version (CPU), each backend of
lessons.flow.gradual_mean.gradual_mean_fill, a straightforward cv2.boxFilter rewrite (for context),
cv2.inpaint on both channels and the filtering floor (five 4-channel cv2.boxFilter passes), plus
the ratios notes/best and best/floor, and checks that every backend matches the notes to 1e-5.

The notes' original NumPy loop (000:79, one hole pixel at a time) would take minutes at 1080p, so
it runs on a top-left crop (``--numpy-crop``, default 120x160) of the same flow, once as
lessons.flow.references.notes_gradual_mean_numpy and once as the notes printed it
(lessons/flow/notes_as_printed.py, whose crop_rect pads the whole image for every window); the two
must agree bit for bit. Its 1080p time is extrapolated linearly from the time per hole pixel.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable

import cv2
import numpy as np
import torch

from lessons.flow import notes_as_printed
from lessons.flow.baselines import inpaint_fill
from lessons.flow.gradual_mean import gradual_mean_fill, window_sizes
from lessons.flow.references import notes_gradual_mean_numpy, notes_gradual_mean_torch

H, W, C = 1080, 1920, 2
HOLE_FRACTION = 0.3
MAX_WINDOW = 33


def plain_cv2_rewrite(flow: np.ndarray, max_window: int = 33) -> np.ndarray:
    """The obvious OpenCV translation of the notes (same output), for context."""
    valid = ~np.isnan(flow)
    x0 = np.where(valid, flow, 0).astype(np.float32)
    v = valid.astype(np.float32)
    total = np.zeros_like(x0)
    count = np.zeros_like(x0)
    for k in window_sizes(max_window):
        num = cv2.boxFilter(x0, -1, (k, k), normalize=False, borderType=cv2.BORDER_CONSTANT)
        den = cv2.boxFilter(v, -1, (k, k), normalize=False, borderType=cv2.BORDER_CONSTANT)
        ok = den > 0.5
        total += np.where(ok, num / np.maximum(den, 1), 0)
        count += ok
    fill = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return np.where(valid, flow, fill)


def median_ms(fn: Callable[[], object], repeats: int, *, sync: bool = False) -> float:
    fn()  # warm-up (allocator, thread pools, CUDA context)
    times = []
    for _ in range(repeats):
        if sync:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11, help="runs per fast method")
    parser.add_argument("--notes-repeats", type=int, default=3, help="runs of the slow ones")
    parser.add_argument("--numpy-crop", default="120x160",
                        help="HxW top-left crop for the notes' NumPy loop (per-pixel Python)")
    args = parser.parse_args()
    crop_h, crop_w = (int(v) for v in args.numpy_crop.lower().split("x"))
    if not (1 <= crop_h <= H and 1 <= crop_w <= W):
        parser.error(f"--numpy-crop must be HxW within {H}x{W}, got {args.numpy_crop!r}")

    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    flow = np.stack([0.01 * (xx - W / 2), -0.01 * (yy - H / 2)], axis=2).astype(np.float32)
    flow += rng.normal(0, 0.3, flow.shape).astype(np.float32)
    flow[rng.random((H, W)) < HOLE_FRACTION] = np.nan

    print(f"flow {H}x{W}x{C} float32, {np.isnan(flow[..., 0]).mean():.1%} random holes, "
          f"max_window={MAX_WINDOW} (windows {window_sizes(MAX_WINDOW)})")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads), cv2 {cv2.__version__} "
          f"({cv2.getNumThreads()} threads), CUDA: {torch.cuda.is_available()}")

    reference = notes_gradual_mean_torch(flow, MAX_WINDOW)
    results: dict[str, float] = {}
    results["notes avg_pool2d (CPU, reference)"] = median_ms(
        lambda: notes_gradual_mean_torch(flow, MAX_WINDOW), args.notes_repeats
    )

    backends: dict[str, Callable[[], object]] = {
        "gradual_mean_fill backend=cv2": lambda: gradual_mean_fill(flow, MAX_WINDOW,
                                                                   backend="cv2"),
        "gradual_mean_fill backend=torch (cpu)": lambda: gradual_mean_fill(
            flow, MAX_WINDOW, backend="torch"),
    }
    if torch.cuda.is_available():
        flow_cuda = torch.from_numpy(flow).cuda()
        backends["gradual_mean_fill backend=torch (cuda)"] = lambda: gradual_mean_fill(
            flow_cuda, MAX_WINDOW, backend="torch")
        results["notes avg_pool2d (cuda)"] = median_ms(
            lambda: notes_gradual_mean_torch(flow_cuda, MAX_WINDOW), args.repeats, sync=True)

    worst = 0.0
    for name, fn in backends.items():
        out = fn().filled  # type: ignore[attr-defined]
        out = out.cpu().numpy() if isinstance(out, torch.Tensor) else out
        same_nan = np.array_equal(np.isnan(out), np.isnan(reference))
        diff = float(np.nanmax(np.abs(out - reference)))
        worst = max(worst, diff)
        print(f"  check {name}: max |diff| vs notes = {diff:.2e}, same NaN pattern: {same_nan}")
        if diff > 1e-5 or not same_nan:
            raise SystemExit(f"{name} does not match the notes' output")
        results[name] = median_ms(fn, args.repeats, sync="cuda" in name)

    plain = plain_cv2_rewrite(flow, MAX_WINDOW)
    print(f"  check plain cv2 rewrite: max |diff| vs notes = "
          f"{float(np.nanmax(np.abs(plain - reference))):.2e}")
    results["plain cv2.boxFilter rewrite (context)"] = median_ms(
        lambda: plain_cv2_rewrite(flow, MAX_WINDOW), max(3, args.repeats // 2))
    results["cv2.inpaint Telea (both channels)"] = median_ms(
        lambda: inpaint_fill(flow, "telea"), args.notes_repeats)
    results["cv2.inpaint Navier-Stokes (both channels)"] = median_ms(
        lambda: inpaint_fill(flow, "ns"), args.notes_repeats)

    crop = np.ascontiguousarray(flow[:crop_h, :crop_w])
    crop_holes = int(np.isnan(crop).any(axis=2).sum())
    t0 = time.perf_counter()
    ours = notes_gradual_mean_numpy(crop, MAX_WINDOW - 1)
    numpy_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-NaN window
        printed = notes_as_printed.gradual_mean(crop, max_window_size=MAX_WINDOW - 1)
    printed_ms = (time.perf_counter() - t0) * 1e3
    same = ours.tobytes() == printed.tobytes()
    print(f"  check notes' NumPy loop vs the notes' code as printed on the {crop_h}x{crop_w} "
          f"crop: bit for bit {same}")
    if not same:
        raise SystemExit("notes_gradual_mean_numpy does not reproduce the notes' code")
    hole_pixels = int(np.isnan(flow).any(axis=2).sum())
    per_hole_ms = numpy_ms / max(crop_holes, 1)
    crop_name = f"{crop_h}x{crop_w} crop, {crop_holes} holes, 1 run"
    results[f"notes' NumPy loop ({crop_name})"] = numpy_ms
    results[f"  as printed (crop_rect pads its whole input per window; {crop_name})"] = (
        printed_ms)
    results["  notes' NumPy loop at 1080p, extrapolated per hole pixel"] = (
        per_hole_ms * hole_pixels)

    four = np.zeros((H, W, 4), np.float32)

    def floor() -> None:
        for k in window_sizes(MAX_WINDOW):
            cv2.boxFilter(four, -1, (k, k), normalize=False, borderType=cv2.BORDER_CONSTANT)

    results["floor: five 4-channel cv2.boxFilter passes"] = median_ms(floor, args.repeats)

    print()
    width = max(len(k) for k in results)
    for name, ms in results.items():
        print(f"{name:<{width}}  {ms:10.1f} ms")
    cpu_backends = {k: v for k, v in results.items()
                    if k.startswith("gradual_mean_fill") and "cuda" not in k}
    best_name = min(cpu_backends, key=cpu_backends.__getitem__)
    best = cpu_backends[best_name]
    notes = results["notes avg_pool2d (CPU, reference)"]
    print()
    print(f"best CPU backend: {best_name} ({best:.1f} ms), max |diff| vs notes {worst:.1e}")
    print(f"ratio notes/best            = {notes / best:6.1f}x  (target >= 25x)")
    print(f"ratio plain rewrite/best    = "
          f"{results['plain cv2.boxFilter rewrite (context)'] / best:6.2f}x")
    print(f"ratio best/floor            = "
          f"{best / results['floor: five 4-channel cv2.boxFilter passes']:6.2f}x  (1.0 = floor)")
    print(f"notes avg_pool2d at 1080p   = {notes:.1f} ms on the CPU (the notes claim about "
          "3 ms, 000:79, with no size or device)")
    if "gradual_mean_fill backend=torch (cuda)" in results:
        print(f"CUDA backend at 1080p       = "
              f"{results['gradual_mean_fill backend=torch (cuda)']:.2f} ms "
              "(the notes claim about 3 ms)")


if __name__ == "__main__":
    main()
