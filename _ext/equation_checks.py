"""Which test checks which numbered equation of the book, read from the tests' source.

A test that computes both sides of a labeled equation on concrete numbers carries the pytest
marker ``@pytest.mark.equation("eq-...", ...)`` (on the function, on its class, or as a
module's ``pytestmark``). :func:`checked_equations` finds those markers by reading the files
under ``tests/`` as syntax trees, without importing or running anything, so the same index
serves ``tests/chapters/test_equations.py`` (every labeled equation is checked or declared a
definition) and the book.

Loaded by Sphinx (``_config.yml`` lists it as a local extension), it adds the role
``{checked}`eq-gae eq-gae-recursion```, which renders as a small note naming the tests that check
the equations. A label that no test marks is a build warning, hence an error in the strict build.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[1]
MARKER = "equation"
# Holds only a stylesheet: Jupyter Book 1 injects every .js file under the static paths.
STATIC = Path(__file__).resolve().parent / "equation_checks_static"
# A labeled display equation in MyST: ``$$ ... $$ (eq-name)``, the closing ``$$`` followed by
# its label on the same line. Also the ``:label:`` option of a ``{math}`` directive.
DOLLAR_LABEL = re.compile(r"^\$\$[ \t]*\((?P<label>[A-Za-z0-9_-]+)\)[ \t]*$", re.MULTILINE)
MATH_DIRECTIVE = re.compile(
    r"^(?:`{3,}|~{3,}|:{3,})\{math\}[^\n]*\n(?P<options>(?:[ \t]*:[^\n]*\n)*)", re.MULTILINE
)


def equation_labels(text: str) -> list[str]:
    """The labels of the numbered display equations in one MyST Markdown source, in order."""
    found = [(match.start(), match["label"]) for match in DOLLAR_LABEL.finditer(text)]
    for match in MATH_DIRECTIVE.finditer(text):
        for line in match["options"].splitlines():
            key, _, value = line.strip()[1:].partition(":")
            if key.strip() == "label":
                found.append((match.start(), value.strip()))
    return [label for _, label in sorted(found)]


#: A labeled display equation with its body: the opening ``$$`` (alone or followed by the
#: first line of the body) up to the closing ``$$ (label)``; or a ``{math}`` directive's body,
#: after its options, up to its closing fence.
DOLLAR_EQUATION = re.compile(
    r"^\$\$(?P<body>(?:(?!\$\$).)*?)^\$\$[ \t]*\((?P<label>[A-Za-z0-9_-]+)\)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
MATH_DIRECTIVE_BODY = re.compile(
    r"^(?P<fence>`{3,}|~{3,}|:{3,})\{math\}[^\n]*\n(?P<options>(?:[ \t]*:[^\n]*\n)*)"
    r"(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def equation_latex(text: str) -> dict[str, str]:
    """The LaTeX of each labeled display equation of one MyST source, by label, in order.

    The body as the source writes it, stripped of the blank space around it: what the
    book typesets under that label (the API reference shows it again, _ext/api_reference.py).
    """
    found = [
        (match.start(), match["label"], match["body"]) for match in DOLLAR_EQUATION.finditer(text)
    ]
    for match in MATH_DIRECTIVE_BODY.finditer(text):
        for line in match["options"].splitlines():
            key, _, value = line.strip()[1:].partition(":")
            if key.strip() == "label":
                found.append((match.start(), value.strip(), match["body"]))
    return {label: body.strip() for _, label, body in sorted(found)}


def book_sources(root: Path = ROOT) -> list[Path]:
    """The Markdown sources whose labeled equations the rule covers."""
    return [
        *sorted((root / "chapters").glob("[0-9][0-9]_*.md")),
        *sorted((root / "solutions").glob("[0-9][0-9]_*.md")),
        *(root / name for name in ("intro.md", "notation.md") if (root / name).is_file()),
    ]


def book_equations(root: Path = ROOT) -> dict[str, Path]:
    """Every labeled equation of the book and the source that holds it."""
    return {
        label: path
        for path in book_sources(root)
        for label in equation_labels(path.read_text(encoding="utf-8"))
    }


def book_equation_latex(root: Path = ROOT) -> dict[str, str]:
    """The LaTeX of every labeled equation of the book, by label."""
    return {
        label: latex
        for path in book_sources(root)
        for label, latex in equation_latex(path.read_text(encoding="utf-8")).items()
    }


def _is_equation_marker(node: ast.expr) -> bool:
    """True for ``pytest.mark.equation(...)`` (and ``mark.equation(...)``)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == MARKER
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "mark"
    )


