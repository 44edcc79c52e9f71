"""A class in AppTest: sessions of the real app sharing a real class store (SQLite in a temporary
folder, or a real redis-server), as a teacher and students in several browsers would.

AppTest has no browser, so a bound control's change does not reach the URL by itself; where a
teacher "changes a control", the test writes the URL the browser would write (the same query
string a lesson link carries) and reruns.
"""

from __future__ import annotations

import base64
import os
import signal
import time

import cv2
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.class_store import MAX_SEATS, SQLITE_FILE, ClassNotFound, new_seat, open_store
from core.class_view import View
from lessons.memory.scenarios import SCENARIOS
from testing.apptest import stay_on_shown_page, switch_to
from testing.redis_server import start_redis, stop_redis
from tests.app.conftest import APP, FIRST_RUN_TIMEOUT, RUN_TIMEOUT
from ui import classroom

MEMBER = "_class.member"


def session(slug: str = "home", params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    at.query_params.update(params or {})
    if slug != "home":
        switch_to(at, slug)
    at.run(timeout=FIRST_RUN_TIMEOUT)
    assert not at.exception, at.exception
    return stay_on_shown_page(at)


def rerun(at) -> AppTest:
    """Run ``at`` again (an AppTest, or a widget of one just set or clicked)."""
    at = at.run()
    assert not at.exception, at.exception
    return at


def start_class(teacher: AppTest) -> str:
    rerun(teacher.button(key=classroom.START_KEY).click())
    return teacher.session_state[MEMBER].code


def teacher_opens(teacher: AppTest, slug: str, params: dict[str, str]) -> AppTest:
    """The teacher's browser shows page ``slug`` with the controls ``params`` (a click on the
    menu and a control change write this URL)."""
    switch_to(teacher, slug)
    teacher.query_params.clear()
    teacher.query_params.update(params)
    return stay_on_shown_page(rerun(teacher))


def title(at: AppTest) -> str:
    return at.title[0].value


def sidebar_text(at: AppTest) -> str:
    parts = [element.value for kind in ("markdown", "caption", "code", "header", "subheader")
             for element in getattr(at.sidebar, kind)]  # fmt: skip
    return "\n".join(str(part) for part in parts)


def all_text(at: AppTest) -> str:
    parts = [element.value for kind in ("markdown", "caption", "code", "header", "subheader",
                                        "info", "warning", "error", "toast")
             for element in getattr(at, kind)]  # fmt: skip
    return "\n".join(str(part) for part in parts)


# --- Starting and joining ---------------------------------------------------------------------


def test_a_teacher_starts_a_class_with_a_code_a_link_and_its_qr_code(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    assert len(code) == 6 and not set(code) & set("0O1IL")
    text = sidebar_text(teacher)
    assert f"/?class={code}" in text and code in text
    assert any(big.value == code for big in teacher.sidebar.title)  # large, for the room
    # The teacher link (with the key) is in the teacher's sidebar, outside the join box.
    key = teacher.session_state[MEMBER].teacher_key
    codes = [block.value for block in teacher.sidebar.code]
    assert codes[0] == f"{code}\n/?class={code}" and key not in codes[0]
    assert any(f"teacher={key}" in block for block in codes[1:])
    assert len(teacher.sidebar.get("image")) == 1  # the QR code


def test_the_join_qr_code_reads_back_as_the_join_link():
    link = "http://192.168.1.20:8501/?class=HJK234"
    assert classroom.join_qr_svg(link).lstrip().startswith("<svg")
    png = classroom.join_qr(link).png_data_uri(scale=8, border=4)
    data = np.frombuffer(base64.b64decode(png.split(",", 1)[1]), np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    decoded, _, _ = cv2.QRCodeDetector().detectAndDecode(image)
    assert decoded == link


def test_the_projected_code_draws_only_a_real_code():
    svg = classroom.join_code_svg("hjk234")
    assert svg.startswith("<svg") and ">HJK234</text>" in svg
    for hostile in ("<b>x</b>", "HJK23</text><script>", "A" * 5000, "0OIL1X"):
        with pytest.raises(ValueError):
            classroom.join_code_svg(hostile)


def test_a_student_joins_by_link_gets_a_seat_and_follows_page_and_controls(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    teacher_opens(teacher, "warp", {"warp.align_corners": "true", "warp.angle": "45.0"})
    student = session(params={"class": code.lower()})  # codes are read in any case
    rerun(student)
    assert title(student) == title(teacher)
    assert student.toggle(key="warp.align_corners").value is True
    assert student.slider(key="warp.angle").value == 45.0
    seat = student.query_params["seat"]
    assert student.query_params["class"] == code and len(seat) == 16
    assert "exploring" not in all_text(student)

    teacher_opens(teacher, "batchnorm", {"batchnorm.momentum": "0.5"})
    rerun(student)
    assert title(student) == title(teacher)
    assert student.session_state["batchnorm.momentum"] == 0.5
    assert student.query_params["seat"] == seat  # the same seat after a page switch
    rerun(teacher)
    assert "1 student joined · 1 following · 0 exploring" in sidebar_text(teacher)


def test_a_student_joins_by_typing_the_code(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    teacher_opens(teacher, "indexing", {})
    student = session("flow")
    student.text_input(key=classroom.CODE_KEY).input(code.lower())
    rerun(student.button(key=classroom.JOIN_KEY).click())
    rerun(student)
    assert title(student) == title(teacher)
    assert student.query_params.get("class") == code


def test_a_reload_rejoins_the_same_seat(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    student = session(params={"class": code})
    seat = student.query_params["seat"]
    reloaded = session(params={"class": code, "seat": seat})  # a new session, the same URL
    assert reloaded.query_params["seat"] == seat
    rerun(teacher)
    assert "1 student joined" in sidebar_text(teacher)


@pytest.mark.parametrize("params", [
    {"class": "0OIL1X"}, {"class": "ABC"}, {"class": "<b>x</b>"}, {"class": "A" * 5000},
    {"class": "HJK234", "seat": "../../etc/passwd"}, {"class": "HJK234", "seat": "x" * 16 + "!"},
    {"class": "HJK234", "teacher": "'; DROP TABLE classes; --"}, {"seat": "AAAAAAAAAAAAAAAA"},
])  # fmt: skip
def test_a_hostile_class_link_gets_the_notice_and_no_store_query(sqlite_class, params):
    student = session("warp", params)
    assert MEMBER not in student.session_state
    assert title(student) == "Affine warp playground"
    assert not {"class", "seat", "teacher"} & set(student.query_params)
    if "class" in params:
        assert "This class link is not usable" in all_text(student)
    # Nothing was asked of the store: its file was never even created.
    assert not (sqlite_class / SQLITE_FILE).exists()


def test_an_unknown_code_says_so_and_the_page_works(sqlite_class):
    open_store().create_class()  # the store exists, this code does not
    student = session("warp", {"class": "HJK234"})
    assert "ended or expired" in all_text(student)
    assert MEMBER not in student.session_state and "class" not in student.query_params
    assert title(student) == "Affine warp playground"


# --- Following, detaching, rejoining -----------------------------------------------------------


def test_a_student_who_changes_a_control_detaches_and_rejoins_the_teachers_view(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    teacher_opens(teacher, "warp", {"warp.angle": "45.0"})
    student = session(params={"class": code})
    rerun(student)
    assert student.slider(key="warp.angle").value == 45.0
    student.query_params["warp.angle"] = "90.0"  # the student's own change, as the URL has it
    rerun(student.slider(key="warp.angle").set_value(90.0))
    assert student.session_state[MEMBER].following is False
    assert "You are exploring on your own." in all_text(student)
    rerun(teacher)
    assert "1 student joined · 0 following · 1 exploring" in sidebar_text(teacher)

    teacher_opens(teacher, "batchnorm", {"batchnorm.momentum": "0.5"})  # the student stays
    rerun(student)
    assert student.slider(key="warp.angle").value == 90.0

    rerun(student.button(key=classroom.REJOIN_KEY).click())
    rerun(student)
    assert title(student) == title(teacher)
    assert student.session_state["batchnorm.momentum"] == 0.5
    assert student.session_state[MEMBER].following is True
    rerun(teacher)
    assert "1 following · 0 exploring" in sidebar_text(teacher)


def test_a_stale_rerun_that_brought_the_old_view_back_opens_the_teachers_again_once():
    teacher_view = View("warp", (("warp.angle", ("45.0",)),))
    old_view = View("warp", ())
    member = classroom.Membership("HJK234", seat=new_seat(), joined=True, applied=5,
                                  target=teacher_view, just_opened=True)  # fmt: skip
    classroom._detach_if_moved(member, old_view)  # the merged rerun showed the old view
    assert (member.applied, member.reopened, member.following) == (-1, 5, True)
    member.applied, member.just_opened = 5, True  # the next poll opened it again
    classroom._detach_if_moved(member, old_view)  # still not it: the page corrected a value
    assert member.opened == old_view and member.following and member.applied == 5


def test_following_can_be_switched_off_and_on(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    student = session(params={"class": code})
    rerun(student.toggle(key=classroom.FOLLOW_KEY).set_value(False))
    teacher_opens(teacher, "memory", {})
    rerun(student)
    assert title(student) == "Torch Playground"
    rerun(student.toggle(key=classroom.FOLLOW_KEY).set_value(True))
    rerun(student)
    assert title(student) == title(teacher)


def test_a_chinese_student_follows_an_english_teachers_menu_choice(sqlite_class):
    # A menu's value in the URL is the label the page shows, in the teacher's language; the
    # student's page reads it in the student's.
    teacher = session()
    code = start_class(teacher)
    teacher_opens(teacher, "memory", {"memory.scenario": SCENARIOS["fragmentation"].name})
    assert teacher.session_state["memory.scenario"] == "fragmentation"
    student = session(params={"class": code, "lang": "zh"})
    rerun(student)
    assert student.session_state["memory.scenario"] == "fragmentation"
    assert student.query_params["lang"] == "zh"  # the student keeps their own language
    assert "跟随" in student.toggle(key=classroom.FOLLOW_KEY).label  # the Class section too
    assert student.session_state[MEMBER].following is True


def test_a_view_too_large_to_share_is_said_and_students_keep_the_last_one(sqlite_class,
                                                                          monkeypatch):
    import core.class_store

    teacher = session()
    code = start_class(teacher)
    teacher_opens(teacher, "indexing", {})
    version = open_store().version(code)
    monkeypatch.setattr(core.class_store, "MAX_STATE_BYTES", 40)  # {"page":"indexing",...}: 32
    teacher_opens(teacher, "warp", {"warp.angle": "45.0", "warp.scale": "2.0"})
    assert "too much text to share" in all_text(teacher)
    assert "connection is lost" not in all_text(teacher)
    assert open_store().version(code) == version


# --- Security ----------------------------------------------------------------------------------


def test_a_student_cannot_act_as_the_teacher(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    teacher_opens(teacher, "warp", {"warp.angle": "45.0"})
    before = open_store().read(code)
    student = session(params={"class": code})
    text = all_text(student)
    assert "teacher=" not in text and teacher.session_state[MEMBER].teacher_key not in text
    assert not [b for b in student.button if b.key in (classroom.END_KEY, classroom.START_KEY)]
    # A forged teacher link (the seat, the code, a guess) is refused and changes nothing.
    seat = student.query_params["seat"]
    for forged in (seat, code, "A" * 22, teacher.session_state[MEMBER].teacher_key[:-1] + "x"):
        intruder = session("indexing", {"class": code, "teacher": forged})
        assert MEMBER not in intruder.session_state
        assert "does not open class" in all_text(intruder)
        assert "teacher" not in intruder.query_params
    after = open_store().read(code)
    assert (after.version, after.state) == (before.version, before.state)


def test_the_teacher_link_reopens_the_class_on_another_device_without_showing_the_key(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    key = teacher.session_state[MEMBER].teacher_key
    laptop = session(params={"class": code, "teacher": key})
    assert laptop.session_state[MEMBER].is_teacher
    assert not {"class", "teacher", "seat"} & set(laptop.query_params)  # not in the address bar
    teacher_opens(laptop, "saliency", {})
    student = session(params={"class": code})
    rerun(student)
    assert title(student) == title(laptop)


def test_ending_the_class_frees_everyone(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    student = session(params={"class": code})
    rerun(teacher.button(key=classroom.END_KEY).click())
    assert MEMBER not in teacher.session_state
    with pytest.raises(ClassNotFound):
        open_store().version(code)
    rerun(student)
    assert MEMBER not in student.session_state
    assert "ended or expired" in all_text(student)


# --- The store down ----------------------------------------------------------------------------


def test_a_sqlite_store_that_cannot_be_used_loses_the_class_connection_and_resumes(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    student = session(params={"class": code})
    database = sqlite_class / SQLITE_FILE
    aside = sqlite_class / "aside"
    aside.mkdir()
    for path in sqlite_class.glob(SQLITE_FILE + "*"):
        path.rename(aside / path.name)
    database.mkdir()  # a folder where the file was: every new connection fails
    classroom._store_for.cache_clear()  # as a new server process would find it
    teacher_opens(teacher, "warp", {"warp.angle": "45.0"})
    assert title(teacher) == "Affine warp playground"  # the lesson works
    assert "connection is lost" in all_text(teacher)
    rerun(student)
    assert "connection is lost" in all_text(student)
    database.rmdir()
    for path in aside.iterdir():
        path.rename(sqlite_class / path.name)
    classroom._store_for.cache_clear()
    rerun(teacher)  # the poll publishes what the teacher changed meanwhile
    rerun(student)
    rerun(student)
    assert "connection is lost" not in all_text(teacher) + all_text(student)
    assert student.slider(key="warp.angle").value == 45.0


def test_a_redis_store_that_stops_answering_loses_the_class_and_resumes(monkeypatch):
    server = start_redis("class-session-paused")
    try:
        monkeypatch.setenv("TP_CLASS_STORE", server.url)
        teacher = session()
        code = start_class(teacher)
        student = session(params={"class": code})
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            teacher_opens(teacher, "warp", {"warp.angle": "45.0"})
            assert title(teacher) == "Affine warp playground"
            assert "connection is lost" in all_text(teacher)
            rerun(student)
            assert "connection is lost" in all_text(student)
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        deadline = time.monotonic() + 20
        while "connection is lost" in all_text(rerun(teacher)):
            assert time.monotonic() < deadline, "the class did not resume"
        rerun(student)
        rerun(student)
        assert student.slider(key="warp.angle").value == 45.0
        assert "connection is lost" not in all_text(student)
    finally:
        stop_redis(server)


def test_a_full_class_refuses_the_next_seat(sqlite_class):
    teacher = session()
    code = start_class(teacher)
    store = open_store()
    for _ in range(MAX_SEATS):
        store.join(code, new_seat())
    late = session("warp", {"class": code})
    assert "is full" in all_text(late)
    assert MEMBER not in late.session_state and title(late) == "Affine warp playground"
