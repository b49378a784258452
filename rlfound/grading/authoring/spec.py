"""Exercise specifications: what a student writes and how it is checked.

An exercise is one Python file that defines ``EXERCISE``, an :class:`Exercise`. The book's
exercises live in ``rlfound/grading/authoring/exercises/``; an instructor adds more with
``--exercises DIR`` in the same format and checks them with ``rlfound verify``. A
specification is trusted code: the grader imports it (in its own process), and it points at
the trusted reference solution. Every field is a keyword. A short example, the book's
``bellman-arithmetic`` exercise::

    from rlfound.grading.authoring.spec import (
        BOOK_SOLUTIONS, Answer, Compare, Exercise, Function, Manual,
    )

    def random_gammas(rng):
        return [{"gamma": float(g)} for g in rng.uniform(0, 1, size=5)]

    EXERCISE = Exercise(
        id="bellman-arithmetic",
        title="Bellman arithmetic",
        chapter=1,
        stars=1,
        solution=BOOK_SOLUTIONS / "bellman_arithmetic.py",
        functions=[Function(name="chain_values", parameters="gamma")],
        checks=[
            Answer(
                name="book-gamma",
                function="chain_values",
                kwargs={"gamma": 0.8},
                expected=[0.8, 1.0, 0.0],
                points=1,
            ),
            Compare(
                name="random-gamma",
                function="chain_values",
                inputs=random_gammas,
                points=1,
                public=False,
            ),
        ],
        manual=[Manual(name="explanation", points=1, description="Why v(terminal) is 0.")],
    )

The book's specifications name their solution in the book's ``solutions/`` folder
(:data:`BOOK_SOLUTIONS`); an instructor's own specification names its solution by a path
relative to the specification file, such as ``solution="bellman_solution.py"`` for a file
next to it.

The book's specifications hold their public checks only, because they ship in the students'
wheel. Their graded-only checks are instructor material
(:mod:`~rlfound.grading.authoring.instructor`): ``solutions/graded/<spec file name>`` defines
``CHECKS = [...]``, which :func:`load_exercises` appends where that material is installed. An
instructor's own specification may hold both kinds in one file, as above: it never reaches
students.

Check kinds (every check has a ``name``, ``points`` and ``public``; a public check runs in the
student's self-check, a graded-only one (``public=False``) draws its inputs from the grading
seed, which students never see). ``inputs`` is a list of keyword dictionaries (fixed edge
cases) or a function of a ``numpy.random.Generator`` that returns one; the function must draw
only from that generator, so the same seed gives the same inputs:

:class:`Compare`
    The student's function against the reference on the same inputs: shape first (no
    broadcasting), finiteness, then ``|got - expected| <= atol + rtol * |expected|``.
:class:`Gradient`
    The student's gradient against central finite differences of a trusted objective.
:class:`Property`
    An invariant of the student's outputs (for example two functions agree, or a symmetry).
:class:`Answer`
    A numeric answer with a tolerance.
:class:`Raises`
    Bad input must raise a given exception type.
:class:`Manual`
    A part graded by hand (a derivation); listed in the feedback, never scored automatically.

``help(Compare)`` (or any other kind) shows every option and its default.
"""

from __future__ import annotations

import abc
import dataclasses
import importlib.util
import inspect
import re
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlfound.grading.authoring import instructor
from rlfound.grading.scoring import compare

__all__ = [
    "BOOK_SOLUTIONS",
    "BUILTIN_DIR",
    "PUBLIC_SEED",
    "RESERVED_CHECK_NAMES",
    "Answer",
    "Call",
    "CallError",
    "Check",
    "Compare",
    "Exercise",
    "Function",
    "Gradient",
    "Manual",
    "Outcome",
    "Prepared",
    "Property",
    "Raises",
    "copy_arguments",
    "load_exercises",
    "load_file",
]

#: Folder of the book's exercise specifications.
BUILTIN_DIR = Path(__file__).resolve().parent / "exercises"


#: Folder of the book's reference solutions: the instructor material
#: (:mod:`rlfound.grading.authoring.instructor`). Where only the student distribution is
#: installed it does not exist, and a book exercise has only its public checks.
BOOK_SOLUTIONS = instructor.instructor_folder() or instructor.CHECKOUT_SOLUTIONS
#: Seed of the inputs of public checks: fixed, so the self-check and grading agree.
PUBLIC_SEED = 20_240_101

