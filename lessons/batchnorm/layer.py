"""BatchNorm written out by hand, a synthetic data stream to train it on, and its neighbours.

Everything here is pure PyTorch/numpy (no Streamlit). The central piece is
:func:`manual_batchnorm`, a plain-arithmetic re-implementation of ``nn.BatchNorm1d/2d``
that returns the output *and* the updated buffers as a :class:`BNState`. :func:`simulate`
trains it on a stream with known per-channel statistics, :func:`compare_modes` puts the
``train()`` and ``eval()`` outputs of one batch side by side, :func:`compare_norms` checks
BatchNorm / LayerNorm / InstanceNorm / GroupNorm against the real modules, and
:func:`snippet_for` writes a runnable script that reproduces a configuration.

>>> import torch
>>> x = torch.randn(8, 3)
>>> y, state = manual_batchnorm(x, BNState.fresh(3), training=True, momentum=0.1, eps=1e-5)
>>> state.num_batches_tracked
1
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from core.notes import NotesCallout, NotesRef, run_live, verdict_if
from core.text import N_, T

__all__ = [
    "LAYOUTS",
    "MAX_EVAL_TEST_SIZE",
    "MAX_LOADER_BATCH",
    "MAX_LOADER_DATASET",
    "NOTES_REFS",
    "BatchOfOne",
    "FormulaCheck",
    "LoaderRun",
    "RepeatedEval",
    "batch_of_one",
    "batch_of_one_snippet",
    "formula_check",
    "formula_snippet",
    "explain_loader",
    "loader_run",
    "loader_snippet",
    "notes_callouts",
    "repeated_eval",
    "repeated_eval_snippet",
    "MAX_STEPS",
    "SIM_SECONDS_PER_STEP",
    "SIM_SECONDS_PER_VALUE",
    "affordable_steps",
    "estimate_simulate_seconds",
    "MAX_STREAM_VALUE",
    "MAX_VALUES_PER_BATCH",
    "Anatomy",
    "BNState",
    "FrozenCheck",
    "History",
    "ModeComparison",
    "NormResult",
    "SimConfig",
    "SpatialCap",
    "Stream",
    "UpdateExplanation",
    "batch_stats",
    "cap_spatial",
    "compare_modes",
    "compare_norms",
    "explain_update",
    "frozen_check",
    "input_shape",
    "keras_to_pytorch_momentum",
    "make_module",
    "manual_batchnorm",
    "module_anatomy",
    "norm_group_ids",
    "parse_channel_values",
    "pytorch_to_keras_momentum",
    "sample_batch",
    "simulate",
    "snippet_for",
    "torch_error_for",
]

# Input layouts the page offers: name -> number of spatial dims.
LAYOUTS: dict[str, int] = {"(N, C)": 0, "(N, C, L)": 1, "(N, C, H, W)": 2}
MAX_VALUES_PER_BATCH = 262_144  # N * C * spatial elements in one simulated batch
MAX_STEPS = 2_000  # longest simulated history
MAX_STREAM_VALUE = 1e12  # |mean| and std of a stream: float32 batches and squares stay finite
_SEED_STRIDE = 1_000_003  # batch k of seed s is drawn from a generator seeded with s*stride + k


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

    @classmethod
    def from_module(cls, module: nn.modules.batchnorm._BatchNorm) -> BNState:
        """Copy the buffers of a real BatchNorm module."""
        if module.running_mean is None:
            return cls(running_mean=None, running_var=None, num_batches_tracked=None)
        return cls(
            running_mean=module.running_mean.detach().clone(),
            running_var=module.running_var.detach().clone(),
            num_batches_tracked=int(module.num_batches_tracked.item()),
        )


def _check_momentum(momentum: float | None) -> None:
    if momentum is None:
        return
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise ValueError(f"momentum must be a number in [0, 1] or None, got {momentum!r}")
    if not math.isfinite(momentum) or not 0.0 <= momentum <= 1.0:
        raise ValueError(
            f"momentum must be in [0, 1] (PyTorch convention: the weight of the new batch), "
            f"or None for a cumulative average, got {momentum}"
        )


def _check_eps(eps: float) -> None:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) \
            or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")


def _reduce_dims(x: Tensor) -> list[int]:
    return [0, *range(2, x.dim())]


def _per_channel(t: Tensor, x: Tensor) -> Tensor:
    """Reshape a (C,) tensor so it broadcasts against x of shape (N, C, *S)."""
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


def _values_per_channel(shape: Sequence[int]) -> int:
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
    dims = _reduce_dims(x)
    n_batch, channels = x.shape[0], x.shape[1]
    n = _values_per_channel(x.shape)
    if n > n_batch or x.dtype not in (torch.float32, torch.float64):
        mean = (x.double().sum(dim=dims) / n).to(x.dtype)
        centered = x - _per_channel(mean, x)
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
    n = _values_per_channel(x.shape)
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
    _check_momentum(momentum)
    _check_eps(eps)
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
    if use_batch_stats and _values_per_channel(x.shape) == 1:
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
        n = _values_per_channel(x.shape)
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
    y = _fma(x, _per_channel(alpha, x), _per_channel(beta, x))
    return y, new_state


# --------------------------------------------------------------------------------------------
# The synthetic stream and the simulation
# --------------------------------------------------------------------------------------------


def parse_channel_values(text: str, channels: int, *, name: str) -> tuple[float, ...]:
    """Parse ``"2, -1, 0.5"`` into one finite float per channel.

    A single value is repeated for every channel. Raises ``ValueError`` naming ``name`` for
    text that is not numbers, the wrong count, or NaN/inf values.
    """
    if channels < 1:
        raise ValueError(f"channels must be >= 1, got {channels}")
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError(T("{name}: enter one number, or one per channel separated by commas",
                           name=name))
    values: list[float] = []
    for part in parts:
        try:
            values.append(float(part))
        except ValueError:
            raise ValueError(T("{name}: {part} is not a number", name=name,
                               part=repr(part))) from None
    if len(values) == 1:
        values = values * channels
    if len(values) != channels:
        raise ValueError(T(
            "{name}: got {count} values for {channels} channels; give one value or "
            "exactly {channels}", name=name, count=len(values), channels=channels,
        ))
    for c, v in enumerate(values):
        if math.isnan(v):
            raise ValueError(T("{name} for channel {c} is NaN; the stream needs finite numbers",
                               name=name, c=c))
        if math.isinf(v):
            raise ValueError(T(
                "{name} for channel {c} is infinite; the stream needs finite numbers",
                name=name, c=c))
    return tuple(values)


@dataclass(frozen=True)
class Stream:
    """A synthetic stream: channel c is drawn from Normal(mean[c], std[c]).

    From batch index ``shift_step`` on (i.e. after ``shift_step`` training steps) the stream
    uses ``shifted_mean`` / ``shifted_std`` instead. ``nan_step`` (optional) puts one NaN into
    channel 0 of that batch, to show how a single bad value poisons the running stats.
    """

    mean: tuple[float, ...]
    std: tuple[float, ...]
    shift_step: int | None = None
    shifted_mean: tuple[float, ...] | None = None
    shifted_std: tuple[float, ...] | None = None
    nan_step: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", tuple(float(v) for v in self.mean))
        object.__setattr__(self, "std", tuple(float(v) for v in self.std))
        channels = len(self.mean)
        if channels < 1:
            raise ValueError("the stream needs at least one channel")
        if self.shift_step is not None:
            if self.shifted_mean is None:
                object.__setattr__(self, "shifted_mean", self.mean)
            if self.shifted_std is None:
                object.__setattr__(self, "shifted_std", self.std)
            object.__setattr__(self, "shifted_mean", tuple(float(v) for v in self.shifted_mean))
            object.__setattr__(self, "shifted_std", tuple(float(v) for v in self.shifted_std))
            if int(self.shift_step) < 0:
                raise ValueError(f"shift step must be >= 0, got {self.shift_step}")
        groups = [(N_("mean"), self.mean), (N_("std"), self.std)]
        if self.shift_step is not None:
            groups += [(N_("mean after the shift"), self.shifted_mean),
                       (N_("std after the shift"), self.shifted_std)]
        for label, values in groups:
            if len(values) != channels:
                raise ValueError(T(
                    "stream {label} has {count} values, expected {channels} (one per "
                    "channel)", label=label, count=len(values), channels=channels,
                ))
            for c, v in enumerate(values):
                if not math.isfinite(v):
                    raise ValueError(T(
                        "stream {label} for channel {c} is {v}; NaN/inf are not allowed",
                        label=label, c=c, v=v,
                    ))
                if abs(v) > MAX_STREAM_VALUE:
                    raise ValueError(T(
                        "stream {label} for channel {c} is {v:g}; keep it within "
                        "±{limit:g} so the float32 batches and their squared "
                        "deviations stay finite", label=label, c=c, v=v, limit=MAX_STREAM_VALUE,
                    ))
                if label.startswith("std") and v <= 0:
                    raise ValueError(T(
                        "stream {label} for channel {c} must be > 0, got {v}: a standard "
                        "deviation of zero or less is not a distribution", label=label, c=c, v=v,
                    ))
        if self.nan_step is not None and int(self.nan_step) < 0:
            raise ValueError(f"NaN step must be >= 0, got {self.nan_step}")

    @property
    def channels(self) -> int:
        return len(self.mean)

    def params_at(self, index: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(mean, std) used for batch ``index`` (0-based)."""
        if self.shift_step is not None and index >= self.shift_step:
            return self.shifted_mean, self.shifted_std  # type: ignore[return-value]
        return self.mean, self.std


