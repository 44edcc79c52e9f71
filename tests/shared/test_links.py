"""ui/links.py: every value control is bound to the URL; the notice and the view link."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.sources import sources, streamlit_sources
from ui import links

ROOT = Path(__file__).resolve().parents[2]
VALUE_WIDGETS = {
    "slider", "select_slider", "selectbox", "radio", "toggle", "checkbox", "number_input",
    "text_input", "text_area", "multiselect", "segmented_control", "pills",
}  # fmt: skip
#: Keyed value controls that are deliberately not in the URL, with the reason.
NOT_BOUND: dict[str, str] = {
    "CODE_KEY": "a class code being typed: joining puts it in the URL as ?class=, with a seat",
    "FOLLOW_KEY": "one student's choice in a class: the URL carries the class and seat instead",
    "memory.free_select": "names this session's own live tensors: meaningless in another browser",
    "LANG_KEY": "ui.i18n keeps ?lang=zh itself: bound, the URL would hold the label (中文)",
    "PICK_KEY": "which question the collapsed Predict panel shows: the panel's open state is "
    "not in the URL either, and a class gets its question from the teacher's round",
    "answer_key": "a learner's prediction: a shared link would answer for the next reader",
    "ANSWER_KEY": "a student's answer in a class round: the class store holds it per seat",
    "indexing.index_preset": "a view of the typed x[...] expression, which the link carries: "
    "binding both could open an example's name beside another expression",
}


def _calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node


def _key_text(call: ast.Call) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "key":
            return ast.unparse(keyword.value).strip("'\"")
    return None


def _is_bound(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg is None and ast.unparse(keyword.value) == "BOUND":
            return True
        if keyword.arg == "bind":
            return True
    return False


def _unbound_controls(root: Path = ROOT) -> list[str]:
    missing = []
    for path in streamlit_sources(root):
        for call in _calls(path):
            key = _key_text(call)
            if call.func.attr not in VALUE_WIDGETS or key is None or key in NOT_BOUND:
                continue
            if not _is_bound(call):
                missing.append(f"{path.relative_to(root)}:{call.lineno} {call.func.attr} {key}")
    return missing


def test_every_keyed_value_control_is_bound_to_the_url():
    assert _unbound_controls() == []


def test_the_check_finds_an_unbound_control(tmp_path):
    page = tmp_path / "lessons" / "demo" / "page.py"
    page.parent.mkdir(parents=True)
    page.write_text('import streamlit as st\nst.slider("a", 0, 9, key="demo.a")\n')
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui" / "shared.py").write_text("")
    assert _unbound_controls(tmp_path) == ["lessons/demo/page.py:2 slider demo.a"]


def test_tabs_that_choose_a_view_are_bound():
    """A keyed, lazy st.tabs (on_change="rerun") chooses what the page computes: in the URL."""
    missing = []
    for path in sources("lessons/*/page.py"):
        for call in _calls(path):
            if call.func.attr == "tabs" and _key_text(call) and not _is_bound(call):
                missing.append(f"{path.name}:{call.lineno} {_key_text(call)}")
    assert missing == []


def test_widget_state_is_kept_by_streamlit_not_by_hand():
    """persist_state="session" keeps values across page switches: no hand-written copy."""
    for path in [*streamlit_sources(), ROOT / "app.py"]:
        assert "keep_widget_state" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [("0.1", "0.10", True), ("True", "true", True), ("30", "30.0", True), ("y2", "y2", True),
     ("y2", "y3", False), ("abc", "1", False), ("1e308", "1", False)],
)  # fmt: skip
def test_same_value(a, b, same):
    assert links._same_value(a, b) is same


def test_notice_names_only_the_pages_own_keys():
    assert links.link_notice([], 0) == ""
    text = links.link_notice(["warp.angle"], 2)
    assert "`warp.angle`" in text and "2 unknown parameters" in text
    assert links.link_notice([], 1).endswith("1 unknown parameter ignored.")


def test_view_link_is_the_url_when_short():
    link, left_out = links.view_link("http://h/warp", {"warp.angle": ["45"], "sidebar.seed": ["3"]})
    assert link == "http://h/warp?warp.angle=45&sidebar.seed=3"
    assert left_out == []
    assert links.view_link("http://h/warp", {}) == ("http://h/warp", [])
    # the Home page's base URL has no path: the link is what the browser's address bar shows
    assert links.view_link("http://h:8501", {"sidebar.seed": ["7"]})[0] == "http://h:8501/?sidebar.seed=7"


def test_view_link_leaves_out_the_longest_edit_until_it_fits():
    params = {"indexing.src": ["1, " * 900], "indexing.preset": ["y2"], "indexing.dim": ["1"]}
    link, left_out = links.view_link("http://h/indexing", params)
    assert len(link) <= links.MAX_LINK_CHARS
    assert left_out == ["indexing.src"]
    assert "indexing.preset=y2" in link and "indexing.dim=1" in link


def test_readme_lists_every_lesson_as_the_app_does():
    """The README's Lessons section is LESSON_LINKS, as the Home page draws it (absolute links),
    and nothing else: a lesson taken out of a ``links.py`` leaves the README too."""
    from lessons.registry import LESSONS, lesson_links, lessons_markdown

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n## Lessons\n" in readme, "README lacks its '## Lessons' section"
    section = readme.split("\n## Lessons\n", 1)[1].split("\n## ", 1)[0]
    expected = lessons_markdown("http://localhost:8501/", {p.slug: p.title for p in LESSONS})
    assert expected in section, f"README's lessons differ from LESSON_LINKS; they are:\n{expected}"
    listed = [line for line in section.splitlines() if line.startswith("- **[")]
    assert listed == expected.splitlines(), f"README lists lessons the app does not:\n{expected}"
    assert len(lesson_links()) >= 12
