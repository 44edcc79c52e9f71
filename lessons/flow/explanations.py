"""The Flow page's longer sentences, tied to the live numbers.

Each function returns marked text (:class:`core.text.T`, or an ``N_`` message) that the page
translates with ``ui.i18n.tr``; values that are catalog messages themselves (a method's or a
reference's name) are passed as ``T`` so they are translated too. Nothing here computes a
result: the numbers come from the fill (:mod:`lessons.flow.fill`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from core.text import N_, T
from lessons.flow.fill import (
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_TORCH_METHOD,
    FlowCase,
    MethodResult,
)
from lessons.flow.references import notes_window_sizes

#: A function that translates a catalog message (the page passes ``ui.i18n.tr``).
Translate = Callable[[str], str]

#: What to look at in the picture (the line under the page's title).
LOOK_AT = N_(
    "the black holes in the flow (left), where they are (dark in the mask), and the same flow "
    "filled by averaging masked window means of sizes 3, 5, 9, ... (colour = direction, "
    "strength = speed)."
)
PREPARING = N_("Preparing the flow (Farneback runs both ways for real images)...")
NO_REFERENCE = N_(
    "This flow brought its own holes, so there is nothing to compare the fill with: upload a "
    "flow without NaN to get EPE numbers against the pre-mask flow."
)
PER_SCALE_INTRO = N_(
    "Each scale's masked mean on its own (holes only; black = that window saw no valid "
    "sample). The fill is the average of the non-black ones."
)
#: The gradual mean as a formula, and what its symbols mean.
FORMULA_LATEX = (
    r"\hat x_c(p)=\frac{1}{|S(p)|}\sum_{k\in S(p)}"
    r"\frac{\sum_{q\in W_k(p)} m_c(q)\,x_c(q)}{\sum_{q\in W_k(p)} m_c(q)},\quad "
    r"S(p)=\{k : \textstyle\sum_{W_k(p)} m_c>0\}"
)
FORMULA_NOTE = N_("`m_c` is 1 where channel c is valid; windows `W_k` are k x k, zero-padded at "
                  "the borders; only NaN values are replaced.")
SCALES_MAP_ALT = N_(
    "Heat map over the holes of how many window sizes had a valid sample; deep inside a hole "
    "only the larger windows reach valid flow."
)


def wrong_hint(source: str) -> str:
    """What to change when the flow of ``source`` has nothing to fill from (every value NaN)."""
    if source == "upload_flow":
        return N_("upload a flow file with finite values where the flow is known (NaN only at "
                  "the holes), or pick a built-in source.")
    return N_("lower the hole fraction or the band width, or pick another source.")


def progress_text(name: str) -> str:
    """The progress bar's text while method ``name`` runs, formatted with ``name``, ``done``
    and ``total``: the notes' reference counts windows, the NumPy loop hole pixels."""
    if name == NOTES_TORCH_METHOD:
        return N_("{name}: {done:,} of {total:,} windows")
    return N_("{name}: {done:,} of {total:,} hole pixels")


def upload_prompt(source: str) -> str:
    """What to upload before an upload source can show anything."""
    if source == "upload_flow":
        return N_("Upload a .flo or .npy flow file to continue.")
    return N_("Upload two images of the same size to compute their flow.")


def reference_heading(reference_kind: str) -> T:
    """The heading of the expander that shows the reference flow alone."""
    return T("Reference flow ({reference})", reference=T(reference_kind))


def reference_alt(reference_kind: str) -> T:
    """The alt text of the reference flow's picture."""
    return T("Flow colour image of the {reference}.", reference=T(reference_kind))


def progress_reporter(show: Callable[[float, str], None], name: str,
                      translate: Translate) -> Callable[[int, int], None]:
    """``progress(done, total)`` for method ``name`` that calls ``show(fraction, text)`` (a
    progress bar's ``progress``). The texts are translated now, in the page run's language: the
    callback runs later, from the fill."""
    text, shown = translate(progress_text(name)), translate(name)
    return lambda done, total: show(done / max(total, 1),
                                    text.format(name=shown, done=done, total=total))


def windows_line(windows: Sequence[int]) -> T:
    """The window sizes under the max_window slider, as code: ``3x3``, ``5x5``, ..."""
    return T("**Windows:** {sizes}", sizes=", ".join(f"`{k}x{k}`" for k in windows))


def comparison_what(methods: int, shape: tuple[int, ...]) -> T:
    """The comparison, named in the click that runs it when it is over the time budget."""
    return T("the comparison of {n} methods at {h}x{w}", n=methods, h=shape[0], w=shape[1])


def seconds_text(ms: float) -> str:
    """A duration for a person: ``"1.2 s"`` from a second up, ``"340 ms"`` below.

    >>> seconds_text(1234.0), seconds_text(340.2)
    ('1.2 s', '340 ms')
    """
    return f"{ms / 1e3:.1f} s" if ms >= 1e3 else f"{ms:.0f} ms"


