"""Saliency map -> grey levels: the app's scaling and the notes' (000:2), and how far apart.

Pure module (no Streamlit). A map is ``(H, W)`` float, non-negative (a
:class:`lessons.saliency.maps.SaliencyResult`'s ``saliency``); every function here returns
data (uint8 grey levels, numbers) and raises ``ValueError`` naming the bad value.

- :func:`scale_percentile` is the app's: divide by P99 + 1e-12 and round;
- :func:`cvglue_scale_min_max` / :func:`scale_like_notes` are the notes': P1..P99 stretched to
  0..255, clipped, truncated by ``np.uint8``;
- :func:`compare_scalings` measures the two on one map, :func:`mass_above_percentile` how much
  of the saliency the saturated pixels hold.

>>> u8 = scale_percentile(saliency, 99)             # (224, 224) uint8
>>> compare_scalings(saliency).max_diff
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.text import N_, T


def scale_percentile(
    saliency: torch.Tensor | np.ndarray, percentile: float = 99, eps: float = 1e-12
) -> np.ndarray:
    """(H, W) non-negative map -> (H, W) uint8: clip(s / (P_percentile(s) + eps), 0, 1) * 255.

    The ``eps`` keeps a flat map from dividing by zero: an all-zero map gives an all-zero image.
    """
    s = (
        saliency.detach().float().cpu().numpy()
        if torch.is_tensor(saliency)
        else np.asarray(saliency)
    )
    if s.ndim != 2:
        raise ValueError(f"saliency must be a 2-D map (H, W), got shape {s.shape}")
    if s.size == 0:
        raise ValueError("saliency map is empty")
    if not (0 < percentile <= 100):
        raise ValueError(f"percentile must be in (0, 100], got {percentile}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0 so a flat map never divides by zero, got {eps}")
    s = s.astype(np.float64)
    if not np.isfinite(s).all():
        raise ValueError("saliency map contains NaN or Inf; it cannot be scaled")
    s = np.maximum(s, 0.0)
    top = float(np.percentile(s, percentile))
    scaled = np.clip(s / (top + eps), 0.0, 1.0)
    return np.round(scaled * 255.0).astype(np.uint8)


# --------------------------------------------------------------------------------------------
# The notes' recipe (000:2): loss gradient, sum over channels, cvglue.scale_min_max, np.uint8
# --------------------------------------------------------------------------------------------

#: Where the notes give their saliency recipe.
NOTES_RECIPE_REF = "000:2"
#: The percentile the notes pass to ``cvglue.scale_min_max``.
NOTES_PERCENTILE = 99.0
#: The two recipes the page offers; the first is the default.
RECIPES: dict[str, str] = {
    "app": N_("The app's (default): class score, /P99, rounded"),
    "notes": N_("The notes' (000:2): loss, P1..P99, truncated"),
}


def _as_array(saliency: torch.Tensor | np.ndarray) -> np.ndarray:
    if torch.is_tensor(saliency):
        return saliency.detach().cpu().numpy()
    return np.asarray(saliency)


def cvglue_scale_min_max(
    array: torch.Tensor | np.ndarray,
    min_v: float,
    max_v: float,
    percentile: float = 100.0,
) -> np.ndarray:
    """What ``cvglue.scale_min_max(array, min_v, max_v, percentile)`` returns (the helper the
    notes call at 000:2; CVGlue's ``cvglue/utils/datautils.py``), written out here because the
    app does not depend on CVGlue.

    With ``lo = np.percentile(array, 100 - percentile)`` and ``hi = np.percentile(array,
    percentile)`` (NumPy's default "linear" interpolation), the result is
    ``clip((max_v - min_v) * (array - lo) / (hi - lo) + min_v, min_v, max_v)``, computed in the
    array's own float dtype and in that order, so a float32 map gives the same float32 values as
    CVGlue. No rounding: the notes then cast with ``np.uint8``, which truncates.

    Args:
        array: any shape (the notes pass (1, 1, H, W) float32); all values take part.
        min_v, max_v: output range, ``max_v > min_v``.
        percentile: in (50, 100], as CVGlue asserts; 100 is plain min-max.

    Returns:
        float array of ``array``'s shape, values in [min_v, max_v].

    Raises:
        ValueError: empty or non-finite array, ``max_v <= min_v``, percentile outside (50, 100],
            or ``hi == lo``. CVGlue does not check the last case: it divides by zero, which makes
            NaN where ``array == lo`` (and NaN turns into an undefined value under ``np.uint8``).
    """
    a = _as_array(array)
    if a.size == 0:
        raise ValueError("saliency map is empty")
    if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(f"array must hold real numbers, got dtype {a.dtype}")
    if not np.isfinite(a).all():
        raise ValueError("saliency map contains NaN or Inf; it cannot be scaled")
    if not max_v > min_v:
        raise ValueError(f"max_v must be greater than min_v, got min_v={min_v}, max_v={max_v}")
    if not 50.0 < percentile <= 100.0:
        raise ValueError(f"percentile must be in (50, 100] as in cvglue, got {percentile}")
    lo = np.percentile(a, 100.0 - percentile)
    hi = np.percentile(a, percentile)
    if hi == lo:
        middle = f"{2 * percentile - 100:g}%"  # a value: "% o" in a msgid reads as %-format
        raise ValueError(
            T(
                "the notes' scaling is undefined for this map: P{high:g} == P{low:g} == "
                "{value:.6g} (the middle {middle} of its values are all equal), so "
                "cvglue.scale_min_max would divide by zero and give NaN",
                high=percentile,
                low=100.0 - percentile,
                value=float(hi),
                middle=middle,
            )
        )
    scaled = (max_v - min_v) * (a - lo) / (hi - lo) + min_v
    return np.clip(scaled, min_v, max_v)


def scale_like_notes(
    saliency: torch.Tensor | np.ndarray, percentile: float = NOTES_PERCENTILE
) -> np.ndarray:
    """The notes' display scaling: ``np.uint8(cvglue.scale_min_max(s, 0, 255, percentile=99))``.

    ``saliency``: (H, W) (or any shape) float map -> same shape uint8. Pixels at or below P1 are
    0, at or above P99 are 255, and in between ``255 (s - P1) / (P99 - P1)`` is *truncated*
    (127.9 becomes 127), where :func:`scale_percentile` divides by P99 and rounds.

    Raises:
        ValueError: as :func:`cvglue_scale_min_max` (a flat map, P99 == P1, included).
    """
    return np.uint8(cvglue_scale_min_max(saliency, 0, 255, percentile=percentile))


@dataclass(frozen=True)
class ScalingComparison:
    """One saliency map scaled the app's way and the notes' way, and how far apart they are.

    ``app``, ``notes``: (H, W) uint8 (``notes`` is None when the notes' scaling is undefined,
    P_high == P_low; ``notes_error`` then says why). ``p_low``, ``p_high``: the map's
    (100 - percentile)-th and percentile-th values. ``max_diff``/``mean_diff``: absolute
    grey-level difference; ``share_differing``: fraction of pixels that differ.
    """

    percentile: float
    p_low: float
    p_high: float
    app: np.ndarray
    notes: np.ndarray | None
    notes_error: str | None
    max_diff: int | None
    mean_diff: float | None
    share_differing: float | None


def compare_scalings(
    saliency: torch.Tensor | np.ndarray, percentile: float = NOTES_PERCENTILE
) -> ScalingComparison:
    """Scale the (H, W) map with :func:`scale_percentile` and :func:`scale_like_notes` at the
    same ``percentile`` (in (50, 100]) and measure the difference. A flat map is not an error:
    the notes' side is None with the reason in ``notes_error``.

    Raises:
        ValueError: a map :func:`scale_percentile` rejects, or percentile outside (50, 100].
    """
    if not 50.0 < percentile <= 100.0:
        raise ValueError(f"percentile must be in (50, 100] as in cvglue, got {percentile}")
    app = scale_percentile(saliency, percentile)
    s = _as_array(saliency)
    p_low = float(np.percentile(s, 100.0 - percentile))
    p_high = float(np.percentile(s, percentile))
    try:
        notes = scale_like_notes(s, percentile)
    except ValueError as error:
        reason = error.args[0] if len(error.args) == 1 else str(error)  # a T stays translatable
        return ScalingComparison(percentile, p_low, p_high, app, None, reason, None, None, None)
    diff = np.abs(app.astype(np.int16) - notes.astype(np.int16))
    return ScalingComparison(
        percentile=percentile,
        p_low=p_low,
        p_high=p_high,
        app=app,
        notes=notes,
        notes_error=None,
        max_diff=int(diff.max()),
        mean_diff=float(diff.mean()),
        share_differing=float((diff > 0).mean()),
    )


def mass_above_percentile(saliency: torch.Tensor | np.ndarray, percentile: float = 99) -> float:
    """Share of the total saliency held by the pixels at or above the ``percentile``-th value
    (these are the pixels ``scale_percentile`` saturates). 0.0 for an all-zero map."""
    s = saliency.detach().cpu().numpy() if torch.is_tensor(saliency) else np.asarray(saliency)
    s = np.maximum(s.astype(np.float64), 0.0)
    total = float(s.sum())
    if total == 0.0:
        return 0.0
    return float(s[s >= np.percentile(s, percentile)].sum() / total)
