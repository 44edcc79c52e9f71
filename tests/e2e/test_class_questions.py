"""A class answers a question in real browsers: a teacher at a 1280x720 projector and six
students (two on phones, one of those reading Chinese) on a live `streamlit run` with the SQLite
class store, on Home.

The teacher opens the Predict panel, picks a question and asks the class; every student sees the
question above their page and answers (two change their mind); the projector's tally counts them
without saying which answer is right; the reveal tells each student whether they were right (in
Chinese for the Chinese student); a second round is asked and answered; the downloaded CSV holds
both rounds. What each student clicked is checked against the store the server writes (its
TP_DATA_DIR), the projector's bars and the CSV. axe-core runs on the projector's tally, on a
laptop student's answering page and on a phone student's question box. Screenshots:
screenshots/class-questions-*.png.
"""

from __future__ import annotations

import csv
import io
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from core.class_store import SQLITE_FILE, ClassRound, ClassStore, open_store
from core.questions import RESULT_COLUMNS, Question, question_from_state
from testing.servers import StreamlitServer, start_server, stop_server
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.layout_checks import serious_violations
from tests.e2e.test_accessibility import KNOWN_STREAMLIT
from tests.e2e.test_class import (
    FOLLOW_TIMEOUT_MS,
    LAPTOP,
    PHONE,
    PROJECTOR,
    Browser,
    join_by_typing,
    key_selector,
    start_class,
    wait_counts,
)
from tests.e2e.test_layout import wait_for_script

pytestmark = pytest.mark.e2e

SLUG = "home"
#: The Predict panel's question picker: the class is asked question 2 (``cpu-scatter-repeat``).
PICKED = 1
CJK = re.compile(r"[\u4e00-\u9fff]")
FOLLOWING = re.compile(r"following the teacher|正在跟随老师")
#: core.tally's bar colours: one colour for every bar before the reveal, green for the answer.
ASKED_COLOUR, RIGHT_COLOUR = "#4c78a8", "#2e7d32"
TALLY_JS = """(selector) => {
  const plot = document.querySelector(selector + ' .js-plotly-plot');
  if (!plot || !plot.data || !plot.data.length) return null;
  const trace = plot.data[0];
  const colours = trace.marker && trace.marker.color;
  return {text: Array.from(trace.text || []).map(String),
          colours: Array.isArray(colours) ? colours : [colours],
          alt: plot.closest('[data-testid="stPlotlyChart"]').getAttribute('aria-label') || ''};
}"""
#: Whether the page part ``key`` is blurred (``ui.question_view.hide_part``).
BLURRED_JS = """(selector) => {
  const part = document.querySelector(selector);
  const child = part && part.firstElementChild;
  return !!child && getComputedStyle(child).filter.includes('blur');
}"""


@pytest.fixture(scope="module")
def class_server() -> Iterator[tuple[StreamlitServer, ClassStore]]:
    """A server with the default store (SQLite in its TP_DATA_DIR), and that store opened here."""
    with tempfile.TemporaryDirectory(prefix="tp-class-questions-") as data:
        running = start_server("class-questions", env={"TP_DATA_DIR": data})
        try:
            yield running, open_store(f"sqlite://{Path(data) / SQLITE_FILE}")
        finally:
            stop_server(running)


@pytest.fixture
def people(browser) -> Iterator[Callable[..., Browser]]:
    """Opens a person's browser (``people(url, name, viewport, locale="en-US")``); each one
    opened is closed after the test."""
    opened: list[Browser] = []

    def enter(url: str, name: str, viewport: dict, locale: str = "en-US") -> Browser:
        context = browser.new_context(viewport=viewport, locale=locale)
        page = context.new_page()
        opened.append(Browser(context, page, name))
        page.goto(url)
        wait_for_script(page)
        return opened[-1]

    yield enter
    for person in opened:
        person.close()


