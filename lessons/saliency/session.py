"""What one run of the saliency page works with: the classifier, the image as it sees it, and
the map on screen; with the model's warm-up pass and its top-5 (and their table).

Pure module (no Streamlit): the page fills these from its controls and shared caches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.text import N_, T
from lessons.saliency import maps
from lessons.saliency.maps import MapChoice, SaliencyResult
from lessons.saliency.models import LoadedModel, top_k


@dataclass(frozen=True)
class Classifier:
    """The model the maps explain, and ``warm_ms``, its warm-up pass (None: it failed).
    ``shared``: from the registry, so all sessions share its results (an uploaded model's name
    is not a safe shared key); an uploaded one keeps its file's name and architecture for the
    code snippet."""

    loaded: LoadedModel
    warm_ms: float | None
    shared: bool = True
    upload_name: str | None = None
    architecture: str | None = None

    @property
    def model_key(self) -> str:
        """Its results' key in the shared caches: where its weights came from, and its device."""
        return f"{self.loaded.source} · {self.loaded.device}"


@dataclass(frozen=True)
class Subject:
    """The image as the model sees it (``x`` (1, 3, S, S) float, ``view`` (S, S, 3) uint8), the
    model's top-5 ``(class, name, probability)`` and class count, and the keys of its shared
    results (``image_digest``, ``model_key``)."""

    x: torch.Tensor
    view: np.ndarray
    top5: list[tuple[int, str, float]]
    num_classes: int
    image_digest: str
    model_key: str

    def map_key(self, choice: MapChoice, method: str | None = None) -> tuple:
        """The shared-cache key of ``choice``'s map of this image (``method``: another one's,
        for a placeholder map), :meth:`MapChoice.key`."""
        return choice.key(self.model_key, self.image_digest, method)


@dataclass(frozen=True)
class ShownMap:
    """The map on screen: its :attr:`method` is the chosen one's, or "vanilla" while that one
    waits for a click (the controls and the sanity check keep the chosen method and
    ``choice_key``); ``key`` is the shown map's shared-cache key, ``per_image_ms`` the time per
    image the run was announced with, ``provenance`` where the map came from
    (explanations.provenance), ``class_name`` the explained class's name."""

    result: SaliencyResult
    key: tuple
    choice_key: tuple
    per_image_ms: float
    provenance: T
    class_name: str

    @property
    def method(self) -> str:
        """The shown map's method."""
        return self.result.method

    @property
    def prob(self) -> float:
        """The explained class's softmax probability on the clean input."""
        return float(torch.softmax(self.result.logits, 0)[self.result.target])


def warmed_up(loaded: LoadedModel) -> tuple[LoadedModel, float | None]:
    """The model and one untimed gradient pass's time (ms) right after loading, so the page's
    times leave out one-time initialisation; None when that pass failed (the map then reports
    the problem)."""
    try:
        x = torch.zeros(1, 3, loaded.preprocessing.crop, loaded.preprocessing.crop)
        return loaded, maps.warm_up(loaded.model, x.to(loaded.device))
    except (ValueError, RuntimeError):
        return loaded, None


def classify(loaded: LoadedModel, x: torch.Tensor) -> tuple[list[tuple[int, str, float]], int]:
    """Top-5 ``(class, name, probability)`` of ``x`` (1, 3, S, S), and the class count.

    Raises:
        RuntimeError: the model cannot run on ``x`` (torch's message).
    """
    with torch.no_grad():
        logits = loaded.model(x)
    return top_k(logits, loaded.categories, 5), int(logits.shape[1])


def through_model(
    loaded: LoadedModel, image: np.ndarray
) -> tuple[torch.Tensor, np.ndarray, list[tuple[int, str, float]], int]:
    """``image`` (H, W, 3) uint8 as the model sees it: its input ``x`` (1, 3, S, S) and view
    (S, S, 3) uint8, and :func:`classify` of ``x`` (top-5 and class count).

    Raises:
        ValueError: an image the preprocessing refuses.
        RuntimeError: the model cannot run on ``x`` (torch's message).
    """
    x = loaded.preprocess(image)
    return (x, loaded.model_view(image), *classify(loaded, x))


def top5_columns(top5: list[tuple[int, str, float]]) -> dict[str, list]:
    """The top-5 table's columns by header (marked text): class, name, and probability rounded
    to 4 places, from :func:`classify`'s ``(class, name, probability)`` rows."""
    return {N_("class"): [row[0] for row in top5], N_("name"): [row[1] for row in top5],
            N_("probability"): [round(row[2], 4) for row in top5]}  # fmt: skip
