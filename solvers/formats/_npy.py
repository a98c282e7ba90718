"""Reading .npy data (alone or inside an .npz) without pickle and without trusting its header.

numpy's own header reader (``np.lib.format``) parses the header; its shape and dtype are then
checked before any data is read: numbers only (no Python objects), no negative dimension, a size
memory allows, and, where the bytes present are known (a plain file's size, an archive member's
stated size), exactly the bytes the header declares: a truncated file or trailing data is refused
before anything is allocated. Data whose size cannot be known in advance (a compressed archive
member, whose stated size may lie) is read in blocks into a buffer that grows with what actually
arrives, so memory follows the bytes present, not the header.
"""
from __future__ import annotations

import io
import math
import os
import warnings
import zipfile
import zlib
from typing import Callable

import numpy as np

from ..errors import InputError
from ..io_util import check_allocation

_NUMERIC_KINDS = "biufc"  # bool, signed, unsigned, float, complex: callers say which they take


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as people write it: "3 x 4", "5", "a single value"."""
    return " x ".join(str(n) for n in shape) if shape else "a single value"


MAP_MIN_BYTES = 64 << 20  # a plain .npy file from this size is memory-mapped (smaller ones read with progress)


def _empty_from_start(fh) -> bool:
    """Whether a file's stream at its start holds nothing at all (it is left at its start); an
    archive's member (no file descriptor of its own) is left to read_magic and load_npz's words."""
    try:
        fh.fileno()
        if fh.tell() != 0:
            return False
        empty = not fh.read(1)
        fh.seek(0)
        return empty
    except (OSError, AttributeError, ValueError):  # a stream that cannot tell or seek: read_magic decides
        return False


def read_header(fh, path, what: str = "array") -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of an open .npy stream, checked; the stream is left at the data."""
    name = str(path)
    if _empty_from_start(fh):
        raise InputError("file is empty", name)  # as the text formats say it
    try:
        version = np.lib.format.read_magic(fh)
    except zipfile.BadZipFile:
        raise  # a damaged archive member, named by load_npz
    except Exception:  # ValueError on a wrong signature, EOFError / OSError on a short or unreadable file
        raise InputError(f"{what}: not a valid .npy array (the file does not start with NumPy's signature)",
                         name) from None
    try:
        with warnings.catch_warnings():  # a Python 2 header is read after a UserWarning we do not show
            warnings.simplefilter("ignore")
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
    except zipfile.BadZipFile:
        raise
    except Exception:  # numpy raises many types on hostile header text (ValueError, TokenError...)
        raise InputError(f"{what}: not a valid .npy array (its header is malformed)", name) from None
    if any(n < 0 for n in shape):
        raise InputError(f"{what}: not a valid .npy array (its header declares the negative shape "
                         f"{shape_text(shape)})", name)
    if dtype.hasobject:
        raise InputError(f"{what}: holds Python objects, which are not loaded (no pickle)", name)
    if dtype.kind not in _NUMERIC_KINDS or dtype.names is not None or dtype.shape:
        from ..text import dtype_words
        raise InputError(f"{what}: holds {dtype_words(dtype)}, not numbers", name)
    return tuple(shape), bool(fortran), dtype


def read_npy(fh, path, what: str = "array", stored_size: int | None = None, trusted_size: bool = False,
             check: Callable[[tuple[int, ...], np.dtype], None] | None = None) -> np.ndarray:
    """One array from an open binary .npy stream.

    ``stored_size``: the stream's total size when known (a plain file; an archive member's stated
    size), so that the data must be exactly what the header declares; ``trusted_size``: that size
    is the bytes truly present (a plain file), so the buffer is allocated at once. ``check(shape,
    dtype)`` may refuse the header before its data is read.
    """
    name = str(path)
    shape, fortran, dtype = read_header(fh, path, what)
    if check is not None:
        check(shape, dtype)
    need = math.prod(shape) * dtype.itemsize
    check_allocation(need, f"{what} of shape {shape_text(shape)}", name)
    if stored_size is not None:
        check_data_size(stored_size - fh.tell(), shape, dtype, path, what)
    if trusted_size and need >= MAP_MIN_BYTES:
        # a large plain file is mapped, not read: the first pass over it (validation, on all cores)
        # pulls it from the page cache at memory speed, and no second copy exists
        return np.memmap(name, dtype=dtype, mode="r", offset=fh.tell(), shape=shape,
                         order="F" if fortran else "C")
    data = _read_data(fh, need, trusted_size, path, what)
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran else "C")


