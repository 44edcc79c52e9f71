"""Indexing explainer: gather, scatter_ and x[...] with every output cell wired to its source."""

from __future__ import annotations

from contextlib import nullcontext

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.notes import LiveRun
from core.text import N_
from lessons.indexing import cases, examples, explanation, figures, parsing, pitfalls, presets
from lessons.indexing import notes_demos as nd
from lessons.indexing import page_text as words
from lessons.indexing import seeded_pitfalls as sp
from lessons.indexing.questions import INDEX_PART, questions
from lessons.indexing.tracing import PITFALL_CALLOUTS, PRESET_CALLOUTS, REDUCE_MODES, Trace
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import localized, show_code
from ui.i18n import _, cite, current_language, tr, translator
from ui.lesson import lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.markdown import plain
from ui.notes_callout import callouts_of, notes_callout, notes_citation
from ui.predict import predict_panel
from ui.settings import current_settings
from ui.tables import show_table

K, D = "indexing", nd.KEY
OPS = ["gather", "scatter"]
DIMS = [-3, -2, -1, 0, 1, 2]
REDUCES = ["none", "scatter_add", "add", "multiply", "sum", "prod", "mean", "amax", "amin"]
PRESET_KEYS = [p.key for p in presets.PRESETS]


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S, kind="resource")  # 11 presets today
def _notes_code_run(key: str) -> LiveRun:
    """What the notes' own code of a preset prints today, run once per process."""
    return presets.run_notes_code(key)


@bounded_cache(max_entries=64, ttl=SHARED_TTL_S, kind="resource")
def _case_run(case: cases.Case) -> tuple[Trace | None, parsing.IndexingError | None, str]:
    """cases.run_case once per case and process: the page and its shared pictures read the same
    trace (on a GPU, which duplicate write wins a collision can change from run to run)."""
    return cases.run_case(*case)


@bounded_cache(max_entries=64, ttl=SHARED_TTL_S, kind="resource")
def _run_notes_demo(demo: str, *args: object) -> nd.Demo:
    """lessons.indexing.pitfalls.<demo>(*args), run once per argument and process (frozen)."""
    return getattr(pitfalls, demo)(*args)


@shared_figure(max_entries=384)  # a few pictures per case or expression times the cells clicked
def _figure(source: tuple, name: str, pos: parsing.Pos) -> go.Figure:
    """Picture ``name`` of a case (``("case", case)``) or x[expr] (``("index", x, expr)``) with
    out[pos] framed, once per process: rebuilding it (20-80 ms) per student held the GIL."""
    trace = (_case_run(source[1]) if source[0] == "case" else cases.run_index_case(*source[1:]))[0]
    assert trace is not None, "only a case that ran has pictures"
    framed = {**explanation.explain_element(trace, pos).sources, "out": (pos,)}.get(name, ())
    return figures.trace_figure(trace, name, framed, gettext=translator())


def _bump(name: str) -> None:
    """New version of a tensor's grid editors, so they show the current text afresh."""
    versions = st.session_state.setdefault(f"{K}._versions", {})
    versions[name] = versions.get(name, 0) + 1


def _set_controls(values: dict[str, object]) -> None:
    """Write ``values`` into the page's controls by name; the grids show the new texts afresh."""
    for name, value in values.items():
        st.session_state[f"{K}.{name}"] = value
    for name in ("first", "index", "src"):
        _bump(name)


def _load_preset() -> None:
    _set_controls(presets.PRESETS_BY_KEY[st.session_state[f"{K}.preset"]].page_values())


def _load_random(seed: int) -> None:
    clicks = st.session_state.get(f"{K}._random_clicks", 0) + 1
    st.session_state[f"{K}._random_clicks"] = clicks
    op, ndim = st.session_state[f"{K}.op"], int(st.session_state[f"{K}.random_ndim"])
    _set_controls(examples.random_values(op, ndim, seed + clicks))


def _load_index_preset() -> None:
    label = st.session_state[f"{K}.index_preset"]
    if label in examples.INDEX_PRESETS:  # picking "your own expression" keeps the typed text
        st.session_state[f"{K}.expr"] = examples.INDEX_PRESETS[label]


def _grid_changed(name: str, k: int, editor_key: str) -> None:
    """Apply a data_editor edit to the tensor's text (the single source of truth)."""
    edits = st.session_state.get(editor_key, {}).get("edited_rows", {})
    try:
        text = parsing.apply_grid_edits(st.session_state[f"{K}.{name}"], name, k, edits)
    except parsing.IndexingError:
        return
    st.session_state[f"{K}.{name}"] = text
    _bump(name)


