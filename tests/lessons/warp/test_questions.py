"""The warp page's "predict, then reveal" questions: each right choice is where F.affine_grid
really sends the pixel (computed here with theta written out from scratch, not with the lesson's
helpers), every other choice is contradicted by that run, the notes' claims are where the
choices cite them, and the panel on the page works in both languages."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from core.images import load_sample
from core.notes import NotesRef, quote_is_at
from core.questions import Question
from lessons.warp.affine import WarpCase, compare_warps
from lessons.warp.matrix_inputs import matrix_from_params
from lessons.warp.questions import MAPPING_PART, SIZE_PART, VERDICT_PART, questions
from testing.apptest import check_solo_predict_flow, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.notes_marks import needs_notes

PAGE_PARTS = {MAPPING_PART, VERDICT_PART, SIZE_PART}


# --- The run, written out here: theta from pixel normalizations, then F.affine_grid -----------


def normalize(w: int, h: int, align_corners: bool) -> np.ndarray:
    """Pixel -> grid_sample coordinates (3x3)."""
    if align_corners:
        return np.array([[2 / (w - 1), 0, -1], [0, 2 / (h - 1), -1], [0, 0, 1.0]])
    return np.array([[2 / w, 0, 1 / w - 1], [0, 2 / h, 1 / h - 1], [0, 0, 1.0]])


def as3x3(m: np.ndarray) -> np.ndarray:
    return np.vstack([m, [0, 0, 1.0]])


def correct_theta(m, src_wh, dst_wh, align_corners) -> np.ndarray:
    n_src, n_dst = normalize(*src_wh, align_corners), normalize(*dst_wh, align_corners)
    return (n_src @ np.linalg.inv(as3x3(m)) @ np.linalg.inv(n_dst))[:2]


def notes_theta(m, src_wh, dst_wh) -> np.ndarray:
    """The notes' affine2theta (000:18) as they write it: N = [[2/W, 0, -1], [0, 2/H, -1]]."""
    (w1, h1), (w2, h2) = src_wh, dst_wh
    warp_wh_2 = np.array([2 / w2, 0, -1, 0, 2 / h2, -1, 0, 0, 1]).reshape(3, 3)
    warp_wh_1 = np.array([w1 / 2, 0, w1 / 2, 0, h1 / 2, h1 / 2, 0, 0, 1]).reshape(3, 3)
    return np.linalg.inv(warp_wh_2 @ as3x3(m) @ warp_wh_1)[:2]


def reads(theta: np.ndarray, src_wh, dst_wh, align_corners) -> np.ndarray:
    """(H_out, W_out, 2) input pixel coordinates F.affine_grid + grid_sample read."""
    th = torch.from_numpy(np.ascontiguousarray(theta)).unsqueeze(0)
    grid = F.affine_grid(th, [1, 1, dst_wh[1], dst_wh[0]], align_corners=align_corners)[0]
    (w, h), g = src_wh, grid.numpy()
    if align_corners:
        return np.stack([(g[..., 0] + 1) * (w - 1) / 2, (g[..., 1] + 1) * (h - 1) / 2], -1)
    return np.stack([((g[..., 0] + 1) * w - 1) / 2, ((g[..., 1] + 1) * h - 1) / 2], -1)


def opencv_reads(m: np.ndarray, dst_wh) -> np.ndarray:
    """(H_out, W_out, 2): M^-1 (x, y), where cv2.warpAffine reads."""
    ys, xs = np.mgrid[0 : dst_wh[1], 0 : dst_wh[0]].astype(np.float64)
    inv = np.linalg.inv(as3x3(m))
    return np.stack([inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2],
                     inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]], -1)  # fmt: skip


# --- Reading the choices back -----------------------------------------------------------------

NUMBER = re.compile(r"-?\d+\.\d+")


def values(text: str) -> np.ndarray:
    return np.array([float(v) for v in NUMBER.findall(str(text))])


def check_right_and_wrong(question: Question, truth: np.ndarray, half_unit: float) -> None:
    """The right choice shows ``truth`` (to its shown digits); every other one is off by more."""
    right = values(question.correct.text)
    assert np.abs(right - truth).max() <= half_unit + 1e-9, (question.key, right, truth)
    for index, choice in enumerate(question.choices):
        if index != question.answer:
            assert np.abs(values(choice.text) - truth).max() > half_unit * 0.8, (
                question.key, choice.text, truth)  # fmt: skip


