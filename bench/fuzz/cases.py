"""Case generators: (seed, category, index) -> one hostile input, always the same one.

Each generator takes a `random.Random` made by `case_rng` and returns what to feed the tool,
with a `kind` naming what was done (it heads every failure message).  Nothing here runs the
tool; `verdict.py` and `worker.py` do.
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass, fields, replace
from typing import Callable, Dict, List, Tuple

CATEGORIES = ("om", "model", "caffe", "flags")
SOC = "Ascend310P3"

__all__ = ["CATEGORIES", "SOC", "Mutation", "case_rng", "om_regions", "om_mutation",
           "small_model", "model_mutation", "small_caffe_net", "caffe_mutation", "flag_line",
           "MATERIALS", "write_materials", "OUTPUT_FLAGS"]


def case_rng(seed: int, category: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{category}:{index}")


@dataclass(frozen=True)
class Mutation:
    kind: str
    data: bytes
    sealed: bool = False     # checksum recomputed after the edit: a changed result is allowed


def _flip(data: bytes, lo: int, hi: int, rng: random.Random, count: int) -> bytes:
    out = bytearray(data)
    for pos in rng.sample(range(lo, hi), min(count, hi - lo)):
        out[pos] ^= 1 << rng.randrange(8)
    return bytes(out)


# -- OM mutations ---------------------------------------------------------------------------------
def om_regions(data: bytes) -> Dict[str, Tuple[int, int]]:
    """[start, end) of the header, the partition tables and each partition of a valid OM."""
    from ge.errors import take_warnings
    from ge.om import PartitionType, parse_om
    from ge.om.container import HEADER_SIZE
    parts = sorted(parse_om(data, "base.om").partitions, key=lambda p: p.offset)
    take_warnings()
    regions = {"header": (0, HEADER_SIZE), "tables": (HEADER_SIZE, parts[0].offset)}
    for p in parts:
        if p.size:
            regions[PartitionType(p.type).name] = (p.offset, p.offset + p.size)
    return regions


def _om_flip(base, regions, rng):
    name = rng.choice(sorted(regions))
    return f"flip:{name}", _flip(base, *regions[name], rng, rng.randint(1, 3))


def _om_truncate(base, regions, rng):
    cuts = [0, rng.randrange(1, 256), 256, regions["tables"][1], *(b for _, b in regions.values()),
            rng.randrange(256, len(base)), len(base) - 1]
    size = min(rng.choice(cuts), len(base) - 1)
    return f"truncate:{size}", base[:size]


def _om_extend(base, regions, rng):
    tail = rng.choice([bytes(rng.randint(1, 64)), rng.randbytes(rng.randint(1, 64)), base[:256]])
    return f"extend:{len(tail)}", base + tail


def _om_splice(base, regions, rng):
    src, dst = (regions[rng.choice(sorted(regions))] for _ in range(2))
    size = rng.randint(1, 64)
    a = rng.randrange(src[0], max(src[0] + 1, src[1] - size))
    b = rng.randrange(dst[0], max(dst[0] + 1, dst[1] - size))
    return f"splice:{a}->{b}+{size}", base[:b] + base[a:a + size] + base[b + size:]


_HEADER_INTS = (0, 1, 2, 7, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 40, (1 << 64) - 1)


def _om_header_field(base, regions, rng):
    """A header field (outside the checksum) set to an edge value."""
    from ge.om.container import HEADER_SIZE, pack_header, unpack_header
    header = unpack_header(base, "base.om")
    field = rng.choice([f.name for f in fields(header) if f.name != "checksum"])
    current = getattr(header, field)
    if isinstance(current, bytes):
        size = len(current)
        value = rng.choice([bytes(size), b"\xff" * size, rng.randbytes(size), b"\xc3\x28 not utf-8",
                            b"x" * size])
    else:
        value = rng.choice([*_HEADER_INTS, current + 1, max(current - 1, 0), rng.getrandbits(32)])
    for mask in ((1 << 64) - 1, 0xFFFFFFFF, 0xFF):          # the widest the field takes
        try:
            packed = pack_header(replace(header, **{field: value & mask if isinstance(
                value, int) else value}))
            break
        except struct.error:
            continue
    return f"header:{field}={value!r:.40}", packed + base[HEADER_SIZE:]


def _om_checksum(base, regions, rng):
    from ge.om.container import CHECKSUM_OFFSET, CHECKSUM_SIZE
    area = base[CHECKSUM_OFFSET:CHECKSUM_OFFSET + CHECKSUM_SIZE]
    pos = rng.randrange(CHECKSUM_SIZE)
    other = b"0" if area[pos:pos + 1] != b"0" else b"1"
    edits = {"zero": bytes(CHECKSUM_SIZE), "upper": area.upper(),
             "one_digit": area[:pos] + other + area[pos + 1:],
             "non_hex": rng.randbytes(CHECKSUM_SIZE), "half": area[:32] + bytes(32)}
    name = rng.choice(sorted(edits))
    return f"checksum:{name}", base[:CHECKSUM_OFFSET] + edits[name] + \
        base[CHECKSUM_OFFSET + CHECKSUM_SIZE:]


_TABLE_VALUES = (0, 1, 7, 8, 9, 99, 0xFFFFFFFF, 1 << 32, 1 << 63, (1 << 64) - 1)


def _om_table_field(base, regions, rng):
    """A partition-table word (count, type, padding, offset or size) set to an edge value."""
    lo, hi = regions["tables"]
    entries = (hi - lo - 8) // 24
    slots = [("num", lo, "<I"), ("pad", lo + 4, "<I")]
    for i in range(entries):
        at = lo + 8 + 24 * i
        slots += [(f"type{i}", at, "<I"), (f"pad{i}", at + 4, "<I"), (f"offset{i}", at + 8, "<Q"),
                  (f"size{i}", at + 16, "<Q")]
    name, at, fmt = rng.choice(slots)
    value = rng.choice(_TABLE_VALUES) & (0xFFFFFFFF if fmt == "<I" else (1 << 64) - 1)
    out = bytearray(base)
    struct.pack_into(fmt, out, at, value)
    return f"table:{name}={value}", bytes(out)


# (generator, weight, sealed).  Header and checksum edits leave the body (and so a matching
# checksum) alone: they are the mutations the checksum cannot see.
_OM_KINDS = (
    (_om_flip, 6, False), (_om_truncate, 2, False), (_om_extend, 1, False),
    (_om_splice, 1, False), (_om_header_field, 5, False), (_om_checksum, 2, False),
    (_om_flip, 3, True), (_om_truncate, 1, True), (_om_splice, 1, True),
    (_om_table_field, 3, True),
)


def om_mutation(base: bytes, regions: Dict[str, Tuple[int, int]],
                rng: random.Random) -> Mutation:
    from ge.om.container import HEADER_SIZE, reseal
    while True:               # draw again when the edit changed nothing (resealed away)
        gen, _, sealed = rng.choices(_OM_KINDS, weights=[w for _, w, _ in _OM_KINDS])[0]
        kind, data = gen(base, regions, rng)
        sealed = sealed and len(data) >= HEADER_SIZE
        if sealed:
            kind, data = f"sealed-{kind}", reseal(data)
        if data != base:
            return Mutation(kind, data, sealed)


# -- ONNX model mutations --------------------------------------------------------------------------
def small_model():
    """Conv(+bias) -> Relu -> Reshape -> MatMul -> Add -> Softmax on a [1,2,4,4] input: six ops
    with attributes, initializers of three ranks and a shape tensor, compiled in seconds."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)

    def init(name, array):
        return numpy_helper.from_array(np.asarray(array), name)
    inits = [init("w", rng.standard_normal((3, 2, 3, 3), dtype=np.float32)),
             init("b", rng.standard_normal(3, dtype=np.float32)),
             init("shape", np.array([1, 48], dtype=np.int64)),
             init("m", rng.standard_normal((48, 5), dtype=np.float32)),
             init("b2", rng.standard_normal(5, dtype=np.float32))]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "m"], ["mm"], name="matmul"),
             helper.make_node("Add", ["mm", "b2"], ["a"], name="add"),
             helper.make_node("Softmax", ["a"], ["y"], name="softmax", axis=1)]
    graph = helper.make_graph(nodes, "fuzz", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, 2, 4, 4])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [1, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _node(m, rng):
    return rng.choice(list(m.graph.node))


def _edit_input_dim(m, rng):
    dims = m.graph.input[0].type.tensor_type.shape.dim
    i = rng.randrange(len(dims))
    value = rng.choice([0, 1, 3, 8, -1, -3, 1 << 31, 1 << 40, "N"])
    if value == "N":
        dims[i].dim_param = "N"
    else:
        dims[i].dim_value = value
    return f"input_dim[{i}]={value}"


def _edit_input_dtype(m, rng):
    value = rng.choice([0, 2, 6, 7, 9, 10, 11, 16, 99])
    m.graph.input[0].type.tensor_type.elem_type = value
    return f"input_dtype={value}"


def _edit_attribute(m, rng):
    from onnx import AttributeProto, helper
    node = rng.choice([n for n in m.graph.node if n.attribute])
    i = rng.randrange(len(node.attribute))
    name = node.attribute[i].name
    value = rng.choice([[], [0], [-1], [1], [7, 7], [1, 1, 1, 1, 1], 0, -1, 7, 1 << 40,
                        float("nan"), "same", [1.5, 2.5]])
    node.attribute.pop(i)
    node.attribute.append(helper.make_attribute(name, value, attr_type=None if value != [] else
                                                AttributeProto.INTS))
    return f"{node.name}.{name}={value!r}"


def _edit_extra_attribute(m, rng):
    from onnx import helper
    node = _node(m, rng)
    node.attribute.append(helper.make_attribute(rng.choice(["bogus", "axis", "pads"]), 1))
    return f"{node.name}+attribute"


def _edit_drop_attribute(m, rng):
    node = rng.choice([n for n in m.graph.node if n.attribute])
    name = node.attribute.pop(rng.randrange(len(node.attribute))).name
    return f"{node.name}-{name}"


def _edit_drop_node(m, rng):
    i = rng.randrange(len(m.graph.node))
    return f"drop_node:{m.graph.node.pop(i).name}"


def _edit_op_type(m, rng):
    node = _node(m, rng)
    node.op_type = rng.choice(["Bogus", "relu", "Add", "Identity", "If", "Loop", ""])
    return f"{node.name}.op_type={node.op_type}"


def _edit_input_name(m, rng):
    node = _node(m, rng)
    i = rng.randrange(len(node.input))
    node.input[i] = rng.choice(["nowhere", "", "x", "y", node.output[0]])
    return f"{node.name}.input[{i}]={node.input[i]}"


def _edit_drop_initializer(m, rng):
    i = rng.randrange(len(m.graph.initializer))
    return f"drop_initializer:{m.graph.initializer.pop(i).name}"


def _edit_initializer(m, rng):
    t = rng.choice(list(m.graph.initializer))
    what = rng.choice(["dims", "dtype", "short", "huge", "external"])
    if what == "dims":
        t.dims[:] = rng.choice([[], [0], [1], [2, 2], [3, 2, 3, 4], [-1, 48]])
    elif what == "dtype":
        t.data_type = rng.choice([0, 1, 6, 7, 10, 99])
    elif what == "short":
        t.raw_data = t.raw_data[:len(t.raw_data) // 2]
    elif what == "huge":
        t.dims[:] = [1 << 20, 1 << 20]
    else:
        from onnx import TensorProto
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
        entry = t.external_data.add()
        entry.key, entry.value = "location", rng.choice(["missing.bin", "../outside.bin",
                                                         "model.onnx"])
    return f"initializer:{t.name}:{what}"


def _edit_reshape_target(m, rng):
    from onnx import numpy_helper
    import numpy as np
    t = next(t for t in m.graph.initializer if t.name == "shape")
    value = rng.choice([[-1, -1], [0], [7, 7], [1, -1, 1], [48], [1, 0], [-2, 48]])
    t.CopyFrom(numpy_helper.from_array(np.array(value, dtype=np.int64), "shape"))
    return f"reshape={value}"


def _edit_opset(m, rng):
    m.opset_import[0].version = rng.choice([0, 1, 6, 11, 99])
    return f"opset={m.opset_import[0].version}"


def _edit_ir_version(m, rng):
    m.ir_version = rng.choice([0, 1, 99])
    return f"ir_version={m.ir_version}"


def _edit_domain(m, rng):
    node = _node(m, rng)
    node.domain = rng.choice(["com.example", "ai.onnx.ml", "com.microsoft"])
    return f"{node.name}.domain={node.domain}"


def _edit_graph_output(m, rng):
    if rng.random() < 0.5:
        m.graph.output.pop()
        return "no_graph_output"
    m.graph.output[0].name = rng.choice(["nowhere", "x", "r"])
    return f"graph_output={m.graph.output[0].name}"


def _edit_names(m, rng):
    node = _node(m, rng)
    node.name = rng.choice(["", "名前 ✓", "a/b\\c", "\u202eevil", "x" * 1000, "relu"])
    return f"node_name={node.name[:20]!r}"


# Edits of a valid model, each returning its label.
_MODEL_EDITS: Tuple[Callable, ...] = (
    _edit_input_dim, _edit_input_dtype, _edit_attribute, _edit_extra_attribute,
    _edit_drop_attribute, _edit_drop_node, _edit_op_type, _edit_input_name,
    _edit_drop_initializer, _edit_initializer, _edit_reshape_target, _edit_opset,
    _edit_ir_version, _edit_domain, _edit_graph_output, _edit_names)


def model_mutation(base: bytes, rng: random.Random) -> Mutation:
    how = rng.choices(["truncate", "flip", "edit"], weights=[2, 2, 5])[0]
    if how == "truncate":
        size = rng.randrange(len(base))
        return Mutation(f"truncate:{size}", base[:size])
    if how == "flip":
        count = rng.randint(1, 4)
        return Mutation(f"flip:{count}", _flip(base, 0, len(base), rng, count))
    import onnx
    model = onnx.ModelProto.FromString(base)
    label = rng.choice(_MODEL_EDITS)(model, rng)
    return Mutation(f"edit:{label}", model.SerializeToString())


# -- Caffe model mutations -----------------------------------------------------------------------
def small_caffe_net() -> Tuple[bytes, bytes]:
    """(prototxt, caffemodel) of Convolution -> ReLU -> Pooling -> InnerProduct -> Softmax on
    a [1,3,8,8] input (bench/models/caffe_nets.py writes them)."""
    import tempfile
    from pathlib import Path
    from bench.models.caffe_nets import CaffeNet
    n = CaffeNet("net", seed=1)
    x = n.relu(n.conv(n.input("data", (1, 3, 8, 8)), 3, 4, 3, pad=1))
    n.softmax(n.fc(n.pool(x, 2, 2), 4 * 4 * 4, 5))
    with tempfile.TemporaryDirectory() as d:
        return tuple(Path(p).read_bytes() for p in n.save(d))


_PROTOTXT_TOKENS = (b"0", b"-1", b"99999999999", b"}", b"{", b'"', b"", b"layer {",
                    b'bottom: "nowhere"', b'type: "Bogus"', b"\xff", b"1e40", b"num_output: 0",
                    b"kernel_size: 0", b"stride: 0", b"pad: -5", b"dim: 0", b"dim: -3")


def caffe_mutation(prototxt: bytes, weights: bytes, rng: random.Random) -> Tuple[str, bytes, bytes]:
    """(kind, prototxt, caffemodel): a token or line of the text changed, dropped or repeated,
    or the weights bit-flipped or truncated."""
    how = rng.choice(["token", "cut_text", "line", "flip_weights", "cut_weights"])
    if how == "token":
        at = rng.randrange(len(prototxt))
        token = rng.choice(_PROTOTXT_TOKENS)
        return (f"token@{at}={token!r}", prototxt[:at] + token +
                prototxt[at + rng.randint(0, 6):], weights)
    if how == "cut_text":
        size = rng.randrange(len(prototxt))
        return f"cut_text:{size}", prototxt[:size], weights
    if how == "line":
        lines = prototxt.split(b"\n")
        k = rng.randrange(len(lines))
        if rng.random() < 0.5:
            return f"drop_line:{lines.pop(k)!r:.40}", b"\n".join(lines), weights
        lines.insert(k, lines[rng.randrange(len(lines))])
        return f"repeat_line:{lines[k]!r:.40}", b"\n".join(lines), weights
    if how == "flip_weights":
        count = rng.randint(1, 4)
        return f"flip_weights:{count}", prototxt, _flip(weights, 0, len(weights), rng, count)
    size = rng.randrange(len(weights))
    return f"cut_weights:{size}", prototxt, weights[:size]


# -- ATC command lines -----------------------------------------------------------------------------
# The files every flag line runs beside (relative paths, so one line means the same thing
# in-process and as a process): what a flag may name, right or wrong.
MATERIALS = {
    "switch.json": b'{"Switch": {"GraphFusion": {"ALL": "off"}}}',
    "switch.cfg": b"ALL:off\n",
    "raw.json": b'{"compile options": {"graph": {"ge.exec.exclude_engines": "AiCore|AiVec"}}}',
    "debug.cfg": b"op_debug_config=ccec_g\n",
    "singleop.json": b'[{"op": "Add", "input_desc": [{"format": "ND", "shape": [2, 2], '
                     b'"type": "float"}, {"format": "ND", "shape": [2, 2], "type": "float"}], '
                     b'"output_desc": [{"format": "ND", "shape": [2, 2], "type": "float"}]}]',
    "empty.txt": b"",
    "binary.bin": bytes(range(256)),
    "bad.json": b'{"compile options": ',
    "keep.om": b"the OM of an earlier run",
    "dir/": b"",
}

# Flags that name a file to read, and the file that is right for them.
_FILE_FLAGS = {
    "model": "model.onnx", "om": "model.om", "weight": "binary.bin", "raw_ge_options": "raw.json",
    "fusion_switch_file": "switch.cfg", "op_debug_config": "debug.cfg",
    "singleop": "singleop.json", "insert_op_conf": "empty.txt", "op_name_map": "empty.txt",
    "compress_weight_conf": "empty.txt", "compression_optimize_conf": "empty.txt",
    "op_precision_mode": "empty.txt", "modify_mixlist": "bad.json", "keep_dtype": "empty.txt",
    "customize_dtypes": "empty.txt", "cal_conf": "empty.txt", "cluster_config": "empty.txt",
    "hccl_sub_comm_config": "empty.txt", "mdl_bank_path": "dir", "op_bank_path": "dir",
}
# Flags that name something the run writes (their files may change; on failure the OM and JSON
# must not appear or change).
OUTPUT_FLAGS = ("output", "json", "check_report", "debug_dir", "op_compiler_cache_dir")
_FILES = ("model.onnx", "model.om", *sorted(MATERIALS), "missing.json", "dir/", "")
_OUTPUTS = ("out", "keep", "model", "dir", "dir/out", "missing/out", "", "out.om", "o" * 300,
            "sp ace", "ü", "-dash", "a=b", "keep.om", "raw.json", "model.onnx")
_STRINGS = ("", " ", "0", "1", "-1", "2", "true", "false", "x", "a:b;c:d", "x:1,2,4,4",
            "x:-1,2,4,4", "x:1~2,2,4,4", "y:0:FP16", "relu:0", "é✓", "\u202e", "a\tb", "a\nb",
            "'\"`$(x)", "*", "%s%n", "9" * 30, "x" * 5000, "\udcff", "ALL:off")
# Values that mean something for small_model() (input x, nodes conv ... softmax).
_HINTS = {
    "input_shape": ("x:1,2,4,4", "x:2,2,4,4", "x:-1,2,4,4", "y:1", "x:1,2,4", "x:0,2,4,4",
                    "x:1,2,4,4;x:1,2,4,4", "x:1,2,4,4;"),
    "out_nodes": ("relu:0", "conv:0;relu:0", "softmax:0", "nothing:0", "relu:9", "relu",
                  "relu:0;relu:0"),
    "output_type": ("FP16", "FP32", "INT8", "UINT8", "softmax:0:FP16", "HIF8", "bogus:0:FP16"),
    "input_format": ("NCHW", "NHWC", "ND", "NC1HWC0", "XYZ"),
    "input_fp16_nodes": ("x", "y", "x;x"),
    "optimization_switch": ("ALL:off", "NoSuchPass:on", "x", "a:b:c"),
    "soc_version": (SOC, "Ascend310", "Ascend910B1", "bogus", "ascend310p3"),
    "op_precision_mode": ("empty.txt", "binary.bin"),
}
_INTS = ("0", "1", "-1", "2147483648", "99999999999999999999", "0x10", "1e3", " 1", "", "abc")
_BOOLS = ("true", "false", "1", "0", "", "yes", "TRUE")

_BASES = {
    "compile": ["--framework=5", "--model=model.onnx", "--output=out", f"--soc_version={SOC}"],
    "json_om": ["--mode=1", "--om=model.om", "--json=out.json"],
    "json_onnx": ["--mode=1", "--framework=5", "--om=model.onnx", "--json=out.json"],
    "show": ["--mode=6", "--om=model.om"],
    "precheck": ["--mode=3", "--framework=5", "--model=model.onnx", f"--soc_version={SOC}",
                 "--output=out"],
    "nothing": [],
}
_BASE_WEIGHTS = (12, 2, 1, 2, 1, 1)


def _check_tables() -> None:
    from ge.atc.flags import BY_NAME
    stale = (set(_FILE_FLAGS) | set(OUTPUT_FLAGS) | set(_HINTS)) - set(BY_NAME)
    assert not stale, f"flags no longer in ge/atc/flags.py: {sorted(stale)}"


def _value(flag, rng: random.Random) -> str:
    from ge.atc.flags import BOOL, INT
    if flag.name in _FILE_FLAGS:
        return _FILE_FLAGS[flag.name] if rng.random() < 0.4 else rng.choice(_FILES)
    if flag.name in OUTPUT_FLAGS:
        return rng.choice(_OUTPUTS)
    if flag.name in _HINTS and rng.random() < 0.6:
        return rng.choice(_HINTS[flag.name])
    if flag.choices and rng.random() < 0.6:
        return rng.choice(flag.choices)
    if flag.choices and rng.random() < 0.5:
        return rng.choice(flag.choices).upper() + rng.choice(["", " ", "x"])
    if flag.kind == BOOL:
        return rng.choice(_BOOLS)
    if flag.kind == INT:
        return rng.choice(_INTS)
    return rng.choice((flag.default, *_STRINGS))


def _junk(rng: random.Random) -> List[str]:
    return [rng.choice(["--no_such_flag=1", "--modle=model.onnx", "-x", "-", "--", "---model=x",
                        "--=x", "model.onnx", "--Output=out", "--output_type", "-h", "--help",
                        "--mode", "--soc_version=", "--framework=5=5"])]


def flag_line(rng: random.Random) -> Tuple[str, List[str]]:
    """An ATC argument list (argv[1:]) and a label of how it was made."""
    from ge.atc.flags import BOOL, FLAGS
    _check_tables()
    base = rng.choices(sorted(_BASES), weights=[_BASE_WEIGHTS[i] for i, _ in
                                                enumerate(sorted(_BASES))])[0]
    line = list(_BASES[base])
    labels = [base]
    for _ in range(rng.randint(1, 4)):
        how = rng.choices(["add", "dup", "drop", "junk", "split", "bare"],
                          weights=[10, 3, 2, 2, 2, 1])[0]
        flag = rng.choice(FLAGS[1:])                      # --help only through junk
        if how == "add" or (how == "dup" and not line):
            line.insert(rng.randint(0, len(line)), f"--{flag.name}={_value(flag, rng)}")
            labels.append(f"+{flag.name}")
        elif how == "dup":
            name = rng.choice(line).split("=", 1)[0]
            f = next((f for f in FLAGS if f"--{f.name}" == name), flag)
            line.append(f"--{f.name}={_value(f, rng)}")
            labels.append(f"dup:{f.name}")
        elif how == "drop" and line:
            labels.append(f"-{line.pop(rng.randrange(len(line))).split('=', 1)[0]}")
        elif how == "junk":
            line[rng.randint(0, len(line)):0] = _junk(rng)
            labels.append("junk")
        elif how == "split" and flag.kind != BOOL:
            line += [f"--{flag.name}", _value(flag, rng)]
            labels.append(f"split:{flag.name}")
        else:
            line.append(f"--{flag.name}")
            labels.append(f"bare:{flag.name}")
    return " ".join(labels), line


def write_materials(directory, model_bytes: bytes, om_bytes: bytes) -> None:
    """The files of MATERIALS, plus model.onnx and model.om, into `directory`."""
    from pathlib import Path
    directory = Path(directory)
    for name, data in {**MATERIALS, "model.onnx": model_bytes, "model.om": om_bytes}.items():
        path = directory / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.write_bytes(data)
