"""The BatchNorm page's "predict, then reveal" questions, answered by running the page's view.

Each question is built from the run the page shows (a :class:`~lessons.batchnorm.modes.ShownRun`:
its settings, its trained history, the channel plotted and the shown batch) by running the same
code the page draws: :func:`~lessons.batchnorm.layer.manual_batchnorm` on the shown batch in
``eval()`` and in ``train()``, and the trained buffers of :func:`~lessons.batchnorm.layer.simulate`.

- ``eval-mean``: which mean ``eval()`` subtracts (the running one, or the batch's own when no
  statistics are tracked; notes 002:791 say an untracked running_mean follows the batch);
- ``running-mean``: what ``running_mean`` holds after the steps trained (notes 002:783 say it
  tracks all mini-batches; momentum makes an average that forgets);
- ``train-variance``: which variance ``train()`` divides by (the batch's biased one; notes
  002:804 call Var[x] the layer's running_var).

Two questions hide section 1's numbers and verdict (:data:`MODES_PART`, drawn only when
``train()`` runs on the batch, i.e. ``run.comparison`` is not None), one the running-statistics
chart (:data:`RUNNING_PART`).

A batch with one value per channel turns a question that needs batch statistics into "what
happens?": torch refuses it. Values that coincide in a view (momentum 1 puts the last batch's
mean into running_mean) are offered once: a distractor equal to the answer is left out.

Pure: no Streamlit. Texts are English and marked (``N_`` / ``T``); the page translates them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from core.questions import Choice, Question, check_questions
from core.text import N_, T
from lessons.batchnorm.layer import batch_stats, manual_batchnorm, values_per_channel
from lessons.batchnorm.modes import ShownRun, fresh_affine

#: The page's parts (``st.container(key=...)``) that give the answers away: section 1's numbers
#: and verdict (both modes' statistics), and the chart of the running statistics.
MODES_PART = "batchnorm-modes"
RUNNING_PART = "batchnorm-running"

#: Two numbers closer than this (relative, plus an absolute floor) are one value to a learner.
SAME_RELATIVE, SAME_ABSOLUTE = 1e-4, 1e-6
#: Significant digits a number is shown with: the fewest from the first that tell all apart.
DIGITS = (3, 4, 5, 6)

ONE_VALUE_TRAIN = N_("none: `train()` raises 'Expected more than 1 value per channel'")
ONE_VALUE_EVAL = N_("none: `eval()` raises 'Expected more than 1 value per channel'")


@dataclass(frozen=True)
class _ChoiceDraft:
    """A choice before its number is written: ``value`` (None: not a number, such as a raise)
    goes into ``template`` as ``{value}``, with ``args``."""

    value: float | None
    template: str
    why: str
    notes: str | None = None
    args: tuple[tuple[str, int | str], ...] = ()


def _same(a: float | None, b: float | None) -> bool:
    """Whether two option values are one value to a learner (NaN is NaN; None only None)."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= SAME_RELATIVE * max(abs(a), abs(b)) + SAME_ABSOLUTE


def _number(value: float, digits: int) -> str:
    text = f"{value:.{digits}g}"
    return "0" if text == "-0" else text


def _question(key: str, prompt: str, right: _ChoiceDraft, wrong: Sequence[_ChoiceDraft], proof: str,
              hides: str | None) -> Question:
    """A question from its right option and distractors: a distractor whose value is the
    right one's (or an earlier distractor's) is left out, the numbers get the fewest digits that
    tell them apart, and the choices are ordered by value (texts without a number last)."""
    kept = [right]
    for option in wrong:
        if option.value is None or not any(_same(option.value, k.value) for k in kept):
            kept.append(option)
    numbers = [k.value for k in kept if k.value is not None]
    digits = next((d for d in DIGITS if len({_number(v, d) for v in numbers}) == len(numbers)),
                  DIGITS[-1])
    order = sorted(range(len(kept)), key=lambda i: (
        kept[i].value is None, 0.0 if kept[i].value is None or math.isnan(kept[i].value)
        else kept[i].value, i))
    choices = []
    for i in order:
        option = kept[i]
        values = dict(option.args)
        if option.value is not None:
            values["value"] = _number(option.value, digits)
        text = T(option.template, **values) if values else option.template
        choices.append(Choice(text, option.why, option.notes))
    return Question(key, prompt, tuple(choices), order.index(0), proof, hides)


def _fmt(value: float) -> str:
    return _number(value, 4)


def _momentum_text(momentum: float | None) -> str:
    return "None" if momentum is None else f"{momentum:g}"


def _channel_mean(y: torch.Tensor, channel: int) -> float:
    """The mean of ``channel`` of ``y: (N, C, *S)``, in float64."""
    return float(y.double().transpose(0, 1)[channel].mean())


