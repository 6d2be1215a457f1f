"""Wire schemas built from tables (ge.proto.schema): the IR's `ge.proto`/`domi` (ge_ir).

A leaf package: ge.graph (AIR, dumps), ge.om (the OM's protobuf partitions) and the parsers
read it; it imports nothing of ge.  Framework schemas (TensorFlow GraphDef, Caffe, AIPP) belong
beside ge_ir, each one table.
"""
