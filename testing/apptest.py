"""Opening a page of the app in Streamlit's AppTest the way a browser opens its URL."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Element

from core.questions import Question
from lessons.registry import PAGES_BY_SLUG
from ui.navigation import page_hash_of
from ui.predict import AGAIN_KEY, ANSWER_KEY, PICK_KEY, REVEAL_KEY


def page_path(slug: str) -> str:
    """The page script of ``slug``, relative to ``app.py`` (``lessons/<slug>/page.py``)."""
    if slug not in PAGES_BY_SLUG:
        raise ValueError(f"no page has the slug {slug!r}; pages: {sorted(PAGES_BY_SLUG)}")
    return PAGES_BY_SLUG[slug].relative_script


def switch_to(at: AppTest, slug: str) -> AppTest:
    """Make ``at``'s next run show the page ``slug``, also before its first run (a cold link).

    Every page script is called ``page.py``, and before the app's first run ``st.navigation`` has
    registered nothing, so ``AppTest.switch_page`` alone would fall back to hashing the file's
    name. A browser opens a page by its URL path, and ``st.Page(url_path=slug)`` hashes that:
    so does this.
    """
    at.switch_page(page_path(slug))
    at._page_hash = page_hash_of(slug)
    return at


def stay_on_shown_page(at: AppTest) -> AppTest:
    """Make ``at``'s later runs ask for the page its last run showed, as a browser does.

    After :func:`switch_to`, AppTest asks for that page on every run; when the app itself moved
    the session to another page (``st.switch_page``, a class following its teacher), a browser
    would ask for the page it now shows.
    """
    at._page_hash = ""
    return at


def container_keys(at: AppTest) -> set[str]:
    """The keys of every block (``st.container(key=...)``, a keyed expander) the last run drew,
    sidebar included (a keyed block's id ends with ``-<key>``)."""
    keys: set[str] = set()
    stack = [at._tree]
    while stack:
        node = stack.pop()
        proto_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if isinstance(node, Block) and proto_id.startswith("$$ID-") and proto_id.count("-") >= 2:
            keys.add(proto_id.split("-", 2)[2])
        stack.extend(getattr(node, "children", {}).values())
    return keys


_HIDDEN = re.compile(r"\.st-key-([a-z0-9_-]+) > \* \{ filter: blur")


def hidden_parts(at: AppTest) -> set[str]:
    """The container keys ``ui.question_view.hide_part`` blurs in the last run."""
    return {match for element in at.get("html") for match in _HIDDEN.findall(element.value)}


# --- The Predict panel (ui.predict), answered as one student alone would ----------------------


def pick_question(at: AppTest, index: int) -> AppTest:
    """Show question ``index`` of ``at``'s open Predict panel (its "Question" control) and run;
    the run raises nothing."""
    at.session_state[PICK_KEY] = index
    at.run()
    assert not at.exception, (index, at.exception)
    return at


def reveal(at: AppTest) -> AppTest:
    """Press the panel's reveal button (with a prediction chosen or not) and run; the run raises
    nothing."""
    at.button(key=REVEAL_KEY).click().run()
    assert not at.exception, at.exception
    return at


def revealed_text(elements: Iterable[Element], start: str) -> str:
    """The value of the one element in ``elements`` (``at.error``, ``at.success``...) that starts
    with ``start``: the verdict a reveal shows."""
    found = [str(e.value) for e in elements if str(e.value).startswith(start)]
    assert len(found) == 1, (start, found)
    return found[0]


def _label(question: Question, index: int) -> str:
    """Choice ``index`` as the radio should show it, written out here (not ``ui``'s helper)."""
    return f"{chr(ord('A') + index)}. {question.choices[index].text}"


def check_solo_predict_flow(at: AppTest, questions: Sequence[Question], *, only_error: bool = False,
                            only_success: bool = False) -> None:  # fmt: skip
    """Answer each of ``questions`` (built by the test for the view ``at`` shows, in English, with
    the panel open) on the page, wrong and then right, and check what a student sees.

    For question ``i``: picked, the page shows its prompt and its choices as the radio's options
    (``A. text``...), and blurs its part ``hides`` (a keyed container the run drew; nothing when
    ``hides`` is None). A wrong answer revealed says "Not this time", naming the choice picked
    and the right one, and nothing stays blurred; "Ask me again" blurs the part again; the right
    answer revealed says "Right", naming the right choice, and nothing is blurred. With
    ``only_error`` (``only_success``), the wrong (right) answer's verdict is the page's only
    ``st.error`` (``st.success``): a page whose proofs show successes of their own leaves it off.
    Every failure names the question's key.
    """
    assert questions, "no questions to answer"
    for index, question in enumerate(questions):
        key = question.key
        pick_question(at, index)
        assert question.prompt in [m.value for m in at.markdown], f"{key}: prompt not shown"
        if question.hides is None:
            assert not hidden_parts(at), f"{key}: blurs {hidden_parts(at)}, hides nothing"
        else:
            assert question.hides in container_keys(at), f"{key}: no container {question.hides}"
            assert question.hides in hidden_parts(at), f"{key}: {question.hides} not blurred"
        radio = at.radio(key=f"{ANSWER_KEY}.{key}")
        labels = [_label(question, i) for i in range(len(question.choices))]
        assert [str(o) for o in radio.options] == labels, f"{key}: radio options"

        wrong = (question.answer + 1) % len(question.choices)
        radio.set_value(wrong).run()
        reveal(at)
        if only_error:
            assert len(at.error) == 1, f"{key}: {[e.value for e in at.error]}"
        error = revealed_text(at.error, "Not this time")
        assert labels[wrong] in error, f"{key}: {error!r} does not name the pick {labels[wrong]}"
        assert labels[question.answer] in error, f"{key}: {error!r} does not name the answer"
        assert not hidden_parts(at), f"{key}: revealed, yet {hidden_parts(at)} blurred"

        at.button(key=AGAIN_KEY).click().run()
        assert not at.exception, at.exception
        if question.hides is not None:
            assert question.hides in hidden_parts(at), f"{key}: asked again, not blurred again"
        at.radio(key=f"{ANSWER_KEY}.{key}").set_value(question.answer).run()
        reveal(at)
        if only_success:
            assert len(at.success) == 1, f"{key}: {[s.value for s in at.success]}"
        success = revealed_text(at.success, "Right:")
        assert labels[question.answer] in success, f"{key}: {success!r} does not name the answer"
        assert not hidden_parts(at), f"{key}: revealed, yet {hidden_parts(at)} blurred"
