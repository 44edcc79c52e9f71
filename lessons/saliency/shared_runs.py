"""How long one image through each model took, process-wide, to announce the next runs' times.

Pure module (no Streamlit). The page keeps one :class:`SharedRuns` for the whole server (in
``st.cache_resource``) beside its shared caches of maps and sanity checks (ui.heavy asks those
caches what they hold, and marks what is being computed).

>>> runs = SharedRuns()
>>> record_per_image_ms(runs, "lite0 · cpu", "smoothgrad", 33.0)
>>> announced_per_image_ms(runs, "lite0 · cpu", "integrated_gradients")
33.0
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from lessons.saliency import maps
from lessons.saliency.maps import MapChoice, RunEstimate, SaliencyResult


@dataclass
class SharedRuns:
    """The last measured time of one image through the model, forward + backward, in ms, by
    ``(model key, one pass)``: one pass is the vanilla gradient, the other methods send images
    in batches."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    per_image_ms: dict[tuple[str, bool], float] = field(default_factory=dict)


#: Used to announce a run's time before any gradient pass was measured (forward + backward, CPU):
#: one image alone (vanilla), and per image in batches (SmoothGrad n=25 in batches of 8 took
#: 0.98 s here, ~40 ms an image; benchmarks/saliency.py). A single pass's time says little about
#: a batched one, so each kind falls back to its own figure.
FALLBACK_PER_IMAGE_MS = 160.0
FALLBACK_BATCHED_PER_IMAGE_MS = 40.0


def announced_per_image_ms(runs: SharedRuns, model_key: str, method: str) -> float:
    """The per-image time (ms) to announce a ``method`` run with: the last one measured on this
    model for a run of its kind (one pass: vanilla; batched: the others), else the fallback of
    that kind. Never the warm-up's time: it includes one-time initialisation (seconds on a cold
    CPU)."""
    one_pass = method == "vanilla"
    with runs.lock:
        measured = runs.per_image_ms.get((model_key, one_pass))
    return measured or (FALLBACK_PER_IMAGE_MS if one_pass else FALLBACK_BATCHED_PER_IMAGE_MS)


def one_pass_ms(runs: SharedRuns, model_key: str, otherwise: float) -> float:
    """The last measured time (ms) of one vanilla pass on this model, else ``otherwise``."""
    with runs.lock:
        return runs.per_image_ms.get((model_key, True)) or otherwise


def record_per_image_ms(runs: SharedRuns, model_key: str, method: str, ms: float) -> None:
    """Keep a run's measured time per image (ms) for the next announcements of its kind."""
    with runs.lock:
        runs.per_image_ms[(model_key, method == "vanilla")] = ms


def record_run(runs: SharedRuns, model_key: str, result: SaliencyResult) -> None:
    """Keep the time per image (ms) of a map computed now, ``result`` (forward + backward over
    its ``images``), for the next announcements of its kind; a result of no image says
    nothing."""
    if result.images:
        ms = (result.forward_ms + result.backward_ms) / result.images
        record_per_image_ms(runs, model_key, result.method, ms)


def estimates(
    runs: SharedRuns, model_key: str, choice: MapChoice
) -> tuple[float, RunEstimate, RunEstimate]:
    """The per-image time (ms) a map of ``choice`` is announced with, the map's estimate, and
    the estimate of the vanilla gradient shown while it waits for its click (one pass, at the
    last measured vanilla time, else at the announced one)."""
    per_image_ms = announced_per_image_ms(runs, model_key, choice.method)
    estimate = maps.estimate_run(choice.method, n=choice.n, steps=choice.steps,
                                 per_image_ms=per_image_ms)  # fmt: skip
    one_pass = one_pass_ms(runs, model_key, per_image_ms)
    return per_image_ms, estimate, maps.estimate_run("vanilla", per_image_ms=one_pass)
