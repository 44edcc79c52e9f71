"""Filling a case: the flow the page builds, the methods that fill it, their scores and cost.

A :class:`FlowSpec` names a built-in case (a synthetic field, the stereo pair, an affine warp, and
a hole mask); :func:`build_flow`, :func:`case_from_flow` and :func:`case_from_images` make the
:class:`FlowCase` (the flow with holes and the reference it is scored against).
:func:`run_method` fills a case with one method of :data:`METHODS`, times it and scores its
endpoint error on the holes; :func:`combine_methods` joins the rows into a :class:`Comparison`.
:func:`estimate_method_ms` says how long a method will take before it runs.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
import torch

from core.text import N_, T
from lessons.flow.baselines import inpaint_fill, nearest_fill
from lessons.flow.gradual_mean import (
    FillResult,
    as_numpy_hwc,
    gradual_mean_fill,
    scale_means,
    window_sizes,
)
from lessons.flow.masks import apply_holes, fb_consistency_mask, make_hole_mask
from lessons.flow.references import (
    notes_gradual_mean_numpy,
    notes_gradual_mean_torch,
    notes_window_sizes,
)
from lessons.flow.sources import (
    MAX_SIDE,
    SYNTHETIC_DESCRIPTIONS,
    affine_pair,
    decode_image,
    farneback_flow,
    sample_image,
    synthetic_flow,
)

__all__ = [
    "METHODS",
    "METHOD_CV2",
    "METHOD_COST_MS",
    "METHOD_TORCH",
    "NOTES_NUMPY_MAX_HOLES",
    "NOTES_NUMPY_METHOD",
    "NOTES_REFERENCE_DEFAULT_MAX_PIXELS",
    "NOTES_REFERENCE_MS_PER_UNIT",
    "NOTES_TORCH_METHOD",
    "OTHER_METHODS",
    "SOURCES",
    "WINDOWED_METHODS",
    "Comparison",
    "FlowCase",
    "FlowSpec",
    "MethodResult",
    "build_flow",
    "case_from_flow",
    "case_from_image_files",
    "case_from_images",
    "check_fillable",
    "combine_methods",
    "compare_methods",
    "comparison_methods",
    "endpoint_error",
    "epe_stats",
    "estimate_method_ms",
    "estimate_notes_ms",
    "method_settings",
    "notes_reference_on_by_default",
    "notes_reference_work",
    "run_method",
]

SOURCES: tuple[str, ...] = ("synthetic", "stereo", "affine")
#: The notes' NumPy loop costs a few hundred microseconds per hole pixel on a small CPU.
NOTES_NUMPY_MAX_HOLES = 25_000
NOTES_NUMPY_METHOD = N_("notes' NumPy loop (000:79)")
NOTES_TORCH_METHOD = N_("notes' avg_pool2d (reference)")
#: The methods :func:`run_method` knows, in the order :func:`compare_methods` lists them.
METHOD_CV2 = N_("gradual mean (cv2 backend)")
METHOD_TORCH = N_("gradual mean (torch backend)")
OTHER_METHODS: tuple[str, ...] = (N_("cv2.inpaint Telea"), N_("cv2.inpaint Navier-Stokes"),
                                  N_("nearest valid"))
METHODS: tuple[str, ...] = (METHOD_CV2, METHOD_TORCH, NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD,
                            *OTHER_METHODS)
#: Methods whose output depends on ``max_window`` (the others ignore it).
WINDOWED_METHODS: frozenset[str] = frozenset(
    {METHOD_CV2, METHOD_TORCH, NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD}
)


def endpoint_error(estimate: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Endpoint error ``||estimate - reference||_2`` over channels: (H, W, C) x2 -> (H, W)."""
    if estimate.shape != reference.shape:
        raise ValueError(f"shapes differ: {estimate.shape} vs {reference.shape}")
    d = np.asarray(estimate, np.float64) - np.asarray(reference, np.float64)
    return np.sqrt(np.sum(d * d, axis=2))


