"""What evaluation without ``torch.no_grad()`` keeps alive (the notes, 004:49-53), measured.

:func:`measure_eval_memory` evaluates a small CNN in grad mode, under ``torch.no_grad()`` and
under ``torch.inference_mode()``, and counts the bytes autograd saves for a backward that never
comes; :func:`eval_memory_snippet` is the same measurement as standalone code.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.text import N_, T
from lessons.memory.allocator_sim import format_size

EVAL_MODES: tuple[str, ...] = (N_("grad enabled"), "torch.no_grad()", "torch.inference_mode()")


def _eval_model(seed: int = 0) -> nn.Module:
    """The small CNN the no_grad demo evaluates (only shapes matter), its weights drawn from a
    private generator seeded with ``seed``: PyTorch's default initialization, without the
    process-wide generator that every session of a server shares (another session seeding it
    between two layers would change these weights). Built on the meta device, so building it
    draws nothing from that generator either.

    Raises:
        ValueError: if ``seed`` is negative or not an integer.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, device="meta"),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, device="meta"),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10, device="meta"),
    ).to_empty(device="cpu")
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, nn.Conv2d | nn.Linear):
                # What reset_parameters does, with the generator made explicit.
                nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                bound = 1 / math.sqrt(layer.weight[0].numel())  # 1 / sqrt(fan_in)
                layer.bias.uniform_(-bound, bound, generator=generator)
    return model.eval()


@dataclass(frozen=True)
class EvalMemory:
    """One evaluation mode of :func:`measure_eval_memory`.

    ``saved_per_batch``: bytes autograd saved for backward during one forward (activations; the
    input and the weights, which exist anyway, are not counted); ``held``: bytes of those saved
    tensors still alive after the loop, kept by the outputs' graphs; ``cuda_peak``: growth of
    ``torch.cuda.max_memory_allocated`` over the loop on a GPU, else ``None``.
    """

    mode: str
    saved_per_batch: int
    held: int
    output_requires_grad: bool
    cuda_peak: int | None = None


@dataclass(frozen=True)
class EvalMemoryDemo:
    batch: int
    size: int
    batches: int
    device: str
    input_bytes: int
    weight_bytes: int
    modes: tuple[EvalMemory, ...]


def _mode_context(mode: str) -> contextlib.AbstractContextManager[Any]:
    if mode == "torch.no_grad()":
        return torch.no_grad()
    if mode == "torch.inference_mode()":
        return torch.inference_mode()
    return contextlib.nullcontext()


def measure_eval_memory(
    batch: int = 8, size: int = 64, batches: int = 4, device: str = "cpu"
) -> EvalMemoryDemo:
    """Evaluate a small CNN on ``batches`` batches of ``(batch, 3, size, size)`` float32 inputs,
    keeping every output (as an evaluation loop that collects predictions does), in each of
    :data:`EVAL_MODES`, and measure what autograd keeps.

    Saved tensors are counted with ``torch.autograd.graph.saved_tensors_hooks`` (unique storages,
    bytes); what stays alive is found with weak references after the loop. On ``cuda`` devices
    the loop's ``max_memory_allocated`` growth is measured too.

    Raises ``ValueError`` for a batch outside 1..256, a size outside 8..256, batches outside
    1..16 or a device that is neither ``cpu`` nor an available ``cuda`` device.
    """
    if not 1 <= batch <= 256:
        raise ValueError(f"batch must be 1..256, got {batch}")
    if not 8 <= size <= 256:
        raise ValueError(f"size must be 8..256, got {size}")
    if not 1 <= batches <= 16:
        raise ValueError(f"batches must be 1..16, got {batches}")
    on_cuda = device.startswith("cuda")
    if device != "cpu" and not (on_cuda and torch.cuda.is_available()):
        raise ValueError(f"device must be 'cpu' or an available CUDA device, got {device!r}")
    model = _eval_model().to(device)
    skip = {p.untyped_storage().data_ptr() for p in model.parameters()}
    generator = torch.Generator().manual_seed(1)
    inputs = [torch.randn(batch, 3, size, size, generator=generator) for _ in range(batches)]
    inputs = [x.to(device) for x in inputs]
    skip |= {x.untyped_storage().data_ptr() for x in inputs}
    results = []
    for mode in EVAL_MODES:
        saved: dict[int, int] = {}
        refs: list[weakref.ref[torch.Tensor]] = []
        first: int | None = None

        def pack(t: torch.Tensor, saved=saved, refs=refs) -> torch.Tensor:
            ptr = t.untyped_storage().data_ptr()
            if ptr not in skip and ptr not in saved:
                saved[ptr] = t.untyped_storage().nbytes()
                refs.append(weakref.ref(t))
            return t

        if on_cuda:
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
            start = torch.cuda.memory_allocated(device)
        outputs = []
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), _mode_context(mode):
            for x in inputs:
                outputs.append(model(x))
                if first is None:
                    first = sum(saved.values())
        peak = None
        if on_cuda:
            torch.cuda.synchronize(device)
            peak = torch.cuda.max_memory_allocated(device) - start
        alive = {
            t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
            for r in refs
            if (t := r()) is not None
        }
        results.append(
            EvalMemory(mode, first or 0, sum(alive.values()), outputs[0].requires_grad, peak)
        )
        del outputs
    return EvalMemoryDemo(
        batch,
        size,
        batches,
        device,
        inputs[0].nbytes,
        sum(p.nbytes for p in model.parameters()),
        tuple(results),
    )


