"""One entry of the error doctor's catalogue: a message, the notes' cause, today's, the fix.

An :class:`Entry` is data the app wrote (never a visitor's text). Its two snippets are complete
programs that run as-is in a Python shell: ``broken`` makes the mistake and raises the error,
``fixed`` is the same program corrected and prints what it computed. How the app runs them is
``run``: :data:`LIVE` in the server process (fast, pure CPU), :data:`SUBPROCESS` in a child
process with a time and memory limit (worker processes, process groups, hangs), :data:`GPU`
only where CUDA is present, :data:`DOCUMENTED` never (a driver, a toolchain or several GPUs; the
entry says what it needs and what such a machine shows).

Texts are English and marked (``core.text.N_``) so the page can translate them; ``notes_message``
and ``notes_cause`` are the notes' own words, verbatim (a test finds them at ``where``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.questions import NOTES_REF
from core.text import N_

Kind = Literal[
    "autograd", "shapes", "data", "cuda", "distributed", "build", "serialization",
]  # fmt: skip
#: The catalogue's groups, in the order an empty query shows them.
KINDS: tuple[Kind, ...] = (
    "autograd", "shapes", "data", "cuda", "distributed", "build", "serialization",
)  # fmt: skip

Run = Literal["live", "subprocess", "gpu", "documented"]
LIVE, SUBPROCESS, GPU, DOCUMENTED = "live", "subprocess", "gpu", "documented"
RUNS: tuple[Run, ...] = (LIVE, SUBPROCESS, GPU, DOCUMENTED)

#: An entry's key: lower-case words joined by dashes (it goes into a URL as it is).
ENTRY_KEY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")


@dataclass(frozen=True)
class Entry:
    """One error the notes met, as they tell it and as torch tells it today.

    - ``key``: the entry's name in a URL (``errors.entry=backward-twice``);
    - ``kind``: its group in the catalogue (one of :data:`KINDS`);
    - ``title``: a short English name (``N_``);
    - ``where``: ``"FILE:LINE"`` of the notes' quote;
    - ``notes_message``: the error as the notes quote it (verbatim, may be empty when the notes
      describe a symptom without a message); ``notes_cause``: the notes' cause and fix, verbatim;
      ``notes_gloss``: what ``notes_cause`` says, in English (``N_``);
    - ``cause``: today's understanding (``N_``); ``notes_differ``: where the notes are wrong or
      dated (``N_``), empty when they hold; ``fix``: what to change (``N_``);
    - ``run``: how the app reproduces it (:data:`RUNS`);
    - ``broken`` / ``fixed``: the two programs (empty for :data:`DOCUMENTED`);
    - ``today``: the last line torch prints today for ``broken``, ``"Type: message"`` (a test
      runs ``broken`` and compares; the matcher reads it too);
    - ``also``: other wordings of the same error (older torch, other shapes) the matcher knows;
    - ``needs``: for GPU and documented entries, what a machine needs to show it and what it
      shows there (``N_``);
    - ``also_notes``: other places the notes quote the same error, ``(("002:1338", quote),)``
      (verbatim, found there by a test);
    - ``needs_no_gpu``: the mistake shows only on a machine without CUDA (asking a CPU-only
      machine for CUDA); where CUDA is present the snippet is not run: it would succeed, and
      make a CUDA context in the server process for nothing;
    - ``lesson``: ``(path, label)`` of the lesson that teaches this error, e.g.
      ``("batchnorm?batchnorm.steps=1", N_("BatchNorm explorer: a batch of one"))``.
    """

    key: str
    kind: Kind
    title: str
    where: str
    notes_message: str
    notes_cause: str
    notes_gloss: str
    cause: str
    fix: str
    run: Run
    broken: str = ""
    fixed: str = ""
    today: str = ""
    notes_differ: str = ""
    also: tuple[str, ...] = ()
    needs: str = ""
    also_notes: tuple[tuple[str, str], ...] = ()
    needs_no_gpu: bool = False
    lesson: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not ENTRY_KEY.match(self.key):
            raise ValueError(f"an entry key is lower-case words joined by dashes, got {self.key!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.run not in RUNS:
            raise ValueError(f"run must be one of {RUNS}, got {self.run!r}")
        if not NOTES_REF.match(self.where):
            raise ValueError(f"where is the notes' FILE:LINE, got {self.where!r}")
        runs_code = self.run != DOCUMENTED
        if runs_code and not (self.broken and self.fixed and self.today):
            raise ValueError(f"{self.key}: a {self.run} entry has broken, fixed and today")
        if not runs_code and not self.needs:
            raise ValueError(f"{self.key}: a documented entry says what it needs in needs")
        if not (self.notes_message or self.today or self.also):
            raise ValueError(f"{self.key}: an entry has a message to match")

    @property
    def messages(self) -> tuple[str, ...]:
        """Every wording the matcher compares a query with: the notes', today's, the others."""
        return tuple(text for text in (self.notes_message, self.today, *self.also) if text)


#: Each kind's name in the catalogue (English msgids).
KIND_TITLES: dict[str, str] = {
    "autograd": N_("Autograd"),
    "shapes": N_("Shapes and indexing"),
    "data": N_("Data loading"),
    "cuda": N_("CUDA and drivers"),
    "distributed": N_("Distributed"),
    "build": N_("Build and install"),
    "serialization": N_("Serialization"),
}

#: How each run mode is named where an entry says how it was reproduced (English msgids).
RUN_TITLES: dict[str, str] = {
    LIVE: N_("live"),
    SUBPROCESS: N_("live, in a subprocess"),
    GPU: N_("needs a GPU"),
    DOCUMENTED: N_("documented"),
}
