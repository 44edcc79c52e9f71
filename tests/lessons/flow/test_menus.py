"""Tests for lessons.flow.menus: the choices the page's controls offer."""

from __future__ import annotations

from lessons.flow import menus
from lessons.flow.fill import SOURCES
from lessons.flow.gradual_mean import window_sizes
from lessons.flow.masks import MASK_KINDS
from lessons.flow.sources import SYNTHETIC_FIELDS


def test_the_forward_backward_check_is_offered_for_image_pairs_only():
    assert menus.mask_choices("stereo")[-1] == "fb"
    assert "fb" not in menus.mask_choices("synthetic")
    assert "fb" not in menus.mask_choices("upload_flow")
    assert set(menus.IMAGE_SOURCES) <= set(menus.SOURCE_LABELS)


def test_every_choice_is_one_the_lesson_can_run():
    assert set(SOURCES) <= set(menus.SOURCE_LABELS)
    assert set(menus.MASK_LABELS) == set(MASK_KINDS)
    assert set(menus.FIELD_LABELS) == set(SYNTHETIC_FIELDS)
    assert set(menus.FRACTION_MASKS) | set(menus.WIDTH_MASKS) <= set(MASK_KINDS)
    for k in menus.WINDOW_CHOICES:
        assert window_sizes(k)[-1] == k