def _marker_labels(node: ast.expr, where: str) -> list[str]:
    """The labels named by the markers in a decorator or a ``pytestmark`` value."""
    calls = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    labels = []
    for call in calls:
        if not _is_equation_marker(call):
            continue
        if call.keywords or not call.args:
            raise ValueError(f"{where}: pytest.mark.equation takes labels as positional strings")
        for argument in call.args:
            if not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
                raise ValueError(f"{where}: pytest.mark.equation takes literal label strings")
            labels.append(argument.value)
    return labels


def _marked_tests(tree: ast.Module, prefix: str) -> list[tuple[str, str]]:
    """(label, test id) pairs of one test module."""
    found = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark"
            for target in statement.targets
        ):
            found += [(label, prefix) for label in _marker_labels(statement.value, prefix)]
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            node_id = f"{prefix}::{statement.name}"
            for decorator in statement.decorator_list:
                found += [(label, node_id) for label in _marker_labels(decorator, node_id)]
            for member in statement.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    member_id = f"{node_id}::{member.name}"
                    for decorator in member.decorator_list:
                        found += [
                            (label, member_id) for label in _marker_labels(decorator, member_id)
                        ]
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node_id = f"{prefix}::{statement.name}"
            for decorator in statement.decorator_list:
                found += [(label, node_id) for label in _marker_labels(decorator, node_id)]
    return found


def checked_equations(root: Path = ROOT) -> dict[str, list[str]]:
    """Every label named by a ``pytest.mark.equation`` marker, with the ids of its tests.

    Test ids are pytest's, relative to ``root``: ``tests/test_x.py::test_y`` (with the class
    when the test is a method; the bare file for a module-wide ``pytestmark``).
    """
    index: dict[str, list[str]] = {}
    for path in sorted((root / "tests").rglob("*.py")):
        prefix = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for label, node_id in _marked_tests(tree, prefix):
            index.setdefault(label, [])
            if node_id not in index[label]:
                index[label].append(node_id)
    return index


# One static scan of the tests per book source folder and build process.
_INDEX_BY_SOURCE: dict[Path, dict[str, list[str]]] = {}


def _checked_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{checked}`eq-a eq-b```: a small note naming the tests that check these equations.

    The note shows the first test and counts the others; the full list is its tooltip.
    """
    srcdir = Path(inliner.document.settings.env.srcdir)
    if srcdir not in _INDEX_BY_SOURCE:
        _INDEX_BY_SOURCE[srcdir] = checked_equations(srcdir)
    index = _INDEX_BY_SOURCE[srcdir]
    labels = text.replace(",", " ").split()
    unchecked = [label for label in labels if not index.get(label)]
    if not labels or unchecked:
        message = inliner.reporter.warning(
            f"{{checked}} names {', '.join(unchecked) or 'no label'}: every label it names "
            "must be an equation that a test marks with pytest.mark.equation",
            line=lineno,
        )
        problem = inliner.problematic(rawtext, rawtext, message)
        return [problem], [message]
    tests = list(dict.fromkeys(test for label in labels for test in index[label]))
    note = nodes.inline(rawtext, "", classes=["equation-check"])
    note += nodes.Text("checked by ")
    note += nodes.literal(tests[0], tests[0])
    if len(tests) > 1:
        others = f"{len(tests) - 1} more test" + ("s" if len(tests) > 2 else "")
        note += nodes.Text(" and ")
        note += nodes.abbreviation(others, others, explanation="; ".join(tests[1:]))
    return [note], []


def _add_stylesheet(app, config):
    config.html_static_path.append(str(STATIC))


def setup(app):
    app.add_role("checked", _checked_role)
    app.connect("config-inited", _add_stylesheet)
    app.add_css_file("equation_checks.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
