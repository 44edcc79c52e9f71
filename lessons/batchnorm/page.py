"""BatchNorm explorer: running statistics, train() vs eval(), momentum, affine and
track_running_stats, checked against nn.BatchNorm1d/2d.

The story is at the end of this file. Training runs are replayed once for every session (shared
caches); numbers, figures and texts come from the lesson's pure modules (lessons/batchnorm/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import streamlit as st

from core.text import N_
from lessons.batchnorm import controls as ctl
from lessons.batchnorm import explanations as ex
from lessons.batchnorm import figures, modes, norms, notes_demos, real_modules, snippets, stream
from lessons.batchnorm import layer as bn  # bn.simulate is looked up when called: tests wrap it
from lessons.batchnorm.questions import MODES_PART, RUNNING_PART, questions
from ui.caching import SHARED_TTL_S, NotCached, bounded_cache, held_in_cache
from ui.charts import shared_figure, show_chart
from ui.code import localized, show_code
from ui.heavy import budget_s, compute_once, heavy_job, may_run, offer_run
from ui.i18n import _, cite, current_language, tr, translator
from ui.lesson import lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.notes_callout import callouts_of, notes_callout
from ui.predict import predict_panel
from ui.settings import current_settings
from ui.tables import show_table


def _show(blocks: Sequence[ex.ViewBlock]) -> None:
    """Draw a view of lessons.batchnorm.explanations in order, in this session's language."""
    gap = "" if current_language() == "zh" else " "  # between sentences
    for block in blocks:
        parts = [gap if isinstance(part, ex.SentenceGap) else
                 part if isinstance(part, ex.Verbatim) else tr(part) for part in block.parts]
        if block.kind == "metrics":
            for column, label, value, delta in zip(st.columns(len(parts)), parts, block.values,
                                                   block.deltas, strict=True):
                column.metric(label, value, delta=delta and tr(delta), delta_color="off")
        elif block.kind == "text":
            st.code("".join(parts), language="text", wrap_lines=True)
        elif block.kind in ("markdown", "caption", "latex"):
            getattr(st, block.kind)("".join(parts))
        else:
            getattr(st, block.kind)("".join(parts), icon=block.icon)


def _number(box: ctl.NumberBox, where=st, **kwargs) -> float:
    """The number input ``box`` describes, bound to the URL (a link opens on its value)."""
    return where.number_input(_(box.label), box.low, box.high, box.value, box.step,
                              format=box.format, key=box.key,
                              help=_(box.help) if box.help else None, **BOUND, **kwargs)


def _set_steps(count: int | None) -> None:
    """Train and Step add ``count`` steps, Reset (None) goes back to 0 (before it is drawn)."""
    done = int(st.session_state.get(ctl.STEPS.key, ctl.DEFAULT_STEPS))
    st.session_state[ctl.STEPS.key] = 0 if count is None else min(done + count, bn.MAX_STEPS)


# ---- runs and results shared by every session (caches), and the figures drawn from them
@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _simulate(config: bn.SimConfig, steps: int, _ready: bn.History | None = None,
              _probe: bool = False) -> bn.History:
    """One training run per (config, steps) for the whole process, so the default run on
    arrival is computed once for every student. ``_ready`` (not in the key) stores a run made
    outside with a progress bar: a cached function must not draw, or Streamlit would replay the
    bar on every hit. ``_probe``: the run only if cached, else :class:`ui.caching.NotCached`."""
    if _probe:
        raise NotCached
    return _ready if _ready is not None else bn.simulate_config(config, steps)


