"""tests/oracles/ is one namespace shared by every chapter's tests, split by topic into modules:
no name may be defined twice across them, or a later chapter's constant silently changes an
earlier chapter's reference; each is importable from ``tests.oracles``; none imports the
library."""

from __future__ import annotations

import ast

import tests.oracles
from tests._book import ROOT

PACKAGE = ROOT / "tests" / "oracles"
TOPICS = sorted(path for path in PACKAGE.glob("*.py") if path.name != "__init__.py")


def top_level_names(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            yield node.name, node.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                for element in elements:
                    if isinstance(element, ast.Name):
                        yield element.id, node.lineno


def defined_names() -> list[tuple[str, str]]:
    """(name, "module.py:line") for every top-level definition of every topic module."""
    return [
        (name, f"{path.name}:{line}")
        for path in TOPICS
        for name, line in top_level_names(ast.parse(path.read_text(encoding="utf-8")))
    ]


def test_the_package_has_topic_modules():
    assert len(TOPICS) > 1, f"no topic modules found in {PACKAGE}"


def test_no_name_is_defined_twice():
    first: dict[str, str] = {}
    twice = []
    for name, where in defined_names():
        if name in first:
            twice.append(f"{name} ({first[name]} and {where})")
        first.setdefault(name, where)
    assert not twice, "defined twice in tests/oracles/: " + ", ".join(twice)


def test_every_public_name_is_importable_from_the_package():
    public = {name for name, _ in defined_names() if not name.startswith("_")}
    missing = sorted(public - set(tests.oracles.__all__))
    assert not missing, f"tests/oracles/__init__.py does not export: {missing}"
    assert all(hasattr(tests.oracles, name) for name in tests.oracles.__all__)


def test_the_references_do_not_import_the_library():
    for path in [PACKAGE / "__init__.py", *TOPICS]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ] + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not [name for name in imported if name.split(".")[0] == "rlfound"], path.name
