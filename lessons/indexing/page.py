"""Indexing explainer: gather, scatter_ and x[...] with every output cell wired to its source."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.notes import LiveRun
from core.text import N_
from lessons.indexing import tracing as ix
from lessons.indexing.figures import ROW_UNITS, figure_rows, is_touch_user_agent, trace_figure
from lessons.indexing.notes_demos import render_notes_demos
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.i18n import _, cite, tr, translator
from ui.lesson import lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.markdown import plain
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.settings import current_settings
from ui.tables import show_table

K = "indexing"
OPS = ["gather", "scatter"]
DIMS = [-3, -2, -1, 0, 1, 2]
REDUCES = ["none", "scatter_add", "add", "multiply", "sum", "prod", "mean", "amax", "amin"]
PRESET_KEYS = [p.key for p in ix.PRESETS]
#: The size hint under every tensor editor, from the limits core enforces.
SIZE_LIMITS = ", ".join(
    f"{n}-D up to {'x'.join(map(str, shape))}" for n, shape in sorted(ix.PAGE_LIMITS.items())
)


def _size_limits() -> str:
    """SIZE_LIMITS in this session's language."""
    return _(", ").join(
        _("{n}-D up to {shape}").format(n=n, shape="x".join(map(str, shape)))
        for n, shape in sorted(ix.PAGE_LIMITS.items())
    )


DEFAULT_PRESET = "gather"
#: The x[...] "Example" box says this when the typed expression is none of the examples.
CUSTOM_EXAMPLE = N_("your own expression (typed)")
#: Longest tensor text a field takes (a 6x10 of 8-digit floats fits) and a link may carry.
MAX_TENSOR_CHARS = 1000
#: Longest x[...] expression (lessons.indexing.tracing.parse_index_expression refuses longer ones).
MAX_EXPR_CHARS = 400


# ---------------------------------------------------------------------------------- notes
@bounded_cache(max_entries=32, ttl=SHARED_TTL_S, kind="resource")  # 11 presets today
def _notes_code_run(key: str) -> LiveRun:
    """What the notes' own code of a preset prints today, run once per process."""
    return ix.run_notes_code(key)


# ---------------------------------------------------------------------------------- shared
#: A gather/scatter case as the page ran it: (op, first, index, src texts, dim, reduce,
#: include_self, device). Small and hashable: the key of the cached run and its pictures.
Case = tuple[str, str, str, str, int, str | None, bool, str]


@bounded_cache(max_entries=64, ttl=SHARED_TTL_S, kind="resource")
def _case_run(case: Case) -> tuple[ix.Trace | None, ix.IndexingError | None, str]:
    """ix.run_case once per case and process: the page and its shared pictures read the same
    trace (on a GPU, which duplicate write wins a collision can change from run to run)."""
    return ix.run_case(*case)


def _highlight(trace: ix.Trace, pos: ix.Pos) -> dict[str, tuple[ix.Pos, ...]]:
    """The cells to frame: out[pos] and the input cells it came from."""
    return {**ix.explain_element(trace, pos).sources, "out": (pos,)}


@shared_figure(max_entries=256)  # a few pictures per case times the out cells clicked
def _case_figure(case: Case, name: str, pos: ix.Pos) -> go.Figure:
    """Picture ``name`` of a gather/scatter case with out[pos] explained, built once per
    process: at 20-80 ms each, rebuilding it for every student of a class held the GIL."""
    trace = _case_run(case)[0]
    assert trace is not None, "only a case that ran has pictures"
    return trace_figure(trace, name, _highlight(trace, pos).get(name, ()), gettext=translator())


@shared_figure(max_entries=128)  # x and out times the out cells clicked, for typed inputs
def _index_figure(x_text: str, expr: str, name: str, pos: ix.Pos) -> go.Figure:
    """Picture ``name`` of x[expr] with out[pos] explained, built once per process (keyed on
    the typed texts; the trace is deterministic, so it matches the page's own run)."""
    trace = ix.run_index_case(x_text, expr)[0]
    assert trace is not None, "only an expression that ran has pictures"
    return trace_figure(trace, name, _highlight(trace, pos).get(name, ()), gettext=translator())


