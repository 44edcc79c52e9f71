"""Extract, update and compile the message catalogs with Babel (docs/translations.md).

One gettext domain per part of the app, so a page's strings live in one ``.po`` file:

    python -m tools.i18n extract            # sources -> locales/<domain>.pot
    python -m tools.i18n update             # .pot -> locales/<locale>/LC_MESSAGES/<domain>.po
    python -m tools.i18n compile            # .po -> .mo (what the app reads)
    python -m tools.i18n all [DOMAIN ...]   # the three in a row, for some domains or all
    python -m tools.i18n missing [DOMAIN ...]  # msgids with no Chinese yet (or fuzzy)

``update`` creates a language's catalog the first time (``pybabel init``), then merges new
strings in (``pybabel update``, without fuzzy guesses: a guess shown to a learner is worse than
the English). Strings are marked in the code with ``_()`` / ``ngettext()`` (``ui.i18n``) and,
in ``core/``, ``N_()`` (``core.text``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.frontend import CommandLineInterface

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python tools/i18n.py` as well as `python -m tools.i18n`
    sys.path.insert(0, str(ROOT))
LOCALES = ROOT / "locales"
#: The languages other than English, as gettext locale folders.
LANGUAGES = ("zh_CN",)


def _domains() -> dict[str, tuple[str, ...]]:
    """domain -> the source files whose strings it holds, derived from the folders so that a new
    module cannot be forgotten: a lesson's domain is its slug (the registry's pages, the same
    list ``ui.i18n`` loads) and holds every module of its package; "app" holds the router,
    ``core/``, ``ui/`` and ``lessons/``'s shared modules."""
    from lessons.registry import HOME, LESSONS

    def names(*patterns: str) -> tuple[str, ...]:
        paths = {p for pattern in patterns for p in ROOT.glob(pattern)}
        return tuple(sorted(str(p.relative_to(ROOT)) for p in paths))

    domains = {"app": names("app.py", "core/*.py", "ui/*.py", "lessons/*.py")}
    for slug in (HOME.slug, *(page.slug for page in LESSONS)):
        domains[slug] = names(f"lessons/{slug}/**/*.py")
    return domains


DOMAINS: dict[str, tuple[str, ...]] = _domains()


def pot_path(domain: str) -> Path:
    return LOCALES / f"{domain}.pot"


def po_path(domain: str, locale: str) -> Path:
    return LOCALES / locale / "LC_MESSAGES" / f"{domain}.po"


def _babel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "-q", *args])


def extract(domain: str) -> None:
    files = [str(ROOT / name) for name in DOMAINS[domain]]
    _babel(
        "extract", "-k", "N_", "-k", "T", "--no-location", "--sort-output", "--no-wrap",
        "--project", "Torch Playground", "-o", str(pot_path(domain)), *files,
    )  # fmt: skip
    _add_snippet_comments(domain)


def snippet_comments(domain: str) -> set[str]:
    """The English ``# comments`` inside the code snippets that ``domain``'s sources build.

    Snippets are string literals (and the literal parts of f-strings) in the sources; Babel
    sees strings only as arguments of ``_``, so the comments in them are found here, by
    reading every literal line by line (``core.text.split_comment``). A comment the line goes
    on after an f-string value is not a whole message and is left out."""
    import ast

    from core.text import is_english_comment, split_comment

    found: set[str] = set()
    for name in DOMAINS[domain]:
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            literals = [node] if isinstance(node, ast.Constant) else []
            if isinstance(node, ast.JoinedStr):
                literals = [v for v in node.values if isinstance(v, ast.Constant)]
            for literal in literals:
                if not isinstance(literal.value, str) or "#" not in literal.value:
                    continue
                lines = literal.value.split("\n")
                if isinstance(node, ast.JoinedStr):
                    lines = lines[:-1] if literal is not node.values[-1] else lines
                for line in lines:
                    parts = split_comment(line)
                    if parts is not None and is_english_comment(parts[1]):
                        found.add(parts[1])
    return {comment for comment in found if not _in_the_notes(comment)}


