"""Intake of a course's hand-ins in every layout (rlfound.grading.intake.layouts): files,
notebooks, per-student folders, zips extracted safely, Canvas downloads, Gradescope exports."""

from __future__ import annotations

import csv
import datetime
import gc
import io
import os
import stat
import warnings
import zipfile
from pathlib import Path

import nbformat
import pytest
from _class_fixtures import (
    EXERCISE_IDS,
    MISSING,
    answer,
    make_mixed_class,
    write_zip,
    zip_bomb,
)
from _grading_helpers import run_cli

from rlfound.grading.intake import archives, collect, collect_all, find_exercise_file, lms
from rlfound.grading.intake.layouts import MAX_DEPTH, exercise_entry

GAE = answer("gae-recursion", "reference")
GROUP = answer("group-advantages", "reference")


def only(folder: Path):
    """The one hand-in of a class folder."""
    (hand_in,) = collect(folder)
    return hand_in


def text_of(entry) -> str:
    """A file's code as a student wrote it (a notebook's code cells joined)."""
    data = entry.path.read_text(encoding="utf-8")
    if entry.path.suffix != ".ipynb":
        return data
    cells = nbformat.reads(data, as_version=4).cells
    return "\n".join(cell.source for cell in cells if cell.cell_type == "code")


def body(exercise_id: str, kind: str) -> str:
    """The part of an answer every layout of the fixture keeps verbatim."""
    text = answer(exercise_id, kind, with_header=False)
    return text.split("from __future__ import annotations\n")[-1].strip()


# ---------------------------------------------------------------- the mixed class


def test_a_mixed_class_gives_every_student_once_with_the_file_of_each_exercise(tmp_path):
    course = make_mixed_class(tmp_path)
    hand_ins = collect(course.folder)
    assert [h.student for h in hand_ins] == sorted(course.students)
    assert len(hand_ins) == 30 and MISSING not in {h.student for h in hand_ins}
    for hand_in in hand_ins:
        expected = course.students[hand_in.student]
        assert hand_in.layout == expected.layout, hand_in.student
        assert hand_in.lms_id == expected.lms_id, hand_in.student
        assert hand_in.late_mark == expected.late_mark, hand_in.student
        assert hand_in.submitted_at is None  # no layout of this class carries a time
        assert (hand_in.problem is not None) == expected.refused, hand_in.student
        for exercise_id in EXERCISE_IDS:
            found = find_exercise_file(hand_in, exercise_id, exercise_id.replace("-", "_"))
            kind = expected.answers[exercise_id]
            if kind is None:
                assert found is None, (hand_in.student, exercise_id)
                continue
            assert found is not None and found.name == hand_in.student
            assert body(exercise_id, kind) in text_of(found), (hand_in.student, exercise_id)
    by_key = {h.student: h for h in hand_ins}
    assert dict(by_key["fay"].skipped) == {
        str(course.folder / "fay" / ".ipynb_checkpoints"): archives.hidden_reason(".x"),
        str(course.folder / "fay" / "report.pdf"): "not a .py or .ipynb file",
    }
    assert by_key["ned"].problem == (
        f"{course.folder / 'ned.zip'} was not extracted: the archive holds a file larger than "
        f"{archives.HAND_IN.max_file_bytes} bytes (a zip bomb?): gae_recursion.py"
    )
    assert by_key["ned"].files == ()
    assert hand_ins.skipped == []


def test_the_key_does_not_change_when_a_second_file_appears(tmp_path):
    folder = tmp_path / "class"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "gae_recursion.py").write_text(GAE)
    write_zip(folder / "bob.zip", {"gae_recursion.py": GAE})
    (folder / "smithjane_12_345_gae_recursion.py").write_text(GAE)
    first = [(h.student, h.layout, len(h.files)) for h in collect(folder)]
    assert first == [("alice", "folder", 1), ("bob", "zip", 1), ("smithjane", "canvas", 1)]
    (folder / "alice" / "group_advantages.py").write_text(GROUP)
    write_zip(folder / "bob.zip", {"gae_recursion.py": GAE, "group_advantages.py": GROUP})
    (folder / "smithjane_12_345_group_advantages.py").write_text(GROUP)
    second = [(h.student, h.layout, len(h.files)) for h in collect(folder)]
    assert second == [("alice", "folder", 2), ("bob", "zip", 2), ("smithjane", "canvas", 2)]


