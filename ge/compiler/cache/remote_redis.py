"""A Redis store (redis-py): the entry `<name>` is the string value of key `pyatc:v1:<name>`.

`redis://[user:password@]host[:port][/db]` (a Redis 6+ ACL user, or only a password for
`requirepass`), `rediss://` for TLS (the server's certificate is checked against the system's
CAs, or the file SSL_CERT_FILE names).  Only GET, SET, DEL, SCAN, STRLEN and INFO are used, so
an ACL user needs no more than `~pyatc:v1:* +get +set +del +scan +strlen +info` (read-only
stores: `+get +scan +strlen +info`).  redis-py's retries are off: a store that fails is skipped
after one connect/operation timeout, not three.
"""
from __future__ import annotations

from typing import Optional
from urllib.parse import unquote

from .remote_entry import FORMAT, OBJECT_LIMIT, Refused, StoreFault

__all__ = ["open_backend", "RedisStore", "PREFIX"]

PREFIX = FORMAT.replace("-", ":") + ":"       # pyatc:v1:
DEFAULT_PORT = 6379


def open_backend(spec) -> "RedisStore":
    try:
        import redis
    except ImportError:
        raise Refused("the Python package redis (redis-py) is not installed: "
                      "pip install redis") from None
    return RedisStore(spec, redis)


def _db(path: str) -> int:
    text = path.strip("/") or "0"
    if not text.isdigit():
        raise Refused(f"the database {text!r} is not a number")
    return int(text)


class RedisStore:
    def __init__(self, spec, redis):
        from redis.backoff import NoBackoff
        from redis.retry import Retry
        parts = spec.parts
        self.errors = (redis.RedisError, OSError, ValueError)
        self.client = redis.Redis(
            host=parts.hostname, port=parts.port or DEFAULT_PORT, db=_db(parts.path),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
            ssl=spec.tls, socket_connect_timeout=spec.connect_ms / 1000,
            socket_timeout=spec.operation_ms / 1000, retry=Retry(NoBackoff(), 0),
            socket_keepalive=False)

    def _call(self, method: str, *args):
        try:
            return getattr(self.client, method)(*args)
        except self.errors as exc:
            raise StoreFault.of(exc) from None

    def get(self, name: str) -> Optional[bytes]:
        blob = self._call("get", PREFIX + name)
        if blob is not None and len(blob) > OBJECT_LIMIT:
            raise StoreFault(f"{PREFIX}{name} holds {len(blob)} bytes, more than an entry can")
        return blob

    def put(self, name: str, blob: bytes) -> None:
        self._call("set", PREFIX + name, blob)

    def delete(self, name: str) -> None:
        self._call("delete", PREFIX + name)

    def names(self) -> list:
        keys = self._call("scan_iter", PREFIX + "*", 1000)
        try:
            return sorted(k.decode("utf-8", "replace")[len(PREFIX):] for k in keys)
        except self.errors as exc:          # scan_iter talks to the server as it is iterated
            raise StoreFault.of(exc) from None

    def usage(self) -> dict:
        """Entries and their bytes; the server's memory figures when the user may see them."""
        names = self.names()
        pipe = self.client.pipeline(transaction=False)
        for name in names:
            pipe.strlen(PREFIX + name)
        try:
            sizes = pipe.execute()
        except self.errors as exc:
            raise StoreFault.of(exc) from None
        try:
            info = self._call("info", "memory")
        except StoreFault:
            info = {}           # an ACL user without +info
        return {"entries": len(names), "bytes": sum(sizes),
                "server": {k: info[k] for k in ("used_memory", "maxmemory", "maxmemory_policy")
                           if k in info}}

    def close(self) -> None:
        self.client.close()