def view(data, *, img_wh=None) -> tuple[WarpCase, tuple[int, int], object]:
    """A random view: image size, M from the page's sliders, output size and switches."""
    w, h = img_wh or (data.draw(st.integers(3, 24)), data.draw(st.integers(3, 24)))
    m = matrix_from_params(
        data.draw(st.floats(-180, 180)), data.draw(st.floats(0.2, 3.0)),
        data.draw(st.sampled_from([0.0, 0.3, -0.5])), data.draw(st.sampled_from([0.0, 0.2])),
        data.draw(st.floats(-w, w)), data.draw(st.floats(-h, h)),
        center=((w - 1) / 2, (h - 1) / 2),
    )  # fmt: skip
    dsize = data.draw(st.sampled_from([(w, h), (max(2, w // 2), max(2, h // 2)), (w + 5, h)]))
    img = np.random.default_rng(0).integers(0, 256, (h, w, 3), dtype=np.uint8)
    notes, align_corners = data.draw(st.booleans()), data.draw(st.booleans())
    case = WarpCase.of("test", m, dsize, align_corners=align_corners, mode="bilinear",
                       padding_mode="zeros", device="cpu", notes=notes)  # fmt: skip
    shown = compare_warps(img, m, dsize, align_corners=align_corners, notes=notes)
    return case, (w, h), shown


def by_key(found) -> dict[str, Question]:
    return {q.key: q for q in found}


class TestQuestionsMatchTheRun:
    @settings(max_examples=20, deadline=None)
    @given(data=st.data())
    def test_three_questions_with_distinct_keys_and_page_parts(self, data):
        case, src_wh, shown = view(data)
        found = questions(case, src_wh, shown)
        assert len(found) >= 3 and len({q.key for q in found}) == len(found)
        assert {q.hides for q in found} <= PAGE_PARTS
        for question in found:
            texts = [str(c.text) for c in question.choices]
            assert len(set(texts)) == len(texts) >= 3

    @settings(max_examples=20, deadline=None)
    @given(data=st.data())
    def test_top_left_is_where_affine_grid_reads(self, data):
        case, src_wh, shown = view(data)
        m, ac = case.affine, case.align_corners
        theta = (notes_theta(m, src_wh, case.dsize) if case.notes
                 else correct_theta(m, src_wh, case.dsize, ac))  # fmt: skip
        question = by_key(questions(case, src_wh, shown))["top-left"]
        check_right_and_wrong(question, reads(theta, src_wh, case.dsize, ac)[0, 0], 0.005)
        for choice in question.choices:
            if choice.notes:  # the notes' point: their affine2theta, on this view
                theirs = reads(notes_theta(m, src_wh, case.dsize), src_wh, case.dsize, ac)[0, 0]
                assert np.abs(values(choice.text) - theirs).max() <= 0.005 + 1e-9

    @settings(max_examples=20, deadline=None)
    @given(data=st.data())
    def test_notes_shift_is_the_measured_distance(self, data):
        case, src_wh, shown = view(data)
        m = case.affine
        gaps = np.hypot(*np.moveaxis(
            reads(notes_theta(m, src_wh, case.dsize), src_wh, case.dsize, False)
            - opencv_reads(m, case.dsize), -1, 0))  # fmt: skip
        assert gaps.max() - gaps.min() < 1e-6  # one shift for every pixel
        question = by_key(questions(case, src_wh, shown))["notes-shift"]
        check_right_and_wrong(question, np.array([gaps.mean()]), 0.0005)

    @settings(max_examples=20, deadline=None)
    @given(data=st.data())
    def test_output_size_reads_through_the_rebuilt_theta(self, data):
        case, (w, h), shown = view(data)
        m, ac = case.affine, case.align_corners
        target = case.dsize if case.dsize != (w, h) else (round(w / 2), round(h / 2))
        if min(target) < 2:
            target = (2 * w, 2 * h)
        question = by_key(questions(case, (w, h), shown))["output-size"]
        assert f"({target[0] - 1}, {target[1] - 1})" in question.prompt
        truth = reads(correct_theta(m, (w, h), target, ac), (w, h), target, ac)[-1, -1]
        assert np.allclose(truth, opencv_reads(m, target)[-1, -1])  # the size is the canvas
        check_right_and_wrong(question, truth, 0.005)
        (notes_choice,) = [c for c in question.choices if c.notes]  # one fixed theta, resampled
        fixed = reads(correct_theta(m, (w, h), (w, h), ac), (w, h), target, ac)[-1, -1]
        assert np.abs(values(notes_choice.text) - fixed).max() <= 0.005 + 1e-9

    def test_identity_keeps_three_distinct_choices(self):
        img = load_sample("chelsea.png").rgb
        h, w = img.shape[:2]
        case = WarpCase.of("test", np.eye(2, 3), (w, h), align_corners=False, mode="bilinear",
                           padding_mode="zeros", device="cpu", notes=False)  # fmt: skip
        found = by_key(questions(case, (w, h), compare_warps(img, np.eye(2, 3), (w, h))))
        assert found["notes-shift"].correct.text == "0.000 px"  # pure translation: exact
        assert found["top-left"].correct.text == "(0.00, 0.00)"
        assert all(len(q.choices) >= 3 for q in found.values())

    def test_bad_views_are_value_errors_naming_them(self):
        img = np.zeros((6, 8, 3), np.uint8)
        case = WarpCase.of("test", np.eye(2, 3), (8, 6), align_corners=False, mode="bilinear",
                           padding_mode="zeros", device="cpu", notes=False)  # fmt: skip
        shown = compare_warps(img, np.eye(2, 3), (8, 6))
        with pytest.raises(ValueError, match="input size"):
            questions(case, (1, 6), shown)
        with pytest.raises(ValueError, match=r"4×3, not the case's \(8, 6\)"):
            questions(case, (8, 6), compare_warps(img, np.eye(2, 3), (4, 3)))


# --- The notes' claims the choices repeat -----------------------------------------------------

#: A distinctive fragment of each claim a choice cites, by question.
CLAIMS = {
    "top-left": "np.array([2/W2, 0, -1, 0, 2/H2, -1, 0, 0, 1])",
    "notes-shift": "np.array([2/W2, 0, -1, 0, 2/H2, -1, 0, 0, 1])",
    "output-size": "size 代表的是输出网格的分辨率而非 OpenCV 的从输出空间中截取的区域大小 dsize",
}


@needs_notes
def test_notes_refs_hold_the_claims():
    img = load_sample("chelsea.png").rgb
    h, w = img.shape[:2]
    m = matrix_from_params(30.0, 1.0, center=((w - 1) / 2, (h - 1) / 2))
    case = WarpCase.of("test", m, (w, h), align_corners=False, mode="bilinear",
                       padding_mode="zeros", device="cpu", notes=False)  # fmt: skip
    found = questions(case, (w, h), compare_warps(img, m, (w, h)))
    cited = {q.key: q.notes_refs for q in found}
    assert all(cited[key] for key in CLAIMS), cited  # each question offers the notes' claim
    for key, refs in cited.items():
        for ref in refs:
            assert quote_is_at(CLAIMS[key], NotesRef.parse(ref)), (key, ref)


# --- The panel on the page --------------------------------------------------------------------


def page_questions(params: dict[str, str]) -> tuple[Question, ...]:
    """The questions of the page opened with ``params`` (sliders only; chelsea), built here."""
    img = load_sample("chelsea.png").rgb
    h, w = img.shape[:2]
    m = matrix_from_params(float(params.get("warp.angle", 30.0)), 1.0,
                           center=((w - 1) / 2, (h - 1) / 2))  # fmt: skip
    notes = params.get("warp.notes") == "true"
    align_corners = params.get("warp.align_corners") == "true"
    dsize = (round(w / 2), round(h / 2)) if params.get("warp.size_mode") else (w, h)
    case = WarpCase.of("test", m, dsize, align_corners=align_corners, mode="bilinear",
                       padding_mode="zeros", device="cpu", notes=notes)  # fmt: skip
    shown = compare_warps(img, m, dsize, align_corners=align_corners, notes=notes)
    return questions(case, (w, h), shown)


@pytest.mark.parametrize("params", [
    {},
    {"warp.notes": "true", "warp.align_corners": "true", "warp.size_mode": "Half (shrink)",
     "warp.angle": "-45.0"},
], ids=["default", "notes-half-corners"])  # fmt: skip
def test_solo_flow_on_the_warp_page(params):
    at = open_expanders(open_cold("warp", params), "predict.open")
    check_solo_predict_flow(at, page_questions(params), only_error=True)


def test_questions_in_chinese():
    from tests.app.i18n_checks import untranslated, visible_texts

    at = open_expanders(open_cold("warp", {"lang": "zh", "warp.notes": "true"}), "predict.open")
    for index in range(len(page_questions({"warp.notes": "true"}))):
        reveal(pick_question(at, index))  # no prediction: the answer, then why
        assert untranslated(visible_texts(at)) == [], index
    body = " ".join(m.value for m in at.markdown)
    assert "`F.affine_grid`" in body  # code stays code in the translation
