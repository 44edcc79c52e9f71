"""The sanity check's pieces (Adebayo et al. 2018): which layers, how to re-draw them, how to
compare two maps, and what the result says, in words and as a chart.

Pure module (no Streamlit). :func:`lessons.saliency.maps.randomization_test` runs the check
with these: it recomputes the map after each layer :func:`randomize_module` re-draws (top down,
in the order :func:`randomizable_layers` gives) and compares it with the original by
:func:`spearman`. Maps are ``(H, W)`` arrays or tensors of any float dtype.

>>> spearman(np.arange(5.0), np.arange(5.0) ** 2)
1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from torch import nn

from core.text import N_, T


def rankdata(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n of a flat array, ties get their average rank (like scipy.stats.rankdata)."""
    a = np.asarray(a).ravel()
    sorter = np.argsort(a, kind="mergesort")
    inv = np.empty(sorter.size, dtype=np.intp)
    inv[sorter] = np.arange(sorter.size, dtype=np.intp)
    sorted_a = a[sorter]
    new_value = np.r_[True, sorted_a[1:] != sorted_a[:-1]]
    dense = new_value.cumsum()[inv]
    bounds = np.r_[np.nonzero(new_value)[0], len(new_value)]
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)


def spearman(a: torch.Tensor | np.ndarray, b: torch.Tensor | np.ndarray) -> float:
    """Spearman rank correlation of two maps of equal size; NaN when either map is constant."""
    a = a.detach().cpu().numpy() if torch.is_tensor(a) else np.asarray(a)
    b = b.detach().cpu().numpy() if torch.is_tensor(b) else np.asarray(b)
    if a.size != b.size:
        raise ValueError(f"maps must have the same size, got {a.shape} and {b.shape}")
    ra, rb = rankdata(a.astype(np.float64)), rankdata(b.astype(np.float64))
    ra -= ra.mean()
    rb -= rb.mean()
    denom = math.sqrt(float((ra * ra).sum()) * float((rb * rb).sum()))
    if denom == 0.0:
        return float("nan")
    return float((ra * rb).sum() / denom)


def randomizable_layers(model: nn.Module, max_depth: int = 2) -> list[str]:
    """Names of the model's parameterized layers from the output down to the input.

    Top-level children with parameters, with ``nn.Sequential`` / ``nn.ModuleList`` containers
    opened up to ``max_depth`` levels (so ``_blocks.15`` ... ``_blocks.0`` count as layers).
    """

    def walk(module: nn.Module, prefix: str, depth: int) -> list[str]:
        names: list[str] = []
        for name, child in module.named_children():
            if next(child.parameters(), None) is None:
                continue
            full = f"{prefix}{name}"
            container = isinstance(child, nn.Sequential | nn.ModuleList)
            if container and depth < max_depth:
                names.extend(walk(child, full + ".", depth + 1))
            else:
                names.append(full)
        return names

    return list(reversed(walk(model, "", 0)))


def randomize_module(module: nn.Module, generator: torch.Generator) -> None:
    """Re-draw a module's parameters in place: weights with >= 2 dims from He-normal
    N(0, 2 / fan_in), 1-D parameters (biases, norm scales) randomly permuted."""
    with torch.no_grad():
        for p in module.parameters():
            if p.ndim >= 2:
                fan_in = p[0].numel()
                new = torch.randn(p.shape, generator=generator) * math.sqrt(2.0 / max(fan_in, 1))
            else:
                new = p.detach().cpu().flatten()[torch.randperm(p.numel(), generator=generator)]
            p.copy_(new.reshape(p.shape).to(p))


@dataclass(frozen=True)
class RandomizationResult:
    """Cascading randomization: after randomizing ``layers[:k+1]`` (top down) the map's Spearman
    rank correlation with the original map is ``correlations[k]`` (NaN: map became flat).

    ``original``: (H, W) uint8 scaled original map; ``maps``: one (H, W) uint8 map per step.
    """

    method: str
    layers: tuple[str, ...]
    correlations: tuple[float, ...]
    original: np.ndarray
    maps: tuple[np.ndarray, ...]


