"""Whether this session's browser tab is hidden, so a live page can stop its timer there.

A ``st.fragment(run_every=...)`` timer runs in the browser and keeps asking the server for
reruns while the tab sits in the background (Chrome slows it to once a second at most, which is
the live chart's own interval). Fifty students with the live page open in a hidden tab would
cost the server as much as fifty watching it. :func:`tab_hidden` mounts a tiny component that
reports the page's Visibility API state (``document.hidden``) to Python when it changes; the
rerun that change causes lets the page drop ``run_every``, and the browser stops its timer
until the tab is shown again.

Streamlit has no built-in way to read visibility, so this is an ``st.components.v2`` component
with a few lines of inline JavaScript (no build step, no network).
"""

from __future__ import annotations

import streamlit as st

# Runs on every mount and on every data change; a module-level listener is replaced, never
# stacked. It reports only a difference from what Python believes (data.hidden), so mounting
# does not cause a rerun, except in a tab opened in the background.
_JS = """
let listener = null;

export default function (component) {
  const { data, setStateValue } = component;
  if (listener) document.removeEventListener("visibilitychange", listener);
  listener = () => setStateValue("hidden", document.hidden);
  document.addEventListener("visibilitychange", listener);
  if (data && data.hidden !== document.hidden) setStateValue("hidden", document.hidden);
  return () => {
    document.removeEventListener("visibilitychange", listener);
    listener = null;
  };
}
"""

_visibility = st.components.v2.component("torch_playground.tab_visibility", js=_JS)


def _stored_hidden(key: str) -> bool:
    stored = st.session_state.get(key)
    if stored is None:
        return False
    value = stored.get("hidden") if hasattr(stored, "get") else getattr(stored, "hidden", False)
    return bool(value)


def tab_hidden(key: str) -> bool:
    """Mount the visibility reporter under ``key``; return whether the tab is hidden now.

    The first run of a session returns ``False`` (a page opened in a background tab reports
    ``True`` right after mounting, which reruns the page). Call it outside any fragment whose
    ``run_every`` depends on it: the change must rerun the whole page to reach the fragment.
    """
    hidden = _stored_hidden(key)
    result = _visibility(
        key=key,
        data={"hidden": hidden},
        default={"hidden": False},
        on_hidden_change=lambda: None,
        height=0,
    )
    return bool(getattr(result, "hidden", hidden))
