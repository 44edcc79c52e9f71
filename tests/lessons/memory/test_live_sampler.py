"""lessons.memory.live_sampler: one device read per tick for every viewer, nothing when
nobody watches."""

from __future__ import annotations

import threading
import time

import pytest

from lessons.memory.backends import SimulatedGpu
from lessons.memory.live_sampler import MIN_INTERVAL_S, LiveSampler

TICK = 0.05


class CountingDevice:
    """A simulated GPU whose reads are counted (the sampler's only cost that grows)."""

    def __init__(self) -> None:
        self.gpu = SimulatedGpu(8)
        self.reads = 0
        self.fail = False

    def read(self):
        self.reads += 1
        if self.fail:
            raise RuntimeError("NVML: GPU is lost")
        return [self.gpu.state()]


@pytest.fixture
def device():
    return CountingDevice()


def _sampler(device, **kw) -> LiveSampler:
    kw.setdefault("interval_s", TICK)
    kw.setdefault("idle_stop_s", 0.3)
    return LiveSampler(device.read, floor_s=0.01, **kw)


def test_fifty_viewers_cost_one_read_per_tick(device):
    sampler = _sampler(device)
    stop = time.monotonic() + 0.6
    seen: list[int] = []

    def viewer():
        while time.monotonic() < stop:
            seen.append(len(sampler.points(60.0)))
            time.sleep(0.01)

    threads = [threading.Thread(target=viewer) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sampler.close()
    # ~0.6 s / 0.05 s = 12 ticks (+ the first read, + a reader racing the start): not 50 x 60
    assert 5 <= device.reads <= 20, device.reads
    assert min(seen) >= 1 and max(seen) <= device.reads  # every viewer saw the shared points


def test_stops_when_nobody_reads_and_restarts(device):
    sampler = _sampler(device)
    assert len(sampler.points(60.0)) == 1  # a point at once, read in the caller's thread
    assert sampler.running
    time.sleep(0.6)  # idle_stop_s = 0.3: the thread has ended
    assert not sampler.running
    reads = device.reads
    time.sleep(0.2)
    assert device.reads == reads  # a class that left costs nothing
    assert len(sampler.points(60.0)) > 1 and sampler.running  # the next viewer restarts it
    sampler.close()


def test_history_is_bounded_by_keep_s(device):
    clock = [1000.0]
    sampler = LiveSampler(device.read, interval_s=TICK, floor_s=0.01, keep_s=10.0,
                          clock=lambda: clock[0])
    sampler.points(60.0)
    for _ in range(30):
        clock[0] += 1.0
        sampler._sample_once()
    sampler.close()
    times = [p.t for p in sampler.points(1e9)]
    assert min(times) >= clock[0] - 10.0 and len(times) == 11


def test_a_failing_read_is_reported_and_retried(device):
    sampler = _sampler(device)
    sampler.points(60.0)
    device.fail = True
    time.sleep(0.2)
    assert sampler.error == "RuntimeError: NVML: GPU is lost"
    assert sampler.running  # the sampler survives a lost device
    device.fail = False
    time.sleep(0.2)
    assert sampler.error is None and sampler.latest()
    sampler.close()


def test_interval_floor():
    with pytest.raises(ValueError, match=r"at least 1 s.*got 0\.25"):
        LiveSampler(lambda: [], interval_s=0.25)
    assert MIN_INTERVAL_S == 1.0


def test_module_example_runs():
    import doctest

    import lessons.memory.live_sampler

    assert doctest.testmod(lessons.memory.live_sampler).failed == 0
