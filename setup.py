"""The build hook of the students' wheel: it records the public checks' expected outputs.

``rlfound check`` runs where no reference solution is installed, so the wheel carries, for each
book exercise, its starter and the reference's outputs on the public checks' inputs
(:mod:`rlfound.grading.authoring.public`), computed here from the repository's ``solutions/``.
The solutions themselves stay out of this wheel: they are the teaching team's package
``rlfound-instructor`` (``make instructor-wheel``). An editable install records nothing: a
checkout computes the same data from its references when asked.
"""

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithPublicData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        # rlfound classpack writes the chapters' citations from the book's bibliography.
        chapters = Path(self.build_lib) / "rlfound" / "chapters"
        chapters.mkdir(parents=True, exist_ok=True)
        (chapters / "references.bib").write_bytes((ROOT / "references.bib").read_bytes())
        if not (ROOT / "solutions" / "graded").is_dir():
            raise SystemExit(
                "rlfound's wheel records its public checks from the reference solutions in "
                "solutions/, which this source tree lacks: build it from the repository"
            )
        sys.path.insert(0, str(ROOT))
        try:
            from rlfound.grading.authoring import public
            from rlfound.grading.authoring.spec import load_exercises

            exercises = load_exercises()
            target = Path(self.build_lib) / "rlfound" / "grading" / "authoring" / "public_data"
            written = public.write_public_data(exercises.values(), target)
            print(f"recorded the public checks of {len(written)} exercises in {target}")
        finally:
            sys.path.remove(str(ROOT))


setup(cmdclass={"build_py": BuildWithPublicData})
