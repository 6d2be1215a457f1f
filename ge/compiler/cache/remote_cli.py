"""The remote half of `python3 -m ge.compiler.cache`: push, verify --remote, stats --remote.

The stores are those a compile would use with the same root (the `remote_storage` of its
op_cache.ini, else PYATC_REMOTE_CACHE), or those given as `--remote STORES`.  A store that
cannot be used is a WP0120 warning (no key, bad URL); one that fails is an EP0120 line.  What
is printed goes through the command's `run` (__main__._Run), as for the local commands.

push    send every sound local entry (as `verify` judges it) to every writable store
verify  fetch every entry of every store and check it as a compile would (signature, names,
        size, sha256): one EP0115 line per bad entry, exit 1 if any (--fix deletes them)
stats   entries and bytes of every store (and Redis's memory figures), as JSON
"""
from __future__ import annotations

import json
import logging
import os

from ge.errors import GeError, take_warnings
from . import settings as cfg
from .key import ENTRY_NAME
from .remote import open_stores
from .remote_entry import Refused, StoreFault, pack, unpack
from .store import list_entries, lookup

__all__ = ["main"]

CHECK_FAILED = "EP0115"
REMOTE_ERROR = "EP0120"


def _error(run, store: str, reason: str) -> None:
    run.tell(str(GeError(REMOTE_ERROR, {"store": store, "reason": reason})))


def _stores(run, root: str, text: str) -> list:
    source = "--remote"
    if not text:
        ini_path = cfg.ini_path_for(root)
        text, source = cfg.remote_storage({}, cfg.read_ini_text(ini_path), os.environ, ini_path)
    if not text:
        _error(run, "(none)", f"no remote storage is configured: set {cfg.INI_REMOTE} in "
                              f"{cfg.ini_path_for(root)} or {cfg.ENV_REMOTE}, or pass --remote")
        return []
    stores = open_stores(text, source)
    for warning in take_warnings():     # printed here, once (not by logging's last resort)
        run.tell(str(warning))
    return stores


def cmd_push(run, soc_dirs: list, stores: list) -> int:
    local = []
    for d in soc_dirs:
        for name in list_entries(d):
            found = lookup(d, name, refresh=False)
            if found.status == "hit":
                local.append((name, found.binary, found.meta))
    status = 0
    for store in stores:
        if not store.writable:
            run.say(f"{store.spec.display}: read-only, skipped")
            continue
        try:
            for name, binary, meta in local:
                store.backend.put(name, pack(name, binary, meta, store.key))
        except StoreFault as exc:
            _error(run, store.spec.display, str(exc))
            status = 1
            continue
        run.say(f"{store.spec.display}: pushed {len(local)} entries")
    return status


def _judge(store, name: str) -> str:
    """Why the remote entry `name` is bad ("" when sound); StoreFault when it cannot be read."""
    if not ENTRY_NAME.fullmatch(name):
        return "not the name of an entry"
    blob = store.backend.get(name)
    if blob is None:
        return ""                       # removed since the listing
    try:
        unpack(name, blob, store.key)
    except Refused as exc:
        return str(exc)
    return ""


def cmd_verify(run, stores: list, fix: bool) -> int:
    status = 0
    for store in stores:
        shown = store.spec.display
        try:
            names = store.backend.names()
            bad = kept = 0
            for name in names:
                reason = _judge(store, name)
                if not reason:
                    continue
                bad += 1
                run.error(CHECK_FAILED, {"path": f"{shown} {name}", "reason": reason})
                if fix:
                    if store.writable:
                        store.backend.delete(name)
                    else:
                        kept += 1
        except StoreFault as exc:
            _error(run, shown, str(exc))
            status = 2
            continue
        unfixed = f", {kept} not removed (read-only)" if fix and kept else ""
        run.say(f"{shown}: verified {len(names)} entries, {bad} bad{unfixed}")
        if bad and (not fix or kept):
            status = max(status, 1)
    return status


def cmd_stats(run, stores: list) -> int:
    report, status = {}, 0
    for store in stores:
        try:
            report[store.spec.display] = dict(store.backend.usage(),
                                              read_only=not store.writable)
        except StoreFault as exc:
            _error(run, store.spec.display, str(exc))
            status = 1
    run.say(json.dumps({"stores": report}, indent=2, sort_keys=True))
    return status


def main(run, command: str, root: str, soc_dirs: list, text: str, fix: bool) -> int:
    logging.getLogger("ge").addHandler(logging.NullHandler())
    if command == "clean":
        _error(run, text or "(configured)",
               "clean works on the local cache only; a remote store "
               "ages by its server's own rules (Redis maxmemory-policy)")
        return 2
    stores = _stores(run, root, text)
    if not stores:
        return 2
    try:
        if command == "push":
            return cmd_push(run, soc_dirs, stores)
        if command == "verify":
            return cmd_verify(run, stores, fix)
        return cmd_stats(run, stores)
    finally:
        for store in stores:
            store.backend.close()
