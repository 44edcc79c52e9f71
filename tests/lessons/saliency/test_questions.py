"""The saliency page's "predict, then reveal" questions: each right choice is what torch gives on
the view (maps, the randomised top layer, the notes' backward passes and the notes' scaling,
written out again here with torch and NumPy, not with the lesson's helpers), every other choice
is wrong for that run, the notes' claim is where its choice cites it, and the panel on the page
works in both languages."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.stats import spearmanr

from core.notes import NotesRef, quote_is_at
from core.questions import Question, question_from_state, question_state
from lessons.saliency import maps as S
from lessons.saliency.questions import (
    KEYS,
    NOTES_PART,
    SANITY_PART,
    grey_level_question,
    questions,
)
from lessons.saliency.scaling import compare_scalings
from lessons.saliency.session import classify
from testing.apptest import check_solo_predict_flow, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.notes_marks import needs_notes

#: The choices about how much a map changed and their ranges of the rank correlation (to 3
#: places, as the page prints it), written out again.
BINS = {
    "Not at all: the same map (rank correlation 0.99 or more)": (0.99, math.inf),
    "A little: rank correlation 0.8 to 0.99": (0.8, 0.99),
    "Partly: rank correlation 0.5 to 0.8": (0.5, 0.8),
    "A lot: rank correlation below 0.5": (-math.inf, 0.5),
}
FLAT = "It goes flat: no gradient reaches the pixels"
HIDES = {KEYS[0]: SANITY_PART, KEYS[1]: None, KEYS[2]: NOTES_PART, KEYS[3]: NOTES_PART}
#: What the notes say where a choice cites them (000:2: unless retain_grad() is set, backward()
#: clears the graph's forward buffers).
CLAIMS = {"retain-grad": "如果没有设置 retain_grad() 的话会在 backward() 之后清空计算图的前向缓存"}


def torch_map(model, x, target: int, method: str, objective: str, reduce: str) -> torch.Tensor:
    """The one-pass map, straight from torch.autograd: |grad| (or |x * grad|) over channels."""
    xx = x.detach().clone().requires_grad_(True)
    logits = model(xx)
    if objective == "logit":
        score = logits[0, target]
    else:
        score = F.cross_entropy(logits, torch.tensor([target]))
    (grad,) = torch.autograd.grad(score, xx)
    attr = grad[0].abs() if method == "vanilla" else (grad[0] * x[0]).abs()
    return attr.sum(0) if reduce == "sum" else attr.amax(0)


def with_random_top_layer(model, seed: int):
    """A copy of EfficientNet-Lite0 whose classifier ``_fc`` (its top parameterized layer) is
    re-drawn as Adebayo et al. do: weights He-normal N(0, 2 / fan_in), the bias permuted, from
    one generator seeded with ``seed``, in parameter order."""
    clone = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in clone._fc.parameters():
            if p.ndim >= 2:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=generator) * math.sqrt(2.0 / fan_in))
            else:
                p.copy_(p.flatten()[torch.randperm(p.numel(), generator=generator)])
    return clone


def rank_correlation(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(spearmanr(a.flatten().numpy(), b.flatten().numpy()).statistic)


def check_bins(question: Question, rho: float, new_map: torch.Tensor) -> None:
    """The right choice's range holds ``rho`` (to 3 places), no other range does, and "flat" is
    offered only to be wrong (the new map is not one value)."""
    assert not bool((new_map == new_map.flatten()[0]).all())
    shown = round(rho, 3)
    for index, choice in enumerate(question.choices):
        if choice.text == FLAT:
            assert index != question.answer
            continue
        low, high = BINS[choice.text]
        assert (low <= shown < high) == (index == question.answer), (choice.text, rho)
    assert f"{rho:.3f}" in question.proof


def check_grey_level(question: Question, saliency: np.ndarray) -> None:
    """The notes' recipe written out (000:2): P1..P99 to 0..255, clipped, ``np.uint8``."""
    a = np.asarray(saliency, dtype=np.float32)
    lo, hi = np.percentile(a, 1), np.percentile(a, 99)
    texts = [str(choice.text) for choice in question.choices]
    assert len(set(texts)) == len(texts) >= 3
    if hi == lo:
        assert question.correct.text.startswith("None: P1 equals P99")
        return
    row, col = np.unravel_index(np.argmin(np.abs(a.astype(np.float64) - float(hi) / 2)), a.shape)
    notes = np.uint8(np.clip(255 * (a - lo) / (hi - lo), 0, 255))
    assert f"(row {row}, column {col})" in question.prompt
    assert question.correct.text == f"`{int(notes[row, col])}`"
    levels = [int(text.strip("`")) for text in texts]
    assert levels == sorted(levels) and all(0 <= level <= 255 for level in levels)
    assert question.hides == NOTES_PART


