"""A class session: a teacher starts a class, students join by code, link or QR and follow.

One section at the top of every page's sidebar. ``app.py`` calls :func:`start_class_run` after
``st.navigation`` (before the page) and :func:`finish_class_run` after the page ran:

- the **teacher**'s session holds the class code and its teacher key (session state only; the
  teacher link, shown in the teacher's sidebar alone, carries it to another device). After each
  run, the page and its link's parameters (``core.class_view``) are published to the class store
  when they changed;
- a **student**'s URL holds ``?class=CODE&seat=SEAT``, so a reload, a reconnect or another
  replica rejoins the same seat. While following, a polling fragment reads the class's version
  number once a second and reruns the app when it moved; :func:`start_class_run` then opens the
  teacher's view the way a browser opens a lesson link (Streamlit's history navigation: the
  URL's values win over what the controls held, and a missing value means the default). When
  the student's own view later differs from the one that was opened, the student changed a
  control: the seat detaches until "Rejoin the teacher".

A hidden tab stops polling (``ui.visibility``). Every store call is guarded: a store that is
down or a class that ended becomes a line in this section, and the lesson keeps working.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import segno
import streamlit as st
from streamlit.runtime.runtime_util import MESSAGE_FLUSH_INTERVAL_SECS

from core.class_store import (
    CODE_LENGTH,
    ENV_DATA_DIR,
    ENV_STORE,
    MAX_TEACHER_KEY_CHARS,
    SEAT_ALPHABET,
    ClassFull,
    ClassNotFound,
    ClassStore,
    SeatNotFound,
    StoreUnavailable,
    encode_state,
    new_seat,
    open_store,
    parse_code,
    parse_seat,
)
from core.class_view import (
    CLASS_PARAM,
    SEAT_PARAM,
    TEACHER_PARAM,
    View,
    translated,
    view_from_state,
    view_of,
    view_state,
)
from ui.caching import bounded_cache
from ui.i18n import LANG_KEY, _, current_language, label_translations, ngettext
from ui.navigation import page_hash_of
from ui.visibility import tab_hidden

#: How often a following student's tab asks for the class's version (seconds): a teacher's
#: change reaches the class within this plus one page run.
STUDENT_POLL_S = 1.0
#: How often the teacher's sidebar refreshes the class's counts.
TEACHER_POLL_S = 2.0
#: Side of the join QR code in the sidebar (pixels: the sidebar's whole width), and in the
#: large join box a teacher projects for the back of a room.
QR_WIDTH_PX = 240
QR_LARGE_PX = 480
#: Addresses only this computer can open: a join link with one reaches no student.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})

START_KEY = "class.start"
CODE_KEY = "class.code"
JOIN_KEY = "class.join"
FOLLOW_KEY = "class.follow"
REJOIN_KEY = "class.rejoin"
LEAVE_KEY = "class.leave"
END_KEY = "class.end"
PROJECT_KEY = "class.project"
JOIN_BOX_KEY = "class-join"
VISIBILITY_KEY = "class.tab_visibility"

_MEMBER = "_class.member"  # this session's Membership (session state)
_NOTICE = "_class.notice"  # a message for the next run (set in callbacks)
_JUST_STARTED = "_class.just_started"  # open the large join box once
_SLUG = "_class.slug"  # the page this run shows
_OWN = (LANG_KEY,)  # parameters each visitor keeps for themselves


@dataclass
class Membership:
    """This session's place in a class. ``teacher_key`` is set for the teacher, ``seat`` for a
    student. ``applied`` is the class version whose view the student last opened, ``target``
    that view, ``opened`` the student's view right after opening it (``None`` until that run
    ended), ``reopened`` the version opened a second time, ``published`` the teacher's last
    published view. ``lost`` says the last store call failed. ``seen`` is the class version
    a student exploring alone last saw (a new one may be a question)."""

    code: str
    teacher_key: str | None = None
    seat: str | None = None
    following: bool = True
    joined: bool = False
    applied: int = -1
    target: View | None = None
    opened: View | None = None
    just_opened: bool = False
    reopened: int = -1
    published: View | None = None
    wanted: View | None = None
    lost: bool = False
    polling: float | None = None
    counts: tuple[int, int, int] | None = field(default=None)
    seen: int = -1

    @property
    def is_teacher(self) -> bool:
        return self.teacher_key is not None


# --- The store ---------------------------------------------------------------------------------


# A plain process-wide cache, not st.cache_resource: every poll of every student asks for the
# store, and Streamlit's cache lookup was a visible share of a poll. A live store (its
# connection) is shared, never copied; there are as many as configurations (one, in practice).
@functools.lru_cache(maxsize=4)
def _store_for(spec: str, data_dir: str) -> ClassStore:
    """One store per process and configuration (``data_dir`` only keys the cache)."""
    return open_store(spec)


def class_store() -> ClassStore:
    """The class store ``TP_CLASS_STORE`` names (SQLite in ``TP_DATA_DIR`` by default).
    Raises ``StoreUnavailable`` or ``ValueError`` (a misconfigured server)."""
    return _store_for(os.environ.get(ENV_STORE, ""), os.environ.get(ENV_DATA_DIR, ""))


@contextmanager
def guarded(member: Membership) -> Iterator[None]:
    """Run store calls for ``member``: a store that is down marks the class connection lost
    (the section says so and the poll retries); a class that ended or expired leaves it."""
    try:
        yield
    except (StoreUnavailable, ValueError):
        member.lost = True
        raise Handled from None
    except (ClassNotFound, SeatNotFound, PermissionError):
        _leave(_("This class has ended or expired: the page works without a class."))
        raise Handled from None
    member.lost = False


class Handled(Exception):
    """A store failure already turned into what the section shows."""


def tell(notice: str) -> None:
    """Show ``notice`` (translated) as a toast on this session's next run."""
    st.session_state[_NOTICE] = notice


