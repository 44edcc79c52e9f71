"""Entries of kind data (being written)."""

from lessons.errors.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
