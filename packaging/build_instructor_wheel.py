"""Build the teaching team's wheel, ``rlfound-instructor``, from the repository's solutions/.

    python packaging/build_instructor_wheel.py [--dist DIR]

The package ``rlfound_instructor`` is the book's ``solutions/`` folder as it is (reference
solutions, worked-solution pages, ``graded/`` checks), at rlfound's version and requiring
exactly that rlfound. The folder is staged in a temporary directory with its own
``pyproject.toml`` and built with pip, so the students' wheel and this one come from one
source tree without either ever holding the other's files.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PYPROJECT = """\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "rlfound-instructor"
version = "{version}"
description = "RL Foundations for the teaching team: solutions and graded-only checks"
requires-python = ">=3.10"
license = "MIT"
license-files = ["LICENSE"]
dependencies = ["rlfound=={version}"]

[tool.setuptools]
packages = ["rlfound_instructor", "rlfound_instructor.graded"]

[tool.setuptools.package-data]
rlfound_instructor = ["*.md"]
"""


def version() -> str:
    """rlfound's version, from the repository's pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if match is None:
        raise SystemExit("pyproject.toml has no version")
    return match[1]


def build(dist: Path) -> Path:
    """Build the wheel into ``dist``; return its path."""
    # Absolute: pip runs in the staging folder, where a relative ``dist`` (make's
    # ``--dist dist``) would name a folder that is deleted with it.
    dist = dist.absolute()
    dist.mkdir(parents=True, exist_ok=True)
    solutions = ROOT / "solutions"
    with tempfile.TemporaryDirectory(prefix="rlfound-instructor-") as stage:
        stage = Path(stage)
        package = stage / "rlfound_instructor"
        shutil.copytree(
            solutions,
            package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.ipynb", "_build"),
        )
        (stage / "pyproject.toml").write_text(PYPROJECT.format(version=version()))
        shutil.copy2(ROOT / "LICENSE", stage / "LICENSE")
        before = set(dist.glob("rlfound_instructor-*.whl"))
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), "."],
            cwd=stage,
            check=True,
        )
    built = sorted(set(dist.glob("rlfound_instructor-*.whl")) - before) or sorted(
        dist.glob(f"rlfound_instructor-{version()}-*.whl")
    )
    return built[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", default=str(ROOT / "dist"), help="output folder (dist/)")
    args = parser.parse_args(argv)
    print(build(Path(args.dist)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