def current_slug() -> str:
    """The page this run shows (its URL slug)."""
    return st.session_state.get(_SLUG, "")


def current_member() -> Membership | None:
    """This session's place in a class (teacher or student), or None outside one."""
    return st.session_state.get(_MEMBER)



def _leave(notice: str | None = None) -> None:
    """Leave the class in this session (nothing is written to the store)."""
    st.session_state.pop(_MEMBER, None)
    for key in (CLASS_PARAM, SEAT_PARAM):
        if key in st.query_params:
            del st.query_params[key]
    if notice:
        st.session_state[_NOTICE] = notice


# --- Before the page: membership from the URL, and following --------------------------------


@dataclass(frozen=True)
class ClassPlaces:
    """Where this run draws the class: the top of the sidebar, and above the page a student's
    line and question (on a phone the sidebar is folded away) or the teacher's tally."""

    sidebar: Any
    banner: Any | None


def start_class_run(slug: str) -> ClassPlaces:
    """Settle this session's class before the page ``slug`` runs; open the teacher's view when
    a following student is behind. Returns where :func:`finish_class_run` draws."""
    st.session_state[_SLUG] = slug
    _read_class_link()
    member = current_member()
    if member is not None:
        _keep_up(member)
    member = current_member()
    banner = st.container() if member is not None else None
    places = ClassPlaces(st.sidebar.container(), banner)
    if member is not None:
        # The poll is set up before the page runs: a run cut short by the next request (a
        # timer's, a click's) has still told the browser to keep polling.
        with st.sidebar:
            hidden = tab_hidden(VISIBILITY_KEY)
            member.polling = None if hidden else _poll_interval(member)
            _poll(run_every=member.polling)
    return places


def _keep_up(member: Membership) -> None:
    """A student's seat in the URL and the store; a following student at the teacher's view."""
    if member.seat is not None:  # a page switch clears the query string: keep the seat in it
        st.query_params[CLASS_PARAM] = member.code
        st.query_params[SEAT_PARAM] = member.seat
        if not member.joined:
            _join(member)
    if member.seat is not None and member.joined and member.following:
        _follow(member)


def _read_class_link() -> None:
    """``?class=`` (with ``&seat=`` or ``&teacher=``) joins or reopens a class; a value that is
    not one is removed and said, before any store access."""
    code_text = st.query_params.get(CLASS_PARAM)
    seat_text = st.query_params.get(SEAT_PARAM)
    key_text = st.query_params.get(TEACHER_PARAM)
    if key_text is not None:
        del st.query_params[TEACHER_PARAM]  # never left in the (projected) address bar
    if code_text is None:
        if seat_text is not None:
            del st.query_params[SEAT_PARAM]
        return
    member = current_member()
    if member is not None and member.code == (code_text or "").upper() and key_text is None:
        return  # this session's own class
    try:
        code = parse_code(code_text)
        seat = parse_seat(seat_text) if seat_text is not None else None
        if key_text is not None and not _looks_like_key(key_text):
            raise ValueError("teacher key")
    except ValueError:
        _leave(_("This class link is not usable (a class code is {n} letters and digits): "
                 "the page works without a class.").format(n=CODE_LENGTH))  # fmt: skip
        return
    if key_text is not None:
        _reopen_as_teacher(code, key_text)
    else:
        _start_student(code, seat)


