"""Error doctor: paste a PyTorch error, get the notes' entry, its cause and its fix, run live.

The pasted text is matched (lessons/errors/matching.py) and shown back only as code text: never
run, never rendered as markdown or HTML. What runs is the catalogue's own snippets, once per
process (lessons/errors/runs.py), with a time limit, and in a subprocess for the entries that
need worker processes or could hang.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import plotly.graph_objects as go
import streamlit as st
import torch

from core.text import N_
from lessons.errors import figures, questions
from lessons.errors.catalogue import entries, entry_by_key
from lessons.errors.entry import DOCUMENTED, GPU, KIND_TITLES, RUN_TITLES, SUBPROCESS, Entry
from lessons.errors.matching import MAX_QUERY_CHARS, Match, printable
from lessons.errors.runs import Capture, capture
from lessons.errors.view import ENTRY, QUERY, TOP_KEY, DoctorView, catalogue_by_kind, doctor_view
from ui.charts import shared_figure, show_chart
from ui.code import localized
from ui.i18n import _, cite, translator
from ui.lesson import lazy_expander, lesson_layout
from ui.links import BOUND
from ui.markdown import plain
from ui.notes_callout import notes_quote
from ui.predict import predict_panel

PAGE = "lessons/errors/page.py"
#: What the text area holds on arrival: a real traceback, so the page makes its point at once.
EXAMPLE = (
    "Traceback (most recent call last):\n"
    '  File "/home/student/train.py", line 41, in <module>\n'
    "    loss.backward()\n"
    '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 648, in backward\n'
    "    torch.autograd.backward(\n"
    "RuntimeError: Trying to backward through the graph a second time (or directly access "
    "saved tensors after they have already been freed)."
)

layout = lesson_layout(
    N_("Error doctor"),
    N_(
        "the entry at the top: what the notes said about this error, what PyTorch prints today "
        "for the same mistake, and the fix, both run just now."
    ),
    figure_share=0.78,  # the entry's two sides need the width; the side column holds one menu
)


def _forget_chosen_entry() -> None:
    """A new paste asks for its best match: the entry picked by name would hide it."""
    st.session_state[ENTRY] = None


# The paste box heads the figure column, so on a phone (where the columns stack, figure first)
# it is the first thing under the title, not below the whole entry.
with layout.figure:
    query = st.text_area(
        _("Paste an error message or a whole traceback"), value=EXAMPLE, height=150,
        max_chars=MAX_QUERY_CHARS, key=QUERY, on_change=_forget_chosen_entry, **BOUND,
        help=_("Only compared with the catalogue: never run, never shown as formatted text. "
               "Numbers, shapes, paths and names may differ from the notes'; they do not count."),
    )  # fmt: skip
with layout.controls:
    # The entries' keys are the options: a link carries an option as it is shown, and a key
    # stays the same in both languages and when a title is reworded.
    chosen = st.selectbox(_("Or open an entry by its name"),
                          [entry.key for entry in entries()], index=None,
                          placeholder=_("the best match"), key=ENTRY, **BOUND)  # fmt: skip
    st.caption(_("The pasted text is only compared with the messages of the {n} entries: "
                 "numbers, shapes, paths and names do not count. It is never run.")
               .format(n=len(entries())))  # fmt: skip


def _text(text: str) -> str:
    """An entry's prose, translated, for a markdown element: shown as written, so code in it
    (``__getitem__``, ``model(*inputs, **kwargs)``) is not taken for bold or italics."""
    return plain(_(text))


def _run_label(entry: Entry) -> str:
    return _(RUN_TITLES[entry.run])


def _captured(entry: Entry, which: str) -> Capture:
    """The entry's snippet run once per process; the first visitor waits under a spinner."""
    if entry.run == SUBPROCESS:
        spinner = _("Running the snippet in a separate process (at most a minute)…")
    else:
        spinner = _("Running the snippet…")
    with st.spinner(spinner):
        return capture(entry.key, which)  # type: ignore[arg-type]


