"""The student edition of the book: the same chapters, without the solutions appendix.

Run as a script (``make book-student``), this module writes a table of contents without the
solution pages and a configuration with ``student_edition = True`` into
``_build/student/source``, then builds the book from the same chapters with warnings as
errors into ``_build/student/_build/html``. Loaded by Sphinx (``_config.yml`` lists it as a
local extension), it keeps the chapters' links to solutions from failing that build: in the
student edition a ``{ref}`` to a ``sol-...`` label, which does not exist there, becomes its
link text followed by "(instructor edition)". In the full edition it does nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "_build" / "student"


def _solution_stays_with_the_instructor(app, env, node, contnode):
    if not app.config.student_edition or node.get("reftype") != "ref":
        return None
    if not node.get("reftarget", "").startswith("sol-"):
        return None
    return nodes.inline("", "", contnode, nodes.Text(" (instructor edition)"))


def setup(app):
    app.add_config_value("student_edition", False, "env")
    app.connect("missing-reference", _solution_stays_with_the_instructor)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def write_sources(output: Path = OUTPUT) -> tuple[Path, Path]:
    """Write the student edition's configuration and table of contents; return their paths."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"{config['title']} (student edition)"
    # Paths in a configuration outside the book's root must not depend on where it lives.
    config["bibtex_bibfiles"] = [str(ROOT / name) for name in config["bibtex_bibfiles"]]
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {
        name: str(ROOT / folder) for name, folder in sphinx["local_extensions"].items()
    }
    sphinx["config"]["student_edition"] = True

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc.get("parts", []):
        part["chapters"] = [
            entry for entry in part["chapters"] if not entry["file"].startswith("solutions/")
        ]

    source = output / "source"
    source.mkdir(parents=True, exist_ok=True)
    config_path, toc_path = source / "_config.yml", source / "_toc.yml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), "utf-8")
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False, allow_unicode=True), "utf-8")
    return config_path, toc_path


def build(output: Path = OUTPUT, *extra: str) -> int:
    """Build the student edition with warnings as errors; return jupyter-book's exit status."""
    config_path, toc_path = write_sources(output)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [str(jupyter_book), "build", str(ROOT), "--config", str(config_path)]
    command += ["--toc", str(toc_path), "--path-output", str(output), "-W", "-n", "--keep-going"]
    return subprocess.run([*command, *extra], check=False).returncode


if __name__ == "__main__":
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT
    status = build(output)
    if status == 0:
        print(f"Student edition: {output / '_build' / 'html' / 'index.html'}")
    sys.exit(status)
