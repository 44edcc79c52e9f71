"""BatchNorm, LayerNorm, InstanceNorm and GroupNorm side by side: which axes each one pools.

Pure PyTorch/numpy (no Streamlit). :func:`norm_group_ids` says which cells of a (channel ×
sample) grid share one statistic; :func:`compare_norms` normalizes one ``(N, C, H, W)`` batch
the four ways, by hand and with the real modules; :func:`norms_on_stream` does it on a batch
of the page's stream.

>>> norm_group_ids("GroupNorm", batch=2, channels=4, groups=2).tolist()
[[0, 2], [0, 2], [1, 3], [1, 3]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from core.text import N_, T
from lessons.batchnorm.layer import check_eps
from lessons.batchnorm.stream import Stream, sample_batch

NORM_NAMES = ("BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm")
NORM_SPATIAL = (4, 4)  # H, W of the live input: enough values per statistic, small
MAX_DEMO_SAMPLES = 6  # samples (grid columns) in the diagram and the live input



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
    check_eps(eps)
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


def group_choices(channels: int) -> tuple[list[int], int]:
    """The GroupNorm group counts ``G`` that divide ``channels``, and the index of the one to
    start on: the largest proper divisor (1 < G < C), else the first (G = 1).

    >>> group_choices(6)
    ([1, 2, 3, 6], 2)
    """
    if channels < 1:
        raise ValueError(f"channels must be >= 1, got {channels}")
    divisors = [g for g in range(1, channels + 1) if channels % g == 0]
    proper = [g for g in divisors if 1 < g < channels]
    return divisors, divisors.index(proper[-1]) if proper else 0


def demo_samples(batch_size: int) -> int:
    """Samples in the diagram and the live input: the page's batch size, within [2, 6]."""
    return min(max(batch_size, 2), MAX_DEMO_SAMPLES)


def norms_on_stream(stream: Stream, samples: int, groups: int, *,
                    seed: int = 0) -> tuple[NormResult, ...]:
    """:func:`compare_norms` on batch 0 of ``stream`` with ``samples`` samples of
    :data:`NORM_SPATIAL` (``(samples, C, 4, 4)``); an injected NaN there is replaced by 0, as it
    would only make every difference NaN."""
    x = sample_batch(stream, 0, samples, NORM_SPATIAL, seed=seed)
    if stream.nan_step == 0:
        x = torch.nan_to_num(x)
    return compare_norms(x, groups)
