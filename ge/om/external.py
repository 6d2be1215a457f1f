"""External weights: `--external_weight` / `ge.externalWeight` (docs/om.md "External weights").

Mode 1 writes every distinct constant to `<dir of om>/weight/weight_<sha256 of its bytes>`;
mode 2 writes them all, 512-byte aligned, to `<dir of om>/weight/<om base name>_weight_combined`.
Either way each Const op of the ModelDef becomes a `FileConstant` whose attrs say where its
bytes are, as CANN's FileConstantUtils records them: `location` (the file name, relative to
the `weight` directory), `offset`, `length`, `dtype`, `shape`, `original_shape`, and
`_value_sha256` (the sha256 of the bytes, CANN's ATTR_NAME_WEIGHT_SHA256).  The OM's checksum
covers the ModelDef, hence these hashes: the runtime checks every weight against its hash when
it maps the file (`load_file_constants`), so the integrity check covers the weight files too.

For the host runtime each FileConstant also gets an address in the weight space: its output
desc's `data_offset` is its offset in the layout both modes share (the combined file's), so
its consumers' `input_i` point at it like at any weight.  Op names are kept (CANN appends the
hash to them); identical constants share one file / one block.
"""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ge.errors import GeError
from ge.fsutil import FileRange, os_reason, publish
from ge.graph import serialize as ser
from ge.graph.derived import computed
from ge.graph.filebacked import file_range_of, file_view, map_file
from ge.graph.types import AttrValueType as VT, to_numpy_dtype

from .weights import WEIGHTS_ALIGN, SameBytes, _round_up

__all__ = ["check_mode", "EXTERNAL_MODES", "WEIGHT_DIR", "FILE_CONSTANT", "externalize",
           "ExternalWeights", "load_file_constants", "weight_dir_of"]

EXTERNAL_MODES = ("0", "1", "2")
WEIGHT_DIR = "weight"
FILE_CONSTANT = "FileConstant"
ATTR_SHA256 = "_value_sha256"       # CANN's ATTR_NAME_WEIGHT_SHA256
BAD_WEIGHT = "EP0310"               # a weight file of the model is missing, short or changed


def check_mode(value: str) -> str:
    """The `ge.externalWeight` value, checked (E10001 names the option)."""
    value = str(value or "0").strip()
    if value not in EXTERNAL_MODES:
        raise GeError("E10001", {"value": value, "parameter": "ge.externalWeight",
                                 "reason": "The value must be 0, 1 or 2"})
    return value


def weight_dir_of(om_path: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(om_path)), WEIGHT_DIR)


def _combined_name(om_path: str) -> str:
    base = os.path.basename(om_path)
    return (base.rsplit(".", 1)[0] if "." in base else base) + "_weight_combined"


def sha256_of(data) -> str:
    """Hex sha256 of a constant's bytes (an array, a buffer or a FileRange), read through one
    buffer when they are in a file."""
    digest = hashlib.sha256()
    source = data if isinstance(data, FileRange) else \
        file_range_of(data) if isinstance(data, np.ndarray) else None
    for chunk in (source.chunks() if source is not None else (memoryview(data).cast("B"),)):
        digest.update(chunk)
    return digest.hexdigest()


@dataclass
class _Blob:
    data: object                    # a byte view, or a FileRange
    offset: int                     # in the shared layout (= the combined file's)
    ops: list = field(default_factory=list)
    sha: str = ""                   # known once hashed (ExternalWeights)


def _set(op, key: str, kind: VT, value) -> None:
    op.attr[key].Clear()
    ser.attr_to_proto(kind, value, op.attr[key])


