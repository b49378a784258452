"""A class of hand-ins in every layout a course meets, built from shared parts.

:func:`make_mixed_class` writes a class folder of 30 students for the two-exercise assignment
``gae-recursion`` + ``group-advantages``, in mixed layouts, and returns what
:func:`rlfound.grading.intake.collect` must find in it (:class:`MixedClass`): for each row
key, its layout, Canvas's user id and late mark, whether it is refused (the zip bomb), and
which answer each exercise holds (``"reference"``: the reference solution, full marks;
``"starter"``: the untouched starter, zero on every check; ``None``: no file for it). One
roster student (``zoe``) has no hand-in at all.

The layouts (keys in brackets):

* 11 per-student folders [ana, ben, cai, dev, eli, fay, gus, hal, sam, tess, uma]: the two
  files at the top, in a subfolder, or deeper (sam: ``hw1/src/``); hal answers gae-recursion
  in a notebook; fay's folder also holds a ``.ipynb_checkpoints`` copy and a PDF (both
  skipped); tess hands in one file without headers, named by neither exercise, holding both
  (the only file of a hand-in answers every exercise); uma hands in only gae-recursion;
* 6 per-student zips [ivy, jon, kim, lea, max, ned]: a folder inside (ivy), loose files
  (jon), a Windows-style zip whose names use backslashes (kim), a zip made on macOS with its
  ``__MACOSX`` copies (lea), one file named by the exercise id with a dash (max); ned's zip is
  a zip bomb (a few KB that expand past the cap): refused, a failure for ned only;
* a Canvas bulk download of 8 students [chenli, doejohn, garciaal, leeann, nguyenbao,
  okaforchi, parkmin, smithjane]: leeann's files carry ``late``, parkmin uploaded one zip,
  garciaal handed gae-recursion in again (``gae_recursion-1.py``);
* 2 notebooks [nina, omar] and 3 ``.py`` files [pia, quinn, ravi], each one file holding both
  exercises (a header line for each);
* the roster's ``zoe`` handed in nothing.

Files carry the starter's ``# rlfound exercise:`` header except where the layout tests
matching by file name (jon, max, Canvas's chenli) or the only-file rule (tess).
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path

import nbformat

from rlfound.grading import load_exercises
from rlfound.grading.authoring.starter import header, starter_source

EXERCISE_IDS = ("gae-recursion", "group-advantages")
EXERCISES = load_exercises()
MISSING = "zoe"


@dataclasses.dataclass(frozen=True)
class Student:
    """What :func:`~rlfound.grading.intake.collect` must find for one student."""

    key: str
    layout: str
    answers: dict[str, str | None]
    lms_id: str | None = None
    late_mark: bool | None = None
    refused: bool = False


@dataclasses.dataclass(frozen=True)
class MixedClass:
    """The class folder, every student expected in it by key, and the roster's names."""

    folder: Path
    students: dict[str, Student]
    roster: tuple[str, ...]


def answer(exercise_id: str, kind: str, *, with_header: bool = True) -> str:
    """The text of a file answering ``exercise_id``: the reference or the starter."""
    exercise = EXERCISES[exercise_id]
    if kind == "starter":
        text = starter_source(exercise)
        return text if with_header else text.split("\n", 4)[-1]
    text = exercise.solution_path.read_text(encoding="utf-8")
    return header(exercise) + "\n" + text if with_header else text


def combined(kinds: dict[str, str]) -> str:
    """One file answering several exercises (``from __future__`` lines dropped, so the parts
    can follow one another)."""
    parts = []
    for exercise_id, kind in kinds.items():
        lines = answer(exercise_id, kind).splitlines()
        parts.append("\n".join(x for x in lines if x != "from __future__ import annotations"))
    return "\n\n".join(parts) + "\n"


