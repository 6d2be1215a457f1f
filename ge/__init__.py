"""pyatc: an open implementation of the CANN ATC offline model compiler.

Packages follow ARCHITECTURE.md: ge.atc (command line), ge.graph (IR), ge.ops (op registry),
ge.parser (framework models -> IR), ge.compiler (pipeline), ge.om (OM container),
ge.passes / ge.es (pass API), ge.runtime (host execution), ge.pyatc (in-process entry).
"""
__version__ = "0.1.0"