def _preset_labeller() -> Callable[[str], str]:
    """The preset menu's format_func: each label is one catalog message (links translate it)."""
    t = translator()
    return lambda key: t(ix.PRESETS_BY_KEY[key].menu_label)


def preset_citation(p: ix.Preset) -> None:
    """Where the preset comes from: verbatim from the notes, or a labelled variation."""
    if not p.verbatim:
        notes_citation(p.ref, verbatim=False)
    elif p.notes_error:
        st.caption(
            _(
                "From the {ref}, verbatim: the same call. The notes print an error message "
                "that torch no longer uses; both are shown below."
            ).format(ref=cite(p.ref))
        )
    elif not p.printed:
        st.caption(
            _(
                "From the {ref}, verbatim: same inputs, dim and dtype. The notes print no "
                "output for it, so the page checks the result against what their code gives."
            ).format(ref=cite(p.ref))
        )
    else:
        notes_citation(p.ref, detail=N_("same inputs, dim, dtype and printed output"))


def comparison_message(p: ix.Preset, trace: ix.Trace) -> None:
    """Compare a verbatim preset's live result with the notes (variations claim nothing)."""
    if not p.verbatim:
        return
    cmp = ix.compare_with_notes(p, trace)
    if cmp is None:
        return
    shown = ix.tensor_literal(trace.result)
    precision = (
        _("to the printed {decimals} decimals (atol {atol:g})").format(
            decimals=p.decimals, atol=cmp.atol
        )
        if p.decimals is not None
        else _("exactly")
    )
    dtype = str(trace.result.dtype).replace("torch.", "")
    if cmp.matches and p.printed:
        st.success(
            _(
                "Matches the documented output ({ref}), compared {precision}, dtype {dtype}: "
                "{shown}"
            ).format(ref=cite(p.ref), precision=precision, dtype=dtype, shown=shown),
            icon=":material/check:",
        )
    elif cmp.matches:
        st.success(
            _(
                "Matches what the notes' code gives ({ref} prints no output), compared "
                "{precision}, dtype {dtype}: {shown}"
            ).format(ref=cite(p.ref), precision=precision, dtype=dtype, shown=shown),
            icon=":material/check:",
        )
    elif cmp.only_at_collisions:
        cells = ", ".join(f"out{ix.format_pos(q)}" for q in cmp.mismatches)
        st.warning(
            _(
                "Differs from the notes' output only at collided cell(s) {cells}: which duplicate "
                "write wins is unspecified, so this run may keep another one. Result: {shown}"
            ).format(cells=cells, shown=shown),
            icon=":material/warning:",
        )
    else:
        expected = (
            _("dtype {dtype} instead of {expected}").format(
                dtype=dtype, expected=str(p.expected_dtype).replace("torch.", "")
            )
            if not cmp.dtype_ok
            else ", ".join(f"out{ix.format_pos(q)}" for q in cmp.mismatches)
        )
        st.warning(
            _("Differs from the notes' output ({ref}): {expected}. Result: {shown}").format(
                ref=cite(p.ref), expected=expected, shown=shown
            ),
            icon=":material/warning:",
        )


def notes_code_box(p: ix.Preset) -> None:
    """The notes' own code for the preset, runnable as-is, with what it prints today."""
    label = _("The notes' code ({ref}), runnable as-is").format(ref=cite(p.ref))
    with st.expander(label, icon=":material/book:"):
        st.code(p.notes_code, language="python")
        if p.notes_code_changes:
            st.caption(
                _("Changed so that it runs: {changes}").format(changes=tr(p.notes_code_changes))
            )
        run = _notes_code_run(p.key)
        st.caption(_("What it prints with torch {version}:").format(version=run.torch_version))
        st.code(run.transcript or _("(prints nothing)"), language="text")