def epe_stats(epe: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(mean, median) of an EPE map over ``mask`` pixels where it is finite (NaN if none)."""
    vals = epe[mask]
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return float("nan"), float("nan")
    return float(vals.mean()), float(np.median(vals))


# rotation 2 degrees, scale 1.03 about the centre, then shifted by (4, -3) px
AFFINE_DEMO = {"angle": 2.0, "scale": 1.03, "shift": (4.0, -3.0)}


@dataclass(frozen=True)
class FlowSpec:
    """Everything that defines a built-in flow case (its ``repr`` is valid Python, for snippets).

    source: ``synthetic`` | ``stereo`` (scikit-image motorcycle pair, Farneback) | ``affine``
    (motorcycle_left and a copy warped by a known affine: Farneback with ground truth).
    field/height/width/magnitude/noise: the synthetic field. mask: a :data:`MASK_KINDS` entry
    (``fb`` needs an image source). fraction/hole_size/fb_threshold/seed: mask parameters.
    max_side: images are downscaled to this many pixels on the long side.
    """

    source: str = "synthetic"
    field: str = "rotation"
    height: int = 240
    width: int = 320
    magnitude: float = 4.0
    noise: float = 0.0
    mask: str = "random"
    fraction: float = 0.3
    hole_size: int = 12
    fb_threshold: float = 1.0
    seed: int = 0
    max_side: int = 480


@dataclass(frozen=True)
class FlowCase:
    """A flow with holes and what to measure it against.

    flow: (H, W, 2) float32, NaN = hole. reference: (H, W, 2) float32 or None.
    reference_kind: ``"ground truth"``, ``"pre-mask flow"`` or ``"none"``.
    mask: (H, W) bool, True where any channel is a hole. images: the image pair or None.
    """

    flow: np.ndarray
    reference: np.ndarray | None
    reference_kind: str
    mask: np.ndarray
    images: tuple[np.ndarray, np.ndarray] | None = None
    description: str = ""


def _mask_for(
    spec: FlowSpec, h: int, w: int, fwd: np.ndarray | None, bwd: np.ndarray | None
) -> np.ndarray:
    if spec.mask == "fb":
        if fwd is None or bwd is None:
            raise ValueError(
                T("the forward-backward mask needs an image pair (stereo, affine or uploaded "
                  "images); pick another mask for this source")
            )
        return fb_consistency_mask(fwd, bwd, spec.fb_threshold)
    return make_hole_mask(
        spec.mask, h, w, fraction=spec.fraction, size=spec.hole_size, seed=spec.seed
    )


def build_flow(spec: FlowSpec) -> FlowCase:
    """Build the flow case that ``spec`` describes (synthetic field or a scikit-image pair)."""
    if spec.source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {spec.source!r}")
    if spec.source == "synthetic":
        observed, truth = synthetic_flow(
            spec.field, spec.height, spec.width, magnitude=spec.magnitude, noise=spec.noise,
            seed=spec.seed,
        )
        mask = _mask_for(spec, spec.height, spec.width, None, None)
        return FlowCase(apply_holes(observed, mask), truth, N_("ground truth"), mask, None,
                        SYNTHETIC_DESCRIPTIONS.get(spec.field, f"synthetic {spec.field}"))
    left = sample_image("motorcycle_left.png", spec.max_side)
    if spec.source == "stereo":
        right = sample_image("motorcycle_right.png", spec.max_side)
        fwd, bwd = farneback_flow(left, right)
        mask = _mask_for(spec, *fwd.shape[:2], fwd, bwd)
        return FlowCase(apply_holes(fwd, mask), fwd, N_("pre-mask flow"), mask, (left, right),
                        N_("Farneback on the motorcycle stereo pair"))
    h, w = left.shape[:2]
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), AFFINE_DEMO["angle"],
                                     AFFINE_DEMO["scale"])
    matrix[:, 2] += AFFINE_DEMO["shift"]
    warped, truth = affine_pair(left, matrix)
    fwd, bwd = farneback_flow(left, warped)
    mask = _mask_for(spec, h, w, fwd, bwd)
    return FlowCase(apply_holes(fwd, mask), truth, N_("ground truth"), mask, (left, warped),
                    N_("Farneback on an image and its affine-warped copy"))


def case_from_flow(flow: np.ndarray, spec: FlowSpec) -> FlowCase:
    """A case from a loaded flow file: its own NaN are the holes (no reference to compare
    with); a file without NaN gets ``spec``'s mask and is compared with its pre-mask flow.

    Raises:
        ValueError: the file has no finite value at all (every pixel NaN: no valid flow), or a
            bad shape or mask setting.
    """
    x = as_numpy_hwc(flow).astype(np.float32)
    if not np.isfinite(x).any():
        raise ValueError(
            T("this file holds no valid flow: every pixel is NaN (all {h}x{w} pixels are "
              "holes), so there is nothing to fill from", h=x.shape[0], w=x.shape[1])
        )
    holes = np.isnan(x).any(axis=2)
    if holes.any():
        return FlowCase(x, None, "none", holes, None, N_("uploaded flow with its own holes"))
    mask = _mask_for(spec, x.shape[0], x.shape[1], None, None)
    return FlowCase(apply_holes(x, mask), x, N_("pre-mask flow"), mask, None, N_("uploaded flow"))


def case_from_images(img1: np.ndarray, img2: np.ndarray, spec: FlowSpec) -> FlowCase:
    """A case from an uploaded image pair: Farneback flow, ``spec``'s mask, pre-mask reference."""
    fwd, bwd = farneback_flow(img1, img2)
    mask = _mask_for(spec, *fwd.shape[:2], fwd, bwd)
    return FlowCase(apply_holes(fwd, mask), fwd, N_("pre-mask flow"), mask, (img1, img2),
                    N_("Farneback on the uploaded pair"))


def case_from_image_files(data: tuple[bytes, ...], spec: FlowSpec, *,
                          max_side: int = MAX_SIDE) -> FlowCase:
    """A case from two uploaded image files (their encoded bytes), each at most ``max_side``
    px a side: decoded, then as :func:`case_from_images`.

    Raises:
        ValueError: not two files, a file that is not a readable image or is over the cap
            (named "the first image" / "the second image"), or images of different sizes.
    """
    if len(data) != 2:
        raise ValueError(f"an image pair is two files, got {len(data)}")
    img1 = decode_image(data[0], T("the first image"), max_side=max_side)
    img2 = decode_image(data[1], T("the second image"), max_side=max_side)
    return case_from_images(img1, img2, spec)


@dataclass(frozen=True)
class MethodResult:
    """One filling method's output and scores. ``epe`` is (H, W) or None without a reference;
    ``mean_epe``/``median_epe`` are over the hole pixels (NaN without a reference).
    ``fill`` is the full :class:`FillResult` for the gradual-mean backends, else None."""

    name: str
    filled: np.ndarray
    ms: float
    device: str
    unfilled: int
    epe: np.ndarray | None
    mean_epe: float
    median_epe: float
    max_diff_vs_notes: float | None = None
    fill: FillResult | None = None


@dataclass(frozen=True)
class Comparison:
    """Everything the page shows: each method's result, the main fill and the scale set."""

    methods: tuple[MethodResult, ...]
    fill: FillResult
    windows: tuple[int, ...]
    hole_pixels: int
    reference_kind: str
    per_scale: dict[int, np.ndarray] = field(default_factory=dict)


def _timed(fn: Callable[[], object], repeats: int, device: str) -> tuple[object, float]:
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    times, result = [], None
    for _ in range(max(1, repeats)):
        sync()
        t0 = time.perf_counter()
        result = fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return result, statistics.median(times)


def comparison_methods(*, with_notes: bool, with_notes_numpy: bool) -> list[str]:
    """The methods a comparison runs, in :data:`METHODS` order (the cv2 gradual mean, the main
    fill, first): the notes' avg_pool2d reference and NumPy loop only when asked for.

    >>> comparison_methods(with_notes=False, with_notes_numpy=False)[:2]
    ['gradual mean (cv2 backend)', 'gradual mean (torch backend)']
    """
    names = [METHOD_CV2, METHOD_TORCH]
    if with_notes:
        names.append(NOTES_TORCH_METHOD)
    if with_notes_numpy:
        names.append(NOTES_NUMPY_METHOD)
    names.extend(OTHER_METHODS)
    return names


def method_settings(name: str, max_window: int, device: str) -> tuple[int, str]:
    """The ``(max_window, device)`` method ``name`` runs with when the page asks for
    ``max_window`` on ``device``: the methods that ignore the window run at 33, and only the
    torch backend and the notes' avg_pool2d reference leave the CPU. With the case, what the
    method's result is keyed on (the same pair gives the same result).

    >>> method_settings("nearest valid", 9, "cuda:0")
    (33, 'cpu')
    """
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    on_device = device if name in (NOTES_TORCH_METHOD, METHOD_TORCH) else "cpu"
    return (max_window if name in WINDOWED_METHODS else 33), on_device


def check_fillable(case: FlowCase) -> None:
    """Raise ValueError when ``case.flow`` has no finite value at all (nothing to fill from)."""
    if not np.isfinite(case.flow).any():
        raise ValueError(
            T("the flow has no valid value at all (every pixel is NaN), so there is nothing to "
              "fill from; use a smaller hole fraction or another file")
        )


def _check_device(device: str) -> None:
    if not (device == "cpu" or (device.startswith("cuda") and torch.cuda.is_available())):
        raise ValueError(f"device must be 'cpu' or an available 'cuda:N', got {device!r}")


def run_method(
    case: FlowCase,
    name: str,
    *,
    max_window: int = 33,
    device: str = "cpu",
    repeats: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> MethodResult:
    """Fill ``case.flow`` with one method of :data:`METHODS`, time it and score it on the holes.

    ``device`` is used by the torch backend and the notes' avg_pool2d reference; the others run
    on the CPU. ``progress(done, total)`` gets the reference's windows or the NumPy loop's hole
    pixels. ``max_diff_vs_notes`` is left None (:func:`combine_methods` fills it in).

    Raises:
        ValueError: unknown ``name``, all-NaN flow, bad ``max_window`` or ``device``, or more
            than :data:`NOTES_NUMPY_MAX_HOLES` hole pixels for the NumPy loop.
    """
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    window_sizes(max_window)
    check_fillable(case)
    _check_device(device)
    x = case.flow
    if name == NOTES_NUMPY_METHOD:
        numpy_holes = int(np.count_nonzero(np.isnan(x).any(axis=2)))
        if numpy_holes > NOTES_NUMPY_MAX_HOLES:
            raise ValueError(
                f"the notes' NumPy loop visits one hole pixel at a time and is limited to "
                f"{NOTES_NUMPY_MAX_HOLES:,} hole pixels; this flow has {numpy_holes:,}: pick a "
                "smaller size or fewer holes, or switch the NumPy loop off"
            )
    fill: FillResult | None = None
    if name == METHOD_CV2:
        fill, ms = _timed(  # type: ignore[assignment]
            lambda: gradual_mean_fill(x, max_window, backend="cv2"), repeats, "cpu")
        out, dev = fill.filled, "cpu"  # type: ignore[union-attr]
    elif name == METHOD_TORCH:
        xt = torch.from_numpy(x).to(device)
        fill_t, ms = _timed(
            lambda: gradual_mean_fill(xt, max_window, backend="torch"), repeats, device)
        out, dev = fill_t.filled.cpu().numpy(), device  # type: ignore[union-attr]
    elif name == NOTES_TORCH_METHOD:
        xt = torch.from_numpy(x).to(device)
        notes_t, ms = _timed(
            lambda: notes_gradual_mean_torch(xt, max_window, progress=progress), repeats, device)
        out, dev = notes_t.cpu().numpy(), device  # type: ignore[union-attr]
    elif name == NOTES_NUMPY_METHOD:
        out, ms = _timed(
            lambda: notes_gradual_mean_numpy(x, max_window - 1, progress=progress), 1, "cpu")
        dev = "cpu"
    else:
        fn = {
            "cv2.inpaint Telea": lambda: inpaint_fill(x, "telea"),
            "cv2.inpaint Navier-Stokes": lambda: inpaint_fill(x, "ns"),
            "nearest valid": lambda: nearest_fill(x),
        }[name]
        out, ms = _timed(fn, repeats, "cpu")
        dev = "cpu"
    filled = np.asarray(out, np.float32)
    unfilled = int(np.count_nonzero(np.isnan(filled)))
    ref = case.reference
    if ref is None:
        return MethodResult(name, filled, ms, dev, unfilled, None, float("nan"), float("nan"),
                            None, fill)
    epe = endpoint_error(filled, ref)
    mean, median = epe_stats(epe, case.mask)
    return MethodResult(name, filled, ms, dev, unfilled, epe, mean, median, None, fill)


def combine_methods(
    case: FlowCase,
    results: list[MethodResult] | tuple[MethodResult, ...],
    *,
    max_window: int = 33,
    per_scale: dict[int, np.ndarray] | None = None,
) -> Comparison:
    """The :class:`Comparison` of ``results`` from :func:`run_method`, in :data:`METHODS` order.

    Fills each row's ``max_diff_vs_notes`` from the notes' avg_pool2d row when there is one
    (the gradual-mean rows and the NumPy loop; 0 for the reference itself).

    Raises:
        ValueError: no cv2 gradual-mean row (it is the page's main fill), or a method twice.
    """
    windows = window_sizes(max_window)
    names = [r.name for r in results]
    if len(set(names)) != len(names):
        raise ValueError(f"each method may appear once, got {names}")
    by_name = {r.name: r for r in results}
    main = by_name.get(METHOD_CV2)
    if main is None or main.fill is None:
        raise ValueError(f"the results must include {METHOD_CV2!r} (the main fill)")
    notes_row = by_name.get(NOTES_TORCH_METHOD)
    notes = notes_row.filled if notes_row is not None else None

    def diff(r: MethodResult) -> float | None:
        if notes is None or r.name in OTHER_METHODS:
            return None
        if r.name == NOTES_TORCH_METHOD:
            return 0.0
        d = np.abs(np.asarray(r.filled, np.float32) - notes)
        return float(np.nanmax(d)) if np.isfinite(d).any() else 0.0

    rows = tuple(
        replace(by_name[n], max_diff_vs_notes=diff(by_name[n])) for n in METHODS if n in by_name
    )
    return Comparison(rows, main.fill, windows, int(np.count_nonzero(case.mask)),
                      case.reference_kind, dict(per_scale or {}))


def compare_methods(
    case: FlowCase,
    *,
    max_window: int = 33,
    device: str = "cpu",
    repeats: int = 1,
    with_notes: bool = True,
    with_notes_numpy: bool = False,
    with_per_scale: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Comparison:
    """Fill ``case.flow`` with every method, time each on ``device`` and score it on the holes.

    Methods: the gradual mean (cv2 backend on the CPU, torch backend on ``device``), the notes'
    avg_pool2d reference (on ``device``; skipped if ``with_notes`` is False), the notes'
    original NumPy loop :func:`notes_gradual_mean_numpy` with ``max_window_size =
    max_window - 1`` (windows 32, 16, 8, 4, 2 for 33; CPU, one run; only if
    ``with_notes_numpy``, at most :data:`NOTES_NUMPY_MAX_HOLES` hole pixels, ``progress`` gets
    its ``(done, total)`` hole counts), ``cv2.inpaint`` Telea and Navier-Stokes, and
    nearest-valid fill (CPU). Each is one :func:`run_method`; :func:`combine_methods` joins them.

    Raises:
        ValueError: all-NaN flow (nothing to fill from), bad ``max_window`` or ``device``, or
            more than :data:`NOTES_NUMPY_MAX_HOLES` hole pixels with ``with_notes_numpy``.
    """
    window_sizes(max_window)
    check_fillable(case)
    _check_device(device)
    names = comparison_methods(with_notes=with_notes, with_notes_numpy=with_notes_numpy)
    results = [
        run_method(case, n, max_window=max_window, device=device, repeats=repeats,
                   progress=progress if n == NOTES_NUMPY_METHOD else None)
        for n in names
    ]
    per_scale = scale_means(case.flow, max_window) if with_per_scale else None
    return combine_methods(case, results, max_window=max_window, per_scale=per_scale)


#: Above this many pixels the page leaves the notes' avg_pool2d reference off by default
#: (480x640 and larger: seconds on a 2-core CPU, tens of seconds at 720x1280).
NOTES_REFERENCE_DEFAULT_MAX_PIXELS = 240 * 320
#: The reference's cost on this 2-core CPU, in ms per megapixel per 1000 units of sum(k**2)
#: over its windows (avg_pool2d adds k*k values per pixel, twice per window). In CPU time, like
#: :data:`METHOD_COST_MS` (torch 2.14.1, 2 threads): 5,300 at 240x320 (small flows pay a fixed
#: overhead), 2,400 at 480x640, 1,900 at max_window 129, rounded up to 8,000 so that a time
#: announced before a run is rarely too short. (Wall time on a machine busy with other work was
#: 21.5 s at 720x1280, max_window 33, i.e. ~15,600: the queue of heavy jobs keeps such runs
#: apart.) The page replaces it with its own latest measurement once the reference has run.
NOTES_REFERENCE_MS_PER_UNIT = 8_000.0


def notes_reference_on_by_default(shape: tuple[int, ...]) -> bool:
    """Whether the page runs the notes' avg_pool2d reference by default for an (H, W, ...) flow:
    only up to :data:`NOTES_REFERENCE_DEFAULT_MAX_PIXELS` pixels (240x320)."""
    return int(shape[0]) * int(shape[1]) <= NOTES_REFERENCE_DEFAULT_MAX_PIXELS


def notes_reference_work(shape: tuple[int, ...], max_window: int) -> float:
    """The reference's work in units of megapixels x sum(k**2) / 1000 over its windows.

    >>> round(notes_reference_work((1000, 1000, 2), 33), 3)  # 9+25+81+289+1089 = 1493
    1.493
    """
    h, w = int(shape[0]), int(shape[1])
    if h < 1 or w < 1:
        raise ValueError(f"shape must have a positive height and width, got {tuple(shape)}")
    return h * w / 1e6 * sum(k * k for k in window_sizes(max_window)) / 1e3


def estimate_notes_ms(
    shape: tuple[int, ...], max_window: int, ms_per_unit: float = NOTES_REFERENCE_MS_PER_UNIT
) -> float:
    """Expected time of :func:`notes_gradual_mean_torch` on an (H, W, 2) flow, from a measured
    rate in ms per :func:`notes_reference_work` unit (the page passes its latest measurement).

    >>> round(estimate_notes_ms((720, 1280, 2), 33, 15_600.0) / 1e3, 1)
    21.5
    """
    if not (math.isfinite(ms_per_unit) and ms_per_unit > 0):
        raise ValueError(f"ms_per_unit must be a positive rate, got {ms_per_unit!r}")
    return notes_reference_work(shape, max_window) * ms_per_unit


#: What every other method costs on this 2-core CPU (torch 2.14.1, OpenCV 4), in CPU
#: milliseconds, measured with ``run_method`` on random 30 % holes at 240x320, 480x640 and
#: 720x1280 with max_window 33 and 129 on a busy machine. CPU time, not wall time: it is what a
#: run takes from the class, and on an idle server the wall time is at most this. Rounded up,
#: so an announced time is rarely too short.
#: - the gradual mean: per megapixel per window size (cv2: 54 ms at 720x1280 with 5 sizes,
#:   173 ms with 7; torch: ~0.3 s of set-up, then 0.7-0.9 s at 720x1280);
#: - ``cv2.inpaint``: per hole pixel (its cost follows the holes: Telea 1.2 s and
#:   Navier-Stokes 0.9 s for 276,506 holes, both channels);
#: - the notes' NumPy loop: per hole pixel, a fixed part plus a part per window area
#:   (114 us a hole at max_window 33, 622 us at 129);
#: - nearest valid fill: per megapixel.
METHOD_COST_MS: dict[str, float] = {
    "cv2_per_mpx_window": 30.0,
    "torch_setup": 300.0,
    "torch_per_mpx_window": 150.0,
    "telea_per_hole": 4.5e-3,
    "ns_per_hole": 3.5e-3,
    "numpy_per_hole": 80e-3,
    "numpy_per_hole_area": 25e-6,
    "nearest_per_mpx": 70.0,
}


def estimate_method_ms(
    name: str,
    shape: tuple[int, ...],
    max_window: int,
    holes: int,
    *,
    notes_ms_per_unit: float = NOTES_REFERENCE_MS_PER_UNIT,
) -> float:
    """Expected milliseconds of ``run_method(case, name, max_window=max_window)`` on an
    (H, W, 2) flow ``shape`` with ``holes`` hole pixels, said before it runs.

    The notes' avg_pool2d reference uses :func:`estimate_notes_ms` at ``notes_ms_per_unit`` (the
    page passes its latest measurement); the others use :data:`METHOD_COST_MS`. The methods
    that ignore ``max_window`` (inpainting, nearest valid) ignore it here too.

    >>> round(estimate_method_ms("cv2.inpaint Telea", (720, 1280, 2), 33, 276_506))
    1244

    Raises:
        ValueError: unknown ``name``, bad ``max_window``, a shape without a positive height and
            width, or a negative hole count.
    """
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    windows = window_sizes(max_window)
    h, w = int(shape[0]), int(shape[1])
    if h < 1 or w < 1:
        raise ValueError(f"shape must have a positive height and width, got {tuple(shape)}")
    if holes < 0:
        raise ValueError(f"holes must be >= 0, got {holes!r}")
    c = METHOD_COST_MS
    mpx = h * w / 1e6
    if name == METHOD_CV2:
        return mpx * len(windows) * c["cv2_per_mpx_window"]
    if name == METHOD_TORCH:
        return c["torch_setup"] + mpx * len(windows) * c["torch_per_mpx_window"]
    if name == NOTES_TORCH_METHOD:
        return estimate_notes_ms(shape, max_window, notes_ms_per_unit)
    if name == NOTES_NUMPY_METHOD:
        area = sum(k * k for k in notes_window_sizes(max_window - 1))
        return holes * (c["numpy_per_hole"] + area * c["numpy_per_hole_area"])
    if name == "cv2.inpaint Telea":
        return holes * c["telea_per_hole"]
    if name == "cv2.inpaint Navier-Stokes":
        return holes * c["ns_per_hole"]
    return mpx * c["nearest_per_mpx"]
