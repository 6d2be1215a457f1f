"""The ATC command-line parser (spec/atc-cli.md §3), a function over the flag table.

GNU getopt_long semantics without getopt: `-xy...` becomes `--xy...`, dashes in names become
underscores, exact names win over unique prefixes, string/int flags require a value (`--f=v` or
`--f v`), bool flags take one only as `--f=v`, positionals are errors, the first failure stops
parsing, the last occurrence of a flag is effective and the first one is the "user-set" record.
The parser prints nothing: diagnostics travel in `ParseFailure`; help is a result state.
"""
from __future__ import annotations

import os
import re

from ge.errors import GeError

from .flags import BOOL, BY_NAME, FLAGS, FRAMEWORK_NAMES, INT, Flag

__all__ = ["ParseResult", "ParseFailure", "parse_args", "rewrite_element", "check_value",
           "range_reason"]

_TRUE = ("", "1", "t", "true", "y", "yes")
_FALSE = ("0", "f", "false", "n", "no")
_INT32_MAX = 2 ** 31 - 1
_SINGLE_DASH_WORD = re.compile(r"^-(?=[A-Za-z]{2,})")
_DOUBLE_DASH_WORD = re.compile(r"^--[A-Za-z]{2,}")

# Deprecation notice printed while parsing (§3.6, last paragraph).
DEPRECATED_AT_PARSE = {
    "shape_generalized_build_mode":
        "[WARNING][GE] Option shape_generalized_build_mode is deprecated and will be removed "
        "in future version. Please do not configure this option in the future.",
}


class ParseResult:
    """values: the effective value of every flag; user_set: each flag's first validated
    occurrence; help: --help was given; notices: stdout lines to print."""

    def __init__(self, values: dict, user_set: dict | None = None, help: bool = False,
                 notices: list | None = None):
        self.values = values
        self.user_set = {} if user_set is None else user_set
        self.help = help
        self.notices = [] if notices is None else notices

    def explicit(self, name: str) -> bool:
        return name in self.user_set


class ParseFailure(Exception):
    """Parsing stopped: `stderr` holds raw `ERROR: ...` lines, `error` a coded error if any."""

    def __init__(self, stderr: list[str], error: GeError | None = None,
                 notices: list[str] | None = None):
        super().__init__("; ".join(stderr) or (error.code if error else "parse failure"))
        self.stderr, self.error, self.notices = stderr, error, notices or []


def rewrite_element(arg: str) -> str:
    """§3.1: `-mode=1` → `--mode=1`; `--soc-version=x` → `--soc_version=x`."""
    arg = _SINGLE_DASH_WORD.sub("--", arg, count=1)
    if _DOUBLE_DASH_WORD.match(arg):
        name, sep, value = arg.partition("=")
        arg = name[:4] + name[4:].replace("-", "_") + sep + value
    return arg


def _resolve(name: str) -> Flag | None:
    """Exact name (or the alias `h`), else a unique prefix of the long names."""
    if name == "h":
        return BY_NAME["help"]
    if name in BY_NAME:
        return BY_NAME[name]
    candidates = [f for f in FLAGS if f.name.startswith(name)]
    if name and "h".startswith(name):
        candidates.append(BY_NAME["help"])
    unique = {f.name: f for f in candidates}
    return next(iter(unique.values())) if len(unique) == 1 else None


def range_reason(choices: tuple[str, ...]) -> str:
    """The generic range reason: lexicographic order, `[v] ` each, then `.` (§3.6)."""
    listed = "".join(f"[{v}] " for v in sorted(choices))
    return f"The value is not within the range of values. The valid range is {listed}."


def _choice_error(f: Flag, value: str) -> GeError:
    if f.choice_code == "E10007":
        support = " or ".join(f"{v}({FRAMEWORK_NAMES[v]})" for v in f.choices)
        return GeError("E10007", {"parameter": f.name, "support": support})
    if f.choice_code == "E10010":
        return GeError("E10010", {"value": value})
    if f.choice_code == "E10006":
        return GeError("E10006", {"value": value, "parameter": f.name})
    return GeError("E10001", {"value": value, "parameter": f"--{f.name}",
                              "reason": range_reason(f.choices)})


def check_value(f: Flag, value: str) -> str:
    """Validate one value of flag `f` (value set, then type); return the stored value."""
    if f.choices and value not in f.choices:
        raise _choice_error(f, value)
    if f.kind == INT:
        if not (value.isascii() and value.isdigit()) or int(value) > _INT32_MAX:
            raise GeError("E10003", {"value": value, "parameter": f.name,
                                     "reason": "The value type must be [int32]."})
    if f.kind == BOOL:
        lowered = value.lower()
        if lowered in _TRUE:
            return "true"
        if lowered in _FALSE:
            return "false"
        raise GeError("E10003", {"value": value, "parameter": f.name,
                                 "reason": "The value type must be [bool]."})
    return value


def _unknown(arg: str) -> ParseFailure:
    name = arg.lstrip("-").split("=", 1)[0]
    return ParseFailure([f"ERROR: unknown command line flag '{name}'"])


def parse_args(argv: list[str], environ: dict | None = None) -> ParseResult:
    """Parse argv (argv[0] is the program); raise ParseFailure on the first problem."""
    environ = os.environ if environ is None else environ
    posix = "POSIXLY_CORRECT" in environ
    args = [rewrite_element(a) for a in argv[1:]]
    result = ParseResult(values={f.name: f.default for f in FLAGS})
    positionals: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positionals.extend(args[i:])
            break
        if arg.startswith("--"):
            name, has_value, value = arg[2:].partition("=")
            f = _resolve(name)
        elif arg.startswith("-") and len(arg) > 1:
            f = BY_NAME["help"] if arg == "-h" else None
            has_value, value = False, ""
        else:
            if posix:
                positionals.append(arg)
                positionals.extend(args[i:])
                break
            positionals.append(arg)
            continue
        if f is None:
            raise _unknown(arg)
        if f.kind != BOOL and not has_value:
            if i >= len(args):
                flag_text = arg.split("=", 1)[0]
                raise ParseFailure([f"ERROR: flag '{flag_text}' is missing its argument; "
                                    f"flag description: {f.help}"], notices=result.notices)
            value = args[i]
            i += 1
        try:
            stored = check_value(f, value)
        except GeError as err:
            raise ParseFailure([], err, result.notices) from None
        result.values[f.name] = stored
        result.user_set.setdefault(f.name, stored)
        if f.name in DEPRECATED_AT_PARSE:
            result.notices.append(DEPRECATED_AT_PARSE[f.name])
        if f.name == "help" and stored == "true":
            result.help = True
            return result
    if positionals:
        raise ParseFailure([f"ERROR: Non-option parameter: {p}" for p in positionals],
                           notices=result.notices)
    return result
