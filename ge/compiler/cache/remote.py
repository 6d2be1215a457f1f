"""Remote kernel stores behind the local cache (docs/cache.md "Remote storage").

The setting (settings.remote_storage) is written as ccache writes its `remote_storage`: stores
separated by spaces, each a URL followed by `|attribute=value` pairs:

    redis://[user:password@]host[:port][/db]   rediss://... (TLS)   http(s)://host[:port]/path
    |read-only  |connect-timeout=<ms>  |operation-timeout=<ms>  |key-file=<path>

`RemoteCache` is one compile's view of the stores, tried in order: `get` returns the verified
(binary, meta) of the first store holding a soundly signed entry, `put` sends an entry to every
writable store.  The stores are an optimisation: a store without a usable signing key is not
used (WP0120), an entry that is not soundly signed is refused (WP0121, the kernel is compiled
here), and a store that is down, slow, full or answers nonsense is skipped for the rest of the
compile (WP0122): each warning at most once per store and compile, the rest goes to the log.
"""
from __future__ import annotations

import importlib
import logging
import os
import time
from dataclasses import dataclass
from typing import Mapping, Optional
from urllib.parse import urlsplit

from ge.errors import warn
from .remote_entry import Refused, StoreFault, load_key, pack, unpack

__all__ = ["StoreSpec", "Store", "RemoteCache", "parse_store", "open_stores", "display_url",
           "ENV_KEY_FILE", "DEFAULT_CONNECT_MS", "DEFAULT_OPERATION_MS"]

log = logging.getLogger(__name__)
ENV_KEY_FILE = "PYATC_REMOTE_CACHE_KEY_FILE"
DEFAULT_CONNECT_MS = 100          # ccache's defaults
DEFAULT_OPERATION_MS = 10000
WARN_UNUSED = "WP0120"
WARN_REFUSED = "WP0121"
WARN_FAULT = "WP0122"

# scheme -> (backend module, TLS)
SCHEMES = {"redis": ("remote_redis", False), "rediss": ("remote_redis", True),
           "http": ("remote_http", False), "https": ("remote_http", True)}


@dataclass(frozen=True)
class StoreSpec:
    url: str                      # without the attributes
    read_only: bool = False
    connect_ms: int = DEFAULT_CONNECT_MS
    operation_ms: int = DEFAULT_OPERATION_MS
    key_file: str = ""

    @property
    def parts(self):
        return urlsplit(self.url)

    @property
    def tls(self) -> bool:
        return SCHEMES[self.parts.scheme][1]

    @property
    def display(self) -> str:
        return display_url(self.url)


def display_url(url: str) -> str:
    """The URL as logs and warnings show it: a password is never printed."""
    url = url.split("|", 1)[0]
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()


