"""AppTest for the BatchNorm explorer: every control, the training buttons and bad input."""

from __future__ import annotations

import base64
import html
import json

import numpy as np
import pytest

from testing.apptest import switch_to
from tests.app.conftest import open_tab

NOTES_TAB = "batchnorm.notes_tab"

STEPS_KEY = "batchnorm.steps"
DEFAULT_STEPS = 60  # lessons/batchnorm/controls.py: the page opens on a layer trained this long


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(elements) -> str:
    return " ".join(e.value for e in elements)


@pytest.fixture
def page(open_page):
    at = open_page("batchnorm")
    assert not at.exception, at.exception
    return at


def chart_spec(at, index: int = 0) -> dict:
    """The Plotly figure (data and layout) of the page's ``index``-th chart, as sent."""
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def values(array) -> list[float]:
    """A trace's x or y as numbers: Plotly sends numpy arrays as base64 ``bdata``."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def test_smoke_defaults(page):
    at = page
    assert at.title[0].value == "BatchNorm explorer"
    assert not at.error
    # the page opens on a trained layer: eval() normalizes with caught-up running statistics
    m = metrics(at)
    assert float(m["train() std"]) == pytest.approx(1.0, abs=1e-3)
    assert abs(float(m["eval() mean"])) < 0.5
    assert f"**{DEFAULT_STEPS}** training steps" in texts(at.markdown)
    assert "No training steps yet" not in texts(at.info)
    assert len(at.get("plotly_chart")) >= 3


def test_main_chart_has_trained_data_on_arrival(page):
    """The running-statistics chart shows a trained layer on arrival, before any click."""
    spec = chart_spec(page, 0)
    running = [t for t in spec["data"] if t.get("name") == "running_mean/var"]
    assert len(running) == 2  # mean and variance panels
    assert len(values(running[0]["y"])) == DEFAULT_STEPS + 1  # fresh buffers + one value per step
    batch = [t for t in spec["data"] if t.get("name") == "batch statistic"]
    assert len(values(batch[0]["x"])) == DEFAULT_STEPS
    # trained: the running mean of channel 0 has reached the stream's mean 2 (it starts at 0)
    assert values(running[0]["y"])[0] == 0
    assert values(running[0]["y"])[-1] == pytest.approx(2.0, abs=0.5)


@pytest.mark.parametrize("index", [0, 1])
def test_legends_sit_above_the_plot(page, index):
    """The horizontal legend sits above the plot, clear of the x-axis title."""
    layout = chart_spec(page, index)["layout"]
    legend = layout.get("legend", {})
    assert legend.get("orientation") == "h"
    assert legend.get("y", -1) >= 1.0 and legend.get("yanchor") == "bottom"
    sizes = [layout["font"]["size"], legend["font"]["size"]]
    assert min(sizes) >= 14
    # no subplot title under the legend row: nothing else is drawn above the plot area
    assert not [a for a in layout.get("annotations", []) if a.get("y", 0) >= 1.0]


def test_train_step_reset(page):
    at = page
    at.number_input(key="batchnorm.n_steps").set_value(100).run()
    at.button(key="batchnorm.train").click().run()
    assert not at.exception
    assert at.session_state[STEPS_KEY] == DEFAULT_STEPS + 100
    m = metrics(at)
    assert float(m["eval() std"]) == pytest.approx(1.0, abs=0.15)
    at.button(key="batchnorm.step").click().run()
    assert at.session_state[STEPS_KEY] == DEFAULT_STEPS + 101
    at.button(key="batchnorm.reset").click().run()
    assert at.session_state[STEPS_KEY] == 0
    assert not at.exception
    # before training, eval() normalizes with the fresh buffers (0, 1): a wide gap
    assert abs(float(metrics(at)["eval() mean"])) > 1.0
    assert "No training steps yet" in texts(at.info)
    running = [t for t in chart_spec(at)["data"] if t.get("name") == "running_mean/var"]
    assert values(running[0]["y"]) == [0]  # the fresh buffer is still drawn: the chart is not empty


def test_long_replay_waits_for_a_click(page):
    """A replay estimated above the heavy-work budget (ui.heavy, 2 s) shows its first steps and
    offers the full run, which then runs (with a progress bar) and fills the chart."""
    at = page
    at.number_input(key="batchnorm.batch_size").set_value(64).run()
    at.number_input(key="batchnorm.spatial").set_value(16).run()  # 49,152 values a batch
    at.number_input(key="batchnorm.n_steps").set_value(40).run()
    at.button(key="batchnorm.train").click().run()
    assert not at.exception
    requested = DEFAULT_STEPS + 40
    assert "takes about" in texts(at.warning)
    shown = len(values(chart_spec(at)["data"][0]["x"]))
    assert 0 < shown < requested
    assert f"Run all {requested} steps" in at.button(key="batchnorm.long_run.run").label
    at.button(key="batchnorm.long_run.run").click().run()
    assert not at.exception
    assert len(values(chart_spec(at)["data"][0]["x"])) == requested
    assert "takes about" not in texts(at.warning)
    at.selectbox(key="batchnorm.channel").select(1).run()  # a cached long run: no gate again
    assert "takes about" not in texts(at.warning)
    assert len(values(chart_spec(at)["data"][0]["x"])) == requested


def test_batch_size_one_shows_torch_error(page):
    at = page
    at.number_input(key="batchnorm.batch_size").set_value(1).run()
    assert not at.exception
    assert not at.error  # (1, C, 4, 4): 16 values per channel, trains fine
    assert "checks values per channel" in texts(at.info)
    at.radio(key="batchnorm.layout").set_value("(N, C)").run()
    assert not at.exception
    assert "Expected more than 1 value per channel when training" in texts(at.error)
    assert at.button(key="batchnorm.train").disabled
    at.radio(key="batchnorm.layout").set_value("(N, C, H, W)").run()
    at.number_input(key="batchnorm.spatial").set_value(1).run()
    assert "torch.Size([1, 3, 1, 1])" in texts(at.error)
    at.checkbox(key="batchnorm.track").uncheck().run()
    assert not at.exception


def test_every_control(page):
    at = page
    at.number_input(key="batchnorm.n_steps").set_value(20).run()
    at.button(key="batchnorm.train").click().run()
    at.number_input(key="batchnorm.channels").set_value(4).run()
    at.text_input(key="batchnorm.mean").input("1, 2, 3, 4").run()
    at.text_input(key="batchnorm.std").input("0.5").run()
    at.number_input(key="batchnorm.batch_size").set_value(8).run()
    at.radio(key="batchnorm.layout").set_value("(N, C, L)").run()
    at.number_input(key="batchnorm.spatial").set_value(6).run()
    at.checkbox(key="batchnorm.shift").check().run()
    at.number_input(key="batchnorm.shift_step").set_value(10).run()
    at.number_input(key="batchnorm.shift_mean").set_value(-2.0).run()
    at.number_input(key="batchnorm.shift_std").set_value(3.0).run()
    at.radio(key="batchnorm.momentum_mode").set_value("None (cumulative average)").run()
    at.select_slider(key="batchnorm.eps").set_value(0.1).run()
    at.checkbox(key="batchnorm.affine").uncheck().run()
    at.selectbox(key="batchnorm.channel").select(3).run()
    at.selectbox(key="batchnorm.groups").select(2).run()
    open_tab(at, "batchnorm.module_tab", "Keras momentum")
    at.radio(key="batchnorm.keras_direction").set_value("Keras → PyTorch").run()
    at.number_input(key="batchnorm.keras_value").set_value(0.99).run()
    assert not at.exception, at.exception
    assert not at.error
    assert "Keras 0.99 → PyTorch **0.01**" in texts(at.markdown)
    at.radio(key="batchnorm.momentum_mode").set_value("float (exponential average)").run()
    at.number_input(key="batchnorm.momentum").set_value(0.3).run()
    at.checkbox(key="batchnorm.track").uncheck().run()
    assert not at.exception
    open_tab(at, "batchnorm.module_tab", "Frozen BN")
    assert "track_running_stats=False" in texts(at.info)
    assert metrics(at)["max |train − eval|"] == "0"


def test_momentum_extremes(page):
    at = page
    at.number_input(key="batchnorm.momentum").set_value(0.0).run()
    assert "never move" in texts(at.warning)
    at.button(key="batchnorm.step").click().run()
    assert not at.exception
    at.number_input(key="batchnorm.momentum").set_value(1.0).run()
    assert "replaced by the last batch" in texts(at.warning)
    assert not at.exception


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("batchnorm.std", "1, 0, 1", "must be > 0"),
        ("batchnorm.std", "-2", "must be > 0"),
        ("batchnorm.mean", "1, nan, 2", "is NaN"),
        ("batchnorm.mean", "a, b", "is not a number"),
        ("batchnorm.mean", "1, 2", "got 2 values for 3 channels"),
        ("batchnorm.std", "1e39", "keep it within"),  # inf in float32: not a silent NaN
        ("batchnorm.mean", "1e30", "keep it within"),
    ],
)
def test_bad_stream_values(page, key, value, message):
    at = page
    at.text_input(key=key).input(value).run()
    assert not at.exception
    assert message in texts(at.error)
    at.text_input(key=key).input("1").run()  # the page recovers
    assert not at.error and not at.exception


def test_huge_spatial_size_is_capped(page):
    at = page
    at.number_input(key="batchnorm.spatial").set_value(100_000).run()
    assert not at.exception
    assert "capped at" in texts(at.warning)


def test_nan_in_stream_poisons_running_stats(page):
    at = page
    at.checkbox(key="batchnorm.inject_nan").check().run()
    at.number_input(key="batchnorm.nan_step").set_value(2).run()
    at.button(key="batchnorm.train").click().run()
    assert not at.exception
    assert "stay NaN forever" in texts(at.warning)


def test_zero_std_shift_factor(page):
    at = page
    at.checkbox(key="batchnorm.shift").check().run()
    at.number_input(key="batchnorm.shift_std").set_value(0.0).run()
    assert not at.exception
    assert "std after the shift" in texts(at.error)


# ------------------------------------------------------------------------------------------
# Section 4: the notes' lessons, run live
# ------------------------------------------------------------------------------------------


def _real_element(at, sample: int, channel: int, position: int, gamma: float, beta: float,
                  batch_size: int = 16, spatial=(4, 4), eps: float = 1e-5) -> float:
    """nn.BatchNorm2d in train() on the page's shown batch (the last one trained on, number
    DEFAULT_STEPS - 1 on arrival), computed here independently."""
    import torch
    from torch import nn

    from lessons.batchnorm.stream import Stream, sample_batch

    stream = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))
    x = sample_batch(stream, DEFAULT_STEPS - 1, batch_size, spatial,
                     seed=int(at.session_state["sidebar.seed"]))
    module = nn.BatchNorm2d(3, eps=eps).train()
    with torch.no_grad():
        module.weight.fill_(gamma)
        module.bias.fill_(beta)
        return module(x)[sample, channel].flatten()[position].item()


def test_formula_equals_the_real_module(page):
    at = page
    m = metrics(at)
    expected = _real_element(at, 0, 0, 0, 1.5, 0.25)
    assert m["nn.BatchNorm2d in train()"] == f"{expected:.7g}"
    assert float(m["formula (float64)"]) == pytest.approx(expected, rel=1e-5, abs=1e-7)
    assert "Equal to float32 precision" in texts(at.success)
    assert "which is not the module's output: BatchNorm normalizes with the biased variance" \
        in texts(at.success)
    at.number_input(key="batchnorm.formula_sample").set_value(9).run()
    at.number_input(key="batchnorm.formula_position").set_value(14).run()
    at.selectbox(key="batchnorm.channel").select(2).run()
    at.number_input(key="batchnorm.formula_gamma").set_value(-2.0).run()
    at.number_input(key="batchnorm.formula_beta").set_value(3.0).run()
    assert not at.exception and not at.error
    expected = _real_element(at, 9, 2, 14, -2.0, 3.0)
    m = metrics(at)
    assert m["nn.BatchNorm2d in train()"] == f"{expected:.7g}"
    assert float(m["formula (float64)"]) == pytest.approx(expected, rel=1e-5, abs=1e-7)
    assert any("y_{9,2,3,2}" in e.value for e in at.latex)  # flat position 14 of 4x4 = (3, 2)


def test_formula_out_of_range_element_is_clamped(page):
    at = page
    at.number_input(key="batchnorm.formula_sample").set_value(200).run()
    assert not at.exception and not at.error
    assert "following sample 15" in texts(at.caption)


def test_batch_of_one_error_and_drop_last(page):
    at = open_tab(page, NOTES_TAB, "A batch of one")
    codes = [c.value for c in at.code]
    message = "Expected more than 1 value per channel when training, got input size"
    assert f"ValueError: {message} torch.Size([1, 3])" in codes
    assert f"batch 2: ValueError: {message} torch.Size([1, 3])" in codes
    assert "trained on all 2 batches" in codes
    assert "9 = 2 × 4 + 1" in texts(at.info)
    at.radio(key="batchnorm.one_layout").set_value("(1, C, 1, 1)").run()
    assert f"ValueError: {message} torch.Size([1, 3, 1, 1])" in [c.value for c in at.code]
    at.number_input(key="batchnorm.loader_size").set_value(13).run()
    assert "13 = 3 × 4 + 1" in texts(at.info)
    assert f"batch 3: ValueError: {message} torch.Size([1, 3])" in [c.value for c in at.code]
    at.number_input(key="batchnorm.loader_size").set_value(12).run()
    assert "12 is a multiple of 4" in texts(at.info)
    at.number_input(key="batchnorm.loader_batch").set_value(1).run()
    assert "drop_last cannot help" in texts(at.info)
    assert not at.exception and not at.error


def test_repeated_evaluation_depends_on_the_batch_only_untracked(page):
    at = open_tab(page, NOTES_TAB, "Evaluating twice")
    gaps = [m.value for m in at.metric if m.label.startswith("max |pass 1 − pass 2|")]
    assert gaps[0] == "0" and float(gaps[1]) > 0.1
    assert "Outputs are different" in texts(at.warning)
    assert "Outputs are identical in both passes" in texts(at.success)
    at.number_input(key="batchnorm.eval_batch").set_value(12).run()  # one batch: same stats
    gaps = [m.value for m in at.metric if m.label.startswith("max |pass 1 − pass 2|")]
    assert float(gaps[1]) < 1e-5
    assert "Outputs are different" not in texts(at.warning)
    at.radio(key="batchnorm.layout").set_value("(N, C)").run()
    at.number_input(key="batchnorm.eval_batch").set_value(11).run()  # last batch: 1 sample
    assert not at.exception and not at.error
    assert any("Expected more than 1 value per channel" in c.value for c in at.code)
    at.number_input(key="batchnorm.eval_sample").set_value(11).run()
    assert not at.exception


def test_notes_callouts_and_citations(page):
    from lessons.batchnorm.layer import notes_callouts

    at = page
    captions, markdown, shown = texts(at.caption), texts(at.markdown), ""
    # the notes' demos are lazy tabs: each one's text is read while it is open
    for tab in ("A batch of one", "Evaluating twice", "Where the notes are wrong"):
        open_tab(at, NOTES_TAB, tab)
        captions += texts(at.caption)
        markdown += texts(at.markdown)
        shown += " ".join(t.value for t in at.text)
        shown += " ".join(html.unescape(h.value) for h in at.html)  # the lang-marked quotes
    for callout in notes_callouts():
        assert callout.quote_display in shown, callout.key
        assert callout.today_text in shown, callout.key
    for ref in ("000:11", "002:801-805", "000:76", "002:795"):
        assert f"notes {ref}" in captions, ref
    for ref in ("000:11", "002:804", "002:783", "002:789-791"):
        assert f"notes {ref}" in markdown, ref


def test_module_tabs_run_only_when_open(page):
    # Lazy tabs: a training step redraws only the open explanation, and a kept
    # control inside a closed tab comes back as it was, without a Session State warning.
    at = page
    assert at.session_state["batchnorm.module_tab"] == "Parameters vs buffers"
    assert any("named_buffers()" in m.value for m in at.markdown)
    assert not [n for n in at.number_input if n.key == "batchnorm.keras_value"]
    open_tab(at, "batchnorm.module_tab", "Keras momentum")
    assert not any("named_buffers()" in m.value for m in at.markdown)
    at.number_input(key="batchnorm.keras_value").set_value(0.5).run()
    open_tab(at, "batchnorm.module_tab", "Update formulas")
    assert at.latex  # the update formula with the real numbers
    open_tab(at, "batchnorm.module_tab", "Keras momentum")
    assert at.number_input(key="batchnorm.keras_value").value == 0.5
    assert "PyTorch 0.5 → Keras **0.5**" in texts(at.markdown)
    assert all("Session State" not in w.value for w in at.warning)


def test_notes_demos_run_only_when_open(page):
    # Lazy tabs: on arrival only the formula demo runs; the two trained modules of
    # the repeated-evaluation demo are not built until their tab opens.
    at = page
    assert at.session_state[NOTES_TAB] == "The formula"
    assert not [m for m in at.metric if m.label.startswith("max |pass 1 − pass 2|")]
    at.number_input(key="batchnorm.formula_gamma").set_value(2.0).run()
    open_tab(at, NOTES_TAB, "Evaluating twice")
    at.number_input(key="batchnorm.eval_batch").set_value(6).run()
    assert [m for m in at.metric if m.label.startswith("max |pass 1 − pass 2|")]
    open_tab(at, NOTES_TAB, "The formula")
    assert at.number_input(key="batchnorm.formula_gamma").value == 2.0  # kept while closed
    open_tab(at, NOTES_TAB, "Evaluating twice")
    assert at.number_input(key="batchnorm.eval_batch").value == 6
    assert all("Session State" not in w.value for w in at.warning)


# ------------------------------------------------------------------------------------------
# Lesson links: every control is in the URL, and a link opens the same view cold
# ------------------------------------------------------------------------------------------


def open_link(params: dict[str, str]):
    """Open the page COLD with ``params`` in the URL, as a student clicking a link would."""
    from tests.app.conftest import open_cold

    at = open_cold("batchnorm", params)
    assert not at.exception, at.exception
    return at


def eval_verdict(at) -> str:
    """Section 1's verdict: which statistics train() and eval() used, with the numbers."""
    boxes = (*at.success, *at.warning, *at.info)
    return " ".join(e.value for e in boxes if "**eval()**" in e.value)


