"""What the teaching team looks at (issue 22, section 5): ``checks.csv``, ``summary.md`` with
its histogram, ``similarity.csv``, and the progress of a batch.

The numbers are computed here from the results the test builds, never by the module under
test; only the end-to-end test at the bottom runs real workers.
"""

from __future__ import annotations

import csv
import io
import re
import struct
import sys

import numpy as np
import pytest
from _grading_helpers import BUGGY_GAE, REPO, copy_reference

from rlfound.grading.authoring import spec, starter
from rlfound.grading.output import checks_report, similarity, summary, team
from rlfound.grading.scoring.results import CheckResult, SubmissionResult

EXERCISES = spec.load_exercises()
GAE = EXERCISES["gae-recursion"]
REFERENCE = (REPO / "solutions" / "gae_recursion.py").read_text()
STARTER = starter.starter_source(GAE)

# ------------------------------------------------------------------ a class built by hand

WRONG_A = "case 1 of 5 (gamma=0.5): max abs error 0.25, worst at index (2,)"
WRONG_B = "case 3 of 5 (gamma=0.9): max abs error 1.5e-03, worst at index (0,)"
SHAPE = "case 2 of 5 (gamma=0.1): expected shape (4,), got shape (3,)"
RAISED = "case 1 of 5 (gamma=0.5): f raised\nZeroDivisionError: division by zero"
TIMEOUT = "not run: timed out earlier (f used more than 10 s of CPU time in an earlier check)"

#: Per student: (check name, points earned of max, passed, message); max points 2, 1, 1.
CLASS = {
    "ana": [("alpha", 2, True, "ok"), ("beta", 1, True, "ok"), ("gamma", 1, True, "ok")],
    "ben": [("alpha", 0, False, WRONG_A), ("beta", 1, True, "ok"), ("gamma", 0, False, SHAPE)],
    "cy": [("alpha", 0, False, WRONG_B), ("beta", 0, False, RAISED), ("gamma", 0, False, SHAPE)],
    "dee": [("alpha", 0, False, TIMEOUT), ("beta", 1, True, "ok"), ("gamma", 1, True, "ok")],
}
MAX = {"alpha": 2.0, "beta": 1.0, "gamma": 1.0}


def _results(table=CLASS, maxima=MAX):
    results = []
    for name, rows in table.items():
        checks = [
            CheckResult(check, float(points), maxima[check], passed, message, True, "")
            for check, points, passed, message in rows
        ]
        results.append(SubmissionResult(name, None, checks))
    return results


def _rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_checks_csv_counts_passes_means_and_the_most_common_failure():
    rows = {r["check"]: r for r in _rows(checks_report.checks_csv({"demo": _results()}))}
    assert list(rows) == ["alpha", "beta", "gamma"]
    assert list(_rows(checks_report.checks_csv({"demo": _results()}))[0]) == list(
        checks_report.CHECKS_COLUMNS
    )
    # alpha: only ana passed (2 points of 2); two of the three failures are the same message
    # with other numbers, the third a timeout.
    assert rows["alpha"]["students"] == "4" and rows["alpha"]["passed"] == "1"
    assert float(rows["alpha"]["mean_points"]) == pytest.approx(2 / 4)
    assert rows["alpha"]["max_points"] == "2"
    assert rows["alpha"]["most_common_failure"] == (
        "case N of N (gamma=N): max abs error N, worst at index (N,)"
    )
    assert rows["alpha"]["failure_count"] == "2"
    # beta: three passes; the failure is the exception, with the line that names it.
    assert (rows["beta"]["passed"], rows["beta"]["failure_count"]) == ("3", "1")
    assert float(rows["beta"]["mean_points"]) == pytest.approx(3 / 4)
    assert rows["beta"]["most_common_failure"] == (
        "case N of N (gamma=N): f raised ZeroDivisionError: division by zero"
    )
    # gamma: the same shape failure twice.
    assert rows["gamma"]["passed"] == "2" and rows["gamma"]["failure_count"] == "2"
    assert rows["gamma"]["most_common_failure"].endswith("expected shape (N,), got shape (N,)")


