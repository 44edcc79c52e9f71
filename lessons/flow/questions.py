"""Predict, then reveal: the Flow page's questions, each answered by the fill the page drew.

Pure module (no Streamlit). :func:`questions` takes what the page already has for its view: the
case (:class:`~lessons.flow.fill.FlowCase`, ``flow`` (H, W, 2) float32 with NaN holes), the
page's main fill (:class:`~lessons.flow.gradual_mean.FillResult` of the cv2 backend, ``filled``
(H, W, 2), ``scales_used`` (H, W, 2) uint8) and ``max_window``. Nothing is filled again; the
distractors come from each hole's distance to valid flow, one ``cv2.distanceTransform`` per
channel (milliseconds, even at 720x1280). It asks:

- ``unfilled``: how many hole pixels are still NaN after the fill (read from the fill's output);
- ``scales``: at the hole pixel deepest inside a hole that the fill still reached, how many of
  the window means it averages (the fill's ``scales_used``);
- ``notes-max-window``: what the notes' ``gradual_mean_pytorch`` (000:80) does with
  ``max_window_size`` one less than the page's ``max_window`` (the notes' NumPy loop counts its
  windows that way: 32 for 33), run as printed on a 1x2x6x6 tensor with one NaN.

Texts are English and marked (``N_`` / ``T``); the page translates them when it shows them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import cv2
import numpy as np
import torch

from core.questions import Choice, Question
from core.text import T
from lessons.flow.fill import FlowCase
from lessons.flow.gradual_mean import FillResult, window_sizes
from lessons.flow.notes_as_printed import gradual_mean_pytorch

#: The question keys, in the order :func:`questions` asks them.
KEYS = ("unfilled", "scales", "notes-max-window")
#: The page's containers the questions blur until the reveal: the "Window sizes" tab (its
#: summary counts the NaN left, its scales map and histogram show how many scales reached each
#: hole) and the notes' callout that runs ``gradual_mean_pytorch`` with 32.
WINDOWS_PART = "flow-windows-tab"
NOTES_PART = "notes_callout-flow_max_window_not_aligned"
#: Where the notes make the claims the wrong choices repeat: every window's mean is averaged
#: (000:77), ``max_window_size`` is the largest window (the docstring at 000:80).
NOTES_ALL_SCALES_REF = "000:77"
NOTES_MAX_WINDOW_REF = "000:80"
#: The most choices a question offers (the right one and three others).
MAX_OFFERED = 4


def hole_distances(flow: np.ndarray) -> np.ndarray:
    """Each hole's distance to valid flow, per channel, in the windows' own metric.

    A ``k x k`` window centred on a pixel holds the pixels up to ``k // 2`` px away along both
    axes (the Chebyshev distance, and out of the frame is never valid: the fill pads with
    zeros), so a hole value ``d`` px from valid flow is reached by exactly the windows with
    ``k // 2 >= d``.

    Args:
        flow: (H, W, C) float, NaN marks a hole.

    Returns:
        (H, W, C) int64: 0 where the value is valid, else the distance (>= 1) to the nearest
        valid value of its channel; a channel with no valid value gets ``H + W`` at its holes.
    """
    if flow.ndim != 3:
        raise ValueError(f"flow must be (H, W, C), got shape {tuple(flow.shape)}")
    h, w, channels = flow.shape
    out = np.zeros((h, w, channels), np.int64)
    for c in range(channels):
        holes = np.isnan(flow[..., c])
        if holes.all():
            out[..., c] = h + w
        elif holes.any():
            dist = cv2.distanceTransform(holes.astype(np.uint8), cv2.DIST_C, 3)
            out[..., c] = np.rint(dist).astype(np.int64)
    return out


def _stay_nan(distances: np.ndarray, max_window: int) -> int:
    """Hole pixels (any channel) that no window up to ``max_window`` reaches."""
    return int(np.count_nonzero((distances > max_window // 2).any(axis=2)))


def _offer(right: tuple[object, Choice], others: Sequence[tuple[object, Choice]]
           ) -> tuple[tuple[Choice, ...], int]:  # fmt: skip
    """The right choice and the first others whose value differs from every value offered
    (never the right value twice), at most :data:`MAX_OFFERED`, in order of value; the choices
    and the right one's index."""
    offered = [right]
    for value, choice in others:
        if len(offered) < MAX_OFFERED and all(value != seen for seen, _c in offered):
            offered.append((value, choice))
    offered.sort(key=lambda pair: pair[0])  # type: ignore[arg-type, return-value]
    return tuple(choice for _v, choice in offered), offered.index(right)


