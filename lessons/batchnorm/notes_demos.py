"""The notes' BatchNorm lessons, run live with the real modules (notes 000:11, 000:76,
002:780-805).

Pure PyTorch (no Streamlit). Each demo returns what the page shows and has a runnable script
beside it: :func:`formula_check` substitutes one element's numbers into the formula
(:func:`formula_snippet`); :func:`batch_of_one` shows the error a batch of one value per
channel raises in ``train()`` (:func:`batch_of_one_snippet`), and :func:`loader_run` the
``DataLoader(drop_last=...)`` remedy (:func:`explain_loader`, :func:`loader_snippet`);
:func:`repeated_eval` evaluates a trained module twice on a shuffled test set
(:func:`repeated_eval_snippet`). Where each comes from is ``lessons.batchnorm.layer.NOTES_REFS``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from core.text import T
from lessons.batchnorm.layer import SimConfig, check_eps, reduce_dims, values_per_channel
from lessons.batchnorm.snippets import batch_function_code
from lessons.batchnorm.stream import MAX_VALUES_PER_BATCH, cap_spatial, sample_batch

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
    def finite(self) -> bool:
        """Whether the module's output is a number (a batch holding the injected NaN gives NaN
        everywhere in its channel)."""
        return math.isfinite(self.y_module)

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
    check_eps(eps)
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
    dims = reduce_dims(x)
    x64 = x.detach().double()
    mean = float(x64.mean(dims)[channel])
    var_b = float(x64.var(dims, correction=0)[channel])
    n = values_per_channel(x.shape)
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


def formula_latex(check: FormulaCheck) -> tuple[str, str]:
    """The formula (γ and β only with affine), and the same with ``check``'s numbers, as LaTeX."""
    affine = check.weight is not None
    general = (r"y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}}"
               + (r"\cdot\gamma + \beta" if affine else ""))
    affine_tex = rf"\cdot {check.weight:.4g} + {check.bias:.4g}" if affine else ""
    filled = (rf"y_{{{','.join(str(i) for i in check.index)}}} = "
              rf"\frac{{{check.x:.6g} - ({check.mean:.6g})}}"
              rf"{{\sqrt{{{check.var_biased:.6g} + {check.eps:g}}}}}{affine_tex}"
              rf" = {check.y_formula:.7g}")
    return general, filled


def clamp_element(config: SimConfig, sample: int, position: int) -> tuple[int, int]:
    """The element of a ``config`` batch the formula demo follows when ``(sample, position)``
    is asked for: each within the batch (``position`` is 0 without spatial axes)."""
    positions = values_per_channel(config.shape) // config.batch_size
    return min(sample, config.batch_size - 1), min(position, positions - 1) if config.spatial else 0


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


{batch_function_code(config)}

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


def drop_last_snippet(channels: int, spatial_dims: int, dataset_size: int,
                      batch_size: int) -> str:
    """:func:`batch_of_one_snippet`, then :func:`loader_snippet`: the error and its remedy."""
    return (batch_of_one_snippet(channels, spatial_dims) + "\n\n# --- the DataLoader remedy ---\n\n"
            + loader_snippet(dataset_size, batch_size, channels))


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


def repeated_eval_config(config: SimConfig, side: int, dims: int) -> tuple[SimConfig, str | None]:
    """What the repeated-evaluation demo runs on: ``config``'s stream, eps and seed, with the
    spatial size ``side`` (``dims`` axes) capped for its 16-sample training batches, and the
    notice saying so (None when not capped)."""
    cap = cap_spatial(side, dims=dims, batch_size=16, channels=config.channels)
    return SimConfig(stream=config.stream, spatial=(cap.side,) * dims, eps=config.eps,
                     seed=config.seed), cap.notice


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
    check_eps(eps)
    shape = cfg.shape
    if train_steps and values_per_channel(shape) < 2:
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
    batch_fn = batch_function_code(batch_config).replace(
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
