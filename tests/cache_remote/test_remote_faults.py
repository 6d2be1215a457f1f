"""Faults of a remote store never fail a compile: a store that is down (Redis stopped before the
compile), dies (Redis killed during it), is slow (answers nothing until the operation timeout),
full (maxmemory with noeviction), holds wrong bytes, truncated objects or entries signed with
another key, or has no usable signing key.  Each compile succeeds with ONE documented warning,
loads nothing bad (its OM is the reference build's), and leaves a sound local cache.  The
compiles run in this process (`atc_main`); the servers are real."""
import http.client
import threading
import time

import pytest

from e2e_helpers import assert_entries_sound, entries
from remote_helpers import (KEY, RedisServer, SilentServer, remote_env, warnings_of,
                            write_key)
from ge.compiler.cache.remote_entry import pack, unpack
from ge.compiler.cache.remote_redis import PREFIX

MODEL = "tiny"


def _compile(inproc, tmp_path, env):
    return inproc.run(tmp_path / "m", MODEL, "--op_compiler_cache_dir=cache", env=env).ok()


def _sound_local_build(res, reference, tmp_path) -> dict:
    """The compile built every kernel here, its OM is the reference's, its cache is sound."""
    om, first, names = reference[MODEL]
    stats = res.report()["kernel_cache"]
    assert stats["compiles"] == stats["kernels"] == first["kernels"], stats
    assert stats["remote_hits"] == 0, stats
    assert res.om.read_bytes() == om
    assert entries(tmp_path / "m" / "cache") == names
    assert_entries_sound(tmp_path / "m" / "cache")
    return stats


def _one(res, code: str) -> str:
    lines = warnings_of(res.text, code)
    assert len(lines) == 1, res.text
    return lines[0]


def test_redis_stopped_before_the_compile(inproc, servers, reference, tmp_path):
    down = RedisServer(tmp_path / "redis")
    down.stop()
    res = _compile(inproc, tmp_path, remote_env(servers, down.url()))
    assert "Connection refused" in _one(res, "WP0122")
    assert _sound_local_build(res, reference, tmp_path)["remote_errors"] == 1


def test_redis_killed_during_the_compile(inproc, servers, reference, tmp_path):
    """Killed (SIGKILL) once the compile has looked up every kernel, while it builds them: the
    write-back meets a dead connection."""
    server = RedisServer(tmp_path / "redis")
    kernels = reference[MODEL][1]["kernels"]

    def kill_after_lookups():
        client = server.client()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            calls = client.info("commandstats").get("cmdstat_get", {}).get("calls", 0)
            if calls >= kernels:
                server.kill()
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=kill_after_lookups)
    watcher.start()
    res = _compile(inproc, tmp_path, remote_env(servers, server.url()))
    watcher.join()
    assert server.proc.returncode == -9
    assert "writing" in _one(res, "WP0122")
    stats = _sound_local_build(res, reference, tmp_path)
    assert stats["remote_misses"] == kernels and stats["remote_published"] == 0, stats


def _put_http(servers, path: str, name: str, blob: bytes) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", servers.nginx.port, timeout=10)
    conn.request("PUT", f"/{path}/pyatc-v1/{name}", body=blob)
    assert conn.getresponse().status in (201, 204)
    conn.close()


DAMAGES = {  # name -> (store kind, damage of a sound object, the reason refused)
    "wrong_bytes": ("redis", lambda blob: b"\x7fELF garbage" * 20, "not a pyatc-v1 entry"),
    "truncated": ("http", lambda blob: blob[:len(blob) // 2], "truncated"),
    "wrong_signature": ("redis", None, "signature does not match"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_remote_entries_are_refused_and_replaced(inproc, servers, reference, tmp_path,
                                                         damage):
    kind, spoil, reason = DAMAGES[damage]
    db = 5 + sorted(DAMAGES).index(damage)
    store = servers.redis.url(db) if kind == "redis" else servers.nginx.url(damage)
    sound = servers.redis.client(1)
    for name in reference[MODEL][2]:
        blob = sound.get(PREFIX + name)
        if spoil is None:       # a well-formed entry signed with another key
            binary, meta = unpack(name, blob, KEY)
            bad = pack(name, binary, meta, b"another key of 32 bytes, not ours")
        else:
            bad = spoil(blob)
        if kind == "redis":
            servers.redis.client(db).set(PREFIX + name, bad)
        else:
            _put_http(servers, damage, name, bad)
    res = _compile(inproc, tmp_path, remote_env(servers, store))
    assert reason in _one(res, "WP0121")
    stats = _sound_local_build(res, reference, tmp_path)
    assert stats["remote_refused"] == stats["kernels"], stats
    assert stats["remote_published"] == stats["kernels"], stats      # replaced by sound ones
    again = inproc.run(tmp_path / "again", MODEL, "--op_compiler_cache_dir=cache",
                       env=remote_env(servers, store)).ok()
    assert again.report()["kernel_cache"]["remote_hits"] == stats["kernels"]


@pytest.mark.parametrize("scheme", ["redis", "http"])
def test_slow_store_is_skipped_after_one_timeout(inproc, servers, reference, tmp_path, scheme):
    silent = SilentServer()
    try:
        store = f"{scheme}://127.0.0.1:{silent.port}/x|operation-timeout=300"
        if scheme == "redis":
            store = store.replace("/x|", "/0|")
        res = _compile(inproc, tmp_path, remote_env(servers, store))
    finally:
        silent.close()
    line = _one(res, "WP0122").lower()
    assert "timeout" in line or "timed out" in line, line
    assert _sound_local_build(res, reference, tmp_path)["remote_errors"] == 1


def test_full_redis_is_skipped(inproc, servers, reference, tmp_path):
    full = RedisServer(tmp_path / "redis", extra=("maxmemory 1", "maxmemory-policy noeviction"))
    try:
        res = _compile(inproc, tmp_path, remote_env(servers, full.url()))
    finally:
        full.stop()
    assert "OutOfMemoryError" in _one(res, "WP0122")   # Redis: OOM ... maxmemory
    stats = _sound_local_build(res, reference, tmp_path)
    assert stats["remote_published"] == 0 and stats["remote_errors"] == 1, stats


def test_store_without_a_usable_key_is_not_used(inproc, servers, reference, tmp_path):
    """No key, or a key file group may read: one WP0120 and the store is never contacted; the
    key-file attribute names a key per store."""
    db, store = 8, servers.redis.url(8)
    loose = write_key(tmp_path / "loose.key", mode=0o640)
    for case, env in (("nokey", {"PYATC_REMOTE_CACHE": store}),
                      ("loose", remote_env(servers, store, key_file=loose))):
        res = inproc.run(tmp_path / case, MODEL, "--op_compiler_cache_dir=cache", env=env).ok()
        line = _one(res, "WP0120")
        assert ("no signing key" if case == "nokey" else "readable or writable by group") in line
        assert res.report()["kernel_cache"]["remote"] == ""
    assert servers.redis.client(db).dbsize() == 0
    res = inproc.run(tmp_path / "attr", MODEL, "--op_compiler_cache_dir=cache",
                     env={"PYATC_REMOTE_CACHE": f"{store}|key-file={servers.key_file}"}).ok()
    assert "(WP012" not in res.text
    assert servers.redis.client(db).dbsize() == res.report()["kernel_cache"]["kernels"]
