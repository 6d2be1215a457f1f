"""`python3 -m ge.compiler.cache stats|verify|clean [--dir D] [--soc S] [--fix] [--all] [--dry-run]`

stats   entries, bytes, limit and ratio in effect, per SoC directory
verify  judge every entry as a compile's lookup does: one WP0112 line per bad entry, exit 1 if
        any (with --fix, bad entries are removed)
clean   remove temporaries of dead processes, then age the cache as a compile would (--all:
        every entry); one line per path removed (--dry-run: that would be removed)
push    send the sound local entries to the remote stores (remote_cli.py)
verify --remote / stats --remote [STORES]   the same for the remote stores

D is the cache root (default: ASCEND_CACHE_PATH, else $HOME/atc_data), as for
--op_compiler_cache_dir.  Every command applies a compile's trust rule (trust.py): a root,
`kernel_cache` or SoC directory that is a symbolic link, foreign-owned or writable by group or
others is EP0111 (exit 255, nothing under it read or removed); only what is recognisably an
entry or a temporary of ours is removed; anything else found is one WP0114 line, left alone.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ge import stdio
from ge.errors import GeError, GeWarning
from ge.fsutil import os_reason, parse_temp_name
from . import settings as cfg
from .evict import LOCK_NAME, evict, used_bytes
from .key import ENTRY_NAME
from .store import clean_stale, list_entries, lookup, removable, remove_entry
from .trust import check_dir, entry_problem
from . import remote_cli
from .remote_cli import CHECK_FAILED

FAILED = 255


class _Run:
    """What one command prints and how it ends: report lines are its product (EP0006 when
    stdout cannot take them), refused directories make the status 255."""

    def __init__(self) -> None:
        self.status = 0

    def say(self, text: str) -> None:
        stdio.write_product("stdout", text + "\n")

    def warn(self, code: str, params: dict) -> None:
        self.say(str(GeWarning(code, params)))

    def error(self, code: str, params: dict) -> None:
        self.say(str(GeError(code, params)))

    def tell(self, text: str) -> None:
        """A line on stderr: a refusal or a store's fault, not part of the report."""
        stdio.write("stderr", text + "\n")

    def refused(self, exc: GeError) -> None:
        self.tell(str(exc))
        self.status = FAILED


def _soc_dirs(run: _Run, root: str, soc: str) -> list:
    """The SoC directories to work on, each passed by the trust check; the root and
    `kernel_cache` must pass it too (EP0111 raised), a refused SoC directory is reported."""
    check_dir(root)
    base = os.path.join(root, "kernel_cache")
    if not os.path.lexists(base):
        return []
    check_dir(base)
    names = [soc] if soc else sorted(os.listdir(base))
    dirs = []
    for name in names:
        path = os.path.join(base, name)
        if not os.path.lexists(path) or (not soc and parse_temp_name(name)):
            continue
        if not soc and not os.path.islink(path) and not os.path.isdir(path):
            run.warn("WP0114", {"path": path, "reason": "not a directory"})
            continue
        try:
            check_dir(path)
        except GeError as exc:
            run.refused(exc)
            continue
        dirs.append(path)
    return dirs


def _foreign(run: _Run, d: str) -> list:
    """Report (WP0114) every name in a SoC directory that is neither a recognisable entry, a
    temporary, nor the aging lock; returns the recognisable entries."""
    entries = []
    for name in sorted(os.listdir(d)):
        if name == LOCK_NAME or parse_temp_name(name):
            continue
        why = entry_problem(d, name) if ENTRY_NAME.fullmatch(name) else "not an entry name"
        if why:
            run.warn("WP0114", {"path": os.path.join(d, name), "reason": why})
        else:
            entries.append(name)
    return entries


def _limits(root: str) -> tuple:
    path = cfg.ini_path_for(root)
    return cfg.size_limits(cfg.read_ini_text(path), os.environ, path)


