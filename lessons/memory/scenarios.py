"""Guided scenarios from the notes, as data, runnable on a real GPU or on the simulator, and the
snippet builder that turns any list of steps into real ``torch.cuda`` code; plus the notes'
other memory lessons as live demos and their "the notes say / PyTorch today does" callouts.

Every scenario starts by freeing this session's tensors and emptying the cache, so on the
simulator it always starts from an empty allocator. On a shared real GPU other sessions may hold
memory too; the steps then still show the same effect, with different absolute numbers.

Each scenario cites the notes' line it teaches from (``Scenario.ref``, ``FILE:LINE`` in
``shared/seeds/``). The notes' allocator rule (000:5) is wrong in two places, which the ``reuse``
scenario and :func:`check_pool_rule` show from a live run: the small/large pool threshold is
1 MiB (``kSmallSize``), not 1.5 MB, and after a 4-byte tensor 2,096,640 B of the 2 MiB segment
remain, not 1.5 MB.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import weakref
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

from core.notes import NotesCallout, NotesRef, run_live
from core.text import N_, T
from lessons.memory.allocator_sim import (
    SMALL_SIZE,
    GiB,
    MiB,
    SimulatedOutOfMemory,
    format_size,
)
from lessons.memory.backends import (
    DTYPES,
    MemoryBackend,
    MemoryState,
    SimulatedGpu,
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
    """A guided scenario; ``ref`` is the notes' ``FILE:LINE`` it teaches from, ``verbatim`` says
    whether its steps are the notes' own example (else a variation of it)."""

    key: str
    title: str
    lesson: str
    steps: tuple[Step, ...]
    ref: str = ""
    verbatim: bool = False
    short: str = ""  # a title that fits a narrow select box; the full one heads the lesson

    @property
    def name(self) -> str:
        """The short title, or the title where there is none."""
        return self.short or self.title


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
    # where an ``alloc`` step's block landed, read from the backend's memory snapshot:
    segment: str = ""  # "S1", "S2", ... in order of first use within the run
    segment_type: str = ""  # "small" / "large" (the pool)
    segment_size: int = 0  # that segment's total size in bytes

    @property
    def landed_in(self) -> str:
        """``"S1: small pool, 2.00 MiB segment"``, or ``""`` when the step made no block."""
        if not self.segment:
            return ""
        return T(
            "{segment}: {pool} pool, {size} segment",
            segment=self.segment,
            pool=T(self.segment_type),
            size=format_size(self.segment_size),
        )


def step_label(step: Step) -> str:
    """A step as a short line of code: ``x = 512 bytes``, ``del a``, ``empty_cache()`` ..."""
    if step.kind == "alloc":
        what = (
            f"{step.dtype}{list(step.shape)}"
            if step.shape is not None
            else format_size(step.nbytes)
        )
        return f"{step.name} = {what}"
    return {
        "free": f"del {step.name}",
        "free_all": T("free all"),
        "empty_cache": "empty_cache()",
        "reset_peak": "reset_peak_memory_stats()",
        "cap": T("cap reserved at +{size}", size=format_size(step.nbytes)),
        "uncap": T("remove the cap"),
    }[step.kind]


@dataclass(frozen=True)
class ScenarioRun:
    scenario: Scenario
    backend_label: str
    outcomes: tuple[StepOutcome, ...]

    def rows(self) -> list[dict[str, str]]:
        """One short row per step for a table that fits a laptop screen: the step as code, the
        numbers after it, where its block landed, and what to look at (long text wraps)."""
        rows = []
        retries = 0
        for i, o in enumerate(self.outcomes, start=1):
            retried = o.num_alloc_retries > retries
            failed = "" if o.ok else "OOM" if o.error else "refused"
            status = _STATUS[retried, failed]
            retries = o.num_alloc_retries
            rows.append(
                {
                    "#": str(i),
                    N_("step"): T("{step} ({status})", step=step_label(o.step), status=status)
                    if status
                    else step_label(o.step),
                    N_("allocated"): format_size(o.allocated),
                    N_("reserved"): format_size(o.reserved),
                    N_("segments"): str(o.segments),
                    N_("lands in"): o.landed_in,
                    N_("look at"): o.step.note,
                }
            )
        return rows

    @property
    def summary(self) -> str:
        """One line for the page's message slot: the run and its last allocation's explanation
        (or its last step's, when it allocates nothing)."""
        allocs = [o for o in self.outcomes if o.step.kind == "alloc"]
        last = (allocs or list(self.outcomes))[-1]
        return T(
            "Ran '{name}' ({n} steps). {step}: {message}",
            name=T(self.scenario.name),
            n=len(self.outcomes),
            step=step_label(last.step),
            message=last.message,
        )

    @property
    def errors(self) -> tuple[str, ...]:
        """The OutOfMemoryErrors the run caught, one line each."""
        return tuple(
            T("Caught OutOfMemoryError at '{name}': {error}", name=o.step.name, error=o.error)
            for o in self.outcomes
            if o.error
        )