def notebook(*sources: str) -> str:
    """A notebook with a Markdown cell and one code cell per source."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# My answers")]
    book.cells += [nbformat.v4.new_code_cell(source) for source in sources]
    return nbformat.writes(book)


def write_zip(path: Path, members: dict[str, str | bytes], *, compress: bool = True) -> None:
    """A zip of ``members`` (name → text or bytes), names written as given."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def zip_bomb(path: Path, expanded_bytes: int, name: str = "gae_recursion.py") -> None:
    """A real zip bomb: one member of ``expanded_bytes`` spaces, a few KB on disk."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open(name, "w", force_zip64=True) as member:
            block = b" " * (1 << 20)
            for _ in range(expanded_bytes // len(block)):
                member.write(block)
    path.write_bytes(buffer.getvalue())


def _pattern(index: int) -> dict[str, str]:
    """Who answers what: most hand in both references; some a starter, so scores differ."""
    return {
        "gae-recursion": "starter" if index % 5 == 3 else "reference",
        "group-advantages": "starter" if index % 7 == 4 else "reference",
    }


def _files_of(kinds: dict[str, str], *, with_header=True) -> dict[str, str]:
    return {
        exercise_id.replace("-", "_") + ".py": answer(exercise_id, kind, with_header=with_header)
        for exercise_id, kind in kinds.items()
    }


def make_mixed_class(tmp_path: Path) -> MixedClass:
    """Write the class described in the module docstring into ``tmp_path / "class"``."""
    folder = tmp_path / "class"
    folder.mkdir()
    students: dict[str, Student] = {}
    index = 0

    def expect(key, layout, kinds, **extra):
        nonlocal index
        answers = {exercise_id: kinds.get(exercise_id) for exercise_id in EXERCISE_IDS}
        students[key] = Student(key, layout, answers, **extra)
        index += 1

    # Per-student folders.
    for key, where in [
        ("ana", ""),
        ("ben", ""),
        ("cai", "hw1/"),
        ("dev", ""),
        ("eli", "answers/"),
        ("fay", ""),
        ("gus", ""),
    ]:
        kinds = _pattern(index)
        for name, text in _files_of(kinds).items():
            target = folder / key / where / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        expect(key, "folder", kinds)
    checkpoints = folder / "fay" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "gae_recursion-checkpoint.py").write_text(answer("gae-recursion", "starter"))
    (folder / "fay" / "report.pdf").write_bytes(b"%PDF-1.4 not code")
    kinds = _pattern(index)
    (folder / "hal").mkdir()
    (folder / "hal" / "gae_recursion.ipynb").write_text(
        notebook(answer("gae-recursion", kinds["gae-recursion"]))
    )
    (folder / "hal" / "group_advantages.py").write_text(
        answer("group-advantages", kinds["group-advantages"])
    )
    expect("hal", "folder", kinds)
    kinds = _pattern(index)
    for name, text in _files_of(kinds).items():
        target = folder / "sam" / "hw1" / "src" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    expect("sam", "folder", kinds)
    kinds = {"gae-recursion": _pattern(index)["gae-recursion"]}
    (folder / "uma").mkdir()
    (folder / "uma" / "gae_recursion.py").write_text(
        answer("gae-recursion", kinds["gae-recursion"])
    )
    expect("uma", "folder", kinds)
    kinds = _pattern(index)
    (folder / "tess").mkdir()
    (folder / "tess" / "my_answers.py").write_text(
        "\n".join(x for x in combined(kinds).splitlines() if not x.startswith("# rlfound"))
    )
    expect("tess", "folder", kinds)

    # Per-student zips.
    kinds = _pattern(index)
    write_zip(folder / "ivy.zip", {f"ivy/{n}": t for n, t in _files_of(kinds).items()})
    expect("ivy", "zip", kinds)
    kinds = _pattern(index)
    write_zip(folder / "jon.zip", _files_of(kinds, with_header=False))
    expect("jon", "zip", kinds)
    kinds = _pattern(index)
    write_zip(folder / "kim.zip", {f"kim\\hw1\\{n}": t for n, t in _files_of(kinds).items()})
    expect("kim", "zip", kinds)
    kinds = _pattern(index)
    members = {f"lea/{n}": t for n, t in _files_of(kinds).items()}
    members |= {f"__MACOSX/lea/._{n}": b"\x00\x05\x16\x07" for n in _files_of(kinds)}
    write_zip(folder / "lea.zip", members)
    expect("lea", "zip", kinds)
    kinds = _pattern(index)
    write_zip(
        folder / "max.zip",
        {
            "gae-recursion.py": answer("gae-recursion", kinds["gae-recursion"], with_header=False),
            "group_advantages.py": answer("group-advantages", kinds["group-advantages"]),
        },
    )
    expect("max", "zip", kinds)
    zip_bomb(folder / "ned.zip", 64 * 1024**2)
    expect("ned", "zip", {}, refused=True)

    # A Canvas bulk download, unpacked into the class folder.
    canvas = [
        ("chenli", "1001", False),
        ("doejohn", "1002", False),
        ("garciaal", "1003", False),
        ("leeann", "1004", True),
        ("nguyenbao", "1005", False),
        ("okaforchi", "1006", False),
        ("parkmin", "1007", False),
        ("smithjane", "1008", False),
    ]
    for number, (key, user, late) in enumerate(canvas):
        kinds = _pattern(index)
        prefix = f"{key}{'_late' if late else ''}_{user}_{50000 + number}_"
        texts = _files_of(kinds, with_header=key != "chenli")
        if key == "parkmin":
            write_zip(folder / f"{prefix}hw1.zip", {f"hw1/{n}": t for n, t in texts.items()})
        else:
            for name, text in texts.items():
                if key == "garciaal" and name == "gae_recursion.py":
                    name = "gae_recursion-1.py"
                (folder / f"{prefix}{name}").write_text(text)
        expect(key, "canvas", kinds, lms_id=user, late_mark=late)

    # Notebooks and .py files that answer both exercises in one file.
    for key in ("nina", "omar"):
        kinds = _pattern(index)
        sources = [
            answer(e, k).replace("from __future__ import annotations\n", "")
            for e, k in kinds.items()
        ]
        (folder / f"{key}.ipynb").write_text(notebook(*sources))
        expect(key, "notebook", kinds)
    for key in ("pia", "quinn", "ravi"):
        kinds = _pattern(index)
        (folder / f"{key}.py").write_text(combined(kinds))
        expect(key, "file", kinds)

    roster = tuple(sorted([*students, MISSING]))
    return MixedClass(folder, students, roster)
