"""Tests for core/seeding.py: one seed makes random, numpy and torch draws repeatable."""

from __future__ import annotations

import doctest
import random
import re

import numpy as np
import pytest
import torch

from core import seeding
from core.notes import NotesRef, normalise_notes_text, notes_lines
from core.seeding import MAX_SEED, seed_everything
from tests.deterministic_docstring import docstring_sections
from tests.notes_marks import needs_notes


def draws() -> tuple[float, list[float], list[float]]:
    return random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist()


class TestSeedEverything:
    def test_smoke(self):
        assert seed_everything(0) == 0

    @pytest.mark.parametrize("seed", [0, 1, 7, 123456, MAX_SEED])
    def test_repeatable(self, seed):
        seed_everything(seed)
        first = draws()
        draws()  # move every generator on
        seed_everything(seed)
        assert draws() == first

    def test_each_generator_is_seeded(self):
        seed_everything(42)
        first = draws()
        seed_everything(43)
        second = draws()
        # each of the three libraries changes with the seed, so each one is seeded
        for a, b in zip(first, second, strict=True):
            assert a != b

    def test_matches_reference(self):
        seed_everything(2024)
        ours = draws()
        random.seed(2024)
        np.random.seed(2024)
        torch.manual_seed(2024)
        assert draws() == ours

    def test_torch_generators_follow(self):
        seed_everything(5)
        a = torch.randn(4, 4)
        b = torch.randint(0, 100, (5,))
        seed_everything(5)
        assert torch.equal(torch.randn(4, 4), a)
        assert torch.equal(torch.randint(0, 100, (5,)), b)

    def test_accelerators_seeded_through_torch_manual_seed(self, monkeypatch):
        # With an accelerator, every device is seeded the way torch.manual_seed does it
        calls = []
        monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
        monkeypatch.setattr(torch, "manual_seed", calls.append)
        seed_everything(9)
        assert calls == [9]

    def test_no_lazy_device_seeds_without_accelerator(self, monkeypatch):
        # The cheap path: no torch.manual_seed (and its stack captures) when nothing needs it
        monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
        monkeypatch.setattr(torch, "manual_seed", lambda seed: pytest.fail("lazy device seeds"))
        seed_everything(9)
        assert torch.random.initial_seed() == 9

    def test_numpy_integer_accepted(self):
        assert seed_everything(np.int64(11)) == 11
        assert type(seed_everything(np.uint32(11))) is int

    @pytest.mark.cuda
    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
    def test_cuda_repeatable(self):
        seed_everything(3)
        first = torch.rand(8, device="cuda").cpu()
        seed_everything(3)
        assert torch.equal(torch.rand(8, device="cuda").cpu(), first)

    def test_doctest(self):
        assert doctest.testmod(seeding).failed == 0


class TestException:
    @pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, 2**64])
    def test_out_of_range(self, seed):
        with pytest.raises(ValueError) as info:
            seed_everything(seed)
        message = str(info.value)
        assert str(seed) in message
        assert f"between 0 and {MAX_SEED}" in message

    @pytest.mark.parametrize("seed", [1.5, 3.0, "3", None, True, [1]])
    def test_not_an_integer(self, seed):
        with pytest.raises(ValueError) as info:
            seed_everything(seed)
        message = str(info.value)
        assert "must be an integer" in message
        assert repr(seed) in message

    def test_bad_seed_leaves_generators_alone(self):
        seed_everything(9)
        expected = draws()
        seed_everything(9)
        with pytest.raises(ValueError):
            seed_everything(-3)
        assert draws() == expected


# ------------------------------------------------------------------------------------------
# The cuDNN option (notes 004:23, 004:26)
# ------------------------------------------------------------------------------------------


@pytest.fixture
def cudnn_flags():
    """Restore the process-wide cuDNN flags after a test changes them."""
    saved = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    yield
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved


