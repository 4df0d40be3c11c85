"""NFS operations turned into server work, by protocol version, and the LADDIS operation mix.

:func:`operations` gives, for each NFS operation of a version, what the
server does for it (an :class:`OpWork`): the blocks it may have to read
(attributes, directories, data; a cache decides which are misses), the
blocks it writes, and how many of those writes must reach stable storage
before it replies. The rules come from the protocol specifications:

* NFSv2 (RFC 1094): every operation that modifies the file system is on
  stable storage before the reply, data and metadata alike.
* NFSv3 (RFC 1813): a WRITE may be UNSTABLE (the server replies once the
  data is in its memory) and a later COMMIT makes it stable; namespace
  changes stay synchronous.
* NFSv4 (RFC 7530): operations travel inside COMPOUND requests (PUTFH, the
  operation, GETATTR), so each costs more decoding; writes as in v3.

:data:`LADDIS_MIX` is the operation mix of the LADDIS (SPEC SFS 1.0)
benchmark; :func:`mix_average` weighs any per-operation quantity by a mix.
"""
from __future__ import annotations

import types
from dataclasses import dataclass

from pysim.sw.costs import Recipe

VERSIONS = (2, 3, 4)

#: LADDIS (SPEC SFS 1.0) operation mix, percent. Source: Wittle and Keith, "LADDIS: The Next Generation
#: in NFS File Server Benchmarking", USENIX Summer 1993, Table 1 (the NFSv2 mix).
LADDIS_MIX = types.MappingProxyType({
    "lookup": 34, "read": 22, "write": 15, "getattr": 13, "readlink": 8, "readdir": 3, "create": 2,
    "remove": 1, "fsstat": 1, "setattr": 1,
})


@dataclass(frozen=True)
class OpWork:
    """What the server does for one operation."""

    cpu: Recipe          # operations priced on a CpuCostModel: "rpc", "decode_op", "vfs", "copy" bytes
    reads: tuple         # kinds of block it reads ("inode", "dir", "data", "indirect"), each maybe cached
    writes: tuple        # kinds of block it modifies
    stable_writes: int   # of those, how many reach the disk before the reply
    data_bytes: int = 0  # payload moved (read or written)


def operations(version: int, *, transfer_bytes: int = 8192) -> dict:
    """Every modelled operation of NFS ``version`` (2, 3 or 4), with ``transfer_bytes`` per read or write.

    Raises
    ------
    ValueError
        On an unknown version.
    """
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, got {version!r}")
    if transfer_bytes < 1:
        raise ValueError(f"transfer_bytes must be >= 1, got {transfer_bytes!r}")
    decode = {2: 1, 3: 1, 4: 3}[version]  # a v4 COMPOUND carries PUTFH, the operation and GETATTR
    sync = version == 2

    def cpu(nbytes=0):
        return Recipe(ops={"rpc": 1, "decode_op": decode, "vfs": 1}, nbytes={"copy": nbytes} if nbytes else {})

    ops = {
        "null": OpWork(Recipe(ops={"rpc": 1}), (), (), 0),
        "getattr": OpWork(cpu(), ("inode",), (), 0),
        "setattr": OpWork(cpu(), ("inode",), ("inode",), 1),
        "lookup": OpWork(cpu(), ("dir", "inode"), (), 0),
        "readlink": OpWork(cpu(), ("inode", "data"), (), 0),
        "read": OpWork(cpu(transfer_bytes), ("inode", "data"), (), 0, transfer_bytes),
        "write": OpWork(cpu(transfer_bytes), ("inode", "data"), ("data", "inode"), 2 if sync else 0,
                        transfer_bytes),
        "create": OpWork(cpu(), ("dir", "inode"), ("dir", "inode"), 2),
        "remove": OpWork(cpu(), ("dir", "inode"), ("dir", "inode"), 2),
        "readdir": OpWork(cpu(), ("dir",), (), 0),
        "fsstat": OpWork(cpu(), (), (), 0),
    }
    if version >= 3:
        ops["commit"] = OpWork(cpu(), ("inode",), (), 2)  # the unstable data and its inode, made stable
        ops["access"] = OpWork(cpu(), ("inode",), (), 0)
    return ops


def mix_average(mix, per_op) -> float:
    """The mix-weighted mean of ``per_op[op]`` (a mapping or a function of the operation name).

    Raises
    ------
    KeyError
        If the mix names an operation ``per_op`` does not cover.
    """
    total = sum(mix.values())
    if not total > 0:
        raise ValueError("the mix has no operations")
    get = per_op if callable(per_op) else per_op.__getitem__
    return sum(share * get(op) for op, share in mix.items()) / total


def stable_writes_per_op(version: int, mix=LADDIS_MIX) -> float:
    """Synchronous disk writes per operation of ``mix`` under ``version`` (the COMMITs that v3 and v4
    clients send for their unstable writes are part of the mix if the caller puts them there)."""
    ops = operations(version)
    return mix_average(mix, lambda op: ops[op].stable_writes)
