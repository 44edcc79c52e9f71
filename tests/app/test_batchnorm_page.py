"""AppTest for the BatchNorm explorer: every control, the training buttons and bad input."""

from __future__ import annotations

import pytest

STEPS_KEY = "batchnorm._steps_done"


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(elements) -> str:
    return " ".join(e.value for e in elements)


@pytest.fixture
def page(open_page):
    at = open_page("batchnorm")
    assert not at.exception, at.exception
    return at


def test_smoke_defaults(page):
    at = page
    assert at.title[0].value == "BatchNorm explorer"
    assert not at.error
    assert STEPS_KEY not in at.session_state or at.session_state[STEPS_KEY] == 0
    # before training, eval() normalizes with the fresh buffers (0, 1): a wide gap
    m = metrics(at)
    assert float(m["train() std"]) == pytest.approx(1.0, abs=1e-3)
    assert abs(float(m["eval() mean"])) > 1.0
    assert len(at.get("plotly_chart")) >= 2


def test_train_step_reset(page):
    at = page
    at.number_input(key="batchnorm.n_steps").set_value(100).run()
    at.button(key="batchnorm.train").click().run()
    assert not at.exception
    assert at.session_state[STEPS_KEY] == 100
    m = metrics(at)
    assert float(m["eval() std"]) == pytest.approx(1.0, abs=0.15)
    at.button(key="batchnorm.step").click().run()
    assert at.session_state[STEPS_KEY] == 101
    at.button(key="batchnorm.reset").click().run()
    assert at.session_state[STEPS_KEY] == 0
    assert not at.exception


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
    at.radio(key="batchnorm.keras_direction").set_value("Keras → PyTorch").run()
    at.number_input(key="batchnorm.keras_value").set_value(0.99).run()
    assert not at.exception, at.exception
    assert not at.error
    assert "Keras 0.99 → PyTorch **0.01**" in texts(at.markdown)
    at.radio(key="batchnorm.momentum_mode").set_value("float (exponential average)").run()
    at.number_input(key="batchnorm.momentum").set_value(0.3).run()
    at.checkbox(key="batchnorm.track").uncheck().run()
    assert not at.exception
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
