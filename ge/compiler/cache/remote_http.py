"""An HTTP store (http.client): the entry `<name>` is the resource `<url>/pyatc-v1/<name>`.

GET reads an entry (404: none), PUT writes it, DELETE removes it: what nginx's WebDAV module
serves with `dav_methods PUT DELETE; create_full_put_path on;` (nginx writes a PUT body to a
temporary file and renames it, so a reader never sees half an entry).  Listing the entries
(`verify --remote`, `stats --remote`) reads nginx's JSON directory index of `<url>/pyatc-v1/`
(`autoindex on; autoindex_format json;`).  `user:password@` in the URL is sent as HTTP Basic
authentication; `https://` checks the server's certificate against the system's CAs (or the
file SSL_CERT_FILE names).  One keep-alive connection per store and compile.
"""
from __future__ import annotations

import base64
import http.client
import json
import ssl
from typing import Optional
from urllib.parse import quote, unquote

from .remote_entry import FORMAT, OBJECT_LIMIT, StoreFault

__all__ = ["open_backend", "HttpStore"]

_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
_PUT_OK = (200, 201, 204)
_DELETE_OK = (200, 204, 404)


def open_backend(spec) -> "HttpStore":
    return HttpStore(spec)


class HttpStore:
    def __init__(self, spec):
        parts = spec.parts
        self.spec = spec
        self.base = quote(unquote(parts.path.rstrip("/"))) + f"/{FORMAT}/"
        self.headers = {}
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            self.headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        self.conn: Optional[http.client.HTTPConnection] = None

    def _connect(self) -> http.client.HTTPConnection:
        parts, spec = self.spec.parts, self.spec
        if spec.tls:
            conn = http.client.HTTPSConnection(parts.hostname, parts.port,
                                               timeout=spec.connect_ms / 1000,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port,
                                              timeout=spec.connect_ms / 1000)
        conn.connect()
        conn.sock.settimeout(spec.operation_ms / 1000)
        return conn

    def _request(self, method: str, path: str, body: Optional[bytes] = None) -> tuple:
        """(status, body); a connection the server closed while idle is reopened once."""
        for attempt in (1, 2):
            reused = self.conn is not None
            try:
                if self.conn is None:
                    self.conn = self._connect()
                self.conn.request(method, path, body=body, headers=self.headers)
                resp = self.conn.getresponse()
                length = resp.getheader("Content-Length") or "0"
                if length.isdigit() and int(length) > OBJECT_LIMIT:
                    raise StoreFault(f"{method} {path}: {length} bytes, more than an entry can")
                data = resp.read()
                if resp.will_close:
                    self.close()
                return resp.status, resp.reason, data
            except _STALE as exc:
                self.close()
                if reused and attempt == 1:
                    continue
                raise StoreFault.of(exc, f"{method} {path}") from None
            except (OSError, http.client.HTTPException, ValueError) as exc:
                self.close()
                raise StoreFault.of(exc, f"{method} {path}") from None
            except StoreFault:
                self.close()
                raise

    def _expect(self, method: str, name: str, ok: tuple, body: Optional[bytes] = None) -> bytes:
        path = self.base + quote(name)
        status, reason, data = self._request(method, path, body)
        if status not in ok:
            raise StoreFault(f"{method} {path}: HTTP {status} {reason}")
        return data if status != 404 else None

    def get(self, name: str) -> Optional[bytes]:
        return self._expect("GET", name, (200, 404))

    def put(self, name: str, blob: bytes) -> None:
        self._expect("PUT", name, _PUT_OK, blob)

    def delete(self, name: str) -> None:
        self._expect("DELETE", name, _DELETE_OK)

    def _listing(self) -> list:
        status, reason, data = self._request("GET", self.base)
        if status == 404:
            return []
        try:
            if status != 200:
                raise ValueError(f"HTTP {status} {reason}")
            items = json.loads(data.decode("utf-8"))
            return [(i["name"], int(i.get("size", 0))) for i in items if i.get("type") == "file"]
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise StoreFault(f"no JSON index of {self.base} ({exc}); nginx serves one with "
                             f"'autoindex on; autoindex_format json;'") from None

    def names(self) -> list:
        return sorted(name for name, _ in self._listing())

    def usage(self) -> dict:
        listing = self._listing()
        return {"entries": len(listing), "bytes": sum(size for _, size in listing)}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