# --- The questions, against torch --------------------------------------------------------------


@st.composite
def views(draw):
    method = draw(st.sampled_from(["vanilla", "grad_x_input", "smoothgrad"]))
    objective = draw(st.sampled_from(["logit", "loss"]))
    reduce = draw(st.sampled_from(["sum", "max"]))
    target = draw(st.sampled_from([285, 282, 281, 728]))
    return method, objective, reduce, target, draw(st.integers(0, 5))


def ask(loaded, x, method: str, objective: str, reduce: str, target: int, seed: int):
    """The page's path for one view: its map (SmoothGrad with 2 samples), top-5 and scalings."""
    shown = S.compute_saliency(loaded.model, x, target, method, objective=objective,
                               reduce=reduce, n=2, seed=seed)  # fmt: skip
    top5, _classes = classify(loaded, x)
    return shown, top5, questions(loaded, x, top5, shown, compare_scalings(shown.saliency),
                                  seed=seed)  # fmt: skip


class TestAgainstTorch:
    @settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(view=views())
    def test_each_right_choice_is_what_torch_gives(self, lite0, x_cat, view):
        method, objective, reduce, target, seed = view
        shown, top5, asked = ask(lite0, x_cat, *view)
        assert [q.key for q in asked] == list(KEYS)
        by_key = {q.key: q for q in asked}
        used = method if method in ("vanilla", "grad_x_input") else "vanilla"
        model = lite0.model
        before = torch_map(model, x_cat, target, used, objective, reduce)
        # The top layer randomised: the sanity check's first point.
        after = torch_map(with_random_top_layer(model, seed), x_cat, target, used, objective,
                          reduce)  # fmt: skip
        check_bins(by_key["top-layer-randomised"], rank_correlation(before, after), after)
        # Another class: the runner-up for the predicted class, else the predicted class.
        other = top5[1][0] if target == top5[0][0] else top5[0][0]
        assert f"class {other} (" in by_key["other-class"].prompt
        other_map = torch_map(model, x_cat, other, used, objective, reduce)
        check_bins(by_key["other-class"], rank_correlation(before, other_map), other_map)
        check_grey_level(by_key["notes-grey-level"], shown.saliency.numpy())
        for question in asked:
            assert question.hides == HIDES[question.key]
            assert len(question.choices) >= 3
            # A class gets it as store state: every value JSON, every text back as it was.
            slug, back = question_from_state(question_state("saliency", question))
            assert slug == "saliency" and back == question

    def test_a_second_backward_raises_with_retain_grad_as_the_notes_write_it(self, lite0, x_cat):
        xx = x_cat.clone().requires_grad_(True)
        y = lite0.model(xx)
        loss = F.cross_entropy(y, torch.tensor([285]))
        y.retain_grad()
        loss.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()
        assert y.grad is not None
        xx.grad = None
        with pytest.raises(RuntimeError, match="second time"):
            loss.backward()
        _shown, _top5, asked = ask(lite0, x_cat, "vanilla", "logit", "sum", 285, 0)
        question = {q.key: q for q in asked}["retain-grad"]
        assert question.correct.text.startswith("It raises `RuntimeError`")
        assert "Trying to backward through the graph a second time" in question.proof
        # Every other choice says the second call works: the run above says it raises.
        assert all(" works" in c.text for c in question.choices if c is not question.correct)
        assert "2.00×" in question.proof  # with retain_graph=True, gradients add up

    def test_prompts_follow_the_view(self, lite0, x_cat):
        _s, _t, cat = ask(lite0, x_cat, "vanilla", "logit", "sum", 285, 0)
        _s, _t, other = ask(lite0, x_cat, "grad_x_input", "logit", "max", 282, 3)
        for mine, theirs in zip(cat, other, strict=True):
            assert mine.key == theirs.key and mine.prompt != theirs.prompt
        assert "(seed 3)" in other[0].prompt and "Gradient x input" in other[0].prompt
        assert "class 285 (Egyptian cat) instead of class 282" in other[1].prompt

    def test_after_smoothgrad_the_map_questions_use_the_vanilla_gradient(self, lite0, x_cat):
        _s, _t, asked = ask(lite0, x_cat, "smoothgrad", "logit", "sum", 285, 0)
        assert all("Vanilla gradient map" in q.prompt for q in asked[:2])

    def test_cheap_enough_to_build_on_open(self, lite0, x_cat):
        """Three images through the model after a one-pass map (the randomised copy, the other
        class, the notes' backward passes); one more after SmoothGrad (its vanilla map)."""
        calls = []
        hook = lite0.model.register_forward_hook(lambda *_: calls.append(1))
        try:
            for method, images in (("vanilla", 3), ("smoothgrad", 4)):
                shown = S.compute_saliency(lite0.model, x_cat, 285, method, n=2)
                top5, _classes = classify(lite0, x_cat)
                calls.clear()
                questions(lite0, x_cat, top5, shown, compare_scalings(shown.saliency), seed=0)
                assert len(calls) == images, method
        finally:
            hook.remove()

    def test_bad_input_is_named(self, lite0, x_cat):
        shown = S.compute_saliency(lite0.model, x_cat, 285)
        comparison = compare_scalings(shown.saliency)
        with pytest.raises(ValueError, match=r"\(1, C, H, W\)"):
            questions(lite0, x_cat[0], [(285, "cat", 0.8)], shown, comparison, seed=0)
        with pytest.raises(ValueError, match="seed is an int, got '0'"):
            questions(lite0, x_cat, [(285, "cat", 0.8)], shown, comparison, seed="0")
        with pytest.raises(ValueError, match="top5 holds"):
            questions(lite0, x_cat, [], shown, comparison, seed=0)


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.float32, (6, 7), elements=st.sampled_from([0.0, 0.25, 1.0, 3.5, 7.0]))
       | hnp.arrays(np.float32, (6, 7), elements=st.floats(0, 10, width=32)))  # fmt: skip
