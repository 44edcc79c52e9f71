"""The class store: the state a class shares across sessions and replicas.

Streamlit keeps session state inside one process, so what a teacher publishes to a class lives
here instead. One interface (``ClassStore``), two backends with the same contract:

- ``SQLiteClassStore``: one file (standard library, WAL mode); one server, or replicas on one
  host sharing a volume.
- ``RedisClassStore``: a Redis server, for replicas on several machines.

A class is a short code (``CODE_LENGTH`` characters from ``CODE_ALPHABET``, which leaves out the
look-alikes 0/O and 1/I/L), a teacher key (returned once by ``create_class``; the store keeps
only its SHA-256), a version number, the published state (page and control values, a
``dict[str, str]``) and its seats (random ids; following or detached). Everything is bounded:
at most ``MAX_SEATS`` seats, ``MAX_STATE_BYTES`` of state, no history of what was published,
and every class expires ``ttl_s`` seconds after its last write (default 12 h).

A class also holds its question rounds (``ask`` / ``answer`` / ``reveal`` / ``close_round``):
the question as state (``core.questions.question_state``), its number of choices, its stage
(open, revealed, closed) and one answer per seat, counted per choice as they arrive. At most
``MAX_ROUNDS`` rounds; only the newest round takes answers, and only while open.

Codes and seat ids come from URLs: ``parse_code`` / ``parse_seat`` check length and alphabet
before the store is asked anything. Every backend failure (a stopped Redis, an unwritable
SQLite file) is raised as ``StoreUnavailable``, whose message a person can read.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Class code characters: upper-case letters and digits without 0/O and 1/I/L.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
#: A seat id is ``secrets.token_urlsafe(12)``: 96 random bits in 16 URL-safe characters.
SEAT_BYTES = 12
SEAT_LENGTH = 16
SEAT_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: ``secrets.token_urlsafe(16)``: 128 random bits in 22 characters.
TEACHER_KEY_BYTES = 16
#: Longer keys are refused without hashing them (a real one has 22 characters).
MAX_TEACHER_KEY_CHARS = 64
MAX_SEATS = 300
MAX_STATE_BYTES = 16 * 1024
MAX_ROUNDS = 100
MAX_CHOICES = 6
#: A round's stages: answers are taken while ``OPEN``; ``REVEALED`` shows the answer to all;
#: ``CLOSED`` takes the question off the students' pages (its counts stay for the results).
OPEN, REVEALED, CLOSED = "open", "revealed", "closed"
DEFAULT_TTL_S = 12 * 60 * 60
#: Attempts at drawing a free code before giving up (31**6 ~ 887 million codes).
CREATE_ATTEMPTS = 10
ENV_STORE = "TP_CLASS_STORE"
ENV_DATA_DIR = "TP_DATA_DIR"
SQLITE_FILE = "classes.sqlite3"


class ClassNotFound(LookupError):
    """No class has this code: never created, ended, or expired."""


class SeatNotFound(LookupError):
    """The class has no seat with this id (the student has not joined)."""


class ClassFull(RuntimeError):
    """The class already holds ``MAX_SEATS`` seats."""


class RoundClosed(LookupError):
    """The round is not taking answers (not the newest one, revealed, or closed), or is not the
    round a teacher's reveal or close names."""


class TooManyRounds(RuntimeError):
    """The class already asked ``MAX_ROUNDS`` rounds."""


class StoreUnavailable(RuntimeError):
    """The store cannot be reached or written right now; the same call may work later."""


@dataclass(frozen=True)
class ClassView:
    """What a class looks like now: the published ``state`` at ``version`` and seat counts.

    ``joined`` seats in all, ``following`` of them follow the teacher, ``detached`` explore on
    their own (``joined == following + detached``).
    """

    version: int
    state: dict[str, str]
    joined: int
    following: int
    detached: int


@dataclass(frozen=True)
class ClassRound:
    """One question round of a class.

    ``number`` counts from 1; ``question`` is the state ``ask`` stored; ``choices`` how many it
    offers; ``stage`` is ``OPEN``, ``REVEALED`` or ``CLOSED``; ``counts[i]`` seats answered
    choice ``i`` (length ``choices``); ``answered`` seats answered at all (``sum(counts)``);
    ``mine`` is the asking seat's answer (None: none, or no seat asked).
    """

    number: int
    question: dict[str, str]
    choices: int
    stage: str
    counts: tuple[int, ...]
    answered: int
    mine: int | None = None


