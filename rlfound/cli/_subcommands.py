"""Bodies of two of the ``rlfound`` command's subcommands (:mod:`rlfound.cli`): which exercise
``rlfound check FILE`` is about, and ``rlfound manual DIR``.

Each takes the subcommand's own parser, so that an error prints that subcommand's usage and
exits with status 2 naming the argument.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

__all__ = ["exercise_of_file", "manual", "named_in"]


def named_in(stem: str, exercises) -> list[str]:
    """The exercises a file's stem names, sorted: its words (lowercase letters and digits)
    hold the exercise id's words in a row; an id inside a longer one that also matches
    (``gae`` in ``gae-timeouts``) does not count.

    Examples
    --------
    >>> ids = ["gae", "gae-recursion", "gae-timeouts"]
    >>> named_in("Alice_GAE_recursion (2)", ids)
    ['gae-recursion']
    >>> named_in("gae_timeouts_and_gae_recursion", ids)
    ['gae-recursion', 'gae-timeouts']
    """
    words = "-" + "-".join(re.findall(r"[a-z0-9]+", stem.lower())) + "-"
    found = [e for e in exercises if f"-{e}-" in words]
    return sorted(
        e
        for e in found
        if not any(e != o and f"-{e}-" in f"-{o}-" for o in found)
    )


def exercise_of_file(parser, exercises, path: Path, source: str, lookup):
    """The exercise of a file: its header, else its file name when that names exactly one
    (``lookup(parser, exercises, id, argument)`` finds a named one or exits naming it)."""
    from rlfound.grading.authoring import starter

    named = starter.exercise_of(source)
    if named is not None:
        return lookup(
            parser,
            exercises,
            named,
            "FILE (its '# rlfound exercise:' header)",
        )
    candidates = named_in(path.stem, exercises)
    if len(candidates) == 1:
        return exercises[candidates[0]]
    if candidates:
        parser.error(
            f"argument --exercise: the file name {path.name!r} names several exercises "
            f"({', '.join(candidates)}); pass --exercise ID"
        )
    parser.error(
        f"argument --exercise: {path.name} has no '# rlfound exercise: ID' header and its "
        "name names no exercise; pass --exercise ID (`rlfound exercises` lists them)"
    )


def manual(parser, args, *, shown: int) -> int:
    """``rlfound manual DIR -o FILE``: write the template of the points graded by hand."""
    import csv
    import io

    from rlfound.grading.output.atomic import write_atomic
    from rlfound.grading.output.manual_template import manual_template_csv

    folder, output = Path(args.dir), Path(args.output)
    if not folder.is_dir():
        parser.error(f"argument DIR: {folder} is not a folder")
    if output.exists() and not args.force:
        parser.error(f"{output} exists; pass --force to overwrite it")
    try:
        body, missing = manual_template_csv(folder)
    except ValueError as error:
        parser.error(f"argument {error}")
    rows = (
        sum(1 for _ in csv.reader(io.StringIO(body))) - 1
    )  # an answer may hold new lines
    write_atomic(output, body)
    print(
        f"wrote {output}: {rows} part(s) to grade by hand, points and comment blank; fill "
        "them in and merge them with --manual",
        file=sys.stderr,
    )
    if missing:
        names = ", ".join(missing[:shown]) + (
            " ..." if len(missing) > shown else ""
        )
        print(
            f"no manual.md for {len(missing)} student(s), left out: {names}",
            file=sys.stderr,
        )
    return 0
