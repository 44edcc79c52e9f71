"""Guided scenarios from the notes, as data, runnable on a real GPU or on the simulator, and the
snippet builder that turns any list of steps into real ``torch.cuda`` code.

Every scenario starts by freeing this session's tensors and emptying the cache, so on the
simulator it always starts from an empty allocator. On a shared real GPU other sessions may hold
memory too; the steps then still show the same effect, with different absolute numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.allocator_sim import MiB, format_size
from core.memory_backends import (
    DTYPES,
    MemoryBackend,
    MemoryState,
    TensorLedger,
    allocate,
    empty_cache,
    free_all,
    free_tensors,
    reset_peak,
)

StepKind = Literal["alloc", "free", "free_all", "empty_cache", "reset_peak", "cap", "uncap"]


@dataclass(frozen=True)
class Step:
    """One action of a scenario.

    kind: ``alloc`` (``nbytes`` into variable ``name``, or ``shape`` + ``dtype``), ``free``
    (``del name``), ``free_all``, ``empty_cache``, ``reset_peak``, ``cap`` (allow only ``nbytes``
    more reserved memory than now, through ``set_per_process_memory_fraction``) and ``uncap``.
    """

    kind: StepKind
    name: str = ""
    nbytes: int = 0
    note: str = ""
    shape: tuple[int, ...] | None = None
    dtype: str = "uint8"


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    lesson: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class StepOutcome:
    """A step's result with the numbers right after it (bytes)."""

    step: Step
    ok: bool
    message: str
    allocated: int
    reserved: int
    segments: int
    device_used: int | None
    num_alloc_retries: int
    num_ooms: int
    error: str = ""
    tensor_id: int | None = None  # the ledger id of the tensor an ``alloc`` step made


@dataclass(frozen=True)
class ScenarioRun:
    scenario: Scenario
    backend_label: str
    outcomes: tuple[StepOutcome, ...]


_CLEAN = (
    Step("free_all", note="start clean: free this session's tensors"),
    Step("empty_cache", note="and return the cached segments to the driver"),
)


def _alloc(name: str, nbytes: int, note: str = "", **kw) -> Step:
    return Step("alloc", name=name, nbytes=nbytes, note=note, **kw)


def _fragmentation_steps() -> tuple[Step, ...]:
    steps: list[Step] = [
        *_CLEAN,
        Step("cap", nbytes=50 * MiB, note="allow only 50 MiB more reserved memory than now"),
    ]
    for i in range(10):
        note = "ten 4 MiB tensors fill two 20 MiB segments" if i == 0 else ""
        steps.append(_alloc(f"a{i}", 4 * MiB, note))
    for i in (0, 2, 4, 6, 8):
        steps.append(Step("free", name=f"a{i}", note="free every other tensor" if i == 0 else ""))
    steps += [
        _alloc(
            "big",
            12 * MiB,
            "OOM: 20 MiB is free in the cache and 10 MiB under the cap, but no piece is 12 MiB",
        ),
        Step("free", name="a1", note="free the rest of the first segment ..."),
        Step("free", name="a3", note="... which merges into one whole free 20 MiB segment"),
        _alloc(
            "big",
            24 * MiB,
            "no cached block fits and the cap is hit: the allocator releases the whole cached "
            "segment and retries (num_alloc_retries), which saves the allocation",
        ),
        Step("uncap", note="remove the cap again"),
    ]
    return tuple(steps)


SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario(
            "tiny",
            "A 4-byte tensor reserves 2 MB",
            "One float32 is 4 bytes, but the allocator rounds every request up to 512 B and "
            "gets memory from the driver in 2 MiB segments for small requests.",
            (
                *_CLEAN,
                _alloc(
                    "x",
                    4,
                    "torch.zeros(1): 512 B allocated, 2 MiB reserved",
                    shape=(1,),
                    dtype="float32",
                ),
            ),
        ),
        Scenario(
            "reuse",
            "Reuse of the cached remainder",
            "The rest of the 2 MiB segment stays cached: later small tensors are carved from it "
            "without asking the driver. A request over 1 MiB (here 1.6 MB, more than the ~1.5 MB "
            "left) goes to the large pool and a new 20 MiB segment.",
            (
                *_CLEAN,
                _alloc("a", 4, "first small tensor: a new 2 MiB segment"),
                _alloc("b", 100_000, "reuses the cached remainder: reserved does not change"),
                _alloc("c", 400_000, "still the same segment"),
                _alloc("d", 1_600_000, "> 1.5 MB: the large pool, a new 20 MiB segment"),
            ),
        ),
        Scenario(
            "partial",
            "empty_cache cannot release a partly used segment",
            "empty_cache() returns only segments that are entirely free. A single live 4-byte "
            "tensor keeps its whole 2 MiB segment reserved.",
            (
                *_CLEAN,
                _alloc("a", 4, "small segment (2 MiB)"),
                _alloc("b", 4, "same segment"),
                _alloc("c", 8 * MiB, "large segment (20 MiB)"),
                Step("free", name="a"),
                Step("free", name="c", note="the 20 MiB segment is now entirely free"),
                Step("empty_cache", note="releases the 20 MiB segment; b pins the 2 MiB one"),
            ),
        ),
        Scenario(
            "fragmentation",
            "Fragmentation causes OOM although enough memory is free; freeing the cache and "
            "retrying saves it",
            "Free memory scattered in small pieces inside partly used segments cannot serve a "
            "bigger request, and it cannot be returned to the driver either. Once a segment is "
            "entirely free, the allocator's own release-and-retry can use its memory.",
            _fragmentation_steps(),
        ),
        Scenario(
            "del",
            "del without empty_cache keeps nvidia-smi's number high",
            "del returns the block to PyTorch's cache, not to the driver: memory_allocated drops, "
            "memory_reserved and the device's used memory (nvidia-smi) stay until empty_cache().",
            (
                *_CLEAN,
                _alloc("x", 256 * MiB, "256 MiB: reserved and nvidia-smi go up"),
                Step("free", name="x", note="allocated drops, reserved and nvidia-smi stay"),
                Step("empty_cache", note="now the driver gets the memory back"),
            ),
        ),
    )
}


def _outcome(
    step: Step,
    ok: bool,
    message: str,
    state: MemoryState,
    error: str = "",
    tensor_id: int | None = None,
):
    return StepOutcome(
        step,
        ok,
        message,
        state.allocated,
        state.reserved,
        state.segments,
        state.device_used,
        state.num_alloc_retries,
        state.num_ooms,
        error,
        tensor_id,
    )


def run_steps(
    steps: tuple[Step, ...] | list[Step], backend: MemoryBackend, ledger: TensorLedger
) -> tuple[StepOutcome, ...]:
    """Run ``steps`` on ``backend``; tensors go to ``ledger``. A cap is always removed at the end.

    Variable names map to the ledger's tensors; an ``alloc`` to a name that holds a tensor frees
    the old one first (as ``x = torch.empty(...)`` would after the new allocation).
    """
    names: dict[str, int] = {}
    outcomes = []
    capped = False
    try:
        for step in steps:
            if step.kind == "alloc":
                label = step.name
                result = allocate(
                    backend, ledger, step.nbytes, label, shape=step.shape, dtype=step.dtype
                )
                # ``name = alloc(...)`` rebinds the name even when the allocation fails
                old = names.pop(step.name, None)
                if result.ok:
                    names[step.name] = result.held[0].id
                if old is not None:
                    free_tensors(backend, ledger, [old])
                outcomes.append(
                    _outcome(
                        step,
                        result.ok,
                        result.message,
                        result.after,
                        result.error,
                        names.get(step.name),
                    )
                )
            elif step.kind == "free":
                tensor_id = names.pop(step.name, None)
                if tensor_id is None:
                    state = backend.state()
                    outcomes.append(_outcome(step, True, f"{step.name} holds no tensor", state))
                    continue
                result = free_tensors(backend, ledger, [tensor_id])
                outcomes.append(_outcome(step, result.ok, result.message, result.after))
            elif step.kind == "free_all":
                names.clear()
                result = free_all(backend, ledger)
                outcomes.append(_outcome(step, result.ok, result.message, result.after))
            elif step.kind == "empty_cache":
                result = empty_cache(backend)
                outcomes.append(_outcome(step, True, result.message, result.after))
            elif step.kind == "reset_peak":
                result = reset_peak(backend)
                outcomes.append(_outcome(step, True, result.message, result.after))
            elif step.kind in ("cap", "uncap"):
                before = backend.state()
                if step.kind == "cap":
                    cap = before.reserved + step.nbytes
                    backend.limit_reserved(cap)
                    capped = True
                    message = (
                        f"set_per_process_memory_fraction: at most {format_size(cap)} reserved "
                        f"({format_size(step.nbytes)} more than now)."
                    )
                else:
                    backend.limit_reserved(None)
                    capped = False
                    message = "set_per_process_memory_fraction(1.0): the cap is gone."
                outcomes.append(_outcome(step, True, message, backend.state()))
            else:
                raise ValueError(f"unknown step kind {step.kind!r}")
    finally:
        if capped:
            backend.limit_reserved(None)
    return tuple(outcomes)


