"""Live GPU memory readings from PyTorch and from NVML that never crash.

Two sources, each returning a small frozen dataclass that either holds the numbers or says why
it could not be read:

- :func:`read_torch` asks PyTorch's caching allocator (``memory_allocated``, ``memory_reserved``,
  the peaks, the ``memory_stats()`` subset and ``mem_get_info``). It checks
  ``torch.cuda.is_available()`` first and never creates a CUDA context just to read: on a device
  PyTorch has not used yet, ``mem_get_info`` is skipped (it would create a context of hundreds of
  MB) and its fields stay ``None``.
- :func:`read_nvml` asks the driver through NVML (``pynvml`` from ``nvidia-ml-py``): total / free /
  used memory, the v2 ``reserved`` field, utilization and the compute processes. NVML sees the
  whole device: the CUDA context and other processes included.

:func:`sample` reads both and measures what the reading cost.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from core.text import N_, T
from lessons.memory.allocator_sim import format_size

NO_CUDA_BUILD = N_("no CUDA build")
NO_GPU = N_("no GPU")
NVML_NOT_INSTALLED = N_("nvidia-ml-py (pynvml) not installed")
NVML_LIBRARY_NOT_FOUND = N_("NVML library not found")
DRIVER_NOT_LOADED = N_("driver not loaded")
NVML_RETRY_S = 30.0  # a failed NVML start is retried after this many seconds

STAT_PREFIXES = (
    "allocation.",
    "segment.",
    "active.",
    "inactive_split.",
    "allocated_bytes.",
    "reserved_bytes.",
    "active_bytes.",
    "inactive_split_bytes.",
    "requested_bytes.",
)
STAT_SCALARS = ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free")


@dataclass(frozen=True)
class TorchDeviceReading:
    """PyTorch's view of one device (this process only), in bytes.

    ``free`` / ``total`` come from ``torch.cuda.mem_get_info`` and are ``None`` when reading them
    would have created a CUDA context (the device was not used by PyTorch yet).
    """

    index: int
    allocated: int
    reserved: int
    max_allocated: int
    max_reserved: int
    stats: dict[str, int]
    free: int | None = None
    total: int | None = None
    name: str = ""


@dataclass(frozen=True)
class TorchReading:
    """All devices as PyTorch sees them, or ``available=False`` and a ``reason``."""

    available: bool
    reason: str = ""
    devices: tuple[TorchDeviceReading, ...] = ()
    initialized: bool = False


@dataclass(frozen=True)
class NvmlProcess:
    """A compute process on a device; ``used`` is ``None`` when the driver does not say."""

    pid: int
    used: int | None


def process_rows(
    processes: tuple[NvmlProcess, ...], own_pid: int | None = None
) -> list[dict[str, Any]]:
    """One table row per compute process: its pid, whether it is this app's server (``own_pid``,
    by default this process) and what it uses (headers and texts to translate are ``T``).

    >>> process_rows((NvmlProcess(7, None),), own_pid=7)
    [{'pid': 7, 'who': "this app's server", 'used': 'n/a'}]
    """
    own_pid = os.getpid() if own_pid is None else own_pid
    return [
        {
            "pid": p.pid,
            T("who"): T("this app's server") if p.pid == own_pid else "",
            T("used"): T("n/a") if p.used is None else format_size(p.used),
        }
        for p in processes
    ]


@dataclass(frozen=True)
class NvmlDeviceReading:
    """The driver's view of one device (all processes and the contexts), in bytes / percent."""

    index: int
    name: str
    total: int
    free: int
    used: int
    reserved: int | None = None  # v2 memory info: memory the driver reserves for itself
    gpu_utilization: int | None = None
    memory_utilization: int | None = None
    processes: tuple[NvmlProcess, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class NvmlReading:
    """All NVML devices, or ``available=False`` and a ``reason``."""

    available: bool
    reason: str = ""
    driver_version: str = ""
    devices: tuple[NvmlDeviceReading, ...] = ()


@dataclass(frozen=True)
class MemorySample:
    """One reading of both sources at ``time`` (``time.time()``), and what it cost in seconds."""

    time: float
    torch: TorchReading
    nvml: NvmlReading
    cost_s: float = 0.0


# ---------------------------------------------------------------------------------- torch
def torch_unavailable_reason() -> str:
    """``""`` when PyTorch can use a GPU, else ``"no CUDA build"`` or ``"no GPU"``.

    ``torch.cuda.is_available()`` asks the CUDA runtime (``cudaGetDeviceCount``) and creates no
    context; it asks NVML instead only when ``PYTORCH_NVML_BASED_CUDA_CHECK=1``.
    """
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        return NO_CUDA_BUILD
    if not torch.cuda.is_available():
        return NO_GPU
    return ""


def _stats_subset(stats: dict[str, Any]) -> dict[str, int]:
    return {
        key: int(value)
        for key, value in stats.items()
        if key.startswith(STAT_PREFIXES) or key in STAT_SCALARS
    }


def read_torch() -> TorchReading:
    """Read PyTorch's allocator counters for every visible device; never raises.

    Returns:
        ``TorchReading(available=False, reason=...)`` without a CUDA build or GPU; otherwise one
        :class:`TorchDeviceReading` per device.
    """
    reason = torch_unavailable_reason()
    if reason:
        return TorchReading(False, reason)
    try:
        initialized = torch.cuda.is_initialized()
        devices = []
        for index in range(torch.cuda.device_count()):
            stats = torch.cuda.memory_stats(index) if initialized else {}
            reserved = int(stats.get("reserved_bytes.all.current", 0))
            free = total = None
            name = ""
            if initialized and (reserved > 0 or index == torch.cuda.current_device()):
                free, total = (int(v) for v in torch.cuda.mem_get_info(index))
                name = torch.cuda.get_device_name(index)
            devices.append(
                TorchDeviceReading(
                    index=index,
                    allocated=int(stats.get("allocated_bytes.all.current", 0)),
                    reserved=reserved,
                    max_allocated=int(stats.get("allocated_bytes.all.peak", 0)),
                    max_reserved=int(stats.get("reserved_bytes.all.peak", 0)),
                    stats=_stats_subset(stats),
                    free=free,
                    total=total,
                    name=name,
                )
            )
        return TorchReading(True, devices=tuple(devices), initialized=initialized)
    except Exception as error:  # a driver fault must not take the page down
        return TorchReading(False, f"torch could not read the GPU: {error}")


# ---------------------------------------------------------------------------------- NVML
@dataclass
class _NvmlState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    module: Any = None
    started: bool = False
    failure: str = ""
    failed_at: float = 0.0
    driver_version: str = ""


_NVML = _NvmlState()


def _nvml_reason(pynvml: Any, error: Exception) -> str:
    if isinstance(error, getattr(pynvml, "NVMLError_LibraryNotFound", ())):
        return NVML_LIBRARY_NOT_FOUND
    if isinstance(error, getattr(pynvml, "NVMLError_DriverNotLoaded", ())):
        return DRIVER_NOT_LOADED
    return f"NVML error: {error}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _start_nvml() -> tuple[Any, str]:
    """Initialize NVML once per process (thread-safe); returns ``(module, "")`` or a reason."""
    with _NVML.lock:
        if _NVML.started:
            return _NVML.module, ""
        if _NVML.failure and time.monotonic() - _NVML.failed_at < NVML_RETRY_S:
            return None, _NVML.failure
        try:
            import pynvml
        except ImportError:
            _NVML.failure, _NVML.failed_at = NVML_NOT_INSTALLED, time.monotonic()
            return None, _NVML.failure
        try:
            pynvml.nvmlInit()
            _NVML.driver_version = _text(pynvml.nvmlSystemGetDriverVersion())
        except pynvml.NVMLError as error:
            _NVML.failure, _NVML.failed_at = _nvml_reason(pynvml, error), time.monotonic()
            return None, _NVML.failure
        _NVML.module, _NVML.started, _NVML.failure = pynvml, True, ""
        return pynvml, ""


def reset_nvml() -> None:
    """Forget the NVML state (shut NVML down if it was started); the next read starts over."""
    with _NVML.lock:
        if _NVML.started:
            with contextlib.suppress(Exception):
                _NVML.module.nvmlShutdown()
        _NVML.module, _NVML.started, _NVML.failure, _NVML.failed_at = None, False, "", 0.0
        _NVML.driver_version = ""


def _read_nvml_device(pynvml: Any, index: int) -> NvmlDeviceReading:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    notes = []
    reserved = None
    try:
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
        reserved = int(memory.reserved)
    except (pynvml.NVMLError, AttributeError, TypeError):
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
        notes.append(N_("v2 memory info (reserved) not supported"))
    gpu_util = mem_util = None
    try:
        rates = pynvml.nvmlDeviceGetUtilizationRates(handle)
        gpu_util, mem_util = int(rates.gpu), int(rates.memory)
    except pynvml.NVMLError as error:
        notes.append(f"utilization: {error}")
    processes: tuple[NvmlProcess, ...] = ()
    try:
        processes = tuple(
            NvmlProcess(int(p.pid), None if p.usedGpuMemory is None else int(p.usedGpuMemory))
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
        )
    except pynvml.NVMLError as error:
        notes.append(f"processes: {error}")
    return NvmlDeviceReading(
        index=index,
        name=_text(pynvml.nvmlDeviceGetName(handle)),
        total=int(memory.total),
        free=int(memory.free),
        used=int(memory.used),
        reserved=reserved,
        gpu_utilization=gpu_util,
        memory_utilization=mem_util,
        processes=processes,
        notes=tuple(notes),
    )


def read_nvml() -> NvmlReading:
    """Read every NVML device; never raises.

    Returns:
        ``NvmlReading(available=False, reason=...)`` with reason ``"NVML library not found"``,
        ``"driver not loaded"``, ``"nvidia-ml-py (pynvml) not installed"`` or ``"NVML error: ..."``.
    """
    pynvml, reason = _start_nvml()
    if pynvml is None:
        return NvmlReading(False, reason)
    try:
        count = pynvml.nvmlDeviceGetCount()
        devices = tuple(_read_nvml_device(pynvml, index) for index in range(count))
    except pynvml.NVMLError as error:
        return NvmlReading(False, _nvml_reason(pynvml, error), _NVML.driver_version)
    if not devices:
        return NvmlReading(False, NO_GPU, _NVML.driver_version)
    return NvmlReading(True, "", _NVML.driver_version, devices)


def nvml_index_for_torch(torch_index: int, visible: str | None = None) -> int | None:
    """The NVML index of torch device ``torch_index`` under ``CUDA_VISIBLE_DEVICES``.

    NVML numbers every GPU in the machine; torch numbers only the visible ones. Returns ``None``
    when the mapping is given by UUIDs or is otherwise unknown.

    >>> nvml_index_for_torch(1, "3,5"), nvml_index_for_torch(0, None)
    (5, 0)
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") if visible is None else visible
    if visible is None or visible.strip() == "":
        return torch_index
    entries = [entry.strip() for entry in visible.split(",") if entry.strip()]
    if torch_index >= len(entries) or not entries[torch_index].isdigit():
        return None
    return int(entries[torch_index])


def sample() -> MemorySample:
    """Read both sources once; ``cost_s`` is the wall time the reading took."""
    start = time.perf_counter()
    torch_reading = read_torch()
    nvml_reading = read_nvml()
    return MemorySample(time.time(), torch_reading, nvml_reading, time.perf_counter() - start)
