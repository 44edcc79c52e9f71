"""The notes' memory lessons (000:4-5, 000:63, 000:76, 004:49-53, 002:1360-1367), checked live."""

from __future__ import annotations

import io
import re

import pytest
import torch

from core.notes import run_live
from lessons.memory import scenarios as ms
from lessons.memory.allocator_sim import SMALL_SIZE, MiB

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


# ------------------------------------------------------------------ the pool rule (000:5)
def test_pool_rule_matches_the_allocator_not_the_notes():
    check = ms.check_pool_rule()
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


def test_callouts_verdicts_and_today_text():
    callouts = {c.key: c for c in ms.notes_callouts()}
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
    real_run = ms.run_live

    def run(code):
        done = real_run(code)
        return type(done)(done.code, fake, None, None, done.torch_version)

    monkeypatch.setattr(ms, "run_live", run)
    callout = ms._pool_rule_callout()
    assert callout.verdict == "incomplete" and "as the notes say" in callout.today_text


def test_allocator_claims_table():
    claims = ms.check_allocator_claims()
    assert [c.ref for c in claims] == ["000:4"] + ["000:5"] * 6
    assert [c.holds for c in claims] == [True, True, True, False, True, False, False]
    assert "2,096,640 B remain" in claims[3].evidence
    assert "renamed to memory_reserved" in claims[4].evidence


# ------------------------------------------------------------------ no_grad (004:49-53)
def _saved_bytes(batch: int, size: int) -> int:
    # relu1 (16 ch) + relu2 (32 ch) outputs, float32, and the flattened (batch, 32) features
    return batch * (16 + 32) * size * size * 4 + batch * 32 * 4


@pytest.mark.parametrize(("batch", "size", "batches"), [(8, 32, 3), (2, 16, 1)])
def test_eval_memory_no_grad_saves_nothing(batch, size, batches):
    demo = ms.measure_eval_memory(batch, size, batches)
    grad, no_grad, inference = demo.modes
    assert grad.mode == "grad enabled" and grad.output_requires_grad
    assert grad.saved_per_batch == _saved_bytes(batch, size)
    assert grad.held == batches * _saved_bytes(batch, size)
    for mode in (no_grad, inference):
        assert (mode.saved_per_batch, mode.held, mode.output_requires_grad) == (0, 0, False)
    assert demo.input_bytes == batch * 3 * size * size * 4
    assert grad.cuda_peak is None


