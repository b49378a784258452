"""The teaching team's material: the book's reference solutions and worked solutions, and the
graded-only checks of its exercises (``graded/``).

In the repository this is the book's ``solutions/`` folder: its pages are the appendix, which
shows these files' code through ``{listing} solutions.<file>.<object>`` (the book's one listing
reader, :mod:`rlfound._listing`), and the grader of a checkout finds them here.
``make instructor-wheel`` packages the folder as ``rlfound_instructor`` (the distribution
``rlfound-instructor``), which an instructor installs beside the students' ``rlfound`` wheel;
students never get it (:mod:`rlfound.grading.authoring.instructor`). Each reference solution
imports only NumPy, because student code built from it runs where ``rlfound`` cannot be
imported; the grader loads a solution by its path
(:meth:`rlfound.grading.authoring.spec.Exercise.reference`).
"""
