"""The benchmarks run, on small sizes (their timings are not tested, only that they work).

benchmarks/scan_speed.py compares forms that must compute the same numbers: the check here is
that they do, so that the ratios it prints compare like with like.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np

from tests._book import ROOT


def load_benchmark(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scan_speed_small_prints_a_row_per_shape_and_quantity(capsys):
    scan_speed = load_benchmark("scan_speed")
    scan_speed.main(["--small"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| (")]
    expected = [
        (str(shape), quantity)
        for shape in scan_speed.SMALL_SHAPES
        for quantity in ("returns", "GAE")
    ]
    assert [tuple(cell.strip() for cell in row.split("|")[1:3]) for row in rows] == expected
    for row in rows:
        ratios = re.findall(r"([\d,.]+)×", row)
        assert len(ratios) >= 4 and all(float(r.replace(",", "")) > 0 for r in ratios)
        assert float(row.split("|")[-2]) <= 1e-12  # the fast form's worst scaled error


def test_scan_speed_forms_compute_the_same_numbers():
    scan_speed = load_benchmark("scan_speed")
    rng = np.random.default_rng(0)
    for shape in [(3, 200), (1, 3000)]:
        for quantity, _, _, errors in scan_speed.measure(shape, repeats=1, rng=rng):
            assert errors["fast"] <= 1e-12, quantity
            # SB3 gets returns as advantages + values, which cancel: a looser bound.
            assert errors["SB3-style"] <= 1e-9, quantity