#: Columns of ``grades.csv`` besides the checks' (a check may not take their names).
RESERVED_CHECK_NAMES = ("submission", "file", "score", "max_score", "note")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_DEFINES_EXERCISE = re.compile(r"^EXERCISE\s*=", re.MULTILINE)

Inputs = Sequence[dict] | Callable[[np.random.Generator], Sequence[dict]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Function:
    """A function the student writes.

    Parameters
    ----------
    name : str
        Its name, e.g. ``"gae_recursive"``.
    parameters : str
        Its parameters, comma-separated, e.g. ``"rewards, values, gamma, lam"``. The grader
        passes arguments by position in this order.
    """

    name: str
    parameters: str

    @property
    def parameter_names(self) -> list[str]:
        return [p.strip() for p in self.parameters.split(",") if p.strip()]

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.parameter_names)})"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The verdict on one check; ``case`` is the index of the case that failed, where the
    check has cases (the grader then tells the student how to rebuild its inputs)."""

    passed: bool
    message: str
    case: int | None = None


@dataclasses.dataclass(frozen=True)
class Call:
    """One call the worker makes: a function and its keyword arguments."""

    function: str
    kwargs: dict


@dataclasses.dataclass
class Prepared:
    """A check made concrete for one seed: the calls to make and how to judge the replies.

    ``judge`` receives one item per call: a float64 ndarray, or a :class:`CallError`.
    ``cases`` are the keyword arguments of each case, where the check draws cases (an
    :attr:`Outcome.case` indexes them).
    """

    calls: list[Call]
    judge: Callable[[list], Outcome]
    cases: list[dict] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class CallError:
    """A call that returned no numbers: the function raised, or returned something that is
    not numbers, or never answered (the worker crashed, the call timed out or was not run).

    ``message`` is for the student. ``classes`` names the class of the exception raised and
    every class of its method resolution order, most derived first, as ``(module, name)``
    pairs (``("builtins", "ValueError")``); it is empty when nothing was raised. A
    :class:`Raises` check is judged by ``classes``, never by the message: an exception's text
    is the student's to write, so a ``TypeError("ValueError: ...")`` must not count.
    """

    message: str
    classes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_exception(cls, error: BaseException, message: str | None = None) -> CallError:
        """The error of ``error``, raised by a call made in this process (trusted code such as
        the specification tests; the grader gets ``classes`` from its worker's reply).

        ``message`` defaults to ``"Name: text"``.
        """
        kind = type(error)
        return cls(
            f"{kind.__name__}: {error}" if message is None else message,
            tuple((str(c.__module__), c.__name__) for c in kind.__mro__),
        )

    @property
    def exception_type(self) -> str:
        """Name of the class of the exception raised; ``""`` when nothing was raised."""
        return self.classes[0][1] if self.classes else ""

    def raised(self, error: str) -> bool:
        """Whether the exception raised is an instance of the class ``error`` names.

        ``error`` is a built-in exception's name (``"ValueError"``) or a dotted
        ``module.Name`` (``"numpy.linalg.LinAlgError"``). The class raised matches if it is
        that class or a subclass of it, that is, if its method resolution order holds that
        class: a student's own class called ``ValueError`` is not the built-in one.

        Examples
        --------
        >>> CallError.from_exception(ValueError("bad")).raised("ValueError")
        True
        >>> CallError.from_exception(TypeError("ValueError: bad")).raised("ValueError")
        False
        >>> CallError("ValueError: bad").raised("ValueError")  # no class recorded
        False
        """
        module, _, name = error.rpartition(".")
        return (module or "builtins", name) in self.classes


@dataclasses.dataclass(frozen=True, kw_only=True)
class Check(abc.ABC):
    """Fields every check has, and the one method every kind implements.

    Parameters
    ----------
    name : str
        The check's name, a lowercase slug unique in its exercise (``"random-gammas"``).
    points : float
        What passing it is worth.
    public : bool
        Whether it runs in the students' self-check; ``False`` makes it graded-only, with
        inputs drawn from the grading seed.
    description : str
        One sentence for the student: what the check tests.
    """

    name: str
    points: float = 1.0
    public: bool = True
    description: str = ""

    @abc.abstractmethod
    def prepare(self, rng: np.random.Generator, reference) -> Prepared:
        """Draw the inputs, compute what is expected (in this process), return the calls to
        make in the worker and the function that judges their replies."""

    @property
    def functions(self) -> tuple[str, ...]:
        return (self.function,)


def _cases(inputs: Inputs, rng: np.random.Generator) -> list[dict]:
    cases = inputs(rng) if callable(inputs) else inputs
    return [dict(case) for case in cases]


def copy_arguments(kwargs: dict) -> dict:
    # The reference must not see (or share) arrays the student's reply could alias.
    return {
        k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()
    }


def _label(index: int, total: int, case: dict) -> str:
    parts = []
    for key, value in case.items():
        if isinstance(value, np.ndarray) or isinstance(value, list | tuple):
            parts.append(f"{key} of shape {np.shape(value)}")
        else:
            parts.append(f"{key}={value!r}")
    return f"case {index + 1} of {total} ({', '.join(parts)})"


def _reference_value(reference, function: str, kwargs: dict) -> np.ndarray:
    return np.array(getattr(reference, function)(**copy_arguments(kwargs)), dtype=np.float64)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Compare(Check):
    """Compare a student function with the reference on given or generated inputs.

    Parameters
    ----------
    name, points, public, description
        As for every check (see :class:`Check`).
    function : str
        The function called, one of the exercise's ``functions``.
    inputs : list of dict or callable
        Keyword arguments of each call, or a function of a ``numpy.random.Generator`` that
        returns them (drawing only from that generator).
    rtol, atol : float
        Entry ``i`` passes when ``|got_i - expected_i| <= atol + rtol * |expected_i|``.
    """

    function: str
    inputs: Inputs
    rtol: float = 1e-7
    atol: float = 1e-9

    def prepare(self, rng, reference):
        cases = _cases(self.inputs, rng)
        expected = [_reference_value(reference, self.function, case) for case in cases]

        def judge(replies):
            for index, (case, want, got) in enumerate(zip(cases, expected, replies, strict=True)):
                where = _label(index, len(cases), case)
                if isinstance(got, CallError):
                    return Outcome(False, f"{where}: {self.function} raised\n{got.message}", index)
                verdict = compare.compare(got, want, rtol=self.rtol, atol=self.atol)
                if not verdict.passed:
                    return Outcome(False, f"{where}: {verdict.message}", index)
            return Outcome(True, f"{len(cases)} case(s) match the reference")

        return Prepared([Call(self.function, case) for case in cases], judge, cases)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Gradient(Check):
    """Check a student's gradient against central finite differences of ``objective``.

    ``objective(**case)`` is trusted code from the specification, evaluated in the parent;
    the student's function receives the same ``case`` and must return the gradient with
    respect to the argument named ``wrt``.

    Parameters
    ----------
    name, points, public, description
        As for every check (see :class:`Check`).
    function : str
        The student's gradient function.
    objective : callable
        The scalar function whose gradient is wanted, called with the case's keywords.
    wrt : str
        The argument the gradient is taken with respect to.
    inputs : list of dict or callable
        As for :class:`Compare`.
    eps : float
        Step of the central differences.
    rtol, atol : float
        Tolerances of the comparison, as for :class:`Compare`.
    """

    function: str
    objective: Callable[..., float]
    wrt: str
    inputs: Inputs
    eps: float = 1e-6
    rtol: float = 1e-5
    atol: float = 1e-7

    def prepare(self, rng, reference):
        cases = _cases(self.inputs, rng)
        expected = []
        for case in cases:

            def f(x, case=case):
                return float(self.objective(**{**copy_arguments(case), self.wrt: x}))

            expected.append(
                compare.numerical_gradient(f, np.asarray(case[self.wrt], float), self.eps)
            )

        def judge(replies):
            for index, (case, want, got) in enumerate(zip(cases, expected, replies, strict=True)):
                where = _label(index, len(cases), case)
                if isinstance(got, CallError):
                    return Outcome(False, f"{where}: {self.function} raised\n{got.message}", index)
                verdict = compare.compare(got, want, rtol=self.rtol, atol=self.atol)
                if not verdict.passed:
                    return Outcome(
                        False, f"{where}: differs from finite differences: {verdict.message}", index
                    )
            return Outcome(True, f"{len(cases)} case(s) match central finite differences")

        return Prepared([Call(self.function, case) for case in cases], judge, cases)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Property(Check):
    """An invariant of the student's outputs.

    Parameters
    ----------
    name, points, public, description
        As for every check (see :class:`Check`); the description is the failure message when
        ``holds`` returns False.
    function : str or tuple of str
        The function, or functions, called on every case.
    inputs : list of dict or callable
        As for :class:`Compare`.
    holds : callable
        ``holds(outputs, case)`` receives the outputs (one float64 array, or a dict name ->
        array for several functions) and the case, and returns True (holds), False (fails)
        or a string (fails with that message).
    """

    function: str | tuple[str, ...]
    inputs: Inputs
    holds: Callable[[Any, dict], bool | str]

    @property
    def functions(self):
        return self.function if isinstance(self.function, tuple) else (self.function,)

    def prepare(self, rng, reference):
        cases = _cases(self.inputs, rng)
        names = self.functions
        calls = [Call(name, case) for case in cases for name in names]

        def judge(replies):
            for index, case in enumerate(cases):
                where = _label(index, len(cases), case)
                outputs = dict(
                    zip(names, replies[index * len(names) : (index + 1) * len(names)], strict=True)
                )
                for name, got in outputs.items():
                    if isinstance(got, CallError):
                        return Outcome(False, f"{where}: {name} raised\n{got.message}", index)
                single = outputs[names[0]] if isinstance(self.function, str) else outputs
                try:
                    verdict = self.holds(single, case)
                except (ValueError, TypeError, IndexError) as error:
                    verdict = f"the outputs have the wrong form ({error})"
                if verdict is not True and verdict is not None:
                    text = verdict if isinstance(verdict, str) else self.description
                    return Outcome(False, f"{where}: property does not hold: {text}", index)
            return Outcome(True, f"holds on {len(cases)} case(s)")

        return Prepared(calls, judge, cases)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Answer(Check):
    """A numeric answer: ``function(**kwargs)`` must equal ``expected`` within tolerance.

    Parameters
    ----------
    name, points, public, description
        As for every check (see :class:`Check`).
    function : str
        The function called.
    kwargs : dict
        Its keyword arguments.
    expected : array_like
        The answer.
    rtol, atol : float
        Tolerances of the comparison, as for :class:`Compare`.
    """

    function: str
    kwargs: dict
    expected: Any
    rtol: float = 1e-9
    atol: float = 1e-9

    def prepare(self, rng, reference):
        want = np.array(self.expected, dtype=np.float64)
        call = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())

        def judge(replies):
            (got,) = replies
            if isinstance(got, CallError):
                return Outcome(False, f"{self.function}({call}) raised\n{got.message}")
            verdict = compare.compare(got, want, rtol=self.rtol, atol=self.atol)
            if not verdict.passed:
                return Outcome(False, f"{self.function}({call}): {verdict.message}")
            return Outcome(True, f"{self.function}({call}) is correct")

        return Prepared([Call(self.function, dict(self.kwargs))], judge)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Raises(Check):
    """Bad input: ``function(**kwargs)`` must raise an exception of type ``error``.

    The type is judged by the class raised, as the worker reports it (its method resolution
    order, see :class:`CallError`), not by the exception's text: the class named by ``error``
    or a subclass of it passes; a ``TypeError`` whose message mentions ``ValueError``, or a
    student's own class called ``ValueError``, does not.

    The grader counts it only if the same function also returned numbers on at least one
    valid input of the exercise's other checks (when they call it): a function that raises
    whatever it is given, crashes or never returns would otherwise earn every error check.

    Parameters
    ----------
    name, points, public, description
        As for every check (see :class:`Check`).
    function : str
        The function called.
    kwargs : dict
        Its (bad) keyword arguments.
    error : str
        The exception type it must raise: a built-in exception's name (``"ValueError"``) or
        ``module.Name`` for another (``"numpy.linalg.LinAlgError"``).
    """

    function: str
    kwargs: dict
    error: str = "ValueError"

    def prepare(self, rng, reference):
        call = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())

        def judge(replies):
            (got,) = replies
            if isinstance(got, CallError) and got.raised(self.error):
                return Outcome(True, f"{self.function}({call}) raises {self.error}")
            if not isinstance(got, CallError):
                what = "it returned"
            elif got.classes:
                what = f"it raised {_class_name(got.classes[0], self.error)}\n{got.message}"
            else:
                what = f"instead:\n{got.message}"
            return Outcome(False, f"{self.function}({call}) should raise {self.error}; {what}")

        return Prepared([Call(self.function, dict(self.kwargs))], judge)


def _class_name(entry: tuple[str, str], wanted: str) -> str:
    """How a failed :class:`Raises` check names the class raised: its name, with its module
    where it is not a built-in one, and a word when it only looks like the one wanted."""
    module, name = entry
    if module == "builtins":
        return name
    if name == wanted:
        return f"{module}.{name} (a class of that name, not the built-in {wanted})"
    return f"{module}.{name}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Manual:
    """A part of the exercise graded by hand (a derivation or an explanation).

    Parameters
    ----------
    name : str
        Its name, a lowercase slug.
    points : float
        What it is worth (graded by the instructor, never automatically).
    description : str
        What the student must hand in.
    """

    name: str
    points: float
    description: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Exercise:
    """One exercise: metadata, the functions the student writes, checks and manual parts.

    Parameters
    ----------
    id : str
        A stable lowercase slug, e.g. ``"gae-recursion"``.
    title : str
        A short title.
    chapter, stars : int
        The book's chapter and the difficulty, 1 to 5 stars.
    solution : str or Path
        The reference solution file; a relative path is taken relative to the specification
        file. It is loaded only in the grader's own process.
    functions : sequence of Function
        The functions the student writes.
    checks : sequence of Check
        The automatic checks.
    manual : sequence of Manual
        The parts graded by hand.
    source : Path or None
        The specification file; :func:`load_file` sets it.
    complete : bool
        False for a book exercise loaded without the instructor material: only its public
        checks are here (:func:`load_exercises` sets it).
    """

    id: str
    title: str
    chapter: int
    stars: int
    solution: str | Path
    functions: Sequence[Function]
    checks: Sequence[Check]
    manual: Sequence[Manual] = ()
    source: Path | None = None
    complete: bool = True

    @property
    def builtin(self) -> bool:
        """Whether this is one of the book's exercises (whose answers are instructor material)."""
        return self.source is not None and self.source.parent == BUILTIN_DIR

    @property
    def max_score(self) -> float:
        return float(sum(check.points for check in self.checks))

    @property
    def manual_points(self) -> float:
        return float(sum(part.points for part in self.manual))

    @property
    def solution_path(self) -> Path:
        path = Path(self.solution)
        if not path.is_absolute() and self.source is not None:
            path = self.source.parent / path
        return path.resolve()

    def validate(self) -> None:
        """Check the specification's internal consistency.

        Raises
        ------
        ValueError
            Naming the field at fault.
        """
        if not _SLUG.match(self.id):
            raise ValueError(f"id must be a lowercase slug like 'gae-recursion'; got {self.id!r}")
        if self.stars not in (1, 2, 3, 4, 5):
            raise ValueError(f"stars must be 1 to 5; got {self.stars!r}")
        names = [check.name for check in self.checks]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"checks must be non-empty with unique names; got {names}")
        if any(not _SLUG.match(name) for name in names):
            raise ValueError(f"check names must be lowercase slugs; got {names}")
        taken = sorted(set(names) & set(RESERVED_CHECK_NAMES))
        if taken:
            raise ValueError(f"check names {taken} are columns of grades.csv; choose others")
        declared = {f.name for f in self.functions}
        for check in self.checks:
            if check.points < 0:
                raise ValueError(f"points of check {check.name!r} must be >= 0")
            missing = set(check.functions) - declared
            if missing:
                raise ValueError(f"check {check.name!r} calls undeclared function(s) {missing}")

    def reference(self):
        """Import the reference solution (trusted code) and check the declared signatures.

        Raises
        ------
        ValueError
            If the solution file is missing, or a declared function is missing from it or has
            other parameters.
        """
        path = self.solution_path
        if not path.is_file() and self.builtin:
            raise instructor.InstructorMissing(f"the reference solution of {self.id!r}")
        if not path.is_file():
            raise ValueError(f"solution: the reference of {self.id!r} is missing: {path}")
        module_name = "rlfound_reference_" + self.id.replace("-", "_")
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for function in self.functions:
            target = getattr(module, function.name, None)
            if not callable(target):
                raise ValueError(f"solution {path.name} does not define {function.name}()")
            parameters = list(inspect.signature(target).parameters)
            if parameters != function.parameter_names:
                raise ValueError(
                    f"functions: {function.name} is declared as {function.signature} but the "
                    f"solution has ({', '.join(parameters)})"
                )
        return module

    def rng(self, check: Check, seed: int | None) -> np.random.Generator:
        """Generator of a check's inputs: the public seed for public checks, else ``seed``."""
        words = [zlib.crc32(self.id.encode()), zlib.crc32(check.name.encode())]
        if check.public:
            return np.random.default_rng([PUBLIC_SEED, *words])
        return np.random.default_rng([int(seed or 0), *words, 1])

    def summary(self) -> str:
        return f"{self.id} (chapter {self.chapter}, {'★' * self.stars}): {self.title}"


