"""The error doctor's questions, recomputed here by running each entry's program independently."""

from __future__ import annotations

import threading
import traceback

import pytest

from core.questions import check_questions
from lessons.errors.catalogue import entries, entry_by_key
from lessons.errors.entry import LIVE
from lessons.errors.questions import (
    ANOTHER,
    REWORDED,
    TODAY_PART,
    WORD_FOR_WORD,
    questions,
    wording_verdict,
)  # fmt: skip
from lessons.errors.runs import capture
from testing.apptest import pick_question, reveal
from tests.app.conftest import open_cold, open_expanders

#: Every entry the server runs in-process, and one run in a subprocess (each takes seconds).
ASKED = [entry for entry in entries() if entry.run == LIVE] + [entry_by_key("worker-exception")]


def _raise_here(code: str) -> tuple[int, str]:
    """The snippet's raising line and exception class, from a run of our own on a fresh thread
    (grad mode belongs to a thread, and one program switches it off)."""
    found: list[tuple[int, str]] = []

    def run() -> None:
        try:
            exec(compile(code, "<mine>", "exec"), {"__name__": "__mine__"})
        except Exception as exc:  # the broken programs raise on purpose
            frames = traceback.extract_tb(exc.__traceback__)
            lines = [frame.lineno for frame in frames if frame.filename == "<mine>"]
            found.append((lines[-1], type(exc).__name__))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert found, "the broken program did not raise"
    return found[0]


@pytest.mark.parametrize("entry", ASKED, ids=lambda entry: entry.key)
def test_each_answer_is_what_the_program_does(entry):
    if entry.key == "no-nvidia-driver":
        pytest.importorskip("torch").cuda.is_available() and pytest.skip("CUDA is present")
    asked = {question.key: question for question in check_questions(questions(entry))}
    third = "notes-wording" if entry.notes_message else "fixed-output"
    assert set(asked) == {"raising-line", "exception-type", third}
    assert all(question.hides == TODAY_PART for question in asked.values())
    line, name = _raise_here(entry.broken)
    lines = asked["raising-line"]
    assert lines.correct.text.startswith(f"line {line}:"), (lines.correct.text, line)
    assert all(
        not c.text.startswith(f"line {line}:") for c in lines.choices if c is not lines.correct
    )
    if third == "fixed-output":
        printed = _fixed_output(entry.fixed).splitlines()[0]
        assert asked[third].correct.text == f"it prints `{printed[:70]}`"
    kinds = asked["exception-type"]
    assert kinds.correct.text == f"`{name}`"
    assert len({c.text for c in kinds.choices}) == len(kinds.choices) >= 3


def _fixed_output(code: str) -> str:
    """What the fixed program prints, run here on a fresh thread."""
    printed: list[str] = []

    def _print(*args: object, **_: object) -> None:
        printed.append(" ".join(map(str, args)))

    def run() -> None:
        exec(compile(code, "<fixed>", "exec"), {"__name__": "__main__", "print": _print})

    if "multiprocessing" in code or "DataLoader" in code:  # workers: run it as a script
        import subprocess
        import sys

        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120).stdout  # fmt: skip
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return "\n".join(printed)


def test_the_wording_verdicts():
    assert wording_verdict("Trying to backward through the graph a second time",
                           "RuntimeError: Trying to backward through the graph a second time (or "
                           "directly access saved tensors)") == WORD_FOR_WORD  # fmt: skip
    assert wording_verdict("Can't call numpy() on Variable that requires grad",
                           "RuntimeError: Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.") == REWORDED  # fmt: skip
    assert (
        wording_verdict(
            "cannot import name container_abc form torch._six",
            "ModuleNotFoundError: No module named 'torch._six'",
        )
        == ANOTHER
    )


def test_the_notes_wording_of_a_renamed_op_is_not_word_for_word():
    entry = entry_by_key("quantized-cpu")
    asked = {q.key: q for q in questions(entry)}
    assert asked["notes-wording"].correct.text != WORD_FOR_WORD
    wrong = [c for c in asked["notes-wording"].choices if c.text == WORD_FOR_WORD][0]
    assert wrong.notes == entry.where  # the notes' own claim, cited


def test_what_cannot_be_asked_says_why():
    with pytest.raises(ValueError, match="no entry is shown"):
        questions(None)
    documented = next(entry for entry in entries() if not entry.broken)
    with pytest.raises(ValueError, match="documented only"):
        questions(documented)
    assert capture("backward-twice", "broken").status == "raised"


@pytest.mark.parametrize("entry", ["backward-twice", "negative-strides"])
def test_questions_in_chinese(entry):
    from tests.app.i18n_checks import untranslated, visible_texts

    params = {"lang": "zh", "errors.entry": entry}
    at = open_expanders(open_cold("errors", params), "predict.open")
    for index in range(3):
        reveal(pick_question(at, index))
        assert not at.exception, at.exception
        assert untranslated(visible_texts(at)) == [], index
