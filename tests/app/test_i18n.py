"""中文 / English: catalogs complete and compiled, every page in one language, per visitor.

The language checks read every text a visitor reads on a page (tests/app/i18n_checks.py): a
Chinese run must leave no English sentence (three or more English words outside code, API
names and the allow-list), an English run no Chinese outside the notes' own quotes.
"""

from __future__ import annotations

import gettext
import io

import pytest
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from streamlit.testing.v1 import AppTest

from lessons.registry import lesson_links
from tests.app.conftest import open_cold
from tests.app.i18n_checks import chinese_outside_quotes, untranslated, visible_texts
from tools.i18n import DOMAINS, LANGUAGES, ROOT, po_path, snippet_comments
from tools.i18n import untranslated as untranslated_msgids
from ui import i18n

LESSON_LINKS = lesson_links()

SLUGS = ["home", "indexing", "batchnorm", "warp", "saliency", "flow", "memory"]
#: Pages whose every visible text is translated (all of them today); a page added later joins
#: when its translation is done. The Chinese-page checks run on these.
TRANSLATED: tuple[str, ...] = tuple(SLUGS)
KEYWORDS = {"_": None, "N_": None, "T": None, "ngettext": (1, 2)}


def _open(slug: str, *, lang: str | None = None, locale: str | None = None) -> AppTest:
    at = open_cold(slug, {"lang": lang} if lang else {}, locale=locale)
    assert not at.exception, at.exception
    return at


# ---------------------------------------------------------------------------------- catalogs
def _source_messages(domain: str) -> set[str]:
    found = set()
    for name in DOMAINS[domain]:
        for _lineno, message, _comments, _context in extract_from_file(
            "python", str(ROOT / name), keywords=KEYWORDS
        ):
            found.add(message if isinstance(message, str) else message[0])
    return found


def _catalog(domain: str, locale: str):
    with po_path(domain, locale).open("rb") as handle:
        return read_po(handle)


@pytest.mark.parametrize("locale", LANGUAGES)
@pytest.mark.parametrize("domain", list(DOMAINS))
def test_every_marked_string_has_a_translation(domain, locale):
    catalog = _catalog(domain, locale)
    in_catalog = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}
    not_extracted = sorted((_source_messages(domain) | snippet_comments(domain)) - in_catalog)
    assert not not_extracted, (
        f"{len(not_extracted)} strings of {domain} are not in its catalog: run "
        f"`python -m tools.i18n all {domain}` and translate them; first: {not_extracted[:5]}"
    )
    missing = untranslated_msgids(po_path(domain, locale))
    assert not missing, f"{len(missing)} {domain} strings lack {locale}: {missing[:5]}"


@pytest.mark.parametrize("locale", LANGUAGES)
@pytest.mark.parametrize("domain", list(DOMAINS))
def test_compiled_catalog_is_the_po_file(domain, locale):
    """The .mo the app reads holds exactly what the .po says (a stale .mo, compiled before the
    last edit of the .po, fails here: content is compared, not file times, which a checkout
    does not keep)."""
    compiled = io.BytesIO()
    write_mo(compiled, _catalog(domain, locale))
    compiled.seek(0)
    expected = gettext.GNUTranslations(compiled)._catalog
    mo = po_path(domain, locale).with_suffix(".mo")
    assert mo.exists(), f"{mo} is missing: run `python -m tools.i18n compile {domain}`"
    with mo.open("rb") as handle:
        actual = gettext.GNUTranslations(handle)._catalog
    assert actual == expected, f"{mo.name} is older than {mo.stem}.po: run tools.i18n compile"


def test_the_glossary_terms_are_used_as_the_glossary_says():
    """A glossary term is translated one way: no catalog uses a rejected synonym."""
    rejected = {"张量": ["张 量"], "显存": ["内存显存"], "缓存分配器": ["高速缓存分配器"]}
    for domain in DOMAINS:
        for message in _catalog(domain, "zh_CN"):
            text = "".join(message.string) if isinstance(message.string, tuple) else message.string
            for term, wrong in rejected.items():
                assert not any(w in (text or "") for w in wrong), (domain, message.id, term)


# ---------------------------------------------------------------------------------- choosing
def test_language_comes_from_the_browser():
    assert i18n.language_from_locale("zh-CN") == "zh"
    assert i18n.language_from_locale("zh-Hant-TW") == "zh"
    assert i18n.language_from_locale("en-US") == "en"
    assert i18n.language_from_locale(None) == "en"
    assert _open("home", locale="zh-CN").session_state["lang"] == "zh"
    assert _open("home", locale="en-US").session_state["lang"] == "en"