def input_shape(batch_size: int, channels: int, spatial: Sequence[int]) -> tuple[int, ...]:
    """``(N, C, *spatial)`` after validation."""
    if batch_size < 1:
        raise ValueError(f"batch size must be >= 1, got {batch_size}")
    if channels < 1:
        raise ValueError(f"channels must be >= 1, got {channels}")
    if len(spatial) > 2 or any(int(s) < 1 for s in spatial):
        raise ValueError(f"spatial size must be 0, 1 or 2 positive sizes, got {tuple(spatial)}")
    return (int(batch_size), int(channels), *(int(s) for s in spatial))


@dataclass(frozen=True)
class SpatialCap:
    """Result of :func:`cap_spatial`: the side actually used and a notice when it was reduced."""

    side: int
    requested: int
    notice: str | None


def cap_spatial(side: int, *, dims: int, batch_size: int, channels: int,
                max_values: int = MAX_VALUES_PER_BATCH) -> SpatialCap:
    """Limit the spatial side so one batch has at most ``max_values`` numbers.

    ``dims`` is 0 (no spatial axis, ``side`` ignored), 1 (``L = side``) or 2 (``H = W = side``).
    """
    if dims not in (0, 1, 2):
        raise ValueError(f"dims must be 0, 1 or 2, got {dims}")
    if side < 1:
        raise ValueError(f"spatial size must be >= 1, got {side}")
    if dims == 0:
        return SpatialCap(side=1, requested=side, notice=None)
    per_position = max(1, batch_size * channels)
    limit = max(1, int((max_values // per_position) ** (1.0 / dims) + 1e-9))
    while (limit + 1) ** dims * per_position <= max_values:
        limit += 1
    while limit > 1 and limit**dims * per_position > max_values:
        limit -= 1
    if side <= limit:
        return SpatialCap(side=side, requested=side, notice=None)
    shape = "x".join([str(limit)] * dims)
    return SpatialCap(
        side=limit,
        requested=side,
        notice=T(
            "Spatial size {side} would make {numbers:,} numbers per "
            "batch; capped at {limit} ({shape}) to stay under {max_values:,}. BatchNorm treats "
            "every spatial position as one more sample per channel, so the lesson is the same.",
            side=side, numbers=batch_size * channels * side**dims, limit=limit, shape=shape,
            max_values=max_values,
        ),
    )


def sample_batch(stream: Stream, index: int, batch_size: int, spatial: Sequence[int] = (), *,
                 seed: int = 0, dtype: torch.dtype = torch.float32) -> Tensor:
    """Batch number ``index`` (0-based) of the stream: ``(N, C, *spatial)`` on the CPU.

    Deterministic: drawn with ``torch.Generator().manual_seed(seed * 1_000_003 + index)``, so
    a batch does not depend on how many were drawn before it.
    """
    shape = input_shape(batch_size, stream.channels, spatial)
    gen = torch.Generator().manual_seed(int(seed) * _SEED_STRIDE + int(index))
    noise = torch.randn(shape, generator=gen, dtype=dtype)
    mean, std = stream.params_at(index)
    view = (1, -1, *([1] * len(spatial)))
    x = torch.tensor(mean, dtype=dtype).view(view) + torch.tensor(std, dtype=dtype).view(
        view) * noise
    if stream.nan_step is not None and index == stream.nan_step:
        x.view(-1)[0] = float("nan")  # channel 0 of sample 0
    return x


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
    _check_momentum(momentum)
    _check_eps(eps)
    channels = stream.channels
    n = _values_per_channel(shape)
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


def _channel_mean_std(y: Tensor) -> tuple[np.ndarray, np.ndarray]:
    dims = _reduce_dims(y)
    mean = y.mean(dim=dims)
    std = ((y - _per_channel(mean, y)) ** 2).mean(dim=dims).sqrt()
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


# --------------------------------------------------------------------------------------------
# Real modules: anatomy, errors, frozen BN
# --------------------------------------------------------------------------------------------


def make_module(channels: int, spatial_dims: int, *, momentum: float | None = 0.1,
                eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True,
                state: BNState | None = None) -> nn.modules.batchnorm._BatchNorm:
    """A real ``nn.BatchNorm1d`` (spatial_dims 0/1) or ``nn.BatchNorm2d`` (2), optionally
    loaded with ``state``'s buffers."""
    _check_momentum(momentum)
    _check_eps(eps)
    if spatial_dims not in (0, 1, 2):
        raise ValueError(f"spatial_dims must be 0, 1 or 2, got {spatial_dims}")
    cls = nn.BatchNorm2d if spatial_dims == 2 else nn.BatchNorm1d
    module = cls(channels, eps=eps, momentum=momentum, affine=affine,
                 track_running_stats=track_running_stats)
    if state is not None and state.tracked and track_running_stats:
        with torch.no_grad():
            module.running_mean.copy_(state.running_mean)
            module.running_var.copy_(state.running_var)
            module.num_batches_tracked.fill_(int(state.num_batches_tracked))
    return module


@dataclass(frozen=True)
class Anatomy:
    """What a live module exposes: ``(name, shape, requires_grad)`` per parameter, ``(name,
    shape, dtype)`` per buffer, the state_dict keys, and how many tensors an optimizer sees."""

    module_repr: str
    parameters: tuple[tuple[str, tuple[int, ...], bool], ...]
    buffers: tuple[tuple[str, tuple[int, ...], str], ...]
    state_dict_keys: tuple[str, ...]
    optimizer_tensors: int


def module_anatomy(module: nn.Module) -> Anatomy:
    """List parameters vs buffers vs state_dict keys of ``module``."""
    params = tuple((n, tuple(p.shape), bool(p.requires_grad))
                   for n, p in module.named_parameters())
    buffers = tuple((n, tuple(b.shape), str(b.dtype).replace("torch.", ""))
                    for n, b in module.named_buffers())
    opt_tensors = sum(1 for _ in module.parameters())
    return Anatomy(module_repr=repr(module), parameters=params, buffers=buffers,
                   state_dict_keys=tuple(module.state_dict().keys()),
                   optimizer_tensors=opt_tensors)


def torch_error_for(shape: Sequence[int], *, training: bool = True,
                    track_running_stats: bool = True) -> str | None:
    """Run a real ``nn.BatchNorm1d/2d`` on zeros of ``shape``; return its error text or None."""
    shape = tuple(int(s) for s in shape)
    module = make_module(shape[1], len(shape) - 2, track_running_stats=track_running_stats)
    module.train(training)
    try:
        with torch.no_grad():
            module(torch.zeros(shape))
    except (ValueError, RuntimeError) as err:
        return str(err)
    return None


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


@dataclass(frozen=True)
class FrozenCheck:
    """torchvision's FrozenBatchNorm2d loaded from the same buffers, run on the same batch."""

    parameters: int
    buffers: tuple[str, ...]
    max_abs_diff_vs_eval: float
    y_frozen: Tensor


def frozen_check(x: Tensor, state: BNState, y_eval: Tensor, *, eps: float,
                 weight: Tensor | None = None, bias: Tensor | None = None) -> FrozenCheck:
    """Compare ``FrozenBatchNorm2d`` with our ``eval()`` output ``y_eval``.

    ``x`` of any supported layout is viewed as ``(N, C, H, W)``. Needs a tracked ``state``.
    """
    from torchvision.ops import FrozenBatchNorm2d

    if not state.tracked:
        raise ValueError("FrozenBatchNorm2d needs running statistics; track_running_stats is off")
    channels = x.shape[1]
    frozen = FrozenBatchNorm2d(channels, eps=eps).to(x.dtype)
    with torch.no_grad():
        frozen.running_mean.copy_(state.running_mean)
        frozen.running_var.copy_(state.running_var)
        if weight is not None:
            frozen.weight.copy_(weight)
        if bias is not None:
            frozen.bias.copy_(bias)
        x4 = x.reshape(x.shape[0], channels, -1, 1)
        y = frozen(x4).reshape(x.shape)
    return FrozenCheck(
        parameters=sum(1 for _ in frozen.parameters()),
        buffers=tuple(n for n, _ in frozen.named_buffers()),
        max_abs_diff_vs_eval=float((y - y_eval).abs().max().item()),
        y_frozen=y,
    )


# --------------------------------------------------------------------------------------------
# Keras momentum
# --------------------------------------------------------------------------------------------


def pytorch_to_keras_momentum(momentum: float) -> float:
    """PyTorch's momentum is the weight of the *new* batch; Keras's is the weight of the old
    average. ``0.1 -> 0.9``. ``None`` (cumulative average) has no Keras equivalent."""
    if momentum is None:
        raise ValueError("momentum=None is PyTorch's cumulative average; Keras has no equivalent")
    _check_momentum(momentum)
    return round(1.0 - float(momentum), 12)


def keras_to_pytorch_momentum(momentum: float) -> float:
    """Keras ``momentum=0.99`` -> PyTorch ``momentum=0.01``."""
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or \
            not math.isfinite(momentum) or not 0.0 <= momentum <= 1.0:
        raise ValueError(f"Keras momentum must be in [0, 1], got {momentum!r}")
    return round(1.0 - float(momentum), 12)


# --------------------------------------------------------------------------------------------
# BatchNorm vs LayerNorm vs InstanceNorm vs GroupNorm
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormResult:
    """One normalization applied by hand and by the real module to the same ``(N, C, H, W)``
    input. ``stats_shape`` is how many (mean, var) pairs it computes."""

    name: str
    module: str
    axes: str
    stats_shape: tuple[int, ...]
    values_per_stat: int
    max_abs_diff: float
    output: Tensor


def norm_group_ids(name: str, batch: int, channels: int, groups: int = 1) -> np.ndarray:
    """``(C, N)`` int array: cells with the same id share one mean/var (H, W always pooled)."""
    n_idx, c_idx = np.meshgrid(np.arange(batch), np.arange(channels))
    if name == "BatchNorm":
        return c_idx
    if name == "LayerNorm":
        return n_idx
    if name == "InstanceNorm":
        return n_idx * channels + c_idx
    if name == "GroupNorm":
        if groups < 1 or channels % groups:
            raise ValueError(f"groups must divide channels ({channels}), got {groups}")
        return n_idx * groups + c_idx // (channels // groups)
    raise ValueError(f"unknown normalization {name!r}")


def _normalize(x: Tensor, dims: Sequence[int], eps: float) -> Tensor:
    mean = x.mean(dim=tuple(dims), keepdim=True)
    var = ((x - mean) ** 2).mean(dim=tuple(dims), keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def compare_norms(x: Tensor, groups: int, *, eps: float = 1e-5) -> tuple[NormResult, ...]:
    """Normalize ``x: (N, C, H, W)`` four ways, by hand and with the real modules (no affine,
    no running stats), and report which axes each pooled and the largest difference."""
    if not isinstance(x, Tensor) or x.dim() != 4 or not x.is_floating_point():
        raise ValueError(f"compare_norms needs a float (N, C, H, W) tensor, got "
                         f"{getattr(x, 'shape', type(x))}")
    n, c, h, w = x.shape
    if groups < 1 or c % groups:
        raise ValueError(f"GroupNorm groups must divide the {c} channels, got {groups}")
    if n * h * w < 2 or h * w < 2:
        raise ValueError(f"compare_norms needs N*H*W > 1 and H*W > 1, got shape {tuple(x.shape)}")
    _check_eps(eps)
    results = []
    specs = [
        ("BatchNorm", nn.BatchNorm2d(c, eps=eps, affine=False, track_running_stats=False),
         N_("N, H, W (one statistic per channel)"), (c,), n * h * w,
         _normalize(x, (0, 2, 3), eps)),
        ("LayerNorm", nn.LayerNorm([c, h, w], eps=eps, elementwise_affine=False),
         N_("C, H, W (one statistic per sample)"), (n,), c * h * w,
         _normalize(x, (1, 2, 3), eps)),
        ("InstanceNorm", nn.InstanceNorm2d(c, eps=eps),
         N_("H, W (one statistic per sample and channel)"), (n, c), h * w,
         _normalize(x, (2, 3), eps)),
        ("GroupNorm", nn.GroupNorm(groups, c, eps=eps, affine=False),
         T("C/G, H, W (one statistic per sample and group of {size} channels)",
           size=c // groups),
         (n, groups), (c // groups) * h * w,
         _normalize(x.reshape(n, groups, -1), (2,), eps).reshape(n, c, h, w)),
    ]
    for name, module, axes, stats_shape, per_stat, manual in specs:
        module = module.to(x.dtype).train()
        with torch.no_grad():
            real = module(x)
        results.append(NormResult(
            name=name, module=type(module).__name__, axes=axes, stats_shape=stats_shape,
            values_per_stat=per_stat, max_abs_diff=float((real - manual).abs().max().item()),
            output=manual,
        ))
    return tuple(results)


# --------------------------------------------------------------------------------------------
# Snippet
# --------------------------------------------------------------------------------------------


def _batch_function_code(config: SimConfig) -> str:
    """Source of ``def batch(k)``: batch ``k`` of the stream exactly as :func:`sample_batch`."""
    s = config.stream
    view = "(1, -1" + ", 1" * len(config.spatial) + ")"
    shift = ""
    if s.shift_step is not None:
        shift = (
            f"    if k >= {s.shift_step}:  # distribution shift\n"
            f"        mean, std = torch.tensor({list(s.shifted_mean)}), "
            f"torch.tensor({list(s.shifted_std)})\n"
        )
    nan = ""
    if s.nan_step is not None:
        nan = f"    if k == {s.nan_step}:\n        x.view(-1)[0] = float('nan')\n"
    return f'''def batch(k):
    """Batch k of the stream: Normal(mean[c], std[c]) per channel."""
    g = torch.Generator().manual_seed({config.seed} * {_SEED_STRIDE} + k)
    noise = torch.randn({config.shape}, generator=g)
    mean, std = torch.tensor({list(s.mean)}), torch.tensor({list(s.std)})
{shift}    x = mean.view{view} + std.view{view} * noise
{nan}    return x
'''


def snippet_for(config: SimConfig, steps: int) -> str:
    """A self-contained script that trains a real ``nn.BatchNorm`` on the same batches as
    :func:`simulate` and compares ``train()`` and ``eval()`` on the last one.

    After ``exec`` its namespace holds ``bn``, ``x`` (the batch shown), ``y_train`` and
    ``y_eval``.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be an integer in [0, {MAX_STEPS}], got {steps!r}")
    shown = max(steps - 1, 0)
    return f'''import copy

import torch
from torch import nn

torch.manual_seed({config.seed})
bn = nn.{config.module_name}({config.channels}, eps={config.eps!r}, momentum={config.momentum!r},
                     affine={config.affine}, track_running_stats={config.track_running_stats})


{_batch_function_code(config)}

bn.train()
for k in range({steps}):
    bn(batch(k))  # a training forward pass updates running_mean / running_var

x = batch({shown})
with torch.no_grad():
    # train() normalizes with this batch's statistics; a copy, so bn's buffers stay as they are
    y_train = copy.deepcopy(bn).train()(x)
    y_eval = bn.eval()(x)  # eval() uses running statistics (batch statistics if untracked)
dims = [0, *range(2, x.dim())]  # per channel: pool the batch and spatial axes
print("buffers:", dict(bn.named_buffers()))
print("train(): mean", y_train.mean(dims), "std", y_train.std(dims, correction=0))
print("eval():  mean", y_eval.mean(dims), "std", y_eval.std(dims, correction=0))
'''


# --------------------------------------------------------------------------------------------
# The notes' BatchNorm lessons, run live (notes 000:11, 000:76, 002:780-805)
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
MAX_LOADER_DATASET = 1_000  # samples in the DataLoader demo
MAX_LOADER_BATCH = 256
MAX_EVAL_TEST_SIZE = 64  # test-set samples in the repeated-evaluation demo


def _module_for(channels: int, spatial_dims: int, **kwargs: object) -> nn.Module:
    cls = nn.BatchNorm2d if spatial_dims == 2 else nn.BatchNorm1d
    return cls(channels, **kwargs)


def _error_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


@dataclass(frozen=True)
class FormulaCheck:
    """One element of a batch pushed through ``y = (x − E[x]) / sqrt(Var[x] + eps) · γ + β``.

    ``mean`` and ``var_biased`` are the channel's statistics over all ``n = N·spatial`` values
    of the batch (float64, from the float32 batch); ``var_unbiased`` is ``var_biased·n/(n−1)``.
    ``y_formula`` is the formula in float64 with the biased variance, ``y_formula_unbiased``
    the same with the unbiased one, and ``y_module`` what the real ``nn.BatchNorm`` in
    ``train()`` returned for the element (float32). ``weight`` / ``bias`` are ``None`` for
    ``affine=False`` (then γ = 1, β = 0).
    """

    module_name: str
    shape: tuple[int, ...]
    index: tuple[int, ...]
    channel: int
    n: int
    x: float
    mean: float
    var_biased: float
    var_unbiased: float
    eps: float
    weight: float | None
    bias: float | None
    y_formula: float
    y_formula_unbiased: float
    y_module: float

    @property
    def abs_diff(self) -> float:
        """``|y_formula − y_module|``: float32 rounding of the module's output, nothing more."""
        return abs(self.y_formula - self.y_module)

    @property
    def ulps(self) -> float:
        """``abs_diff`` in float32 steps (the spacing of float32 numbers at ``y_module``)."""
        spacing = float(np.spacing(np.float32(abs(self.y_module))))
        return self.abs_diff / spacing if spacing > 0 else float("nan")

    @property
    def matches(self) -> bool:
        """The formula with the biased variance equals the module's output (float32 tolerance,
        as ``torch.isclose``: ``|diff| <= 1e-8 + 1e-5·|y_module|``). NaN never matches."""
        return self.abs_diff <= 1e-8 + 1e-5 * abs(self.y_module)

    @property
    def matches_unbiased(self) -> bool:
        """Whether the unbiased variance would have given the module's output too (it should
        not, except when the element sits at the mean)."""
        return abs(self.y_formula_unbiased - self.y_module) <= 1e-8 + 1e-5 * abs(self.y_module)


def formula_check(x: Tensor, *, sample: int, channel: int, position: int = 0, eps: float = 1e-5,
                  weight: float | None = None, bias: float | None = None) -> FormulaCheck:
    """Substitute one element's numbers into the BatchNorm formula and run the real module.

    Args:
        x: ``(N, C)``, ``(N, C, L)`` or ``(N, C, H, W)`` float32 batch.
        sample, channel: which ``x[sample, channel]`` to follow.
        position: flat index into the spatial positions of that (sample, channel) (0 for
            ``(N, C)`` input), in ``[0, prod(spatial))``.
        eps: the module's eps (> 0: torch refuses 0 in training).
        weight, bias: γ and β for every channel, or both ``None`` for ``affine=False``.

    Returns:
        A :class:`FormulaCheck`; ``y_module`` comes from ``nn.BatchNorm1d/2d`` in ``train()``.

    Raises:
        ValueError: bad shape/index/eps, ``weight`` without ``bias`` (or the reverse), or
            torch's own "Expected more than 1 value per channel when training, ..." message.
    """
    if not isinstance(x, Tensor) or x.dim() not in (2, 3, 4) or not x.is_floating_point():
        raise ValueError(
            "x must be a float (N, C), (N, C, L) or (N, C, H, W) tensor, got "
            f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}"
        )
    _check_eps(eps)
    if eps <= 0:
        raise ValueError(f"eps must be > 0 (torch refuses 0 in training), got {eps}")
    if (weight is None) != (bias is None):
        raise ValueError(f"give both weight and bias (affine=True) or neither, got "
                         f"weight={weight!r}, bias={bias!r}")
    n_batch, channels = int(x.shape[0]), int(x.shape[1])
    positions = int(np.prod(x.shape[2:], dtype=np.int64))
    for name, value, size in (("sample", sample, n_batch), ("channel", channel, channels),
                              ("position", position, positions)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= value < size:
            raise ValueError(f"{name} must be an integer in [0, {size - 1}], got {value!r}")
    spatial_index = tuple(int(i) for i in np.unravel_index(int(position), tuple(x.shape[2:])))
    index = (int(sample), int(channel), *spatial_index)
    affine = weight is not None
    module = _module_for(channels, x.dim() - 2, eps=eps, affine=affine).to(x.dtype).train()
    if affine:
        with torch.no_grad():
            module.weight.fill_(float(weight))
            module.bias.fill_(float(bias))
    try:
        with torch.no_grad():
            y = module(x)
    except (ValueError, RuntimeError) as err:
        raise ValueError(str(err)) from None
    dims = _reduce_dims(x)
    x64 = x.detach().double()
    mean = float(x64.mean(dims)[channel])
    var_b = float(x64.var(dims, correction=0)[channel])
    n = _values_per_channel(x.shape)
    var_u = var_b * n / (n - 1)
    element = float(x64[index])
    gamma = 1.0 if weight is None else float(weight)
    beta = 0.0 if bias is None else float(bias)
    return FormulaCheck(
        module_name=type(module).__name__, shape=tuple(x.shape), index=index,
        channel=int(channel), n=n, x=element, mean=mean, var_biased=var_b, var_unbiased=var_u,
        eps=float(eps), weight=None if weight is None else float(weight),
        bias=None if bias is None else float(bias),
        y_formula=(element - mean) / math.sqrt(var_b + eps) * gamma + beta,
        y_formula_unbiased=(element - mean) / math.sqrt(var_u + eps) * gamma + beta,
        y_module=float(y[index]),
    )


def formula_snippet(config: SimConfig, batch_index: int, *, sample: int, channel: int,
                    position: int = 0, weight: float | None = None,
                    bias: float | None = None) -> str:
    """A script that rebuilds batch ``batch_index`` of ``config``'s stream and prints the
    formula's value for one element beside ``nn.BatchNorm``'s (as :func:`formula_check`)."""
    affine = weight is not None
    fill = ""
    if affine:
        fill = (f"    bn.weight.fill_({float(weight)!r})  # γ\n"
                f"    bn.bias.fill_({float(bias)!r})  # β\n")
    gamma_beta = f" * {float(weight)!r} + {float(bias)!r}" if affine else ""
    return f'''import torch
from torch import nn


{_batch_function_code(config)}

x = batch({int(batch_index)})
bn = nn.{config.module_name}({config.channels}, eps={config.eps!r}, affine={affine}).train()
with torch.no_grad():
{fill}    y = bn(x)
dims = [0, *range(2, x.dim())]  # one statistic per channel, over N and spatial
x64 = x.double()
mean = x64.mean(dims)[{int(channel)}].item()  # E[x]
var = x64.var(dims, correction=0)[{int(channel)}].item()  # Var[x], biased: divides by n
element = x64[{int(sample)}, {int(channel)}].flatten()[{int(position)}].item()
by_hand = (element - mean) / (var + bn.eps) ** 0.5{gamma_beta}
module_out = y[{int(sample)}, {int(channel)}].flatten()[{int(position)}].item()
print(f"x = {{element:.7g}}, E[x] = {{mean:.7g}}, Var[x] = {{var:.7g}}")
print(f"formula: {{by_hand:.7g}}, nn.{config.module_name}: {{module_out:.7g}}, "
      f"|diff| = {{abs(by_hand - module_out):.1e}}")  # float32 rounding of the module
'''


@dataclass(frozen=True)
class BatchOfOne:
    """A real BatchNorm on a batch with one value per channel (``(1, C)`` or ``(1, C, 1, 1)``).

    ``train_error`` is torch's exception as ``"ValueError: ..."`` (``None`` if it ran);
    ``eval_output`` is the ``eval()`` output with the fresh running statistics (it works).
    """

    module_name: str
    shape: tuple[int, ...]
    train_error: str | None
    eval_output: tuple[float, ...]


def batch_of_one(channels: int = 3, spatial_dims: int = 0, *, seed: int = 0) -> BatchOfOne:
    """Run ``nn.BatchNorm1d`` on ``(1, C)`` (``spatial_dims`` 0) or ``nn.BatchNorm2d`` on
    ``(1, C, 1, 1)`` (``spatial_dims`` 2) in ``train()`` and in ``eval()``."""
    if isinstance(channels, bool) or not isinstance(channels, int) or not 1 <= channels <= 64:
        raise ValueError(f"channels must be an integer in [1, 64], got {channels!r}")
    if spatial_dims not in (0, 2):
        raise ValueError(f"spatial_dims must be 0 ((1, C)) or 2 ((1, C, 1, 1)), got "
                         f"{spatial_dims!r}")
    shape = (1, channels) if spatial_dims == 0 else (1, channels, 1, 1)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(int(seed)))
    module = _module_for(channels, spatial_dims)
    error = None
    with torch.no_grad():
        try:
            module.train()(x)
        except (ValueError, RuntimeError) as err:
            error = _error_text(err)
        y = module.eval()(x)
    return BatchOfOne(module_name=type(module).__name__, shape=shape, train_error=error,
                      eval_output=tuple(float(v) for v in y.flatten()))


def batch_of_one_snippet(channels: int = 3, spatial_dims: int = 0) -> str:
    """The runnable script behind :func:`batch_of_one`."""
    shape = (1, channels) if spatial_dims == 0 else (1, channels, 1, 1)
    name = "BatchNorm2d" if spatial_dims == 2 else "BatchNorm1d"
    return f'''import torch
from torch import nn

bn = nn.{name}({channels})
x = torch.randn{shape}  # one sample: one value per channel
try:
    bn.train()(x)
except ValueError as err:
    print("train():", f"ValueError: {{err}}")
print("eval():", bn.eval()(x).detach().flatten().tolist())  # running stats: fine
'''


@dataclass(frozen=True)
class LoaderRun:
    """One epoch of a ``DataLoader`` feeding ``nn.BatchNorm1d`` in ``train()``.

    ``batch_sizes`` are the batches the loader yields; the loop stops at the first batch that
    raises (``failed_batch``, 0-based, with torch's ``error``), as a training script would.
    """

    dataset_size: int
    batch_size: int
    drop_last: bool
    batch_sizes: tuple[int, ...]
    batches_trained: int
    failed_batch: int | None
    error: str | None

    @property
    def dropped(self) -> int:
        """Samples the loader left out (``drop_last=True`` and a short last batch)."""
        return self.dataset_size - sum(self.batch_sizes)


def _check_loader_sizes(dataset_size: int, batch_size: int, channels: int) -> None:
    for name, value, top in (("dataset size", dataset_size, MAX_LOADER_DATASET),
                             ("batch size", batch_size, MAX_LOADER_BATCH),
                             ("channels", channels, 64)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise ValueError(f"{name} must be an integer in [1, {top}], got {value!r}")


def loader_run(dataset_size: int, batch_size: int, *, drop_last: bool, channels: int = 3,
               seed: int = 0) -> LoaderRun:
    """Train ``nn.BatchNorm1d(channels)`` for one epoch over ``DataLoader(TensorDataset(
    randn(dataset_size, channels)), batch_size, drop_last=drop_last)`` (no shuffle).

    A last batch of one sample raises torch's "Expected more than 1 value per channel when
    training"; ``drop_last=True`` drops that batch (notes 000:76).
    """
    from torch.utils.data import DataLoader, TensorDataset

    _check_loader_sizes(dataset_size, batch_size, channels)
    data = TensorDataset(torch.randn(dataset_size, channels,
                                     generator=torch.Generator().manual_seed(int(seed))))
    loader = DataLoader(data, batch_size=batch_size, drop_last=bool(drop_last))
    module = nn.BatchNorm1d(channels).train()
    sizes: list[int] = []
    trained = 0
    failed = error = None
    with torch.no_grad():
        for k, (xb,) in enumerate(loader):
            sizes.append(int(xb.shape[0]))
            if failed is not None:
                continue  # keep listing the loader's batches; training has stopped
            try:
                module(xb)
                trained += 1
            except (ValueError, RuntimeError) as err:
                failed, error = k, _error_text(err)
    return LoaderRun(dataset_size=dataset_size, batch_size=batch_size, drop_last=bool(drop_last),
                     batch_sizes=tuple(sizes), batches_trained=trained, failed_batch=failed,
                     error=error)


def explain_loader(without: LoaderRun, with_drop: LoaderRun) -> str:
    """One sentence on what ``drop_last`` changed, from the two runs of :func:`loader_run`."""
    size, batch = without.dataset_size, without.batch_size
    last = without.batch_sizes[-1] if without.batch_sizes else 0
    if batch == 1:
        if with_drop.error:
            return T("Every batch holds one sample, so the first one already fails "
                     "(batch {failed}) and drop_last cannot help (it drops nothing: there is no "
                     "short last batch). Use a batch size above 1.", failed=without.failed_batch)
        return T("Every batch holds one sample, so the first one already fails "
                 "(batch {failed}) and drop_last cannot help. Use a batch size above 1.",
                 failed=without.failed_batch)
    if without.error is not None:
        values = {"size": size, "full": len(without.batch_sizes) - 1, "batch": batch,
                  "last": last, "failed": without.failed_batch, "dropped": with_drop.dropped}
        if with_drop.error is not None:
            return T("{size} = {full} × {batch} + {last}: the last batch "
                     "holds a single sample and training stops at batch {failed}. "
                     "drop_last=True leaves that sample out ({dropped} unused this "
                     "epoch) but training still fails: {error}.", error=with_drop.error, **values)
        if not with_drop.batch_sizes:
            return T("{size} = {full} × {batch} + {last}: the last batch "
                     "holds a single sample and training stops at batch {failed}. "
                     "drop_last=True leaves that sample out ({dropped} unused this "
                     "epoch) but then the loader yields no batch at all (the dataset is smaller "
                     "than one batch).", **values)
        return T("{size} = {full} × {batch} + {last}: the last batch "
                 "holds a single sample and training stops at batch {failed}. "
                 "drop_last=True leaves that sample out ({dropped} unused this "
                 "epoch) and training gets through the epoch.", **values)
    if last == batch:
        return T("{size} is a multiple of {batch}: every batch is full and drop_last changes "
                 "nothing. Pick a dataset size one more than a multiple of the batch size to "
                 "see the error.", size=size, batch=batch)
    return T("The last batch holds {last} samples, more than one, so it trains; drop_last=True "
             "would only throw those {dropped} samples away. The error needs a last "
             "batch of exactly one (dataset size = k × batch size + 1).",
             last=last, dropped=with_drop.dropped)


def loader_snippet(dataset_size: int, batch_size: int, channels: int = 3) -> str:
    """The runnable script behind :func:`loader_run`, for both ``drop_last`` settings."""
    _check_loader_sizes(dataset_size, batch_size, channels)
    return f'''import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn({dataset_size}, {channels}))
bn = nn.BatchNorm1d({channels}).train()
for drop_last in (False, True):
    loader = DataLoader(data, batch_size={batch_size}, drop_last=drop_last)
    print(f"drop_last={{drop_last}}: batch sizes {{[len(xb) for (xb,) in loader]}}")
    try:
        for (xb,) in loader:
            bn(xb)
        print("  trained on every batch")
    except ValueError as err:
        print(f"  ValueError: {{err}}")
'''


@dataclass(frozen=True)
class RepeatedEval:
    """A trained BatchNorm evaluated twice on the same test set, shuffled differently each time.

    ``outputs`` holds the followed sample's eval() output (``(C, *spatial)``) from pass 1 and
    pass 2; ``batch_mates`` the test-set indices that shared its batch in each pass;
    ``max_abs_diff`` is the largest change of any output over the whole test set. ``error`` is
    torch's exception if a pass could not run (untracked stats and a batch of one value per
    channel), and then the other fields are empty.
    """

    track_running_stats: bool
    sample: int
    outputs: tuple[Tensor, Tensor] | None
    batch_mates: tuple[tuple[int, ...], tuple[int, ...]]
    max_abs_diff: float
    error: str | None

    @property
    def verdict(self) -> str:
        """``"identical"``, ``"rounding"`` (same batches in another order: differences of float
        rounding only, below 1e-5), ``"differ"`` or ``"error"``."""
        if self.error is not None:
            return "error"
        if self.max_abs_diff == 0.0:
            return "identical"
        return "rounding" if self.max_abs_diff < 1e-5 else "differ"


def _test_set_order(test_size: int, seed: int) -> list[int]:
    return torch.randperm(test_size, generator=torch.Generator().manual_seed(seed)).tolist()


def _eval_config(config: SimConfig, train_batch: int) -> SimConfig:
    """The configuration the repeated-evaluation demo trains with: ``config``'s stream without
    its injected NaN (the demo is about batch composition), ``train_batch`` samples a batch."""
    stream = dataclasses.replace(config.stream, nan_step=None)
    return dataclasses.replace(config, stream=stream, batch_size=train_batch)


def repeated_eval(config: SimConfig, *, test_size: int = 12, eval_batch: int = 4,
                  train_steps: int = 30, train_batch: int = 16, sample: int = 0,
                  ) -> tuple[RepeatedEval, RepeatedEval]:
    """The notes' 002:795 experiment, once with ``track_running_stats=True`` and once False.

    ``config`` gives the stream (its injected NaN is left out), the spatial size, eps and the
    seed; its batch size, momentum and flags are not used. Both modules see the same
    ``train_steps`` training batches (batch ``k`` of the stream, ``train_batch`` samples). The
    test set is batch number ``train_steps`` of the stream with ``test_size`` samples (never
    trained on). Each evaluation pass shuffles it (as ``DataLoader(shuffle=True)`` would, with
    seeds ``2·seed + 1`` and ``2·seed + 2``), splits it into batches of ``eval_batch`` and runs
    ``eval()``; outputs are put back in test-set order and compared.

    Returns:
        ``(tracked, untracked)`` :class:`RepeatedEval` results.

    Raises:
        ValueError: sizes out of range (``test_size`` in [2, 64], ``eval_batch`` in
            [1, test_size], ``sample`` in [0, test_size), ``train_steps`` in [0, 500]), or a
            training batch over ``MAX_VALUES_PER_BATCH`` numbers (use :func:`cap_spatial`).
    """
    if isinstance(test_size, bool) or not isinstance(test_size, int) \
            or not 2 <= test_size <= MAX_EVAL_TEST_SIZE:
        raise ValueError(f"test set size must be an integer in [2, {MAX_EVAL_TEST_SIZE}], got "
                         f"{test_size!r}")
    if isinstance(eval_batch, bool) or not isinstance(eval_batch, int) \
            or not 1 <= eval_batch <= test_size:
        raise ValueError(f"evaluation batch size must be an integer in [1, {test_size}], got "
                         f"{eval_batch!r}")
    if not isinstance(sample, int) or not 0 <= sample < test_size:
        raise ValueError(f"sample must be in [0, {test_size - 1}], got {sample!r}")
    if not isinstance(train_steps, int) or not 0 <= train_steps <= 500:
        raise ValueError(f"train_steps must be an integer in [0, 500], got {train_steps!r}")
    cfg = _eval_config(config, train_batch)
    stream, spatial, eps, seed = cfg.stream, tuple(cfg.spatial), cfg.eps, cfg.seed
    _check_eps(eps)
    shape = cfg.shape
    if train_steps and _values_per_channel(shape) < 2:
        raise ValueError(f"train batches need more than 1 value per channel, got {shape}")
    if int(np.prod(shape)) > MAX_VALUES_PER_BATCH:
        raise ValueError(f"a training batch {shape} would hold {int(np.prod(shape)):,} numbers; "
                         f"keep it under {MAX_VALUES_PER_BATCH:,} (smaller spatial size)")
    test_x = sample_batch(stream, train_steps, test_size, spatial, seed=seed)
    orders = [_test_set_order(test_size, 2 * int(seed) + p) for p in (1, 2)]
    results = []
    for track in (True, False):
        module = _module_for(stream.channels, len(spatial), eps=eps, track_running_stats=track)
        with torch.no_grad():
            module.train()
            for k in range(train_steps):
                module(sample_batch(stream, k, train_batch, spatial, seed=seed))
            module.eval()
            passes: list[Tensor] = []
            mates: list[tuple[int, ...]] = []
            error = None
            for order in orders:
                out = torch.empty_like(test_x)
                for start in range(0, test_size, eval_batch):
                    idx = order[start:start + eval_batch]
                    try:
                        out[idx] = module(test_x[idx])
                    except (ValueError, RuntimeError) as err:
                        error = _error_text(err)
                        break
                    if sample in idx:
                        mates.append(tuple(sorted(i for i in idx if i != sample)))
                if error is not None:
                    break
                passes.append(out)
        if error is not None:
            results.append(RepeatedEval(track_running_stats=track, sample=sample, outputs=None,
                                        batch_mates=((), ()), max_abs_diff=float("nan"),
                                        error=error))
            continue
        results.append(RepeatedEval(
            track_running_stats=track, sample=sample,
            outputs=(passes[0][sample].clone(), passes[1][sample].clone()),
            batch_mates=(mates[0], mates[1]),
            max_abs_diff=float((passes[0] - passes[1]).abs().max().item()), error=None,
        ))
    return results[0], results[1]


def repeated_eval_snippet(config: SimConfig, *, test_size: int = 12, eval_batch: int = 4,
                          train_steps: int = 30, train_batch: int = 16) -> str:
    """The runnable script behind :func:`repeated_eval` (stream, spatial, eps and seed from
    ``config``); it prints the largest output change between two shuffled passes."""
    batch_config = _eval_config(config, train_batch)
    batch_fn = _batch_function_code(batch_config).replace(
        "def batch(k):", "def batch(k, n):").replace(
        f"torch.randn({batch_config.shape}, ",
        f"torch.randn((n, {', '.join(str(d) for d in batch_config.shape[1:])}), ")
    return f'''import torch
from torch import nn


{batch_fn}

test_x = batch({train_steps}, {test_size})  # a batch never trained on: the "test set"
for track in (True, False):
    bn = nn.{config.module_name}({config.channels}, eps={config.eps!r}, track_running_stats=track)
    with torch.no_grad():
        bn.train()
        for k in range({train_steps}):
            bn(batch(k, {train_batch}))
        bn.eval()
        passes = []
        for p in (1, 2):  # evaluate twice; each pass shuffles the test set differently
            order = torch.randperm({test_size},
                                   generator=torch.Generator().manual_seed(2 * {config.seed} + p))
            out = torch.empty_like(test_x)
            for start in range(0, {test_size}, {eval_batch}):
                idx = order[start:start + {eval_batch}]
                out[idx] = bn(test_x[idx])
            passes.append(out)
    diff = (passes[0] - passes[1]).abs().max().item()
    print(f"track_running_stats={{track}}: max |pass 1 - pass 2| = {{diff:.3g}}")
'''


# --------------------------------------------------------------------------------------------
# Where the notes are wrong or incomplete about BatchNorm (checked live)
# --------------------------------------------------------------------------------------------

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
