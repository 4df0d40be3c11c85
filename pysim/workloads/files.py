"""File-system workloads: PostMark, Iozone's tests, untar write sequences, and namespace trees.

Each generator yields operations as tuples a model or a real runner can
replay: ``("create", file, size)``, ``("read", file, offset, nbytes)``,
``("write", file, offset, nbytes)``, ``("append", file, nbytes)``,
``("delete", file)``, ``("mkdir", dir)``, ``("close", file)``.

* :func:`postmark` follows PostMark 1.5 (Katcher, NetApp TR3022, 1997): a
  pool of files with uniform random sizes, then transactions, each a read
  or an append of a random file and a create or a delete, with PostMark's
  biases and block size.
* :func:`iozone` gives the request sequence of one Iozone test (write,
  rewrite, read, reread, random read, random write) for a file and record size.
* :func:`untar` writes a tree's files in archive order, ``buffer_bytes`` at a time.
* :class:`Namespace` is a directory tree: generated with a given number of
  files and a fan-out, or read from a real directory walk.
"""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pysim.rng import make_rng


@dataclass(frozen=True)
class PostMarkConfig:
    """PostMark 1.5's settings; the defaults are its own (``set`` commands of its manual)."""

    files: int = 500
    transactions: int = 500
    min_size: int = 500
    max_size: int = 10_000
    block_bytes: int = 512
    read_bias: int = 5     # out of 10: read rather than append
    create_bias: int = 5   # out of 10: create rather than delete

    def __post_init__(self):
        if self.files < 1 or self.transactions < 0:
            raise ValueError("files must be >= 1 and transactions >= 0")
        if not 0 < self.min_size <= self.max_size or self.block_bytes < 1:
            raise ValueError("need 0 < min_size <= max_size and block_bytes >= 1")
        if not (0 <= self.read_bias <= 10 and 0 <= self.create_bias <= 10):
            raise ValueError("read_bias and create_bias are out of 10")


def postmark(cfg: PostMarkConfig | None = None, *, rng=0):
    """Yield PostMark's operations: the initial pool, the transactions, then deleting what is left."""
    cfg = cfg or PostMarkConfig()
    gen = make_rng(rng)
    sizes, next_id = {}, 0

    def create():
        nonlocal next_id
        size = int(gen.integers(cfg.min_size, cfg.max_size + 1))
        fid, next_id = next_id, next_id + 1
        sizes[fid] = size
        yield ("create", fid, size)
        for off in range(0, size, cfg.block_bytes):
            yield ("write", fid, off, min(cfg.block_bytes, size - off))
        yield ("close", fid)

    for _ in range(cfg.files):
        yield from create()
    for _ in range(cfg.transactions):
        if sizes:
            fid = list(sizes)[int(gen.integers(len(sizes)))]
            if gen.integers(10) < cfg.read_bias:  # read the whole file, a block at a time
                for off in range(0, sizes[fid], cfg.block_bytes):
                    yield ("read", fid, off, min(cfg.block_bytes, sizes[fid] - off))
            else:
                n = int(gen.integers(cfg.min_size, cfg.max_size + 1))
                for off in range(0, n, cfg.block_bytes):
                    yield ("append", fid, min(cfg.block_bytes, n - off))
                sizes[fid] += n
        if gen.integers(10) < cfg.create_bias or not sizes:
            yield from create()
        else:
            fid = list(sizes)[int(gen.integers(len(sizes)))]
            del sizes[fid]
            yield ("delete", fid)
    for fid in list(sizes):
        yield ("delete", fid)


IOZONE_TESTS = ("write", "rewrite", "read", "reread", "random_read", "random_write")


def iozone(test: str, file_bytes: int, record_bytes: int, *, rng=0):
    """Yield the requests of one Iozone test on one file (``-i`` 0, 1 or 2)."""
    if test not in IOZONE_TESTS:
        raise ValueError(f"test must be one of {IOZONE_TESTS}, got {test!r}")
    if record_bytes < 1 or file_bytes < record_bytes:
        raise ValueError("need record_bytes >= 1 and file_bytes >= record_bytes")
    records = file_bytes // record_bytes
    order = np.arange(records)
    if test.startswith("random"):
        order = make_rng(rng).permutation(records)
    kind = "write" if test in ("write", "rewrite", "random_write") else "read"
    if test == "write":
        yield ("create", 0, 0)
    for k in order:
        yield (kind, 0, int(k) * record_bytes, record_bytes)


