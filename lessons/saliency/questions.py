"""Predict, then reveal: the saliency page's questions, each answered by running the model.

Pure module (no Streamlit). :func:`questions` takes what the page already has for its view: the
classifier, the image's input ``x`` (1, 3, S, S) and its top-5, the map on screen (a
:class:`~lessons.saliency.maps.SaliencyResult`, ``saliency`` (S, S) float32) and that map's two
scalings (:class:`~lessons.saliency.scaling.ScalingComparison`). It asks:

- ``top-layer-randomised``: give the top layer random weights (the sanity check's first step,
  same seed) and recompute the map: how much does it change? (one gradient pass);
- ``other-class``: explain the runner-up class (or the predicted one) instead: how much does the
  map change? (one gradient pass);
- ``retain-grad``: the notes' claim (000:2) that ``retain_grad()`` keeps the graph for a second
  ``backward()`` (one forward, two backward passes, on the real model and image);
- ``notes-grey-level``: the grey level the notes' ``cvglue.scale_min_max`` + ``np.uint8`` give
  one pixel of the map on screen (read from the page's own comparison: no pass).

The two map questions use the shown map's method when it takes one pass (vanilla, gradient x
input); after SmoothGrad or Integrated Gradients (n or steps passes) they use the vanilla
gradient, and their prompt says so. Texts are English and marked (``N_`` / ``T``).
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.questions import Choice, Question
from core.text import N_, T
from lessons.saliency.explanations import METHOD_NAMES
from lessons.saliency.maps import SaliencyResult, compute_saliency, eval_mode
from lessons.saliency.models import LoadedModel
from lessons.saliency.sanity import randomizable_layers, randomize_module, spearman
from lessons.saliency.scaling import NOTES_RECIPE_REF, ScalingComparison, cvglue_scale_min_max

#: Methods whose map is one gradient pass: cheap enough to recompute when the panel opens.
ONE_PASS = ("vanilla", "grad_x_input")

#: How much a map changed, by its Spearman rank correlation with the map before, to 3 places as
#: the page prints it: (key, the bin's lowest value, its upper end, text). The 0.5 and 0.8 bounds
#: are the sanity check's reading's (``sanity.read_randomization``).
SIMILARITY_BINS: tuple[tuple[str, float, float, str], ...] = (
    ("same", 0.99, math.inf, N_("Not at all: the same map (rank correlation 0.99 or more)")),
    ("little", 0.8, 0.99, N_("A little: rank correlation 0.8 to 0.99")),
    ("partly", 0.5, 0.8, N_("Partly: rank correlation 0.5 to 0.8")),
    ("lot", -math.inf, 0.5, N_("A lot: rank correlation below 0.5")),
)
#: The choice that the recomputed map is flat (no rank correlation exists).
FLAT = N_("It goes flat: no gradient reaches the pixels")
#: The question keys, in the order :func:`questions` asks them.
KEYS = ("top-layer-randomised", "other-class", "retain-grad", "notes-grey-level")
#: The page's containers the questions blur until the reveal: the sanity check (its chart's
#: first point is the randomised top layer's correlation) and the notes' recipe (its callout
#: answers the retain_grad() claim; its two scalings and their gap answer the grey level).
SANITY_PART, NOTES_PART = "saliency-sanity", "saliency-notes"


def similarity_bin(rho: float) -> str:
    """The key of the :data:`SIMILARITY_BINS` bin that holds ``rho`` rounded to 3 places.

    Raises:
        ValueError: ``rho`` is NaN (a flat map has no rank correlation) or outside [-1, 1].
    """
    if math.isnan(rho) or not -1.0 - 1e-9 <= rho <= 1.0 + 1e-9:
        raise ValueError(f"a rank correlation is in [-1, 1], got {rho!r}")
    shown = round(rho, 3)
    return next(key for key, low, _high, _text in SIMILARITY_BINS if shown >= low)


@dataclass(frozen=True)
class MapChange:
    """A map recomputed after one change, against the map before (both (S, S), made with
    ``method``): ``rho``, their Spearman rank correlation (NaN when either is flat), and the
    new map's smallest and largest values ``low``, ``high``."""

    method: str
    rho: float
    low: float
    high: float

    @property
    def flat(self) -> bool:
        """Whether the new map is one value everywhere."""
        return self.low == self.high


