"""Framework models → GE IR (ONNX: `ge.parser.onnx`, TensorFlow frozen GraphDefs:
`ge.parser.tensorflow`; original-model JSON: `ge.parser.onnx_json`, `ge.parser.tensorflow_json`).

Parsers build graphs and nothing else: no optimisation (docs/parser.md).  The TensorFlow parser
runs the registry's shape inference on the nodes it emits so that its converters can read
static shapes and fold constant control flow (docs/parser-tensorflow.md); it leaves the graph
unchanged otherwise.
"""
