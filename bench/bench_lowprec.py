"""Host latency of float16 / bfloat16 kernels over float32: ResNet-50 and a BERT-base encoder.

    python3 bench/bench_lowprec.py [--models resnet50,bert] [--size full|ci] [--runs 10]

Each model (bench/models) is first optimised by onnxruntime at ORT_ENABLE_BASIC (Conv+BatchNorm
folded: our fusion passes run on float32 graphs, before any dtype change), parsed once per
build, and compiled three times in-process: as is (float32), and with every float32 tensor made
float16, then bfloat16 (graph inputs, constants, Cast targets; the dtypes propagate through
shape inference): every compute op then runs the low-precision kernels of docs/kernel-abi.md
("Low precision"), with no op kept in float32.  Prints per model and dtype the median latency
(batch 1, one thread: CPU time), the ratio over float32, the largest error of the output against
onnxruntime's float32 (relative to the output's largest magnitude), how many ops ran compiled /
on AiCpu, and the compile time (cold kernel cache) over the float32 compile's.  Latency is the
median CPU time of one inference, the three builds taking turns (a shared machine's load
changes hit them alike).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from bench.models import MODELS  # noqa: E402

LOW = {"float16": "DT_FLOAT16", "bfloat16": "DT_BF16"}


def interleaved_cpu_ms(fns: dict, runs: int) -> dict:
    """Median CPU time (ms, this process: the runs are one thread) of each function, the
    functions taking turns run after run, so that a change of load on a shared machine hits
    every build alike."""
    times = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(runs):
        for k, fn in fns.items():
            start = time.process_time()
            fn()
            times[k].append(time.process_time() - start)
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


def basic_optimised(model, work: str):
    import onnx
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = os.path.join(work, "basic.onnx")
    ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return onnx.load(so.optimized_model_filepath)


def lower_graph(graph, dtype_name: str) -> None:
    """Every float32 tensor of the parsed graph made `dtype_name` (float16 or bfloat16)."""
    from ge.graph.lowprec import narrow
    from ge.graph.tensor import Tensor
    from ge.graph.types import DataType
    low = DataType[dtype_name]
    graphs = [graph] + [graph.get_subgraph(n) for n in getattr(graph, "subgraph_names",
                                                                 lambda: [])()]
    for g in graphs:
        for n in g.get_all_nodes():
            value = n.attr("value") if n.type in ("Const", "Constant") else None
            if value is not None and value.numpy().dtype == np.float32:
                t = Tensor.from_numpy(narrow(value.numpy(), low))
                t._dtype = low
                n.set_attr("value", t)
                n.out_desc(0).set_data_type(low)
            if n.type == "Data":
                descs = [n.out_desc(0)] + ([n.in_desc(0)] if n.num_inputs else [])
                for d in descs:
                    if d.data_type == DataType.DT_FLOAT:
                        d.set_data_type(low)
            if n.type == "Cast" and n.attr("dst_type") == int(DataType.DT_FLOAT):
                n.set_attr("dst_type", int(low))


def build(model, dtype: str, work: str, cache: str) -> tuple:
    from ge.compiler.api import build_graph, save_om
    from ge.parser.onnx import parse_onnx
    opts = {"ge.socVersion": "Ascend310P3", "ge.op_compiler_cache_dir": cache}
    graph = parse_onnx(model, dict(opts))
    if dtype in LOW:
        lower_graph(graph, LOW[dtype])
    start = time.perf_counter()
    compiled = build_graph(graph, dict(opts))
    path = os.path.join(work, f"{dtype}.om")
    save_om(path, compiled, "bench")
    return path, time.perf_counter() - start


def feeds_for(model_om, base: list, dtype: str) -> list:
    from ge.graph.lowprec import narrow
    out = []
    for spec, x in zip(model_om.inputs, base):
        out.append(narrow(x, spec.data_type) if spec.data_type in LOW.values() else
                   x.astype(spec.dtype))
    return out


def run_model(name: str, size: str, runs: int) -> list:
    import onnxruntime as ort
    import ge.runtime
    from ge.graph.lowprec import bf16_to_f32
    rng = np.random.default_rng(0)
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench_lowprec_") as work:
        original = MODELS[name](size=size)
        model = basic_optimised(original, work)
        base = []
        for vi in model.graph.input:
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            if vi.type.tensor_type.elem_type == 7:        # int64 token ids / masks
                base.append(rng.integers(0, 100, shape).astype(np.int64) if "mask" not in
                            vi.name else np.ones(shape, np.int64))
            else:
                base.append(rng.standard_normal(shape).astype(np.float32))
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(original.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        ref = sess.run(None, {vi.name: x for vi, x in zip(original.graph.input, base)})[0]
        scale = float(np.abs(ref).max()) or 1.0
        models, info = {}, {}
        for dtype in ("float32", "float16", "bfloat16"):
            path, seconds = build(model, dtype, work, os.path.join(work, f"cache_{dtype}"))
            m = ge.runtime.load(path)
            feeds = feeds_for(m, base, dtype)
            out = m.run(feeds)[0]
            got = bf16_to_f32(out) if m.outputs[0].data_type == "DT_BF16" else \
                out.astype(np.float32)
            engines = list(m.engines.values())
            info[dtype] = (float(np.abs(got - ref).max()) / scale, engines, seconds)
            models[dtype] = (m, feeds)
        cpu = interleaved_cpu_ms({k: (lambda m=m, f=f: m.run(f))
                                  for k, (m, f) in models.items()}, runs)
        for m, _ in models.values():
            m.close()
        for dtype, (err, engines, seconds) in info.items():
            lines.append(f"{name:9s} {size:4s} {dtype:9s} {cpu[dtype]:9.2f} ms  "
                         f"{cpu[dtype] / cpu['float32']:5.2f}x  err {err:.2e}  compiled "
                         f"{engines.count('AiCore'):4d} aicpu {engines.count('AiCpu'):3d}  "
                         f"compile {seconds:6.2f} s ({seconds / info['float32'][2]:4.2f}x)")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--size", default="full", choices=("full", "ci"))
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args(argv)
    print("model     size dtype      latency   /fp32  max err / max|ref|  ops   compile (cold)")
    for name in args.models.split(","):
        for line in run_model(name, args.size, args.runs):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
