"""The lesson layout every page shares: title, what to look at, the picture first, then the rest.

A page calls :func:`lesson_layout` once, at the top, and fills the containers it returns in any
order; Streamlit draws them in the order they were created:

1. the title (h1) and one line saying what to look at (body text, not a faded caption), then
   ``predict``, a place the page fills last with its questions (``ui.predict``);
2. ``figure`` (the main picture) beside ``controls`` (compact widgets) on a wide screen; on a
   phone the columns stack, figure first;
3. ``details``: formulas, snippets, tables, comparisons, notes callouts (use ``st.header`` for
   its sections so headings stay in order: h1, then h2, then h3).

A failure shows the core's message and what to change (:data:`WHAT_TO_CHANGE`);
:func:`stop_with_error` shows it in the figure's place when nothing below can be drawn, and
:func:`stop_on_error` does so for the errors a block raises. A measurement made on a click and
shown while the view stays the same is :func:`clicked_result`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.text import N_
from ui.i18n import _, tr
from ui.markdown import plain
from ui.turns import take_turn

R = TypeVar("R")

#: An error's message and what to change to avoid it, both in the session's language.
WHAT_TO_CHANGE = N_("{message}\n\n**What to change:** {hint}")


@dataclass(frozen=True)
class LessonLayout:
    """The containers of one lesson page, in display order after the header."""

    figure: DeltaGenerator
    controls: DeltaGenerator
    details: DeltaGenerator
    predict: DeltaGenerator


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
    # Reserved under the header for the page's questions (ui.predict.predict_panel), which the
    # page fills last, once its settings are known: one collapsed line above the figure.
    predict = st.container(key="lesson-predict")
    # The header is on its way to the browser; the rest waits for this script's turn.
    take_turn()
    figure_col, controls_col = st.columns(
        [figure_share, 1 - figure_share], gap=gap, vertical_alignment="top"
    )
    return LessonLayout(
        figure=figure_col.container(key="lesson-figure"),
        controls=controls_col.container(key="lesson-controls"),
        details=st.container(key="lesson-details"),
        predict=predict,
    )


def lazy_expander(label: str, *, key: str, **values: object) -> DeltaGenerator | None:
    """A collapsed ``st.expander`` whose content runs only while it is open: the expander when
    open (draw into it), ``None`` when closed. Opening or closing it reruns the page. For
    sections most visitors never open: a class of 50 arriving does not build them 50 times.
    ``label`` is an English msgid, translated, then formatted with ``values``."""
    box = st.expander(_(label).format(**values) if values else _(label), key=key,
                      on_change="rerun")  # fmt: skip
    return box if box.open else None


def stop_with_error(where: DeltaGenerator, message: str, hint: str, *,
                    icon: str | None = ":material/error:") -> NoReturn:  # fmt: skip
    """``message`` and ``hint`` (both already translated) as an error in ``where`` (a page's
    figure: nothing can be drawn in its place), under ``icon`` (None: none), then stop the
    script. ``message`` is shown as written, not as markdown: a core message can quote an
    uploaded file (its name, an archive entry); ``hint`` is the page's own markdown."""
    where.error(_(WHAT_TO_CHANGE).format(message=plain(message), hint=hint), icon=icon)
    st.stop()


@contextmanager
def stop_on_error(
    where: DeltaGenerator, hint: str, *, message: str | None = None,
    errors: tuple[type[Exception], ...] = (ValueError,),
) -> Iterator[None]:  # fmt: skip
    """Run the block; an exception of a type in ``errors`` stops the script with
    :func:`stop_with_error` in ``where``: its message (``ui.i18n.tr``), put into ``message`` at
    ``{error}`` when given (already translated), and ``hint``."""
    try:
        yield
    except errors as error:
        text = tr(error)
        stop_with_error(where, text if message is None else message.format(error=text), hint)


def clicked_result(
    where: DeltaGenerator, label: str, key: str, signature: object, run: Callable[[], R], *,
    spinner: str, hint: str, help: str | None = None,
) -> R | None:  # fmt: skip
    """A button ``key`` (``label``, ``help``: translated) in ``where`` that runs ``run()`` under
    ``spinner`` for the view ``signature`` (plain values); returns the result of its last click
    while the view is still ``signature``, else None. A ValueError or RuntimeError of ``run``
    is shown with ``hint`` (what to change), and the last result stays."""
    kept_key = f"_clicked.{key}"  # session state, not a widget: never in the URL
    if where.button(label, key=key, help=help):
        with st.spinner(spinner):
            try:
                st.session_state[kept_key] = (signature, run())
            except (ValueError, RuntimeError) as error:
                st.error(_(WHAT_TO_CHANGE).format(message=tr(error), hint=hint))
    kept = st.session_state.get(kept_key)
    return kept[1] if kept is not None and kept[0] == signature else None
