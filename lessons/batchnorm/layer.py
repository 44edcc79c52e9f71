"""BatchNorm written out by hand, its training on the synthetic stream, and the notes' claims
about it checked live.

Pure PyTorch/numpy (no Streamlit). The central piece is :func:`manual_batchnorm`, a
plain-arithmetic re-implementation of ``nn.BatchNorm1d/2d`` that returns the output *and* the
updated buffers as a :class:`BNState`. :func:`simulate` trains it on a
:class:`~lessons.batchnorm.stream.Stream` (a :class:`SimConfig` holds one run's settings) and
returns its :class:`History`; :func:`estimate_simulate_seconds` says how long that takes here.
:func:`notes_callouts` checks what the notes say about the layer by running it
(``lessons.registry.all_callouts`` finds it).

>>> import torch
>>> x = torch.randn(8, 3)
>>> y, state = manual_batchnorm(x, BNState.fresh(3), training=True, momentum=0.1, eps=1e-5)
>>> state.num_batches_tracked
1
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.notes import NotesCallout, NotesRef, run_live, verdict_if
from core.text import N_
from lessons.batchnorm.stream import Stream, input_shape, sample_batch

MAX_STEPS = 2_000  # longest simulated history


# --------------------------------------------------------------------------------------------
# State and the hand-written BatchNorm
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BNState:
    """The three buffers of a BatchNorm layer.

    Attributes:
        running_mean: ``(C,)`` float tensor, or ``None`` when stats are not tracked.
        running_var: ``(C,)`` float tensor (unbiased estimates), or ``None``.
        num_batches_tracked: an ``int`` (a 0-d tensor is accepted and converted), or ``None``.
    """

    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: int | None

    def __post_init__(self) -> None:
        nbt = self.num_batches_tracked
        if isinstance(nbt, Tensor):
            object.__setattr__(self, "num_batches_tracked", int(nbt.item()))
        tracked = [v is not None for v in (self.running_mean, self.running_var,
                                            self.num_batches_tracked)]
        if any(tracked) and not all(tracked):
            raise ValueError(
                "BNState needs either all three buffers (running_mean, running_var, "
                "num_batches_tracked) or none of them, got "
                f"running_mean={'set' if tracked[0] else None}, "
                f"running_var={'set' if tracked[1] else None}, "
                f"num_batches_tracked={self.num_batches_tracked}"
            )

    @property
    def tracked(self) -> bool:
        """True when the state holds running statistics."""
        return self.running_mean is not None

    @classmethod
    def fresh(
        cls,
        num_features: int,
        *,
        track_running_stats: bool = True,
        dtype: torch.dtype = torch.float32,
        device: str | torch.device = "cpu",
    ) -> BNState:
        """The state of a new ``nn.BatchNorm``: zeros, ones and 0 (or all ``None`` untracked)."""
        if not track_running_stats:
            return cls(running_mean=None, running_var=None, num_batches_tracked=None)
        return cls(
            running_mean=torch.zeros(num_features, dtype=dtype, device=device),
            running_var=torch.ones(num_features, dtype=dtype, device=device),
            num_batches_tracked=0,
        )


def check_momentum(momentum: float | None) -> None:
    """Raise ValueError unless ``momentum`` is a number in [0, 1] or None (PyTorch's meaning)."""
    if momentum is None:
        return
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise ValueError(f"momentum must be a number in [0, 1] or None, got {momentum!r}")
    if not math.isfinite(momentum) or not 0.0 <= momentum <= 1.0:
        raise ValueError(
            f"momentum must be in [0, 1] (PyTorch convention: the weight of the new batch), "
            f"or None for a cumulative average, got {momentum}"
        )


def check_eps(eps: float) -> None:
    """Raise ValueError unless ``eps`` is a finite number >= 0."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) \
            or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")


def reduce_dims(x: Tensor) -> list[int]:
    """The axes one per-channel statistic pools for ``x: (N, C, *S)``: N and every spatial one."""
    return [0, *range(2, x.dim())]


def per_channel(t: Tensor, x: Tensor) -> Tensor:
    """Reshape a (C,) tensor so it broadcasts against x of shape (N, C, *S)."""
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


def values_per_channel(shape: Sequence[int]) -> int:
    """``N * prod(S)`` for an input of shape ``(N, C, *S)``: the values one channel's statistic
    pools."""
    return int(shape[0]) * int(np.prod(shape[2:], dtype=np.int64))


def _fma(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``a * b + c`` rounded once, as the fused multiply-add of torch's vectorized CPU kernels.

    For float32 (and half types) the product is exact in float64, so one float64 add and one
    rounding back give the fused result (up to a double-rounding tie, which is vanishingly rare).
    float64 has no wider type here, so it is rounded twice (an error of about 1e-16).
    """
    if a.dtype in (torch.float32, torch.float16, torch.bfloat16):
        return torch.addcmul(c.double(), a.double(), b.double()).to(a.dtype)
    return a * b + c


def _mean_and_var_sum(x: Tensor) -> tuple[Tensor, Tensor]:
    """Per-channel mean and sum of squared deviations, in the order torch's CPU kernel uses.

    Following that order (not just the formula) is what lets :func:`manual_batchnorm` agree
    with ``nn.BatchNorm`` to 1e-5 in float32 even for badly conditioned batches, where
    ``y = x * alpha + beta`` amplifies a one-ulp difference in the mean by ``alpha``.

    * More than one value per sample and channel (``(N, C, L)``, ``(N, C, H, W)``): one float64
      sum per channel, the mean rounded to ``x.dtype``, then a float64 sum of the squared
      deviations (each squared in ``x.dtype``).
    * One value per sample and channel (``(N, C)``, or ``L = 1`` / ``H = W = 1``): torch treats
      the input as ``N`` rows of ``C`` and splits the rows over ``torch.get_num_threads()``
      threads in equal chunks (one chunk if ``N`` is not larger than the thread count). Each
      chunk is summed in ``x.dtype`` (squared deviations with a fused multiply-add) and the
      chunk sums are added in float64. (float16/bfloat16 use the first recipe.)

    Args:
        x: ``(N, C, *S)`` contiguous floating tensor.

    Returns:
        ``(mean, var_sum)``, each ``(C,)`` in ``x.dtype``.
    """
    dims = reduce_dims(x)
    n_batch, channels = x.shape[0], x.shape[1]
    n = values_per_channel(x.shape)
    if n > n_batch or x.dtype not in (torch.float32, torch.float64):
        mean = (x.double().sum(dim=dims) / n).to(x.dtype)
        centered = x - per_channel(mean, x)
        var_sum = (centered * centered).double().sum(dim=dims).to(x.dtype)
        return mean, var_sum
    # Row chunks of every thread side by side: (threads, chunk, C), padded with zero rows.
    threads = torch.get_num_threads()
    threads = threads if n_batch > threads else 1
    chunk = -(-n_batch // threads)
    rows = x.detach().reshape(n_batch, channels).cpu().numpy()
    blocks = np.zeros((threads * chunk, channels), dtype=rows.dtype)
    blocks[:n_batch] = rows
    blocks = blocks.reshape(threads, chunk, channels)
    with np.errstate(all="ignore"):  # NaN/inf propagate as in torch, silently
        # Sequential sums in x.dtype within a chunk (adding a zero row changes nothing).
        partial = np.add.accumulate(blocks, axis=1)[:, -1]
        mean = (partial.astype(np.float64).sum(axis=0) / n).astype(rows.dtype)
        deviation = blocks - mean
        deviation.reshape(-1, channels)[n_batch:] = 0.0  # padding rows contribute nothing
        if rows.dtype == np.float64:
            partial = np.add.accumulate(deviation * deviation, axis=1)[:, -1]
        else:  # fused: partial = round(partial + d * d), with d * d exact in float64
            squares = deviation.astype(np.float64) ** 2
            partial = np.zeros((threads, channels), dtype=rows.dtype)
            for k in range(chunk):
                partial = (partial + squares[:, k]).astype(rows.dtype)
        var_sum = partial.astype(np.float64).sum(axis=0).astype(rows.dtype)
    return (torch.from_numpy(mean).to(x.device), torch.from_numpy(var_sum).to(x.device))


def batch_stats(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per-channel statistics of one batch, computed as ``nn.BatchNorm`` computes them.

    Args:
        x: ``(N, C, *S)`` float tensor.

    Returns:
        ``(mean, biased_var, unbiased_var)``, each ``(C,)`` in ``x.dtype``: the sum of squared
        deviations divided by ``n`` and by ``n - 1``, with ``n = N * prod(S)``. The unbiased
        variance is ``nan`` for ``n == 1``.
    """
    n = values_per_channel(x.shape)
    mean, var_sum = _mean_and_var_sum(x)
    biased = var_sum / n
    unbiased = var_sum / (n - 1) if n > 1 else var_sum * float("nan")
    return mean, biased, unbiased


def _updated_state(state: BNState, mean: Tensor, unbiased_var: Tensor,
                   momentum: float | None) -> BNState:
    """One running-statistics update, rounded as torch's CPU kernel rounds it.

    ``running = (1 - m) * running + m * batch_stat`` with ``m = momentum``, or
    ``1 / num_batches_tracked`` (counted after this batch) when momentum is None. torch rounds
    ``m`` to the buffer dtype first; running_var gets the *unbiased* batch variance.
    """
    count = state.num_batches_tracked + 1
    rm, rv = state.running_mean, state.running_var
    factor = torch.tensor(1.0 / count if momentum is None else float(momentum),
                          dtype=rm.dtype, device=rm.device)
    unbiased_var = unbiased_var.to(rv.dtype)
    return BNState(
        running_mean=factor * mean.to(rm.dtype) + (1 - factor) * rm,
        running_var=_fma(factor.expand_as(unbiased_var), unbiased_var, (1 - factor) * rv),
        num_batches_tracked=count,
    )


def manual_batchnorm(
    x: Tensor,
    state: BNState,
    *,
    training: bool,
    momentum: float | None,
    eps: float,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    track_running_stats: bool = True,
) -> tuple[Tensor, BNState]:
    """One forward pass of ``nn.BatchNorm1d/2d``, written with mean, var and sqrt.

    Args:
        x: ``(N, C)``, ``(N, C, L)`` or ``(N, C, H, W)`` floating tensor.
        state: the buffers before this call. Must be tracked (see :meth:`BNState.fresh`)
            when ``track_running_stats`` is True and untracked (all ``None``) otherwise.
        training: the module's ``training`` flag (``train()`` vs ``eval()``).
        momentum: weight of the new batch in the running average (PyTorch convention,
            default 0.1), or ``None`` for a cumulative average (factor ``1/num_batches_tracked``).
        eps: added to the variance before the square root.
        weight, bias: ``(C,)`` affine parameters (``affine=True``) or ``None``.
        track_running_stats: as in ``nn.BatchNorm``.

    Returns:
        ``(y, new_state)``: ``y`` has the shape and dtype of ``x``; ``new_state`` holds new
        tensors (the inputs are never modified).

    Normalization uses the *biased* batch variance; ``running_var`` is updated with the
    *unbiased* one. Batch statistics are used in training, and in eval when stats are not
    tracked; running statistics are used in eval otherwise.

    Raises:
        ValueError: bad shapes/values, a state that does not fit the flags, or (as torch does)
            "Expected more than 1 value per channel when training, got input size ..." when
            batch statistics are needed but each channel holds a single value, and
            "batch_norm eps must be positive during training" for ``eps == 0`` there.
    """
    if not isinstance(x, Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() not in (2, 3, 4):
        raise ValueError(
            f"expected (N, C), (N, C, L) or (N, C, H, W) input, got shape {tuple(x.shape)}"
        )
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got dtype {x.dtype}")
    if x.numel() == 0:
        raise ValueError(f"x is empty (shape {tuple(x.shape)}); BatchNorm needs values")
    check_momentum(momentum)
    check_eps(eps)
    channels = x.shape[1]
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != (channels,):
            raise ValueError(
                f"{name} must have shape ({channels},) for {channels} channels, "
                f"got {tuple(param.shape)}"
            )
    if track_running_stats:
        if not state.tracked:
            raise ValueError(
                "track_running_stats=True needs a tracked state (running_mean, running_var, "
                "num_batches_tracked); use BNState.fresh(C)"
            )
        if tuple(state.running_mean.shape) != (channels,) or \
                tuple(state.running_var.shape) != (channels,):
            raise ValueError(
                f"running stats have shape {tuple(state.running_mean.shape)} but the input has "
                f"{channels} channels"
            )
    elif state.tracked:
        raise ValueError(
            "track_running_stats=False means there are no buffers; pass an untracked state "
            "(BNState.fresh(C, track_running_stats=False))"
        )

    use_batch_stats = training or not track_running_stats
    if use_batch_stats and values_per_channel(x.shape) == 1:
        # Same message and type as torch.nn.functional._verify_batch_size.
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {x.size()}"
        )

    if use_batch_stats and eps <= 0.0:
        # torch refuses eps == 0 whenever it normalizes with batch statistics.
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")

    # The arithmetic below follows torch's CPU kernels step by step (which dtype each step is
    # rounded to, which steps are fused multiply-adds), so the result agrees with nn.BatchNorm
    # to float rounding even when |x| * alpha is large and y = x * alpha + beta cancels.
    new_state = state
    if use_batch_stats:
        n = values_per_channel(x.shape)
        norm_mean, var_sum = _mean_and_var_sum(x)
        # Normalize with the biased variance; 1/sqrt in float64, then rounded.
        invstd = (1.0 / torch.sqrt((var_sum / n).double() + eps)).to(x.dtype)
        if training and track_running_stats:
            new_state = _updated_state(state, norm_mean, var_sum / (n - 1), momentum)
    else:
        norm_mean = state.running_mean.to(x.dtype)
        invstd = torch.rsqrt(state.running_var.to(x.dtype) + eps)

    # Same arrangement as PyTorch's CPU kernel: y = x * alpha + beta, both fused.
    alpha = invstd if weight is None else invstd * weight.to(x.dtype)
    shift = torch.zeros_like(alpha) if bias is None else bias.to(x.dtype)
    beta = _fma(-norm_mean, alpha, shift)
    y = _fma(x, per_channel(alpha, x), per_channel(beta, x))
    return y, new_state

# --------------------------------------------------------------------------------------------
# Training on the stream
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimConfig:
    """Everything that defines one simulated run (the page builds one from its widgets)."""

    stream: Stream
    batch_size: int = 16
    spatial: tuple[int, ...] = (4, 4)
    momentum: float | None = 0.1
    eps: float = 1e-5
    affine: bool = True
    track_running_stats: bool = True
    seed: int = 0

    @property
    def channels(self) -> int:
        return self.stream.channels

    @property
    def shape(self) -> tuple[int, ...]:
        return input_shape(self.batch_size, self.channels, self.spatial)

    @property
    def module_name(self) -> str:
        return "BatchNorm2d" if len(self.spatial) == 2 else "BatchNorm1d"

    @property
    def values(self) -> int:
        """Numbers in one batch: ``N * C * prod(spatial)``."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def values_per_channel(self) -> int:
        """Values one channel's batch statistic pools: ``N * prod(spatial)``."""
        return values_per_channel(self.shape)


@dataclass(frozen=True)
class History:
    """What :func:`simulate` saw. ``steps`` rows; arrays are float64 numpy, ``(steps, C)``.

    ``running_mean`` / ``running_var`` have ``steps + 1`` rows (row 0 is the fresh state) or
    are ``None`` when stats are not tracked. ``factors`` is the averaging factor of each step
    (momentum, or ``1/num_batches_tracked`` when momentum is None). ``first_nan_step`` is the
    1-based step after which a running buffer first held NaN, or ``None``.
    """

    steps: int
    values_per_channel: int
    batch_mean: np.ndarray
    batch_var: np.ndarray
    batch_var_unbiased: np.ndarray
    running_mean: np.ndarray | None
    running_var: np.ndarray | None
    true_mean: np.ndarray
    true_var: np.ndarray
    factors: np.ndarray
    shift_step: int | None
    state: BNState
    first_nan_step: int | None


def simulate(stream: Stream, steps: int, batch_size: int, *, spatial: Sequence[int] = (),
             momentum: float | None = 0.1, eps: float = 1e-5, affine: bool = True,
             track_running_stats: bool = True, seed: int = 0,
             dtype: torch.dtype = torch.float32,
             on_step: Callable[[int, int], None] | None = None) -> History:
    """Run ``steps`` training steps of :func:`manual_batchnorm` on ``stream``.

    Only the buffers are kept, so each step computes the batch statistics once and applies the
    same running-statistics update as :func:`manual_batchnorm` (the output is not needed).

    Batch ``k`` (0-based) is :func:`sample_batch` ``(stream, k, ...)``. ``eps`` and ``affine``
    do not change the running statistics; they are accepted so a call mirrors a module.
    ``on_step(done, steps)``, when given, is called after each step (a progress bar's hook;
    the result does not depend on it).

    Raises:
        ValueError: bad sizes, momentum or eps, ``steps`` outside ``[0, MAX_STEPS]``, or
            torch's "Expected more than 1 value per channel when training" error when each
            channel of a batch holds one value.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be an integer in [0, {MAX_STEPS}], got {steps!r}")
    shape = input_shape(batch_size, stream.channels, spatial)
    check_momentum(momentum)
    check_eps(eps)
    channels = stream.channels
    n = values_per_channel(shape)
    if steps > 0 and n == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size "
            f"{torch.Size(shape)}"
        )
    if steps > 0 and eps <= 0.0:  # as manual_batchnorm (and torch) in training
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    state = BNState.fresh(channels, track_running_stats=track_running_stats, dtype=dtype)
    b_mean = np.zeros((steps, channels))
    b_var = np.zeros((steps, channels))
    b_var_u = np.zeros((steps, channels))
    t_mean = np.zeros((steps, channels))
    t_var = np.zeros((steps, channels))
    factors = np.zeros(steps)
    r_mean = np.zeros((steps + 1, channels)) if track_running_stats else None
    r_var = np.ones((steps + 1, channels)) if track_running_stats else None
    first_nan: int | None = None
    for k in range(steps):
        x = sample_batch(stream, k, batch_size, spatial, seed=seed, dtype=dtype)
        mean, var, var_u = batch_stats(x)
        if track_running_stats:  # what manual_batchnorm(x, state, training=True) does
            state = _updated_state(state, mean, var_u, momentum)
        b_mean[k], b_var[k], b_var_u[k] = mean.double().numpy(), var.double().numpy(), \
            var_u.double().numpy()
        m, s = stream.params_at(k)
        t_mean[k], t_var[k] = m, np.square(s)
        factors[k] = (1.0 / (k + 1)) if momentum is None else momentum
        if track_running_stats:
            r_mean[k + 1] = state.running_mean.double().numpy()
            r_var[k + 1] = state.running_var.double().numpy()
            if first_nan is None and not (np.isfinite(r_mean[k + 1]).all()
                                          and np.isfinite(r_var[k + 1]).all()):
                first_nan = k + 1
        if on_step is not None:
            on_step(k + 1, steps)
    return History(
        steps=steps, values_per_channel=n, batch_mean=b_mean, batch_var=b_var,
        batch_var_unbiased=b_var_u, running_mean=r_mean, running_var=r_var, true_mean=t_mean,
        true_var=t_var, factors=factors, shift_step=stream.shift_step, state=state,
        first_nan_step=first_nan,
    )


def simulate_config(config: SimConfig, steps: int,
                    on_step: Callable[[int, int], None] | None = None) -> History:
    """:func:`simulate` with the settings of ``config`` (looked up when called, so a wrapped
    :func:`simulate` is the one that runs)."""
    return simulate(
        config.stream, steps, config.batch_size, spatial=config.spatial,
        momentum=config.momentum, eps=config.eps, affine=config.affine,
        track_running_stats=config.track_running_stats, seed=config.seed, on_step=on_step,
    )


#: Cost model of :func:`simulate` on the 2-core CPU this app is served from, measured while other
#: work shared it (1.4 ms per step for a 768-value batch, 165 ms for a 248,832-value one): a
#: fixed cost per step plus a cost per value of a batch. An estimate to warn with, not a promise.
SIM_SECONDS_PER_STEP = 1.5e-3
SIM_SECONDS_PER_VALUE = 6.5e-7


def estimate_simulate_seconds(config: SimConfig, steps: int) -> float:
    """About how long :func:`simulate` takes for ``steps`` steps of ``config`` on this CPU.

    >>> round(estimate_simulate_seconds(SimConfig(Stream((0.0,), (1.0,))), 100), 2)
    0.17
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    values = int(np.prod(config.shape, dtype=np.int64))
    return steps * (SIM_SECONDS_PER_STEP + values * SIM_SECONDS_PER_VALUE)


def affordable_steps(config: SimConfig, seconds: float) -> int:
    """The most steps of ``config`` that :func:`estimate_simulate_seconds` puts within ``seconds``
    (at least 1, at most :data:`MAX_STEPS`)."""
    per_step = estimate_simulate_seconds(config, 1)
    return int(min(MAX_STEPS, max(1, seconds // per_step)))

# --------------------------------------------------------------------------------------------
# Where the notes are wrong or incomplete about BatchNorm (checked live)
# --------------------------------------------------------------------------------------------

#: Where each lesson below comes from in the notes (``FILE:LINE``, see :mod:`core.notes`).
NOTES_REFS: dict[str, str] = {
    "formula": "002:801-805",
    "formula_missing": "000:11",
    "batch_of_one": "000:76",
    "repeated_eval": "002:795",
    "running_stats": "002:783",
    "untracked": "002:789-791",
}

_FORMULA_CALLOUT_CODE = '''import torch
from torch import nn

x = torch.randn(4, 3, 2, 2, generator=torch.Generator().manual_seed(0)) * 2 + 1
bn = nn.BatchNorm2d(3).train()
with torch.no_grad():
    bn.weight.copy_(torch.tensor([1.5, 0.5, 2.0]))  # γ
    bn.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))  # β
    y = bn(x).double()
x64, dims = x.double(), (0, 2, 3)  # per channel: over N, H, W
mean = x64.mean(dims, keepdim=True)  # E[x]
var = x64.var(dims, correction=0, keepdim=True)  # Var[x], biased
gamma, beta = bn.weight.double().view(1, -1, 1, 1), bn.bias.double().view(1, -1, 1, 1)
by_hand = (x64 - mean) / torch.sqrt(var + bn.eps) * gamma + beta
print(f"max |formula - nn.BatchNorm2d| = {(by_hand - y).abs().max().item():.1e}")
'''

_VARIANCE_CALLOUT_CODE = '''import torch
from torch import nn

x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)) * 2 + 1  # n = 4 per channel
bn = nn.BatchNorm1d(3, affine=False).train()
with torch.no_grad():
    y = bn(x)
mean = x.mean(0)
for name, var in (("biased", x.var(0, correction=0)), ("unbiased", x.var(0, correction=1))):
    normalize = ((x - mean) / torch.sqrt(var + bn.eps) - y).abs().max().item()
    running = (bn.running_var - (0.9 * 1.0 + 0.1 * var)).abs().max().item()
    print(f"{name}: normalize diff {normalize:.1e}, running_var diff {running:.1e}")
'''

_RUNNING_CALLOUT_CODE = '''import torch
from torch import nn

g = torch.Generator().manual_seed(0)
batches = [torch.randn(16, 1, generator=g) + (5.0 if k >= 90 else 0.0) for k in range(100)]
ema, cumulative = nn.BatchNorm1d(1), nn.BatchNorm1d(1, momentum=None)
with torch.no_grad():
    for xb in batches:  # 90 batches of mean 0, then 10 of mean 5
        ema(xb)
        cumulative(xb)
print(f"mean of all 100 batches: {torch.cat(batches).mean().item():.3f}")
print(f"running_mean, momentum=0.1: {ema.running_mean.item():.3f}")
print(f"running_mean, momentum=None: {cumulative.running_mean.item():.3f}")
'''

_UNTRACKED_CALLOUT_CODE = '''import torch
from torch import nn

bn = nn.BatchNorm2d(3, track_running_stats=False)
print("before:", bn.running_mean, bn.running_var)
with torch.no_grad():
    bn.train()(torch.randn(4, 3, 2, 2))
    bn.eval()(torch.randn(4, 3, 2, 2))
print("after train() and eval():", bn.running_mean, bn.running_var)
print("buffers:", [name for name, _ in bn.named_buffers()])
'''


def _floats_after(label: str, text: str) -> list[float]:
    """The numbers printed after ``label`` on its line of ``text`` (empty if absent)."""
    for line in text.splitlines():
        if line.startswith(label):
            return [float(v) for v in
                    re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan", line[len(label):])]
    return []


def _formula_callout() -> NotesCallout:
    run = run_live(_FORMULA_CALLOUT_CODE)
    diff = _floats_after("max |formula - nn.BatchNorm2d| =", run.output)
    if run.raised or not diff:
        today = N_("The check did not run ({error}), so nothing is claimed.")
        args = (("error", run.error or "no output"),)
    elif diff[0] < 1e-5:
        today = N_(
            "The notes stop at 'as follows' and the formula never comes. nn.BatchNorm2d "
            "computes, per channel, y = (x − E[x]) / sqrt(Var[x] + eps) · γ + β, with E[x] and "
            "Var[x] over N, H and W and Var the biased variance (divide by n). Written out by "
            "hand it gives the module's output to {diff} (float32 rounding). The "
            "'formula with live numbers' demo on this page substitutes one element's numbers."
        )
        args = (("diff", f"{diff[0]:.1e}"),)
    else:
        today = N_("The textbook formula y = (x − E[x]) / sqrt(Var[x] + eps) · γ + β, with the "
                   "biased variance, is {diff} away from nn.BatchNorm2d here: this torch "
                   "computes something else.")
        args = (("diff", f"{diff[0]:.1e}"),)
    return NotesCallout(
        key="bn_formula_missing",
        title=N_("BatchNorm: the formula the notes announce is not there"),
        ref=NotesRef.parse(NOTES_REFS["formula_missing"]),
        quote_zh="当 track_running_stats=False 时，只会用当前的 batch 统计量来做归一化"
                 "具体计算式如下：",
        gloss_en="With track_running_stats=False only the current batch's statistics are used "
                 "to normalise. The exact formula is as follows: (the line ends here; no formula "
                 "follows)",
        verdict="incomplete", today=today, today_args=args, run=run,
    )


def _variance_callout() -> NotesCallout:
    run = run_live(_VARIANCE_CALLOUT_CODE)
    biased = _floats_after("biased:", run.output)
    unbiased = _floats_after("unbiased:", run.output)
    if run.raised or len(biased) != 2 or len(unbiased) != 2:
        today = N_("The check did not run ({error}), so nothing is claimed.")
        args = (("error", run.error or "no output"),)
    else:
        def which(i: int) -> str:
            if biased[i] < 1e-5 <= unbiased[i]:
                return "biased"
            if unbiased[i] < 1e-5 <= biased[i]:
                return "unbiased"
            return "neither"

        args = (("b0", f"{biased[0]:.1e}"), ("u0", f"{unbiased[0]:.1e}"),
                ("u1", f"{unbiased[1]:.1e}"), ("b1", f"{biased[1]:.1e}"))
        if (which(0), which(1)) == ("biased", "unbiased"):  # what PyTorch does
            today = N_(
                "The notes never say which variance. In train() nn.BatchNorm1d normalizes with "
                "the biased variance Σ(x − E[x])²/n of the mini-batch (diff {b0} vs {u0} for the "
                "other), but updates running_var with the unbiased variance Σ(x − E[x])²/(n − 1) "
                "(diff {u1} vs {b1}). With n = 4 values per channel the two differ by "
                "n/(n − 1) = 4/3; running_mean and running_var are used only in eval()."
            )
        else:
            today = N_(
                "The notes never say which variance, and this torch is unusual: in train() "
                "nn.BatchNorm1d normalizes with {first} of the mini-batch (diff {b0} vs {u0}) "
                "and updates running_var with {second} (diff {u1} vs {b1})."
            )
            args += (("first", which(0)), ("second", which(1)))
    return NotesCallout(
        key="bn_variance_biased_unbiased",
        title=N_("BatchNorm: which variance, the batch's or running_var?"),
        ref=NotesRef.parse("002:804"),
        quote_zh="$E[x]$ and $Var[x]$ are the computed mean running_mean and variance "
                 "running_var of this layer; 在训练时, 这两个参数 are calculated per-dimension "
                 "over the mini-batches",
        gloss_en="E[x] and Var[x] are this layer's running_mean and running_var; in training, "
                 "these two are calculated per dimension over the mini-batches.",
        verdict="incomplete", today=today, today_args=args, run=run,
    )


def _running_stats_callout() -> NotesCallout:
    run = run_live(_RUNNING_CALLOUT_CODE)
    overall = _floats_after("mean of all 100 batches:", run.output)
    ema = _floats_after("running_mean, momentum=0.1:", run.output)
    cumulative = _floats_after("running_mean, momentum=None:", run.output)
    if run.raised or not (overall and ema and cumulative):
        today = N_("The check did not run ({error}), so nothing is claimed.")
        args = (("error", run.error or "no output"),)
    elif abs(ema[0] - overall[0]) > 1.0 and abs(cumulative[0] - overall[0]) < 0.01:
        today = N_(
            "With the default momentum=0.1 the buffers are an exponential moving average that "
            "forgets: after 90 batches of mean 0 and 10 of mean 5, running_mean is {ema} "
            "while the mean of all 100 batches is {overall} (the last 10 batches weigh "
            "1 − 0.9¹⁰ = {weight}). Only momentum=None, a cumulative average, "
            "follows all batches equally: {cumulative}."
        )
        args = (("ema", f"{ema[0]:.3f}"), ("overall", f"{overall[0]:.3f}"),
                ("weight", f"{1 - 0.9 ** 10:.0%}"), ("cumulative", f"{cumulative[0]:.3f}"))
    else:
        today = N_("running_mean is {ema} with momentum=0.1 and {cumulative} with "
                   "momentum=None; the mean of all batches is {overall}.")
        args = (("ema", f"{ema[0]:.3f}"), ("overall", f"{overall[0]:.3f}"),
                ("cumulative", f"{cumulative[0]:.3f}"))
    return NotesCallout(
        key="bn_running_stats_forget",
        title=N_("BatchNorm: running statistics follow the recent batches, not all of them"),
        ref=NotesRef.parse(NOTES_REFS["running_stats"]),
        quote_zh="running_mean 和 running_var 会跟踪整个训练过程中所有 mini-batch 的统计特性",
        gloss_en="(In train() with track_running_stats=True) running_mean and running_var track "
                 "the statistics of all mini-batches over the whole training.",
        verdict="incomplete", today=today, today_args=args, run=run,
    )


def _untracked_callout() -> NotesCallout:
    run = run_live(_UNTRACKED_CALLOUT_CODE)
    out = run.output
    confirmed = not run.raised and all(
        line in out for line in ("before: None None", "eval(): None None", "buffers: []")
    )
    if run.raised or not out:
        today = N_("The check did not run ({error}), so nothing is claimed.")
        args = (("error", run.error or "no output"),)
    elif confirmed:
        args = ()
        today = N_(
            "With track_running_stats=False there is no running_mean or running_var: both are "
            "None before and after train() and eval() passes, and the module has no buffers at "
            "all. What depends on the current mini-batch is the normalisation itself: both "
            "modes use the batch's own mean and biased variance, computed on the fly and never "
            "stored."
        )
    else:
        today = N_("This torch keeps running statistics even with track_running_stats=False: "
                   "{output}")
        args = (("output", out.replace("\n", "; ")),)
    return NotesCallout(
        key="bn_untracked_has_no_running_stats",
        title=N_("BatchNorm: track_running_stats=False leaves no running_mean/running_var"),
        ref=NotesRef.parse(NOTES_REFS["untracked"]),
        quote_zh="track_running_stats=False时, running_mean 和 running_var 仅仅依赖于当前 "
                 "mini-batch 的统计特性",
        gloss_en="With track_running_stats=False, running_mean and running_var depend only on "
                 "the statistics of the current mini-batch (said for train() at 002:789 and for "
                 "eval() at 002:791).",
        verdict=verdict_if(confirmed, "wrong"), today=today, today_args=args, run=run,
    )


def notes_callouts() -> list[NotesCallout]:
    """The notes' BatchNorm claims that are wrong or incomplete, each checked by a live run."""
    return [_formula_callout(), _variance_callout(), _running_stats_callout(),
            _untracked_callout()]