def tensor_editor(name: str, label: str, help_text: str, default: str, *, disabled=False) -> str:
    """A text field (nested list) plus an editable grid per 2-D slice, kept in sync; returns
    the text. The text is the single source of truth and what a link carries (``default``,
    the preset's text, leaves the URL); the grids write their edits back into it."""
    key = f"{K}.{name}"
    reject_unusable_link_value(key, parsing.LINK_CHECKS[name])
    text = st.text_input(_(label), value=default, key=key, max_chars=parsing.MAX_TENSOR_CHARS,
                         help=help_text, on_change=_bump, args=(name,), disabled=disabled,
                         **BOUND)  # fmt: skip
    tables = None if disabled else parsing.grid_tables(text, name)
    version = st.session_state.get(f"{K}._versions", {}).get(name, 0)
    for k, table in enumerate(tables or ()):
        editor_key = f"{K}.grid.{name}.{k}.v{version}"
        frame = pd.DataFrame(table, columns=[str(j) for j in range(len(table[0]))]).astype(str)
        if len(tables) > 1:
            st.caption(f"{label.split(' ')[0]}[{k}]")
        st.data_editor(frame, key=editor_key, num_rows="fixed", hide_index=False,
                       on_change=_grid_changed, args=(name, k, editor_key))  # fmt: skip
    return text


def _picture(trace: Trace, source: tuple, keys: tuple[str, str, str], cell_box) -> None:
    """The pictures of ``trace``, the cell to explain (clicked, or picked in the box drawn in
    ``cell_box``) framed, and its formula; ``keys``: the out chart's, the box's, the formula's.
    On a touch device out is a plain picture (a tap explained the cell tapped before)."""
    chart_key, cell_key, formula_key = keys
    shape = tuple(trace.result.shape)
    labels = explanation.cell_labels(shape)
    clicked = explanation.position_from_selection(st.session_state.get(chart_key), shape)
    if clicked is not None and st.session_state.get(f"{cell_key}._last_click") != (clicked, shape):
        st.session_state[cell_key] = f"out{parsing.format_pos(clicked)}"
        st.session_state[f"{cell_key}._last_click"] = (clicked, shape)
    if st.session_state.get(cell_key) not in labels:
        st.session_state[cell_key] = next(iter(labels))
    with cell_box:
        pos = labels[st.selectbox(_("Explain cell"), list(labels), key=cell_key,
                                  help=_(words.CELL_HELP), **BOUND)]  # fmt: skip
    try:
        touch = figures.is_touch_user_agent(st.context.headers.get("User-Agent"))
    except Exception:  # no browser (AppTest, a bare script run): treat as a desktop
        touch = False
    shapes = figures.picture_shapes(trace)
    alts, rows = explanation.alt_texts(trace, list(shapes)[:-1], pos), figures.figure_rows(shapes)
    for row in rows:
        weights = figures.row_weights(row, len(rows))
        for col, (name, _units) in zip(st.columns(weights, gap="small"), row, strict=False):
            chart = {"key": f"{K}.fig.{name}"}
            if name == "out":
                chart = {"key": chart_key, "on_select": "rerun", "selection_mode": "points"}
                chart = {"key": f"{chart_key}.touch"} if touch else chart
            with col:
                show_chart(_figure(source, name, pos), alt=tr(alts[name]), width="stretch", **chart)
    if touch and source[0] == "case":
        st.caption(_("On a touch screen, pick the cell to explain in **Explain cell**."))
    with st.container(key=formula_key):
        expl = explanation.explain_element(trace, pos)
        st.markdown(_("**The formula for this cell, with the real numbers**"))
        st.code(expl.formula, language="text", wrap_lines=True)
        st.caption(tr(expl.note))


def show_error(err: parsing.IndexingError, snippet: str, hint: str) -> None:
    """The core's message (torch's own words kept as torch wrote them), then what to change."""
    st.error(f"{plain(tr(err))}\n\n{_(hint)}", icon=":material/error:")
    if err.torch_error:
        st.info(_(words.TORCH_WORDS).format(error=err.torch_error), icon=":material/school:")
        if snippet:
            show_code(snippet)


