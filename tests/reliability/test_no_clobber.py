"""Issue #19 item 1: an output never replaces what it should not.

`ge.fsutil.publish` replaces a regular file atomically, follows a symlink and replaces its
target (the link stays), writes through to a character device or a FIFO (`--json=/dev/stdout`,
`/dev/null`, a pipe), and refuses a directory, block device or socket. Special files are made
in tmp_path (mkfifo, mknod when root); /dev is only written through a link to /dev/null.
"""
import errno
import os
import select
import socket
import stat
import threading
import time

import pytest

from fileprobes import LIMIT_S, atc_process
from ge.fsutil import publish


def open_fifo(path):
    """Make a FIFO at `path` with a reader already attached (so a writer finds one); the thread
    collects what a writer sends, up to its end, into the returned box."""
    os.mkfifo(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    box = []

    def drain():
        chunks, deadline = [], time.monotonic() + LIMIT_S
        while time.monotonic() < deadline:
            select.select([fd], [], [], 0.05)
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                chunks.append(chunk)
            elif chunks:
                break                   # end of data: the writer closed
            else:
                time.sleep(0.01)        # no writer yet
        os.close(fd)
        box.append(b"".join(chunks))
    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread, box


def test_regular_file_is_replaced_atomically(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    before = target.stat().st_ino
    publish(str(target), "new")
    assert target.read_text() == "new" and target.stat().st_ino != before
    assert sorted(os.listdir(tmp_path)) == ["out.json"]


@pytest.mark.parametrize("dangling", [False, True])
def test_symlink_stays_and_its_target_is_replaced(tmp_path, dangling):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.om"
    if not dangling:
        target.write_bytes(b"old")
    link = tmp_path / "link.om"
    link.symlink_to(os.path.relpath(target, tmp_path))
    publish(str(link), b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path / "real")) == ["out.om"]


def test_fifo_with_a_reader_is_written_through(tmp_path):
    path = tmp_path / "pipe.json"
    thread, box = open_fifo(path)
    publish(str(path), [b"{", b"}"])
    thread.join(LIMIT_S)
    assert box == [b"{}"] and stat.S_ISFIFO(os.stat(path).st_mode)


def test_fifo_without_a_reader_is_refused_not_waited_on(tmp_path):
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    with pytest.raises(OSError, match="FIFO that no process reads") as info:
        publish(str(path), "{}")
    assert info.value.errno == errno.ENXIO and stat.S_ISFIFO(os.stat(path).st_mode)


def test_dev_null_through_a_link_stays_a_device(tmp_path):
    link = tmp_path / "null.json"
    link.symlink_to("/dev/null")
    publish(str(link), "{}")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("prefix", ["/dev/fd", "/proc/self/fd"])
def test_our_own_descriptor_is_written_in_place(tmp_path, prefix):
    """/dev/stdout style paths: a file this process holds open keeps its inode and offset."""
    log = tmp_path / "log"
    with open(log, "wb") as held:
        held.write(b"a")
        held.flush()
        publish(f"{prefix}/{held.fileno()}", b"b")
        held.write(b"c")
    assert log.read_bytes() == b"abc" and os.listdir(tmp_path) == ["log"]
    read_end, write_end = os.pipe()
    publish(f"{prefix}/{write_end}", b"piped")
    assert os.read(read_end, 64) == b"piped"
    os.close(read_end), os.close(write_end)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device needs root")
def test_character_device_made_here_is_written_through(tmp_path):
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))     # a second /dev/null
    publish(str(node), b"x" * 100)
    assert stat.S_ISCHR(os.stat(node).st_mode) and os.listdir(tmp_path) == ["null"]