def _looks_like_key(text: str) -> bool:
    return 0 < len(text) <= MAX_TEACHER_KEY_CHARS and set(text) <= SEAT_ALPHABET


def _reopen_as_teacher(code: str, key: str) -> None:
    try:
        class_store().check_teacher(code, key)
    except PermissionError:
        _leave(_("This teacher link does not open class {code}: the page works without a "
                 "class.").format(code=code))  # fmt: skip
        return
    except ClassNotFound:
        _leave(_("No class has the code {code} (it may have ended or expired): the page works "
                 "without a class.").format(code=code))  # fmt: skip
        return
    except (StoreUnavailable, ValueError):
        _leave(_("The class store cannot be reached: try the teacher link again in a moment."))
        return
    st.session_state[_MEMBER] = Membership(code, teacher_key=key, joined=True)
    if CLASS_PARAM in st.query_params:
        del st.query_params[CLASS_PARAM]


def _start_student(code: str, seat: str | None) -> None:
    member = Membership(code, seat=seat or new_seat())
    st.session_state[_MEMBER] = member
    st.query_params[CLASS_PARAM] = code
    st.query_params[SEAT_PARAM] = member.seat
    _join(member)


def _join(member: Membership) -> None:
    """Take the student's seat (again, after a reload or a failover: the same seat)."""
    try:
        with guarded(member):
            member.following = class_store().join(member.code, member.seat)
            member.joined = True
    except ClassFull:
        _leave(_("Class {code} is full: the page works without a class.").format(
            code=member.code))  # fmt: skip
    except Handled:
        pass


def _follow(member: Membership) -> None:
    """Open the teacher's view when the class moved past the one this student last opened."""
    try:
        with guarded(member):
            store = class_store()
            version = store.version(member.code)
            if version == member.applied:
                return
            state = store.read(member.code).state
    except Handled:
        return
    member.applied = version
    try:
        view = view_from_state(state, _OWN)
    except ValueError:
        return  # not a view this app wrote: stay where the student is
    if view is None or page_hash_of(view.slug) is None:
        return
    view = translated(view, label_translations(current_language()))
    if view == _current_view():
        member.opened, member.just_opened = view, False  # already there
        return
    member.just_opened, member.target = True, view  # the next run to end shows it
    _open_view(view, member, page_hash_of(view.slug))


def _current_view() -> View | None:
    """This run's page and the parameters its URL holds now."""
    slug = st.session_state.get(_SLUG)
    if not slug:
        return None
    return view_of(slug, {key: st.query_params.get_all(key) for key in st.query_params}, _OWN)


def _open_view(view: View, member: Membership, page_hash: str) -> None:
    """Rerun on the teacher's page with the teacher's parameters, as a browser's back/forward
    button would: Streamlit seeds every bound control from the URL then, over the values the
    session held (a plain page switch keeps them). The same path a lesson link takes."""
    from streamlit.commands.execution_control import _force_yield_point
    from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or ctx.script_requests is None:
        return
    params = view.as_dict()
    for key in _OWN:
        if key in st.query_params:
            params[key] = st.query_params.get_all(key)
    params[CLASS_PARAM] = [member.code]
    params[SEAT_PARAM] = [member.seat]
    # Bound parameters refuse a plain assignment (st.query_params); the address is written
    # whole, as a browser's history entry would hold it, and the rerun below seeds from it.
    with ctx.session_state.query_params() as query_params:
        query_params.clear_with_no_forward_msg(preserve_embed=True)
        for key, values in params.items():
            query_params.set_with_no_forward_msg(key, values[0] if len(values) == 1 else values)
        query_params._send_query_param_msg()
    query = View(view.slug, tuple((k, tuple(v)) for k, v in params.items())).query
    # Let the browser receive the new address before the rerun clears pending messages, as
    # st.switch_page waits.
    time.sleep(2 * MESSAGE_FLUSH_INTERVAL_SECS)
    ctx.script_requests.request_rerun(
        RerunData(
            query_string=query,
            page_script_hash=page_hash,
            cached_message_hashes=ctx.cached_message_hashes,
            context_info=ctx.context_info,
            is_history_navigation=True,
        )
    )
    _force_yield_point()  # as st.rerun does: the runner stops this run here


