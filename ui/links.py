"""Lesson links: every value control is bound to the URL, and the page says what a link dropped.

Controls use Streamlit's own binding: ``st.slider(..., key="warp.angle", **BOUND)``; a radio or a
select box whose options are named in the session's language is :func:`bound_choice`. The key is
the query parameter's name (``?warp.angle=30``): the page prefix makes every name unique across
the app, so one page's values never leak into another's, and tests, ``st.session_state`` and the
URL all use one name per control. A value at its default leaves the URL clean; with
``persist_state="session"`` a control keeps its value across page switches (Streamlit keeps it;
no copy of widget state is written by hand).

A link is user input. Streamlit drops a bound value it cannot use (wrong type, out of range, not
an option) and clamps text to ``max_chars``; :func:`link_snapshot` before the page and
:func:`report_link` after it compare the URL with what the controls ended up holding, remove
parameters no control on this page reads, and show one short notice naming what was dropped.
Text that Streamlit accepts but the page cannot parse (a matrix, a tensor) is checked by the page
with :func:`reject_unusable_link_value` before it draws the control.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import streamlit as st

from core.class_view import CLASS_PARAMS
from core.text import N_
from ui.i18n import LANG_KEY, _, label_translations, ngettext, translator

#: Keyword arguments that bind a value control to the URL and keep it across page switches.
BOUND: dict[str, str] = {"bind": "query-params", "persist_state": "session"}

#: Longest link the "Link to this view" box hands out (old browsers and chat apps cut longer).
MAX_LINK_CHARS = 2000
#: What a link never carries, said under the link.
NOT_CARRIED = N_(
    "It does not carry uploaded files or models you uploaded: whoever opens it gets the "
    "bundled samples instead."
)

#: Parameters that are not controls of a page: the visitor's language and class membership
#: (ui/classroom.py). Never "unknown"; never in "Link to this view" (a seat is one student's).
_OWN_PARAMS = (LANG_KEY, *CLASS_PARAMS)
_REJECTED = "_links.rejected"  # keys a page rejected in this run (session state, per session)
_TRANSLATED = "_links.translated"  # this session's link labels are in its language


def bound_choice(widget: Callable, label: str, options: Sequence | Mapping[Any, str], key: str,
                 **kwargs: Any):  # fmt: skip
    """``widget`` (``st.radio``, ``st.selectbox``) under the translated ``label``, bound to the
    URL as ``key``, and its value. ``options``: the values the page's code reads, or a dict of
    each value to its English name (a msgid), which the widget shows in the session's language.
    Other keyword arguments go to ``widget``."""
    if isinstance(options, Mapping):
        say, names = translator(), options
        kwargs["format_func"] = lambda value: say(names[value])
    return widget(label, list(options), key=key, **BOUND, **kwargs)


def changed_from(defaults: Mapping[str, object]) -> bool:
    """Whether any control of ``defaults`` (key -> its default value) is away from its default:
    set in this session, or given by the link (a link's value is in the URL before the control
    has read it; a default never is). For a section that opens when its controls were changed."""
    return any(key in st.query_params or st.session_state.get(key, default) != default
               for key, default in defaults.items())  # fmt: skip


def link_snapshot(lang_rejected: bool = False) -> dict[str, list[str]]:
    """The URL's query parameters at the start of a run, every value of each, as given.
    ``lang_rejected``: ui.i18n.start_language already removed an unknown ``?lang=``."""
    st.session_state[_REJECTED] = [LANG_KEY] if lang_rejected else []
    params = st.query_params
    return {key: params.get_all(key) for key in params}


def translate_link_labels(lang: str) -> None:
    """On a session's first run, put a link's menu and tab labels into the session's language.

    Streamlit binds a choice by the label the page shows, so a lesson link written with the
    English labels (``?memory.scenario=Fragmentation+OOM+and+retry``) would be dropped by a
    Chinese page, and a view copied from a Chinese page by an English one. Only values that are
    a whole catalog text are translated; numbers and tensors are left alone. Later runs need
    nothing: Streamlit reads the URL into a control only when the control first appears."""
    if st.session_state.get(_TRANSLATED):
        return
    st.session_state[_TRANSLATED] = True
    table = label_translations(lang)
    with _query_params() as params:
        for key in list(params._query_params):
            values = params._query_params[key]
            values = values if isinstance(values, list) else [values]
            translated = [table.get(value, value) for value in values]
            if translated != values and not params.is_bound(key):
                params._set_item_internal(key, translated)
                params._initial_query_params[key] = translated
                params._send_query_param_msg()


def reject_unusable_link_value(key: str, is_usable: Callable[[str], bool]) -> None:
    """Before drawing the text control ``key``: when the URL holds a value for it that the page
    cannot use (``is_usable(value)`` is False), remove it so the control opens at its default,
    and remember it for the notice. Call on every run; only a value from a link is checked."""
    value = st.query_params.get(key)
    if value is None or _is_bound(key):
        return  # no value, or the control already took it (bound): the user's own edit
    if is_usable(value):
        return
    del st.query_params[key]
    # Controls read the URL as it was when the run started (Streamlit keeps a copy), so the
    # value must leave that copy too, or the control would still open with it.
    with _query_params() as params:
        params._initial_query_params.pop(key, None)
    st.session_state.setdefault(_REJECTED, []).append(key)


def report_link(snapshot: Mapping[str, list[str]]) -> None:
    """After the page ran: drop what no control read, show the notice, draw the view's link."""
    dropped = dropped_params(snapshot)
    unknown = [key for key in st.query_params if key not in _OWN_PARAMS and not _is_bound(key)]
    for key in unknown:
        del st.query_params[key]
    message = link_notice(dropped, len(unknown))
    if message:
        st.toast(message, icon=":material/link_off:", duration="long")
    _view_link_box()


