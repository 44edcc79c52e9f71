"""The error doctor's pictures agree with the matcher and the catalogue they draw."""

from __future__ import annotations

import pytest

from lessons.errors.catalogue import entries
from lessons.errors.entry import KINDS, RUNS
from lessons.errors.figures import catalogue_counts, catalogue_figure, match_figure
from lessons.errors.matching import MIN_SCORE, Match, find

TITLES = {entry.key: entry.title for entry in entries()}


def test_the_match_bars_are_the_matchers_scores_best_on_top():
    search = find("RuntimeError: element 0 of tensors does not require grad and does not have "
                  "a grad_fn")  # fmt: skip
    assert len(search.matches) >= 2  # no-grad-fn and grad-disabled-globally share the message
    fig = match_figure(search.matches, TITLES)
    bar = fig.data[0]
    assert list(bar.x) == [m.score for m in reversed(search.matches)]
    assert list(bar.customdata)[-1] == TITLES[search.best]  # plotly's last bar is the top one
    assert fig.layout.shapes[0].x0 == MIN_SCORE
    assert list(bar.marker.color).count(bar.marker.color[-1]) == 1  # only the best stands out


def test_a_long_title_is_shortened_on_the_axis_and_whole_on_hover():
    long_key = max(TITLES, key=lambda key: len(TITLES[key]))
    fig = match_figure((Match(long_key, 90.0),), TITLES)
    shown = fig.data[0].text[0].rsplit(" · ", 1)[0]
    assert len(shown) <= 38 and fig.data[0].customdata[0] == TITLES[long_key]


def test_the_catalogue_bars_count_every_entry_once():
    counts = catalogue_counts()
    assert set(counts) == set(KINDS)
    assert sum(n for row in counts.values() for n in row.values()) == len(entries())
    fig = catalogue_figure(counts)
    assert [trace.name for trace in fig.data] == ["live", "live, in a subprocess", "needs a GPU",
                                                  "documented"]  # fmt: skip
    assert sum(sum(trace.x) for trace in fig.data) == len(entries())
    for trace, run in zip(fig.data, RUNS, strict=True):
        by_kind = dict(zip(trace.y, trace.x, strict=True))
        assert by_kind["Autograd"] == counts["autograd"][run]


def test_bad_input_names_what_is_wrong():
    with pytest.raises(ValueError, match="at least one match"):
        match_figure((), TITLES)
    with pytest.raises(ValueError, match="no-such"):
        match_figure((Match("no-such", 80.0),), TITLES)
    with pytest.raises(ValueError, match="misc"):
        catalogue_figure({"misc": {"live": 1}})
