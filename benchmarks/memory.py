"""What one memory sample costs (budget: 2 ms), and how fast the allocator simulator runs.

Run: ``python -m benchmarks.memory``
"""

from __future__ import annotations

import random
import statistics
import time

from lessons.memory import gpu_memory
from lessons.memory.allocator_sim import CachingAllocatorSim, GiB, SimulatedOutOfMemory
from lessons.memory.backends import SimulatedGpu, TensorLedger, allocate

BUDGET_S = 2e-3


def timed(fn, repeats: int) -> list[float]:
    fn()  # warm-up (NVML start, imports)
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def show(name: str, times: list[float]) -> None:
    times = sorted(times)
    median = statistics.median(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"{name:<34} median {median * 1e3:8.4f} ms   p95 {p95 * 1e3:8.4f} ms   "
        f"budget ratio (median / 2 ms) {median / BUDGET_S:6.3f}"
    )


def main() -> None:
    torch_reading = gpu_memory.read_torch()
    nvml_reading = gpu_memory.read_nvml()
    print(f"torch source: {'available' if torch_reading.available else torch_reading.reason}")
    print(f"NVML source:  {'available' if nvml_reading.available else nvml_reading.reason}")
    show("gpu_memory.read_torch()", timed(gpu_memory.read_torch, 2000))
    show("gpu_memory.read_nvml()", timed(gpu_memory.read_nvml, 2000))
    show("gpu_memory.sample() (both)", timed(gpu_memory.sample, 2000))

    def uncached_nvml() -> None:
        gpu_memory.reset_nvml()
        gpu_memory.read_nvml()

    show("read_nvml() with a fresh NVML start", timed(uncached_nvml, 200))
    gpu_memory.reset_nvml()

    gpu, ledger = SimulatedGpu(24), TensorLedger()
    rng = random.Random(0)
    for _ in range(200):
        allocate(gpu, ledger, rng.randint(1, 50_000_000))
    show("SimulatedGpu.state() (200 tensors)", timed(gpu.state, 500))
    show("SimulatedGpu.snapshot()", timed(gpu.snapshot, 500))

    sim = CachingAllocatorSim(24 * GiB)
    live: list[int] = []
    ops = 20_000
    start = time.perf_counter()
    for _ in range(ops):
        if live and rng.random() < 0.45:
            sim.free(live.pop(rng.randrange(len(live))))
        else:
            try:
                live.append(sim.malloc(int(10 ** rng.uniform(0, 8.3))))
            except SimulatedOutOfMemory:
                sim.empty_cache()
        if rng.random() < 0.01:
            sim.empty_cache()
    elapsed = time.perf_counter() - start
    print(
        f"CachingAllocatorSim: {ops} random ops in {elapsed:.3f} s = {ops / elapsed:,.0f} ops/s "
        f"({len(live)} live blocks, {sim.segment_count} segments at the end)"
    )


if __name__ == "__main__":
    main()
