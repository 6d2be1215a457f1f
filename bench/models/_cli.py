"""Saving models and the command line shared by every generator script."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence

import onnx

__all__ = ["save", "main", "EXTERNAL_DATA_THRESHOLD"]

EXTERNAL_DATA_THRESHOLD = 2 * 1024 ** 3
"""Protobuf's 2 GiB message limit: larger models keep their weights in a side file."""


def save(model: onnx.ModelProto, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path``; weights go to ``<name>.data`` only past 2 GiB."""
    path = os.fspath(path)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    if model.ByteSize() < EXTERNAL_DATA_THRESHOLD:
        onnx.save_model(model, path)
        return
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(path) + ".data", size_threshold=1024)


def main(build: Callable[..., onnx.ModelProto], description: str, default_opset: int,
         argv: Sequence[str] | None = None) -> int:
    """``--size ci|full --out PATH [--batch N] [--opset V]``: build and save one model."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=("ci", "full"), default="ci")
    parser.add_argument("--out", required=True, help="path of the .onnx file to write")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--opset", type=int, default=default_opset)
    args, extra = parser.parse_known_args(argv)
    kwargs: dict[str, str] = {}
    for item in extra:
        key, sep, value = item.lstrip("-").partition("=")
        if not sep:
            parser.error(f"unrecognised argument {item!r} (generator options are --key=value)")
        kwargs[key.replace("-", "_")] = value
    model = build(size=args.size, batch=args.batch, opset=args.opset, **kwargs)
    save(model, args.out)
    return 0
