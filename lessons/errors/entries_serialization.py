"""Entries of kind serialization (being written)."""

from lessons.errors.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
