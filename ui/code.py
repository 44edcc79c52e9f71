"""Render a copyable code snippet that reproduces the current view."""

from __future__ import annotations

import streamlit as st

from core.text import N_
from ui.i18n import _


def show_code(code: str, *, title: str = N_("Reproduce this view in Python")) -> None:
    """Show ``code`` in an expander; st.code gives it a copy button. ``title`` is an English
    msgid (translated here)."""
    with st.expander(_(title), icon=":material/code:"):
        # Wrapped, not scrolled: a scroll region without keyboard focus fails axe-core.
        st.code(code, language="python", wrap_lines=True)