def picture_alt(case: FlowCase, holes: int) -> T:
    """The main picture's alt text: what its three or four panels show."""
    if case.reference is not None:
        template = N_(
            "Flow colour images: the {case} flow with {holes:,} hole pixels in black, the hole "
            "mask (holes dark, valid flow pale blue), the flow filled by the gradual mean, and "
            "the {reference}."
        )
    else:
        template = N_(
            "Flow colour images: the {case} flow with {holes:,} hole pixels in black, the hole "
            "mask (holes dark, valid flow pale blue), the flow filled by the gradual mean."
        )
    return T(template, case=T(case.description), holes=holes, reference=T(case.reference_kind))


def picture_caption(case: FlowCase, holes: int) -> T:
    """The line under the picture: the case, its size and holes, and how colours read."""
    pixels = int(case.mask.size)
    return T(
        "{case}: {pixels:,} pixels, {holes:,} holes ({share:.0%}). Colours: torchvision's "
        "flow_to_image, hue = direction, saturation = speed, one shared scale.",
        case=T(case.description), pixels=pixels, holes=holes, share=holes / pixels,
    )


def notes_time(expected_ms: float, device: str, shape: tuple[int, ...], measured_at: str,
               on: bool) -> list[T]:
    """Under the notes' switch: the reference's expected time on this flow and the rate it comes
    from (``measured_at``: when this server last measured it, "" for the rate built in), then
    whether the switch is off; parts the page translates and joins."""
    basis = (T("rate measured here at {when}", when=measured_at) if measured_at
             else T("rate measured on this 2-core CPU"))
    line = T("Notes' version: about **{time}** on `{device}` at {h}x{w} ({basis})",
             time=seconds_text(expected_ms), device=device, h=shape[0], w=shape[1], basis=basis)
    return [line] if on else [line, T("; off.")]


def fill_done(methods: int, seconds: float, cached: int) -> list[T]:
    """The comparison's status once every method ran (``cached``: timings reused from the
    cache); parts the page translates and joins."""
    done = T("{n} methods filled in {s:.1f} s", n=methods, s=seconds)
    return [done, T("; {n} timings reused from the cache", n=cached)] if cached else [done]


def step_label(step: int, steps: int, name: str, expected_ms: float) -> T:
    """The comparison's status while method ``name`` runs (the notes' reference says its time)."""
    if name == NOTES_TORCH_METHOD:
        return T("Step {i} of {n}: {name} (expected about {time})...", i=step, n=steps,
                 name=T(name), time=seconds_text(expected_ms))
    return T("Step {i} of {n}: {name}...", i=step, n=steps, name=T(name))


def made(stamp: float, run_start: float) -> T:
    """When a result was computed: this run, or how long ago it went into the cache."""
    if stamp >= run_start:
        return T("this run")
    minutes = (run_start - stamp) / 60
    return T("cache, <1 min ago") if minutes < 1 else T("cache, {n} min ago", n=round(minutes))


def numpy_skipped(holes: int) -> T:
    """Why the notes' NumPy loop did not run on a flow with ``holes`` hole pixels."""
    return T(
        "The notes' NumPy loop is skipped: it visits one hole pixel at a time, and this flow has "
        "{holes:,} hole pixels, more than the page's limit of {limit:,}. Pick the 240x320 size "
        "or a lower hole fraction.", holes=holes, limit=NOTES_NUMPY_MAX_HOLES,
    )


def thinned_caption(step: int) -> T | None:
    """Above the heat maps when they are drawn from every ``step``-th pixel (None at 1)."""
    if step <= 1:
        return None
    if step == 2:
        template = N_("The heat maps below are drawn from every 2nd pixel in each direction, to "
                      "keep the page responsive at this size.")
    elif step == 3:
        template = N_("The heat maps below are drawn from every 3rd pixel in each direction, to "
                      "keep the page responsive at this size.")
    else:
        template = N_("The heat maps below are drawn from every {n}th pixel in each direction, "
                      "to keep the page responsive at this size.")
    return T(template, n=step)


def scales_hist_alt(scales: int) -> T:
    """The alt text of the bar chart of hole pixels by contributing scales."""
    return T("Bar chart: number of hole pixels by how many window sizes contributed (0 to {n}).",
             n=scales)


