"""`python3 -m ge.compiler.cache stats|verify|clean [--dir D] [--soc S] [--dry-run]`

stats   entries, bytes, limit and ratio in effect, per SoC directory
verify  check every entry (JSON readable, binary present, sizes and sha256 match, owned by us and
        not writable by group or others); one EP0115 line per bad entry, exit 1 if any
        (with --fix, bad entries are removed)
clean   remove stale temporaries, then age the cache as a compile would (--all: every entry)
push    send the sound local entries to the remote stores (remote_cli.py)
verify --remote / stats --remote [STORES]   the same for the remote stores

D is the cache root (default: ASCEND_CACHE_PATH, else $HOME/atc_data), as for
--op_compiler_cache_dir.  This is a command line: it prints, and exits with a status.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ge.fsutil import os_reason
from ge.errors import GeError
from . import settings as cfg
from .evict import evict, used_bytes
from .store import clean_stale, list_entries, lookup, remove_entry
from . import remote_cli

CHECK_FAILED = "EP0115"


def _soc_dirs(root: str, soc: str) -> list:
    base = os.path.join(root, "kernel_cache")
    if soc:
        return [os.path.join(base, soc)]
    try:
        names = sorted(os.listdir(base))
    except FileNotFoundError:
        return []
    return [os.path.join(base, n) for n in names if os.path.isdir(os.path.join(base, n))]


def _limits(root: str) -> tuple:
    path = cfg.ini_path_for(root)
    return cfg.size_limits(cfg.read_ini_text(path), os.environ, path)


def cmd_stats(root: str, soc: str) -> int:
    max_mb, ratio, source = _limits(root)
    report = {"root": root, "max_op_cache_size_mb": max_mb, "remain_cache_size_ratio": ratio,
              "settings_from": source, "socs": {}}
    for d in _soc_dirs(root, soc):
        report["socs"][os.path.basename(d)] = {"entries": len(list_entries(d)),
                                                "bytes": used_bytes(d)}
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


def _failed(path: str, reason: str) -> None:
    print(GeError(CHECK_FAILED, {"path": path, "reason": reason}))


def cmd_verify(root: str, soc: str, fix: bool) -> int:
    """One coded line per entry that is not a sound hit (lookup judges what is on disk and never
    raises for it), one per SoC directory that cannot be listed.  Exit 1 when something is bad
    and, with --fix, when something bad could not be removed."""
    bad = total = kept = 0
    for d in _soc_dirs(root, soc):
        try:
            names = list_entries(d)
        except OSError as exc:
            bad += 1
            kept += 1
            _failed(d, os_reason(exc))
            continue
        for name in names:
            total += 1
            found = lookup(d, name, refresh=False)
            if found.status == "miss":      # removed since the listing: nothing to judge
                total -= 1
            elif found.status == "corrupt":
                bad += 1
                _failed(os.path.join(d, name), found.reason)
                if fix and not (found.inode != -1 and remove_entry(d, name, found.inode)):
                    kept += 1
    unfixed = f", {kept} not removed" if fix and kept else ""
    print(f"verified {total} entries, {bad} corrupt{unfixed}")
    return 1 if bad and (not fix or kept) else 0


def cmd_clean(root: str, soc: str, every: bool, dry_run: bool) -> int:
    max_mb, ratio, _ = _limits(root)
    for d in _soc_dirs(root, soc):
        stale = [] if dry_run else clean_stale(d)
        if every:
            removed = list_entries(d)
            if not dry_run:
                for name in removed:
                    remove_entry(d, name)
        else:
            removed = evict(d, max_mb, ratio, dry_run=dry_run).removed
        print(f"{d}: removed {len(stale)} stale temporaries, "
              f"{'would remove' if dry_run else 'removed'} {len(removed)} entries")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ge.compiler.cache")
    parser.add_argument("command", choices=("stats", "verify", "clean", "push"))
    parser.add_argument("--dir", default="", help="cache root (as --op_compiler_cache_dir)")
    parser.add_argument("--soc", default="", help="only this SoC directory")
    parser.add_argument("--fix", action="store_true", help="verify: remove corrupt entries")
    parser.add_argument("--all", action="store_true", help="clean: remove every entry")
    parser.add_argument("--dry-run", action="store_true", help="clean: only report")
    parser.add_argument("--remote", nargs="?", const="", default=None, metavar="STORES",
                        help="verify/stats the remote stores (default: the configured ones)")
    args = parser.parse_args(argv)
    try:
        root = cfg.cache_root({cfg.OPT_DIR: args.dir}, os.environ)
    except GeError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.command == "push" or args.remote is not None:
        return remote_cli.main(args.command, root, _soc_dirs(root, args.soc), args.remote or "",
                               args.fix)
    try:
        if args.command == "stats":
            return cmd_stats(root, args.soc)
        if args.command == "verify":
            return cmd_verify(root, args.soc, args.fix)
        return cmd_clean(root, args.soc, args.all, args.dry_run)
    except OSError as exc:      # the root or a SoC directory cannot be read at all
        print(GeError(CHECK_FAILED, {"path": exc.filename or root,
                                     "reason": os_reason(exc)}), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
