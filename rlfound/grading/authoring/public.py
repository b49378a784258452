"""What the students' wheel knows of each book exercise: its starter and the expected outputs of
its public checks, recorded from the reference solutions when the wheel is built.

``rlfound check`` must work where no reference solution is installed. A public check draws its
inputs from the fixed public seed, so the reference's outputs on those inputs can be computed
once, at build time, by running every public check's ``prepare`` against a
:class:`Recorder` around the real reference. The student's install replays them through a
:class:`RecordedReference`, which answers exactly the calls that were recorded, each keyed by
the function's name and a digest of its arguments, and refuses any other. Gradient and
property checks never ask the reference; graded-only checks are not recorded at all.

The data of one exercise is ``public_data/<exercise id>.json`` inside this package, written by
the build (``setup.py``) and absent from the repository; a checkout computes the same data from
its references on demand.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from rlfound.grading.authoring import instructor, starter
from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.sandbox.inside import protocol

__all__ = [
    "DATA_DIR",
    "FORMAT",
    "RecordedReference",
    "Recorder",
    "call_key",
    "public_data",
    "public_reference",
    "public_starter",
    "public_starter_notebook",
    "record_exercise",
    "write_public_data",
]

#: Where the build writes the recorded data, one JSON file per exercise.
DATA_DIR = Path(__file__).resolve().parent / "public_data"
#: Version of the data format; a file of another version is refused, not misread.
FORMAT = 1


def _canonical(value):
    """Arguments as plain, ordered JSON data (arrays with their dtype and shape)."""
    if isinstance(value, dict):
        return {"__dict__": [[str(k), _canonical(v)] for k, v in sorted(value.items())]}
    if isinstance(value, np.ndarray) and value.dtype.name in protocol.DTYPES:
        return protocol.encode_value(value)
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    try:
        return protocol.encode_value(value)
    except TypeError:
        return {"__repr__": repr(value)}


def call_key(function: str, kwargs: dict) -> str:
    """Digest of one reference call: the function's name and its arguments, exactly."""
    text = json.dumps([function, _canonical(kwargs)], sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _encode_output(value):
    if isinstance(value, dict):
        return {"__dict__": [[k, _encode_output(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [_encode_output(item) for item in value]
    if isinstance(value, np.ndarray) and value.dtype.name not in protocol.DTYPES:
        value = np.asarray(value, dtype=np.float64)
    return protocol.encode_value(value)


def _decode_output(data):
    if isinstance(data, dict) and set(data) == {"__dict__"}:
        return {k: _decode_output(v) for k, v in data["__dict__"]}
    if isinstance(data, list):
        return [_decode_output(item) for item in data]
    return protocol.decode_value(data)


class Recorder:
    """The reference module, with every call of a function kept as ``key -> output``."""

    def __init__(self, module):
        self._module = module
        self.calls: dict[str, object] = {}

    def __getattr__(self, name):
        target = getattr(self._module, name)
        if not callable(target):
            return target

        def call(*args, **kwargs):
            output = target(*args, **kwargs)
            self.calls[call_key(name, {"*": list(args), **kwargs})] = _encode_output(output)
            return output

        return call


class RecordedReference:
    """Stands in for the reference module where it is not installed: a function call returns
    the output recorded for exactly these arguments.

    Raises
    ------
    ValueError
        From a call that was not recorded (other arguments, or data from another build).
    """

    def __init__(self, exercise_id: str, calls: dict, numpy_version: str):
        self._id = exercise_id
        self._calls = calls
        self._numpy = numpy_version

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            key = call_key(name, {"*": list(args), **kwargs})
            if key not in self._calls:
                raise ValueError(
                    f"the public checks of {self._id!r} asked for an output that was not "
                    f"recorded when this rlfound was built (with NumPy {self._numpy}; here "
                    f"{np.__version__}): reinstall rlfound, or ask your instructor"
                )
            return _decode_output(self._calls[key])

        return call


def record_exercise(exercise: Exercise) -> dict:
    """The public data of ``exercise``, computed from its reference solution (trusted code).

    Every public check is prepared once with the public seed against a :class:`Recorder`;
    graded-only checks are skipped, so nothing of theirs is recorded.
    """
    recorder = Recorder(exercise.reference())
    for check in exercise.checks:
        if check.public:
            check.prepare(exercise.rng(check, None), recorder)
    return {
        "format": FORMAT,
        "exercise": exercise.id,
        "numpy": np.__version__,
        "starter": starter.starter_source(exercise),
        "calls": recorder.calls,
    }


def write_public_data(exercises, folder: Path) -> list[Path]:
    """Write :func:`record_exercise` of every exercise into ``folder`` (the build calls this)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for exercise in exercises:
        path = folder / f"{exercise.id}.json"
        path.write_text(json.dumps(record_exercise(exercise), sort_keys=True, allow_nan=False))
        written.append(path)
    return written


def public_data(exercise: Exercise) -> dict:
    """The recorded data of a book exercise: from the wheel's file, else (a checkout)
    computed from the reference.

    Raises
    ------
    ValueError
        If there is neither: an install without its public data (a broken build).
    """
    path = DATA_DIR / f"{exercise.id}.json"
    if path.is_file():
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT or data.get("exercise") != exercise.id:
            raise ValueError(f"{path} is not public data of format {FORMAT} for {exercise.id!r}")
        return data
    if exercise.solution_path.is_file():
        return record_exercise(exercise)
    raise ValueError(
        f"the public check data of {exercise.id!r} is missing from this install ({path}); "
        f"reinstall rlfound from its wheel"
    )


def public_reference(exercise: Exercise):
    """What the public checks of ``exercise`` compare with: the reference solution where it
    is here (the teaching team, an instructor's own exercise), else the recorded outputs."""
    if exercise.solution_path.is_file():
        return exercise.reference()
    if not exercise.builtin:
        raise instructor.InstructorMissing(f"the reference solution of {exercise.id!r}")
    data = public_data(exercise)
    return RecordedReference(exercise.id, data["calls"], data["numpy"])


def public_starter(exercise: Exercise) -> str:
    """The student starter: made from the reference solution where it is here, else the one
    recorded in the wheel (the same text)."""
    if exercise.solution_path.is_file():
        return starter.starter_source(exercise)
    return public_data(exercise)["starter"]


def public_starter_notebook(exercise: Exercise) -> str:
    """:func:`public_starter` as a notebook."""
    return starter.starter_notebook(exercise, public_starter(exercise))
