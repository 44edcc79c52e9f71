"""The memory page's "predict, then reveal" questions, answered by running the allocator model.

Each question runs the lesson's own model of PyTorch's caching allocator
(:class:`~lessons.memory.allocator_sim.CachingAllocatorSim`, or a guided scenario on a fresh
:class:`~lessons.memory.backends.SimulatedGpu`) and reads the answer from it:

- ``reserve``: what ``memory_reserved()`` reads after the Allocate form's request on an empty
  allocator (a 2 MiB small-pool segment up to 1 MiB, 20 MiB under 10 MiB, else the block
  rounded to 2 MiB); for a request between 1 MiB and 1.5 MB the notes' rule (000:5, "under
  1.5 MB: into the 2 MB block") is a choice;
- ``pool-threshold``: where the ``reuse`` scenario's ``b`` (1 MiB + 512 B) lands after the
  4-byte ``a``: a new 20 MiB large-pool segment, not ``a``'s 2 MiB segment as the notes' 1.5 MB
  rule says (000:5);
- ``remainder``: how many bytes the ``tiny`` scenario's 4-byte tensor leaves reserved but
  unallocated: 2,096,640 B, not the notes' 1.5 MB (000:5);
- ``del-reserved``: what ``memory_allocated()`` and ``memory_reserved()`` read after ``del``
  of the form's request: the block goes back to the cache, reserved stays until
  ``empty_cache()`` (the notes, 004:42, say PyTorch frees an unused variable's memory).

A distractor whose value equals the answer's (or an earlier distractor's) in a view is left out:
a 20 MiB request's block is its segment.

The parts of the page that give the answers away: "Inside the allocator" (:data:`INSIDE_PART`:
the segment map lists each segment's pool and size), the notes' claims checked live
(:data:`NOTES_PART`: the pool threshold and the remainder, measured) and the guided scenario's
steps (:data:`SCENARIO_PART`: allocated and reserved after each step).

Pure: no Streamlit. Texts are English and marked (``N_`` / ``T``); the page translates them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.questions import Choice, Question, check_questions
from core.text import T
from lessons.memory.allocator_rule import NOTES_THRESHOLD
from lessons.memory.allocator_sim import (
    LARGE_BUFFER,
    ROUND_LARGE,
    SMALL_BUFFER,
    SMALL_SIZE,
    CachingAllocatorSim,
    GiB,
    MiB,
    format_size,
)
from lessons.memory.backends import AllocationRequest, SimulatedGpu, TensorLedger, form_request
from lessons.memory.scenarios import SCENARIOS, StepOutcome, run_scenario, step_label

#: The page's parts (``st.container(key=...)``) that give the answers away.
INSIDE_PART = "memory-inside"
NOTES_PART = "memory-notes"
SCENARIO_PART = "memory-scenario"

#: Where the notes give the 1.5 MB rule (the remainder and the pool threshold), and where they
#: say PyTorch frees an unused variable's memory.
NOTES_POOL_RULE = "000:5"
NOTES_RECLAIM = "004:42"

#: How many choices a question offers at most (the answer and its distractors).
MAX_CHOICES = 4

#: The Allocate form's controls as the page keys them, with the page's defaults.
FORM_DEFAULTS: dict[str, Any] = {
    "memory.alloc_mode": "size", "memory.size": 4.0, "memory.unit": "B",
    "memory.shape": "1024, 1024", "memory.dtype": "float32",
}  # fmt: skip
#: The request the questions ask about when the form's is refused: the notes' 4-byte tensor.
FALLBACK_REQUEST = AllocationRequest(4, "4 B")


@dataclass(frozen=True)
class _Draft:
    """A choice before the question is assembled: ``value`` is what dedupes and orders it."""

    value: Any
    text: str
    why: str
    notes: str | None = None


def _bytes_draft(nbytes: int, why: str, notes: str | None = None) -> _Draft:
    """A choice that is a byte count: ordered by ``nbytes``, shown as :func:`bytes_text`."""
    return _Draft(nbytes, bytes_text(nbytes), why, notes)


def bytes_text(nbytes: int) -> str:
    """A byte count as a choice shows it: exact, and in binary units when over 1 KiB.

    >>> bytes_text(512), bytes_text(2 * MiB)
    ('512 B', '2,097,152 B (2.00 MiB)')
    """
    exact = f"{nbytes:,} B"
    return exact if nbytes <= 1024 else f"{exact} ({format_size(nbytes)})"


def _question(key: str, prompt: str, right: _Draft, pool: Sequence[_Draft], proof: str,
              hides: str, *, by_value: bool = True) -> Question:  # fmt: skip
    """The question from ``right`` and the first distractors of ``pool`` whose values are new,
    up to :data:`MAX_CHOICES` choices, ordered by value (``by_value``) or as given."""
    kept = [right]
    for draft in pool:
        if all(draft.value != k.value and str(draft.text) != str(k.text) for k in kept):
            kept.append(draft)
        if len(kept) == MAX_CHOICES:
            break
    if len(kept) < 3:
        raise ValueError(f"question {key}: fewer than two distinct wrong choices in this view "
                         f"({[d.text for d in kept]})")  # fmt: skip
    if by_value:
        kept.sort(key=lambda d: d.value)
    choices = tuple(Choice(d.text, d.why, d.notes) for d in kept)
    return Question(key, prompt, choices, kept.index(right), proof, hides)


def form_view(state: Mapping[str, Any], max_bytes: int | None = None) -> AllocationRequest | None:
    """The Allocate form's request as the page's controls hold it in ``state`` (the session
    state; a control not drawn yet has its default), or ``None`` when the form refuses it."""
    value = {key: state.get(key, default) for key, default in FORM_DEFAULTS.items()}
    try:
        return form_request(value["memory.alloc_mode"] != "size", value["memory.size"],
                            value["memory.unit"], value["memory.shape"], value["memory.dtype"],
                            max_bytes=max_bytes)  # fmt: skip
    except ValueError:
        return None


@dataclass(frozen=True)
class RequestRun:
    """One request on an empty allocator, then ``del`` and ``empty_cache()`` (bytes):
    ``block`` allocated, ``reserved`` after it, its segment's ``pool``; after ``del``,
    ``freed_allocated`` and ``freed_reserved``; after ``empty_cache()``, ``emptied_reserved``."""

    nbytes: int
    block: int
    reserved: int
    pool: str
    freed_allocated: int
    freed_reserved: int
    emptied_reserved: int


def run_request(nbytes: int) -> RequestRun:
    """Run ``nbytes`` through a fresh :class:`CachingAllocatorSim` with room for it."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
        raise ValueError(f"the request is a positive number of bytes, got {nbytes!r}")
    sim = CachingAllocatorSim(2 * max(nbytes, GiB))  # room for the segment, whatever its size
    handle = sim.malloc(nbytes)
    block, reserved = sim.memory_allocated(), sim.memory_reserved()
    (segment,) = sim.snapshot()
    sim.free(handle)
    freed_allocated, freed_reserved = sim.memory_allocated(), sim.memory_reserved()
    sim.empty_cache()
    return RequestRun(nbytes, block, reserved, segment["segment_type"], freed_allocated,
                      freed_reserved, sim.memory_reserved())  # fmt: skip


