# rlfound: `make book` builds the executed book, `make test` runs every check.
# Both create .venv and install what they need on a fresh clone.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BOOK_FLAGS := -W -n --keep-going
# What make pdf needs on Debian or Ubuntu (the README explains each).
PDF_PACKAGES := texlive-xetex texlive-latex-recommended texlive-latex-extra \
	texlive-fonts-recommended fonts-freefont-otf latexmk

# pytest-xdist processes: one per CPU. tests/conftest.py keeps the book's tests on one of them
# (their builds execute notebooks on every CPU, at a lower priority) and the grader's tests on
# one (they create users, scan every process on the machine and time submissions by the wall
# clock, so no two of them may run at once); the other tests are spread over both.
PYTEST_JOBS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_JOBS) --dist loadgroup

.PHONY: help book book-student build-time pdf test test-fast test-pdf print-pdf-packages lint \
	format clean \
	wheel instructor-wheel wheels release notebooks

help:
	@echo "make book    build the executed HTML book into _build/html"
	@echo "make book-student  the student edition, without the solutions appendix"
	@echo "make pdf     the whole book as one PDF, _build/latex/rlfound.pdf (needs XeLaTeX)"
	@echo "make test    the full gate: lint, every test, both book editions built strictly"
	@echo "make test-fast  lint and the quick tests: no book builds, install or slow tests"
	@echo "make test-pdf  build the PDF and check it (skips where XeLaTeX is missing)"
	@echo "make build-time  each notebook's execution time, slowest first"
	@echo "make wheels  dist/: the students' rlfound wheel and the teaching team's rlfound-instructor"
	@echo "make release VERSION=X.Y.Z  bump the version, date the changelog, build, tag"
	@echo "               (DRY_RUN=1 prints what it would change and run)"
	@echo "make notebooks REPOSITORY=https://github.com/OWNER/NAME  the Colab notebooks"
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

# The PDF through LaTeX. It installs nothing system-wide: the README names the Debian
# packages it needs (XeLaTeX, latexmk, the FreeFont fonts).
pdf: $(STAMP)
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null || { \
	  echo "make pdf needs xelatex and latexmk; on Debian or Ubuntu:" >&2; \
	  echo "  sudo apt-get install $(PDF_PACKAGES)" >&2; exit 1; }
	$(BIN)/jupyter-book build . --builder pdflatex $(BOOK_FLAGS)
	@echo "Open _build/latex/rlfound.pdf"

# Executes every chapter and solution in a fresh kernel, one at a time, and prints the seconds
# (wall and CPU) each takes, slowest first, with its slowest cells.
build-time: $(STAMP)
	$(BIN)/python benchmarks/build_time.py

# Two distributions from one source: what students install (no solution in it) and what the
# teaching team installs beside it (references, worked solutions, graded-only checks).
wheel: $(STAMP)
	$(BIN)/python -m pip wheel --no-deps --quiet -w dist .
	@ls dist/rlfound-*.whl

instructor-wheel: $(STAMP)
	$(BIN)/python packaging/build_instructor_wheel.py --dist dist

wheels: wheel instructor-wheel

# packaging/release.py: pyproject.toml's version (the one place), CITATION.cff and the
# changelog's "Unreleased" become VERSION and today; then make book pdf wheels, a commit and
# the tag vVERSION.
release: $(STAMP)
	$(BIN)/python packaging/release.py --version "$(VERSION)" $(if $(DRY_RUN),--dry-run)

# _ext/colab_notebooks.py: every chapter and solution page as a plain notebook in notebooks/,
# whose first cell installs rlfound from REPOSITORY in Colab. Generated, never edited: commit
# it to BRANCH of REPOSITORY, which _config.yml's repository entry names.
BRANCH ?= main
notebooks: $(STAMP)
	$(BIN)/python _ext/colab_notebooks.py --repository "$(REPOSITORY)" --branch "$(BRANCH)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The PDF build (make test-pdf) is left out: it executes every chapter once more, for LaTeX.
test: lint
	$(BIN)/pytest $(PYTEST_PARALLEL) -m "not pdf"

# The edit-test loop, in one parallel run: no book builds, no install tests, no test marked
# slow (half a second or more: chapter-scale computations, whole classes graded), and ten
# examples per property instead of fifty.
test-fast: lint
	$(BIN)/pytest $(PYTEST_PARALLEL) -m "not book and not install and not pdf and not slow" \
	  --hypothesis-profile=fast

test-pdf: $(STAMP)
	$(BIN)/pytest -m pdf -p no:cacheprovider

# The Debian packages make pdf needs, for .ci/run to install.
print-pdf-packages:
	@echo $(PDF_PACKAGES)

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache $(VENV)
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
