"""The notes' cuDNN error (002:1360-1367): "Unable to find a valid cuDNN algorithm" is usually
an out-of-memory error in disguise, shown on the simulated GPU.

cuDNN's algorithm search allocates each candidate's workspace through the caching allocator and
moves on when that raises OutOfMemoryError; when no candidate is left it reports the algorithm
error instead of the OOM. :func:`conv_oom_demo` shows where memory runs out for a few batch sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from lessons.memory.allocator_sim import GiB, MiB, SimulatedOutOfMemory
from lessons.memory.backends import SimulatedGpu


@dataclass(frozen=True)
class ConvOomRow:
    """One batch size of :func:`conv_oom_demo`: ``failed_at`` is ``"activations"``,
    ``"workspace"`` or ``""`` (both fit); ``error`` the allocator's message."""

    batch: int
    activations: int
    workspace: int
    failed_at: str
    error: str

    @property
    def ok(self) -> bool:
        return not self.failed_at


def conv_oom_demo(
    batches: tuple[int, ...] = (56, 48, 32),
    per_sample: int = 128 * MiB,
    workspace: int = 1 * GiB,
    total_gb: int = 8,
) -> tuple[ConvOomRow, ...]:
    """On a simulated ``total_gb`` GB GPU, allocate ``batch * per_sample`` bytes of activations
    and then a convolution workspace of ``workspace`` bytes, for each batch size. An allocation
    that does not fit raises the allocator's OutOfMemoryError; when it is a cuDNN workspace,
    the algorithm search catches it and tries the next algorithm, and reports "Unable to find a
    valid cuDNN algorithm" when none is left. Raises ``ValueError`` for an empty or
    non-positive batch list.
    """
    if not batches or any(b < 1 for b in batches):
        raise ValueError(f"batches must be positive, got {batches!r}")
    rows = []
    for batch in batches:
        gpu = SimulatedGpu(total_gb)
        activations = batch * per_sample
        failed_at = error = ""
        for what, nbytes in (("activations", activations), ("workspace", workspace)):
            try:
                gpu.sim.malloc(nbytes)
            except SimulatedOutOfMemory as exc:
                failed_at, error = what, str(exc).split(" If reserved")[0]
                break
        rows.append(ConvOomRow(batch, activations, workspace, failed_at, error))
    return tuple(rows)
