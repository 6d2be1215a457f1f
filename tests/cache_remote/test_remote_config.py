"""The remote setting (syntax, attributes, precedence), the signing key file rules and the
signed object format (every byte of an object is covered; names cannot be swapped)."""
import pytest

from ge.compiler.cache import settings as cfg
from ge.compiler.cache.remote import display_url, parse_store
from ge.compiler.cache.remote_entry import Refused, load_key, pack, unpack
from remote_helpers import KEY, write_key

NAME = "te_relu_" + "ab" * 32
META = {"symbol": "ge_kernel", "abi": 1, "op_type": "Relu", "workspace_bytes": 0,
        "key": "ab" * 32, "key_material": "schema:..."}


def test_store_attributes():
    spec = parse_store("redis://u:p@h:7000/3|read-only|connect-timeout=50"
                       "|operation-timeout=2000|key-file=/k")
    assert (spec.url, spec.read_only, spec.connect_ms, spec.operation_ms, spec.key_file) == \
        ("redis://u:p@h:7000/3", True, 50, 2000, "/k")
    assert spec.display == "redis://u:***@h:7000/3"
    default = parse_store("https://cache.example/ci")
    assert (default.read_only, default.connect_ms, default.operation_ms, default.tls) == \
        (False, 100, 10000, True)
    assert not parse_store("http://h/x|read-only=false").read_only


@pytest.mark.parametrize("item, reason", [
    ("ftp://h/x", "unknown scheme"), ("redis://", "no host"), ("redis://h:99999", "bad URL"),
    ("redis://h|readonly", "unknown attribute"), ("redis://h|connect-timeout=0", "milliseconds"),
    ("redis://h|read-only=yes", "neither true nor false")])
def test_bad_stores(item, reason):
    with pytest.raises(Refused, match=reason):
        parse_store(item)


def test_passwords_never_shown():
    assert display_url("rediss://:secret@h:1/0|key-file=/k") == "rediss://:***@h:1/0"
    assert display_url("http://h/x") == "http://h/x"


def test_precedence_option_over_ini_over_environment():
    ini = "[op_compiler_cache]\nremote_storage = redis://ini\n"
    env = {cfg.ENV_REMOTE: "redis://env"}
    opt = {cfg.OPT_REMOTE: "redis://opt http://opt/x"}
    assert cfg.remote_storage(opt, ini, env) == ("redis://opt http://opt/x", cfg.OPT_REMOTE)
    assert cfg.remote_storage({}, ini, env)[0] == "redis://ini"
    assert cfg.remote_storage({}, None, env) == ("redis://env", cfg.ENV_REMOTE)
    assert cfg.remote_storage({}, None, {}) == ("", "")


def test_key_file_rules(tmp_path):
    assert load_key(str(write_key(tmp_path / "k"))) == KEY
    for name, mode, reason in (("g", 0o640, "readable or writable by group"),
                               ("o", 0o604, "readable or writable by group")):
        with pytest.raises(Refused, match=reason):
            load_key(str(write_key(tmp_path / name, mode=mode)))
    with pytest.raises(Refused, match="fewer than 16"):
        load_key(str(write_key(tmp_path / "short", b"short")))
    with pytest.raises(Refused, match="No such file"):
        load_key(str(tmp_path / "missing"))


def test_every_byte_of_an_object_is_signed():
    blob = pack(NAME, b"\x7fELF" + bytes(range(200)), META, KEY)
    binary, meta = unpack(NAME, blob, KEY)
    assert binary.startswith(b"\x7fELF") and meta["sha256"] and meta["binFileName"] == NAME
    for at in range(0, len(blob), 7):
        flipped = bytearray(blob)
        flipped[at] ^= 0x01
        with pytest.raises(Refused):
            unpack(NAME, bytes(flipped), KEY)
    other = "te_relu_" + "cd" * 32
    with pytest.raises(Refused, match="signature"):
        unpack(other, blob, KEY)            # a sound entry served under another kernel's name
    with pytest.raises(Refused, match="signature"):
        unpack(NAME, blob, b"another key of at least 16 bytes")
    with pytest.raises(Refused, match="truncated"):
        unpack(NAME, blob[:-1], KEY)