def _touch_device() -> bool:
    """A phone or tablet browser (see lessons.indexing.figures.is_touch_user_agent)."""
    try:
        return is_touch_user_agent(st.context.headers.get("User-Agent"))
    except Exception:  # no browser (AppTest, a bare script run): treat as a desktop
        return False


# ---------------------------------------------------------------------------------- state
def _bump(name: str) -> None:
    """New version of a tensor's grid editors, so they show the current text afresh."""
    versions = st.session_state.setdefault(f"{K}._versions", {})
    versions[name] = versions.get(name, 0) + 1


def _load_preset() -> None:
    p = ix.PRESETS_BY_KEY[st.session_state[f"{K}.preset"]]
    st.session_state[f"{K}.op"] = p.op
    st.session_state[f"{K}.first"] = p.first
    st.session_state[f"{K}.index"] = p.index
    st.session_state[f"{K}.src"] = p.src
    st.session_state[f"{K}.dim"] = p.dim
    st.session_state[f"{K}.reduce"] = p.reduce or "none"
    st.session_state[f"{K}.include_self"] = p.include_self
    for name in ("first", "index", "src"):
        _bump(name)


def _load_random(seed: int) -> None:
    clicks = st.session_state.get(f"{K}._random_clicks", 0) + 1
    st.session_state[f"{K}._random_clicks"] = clicks
    texts = ix.random_case(
        st.session_state[f"{K}.op"], int(st.session_state[f"{K}.random_ndim"]), seed + clicks
    )
    for name in ("first", "index", "src"):
        st.session_state[f"{K}.{name}"] = texts[name]
        _bump(name)
    st.session_state[f"{K}.dim"] = int(texts["dim"])
    st.session_state[f"{K}.reduce"] = "none"


def _load_index_preset() -> None:
    label = st.session_state[f"{K}.index_preset"]
    if label in ix.INDEX_PRESETS:  # picking "your own expression" keeps the typed text
        st.session_state[f"{K}.expr"] = ix.INDEX_PRESETS[label]


def _example_follows_expression(expr: str) -> None:
    """Point the "Example" box at the example the typed expression ``expr`` is, or at "your own".

    Runs before the box is drawn: the box must never name an example that is not the
    expression shown (it kept saying "boolean mask" after another expression was typed). So
    the box is a view of the expression and not bound to the URL: the link carries the
    expression, and a link naming an example beside another expression cannot mismatch them.
    """
    typed = " ".join(str(expr).split())
    match = next(
        (label for label, expr in ix.INDEX_PRESETS.items() if " ".join(expr.split()) == typed),
        CUSTOM_EXAMPLE,
    )
    st.session_state[f"{K}.index_preset"] = match


# ---------------------------------------------------------------------------------- links
def _parses(parse: Callable[[str], object], limit: int) -> Callable[[str], bool]:
    """Whether a link's text for a field is usable: at most ``limit`` characters and read by
    ``parse`` (a core parser; it raises ValueError). Text that parses but fails in torch (an
    out-of-range index) is kept: showing that error is a lesson."""

    def is_usable(text: str) -> bool:
        if len(text) > limit:
            return False
        try:
            parse(text)
        except ValueError:
            return False
        return True

    return is_usable


#: What a link's text must be for each text field (anything else opens the field at its default).
LINK_CHECKS: dict[str, Callable[[str], bool]] = {
    "first": _parses(lambda t: ix.parse_tensor(t, "input"), MAX_TENSOR_CHARS),
    # values, not kind="index": a float index parses and the page explains why torch needs int64
    "index": _parses(lambda t: ix.parse_tensor(t, "index"), MAX_TENSOR_CHARS),
    "src": _parses(ix.parse_src, MAX_TENSOR_CHARS),
    "x": _parses(lambda t: ix.parse_tensor(t, "x"), MAX_TENSOR_CHARS),
    "expr": _parses(ix.parse_index_expression, MAX_EXPR_CHARS),
}