def _map_before(model: nn.Module, x: torch.Tensor,
                shown: SaliencyResult) -> tuple[str, torch.Tensor]:  # fmt: skip
    """The method the map questions use and its map of ``x``: the shown map when its method is
    one pass, else the vanilla gradient with the shown map's objective and reduction."""
    method = shown.method if shown.method in ONE_PASS else "vanilla"
    if method == shown.method:
        return method, shown.saliency
    return method, compute_saliency(model, x, shown.target, method, objective=shown.objective,
                                    reduce=shown.reduce).saliency  # fmt: skip


def _changed(before: torch.Tensor, method: str, model: nn.Module, x: torch.Tensor, target: int,
             shown: SaliencyResult) -> MapChange:  # fmt: skip
    """``model``'s ``method`` map of ``x`` for class ``target`` (the shown map's objective and
    reduction) against ``before`` (S, S)."""
    after = compute_saliency(model, x, target, method, objective=shown.objective,
                             reduce=shown.reduce).saliency  # fmt: skip
    return MapChange(method, spearman(before, after), float(after.min()), float(after.max()))


def randomised_top_layer(model: nn.Module, x: torch.Tensor, shown: SaliencyResult,
                         before: tuple[str, torch.Tensor],
                         seed: int) -> tuple[str, MapChange] | None:  # fmt: skip
    """The sanity check's first step: the top layer of a deep copy of ``model`` re-drawn by
    ``sanity.randomize_module`` from a generator seeded with ``seed`` (as
    ``maps.randomization_test`` draws it), and the map of ``x`` (1, 3, S, S) recomputed with
    ``before``'s method (``before``: that method and its map of ``x`` with the original
    weights, (S, S)); the layer's name and the change. None when the model has no
    parameterized layer."""
    layers = randomizable_layers(model)
    if not layers:
        return None
    method, before_map = before
    clone = copy.deepcopy(model)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    randomize_module(dict(clone.named_modules())[layers[0]], generator)
    return layers[0], _changed(before_map, method, clone, x, shown.target, shown)


def other_class(top5: Sequence[tuple[int, str, float]], target: int) -> int | None:
    """The class the ``other-class`` question explains instead of ``target``: the runner-up when
    ``target`` is the predicted class, else the predicted class; None with a top-1 only.

    Raises:
        ValueError: ``top5`` is empty.
    """
    classes = [row[0] for row in top5]
    if not classes:
        raise ValueError(f"top5 holds the model's best classes, got {top5!r}")
    if classes[0] != target:
        return classes[0]
    return classes[1] if len(classes) > 1 else None


def _similarity_choices(change: MapChange, right: dict[str, T], wrong: dict[str, T],
                        offer_flat: bool) -> tuple[tuple[Choice, ...], int]:  # fmt: skip
    """The :data:`SIMILARITY_BINS` as choices (and :data:`FLAT` with ``offer_flat``) and the
    right one's index. ``right[key]``: bin ``key``'s line when the run lands in it;
    ``wrong[key]``: its line when it does not (else the run's value against the bin's range).

    Raises:
        ValueError: the new map is flat and ``offer_flat`` is False (no bin holds the answer).
    """
    if change.flat and not offer_flat:
        raise ValueError(f"the recomputed map is flat ({change.low!r} everywhere): no bin fits")
    flat_why = T("The recomputed map is flat (every pixel {value:.3g}): it has no rank "
                 "correlation with the map before.", value=change.low)  # fmt: skip
    answer = "flat" if change.flat else similarity_bin(change.rho)
    choices, keys = [], []
    for key, low, high, text in SIMILARITY_BINS:
        if key == answer:
            why = right[key]
        elif change.flat:
            why = flat_why
        elif key in wrong:
            why = wrong[key]
        elif round(change.rho, 3) < low:
            why = T("The run gives {rho:.3f}, which is under {low:g}.", rho=change.rho, low=low)
        else:
            why = T("The run gives {rho:.3f}, which is {high:g} or more.", rho=change.rho,
                    high=high)  # fmt: skip
        choices.append(Choice(text, why))
        keys.append(key)
    if offer_flat:
        why = flat_why if change.flat else T(
            "The recomputed map is not flat: its values run from {low:.3g} to {high:.3g}.",
            low=change.low, high=change.high)  # fmt: skip
        choices.append(Choice(FLAT, why))
        keys.append("flat")
    return tuple(choices), keys.index(answer)