def check_data_size(present: int, shape: tuple[int, ...], dtype: np.dtype, path, what: str = "array") -> None:
    """InputError unless exactly the bytes the header declares follow it (``present`` of them)."""
    need = math.prod(shape) * dtype.itemsize
    if present < need:
        raise InputError(f"{what}: the file is truncated: the header declares {shape_text(shape)} "
                         f"{dtype.name} values ({need:,} bytes) but {present:,} bytes of data follow it", str(path))
    if present > need:
        raise InputError(f"{what}: {present - need:,} bytes follow the {shape_text(shape)} array the header "
                         "declares (a damaged file, or not one array?)", str(path))


def _read_data(fh, need: int, trusted_size: bool, path, what: str) -> bytearray:
    """Exactly ``need`` bytes, read in blocks (so a progress bar moves); a buffer allocated at once
    when the size is trusted, else one that grows with the bytes that actually arrive."""
    from ._text import BLOCK_BYTES, report_read
    name = str(path)
    data = bytearray(need) if trusted_size else bytearray()
    got = 0
    try:
        if trusted_size:
            view = memoryview(data)
            while got < need:
                read = fh.readinto(view[got:got + BLOCK_BYTES])
                if not read:
                    break
                got += read
                report_read(fh)
            view.release()
        else:
            while got < need:
                chunk = fh.read(min(BLOCK_BYTES, need - got))
                if not chunk:
                    break
                data += chunk
                got += len(chunk)
                report_read(fh)
        extra = fh.read(1)
    except zipfile.BadZipFile:  # zipfile's text quotes the member name like a repr
        raise InputError(f"{what}: the archive member is damaged (its data fails the checksum or cannot be "
                         "unpacked)", name) from None
    except (OSError, EOFError, zlib.error) as e:
        from ._text import unreadable
        raise InputError(f"{what}: {unreadable(e)}", name) from None
    if got != need:
        raise InputError(f"{what}: the file is truncated ({got:,} of {need:,} data bytes)", name)
    if extra:
        raise InputError(f"{what}: more data follows the array its header declares (a damaged file, or "
                         "not one array?)", name)
    return data


def load_npy(path, what: str = "array") -> np.ndarray:
    from ._text import close_binary, open_binary
    fh = open_binary(path)
    try:
        plain = getattr(fh, "fileobj", None) is None  # not gunzipped: the file's size is the bytes present
        size = os.fstat(fh.fileno()).st_size if plain else None
        return read_npy(fh, path, what, stored_size=size, trusted_size=plain)
    finally:
        close_binary(fh)


def _is_empty(path) -> bool:
    try:
        return os.path.getsize(path) == 0
    except OSError:
        return False


def unreadable_archive(error: Exception, path=None) -> str:
    """The line for an .npz that zipfile cannot open (its own text is a library's: "File is not a zip
    file"); an empty file says so, as every other format does."""
    if path is not None and _is_empty(path):
        return "file is empty"
    if isinstance(error, zipfile.BadZipFile):
        return "not a readable .npz archive: it is not a complete zip file (damaged or cut short?)"
    return "not a readable .npz archive: its table of contents is damaged"


def load_npz(path, required: tuple[str, ...], optional: tuple[str, ...] = (),
             check: Callable[[str, tuple[int, ...], np.dtype, dict], None] | None = None) -> dict[str, np.ndarray]:
    """The named arrays of an .npz archive (np.savez layout: one NAME.npy member per array), read in
    the order given. ``check(key, shape, dtype, arrays read so far)`` may refuse a member's header
    before its data is read."""
    name = str(path)
    # zipfile raises assorted types (BadZipFile, UnicodeDecodeError, NotImplementedError...) on
    # corrupt archives, so its calls are guarded broadly; our own InputErrors pass through.
    try:
        archive = zipfile.ZipFile(path)
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", name) from None
    except Exception as e:
        raise InputError(unreadable_archive(e, path), name) from None
    with archive:
        members = {info.filename: info for info in archive.infolist()}
        out = {}
        for key in required + optional:
            member = f"{key}.npy"
            if member not in members:
                if key in required:
                    raise InputError(f"the archive has no '{key}' array (has: "
                                     f"{', '.join(sorted(m.removesuffix('.npy') for m in members)) or 'nothing'})",
                                     name)
                continue
            hook = None if check is None else (lambda shape, dtype, key=key: check(key, shape, dtype, out))
            try:
                with archive.open(member) as fh:
                    out[key] = read_npy(fh, path, f"'{key}'", stored_size=members[member].file_size, check=hook)
            except InputError:
                raise
            except zipfile.BadZipFile:  # zipfile's text quotes the member name like a repr
                raise InputError(f"'{key}': the archive member is damaged (its data fails the checksum or "
                                 "cannot be unpacked)", name) from None
            except Exception as e:
                raise InputError(f"'{key}': corrupt archive member ({e})", name) from None
        return out


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()
