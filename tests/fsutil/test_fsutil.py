"""ge.fsutil: the one temporary-name format, the stale sweep, atomic publish and the test-only
fault points (real files, real child processes; no mocks)."""
import os
import signal
import subprocess
import sys
import time

import pytest

from ge import fsutil
from ge.fsutil import faults

DEAD_PID = 2 ** 22 + 12345          # above the default pid_max: never a live process


def test_temp_name_is_beside_the_target_and_parses_back(tmp_path):
    target = tmp_path / "net.om"
    for kind in ("tmp", "trash"):
        temp = fsutil.temp_name(str(target), kind)
        assert os.path.dirname(temp) == str(tmp_path)
        parsed = fsutil.parse_temp_name(os.path.basename(temp))
        assert (parsed.base, parsed.kind, parsed.host, parsed.pid) == (
            "net.om", kind, fsutil.host_tag(), os.getpid())


@pytest.mark.parametrize("name", ["net.om", ".net.om", ".net.om.tmp-h-12", ".net.om.tmp-h-x-ab",
                                  "ge_kernel_vm-23622-0mc7p51i", ".net.om.part-h-1-ab"])
def test_other_names_are_not_temporaries(name):
    assert fsutil.parse_temp_name(name) is None


def _plant(directory, base, pid, age=0.0, host=None, is_dir=False):
    name = f".{base}.tmp-{host or fsutil.host_tag()}-{pid}-0badc0de"
    path = directory / name
    if is_dir:
        path.mkdir()
        (path / "inside").write_text("x")
    else:
        path.write_text("partial")
    if age:
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))
    return name


def test_sweep_removes_dead_and_old_temporaries_only(tmp_path):
    dead_file = _plant(tmp_path, "a.json", DEAD_PID)
    dead_dir = _plant(tmp_path, "te_relu_00", DEAD_PID, is_dir=True)
    live = _plant(tmp_path, "a.json", os.getpid())
    other_host_young = _plant(tmp_path, "b.json", DEAD_PID, host="elsewhere")
    other_host_old = _plant(tmp_path, "c.json", DEAD_PID, host="elsewhere",
                            age=fsutil.STALE_SECONDS + 60)
    (tmp_path / "a.json").write_text("final")
    removed = fsutil.sweep(str(tmp_path))
    assert removed == sorted([dead_file, dead_dir, other_host_old])
    assert sorted(os.listdir(tmp_path)) == sorted(["a.json", live, other_host_young])


def test_sweep_of_one_base_leaves_the_others(tmp_path):
    mine = _plant(tmp_path, "net.om", DEAD_PID)
    other = _plant(tmp_path, "other.om", DEAD_PID)
    assert fsutil.sweep(str(tmp_path), "net.om") == [mine]
    assert os.listdir(tmp_path) == [other]


def test_temp_dir_is_removed_on_exit_and_on_error(tmp_path):
    with fsutil.temp_dir(str(tmp_path / "ge_kernel")) as work:
        assert fsutil.parse_temp_name(os.path.basename(work)).base == "ge_kernel"
        (tmp_path / work / "kernel.c").write_text("int x;")
    with pytest.raises(KeyboardInterrupt):
        with fsutil.temp_dir(str(tmp_path / "ge_kernel")):
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_publish_replaces_atomically_and_cleans_up_on_interrupt(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    fsutil.publish(str(target), "first")
    assert target.read_text() == "first"

    def interrupted(point):
        assert point == "om.partial"
        assert len(os.listdir(tmp_path)) == 2        # the final file and our temporary
        raise KeyboardInterrupt

    monkeypatch.setattr(faults, "_PLAN", ("om.partial", "wait"))
    monkeypatch.setattr("ge.fsutil.atomic.fault_point", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fsutil.publish(str(target), [b"ab" * 10, b"cd" * 10], half_point="om.partial")
    assert os.listdir(tmp_path) == ["out.json"] and target.read_text() == "first"


CHILD = r"""
import sys
from ge.fsutil import publish
publish(sys.argv[1], [b"x" * 1000, b"y" * 1000], half_point="om.partial",
        written_point="om.written")
print("published")
"""


def _child(tmp_path, env_fault, **extra):
    env = dict(os.environ, GE_TEST_FAULT=env_fault, **extra)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd()] + sys.path)
    return subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "out.bin")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_kill_point_leaves_half_a_temporary_and_no_final_file(tmp_path):
    proc = _child(tmp_path, "om.partial:kill")
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    [temp] = os.listdir(tmp_path)
    assert fsutil.parse_temp_name(temp).base == "out.bin"
    assert (tmp_path / temp).stat().st_size == 1000       # exactly half


@pytest.mark.parametrize("value", ["om.partial", "om.partial:explode", "nowhere:kill"])
def test_badly_armed_points_do_nothing(tmp_path, value):
    proc = _child(tmp_path, value)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (0, "published\n", "")
    assert os.listdir(tmp_path) == ["out.bin"]


def test_wait_point_announces_on_the_fifo_and_waits_for_the_signal(tmp_path):
    fifo = tmp_path.parent / f"{tmp_path.name}.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        proc = _child(tmp_path, "om.written:wait", GE_TEST_FAULT_FIFO=str(fifo))
        import select
        ready, _, _ = select.select([reader], [], [], 60)
        assert ready, "the child never reached om.written"
        assert os.read(reader, 100).decode() == f"om.written {proc.pid}\n"
        [temp] = os.listdir(tmp_path)                       # complete, not yet renamed
        assert (tmp_path / temp).stat().st_size == 2000
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(reader)
    # Python ends on an unhandled KeyboardInterrupt by killing itself with SIGINT
    assert proc.returncode == -signal.SIGINT and "KeyboardInterrupt" in err and out == ""
    assert os.listdir(tmp_path) == []                        # publish removed its temporary


def test_wait_point_without_a_fifo_is_a_test_error(tmp_path):
    proc = _child(tmp_path, "om.written:wait", GE_TEST_FAULT_FIFO=str(tmp_path / "nothing"))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "FaultPointError" in err and "is not a FIFO" in err
    assert os.listdir(tmp_path) == []
