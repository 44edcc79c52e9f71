"""English or Simplified Chinese, chosen per visitor, read from gettext catalogs.

Pages mark every string a visitor reads with :func:`_` (``from ui.i18n import _``) and format
numbers into the translated template: ``_("{n:,} holes").format(n=holes)``. ``core/`` stays
free of Streamlit and of any language: it marks the texts it returns with
:func:`core.text.N_` (which changes nothing) and the page translates them with :func:`_`.

Why not ``gettext.install()``: it sets one language for the whole process, and a Streamlit
process serves every visitor from one interpreter, so every visitor would see the first
visitor's language. Here each call looks up the language of the session that runs the script
(``st.session_state``) and the catalog for it (loaded once per process, read-only, so shared
safely between sessions' threads).

The language comes, in this order, from the link (``?lang=zh``), from the visitor's earlier
choice in this session, then from the browser (``st.context.locale``: any ``zh*`` is Chinese,
anything else English). The sidebar's choice writes ``?lang=`` into the URL, so "Link to this
view" carries it; a language that came from the browser is not written (each student keeps
their own). Streamlit's ``bind="query-params"`` would put a choice's *label* in the URL
(``?lang=中文``); the issue asks for ``?lang=zh`` beside a button that reads 中文, so this one
control keeps the URL itself.

Catalogs: ``locales/zh_CN/LC_MESSAGES/<domain>.po``, one per part of the app, compiled to
``.mo`` with Babel (``python -m tools.i18n all``); docs/translations.md has the
commands.
"""

from __future__ import annotations

import functools
import gettext
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from core.notes import NotesRef
from core.text import T
from lessons.registry import HOME, LESSONS

LANG_KEY = "lang"
LANGUAGES: tuple[str, ...] = ("en", "zh")
LANGUAGE_LABELS = {"en": "English", "zh": "中文"}
#: The catalog folder of each language other than English (the source language).
CATALOG_LOCALES = {"zh": "zh_CN"}
#: gettext domains, one catalog file each (tools/i18n.py says which sources each one holds).
DOMAINS = ("app", HOME.slug, *(page.slug for page in LESSONS))
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locales"
_CHOSEN = "_i18n.chosen"  # session: the language came from a link or a click, not the browser


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The catalog of ``lang`` ("en": none, the source strings are English), once per process.

    Raises FileNotFoundError when a language's compiled catalog is missing (a test checks that
    every catalog is compiled)."""
    if lang not in CATALOG_LOCALES:
        return gettext.NullTranslations()
    first, *rest = (
        gettext.translation(domain, LOCALE_DIR, languages=[CATALOG_LOCALES[lang]])
        for domain in DOMAINS
    )
    for catalog in rest:  # one lookup searches every domain's catalog in turn
        first.add_fallback(catalog)
    return first


def language_from_locale(locale: str | None) -> str:
    """``"zh"`` for a browser language ``zh``, ``zh-CN``, ``zh-Hans-SG``, ... else ``"en"``."""
    return "zh" if (locale or "").strip().lower().startswith("zh") else "en"


def current_language() -> str:
    """This session's language (``"en"`` outside a Streamlit run)."""
    try:
        lang = st.session_state.get(LANG_KEY)
    except Exception:  # no session (bare mode, a unit test): English
        return "en"
    return lang if lang in LANGUAGES else "en"


def _(message: str) -> str:
    """``message`` in this session's language (the message itself when it has no translation)."""
    return translations(current_language()).gettext(message)


def translator() -> Callable[[str], str]:
    """This session's ``_``, fixed to its language now: for ``format_func=translator()``.

    Streamlit (and AppTest) may call a ``format_func`` after the script run, where no session
    says which language to use; this one keeps the run's language."""
    return translations(current_language()).gettext


