"""The memory page's "predict, then reveal" questions: each right choice is what the caching
allocator's rule gives (written out here from c10/cuda/CUDACachingAllocator.cpp, not with the
lesson's helpers), every other choice is contradicted by it, the notes' claims are where the
choices cite them, and the panel on the page works in both languages. On a GPU, the answers
are also checked against the real allocator."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.notes import NotesRef, quote_is_at
from core.questions import Question
from lessons.memory.backends import AllocationRequest
from lessons.memory.questions import (
    INSIDE_PART,
    NOTES_PART,
    SCENARIO_PART,
    del_question,
    form_view,
    questions,
    reserve_question,
)
from testing.apptest import check_solo_predict_flow, hidden_parts, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.notes_marks import needs_notes

PAGE_PARTS = {INSIDE_PART, NOTES_PART, SCENARIO_PART}
KiB, MiB, GiB = 1024, 1024**2, 1024**3


# --- The allocator's rule, written out -------------------------------------------------------


def block_of(nbytes: int) -> int:
    """kMinBlockSize: every request is rounded up to a multiple of 512 B (at least 512)."""
    return max(512, (nbytes + 511) // 512 * 512)


def segment_of(block: int) -> int:
    """The segment an empty allocator gets for ``block``: 2 MiB for the small pool (blocks up to
    kSmallSize = 1 MiB), 20 MiB (kLargeBuffer) under kMinLargeAlloc = 10 MiB, else the block
    rounded up to kRoundLarge = 2 MiB."""
    if block <= MiB:
        return 2 * MiB
    if block < 10 * MiB:
        return 20 * MiB
    return (block + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)


# --- Reading the choices back -----------------------------------------------------------------

BYTES = re.compile(r"([\d,]+) B\b")


def byte_counts(text: str) -> tuple[int, ...]:
    """The exact byte counts a choice shows (``2,097,152 B (2.00 MiB)`` -> ``(2097152,)``)."""
    return tuple(int(n.replace(",", "")) for n in BYTES.findall(str(text)))


def check_right_and_wrong(question: Question, truth: tuple[int, ...]) -> None:
    assert byte_counts(question.correct.text) == truth, (question.key, question.correct.text)
    for index, choice in enumerate(question.choices):
        if index != question.answer:
            assert byte_counts(choice.text) != truth, (question.key, choice.text)
    assert len(question.choices) >= 3


def by_key(found) -> dict[str, Question]:
    return {q.key: q for q in found}


#: Sizes around every boundary of the rule, and anything up to 64 MiB.
SIZES = st.one_of(
    st.integers(1, 64 * MiB),
    st.sampled_from([1, 4, 511, 512, 513, MiB - 1, MiB, MiB + 1, MiB + 512, 3 * MiB // 2 - 1,
                     3 * MiB // 2, 2 * MiB, 10 * MiB - 1, 10 * MiB, 10 * MiB + 1, 20 * MiB,
                     GiB + 1]),
)  # fmt: skip


class TestQuestionsMatchTheRule:
    @settings(max_examples=40, deadline=None)
    @given(nbytes=SIZES)
    def test_reserve_is_the_segment(self, nbytes):
        question = reserve_question(AllocationRequest(nbytes, f"{nbytes} B"))
        check_right_and_wrong(question, (segment_of(block_of(nbytes)),))
        cited = [c for c in question.choices if c.notes]
        # the notes' rule (under 1.5 MB: the 2 MB block) is a wrong choice exactly where it errs
        assert bool(cited) == (MiB < nbytes < 3 * MiB // 2)
        for choice in cited:
            assert byte_counts(choice.text) == (2 * MiB,) and choice.notes == "000:5"
        assert question.hides == INSIDE_PART

    @settings(max_examples=40, deadline=None)
    @given(nbytes=SIZES)
    def test_del_keeps_the_segment_reserved(self, nbytes):
        question = del_question(AllocationRequest(nbytes, f"{nbytes} B"))
        check_right_and_wrong(question, (0, segment_of(block_of(nbytes))))
        (cited,) = [c for c in question.choices if c.notes]
        assert byte_counts(cited.text) == (0, 0) and cited.notes == "004:42"

    def test_pool_threshold_is_kSmallSize_not_the_notes_1_5_MB(self):
        question = by_key(questions())["pool-threshold"]
        asked = int(re.search(r"asks for ([\d,]+) B", question.prompt)[1].replace(",", ""))
        assert MiB < asked < 3 * MiB // 2  # over kSmallSize, under the notes' 1.5 MB
        assert segment_of(block_of(asked)) == 20 * MiB
        assert question.correct.text == "in a new 20 MiB segment of the large pool"
        (cited,) = [c for c in question.choices if c.notes]
        assert cited.notes == "000:5" and cited.text.startswith("in `a`'s")
        assert f"{2 * MiB - block_of(4):,} B free" in cited.text  # what the 4-byte tensor left
        assert question.hides == NOTES_PART

    def test_remainder_after_four_bytes(self):
        question = by_key(questions())["remainder"]
        check_right_and_wrong(question, (segment_of(block_of(4)) - block_of(4),))
        assert question.correct.text.startswith("2,096,640 B")
        (cited,) = [c for c in question.choices if c.notes]
        assert byte_counts(cited.text) == (3 * MiB // 2,) and cited.notes == "000:5"
        assert question.hides == SCENARIO_PART

    @settings(max_examples=10, deadline=None)
    @given(nbytes=SIZES)
    def test_four_questions_with_distinct_keys_and_page_parts(self, nbytes):
        found = questions(AllocationRequest(nbytes, f"{nbytes} B"))
        assert [q.key for q in found] == ["reserve", "pool-threshold", "remainder",
                                          "del-reserved"]  # fmt: skip
        assert {q.hides for q in found} <= PAGE_PARTS
        for question in found:
            texts = [str(c.text) for c in question.choices]
            assert len(set(texts)) == len(texts) >= 3
            assert all(c.why.strip() for c in question.choices)

    def test_a_refused_form_asks_about_the_notes_four_bytes(self):
        found = by_key(questions(None))
        assert "refused" in found["reserve"].prompt
        check_right_and_wrong(found["reserve"], (2 * MiB,))

    @pytest.mark.parametrize("bad", [0, -5, 1.5, True])
    def test_a_bad_request_is_a_value_error_naming_it(self, bad):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            questions(AllocationRequest(bad, "bad"))


class TestFormView:
    def test_defaults_are_the_notes_four_bytes(self):
        assert form_view({}) == AllocationRequest(4, "4 B")

    def test_size_and_shape_as_the_page_holds_them(self):
        assert form_view({"memory.size": 1.5, "memory.unit": "MB"}).nbytes == 3 * MiB // 2
        by_shape = form_view({"memory.alloc_mode": "shape + dtype", "memory.shape": "1024, 1024",
                              "memory.dtype": "float16"})  # fmt: skip
        assert by_shape.nbytes == 2 * MiB and by_shape.shape == (1024, 1024)

    def test_a_refused_form_is_none(self):
        assert form_view({"memory.size": None}) is None
        assert form_view({"memory.size": -1.0}) is None
        assert form_view({"memory.size": 9.0, "memory.unit": "GB"}, max_bytes=8 * GiB) is None


# --- The notes' claims the choices repeat -----------------------------------------------------

#: A distinctive fragment of each claim a choice cites.
CLAIMS = {
    "000:5": ("剩余的 1.5 MB 以 reserved memory",
              "如果我们申请的 Tensor 小于 1.5MB，那就直接放在刚刚申请的内存块中"),
    "004:42": ("对于不用的数据变量，Pytorch 可以自动进行回收从而释放相应的显存",),
}  # fmt: skip


@needs_notes
def test_notes_refs_hold_the_claims():
    found = questions(AllocationRequest(MiB + 512, "1 MB + 512 B"))
    cited = {q.key: q.notes_refs for q in found}
    assert all(cited.values()), cited  # with this request every question offers the notes' claim
    for refs in cited.values():
        for ref in refs:
            assert all(quote_is_at(quote, NotesRef.parse(ref)) for quote in CLAIMS[ref]), ref


# --- The real allocator -----------------------------------------------------------------------

REAL_SIZES = (4, 512, MiB, MiB + 512, 4 * MiB, 3 * MiB + 1, 20 * MiB, 256 * MiB)
REAL_SCRIPT = """
import torch
for n in {sizes}:
    torch.cuda.empty_cache()
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    made = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    del x
    print(n, *made, torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
"""


@pytest.mark.cuda
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_answers_are_what_the_real_allocator_does():
    """In a fresh process (an empty cache), each request's reserve and what ``del`` leaves are
    the right choices of ``reserve`` and ``del-reserved``."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", REAL_SCRIPT.format(sizes=REAL_SIZES)],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for line in done.stdout.split("\n")[:-1]:
        n, _allocated, reserved, freed_allocated, freed_reserved = map(int, line.split())
        request = AllocationRequest(n, f"{n} B")
        assert byte_counts(reserve_question(request).correct.text) == (reserved,), n
        assert byte_counts(del_question(request).correct.text) == (freed_allocated,
                                                                   freed_reserved), n  # fmt: skip


# --- The panel on the page --------------------------------------------------------------------


@pytest.mark.parametrize(("params", "request_"), [
    ({}, AllocationRequest(4, "4 B")),
    ({"memory.size": "1.25", "memory.unit": "MB"}, AllocationRequest(5 * MiB // 4, "1.25 MB")),
], ids=["default", "between-1-MiB-and-1.5-MB"])  # fmt: skip
def test_solo_flow_on_the_memory_page(params, request_):
    at = open_expanders(open_cold("memory", params), "predict.open")
    check_solo_predict_flow(at, questions(request_))


def test_questions_in_chinese():
    from tests.app.i18n_checks import untranslated, visible_texts

    at = open_expanders(open_cold("memory", {"lang": "zh"}), "predict.open")
    for index in range(len(questions(AllocationRequest(4, "4 B")))):
        assert hidden_parts(pick_question(at, index)), index
        reveal(at)  # no prediction: the answer, then why
        assert not hidden_parts(at), index
        assert untranslated(visible_texts(at)) == [], index
    body = " ".join(m.value for m in at.markdown)
    assert "`memory_allocated()`" in body  # code stays code in the translation