def test_a_failure_quoting_a_formula_is_never_a_spreadsheet_formula():
    table = {
        "eve": [("alpha", 0, False, "=HYPERLINK(1)"), ("beta", 1, True, ""), ("gamma", 1, True, "")]
    }
    (row, *_) = _rows(checks_report.checks_csv({"demo": _results(table)}))
    assert row["most_common_failure"] == "'=HYPERLINK(N)"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (WRONG_A, "wrong values"),
        (SHAPE, "wrong shape"),
        (RAISED, "raised an exception"),
        (TIMEOUT, "time limit"),
        ("f(x=1) should raise ValueError; it returned", "did not raise"),
        ("case 1 of 2 (x=1): got a non-finite value nan at index 0", "non-finite value"),
        ("case 1 of 2 (x=1): property does not hold: sums differ", "property violated"),
        (
            "not run: the submission could not be imported (the reason is at the top)",
            "not imported",
        ),
        ("something new", "other"),
        # The grader's reproduction hint after a blank line is not part of the failure.
        (f"{WRONG_A}\n\nTo reproduce, call:\n    f(note='should raise')", "wrong values"),
    ],
)
def test_every_failure_has_a_kind(message, kind):
    assert checks_report.failure_kind(message) == kind


def test_a_raised_failure_is_grouped_by_the_exception_after_the_traceback():
    message = (
        "case 4 of 5 (x=2): f raised\n  mine.py, line 12, in f\n    y = 1 / 0\nZeroDivisionError: x"
    )
    assert checks_report.failure_pattern(message) == (
        "case N of N (x=N): f raised ZeroDivisionError: x"
    )


def test_summary_gives_the_distribution_the_hardest_checks_and_failures_by_kind():
    results = _results()
    page = summary.summary_markdown({"demo": results})
    # Scores: ana 4, ben 1, cy 0, dee 2 of 4.
    assert "| `demo` | 4 | 1.75 | 1.5 | 0 | 4 | 4 |" in page
    bins = re.findall(r"^\| \[(\d+), (\d+)[)\]] \| (\d+) \|$", page, flags=re.MULTILINE)
    assert [(int(a), int(b), int(n)) for a, b, n in bins] == [
        (0, 1, 1),
        (1, 2, 1),
        (2, 3, 1),
        (3, 4, 1),
    ]
    hardest = page.split("hardest checks")[1].split("## Failures by kind")[0]
    # alpha passed by 1 of 4, gamma by 2, beta by 3: the hardest first.
    order = re.findall(r"^\| `demo` \| `(\w+)` \| (\d) of 4 \|", hardest, flags=re.MULTILINE)
    assert order == [("alpha", "1"), ("gamma", "2"), ("beta", "3")]
    kinds = page.split("## Failures by kind")[1]
    counts = dict(re.findall(r"^\| ([a-z ]+) \| (\d+) \|$", kinds, flags=re.MULTILINE))
    assert counts == {
        "wrong values": "2",
        "wrong shape": "2",
        "time limit": "1",
        "raised an exception": "1",
    }
    assert "![Histogram of the automatic scores](scores.png)" in page


def test_only_the_five_hardest_checks_are_listed():
    names = [f"c{i}" for i in range(7)]
    # Check ci is passed by i of the 7 students.
    table = {
        f"s{s}": [
            (n, 1 if s < i else 0, s < i, "x" if s >= i else "ok") for i, n in enumerate(names)
        ]
        for s in range(7)
    }
    page = summary.summary_markdown({"demo": _results(table, dict.fromkeys(names, 1.0))})
    listed = re.findall(r"^\| `demo` \| `(c\d)` \|", page, flags=re.MULTILINE)
    assert listed == ["c0", "c1", "c2", "c3", "c4"]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_the_histogram_is_a_png_and_the_same_scores_give_the_same_bytes(tmp_path):
    assert summary.write_summary(tmp_path, {"demo": _results()}) is True
    first = (tmp_path / "scores.png").read_bytes()
    width, height = _png_size(first)
    assert width > 100 and height > 100
    summary.write_summary(tmp_path, {"demo": _results()})
    assert (tmp_path / "scores.png").read_bytes() == first


def test_whole_point_bins_close_at_the_maximum_and_wide_scores_get_ten_bins():
    assert summary.histogram_bins([0, 3, 3], 3) == [(0.0, 1.0, 1), (1.0, 2.0, 0), (2.0, 3.0, 2)]
    wide = summary.histogram_bins([0, 12.5, 50], 50)
    assert len(wide) == 10 and [n for *_, n in wide] == [1, 0, 1, 0, 0, 0, 0, 0, 0, 1]


