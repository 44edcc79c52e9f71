"""Entries of kind shapes (being written)."""

from lessons.errors.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
