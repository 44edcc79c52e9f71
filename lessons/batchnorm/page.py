"""BatchNorm explorer: running statistics, train() vs eval(), momentum, affine and
track_running_stats, checked against nn.BatchNorm1d/2d."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import streamlit as st
import torch
from plotly.subplots import make_subplots

from core.text import N_, T
from lessons.batchnorm import layer as bn
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import localized, show_code
from ui.heavy import budget_s, compute_once, heavy_job, may_run, offer_run
from ui.i18n import _, cite, current_language, tr, translator
from ui.lesson import lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.notes_callout import callouts_of, notes_callout
from ui.settings import current_settings
from ui.tables import show_table

#: The "Steps trained" control: the training history shown is this many steps (in the URL,
#: so a link opens on the same trained layer). Train, Step and Reset change it.
STEPS_KEY = "batchnorm.steps"
#: The gate of a long replay (ui.heavy): its button's key is ``batchnorm.long_run.run``.
LONG_RUN_GATE = "batchnorm.long_run"
#: Training steps already taken when the page opens, so the chart shows a trained layer.
DEFAULT_STEPS = 60
#: Longest text a per-channel mean/std box (and a link's value for it) may hold.
MAX_CHANNEL_TEXT = 200
#: A replay estimated above ui.heavy's budget (2 s) waits for a click; above PROGRESS_SECONDS
#: it shows a progress bar.
PROGRESS_SECONDS = 1.0
EPS_OPTIONS = (1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)
MOMENTUM_MODES = (N_("float (exponential average)"), N_("None (cumulative average)"))
NORM_COLORS = "Turbo"
NORM_NAMES = ("BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm")
NORM_SPATIAL = (4, 4)  # H, W of section 3's live input: enough values per statistic, small
GREY, GREEN, RED = "#6b6b6b", "#2ca02c", "#d62728"


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _tr_error(error: BaseException | str) -> str:
    """A core error (or notice) in this session's language, its named parts too ("stream
    mean", "std after the shift" are catalog texts passed as values)."""
    text = error.args[0] if isinstance(error, BaseException) and len(error.args) == 1 else error
    if isinstance(text, T) and text.args:
        values = {k: _(v) if isinstance(v, str) and v else v for k, v in text.args.items()}
        return _(text.template).format(**values)
    return tr(text)


def _sentences(*parts: str) -> str:
    """Sentences in a row: a space between them in English, none in Chinese."""
    return ("" if current_language() == "zh" else " ").join(p for p in parts if p)


def _half_life(m: float) -> str:
    if m <= 0.0:
        return _("with m = 0 nothing new ever enters the buffers")
    if m >= 1.0:
        return _("with m = 1 only the last batch counts")
    half_life = np.log(0.5) / np.log(1 - m)
    return _("the buffers forget old batches with a half-life of {half_life:.1f} steps").format(
        half_life=half_life)


def _steps_done() -> int:
    return int(st.session_state.get(STEPS_KEY, DEFAULT_STEPS))


def _add_steps(count: int) -> None:
    """Train, Step: the control's value grows (a callback runs before the control is drawn)."""
    st.session_state[STEPS_KEY] = min(_steps_done() + int(count), bn.MAX_STEPS)


def _channel_text_usable(text: str, channels: int, *, std: bool) -> bool:
    """Whether a link's mean (or std) text gives ``channels`` values the stream accepts."""
    if len(text) > MAX_CHANNEL_TEXT:
        return False
    try:
        values = bn.parse_channel_values(text, channels, name="std" if std else "mean")
        ones = (1.0,) * channels
        bn.Stream(mean=ones if std else values, std=values if std else ones)
    except ValueError:
        return False
    return True


def _reset() -> None:
    st.session_state[STEPS_KEY] = 0


def _run(config: bn.SimConfig, steps: int,
         on_step: Callable[[int, int], None] | None = None) -> bn.History:
    return bn.simulate(
        config.stream, steps, config.batch_size, spatial=config.spatial,
        momentum=config.momentum, eps=config.eps, affine=config.affine,
        track_running_stats=config.track_running_stats, seed=config.seed, on_step=on_step,
    )


class _NotCached(Exception):
    """Raised by :func:`_simulate` asked only whether it holds a run (``_probe``): Streamlit
    stores nothing when the function raises."""


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _simulate(config: bn.SimConfig, steps: int, _ready: bn.History | None = None,
              _probe: bool = False) -> bn.History:
    """One training run per (config, steps) for the whole process: it does not depend on the
    session, so the default run on arrival is computed once for every student. ``_ready`` (not
    part of the key) stores a run computed outside, with a progress bar: a cached function
    must not draw, or Streamlit would replay the bar on every cache hit. ``_probe``: return
    the run only if the cache holds it, else raise :class:`_NotCached` (nothing computed)."""
    if _probe:
        raise _NotCached
    return _ready if _ready is not None else _run(config, steps)


def _cached_run(config: bn.SimConfig, steps: int) -> bn.History | None:
    """The run from :func:`_simulate`'s cache if it holds it now, else None; never computes.

    Asked of the cache itself: a list of the runs made would outlive the cache's entries (16,
    an hour), and a run it still named would be replayed outside the heavy-job queue without
    a progress bar. (On a miss Streamlit takes the key's compute lock; a long run is replayed
    outside it, by compute_once, and holds it only to store the result, so this does not wait
    for a replay.)"""
    try:
        return _simulate(config, steps, _probe=True)
    except _NotCached:
        return None


def _history(config: bn.SimConfig, steps: int, bar) -> bn.History:
    """The run from the cache, or computed with real progress in ``bar`` when it is long.

    A long run is one of the process's heavy jobs (it waits for its place in the queue), and
    sessions asking for the same long run at once compute it once: the later ones wait for
    the first one's result (a run is the same for everyone with these settings)."""
    if bn.estimate_simulate_seconds(config, steps) <= PROGRESS_SECONDS:
        return _simulate(config, steps)
    cached = _cached_run(config, steps)
    if cached is not None:
        return cached

    def compute() -> bn.History:
        with heavy_job(_("Training {steps} steps").format(steps=steps)):
            return _run(config, steps, _progress_hook(bar))

    def waiting() -> None:
        bar.info(_("Another visitor is running these same {steps} steps; their result is "
                   "shown here when it is ready.").format(steps=steps),
                 icon=":material/hourglass_top:")

    ran = compute_once(("batchnorm.simulate", config, steps), compute, on_wait=waiting)
    history = _simulate(config, steps, _ready=ran)
    bar.empty()
    return history


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _repeated_eval(config: bn.SimConfig, eval_batch: int, sample: int) -> list[bn.RepeatedEval]:
    return list(bn.repeated_eval(config, eval_batch=eval_batch, sample=sample))


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _loader_runs(size: int, batch: int, channels: int, seed: int) -> list[bn.LoaderRun]:
    """The DataLoader demo without and with drop_last (~0.1 s of CPU, the same for everyone)."""
    return [bn.loader_run(size, batch, drop_last=drop, channels=channels, seed=seed)
            for drop in (False, True)]


