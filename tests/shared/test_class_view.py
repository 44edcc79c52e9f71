"""core/class_view.py: a teacher's view as class-store state and back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.class_view import (
    CLASS_PARAMS,
    View,
    translated,
    view_from_state,
    view_of,
    view_state,
)

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=12)  # fmt: skip
values = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
params = st.dictionaries(names, st.lists(values, min_size=1, max_size=3), max_size=6)


@given(params)
def test_a_view_survives_the_store_whatever_its_parameters(link_params):
    view = view_of("warp", link_params)
    state = view_state(view)
    assert view_from_state(state) == view


def test_membership_and_own_parameters_are_never_part_of_a_view():
    link = {"warp.angle": ["30"], "lang": ["zh"], **{name: ["x"] for name in CLASS_PARAMS}}
    assert view_of("warp", link, own=("lang",)) == View("warp", (("warp.angle", ("30",)),))


def test_parameter_order_does_not_make_two_views_differ():
    one = view_of("memory", {"a": ["1"], "b": ["2", "3"]})
    other = view_of("memory", {"b": ["2", "3"], "a": ["1"]})
    assert one == other and one.query == "a=1&b=2&b=3"
    assert view_of("memory", {"b": ["3", "2"], "a": ["1"]}) != one  # a list's order counts


def test_an_empty_state_is_no_view_and_a_foreign_one_is_refused():
    assert view_from_state({}) is None
    for state in ({"page": ""}, {"query": "a=1"}, {"page": "warp", "query": 3}):
        with pytest.raises(ValueError, match="page and a query"):
            view_from_state(state)
    with pytest.raises(ValueError, match="page slug"):
        view_of("", {})


def test_menu_labels_are_translated_and_numbers_are_not():
    view = view_of("memory", {"memory.scenario": ["Fragmentation OOM and retry"],
                              "memory.size": ["512"]})  # fmt: skip
    table = {"Fragmentation OOM and retry": "碎片、OOM 与重试"}
    assert translated(view, table).as_dict() == {"memory.scenario": ["碎片、OOM 与重试"],
                                                 "memory.size": ["512"]}  # fmt: skip
