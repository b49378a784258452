"""Distribution: what leaves the teaching team's machine, the Gradescope autograder bundle and
the class pack."""

__all__: list[str] = []
