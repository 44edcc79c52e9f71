"""What the page shows for a query and a chosen entry."""

from __future__ import annotations

import pytest

from lessons.errors.view import catalogue_by_kind, doctor_view


def test_a_query_is_matched_and_the_others_follow():
    view = doctor_view("IndexError: Target 7 is out of bounds.", None)
    assert view.mode == "search" and view.top.key == "device-side-assert"
    assert view.search.matches[0].key == "device-side-assert"
    assert [m.key for m in view.others] == [m.key for m in view.search.matches[1:]]


def test_an_entry_chosen_by_name_wins_over_the_default_query():
    view = doctor_view("RuntimeError: Trying to backward through the graph", "batch-of-one")
    assert view.mode == "entry" and view.top.key == "batch-of-one" and view.search is None


def test_an_empty_query_shows_the_catalogue_and_nothing_matched_shows_nothing():
    assert doctor_view("   \n", None).mode == "catalogue"
    view = doctor_view("hello there, general", None)
    assert view.mode == "search" and view.top is None and view.others == ()


def test_an_unknown_entry_is_named():
    with pytest.raises(ValueError, match="'nope'"):
        doctor_view("", "nope")


def test_the_catalogue_by_kind_holds_every_entry_once():
    keys = [entry.key for _kind, group in catalogue_by_kind() for entry in group]
    assert len(keys) == len(set(keys)) >= 49
