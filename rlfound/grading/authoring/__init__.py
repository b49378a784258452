"""Authoring: the exercise format, starters made from reference solutions, the check that a
specification is sound (:mod:`~rlfound.grading.authoring.verify`), and the book's exercises."""

__all__: list[str] = []