# --- After the page: publish or detach, then draw the section --------------------------------


def finish_class_run(places: ClassPlaces) -> None:
    """After the page ran: the teacher publishes a changed view; a following student whose
    view moved away from the teacher's detaches. Then the Class section at ``places``."""
    member = current_member()
    if member is not None and member.joined:
        view = _current_view()
        if member.is_teacher:
            member.wanted = view
            _publish(member)
        elif member.following:
            _detach_if_moved(member, view)
    _class_section(places)


def _publish(member: Membership) -> None:
    """Publish the teacher's view when it differs from the last one the store took (a store
    that was down gets it on a later poll)."""
    view = member.wanted
    if view is None or view == member.published:
        return
    try:
        encode_state(view_state(view))
    except ValueError:  # a view whose text controls hold more than a class may share
        member.published = view
        st.toast(_("This view holds too much text to share with the class: students keep "
                   "the previous one."), icon=":material/link_off:")  # fmt: skip
        return
    try:
        with guarded(member):
            class_store().publish(member.code, member.teacher_key, view_state(view))
            member.published = view
    except Handled:
        pass


def _detach_if_moved(member: Membership, view: View | None) -> None:
    if member.just_opened and view != member.target and member.reopened != member.applied:
        # A rerun the browser asked for with its old address can be merged into the one that
        # opened the teacher's view (Streamlit keeps the newer address, so the old view comes
        # back): open it again at the next poll, once, as a page may correct a value it cannot
        # use, and then what it shows is the view followed.
        member.reopened, member.applied, member.just_opened = member.applied, -1, False
        return
    if member.just_opened or member.opened is None:
        member.opened, member.just_opened = view, False
        return
    if view != member.opened:
        _set_following(member, False)
        # Said where it is seen: the student is at the control they moved, maybe far below the
        # line above the page, and on a phone the sidebar is folded away.
        st.toast(_("You are exploring on your own: the teacher's changes no longer move your "
                   "page. Use **Rejoin the teacher** at the top of the page."),
                 icon=":material/explore:")  # fmt: skip


def _set_following(member: Membership, following: bool) -> None:
    member.following = following
    if following:
        member.applied, member.opened = -1, None  # open the teacher's current view
    else:
        member.seen = member.applied  # a question asked from now on reruns the page
    try:
        with guarded(member):
            class_store().set_following(member.code, member.seat, following)
    except Handled:
        pass


# --- Callbacks (they run before the next run's script) ----------------------------------------


def _on_start() -> None:
    try:
        code, key = class_store().create_class()
    except (StoreUnavailable, ValueError):
        st.session_state[_NOTICE] = _(
            "The class store cannot be reached, so no class was started: try again in a moment."
        )
        return
    st.session_state[_MEMBER] = Membership(code, teacher_key=key, joined=True)
    st.session_state[_JUST_STARTED] = True


def _on_join_code() -> None:
    text = (st.session_state.get(CODE_KEY) or "").strip()
    if not text:
        return
    try:
        code = parse_code(text)
    except ValueError:
        st.session_state[_NOTICE] = _(
            "A class code is {n} letters and digits (no 0, O, 1, I or L): check it and try "
            "again."
        ).format(n=CODE_LENGTH)
        return
    member = current_member()
    if member is not None and member.code == code:
        return
    st.session_state[CODE_KEY] = ""
    st.query_params[CLASS_PARAM] = code
    if SEAT_PARAM in st.query_params:
        del st.query_params[SEAT_PARAM]
    st.session_state.pop(_MEMBER, None)


def _on_follow() -> None:
    member = current_member()
    if member is not None:
        _set_following(member, bool(st.session_state.get(FOLLOW_KEY)))


def _on_rejoin() -> None:
    member = current_member()
    if member is not None:
        _set_following(member, True)


def _on_end() -> None:
    member = current_member()
    if member is None or not member.is_teacher:
        return
    try:
        class_store().end_class(member.code, member.teacher_key)
    except (ClassNotFound, PermissionError):
        pass
    except (StoreUnavailable, ValueError):
        st.session_state[_NOTICE] = _("The class store cannot be reached: the class was not "
                                      "ended. Try again in a moment.")  # fmt: skip
        return
    _leave()