layout = lesson_layout(N_("Indexing explainer"), words.LOOK_AT)
settings = current_settings()
# Every control is bound to the URL (ui/links.py). The preset's values are the other controls'
# defaults, so a link holds the preset plus what was changed from it (?indexing.preset=...
# alone opens that preset); picking a preset writes its values into the controls.
with layout.controls:  # the preset, the operation and the cell to explain, beside the picture
    menu = translator()
    preset_key = st.selectbox(_("Preset"), PRESET_KEYS, index=PRESET_KEYS.index("gather"),
                              key=f"{K}.preset", on_change=_load_preset, help=_(words.PRESET_HELP),
                              format_func=lambda key: menu(presets.PRESETS_BY_KEY[key].menu_label),
                              **BOUND)  # fmt: skip
    preset = presets.PRESETS_BY_KEY[preset_key]
    c1, c2 = st.columns(2, gap="small")
    op = c1.selectbox(_("Operation"), OPS, index=OPS.index(preset.op), key=f"{K}.op", **BOUND)
    dim = c2.selectbox("dim", DIMS, index=DIMS.index(preset.dim), key=f"{K}.dim",
                       help=_("Out-of-range dims are refused."), **BOUND)  # fmt: skip
    reduce, include_self = preset.reduce or "none", preset.include_self
    if op == "scatter":  # only scatter has these; hidden for gather (a disabled label fails WCAG)
        r1, r2 = st.columns(2, gap="small")
        reduce = r1.selectbox("reduce", REDUCES, index=REDUCES.index(reduce), key=f"{K}.reduce",
                              help=_(words.REDUCE_HELP), **BOUND)  # fmt: skip
        r2.space("small")
        include_self = r2.checkbox("include_self", value=include_self, key=f"{K}.include_self",
                                   disabled=reduce not in REDUCE_MODES,
                                   help=_(words.INCLUDE_SELF_HELP), **BOUND)  # fmt: skip
    else:  # hidden: the value kept from scatter (or the preset's) goes on
        reduce = st.session_state.get(f"{K}.reduce", reduce)
        include_self = st.session_state.get(f"{K}.include_self", include_self)
    st.button(_("Reload preset"), key=f"{K}.reload", on_click=_load_preset, width="stretch",
              help=_(words.RELOAD_HELP), icon=":material/restart_alt:")  # fmt: skip
    st.button(_("Random example"), key=f"{K}.random", on_click=_load_random,
              args=(settings.seed,), help=_(words.RANDOM_HELP).format(seed=settings.seed),
              icon=":material/casino:", width="stretch")  # fmt: skip
    cell_box = st.container()
with layout.details:
    st.header(_("Tensors, code and pitfalls"), anchor=False)
    # on_change="rerun": only the open tab's content runs and is sent (lazy tabs), so a change
    # to the lesson's controls does not redraw two tabs of pitfalls nobody is looking at.
    tab_gs, tab_ix, tab_pit, tab_notes = st.tabs(
        [_("gather & scatter_"), _("x[...] indexing"), _("8 pitfalls"),
         _("More pitfalls from the notes")],
        key=f"{K}.details_tab", on_change="rerun", bind="query-params")  # fmt: skip
# The tensors' fields are drawn before the case runs: a link's text reaches the page only
# through its field, so the case must read the fields. The boxes above and below them are
# filled once the case ran.
with tab_gs:
    preset_box, texts, limits = st.container(), [], _(", ").join(map(tr, parsing.size_limits()))
    for col, (name, label, hint, disabled) in zip(st.columns(3), words.editors(op), strict=True):
        with col:
            texts.append(tensor_editor(name, label, _(hint).format(limits=limits),
                                       getattr(preset, name), disabled=disabled))  # fmt: skip
    st.selectbox(_("Dims of a random example"), [1, 2, 3], index=1, key=f"{K}.random_ndim",
                 help=_("Used by the Random button beside the picture."), **BOUND)  # fmt: skip
    case_box = st.container()
reduce = None if reduce == "none" else reduce
preset_shown = presets.preset_is_loaded(preset, op, texts, dim, reduce, include_self)
case: cases.Case = (op, *texts, int(dim), reduce, bool(include_self), settings.device)
trace, err, snippet = _case_run(case)
with layout.figure:  # the picture: inputs wired to out, the clicked cell's formula under it
    if err is not None:
        show_error(err, snippet, words.CASE_ERROR_HINT)
    if trace is not None:
        _picture(trace, ("case", case), (f"{K}.out_chart", f"{K}.cell", f"{K}-formula"), cell_box)
        if trace.scalar_src:
            value = parsing.format_value(trace.operands["src"])
            st.caption(_("src is the scalar {value}.").format(value=value))
        if collided := explanation.collision_note(trace, _("scalar")):
            warn, sentences = collided
            icon = ":material/warning:" if warn else ":material/merge:"
            (st.warning if warn else st.info)(" ".join(map(tr, sentences)), icon=icon)
