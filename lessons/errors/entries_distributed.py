"""Entries of kind distributed (being written)."""

from lessons.errors.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
