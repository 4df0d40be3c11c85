"""Units. Internally: seconds, bytes, per-second rates. Convert at the edges.

Multiply a number by a unit to get the internal value (``5 * ms`` is 0.005 s);
divide to print (``t / us``). Decimal prefixes for rates and storage sold in
MB/GB, binary ones where the paper counts in powers of two (KiB, MiB).
"""
s = 1.0
ms = 1e-3
us = 1e-6
ns = 1e-9
minute = 60.0

B = 1
KB = 1000
MB = 1000 ** 2
GB = 1000 ** 3
KiB = 1024
MiB = 1024 ** 2
GiB = 1024 ** 3

bit = 1 / 8  # bytes
kbit_per_s = 1e3 / 8  # bytes per second
Mbit_per_s = 1e6 / 8
Gbit_per_s = 1e9 / 8
MB_per_s = 1e6
MiB_per_s = float(MiB)

Hz = 1.0
kHz = 1e3
MHz = 1e6
GHz = 1e9


def rpm_to_period_s(rpm: float) -> float:
    """Seconds per revolution at ``rpm`` revolutions per minute."""
    if not rpm > 0:
        raise ValueError(f"rpm must be > 0, got {rpm!r}")
    return 60.0 / rpm


def cycles_to_s(cycles: float, clock_hz: float) -> float:
    """Seconds taken by ``cycles`` at ``clock_hz``."""
    if not clock_hz > 0:
        raise ValueError(f"clock_hz must be > 0, got {clock_hz!r}")
    return cycles / clock_hz