def _to_file_constant(op, blob: _Blob, location: str, file_offset: int) -> None:
    """Everything but the hash (and, in mode 1, the file name it makes)."""
    desc, _ = ser.desc_from_proto(op.attr["value"].t.desc)
    length = len(blob.data)
    del op.attr["value"]
    op.type = FILE_CONSTANT
    for key, kind, value in (("location", VT.VT_STRING, location),
                             ("offset", VT.VT_INT, file_offset),
                             ("length", VT.VT_INT, length),
                             ("dtype", VT.VT_DATA_TYPE, desc.data_type),
                             ("shape", VT.VT_LIST_INT, list(desc.shape)),
                             ("original_shape", VT.VT_LIST_INT, list(desc.origin_shape))):
        _set(op, key, kind, value)
    if op.output_desc:
        op.output_desc[0].data_offset, op.output_desc[0].weight_size = blob.offset, length


_PARALLEL_HASH_BYTES = 64 << 20   # below this a thread pool costs more than it saves


def _hash_pool(datas: list) -> ThreadPoolExecutor:
    """Threads to hash `datas` (byte views or FileRanges) with: every core from 64 MiB on
    (hashlib releases the GIL), one below."""
    big = sum(len(d) for d in datas) >= _PARALLEL_HASH_BYTES
    return ThreadPoolExecutor((os.cpu_count() or 1) if big else 1)


def _hashed_name(sha: str) -> str:
    """A mode-1 weight file's name."""
    return f"weight_{sha}"


@dataclass
class ExternalWeights:
    """The weight files of one OM, laid out by `externalize`.  Their sha256s go into the
    ModelDef (and name mode 1's files): `write` computes them on the other cores while it
    copies the combined file (each mode-1 file waits for its own only); `settle` computes
    them without writing (an OM built in memory)."""
    mode: str
    directory: str
    combined: str                   # mode 2's file name
    blobs: list

    def __bool__(self) -> bool:
        return bool(self.blobs)

    def settle(self) -> None:
        missing = [b for b in self.blobs if not b.sha]
        with _hash_pool([b.data for b in missing]) as pool:
            for blob, sha in zip(missing, pool.map(sha256_of, [b.data for b in missing])):
                blob.sha = sha
        self._record()

    def write(self) -> None:
        """Publish the files (each atomically, before the OM); a mode-1 file that is already
        there with the right size is kept (its name is the hash of its bytes, as CANN reuses
        it).  E13004 names a file that cannot be written."""
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as e:
            raise _unwritable(self.directory, e) from None
        with _hash_pool([b.data for b in self.blobs]) as pool:
            hashes = [pool.submit(sha256_of, b.data) for b in self.blobs]
            try:
                if self.mode == "2":
                    parts, at = [], 0
                    for blob in self.blobs:
                        parts += [bytes(blob.offset - at), blob.data]
                        at = blob.offset + len(blob.data)
                    _publish(os.path.join(self.directory, self.combined), parts)
                for blob, sha in zip(self.blobs, hashes):
                    blob.sha = sha.result()
                    if self.mode == "1":
                        _publish_once(os.path.join(self.directory, _hashed_name(blob.sha)),
                                      blob.data)
            finally:
                for sha in hashes:
                    sha.cancel()
        self._record()

    def _record(self) -> None:
        for blob in self.blobs:
            for op in blob.ops:
                _set(op, ATTR_SHA256, VT.VT_STRING, blob.sha)
                if self.mode == "1":
                    _set(op, "location", VT.VT_STRING, _hashed_name(blob.sha))


def _unwritable(path: str, e: OSError) -> GeError:
    return GeError("E13004", {"file": path, "reason": os_reason(e)})


def _publish(path: str, parts: list) -> None:
    try:
        publish(path, parts)
    except OSError as e:
        raise _unwritable(path, e) from None


def _publish_once(path: str, data) -> None:
    """A file named by the hash of its bytes: one of the right size is already them."""
    if not (os.path.isfile(path) and os.path.getsize(path) == len(data)):
        _publish(path, [data])


