"""The chapters show the library and never replace it.

Executing the notebooks is the book build's job (tests/book/test_book.py executes each one once,
in a fresh kernel, from its own folder). These checks read the sources only:

- a chapter never redefines a library function (it imports and calls it);
- a library function is shown with ``{listing} rlfound.module.function`` (``_ext/listing.py``),
  which names a public function of a module of ``rlfound.__all__``; the listing is that
  function's code, its docstring trimmed to the summary and equation;
- a reference solution is shown with ``{listing} solutions.file.function`` and ``:solution:``
  (its solution region) or ``:verbatim:`` (the whole function), read by the same reader as the
  library's listings, and shows the lines of the file a plain slice of its text gives; no page
  uses ``literalinclude``;
- every "Book: equation (eq-...), chapter N" line in a library docstring names a label that
  exists in chapter N, so the reader of a docstring can find its derivation.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
from bs4 import BeautifulSoup

import rlfound
from rlfound._listing import FAST_PATH
from tests._book import ROOT, library_listings, notebook_documents, solution_listings, toc_documents
from tests._solutions import load_module

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, published separately before Python 3.11
    import tomli as tomllib

NOTEBOOKS = notebook_documents()
LIBRARY = ROOT / "rlfound"
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
SOLUTION_PAGES = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.md"))
#: The book's ``listing_roots`` (_ext/listing.py), as folders of this checkout.
ROOTS = {"solutions": ROOT / "solutions"}
BOOK_LINE = re.compile(r"Book: equations? (?P<labels>.+?), chapter (?P<chapter>\d+)\.")


#: The ``{listing}`` directive, loaded as Sphinx loads it.
listing = load_module(ROOT / "_ext" / "listing.py", "_listing")


def library_modules() -> list[Path]:
    """The library's modules, without the grader (its exercise specifications are not shown)."""
    return [
        path
        for path in sorted(LIBRARY.rglob("*.py"))
        if not {"grading", "cli"} & set(path.relative_to(LIBRARY).parts)
    ]


def top_level_functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def code_cell_sources(path: Path) -> list[str]:
    notebook = jupytext.read(path)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_toc_has_notebooks():
    assert any(path.parent.name == "chapters" for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_notebook_does_not_redefine_library_functions(path: Path):
    library = {name for module in library_modules() for name in top_level_functions(module)}
    defined = set()
    for source in code_cell_sources(path):
        # IPython magics are not Python; they cannot define functions either.
        python = "\n".join(
            line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        tree = ast.parse(python)
        defined.update(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
    assert not defined & library, f"{path.name} redefines library functions"


def test_no_page_shows_code_with_literalinclude():
    # Code is shown through one reader, {listing}; the class pack has no plain form for a
    # literalinclude (tests/book/test_notebook_conversion.py).
    pages = [ROOT / f"{document}.md" for document in toc_documents()]
    assert not [p.name for p in pages if "{literalinclude}" in p.read_text(encoding="utf-8")]


def test_every_solution_page_lists_reference_code():
    assert SOLUTION_PAGES
    assert not [page.name for page in SOLUTION_PAGES if not solution_listings(page)]


def sliced(source: str, name: str, *, solution: bool) -> str:
    """The lines of the top-level function ``name`` of ``source``, cut from the text alone:
    from its ``def`` line (and the decorators above it) to its last line of code (the comments
    after it belong to no statement: Sphinx's ``:pyobject:``, which the pages used, left them
    out too), without the SOLUTION markers, or, with ``solution``, the lines between its BEGIN
    and END SOLUTION markers with the marker's indentation taken off."""
    lines = source.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"def {name}(")))
    stop = next(
        (n for n in range(start + 1, len(lines)) if lines[n][:1] not in ("", " ")), len(lines)
    )
    while start and lines[start - 1].startswith("@"):
        start -= 1
    block = lines[start:stop]
    if not solution:
        while block[-1].strip()[:1] in ("", "#"):
            block.pop()
        markers = ("### BEGIN SOLUTION", "### END SOLUTION")
        return "\n".join(line for line in block if line.strip() not in markers)
    stripped = [line.strip() for line in block]
    begin, end = stripped.index("### BEGIN SOLUTION"), stripped.index("### END SOLUTION")
    indent = block[begin][: block[begin].index("#")]
    assert all(line.startswith(indent) or not line for line in block[begin:end]), name
    return "\n".join(line[len(indent) :] for line in block[begin + 1 : end])


