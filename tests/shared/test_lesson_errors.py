"""ui.lesson's failures and clicks: an error with what to change stops the page in the figure's
place; a measurement made on a click stays while the view is the same."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _stop_script() -> None:
    import streamlit as st

    from ui.lesson import stop_on_error, stop_with_error

    where = st.container()
    case = st.query_params.get("case", "")
    if case == "direct":
        stop_with_error(where, "the file *a_b*.pt is broken", "upload **another** file.")
    with stop_on_error(where, "try another image.", message="Could not classify: {error}",
                       errors=(ValueError, RuntimeError)):  # fmt: skip
        if case == "raises":
            raise RuntimeError("shape (3, 4)")
        if case == "other":
            raise KeyError("not one of the errors")
    st.text("the rest of the page")


def _run(case: str) -> AppTest:
    at = AppTest.from_function(_stop_script, default_timeout=30)
    at.query_params["case"] = case
    return at.run()


def test_an_error_says_what_to_change_and_stops_the_page():
    at = _run("direct")
    assert not at.exception and not at.text
    (error,) = at.error
    # the message is shown as written (it may quote a file name), the hint as markdown
    assert error.value == "the file \\*a\\_b\\*.pt is broken\n\n**What to change:** upload " \
        "**another** file."  # fmt: skip


def test_the_errors_of_a_block_stop_the_page_with_their_message():
    at = _run("raises")
    assert not at.text
    assert at.error[0].value == ("Could not classify: shape (3, 4)\n\n**What to change:** try "
                                 "another image.")  # fmt: skip
    assert _run("fine").text[0].value == "the rest of the page"
    assert _run("other").exception  # not one of the block's errors: the caller's


def _click_script() -> None:
    import streamlit as st

    from ui.lesson import clicked_result

    view = st.query_params.get("view", "a")

    def measure() -> str:
        if view == "broken":
            raise ValueError("cannot time it")
        st.session_state["runs"] = st.session_state.get("runs", 0) + 1
        return f"timed {view} #{st.session_state['runs']}"

    got = clicked_result(st, "Time again", "demo.retime", ("view", view), measure,
                         spinner="Timing ...", hint="try another view.")  # fmt: skip
    st.text(f"result: {got}")


def test_a_click_s_result_stays_while_the_view_is_the_same():
    at = AppTest.from_function(_click_script, default_timeout=30).run()
    assert at.text[0].value == "result: None"
    at.button(key="demo.retime").click().run()
    assert at.text[0].value == "result: timed a #1"
    at.run()
    assert at.text[0].value == "result: timed a #1"  # kept, not measured again
    at.query_params["view"] = "b"
    at.run()
    assert at.text[0].value == "result: None"  # another view: its own click
    at.query_params["view"] = "broken"
    at.run()
    at.button(key="demo.retime").click().run()
    assert at.error[0].value == "cannot time it\n\n**What to change:** try another view."
    assert at.text[0].value == "result: None"
