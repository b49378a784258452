"""Graded-only checks of the book's exercises, one file per specification of
``rlfound/grading/authoring/exercises/`` with the same name, each defining ``CHECKS``."""
