"""The benchmarks run, on small sizes (their timings are not tested, only that they work).

benchmarks/scan_speed.py compares forms that must compute the same numbers, and refuses to
time one that does not: the checks here are that every form passes that check, and that a
wrong one is refused, so that the ratios it prints compare like with like.
"""

from __future__ import annotations

import importlib.util
import re
import sys

import numpy as np
import pytest

from tests._book import ROOT


def load_benchmark(name):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def table_rows(text, title):
    """The rows of the table under ``title``: (form, layout, passes, versus, error)."""
    lines = text.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 3 :]:
        if not line.startswith("| ") or line.startswith("| where"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_scan_speed_small_prints_a_table_per_shape_and_quantity(capsys):
    scan_speed = load_benchmark("scan_speed")
    scan_speed.main(["--small", "--phases"])
    out = capsys.readouterr().out
    for shape in scan_speed.SMALL_SHAPES:
        for title in ("GAE", "Returns"):
            rows = table_rows(out, f"{title}, shape (B, T) = {shape}:")
            names = [row[0] for row in rows]
            assert {"rlfound", "rlfound, axis=0", "clear", "SB3 loop"} <= set(names)
            for name, _, passes, versus, error in rows:
                assert float(passes.replace(",", "")) > 0
                assert float(versus.rstrip("×").replace(",", "")) > 0
                limit = 1e-12 if name.startswith(("rlfound", "clear")) else 1e-9
                assert float(error) <= limit, name
    assert re.search(r"^Fixed cost of a call at shape \(4, 16\): packed_gae \d+ µs", out, re.M)
    assert re.search(r"\| where rlfound's GAE passes go \| \(B, T\) \| \(T, B\) \|", out)
    assert "| terms |" in out and "| input checks and masks |" in out


def test_scan_speed_times_only_forms_that_agree_with_the_clear_form():
    scan_speed = load_benchmark("scan_speed")
    rng = np.random.default_rng(0)
    for shape in [(3, 200), (1, 3000), (70, 40)]:
        stream = scan_speed.packed_stream(shape, rng)
        for forms in (scan_speed.gae_forms, scan_speed.no_end_forms, scan_speed.return_forms):
            rows = scan_speed.measure(forms(stream), 1, stream)
            assert {"rlfound", "SB3 loop"} <= set(rows) or "lfilter, no ends" in rows


def test_scan_speed_refuses_to_time_a_form_that_differs():
    scan_speed = load_benchmark("scan_speed")
    stream = scan_speed.packed_stream((2, 50), np.random.default_rng(1))
    _, run, reference, bound = scan_speed.gae_forms(stream)["SB3 loop"]
    wrong = {"SB3 loop": ("(T, B)", lambda: run() + 1e-6 * bound, reference, bound)}
    with pytest.raises(AssertionError, match=r"^SB3 loop differs from the clear form: 1\.0e-06$"):
        scan_speed.measure(wrong, 1, stream)
