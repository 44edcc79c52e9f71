"""Predict, then reveal: questions about the view on the page, answered by running it.

Each lesson's ``questions.py`` builds :class:`Question` values from the page's current settings
by running the same operation the page draws, so the question, its answer and the proof change
with the view. Texts are English and marked (``core.text.N_`` / ``core.text.T``); the page
translates them when it shows them. A question travels to a class as store state
(:func:`question_state`): its texts go as templates and values, so each student reads it in
their own language, and nothing is computed again on their side.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.text import T

#: A question offers 2 to 6 choices.
MIN_CHOICES, MAX_CHOICES = 2, 6
#: A question's key within its lesson: lower-case words joined by dashes.
QUESTION_KEY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
#: The container key of a page part (``st.container(key=...)``) a question hides. Streamlit
#: gives that container the CSS class ``st-key-<key>``; these characters pass through as they are.
PART_KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,79}\Z")
#: Where the notes say something: ``FILE:LINE`` or ``FILE:LINE-LINE`` (``"002:1047"``).
NOTES_REF = re.compile(r"(\d{3}):(\d+)(?:-(\d+))?\Z")


@dataclass(frozen=True)
class Choice:
    """One answer a learner can pick.

    ``text`` is what they pick (markdown the app wrote: inline code in backticks is fine);
    ``why`` is one line saying why it is right or wrong, phrased from the run ("that is the
    notes' 1.5 MB rule; torch today uses 1 MiB"); ``notes`` is ``"FILE:LINE"`` when this choice
    is the notes' own claim.
    """

    text: str
    why: str
    notes: str | None = None

    def __post_init__(self) -> None:
        for name in ("text", "why"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a choice's {name} is a non-empty text, got {value!r}")
        if self.notes is not None and not NOTES_REF.match(str(self.notes)):
            raise ValueError(f"a choice's notes reference is FILE:LINE, got {self.notes!r}")


@dataclass(frozen=True)
class Question:
    """A question about the view on the page, with its answer computed by running it.

    ``key`` names it within its lesson (stable when the view changes: the question is the same,
    its numbers are new); ``prompt`` asks it; ``choices[answer]`` is right; ``proof`` is the live
    computation that shows it (the value the operation gave); ``hides`` is the key of the page's
    container whose content gives the answer away, blurred until the reveal (``None``: nothing
    on the page does).
    """

    key: str
    prompt: str
    choices: tuple[Choice, ...]
    answer: int
    proof: str
    hides: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not QUESTION_KEY.match(self.key):
            raise ValueError(f"a question key is lower-case words and dashes, got {self.key!r}")
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise ValueError(f"question {self.key}: the prompt is empty ({self.prompt!r})")
        count = len(self.choices) if isinstance(self.choices, tuple) else -1
        if not MIN_CHOICES <= count <= MAX_CHOICES:
            raise ValueError(f"question {self.key} has a tuple of {MIN_CHOICES}-{MAX_CHOICES} "
                             f"choices, got {self.choices!r:.120}")  # fmt: skip
        texts = [str(choice.text) for choice in self.choices]
        if len(set(texts)) != len(texts):
            raise ValueError(f"question {self.key} offers the same choice twice: {texts}")
        if not isinstance(self.answer, int) or not 0 <= self.answer < len(self.choices):
            raise ValueError(f"question {self.key}: answer is a choice's index 0-"
                             f"{len(self.choices) - 1}, got {self.answer!r}")  # fmt: skip
        if not isinstance(self.proof, str) or not self.proof.strip():
            raise ValueError(f"question {self.key}: the proof is empty ({self.proof!r})")
        if self.hides is not None and not PART_KEY.match(str(self.hides)):
            raise ValueError(f"question {self.key}: hides names a container key, "
                             f"got {self.hides!r}")  # fmt: skip

    @property
    def correct(self) -> Choice:
        """The right choice."""
        return self.choices[self.answer]

    @property
    def notes_refs(self) -> tuple[str, ...]:
        """The notes' lines the choices cite (``"FILE:LINE"``)."""
        return tuple(choice.notes for choice in self.choices if choice.notes)


def check_questions(questions: Sequence[Question], minimum: int = 3) -> tuple[Question, ...]:
    """``questions`` as a tuple, once shown to hold at least ``minimum`` questions with distinct
    keys (``ValueError`` naming what is wrong otherwise)."""
    found = tuple(questions)
    if len(found) < minimum:
        raise ValueError(f"a lesson asks at least {minimum} questions, got {len(found)}")
    keys = [question.key for question in found]
    if len(set(keys)) != len(keys):
        raise ValueError(f"question keys repeat: {keys}")
    return found


# --- A question as class store state ----------------------------------------------------------

SLUG_FIELD, KEY_FIELD, BODY_FIELD = "slug", "key", "question"


def _text_data(text: str) -> Any:
    """A marked text as JSON data: ``T`` keeps its template and values (a ``T`` value nested)."""
    if isinstance(text, T):
        values = {name: _text_data(value) if isinstance(value, T) else value
                  for name, value in text.args.items()}  # fmt: skip
        return {"t": text.template, "a": values}
    return {"t": str(text)}


def _text_from(data: Any) -> str:
    if not isinstance(data, dict) or not isinstance(data.get("t"), str):
        raise ValueError(f"a question text is {{'t': template, 'a': values}}, got {data!r:.80}")
    args = data.get("a")
    if args is None:
        return data["t"]
    if not isinstance(args, dict):
        raise ValueError(f"a question text's values are a dict, got {args!r:.80}")
    values = {name: _text_from(value) if isinstance(value, dict) else value
              for name, value in args.items()}  # fmt: skip
    try:
        return T(data["t"], **values)
    except (KeyError, IndexError, ValueError) as error:
        raise ValueError(f"a question text does not fit its values: {data['t']!r:.80}") from error


def question_state(slug: str, question: Question) -> dict[str, str]:
    """``question`` on page ``slug`` as class store state (strings only): the page, the key, and
    the question as JSON whose texts are templates and values, translated where they are read."""
    body = {
        "prompt": _text_data(question.prompt),
        "choices": [{"text": _text_data(c.text), "why": _text_data(c.why), "notes": c.notes}
                    for c in question.choices],  # fmt: skip
        "answer": question.answer,
        "proof": _text_data(question.proof),
        "hides": question.hides,
    }
    return {SLUG_FIELD: slug, KEY_FIELD: question.key,
            BODY_FIELD: json.dumps(body, ensure_ascii=False, separators=(",", ":"))}  # fmt: skip


def question_from_state(state: Mapping[str, str]) -> tuple[str, Question]:
    """``(slug, question)`` from what :func:`question_state` wrote; ``ValueError`` naming the
    field for anything else (a store is shared: never trust its contents blindly)."""
    try:
        slug, key, body = state[SLUG_FIELD], state[KEY_FIELD], json.loads(state[BODY_FIELD])
        choices = tuple(Choice(_text_from(c["text"]), _text_from(c["why"]), c.get("notes"))
                        for c in body["choices"])  # fmt: skip
        question = Question(key, _text_from(body["prompt"]), choices, body["answer"],
                            _text_from(body["proof"]), body.get("hides"))  # fmt: skip
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(f"not a question's state: {error!r:.80}") from error
    if not isinstance(slug, str) or not slug:
        raise ValueError(f"a question's page is a slug, got {slug!r:.40}")
    return slug, question


# --- A class's results --------------------------------------------------------------------------

RESULT_COLUMNS = ("round", "page", "question_key", "question", "choice", "choice_text",
                  "correct", "count", "answered", "stage")  # fmt: skip


@dataclass(frozen=True)
class RoundResult:
    """One round of a class question: its number, page, question, answer counts per choice
    (``counts[i]`` seats chose choice ``i``), how many seats answered, and its stage when the
    results were read (``"open"``, ``"revealed"``, or ``"closed"``: taken off the pages, or
    replaced by the next question)."""

    number: int
    slug: str
    question: Question
    counts: tuple[int, ...]
    answered: int
    stage: str


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def results_csv(rounds: Sequence[RoundResult]) -> str:
    """The class's results as CSV text: one row per round and choice (``RESULT_COLUMNS``), in
    English, counts only (no seat, no name). Two rounds of one question sit side by side under
    the same ``question_key``: the before and after of a discussion."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(RESULT_COLUMNS)
    for result in rounds:
        question = result.question
        for index, choice in enumerate(question.choices):
            count = result.counts[index] if index < len(result.counts) else 0
            writer.writerow([
                result.number, result.slug, question.key, str(question.prompt), index + 1,
                str(choice.text), _yes(index == question.answer), count, result.answered,
                result.stage,
            ])  # fmt: skip
    return out.getvalue()