# ---------------------------------------------------------------------------------- grids
def _grid_changed(name: str, k: int, editor_key: str) -> None:
    """Apply a data_editor edit to the tensor's text (the single source of truth)."""
    edits = st.session_state.get(editor_key, {}).get("edited_rows", {})
    try:
        st.session_state[f"{K}.{name}"] = ix.apply_grid_edits(
            st.session_state[f"{K}.{name}"], name, k, edits
        )
    except ix.IndexingError:
        return
    _bump(name)


def tensor_editor(
    name: str, label: str, help_text: str, default: str, *, disabled: bool = False
) -> str:
    """A text field (nested list) plus an editable grid per 2-D slice, kept in sync; returns
    the text. The text is the single source of truth and what a link carries (``default``,
    the preset's text, leaves the URL); the grids write their edits back into it."""
    key = f"{K}.{name}"
    reject_unusable_link_value(key, LINK_CHECKS[name])
    text = st.text_input(
        _(label),
        value=default,
        key=key,
        max_chars=MAX_TENSOR_CHARS,
        help=_(help_text),
        on_change=_bump,
        args=(name,),
        disabled=disabled,
        **BOUND,
    )
    if disabled:
        return text
    try:
        cells = ix.parse_cells(text, name)
    except ix.IndexingError:
        return text
    tables = ix.cells_to_tables(cells)
    if tables is None or sum(len(t) * len(t[0]) for t in tables) > 96:
        return text
    version = st.session_state.get(f"{K}._versions", {}).get(name, 0)
    for k, table in enumerate(tables):
        editor_key = f"{K}.grid.{name}.{k}.v{version}"
        frame = pd.DataFrame(table, columns=[str(j) for j in range(len(table[0]))]).astype(str)
        if len(tables) > 1:
            st.caption(f"{label.split(' ')[0]}[{k}]")
        st.data_editor(
            frame,
            key=editor_key,
            num_rows="fixed",
            hide_index=False,
            on_change=_grid_changed,
            args=(name, k, editor_key),
        )
    return text


# ---------------------------------------------------------------------------------- helpers
def _selected_position(trace: ix.Trace, chart_key: str, cell_key: str) -> ix.Pos:
    """Clicked cell (chart selection) or the selectbox choice; the click updates the selectbox."""
    shape = tuple(trace.result.shape)
    labels = {f"out{ix.format_pos(p)}": p for p in ix.positions(shape)}
    clicked = ix.position_from_selection(st.session_state.get(chart_key), shape)
    marker = (clicked, shape)
    if clicked is not None and st.session_state.get(f"{cell_key}._last_click") != marker:
        st.session_state[cell_key] = f"out{ix.format_pos(clicked)}"
        st.session_state[f"{cell_key}._last_click"] = marker
    if st.session_state.get(cell_key) not in labels:
        st.session_state[cell_key] = next(iter(labels))
    choice = st.selectbox(
        _("Explain cell"),
        list(labels),
        key=cell_key,
        help=_("Or click a cell of the out picture: its sources get a black frame."),
        **BOUND,
    )
    return labels[choice]


def figure_grid(
    figs: dict,
    shapes: dict[str, tuple[int, ...]],
    alts: dict[str, str],
    out_key: str,
    *,
    touch: bool = False,
) -> None:
    """Draw a trace's pictures in rows of equal cell width (lessons.indexing.figures.figure_rows).

    The out picture is clickable: a click on a cell selects it (``on_select="rerun"``); on a
    touch device (``touch``) it is a plain picture and the "Explain cell" box picks the cell.
    """
    rows = figure_rows(shapes)
    for row in rows:
        used = sum(units for _, units in row)
        pad = ROW_UNITS - used if len(rows) > 1 and used < ROW_UNITS else 0
        weights = [units for _name, units in row] + ([pad] if pad else [])
        for col, (name, _units) in zip(st.columns(weights, gap="small"), row, strict=False):
            with col:
                if name == "out" and touch:
                    touch_key = f"{out_key}.touch"
                    show_chart(figs["out"], alt=alts["out"], width="stretch", key=touch_key)
                elif name == "out":
                    show_chart(
                        figs["out"],
                        alt=alts["out"],
                        width="stretch",
                        key=out_key,
                        on_select="rerun",
                        selection_mode="points",
                    )
                else:
                    show_chart(figs[name], alt=alts[name], width="stretch", key=f"{K}.fig.{name}")


