"""Typed errors that carry an ATC error code.

Lower layers raise GeError; only entry points (ge.atc, ge.runtime command lines) render it.
The message templates live in one table, ge/atc/codes.py; a GeError carries the code and
the template arguments, plus a ready message for codes whose text is built here.
"""
from __future__ import annotations


class GeError(Exception):
    """A user-facing failure: `code` is an ATC code (E10001, E13010, EZ3003, ...)."""

    def __init__(self, code: str, args: dict | None = None, message: str | None = None):
        self.code = code
        self.params = dict(args or {})
        self.message = message
        super().__init__(f"{code}: {message or self.params}")


class GeWarning:
    """A W-code warning collected during a run and rendered after the result line."""

    __slots__ = ("code", "params", "message")

    def __init__(self, code: str, args: dict | None = None, message: str | None = None):
        self.code, self.params, self.message = code, dict(args or {}), message


# Warnings raised below the entry point are collected here and rendered by ge.atc after the
# result line (ATC's warning report).  One run = one list; ge.atc clears it at the start.
_collected: list[GeWarning] = []


def warn(code: str, args: dict | None = None, message: str | None = None) -> None:
    import logging
    _collected.append(GeWarning(code, args, message))
    logging.getLogger("ge").warning("%s %s", code, message or args)


def take_warnings() -> list[GeWarning]:
    out = list(_collected)
    _collected.clear()
    return out
