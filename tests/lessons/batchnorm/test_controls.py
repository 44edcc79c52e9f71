"""Tests for lessons/batchnorm/controls.py: every number box is a URL parameter of the page
with a default inside its range."""

from __future__ import annotations

import pytest

from lessons.batchnorm import controls as ctl

BOXES = [ctl.STEPS, ctl.STEPS_PER_TRAIN, ctl.BATCH_SIZE, ctl.MOMENTUM, ctl.CHANNELS, ctl.SPATIAL,
         *ctl.SHIFT, ctl.NAN_STEP, ctl.KERAS_VALUE, *ctl.FORMULA, *ctl.LOADER,
         *ctl.REPEATED_EVAL]


def test_keys_are_the_pages_and_unique():
    keys = [box.key for box in BOXES]
    assert len(set(keys)) == len(keys)
    assert all(key.startswith("batchnorm.") for key in keys)
    assert ctl.STEPS.key == "batchnorm.steps" and ctl.STEPS.value == ctl.DEFAULT_STEPS


@pytest.mark.parametrize("box", BOXES, ids=[box.key for box in BOXES])
def test_default_within_range_and_one_number_type(box):
    assert box.low <= box.value <= box.high
    kinds = {type(v) for v in (box.low, box.high, box.value, box.step) if v is not None}
    assert len(kinds) == 1, box  # st.number_input wants all int or all float
