"""Guided scenarios from the notes, as data, runnable on a real GPU or on the simulator.

A :class:`Scenario` is a tuple of :class:`Step` s; :func:`run_scenario` runs one on a
:class:`~lessons.memory.backends.MemoryBackend` and returns a :class:`ScenarioRun` whose outcomes
hold the numbers after each step and where each block landed
(:mod:`lessons.memory.cuda_snippet` turns the same steps into real ``torch.cuda`` code).

Every scenario starts by freeing this session's tensors and emptying the cache, so on the
simulator it always starts from an empty allocator. On a shared real GPU other sessions may hold
memory too; the steps then still show the same effect, with different absolute numbers.

Each scenario cites the notes' line it teaches from (``Scenario.ref``, ``FILE:LINE`` in
``shared/seeds/``). The notes' allocator rule (000:5) is wrong in two places, which the ``reuse``
scenario shows from a live run (:mod:`lessons.memory.allocator_rule` checks it claim by claim):
the small/large pool threshold is 1 MiB (``kSmallSize``), not 1.5 MB, and after a 4-byte tensor
2,096,640 B of the 2 MiB segment remain, not 1.5 MB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from core.text import N_, T
from lessons.memory.allocator_sim import MiB, format_size
from lessons.memory.backends import (
    MemoryBackend,
    MemoryState,
    TensorLedger,
    allocate,
    empty_cache,
    free_all,
    free_tensors,
    reset_peak,
)

# The no_grad demo's model, read here by the check that sessions do not reseed each other
# (tests/shared/test_seeding.py).

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
        numbers after it, where its block landed, and what to look at (long text wraps).
        Headers and texts to translate are ``T``; the step's code and the numbers are not."""
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
                    T("step"): T("{step} ({status})", step=step_label(o.step), status=status)
                    if status
                    else step_label(o.step),
                    T("allocated"): format_size(o.allocated),
                    T("reserved"): format_size(o.reserved),
                    T("segments"): str(o.segments),
                    T("lands in"): o.landed_in,
                    T("look at"): T(o.step.note) if o.step.note else "",
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
    def caught(self) -> tuple[str, ...]:
        """One line for each OutOfMemoryError the run caught and went on from, naming its step
        (the allocator's messages are :attr:`error_detail`)."""
        return tuple(
            T(
                "Caught OutOfMemoryError at '{name}' (step {i}); the run went on.",
                name=o.step.name,
                i=i,
            )
            for i, o in enumerate(self.outcomes, start=1)
            if o.error
        )

    @property
    def error_detail(self) -> str:
        """The caught OutOfMemoryErrors' messages, a paragraph each (``""`` when none)."""
        return "\n\n".join(o.error for o in self.outcomes if o.error)


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


