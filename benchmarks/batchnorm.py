"""BatchNorm explorer benchmark: the hand-written BatchNorm vs nn.BatchNorm2d, and simulate().

Run: python -m benchmarks.batchnorm  (CPU; prints timings, ratios and the parity error)
"""

from __future__ import annotations

import time

import torch
from torch import nn

from lessons.batchnorm.layer import BNState, manual_batchnorm, simulate
from lessons.batchnorm.stream import Stream


def best_of(fn, repeats: int = 30) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]  # median: the machine may be shared


def main() -> None:
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    for shape in [(16, 3, 4, 4), (64, 16, 32, 32), (32, 64, 56, 56)]:
        x = torch.randn(shape) * 3 + 2
        module = nn.BatchNorm2d(shape[1])
        state = BNState.fresh(shape[1])
        with torch.no_grad():
            t_torch = best_of(lambda m=module, x=x: m(x))
            t_manual = best_of(
                lambda m=module, x=x, s=state: manual_batchnorm(
                    x, s, training=True, momentum=0.1, eps=1e-5, weight=m.weight, bias=m.bias))
            ref = nn.BatchNorm2d(shape[1])(x)
            y, _ = manual_batchnorm(x, state, training=True, momentum=0.1, eps=1e-5)
        err = (y - ref).abs().max().item()
        print(f"train forward {str(shape):>18}: nn.BatchNorm2d {t_torch * 1e3:8.3f} ms, "
              f"manual {t_manual * 1e3:8.3f} ms, ratio {t_manual / t_torch:5.2f}x, "
              f"max |diff| {err:.1e}")
    stream = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))
    for steps in (100, 1000):
        start = time.perf_counter()
        simulate(stream, steps, 16, spatial=(4, 4))
        elapsed = time.perf_counter() - start
        print(f"simulate default page settings, {steps:4d} steps: {elapsed * 1e3:8.1f} ms "
              f"({elapsed / steps * 1e6:.0f} us/step)")


if __name__ == "__main__":
    main()