#: A step's status in :meth:`ScenarioRun.rows`, by (the allocator retried, the failure).
_STATUS: dict[tuple[bool, str], str] = {
    (False, ""): "",
    (False, "OOM"): T("OOM"),
    (False, "refused"): T("refused"),
    (True, ""): T("freed the cache, retried"),
    (True, "OOM"): T("freed the cache, retried: OOM"),
    (True, "refused"): T("freed the cache, retried: refused"),
}

_CLEAN = (
    Step("free_all", note=N_("start clean: free this session's tensors")),
    Step("empty_cache", note=N_("and return the cached segments to the driver")),
)


def _alloc(name: str, nbytes: int, note: str = "", **kw) -> Step:
    return Step("alloc", name=name, nbytes=nbytes, note=note, **kw)


def _fragmentation_steps() -> tuple[Step, ...]:
    steps: list[Step] = [
        *_CLEAN,
        Step("cap", nbytes=50 * MiB, note=N_("allow only 50 MiB more reserved memory than now")),
    ]
    for i in range(10):
        note = N_("ten 4 MiB tensors fill two 20 MiB segments") if i == 0 else ""
        steps.append(_alloc(f"a{i}", 4 * MiB, note))
    for i in (0, 2, 4, 6, 8):
        steps.append(
            Step("free", name=f"a{i}", note=N_("free every other tensor") if i == 0 else "")
        )
    steps += [
        _alloc(
            "big",
            12 * MiB,
            N_("OOM: 20 MiB is free in the cache and 10 MiB under the cap, but no piece is 12 MiB"),
        ),
        Step("free", name="a1", note=N_("free the rest of the first segment ...")),
        Step("free", name="a3", note=N_("... which merges into one whole free 20 MiB segment")),
        _alloc(
            "big",
            24 * MiB,
            N_(
                "no cached block fits and the cap is hit: the allocator releases the whole cached "
                "segment and retries (num_alloc_retries), which saves the allocation"
            ),
        ),
        Step("uncap", note=N_("remove the cap again")),
    ]
    return tuple(steps)


SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario(
            "tiny",
            N_("A 4-byte tensor reserves 2 MB"),
            N_(
                "One float32 is 4 bytes, but the allocator rounds every request up to 512 B and "
                "gets memory from the driver in 2 MiB segments for small requests."
            ),
            (
                *_CLEAN,
                _alloc(
                    "x",
                    4,
                    N_("torch.zeros(1): 512 B allocated, 2 MiB reserved"),
                    shape=(1,),
                    dtype="float32",
                ),
            ),
            ref="000:5",
            short=N_("4 bytes reserve 2 MiB"),
            verbatim=True,
        ),
        Scenario(
            "reuse",
            N_("The 1 MiB pool threshold (the notes say 1.5 MB)"),
            N_(
                "After a 4-byte tensor, 2,096,640 B of its 2 MiB segment stay cached (the notes "
                "say 1.5 MB). Requests up to 1 MiB (kSmallSize = 1,048,576 B) come from the small "
                "pool and are carved from that segment; a request of 1 MiB + 512 B goes to the "
                "large pool and a new 20 MiB segment although it would fit in the cached "
                "2,096,640 B, and although the notes' rule (< 1.5 MB: same block) puts it in the "
                "first block. "
                "The 'lands in' column reads each block's segment from the allocator's snapshot."
            ),
            (
                *_CLEAN,
                _alloc("a", 4, N_("a 4-byte tensor: a new 2 MiB small segment, 2,096,640 B left")),
                _alloc(
                    "b",
                    MiB + 512,
                    N_(
                        "1 MiB + 512 B: the notes' rule says the same block; the large pool gets "
                        "a new 20 MiB segment"
                    ),
                ),
                _alloc("c", MiB, N_("exactly 1 MiB, the largest small request: the first segment")),
                _alloc("d", 100_000, N_("reuses the cached remainder: reserved does not change")),
            ),
            ref="000:5",
            short=N_("The 1 MiB pool threshold"),
        ),
        Scenario(
            "partial",
            N_("empty_cache cannot release a partly used segment"),
            N_(
                "empty_cache() returns only segments that are entirely free. A single live 4-byte "
                "tensor keeps its whole 2 MiB segment reserved."
            ),
            (
                *_CLEAN,
                _alloc("a", 4, N_("small segment (2 MiB)")),
                _alloc("b", 4, N_("same segment")),
                _alloc("c", 8 * MiB, N_("large segment (20 MiB)")),
                Step("free", name="a"),
                Step("free", name="c", note=N_("the 20 MiB segment is now entirely free")),
                Step("empty_cache", note=N_("releases the 20 MiB segment; b pins the 2 MiB one")),
            ),
            ref="004:40-43",
            short=N_("empty_cache and a pinned segment"),
        ),
        Scenario(
            "fragmentation",
            N_(
                "Fragmentation causes OOM although enough memory is free; freeing the cache and "
                "retrying saves it"
            ),
            N_(
                "Free memory scattered in small pieces inside partly used segments cannot serve a "
                "bigger request, and it cannot be returned to the driver either. Once a segment is "
                "entirely free, the allocator's own release-and-retry can use its memory."
            ),
            _fragmentation_steps(),
            ref="000:5",
            short=N_("Fragmentation OOM and retry"),
        ),
        Scenario(
            "del",
            N_("del without empty_cache keeps nvidia-smi's number high"),
            N_(
                "del returns the block to PyTorch's cache, not to the driver: memory_allocated "
                "drops, memory_reserved and the device's used memory (nvidia-smi) stay until "
                "empty_cache()."
            ),
            (
                *_CLEAN,
                _alloc("x", 256 * MiB, N_("256 MiB: reserved and nvidia-smi go up")),
                Step("free", name="x", note=N_("allocated drops, reserved and nvidia-smi stay")),
                Step("empty_cache", note=N_("now the driver gets the memory back")),
            ),
            ref="004:40-43",
            short=N_("del without empty_cache"),
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
    landed: tuple[str, str, int] = ("", "", 0),
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
        *landed,
    )