def _shown(value: object, limit: int = 40) -> str:
    """``value`` for an error message: its repr (control characters escaped), truncated."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def parse_code(text: object) -> str:
    """A class code from a URL or a text box, upper-cased: ``"abc234"`` -> ``"ABC234"``.

    Raises ``ValueError`` naming the value when it is not ``CODE_LENGTH`` characters of
    ``CODE_ALPHABET`` (case-insensitive). Nothing else is looked at, so it is safe to call on
    any untrusted value before the store is asked.

    >>> parse_code("hjk234")
    'HJK234'
    """
    if not isinstance(text, str) or len(text) != CODE_LENGTH:
        raise ValueError(f"a class code is {CODE_LENGTH} letters and digits, got {_shown(text)}")
    code = text.upper()
    if any(ch not in CODE_ALPHABET for ch in code):
        raise ValueError(
            f"a class code uses only {CODE_ALPHABET} (no 0/O, 1/I/L), got {_shown(text)}"
        )
    return code


def parse_seat(text: object) -> str:
    """A seat id from a URL: ``SEAT_LENGTH`` URL-safe characters (``A-Z a-z 0-9 - _``).

    Raises ``ValueError`` naming the value otherwise; safe on any untrusted value.
    """
    if not isinstance(text, str) or len(text) != SEAT_LENGTH or not set(text) <= SEAT_ALPHABET:
        raise ValueError(
            f"a seat id is {SEAT_LENGTH} characters of A-Z a-z 0-9 - _, got {_shown(text)}"
        )
    return text


def new_code() -> str:
    """A random class code (``CODE_LENGTH`` characters of ``CODE_ALPHABET``)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_seat() -> str:
    """A random seat id (``SEAT_LENGTH`` URL-safe characters, 96 bits)."""
    return secrets.token_urlsafe(SEAT_BYTES)


def key_digest(teacher_key: str) -> str:
    """The hex SHA-256 of a teacher key: all the store keeps of it."""
    return hashlib.sha256(teacher_key.encode()).hexdigest()


def key_matches(teacher_key: object, stored_digest: str) -> bool:
    """Whether ``teacher_key`` hashes to ``stored_digest`` (compared in constant time)."""
    if not isinstance(teacher_key, str) or not 0 < len(teacher_key) <= MAX_TEACHER_KEY_CHARS:
        return False
    return hmac.compare_digest(key_digest(teacher_key), stored_digest)


