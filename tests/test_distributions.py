"""ge.distributions gives importlib.metadata's answers: entry points of a group (found through
a fake installed distribution, or none), and the BLAS wheel's version."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from ge import blas
from ge.distributions import entry_points, version_beside

ROOT = Path(__file__).resolve().parents[1]

# both answers, as (name, value) pairs, in a fresh interpreter with `path` on sys.path
_BOTH = '''
import json, sys
from importlib import metadata
from ge.distributions import entry_points
ours = [(e.name, e.value) for e in entry_points(sys.argv[1])]
reference = [(e.name, e.value) for e in metadata.entry_points().select(group=sys.argv[1])]
print(json.dumps([ours, reference]))
'''


def _answers(path: Path, group: str) -> list:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(path)]))
    proc = subprocess.run([sys.executable, "-c", _BOTH, group], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _fake_dist(site: Path) -> None:
    dist = site / "fake_group_owner-2.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-group-owner\n"
                                   "Version: 2.0\n")
    (dist / "entry_points.txt").write_text("[ge.test.group]\nb = mod_b\na = mod_a:make\n")


def test_entry_points_of_an_installed_distribution(tmp_path):
    _fake_dist(tmp_path / "site")
    ours, reference = _answers(tmp_path / "site", "ge.test.group")
    assert ours == reference and sorted(ours) == [["a", "mod_a:make"], ["b", "mod_b"]]


def test_a_group_nobody_declares_is_empty():
    assert entry_points("ge.test.group.nobody.declares") == []


def test_a_zip_on_sys_path_is_asked_through_importlib(tmp_path):
    archive = tmp_path / "dists.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\n"
                   "Version: 1.0\n")
        z.writestr("zipped-1.0.dist-info/entry_points.txt", "[ge.test.group]\nz = zmod\n")
    ours, reference = _answers(archive, "ge.test.group")
    assert ours == reference == [["z", "zmod"]]


def test_version_of_the_blas_wheel_is_its_metadata():
    where = blas.locate()
    assert where.version == metadata.version(blas.DISTRIBUTION)


def test_version_beside_a_package(tmp_path):
    (tmp_path / "fake_pkg").mkdir()
    _fake_dist(tmp_path)
    (tmp_path / "fake_group_owner-2.0.dist-info").rename(tmp_path / "Fake.Pkg-3.1.dist-info")
    (tmp_path / "Fake.Pkg-3.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-pkg\nVersion: 3.1\n\nVersion: not the header\n")
    assert version_beside(str(tmp_path / "fake_pkg"), "fake-pkg") == "3.1"
    assert version_beside(str(tmp_path / "fake_pkg"), "no-such-distribution-xyz") is None