def _active_blocks(snapshot: list[dict[str, Any]]) -> dict[int, tuple[int, str, int]]:
    """``{block address: (segment address, segment type, segment size)}`` of the live blocks in
    a ``memory_snapshot()``-shaped list (the simulator's or torch's)."""
    blocks: dict[int, tuple[int, str, int]] = {}
    for segment in snapshot:
        address = int(segment["address"])
        for block in segment.get("blocks", []):
            block_address = int(block.get("address", address))  # blocks lie back to back
            address = block_address + int(block["size"])
            if str(block.get("state", "")).startswith("active"):
                blocks[block_address] = (
                    int(segment["address"]),
                    str(segment.get("segment_type", "")),
                    int(segment["total_size"]),
                )
    return blocks


def run_steps(
    steps: tuple[Step, ...] | list[Step], backend: MemoryBackend, ledger: TensorLedger
) -> tuple[StepOutcome, ...]:
    """Run ``steps`` on ``backend``; tensors go to ``ledger``. A cap is always removed at the end.

    Variable names map to the ledger's tensors; an ``alloc`` to a name that holds a tensor frees
    the old one first (as ``x = torch.empty(...)`` would after the new allocation). For each
    ``alloc`` the outcome names the segment its block landed in, found by comparing the backend's
    snapshot before and after (on a shared GPU another session's allocation in between can hide
    it; the field is then empty).
    """
    names: dict[str, int] = {}
    segment_labels: dict[int, str] = {}  # segment address -> "S1", "S2", ...
    outcomes = []
    capped = False
    try:
        for step in steps:
            if step.kind == "alloc":
                label = step.name
                before_blocks = _active_blocks(backend.snapshot())
                result = allocate(
                    backend, ledger, step.nbytes, label, shape=step.shape, dtype=step.dtype
                )
                landed: tuple[str, str, int] = ("", "", 0)
                if result.ok:
                    new = [
                        where
                        for address, where in _active_blocks(backend.snapshot()).items()
                        if address not in before_blocks
                    ]
                    if len(new) == 1:
                        seg_address, seg_type, seg_size = new[0]
                        label_of = segment_labels.setdefault(
                            seg_address, f"S{len(segment_labels) + 1}"
                        )
                        landed = (label_of, seg_type, seg_size)
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
                        landed,
                    )
                )
            elif step.kind == "free":
                tensor_id = names.pop(step.name, None)
                if tensor_id is None:
                    state = backend.state()
                    message = T("{name} holds no tensor", name=step.name)
                    outcomes.append(_outcome(step, True, message, state))
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
                    message = T(
                        "set_per_process_memory_fraction: at most {cap} reserved ({more} more "
                        "than now).",
                        cap=format_size(cap),
                        more=format_size(step.nbytes),
                    )
                else:
                    backend.limit_reserved(None)
                    capped = False
                    message = T("set_per_process_memory_fraction(1.0): the cap is gone.")
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


# ----------------------------------------------------------------- the notes' pool rule (000:5)
#: The notes' threshold, "1.5 MB", read as they count "2 MB" for the 2 MiB segment (1.5 * 2**20 B).
#: Read as 1,500,000 B instead, every verdict below is the same.
NOTES_THRESHOLD = 3 * MiB // 2


@dataclass(frozen=True)
class PoolRuleRequest:
    """Where one request of the ``reuse`` scenario landed, beside where the notes' rule puts it.

    ``nbytes`` asked, ``pool`` (``"small"``/``"large"``) and ``segment`` (``"S1"`` ...) read from
    the allocator's snapshot, ``new_segment`` whether reserved memory grew;
    ``notes_same_block``: the notes' rule (``< 1.5 MB``: into the 4-byte tensor's block).
    """

    name: str
    nbytes: int
    pool: str
    segment: str
    new_segment: bool
    notes_same_block: bool

    @property
    def same_block(self) -> bool:
        """Whether it really landed in the first (4-byte tensor's) segment, ``S1``."""
        return self.segment == "S1"


