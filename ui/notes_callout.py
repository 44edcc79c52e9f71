"""The one "The notes say / PyTorch today does" component every page uses."""

from __future__ import annotations

import html
import importlib
import re

import streamlit as st

from core.notes import NotesCallout, NotesRef
from core.text import N_
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.code import localized
from ui.i18n import _, cite, current_language, tr
from ui.markdown import plain

# The verdict badges (core.notes.VERDICTS), marked for the catalog.
_VERDICT_LABELS = {
    "wrong": N_("wrong"),
    "out of date": N_("out of date"),
    "incomplete": N_("incomplete"),
    "differs from the app": N_("differs from the app"),
}

_VERDICT_COLOURS = {
    "wrong": "red",
    "out of date": "orange",
    "incomplete": "blue",
    "differs from the app": "violet",
}


def notes_callout(callout: NotesCallout) -> None:
    """Draw one callout: the notes' quote (Chinese, verbatim) and gloss beside today's live run.

    The container's key is ``notes_callout-<key>`` so browser tests can find it as
    ``.st-key-notes_callout-<key>``. Texts go through ``st.text``/``st.code`` (no markdown) and
    the quote through :func:`notes_quote` (escaped HTML), so a ``*`` or ``_`` shows as written.
    """
    with st.container(border=True, key=f"notes_callout-{callout.key}"):
        head, badge = st.columns([5, 1], vertical_alignment="center")
        head.markdown(f"**{plain(_(callout.title))}**")
        badge.badge(
            _(_VERDICT_LABELS.get(callout.verdict, callout.verdict)),
            color=_VERDICT_COLOURS.get(callout.verdict, "gray"),
        )
        notes_col, today_col = st.columns(2)
        with notes_col:
            st.markdown(_("**The notes say** ({ref})").format(ref=cite(callout.ref)))
            notes_quote(callout.quote_display, callout.gloss_en)
        with today_col:
            st.markdown(f"**{today_heading(callout)}**")
            today = _(callout.today)
            # the values are translated too: a pool name ("small") is a word, not a number
            values = {name: tr(value) for name, value in callout.today_args}
            st.text(today.format(**values) if values else today)
            if callout.see_also:  # the app's own markdown, with its link
                st.caption(_(callout.see_also))
            # Wrapped, not scrolled: a scroll region without keyboard focus fails axe-core.
            st.code(localized(callout.run.code), language="python", wrap_lines=True)
            # Wrapped: an error line is the lesson and must not hide behind a scrollbar.
            st.code(
                callout.run.transcript or _("(prints nothing)"), language="text", wrap_lines=True
            )


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def notes_quote(quote_zh: str, gloss_en: str) -> None:
    """The notes' own Chinese words, then (for an English visitor) ``gloss_en`` beside them.

    The quote is marked ``lang="zh-CN"`` (``lang="en"`` when it has no Chinese, where the notes
    copied English docs) so a screen reader reads it with the right rules on either page (WCAG
    3.1.2, Language of Parts); the gloss is English, the page's language wherever it is shown.
    The text is the app's own (from the notes) but is escaped all the same, so a ``<`` in a
    quote shows as written; line breaks are kept as ``st.text`` kept them.
    """
    # The notes sometimes copy English docs word for word: such a quote is English, not Chinese.
    lang = "zh-CN" if _CJK.search(quote_zh) else "en"
    st.html(
        f'<blockquote lang="{lang}" class="notes-quote" style="white-space: pre-wrap; margin: 0; '
        f'padding-left: 0.75rem; border-left: 3px solid rgba(128, 128, 128, 0.5)">'
        f"{html.escape(quote_zh)}</blockquote>"
    )
    if current_language() == "en":  # a Chinese reader reads the quote itself
        st.text(f"In English: {gloss_en}")


def today_heading(callout: NotesCallout) -> str:
    """The heading over the live side of a callout: who did what the box reports."""
    if callout.evidence_by:
        return _("Today, {who} does").format(who=tr(callout.evidence_by))
    return _("PyTorch {version} does").format(version=callout.run.torch_version)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")  # 8 modules have callouts
def callouts_of(module_name: str) -> dict[str, NotesCallout]:
    """``module_name``'s ``notes_callouts()`` by key, run live once per process and shared by
    every session (NotesCallout is frozen, so sharing is safe)."""
    module = importlib.import_module(module_name)
    return {callout.key: callout for callout in module.notes_callouts()}


def notes_citation(
    ref: str | NotesRef, *, verbatim: bool = True, detail: str = N_("the notes' own text")
) -> None:
    """A one-line caption under an example: where in the notes it comes from (``detail`` says
    what is taken verbatim), or that it is a variation of the notes' example (never claimed as
    theirs)."""
    if verbatim:
        st.caption(_("From the {ref}, verbatim: {detail}.").format(ref=cite(ref), detail=_(detail)))
    else:
        st.caption(
            _("A variation of the {ref} example, not the notes' own inputs.").format(ref=cite(ref))
        )