def top_layer_question(layer: str, change: MapChange, seed: int, target: int,
                       name: str) -> Question:  # fmt: skip
    """``top-layer-randomised``: how much the map changes once the top layer ``layer`` has random
    weights (``change`` from :func:`randomised_top_layer`); it hides the sanity check."""
    method, rho = T(METHOD_NAMES[change.method]), change.rho
    right = {
        "same": T("Right: {rho:.3f}. Random weights in the top layer leave the map as it was: it "
                  "shows the image, not what the model learned.", rho=rho),
        "little": T("Right: {rho:.3f}. The map barely changes although the top layer no longer "
                    "knows anything: it mostly shows the image (edges, contrast). Treat it with "
                    "care.", rho=rho),
        "partly": T("Right: {rho:.3f}. Part of the map survives random top weights: that part "
                    "comes from the image rather than from what the model learned.", rho=rho),
        "lot": T("Right: {rho:.3f}. The map depends on the learned top layer, as an explanation "
                 "of the model should: the method passes this step of the sanity check.",
                 rho=rho),
        "flat": T("Right: with a random top layer the map is flat (every pixel {value:.3g}).",
                  value=change.low),
    }  # fmt: skip
    wrong = {"same": T("The gradient of class {target} flows back through the top layer's "
                       "weights, so new weights change it: the run gives {rho:.3f}.",
                       target=target, rho=rho)}  # fmt: skip
    choices, answer = _similarity_choices(change, right, wrong, offer_flat=True)
    prompt = T("Give the top layer of this classifier (`{layer}`) new random weights (seed "
               "{seed}), as the sanity check's first step does, and recompute the {method} map "
               "of class {target} ({name}). How much does the map change?", layer=layer,
               seed=seed, method=method, target=target, name=name)  # fmt: skip
    if change.flat:
        proof = T("With `{layer}` randomised (seed {seed}), the {method} map is flat: every "
                  "pixel is {value:.3g}.", layer=layer, seed=seed, method=method,
                  value=change.low)  # fmt: skip
    else:
        proof = T("With `{layer}` randomised (seed {seed}), the {method} map's Spearman rank "
                  "correlation with the map before is {rho:.3f}.", layer=layer, seed=seed,
                  method=method, rho=rho)  # fmt: skip
    return Question(KEYS[0], prompt, choices, answer, proof, SANITY_PART)


def other_class_question(change: MapChange, target: int, name: str, other: int,
                         other_name: str) -> Question:  # fmt: skip
    """``other-class``: how much the map changes when it explains class ``other`` instead of
    ``target`` (``change``: that map against the one before). Nothing on the page shows the
    other class's map, so it hides nothing.

    Raises:
        ValueError: the other class's map is flat (no rank correlation to ask about).
    """
    method, rho = T(METHOD_NAMES[change.method]), change.rho
    right = {
        "same": T("Right: {rho:.3f}. The map of class {other} is the map of class {target}: it "
                  "shows where the image has strong gradients, not why it is one class.",
                  rho=rho, other=other, target=target),
        "little": T("Right: {rho:.3f}. Another class gives almost the same map: the map says "
                    "more about the image than about the class.", rho=rho),
        "partly": T("Right: {rho:.3f}. The two classes share much of their map: part of a "
                    "saliency map belongs to the image, not to the class.", rho=rho),
        "lot": T("Right: {rho:.3f}. The two classes light up different pixels: this map is "
                 "specific to its class.", rho=rho),
    }  # fmt: skip
    wrong = {"lot": T("Each class does not get pixels of its own: the run gives {rho:.3f}, "
                      "{low:g} or more, so much of the map belongs to the image.", rho=rho,
                      low=SIMILARITY_BINS[2][1])}  # fmt: skip
    choices, answer = _similarity_choices(change, right, wrong, offer_flat=False)
    prompt = T("Explain class {other} ({other_name}) instead of class {target} ({name}), with "
               "everything else the same. How much does the {method} map change?", other=other,
               other_name=other_name, target=target, name=name, method=method)  # fmt: skip
    proof = T("The {method} maps of class {target} and class {other} have a Spearman rank "
              "correlation of {rho:.3f}.", method=method, target=target, other=other, rho=rho)
    return Question(KEYS[1], prompt, choices, answer, proof, None)