def windows_summary(max_window: int, windows: Sequence[int], hist: Sequence[int], holes: int,
                    unfilled: int) -> T:
    """What the window sizes did: how many holes every scale reached (``hist``: hole pixels by
    contributing scales), and how many hole values stayed NaN."""
    if unfilled:
        template = N_(
            "With `max_window={max_window}` the fill averages {n} window means ({sizes}). {all:,} "
            "of {holes:,} hole pixels had a valid sample at every scale; the others sit deep "
            "inside a hole, so only the larger windows reach valid flow. **{unfilled:,} hole "
            "values stayed NaN** (no valid sample within {k}x{k}) -- raise max_window to reach "
            "them."
        )
    else:
        template = N_(
            "With `max_window={max_window}` the fill averages {n} window means ({sizes}). {all:,} "
            "of {holes:,} hole pixels had a valid sample at every scale; the others sit deep "
            "inside a hole, so only the larger windows reach valid flow. **{unfilled:,} hole "
            "values stayed NaN** (no valid sample within {k}x{k})."
        )
    return T(template, max_window=max_window, n=len(windows), sizes=", ".join(map(str, windows)),
             all=hist[len(windows)], holes=holes, unfilled=unfilled, k=windows[-1])


def unfilled_warning(unfilled: int, largest: int) -> T:
    """The warning when hole values are still NaN after the fill."""
    return T("{unfilled:,} hole values are still NaN: no valid sample lies within the largest "
             "window ({k}x{k}). Raise max_window.", unfilled=unfilled, k=largest)


def scale_alt(k: int) -> T:
    """The alt text of one scale's picture."""
    return T("Flow colour image of the {k}x{k} window's masked mean at the holes; black where "
             "that window saw no valid sample.", k=k)


def cached_timings(cached: int, methods: int) -> T:
    """Under the table when some timings come from the cache."""
    return T(
        "*{cached} of {n} timings come from the cache* (column *timed*): the same flow and "
        "settings were filled earlier, in this or another session, and the time shown is the "
        "one measured then.", cached=cached, n=methods,
    )


def epe_alt(method: str, reference_kind: str) -> T:
    """The alt text of a method's endpoint-error map."""
    return T("Heat map of the endpoint error of {method} on the holes, in pixels, against the "
             "{reference}.", method=T(method), reference=T(reference_kind))


def epe_summary(reference_kind: str, methods: Sequence[MethodResult]) -> T | None:
    """The gradual mean's EPE against nearest-valid fill's and the best method's (``methods``:
    the comparison's rows, the gradual mean first and nearest valid last); None when no
    method could be scored."""
    scored = [m for m in methods if math.isfinite(m.mean_epe)]
    if not scored:
        return None
    best = min(scored, key=lambda m: m.mean_epe)
    return T(
        "Against the {reference}, the gradual mean's mean EPE on the holes is **{main:.3f} px**, "
        "nearest-valid fill's is **{near:.3f} px**; the most accurate here is *{best}*. "
        "Averaging many valid neighbours cancels noise, and on linear motion the mean of a "
        "symmetric window is exact; at motion boundaries (try *piecewise*) large windows mix "
        "both motions.", reference=T(reference_kind), main=methods[0].mean_epe,
        near=methods[-1].mean_epe, best=T(best.name),
    )


def speed_summary(device: str, notes_row: MethodResult, methods: Sequence[MethodResult]) -> T:
    """The notes' avg_pool2d time against the fastest backend's (``methods[:2]``: the two
    gradual-mean backends), and why the backends are faster."""
    fast = min(methods[:2], key=lambda m: m.ms)
    return T(
        "Speed on `{device}`: the notes' avg_pool2d version took {notes_ms:.1f} ms, the fastest "
        "backend ({fast}) {fast_ms:.1f} ms -- **{ratio:.0f}x** faster, with a largest difference "
        "of {diff:.1e}. avg_pool2d adds up k*k values per pixel; a box filter keeps a running "
        "sum (O(1) per pixel), and the fast backends do the divisions only at the holes.",
        device=device, notes_ms=notes_row.ms, fast=T(fast.name), fast_ms=fast.ms,
        ratio=notes_row.ms / max(fast.ms, 1e-6),
        diff=max(m.max_diff_vs_notes or 0.0 for m in methods[:2]),
    )


def notes_switch_hint(expected_ms: float, ref: str) -> T:
    """In place of the timing when the notes' reference is off (``ref``: the notes' place of
    the claim, as the page cites it)."""
    return T(
        "Switch on *Notes' avg_pool2d* (beside the picture) to time it against the notes' "
        "\"about 3 ms\" ({ref}); expected here: about {time}.", ref=ref,
        time=seconds_text(expected_ms),
    )


def numpy_loop_intro(max_window: int, windows: Sequence[int]) -> T:
    """How the notes' NumPy loop differs from the vectorised method, for ``max_window``."""
    return T(
        "Before vectorising, the notes (000:77-79) filled each hole in turn with the mean of its "
        "window means for windows {sizes} (here `max_window_size = {size}`, beside this page's "
        "{windows}). Their code differs from the vectorised method in four ways: the window "
        "`(cx - w//2, cy - w//2, cx + w, cy + w)` is **not centred** (it reaches w - 1 pixels "
        "right and down, w/2 left and up), `crop_rect` pads outside the image with **zeros that "
        "count as flow**, every fill is written back at once so **later holes average earlier "
        "fills**, and an early `break` after a window with no valid sample would leave the hole "
        "NaN (the in-place filling makes that unreachable with the default mask: the row above a "
        "hole is always the zero border or already filled).",
        sizes=", ".join(map(str, notes_window_sizes(max_window - 1))), size=max_window - 1,
        windows=", ".join(map(str, windows)),
    )


