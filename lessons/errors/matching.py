"""Finding the catalogue's entry for a pasted error message or traceback.

A message's wording is stable across runs and torch versions; its numbers, pids, shapes, sizes,
paths, addresses, tensor and dtype names and quoting are not. :func:`stable_text` replaces each
of those with a placeholder, then rapidfuzz compares what is left (``fuzz.WRatio``: it weighs a
short message found inside a long one, and the same words in another order). Characters alone
make any two short error lines look alike ("KeyError: 'a'" aligns well inside many messages), so
the score is scaled by how many of the words are shared: the share of the query's words found in
the wording, or of the wording's words found in the query, whichever is larger.

:func:`find` reads a query up to three ways and keeps each entry's best score: the traceback's
last error line, its last few lines (all of a short traceback), and the error line a worker's
traceback is wrapped in ("Caught ... in DataLoader worker process 0"). Rank prefixes
(``[rank0]: ``) are dropped first. So the entry is
found from the last line alone, from a whole traceback, and from a DataLoader worker's traceback
whose last line is the worker's own error. The query is text to compare and nothing else: it is
never run, and the page never renders it as markdown or HTML.

>>> find("RuntimeError: Trying to backward through the graph a second time").best
'backward-twice'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from core.text import N_
from lessons.errors.catalogue import entries
from lessons.errors.entry import Entry

#: Characters of a query that are read: a longer paste is read from its end, where the error is.
MAX_QUERY_CHARS = 20_000
#: Lines at the end of a traceback read as "the end of the traceback", and at most this many
#: characters of them and of the error line (torch's longest messages are about 600
#: characters; a longer reading only costs time: scoring grows with the product of lengths).
TAIL_LINES, TAIL_CHARS, LINE_CHARS = 12, 2_000, 1_000
#: Distinctive words (:func:`_words`) a query must share with a wording to score at all.
MIN_SHARED_WORDS = 2
#: Score (0-100) an entry needs to be offered at all.
MIN_SCORE = 72.0
#: How many entries a search returns at most (the best first).
MAX_MATCHES = 5
#: Letters a query needs before it is compared (fewer match everything a little).
MIN_LETTERS = 6

_CONTROL = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_PATH = re.compile(r"(?:[A-Za-z]:\\|~?/)[^\s'\",:()\[\]]*")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_TENSOR_TYPE = re.compile(r"\btorch\.(?:cuda\.)?[A-Za-z]*Tensor\b")
_DTYPE = re.compile(
    r"\b(?:torch\.|c10::)?(?:float|double|half|bfloat|int|long|short|bool|uint|quint|qint|"
    r"complex|byte|char)\d*\b"
)
_OP = re.compile(r"\baten::\w+")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_DEVICE = re.compile(r"\b(?:cuda|xpu|mps|hpu):#|\bcpu\b")
_SHAPE = re.compile(r"(?:torch\.size)?[(\[]\s*[#,\s]*[)\]]")
_QUOTES = re.compile(r"[\"'`‘’“”]")
#: An exception's name is at the start of its line, within this many characters.
_NAME_CHARS = 120
_ORIGINAL_TRACEBACK = "Original Traceback (most recent call last):"
#: torchrun prefixes every line of a rank's output with its rank.
_RANK_PREFIX = re.compile(r"^\[rank\d+\]:[ ]?", re.M)
_WORD = re.compile(r"[a-z_]{3,}")
#: An error number names the error ("Error 804", "[Errno 12]"): kept, spelt in letters so the
#: number rule leaves it alone and it counts as a word.
_ERROR_CODE = re.compile(r"\b(errno|error)\s*(\d+)", re.I)
_DIGIT_LETTERS = str.maketrans("0123456789", "abcdefghij")
#: A message about a name (a module, an attribute) is about that name: "No module named
#: 'torch.fx'" is not "No module named 'torch._six'", however alike the rest reads.
_NAMED = re.compile(r"(?:no module named|has no attribute|cannot import name) ([\w.]+)")
#: Names the user chose, which say nothing about the error: an extension's, a parameter's.
_CHOSEN_NAME = re.compile(r"\b(building extension|with name) [\w.]+")
_CODE_WORD = re.compile(r"\bcode[a-j]+\b")
#: Lines torch prints under every asynchronous CUDA error: they name none of them.
_CUDA_TRAILERS = ("cuda_launch_blocking", "torch_use_cuda_dsa",
                  "cuda kernel errors might be asynchronously reported")  # fmt: skip
#: Why a query was not compared (English; the page translates).
TOO_SHORT = N_("too short to compare")
CUDA_TRAILER = N_(
    "this line follows every asynchronous CUDA error and names none of them: paste the line "
    "above it, the one that starts with RuntimeError or torch.AcceleratorError"
)
#: Words every other message has (and the placeholders): sharing them says nothing.
_COMMON_WORDS = frozenset((
    "error", "runtimeerror", "the", "and", "for", "with", "from", "that", "this", "you", "your",
    "are", "was", "not", "has", "have", "path", "tensor", "dtype", "http", "https",
))  # fmt: skip
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]+\.)?(?:\w+(?:Error|Exception|Warning|Interrupt)|error)\b")


def printable(text: str) -> str:
    """``text`` without terminal escape sequences (torch prints bold with them) and control
    characters, line breaks and tabs kept: what a page may show as code text."""
    return _CONTROL.sub("", text)


def stable_text(text: str) -> str:
    """``text`` with what changes from run to run replaced: lower case, paths ``<path>``, hex
    addresses and numbers ``#``, devices (``cuda:3``, ``cpu``) ``device``, shapes ``#``,
    tensor types ``tensor``, dtypes ``dtype``, ATen op names ``aten::op``, quotes dropped,
    whitespace collapsed; an error number is kept, in letters (``Error 804`` is
    ``error codeiae``).

    >>> stable_text("index 5 is out of bounds for dimension 0 with size 3")
    'index # is out of bounds for dimension # with size #'
    """
    text = _CONTROL.sub(" ", text)
    text = _ERROR_CODE.sub(lambda m: f"{m[1]} code{m[2].translate(_DIGIT_LETTERS)}", text)
    text = _PATH.sub(" <path> ", text)
    text = _HEX.sub("#", text)
    text = _TENSOR_TYPE.sub("tensor", text)
    text = _OP.sub("aten::op", text)
    text = _DTYPE.sub("dtype", text.lower())
    text = _NUMBER.sub("#", text)
    text = _DEVICE.sub("device", text)
    text = _SHAPE.sub("#", text)
    text = _QUOTES.sub("", text)
    text = _CHOSEN_NAME.sub(r"\1 <name>", text)
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Match:
    """One entry a query may be: its ``key`` and its ``score`` (0-100)."""

    key: str
    score: float


@dataclass(frozen=True)
class Search:
    """What :func:`find` made of a query.

    ``matches``: the entries that scored at least :data:`MIN_SCORE`, best first (at most
    :data:`MAX_MATCHES`); ``line``: the traceback's last error line as read ("" when there is
    none); ``read_chars``: how many characters of the query were read (a longer one is read from
    its end); ``refused``: why the query was not compared ("" when it was).
    """

    matches: tuple[Match, ...]
    line: str
    read_chars: int
    refused: str = ""

    @property
    def best(self) -> str | None:
        """The key of the best match, or None when nothing matched."""
        return self.matches[0].key if self.matches else None


def last_error_line(text: str) -> str:
    """The last line of ``text`` that starts like an exception (``RuntimeError: ...``,
    ``torch.OutOfMemoryError: ...``, ``CUDA error: ...``), or the last non-empty line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if _ERROR_LINE.match(line[:_NAME_CHARS]):  # a long line would make the pattern crawl
            return line
    return lines[-1] if lines else ""


