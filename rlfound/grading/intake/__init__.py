"""Intake: finding a class's submissions, reading files without following links, and student
text made bounded and inert before the grader stores it."""

from rlfound.grading.intake.manual_text import extract_manual_text

__all__: list[str] = ["extract_manual_text"]