def untar(files, *, buffer_bytes: int = 10_240):
    """Yield the operations of extracting ``files`` ((path, size) in archive order): a directory
    made the first time a path needs it, each file created, written ``buffer_bytes`` at a time, closed."""
    if buffer_bytes < 1:
        raise ValueError(f"buffer_bytes must be >= 1, got {buffer_bytes!r}")
    made = set()
    for fid, (path, size) in enumerate(files):
        parts = Path(path).parts[:-1]
        for depth in range(1, len(parts) + 1):
            d = "/".join(parts[:depth])
            if d not in made:
                made.add(d)
                yield ("mkdir", d)
        yield ("create", fid, int(size))
        for off in range(0, int(size), buffer_bytes):
            yield ("write", fid, off, min(buffer_bytes, int(size) - off))
        yield ("close", fid)


@dataclass
class Namespace:
    """A directory tree: each directory's subdirectories and files (name -> size in bytes)."""

    dirs: dict = field(default_factory=dict)   # path -> list of child directory paths
    files: dict = field(default_factory=dict)  # path -> {name: size}

    @property
    def file_count(self) -> int:
        return sum(len(f) for f in self.files.values())

    def paths(self):
        """Every file's path and size, directory by directory (depth first, sorted)."""
        stack = [""]
        while stack:
            d = stack.pop()
            for name, size in sorted(self.files.get(d, {}).items()):
                yield (f"{d}/{name}" if d else name), size
            stack.extend(sorted(self.dirs.get(d, []), reverse=True))

    @classmethod
    def generate(cls, files: int, *, files_per_dir: float = 20.0, subdirs_per_dir: float = 4.0,
                 size_median: int = 4096, size_sigma: float = 1.8, rng=0) -> "Namespace":
        """A tree of ``files`` files: each directory gets a Poisson number of files and of
        subdirectories (breadth first), file sizes lognormal around ``size_median``. The directories
        still queued when the last file is placed stay empty, so the tree's files per directory
        overall come out below ``files_per_dir``."""
        if files < 0 or files_per_dir <= 0 or subdirs_per_dir <= 0:
            raise ValueError("files must be >= 0 and the per-directory means > 0")
        gen = make_rng(rng)
        ns, queue, made = cls(), deque([""]), 0
        while made < files:  # every directory has at least one subdirectory, so the queue never empties
            d = queue.popleft()
            k = min(int(gen.poisson(files_per_dir)), files - made)
            sizes = np.exp(np.log(size_median) + size_sigma * gen.standard_normal(k)).astype(np.int64)
            ns.files[d] = {f"f{made + i}": int(s) for i, s in enumerate(sizes)}
            made += k
            n_kids = max(1, int(gen.poisson(subdirs_per_dir)))
            kids = [f"{d}/d{len(ns.dirs)}_{j}" if d else f"d{len(ns.dirs)}_{j}" for j in range(n_kids)]
            ns.dirs[d] = ns.dirs.get(d, []) + kids
            queue.extend(kids)
        return ns

    @classmethod
    def walk(cls, root, *, limit: int | None = None) -> "Namespace":
        """The tree under a real directory (sizes from lstat; symbolic links not followed)."""
        root = Path(root)
        if not root.is_dir():
            raise ValueError(f"{root} is not a directory")
        ns, count = cls(), 0
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            rel = "" if rel == "." else rel
            ns.dirs[rel] = [os.path.join(rel, d) if rel else d for d in sorted(dirnames)]
            sizes = {}
            for name in filenames:
                try:
                    sizes[name] = os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    continue
                count += 1
                if limit is not None and count >= limit:
                    break
            ns.files[rel] = sizes
            if limit is not None and count >= limit:
                break
        return ns