def _channel_std(y: torch.Tensor, channel: int) -> float:
    """The biased std of ``channel`` of ``y: (N, C, *S)``, in float64."""
    return float(y.double().transpose(0, 1)[channel].std(correction=0))


def _forward(run: ShownRun, *, training: bool) -> tuple[torch.Tensor | None, str | None]:
    """The shown batch through the page's BatchNorm (fresh γ and β) in ``train()`` or
    ``eval()`` with the trained buffers: ``(y, None)``, or ``(None, torch's message)``."""
    config = run.config
    weight, bias = fresh_affine(config)
    try:
        y, _ = manual_batchnorm(run.x, run.history.state, training=training,
                                momentum=config.momentum, eps=config.eps, weight=weight,
                                bias=bias, track_running_stats=config.track_running_stats)
    except ValueError as error:
        return None, str(error)
    return y, None


def _modes_part(run: ShownRun) -> str | None:
    """Section 1's numbers, which the page draws only when ``train()`` runs on the batch."""
    return MODES_PART if run.comparison is not None else None


def eval_mean_question(run: ShownRun) -> Question:
    """``eval-mean``: which mean ``eval()`` subtracts from channel ``run.channel`` of the shown
    batch ``run.x: (N, C, *S)`` after ``run.history.steps`` steps."""
    config, c, steps = run.config, run.channel, run.history.steps
    state, tracked = run.history.state, run.config.track_running_stats
    batch_mean, biased, _unbiased = (float(t[c]) for t in batch_stats(run.x))
    true_mean = config.stream.params_at(max(steps - 1, 0))[0][c]
    one_value = values_per_channel(run.x.shape) == 1
    y, error = _forward(run, training=False)
    args = (("c", c),)
    prompt = T("The shown batch goes through `eval()` after {steps} training steps "
               "(track_running_stats={tracked}). Which mean is subtracted from channel {c}?",
               steps=steps, tracked=str(tracked), c=c)
    own = _ChoiceDraft(batch_mean, N_("this batch's own mean = {value}"), N_(
        "that is what `train()` subtracts; with tracked statistics `eval()` uses the buffers, so "
        "an input's output does not depend on the rest of its batch"))
    stream = _ChoiceDraft(true_mean, N_("the stream's true mean = {value}"), N_(
        "the layer never sees the stream's true mean: `running_mean` only estimates it from the "
        "batches trained on"))
    raises = _ChoiceDraft(None, ONE_VALUE_EVAL, N_(
        "`train()` raises on one value per channel; `eval()` with running statistics does not "
        "need the batch's statistics, so it runs"))
    if tracked:
        rm, rv = float(state.running_mean[c]), float(state.running_var[c])
        right = _ChoiceDraft(rm, N_("`running_mean[{c}]` = {value}"), T(
            "`eval()` with tracked statistics normalizes with the buffers: `running_mean[{c}]` "
            "after {steps} steps", c=c, steps=steps), args=args)
        zero = _ChoiceDraft(0.0, N_("nothing: the subtracted mean = 0"), T(
            "`eval()` does subtract a mean: the running one, {rm} here", rm=_fmt(rm)))
        predicted = (batch_mean - rm) / math.sqrt(rv + config.eps)
        proof = T("`eval()` on the shown batch, channel {c}: the output's mean is {got} = (batch "
                  "mean {bm} − running_mean {rm}) / sqrt(running_var {rv} + eps) = {predicted}. "
                  "Subtracting the batch's own mean would give 0.",
                  c=c, got=_fmt(_channel_mean(y, c)), bm=_fmt(batch_mean), rm=_fmt(rm),
                  rv=_fmt(rv), predicted=_fmt(predicted))
        return _question("eval-mean", prompt, right, [own, stream, zero] + (
            [raises] if one_value else []), proof, _modes_part(run))
    untracked_buffer = _ChoiceDraft(None, N_(
        "`running_mean[{c}]`, which follows the current mini-batch"), N_(
        "the notes say an untracked running_mean depends on the current mini-batch in `eval()`; "
        "here `running_mean` is None: the module has no buffers, and the batch's mean is used "
        "and never stored"), notes="002:791", args=args)
    zero = _ChoiceDraft(0.0, N_("nothing: the subtracted mean = 0"), N_(
        "without buffers `eval()` normalizes like `train()`: with the batch's own mean"))
    if error is not None:
        right = _ChoiceDraft(None, ONE_VALUE_EVAL, T(
            "without running statistics `eval()` needs the batch's own, and one value per "
            "channel has no variance: '{error}'", error=error))
        own = _ChoiceDraft(batch_mean, N_("this batch's own mean = {value}"), N_(
            "it would be, but one value per channel has no variance to divide by: torch "
            "refuses"))
        proof = T("`eval()` on the shown batch raised: '{error}'", error=error)
        return _question("eval-mean", prompt, right, [own, stream, untracked_buffer], proof,
                         _modes_part(run))
    right = _ChoiceDraft(batch_mean, N_("this batch's own mean = {value}"), N_(
        "track_running_stats=False keeps no buffers, so `eval()` normalizes with the batch's own "
        "statistics, exactly like `train()`"))
    proof = T("`eval()` on the shown batch, channel {c}: output mean {mean}, std {std}: "
              "normalized with its own mean {bm} and biased variance {var}.",
              c=c, mean=_fmt(_channel_mean(y, c)), std=_fmt(_channel_std(y, c)),
              bm=_fmt(batch_mean), var=_fmt(biased))
    return _question("eval-mean", prompt, right, [untracked_buffer, stream, zero], proof,
                     _modes_part(run))


