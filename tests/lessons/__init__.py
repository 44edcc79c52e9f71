"""Tests, laid out like the code they check."""