def test_a_link_names_the_language_and_wins_over_the_browser():
    at = _open("warp", lang="zh", locale="en-US")
    assert at.session_state["lang"] == "zh"
    assert at.query_params.get("lang") == "zh"
    assert [s.value for s in at.sidebar.subheader][:2] == ["课堂", "设置"]  # Class, Settings


def test_two_visitors_see_two_languages_at_once():
    """No process-wide translation: sessions alternate and each keeps its own language."""
    zh = _open("warp", locale="zh-CN")
    en = _open("warp", locale="en-US")
    for _round in range(2):
        zh.run()
        en.run()
        assert [s.value for s in zh.sidebar.subheader][:2] == ["课堂", "设置"]
        assert [s.value for s in en.sidebar.subheader][:2] == ["Class", "Settings"]
        assert zh.title[0].value != en.title[0].value or "warp" not in TRANSLATED


def test_an_unknown_language_opens_in_english_with_the_notice():
    at = _open("warp", lang="fr")
    assert at.session_state["lang"] == "en"
    assert "lang" not in at.query_params
    (notice,) = [t.value for t in at.toast]
    assert "`lang`" in notice


def test_switching_the_language_keeps_the_controls_and_the_computation():
    at = _open("warp")
    at.slider(key="warp.angle").set_value(45.0).run()
    at.selectbox(key="warp.mode").select("nearest").run()
    at.radio(key="warp.image.source").set_value("Bundled sample").run()
    metric = next(m.value for m in at.metric)
    at.radio(key="lang").set_value("zh").run()
    assert not at.exception, at.exception
    assert at.session_state["lang"] == "zh"
    assert at.query_params.get("lang") == "zh"  # the view's link carries the chosen language
    assert at.slider(key="warp.angle").value == 45.0
    assert at.selectbox(key="warp.mode").value == "nearest"
    assert at.radio(key="warp.image.source").value == "Bundled sample"
    assert next(m.value for m in at.metric) == metric
    at.radio(key="lang").set_value("en").run()
    assert at.radio(key="warp.image.source").value == "Bundled sample"
    assert at.slider(key="warp.angle").value == 45.0


def test_a_link_made_in_english_opens_in_chinese():
    """A menu value in a link is the English label; a Chinese page translates it first."""
    at = open_cold("home", {"lang": "zh", "home.image.source": "Upload a file"})
    assert not at.exception, at.exception
    assert at.radio(key="home.image.source").value == "Upload a file"
    assert len(at.toast) == 0, [t.value for t in at.toast]


# ---------------------------------------------------------------------------------- pages
@pytest.mark.parametrize("slug", SLUGS)
def test_an_english_page_has_no_chinese_outside_the_notes_quotes(slug):
    texts = visible_texts(_open(slug, locale="en-US"))
    assert texts
    assert chinese_outside_quotes(texts) == []


@pytest.mark.parametrize("slug", TRANSLATED)
def test_a_chinese_page_has_no_english_sentence(slug):
    texts = visible_texts(_open(slug, lang="zh"))
    assert untranslated(texts) == []


def test_the_check_finds_english_left_in_a_chinese_page():
    """The check can fail: an untranslated page (or a sentence in a tooltip) is found."""
    from tests.app.i18n_checks import VisibleText, english_sentences

    assert english_sentences("这是 `torch.gather` 的例子") == []
    assert english_sentences("每个格子 comes from the input") == ["comes from the input"]
    assert english_sentences("窗口大小为 k x k，补零") == []
    assert english_sentences("这 is a big tensor") == ["is a big tensor"]
    assert english_sentences("Look at: torch.nn.BatchNorm2d(3)") == []
    assert english_sentences("报错 'Trying to backward through the graph'（A 行）") == []
    assert untranslated([VisibleText("toggle.help", "Slower convolutions on a GPU", False)])
    assert chinese_outside_quotes([VisibleText("text.body", "笔记", True)]) == []
    assert chinese_outside_quotes([VisibleText("caption.body", "笔记", False)])


@pytest.mark.parametrize(
    "lesson", LESSON_LINKS, ids=[f"{n}-{lesson.slug}" for n, lesson in enumerate(LESSON_LINKS)]
)
def test_every_lesson_link_opens_whole_in_chinese(lesson):
    """The lessons' values are English labels: a Chinese page takes each of them (no notice)."""
    at = open_cold(lesson.slug, {**dict(lesson.params), "lang": "zh"})
    assert not at.exception, at.exception
    assert at.session_state["lang"] == "zh"
    assert [t.value for t in at.toast] == []


