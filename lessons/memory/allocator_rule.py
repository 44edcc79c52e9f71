"""The notes' allocator passage (000:4-5), checked claim by claim against live runs.

:func:`check_pool_rule` runs the ``reuse`` scenario and reads where each request landed;
:func:`check_allocator_claims` decides every claim of the passage from a simulator run
(c10/cuda/CUDACachingAllocator.cpp's rules) or from the installed torch; :func:`notes_callouts`
are the page's "the notes say / PyTorch today does" callouts for the two claims that are wrong
(the 1.5 MB pool threshold, and what the allocator frees before an OOM).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from core.notes import NotesCallout, NotesRef, run_live
from core.text import N_, T
from lessons.memory.allocator_sim import SMALL_SIZE, MiB, format_size
from lessons.memory.backends import MemoryBackend, SimulatedGpu, TensorLedger
from lessons.memory.scenarios import run_scenario

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


#: Over the claims' table; ``{ref}`` is the notes' place, cited in the reader's language.
CLAIMS_CAPTION = N_(
    "Each claim of the {ref}-5 passage, decided by a live run of the simulator "
    "(it follows c10/cuda/CUDACachingAllocator.cpp) or of the installed torch."
)
#: Under the callouts: how to see the real allocator do the same (``{scenario}``: its name).
ON_A_GPU = N_(
    "On a GPU, choose it above and run the guided scenario '{scenario}' to see the "
    "real allocator place the same requests."
)


def claim_rows(claims: tuple[ClaimCheck, ...], *, english: bool) -> list[dict[str, Any]]:
    """One table row per claim: where in the notes, their words (and, for an ``english``
    reader, the claim in English), whether it holds and the measured evidence (headers and
    texts to translate are ``T``)."""
    return [
        {
            T("notes"): c.ref,
            T("the notes say"): c.quote_zh,
            **({"in English": c.claim_en} if english else {}),
            T("holds"): T("yes") if c.holds else T("no"),
            T("measured"): c.evidence,
        }
        for c in claims
    ]


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


# ---------------------------------------------------------------------------------- callouts
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
