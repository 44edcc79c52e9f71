"""The BatchNorm page's "predict, then reveal" questions: each right choice is what the real
``nn.BatchNorm1d/2d`` gives on the view (computed here with torch, not with the lesson's
helpers), every other choice is farther from it, the notes' claims are where the choices cite
them, and the panel on the page works in both languages."""

from __future__ import annotations

import math
import re
import time

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from core.notes import NotesRef, quote_is_at
from core.questions import Question
from lessons.batchnorm import layer as bn
from lessons.batchnorm import modes
from lessons.batchnorm.questions import MODES_PART, RUNNING_PART, questions
from lessons.batchnorm.stream import Stream, sample_batch, stream_from_text
from testing.apptest import check_solo_predict_flow, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.notes_marks import needs_notes

KEYS = ("eval-mean", "running-mean", "train-variance")
#: A choice's number ends its text: "`running_mean[0]` = 1.99".
NUMBER = re.compile(r" = (-?(?:\d+\.?\d*(?:e[-+]\d+)?|nan|inf))\Z")


def shown_run(config: bn.SimConfig, steps: int, channel: int) -> modes.ShownRun:
    """The view as the page builds it (lessons/batchnorm/page.py): the run, the shown batch,
    and train() vs eval() on it when train() can run."""
    history = bn.simulate_config(config, steps)
    one_value = bn.values_per_channel(config.shape) == 1
    comparison = None if one_value else modes.compare_run(config, steps, history.state)
    return modes.ShownRun(config, history, channel, len(config.spatial), 1,
                          "one value" if one_value else None, comparison,
                          modes.shown_batch(config, steps))


def number(text: str) -> float | None:
    found = NUMBER.search(str(text))
    return float(found.group(1)) if found else None


def torch_module(config: bn.SimConfig, steps: int) -> nn.Module:
    """A real nn.BatchNorm trained on the page's first ``steps`` batches."""
    module = (nn.BatchNorm2d if len(config.spatial) == 2 else nn.BatchNorm1d)(
        config.channels, eps=config.eps, momentum=config.momentum, affine=config.affine,
        track_running_stats=config.track_running_stats).train()
    with torch.no_grad():
        for k in range(steps):
            module(sample_batch(config.stream, k, config.batch_size, config.spatial,
                                seed=config.seed))
    return module


def check_number(question: Question, expected: float) -> None:
    """The right choice shows ``expected`` (to its printed digits); every other number is
    farther from it, and no choice shows the right number twice."""
    right = number(question.correct.text)
    assert right is not None, question.correct.text
    others = [number(c.text) for i, c in enumerate(question.choices) if i != question.answer]
    if math.isnan(expected):
        assert math.isnan(right)
        assert not any(w is not None and math.isnan(w) for w in others), question.choices
        return
    assert right == pytest.approx(expected, rel=5e-3, abs=1e-5), (question.key, right, expected)
    for wrong in others:
        if wrong is not None and not math.isnan(wrong):  # a NaN is never the finite answer
            assert abs(wrong - expected) > abs(right - expected), (question.key, wrong, right)


def check_not_a_number(question: Question, fragment: str) -> None:
    """The right choice is a text (torch raised, or no buffer), every other one a different
    text or a number."""
    assert number(question.correct.text) is None and fragment in question.correct.text


@st.composite
def views(draw):
    """A page view: the stream, the input's shape, the module's flags, the steps and channel."""
    channels = draw(st.integers(1, 3))
    mean = tuple(draw(st.floats(-5, 5, allow_nan=False)) for _ in range(channels))
    std = tuple(draw(st.floats(0.2, 4)) for _ in range(channels))
    shift = draw(st.none() | st.integers(0, 8))
    stream = Stream(mean, std, shift_step=shift,
                    shifted_mean=None if shift is None else tuple(m + 3 for m in mean),
                    nan_step=draw(st.none() | st.integers(0, 10)))
    dims = draw(st.integers(0, 2))
    spatial = (draw(st.integers(1, 3)),) * dims
    config = bn.SimConfig(
        stream=stream, batch_size=draw(st.integers(1, 6)), spatial=spatial,
        momentum=draw(st.sampled_from([None, 0.0, 0.1, 0.5, 1.0]) | st.floats(0.01, 0.99)),
        eps=draw(st.sampled_from([1e-5, 1e-3, 0.1])), affine=draw(st.booleans()),
        track_running_stats=draw(st.booleans()), seed=draw(st.integers(0, 1000)))
    one_value = bn.values_per_channel(config.shape) == 1
    steps = 0 if one_value else draw(st.integers(0, 15))  # the page trains no step then
    return config, steps, draw(st.integers(0, channels - 1))