@dataclass(frozen=True)
class PoolRuleCheck:
    """The notes' allocator rule (000:5) checked on a backend, from the ``reuse`` scenario.

    ``tiny_block``: bytes allocated for the 4-byte tensor (512); ``first_segment``: the segment
    it got (2 MiB); ``remaining``: what stays free in that segment (2,096,640 B; the notes say
    1.5 MB); ``threshold``: the largest small-pool request in this model (``kSmallSize``,
    1 MiB); ``requests``: the later requests and where they landed.
    """

    backend_label: str
    tiny_block: int
    first_segment: int
    remaining: int
    threshold: int
    requests: tuple[PoolRuleRequest, ...]

    @property
    def notes_rule_holds(self) -> bool:
        """Whether every request landed where the notes' 1.5 MB rule says it would."""
        return all(r.same_block == r.notes_same_block for r in self.requests)

    @property
    def contradicting(self) -> tuple[PoolRuleRequest, ...]:
        """The requests the notes' rule puts in the wrong place."""
        return tuple(r for r in self.requests if r.same_block != r.notes_same_block)


def check_pool_rule(backend: MemoryBackend | None = None) -> PoolRuleCheck:
    """Run the ``reuse`` scenario on ``backend`` (default: a fresh simulated 8 GB GPU) and read
    what the notes' rule at 000:5 claims: the remainder after a 4-byte tensor and which segment
    each later request lands in.

    >>> check = check_pool_rule()
    >>> check.remaining, [(r.nbytes, r.segment) for r in check.requests]
    (2096640, [(1049088, 'S2'), (1048576, 'S1'), (100000, 'S1')])
    """
    if backend is None:
        backend = SimulatedGpu(8)
    ledger = TensorLedger()
    try:
        run = run_scenario("reuse", backend, ledger)
    finally:
        ledger.close()
    allocs = [o for o in run.outcomes if o.step.kind == "alloc"]
    if not allocs or not all(o.ok for o in allocs):
        failed = next((o for o in allocs if not o.ok), None)
        reason = failed.message if failed is not None else "no allocation ran"
        raise ValueError(f"the reuse scenario did not complete on {backend.label}: {reason}")
    first, rest = allocs[0], allocs[1:]
    requests = tuple(
        PoolRuleRequest(
            o.step.name,
            o.step.nbytes,
            o.segment_type,
            o.segment,
            o.reserved > prev.reserved,
            o.step.nbytes < NOTES_THRESHOLD,
        )
        for prev, o in zip(allocs, rest, strict=False)
    )
    return PoolRuleCheck(
        backend.label,
        first.allocated,
        first.segment_size,
        first.segment_size - first.allocated,
        SMALL_SIZE,
        requests,
    )


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of the notes' allocator passage (000:4-5), checked live."""

    ref: str
    quote_zh: str
    claim_en: str
    holds: bool
    evidence: str


def check_allocator_claims() -> tuple[ClaimCheck, ...]:
    """Every claim of 000:4-5, each decided from a simulator run (CUDACachingAllocator.cpp's
    rules) or from the installed torch; ``holds`` is computed, never written down."""
    check = check_pool_rule()
    over = next(r for r in check.requests if r.nbytes > SMALL_SIZE)
    retry = simulate_oom_retry()
    with warnings_recorded() as caught:
        has_cached = hasattr(torch.cuda, "memory_cached")
        if has_cached:
            torch.cuda.memory_cached()
    renamed = any("memory_reserved" in str(w.message) for w in caught)
    return (
        ClaimCheck(
            "000:4",
            "PyTorch 一次会申请一块较大的显存，也就是 reserved memory",
            N_("PyTorch asks CUDA for a larger piece at once: the reserved memory."),
            check.first_segment > check.tiny_block,
            T("a 4-byte tensor reserved {n:,} B", n=check.first_segment),
        ),
        ClaimCheck(
            "000:5",
            "Pytorch 会向 CUDA 申请 2 MB 的内存块",
            N_("A 4-byte tensor makes PyTorch request a 2 MB block."),
            check.first_segment == 2 * MiB,
            T("segment {n:,} B (2 MiB)", n=check.first_segment),
        ),
        ClaimCheck(
            "000:5",
            "再为我们分配 512 Bytes 的显存",
            N_("... and allocate 512 bytes of it for the tensor."),
            check.tiny_block == 512,
            T("allocated {n:,} B", n=check.tiny_block),
        ),
        ClaimCheck(
            "000:5",
            "剩余的 1.5 MB 以 reserved memory（以前叫 cache memory）的形式保持占用",
            N_("The remaining 1.5 MB stays reserved (formerly called cache memory)."),
            abs(check.remaining - NOTES_THRESHOLD) < 512,
            T(
                "{n:,} B remain ({size}), not 1.5 MB",
                n=check.remaining,
                size=format_size(check.remaining),
            ),
        ),
        ClaimCheck(
            "000:5",
            "以前叫 cache memory",
            N_("Reserved memory was formerly called cache memory."),
            has_cached and renamed,
            T("torch.cuda.memory_cached() warns that it was renamed to memory_reserved")
            if renamed
            else T("torch.cuda.memory_cached() is gone"),
        ),
        ClaimCheck(
            "000:5",
            "如果我们申请的 Tensor 小于 1.5MB，那就直接放在刚刚申请的内存块中",
            N_("A tensor under 1.5 MB goes straight into that block; over 1.5 MB, a new block."),
            check.notes_rule_holds,
            T(
                "{n:,} B (< 1.5 MB) went to the {pool} pool, segment {segment}; the threshold is "
                "{threshold:,} B (1 MiB)",
                n=over.nbytes,
                pool=T(over.pool),
                segment=over.segment,
                threshold=check.threshold,
            ),
        ),
        ClaimCheck(
            "000:5",
            "Pytorch 会尝试切分释放掉这些内存块中闲置的部分，再重新向 CUDA 申请",
            N_(
                "Out of device memory, PyTorch splits off and frees the idle parts of its blocks "
                "and asks CUDA again."
            ),
            retry.partial_freed > 0,
            T(
                "released {released} of whole free segments and retried ({retries} retry); of "
                "the {partial_free} free inside the segment that still holds a tensor, "
                "{partial_freed} was released",
                released=format_size(retry.released),
                retries=retry.retries,
                partial_free=format_size(retry.partial_free),
                partial_freed=format_size(retry.partial_freed),
            ),
        ),
    )


