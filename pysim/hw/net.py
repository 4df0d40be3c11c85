"""Ethernet framing and timing (the arithmetic runs in C, pysim._native.eth_timing)."""
from __future__ import annotations

from dataclasses import dataclass

from pysim import _native


@dataclass(frozen=True)
class Ethernet:
    """An Ethernet segment. Defaults: IEEE 802.3 10 Mbit/s (10BASE-T/10BASE5).

    Sizes in bytes; header is destination, source and type (14), FCS 4,
    minimum frame 64 (header + payload + FCS), preamble with start delimiter 8,
    inter-frame gap 12 (9.6 us at 10 Mbit/s).
    """

    bits_per_s: float = 10e6
    header_bytes: int = 14
    fcs_bytes: int = 4
    min_frame_bytes: int = 64
    max_payload: int = 1500
    preamble_bytes: int = 8
    gap_bytes: int = 12
    propagation_s: float = 0.0

    def __post_init__(self):
        if not self.bits_per_s > 0:
            raise ValueError(f"bits_per_s must be > 0, got {self.bits_per_s!r}")
        if self.max_payload < 1:
            raise ValueError(f"max_payload must be >= 1, got {self.max_payload!r}")
        if not self.propagation_s >= 0:
            raise ValueError(f"propagation_s must be >= 0, got {self.propagation_s!r}")

    def as_tuple(self) -> tuple:
        """The parameters in the order the C core takes them."""
        return (float(self.bits_per_s), self.header_bytes, self.fcs_bytes, self.min_frame_bytes,
                self.max_payload, self.preamble_bytes, self.gap_bytes, float(self.propagation_s))

    def timing(self, nbytes: int) -> dict:
        """Frames, first-frame bytes and seconds, and whole-message occupancy for ``nbytes``."""
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")
        return _native.eth_timing(self.as_tuple(), int(nbytes))

    def frame_time_s(self, payload: int) -> float:
        """Seconds on the wire of one frame with ``payload`` bytes (no preamble or gap)."""
        if not 0 <= payload <= self.max_payload:
            raise ValueError(f"payload must be in [0, {self.max_payload}] bytes, got {payload!r}")
        return self.timing(payload)["first_frame_s"]

    def message_occupancy_s(self, nbytes: int) -> float:
        """Seconds the medium is busy sending ``nbytes`` (all frames, preambles and gaps)."""
        return self.timing(nbytes)["message_occupancy_s"]