def by_key(run: modes.ShownRun) -> dict[str, Question]:
    return {question.key: question for question in questions(run)}


DEFAULT = bn.SimConfig(stream_from_text("2, -1, 0.5", "3, 0.5, 1", 3), batch_size=16,
                       spatial=(4, 4), seed=0)


class TestQuestionSet:
    @settings(max_examples=20, deadline=None)
    @given(view=views())
    def test_three_questions_with_distinct_keys_choices_and_page_parts(self, view):
        config, steps, channel = view
        found = questions(shown_run(config, steps, channel))
        assert tuple(q.key for q in found) == KEYS
        for question in found:
            assert len({str(c.text) for c in question.choices}) == len(question.choices)
            assert len(question.choices) >= 2
            assert question.hides in (MODES_PART, RUNNING_PART, None)
        if bn.values_per_channel(config.shape) > 1:  # section 1 is drawn: it hides there
            assert [q.hides for q in found] == [MODES_PART, RUNNING_PART, MODES_PART]

    def test_prompt_follows_the_view(self):
        one = by_key(shown_run(DEFAULT, 60, 0))["running-mean"].prompt
        other = by_key(shown_run(DEFAULT, 20, 2))["running-mean"].prompt
        assert "After 60 training steps with momentum=0.1" in one and "`running_mean[0]`" in one
        assert "After 20 training steps" in other and "`running_mean[2]`" in other

    def test_default_view_offers_the_notes_misconceptions_and_near_misses(self):
        found = by_key(shown_run(DEFAULT, 60, 0))
        assert len(found["running-mean"].choices) == 5
        assert any(str(c.text).startswith("the mean of all 60 batches")
                   for c in found["running-mean"].choices)
        texts = [str(c.text) for c in found["train-variance"].choices]
        assert any(t.startswith("the batch's unbiased variance") for t in texts)  # near miss
        assert any(t.startswith("`running_var[0]`") for t in texts)  # the notes' Var[x]

    def test_bad_channel_is_named(self):
        run = shown_run(DEFAULT, 2, 0)
        bad = modes.ShownRun(run.config, run.history, 3, 2, 4, None, run.comparison, run.x)
        with pytest.raises(ValueError, match="got 3"):
            questions(bad)

    def test_cheap_enough_to_build_on_open(self):
        big = bn.SimConfig(DEFAULT.stream, batch_size=256, spatial=(18, 18))  # ~248k values
        run = shown_run(big, 3, 1)
        start = time.perf_counter()
        questions(run)
        assert time.perf_counter() - start < 1.0