def _where(from_form: bool) -> str:
    """Where a question's request comes from, for its prompt."""
    if from_form:
        return T("the Allocate form's request")
    return T("the form's request is refused: the notes' 4-byte tensor instead")


def reserve_question(request: AllocationRequest, from_form: bool = True) -> Question:
    """``reserve``: ``memory_reserved()`` after ``request`` on an empty allocator."""
    run = run_request(request.nbytes)
    n, block, seg, pool = run.nbytes, run.block, run.reserved, T(run.pool)
    if block <= SMALL_SIZE:
        right_why = T("{n:,} B rounds up to a {block:,} B block, at most kSmallSize (1,048,576 "
                      "B): the small pool, which takes memory from the GPU in 2 MiB segments",
                      n=n, block=block)
    elif block < 10 * MiB:
        right_why = T("the {block:,} B block is over kSmallSize (1 MiB) and under 10 MiB: the "
                      "large pool reserves a 20 MiB segment and keeps the rest for later requests",
                      block=block)
    else:
        right_why = T("a block of 10 MiB or more gets a segment of its own: {block:,} B rounded "
                      "up to a multiple of 2 MiB", block=block)
    got = {"block": block, "seg": format_size(seg), "pool": pool}
    if SMALL_SIZE < n < NOTES_THRESHOLD:
        two_mib = _bytes_draft(SMALL_BUFFER, T(
            "the notes' rule: under 1.5 MB a tensor goes into the 2 MB block; the threshold is "
            "kSmallSize = 1 MiB, so the {block:,} B block went to the {pool} pool and a {seg} "
            "segment", **got), NOTES_POOL_RULE)
    else:
        two_mib = _bytes_draft(SMALL_BUFFER, T(
            "2 MiB segments are the small pool's, for blocks up to 1 MiB; the {block:,} B block "
            "got a {seg} segment of the {pool} pool", **got))
    rounded = ROUND_LARGE * -(-block // ROUND_LARGE)
    power2 = 1 << (block - 1).bit_length()
    pool_of = [
        two_mib,
        _bytes_draft(block, T(
            "that is the block, what `memory_allocated()` reads; the allocator reserves the "
            "whole {seg} segment it is cut from", **got)),
        _bytes_draft(LARGE_BUFFER, T(
            "20 MiB segments serve blocks over 1 MiB and under 10 MiB; the {block:,} B block got "
            "a {seg} segment", **got)),
        _bytes_draft(rounded, T(
            "only a block of 10 MiB or more gets its own segment rounded up to 2 MiB; the "
            "{block:,} B block got a {seg} segment of the {pool} pool", **got)),
        _bytes_draft(n, T(
            "the bytes asked; the allocator rounds a request up to a multiple of 512 B and "
            "reserves whole segments: {seg} here", **got)),
        _bytes_draft(power2, T(
            "that rounds up to a power of two, as `roundup_power2_divisions` would; by default "
            "the {block:,} B block got a {seg} segment", **got)),
        _bytes_draft(0, T(
            "an empty tensor's memory is not written, but the allocator reserves it when the "
            "tensor is made: {seg} here", **got)),
    ]
    return _question(
        "reserve",
        T("On an empty allocator you allocate {label} ({n:,} B, {where}). What does "
          "`memory_reserved()` read after it?", label=request.label, n=n, where=_where(from_form)),
        _bytes_draft(seg, right_why), pool_of,
        T("The allocator model on an empty GPU: {n:,} B -> a {block:,} B block in a {seg_bytes:,} "
          "B ({seg}) segment of the {pool} pool; `memory_reserved()` = {seg_bytes:,} B.",
          n=n, seg_bytes=seg, **got),
        INSIDE_PART,
    )  # fmt: skip


def _run(key: str) -> tuple[StepOutcome, ...]:
    """The allocations of guided scenario ``key`` on a fresh simulated 8 GB GPU."""
    ledger = TensorLedger()
    try:
        run = run_scenario(key, SimulatedGpu(8), ledger)
    finally:
        ledger.close()
    allocs = tuple(o for o in run.outcomes if o.step.kind == "alloc")
    failed = [o.step.name for o in allocs if not o.ok]
    if not allocs or failed:
        raise ValueError(f"the '{key}' scenario did not allocate on the simulator: {failed}")
    return allocs


def pool_threshold_question() -> Question:
    """``pool-threshold``: where the ``reuse`` scenario's first request over 1 MiB lands after
    its 4-byte tensor (read from the simulator's snapshot)."""
    allocs = _run("reuse")
    first = allocs[0]
    over = next(o for o in allocs if o.step.nbytes > SMALL_SIZE)
    before = allocs[allocs.index(over) - 1]
    a, b, n = first.step.name, over.step.name, over.step.nbytes
    left = first.segment_size - first.allocated
    block = over.allocated - before.allocated
    got = {"n": n, "pool": T(over.segment_type), "seg": format_size(over.segment_size)}
    places = {
        "same": _Draft("same", T("in `{a}`'s {seg} segment, which has {left:,} B free", a=a,
                                 seg=format_size(first.segment_size), left=left), T(
            "the notes' rule: under 1.5 MB it goes into the first block, and it would fit in the "
            "{left:,} B free there; but {n:,} B is over kSmallSize = 1 MiB, so it went to the "
            "{pool} pool, a new {seg} segment", left=left, **got), NOTES_POOL_RULE),
        "small": _Draft("small", T("in a new 2 MiB segment of the small pool"), T(
            "the small pool takes blocks up to 1 MiB (1,048,576 B); {n:,} B is {over:,} B over, "
            "so it went to the {pool} pool, a {seg} segment", over=n - SMALL_SIZE, **got)),
        "large": _Draft("large", T("in a new 20 MiB segment of the large pool"), T(
            "the run put it in the {pool} pool, a {seg} segment", **got)),
        "own": _Draft("own", T("in a new segment of its own, {block:,} B", block=block), T(
            "only blocks of 10 MiB or more get a segment of their own; under 10 MiB the large "
            "pool reserves {seg} and keeps the rest for later requests", **got)),
    }
    new = over.segment != first.segment
    landed = ("same" if not new else
              "small" if over.segment_type == "small" and over.segment_size == SMALL_BUFFER else
              "large" if over.segment_type == "large" and over.segment_size == LARGE_BUFFER else
              "own" if over.segment_size == block else None)  # fmt: skip
    if landed is None:
        raise ValueError(f"{b} landed in no place the question offers: {over.landed_in}")
    right = _Draft(landed, places[landed].text, T(
        "the run put it in segment {segment}: the {pool} pool, a {seg} segment; reserved went "
        "from {before} to {after}", segment=over.segment, before=format_size(before.reserved),
        after=format_size(over.reserved), **got))
    return _question(
        "pool-threshold",
        T("In the guided scenario '{scenario}', `{a}` (4 bytes) took a {seg} segment. Then `{b}` "
          "asks for {n:,} B ({over:,} B over 1 MiB). Where does its block land?",
          scenario=T(SCENARIOS["reuse"].name), a=a, seg=format_size(first.segment_size), b=b,
          n=n, over=n - SMALL_SIZE),
        right, [places[k] for k in ("same", "small", "large", "own") if k != landed],
        T("The scenario on the simulator: `{b}` landed in {landed} (the first request is in S1); "
          "reserved {before} -> {after}.", b=b, landed=over.landed_in,
          before=format_size(before.reserved), after=format_size(over.reserved)),
        NOTES_PART, by_value=False,
    )  # fmt: skip


def remainder_question() -> Question:
    """``remainder``: ``memory_reserved() − memory_allocated()`` after the ``tiny`` scenario's
    tensor (the notes' 4-byte example)."""
    (x,) = _run("tiny")
    n, block, reserved = x.step.nbytes, x.allocated, x.reserved
    rest = reserved - block
    got = {"n": n, "block": block, "reserved": reserved, "rest": rest}
    pool = [
        _bytes_draft(NOTES_THRESHOLD, T(
            "the notes' 1.5 MB: the {reserved:,} B segment minus the {block} B block is {rest:,} "
            "B, {mib:.4f} MiB, not 1.5 MiB", mib=rest / MiB, **got), NOTES_POOL_RULE),
        _bytes_draft(reserved - n, T(
            "that subtracts the {n} bytes asked; the block is rounded up to {block} B, which "
            "`memory_allocated()` reads", **got)),
        _bytes_draft(reserved, T(
            "that is the whole segment; the {block} B block is cut from it: {reserved:,} − "
            "{block} = {rest:,} B", **got)),
    ]
    return _question(
        "remainder",
        T("In the guided scenario '{scenario}', `{step}` ({n} bytes) runs on an empty allocator. "
          "How many bytes are then reserved but not allocated (`memory_reserved()` − "
          "`memory_allocated()`)?", scenario=T(SCENARIOS["tiny"].name), step=step_label(x.step),
          n=n),
        _bytes_draft(rest, T(
            "the {n}-byte request got a {block} B block in a new {reserved:,} B segment: "
            "{reserved:,} − {block} = {rest:,} B stay cached for later small requests", **got)),
        pool,
        T("The scenario on the simulator: allocated {block} B, reserved {reserved:,} B; "
          "{rest:,} B reserved but unallocated.", **got),
        SCENARIO_PART,
    )  # fmt: skip


def _pair(allocated: int, reserved: int) -> str:
    return T("allocated {allocated}, reserved {reserved}", allocated=bytes_text(allocated),
             reserved=bytes_text(reserved))  # fmt: skip


def del_question(request: AllocationRequest, from_form: bool = True) -> Question:
    """``del-reserved``: allocated and reserved after ``request`` on an empty allocator, then
    ``del`` of its tensor."""
    run = run_request(request.nbytes)
    a, r = run.freed_allocated, run.freed_reserved
    got = {"block": bytes_text(run.block), "seg": bytes_text(run.reserved),
           "emptied": bytes_text(run.emptied_reserved)}  # fmt: skip
    pool = [
        _Draft((0, 0), _pair(0, 0), T(
            "the notes say PyTorch frees an unused variable's memory; it frees it into its own "
            "cache: reserved stayed {seg}, and only `torch.cuda.empty_cache()` gave it back to "
            "the GPU ({emptied} then)", **got), NOTES_RECLAIM),
        _Draft((run.block, run.reserved), _pair(run.block, run.reserved), T(
            "`del` dropped the tensor's last reference, so its {block} block was freed at once: "
            "allocated fell to {allocated}", allocated=bytes_text(a), **got)),
        _Draft((0, run.reserved - run.block), _pair(0, run.reserved - run.block), T(
            "reserved counts whole segments: the freed {block} block stays cached inside the "
            "{seg} segment", **got)),
    ]
    return _question(
        "del-reserved",
        T("On an empty allocator you allocate {label} ({n:,} B, {where}), then `del` the "
          "tensor. What do `memory_allocated()` and `memory_reserved()` read?",
          label=request.label, n=request.nbytes, where=_where(from_form)),
        _Draft((a, r), _pair(a, r), T(
            "`del` hands the block back to PyTorch's cache, not to the GPU: reserved stays {seg} "
            "until `torch.cuda.empty_cache()`, which brings it to {emptied}", **got)),
        pool,
        T("The allocator model: after the request allocated {block}, reserved {seg}; after `del` "
          "allocated {allocated}, reserved {reserved}; after `empty_cache()` reserved {emptied}.",
          allocated=bytes_text(a), reserved=bytes_text(r), **got),
        SCENARIO_PART, by_value=False,
    )  # fmt: skip


def questions(request: AllocationRequest | None = None) -> tuple[Question, ...]:
    """The memory page's questions about its view.

    Args:
        request: the Allocate form's request (:func:`form_view`); ``None`` when the form
            refuses it: the questions then ask about the notes' 4-byte tensor.

    Returns:
        ``reserve``, ``pool-threshold``, ``remainder`` and ``del-reserved``.

    Raises:
        ValueError: a request that is not a positive number of bytes, or a view where a question
            has fewer than two distinct wrong choices.
    """
    from_form = request is not None
    asked = request if request is not None else FALLBACK_REQUEST
    return check_questions((
        reserve_question(asked, from_form),
        pool_threshold_question(),
        remainder_question(),
        del_question(asked, from_form),
    ))  # fmt: skip
