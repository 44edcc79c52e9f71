"""The one "The notes say / PyTorch today does" component every page uses."""

from __future__ import annotations

import importlib

import streamlit as st

from core.notes import NotesCallout, NotesRef, cite, today_heading
from ui.markdown import plain

_VERDICT_COLOURS = {
    "wrong": "red",
    "out of date": "orange",
    "incomplete": "blue",
    "differs from the app": "violet",
}


def notes_callout(callout: NotesCallout) -> None:
    """Draw one callout: the notes' quote (Chinese, verbatim) and gloss beside today's live run.

    The container's key is ``notes_callout-<key>`` so browser tests can find it as
    ``.st-key-notes_callout-<key>``. Texts go through ``st.text``/``st.code`` (no markdown), so
    a quote with ``*`` or ``_`` shows as written.
    """
    with st.container(border=True, key=f"notes_callout-{callout.key}"):
        head, badge = st.columns([5, 1], vertical_alignment="center")
        head.markdown(f"**{plain(callout.title)}**")
        badge.badge(callout.verdict, color=_VERDICT_COLOURS.get(callout.verdict, "gray"))
        notes_col, today_col = st.columns(2)
        with notes_col:
            st.markdown(f"**The notes say** ({cite(callout.ref)})")
            st.text(callout.quote_display)
            st.text(f"In English: {callout.gloss_en}")
        with today_col:
            st.markdown(f"**{today_heading(callout)}**")
            st.text(callout.today)
            # Wrapped, not scrolled: a scroll region without keyboard focus fails axe-core.
            st.code(callout.run.code, language="python", wrap_lines=True)
            # Wrapped: an error line is the lesson and must not hide behind a scrollbar.
            st.code(
                callout.run.transcript or "(prints nothing)", language="text", wrap_lines=True
            )


@st.cache_resource(show_spinner=False, max_entries=16)  # 8 modules have callouts
def callouts_of(module_name: str) -> dict[str, NotesCallout]:
    """``module_name``'s ``notes_callouts()`` by key, run live once per process and shared by
    every session (NotesCallout is frozen, so sharing is safe)."""
    module = importlib.import_module(module_name)
    return {callout.key: callout for callout in module.notes_callouts()}


def notes_citation(
    ref: str | NotesRef, *, verbatim: bool = True, detail: str = "the notes' own text"
) -> None:
    """A one-line caption under an example: where in the notes it comes from (``detail`` says
    what is taken verbatim), or that it is a variation of the notes' example (never claimed as
    theirs)."""
    if verbatim:
        st.caption(f"From the {cite(ref)}, verbatim: {detail}.")
    else:
        st.caption(f"A variation of the {cite(ref)} example, not the notes' own inputs.")
