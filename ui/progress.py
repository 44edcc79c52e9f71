"""A progress bar for one block of slow work, moved by the ``progress(fraction, text)`` callback
that the lessons' long computations take (a map of many images, a randomization test)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import streamlit as st

from ui.i18n import tr


@contextlib.contextmanager
def progress_bar(label: str, *, prefix: bool = True) -> Iterator[Callable[[float, object], None]]:
    """An ``st.progress`` bar for the block, removed when the block ends, however it ends.

    ``label`` (already translated) is its text until the first call of the yielded
    ``progress(fraction, text)``, which moves the bar to ``fraction`` (clamped to [0, 1]) and
    shows ``text`` (a :class:`core.text.T` or a string, translated here), after ``"label: "``
    when ``prefix``."""
    bar = st.progress(0.0, text=label)

    def progress(fraction: float, text: object) -> None:
        said = tr(text)
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"{label}: {said}" if prefix else said)

    try:
        yield progress
    finally:
        bar.empty()
