"""Tests for lessons.flow.notes_checks: the notes' 3 ms claim and window check, run live."""

from __future__ import annotations

import re

import pytest
import torch

from lessons.flow.notes_checks import (
    NOTES_CLAIM_MS,
    NOTES_CLAIM_REF,
    NOTES_CLAIM_ZH,
    device_label,
    notes_callouts,
    notes_speed_claim,
)


def test_callout_max_window_not_aligned():
    callout = next(c for c in notes_callouts() if c.key == "flow_max_window_not_aligned")
    assert callout.verdict == "differs from the app"
    assert str(callout.ref) == "000:80"
    assert "Warning: UserWarning: max_window_size 32 is not aligned with max filter size 17" \
        in callout.run.output
    assert "ran, NaN left: 0" in callout.run.output
    assert "app: ValueError: max_window must be 2**k + 1" in callout.run.output
    assert callout.today_text.startswith("Today the notes' function still only warns")
    assert "windows up to 17x17" in callout.today_text and "refuses 32" in callout.today_text


def test_callout_three_ms():
    callout = next(c for c in notes_callouts() if c.key == "flow_three_ms")
    assert callout.verdict == "incomplete" and str(callout.ref) == NOTES_CLAIM_REF
    assert callout.quote_zh == NOTES_CLAIM_ZH
    found = re.search(r"device=(\w+) flow=1x2x120x160 median=([\d.]+) ms", callout.run.output)
    assert found, callout.run.transcript
    ms = float(found[2])
    assert f"takes {ms:.1f} ms on a 120x160" in callout.today_text
    assert "neither the frame size nor the device" in callout.today_text
    if not torch.cuda.is_available():
        # a CPU is far from 3 ms on this: the sentence must not claim the notes' figure
        assert ms > NOTES_CLAIM_MS and "slower than the notes' 3 ms" in callout.today_text
        assert "There is no GPU on this machine" in callout.today_text


def test_notes_speed_claim_sentence():
    text = notes_speed_claim(123.4, "cpu", (240, 320, 2))
    assert "took 123.4 ms for this 240x320 flow on CPU (" in text
    assert "41x the notes' 3 ms" in text
    assert "within the notes' 3 ms" in notes_speed_claim(2.5, "cpu", (240, 320, 2))
    if not torch.cuda.is_available():
        assert "no GPU on this machine" in text
    with pytest.raises(ValueError, match="measured_ms"):
        notes_speed_claim(float("nan"), "cpu", (4, 4, 2))
    with pytest.raises(ValueError, match="device"):
        device_label("tpu")
    assert device_label("cpu").startswith("CPU (")