#: What the notes say about evaluation, and why it matters, over the no_grad demo.
NO_GRAD_INTRO = N_(
    "The notes (004:49-53): evaluate under `torch.no_grad()`, or memory may blow up. "
    "In grad mode every forward saves activations for a backward that never comes, and "
    "an evaluation loop that keeps its outputs keeps all of them alive through the graph."
)


def eval_memory_rows(demo: EvalMemoryDemo) -> list[dict[str, Any]]:
    """One table row per mode of ``demo``; headers and texts to translate are ``T``, sizes are
    formatted, ``output.requires_grad`` stays a bool (the CUDA column only on a GPU)."""
    return [
        {
            T("mode"): T(m.mode),
            T("saved for backward per batch"): format_size(m.saved_per_batch),
            T("still held after {n} batch(es)", n=demo.batches): format_size(m.held),
            "output.requires_grad": m.output_requires_grad,
            **(
                {T("CUDA max_memory_allocated growth"): format_size(m.cuda_peak)}
                if m.cuda_peak is not None
                else {}
            ),
        }
        for m in demo.modes
    ]


def measured_text(demo: EvalMemoryDemo) -> tuple[T, ...]:
    """The demo's result in sentences (shown one after the other): what grad mode saved and
    kept, and, without a GPU, what a GPU would add."""
    grad = demo.modes[0]
    measured = T(
        "Measured on `{device}` with `saved_tensors_hooks`: in grad mode each batch saves "
        "**{saved}** of activations (the input, {input}, and the weights, {weights}, not "
        "counted), and keeping {n} outputs keeps **{held}** alive; under `torch.no_grad()` "
        "nothing is saved.",
        device=demo.device,
        saved=format_size(grad.saved_per_batch),
        input=format_size(demo.input_bytes),
        weights=format_size(demo.weight_bytes),
        n=demo.batches,
        held=format_size(grad.held),
    )
    if grad.cuda_peak is not None:
        return (measured,)
    return (
        measured,
        T(
            " There is no GPU here: on one, the same bytes would be CUDA memory, and the "
            "table adds `torch.cuda.max_memory_allocated`."
        ),
    )


def eval_memory_snippet(batch: int = 8, size: int = 64, batches: int = 4) -> str:
    """Standalone code that prints the bytes each mode keeps, as :func:`measure_eval_memory`."""
    return f"""import contextlib
import weakref

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
).eval()
generator = torch.Generator().manual_seed(1)
inputs = [torch.randn({batch}, 3, {size}, {size}, generator=generator) for _ in range({batches})]
skip = {{t.untyped_storage().data_ptr() for t in [*model.parameters(), *inputs]}}

for name, mode in [("grad enabled", contextlib.nullcontext),
                   ("torch.no_grad()", torch.no_grad),
                   ("torch.inference_mode()", torch.inference_mode)]:
    saved, refs = {{}}, []

    def pack(t):  # called for every tensor autograd saves for backward
        ptr = t.untyped_storage().data_ptr()
        if ptr not in skip and ptr not in saved:
            saved[ptr] = t.untyped_storage().nbytes()
            refs.append(weakref.ref(t))
        return t

    outputs = []  # an evaluation loop that keeps its predictions
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), mode():
        for x in inputs:
            outputs.append(model(x))
    alive = {{t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
             for r in refs if (t := r()) is not None}}
    per_batch = sum(saved.values()) // len(inputs)
    print(f"{{name}}: saved {{per_batch:,}} B per batch, still held {{sum(alive.values()):,}} B")
    del outputs
"""
