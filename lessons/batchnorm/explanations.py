"""The BatchNorm page's explanations: its longer texts, and what each section says about the
live numbers.

Pure (no Streamlit). The texts are catalog messages (:func:`core.text.N_`) with
``{placeholders}``; the page translates one and fills it in
(``_(explanations.RUN_SUMMARY).format(steps=...)``), so a paragraph keeps its translation
wherever it is shown. The views (:func:`chart_notices`, :func:`mode_verdict`,
:func:`formula_view`, ...) decide what a section says from the live results and return it as
:class:`ViewBlock` s: marked English (:class:`core.text.T` with the numbers, translated by the
page with ``ui.i18n.tr``) and :class:`Verbatim` numbers, LaTeX and torch's messages, which the
page draws in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import Tensor

from core.text import N_, T
from lessons.batchnorm.layer import (
    MAX_STEPS,
    BNState,
    History,
    SimConfig,
    batch_stats,
    values_per_channel,
)
from lessons.batchnorm.modes import (
    ModeComparison,
    ShownRun,
    explain_update,
    fresh_affine,
    half_life_text,
    keras_to_pytorch_momentum,
    pytorch_to_keras_momentum,
    update_latex,
)
from lessons.batchnorm.notes_demos import (
    BatchOfOne,
    FormulaCheck,
    LoaderRun,
    RepeatedEval,
    clamp_element,
    formula_check,
    formula_latex,
    formula_snippet,
)
from lessons.batchnorm.real_modules import Anatomy, frozen_check

LOOK_AT = N_(
    "the red running_mean / running_var, which eval() uses, catching up with the green true "
    "values of the stream step by step; the grey dots are each batch's own statistics, which "
    "train() uses."
)

# ----------------------------------------------------------------------------------------------
# The figure: what the chart shows and why it may not
# ----------------------------------------------------------------------------------------------

#: Alt text of the running-statistics chart.
RUNNING_CHART_ALT = N_(
    "Line charts of channel {channel} over {steps} training steps: the running mean and "
    "running variance (red) approach the stream's true mean and variance (green dashed); grey "
    "dots are each batch's own mean and variance."
)

#: Under the chart: the run it shows.
RUN_SUMMARY = N_(
    "**{steps}** training steps · input `{shape}` · `nn.{module}` · {per_channel} values per "
    "channel per batch. Changing a control replays the same steps on the same batches (same "
    "seed) with the new settings."
)

#: A replay longer than the budget shows its first steps.
LONG_RUN_MESSAGE = N_(
    "Replaying {requested} steps of {values:,}-value batches takes about {seconds:.0f} s on "
    "this CPU, so the chart shows the first {steps}."
)

HISTORY_CAPPED = N_("The history is capped at {max_steps} steps: Train and Step add no more.")

#: After a bad mean/std box.
STREAM_HINT = N_(
    "Hint: type finite numbers separated by commas, one per channel (or one for all); a std "
    "must be > 0, and the 'std ×' factor of the shift too."
)

MOMENTUM_ZERO = N_(
    "momentum = 0: the running statistics never move from their initial values (mean 0, var "
    "1), so eval() normalizes every batch with 0 and 1 forever."
)

MOMENTUM_ONE = N_(
    "momentum = 1: the running statistics are replaced by the last batch's statistics at every "
    "step, so eval() depends on whichever batch came last (no averaging)."
)

#: Beside torch's error for one value per channel.
WHY_ONE_VALUE = N_(
    "**Why?** In training BatchNorm normalizes each channel with the mean and variance of the "
    "values it sees in *this* batch: N · spatial values per channel. With input `{shape}` that "
    "is one value, whose variance is 0 (biased) or 0/0 (unbiased), so every output would be "
    "exactly β and `running_var` would become NaN. PyTorch refuses instead. eval() with "
    "running statistics still works on a single sample, and so does N = 1 with a spatial size "
    "above 1 (then the statistics come from one image's pixels)."
)

NO_STEPS_YET = N_(
    "No training steps yet: the red dot is the fresh buffers (mean 0, var 1). Press **Train** "
    "or **Step**."
)

BATCH_SIZE_ONE_TRAINS = N_(
    "Batch size 1 trains here because each channel still has {values} spatial values. PyTorch "
    "checks values per channel (N·H·W), not N. The batch statistics then describe a single "
    "image, so the running statistics are noisier."
)

UNTRACKED_NO_RED_LINE = N_(
    "track_running_stats=False: the module has no running_mean/running_var buffers, so there "
    "is no red line; only the batch statistics exist."
)

NAN_POISONS = N_(
    "A NaN in batch {nan_step} entered the running statistics at step {first}. "
    "running_mean/var of channel 0 stay NaN forever: (1 − m)·NaN + m·x is NaN, so every later "
    "eval() output of that channel is NaN too. Check your data (torch.isfinite) before it "
    "reaches a BatchNorm layer."
)

NAN_NOT_YET = N_("The NaN sits in batch {nan_step}; train past step {nan_step} to see it arrive.")

# ----------------------------------------------------------------------------------------------
# 1. The same batch through train() and eval()
# ----------------------------------------------------------------------------------------------

NOTHING_TO_COMPARE = N_(
    "train() cannot run on this input (see the error beside the chart), so there is nothing to "
    "compare."
)

SHOWN_BATCH_TRAINED = N_(
    "Batch number {index} of the stream (the last one trained on), channel {channel}, after "
    "{steps} steps."
)

SHOWN_BATCH_FRESH = N_(
    "Batch number {index} of the stream (the first one, not trained on yet), channel "
    "{channel}, after {steps} steps."
)

MODES_CHART_ALT = N_(
    "Overlaid histograms of channel {channel}'s output for one batch: train() (blue) has mean "
    "{tm:.2f} and std {ts:.2f}, eval() (red) mean {em:.2f} and std {es:.2f}."
)

CAUGHT_UP = N_(
    "The running statistics have caught up with the stream: eval() output of channel {channel} "
    "is within 0.1 of mean 0 / std 1; what remains is batch-to-batch noise."
)

NOT_CAUGHT_UP = N_(
    "The running statistics still differ from this batch's, so eval() output is not mean 0 / "
    "std 1: this is the train/eval gap."
)

# ----------------------------------------------------------------------------------------------
# 2. What is inside the module
# ----------------------------------------------------------------------------------------------

OPTIMIZER_GETS_AFFINE = N_(
    "An optimizer built with `torch.optim.SGD(bn.parameters(), lr=...)` receives **{n}** "
    "tensors (weight, bias)."
)

OPTIMIZER_GETS_NOTHING = N_(
    "An optimizer built with `torch.optim.SGD(bn.parameters(), lr=...)` receives **{n}** "
    "tensors (affine=False: nothing to learn)."
)

BUFFERS_HAVE_NO_GRADIENT = N_(
    "The running statistics are registered with `register_buffer`: they are saved in "
    "`state_dict()` and moved by `.to(device)`, but have no gradient and are never touched by "
    "the optimizer. Only a forward pass in train() changes them."
)

CUMULATIVE_FACTOR = N_(
    "With momentum=None the factor is 1/num_batches_tracked, which makes the running value the "
    "plain average of all batch statistics so far (exact for a fixed dataset, slow to follow a "
    "shift)."
)

FIXED_FACTOR = N_(
    "With a fixed momentum the weight of a batch seen j steps ago is m·(1−m)^j: {half_life}."
)

VARIANCE_UNDEFINED = N_(
    "With one value per channel the unbiased variance is 0/0: that is the error beside the "
    "chart."
)

BIASED_VS_UNBIASED = N_(
    "Channel {channel} of the shown batch has n = {n} values. Biased variance Σ(x−μ)²/n = "
    "**{biased}** is what train() divides by (as √(var + eps)). Unbiased Σ(x−μ)²/(n−1) = "
    "biased × n/(n−1) = {biased} × {n}/{n_minus_1} = **{unbiased}** is what goes into "
    "running_var. The ratio n/(n−1) = {ratio:.4f} matters for small batches (2 values: ×2) and "
    "vanishes for large ones."
)

KERAS_UPSIDE_DOWN = N_(
    "PyTorch's momentum is the weight of the **new** batch; Keras's "
    "`BatchNormalization(momentum=...)` is the weight of the **old** average. So PyTorch 0.1 ↔ "
    "Keras 0.9 (and Keras' default 0.99 ↔ PyTorch 0.01)."
)

FROZEN_BN_WAYS = N_(
    "\"Frozen BN\" means normalizing with fixed statistics while the rest of the network "
    "trains (fine-tuning with small batches, detection backbones). Two ways:\n"
    "1. Call `.eval()` on every BatchNorm after `model.train()`: the buffers stop updating and "
    "eval() statistics are used; γ and β still learn unless you set `requires_grad_(False)`.\n"
    "2. Replace the layers with `torchvision.ops.FrozenBatchNorm2d`: weight, bias and the "
    "running statistics are all buffers, so nothing can change them."
)

FROZEN_LIVE_CHECK = N_(
    "Live check: `FrozenBatchNorm2d({channels}, eps={eps:g})` loaded from the current buffers "
    "has **{parameters}** parameters and buffers `{buffers}`; on the shown batch it differs "
    "from our eval() output by at most **{diff:.2g}**."
)

# ----------------------------------------------------------------------------------------------
# 3. Which axes the four normalizations pool
# ----------------------------------------------------------------------------------------------

NORMS_DIAGRAM_ALT = N_(
    "Four grids of samples (columns) by channels (rows); cells with the same number share one "
    "mean and variance: BatchNorm one per channel row, LayerNorm one per sample column, "
    "InstanceNorm one per cell, GroupNorm one per group of {size} channels in a sample."
)

NORMS_CAPTION = N_(
    "Each cell is one (sample, channel) pair holding all H×W positions; cells with the same "
    "number and colour share one mean and variance. All four always pool H and W. GroupNorm "
    "with G = 1 equals LayerNorm, with G = C it equals InstanceNorm."
)

NORMS_LIVE_INPUT = N_(
    "Live input: {shape} drawn from the stream above (batch 0). Only BatchNorm mixes samples, "
    "which is why only BatchNorm has running statistics and a train/eval difference."
)

# ----------------------------------------------------------------------------------------------
# 4. The notes' lessons, run live
# ----------------------------------------------------------------------------------------------

FORMULA_CAPTION = N_(
    "The {ref} list the symbols of the PyTorch 1.10 documentation (γ, β, E[x], Var[x]); the "
    "{missing} announce the formula and stop. Here it is, for one element of the batch shown "
    "in section 1 and the channel chosen beside the chart."
)

FORMULA_ELEMENT_CLAMPED = N_(
    "The batch has {samples} samples and {positions} positions per channel: following sample "
    "{sample}, position {position}."
)

FORMULA_NEEDS_VARIANCE = N_(
    "The formula needs the batch's variance, and each channel of this input holds one value: "
    "see the *A batch of one* tab."
)

FORMULA_TERMS = N_(
    "E[x] and Var[x] are channel {channel}'s mean and **biased** variance over all n = "
    "N·spatial = {n} values of the batch (`x.var(dims, correction=0)`); ε = eps = {eps:g}"
)

FORMULA_UNBIASED_ALSO_MATCHES = N_(
    "Equal to float32 precision: the module's float32 output is {ulps:.1f} float32 steps from "
    "the exact formula. With the unbiased variance ({var:.6g}, ×{n}/{n_minus_1}) the formula "
    "would give {y:.7g}: also within float32 precision here, because n is large or x sits at "
    "the mean."
)

FORMULA_ONLY_BIASED_MATCHES = N_(
    "Equal to float32 precision: the module's float32 output is {ulps:.1f} float32 steps from "
    "the exact formula. With the unbiased variance ({var:.6g}, ×{n}/{n_minus_1}) the formula "
    "would give {y:.7g}, which is not the module's output: BatchNorm normalizes with the "
    "biased variance."
)

FORMULA_NAN = N_(
    "This batch holds the injected NaN: the mean, the variance and every output of that "
    "channel are NaN."
)

FORMULA_DISAGREES = N_(
    "The formula and nn.{module} disagree by {diff:.3g}: this torch computes BatchNorm "
    "differently."
)

BATCH_OF_ONE_CAPTION = N_(
    "The {ref} (its list of errors): BatchNorm on a 1×1 feature map with batch size 1 has one "
    "value per channel and fails in training; the remedy is a batch size above 1 and a "
    "DataLoader with drop_last."
)

#: The batch-of-one tab's way to the same error in the error doctor (a link relative to this
#: page, so it works under a path prefix too).
ERROR_DOCTOR_LINK = N_(
    "The error doctor has this error beside the notes' other errors: "
    "[Expected more than 1 value per channel](errors?errors.entry=batch-of-one)."
)

LAST_BATCH_OF_ONE = N_(
    "Training needs more than one value per channel (N·H·W > 1). A dataset whose size is one "
    "more than a multiple of the batch size ends with a batch of one:"
)

REPEATED_EVAL_CAPTION = N_(
    "The {ref}: with track_running_stats=False each evaluation of the same trained model on "
    "the same test set gives different results, because shuffling changes which samples share "
    "a mini-batch; with True the results are the same every time. Checked here: two modules "
    "trained on the same 30 batches of the stream above (16 samples each), then two shuffled "
    "eval() passes over a 12-sample test set."
)

EVAL_BATCH_OF_ONE = N_(
    "A batch with one value per channel cannot be normalized with its own statistics, in "
    "eval() too (the message still says “when training”)."
)

FOLLOWED_SAMPLE = N_(
    "Sample {sample}, channel {channel}: pass 1 `{out1}` (batch with samples {mates1}), pass 2 "
    "`{out2}` (with {mates2})."
)

NOTES_DEMOS_CAPTION = N_(
    "Each demo runs the real nn.BatchNorm now and cites the place in the notes (FILE:LINE in the "
    "notes folder) it checks."
)

NOTES_RIGHT_HERE = N_(
    "The notes are right here. With track_running_stats=True the results also depend on the "
    "batch if model.eval() is forgotten: train() normalizes with the batch and moves the "
    "running statistics at every evaluation batch."
)

#: What two shuffled evaluation passes agreeing (or not) says, by RepeatedEval.verdict.
REPEATED_EVAL_VERDICTS: dict[str, str] = {
    "identical": N_(
        "Outputs are identical in both passes: eval() normalizes with "
        "running_mean/running_var, so the other samples in the batch do not matter."
    ),
    "rounding": N_(
        "Outputs are the same up to float rounding: each pass saw the same groups of "
        "samples in another order."
    ),
    "differ": N_(
        "Outputs are different: eval() normalizes with each mini-batch's own statistics, "
        "so the output depends on which samples share the batch."
    ),
}


# ----------------------------------------------------------------------------------------------
# Views: what a section shows, built from the live numbers and drawn by the page in order
# ----------------------------------------------------------------------------------------------

#: How the page draws a block: ``markdown``/``caption`` paragraphs, a boxed message
#: (``info``/``success``/``warning``/``error``, with an icon), ``latex``, ``text`` in a code
#: box, or ``metrics`` (one metric per part, its value in ``values``).
Kind = Literal["markdown", "caption", "info", "success", "warning", "error", "latex", "text",
               "metrics"]
INFO, WARNING, ERROR, OK = (":material/info:", ":material/warning:", ":material/error:",
                            ":material/check_circle:")


class Verbatim(str):
    """A part the page shows as it is (numbers, torch's messages, LaTeX, separators): it is
    never looked up in the catalog."""


class SentenceGap(Verbatim):
    """Between two sentences: a space in English, nothing in Chinese (the page knows which)."""


GAP = SentenceGap(" ")
PARAGRAPH = Verbatim("\n\n")


@dataclass(frozen=True)
class ViewBlock:
    """One element of a section: its ``parts`` (marked English, :class:`Verbatim` or
    :data:`GAP`) are translated and joined by the page, then drawn as ``kind``; a ``metrics``
    block has one label per part, and per label a value in ``values`` and a marked delta (or
    None) in ``deltas``."""

    kind: Kind
    parts: tuple[str, ...]
    icon: str | None = None
    values: tuple[str, ...] = ()
    deltas: tuple[str | None, ...] = ()


def _block(kind: Kind, *parts: str, icon: str | None = None) -> ViewBlock:
    return ViewBlock(kind, tuple(parts), icon)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _marked(text: str) -> T:
    """``text`` as a :class:`~core.text.T`, so it is translated as a value of another text: a
    ``T`` as it is (its values kept), a plain marked string as a ``T`` without values."""
    return text if isinstance(text, T) else T(text)


def chart_notices(config: SimConfig, history: History, *, torch_error: str | None,
                  capped: bool, cap_notice: str | None, nan_step: int | None) -> list[ViewBlock]:
    """What to know beside the chart of ``history``: the step cap, a reduced spatial size,
    an extreme momentum, torch's refusal of one value per channel (with why), no step yet, a
    batch of one, no buffers, and a NaN in the stream (``nan_step``: the batch holding it)."""
    steps, notices = history.steps, []
    if capped:
        notices.append(_block("info", T(HISTORY_CAPPED, max_steps=MAX_STEPS), icon=INFO))
    if cap_notice:
        notices.append(_block("warning", cap_notice, icon=":material/compress:"))
    if config.momentum in (0.0, 1.0):
        notices.append(_block("warning", MOMENTUM_ZERO if config.momentum == 0.0 else MOMENTUM_ONE,
                              icon=WARNING))
    if torch_error is not None:
        notices.append(_block(
            "error", T("nn.{module} in train() says:", module=config.module_name),
            Verbatim(f"\n\n`ValueError: {torch_error}`\n\n"),
            N_("Hint: raise the batch size or the spatial size."), icon=ERROR))
        notices.append(_block("markdown", T(WHY_ONE_VALUE, shape=config.shape)))
    elif steps == 0:
        notices.append(_block("info", NO_STEPS_YET, icon=INFO))
    elif config.batch_size == 1:
        notices.append(_block("info", T(BATCH_SIZE_ONE_TRAINS, values=config.values_per_channel),
                              icon=INFO))
    if not config.track_running_stats:
        notices.append(_block("info", UNTRACKED_NO_RED_LINE, icon=INFO))
    if history.first_nan_step is not None:
        notices.append(_block("warning", T(NAN_POISONS, nan_step=nan_step,
                                           first=history.first_nan_step), icon=WARNING))
    elif nan_step is not None and nan_step >= steps and torch_error is None:
        notices.append(_block("info", T(NAN_NOT_YET, nan_step=nan_step), icon=INFO))
    return notices


def modes_chart_alt(comparison: ModeComparison, channel: int) -> T:
    """The alt text of the train()/eval() histograms of ``channel``, with their numbers."""
    return T(MODES_CHART_ALT, channel=channel, tm=comparison.train_mean[channel],
             ts=comparison.train_std[channel], em=comparison.eval_mean[channel],
             es=comparison.eval_std[channel])


def mode_metrics(comparison: ModeComparison, channel: int) -> ViewBlock:
    """The mean and std of ``channel``'s output in train() and in eval() (eval()'s against
    train()'s), and the largest gap between the two outputs."""
    tm, ts = comparison.train_mean[channel], comparison.train_std[channel]
    em, es = comparison.eval_mean[channel], comparison.eval_std[channel]
    vs_train = N_("{delta:+.3f} vs train")
    return ViewBlock(
        "metrics", (N_("train() mean"), N_("train() std"), N_("eval() mean"), N_("eval() std"),
                    N_("max |train − eval|")),
        values=(f"{tm:.3f}", f"{ts:.3f}", f"{em:.3f}", f"{es:.3f}",
                f"{comparison.max_abs_gap:.3g}"),
        deltas=(None, None, T(vs_train, delta=em - tm), T(vs_train, delta=es - ts), None),
    )


def mode_verdict(comparison: ModeComparison, state: BNState, channel: int) -> ViewBlock:
    """Which statistics train() and eval() used for ``channel`` (with their numbers) and what
    that means: the running statistics have caught up, still lag (the train/eval gap), or do
    not exist (both modes use the batch)."""
    mean, biased, _unbiased = batch_stats(comparison.x)
    parts = [T("**train()** used {source}: mean {mean}, var {var} for channel {channel}.",
               source=_marked(comparison.train_source), mean=_fmt(mean[channel].item()),
               var=_fmt(biased[channel].item()), channel=channel),
             PARAGRAPH, T("**eval()** used {source}", source=_marked(comparison.eval_source))]
    if comparison.eval_uses_batch_stats:
        return _block("info", *parts, GAP, T("Both histograms coincide (max gap {gap:.1g}).",
                                             gap=comparison.max_abs_gap), icon=INFO)
    parts += [T(": running_mean {mean}, running_var {var}.",
                mean=_fmt(state.running_mean[channel].item()),
                var=_fmt(state.running_var[channel].item())), PARAGRAPH]
    if comparison.caught_up(channel):
        return _block("success", *parts, T(CAUGHT_UP, channel=channel), icon=OK)
    return _block("warning", *parts, NOT_CAUGHT_UP, icon=":material/compare_arrows:")


def buffers_paragraph(anatomy: Anatomy, *, affine: bool, tracked: bool) -> ViewBlock:
    """What an optimizer receives from the module, and why the running statistics are
    buffers."""
    receives = OPTIMIZER_GETS_AFFINE if affine else OPTIMIZER_GETS_NOTHING
    parts = [T(receives, n=anatomy.optimizer_tensors), GAP, BUFFERS_HAVE_NO_GRADIENT]
    if not tracked:
        parts += [GAP, N_("With track_running_stats=False they do not exist at all.")]
    return _block("markdown", *parts)


def update_view(history: History, channel: int, momentum: float | None,
                tracked: bool) -> list[ViewBlock]:
    """The last running-statistics update of ``channel``: the step and its factor, both update
    formulas with the numbers, and what the factor means."""
    e = explain_update(history, channel, momentum)
    if e is None:
        return [_block("info", N_("No update to show: track_running_stats=False (no buffers).")
                       if not tracked else N_("No update to show: no training step yet."))]
    factor = (f"m = momentum = {_fmt(e.factor)}" if momentum is not None
              else f"m = {e.factor_text} = {_fmt(e.factor)}")
    meaning = (T(CUMULATIVE_FACTOR) if momentum is None
               else T(FIXED_FACTOR, half_life=_marked(half_life_text(e.factor))))
    return [
        _block("markdown", T("Step {step}, channel {channel}: {factor}; the batch had "
                             "n = N·spatial = {n} values per channel.",
                             step=e.step, channel=channel, factor=factor, n=e.n)),
        *(_block("latex", Verbatim(line)) for line in update_latex(e)),
        _block("markdown", T("`num_batches_tracked` went from {before} to {after}.",
                             before=e.step - 1, after=e.step), GAP, meaning),
    ]


def variance_view(x: Tensor, channel: int, *, torch_error: str | None) -> list[ViewBlock]:
    """Biased vs unbiased variance of ``channel`` in batch ``x``, and their ratio n/(n−1)."""
    if torch_error is not None:
        return [_block("info", VARIANCE_UNDEFINED)]
    n = values_per_channel(x.shape)
    _mean, biased, unbiased = batch_stats(x)
    return [_block("markdown", T(
        BIASED_VS_UNBIASED, channel=channel, n=n, n_minus_1=n - 1,
        biased=_fmt(biased[channel].item()), unbiased=_fmt(unbiased[channel].item()),
        ratio=n / (n - 1)))]


def keras_view(momentum: float | None) -> list[ViewBlock]:
    """Why PyTorch's momentum is Keras' upside down, and the page's momentum in Keras' terms
    (None, a cumulative average, has no equivalent)."""
    if momentum is None:
        current = N_("The current momentum=None (cumulative average) has no Keras equivalent.")
    else:
        current = T("Current PyTorch momentum {pytorch:g} ↔ Keras momentum **{keras:g}**.",
                    pytorch=momentum, keras=pytorch_to_keras_momentum(momentum))
    return [_block("markdown", KERAS_UPSIDE_DOWN), _block("markdown", current)]


def keras_conversion(direction: str, value: float) -> ViewBlock:
    """``value`` converted from one momentum convention to the other (``direction``: "PyTorch →
    Keras" or "Keras → PyTorch")."""
    if direction.startswith("PyTorch"):
        text = f"PyTorch {value:g} → Keras **{pytorch_to_keras_momentum(value):g}**"
    else:
        text = f"Keras {value:g} → PyTorch **{keras_to_pytorch_momentum(value):g}**"
    return _block("markdown", Verbatim(text))


def frozen_view(run: ShownRun) -> list[ViewBlock]:
    """``FrozenBatchNorm2d`` loaded from the run's buffers against our eval() output on the
    shown batch, or why there is nothing to freeze."""
    config = run.config
    if not config.track_running_stats:
        return [_block("info", N_("track_running_stats=False: there are no running statistics "
                                  "to freeze."))]
    if run.comparison is None:  # train() cannot run on this input: no eval() output to compare
        return []
    weight, bias = fresh_affine(config)
    check = frozen_check(run.x, run.history.state, run.comparison.y_eval, eps=config.eps,
                         weight=weight, bias=bias)
    channels, eps = config.channels, config.eps
    return [_block("markdown", T(
        FROZEN_LIVE_CHECK, channels=channels, eps=eps, parameters=check.parameters,
        buffers=", ".join(check.buffers), diff=check.max_abs_diff_vs_eval))]


@dataclass(frozen=True)
class FormulaView:
    """The formula demo: what to show, and its runnable script (None when nothing ran)."""

    blocks: list[ViewBlock]
    snippet: str | None


def formula_view(run: ShownRun, *, sample: int, position: int, gamma: float,
                 beta: float) -> FormulaView:
    """One element of the run's shown batch through the formula and the real module (γ and β
    for every channel with affine): the element followed (clamped to the batch), the formula
    with its numbers, both results and whether they agree, or why nothing could run."""
    config, x, channel, torch_error = run.config, run.x, run.channel, run.torch_error
    batch_index = max(run.history.steps - 1, 0)
    followed = clamp_element(config, sample, position)
    blocks = []
    if followed != (sample, position if config.spatial else 0):
        blocks.append(_block("caption", T(
            FORMULA_ELEMENT_CLAMPED, samples=config.batch_size,
            positions=config.values_per_channel // config.batch_size, sample=followed[0],
            position=followed[1])))
    if torch_error is not None:
        return FormulaView([*blocks, _block("info", FORMULA_NEEDS_VARIANCE, icon=INFO)], None)
    weight, bias = (gamma, beta) if config.affine else (None, None)
    try:
        check = formula_check(x, sample=followed[0], channel=channel, position=followed[1],
                              eps=config.eps, weight=weight, bias=bias)
    except ValueError as error:
        return FormulaView([*blocks, _block("error", Verbatim(str(error)), PARAGRAPH,
                                            N_("Hint: pick another element or eps."),
                                            icon=ERROR)], None)
    terms = (T(", γ = {gamma:g}, β = {beta:g}.", gamma=check.weight, beta=check.bias)
             if config.affine else N_("; affine=False: no γ, β."))
    blocks += [
        *(_block("latex", Verbatim(line)) for line in formula_latex(check)),
        _block("markdown", T(FORMULA_TERMS, channel=channel, n=check.n, eps=check.eps), terms),
        ViewBlock("metrics", (N_("formula (float64)"),
                              T("nn.{module} in train()", module=check.module_name),
                              N_("|formula − module|")),
                  values=(f"{check.y_formula:.7g}", f"{check.y_module:.7g}",
                          f"{check.abs_diff:.1e}"), deltas=(None, None, None)),
        _formula_verdict(check),
    ]
    return FormulaView(blocks, formula_snippet(config, batch_index, sample=followed[0],
                                               channel=channel, position=followed[1],
                                               weight=weight, bias=bias))


def _formula_verdict(check: FormulaCheck) -> ViewBlock:
    """Whether the formula with the biased variance gives the module's output (and the
    unbiased one does not), the batch holds the NaN, or this torch computes otherwise."""
    if check.matches:
        matched = (FORMULA_UNBIASED_ALSO_MATCHES if check.matches_unbiased
                   else FORMULA_ONLY_BIASED_MATCHES)
        return _block("success", T(matched, ulps=check.ulps, var=check.var_unbiased, n=check.n,
                                   n_minus_1=check.n - 1, y=check.y_formula_unbiased), icon=OK)
    if not check.finite:
        return _block("warning", FORMULA_NAN, icon=WARNING)
    return _block("error", T(FORMULA_DISAGREES, module=check.module_name, diff=check.abs_diff),
                  icon=ERROR)


def batch_of_one_columns(one: BatchOfOne) -> tuple[list[ViewBlock], list[ViewBlock]]:
    """What ``train()`` says on a batch of one (left) and what ``eval()`` returns (right)."""
    error = Verbatim(one.train_error) if one.train_error else N_(
        "(no error: this torch accepts it)")
    return (
        [_block("markdown", T("**`nn.{module}` in train() on `{shape}`** raises:",
                              module=one.module_name, shape=one.shape)),
         _block("text", error)],
        [_block("markdown", N_("**in eval()** (fresh running statistics 0 and 1) it works:")),
         _block("text", Verbatim(", ".join(f"{v:.4f}" for v in one.eval_output)))],
    )


def loader_view(run: LoaderRun) -> list[ViewBlock]:
    """One DataLoader epoch: the batch sizes (the first 12), and how far training got."""
    sizes = list(run.batch_sizes[:12]) + (["…"] if len(run.batch_sizes) > 12 else [])
    if run.error is None:
        result = T("trained on all {n} batches", n=run.batches_trained)
    else:
        result = T("batch {n}: {error}", n=run.failed_batch, error=run.error)
    return [_block("markdown", T("**drop_last={drop_last}**: {count} batches, sizes `{sizes}`",
                                 drop_last=run.drop_last, count=len(run.batch_sizes),
                                 sizes=sizes)),
            _block("text", result)]


def repeated_eval_view(result: RepeatedEval, channel: int) -> list[ViewBlock]:
    """One module's two evaluation passes: how much any output changed, the followed sample's
    outputs and batch mates, and what that says; torch's error when a pass could not run."""
    title = _block("markdown", Verbatim(f"**track_running_stats={result.track_running_stats}**"))
    if result.error is not None:
        return [title, _block("text", Verbatim(result.error)),
                _block("markdown", EVAL_BATCH_OF_ONE)]
    outputs = [", ".join(f"{v:.4f}" for v in out[channel].flatten()[:4].tolist())
               for out in result.outputs]
    verdict = REPEATED_EVAL_VERDICTS[result.verdict]
    return [
        title,
        ViewBlock("metrics", (N_("max |pass 1 − pass 2| over the test set"),),
                  values=(f"{result.max_abs_diff:.3g}",), deltas=(None,)),
        _block("markdown", T(FOLLOWED_SAMPLE, sample=result.sample, channel=channel,
                             out1=outputs[0], mates1=list(result.batch_mates[0]),
                             out2=outputs[1], mates2=list(result.batch_mates[1]))),
        _block("warning", verdict, icon=":material/shuffle:") if result.verdict == "differ"
        else _block("success", verdict, icon=OK),
    ]