def numpy_loop_scored(numpy_row: MethodResult, vectorised: MethodResult, holes: int) -> T:
    """The notes' NumPy loop's error and time against the vectorised method's, on a flow with a
    reference and ``holes`` hole pixels."""
    return T(
        "On this flow the notes' NumPy loop has a mean EPE on the holes of **{numpy_epe:.3f} "
        "px**, against **{epe:.3f} px** for the vectorised method ({method}): **{ratio:.1f}x** "
        "the error. It took **{s:.2f} s** on the CPU ({us:.0f} us per hole pixel). The time is "
        "for the notes' loop with one change that leaves every bit of the output alone: "
        "`crop_rect` pads the whole image for every window of every hole, which this loop skips "
        "by building only the window; the code as printed is slower still.",
        numpy_epe=numpy_row.mean_epe, epe=vectorised.mean_epe, method=T(vectorised.name),
        ratio=numpy_row.mean_epe / max(vectorised.mean_epe, 1e-12), s=numpy_row.ms / 1e3,
        us=numpy_row.ms * 1e3 / max(holes, 1),
    )


def numpy_loop_unscored(numpy_row: MethodResult) -> T:
    """The notes' NumPy loop's time on a flow without a reference (nothing to score)."""
    if numpy_row.max_diff_vs_notes:
        template = N_(
            "The notes' NumPy loop took **{s:.2f} s** on the CPU; its largest difference from the "
            "avg_pool2d version on this flow is {diff:.2f} px. This flow has no reference, so "
            "neither can be scored."
        )
    else:
        template = N_("The notes' NumPy loop took **{s:.2f} s** on the CPU. This flow has no "
                      "reference, so neither can be scored.")
    return T(template, s=numpy_row.ms / 1e3, diff=numpy_row.max_diff_vs_notes)


def numpy_loop_offer() -> T:
    """The invitation to run the notes' NumPy loop."""
    return T(
        "Switch on *Run the notes' original NumPy loop* above to add it to the table, with its "
        "error and time (up to {limit:,} hole pixels; it shows its progress while it runs).",
        limit=NOTES_NUMPY_MAX_HOLES,
    )


def comparison_table(methods: Sequence[MethodResult], made_at: dict[str, float],
                     run_start: float, translate: Translate) -> list[dict[str, object]]:
    """The comparison as table rows, one per method, in ``translate``'s language (the page
    passes ``ui.i18n.tr``, which fills a :class:`T` too); ``made_at``: when each method's result
    was computed (see :func:`made`)."""
    def row(m: MethodResult) -> dict[str, object]:
        return {
            translate(N_("method")): translate(m.name),
            translate(N_("mean EPE on holes (px)")): m.mean_epe,
            translate(N_("median EPE on holes (px)")): m.median_epe,
            translate(N_("time (ms)")): round(m.ms, 2),
            translate(N_("timed")): translate(made(made_at[m.name], run_start)),
            translate(N_("device")): m.device,
            translate(N_("NaN left")): m.unfilled,
            translate(N_("max |diff| vs notes")): m.max_diff_vs_notes,
        }

    return [row(m) for m in methods]


def timing_alt(methods: Sequence[MethodResult], translate: Translate) -> str:
    """The alt text of the chart of each method's time, translated."""
    return translate(N_("Horizontal bar chart of each method's time in ms, log scale: "
                        "{times}.")).format(times="; ".join(f"{translate(m.name)} {m.ms:.1f} ms"
                                                          for m in methods))


def numpy_loop_result(case: FlowCase, methods: Sequence[MethodResult], offer: bool) -> T | None:
    """What the notes' NumPy loop did on this flow, after :func:`numpy_loop_intro`: its error
    against the vectorised method's (the notes' avg_pool2d, else the fast backend), its time
    alone on a flow without a reference, or (``offer``) the invitation to run it; None when it
    did not run and is not offered (skipped for its holes, or waiting for a click)."""
    rows = {m.name: m for m in methods}
    numpy_row = rows.get(NOTES_NUMPY_METHOD)
    if numpy_row is None:
        return numpy_loop_offer() if offer else None
    if case.reference is None:
        return numpy_loop_unscored(numpy_row)
    vectorised = rows.get(NOTES_TORCH_METHOD, methods[0])
    return numpy_loop_scored(numpy_row, vectorised, int(case.mask.sum()))
