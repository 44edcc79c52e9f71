"""Entries of kind build (being written)."""

from lessons.errors.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
