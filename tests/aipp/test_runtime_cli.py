"""The runtime command lines with raw images: `python3 -m ge.runtime.compare` on a .yuv file
(the original model gets the numpy pre-processing, the AIPP op is checked against it), and
`python3 -m ge.runtime` with a dynamic AIPP image shorter than max_src_image_size plus the
parameter buffer in CANN's layout."""
from __future__ import annotations

import numpy as np

from test_compute import CASES

from ge.runtime import load
from ge.runtime.__main__ import main as run_main
from ge.runtime._cli import guarded
from ge.runtime.compare import main as compare_main


def _run(main, argv, capsys):
    rc = guarded(main, argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out + err


def test_compare_takes_a_raw_yuv_file(aipp_om, aipp_models, tmp_path, capsys):
    case = CASES["crop_padding_normalise"]
    (image,) = case.inputs()
    image.tofile(tmp_path / "frame.yuv")
    rc, out = _run(compare_main, ["--onnx", str(aipp_models["rgb"]),
                                  "--om", str(aipp_om(case.model, case.config)),
                                  "--input", str(tmp_path / "frame.yuv")], capsys)
    assert rc == 0, out
    lines = out.splitlines()
    assert "AIPP img_0_aipp vs numpy AIPP reference: max abs 0, ok" in lines
    assert lines[-1] == "result: PASS"


def test_runtime_runs_dynamic_aipp_from_files(aipp_om, tmp_path, capsys):
    case = CASES["dynamic_yuv420sp"]
    om = str(aipp_om(case.model, case.config))
    image, params = case.inputs()
    image[:600].tofile(tmp_path / "frame.yuv")          # the image only, not the whole buffer
    params.tofile(tmp_path / "params.bin")
    rc, out = _run(run_main, ["--model", om, "--input",
                              f"{tmp_path / 'frame.yuv'},{tmp_path / 'params.bin'}",
                              "--output", str(tmp_path / "out")], capsys)
    assert rc == 0, out
    expected = load(om).run([image, params])[0]
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output_0.npy"), expected)
