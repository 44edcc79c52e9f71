"""ui.progress.progress_bar: the bar moves with the work's progress, says its step in the
session's language, and is gone when the block ends, however it ends."""

from __future__ import annotations

import pytest

from core.text import T
from ui import progress as P


class _Bar:
    def __init__(self, value: float, text: str) -> None:
        self.shown: list[tuple[float, str]] = [(value, text)]
        self.emptied = False

    def progress(self, value: float, text: str) -> None:
        self.shown.append((value, text))

    def empty(self) -> None:
        self.emptied = True


@pytest.fixture
def bars(monkeypatch) -> list[_Bar]:
    made: list[_Bar] = []

    def progress(value: float, text: str) -> _Bar:
        made.append(_Bar(value, text))
        return made[-1]

    monkeypatch.setattr(P.st, "progress", progress)
    return made


def test_the_bar_follows_the_work_and_is_removed(bars):
    with P.progress_bar("Vanilla gradient") as progress:
        progress(0.5, T("{done}/{total} steps", done=1, total=2))
        progress(1.5, "done")  # beyond the end: a full bar, not an error
        progress(-0.1, "again")
    (bar,) = bars
    assert bar.shown == [(0.0, "Vanilla gradient"), (0.5, "Vanilla gradient: 1/2 steps"),
                         (1.0, "Vanilla gradient: done"), (0.0, "Vanilla gradient: again")]
    assert bar.emptied


def test_without_the_prefix_the_text_is_the_step_alone_and_an_error_still_removes_it(bars):
    with pytest.raises(RuntimeError), P.progress_bar("Randomizing ...", prefix=False) as progress:
        progress(0.25, "layer 1")
        raise RuntimeError("the model failed")
    assert bars[0].shown[-1] == (0.25, "layer 1") and bars[0].emptied
