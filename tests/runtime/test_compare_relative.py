"""`python3 -m ge.runtime.compare` reports the relative error as |a - b| / max(|ref|, atol):
a reference of zero no longer turns a tiny difference into 5e+300 (docs/runtime.md)."""
from __future__ import annotations

import numpy as np

from ge.runtime.compare import Comparison, diff, format_report


def test_relative_error_is_measured_against_atol_where_the_reference_is_small():
    ref = np.array([0.0, 2.0, 1e-9], np.float32)
    ours = np.array([1e-6, 2.0 + 2e-4, 1e-9 + 1e-7], np.float32)
    d = diff("out", "out", ours, ref, rtol=1e-4, atol=1e-5)
    assert np.isclose(d.max_abs, 2e-4, rtol=1e-3)
    # elements: 1e-6 / 1e-5 = 0.1; 2e-4 / 2 = 1e-4; 1e-7 / 1e-5 = 0.01
    assert np.isclose(d.max_rel, 0.1, rtol=1e-3)
    result = Comparison(outputs=[d])
    line = next(l for l in format_report(result, 1e-4, 1e-5).splitlines()
                if l.split()[:1] == ["out"])
    assert line.split()[3] == "0.1" and "e+" not in line


def test_with_atol_zero_the_divisor_is_the_reference():
    d = diff("o", "o", np.array([3.0, 1.5]), np.array([2.0, 1.0]), rtol=0.0, atol=0.0)
    assert d.max_rel == 0.5 and d.max_abs == 1.0
