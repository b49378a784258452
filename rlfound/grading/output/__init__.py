"""Output: ``results.json``, ``feedback.md``, ``grades.csv`` and ``skipped.csv``, each written
atomically."""

__all__: list[str] = []
