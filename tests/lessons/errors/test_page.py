"""AppTest for the error doctor: paste and find, an entry by name, the catalogue, bad input."""

from __future__ import annotations

import pytest

from lessons.errors.catalogue import entries, entry_by_key
from lessons.errors.entry import DOCUMENTED
from lessons.errors.questions import TODAY_PART, questions
from lessons.errors.view import QUERY, TOP_KEY
from testing.apptest import check_solo_predict_flow, container_keys
from tests.app.conftest import open_cold, open_expanders
from ui.markdown import plain


def _codes(at) -> str:
    return "\n".join(code.value for code in at.code)


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_the_page_opens_on_an_entry_found_from_a_real_traceback():
    at = open_cold("errors")
    assert not at.exception, at.exception
    assert TOP_KEY in container_keys(at) and TODAY_PART in container_keys(at)
    assert "Trying to backward through the graph a second time" in _codes(at)
    assert any("backward() through the same graph twice" in h.value for h in at.header)


def test_a_pasted_last_line_finds_its_entry_and_shows_todays_message_from_a_live_run():
    line = ("ValueError: Expected more than 1 value per channel when training, "
            "got input size torch.Size([1, 64])")  # fmt: skip
    at = open_cold("errors", {QUERY: line})
    assert not at.exception, at.exception
    entry = entry_by_key("batch-of-one")
    assert any(entry.title in h.value for h in at.header)
    assert entry.today in _codes(at)  # from the live run of the entry's program
    assert line in _codes(at)  # the matched line, shown back as code text


def test_an_empty_box_shows_the_catalogue_grouped_by_kind():
    at = open_cold("errors", {QUERY: ""})
    assert not at.exception, at.exception
    assert TOP_KEY not in container_keys(at)
    assert len(at.get("page_link")) >= len(entries())
    assert {"Autograd", "Data loading", "Serialization"} <= {s.value for s in at.subheader}


def test_an_entry_opens_by_name_and_a_documented_one_says_what_it_needs():
    documented = next(entry for entry in entries() if entry.run == DOCUMENTED)
    at = open_cold("errors", {QUERY: "", "errors.entry": documented.key})
    assert not at.exception, at.exception
    assert TOP_KEY in container_keys(at)
    assert plain(documented.needs) in _markdown(at)  # as written: its code is not markdown


@pytest.mark.parametrize("text", [
    "hello", "KeyError: 'a'", "**bold** <b>html</b> [x](javascript:alert(1))",
    "import os\nos.system('echo pwned')", "\x00\x1b[31m" * 100,
], ids=["hello", "keyerror", "markup", "python", "control"])  # fmt: skip
def test_text_that_matches_nothing_says_so_and_is_never_rendered(text):
    at = open_cold("errors", {QUERY: text})
    assert not at.exception, at.exception
    assert TOP_KEY not in container_keys(at)
    assert any("No entry matches this text" in i.value for i in at.info)
    assert "<b>html</b>" not in _markdown(at) and "javascript:" not in _markdown(at)


def test_markdown_around_a_real_message_is_shown_as_typed():
    text = "<b>**RuntimeError**</b>: Trying to backward through the graph a second time"
    at = open_cold("errors", {QUERY: text})
    assert not at.exception, at.exception
    assert text in _codes(at) and "<b>" not in _markdown(at)


def test_an_unknown_entry_in_a_link_is_dropped_with_a_notice():
    at = open_cold("errors", {QUERY: "", "errors.entry": "no-such-entry"})
    assert not at.exception, at.exception
    assert TOP_KEY not in container_keys(at)  # the catalogue instead


def test_the_page_in_chinese_translates_every_text():
    from tests.app.i18n_checks import untranslated, visible_texts

    at = open_cold("errors", {"lang": "zh"})
    assert not at.exception, at.exception
    assert untranslated(visible_texts(at)) == []


def test_solo_predict_flow_on_the_default_entry():
    at = open_expanders(open_cold("errors"), "predict.open")
    check_solo_predict_flow(at, questions(entry_by_key("backward-twice")), only_error=True)
