"""The Flow page's "predict, then reveal" questions: each right choice is what the fill really
does on the view (recomputed here by brute force over the windows, by the notes' own
``gradual_mean_pytorch`` and by their NumPy formula at 000:77, not with the lesson's
helpers), every other choice is contradicted by that run, the notes' claims are where the
choices cite them, and the panel on the page works in both languages."""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.notes import NotesRef, quote_is_at
from core.questions import Question
from lessons.flow.fill import METHOD_CV2, FlowCase, FlowSpec, build_flow, run_method
from lessons.flow.notes_checks import NOTES_GRADUAL_MEAN_PYTORCH
from lessons.flow.questions import KEYS, NOTES_PART, WINDOWS_PART, questions
from testing.apptest import check_solo_predict_flow, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.notes_marks import needs_notes

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

WINDOW_CHOICES = (3, 5, 9, 17, 33)


# --- The run, written out here ------------------------------------------------------------------


def notes_function():
    """The notes' ``gradual_mean_pytorch`` (000:80) from its printed text, run here as code."""
    namespace: dict[str, object] = {}
    exec(compile(NOTES_GRADUAL_MEAN_PYTORCH, "notes-000-80", "exec"), namespace)
    return namespace["gradual_mean_pytorch"]


GRADUAL_MEAN_PYTORCH = notes_function()


def notes_fill(flow: np.ndarray, max_window: int) -> np.ndarray:
    """(H, W, C): ``flow`` filled by the notes' own function with ``max_window`` (2**k + 1)."""
    x = torch.from_numpy(np.ascontiguousarray(flow.transpose(2, 0, 1)))[None]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("error")  # an aligned size: the notes' function must not warn
        return GRADUAL_MEAN_PYTORCH(x, max_window)[0].numpy().transpose(1, 2, 0)


def windows_of(max_window: int) -> list[int]:
    return [2**j + 1 for j in range(1, int(math.log2(max_window - 1)) + 1)]


def window_values(flow: np.ndarray, y: int, x: int, c: int, k: int) -> np.ndarray:
    """Channel ``c`` of the ``k x k`` window centred on ``(y, x)``, cut at the frame."""
    r = k // 2
    return flow[max(0, y - r): y + r + 1, max(0, x - r): x + r + 1, c]


def distance(flow: np.ndarray, y: int, x: int, c: int) -> int:
    """The largest of |dy|, |dx| to the nearest valid value of channel ``c`` (by brute force)."""
    ys, xs = np.nonzero(np.isfinite(flow[..., c]))
    if ys.size == 0:  # a channel with no valid value: no window ever reaches it
        return flow.shape[0] + flow.shape[1]
    return int(np.maximum(np.abs(ys - y), np.abs(xs - x)).min())


def nan_pixels(filled: np.ndarray) -> int:
    return int(np.count_nonzero(np.isnan(filled).any(axis=2)))


def view_of(flow: np.ndarray, max_window: int) -> tuple[FlowCase, object]:
    """The case the page would build from ``flow`` and its main fill (the cv2 backend)."""
    case = FlowCase(flow, None, "none", np.isnan(flow).any(axis=2))
    return case, run_method(case, METHOD_CV2, max_window=max_window).fill


@st.composite
def flows(draw) -> np.ndarray:
    """A small (H, W, 2) flow with random holes, a hole block, and per channel or shared."""
    h, w = draw(st.integers(4, 36)), draw(st.integers(4, 36))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    flow = (rng.standard_normal((h, w, 2)) * 3).astype(np.float32)
    p, shared = draw(st.floats(0.0, 0.9)), draw(st.booleans())
    holes = rng.random((h, w) if shared else (h, w, 2)) < p
    flow[holes] = np.nan
    bh, bw = draw(st.integers(0, h)), draw(st.integers(0, w))  # a block, for distant holes
    y0, x0 = draw(st.integers(0, h - bh)), draw(st.integers(0, w - bw))
    flow[y0: y0 + bh, x0: x0 + bw] = np.nan
    if not np.isfinite(flow).any():
        flow[draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))] = 1.5
    return flow


# --- Reading the choices back -------------------------------------------------------------------


def count_of(text: str) -> int:
    """The number a ``unfilled`` choice shows ("1,234")."""
    return int(str(text).replace(",", ""))


SCALES = re.compile(r"(\d+) of (\d+)\Z|all (\d+)\Z|none: it stays NaN\Z")


def scales_of(text: str) -> int:
    """How many window means a ``scales`` choice says: "3 of 5", "all 5", or none (0)."""
    found = SCALES.match(str(text))
    assert found, text
    return int(found[1] or found[3] or 0)


def by_key(found) -> dict[str, Question]:
    return {question.key: question for question in found}


