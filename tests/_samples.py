"""The sample models every front end is checked on (tests/conftest.py compiles each once).

light_<name>  the onnx package's "light" model-zoo graphs (skipped where onnx ships none)
<name>_ci     the CI-sized generated ResNet-50, MobileNetV2 and BERT of bench/models
A later front end adds its samples here (a name and how to produce the file), so that
`model_path(name)` and `compiled_model(name)` serve them too.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.models import MODELS as GENERATORS, save  # noqa: E402
from bench.models.light import LIGHT_NAMES, light_dir  # noqa: E402

SAMPLE_SOC = "Ascend310P3"
# The float32 build: CANN's default precision mode is force_fp16 (issue 16), so a test that
# compares numbers at float32 tolerance (or expects the float32 graph) compiles with these.
FP32_FLAG = "--precision_mode=must_keep_origin_dtype"
FP32_OPTIONS = {"ge.exec.precision_mode": "must_keep_origin_dtype"}
LIGHT = tuple(f"light_{name}" for name in LIGHT_NAMES)
GENERATED = tuple(f"{name}_ci" for name in sorted(GENERATORS))
SAMPLE_MODELS = LIGHT + GENERATED
FRAMEWORK_OF_SUFFIX = {".onnx": 5}      # --framework of a sample, from its file's suffix


def sample_onnx(name: str, generated_dir: Path) -> Optional[Path]:
    """The .onnx file of sample `name` (a generated one is written into `generated_dir` on
    first use); None when onnx does not ship that light model."""
    if name not in SAMPLE_MODELS:
        raise KeyError(f"unknown sample model {name!r}; known: {', '.join(SAMPLE_MODELS)}")
    if name in LIGHT:
        found = Path(light_dir()) / f"{name}.onnx"
        return found if found.is_file() else None
    out = Path(generated_dir) / f"{name}.onnx"
    if not out.exists():
        save(GENERATORS[name[:-len("_ci")]](size="ci"), out)
    return out
