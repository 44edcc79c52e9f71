"""Runnable scripts that reproduce the page's run with a real ``nn.BatchNorm``.

Pure Python (no Streamlit). :func:`batch_function_code` writes ``def batch(k)``, which draws
batch ``k`` of the stream exactly as :func:`~lessons.batchnorm.stream.sample_batch` does;
:func:`snippet_for` builds the page's closing script around it (the notes' demos in
:mod:`lessons.batchnorm.notes_demos` build theirs around it too).
"""

from __future__ import annotations

from lessons.batchnorm.layer import MAX_STEPS, SimConfig
from lessons.batchnorm.stream import SEED_STRIDE

#: How to freeze every BatchNorm of a model in train(): its buffers stop moving.
FREEZE_BN_CODE = (
    "model.train()\nfor m in model.modules():\n    if isinstance(m, "
    "nn.modules.batchnorm._BatchNorm):\n        m.eval()  # freeze the running statistics"
)


def batch_function_code(config: SimConfig) -> str:
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
    g = torch.Generator().manual_seed({config.seed} * {SEED_STRIDE} + k)
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


{batch_function_code(config)}

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
