"""Without a C compiler a compile that needs kernels fails with EP0114 naming this
distribution's install command; ge.host knows the command per distribution family."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ge.host import distro_family, install_command

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_COMPILE = textwrap.dedent("""
    import sys
    import onnx
    from onnx import TensorProto, helper
    from ge.atc.main import main_impl
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "m.onnx")
    sys.exit(main_impl(["atc", "--framework=5", "--model=m.onnx", "--output=m",
                        "--soc_version=Ascend310P3", "--op_compiler_cache_mode=disable"]) & 255)
""")


def test_no_c_compiler_names_the_install_command(tmp_path):
    bare = tmp_path / "bin"            # a PATH with no cc on it
    bare.mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=str(bare))
    proc = subprocess.run([sys.executable, "-c", _COMPILE], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 255, proc.stdout + proc.stderr
    assert "ATC run failed" in proc.stdout
    assert "EP0114" in proc.stdout and install_command(["gcc"]) in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "m.om").exists()


@pytest.mark.parametrize("os_release, family, command", [
    ('ID=debian\n', "debian", "apt-get install -y gcc"),
    ('ID=ubuntu\nID_LIKE=debian\n', "ubuntu", "apt-get install -y gcc"),
    ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "rhel", "dnf install -y gcc"),
    ('ID=opensuse-leap\nID_LIKE="suse opensuse"\n', "suse", "zypper install -y gcc"),
    ('ID=alpine\n', "alpine", "apk add gcc musl-dev"),
    ('ID=plan9\n', "", "apt-get install -y gcc or dnf install -y gcc"),
])
def test_install_command_per_distribution(tmp_path, os_release, family, command):
    path = tmp_path / "os-release"
    path.write_text(os_release)
    assert distro_family(str(path)) == family
    assert install_command(["gcc"], family) == command