def _ema(batch_means: np.ndarray, momentum: float) -> float:
    """Where ``running_mean`` (fresh at 0) ends after the ``(steps,)`` batch means with a fixed
    ``momentum``."""
    value = 0.0
    for mean in batch_means:
        value = (1.0 - momentum) * value + momentum * float(mean)
    return value


def running_mean_question(run: ShownRun) -> Question:
    """``running-mean``: what ``running_mean[run.channel]`` holds after the ``steps`` steps of
    ``run.history`` (its ``(steps, C)`` batch means and ``(steps + 1, C)`` running means)."""
    config, c, history = run.config, run.channel, run.history
    steps, momentum = history.steps, config.momentum
    prompt = T("After {steps} training steps with momentum={momentum}, what is "
               "`running_mean[{c}]`?", steps=steps, momentum=_momentum_text(momentum), c=c)
    means = history.batch_mean[:, c]
    true_mean = config.stream.params_at(max(steps - 1, 0))[0][c]
    if not config.track_running_stats:
        estimate = N_("there is no `running_mean` to estimate it: no buffers are kept")
    elif steps == 0:
        estimate = N_("`running_mean` starts at 0 and has seen no batch yet")
    elif momentum is None:
        estimate = N_("`running_mean` averages noisy batches: close to the true mean, not it")
    else:
        estimate = N_("`running_mean` estimates it from noisy batches and, with a fixed "
                      "momentum, still carries part of its fresh 0")
    stream = _ChoiceDraft(true_mean, N_("the stream's true mean = {value}"), estimate)
    if steps == 0:
        last = _ChoiceDraft(float(batch_stats(run.x)[0][c]), N_("batch 0's mean = {value}"), N_(
            "no step has run yet: no batch has entered the buffer"))
    else:
        last = _ChoiceDraft(float(means[-1]), N_("the last batch's mean = {value}"), N_(
            "only momentum=1 would replace the buffer with the last batch"))
    if not config.track_running_stats:
        right = _ChoiceDraft(None, N_("none: `running_mean` is `None`"), N_(
            "track_running_stats=False: the module has no buffers; each batch's statistics are "
            "used and never stored"))
        last = _ChoiceDraft(last.value, last.template, N_(
            "the notes say an untracked running_mean depends only on the current mini-batch in "
            "`train()`; it does not exist: `running_mean` is None"), notes="002:789")
        zero = _ChoiceDraft(0.0, N_("the fresh buffer = 0"), N_(
            "there is no buffer, fresh or not: `named_buffers()` is empty"))
        proof = T("After {steps} steps the run's `running_mean` is {state}.", steps=steps,
                  state=str(history.state.running_mean))
        return _question("running-mean", prompt, right, [last, stream, zero], proof,
                         RUNNING_PART)
    rm = float(history.running_mean[steps, c])
    zero = _ChoiceDraft(0.0, N_("the fresh buffer = 0"), N_(
        "each step moves the buffer by its factor × (batch mean − running_mean)"))
    wrong = [last, stream, zero]
    if steps == 0:
        right = _ChoiceDraft(rm, N_("the fresh buffer = 0"), N_(
            "a fresh `running_mean` is zeros, and no step has run yet"))
        wrong = [last, stream]
        proof = T("After 0 steps the run's `running_mean[{c}]` is {rm}.", c=c, rm=_fmt(rm))
        return _question("running-mean", prompt, right, wrong, proof, RUNNING_PART)
    if math.isnan(rm):
        held = T("a NaN entered the buffer at step {first} and stays: (1 − m)·NaN + m·x is NaN",
                 first=history.first_nan_step or 0)
    else:
        held = T("the run's buffer after {steps} steps", steps=steps)
    right = _ChoiceDraft(rm, N_("`running_mean[{c}]` = {value}"), held, args=(("c", c),))
    overall = float(means.mean())
    if momentum is None:
        wrong.append(_ChoiceDraft(
            _ema(means, 0.1), N_("what the default momentum 0.1 gives = {value}"),
            N_("momentum=None is a cumulative average of all batches, not the default "
               "exponential one")))
        kept = N_("momentum=None: the mean of all batches, each weighing 1/{steps}")
    else:
        wrong.append(_ChoiceDraft(overall, N_("the mean of all {steps} batches = {value}"), T(
            "the notes say the buffers track all mini-batches of the training; momentum={m} "
            "makes an exponential average that forgets: the last batch weighs {m}",
            m=_momentum_text(momentum)), notes="002:783", args=(("steps", steps),)))
        kept = T("with momentum={m}, (1 − m)^{steps} = {left} of the fresh 0 is left",
                 m=_momentum_text(momentum), steps=steps, left=_fmt((1 - momentum) ** steps))
    proof = T("The run's `running_mean[{c}]` after {steps} steps: {rm}; {kept}. The mean of all "
              "{steps} batches is {overall}, the last batch's {last}.", c=c, steps=steps,
              rm=_fmt(rm), kept=T(kept, steps=steps) if momentum is None else kept,
              overall=_fmt(overall), last=_fmt(float(means[-1])))
    return _question("running-mean", prompt, right, wrong, proof, RUNNING_PART)


