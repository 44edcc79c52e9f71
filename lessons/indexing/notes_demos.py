"""The notes' indexing pitfalls, run live: one tab per demo (issue 11, section 5).

:func:`render_notes_demos` draws, for each demo of :mod:`lessons.indexing.pitfalls`, where it
comes from in the notes, the snippet, what it printed or raised just now, and the verdict
read from that run; the "notes say / PyTorch today does" callouts sit in the tab they belong
to. Widget keys start with ``indexing.notes_demos.``; every value widget and the demo tabs are
bound to the URL (:data:`ui.links.BOUND`), so a link can open one demo with its choices.
"""

from __future__ import annotations

import re

import streamlit as st

from core.notes import NotesCallout
from core.text import N_
from lessons.indexing import pitfalls as ip
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.code import localized
from ui.i18n import _, cite, current_language, tr, translator
from ui.links import BOUND
from ui.notes_callout import callouts_of, notes_callout, notes_citation

K = "indexing.notes_demos"

#: zero_dim_case option -> (tmp_a values, label)
_ZERO_DIM_CASES: dict[str, tuple[tuple[int, ...], str]] = {
    "notes": (ip.NOTES_ZERO_DIM_TMP_A, N_("tmp_a[0] occurs once (the notes' case)")),
    "two_matches": (ip.TWO_MATCHES_TMP_A, N_("tmp_a[0] occurs twice")),
}

#: new_zeros row -> its label, one catalog message each (a link carries the label).
_ROW_LABELS = {0: N_("row 0"), 1: N_("row 1"), 2: N_("row 2 (the notes' example)")}

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:])")


def _plain(text: str) -> str:
    """Escape markdown so a verdict (which quotes torch's messages) shows as written."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text)


def _shape_label(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def _args(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values)


# ---------------------------------------------------------------------------------- caching
# Each demo runs torch once per distinct argument per process; the records are frozen.


@st.cache_resource(show_spinner=False)
def _item_demo() -> ip.PitfallDemo:
    return ip.item_on_empty_demo()


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")
def _comparison_demo(one_value: int) -> ip.PitfallDemo:
    return ip.chained_comparison_demo(one_value)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")
def _zero_dim_demo(tmp_a: tuple[int, ...]) -> ip.PitfallDemo:
    return ip.zero_dim_index_demo(tmp_a)


@st.cache_resource(show_spinner=False)
def _view_order_demo() -> ip.PitfallDemo:
    return ip.view_order_demo()


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S, kind="resource")  # shapes are typed
def _view_reshape_demo(
    shape: tuple[int, ...], perm: tuple[int, ...], new_shape: tuple[int, ...]
) -> ip.ViewReshapeDemo:
    return ip.view_or_reshape(shape, perm, new_shape)


@bounded_cache(max_entries=8, ttl=SHARED_TTL_S, kind="resource")
def _inplace_demo(variant: str) -> ip.PitfallDemo:
    return ip.inplace_autograd_demo(variant)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S, kind="resource")
def _new_zeros_demo(row: int) -> ip.PitfallDemo:
    return ip.new_zeros_demo(row)


# ---------------------------------------------------------------------------------- drawing


def _verdict_text(verdict: str, parts: tuple[str, ...] = ()) -> str:
    """A demo's verdict in this session's language, sentence by sentence when it has parts."""
    if not parts:
        return tr(verdict)
    return ("" if current_language() == "zh" else " ").join(tr(p) for p in parts)


def _draw_run(code: str, transcript: str, verdict: str, matches_notes: bool | None) -> None:
    code_col, out_col = st.columns(2)
    with code_col:
        st.markdown(_("**Snippet** (runs as-is)"))
        st.code(localized(code), language="python")
    with out_col:
        st.markdown(_("**What it printed just now**"))
        st.code(transcript or _("(prints nothing)"), language="text", wrap_lines=True)
    if matches_notes is True:
        st.success(_plain(verdict), icon=":material/check_circle:")
    else:
        st.info(_plain(verdict), icon=":material/science:")


def _draw_demo(demo: ip.PitfallDemo) -> None:
    if demo.verbatim and demo.matches_notes is False:
        # the notes' own inputs, but today's torch prints something else: not "verbatim"
        st.caption(
            _(
                "From the {ref}: the notes' own inputs; today's output differs from "
                "what the notes print (see the verdict)."
            ).format(ref=cite(demo.ref))
        )
    else:
        notes_citation(demo.ref, verbatim=demo.verbatim)
    verdict = _verdict_text(demo.verdict, demo.verdict_parts)
    _draw_run(demo.code, demo.transcript, verdict, demo.matches_notes)


def _valid_choice(key: str, options: list) -> None:
    """Forget a kept value that the current options no longer offer (the first one shows)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def _tab_item(callouts: dict[str, NotesCallout]) -> None:
    st.caption(_("nonzero on a mask with no True gives shape (0, 1); .item() needs one element."))
    _draw_demo(_item_demo())
    notes_callout(callouts["item_empty_error"])


def _tab_comparison() -> None:
    st.caption(_("Python chains comparisons with `and`, and `&` binds tighter than `>`."))
    one_value = st.selectbox(
        _("One-element tensor `one`"),
        ip.ONE_VALUES,
        key=f"{K}.one_value",
        format_func=lambda v: f"one = torch.tensor([{v}])",
        help=_("On a one-element tensor the wrong forms do not raise: are they right?"),
        **BOUND,
    )
    _draw_demo(_comparison_demo(int(one_value)))


