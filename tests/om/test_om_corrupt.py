"""Damaged OM files: every fault is GeError E10041 naming the file, never a crash."""
from __future__ import annotations

import random
import struct

import pytest

from ge.errors import GeError
from ge.om import OmContent, build_om, parse_om, read_om
from ge.om.container import reseal

from ._graphs import conv_net

SOURCE = "bad.om"


@pytest.fixture(scope="module")
def good() -> bytes:
    return build_om(OmContent(graph=conv_net(), kernels=[("k", b"bin")],
                              target=("linux", "x86_64")))


def _fails(data: bytes, *reason_words: str) -> GeError:
    with pytest.raises(GeError) as err:
        parse_om(data, SOURCE)
    assert err.value.code == "E10041"
    assert err.value.params["file"] == SOURCE
    for word in reason_words:
        assert word in err.value.params["reason"]
    return err.value


def _patch(data: bytes, offset: int, fmt: str, *values) -> bytes:
    """`data` edited and its checksum recomputed, so the check under test is reached (an
    unsealed edit is refused by the checksum: tests/reliability/test_om_integrity.py)."""
    buf = bytearray(data)
    struct.pack_into(fmt, buf, offset, *values)
    return reseal(bytes(buf))


def test_good_file_parses(good):
    assert parse_om(good, SOURCE).model_def.name == "net"


@pytest.mark.parametrize("size", [0, 3, 255, 256, 263, 300, -1, -100])
def test_truncated(good, size):
    _fails(good[:size])


def test_wrong_magic(good):
    err = _fails(b"XMOD" + good[4:], "magic")
    assert err.params["reason"].endswith("(at byte 0)")


def test_om2_zip_is_named(good):
    _fails(b"PK\x03\x04" + good[4:], "OM2")


def test_headsize_other_than_256(good):
    _fails(_patch(good, 4, "<I", 128), "header size")


def test_encrypted_and_other_model_types(good):
    _fails(_patch(good, 80, "<B", 1), "encrypted")
    _fails(_patch(good, 82, "<B", 5), "model type 5")


def test_model_length_that_lies(good):
    _fails(_patch(good, 184, "<Q", len(good)), "model_length")
    _fails(_patch(good, 184, "<Q", 2 ** 63), "model_length")


def test_extra_bytes_after_the_last_partition(good):
    data = _patch(good + b"\0" * 8, 184, "<Q", len(good) - 256 + 8)
    _fails(data, "unexpected bytes")


def test_partition_count_out_of_range(good):
    _fails(_patch(good, 256, "<I", 0), "partition count")
    _fails(_patch(good, 256, "<I", 0xFFFFFFFF), "partition count")
    _fails(_patch(good, 256, "<I", 8), "")


def test_partition_size_that_lies(good):
    entry = 256 + 8                       # first entry: type, pad, offset, size
    _fails(_patch(good, entry + 16, "<Q", 2 ** 20), "runs past")
    _fails(_patch(good, entry + 16, "<Q", 2 ** 40), "exceeds 4 GiB")
    _fails(_patch(good, entry + 16, "<Q", 2 ** 64 - 1), "")
    _fails(_patch(good, entry + 16, "<Q", 1), "")   # later offsets no longer contiguous


def test_partition_offset_that_lies(good):
    _fails(_patch(good, 256 + 8 + 24 + 8, "<Q", 5), "not contiguous")


def test_unknown_repeated_or_padded_partition_types(good):
    _fails(_patch(good, 256 + 8, "<I", 17), "unknown partition type 17")
    _fails(_patch(good, 256 + 8 + 24, "<I", 8), "repeats")
    _fails(_patch(good, 256 + 8 + 4, "<I", 1), "padding")
    _fails(_patch(good, 256 + 4, "<I", 1), "padding")


def test_missing_model_def(good):
    _fails(_patch(good, 256 + 8 + 24, "<I", 12), "MODEL_DEF")


def test_garbage_model_def(good):
    om = parse_om(good)
    model_def = next(p for p in om.partitions if p.type == 0)
    data = bytearray(good)
    data[model_def.offset:model_def.offset + 16] = b"\xff" * 16
    _fails(reseal(bytes(data)), "MODEL_DEF")


def test_kernel_item_that_runs_over(good):
    om = parse_om(good)
    tbe = next(p for p in om.partitions if p.type == 3)
    _fails(_patch(good, tbe.offset + 8, "<I", 10 ** 9), "kernel item")
    _fails(_patch(good, tbe.offset, "<I", 0x12345678), "kernel item magic")


def test_const_pointing_outside_the_weights(good):
    om = parse_om(good)
    op = next(op for op in om.model_def.graph[0].op if op.type == "Const")
    op.attr["value"].t.desc.data_offset = 10 ** 9
    with pytest.raises(GeError) as err:
        om.to_graph()
    assert err.value.code == "E10041" and "outside WEIGHTS_DATA" in err.value.params["reason"]


def test_random_byte_flips_never_crash(good):
    rng = random.Random(1234)
    for i in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = reseal(bytes(data)) if i % 2 else bytes(data)   # half reach the deeper checks
        try:
            om = parse_om(data, SOURCE)
            om.to_graph()
        except GeError as e:
            assert e.code == "E10041"


def test_random_truncations_never_crash(good):
    rng = random.Random(99)
    for _ in range(100):
        with pytest.raises(GeError):
            parse_om(good[:rng.randrange(len(good))], SOURCE)


def test_read_om_of_missing_file(tmp_path):
    with pytest.raises(GeError) as err:
        read_om(str(tmp_path / "missing.om"))
    assert err.value.code == "E10041"