def encode_state(state: Mapping[str, str]) -> str:
    """``state`` (page and control values, ``str -> str``) as compact JSON.

    Raises ``ValueError`` when a key or value is not a string or the JSON is over
    ``MAX_STATE_BYTES`` bytes (UTF-8).
    """
    if not isinstance(state, Mapping):
        raise ValueError(f"the class state is a dict of strings, got {_shown(state)}")
    for key, value in state.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(
                f"the class state maps strings to strings, got {_shown(key)}: {_shown(value)}"
            )
    text = json.dumps(dict(state), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    size = len(text.encode())
    if size > MAX_STATE_BYTES:
        raise ValueError(f"the class state is at most {MAX_STATE_BYTES} bytes, got {size}")
    return text


def decode_state(text: str) -> dict[str, str]:
    """The state ``encode_state`` wrote."""
    return json.loads(text)


def _check_choices(choices: object) -> int:
    if isinstance(choices, bool) or not isinstance(choices, int) or not 2 <= choices <= MAX_CHOICES:
        raise ValueError(f"a question has 2-{MAX_CHOICES} choices, got {_shown(choices)}")
    return choices


def _check_choice(choice: object) -> int:
    """A choice index from a student (its range is checked against the round, in the store)."""
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < MAX_CHOICES:
        raise ValueError(f"an answer is a choice index 0-{MAX_CHOICES - 1}, got {_shown(choice)}")
    return choice


def _check_round(number: object) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_ROUNDS:
        raise ValueError(f"a round number is 1-{MAX_ROUNDS}, got {_shown(number)}")
    return number


def _check_ttl(ttl_s: float) -> float:
    if not isinstance(ttl_s, (int, float)) or not ttl_s > 0:
        raise ValueError(f"ttl_s is a positive number of seconds, got {_shown(ttl_s)}")
    return float(ttl_s)


class ClassStore(ABC):
    """The class store's contract; both backends keep it (tests/shared/test_class_store.py).

    Every method validates its code and seat with ``parse_code`` / ``parse_seat`` first
    (``ValueError``), raises ``ClassNotFound`` for a code with no live class and
    ``StoreUnavailable`` when the backend fails. Writes (create, join, set_following, publish)
    keep the class alive for another ``ttl_s`` seconds; reads do not.
    """

    ttl_s: float

    @abstractmethod
    def create_class(self) -> tuple[str, str]:
        """A new class: ``(code, teacher_key)``. The key is shown once; keep it."""

    @abstractmethod
    def join(self, code: str, seat: str) -> bool:
        """Take ``seat`` in the class; returns whether it follows the teacher.

        A new seat follows; a seat that joined before keeps its choice (a reload or a
        reconnect rejoins it). Raises ``ClassFull`` for a new seat past ``MAX_SEATS``.
        """

    @abstractmethod
    def set_following(self, code: str, seat: str, following: bool) -> None:
        """Mark ``seat`` as following the teacher or exploring (``SeatNotFound`` if unknown)."""

    @abstractmethod
    def publish(self, code: str, teacher_key: str, state: Mapping[str, str]) -> int:
        """Replace the class's state; returns the new version (one more than before).

        Raises ``PermissionError`` and changes nothing when ``teacher_key`` is not the class's.
        """

    @abstractmethod
    def check_teacher(self, code: str, teacher_key: str) -> None:
        """Return when ``teacher_key`` is the class's (a teacher link reopened on another device);
        raise ``PermissionError`` otherwise. Reads only: the class's expiry does not move."""

    @abstractmethod
    def read(self, code: str) -> ClassView:
        """The class now: version, state and seat counts."""

    @abstractmethod
    def version(self, code: str) -> int:
        """The class's version alone: the cheap read a poll makes."""

    @abstractmethod
    def end_class(self, code: str, teacher_key: str) -> None:
        """Remove the class and its seats (``PermissionError`` for a wrong key)."""

    @abstractmethod
    def ask(self, code: str, teacher_key: str, question: Mapping[str, str], choices: int) -> int:
        """Open a new round with ``question`` (state, as ``publish`` takes) of ``choices``
        choices; returns its number. A round still open before it closes. Moves the version (a
        student's poll sees it). ``PermissionError`` for a wrong key, ``TooManyRounds`` past
        ``MAX_ROUNDS``."""

    @abstractmethod
    def answer(self, code: str, seat: str, number: int, choice: int) -> None:
        """Record ``seat``'s answer ``choice`` to round ``number``, replacing its earlier one
        (one answer per seat per round). ``SeatNotFound`` for a seat not in the class,
        ``RoundClosed`` unless ``number`` is the newest round and open, ``ValueError`` for a
        choice the round does not offer. The version does not move (answers are counted, not
        shown to students)."""

    @abstractmethod
    def reveal(self, code: str, teacher_key: str, number: int) -> int:
        """Reveal round ``number`` (the newest, open): it takes no more answers. Returns the new
        version. ``RoundClosed`` otherwise, ``PermissionError`` for a wrong key."""

    @abstractmethod
    def close_round(self, code: str, teacher_key: str, number: int) -> int:
        """Take round ``number`` (the newest) off the students' pages; its counts stay. Returns
        the new version. ``RoundClosed`` when it is not the newest or already closed."""

    @abstractmethod
    def current_round(self, code: str, seat: str | None = None) -> ClassRound | None:
        """The newest round with its counts (and ``seat``'s answer), or None before any."""

    @abstractmethod
    def rounds(self, code: str) -> tuple[ClassRound, ...]:
        """Every round of the class, oldest first, with its counts (the class's results)."""


# --- SQLite -----------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY,
    key_digest TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS classes_expiry ON classes (expires_at);
CREATE TABLE IF NOT EXISTS seats (
    code TEXT NOT NULL,
    seat TEXT NOT NULL,
    following INTEGER NOT NULL,
    PRIMARY KEY (code, seat)
);
CREATE TABLE IF NOT EXISTS rounds (
    code TEXT NOT NULL,
    number INTEGER NOT NULL,
    question TEXT NOT NULL,
    choices INTEGER NOT NULL,
    stage TEXT NOT NULL,
    PRIMARY KEY (code, number)
);
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL,
    number INTEGER NOT NULL,
    seat TEXT NOT NULL,
    choice INTEGER NOT NULL,
    PRIMARY KEY (code, number, seat)
);
"""
_CLASS_TABLES = ("seats", "rounds", "answers")


class SQLiteClassStore(ClassStore):
    """The class store in one SQLite file (WAL mode; one connection per store, behind a lock).

    Expiry is a wall-clock ``expires_at`` per class (replicas on one host share the clock): an
    expired class reads as missing, is deleted when a write touches its code, and all expired
    classes are swept when a class is created. The file is opened on first use, so a path that
    cannot be written raises ``StoreUnavailable`` from the first call, and later calls try again.

    One connection serves every thread of the process, one transaction at a time: Streamlit runs
    each rerun in a new thread, and a connection per thread meant opening the file (WAL pragma,
    schema) on every poll of every student, most of a poll's cost. Transactions take well under
    a millisecond; other processes (replicas on one host) share the file through SQLite's locks.
    """

    def __init__(self, path: str | os.PathLike[str], ttl_s: float = DEFAULT_TTL_S,
                 busy_timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self.ttl_s = _check_ttl(ttl_s)
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()
        self._shared: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        """The store's connection, opened on first use (call with ``_lock`` held)."""
        connection = self._shared
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=self.busy_timeout_s, isolation_level=None,
                check_same_thread=False,
            )
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.executescript(_SCHEMA)
            except sqlite3.Error:
                connection.close()
                raise
            self._shared = connection
        return connection

    @contextmanager
    def _session(self, write: bool) -> Iterator[sqlite3.Connection]:
        """A connection inside a transaction (``BEGIN IMMEDIATE`` for writes: the write lock is
        taken up front, so two writers never deadlock upgrading a read lock)."""
        with self._lock:
            yield from self._transaction(write)

    @contextmanager
    def _file_errors(self) -> Iterator[None]:
        """SQLite's errors as ``StoreUnavailable``; the failed connection is dropped."""
        try:
            yield
        except sqlite3.Error as error:
            self._drop_connection()
            raise StoreUnavailable(
                f"the class store file {self.path} cannot be used: {error}"
            ) from error

    def _transaction(self, write: bool) -> Iterator[sqlite3.Connection]:
        with self._file_errors():
            connection = self._connection()
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield connection
            except (LookupError, ClassFull, PermissionError):
                # Refusals write nothing but the removal of an expired class, which stays.
                connection.execute("COMMIT")
                raise
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def _drop_connection(self) -> None:
        """Forget a connection that failed: the next call opens the file again (it may be back)."""
        if self._shared is not None:
            with suppress(sqlite3.Error):
                self._shared.close()
            self._shared = None

    def _live(self, connection: sqlite3.Connection, code: str, now: float) -> tuple[Any, ...]:
        """The class row ``(key_digest, version, state)``; an expired one is deleted."""
        row = connection.execute(
            "SELECT key_digest, version, state, expires_at FROM classes WHERE code = ?", (code,)
        ).fetchone()
        if row is None or row[3] <= now:
            raise ClassNotFound(f"no class has the code {code}")
        return row[:3]

    def _refresh(self, connection: sqlite3.Connection, code: str, now: float) -> None:
        connection.execute(
            "UPDATE classes SET expires_at = ? WHERE code = ?", (now + self.ttl_s, code)
        )

    @staticmethod
    def _delete(connection: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> None:
        for table in _CLASS_TABLES:
            connection.execute(
                f"DELETE FROM {table} WHERE code IN (SELECT code FROM classes {where})", args
            )
        connection.execute(f"DELETE FROM classes {where}", args)

    def _drop_expired(self, connection: sqlite3.Connection, code: str, now: float) -> None:
        self._delete(connection, "WHERE code = ? AND expires_at <= ?", (code, now))

    def create_class(self) -> tuple[str, str]:
        teacher_key = secrets.token_urlsafe(TEACHER_KEY_BYTES)
        with self._session(write=True) as connection:
            now = time.time()
            self._delete(connection, "WHERE expires_at <= ?", (now,))
            for _ in range(CREATE_ATTEMPTS):
                code = new_code()
                taken = connection.execute(
                    "SELECT 1 FROM classes WHERE code = ?", (code,)
                ).fetchone()
                if taken is None:
                    connection.execute(
                        "INSERT INTO classes VALUES (?, ?, 0, '{}', ?)",
                        (code, key_digest(teacher_key), now + self.ttl_s),
                    )
                    return code, teacher_key
        raise StoreUnavailable(f"no free class code after {CREATE_ATTEMPTS} attempts")

    def join(self, code: str, seat: str) -> bool:
        code, seat = parse_code(code), parse_seat(seat)
        with self._session(write=True) as connection:
            now = time.time()
            self._drop_expired(connection, code, now)
            self._live(connection, code, now)
            row = connection.execute(
                "SELECT following FROM seats WHERE code = ? AND seat = ?", (code, seat)
            ).fetchone()
            if row is None:
                (count,) = connection.execute(
                    "SELECT COUNT(*) FROM seats WHERE code = ?", (code,)
                ).fetchone()
                if count >= MAX_SEATS:
                    raise ClassFull(f"class {code} already has {MAX_SEATS} seats")
                connection.execute("INSERT INTO seats VALUES (?, ?, 1)", (code, seat))
                row = (1,)
            self._refresh(connection, code, now)
            return bool(row[0])

    def set_following(self, code: str, seat: str, following: bool) -> None:
        code, seat = parse_code(code), parse_seat(seat)
        with self._session(write=True) as connection:
            now = time.time()
            self._drop_expired(connection, code, now)
            self._live(connection, code, now)
            changed = connection.execute(
                "UPDATE seats SET following = ? WHERE code = ? AND seat = ?",
                (int(bool(following)), code, seat),
            ).rowcount
            if changed == 0:
                raise SeatNotFound(f"class {code} has no seat {seat}")
            self._refresh(connection, code, now)

    def publish(self, code: str, teacher_key: str, state: Mapping[str, str]) -> int:
        code = parse_code(code)
        text = encode_state(state)
        with self._session(write=True) as connection:
            now = time.time()
            self._drop_expired(connection, code, now)
            digest, version, _ = self._live(connection, code, now)
            if not key_matches(teacher_key, digest):
                raise PermissionError(f"that is not the teacher key of class {code}")
            connection.execute(
                "UPDATE classes SET version = ?, state = ?, expires_at = ? WHERE code = ?",
                (version + 1, text, now + self.ttl_s, code),
            )
            return version + 1

    def check_teacher(self, code: str, teacher_key: str) -> None:
        code = parse_code(code)
        with self._session(write=False) as connection:
            digest = self._live(connection, code, time.time())[0]
        if not key_matches(teacher_key, digest):
            raise PermissionError(f"that is not the teacher key of class {code}")

    def read(self, code: str) -> ClassView:
        code = parse_code(code)
        with self._session(write=False) as connection:
            _, version, text = self._live(connection, code, time.time())
            joined, following = connection.execute(
                "SELECT COUNT(*), COALESCE(SUM(following), 0) FROM seats WHERE code = ?", (code,)
            ).fetchone()
        return ClassView(version, decode_state(text), joined, following, joined - following)

    def version(self, code: str) -> int:
        # Every following student asks this once a second: one SELECT in autocommit (atomic on
        # its own), no transaction around it. An expired class reads as missing; it is deleted
        # by the next write that touches it, as elsewhere.
        code = parse_code(code)
        with self._lock, self._file_errors():
            row = self._connection().execute(
                "SELECT version, expires_at FROM classes WHERE code = ?", (code,)
            ).fetchone()
        if row is None or row[1] <= time.time():
            raise ClassNotFound(f"no class has the code {code}")
        return row[0]

    def end_class(self, code: str, teacher_key: str) -> None:
        code = parse_code(code)
        with self._session(write=True) as connection:
            now = time.time()
            self._drop_expired(connection, code, now)
            digest, _, _ = self._live(connection, code, now)
            if not key_matches(teacher_key, digest):
                raise PermissionError(f"that is not the teacher key of class {code}")
            self._delete(connection, "WHERE code = ?", (code,))

    def _as_teacher(self, connection: sqlite3.Connection, code: str, teacher_key: str,
                    now: float) -> int:  # fmt: skip
        """The class's version, once ``teacher_key`` is shown to be its teacher's."""
        self._drop_expired(connection, code, now)
        digest, version, _ = self._live(connection, code, now)
        if not key_matches(teacher_key, digest):
            raise PermissionError(f"that is not the teacher key of class {code}")
        return version

    def _bump(self, connection: sqlite3.Connection, code: str, version: int, now: float) -> int:
        connection.execute("UPDATE classes SET version = ?, expires_at = ? WHERE code = ?",
                           (version + 1, now + self.ttl_s, code))  # fmt: skip
        return version + 1

    @staticmethod
    def _newest(connection: sqlite3.Connection, code: str) -> tuple[Any, ...] | None:
        """The newest round ``(number, question, choices, stage)``, or None."""
        return connection.execute(
            "SELECT number, question, choices, stage FROM rounds WHERE code = ? "
            "ORDER BY number DESC LIMIT 1", (code,)
        ).fetchone()

    def ask(self, code: str, teacher_key: str, question: Mapping[str, str], choices: int) -> int:
        code, choices = parse_code(code), _check_choices(choices)
        text = encode_state(question)
        with self._session(write=True) as connection:
            now = time.time()
            version = self._as_teacher(connection, code, teacher_key, now)
            newest = self._newest(connection, code)
            number = 1 if newest is None else newest[0] + 1
            if number > MAX_ROUNDS:
                raise TooManyRounds(f"class {code} already asked {MAX_ROUNDS} rounds")
            connection.execute("UPDATE rounds SET stage = ? WHERE code = ? AND stage = ?",
                               (CLOSED, code, OPEN))  # fmt: skip
            connection.execute("INSERT INTO rounds VALUES (?, ?, ?, ?, ?)",
                               (code, number, text, choices, OPEN))  # fmt: skip
            self._bump(connection, code, version, now)
            return number

    def answer(self, code: str, seat: str, number: int, choice: int) -> None:
        code, seat = parse_code(code), parse_seat(seat)
        number, choice = _check_round(number), _check_choice(choice)
        with self._session(write=True) as connection:
            now = time.time()
            self._drop_expired(connection, code, now)
            self._live(connection, code, now)
            if connection.execute("SELECT 1 FROM seats WHERE code = ? AND seat = ?",
                                  (code, seat)).fetchone() is None:  # fmt: skip
                raise SeatNotFound(f"class {code} has no seat {seat}")
            newest = self._newest(connection, code)
            if newest is None or newest[0] != number or newest[3] != OPEN:
                raise RoundClosed(f"round {number} of class {code} is not taking answers")
            if choice >= newest[2]:
                raise ValueError(f"round {number} offers choices 0-{newest[2] - 1}, got {choice}")
            connection.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)",
                               (code, number, seat, choice))  # fmt: skip
            self._refresh(connection, code, now)

    def _move_round(self, code: str, teacher_key: str, number: int, stage: str) -> int:
        code, number = parse_code(code), _check_round(number)
        with self._session(write=True) as connection:
            now = time.time()
            version = self._as_teacher(connection, code, teacher_key, now)
            newest = self._newest(connection, code)
            allowed = (OPEN,) if stage == REVEALED else (OPEN, REVEALED)
            if newest is None or newest[0] != number or newest[3] not in allowed:
                raise RoundClosed(f"round {number} of class {code} cannot become {stage}")
            connection.execute("UPDATE rounds SET stage = ? WHERE code = ? AND number = ?",
                               (stage, code, number))  # fmt: skip
            return self._bump(connection, code, version, now)

    def reveal(self, code: str, teacher_key: str, number: int) -> int:
        return self._move_round(code, teacher_key, number, REVEALED)

    def close_round(self, code: str, teacher_key: str, number: int) -> int:
        return self._move_round(code, teacher_key, number, CLOSED)

    @staticmethod
    def _round(connection: sqlite3.Connection, code: str, row: tuple[Any, ...],
               seat: str | None) -> ClassRound:  # fmt: skip
        number, text, choices, stage = row
        counts = [0] * choices
        for choice, count in connection.execute(
            "SELECT choice, COUNT(*) FROM answers WHERE code = ? AND number = ? GROUP BY choice",
            (code, number),
        ):
            counts[choice] = count
        mine = None
        if seat is not None:
            found = connection.execute(
                "SELECT choice FROM answers WHERE code = ? AND number = ? AND seat = ?",
                (code, number, seat),
            ).fetchone()
            mine = None if found is None else found[0]
        return ClassRound(number, decode_state(text), choices, stage, tuple(counts),
                          sum(counts), mine)  # fmt: skip

    def current_round(self, code: str, seat: str | None = None) -> ClassRound | None:
        code = parse_code(code)
        seat = None if seat is None else parse_seat(seat)
        with self._session(write=False) as connection:
            self._live(connection, code, time.time())
            newest = self._newest(connection, code)
            return None if newest is None else self._round(connection, code, newest, seat)

    def rounds(self, code: str) -> tuple[ClassRound, ...]:
        code = parse_code(code)
        with self._session(write=False) as connection:
            self._live(connection, code, time.time())
            rows = connection.execute(
                "SELECT number, question, choices, stage FROM rounds WHERE code = ? "
                "ORDER BY number", (code,)
            ).fetchall()
            return tuple(self._round(connection, code, row, None) for row in rows)