def _alt_texts(trace: ix.Trace, names: list[str], pos: ix.Pos) -> dict[str, str]:
    """What each picture shows, for a reader who cannot see it (axe image-alt)."""
    alts = {
        name: _(
            "{name} tensor, shape {shape}, each cell's value printed and coloured like the cell "
            "it feeds"
        ).format(name=name, shape=tuple(trace.operands[name].shape))
        for name in names
    }
    alts["out"] = _(
        "out tensor, shape {shape}: each cell coloured like the input cell its value came "
        "from; out{pos} and its sources framed in black"
    ).format(shape=tuple(trace.result.shape), pos=ix.format_pos(pos))
    return alts


def show_error(err: ix.IndexingError, snippet: str, hint: str) -> None:
    if err.torch_error is not None and err.hint is not None:  # torch's words stay as they are
        message = _("torch refused: {text}. {hint}").format(text=err.torch_error, hint=tr(err.hint))
    else:
        message = tr(err)
    st.error(f"{plain(message)}\n\n{_(hint)}", icon=":material/error:")
    if err.torch_error:
        st.info(
            _(
                "The text after *torch refused:* is **torch's own error message**, exactly what "
                "your program would see:\n\n`{error}`"
            ).format(error=err.torch_error),
            icon=":material/school:",
        )
        if snippet:
            show_code(snippet)


def explanation_box(expl: ix.Explanation, key: str) -> None:
    with st.container(key=key):
        st.markdown(_("**The formula for this cell, with the real numbers**"))
        st.code(expl.formula, language="text", wrap_lines=True)
        st.caption(tr(expl.note))


# ---------------------------------------------------------------------------------- page
layout = lesson_layout(
    N_("Indexing explainer"),
    N_(
        "each cell of **out** takes the colour of the input cell its value came from. Click an "
        "out cell (or pick it in *Explain cell*): its sources get a black frame and its formula "
        "appears with the real numbers."
    ),
)
settings = current_settings()

# ---- controls beside the picture: the preset, the operation and the cell to explain
# Every control is bound to the URL (ui/links.py). The preset's values are the other controls'
# defaults, so a link holds the preset plus what was changed from it (?indexing.preset=...
# alone opens that preset); picking a preset writes its values into the controls.
with layout.controls:
    preset_key = st.selectbox(
        _("Preset"),
        PRESET_KEYS,
        index=PRESET_KEYS.index(DEFAULT_PRESET),
        key=f"{K}.preset",
        format_func=_preset_labeller(),
        on_change=_load_preset,
        help=_("The notes' examples, verbatim, and labelled variations of them."),
        **BOUND,
    )
    preset = ix.PRESETS_BY_KEY[preset_key]
    preset_reduce = preset.reduce or "none"
    c1, c2 = st.columns(2, gap="small")
    op = c1.selectbox(_("Operation"), OPS, index=OPS.index(preset.op), key=f"{K}.op", **BOUND)
    dim = c2.selectbox(
        "dim",
        DIMS,
        index=DIMS.index(preset.dim),
        key=f"{K}.dim",
        help=_("Out-of-range dims are refused."),
        **BOUND,
    )
    if op == "scatter":
        # only scatter has these; hidden for gather (a disabled label fails WCAG contrast)
        r1, r2 = st.columns(2, gap="small")
        reduce_choice = r1.selectbox(
            "reduce",
            REDUCES,
            index=REDUCES.index(preset_reduce),
            key=f"{K}.reduce",
            help=_(
                "none = plain scatter_; scatter_add = scatter_add_; add/multiply = the "
                "deprecated scatter_(..., reduce=); the rest = scatter_reduce_."
            ),
            **BOUND,
        )
        with r2:
            st.space("small")
            include_self = st.checkbox(
                "include_self",
                value=preset.include_self,
                key=f"{K}.include_self",
                disabled=reduce_choice in ("none", "scatter_add", "add", "multiply"),
                help=_(
                    "scatter_reduce_ modes only (sum, prod, mean, amax, amin): also combine "
                    "the value already in dest."
                ),
                **BOUND,
            )
    else:  # hidden: the value kept from scatter (or the preset's) goes on
        reduce_choice = st.session_state.get(f"{K}.reduce", preset_reduce)
        include_self = bool(st.session_state.get(f"{K}.include_self", preset.include_self))
    reduce: str | None = None if reduce_choice == "none" else reduce_choice
    st.button(
        _("Reload preset"),
        key=f"{K}.reload",
        on_click=_load_preset,
        help=_("Restore the preset's tensors, dim and reduce after editing them."),
        icon=":material/restart_alt:",
        width="stretch",
    )
    st.button(
        _("Random example"),
        key=f"{K}.random",
        on_click=_load_random,
        args=(settings.seed,),
        help=_(
            "Its number of dims is set under the tensors; drawn from the global seed "
            "({seed}) in the sidebar."
        ).format(seed=settings.seed),
        icon=":material/casino:",
        width="stretch",
    )
    cell_box = st.container()

