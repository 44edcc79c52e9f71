"""The error doctor's "predict, then reveal" questions, answered by running the entry's program.

For the entry at the top of the page, the mistake's program (``broken``) is run (the same cached
run the page shows) and the questions are read off what it did:

- ``raising-line``: which line of the program raises (the traceback's line in the snippet);
- ``exception-type``: which exception class torch raises today;
- ``notes-wording``: whether torch still prints the notes' wording, word for word, in other
  words, or another error altogether (the notes' quote compared with today's message by the
  matcher's stable text);
- ``fixed-output``: for an entry whose notes quote no message, what the fixed program prints
  (its run, against "it raises too").

All hide the part of the page that shows today's message (:data:`TODAY_PART`). An entry that
does not run here (documented, or a GPU entry on a machine without one) has nothing to ask
about: :func:`questions` raises ValueError saying so (a marked text: the panel translates it).

Pure: no Streamlit. Texts are English and marked (``N_`` / ``T``); the page translates them.
"""

from __future__ import annotations

from core.questions import Choice, Question
from core.text import N_, T
from lessons.errors.entry import Entry
from lessons.errors.matching import stable_text
from lessons.errors.runs import Capture, capture

#: The page's part that shows today's message and the line that raised it.
TODAY_PART = "errors-today"
#: Exception classes offered beside the right one (the ones torch raises most).
COMMON_TYPES = ("RuntimeError", "ValueError", "IndexError", "TypeError", "AttributeError",
                "NotImplementedError")  # fmt: skip
#: At most this many lines are offered as "the line that raises".
MAX_LINE_CHOICES = 5


def questions(entry: Entry | None, run: Capture | None = None,
              fixed: Capture | None = None) -> list[Question]:  # fmt: skip
    """The three questions about ``entry``'s program; ``run`` is its broken run and ``fixed``
    its fixed run (default: the page's cached :func:`~lessons.errors.runs.capture`). Raises
    ValueError when there is no entry or its program did not raise here."""
    if entry is None:
        raise ValueError(T(N_("no entry is shown: paste an error or open one from the catalogue")))
    if not entry.broken:
        raise ValueError(T(N_("{key} is documented only: nothing runs here to ask about"),
                           key=entry.key))  # fmt: skip
    run = run or capture(entry.key, "broken")
    if run.status != "raised" or run.line is None:
        raise ValueError(T(N_("{key}'s program did not raise here"), key=entry.key))
    if entry.notes_message:
        third = notes_wording(entry, run)
    else:
        third = fixed_output(run, fixed or capture(entry.key, "fixed"))
    return [raising_line(entry, run), exception_type(run), third]


def _numbered(code: str) -> str:
    return "\n".join(f"{n:>2}  {line}" for n, line in enumerate(code.splitlines(), 1))


def raising_line(entry: Entry, run: Capture) -> Question:
    """Which line of ``entry.broken`` raised when it ran (``run.line``)."""
    lines = entry.broken.splitlines()
    candidates = [n for n, line in enumerate(lines, 1)
                  if line.strip() and not line.lstrip().startswith("#")]  # fmt: skip
    # Imports make dull choices, except in a program that is mostly imports (torch._six), where
    # an import is what raises.
    code_lines = [
        n for n in candidates if not lines[n - 1].lstrip().startswith(("import ", "from "))
    ]
    if len({run.line, *code_lines}) < 2:
        code_lines = candidates
    if len({run.line, *code_lines}) < 2:
        raise ValueError(T(N_("{key}'s program is one line: there is no line to choose"),
                           key=entry.key))  # fmt: skip
    offered = sorted(
        {run.line, *[n for n in code_lines if n != run.line][-(MAX_LINE_CHOICES - 1) :]}
    )
    choices = tuple(
        Choice(T(N_("line {n}: `{code}`"), n=n, code=lines[n - 1].strip()),
               T(N_("line {n} raised it, just now"), n=n) if n == run.line else
               T(N_("line {n} ran without an error"), n=n) if n < run.line else
               T(N_("never reached: line {line} raised first"), line=run.line))
        for n in offered
    )  # fmt: skip
    prompt = T(N_("Which line of this program raises?\n\n```text\n{code}\n```"),
               code=_numbered(entry.broken))  # fmt: skip
    proof = T(N_("torch {version} raised at line {line}: `{headline}`"),
              version=run.torch_version, line=run.line, headline=run.headline)  # fmt: skip
    return Question("raising-line", prompt, choices, offered.index(run.line), proof, TODAY_PART)


