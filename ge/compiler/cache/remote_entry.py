"""One remote cache entry as one signed object, and the key that signs it.

An object is the entry's JSON and binary in one byte string, so a reader gets all of an entry or
nothing, followed by an HMAC-SHA256 tag over the entry's name, the format and everything before
the tag:

    MAGIC (8 bytes) | json length, binary length (2 x uint32, big-endian) | JSON | binary | tag

The tag is checked before anything else is looked at; then the JSON is parsed and checked
against the binary exactly as a local hit is (store.check_entry: names, size, sha256).  The
name inside the tag means a correctly signed entry of one kernel cannot be served as another.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import struct

from ge.fsutil import open_regular, os_reason
from .store import BINARY_LIMIT, META_LIMIT, check_entry, entry_meta

__all__ = ["FORMAT", "Refused", "StoreFault", "pack", "unpack", "load_key", "OBJECT_LIMIT"]

FORMAT = "pyatc-v1"             # the object format's version: in every remote key and tag
MAGIC = b"PYATCKC1"
_HEADER = struct.Struct(">II")
_TAG_BYTES = hashlib.sha256().digest_size
OBJECT_LIMIT = len(MAGIC) + _HEADER.size + META_LIMIT + BINARY_LIMIT + _TAG_BYTES
KEY_FILE_LIMIT = 4096
MIN_KEY_BYTES = 16


class Refused(Exception):
    """A remote object that must not be used; the message says why."""


class StoreFault(Exception):
    """A store that cannot be used right now (down, slow, full, broken answer); says why."""

    @classmethod
    def of(cls, exc: Exception, doing: str = "") -> "StoreFault":
        """The fault an exception of a client library stands for."""
        text = str(exc).strip().rstrip(".")
        return cls(f"{doing}{': ' if doing else ''}{type(exc).__name__}: {text}")


def _tag(key: bytes, name: str, body: bytes) -> bytes:
    return hmac.new(key, f"{FORMAT}\0{name}\0".encode() + body, hashlib.sha256).digest()


def pack(name: str, binary: bytes, meta: dict, key: bytes) -> bytes:
    text = json.dumps(entry_meta(name, binary, meta), sort_keys=True,
                      separators=(",", ":")).encode("utf-8")
    body = MAGIC + _HEADER.pack(len(text), len(binary)) + text + binary
    return body + _tag(key, name, body)


def unpack(name: str, blob: bytes, key: bytes) -> tuple:
    """(binary, meta) of a sound object signed with `key`; else Refused (with why)."""
    head = len(MAGIC) + _HEADER.size
    if len(blob) < head + _TAG_BYTES or not blob.startswith(MAGIC):
        raise Refused(f"not a {FORMAT} entry ({len(blob)} bytes)")
    meta_len, bin_len = _HEADER.unpack_from(blob, len(MAGIC))
    expected = head + meta_len + bin_len + _TAG_BYTES
    if len(blob) != expected:
        raise Refused(f"truncated or padded: {len(blob)} bytes, its header says {expected}")
    body, tag = blob[:-_TAG_BYTES], blob[-_TAG_BYTES:]
    if not hmac.compare_digest(tag, _tag(key, name, body)):
        raise Refused("the signature does not match: unsigned, altered, or signed with "
                      "another key")
    try:
        meta = json.loads(body[head:head + meta_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Refused(f"unreadable JSON ({exc})") from None
    binary = body[head + meta_len:]
    reason = check_entry(meta, name, binary)
    if reason:
        raise Refused(reason)
    return binary, meta


def load_key(path: str) -> bytes:
    """The signing key in `path`: a regular file that group and others can neither read nor
    write, of at least MIN_KEY_BYTES bytes (trailing white space is not part of the key).
    Raises Refused saying why it cannot be used."""
    try:
        with open_regular(path, KEY_FILE_LIMIT) as f:
            mode = os.fstat(f.fileno()).st_mode
            key = f.read().rstrip()
    except OSError as exc:
        raise Refused(f"key file {path}: {os_reason(exc)}") from None
    if mode & 0o066:
        raise Refused(f"key file {path} is readable or writable by group or others "
                      f"(mode {oct(mode & 0o777)}); chmod 600 it")
    if len(key) < MIN_KEY_BYTES:
        raise Refused(f"key file {path} holds {len(key)} bytes, fewer than {MIN_KEY_BYTES}")
    return key
