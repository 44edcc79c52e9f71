"""AppTest: the page's "More pitfalls from the notes" tab draws every demo, its verdict and
its callouts, in English and in Chinese."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from lessons.indexing import notes_demos as nd
from lessons.indexing import pitfalls as ip
from tests.app.conftest import notes_quotes, open_cold

K = nd.KEY
TABS, NOTES_TAB = "indexing.details_tab", "More pitfalls from the notes"


def _open(**params: str) -> AppTest:
    """The indexing page opened on the notes' pitfalls tab (``params``: more of the link)."""
    at = open_cold("indexing", {TABS: NOTES_TAB, **params})
    assert not at.exception, at.exception
    return at


def _first_view_demos() -> list[nd.Demo]:
    """Every notes demo as the tab first draws it: each menu at its first option."""
    demos = []
    for tab in nd.TABS:
        chosen: dict = {}
        for choice in tab.choices:
            chosen[choice.name] = choice.options_for(chosen)[0]
        demos.append(getattr(ip, tab.demo)(*tab.arguments(chosen)))
    return demos


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.code] + [t.value for t in at.text]
    parts += [e.value for e in (*at.info, *at.success, *at.error)]
    parts += [c.value for c in at.caption] + notes_quotes(at)
    return "\n".join(str(p) for p in parts)


def _unescape(text: str) -> str:
    return text.replace("\\", "")


def test_every_demo_draws_its_verdict_and_callouts():
    at = _open()
    shown = _unescape(_texts(at))
    for demo in _first_view_demos():
        assert demo.verdict in shown, demo.title
        assert demo.code in shown, demo.title
    assert "RuntimeError: a Tensor with 0 elements cannot be converted to Scalar" in shown
    for callout in ip.notes_callouts():
        assert callout.today_text in shown, callout.key
        assert callout.quote_display in shown, callout.key
    assert "From the notes 002:311-361, verbatim" in shown
    assert "From the notes 002:142-160: the notes' own inputs; today's output differs" in shown
    assert "A variation of the notes 004:117-132 example" in shown
    assert not at.error


def test_view_reshape_controls_change_the_verdict():
    at = _open()
    shown = _unescape(_texts(at))
    assert "view(6, 4) refused: RuntimeError: view size is not compatible" in shown
    at.selectbox(key=f"{K}.view_target").set_value((3, 2, 2, 2)).run()
    assert not at.exception
    shown = _unescape(_texts(at))
    assert "view(3, 2, 2, 2) worked on this non-contiguous tensor" in shown
    assert {m.label: m.value for m in at.metric}["view(3, 2, 2, 2)"] == "view"
    # a shape with another number of dims: the kept perm/target are replaced, nothing breaks
    at.selectbox(key=f"{K}.view_shape").set_value((3, 6)).run()
    assert not at.exception
    assert at.selectbox(key=f"{K}.view_perm").value == (1, 0)
    assert at.selectbox(key=f"{K}.view_target").value == (18,)
    shown = _unescape(_texts(at))
    assert "view(18) refused" in shown and "made a copy (new storage)" in shown


def test_other_controls_rerun_their_demo():
    at = _open()
    at.radio(key=f"{K}.zero_dim_case").set_value("two_matches").run()
    at.selectbox(key=f"{K}.inplace_variant").set_value("mul_iadd").run()
    at.selectbox(key=f"{K}.new_zeros_row").set_value(0).run()
    at.selectbox(key=f"{K}.one_value").set_value(1).run()
    assert not at.exception
    shown = _unescape(_texts(at))
    assert ip.zero_dim_index_demo(ip.TWO_MATCHES_TMP_A).verdict in shown
    assert "keeps nothing of y for its gradient" in shown
    assert ip.new_zeros_demo(0).verdict in shown
    assert "happens to agree with the right form (tensor([True]))" in shown
    assert not at.error


def test_demos_in_chinese():
    """With the session's language Chinese, verdicts are translated sentence by sentence;
    the options stay the same values, and torch's own words stay as torch wrote them."""
    at = _open(lang="zh")
    shown = _unescape(_texts(at))
    assert "笔记中的陷阱，实时运行" in [s.value for s in at.subheader]
    assert "0 维张量只接受 0 维掩码" in shown and "tmp_b 的打印结果与笔记完全一致。" in shown
    assert "A 0-d tensor accepts only" not in shown
    row = at.selectbox(key=f"{K}.new_zeros_row")
    assert row.value == 2 and "第 2 行（笔记里的例子）" in row.options
