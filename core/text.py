"""Marking text for translation without translating it.

``core/`` is pure and has no notion of a visitor, so it cannot pick a language. Texts it returns
that a visitor reads (pitfall lessons, scenario explanations, notes, error messages) are written
in English and marked, and the page translates them when it shows them (``ui.i18n.tr``):

- :func:`N_` marks a fixed string and returns it unchanged;
- :class:`T` is a sentence with values: ``T("{n:,} holes", n=holes)`` *is* the English string
  (a ``str``: comparisons, ``in``, f-strings and pickling work as before) and also keeps its
  template and values, so the page can translate the template and then put the values in.
  ``raise ValueError(T("got {x}", x=x))`` gives an error a page can show translated.

Babel's extraction collects both (``-k N_ -k T``, see ``tools/i18n.py``).
"""

from __future__ import annotations

from typing import Any


def N_(message: str) -> str:  # the gettext convention's name, which Babel looks for
    """Return ``message`` unchanged: marks it for the catalog, translated where it is shown."""
    return message


class T(str):
    """An English sentence built from a template and values, which a page can translate.

    ``T("Applied EXIF orientation {n}.", n=6) == "Applied EXIF orientation 6."``;
    ``.template`` and ``.args`` keep what it was made from.
    """

    template: str
    args: dict[str, Any]

    def __new__(cls, template: str, /, **args: Any) -> T:
        text = super().__new__(cls, template.format(**args) if args else template)
        text.template = template
        text.args = args
        return text

    def __reduce__(self):  # st.cache_data pickles results: keep the template and the values
        return (_rebuild, (self.template, self.args))


def _rebuild(template: str, args: dict[str, Any]) -> T:
    return T(template, **args)


def split_comment(line: str) -> tuple[str, str] | None:
    """A code line's ``# comment``: ``(everything up to and including "# ", the comment text)``,
    or ``None`` when the line has none. A ``#`` inside a quoted string is not a comment.

    Snippet comments are translated like any other text (``ui.code.localized``); the text after
    ``# `` is the catalog message (``tools/i18n.py`` extracts it from the snippet's source).
    """
    quote = ""
    for position, char in enumerate(line):
        if quote:
            if char == quote and line[position - 1] != "\\":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (position == 0 or line[position - 1].isspace()):
            text = line[position + 1 :]
            if text and not text.startswith(" "):
                continue  # "#4062", "#!": not a comment a person wrote
            spaces = len(text) - len(text.lstrip(" "))
            comment = text.strip()
            return (line[: position + 1 + spaces], comment) if comment else None
    return None


def is_english_comment(comment: str) -> bool:
    """Whether a snippet comment is prose to translate: two or more English words and no
    Chinese (the notes' own Chinese comments stay as they are; ``# noqa`` is not prose)."""
    words = [w for w in comment.replace("-", " ").split() if w.isascii() and w.isalpha()]
    return len(words) >= 2 and not any("\u3400" <= ch <= "\u9fff" for ch in comment)
