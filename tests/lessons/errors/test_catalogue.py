"""Every entry of the catalogue against torch today and against the notes.

Each entry that runs on this machine is run: ``broken`` must raise what the entry says torch
prints today (so a torch upgrade that rewords a message fails here and the page gets updated),
``fixed`` must run to the end. The notes' quotes must be where the entry says.
"""

from __future__ import annotations

import pytest
import torch

from core.notes import NotesRef, quote_is_at
from lessons.errors.catalogue import entries, entries_of_kind, entry_by_key
from lessons.errors.entry import DOCUMENTED, GPU, KINDS, LIVE, SUBPROCESS, Entry
from lessons.errors.matching import stable_text
from lessons.errors.runs import run_snippet
from tests.notes_marks import needs_notes

ALL = entries()
RUNNING = [entry for entry in ALL if entry.run in (LIVE, SUBPROCESS)]
ON_GPU = [entry for entry in ALL if entry.run == GPU]


def _ids(entry: Entry) -> str:
    return entry.key


def _check_broken(entry: Entry) -> None:
    result = run_snippet(entry, "broken")
    if result.status == "ok" and entry.key == "no-nvidia-driver" and torch.cuda.is_available():
        pytest.skip("CUDA is present: the CPU-only mistake runs")
    assert result.status == "raised", (entry.key, result)
    assert stable_text(result.headline) == stable_text(entry.today), (
        f"{entry.key}: torch {result.torch_version} now says {result.headline!r}; update today"
    )
    assert result.line is not None and 1 <= result.line <= len(entry.broken.splitlines())


def _check_fixed(entry: Entry) -> None:
    result = run_snippet(entry, "fixed")
    assert result.status == "ok", (entry.key, result)
    assert result.output, f"{entry.key}: the fixed snippet prints what it computed"


@pytest.mark.parametrize("entry", RUNNING, ids=_ids)
def test_broken_raises_what_the_entry_says_torch_prints_today(entry):
    _check_broken(entry)


@pytest.mark.parametrize("entry", RUNNING, ids=_ids)
def test_the_fix_runs(entry):
    _check_fixed(entry)


@pytest.mark.cuda
@pytest.mark.parametrize("entry", ON_GPU, ids=_ids)
def test_gpu_entries_raise_and_are_fixed_on_a_gpu(entry):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    _check_broken(entry)
    _check_fixed(entry)


@needs_notes
@pytest.mark.parametrize("entry", ALL, ids=_ids)
def test_the_notes_quotes_are_where_the_entry_says(entry):
    for quote, where in ((entry.notes_message, entry.where), (entry.notes_cause, entry.where),
                         *((q, w) for w, q in entry.also_notes)):  # fmt: skip
        if quote:
            assert quote_is_at(quote, NotesRef.parse(where)), (entry.key, where, quote)


def test_every_entry_has_a_complete_story():
    for entry in ALL:
        assert entry.title and entry.cause and entry.fix and entry.notes_gloss, entry.key
        if entry.run == DOCUMENTED:
            assert not entry.broken and not entry.fixed, entry.key
        else:
            assert entry.broken != entry.fixed, entry.key


def test_the_catalogue_covers_the_notes_error_lists():
    """All of 000:76 (33 entries), the Horovod error, and every other place the issue lists."""
    places = [entry.where for entry in ALL] + [w for entry in ALL for w, _ in entry.also_notes]
    assert places.count("000:76") >= 33, places.count("000:76")
    wanted = [
        "000:55", "002:40", "002:99", "002:136", "002:148", "002:548", "002:589", "002:645",
        "002:1047", "002:1338", "002:1347", "002:1356", "002:1360", "004:93", "004:99",
        "004:100", "004:132", "000:39", "000:63",
    ]  # fmt: skip
    assert sorted(set(wanted) - set(places)) == []


def test_every_kind_has_entries_and_keys_are_found():
    for kind in KINDS:
        assert entries_of_kind(kind), kind
    assert entry_by_key(ALL[0].key) is ALL[0]
    with pytest.raises(ValueError, match="no-such-entry"):
        entry_by_key("no-such-entry")
    with pytest.raises(ValueError, match="kind must be one of"):
        entries_of_kind("nonsense")


@pytest.mark.parametrize(
    "bad, match",
    [({"key": "Not A Key"}, "entry key"), ({"kind": "misc"}, "kind must be"),
     ({"run": "maybe"}, "run must be"), ({"where": "76"}, "FILE:LINE"),
     ({"run": LIVE, "broken": ""}, "broken, fixed and today"),
     ({"run": DOCUMENTED, "broken": "", "fixed": "", "needs": ""}, "needs")],
)  # fmt: skip
def test_an_entry_names_what_is_wrong_with_it(bad, match):
    good = {"key": "k", "kind": "autograd", "title": "t", "where": "000:76",
            "notes_message": "m", "notes_cause": "c", "notes_gloss": "g", "cause": "c",
            "fix": "f", "run": LIVE, "broken": "b", "fixed": "f", "today": "E: t"}  # fmt: skip
    Entry(**good)
    with pytest.raises(ValueError, match=match):
        Entry(**{**good, **bad})


def test_the_readme_lists_every_entry_with_its_status():
    """lessons/errors/README.md's table is entries_markdown(): every entry, live / subprocess /
    needs a GPU / documented, as the catalogue says."""
    from pathlib import Path

    from lessons.errors.catalogue import entries_markdown

    readme = (Path(__file__).parents[3] / "lessons" / "errors" / "README.md").read_text("utf-8")
    assert entries_markdown() in readme, "regenerate the table: lessons.errors.catalogue"