@pytest.mark.parametrize("kind", ["directory", "socket", "block device"])
def test_other_special_files_are_refused_and_kept(tmp_path, kind):
    path = tmp_path / "out.om"
    if kind == "directory":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    else:
        if os.geteuid() != 0:
            pytest.skip("mknod of a device needs root")
        os.mknod(path, stat.S_IFBLK | 0o600, os.makedev(7, 200))   # a loop device number
    mode = os.lstat(path).st_mode
    with pytest.raises(OSError, match=f"it is a {kind}, which is never replaced"):
        publish(str(path), b"om")
    assert os.lstat(path).st_mode == mode and os.listdir(tmp_path) == ["out.om"]


# -- through the ATC flow ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def om(compiled_model):
    return compiled_model("mobilenetv2_ci").om      # the sample the other reliability tests use


def test_mode1_json_into_a_fifo(atc_main, tmp_path, om):
    path = tmp_path / "model.json"
    thread, box = open_fifo(path)
    run = atc_main("--mode=1", f"--om={om}", f"--json={path}", cwd=tmp_path)
    thread.join(LIMIT_S)
    assert run.rc == 0, run.text
    assert box and box[0].startswith(b"{") and stat.S_ISFIFO(os.stat(path).st_mode)


def test_mode1_json_into_a_fifo_nobody_reads(atc_main, tmp_path, om):
    path = tmp_path / "model.json"
    os.mkfifo(path)
    run = atc_main("--mode=1", f"--om={om}", f"--json={path}", cwd=tmp_path)
    assert run.rc == 255 and "E13004" in run.text and str(path) in run.text, run.text
    assert "FIFO that no process reads" in run.text and stat.S_ISFIFO(os.stat(path).st_mode)


def test_json_to_dev_stdout_in_a_process(tmp_path, om):
    """CANN writes --json=/dev/stdout to its standard output; so do we (a pipe here)."""
    done = atc_process("--mode=1", f"--om={om}", "--json=/dev/stdout", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert b'"graph"' in done.stdout and b"Traceback" not in done.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_json_to_dev_stdout_redirected_to_a_file(tmp_path, om):
    """`> out.txt`: the file the shell opened is written through our descriptor, not replaced
    behind the shell's back; the JSON sits between the start and the result lines."""
    out = tmp_path / "out.txt"
    with open(out, "wb") as stdout:
        inode = os.fstat(stdout.fileno()).st_ino
        done = atc_process("--mode=1", f"--om={om}", "--json=/dev/stdout", cwd=tmp_path,
                           stdout=stdout)
    text = out.read_text()
    assert done.returncode == 0, text + done.stderr.decode()
    assert out.stat().st_ino == inode
    assert text.index("ATC start working now") < text.index('"graph"') < text.index(
        "ATC run success")


def test_mode1_json_to_dev_null_keeps_the_device(atc_main, tmp_path, om):
    run = atc_main("--mode=1", f"--om={om}", "--json=/dev/null", cwd=tmp_path)
    assert run.rc == 0, run.text
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.listdir("/dev").count("null") == 1


@pytest.mark.parametrize("kind", ["symlink", "directory"])
def test_output_om_at_a_symlink_or_a_directory(atc_main, model_path, tmp_path, kind):
    (tmp_path / "real").mkdir()
    om = tmp_path / "net.om"
    if kind == "symlink":
        om.symlink_to("real/kept.om")
    else:
        om.mkdir()
    run = atc_main("--framework=5", f"--model={model_path('mobilenetv2_ci')}", "--output=net",
                   "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype", cwd=tmp_path)
    if kind == "symlink":
        assert run.rc == 0, run.text
        assert om.is_symlink() and (tmp_path / "real" / "kept.om").stat().st_size > 256
    else:
        assert run.rc == 255 and "E13004" in run.text and "file net.om" in run.text, run.text
        assert "it is a directory, which is never replaced" in run.text
        assert om.is_dir() and not any(om.iterdir())
    left = [n for d in (tmp_path, tmp_path / "real") for n in os.listdir(d) if n.startswith(".")]
    assert left == [], "no temporary left"