# ---- details: the tensors and the code, x[...], the pitfalls
with layout.details:
    st.header(_("Tensors, code and pitfalls"), anchor=False)
    # on_change="rerun": only the open tab's content runs and is sent (lazy tabs), so a change
    # to the lesson's controls does not redraw two tabs of pitfalls nobody is looking at.
    tab_gs, tab_ix, tab_pit, tab_notes = st.tabs(
        [
            _("gather & scatter_"),
            _("x[...] indexing"),
            _("8 pitfalls"),
            _("More pitfalls from the notes"),
        ],
        key=f"{K}.details_tab",
        on_change="rerun",
        bind="query-params",
    )

# The tensors' fields are drawn before the case runs: a link's text reaches the page only
# through its field, so the case must read the fields. The boxes above and below them are
# filled once the case ran.
with tab_gs:
    preset_box = st.container()
    e1, e2, e3 = st.columns(3)
    with e1:
        first_text = tensor_editor(
            "first",
            "input" if op == "gather" else "dest",
            _("A nested list, {limits} (3-D shown as slices).").format(limits=_size_limits()),
            preset.first,
        )
    with e2:
        index_text = tensor_editor(
            "index", "index", N_("Whole numbers, same number of dims as the tensor."), preset.index
        )
    with e3:
        src_text = tensor_editor(
            "src",
            N_("src (scatter only)"),
            N_("A nested list shaped at least like index, or one number such as 6 or 1.23."),
            preset.src,
            disabled=op != "scatter",
        )
    st.selectbox(
        _("Dims of a random example"),
        [1, 2, 3],
        index=1,
        key=f"{K}.random_ndim",
        help=_("Used by the Random button beside the picture."),
        **BOUND,
    )
    case_box = st.container()

texts = [first_text, index_text, src_text]
preset_shown = ix.preset_is_loaded(preset, op, texts, int(dim), reduce, include_self)
case: Case = (op, *texts, int(dim), reduce, bool(include_self), settings.device)
trace, err, snippet = _case_run(case)

