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
    cite,
    normalise_notes_text,
    quote_is_at,
    run_live,
    verdict_if,
)
from lessons.registry import all_callouts, callout_modules, lesson_of_module
from tests.notes_marks import needs_notes
from tests.sources import sources
from ui.notes_callout import today_heading

ROOT = Path(__file__).resolve().parents[2]


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


NOTES_SECTION = "## What the notes say, and where they are wrong"


def _notes_section(slug: str) -> str:
    path = ROOT / "lessons" / slug / "README.md"
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    match = re.search(
        rf"^{re.escape(NOTES_SECTION)}\n(.*?)(?=^## |\Z)",
        path.read_text(encoding="utf-8"),
        re.S | re.M,
    )
    assert match, f"{path.relative_to(ROOT)} lacks the section '{NOTES_SECTION[3:]}'"
    return match[1]


def test_each_lesson_readme_lists_its_callouts(callouts):
    """Each callout is listed (reference and key) in the README of the lesson that shows it."""
    by_lesson: dict[str, list[NotesCallout]] = {}
    for name in callout_modules():
        module = importlib.import_module(name)
        by_lesson.setdefault(lesson_of_module(name), []).extend(module.notes_callouts())
    found = sorted(c.key for group in by_lesson.values() for c in group)
    assert found == sorted(c.key for c in callouts)  # every callout has a lesson
    absent = []
    for slug, group in by_lesson.items():
        section = _notes_section(slug)
        absent += [
            f"{slug}: {c.key} ({c.ref})"
            for c in group
            if f"`{c.ref}`" not in section or f"`{c.key}`" not in section
        ]
    assert not absent, f"lesson READMEs do not list: {absent}"


def test_a_lesson_readme_lists_no_callout_that_is_not_there(callouts):
    """A key written in a lesson README's notes section names a callout that exists."""
    keys = {c.key for c in callouts}
    stale = []
    for readme in sorted((ROOT / "lessons").glob("*/README.md")):
        section = _notes_section(readme.parent.name)
        listed = re.findall(r"^- `[0-9]{3}:[0-9-]+` `([^`]+)`", section, re.M)
        stale += [f"{readme.parent.name}: {key}" for key in listed if key not in keys]
    assert not stale, f"lesson READMEs list callouts that no module builds: {stale}"


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
    ("lessons.indexing.tracing", "gather_unique_rows", "GATHER_DUPLICATES_CODE"),
    ("lessons.indexing.tracing", "pitfall1_arange_recipe", "PITFALL1_RECIPE_CODE"),
    ("lessons.indexing.tracing", "chained_slice_assignment", "CHAINED_SLICE_CODE"),
    ("lessons.indexing.tracing", "gather_error_text", "GATHER_ERROR_CODE"),
    ("lessons.indexing.pitfalls", "view_needs_contiguous", "VIEW_CONTIGUOUS_CODE"),
    ("lessons.indexing.pitfalls", "view_example_never_raises", "NOTES_VIEW_EXAMPLE_CODE"),
    ("lessons.batchnorm.layer", "bn_untracked_has_no_running_stats", "_UNTRACKED_CALLOUT_CODE"),
    ("core.environment", "cuda_visible_devices_order", "DEVICE_ORDER_CODE"),
    ("core.environment", "collect_env_path", "COLLECT_ENV_CODE"),
]


@pytest.mark.parametrize(
    ("module_name", "key", "constant"), SNIPPET_CALLOUTS, ids=[c[1] for c in SNIPPET_CALLOUTS]
)
@pytest.mark.parametrize("stand_in", ["print('nothing')", "raise RuntimeError('no check')"])
def test_a_run_that_shows_nothing_claims_no_verdict(
    monkeypatch, module_name, key, constant, stand_in
):
    module = importlib.import_module(module_name)
    before = {c.key: c.verdict for c in module.notes_callouts()}[key]
    assert before != "incomplete"  # today the run confirms the notes' mistake
    monkeypatch.setattr(module, constant, stand_in)
    after = {c.key: c for c in module.notes_callouts()}[key]
    assert after.verdict == "incomplete", (key, after.today)


# ---------------------------------------------------------------- a clone without the notes
@needs_notes
def test_the_notes_code_comments_are_listed_and_are_the_notes_own(monkeypatch):
    """core.notes.NOTES_CODE_COMMENTS is exactly the snippet comments found in the notes: each
    entry is there, and no comment of the app's snippets that is in the notes is missing."""
    import tools.i18n
    from core.notes import NOTES_CODE_COMMENTS, notes_corpus

    corpus = notes_corpus()
    assert [c for c in NOTES_CODE_COMMENTS if normalise_notes_text(c) not in corpus] == []
    monkeypatch.setattr(tools.i18n, "_in_the_notes", lambda comment: False)
    every = set().union(*(tools.i18n.snippet_comments(d) for d in tools.i18n.DOMAINS))
    in_notes = {c for c in every if normalise_notes_text(c) in corpus}
    assert in_notes == set(NOTES_CODE_COMMENTS)


