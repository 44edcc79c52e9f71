"""Keep a page's widget values when the user visits another page and comes back.

Streamlit forgets the value of every widget that a run does not draw, so without this a
page switch resets all of a page's controls. A page calls :func:`keep_widget_state` once,
at its top, with the keys of its *value* widgets (sliders, selects, radios, toggles, number
and text inputs). Buttons, file uploaders and data editors cannot be set through
``st.session_state`` and must not be listed.
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

_STORE = "_kept_widget_values"


def keep_widget_state(keys: Iterable[str]) -> None:
    """Mirror each listed widget value under a plain key; put it back when it was forgotten.

    At the start of a run the session state holds the values from the page's previous run;
    a key is missing only when another page ran in between. Then the mirrored value is
    restored before the widget is drawn, so the widget comes back as the user left it.
    """
    kept: dict = st.session_state.setdefault(_STORE, {})
    for key in keys:
        if key in st.session_state:
            kept[key] = st.session_state[key]
        elif key in kept:
            st.session_state[key] = kept[key]
