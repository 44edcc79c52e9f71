"""The guided scenarios (lessons.memory.scenarios): what they teach, and the page's step table."""

from __future__ import annotations

import re

from lessons.memory import scenarios as ms
from lessons.memory.allocator_sim import MiB
from lessons.memory.backends import SimulatedGpu, TensorLedger


def test_reuse_scenario_teaches_1_mib_not_1_5_mb():
    scenario = ms.SCENARIOS["reuse"]
    assert scenario.ref == "000:5" and not scenario.verbatim
    assert "kSmallSize = 1,048,576 B" in scenario.lesson and "2,096,640 B" in scenario.lesson
    # 1.5 MB may only appear as the notes' claim, never as the threshold
    assert "over 1.5 MB" not in scenario.lesson and "> 1.5 MB" not in scenario.lesson
    for step in scenario.steps:
        assert "1.5 MB" not in step.note or "notes" in step.note, step.note
    sizes = [s.nbytes for s in scenario.steps if s.kind == "alloc"]
    assert sizes == [4, MiB + 512, MiB, 100_000]


def test_every_scenario_cites_the_notes():
    for scenario in ms.SCENARIOS.values():
        assert re.fullmatch(r"\d{3}:\d+(-\d+)?", scenario.ref), scenario.key


def test_scenario_rows_are_short_and_name_the_retry():
    """The step table fits a laptop screen: seven short cells a row (a table of whole
    explanations is cut off at the right); the long text lives in 'look at'."""
    run = ms.run_scenario("fragmentation", SimulatedGpu(24), TensorLedger())
    rows = run.rows()
    assert len(rows) == len(run.outcomes)
    assert list(rows[0]) == [
        "#",
        "step",
        "allocated",
        "reserved",
        "segments",
        "lands in",
        "look at",
    ]
    steps = [r["step"] for r in rows]
    assert "big = 12.00 MiB (freed the cache, retried: OOM)" in steps
    assert steps[-2] == "big = 24.00 MiB (freed the cache, retried)"
    assert all(len(r[k]) <= 48 for r in rows for k in r if k != "look at")
    assert run.caught == ("Caught OutOfMemoryError at 'big' (step 19); the run went on.",)
    assert run.error_detail.startswith("CUDA out of memory.") and "\n\n" not in run.error_detail
    assert run.summary.startswith("Ran 'Fragmentation OOM and retry' (23 steps). big = 24.00 MiB")


def test_every_scenario_has_a_short_name():
    assert all(0 < len(s.name) <= 32 for s in ms.SCENARIOS.values())
    assert ms.step_label(ms.Step("alloc", name="x", nbytes=4)) == "x = 4 bytes"
    assert ms.step_label(ms.Step("cap", nbytes=50 * MiB)) == "cap reserved at +50.00 MiB"
