"""TensorFlow front end benchmark: frozen Keras ResNet50 and a BERT-style encoder.

For each model, in one run:

  tf-compile     parse + compile + save of the frozen GraphDef (--framework=3), cold private
                 kernel cache
  onnx-compile   the same for the closest ONNX model of bench/models (same architecture family
                 and size; Keras models cannot be exported to ONNX here: tf2onnx is not
                 installed), cold private kernel cache of its own
  tf-parse / onnx-parse   the front end alone (GraphDef / ModelProto → IR)
  tensorflow     TensorFlow's own time to import the frozen graph and run it once (the
                 tensorflow module loaded and one session started before)

and prints tf-compile / onnx-compile (target <= 1.2: the front end must not be the slow part)
and tf-compile / tensorflow.

    python3 bench/bench_tf.py [--size ci|full]

Sizes: full = ResNet50 224x224 / BERT-base (12 layers, hidden 768, seq 128); ci = ResNet50 at
32x32 (Keras) vs the width/8 ONNX ResNet-50 / 2-layer encoder of hidden 64.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tensorflow"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import _tf_graphs as G  # noqa: E402
from bench.models import bert, resnet50  # noqa: E402

SIZES = {   # size -> {model: (frozen GraphDef builder, ONNX builder)}
    "full": {"resnet50": (lambda tf: G.keras_app(tf, "ResNet50", 224),
                          lambda: resnet50.build("full", 1)),
             "bert": (lambda tf: G.bert_encoder(tf, seq=128, width=768, layers=12,
                                                vocab=30522),
                      lambda: bert.build("full", 1))},
    "ci": {"resnet50": (lambda tf: G.keras_app(tf, "ResNet50", 32),
                        lambda: resnet50.build("ci", 1)),
           "bert": (lambda tf: G.bert_encoder(tf, seq=16, width=64, layers=2),
                    lambda: bert.build("ci", 1))},
}


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def compile_once(path: str, framework: int, work: str, input_format: str) -> float:
    from ge.compiler.api import compile_model_file, save_om
    cache = tempfile.mkdtemp(prefix="cache_", dir=work)
    options = {"ge.socVersion": "Ascend310", "ge.op_compiler_cache_dir": cache, "ge.exec.precision_mode": "must_keep_origin_dtype",
               "input_format": input_format}
    seconds, compiled = timed(lambda: compile_model_file(path, framework, options))
    seconds += timed(lambda: save_om(os.path.join(work, f"out_{framework}.om"), compiled))[0]
    return seconds


def tensorflow_once(tf, pb: bytes) -> float:
    graph_def = tf.compat.v1.GraphDef()

    def run():
        graph_def.ParseFromString(pb)
        graph = tf.Graph()
        with graph.as_default():
            tf.import_graph_def(graph_def, name="")
        inputs = [op for op in graph.get_operations() if op.type == "Placeholder"]
        feeds = {}
        for op in inputs:
            t = op.outputs[0]
            shape = [d or 1 for d in t.shape.as_list()]
            feeds[t] = np.zeros(shape, t.dtype.as_numpy_dtype)
        sinks = [op.outputs[0] for op in graph.get_operations()
                 if op.type == "Identity" and not op.outputs[0].consumers()]
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(sinks, feeds)
    return timed(run)[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="full")
    args = parser.parse_args(argv)
    import tensorflow as tf
    from ge.parser.onnx import parse_onnx
    from ge.parser.tensorflow import parse_tensorflow
    import onnx
    work = tempfile.mkdtemp(prefix="bench_tf_")
    tensorflow_once(tf, G.small_conv(tf))   # TensorFlow's one-time session start-up
    try:
        print(f"{'model':<10} {'tf-parse':>9} {'onnx-parse':>10} {'tf-compile':>10} "
              f"{'onnx-compile':>12} {'tensorflow':>10} {'tf/onnx':>8} {'tf/tensorflow':>13}")
        for name, (make_pb, make_onnx) in SIZES[args.size].items():
            pb_path, onnx_path = os.path.join(work, f"{name}.pb"), os.path.join(work,
                                                                               f"{name}.onnx")
            pb = make_pb(tf)
            Path(pb_path).write_bytes(pb)
            onnx.save(make_onnx(), onnx_path)
            tf_parse = timed(lambda: parse_tensorflow(pb_path))[0]
            onnx_parse = timed(lambda: parse_onnx(onnx_path))[0]
            tf_compile = compile_once(pb_path, 3, work, "NHWC")
            onnx_compile = compile_once(onnx_path, 5, work, "NCHW")
            reference = tensorflow_once(tf, pb)
            print(f"{name:<10} {tf_parse:>9.2f} {onnx_parse:>10.2f} {tf_compile:>10.2f} "
                  f"{onnx_compile:>12.2f} {reference:>10.2f} {tf_compile / onnx_compile:>8.2f} "
                  f"{tf_compile / reference:>13.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
