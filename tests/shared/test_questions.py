"""The question model: validation, its trip through the class store as text, the results CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.questions import (
    RESULT_COLUMNS,
    Choice,
    Question,
    RoundResult,
    check_questions,
    question_from_state,
    question_state,
    results_csv,
)
from core.text import T

pytestmark = pytest.mark.shared

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=30).filter(lambda t: t.strip() and "{" not in t and "}" not in t)


def question(**changes) -> Question:
    values = dict(
        key="top-left",
        prompt=T("Where does pixel ({x}, {y}) go?", x=0, y=0),
        choices=(Choice(T("to ({x}, {y})", x=3, y=4), "the run says so"),
                 Choice("nowhere", "it is inside", "002:1047"),
                 Choice(T("to {p}", p=T("the {n}th pixel", n=2)), "near miss")),
        answer=0, proof=T("affine_grid gives ({x:.2f}, {y:.2f})", x=3.0, y=4.0),
        hides="warp-canvas",
    )  # fmt: skip
    values.update(changes)
    return Question(**values)


def test_a_question_round_trips_through_store_state_with_its_templates():
    q = question()
    state = question_state("warp", q)
    assert all(isinstance(v, str) for v in state.values())
    slug, back = question_from_state(state)
    assert slug == "warp" and back == q
    assert back.prompt.template == "Where does pixel ({x}, {y}) go?"  # translated where read
    assert back.choices[2].text.args["p"].template == "the {n}th pixel"
    assert back.notes_refs == ("002:1047",)


@settings(max_examples=60, deadline=None)
@given(prompt=words, texts=st.lists(words, min_size=2, max_size=6, unique=True),
       number=st.floats(allow_nan=False, allow_infinity=False), data=st.data())
def test_any_question_round_trips(prompt, texts, number, data):
    choices = tuple(Choice(T("{t} ({v})", t=t, v=number), t) for t in texts)
    q = Question("k", prompt, choices, data.draw(st.integers(0, len(texts) - 1)),
                 T("got {v}", v=number))  # fmt: skip
    assert question_from_state(question_state("indexing", q)) == ("indexing", q)


@pytest.mark.parametrize("changes, fragment", [
    ({"key": "Top Left"}, "lower-case"), ({"key": ""}, "lower-case"),
    ({"prompt": " "}, "prompt"), ({"choices": ()}, "choices"),
    ({"choices": (Choice("a", "b"),)}, "choices"),
    ({"choices": tuple(Choice(str(i), "w") for i in range(7))}, "choices"),
    ({"choices": (Choice("a", "b"), Choice("a", "c"))}, "same choice twice"),
    ({"answer": 3}, "answer"), ({"answer": -1}, "answer"), ({"answer": "0"}, "answer"),
    ({"proof": ""}, "proof"), ({"hides": "x.y"}, "container key"),
    ({"hides": "<style>"}, "container key"),
])  # fmt: skip
def test_a_malformed_question_names_what_is_wrong(changes, fragment):
    with pytest.raises(ValueError, match=fragment):
        question(**changes)


def test_choices_and_lesson_lists_are_checked():
    with pytest.raises(ValueError, match="FILE:LINE"):
        Choice("a", "b", "line 3")
    with pytest.raises(ValueError, match="non-empty"):
        Choice("", "b")
    with pytest.raises(ValueError, match="at least 3"):
        check_questions([question()])
    with pytest.raises(ValueError, match="repeat"):
        check_questions([question(), question(), question()])
    keys = ("a", "b", "c")
    assert len(check_questions([question(key=k) for k in keys])) == 3


@pytest.mark.parametrize("state", [
    {}, {"slug": "warp"}, {"slug": "warp", "key": "k", "question": "not json"},
    {"slug": "warp", "key": "k", "question": "[]"},
    {"slug": "", **{k: v for k, v in question_state("w", question()).items() if k != "slug"}},
    {**question_state("w", question()), "question": json.dumps({"prompt": {"t": "{x}", "a": {}},
                                                                "choices": []})},
])  # fmt: skip
def test_state_that_is_not_a_question_is_a_value_error(state):
    with pytest.raises(ValueError):
        question_from_state(state)


def test_results_csv_has_a_row_per_round_and_choice_and_no_seats():
    q = question()
    text = results_csv([RoundResult(1, "warp", q, (5, 3, 2), 10, "revealed"),
                        RoundResult(2, "warp", q, (9, 1, 0), 10, "open")])  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == RESULT_COLUMNS and len(rows) == 6
    assert [r["count"] for r in rows] == ["5", "3", "2", "9", "1", "0"]
    assert [r["correct"] for r in rows[:3]] == ["yes", "no", "no"]
    assert {r["question_key"] for r in rows} == {"top-left"}
    assert rows[0]["choice_text"] == "to (3, 4)" and rows[3]["stage"] == "open"