# ---- the picture: inputs wired to out, the clicked cell's formula under it
with layout.figure:
    if err is not None:
        show_error(
            err,
            snippet,
            N_(
                "Fix the value named above (the tensors are under the picture), pick another "
                "dim, or reload a preset: the rest of the page keeps working."
            ),
        )
    if trace is not None:
        with cell_box:
            pos = _selected_position(trace, f"{K}.out_chart", f"{K}.cell")
        expl = ix.explain_element(trace, pos)
        names = [n for n in trace.operands if not (n == "src" and trace.scalar_src)]
        shapes = {n: tuple(trace.operands[n].shape) for n in names}
        shapes["out"] = tuple(trace.result.shape)
        figs = {name: _case_figure(case, name, pos) for name in shapes}
        touch = _touch_device()
        figure_grid(figs, shapes, _alt_texts(trace, names, pos), f"{K}.out_chart", touch=touch)
        if touch:
            st.caption(_("On a touch screen, pick the cell to explain in **Explain cell**."))
        explanation_box(expl, f"{K}-formula")
        if trace.scalar_src:
            st.caption(
                _("src is the scalar {value}.").format(value=ix.format_value(trace.operands["src"]))
            )
        if trace.collisions:
            listed = "; ".join(
                f"out{ix.format_pos(d)} <- "
                + ", ".join(
                    _("scalar") if trace.scalar_src else f"src{ix.format_pos(s)}" for s in srcs
                )
                for d, srcs in trace.collisions.items()
            )
            if trace.reduce is None:
                st.warning(
                    _("**Collisions** (dashed red frames): {listed}.").format(listed=listed)
                    + " "
                    + _(ix.UNSPECIFIED_WINNER_NOTE),
                    icon=":material/warning:",
                )
            else:
                st.info(
                    _(
                        "**Collisions** (dashed red frames): {listed}. With reduce={reduce!r} "
                        "all writes are combined, so nothing is lost."
                    ).format(listed=listed, reduce=trace.reduce),
                    icon=":material/merge:",
                )


def pitfalls_tab() -> None:
    """The eight pitfalls, one at a time, run on tensors drawn from the global seed."""
    p1, p2 = st.columns([3, 1])
    t = translator()
    number = p1.selectbox(
        _("Pitfall"),
        list(ix.PITFALL_TITLES),
        key=f"{K}.pitfall",
        format_func=lambda n: t(ix.PITFALL_LABELS[n]),
        **BOUND,
    )
    n = p2.slider(_("n (size)"), 2, 6, value=4, key=f"{K}.pitfall_n", **BOUND)
    demo = ix.run_pitfall(int(number), seed=settings.seed, n=int(n))
    st.markdown(tr(demo.lesson))
    show_table(
        pd.DataFrame(
            [(tr(label), tr(text)) for label, text in demo.lines],
            columns=[_("expression"), _("what torch gave")],
        )
    )
    verdict = _("Verdict (from these tensors): {verdict}").format(verdict=tr(demo.verdict))
    if demo.holds:
        st.success(verdict, icon=":material/check:")
    else:
        st.warning(verdict, icon=":material/help:")
    st.caption(
        _("Tensors drawn from the global seed {seed}; change it in the sidebar.").format(
            seed=settings.seed
        )
    )
    if demo.ref:
        notes_citation(demo.ref, verbatim=False)
    else:
        st.caption(_("Not in the notes: the app adds this pitfall."))
    show_code(demo.snippet)
    for callout_key in ix.PITFALL_CALLOUTS.get(demo.number, ()):
        notes_callout(callouts_of("lessons.indexing.tracing")[callout_key])


with preset_box:
    if preset_shown:
        preset_citation(preset)
        if preset.note:
            st.caption(_("Preset note: {note}").format(note=tr(preset.note)))
        if trace is not None:
            comparison_message(preset, trace)

with case_box:
    if trace is not None:
        st.caption(
            _("Computed on {device} (sidebar device); the snippet runs on the CPU.").format(
                device=trace.result.device
            )
        )
        for w in trace.warnings:
            st.caption(_("torch warned: {warning}").format(warning=w))
        gm = ix.group_means_for(trace)
        if gm is not None:
            label = _("Group means: scatter_add sums / torch.unique counts")
            with st.expander(label, expanded=True):
                show_table(
                    pd.DataFrame(
                        {
                            _("group"): list(range(len(gm.sums))),
                            _("sum (scatter_add_)"): [ix.format_value(v) for v in gm.sums],
                            _("count (unique)"): gm.counts.tolist(),
                            _("mean"): [ix.format_value(v) for v in gm.means],
                            _("scatter_reduce mean"): [ix.format_value(v) for v in gm.means_reduce],
                        }
                    )
                )
                st.caption(_("Both ways agree: {agree}.").format(agree=gm.agree))
                snippet += ix.GROUP_MEANS_SNIPPET
        show_code(snippet)
    if preset_shown:
        notes_code_box(preset)
        for callout_key in ix.PRESET_CALLOUTS.get(preset.key, ()):
            notes_callout(callouts_of("lessons.indexing.tracing")[callout_key])

