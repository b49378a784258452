"""The book's reference solutions, one file per code exercise, installed as ``rlfound.solutions``.

The book's solutions pages include these files; ``pyproject.toml`` maps this folder into the
``rlfound`` package so that the grader finds them in a checkout, an installed wheel and a
Gradescope bundle alike. Each file imports only NumPy, because student code built from it runs
where ``rlfound`` cannot be imported; nothing imports this package's modules as such: the
grader loads a solution by its path (:meth:`rlfound.grading.authoring.spec.Exercise.reference`).
"""