def read_randomization(result: RandomizationResult) -> str:
    """A short plain-language reading of a randomization test, quoting its numbers (a
    :class:`core.text.T`: the page translates it; a flat map's "undefined" is a T argument)."""
    corr = [c for c in result.correlations if not math.isnan(c)]
    if not corr:
        return T(
            "Every randomized map was flat (no gradient reached the input), so the rank "
            "correlation is undefined: the map clearly depends on the learned weights."
        )
    first, last = result.correlations[0], result.correlations[-1]
    undefined = T("undefined (flat map)")
    values = dict(
        layer=result.layers[0],
        first=undefined if math.isnan(first) else f"{first:.2f}",
        k=len(result.layers),
        last=undefined if math.isnan(last) else f"{last:.2f}",
    )
    worst = max(corr)
    if worst < 0.5:
        return T(
            "Randomizing only the top layer ({layer}) gives a rank correlation of {first}; "
            "after {k} layer(s) it is {last}. The map changes as soon as the learned weights are "
            "destroyed, so it reflects what the model learned: the method passes this sanity "
            "check.",
            **values,
        )
    if min(corr) > 0.8:
        return T(
            "Randomizing only the top layer ({layer}) gives a rank correlation of {first}; "
            "after {k} layer(s) it is {last}. The map barely changes although the model no "
            "longer knows anything: it mostly shows the image (edges, contrast), not the "
            "model's reasoning. Treat it with care.",
            **values,
        )
    return T(
        "Randomizing only the top layer ({layer}) gives a rank correlation of {first}; "
        "after {k} layer(s) it is {last}. The map changes partly. Randomize more layers to see "
        "whether it keeps decorrelating; what survives is structure that comes from the image "
        "rather than from the weights.",
        **values,
    )


def _english(message: str) -> str:
    return message


def thumbnail_steps(result: RandomizationResult, most: int = 4) -> list[int]:
    """Indices into ``result.maps`` for a row of at most ``most`` thumbnails, spread evenly from
    the first randomized layer to the last (both included).

    Raises:
        ValueError: ``most`` below 1.
    """
    if most < 1:
        raise ValueError(f"most must be >= 1 thumbnail, got {most}")
    count = len(result.maps)
    return [int(i) for i in np.linspace(0, count - 1, num=min(most, count), dtype=int)]


def thumbnails(
    result: RandomizationResult, most: int = 4
) -> tuple[list[np.ndarray], list[tuple[str, T]]]:
    """The row under the chart: the original map, then the maps at :func:`thumbnail_steps`
    (each (H, W) uint8), and each one's (caption, alt) as marked text.

    Raises:
        ValueError: ``most`` below 1.
    """
    steps = thumbnail_steps(result, most)
    captions: list[tuple[str, T]] = [(N_("original"), N_("The original saliency map."))]
    for i in steps:
        where = {"k": i + 1, "layer": result.layers[i]}
        captions.append((T("{k} layer(s): up to {layer}", **where),
                         T("Saliency map after randomizing {k} layer(s), up to {layer}.", **where)))
    return [result.original, *(result.maps[i] for i in steps)], captions


def correlation_chart(
    result: RandomizationResult, translate: Callable[[str], str] = _english
) -> go.Figure:
    """Spearman correlation with the original map (y) against the number of randomized layers
    (x, 0 = the original), one point per step; ``translate`` puts the labels in the page's
    language."""
    fig = go.Figure(
        go.Scatter(
            x=list(range(len(result.layers) + 1)),
            y=[1.0, *result.correlations],
            mode="lines+markers",
            text=[translate(N_("original")), *result.layers],
            hovertemplate=translate(
                N_("%{x} layer(s), last: %{text}<br>Spearman %{y:.3f}<extra></extra>")
            ),
        )
    )
    fig.update_layout(
        xaxis_title=translate(N_("randomized layers (top down)")),
        yaxis_title=translate(N_("Spearman vs original")),
        yaxis_range=[-0.2, 1.05],
        height=360,
        margin=dict(l=10, r=10, t=30, b=10),
    )
    return fig


def correlation_chart_alt(result: RandomizationResult) -> T:
    """The chart's text alternative: what it plots and every correlation, to two places."""
    return T(
        "Spearman rank correlation between the original saliency map and the map after "
        "randomizing more and more layers from the top: {values}",
        values=", ".join(f"{c:.2f}" for c in result.correlations),
    )
