"""The real ``nn.BatchNorm1d/2d`` beside the hand-written one: build it, list what it holds,
ask it what it says about an input, and freeze it.

Pure PyTorch (no Streamlit). :func:`make_module` builds a module (optionally loaded with a
:class:`~lessons.batchnorm.layer.BNState`), :func:`module_anatomy` lists its parameters,
buffers and state_dict keys, :func:`torch_error_for` runs it on an input shape and returns its
error text, and :func:`frozen_check` compares torchvision's ``FrozenBatchNorm2d`` with our
``eval()`` output.

>>> module_anatomy(make_module(3, 2)).optimizer_tensors
2
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from lessons.batchnorm.layer import BNState, check_eps, check_momentum


def make_module(channels: int, spatial_dims: int, *, momentum: float | None = 0.1,
                eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True,
                state: BNState | None = None) -> nn.modules.batchnorm._BatchNorm:
    """A real ``nn.BatchNorm1d`` (spatial_dims 0/1) or ``nn.BatchNorm2d`` (2), optionally
    loaded with ``state``'s buffers."""
    check_momentum(momentum)
    check_eps(eps)
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


def anatomy_of(channels: int, spatial_dims: int, *, momentum: float | None = 0.1,
               eps: float = 1e-5, affine: bool = True,
               track_running_stats: bool = True) -> Anatomy:
    """:func:`module_anatomy` of a fresh :func:`make_module` with these settings (the names,
    shapes and dtypes do not depend on trained values)."""
    return module_anatomy(make_module(channels, spatial_dims, momentum=momentum, eps=eps,
                                      affine=affine, track_running_stats=track_running_stats))


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
