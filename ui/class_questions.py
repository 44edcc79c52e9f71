"""A class answers a question: the teacher asks, students answer on their phones, the projector
shows the spread, then the teacher reveals. (Filled in below the solo panel's needs.)"""

from __future__ import annotations

import streamlit as st

from core.questions import Question
from ui.classroom import current_member


def teacher_in_class() -> bool:
    """Whether this session leads a class (its Predict panel asks the class)."""
    member = current_member()
    return member is not None and member.is_teacher


def ask_button(slug: str, question: Question) -> None:
    """The teacher's "Ask the class" for ``question`` on page ``slug``."""
    st.button("Ask the class", key="class.ask", disabled=True)
