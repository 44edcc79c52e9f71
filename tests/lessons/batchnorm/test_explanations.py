"""Tests for lessons/batchnorm/explanations.py: what each section says about the live numbers,
and that every text it builds is in the lesson's catalog (so the page can translate it)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from babel.messages.pofile import read_po

from core.text import T
from lessons.batchnorm import explanations as ex
from lessons.batchnorm.layer import SimConfig, simulate_config
from lessons.batchnorm.modes import ShownRun, compare_run, shown_batch
from lessons.batchnorm.notes_demos import batch_of_one, loader_run, repeated_eval
from lessons.batchnorm.real_modules import anatomy_of
from lessons.batchnorm.stream import Stream, cap_spatial

DEFAULT_STREAM = Stream(mean=(2.0, -1.0, 0.5), std=(3.0, 0.5, 1.0))
POT = Path(__file__).resolve().parents[3] / "locales" / "batchnorm.pot"


@pytest.fixture(scope="module")
def catalog() -> set[str]:
    with POT.open("rb") as handle:
        return {message.id for message in read_po(handle) if message.id}


def marked(part: str) -> list[str]:
    """The catalog messages a part needs: its template and those of the texts inside it."""
    if isinstance(part, ex.Verbatim):
        return []
    if isinstance(part, T):
        inner = [m for value in part.args.values() if isinstance(value, T) for m in marked(value)]
        return [part.template, *inner]
    return [str(part)]


def english(block: ex.ViewBlock) -> str:
    return "".join(block.parts)


def shown_run(steps: int, **settings) -> ShownRun:
    config = SimConfig(stream=settings.pop("stream", DEFAULT_STREAM), **settings)
    history = simulate_config(config, steps)
    return ShownRun(config, history, 0, len(config.spatial), 4, None,
                    compare_run(config, steps, history.state), shown_batch(config, steps))


def all_views() -> list[ex.ViewBlock]:
    run, fresh = shown_run(60), shown_run(0, track_running_stats=False, momentum=None)
    one = SimConfig(stream=Stream(mean=(0.0,), std=(1.0,), nan_step=0), batch_size=1,
                    spatial=())
    return [
        *ex.chart_notices(run.config, run.history, torch_error=None, capped=True,
                          cap_notice=cap_spatial(999, dims=2, batch_size=16, channels=3).notice,
                          nan_step=70),
        *ex.chart_notices(one, simulate_config(one, 0), torch_error="Expected more", capped=False,
                          cap_notice=None, nan_step=None),
        ex.mode_metrics(run.comparison, 0),
        ex.mode_verdict(run.comparison, run.history.state, 0),
        ex.mode_verdict(fresh.comparison, fresh.history.state, 0),
        ex.buffers_paragraph(anatomy_of(3, 2), affine=True, tracked=True),
        ex.buffers_paragraph(anatomy_of(3, 2, affine=False), affine=False, tracked=False),
        *ex.update_view(run.history, 0, 0.1, True),
        *ex.update_view(fresh.history, 0, None, False),
        *ex.variance_view(run.x, 0, torch_error=None),
        *ex.keras_view(None), *ex.keras_view(0.1),
        *ex.frozen_view(run), *ex.frozen_view(fresh),
        *ex.formula_view(run, sample=200, position=3, gamma=2.0, beta=1.0).blocks,
        *[block for column in ex.batch_of_one_columns(batch_of_one(3, 0)) for block in column],
        *ex.loader_view(loader_run(9, 4, drop_last=False)),
        *[b for r in repeated_eval(run.config) for b in ex.repeated_eval_view(r, 0)],
    ]


def test_every_text_a_view_builds_is_in_the_catalog(catalog):
    missing = {m for block in all_views() for part in block.parts for m in marked(part)
               if m not in catalog}
    missing |= {m for block in all_views() for delta in block.deltas if delta
                for m in marked(delta) if m not in catalog}
    assert missing == set()


def test_chart_notices():
    run = shown_run(3, momentum=0.0)
    notices = ex.chart_notices(run.config, run.history, torch_error=None, capped=False,
                               cap_notice=None, nan_step=5)
    assert [b.kind for b in notices] == ["warning", "info"]
    assert "never move" in english(notices[0])
    assert english(notices[1]).startswith("The NaN sits in batch 5")
    refused = SimConfig(stream=DEFAULT_STREAM, batch_size=1, spatial=())
    notices = ex.chart_notices(refused, simulate_config(refused, 0), torch_error="boom",
                               capped=True, cap_notice=None, nan_step=None)
    assert [b.kind for b in notices] == ["info", "error", "markdown"]
    assert english(notices[1]) == ("nn.BatchNorm1d in train() says:\n\n`ValueError: boom`\n\n"
                                   "Hint: raise the batch size or the spatial size.")
    assert "(1, 3)" in english(notices[2])


def test_mode_verdict_says_caught_up_lagging_or_no_buffers():
    assert ex.mode_verdict(shown_run(100).comparison, shown_run(100).history.state, 0).kind == \
        "success"
    lagging = shown_run(1)
    verdict = ex.mode_verdict(lagging.comparison, lagging.history.state, 0)
    assert verdict.kind == "warning" and "train/eval gap" in english(verdict)
    assert "after 1 tracked batches): running_mean" in english(verdict)
    untracked = shown_run(1, track_running_stats=False)
    verdict = ex.mode_verdict(untracked.comparison, untracked.history.state, 0)
    assert verdict.kind == "info" and ex.GAP in verdict.parts
    assert english(verdict).endswith("Both histograms coincide (max gap 0).")


def test_formula_view():
    run = shown_run(10)
    view = ex.formula_view(run, sample=200, position=3, gamma=2.0, beta=1.0)
    kinds = [b.kind for b in view.blocks]
    assert kinds == ["caption", "latex", "latex", "markdown", "metrics", "success"]
    assert "following sample 15, position 3" in english(view.blocks[0])
    assert "bn.weight.fill_(2.0)" in view.snippet
    refused = ex.formula_view(replace(run, torch_error="no"), sample=0, position=0, gamma=1.0,
                              beta=0.0)
    assert [b.kind for b in refused.blocks] == ["info"] and refused.snippet is None
    bad = replace(run, x=torch.randn(1, 3, 1, 1))  # one value per channel: torch refuses
    failed = ex.formula_view(bad, sample=0, position=0, gamma=1.0, beta=0.0)
    assert failed.blocks[-1].kind == "error" and failed.snippet is None
    assert english(failed.blocks[-1]).endswith("Hint: pick another element or eps.")


def test_keras_conversion():
    assert english(ex.keras_conversion("PyTorch → Keras", 0.1)) == "PyTorch 0.1 → Keras **0.9**"
    assert english(ex.keras_conversion("Keras → PyTorch", 0.99)) == \
        "Keras 0.99 → PyTorch **0.01**"


def test_repeated_eval_view():
    tracked, untracked = repeated_eval(SimConfig(stream=DEFAULT_STREAM, spatial=(4, 4)))
    assert [b.kind for b in ex.repeated_eval_view(tracked, 0)] == \
        ["markdown", "metrics", "markdown", "success"]
    assert ex.repeated_eval_view(untracked, 0)[-1].kind == "warning"
    _, failing = repeated_eval(SimConfig(stream=DEFAULT_STREAM, spatial=()), eval_batch=11)
    assert [b.kind for b in ex.repeated_eval_view(failing, 0)] == ["markdown", "text", "markdown"]
