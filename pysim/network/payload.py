"""Payload stages a gateway or a tunnel applies to packets, run and timed for real.

Each stage takes a packet's payload and returns what it becomes: a
compressor (zlib at a level, LZO1X-1 through the system's liblzo2), or a
fingerprint (MD5, SHA-1, BLAKE2b, xxHash when installed). :func:`run_stage`
applies one to a list of chunks and reports bytes in and out, the
compression ratio and the time per byte; a stage whose library is missing
reports ``available=False`` and why.

>>> r = run_stage("zlib-1", [b"abc" * 400] * 10)
>>> r.available and r.bytes_out < r.bytes_in
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import time
import zlib
from dataclasses import dataclass
from functools import cache

LZO_VERSION = 0x20A0  # liblzo2 2.10


@dataclass(frozen=True)
class StageResult:
    name: str
    available: bool
    chunks: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    seconds: float = float("nan")
    reason: str = ""

    @property
    def ratio(self) -> float:
        """Bytes out over bytes in (below 1: it compressed)."""
        return self.bytes_out / self.bytes_in if self.bytes_in else float("nan")

    @property
    def ns_per_byte(self) -> float:
        return 1e9 * self.seconds / self.bytes_in if self.bytes_in else float("nan")


@cache
def _lzo():
    """liblzo2 loaded and initialised, or None."""
    path = ctypes.util.find_library("lzo2") or "liblzo2.so.2"
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    ptr = ctypes.sizeof(ctypes.c_void_p)
    # lzo_init(): the sizes of short, int, long, lzo_uint32_t, lzo_uint, the dictionary entry, char *,
    # lzo_voidp and lzo_callback_t (three function pointers, a pointer and two lzo_xint)
    if lib.__lzo_init_v2(LZO_VERSION, 2, 4, ctypes.sizeof(ctypes.c_long), 4, ptr, ptr, ptr, ptr, 6 * ptr) != 0:
        return None
    return lib


def lzo_compress(data: bytes) -> bytes:
    """LZO1X-1 of ``data`` (raises RuntimeError if liblzo2 is not installed)."""
    lib = _lzo()
    if lib is None:
        raise RuntimeError("liblzo2 is not installed (Debian package liblzo2-2)")
    out = ctypes.create_string_buffer(len(data) + len(data) // 16 + 64 + 3)
    out_len = ctypes.c_size_t(0)
    work = ctypes.create_string_buffer(16384 * ctypes.sizeof(ctypes.c_void_p))
    if lib.lzo1x_1_compress(data, ctypes.c_size_t(len(data)), out, ctypes.byref(out_len), work) != 0:
        raise RuntimeError("lzo1x_1_compress failed")
    return out.raw[:out_len.value]


def lzo_decompress(data: bytes, size: int) -> bytes:
    """The ``size`` bytes LZO1X compressed into ``data``."""
    lib = _lzo()
    if lib is None:
        raise RuntimeError("liblzo2 is not installed (Debian package liblzo2-2)")
    out = ctypes.create_string_buffer(size)
    out_len = ctypes.c_size_t(size)
    if lib.lzo1x_decompress_safe(data, ctypes.c_size_t(len(data)), out, ctypes.byref(out_len), None) != 0:
        raise RuntimeError("lzo1x_decompress_safe: the data is corrupt or larger than size")
    return out.raw[:out_len.value]


def _xxhash():
    try:
        import xxhash
    except ImportError:
        return None
    return lambda b: xxhash.xxh64(b).digest()


def stages() -> dict:
    """Every stage by name: a function of a chunk, or None where its library is missing."""
    out = {f"zlib-{level}": (lambda b, level=level: zlib.compress(b, level)) for level in (1, 6, 9)}
    out["lzo1x-1"] = lzo_compress if _lzo() is not None else None
    out["md5"] = lambda b: hashlib.md5(b).digest()
    out["sha1"] = lambda b: hashlib.sha1(b).digest()
    out["blake2b-16"] = lambda b: hashlib.blake2b(b, digest_size=16).digest()
    out["xxh64"] = _xxhash()
    return out


def run_stage(name: str, chunks, *, repeat: int = 3) -> StageResult:
    """Apply stage ``name`` to every chunk; the fastest of ``repeat`` passes is the time."""
    table = stages()
    if name not in table:
        raise ValueError(f"unknown stage {name!r}; known: {sorted(table)}")
    fn = table[name]
    if fn is None:
        return StageResult(name, False, reason=f"{name}: its library is not installed")
    chunks = [bytes(c) for c in chunks]
    best, size_out = float("inf"), 0
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        outs = [fn(c) for c in chunks]
        best = min(best, time.perf_counter() - t0)
        size_out = sum(len(o) for o in outs)
    return StageResult(name, True, len(chunks), sum(len(c) for c in chunks), size_out, best)


def chunked(data: bytes, size: int) -> list:
    """``data`` cut into ``size``-byte chunks (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size!r}")
    return [data[k:k + size] for k in range(0, len(data), size)]