# --- The sidebar section -----------------------------------------------------------------------


def _class_section(places: ClassPlaces) -> None:
    member = current_member()
    if places.banner is not None and member is not None and not member.is_teacher:
        with places.banner:
            _student_banner(member)
    with places.sidebar:
        st.subheader(_("Class"), anchor=False)
        notice = st.session_state.pop(_NOTICE, None)
        if notice:  # a toast, like a link's notice: seen on a phone too, sidebar folded or not
            st.toast(notice, icon=":material/group_off:", duration="long")
        if member is None:
            _outside()
        elif member.is_teacher:
            _teacher_box(member)
        else:
            _student_box(member)


def _poll_interval(member: Membership) -> float | None:
    """Seconds between polls: the teacher's counts, a student's class version (a following
    student opens the teacher's view; every student sees a question asked or revealed)."""
    return TEACHER_POLL_S if member.is_teacher else STUDENT_POLL_S


def _outside() -> None:
    st.caption(_("Start a class to have students follow your view live, or join one with "
                 "the code your teacher shows."))  # fmt: skip
    st.button(_("Start a class"), key=START_KEY, on_click=_on_start,
              icon=":material/co_present:")  # fmt: skip
    st.text_input(_("Class code"), key=CODE_KEY, max_chars=CODE_LENGTH, on_change=_on_join_code,
                  placeholder="HJK234", autocomplete="off")  # fmt: skip
    st.button(_("Join the class"), key=JOIN_KEY, on_click=_on_join_code,
              icon=":material/login:")  # fmt: skip


def _app_root() -> str:
    """The app's address (``http://host:port/``) from this session's page URL."""
    url = st.context.url or ""
    parts = urlsplit(url)
    if not parts.scheme:
        return "/"
    path = parts.path.rstrip("/")
    slug = st.session_state.get(_SLUG, "")
    if slug and path.endswith("/" + slug):
        path = path[: -len(slug) - 1]
    return f"{parts.scheme}://{parts.netloc}{path}/"


def join_link(root: str, code: str) -> str:
    """The students' link to class ``code``: ``root?class=CODE``."""
    return f"{root}?{CLASS_PARAM}={code}"


def join_qr(link: str) -> segno.QRCode:
    """The QR code of ``link`` (error correction M: a smudged projector still reads)."""
    return segno.make(link, error="m")


@bounded_cache(max_entries=64, ttl="12h")
def join_qr_svg(link: str) -> str:
    """The QR code of ``link`` as SVG text (black on white, a 4-module quiet zone)."""
    return join_qr(link).svg_inline(scale=8, border=4, dark="#000", light="#fff")


def join_code_svg(code: str) -> str:
    """Class ``code`` as SVG text in letters a whole room can read (a heading is too small on a
    projector). ``code`` is checked with ``parse_code`` first: only its alphabet is drawn."""
    code = parse_code(code)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 420 110">'
        '<text x="210" y="86" text-anchor="middle" font-family="DejaVu Sans Mono, monospace" '
        f'font-size="92" font-weight="700" letter-spacing="4">{code}</text></svg>'
    )


def _teacher_box(member: Membership) -> None:
    root = _app_root()
    link = join_link(root, member.code)
    with st.container(key=JOIN_BOX_KEY):
        _join_box(member.code, link, width=QR_WIDTH_PX)
    opened = st.button(_("Enlarge the join box"), key=PROJECT_KEY, icon=":material/fit_screen:")
    if opened or st.session_state.pop(_JUST_STARTED, False):
        _project(member.code, link)  # for the projector; it opens by itself once, at the start
    with st.expander(_("Teacher link (keep it private)"), icon=":material/key:"):
        st.code(f"{root}?{CLASS_PARAM}={member.code}&{TEACHER_PARAM}={member.teacher_key}",
                language=None, wrap_lines=True)  # fmt: skip
        st.caption(_("Opens this class as its teacher on another device or after a reconnect. "
                     "Do not project it: whoever has it can lead the class."))  # fmt: skip
    st.button(_("End the class"), key=END_KEY, on_click=_on_end, icon=":material/stop_circle:")