@contextlib.contextmanager
def warnings_recorded() -> Iterator[list[Any]]:
    """``warnings.catch_warnings(record=True)`` with every warning shown (a tiny shorthand)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


@dataclass(frozen=True)
class OomRetry:
    """What the allocator did when a new segment did not fit (from :func:`simulate_oom_retry`).

    ``partial_free``: bytes free inside a segment that still holds a tensor; ``partial_freed``:
    how much of it the retry returned to the device; ``released``: bytes of whole free segments
    returned before the 24 MiB request succeeded; ``retries``: ``num_alloc_retries``;
    ``oom``: the message of a later 20 MiB request that found no room although
    ``partial_free`` bytes were free in the cache.
    """

    partial_free: int
    partial_freed: int
    released: int
    retries: int
    oom: str


#: The simulator run behind :func:`simulate_oom_retry` and the ``memory_oom_retry`` callout.
OOM_RETRY_CODE = """from lessons.memory.allocator_sim import (
    CachingAllocatorSim, SimulatedOutOfMemory, MiB,
)

sim = CachingAllocatorSim(44 * MiB)  # a GPU with room for 44 MiB, PyTorch's allocator rules
a = sim.malloc(4 * MiB)   # segment 1 (20 MiB): a uses 4 MiB, 16 MiB stay free inside it
b = sim.malloc(18 * MiB)  # does not fit the 16 MiB: segment 2 (18 MiB)
sim.free(b)               # segment 2 is now entirely free
stats = sim.memory_stats()
print("free inside segment 1:", stats["inactive_split_bytes.all.current"])
reserved = sim.memory_reserved()
c = sim.malloc(24 * MiB)  # needs a 24 MiB segment: 38 + 24 > 44 MiB
stats = sim.memory_stats()
print("released:", reserved + 24 * MiB - sim.memory_reserved())
print("retries:", stats["num_alloc_retries"])
print("free inside segment 1 after:", stats["inactive_split_bytes.all.current"])
try:
    d = sim.malloc(20 * MiB)
except SimulatedOutOfMemory as err:
    print("OOM:", str(err).split(" If reserved")[0])
"""


def _parse_oom_retry(output: str) -> OomRetry:
    def number(label: str) -> int:
        match = re.search(rf"^{re.escape(label)}: (\d+)$", output, re.M)
        if match is None:
            raise ValueError(f"the simulator run printed no '{label}' line: {output!r}")
        return int(match[1])

    before = number("free inside segment 1")
    after = number("free inside segment 1 after")
    oom = re.search(r"^OOM: (.*)$", output, re.M)
    return OomRetry(
        before,
        before - after,
        number("released"),
        number("retries"),
        oom[1] if oom else "",
    )


def simulate_oom_retry() -> OomRetry:
    """Run :data:`OOM_RETRY_CODE` (the simulator) and read what the allocator released."""
    run = run_live(OOM_RETRY_CODE)
    if run.raised:
        raise ValueError(f"the OOM retry run failed: {run.error}")
    return _parse_oom_retry(run.output)


# ----------------------------------------------------------------- callouts
#: The live simulator run behind the ``memory_pool_threshold`` callout.
POOL_RULE_CODE = """from lessons.memory.allocator_sim import CachingAllocatorSim, MiB

sim = CachingAllocatorSim(8 * 2**30)  # a simulated 8 GiB GPU with PyTorch's allocator rules
sim.malloc(4)  # the notes' 4-byte tensor
print("left in the 2 MiB segment:", sim.memory_reserved() - sim.memory_allocated())
for nbytes in (MiB + 512, MiB):  # both under the notes' 1.5 MB
    handle = sim.malloc(nbytes)
    seg = next(s for s in sim.snapshot() if s["address"] <= handle < s["address"] + s["total_size"])
    print(f"{nbytes} B -> {seg['segment_type']} pool, segment of {seg['total_size']} B")