def tr(text: object) -> str:
    """A text from ``core/`` in this session's language: a :class:`core.text.T` is translated as
    its template, then filled with its values (values that are ``T`` too are translated first);
    a plain string is looked up as it is; an exception shows its first argument that way
    (``tr(error)``)."""
    if isinstance(text, BaseException):
        text = text.args[0] if len(text.args) == 1 else str(text)
    if isinstance(text, T):
        if not text.args:
            return _(text.template)
        # a value that is a core text itself ("the first image", a model's preprocessing)
        values = {name: tr(v) if isinstance(v, T) else v for name, v in text.args.items()}
        return _(text.template).format(**values)
    text = str(text)
    return _(text) if text else ""  # gettext("") is the catalog's header, not a translation


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for count ``n``, in this session's language."""
    return translations(current_language()).ngettext(singular, plural, n)


def start_language() -> tuple[str, bool]:
    """Settle this session's language before anything is drawn (page titles need it).

    Returns the language and whether the link's ``?lang=`` could not be used (an unknown
    language: it is removed, the notice says so, and the browser's language applies)."""
    asked = st.query_params.get(LANG_KEY)
    rejected = asked is not None and asked not in LANGUAGES
    if rejected:
        del st.query_params[LANG_KEY]
    if asked in LANGUAGES and asked != st.session_state.get(LANG_KEY):
        st.session_state[LANG_KEY] = asked  # a link names the language: it wins
        st.session_state[_CHOSEN] = True
    elif LANG_KEY not in st.session_state:
        st.session_state[LANG_KEY] = language_from_locale(st.context.locale)
    if st.session_state.get(_CHOSEN):
        # Streamlit clears the query string on a page switch: put the chosen language back.
        st.query_params[LANG_KEY] = st.session_state[LANG_KEY]
    return current_language(), rejected


def _language_chosen() -> None:
    st.session_state[_CHOSEN] = True
    st.query_params[LANG_KEY] = st.session_state[LANG_KEY]
    _keep_choices()


def _keep_choices() -> None:
    """Keep every menu, radio and tab choice through a language switch.

    The browser reports a choice by its label, which after the switch is in the old language:
    Streamlit then finds it among none of the new labels and may fall back to the default (a
    radio did, in a test). Writing each choice control's value back into session state, in
    this callback before the rerun, makes Streamlit keep the value and send the new label."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    state = get_session_state()._state
    for key in list(st.session_state.keys()):
        widget_id = state._key_id_mapper.get_id_from_key(key, None)
        metadata = state.get_widget_metadata(widget_id) if widget_id else None
        if metadata is not None and metadata.formatted_options is not None and key != LANG_KEY:
            st.session_state[key] = st.session_state[key]


def render_language_choice() -> None:
    """The sidebar's English / 中文 switch. Switching reruns the page in the other language
    with every control as it was (widgets are identified by their keys, not their labels)."""
    # A radio, not a segmented control: the segmented control's selected label failed
    # axe-core's colour contrast with this theme. No index: start_language set the value.
    st.radio(
        "Language / 语言",
        LANGUAGES,
        index=None,
        key=LANG_KEY,
        format_func=LANGUAGE_LABELS.get,
        horizontal=True,
        on_change=_language_chosen,
        help=_("The page's language for you only; a link from this page carries it."),
    )


def cite(ref: str | NotesRef) -> str:
    """``"notes 002:926"`` in this session's language (``core.notes.cite`` is the English)."""
    parsed = NotesRef.parse(ref) if isinstance(ref, str) else ref
    return _("notes {ref}").format(ref=parsed)


@functools.cache
def label_translations(lang: str) -> dict[str, str]:
    """Every catalog text of the other language mapped to ``lang``'s: English -> Chinese for
    ``"zh"``, Chinese -> English for ``"en"``. A link's menu and tab values are the labels the
    page showed (Streamlit binds a choice by its label), so a link made in one language is
    translated with this before the page reads it."""
    catalog = translations("zh")
    pairs: dict[str, str] = {}
    while catalog is not None:
        for msgid, msgstr in getattr(catalog, "_catalog", {}).items():
            if isinstance(msgid, str) and msgid and msgstr:
                pairs.setdefault(msgid, msgstr)
        catalog = getattr(catalog, "_fallback", None)
    return pairs if lang == "zh" else {zh: en for en, zh in pairs.items()}