def _ms(name: str, value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 3_600_000:
        raise Refused(f"{name}={value!r} is not a number of milliseconds 1..3600000")
    return int(value)


def _flag(name: str, value: str) -> bool:
    if value not in ("", "true", "false"):
        raise Refused(f"{name}={value!r} is neither true nor false")
    return value != "false"


def parse_store(item: str) -> StoreSpec:
    """One store of the setting; Refused (with why) when it cannot be understood."""
    url, *attrs = item.split("|")
    try:
        parts = urlsplit(url)
        parts.port                          # raises ValueError for a bad port
    except ValueError as exc:
        raise Refused(f"bad URL ({exc})") from None
    if parts.scheme not in SCHEMES:
        raise Refused(f"unknown scheme {parts.scheme!r}; known: {', '.join(SCHEMES)}")
    if not parts.hostname:
        raise Refused("the URL names no host")
    fields = {}
    for attr in attrs:
        name, _, value = attr.partition("=")
        if name == "read-only":
            fields["read_only"] = _flag(name, value)
        elif name == "connect-timeout":
            fields["connect_ms"] = _ms(name, value)
        elif name == "operation-timeout":
            fields["operation_ms"] = _ms(name, value)
        elif name == "key-file" and value:
            fields["key_file"] = value
        else:
            raise Refused(f"unknown attribute {attr!r}; known: read-only, connect-timeout, "
                          f"operation-timeout, key-file=<path>")
    return StoreSpec(url, **fields)


@dataclass
class Store:
    """A configured store: its spec, signing key and backend (get/put/delete/names/usage), and
    what this compile may still do with it."""
    spec: StoreSpec
    key: bytes
    backend: object
    readable: bool = True
    writable: bool = True
    refusals: int = 0


def open_stores(text: str, source: str, env: Optional[Mapping[str, str]] = None) -> list:
    """The usable stores of the setting `text` (from `source`), in order; each one that cannot
    be used is one WP0120 warning saying why."""
    env = os.environ if env is None else env
    stores = []
    for item in text.split():
        try:
            spec = parse_store(item)
            key_file = spec.key_file or (env.get(ENV_KEY_FILE) or "").strip()
            if not key_file:
                raise Refused(f"no signing key (set the key-file attribute or {ENV_KEY_FILE}); "
                              f"entries are native code and are only shared signed")
            key = load_key(key_file)
            module, _ = SCHEMES[spec.parts.scheme]
            backend = importlib.import_module(f"{__package__}.{module}").open_backend(spec)
        except Refused as exc:
            warn(WARN_UNUSED, {"store": display_url(item), "source": source,
                               "reason": str(exc)})
            continue
        stores.append(Store(spec, key, backend, writable=not spec.read_only))
    return stores


class RemoteCache:
    """One compile's remote stores; counts into the compile's CacheStats (remote_*)."""

    def __init__(self, stores: list, stats):
        self.stores = stores
        self.stats = stats
        stats.remote = " ".join(s.spec.display for s in stores)

    @classmethod
    def open(cls, text: str, source: str, stats,
             env: Optional[Mapping[str, str]] = None) -> Optional["RemoteCache"]:
        stores = open_stores(text, source, env)
        return cls(stores, stats) if stores else None

    def _timed(self, started: float) -> None:
        self.stats.remote_seconds = round(self.stats.remote_seconds + time.monotonic() - started,
                                          3)

    def _fault(self, store: Store, exc: StoreFault, doing: str) -> None:
        """A store that failed once is not asked again in this compile (a down or slow one
        would cost a timeout per kernel), so this is its one warning."""
        store.readable = store.writable = False
        self.stats.remote_errors += 1
        warn(WARN_FAULT, {"store": store.spec.display, "reason": f"{doing}: {exc}",
                          "fallback": "it is not used for the rest of this compile"})

    def _refuse(self, store: Store, name: str, reason: str) -> None:
        self.stats.remote_refused += 1
        store.refusals += 1
        entry = f"{store.spec.display} {name}"
        log.info("remote kernel cache entry %s refused: %s", entry, reason)
        if store.refusals == 1:
            warn(WARN_REFUSED, {"entry": entry, "reason": reason})

    def get(self, name: str) -> Optional[tuple]:
        """Verified (binary, meta) from the first store that has a sound entry, else None."""
        started = time.monotonic()
        try:
            for store in self.stores:
                if not store.readable:
                    continue
                try:
                    blob = store.backend.get(name)
                except StoreFault as exc:
                    self._fault(store, exc, f"reading {name}")
                    continue
                if blob is None:
                    continue
                self.stats.remote_bytes_read += len(blob)
                try:
                    found = unpack(name, blob, store.key)
                except Refused as exc:
                    self._refuse(store, name, str(exc))
                    continue
                self.stats.remote_hits += 1
                return found
            self.stats.remote_misses += 1
            return None
        finally:
            self._timed(started)

    def put(self, name: str, binary: bytes, meta: dict) -> None:
        """Send the entry to every writable store (an entry refused there is replaced)."""
        started = time.monotonic()
        try:
            for store in self.stores:
                if not store.writable:
                    continue
                blob = pack(name, binary, meta, store.key)
                try:
                    store.backend.put(name, blob)
                except StoreFault as exc:
                    self._fault(store, exc, f"writing {name}")
                    continue
                self.stats.remote_published += 1
                self.stats.remote_bytes_written += len(blob)
        finally:
            self._timed(started)

    def close(self) -> None:
        for store in self.stores:
            store.backend.close()
