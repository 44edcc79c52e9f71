"""Tests for lessons/indexing/notes_demos.py: the notes' pitfalls tab as data, its menus first
showing each demo's own defaults, and the words around each demo's run."""

from __future__ import annotations

import inspect

import pytest

from lessons.indexing import notes_demos as nd
from lessons.indexing import pitfalls as ip


def _first_choices(tab: nd.NotesTab) -> dict:
    chosen: dict = {}
    for choice in tab.choices:
        chosen[choice.name] = choice.options_for(chosen)[0]
    return chosen


@pytest.mark.parametrize("tab", nd.TABS, ids=lambda tab: tab.demo)
def test_first_options_are_the_demos_defaults(tab):
    """The tab first shows each demo at its default arguments (the notes' case, where any)."""
    defaults = tuple(
        p.default for p in inspect.signature(getattr(ip, tab.demo)).parameters.values()
    )
    assert tab.arguments(_first_choices(tab)) == defaults


def test_keys_and_callouts():
    names = [choice.name for tab in nd.TABS for choice in tab.choices]
    assert len(names) == len(set(names))
    callouts = {key for tab in nd.TABS for key in tab.callouts}
    assert callouts == {c.key for c in ip.notes_callouts()}


def test_view_menus_follow_the_choices_before_them():
    view = next(tab for tab in nd.TABS if tab.demo == "view_or_reshape")
    shape, perm, target = view.choices
    chosen = {"view_shape": (3, 6)}
    assert perm.options_for(chosen) == ip.permutations_of(2)
    chosen["view_perm"] = (1, 0)
    assert target.options_for(chosen) == ip.reshape_targets((6, 3))
    assert target.label_for(chosen) == "new shape for the 6x3 tensor"
    assert target.option_label((18,)) == "view / reshape(18)"
    assert shape.option_label((2, 3, 2, 2)) == "2x3x2x2"


def test_zero_dim_choice_maps_to_the_tensor():
    zero_dim = next(tab for tab in nd.TABS if tab.demo == "zero_dim_index_demo")
    (choice,) = zero_dim.choices
    assert choice.radio and choice.argument("two_matches") == ip.TWO_MATCHES_TMP_A
    assert zero_dim.arguments({"zero_dim_case": "notes"}) == (ip.NOTES_ZERO_DIM_TMP_A,)


def test_words_around_a_run():
    item = next(tab for tab in nd.TABS if tab.demo == "item_on_empty_demo")
    demo = ip.item_on_empty_demo()
    assert demo.verbatim and demo.matches_notes is False
    assert nd.source_caption(item, demo).startswith("From the notes 002:142-160: the notes'")
    inplace = next(tab for tab in nd.TABS if tab.demo == "inplace_autograd_demo")
    assert nd.source_caption(inplace, ip.inplace_autograd_demo()).startswith(
        "The error the notes 002:1332-1341 quote, which the notes 000:76 blame"
    )
    assert nd.metrics(demo) == () and nd.closing_caption(demo) is None
    view = ip.view_or_reshape()
    assert nd.metrics(view) == (
        ("x.is_contiguous()", "False"),
        ("view(6, 4)", "refused"),
        ("reshape(6, 4)", "copy"),
    )
    assert nd.closing_caption(view).startswith("This is the notes' case")
    assert nd.closing_caption(ip.view_or_reshape((3, 6), (1, 0), (18,))) is None
    assert view.transcript == view.run.transcript and not view.verbatim


def test_escape_markdown():
    assert nd.escape_markdown("a*b_c `d` [e](f)") == r"a\*b\_c \`d\` \[e\]\(f\)"
    assert nd.shape_after_permute((2, 3, 4), (1, 0, 2)) == (3, 2, 4)
    assert nd.args_text((1, 0, 2)) == "1, 0, 2"
