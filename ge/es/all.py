"""ES op functions (`from ge.es.all import MatMul`), generated from `ge.ops` on access."""
from ._opmodule import names as _names, resolve as _resolve


def __getattr__(attr):
    return _resolve(__name__, attr)


def __dir__():
    return _names()
