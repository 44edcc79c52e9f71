"""Input-gradient saliency maps of an image classifier, and the Adebayo et al. (2018) sanity check.

Pure module (no Streamlit). Every function takes a model and a preprocessed batch of one,
``x: (1, 3, H, W) float`` as ``lessons.saliency.models.LoadedModel.preprocess`` returns it,
and a class index; a map is ``(H, W)`` float32 on the CPU.

Rules that make the functions safe on a model shared between browser sessions:
- gradients are taken with ``torch.autograd.grad`` w.r.t. a fresh per-call copy of ``x``, so no
  parameter ``.grad`` is ever written and the caller's ``x`` is not modified;
- the model runs in ``eval()``; if it was not, the train/eval flags are restored afterwards;
- the randomization test works on a ``copy.deepcopy`` of the model.

Here: the four methods (:func:`compute_saliency` runs any of them), what a run costs
(:func:`estimate_run`, :func:`warm_up`, :func:`time_gradient_pass`), the cascading
randomization test (:func:`randomization_test`, its pieces in :mod:`lessons.saliency.sanity`)
and the notes' claim about the backward pass that makes a map (:func:`notes_callouts`). Turning
a map into grey levels is :mod:`lessons.saliency.scaling`, into pictures
:mod:`lessons.saliency.pictures`.

>>> sal = vanilla_saliency(model, x, 285, objective="logit", reduce="max")   # (224, 224)
>>> picture = overlay(view, scale_percentile(sal, 99), alpha=0.5, colormap="jet")
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.notes import NotesCallout, NotesRef, run_live
from core.text import N_, T
from lessons.saliency.sanity import (
    RandomizationResult,
    randomizable_layers,
    randomize_module,
    spearman,
)
from lessons.saliency.scaling import NOTES_RECIPE_REF, RECIPES, scale_percentile

Objective = Literal["logit", "loss"]
Reduce = Literal["sum", "max"]
Baseline = Literal["black", "blur"]
ProgressFn = Callable[[float, str], None]

METHODS: dict[str, str] = {
    "vanilla": N_("Vanilla gradient |dS/dx|"),
    "grad_x_input": N_("Gradient x input |x * dS/dx|"),
    "smoothgrad": N_("SmoothGrad (mean |grad| over noisy copies)"),
    "integrated_gradients": N_("Integrated Gradients"),
}
OBJECTIVES: tuple[str, ...] = ("logit", "loss")
REDUCTIONS: tuple[str, ...] = ("sum", "max")
BASELINES: tuple[str, ...] = ("black", "blur")


# --------------------------------------------------------------------------------------------
# Validation and the one gradient primitive
# --------------------------------------------------------------------------------------------


@contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Run ``model`` in eval mode; restore every module's training flag afterwards.

    Writes nothing when the model is already in eval mode (the shared cached model always is).
    """
    flags = [(m, m.training) for m in model.modules()]
    changed = any(training for _, training in flags)
    if changed:
        model.eval()
    try:
        yield model
    finally:
        if changed:
            for module, training in flags:
                module.training = training