with preset_box:  # only an unchanged preset may claim the notes' example
    if preset_shown and (note := presets.source_note(preset)):
        st.caption(tr(note))
    elif preset_shown:
        detail = N_("same inputs, dim, dtype and printed output")
        notes_citation(preset.ref, verbatim=preset.verbatim, detail=detail)
    if preset_shown and preset.note:
        st.caption(_("Preset note: {note}").format(note=tr(preset.note)))
    if preset_shown and trace is not None and (verdict := presets.notes_verdict(preset, trace)):
        matches, message = verdict
        icon = ":material/check:" if matches else ":material/warning:"
        (st.success if matches else st.warning)(tr(message), icon=icon)
with case_box:  # the device and torch's warnings, the group means, the snippet; the notes' code
    if trace is not None:
        st.caption(_("Computed on {device} (sidebar device); the snippet runs on the CPU.")
                   .format(device=trace.result.device))  # fmt: skip
        for warning in trace.warnings:
            st.caption(_("torch warned: {warning}").format(warning=warning))
        if (group := cases.group_means_for(trace)) is not None:
            label = _("Group means: scatter_add sums / torch.unique counts")
            with st.expander(label, expanded=True):
                show_table({_(head): col for head, col in cases.group_means_table(group).items()})
                st.caption(_("Both ways agree: {agree}.").format(agree=group.agree))
            snippet += cases.GROUP_MEANS_SNIPPET
        show_code(snippet)
    if preset_shown:
        with st.expander(_("The notes' code ({ref}), runnable as-is").format(ref=cite(preset.ref)),
                         icon=":material/book:"):  # fmt: skip
            st.code(preset.notes_code, language="python")
            if preset.notes_code_changes:
                changes = tr(preset.notes_code_changes)
                st.caption(_("Changed so that it runs: {changes}").format(changes=changes))
            run = _notes_code_run(preset.key)
            st.caption(_("What it prints with torch {version}:").format(version=run.torch_version))
            st.code(run.transcript or _("(prints nothing)"), language="text")
        for key in PRESET_CALLOUTS.get(preset.key, ()):
            notes_callout(callouts_of("lessons.indexing.tracing")[key])


def _notes_demo(tab: nd.NotesTab) -> bool:
    """A notes tab's choices (bound; a kept value no longer offered is forgotten), then its
    demo: the snippet beside what it printed just now, and the verdict. False if refused."""
    t, chosen = translator(), {}
    n = len(tab.choices)  # several menus side by side, one across the tab
    slots = st.columns(n) if n > 1 else [nullcontext()] * n
    for slot, choice in zip(slots, tab.choices, strict=True):
        key, options = f"{D}.{choice.name}", choice.options_for(chosen)
        if key in st.session_state and st.session_state[key] not in options:
            del st.session_state[key]
        label, name = tr(choice.label_for(chosen)), lambda o, c=choice: t(c.option_label(o))
        with slot:
            chosen[choice.name] = (
                st.radio(label, options, key=key, format_func=name, horizontal=True, **BOUND)
                if choice.radio
                else st.selectbox(label, options, key=key, format_func=name,
                                  help=tr(choice.help) or None, **BOUND)
            )  # fmt: skip
    try:
        demo = _run_notes_demo(tab.demo, *tab.arguments(chosen))
    except ValueError as err:
        st.error(nd.escape_markdown(tr(err)), icon=":material/error:")
        return False
    if source := nd.source_caption(tab, demo):
        st.caption(tr(source))
    else:
        notes_citation(demo.ref, verbatim=demo.verbatim)
    if metrics := nd.metrics(demo):
        for col, (label, value) in zip(st.columns(len(metrics)), metrics, strict=True):
            col.metric(label, tr(value))
    code_col, out_col = st.columns(2)
    code_col.markdown(_("**Snippet** (runs as-is)"))
    code_col.code(localized(demo.code), language="python")
    out_col.markdown(_("**What it printed just now**"))
    out_col.code(demo.transcript or _("(prints nothing)"), language="text", wrap_lines=True)
    joined = ("" if current_language() == "zh" else " ").join(map(tr, demo.verdict_parts))
    verdict = nd.escape_markdown(joined or tr(demo.verdict))
    icon = ":material/check_circle:" if demo.matches_notes is True else ":material/science:"
    (st.success if demo.matches_notes is True else st.info)(verdict, icon=icon)
    if closing := nd.closing_caption(demo):
        st.caption(_(closing))
    return True