def core_running_mean(steps: int, channel: int, seed: int, *, momentum: float | None = 0.1,
                      mean=(2.0, -1.0, 0.5)) -> float:
    """running_mean of ``channel`` after ``steps`` steps on the page's default stream, by core."""
    from lessons.batchnorm.layer import simulate
    from lessons.batchnorm.stream import Stream

    history = simulate(Stream(mean=mean, std=(3.0, 0.5, 1.0)), steps, 16, spatial=(4, 4),
                       momentum=momentum, eps=1e-5, affine=True, track_running_stats=True,
                       seed=seed)
    return history.state.running_mean[channel].item()


LINK = {
    "batchnorm.steps": "10",
    "batchnorm.momentum": "0.3",
    "batchnorm.channel": "1",
    "batchnorm.mean": "1, -2, 0.5",
    "batchnorm.module_tab": "Update formulas",
}


def test_cold_link_shows_what_the_same_controls_compute(page):
    """A link with the step count, momentum, plotted channel, a text control and a tab opens on
    the numbers the same controls give when set by hand, which are core's numbers."""
    linked = open_link(LINK)
    assert not linked.toast  # the link was used whole
    assert "**10** training steps" in texts(linked.markdown)

    at = page  # a normal session: the same controls through the widgets
    at.number_input(key="batchnorm.steps").set_value(10).run()
    at.number_input(key="batchnorm.momentum").set_value(0.3).run()
    at.selectbox(key="batchnorm.channel").select(1).run()
    at.text_input(key="batchnorm.mean").input("1, -2, 0.5").run()
    open_tab(at, "batchnorm.module_tab", "Update formulas")
    assert not at.exception and not at.error

    assert metrics(linked) == metrics(at)
    assert eval_verdict(linked) == eval_verdict(at)
    assert [e.value for e in linked.latex] == [e.value for e in at.latex]  # the update, live
    expected = core_running_mean(10, 1, int(at.session_state["sidebar.seed"]), momentum=0.3,
                                 mean=(1.0, -2.0, 0.5))
    assert f"running_mean {expected:.4g}," in eval_verdict(linked)
    assert any(f"= {expected:.4g}" in e.value for e in linked.latex)  # the last update's result