# --- Redis ------------------------------------------------------------------------------------

# Each script checks and writes in one step (Redis runs a script alone), so the seat cap holds
# under concurrent joins and a class that expired or ended between two calls is not revived.
# KEYS are the class hash, its seats hash, its rounds hash and its answers hash; all share one
# hash tag (one cluster slot), and every write moves the expiry of all four.
_JOIN = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[2]) then return -2 end
  redis.call('HSET', KEYS[2], ARGV[1], '1')
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return tonumber(redis.call('HGET', KEYS[2], ARGV[1]))
"""
_SET_FOLLOWING = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return -3 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return 1
"""
# ARGV[1] is the key digest the caller already compared in constant time; checking it again
# here refuses a class that was ended and re-created with the same code in between.
_PUBLISH = """
if redis.call('HGET', KEYS[1], 'key') ~= ARGV[1] then return -1 end
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'state', ARGV[2])
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return version
"""
_END = """
if redis.call('HGET', KEYS[1], 'key') ~= ARGV[1] then return -1 end
redis.call('DEL', unpack(KEYS))
return 1
"""
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'key', ARGV[1], 'version', 0, 'state', '{}')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# The rounds hash: "n" (newest round), and per round N "q:N" question, "c:N" choices, "s:N"
# stage, "a:N" seats answered, "k:N:I" answers of choice I. The answers hash: "N:SEAT" -> choice.
# Counts move in the same script as the answer, so a tally is a few fields, never a scan.
_ASK = """
if redis.call('HGET', KEYS[1], 'key') ~= ARGV[1] then return -1 end
local n = tonumber(redis.call('HGET', KEYS[3], 'n') or '0')
if n >= tonumber(ARGV[4]) then return -2 end
if n > 0 and redis.call('HGET', KEYS[3], 's:' .. n) == 'open' then
  redis.call('HSET', KEYS[3], 's:' .. n, 'closed')
end
n = n + 1
redis.call('HSET', KEYS[3], 'n', n, 'q:' .. n, ARGV[2], 'c:' .. n, ARGV[3], 's:' .. n, 'open',
           'a:' .. n, 0)
redis.call('HINCRBY', KEYS[1], 'version', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
return n
"""
_ANSWER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return -3 end
local n = redis.call('HGET', KEYS[3], 'n')
if n ~= ARGV[2] or redis.call('HGET', KEYS[3], 's:' .. n) ~= 'open' then return -4 end
if tonumber(ARGV[3]) >= tonumber(redis.call('HGET', KEYS[3], 'c:' .. n)) then return -5 end
local field = n .. ':' .. ARGV[1]
local old = redis.call('HGET', KEYS[4], field)
if old then
  redis.call('HINCRBY', KEYS[3], 'k:' .. n .. ':' .. old, -1)