def dropped_params(snapshot: Mapping[str, list[str]]) -> list[str]:
    """Names of the link's bound parameters the page could not use as given, in link order."""
    rejected = set(st.session_state.get(_REJECTED, []))
    dropped = [LANG_KEY] if LANG_KEY in rejected else []
    for key, given in snapshot.items():
        if key == LANG_KEY:
            continue  # ui.i18n.start_language checked it
        if key in rejected or (_is_bound(key) and not _value_kept(key, given)):
            dropped.append(key)
    return dropped


def link_notice(dropped: list[str], unknown: int) -> str:
    """The one short notice, or ``""`` when the link was used whole. Names come from the page's
    own controls (never the link's text); unknown names are only counted."""
    parts = []
    if dropped:
        names = ", ".join(f"`{key}`" for key in dropped)
        parts.append(_("{names}: value not usable, so at the default").format(names=names))
    if unknown:
        parts.append(
            ngettext(
                "{n} unknown parameter ignored", "{n} unknown parameters ignored", unknown
            ).format(n=unknown)
        )
    if not parts:
        return ""
    return _("This link was not used whole.") + " " + _("; ").join(parts) + _(".")


def view_link(base_url: str, params: Mapping[str, list[str]]) -> tuple[str, list[str]]:
    """The link to ``base_url`` with ``params``, at most :data:`MAX_LINK_CHARS` long: the longest
    values are left out until it fits. Returns the link and the names left out."""
    if not urlsplit(base_url).path:
        base_url += "/"  # Home's st.context.url has no path; a browser shows "host/?..."
    kept = dict(params)
    left_out: list[str] = []
    while True:
        query = urlencode([(key, value) for key, values in kept.items() for value in values])
        link = f"{base_url}?{query}" if query else base_url
        if len(link) <= MAX_LINK_CHARS or not kept:
            return link, left_out
        longest = max(kept, key=lambda key: sum(len(value) for value in kept[key]))
        left_out.append(longest)
        del kept[longest]


def _view_link_box() -> None:
    """The sidebar's "Link to this view": the current URL in a code box (one-click copy)."""
    base = st.context.url
    if not base:
        return  # no browser (AppTest): nothing to link to
    params = {key: st.query_params.get_all(key) for key in st.query_params
              if key not in CLASS_PARAMS}  # fmt: skip
    link, left_out = view_link(base, params)
    with st.sidebar:
        st.subheader(_("Link to this view"), anchor=False)
        st.code(link, language=None, wrap_lines=True)
        note = _("Opens this page with these controls for anyone.") + " " + _(NOT_CARRIED)
        if left_out:
            names = ", ".join(f"`{key}`" for key in left_out)
            note += " " + _(
                "Your edit of {names} is too long for a link: the link holds the preset, not "
                "the edit."
            ).format(names=names)
        st.caption(note)


def _query_params():
    """Streamlit's query-parameter state for this session. Streamlit has no public call that says
    whether a parameter is bound or what a control accepts; its binding table is the one source
    (tests/shared/test_links.py and tests/app/test_hostile_links.py fail when an upgrade moves
    it)."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    return get_session_state().query_params()


def _is_bound(key: str) -> bool:
    """Whether a control drawn in this run reads query parameter ``key``."""
    with _query_params() as params:
        return bool(params.is_bound(key))


def _options_of(key: str) -> list[str] | None:
    """The option labels the control bound to ``key`` accepts in a URL, or ``None`` when it is
    not a choice (a number, a switch, text)."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    with _query_params() as params:
        binding = params.get_binding_for_param(key)
    if binding is None:
        return None
    metadata = get_session_state()._state.get_widget_metadata(binding.widget_id)
    return None if metadata is None else metadata.formatted_options


def _value_kept(key: str, given: list[str]) -> bool:
    """Whether control ``key`` holds what the link asked: either the URL still says it, or the
    link asked for the default (Streamlit leaves defaults out of the URL)."""
    now = st.query_params.get_all(key)
    if now:
        return _same_values(now, given)
    options = _options_of(key)
    if options is not None:  # a choice: the link named a real option, which is the default
        return all(value in options for value in given)
    return _same_values(_as_url_values(st.session_state.get(key)), given)


def _as_url_values(value: object) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def _same_values(a: list[str], b: list[str]) -> bool:
    return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))


def _same_value(a: str, b: str) -> bool:
    """``"0.10"`` and ``"0.1"``, ``"True"`` and ``"true"`` are the same value in a link."""
    if a.strip().lower() == b.strip().lower():
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
