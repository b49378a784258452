"""tests/oracles.py is one namespace shared by every chapter's tests: no name may be defined
twice in it, or a later chapter's constant silently changes an earlier chapter's reference."""

from __future__ import annotations

import ast

from tests._book import ROOT


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


def test_no_name_is_defined_twice():
    tree = ast.parse((ROOT / "tests" / "oracles.py").read_text(encoding="utf-8"))
    first: dict[str, int] = {}
    twice = []
    for name, line in top_level_names(tree):
        if name in first:
            twice.append(f"{name} (lines {first[name]} and {line})")
        first.setdefault(name, line)
    assert not twice, "defined twice in tests/oracles.py: " + ", ".join(twice)


def test_the_references_do_not_import_the_library():
    tree = ast.parse((ROOT / "tests" / "oracles.py").read_text(encoding="utf-8"))
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ] + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.split(".")[0] == "rlfound"]