def _notes_side(entry: Entry) -> None:
    st.markdown(_("**The notes say** ({where})").format(where=cite(entry.where)))
    quote = "：".join(part for part in (entry.notes_message, entry.notes_cause) if part)
    notes_quote(quote.replace("\\n", "\n"), entry.notes_gloss)


def _today_side(entry: Entry) -> None:
    if entry.run == DOCUMENTED or (entry.run == GPU and not torch.cuda.is_available()):
        st.markdown(_("**What it needs**"))
        st.markdown(_text(entry.needs))
        if entry.today:
            st.caption(_("What such a machine prints:"))
            st.code(printable(entry.today), language="text", wrap_lines=True)
        return
    result = _captured(entry, "broken")
    with st.container(key=questions.TODAY_PART):
        _today_message(result, entry)


def _today_message(result: Capture, entry: Entry) -> None:
    st.markdown(_("**PyTorch {version} prints today**").format(version=result.torch_version))
    if result.status == "raised":
        st.code(printable(result.message), language="text", wrap_lines=True)
        if result.line:
            # The line itself, not only its number: line numbers on the code below made it a
            # scroll region that axe-core flags (no keyboard focus).
            code = entry.broken.splitlines()[result.line - 1].strip()
            st.caption(_("Raised by line {line} of the mistake below, `{code}` ({how}).").format(
                line=result.line, code=code.replace("`", "'"), how=_run_label(entry)))  # fmt: skip
    elif result.status == "ok":
        st.warning(_("The mistake ran without an error on torch {version}: the entry's message "
                     "may be out of date.").format(version=result.torch_version),
                   icon=":material/help:")  # fmt: skip
    elif result.status == "skipped":
        st.info(_("Not run here: {why}.").format(why=_(result.message)), icon=":material/info:")
    else:
        st.warning(_("The snippet could not be run here: {why}").format(why=plain(result.message)),
                   icon=":material/timer_off:")  # fmt: skip


def _fix_run(entry: Entry) -> None:
    result = _captured(entry, "fixed")
    if result.status == "ok":
        st.success(_("Run just now: it runs. It printed:"), icon=":material/check_circle:")
        st.code(printable(result.output), language="text", wrap_lines=True)
    else:
        st.warning(_("The fixed snippet did not finish here: {why}").format(
            why=plain(result.message or result.status)), icon=":material/warning:")  # fmt: skip


def show_entry(entry: Entry) -> None:
    """One entry: the notes beside today's message, the cause, the fix and both snippets."""
    st.header(_text(entry.title), anchor=False)
    st.caption(" · ".join((_(KIND_TITLES[entry.kind]), cite(entry.where), _run_label(entry))))
    notes_col, today_col = st.columns(2)
    with notes_col:
        _notes_side(entry)
    with today_col:
        _today_side(entry)
    st.markdown(_("**Cause.** {cause}").format(cause=_text(entry.cause)))
    if entry.notes_differ:
        st.warning(_("**Where the notes are wrong or dated.** {what}").format(
            what=_text(entry.notes_differ)), icon=":material/report:")  # fmt: skip
    st.markdown(_("**Fix.** {fix}").format(fix=_text(entry.fix)))
    if entry.lesson:
        path, label = entry.lesson
        slug, _sep, query = path.partition("?")
        st.page_link(f"lessons/{slug}/page.py", label=_(label), icon=":material/school:",
                     query_params=dict(parse_qsl(query)))  # fmt: skip
    if entry.run == DOCUMENTED:
        return
    # Both programs in full, side by side: "raised by line N" above points into the first.
    mistake_col, fix_col = st.columns(2)
    with mistake_col:
        st.markdown(_("**The mistake** (a program that runs as-is)"))
        st.code(localized(entry.broken), language="python", wrap_lines=True)
    with fix_col:
        st.markdown(_("**The fix** (a program that runs as-is)"))
        st.code(localized(entry.fixed), language="python", wrap_lines=True)
        if entry.run != GPU or torch.cuda.is_available():
            _fix_run(entry)


