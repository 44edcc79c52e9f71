"""The lesson layout every page shares: title, what to look at, the picture first, then the rest.

A page calls :func:`lesson_layout` once, at the top, and fills the containers it returns in any
order; Streamlit draws them in the order they were created:

1. the title (h1) and one line saying what to look at (body text, not a faded caption);
2. ``figure`` (the main picture) beside ``controls`` (compact widgets) on a wide screen; on a
   phone the columns stack, figure first;
3. ``details``: formulas, snippets, tables, comparisons, notes callouts (use ``st.header`` for
   its sections so headings stay in order: h1, then h2, then h3).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.i18n import _
from ui.turns import take_turn


@dataclass(frozen=True)
class LessonLayout:
    """The containers of one lesson page, in display order after the header."""

    figure: DeltaGenerator
    controls: DeltaGenerator
    details: DeltaGenerator


def lesson_layout(
    title: str, look_at: str, *, figure_share: float = 0.68, gap: str = "medium"
) -> LessonLayout:
    """Draw the header and return the page's figure, controls and details containers.

    ``title`` and ``look_at`` (one sentence naming what to look at in the figure, as markdown:
    the app's own text, never user input) are English msgids, translated here.
    ``figure_share`` is the figure column's share of the width (0.5-0.85); the controls take
    the rest.
    """
    if not 0.5 <= figure_share <= 0.85:
        raise ValueError(f"figure_share must be between 0.5 and 0.85, got {figure_share}")
    st.title(_(title), anchor=False)
    st.markdown(_("**Look at:** {what}").format(what=_(look_at)))
    # The header is on its way to the browser; the rest waits for this script's turn.
    take_turn()
    figure_col, controls_col = st.columns(
        [figure_share, 1 - figure_share], gap=gap, vertical_alignment="top"
    )
    return LessonLayout(
        figure=figure_col.container(key="lesson-figure"),
        controls=controls_col.container(key="lesson-controls"),
        details=st.container(key="lesson-details"),
    )


def lazy_expander(label: str, *, key: str, **values: object) -> DeltaGenerator | None:
    """A collapsed ``st.expander`` whose content runs only while it is open: the expander when
    open (draw into it), ``None`` when closed. Opening or closing it reruns the page. For
    sections most visitors never open: a class of 50 arriving does not build them 50 times.
    ``label`` is an English msgid, translated, then formatted with ``values``."""
    box = st.expander(_(label).format(**values) if values else _(label), key=key,
                      on_change="rerun")  # fmt: skip
    return box if box.open else None