def wrapping_error_line(text: str) -> str:
    """The error line just above the last ``Original Traceback`` of ``text`` ("" without one).

    A DataLoader worker's exception is re-raised in the main process as "Caught NameError in
    DataLoader worker process 0." followed by the worker's own traceback, whose last line is
    the dataset's error: the line that names the DataLoader is this one."""
    before, marker, _after = text.rpartition(_ORIGINAL_TRACEBACK)
    return last_error_line(before) if marker else ""


@dataclass(frozen=True)
class _Wording:
    """One wording of an entry as the matcher reads it."""

    key: str
    stable: str
    words: frozenset[str]
    name: str  # the module or attribute it is about ("" when none)
    codes: frozenset[str]  # its error numbers, spelt in letters
    quoted: bool  # the notes' own message


def _name(stable: str) -> str:
    found = _NAMED.search(stable)
    return found[1] if found else ""


@functools.cache
def _wordings(catalogue: tuple[Entry, ...]) -> tuple[_Wording, ...]:
    """Every wording of every entry that has enough distinctive words to be compared (a
    wording such as "CUDA error 相关问题" has one, and would match every CUDA error)."""
    found = []
    for entry in catalogue:
        for text in entry.messages:
            stable = stable_text(text)
            words = _words(stable)
            if len(words) >= MIN_SHARED_WORDS:
                found.append(_Wording(entry.key, stable, words, _name(stable),
                                      frozenset(_CODE_WORD.findall(stable)),
                                      text == entry.notes_message))  # fmt: skip
    return tuple(found)