def cmd_stats(run: _Run, root: str, soc: str) -> None:
    max_mb, ratio, source = _limits(root)
    report = {"root": root, "max_op_cache_size_mb": max_mb, "remain_cache_size_ratio": ratio,
              "settings_from": source, "socs": {}}
    for d in _soc_dirs(run, root, soc):
        names = list_entries(d)
        foreign = {n: entry_problem(d, n) for n in names}
        report["socs"][os.path.basename(d)] = {
            "entries": sum(not why for why in foreign.values()), "bytes": used_bytes(d),
            "not_entries": {n: why for n, why in foreign.items() if why}}
    run.say(json.dumps(report, indent=2, sort_keys=True))


def cmd_verify(run: _Run, root: str, soc: str, fix: bool) -> None:
    """One coded line per entry that is not a sound hit (lookup judges what is on disk and never
    raises for it), one per SoC directory that cannot be listed.  Status 1 when something is
    bad and, with --fix, when something bad could not be removed."""
    bad = total = kept = 0
    for d in _soc_dirs(run, root, soc):
        try:
            names = list_entries(d)
        except OSError as exc:
            bad += 1
            kept += 1
            run.error(CHECK_FAILED, {"path": d, "reason": os_reason(exc)})
            continue
        for name in names:
            total += 1
            found = lookup(d, name, refresh=False)
            if found.status == "miss":      # removed since the listing: nothing to judge
                total -= 1
                continue
            if found.status != "corrupt":
                why = entry_problem(d, name)        # a sound entry with something beside it
                if why:
                    run.warn("WP0114", {"path": os.path.join(d, name), "reason": why})
                continue
            bad += 1
            mine = removable(d, name)
            fallback = ("it is removed" if fix and mine else
                        "it is not an entry of ours, so it is left alone" if not mine else
                        "verify --fix removes it")
            run.warn("WP0112", {"entry": os.path.join(d, name), "reason": found.reason,
                                 "fallback": fallback})
            if fix and not (mine and found.inode != -1 and remove_entry(d, name, found.inode)):
                kept += 1
    unfixed = f", {kept} not removed" if fix and kept else ""
    run.say(f"verified {total} entries, {bad} corrupt{unfixed}")
    if bad and (not fix or kept):
        run.status = run.status or 1


def cmd_clean(run: _Run, root: str, soc: str, every: bool, dry_run: bool) -> None:
    max_mb, ratio, _ = _limits(root)
    verb = "would remove" if dry_run else "removed"
    for d in _soc_dirs(run, root, soc):
        stale, left = clean_stale(d, dry_run=dry_run)
        for name, why in left:
            run.warn("WP0114", {"path": os.path.join(d, name), "reason": why})
        entries = _foreign(run, d)
        if every:
            removed = [n for n in entries if dry_run or remove_entry(d, n)]
        else:
            removed = evict(d, max_mb, ratio, dry_run=dry_run).removed
        for name in stale + removed:
            run.say(f"{verb} {os.path.join(d, name)}")
        run.say(f"{d}: {verb} {len(stale)} stale temporaries, {len(removed)} entries")


def main(argv=None) -> int:
    stdio.guard_std_fds()
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
    run = _Run()
    try:
        root = cfg.cache_root({cfg.OPT_DIR: args.dir}, os.environ)
        if args.command == "push" or args.remote is not None:
            dirs = _soc_dirs(run, root, args.soc) if args.command == "push" else []
            status = remote_cli.main(run, args.command, root, dirs, args.remote or "",
                                     args.fix)
            return run.status or status
        if args.command == "stats":
            cmd_stats(run, root, args.soc)
        elif args.command == "verify":
            cmd_verify(run, root, args.soc, args.fix)
        else:
            cmd_clean(run, root, args.soc, args.all, args.dry_run)
    except GeError as exc:      # a refused root or kernel_cache, a report that cannot be shown
        run.refused(exc)
    except OSError as exc:      # the root or a SoC directory cannot be read at all
        run.refused(GeError(CHECK_FAILED, {"path": exc.filename or args.dir,
                                           "reason": os_reason(exc)}))
    return run.status


if __name__ == "__main__":
    sys.exit(main())
