"""benchmarks/class_questions.py: its pieces, and one short run of it against a real server.

Only correctness is asserted (the tally and the store hold exactly the answers sent, no answer
ran the whole page, no errors); its timings depend on the machine and are printed by the
benchmark, never asserted here.
"""

from __future__ import annotations

import argparse
import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.class_questions import (
    CHANGE_TO,
    AnswerTab,
    Outcome,
    benchmark_question,
    changers,
    chart_counts,
    counts_of,
    first_choices,
    inclusion_latencies,
    parse_tally,
    report,
    run_question,
    seat_of,
)
from benchmarks.class_session import ClassRun, sqlite_servers
from benchmarks.classroom import FRAGMENT_DONE, RERUN_EARLY
from core.questions import check_questions
from core.tally import tally_figure

RADIO_FRAGMENT = "radio-fragment"
POLL_FRAGMENT = "poll-fragment"
OPTIONS = ["A. yes", "B. no", "C. maybe", "D. never"]


def _run(coroutine):
    """``asyncio.run`` on a thread of its own: in the whole suite Playwright's sync API keeps an
    event loop running on the main thread, where ``asyncio.run`` refuses to start another."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_the_question_is_a_valid_question_of_four_choices():
    question = benchmark_question()
    check_questions([question], minimum=1)
    assert len(question.choices) == 4


def test_burst_choices_and_their_counts():
    picked = first_choices(10)
    assert picked == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    assert counts_of(picked) == (3, 3, 2, 2)
    moving = changers(picked, count=5, to=CHANGE_TO)
    assert moving == [0, 1, 2, 4, 5]
    assert all(picked[i] != CHANGE_TO for i in moving)
    with pytest.raises(ValueError, match="only 8 students"):
        changers(picked, count=9, to=CHANGE_TO)


def test_the_tally_is_read_from_the_markdown_and_the_real_chart():
    assert parse_tally("**Answered: 12 of 50 students**") == (12, 50)
    assert parse_tally("**Answered: 1 of 1 student**") == (1, 1)
    assert parse_tally("**Class question · round 1** · page home") is None
    spec = tally_figure(["A", "B", "C", "D"], (5, 0, 12, 3)).to_json()
    assert chart_counts(spec) == (5, 0, 12, 3)
    assert chart_counts('{"data": []}') is None
    assert chart_counts("not json") is None


def test_latencies_pair_the_kth_answer_to_end_with_the_first_tally_showing_k():
    sent = [0.0, 0.1, 0.2]
    finished = [0.5, 0.3, None]  # the second ended first; the third never did
    shown = [(0.4, 0), (1.0, 1), (2.0, 2), (3.0, 3)]
    assert inclusion_latencies(sent, finished, shown) == pytest.approx([2.0, 0.9, None])
    assert inclusion_latencies([0.0], [0.1], [(0.5, 0)]) == [None]  # never on the tally
    with pytest.raises(ValueError, match="one end per send"):
        inclusion_latencies([0.0], [], [])


def test_the_seat_is_read_from_the_query_string():
    assert seat_of("class=ABC234&seat=s1x") == "s1x"
    assert seat_of("class=ABC234") is None


class _Socket:
    """Records what a tab sends."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def send(self, payload: bytes) -> None:
        self.sent.append(payload)


def _radio() -> ForwardMsg:
    fm = ForwardMsg()
    fm.delta.fragment_id = RADIO_FRAGMENT
    radio = fm.delta.new_element.radio
    radio.id = "$$ID-abc-class.answer"
    radio.options.extend(OPTIONS)
    radio.set_value = True
    radio.raw_value = OPTIONS[2]
    return fm


def _new_session(run_id: str, *fragments: str) -> ForwardMsg:
    fm = ForwardMsg()
    fm.new_session.page_script_hash = "page-hash"
    fm.metadata.run.script_run_id = run_id
    fm.metadata.run.fragment_ids.extend(fragments)
    return fm


