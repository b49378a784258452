"""``make release VERSION=X.Y.Z``: bump the version, date the changelog, build, tag.

The steps, in order:

1. ``pyproject.toml``'s version (the one place the book, the footer and the wheels read it
   from) and ``CITATION.cff``'s ``version`` and ``date-released`` become the new version
   and today's date;
2. ``CHANGELOG.md``'s "Unreleased" entries move under a heading of the new version and date,
   leaving an empty "Unreleased" above it (the book's "Changes and errata" page includes the
   file);
3. the book, its PDF and both wheels are built (``make book pdf wheels``);
4. the three files are committed and the commit is tagged ``vX.Y.Z``.

``--dry-run`` changes nothing: it prints the edits as a diff and the commands it would run.
A version that is not X.Y.Z, not above the current one, or an empty "Unreleased" section
stops the release before anything is written (exit status 2).
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
FILES = ("pyproject.toml", "CITATION.cff", "CHANGELOG.md")
UNRELEASED = "## [Unreleased]"


def _numbers(version: str, name: str) -> tuple[int, ...]:
    parts = version.split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"{name} must be MAJOR.MINOR.PATCH such as 1.2.0, got {version!r}")
    return tuple(int(part) for part in parts)


def _replace_line(text: str, start: str, new: str, file: str) -> str:
    lines = text.split("\n")
    found = [i for i, line in enumerate(lines) if line.startswith(start)]
    if len(found) != 1:
        raise ValueError(f"{file}: expected one line starting with {start!r}, found {len(found)}")
    lines[found[0]] = new
    return "\n".join(lines)


def bumped(root: Path, version: str, date: datetime.date) -> dict[str, str]:
    """The new text of each of :data:`FILES` for a release of ``version`` on ``date``.

    Raises
    ------
    ValueError
        If ``version`` is not MAJOR.MINOR.PATCH or not above the current version, or the
        changelog's "Unreleased" section is missing or empty.
    """
    texts = {name: (root / name).read_text(encoding="utf-8") for name in FILES}
    current = tomllib.loads(texts["pyproject.toml"])["project"]["version"]
    if _numbers(version, "VERSION") <= _numbers(current, "the current version"):
        raise ValueError(f"VERSION must be above the current version {current}, got {version}")
    texts["pyproject.toml"] = _replace_line(
        texts["pyproject.toml"], f'version = "{current}"', f'version = "{version}"', FILES[0]
    )
    cff = _replace_line(texts["CITATION.cff"], "version:", f'version: "{version}"', FILES[1])
    texts["CITATION.cff"] = _replace_line(
        cff, "date-released:", f'date-released: "{date.isoformat()}"', FILES[1]
    )
    changelog = texts["CHANGELOG.md"]
    if UNRELEASED not in changelog:
        raise ValueError(f"CHANGELOG.md has no {UNRELEASED!r} section")
    head, _, rest = changelog.partition(UNRELEASED)
    entries, heading, tail = rest.partition("\n## [")
    if not entries.strip():
        raise ValueError("CHANGELOG.md: nothing under 'Unreleased' to release")
    texts["CHANGELOG.md"] = (
        f"{head}{UNRELEASED}\n\n## [{version}] - {date.isoformat()}\n\n{entries.strip()}\n"
        + (f"\n## [{tail}" if heading else "")
    )
    return texts


def commands(version: str) -> list[list[str]]:
    """What a release runs once the files are written."""
    return [
        ["make", "book", "pdf", "wheels"],
        ["git", "commit", "--message", f"Release {version}", "--", *FILES],
        ["git", "tag", "--annotate", f"v{version}", "--message", f"RL Foundations {version}"],
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make release", description=__doc__.split("\n")[0])
    parser.add_argument("--version", required=True, help="the new version, MAJOR.MINOR.PATCH")
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=None)
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--dry-run", action="store_true", help="print the edits, change nothing")
    args = parser.parse_args(argv)
    date = args.date or datetime.date.today()
    try:
        texts = bumped(args.root, args.version, date)
    except ValueError as error:
        parser.error(f"argument --version: {error}")
    for name, text in texts.items():
        old = (args.root / name).read_text(encoding="utf-8")
        if args.dry_run:
            sys.stdout.writelines(
                difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True), f"a/{name}", f"b/{name}"
                )
            )
        else:
            (args.root / name).write_text(text, encoding="utf-8")
    for command in commands(args.version):
        if args.dry_run:
            print("would run:", " ".join(command))
        else:
            subprocess.run(command, cwd=args.root, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