def _broken_bold(text: str) -> list[str]:
    """``**`` runs that markdown (CommonMark) will not read as bold: a closing ``**`` right
    after punctuation but before a letter (``**请看：**同``), or an opening one right after a
    letter but before punctuation (``中**（x）**``). Chinese punctuation makes both common."""
    import unicodedata

    def kind(ch: str) -> str:
        if not ch or ch.isspace():
            return "space"
        if ch in "{}":  # a placeholder: filled with text when shown
            return "letter"
        return "punct" if unicodedata.category(ch).startswith("P") else "letter"

    broken = []
    positions = [i for i in range(len(text) - 1) if text.startswith("**", i)]
    positions = [p for n, p in enumerate(positions) if n == 0 or p > positions[n - 1] + 1]
    for n, at in enumerate(positions):
        before = kind(text[at - 1] if at else "")
        after = kind(text[at + 2] if at + 2 < len(text) else "")
        closing = n % 2 == 1
        if closing and before == "punct" and after == "letter":
            broken.append(text[max(0, at - 6) : at + 6])
        if not closing and after == "punct" and before == "letter":
            broken.append(text[max(0, at - 6) : at + 6])
    return broken


def test_broken_bold_is_found():
    assert _broken_bold("**请看：**同一个") and _broken_bold("中文**（x）**")
    assert _broken_bold("**请看：**{what}")
    assert not _broken_bold("**请看**：同一个") and not _broken_bold("**Look at:** the map")


@pytest.mark.parametrize("domain", list(DOMAINS))
def test_chinese_bold_renders_as_bold(domain):
    broken = []
    for message in _catalog(domain, "zh_CN"):
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        broken += [(message.id, b) for s in strings if s for b in _broken_bold(s)]
    assert broken == [], f"markdown will show these ** literally: {broken[:5]}"


def test_a_message_in_several_catalogs_has_one_translation():
    """A lookup takes the first catalog that has a message (ui.i18n.DOMAINS order), so a second
    translation of the same English in another catalog would never be shown: there is one."""
    seen: dict[str, tuple[str, object]] = {}
    differing = []
    for domain in DOMAINS:
        for message in _catalog(domain, "zh_CN"):
            if not message.id or not message.string:
                continue
            key = message.id if isinstance(message.id, str) else message.id[0]
            if key in seen and seen[key][1] != message.string:
                differing.append((key, seen[key], (domain, message.string)))
            seen.setdefault(key, (domain, message.string))
    assert differing == [], differing[:5]


@pytest.mark.parametrize("domain", list(DOMAINS))
def test_a_translation_keeps_every_placeholder(domain):
    """``{name}`` placeholders are filled with live values: a translation that drops one hides
    the number, and one that adds or misspells one raises KeyError on the page."""
    import string

    def names(text: str) -> set[str]:
        try:
            return {field for _t, field, _f, _c in string.Formatter().parse(text) if field}
        except ValueError:  # not a template (literal braces in code): nothing to compare
            return set()

    wrong = []
    for message in _catalog(domain, "zh_CN"):
        if not message.id or "python-brace-format" not in message.flags:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        expected = set().union(*(names(i) for i in ids))
        wrong += [(ids[0], s) for s in strings if s and names(s) != expected]
    assert wrong == [], wrong[:5]


def test_snippet_comments_follow_the_language(monkeypatch):
    """The code stays code; an English comment the catalog knows is shown in Chinese, and a
    comment it does not know (the notes' own code) stays as written."""
    from ui import code

    snippet = "import torch\nx = torch.zeros(3)  # n = 4 per channel\n# keep me as I am, please\n"
    monkeypatch.setattr(code, "current_language", lambda: "en")
    assert code.localized(snippet) == snippet
    monkeypatch.setattr(code, "current_language", lambda: "zh")
    monkeypatch.setattr(code, "_", i18n.translations("zh").gettext)
    shown = code.localized(snippet).split("\n")
    assert shown[0] == "import torch"
    assert shown[1] == "x = torch.zeros(3)  # 每个通道 n = 4"
    assert shown[2] == "# keep me as I am, please"
    assert "n = 4 per channel" in snippet_comments("batchnorm")


def test_tr_translates_core_texts_and_their_values(monkeypatch):
    """A T is translated as its template, a value that is a T too before it is filled in; an
    empty text stays empty (gettext would return the catalog's header for it)."""
    from core.text import T

    monkeypatch.setattr(i18n, "current_language", lambda: "zh")
    assert i18n.tr("") == ""
    assert i18n.tr(T("Upload a file")) == "上传文件"
    outer = T("Could not use this upload: {error}", error=T("Upload a file"))
    assert i18n.tr(outer) == "无法使用这个上传的文件：上传文件"
    assert i18n.tr(ValueError(outer)) == "无法使用这个上传的文件：上传文件"
    monkeypatch.setattr(i18n, "current_language", lambda: "en")
    assert i18n.tr(outer) == "Could not use this upload: Upload a file"
