"""The notes' cuDNN error (002:1360-1367): "Unable to find a valid cuDNN algorithm" is usually
an out-of-memory error in disguise, shown on the simulated GPU.

cuDNN's algorithm search allocates each candidate's workspace through the caching allocator and
moves on when that raises OutOfMemoryError; when no candidate is left it reports the algorithm
error instead of the OOM. :func:`conv_oom_demo` shows where memory runs out for a few batch sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.text import N_, T
from lessons.memory.allocator_sim import GiB, MiB, SimulatedOutOfMemory, format_size
from lessons.memory.backends import SimulatedGpu

#: The error the notes quote (002:1360), as the console prints it.
NOTES_ERROR = "Unable to find a valid cuDNN algorithm to run convolution"
#: The notes' reading of it (002:1367): their Chinese, and an English gloss.
NOTES_READING = (
    "很有可能是 GPU 显存不够的原因, 尝试把 batch_size 改小一点问题得以解决;",
    "most likely the GPU does not have enough memory; making batch_size smaller solved it.",
)
#: Why the notes' reading is usually right, and when it is not.
WHY = N_(
    "**Why.** For each convolution cuDNN offers several algorithms, many of which "
    "need a workspace of GPU memory. PyTorch's cuDNN path (Conv_v7.cpp) allocates "
    "the workspace through the caching allocator and, when that raises "
    "OutOfMemoryError, tries the next algorithm; if every one fails it reports "
    "*Unable to find a valid cuDNN algorithm* instead of the OOM. So the notes' "
    "reading is usually right, and a smaller batch leaves room for a workspace. "
    "Builds that use the cuDNN v8 frontend say *unable to find an engine to execute "
    "this computation* instead, and that message also appears for GPUs or cuDNN "
    "versions the build does not support, which no batch size fixes."
)
#: What :func:`conv_oom_demo`'s table shows, with its default numbers.
#: The same error in the error doctor (a link relative to this page).
ERROR_DOCTOR_LINK = N_(
    "The error doctor has this error beside the notes' other errors: "
    "[Unable to find a valid cuDNN algorithm](errors?errors.entry=cudnn-no-algorithm)."
)

DEMO_INTRO = N_(
    "On the simulated 8 GB GPU: activations of `batch x 128 MiB`, then a 1 GiB "
    "convolution workspace. The workspace request is where memory runs out:"
)


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


def conv_oom_rows(rows: tuple[ConvOomRow, ...]) -> list[dict[str, Any]]:
    """One table row per batch size: the sizes, where memory ran out, the allocator's message
    (headers and texts to translate are ``T``)."""
    return [
        {
            "batch": r.batch,
            T("activations"): format_size(r.activations),
            T("workspace"): format_size(r.workspace),
            T("result"): T("fits")
            if r.ok
            else T("OOM at the activations")
            if r.failed_at == "activations"
            else T("OOM at the workspace"),
            T("allocator message"): r.error,
        }
        for r in rows
    ]
