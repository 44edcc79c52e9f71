"""A class answers a question: the teacher asks, students answer, the projector shows the spread,
then the teacher reveals.

- The teacher opens a page's Predict panel (``ui.predict``) and asks one of its questions
  (``class.ask``). The question, computed once from the teacher's view, goes to the class store
  as text templates and values (``core.questions.question_state``): each student reads it in
  their own language, and nothing is computed again on their side.
- Above every student's page: the question and its choices (radio ``class.answer``); an answer
  is stored at once and may change until the reveal (one answer per seat per round: the store
  keeps the seat's latest).
- Above the teacher's page: the spread of answers as bars and "answered N of M" (container
  ``class-tally``), read from the store once a second while the round is open, without saying
  which answer is right; ``class.reveal`` shows everyone the answer, the run's proof and why
  each choice is right or wrong, and each student whether they were right; ``class.again`` asks
  the same question again after a discussion (a second round beside the first);
  ``class.close`` takes it off the pages; ``class.results`` downloads every round as CSV.
- While a round is open, the part of the page that gives its answer away is blurred on the
  teacher's page and on every student's page showing that page.

``app.py`` calls :func:`show_class_question` after the page, with the places
``ui.classroom.start_class_run`` reserved above it.
"""

from __future__ import annotations

import functools

import streamlit as st

from core.class_store import (
    CLOSED,
    OPEN,
    REVEALED,
    ClassRound,
    ClassStore,
    RoundClosed,
    StoreUnavailable,
    TooManyRounds,
)
from core.questions import Question, RoundResult, question_from_state, question_state, results_csv
from core.tally import tally_figure
from lessons.registry import PAGES_BY_SLUG
from ui.charts import show_chart
from ui.classroom import (
    ClassPlaces,
    Handled,
    Membership,
    class_store,
    current_member,
    current_slug,
    guarded,
    tell,
)
from ui.i18n import _, ngettext, tr
from ui.question_view import choice_label, choice_lines, hide_part, show_reveal

ASK_KEY = "class.ask"
ANSWER_KEY = "class.answer"
REVEAL_KEY = "class.reveal"
AGAIN_KEY = "class.again"
CLOSE_KEY = "class.close"
RESULTS_KEY = "class.results"
TALLY_KEY = "class-tally"
QUESTION_KEY = "class-question"
#: The projector's tally reads the store this often while a round is open (answers show within
#: about a second; one teacher per class, so the cost is one read a second).
TALLY_POLL_S = 1.0
_ANSWERED_ROUND = "_class.answered_round"  # the round the radio's value belongs to


def teacher_in_class() -> bool:
    """Whether this session leads a class (its Predict panel asks the class)."""
    member = current_member()
    return member is not None and member.is_teacher and member.joined


def ask_button(slug: str, question: Question) -> None:
    """The teacher's "Ask the class" for ``question`` on page ``slug``."""
    st.button(_("Ask the class"), key=ASK_KEY, type="primary", on_click=_on_ask,
              args=(slug, question), icon=":material/campaign:",
              help=_("Every student's page shows this question; the spread of their answers "
                     "appears above your page. Reveal it there."))  # fmt: skip


def answered_by_class(slug: str, question: Question) -> bool:
    """Whether the class's newest round asked ``question`` on ``slug`` and is past its reveal
    (the teacher's own preview of it then hides nothing)."""
    member = current_member()
    if member is None:
        return False
    try:
        with guarded(member):
            now = class_store().current_round(member.code)
    except Handled:
        return False
    read = None if now is None else _read(now.question)
    return (read is not None and now.stage != OPEN and read[0] == slug
            and read[1].key == question.key)  # fmt: skip


def _on_ask(slug: str, question: Question) -> None:
    member = current_member()
    if member is None or not member.is_teacher:
        return
    try:
        with guarded(member):
            class_store().ask(member.code, member.teacher_key, question_state(slug, question),
                              len(question.choices))  # fmt: skip
    except TooManyRounds:
        tell(_("This class has asked as many questions as it can hold: start a new class."))
    except Handled:
        tell(_("The class store cannot be reached: the question was not asked. Try again in "
               "a moment."))  # fmt: skip


