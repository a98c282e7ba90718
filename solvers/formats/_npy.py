"""Reading .npy data (alone or inside an .npz) without pickle and without trusting its header.

The header's shape is checked against memory before any data is read, and the data is taken as
raw bytes of the declared dtype, so a truncated or hostile file cannot allocate wildly or run code.
"""
from __future__ import annotations

import io
import math
import zipfile
import zlib

import numpy as np

from ..errors import InputError
from ..io_util import check_allocation


def read_npy(fh, path, what: str = "array") -> np.ndarray:
    """One array from an open binary .npy stream."""
    name = str(path)
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
    except Exception as e:  # numpy's header parser raises many types on hostile text (TokenError...)
        raise InputError(f"{what}: not a valid .npy array ({e})", name) from None
    if dtype.hasobject:
        raise InputError(f"{what}: holds Python objects, which are not loaded (no pickle)", name)
    count = math.prod(shape)
    check_allocation(count * dtype.itemsize, f"{what} of shape {shape}", name)
    from ._text import BLOCK_BYTES, report_read
    data = bytearray(count * dtype.itemsize)
    view, got = memoryview(data), 0
    try:
        while got < len(data):  # in blocks, so a progress bar moves
            read = fh.readinto(view[got:got + BLOCK_BYTES])
            if not read:
                break
            got += read
            report_read(fh)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise InputError(f"{what}: cannot read data ({e})", name) from None
    if got != len(data):
        raise InputError(f"{what}: file is truncated ({got} of {len(data)} data bytes)", name)
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran else "C")


def load_npy(path, what: str = "array") -> np.ndarray:
    from ._text import close_binary, open_binary
    fh = open_binary(path)
    try:
        return read_npy(fh, path, what)
    finally:
        close_binary(fh)


def load_npz(path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """The named arrays of an .npz archive (np.savez layout: one NAME.npy member per array)."""
    name = str(path)
    # zipfile raises assorted types (BadZipFile, UnicodeDecodeError, NotImplementedError...) on
    # corrupt archives, so its calls are guarded broadly; our own InputErrors pass through.
    try:
        archive = zipfile.ZipFile(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        raise InputError(f"cannot read file: {e.strerror}", name) from None
    except Exception as e:
        raise InputError(f"not a readable .npz archive ({e})", name) from None
    with archive:
        members = set(archive.namelist())
        out = {}
        for key in required + optional:
            member = f"{key}.npy"
            if member not in members:
                if key in required:
                    raise InputError(f"the archive has no '{key}' array (has: "
                                     f"{', '.join(sorted(m[:-4] for m in members)) or 'nothing'})", name)
                continue
            try:
                with archive.open(member) as fh:
                    out[key] = read_npy(fh, path, f"'{key}'")
            except InputError:
                raise
            except Exception as e:
                raise InputError(f"'{key}': corrupt archive member ({e})", name) from None
        return out


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()
