"""The example package installed with `pip install` into a fresh venv is found through its
`ge.ops.packages` entry point, without ASCEND_CUSTOM_OPP_PATH: the model compiled with the
package runs there (offline: no index, the venv sees the test interpreter's packages).  The
compile itself is the session's (tests/custom_ops/conftest.py): compiling again in the venv
would test nothing more and cost the suite seconds."""
from __future__ import annotations

import os
import subprocess
import sys

from _pyatc_venv import make_venv, venv_purelib

from ._packages import REPO, SWISH_PACKAGE

SCRIPT = """
import sys
import numpy as np
import ge.runtime
from ge.ops.custom import loaded_packages
model = ge.runtime.load(sys.argv[1])
x = np.linspace(-2, 2, 16, dtype=np.float32).reshape(2, 8)
r = np.maximum(x, 0)
np.testing.assert_allclose(model.run([x])[0], r / (1 + np.exp(-1.5 * r)) + x, rtol=1e-6)
print("packages", loaded_packages(), model.engines["swish"])
import ge_custom_swish
print("from", ge_custom_swish.__file__)
"""


def test_pip_installed_package_is_found_by_its_entry_point(swish_build, tmp_path):
    python = make_venv(tmp_path / "venv", see_outer_packages=True)
    purelib = venv_purelib(python)
    with open(os.path.join(purelib, "_pyatc_repo.pth"), "w") as f:
        f.write(str(REPO) + "\n")              # this checkout's ge, as an installed pyatc
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-build-isolation", "--no-deps", "--no-index", str(SWISH_PACKAGE)],
                   check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("ASCEND_CUSTOM_OPP_PATH",
                                                            "PYTHONPATH")}
    run = subprocess.run([str(python), "-c", SCRIPT, str(swish_build.om)], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "packages {'com.example.swish': '1.0.0'} AiCore" in run.stdout
    assert f"from {purelib}" in run.stdout