def test_eval_memory_snippet_prints_the_same_numbers():
    demo = ms.measure_eval_memory(4, 16, 2)
    run = run_live(ms.eval_memory_snippet(4, 16, 2))
    assert not run.raised, run.error
    expected = [
        f"{m.mode}: saved {m.saved_per_batch:,} B per batch, still held {m.held:,} B"
        for m in demo.modes
    ]
    assert run.output.splitlines() == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch": 0}, "batch must be 1..256, got 0"),
        ({"size": 4}, "size must be 8..256, got 4"),
        ({"batches": 17}, "batches must be 1..16, got 17"),
        ({"device": "tpu"}, "device must be 'cpu' or an available CUDA device, got 'tpu'"),
    ],
)
def test_eval_memory_exception(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ms.measure_eval_memory(**kwargs)


@pytest.mark.cuda
@needs_cuda
def test_cuda_eval_memory_peak():
    demo = ms.measure_eval_memory(16, 64, 2, "cuda:0")
    grad, no_grad, _ = demo.modes
    assert grad.cuda_peak is not None and no_grad.cuda_peak is not None
    assert grad.cuda_peak >= grad.held > 0
    assert no_grad.cuda_peak < grad.cuda_peak


# ------------------------------------------------------------------ torch.load (000:63, 000:76)
def test_saved_state_dict_carries_the_device_tag():
    raw, rewritten = ms.saved_state_dict("cuda:0")
    assert rewritten == (not torch.cuda.is_available())
    seen: list[str] = []
    state = torch.load(
        io.BytesIO(raw), weights_only=True, map_location=lambda s, loc: seen.append(loc) or s
    )
    assert seen == ["cuda:0", "cuda:0"]
    assert state["weight"].shape == (256, 256)
    assert state["weight"][1, 0].item() == pytest.approx(256 / 1e4)
    cpu_raw, cpu_rewritten = ms.saved_state_dict("cpu")
    assert not cpu_rewritten
    with pytest.raises(ValueError, match="no device tag 'cuda:7'"):
        ms.retag_archive(cpu_raw, "cuda:7", "cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only outcomes")
def test_map_location_demo_on_cpu():
    demo = ms.map_location_demo(world_size=3)
    assert demo.rewritten and demo.location_tags == ("cuda:0", "cuda:0")
    assert demo.nbytes == (256 * 256 + 256) * 4
    outcomes = [(a.device, (a.error or "").split(":")[0]) for a in demo.attempts]
    assert outcomes == [
        (None, "RuntimeError"),
        ("cpu", ""),
        ("cpu", ""),
        ("cpu", ""),
        (None, "RuntimeError"),
    ]
    assert "Attempting to deserialize object on a CUDA device" in demo.attempts[0].error
    assert [(w.default_device, w.mapped_device) for w in demo.workers] == [
        ("cuda:0", "cuda:0"),
        ("cuda:0", "cuda:1"),
        ("cuda:0", "cuda:2"),
    ]
    assert demo.gpu0_bytes_without_map_location == 3 * demo.nbytes


@pytest.mark.cuda
@needs_cuda
def test_cuda_map_location_demo():
    demo = ms.map_location_demo(world_size=2)
    assert not demo.rewritten
    assert demo.attempts[0].device == "cuda:0" and demo.attempts[1].device == "cpu"


def test_map_location_snippet_runs():
    run = run_live(ms.MAP_LOCATION_SNIPPET)
    assert not run.raised, run.error
    lines = run.output.splitlines()
    assert lines[0] == "device tags in the file: ['cuda:0']"
    assert lines[2:] == ["['map_location'] -> cpu", "['map_location'] -> cpu"]
    if not torch.cuda.is_available():
        assert lines[1].startswith("no map_location -> Attempting to deserialize object on a CUDA")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"world_size": 0}, "world_size must be 1..16, got 0"),
        ({"saved_device": "gpu0"}, "saved_device must look like 'cuda:0', got 'gpu0'"),
    ],
)
def test_map_location_exception(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ms.map_location_demo(**kwargs)


# ------------------------------------------------------------------ cuDNN error (002:1360-1367)
def test_conv_oom_demo_smaller_batch_fits():
    rows = ms.conv_oom_demo()
    assert [(r.batch, r.failed_at) for r in rows] == [(56, "workspace"), (48, ""), (32, "")]
    assert rows[0].error.startswith("CUDA out of memory. Tried to allocate 1024.00 MiB.")
    assert rows[1].ok and not rows[0].ok
    with pytest.raises(ValueError, match=re.escape("batches must be positive, got ()")):
        ms.conv_oom_demo(())


# ------------------------------------------------------------------ the page's scenario table
def test_scenario_rows_are_short_and_name_the_retry():
    """Issue 12: the step table was ten columns wide with whole explanations in them (cut off
    at the right); each row now has seven short cells, the long text lives in 'look at'."""
    from lessons.memory.backends import SimulatedGpu, TensorLedger

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
    assert len(run.errors) == 1 and run.errors[0].startswith("Caught OutOfMemoryError at 'big'")
    assert run.summary.startswith("Ran 'Fragmentation OOM and retry' (23 steps). big = 24.00 MiB")


def test_every_scenario_has_a_short_name():
    assert all(0 < len(s.name) <= 32 for s in ms.SCENARIOS.values())
    assert ms.step_label(ms.Step("alloc", name="x", nbytes=4)) == "x = 4 bytes"
    assert ms.step_label(ms.Step("cap", nbytes=50 * MiB)) == "cap reserved at +50.00 MiB"
