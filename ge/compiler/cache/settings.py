"""Effective settings of the operator-compile disk cache (seed 002, spec/compile-options.md
§0, §3.1-3.2, §3.5-3.6, §4-5): mode, directory, size limit and remain ratio, debug bypasses.

Read points: the options mapping, and the environment variables the spec names for the cache
(ASCEND_CACHE_PATH, ASCEND_MAX_OP_CACHE_SIZE, ASCEND_REMAIN_CACHE_SIZE_RATIO, HOME).  Invalid
size values fall back to the next source with a W-code warning; an invalid mode, directory or
debug level is a coded error.  Nothing here touches cache entries.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping, Optional

from ge.errors import GeError, warn
from ge.fsutil import os_reason, read_text_regular

__all__ = ["CacheSettings", "resolve", "parse_ini", "read_ini_text", "size_limits",
           "parse_op_debug_config", "DEFAULT_MAX_MB", "DEFAULT_RATIO", "INI_NAME", "INI_SECTION",
           "MODES", "remote_storage"]

MODES = ("enable", "force", "disable")
DEFAULT_MODE = "enable"                # seed: enable is the default for every entry point
DEFAULT_MAX_MB = 500
DEFAULT_RATIO = 50
INI_NAME = "op_cache.ini"
INI_SECTION = "op_compiler_cache"
INI_TEMPLATE = (f"[{INI_SECTION}]\n"
                f"max_op_cache_size={DEFAULT_MAX_MB}\n"
                f"remain_cache_size_ratio={DEFAULT_RATIO}\n")
DEBUG_LEVELS = ("0", "1", "2", "3", "4")
MAX_INT_MB = 2147483647

OPT_MODE = "ge.op_compiler_cache_mode"
OPT_DIR = "ge.op_compiler_cache_dir"
OPT_SOC = "ge.socVersion"
OPT_DEBUG_LEVEL = "ge.opDebugLevel"
OPT_DEBUG_CONFIG = "op_debug_config"
OPT_REMOTE = "ge.op_compiler_remote_cache"    # ours (CANN has no remote cache): docs/cache.md
ENV_REMOTE = "PYATC_REMOTE_CACHE"
INI_REMOTE = "remote_storage"
WARN_SETTING = "WP0111"


@dataclass(frozen=True)
class CacheSettings:
    mode: str                      # requested mode: enable | force | disable
    enabled: bool                  # False when disabled by mode or a debug bypass of all ops
    root: str                      # <root>: option > ASCEND_CACHE_PATH > $HOME/atc_data
    cache_dir: str                 # <root>/kernel_cache/<soc>
    ini_path: str                  # the op_cache.ini that is (or will be) read
    max_mb: int                    # -1 = no aging, no mtime refresh
    ratio: int                     # percent of max_mb kept when aging
    size_source: str               # "ini" | "env" | "default" (for stats and tests)
    bypass: str = ""               # why the cache is off for every op ("" = not bypassed)
    debug_list: tuple = ()         # op names / "OpType::X" items compiled fresh
    debug_flags: tuple = ()        # extra compiler flags from debug options
    notes: list = field(default_factory=list, compare=False)
    remote: str = ""               # the remote stores (remote.py syntax), "" = none
    remote_source: str = ""        # where `remote` was set (for warnings)

    @property
    def aging(self) -> bool:
        return self.max_mb != -1

    def bypasses(self, op_name: str, op_type: str) -> bool:
        """op_debug_list rule: a listed op (by name or OpType::<type>) never uses the cache."""
        for item in self.debug_list:
            if item == op_name:
                return True
            if "::" in item and item.split("::", 1)[1] == op_type:
                return True
        return False


# ---- directory -----------------------------------------------------------------------------

def _check_path_chars(value: str, source: str) -> None:
    """Spec §3.2: ASCII letters, digits, '.', '-', '_', '/' and non-ASCII (CJK) characters."""
    for ch in value:
        if ord(ch) > 127 or ch.isalnum() or ch in "._-/":
            continue
        raise GeError("E10001", {"parameter": source, "value": value,
                                 "reason": f"the path contains the invalid character {ch!r}; "
                                           f"allowed are letters, digits, '.', '-', '_', '/' "
                                           f"and Chinese characters."})


def cache_root(options: Mapping[str, str], env: Mapping[str, str]) -> str:
    opt = (options.get(OPT_DIR) or "").strip()
    if opt:
        _check_path_chars(opt, "--op_compiler_cache_dir")
        return os.path.abspath(opt)
    env_path = (env.get("ASCEND_CACHE_PATH") or "").strip()
    if env_path:
        _check_path_chars(env_path, "ASCEND_CACHE_PATH")
        return os.path.abspath(env_path)
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, "atc_data")


def soc_dir_name(options: Mapping[str, str]) -> str:
    soc = (options.get(OPT_SOC) or "").strip() or "host"
    if not re.fullmatch(r"[A-Za-z0-9._-]+", soc):
        raise GeError("E10001", {"parameter": "--soc_version", "value": soc,
                                 "reason": "not usable as a cache directory name"})
    return soc


# ---- op_cache.ini --------------------------------------------------------------------------

def parse_ini(text: str) -> dict:
    """Sections -> {key: value}; '#' comments and blank lines skipped, keys/values trimmed,
    pairs with an empty side dropped, pairs before any header go to the next section."""
    sections: dict = {}
    pending: dict = {}
    current: Optional[dict] = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and "]" in line:
            name = line[1:line.rindex("]")].strip()
            current = sections.setdefault(name, {})
            current.update(pending)
            pending = {}
            continue
        if "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        if key and value:
            (current if current is not None else pending)[key] = value
    return sections


def ini_path_for(root: str) -> str:
    """Seed decision: <root>/op_cache.ini; <root>/kernel_cache/op_cache.ini if only that exists."""
    primary = os.path.join(root, INI_NAME)
    legacy = os.path.join(root, "kernel_cache", INI_NAME)
    if not os.path.exists(primary) and os.path.exists(legacy):
        return legacy
    return primary


def read_ini_text(path: str) -> Optional[str]:
    """The text of op_cache.ini, None when there is none; one that cannot be read (permissions,
    too big) is a WP0113 warning and its sizes are not used: the cache is an optimisation."""
    if not os.path.isfile(path):
        return None
    try:
        return read_text_regular(path, errors="replace")
    except OSError as exc:
        warn("WP0113", {"path": path, "reason": os_reason(exc),
                        "fallback": "its sizes are ignored"})
        return None


def _int_or_none(text: str) -> Optional[int]:
    text = text.strip()
    return int(text) if re.fullmatch(r"[+-]?\d+", text) else None


def _valid_max(v: Optional[int], upper: int) -> bool:
    return v is not None and (v == -1 or 1 <= v <= upper)


def _valid_ratio(v: Optional[int]) -> bool:
    return v is not None and 1 <= v <= 100


def size_limits(ini_text: Optional[str], env: Mapping[str, str], ini_path: str = "") -> tuple:
    """(max_mb, ratio, source): the ini pair when both keys are valid, else the environment,
    else the defaults 500 MB / 50 %.  Invalid values warn and fall through."""
    if ini_text is not None:
        section = parse_ini(ini_text).get(INI_SECTION, {})
        raw_max = section.get("max_op_cache_size")
        raw_ratio = section.get("remain_cache_size_ratio")
        if raw_max is not None or raw_ratio is not None:
            mx = _int_or_none(raw_max) if raw_max is not None else None
            rt = _int_or_none(raw_ratio) if raw_ratio is not None else None
            if _valid_max(mx, MAX_INT_MB) and _valid_ratio(rt):
                return mx, rt, "ini"
            warn(WARN_SETTING, {"source": f"{ini_path or INI_NAME}: max_op_cache_size/"
                                          f"remain_cache_size_ratio",
                                "value": f"{raw_max}/{raw_ratio}",
                                "allowed": f"max -1 or 1..{MAX_INT_MB} MB, ratio 1..100",
                                "fallback": "the file's sizes are ignored"})
    source = "default"
    mx, rt = DEFAULT_MAX_MB, DEFAULT_RATIO
    raw = env.get("ASCEND_MAX_OP_CACHE_SIZE")
    if raw is not None and raw.strip() != "":
        v = _int_or_none(raw)
        if _valid_max(v, MAX_INT_MB - 1):
            mx, source = v, "env"
        else:
            warn(WARN_SETTING, {"source": "ASCEND_MAX_OP_CACHE_SIZE", "value": raw,
                                "allowed": f"an integer, -1 or 1..{MAX_INT_MB - 1}",
                                "fallback": f"using {DEFAULT_MAX_MB} MB"})
    raw = env.get("ASCEND_REMAIN_CACHE_SIZE_RATIO")
    if raw is not None and raw.strip() != "":
        v = _int_or_none(raw)
        if _valid_ratio(v):
            rt, source = v, "env"
        else:
            warn(WARN_SETTING, {"source": "ASCEND_REMAIN_CACHE_SIZE_RATIO", "value": raw,
                                "allowed": "an integer 1..100",
                                "fallback": f"using {DEFAULT_RATIO}"})
    return mx, rt, source


def remote_storage(options: Mapping[str, str], ini_text: Optional[str],
                   env: Mapping[str, str], ini_path: str = INI_NAME) -> tuple:
    """(stores, source): the GE option > op_cache.ini's remote_storage > PYATC_REMOTE_CACHE
    (the local sizes' order, with the option on top as for the directory); ("", "") = none."""
    section = parse_ini(ini_text).get(INI_SECTION, {}) if ini_text is not None else {}
    for value, source in ((options.get(OPT_REMOTE), OPT_REMOTE),
                          (section.get(INI_REMOTE), f"{ini_path}: {INI_REMOTE}"),
                          (env.get(ENV_REMOTE), ENV_REMOTE)):
        if value and value.strip():
            return value.strip(), source
    return "", ""


# ---- op debug options (spec §4, §5) -------------------------------------------------------

_DEBUG_CC_FLAGS = {"ccec_O0": ("-O0",), "ccec_g": ("-g",)}


def parse_op_debug_config(path: str) -> tuple:
    """(config items, list items) of an op_debug_config file (spec §5.1)."""
    try:
        lines = read_text_regular(path).splitlines()
    except OSError as exc:
        raise GeError("E10001", {"parameter": "--op_debug_config", "value": path,
                                 "reason": f"the file does not exist or access is denied "
                                           f"({exc.strerror})."}) from None
    config, items = (), ()
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        is_config = "op_debug_config" in line
        if not is_config and "op_debug_list" not in line:
            continue
        value = line.split("=", 1)[1] if "=" in line else ""
        parts = tuple(p.strip() for p in value.split(",") if p.strip())
        if not parts:
            raise GeError("E10001", {"parameter": "--op_debug_config", "value": path,
                                     "reason": f"format error in line {line!r}"})
        if is_config:
            config = parts
        else:
            items = parts
    return config, items


def resolve(options: Mapping[str, str], env: Optional[Mapping[str, str]] = None,
            read_ini: bool = True, quiet: bool = False) -> CacheSettings:
    """The cache settings of a compile; `quiet`: without op_cache.ini and the size limits
    (defaults), so nothing is warned: for a look ahead of the compile's own resolve()."""
    env = os.environ if env is None else env
    mode = (options.get(OPT_MODE) or DEFAULT_MODE).strip()
    if mode not in MODES:
        raise GeError("E10001", {"parameter": "--op_compiler_cache_mode", "value": mode,
                                 "reason": "the value must be one of enable, disable, force."})
    level = (options.get(OPT_DEBUG_LEVEL) or "0").strip()
    if level not in DEBUG_LEVELS:
        raise GeError("E10001", {"parameter": "--op_debug_level", "value": level,
                                 "reason": "the value must be 0, 1, 2, 3 or 4"})
    root = cache_root(options, env)
    cache_dir = os.path.join(root, "kernel_cache", soc_dir_name(options))
    ini_path = ini_path_for(root)
    ini_text = read_ini_text(ini_path) if read_ini and not quiet else None
    max_mb, ratio, source = ((DEFAULT_MAX_MB, DEFAULT_RATIO, "default") if quiet
                             else size_limits(ini_text, env, ini_path))
    bypass, debug_list, debug_flags = "", (), ()
    if level != "0":
        bypass = f"ge.opDebugLevel={level}"
        if level == "2":
            debug_flags = ("-O0", "-g")
    cfg_path = (options.get(OPT_DEBUG_CONFIG) or "").strip()
    if cfg_path:
        config, debug_list = parse_op_debug_config(cfg_path)
        for item in config:
            debug_flags += tuple(f for f in _DEBUG_CC_FLAGS.get(item, ()) if f not in debug_flags)
        if not debug_list and not bypass:
            bypass = "op_debug_config without op_debug_list"
    enabled = mode != "disable" and not bypass
    remote, remote_source = remote_storage(options, ini_text, env, ini_path)
    return CacheSettings(mode, enabled, root, cache_dir, ini_path, max_mb, ratio, source,
                         bypass, debug_list, debug_flags, remote=remote,
                         remote_source=remote_source)
