"""The notes the app teaches from: citations, and "the notes say / PyTorch today does" checks.

The notes are three Chinese plain-text notebooks (kept beside the repo in ``shared/seeds/``; the
app does not need them at run time). Every example the app takes from them cites its place as
``FILE:LINE`` (for example ``002:926``), through :class:`NotesRef`.

Where the notes are wrong or out of date, a page shows a :class:`NotesCallout`: the notes' own
words (Chinese, verbatim), an English gloss, the line reference, and what PyTorch does *today*,
decided from a live run of a snippet (:func:`run_live`), never from a hard-coded answer.

Each module that has callouts defines ``notes_callouts() -> list[NotesCallout]``;
``lessons.registry.all_callouts`` finds and collects them (each lesson's README lists its own, and
a test checks it does).
Pure: no Streamlit.

>>> str(NotesRef.parse("002:980-992"))
'002:980-992'
>>> run_live("print(1 + 1)").output
'2'
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import re
import threading
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

#: The short name an issue or a page uses for each notes file.
NOTES_FILES: dict[str, str] = {
    "000": "000_0f3bd0d9fbda80d9.txt",
    "002": "002_2d2a0ce5273c1c0a.txt",
    "004": "004_eac26613ef2afffa.txt",
}

#: Names another folder for the notes (tests point it at an empty one to act as a lone clone).
NOTES_DIR_ENV = "TORCH_PLAYGROUND_NOTES"
#: Where the notes live: ``$TORCH_PLAYGROUND_NOTES``, else ``shared/seeds`` beside the repo (its
#: usual workspace). Only tests read them; a clone without them skips those tests.
SEEDS_DIR = Path(
    os.environ.get(NOTES_DIR_ENV) or Path(__file__).resolve().parents[2] / "shared" / "seeds"
)

#: The English comments of the notes' own code that the app quotes (the flow lesson's
#: ``NOTES_GRADUAL_MEAN_PYTORCH``, the indexing lesson's one-hot example, the error doctor's
#: negative-strides entry). They are the notes' words, so they stay as written in every
#: language and are not catalog messages. Listed here, not looked up in the notes, so a clone
#: without the notes tells them from the app's own comments the same way
#: (tests/shared/test_notes.py checks the list against the notes).
NOTES_CODE_COMMENTS: frozenset[str] = frozenset(
    {
        "1. Calculate filters window size",
        "2. Get non-nan tensor and mask",
        "3. Smoothen non-nan tensor and mar",
        "4. In case there were still nan",
        "5. Mean merge all filtered tensor",
        "6. Replace NaN values in the input tensor",
        "Tensor -> Numpy",
        "If ndarray has negative stride.",
    }
)

Verdict = Literal["wrong", "out of date", "incomplete", "differs from the app"]
VERDICTS: tuple[str, ...] = ("wrong", "out of date", "incomplete", "differs from the app")

_REF_RE = re.compile(r"^(\d{3}):(\d+)(?:-(\d+))?$")


@dataclass(frozen=True)
class NotesRef:
    """A place in the notes: file short name (``"002"``) and a line or an inclusive line range."""

    file: str
    first_line: int
    last_line: int | None = None

    def __post_init__(self) -> None:
        if self.file not in NOTES_FILES:
            raise ValueError(f"notes file must be one of {list(NOTES_FILES)}, got {self.file!r}")
        if self.first_line < 1:
            raise ValueError(f"notes lines start at 1, got {self.first_line}")
        if self.last_line is not None and self.last_line < self.first_line:
            raise ValueError(
                f"line range must not run backwards, got {self.first_line}-{self.last_line}"
            )

    @classmethod
    def parse(cls, text: str) -> NotesRef:
        """``"002:926"`` or ``"002:980-992"`` -> :class:`NotesRef`; ``ValueError`` otherwise."""
        match = _REF_RE.match(text.strip())
        if not match:
            raise ValueError(
                f"a notes reference looks like '002:926' or '002:980-992', got {text!r}"
            )
        last = int(match[3]) if match[3] else None
        return cls(match[1], int(match[2]), last)

    @property
    def filename(self) -> str:
        """The notes file this reference points into (``002_2d2a0ce5273c1c0a.txt``)."""
        return NOTES_FILES[self.file]

    @property
    def lines(self) -> range:
        """The 1-based line numbers covered."""
        return range(self.first_line, (self.last_line or self.first_line) + 1)

    def __str__(self) -> str:
        if self.last_line is None or self.last_line == self.first_line:
            return f"{self.file}:{self.first_line}"
        return f"{self.file}:{self.first_line}-{self.last_line}"


def cite(ref: str | NotesRef) -> str:
    """The label a page prints next to an example taken from the notes: ``"notes 002:926"``."""
    parsed = NotesRef.parse(ref) if isinstance(ref, str) else ref
    return f"notes {parsed}"


# --------------------------------------------------------------------------------------------
# Live runs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveRun:
    """What a snippet did when it ran just now.

    ``output`` is everything it printed (and any warning it raised, as ``Warning: ...``
    lines), ``error`` is ``"ExceptionType: message"`` when it raised, else ``None``, and
    ``line`` the snippet's line (1-based) the error came from.
    """

    code: str
    output: str
    error: str | None
    error_type: str | None
    torch_version: str
    line: int | None = None

    @property
    def raised(self) -> bool:
        return self.error is not None

    @property
    def transcript(self) -> str:
        """Printed output followed by the error line, as a console would show them."""
        parts = [self.output] if self.output else []
        if self.error:
            parts.append(self.error)
        return "\n".join(parts)


#: Snippets run one at a time: some seed the process-wide generators and check that draws
#: repeat (the notes' init_seeds), which another snippet seeding them meanwhile would break.
_SNIPPET_LOCK = threading.Lock()


@contextlib.contextmanager
def _process_generators_kept() -> Iterator[None]:
    """Put Python's ``random``, NumPy's global generator, torch's CPU generator and the cuDNN
    flags back as they were once the block ends. A snippet that seeds them (as the notes'
    recipes do) leaves no trace in the server process that every session shares; the app's own
    computations draw from private generators, so a snippet's seeding never reaches them."""
    py_state, np_state = random.getstate(), np.random.get_state()
    cudnn = torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark
    with torch.random.fork_rng(devices=[]):  # CUDA generators: seeded lazily, never drawn here
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
            torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = cudnn