@pytest.mark.parametrize("steps", [1, 10, 100])
def test_lesson_eval_after_n_steps(steps):
    """Lesson: eval() after 1, 10 and 100 steps: the running mean catches up with the stream."""
    at = open_link({"batchnorm.steps": str(steps)})
    expected = core_running_mean(steps, 0, int(at.session_state["sidebar.seed"]))
    assert f"after {steps} tracked batches): running_mean {expected:.4g}," in eval_verdict(at)
    assert len(values(chart_spec(at)["data"][0]["x"])) == steps  # the chart replays N steps
    caught_up = "have caught up with the stream" in texts(at.success)
    assert caught_up == (steps == 100)


def test_lesson_keras_momentum():
    """Lesson: Keras's default momentum 0.99 is PyTorch's 0.01, and it is slow."""
    at = open_link({"batchnorm.momentum": "0.01", "batchnorm.steps": "100",
                    "batchnorm.module_tab": "Keras momentum"})
    assert "Current PyTorch momentum 0.01 ↔ Keras momentum **0.99**." in texts(at.markdown)
    expected = core_running_mean(100, 0, int(at.session_state["sidebar.seed"]), momentum=0.01)
    assert f"running_mean {expected:.4g}," in eval_verdict(at)
    assert expected < 1.5  # far from the stream's mean 2 after 100 steps