def check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    """Raise ValueError naming ``name``, ``value`` and the ``choices`` unless value is one."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _check_x(x: torch.Tensor) -> None:
    if not torch.is_tensor(x):
        raise ValueError(f"x must be a torch.Tensor (1, 3, H, W), got {type(x).__name__}")
    if x.ndim != 4 or x.shape[0] != 1:
        raise ValueError(
            f"x must be a preprocessed batch of one image, shape (1, C, H, W), got {tuple(x.shape)}"
        )
    if not x.is_floating_point():
        raise ValueError(f"x must be a float tensor (use LoadedModel.preprocess), got {x.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError("x contains NaN or Inf values; check the image and the preprocessing")


def _check_target(target: object, num_classes: int) -> int:
    if isinstance(target, bool) or not isinstance(target, int | np.integer):
        raise ValueError(f"target must be an integer class index, got {target!r}")
    if not 0 <= int(target) < num_classes:
        raise ValueError(
            T(
                "class index {target} is out of range: this model has {n} classes "
                "(valid indices 0..{last})",
                target=int(target),
                n=num_classes,
                last=num_classes - 1,
            )
        )
    return int(target)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass
class _Clock:
    forward_s: float = 0.0
    backward_s: float = 0.0
    images: int = 0
    batches: int = 0


def _logits(model: nn.Module, xb: torch.Tensor) -> torch.Tensor:
    try:
        out = model(xb)
    except RuntimeError as exc:  # e.g. uploaded weights whose architecture rejects this shape
        raise ValueError(
            T(
                "the model failed on an input batch of shape {shape} ({kind}: {error})",
                shape=tuple(xb.shape),
                kind=type(exc).__name__,
                error=str(exc).strip().splitlines()[0][:200],
            )
        ) from exc
    if not torch.is_tensor(out) or out.ndim != 2 or out.shape[0] != xb.shape[0]:
        shape = tuple(out.shape) if torch.is_tensor(out) else type(out).__name__
        raise ValueError(
            T("the model must return logits (N, num_classes), got {shape}", shape=shape)
        )
    return out


def _input_gradient(
    model: nn.Module,
    xb: torch.Tensor,
    target: int,
    objective: str,
    clock: _Clock,
) -> tuple[torch.Tensor, torch.Tensor]:
    """d objective / d xb for a batch (B, C, H, W): returns (grad (B, C, H, W), logits (B, K)).

    The objective is summed over the batch; in eval mode samples do not interact, so row b of the
    gradient is exactly the gradient of sample b alone.
    """
    xb = xb.detach().clone().requires_grad_(True)
    _sync(xb.device)
    t0 = time.perf_counter()
    with torch.enable_grad():
        logits = _logits(model, xb)
        _check_target(target, logits.shape[1])
        if objective == "logit":
            score = logits[:, target].sum()
        else:
            labels = torch.full((xb.shape[0],), target, dtype=torch.long, device=xb.device)
            score = F.cross_entropy(logits, labels, reduction="sum")
        if not score.requires_grad:
            raise ValueError(
                N_(
                    "The model's output does not depend on the input through autograd (it "
                    "detaches the input or returns constants), so there is no input gradient to "
                    "show. Use a model whose logits are computed from the input."
                )
            )
        _sync(xb.device)
        t1 = time.perf_counter()
        (grad,) = torch.autograd.grad(score, xb)
    _sync(xb.device)
    t2 = time.perf_counter()
    clock.forward_s += t1 - t0
    clock.backward_s += t2 - t1
    clock.images += xb.shape[0]
    clock.batches += 1
    if not torch.isfinite(grad).all():
        bad = int((~torch.isfinite(grad)).sum())
        raise ValueError(
            T(
                "The gradient contains NaN or Inf ({bad} of {total} values). The model is "
                "numerically unstable on this input: try another image, the 'logit' objective, "
                "or another model.",
                bad=bad,
                total=grad.numel(),
            )
        )
    return grad.detach(), logits.detach()


def _reduce(abs_grad: torch.Tensor, reduce: str) -> torch.Tensor:
    """(C, H, W) non-negative -> (H, W) by sum or max over channels."""
    return abs_grad.sum(0) if reduce == "sum" else abs_grad.amax(0)


def _num_classes(model: nn.Module, x: torch.Tensor) -> tuple[int, torch.Tensor]:
    with torch.no_grad():
        logits = _logits(model, x)
    return int(logits.shape[1]), logits


def _prepare(model: nn.Module, x: torch.Tensor, target: object, objective: str, reduce: str) -> int:
    _check_x(x)
    check_choice("objective", objective, OBJECTIVES)
    check_choice("reduce", reduce, REDUCTIONS)
    if isinstance(target, bool) or not isinstance(target, int | np.integer):
        raise ValueError(f"target must be an integer class index, got {target!r}")
    return int(target)


# --------------------------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SaliencyResult:
    """A saliency map and the numbers the page shows next to it.

    ``saliency``: (H, W) float32 on CPU, non-negative. ``logits``: (K,) for the clean input.
    ``forward_ms`` / ``backward_ms``: wall-clock time of the gradient passes that produced the map,
    summed over all ``batches`` passes (``images`` images in all); model loading, preprocessing,
    the clean no-grad forward and scaling are not included, and neither is the one-time lazy
    initialisation that ``warm_up`` absorbs when it ran first. ``completeness``: for Integrated
    Gradients, (sum of attributions, f(x) - f(baseline)); the closer the two, the better the path
    integral converged.
    """

    method: str
    objective: str
    reduce: str
    target: int
    saliency: torch.Tensor
    logits: torch.Tensor
    forward_ms: float
    backward_ms: float
    images: int
    completeness: tuple[float, float] | None = None
    batches: int = 1


@dataclass(frozen=True)
class RunEstimate:
    """What one run of a method will cost, said before it runs.

    ``images``: images sent through the model with an input gradient; ``seconds``: ``images``
    times the measured per-image time (forward + backward), the figure the page announces.
    """

    method: str
    images: int
    per_image_ms: float
    seconds: float


def estimate_run(method: str, *, n: int = 25, steps: int = 32, per_image_ms: float) -> RunEstimate:
    """Estimate a ``compute_saliency`` run from a measured per-image gradient time.

    ``per_image_ms`` comes from a real pass (``SaliencyResult.forward_ms + backward_ms`` divided
    by ``images``, or ``warm_up``). Vanilla and gradient x input send one image through the
    model, SmoothGrad ``n`` noisy copies and Integrated Gradients ``steps`` path points; the
    clean no-grad forward passes are not counted (they cost a few percent).

    >>> estimate_run("smoothgrad", n=25, per_image_ms=120.0).seconds
    3.0

    Raises:
        ValueError: unknown method, ``n`` or ``steps`` below 1, or a negative/non-finite time.
    """
    check_choice("method", method, tuple(METHODS))
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"SmoothGrad needs n >= 1 noisy samples, got {n!r}")
    if not (isinstance(steps, int) and steps >= 1):
        raise ValueError(f"Integrated Gradients needs steps >= 1, got {steps!r}")
    if not (math.isfinite(per_image_ms) and per_image_ms >= 0):
        raise ValueError(f"per_image_ms must be a finite time >= 0, got {per_image_ms!r}")
    images = {"smoothgrad": n, "integrated_gradients": steps}.get(method, 1)
    return RunEstimate(method, images, float(per_image_ms), images * per_image_ms / 1e3)


def estimate_sanity(
    method: str, layers: int, *, n: int = 25, steps: int = 32, per_image_ms: float
) -> RunEstimate:
    """Estimate a ``randomization_test`` of the top ``layers`` layers with ``method``.

    The test computes the original map and one map after each randomized layer, so it costs
    ``layers + 1`` runs of :func:`estimate_run` (the deep copy of the model and the rank
    correlations are milliseconds). With Integrated Gradients at 32 steps and 21 layers that is
    704 images, minutes on a CPU, which is why the page asks before it runs one.

    >>> estimate_sanity("integrated_gradients", 21, steps=32, per_image_ms=160.0).images
    704

    Raises:
        ValueError: ``layers`` below 1, and all that :func:`estimate_run` raises.
    """
    if not (isinstance(layers, int) and not isinstance(layers, bool) and layers >= 1):
        raise ValueError(f"the sanity check needs layers >= 1, got {layers!r}")
    one = estimate_run(method, n=n, steps=steps, per_image_ms=per_image_ms)
    images = (layers + 1) * one.images
    return RunEstimate(method, images, one.per_image_ms, images * one.per_image_ms / 1e3)


@dataclass(frozen=True)
class MapChoice:
    """What the page's controls chose for one map: the class, the method and its parameters
    (``n``, ``sigma``: SmoothGrad; ``steps``, ``baseline``: Integrated Gradients), the recipe
    ("app" or "notes", :data:`lessons.saliency.scaling.RECIPES`) and how the map is drawn
    (``percentile``, ``alpha``, ``colormap``); ``seed`` seeds SmoothGrad's noise and the sanity
    check's random weights.

    Raises:
        ValueError: an unknown recipe, method, objective, reduction or baseline.
    """

    target: int
    recipe: str
    method: str
    objective: str
    reduce: str
    n: int
    sigma: float
    steps: int
    baseline: str
    percentile: float
    alpha: float
    colormap: str
    seed: int

    def __post_init__(self) -> None:
        check_choice("recipe", self.recipe, tuple(RECIPES))
        check_choice("method", self.method, tuple(METHODS))
        check_choice("objective", self.objective, OBJECTIVES)
        check_choice("reduce", self.reduce, REDUCTIONS)
        check_choice("baseline", self.baseline, BASELINES)

    def params(self, black_level: float | torch.Tensor) -> dict[str, object]:
        """:func:`compute_saliency`'s keyword arguments; ``black_level``: a black pixel after
        the model's preprocessing (Integrated Gradients' black baseline)."""
        return dict(
            objective=self.objective, reduce=self.reduce, n=self.n, sigma=self.sigma,
            steps=self.steps, baseline=self.baseline, black_level=black_level, seed=self.seed,
        )  # fmt: skip

    def drawing(self) -> tuple[bool, float, float, str]:
        """How the map is drawn, as :func:`lessons.saliency.pictures.make_pictures` takes it:
        (the notes' scaling, percentile, alpha, colormap)."""
        return self.recipe == "notes", self.percentile, self.alpha, self.colormap

    def params_key(self) -> tuple:
        """The parameters as part of a cache key (the black level comes with the model's)."""
        return (self.objective, self.reduce, self.n, self.sigma, self.steps, self.baseline,
                self.seed)  # fmt: skip

    def key(self, model_key: str, image_digest: str, method: str | None = None) -> tuple:
        """The map's key in a shared cache: model, image, class, method (``method``: another
        one's, for a placeholder map) and parameters."""
        return (model_key, image_digest, self.target, method or self.method, self.params_key())


def warm_up(model: nn.Module, x: torch.Tensor) -> float:
    """One untimed forward + input-gradient pass on ``zeros_like(x)``; returns its wall time (ms).

    The first gradient pass after loading pays one-time costs (oneDNN primitive creation,
    allocator growth, lazy CUDA kernel loading) that can be several times a steady-state pass.
    Call this once after loading so that the times in ``SaliencyResult`` describe the computation,
    not the initialisation. ``x``: (1, C, H, W) float, as ``preprocess`` returns it; only its
    shape, dtype and device are used. The model runs in eval mode and is not modified (no
    parameter ``.grad`` is written). A non-finite gradient is not an error here.

    Raises:
        ValueError: ``x`` is not a (1, C, H, W) float tensor, or the model does not return
            (N, num_classes) logits.
    """
    _check_x(x)
    xb = torch.zeros_like(x).requires_grad_(True)
    _sync(xb.device)
    t0 = time.perf_counter()
    with eval_mode(model), torch.enable_grad():
        score = _logits(model, xb)[:, 0].sum()
        if score.requires_grad:
            torch.autograd.grad(score, xb, allow_unused=True)
    _sync(xb.device)
    return (time.perf_counter() - t0) * 1e3


@dataclass(frozen=True)
class PassTiming:
    """Median wall-clock times (ms) of ``repeats`` back-to-back forward + input-gradient passes
    on one image: a steady-state figure, unlike the single timing in ``SaliencyResult``."""

    forward_ms: float
    backward_ms: float
    repeats: int


def time_gradient_pass(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    *,
    objective: Objective = "logit",
    repeats: int = 5,
) -> PassTiming:
    """Time ``repeats`` vanilla gradient passes of ``x`` (1, C, H, W) and return their medians.

    Raises:
        ValueError: bad ``x``/objective/target (as ``vanilla_saliency``), ``repeats`` < 1.
    """
    tgt = _prepare(model, x, target, objective, "sum")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    clocks = []
    with eval_mode(model):
        for _ in range(repeats):
            clock = _Clock()
            _input_gradient(model, x, tgt, objective, clock)
            clocks.append(clock)
    return PassTiming(
        forward_ms=float(np.median([c.forward_s for c in clocks])) * 1e3,
        backward_ms=float(np.median([c.backward_s for c in clocks])) * 1e3,
        repeats=repeats,
    )


def _run(
    model: nn.Module,
    x: torch.Tensor,
    target: object,
    method: str,
    *,
    objective: str,
    reduce: str,
    n: int,
    sigma: float,
    steps: int,
    baseline: str | torch.Tensor,
    black_level: float | torch.Tensor,
    batch_size: int,
    seed: int,
    progress: ProgressFn | None,
) -> SaliencyResult:
    check_choice("method", method, tuple(METHODS))
    tgt = _prepare(model, x, target, objective, reduce)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    clock = _Clock()
    completeness = None
    with eval_mode(model):
        if method in ("vanilla", "grad_x_input"):
            grad, logits = _input_gradient(model, x, tgt, objective, clock)
            logits = logits[0]
            attr = grad[0].abs() if method == "vanilla" else (grad[0] * x[0].detach()).abs()
            if progress:
                progress(1.0, N_("gradient done"))
        elif method == "smoothgrad":
            if not (isinstance(n, int) and n >= 1):
                raise ValueError(f"SmoothGrad needs n >= 1 noisy samples, got {n!r}")
            if not (math.isfinite(sigma) and sigma >= 0):
                raise ValueError(f"SmoothGrad noise level sigma must be >= 0, got {sigma!r}")
            num_classes, clean = _num_classes(model, x)
            _check_target(tgt, num_classes)
            logits = clean[0]
            std = sigma * float(x.max() - x.min())
            gen = torch.Generator(device="cpu").manual_seed(seed)
            noise = torch.randn((n, *x.shape[1:]), generator=gen).to(x.device)
            total = torch.zeros_like(x[0])
            for start in range(0, n, batch_size):
                xb = x.detach() + std * noise[start : start + batch_size]
                grad, _ = _input_gradient(model, xb, tgt, objective, clock)
                total += grad.abs().sum(0)
                if progress:
                    done = min(start + batch_size, n)
                    progress(done / n, T("SmoothGrad: {done}/{n} noisy samples", done=done, n=n))
            attr = total / n
        else:
            if not (isinstance(steps, int) and steps >= 1):
                raise ValueError(f"Integrated Gradients needs steps >= 1, got {steps!r}")
            num_classes, clean = _num_classes(model, x)
            _check_target(tgt, num_classes)
            logits = clean[0]
            base = make_baseline(x, baseline, black_level=black_level)
            diff = x.detach() - base
            alphas = (torch.arange(steps, dtype=x.dtype, device=x.device) + 0.5) / steps
            total = torch.zeros_like(x[0])
            for start in range(0, steps, batch_size):
                a = alphas[start : start + batch_size].view(-1, 1, 1, 1)
                grad, _ = _input_gradient(model, base + a * diff, tgt, objective, clock)
                total += grad.sum(0)
                if progress:
                    done = min(start + batch_size, steps)
                    progress(
                        done / steps,
                        T("Integrated Gradients: {done}/{steps} steps", done=done, steps=steps),
                    )
            signed = diff[0] * total / steps
            with torch.no_grad():
                f_x = _objective_value(model, x, tgt, objective)
                f_b = _objective_value(model, base, tgt, objective)
            completeness = (float(signed.sum()), f_x - f_b)
            attr = signed.abs()
    saliency = _reduce(attr, reduce).float().cpu()
    return SaliencyResult(
        method=method,
        objective=objective,
        reduce=reduce,
        target=tgt,
        saliency=saliency,
        logits=logits.reshape(-1).float().cpu(),
        forward_ms=clock.forward_s * 1e3,
        backward_ms=clock.backward_s * 1e3,
        images=clock.images,
        completeness=completeness,
        batches=clock.batches,
    )


def _objective_value(model: nn.Module, x: torch.Tensor, target: int, objective: str) -> float:
    logits = _logits(model, x)
    if objective == "logit":
        return float(logits[0, target])
    return float(F.cross_entropy(logits, torch.tensor([target], device=x.device)))


def compute_saliency(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    method: str = "vanilla",
    *,
    objective: Objective = "logit",
    reduce: Reduce = "sum",
    n: int = 25,
    sigma: float = 0.15,
    steps: int = 32,
    baseline: Baseline | torch.Tensor = "black",
    black_level: float | torch.Tensor = 0.0,
    batch_size: int = 8,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> SaliencyResult:
    """Run one of ``METHODS`` and return the map with logits, timings and extras.

    Args:
        model: classifier mapping (N, C, H, W) -> (N, K) logits. Not modified.
        x: (1, C, H, W) float, preprocessed. Not modified.
        target: class index in [0, K).
        method: "vanilla" | "grad_x_input" | "smoothgrad" | "integrated_gradients".
        objective: "logit" backpropagates the class score (Simonyan et al.); "loss" the
            cross-entropy against ``target`` (the notes' recipe).
        reduce: |attribution| over channels by "sum" or "max".
        n, sigma, seed: SmoothGrad samples, noise std as a fraction of x.max() - x.min(), RNG seed.
        steps, baseline, black_level: Integrated Gradients steps (midpoint rule), baseline kind
            (or a tensor like x), and what a black pixel is after preprocessing.
        batch_size: images per forward/backward in SmoothGrad and IG.
        progress: optional ``callback(fraction in [0, 1], text)``.

    Raises:
        ValueError: bad shapes/choices, class index out of range, NaN/Inf in the gradient.
    """
    return _run(
        model,
        x,
        target,
        method,
        objective=objective,
        reduce=reduce,
        n=n,
        sigma=sigma,
        steps=steps,
        baseline=baseline,
        black_level=black_level,
        batch_size=batch_size,
        seed=seed,
        progress=progress,
    )


def vanilla_saliency(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    *,
    objective: Objective = "logit",
    reduce: Reduce = "sum",
) -> torch.Tensor:
    """|d objective / d x| reduced over channels: (1, C, H, W) -> (H, W) float32 on CPU.

    ``objective="logit"``: the class score S_target (Simonyan et al. 2014, who reduce by max).
    ``objective="loss"``: cross-entropy against ``target`` (the notes, which reduce by sum).
    """
    return compute_saliency(
        model, x, target, "vanilla", objective=objective, reduce=reduce
    ).saliency


def grad_x_input(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    *,
    objective: Objective = "logit",
    reduce: Reduce = "sum",
) -> torch.Tensor:
    """|x * d objective / d x| reduced over channels, with x the *preprocessed* input: (H, W)."""
    return compute_saliency(
        model, x, target, "grad_x_input", objective=objective, reduce=reduce
    ).saliency


def smoothgrad(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    *,
    n: int = 25,
    sigma: float = 0.15,
    objective: Objective = "logit",
    reduce: Reduce = "sum",
    batch_size: int = 8,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> torch.Tensor:
    """SmoothGrad (Smilkov et al. 2017): mean over ``n`` noisy copies x + N(0, (sigma * range)^2)
    of |gradient|, then reduced over channels: (H, W). Copies go through the model in batches of
    ``batch_size``; the noise comes from a private generator seeded with ``seed``."""
    return compute_saliency(
        model,
        x,
        target,
        "smoothgrad",
        n=n,
        sigma=sigma,
        objective=objective,
        reduce=reduce,
        batch_size=batch_size,
        seed=seed,
        progress=progress,
    ).saliency


def integrated_gradients(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    *,
    steps: int = 32,
    baseline: Baseline | torch.Tensor = "black",
    black_level: float | torch.Tensor = 0.0,
    objective: Objective = "logit",
    reduce: Reduce = "sum",
    batch_size: int = 8,
    progress: ProgressFn | None = None,
) -> torch.Tensor:
    """Integrated Gradients (Sundararajan et al. 2017): |(x - b) * mean_k grad(b + a_k (x - b))|
    with a_k = (k + 0.5) / steps, reduced over channels: (H, W). ``baseline`` "black" is
    ``black_level`` everywhere (``LoadedModel.black_level()``), "blur" a heavy Gaussian blur of x.
    Path points go through the model in batches of ``batch_size``."""
    return compute_saliency(
        model,
        x,
        target,
        "integrated_gradients",
        steps=steps,
        baseline=baseline,
        black_level=black_level,
        objective=objective,
        reduce=reduce,
        batch_size=batch_size,
        progress=progress,
    ).saliency


def make_baseline(
    x: torch.Tensor, baseline: Baseline | torch.Tensor, *, black_level: float | torch.Tensor = 0.0
) -> torch.Tensor:
    """The IG starting point for ``x`` (1, C, H, W): "black" (``black_level`` per channel),
    "blur" (Gaussian, sigma = max(H, W) / 16, replicate border) or a tensor shaped like x."""
    if torch.is_tensor(baseline):
        if baseline.shape != x.shape:
            raise ValueError(
                f"baseline tensor must have the shape of x {tuple(x.shape)}, "
                f"got {tuple(baseline.shape)}"
            )
        return baseline.detach().to(x)
    check_choice("baseline", baseline, BASELINES)
    if baseline == "black":
        level = torch.as_tensor(black_level, dtype=x.dtype, device=x.device)
        return (
            torch.zeros_like(x) + level.reshape(-1, 1, 1)
            if level.ndim
            else (torch.full_like(x, float(level)))
        )
    sigma = max(x.shape[-2:]) / 16
    radius = max(1, int(3 * sigma))
    coords = torch.arange(-radius, radius + 1, dtype=x.dtype, device=x.device)
    kernel = torch.exp(-(coords**2) / (2 * sigma**2))
    kernel = kernel / kernel.sum()
    c = x.shape[1]
    y = F.pad(x.detach(), [radius, radius, 0, 0], mode="replicate")
    y = F.conv2d(y, kernel.view(1, 1, 1, -1).repeat(c, 1, 1, 1), groups=c)
    y = F.pad(y, [0, 0, radius, radius], mode="replicate")
    return F.conv2d(y, kernel.view(1, 1, -1, 1).repeat(c, 1, 1, 1), groups=c)


MethodFn = Callable[[nn.Module, torch.Tensor, int], torch.Tensor]


def randomization_test(
    model: nn.Module,
    x: torch.Tensor,
    target: int,
    method: str | MethodFn = "vanilla",
    layers: int | Sequence[str] | None = None,
    *,
    seed: int = 0,
    percentile: float = 99,
    progress: ProgressFn | None = None,
    **method_kwargs: object,
) -> RandomizationResult:
    """Adebayo et al. (2018) cascading parameter randomization.

    A deep copy of ``model`` is randomized layer by layer from the top (the classifier) down; after
    each layer the saliency map is recomputed and compared with the original map by Spearman rank
    correlation. A faithful method's map should decorrelate quickly. ``model`` is untouched.

    Args:
        method: a ``METHODS`` name (``method_kwargs`` go to ``compute_saliency``) or a callable
            ``(model, x, target) -> (H, W)``.
        layers: None for all of ``randomizable_layers(model)``, an int k for the top k of them,
            or explicit module names, applied cumulatively in the given order.
        seed: seed of the private generator that draws the random weights.

    Raises:
        ValueError: unknown method or layer name, bad k, and all ``compute_saliency`` raises.
    """
    _check_x(x)
    available = randomizable_layers(model)
    if layers is None:
        chosen = available
    elif isinstance(layers, int) and not isinstance(layers, bool):
        if not 1 <= layers <= len(available):
            raise ValueError(
                T(
                    "number of layers to randomize must be in 1..{n}, got {layers}",
                    n=len(available),
                    layers=layers,
                )
            )
        chosen = available[:layers]
    else:
        chosen = list(layers)
        module_names = dict(model.named_modules())
        unknown = [name for name in chosen if name not in module_names]
        if unknown:
            raise ValueError(
                f"unknown layer name(s) {', '.join(map(repr, unknown))}; available from the top: "
                f"{', '.join(available[:5])}, ..."
            )
        if not chosen:
            raise ValueError("give at least one layer to randomize")

    if callable(method):
        fn: MethodFn = method
        name = getattr(method, "__name__", "custom")
    else:
        check_choice("method", method, tuple(METHODS))
        name = method

        def fn(m: nn.Module, xx: torch.Tensor, t: int) -> torch.Tensor:
            return compute_saliency(m, xx, t, name, **method_kwargs).saliency  # type: ignore[arg-type]

    total_steps = len(chosen) + 1
    original = fn(model, x, target)
    if progress:
        progress(1 / total_steps, N_("original map"))
    try:
        clone = copy.deepcopy(model)
    except Exception as exc:
        raise ValueError(
            T("this model cannot be copied for the sanity check: {error}", error=str(exc))
        ) from exc
    gen = torch.Generator(device="cpu").manual_seed(seed)
    modules = dict(clone.named_modules())
    correlations: list[float] = []
    maps: list[np.ndarray] = []
    for k, layer in enumerate(chosen):
        randomize_module(modules[layer], gen)
        randomized = fn(clone, x, target)
        correlations.append(spearman(original, randomized))
        maps.append(scale_percentile(randomized, percentile))
        if progress:
            progress(
                (k + 2) / total_steps,
                T("randomized {i}/{n}: {layer}", i=k + 1, n=len(chosen), layer=layer),
            )
    return RandomizationResult(
        method=name,
        layers=tuple(chosen),
        correlations=tuple(correlations),
        original=scale_percentile(original, percentile),
        maps=tuple(maps),
    )


# --------------------------------------------------------------------------------------------
# Where the notes are wrong: retain_grad() vs retain_graph=True (000:2)
# --------------------------------------------------------------------------------------------

RETAIN_SNIPPET = """import torch


def backward_twice(retain_grad=False, retain_graph=False):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x.exp()  # non-leaf; exp saves its output
    if retain_grad:
        h.retain_grad()  # keep h.grad after backward()
    loss = (h * h).sum()
    loss.backward(retain_graph=retain_graph)
    kept = "h.grad kept; " if retain_grad and h.grad is not None else ""
    try:
        loss.backward()  # a second pass through the graph
    except RuntimeError as error:
        return kept + "RuntimeError: " + str(error).split(" (")[0]
    return kept + "second backward works"


print("A plain:              ", backward_twice())
print("B retain_grad():      ", backward_twice(retain_grad=True))
print("C retain_graph=True:  ", backward_twice(retain_graph=True))
"""


def read_retain_run(output: str) -> tuple[str, str]:
    """Verdict and the "PyTorch today does" sentence for the retain_grad callout, read from the
    printed lines A/B/C of :data:`RETAIN_SNIPPET` (plain, ``retain_grad()``, ``retain_graph``).
    The sentence is a :class:`core.text.T` (its template and values go into the callout).

    Raises:
        ValueError: the output does not have the three lines.
    """
    rows = {line[:1]: line for line in output.splitlines() if line[:2] in ("A ", "B ", "C ")}
    if set(rows) != {"A", "B", "C"}:
        raise ValueError(f"expected the snippet's lines A, B and C, got {output!r}")
    plain_fails, grad_fails, graph_fails = ("RuntimeError: " in rows[k] for k in "ABC")
    grad_kept = "h.grad kept" in rows["B"]
    if plain_fails and grad_fails and not graph_fails:
        message = rows["A"].split("RuntimeError: ", 1)[1].strip()
        if grad_kept:
            return "wrong", T(
                "The first half is right: backward() frees the tensors the graph saved for the "
                "backward pass, so a second backward() raises '{message}' (line A). "
                "But retain_grad() does not prevent it (line B): it only keeps .grad of a "
                "non-leaf tensor (h.grad kept). The call that keeps the graph is "
                "loss.backward(retain_graph=True) (line C).",
                message=message,
            )
        return "wrong", T(
            "The first half is right: backward() frees the tensors the graph saved for the "
            "backward pass, so a second backward() raises '{message}' (line A). "
            "But retain_grad() does not prevent it (line B), and here it did not even keep "
            "h.grad. The call that keeps the graph is loss.backward(retain_graph=True) (line C).",
            message=message,
        )
    if not plain_fails:
        return "out of date", T(
            "A second backward() through the same graph no longer raises in this PyTorch "
            "(line A), so neither retain_grad() nor retain_graph=True is needed for it."
        )
    if not grad_fails:
        return "incomplete", T(
            "In this PyTorch retain_grad() on a non-leaf tensor also keeps the graph for a "
            "second backward() (line B), as the notes say; retain_graph=True is the documented "
            "way (line C)."
        )
    return "wrong", T(
        "A second backward() raises here even with retain_graph=True (line C); see the "
        "printed error."
    )


def notes_callouts() -> list[NotesCallout]:
    """The saliency page's "the notes say / PyTorch today does" boxes, each from a live run."""
    run = run_live(RETAIN_SNIPPET)
    if run.raised:
        verdict, today = "wrong", T("The check itself failed to run: {error}", error=run.error)
    else:
        verdict, today = read_retain_run(run.output)
    return [
        NotesCallout(
            key="saliency_retain_grad",
            title=N_("retain_grad() does not keep the graph; backward(retain_graph=True) does"),
            ref=NotesRef.parse(NOTES_RECIPE_REF),
            quote_zh=(
                "注意，如果没有设置 retain_grad() 的话会在 backward() 之后清空计算图的前向缓存，"
                "也就是这次涉及的相关节点都不能再进行反向传播了"
            ),
            gloss_en=(
                "Note: unless retain_grad() is set, backward() clears the graph's forward "
                "buffers, so the nodes involved cannot be backpropagated through again."
            ),
            verdict=verdict,
            # The template and its values: the page translates the sentence, then fills it in.
            today=today.template,
            today_args=tuple((name, str(value)) for name, value in today.args.items()),
            run=run,
            see_also=N_(
                "The error doctor has this error beside the notes' other errors: [Trying to "
                "backward through the graph a second time](errors?errors.entry=backward-twice)."
            ),
        )
    ]