def _read(state: dict[str, str]) -> tuple[str, Question] | None:
    try:
        return question_from_state(state)
    except ValueError:  # not a question this app wrote: show nothing rather than fail
        return None


def show_class_question(places: ClassPlaces) -> None:
    """Above the page: the teacher's tally and controls, or a student's question."""
    member = current_member()
    if member is None or places.banner is None or not member.joined:
        return
    with places.banner:
        if member.is_teacher:
            _teacher_view(member)
        elif member.seat is not None:
            _student_view(member)


# --- The teacher --------------------------------------------------------------------------------


def _teacher_view(member: Membership) -> None:
    try:
        with guarded(member):
            now = class_store().current_round(member.code)
    except Handled:
        return
    if now is None:
        return
    read = _read(now.question)
    if now.stage != CLOSED and read is not None:
        slug, question = read
        with st.container(border=True):
            _round_heading(now, slug)
            _teacher_round(member, now, question)
        if now.stage == OPEN and slug == current_slug():
            hide_part(question.hides)
    st.download_button(
        _("Download the class's answers (CSV)"), key=RESULTS_KEY, mime="text/csv",
        data=functools.partial(_results_text, class_store(), member.code),
        file_name=f"class-{member.code}-answers.csv", icon=":material/download:",
        on_click="ignore",
    )  # fmt: skip


def page_title(slug: str) -> str:
    """The title of the page ``slug`` in this session's language (the slug when no page has it)."""
    spec = PAGES_BY_SLUG.get(slug)
    return _(spec.title) if spec is not None else slug


def _round_heading(now: ClassRound, slug: str) -> None:
    st.markdown(_("**Class question · round {n}** · page {page}").format(
        n=now.number, page=page_title(slug)))  # fmt: skip


def _teacher_round(member: Membership, now: ClassRound, question: Question) -> None:
    st.markdown(tr(question.prompt))
    if now.stage == OPEN:  # the reveal lists them again, each with why
        st.markdown(choice_lines(question))
    _tally(member, question, now)
    if now.stage == OPEN:
        st.button(_("Reveal the answer"), key=REVEAL_KEY, type="primary", on_click=_on_move,
                  args=(now.number, REVEALED), icon=":material/visibility:")  # fmt: skip
        return
    show_reveal(question, None)
    again, close = st.columns(2)
    again.button(_("Ask again (round {n})").format(n=now.number + 1), key=AGAIN_KEY,
                 on_click=_on_again, args=(now,), icon=":material/replay:")  # fmt: skip
    close.button(_("Close the question"), key=CLOSE_KEY, on_click=_on_move,
                 args=(now.number, CLOSED), icon=":material/close:")  # fmt: skip


def _tally(member: Membership, question: Question, shown: ClassRound) -> None:
    """The spread of answers; read again every ``TALLY_POLL_S`` while the round is open."""

    @st.fragment(run_every=TALLY_POLL_S if shown.stage == OPEN else None)
    def live() -> None:
        now = shown
        if shown.stage == OPEN:
            try:
                with guarded(member):
                    now = class_store().current_round(member.code) or shown
            except Handled:
                pass
            if now.number != shown.number or now.stage != shown.stage:
                st.rerun()  # asked or revealed in another tab of this teacher
        with st.container(key=TALLY_KEY):
            _tally_picture(member, question, now)

    live()


def _tally_picture(member: Membership, question: Question, now: ClassRound) -> None:
    right = question.answer if now.stage != OPEN else None
    labels = [_plain(choice_label(question, i)) for i in range(len(question.choices))]
    joined = member.counts[0] if member.counts else now.answered
    line = ngettext("Answered: {n} of {m} student", "Answered: {n} of {m} students",
                    joined).format(n=now.answered, m=max(joined, now.answered))  # fmt: skip
    st.markdown(f"**{line}**")
    show_chart(tally_figure(labels, now.counts, right), key=f"class.tally_chart.{now.number}",
               alt=_tally_alt(labels, now.counts, right))  # fmt: skip


