"""AppTest for the indexing page: presets, dim selector, bad inputs, x[...] tab, pitfall demos."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from lessons.indexing import (
    cases,
    examples,
    explanation,
    parsing,
    presets,
    seeded_pitfalls,
    tracing,
)
from testing.apptest import switch_to
from tests.app.conftest import notes_quotes, open_cold, open_tab

K = "indexing"
TABS, PITFALLS = f"{K}.details_tab", "8 pitfalls"


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def _codes(at) -> list[str]:
    return [c.value for c in at.code]


@pytest.fixture
def page(open_page):
    at = open_page("indexing")
    assert not at.exception, at.exception
    return at


def test_hidden_tabs_do_not_run(page):
    # Lazy tabs: on arrival only the open tab of the details runs,
    # so a change to the lesson's controls does not redraw the pitfalls nobody looks at.
    at = page
    assert at.session_state[TABS] == "gather & scatter_"
    assert not [s for s in at.selectbox if s.key == f"{K}.pitfall"]
    assert not [t for t in at.text if "Pitfalls from the notes" in t.value]
    open_tab(at, TABS, PITFALLS)
    assert at.selectbox(key=f"{K}.pitfall").value == 1
    open_tab(at, TABS, "More pitfalls from the notes")
    assert not [s for s in at.selectbox if s.key == f"{K}.pitfall"]
    assert any("Pitfalls from the notes, run live" in h.value for h in at.subheader)
    # the lesson's own tensors stay drawn whichever tab is open
    assert at.text_input(key=f"{K}.index") is not None


def test_smoke(page):
    at = page
    assert at.title[0].value == "Indexing explainer"
    assert not _errors(at)
    # default preset is the gather example; its formula for out[0][0] and the snippet are shown
    assert "out[0][0] = input[0][index[0][0]] = input[0][0] = 1" in _codes(at)
    assert any("torch.gather(input, 1, index)" in c for c in _codes(at))
    assert any(
        s.value.startswith("Matches the documented output (notes 002:1035), compared exactly")
        for s in at.success
    )
    assert "From the notes 002:1035, verbatim" in " ".join(_captions(at))


def _captions(at) -> list[str]:
    return [c.value for c in at.caption]


def _callout_keys(at) -> set[str]:
    """Keys of the notes callouts on the page: their containers are keyed notes_callout-<key>,
    which Streamlit stores at the end of the block id ("$$ID-<hash>-notes_callout-<key>")."""
    keys, todo = set(), [at.main]
    while todo:
        node = todo.pop()
        block_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if "-notes_callout-" in block_id:
            keys.add(block_id.split("-notes_callout-", 1)[1])
        todo.extend(getattr(node, "children", {}).values())
    return keys


def test_presets(page):
    at = page
    for preset in presets.PRESETS:
        at.selectbox(key=f"{K}.preset").select(preset.key).run()
        assert not at.exception, (preset.key, at.exception)
        assert at.selectbox(key=f"{K}.op").value == preset.op
        assert at.selectbox(key=f"{K}.dim").value == preset.dim
        expected_reduce = preset.reduce or "none"
        if preset.op == "scatter":
            assert at.selectbox(key=f"{K}.reduce").value == expected_reduce
        else:  # gather has no reduce: the box is hidden, its value kept
            assert f"{K}.reduce" not in {s.key for s in at.selectbox}
            assert at.session_state[f"{K}.reduce"] == expected_reduce
        # the snippet the page shows is the one the core test executes and compares
        shown = [c.strip() for c in _codes(at)]
        assert presets.run_preset(preset).snippet.strip() in shown, preset.key
        # ... and the notes' own code, with what it prints today
        assert preset.notes_code.strip() in shown, preset.key
        assert presets.run_notes_code(preset).transcript.strip() in shown, preset.key
        captions = " ".join(_captions(at))
        successes = " ".join(s.value for s in at.success)
        if preset.verbatim:
            assert f"From the notes {preset.ref}, verbatim" in captions, preset.key
            assert "A variation of" not in captions.split("Tensors drawn")[0], preset.key
        else:
            assert f"A variation of the notes {preset.ref} example" in captions, preset.key
            assert "From the notes" not in captions.split("Tensors drawn")[0], preset.key
            assert "Matches" not in successes, preset.key
        if preset.notes_error:
            assert any("index 3 is out of bounds" in e for e in _errors(at)), _errors(at)
            assert any("torch's own error message" in i.value for i in at.info)
            assert any("error = str(exc)" in c for c in _codes(at))
            assert "gather_error_text" in _callout_keys(at)
        else:
            assert not _errors(at), (preset.key, _errors(at))
        if preset.verbatim and preset.printed and not preset.notes_error:
            assert f"Matches the documented output (notes {preset.ref})" in successes, preset.key
        if preset.verbatim and not preset.printed:
            assert "Matches what the notes' code gives" in successes, preset.key
        if preset.key == "scatter_y2":
            warnings = " ".join(w.value for w in at.warning)
            assert "Collisions" in warnings and "unspecified" in warnings and "CUDA" in warnings
            assert "out[0][0] <- src[0][0], src[1][0]." in warnings  # only column 0 collides
            assert "Only column 0 collides (notes 002:940)" in captions
        if preset.key == "group_means":
            assert any("means = out[groups] / counts" in c for c in _codes(at))
            assert any("scatter_add_(0, index, src)" in c for c in _codes(at))
        if preset.key == "gather":
            assert "gather_unique_rows" in _callout_keys(at)


def test_preset_menu_labels_variations(page):
    at = page
    options = at.selectbox(key=f"{K}.preset").options
    assert "y1: zeros(3, 5).scatter_(0, index, x) · notes 002:921" in options
    assert any(o.endswith("· variation of notes 004:227-240") for o in options)
    assert len(options) == len(presets.PRESETS)


def test_edited_preset_claims_nothing(page):
    at = page
    at.selectbox(key=f"{K}.preset").select("group_means").run()
    at.selectbox(key=f"{K}.reduce").select("add").run()  # the deprecated spelling: not the notes'
    assert not at.exception
    assert not [s for s in at.success if "Matches" in s.value]
    # Only the preset's own caption counts: the notes demos tab has verbatim citations of its own.
    ref = presets.PRESETS_BY_KEY["group_means"].ref
    assert not any(c.startswith(f"From the notes {ref}") for c in _captions(at))
    assert any("deprecated" in c for c in _captions(at))


def test_callouts_show_the_notes_and_today(page):
    at = page
    callouts = {c.key: c for c in tracing.notes_callouts()}
    texts = [t.value for t in at.text]
    c = callouts["gather_unique_rows"]
    assert c.quote_display in notes_quotes(at) and c.today_text in texts
    assert c.run.transcript in _codes(at)
    open_tab(at, TABS, PITFALLS)
    at.selectbox(key=f"{K}.pitfall").select(1).run()
    assert "pitfall1_arange_recipe" in _callout_keys(at)
    texts = [t.value for t in at.text]
    assert callouts["pitfall1_arange_recipe"].today_text in texts
    assert "A variation of the notes 002:421-430 example" in " ".join(_captions(at))
    at.selectbox(key=f"{K}.pitfall").select(3).run()
    assert "chained_slice_assignment" in _callout_keys(at)
    assert callouts["chained_slice_assignment"].today_text in [t.value for t in at.text]
    at.selectbox(key=f"{K}.pitfall").select(4).run()
    assert "Not in the notes: the app adds this pitfall." in _captions(at)
    assert not {"pitfall1_arange_recipe", "chained_slice_assignment"} & _callout_keys(at)


def test_dim_selector_and_element_choice(page):
    at = page
    at.selectbox(key=f"{K}.cell").select("out[1][0]").run()
    assert "out[1][0] = input[1][index[1][0]] = input[1][2] = 6" in _codes(at)
    at.selectbox(key=f"{K}.dim").select(-1).run()  # same as dim 1
    assert not at.exception and not _errors(at)
    assert "out[1][0] = input[1][index[1][0]] = input[1][2] = 6" in _codes(at)
    at.selectbox(key=f"{K}.dim").select(0).run()
    assert not at.exception
    assert any("out of bounds for dimension 0 with size 2" in e for e in _errors(at))
    at.selectbox(key=f"{K}.dim").select(2).run()
    assert any("dim=2 is out of range" in e for e in _errors(at))
    # the rest of the page keeps working
    open_tab(at, TABS, PITFALLS)
    assert at.selectbox(key=f"{K}.pitfall") is not None and at.success
    at.selectbox(key=f"{K}.dim").select(1).run()
    assert not _errors(at)


def test_selection_state_is_read(page):
    """A click arrives as chart state; the page maps it to the explained element."""
    at = page
    try:
        at.session_state[f"{K}.out_chart"] = {"selection": {"points": [{"customdata": [1, 1]}]}}
    except Exception:  # pragma: no cover - Streamlit may refuse to fake chart state
        pytest.skip("AppTest cannot set plotly selection state")
    at.run()
    assert not at.exception
    assert at.selectbox(key=f"{K}.cell").value == "out[1][1]"
    assert "out[1][1] = input[1][index[1][1]] = input[1][0] = 4" in _codes(at)


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        ("index", "[[0, 0], [3, 0]]", "index 3 is out of bounds for dimension 1 with size 3"),
        ("index", "[[0, -1], [0, 0]]", "index -1 is out of bounds"),
        ("index", "[[0, 1.5], [1, 0]]", "an index must hold whole numbers"),
        ("index", "[0, 2]", "index has 1 dim(s) but input has 2"),
        ("first", "[[1, a, 3], [4, 5, 6]]", "input[0][1] = 'a' is not a number"),
        ("first", "[]", "input is empty"),
        ("first", "[[1, 99999999999999999999, 3], [4, 5, 6]]", "must fit in int64"),
        # user text is escaped, not rendered as markdown (bold, LaTeX)
        ("first", "[[1, **x**, $y$], [4, 5, 6]]", r"input[0][1] = '\*\*x\*\*' is not a number"),
        ("first", "[" + ", ".join(["[1, 2, 3, 4, 5, 6, 7]"] * 7) + "]", "over the page limit"),
    ],
)
def test_bad_inputs(page, field, text, message):
    at = page
    at.text_input(key=f"{K}.{field}").input(text).run()
    assert not at.exception, at.exception
    assert any(message in e for e in _errors(at)), _errors(at)
    # the page keeps working: pitfalls still render and a preset restores a clean state
    open_tab(at, TABS, PITFALLS)
    assert at.success
    at.button(key=f"{K}.reload").click().run()  # back to the (unchanged) gather preset
    assert not at.exception and not _errors(at)
    assert "out[0][0] = input[0][index[0][0]] = input[0][0] = 1" in _codes(at)


def test_scatter_controls_and_random(page):
    at = page
    at.selectbox(key=f"{K}.preset").select("scatter_y2").run()
    for reduce in ("add", "sum", "mean", "amax"):
        at.selectbox(key=f"{K}.reduce").select(reduce).run()
        assert not at.exception and not _errors(at), reduce
    at.checkbox(key=f"{K}.include_self").uncheck().run()
    assert not at.exception and not _errors(at)
    at.text_input(key=f"{K}.src").input("2.5").run()
    assert any("needs a tensor src" in e for e in _errors(at))
    at.selectbox(key=f"{K}.reduce").select("none").run()
    assert not _errors(at)
    for ndim in (1, 2, 3):
        at.selectbox(key=f"{K}.random_ndim").select(ndim).run()
        before = at.text_input(key=f"{K}.index").value
        at.button(key=f"{K}.random").click().run()
        assert not at.exception and not _errors(at), _errors(at)
        assert at.text_input(key=f"{K}.index").value != before
    at.selectbox(key=f"{K}.op").select("gather").run()
    at.button(key=f"{K}.random").click().run()
    assert not at.exception and not _errors(at)


def test_scatter_odd_inputs(page):
    at = page
    at.selectbox(key=f"{K}.preset").select("one_hot_long_src").run()
    at.text_input(key=f"{K}.src").input("1.23").run()  # float scalar into the int64 zeros
    at.selectbox(key=f"{K}.cell").select("out[1][2]").run()
    assert not at.exception and not _errors(at)
    assert "out[1][2] = scalar = 1.23" in _codes(at)
    at.text_input(key=f"{K}.src").input("99999999999999999999").run()
    assert not at.exception
    assert any("must fit in int64" in e for e in _errors(at)), _errors(at)
    # group means only for a zero dest: otherwise out / counts is no mean
    at.selectbox(key=f"{K}.preset").select("group_means").run()
    assert [e.label for e in at.expander if e.label.startswith("Group means")]
    assert any("means = out[groups] / counts" in c for c in _codes(at))
    at.text_input(key=f"{K}.first").input("[5.0, 0.0, 0.0]").run()
    assert not at.exception and not _errors(at)
    assert not [e.label for e in at.expander if e.label.startswith("Group means")]
    assert not any("means = out[groups] / counts" in c for c in _codes(at))


def test_state_survives_a_visit_to_another_page(page):
    at = page
    at.selectbox(key=f"{K}.preset").select("one_hot").run()
    at.text_input(key=f"{K}.index").input("[[5], [0], [3], [2]]").run()
    at.selectbox(key=f"{K}.cell").select("out[0][5]").run()
    at.text_input(key=f"{K}.expr").input("[0, 2], 1").run()
    open_tab(at, TABS, PITFALLS)
    at.selectbox(key=f"{K}.pitfall").select(5).run()
    at.slider(key=f"{K}.pitfall_n").set_value(3).run()
    switch_to(at, "home").run()
    switch_to(at, "indexing").run()
    assert not at.exception, at.exception
    assert at.selectbox(key=f"{K}.preset").value == "one_hot"
    assert at.text_input(key=f"{K}.index").value == "[[5], [0], [3], [2]]"
    assert at.selectbox(key=f"{K}.cell").value == "out[0][5]"
    assert at.text_input(key=f"{K}.expr").value == "[0, 2], 1"
    assert at.selectbox(key=f"{K}.pitfall").value == 5
    assert at.slider(key=f"{K}.pitfall_n").value == 3
    assert not at.warning or all("Session State" not in w.value for w in at.warning)


def test_random_uses_global_seed(page):
    at = page
    at.number_input(key="sidebar.seed").set_value(42).run()
    at.button(key=f"{K}.random").click().run()  # first click of this session: seed + 1
    expected = examples.random_case("gather", 2, 43)
    assert at.text_input(key=f"{K}.first").value == expected["first"]
    assert at.text_input(key=f"{K}.index").value == expected["index"]
    assert at.selectbox(key=f"{K}.dim").value == int(expected["dim"])
    assert not at.exception and not _errors(at)


def test_index_tab(page):
    at = page
    for label in examples.INDEX_PRESETS:
        at.selectbox(key=f"{K}.index_preset").select(label).run()
        assert not at.exception and not _errors(at), label
        metric = [m for m in at.metric if m.label == "same data_ptr"][0]
        expected = "True" if "(view" in label else None
        if expected:
            assert metric.value == expected, label
        if "(copy)" in label:
            assert metric.value == "False", label
    at.text_input(key=f"{K}.expr").input("[0, 2], 1").run()
    assert "out[0] = x[0][1] = 1" in _codes(at)
    at.selectbox(key=f"{K}.index_cell").select("out[1]").run()
    assert "out[1] = x[2][1] = 9" in _codes(at)
    for bad, message in [
        ("1.5", "float"),
        ("[5]", "out of bounds"),
        ("open('x')", "not supported"),
        ("0, 0, 0", "too many indices"),
    ]:
        at.text_input(key=f"{K}.expr").input(bad).run()
        assert not at.exception
        assert any(message in e for e in _errors(at)), (bad, _errors(at))
    at.text_input(key=f"{K}.expr").input("None, None, None").run()
    assert any("draws up to 3 dims" in e for e in _errors(at))
    at.text_input(key=f"{K}.expr").input("1, 2").run()  # a 0-d result
    assert not at.exception and "out = x[1][2] = 6" in _codes(at)
    at.text_input(key=f"{K}.expr").input("[False, False, False]").run()
    assert not at.exception and any("selects nothing" in w.value for w in at.warning)


def test_pitfalls(page):
    at = open_tab(page, TABS, PITFALLS)
    for number in range(1, 9):
        at.selectbox(key=f"{K}.pitfall").select(number).run()
        assert not at.exception, (number, at.exception)
        verdicts = [s.value for s in at.success if s.value.startswith("Verdict")]
        assert len(verdicts) == 1, (number, [w.value for w in at.warning])
    at.slider(key=f"{K}.pitfall_n").set_value(2).run()
    assert not at.exception


def test_size_hint_follows_the_page_limits(page):
    # The notes' one-hot (4 labels x class_num 10) needs 2-D up to 6x10; the hint must say so.
    rows, cols = parsing.PAGE_LIMITS[2]
    assert (rows, cols) == (6, 10)
    assert f"2-D up to {rows}x{cols}" in page.text_input(key=f"{K}.first").help


def _block(at, key: str):
    """The container keyed ``key`` (Streamlit stores the key at the end of the block id)."""
    todo = [at.main]
    while todo:
        node = todo.pop()
        block_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if block_id.endswith(f"-{key}"):
            return node
        todo.extend(getattr(node, "children", {}).values())
    raise AssertionError(f"no container keyed {key}")


def _elements(node, kind: str) -> list:
    """Every element of ``kind`` under ``node``, in display order."""
    found, todo = [], [node]
    while todo:
        cur = todo.pop(0)
        if getattr(cur, "type", None) == kind:
            found.append(cur)
        todo[:0] = list(getattr(cur, "children", {}).values())
    return found


def test_picture_first_with_controls_beside_it(page):
    """The lesson layout: the wiring picture fills the figure area on arrival, the preset, op,
    dim, (for scatter) reduce, Reload/Random and the cell to explain sit beside it; the
    tensors below."""
    at = page
    figure, controls = _block(at, "lesson-figure"), _block(at, "lesson-controls")
    charts = _elements(figure, "plotly_chart")
    # gather preset: input, index and out, all drawn through ui.charts.show_chart (alt text)
    assert len(charts) == 3
    assert all(c.proto.alt.strip() for c in charts)
    assert "out tensor, shape (2, 2)" in charts[-1].proto.alt
    assert "out[0][0] = input[0][index[0][0]] = input[0][0] = 1" in [
        c.value for c in _elements(figure, "code")
    ]
    kinds = ("selectbox", "button", "checkbox")
    keys = {w.key for kind in kinds for w in _elements(controls, kind)}
    for name in ("preset", "op", "dim", "reload", "random", "cell"):
        assert f"{K}.{name}" in keys, name
    # reduce and include_self belong to scatter: hidden for gather (a disabled widget's faded
    # label failed axe's color-contrast), shown beside the picture for scatter
    assert not {f"{K}.reduce", f"{K}.include_self"} & keys
    at.selectbox(key=f"{K}.op").select("scatter").run()
    controls = _block(at, "lesson-controls")
    keys = {w.key for kind in kinds for w in _elements(controls, kind)}
    assert {f"{K}.reduce", f"{K}.include_self"} <= keys
    # short labels: nothing to cut off in the narrow controls column
    assert at.button(key=f"{K}.random").label == "Random example"
    assert at.button(key=f"{K}.reload").label == "Reload preset"
    assert at.selectbox(key=f"{K}.preset").label == "Preset"
    # the editors are below, in the details area
    details = _block(at, "lesson-details")
    assert {f"{K}.first", f"{K}.index"} <= {t.key for t in _elements(details, "text_input")}


def test_scatter_picture_keeps_equal_cells(page):
    """one_hot (4x10 dest, 4x1 index, scalar src): dest and index share a row, out below."""
    at = page
    at.selectbox(key=f"{K}.preset").select("one_hot").run()
    assert not at.exception and not _errors(at)
    charts = _elements(_block(at, "lesson-figure"), "plotly_chart")
    assert len(charts) == 3  # the scalar src is a caption, not a picture
    assert any("src is the scalar" in c for c in _captions(at))


def test_example_box_follows_the_typed_expression(page):
    """The Example box names the example the typed expression is, or says it is your own: it
    must not keep naming "boolean mask" after another expression was typed."""
    at = page
    mask = "x[[True, False, True]]  boolean mask"
    at.selectbox(key=f"{K}.index_preset").select(mask).run()
    assert at.text_input(key=f"{K}.expr").value == "[True, False, True]"
    at.text_input(key=f"{K}.expr").input("[0, 2], 1").run()
    assert not at.exception
    box = at.selectbox(key=f"{K}.index_preset")
    assert box.value != mask
    assert box.value == "your own expression (typed)"
    assert "out[0] = x[0][1] = 1" in _codes(at)
    # typing an example's own expression (spacing aside) names that example again
    at.text_input(key=f"{K}.expr").input("1:,  ::2").run()
    assert at.selectbox(key=f"{K}.index_preset").value == "x[1:, ::2]  basic slicing (view)"
    # choosing "your own expression" keeps what was typed
    at.text_input(key=f"{K}.expr").input("0, 1:3").run()
    at.selectbox(key=f"{K}.index_preset").select("your own expression (typed)").run()
    assert at.text_input(key=f"{K}.expr").value == "0, 1:3"
    assert not at.exception and not _errors(at)
    assert not at.warning or all("Session State" not in w.value for w in at.warning)


# ---------------------------------------------------------------------------------- Lesson links
# Every control is bound to the URL (ui/links.py). The preset's values are the defaults of the
# other controls, so a link holds the preset plus what was changed from it.
BASE_URL = "http://localhost:8501/indexing"
GS, IX_TAB, NOTES_TAB = "gather & scatter_", "x[...] indexing", "More pitfalls from the notes"
#: Bound tabs and their default (first) labels: AppTest has no widget object for a tab bar.
TAB_DEFAULTS = {TABS: GS, f"{K}.notes_demos.tab": ".item() on empty"}
CUSTOM_EXAMPLE_LABEL = "your own expression (typed)"


def _link_params(at) -> dict[str, str]:
    """The query the browser writes for this view, as Streamlit's frontend does: every bound
    widget whose value differs from the default its element was drawn with, as its URL text
    (AppTest's own ``query_params`` does not follow widget changes)."""
    params: dict[str, str] = {}
    for w in [*at.selectbox, *at.radio]:
        if w.proto.query_param_key and w.index != w.proto.default:
            params[w.proto.query_param_key] = w.options[w.index]
    for w in at.text_input:
        if w.proto.query_param_key and w.value != w.proto.default:
            params[w.proto.query_param_key] = w.value
    for w in [*at.checkbox, *at.toggle]:
        if w.proto.query_param_key and w.value != w.proto.default:
            params[w.proto.query_param_key] = str(w.value).lower()
    for w in [*at.slider, *at.number_input]:  # one number each on this page
        default = w.proto.default[0] if w.type == "slider" else w.proto.default
        if w.proto.query_param_key and w.value != default:
            params[w.proto.query_param_key] = f"{w.value:g}"
    for key, default in TAB_DEFAULTS.items():
        if key in at.session_state and at.session_state[key] != default:
            params[key] = at.session_state[key]
    return params


def _open_link(params: dict[str, str]):
    """Open the indexing page cold with ``params`` in its URL, as a student clicking a link."""
    at = open_cold("indexing", params)
    assert not at.exception, at.exception
    return at


def _label(key: str) -> str:
    """The preset box's text for preset ``key``: what a link carries."""
    p = presets.PRESETS_BY_KEY[key]
    return f"{p.title} · notes {p.ref}" if p.verbatim else f"{p.title} · variation of notes {p.ref}"


def _formula(at, key: str) -> str:
    return [c.value for c in _elements(_block(at, key), "code")][0]


def test_cold_link_reproduces_the_scatter_a_session_set_up(page):
    """y2 with reduce=sum, an edited index and another cell, set through the widgets: the link
    holds only what differs from the preset, and a cold open of it computes the same cell."""
    at = page
    at.selectbox(key=f"{K}.preset").select("scatter_y2").run()
    at.selectbox(key=f"{K}.reduce").select("sum").run()
    index = "[[0, 0, 2, 0, 0], [0, 0, 0, 1, 2]]"  # columns 0 and 1 collide now
    at.text_input(key=f"{K}.index").input(index).run()
    at.selectbox(key=f"{K}.cell").select("out[0][1]").run()
    assert not at.exception and not _errors(at)
    params = _link_params(at)
    assert params == {
        f"{K}.preset": _label("scatter_y2"),
        f"{K}.reduce": "sum",
        f"{K}.index": index,
        f"{K}.cell": "out[0][1]",
    }
    # what core computes for these controls: out[0][1] = dest + src[0][1] + src[1][1]
    y2 = presets.PRESETS_BY_KEY["scatter_y2"]
    trace, err, _ = cases.run_case("scatter", y2.first, index, y2.src, 0, "sum", True, "cpu")
    assert err is None and trace is not None
    expected = explanation.explain_element(trace, (0, 1)).formula
    assert _formula(at, f"{K}-formula") == expected
    cold = _open_link(params)
    assert not _errors(cold)
    assert _formula(cold, f"{K}-formula") == expected
    assert [i.value for i in cold.info if "Collisions" in i.value] == [
        i.value for i in at.info if "Collisions" in i.value
    ]
    assert "out[0][1] <- src[0][1], src[1][1]" in " ".join(i.value for i in cold.info)
    assert not cold.toast  # the link was used whole


def test_cold_link_reproduces_the_index_tab(page):
    """The x[...] tab, a typed x, a typed expression and the cell: the same numbers cold."""
    at = open_tab(page, TABS, IX_TAB)
    x, expr = "[[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]", "[3, 0], 1:"
    at.text_input(key=f"{K}.x").input(x).run()
    at.text_input(key=f"{K}.expr").input(expr).run()
    at.selectbox(key=f"{K}.index_cell").select("out[0][1]").run()
    params = _link_params(at)
    assert params == {TABS: IX_TAB, f"{K}.x": x, f"{K}.expr": expr, f"{K}.index_cell": "out[0][1]"}
    trace, err, _ = cases.run_index_case(x, expr)
    assert err is None and trace is not None
    expected = explanation.explain_element(trace, (0, 1)).formula
    assert expected == "out[0][1] = x[3][2] = 12"
    cold = _open_link(params)
    for view in (at, cold):
        assert _formula(view, f"{K}-index-formula") == expected
        metrics = {m.label: m.value for m in view.metric}
        assert metrics["same data_ptr"] == "False"  # an index list: a copy
        assert metrics["out.stride()"] == str(tuple(trace.result.stride()))
    assert cold.selectbox(key=f"{K}.index_preset").value == CUSTOM_EXAMPLE_LABEL


def test_cold_link_reproduces_a_pitfall_with_the_seed(page):
    """The pitfalls tab, a pitfall, its n and the sidebar's seed: the same table cold."""
    at = open_tab(page, TABS, PITFALLS)
    at.number_input(key="sidebar.seed").set_value(7).run()
    at.selectbox(key=f"{K}.pitfall").select(4).run()
    at.slider(key=f"{K}.pitfall_n").set_value(5).run()
    params = _link_params(at)
    assert params == {
        TABS: PITFALLS,
        "sidebar.seed": "7",
        f"{K}.pitfall": f"4. {seeded_pitfalls.PITFALL_TITLES[4]}",
        f"{K}.pitfall_n": "5",
    }
    expected = [list(line) for line in seeded_pitfalls.run_pitfall(4, seed=7, n=5).lines]
    cold = _open_link(params)
    for view in (at, cold):
        table = view.table[0].value
        assert table.values.tolist() == expected


def test_cold_link_opens_one_notes_demo(page):
    """The notes' demos: the tab and the view/reshape choices come back from a link."""
    at = open_tab(page, TABS, NOTES_TAB)
    d = f"{K}.notes_demos"
    at.session_state[f"{d}.tab"] = "view vs reshape"
    at.selectbox(key=f"{d}.view_target").select((3, 2, 2, 2)).run()
    params = _link_params(at)
    assert params == {
        TABS: NOTES_TAB,
        f"{d}.tab": "view vs reshape",
        f"{d}.view_target": "view / reshape(3, 2, 2, 2)",
    }
    cold = _open_link(params)
    assert cold.session_state[f"{d}.tab"] == "view vs reshape"
    for view in (at, cold):
        metrics = {m.label: m.value for m in view.metric}
        assert metrics["view(3, 2, 2, 2)"] == "view"
        assert metrics["x.is_contiguous()"] == "False"


def test_every_preset_link_is_short_and_opens_the_preset(page):
    """For every preset the link is the preset alone (its values are the defaults), under
    2,000 characters even when it spells out every value; opened cold it runs the preset."""
    at = page
    longest = 0
    for preset in presets.PRESETS:
        at.selectbox(key=f"{K}.preset").select(preset.key).run()
        params = _link_params(at)
        if preset.key == "gather":  # the page's default: a clean URL
            assert params == {}, params
        else:
            assert params == {f"{K}.preset": _label(preset.key)}, (preset.key, params)
        # a hand-written link naming every value of the preset is short enough too
        spelled = {
            **params,
            f"{K}.op": preset.op,
            f"{K}.dim": str(preset.dim),
            f"{K}.reduce": preset.reduce or "none",
            f"{K}.first": preset.first,
            f"{K}.index": preset.index,
            f"{K}.src": preset.src,
        }
        for query in (params, spelled):
            link = f"{BASE_URL}?{urlencode(query)}"
            assert len(link) < 2000, (preset.key, len(link))
            longest = max(longest, len(link))
        cold = _open_link(params)
        assert presets.run_preset(preset).snippet.strip() in [c.strip() for c in _codes(cold)]
        assert not cold.toast, preset.key
    assert longest > len(BASE_URL) + 300  # the spelled-out links did carry the tensors


def test_every_bound_control_survives_a_page_switch(page):
    """persist_state and the URL keep each section's controls through a page switch."""
    at = page
    at.selectbox(key=f"{K}.preset").select("group_means").run()
    at.selectbox(key=f"{K}.op").select("scatter").run()
    at.selectbox(key=f"{K}.dim").select(-1).run()
    at.selectbox(key=f"{K}.reduce").select("mean").run()
    at.checkbox(key=f"{K}.include_self").uncheck().run()
    at.text_input(key=f"{K}.first").input("[1.0, 1.0, 1.0]").run()
    at.text_input(key=f"{K}.src").input("[1, 2, 3, 4, 5, 7]").run()
    at.selectbox(key=f"{K}.random_ndim").select(3).run()
    at.text_input(key=f"{K}.x").input("[[1, 2], [3, 4]]").run()
    at.text_input(key=f"{K}.expr").input("1, :").run()
    at.selectbox(key=f"{K}.index_cell").select("out[1]").run()
    want = {
        "selectbox": {"preset": "group_means", "op": "scatter", "dim": -1, "reduce": "mean",
                      "random_ndim": 3, "index_cell": "out[1]"},
        "checkbox": {"include_self": False},
        "text_input": {"first": "[1.0, 1.0, 1.0]", "src": "[1, 2, 3, 4, 5, 7]",
                       "x": "[[1, 2], [3, 4]]", "expr": "1, :"},
    }  # fmt: skip
    before = _formula(at, f"{K}-formula")
    open_tab(at, TABS, "More pitfalls from the notes")
    d = f"{K}.notes_demos"
    at.session_state[f"{d}.tab"] = "new_zeros"
    at.selectbox(key=f"{d}.new_zeros_row").select(0).run()
    at.radio(key=f"{d}.zero_dim_case").set_value("two_matches").run()
    switch_to(at, "home").run()
    switch_to(at, "indexing").run()
    assert not at.exception, at.exception
    assert at.session_state[TABS] == "More pitfalls from the notes"
    assert at.session_state[f"{d}.tab"] == "new_zeros"
    assert at.selectbox(key=f"{d}.new_zeros_row").value == 0
    assert at.radio(key=f"{d}.zero_dim_case").value == "two_matches"
    open_tab(at, TABS, GS)
    open_tab(at, TABS, IX_TAB)
    for kind, values in want.items():
        for name, value in values.items():
            assert getattr(at, kind)(key=f"{K}.{name}").value == value, name
    assert _formula(at, f"{K}-formula") == before
    assert not at.warning or all("Session State" not in w.value for w in at.warning)


UNUSABLE_TEXT = [
    (f"{K}.first", "[[1, a], [3, 4]]", {}),  # does not parse
    (f"{K}.index", "[" * 5000 + "0" + "]" * 5000, {}),  # 10,001 characters
    (f"{K}.src", "[[1, 2]", {f"{K}.preset": _label("scatter_y2")}),
    (f"{K}.expr", "open('x')", {TABS: IX_TAB}),  # not an index expression
    (f"{K}.x", "x" * 10_000, {TABS: IX_TAB}),
]
UNUSABLE_IDS = ["first-unparsable", "index-10001-chars", "src-unbalanced", "expr-call", "x-10000"]


@pytest.mark.parametrize(("key", "text", "rest"), UNUSABLE_TEXT, ids=UNUSABLE_IDS)
def test_unusable_link_text_opens_the_field_at_its_default(key, text, rest):
    """Text the page cannot read (or far too long): the notice names it, the field opens at
    its default and the rest of the link is used."""
    at = _open_link({key: text, **rest})
    assert len(at.toast) == 1
    notice = at.toast[0].value
    assert f"`{key}`" in notice, notice
    for other in rest:
        assert f"`{other}`" not in notice, notice
    if TABS in rest:
        assert at.session_state[TABS] == rest[TABS]
    if f"{K}.preset" in rest:
        assert at.selectbox(key=f"{K}.preset").value == "scatter_y2"
    name = key.removeprefix(f"{K}.")
    if name in ("first", "index", "src"):  # the field shows the preset's text
        preset = presets.PRESETS_BY_KEY[at.selectbox(key=f"{K}.preset").value]
        assert at.text_input(key=key).value == getattr(preset, name)
        assert not _errors(at)
    else:
        assert "out[0][0] = x[1][0] = 4" in _codes(at)  # the first example on the default x


@pytest.mark.parametrize(
    ("params", "dropped"),
    [
        ({f"{K}.preset": "y2", f"{K}.dim": "7"}, [f"{K}.preset", f"{K}.dim"]),  # no such option
        (
            {f"{K}.preset": _label("scatter_y2"), f"{K}.include_self": "maybe"},
            [f"{K}.include_self"],
        ),
        ({TABS: "9 pitfalls", f"{K}.cell": "out[5][5]", f"{K}.op": "gather"}, [TABS, f"{K}.cell"]),
    ],
)
def test_unusable_link_choices_open_at_the_default(params, dropped):
    """Streamlit drops a choice that is not an option: the notice names it, and the page is
    the one the usable rest of the link opens."""
    at = _open_link(params)
    assert len(at.toast) == 1
    notice = at.toast[0].value
    for key in params:
        assert (f"`{key}`" in notice) is (key in dropped), (key, notice)
    usable = _open_link({key: value for key, value in params.items() if key not in dropped})
    assert not usable.toast
    assert _link_params(at) == _link_params(usable)
    assert _codes(at) == _codes(usable) and _errors(at) == _errors(usable)


def test_a_link_may_carry_a_value_torch_refuses(page):
    """An out-of-range index parses: the link keeps it and the page shows torch's error (the
    out-of-range gather lesson), with no notice."""
    at = _open_link({f"{K}.index": "[[0, 0], [3, 0]]"})
    assert not at.toast
    assert any("index 3 is out of bounds for dimension 1 with size 3" in e for e in _errors(at))


# ------------------------------------------------------------------------------------------
# The page in Chinese: labels, lessons and error messages translated, values and links kept
# ------------------------------------------------------------------------------------------


def test_chinese_page_keeps_values_and_english_links():
    """A link made on the English page (English preset and pitfall labels) opens the same
    preset and pitfall on the Chinese page, whose menus show one translated label each."""
    y2, pitfall = presets.PRESETS_BY_KEY["scatter_y2"], seeded_pitfalls.PITFALL_LABELS[4]
    at = open_cold(
        "indexing",
        {"lang": "zh", f"{K}.preset": y2.menu_label, TABS: PITFALLS, f"{K}.pitfall": pitfall},
    )
    assert not at.exception, at.exception
    assert at.title[0].value == "索引图解"
    menu = at.selectbox(key=f"{K}.preset")
    assert menu.value == "scatter_y2" and menu.label == "预设"
    assert (
        "y2：相同的 x，index [[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]]（第 0 列冲突）· 笔记 002:926"
        in (menu.options)
    )
    picked = at.selectbox(key=f"{K}.pitfall")
    assert picked.value == 4 and "4. 索引有重复时，x[idx] += 1 只加一次" in picked.options
    assert any("**冲突**（红色虚线框）" in w.value for w in at.warning)
    assert any(
        s.value.startswith("结论（根据这些张量）：x[idx] += 1 与计数一致") for s in at.success
    )
    assert "表达式" in at.table[0].value.columns


def test_chinese_errors_keep_torchs_words():
    """Our own checks speak Chinese; torch's refusal is quoted as torch wrote it."""
    floats = open_cold("indexing", {"lang": "zh", f"{K}.index": "[[0.5, 0], [2, 0]]"})
    (error,) = _errors(floats)
    assert error.startswith("index[0][0] = 0.5：索引必须是整数"), error
    refused = open_cold(
        "indexing",
        {"lang": "zh", f"{K}.preset": presets.PRESETS_BY_KEY["gather_out_of_range"].menu_label},
    )
    (error,) = _errors(refused)
    assert error.startswith("torch 拒绝执行：") and "out of bounds" in error
    assert "gather 沿第 1 维取值" in error