def _unfilled_question(case: FlowCase, fill: FillResult, distances: np.ndarray,
                       max_window: int) -> Question:  # fmt: skip
    filled = np.asarray(fill.filled)
    holes = int(np.count_nonzero(np.isnan(case.flow).any(axis=2)))
    left = int(np.count_nonzero(np.isnan(filled).any(axis=2)))
    windows = window_sizes(max_window)
    reach = max_window // 2
    right = (left, Choice(f"{left:,}", T(
        "{n:,} hole pixels have no valid flow within {r} px, the reach of the {m}x{m} window",
        n=left, r=reach, m=max_window)))
    values = Choice(f"{fill.unfilled:,}", T(
        "{v:,} counts hole values, u and v separately, as the page's summary does; as pixels "
        "that is {n:,}", v=fill.unfilled, n=left))
    others: list[tuple[object, Choice]] = [(fill.unfilled, values)]
    larger = 2 * max_window - 1
    # the window sizes next to this one first (one smaller, one larger), then 3x3 alone
    for k in (*windows[-2:-1], larger, *reversed(windows[:-2])):
        count = _stay_nan(distances, k)
        others.append((count, Choice(f"{count:,}", T(
            "{c:,} would stay NaN with `max_window={k}`; the {m}x{m} window reaches {r} px",
            c=count, k=k, m=max_window, r=reach))))
    others.append((0, Choice("0", T(
        "Not every hole is reached: {n:,} pixels have no valid flow within {r} px", n=left,
        r=reach))))
    others.append((holes, Choice(f"{holes:,}", T(
        "That is every hole pixel, but a hole next to valid flow takes its mean: {f:,} of "
        "{h:,} got a value", f=holes - left, h=holes))))
    choices, answer = _offer(right, others)
    proof = T(
        "The page's fill with `max_window={m}` (cv2 backend): `isnan(filled).any(channel)` is "
        "true at {n:,} of {h:,} hole pixels ({v:,} NaN values). The deepest hole pixel is {d} px "
        "from valid flow; the {m}x{m} window reaches {r} px.",
        m=max_window, n=left, h=holes, v=fill.unfilled, d=int(distances.max()), r=reach,
    )
    return Question(KEYS[0], T(
        "With `max_window={m}`, how many of the {h:,} hole pixels still hold NaN after the fill?",
        m=max_window, h=holes), choices, answer, proof, WINDOWS_PART)


def deepest_reached_hole(distances: np.ndarray, max_window: int) -> tuple[int, int, int, int]:
    """``(y, x, channel, d)``: the hole value farthest from valid flow (``d`` px) that the
    windows up to ``max_window`` still reach; the first in row-major order, then channel order,
    among equals.

    Raises:
        ValueError: no hole value is reached (the flow has no hole next to valid flow).
    """
    reach = max_window // 2
    reached = np.where((distances >= 1) & (distances <= reach), distances, 0)
    if not reached.any():
        raise ValueError(T("this view has no hole next to valid flow: pick a mask with holes"))
    y, x, c = np.unravel_index(int(np.argmax(reached)), reached.shape)
    return int(y), int(x), int(c), int(reached[y, x, c])


