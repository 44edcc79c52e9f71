"""CachingAllocatorSim: one test per rule of the native caching allocator, plus properties."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.memory.allocator_sim import (
    SMALL_SIZE,
    CachingAllocatorSim,
    GiB,
    MiB,
    SimulatedOutOfMemory,
    format_size,
    round_size,
    segment_size_for,
)


def _blocks(sim: CachingAllocatorSim) -> list[list[tuple[int, str]]]:
    return [[(b["size"], b["state"]) for b in seg["blocks"]] for seg in sim.snapshot()]


class TestBasics:
    def test_smoke(self):
        sim = CachingAllocatorSim(8 * GiB)
        handle = sim.malloc(1000)
        assert sim.block_size(handle) == 1024
        sim.free(handle)
        sim.empty_cache()
        assert sim.memory_allocated() == sim.memory_reserved() == 0
        sim.check_invariants()

    @pytest.mark.parametrize(
        ("kwargs", "needle"),
        [
            ({"total_bytes": 0}, "total_bytes must be a positive integer, got 0"),
            ({"total_bytes": 1.5}, "got 1.5"),
            ({"total_bytes": GiB, "max_split_size": 20 * MiB}, "larger than 20 MiB"),
            ({"total_bytes": GiB, "roundup_power2_divisions": 3}, "power of two"),
            ({"total_bytes": GiB, "memory_fraction": 0.0}, "memory_fraction must be in (0, 1]"),
            ({"total_bytes": GiB, "memory_fraction": 1.5}, "got 1.5"),
        ],
    )
    def test_exception_constructor(self, kwargs, needle):
        with pytest.raises(ValueError, match=re.escape(needle)):
            CachingAllocatorSim(**kwargs)

    def test_exception_calls(self):
        sim = CachingAllocatorSim(GiB)
        with pytest.raises(ValueError, match="nbytes must be an integer >= 1, got 0"):
            sim.malloc(0)
        with pytest.raises(ValueError, match="not a live allocation"):
            sim.free(12345)
        handle = sim.malloc(10)
        sim.free(handle)
        with pytest.raises(ValueError, match="not a live allocation"):
            sim.free(handle)  # double free

    def test_format_size_matches_native(self):
        assert format_size(1024) == "1024 bytes"
        assert format_size(1025) == "1.00 KiB"
        assert format_size(MiB) == "1024.00 KiB"
        assert format_size(20 * MiB) == "20.00 MiB"
        assert format_size(GiB) == "1024.00 MiB"
        assert format_size(80 * GiB) == "80.00 GiB"

    def test_format_size_huge_is_scientific(self):
        """A size far beyond any device is written with two significant digits, not as a
        31-digit number of GiB."""
        assert format_size(int(1e30) * GiB) == "1.0e30 GiB"
        assert format_size(1e30 * GiB) == "1.0e30 GiB"  # a float request
        assert format_size(int(8.3e20 * GiB)) == "8.3e20 GiB"
        assert format_size(999_999 * GiB) == "999999.00 GiB"  # below the threshold: native
        assert format_size(10**400) == "9.3e390 GiB"  # beyond a float: no OverflowError
        assert format_size(float("inf")) == "an unbounded size"
        assert all(len(format_size(10**k)) <= 16 for k in range(0, 60))


class TestRules:
    def test_rounding_4_byte_tensor_notes_numbers(self):
        """Notes: a 4-byte tensor gives 512 B allocated and 2 MiB reserved."""
        sim = CachingAllocatorSim(8 * GiB)
        sim.malloc(4)
        assert sim.memory_allocated() == 512
        assert sim.memory_reserved() == 2 * MiB
        assert round_size(1) == 512 and round_size(512) == 512 and round_size(513) == 1024

    def test_roundup_power2_divisions(self):
        # 1200 KiB lies between 1 MiB and 2 MiB; 4 divisions: 1, 1.25, 1.5, 1.75 MiB
        assert round_size(1200 * 1024, 4) == 1280 * 1024
        assert round_size(1200, 4) == 1536  # <= 512 * divisions: plain 512 B rounding
        assert round_size(2 * MiB, 4) == 2 * MiB  # powers of two stay
        sim = CachingAllocatorSim(GiB, roundup_power2_divisions=2)
        handle = sim.malloc(5 * MiB)  # 4 MiB .. 8 MiB in halves -> 6 MiB
        assert sim.block_size(handle) == 6 * MiB

    def test_small_tensor_reuses_cached_remainder_notes_numbers(self):
        """Notes: a later small tensor reuses the cached remainder of the 2 MiB segment."""
        sim = CachingAllocatorSim(8 * GiB)
        sim.malloc(4)
        sim.malloc(100_000)
        assert sim.memory_reserved() == 2 * MiB
        assert sim.segment_count == 1
        assert sim.memory_allocated() == 512 + 100_352

    def test_pool_threshold_is_1_mib_not_the_notes_1_5_mb(self):
        """Notes 000:5 say a tensor under 1.5 MB goes into the 4-byte tensor's block and that
        1.5 MB remain. kSmallSize is 1 MiB: 1 MiB + 512 B gets a new 20 MiB large segment
        although 2,096,640 B are free in the first one; exactly 1 MiB still fits there."""
        assert SMALL_SIZE == 1_048_576
        sim = CachingAllocatorSim(8 * GiB)
        sim.malloc(4)
        remainder = sim.snapshot()[0]["blocks"][-1]["size"]
        assert remainder == 2_096_640 == 2 * MiB - 512
        sim.malloc(MiB + 512)  # under the notes' 1.5 MB, and it would fit the remainder
        assert sim.segment_count == 2
        assert sim.memory_reserved() == 2 * MiB + 20 * MiB
        assert [seg["segment_type"] for seg in sim.snapshot()] == ["small", "large"]
        sim.malloc(MiB)  # the largest small request: carved from the first segment
        assert sim.segment_count == 2
        assert sim.snapshot()[0]["allocated_size"] == 512 + MiB
        for nbytes in (MiB + 512, 1_400_000, 1_500_000):  # the notes' "< 1.5 MB" band
            assert segment_size_for(round_size(nbytes)) == 20 * MiB, nbytes

    def test_pools_and_segment_sizes(self):
        assert segment_size_for(MiB) == 2 * MiB  # 1 MiB is still small
        assert segment_size_for(MiB + 512) == 20 * MiB
        assert segment_size_for(10 * MiB - 512) == 20 * MiB
        assert segment_size_for(10 * MiB) == 10 * MiB
        assert segment_size_for(10 * MiB + 512) == 12 * MiB
        sim = CachingAllocatorSim(8 * GiB)
        sim.malloc(MiB)
        sim.malloc(11 * MiB)  # 12 MiB segment, 1 MiB remainder stays inside the block
        sim.malloc(MiB + 1)  # nothing cached fits: a 20 MiB segment
        sizes = sorted(seg["total_size"] for seg in sim.snapshot())
        assert sizes == [2 * MiB, 12 * MiB, 20 * MiB]
        stats = sim.memory_stats()
        assert stats["segment.small_pool.current"] == 1
        assert stats["segment.large_pool.current"] == 2
        assert stats["reserved_bytes.small_pool.current"] == 2 * MiB

    def test_best_fit_smallest_then_lowest_address(self):
        sim = CachingAllocatorSim(8 * GiB)
        # one small segment: [a 100 KiB][b 10 KiB][c 300 KiB][d 10 KiB][tail]
        a = sim.malloc(100 * 1024)
        sim.malloc(10 * 1024)
        c = sim.malloc(300 * 1024)
        sim.malloc(10 * 1024)
        sim.free(a)
        sim.free(c)
        # 50 KiB fits a (100 KiB), c (300 KiB) and the tail: the smallest wins
        assert sim.malloc(50 * 1024) == a
        # 60 KiB no longer fits a's 50 KiB remainder: the next smallest, c, wins
        assert sim.malloc(60 * 1024) == c
        sim.check_invariants()

    def test_best_fit_tie_goes_to_lowest_address(self):
        sim = CachingAllocatorSim(8 * GiB)
        holes = [sim.malloc(64 * 1024) for _ in range(6)]
        sim.free(holes[3])
        sim.free(holes[1])  # two equal 64 KiB holes, freed in reverse order
        assert sim.malloc(64 * 1024) == holes[1]
        assert sim.malloc(64 * 1024) == holes[3]

    def test_split_thresholds(self):
        sim = CachingAllocatorSim(8 * GiB)
        h = sim.malloc(2 * MiB - 1024)  # > 1 MiB: large pool, 20 MiB segment, split
        assert sim.block_size(h) == 2 * MiB - 1024
        sim.free(h)
        sim.empty_cache()
        # large pool: a remainder <= 1 MiB is not split off and counts as allocated
        first = sim.malloc(9 * MiB)  # 20 MiB segment, remainder 11 MiB is split off
        second = sim.malloc(10 * MiB + 512 * 1024)  # takes the 11 MiB block, remainder 0.5 MiB
        assert sim.block_size(first) == 9 * MiB
        assert sim.block_size(second) == 11 * MiB
        assert sim.memory_allocated() == 20 * MiB
        assert sim.segment_count == 1
        # small pool: a remainder of exactly 512 B is split off
        sim3 = CachingAllocatorSim(8 * GiB)
        x = sim3.malloc(MiB)
        y = sim3.malloc(MiB - 512)
        assert sim3.segment_count == 1
        assert _blocks(sim3) == [
            [(MiB, "active_allocated"), (MiB - 512, "active_allocated"), (512, "inactive")]
        ]
        sim3.free(x)
        sim3.free(y)
        sim3.check_invariants()

    def test_merge_on_free(self):
        sim = CachingAllocatorSim(8 * GiB)
        a, b, c = (sim.malloc(1024) for _ in range(3))
        sim.free(a)
        sim.free(c)  # c merges with the tail
        assert _blocks(sim)[0] == [
            (1024, "inactive"),
            (1024, "active_allocated"),
            (2 * MiB - 2048, "inactive"),
        ]
        assert sim.memory_stats()["inactive_split.all.current"] == 2
        sim.free(b)  # merges with both neighbours into one whole free segment
        assert _blocks(sim) == [[(2 * MiB, "inactive")]]
        stats = sim.memory_stats()
        assert stats["inactive_split.all.current"] == 0
        assert stats["inactive_split_bytes.all.current"] == 0
        sim.check_invariants()

    def test_empty_cache_releases_only_whole_free_segments(self):
        sim = CachingAllocatorSim(8 * GiB)
        a = sim.malloc(4)
        sim.malloc(4)  # b keeps the small segment partly used
        c = sim.malloc(8 * MiB)
        sim.free(c)
        sim.free(a)
        assert sim.memory_reserved() == 22 * MiB
        sim.empty_cache()
        assert sim.memory_reserved() == 2 * MiB  # the whole 20 MiB segment went back
        assert sim.memory_allocated() == 512
        stats = sim.memory_stats()
        assert stats["inactive_split_bytes.all.current"] == 2 * MiB - 512
        assert stats["num_device_free"] == 1

    def test_retry_after_releasing_cache_then_oom(self):
        # The device fits two 20 MiB segments.
        sim = CachingAllocatorSim(41 * MiB)
        keep = sim.malloc(4 * MiB)
        cached = sim.malloc(17 * MiB)  # > the 16 MiB remainder: its own 18 MiB segment
        sim.free(cached)  # 18 MiB stays cached, whole
        assert sim.memory_reserved() == 38 * MiB
        sim.malloc(9 * MiB)  # best fit: the 16 MiB remainder of the first segment
        big = sim.malloc(20 * MiB)  # 38 + 20 > 41: release the cached 18 MiB, retry, succeed
        stats = sim.memory_stats()
        assert stats["num_alloc_retries"] == 1 and stats["num_ooms"] == 0
        assert sim.memory_reserved() == 40 * MiB
        sim.free(big)
        with pytest.raises(SimulatedOutOfMemory) as info:
            sim.malloc(30 * MiB)
        err = info.value
        assert err.segment_size == 30 * MiB and err.requested == 30 * MiB
        stats = sim.memory_stats()
        assert stats["num_alloc_retries"] == 2 and stats["num_ooms"] == 1
        # the failed attempt released the whole cached 20 MiB segment as a side effect
        assert sim.memory_reserved() == 20 * MiB
        assert keep in sim.live_handles()
        sim.check_invariants()

    def test_oom_message_has_torch_shape(self):
        sim = CachingAllocatorSim(GiB, memory_fraction=0.5)
        sim.malloc(400 * MiB)
        with pytest.raises(SimulatedOutOfMemory) as info:
            sim.malloc(200 * MiB)
        pattern = (
            r"^CUDA out of memory\. Tried to allocate 200\.00 MiB\. GPU 0 has a total capacity "
            r"of 1024\.00 MiB of which 624\.00 MiB is free\. 512\.00 MiB allowed; Of the "
            r"allocated memory 400\.00 MiB is allocated by PyTorch, and 0 bytes is reserved by "
            r"PyTorch but unallocated\. If reserved but unallocated memory is large try setting "
            r"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation\."
        )
        assert re.match(pattern, str(info.value)), str(info.value)

    def test_capacity_beyond_what_the_allocator_may_reserve(self):
        """Memory used outside the allocator (a CUDA context) counts in the device's capacity
        but is never free: OOM message and mem_get_info report it as torch does."""
        sim = CachingAllocatorSim(30 * MiB, capacity_bytes=40 * MiB)
        sim.malloc(15 * MiB)
        assert sim.mem_get_info() == (14 * MiB, 40 * MiB)
        with pytest.raises(
            SimulatedOutOfMemory,
            match=r"total capacity of 40\.00 MiB of which 14\.00 MiB is free\. Including "
            r"non-PyTorch memory, this process has 26\.00 MiB memory in use\. Of the allocated",
        ):
            sim.malloc(2 * MiB)
        with pytest.raises(ValueError, match="capacity_bytes must be an integer >= total_bytes"):
            CachingAllocatorSim(30 * MiB, capacity_bytes=20 * MiB)

    def test_oom_reports_segment_size_not_request(self):
        sim = CachingAllocatorSim(30 * MiB)
        sim.malloc(15 * MiB)
        with pytest.raises(SimulatedOutOfMemory, match=r"Tried to allocate 20\.00 MiB"):
            sim.malloc(2 * MiB)  # request 2 MiB, segment 20 MiB

    def test_memory_fraction_cap(self):
        sim = CachingAllocatorSim(100 * MiB, memory_fraction=0.3)
        assert sim.limit_bytes == 30 * MiB
        sim.malloc(20 * MiB)  # exactly 20 MiB segment
        sim.malloc(10 * MiB)  # 20 + 10 = 30 <= 30
        with pytest.raises(SimulatedOutOfMemory, match="30.00 MiB allowed"):
            sim.malloc(MiB)
        sim.set_memory_fraction(1.0)
        sim.malloc(MiB)

    def test_max_split_size(self):
        mss = 32 * MiB
        sim = CachingAllocatorSim(GiB, max_split_size=mss)
        big = sim.malloc(40 * MiB - 3 * MiB)  # 38 MiB segment, oversize: never split
        assert sim.block_size(big) == 38 * MiB
        sim.free(big)
        # a request below max_split_size must not take the cached oversize block
        sim.malloc(30 * MiB)
        assert sim.segment_count == 2
        # a request >= max_split_size may take it if it is < 20 MiB larger, unsplit
        h = sim.malloc(33 * MiB)
        assert sim.block_size(h) == 38 * MiB and sim.segment_count == 2
        stats = sim.memory_stats()
        assert stats["max_split_size"] == mss
        assert stats["oversize_allocations.current"] == 1
        assert stats["oversize_segments.current"] == 1
        sim.free(h)
        # ... but not if it is 20 MiB or more larger than the request
        sim2 = CachingAllocatorSim(GiB, max_split_size=mss)
        sim2.free(sim2.malloc(60 * MiB))
        sim2.malloc(34 * MiB)
        assert sim2.segment_count == 2
        # ... and that limit is max_non_split_rounding_mb (default 20 MiB)
        sim3 = CachingAllocatorSim(GiB, max_split_size=mss, max_non_split_rounding=30 * MiB)
        sim3.free(sim3.malloc(60 * MiB))
        assert sim3.block_size(sim3.malloc(34 * MiB)) == 60 * MiB and sim3.segment_count == 1

    def test_max_split_size_releases_oversize_blocks_before_full_retry(self):
        mss = 24 * MiB
        sim = CachingAllocatorSim(100 * MiB, max_split_size=mss)
        sim.free(sim.malloc(60 * MiB))  # one cached oversize segment
        sim.free(sim.malloc(4 * MiB))  # one cached 20 MiB segment (not oversize)
        assert sim.memory_reserved() == 80 * MiB
        sim.malloc(30 * MiB)  # 80 + 30 > 100: release the oversize 60 MiB only, no retry
        stats = sim.memory_stats()
        assert stats["num_alloc_retries"] == 0
        assert sim.memory_reserved() == 50 * MiB  # the 20 MiB cached segment survived

    def test_streams_do_not_share_cached_blocks(self):
        sim = CachingAllocatorSim(GiB)
        sim.free(sim.malloc(1000, stream=1))
        sim.malloc(1000, stream=0)
        assert sim.segment_count == 2
        assert sorted(seg["stream"] for seg in sim.snapshot()) == [0, 1]

    def test_reset_peak_memory_stats(self):
        sim = CachingAllocatorSim(GiB)
        sim.free(sim.malloc(50 * MiB))
        assert sim.max_memory_allocated() == 50 * MiB
        sim.reset_peak_memory_stats()
        assert sim.max_memory_allocated() == 0
        assert sim.max_memory_reserved() == 50 * MiB  # still cached

    def test_matches_reference_snapshot_keys(self):
        """Keys as in torch.cuda.memory_snapshot() / memory_stats()."""
        sim = CachingAllocatorSim(GiB)
        sim.malloc(4)
        segment = sim.snapshot()[0]
        assert {"address", "total_size", "allocated_size", "active_size", "stream"} <= set(segment)
        assert segment["segment_type"] == "small"
        assert set(segment["blocks"][0]) >= {"address", "size", "requested_size", "state"}
        stats = sim.memory_stats()
        for name in (
            "allocation",
            "segment",
            "active",
            "inactive_split",
            "allocated_bytes",
            "reserved_bytes",
            "active_bytes",
            "inactive_split_bytes",
            "requested_bytes",
        ):
            for pool in ("all", "small_pool", "large_pool"):
                for counter in ("current", "peak", "allocated", "freed"):
                    assert f"{name}.{pool}.{counter}" in stats
        for key in ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"):
            assert key in stats


_op = st.one_of(
    st.tuples(st.just("malloc"), st.integers(1, 200 * 10**6), st.integers(0, 1)),
    st.tuples(st.just("malloc"), st.integers(1, 2 * MiB), st.integers(0, 1)),
    st.tuples(st.just("free"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("empty_cache"), st.just(0), st.just(0)),
)


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(_op, max_size=60),
    total=st.sampled_from([64 * MiB, 512 * MiB, 8 * GiB]),
    mss=st.sampled_from([None, 24 * MiB, 100 * MiB]),
    divisions=st.sampled_from([None, 2, 8]),
)
def test_random_sequences_keep_invariants(ops, total, mss, divisions):
    sim = CachingAllocatorSim(total, max_split_size=mss, roundup_power2_divisions=divisions)
    live: list[int] = []
    for kind, value, stream in ops:
        before_ooms = sim.memory_stats()["num_ooms"]
        if kind == "malloc":
            try:
                live.append(sim.malloc(value, stream))
            except SimulatedOutOfMemory as err:
                assert err.segment_size >= value
                assert sim.memory_stats()["num_ooms"] == before_ooms + 1
        elif kind == "free" and live:
            sim.free(live.pop(value % len(live)))
        elif kind == "empty_cache":
            sim.empty_cache()
            for seg in sim.snapshot():  # every remaining segment holds a live block
                assert any(b["state"] == "active_allocated" for b in seg["blocks"])
        sim.check_invariants()
        assert sim.memory_allocated() <= sim.memory_reserved() <= sim.limit_bytes
        assert sim.max_memory_allocated() >= sim.memory_allocated()
    for handle in live:
        sim.free(handle)
    sim.empty_cache()
    assert sim.memory_reserved() == 0 and sim.segment_count == 0
    stats = sim.memory_stats()
    assert stats["num_device_alloc"] == stats["num_device_free"]
    assert stats["requested_bytes.all.current"] == 0


# ------------------------------------------------------------------------------------ CUDA
# These run the same scripted sequences on a real GPU and in the simulator. The real side runs
# in a fresh subprocess, so the allocator starts empty and PYTORCH_CUDA_ALLOC_CONF applies.
# The simulator is given the real cudaMalloc addresses (they only decide best-fit ties between
# equal-size blocks); every decision is its own.

_REAL_DRIVER = r"""
import json, sys
import torch