@dataclass(frozen=True)
class RetainGradRun:
    """The notes' backward pass (000:2) run on the page's model and image, on one graph:
    ``y.retain_grad()``, ``loss.backward(retain_graph=True)``, ``loss.backward()``, then
    ``loss.backward()`` again, and once more after ``x.grad = None``.

    ``added``: sum |x.grad| after the second call over that after the first (2.0: gradients add
    up); ``y_grad_shape``: ``y.grad``'s shape at the end (None: not kept); ``error``: the first
    line of the third call's ``RuntimeError`` (None: it ran); ``error_after_clearing``: the same
    for the fourth call.
    """

    added: float
    y_grad_shape: tuple[int, ...] | None
    error: str | None
    error_after_clearing: str | None


def _backward_error(loss: torch.Tensor) -> str | None:
    """``loss.backward()``'s ``RuntimeError`` up to its first " (" (None: it ran)."""
    try:
        loss.backward()
    except RuntimeError as error:
        return str(error).strip().splitlines()[0].split(" (")[0]
    return None


def retain_grad_run(model: nn.Module, x: torch.Tensor, target: int) -> RetainGradRun:
    """:class:`RetainGradRun` of ``model`` on ``x`` (1, 3, S, S) with the cross-entropy of class
    ``target`` (the notes' loss). Works on a copy of ``x``; ``model`` must have frozen
    parameters (a shared model: ``backward()`` would otherwise write their ``.grad``).

    Raises:
        ValueError: a parameter that requires grad, ``target`` out of range, or a zero gradient.
    """
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    if trainable:
        raise ValueError(f"the model's parameters must be frozen, {trainable[0]!r} is not")
    xx = x.detach().clone().requires_grad_(True)
    with eval_mode(model), torch.enable_grad():
        y = model(xx)
        if not 0 <= target < y.shape[-1]:
            raise ValueError(f"target is a class index below {y.shape[-1]}, got {target!r}")
        loss = F.cross_entropy(y, torch.tensor([target], device=xx.device))
        y.retain_grad()
        loss.backward(retain_graph=True)
        first = float(xx.grad.abs().sum())
        loss.backward()
        if first == 0.0:
            raise ValueError(f"the loss gradient of class {target} is zero: nothing adds up")
        added = float(xx.grad.abs().sum()) / first
        error = _backward_error(loss)
        xx.grad = None
        error_after_clearing = _backward_error(loss)
    shape = tuple(y.grad.shape) if y.grad is not None else None
    return RetainGradRun(added, shape, error, error_after_clearing)


def retain_grad_question(run: RetainGradRun, target: int, name: str) -> Question:
    """``retain-grad``: what a second ``loss.backward()`` does after ``y.retain_grad()`` (the
    notes, 000:2, say ``retain_grad()`` keeps the graph); it hides the notes' recipe, whose
    callout answers it.

    Raises:
        ValueError: the run's third or fourth call did not raise (this PyTorch keeps the graph:
            the question's choices do not describe it).
    """
    if run.error is None or run.error_after_clearing is None:
        raise ValueError(f"a second backward() ran in this PyTorch ({run!r}); no choice fits")
    shape = "×".join(str(n) for n in run.y_grad_shape) if run.y_grad_shape else "none"
    choices = (
        Choice(N_("It works: `retain_grad()` kept the graph's buffers, so the gradient is added "
                  "to `x.grad` again"),
               T("That is the notes' claim, but here the call raised even with `y.retain_grad()`: "
                 "only `backward(retain_graph=True)` keeps the graph (with it, `x.grad` became "
                 "{added:.2f}× the first gradient).", added=run.added),
               notes=NOTES_RECIPE_REF),
        Choice(N_("It raises `RuntimeError`: the first `backward()` freed the graph; "
                  "`retain_grad()` only keeps `y.grad`"),
               T("Right: the second `loss.backward()` raised `RuntimeError: {error}`, although "
                 "`y.grad` was kept (shape {shape}).", error=run.error, shape=shape)),
        Choice(N_("It works, and `x.grad` stays as it was: a second `backward()` overwrites "
                  "`.grad`"),
               T("`.grad` is not overwritten: where a second `backward()` runs "
                 "(`retain_graph=True`), it adds up (`x.grad` became {added:.2f}× the first "
                 "gradient); here the call raised.", added=run.added)),
        Choice(N_("It raises only because `x.grad` already holds a value: after `x.grad = None` "
                  "it works"),
               T("After `x.grad = None` the call still raised `RuntimeError: {error}`: the saved "
                 "tensors are gone, whatever `.grad` holds.", error=run.error_after_clearing)),
    )  # fmt: skip
    prompt = T("The notes' recipe (000:2) on class {target} ({name}): `y = model(x)`, `loss = "
               "F.cross_entropy(y, target)`, `y.retain_grad()`, `loss.backward()`. What does a "
               "second `loss.backward()` do?", target=target, name=name)  # fmt: skip
    proof = T("On this model and image: after `y.retain_grad()`, `loss.backward(retain_graph=True)`"
              " then `loss.backward()` ran (`x.grad` became {added:.2f}× the first gradient); the "
              "next `loss.backward()` raised `RuntimeError: {error}`, with `y.grad` kept (shape "
              "{shape}); after `x.grad = None` it raised again.", added=run.added,
              error=run.error, shape=shape)  # fmt: skip
    return Question(KEYS[2], prompt, choices, 1, proof, NOTES_PART)