with tab_ix:  # x[...]: a typed x and expression, the wiring picture, and view or copy, measured
    st.markdown(_(words.INDEX_INTRO))
    i1, i2 = st.columns([2, 3])
    with i1:
        x_text = tensor_editor("x", "x", _("A nested list, {limits}.").format(limits=limits),
                               examples.INDEX_DEFAULT_X)  # fmt: skip
    example_box = i2.container()  # above the expression, drawn once its text is known
    reject_unusable_link_value(f"{K}.expr", parsing.LINK_CHECKS["expr"])
    expr = i2.text_input("x[ ... ]", value=next(iter(examples.INDEX_PRESETS.values())),
                         key=f"{K}.expr", max_chars=parsing.MAX_EXPR_CHARS, **BOUND)  # fmt: skip
    # The Example box is a view of the expression, set before it is drawn, and not in the URL:
    # the link carries the expression, so it cannot name an example beside another expression.
    st.session_state[f"{K}.index_preset"] = examples.example_for_expression(expr)
    example_box.selectbox(  # key spelled out: tests/shared/test_links.py NOT_BOUND
        _("Example"), [*examples.INDEX_PRESETS, examples.CUSTOM_EXAMPLE],
        key="indexing.index_preset", format_func=translator(), on_change=_load_index_preset,
        help=_("Pick an example, or type your own expression below."))  # fmt: skip
    itrace, ierr, isnippet = cases.run_index_case(x_text, expr)
    if ierr is not None:
        show_error(ierr, isnippet, words.INDEX_ERROR_HINT)
    if itrace is not None and itrace.result.numel() == 0:
        st.warning(_("x[{index}] selects nothing: shape {shape}.")
                   .format(index=itrace.index_text, shape=tuple(itrace.result.shape)))  # fmt: skip
    elif itrace is not None:
        with st.container(key=INDEX_PART):  # view or copy: the answer to a question
            keys = (f"{K}.index_out_chart", f"{K}.index_cell", f"{K}-index-formula")
            _picture(itrace, ("index", x_text, expr), keys, nullcontext())
            storage = explanation.storage_view(itrace)
            st.markdown(tr(storage.message))
            for col, (label, value) in zip(st.columns(3), storage.metrics, strict=True):
                col.metric(tr(label), value)
            st.caption(storage.pointers)
            show_code(isnippet)
if tab_pit.open:  # the eight pitfalls, one at a time, run on tensors drawn from the global seed
    with tab_pit:
        p1, p2 = st.columns([3, 1])
        number = p1.selectbox(_("Pitfall"), list(sp.PITFALL_TITLES), key=f"{K}.pitfall", **BOUND,
                              format_func=lambda n: menu(sp.PITFALL_LABELS[n]))  # fmt: skip
        n = p2.slider(_("n (size)"), 2, 6, value=4, key=f"{K}.pitfall_n", **BOUND)
        pitfall = sp.run_pitfall(int(number), seed=settings.seed, n=int(n))
        st.markdown(tr(pitfall.lesson))
        show_table(pd.DataFrame([(tr(label), tr(text)) for label, text in pitfall.lines],
                                columns=[_("expression"), _("what torch gave")]))  # fmt: skip
        verdict = _("Verdict (from these tensors): {verdict}").format(verdict=tr(pitfall.verdict))
        icon = ":material/check:" if pitfall.holds else ":material/help:"
        (st.success if pitfall.holds else st.warning)(verdict, icon=icon)
        st.caption(_(words.SEEDED).format(seed=settings.seed))
        if pitfall.ref:
            notes_citation(pitfall.ref, verbatim=False)
        else:
            st.caption(_("Not in the notes: the app adds this pitfall."))
        show_code(pitfall.snippet)
        for key in PITFALL_CALLOUTS.get(pitfall.number, ()):
            notes_callout(callouts_of("lessons.indexing.tracing")[key])
if tab_notes.open:  # the notes' pitfalls as live demos, one tab each
    with tab_notes:
        st.subheader(_("Pitfalls from the notes, run live"))
        st.caption(tr(nd.INTRO))
        callouts = callouts_of("lessons.indexing.pitfalls")
        # bound: a link can open one demo; every tab's content is still drawn
        boxes = st.tabs([tr(tab.label) for tab in nd.TABS], key=f"{D}.tab", bind="query-params")
        for box, tab in zip(boxes, nd.TABS, strict=True):
            with box:
                st.caption(tr(tab.caption))
                if _notes_demo(tab):
                    for key in tab.callouts:
                        notes_callout(callouts[key])
predict_panel(layout.predict, "indexing", lambda: questions(trace, itrace, err))