def _join_box(code: str, link: str, width: int) -> None:
    """The code in large letters, the QR code of the link, and both in a copyable box."""
    st.caption(_("Join with this code, the link or the QR code:"))
    st.title(code, anchor=False)
    st.image(join_qr_svg(link), width=width,
             alt=_("QR code of the class link {link}").format(link=link))  # fmt: skip
    # Wrapped: a box that scrolls sideways cannot be reached from the keyboard (axe-core).
    st.code(f"{code}\n{link}", language=None, wrap_lines=True)
    if urlsplit(link).hostname in LOOPBACK_HOSTS:
        st.warning(_("Students cannot open {host}: open the app at this computer's network "
                     "address (as students would type it) and start the class there.").format(
                         host=urlsplit(link).hostname), icon=":material/wifi_off:")  # fmt: skip


def _project(code: str, link: str) -> None:
    """The join box as large as the screen allows, for the back of the room."""

    @st.dialog(_("Join class {code}").format(code=code), width="large")
    def large() -> None:
        words, picture = st.columns(2, vertical_alignment="center")
        with words:
            st.caption(_("Join with this code, the link or the QR code:"))
            st.image(join_code_svg(code), width="stretch",
                     alt=_("Class code {code}").format(code=code))  # fmt: skip
            st.code(link, language=None, wrap_lines=True)
        picture.image(join_qr_svg(link), width=QR_LARGE_PX,
                      alt=_("QR code of the class link {link}").format(link=link))  # fmt: skip

    large()


def _student_box(member: Membership) -> None:
    st.markdown(_("You are in class **{code}**.").format(code=member.code))
    st.session_state[FOLLOW_KEY] = member.following  # the switch shows the seat's state
    st.toggle(_("Follow the teacher"), key=FOLLOW_KEY, on_change=_on_follow,
              help=_("Following the teacher: your page moves with the teacher's."))  # fmt: skip
    st.button(_("Leave the class"), key=LEAVE_KEY, on_click=_leave,
              icon=":material/logout:")  # fmt: skip


def _student_banner(member: Membership) -> None:
    """Above the page: whether this student follows, and the way back when exploring."""
    if not member.joined:
        return
    if member.following:
        st.caption(_("Class {code}: following the teacher.").format(code=member.code))
        return
    text, button = st.columns([4, 1], vertical_alignment="center")
    text.info(_("You are exploring on your own."), icon=":material/explore:")
    button.button(_("Rejoin the teacher"), key=REJOIN_KEY, on_click=_on_rejoin,
                  icon=":material/group:", width="stretch")  # fmt: skip


def _counts_line(counts: tuple[int, int, int]) -> str:
    joined, following, detached = counts
    return " · ".join([
        ngettext("{n} student joined", "{n} students joined", joined).format(n=joined),
        _("{n} following").format(n=following),
        _("{n} exploring").format(n=detached),
    ])  # fmt: skip


def _poll(run_every: float | None) -> None:
    """The section's live part: one cheap store read per tick (the version, or the teacher's
    counts); a following student whose class moved reruns the app, which opens the view."""

    @st.fragment(run_every=run_every)
    def live() -> None:
        member = current_member()
        if member is None:
            return
        if member.is_teacher:
            _teacher_tick(member)
        else:
            _student_tick(member)
        if member.lost:
            st.warning(_("The class connection is lost: retrying. The lesson keeps working."),
                       icon=":material/cloud_off:")  # fmt: skip

    live()


def _teacher_tick(member: Membership) -> None:
    try:
        with guarded(member):
            view = class_store().read(member.code)
            member.counts = (view.joined, view.following, view.detached)
    except Handled:
        if current_member() is None:
            st.rerun()  # the class ended or expired: the section says so
        return
    _publish(member)  # a change made while the store was down
    if member.counts is not None:
        st.caption(_counts_line(member.counts))


def _student_tick(member: Membership) -> None:
    was_lost = member.lost
    if not member.joined:
        _join(member)
        if member.joined:
            st.rerun()
        return
    if not member.following:
        _watch(member)
        return
    applied = member.applied
    _follow(member)  # opens the teacher's view at once when the class moved
    if current_member() is None or member.lost != was_lost or member.applied != applied:
        # the class ended, or its connection came or went: the section says so; or the class
        # moved without the view changing: a question was asked, revealed or closed
        st.rerun()


def _watch(member: Membership) -> None:
    """A student exploring alone: rerun when the class moved (a question asked or revealed)."""
    try:
        with guarded(member):
            version = class_store().version(member.code)
    except Handled:
        return
    seen, member.seen = member.seen, version
    if seen not in (-1, version):
        st.rerun()
