"""The student edition of the book: the same chapters, without the solutions appendix.

Run as a script (``make book-student``), this module writes a table of contents without the
solution pages and a configuration with ``student_edition = True`` into
``_build/student/source``, then builds the book from the same chapters with warnings as
errors into ``_build/student/_build/html``. Loaded by Sphinx (``_config.yml`` lists it as a
local extension), it keeps the chapters' links to solutions from failing that build: in the
student edition a ``{ref}`` to a ``sol-...`` label, which does not exist there, becomes its
link text followed by "(instructor edition)". In the full edition it does nothing.

:func:`command` also gives the full edition's build with another jupyter-cache folder: the
test-suite builds both editions against one fresh folder, so that every chapter is executed
once (by the first build, in a fresh kernel) and the second build reuses the outputs. The
student edition of ``make book-student`` uses the cache of ``make book`` in the same way.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "_build" / "student"
#: The execution cache of ``make book`` (jupyter-book's default folder).
BOOK_CACHE = ROOT / "_build" / ".jupyter_cache"


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


def _merge(config: dict, settings: dict) -> None:
    """Set ``settings`` in ``config``, merging nested sections key by key."""
    for key, value in settings.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            _merge(config[key], value)
        else:
            config[key] = value


def write_sources(
    output: Path = OUTPUT,
    *,
    student: bool = True,
    cache: Path | None = None,
    settings: dict | None = None,
) -> tuple[Path, Path]:
    """Write an edition's configuration and table of contents; return their paths.

    ``student`` leaves the solutions appendix out. ``cache``, if given, is the jupyter-cache
    folder the notebooks are executed into and read from (see _ext/parallel_execution.py).
    ``settings`` are ``_config.yml`` entries to set on top of the book's (nested sections are
    merged), such as a JupyterHub for the launch buttons.
    """
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    _merge(config, settings or {})
    # Paths in a configuration outside the book's root must not depend on where it lives.
    config["bibtex_bibfiles"] = [str(ROOT / name) for name in config["bibtex_bibfiles"]]
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {
        name: str(ROOT / folder) for name, folder in sphinx["local_extensions"].items()
    }
    if cache is not None:
        config["execute"]["execute_notebooks"] = "cache"
        config["execute"]["cache"] = str(cache)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    if student:
        config["title"] = f"{config['title']} (student edition)"
        sphinx["config"]["student_edition"] = True
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


def command(
    output: Path = OUTPUT,
    *,
    student: bool = True,
    cache: Path | None = None,
    settings: dict | None = None,
) -> list:
    """The strict ``jupyter-book build`` command of an edition (its sources written first)."""
    config_path, toc_path = write_sources(output, student=student, cache=cache, settings=settings)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    return [
        *(str(jupyter_book), "build", str(ROOT), "--config", str(config_path)),
        *("--toc", str(toc_path), "--path-output", str(output), "-W", "-n", "--keep-going"),
    ]


def build(output: Path = OUTPUT, *extra: str) -> int:
    """Build the student edition with warnings as errors; return jupyter-book's exit status.

    Its notebooks come from the cache of ``make book``: a notebook the full edition executed
    with the current library is not executed again.
    """
    return subprocess.run([*command(output, cache=BOOK_CACHE), *extra], check=False).returncode


if __name__ == "__main__":
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT
    status = build(output)
    if status == 0:
        print(f"Student edition: {output / '_build' / 'html' / 'index.html'}")
    sys.exit(status)
