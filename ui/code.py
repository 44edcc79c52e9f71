"""Render a copyable code snippet that reproduces the current view."""

from __future__ import annotations

import streamlit as st

from core.text import N_, is_english_comment, split_comment
from ui.i18n import _, current_language


def show_code(code: str, *, title: str = N_("Reproduce this view in Python")) -> None:
    """Show ``code`` in an expander; st.code gives it a copy button. ``title`` is an English
    msgid (translated here)."""
    with st.expander(_(title), icon=":material/code:"):
        # Wrapped, not scrolled: a scroll region without keyboard focus fails axe-core.
        st.code(localized(code), language="python", wrap_lines=True)


def localized(code: str) -> str:
    """``code`` with its English ``# comments`` in this session's language: the code itself,
    and comments the catalog does not know (the notes' own), stay as they are."""
    if current_language() == "en":
        return code
    lines = []
    for line in code.split("\n"):
        parts = split_comment(line)
        if parts is not None and is_english_comment(parts[1]):
            line = parts[0] + _(parts[1])
        lines.append(line)
    return "\n".join(lines)
