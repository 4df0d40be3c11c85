"""Record files of network-traffic recorders, in the shapes a stream-query engine scans.

Two layouts, both little-endian:

* ATM cells (:func:`atm_records`): fixed 64-byte records, an 8-byte timestamp
  (ns), the 53-byte cell (the 5-byte header packs GFC 4 bits, VPI 8, VCI 16,
  payload type 3, CLP 1, HEC 8; then 48 payload bytes) and 3 pad bytes.
* Frame relay (:func:`frame_relay_records`): variable-length records, a
  16-byte header (timestamp u64 ns, frame length u16, message type u8, T1
  interface u8, channel u8, IP protocol u8, 2 pad bytes) followed by the
  frame; frame lengths are drawn so the records' mean size is ``mean_bytes``.

:func:`frame_relay_summary` walks a frame-relay file the way a query that
counts packets and sums lengths does, as the reference for other scanners.
"""
from __future__ import annotations

import numpy as np

from pysim.rng import make_rng

ATM_RECORD = np.dtype([("ts", "<u8"), ("cell", "u1", 53), ("pad", "u1", 3)])
FR_HEADER = np.dtype([("ts", "<u8"), ("length", "<u2"), ("msg_type", "u1"), ("interface", "u1"),
                      ("channel", "u1"), ("protocol", "u1"), ("pad", "u1", 2)])


def atm_records(n: int, *, vcis: int = 64, rng=0) -> bytes:
    """``n`` 64-byte ATM records on ``vcis`` virtual circuits (VPI 0), timestamps 2.7 us apart (an
    OC-3 cell time)."""
    if n < 0 or vcis < 1:
        raise ValueError("n must be >= 0 and vcis >= 1")
    gen = make_rng(rng)
    rec = np.zeros(n, ATM_RECORD)
    rec["ts"] = np.arange(n, dtype=np.uint64) * np.uint64(2726)
    vci = gen.integers(32, 32 + vcis, size=n)
    # the first 32 bits: GFC 31-28, VPI 27-20 (0 here), VCI 19-4, payload type 3-1 (user data, with the
    # end-of-frame bit set at random), CLP 0
    header = (vci.astype(np.uint64) << np.uint64(4)) | (gen.integers(0, 2, size=n).astype(np.uint64) << 1)
    for k in range(4):  # GFC/VPI/VCI/PT/CLP in the first four bytes, big-endian as on the wire
        rec["cell"][:, k] = (header >> np.uint64(24 - 8 * k)) & np.uint64(0xFF)
    rec["cell"][:, 5:] = gen.integers(0, 256, size=(n, 48), dtype=np.uint8)
    return rec.tobytes()


def atm_vci(data: bytes) -> np.ndarray:
    """The VCI of every record of an ATM record file (the bit field a query reconstructs)."""
    cells = np.frombuffer(data, ATM_RECORD)["cell"].astype(np.uint32)
    return ((cells[:, 1] & 0x0F) << 12) | (cells[:, 2] << 4) | (cells[:, 3] >> 4)


def frame_relay_records(target_bytes: int, *, mean_bytes: float = 290.0, rng=0) -> bytes:
    """Frame-relay records of about ``target_bytes`` in all, mean record size ``mean_bytes`` (header
    included): frame lengths exponential above a 40-byte minimum, capped at 4,096."""
    if target_bytes < 0 or not mean_bytes > FR_HEADER.itemsize + 40:
        raise ValueError(f"target_bytes must be >= 0 and mean_bytes > {FR_HEADER.itemsize + 40}")
    gen = make_rng(rng)
    n = int(target_bytes // mean_bytes)
    lengths = np.minimum(40 + gen.exponential(mean_bytes - FR_HEADER.itemsize - 40, size=n), 4096).astype(np.int64)
    head = np.zeros(n, FR_HEADER)
    head["ts"] = np.cumsum(gen.exponential(50_000, size=n)).astype(np.uint64)
    head["length"] = lengths
    head["msg_type"] = gen.choice([1, 2, 3, 8], size=n, p=[0.85, 0.05, 0.05, 0.05])
    head["interface"] = gen.integers(0, 16, size=n)
    head["channel"] = gen.integers(0, 24, size=n)
    head["protocol"] = gen.choice([6, 17, 1], size=n, p=[0.8, 0.15, 0.05])
    out = bytearray()
    payload = gen.integers(0, 256, size=int(lengths.sum()), dtype=np.uint8).tobytes()
    pos = 0
    for h, k in zip(head, lengths, strict=True):
        out += h.tobytes()
        out += payload[pos:pos + k]
        pos += k
    return bytes(out)


def frame_relay_summary(data: bytes) -> dict:
    """Records, frame bytes, and records per message type, by walking the headers."""
    pos, n, total, types = 0, 0, 0, {}
    size = FR_HEADER.itemsize
    while pos + size <= len(data):
        h = np.frombuffer(data, FR_HEADER, count=1, offset=pos)[0]
        length = int(h["length"])
        n += 1
        total += length
        types[int(h["msg_type"])] = types.get(int(h["msg_type"]), 0) + 1
        pos += size + length
    if pos != len(data):
        raise ValueError(f"the file ends inside a record at byte {pos}")
    return {"records": n, "frame_bytes": total, "by_type": types}