@pytest.mark.parametrize(
    ("object_path", "options"),
    [listed for page in SOLUTION_PAGES for listed in solution_listings(page)],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_solution_listing_shows_the_lines_of_the_solution_file(object_path, options):
    """Every solution listing reads, and shows the slice of its file that the page means."""
    forms = {"solution", "verbatim"} & set(options)
    assert len(forms) == 1, f"{object_path}: say :solution: or :verbatim:, got {options}"
    assert set(options) <= {"solution", "verbatim", "caption"}, object_path
    _, module, name = object_path.split(".")
    shown = listing.read_listing(object_path, ROOTS, **{form: True for form in forms})
    path = ROOT / "solutions" / f"{module}.py"
    assert shown.path == path
    expected = sliced(path.read_text(encoding="utf-8"), name, solution="solution" in forms)
    assert shown.code == expected + "\n"


SOLUTION_FILE = """raise RuntimeError("imported")


def double(x):
    \"\"\"Twice x.

    Parameters
    ----------
    x : float
    \"\"\"
    ### BEGIN SOLUTION
    if x is None:
        raise ValueError("x")

    return 2 * x
    ### END SOLUTION


@staticmethod
def provided(y):
    \"\"\"Given.\"\"\"
    return y
"""


def test_a_solution_listing_reads_its_root_folder_without_importing(tmp_path):
    folder = tmp_path / "reference"
    _write_package(
        folder,
        {
            "one.py": SOLUTION_FILE,
            "part/__init__.py": "from solutions.one import double\n",
        },
    )
    roots = {"solutions": folder}
    shown = listing.read_listing("solutions.one.double", roots, solution=True)
    assert shown.code == 'if x is None:\n    raise ValueError("x")\n\nreturn 2 * x\n'
    assert (shown.path, shown.first_line, shown.kind) == (folder / "one.py", 12, "func")
    whole = listing.read_listing("solutions.one.provided", roots, verbatim=True)
    assert whole.code == '@staticmethod\ndef provided(y):\n    """Given."""\n    return y\n'
    assert whole.first_line == 19
    # An absolute re-export inside the folder is followed through the same roots.
    again = listing.read_listing("solutions.part.double", roots, solution=True)
    assert again.code == shown.code and again.path == folder / "one.py"
    # Without the verbatim or solution form, the docstring is trimmed as the library's is.
    trimmed = listing.read_listing("solutions.one.double", roots).code
    assert trimmed.startswith('def double(x):\n    """Twice x."""\n    ### BEGIN SOLUTION\n')
    assert "solutions" not in sys.modules and "one" not in sys.modules


REGIONS = {
    "none": "def f(x):\n    return x\n",
    "two": "def f(x):\n    ### BEGIN SOLUTION\n    y = x\n    ### END SOLUTION\n"
    "    ### BEGIN SOLUTION\n    return y\n    ### END SOLUTION\n",
    # The END marker below belongs to the next function.
    "open": "def f(x):\n    ### BEGIN SOLUTION\n    return x\n\n\n"
    "def g(x):\n    return x\n    ### END SOLUTION\n",
    "empty": "def f(x):\n    ### BEGIN SOLUTION\n\n    ### END SOLUTION\n    return x\n",
}


@pytest.mark.parametrize(
    ("object_path", "source", "forms", "message"),
    [
        (
            "solutions.mod.f",
            REGIONS["none"],
            {"solution": True},
            "solutions.mod.f has 0 '### BEGIN SOLUTION' lines; a solution listing shows "
            "exactly one region",
        ),
        (
            "solutions.mod.f",
            REGIONS["two"],
            {"solution": True},
            "solutions.mod.f has 2 '### BEGIN SOLUTION' lines; a solution listing shows "
            "exactly one region",
        ),
        (
            "solutions.mod.f",
            REGIONS["open"],
            {"solution": True},
            "solutions.mod.f: the '### BEGIN SOLUTION' of line 2 has no '### END SOLUTION'",
        ),
        (
            "solutions.mod.f",
            REGIONS["empty"],
            {"solution": True},
            "solutions.mod.f: its solution region is empty",
        ),
        (
            "solutions.mod.f",
            REGIONS["none"],
            {"solution": True, "verbatim": True},
            "solutions.mod.f: a listing shows the solution region or the whole object "
            "(verbatim), not both",
        ),
        ("solutions.nothing.f", REGIONS["none"], {}, "no module 'solutions.nothing' in {root}"),
        ("solutions..mod.f", REGIONS["none"], {}, "'solutions..mod' is not a dotted module name"),
    ],
    ids=[
        "no region",
        "two regions",
        "open region",
        "empty region",
        "both forms",
        "no file",
        "bad path",
    ],
)
def test_a_solution_listing_that_cannot_be_shown_fails(
    tmp_path, object_path, source, forms, message
):
    (tmp_path / "mod.py").write_text(source, encoding="utf-8")
    with pytest.raises(listing.ListingError) as raised:
        listing.read_listing(object_path, {"solutions": tmp_path}, **forms)
    assert str(raised.value) == message.format(root=tmp_path)


def test_the_chapters_show_library_functions():
    assert sum(len(library_listings(path)) for path in NOTEBOOKS) >= 100


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_listings_show_public_library_functions(path: Path):
    for object_path in library_listings(path):
        module_name, _, name = object_path.rpartition(".")
        package, _, module_short = module_name.partition(".")
        assert package == "rlfound" and module_short in rlfound.__all__, (
            f"{path.name}: {object_path} is not in a module of rlfound.__all__"
        )
        module = importlib.import_module(module_name)
        assert name in module.__all__, f"{path.name}: {object_path} is not public"
        assert not name.startswith("_"), f"{path.name} shows the private helper {object_path}"
        # The function may live in a private file of a package that re-exports it.
        defined_in = Path(inspect.getsourcefile(inspect.unwrap(getattr(module, name))))
        assert name in top_level_functions(defined_in), (
            f"{path.name}: {object_path} is not a function defined in {defined_in.name}"
        )


def _function(code: str, name: str) -> ast.FunctionDef:
    return next(
        node
        for node in ast.parse(code).body
        if isinstance(node, ast.FunctionDef) and node.name == name
    )


@pytest.mark.parametrize(
    "object_path",
    sorted({object_path for path in NOTEBOOKS for object_path in library_listings(path)}),
)
def test_a_listing_is_the_library_code_with_a_short_docstring(object_path: str):
    """The listing's code is the function's own code; its docstring is the summary only."""
    module_name, _, name = object_path.rpartition(".")
    shown = listing.read_listing(object_path)
    # The reader finds the file without importing; the import says where the function is.
    imported = inspect.unwrap(getattr(importlib.import_module(module_name), name))
    defined_in = Path(inspect.getsourcefile(imported))
    assert shown.path == defined_in, object_path
    source = _function(defined_in.read_text(encoding="utf-8"), name)
    function = _function(shown.code, name)
    # Signature, decorators and every statement after the docstring are those of the source.
    assert ast.dump(function.args) == ast.dump(source.args)
    assert ast.dump(function.returns) == ast.dump(source.returns)
    # (but the statement marked as the fast path, which the listing leaves out).
    source_lines = defined_in.read_text(encoding="utf-8").splitlines()
    shown_body = [
        node
        for node in source.body[1:]
        if not source_lines[node.lineno - 1].rstrip().endswith(FAST_PATH)
    ]
    assert [ast.dump(node) for node in function.body[1:]] == [ast.dump(node) for node in shown_body]
    docstring = ast.get_docstring(function)
    assert docstring.splitlines()[0].split()[:3] == ast.get_docstring(source).split()[:3]
    for section in ("Parameters", "Returns", "Raises", "References", "Examples", "Book:"):
        assert section not in docstring, f"{object_path}: the listing shows {section}"
    assert ">>>" not in docstring
    # Prose is wrapped for the page; only an equation line may be as long as the source's.
    for line in shown.code.split('"""')[1].splitlines():
        equation = line.startswith(" " * 8)
        assert equation or len(line) <= listing.PROSE_WIDTH, f"{object_path}: {line!r}"
    # And no line of the listing, code, comment or equation, is wider than the book's column.
    wide = [line for line in shown.code.splitlines() if len(line) > listing.PROSE_WIDTH]
    assert not wide, f"{object_path}: lines wider than {listing.PROSE_WIDTH} columns: {wide}"


def test_the_library_is_formatted_at_the_listing_width():
    """ruff formats the listed library at the width a listing wraps its prose to."""
    settings = tomllib.loads((ROOT / "rlfound" / "ruff.toml").read_text(encoding="utf-8"))
    assert settings["line-length"] == listing.PROSE_WIDTH
    # The grader, never listed, keeps the project's width.
    grader = tomllib.loads((ROOT / "rlfound" / "grading" / "ruff.toml").read_text("utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "line-length" not in grader
    assert project["tool"]["ruff"]["line-length"] == 100


def test_a_listing_keeps_the_summary_and_its_equation():
    shown = listing.read_listing("rlfound.returns.discounted_cumsum")
    assert shown.code.startswith(
        "def discounted_cumsum(\n    terms: ArrayLike,\n    discounts: ArrayLike,\n    *,"
    )
    docstring = ast.get_docstring(_function(shown.code, "discounted_cumsum"))
    assert docstring.startswith("Discounted sums from every step to the end: the backward scan.")
    # The equation, as written in the source, and the sentence it belongs to, to its full stop.
    assert "\n    y_t = x_t + c_t y_{t+1},    y_T = 0,\n" in docstring
    assert docstring.endswith("so that y_t = Σ_{k>=t} (Π_{t<=j<k} c_j) x_k.")
    assert "for t in reversed(range(terms.shape[-1])):" in shown.code
    assert shown.code.rstrip().endswith("return np.moveaxis(sums, -1, axis)")


def listing_of(tmp_path, monkeypatch, module, source, name):
    """The listing of ``name`` in a module ``module`` of ``source``, written to ``tmp_path``."""
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return listing.read_listing(f"{module}.{name}")


def test_a_listing_leaves_out_the_statement_marked_as_the_fast_path(tmp_path, monkeypatch):
    source = (
        'def total(x, method="auto"):\n'
        '    """The total of x."""\n'
        '    if method == "fast":  # fast path\n'
        "        return sum(x)\n"
        "    result = 0\n"
        "    for value in x:  # the clear form\n"
        "        result += value\n"
        "    return result\n"
    )
    shown = listing_of(tmp_path, monkeypatch, "fast_module", source, "total")
    assert shown.code == (
        'def total(x, method="auto"):\n    """The total of x."""\n    result = 0\n'
        "    for value in x:  # the clear form\n        result += value\n    return result\n"
    )
    library = listing.read_listing("rlfound.advantages.packed_gae").code
    assert "_scan.scan" not in library and "# fast path" not in library
    assert 'return discounted_cumsum(deltas, discounts, axis=axis, method="loop")' in library


def test_a_listing_leaves_out_the_overflow_guard_but_keeps_other_decorators(tmp_path, monkeypatch):
    source = (
        "from functools import cache\n"
        "from rlfound._validation import finite_output\n\n\n"
        '@finite_output()\n@cache\ndef twice(x):\n    """Twice x."""\n    return 2 * x\n'
    )
    shown = listing_of(tmp_path, monkeypatch, "listed_module", source, "twice")
    assert shown.code == '@cache\ndef twice(x):\n    """Twice x."""\n    return 2 * x\n'
    assert shown.first_line == 6
    library = listing.read_listing("rlfound.returns.discounted_returns")
    assert "finite_output" not in library.code
    assert "@finite_output()\ndef discounted_returns(" in library.path.read_text(encoding="utf-8")


def test_a_listing_keeps_the_guard_when_it_checks_inputs_for_the_function():
    # packed_gae converts its arrays without the finiteness check and leaves that to its
    # guard, so the reader must see the guard to know the inputs are checked at all.
    shown = listing.read_listing("rlfound.advantages.packed_gae")
    assert shown.code.startswith(
        '@finite_output(inputs=("rewards", "values", "next_values"))\ndef packed_gae('
    )
    assert "check_finite=False" in shown.code


def test_a_listing_without_an_equation_keeps_the_summary_line():
    paragraphs = listing.trim_docstring(
        "Say what it does.\n\nMore detail.\n\nParameters\n----------\nx : float\n    A number.\n"
    )
    assert paragraphs == ["Say what it does."]


@pytest.mark.parametrize(
    ("object_path", "message"),
    [
        ("rlfound.returns.no_such_function", "defines no top-level function or class"),
        ("rlfound.no_such_module.discounted_returns", "no module"),
        ("rlfound.returns._private_helper", "is private"),
        ("discounted_returns", "is not of the form"),
    ],
)
def test_a_listing_of_an_unknown_object_fails(object_path: str, message: str):
    with pytest.raises(listing.ListingError, match=message):
        listing.read_listing(object_path)


def _validation_names(path: Path) -> set[str]:
    """The names a library file imports from ``rlfound._validation`` (the private module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("rlfound._validation")
        for alias in node.names
    }


def _called_name(node: ast.AST | None) -> str | None:
    """The name of the function a call calls (``f(...)`` or ``module.f(...)``), else None."""
    if not isinstance(node, ast.Call):
        return None
    function = node.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def listed_body(object_path: str) -> tuple[list[ast.stmt], list[str]]:
    """The statements after the docstring of a listed function, and their non-blank lines."""
    shown = listing.read_listing(object_path)
    node = _function(shown.code, shown.name) if shown.kind == "func" else None
    if node is None:
        return [], []
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    lines = shown.code.splitlines()[body[0].lineno - 1 :] if body else []
    return body, [line for line in lines if line.strip() and not line.strip().startswith("#")]


def is_only_a_delegation(body: list[ast.stmt], private: set[str]) -> bool:
    """Whether a body is input checks and then ``return helper(...)`` of a private helper.

    A check is a call of a ``check_*`` or ``as_*`` function or of a module's own ``_check_*``;
    a private helper is a name starting with ``_`` or one of ``private`` (the names of
    ``rlfound._validation`` the file imports).
    """

    def is_check(name: str | None) -> bool:
        return name is not None and name.lstrip("_").startswith(("check_", "as_"))

    rest = [
        statement
        for statement in body
        if not (
            isinstance(statement, (ast.Assign, ast.Expr))
            and is_check(_called_name(statement.value))
        )
    ]
    if len(rest) != 1 or not isinstance(rest[0], ast.Return):
        return False
    called = _called_name(rest[0].value)
    return called is not None and (called.startswith("_") or called in private)


def test_a_delegation_is_told_from_a_formula():
    private = {"check_reward_process", "solve_live_values"}
    delegations = [
        "x, m = _check_pair(x, m)\nreturn _masked_estimate('k1', x, m)",
        "p, r = check_reward_process(p, r)\nreturn solve_live_values(p, r)",
    ]
    formulas = [
        "x, m = _check_pair(x, m)\nreturn np.where(m, x, 0.0)",
        "x = check_finite(x)\ny = 2 * x\nreturn _helper(y)",
        "x = check_finite(x)\nreturn public_function(x)",
    ]
    for code in delegations:
        assert is_only_a_delegation(ast.parse(code).body, private), code
    for code in formulas:
        assert not is_only_a_delegation(ast.parse(code).body, private), code


def test_every_listing_shows_its_formula_not_only_a_call_to_a_private_helper():
    """A listing's body is more than input checks and a call to a private helper.

    Prints the body length (non-blank code lines after the docstring) of every listed
    function, longest first, so that a listing grown too long to read at a glance shows up.
    """
    listed = sorted({path for document in NOTEBOOKS for path in library_listings(document)})
    lengths, delegations = [], []
    for object_path in listed:
        body, lines = listed_body(object_path)
        private = _validation_names(listing.read_listing(object_path).path)
        if is_only_a_delegation(body, private):
            delegations.append(object_path)
        lengths.append((len(lines), object_path))
    print("\nlisting body lengths (code lines after the docstring), longest first:")
    for length, object_path in sorted(lengths, key=lambda item: (-item[0], item[1])):
        print(f"{length:5d}  {object_path}")
    assert not delegations, "listings that only call a private helper:\n" + "\n".join(delegations)


def _write_package(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")


def test_a_listing_follows_a_package_reexport_to_the_private_file(tmp_path, monkeypatch):
    _write_package(
        tmp_path,
        {
            "relisted/__init__.py": (
                '"""A package."""\n\nfrom ._one import one\n'
                "from ._pair import (\n    first,\n    second as later,\n)\n"
            ),
            "relisted/_one.py": 'import math\n\n\ndef one():\n    """One."""\n    return 1\n',
            "relisted/_pair.py": (
                'def first():\n    """First."""\n    return 1\n\n\n'
                'def second():\n    """Second."""\n    return 2\n'
            ),
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    shown = listing.read_listing("relisted.one")
    assert shown.path == tmp_path / "relisted" / "_one.py"
    assert shown.code == 'def one():\n    """One."""\n    return 1\n'
    assert (shown.first_line, shown.qualified_name) == (4, "relisted.one")
    # One name of a parenthesized import, and a name re-exported under another name.
    assert listing.read_listing("relisted.first").code.startswith("def first():")
    later = listing.read_listing("relisted.later")
    assert later.code.startswith("def second():") and later.qualified_name == "relisted.later"
    assert "relisted" not in sys.modules, "the reader imported the package"


def test_a_listing_follows_a_chain_of_two_reexports(tmp_path, monkeypatch):
    _write_package(
        tmp_path,
        {
            "chained/__init__.py": "from ._middle import deep\n",
            "chained/_middle.py": "from .inner._deep import deep\n",
            "chained/inner/__init__.py": "",
            "chained/inner/_deep.py": 'def deep(x):\n    """Deep."""\n    return x\n',
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    shown = listing.read_listing("chained.deep")
    assert shown.path == tmp_path / "chained" / "inner" / "_deep.py"
    assert shown.code == 'def deep(x):\n    """Deep."""\n    return x\n'


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"broken/__init__.py": "from ._a import gone\n", "broken/_a.py": "x = 1\n"},
            "broken._a (re-exported by broken) defines no top-level function or class 'gone'",
        ),
        (
            {"broken/__init__.py": "from ._a import gone\n"},
            "broken imports from 'broken._a', which has no source file",
        ),
        (
            {
                "broken/__init__.py": "from ._a import gone\n",
                "broken/_a.py": "from ._b import gone\n",
                "broken/_b.py": "from ._a import gone\n",
            },
            "the re-exports of 'gone' go round: broken -> broken._a -> broken._b -> broken._a",
        ),
    ],
    ids=["missing name", "missing file", "circle"],
)
def test_a_broken_reexport_fails_naming_the_chain(tmp_path, monkeypatch, files, message):
    _write_package(tmp_path, files)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(listing.ListingError) as raised:
        listing.read_listing("broken.gone")
    assert str(raised.value) == message


def test_library_docstrings_name_equations_that_exist():
    labels = {
        int(chapter.name[:2]): set(re.findall(r"\$\$ \((eq-[a-z0-9-]+)\)", chapter.read_text()))
        for chapter in CHAPTERS
    }
    missing = []
    for module in library_modules():
        for line in BOOK_LINE.finditer(module.read_text(encoding="utf-8")):
            chapter = int(line["chapter"])
            for label in re.findall(r"eq-[a-z0-9-]+", line["labels"]):
                if label not in labels.get(chapter, set()):
                    missing.append(f"{module.name}: {label} (chapter {chapter})")
    assert not missing, "docstrings cite equations the book does not have:\n" + "\n".join(missing)


@pytest.mark.slow
def test_the_listing_directive_renders_the_code_and_the_link(tmp_path: Path):
    """A two-object Sphinx project: a listing with its options, and the function's entry."""
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        'extensions = ["listing", "sphinx.ext.autodoc"]\n'
        'autodoc_typehints = "none"\nnitpicky = True\n',
        encoding="utf-8",
    )
    (tmp_path / "index.rst").write_text(
        "Listing\n=======\n\n.. listing:: rlfound.returns.discounted_cumsum\n"
        "   :caption: Returns\n   :linenos:\n   :emphasize-lines: 1\n\n"
        ".. autofunction:: rlfound.returns.discounted_cumsum\n",
        encoding="utf-8",
    )
    sphinx_build = Path(sys.executable).with_name("sphinx-build")
    command = [str(sphinx_build), "-q", "-W", "-n", "-b", "html", str(tmp_path)]
    completed = subprocess.run(
        [*command, str(tmp_path / "html")], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    soup = BeautifulSoup((tmp_path / "html" / "index.html").read_text("utf-8"), "html.parser")
    block = soup.select_one("div.library-listing")
    code = block.get_text()
    # One parameter a line, as the library is formatted at the listing width (line numbers
    # stand between the lines).
    for parameter in ("terms: ArrayLike,", "discounts: ArrayLike,", "axis: int = -1,"):
        assert f"    {parameter}\n" in code, code
    assert "y_t = x_t + c_t y_{t+1},    y_T = 0," in code
    assert "Parameters" not in code and ">>>" not in code
    assert "def discounted_cumsum" in block.select_one(".hll").get_text()
    assert block.select(".linenos")
    assert soup.select_one(".code-block-caption").get_text().strip().startswith("Returns")
    link = soup.select_one("p.listing-api-link a")
    assert link["href"] == "#rlfound.returns.discounted_cumsum"

    # An object the library does not have fails the build.
    (tmp_path / "index.rst").write_text(
        "Listing\n=======\n\n.. listing:: rlfound.returns.no_such_function\n", encoding="utf-8"
    )
    completed = subprocess.run(
        [*command, str(tmp_path / "broken")], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode != 0
    assert "defines no top-level function or class 'no_such_function'" in completed.stderr


def _code_boxes(soup: BeautifulSoup) -> list[str]:
    """Each captioned code box of a page, as HTML, with its Sphinx-numbered id (``id3``) and
    the permalink to it made alike."""
    return [
        re.sub(r'"#?id\d+"', '"id"', str(box)) for box in soup.select("div.literal-block-wrapper")
    ]


@pytest.mark.slow
def test_a_solution_listing_renders_as_the_literalinclude_it_replaced(tmp_path: Path):
    """The solution pages used Sphinx's literalinclude; their listings render the same HTML,
    with no API link (a reference solution has no API page) and no warning."""
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        'extensions = ["listing"]\nnitpicky = True\nlisting_roots = {"solutions": "reference"}\n',
        encoding="utf-8",
    )
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "one.py").write_text(SOLUTION_FILE, encoding="utf-8")
    both = (
        ".. listing:: solutions.one.{name}\n   {form}\n   :caption: {name}, one.py\n\n"
        ".. literalinclude:: reference/one.py\n   :language: python\n   :pyobject: {name}\n"
        "{include}   :caption: {name}, one.py\n\n"
    )
    # As the pages had it: their objects end at the last statement, before the END marker.
    region = "   :start-after: ### BEGIN SOLUTION\n   :dedent:\n"
    (tmp_path / "index.rst").write_text(
        "Solutions\n=========\n\n"
        + both.format(name="double", form=":solution:", include=region)
        + both.format(name="provided", form=":verbatim:", include=""),
        encoding="utf-8",
    )
    sphinx_build = Path(sys.executable).with_name("sphinx-build")
    completed = subprocess.run(
        [str(sphinx_build), "-q", "-W", "-n", "-b", "html", str(tmp_path), str(tmp_path / "html")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    soup = BeautifulSoup((tmp_path / "html" / "index.html").read_text("utf-8"), "html.parser")
    listed, included, listed_whole, included_whole = _code_boxes(soup)
    assert listed == included and listed_whole == included_whole
    region, whole = (box.get_text() for box in soup.select("div.literal-block-wrapper pre")[::2])
    assert region == 'if x is None:\n    raise ValueError("x")\n\nreturn 2 * x\n'
    assert whole.startswith("@staticmethod\ndef provided(y):")
    assert not soup.select(".library-listing, p.listing-api-link")


_LIST_MARKER = re.compile(r"\s*(?:[-+*]|\d+[.)])\s")
_FENCE = re.compile(r"\s*(`{3,}|:{3,})\s*(\S*)")
# Fences whose body is not Markdown; the body of every other directive (admonitions,
# exercises, proofs) is.
_VERBATIM = re.compile(r"$|\w+$|\{(code-cell|listing|literalinclude|math|eval-rst|code-block)\}")


def math_cut_by_list_markers(text: str) -> list[int]:
    """Line numbers where a wrapped line inside inline math ``$...$`` starts like a list item.

    Markdown reads such a line as a new list item, which closes the paragraph and leaves the
    formula as raw TeX on the page (the browser test found five).
    """
    cut, open_math, verbatim, in_display = [], False, None, False
    directives: list[str] = []  # the fences of the open directives with a Markdown body
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        fence = _FENCE.match(line)
        if verbatim is not None:
            if fence and fence.group(1) == verbatim and not fence.group(2):
                verbatim = None
            continue
        if fence:
            open_math = False
            marker, info = fence.groups()
            if not info and directives and directives[-1] == marker:
                directives.pop()
            elif _VERBATIM.match(info):
                verbatim = marker
            else:
                directives.append(marker)
            continue
        if stripped.startswith("$$"):
            # A display block opens and closes on lines of its own (or on one line).
            in_display = not in_display if stripped.count("$$") == 1 else in_display
            open_math = False
            continue
        if in_display:
            continue
        if not stripped:
            open_math = False
            continue
        if open_math and _LIST_MARKER.match(line):
            cut.append(number)
        dollars = len(re.findall(r"(?<![\\$])\$(?!\$)", line))
        open_math ^= dollars % 2 == 1
    return cut


@pytest.mark.parametrize("path", notebook_documents(), ids=lambda path: path.name)
def test_no_inline_formula_is_cut_by_a_list_marker(path: Path):
    assert math_cut_by_list_markers(path.read_text(encoding="utf-8")) == []


def test_a_formula_cut_by_a_list_marker_is_found():
    text = (
        "A loss $a + b\n- c$ here.\n\nAlso $a\n+ b$.\n\n- an item $x$\n- another\n"
        "```{admonition} Key\n- a box $x\n- y$\n```\n```python\nz = '$'\n- 1\n```\n"
    )
    assert math_cut_by_list_markers(text) == [2, 5, 11]
