"""A tiny `--name value` / `--name=value` parser for the runtime command lines.

Not argparse: a bad command line must end with a coded error and exit status 255 (as msame
and atc do), not argparse's usage text and status 2.  Each command line declares its options
as one table of `Opt` records; the help text is generated from the same table.
"""
from __future__ import annotations

from dataclasses import dataclass

from ge.errors import GeError

__all__ = ["Opt", "parse", "help_text"]


@dataclass(frozen=True)
class Opt:
    name: str
    help: str
    default: object = None
    kind: type = str            # str, int, float or bool (a switch)
    required: bool = False


def parse(argv: list, table: tuple) -> dict:
    opts = {o.name: o for o in table}
    out = {o.name: o.default for o in table}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--") or arg == "--":
            raise GeError("E10001", {"value": arg, "parameter": "(positional)",
                                     "reason": "options are written --name value"})
        name, eq, value = arg[2:].partition("=")
        opt = opts.get(name)
        if opt is None:
            import difflib
            close = difflib.get_close_matches(name, list(opts), n=1)
            hint = f" Did you mean --{close[0]}?" if close else ""
            raise GeError("E10001", {"value": f"--{name}", "parameter": "(option name)",
                                     "reason": f"there is no such option.{hint}"})
        if opt.kind is bool:
            out[name] = True if not eq else value.lower() in ("1", "true", "yes", "on")
            i += 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                raise GeError("E10004", {"parameter": name})
            value = argv[i + 1]
            i += 1
        i += 1
        try:
            out[name] = opt.kind(value)
        except ValueError:
            raise GeError("E10001", {"value": value, "parameter": f"--{name}",
                                     "reason": f"it is not a valid {opt.kind.__name__}"}) from None
    for o in table:
        if o.required and out[o.name] in (None, ""):
            raise GeError("E10004", {"parameter": o.name})
    return out


def help_text(prog: str, summary: str, table: tuple) -> str:
    lines = [f"usage: {prog} [--option value ...]", "", summary, "", "options:"]
    for o in table:
        flag = f"--{o.name}" + ("" if o.kind is bool else " VALUE")
        default = "" if o.default in (None, False, "") else f" (default {o.default})"
        req = " (required)" if o.required else ""
        lines.append(f"  {flag:<22} {o.help}{default}{req}")
    return "\n".join(lines)
