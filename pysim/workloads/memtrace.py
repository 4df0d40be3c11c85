"""Memory-reference traces: read from valgrind's lackey, or generated for common access patterns.

Every trace is three arrays: ``kinds`` (0 instruction fetch, 1 data access, as
:mod:`pysim.hw.hierarchy` takes them), byte addresses and access sizes.

* :func:`parse_lackey` reads ``valgrind --tool=lackey --trace-mem=yes``
  output; a modify (``M``) is a load and a store of the same bytes.
* :func:`stencil` sweeps a 5-point stencil over a 2-d array, row by row.
* :func:`fft` gives the butterflies of an iterative radix-2 FFT.
* :func:`pointer_chase` follows a random cyclic permutation of nodes.
"""
from __future__ import annotations

import numpy as np

from pysim.rng import make_rng

def parse_lackey(text: str) -> tuple:
    """(kinds, addresses, sizes) from lackey's trace (lines such as ``I  0400d7d4,8`` or ``L 1ffefffd58,8``).

    Raises
    ------
    ValueError
        If the text holds no trace lines.
    """
    kinds, addrs, sizes = [], [], []
    for line in text.splitlines():
        if len(line) < 4 or line[0] == "=":
            continue  # valgrind's own messages start with ==pid==
        op = line[:2].strip()
        if op not in ("I", "L", "S", "M"):
            continue
        addr, _, size = line[2:].strip().partition(",")
        a, n = int(addr, 16), int(size)
        if op == "M":  # a modify is a load and a store
            kinds += (1, 1)
            addrs += (a, a)
            sizes += (n, n)
        else:
            kinds.append(0 if op == "I" else 1)
            addrs.append(a)
            sizes.append(n)
    if not kinds:
        raise ValueError("no lackey trace lines in the text (run valgrind --tool=lackey --trace-mem=yes)")
    return np.array(kinds, dtype=np.uint8), np.array(addrs, dtype=np.uint64), np.array(sizes, dtype=np.uint64)


def _data(addrs, elem_bytes):
    addrs = np.asarray(addrs, dtype=np.uint64)
    return np.ones(addrs.size, dtype=np.uint8), addrs, np.full(addrs.size, elem_bytes, dtype=np.uint64)


def stencil(nx: int, ny: int, *, elem_bytes: int = 8, base: int = 0) -> tuple:
    """A 5-point stencil over the interior of an ny x nx row-major array: for each point, its four
    neighbours and itself are read (north, west, centre, east, south)."""
    if nx < 3 or ny < 3 or elem_bytes < 1:
        raise ValueError("need nx, ny >= 3 and elem_bytes >= 1")
    y, x = np.mgrid[1:ny - 1, 1:nx - 1]
    idx = np.stack([(y - 1) * nx + x, y * nx + x - 1, y * nx + x, y * nx + x + 1, (y + 1) * nx + x], axis=-1)
    return _data(base + idx.reshape(-1) * elem_bytes, elem_bytes)


def fft(n: int, *, elem_bytes: int = 16, base: int = 0) -> tuple:
    """The data references of an iterative radix-2 FFT of ``n`` points (a power of two): each stage's
    butterflies read and write their two elements."""
    if n < 2 or n & (n - 1):
        raise ValueError(f"n must be a power of two >= 2, got {n!r}")
    refs = []
    half = 1
    while half < n:
        for start in range(0, n, 2 * half):
            k = np.arange(start, start + half)
            pair = np.stack([k, k + half, k, k + half], axis=-1).reshape(-1)  # read both, write both
            refs.append(pair)
        half *= 2
    return _data(base + np.concatenate(refs) * elem_bytes, elem_bytes)


def pointer_chase(nodes: int, steps: int, *, node_bytes: int = 64, rng=0, base: int = 0) -> tuple:
    """``steps`` loads following a random single cycle through ``nodes`` nodes of ``node_bytes``."""
    if nodes < 2 or steps < 0 or node_bytes < 1:
        raise ValueError("need nodes >= 2, steps >= 0 and node_bytes >= 1")
    order = make_rng(rng).permutation(nodes)
    nxt = np.empty(nodes, dtype=np.int64)
    nxt[order] = np.roll(order, -1)
    seq = np.empty(steps, dtype=np.int64)
    cur = int(order[0])
    for i in range(steps):
        seq[i] = cur
        cur = int(nxt[cur])
    return _data(base + seq * node_bytes, 8)
