"""Every reference solution, as a file: markers, starter, imports and docstring examples.

The checks run once for the solution of every exercise the grader knows (the specifications
in ``rlfound/grading/authoring/exercises/``), and every ``solutions/*.py`` file must belong to
one, so a new solution cannot escape them (``solutions/__init__.py`` only makes the folder the
installed package ``rlfound.solutions``). The value of each solution is tested per chapter, in
``test_solutions*.py``.

The functions a student writes in a solution file are the specification's ``functions``
(with exactly its parameters), plus the student's own tests: every top-level ``test_*``
function of the file, which takes no parameters. Each holds exactly one
``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region, and the starter, made by the grader's
own :func:`~rlfound.grading.authoring.starter.strip_solutions`, keeps its signature and docstring
and replaces the rest of its body with ``raise NotImplementedError``.
"""

from __future__ import annotations

import ast
import doctest
import inspect

import numpy as np
import pytest

from rlfound.grading.authoring.spec import Answer, Compare, Exercise, Function, load_exercises
from rlfound.grading.authoring.starter import BEGIN, END, strip_solutions
from tests._solutions import SOLUTIONS, load_solution

EXERCISES = load_exercises()
IDS = sorted(EXERCISES)
MARKER_TEXT = ("BEGIN SOLUTION", "END SOLUTION")


def solution_name(exercise: Exercise) -> str:
    """The stem of the exercise's solution, which must be a file in ``solutions/``."""
    path = exercise.solution_path
    assert path.parent == SOLUTIONS.resolve(), f"{exercise.id}: {path} is not in solutions/"
    assert path.is_file(), f"{exercise.id}: {path} is missing"
    return path.stem


def solution_source(exercise: Exercise) -> str:
    return (SOLUTIONS / f"{solution_name(exercise)}.py").read_text(encoding="utf-8")


def top_level_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def student_functions(exercise: Exercise) -> dict[str, list[str]]:
    """Each function the student writes, with its parameters: the specification's functions
    and the file's own ``test_*`` functions (no parameters)."""
    tree = ast.parse(solution_source(exercise))
    own_tests = {name: [] for name in top_level_functions(tree) if name.startswith("test_")}
    declared = {function.name: function.parameter_names for function in exercise.functions}
    return {**own_tests, **declared}


def valid_arguments(exercise: Exercise, function: Function) -> tuple:
    """Positional arguments the grader itself passes to ``function``: the inputs of its first
    public Compare or Answer check (the first case of a Compare)."""
    for check in exercise.checks:
        if not (check.public and isinstance(check, Answer | Compare)):
            continue
        if check.function != function.name:
            continue
        if isinstance(check, Answer):
            case = check.kwargs
        else:
            inputs = check.inputs
            cases = inputs(exercise.rng(check, None)) if callable(inputs) else inputs
            case = cases[0]
        assert sorted(case) == sorted(function.parameter_names), (check.name, sorted(case))
        return tuple(case[name] for name in function.parameter_names)
    pytest.fail(f"{exercise.id}: no public Compare or Answer check calls {function.name}")


def raises_not_implemented(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Raise)
        and isinstance(statement.exc, ast.Name)
        and statement.exc.id == "NotImplementedError"
        and statement.cause is None
    )


def test_every_solution_file_belongs_to_an_exercise():
    files = {path.resolve() for path in SOLUTIONS.glob("*.py") if path.name != "__init__.py"}
    claimed = {exercise.solution_path for exercise in EXERCISES.values()}
    assert files, f"no solutions in {SOLUTIONS}"
    orphans = sorted(path.name for path in files - claimed)
    assert not orphans, f"solutions without an exercise specification: {orphans}"


@pytest.mark.parametrize("exercise_id", IDS)
def test_solution_markers_are_balanced_and_not_nested(exercise_id):
    exercise = EXERCISES[exercise_id]
    source = solution_source(exercise)
    strip_solutions(source)  # ValueError if a region is unclosed, nested or has no BEGIN
    functions = top_level_functions(ast.parse(source))
    open_indent = open_line = None
    owners = []
    for number, line in enumerate(source.splitlines(), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            assert open_indent is None, f"line {number}: nested BEGIN SOLUTION"
            open_indent, open_line = begin["indent"], number
        elif end:
            assert open_indent is not None, f"line {number}: END SOLUTION without BEGIN"
            indent = line[: len(line) - len(line.lstrip())]
            assert indent == open_indent, f"line {number}: markers indented differently"
            owner = [
                name
                for name, node in functions.items()
                if node.lineno < open_line <= node.end_lineno
            ]
            assert owner, f"line {open_line}: a solution region outside a top-level function"
            owners.extend(owner)
            open_indent = None
        else:
            assert not any(text in line for text in MARKER_TEXT), f"line {number}: bad marker"
    assert open_indent is None, "BEGIN SOLUTION without END SOLUTION"
    # Exactly one region in each function the student writes, and none elsewhere.
    assert sorted(owners) == sorted(student_functions(exercise))


@pytest.mark.parametrize("exercise_id", IDS)
def test_the_starter_keeps_signatures_and_docstrings_and_raises(exercise_id):
    exercise = EXERCISES[exercise_id]
    name = solution_name(exercise)
    source = solution_source(exercise)
    starter = strip_solutions(source)
    assert not any(text in starter for text in MARKER_TEXT)
    originals = top_level_functions(ast.parse(source))
    stubs = top_level_functions(ast.parse(starter))
    namespace: dict = {"__name__": f"_starter_{name}"}
    exec(compile(starter, f"starter/{name}.py", "exec"), namespace)
    arguments = {f.name: valid_arguments(exercise, f) for f in exercise.functions}
    for function_name, parameters in student_functions(exercise).items():
        assert function_name in stubs, f"the starter does not define {function_name}"
        node = stubs[function_name]
        # The whole body is the docstring and the stub: no solution code survives.
        assert ast.get_docstring(node), function_name
        assert ast.get_docstring(node) == ast.get_docstring(originals[function_name])
        assert len(node.body) == 2, function_name
        assert raises_not_implemented(node.body[1]), function_name
        function = namespace[function_name]
        assert list(inspect.signature(function).parameters) == parameters
        with pytest.raises(NotImplementedError):
            function(*arguments.get(function_name, ()))


@pytest.mark.parametrize("exercise_id", IDS)
def test_solution_imports_only_numpy(exercise_id):
    exercise = EXERCISES[exercise_id]
    tree = ast.parse(solution_source(exercise))
    assert ast.get_docstring(tree), f"{exercise.solution_path.name} has no module docstring"
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"numpy", "__future__"}, imported


@pytest.mark.parametrize("exercise_id", IDS)
def test_solution_docstring_examples_run(exercise_id):
    exercise = EXERCISES[exercise_id]
    module = load_solution(solution_name(exercise))
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(module, module.__name__, globs={"np": np, **vars(module)})
    assert any(test.examples for test in tests), f"{module.__file__} has no docstring examples"
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
