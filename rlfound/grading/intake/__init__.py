"""Intake: finding a class's submissions, reading files without following links, and student
text made bounded and inert before the grader stores it."""

__all__: list[str] = []
