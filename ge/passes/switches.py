"""Pass enable switches: `ge.optimizationSwitch` and `ge.fusionSwitchFile`
(spec/compile-options.md §6.2-6.4).

`PassSwitches.from_options(options)` parses both once per compile; `enabled(name, ...)` applies
the precedence:

  user and built-in (GE fusion-pass framework): switch string -> file explicit entry -> file
  `ALL` -> on.  Built-in passes registered as forbidden-to-close additionally take the
  `forbidden_close_pass` value after the switch string and stay on whatever the file says;
  `ExceptionalPassOfO1Level` names are on before the file is consulted.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Optional

from ge.errors import GeError
from ge.fsutil import read_text_regular

__all__ = ["PassSwitches", "parse_switch_string", "parse_fusion_switch_file",
           "OPTION_SWITCH", "OPTION_SWITCH_FILE", "FORBIDDEN_CLOSE_KEY"]

_log = logging.getLogger(__name__)

OPTION_SWITCH = "ge.optimizationSwitch"
OPTION_SWITCH_FILE = "ge.fusionSwitchFile"
FORBIDDEN_CLOSE_KEY = "forbidden_close_pass"
_FILE_LEVEL1 = ("Switch", "Priority", "ExceptionalPassOfO1Level")
_FILE_LEVEL2 = ("GraphFusion", "UBFusion")
_PRIORITY_LEVELS = {"Top": (0, 1000), "Main": (1000, 2000), "Down": (2000, 3000)}


def parse_switch_string(value: str) -> tuple[dict, list[str]]:
    """({name: "on"|"off"}, [bad token warnings]); later tokens win, bad tokens skipped."""
    table, bad = {}, []
    for token in (value or "").split(";"):
        if not token:
            continue
        name, sep, switch = token.partition(":")
        if not sep or not name or switch not in ("on", "off"):
            bad.append(token)
            continue
        table[name] = switch
    return table, bad


def _file_error(path: str, reason: str) -> GeError:
    return GeError("E10001", {"value": path, "parameter": "--fusion_switch_file",
                              "reason": reason})


def _parse_legacy(path: str, text: str) -> dict:
    table = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        name, sep, switch = line.partition(":")
        name, switch = name.strip(), switch.strip()
        if not sep or not name or switch not in ("on", "off"):
            raise _file_error(path, f"line {lineno} '{line}' is not PassName:on or "
                                    "PassName:off")
        if name in table:
            raise _file_error(path, f"pass {name} is listed twice (line {lineno})")
        table[name] = switch
    return {"GraphFusion": table, "UBFusion": dict(table), "exceptional": []}


def _parse_json(path: str, doc) -> dict:
    if not isinstance(doc, dict):
        raise _file_error(path, "the top level must be a JSON object")
    out = {"GraphFusion": {}, "UBFusion": {}, "exceptional": []}
    for key, value in doc.items():
        if key not in _FILE_LEVEL1:
            raise _file_error(path, f"unknown key '{key}'; allowed: {', '.join(_FILE_LEVEL1)}")
        if key == "ExceptionalPassOfO1Level":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _file_error(path, "ExceptionalPassOfO1Level must be a list of names")
            out["exceptional"] = list(value)
            continue
        if not isinstance(value, dict):
            raise _file_error(path, f"'{key}' must be an object")
        for fusion_type, entries in value.items():
            if fusion_type not in _FILE_LEVEL2 or not isinstance(entries, dict):
                raise _file_error(path, f"'{key}.{fusion_type}' must be GraphFusion or "
                                        "UBFusion holding an object")
            if key == "Switch":
                for name, switch in entries.items():
                    if not isinstance(switch, str) or switch.strip() not in ("on", "off"):
                        raise _file_error(path, f"switch of {name} must be \"on\" or \"off\"")
                    # quirk kept: validation trims, the switch itself compares untrimmed
                    out[fusion_type][name] = "on" if switch == "on" else "off"
            else:
                _check_priority(path, fusion_type, entries)
    return out


def _check_priority(path: str, fusion_type: str, levels: dict) -> None:
    seen = set()
    for level, entries in levels.items():
        if level not in _PRIORITY_LEVELS or not isinstance(entries, dict):
            raise _file_error(path, f"Priority.{fusion_type}.{level} is not Top, Main or Down")
        low, high = _PRIORITY_LEVELS[level]
        for name, value in entries.items():
            try:
                number = int(value)
            except (TypeError, ValueError):
                raise _file_error(path, f"priority of {name} must be an integer string") \
                    from None
            if not isinstance(value, str) or not low <= number < high:
                raise _file_error(path, f"priority of {name} must be in [{low},{high})")
            if name in seen:
                raise _file_error(path, f"pass {name} has two priorities in {fusion_type}")
            seen.add(name)


def parse_fusion_switch_file(path: str) -> dict:
    """{"GraphFusion": {...}, "UBFusion": {...}, "exceptional": [...]} from either format."""
    try:
        text = read_text_regular(path)
    except OSError as exc:
        raise _file_error(path, f"cannot read the file: {exc.strerror or exc}") from None
    if not text.strip():
        raise _file_error(path, "the file is empty")
    try:
        doc = json.loads(text)
    except ValueError:
        return _parse_legacy(path, text)
    return _parse_json(path, doc)


@dataclass
class PassSwitches:
    switch: dict = field(default_factory=dict)       # from ge.optimizationSwitch
    graph_fusion: dict = field(default_factory=dict)  # from the file, Switch.GraphFusion
    exceptional: list = field(default_factory=list)
    o1: bool = False
    bad_tokens: list = field(default_factory=list)

    @classmethod
    def from_options(cls, options: dict) -> "PassSwitches":
        table, bad = parse_switch_string(options.get(OPTION_SWITCH, ""))
        for token in bad:
            _log.warning("ge.optimizationSwitch token '%s' is not Name:on or Name:off; skipped",
                         token)
        path = options.get(OPTION_SWITCH_FILE, "")
        parsed = parse_fusion_switch_file(path) if path else {"GraphFusion": {},
                                                               "exceptional": []}
        return cls(table, parsed["GraphFusion"], parsed["exceptional"],
                   options.get("ge.oo.level", "O3") == "O1", bad)

    def named(self) -> list[str]:
        """Every pass name the user mentioned (for the unknown-name warning)."""
        names = [n for n in self.switch if n != FORBIDDEN_CLOSE_KEY]
        names += [n for n in self.graph_fusion if n != "ALL" and n not in names]
        return names

    def enabled(self, name: str, builtin: bool = False, forbidden_close: bool = False) -> bool:
        if name in self.switch:
            return self.switch[name] == "on"
        if builtin:
            if name in self.exceptional:
                return True
            if forbidden_close:
                value: Optional[str] = self.switch.get(FORBIDDEN_CLOSE_KEY)
                return value != "off"
            if self.o1:
                return False
        if name in self.graph_fusion:
            return self.graph_fusion[name] == "on"
        if "ALL" in self.graph_fusion:
            return self.graph_fusion["ALL"] == "on"
        return True