def run_scenario(key: str, backend: MemoryBackend, ledger: TensorLedger) -> ScenarioRun:
    """Run the guided scenario ``key`` (one of :data:`SCENARIOS`) on ``backend``."""
    if key not in SCENARIOS:
        raise ValueError(f"unknown scenario {key!r}; choose one of {', '.join(SCENARIOS)}")
    scenario = SCENARIOS[key]
    return ScenarioRun(scenario, backend.label, run_steps(scenario.steps, backend, ledger))


# ---------------------------------------------------------------------------------- snippet
_PRELUDE = '''import torch

MiB = 2**20
dev = torch.device("{device}")


def report(what):
    stats = torch.cuda.memory_stats(dev)
    print(
        f"{{what:<28}} allocated={{torch.cuda.memory_allocated(dev):>12,}} "
        f"reserved={{torch.cuda.memory_reserved(dev):>12,}} "
        f"segments={{stats.get('segment.all.current', 0)}}"
    )


def alloc(make):
    """Run make(); on OOM print torch's explanation and return None (the program goes on)."""
    try:
        return make()
    except torch.OutOfMemoryError as err:
        print("OutOfMemoryError:", str(err).split(" If reserved")[0])
        return None

'''


def _nbytes_expr(nbytes: int) -> str:
    if nbytes >= MiB and nbytes % MiB == 0:
        return f"{nbytes // MiB} * MiB"
    return str(nbytes)


def snippet_for(steps: tuple[Step, ...] | list[Step], device: str = "cuda:0") -> str:
    """Python that reproduces ``steps`` with real ``torch.cuda`` calls on ``device``.

    Each step prints the allocator's numbers afterwards, so the output can be compared with the
    page (or the simulator) line by line.
    """
    if not device.startswith("cuda"):
        device = "cuda:0"
    lines = [_PRELUDE.format(device=device)]
    live: list[str] = []
    for step in steps:
        if step.kind == "alloc":
            if step.shape is not None:
                if step.dtype not in DTYPES:
                    raise ValueError(f"dtype must be one of {', '.join(DTYPES)}")
                make = f"torch.empty({step.shape!r}, dtype=torch.{step.dtype}, device=dev)"
                what = f"{step.dtype}{list(step.shape)}"
            else:
                make = f"torch.empty({_nbytes_expr(step.nbytes)}, dtype=torch.uint8, device=dev)"
                what = format_size(step.nbytes)
            lines.append(f"{step.name} = alloc(lambda: {make})")
            lines.append(f'report("{step.name} = {what}")')
            if step.name not in live:
                live.append(step.name)
        elif step.kind == "free":
            if step.name in live:
                live.remove(step.name)
            lines.append(f"del {step.name}")
            lines.append(f'report("del {step.name}")')
        elif step.kind == "free_all":
            if live:
                lines.append(f"del {', '.join(live)}")
                live.clear()
            lines.append('report("free all")')
        elif step.kind == "empty_cache":
            lines.append("torch.cuda.empty_cache()")
            lines.append('report("empty_cache()")')
        elif step.kind == "reset_peak":
            lines.append("torch.cuda.reset_peak_memory_stats(dev)")
            lines.append('print("max allocated", torch.cuda.max_memory_allocated(dev))')
        elif step.kind == "cap":
            lines.append(
                "torch.cuda.set_per_process_memory_fraction("
                f"(torch.cuda.memory_reserved(dev) + {_nbytes_expr(step.nbytes)}) "
                "/ torch.cuda.mem_get_info(dev)[1], dev)"
            )
        elif step.kind == "uncap":
            lines.append("torch.cuda.set_per_process_memory_fraction(1.0, dev)")
        if step.note:
            lines[-1] += f"  # {step.note}"
    return "\n".join(lines) + "\n"
