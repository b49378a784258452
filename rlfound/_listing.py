"""Listings of library functions as the book shows them: the code with a trimmed docstring.

The one implementation behind the book's ``{listing}`` directive (``_ext/listing.py``) and the
class pack's notebooks (``rlfound.grading.distribution.classpack``), so that a page and its
notebook show the same code. A listing keeps a function's signature, the summary of its
docstring with its equation, and its code; the reference part of the docstring (Parameters,
Returns, Raises, References, Examples) lives on the function's API reference page.

The public path is not the file path: ``rlfound.diagnostics.report`` may be defined in
``rlfound/diagnostics/_report.py`` and re-exported by the package's ``__init__.py``
(``from ._report import report``). The reader follows such ``from ... import`` re-exports,
reading the files without importing them, to the file that defines the name.

The trimmed docstring is the summary line, and, when the extended summary has an equation (an
indented block), every paragraph up to that equation and the sentence that goes on after it
(a paragraph starting in lower case, up to its first full stop; a further equation if that
sentence leads to one). The "Book: ..." line is left out (the reader is in the book). Prose is
re-wrapped to :data:`PROSE_WIDTH` columns, so that no docstring line makes the listing scroll
sideways; equation lines are kept as written, their alignment matters. The decorators in
:data:`HIDDEN_DECORATORS` (the overflow guard every public function carries, the old keyword
names a renamed argument still accepts) are left out, unless the guard also checks named
inputs for the function (``inputs=``). So is a statement whose first line ends in
:data:`FAST_PATH` (a dispatch to a faster form of the same computation, with its body): the
listing shows the clear form.

The book also shows code that is not the library's: the reference solutions of its exercises,
on the worked-solution pages. They are not importable under one name everywhere (a checkout
holds them in ``solutions/`` next to ``rlfound/``; the teaching team's installation as the
package ``rlfound_instructor``), so the caller passes ``roots``, a mapping from a top-level
name to the folder it stands for: with ``roots={"solutions": folder}``, the object path
``solutions.gae_recursion.gae_recursive`` is read from ``folder/gae_recursion.py``, statically
as the library is. Two forms show such code as a solution page does: ``solution=True`` the
lines between the object's ``### BEGIN SOLUTION`` and ``### END SOLUTION`` markers (the
region a student's starter replaces), dedented; ``verbatim=True`` the whole object as written,
its decorators and docstring included, without the markers.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

#: Widest line of a listing, indentation included: what the book's code column holds at a
#: 1280-pixel window (77 characters of the theme's monospace font). The library's code is
#: formatted to it (``line-length`` in rlfound/ruff.toml) and the docstring prose a listing
#: shows is re-wrapped to it.
PROSE_WIDTH = 77
#: A numpydoc section starts with its name over a line of dashes.
SECTION = re.compile(r"^[A-Z][A-Za-z ]*\n-{3,}$", re.MULTILINE)
SENTENCE_END = re.compile(r"(?<=[.])\s+(?=[A-Z])")
#: The lines that open and close the solution region of a reference solution (the
#: nbgrader-style markers where the grader's starters cut, rlfound.grading.authoring.starter,
#: which reads them from here; ``indent`` is the region's indentation).
BEGIN_SOLUTION = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*$")
END_SOLUTION = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")


class ListingError(ValueError):
    """An object path that names no public top-level function or class of a module file."""


class Listing(NamedTuple):
    """What a listing shows: ``code`` is the source text with the trimmed docstring."""

    module: str
    name: str
    path: Path
    code: str
    first_line: int
    kind: str  # the Python domain's role: "func" or "class"

    @property
    def qualified_name(self) -> str:
        return f"{self.module}.{self.name}"


def module_file(
    module: str, roots: Mapping[str, Path] | None = None
) -> Path:
    """The source file of a module, found without importing it.

    A module whose top-level name is a key of ``roots`` is a file or package under that
    folder (see the module docstring); any other is found on the import path.
    """
    top, _, rest = module.partition(".")
    if roots and top in roots:
        parts = rest.split(".") if rest else []
        if not all(part.isidentifier() for part in parts):
            raise ListingError(f"{module!r} is not a dotted module name")
        folder = Path(roots[top]).joinpath(*parts[:-1])
        found = (
            _submodule_file(folder, parts[-1])
            if parts
            else folder / "__init__.py"
        )
        if found is None or not found.is_file():
            raise ListingError(f"no module {module!r} in {roots[top]}")
        return found
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as error:
        raise ListingError(f"no module {module!r}: {error}") from error
    if spec is None:
        raise ListingError(f"no module {module!r}")
    if spec.origin is None or not spec.origin.endswith(".py"):
        raise ListingError(f"no Python source file for module {module!r}")
    return Path(spec.origin)


def split_object_path(object_path: str) -> tuple[str, str]:
    module, _, name = object_path.rpartition(".")
    if not module or not name.isidentifier():
        raise ListingError(
            f"{object_path!r} is not of the form package.module.function"
        )
    if name.startswith("_"):
        raise ListingError(
            f"{object_path!r} is private; a listing shows public functions"
        )
    return module, name


def find_definition(
    tree: ast.Module | ast.ClassDef, name: str
) -> ast.FunctionDef | ast.ClassDef | None:
    """The first function or class ``name`` defined directly in a module's or a class's body."""
    for node in tree.body:
        if isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            if node.name == name:
                return node
    return None


def _is_equation(paragraph: str) -> bool:
    return all(line.startswith(" ") for line in paragraph.splitlines())


def trim_docstring(docstring: str) -> list[str]:
    """The paragraphs a listing keeps of a cleaned docstring (see the module docstring)."""
    head = SECTION.split(docstring, maxsplit=1)[0]
    paragraphs = [
        part.strip("\n")
        for part in re.split(r"\n\s*\n", head)
        if part.strip()
    ]
    paragraphs = [
        part for part in paragraphs if not part.startswith("Book:")
    ]
    if not paragraphs:
        return []
    first_equation = next(
        (
            index
            for index, part in enumerate(paragraphs)
            if _is_equation(part)
        ),
        None,
    )
    if first_equation is None:
        return paragraphs[:1]
    kept = paragraphs[: first_equation + 1]
    rest = paragraphs[first_equation + 1 :]
    while rest and rest[0][:1].islower():
        # The sentence around the equation goes on: keep it to its end, and go on to a
        # further equation only if the paragraph was nothing more than that sentence.
        sentences = SENTENCE_END.split(rest[0], maxsplit=1)
        kept.append(sentences[0])
        rest = rest[1:]
        if len(sentences) > 1 or not rest or not _is_equation(rest[0]):
            break
        kept.append(rest[0])
        rest = rest[1:]
    return kept


def format_docstring(paragraphs: list[str], indent: str) -> list[str]:
    """A triple-quoted docstring of ``paragraphs`` at ``indent``, prose re-wrapped."""
    lines: list[str] = []
    for index, part in enumerate(paragraphs):
        if index:
            lines.append("")
        if _is_equation(part):
            lines.extend(
                f"{indent}{line}".rstrip() for line in part.splitlines()
            )
            continue
        opening = '"""' if index == 0 else ""
        lines.extend(
            textwrap.wrap(
                " ".join(part.split()),
                width=PROSE_WIDTH,
                initial_indent=indent + opening,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    if len(paragraphs) == 1 and len(lines[-1]) + 3 <= PROSE_WIDTH:
        lines[-1] += '"""'
    else:
        lines.append(f'{indent}"""')
    return lines


#: Decorators a listing leaves out: the same guard on every public function (it turns an
#: overflow into a ValueError naming the quantity), which the API reference documents once,
#: and the old keyword a renamed argument still accepts for one release (the docstring says
#: so; the mathematics does not change).
HIDDEN_DECORATORS = frozenset({"finite_output", "renamed_keywords"})


#: The comment that marks a statement a listing leaves out: the call of a fast form.
FAST_PATH = "# fast path"


def _fast_path_lines(node: ast.AST, lines: list[str]) -> set[int]:
    """The line numbers (from 1) of the statements in ``node`` marked with :data:`FAST_PATH`."""
    return {
        number
        for statement in ast.walk(node)
        if isinstance(statement, ast.stmt)
        and lines[statement.lineno - 1].rstrip().endswith(FAST_PATH)
        for number in range(statement.lineno, statement.end_lineno + 1)
    }


def _is_hidden(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = (
        target.attr
        if isinstance(target, ast.Attribute)
        else getattr(target, "id", None)
    )
    # A guard told to check some inputs for the function is part of what the function does.
    checks_inputs = isinstance(decorator, ast.Call) and any(
        keyword.arg == "inputs" for keyword in decorator.keywords
    )
    return name in HIDDEN_DECORATORS and not checks_inputs


def _submodule_file(package_dir: Path, name: str) -> Path | None:
    """The file of the module ``name`` inside the package folder ``package_dir``, if any."""
    for candidate in (
        package_dir / f"{name}.py",
        package_dir / name / "__init__.py",
    ):
        if candidate.is_file():
            return candidate
    return None


def _imported_from(
    statement: ast.ImportFrom, module: str, path: Path
) -> tuple[str, Path | None]:
    """The module a ``from ... import`` statement of ``module`` (file ``path``) reads from.

    A relative import is resolved through the file system, next to ``path``, so that
    following a package's re-exports imports nothing; an absolute one is found on the path.
    """
    if not statement.level:
        return statement.module, None
    # The package a relative import starts from: the module itself for an __init__.py.
    parts = (
        module.split(".")
        if path.name == "__init__.py"
        else module.split(".")[:-1]
    )
    folder = path.parent
    for _ in range(statement.level - 1):
        parts, folder = parts[:-1], folder.parent
    tail = statement.module.split(".") if statement.module else []
    for part in tail[:-1]:
        folder = folder / part
    target = (
        _submodule_file(folder, tail[-1]) if tail else folder / "__init__.py"
    )
    name = ".".join([*parts, *tail])
    if target is None or not target.is_file():
        raise ListingError(
            f"{module} imports from {name!r}, which has no source file"
        )
    return name, target


def _reexport(
    tree: ast.Module, name: str
) -> tuple[ast.ImportFrom, str] | None:
    """The top-level ``from ... import`` that binds ``name``, with the name it imports."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return node, alias.name
    return None


def find_source(
    module: str, name: str, roots: Mapping[str, Path] | None = None
) -> tuple[str, Path, str, ast.FunctionDef | ast.ClassDef]:
    """The module, file, source text and node that define ``module.name``, statically.

    A name the module does not define but re-exports (``from ._report import report``, or
    ``from ._report import (report, summary)``) is looked up in the module it comes from, and
    so on along a chain of re-exports. ``roots`` is as for :func:`module_file`.

    Raises
    ------
    ListingError
        When no module along the chain defines the name as a top-level function or class, or
        when the re-exports go round in a circle.
    """
    path = module_file(module, roots)
    chain: list[str] = []
    visited: set[tuple[str, str]] = set()
    while True:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        node = find_definition(tree, name)
        if node is not None:
            return module, path, source, node
        found = _reexport(tree, name)
        if found is None:
            via = f" (re-exported by {', '.join(chain)})" if chain else ""
            raise ListingError(
                f"{module}{via} defines no top-level function or class {name!r}"
            )
        visited.add((module, name))
        chain.append(module)
        statement, name = found
        module, target = _imported_from(statement, module, path)
        if (module, name) in visited:
            chain.append(module)
            raise ListingError(
                f"the re-exports of {name!r} go round: {' -> '.join(chain)}"
            )
        path = target if target is not None else module_file(module, roots)


def _trimmed(
    lines: list[str], node: ast.FunctionDef | ast.ClassDef
) -> tuple[list[str], int]:
    """The lines of the listing of ``node``, docstring trimmed and guards left out, and
    the number of its first line in the file."""
    shown_decorators = [d for d in node.decorator_list if not _is_hidden(d)]
    decorators = [
        lines[d.lineno - 1 : d.end_lineno] for d in shown_decorators
    ]
    first = node.lineno
    body_first = node.body[0]
    docstring = ast.get_docstring(node, clean=False)
    if docstring is None:
        shown = lines[first - 1 : node.end_lineno]
    else:
        indent = re.match(r"\s*", lines[body_first.lineno - 1]).group()
        trimmed = format_docstring(
            trim_docstring(inspect.cleandoc(docstring)), indent
        )
        hidden = _fast_path_lines(node, lines)
        after = [
            lines[number - 1]
            for number in range(
                body_first.end_lineno + 1, node.end_lineno + 1
            )
            if number not in hidden
        ]
        shown = [*lines[first - 1 : body_first.lineno - 1], *trimmed, *after]
    shown = [line for decorator in decorators for line in decorator] + shown
    return shown, min([first, *(d.lineno for d in shown_decorators)])


def _extent(lines: list[str], node: ast.AST) -> int:
    """The number of the last line that belongs to ``node``'s block: its last statement,
    and the comments indented under it that follow (the AST ends at the statement)."""
    column = _indentation(lines[node.lineno - 1])
    last = node.end_lineno
    for number in range(node.end_lineno + 1, len(lines) + 1):
        line = lines[number - 1]
        if line.strip():
            if _indentation(line) <= column:
                break
            last = number
    return last


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def _solution_region(
    lines: list[str], node: ast.AST, qualified_name: str
) -> tuple[list[str], int]:
    """The dedented lines between the one solution region's markers inside ``node``, and
    the number of the first of them."""
    numbers = range(node.lineno, _extent(lines, node) + 1)
    begins = [n for n in numbers if BEGIN_SOLUTION.match(lines[n - 1])]
    if len(begins) != 1:
        raise ListingError(
            f"{qualified_name} has {len(begins)} '### BEGIN SOLUTION' "
            "lines; a solution listing shows exactly one region"
        )
    ends = [
        n
        for n in numbers
        if n > begins[0] and END_SOLUTION.match(lines[n - 1])
    ]
    if not ends:
        raise ListingError(
            f"{qualified_name}: the '### BEGIN SOLUTION' of line {begins[0]} "
            "has no '### END SOLUTION'"
        )
    region = lines[begins[0] : ends[0] - 1]
    if not any(line.strip() for line in region):
        raise ListingError(f"{qualified_name}: its solution region is empty")
    return textwrap.dedent("\n".join(region)).split("\n"), begins[0] + 1


def read_listing(
    object_path: str,
    roots: Mapping[str, Path] | None = None,
    *,
    solution: bool = False,
    verbatim: bool = False,
) -> Listing:
    """Read a public function or class from the file that defines it, its docstring trimmed.

    ``object_path`` is the public path (``rlfound.module.function``); the file may be a private
    one that the module re-exports the function from (see :func:`find_source`). ``roots``
    maps top-level names to folders (``{"solutions": folder}``); ``solution`` shows only the
    object's solution region, ``verbatim`` the whole object as written (module docstring).

    Raises
    ------
    ListingError
        If the object cannot be found, both ``solution`` and ``verbatim`` are asked for, or
        (with ``solution``) the object has no single, closed, non-empty solution region.
    """
    module, name = split_object_path(object_path)
    if solution and verbatim:
        raise ListingError(
            f"{object_path}: a listing shows the solution region or the "
            "whole object (verbatim), not both"
        )
    _, path, source, node = find_source(module, name, roots)
    lines = source.splitlines()
    if verbatim:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        # The markers are the grader's (where a starter cuts), not the solution's: a
        # reader of the whole object does not need them (ast ends the object at its last
        # statement, so an end marker after it would be missing anyway).
        shown = [
            line
            for line in lines[first - 1 : node.end_lineno]
            if not (BEGIN_SOLUTION.match(line) or END_SOLUTION.match(line))
        ]
    elif solution:
        shown, first = _solution_region(lines, node, object_path)
    else:
        shown, first = _trimmed(lines, node)
    kind = "class" if isinstance(node, ast.ClassDef) else "func"
    return Listing(module, name, path, "\n".join(shown) + "\n", first, kind)
