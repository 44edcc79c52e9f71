"""Evaluation without torch.no_grad() (the notes, 004:49-53), measured: eval_memory."""

from __future__ import annotations

import re

import pytest
import torch

from core.notes import run_live
from lessons.memory import eval_memory as em

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _saved_bytes(batch: int, size: int) -> int:
    # relu1 (16 ch) + relu2 (32 ch) outputs, float32, and the flattened (batch, 32) features
    return batch * (16 + 32) * size * size * 4 + batch * 32 * 4


@pytest.mark.parametrize(("batch", "size", "batches"), [(8, 32, 3), (2, 16, 1)])
def test_eval_memory_no_grad_saves_nothing(batch, size, batches):
    demo = em.measure_eval_memory(batch, size, batches)
    grad, no_grad, inference = demo.modes
    assert grad.mode == "grad enabled" and grad.output_requires_grad
    assert grad.saved_per_batch == _saved_bytes(batch, size)
    assert grad.held == batches * _saved_bytes(batch, size)
    for mode in (no_grad, inference):
        assert (mode.saved_per_batch, mode.held, mode.output_requires_grad) == (0, 0, False)
    assert demo.input_bytes == batch * 3 * size * size * 4
    assert grad.cuda_peak is None


def test_eval_memory_snippet_prints_the_same_numbers():
    demo = em.measure_eval_memory(4, 16, 2)
    run = run_live(em.eval_memory_snippet(4, 16, 2))
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
        em.measure_eval_memory(**kwargs)


@pytest.mark.cuda
@needs_cuda
def test_cuda_eval_memory_peak():
    demo = em.measure_eval_memory(16, 64, 2, "cuda:0")
    grad, no_grad, _ = demo.modes
    assert grad.cuda_peak is not None and no_grad.cuda_peak is not None
    assert grad.cuda_peak >= grad.held > 0
    assert no_grad.cuda_peak < grad.cuda_peak


def test_eval_memory_rows_and_text():
    demo = em.measure_eval_memory(2, 16, 1)
    rows = em.eval_memory_rows(demo)
    assert [list(row) for row in rows] == [
        ["mode", "saved for backward per batch", "still held after 1 batch(es)",
         "output.requires_grad"]
    ] * 3  # fmt: skip
    assert [row["output.requires_grad"] for row in rows] == [True, False, False]
    assert rows[0]["mode"].template == "grad enabled"  # a T: the page translates it
    text = em.measured_text(demo)
    assert len(text) == 2 and text[1].startswith(" There is no GPU here")
    assert f"saves **{rows[0]['saved for backward per batch']}**" in text[0]
