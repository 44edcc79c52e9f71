"""core.notes: citations, live runs, and every callout checked against the notes' own text."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from core.notes import (
    NOTES_FILES,
    VERDICTS,
    NotesCallout,
    NotesRef,
    all_callouts,
    cite,
    normalise_notes_text,
    quote_is_at,
    run_live,
    verdict_if,
)
from tests.notes_marks import needs_notes
from ui.notes_callout import today_heading

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def callouts() -> list[NotesCallout]:
    return all_callouts()


def test_ref_parse_and_str():
    assert str(NotesRef.parse("002:926")) == "002:926"
    assert str(NotesRef.parse(" 002:980-992 ")) == "002:980-992"
    assert list(NotesRef.parse("004:219-221").lines) == [219, 220, 221]
    assert NotesRef.parse("000:5").filename == NOTES_FILES["000"]
    assert cite("002:1035") == "notes 002:1035"


@pytest.mark.parametrize("bad", ["2:926", "002", "002:", "002:10-5", "003:1", "002:0", "x"])
def test_ref_exception(bad):
    with pytest.raises(ValueError):
        NotesRef.parse(bad)


def test_run_live_captures_print_error_and_warning():
    ok = run_live("import torch\nprint(torch.tensor([1, 2]).sum().item())")
    assert ok.output == "3" and ok.error is None and not ok.raised
    bad = run_live("print('before')\nraise IndexError('index 3 is out of bounds')")
    assert bad.output == "before"
    assert bad.error == "IndexError: index 3 is out of bounds" and bad.error_type == "IndexError"
    assert bad.transcript == "before\nIndexError: index 3 is out of bounds"
    warned = run_live("import warnings\nwarnings.warn('careful', UserWarning)")
    assert warned.output == "Warning: UserWarning: careful"


def test_run_live_namespace_is_fresh():
    run_live("leak = 1")
    assert run_live("print('leak' in globals())").output == "False"


def test_callout_rejects_unknown_verdict():
    with pytest.raises(ValueError, match="verdict"):
        NotesCallout("k", "t", NotesRef.parse("002:1"), "q", "g", "maybe", "today", run_live(""))


def test_today_heading_names_who_produced_the_evidence():
    run = run_live("print(1)")
    plain = NotesCallout("k", "t", NotesRef.parse("000:5"), "q", "g", "wrong", "today", run)
    assert today_heading(plain) == f"PyTorch {run.torch_version} does"
    simulated = NotesCallout(
        "k", "t", NotesRef.parse("000:5"), "q", "g", "wrong", "today", run, "the simulator"
    )
    assert today_heading(simulated) == "Today, the simulator does"


def test_simulated_callouts_say_so(callouts):
    # The memory callouts run the allocator simulator, not PyTorch's allocator: say so.
    for callout in callouts:
        if "allocator_sim" in callout.run.code:
            assert "simulator" in today_heading(callout), callout.key


def test_quote_display_breaks_lines_where_the_notes_escape_them():
    run = run_live("")
    callout = NotesCallout(
        "k", "t", NotesRef.parse("000:32"), "def f():\\n return 1", "g", "wrong", "today", run
    )
    assert callout.quote_display == "def f():\n return 1"


def test_normalise_collapses_escaped_newlines():
    assert normalise_notes_text("a\\nb  \n c") == "a b c"


def test_callout_keys_are_unique(callouts):
    keys = [c.key for c in callouts]
    assert len(keys) == len(set(keys)), keys


def test_callouts_have_verdicts_and_live_runs(callouts):
    for callout in callouts:
        assert callout.verdict in VERDICTS
        assert callout.today.strip(), callout.key
        assert callout.run.code.strip(), callout.key


@needs_notes
def test_every_callout_quotes_the_notes_at_its_line(callouts):
    missing = [f"{c.key} @ {c.ref}" for c in callouts if not quote_is_at(c.quote_zh, c.ref)]
    assert not missing, f"quotes not found at their cited lines: {missing}"


def test_readme_lists_every_callout(callouts):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## What the notes say, and where they are wrong\n(.*?)(?=^## )", readme,
                      re.S | re.M)
    assert match, "README lacks the section 'What the notes say, and where they are wrong'"
    section = match[1]
    absent = [c.key for c in callouts if f"`{c.ref}`" not in section or c.key not in section]
    assert not absent, f"README section does not list: {absent}"


def test_callout_titles_survive_markdown():
    # Titles go through st.markdown; '2**k + 1' must not turn into bold.
    from ui.markdown import plain

    assert plain("not 2**k + 1") == r"not 2\*\*k + 1"
    assert plain("[x](http://e)") == r"[x]\(http://e)"


def test_verdict_if():
    assert verdict_if(True, "wrong") == "wrong"
    assert verdict_if(False, "out of date") == "incomplete"
    with pytest.raises(ValueError, match="verdict"):
        verdict_if(True, "maybe")


#: (module, callout key, the module constant holding its snippet): each box decides its verdict
#: from its run; a run that shows nothing must not leave a confident badge.
SNIPPET_CALLOUTS = [
    ("core.indexing", "gather_unique_rows", "GATHER_DUPLICATES_CODE"),
    ("core.indexing", "pitfall1_arange_recipe", "PITFALL1_RECIPE_CODE"),
    ("core.indexing", "chained_slice_assignment", "CHAINED_SLICE_CODE"),
    ("core.indexing", "gather_error_text", "GATHER_ERROR_CODE"),
    ("core.indexing_pitfalls", "view_needs_contiguous", "VIEW_CONTIGUOUS_CODE"),
    ("core.indexing_pitfalls", "view_example_never_raises", "NOTES_VIEW_EXAMPLE_CODE"),
    ("core.batchnorm", "bn_untracked_has_no_running_stats", "_UNTRACKED_CALLOUT_CODE"),
    ("core.environment", "cuda_visible_devices_order", "DEVICE_ORDER_CODE"),
    ("core.environment", "collect_env_path", "COLLECT_ENV_CODE"),
]


@pytest.mark.parametrize(("module_name", "key", "constant"), SNIPPET_CALLOUTS,
                         ids=[c[1] for c in SNIPPET_CALLOUTS])
@pytest.mark.parametrize("stand_in", ["print('nothing')", "raise RuntimeError('no check')"])
def test_a_run_that_shows_nothing_claims_no_verdict(monkeypatch, module_name, key, constant,
                                                    stand_in):
    module = importlib.import_module(module_name)
    before = {c.key: c.verdict for c in module.notes_callouts()}[key]
    assert before != "incomplete"  # today the run confirms the notes' mistake
    monkeypatch.setattr(module, constant, stand_in)
    after = {c.key: c for c in module.notes_callouts()}[key]
    assert after.verdict == "incomplete", (key, after.today)
