"""One interface over a real CUDA device and the simulated one, plus the session's tensors.

The page drives a :class:`MemoryBackend` with the same actions whether it is a real GPU
(:class:`TorchCudaBackend`) or :class:`SimulatedGpu` (a :class:`CachingAllocatorSim` behind a
simulated CUDA context). Tensors made from the page live in a :class:`TensorLedger`, one per
browser session: only that ledger can free them, and they are freed when the ledger is collected.

The action functions (:func:`allocate`, :func:`free_tensors`, :func:`free_all`,
:func:`empty_cache`, :func:`reset_peak`) return an :class:`ActionResult` whose ``message`` says in
one line what changed in the numbers and why.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import weakref
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import torch

from core.text import T
from lessons.memory import gpu_memory
from lessons.memory.allocator_sim import (
    CachingAllocatorSim,
    GiB,
    MiB,
    SimulatedOutOfMemory,
    format_size,
    round_size,
    segment_size_for,
)

SIMULATED_TOTALS_GB = (8, 24, 80)
SIMULATED_CONTEXT_BYTES = 512 * MiB  # a typical CUDA context; NVML counts it, torch does not
DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
    "int64": torch.int64,
    "int32": torch.int32,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
UNITS: dict[str, int] = {"B": 1, "KB": 1024, "MB": MiB, "GB": GiB}


class BackendOutOfMemory(RuntimeError):
    """The backend's allocator ran out of memory; ``str()`` is torch's (or the sim's) message."""


class BackendError(RuntimeError):
    """Any other device error during an action (the message is shown as it is)."""


@dataclass(frozen=True)
class MemoryState:
    """Everything the page shows about one device at one instant, in bytes.

    ``device_used`` / ``device_total`` are NVML's numbers on a real GPU (``None`` where NVML cannot
    be read) and the simulated device's numbers on :class:`SimulatedGpu`.
    """

    label: str
    simulated: bool
    allocated: int
    reserved: int
    max_allocated: int
    max_reserved: int
    segments: int
    inactive_split_bytes: int
    largest_free_block: int
    num_alloc_retries: int
    num_ooms: int
    device_used: int | None
    device_total: int | None
    limit: int | None
    stats: dict[str, int] = field(default_factory=dict)
    processes: tuple[gpu_memory.NvmlProcess, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def cached(self) -> int:
        """Reserved but not allocated: free blocks PyTorch keeps for reuse."""
        return self.reserved - self.allocated

    @property
    def not_reserved_used(self) -> int | None:
        """Used by the device but not reserved by PyTorch (CUDA context, other processes)."""
        if self.device_used is None:
            return None
        return max(self.device_used - self.reserved, 0)


class MemoryBackend(Protocol):
    """What the page needs from a device, real or simulated."""

    label: str
    simulated: bool
    key: str

    def state(self) -> MemoryState: ...

    def snapshot(self) -> list[dict[str, Any]]: ...

    def allocate(self, nbytes: int, shape: tuple[int, ...] | None, dtype: str) -> Any: ...

    def release(self, handle: Any) -> None: ...

    def block_size(self, handle: Any) -> int: ...

    def empty_cache(self) -> None: ...

    def reset_peak(self) -> None: ...

    def limit_reserved(self, cap_bytes: int | None) -> None: ...

    def free_for_request(self) -> int: ...


def _state_from_stats(
    label: str,
    simulated: bool,
    stats: dict[str, int],
    snapshot_free: int,
    **kwargs: Any,
) -> MemoryState:
    return MemoryState(
        label=label,
        simulated=simulated,
        allocated=stats.get("allocated_bytes.all.current", 0),
        reserved=stats.get("reserved_bytes.all.current", 0),
        max_allocated=stats.get("allocated_bytes.all.peak", 0),
        max_reserved=stats.get("reserved_bytes.all.peak", 0),
        segments=stats.get("segment.all.current", 0),
        inactive_split_bytes=stats.get("inactive_split_bytes.all.current", 0),
        largest_free_block=snapshot_free,
        num_alloc_retries=stats.get("num_alloc_retries", 0),
        num_ooms=stats.get("num_ooms", 0),
        stats=stats,
        **kwargs,
    )


def largest_free_block(snapshot: list[dict[str, Any]]) -> int:
    """The largest cached free block in a ``memory_snapshot()``-shaped list (0 when none)."""
    return max(
        (b["size"] for seg in snapshot for b in seg["blocks"] if b["state"] == "inactive"),
        default=0,
    )


class SimulatedGpu:
    """A simulated GPU: ``total_gb`` GiB, of which a simulated CUDA context takes
    ``context_bytes``; the rest is what the caching-allocator model may reserve."""

    simulated = True

    def __init__(self, total_gb: int = 24, *, context_bytes: int = SIMULATED_CONTEXT_BYTES):
        if total_gb not in SIMULATED_TOTALS_GB:
            raise ValueError(
                T(
                    "simulated total must be one of {totals} GB, got {total!r}",
                    totals=SIMULATED_TOTALS_GB,
                    total=total_gb,
                )
            )
        self.total_gb = total_gb
        self.device_total = total_gb * GiB
        self.context_bytes = context_bytes
        self.sim = CachingAllocatorSim(
            self.device_total - context_bytes, capacity_bytes=self.device_total
        )
        self.key = f"sim:{total_gb}"
        self.label = T("simulated GPU ({total_gb} GB)", total_gb=total_gb)

    def state(self) -> MemoryState:
        sim = self.sim
        limit = sim.limit_bytes if sim.memory_fraction < 1.0 else None
        return _state_from_stats(
            self.label,
            True,
            sim.memory_stats(),
            sim.largest_free_block(),
            device_used=self.context_bytes + sim.memory_reserved(),
            device_total=self.device_total,
            limit=limit,
            notes=(T("simulated CUDA context: {size}", size=format_size(self.context_bytes)),),
        )

    def snapshot(self) -> list[dict[str, Any]]:
        return self.sim.snapshot()

    def allocate(self, nbytes: int, shape: tuple[int, ...] | None, dtype: str) -> int:
        try:
            return self.sim.malloc(nbytes)
        except SimulatedOutOfMemory as error:
            raise BackendOutOfMemory(str(error)) from error

    def release(self, handle: Any) -> None:
        self.sim.free(handle)

    def block_size(self, handle: Any) -> int:
        return self.sim.block_size(handle)

    def empty_cache(self) -> None:
        self.sim.empty_cache()

    def reset_peak(self) -> None:
        self.sim.reset_peak_memory_stats()

    def limit_reserved(self, cap_bytes: int | None) -> None:
        fraction = 1.0 if cap_bytes is None else min(cap_bytes / self.sim.total_bytes, 1.0)
        self.sim.set_memory_fraction(fraction)

    def free_for_request(self) -> int:
        return self.sim.limit_bytes - self.sim.memory_allocated()


class TorchCudaBackend:
    """A real CUDA device through ``torch.cuda`` (process-wide allocator) and NVML."""

    simulated = False

    def __init__(self, device: str):
        if not device.startswith("cuda:") or not device[5:].isdigit():
            raise ValueError(T("device must look like 'cuda:N', got {device!r}", device=device))
        reason = gpu_memory.torch_unavailable_reason()
        if reason:
            raise ValueError(T("cannot use {device}: {reason}", device=device, reason=reason))
        self.index = int(device[5:])
        if self.index >= torch.cuda.device_count():
            raise ValueError(
                T(
                    "{device} does not exist: torch sees {count}",
                    device=device,
                    count=torch.cuda.device_count(),
                )
            )
        self.device = torch.device(device)
        self.key = device
        self.label = device

    def state(self) -> MemoryState:
        reading = gpu_memory.read_torch()
        dev = next((d for d in reading.devices if d.index == self.index), None)
        stats = dict(dev.stats) if dev else {}
        nvml = gpu_memory.read_nvml()
        nvml_index = gpu_memory.nvml_index_for_torch(self.index)
        nvml_dev = next((d for d in nvml.devices if d.index == nvml_index), None)
        notes = []
        if nvml_dev is None:
            notes.append(T("NVML: {reason}", reason=nvml.reason or T("device not matched")))
        limit = None
        snapshot_free = 0
        if torch.cuda.is_initialized():
            snapshot_free = largest_free_block(self.snapshot())
        return _state_from_stats(
            f"{self.label} ({nvml_dev.name})" if nvml_dev else self.label,
            False,
            stats,
            snapshot_free,
            device_used=nvml_dev.used if nvml_dev else None,
            device_total=nvml_dev.total if nvml_dev else (dev.total if dev else None),
            limit=limit,
            processes=nvml_dev.processes if nvml_dev else (),
            notes=tuple(notes),
        )

    def snapshot(self) -> list[dict[str, Any]]:
        if not torch.cuda.is_initialized():
            return []
        return [s for s in torch.cuda.memory_snapshot() if s.get("device") == self.index]

    def allocate(self, nbytes: int, shape: tuple[int, ...] | None, dtype: str) -> torch.Tensor:
        try:
            if shape is not None:
                return torch.empty(shape, dtype=DTYPES[dtype], device=self.device)
            return torch.empty(nbytes, dtype=torch.uint8, device=self.device)
        except torch.OutOfMemoryError as error:
            raise BackendOutOfMemory(str(error)) from error
        except RuntimeError as error:  # any other CUDA error: report it, keep the server up
            raise BackendError(f"the device refused the allocation: {error}") from error

    def release(self, handle: Any) -> None:
        del handle  # the ledger drops its reference; the allocator frees at refcount zero

    def block_size(self, handle: Any) -> int:
        """The allocator's block for this tensor (found by address in the snapshot)."""
        address = handle.untyped_storage().data_ptr()
        for segment in self.snapshot():
            for block in segment["blocks"]:
                if block["address"] == address:
                    return int(block["size"])
        return round_size(handle.untyped_storage().nbytes())

    def empty_cache(self) -> None:
        with torch.cuda.device(self.device):
            torch.cuda.empty_cache()

    def reset_peak(self) -> None:
        torch.cuda.reset_peak_memory_stats(self.device)

    def limit_reserved(self, cap_bytes: int | None) -> None:
        total = torch.cuda.mem_get_info(self.device)[1]
        fraction = 1.0 if cap_bytes is None else min(cap_bytes / total, 1.0)
        torch.cuda.set_per_process_memory_fraction(fraction, self.device)

    def free_for_request(self) -> int:
        free, _ = torch.cuda.mem_get_info(self.device)
        return (
            int(free)
            + torch.cuda.memory_reserved(self.device)
            - torch.cuda.memory_allocated(self.device)
        )


# ---------------------------------------------------------------------- a GPU shared by a class
#: ``shared`` (default): the server's GPU serves many sessions. Guided scenarios and the Cache
#: tab's calls (``empty_cache``, ``reset_peak_memory_stats``, ``set_per_process_memory_fraction``)
#: act on the whole process, so on a real device they run only on the simulated GPU; Allocate
#: holds each session to a quota (:func:`session_quota`). ``exclusive``: one user's own GPU,
#: where all of it is allowed.
GPU_MEMORY_ENV = "TP_GPU_MEMORY"
#: The per-session quota of real GPU memory under ``shared``, in MiB.
GPU_QUOTA_ENV = "TP_GPU_SESSION_QUOTA_MIB"
DEFAULT_SESSION_QUOTA = 2**30  # 1 GiB: a few 1024x1024 float tensors; 50 sessions in 50 GiB

GpuMemoryPolicy = Literal["shared", "exclusive"]


def gpu_memory_policy(environ: Mapping[str, str] = os.environ) -> GpuMemoryPolicy:
    """``$TP_GPU_MEMORY``: ``"shared"`` (unset or empty) or ``"exclusive"``.

    Raises:
        ValueError: for any other value, naming it.
    """
    value = (environ.get(GPU_MEMORY_ENV) or "shared").strip().lower()
    if value not in ("shared", "exclusive"):
        raise ValueError(
            T(
                "{var} must be 'shared' or 'exclusive', got {value!r}",
                var=GPU_MEMORY_ENV,
                value=environ.get(GPU_MEMORY_ENV),
            )
        )
    return value  # type: ignore[return-value]


def session_quota(environ: Mapping[str, str] = os.environ) -> int | None:
    """Bytes of real GPU memory one session may hold: ``None`` (no quota) under ``exclusive``,
    else ``$TP_GPU_SESSION_QUOTA_MIB`` MiB (default 1 GiB).

    Raises:
        ValueError: if the policy is unknown or the quota is not a positive number of MiB.
    """
    if gpu_memory_policy(environ) == "exclusive":
        return None
    text = (environ.get(GPU_QUOTA_ENV) or "").strip()
    if not text:
        return DEFAULT_SESSION_QUOTA
    try:
        mib = float(text)
    except ValueError:
        mib = -1.0
    if not (math.isfinite(mib) and mib > 0):
        raise ValueError(
            T("{var} must be a positive number of MiB, got {value!r}", var=GPU_QUOTA_ENV,
              value=text)
        )
    return int(mib * 2**20)


def process_wide_calls_allowed(backend: MemoryBackend, policy: GpuMemoryPolicy) -> bool:
    """Whether calls that act on the whole process may run on ``backend``: always on the
    simulated GPU (each session has its own), on a real device only under ``exclusive``."""
    return bool(getattr(backend, "simulated", False)) or policy == "exclusive"


def measuring_device(device: str, environ: Mapping[str, str] = os.environ) -> str:
    """Where a demo that resets the device's peak statistics (a process-wide call) may measure:
    ``device`` when it is a GPU of one user's own (``exclusive``), else ``"cpu"`` (a shared GPU,
    or an unknown policy, whose error the page shows at the top).

    >>> measuring_device("cuda:0", {GPU_MEMORY_ENV: "exclusive"}), measuring_device("cuda:0", {})
    ('cuda:0', 'cpu')
    """
    try:
        exclusive = gpu_memory_policy(environ) == "exclusive"
    except ValueError:
        exclusive = False
    return device if device.startswith("cuda") and exclusive else "cpu"


# ---------------------------------------------------------------------------------- ledger
@dataclass(frozen=True)
class HeldTensor:
    """One tensor this session holds: ``nbytes`` asked for, ``block`` bytes the allocator gave."""

    id: int
    label: str
    backend_key: str
    nbytes: int
    block: int


def _release_entries(entries: dict[int, tuple[HeldTensor, Any, Any]], lock: threading.Lock):
    """Finalizer body: free everything still held (must not reference the ledger itself)."""
    with lock:
        items = list(entries.values())
        entries.clear()
    for _held, backend, handle in items:
        with contextlib.suppress(Exception):  # the backend may be gone (a replaced simulator)
            backend.release(handle)


class TensorLedger:
    """The tensors one browser session made. Only this ledger can free them; they are freed when
    the ledger is garbage-collected (the session ended) or :meth:`close` is called."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[HeldTensor, Any, Any]] = {}
        self._lock = threading.Lock()
        self._next_id = 1
        self._finalizer = weakref.finalize(self, _release_entries, self._entries, self._lock)

    def add(self, backend: MemoryBackend, handle: Any, label: str, nbytes: int) -> HeldTensor:
        with self._lock:
            held = HeldTensor(self._next_id, label, backend.key, nbytes, backend.block_size(handle))
            self._entries[held.id] = (held, backend, handle)
            self._next_id += 1
        return held

    def held(self, backend_key: str | None = None) -> list[HeldTensor]:
        with self._lock:
            return [h for h, _, _ in self._entries.values() if backend_key in (None, h.backend_key)]

    def free(self, tensor_id: int) -> HeldTensor:
        """Free tensor ``tensor_id``; raises ``ValueError`` if this session does not hold it."""
        with self._lock:
            entry = self._entries.pop(tensor_id, None)
        if entry is None:
            raise ValueError(T("tensor #{id} is not held by this session", id=tensor_id))
        held, backend, handle = entry
        backend.release(handle)
        return held

    def drop_backend(self, backend_key: str) -> int:
        """Forget every tensor of ``backend_key`` (its simulator was replaced); returns how many."""
        with self._lock:
            ids = [i for i, (h, _, _) in self._entries.items() if h.backend_key == backend_key]
            for i in ids:
                del self._entries[i]
        return len(ids)

    def close(self) -> None:
        """Free everything now (what the finalizer does when the session ends)."""
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._finalizer.alive


# ---------------------------------------------------------------------------------- actions
@dataclass(frozen=True)
class ActionResult:
    """What an action did: ``ok``, a one-line ``message`` tied to the numbers, both states."""

    ok: bool
    message: str
    before: MemoryState
    after: MemoryState
    error: str = ""
    held: tuple[HeldTensor, ...] = ()


def _signed(delta: int) -> str:
    return ("+" if delta >= 0 else "-") + format_size(abs(delta))


def parse_shape(text: str) -> tuple[int, ...]:
    """Parse ``"1024, 1024"`` / ``"(3, 224, 224)"`` / ``"64x64"`` into a shape.

    One trailing comma is allowed, as in Python (``"(3,)"``); any other empty piece
    (``"1024,,"``, ``"1024, , 3"``) is refused, naming it. Raises ``ValueError``.
    """
    cleaned = text.strip().strip("()[]").replace("x", ",").replace("×", ",").strip()
    if not cleaned:
        raise ValueError(
            T("shape must be comma-separated sizes such as '1024, 1024', got {text!r}", text=text)
        )
    if cleaned.endswith(","):
        cleaned = cleaned[:-1]  # "(3,)": Python's one-element tuple
    parts = [p.strip() for p in cleaned.split(",")]
    for i, part in enumerate(parts, start=1):
        if not part:
            raise ValueError(
                T(
                    "shape piece {i} of {n} is empty in {text!r}: write a size between "
                    "every pair of commas, such as '1024, 1024'",
                    i=i,
                    n=len(parts),
                    text=text,
                )
            )
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(
            T(
                "shape must be comma-separated whole numbers such as '1024, 1024', got {text!r}",
                text=text,
            )
        ) from None
    if any(s < 1 for s in shape):
        raise ValueError(T("every dimension must be >= 1, got {shape}", shape=shape))
    return shape


def request_bytes(
    size: float | None = None,
    unit: str = "MB",
    shape: tuple[int, ...] | None = None,
    dtype: str = "float32",
    *,
    max_bytes: int | None = None,
) -> tuple[int, str]:
    """The byte count and a label for a request by size+unit or by shape+dtype.

    Units are binary (KB = 1024 B, MB = 2**20 B, GB = 2**30 B), as torch reports them. ``size``
    ``None`` (a cleared input), zero, negative or not finite is refused. With ``max_bytes`` (the
    device's total memory) a request larger than the whole device is refused here, before any
    allocator is asked. Raises ``ValueError`` with a message for a person.
    """
    if shape is not None:
        if dtype not in DTYPES:
            raise ValueError(
                T(
                    "dtype must be one of {dtypes}, got {dtype!r}",
                    dtypes=", ".join(DTYPES),
                    dtype=dtype,
                )
            )
        itemsize = torch.empty((), dtype=DTYPES[dtype]).element_size()
        nbytes = math.prod(shape) * itemsize
        label = f"{dtype}{list(shape)}"
        _check_fits(nbytes, label, max_bytes)
        return nbytes, label
    if unit not in UNITS:
        raise ValueError(
            T("unit must be one of {units}, got {unit!r}", units=", ".join(UNITS), unit=unit)
        )
    if size is None:
        raise ValueError(T("size is empty: enter a positive number"))
    if isinstance(size, bool) or not isinstance(size, (int, float)):
        raise ValueError(T("size must be a positive number, got {size!r}", size=size))
    if not math.isfinite(size) or size <= 0:
        raise ValueError(T("size must be a positive number, got {size:g}", size=size))
    shown = f"{size:g} {unit}"
    exact = size * UNITS[unit]  # a float: may be far beyond any device, even infinite
    _check_fits(exact, shown, max_bytes)
    return int(math.ceil(exact)), shown


#: The longest shape text the Allocate form takes: a shape is a few numbers, a link's longer
#: text is not one.
SHAPE_MAX_CHARS = 200


def is_usable_shape(text: str) -> bool:
    """Whether a link's shape text is one the page can allocate from (else it opens at the
    default shape): :func:`parse_shape` takes it, and it is at most :data:`SHAPE_MAX_CHARS`.

    >>> is_usable_shape("3, 224, 224"), is_usable_shape("ten, 3")
    (True, False)
    """
    if len(text) > SHAPE_MAX_CHARS:
        return False
    try:
        parse_shape(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AllocationRequest:
    """What the Allocate form asks for: ``nbytes`` under a ``label``, as a tensor of ``shape``
    (``None`` for a request by size, made as ``uint8`` bytes) and ``dtype``."""

    nbytes: int
    label: str
    shape: tuple[int, ...] | None = None
    dtype: str = "uint8"


def form_request(
    by_shape: bool,
    size: float | None = None,
    unit: str = "MB",
    shape_text: str = "",
    dtype: str = "float32",
    *,
    max_bytes: int | None = None,
) -> AllocationRequest:
    """The Allocate form's request: ``size`` ``unit`` s, or (``by_shape``) a tensor of the shape
    ``shape_text`` and ``dtype``. Raises ``ValueError`` as :func:`request_bytes` and
    :func:`parse_shape` do (:func:`refusal_message` turns it into the page's message).

    >>> form_request(True, shape_text="2, 3", dtype="float16")
    AllocationRequest(nbytes=12, label='float16[2, 3]', shape=(2, 3), dtype='float16')
    """
    if by_shape:
        shape = parse_shape(shape_text)
        nbytes, label = request_bytes(shape=shape, dtype=dtype, max_bytes=max_bytes)
        return AllocationRequest(nbytes, label, shape, dtype)
    nbytes, label = request_bytes(size, unit, max_bytes=max_bytes)
    return AllocationRequest(nbytes, label)


def refusal_message(error: ValueError) -> str:
    """The page's message for a refused request: the error as a sentence, with a hint of a
    good request unless the error is a ``Refused: ...`` (which says why already)."""
    reason = error.args[0] if len(error.args) == 1 else str(error)
    if str(reason).endswith("."):
        reason = str(reason).rstrip(".")
    if str(reason).startswith("Refused"):
        return T("{error}.", error=reason)
    return T("{error}. Hint: a positive size, or a shape like '1024, 1024'.", error=reason)


def _check_fits(nbytes: int | float, label: str, max_bytes: int | None) -> None:
    if max_bytes is not None and nbytes > max_bytes:
        raise ValueError(
            T(
                "Refused: {size} is more than the whole device ({total}); you asked for {label}",
                size=format_size(nbytes),
                total=format_size(max_bytes),
                label=label,
            )
        )


def allocate(
    backend: MemoryBackend,
    ledger: TensorLedger,
    nbytes: int,
    label: str = "",
    *,
    shape: tuple[int, ...] | None = None,
    dtype: str = "uint8",
    quota: int | None = None,
) -> ActionResult:
    """Allocate ``nbytes`` on ``backend`` for this session and explain what happened.

    ``quota``: the most bytes this session's tensors on ``backend`` may add up to (the ledger's
    count, see :func:`session_quota`); a request past it is refused, nothing allocated."""
    before = backend.state()
    if nbytes < 1:
        message = T("Nothing to allocate: the request is 0 bytes.")
        return ActionResult(False, message, before, before)
    if quota is not None:
        holding = sum(h.nbytes for h in ledger.held(backend.key))
        if holding + nbytes > quota:
            message = T(
                "Refused: {size} more would bring this session's tensors to {total}, above its "
                "quota of {quota} on this shared GPU. Free tensors first, or ask for less.",
                size=format_size(nbytes),
                total=format_size(holding + nbytes),
                quota=format_size(quota),
            )
            return ActionResult(False, message, before, before)
    free = backend.free_for_request()
    if nbytes > free:
        message = T(
            "Refused: {size} is more than the {free} this device can still hand out. Ask for "
            "less, or free tensors first.",
            size=format_size(nbytes),
            free=format_size(max(free, 0)),
        )
        return ActionResult(False, message, before, before)
    try:
        handle = backend.allocate(nbytes, shape, dtype)
    except BackendOutOfMemory as error:
        after = backend.state()
        return ActionResult(False, explain_oom(nbytes, before, after), before, after, str(error))
    except BackendError as error:
        return ActionResult(False, T("{error}.", error=str(error)), before, backend.state())
    held = ledger.add(backend, handle, label or format_size(nbytes), nbytes)
    after = backend.state()
    return ActionResult(True, explain_allocation(held, before, after), before, after, held=(held,))


def explain_allocation(held: HeldTensor, before: MemoryState, after: MemoryState) -> str:
    rounded = held.block
    grew = after.reserved - before.reserved
    small = round_size(held.nbytes) <= MiB
    pool = T("small pool (<= 1 MiB)") if small else T("large pool (> 1 MiB)")
    head = T(
        "t{id}: asked for {size}, got a {block} block from the {pool} (allocated {delta})",
        id=held.id,
        size=format_size(held.nbytes),
        block=format_size(rounded),
        pool=pool,
        delta=_signed(after.allocated - before.allocated),
    )
    if grew > 0:
        values = {
            "pool": T("small") if small else T("large"),
            "segment": format_size(segment_size_for(round_size(held.nbytes))),
            "delta": _signed(grew),
        }
        if after.num_alloc_retries > before.num_alloc_retries:
            tail = T(
                "; no cached block in the {pool} pool fit, so the allocator reserved a new "
                "{segment} segment (reserved {delta}) after releasing its cached segments and "
                "retrying",
                **values,
            )
        else:
            tail = T(
                "; no cached block in the {pool} pool fit, so the allocator reserved a new "
                "{segment} segment (reserved {delta})",
                **values,
            )
    else:
        tail = T("; it reused memory already reserved, so reserved did not change")
    return T("{head}{tail}.", head=head, tail=tail)


def explain_oom(nbytes: int, before: MemoryState, after: MemoryState) -> str:
    segment = segment_size_for(round_size(nbytes))
    cached = before.cached
    return T(
        "Out of memory: {size} needed a new {segment} segment, no cached block was big enough "
        "(largest free block {largest}, {cached} free in the cache in total), and after "
        "releasing whole cached segments (reserved {delta}) the device still could not fit it. "
        "The page keeps running; free tensors or ask for less.",
        size=format_size(nbytes),
        segment=format_size(segment),
        largest=format_size(before.largest_free_block),
        cached=format_size(cached),
        delta=_signed(after.reserved - before.reserved),
    )


def free_tensors(
    backend: MemoryBackend, ledger: TensorLedger, tensor_ids: list[int]
) -> ActionResult:
    """Free the given tensors of this session (``del t``) and explain the result."""
    before = backend.state()
    try:
        freed = [ledger.free(i) for i in tensor_ids]
    except ValueError as error:
        after = backend.state()
        return ActionResult(False, error.args[0], before, after)
    after = backend.state()
    if not freed:
        return ActionResult(False, T("No tensors selected."), before, after)
    names = ", ".join(f"t{h.id}" for h in freed)
    return ActionResult(True, explain_free(names, before, after), before, after, held=tuple(freed))


def explain_free(names: str, before: MemoryState, after: MemoryState) -> str:
    return T(
        "del {names}: allocated {allocated}, reserved {reserved}: the blocks went back to "
        "PyTorch's cache, not to the driver, so nvidia-smi still counts them until empty_cache().",
        names=names,
        allocated=_signed(after.allocated - before.allocated),
        reserved=_signed(after.reserved - before.reserved),
    )


def free_all(backend: MemoryBackend, ledger: TensorLedger) -> ActionResult:
    """Free every tensor this session holds on ``backend``."""
    ids = [h.id for h in ledger.held(backend.key)]
    if not ids:
        state = backend.state()
        message = T("This session holds no tensors on this device.")
        return ActionResult(True, message, state, state)
    return free_tensors(backend, ledger, ids)


def empty_cache(backend: MemoryBackend) -> ActionResult:
    """``torch.cuda.empty_cache()`` and what it released."""
    before = backend.state()
    backend.empty_cache()
    after = backend.state()
    released = before.reserved - after.reserved
    segments = before.segments - after.segments
    message = T(
        "empty_cache(): released {segments} whole free segment(s), reserved {delta}; {cached} "
        "stays reserved but unallocated inside segments that still hold a live tensor "
        "(inactive_split {inactive}): only whole free segments can be returned.",
        segments=segments,
        delta=_signed(-released),
        cached=format_size(after.cached),
        inactive=format_size(after.inactive_split_bytes),
    )
    return ActionResult(True, message, before, after)


def reset_peak(backend: MemoryBackend) -> ActionResult:
    """``torch.cuda.reset_peak_memory_stats()``: the peaks restart from the current values."""
    before = backend.state()
    backend.reset_peak()
    after = backend.state()
    message = T(
        "reset_peak_memory_stats(): max allocated {allocated_before} -> {allocated_after}, max "
        "reserved {reserved_before} -> {reserved_after} (peaks restart from the current values).",
        allocated_before=format_size(before.max_allocated),
        allocated_after=format_size(after.max_allocated),
        reserved_before=format_size(before.max_reserved),
        reserved_after=format_size(after.max_reserved),
    )
    return ActionResult(True, message, before, after)


def held_label(name: str, held: HeldTensor) -> T:
    """A held tensor as the Free tab lists it: ``"t1: 4 B (block 512 bytes)"``."""
    return T("{name}: {label} (block {size})", name=name, label=held.label,
             size=format_size(held.block))  # fmt: skip


def session_simulated_gpu(state: MutableMapping[str, Any], total_gb: int, ledger: TensorLedger,
                          log: Any) -> SimulatedGpu:  # fmt: skip
    """The page session's simulated GPU (``state["memory.sim"]``), of ``total_gb`` GB: a new size
    replaces it, and the old one's tensors (in ``ledger``), snippet steps (``log``, a
    ``SnippetLog``), scenario run, message and chart history go with it."""
    sim = state.get("memory.sim")
    if sim is None or sim.total_gb != total_gb:
        if sim is not None:
            ledger.drop_backend(sim.key)
            log.forget(sim.key)
            state.pop("memory.scenario_run", None)
            state.pop("memory.message", None)
        sim = state["memory.sim"] = SimulatedGpu(int(total_gb))
        state["memory.history"].clear()
    return sim