def test_lesson_track_running_stats_false():
    """Lesson: without running statistics, eval() normalizes with the batch, exactly as train()."""
    at = open_link({"batchnorm.steps": "1", "batchnorm.track": "false"})
    assert metrics(at)["max |train − eval|"] == "0"
    assert float(metrics(at)["eval() std"]) == pytest.approx(1.0, abs=1e-3)
    tracked = open_link({"batchnorm.steps": "1"})
    assert float(metrics(tracked)["max |train − eval|"]) > 1.0


def test_train_step_reset_move_the_linked_step_count():
    """The buttons change the bound control, so the URL always names the step shown."""
    from lessons.batchnorm.layer import MAX_STEPS

    at = open_link({"batchnorm.steps": "10", "batchnorm.n_steps": "5"})
    at.button(key="batchnorm.train").click().run()
    assert at.number_input(key="batchnorm.steps").value == 15
    assert "**15** training steps" in texts(at.markdown)
    at.button(key="batchnorm.step").click().run()
    assert at.number_input(key="batchnorm.steps").value == 16
    at.number_input(key="batchnorm.steps").set_value(MAX_STEPS).run()
    at.button(key="batchnorm.step").click().run()
    assert at.number_input(key="batchnorm.steps").value == MAX_STEPS
    assert "capped at" in texts(at.info)
    at.button(key="batchnorm.reset").click().run()
    assert at.number_input(key="batchnorm.steps").value == 0
    assert not at.exception