def run_live(code: str) -> LiveRun:
    """Execute ``code`` (the app's own snippet, never user text) and capture what it did.

    ``print`` is replaced inside the snippet's namespace instead of redirecting ``sys.stdout``,
    because the server runs many sessions in threads of one process and a global redirect would
    capture (or swallow) their output too. Warnings are recorded and reported as output lines.
    ``warnings.catch_warnings`` swaps process-wide state, so a warning raised at that moment by
    another session's thread may land here too; pages cache callouts, which keeps that rare.
    The snippet runs in a fresh namespace with ``torch`` not pre-imported: it must import what
    it uses, so the same text runs as-is in a Python shell. Snippets run one at a time, and the
    process-wide generators and cuDNN flags they seed are put back afterwards.
    """
    error = error_type = line = None
    with _SNIPPET_LOCK, _process_generators_kept(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lines, exc = exec_captured(code, "__notes_snippet__")
    if exc is not None:  # a snippet that demonstrates an error is expected to raise
        error_type, error, line = type(exc).__name__, error_text(exc), snippet_line(exc)
    for warning in caught:
        lines.append(f"Warning: {warning.category.__name__}: {warning.message}\n")
    return LiveRun(code, "".join(lines).rstrip("\n"), error, error_type, torch.__version__, line)


def exec_captured(code: str, module_name: str) -> tuple[list[str], Exception | None]:
    """Run ``code`` (the app's own, compiled as ``<snippet>``) in a fresh namespace called
    ``module_name``, with ``print`` replaced there: what it printed, piece by piece, and the
    exception it raised (None when it ran to the end). ``print`` is not redirected through
    ``sys.stdout``: the server runs many sessions in threads of one process."""
    printed: list[str] = []

    def _print(*args: object, sep: str = " ", end: str = "\n", **_: object) -> None:
        printed.append(sep.join(str(a) for a in args) + end)

    try:
        exec(compile(code, "<snippet>", "exec"), {"__name__": module_name, "print": _print})
    except Exception as exc:  # the caller decides whether raising is the point
        return printed, exc
    return printed, None


def error_text(exc: BaseException) -> str:
    """``"ExceptionType: message"`` as a console prints an exception's last lines."""
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def snippet_line(exc: BaseException) -> int | None:
    """The line of the snippet (compiled as ``<snippet>``) that ``exc`` came out of, or None
    when it rose before the snippet ran (a syntax error is the snippet's own line)."""
    if isinstance(exc, SyntaxError) and exc.filename == "<snippet>":
        return exc.lineno
    frames = traceback.extract_tb(exc.__traceback__)
    lines = [frame.lineno for frame in frames if frame.filename == "<snippet>"]
    return lines[-1] if lines else None


# --------------------------------------------------------------------------------------------
# Callouts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NotesCallout:
    """One place where the notes are wrong or out of date, checked live.

    ``quote_zh`` is the notes' text verbatim (a test finds it at ``ref`` in the notes);
    ``gloss_en`` says in English what it claims; ``today`` is what PyTorch does now (a template
    when ``today_args`` fills it; title, gloss and today are marked ``N_`` for the catalog), written
    from ``run`` (the caller picks the sentence by looking at the run's result, so a change in
    PyTorch changes the sentence); ``verdict`` is one of :data:`VERDICTS`. ``evidence_by`` names
    what produced the live result when it is not PyTorch itself (the allocator simulator on a
    machine without a GPU); empty means the run called PyTorch.
    """

    key: str
    title: str
    ref: NotesRef
    quote_zh: str
    gloss_en: str
    verdict: str
    today: str
    run: LiveRun
    evidence_by: str = ""
    #: Values for the ``{placeholders}`` of ``today`` when it is a template (so the page can
    #: translate the sentence, then put the live numbers in): ``(("n", "3"),)``.
    today_args: tuple[tuple[str, str], ...] = ()
    #: A sentence (``N_``, markdown with a link relative to the page) pointing to where the app
    #: teaches the same thing at more length, e.g. the error doctor's entry for an error.
    see_also: str = ""

    @property
    def today_text(self) -> str:
        """``today`` with its placeholders filled (English; pages translate the template)."""
        return self.today.format(**dict(self.today_args)) if self.today_args else self.today

    @property
    def quote_display(self) -> str:
        """The quote as a reader sees it: the notes' literal ``\\n`` escapes become line breaks."""
        return self.quote_zh.replace("\\n", "\n")

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if not re.fullmatch(r"[a-z0-9_]+", self.key):
            raise ValueError(f"callout key must be snake_case, got {self.key!r}")


def verdict_if(confirmed: bool, verdict: str) -> str:
    """``verdict`` when the live run confirmed it, else ``"incomplete"``.

    A check that failed, or that came out the other way (PyTorch changed), proves nothing
    against the notes, so the box must not keep a confident badge over it.
    """
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    return verdict if confirmed else "incomplete"


# --------------------------------------------------------------------------------------------
# Reading the notes themselves (tests; the app never needs the files)
# --------------------------------------------------------------------------------------------


def is_notes_code_comment(comment: str) -> bool:
    """Whether ``comment`` (a ``#`` comment's text, with or without a leading list number) is
    one of :data:`NOTES_CODE_COMMENTS`."""
    text = comment.strip()
    numbered = {re.sub(r"^\d+\.\s*", "", quoted) for quoted in NOTES_CODE_COMMENTS}
    return text in NOTES_CODE_COMMENTS or text in numbered


def normalise_notes_text(text: str) -> str:
    """Collapse the notes' literal ``\\n`` escapes and every run of whitespace to one space."""
    return re.sub(r"\s+", " ", text.replace("\\n", " ").replace("\\t", " ")).strip()


@functools.cache
def notes_corpus(seeds_dir: Path = SEEDS_DIR) -> str:
    """All the notes as one normalised text (:func:`normalise_notes_text`), to ask whether a
    text is the notes' own (a quote, a comment of their code); ``""`` without the notes."""
    return " ".join(
        normalise_notes_text(path.read_text(encoding="utf-8"))
        for path in sorted(seeds_dir.glob("*.txt"))
    )


def notes_lines(ref: NotesRef, seeds_dir: Path = SEEDS_DIR) -> str:
    """The text of the lines ``ref`` covers, normalised; ``FileNotFoundError`` without notes."""
    all_lines = (seeds_dir / ref.filename).read_text(encoding="utf-8").splitlines()
    if ref.lines.stop - 1 > len(all_lines):
        raise ValueError(f"{ref} is past the end of {ref.filename} ({len(all_lines)} lines)")
    return normalise_notes_text(" ".join(all_lines[i - 1] for i in ref.lines))


def quote_is_at(quote: str, ref: NotesRef, seeds_dir: Path = SEEDS_DIR) -> bool:
    """Whether ``quote`` (normalised) occurs in the lines ``ref`` covers."""
    return normalise_notes_text(quote) in notes_lines(ref, seeds_dir)
