"""Execute the book's notebooks in parallel, each in a fresh kernel, before Sphinx reads them.

myst-nb executes a notebook while Sphinx reads it, one notebook after the other. This
extension runs first (on ``env-before-read-docs``): it executes every notebook that Sphinx is
about to read and that the jupyter-cache does not hold yet, in a pool of processes (one kernel
each, started in the notebook's own folder, as a student's is), and stores the outputs in the
cache. myst-nb, in ``cache`` mode, then only reads them back.

The cache must never serve outputs computed with another library: a notebook's cache key is
its code, so this extension also keeps, in the cache folder, a fingerprint of what the
notebooks import and read besides their code (the ``rlfound`` package, the book's other
files such as data and solution modules, the versions of Python and of the numerical
packages). When it changes, the cache is emptied and every notebook is read, and executed,
again. Both editions of the book (``make book``, ``make book-student``) share the cache.

A notebook whose execution fails is not cached: myst-nb then executes it again itself and
reports the failing cell as it always does (``nb_execution_raise_on_error`` fails the build).

What a kernel process writes to its own stderr (ipykernel's and tornado's logs: the notice
that it talks over TCP, now and then a ZMQ message that arrives as it shuts down) is not the
notebook's output, which ipykernel captures into the cells: it is kept per notebook and shown
with a notebook that failed, not written into the build's log, where the book's strict build
would read an ``ERROR:`` line of a kernel's shutdown as one of Sphinx's.

:func:`execute_notebook` is also what ``benchmarks/build_time.py`` times.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

#: The distributions whose versions change the notebooks' outputs.
_NUMERICAL = ("numpy", "scipy", "matplotlib", "ipykernel")
_FINGERPRINT = "rlfound-fingerprint.txt"
#: The packages the notebooks import (the solutions/ folder is part of the book's own folder).
_PACKAGES = ("rlfound",)


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def execute_notebook(notebook_json: str, folder: str, timeout: int | None = None) -> dict:
    """Execute a notebook (nbformat JSON) in a fresh kernel started in ``folder``.

    Returns the executed notebook as JSON (``None`` if a cell failed), the wall-clock and
    the kernel's CPU seconds (user + system), each code cell's wall-clock seconds, the error
    text if a cell failed, and what the kernel process wrote to its stderr. Run it in a
    process of its own (a pool worker): the CPU time is the growth of this process's
    finished children's CPU time, the kernel being one.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    notebook = nbformat.reads(notebook_json, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name=notebook.metadata.get("kernelspec", {}).get("name", "python3"),
        allow_errors=False,
        record_timing=True,
        resources={"metadata": {"path": folder}},
    )
    cpu_before, start = _children_cpu_seconds(), time.perf_counter()
    error = None
    with tempfile.TemporaryFile() as kernel_stderr:
        try:
            # Passed on to the kernel process (jupyter_client's launch_kernel).
            client.execute(stderr=kernel_stderr)
        except (CellExecutionError, CellTimeoutError) as failure:
            # The kernel colors its tracebacks for a terminal; a report wants plain text.
            error = re.sub(r"\x1b\[[0-9;]*m", "", str(failure))
        kernel_stderr.seek(0)
        kernel_log = kernel_stderr.read().decode("utf-8", "replace")
    wall = time.perf_counter() - start
    cells = []
    for index, cell in enumerate(notebook.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type == "code" and "shell.execute_reply" in timing:
            began = _timestamp(timing["iopub.execute_input"])
            ended = _timestamp(timing["shell.execute_reply"])
            cells.append((index, ended - began, cell.source))
        # The timings are for this report only: they would change the cached notebook.
        cell.get("metadata", {}).pop("execution", None)
    return {
        "notebook": None if error else nbformat.writes(notebook),
        "wall_seconds": wall,
        "cpu_seconds": _children_cpu_seconds() - cpu_before,
        "cells": cells,
        "error": error,
        "kernel_stderr": kernel_log,
    }


def _timestamp(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def execute_in_pool(jobs: list[tuple[str, str, str]], workers: int, timeout: int | None):
    """Execute ``(name, notebook_json, folder)`` jobs in ``workers`` processes.

    Yields ``(name, result)`` as each notebook finishes (see :func:`execute_notebook`).
    """
    # A fresh interpreter per worker: forking Sphinx (its threads, its open database) is not.
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {
            pool.submit(execute_notebook, notebook_json, folder, timeout): name
            for name, notebook_json, folder in jobs
        }
        for future in as_completed(futures):
            yield futures[future], future.result()


def worker_count(requested: int | None = None) -> int:
    """``requested`` if given, else the CPUs this process may use."""
    if requested:
        return requested
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# --- the Sphinx extension ---------------------------------------------------------------------


def fingerprint(srcdir: Path, packages: tuple[str, ...] | None = None) -> str:
    """A digest of what the notebooks use besides their own code (see the module docstring).

    Every file of the book's source folder but its Markdown and notebook sources (a notebook's
    code is the cache's own key, prose changes no output) and its build, hidden and cache
    folders; every file of the importable ``packages`` (wherever they are installed); the
    versions of Python and of the numerical packages.
    """
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    for name in _NUMERICAL:
        try:
            digest.update(f"{name}=={importlib.metadata.version(name)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{name} missing".encode())
    roots = {Path(srcdir)}
    for package in _PACKAGES if packages is None else packages:
        try:
            spec = importlib.util.find_spec(package)
        except ModuleNotFoundError:
            spec = None
        if spec is not None and spec.submodule_search_locations:
            roots.update(Path(location) for location in spec.submodule_search_locations)
    files = set()
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [name for name in subfolders if not _skipped_folder(name)]
            files.update(
                (Path(folder) / name).resolve()
                for name in names
                if not name.endswith((".md", ".ipynb"))
            )
    for path in sorted(files):
        digest.update(str(path).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _skipped_folder(name: str) -> bool:
    return name.startswith((".", "_build")) or name in _SKIPPED or name.endswith(".egg-info")


_SKIPPED = {"__pycache__", "node_modules", "venv"}


def _notebook_documents(app, docnames) -> dict[str, Path]:
    """The documents among ``docnames`` that myst-nb reads as notebooks: {docname: path}."""
    found = {}
    for docname in docnames:
        path = Path(app.env.doc2path(docname))
        if path.suffix == ".ipynb":
            found[docname] = path
        elif path.suffix == ".md":
            head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
            if head.startswith("---") and "kernelspec:" in head:
                found[docname] = path
    return found


def _cache_folder(app) -> Path | None:
    """The jupyter-cache folder myst-nb reads (it sets the default one), if in ``cache`` mode."""
    config = app.env.mystnb_config
    if config.execution_mode != "cache":
        return None
    return Path(config.execution_cache_path or Path(app.outdir).parent / ".jupyter_cache")


def _refresh_stale_cache(app, env, added, changed, removed):
    """Empty the cache and re-read every notebook when what the notebooks use has changed."""
    cache = _cache_folder(app)
    if cache is None:
        return []
    notebooks = _notebook_documents(app, env.found_docs)
    current = fingerprint(Path(app.srcdir))
    stamp = cache / _FINGERPRINT
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == current:
        return []
    if cache.exists():
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    stamp.write_text(current, encoding="utf-8")
    return sorted(set(notebooks) - set(added) - set(changed) - set(removed))


def _execute_before_reading(app, env, docnames):
    cache_folder = _cache_folder(app)
    if cache_folder is None:
        return
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from myst_nb.core.read import create_nb_reader
    from nbformat import reads, writes
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    cache = get_cache(str(cache_folder))
    jobs = []
    for docname, path in _notebook_documents(app, docnames).items():
        text = path.read_text(encoding="utf-8")
        reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
        if reader is None:
            continue
        # Read exactly as myst-nb will, so that the cache key is the one it looks up.
        notebook = reader.read(text)
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            jobs.append((docname, writes(notebook), str(path.parent)))
    if not jobs:
        return
    workers = min(worker_count(app.config.rlfound_execution_workers), len(jobs))
    logger.info(f"rlfound: executing {len(jobs)} notebooks in {workers} processes")
    paths = {docname: str(app.env.doc2path(docname)) for docname, _, _ in jobs}
    for docname, result in execute_in_pool(jobs, workers, env.mystnb_config.execution_timeout):
        seconds = f"{result['wall_seconds']:.1f} s, {result['cpu_seconds']:.1f} s CPU"
        if result["error"] is not None:
            # Not cached: myst-nb executes it again while reading and reports the error.
            logger.info(f"rlfound: {docname} failed in its pre-execution ({seconds})")
            if result["kernel_stderr"].strip():
                logger.info(f"rlfound: its kernel's stderr:\n{result['kernel_stderr']}")
            continue
        cache.cache_notebook_bundle(
            CacheBundleIn(
                reads(result["notebook"], as_version=4),
                paths[docname],
                data={"execution_seconds": result["wall_seconds"]},
            ),
            check_validity=False,
            overwrite=True,
        )
        logger.info(f"rlfound: executed {docname} ({seconds})")


def setup(app):
    app.add_config_value("rlfound_execution_workers", 0, "env")
    app.connect("env-get-outdated", _refresh_stale_cache)
    app.connect("env-before-read-docs", _execute_before_reading)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