def exception_type(run: Capture) -> Question:
    """Which exception class the run raised (the text before the headline's first colon)."""
    raised = run.headline.split(":", 1)[0].strip().rsplit(".", 1)[-1]
    others = [name for name in COMMON_TYPES if name != raised][:3]
    names = sorted({raised, *others})
    choices = tuple(
        Choice(f"`{name}`", T(N_("torch raised {name}"), name=name) if name == raised
               else T(N_("torch raised {raised}, not {name}"), raised=raised, name=name))
        for name in names
    )  # fmt: skip
    prompt = T(N_("Which exception does torch {version} raise for this program?"),
               version=run.torch_version)  # fmt: skip
    proof = T(N_("The run's last line: `{headline}`"), headline=run.headline)
    return Question("exception-type", prompt, choices, names.index(raised), proof, TODAY_PART)


WORD_FOR_WORD = N_("yes, word for word")
REWORDED = N_("the same error, in other words")
ANOTHER = N_("another error: the notes' message is not what torch says now")


def wording_verdict(notes_message: str, message: str) -> str:
    """:data:`WORD_FOR_WORD` when the notes' message (stable text) is inside today's,
    :data:`REWORDED` when at least half its words are, else :data:`ANOTHER`."""
    notes, today = stable_text(notes_message), stable_text(message)
    if notes and notes in today:
        return WORD_FOR_WORD
    notes_words = set(notes.replace(":", " ").split())
    shared = notes_words & set(today.replace(":", " ").split())
    return REWORDED if notes_words and len(shared) * 2 >= len(notes_words) else ANOTHER


def notes_wording(entry: Entry, run: Capture) -> Question:
    """Whether torch today still prints ``entry.notes_message`` (:func:`wording_verdict`)."""
    if not entry.notes_message:
        raise ValueError(T(N_("{key}: the notes quote no message to compare with today's"),
                           key=entry.key))  # fmt: skip
    verdict = wording_verdict(entry.notes_message, run.message)
    options = (WORD_FOR_WORD, REWORDED, ANOTHER)
    choices = tuple(
        Choice(option, T(N_("that is what the run printed: `{headline}`"), headline=run.headline)
               if option == verdict else T(N_("no: the run printed `{headline}`"),
                                           headline=run.headline),
               notes=entry.where if option == WORD_FOR_WORD and verdict != option else None)
        for option in options
    )  # fmt: skip
    prompt = T(N_("The notes ({where}) quote `{quote}`. Does torch {version} still print it?"),
               where=entry.where, quote=entry.notes_message.replace("\\n", " ").strip(),
               version=run.torch_version)  # fmt: skip
    proof = T(N_("Today: `{headline}`"), headline=run.headline)
    return Question("notes-wording", prompt, choices, options.index(verdict), proof, TODAY_PART)


#: Characters of the fixed program's first printed line offered as a choice.
OUTPUT_CHARS = 70


def fixed_output(run: Capture, fixed: Capture) -> Question:
    """What the fixed program printed (its first line), against the mistake's error again."""
    if fixed.status != "ok" or not fixed.output:
        raise ValueError(T(N_("the fixed program did not run here ({status})"),
                           status=fixed.status))  # fmt: skip
    first = fixed.output.splitlines()[0][:OUTPUT_CHARS]
    raised = run.headline.split(":", 1)[0].strip()
    printed = Choice(T(N_("it prints `{line}`"), line=first),
                     T(N_("that is the first line it printed, just now")))  # fmt: skip
    again = Choice(T(N_("it raises `{name}` too, a line later"), name=raised),
                   T(N_("no: it ran to the end and printed `{line}`"), line=first))  # fmt: skip
    nothing = Choice(N_("it runs and prints nothing"),
                     T(N_("no: it printed `{line}`"), line=first))  # fmt: skip
    prompt = N_("The fix below: what does it print when it runs?")
    proof = T(N_("The fixed program, run just now, printed: `{line}`"), line=first)
    return Question("fixed-output", prompt, (printed, again, nothing), 0, proof, TODAY_PART)
