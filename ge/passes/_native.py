"""The helper types CANN implements natively, here in plain Python (spec §3.8-3.10).

PassContext, MatchResult and PatternMatcherConfig(+Builder).  The engine creates contexts and
match results; user code only reads them.  Handles expire when the engine says so, like the
reference's borrowed views.
"""
from __future__ import annotations

from typing import Callable, Optional

__all__ = ["PassContext", "MatchResult", "PatternMatcherConfig", "PatternMatcherConfigBuilder"]

_ENGINE = object()  # token: only the engine may construct these types


class PassContext:
    """The engine's per-pass context: pass name, error message, GE options."""

    def __init__(self, *args, **kwargs):
        if not args or args[0] is not _ENGINE:
            raise TypeError("PassContext cannot be constructed from Python; "
                            "the engine passes one to the pass hooks")
        options = kwargs.get("options") or {}
        self._pass_name = kwargs.get("pass_name", "")
        self._options: dict[str, str] = dict(options)
        self._error = ""

    @classmethod
    def _create(cls, pass_name: str = "", options: Optional[dict] = None) -> "PassContext":
        return cls(_ENGINE, pass_name=pass_name, options=options)

    def get_pass_name(self) -> str:
        return self._pass_name

    def set_pass_name(self, name: str) -> None:
        self._pass_name = str(name)

    def get_error_message(self) -> str:
        return self._error

    def set_error_message(self, msg: str) -> None:
        self._error = str(msg)

    def get_option_value(self, key: str) -> str:
        if key not in self._options:
            raise RuntimeError(f"Failed to get option value for key: {key}")
        return str(self._options[key])


class PatternMatcherConfig:
    """Matcher switches; built only through PatternMatcherConfigBuilder."""

    def __init__(self, *args):
        if not args or args[0] is not _ENGINE:
            raise TypeError("PatternMatcherConfig has no public constructor; "
                            "use PatternMatcherConfigBuilder().build()")
        self._const_value, self._ir_attr = bool(args[1]), bool(args[2])

    def is_enable_const_value_match(self) -> bool:
        return self._const_value

    def is_enable_ir_attr_match(self) -> bool:
        return self._ir_attr

    def __repr__(self):
        return (f"PatternMatcherConfig(const_value_match={self._const_value}, "
                f"ir_attr_match={self._ir_attr})")


class PatternMatcherConfigBuilder:
    def __init__(self):
        self._const_value = False
        self._ir_attr = False

    def enable_const_value_match(self) -> "PatternMatcherConfigBuilder":
        self._const_value = True
        return self

    def enable_ir_attr_match(self) -> "PatternMatcherConfigBuilder":
        self._ir_attr = True
        return self

    def build(self) -> PatternMatcherConfig:
        return PatternMatcherConfig(_ENGINE, self._const_value, self._ir_attr)


class MatchResult:
    """One match of a pattern in the target graph; valid only during the callback."""

    def __init__(self, *args):
        if not args or args[0] is not _ENGINE:
            raise TypeError("MatchResult cannot be constructed from Python")
        self._match = args[1]          # ge.passes.matcher.Match
        self._alive = True

    def _check(self):
        if not self._alive:
            raise RuntimeError("MatchResult handle has expired")
        return self._match

    def _invalidate(self) -> None:
        self._alive = False

    def get_matched_nodes(self) -> list:
        return list(self._check().matched_nodes())

    def get_captured_tensor(self, i: int):
        from .pattern import NodeIo
        m = self._check()
        if not isinstance(i, int) or not 0 <= i < len(m.captures):
            raise RuntimeError(f"captured tensor index {i} is out of range "
                               f"(pattern has {len(m.captures)} captures)")
        bound = m.captures[i]
        if bound is None:
            raise RuntimeError(f"captured tensor {i} is not bound in this match")
        return NodeIo(bound[0], bound[1])

    def get_pattern_graph_name(self) -> str:
        return self._check().pattern.graph_name

    def __str__(self):
        m = self._check()
        pairs = ", ".join(f"{p.type}:{t.name}" for p, t in m.pairs())
        return f"MatchResult(pattern={m.pattern.graph_name}, {{{pairs}}})"

    __repr__ = __str__


def _call_with_expiry(result: MatchResult, fn: Callable, *args):
    """Call `fn(result, *args)` and expire the result afterwards, whatever happens."""
    try:
        return fn(result, *args)
    finally:
        result._invalidate()