def wait_until(condition: Callable[[], object], what: str,
               timeout_s: float = FOLLOW_TIMEOUT_MS / 1000) -> object:  # fmt: skip
    """``condition()``'s first truthy value, checked every 250 ms; fails saying ``what``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)


def seat_of(student: Browser) -> str:
    match = re.search(r"[?&]seat=([A-Za-z0-9_-]{16})", student.page.url)
    assert match, f"{student.name}: no seat in {student.page.url}"
    return match.group(1)


def current(store: ClassStore, code: str, seat: str | None = None) -> ClassRound:
    now = store.current_round(code, seat)
    assert now is not None, "the class has no round"
    return now


def banner(student: Browser):
    return student.page.locator(key_selector("class-question"))


def answer(student: Browser, store: ClassStore, code: str, choice: int) -> None:
    """Click choice ``choice`` of the student's radio and wait until the store holds it."""
    options = banner(student).locator(key_selector("class.answer") + " [role='radiogroup'] label")
    options.nth(choice).click()
    seat = seat_of(student)
    wait_until(lambda: current(store, code, seat).mine == choice,
               f"{student.name}'s answer {choice} in the store")  # fmt: skip


def tally(teacher: Browser) -> dict:
    """The projector's bars: each choice's count label and colour."""
    found = teacher.page.evaluate(TALLY_JS, key_selector("class-tally"))
    assert found is not None, "no tally chart on the projector"
    return found


def wait_tally(teacher: Browser, counts: tuple[int, ...], answered: int) -> str:
    """Wait until the projector shows ``answered`` answers with bars ``counts``; its text."""
    box = teacher.page.locator(key_selector("class-tally"))
    line = f"Answered: {answered} of {answered} students"
    want = [str(count) for count in counts]

    def shown() -> str | None:
        text = box.inner_text() if box.count() else ""
        if line not in text:
            return None
        bars = teacher.page.evaluate(TALLY_JS, key_selector("class-tally"))
        return text if bars is not None and bars["text"] == want else None

    return wait_until(shown, f"the projector's tally {line}, bars {want}")


def counts_of(picks: list[int], choices: int) -> tuple[int, ...]:
    return tuple(picks.count(i) for i in range(choices))


def assert_no_serious_axe(person: Browser) -> None:
    found = serious_violations(person.page, known=KNOWN_STREAMLIT)
    report = "\n".join(f"- {v['impact']} {v['id']} ({v['help']}): {v['targets'][:3]}"
                       for v in found)  # fmt: skip
    assert not found, f"{person.name}: axe-core critical/serious violations:\n{report}"


def serious_in(person: Browser, selector: str) -> list[tuple[str, str, list]]:
    """axe-core's critical and serious violations inside the element ``selector`` only."""
    response = Axe().run(person.page, context=selector).response
    return [
        (v["id"], v["help"], [n["target"] for n in v["nodes"][:3]])
        for v in response["violations"]
        if v["impact"] in ("critical", "serious")
    ]


def click_button(person: Browser, key: str) -> None:
    """Click button ``key``. A button with a tooltip is drawn twice (one hidden, for Streamlit's
    width measuring): the visible one."""
    person.page.locator(key_selector(key) + " button:visible").click()


def scroll_to(locator) -> None:
    """Scroll Streamlit's main block until ``locator``'s top is just under the page's header."""
    locator.evaluate("el => { el.style.scrollMarginTop = '4.5rem'; "
                     "el.scrollIntoView({block: 'start'}); }")  # fmt: skip
    locator.page.wait_for_timeout(300)