else
  redis.call('HINCRBY', KEYS[3], 'a:' .. n, 1)
end
redis.call('HSET', KEYS[4], field, ARGV[3])
redis.call('HINCRBY', KEYS[3], 'k:' .. n .. ':' .. ARGV[3], 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return 1
"""
_MOVE_ROUND = """
if redis.call('HGET', KEYS[1], 'key') ~= ARGV[1] then return -1 end
local n = redis.call('HGET', KEYS[3], 'n')
if n ~= ARGV[2] then return -4 end
local stage = redis.call('HGET', KEYS[3], 's:' .. n)
if stage == 'closed' or (ARGV[3] == 'revealed' and stage ~= 'open') then return -4 end
redis.call('HSET', KEYS[3], 's:' .. n, ARGV[3])
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return version
"""
# Reads a round in one step: {number, question, choices, stage, answered, mine, count...}
# (ARGV[1] is the round, "" for the newest; ARGV[2] a seat or "").
_READ_ROUND = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = ARGV[1]
if n == '' then n = redis.call('HGET', KEYS[3], 'n') end
if not n or n == '0' then return 0 end
local c = tonumber(redis.call('HGET', KEYS[3], 'c:' .. n))
local fields = {'q:' .. n, 's:' .. n, 'a:' .. n}
for i = 0, c - 1 do fields[#fields + 1] = 'k:' .. n .. ':' .. i end
local values = redis.call('HMGET', KEYS[3], unpack(fields))
local mine = ''
if ARGV[2] ~= '' then mine = redis.call('HGET', KEYS[4], n .. ':' .. ARGV[2]) or '' end
local out = {n, values[1], c, values[2], values[3] or '0', mine}
for i = 4, #values do out[#out + 1] = values[i] or '0' end
return out
"""


class RedisClassStore(ClassStore):
    """The class store in Redis (``redis://host:6379/0``), for replicas on several machines.

    A class is four hashes, ``tp:class:{CODE}`` (key digest, version, state),
    ``tp:class:{CODE}:seats`` (seat -> "1" following / "0" detached), ``...:rounds`` and
    ``...:answers`` (below); every write sets all four to expire ``ttl_s`` after it.
    Connection and socket timeouts are ``timeout_s``, so a store that
    is down is reported within a few seconds; the client reconnects by itself when it is back.
    """

    def __init__(self, url: str, ttl_s: float = DEFAULT_TTL_S, timeout_s: float = 2.0) -> None:
        import redis
        from redis.backoff import ExponentialBackoff
        from redis.retry import Retry

        self.ttl_s = _check_ttl(ttl_s)
        self._errors = redis.RedisError
        self._redis = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=1),
        )
        self._scripts = {name: self._redis.register_script(source) for name, source in
                         (("join", _JOIN), ("follow", _SET_FOLLOWING), ("publish", _PUBLISH),
                          ("end", _END), ("create", _CREATE), ("ask", _ASK),
                          ("answer", _ANSWER), ("move", _MOVE_ROUND),
                          ("read_round", _READ_ROUND))}
        # The URL may carry a password: messages name only the host.
        kwargs = self._redis.connection_pool.connection_kwargs
        self._where = f"{kwargs.get('host', kwargs.get('path', 'redis'))}:{kwargs.get('port', '')}"

    @property
    def _ttl_ms(self) -> int:
        return max(1, round(self.ttl_s * 1000))

    @staticmethod
    def _keys(code: str) -> list[str]:
        base = f"tp:class:{{{code}}}"
        return [base, f"{base}:seats", f"{base}:rounds", f"{base}:answers"]

    @contextmanager
    def _reaching(self) -> Iterator[None]:
        try:
            yield
        except self._errors as error:
            raise StoreUnavailable(
                f"the class store (Redis at {self._where}) cannot be reached: {error}"
            ) from error

    def _digest(self, code: str) -> str:
        with self._reaching():
            digest = self._redis.hget(self._keys(code)[0], "key")
        if digest is None:
            raise ClassNotFound(f"no class has the code {code}")
        return digest

    def create_class(self) -> tuple[str, str]:
        teacher_key = secrets.token_urlsafe(TEACHER_KEY_BYTES)
        with self._reaching():
            for _ in range(CREATE_ATTEMPTS):
                code = new_code()
                if self._scripts["create"](keys=self._keys(code),
                                           args=[key_digest(teacher_key), self._ttl_ms]):
                    return code, teacher_key
        raise StoreUnavailable(f"no free class code after {CREATE_ATTEMPTS} attempts")

    def join(self, code: str, seat: str) -> bool:
        code, seat = parse_code(code), parse_seat(seat)
        with self._reaching():
            result = self._scripts["join"](keys=self._keys(code),
                                           args=[seat, MAX_SEATS, self._ttl_ms])
        if result == -1:
            raise ClassNotFound(f"no class has the code {code}")
        if result == -2:
            raise ClassFull(f"class {code} already has {MAX_SEATS} seats")
        return bool(result)

    def set_following(self, code: str, seat: str, following: bool) -> None:
        code, seat = parse_code(code), parse_seat(seat)
        with self._reaching():
            result = self._scripts["follow"](
                keys=self._keys(code), args=[seat, "1" if following else "0", self._ttl_ms]
            )
        if result == -1:
            raise ClassNotFound(f"no class has the code {code}")
        if result == -3:
            raise SeatNotFound(f"class {code} has no seat {seat}")

    def _teacher(self, code: str, teacher_key: str) -> str:
        """The class's key digest, once ``teacher_key`` is shown to match it."""
        digest = self._digest(code)
        if not key_matches(teacher_key, digest):
            raise PermissionError(f"that is not the teacher key of class {code}")
        return digest

    def publish(self, code: str, teacher_key: str, state: Mapping[str, str]) -> int:
        code = parse_code(code)
        text = encode_state(state)
        digest = self._teacher(code, teacher_key)
        with self._reaching():
            version = self._scripts["publish"](keys=self._keys(code),
                                               args=[digest, text, self._ttl_ms])
        if version == -1:
            raise ClassNotFound(f"no class has the code {code}")
        return int(version)

    def check_teacher(self, code: str, teacher_key: str) -> None:
        self._teacher(parse_code(code), teacher_key)

    def read(self, code: str) -> ClassView:
        code = parse_code(code)
        class_key, seats_key, *_ = self._keys(code)
        with self._reaching():
            pipe = self._redis.pipeline(transaction=True)
            pipe.hmget(class_key, "version", "state")
            pipe.hvals(seats_key)
            (version, text), seats = pipe.execute()
        if version is None:
            raise ClassNotFound(f"no class has the code {code}")
        following = sum(1 for value in seats if value == "1")
        return ClassView(int(version), decode_state(text), len(seats), following,
                         len(seats) - following)

    def version(self, code: str) -> int:
        code = parse_code(code)
        with self._reaching():
            version = self._redis.hget(self._keys(code)[0], "version")
        if version is None:
            raise ClassNotFound(f"no class has the code {code}")
        return int(version)

    def end_class(self, code: str, teacher_key: str) -> None:
        code = parse_code(code)
        digest = self._teacher(code, teacher_key)
        with self._reaching():
            if self._scripts["end"](keys=self._keys(code), args=[digest]) == -1:
                raise ClassNotFound(f"no class has the code {code}")

    def ask(self, code: str, teacher_key: str, question: Mapping[str, str], choices: int) -> int:
        code, choices = parse_code(code), _check_choices(choices)
        text = encode_state(question)
        digest = self._teacher(code, teacher_key)
        with self._reaching():
            number = self._scripts["ask"](keys=self._keys(code),
                                          args=[digest, text, choices, MAX_ROUNDS, self._ttl_ms])
        if number == -1:
            raise ClassNotFound(f"no class has the code {code}")
        if number == -2:
            raise TooManyRounds(f"class {code} already asked {MAX_ROUNDS} rounds")
        return int(number)

    def answer(self, code: str, seat: str, number: int, choice: int) -> None:
        code, seat = parse_code(code), parse_seat(seat)
        number, choice = _check_round(number), _check_choice(choice)
        with self._reaching():
            result = self._scripts["answer"](keys=self._keys(code),
                                             args=[seat, number, choice, self._ttl_ms])
        if result == -1:
            raise ClassNotFound(f"no class has the code {code}")
        if result == -3:
            raise SeatNotFound(f"class {code} has no seat {seat}")
        if result == -4:
            raise RoundClosed(f"round {number} of class {code} is not taking answers")
        if result == -5:
            raise ValueError(f"round {number} of class {code} does not offer choice {choice}")

    def _move_round(self, code: str, teacher_key: str, number: int, stage: str) -> int:
        code, number = parse_code(code), _check_round(number)
        digest = self._teacher(code, teacher_key)
        with self._reaching():
            version = self._scripts["move"](keys=self._keys(code),
                                            args=[digest, number, stage, self._ttl_ms])
        if version == -1:
            raise ClassNotFound(f"no class has the code {code}")
        if version == -4:
            raise RoundClosed(f"round {number} of class {code} cannot become {stage}")
        return int(version)

    def reveal(self, code: str, teacher_key: str, number: int) -> int:
        return self._move_round(code, teacher_key, number, REVEALED)

    def close_round(self, code: str, teacher_key: str, number: int) -> int:
        return self._move_round(code, teacher_key, number, CLOSED)

    def _read_round(self, code: str, number: int | None, seat: str | None) -> ClassRound | None:
        with self._reaching():
            found = self._scripts["read_round"](
                keys=self._keys(code), args=["" if number is None else number, seat or ""]
            )
        if found == -1:
            raise ClassNotFound(f"no class has the code {code}")
        if found == 0:
            return None
        number_text, text, choices, stage, answered, mine, *counts = found
        return ClassRound(int(number_text), decode_state(text), int(choices), stage,
                          tuple(int(count) for count in counts), int(answered),
                          None if mine == "" else int(mine))  # fmt: skip

    def current_round(self, code: str, seat: str | None = None) -> ClassRound | None:
        code = parse_code(code)
        return self._read_round(code, None, None if seat is None else parse_seat(seat))

    def rounds(self, code: str) -> tuple[ClassRound, ...]:
        code = parse_code(code)
        newest = self._read_round(code, None, None)
        if newest is None:
            return ()
        earlier = (self._read_round(code, number, None) for number in range(1, newest.number))
        return (*(found for found in earlier if found is not None), newest)


