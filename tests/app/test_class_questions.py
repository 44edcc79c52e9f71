"""A class answers a question in AppTest: a teacher and students as sessions of the real app
sharing a real class store (SQLite in a temporary folder; Redis for the store-down case).

The teacher asks from the page's Predict panel (``class.ask``); students answer with the radio
``class.answer`` above their page; the teacher's tally (``class-tally``) counts; ``class.reveal``
shows each student whether they were right; ``class.again`` opens a second round. AppTest runs
no timers, so each "poll" here is a rerun of the session.
"""

from __future__ import annotations

import csv
import io
import os
import signal

import pytest
from streamlit.testing.v1 import AppTest

from core.class_store import RoundClosed, new_seat, open_store
from core.questions import question_from_state
from testing.apptest import hidden_parts
from testing.redis_server import start_redis, stop_redis
from tests.app.test_class_session import (
    MEMBER,
    all_text,
    rerun,
    session,
    start_class,
    teacher_opens,
)
from ui import class_questions, classroom
from ui.question_view import choice_label

pytestmark = pytest.mark.apptest
#: The page the class works on (its questions are cheap; each hides a part of the page).
SLUG = "home"


def ask_first_question(teacher: AppTest) -> None:
    teacher_opens(teacher, SLUG, {})
    teacher.session_state["predict.open"] = True
    rerun(teacher)
    rerun(teacher.button(key=class_questions.ASK_KEY).click())


def tally_text(teacher: AppTest) -> str:
    return " ".join(m.value for m in teacher.markdown if m.value.startswith("**Answered"))


def answer(student: AppTest, choice: int) -> AppTest:
    return rerun(student.radio(key=class_questions.ANSWER_KEY).set_value(choice))


def test_a_class_answers_sees_the_tally_reveals_and_asks_again(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    students = [session(params={"class": code}) for _ in range(3)]
    ask_first_question(teacher)
    store = open_store()
    now = store.current_round(code)
    assert now.number == 1 and now.stage == "open"
    slug, question = question_from_state(now.question)
    assert slug == SLUG
    right, wrong = question.answer, (question.answer + 1) % len(question.choices)

    for student in students:
        rerun(student)  # the poll: the class moved, the page reruns with the question
        radio = student.radio(key=class_questions.ANSWER_KEY)
        assert radio.value is None and len(radio.options) == len(question.choices)
        assert question.hides is None or question.hides in hidden_parts(student)
    answer(students[0], right)
    answer(students[1], wrong)
    answer(students[2], wrong)
    answer(students[2], right)  # changed their mind: still one answer
    now = store.current_round(code)
    assert (now.answered, now.counts[right], now.counts[wrong]) == (3, 2, 1)

    rerun(teacher)
    assert "Answered: 3 of 3 students" in tally_text(teacher)
    shown = all_text(teacher)
    assert "· page Home & environment" in shown, "the page by its title, not its slug"
    full = [choice_label(question, i) for i in range(len(question.choices))]
    assert all(label in shown for label in full), "every choice in full: the axis shortens them"
    assert not teacher.success and not teacher.error, "the tally does not say what is right"
    assert question.hides is None or question.hides in hidden_parts(teacher)

    rerun(teacher.button(key=class_questions.REVEAL_KEY).click())
    assert store.current_round(code).stage == "revealed"
    assert question.hides not in hidden_parts(teacher)
    with pytest.raises(RoundClosed):
        store.answer(code, students[1].session_state[MEMBER].seat, 1, right)
    for student, was_right in zip(students, (True, False, True), strict=True):
        rerun(student)
        assert not [r for r in student.radio if r.key == class_questions.ANSWER_KEY]
        assert bool(student.success) == was_right and bool(student.error) != was_right
        assert question.hides not in hidden_parts(student)

    rerun(teacher.button(key=class_questions.AGAIN_KEY).click())
    assert store.current_round(code).number == 2
    for student in students:
        rerun(student)
        assert student.radio(key=class_questions.ANSWER_KEY).value is None, "a fresh round"
        answer(student, right)
    rerun(teacher)
    assert "Answered: 3 of 3 students" in tally_text(teacher)

    rows = list(csv.DictReader(io.StringIO(class_questions._results_text(store, code))))
    counts = {(row["round"], row["correct"]): row["count"] for row in rows}
    assert counts[("1", "yes")] == "2" and counts[("2", "yes")] == "3"
    assert {row["stage"] for row in rows if row["round"] == "1"} == {"revealed"}
    assert not any(seat in "".join(map(str, rows)) for seat in
                   (s.session_state[MEMBER].seat for s in students))  # fmt: skip

    rerun(teacher.button(key=class_questions.REVEAL_KEY).click())
    rerun(teacher.button(key=class_questions.CLOSE_KEY).click())
    assert store.current_round(code).stage == "closed"
    for student in students:
        assert "Class question" not in all_text(rerun(student)), "closed: off the page"


def test_a_reload_shows_the_answer_given_and_cannot_vote_twice(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    student = session(params={"class": code})
    ask_first_question(teacher)
    rerun(student)
    answer(student, 0)
    seat = student.session_state[MEMBER].seat
    reloaded = session(SLUG, {"class": code, "seat": seat})  # the same seat, a new session
    assert reloaded.radio(key=class_questions.ANSWER_KEY).value == 0
    answer(reloaded, 1)
    now = open_store().current_round(code)
    assert now.answered == 1 and now.counts[:2] == (0, 1)


def test_a_session_outside_the_class_sees_no_question_and_cannot_answer(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    ask_first_question(teacher)
    outsider = session(SLUG)
    assert not [r for r in outsider.radio if r.key == class_questions.ANSWER_KEY]
    assert MEMBER not in outsider.session_state
    forged = session(SLUG, {"class": code, "seat": new_seat()})  # a made-up seat joins anew
    answer(forged, 0)
    assert open_store().current_round(code).answered == 1  # as one more student, once
    with pytest.raises(LookupError):
        open_store().answer(code, new_seat(), 1, 0)  # a seat that never joined


def test_a_chinese_student_reads_an_english_teachers_question_in_chinese(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    student = AppTest.from_file(str(teacher._script_path), default_timeout=60)
    student.context["locale"] = "zh-CN"
    student.query_params.update({"class": code})
    student.run(timeout=120)
    ask_first_question(teacher)
    rerun(student)
    text = all_text(student)
    assert "课堂提问" in text and student.radio(key=class_questions.ANSWER_KEY).label == "你的回答"


def test_an_answer_while_the_store_is_down_is_said_and_the_class_resumes(monkeypatch):
    server = start_redis("class-questions-paused")
    try:
        monkeypatch.setenv("TP_CLASS_STORE", server.url)
        classroom._store_for.cache_clear()
        teacher = session()
        code = start_class(teacher)
        student = session(params={"class": code})
        ask_first_question(teacher)
        rerun(student)
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            answer(student, 0)
            assert "not counted" in " ".join(t.value for t in student.toast)
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        rerun(student)
        answer(student, 1)
        assert open_store().current_round(code).counts[1] == 1
    finally:
        stop_redis(server)
        classroom._store_for.cache_clear()
