"""The synthetic data stream BatchNorm trains on: per-channel Normal batches with known statistics.

Pure PyTorch (no Streamlit). A :class:`Stream` says what channel ``c`` of batch ``k`` is drawn
from (a mean and std per channel, an optional shift from some batch on, an optional NaN);
:func:`sample_batch` draws batch ``k`` deterministically; :func:`parse_channel_values` reads
the page's "2, -1, 0.5" boxes and :func:`cap_spatial` keeps a batch small enough to replay.

>>> stream = Stream(mean=(2.0, -1.0), std=(3.0, 0.5))
>>> tuple(sample_batch(stream, 0, 16, (4, 4)).shape)
(16, 2, 4, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from core.text import T

#: Input layouts the page offers: name -> number of spatial dims.
LAYOUTS: dict[str, int] = {"(N, C)": 0, "(N, C, L)": 1, "(N, C, H, W)": 2}
MAX_VALUES_PER_BATCH = 262_144  # N * C * spatial elements in one simulated batch
MAX_STREAM_VALUE = 1e12  # |mean| and std of a stream: float32 batches and squares stay finite
SEED_STRIDE = 1_000_003  # batch k of seed s is drawn from a generator seeded with s*stride + k


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
        # the labels are texts (T) of their own, so a page translates them inside the message
        groups = [(T("mean"), self.mean), (T("std"), self.std)]
        if self.shift_step is not None:
            groups += [(T("mean after the shift"), self.shifted_mean),
                       (T("std after the shift"), self.shifted_std)]
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
    gen = torch.Generator().manual_seed(int(seed) * SEED_STRIDE + int(index))
    noise = torch.randn(shape, generator=gen, dtype=dtype)
    mean, std = stream.params_at(index)
    view = (1, -1, *([1] * len(spatial)))
    x = torch.tensor(mean, dtype=dtype).view(view) + torch.tensor(std, dtype=dtype).view(
        view) * noise
    if stream.nan_step is not None and index == stream.nan_step:
        x.view(-1)[0] = float("nan")  # channel 0 of sample 0
    return x



def stream_from_text(mean_text: str, std_text: str, channels: int, *,
                     shift: tuple[int, float, float] | None = None,
                     nan_step: int | None = None) -> Stream:
    """The stream the page's boxes describe: ``"2, -1, 0.5"`` means and stds (one value for
    every channel, or one per channel), from step ``shift[0]`` on the means plus ``shift[1]``
    and the stds times ``shift[2]``, and a NaN in batch ``nan_step``.

    Raises:
        ValueError: a :class:`core.text.T` naming the bad box ("stream mean", ...) and value.
    """
    mean = parse_channel_values(mean_text, channels, name=T("stream mean"))
    std = parse_channel_values(std_text, channels, name=T("stream std"))
    if shift is None:
        return Stream(mean=mean, std=std, nan_step=nan_step)
    return Stream(mean=mean, std=std, shift_step=shift[0],
                  shifted_mean=tuple(m + shift[1] for m in mean),
                  shifted_std=tuple(s * shift[2] for s in std), nan_step=nan_step)


def channel_text_usable(text: str, channels: int, *, std: bool, max_chars: int) -> bool:
    """Whether ``text`` (at most ``max_chars`` long) gives ``channels`` values a stream accepts
    as its mean (``std=False``) or its std (``std=True``): a link's value is checked with it."""
    if len(text) > max_chars:
        return False
    try:
        values = parse_channel_values(text, channels, name="std" if std else "mean")
        ones = (1.0,) * channels
        Stream(mean=ones if std else values, std=values if std else ones)
    except ValueError:
        return False
    return True