def check_unfilled(question: Question, flow: np.ndarray, max_window: int) -> None:
    truth = nan_pixels(notes_fill(flow, max_window))
    assert count_of(question.correct.text) == truth, (question.correct, truth)
    for index, choice in enumerate(question.choices):
        if index == question.answer:
            continue
        value = count_of(choice.text)
        assert value != truth, choice
        other = re.search(r"with `max_window=(\d+)`", str(choice.why))
        if other:  # a count for another window set: the notes' function gives it there
            assert value == nan_pixels(notes_fill(flow, int(other[1]))), choice
        elif "u and v separately" in str(choice.why):
            assert value == int(np.count_nonzero(np.isnan(notes_fill(flow, max_window))))
        elif "every hole pixel" in str(choice.why):
            assert value == nan_pixels(flow)
        else:
            assert value == 0, choice


def check_scales(question: Question, flow: np.ndarray, filled: np.ndarray,
                 max_window: int) -> None:  # fmt: skip
    found = re.search(r"Hole pixel \(row (\d+), column (\d+)\) is (\d+) px from the nearest "
                      r"valid `([uv])` flow", str(question.prompt))  # fmt: skip
    assert found, question.prompt
    y, x, d, c = int(found[1]), int(found[2]), int(found[3]), "uv".index(found[4])
    assert math.isnan(flow[y, x, c]) and distance(flow, y, x, c) == d
    windows = windows_of(max_window)
    # the deepest hole value the windows still reach: none farther is filled
    holes = np.argwhere(np.isnan(flow))
    reached = [distance(flow, *p) for p in holes if distance(flow, *p) <= max_window // 2]
    assert d == max(reached)
    means = [np.nanmean(values) for k in windows
             if np.isfinite(values := window_values(flow, y, x, c, k)).any()]
    truth = len(means)
    assert scales_of(question.correct.text) == truth, (question.correct, truth)
    # the notes' formula (000:77): the mean of the window means that have one, here
    assert filled[y, x, c] == pytest.approx(np.mean(means), rel=1e-4, abs=1e-4)
    assert notes_fill(flow, max_window)[y, x, c] == pytest.approx(np.mean(means), rel=1e-4,
                                                                  abs=1e-4)  # fmt: skip
    for index, choice in enumerate(question.choices):
        if index != question.answer:
            assert scales_of(choice.text) != truth, choice
        if choice.notes:  # the notes' claim: every window's mean is averaged
            assert scales_of(choice.text) == len(windows) > truth


def notes_outcome(max_window_size: int) -> tuple[int | None, str]:
    """``(largest window, warning)`` the notes' function gives on a 1x2x6x6 tensor with one NaN,
    or ``(None, error)`` when it fails; the largest window from their own formula at 000:80."""
    x = torch.arange(72, dtype=torch.float32).reshape(1, 2, 6, 6)
    x[0, :, 2, 3] = float("nan")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = GRADUAL_MEAN_PYTORCH(x, max_window_size)
        except IndexError as error:
            assert int(np.log2(max_window_size - 1)) == 0
            return None, str(error)
    assert not torch.isnan(out).any()
    largest = 2 ** int(np.log2(max_window_size - 1)) + 1
    (said,) = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert said.endswith(f"max filter size {largest}")
    return largest, said


def check_notes(question: Question, max_window: int) -> None:
    asked = max_window - 1
    assert f"max_window_size={asked})" in str(question.prompt)
    largest, said = notes_outcome(asked)
    right = str(question.correct.text)
    if largest is None:
        assert "IndexError" in right and said in str(question.proof)
    else:
        assert f"`{largest}x{largest}`" in right and said in str(question.correct.why)
    for index, choice in enumerate(question.choices):
        if index == question.answer:
            continue
        text = str(choice.text)
        assert "IndexError" not in text and f"`{largest}x{largest}`" not in text, text
        if "ValueError" in text:  # the app's answer, not the notes'
            with pytest.raises(ValueError, match="2\\*\\*k \\+ 1"):
                run_method(view_of(np.ones((4, 4, 2), np.float32), 3)[0], METHOD_CV2,
                           max_window=asked)


# --- The questions match the run ----------------------------------------------------------------


class TestQuestionsMatchTheFill:
    @settings(max_examples=25, deadline=None)
    @given(flow=flows(), max_window=st.sampled_from(WINDOW_CHOICES))
    def test_each_right_answer_is_the_fills_and_the_wrong_ones_are_not(self, flow, max_window):
        case, fill = view_of(flow, max_window)
        holes = np.argwhere(np.isnan(flow))
        if not any(distance(flow, *p) <= max_window // 2 for p in holes):
            with pytest.raises(ValueError, match="no hole next to valid flow"):
                questions(case, fill, max_window)
            return
        found = questions(case, fill, max_window)
        assert tuple(q.key for q in found) == KEYS
        assert [q.hides for q in found] == [WINDOWS_PART, WINDOWS_PART, NOTES_PART]
        for question in found:
            assert 2 <= len(question.choices) <= 4
            assert len({str(c.text) for c in question.choices}) == len(question.choices)
        asked = by_key(found)
        check_unfilled(asked["unfilled"], flow, max_window)
        check_scales(asked["scales"], flow, np.asarray(fill.filled), max_window)
        check_notes(asked["notes-max-window"], max_window)

    @pytest.mark.parametrize("max_window", WINDOW_CHOICES)
    def test_notes_question_for_every_window_the_page_offers(self, max_window):
        flow = np.ones((6, 6, 2), np.float32)
        flow[2, 3] = np.nan
        check_notes(by_key(questions(*view_of(flow, max_window), max_window))["notes-max-window"],
                    max_window)

    def test_a_band_the_largest_window_misses(self):
        """The lesson's 40 px border band at 33: the inner part stays NaN, and the question says
        how much, against every hole pixel, the NaN values and the next window sizes."""
        case = build_flow(FlowSpec(noise=0.2, mask="border", hole_size=40))
        fill = run_method(case, METHOD_CV2, max_window=33).fill
        question = by_key(questions(case, fill, 33))["unfilled"]
        truth = nan_pixels(np.asarray(fill.filled))
        assert truth > 0 and count_of(question.correct.text) == truth
        assert len(question.choices) == 4
        scales = by_key(questions(case, fill, 33))["scales"]
        assert scales_of(scales.correct.text) == 1  # 16 px from valid flow: only 33x33 reaches

    def test_bad_views_are_value_errors_naming_them(self):
        flow = np.ones((6, 6, 2), np.float32)
        flow[2, 3] = np.nan
        case, fill = view_of(flow, 5)
        with pytest.raises(ValueError, match="got 32"):
            questions(case, fill, 32)
        with pytest.raises(ValueError, match="not those of max_window=9"):
            questions(case, fill, 9)
        other = FlowCase(np.ones((5, 6, 2), np.float32), None, "none", np.zeros((5, 6), bool))
        with pytest.raises(ValueError, match=r"shape \(6, 6, 2\) is not the flow's"):
            questions(other, fill, 5)
        full = np.ones((6, 6, 2), np.float32)
        with pytest.raises(ValueError, match="no hole next to valid flow"):
            questions(*view_of(full, 5), 5)


# --- The notes' claims the choices repeat -------------------------------------------------------

#: Each notes reference a choice cites, with a distinctive fragment of the claim it makes there.
NOTES_CLAIMS = {
    "000:77": "这些均值可以看作一个点的运动",
    "000:80": "max_window_size: an integer specifying the maximum size of the filter window",
}


@needs_notes
def test_notes_refs_hold_the_claims():
    case = build_flow(FlowSpec(noise=0.2, mask="border", hole_size=40))
    fill = run_method(case, METHOD_CV2, max_window=33).fill
    cited = {ref for question in questions(case, fill, 33) for ref in question.notes_refs}
    assert cited == set(NOTES_CLAIMS)
    for ref, fragment in NOTES_CLAIMS.items():
        assert quote_is_at(fragment, NotesRef.parse(ref)), ref
    # the prompt's "32 for 33": the notes' NumPy loop defaults to 32, their avg_pool2d one to 33
    assert quote_is_at("def gradual_mean(raw_array, nan_mask=None, max_window_size=32)",
                       NotesRef.parse("000:79"))  # fmt: skip
    assert quote_is_at("def gradual_mean_pytorch(raw_tensor, max_window_size=33)",
                       NotesRef.parse("000:80"))  # fmt: skip


# --- The panel on the page ----------------------------------------------------------------------


def page_questions(at) -> tuple[Question, ...]:
    """The questions of the view the page opened on (its defaults and the sidebar's seed)."""
    seed = int(at.number_input(key="sidebar.seed").value)
    case = build_flow(FlowSpec(noise=0.2, seed=seed % 2**31))
    return questions(case, run_method(case, METHOD_CV2, max_window=33).fill, 33)


def test_solo_flow_on_the_page():
    at = open_expanders(open_cold("flow"), "predict.open")
    expected = page_questions(at)
    assert all(question.hides for question in expected)  # each blurs a part of the page
    check_solo_predict_flow(at, expected)


def test_questions_in_chinese():
    from tests.app.i18n_checks import untranslated, visible_texts

    at = open_expanders(open_cold("flow", {"lang": "zh"}), "predict.open")
    for index in range(len(KEYS)):
        pick_question(at, index)
        assert untranslated(visible_texts(at)) == [], index
        reveal(at)  # no prediction: the answer, then why
        assert untranslated(visible_texts(at)) == [], index
    body = " ".join(m.value for m in at.markdown)
    assert "`gradual_mean_pytorch(x, max_window_size=32)`" in body  # code stays code
