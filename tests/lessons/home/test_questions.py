"""Home's "predict, then reveal" questions: each right choice is what torch does (computed here
independently of lessons.home.questions), every other choice is contradicted by a run, the notes'
claims are where the choices cite them, and the panel on the page works in both languages."""

from __future__ import annotations

import contextlib
import random
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.notes import NotesRef, quote_is_at
from core.questions import Question
from core.seeding import MAX_SEED
from lessons.home import questions as home_questions
from lessons.home.questions import questions
from testing.apptest import check_solo_predict_flow, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.deterministic_docstring import docstring_sections
from tests.notes_marks import needs_notes

SEEDS = st.integers(min_value=0, max_value=MAX_SEED)
#: The keyed containers of lessons/home/page.py the questions may blur.
PAGE_PARTS = {"home-reproducibility", "home-recipes", "home-gpus-notes"}


def by_key(seed: int) -> dict[str, Question]:
    return {question.key: question for question in questions(seed)}


def answer_text(question: Question) -> str:
    return str(question.correct.text)


def wrong_texts(question: Question) -> list[str]:
    return [str(c.text) for i, c in enumerate(question.choices) if i != question.answer]


@contextlib.contextmanager
def generators_kept():
    """Put Python's, NumPy's and torch's process-wide generators back after a test seeds them."""
    states = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.random.set_rng_state(states[2])


class TestQuestionSet:
    @settings(max_examples=10, deadline=None)
    @given(seed=SEEDS)
    def test_at_least_three_with_distinct_keys_and_page_parts(self, seed):
        found = questions(seed)
        assert len(found) >= 3
        assert len({q.key for q in found}) == len(found)
        for question in found:
            assert question.hides in PAGE_PARTS, question.key
            assert len({str(c.text) for c in question.choices}) == len(question.choices)
            assert str(seed) in question.prompt or question.key == "cuda-device-index"

    @pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, True, 1.5, "3"])
    def test_bad_seed_is_named(self, seed):
        with pytest.raises(ValueError, match=repr(seed) if isinstance(seed, str) else str(seed)):
            questions(seed)

    def test_cheap_enough_to_build_on_open(self):
        import time

        start = time.perf_counter()
        questions(7)
        assert time.perf_counter() - start < 1.0