def grey_level_pixel(saliency: np.ndarray, high: float) -> tuple[int, int]:
    """(row, column) of the first pixel of ``saliency`` (S, S) whose value is closest to half of
    ``high`` (the map's P99): a pixel mid-way up the scale, where scalings differ most."""
    flat_index = int(np.argmin(np.abs(saliency.astype(np.float64) - high / 2)))
    row, col = np.unravel_index(flat_index, saliency.shape)
    return int(row), int(col)


def _level(value: int) -> str:
    return f"`{value}`"


def grey_level_question(saliency: torch.Tensor | np.ndarray,
                        comparison: ScalingComparison) -> Question:  # fmt: skip
    """``notes-grey-level``: the grey level the notes' scaling gives one pixel of the map
    ``saliency`` (S, S), read from ``comparison`` (the page's :func:`scaling.compare_scalings`
    of that map); it hides the notes' recipe, which shows both scalings and their gap.

    Raises:
        ValueError: ``comparison`` is not of a map the shape of ``saliency``.
    """
    s = saliency.detach().cpu().numpy() if torch.is_tensor(saliency) else np.asarray(saliency)
    if s.ndim != 2 or comparison.app.shape != s.shape:
        raise ValueError(f"the comparison's maps are {comparison.app.shape}, the map {s.shape}")
    pct, low, high = comparison.percentile, comparison.p_low, comparison.p_high
    row, col = grey_level_pixel(s, high)
    value = float(s[row, col])
    names = dict(row=row, col=col, value=value, low=low, high=high, lp=100 - pct, hp=pct)
    prompt = T("Pixel (row {row}, column {col}) of this map has saliency {value:.4g}; the map's "
               "P{lp:g} is {low:.4g} and its P{hp:g} {high:.4g}. Which grey level does the notes' "
               "scaling `np.uint8(cvglue.scale_min_max(s, 0, 255, percentile={hp:g}))` (000:2) "
               "give it?", **names)  # fmt: skip
    if comparison.notes is None:
        return _undefined_grey_level(prompt, names)
    right = int(comparison.notes[row, col])
    exact = float(cvglue_scale_min_max(s, 0, 255, pct)[row, col])
    app = int(comparison.app[row, col])
    candidates = [
        (app, T("That is the app's scaling: round(255 · {value:.4g} / {high:.4g}) = {app}. The "
                "notes first subtract P{lp:g} and then truncate.", app=app, **names)),
        (min(255, int(255 * value / high)) if high > 0 else 0,
         T("That stretches 0..P{hp:g}, not P{lp:g}..P{hp:g}: it forgets to subtract P{lp:g} = "
           "{low:.4g}.", **names)),
        (int(np.clip(np.round(exact), 0, 255)),
         T("That rounds 255 · (s − P{lp:g}) / (P{hp:g} − P{lp:g}) = {exact:.3f}; `np.uint8` "
           "truncates it.", exact=exact, **names)),
        *((right + step, T("Off by {step:+d}: 255 · (s − P{lp:g}) / (P{hp:g} − P{lp:g}) = "
                           "{exact:.3f}, truncated to {right}.", step=step, exact=exact,
                           right=right, **names)) for step in (-1, 1, 2, -2)),
    ]  # fmt: skip
    picked: dict[int, str] = {right: T("Right: 255 · ({value:.4g} − {low:.4g}) / ({high:.4g} − "
                                       "{low:.4g}) = {exact:.3f}, and `np.uint8` truncates it to "
                                       "{right}.", exact=exact, right=right, **names)}  # fmt: skip
    for level, why in candidates:
        if 0 <= level <= 255 and level not in picked and len(picked) < 4:
            picked[level] = why
    levels = sorted(picked)
    choices = tuple(Choice(_level(level), picked[level]) for level in levels)
    proof = T("The notes' scaling of this map gives pixel ({row}, {col}) the grey level {right} "
              "(255 · (s − P{lp:g}) / (P{hp:g} − P{lp:g}) = {exact:.3f}, truncated); the app's "
              "gives it {app}.", right=right, exact=exact, app=app, **names)  # fmt: skip
    return Question(KEYS[3], prompt, choices, levels.index(right), proof, NOTES_PART)


