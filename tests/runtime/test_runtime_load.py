"""ge.runtime: loading, running, input checks and damaged or foreign OM files."""
from __future__ import annotations

import numpy as np
import pytest

from _build import compile_to_om, onnxruntime_outputs, tiny_inputs, tiny_model

import ge.runtime
from ge.errors import GeError
from ge.om.container import reseal


@pytest.fixture(scope="module")
def tiny(tiny_om):
    model = ge.runtime.load(tiny_om)
    yield model
    model.close()


def test_describes_inputs_and_outputs(tiny):
    assert [(s.name, s.shape, s.dtype) for s in tiny.inputs] == [
        ("x", (1, 3, 8, 8), np.float32), ("y", (1, 4, 8, 8), np.float32)]
    assert [(s.shape, s.dtype) for s in tiny.outputs] == [((1, 4, 8, 8), np.float32)]


def test_matches_onnxruntime(tiny):
    x, y = tiny_inputs()
    ours = tiny.run([x, y])[0]
    ref = onnxruntime_outputs(tiny_model(), {"x": x, "y": y})[0]
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-6)


def test_dict_inputs_and_repeat_runs_agree(tiny):
    x, y = tiny_inputs()
    first = tiny.run({"y": y, "x": x})[0]
    tiny.run(tiny_inputs(seed=7))
    again = tiny.run([x, y])[0]
    np.testing.assert_array_equal(first, again)


def test_compiled_kernels_are_used(tiny):
    assert "AiCore" in tiny.engines.values()


@pytest.mark.parametrize("inputs, fragment", [
    (lambda x, y: [x], "2 input(s)"),
    (lambda x, y: [x, y[:, :2]], "must have shape [1, 4, 8, 8]"),
    (lambda x, y: [x.astype(np.float64), y], "must have dtype float32"),
    (lambda x, y: {"x": x, "z": y}, "unknown model input 'z'"),
    (lambda x, y: {"x": x}, "no value given for model input 'y'"),
    (lambda x, y: "x", "list or a dict"),
])
def test_bad_inputs_are_coded_errors(tiny, inputs, fragment):
    with pytest.raises(GeError) as info:
        tiny.run(inputs(*tiny_inputs()))
    assert info.value.code == "EP0403"
    assert fragment in info.value.message


def test_missing_file(tmp_path):
    with pytest.raises(GeError) as info:
        ge.runtime.load(tmp_path / "nope.om")
    assert info.value.code == "E13001"


def test_not_an_om(tmp_path):
    path = tmp_path / "x.om"
    path.write_bytes(b"hello world" * 100)
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "E10041"


def test_truncated_om(tiny_om, tmp_path):
    data = open(tiny_om, "rb").read()
    for cut in (10, 256, 300, len(data) // 2, len(data) - 1):
        path = tmp_path / f"cut{cut}.om"
        path.write_bytes(data[:cut])
        with pytest.raises(GeError) as info:
            ge.runtime.load(path)
        assert info.value.code == "E10041"


def _partition(om_path, ptype):
    from ge.om import read_om
    om = read_om(om_path)
    return next(p for p in om.partitions if p.type == ptype)


def test_lying_partition_size(tiny_om, tmp_path):
    import struct
    data = bytearray(open(tiny_om, "rb").read())
    # first table entry's mem_size (u64 at 256 + 8 + 16) made enormous
    struct.pack_into("<Q", data, 256 + 8 + 16, 1 << 60)
    path = tmp_path / "lying.om"
    path.write_bytes(bytes(data))
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "E10041"


def test_tampered_kernel_is_refused(tiny_om, tmp_path):
    import struct
    part = _partition(tiny_om, 3)   # TBE_KERNELS: u32 magic, name_len, bin_len, name, bin
    data = bytearray(open(tiny_om, "rb").read())
    _, name_len, bin_len = struct.unpack_from("<III", data, part.offset)
    data[part.offset + 12 + name_len + bin_len // 2] ^= 0xFF
    path = tmp_path / "tampered.om"
    path.write_bytes(reseal(bytes(data)))   # past the file checksum: the kernel hash refuses it
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "EP0112"
    assert "integrity" in info.value.message


def test_flipped_bytes_never_crash(tiny_om, tmp_path):
    """Single-bit flips (the magic, then random places): each load ends in a coded error of
    the code table or a model that still runs; any other exception fails the test."""
    from ge.atc.codes import lookup
    data = open(tiny_om, "rb").read()
    rng = np.random.default_rng(3)
    path = tmp_path / "flip.om"
    outcomes = []
    for pos in [0] + [int(p) for p in rng.integers(0, len(data), 40)]:
        damaged = bytearray(data)
        damaged[pos] ^= 1 << int(rng.integers(0, 8))
        path.write_bytes(bytes(damaged))
        try:
            model = ge.runtime.load(path)
            model.run(tiny_inputs())
            model.close()
            outcomes.append("ran")
        except GeError as e:
            assert lookup(e.code) is not None, f"flip at byte {pos}: unknown code {e}"
            outcomes.append(e.code)
    assert outcomes[0] == "E10041"       # a damaged magic is named as not an OM
    assert len(outcomes) == 41


def test_other_host_target_is_refused(tiny_om, tmp_path):
    data = open(tiny_om, "rb").read()
    from ge.om import host_target
    os_name, cpu = host_target()
    mine = f"host-{os_name}-{cpu}".encode()
    other = mine[:-len(cpu)] + (b"z" * len(cpu))
    assert mine in data
    path = tmp_path / "foreign.om"
    path.write_bytes(reseal(data.replace(mine, other)))
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "EP0401"
    assert other.decode() in info.value.message


def _rewrite(om_path, out_path, edit, **content):
    """Re-write an OM after edit(model_def), keeping weights, tasks and kernels."""
    from ge.om import OmContent, read_om, write_om
    om = read_om(om_path)
    edit(om.model_def)
    write_om(str(out_path), OmContent(model_def=om.model_def, weights=om.weights,
                                      task_def=om.task_def, kernels=list(om.kernels),
                                      **content))
    return str(out_path)


def test_huge_memory_size_is_refused(tiny_om, tmp_path):
    path = _rewrite(tiny_om, tmp_path / "huge.om", lambda md: None, memory_size=1 << 52)
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "EP0404"


def test_address_outside_arena_is_refused(tiny_om, tmp_path):
    def edit(md):
        op = next(o for o in md.graph[0].op if o.type == "Add")   # the Relu is fused in the conv
        op.output_i[0] = 1 << 30
    from ge.om import read_om
    memory = read_om(tiny_om).model_attr("memory_size")
    path = _rewrite(tiny_om, tmp_path / "addr.om", edit, memory_size=memory)
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "EP0404"
    assert "add" in info.value.message


def test_op_without_any_kernel_names_the_op(tmp_path):
    om = compile_to_om(tiny_model(), tmp_path / "cpu.om", {"ge.exec.exclude_engines": "AiCore"})

    def edit(md):
        op = next(o for o in md.graph[0].op if o.type == "Add")
        op.type = "NoSuchOp"
    from ge.om import read_om
    memory = read_om(om).model_attr("memory_size")
    path = _rewrite(om, tmp_path / "unknown.om", edit, memory_size=memory)
    with pytest.raises(GeError) as info:
        ge.runtime.load(path)
    assert info.value.code == "EP0402"
    assert "add (NoSuchOp)" in info.value.message