def test_a_class_answers_a_question_twice_and_downloads_both_rounds(people, class_server):
    server, store = class_server
    base = server.url
    teacher = people(base + "/", "teacher", PROJECTOR)
    code = start_class(teacher)

    # (how they join, viewport, browser language)
    plan = [
        ("link", LAPTOP, "en-US"),
        ("link", PHONE, "en-US"),
        ("code", LAPTOP, "en-US"),
        ("link", LAPTOP, "en-US"),
        ("link", PHONE, "zh-CN"),
        ("code", LAPTOP, "en-US"),
    ]
    students: list[Browser] = []
    for index, (how, viewport, locale) in enumerate(plan):
        url = f"{base}/?class={code}" if how == "link" else base + "/flow"
        student = people(url, f"student-{index}-{how}-{locale}", viewport, locale)
        if how == "code":
            join_by_typing(student, code)
        students.append(student)
    phone, zh_phone = students[1], students[4]
    for student in students:
        student.page.get_by_text(FOLLOWING).first.wait_for(timeout=FOLLOW_TIMEOUT_MS)
    wait_counts(teacher, (6, 6, 0))
    for student in students:
        student.page.wait_for_function("location.pathname === '/'", timeout=FOLLOW_TIMEOUT_MS)

    # The teacher opens the Predict panel, picks a question and asks the class.
    teacher.page.locator(key_selector("predict.open") + " summary").click()
    picker = teacher.page.locator(key_selector("predict.pick") + " button")
    picker.first.wait_for(timeout=FOLLOW_TIMEOUT_MS)
    picker.nth(PICKED).click()
    wait_for_script(teacher.page)
    click_button(teacher, "class.ask")
    now = wait_until(lambda: store.current_round(code), "the asked round in the store")
    assert (now.number, now.stage, now.answered) == (1, "open", 0)
    slug, question = question_from_state(now.question)
    assert slug == SLUG and isinstance(question, Question)
    choices, right = len(question.choices), question.answer
    assert choices >= 3, question.key
    wrong = [i for i in range(choices) if i != right]

    for student in students:
        banner(student).wait_for(timeout=FOLLOW_TIMEOUT_MS)
        radio = banner(student).locator(key_selector("class.answer") + " [role='radiogroup']")
        radio.wait_for(timeout=FOLLOW_TIMEOUT_MS)
        assert radio.locator("label").count() == choices, student.name
        assert radio.locator("input:checked").count() == 0, f"{student.name}: nothing picked yet"
    assert CJK.search(banner(zh_phone).inner_text()), "the Chinese student's question is English"
    assert "Class question · round 1" in banner(phone).inner_text()
    hidden = key_selector(question.hides)
    for person in (teacher, phone, zh_phone):
        assert person.page.evaluate(BLURRED_JS, hidden), f"{person.name}: {hidden} not blurred"

    # Round 1: everyone answers, then two change their mind (still one answer per seat).
    first = [right, wrong[0], wrong[0], wrong[1], right, wrong[0]]
    for student, choice in zip(students, first, strict=True):
        answer(student, store, code, choice)
    final = list(first)
    for index, choice in ((1, right), (5, wrong[1])):
        answer(students[index], store, code, choice)
        final[index] = choice
    expected = counts_of(final, choices)
    now = current(store, code)
    assert (now.answered, now.counts) == (6, expected), now

    text = wait_tally(teacher, expected, 6)
    bars = tally(teacher)
    assert set(bars["colours"]) == {ASKED_COLOUR}, f"the bars tell the answer: {bars}"
    assert "The answer is" not in text + bars["alt"] and "Right:" not in text, (text, bars)
    assert bars["alt"].startswith("Answers per choice:"), bars["alt"]
    assert teacher.page.locator("[data-testid='stMain'] [data-testid='stAlertContentSuccess']"
                                ).count() == 0, "the projector shows a right answer"  # fmt: skip
    assert teacher.page.locator(key_selector("class.reveal")).count() == 1
    SCREENSHOTS.mkdir(exist_ok=True)
    teacher.page.screenshot(path=str(SCREENSHOTS / "class-questions-projector-tally.png"))
    assert_no_serious_axe(teacher)

    scroll_to(banner(phone))
    phone.page.screenshot(path=str(SCREENSHOTS / "class-questions-phone-answering.png"))
    assert "Your answer is in" in banner(phone).inner_text()
    # The whole answering page on a laptop; on a phone the question's box alone, since Home's
    # environment table scrolls sideways at 390 px whether or not a class is on (axe's
    # scrollable-region-focusable: not the class's doing).
    assert_no_serious_axe(students[0])
    found = serious_in(phone, key_selector("class-question"))
    assert not found, f"{phone.name}: axe-core violations in the question's box: {found}"

    # The reveal: each student sees the answer and whether they were right.
    click_button(teacher, "class.reveal")
    wait_until(lambda: current(store, code).stage == "revealed", "the reveal in the store")
    teacher.page.locator(key_selector("class.again")).wait_for(timeout=FOLLOW_TIMEOUT_MS)
    bars = tally(teacher)
    assert bars["text"] == [str(c) for c in expected]
    assert bars["colours"][right] == RIGHT_COLOUR, bars
    assert "The answer is" in bars["alt"], bars["alt"]
    assert [c for i, c in enumerate(bars["colours"]) if i != right].count(RIGHT_COLOUR) == 0
    teacher.page.screenshot(path=str(SCREENSHOTS / "class-questions-projector-reveal.png"))
    for student, choice in zip(students, final, strict=True):
        box = banner(student)
        box.locator("[data-testid='stAlert']").first.wait_for(timeout=FOLLOW_TIMEOUT_MS)
        assert box.locator(key_selector("class.answer")).count() == 0, student.name
        shown = box.inner_text()
        if student is zh_phone:
            verdict = "答对了：" if choice == right else "这次不对："
            assert "课堂提问 · 第 1 轮" in shown and verdict in shown, shown[:400]
            assert "Right:" not in shown and "Not this time" not in shown, shown[:400]
        else:
            verdict = "Right:" if choice == right else "Not this time"
            assert verdict in shown, f"{student.name} chose {choice}, right {right}: {shown[:400]}"
        kind = "stAlertContentSuccess" if choice == right else "stAlertContentError"
        assert box.locator(f"[data-testid='{kind}']").count() == 1, (student.name, kind)
        assert not student.page.evaluate(BLURRED_JS, hidden), f"{student.name}: still blurred"
        assert f"{chr(ord('A') + right)}." in shown
    scroll_to(banner(zh_phone))
    zh_phone.page.screenshot(path=str(SCREENSHOTS / "class-questions-phone-zh.png"))

    # Round 2, after a discussion: the same question, fresh answers.
    click_button(teacher, "class.again")
    wait_until(lambda: current(store, code).number == 2, "round 2 in the store")
    for student in students:
        radio = banner(student).locator(key_selector("class.answer") + " [role='radiogroup']")
        radio.wait_for(timeout=FOLLOW_TIMEOUT_MS)
        wait_until(lambda r=radio: r.locator("input:checked").count() == 0,
                   f"{student.name}: a fresh radio in round 2")  # fmt: skip
    second = [right, right, right, right, right, wrong[0]]
    for student, choice in zip(students, second, strict=True):
        answer(student, store, code, choice)
    expected_2 = counts_of(second, choices)
    assert current(store, code).counts == expected_2
    wait_tally(teacher, expected_2, 6)
    assert set(tally(teacher)["colours"]) == {ASKED_COLOUR}, "round 2 tells the answer"

    with teacher.page.expect_download(timeout=FOLLOW_TIMEOUT_MS) as download:
        click_button(teacher, "class.results")
    assert download.value.suggested_filename == f"class-{code}-answers.csv"
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(RESULT_COLUMNS) == [
        "round", "page", "question_key", "question", "choice", "choice_text", "correct", "count",
        "answered", "stage"]  # fmt: skip
    assert len(rows) == 2 * choices, text
    for number, counts, stage in ((1, expected, "revealed"), (2, expected_2, "open")):
        mine = [row for row in rows if row["round"] == str(number)]
        assert [int(row["choice"]) for row in mine] == list(range(1, choices + 1))
        assert tuple(int(row["count"]) for row in mine) == counts, (number, mine)
        for index, row in enumerate(mine):
            assert (row["page"], row["question_key"], row["answered"], row["stage"]) == (
                SLUG, question.key, "6", stage)  # fmt: skip
            assert row["question"] == str(question.prompt)
            assert row["choice_text"] == str(question.choices[index].text)
            assert row["correct"] == ("yes" if index == right else "no"), row
    assert not any(seat_of(s) in text for s in students), "the CSV names no seat"