def externalize(pairs, om_path: str, mode: str) -> ExternalWeights:
    """Turn the (Const OpDef, bytes) pairs into FileConstants (in place) and lay out their
    weight files; identical constants share one block / file (found without hashing,
    ge.om.weights.SameBytes).  The hashes come with `write` or `settle`."""
    blobs: list[_Blob] = []
    same = SameBytes()
    end = 0
    for op, data in pairs:
        data = computed(data)                 # a derived constant (ge.graph.derived)
        view = memoryview(data).cast("B")
        if view.nbytes == 0:
            continue                          # an empty constant stays a Const
        source = file_range_of(data)
        blob = same.find(view, source)
        if blob is None:
            blob = _Blob(source if source is not None else view, _round_up(end, WEIGHTS_ALIGN))
            end = blob.offset + view.nbytes
            blobs.append(blob)
            same.add(view, blob)
        same.remember(source, blob)
        blob.ops.append(op)
    external = ExternalWeights(mode, weight_dir_of(om_path), _combined_name(om_path), blobs)
    for blob in blobs:
        for op in blob.ops:                   # mode 1's file names come with the hashes
            _to_file_constant(op, blob, "" if mode == "1" else external.combined,
                              0 if mode == "1" else blob.offset)
    return external


# -- loading (ge.runtime) -----------------------------------------------------------------------
def _attr(op, key, default=None):
    if key not in op.attr:
        return default
    return ser.attr_from_proto(op.attr[key])[1]


def _bad(path: str, model: str, reason: str) -> GeError:
    return GeError(BAD_WEIGHT, {"file": path, "model": model, "reason": reason})


def load_file_constants(model_def, om_path: str, verify: bool = True) -> list:
    """[(op, read-only array viewing the mapped weight file)] for every FileConstant of the
    model, each checked for size and (with `verify`) against its recorded sha256."""
    directory = weight_dir_of(om_path)
    maps: dict[str, np.ndarray] = {}
    checks: dict[tuple, tuple] = {}
    out = []
    for graph_def in model_def.graph:
        for op in graph_def.op:
            if op.type != FILE_CONSTANT:
                continue
            location = str(_attr(op, "location", "") or "")
            if not location or os.path.basename(location) != location or location in (".", ".."):
                raise _bad(location or "<none>", om_path, f"FileConstant {op.name} names no "
                           "file inside the weight directory")
            path = os.path.join(directory, location)
            offset, length = int(_attr(op, "offset", 0) or 0), int(_attr(op, "length", 0) or 0)
            dtype = to_numpy_dtype(_attr(op, "dtype"))
            shape = [int(d) for d in _attr(op, "shape", []) or []]
            if path not in maps:
                try:
                    maps[path] = map_file(path)
                except OSError as e:
                    raise _bad(path, om_path, os_reason(e)) from None
            mapped = maps[path]
            if offset < 0 or length < 0 or offset + length > mapped.size:
                raise _bad(path, om_path, f"FileConstant {op.name} needs bytes [{offset}, "
                           f"{offset + length}) but the file has {mapped.size}")
            if length != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
                raise _bad(path, om_path, f"FileConstant {op.name} has length {length} for "
                           f"shape {shape} of {dtype.name}")
            view = file_view(mapped, offset, length, dtype, shape)
            key = (path, offset, length)
            want = str(_attr(op, ATTR_SHA256, "") or "")
            if verify and want and key not in checks:
                checks[key] = (op.name, memoryview(mapped[offset:offset + length]), want)
            out.append((op, view))
    _verify(list(checks.items()), om_path)
    return out


def _verify(checks: list, om_path: str) -> None:
    """Each ((path, offset, length), (op name, bytes, recorded sha256)) hashed, on all cores
    from 64 MiB on; EP0310 names the first one that differs."""
    datas = [data for _, (_, data, _) in checks]
    with _hash_pool(datas) as pool:
        digests = list(pool.map(sha256_of, datas))
    for ((path, _, _), (name, _, want)), got in zip(checks, digests):
        if got != want:
            raise _bad(path, om_path, f"the bytes of FileConstant {name} have sha256 {got}, "
                       f"the model records {want}: the file was changed after the model was "
                       "compiled")
