"""A pure-Python model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp).

The model follows the native allocator's decisions step by step, for one device and without
expandable segments, CUDA graphs or cross-stream events:

- every request is rounded up to a multiple of 512 B (or to a power-of-two division when
  ``roundup_power2_divisions`` is set);
- requests up to 1 MiB come from the *small pool*, whose segments are 2 MiB; larger requests come
  from the *large pool*, whose segments are 20 MiB for requests under 10 MiB and otherwise the
  request rounded up to 2 MiB;
- a cached block is chosen by best fit: the smallest free block on the same stream that fits,
  then the lowest address;
- a block is split when the remainder is >= 512 B (small pool) or > 1 MiB (large pool, and only
  for requests below ``max_split_size``); a smaller remainder stays inside the allocated block;
- a freed block merges with its free neighbours;
- ``empty_cache`` returns only whole free segments to the device; the free pieces of partly used
  segments stay cached ("inactive_split");
- on a miss a new segment is "cudaMalloc'ed"; when that fails the allocator releases cached
  oversize blocks (with ``max_split_size``), then all whole cached segments, retries once
  (``num_alloc_retries``) and finally raises :class:`SimulatedOutOfMemory` (``num_ooms``);
- a segment can only be created while ``reserved + segment <= int(memory_fraction * total)``.

>>> sim = CachingAllocatorSim(8 * 2**30)
>>> h = sim.malloc(4)  # one float32
>>> sim.memory_allocated(), sim.memory_reserved()
(512, 2097152)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

KB = 1024
MiB = 1024 * 1024
GiB = 1024 * MiB

MIN_BLOCK_SIZE = 512  # kMinBlockSize: all sizes are rounded to at least 512 bytes
SMALL_SIZE = MiB  # kSmallSize: largest "small" allocation is 1 MiB
SMALL_BUFFER = 2 * MiB  # kSmallBuffer: "small" allocations are packed in 2 MiB segments
LARGE_BUFFER = 20 * MiB  # kLargeBuffer: requests between 1 and 10 MiB share 20 MiB segments
MIN_LARGE_ALLOC = 10 * MiB  # kMinLargeAlloc
ROUND_LARGE = 2 * MiB  # kRoundLarge: larger segments are rounded up to 2 MiB

POOLS = ("all", "small_pool", "large_pool")
COUNTERS = ("current", "peak", "allocated", "freed")
STAT_ARRAYS = (
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
)
SCALAR_STATS = (
    "num_alloc_retries",
    "num_ooms",
    "num_sync_all_streams",
    "num_device_alloc",
    "num_device_free",
)
_ADDRESS_BASE = 0x7F0000000000  # where the simulated device address space starts
_SIZE_MAX = 2**64 - 1  # CUDAAllocatorConfig::max_split_size() when unset


#: From this many GiB on, :func:`format_size` writes the number of GiB in scientific notation.
HUGE_GIB = 10**6


def format_size(nbytes: int | float) -> str:
    """Format a byte count exactly as the native allocator's ``format_size`` does, up to
    :data:`HUGE_GIB` GiB; beyond that (no device has a million GiB) the number of GiB is written
    in scientific notation with two significant digits instead of dozens of digits.

    >>> format_size(512), format_size(2 * 2**20), format_size(3 * 2**30)
    ('512 bytes', '2.00 MiB', '3.00 GiB')
    >>> format_size(10**30 * 2**30), format_size(float("inf"))
    ('1.0e30 GiB', 'an unbounded size')
    """
    if isinstance(nbytes, float):
        if math.isnan(nbytes) or math.isinf(nbytes):
            return "an unbounded size" if nbytes > 0 else f"{nbytes} bytes"
        if nbytes.is_integer():
            nbytes = int(nbytes)
    if nbytes >= HUGE_GIB * GiB:
        # Decimal: exact for any int, and never overflows a float
        mantissa, _, exponent = f"{Decimal(nbytes) / GiB:.1e}".partition("e")
        return f"{mantissa}e{int(exponent)} GiB"
    if nbytes <= 1024:
        return f"{nbytes} bytes"
    if nbytes <= MiB:
        return f"{nbytes / 1024.0:.2f} KiB"
    if nbytes <= GiB:
        return f"{nbytes / MiB:.2f} MiB"
    return f"{nbytes / GiB:.2f} GiB"


def _check_divisions(divisions: int | None) -> None:
    if divisions is None:
        return
    if isinstance(divisions, bool) or not isinstance(divisions, int) or divisions < 1:
        raise ValueError(
            "roundup_power2_divisions must be a power of two >= 1 (1, 2, 4, 8, ...), "
            f"got {divisions!r}"
        )
    if divisions & (divisions - 1):
        raise ValueError(
            f"roundup_power2_divisions must be a power of two (1, 2, 4, 8, ...), got {divisions}"
        )


def round_size(nbytes: int, roundup_power2_divisions: int | None = None) -> int:
    """The block size the allocator hands out for a request of ``nbytes`` bytes.

    Args:
        nbytes: requested bytes (>= 0).
        roundup_power2_divisions: as ``PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:N``
            (one value for every size); ``None`` means the default 512 B rounding.

    >>> round_size(4), round_size(1000), round_size(1200 * 1024, 4)
    (512, 1024, 1310720)
    """
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    _check_divisions(roundup_power2_divisions)
    if nbytes < MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    divisions = roundup_power2_divisions or 0
    if divisions > 1 and nbytes > MIN_BLOCK_SIZE * divisions:
        return _roundup_power2_next_division(nbytes, divisions)
    return MIN_BLOCK_SIZE * ((nbytes + MIN_BLOCK_SIZE - 1) // MIN_BLOCK_SIZE)


def _roundup_power2_next_division(size: int, divisions: int) -> int:
    if size & (size - 1) == 0:
        return size
    power2_floor = 1 << (size.bit_length() - 1)
    power2_division = power2_floor >> (divisions.bit_length() - 1)
    if power2_division == 0:
        return power2_floor << 1
    floor = size & ~(power2_division - 1)
    return size if floor == size else floor + power2_division


def segment_size_for(rounded: int) -> int:
    """The segment ("cudaMalloc") size the allocator requests for a rounded block size.

    >>> segment_size_for(512) // 2**20, segment_size_for(4 * 2**20) // 2**20
    (2, 20)
    """
    if rounded <= SMALL_SIZE:
        return SMALL_BUFFER
    if rounded < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((rounded + ROUND_LARGE - 1) // ROUND_LARGE)


class SimulatedOutOfMemory(RuntimeError):
    """Raised by :meth:`CachingAllocatorSim.malloc` where torch raises ``torch.OutOfMemoryError``.

    Attributes:
        requested: the bytes asked for.
        segment_size: the segment size the allocator tried to obtain (what the message reports).
        allocated / reserved: allocator totals when the error was raised.
    """

    def __init__(
        self, message: str, *, requested: int, segment_size: int, allocated: int, reserved: int
    ) -> None:
        super().__init__(message)
        self.requested = requested
        self.segment_size = segment_size
        self.allocated = allocated
        self.reserved = reserved


@dataclass(eq=False)
class _Block:
    address: int
    size: int
    stream: int
    small: bool
    segment: _Segment
    requested: int = 0
    allocated: bool = False
    prev: _Block | None = None
    next: _Block | None = None

    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None

    def key(self) -> tuple[int, int, int]:
        """Order of the free-block sets: stream, then size, then address (best fit)."""
        return (self.stream, self.size, self.address)


@dataclass(eq=False)
class _Segment:
    address: int
    size: int
    stream: int
    small: bool
    head: _Block | None = None


@dataclass
class _Stat:
    current: int = 0
    peak: int = 0
    allocated: int = 0
    freed: int = 0

    def increase(self, amount: int) -> None:
        self.current += amount
        self.peak = max(self.peak, self.current)
        self.allocated += amount

    def decrease(self, amount: int) -> None:
        self.current -= amount
        self.freed += amount


@dataclass
class _Stats:
    arrays: dict[str, dict[str, _Stat]] = field(
        default_factory=lambda: {name: {pool: _Stat() for pool in POOLS} for name in STAT_ARRAYS}
    )
    scalars: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SCALAR_STATS, 0))
    oversize_allocations: _Stat = field(default_factory=_Stat)
    oversize_segments: _Stat = field(default_factory=_Stat)

    def change(self, name: str, small: bool, amount: int) -> None:
        """Add ``amount`` (may be negative) to the aggregate and the block's pool."""
        if amount == 0:
            return
        for pool in ("all", "small_pool" if small else "large_pool"):
            stat = self.arrays[name][pool]
            if amount > 0:
                stat.increase(amount)
            else:
                stat.decrease(-amount)