"""


#: The pool rule callout's "today", by (the remainder is not 1.5 MB, the request over 1 MiB
#: would have fit in that remainder); the page fills in the run's numbers (``today_args``).
_POOL_RULE_TODAY: dict[tuple[bool, bool], str] = {
    (True, True): N_(
        "After the 4-byte tensor {remaining} B of the 2 MiB segment are free (2 MiB minus "
        "the {block} B block), not 1.5 MB. {over} B (1 MiB + 512 B, under the notes' 1.5 "
        "MB) went to the {over_pool} pool and a {over_seg} segment, although it would fit "
        "in those {remaining} B. {under} B went to the {under_pool} pool ({under_seg} "
        "segment). The threshold is kSmallSize = {small} B (1 MiB): requests up to it "
        "share 2 MiB segments, larger ones get a segment of their own (20 MiB under 10 "
        "MiB). The simulator follows c10/cuda/CUDACachingAllocator.cpp; on a GPU, run the "
        "'reuse' scenario on the real device to see the real allocator do the same."
    ),
    (True, False): N_(
        "After the 4-byte tensor {remaining} B of the 2 MiB segment are free (2 MiB minus "
        "the {block} B block), not 1.5 MB. {over} B (1 MiB + 512 B, under the notes' 1.5 "
        "MB) went to the {over_pool} pool and a {over_seg} segment. {under} B went to the "
        "{under_pool} pool ({under_seg} segment). The threshold is kSmallSize = {small} B "
        "(1 MiB): requests up to it share 2 MiB segments, larger ones get a segment of "
        "their own (20 MiB under 10 MiB). The simulator follows "
        "c10/cuda/CUDACachingAllocator.cpp; on a GPU, run the 'reuse' scenario on the "
        "real device to see the real allocator do the same."
    ),
    (False, True): N_(
        "After the 4-byte tensor {remaining} B of the 2 MiB segment are free (2 MiB minus "
        "the {block} B block), as the notes say. {over} B (1 MiB + 512 B, under the "
        "notes' 1.5 MB) went to the {over_pool} pool and a {over_seg} segment, although "
        "it would fit in those {remaining} B. {under} B went to the {under_pool} pool "
        "({under_seg} segment). The threshold is kSmallSize = {small} B (1 MiB): requests "
        "up to it share 2 MiB segments, larger ones get a segment of their own (20 MiB "
        "under 10 MiB). The simulator follows c10/cuda/CUDACachingAllocator.cpp; on a "
        "GPU, run the 'reuse' scenario on the real device to see the real allocator do "
        "the same."
    ),
    (False, False): N_(
        "After the 4-byte tensor {remaining} B of the 2 MiB segment are free (2 MiB minus "
        "the {block} B block), as the notes say. {over} B (1 MiB + 512 B, under the "
        "notes' 1.5 MB) went to the {over_pool} pool and a {over_seg} segment. {under} B "
        "went to the {under_pool} pool ({under_seg} segment). The threshold is kSmallSize "
        "= {small} B (1 MiB): requests up to it share 2 MiB segments, larger ones get a "
        "segment of their own (20 MiB under 10 MiB). The simulator follows "
        "c10/cuda/CUDACachingAllocator.cpp; on a GPU, run the 'reuse' scenario on the "
        "real device to see the real allocator do the same."
    ),
}


def _pool_rule_callout() -> NotesCallout:
    run = run_live(POOL_RULE_CODE)
    left = re.search(r"left in the 2 MiB segment: (\d+)", run.output)
    landed = [
        (int(n), pool, int(seg))
        for n, pool, seg in re.findall(r"(\d+) B -> (\w+) pool, segment of (\d+) B", run.output)
    ]
    if run.raised or left is None or len(landed) != 2:
        today = N_("The simulator run did not complete ({detail}).")
        today_args: tuple[tuple[str, str], ...] = (("detail", repr(run.error or run.output)),)
        verdict = "incomplete"
    else:
        remaining = int(left[1])
        (over, over_pool, over_seg), (under, under_pool, under_seg) = landed
        wrong_remainder = abs(remaining - NOTES_THRESHOLD) >= 512
        wrong_threshold = over_pool != "small" or over_seg != 2 * MiB
        verdict = "wrong" if wrong_remainder or wrong_threshold else "incomplete"
        today = _POOL_RULE_TODAY[wrong_remainder, bool(wrong_threshold and over < remaining)]
        today_args = (
            ("remaining", f"{remaining:,}"),
            ("block", f"{2 * MiB - remaining:,}"),
            ("over", f"{over:,}"),
            ("over_pool", over_pool),
            ("over_seg", format_size(over_seg)),
            ("under", f"{under:,}"),
            ("under_pool", under_pool),
            ("under_seg", format_size(under_seg)),
            ("small", f"{SMALL_SIZE:,}"),
        )
    return NotesCallout(
        evidence_by=SIMULATOR_EVIDENCE,
        key="memory_pool_threshold",
        title=N_("The 1.5 MB rule: the pool threshold is 1 MiB, and 2,096,640 B remain"),
        ref=NotesRef.parse("000:5"),
        quote_zh=(
            "剩余的 1.5 MB 以 reserved memory（以前叫 cache memory）的形式保持占用。"
            "假设这时候，你想再申请一条 Tensor，Pytorch 首先会去看之前申请的内存块够不够放。"
            "如果我们申请的 Tensor 小于 1.5MB，那就直接放在刚刚申请的内存块中。"
            "如果大于 1.5MB，Pytorch 则再向 CUDA 申请新的内存块。"
        ),
        gloss_en=(
            "The remaining 1.5 MB stays occupied as reserved memory (formerly called cache "
            "memory). If you then ask for another tensor, PyTorch first checks whether the block "
            "it got before has room. A tensor under 1.5 MB goes straight into that block; one "
            "over 1.5 MB makes PyTorch request a new block from CUDA."
        ),
        verdict=verdict,
        today=today,
        today_args=today_args,
        run=run,
    )


def _oom_retry_callout() -> NotesCallout:
    run = run_live(OOM_RETRY_CODE)
    try:
        retry = None if run.raised else _parse_oom_retry(run.output)
    except ValueError:
        retry = None
    if retry is None:
        today = N_("The simulator run did not complete ({detail}).")
        today_args: tuple[tuple[str, str], ...] = (("detail", repr(run.error or run.output)),)
        verdict = "incomplete"
    else:
        verdict = "wrong" if retry.partial_freed == 0 else "incomplete"
        today = N_(
            "When no cached block fits and the device cannot give a new segment, the allocator "
            "returns only its entirely free cached segments ({released} here) and retries once "
            "(num_alloc_retries = {retries}). It does not split off idle parts: of the "
            "{partial_free} free inside a segment that still holds a tensor, {partial_freed} "
            "was released. A later 20 MiB request then fails: the idle part stays reserved, and "
            "the device has no room for another segment: '{oom}'. (Only with the non-default "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True can the allocator return free "
            "pages from inside a segment.)"
        )
        today_args = (
            ("released", format_size(retry.released)),
            ("retries", str(retry.retries)),
            ("partial_free", format_size(retry.partial_free)),
            ("partial_freed", format_size(retry.partial_freed)),
            ("oom", retry.oom),
        )
    return NotesCallout(
        evidence_by=SIMULATOR_EVIDENCE,
        key="memory_oom_retry",
        title=N_("Before an OOM the allocator frees whole cached segments, not idle parts"),
        ref=NotesRef.parse("000:5"),
        quote_zh=(
            "假设 CUDA 也没有足够内存的时候，Pytorch 会尝试切分释放掉这些内存块中闲置的部分，"
            "再重新向 CUDA 申请。"
        ),
        gloss_en=(
            "If CUDA does not have enough memory either, PyTorch tries to split off and free the "
            "idle parts of these blocks, then asks CUDA again."
        ),
        verdict=verdict,
        today=today,
        today_args=today_args,
        run=run,
    )


#: Who produced a memory callout's live result: the simulator, which runs without a GPU.
SIMULATOR_EVIDENCE = T(
    "the app's allocator simulator (following PyTorch {version}'s CUDACachingAllocator.cpp)",
    version=torch.__version__.split("+")[0],
)


def notes_callouts() -> list[NotesCallout]:
    """The memory page's "the notes say / PyTorch today does" callouts (000:5), run live."""
    return [_pool_rule_callout(), _oom_retry_callout()]


