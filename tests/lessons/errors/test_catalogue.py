"""Every entry of the catalogue against torch today and against the notes.

Each entry that runs on this machine is run: ``broken`` must raise what the entry says torch
prints today (so a torch upgrade that rewords a message fails here and the page gets updated),
``fixed`` must run to the end. The notes' quotes must be where the entry says.
"""

from __future__ import annotations

import pytest
import torch

from core.notes import NotesRef, notes_lines, quote_is_at
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
    if result.status == "skipped" and entry.needs_no_gpu:
        pytest.skip("CUDA is present: the CPU-only mistake is not run")
    assert result.status == "raised", (entry.key, result)
    expected = {stable_text(entry.today)}
    if entry.needs_no_gpu and torch.version.cuda is None:  # a CPU-only wheel words it its way
        expected |= {stable_text(text) for text in entry.also}
    assert stable_text(result.headline) in expected, (
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


#: One phrase of each of the 33 errors run together on the notes' line 000:76, in their order
#: (the SyncBN deadlock by its all_reduce under rank 0; the poll hang and its RecursionError as
#: the notes tell them, two fragments of one story).
FRAGMENTS_000_76 = (
    'CUDNN_STATUS_NOT_INITIALIZED',
    'is killed by signal: Killed',
    'Cannot allocate memory',
    'device-side assert triggered',
    'Expected more than 1 value per channel',
    'Trying to backward through the graph a second time',
    'Found no NVIDIA driver',
    'Error compiling objects for extension',
    'DataParallel 封装模型在指针式参数输入时',
    'QuantizedCPU',
    'if local_rank == 0 下面',
    'GPU0 显存暴涨',
    'torchvision.tranform 似乎会在多进程中卡住',
    'Expected to mark a variable ready only once',
    '_jit_compile->baton.wait()',
    "can't optimize a non-leaf Tensor",
    'fd_event_list = self._poll.poll(timeout)',
    'RecursionError: maximum recursion depth exceeded',
    'CUDA error: out of memory',
    'Caught AttributeError in DataLoader worker process 0',
    'cuDevicePrimaryCtxRelease_v2',
    'torch.linalg.lstsq()',
    'modified by an inplace operation',
    'Unable to cast from non-held to held instance',
    'does not require grad and does not have a grad_fn',
    'Error 804',
    'UnicodeDecodeError',
    'PTX was compiled with an unsupported toolchain',
    'finished reduction in the prior iteration',
    'CUDA error 相关问题',
    'requires_grad 失效',
    'CUDA initialization: CUDA unknown error',
    '休眠时进入假死状态',
)  # fmt: skip


def _quotes_at(where: str) -> list[tuple[str, str]]:
    """``(entry key, quote)`` for every quote of the notes' line ``where`` in the catalogue."""
    found = []
    for entry in ALL:
        if entry.where == where:
            found += [(entry.key, entry.notes_message), (entry.key, entry.notes_cause)]
        found += [(entry.key, quote) for place, quote in entry.also_notes if place == where]
    return [(key, quote) for key, quote in found if quote]


@needs_notes
def test_every_error_of_the_notes_list_is_an_entry():
    """Each of the 33 errors of 000:76 is quoted by an entry (the phrase is in the notes' line
    too), and every one of its quotes is one of them: nothing is counted twice to reach 33."""
    from core.notes import normalise_notes_text

    line = notes_lines(NotesRef.parse("000:76"))
    quotes = _quotes_at("000:76")
    assert len(FRAGMENTS_000_76) == 33
    for fragment in FRAGMENTS_000_76:
        phrase = normalise_notes_text(fragment)
        assert phrase in line, fragment
        assert any(phrase in normalise_notes_text(q) for _key, q in quotes), fragment
    keys = {key for key, _q in quotes}
    covering = {key for key, q in quotes for f in FRAGMENTS_000_76
                if normalise_notes_text(f) in normalise_notes_text(q)}  # fmt: skip
    assert keys == covering, f"quotes of 000:76 that are none of the 33: {keys - covering}"


def test_the_catalogue_covers_the_other_places_the_notes_quote_errors():
    places = [entry.where for entry in ALL] + [w for entry in ALL for w, _ in entry.also_notes]
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