plan = json.load(sys.stdin)
dev = torch.device("cuda:0")
torch.cuda.set_device(dev)
total = torch.cuda.mem_get_info(dev)[1]
fraction = plan["cap_bytes"] / total if plan["cap_bytes"] else None
if fraction is not None:
    torch.cuda.set_per_process_memory_fraction(fraction, dev)
# The trace tells which cudaMalloc addresses each step obtained (even one freed and reused
# within the same step); recording does not change the allocator's decisions.
torch.cuda.memory._record_memory_history(enabled="all", context=None, max_entries=10**7)
seen_traces, rows = 0, []
live = []
for kind, value in plan["ops"]:
    outcome = "ok"
    if kind == "malloc":
        try:
            live.append(torch.empty(value, dtype=torch.uint8, device=dev))
        except torch.OutOfMemoryError:
            outcome = "oom"
    elif kind == "free" and live:
        del live[value % len(live)]
    elif kind == "empty_cache":
        torch.cuda.empty_cache()
    snap = torch.cuda.memory._snapshot()
    segments = [s for s in snap["segments"] if s["device"] == 0]
    traces = snap["device_traces"][0]
    new = [t["addr"] for t in traces[seen_traces:] if t["action"] == "segment_alloc"]
    seen_traces = len(traces)
    stats = torch.cuda.memory_stats(dev)
    rows.append({
        "outcome": outcome,
        "new_segments": new,
        "allocated": torch.cuda.memory_allocated(dev),
        "reserved": torch.cuda.memory_reserved(dev),
        "segments": len(segments),
        "stats": {k: stats.get(k, 0) for k in plan["stat_keys"]},
        "layout": [
            [s["address"], s["total_size"], [[b["size"], b["state"]] for b in s["blocks"]]]
            for s in sorted(segments, key=lambda s: s["address"])
        ],
    })