@pytest.mark.parametrize(("key", "text"), [
    ("batchnorm.mean", "1, 2"),  # 2 values for 3 channels
    ("batchnorm.std", "1, 0, 1"),  # a std of 0
    ("batchnorm.mean", "7" * 10_000),  # far longer than max_chars
], ids=["two-means-for-three-channels", "zero-std", "10000-chars"])
def test_unusable_link_text_opens_at_the_default(key, text):
    """Text the stream cannot use opens at the default with the notice, not at an error."""
    at = open_link({key: text, "batchnorm.steps": "10"})
    assert not at.error
    assert at.text_input(key=key).value == ("2, -1, 0.5" if key.endswith("mean") else "3, 0.5, 1")
    assert len(at.toast) == 1 and f"`{key}`" in at.toast[0].value
    assert at.number_input(key="batchnorm.steps").value == 10  # the rest of the link is used


def test_usable_link_text_is_checked_against_the_channels():
    """The mean/std text check uses the channel count the same link sets."""
    at = open_link({"batchnorm.channels": "4", "batchnorm.mean": "1, 2, 3, 4",
                    "batchnorm.std": "0.5"})
    assert not at.error and not at.toast
    assert at.text_input(key="batchnorm.mean").value == "1, 2, 3, 4"


# (key, widget kind, new value, lazy tab that draws it or None): one control per section.
KEPT = [
    ("batchnorm.steps", "number_input", 7, None),
    ("batchnorm.momentum", "number_input", 0.25, None),
    ("batchnorm.eps", "select_slider", 0.01, None),
    ("batchnorm.mean", "text_input", "1, 1, 1", None),
    ("batchnorm.keras_value", "number_input", 0.5, ("batchnorm.module_tab", "Keras momentum")),
    ("batchnorm.formula_gamma", "number_input", -2.0, (NOTES_TAB, "The formula")),
    ("batchnorm.loader_size", "number_input", 13, (NOTES_TAB, "A batch of one")),
    ("batchnorm.eval_batch", "number_input", 6, (NOTES_TAB, "Evaluating twice")),
]