def test_without_the_teaching_extra_the_reports_say_what_they_left_out(tmp_path, monkeypatch):
    (tmp_path / "similarity.csv").write_text("an old batch's pairs\n")
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    monkeypatch.setitem(sys.modules, "copydetect", None)
    written = team.write_team_reports(
        tmp_path, {"demo": _results()}, {"demo": {"a": "x = 1\n"}}, {"demo": ""}
    )
    assert written.left_out == [
        f"scores.png not written: {summary.NO_MATPLOTLIB}",
        f"similarity.csv not written: {similarity.NO_COPYDETECT}",
    ]
    assert not (tmp_path / "scores.png").exists()
    assert not (tmp_path / "similarity.csv").exists()
    assert f"(No histogram: {summary.NO_MATPLOTLIB}.)" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "checks.csv").is_file()


# ------------------------------------------------------------------ similarity


def _rename(source: str) -> str:
    for old, new in [
        ("rewards", "r"),
        ("values", "v"),
        ("advantages", "adv"),
        ("running", "acc"),
        ("deltas", "td"),
        ("horizon", "length"),
        ("weights", "w"),
        ("delta", "d"),
    ]:
        source = re.sub(rf"\b{old}\b", new, source)
    return source


#: Two honest solutions of gae-recursion, written independently of each other.
LOOPS = """import numpy as np


def gae_recursive(rewards, values, gamma, lam):
    out = []
    carry = 0.0
    for t in reversed(range(len(rewards))):
        carry = rewards[t] + gamma * values[t + 1] - values[t] + gamma * lam * carry
        out.append(carry)
    return np.array(out[::-1])


def gae_explicit(rewards, values, gamma, lam):
    n = len(rewards)
    return np.array([
        sum((gamma * lam) ** k * (rewards[t + k] + gamma * values[t + k + 1] - values[t + k])
            for k in range(n - t))
        for t in range(n)
    ])
"""
MATRIX = """import numpy

def gae_explicit(rewards, values, gamma, lam):
    r = numpy.asarray(rewards, float)
    v = numpy.asarray(values, float)
    if v.shape != (r.size + 1,):
        raise ValueError("values needs T + 1 entries")
    td = r + gamma * v[1:] - v[:-1]
    idx = numpy.arange(r.size)
    lags = idx[None, :] - idx[:, None]
    decay = numpy.where(lags >= 0, (gamma * lam) ** numpy.maximum(lags, 0), 0.0)
    return decay @ td

def gae_recursive(rewards, values, gamma, lam):
    return gae_explicit(rewards, values, gamma, lam)
"""


def test_a_copy_with_renamed_variables_is_found_with_its_regions():
    copy = _rename(REFERENCE)
    assert copy != REFERENCE
    (pair,) = similarity.find_similar(
        {"ann": REFERENCE, "bob": copy}, exercise="gae-recursion", boilerplate=STARTER
    )
    assert (pair.exercise, pair.first, pair.second) == ("gae-recursion", "ann", "bob")
    assert pair.score >= similarity.THRESHOLD
    # The shared regions hold the solution bodies, which the starter does not have.
    lines = REFERENCE.splitlines()
    body = next(i for i, line in enumerate(lines, 1) if "running = delta + gamma" in line)
    assert any(a <= body <= b for a, b in pair.first_lines)
    assert all(1 <= a <= b <= len(lines) + 1 for a, b in pair.first_lines)


def test_the_starter_alone_makes_no_two_submissions_similar():
    # Both handed in the starter, one with its by-hand string filled in.
    other = STARTER.replace(starter.PLACEHOLDER, "It telescopes.", 1)
    assert similarity.find_similar({"ann": STARTER, "bob": other}, boilerplate=STARTER) == []
    # Without the starter as boilerplate the same pair would be listed: the test can fail.
    assert similarity.find_similar({"ann": STARTER, "bob": other})


def test_independent_solutions_stay_below_the_threshold():
    sources = {"ann": LOOPS, "bob": MATRIX, "cy": REFERENCE}
    assert similarity.find_similar(sources, boilerplate=STARTER) == []


def test_hostile_sources_are_capped_and_cannot_crash_it():
    huge_a = REFERENCE + "\n" + "x = 1\n" * 100_000
    huge_b = "y = 2  # something else\n" * 5_000 + REFERENCE
    hostile = {
        "deep": "(" * 200_000,
        "syntax": "def f(:\n    return ]]]\n" * 1000,
        "nul": "\x00\ufffd\ud800 = 1\n" * 1000,
        "huge-a": huge_a,
        "huge-b": huge_b,
        "empty": "",
    }
    pairs = similarity.find_similar(hostile, boilerplate=STARTER)
    # Only the first MAX_CHARS characters count: huge-b's copy of the reference lies past them.
    assert len(huge_b) - len(REFERENCE) > similarity.MAX_CHARS
    assert all({p.first, p.second} != {"huge-a", "huge-b"} for p in pairs)