# --- Choosing a store -------------------------------------------------------------------------


def data_dir() -> Path:
    """Where the default store keeps its file: ``TP_DATA_DIR``, else the user's cache folder
    (``$XDG_CACHE_HOME`` or ``~/.cache``) / ``torch-playground``. Created when missing."""
    configured = os.environ.get(ENV_DATA_DIR)
    if configured:
        folder = Path(configured)
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        folder = Path(cache) / "torch-playground"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreUnavailable(f"the class store folder {folder} cannot be created: {error}") \
            from error
    return folder


def open_store(spec: str | None = None, ttl_s: float = DEFAULT_TTL_S) -> ClassStore:
    """The store ``spec`` names (``TP_CLASS_STORE`` when ``spec`` is None).

    - ``""``: SQLite, ``classes.sqlite3`` in ``data_dir()``;
    - ``"sqlite://PATH"``: SQLite in the file PATH (``sqlite:///srv/tp/classes.sqlite3`` is an
      absolute path);
    - ``"redis://..."``, ``"rediss://..."``, ``"unix://..."``: Redis at that URL.

    Raises ``ValueError`` naming the scheme for anything else.
    """
    if spec is None:
        spec = os.environ.get(ENV_STORE, "")
    spec = spec.strip()
    if not spec:
        return SQLiteClassStore(data_dir() / SQLITE_FILE, ttl_s=ttl_s)
    if spec.startswith("sqlite://"):
        path = spec.removeprefix("sqlite://")
        if not path:
            raise ValueError("a sqlite:// class store needs a file path, got 'sqlite://'")
        return SQLiteClassStore(path, ttl_s=ttl_s)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisClassStore(spec, ttl_s=ttl_s)
    scheme = spec.split("://", 1)[0] if "://" in spec else spec
    raise ValueError(
        f"{ENV_STORE} is '', sqlite://PATH or redis://HOST:PORT/DB, got {_shown(scheme)}"
    )
