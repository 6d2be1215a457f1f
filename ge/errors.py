"""Typed errors that carry an ATC error code.

Lower layers raise GeError(code, params); only entry points (ge.atc, ge.runtime command lines)
render it.  A raise site passes the code and exactly the placeholders of its template: the
text lives in one table, ge/atc/codes.py, and `message` is read from it on demand.
"""
from __future__ import annotations


__all__ = ["GeError", "GeWarning", "warn", "take_warnings"]


def _text(code: str, params: dict) -> str:
    from ge.atc.codes import format_message   # on demand: raising must not load ge.atc
    return format_message(code, params)


class _Coded:
    """A code and its template's parameters; the text comes from the code table."""

    __slots__ = ()

    @property
    def message(self) -> str:
        return _text(self.code, self.params)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class GeError(_Coded, Exception):
    """A user-facing failure: `code` is an ATC code (E10001, E13010, EZ3003, ...)."""

    def __init__(self, code: str, params: dict | None = None):
        self.code = code
        self.params = dict(params or {})
        super().__init__(code, self.params)     # args rebuild the error when unpickled


class GeWarning(_Coded):
    """A W-code warning collected during a run and rendered after the result line."""

    __slots__ = ("code", "params")

    def __init__(self, code: str, params: dict | None = None):
        self.code, self.params = code, dict(params or {})


# Warnings raised below the entry point are collected here and rendered by ge.atc after the
# result line (ATC's warning report).  One run = one list; ge.atc clears it at the start.
_collected: list[GeWarning] = []


def warn(code: str, params: dict | None = None) -> None:
    warning = GeWarning(code, params)
    _collected.append(warning)
    import logging              # on demand: --help never warns
    logging.getLogger("ge").warning("%s", warning)


def take_warnings() -> list[GeWarning]:
    out = list(_collected)
    _collected.clear()
    return out