def _scales_question(fill: FillResult, distances: np.ndarray, max_window: int) -> Question:
    windows = window_sizes(max_window)
    y, x, c, d = deepest_reached_hole(distances, max_window)
    used = int(fill.scales_used[y, x, c])
    n = len(windows)
    reaching = [k for k in windows if k // 2 >= d]
    short = [k for k in windows if k // 2 < d]
    sizes = ", ".join(f"{k}x{k}" for k in reaching)
    channel = ("u", "v")[c] if c < 2 else str(c)
    right = (used, Choice(T("{k} of {n}", k=used, n=n), T(
        "A k x k window reaches k // 2 px; valid flow {d} px away is inside these: {sizes}", d=d,
        sizes=sizes)))
    others: list[tuple[object, Choice]] = []
    if short:
        others.append((n, Choice(T("all {n}", n=n), T(
            "The notes average every window's mean, but these see only holes here and have no "
            "mean: {small}", small=", ".join(f"{k}x{k}" for k in short)), NOTES_ALL_SCALES_REF)))
    for value in (used - 1, used + 1, 1):
        if 0 < value <= n:
            others.append((value, Choice(T("{k} of {n}", k=value, n=n), T(
                "Not {k}: the windows with k // 2 >= {d} px are {sizes}, {u} of them", k=value,
                d=d, sizes=sizes, u=used))))
    others.append((0, Choice(T("none: it stays NaN"), T(
        "The {m}x{m} window reaches {r} px, so valid flow {d} px away fills it", m=max_window,
        r=max_window // 2, d=d))))
    choices, answer = _offer(right, others)
    proof = T(
        "The page's fill (cv2 backend) records `scales_used[{y}, {x}, {c}]` = {k}: the pixel's "
        "distance to valid `{ch}` flow is {d} px, and these windows reach that far: {sizes}.",
        y=y, x=x, c=c, k=used, ch=channel, d=d, sizes=sizes,
    )
    prompt = T(
        "Hole pixel (row {y}, column {x}) is {d} px from the nearest valid `{ch}` flow (along "
        "rows or columns, whichever is farther). How many of the {n} window means does the fill "
        "average there?", y=y, x=x, d=d, ch=channel, n=n)
    return Question(KEYS[1], prompt, choices, answer, proof, WINDOWS_PART)


def notes_window_run(max_window_size: int) -> tuple[int | None, str]:
    """The notes' ``gradual_mean_pytorch`` as printed (000:80), run with ``max_window_size`` on a
    1x2x6x6 tensor with one NaN: ``(largest window it used, what it said)`` -- the warning's
    text, or ``(None, "IndexError: ...")`` when it fails before filling. The largest window is
    read back from the warning, or is ``max_window_size`` itself when it did not warn."""
    x = torch.arange(2 * 6 * 6, dtype=torch.float32).reshape(1, 2, 6, 6)
    x[0, :, 2, 3] = float("nan")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            gradual_mean_pytorch(x, max_window_size)
        except (IndexError, ValueError, RuntimeError) as error:
            return None, f"{type(error).__name__}: {error}"
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    for message in said:
        if "max filter size" in message:
            return int(message.rsplit(" ", 1)[1]), message
    return max_window_size, ""


def _notes_question(max_window: int) -> Question:
    asked = max_window - 1
    largest, said = notes_window_run(asked)
    try:
        window_sizes(asked)
        app = T("this page takes {a} as it is", a=asked)
    except ValueError as error:
        app = T("this page's `window_sizes({a})` raises `ValueError: {e}`", a=asked, e=str(error))
    if largest is None:
        right = (0, Choice(T("It fails with an `IndexError` before filling anything"), T(
            "`int(log2({a} - 1))` is 0: no window fits, and `window_sizes[-1]` fails", a=asked)))
        why_largest = T("no window fits under {a}: it fails with `{e}`", a=asked, e=said)
    else:
        right = (largest, Choice(T("It warns, then fills with windows up to `{k}x{k}`", k=largest),
                                 T("It says \"{said}\" and goes on with windows up to {k}x{k}",
                                   said=said, k=largest)))  # fmt: skip
        why_largest = T("`int(log2({a} - 1))` rounds down, so its largest window is {k}x{k}",
                        a=asked, k=largest)
    others = [
        (asked, Choice(T("It fills with windows up to `{a}x{a}`", a=asked), T(
            "The notes' docstring calls it the maximum window size, but {why}",
            why=why_largest), NOTES_MAX_WINDOW_REF)),
        (max_window, Choice(T("It rounds up and fills with windows up to `{m}x{m}`, like this "
                              "page", m=max_window), T(
            "Nothing rounds up: {why}", why=why_largest))),
        (-1, Choice(T("It refuses with a `ValueError` that asks for `2**k + 1`"), T(
            "That is this page's answer ({app}); the notes' function raises no ValueError",
            app=app))),
    ]
    choices, answer = _offer(right, others)  # type: ignore[arg-type]
    outcome = T("it failed: `{e}`", e=said) if largest is None else T(
        "it warned \"{said}\" and filled the NaN", said=said)
    proof = T("The notes' `gradual_mean_pytorch` as printed (000:80), run with "
              "`max_window_size={a}` on a 1x2x6x6 tensor with one NaN: {outcome}.",
              a=asked, outcome=outcome)
    prompt = T(
        "The notes' NumPy loop counts its windows one smaller than this page (32 for 33). What "
        "does the notes' `gradual_mean_pytorch(x, max_window_size={a})` do, {a} being this "
        "page's `max_window={m}` minus one?", a=asked, m=max_window)
    return Question(KEYS[2], prompt, choices, answer, proof, NOTES_PART)


def questions(case: FlowCase, fill: FillResult, max_window: int) -> tuple[Question, ...]:
    """The Flow page's three questions about its view (see the module's docstring).

    Args:
        case: the page's case; ``case.flow`` (H, W, C) float32, NaN marks a hole.
        fill: the page's main fill of ``case.flow`` with ``max_window`` (``filled`` (H, W, C),
            ``scales_used`` (H, W, C) uint8).
        max_window: the page's largest window, ``2**k + 1``.

    Raises:
        ValueError: a bad ``max_window``, a fill of another flow or window set, or a view with
            no hole the fill reaches (each named).
    """
    windows = window_sizes(max_window)
    if tuple(fill.windows) != windows:
        raise ValueError(f"the fill used windows {fill.windows}, not those of max_window="
                         f"{max_window} {windows}")  # fmt: skip
    if np.shape(fill.filled) != case.flow.shape:
        raise ValueError(f"the fill's shape {np.shape(fill.filled)} is not the flow's "
                         f"{case.flow.shape}")  # fmt: skip
    distances = hole_distances(case.flow)
    scales = _scales_question(fill, distances, max_window)  # first: it names a view with no hole
    return (_unfilled_question(case, fill, distances, max_window), scales,
            _notes_question(max_window))