with tab_ix:
    st.markdown(
        _(
            "Type what goes between the brackets of `x[...]`: numbers, slices (`1:`, `::2`), "
            "`None`, `...`, integer lists and True/False masks."
        )
    )
    i1, i2 = st.columns([2, 3])
    with i1:
        x_text = tensor_editor(
            "x",
            "x",
            _("A nested list, {limits}.").format(limits=_size_limits()),
            ix.INDEX_DEFAULT_X,
        )
    with i2:
        example_box = st.container()  # above the expression, drawn once its text is known
        reject_unusable_link_value(f"{K}.expr", LINK_CHECKS["expr"])
        expr = st.text_input(
            "x[ ... ]",
            value=next(iter(ix.INDEX_PRESETS.values())),
            key=f"{K}.expr",
            max_chars=MAX_EXPR_CHARS,
            **BOUND,
        )
        with example_box:
            _example_follows_expression(expr)
            st.selectbox(  # a view of the expression: not in the URL (see the function above)
                _("Example"),
                [*ix.INDEX_PRESETS, CUSTOM_EXAMPLE],
                key="indexing.index_preset",  # spelled out: tests/shared/test_links.py NOT_BOUND
                format_func=translator(),
                on_change=_load_index_preset,
                help=_("Pick an example, or type your own expression below."),
            )
    itrace, ierr, isnippet = ix.run_index_case(x_text, expr)
    if ierr is not None:
        show_error(
            ierr, isnippet, N_("Change the expression or x; the rest of the page still works.")
        )
    if itrace is not None and itrace.result.numel() == 0:
        st.warning(
            _("x[{index}] selects nothing: shape {shape}.").format(
                index=itrace.index_text, shape=tuple(itrace.result.shape)
            )
        )
    elif itrace is not None:
        ipos = _selected_position(itrace, f"{K}.index_out_chart", f"{K}.index_cell")
        iexpl = ix.explain_element(itrace, ipos)
        ishapes = {"x": tuple(itrace.operands["x"].shape), "out": tuple(itrace.result.shape)}
        ifigs = {name: _index_figure(x_text, expr, name, ipos) for name in ishapes}
        figure_grid(
            ifigs,
            ishapes,
            _alt_texts(itrace, ["x"], ipos),
            f"{K}.index_out_chart",
            touch=_touch_device(),
        )
        explanation_box(iexpl, f"{K}-index-formula")
        s = itrace.storage
        assert s is not None
        message = (
            _("`x[{index}]` is a **view**: it shares x's storage (measured, not guessed).")
            if itrace.is_view
            else _("`x[{index}]` is a **copy**: new storage (measured, not guessed).")
        )
        st.markdown(message.format(index=itrace.index_text))
        m1, m2, m3 = st.columns(3)
        m1.metric(_("same data_ptr"), str(s.same_storage))
        m2.metric("storage_offset (out / x)", f"{s.result_offset} / {s.source_offset}")
        m3.metric("out.stride()", str(s.result_stride))
        st.caption(
            f"x.untyped_storage().data_ptr() = {s.source_ptr:#x}, "
            f"out.untyped_storage().data_ptr() = {s.result_ptr:#x}"
        )
        show_code(isnippet)

with tab_pit:
    if tab_pit.open:
        pitfalls_tab()

with tab_notes:
    if tab_notes.open:
        render_notes_demos()
