"""Where a linked kernel keeps its data symbols and its build-id, read from the ELF headers of
the shared object (64- or 32-bit, either byte order): what build.py needs to write another
kernel's values into a copy of a compiled template (cgen.DataTemplate).  Nothing else."""
from __future__ import annotations

import struct
from typing import Dict, Optional, Tuple

__all__ = ["symbol_ranges", "build_id_range"]

SHT_SYMTAB, SHT_NOTE, SHT_NOBITS = 2, 7, 8
NT_GNU_BUILD_ID = 3


def _layout(data: bytes):
    """(byte order, 64-bit?, [section headers as (type, addr, offset, size, link)])."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        fields = order + "IIQQQQI"       # name, type, flags, addr, offset, size, link
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        fields = order + "IIIIIII"
    sections = []
    for i in range(shnum):
        _, kind, _, addr, offset, size, link = struct.unpack_from(fields, data,
                                                                   shoff + i * shentsize)
        sections.append((kind, addr, offset, size, link))
    return order, wide, sections


def symbol_ranges(data: bytes) -> Dict[str, Tuple[int, int]]:
    """name -> (file offset, size) of every defined symbol with contents in the file."""
    order, wide, sections = _layout(data)
    found: Dict[str, Tuple[int, int]] = {}
    entry, fmt = (24, order + "IBBHQQ") if wide else (16, order + "IIIBBH")
    for kind, _, offset, size, link in sections:
        if kind != SHT_SYMTAB:
            continue
        strtab = sections[link][2]
        for at in range(offset, offset + size, entry):
            if wide:
                name, _, _, shndx, value, length = struct.unpack_from(fmt, data, at)
            else:
                name, value, length, _, _, shndx = struct.unpack_from(fmt, data, at)
            if not name or shndx == 0 or shndx >= len(sections):
                continue
            s_kind, s_addr, s_offset, _, _ = sections[shndx]
            if s_kind == SHT_NOBITS:
                continue
            end = data.index(b"\0", strtab + name)
            found[data[strtab + name:end].decode("ascii", "replace")] = (
                s_offset + value - s_addr, length)
    return found


def build_id_range(data: bytes) -> Optional[Tuple[int, int]]:
    """(file offset, size) of the GNU build-id's bytes, or None without one."""
    order, _, sections = _layout(data)
    for kind, _, offset, size, _ in sections:
        at = offset
        while kind == SHT_NOTE and at + 12 <= offset + size:
            namesz, descsz, note = struct.unpack_from(order + "III", data, at)
            desc = at + 12 + (namesz + 3) // 4 * 4
            if note == NT_GNU_BUILD_ID and data[at + 12:at + 12 + namesz] == b"GNU\0":
                return desc, descsz
            at = desc + (descsz + 3) // 4 * 4
    return None
