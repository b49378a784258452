"""The book's exercise specifications, one file per exercise (see
:mod:`rlfound.grading.authoring.spec`).

Instructors write their own in the same format and load them with ``--exercises DIR``.
"""
