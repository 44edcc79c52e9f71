"""The notes' allocator passage (000:4-5), checked live (lessons.memory.allocator_rule)."""

from __future__ import annotations

import doctest

from lessons.memory import allocator_rule as ar
from lessons.memory.allocator_sim import SMALL_SIZE, MiB


def test_pool_rule_matches_the_allocator_not_the_notes():
    check = ar.check_pool_rule()
    assert (check.tiny_block, check.first_segment) == (512, 2 * MiB)
    assert check.remaining == 2_096_640  # the notes: "the remaining 1.5 MB"
    assert check.threshold == SMALL_SIZE == 1_048_576
    landed = [(r.nbytes, r.pool, r.segment, r.new_segment) for r in check.requests]
    assert landed == [
        (MiB + 512, "large", "S2", True),  # under 1.5 MB, fits the 2,096,640 B, still new
        (MiB, "small", "S1", False),
        (100_000, "small", "S1", False),
    ]
    assert not check.notes_rule_holds
    assert [r.nbytes for r in check.contradicting] == [MiB + 512]


def test_callouts_verdicts_and_today_text():
    callouts = {c.key: c for c in ar.notes_callouts()}
    pool = callouts["memory_pool_threshold"]
    assert str(pool.ref) == "000:5" and pool.verdict == "wrong"
    assert pool.run.transcript.splitlines() == [
        "left in the 2 MiB segment: 2096640",
        "1049088 B -> large pool, segment of 20971520 B",
        "1048576 B -> small pool, segment of 2097152 B",
    ]
    assert (
        "2,096,640 B of the 2 MiB segment are free (2 MiB minus the 512 B block), not 1.5 MB"
        in pool.today_text
    )
    assert "1,049,088 B (1 MiB + 512 B, under the notes' 1.5 MB) went to the large pool" in (
        pool.today_text
    )
    assert "kSmallSize = 1,048,576 B (1 MiB)" in pool.today_text
    retry = callouts["memory_oom_retry"]
    assert retry.verdict == "wrong"
    assert "returns only its entirely free cached segments (18.00 MiB here)" in retry.today_text
    assert "num_alloc_retries = 1" in retry.today_text
    assert "of the 16.00 MiB free inside a segment that still holds a tensor, 0 bytes" in (
        retry.today_text
    )


def test_callout_sentence_follows_the_run(monkeypatch):
    """If the allocator ever put 1 MiB + 512 B into the first segment, the verdict changes."""
    fake = (
        "left in the 2 MiB segment: 1572864\n"
        "1049088 B -> small pool, segment of 2097152 B\n"
        "1048576 B -> small pool, segment of 2097152 B"
    )
    real_run = ar.run_live

    def run(code):
        done = real_run(code)
        return type(done)(done.code, fake, None, None, done.torch_version)

    monkeypatch.setattr(ar, "run_live", run)
    callout = ar._pool_rule_callout()
    assert callout.verdict == "incomplete" and "as the notes say" in callout.today_text


def test_allocator_claims_table():
    claims = ar.check_allocator_claims()
    assert [c.ref for c in claims] == ["000:4"] + ["000:5"] * 6
    assert [c.holds for c in claims] == [True, True, True, False, True, False, False]
    assert "2,096,640 B remain" in claims[3].evidence
    assert "renamed to memory_reserved" in claims[4].evidence


def test_docstring_examples():
    assert doctest.testmod(ar).failed == 0


def test_claim_rows_show_english_only_to_an_english_reader():
    claims = ar.check_allocator_claims()
    english, chinese = ar.claim_rows(claims, english=True), ar.claim_rows(claims, english=False)
    assert list(english[0]) == ["notes", "the notes say", "in English", "holds", "measured"]
    assert "in English" not in chinese[0]
    assert [row["holds"] for row in chinese] == ["yes", "yes", "yes", "no", "yes", "no", "no"]