def _progress_hook(bar) -> Callable[[int, int], None]:
    """Update ``bar`` about 50 times in a run, not at every step."""

    def hook(done: int, total: int) -> None:
        if done == total or done % max(1, total // 50) == 0:
            bar.progress(done / total, text=text.format(done=done, total=total))

    text = _("Training step {done} of {total}…")

    return hook


@shared_figure(max_entries=32)
def _running_chart(config: bn.SimConfig, steps: int, channel: int) -> go.Figure:
    """Batch, true and running mean (left) and variance (right) of one channel over the steps.

    Shared by every session with these arguments. Call :func:`_history` first: a long run is
    then in :func:`_simulate`'s cache, and is not recomputed here without a progress bar.
    """
    history = _simulate(config, steps)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12)
    step_axis = list(range(1, steps + 1))  # plain lists: the browser sees the numbers as such
    for col, (batch_vals, running, true_vals, name) in enumerate((
        (history.batch_mean, history.running_mean, history.true_mean,
         _("mean, channel {channel}")),
        (history.batch_var_unbiased, history.running_var, history.true_var,
         _("variance, channel {channel}")),
    ), start=1):
        first = col == 1
        fig.add_trace(go.Scatter(x=step_axis, y=batch_vals[:, channel].tolist(),
                                 mode="markers", marker={"size": 5, "color": GREY},
                                 name=_("batch statistic"),
                                 legendgroup="batch", showlegend=first), row=1, col=col)
        fig.add_trace(go.Scatter(x=step_axis, y=true_vals[:, channel].tolist(), mode="lines",
                                 line={"dash": "dash", "color": GREEN, "width": 2},
                                 name=_("true value"), legendgroup="true",
                                 showlegend=first), row=1, col=col)
        if running is not None:
            fig.add_trace(go.Scatter(x=list(range(steps + 1)), y=running[:, channel].tolist(),
                                     mode="lines+markers" if steps == 0 else "lines",
                                     line={"width": 3, "color": RED},
                                     name="running_mean/var", legendgroup="running",
                                     showlegend=first), row=1, col=col)
        if history.shift_step is not None and history.shift_step < steps:
            fig.add_vline(x=history.shift_step + 0.5, line_dash="dot", line_color="#ff7f0e",
                          annotation_text=_("shift"), annotation_position="bottom right",
                          row=1, col=col)
        fig.update_yaxes(title_text=name.format(channel=channel), row=1, col=col)
    fig.update_xaxes(title_text=_("training step"), range=[0, steps + 1] if steps < 10 else None)
    fig.update_layout(height=400, margin={"t": 40, "b": 10, "l": 10, "r": 10},
                      font={"color": "#111111"},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    return fig


def _shown_batch(config: bn.SimConfig, steps: int) -> torch.Tensor:
    """The batch section 1 puts through train() and eval(): the last one trained on."""
    return bn.sample_batch(config.stream, max(steps - 1, 0), config.batch_size, config.spatial,
                           seed=config.seed)


def _affine(config: bn.SimConfig) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """A fresh module's γ (ones) and β (zeros), or None without affine."""
    if not config.affine:
        return None, None
    return torch.ones(config.channels), torch.zeros(config.channels)


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _comparison(config: bn.SimConfig, steps: int) -> bn.ModeComparison:
    """train() vs eval() on the shown batch, once per (config, steps) for the whole process:
    the page's numbers and :func:`_modes_chart` read the same result."""
    weight, bias = _affine(config)
    return bn.compare_modes(_shown_batch(config, steps), _simulate(config, steps).state,
                            eps=config.eps, weight=weight, bias=bias,
                            track_running_stats=config.track_running_stats,
                            momentum=config.momentum)


@shared_figure(max_entries=32)
def _modes_chart(config: bn.SimConfig, steps: int, channel: int) -> go.Figure:
    """Overlaid histograms of one channel's train() and eval() output, on shared bins."""
    comparison = _comparison(config, steps)
    y_tr = comparison.y_train[:, channel].flatten().numpy()
    y_ev = comparison.y_eval[:, channel].flatten().numpy()
    tm, ts = comparison.train_mean[channel], comparison.train_std[channel]
    em, es = comparison.eval_mean[channel], comparison.eval_std[channel]
    finite = np.concatenate([y_tr, y_ev])
    finite = finite[np.isfinite(finite)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    bins = {"start": lo, "end": hi + 1e-9, "size": max((hi - lo) / 40, 1e-6)}  # shared bins
    hist = go.Figure()
    hist.add_trace(go.Histogram(x=y_tr, name=_("train(): mean {mean:.3f}, std {std:.3f}").format(
                                    mean=tm, std=ts),
                                opacity=0.6, xbins=bins, marker_color="#1f77b4"))
    hist.add_trace(go.Histogram(x=y_ev, name=_("eval(): mean {mean:.3f}, std {std:.3f}").format(
                                    mean=em, std=es),
                                opacity=0.6, xbins=bins, marker_color="#d62728"))
    for value, color in ((tm, "#1f77b4"), (em, "#d62728")):
        if np.isfinite(value):
            hist.add_vline(x=float(value), line_color=color, line_dash="dash")
    hist.update_layout(barmode="overlay", height=340, margin={"t": 40, "b": 10},
                       xaxis_title=_("output value"), yaxis_title=_("count"),
                       legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    return hist


@shared_figure(max_entries=32)
def _norms_diagram(samples: int, channels: int, groups: int) -> go.Figure:
    """Four (channel × sample) grids; cells with one number share one mean and variance."""
    diagram = make_subplots(rows=1, cols=4, subplot_titles=NORM_NAMES, horizontal_spacing=0.04)
    for i, name in enumerate(NORM_NAMES, start=1):
        ids = bn.norm_group_ids(name, samples, channels, groups)
        diagram.add_trace(go.Heatmap(z=ids, text=ids, texttemplate="%{text}", showscale=False,
                                     colorscale=NORM_COLORS, xgap=2, ygap=2,
                                     hovertemplate=_("sample n=%{x}, channel c=%{y}<br>"
                                                     "statistic #%{z}<extra></extra>")),
                          row=1, col=i)
    diagram.update_xaxes(title_text=_("sample n"), dtick=1)
    diagram.update_yaxes(title_text=_("channel c"), dtick=1, autorange="reversed", row=1, col=1)
    diagram.update_yaxes(dtick=1, autorange="reversed")
    diagram.update_layout(height=260, margin={"t": 40, "b": 10})
    return diagram


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _norms_table(stream: bn.Stream, samples: int, groups: int, seed: int,
                 language: str) -> dict[str, list]:
    """The four normalizations by hand and by the real modules on batch 0 of the stream, as
    the table shows them: the same for every session with these arguments."""
    x = bn.sample_batch(stream, 0, samples, NORM_SPATIAL, seed=seed)
    if stream.nan_step == 0:
        x = torch.nan_to_num(x)  # a NaN would only make every difference NaN
    results = bn.compare_norms(x, groups)
    del language  # part of the cache key: the headers and the axes are in this language
    return {
        _("normalization"): [r.name for r in results],
        _("real module"): [r.module for r in results],
        _("pools over"): [tr(r.axes) for r in results],
        _("statistics (shape)"): [str(r.stats_shape) for r in results],
        _("values per statistic"): [r.values_per_stat for r in results],
        _("max |by hand − module|"): [f"{r.max_abs_diff:.1e}" for r in results],
    }


@bounded_cache(max_entries=64, ttl=SHARED_TTL_S)
def _torch_error(shape: tuple[int, ...]) -> str | None:
    """What a real module in train() says about an input of ``shape`` (None: it runs), once
    per shape for every session."""
    return bn.torch_error_for(shape, training=True)


@bounded_cache(max_entries=64, ttl=SHARED_TTL_S)
def _anatomy(channels: int, dims: int, momentum: float | None, eps: float, affine: bool,
             track: bool) -> bn.Anatomy:
    """Parameters, buffers and state_dict keys of the module with these settings: names,
    shapes, dtypes and its repr do not depend on the trained values, so sessions share it."""
    return bn.module_anatomy(bn.make_module(channels, dims, momentum=momentum, eps=eps,
                                            affine=affine, track_running_stats=track))


settings = current_settings()

layout = lesson_layout(
    N_("BatchNorm explorer"),
    N_("the red running_mean / running_var, which eval() uses, catching up with the green true "
       "values of the stream step by step; the grey dots are each batch's own statistics, which "
       "train() uses."),
    figure_share=0.66,
)

# ------------------------------------------------------------------------------------------
# Controls: the key ones beside the figure, the rest in an expander under them
# ------------------------------------------------------------------------------------------
with layout.controls:
    train_box = st.container()
    key_box = st.container()
    channel_box = st.container()
    more = st.expander(_("More settings: input, stream, module"), icon=":material/tune:")
with key_box:
    batch_size = int(st.number_input(
        _("Batch size N"), 1, 256, 16, key="batchnorm.batch_size", **BOUND,
        help=_("Try 1: BatchNorm needs more than one value per channel to compute a variance."),
    ))
    momentum_mode = st.radio(_("momentum"), MOMENTUM_MODES, key="batchnorm.momentum_mode",
                             format_func=translator(), **BOUND)
    momentum_value = float(st.number_input(
        _("momentum m"), 0.0, 1.0, 0.1, 0.01, format="%.3f", key="batchnorm.momentum", **BOUND,
        disabled=momentum_mode != MOMENTUM_MODES[0],
        help=_("PyTorch convention: the weight of the new batch in the running average."),
    ))
    momentum: float | None = momentum_value if momentum_mode == MOMENTUM_MODES[0] else None
    shift_on = st.checkbox(_("Shift the stream"), False, key="batchnorm.shift", **BOUND,
                           help=_("From step K on, the stream's mean and std change (set K and "
                                  "the change under More settings)."))
with more:
    channels = int(st.number_input(_("Channels C"), 1, 8, 3, key="batchnorm.channels", **BOUND))
    layout_name = st.radio(_("Input layout"), tuple(bn.LAYOUTS), index=2, horizontal=True,
                           key="batchnorm.layout", **BOUND)
    dims = bn.LAYOUTS[layout_name]
    side_requested = int(st.number_input(
        _("Spatial size (L, or H = W)"), 1, 100_000, 4, key="batchnorm.spatial", **BOUND,
        disabled=dims == 0, help=_("Ignored for (N, C) input."),
    ))
    # a link's text must give `channels` numbers the stream accepts, or it opens at the default
    reject_unusable_link_value(
        "batchnorm.mean", lambda text: _channel_text_usable(text, channels, std=False))
    mean_text = st.text_input(_("Mean per channel"), "2, -1, 0.5", max_chars=MAX_CHANNEL_TEXT,
                              key="batchnorm.mean", **BOUND,
                              help=_("One number for all channels, or one per channel."))
    reject_unusable_link_value(
        "batchnorm.std", lambda text: _channel_text_usable(text, channels, std=True))
    std_text = st.text_input(_("Std per channel"), "3, 0.5, 1", max_chars=MAX_CHANNEL_TEXT,
                             key="batchnorm.std", **BOUND, help=_("Must be > 0."))
    shift_step = int(st.number_input(_("Shift after step K"), 0, bn.MAX_STEPS, 30,
                                     key="batchnorm.shift_step", **BOUND, disabled=not shift_on))
    shift_mean = float(st.number_input(_("Shift: mean += "), -100.0, 100.0, 3.0, 0.5,
                                       key="batchnorm.shift_mean", **BOUND, disabled=not shift_on))
    shift_std = float(st.number_input(_("Shift: std ×"), 0.0, 100.0, 2.0, 0.25,
                                      key="batchnorm.shift_std", **BOUND, disabled=not shift_on))
    nan_on = st.checkbox(_("Inject one NaN"), False, key="batchnorm.inject_nan", **BOUND,
                         help=_("One NaN in channel 0 of one batch of the stream."))
    nan_step = int(st.number_input(_("NaN in batch number"), 0, bn.MAX_STEPS, 5,
                                   key="batchnorm.nan_step", **BOUND, disabled=not nan_on))
    eps = float(st.select_slider("eps", EPS_OPTIONS, value=1e-5, key="batchnorm.eps", **BOUND,
                                 format_func=lambda v: f"{v:g}"))
    affine = st.checkbox(_("affine (γ and β)"), True, key="batchnorm.affine", **BOUND,
                         help=_("Learnable weight γ and bias β per channel."))
    track = st.checkbox("track_running_stats", True, key="batchnorm.track", **BOUND)
with channel_box:
    channel = int(st.selectbox(_("Channel to plot"), list(range(channels)),
                               key="batchnorm.channel", **BOUND))

# ------------------------------------------------------------------------------------------
# Validate the inputs (core raises ValueError with a message for people)
# ------------------------------------------------------------------------------------------
cap = bn.cap_spatial(side_requested, dims=dims, batch_size=batch_size, channels=channels)
spatial: tuple[int, ...] = (cap.side,) * dims
try:
    mean = bn.parse_channel_values(mean_text, channels, name=N_("stream mean"))
    std = bn.parse_channel_values(std_text, channels, name=N_("stream std"))
    shifted_mean = tuple(m + shift_mean for m in mean) if shift_on else None
    shifted_std = tuple(s * shift_std for s in std) if shift_on else None
    stream = bn.Stream(mean=mean, std=std, shift_step=shift_step if shift_on else None,
                       shifted_mean=shifted_mean, shifted_std=shifted_std,
                       nan_step=nan_step if nan_on else None)
except ValueError as error:
    with layout.figure:
        st.error(_tr_error(error) + "\n\n"
                 + _("Hint: type finite numbers separated by commas, one per channel "
                     "(or one for all); a std must be > 0, and the 'std ×' factor of the shift "
                     "too."),
                 icon=":material/error:")
    st.stop()

config = bn.SimConfig(stream=stream, batch_size=batch_size, spatial=spatial, momentum=momentum,
                      eps=eps, affine=affine, track_running_stats=track, seed=settings.seed)
shape = config.shape
torch_error = _torch_error(shape)  # the real module's answer

# ------------------------------------------------------------------------------------------
# Training controls and state
# ------------------------------------------------------------------------------------------
with train_box:
    # The trained layer is a control, not a hidden counter: a link opens on the same step, and
    # Train, Step and Reset only change this value (their callbacks run before it is drawn).
    steps_trained = int(st.number_input(
        _("Steps trained"), 0, bn.MAX_STEPS, DEFAULT_STEPS, key=STEPS_KEY, **BOUND,
        help=_("The chart replays this many training steps on the stream from a fresh layer. "
               "Type a number to jump there, or use Train, Step and Reset."),
    ))
    n_steps = int(st.number_input(_("Steps per Train"), 1, 500, 20, key="batchnorm.n_steps",
                                  **BOUND))
    t1, t2, t3 = st.columns(3, gap="small")
    t1.button(_("Train"), key="batchnorm.train", on_click=_add_steps, args=(n_steps,),
              disabled=torch_error is not None, type="primary", width="stretch",
              help=_("Train {n} more steps on the next batches of the stream.").format(
                  n=n_steps))
    t2.button(_("Step"), key="batchnorm.step", on_click=_add_steps, args=(1,),
              disabled=torch_error is not None, width="stretch", help=_("Train one more step."))
    t3.button(_("Reset"), key="batchnorm.reset", on_click=_reset, width="stretch",
              help=_("Back to a fresh layer (0 steps)."))

steps = steps_trained
capped_message = None
if steps >= bn.MAX_STEPS:
    capped_message = _("The history is capped at {max_steps} steps: Train and Step add no "
                       "more.").format(max_steps=bn.MAX_STEPS)
if torch_error is not None:
    steps = 0
requested_steps = steps
estimate = bn.estimate_simulate_seconds(config, steps)
if not may_run(LONG_RUN_GATE, estimate, (config, steps)):  # a link or a Train click alike
    steps = min(steps, bn.affordable_steps(config, budget_s()))

with layout.figure:
    history = _history(config, steps, st.empty())
    show_chart(
        _running_chart(config, steps, channel),
        alt=_("Line charts of channel {channel} over {steps} training steps: the running mean "
              "and running variance (red) approach the stream's true mean and variance (green "
              "dashed); grey dots are each batch's own mean and variance.").format(
                  channel=channel, steps=steps),
        key="batchnorm.running_chart",
    )
    st.markdown(
        _("**{steps}** training steps · input `{shape}` · `nn.{module}` · "
          "{per_channel} values per channel per batch. Changing a control "
          "replays the same steps on the same batches (same seed) with the new settings.").format(
              steps=steps, shape=shape, module=config.module_name,
              per_channel=int(np.prod(shape) // shape[1]))
    )
    if steps < requested_steps:
        offer_run(
            LONG_RUN_GATE, estimate, (config, requested_steps),
            message=_("Replaying {requested} steps of {values:,}-value batches takes "
                      "about {seconds:.0f} s on this CPU, so the chart shows the first "
                      "{steps}.").format(requested=requested_steps, values=int(np.prod(shape)),
                                         seconds=estimate, steps=steps),
            label=_("Run all {requested} steps (about {seconds:.0f} s)").format(
                requested=requested_steps, seconds=estimate),
        )
    if capped_message:
        st.info(capped_message, icon=":material/info:")
    if cap.notice:
        st.warning(tr(cap.notice), icon=":material/compress:")
    if momentum == 0.0:
        st.warning(_("momentum = 0: the running statistics never move from their initial "
                     "values (mean 0, var 1), so eval() normalizes every batch with 0 and 1 "
                     "forever."),
                   icon=":material/warning:")
    elif momentum == 1.0:
        st.warning(_("momentum = 1: the running statistics are replaced by the last batch's "
                     "statistics at every step, so eval() depends on whichever batch came last "
                     "(no averaging)."), icon=":material/warning:")
    if torch_error is not None:
        st.error(_("nn.{module} in train() says:").format(module=config.module_name)
                 + f"\n\n`ValueError: {torch_error}`\n\n"
                 + _("Hint: raise the batch size or the spatial size."), icon=":material/error:")
        st.markdown(_(
            "**Why?** In training BatchNorm normalizes each channel with the mean and variance "
            "of the values it sees in *this* batch: N · spatial values per channel. With "
            "input `{shape}` that is one value, whose variance is 0 (biased) or 0/0 "
            "(unbiased), so every output would be exactly β and `running_var` would become NaN. "
            "PyTorch refuses instead. eval() with running statistics still works on a single "
            "sample, and so does N = 1 with a spatial size above 1 (then the statistics come "
            "from one image's pixels).").format(shape=shape)
        )
    elif steps == 0:
        st.info(_("No training steps yet: the red dot is the fresh buffers (mean 0, var 1). "
                  "Press **Train** or **Step**."), icon=":material/info:")
    elif batch_size == 1:
        st.info(
            _("Batch size 1 trains here because each channel still has {values} "
              "spatial values. PyTorch checks values per channel (N·H·W), not N. The batch "
              "statistics then describe a single image, so the running statistics are "
              "noisier.").format(values=int(np.prod(spatial))),
            icon=":material/info:",
        )
    if not track:
        st.info(_("track_running_stats=False: the module has no running_mean/running_var "
                  "buffers, so there is no red line; only the batch statistics exist."),
                icon=":material/info:")
    if history.first_nan_step is not None:
        st.warning(
            _("A NaN in batch {nan_step} entered the running statistics at step "
              "{first}. running_mean/var of channel 0 stay NaN forever: "
              "(1 − m)·NaN + m·x is NaN, so every later eval() output of that channel is NaN "
              "too. Check your data (torch.isfinite) before it reaches a BatchNorm "
              "layer.").format(nan_step=nan_step, first=history.first_nan_step),
            icon=":material/warning:",
        )
    elif nan_on and nan_step >= steps and torch_error is None:
        st.info(_("The NaN sits in batch {nan_step}; train past step {nan_step} to see it "
                  "arrive.").format(nan_step=nan_step), icon=":material/info:")

shown_index = max(steps - 1, 0)
x = _shown_batch(config, steps)
weight, bias = _affine(config)


def _buffers_tab() -> None:
    """Parameters vs buffers of the live module."""
    anatomy = _anatomy(channels, dims, momentum, eps, affine, track)
    st.code(anatomy.module_repr, language="text")
    b1, b2, b3 = st.columns(3)
    b1.markdown("**`named_parameters()`**")
    show_table({_("name"): [p[0] for p in anatomy.parameters] or [_("(none)")],
                _("shape"): [str(p[1]) for p in anatomy.parameters] or [""],
                "requires_grad": [str(p[2]) for p in anatomy.parameters] or [""]}, where=b1)
    b2.markdown("**`named_buffers()`**")
    show_table({_("name"): [b[0] for b in anatomy.buffers] or [_("(none)")],
                _("shape"): [str(b[1]) for b in anatomy.buffers] or [""],
                "dtype": [b[2] for b in anatomy.buffers] or [""]}, where=b2)
    b3.markdown("**`state_dict().keys()`**")
    show_table({_("key"): list(anatomy.state_dict_keys) or [_("(empty)")]}, where=b3)
    if affine:
        receives = _("An optimizer built with `torch.optim.SGD(bn.parameters(), lr=...)` "
                     "receives **{n}** tensors (weight, bias).")
    else:
        receives = _("An optimizer built with `torch.optim.SGD(bn.parameters(), lr=...)` "
                     "receives **{n}** tensors (affine=False: nothing to learn).")
    st.markdown(_sentences(
        receives.format(n=anatomy.optimizer_tensors),
        _("The running statistics are registered with `register_buffer`: they are saved in "
          "`state_dict()` and moved by `.to(device)`, but have no gradient and are never "
          "touched by the optimizer. Only a forward pass in train() changes them."),
        "" if track else _("With track_running_stats=False they do not exist at all."),
    ))


def _update_tab() -> None:
    """The last running-statistics update, with the real numbers."""
    explanation = bn.explain_update(history, channel, momentum)
    if explanation is None:
        st.info(_("No update to show: track_running_stats=False (no buffers).") if not track
                else _("No update to show: no training step yet."))
    else:
        e = explanation
        factor_words = (f"m = momentum = {_fmt(e.factor)}" if momentum is not None
                        else f"m = {e.factor_text} = {_fmt(e.factor)}")
        st.markdown(_("Step {step}, channel {channel}: {factor}; the batch had "
                      "n = N·spatial = {n} values per channel.").format(
                          step=e.step, channel=channel, factor=factor_words, n=e.n))
        st.latex(r"\text{running\_mean} \leftarrow (1-m)\,\text{running\_mean} + m\,\mu_B"
                 rf"= (1-{_fmt(e.factor)})\cdot{_fmt(e.old_mean)} + {_fmt(e.factor)}\cdot"
                 rf"{_fmt(e.batch_mean)} = {_fmt(e.new_mean)}")
        st.latex(r"\text{running\_var} \leftarrow (1-m)\,\text{running\_var} + m\,"
                 r"\sigma^2_{B,\text{unbiased}}"
                 rf"= (1-{_fmt(e.factor)})\cdot{_fmt(e.old_var)} + {_fmt(e.factor)}\cdot"
                 rf"{_fmt(e.batch_var_unbiased)} = {_fmt(e.new_var)}")
        st.markdown(_sentences(
            _("`num_batches_tracked` went from {before} to {after}.").format(
                before=e.step - 1, after=e.step),
            (_("With momentum=None the factor is 1/num_batches_tracked, which makes the "
                 "running value the plain average of all batch statistics so far (exact for "
                 "a fixed dataset, slow to follow a shift).") if momentum is None else
               _("With a fixed momentum the weight of a batch seen j steps ago is "
                 "m·(1−m)^j: {half_life}.").format(half_life=_half_life(e.factor))),
        ))


def _variance_tab() -> None:
    """Biased vs unbiased variance of the shown channel."""
    if torch_error is not None:
        st.info(_("With one value per channel the unbiased variance is 0/0: that is the "
                  "error beside the chart."))
    else:
        n_values = int(np.prod(shape) // shape[1])
        _mean, bvar, bvar_u = bn.batch_stats(x)
        st.markdown(_(
            "Channel {channel} of the shown batch has n = {n} values. "
            "Biased variance Σ(x−μ)²/n = **{biased}** is what train() "
            "divides by (as √(var + eps)). Unbiased Σ(x−μ)²/(n−1) = biased × n/(n−1) = "
            "{biased} × {n}/{n_minus_1} = "
            "**{unbiased}** is what goes into running_var. "
            "The ratio n/(n−1) = {ratio:.4f} matters for small batches "
            "(2 values: ×2) and vanishes for large ones.").format(
                channel=channel, n=n_values, n_minus_1=n_values - 1,
                biased=_fmt(bvar[channel].item()), unbiased=_fmt(bvar_u[channel].item()),
                ratio=n_values / (n_values - 1))
        )


def _keras_tab() -> None:
    """PyTorch vs Keras momentum, with a converter."""
    st.markdown(_("PyTorch's momentum is the weight of the **new** batch; Keras's "
                  "`BatchNormalization(momentum=...)` is the weight of the **old** average. "
                  "So PyTorch 0.1 ↔ Keras 0.9 (and Keras' default 0.99 ↔ PyTorch 0.01)."))
    if momentum is None:
        st.markdown(_("The current momentum=None (cumulative average) has no Keras "
                      "equivalent."))
    else:
        st.markdown(_("Current PyTorch momentum {pytorch:g} ↔ Keras momentum "
                      "**{keras:g}**.").format(
                          pytorch=momentum, keras=bn.pytorch_to_keras_momentum(momentum)))
    k1, k2 = st.columns(2)
    direction = k1.radio(_("Convert"), ("PyTorch → Keras", "Keras → PyTorch"),
                         key="batchnorm.keras_direction", **BOUND, horizontal=True)
    # a lazy tab: persist_state (BOUND) keeps the value while the tab is closed
    value = float(k2.number_input(_("momentum"), 0.0, 1.0, 0.1, 0.01, format="%.4f",
                                  key="batchnorm.keras_value", **BOUND))
    if direction == "PyTorch → Keras":
        st.markdown(f"PyTorch {value:g} → Keras **{bn.pytorch_to_keras_momentum(value):g}**")
    else:
        st.markdown(f"Keras {value:g} → PyTorch **{bn.keras_to_pytorch_momentum(value):g}**")


def _frozen_tab() -> None:
    """Two ways to freeze BatchNorm, checked on the live buffers."""
    st.markdown(_(
        "\"Frozen BN\" means normalizing with fixed statistics while the rest of the network "
        "trains (fine-tuning with small batches, detection backbones). Two ways:\n"
        "1. Call `.eval()` on every BatchNorm after `model.train()`: the buffers stop updating "
        "and eval() statistics are used; γ and β still learn unless you set "
        "`requires_grad_(False)`.\n"
        "2. Replace the layers with `torchvision.ops.FrozenBatchNorm2d`: weight, bias and the "
        "running statistics are all buffers, so nothing can change them."
    ))
    st.code(localized("model.train()\nfor m in model.modules():\n    if isinstance(m, "
                      "nn.modules.batchnorm._BatchNorm):\n        m.eval()  # freeze the "
                      "running statistics"), language="python")
    if comparison is not None and track:
        frozen = bn.frozen_check(x, history.state, comparison.y_eval, eps=eps, weight=weight,
                                 bias=bias)
        st.markdown(_(
            "Live check: `FrozenBatchNorm2d({channels}, eps={eps:g})` loaded from the current "
            "buffers has **{parameters}** parameters and buffers "
            "`{buffers}`; on the shown batch it differs from our eval() "
            "output by at most **{diff:.2g}**.").format(
                channels=channels, eps=eps, parameters=frozen.parameters,
                buffers=", ".join(frozen.buffers), diff=frozen.max_abs_diff_vs_eval)
        )
    elif not track:
        st.info(_("track_running_stats=False: there are no running statistics to freeze."))

def _formula_tab() -> None:
    """The formula with this batch's numbers (notes 000:11, 002:801-805)."""
    st.caption(_("The {ref} list the symbols of the PyTorch 1.10 "
                 "documentation (γ, β, E[x], Var[x]); the {missing} "
                 "announce the formula and stop. Here it is, for one element of the batch shown "
                 "in section 1 and the channel chosen beside the chart.").format(
                     ref=cite(bn.NOTES_REFS['formula']),
                     missing=cite(bn.NOTES_REFS['formula_missing'])))
    f1, f2, f3, f4 = st.columns(4)
    # a lazy tab: persist_state (BOUND) keeps these values while the tab is closed
    sample_raw = int(f1.number_input(_("sample n"), 0, 255, 0, key="batchnorm.formula_sample",
                                     **BOUND))
    positions = int(np.prod(spatial)) if spatial else 1
    position_raw = int(f2.number_input(_("spatial position (flat)"), 0, 99_999, 0,
                                       key="batchnorm.formula_position", **BOUND,
                                       disabled=dims == 0,
                                       help=_("Index into the L or H×W positions, row by row.")))
    gamma = float(f3.number_input(_("γ (weight, every channel)"), -10.0, 10.0, 1.5, 0.25,
                                  key="batchnorm.formula_gamma", **BOUND, disabled=not affine))
    beta = float(f4.number_input(_("β (bias, every channel)"), -10.0, 10.0, 0.25, 0.25,
                                 key="batchnorm.formula_beta", **BOUND, disabled=not affine))
    f_sample = min(sample_raw, batch_size - 1)
    f_position = min(position_raw, positions - 1) if dims else 0
    if (f_sample, f_position) != (sample_raw, position_raw if dims else 0):
        st.caption(_("The batch has {samples} samples and {positions} positions per channel: "
                     "following sample {sample}, position {position}.").format(
                         samples=batch_size, positions=positions, sample=f_sample,
                         position=f_position))
    f_weight, f_bias = (gamma, beta) if affine else (None, None)
    if torch_error is not None:
        st.info(_("The formula needs the batch's variance, and each channel of this input holds "
                  "one value: see the *A batch of one* tab."), icon=":material/info:")
    else:
        try:
            check = bn.formula_check(x, sample=f_sample, channel=channel, position=f_position,
                                     eps=eps, weight=f_weight, bias=f_bias)
        except ValueError as error:
            st.error(_tr_error(error) + "\n\n" + _("Hint: pick another element or eps."),
                     icon=":material/error:")
        else:
            affine_tex = (rf"\cdot {_fmt(check.weight)} + {_fmt(check.bias)}" if affine else "")
            st.latex(r"y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}}"
                     + (r"\cdot\gamma + \beta" if affine else ""))
            st.latex(rf"y_{{{','.join(str(i) for i in check.index)}}} = "
                     rf"\frac{{{check.x:.6g} - ({check.mean:.6g})}}"
                     rf"{{\sqrt{{{check.var_biased:.6g} + {check.eps:g}}}}}{affine_tex}"
                     rf" = {check.y_formula:.7g}")
            st.markdown(
                _("E[x] and Var[x] are channel {channel}'s mean and **biased** variance over all "
                  "n = N·spatial = {n} values of the batch (`x.var(dims, correction=0)`); "
                  "ε = eps = {eps:g}").format(channel=channel, n=check.n, eps=check.eps)
                + (_(", γ = {gamma:g}, β = {beta:g}.").format(gamma=check.weight, beta=check.bias)
                   if affine else _("; affine=False: no γ, β."))
            )
            r1, r2, r3 = st.columns(3)
            r1.metric(_("formula (float64)"), f"{check.y_formula:.7g}")
            r2.metric(_("nn.{module} in train()").format(module=check.module_name),
                      f"{check.y_module:.7g}")
            r3.metric(_("|formula − module|"), f"{check.abs_diff:.1e}")
            if check.matches:
                if check.matches_unbiased:
                    matched = _(
                        "Equal to float32 precision: the module's float32 output is {ulps:.1f} "
                        "float32 steps from the exact formula. With the unbiased variance "
                        "({var:.6g}, ×{n}/{n_minus_1}) the formula would give {y:.7g}: also "
                        "within float32 precision here, because n is large or x sits at the "
                        "mean.")
                else:
                    matched = _(
                        "Equal to float32 precision: the module's float32 output is {ulps:.1f} "
                        "float32 steps from the exact formula. With the unbiased variance "
                        "({var:.6g}, ×{n}/{n_minus_1}) the formula would give {y:.7g}, which is "
                        "not the module's output: BatchNorm normalizes with the biased variance.")
                st.success(matched.format(ulps=check.ulps, var=check.var_unbiased, n=check.n,
                                          n_minus_1=check.n - 1, y=check.y_formula_unbiased),
                           icon=":material/check_circle:")
            elif not np.isfinite(check.y_module):
                st.warning(_("This batch holds the injected NaN: the mean, the variance and every "
                             "output of that channel are NaN."), icon=":material/warning:")
            else:
                st.error(_("The formula and nn.{module} disagree by "
                           "{diff:.3g}: this torch computes BatchNorm differently.").format(
                               module=check.module_name, diff=check.abs_diff),
                         icon=":material/error:")
            show_code(bn.formula_snippet(config, shown_index, sample=f_sample, channel=channel,
                                         position=f_position, weight=f_weight, bias=f_bias),
                      title=N_("Reproduce the formula check in Python"))


def _batch_of_one_tab() -> None:
    """A batch of one, and drop_last (notes 000:76)."""
    st.caption(_("The {ref} (its list of errors): BatchNorm on a "
                 "1×1 feature map with batch size 1 has one value per channel and fails in "
                 "training; the remedy is a batch size above 1 and a DataLoader with "
                 "drop_last.").format(ref=cite(bn.NOTES_REFS['batch_of_one'])))
    one_layout = st.radio(_("Input"), ("(1, C)", "(1, C, 1, 1)"), horizontal=True,
                          key="batchnorm.one_layout", **BOUND)
    one = bn.batch_of_one(channels, 0 if one_layout == "(1, C)" else 2, seed=settings.seed)
    o1, o2 = st.columns(2)
    with o1:
        st.markdown(_("**`nn.{module}` in train() on `{shape}`** raises:").format(
            module=one.module_name, shape=one.shape))
        st.code(one.train_error or _("(no error: this torch accepts it)"), language="text",
                wrap_lines=True)
    with o2:
        st.markdown(_("**in eval()** (fresh running statistics 0 and 1) it works:"))
        st.code(", ".join(f"{v:.4f}" for v in one.eval_output), language="text")
    st.markdown(_("Training needs more than one value per channel (N·H·W > 1). A dataset whose "
                  "size is one more than a multiple of the batch size ends with a batch of one:"))
    d1, d2 = st.columns(2)
    loader_size = int(d1.number_input(_("dataset size"), 1, bn.MAX_LOADER_DATASET, 9,
                                      key="batchnorm.loader_size", **BOUND))
    loader_batch = int(d2.number_input(_("DataLoader batch_size"), 1, bn.MAX_LOADER_BATCH, 4,
                                       key="batchnorm.loader_batch", **BOUND))
    runs = _loader_runs(loader_size, loader_batch, channels, settings.seed)
    for column, run in zip(st.columns(2), runs, strict=True):
        with column:
            shown_sizes = list(run.batch_sizes[:12]) + (["…"] if len(run.batch_sizes) > 12 else [])
            st.markdown(_("**drop_last={drop_last}**: {count} batches, sizes "
                          "`{sizes}`").format(drop_last=run.drop_last,
                                              count=len(run.batch_sizes), sizes=shown_sizes))
            if run.error is None:
                st.code(_("trained on all {n} batches").format(n=run.batches_trained),
                        language="text")
            else:
                st.code(_("batch {n}: {error}").format(n=run.failed_batch, error=run.error),
                        language="text", wrap_lines=True)
    st.info(tr(bn.explain_loader(*runs)), icon=":material/info:")
    show_code(bn.batch_of_one_snippet(channels, 0 if one_layout == "(1, C)" else 2)
              + "\n\n# --- the DataLoader remedy ---\n\n"
              + bn.loader_snippet(loader_size, loader_batch, channels),
              title=N_("Reproduce the batch-of-one error and drop_last in Python"))


def _evaluate_twice_tab() -> None:
    """Repeated evaluation and track_running_stats (notes 002:795)."""
    st.caption(_("The {ref}: with track_running_stats=False each "
                 "evaluation of the same trained model on the same test set gives different "
                 "results, because shuffling changes which samples share a mini-batch; with True "
                 "the results are the same every time. Checked here: two modules trained on the "
                 "same 30 batches of the stream above (16 samples each), then two shuffled eval() "
                 "passes over a 12-sample test set.").format(
                     ref=cite(bn.NOTES_REFS['repeated_eval'])))
    e1, e2 = st.columns(2)
    eval_batch = int(e1.number_input(_("evaluation batch size"), 1, 12, 4,
                                     key="batchnorm.eval_batch", **BOUND))
    eval_sample = int(e2.number_input(_("follow test sample"), 0, 11, 0,
                                      key="batchnorm.eval_sample", **BOUND))
    eval_cap = bn.cap_spatial(side_requested, dims=dims, batch_size=16, channels=channels)
    eval_config = bn.SimConfig(stream=stream, spatial=(eval_cap.side,) * dims, eps=eps,
                               seed=settings.seed)
    with st.spinner(_("Training and evaluating twice…")):
        eval_results = _repeated_eval(eval_config, eval_batch, eval_sample)
    verdict_words = {
        "identical": _("Outputs are identical in both passes: eval() normalizes with "
                       "running_mean/running_var, so the other samples in the batch do not "
                       "matter."),
        "rounding": _("Outputs are the same up to float rounding: each pass saw the same groups "
                      "of samples in another order."),
        "differ": _("Outputs are different: eval() normalizes with each mini-batch's own "
                    "statistics, so the output depends on which samples share the batch."),
    }
    for column, result in zip(st.columns(2), eval_results, strict=True):
        with column, st.container(border=True, key=f"batchnorm-eval-{result.track_running_stats}"):
            st.markdown(f"**track_running_stats={result.track_running_stats}**")
            if result.error is not None:
                st.code(result.error, language="text", wrap_lines=True)
                st.markdown(_("A batch with one value per channel cannot be normalized with its "
                              "own statistics, in eval() too (the message still says “when "
                              "training”)."))
                continue
            st.metric(_("max |pass 1 − pass 2| over the test set"), f"{result.max_abs_diff:.3g}")
            out1 = result.outputs[0][channel].flatten()[:4].tolist()
            out2 = result.outputs[1][channel].flatten()[:4].tolist()
            st.markdown(_(
                "Sample {sample}, channel {channel}: pass 1 `{out1}` (batch with samples "
                "{mates1}), pass 2 `{out2}` (with {mates2}).").format(
                    sample=result.sample, channel=channel,
                    out1=", ".join(f"{v:.4f}" for v in out1), mates1=list(result.batch_mates[0]),
                    out2=", ".join(f"{v:.4f}" for v in out2), mates2=list(result.batch_mates[1]))
            )
            text = verdict_words[result.verdict]
            if result.verdict == "differ":
                st.warning(text, icon=":material/shuffle:")
            else:
                st.success(text, icon=":material/check_circle:")
    if eval_cap.notice:
        st.caption(_("Spatial size for this demo: {notice}").format(notice=tr(eval_cap.notice)))
    st.caption(_("The notes are right here. With track_running_stats=True the results also "
                 "depend on the batch if model.eval() is forgotten: train() normalizes with the "
                 "batch and moves the running statistics at every evaluation batch."))
    show_code(bn.repeated_eval_snippet(eval_config, eval_batch=eval_batch),
              title=N_("Reproduce the two evaluations in Python"))


def _notes_wrong_tab() -> None:
    """Where the notes are wrong or incomplete."""
    for callout in callouts_of("lessons.batchnorm.layer").values():
        notes_callout(callout)


# ------------------------------------------------------------------------------------------
# Details: everything below the figure
# ------------------------------------------------------------------------------------------
with layout.details:
    # ------------------------------------------------------------------------------------------
    # 1. train() vs eval() on the same batch
    # ------------------------------------------------------------------------------------------
    st.header(_("1. The same batch through train() and eval()"), anchor=False)
    comparison: bn.ModeComparison | None = None
    if torch_error is not None:
        st.info(_("train() cannot run on this input (see the error beside the chart), so there "
                  "is nothing to compare."), icon=":material/info:")
    else:
        comparison = _comparison(config, steps)
        if steps:
            which = _("Batch number {index} of the stream (the last one trained on), channel "
                      "{channel}, after {steps} steps.")
        else:
            which = _("Batch number {index} of the stream (the first one, not trained on yet), "
                      "channel {channel}, after {steps} steps.")
        st.caption(which.format(index=shown_index, channel=channel, steps=steps))
        tm, ts = comparison.train_mean[channel], comparison.train_std[channel]
        em, es = comparison.eval_mean[channel], comparison.eval_std[channel]
        show_chart(_modes_chart(config, steps, channel), width="stretch",
                   key="batchnorm.modes_chart",
                   alt=_("Overlaid histograms of channel {channel}'s output for one batch: "
                         "train() (blue) has mean {tm:.2f} and std {ts:.2f}, eval() (red) mean "
                         "{em:.2f} and std {es:.2f}.").format(
                             channel=channel, tm=tm, ts=ts, em=em, es=es))
        # the numbers a lesson link is about, under one hook for browser tests
        numbers = st.container(key="batchnorm-modes")  # .st-key-batchnorm-modes
        m1, m2, m3, m4, m5 = numbers.columns(5)
        vs_train = _("{delta:+.3f} vs train")
        m1.metric(_("train() mean"), f"{tm:.3f}")
        m2.metric(_("train() std"), f"{ts:.3f}")
        m3.metric(_("eval() mean"), f"{em:.3f}", delta=vs_train.format(delta=em - tm),
                  delta_color="off")
        m4.metric(_("eval() std"), f"{es:.3f}", delta=vs_train.format(delta=es - ts),
                  delta_color="off")
        m5.metric(_("max |train − eval|"), f"{comparison.max_abs_gap:.3g}")

        bmean, bvar, _unbiased = bn.batch_stats(x)
        verdict = (
            _("**train()** used {source}: mean {mean}, var {var} for channel {channel}.").format(
                source=tr(comparison.train_source), mean=_fmt(bmean[channel].item()),
                var=_fmt(bvar[channel].item()), channel=channel)
            + "\n\n" + _("**eval()** used {source}").format(source=tr(comparison.eval_source))
        )
        if track:
            verdict += _(": running_mean {mean}, running_var {var}.").format(
                mean=_fmt(history.state.running_mean[channel].item()),
                var=_fmt(history.state.running_var[channel].item()))
            if abs(em - tm) < 0.1 and abs(es - ts) < 0.1:
                numbers.success(verdict + "\n\n" + _(
                    "The running statistics have caught up with the "
                    "stream: eval() output of channel {channel} is within 0.1 of "
                    "mean 0 / std 1; what remains is batch-to-batch noise.").format(
                        channel=channel),
                                icon=":material/check_circle:")
            else:
                numbers.warning(verdict + "\n\n" + _(
                    "The running statistics still differ from this "
                    "batch's, so eval() output is not mean 0 / std 1: this is the "
                    "train/eval gap."),
                                icon=":material/compare_arrows:")
        else:
            numbers.info(_sentences(verdict, _("Both histograms coincide (max gap {gap:.1g}).")
                                    .format(gap=comparison.max_abs_gap)),
                         icon=":material/info:")

    # ------------------------------------------------------------------------------------------
    # 2. Explanations tied to the live module
    # ------------------------------------------------------------------------------------------
    st.header(_("2. What is inside the module"), anchor=False)
    # on_change="rerun": only the open tab runs and is drawn (lazy tabs), so a training step
    # does not redraw four explanations nobody is looking at.
    tab_buf, tab_upd, tab_var, tab_keras, tab_frozen = st.tabs(
        [_("Parameters vs buffers"), _("Update formulas"), _("Biased vs unbiased"),
         _("Keras momentum"), _("Frozen BN")],
        key="batchnorm.module_tab", on_change="rerun", bind="query-params")
    with tab_buf:
        if tab_buf.open:
            _buffers_tab()
    with tab_upd:
        if tab_upd.open:
            _update_tab()
    with tab_var:
        if tab_var.open:
            _variance_tab()
    with tab_keras:
        if tab_keras.open:
            _keras_tab()
    with tab_frozen:
        if tab_frozen.open:
            _frozen_tab()
    # ------------------------------------------------------------------------------------------
    # 3. Beyond BatchNorm
    # ------------------------------------------------------------------------------------------
    st.header(_("3. Which axes do BatchNorm, LayerNorm, InstanceNorm and GroupNorm pool?"),
              anchor=False)
    divisors = [g for g in range(1, channels + 1) if channels % g == 0]
    proper = [g for g in divisors if 1 < g < channels]
    groups = int(st.selectbox(
        _("GroupNorm groups G"), divisors, index=divisors.index(proper[-1]) if proper else 0,
        key="batchnorm.groups", **BOUND,
        help=_("G must divide C. G = 1 is LayerNorm over (C, H, W); G = C is InstanceNorm."),
    ))
    demo_n = min(max(batch_size, 2), 6)
    show_chart(_norms_diagram(demo_n, channels, groups), width="stretch",
               key="batchnorm.norms_chart",
               alt=_("Four grids of samples (columns) by channels (rows); cells with the same "
                     "number share one mean and variance: BatchNorm one per channel row, "
                     "LayerNorm one per sample column, InstanceNorm one per cell, GroupNorm one "
                     "per group of {size} channels in a sample.").format(size=channels // groups))
    st.caption(_("Each cell is one (sample, channel) pair holding all H×W positions; cells with "
                 "the same number and colour share one mean and variance. All four always pool H "
                 "and W. GroupNorm with G = 1 equals LayerNorm, with G = C it equals "
                 "InstanceNorm."))
    show_table(_norms_table(stream, demo_n, groups, settings.seed, current_language()))
    st.caption(_("Live input: {shape} drawn from the "
                 "stream above (batch 0). Only BatchNorm mixes samples, which is why only "
                 "BatchNorm has running statistics and a train/eval difference.").format(
                     shape=bn.input_shape(demo_n, channels, NORM_SPATIAL)))

    # ------------------------------------------------------------------------------------------
    # 4. The notes' lessons, run live
    # ------------------------------------------------------------------------------------------
    st.header(_("4. What the notes teach about BatchNorm, run live"), anchor=False)
    st.caption(_("Each demo runs the real nn.BatchNorm now and cites the place in the notes "
                 "(FILE:LINE in the notes folder) it checks."))

    # Lazy tabs (on_change="rerun"): only the open demo runs, so a change beside the chart
    # does not redraw four demos (a formula check, two DataLoaders, two trained modules).
    tab_formula, tab_one, tab_twice, tab_wrong = st.tabs(
        [_("The formula"), _("A batch of one"),
         _("Evaluating twice"), _("Where the notes are wrong")],
        key="batchnorm.notes_tab", on_change="rerun", bind="query-params")
    for tab, draw in ((tab_formula, _formula_tab), (tab_one, _batch_of_one_tab),
                      (tab_twice, _evaluate_twice_tab), (tab_wrong, _notes_wrong_tab)):
        if tab.open:
            with tab:
                draw()

    # ------------------------------------------------------------------------------------------
    # 5. Code
    # ------------------------------------------------------------------------------------------
    show_code(bn.snippet_for(config, steps))
