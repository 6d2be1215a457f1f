"""Issue #19 item 3: every file the tool reads is a regular file, checked before it is read.

A FIFO at any input (--model, --om in modes 1 and 6, --fusion_switch_file, --raw_ge_options,
--op_debug_config, an ONNX external-data location, a pass file, a kernel-cache entry) used to
block forever, and /dev/zero read until memory ran out. Each probe runs the ATC main flow in
this process under a time limit (a thread: a hang fails the test instead of the suite) and
checks the coded refusal the user sees, naming the file and saying what it is.
"""
import errno
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from fileprobes import atc_process, within
from ge import fsutil
from ge.compiler.cache.store import lookup

def fifo(path):
    os.mkfifo(path)
    return str(path)


def relu_model(directory, external=None, bias_dims=None):
    """A one-Relu ONNX model; with `external`, its Add constant lives in that file; with
    `bias_dims`, the constant is one value splatted to those dims."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y0"]), helper.make_node("Relu", ["y0"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.ones(4, np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    if bias_dims:
        bias = model.graph.initializer[0]
        bias.ClearField("raw_data")
        del bias.dims[:]
        bias.dims.extend(bias_dims)
        bias.float_data.append(1.0)
    if external:
        bias = model.graph.initializer[0]
        bias.ClearField("raw_data")
        bias.data_location = TensorProto.EXTERNAL
        bias.external_data.add(key="location", value=external)
    path = directory / "relu.onnx"
    onnx.save(model, str(path))
    return str(path)


def compile_args(model, tmp_path, *extra):
    return (f"--model={model}", "--framework=5", f"--output={tmp_path / 'out'}",
            "--soc_version=Ascend310P3", "--precision_mode=must_keep_origin_dtype", *extra)


def refused(run, code, *names):
    rc, text = ((run.returncode, (run.stdout + run.stderr).decode()) if hasattr(run, "returncode")
                else (run.rc, run.text))
    assert rc == 255, text
    assert code in text, text
    assert "Traceback (most recent call last)" not in text
    for name in names:
        assert name in text, text


@pytest.mark.parametrize("flag", ["--model", "--om"])
def test_fifo_as_the_main_input(atc_main, tmp_path, flag):
    path = fifo(tmp_path / "in.onnx")
    args = (compile_args(path, tmp_path) if flag == "--model" else
            ("--mode=1", f"--om={path}", f"--json={tmp_path / 'o.json'}"))
    run = within(lambda: atc_main(*args, cwd=tmp_path))
    refused(run, "E10001", path, "FIFO, not a regular file")


def test_fifo_as_om_in_mode_6(atc_main, tmp_path):
    path = fifo(tmp_path / "net.om")
    run = within(lambda: atc_main("--mode=6", f"--om={path}", cwd=tmp_path))
    refused(run, "E10001", path, "FIFO")


def test_dev_zero_as_model_is_refused_not_read(atc_main, tmp_path):
    run = within(lambda: atc_main(*compile_args("/dev/zero", tmp_path), cwd=tmp_path))
    refused(run, "E10001", "/dev/zero", "character device, not a regular file")


@pytest.mark.parametrize("flag, code", [("--fusion_switch_file", "E10001"),
                                        ("--op_debug_config", "E10001"),
                                        ("--raw_ge_options", "E10001")])
def test_fifo_as_a_settings_file(atc_main, tmp_path, flag, code):
    path = fifo(tmp_path / "settings.cfg")
    model = relu_model(tmp_path)
    run = within(lambda: atc_main(*compile_args(model, tmp_path, f"{flag}={path}"),
                                  cwd=tmp_path))
    refused(run, code, path)
    assert not (tmp_path / "out.om").exists()


def test_fifo_as_external_data(atc_main, tmp_path):
    fifo(tmp_path / "bias.bin")
    model = relu_model(tmp_path, external="bias.bin")
    run = within(lambda: atc_main(*compile_args(model, tmp_path), cwd=tmp_path))
    refused(run, "E13001", "bias.bin", "FIFO")


def test_constant_larger_than_memory_is_refused_before_allocation(atc_main, tmp_path):
    """A one-value constant splatted to 4 TiB: refused by size before a byte is allocated,
    instead of a MemoryError or an OOM kill."""
    model = relu_model(tmp_path, bias_dims=[1 << 20, 1 << 20])
    run = within(lambda: atc_main(*compile_args(model, tmp_path), cwd=tmp_path))
    refused(run, "EP0101", "of float32 need", "of this host's memory")


def test_external_constant_larger_than_memory_is_never_read(atc_main, tmp_path):
    """1 TiB of (sparse) external data: weights are mapped, not read (issue #17), so the parse
    takes no memory for it and the compile goes on to shape inference, which refuses the
    shape; no MemoryError, no OOM kill, within the time limit."""
    with open(tmp_path / "bias.bin", "wb") as f:
        f.truncate(1 << 40)
    model = relu_model(tmp_path, external="bias.bin", bias_dims=[1 << 38])
    run = within(lambda: atc_main(*compile_args(model, tmp_path), cwd=tmp_path))
    refused(run, "EZ9999", "Add_0", "[274877906944] cannot be broadcast")


def test_fifo_as_a_pass_file(tmp_path):
    """A process of its own: user passes are loaded once per process."""
    path = fifo(tmp_path / "my_pass.py")
    model = relu_model(tmp_path)
    done = atc_process(*compile_args(model, tmp_path), cwd=tmp_path,
                       env={"ASCEND_GE_PY_PASS_PATH": path})
    refused(done, "E13029", "my_pass.py", "FIFO")


@pytest.mark.parametrize("planted", [".json", ".so"])
def test_fifo_in_a_cache_entry_is_a_corrupt_entry(tmp_path, planted):
    entry = tmp_path / "te_relu_0"
    entry.mkdir()
    for suffix in (".json", ".so"):
        target = entry / f"te_relu_0{suffix}"
        if suffix == planted:
            os.mkfifo(target)
        else:
            target.write_bytes(b"{}")
    found = within(lambda: lookup(str(tmp_path), "te_relu_0"))
    assert found.status == "corrupt" and "FIFO" in found.reason


# -- the helper itself ---------------------------------------------------------------------------

def test_read_regular_refuses_special_files_and_sizes(tmp_path):
    path = fifo(tmp_path / "f")
    with pytest.raises(fsutil.NotRegularFile, match="FIFO"):
        within(lambda: fsutil.read_regular(path))
    with pytest.raises(fsutil.NotRegularFile, match="character device"):
        fsutil.read_text_regular("/dev/zero")
    with pytest.raises(fsutil.NotRegularFile, match="a directory") as info:
        fsutil.read_regular(str(tmp_path))
    assert info.value.errno == errno.EISDIR
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(OSError, match="101 bytes, more than the limit of 100"):
        fsutil.read_text_regular(str(big), limit=100)
    assert fsutil.read_regular(str(big), offset=100) == b" "
    assert fsutil.read_regular(str(big), offset=99, length=5) == b"  "