def test_grey_level_is_the_notes_scaling_on_any_map(saliency):
    question = grey_level_question(saliency, compare_scalings(saliency))
    check_grey_level(question, saliency)


def test_grey_level_on_a_flat_map_has_no_level():
    saliency = np.full((5, 5), 0.5, dtype=np.float32)
    question = grey_level_question(saliency, compare_scalings(saliency))
    check_grey_level(question, saliency)
    assert "P1 = P99 = 0.5" in question.proof
    with pytest.raises(ValueError, match=r"\(5, 5\)"):
        grey_level_question(saliency[:4], compare_scalings(saliency))


@needs_notes
def test_notes_refs_hold_the_claims(lite0, x_cat):
    _s, _t, asked = ask(lite0, x_cat, "vanilla", "logit", "sum", 285, 0)
    cited = [(q.key, c) for q in asked for c in q.choices if c.notes]
    assert [key for key, _c in cited] == list(CLAIMS)
    for key, choice in cited:
        assert quote_is_at(CLAIMS[key], NotesRef.parse(choice.notes)), key
        assert choice is not {q.key: q for q in asked}[key].correct


# --- The panel on the page ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def page():
    at = open_cold("saliency")
    assert not at.exception, at.exception
    return open_expanders(at, "predict.open")


def test_solo_flow_on_the_page(page, lite0, x_cat):
    at = page
    seed = int(at.number_input(key="sidebar.seed").value)
    _s, _t, expected = ask(lite0, x_cat, "vanilla", "logit", "sum", 285, seed)
    assert any(question.hides is None for question in expected)  # the flow covers "hides nothing"
    check_solo_predict_flow(at, expected)


def test_questions_in_chinese():
    from tests.app.i18n_checks import untranslated, visible_texts

    prompts = ("合理性检验的第一步", "其他一切不变", "第二次 `loss.backward()` 会怎样？",
               "笔记的缩放 `np.uint8(cvglue.scale_min_max(s, 0, 255, percentile=99))`")  # fmt: skip
    at = open_expanders(open_cold("saliency", {"lang": "zh"}), "predict.open")
    for index, prompt in enumerate(prompts):
        reveal(pick_question(at, index))  # no prediction: the answer, then why
        assert untranslated(visible_texts(at)) == [], index
        body = " ".join(m.value for m in at.markdown)
        assert prompt in body and "正确：" in body, index  # code stays code in the translation