def test_similarity_csv_writes_line_ranges_and_inert_names():
    pair = similarity.SimilarPair(
        "ex", "=evil", "bob", 0.9, 0.9, 0.8, ((3, 10), (14, 14)), ((1, 8),)
    )
    (row,) = _rows(similarity.similarity_csv([pair]))
    assert row == {
        "exercise": "ex",
        "first": "'=evil",
        "second": "bob",
        "score": "0.9",
        "first_share": "0.9",
        "second_share": "0.8",
        "first_lines": "3-10 14",
        "second_lines": "1-8",
    }


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan")])
def test_a_threshold_outside_zero_one_is_refused(threshold):
    with pytest.raises(ValueError, match=r"^threshold must be in \[0, 1\]; got "):
        similarity.find_similar({}, threshold=threshold)


# ------------------------------------------------------------------ a real batch


class _Stream(io.StringIO):
    def __init__(self, terminal: bool):
        super().__init__()
        self.terminal = terminal

    def isatty(self):
        return self.terminal


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class of four graded once by the command: the reference (with by-hand answers), a
    renamed copy of it, the buggy recursion, and the starter."""
    from rlfound.cli import main

    root = tmp_path_factory.mktemp("teamview")
    folder = root / "class"
    copy_reference(folder, "ana")
    answers = STARTER[STARTER.index(starter.BY_HAND_START) :].replace(
        starter.PLACEHOLDER, "The sum telescopes: <b>bold</b>", 1
    )
    (folder / "ana.py").write_text(REFERENCE + "\n" + answers)
    (folder / "bob.py").write_text(_rename(REFERENCE))
    (folder / "cy.py").write_text(BUGGY_GAE)
    (folder / "dee.py").write_text(STARTER)
    out = root / "out"
    stderr = _Stream(terminal=False)
    saved, sys.stderr = sys.stderr, stderr
    try:
        argv = ["grade", "gae-recursion", str(folder), "--out", str(out), "--mode", "default"]
        status = main([*argv, "--seed", "5"])
    finally:
        sys.stderr = saved
    return status, out, stderr.getvalue()


def test_a_batch_writes_checks_csv_that_agrees_with_grades_csv(graded_class):
    status, out, err = graded_class
    assert status == 0, err
    grades = _rows((out / "grades.csv").read_text())
    checks = _rows((out / "checks.csv").read_text())
    names = [c.name for c in GAE.checks]
    assert [row["check"] for row in checks] == names
    for row in checks:
        points = [float(g[row["check"]]) for g in grades]
        best = float(row["max_points"])
        assert int(row["students"]) == len(grades) == 4
        assert int(row["passed"]) == sum(p == best for p in points)
        assert float(row["mean_points"]) == pytest.approx(np.mean(points), rel=1e-3)
        assert int(row["failure_count"]) <= 4 - int(row["passed"])


def test_a_batch_lists_the_renamed_copy_and_not_the_starter(graded_class):
    _, out, err = graded_class
    pairs = _rows((out / "similarity.csv").read_text())
    found = {frozenset((p["first"], p["second"])) for p in pairs}
    assert frozenset(("ana", "bob")) in found
    assert all("dee" not in pair for pair in found)
    assert "similarity.csv (" in err and "a prompt for a human look, not evidence" in err


def test_off_a_terminal_each_submission_gets_one_plain_line(graded_class):
    _, _, err = graded_class
    lines = [line for line in err.splitlines() if re.match(r"^\[\d/4\] ", line)]
    assert len(lines) == 4
    assert {re.match(r"^\[\d/4\] (\w+): graded, ", line)[1] for line in lines} == {
        "ana",
        "bob",
        "cy",
        "dee",
    }
    assert "\r" not in err
    assert any(line.endswith(": graded, 11 / 11") for line in lines)


def test_on_a_terminal_a_progress_bar_is_drawn(tmp_path, monkeypatch):
    from rlfound.grading.scoring.batch import grade_batch
    from rlfound.grading.scoring.grader import Grader

    copy_reference(tmp_path / "class", "ana")
    stream = _Stream(terminal=True)
    monkeypatch.setattr(sys, "stderr", stream)
    grader = Grader(GAE, seed=1, mode="default")
    grade_batch(grader, [tmp_path / "class"], tmp_path / "out")
    shown = stream.getvalue()
    assert "\r" in shown and "1/1" in shown and "submission" in shown
    assert "[1/1] ana" not in shown  # the bar, not the plain lines
