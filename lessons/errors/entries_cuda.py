"""Entries of kind cuda (being written)."""

from lessons.errors.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
