"""What a visitor reads on a page run by AppTest, and checks that it is in one language.

:func:`visible_texts` walks the rendered element tree and returns every text a visitor reads:
titles, markdown, captions, alerts, toasts, widget labels, help tooltips and options, tab and
expander labels, metric labels, table headers, image captions and alt texts, a chart's
titles, axis titles, legend names, hover templates and annotations, and the English comments
of Python code blocks (the code itself stays code; LaTeX is left out).

:func:`english_sentences` finds three or more consecutive English words in a text, outside
inline code, a message quoted in ``'...'`` as a library printed it, API names (anything with
``_``, ``.``, ``(`` or a digit) and :data:`ALLOWED`.
:func:`chinese_outside_quotes` finds Chinese in an English run; the notes' own quotes (inside a
``notes_callout-*`` container) and the language switch's own labels are Chinese by design.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from core.text import is_english_comment, split_comment
from testing.apptest import switch_to

#: Names and fixed phrases that stay English in Chinese (products, people, paper titles, units).
ALLOWED: tuple[str, ...] = (
    "Torch Playground", "Adebayo et al", "Egyptian cat", "Grad-CAM", "Gradient x input",
    "Integrated gradients", "SmoothGrad", "Round-trip", "Forward-backward", "PyTorch",
    "OpenCV", "NumPy", "ImageNet", "EfficientNet", "Noto Sans", "Keras momentum",
)  # fmt: skip
#: The language switch names both languages in their own script, in either language.
LANGUAGE_SWITCH_TEXTS = ("Language / 语言", "中文")

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]+")
_CODE_SPAN = re.compile(r"`[^`]*`")
#: A message quoted as torch or the allocator printed it ('CUDA out of memory. ...') stays
#: English, like code.
_QUOTED = re.compile(r"'[^'\n]{4,}'")
_NOTES_QUOTE = re.compile(
    r'<blockquote lang="(zh-CN|en)" class="notes-quote"[^>]*>[^<]*</blockquote>$'
)
_URL = re.compile(r"https?://\S+")
_MD_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_API_TOKEN = re.compile(r"\S*[_.()\[\]0-9=/<>:]\S*")


@dataclass(frozen=True)
class VisibleText:
    """One text a visitor reads: where it is (element type and field), the text, and whether
    it sits in a notes callout (whose quote is the notes' Chinese in both languages)."""

    where: str
    text: str
    in_callout: bool


def visible_texts(at) -> list[VisibleText]:
    """Every text a visitor reads in AppTest ``at``'s last run (see the module docstring)."""
    found: list[VisibleText] = []
    _walk(at._tree, False, found)
    return [t for t in found if t.text.strip()]


def _walk(node, in_callout: bool, found: list[VisibleText]) -> None:
    key = getattr(node, "key", None) or ""
    in_callout = in_callout or str(key).startswith("notes_callout-")
    kind = getattr(node, "type", "")
    for where, text in _texts_of(node, kind):
        found.append(VisibleText(f"{kind}.{where}", text, in_callout))
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            _walk(child, in_callout, found)


def _texts_of(node, kind: str):
    if kind == "code":  # the code stays code; its English comments follow the language
        proto = node.proto
        if proto.language == "python":
            for line in proto.code_text.split("\n"):
                parts = split_comment(line)
                if parts is not None and is_english_comment(parts[1]):
                    yield "comment", parts[1]
        return
    if kind == "latex":
        return
    if kind in ("tab", "expander"):
        yield "label", str(getattr(node, "label", "") or "")
        return
    if kind in ("arrow_data_frame", "dataframe", "table", "arrow_table"):
        value = getattr(node, "value", None)
        if value is not None and hasattr(value, "columns"):
            for column in value.columns:
                yield "column", str(column)
        return
    proto = getattr(node, "proto", None)
    if proto is None or not hasattr(proto, "ListFields"):
        return
    for field, value in proto.ListFields():
        name = field.name
        if name in ("label", "help", "body", "placeholder", "alt", "caption", "text"):
            if isinstance(value, str):
                yield name, value
        elif name == "options":
            for option in value:
                yield "option", option if isinstance(option, str) else _option_text(option)
        elif name == "imgs":
            for image in value.imgs if hasattr(value, "imgs") else value:
                yield "caption", getattr(image, "caption", "")
        elif name == "spec" and isinstance(value, str):
            yield from (("chart", text) for text in _chart_texts(json.loads(value)))


def _option_text(option) -> str:
    for attr in ("content", "label"):
        if getattr(option, attr, ""):
            return getattr(option, attr)
    return ""


_CHART_TEXT_KEYS = {"text", "name", "hovertemplate", "ticktext", "title", "texttemplate"}


def _chart_texts(spec: dict) -> list[str]:
    """Titles, axis titles, legend names, hover templates and annotation texts of a plotly
    spec (its numeric data arrays are not text)."""
    texts: list[str] = []

    def visit(value, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                visit(v, k)
        elif isinstance(value, list):
            for v in value:
                visit(v, key)
        elif isinstance(value, str) and key in _CHART_TEXT_KEYS and not value.startswith("data:"):
            texts.append(value)  # (a data: URI is an embedded PNG, not text)

    visit({"data": spec.get("data", []), "layout": spec.get("layout", {})})
    return texts


def _strip_code(text: str) -> str:
    text = _MD_LINK_TARGET.sub("]", _URL.sub(" ", text))
    text = _CODE_SPAN.sub(" | ", text)
    text = _QUOTED.sub(" | ", text)
    text = re.sub(r"<[^>]+>", " ", text)  # hover templates' <br>, <b>
    text = re.sub(r"%\{[^}]*\}", " | ", text)  # plotly's %{y:.3f}
    for phrase in ALLOWED:
        text = text.replace(phrase, " | ")
    text = re.sub(r"[.,;:!?]+(\s|$)", r" | \1", text)  # sentence punctuation ends a run
    return _API_TOKEN.sub(" | ", text)


def english_sentences(text: str) -> list[str]:
    """Runs of three or more English words in ``text`` (see the module docstring). A single
    letter is a variable more often than a word (``k x k``, ``a b c``): it neither counts nor
    ends a run: "is a big tensor" is a run of three counted words."""
    runs = []
    for chunk in re.split(r"[|,;:!?。，；：！？、（）()\[\]\"“”*#>\n]+", _strip_code(text)):
        words = chunk.split()
        run: list[str] = []
        for word in [*words, ""]:
            if word and _WORD.fullmatch(word):
                run.append(word)
                continue
            if sum(len(w) > 1 for w in run) >= 3:
                runs.append(" ".join(run))
            run = []
    return runs


def chinese_outside_quotes(texts: list[VisibleText]) -> list[VisibleText]:
    """The texts of an English run that contain Chinese and are neither in a notes callout
    nor the language switch's own labels."""
    return [
        t
        for t in texts
        if not t.in_callout
        and t.text not in LANGUAGE_SWITCH_TEXTS
        and _CJK.search(t.text)
    ]


def untranslated(texts: list[VisibleText]) -> list[tuple[str, str]]:
    """``(where, sentence)`` for every English sentence left in a Chinese run. The notes' words
    stay as the notes wrote them, English phrases included: a quote the page marks as the notes'
    (:func:`is_notes_quote`) and a comment of the notes' own code
    (``core.notes.NOTES_CODE_COMMENTS``). Neither needs the notes files, so a clone without
    them checks its pages the same way."""
    from core.notes import is_notes_code_comment

    return [
        (t.where, run)
        for t in texts
        if not is_notes_quote(t)
        and not (t.where == "code.comment" and is_notes_code_comment(t.text))
        for run in english_sentences(t.text)
    ]


def is_notes_quote(text: VisibleText) -> bool:
    """Whether ``text`` is a quote of the notes as ``ui.notes_callout.notes_quote`` draws it: a
    ``<blockquote class="notes-quote">`` whose language is marked (``zh-CN``, or ``en`` where
    the notes copied English docs)."""
    return text.where == "html.body" and bool(_NOTES_QUOTE.match(text.text.strip()))


def main(argv: list[str]) -> int:
    """``python -m tests.app.i18n_checks SLUG [KEY=VALUE ...]``: open page SLUG in Chinese
    (and with the given query parameters) and print every English sentence left, then the same
    page in English and every Chinese text outside the notes' quotes."""
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    slug, *pairs = argv
    for lang in ("zh", "en"):
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params.update({"lang": lang, **dict(pair.split("=", 1) for pair in pairs)})
        if slug != "home":
            switch_to(at, slug)
        at.run(timeout=180)
        if at.exception:
            print("EXCEPTION:", [e.value for e in at.exception])
            return 1
        texts = visible_texts(at)
        if lang == "zh":
            left = untranslated(texts)
            for where, sentence in left:
                print(f"zh  {where:24} {sentence}")
            print(f"zh: {len(left)} English sentences left in {len(texts)} texts")
        else:
            bad = chinese_outside_quotes(texts)
            for text in bad:
                print(f"en  {text.where:24} {text.text[:120]}")
            print(f"en: {len(bad)} texts with Chinese")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