def _undefined_grey_level(prompt: T, names: dict[str, float | int]) -> Question:
    """The grey-level question on a map whose P1 equals its P99: the notes' scaling divides 0
    by 0 there, so no grey level is right."""
    nan = T("No grey level is defined: 255 · (s − P{lp:g}) / (P{hp:g} − P{lp:g}) is 0 / 0 here, "
            "and `np.uint8(NaN)` is undefined.", **names)  # fmt: skip
    choices = (
        Choice(N_("None: P1 equals P99 here, so the scaling divides 0 by 0"),
               T("Right: P{lp:g} = P{hp:g} = {high:.4g}, so `cvglue.scale_min_max` divides by "
                 "zero; the page shows the app's scaling instead.", **names)),
        Choice(_level(0), nan), Choice(_level(127), nan), Choice(_level(255), nan),
    )  # fmt: skip
    proof = T("On this map P{lp:g} = P{hp:g} = {high:.4g}: the notes' scaling is undefined.",
              **names)  # fmt: skip
    return Question(KEYS[3], prompt, choices, 0, proof, NOTES_PART)


def questions(loaded: LoadedModel, x: torch.Tensor, top5: Sequence[tuple[int, str, float]],
              shown: SaliencyResult, comparison: ScalingComparison, *,
              seed: int) -> tuple[Question, ...]:  # fmt: skip
    """The page's questions about its view, in :data:`KEYS` order, each answered by a run.

    ``loaded``: the classifier (frozen, eval mode); ``x``: the image as it sees it (1, 3, S, S);
    ``top5``: its ``(class, name, probability)`` rows, best first; ``shown``: the map on screen
    (``saliency`` (S, S)); ``comparison``: that map's two scalings (the page's pictures hold
    it); ``seed``: the page's seed (the sanity check draws its random weights from it).
    Costs about four gradient passes (none for the grey level). A question the view cannot
    ask (a model without parameterized layers, a flat map, a PyTorch whose second backward
    runs) is left out; the panel needs three.

    Raises:
        ValueError: ``x`` is not (1, C, H, W), ``seed`` not an int, or ``top5`` empty.
    """
    if not torch.is_tensor(x) or x.ndim != 4 or x.shape[0] != 1:
        raise ValueError(f"x is a batch of one image (1, C, H, W), got {getattr(x, 'shape', x)!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed is an int, got {seed!r}")
    model, target, names = loaded.model, shown.target, loaded.categories
    other = other_class(top5, target)
    asked: list[Question] = []
    method, before = _map_before(model, x, shown)
    if float(before.min()) < float(before.max()):  # a flat map has no rank correlation
        randomised = randomised_top_layer(model, x, shown, (method, before), seed)
        if randomised is not None:
            asked.append(top_layer_question(*randomised, seed, target, names[target]))
        if other is not None:
            change = _changed(before, method, model, x, other, shown)
            if not change.flat:
                asked.append(other_class_question(change, target, names[target], other,
                                                  names[other]))  # fmt: skip
    # Left out for a model with trainable parameters, or a PyTorch whose second backward runs.
    with contextlib.suppress(ValueError):
        asked.append(retain_grad_question(retain_grad_run(model, x, target), target,
                                          names[target]))  # fmt: skip
    asked.append(grey_level_question(shown.saliency, comparison))
    return tuple(asked)
