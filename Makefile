# rlfound: `make book` builds the executed book, `make test` runs every check.
# Both create .venv and install what they need on a fresh clone.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BOOK_FLAGS := -W -n --keep-going
# pytest-xdist processes: one per CPU. tests/conftest.py keeps the grader's tests on one of them,
# and the book's builds on one (the build itself executes notebooks on every CPU).
PYTEST_JOBS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_JOBS) --dist loadgroup

.PHONY: help book book-student build-time test test-fast lint format clean

help:
	@echo "make book    build the executed HTML book into _build/html"
	@echo "make book-student  the student edition, without the solutions appendix"
	@echo "make test    the full gate: lint, every test, both book editions built strictly"
	@echo "make test-fast  lint and every test but the book builds and the install tests"
	@echo "make build-time  each notebook's execution time, slowest first"
	@echo "make format  apply ruff's formatter and autofixes"
	@echo "make clean   remove _build, caches and .venv"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)
	@echo "Open _build/html/index.html"

book-student: $(STAMP)
	$(BIN)/python _ext/student_edition.py

# Executes every chapter and solution in a fresh kernel, one at a time, and prints the seconds
# (wall and CPU) each takes, slowest first, with its slowest cells.
build-time: $(STAMP)
	$(BIN)/python benchmarks/build_time.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/pytest $(PYTEST_PARALLEL)

# The edit-test loop: skips the strict book builds (which execute every chapter) and the tests
# that build a wheel or run the Gradescope setup in a fresh environment.
test-fast: lint
	$(BIN)/pytest $(PYTEST_PARALLEL) -m "not book and not install"

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache $(VENV)
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
