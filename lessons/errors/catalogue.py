"""The error doctor's catalogue: every entry, by key and by kind.

Entries are written one module per kind (``entries_<kind>.py``, each a tuple ``ENTRIES``); this
module puts them together in :data:`~lessons.errors.entry.KINDS` order and checks that no key is
used twice.
"""

from __future__ import annotations

import functools
import importlib

from lessons.errors.entry import KINDS, Entry, Kind

#: The modules that hold the entries, one per kind.
ENTRY_MODULES: tuple[str, ...] = tuple(f"lessons.errors.entries_{kind}" for kind in KINDS)


@functools.cache
def entries() -> tuple[Entry, ...]:
    """Every entry, grouped by kind in :data:`KINDS` order. Raises ValueError if two share a key
    or an entry sits in the module of another kind."""
    found: list[Entry] = []
    for kind, name in zip(KINDS, ENTRY_MODULES, strict=True):
        module_entries = importlib.import_module(name).ENTRIES
        strays = [entry.key for entry in module_entries if entry.kind != kind]
        if strays:
            raise ValueError(f"{name} holds entries of another kind: {strays}")
        found.extend(module_entries)
    keys = [entry.key for entry in found]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"entry keys used twice: {repeated}")
    return tuple(found)


@functools.cache
def _by_key() -> dict[str, Entry]:
    return {entry.key: entry for entry in entries()}


def entry_by_key(key: str) -> Entry:
    """The entry named ``key``. Raises ValueError naming the key when there is none."""
    try:
        return _by_key()[key]
    except KeyError:
        raise ValueError(f"no entry is called {key!r}") from None


def entries_of_kind(kind: Kind) -> tuple[Entry, ...]:
    """The entries of one kind, in catalogue order. Raises ValueError for an unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return tuple(entry for entry in entries() if entry.kind == kind)


#: How each run mode is named in the README's table of entries.
STATUS_WORDS = {"live": "live", "subprocess": "subprocess", "gpu": "needs a GPU",
                "documented": "documented"}  # fmt: skip


def entries_markdown() -> str:
    """The README's table of every entry: key, kind, the notes' place, the message, status.

    ``python -c "from lessons.errors.catalogue import entries_markdown as m; print(m())"``
    prints it; a test keeps lessons/errors/README.md equal to it."""
    from lessons.errors.matching import printable  # matching imports this module
    rows = ["| entry | kind | notes | message (today's where it runs) | status |",
            "|---|---|---|---|---|"]  # fmt: skip
    for entry in entries():
        message = printable(entry.today or entry.notes_message or entry.also[0])
        message = message.replace("\\n", " ")
        message = message if len(message) <= 90 else message[:87].rstrip() + "..."
        places = ", ".join((entry.where, *(where for where, _ in entry.also_notes)))
        message = message.replace("|", "\\|").replace("`", "'")
        rows.append(f"| `{entry.key}` | {entry.kind} | {places} | `{message}` | "
                    f"{STATUS_WORDS[entry.run]} |")  # fmt: skip
    return "\n".join(rows)