# ------------------------------------------------------------ no_grad at evaluation (004:49-53)
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


# ----------------------------------------------------------------- torch.load (000:63, 000:76)
@dataclass(frozen=True)
class LoadAttempt:
    """One ``torch.load`` call on the saved file: the call as written, where the tensor landed
    (``None`` when it raised) and the error (``"Type: message"``)."""

    call: str
    device: str | None
    error: str | None


@dataclass(frozen=True)
class WorkerLoad:
    """Where one DDP worker's copy of the state_dict lands, without and with ``map_location``."""

    rank: int
    default_device: str
    mapped_device: str
    nbytes: int


@dataclass(frozen=True)
class MapLocationDemo:
    """``torch.load`` of a state_dict saved on ``saved_device``.

    ``location_tags``: the device tags ``torch.load`` read from the file (through a
    ``map_location`` callable that records them); ``rewritten``: True when no such device exists
    here, so the file was saved on the CPU and its tags rewritten (see
    :func:`saved_state_dict`); ``attempts``: the notes' calls and their results;
    ``workers``: where each of ``world_size`` workers' copies land (nothing is allocated for
    this; the destination is the tag, as ``torch.load`` restores it).
    """

    saved_device: str
    rewritten: bool
    nbytes: int
    location_tags: tuple[str, ...]
    attempts: tuple[LoadAttempt, ...]
    workers: tuple[WorkerLoad, ...]

    @property
    def gpu0_bytes_without_map_location(self) -> int:
        return sum(w.nbytes for w in self.workers if w.default_device == self.saved_device)


def _state_dict() -> dict[str, torch.Tensor]:
    layer = nn.Linear(256, 256)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(256 * 256, dtype=torch.float32).reshape(256, 256) / 1e4)
        layer.bias.zero_()
    return layer.state_dict()


def retag_archive(raw: bytes, old: str, new: str) -> bytes:
    """Rewrite the device tag ``old`` to ``new`` in a ``torch.save`` archive (pickle protocol 2
    writes it as ``BINUNICODE``: ``b"X" + 4-byte length + text``); the data stays the same, so
    the file is what ``torch.save`` writes for tensors on ``new``."""

    def tag(text: str) -> bytes:
        data = text.encode()
        return b"X" + len(data).to_bytes(4, "little") + data

    source = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    found = False
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                found = tag(old) in data
                data = data.replace(tag(old), tag(new))
            target.writestr(info.filename, data)
    if not found:
        raise ValueError(f"no device tag {old!r} in the archive")
    return out.getvalue()