class TestAnswersMatchTorch:
    @settings(max_examples=5, deadline=None)
    @given(seed=SEEDS)
    def test_cudnn_flag_does_not_cover_scatter_add(self, seed):
        question = by_key(seed)["cudnn-scatter-add"]
        with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True):
            flag = torch.are_deterministic_algorithms_enabled()
        made, raising = docstring_sections()
        op = "torch.Tensor.scatter_add_ when called on a CUDA tensor"
        assert flag is False and op in made and "scatter_add_" not in raising
        assert answer_text(question).startswith("Not guaranteed: only `torch.use_deterministic")
        wrong = wrong_texts(question)
        assert any(t.startswith("Yes: a fixed seed plus `cudnn.deterministic") for t in wrong)
        assert any("raises a `RuntimeError`" in t for t in wrong)  # not in the raise list
        # "the seed fixes the order": scatter_add_ draws nothing from the generator
        before = torch.random.get_rng_state()
        torch.zeros(4).scatter_add_(0, torch.tensor([0, 0, 1]), torch.ones(3))
        assert torch.equal(torch.random.get_rng_state(), before)
        assert any(t.startswith("Yes: the seed fixes the order") for t in wrong)
        assert "enabled() = False`" in question.proof
        assert f"torch {torch.__version__}" in question.proof

    @settings(max_examples=15, deadline=None)
    @given(seed=SEEDS)
    def test_cpu_scatter_add_repeats_but_order_matters(self, seed):
        question = by_key(seed)["cpu-scatter-repeat"]
        g = torch.Generator().manual_seed(seed)
        src = torch.randn(4096, generator=g)
        index = torch.randint(0, 8, (4096,), generator=g)
        first = torch.zeros(8).scatter_add_(0, index, src)
        agree = all(
            torch.equal(first, torch.zeros(8).scatter_add_(0, index, src)) for _ in range(4)
        )
        assert agree and not torch.are_deterministic_algorithms_enabled()
        assert answer_text(question).startswith("Yes: on the CPU `scatter_add_` adds in the same")
        # "any order gives the same bits" is wrong: reversed, the sums move
        backwards = torch.zeros(8).scatter_add_(0, index.flip(0), src.flip(0))
        assert not torch.equal(first, backwards)
        assert any(t.startswith("Yes, and any order") for t in wrong_texts(question))
        assert "agreed bit for bit: True" in question.proof

    @settings(max_examples=10, deadline=None)
    @given(seed=SEEDS)
    def test_init_seeds_repeats_torch_only(self, seed):
        question = by_key(seed)["init-seeds-draws"]
        with generators_kept():
            first, second = self._init_seeds_twice(seed)
        repeats = [a == b for a, b in zip(first, second, strict=True)]
        assert repeats == [False, False, True]
        assert answer_text(question) == "Only torch's: `torch.rand(1)`"
        assert f"gave {first[2]:.6f} then {first[2]:.6f}" in question.proof
        notes_claim = "All three: `init_seeds` is the notes' seeding helper"
        assert {notes_claim, "torch's and NumPy's"} < set(wrong_texts(question))

    @staticmethod
    def _init_seeds_twice(seed: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The three draws after the notes' ``init_seeds(seed)``, twice."""

        def init_seeds(seed=0):  # the notes' 000:32, as written there
            torch.manual_seed(seed)
            torch.cuda.manual_seed(seed)
            torch.cuda.manual_seed_all(seed)

        def draws():
            return random.random(), float(np.random.rand()), float(torch.rand(1))

        init_seeds(seed)
        first = draws()
        init_seeds(seed)
        return first, draws()

    @settings(max_examples=10, deadline=None)
    @given(seed=SEEDS)
    def test_manual_seed_seeds_every_device(self, seed):
        question = by_key(seed)["manual-seed-devices"]
        python_state = random.getstate()
        with (
            generators_kept(),
            mock.patch.object(torch.cuda, "manual_seed_all") as seed_all,
            mock.patch.object(torch.cuda, "manual_seed") as seed_one,
        ):
            torch.manual_seed(seed)
            seeded = torch.initial_seed()
        seed_all.assert_called_once_with(seed)
        seed_one.assert_not_called()
        assert random.getstate() == python_state and seeded == seed
        assert answer_text(question) == "The CPU's and every CUDA device's"
        assert f"Only the CPU's: CUDA needs `torch.cuda.manual_seed_all({seed})` as well" in (
            wrong_texts(question)
        )
        assert f"with [{seed}]" in question.proof

    def test_cuda_means_the_current_device(self):
        question = by_key(0)["cuda-device-index"]
        assert torch.device("cuda").index is None
        assert torch.device("cuda") != torch.device("cuda:0")  # 'cuda' is not short for cuda:0
        assert answer_text(question).startswith("The current device")
        assert "GPU 0 until it is full, then GPU 1" in wrong_texts(question)

    def test_a_run_no_choice_fits_is_a_value_error(self):
        odd = home_questions.CpuScatter(runs_agree=True, reorder_gap=0.0, threads=1)
        with (
            mock.patch.object(home_questions, "cpu_scatter", return_value=odd),
            pytest.raises(ValueError, match="no choice fits"),
        ):
            home_questions.cpu_scatter_repeat(0, False)


#: Each notes reference a choice cites, with a distinctive fragment of the claim it makes there.
NOTES_CLAIMS = {
    "004:22": "应该可以保证每次运行网络的时候相同输入的输出是固定的",
    "000:32": "def init_seeds(seed=0)",
    "004:20": "torch.manual_seed(0)# 为 CPU 设置种子",
    "004:33": "优先使用0号设备,然后使用1号设备",
}


@needs_notes
def test_notes_refs_hold_the_claims():
    cited = {ref for question in questions(0) for ref in question.notes_refs}
    assert cited == set(NOTES_CLAIMS)
    for ref, fragment in NOTES_CLAIMS.items():
        assert quote_is_at(fragment, NotesRef.parse(ref)), ref


# --- The panel on the page ----------------------------------------------------------------------


def test_solo_flow_on_home(open_page):
    at = open_expanders(open_page("home"), "predict.open")
    check_solo_predict_flow(at, questions(at.number_input(key="sidebar.seed").value),
                            only_error=True, only_success=True)  # fmt: skip


def test_questions_in_chinese():
    from tests.app.i18n_checks import untranslated, visible_texts

    at = open_expanders(open_cold("home", {"lang": "zh"}), "predict.open")
    for index in range(len(questions(0))):
        reveal(pick_question(at, index))  # no prediction: the answer, then why
        assert untranslated(visible_texts(at)) == [], index
    body = " ".join(m.value for m in at.markdown)
    assert "`torch.device('cuda').index`" in body  # code stays code in the translation
