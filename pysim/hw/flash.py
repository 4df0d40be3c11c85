"""Non-volatile pages as EEPROM and flash behave: programming can only clear bits (1 -> 0), erasing
sets every bit of an erase unit back to 1, each costs time, and each erase wears the unit.

A write of new bytes over old ones needs no erase when every bit it sets to 1 is already 1, that is
when ``new & ~old == 0`` (the new value lies below the old in the AND lattice). Otherwise the unit is
erased first and the bytes of the unit that the write does not touch are programmed back, as a
card's EEPROM driver or a flash translation layer does. :class:`NvPages` counts programmed bytes,
erases and wear per unit, and the time they took from the device's timing.

>>> nv = NvPages(NvTiming(erase_unit_bytes=64, program_s_per_byte=1e-4, erase_s=3e-3), size_bytes=256)
>>> nv.write(0, b"\\x0f" * 8)  # from the erased 0xff: bits only cleared, no erase
0.0008
>>> nv.write(0, b"\\x1f")      # sets a bit that is 0: erase, program the other 7 back, then this one
0.0038
>>> nv.erases_total, int(nv.wear.max())
(1, 1)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ERASED = 0xFF


@dataclass(frozen=True)
class NvTiming:
    """A device's geometry and timing (from its datasheet)."""

    erase_unit_bytes: int        # EEPROM page or flash block: what one erase sets to 0xff
    program_s_per_byte: float    # programming time per byte written
    erase_s: float               # one erase of one unit
    program_setup_s: float = 0.0  # per write call (command, address, charge pump)
    endurance: int = 0           # erases a unit survives (0: unlimited)

    def __post_init__(self):
        if self.erase_unit_bytes < 1 or self.program_s_per_byte < 0 or self.erase_s < 0 \
                or self.program_setup_s < 0 or self.endurance < 0:
            raise ValueError(f"erase_unit_bytes >= 1 and non-negative times and endurance are needed: {self}")


class WornOut(RuntimeError):
    """An erase went past a unit's endurance."""


class NvPages:
    """``size_bytes`` of non-volatile memory, erased (0xff) at the start."""

    def __init__(self, timing: NvTiming, size_bytes: int):
        if size_bytes < 1 or size_bytes % timing.erase_unit_bytes:
            raise ValueError(f"size_bytes must be a positive multiple of the erase unit "
                             f"({timing.erase_unit_bytes}), got {size_bytes}")
        self.timing = timing
        self.data = np.full(size_bytes, ERASED, dtype=np.uint8)
        self.wear = np.zeros(size_bytes // timing.erase_unit_bytes, dtype=np.int64)
        self.bytes_programmed = 0
        self.writes = 0
        self.time_s = 0.0

    @property
    def erases_total(self) -> int:
        return int(self.wear.sum())

    def read(self, offset: int, length: int) -> bytes:
        self._check(offset, length)
        return self.data[offset:offset + length].tobytes()

    def needs_erase(self, offset: int, new: bytes) -> bool:
        """Whether writing ``new`` at ``offset`` would set a bit that is 0 now."""
        self._check(offset, len(new))
        old = self.data[offset:offset + len(new)]
        return bool(np.any(np.frombuffer(new, dtype=np.uint8) & ~old))

    def write(self, offset: int, new: bytes) -> float:
        """Write ``new`` at ``offset``; return the seconds it took (erases included)."""
        self._check(offset, len(new))
        t = self.timing
        unit = t.erase_unit_bytes
        new_arr = np.frombuffer(new, dtype=np.uint8)
        seconds, programmed = t.program_setup_s, 0
        first, last = offset // unit, (offset + len(new) - 1) // unit
        for u in range(first, last + 1):
            lo, hi = max(offset, u * unit), min(offset + len(new), (u + 1) * unit)
            chunk = new_arr[lo - offset:hi - offset]
            old = self.data[lo:hi]
            if np.any(chunk & ~old):
                if t.endurance and self.wear[u] >= t.endurance:
                    raise WornOut(f"unit {u} has had its {t.endurance} erases")
                kept = self.data[u * unit:(u + 1) * unit].copy()
                self.data[u * unit:(u + 1) * unit] = ERASED
                self.wear[u] += 1
                seconds += t.erase_s
                # the bytes of the unit outside the write are programmed back where they are not 0xff
                kept[lo - u * unit:hi - u * unit] = ERASED
                restore = int(np.count_nonzero(kept != ERASED))
                self.data[u * unit:(u + 1) * unit] = kept
                programmed += restore
            self.data[lo:hi] = chunk  # programming clears bits: erased or already a superset
            programmed += hi - lo
        seconds += programmed * t.program_s_per_byte
        self.bytes_programmed += programmed
        self.writes += 1
        self.time_s += seconds
        return round(seconds, 12)

    def erase(self, unit: int) -> float:
        """Erase one unit explicitly; return the seconds it took."""
        if not 0 <= unit < len(self.wear):
            raise ValueError(f"unit must be in [0, {len(self.wear)}), got {unit}")
        if self.timing.endurance and self.wear[unit] >= self.timing.endurance:
            raise WornOut(f"unit {unit} has had its {self.timing.endurance} erases")
        u = self.timing.erase_unit_bytes
        self.data[unit * u:(unit + 1) * u] = ERASED
        self.wear[unit] += 1
        self.time_s += self.timing.erase_s
        return self.timing.erase_s

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > len(self.data):
            raise ValueError(f"[{offset}, {offset + length}) is outside [0, {len(self.data)})")