def _tab_zero_dim(callouts: dict[str, NotesCallout]) -> None:
    st.caption(_("tmp_a[0] is 0-d; a boolean mask must have exactly the shape it indexes."))
    t = translator()
    case = st.radio(
        "tmp_a",
        list(_ZERO_DIM_CASES),
        key=f"{K}.zero_dim_case",
        format_func=lambda c: t(_ZERO_DIM_CASES[c][1]),
        horizontal=True,
        **BOUND,
    )
    _draw_demo(_zero_dim_demo(_ZERO_DIM_CASES[case][0]))
    notes_callout(callouts["zero_dim_mask_recipe"])


def _tab_view_order() -> None:
    st.caption(_("view(-1) reads a contiguous tensor row by row; a transposed one needs a copy."))
    _draw_demo(_view_order_demo())


def _tab_view_reshape(callouts: dict[str, NotesCallout]) -> None:
    st.caption(
        _(
            "view never copies: it works when the new shape fits the strides. reshape is a view "
            "when it can be and a copy otherwise (storage pointers compared below)."
        )
    )
    c1, c2, c3 = st.columns(3)
    shape = c1.selectbox(
        "x = arange(n).reshape(...)",
        ip.VIEW_SHAPES,
        key=f"{K}.view_shape",
        format_func=_shape_label,
        **BOUND,
    )
    perms = ip.permutations_of(len(shape))
    _valid_choice(f"{K}.view_perm", perms)
    perm = c2.selectbox(
        _("then .permute(...)"),
        perms,
        key=f"{K}.view_perm",
        format_func=lambda p: f"permute({_args(p)})",
        **BOUND,
    )
    permuted = tuple(shape[p] for p in perm)
    targets = ip.reshape_targets(permuted)
    _valid_choice(f"{K}.view_target", targets)
    target = c3.selectbox(
        _("new shape for the {shape} tensor").format(shape=_shape_label(permuted)),
        targets,
        key=f"{K}.view_target",
        format_func=lambda t: f"view / reshape({_args(t)})",
        **BOUND,
    )
    try:
        demo = _view_reshape_demo(tuple(shape), tuple(perm), tuple(target))
    except ValueError as err:
        st.error(_plain(tr(err)), icon=":material/error:")
        return
    verbatim_case = demo.shape == (2, 3, 4) and demo.perm == (1, 0, 2)
    notes_citation(demo.ref, verbatim=False)
    m1, m2, m3 = st.columns(3)
    m1.metric("x.is_contiguous()", str(demo.is_contiguous))
    m2.metric(f"view({_args(target)})", _("view") if demo.view_ok else _("refused"))
    m3.metric(
        f"reshape({_args(target)})",
        _("view (same storage)") if demo.reshape_shares_storage else _("copy"),
    )
    _draw_run(demo.code, demo.run.transcript, tr(demo.verdict), None)
    if verbatim_case:
        st.caption(_("This is the notes' case: torch.rand(2, 3, 4) with dims 0 and 1 swapped."))
    notes_callout(callouts["view_needs_contiguous"])
    notes_callout(callouts["view_example_never_raises"])


def _tab_inplace() -> None:
    st.caption(
        _(
            "Autograd counts in-place changes (tensor._version) and refuses a gradient that "
            "needs an old value. The notes (000:76) suspect += together with slicing; a plain "
            "+= is enough when the op kept its output."
        )
    )
    t = translator()
    variant = st.selectbox(
        _("Forward op, then the change"),
        list(ip.INPLACE_VARIANTS),
        key=f"{K}.inplace_variant",
        format_func=lambda v: t(ip.INPLACE_VARIANTS[v][2]),
        **BOUND,
    )
    demo = _inplace_demo(variant)
    st.caption(
        _(
            "The error the {ref} quote, which the {ref_000} blame on += with slicing; "
            "reproduced with a small example of our own."
        ).format(ref=cite(ip.INPLACE_REF), ref_000=cite(ip.INPLACE_REF_000))
    )
    _draw_run(demo.code, demo.transcript, _verdict_text(demo.verdict, demo.verdict_parts), None)


def _tab_new_zeros() -> None:
    st.caption(_("Copy values into a new tensor instead of writing through a view of the old one."))
    t = translator()
    row = st.selectbox(
        _("Row to copy"),
        ip.NEW_ZEROS_ROWS,
        key=f"{K}.new_zeros_row",
        format_func=lambda r: t(_ROW_LABELS.get(r, str(r))),
        **BOUND,
    )
    _draw_demo(_new_zeros_demo(int(row)))


def render_notes_demos() -> None:
    """Draw the notes' indexing pitfalls as live demos, one tab each, with their callouts."""
    st.subheader(_("Pitfalls from the notes, run live"))
    st.caption(
        _(
            "Each snippet runs now in this PyTorch; the verdict is read from what it printed or "
            "raised. Where the notes are wrong or out of date, a box says so."
        )
    )
    callouts = callouts_of("lessons.indexing.pitfalls")
    tabs = st.tabs(
        [
            _(".item() on empty"),
            "0 < a < 2",
            _("0-d masks"),
            _("view(-1) order"),
            _("view vs reshape"),
            _("in-place + backward"),
            "new_zeros",
        ],
        key=f"{K}.tab",
        bind="query-params",  # a link can open one demo; every tab's content is still drawn
    )
    with tabs[0]:
        _tab_item(callouts)
    with tabs[1]:
        _tab_comparison()
    with tabs[2]:
        _tab_zero_dim(callouts)
    with tabs[3]:
        _tab_view_order()
    with tabs[4]:
        _tab_view_reshape(callouts)
    with tabs[5]:
        _tab_inplace()
    with tabs[6]:
        _tab_new_zeros()