class CachingAllocatorSim:
    """A simulated CUDA device with PyTorch's caching allocator in front of it.

    Args:
        total_bytes: the memory the allocator may reserve (the simulated device memory, > 0).
        max_split_size: bytes; blocks this large or larger are never split (as
            ``max_split_size_mb``). Must be > 20 MiB. ``None``: unlimited (the default).
        roundup_power2_divisions: power of two, as the allocator option of that name.
        memory_fraction: in (0, 1]; as ``torch.cuda.set_per_process_memory_fraction``: new
            segments may only be created while ``reserved + segment <= int(fraction * total)``.
        device_index: the GPU number used in messages and snapshots.
        address_source: optional ``f(segment_size) -> address`` replacing the simulated
            address space (used to replay real cudaMalloc addresses, which decide best-fit ties).
        max_non_split_rounding: bytes; a request >= ``max_split_size`` may take a cached
            oversize block only if it is less than this much larger (``max_non_split_rounding_mb``,
            default 20 MiB).
        capacity_bytes: the whole device's memory (>= ``total_bytes``; default ``total_bytes``),
            reported as the "total capacity" in OOM messages and by :meth:`mem_get_info`. The
            difference is used outside the allocator (a CUDA context) and is never free; OOM
            messages then also name this process's usage, as torch does when NVML is present.

    Handles returned by :meth:`malloc` are the block addresses, like ``tensor.data_ptr()``.
    """

    def __init__(
        self,
        total_bytes: int,
        *,
        max_split_size: int | None = None,
        roundup_power2_divisions: int | None = None,
        memory_fraction: float = 1.0,
        device_index: int = 0,
        address_source: Callable[[int], int] | None = None,
        max_non_split_rounding: int = LARGE_BUFFER,
        capacity_bytes: int | None = None,
    ) -> None:
        if isinstance(total_bytes, bool) or not isinstance(total_bytes, int) or total_bytes <= 0:
            raise ValueError(f"total_bytes must be a positive integer, got {total_bytes!r}")
        if capacity_bytes is None:
            capacity_bytes = total_bytes
        if (
            isinstance(capacity_bytes, bool)
            or not isinstance(capacity_bytes, int)
            or capacity_bytes < total_bytes
        ):
            raise ValueError(
                f"capacity_bytes must be an integer >= total_bytes ({total_bytes}), "
                f"got {capacity_bytes!r}"
            )
        self.capacity_bytes = capacity_bytes
        if max_split_size is not None and (
            not isinstance(max_split_size, int) or max_split_size <= LARGE_BUFFER
        ):
            raise ValueError(
                "max_split_size must be larger than 20 MiB (20971520 bytes), as torch requires "
                f"max_split_size_mb > 20; got {max_split_size!r}"
            )
        _check_divisions(roundup_power2_divisions)
        if not isinstance(max_non_split_rounding, int) or max_non_split_rounding < 0:
            raise ValueError(
                f"max_non_split_rounding must be a byte count >= 0, got {max_non_split_rounding!r}"
            )
        self.max_non_split_rounding = max_non_split_rounding
        self.total_bytes = total_bytes
        self.max_split_size = max_split_size
        self.roundup_power2_divisions = roundup_power2_divisions
        self.device_index = device_index
        self._address_source = address_source
        self._fraction_set = False
        self.memory_fraction = 1.0
        self._limit = total_bytes
        if memory_fraction != 1.0:
            self.set_memory_fraction(memory_fraction)
        self._free_small: list[_Block] = []
        self._free_large: list[_Block] = []
        self._active: dict[int, _Block] = {}
        self._segments: dict[int, _Segment] = {}
        self._stats = _Stats()
        self._reserved = 0  # total_allocated_memory in the native code

    # ----------------------------------------------------------------- configuration
    @property
    def _mss(self) -> int:
        return self.max_split_size if self.max_split_size is not None else _SIZE_MAX

    @property
    def limit_bytes(self) -> int:
        """The most memory the allocator may reserve: ``int(memory_fraction * total_bytes)``."""
        return self._limit

    def set_memory_fraction(self, fraction: float) -> None:
        """As ``torch.cuda.set_per_process_memory_fraction(fraction)``; fraction in (0, 1]."""
        if not isinstance(fraction, int | float) or not 0.0 < float(fraction) <= 1.0:
            raise ValueError(f"memory_fraction must be in (0, 1], got {fraction!r}")
        self.memory_fraction = float(fraction)
        self._limit = int(float(fraction) * float(self.total_bytes))
        self._fraction_set = True

    # ----------------------------------------------------------------- public API
    def malloc(self, nbytes: int, stream: int = 0) -> int:
        """Allocate ``nbytes`` on ``stream`` and return a handle (the block address).

        Raises:
            ValueError: ``nbytes`` < 1 (torch makes no allocation for empty tensors).
            SimulatedOutOfMemory: no cached block fits and no new segment can be created.
        """
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise ValueError(f"nbytes must be an integer >= 1, got {nbytes!r}")
        size = round_size(nbytes, self.roundup_power2_divisions)
        small = size <= SMALL_SIZE
        alloc_size = segment_size_for(size)
        block = self._get_free_block(size, small, stream)
        if block is None:
            block = self._alloc_block(alloc_size, small, stream)
            if block is None and self._release_available_cached_blocks(size, small, stream):
                block = self._alloc_block(alloc_size, small, stream)
            if block is None:
                self._release_cached_blocks()
                self._stats.scalars["num_alloc_retries"] += 1
                block = self._alloc_block(alloc_size, small, stream)
        if block is None:
            self._stats.scalars["num_ooms"] += 1
            raise SimulatedOutOfMemory(
                self._oom_message(alloc_size),
                requested=nbytes,
                segment_size=alloc_size,
                allocated=self.memory_allocated(),
                reserved=self.memory_reserved(),
            )
        return self._alloc_found_block(block, size, nbytes, self._should_split(block, size))

    def free(self, handle: int) -> None:
        """Return the block ``handle`` to the cache (``del tensor``); merges free neighbours."""
        block = self._active.pop(handle, None)
        if block is None:
            raise ValueError(f"handle {handle!r} is not a live allocation of this simulator")
        block.allocated = False
        self._stats.change("allocation", block.small, -1)
        self._stats.change("allocated_bytes", block.small, -block.size)
        if block.size >= self._mss:
            self._stats.oversize_allocations.decrease(1)
        self._free_block(block)

    def empty_cache(self) -> None:
        """As ``torch.cuda.empty_cache()``: release every cached segment that is entirely free."""
        self._release_cached_blocks()

    def reset_peak_memory_stats(self) -> None:
        """As ``torch.cuda.reset_peak_memory_stats()``: every peak becomes the current value."""
        for pools in self._stats.arrays.values():
            for stat in pools.values():
                stat.peak = stat.current
        self._stats.oversize_allocations.peak = self._stats.oversize_allocations.current
        self._stats.oversize_segments.peak = self._stats.oversize_segments.current

    def memory_allocated(self) -> int:
        """Bytes in blocks handed out to tensors (rounded sizes), like ``memory_allocated()``."""
        return self._stats.arrays["allocated_bytes"]["all"].current

    def memory_reserved(self) -> int:
        """Bytes in segments the allocator holds, like ``torch.cuda.memory_reserved()``."""
        return self._stats.arrays["reserved_bytes"]["all"].current

    def max_memory_allocated(self) -> int:
        return self._stats.arrays["allocated_bytes"]["all"].peak

    def max_memory_reserved(self) -> int:
        return self._stats.arrays["reserved_bytes"]["all"].peak

    def mem_get_info(self) -> tuple[int, int]:
        """``(free, total)`` of the simulated device, as ``torch.cuda.mem_get_info``: free is what
        this allocator may still reserve, total is ``capacity_bytes``."""
        return self.total_bytes - self._reserved, self.capacity_bytes

    @property
    def segment_count(self) -> int:
        return len(self._segments)

    def largest_free_block(self) -> int:
        """The largest cached free block in bytes (0 when none), as the native ``cacheInfo``."""
        sizes = [b.size for b in self._free_small + self._free_large]
        return max(sizes, default=0)

    def live_handles(self) -> list[int]:
        return sorted(self._active)

    def block_size(self, handle: int) -> int:
        """The rounded size of the live block ``handle``."""
        block = self._active.get(handle)
        if block is None:
            raise ValueError(f"handle {handle!r} is not a live allocation of this simulator")
        return block.size

    def memory_stats(self) -> dict[str, int]:
        """The modelled subset of ``torch.cuda.memory_stats()``, with torch's key names."""
        out: dict[str, int] = {}
        for name, pools in self._stats.arrays.items():
            for pool, stat in pools.items():
                for counter in COUNTERS:
                    out[f"{name}.{pool}.{counter}"] = getattr(stat, counter)
        out.update(self._stats.scalars)
        out["max_split_size"] = -1 if self.max_split_size is None else self.max_split_size
        for name in ("oversize_allocations", "oversize_segments"):
            stat = getattr(self._stats, name)
            for counter in COUNTERS:
                out[f"{name}.{counter}"] = getattr(stat, counter)
        return dict(sorted(out.items()))

    def snapshot(self) -> list[dict[str, Any]]:
        """Segments and their blocks, shaped like ``torch.cuda.memory_snapshot()``."""
        result = []
        for address in sorted(self._segments):
            segment = self._segments[address]
            blocks = []
            allocated_size = requested_size = 0
            block = segment.head
            while block is not None:
                blocks.append(
                    {
                        "address": block.address,
                        "size": block.size,
                        "requested_size": block.requested,
                        "state": "active_allocated" if block.allocated else "inactive",
                        "frames": [],
                    }
                )
                if block.allocated:
                    allocated_size += block.size
                    requested_size += block.requested
                block = block.next
            result.append(
                {
                    "device": self.device_index,
                    "address": segment.address,
                    "total_size": segment.size,
                    "allocated_size": allocated_size,
                    "active_size": allocated_size,
                    "requested_size": requested_size,
                    "stream": segment.stream,
                    "segment_type": "small" if segment.small else "large",
                    "segment_pool_id": (0, 0),
                    "is_expandable": False,
                    "frames": [],
                    "blocks": blocks,
                }
            )
        return result

    # ----------------------------------------------------------------- internals
    def _pool(self, small: bool) -> list[_Block]:
        return self._free_small if small else self._free_large

    def _get_free_block(self, size: int, small: bool, stream: int) -> _Block | None:
        pool = self._pool(small)
        fits = [b for b in pool if b.stream == stream and b.size >= size]
        if not fits:
            return None
        best = min(fits, key=_Block.key)
        mss = self._mss
        if size < mss and best.size >= mss:  # do not hand an oversize block to a small request
            return None
        if size >= mss and best.size >= size + self.max_non_split_rounding:  # rounding limit
            return None
        pool.remove(best)
        return best

    def _should_split(self, block: _Block, size: int) -> bool:
        remaining = block.size - size
        if block.small:
            return remaining >= MIN_BLOCK_SIZE
        return size < self._mss and remaining > SMALL_SIZE

    def _new_address(self, size: int) -> int:
        if self._address_source is not None:
            return int(self._address_source(size))
        # Lowest gap in a simulated address space (segments are 2 MiB multiples).
        candidate = _ADDRESS_BASE
        for address in sorted(self._segments):
            if candidate + size <= address:
                break
            candidate = max(candidate, address + self._segments[address].size)
        return candidate

    def _alloc_block(self, alloc_size: int, small: bool, stream: int) -> _Block | None:
        if self._reserved + alloc_size > self._limit:
            return None
        address = self._new_address(alloc_size)
        segment = _Segment(address, alloc_size, stream, small)
        block = _Block(address, alloc_size, stream, small, segment)
        segment.head = block
        self._segments[address] = segment
        self._reserved += alloc_size
        self._stats.change("segment", small, 1)
        self._stats.change("reserved_bytes", small, alloc_size)
        if alloc_size >= self._mss:
            self._stats.oversize_segments.increase(1)
        self._stats.scalars["num_device_alloc"] += 1
        return block

    def _alloc_found_block(self, block: _Block, size: int, nbytes: int, split: bool) -> int:
        already_split = block.is_split()
        if split:
            remaining = block
            block = _Block(
                remaining.address, size, remaining.stream, remaining.small, remaining.segment
            )
            block.prev = remaining.prev
            if block.prev is not None:
                block.prev.next = block
            else:
                remaining.segment.head = block
            block.next = remaining
            remaining.prev = block
            remaining.address += size
            remaining.size -= size
            self._pool(remaining.small).append(remaining)
            if already_split:
                self._stats.change("inactive_split_bytes", block.small, -block.size)
            else:
                self._stats.change("inactive_split_bytes", block.small, remaining.size)
                self._stats.change("inactive_split", block.small, 1)
        elif already_split:
            self._stats.change("inactive_split_bytes", block.small, -block.size)
            self._stats.change("inactive_split", block.small, -1)
        block.allocated = True
        block.requested = nbytes
        self._active[block.address] = block
        for name, amount in (
            ("allocation", 1),
            ("allocated_bytes", block.size),
            ("active", 1),
            ("active_bytes", block.size),
            ("requested_bytes", nbytes),
        ):
            self._stats.change(name, block.small, amount)
        if block.size >= self._mss:
            self._stats.oversize_allocations.increase(1)
        return block.address

    def _free_block(self, block: _Block) -> None:
        original_size = block.size
        requested = block.requested
        pool = self._pool(block.small)
        net_blocks = net_bytes = 0
        for candidate in (block.prev, block.next):
            subsumed = self._try_merge(block, candidate, pool)
            if subsumed:
                net_blocks -= 1
                net_bytes -= subsumed
        pool.append(block)
        if block.is_split():
            net_blocks += 1
            net_bytes += block.size
        self._stats.change("inactive_split", block.small, net_blocks)
        self._stats.change("inactive_split_bytes", block.small, net_bytes)
        self._stats.change("active", block.small, -1)
        self._stats.change("active_bytes", block.small, -original_size)
        self._stats.change("requested_bytes", block.small, -requested)

    def _try_merge(self, dst: _Block, src: _Block | None, pool: list[_Block]) -> int:
        if src is None or src.allocated:
            return 0
        if dst.prev is src:  # [src dst]
            dst.address = src.address
            dst.prev = src.prev
            if dst.prev is not None:
                dst.prev.next = dst
            else:
                dst.segment.head = dst
        else:  # [dst src]
            dst.next = src.next
            if dst.next is not None:
                dst.next.prev = dst
        dst.size += src.size
        pool.remove(src)
        return src.size

    def _release_block(self, block: _Block) -> None:
        segment = block.segment
        assert not block.is_split() and segment.size == block.size
        self._stats.scalars["num_device_free"] += 1
        self._reserved -= block.size
        self._stats.change("segment", block.small, -1)
        self._stats.change("reserved_bytes", block.small, -block.size)
        if block.size >= self._mss:
            self._stats.oversize_segments.decrease(1)
        self._pool(block.small).remove(block)
        del self._segments[segment.address]

    def _release_available_cached_blocks(self, size: int, small: bool, stream: int) -> bool:
        if self.max_split_size is None:
            return False
        key_size = max(size, self._mss)
        ordered = sorted((b for b in self._pool(small) if b.stream == stream), key=_Block.key)
        if not ordered:
            return False
        fitting = [b for b in ordered if b.size >= key_size]
        if fitting:
            self._release_block(fitting[0])
            return True
        released = 0
        for block in reversed(ordered):  # largest first
            if released >= key_size or block.size < self._mss:
                break
            released += block.size
            self._release_block(block)
        return released >= key_size

    def _release_cached_blocks(self) -> None:
        self._stats.scalars["num_sync_all_streams"] += 1
        for pool in (self._free_large, self._free_small):
            for block in sorted(pool, key=_Block.key):
                if not block.is_split():
                    self._release_block(block)

    def _oom_message(self, alloc_size: int) -> str:
        allocated = self.memory_allocated()
        reserved = self.memory_reserved()
        device_free, capacity = self.mem_get_info()
        allowed = f"{format_size(self._limit)} allowed; " if self._fraction_set else ""
        outside = capacity - self.total_bytes  # the simulated context: this process's too
        process = (
            "Including non-PyTorch memory, this process has "
            f"{format_size(outside + self._reserved)} memory in use. "
            if outside
            else ""
        )
        return (
            f"CUDA out of memory. Tried to allocate {format_size(alloc_size)}. "
            f"GPU {self.device_index} has a total capacity of {format_size(capacity)} "
            f"of which {format_size(device_free)} is free. {process}{allowed}"
            f"Of the allocated memory {format_size(allocated)} is allocated by PyTorch, "
            f"and {format_size(reserved - allocated)} is reserved by PyTorch but unallocated. "
            "If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
            "See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
        )

    # ----------------------------------------------------------------- consistency
    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if the internal bookkeeping is inconsistent (for tests)."""
        reserved = allocated = 0
        free_blocks = {id(b) for b in self._free_small + self._free_large}
        assert len(free_blocks) == len(self._free_small) + len(self._free_large)
        seen_free = 0
        for address, segment in self._segments.items():
            assert segment.address == address and segment.head is not None
            assert segment.head.prev is None and segment.head.address == address
            reserved += segment.size
            cursor, block, prev_free = address, segment.head, False
            while block is not None:
                assert block.address == cursor and block.size > 0 and block.segment is segment
                assert block.size % MIN_BLOCK_SIZE == 0
                if block.allocated:
                    allocated += block.size
                    assert self._active.get(block.address) is block
                    prev_free = False
                else:
                    assert id(block) in free_blocks and not prev_free, "unmerged free neighbours"
                    seen_free += 1
                    prev_free = True
                cursor += block.size
                if block.next is not None:
                    assert block.next.prev is block
                block = block.next
            assert cursor == address + segment.size
        assert seen_free == len(free_blocks)
        assert reserved == self._reserved == self.memory_reserved()
        assert allocated == self.memory_allocated()
        assert len(self._active) == self._stats.arrays["allocation"]["all"].current
        assert self.segment_count == self._stats.arrays["segment"]["all"].current
        split_free = [b for b in self._free_small + self._free_large if b.is_split()]
        assert len(split_free) == self._stats.arrays["inactive_split"]["all"].current
        assert sum(b.size for b in split_free) == (
            self._stats.arrays["inactive_split_bytes"]["all"].current
        )
