"""The grader's layout by phase: what each phase may import, what runs inside the sandbox, and
the public names of every module (ISSUE: the grader's layout shows what runs where)."""

from __future__ import annotations

import ast
import importlib
import sys

import pytest
from _grading_helpers import REPO

GRADING = REPO / "rlfound" / "grading"
#: The phases in the order a submission meets them; each imports only itself and earlier ones.
PHASES = ("authoring", "intake", "sandbox", "scoring", "output", "course", "distribution")


def _modules():
    for path in sorted(GRADING.rglob("*.py")):
        parts = path.relative_to(GRADING).with_suffix("").parts
        if "exercises" in parts:
            continue  # the book's exercise specifications: data written in Python
        yield path, ".".join(("rlfound", "grading", *parts)).removesuffix(".__init__")


def _imports(path):
    """Absolute rlfound modules a file imports, and every top-level module it imports."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.module, alias.name) for alias in node.names]
    return found


def _phase(module):
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else None


MODULES = list(_modules())


def test_every_module_belongs_to_a_phase():
    stray = [m for _, m in MODULES if m != "rlfound.grading" and _phase(m) not in PHASES]
    assert not stray, f"modules outside the phases {PHASES}: {stray}"


#: What a phase may import besides itself. Authoring's verify and the exercise format use the
#: scoring (a specification is verified by grading its reference); the sandbox and intake sit
#: below everything that decides a grade, and nothing but distribution packs the others up.
#: The course layer (assignments, late policy, manual points, LMS export) sits above one
#: exercise's grading; only distribution (and the command) may use it. It reaches the sandbox
#: for one thing only: stopping the workers when a signal stops a batch.
ALLOWED = {
    "intake": set(),
    "sandbox": {"intake"},
    "output": {"intake", "authoring", "scoring"},
    "scoring": {"intake", "sandbox", "authoring", "output"},
    "authoring": {"intake", "sandbox", "scoring", "output"},
    "course": {"intake", "sandbox", "authoring", "scoring", "output"},
    "distribution": {"intake", "sandbox", "authoring", "scoring", "output", "course"},
}


@pytest.mark.parametrize(("path", "module"), MODULES, ids=[m for _, m in MODULES])
def test_a_phase_imports_only_the_phases_it_may(path, module):
    phase = _phase(module)
    if phase is None:
        return  # the package's __init__ re-exports the public entry points
    allowed = ALLOWED[phase] | {phase}
    wrong = sorted(
        target
        for target, _ in _imports(path)
        if target.startswith("rlfound.grading.") and _phase(target) not in allowed
    )
    assert not wrong, f"{module} ({phase}) imports {wrong}"


def test_the_grading_modules_import_each_other_without_a_cycle():
    """Module-level imports (not those inside functions) form no cycle."""
    graph = {}
    for path, module in MODULES:
        tree = ast.parse(path.read_text())
        targets = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.add(full if any(m == full for _, m in MODULES) else node.module)
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[module] = {t for t in targets if t.startswith("rlfound.grading") and t != module}
    done, active = set(), []

    def visit(module):
        if module in active:
            cycle = [*active[active.index(module) :], module]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if module in done or module not in graph:
            return
        active.append(module)
        for target in graph[module]:
            if not module.startswith(target + "."):  # a package's own __init__
                visit(target)
        active.pop()
        done.add(module)

    for module in graph:
        visit(module)


@pytest.mark.parametrize(("path", "module"), MODULES, ids=[m for _, m in MODULES])
def test_no_private_name_crosses_modules(path, module):
    """Neither ``from rlfound... import _name`` nor ``module._name`` of an imported module."""
    imported = _imports(path)
    crossing = [
        f"{target}.{name}"
        for target, name in imported
        if target.startswith("rlfound") and name and name.startswith("_")
    ]
    modules = {name for target, name in imported if target.startswith("rlfound") and name}
    modules |= {
        target.rsplit(".", 1)[-1]
        for target, name in imported
        if name is None and target.startswith("rlfound")
    }
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            crossing.append(f"{node.value.id}.{node.attr}")
    assert not crossing, f"{module} uses private names of other modules: {crossing}"


@pytest.mark.parametrize(("path", "module"), MODULES, ids=[m for _, m in MODULES])
def test_every_module_declares_its_public_names(path, module):
    if path.name == "__init__.py" and module.count(".") > 2:
        body = ast.parse(path.read_text()).body
        if not any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in body):
            return  # a phase folder with nothing to re-export
    if ".inside." in module:
        return  # scripts copied into the sandbox, not imported for their names
    imported = importlib.import_module(module)
    names = getattr(imported, "__all__", None)
    assert names is not None, f"{module} has no __all__"
    missing = [name for name in names if not hasattr(imported, name)]
    assert not missing, f"{module}.__all__ names what it does not define: {missing}"


INSIDE = sorted((GRADING / "sandbox" / "inside").glob("*.py"))


@pytest.mark.parametrize("path", INSIDE, ids=[p.name for p in INSIDE])
def test_what_runs_inside_the_sandbox_imports_only_the_standard_library(path):
    """The files copied into the sandbox cannot import rlfound (it is not there), and must not
    need anything but the standard library (NumPy, which the sandbox does hold, only where a
    function decodes arrays, imported inside it)."""
    siblings = {p.stem for p in INSIDE}
    tree = ast.parse(path.read_text())
    top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    outside = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            root = name.split(".")[0]
            if root in sys.stdlib_module_names or root in siblings or root == "__future__":
                continue
            if root == "numpy" and node not in top_level:
                continue
            if name.startswith("rlfound.grading.sandbox.inside"):
                continue  # the documentation import of a sibling, never taken in the sandbox
            outside.append(name)
    assert not outside, f"{path.name} imports {outside}"