def saved_state_dict(device: str = "cuda:0") -> tuple[bytes, bool]:
    """The bytes ``torch.save(state_dict, f)`` writes for a small ``nn.Linear(256, 256)``
    state_dict on ``device``, saved into memory (``io.BytesIO``), and whether the device tag had
    to be rewritten because ``device`` does not exist here."""
    buffer = io.BytesIO()
    state = _state_dict()
    real = device == "cpu" or (
        device.startswith("cuda")
        and torch.cuda.is_available()
        and torch.device(device).index is not None
        and torch.device(device).index < torch.cuda.device_count()
    )
    if real:
        torch.save({k: v.to(device) for k, v in state.items()}, buffer)
        return buffer.getvalue(), False
    torch.save(state, buffer)
    return retag_archive(buffer.getvalue(), "cpu", device), True


#: The ``torch.load`` calls of the notes (000:63), plus the dict form; ``weights_only=True``
#: always (a state_dict needs nothing else, and it never runs pickled code).
LOAD_CALLS: tuple[tuple[str, Callable[[io.BytesIO], Any]], ...] = (
    ("torch.load(f, weights_only=True)", lambda f: torch.load(f, weights_only=True)),
    (
        "torch.load(f, map_location='cpu', weights_only=True)",
        lambda f: torch.load(f, map_location="cpu", weights_only=True),
    ),
    (
        "torch.load(f, map_location={'cuda:0': 'cpu'}, weights_only=True)",
        lambda f: torch.load(f, map_location={"cuda:0": "cpu"}, weights_only=True),
    ),
    (
        "torch.load(f, map_location=lambda storage, loc: storage, weights_only=True)",
        lambda f: torch.load(f, map_location=lambda storage, loc: storage, weights_only=True),
    ),
    (
        "torch.load(f, map_location=lambda storage, loc: storage.cuda(1), weights_only=True)",
        lambda f: torch.load(
            f, map_location=lambda storage, loc: storage.cuda(1), weights_only=True
        ),
    ),
)


def map_location_demo(world_size: int = 4, saved_device: str = "cuda:0") -> MapLocationDemo:
    """Save a state_dict "on ``saved_device``" and load it as the notes do (000:63), and say
    where ``world_size`` DDP workers' copies land without ``map_location`` (000:76).

    Raises ``ValueError`` for a world size outside 1..16 or a device other than ``cuda:N``.
    """
    if not 1 <= world_size <= 16:
        raise ValueError(f"world_size must be 1..16, got {world_size}")
    if re.fullmatch(r"cuda:\d+", saved_device) is None:
        raise ValueError(f"saved_device must look like 'cuda:0', got {saved_device!r}")
    raw, rewritten = saved_state_dict(saved_device)
    tags: list[str] = []

    def record(storage: Any, loc: str) -> Any:
        tags.append(loc)
        return storage

    state = torch.load(io.BytesIO(raw), map_location=record, weights_only=True)
    nbytes = sum(t.nbytes for t in state.values())
    attempts = []
    for call, load in LOAD_CALLS:
        try:
            loaded = load(io.BytesIO(raw))
        except Exception as exc:  # the demo shows what torch raises, as it raises it
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            attempts.append(LoadAttempt(call, None, f"{type(exc).__name__}: {first_line}"))
        else:
            attempts.append(LoadAttempt(call, str(next(iter(loaded.values())).device), None))
    workers = tuple(WorkerLoad(rank, tags[0], f"cuda:{rank}", nbytes) for rank in range(world_size))
    return MapLocationDemo(saved_device, rewritten, nbytes, tuple(tags), tuple(attempts), workers)


MAP_LOCATION_SNIPPET = """import io

import torch

# What torch.save writes for a state_dict on cuda:0 (here saved on the CPU and its device
# tag rewritten, when this machine has no cuda:0; see lessons.memory.scenarios.saved_state_dict)
from lessons.memory.scenarios import saved_state_dict

raw, rewritten = saved_state_dict("cuda:0")
seen = []
torch.load(io.BytesIO(raw), weights_only=True,
           map_location=lambda storage, loc: seen.append(loc) or storage)
print("device tags in the file:", sorted(set(seen)))
for kw in ({}, {"map_location": "cpu"}, {"map_location": lambda storage, loc: storage}):
    try:
        sd = torch.load(io.BytesIO(raw), weights_only=True, **kw)
        print(list(kw) or "no map_location", "->", sd["weight"].device)
    except RuntimeError as err:
        print(list(kw) or "no map_location", "->", str(err).splitlines()[0])

# In DDP every worker runs this line; without map_location each copy goes to cuda:0:
# sd = torch.load(path, map_location=f"cuda:{local_rank}", weights_only=True)
"""


# ----------------------------------------------------------------- cuDNN algorithm error (002:1360)
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