def click_tab(at, key: str, label: str):
    """Open tab ``label`` as a click would. A click's value wins over the URL in a browser; in
    AppTest a bound tab has no widget state to send, and once a page switch has put the tab in
    the URL, AppTest re-sends that URL each run and it seeds the tab again over
    ``at.session_state``. So the tab's parameter leaves the test's URL first."""
    at.query_params.pop(key, None)
    return open_tab(at, key, label)


def test_controls_survive_a_page_switch(page):
    """persist_state keeps every section's controls, lazy tabs included, and the open tabs,
    across a visit to another page."""
    at = page
    for key, kind, value, tab in KEPT:
        if tab:
            click_tab(at, *tab)
        widget = getattr(at, kind)(key=key)
        (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    switch_to(at, "home").run()
    assert not at.exception
    switch_to(at, "batchnorm").run()
    assert not at.exception, at.exception
    assert at.session_state["batchnorm.module_tab"] == "Keras momentum"  # the last one opened
    assert at.session_state[NOTES_TAB] == "Evaluating twice"
    for key, kind, value, tab in KEPT:
        if tab:
            click_tab(at, *tab)
        assert getattr(at, kind)(key=key).value == value, key
    assert "**7** training steps" in texts(at.markdown)
    assert "Current PyTorch momentum 0.25 ↔ Keras momentum **0.75**." in texts(at.markdown)


def test_chinese_explanations_keep_their_translations():
    """Texts built in lessons/batchnorm/explanations.py are translated on the page, the values
    inside them too (the eval() source is a text of its own)."""
    at = open_link({"lang": "zh"})
    verdict = " ".join(e.value for e in (*at.success, *at.warning, *at.info)
                       if "**eval()**" in e.value)
    assert f"**eval()** 用的是运行统计量（已跟踪 {DEFAULT_STEPS} 个 batch 后" in verdict
    assert "used" not in verdict
