"""Framework models → GE IR (ONNX: `ge.parser.onnx`; original-model JSON: `ge.parser.onnx_json`).

Parsers build graphs and nothing else: no optimisation, no shape inference (docs/parser.md).
"""