def _history(config: bn.SimConfig, steps: int, bar) -> bn.History:
    """The run from the cache, or computed with real progress in ``bar`` when it is long: as
    one of the process's heavy jobs, computed once for sessions asking for it at once.

    Whether a long run is cached is asked of the cache itself (``_probe``): a list of the runs
    made would outlive the cache's entries, and a run it still named would be replayed outside
    the heavy-job queue without a progress bar. (A long replay runs outside the cache's compute
    lock, in compute_once, and holds it only to store the result.)"""
    if bn.estimate_simulate_seconds(config, steps) <= ctl.PROGRESS_SECONDS:
        return _simulate(config, steps)
    held = held_in_cache(lambda: _simulate(config, steps, _probe=True))
    if held is not None:
        return held
    text = _("Training step {done} of {total}…")

    def progress(done: int, total: int) -> None:  # about 50 updates a run, not one a step
        if done == total or done % max(1, total // 50) == 0:
            bar.progress(done / total, text=text.format(done=done, total=total))

    def compute() -> bn.History:
        with heavy_job(_("Training {steps} steps").format(steps=steps)):
            return bn.simulate_config(config, steps, progress)

    def waiting() -> None:
        bar.info(_("Another visitor is running these same {steps} steps; their result is "
                   "shown here when it is ready.").format(steps=steps),
                 icon=":material/hourglass_top:")

    ran = compute_once(("batchnorm.simulate", config, steps), compute, on_wait=waiting)
    history = _simulate(config, steps, _ready=ran)
    bar.empty()
    return history


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _comparison(config: bn.SimConfig, steps: int) -> modes.ModeComparison:
    """train() vs eval() on the shown batch, read by the page's numbers and its histogram."""
    return modes.compare_run(config, steps, _simulate(config, steps).state)


# Pure results that do not depend on the session, computed once for everyone
_repeated_eval = bounded_cache(max_entries=16, ttl=SHARED_TTL_S)(notes_demos.repeated_eval)
_loader_run = bounded_cache(max_entries=64, ttl=SHARED_TTL_S)(notes_demos.loader_run)
_torch_error = bounded_cache(max_entries=64, ttl=SHARED_TTL_S)(real_modules.torch_error_for)
_anatomy = bounded_cache(max_entries=64, ttl=SHARED_TTL_S)(real_modules.anatomy_of)


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _norms_table(data: stream.Stream, samples: int, groups: int, seed: int,
                 language: str) -> dict[str, list]:
    """The four normalizations on batch 0 of the stream (``language``: the headers')."""
    return figures.norms_table(norms.norms_on_stream(data, samples, groups, seed=seed),
                               translator())


@shared_figure(max_entries=32)
def _running_chart(config: bn.SimConfig, steps: int, channel: int) -> go.Figure:
    """After :func:`_history`, which puts a long run in the cache with a progress bar."""
    return figures.running_chart(_simulate(config, steps), channel, translator())


@shared_figure(max_entries=32)
def _modes_chart(config: bn.SimConfig, steps: int, channel: int) -> go.Figure:
    return figures.modes_histogram(_comparison(config, steps), channel, translator())


@shared_figure(max_entries=32)
def _norms_diagram(samples: int, channels: int, groups: int) -> go.Figure:
    return figures.norms_diagram(samples, channels, groups, translator())


# ---- the controls, the chart and the sections under it, each drawn from the run charted
def _training_controls(torch_error: str | None) -> int:
    """The trained layer is a control, not a hidden counter: a link opens on the same step, and
    Train, Step and Reset only change it. Returns the steps asked for."""
    steps = int(_number(ctl.STEPS))
    n_steps = int(_number(ctl.STEPS_PER_TRAIN))
    t1, t2, t3 = st.columns(3, gap="small")
    t1.button(_("Train"), key="batchnorm.train", on_click=_set_steps, args=(n_steps,),
              disabled=torch_error is not None, type="primary", width="stretch",
              help=_("Train {n} more steps on the next batches of the stream.").format(n=n_steps))
    t2.button(_("Step"), key="batchnorm.step", on_click=_set_steps, args=(1,),
              disabled=torch_error is not None, width="stretch", help=_("Train one more step."))
    t3.button(_("Reset"), key="batchnorm.reset", on_click=_set_steps, args=(None,),
              width="stretch", help=_("Back to a fresh layer (0 steps)."))
    return steps


def _chart(config: bn.SimConfig, requested: int, channel: int) -> bn.History:
    """The running statistics over the steps a replay may take unasked (all ``requested``, or
    the first ones and a button for all), and what the chart shows."""
    steps, estimate = requested, bn.estimate_simulate_seconds(config, requested)
    if not may_run(ctl.LONG_RUN_GATE, estimate, (config, requested)):  # a link or a click alike
        steps = min(requested, bn.affordable_steps(config, budget_s()))
    history = _history(config, steps, st.empty())
    with st.container(key=RUNNING_PART):  # what running_mean holds: a question's answer
        show_chart(_running_chart(config, steps, channel), key="batchnorm.running_chart",
                   alt=_(ex.RUNNING_CHART_ALT).format(channel=channel, steps=steps))
        st.markdown(_(ex.RUN_SUMMARY).format(steps=steps, shape=config.shape,
                                             module=config.module_name,
                                             per_channel=config.values_per_channel))
    if steps < requested:
        offer_run(ctl.LONG_RUN_GATE, estimate, (config, requested),
                  message=_(ex.LONG_RUN_MESSAGE).format(
                      requested=requested, values=config.values, seconds=estimate, steps=steps),
                  label=_("Run all {requested} steps (about {seconds:.0f} s)").format(
                      requested=requested, seconds=estimate))
    return history


def _modes_section(run: modes.ShownRun) -> None:
    """1. The same batch through train() and eval(): both histograms and their numbers."""
    st.header(_("1. The same batch through train() and eval()"), anchor=False)
    comparison, channel, steps = run.comparison, run.channel, run.history.steps
    if comparison is None:
        st.info(_(ex.NOTHING_TO_COMPARE), icon=":material/info:")
        return
    st.caption(_(ex.SHOWN_BATCH_TRAINED if steps else ex.SHOWN_BATCH_FRESH).format(
        index=max(steps - 1, 0), channel=channel, steps=steps))
    show_chart(_modes_chart(run.config, steps, channel), width="stretch",
               key="batchnorm.modes_chart", alt=tr(ex.modes_chart_alt(comparison, channel)))
    with st.container(key=MODES_PART):  # what links and questions are about
        _show([ex.mode_metrics(comparison, channel),
               ex.mode_verdict(comparison, run.history.state, channel)])


def _module_tab(run: modes.ShownRun, tab: str) -> None:
    """2. One tab of "What is inside the module", about the live module."""
    config, tracked = run.config, run.config.track_running_stats
    if tab == "buffers":
        anatomy = _anatomy(config.channels, run.dims, momentum=config.momentum, eps=config.eps,
                           affine=config.affine, track_running_stats=tracked)
        st.code(anatomy.module_repr, language="text")
        titles = ("**`named_parameters()`**", "**`named_buffers()`**", "**`state_dict().keys()`**")
        tables = figures.anatomy_tables(anatomy, translator())
        for column, title, table in zip(st.columns(3), titles, tables, strict=True):
            column.markdown(title)
            show_table(table, where=column)
        _show([ex.buffers_paragraph(anatomy, affine=config.affine, tracked=tracked)])
    elif tab == "update":
        _show(ex.update_view(run.history, run.channel, config.momentum, tracked))
    elif tab == "variance":
        _show(ex.variance_view(run.x, run.channel, torch_error=run.torch_error))
    elif tab == "keras":
        _show(ex.keras_view(config.momentum))
        k1, k2 = st.columns(2)
        direction = k1.radio(_("Convert"), ctl.KERAS_DIRECTIONS, key="batchnorm.keras_direction",
                             **BOUND, horizontal=True)
        # a lazy tab: persist_state (BOUND) keeps the value while the tab is closed
        _show([ex.keras_conversion(direction, float(_number(ctl.KERAS_VALUE, k2)))])
    else:
        st.markdown(_(ex.FROZEN_BN_WAYS))
        st.code(localized(snippets.FREEZE_BN_CODE), language="python")
        _show(ex.frozen_view(run))


def _norms_section(run: modes.ShownRun) -> None:
    """3. Which axes BatchNorm, LayerNorm, InstanceNorm and GroupNorm pool, on live input."""
    st.header(_("3. Which axes do BatchNorm, LayerNorm, InstanceNorm and GroupNorm pool?"),
              anchor=False)
    config, channels = run.config, run.config.channels
    divisors, start = norms.group_choices(channels)
    groups = int(st.selectbox(_("GroupNorm groups G"), divisors, index=start,
                              key="batchnorm.groups", **BOUND, help=_(ctl.GROUPS_HELP)))
    samples = norms.demo_samples(config.batch_size)
    show_chart(_norms_diagram(samples, channels, groups), width="stretch",
               key="batchnorm.norms_chart",
               alt=_(ex.NORMS_DIAGRAM_ALT).format(size=channels // groups))
    st.caption(_(ex.NORMS_CAPTION))
    show_table(_norms_table(config.stream, samples, groups, config.seed, current_language()))
    st.caption(_(ex.NORMS_LIVE_INPUT).format(
        shape=stream.input_shape(samples, channels, norms.NORM_SPATIAL)))


def _notes_tab(run: modes.ShownRun, tab: str) -> None:
    """4. One of the notes' lessons, run live with the real modules (notes 000:11, 000:76,
    002:795, 002:801-805), or where the notes are wrong."""
    config, channel = run.config, run.channel
    if tab == "formula":
        st.caption(_(ex.FORMULA_CAPTION).format(ref=cite(bn.NOTES_REFS["formula"]),
                                                missing=cite(bn.NOTES_REFS["formula_missing"])))
        # a lazy tab: persist_state (BOUND) keeps these values while the tab is closed
        sample, position, gamma, beta = (
            _number(box, column, disabled=off) for box, column, off in zip(
                ctl.FORMULA, st.columns(4), (False, not run.dims, *(not config.affine,) * 2),
                strict=True))
        view = ex.formula_view(run, sample=int(sample), position=int(position),
                               gamma=float(gamma), beta=float(beta))
        _show(view.blocks)
        if view.snippet:
            show_code(view.snippet, title=N_("Reproduce the formula check in Python"))
    elif tab == "batch_of_one":
        st.caption(_(ex.BATCH_OF_ONE_CAPTION).format(ref=cite(bn.NOTES_REFS["batch_of_one"])))
        one_dims = ctl.ONE_LAYOUTS[st.radio(_("Input"), tuple(ctl.ONE_LAYOUTS), horizontal=True,
                                            key="batchnorm.one_layout", **BOUND)]
        one = notes_demos.batch_of_one(config.channels, one_dims, seed=config.seed)
        for column, blocks in zip(st.columns(2), ex.batch_of_one_columns(one), strict=True):
            with column:
                _show(blocks)
        st.markdown(_(ex.LAST_BATCH_OF_ONE))
        st.caption(_(ex.ERROR_DOCTOR_LINK))
        size, batch = (int(_number(box, column)) for box, column in zip(
            ctl.LOADER, st.columns(2), strict=True))
        runs = [_loader_run(size, batch, drop_last=drop, channels=config.channels,
                            seed=config.seed) for drop in (False, True)]
        for column, loader_run in zip(st.columns(2), runs, strict=True):
            with column:
                _show(ex.loader_view(loader_run))
        st.info(tr(notes_demos.explain_loader(*runs)), icon=":material/info:")
        show_code(notes_demos.drop_last_snippet(config.channels, one_dims, size, batch),
                  title=N_("Reproduce the batch-of-one error and drop_last in Python"))
    elif tab == "evaluate_twice":
        st.caption(_(ex.REPEATED_EVAL_CAPTION).format(ref=cite(bn.NOTES_REFS["repeated_eval"])))
        eval_batch, sample = (int(_number(box, column)) for box, column in zip(
            ctl.REPEATED_EVAL, st.columns(2), strict=True))
        eval_config, notice = notes_demos.repeated_eval_config(config, run.side, run.dims)
        with st.spinner(_("Training and evaluating twice…")):
            results = _repeated_eval(eval_config, eval_batch=eval_batch, sample=sample)
        for column, result in zip(st.columns(2), results, strict=True):
            with column, st.container(border=True,
                                      key=f"batchnorm-eval-{result.track_running_stats}"):
                _show(ex.repeated_eval_view(result, channel))
        if notice:
            st.caption(_("Spatial size for this demo: {notice}").format(notice=tr(notice)))
        st.caption(_(ex.NOTES_RIGHT_HERE))
        show_code(notes_demos.repeated_eval_snippet(eval_config, eval_batch=eval_batch),
                  title=N_("Reproduce the two evaluations in Python"))
    else:
        for callout in callouts_of("lessons.batchnorm.layer").values():
            notes_callout(callout)


def _tabs(key: str, draw: Callable[[str], None], labels: dict[str, str]) -> None:
    """Lazy tabs bound to the URL (``key``; ``labels``: tab -> label): only the open one runs
    and is drawn, so a change beside the chart does not redraw what nobody is looking at."""
    tabs = st.tabs([_(label) for label in labels.values()], key=key, on_change="rerun",
                   bind="query-params")
    for tab, name in zip(tabs, labels, strict=True):
        if tab.open:
            with tab:
                draw(name)


# ---- the story: the controls, the chart of the running statistics, then the details
settings = current_settings()
layout = lesson_layout(N_("BatchNorm explorer"), ex.LOOK_AT, figure_share=0.66)
with layout.controls:  # the key controls beside the figure, the rest in an expander under them
    train_box, key_box, channel_box = st.container(), st.container(), st.container()
    more = st.expander(_("More settings: input, stream, module"), icon=":material/tune:")
with key_box:
    batch_size = int(_number(ctl.BATCH_SIZE))
    momentum_mode = st.radio(_("momentum"), ctl.MOMENTUM_MODES, key="batchnorm.momentum_mode",
                             format_func=translator(), **BOUND)
    momentum_value = float(_number(ctl.MOMENTUM, disabled=momentum_mode != ctl.MOMENTUM_MODES[0]))
    momentum = momentum_value if momentum_mode == ctl.MOMENTUM_MODES[0] else None
    shift_on = st.checkbox(_("Shift the stream"), False, key="batchnorm.shift", **BOUND,
                           help=_(ctl.SHIFT_HELP))
with more:
    channels = int(_number(ctl.CHANNELS))
    layout_name = st.radio(_("Input layout"), tuple(stream.LAYOUTS), index=2, horizontal=True,
                           key="batchnorm.layout", **BOUND)
    dims = stream.LAYOUTS[layout_name]
    side = int(_number(ctl.SPATIAL, disabled=dims == 0))
    # a link's text must give `channels` numbers the stream accepts, or it opens at the default
    for key, is_std in (("batchnorm.mean", False), ("batchnorm.std", True)):
        reject_unusable_link_value(key, lambda text, is_std=is_std: stream.channel_text_usable(
            text, channels, std=is_std, max_chars=ctl.MAX_CHANNEL_TEXT))
    mean_text = st.text_input(_("Mean per channel"), "2, -1, 0.5", max_chars=ctl.MAX_CHANNEL_TEXT,
                              key="batchnorm.mean", **BOUND,
                              help=_("One number for all channels, or one per channel."))
    std_text = st.text_input(_("Std per channel"), "3, 0.5, 1", max_chars=ctl.MAX_CHANNEL_TEXT,
                             key="batchnorm.std", **BOUND, help=_("Must be > 0."))
    shift = tuple(_number(box, disabled=not shift_on) for box in ctl.SHIFT)  # step, +=, ×
    nan_on = st.checkbox(_("Inject one NaN"), False, key="batchnorm.inject_nan", **BOUND,
                         help=_("One NaN in channel 0 of one batch of the stream."))
    nan_box = int(_number(ctl.NAN_STEP, disabled=not nan_on))
    eps = float(st.select_slider("eps", ctl.EPS_OPTIONS, value=1e-5, key="batchnorm.eps", **BOUND,
                                 format_func=lambda v: f"{v:g}"))
    affine = st.checkbox(_("affine (γ and β)"), True, key="batchnorm.affine", **BOUND,
                         help=_("Learnable weight γ and bias β per channel."))
    track = st.checkbox("track_running_stats", True, key="batchnorm.track", **BOUND)
with channel_box:
    channel = int(st.selectbox(_("Channel to plot"), list(range(channels)),
                               key="batchnorm.channel", **BOUND))

nan_step = nan_box if nan_on else None
try:
    data = stream.stream_from_text(mean_text, std_text, channels, nan_step=nan_step,
                                   shift=shift if shift_on else None)
except ValueError as error:
    layout.figure.error(tr(error) + "\n\n" + _(ex.STREAM_HINT), icon=":material/error:")
    st.stop()
cap = stream.cap_spatial(side, dims=dims, batch_size=batch_size, channels=channels)
config = bn.SimConfig(
    stream=data, batch_size=batch_size, spatial=(cap.side,) * dims, momentum=momentum, eps=eps,
    affine=affine, track_running_stats=track, seed=settings.seed)
torch_error = _torch_error(config.shape)  # the real module's answer
with train_box:
    requested = _training_controls(torch_error)
with layout.figure:
    history = _chart(config, 0 if torch_error is not None else requested, channel)
    _show(ex.chart_notices(config, history, torch_error=torch_error, nan_step=nan_step,
                           capped=requested >= bn.MAX_STEPS, cap_notice=cap.notice))
steps = history.steps
shown = modes.ShownRun(config, history, channel, dims, side, torch_error,
                       None if torch_error is not None else _comparison(config, steps),
                       modes.shown_batch(config, steps))
with layout.details:
    _modes_section(shown)
    st.header(_("2. What is inside the module"), anchor=False)
    _tabs("batchnorm.module_tab", lambda tab: _module_tab(shown, tab), {
        "buffers": N_("Parameters vs buffers"), "update": N_("Update formulas"),
        "variance": N_("Biased vs unbiased"), "keras": N_("Keras momentum"),
        "frozen": N_("Frozen BN")})
    _norms_section(shown)
    st.header(_("4. What the notes teach about BatchNorm, run live"), anchor=False)
    st.caption(_(ex.NOTES_DEMOS_CAPTION))
    _tabs("batchnorm.notes_tab", lambda tab: _notes_tab(shown, tab), {
        "formula": N_("The formula"), "batch_of_one": N_("A batch of one"),
        "evaluate_twice": N_("Evaluating twice"), "wrong": N_("Where the notes are wrong")})
    show_code(snippets.snippet_for(config, steps))
predict_panel(layout.predict, "batchnorm", lambda: questions(shown))