def _plain(label: str, limit: int = 60) -> str:
    """A choice label for a chart axis: without markdown backticks, shortened."""
    text = label.replace("`", "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tally_alt(labels: list[str], counts: tuple[int, ...], right: int | None) -> str:
    parts = "; ".join(f"{label}: {count}" for label, count in zip(labels, counts, strict=True))
    if right is None:
        return _("Answers per choice: {parts}").format(parts=parts)
    return _("Answers per choice: {parts}. The answer is {label}.").format(
        parts=parts, label=labels[right])  # fmt: skip


def _on_move(number: int, stage: str) -> None:
    member = current_member()
    if member is None or not member.is_teacher:
        return
    store_call = class_store().reveal if stage == REVEALED else class_store().close_round
    try:
        with guarded(member):
            store_call(member.code, member.teacher_key, number)
    except RoundClosed:
        pass  # already revealed or closed (another tab of this teacher): the page shows it
    except Handled:
        tell(_("The class store cannot be reached: try again in a moment."))


def _on_again(now: ClassRound) -> None:
    read = _read(now.question)
    if read is not None:
        _on_ask(*read)


def _results_text(store: ClassStore, code: str) -> str:
    """The class's rounds as CSV (``core.questions.results_csv``). Runs when the button is
    clicked, on a thread of its own: no Streamlit here, and a store that is down is a line."""
    try:
        rounds = store.rounds(code)
    except (StoreUnavailable, LookupError, ValueError) as error:
        return "error\n" + " ".join(str(error).split()) + "\n"
    results = []
    for found in rounds:
        read = _read(found.question)
        if read is not None:
            results.append(RoundResult(found.number, read[0], read[1], found.counts,
                                       found.answered, found.stage))  # fmt: skip
    return results_csv(results)


# --- A student ----------------------------------------------------------------------------------


def _student_view(member: Membership) -> None:
    try:
        with guarded(member):
            now = class_store().current_round(member.code, member.seat)
    except Handled:
        return
    if now is None or now.stage == CLOSED:
        return
    read = _read(now.question)
    if read is None:
        return
    slug, question = read
    with st.container(border=True, key=QUESTION_KEY):
        _round_heading(now, slug)
        st.markdown(tr(question.prompt))
        if now.stage == OPEN:
            _answer_box(member, now, question)
        else:
            show_reveal(question, now.mine)
    if now.stage == OPEN and slug == current_slug():
        hide_part(question.hides)


def _answer_box(member: Membership, now: ClassRound, question: Question) -> None:
    if st.session_state.get(_ANSWERED_ROUND) != now.number:
        # A new round, or a reload: the radio starts from what the store holds for this seat.
        st.session_state[_ANSWERED_ROUND] = now.number
        st.session_state[ANSWER_KEY] = now.mine
    labels = [choice_label(question, i) for i in range(len(question.choices))]

    # A fragment: an answer reruns these few lines, not the student's page (fifty students
    # answering at once would otherwise be fifty page runs on one server).
    @st.fragment
    def answer() -> None:
        st.radio(_("Your answer"), range(len(labels)), index=None, key=ANSWER_KEY,
                 format_func=labels.__getitem__, on_change=_on_answer,
                 args=(now.number,))  # fmt: skip
        if st.session_state.get(ANSWER_KEY) is None:
            st.caption(_("Pick one: your teacher sees how many chose each answer, not who."))
        else:
            st.caption(_("Your answer is in. You can change it until your teacher reveals the "
                         "answer."))  # fmt: skip

    answer()


def _on_answer(number: int) -> None:
    member = current_member()
    choice = st.session_state.get(ANSWER_KEY)
    if member is None or member.seat is None or choice is None:
        return
    try:
        with guarded(member):
            class_store().answer(member.code, member.seat, number, int(choice))
    except RoundClosed:
        tell(_("Your teacher has already revealed this question: that answer was not "
               "counted."))  # fmt: skip
    except Handled:
        tell(_("The class store cannot be reached: your answer was not counted. Pick it "
               "again in a moment."))  # fmt: skip
