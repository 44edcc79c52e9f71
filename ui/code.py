"""Render a copyable code snippet that reproduces the current view."""

from __future__ import annotations

import streamlit as st


def show_code(code: str, *, title: str = "Reproduce this view in Python") -> None:
    """Show ``code`` in an expander; st.code gives it a copy button."""
    with st.expander(title, icon=":material/code:"):
        # Wrapped, not scrolled: a scroll region without keyboard focus fails axe-core.
        st.code(code, language="python", wrap_lines=True)