def test_the_language_checks_do_not_read_the_notes(monkeypatch):
    """The catalog check and the page check tell the notes' words from the app's own without
    the notes files: a clone without ../shared checks its pages the same way."""
    import core.notes
    import tools.i18n
    from tests.app.i18n_checks import VisibleText, untranslated

    def absent(*_args):
        raise FileNotFoundError("no notes beside this clone")

    monkeypatch.setattr(core.notes, "notes_corpus", absent)
    monkeypatch.setattr(core.notes, "notes_lines", absent)
    assert "1. Calculate filters window size" not in tools.i18n.snippet_comments("flow")
    assert "Tensor -> Numpy" not in tools.i18n.snippet_comments("indexing")
    assert "n = 4 per channel" in tools.i18n.snippet_comments("batchnorm")  # the app's own
    quote = (
        '<blockquote lang="en" class="notes-quote" style="margin: 0">'
        "all values in a row along the specified dimension must be unique</blockquote>"
    )
    texts = [
        VisibleText("code.comment", "Calculate filters window size", False),
        VisibleText("html.body", quote, True),
    ]
    assert untranslated(texts) == []
    # the app's own English is still found, quote-like text outside the marked quote too
    assert untranslated([VisibleText("code.comment", "n = 4 per channel and more", False)])
    assert untranslated([VisibleText("text.body", "all values in a row must be unique", True)])


def test_a_lone_clone_passes_or_skips_what_needs_the_notes(tmp_path):
    """With the notes' folder empty (as on a clone without ../shared), the notes-dependent
    tests skip with the reason and the catalog checks of the pages that quote the notes' code
    pass (the notes' comments are not taken for app strings)."""
    import os
    import subprocess
    import sys

    from core.notes import NOTES_DIR_ENV

    env = {**os.environ, NOTES_DIR_ENV: str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/shared/test_notes.py", "tests/app/test_i18n.py",
         "-k", "quotes_the_notes or code_comments_are_listed"
               " or (every_marked_string and (flow or indexing))"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"the notes are not beside the repo ({tmp_path})" in result.stdout, result.stdout


# ---------------------------------------------------------------- quotes carry their language
def _quote_page(lang: str):
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st

        from ui.notes_callout import notes_quote

        st.session_state["lang"] = st.query_params.get("lang", "en")
        notes_quote("size 代表的是输出网格 <b>的</b>\n分辨率", "size is the output grid")
        notes_quote("all values in a row must be unique", "the same, in English already")

    at = AppTest.from_function(page, default_timeout=60)
    at.query_params["lang"] = lang
    return at.run()


def _html_bodies(at) -> list[str]:
    found: list[str] = []

    def walk(node):
        if getattr(node, "type", "") == "html":
            found.append(node.proto.body)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_notes_quote_carries_its_language(lang):
    """A screen reader reads the notes' Chinese with Chinese rules (WCAG 3.1.2): the quote is
    marked lang="zh-CN" (a quote of English docs lang="en"), escaped, its lines kept; an English
    visitor gets the English gloss beside it, a Chinese one the quote alone."""
    at = _quote_page(lang)
    assert not at.exception, at.exception
    chinese, english = _html_bodies(at)
    assert chinese.startswith('<blockquote lang="zh-CN" class="notes-quote"')
    assert "&lt;b&gt;的&lt;/b&gt;\n分辨率</blockquote>" in chinese  # escaped, line kept
    assert english.startswith('<blockquote lang="en" class="notes-quote"')
    glosses = [t.value for t in at.text if t.value.startswith("In English:")]
    expected = ["In English: size is the output grid", "In English: the same, in English already"]
    assert glosses == (expected if lang == "en" else [])


def test_every_module_with_callouts_is_found():
    """A module defining notes_callouts() anywhere in core/ or a lesson is collected, and the
    search finds the ones known to exist (a move cannot hide callouts from the checks)."""
    found = set(callout_modules())
    assert {"core.environment", "lessons.warp.affine"} <= found
    for path in sources("core/*.py", "lessons/*/*.py"):
        if "\ndef notes_callouts(" in path.read_text(encoding="utf-8"):
            assert ".".join(path.relative_to(ROOT).with_suffix("").parts) in found, path
