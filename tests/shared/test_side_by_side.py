"""ui.pictures.side_by_side: one picture per column, as wide as it, with its caption and alt
text in the session's language."""

from __future__ import annotations

import pytest

from core.text import T
from ui.pictures import side_by_side


class _Column:
    def __init__(self) -> None:
        self.images: list[tuple[object, dict]] = []

    def image(self, picture, **kwargs) -> None:
        self.images.append((picture, kwargs))


def test_each_picture_goes_to_its_column_with_its_texts():
    columns = [_Column(), _Column()]
    captions = [("original", T("Map after {k} layer(s).", k=1)),
                (T("Overlay (alpha {alpha:.2f})", alpha=0.5), "The overlay.")]  # fmt: skip
    side_by_side(columns, [b"png 1", b"png 2"], captions, output_format="PNG")
    assert columns[0].images == [(b"png 1", {"caption": "original", "alt": "Map after 1 layer(s).",
                                             "width": "stretch", "output_format": "PNG"})]
    assert columns[1].images[0][1]["caption"] == "Overlay (alpha 0.50)"


def test_a_missing_picture_or_caption_is_an_error():
    with pytest.raises(ValueError):
        side_by_side([_Column(), _Column()], [b"png"], [("a", "b"), ("c", "d")])