def _finished(run_id: str, status: int) -> ForwardMsg:
    fm = ForwardMsg()
    fm.script_finished = status
    fm.metadata.run.script_run_id = run_id
    return fm


def _tab() -> tuple[AnswerTab, _Socket]:
    socket = _Socket()
    tab = AnswerTab(socket, ClassRun("ABC234"), query="class=ABC234&seat=s1")
    tab.take(_radio())
    return tab, socket


def test_an_answer_is_sent_as_the_browser_sends_a_radio_change_in_its_fragment():
    tab, socket = _tab()
    assert (tab.radio_id, tab.fragment_id, tab.options) == ("$$ID-abc-class.answer",
                                                            RADIO_FRAGMENT, OPTIONS)  # fmt: skip
    assert tab.shown_choice == 2  # the radio showed the stored answer
    _run(tab.answer(3))
    request = BackMsg.FromString(socket.sent[-1]).rerun_script
    assert request.fragment_id == RADIO_FRAGMENT
    assert request.query_string == "class=ABC234&seat=s1"
    assert not request.is_auto_rerun
    [widget] = request.widget_states.widgets
    assert (widget.id, widget.string_value) == (tab.radio_id, OPTIONS[3])


def test_an_answer_run_ends_at_its_script_finished_or_when_the_next_run_starts_first():
    tab, _ = _tab()
    _run(tab.answer(0))
    tab.take(_new_session("a", RADIO_FRAGMENT))
    assert not tab.answered_last()
    tab.take(_finished("a", FRAGMENT_DONE))
    assert tab.answered_last() and tab.cut_short == 0
    # Streamlit rewrote its status: the run still ended.
    _run(tab.answer(1))
    tab.take(_new_session("b", RADIO_FRAGMENT))
    tab.take(_finished("b", RERUN_EARLY))
    assert tab.answered_last() and tab.cut_short == 1
    # Its script_finished was dropped: the next run's start ends it.
    _run(tab.answer(2))
    tab.take(_new_session("c", POLL_FRAGMENT, RADIO_FRAGMENT))
    tab.take(_new_session("d", POLL_FRAGMENT))
    assert tab.answered_last() and tab.cut_short == 2
    # A timer's run of another fragment is not the answer's run.
    _run(tab.answer(3))
    tab.take(_new_session("e", POLL_FRAGMENT))
    tab.take(_finished("e", FRAGMENT_DONE))
    assert not tab.answered_last()
    assert tab.whole_runs == []


def test_a_short_run_with_four_students_on_one_sqlite_server(capsys):
    """The benchmark's phases on a real server: the tally and the store are exact after each
    burst and the reload, every answer ran only its fragment, and nothing failed."""
    students = 4

    async def run() -> Outcome:
        with sqlite_servers("class-questions-test") as servers:
            outcome = await run_question(servers, argparse.Namespace(students=students))
            report(servers, outcome)
            return outcome

    outcome = _run(run())
    assert outcome.errors == []
    assert (outcome.ready, outcome.teacher_m) == (students, students)
    assert [len(burst.answers) for burst in outcome.bursts] == [students, students - 1]
    assert outcome.reload is not None and outcome.reload.burst is not None
    for burst in [*outcome.bursts, outcome.reload.burst]:
        assert burst.tally == burst.expected, burst.name
        assert burst.stored is not None and burst.stored.counts == burst.expected, burst.name
        assert burst.stored.answered == students, burst.name
        assert burst.whole_runs == 0, burst.name
        assert None not in burst.latencies, burst.name  # every answer reached the tally
        assert burst.all_shown_s is not None, burst.name
    assert outcome.bursts[0].expected == counts_of(first_choices(students))
    assert outcome.reload.restored  # the radio showed the stored answer after the reload
    assert outcome.reload.joined_after == students  # the reload took no second seat
    printed = capsys.readouterr().out
    assert "NOT" not in printed and printed.count(": exact") == 2
    assert "errors: 0" in printed
