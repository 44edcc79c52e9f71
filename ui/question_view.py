"""Drawing a question (``core.questions``): its choices, its reveal, and the page part it hides.

Shared by the solo Predict panel (``ui.predict``) and a class's asked question
(``ui.class_questions``). Question texts are the app's own (computed by a lesson from the view,
never typed by a visitor), so choices may use inline code in backticks.
"""

from __future__ import annotations

import streamlit as st

from core.questions import PART_KEY, Question
from ui.i18n import _, tr

# Streamlit's own icons, not emoji: a projector or phone without an emoji font showed empty boxes.
RIGHT_MARK, WRONG_MARK = ":green[:material/check_circle:]", ":red[:material/cancel:]"


def choice_label(question: Question, index: int) -> str:
    """Choice ``index`` as a radio shows it: its letter and its text, translated."""
    return f"{chr(ord('A') + index)}. {tr(question.choices[index].text)}"


def choice_lines(question: Question) -> str:
    """Every choice on a line of its own (markdown), for a projector that shows the full texts
    where a chart's axis must shorten them."""
    return "  \n".join(choice_label(question, i) for i in range(len(question.choices)))


def notes_ref_line(ref: str) -> str:
    """Where the notes make the claim a choice repeats, as a line under its explanation."""
    return _("The notes say this at {ref}.").format(ref=ref)


def show_reveal(question: Question, picked: int | None) -> None:
    """The answer: whether ``picked`` (a choice index, or None) was right, the live proof, and
    why each choice is right or wrong."""
    right = question.answer
    if picked is None:
        st.info(_("The answer is {choice}.").format(choice=choice_label(question, right)))
    elif picked == right:
        st.success(_("Right: {choice}.").format(choice=choice_label(question, right)),
                   icon=":material/check_circle:")  # fmt: skip
    else:
        st.error(_("Not this time: you chose {picked}; the answer is {choice}.").format(
            picked=choice_label(question, picked), choice=choice_label(question, right)),
            icon=":material/cancel:")  # fmt: skip
    st.markdown(_("**The run says:** {proof}").format(proof=tr(question.proof)))
    for index, choice in enumerate(question.choices):
        mark = RIGHT_MARK if index == right else WRONG_MARK
        lines = [_("{mark} **{choice}**: {why}").format(
            mark=mark, choice=choice_label(question, index), why=tr(choice.why))]  # fmt: skip
        if choice.notes:
            lines.append(notes_ref_line(choice.notes))
        st.markdown("  \n".join(lines))


def hide_part(part: str | None) -> None:
    """Blur the page's container ``part`` (``st.container(key=part)``) until the reveal, with a
    label saying why. A style element only: it takes no room on the page."""
    if part is None:
        return
    if not PART_KEY.match(part):
        raise ValueError(f"a hidden part is a container key, got {part!r}")
    label = _("Hidden until the answer is revealed")
    label = label.replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\3C ")
    selector = f".st-key-{part}"
    st.html(
        f"<style>{selector} {{ position: relative; outline: 2px dashed #6b7280;"
        " outline-offset: 4px; border-radius: 0.5rem; }"
        f"{selector} > * {{ filter: blur(12px); pointer-events: none; user-select: none; }}"
        f'{selector}::after {{ content: "{label}"; position: absolute; top: 0.75rem;'
        " left: 50%; transform: translateX(-50%); background: #ffffff; color: #1f2937;"
        " padding: 0.3rem 0.8rem; border-radius: 0.5rem; font-weight: 600;"
        " box-shadow: 0 1px 4px rgba(0,0,0,0.3); z-index: 5; }</style>"
    )