class TestCudnnOption:
    def test_default_leaves_flags_alone(self, cudnn_flags):
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = True
        seed_everything(1)
        assert torch.backends.cudnn.deterministic is True
        assert torch.backends.cudnn.benchmark is True

    def test_true_is_the_notes_recipe(self, cudnn_flags):
        torch.backends.cudnn.benchmark = True
        assert seed_everything(4, cudnn_deterministic=True) == 4
        assert torch.backends.cudnn.deterministic is True
        assert torch.backends.cudnn.benchmark is False

    def test_false_restores_defaults(self, cudnn_flags):
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = True
        seed_everything(4, cudnn_deterministic=False)
        assert torch.backends.cudnn.deterministic is False
        assert torch.backends.cudnn.benchmark is False

    @pytest.mark.parametrize("value", [1, "yes", 0.0])
    def test_bad_value_changes_nothing(self, cudnn_flags, value):
        seed_everything(9)
        expected = draws()
        seed_everything(9)
        torch.backends.cudnn.deterministic = False
        with pytest.raises(ValueError) as info:
            seed_everything(3, cudnn_deterministic=value)
        assert repr(value) in str(info.value)
        assert torch.backends.cudnn.deterministic is False
        assert draws() == expected

    @pytest.mark.parametrize("cudnn", [False, True])
    def test_snippet_matches_seed_everything(self, cudnn_flags, cudnn):
        printed = []
        code = seeding.seeding_snippet(77, cudnn_deterministic=cudnn)
        exec(code, {"print": lambda *a: printed.append(a)})
        if cudnn:
            assert torch.backends.cudnn.deterministic is True
            assert torch.backends.cudnn.benchmark is False
        seed_everything(77)
        assert printed == [(random.random(), float(np.random.rand()), float(torch.rand(1)))]
        assert ("cudnn.deterministic = True" in code) is cudnn

    def test_snippet_rejects_bad_seed(self):
        with pytest.raises(ValueError, match="between 0 and"):
            seeding.seeding_snippet(-1)


@needs_notes
class TestNotesSeedingCode:
    def test_notes_recipe_is_verbatim(self):
        ref = NotesRef.parse(seeding.NOTES_SEEDING_REF)
        assert normalise_notes_text(seeding.NOTES_SEEDING_CODE) == notes_lines(ref)

    def test_init_seeds_statements_are_the_notes(self):
        line = notes_lines(NotesRef.parse(seeding.NOTES_INIT_SEEDS_REF))
        statements = [
            s.strip() for s in seeding.NOTES_INIT_SEEDS_CODE.splitlines()[1:] if s.strip()
        ]
        assert len(statements) == 7
        assert " ".join(statements) in line

    def test_notes_recipe_runs(self, cudnn_flags):
        exec(seeding.NOTES_SEEDING_CODE, {})
        assert torch.backends.cudnn.deterministic is True
        assert torch.backends.cudnn.benchmark is False


# ------------------------------------------------------------------------------------------
# torch.use_deterministic_algorithms: its docstring's two lists
# ------------------------------------------------------------------------------------------




def page_examples(markdown: str) -> tuple[list[str], list[str]]:
    """The ops the bullet names as made deterministic and as raising (``name condition``)."""
    made_part, raise_part = markdown.split("**raise a RuntimeError**")
    made_part = made_part.split("**switch to a deterministic algorithm**")[1]

    def ops(part: str) -> list[str]:
        body = part.split("among them:", 1)[1].split(". ", 1)[0]
        return [re.sub(r"`([^`]+)`", r"\1", item).strip() for item in body.split(";")]

    return ops(made_part), ops(raise_part)


class TestDeterministicOps:
    def test_lists_match_the_docstring(self):
        made_text, raise_text = docstring_sections()
        ops = seeding.deterministic_ops()
        assert ops.torch_version == torch.__version__
        assert len(ops.made_deterministic) == made_text.count("* ")
        assert len(ops.raise_error) == raise_text.count("* ")
        for op in ops.made_deterministic:
            assert f"{op.name} {op.condition.split(':')[0]}".strip() in made_text, op
        for op in ops.raise_error:
            assert f"{op.name} {op.condition.split(':')[0]}".strip() in raise_text, op

    def test_issue_11_scatter_add_and_index_add_do_not_raise(self):
        """torch 2.14 makes scatter_add_ and index_add deterministic on CUDA."""
        made_text, raise_text = docstring_sections()
        for name in ("torch.Tensor.scatter_add_", "torch.index_add"):
            assert name in made_text and name not in raise_text
        ops = seeding.deterministic_ops()
        made, raises = ops.find("torch.Tensor.scatter_add_")
        assert [str(op) for op in made] == [
            "torch.Tensor.scatter_add_ when called on a CUDA tensor"
        ]
        assert raises == []

    def test_page_wording_agrees_with_the_docstring(self):
        made_text, raise_text = docstring_sections()
        text = seeding.deterministic_flag_markdown(seeding.deterministic_ops())
        made, raises = page_examples(text)
        assert "torch.Tensor.scatter_add_ when called on a CUDA tensor" in made
        assert "torch.index_add when called on CUDA tensor" in made
        assert (
            "torch.nn.functional.grid_sample when attempting to differentiate a CUDA tensor"
            in raises
        )
        for item in raises:  # everything the page says raises is in the raise list ...
            assert item.split(":")[0] in raise_text, item
            assert item.split(":")[0] not in made_text, item
        for item in made:  # ... and nothing it says becomes deterministic is
            assert item.split(":")[0] in made_text, item
            assert item.split(":")[0] not in raise_text, item
        count_made, count_raise = made_text.count("* "), raise_text.count("* ")
        assert f"{count_made} normally-nondeterministic operations" in text
        assert f"{count_raise} have no deterministic implementation" in text

    def test_subbullets_are_joined(self):
        ops = seeding.deterministic_ops()
        _, raises = ops.find("torch.nn.functional.interpolate")
        assert raises and raises[0].condition.endswith("linear, bilinear, bicubic, trilinear")

    def test_op_in_both_lists(self):
        made, raises = seeding.deterministic_ops().find("torch.Tensor.put_")
        assert [op.condition for op in made] == ["with accumulate=True when called on a CPU tensor"]
        assert "when accumulate=False" in [op.condition for op in raises]

    @pytest.mark.parametrize(
        ("doc", "fragment"),
        [
            ("nothing here", "no longer contains"),
            (
                "The following ops will act deterministically when ``mode=True``:\n"
                "    * :func:`torch.a` when x\n",
                "will throw a",
            ),
            (
                "will act deterministically when ``mode=True``:\n\n"
                "will throw a :class:`RuntimeError` when ``mode=True``:\n"
                "  * :func:`torch.b`\nIn addition",
                "0 operations made deterministic",
            ),
        ],
    )
    def test_exception(self, doc, fragment):
        with pytest.raises(ValueError, match=fragment):
            seeding.parse_deterministic_doc(doc)

    def test_not_a_string(self):
        with pytest.raises(ValueError, match="NoneType"):
            seeding.parse_deterministic_doc(None)


