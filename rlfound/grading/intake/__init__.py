"""Intake: finding a class's submissions in every layout a course meets (files, notebooks,
per-student folders, zips, Canvas and Gradescope downloads), reading files without following
links, and student text made bounded and inert before the grader stores it."""

from rlfound.grading.intake.layouts import (
    Collected,
    HandIn,
    collect,
    collect_all,
    exercise_entry,
    find_exercise_file,
)
from rlfound.grading.intake.manual_text import extract_manual_text

__all__ = [
    "Collected",
    "HandIn",
    "collect",
    "collect_all",
    "exercise_entry",
    "extract_manual_text",
    "find_exercise_file",
]
