"""What the running statistics change: train() vs eval() on one batch, the last update of the
buffers with its numbers, and PyTorch's momentum against Keras'.

Pure PyTorch/numpy (no Streamlit). :func:`compare_modes` puts the ``train()`` and ``eval()``
outputs of one batch side by side (:func:`shown_batch` is the batch the page shows);
:func:`explain_update` fills the update formula of one channel with a :class:`History`'s
numbers; :func:`pytorch_to_keras_momentum` and back convert the two momentum conventions.

>>> pytorch_to_keras_momentum(0.1)
0.9
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.text import N_, T
from lessons.batchnorm.layer import (
    BNState,
    History,
    SimConfig,
    check_momentum,
    manual_batchnorm,
    per_channel,
    reduce_dims,
)
from lessons.batchnorm.stream import sample_batch


def _fmt(value: float) -> str:
    return f"{value:.4g}"


#: Both output means and stds within this of each other: the running statistics have caught up.
CAUGHT_UP = 0.1


# --------------------------------------------------------------------------------------------
# train() vs eval() on one batch
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModeComparison:
    """The same batch through ``train()`` and ``eval()``.

    ``y_train`` / ``y_eval`` have the batch's shape. ``*_mean`` / ``*_std`` are ``(C,)``
    numpy arrays of the outputs per channel (std is the biased one). ``train_source`` /
    ``eval_source`` say in words which statistics each mode normalized with, and
    ``eval_uses_batch_stats`` is True when eval had to use the batch (no tracked stats).
    """

    x: Tensor
    y_train: Tensor
    y_eval: Tensor
    train_mean: np.ndarray
    train_std: np.ndarray
    eval_mean: np.ndarray
    eval_std: np.ndarray
    max_abs_gap: float
    train_source: str
    eval_source: str
    eval_uses_batch_stats: bool

    def caught_up(self, channel: int) -> bool:
        """Whether ``channel``'s eval() output has its train() mean and std, within
        :data:`CAUGHT_UP` each: the running statistics have caught up with the stream."""
        return bool(abs(self.eval_mean[channel] - self.train_mean[channel]) < CAUGHT_UP
                    and abs(self.eval_std[channel] - self.train_std[channel]) < CAUGHT_UP)


def _channel_mean_std(y: Tensor) -> tuple[np.ndarray, np.ndarray]:
    dims = reduce_dims(y)
    mean = y.mean(dim=dims)
    std = ((y - per_channel(mean, y)) ** 2).mean(dim=dims).sqrt()
    return mean.double().cpu().numpy(), std.double().cpu().numpy()


def compare_modes(x: Tensor, state: BNState, *, eps: float, weight: Tensor | None = None,
                  bias: Tensor | None = None, track_running_stats: bool = True,
                  momentum: float | None = 0.1) -> ModeComparison:
    """Run batch ``x`` through BatchNorm in ``train()`` and in ``eval()`` with buffers ``state``.

    The train() output does not depend on ``state`` (batch statistics); the eval() output
    uses ``state``'s running statistics, or the batch again when stats are not tracked.
    ``state`` is not updated (we only look at the outputs).

    Raises:
        ValueError: as :func:`manual_batchnorm` (e.g. one value per channel).
    """
    y_train, _ = manual_batchnorm(x, state, training=True, momentum=momentum, eps=eps,
                                  weight=weight, bias=bias,
                                  track_running_stats=track_running_stats)
    y_eval, _ = manual_batchnorm(x, state, training=False, momentum=momentum, eps=eps,
                                 weight=weight, bias=bias,
                                 track_running_stats=track_running_stats)
    tm, ts = _channel_mean_std(y_train)
    em, es = _channel_mean_std(y_eval)
    batch_words = N_("this batch's own statistics (mean and biased variance over N·spatial)")
    if track_running_stats:
        eval_words = T(
            "the running statistics (running_mean, running_var after "
            "{tracked} tracked batches)", tracked=state.num_batches_tracked,
        )
    else:
        eval_words = N_(
            "this batch's own statistics too: track_running_stats=False leaves no buffers, so "
            "eval() normalizes exactly like train()"
        )
    return ModeComparison(
        x=x, y_train=y_train, y_eval=y_eval, train_mean=tm, train_std=ts, eval_mean=em,
        eval_std=es, max_abs_gap=float((y_train - y_eval).abs().max().item()),
        train_source=batch_words, eval_source=eval_words,
        eval_uses_batch_stats=not track_running_stats,
    )


def compare_run(config: SimConfig, steps: int, state: BNState) -> ModeComparison:
    """:func:`compare_modes` on the batch shown after ``steps`` steps of ``config``
    (:func:`shown_batch`), with the buffers ``state`` of that run and a fresh γ and β."""
    weight, bias = fresh_affine(config)
    return compare_modes(shown_batch(config, steps), state, eps=config.eps, weight=weight,
                         bias=bias, track_running_stats=config.track_running_stats,
                         momentum=config.momentum)


def shown_batch(config: SimConfig, steps: int) -> Tensor:
    """The batch the page puts through train() and eval() after ``steps`` steps: the last one
    trained on (batch 0 before any step), ``(N, C, *spatial)`` float32."""
    return sample_batch(config.stream, max(steps - 1, 0), config.batch_size, config.spatial,
                        seed=config.seed)


@dataclass(frozen=True)
class ShownRun:
    """A trained run as the page shows it, what every section under the chart reads: the run
    (``history`` of ``config``), the channel plotted, the input's spatial axes (``dims``) and
    asked-for size (``side``), torch's error on the input (None: train() runs), and ``x``, the
    batch shown (:func:`shown_batch`), through train() and eval() (None when train() cannot
    run)."""

    config: SimConfig
    history: History
    channel: int
    dims: int
    side: int
    torch_error: str | None
    comparison: ModeComparison | None
    x: Tensor


def fresh_affine(config: SimConfig) -> tuple[Tensor | None, Tensor | None]:
    """A fresh module's γ (ones) and β (zeros), each ``(C,)``, or ``(None, None)`` without
    affine."""
    if not config.affine:
        return None, None
    return torch.ones(config.channels), torch.zeros(config.channels)


# --------------------------------------------------------------------------------------------
# The last update of the running statistics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpdateExplanation:
    """The last running-stat update of one channel, with the numbers filled in."""

    step: int
    factor: float
    factor_text: str
    n: int
    batch_mean: float
    batch_var_biased: float
    batch_var_unbiased: float
    old_mean: float
    new_mean: float
    old_var: float
    new_var: float


def explain_update(history: History, channel: int, momentum: float | None) -> (
        UpdateExplanation | None):
    """Numbers for the last update of ``channel``; ``None`` before the first step or untracked."""
    if history.steps == 0 or history.running_mean is None:
        return None
    if not 0 <= channel < history.batch_mean.shape[1]:
        raise ValueError(f"channel must be in [0, {history.batch_mean.shape[1] - 1}], got "
                         f"{channel}")
    k = history.steps
    factor = float(history.factors[k - 1])
    text = f"momentum = {momentum}" if momentum is not None else (
        f"1 / num_batches_tracked = 1/{k}")
    return UpdateExplanation(
        step=k, factor=factor, factor_text=text, n=history.values_per_channel,
        batch_mean=float(history.batch_mean[k - 1, channel]),
        batch_var_biased=float(history.batch_var[k - 1, channel]),
        batch_var_unbiased=float(history.batch_var_unbiased[k - 1, channel]),
        old_mean=float(history.running_mean[k - 1, channel]),
        new_mean=float(history.running_mean[k, channel]),
        old_var=float(history.running_var[k - 1, channel]),
        new_var=float(history.running_var[k, channel]),
    )


def update_latex(e: UpdateExplanation) -> tuple[str, str]:
    """The running-mean and running-var updates of ``e`` as LaTeX, with its numbers."""
    m = _fmt(e.factor)
    return (
        r"\text{running\_mean} \leftarrow (1-m)\,\text{running\_mean} + m\,\mu_B"
        rf"= (1-{m})\cdot{_fmt(e.old_mean)} + {m}\cdot{_fmt(e.batch_mean)} = {_fmt(e.new_mean)}",
        r"\text{running\_var} \leftarrow (1-m)\,\text{running\_var} + m\,"
        r"\sigma^2_{B,\text{unbiased}}"
        rf"= (1-{m})\cdot{_fmt(e.old_var)} + {m}\cdot{_fmt(e.batch_var_unbiased)} "
        rf"= {_fmt(e.new_var)}",
    )


def half_life_text(momentum: float) -> str:
    """How fast buffers updated with a fixed ``momentum`` forget old batches, as marked text."""
    if momentum <= 0.0:
        return N_("with m = 0 nothing new ever enters the buffers")
    if momentum >= 1.0:
        return N_("with m = 1 only the last batch counts")
    half_life = np.log(0.5) / np.log(1 - momentum)
    return T("the buffers forget old batches with a half-life of {half_life:.1f} steps",
             half_life=half_life)


# --------------------------------------------------------------------------------------------
# Keras momentum
# --------------------------------------------------------------------------------------------



def pytorch_to_keras_momentum(momentum: float) -> float:
    """PyTorch's momentum is the weight of the *new* batch; Keras's is the weight of the old
    average. ``0.1 -> 0.9``. ``None`` (cumulative average) has no Keras equivalent."""
    if momentum is None:
        raise ValueError("momentum=None is PyTorch's cumulative average; Keras has no equivalent")
    check_momentum(momentum)
    return round(1.0 - float(momentum), 12)


def keras_to_pytorch_momentum(momentum: float) -> float:
    """Keras ``momentum=0.99`` -> PyTorch ``momentum=0.01``."""
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or \
            not math.isfinite(momentum) or not 0.0 <= momentum <= 1.0:
        raise ValueError(f"Keras momentum must be in [0, 1], got {momentum!r}")
    return round(1.0 - float(momentum), 12)

