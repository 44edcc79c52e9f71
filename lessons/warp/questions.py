"""The warp page's "predict, then reveal" questions, answered by running the page's view.

Each question is built from the view the page shows (its :class:`~lessons.warp.affine.WarpCase`,
the input's size and the :class:`~lessons.warp.affine.WarpComparison` it drew) by running the
code the page draws its sampling grid with (:func:`~lessons.warp.sampling.sampling_grid`: where
``F.affine_grid`` sends each output pixel, unnormalized as ``F.grid_sample`` does):

- ``top-left``: which input point output pixel (0, 0) reads with the view's theta (notes'
  theta or not): through ``M⁻¹``, not ``M``; the notes' ``2x/W − 1`` (000:18) reads elsewhere;
- ``notes-shift``: how far the notes' affine2theta misplaces every sample with
  ``align_corners=False`` (the notes, 000:18, present their normalization as the way to do it);
- ``output-size``: which input point the output's bottom-right pixel reads when the output size
  differs from the input's: the size is OpenCV's ``dsize`` canvas, not the resolution of a
  grid over the same picture (notes 000:18 say it is the latter).

Points are shown to 2 decimals, distances to 3. A distractor whose text equals the answer's (or
another distractor's) in a view is left out, and the next one of its pool takes its place: the
identity M puts the notes', OpenCV's and the forward point on one spot.

The parts of the page that give the answers away: section 3, the matrices and the sampling grid
(:data:`MAPPING_PART`), the verdict under the picture (:data:`VERDICT_PART`, it states the notes'
shift) and the output-size check (:data:`SIZE_PART`).

Pure: no Streamlit. Texts are English and marked (``N_`` / ``T``); the page translates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.questions import Choice, Question, check_questions
from core.text import N_, T
from lessons.warp.affine import WarpCase, WarpComparison
from lessons.warp.canvas import preset_size
from lessons.warp.captions import theta_name
from lessons.warp.sampling import sampling_grid
from lessons.warp.theta import affine_to_theta, notes_affine2theta, notes_shift_px
from lessons.warp.validation import MIN_SIDE, homogeneous, validate_hw

#: The page's parts (``st.container(key=...)``) that give the answers away.
MAPPING_PART = "warp-mapping"
VERDICT_PART = "warp-verdict"
SIZE_PART = "warp-size-note"

#: Where the notes normalize with ``2x/W − 1`` and say the size is the grid's resolution.
NOTES_THETA = "000:18"

#: How many choices a question offers at most (the answer and its distractors).
MAX_CHOICES = 4


@dataclass(frozen=True)
class _WarpDraft:
    """A choice before the question is assembled: ``text`` is what dedupes it."""

    text: str
    why: str
    notes: str | None = None


def _number(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def point_text(x: float, y: float) -> str:
    """An input point as a choice shows it: ``(x, y)`` to 2 decimals (never ``-0.00``)."""
    return f"({_number(x, 2)}, {_number(y, 2)})"


def px_text(distance: float) -> str:
    """A distance in pixels as a choice shows it, to 3 decimals."""
    return f"{_number(distance, 3)} px"


def _question(key: str, prompt: str, right: _WarpDraft, pool: Sequence[_WarpDraft], proof: str,
              hides: str | None) -> Question:  # fmt: skip
    """The question with ``right`` first and the first distractors of ``pool`` whose texts are
    new, up to :data:`MAX_CHOICES` choices; the answer's place is rotated by the key so that it
    is not always A."""
    kept: list[_WarpDraft] = []
    for draft in pool:
        if draft.text != right.text and all(draft.text != k.text for k in kept):
            kept.append(draft)
        if len(kept) == MAX_CHOICES - 1:
            break
    if len(kept) < 2:
        raise ValueError(f"question {key}: fewer than two distinct wrong choices in this view "
                         f"({[d.text for d in kept]})")  # fmt: skip
    answer = sum(map(ord, key)) % (len(kept) + 1)
    drafts = [*kept[:answer], right, *kept[answer:]]
    choices = tuple(Choice(d.text, d.why, d.notes) for d in drafts)
    return Question(key, prompt, choices, answer, proof, hides)


def _m_inv_at(m: np.ndarray, x: float, y: float) -> tuple[float, float]:
    """``M⁻¹·(x, y)``: where cv2.warpAffine reads output pixel ``(x, y)``."""
    sx, sy, _ = np.linalg.inv(homogeneous(m)) @ np.array([x, y, 1.0])
    return float(sx), float(sy)


def _corner_reads(theta: np.ndarray, m: np.ndarray, src_hw: tuple[int, int],
                  dst_hw: tuple[int, int], align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """Where ``theta`` makes the output's top-left and bottom-right pixels read the input:
    ``((x, y) of (0, 0), (x, y) of (W_out - 1, H_out - 1))``, each (2,) float64, from the page's
    sampling grid (its corners are always in it)."""
    grid = sampling_grid(theta, m, src_hw, dst_hw, align_corners, max_points=4)
    return (np.array([grid.in_x[0], grid.in_y[0]]), np.array([grid.in_x[-1], grid.in_y[-1]]))


def top_left_question(case: WarpCase, src_hw: tuple[int, int], shown: WarpComparison) -> Question:
    """Which input point output pixel (0, 0) reads in the view: the page's own sampling grid.

    Args:
        case: the page's case. src_hw: the input's ``(H, W)``. shown: the comparison the page
            drew for ``case`` (its ``grid`` starts at output pixel (0, 0)).
    """
    grid = shown.grid
    if grid.out_x[0] != 0 or grid.out_y[0] != 0:
        raise ValueError(f"the shown sampling grid starts at output pixel "
                         f"({grid.out_x[0]}, {grid.out_y[0]}), not (0, 0)")  # fmt: skip
    m, ac = case.affine, case.align_corners
    dst_hw = (case.dsize[1], case.dsize[0])
    read = np.array([grid.in_x[0], grid.in_y[0]])
    opencv = np.array(_m_inv_at(m, 0, 0))
    p = point_text(*read)
    if case.notes:
        right_why = T("the notes' theta in use reads there: OpenCV's point M⁻¹·(0, 0) = {ref} "
                      "moved by their `2x/W − 1` normalization", ref=point_text(*opencv))
        other = _WarpDraft(point_text(*opencv), T(
            "that is M⁻¹·(0, 0), where cv2.warpAffine reads; the notes' theta on the page "
            "misses it by {d:.3f} px", d=float(np.hypot(*(read - opencv)))))
    else:
        right_why = T("θ = N_src·M⁻¹·N_dst⁻¹ sends output pixel (0, 0) back through M⁻¹: "
                      "grid_sample reads {p}, exactly where cv2.warpAffine reads", p=p)
        theirs, _ = _corner_reads(notes_affine2theta(m, src_hw, dst_hw)[0].numpy(), m, src_hw,
                                  dst_hw, ac)  # fmt: skip
        other = _WarpDraft(point_text(*theirs), T(
            "that is where the notes' affine2theta reads it: their `2x/W − 1` puts pixel 0 "
            "at −1, {d:.3f} px from the correct {p}", d=float(np.hypot(*(theirs - read))), p=p),
            notes=NOTES_THETA)  # fmt: skip
    pool = [
        other,
        _WarpDraft(point_text(m[0, 2], m[1, 2]), T(
            "that is M·(0, 0), where the input's top-left pixel lands: θ maps output to input, "
            "so the point read goes through M⁻¹, {p}", p=p)),
        _WarpDraft(point_text(*(read - 0.5)), T(
            "half a pixel up and left of {p}: the output pixel's corner mapped back, but "
            "grid_sample samples its centre", p=p)),
        _WarpDraft(point_text(*(read + 0.5)), T(
            "half a pixel down and right of {p}: the output pixel's far corner mapped back, "
            "but grid_sample samples its centre", p=p)),
    ]
    return _question(
        "top-left",
        T("In this view ({theta}, align_corners={ac}), which input point (x, y) does "
          "grid_sample read for output pixel (0, 0), the output's top-left?",
          theta=theta_name(case.notes), ac=ac),
        _WarpDraft(p, right_why), pool,
        T("`F.affine_grid` with this view's θ, unnormalized as grid_sample does: output pixel "
          "(0, 0) reads {p}; M⁻¹·(0, 0) = {ref} is where cv2.warpAffine reads.",
          p=p, ref=point_text(*opencv)),
        MAPPING_PART,
    )  # fmt: skip


def notes_shift_question(case: WarpCase, src_hw: tuple[int, int]) -> Question:
    """How far the notes' theta misplaces the samples with ``align_corners=False``, measured on
    the view's sampling grid (M, input and output size of ``case``; ``src_hw``: input ``(H, W)``).
    """
    m = case.affine
    dst_hw = (case.dsize[1], case.dsize[0])
    grid = sampling_grid(notes_affine2theta(m, src_hw, dst_hw)[0].numpy(), m, src_hw, dst_hw,
                         align_corners=False)  # fmt: skip
    gaps = np.hypot(grid.in_x - grid.ref_x, grid.in_y - grid.ref_y)
    d = float(gaps.mean())
    dx, dy = notes_shift_px(m)
    right = px_text(d)
    if right == px_text(0.0):
        right_why = T("M's 2×2 part A keeps (½, ½) where it is: A⁻¹(½, ½) − (½, ½) = (0, 0), so "
                      "here the notes' theta reads where OpenCV does (measured {d:.1e} px)", d=d)
    else:
        right_why = T("measured on the sampling grid: each of {n} samples is {d:.3f} px from "
                      "OpenCV's, the same (dx, dy) = ({dx:+.3f}, {dy:+.3f}) = "
                      "A⁻¹(½, ½) − (½, ½) everywhere", n=int(gaps.size), d=d, dx=dx, dy=dy)
    pool = [
        _WarpDraft(px_text(0.0), T(
            "that takes the notes' affine2theta as exact: its `2x/W − 1` puts pixel 0 at −1, "
            "the image's edge, so every sample moves by {d:.3f} px here", d=d), NOTES_THETA),
        _WarpDraft(px_text(0.5), T(
            "half a pixel is the gap between the two normalizations at the edge, but a sample "
            "moves by A⁻¹(½, ½) − (½, ½): {d:.3f} px for this M", d=d)),
        _WarpDraft(px_text(float(np.hypot(0.5, 0.5))), T(
            "that is |(½, ½)|, half a pixel in x and in y; the run measured {d:.3f} px, "
            "|A⁻¹(½, ½) − (½, ½)| for this M", d=d)),
        _WarpDraft(px_text(2 * d), T(
            "twice the measured {d:.3f} px: the notes' error sits in both normalizations, "
            "but together they make one shift, A⁻¹(½, ½) − (½, ½)", d=d)),
        _WarpDraft(px_text(1.0), T("a whole pixel; the run measured {d:.3f} px", d=d)),
    ]
    return _question(
        "notes-shift",
        T("With align_corners=False and the notes' affine2theta ({ref}) for this M, how far "
          "from OpenCV's sample point does grid_sample read each output pixel?",
          ref=NOTES_THETA),
        _WarpDraft(right, right_why), pool,
        T("The notes' θ in `F.affine_grid` ({w}×{h} output, align_corners=False): the samples "
          "are {d:.4f} px from cv2.warpAffine's on average (min {lo:.4f}, max {hi:.4f}); "
          "A⁻¹(½, ½) − (½, ½) = ({dx:+.4f}, {dy:+.4f}).", w=case.dsize[0], h=case.dsize[1],
          d=d, lo=float(gaps.min()), hi=float(gaps.max()), dx=dx, dy=dy),
        VERDICT_PART,
    )  # fmt: skip


def size_target(case: WarpCase, src_hw: tuple[int, int]) -> tuple[tuple[int, int], str | None]:
    """The output size ``(width, height)`` the size question asks about, and the preset's name
    when that is not the view's own: the view's ``dsize`` when it differs from the input's size,
    else "Half (shrink)" (or "Double (enlarge)" for an input too small to halve)."""
    sh, sw = src_hw
    if case.dsize != (sw, sh):
        return case.dsize, None
    half = preset_size("Half (shrink)", sw, sh)
    if min(half) >= MIN_SIDE:
        return half, N_("Half (shrink)")
    return preset_size("Double (enlarge)", sw, sh), N_("Double (enlarge)")


def output_size_question(case: WarpCase, src_hw: tuple[int, int]) -> Question:
    """Which input point the output's bottom-right pixel reads at an output size other than the
    input's (:func:`size_target`), with the correct theta; ``src_hw``: the input's ``(H, W)``."""
    sh, sw = src_hw
    m, ac = case.affine, case.align_corners
    (tw, th), preset = size_target(case, src_hw)
    x, y = tw - 1, th - 1
    rebuilt = affine_to_theta(m, src_hw, (th, tw), ac)[0].numpy()
    fixed = affine_to_theta(m, src_hw, src_hw, ac)[0].numpy()
    read = _corner_reads(rebuilt, m, src_hw, (th, tw), ac)[1]
    stretched = _corner_reads(fixed, m, src_hw, (th, tw), ac)[1]
    p = point_text(*read)
    pool = [
        _WarpDraft(point_text(*stretched), T(
            "that is one fixed θ (the {sw}×{sh} output's) on a {tw}×{th} grid, covering the "
            "same picture: the size taken as the grid's resolution only. θ is rebuilt from the "
            "size, so the pixel reads {p}", sw=sw, sh=sh, tw=tw, th=th, p=p), NOTES_THETA),
        _WarpDraft(point_text(*_m_inv_at(m, sw - 1, sh - 1)), T(
            "that is the bottom-right pixel of the {sw}×{sh} warp: right if the output were the "
            "whole warp resized corner to corner, but the canvas is cut or extended, not "
            "resized", sw=sw, sh=sh)),
        _WarpDraft(point_text(*_m_inv_at(m, x * sw / tw, y * sh / th)), T(
            "that scales the pixel index by {sw}/{tw} as a resize would; the rebuilt θ keeps "
            "output pixel ({x}, {y}) at M⁻¹·({x}, {y}) = {p}", sw=sw, tw=tw, x=x, y=y, p=p)),
        _WarpDraft(point_text(*(read - 0.5)), T(
            "half a pixel up and left of {p}: the output pixel's corner mapped back, but "
            "grid_sample samples its centre", p=p)),
    ]
    if preset is None:
        prompt = T("This {tw}×{th} output comes from a {sw}×{sh} input (correct θ, "
                   "align_corners={ac}). Which input point (x, y) does its bottom-right pixel "
                   "({x}, {y}) read?", tw=tw, th=th, sw=sw, sh=sh, ac=ac, x=x, y=y)
    else:
        prompt = T("Set the output size to {preset} ({tw}×{th}) with this M (input {sw}×{sh}, "
                   "correct θ, align_corners={ac}). Which input point (x, y) does the output's "
                   "bottom-right pixel ({x}, {y}) read?", preset=T(preset), tw=tw, th=th,
                   sw=sw, sh=sh, ac=ac, x=x, y=y)
    return _question(
        "output-size", prompt,
        _WarpDraft(p, T("θ is rebuilt from the output size (N_dst), so output pixel ({x}, {y}) "
                        "reads M⁻¹·({x}, {y}) = {p}, as cv2.warpAffine with dsize = ({tw}, {th}) "
                        "does: the size is the canvas", x=x, y=y, p=p, tw=tw, th=th)),
        pool,
        T("`F.affine_grid` with θ rebuilt for {tw}×{th}: pixel ({x}, {y}) reads {p}; the "
          "{sw}×{sh} output's θ on the same grid would read {q}.", tw=tw, th=th, x=x, y=y, p=p,
          sw=sw, sh=sh, q=point_text(*stretched)),
        SIZE_PART,
    )  # fmt: skip


def questions(case: WarpCase, src_size: tuple[int, int],
              shown: WarpComparison) -> tuple[Question, ...]:  # fmt: skip
    """The warp page's questions about its view.

    Args:
        case: the page's :class:`WarpCase` (M, dsize, align_corners, the notes' switch...).
        src_size: the input image's ``(width, height)``.
        shown: the comparison the page drew for ``case`` (its sampling grid is reused).

    Returns:
        ``top-left``, ``notes-shift`` and ``output-size``.

    Raises:
        ValueError: a bad size, a comparison of another output size, or a view where a
            question has fewer than two distinct wrong choices.
    """
    sw, sh = src_size
    src_hw = validate_hw((sh, sw), "the input size")
    if shown.warped.shape[:2] != (case.dsize[1], case.dsize[0]):
        raise ValueError(f"the shown comparison is {shown.warped.shape[1]}×"
                         f"{shown.warped.shape[0]}, not the case's {case.dsize}")  # fmt: skip
    return check_questions((
        top_left_question(case, src_hw, shown),
        notes_shift_question(case, src_hw),
        output_size_question(case, src_hw),
    ))  # fmt: skip