print(json.dumps({"total": total, "fraction": fraction, "rows": rows}))
"""

_CUDA_STAT_KEYS = [
    "num_alloc_retries",
    "num_ooms",
    "inactive_split.all.current",
    "inactive_split_bytes.all.current",
    "allocation.all.current",
    "active_bytes.all.current",
    "requested_bytes.all.current",
]


def test_cuda_driver_script_compiles():
    compile(_REAL_DRIVER, "<driver>", "exec")


def _random_plan(seed: int, n_ops: int) -> list[tuple[str, int]]:
    import random

    rng = random.Random(seed)
    ops: list[tuple[str, int]] = []
    for _ in range(n_ops):
        r = rng.random()
        if r < 0.55:
            ops.append(("malloc", max(1, int(10 ** rng.uniform(0, 8.3)))))  # 1 B .. 200 MB
        elif r < 0.93:
            ops.append(("free", rng.randrange(10**6)))
        else:
            ops.append(("empty_cache", 0))
    return ops


def _run_real(ops, cap_bytes, alloc_conf: str) -> dict:
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if alloc_conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf
    plan = {"ops": ops, "cap_bytes": cap_bytes, "stat_keys": _CUDA_STAT_KEYS}
    done = subprocess.run(
        [sys.executable, "-c", _REAL_DRIVER],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _replay_in_sim(ops, real: dict, **sim_kwargs) -> list[dict]:
    queue: list[int] = []
    fake = iter(range(1 << 60, 1 << 61, 1 << 40))

    def address_source(size: int) -> int:
        return queue.pop(0) if queue else next(fake)  # a miss shows up as a count mismatch

    kwargs = dict(sim_kwargs)
    if real["fraction"] is not None:
        kwargs["memory_fraction"] = real["fraction"]
    sim = CachingAllocatorSim(real["total"], address_source=address_source, **kwargs)
    live: list[int] = []
    rows = []
    for (kind, value), real_row in zip(ops, real["rows"], strict=True):
        queue[:] = list(real_row["new_segments"])
        outcome = "ok"
        if kind == "malloc":
            try:
                live.append(sim.malloc(value))
            except SimulatedOutOfMemory:
                outcome = "oom"
        elif kind == "free" and live:
            sim.free(live.pop(value % len(live)))
        elif kind == "empty_cache":
            sim.empty_cache()
        stats = sim.memory_stats()
        snapshot = sim.snapshot()
        rows.append(
            {
                "outcome": outcome,
                "allocated": sim.memory_allocated(),
                "reserved": sim.memory_reserved(),
                "segments": sim.segment_count,
                "stats": {k: stats.get(k, 0) for k in _CUDA_STAT_KEYS},
                "layout": [
                    [s["address"], s["total_size"], [[b["size"], b["state"]] for b in s["blocks"]]]
                    for s in snapshot
                ],
            }
        )
    return rows


_needs_cuda = pytest.mark.skipif(
    not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU"
)


@pytest.mark.cuda
@_needs_cuda
@pytest.mark.parametrize(
    ("alloc_conf", "sim_kwargs", "cap_bytes"),
    [
        ("", {}, 256 * MiB),  # the cap forces retries and OOMs
        ("", {}, 2 * GiB),
        ("max_split_size_mb:64", {"max_split_size": 64 * MiB}, 256 * MiB),
        ("roundup_power2_divisions:4", {"roundup_power2_divisions": 4}, 256 * MiB),
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cuda_simulator_predicts_real_allocator(alloc_conf, sim_kwargs, cap_bytes, seed):
    ops = _random_plan(seed, 300)
    real = _run_real(ops, cap_bytes, alloc_conf)
    predicted = _replay_in_sim(ops, real, **sim_kwargs)
    assert any(row["outcome"] == "oom" for row in real["rows"]) or cap_bytes > GiB  # OOM seen
    for step, (op, want, got) in enumerate(zip(ops, real["rows"], predicted, strict=True)):
        context = f"step {step} {op}"
        assert got["outcome"] == want["outcome"], context
        assert got["allocated"] == want["allocated"], context
        assert got["reserved"] == want["reserved"], context
        assert got["segments"] == want["segments"], context
        assert got["layout"] == want["layout"], context
        assert got["stats"] == want["stats"], context


@pytest.mark.cuda
@_needs_cuda
def test_cuda_scenario_snippets_match_simulator():
    """Each guided scenario's snippet, run on the GPU, prints what the simulated page shows."""
    import re
    import subprocess
    import sys

    from lessons.memory.backends import SimulatedGpu, TensorLedger
    from lessons.memory.cuda_snippet import snippet_for
    from lessons.memory.scenarios import SCENARIOS, run_steps

    pattern = re.compile(r"allocated=\s*([\d,]+) reserved=\s*([\d,]+) segments=(\d+)")
    for key, scenario in SCENARIOS.items():
        done = subprocess.run(
            [sys.executable, "-c", snippet_for(scenario.steps)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        seen = [
            tuple(int(g.replace(",", "")) for g in m.groups())
            for line in done.stdout.splitlines()
            if (m := pattern.search(line))
        ]
        expected = [
            (o.allocated, o.reserved, o.segments)
            for o in run_steps(scenario.steps, SimulatedGpu(80), TensorLedger())
            if o.step.kind in ("alloc", "free", "free_all", "empty_cache")
        ]
        assert seen == expected, key


def _run_simulated_real(ops, cap_bytes, **sim_kwargs) -> dict:
    """The real driver's output format, produced by a simulator with its own addresses."""
    total = 80 * GiB
    fraction = cap_bytes / total if cap_bytes else None
    obtained: list[int] = []
    plain = CachingAllocatorSim(total)  # only lends its address-space policy

    def address_source(size: int) -> int:
        plain._segments = sim._segments
        obtained.append(plain._new_address(size))
        return obtained[-1]

    sim = CachingAllocatorSim(
        total, memory_fraction=fraction or 1.0, address_source=address_source, **sim_kwargs
    )
    live, rows = [], []
    for kind, value in ops:
        outcome = "ok"
        if kind == "malloc":
            try:
                live.append(sim.malloc(value))
            except SimulatedOutOfMemory:
                outcome = "oom"
        elif kind == "free" and live:
            sim.free(live.pop(value % len(live)))
        elif kind == "empty_cache":
            sim.empty_cache()
        snapshot = sim.snapshot()
        stats = sim.memory_stats()
        rows.append(
            {
                "outcome": outcome,
                "new_segments": list(obtained),
                "allocated": sim.memory_allocated(),
                "reserved": sim.memory_reserved(),
                "segments": len(snapshot),
                "stats": {k: stats.get(k, 0) for k in _CUDA_STAT_KEYS},
                "layout": [
                    [s["address"], s["total_size"], [[b["size"], b["state"]] for b in s["blocks"]]]
                    for s in snapshot
                ],
            }
        )
        obtained.clear()
    return {"total": total, "fraction": fraction, "rows": rows}


@pytest.mark.parametrize("seed", [0, 1])
def test_cuda_replay_harness_is_consistent(seed):
    """The CUDA test's replay (address injection, row format) reproduces a known run exactly,
    so a mismatch on a GPU points at the model, not at the harness."""
    ops = _random_plan(seed, 300)
    real = _run_simulated_real(ops, 256 * MiB, max_split_size=64 * MiB)
    assert any(row["outcome"] == "oom" for row in real["rows"])
    predicted = _replay_in_sim(ops, real, max_split_size=64 * MiB)
    for want, got in zip(real["rows"], predicted, strict=True):
        want = {k: v for k, v in want.items() if k != "new_segments"}
        assert got == want