def test_look_alikes_never_take_a_classmates_row_and_keys_are_stable(tmp_path):
    folder = tmp_path / "class"
    for name in ("alice", "alice!", "Ana María"):
        (folder / name).mkdir(parents=True)
        (folder / name / "gae_recursion.py").write_text(GAE)
    # Two Canvas users with the same "lastfirst": neither takes the plain name.
    (folder / "smithjo_1_10_gae_recursion.py").write_text(GAE)
    (folder / "smithjo_2_20_gae_recursion.py").write_text(GAE)
    keys = [h.student for h in collect(folder)]
    assert keys == [h.student for h in collect(folder)]  # the same every time
    assert "alice" in keys and len(set(keys)) == 5
    others = sorted(k for k in keys if k != "alice")
    assert others[0].startswith("Ana_Mar_a-") and others[1].startswith("alice-")
    assert all(k.startswith("smithjo-") for k in others[2:])
    for key in keys:
        assert key.replace("-", "").replace("_", "").isalnum(), key


# ---------------------------------------------------------------- each layout


def test_a_file_and_a_notebook_named_directly_are_one_hand_in_each(tmp_path):
    (tmp_path / "alice.py").write_text(GAE)
    (tmp_path / "bob.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    (tmp_path / "carol.txt").write_text(GAE)  # named directly: graded whatever its name
    found = collect_all([tmp_path / "alice.py", tmp_path / "bob.ipynb", tmp_path / "carol.txt"])
    assert [(h.student, h.layout) for h in found] == [
        ("alice", "file"),
        ("bob", "notebook"),
        ("carol", "file"),
    ]
    alice = found[0]
    assert find_exercise_file(alice, "gae-recursion", "gae_recursion") == alice.files[0]
    assert alice.files[0].file_name == str(tmp_path / "alice.py")


def test_a_student_folder_is_read_down_to_the_depth_cap_and_never_through_a_link(tmp_path):
    student = tmp_path / "class" / "alice"
    deep = student.joinpath(*["d"] * MAX_DEPTH)
    deep.mkdir(parents=True)
    (deep / "gae_recursion.py").write_text(GAE)
    (deep / "too_deep").mkdir()
    (deep / "too_deep" / "group_advantages.py").write_text(GROUP)
    (student / "linked.py").symlink_to(tmp_path / "elsewhere.py")
    (student / "linkdir").symlink_to(tmp_path)
    (student / "inner.zip").write_bytes(b"PK")
    os.mkfifo(student / "pipe")
    hand_in = only(tmp_path / "class")
    # A folder's files first, then its folders.
    assert [e.path for e in hand_in.files] == [student / "linked.py", deep / "gae_recursion.py"]
    link = hand_in.files[0]
    assert link.problem == "a symbolic link, not a regular file: not read"
    shown = str(student)
    assert dict(hand_in.skipped) == {
        f"{deep}/too_deep": f"nested deeper than {MAX_DEPTH} folders: not examined",
        f"{shown}/linkdir": "a symbolic link: not read",
        f"{shown}/inner.zip": "an archive inside a hand-in: not opened",
        f"{shown}/pipe": "a FIFO (named pipe): not read",
    }
    assert find_exercise_file(hand_in, "gae-recursion", "gae_recursion").path.name == (
        "gae_recursion.py"
    )


def test_entries_of_a_class_folder_that_are_not_hand_ins(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(GAE)
    (folder / "notes.txt").write_text("x")
    (folder / ".DS_Store").write_bytes(b"\0")
    (folder / "bob.py").mkdir()
    (folder / "carol.zip").symlink_to(tmp_path / "nowhere.zip")
    (folder / "elsewhere").symlink_to(tmp_path)
    found = collect(folder)
    rows = {h.student: h for h in found}
    assert sorted(rows) == ["alice", "bob", "carol"]
    assert rows["bob"].files[0].problem == "a folder, not a regular file: not read"
    assert rows["carol"].files[0].problem == "a symbolic link, not a regular file: not read"
    assert dict(found.skipped) == {
        f"{folder}/.DS_Store": archives.hidden_reason(".DS_Store"),
        f"{folder}/elsewhere": "a symbolic link: not read",
        f"{folder}/notes.txt": "not a .py, .ipynb or .zip file",
    }
    entry = exercise_entry(rows["carol"], "gae-recursion")
    assert entry.problem == "a symbolic link, not a regular file: not read"


def test_a_zip_inside_a_students_zip_is_listed_not_opened(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("group_advantages.py", GROUP)
    write_zip(
        folder / "alice.zip",
        {"gae_recursion.py": GAE, "more.zip": inner.getvalue(), "data.csv": "1,2"},
    )
    hand_in = only(folder)
    assert [e.file_name for e in hand_in.files] == [f"{folder}/alice.zip/gae_recursion.py"]
    assert dict(hand_in.skipped) == {
        f"{folder}/alice.zip/more.zip": "an archive inside an archive: not opened",
        f"{folder}/alice.zip/data.csv": "not a .py or .ipynb file",
    }


# ---------------------------------------------------------------- archives refused


def _zip_with(path: Path, name: str, data: bytes = b"x = 1\n", mode: int | None = None):
    info = zipfile.ZipInfo(name)
    if mode is not None:
        info.create_system = 3  # Unix, so that the mode is read
        info.external_attr = mode << 16
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(info, data)


REFUSED = {
    "dotdot": (
        lambda p: _zip_with(p, "../x.py"),
        "the archive holds a path that leaves its folder (..): ../x.py",
    ),
    "dotdot-backslash": (
        lambda p: _zip_with(p, "a\\..\\..\\x.py"),
        "the archive holds a path that leaves its folder (..): a\\..\\..\\x.py",
    ),
    "absolute": (
        lambda p: _zip_with(p, "/etc/x.py"),
        "the archive holds an absolute path: /etc/x.py",
    ),
    "drive": (
        lambda p: _zip_with(p, "C:/x.py"),
        "the archive holds an absolute path: C:/x.py",
    ),
    "symlink": (
        lambda p: _zip_with(p, "gae_recursion.py", b"/etc/passwd", stat.S_IFLNK | 0o777),
        "the archive holds a symbolic link: gae_recursion.py",
    ),
    "device": (
        lambda p: _zip_with(p, "tty.py", b"", stat.S_IFCHR | 0o666),
        "the archive holds a device: tty.py",
    ),
    "fifo": (
        lambda p: _zip_with(p, "pipe.py", b"", stat.S_IFIFO | 0o666),
        "the archive holds a FIFO (named pipe): pipe.py",
    ),
    "too-deep": (
        lambda p: _zip_with(p, "/".join(["d"] * (archives.HAND_IN.max_depth + 1)) + "/x.py"),
        f"the archive nests a member deeper than {archives.HAND_IN.max_depth} folders: "
        + "/".join(["d"] * (archives.HAND_IN.max_depth + 1))
        + "/x.py",
    ),
    "long-name": (
        lambda p: _zip_with(p, "é" * 128 + ".py"),
        "the archive holds a name longer than 255 bytes: " + "é" * 128 + ".py",
    ),
    "not-a-zip": (
        lambda p: p.write_bytes(b"PK\x03\x04 this is not really a zip"),
        "not a readable zip archive (BadZipFile: File is not a zip file)",
    ),
    "header-bomb": (
        lambda p: zip_bomb(p, 8 * 1024**2),
        f"the archive holds a file larger than {archives.HAND_IN.max_file_bytes} bytes "
        "(a zip bomb?): gae_recursion.py",
    ),
}


def _duplicates(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate; that is the point
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("gae_recursion.py", GAE)
            archive.writestr("gae_recursion.py", "x = 1\n")


def _file_and_folder(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hw", "a file")
        archive.writestr("hw/gae_recursion.py", GAE)


REFUSED["duplicate"] = (_duplicates, "the archive holds the same name twice: gae_recursion.py")
REFUSED["file-and-folder"] = (
    _file_and_folder,
    "the archive holds the same name twice: hw/gae_recursion.py",
)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_hostile_zip_is_that_students_failure_and_leaves_no_file(tmp_path, case):
    build, reason = REFUSED[case]
    folder = tmp_path / "class"
    folder.mkdir()
    build(folder / "mallory.zip")
    (folder / "alice.py").write_text(GAE)
    alice, mallory = collect(folder)
    assert alice.problem is None and len(alice.files) == 1
    assert mallory.student == "mallory" and mallory.files == ()
    assert mallory.problem == f"{folder / 'mallory.zip'} was not extracted: {reason}"
    entry = exercise_entry(mallory, "gae-recursion")
    assert entry.problem == mallory.problem and entry.name == "mallory"
    workspace = mallory.workspace.root
    assert workspace.is_dir() and list(workspace.iterdir()) == []  # nothing half-extracted


def test_a_zip_bomb_past_the_total_is_stopped_by_the_bytes_written(tmp_path):
    """Every member is under the per-file cap; together they expand past the total."""
    folder = tmp_path / "class"
    folder.mkdir()
    size = archives.HAND_IN.max_file_bytes
    count = archives.HAND_IN.max_total_bytes // size + 1
    members = {f"part{n:02d}.py": b"#" * size for n in range(count)}
    write_zip(folder / "mallory.zip", members)
    assert (folder / "mallory.zip").stat().st_size < 200 * 1024  # a few KB per member
    (mallory,) = collect(folder)
    assert mallory.problem == (
        f"{folder / 'mallory.zip'} was not extracted: the archive expands past "
        f"{archives.HAND_IN.max_total_bytes} bytes in all (a zip bomb?)"
    )
    assert list(mallory.workspace.root.iterdir()) == []


def test_a_zip_whose_header_lies_about_its_size_is_refused(tmp_path):
    """The header says 6 bytes; the data expands to a megabyte: never more than 6 written."""
    path = tmp_path / "liar.zip"
    write_zip(path, {"gae_recursion.py": b"x" * (1 << 20)})
    data = bytearray(path.read_bytes())
    real = (1 << 20).to_bytes(4, "little")
    for offset in (22, data.rindex(b"PK\x01\x02") + 24):  # local and central file sizes
        assert data[offset : offset + 4] == real
        data[offset : offset + 4] = (6).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(archives.ArchiveError) as refused:
        archives.extract(path, tmp_path / "out", lambda member: 1 << 20)
    assert str(refused.value) == (
        "not a readable zip archive (BadZipFile: Bad CRC-32 for file 'gae_recursion.py')"
    )
    assert not (tmp_path / "out").exists()


def test_the_caps_on_members_and_files(tmp_path, monkeypatch):
    small = archives.Limits(
        max_members=3,
        max_files=2,
        max_total_bytes=10**6,
        max_file_bytes=10**5,
        max_depth=2,
        max_archive_bytes=10**6,
    )
    monkeypatch.setattr(archives, "HAND_IN", small)
    folder = tmp_path / "class"
    folder.mkdir()
    write_zip(folder / "many.zip", {f"{n}.py": "x = 1\n" for n in range(4)})
    write_zip(folder / "files.zip", {f"{n}.py": "x = 1\n" for n in range(3)})
    write_zip(folder / "ok.zip", {"notes.md": "", "a.py": "", "b.py": ""})
    # An end record that claims one member, before a listing of eight long names: refused
    # from the listing's size, before zipfile reads it.
    liar = folder / "liar.zip"
    write_zip(liar, {f"{n}{'x' * 200}.py": "" for n in range(8)})
    data = bytearray(liar.read_bytes())
    end = data.rindex(b"PK\x05\x06")
    data[end + 8 : end + 12] = (1).to_bytes(2, "little") * 2
    liar.write_bytes(bytes(data))
    found = {h.student: h for h in collect(folder)}
    assert found["liar"].problem.endswith("the archive's listing is larger than 3 entries can be")
    assert found["many"].problem.endswith("the archive holds more than 3 entries")
    assert found["files"].problem.endswith("the archive holds more than 2 files")
    assert found["ok"].problem is None and len(found["ok"].files) == 2


def test_extracted_files_go_when_the_hand_ins_go(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    write_zip(folder / "alice.zip", {"gae_recursion.py": GAE})
    hand_ins = collect(folder)
    root = hand_ins[0].workspace.root
    extracted = hand_ins[0].files[0].path
    assert extracted.read_text() == GAE and extracted.is_relative_to(root)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    del hand_ins
    gc.collect()
    assert not root.exists()


# ---------------------------------------------------------------- Canvas


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "smithjane_4321_98765_gae_recursion.py",
            ("smithjane", "4321", "98765", "gae_recursion.py", False),
        ),
        (
            "smithjane_late_4321_98765_gae_recursion.py",
            ("smithjane", "4321", "98765", "gae_recursion.py", True),
        ),
        ("doejohn_LATE_7_8_hw 1.ipynb", ("doejohn", "7", "8", "hw 1.ipynb", True)),
        ("alice.py", None),
        ("alice_12_gae.py", None),
        ("lateone_1_2_x.py", ("lateone", "1", "2", "x.py", False)),
    ],
)
def test_canvas_names_with_and_without_late(name, expected):
    parsed = lms.canvas_name(name)
    if expected is None:
        assert parsed is None
    else:
        got = (parsed.student, parsed.user_id, parsed.submission_id, parsed.file_name)
        assert (*got, parsed.late) == expected


def test_a_canvas_bulk_download_zip_named_directly(tmp_path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("hw1/gae_recursion.py", GAE)
        archive.writestr("hw1/group_advantages.py", GROUP)
    download = tmp_path / "submissions.zip"
    write_zip(
        download,
        {
            "smithjane_4321_98765_gae_recursion.py": GAE,
            "smithjane_4321_98765_report.pdf": b"%PDF",
            "doejohn_late_1234_55555_hw1.zip": inner.getvalue(),
            "leeann_999_111_gae_recursion-2.py": GAE,
        },
    )
    found = collect(download)
    rows = {h.student: h for h in found}
    assert sorted(rows) == ["doejohn", "leeann", "smithjane"]
    assert [(rows[k].lms_id, rows[k].late_mark) for k in sorted(rows)] == [
        ("1234", True),
        ("999", False),
        ("4321", False),
    ]
    assert all(h.layout == "canvas" for h in found)
    assert len(rows["doejohn"].files) == 2
    assert found.skipped == [
        (f"{download}/smithjane_4321_98765_report.pdf", "not a .py, .ipynb or .zip file")
    ]
    # Canvas's "-2" for a file handed in again does not hide which exercise it answers.
    assert find_exercise_file(rows["leeann"], "gae-recursion", "gae_recursion") is not None
    assert find_exercise_file(
        rows["doejohn"], "group-advantages", "group_advantages"
    ).file_name == (f"{download}/doejohn_late_1234_55555_hw1.zip/hw1/group_advantages.py")


def test_one_oversized_file_does_not_get_a_class_archive_refused(tmp_path):
    download = tmp_path / "submissions.zip"
    huge = b" " * (archives.HAND_IN.max_file_bytes + 1)
    write_zip(
        download,
        {"smithjane_4321_98765_gae_recursion.py": GAE, "doejohn_1_2_gae_recursion.py": huge},
    )
    found = collect(download)
    assert [(h.student, h.lms_id, len(h.files)) for h in found] == [
        ("doejohn", "1", 0),
        ("smithjane", "4321", 1),
    ]
    # The oversized file is its student's failure, not a skipped entry.
    assert found[0].problem == (
        f"{download}/doejohn_1_2_gae_recursion.py is larger than "
        f"{archives.HAND_IN.max_file_bytes} bytes: not extracted"
    )
    assert found.skipped == []


def test_a_zip_of_loose_files_named_directly_is_one_students(tmp_path):
    path = tmp_path / "alice.zip"
    write_zip(path, {"alice/gae_recursion.py": GAE, "alice/group_advantages.py": GROUP})
    (hand_in,) = collect(path)
    assert (hand_in.student, hand_in.layout, len(hand_in.files)) == ("alice", "zip", 2)
    bomb = tmp_path / "bomb.zip"
    zip_bomb(bomb, 8 * 1024**2)
    (refused,) = collect(bomb)
    assert refused.student == "bomb" and refused.problem.startswith(f"{bomb} was not extracted")


def test_a_zipped_class_folder_named_directly(tmp_path):
    path = tmp_path / "hw1.zip"
    write_zip(
        path,
        {
            "hw1/alice/gae_recursion.py": GAE,
            "hw1/bob/gae_recursion.py": GAE,
            "hw1/bob/group_advantages.py": GROUP,
            "__MACOSX/hw1/._alice": b"\0",
        },
    )
    found = collect(path)
    assert [(h.student, h.layout, len(h.files)) for h in found] == [
        ("alice", "folder", 1),
        ("bob", "folder", 2),
    ]
    assert found[0].files[0].file_name == f"{path}/hw1/alice/gae_recursion.py"


# ---------------------------------------------------------------- Gradescope


METADATA = """\
submission_101:
  :submitters:
  - :name: Ana María López
    :sid: '20231'
    :email: ana@example.edu
  :created_at: 2026-03-01 23:59:30.123456000 -07:00
  :score: 11.0
  :status: processed
submission_102:
  :submitters:
  - :name: Ben Ode
    :sid: ''
    :email: ben@example.edu
  - :name: Cai Wu
    :sid: '20233'
    :email: cai@example.edu
  :created_at: '2026-03-02T08:15:00+05:30'
submission_103:
  :submitters:
  - :name: Dev Null
  :created_at: 2026-03-02 10:00:00
"""


def _export(root: Path, metadata: str = METADATA) -> Path:
    export = root / "assignment_77_export"
    for number in (101, 102, 103):
        (export / f"submission_{number}").mkdir(parents=True)
        (export / f"submission_{number}" / "gae_recursion.py").write_text(GAE)
    (export / "submission_101" / "group_advantages.py").write_text(GROUP)
    (export / "submission_metadata.yml").write_text(metadata)
    return export


def test_a_gradescope_export_gives_each_submitter_with_the_time_as_an_instant(tmp_path):
    export = _export(tmp_path)
    utc = datetime.timezone.utc
    for path in (export, tmp_path):  # the export, or the folder it was unzipped into
        rows = {h.student: h for h in collect(path)}
        assert sorted(rows) == ["20231", "20233", "Dev_Null", "ben_example.edu"]
        ana = rows["20231"]
        assert (ana.layout, ana.lms_id, len(ana.files)) == ("gradescope", "20231", 2)
        # 23:59:30 at -07:00 is 06:59:30 UTC the next day.
        assert ana.submitted_at == datetime.datetime(2026, 3, 2, 6, 59, 30, 123456, tzinfo=utc)
        assert ana.submitted_at.utcoffset() == datetime.timedelta(hours=-7)
        # A group: one hand-in per submitter, the same files and time.
        ben, cai = rows["ben_example.edu"], rows["20233"]
        assert ben.lms_id == "ben@example.edu" and cai.lms_id == "20233"
        assert ben.files[0].path == cai.files[0].path
        assert (
            ben.submitted_at == cai.submitted_at == datetime.datetime(2026, 3, 2, 2, 45, tzinfo=utc)
        )
        # A time without an offset is UTC (YAML's rule).
        assert rows["Dev_Null"].submitted_at == datetime.datetime(2026, 3, 2, 10, tzinfo=utc)
        assert rows["Dev_Null"].lms_id is None


def test_a_zipped_gradescope_export(tmp_path):
    export = _export(tmp_path / "unzipped")
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(export.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(export.parent))
    rows = {h.student: h for h in collect(path)}
    assert sorted(rows) == ["20231", "20233", "Dev_Null", "ben_example.edu"]
    assert rows["20231"].files[0].file_name == (
        f"{path}/assignment_77_export/submission_101/gae_recursion.py"
    )


@pytest.mark.parametrize(
    "metadata, reason",
    [
        (
            "!!python/object/apply:os.system ['echo owned']\n",
            "submission_metadata.yml is not readable YAML (could not determine a constructor "
            "for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("- a list\n", "submission_metadata.yml does not map submission folders to their entries"),
        ("[" * 5000, "submission_metadata.yml is not readable YAML ("),
    ],
)
def test_hostile_gradescope_metadata_is_refused_naming_the_path(tmp_path, metadata, reason):
    export = _export(tmp_path, metadata)
    with pytest.raises(ValueError) as refused:
        collect(export)
    assert str(refused.value).startswith(f"submissions path {export}: {reason}")


def test_gradescope_metadata_past_its_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(lms, "MAX_METADATA_BYTES", 100)
    export = _export(tmp_path)
    with pytest.raises(ValueError) as refused:
        collect(export)
    assert str(refused.value) == (
        f"submissions path {export}: submission_metadata.yml is larger than 100 bytes"
    )


# ---------------------------------------------------------------- finding the exercise


def test_which_file_answers_an_exercise(tmp_path):
    folder = tmp_path / "class"
    student = folder / "alice"
    student.mkdir(parents=True)
    (student / "mine.py").write_text(GAE)  # by header
    (student / "group_advantages.py").write_text(
        answer("group-advantages", "reference", with_header=False)
    )
    (student / "gae_recursion.py").write_text(answer("group-advantages", "starter"))
    hand_in = only(folder)
    assert find_exercise_file(hand_in, "gae-recursion", "gae_recursion").path.name == "mine.py"
    # The file named gae_recursion.py says in its header it answers group-advantages; with
    # the headerless group_advantages.py that is two claims by different ways: header wins.
    found = find_exercise_file(hand_in, "group-advantages", "group_advantages")
    assert found.path.name == "gae_recursion.py"
    assert find_exercise_file(hand_in, "ppo-clip", "ppo_clip") is None
    assert exercise_entry(hand_in, "ppo-clip").problem == (
        "has no file for ppo-clip: none has its '# rlfound exercise: ppo-clip' header or is "
        "named ppo_clip.py or ppo_clip.ipynb"
    )


@pytest.mark.parametrize("how", ["header", "name"])
def test_two_files_claiming_an_exercise_is_an_error_naming_both(tmp_path, how):
    student = tmp_path / "class" / "alice"
    (student / "v2").mkdir(parents=True)
    if how == "header":
        (student / "first.py").write_text(GAE)
        (student / "v2" / "second.ipynb").write_text(
            nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(GAE)]))
        )
        names = (f"{student}/first.py", f"{student}/v2/second.ipynb")
        by = "its header"
    else:
        plain = answer("gae-recursion", "reference", with_header=False)
        (student / "gae_recursion.py").write_text(plain)
        (student / "v2" / "Gae-Recursion.py").write_text(plain)
        names = (f"{student}/gae_recursion.py", f"{student}/v2/Gae-Recursion.py")
        by = "their names"
    hand_in = only(tmp_path / "class")
    message = f"alice: two files claim exercise gae-recursion by {by}: {names[0]} and {names[1]}"
    with pytest.raises(ValueError) as clash:
        find_exercise_file(hand_in, "gae-recursion", "gae_recursion")
    assert str(clash.value) == message
    assert exercise_entry(hand_in, "gae-recursion").problem == f"not graded: {message}"


def test_hostile_file_names_are_inert_and_keys_safe(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    names = ["\x1b[2Jclear", "名前", "a" * 250, "tab\there", "new\nline"]
    for name in names:
        (folder / name).mkdir()
        (folder / name / f"{name}.py").write_text(GAE)
    found = collect(folder)
    assert len(found) == len(names) and len({h.student for h in found}) == len(names)
    for hand_in in found:
        assert len(hand_in.student) <= 100
        assert all(c.isalnum() or c in "._-" for c in hand_in.student), hand_in.student
        shown = hand_in.files[0].file_name
        assert "\x1b" not in shown and len(shown) <= 200, shown
    shown = {h.files[0].file_name for h in found}
    assert any("\\x1b[2Jclear" in name for name in shown)


# ---------------------------------------------------------------- nothing to grade


def test_a_path_that_does_not_exist_or_holds_nothing_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ValueError) as refused:
        collect(missing)
    assert str(refused.value) == f"submissions path {missing} does not exist"
    empty = tmp_path / "empty"
    (empty / "alice").mkdir(parents=True)
    (empty / "notes.txt").write_text("no code")
    (empty / "alice" / "report.pdf").write_text("no code")
    with pytest.raises(ValueError) as refused:
        collect(empty)
    assert str(refused.value) == (
        f"submissions path {empty} holds no submission (no .py, .ipynb or .zip file, no "
        "student's folder with one)"
    )
    (tmp_path / "ok.py").write_text(GAE)
    with pytest.raises(ValueError, match="nowhere does not exist"):
        collect_all([tmp_path / "ok.py", missing])


def test_rlfound_grade_refuses_a_missing_or_empty_path_with_status_2(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    for path, reason in [
        (tmp_path / "nowhere", "does not exist"),
        (tmp_path / "empty", "holds no submission"),
    ]:
        status, _, err = run_cli(
            capsys, "grade", "gae-recursion", str(path), "--out", str(tmp_path / "out")
        )
        assert status == 2
        assert f"error: submissions path {path} {reason}" in err
    assert not (tmp_path / "out").exists()


def test_rlfound_grade_grades_folders_zips_and_canvas_files(capsys, tmp_path):
    """The single-exercise `rlfound grade`: each student's file is found in their hand-in."""
    folder = tmp_path / "class"
    (folder / "ana" / "hw1").mkdir(parents=True)
    (folder / "ana" / "hw1" / "gae_recursion.py").write_text(GAE)
    (folder / "ana" / "hw1" / "group_advantages.py").write_text(GROUP)
    write_zip(folder / "ben.zip", {"ben/gae_recursion.py": answer("gae-recursion", "starter")})
    (folder / "smithjane_late_42_7_gae_recursion.py").write_text(GAE)
    (folder / "cai").mkdir()
    (folder / "cai" / "group_advantages.py").write_text(GROUP)
    zip_bomb(folder / "ned.zip", 8 * 1024**2)
    out = tmp_path / "out"
    argv = ["grade", "gae-recursion", str(folder), "--out", str(out), "--seed", "3"]
    status, _, err = run_cli(capsys, *argv, "--mode", "default", "--no-progress")
    assert status == 0, err
    with (out / "grades.csv").open(newline="") as sheet:
        rows = {row["submission"]: row for row in csv.DictReader(sheet)}
    assert {name: row["score"] for name, row in rows.items()} == {
        "ana": "11",
        "ben": "0",
        "cai": "0",
        "ned": "0",
        "smithjane": "11",
    }
    assert rows["ana"]["file"] == f"{folder}/ana/hw1/gae_recursion.py"
    assert rows["ben"]["file"] == f"{folder}/ben.zip/ben/gae_recursion.py"
    assert rows["cai"]["note"] == (
        "submission has no file for gae-recursion: none has its '# rlfound exercise: "
        "gae-recursion' header or is named gae_recursion.py or gae_recursion.ipynb"
    )
    assert rows["ned"]["note"].startswith(f"submission {folder / 'ned.zip'} was not extracted: ")
    assert sorted(p.name for p in out.iterdir()) == [
        "ana",
        "ben",
        "cai",
        "checks.csv",
        "grades.csv",
        "ned",
        "scores.png",
        "similarity.csv",
        "skipped.csv",
        "smithjane",
        "summary.md",
    ]
