"""The Predict panel: commit to an answer about the view, then see what the run says.

A page calls :func:`predict_panel` last, with the place ``ui.lesson.lesson_layout`` reserved under
its header and a function that builds its questions (``lessons/<slug>/questions.py``) from the
settings the page just used. The panel is a collapsed expander: closed, nothing is computed and
the figure is where it always was. Open, it shows one question at a time; until it is revealed,
the part of the page that gives the answer away is blurred (``ui.question_view.hide_part``).

A teacher in a class gets "Ask the class" instead of the reveal (``ui.class_questions``): the
class answers on its phones and the reveal happens on the projector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.questions import Question, check_questions
from core.text import N_
from ui import class_questions
from ui.i18n import _, tr
from ui.lesson import lazy_expander
from ui.question_view import choice_label, hide_part, show_reveal

OPEN_KEY = "predict.open"
PICK_KEY = "predict.pick"
ANSWER_KEY = "predict.answer"
REVEAL_KEY = "predict.reveal"
AGAIN_KEY = "predict.again"
PANEL_LABEL = N_("Predict, then reveal")
_REVEALED = "_predict.revealed"  # question fingerprint -> revealed (session state only)
_SEEN = "_predict.seen"  # question slot -> fingerprint of the question its answer is about


def _fingerprint(slug: str, question: Question) -> tuple[str, ...]:
    """What makes two questions the same: page, key, prompt and choices (the view's numbers are
    in them, so moving a slider makes a new question and a fresh answer)."""
    return (slug, question.key, str(question.prompt), *(str(c.text) for c in question.choices))


def predict_panel(where: DeltaGenerator, slug: str,
                  make_questions: Callable[[], Sequence[Question]]) -> None:  # fmt: skip
    """The collapsed Predict panel in ``where``; ``make_questions()`` runs only while it is open.

    A ``ValueError`` from it (a view no question fits) is shown as a message in the panel."""
    with where:
        box = lazy_expander(PANEL_LABEL, key=OPEN_KEY)
    if box is None:
        return
    with box:
        try:
            questions = check_questions(make_questions())
        except ValueError as error:
            st.warning(_("No question fits this view: {error}").format(error=tr(error)),
                       icon=":material/help:")  # fmt: skip
            return
        picked = st.segmented_control(
            _("Question"), range(len(questions)), key=PICK_KEY, default=0,
            format_func=lambda i: str(i + 1),
        )  # fmt: skip
        _one_question(slug, questions[picked or 0])


def _one_question(slug: str, question: Question) -> None:
    fingerprint = _fingerprint(slug, question)
    answer_key = f"{ANSWER_KEY}.{question.key}"
    seen = st.session_state.setdefault(_SEEN, {})
    if seen.get(answer_key) != fingerprint:  # a new view: the old answer was about another one
        seen[answer_key] = fingerprint
        st.session_state.pop(answer_key, None)
    revealed = st.session_state.setdefault(_REVEALED, {})
    st.markdown(tr(question.prompt))
    if fingerprint in revealed:  # the prediction made, kept with the reveal it led to
        show_reveal(question, revealed[fingerprint])
        st.button(_("Ask me again"), key=AGAIN_KEY, on_click=_forget,
                  args=(fingerprint, answer_key), icon=":material/replay:")  # fmt: skip
        return
    labels = [choice_label(question, i) for i in range(len(question.choices))]
    st.radio(_("Your prediction"), range(len(labels)), index=None, key=answer_key,
             format_func=labels.__getitem__)  # fmt: skip
    if class_questions.teacher_in_class():
        class_questions.ask_button(slug, question)
        if class_questions.answered_by_class(slug, question):
            return  # the projector showed its answer: nothing left to hide
    else:
        st.button(_("Reveal"), key=REVEAL_KEY, type="primary", on_click=_reveal,
                  args=(fingerprint, answer_key), icon=":material/visibility:",
                  help=_("Pick an answer first: then see what the run gives."))  # fmt: skip
    hide_part(question.hides)


def _reveal(fingerprint: tuple[str, ...], answer_key: str) -> None:
    st.session_state[_REVEALED][fingerprint] = st.session_state.get(answer_key)


def _forget(fingerprint: tuple[str, ...], answer_key: str) -> None:
    st.session_state[_REVEALED].pop(fingerprint, None)
    st.session_state.pop(answer_key, None)