def show_search(view: DoctorView) -> None:
    """The best match in :data:`TOP_KEY`, or why there is none; the line it was matched on."""
    search = view.search
    if search.refused or view.top is None:
        st.info(_("No entry matches this text. Paste the last line of the traceback (the one "
                  "that names the error), or empty the box to browse the catalogue."),
                icon=":material/search_off:")  # fmt: skip
        return
    with st.container(key=TOP_KEY, border=True):
        _match_chart(search.matches)
        st.caption(_("Matched on the line:"))
        st.code(printable(search.line)[:500], language="text", wrap_lines=True)  # text, never run
        show_entry(view.top)


# Both charts are built once per process and language and shared: a class on one link draws
# the same chart fifty times.
@shared_figure(max_entries=32)
def match_chart(matches: tuple[Match, ...]) -> go.Figure:
    """The matcher's scores for ``matches`` (lessons/errors/figures.py)."""
    titles = {entry.key: _(entry.title) for entry in entries()}
    return figures.match_figure(matches, titles, translator())


@shared_figure(max_entries=2)
def catalogue_chart() -> go.Figure:
    """The catalogue's entries per kind and run mode."""
    return figures.catalogue_figure(figures.catalogue_counts(), translator())


def _match_chart(matches: tuple[Match, ...]) -> None:
    best = matches[0]
    alt = _("Match scores out of 100: {title} {score:.0f}, the best of {n} candidates.").format(
        title=_(entry_by_key(best.key).title), score=best.score, n=len(matches))  # fmt: skip
    show_chart(match_chart(matches), alt=alt)


def show_others(others: tuple[Match, ...]) -> None:
    """The other candidates, each drawn only when opened."""
    if not others:
        return
    st.subheader(_("Other candidates"), anchor=False)
    for match in others:
        entry = entry_by_key(match.key)
        box = lazy_expander(N_("{title} ({score:.0f} of 100)"), key=f"errors.other.{match.key}",
                            title=_(entry.title), score=match.score)  # fmt: skip
        if box is not None:
            with box:
                show_entry(entry)


def show_catalogue() -> None:
    """Every entry grouped by kind, each a link that opens it."""
    st.header(_("The catalogue"), anchor=False)
    st.markdown(_("{n} errors from the notes, grouped by kind. Open one, or paste a message "
                  "above.").format(n=len(entries())))  # fmt: skip
    alt = _("Entries per kind, coloured by how each is reproduced: {n} in all.").format(
        n=len(entries()))  # fmt: skip
    show_chart(catalogue_chart(), alt=alt)
    for kind, kind_entries in catalogue_by_kind():
        st.subheader(_(KIND_TITLES[kind]), anchor=False)
        for entry in kind_entries:
            label = f"{_(entry.title)} · {cite(entry.where)} · {_run_label(entry)}"
            st.page_link(PAGE, label=label, query_params={ENTRY: entry.key})


view = doctor_view(query or "", chosen or None)
with layout.figure:
    if view.mode == "search":
        show_search(view)
        show_others(view.others)
    elif view.mode == "entry":
        with st.container(key=TOP_KEY, border=True):
            show_entry(view.top)
    else:
        show_catalogue()
with layout.details:
    if view.mode != "catalogue":
        box = lazy_expander(N_("The whole catalogue ({n} errors)"), key="errors.catalogue",
                            n=len(entries()))  # fmt: skip
        if box is not None:
            with box:
                show_catalogue()
    st.caption(_("Every entry's snippets are the app's own; the notes are cited as {example}.")
               .format(example=cite("000:76")))  # fmt: skip

predict_panel(layout.predict, "errors", lambda: questions.questions(view.top))