def _in_the_notes(comment: str) -> bool:
    """The notes' own code keeps its comments as written (it is quoted, not ours). Decided by
    the list in core.notes, not by reading the notes, so a clone without them agrees."""
    from core.notes import is_notes_code_comment

    return is_notes_code_comment(comment)


def _add_snippet_comments(domain: str) -> None:
    from babel.messages.pofile import read_po, write_po

    path = pot_path(domain)
    with path.open("rb") as handle:
        catalog = read_po(handle)
    for comment in sorted(snippet_comments(domain)):
        if comment not in catalog:
            catalog.add(comment, auto_comments=["a comment in a code snippet"])
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, sort_output=True, no_location=True)


def translation_memory(locale: str) -> dict[object, object]:
    """msgid -> translation over every catalog of ``locale``: a string that moves from one
    module to another (and so from one domain to another) keeps its translation."""
    from babel.messages.pofile import read_po

    memory: dict[object, object] = {}
    for po in sorted((LOCALES / locale / "LC_MESSAGES").glob("*.po")):
        with po.open("rb") as handle:
            for message in read_po(handle):
                if message.id and _translated(message):
                    memory.setdefault(message.id, message.string)
    return memory


def _translated(message) -> bool:
    """Whether a catalog message has a translation (every plural form) that is not a guess."""
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    return not message.fuzzy and all(strings)


#: Each language's translation memory, read once, before any catalog is rewritten (see ``main``).
_MEMORY: dict[str, dict[object, object]] = {}


def _memory(locale: str) -> dict[object, object]:
    if locale not in _MEMORY:
        _MEMORY[locale] = translation_memory(locale)
    return _MEMORY[locale]


def update(domain: str) -> None:
    for locale in LANGUAGES:
        memory = _memory(locale)
        command = "update" if po_path(domain, locale).exists() else "init"
        extra = ["--no-fuzzy-matching", "--ignore-obsolete"] if command == "update" else []
        _babel(
            command, "-D", domain, "-i", str(pot_path(domain)), "-d", str(LOCALES),
            "-l", locale, "--no-wrap", *extra,
        )  # fmt: skip
        _fill_from_memory(po_path(domain, locale), memory)


def _fill_from_memory(po: Path, memory: dict[object, object]) -> None:
    """Give every untranslated message of ``po`` the translation another catalog has for it."""
    from babel.messages.pofile import read_po, write_po

    with po.open("rb") as handle:
        catalog = read_po(handle)
    filled = 0
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.id and not all(strings) and message.id in memory:
            message.string = memory[message.id]
            filled += 1
    if filled:
        with po.open("wb") as handle:
            write_po(handle, catalog, width=0, sort_output=True, no_location=True)


def compile_catalog(domain: str) -> None:
    _babel("compile", "-D", domain, "-d", str(LOCALES), "--statistics")


def missing(domain: str) -> None:
    for locale in LANGUAGES:
        for message in untranslated(po_path(domain, locale)):
            print(f"{domain} {locale}: {message!r}")


def untranslated(po: Path) -> list[str]:
    """The msgids of catalog ``po`` without a translation, or marked fuzzy (a guess)."""
    from babel.messages.pofile import read_po

    with po.open("rb") as handle:
        catalog = read_po(handle)
    left = []
    for message in catalog:
        if not message.id:
            continue  # the header
        if not _translated(message):
            left.append(message.id if isinstance(message.id, str) else message.id[0])
    return left


STEPS = {"extract": extract, "update": update, "compile": compile_catalog, "missing": missing}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in (*STEPS, "all"):
        print(__doc__)
        return 2
    domains = argv[1:] or list(DOMAINS)
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        print(f"unknown domain(s) {unknown}; known: {list(DOMAINS)}")
        return 2
    steps = [extract, update, compile_catalog] if argv[0] == "all" else [STEPS[argv[0]]]
    if update in steps:  # before any catalog drops a string that moved to another domain
        for locale in LANGUAGES:
            _memory(locale)
    for domain in domains:
        for step in steps:
            step(domain)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
