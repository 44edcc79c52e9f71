"""ui.links.bound_choice and changed_from: a choice bound to the URL whose options are named in
the session's language, and whether a section's controls left their defaults."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script() -> None:
    import streamlit as st

    from ui.links import bound_choice, changed_from

    names = {"vanilla": "Vanilla gradient", "smoothgrad": "SmoothGrad"}
    method = bound_choice(st.radio, "Method", names, "demo.method")
    size = bound_choice(st.selectbox, "Size", [1, 2, 3], "demo.size", index=1)
    changed = changed_from({"demo.method": "vanilla", "demo.size": 2})
    st.text(f"{method} {size} changed={changed}")


def _open(**params: str) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params.update(params)
    return at.run()


def test_options_are_the_values_shown_by_their_names():
    at = _open()
    radio = at.radio(key="demo.method")
    assert radio.options == ["Vanilla gradient", "SmoothGrad"] and radio.value == "vanilla"
    assert at.selectbox(key="demo.size").value == 2
    assert at.text[0].value == "vanilla 2 changed=False"
    radio.set_value("smoothgrad").run()
    assert at.text[0].value == "smoothgrad 2 changed=True"


def test_a_link_opens_the_choice_it_names_and_counts_as_changed():
    at = _open(**{"demo.method": "SmoothGrad"})
    assert at.text[0].value == "smoothgrad 2 changed=True"
    assert _open(**{"demo.size": "3"}).text[0].value == "vanilla 3 changed=True"
