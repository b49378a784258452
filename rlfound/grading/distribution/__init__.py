"""Distribution: what leaves the teaching team's machine, the Gradescope autograder bundle (and
the search for the file to grade in a student's upload) and the class pack."""

__all__: list[str] = []
