"""OM integrity (issue #19 item 13): the header's checksum area holds the hex sha256 of every
byte after the header; the runtime and ATC modes 1 and 6 refuse a file whose bytes changed
(E10041) and read one without a checksum (all zero: CANN's OMs) with warning WP0301."""
from __future__ import annotations

import hashlib
import random
import subprocess
import sys

import pytest

from ge.errors import GeError, take_warnings
from ge.om import PartitionType, parse_om
from ge.om.container import CHECKSUM_OFFSET, CHECKSUM_SIZE, HEADER_SIZE, reseal

MODEL = "mobilenetv2_ci"
TIMEOUT = 120


@pytest.fixture(scope="module")
def om_bytes(compiled_model) -> bytes:
    return compiled_model(MODEL).om.read_bytes()


def _runtime(path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ge.runtime", "--model", str(path), *extra],
                          capture_output=True, text=True, timeout=TIMEOUT)


def _partition(data: bytes, ptype: int):
    return next(p for p in parse_om(data).partitions if p.type == ptype)


def _flip(data: bytes, pos: int) -> bytes:
    out = bytearray(data)
    out[pos] ^= 0x40
    return bytes(out)


def _unchecked(data: bytes) -> bytes:
    return data[:CHECKSUM_OFFSET] + bytes(CHECKSUM_SIZE) + data[CHECKSUM_OFFSET + CHECKSUM_SIZE:]


def test_the_header_carries_the_sha256_of_the_body(om_bytes):
    area = om_bytes[CHECKSUM_OFFSET:CHECKSUM_OFFSET + CHECKSUM_SIZE]
    assert area == hashlib.sha256(om_bytes[HEADER_SIZE:]).hexdigest().encode("ascii")
    assert reseal(om_bytes) == om_bytes          # a function of the bytes: deterministic


@pytest.mark.parametrize("where", ["weights", "inout_info"])
def test_a_changed_byte_is_refused_by_the_runtime(om_bytes, tmp_path, where):
    """A weight byte (it would silently change the outputs) or a MODEL_INOUT_INFO byte."""
    ptype = {"weights": PartitionType.WEIGHTS_DATA,
             "inout_info": PartitionType.MODEL_INOUT_INFO}[where]
    part = _partition(om_bytes, ptype)
    path = tmp_path / "changed.om"
    path.write_bytes(_flip(om_bytes, part.offset + part.size // 2))
    run = _runtime(path)
    assert run.returncode == 255, run.stderr
    assert "[ERROR] E10041" in run.stderr and "sha256" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


@pytest.mark.parametrize("mode", ["1", "6"])
def test_a_changed_byte_is_refused_by_modes_1_and_6(om_bytes, tmp_path, atc_main, mode):
    part = _partition(om_bytes, PartitionType.WEIGHTS_DATA)
    path = tmp_path / "changed.om"
    path.write_bytes(_flip(om_bytes, part.offset + 600))
    args = [f"--mode={mode}", f"--om={path}"]
    if mode == "1":
        args.append(f"--json={tmp_path / 'out.json'}")
    run = atc_main(*args, cwd=tmp_path)
    assert run.rc == 255
    assert "E10041" in run.text and "sha256" in run.text
    assert not (tmp_path / "out.json").exists()


def test_an_om_without_checksum_runs_with_a_warning(om_bytes, tmp_path):
    path = tmp_path / "unchecked.om"
    path.write_bytes(_unchecked(om_bytes))
    run = _runtime(path)
    assert run.returncode == 0, run.stderr
    assert "WP0301" in run.stderr and "Inference average time" in run.stdout


@pytest.mark.parametrize("mode", ["1", "6"])
def test_modes_1_and_6_read_an_om_without_checksum_with_a_warning(om_bytes, tmp_path, atc_main,
                                                                  mode):
    path = tmp_path / "unchecked.om"
    path.write_bytes(_unchecked(om_bytes))
    args = [f"--mode={mode}", f"--om={path}"]
    if mode == "1":
        args.append(f"--json={tmp_path / 'out.json'}")
    run = atc_main(*args, cwd=tmp_path)
    assert run.rc == 0, run.text
    assert "WP0301" in run.text


def test_random_weight_and_io_mutations_are_all_refused(om_bytes):
    """The probe of the issue: mutations of WEIGHTS_DATA and MODEL_INOUT_INFO (19 of 55 used to
    change the outputs silently) never load."""
    rng = random.Random(13)
    parts = [_partition(om_bytes, PartitionType.WEIGHTS_DATA),
             _partition(om_bytes, PartitionType.MODEL_INOUT_INFO)]
    for i in range(60):
        part = parts[i % 2]
        data = bytearray(om_bytes)
        for _ in range(rng.randint(1, 3)):
            data[part.offset + rng.randrange(part.size)] ^= 1 << rng.randrange(8)
        if bytes(data) == om_bytes:
            continue
        with pytest.raises(GeError) as info:
            parse_om(bytes(data), "mutated.om")
        assert info.value.code == "E10041" and "sha256" in info.value.params["reason"]
    take_warnings()