def load_file(path: Path) -> Exercise:
    """Load the ``EXERCISE`` defined by one specification file.

    Raises
    ------
    ValueError
        If the file does not define an :class:`Exercise` named ``EXERCISE`` or it is invalid.
    """
    path = Path(path).resolve()
    module_name = f"rlfound_exercise_{zlib.crc32(str(path).encode()):08x}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:
        raise ValueError(f"exercise specification {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses in the spec look their module up
    spec.loader.exec_module(module)
    exercise = getattr(module, "EXERCISE", None)
    if not isinstance(exercise, Exercise):
        raise ValueError(f"{path} must define EXERCISE = Exercise(...)")
    exercise = dataclasses.replace(exercise, source=path)
    exercise.validate()
    return exercise


def _graded_checks(path: Path) -> list[Check]:
    """The graded-only checks of the book exercise specified in ``path``: ``CHECKS`` of the
    instructor material's ``graded/<path.name>``; None where that file is not here."""
    folder = instructor.instructor_folder()
    if folder is None:
        return None
    graded = folder / instructor.GRADED / path.name
    if not graded.is_file():
        # A Gradescope bundle carries the material of its own exercise only.
        return None
    module_name = f"rlfound_graded_{path.stem}"
    found = importlib.util.spec_from_file_location(module_name, graded)
    module = importlib.util.module_from_spec(found)
    sys.modules[module_name] = module
    found.loader.exec_module(module)
    checks = getattr(module, "CHECKS", None)
    if not isinstance(checks, list) or not all(isinstance(c, Check) for c in checks):
        raise ValueError(f"{graded} must define CHECKS = [...] of checks")
    public = [c.name for c in checks if c.public]
    if public:
        raise ValueError(f"{graded}: graded checks must have public=False; got {public}")
    return checks


def load_exercises(extra_dirs: Sequence[str | Path] = ()) -> dict[str, Exercise]:
    """All exercises: the book's, then each ``--exercises DIR`` (later ones may override).

    A specification is a ``.py`` file with a top-level ``EXERCISE = ...``; other files in the
    folder (reference solutions, helpers) are left alone. A book exercise gets its
    graded-only checks from the instructor material where that is installed; elsewhere it
    has its public checks only and ``complete`` is False.

    Raises
    ------
    ValueError
        If a folder does not exist or a specification in it is invalid.
    """
    exercises = {}
    for directory in [BUILTIN_DIR, *map(Path, extra_dirs)]:
        if not directory.is_dir():
            raise ValueError(f"--exercises: {directory} is not a folder")
        for path in sorted(directory.glob("*.py")):
            # Reference solutions and helpers may sit next to the specifications.
            if path.name.startswith("_") or not _DEFINES_EXERCISE.search(path.read_text()):
                continue
            exercise = load_file(path)
            if directory == BUILTIN_DIR:
                hidden = [c.name for c in exercise.checks if not c.public]
                if hidden:
                    raise ValueError(
                        f"{path}: a book specification ships to students and must hold public "
                        f"checks only; move {hidden} to solutions/{instructor.GRADED}/{path.name}"
                    )
                graded = _graded_checks(path)
                if graded is None:
                    exercise = dataclasses.replace(exercise, complete=False)
                else:
                    exercise = dataclasses.replace(exercise, checks=[*exercise.checks, *graded])
                    exercise.validate()
            exercises[exercise.id] = exercise
    return exercises
