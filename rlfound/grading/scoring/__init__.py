"""Scoring: the tolerance comparison, the grader that runs an exercise's checks against a
worker, what grading found, and a whole class graded with a row for every entry."""

__all__: list[str] = []