def _words(stable: str) -> frozenset[str]:
    """The words of a stable text that tell one message from another (not "error", "the")."""
    return frozenset(_WORD.findall(stable)) - _COMMON_WORDS


def _overlap(words: frozenset[str], wording_words: frozenset[str]) -> float:
    """The share of words two texts have in common: of the query's or of the wording's, the
    larger; 0 when fewer than :data:`MIN_SHARED_WORDS` are shared."""
    shared = len(words & wording_words)
    if shared < MIN_SHARED_WORDS:
        return 0.0
    return max(shared / max(len(words), 1), shared / max(len(wording_words), 1))


def _same_facts(reading: str, codes: frozenset[str], wording: _Wording) -> bool:
    """Whether ``reading`` (whose error numbers are ``codes``) names what ``wording`` names: its
    module or attribute, and one of its error numbers when the reading gives any."""
    if wording.name and wording.name not in reading:
        return False
    return not (wording.codes and codes) or bool(wording.codes & codes)


def find(
    query: str, catalogue: Sequence[Entry] | None = None, *, limit: int = MAX_MATCHES
) -> Search:
    """The entries ``query`` (a message or a whole traceback) may be, best first.

    Of two entries that score the same, the one whose wording the notes quote comes first (an
    entry the notes describe without a message matches on today's message only).
    ``catalogue`` defaults to every entry. Raises ValueError for a ``limit`` below 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit!r}")
    read = _RANK_PREFIX.sub("", query[-MAX_QUERY_CHARS:])
    line = last_error_line(read)
    if sum(ch.isalpha() for ch in read) < MIN_LETTERS:
        return Search((), line, len(read), refused=TOO_SHORT)
    tail = "\n".join(read.strip().splitlines()[-TAIL_LINES:])[-TAIL_CHARS:]
    wrapping = wrapping_error_line(read)
    parts = (line[-LINE_CHARS:], tail, wrapping[-LINE_CHARS:])
    readings = sorted({stable_text(part) for part in parts} - {""})
    wordings = _wordings(tuple(catalogue or entries()))
    best: dict[str, tuple[float, bool]] = {}
    for reading in readings:
        words = _words(reading)
        codes = frozenset(_CODE_WORD.findall(reading))  # once per reading, not per wording
        for wording in wordings:
            # Words first: they are cheap, and a pair that shares too few cannot reach
            # MIN_SCORE, so most pairs never reach rapidfuzz (whose cost grows with length).
            overlap = _overlap(words, wording.words)
            if overlap * 100 < MIN_SCORE or not _same_facts(reading, codes, wording):
                continue
            score = fuzz.WRatio(reading, wording.stable, score_cutoff=MIN_SCORE / overlap)
            score *= overlap
            key = wording.key
            if score >= MIN_SCORE and (key not in best or (score, wording.quoted) > best[key]):
                best[key] = (score, wording.quoted)
    ranked = sorted(best.items(), key=lambda item: (-round(item[1][0], 1), not item[1][1]))
    matches = tuple(Match(key, round(score, 1)) for key, (score, _notes) in ranked[:limit])
    if not matches and any(t in stable_text(line[-LINE_CHARS:]) for t in _CUDA_TRAILERS):
        return Search((), line, len(read), refused=CUDA_TRAILER)
    return Search(matches, line, len(read))