# ------------------------------------------------------------------ sessions share one process
class TestSessionsDoNotReseedEachOther:
    """A server's sessions are threads of one process: the process-wide generators are shared,
    so a computation that draws from them can be reseeded by another session between two of
    its draws. Each computation must give its single-session result whatever others do."""

    @staticmethod
    def _weights(model: torch.nn.Module) -> list[torch.Tensor]:
        return [t.detach().clone() for t in model.state_dict().values()]

    def test_interleaved_sessions_get_their_own_eval_model(self, monkeypatch):
        import threading

        from lessons.memory.eval_memory import _eval_model

        alone = self._weights(_eval_model())
        in_first_layer, reseeded = threading.Event(), threading.Event()
        original = torch.nn.init.kaiming_uniform_
        main = threading.current_thread()

        def pause_after_first_layer(*args, **kwargs):
            out = original(*args, **kwargs)
            if threading.current_thread() is main and not in_first_layer.is_set():
                in_first_layer.set()  # the other session runs now, between our draws
                assert reseeded.wait(30)
            return out

        def other_session():
            assert in_first_layer.wait(30)
            seed_everything(1234)  # another student's run seeds the process-wide generators
            torch.rand(7)
            reseeded.set()

        monkeypatch.setattr(torch.nn.init, "kaiming_uniform_", pause_after_first_layer)
        other = threading.Thread(target=other_session)
        other.start()
        try:
            interleaved = self._weights(_eval_model())
        finally:
            reseeded.set()
            other.join(30)
        assert in_first_layer.is_set()
        assert all(torch.equal(a, b) for a, b in zip(alone, interleaved, strict=True))

    def test_eval_model_leaves_the_process_generator_alone(self):
        from lessons.memory.eval_memory import _eval_model

        seed_everything(77)
        expected = torch.rand(3)
        seed_everything(77)
        _eval_model()
        assert torch.equal(torch.rand(3), expected)

    def test_eval_model_seed_is_explicit(self):
        from lessons.memory.eval_memory import _eval_model

        same = zip(self._weights(_eval_model(1)), self._weights(_eval_model(1)), strict=True)
        assert all(torch.equal(a, b) for a, b in same)
        assert not torch.equal(_eval_model(1)[0].weight, _eval_model(2)[0].weight)
        with pytest.raises(ValueError, match="-1"):
            _eval_model(-1)

    def test_a_seeding_snippet_leaves_no_trace(self):
        from core.notes import run_live

        seed_everything(5)
        expected = (random.random(), float(np.random.rand()), float(torch.rand(1)))
        seed_everything(5)
        run = run_live(
            "import random\nimport numpy as np\nimport torch\n"
            "random.seed(1); np.random.seed(1); torch.manual_seed(1)\n"
            "torch.backends.cudnn.benchmark = True\nprint(torch.rand(1).item())"
        )
        assert run.error is None
        assert torch.backends.cudnn.benchmark is False
        assert (random.random(), float(np.random.rand()), float(torch.rand(1))) == expected


class TestCudnnFlags:
    def test_not_set_without_a_gpu(self, monkeypatch):
        from core.seeding import set_cudnn_flags

        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        saved = torch.backends.cudnn.deterministic
        assert set_cudnn_flags(not saved) is False
        assert torch.backends.cudnn.deterministic == saved

    def test_bad_value(self):
        from core.seeding import set_cudnn_flags

        with pytest.raises(ValueError, match="'yes'"):
            set_cudnn_flags("yes")