def train_variance_question(run: ShownRun) -> Question:
    """``train-variance``: which variance ``train()`` divides channel ``run.channel`` of the
    shown batch ``run.x: (N, C, *S)`` by (under the square root, with eps)."""
    config, c, state = run.config, run.channel, run.history.state
    n = values_per_channel(run.x.shape)
    prompt = T("In `train()`, channel {c} of the shown batch holds n = {n} values. Which "
               "variance does BatchNorm divide it by (as sqrt(var + eps))?", c=c, n=n)
    true_var = config.stream.params_at(max(run.history.steps - 1, 0))[1][c] ** 2
    stream = _ChoiceDraft(true_var, N_("the stream's true variance = {value}"), N_(
        "the layer never sees the stream's true variance, only the batch"))
    running = []
    if config.track_running_stats:
        claim = N_("the notes call Var[x] the layer's running_var; `train()` normalizes with "
                   "the batch's own variance and only updates running_var")
        running = [_ChoiceDraft(float(state.running_var[c]), N_("`running_var[{c}]` = {value}"),
                                claim, notes="002:804", args=(("c", c),))]
    y, error = _forward(run, training=True)
    if error is not None:
        right = _ChoiceDraft(None, ONE_VALUE_TRAIN, T(
            "a channel with one value has no spread to normalize by: '{error}'", error=error))
        zero = _ChoiceDraft(0.0, N_("no spread: variance = 0"), N_(
            "the biased variance of one value is 0 (and the unbiased one 0/0): torch refuses "
            "rather than output β everywhere"))
        proof = T("`train()` on the shown batch raised: '{error}'", error=error)
        return _question("train-variance", prompt, right, [zero, *running, stream], proof,
                         _modes_part(run))
    _mean, biased, unbiased = (float(t[c]) for t in batch_stats(run.x))
    got = _channel_std(y, c)
    # a fresh γ is 1 and β is 0: the output's std is the normalized one
    with_biased = math.sqrt(biased / (biased + config.eps))
    with_unbiased = math.sqrt(biased / (unbiased + config.eps))
    right = _ChoiceDraft(biased, N_("the batch's biased variance Σ(x − mean)²/n = {value}"), T(
        "`train()` normalizes with the biased variance: the output's std is sqrt(var / (var + "
        "eps)) = {std}", std=_fmt(with_biased)))
    other = _ChoiceDraft(
        unbiased, N_("the batch's unbiased variance Σ(x − mean)²/(n − 1) = {value}"),
        T("that one goes into running_var; dividing by it would give std {std}, the run gives "
          "{got}", std=_fmt(with_unbiased), got=_fmt(got)))
    proof = T("`train()` on the shown batch, channel {c}: output std {got}; with the biased "
              "variance {biased} the formula gives {with_biased}, with the unbiased {unbiased} "
              "it gives {with_unbiased}.", c=c, got=_fmt(got), biased=_fmt(biased),
              with_biased=_fmt(with_biased), unbiased=_fmt(unbiased),
              with_unbiased=_fmt(with_unbiased))
    return _question("train-variance", prompt, right, [other, *running, stream], proof,
                     _modes_part(run))


def questions(run: ShownRun) -> tuple[Question, ...]:
    """The page's questions about the view ``run`` shows (its settings, trained history, channel
    and shown batch ``run.x: (N, C, *S)``), each answered by running it.

    Raises:
        ValueError: ``run.channel`` is not one of the run's channels.
    """
    channels = run.config.channels
    if isinstance(run.channel, bool) or not 0 <= run.channel < channels:
        raise ValueError(f"channel must be in [0, {channels - 1}], got {run.channel!r}")
    return check_questions((eval_mean_question(run), running_mean_question(run),
                            train_variance_question(run)))