class TestAnswersMatchTorch:
    @settings(max_examples=20, deadline=None)
    @given(view=views())
    def test_each_right_choice_is_what_nn_batchnorm_gives(self, view):
        config, steps, c = view
        found = by_key(shown_run(config, steps, c))
        module = torch_module(config, steps)
        x = sample_batch(config.stream, max(steps - 1, 0), config.batch_size, config.spatial,
                         seed=config.seed)
        values = x.double().transpose(0, 1)[c].flatten()
        one_value = values.numel() == 1

        # running-mean: the trained buffer, or no buffer at all
        if config.track_running_stats:
            check_number(found["running-mean"], float(module.running_mean[c]))
        else:
            assert module.running_mean is None
            check_not_a_number(found["running-mean"], "`None`")

        # eval-mean: eval() subtracts running_mean (checked on torch's own output), or the batch's
        module.eval()
        if config.track_running_stats:
            with torch.no_grad():
                y = module(x)
            rm, rv = module.running_mean.double()[c], module.running_var.double()[c]
            gamma = module.weight.double()[c] if config.affine else 1.0
            beta = module.bias.double()[c] if config.affine else 0.0
            by_hand = (x.double().transpose(0, 1)[c] - rm) / torch.sqrt(rv + config.eps) * gamma \
                + beta
            if torch.isfinite(rm):
                assert torch.allclose(y.double().transpose(0, 1)[c], by_hand, atol=1e-3,
                                      rtol=1e-3)
            check_number(found["eval-mean"], float(module.running_mean[c]))
        elif one_value:
            with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
                module(x)
            check_not_a_number(found["eval-mean"], "raises")
        else:
            check_number(found["eval-mean"], float(values.mean()))

        # train-variance: the batch's biased variance, or torch refuses one value per channel
        module.train()
        if one_value:
            with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
                module(x)
            check_not_a_number(found["train-variance"], "raises")
        else:
            with torch.no_grad():
                y = module(x).double().transpose(0, 1)[c]
            biased = float(values.var(correction=0))
            if math.isfinite(biased):  # the output's spread is the biased variance's
                want = math.sqrt(biased / (biased + config.eps))
                assert float(y.std(correction=0)) == pytest.approx(want, rel=1e-3, abs=1e-4)
            check_number(found["train-variance"], biased)

    def test_momentum_one_offers_the_batch_mean_once(self):
        """momentum=1 makes running_mean the last (shown) batch's mean: one choice, not two."""
        config = bn.SimConfig(DEFAULT.stream, batch_size=16, spatial=(4, 4), momentum=1.0)
        question = by_key(shown_run(config, 5, 0))["eval-mean"]
        assert not any("this batch's own mean" in str(c.text) for c in question.choices)
        assert str(question.correct.text).startswith("`running_mean[0]`")


#: Each notes reference a choice cites, with a distinctive fragment of the claim it makes there.
NOTES_CLAIMS = {
    "002:783": "running_mean 和 running_var 会跟踪整个训练过程中所有 mini-batch 的统计特性",
    "002:789": ".train()状态时, BatchNorm2d 的 track_running_stats=False时, running_mean 和 "
               "running_var 仅仅依赖于当前 mini-batch 的统计特性",
    "002:791": ".eval()状态时, BatchNorm2d 的 track_running_stats=False时, running_mean 和 "
               "running_var 仅仅依赖于当前 mini-batch 的统计特性",
    "002:804": "$E[x]$ and $Var[x]$ are the computed mean running_mean and variance running_var "
               "of this layer",
}


@needs_notes
def test_notes_refs_hold_the_claims():
    untracked = bn.SimConfig(DEFAULT.stream, track_running_stats=False)
    cited = {ref for config in (DEFAULT, untracked)
             for question in questions(shown_run(config, 30, 1)) for ref in question.notes_refs}
    assert cited == set(NOTES_CLAIMS)
    for ref, fragment in NOTES_CLAIMS.items():
        assert quote_is_at(fragment, NotesRef.parse(ref)), ref


# --- The panel on the page ----------------------------------------------------------------------


def page_questions(at) -> tuple[Question, ...]:
    """The questions of the view the page opened on (its defaults and the sidebar's seed)."""
    config = bn.SimConfig(DEFAULT.stream, batch_size=16, spatial=(4, 4),
                          seed=int(at.number_input(key="sidebar.seed").value))
    return questions(shown_run(config, int(at.session_state["batchnorm.steps"]), 0))


@pytest.fixture(scope="module")
def page():
    at = open_cold("batchnorm")
    assert not at.exception, at.exception
    return open_expanders(at, "predict.open")


def test_solo_flow_on_the_page(page):
    expected = page_questions(page)
    assert all(question.hides for question in expected)  # section 1 is drawn: each blurs a part
    check_solo_predict_flow(page, expected)


def test_questions_in_chinese():
    from tests.app.i18n_checks import untranslated, visible_texts

    at = open_expanders(open_cold("batchnorm", {"lang": "zh"}), "predict.open")
    for index in range(len(KEYS)):
        reveal(pick_question(at, index))  # no prediction: the answer, then why
        assert untranslated(visible_texts(at)) == [], index
    body = " ".join(m.value for m in at.markdown)
    assert "`running_var[0]`" in body  # code stays code in the translation
