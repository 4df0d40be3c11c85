"""The period hardware the papers measured on. Every number carries its source.

Sources are written ``kind: where``; kinds are listed in
:data:`pysim.hw.sourced.SOURCE_KINDS`. Two papers on the same machine share
one record. Look entries up with :func:`get`.
"""
from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass, field

from pysim.hw.disk import DiskSpec
from pysim.hw.memory import CacheLevel
from pysim.hw.net import Ethernet
from pysim.hw.sourced import check_sources, frozen_sources
from pysim.units import KiB, MB, MHz, MiB, ms


@dataclass(frozen=True)
class Machine:
    """A computer as a paper describes it."""

    name: str
    cpu: str
    clock_hz: float
    memory_bytes: int | None = None
    caches: tuple = ()
    tlb_entries: int | None = None
    tlb_page_bytes: tuple | None = None
    tlb_miss_cycles: float | None = None
    nic: str | None = None
    disk: DiskSpec | None = None
    used_by: tuple = ()
    sources: types.MappingProxyType = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "sources", frozen_sources(self.sources))
        check_sources(self)


ULTRASTAR_73LZX_36GB = DiskSpec(
    name="IBM Ultrastar 73LZX (36.7 GB)",
    rpm=10_000,
    cylinders=23_640,
    heads=6,
    # 11 zones, 668 sectors/track outside to 342 inside: media rate 57 to 29.2 MB/s at 10k rpm
    zones=tuple((i * 2149, round(668 - i * (668 - 342) / 10)) for i in range(11)),
    track_to_track_s=0.5 * ms,
    average_seek_s=4.9 * ms,
    full_stroke_s=10.5 * ms,
    head_switch_s=0.5 * ms,
    overhead_s=0.3 * ms,
    bus_bytes_per_s=160 * MB,
    buffer_bytes=4 * MiB,
    sources={
        "rpm": "paper: fsl02_purohit §4.1 (10,000 RPM)",
        "cylinders": "derived: 36.7 GB / (6 heads x mean 505 sectors x 512 B)",
        "heads": "assumed: 3 platters for the 36.7 GB model of the family",
        "zones": "assumed: 11 zones (as the 36LZX), sectors per track from the family's 29.2-57 MB/s media rate",
        "track_to_track_s": "assumed: 0.5 ms, typical 10k rpm SCSI of 2001",
        "average_seek_s": "datasheet: Ultrastar family read seek 4.7-4.9 ms (146Z10 spec 4.7; 36LZX 4.9)",
        "full_stroke_s": "datasheet: Ultrastar 146Z10 spec, full stroke read 10.5 ms typical",
        "head_switch_s": "assumed: equal to the track-to-track seek",
        "overhead_s": "assumed: SCSI command overhead of about 0.3 ms",
        "bus_bytes_per_s": "standard: Ultra160 SCSI, 160 MB/s",
        "buffer_bytes": "assumed: 4 MB segmented buffer, typical of the family",
        "sector_bytes": "standard: 512-byte sectors",
    },
)

PA8000_180 = Machine(
    name="HP 9000 PA-8000 180 MHz", cpu="HP PA-8000", clock_hz=180 * MHz,
    tlb_entries=96, tlb_page_bytes=tuple(4 * KiB * 4 ** i for i in range(8)), tlb_miss_cycles=70,
    used_by=("atc98_subramanian",),
    sources={"clock_hz": "paper: atc98_subramanian §9 (180 MHz PA-8000)",
             "tlb_entries": "paper: atc98_subramanian §2 (96-entry unified, fully associative)",
             "tlb_page_bytes": "paper: atc98_subramanian §2 (4 KB to 64 MB in powers of 4)",
             "tlb_miss_cycles": "paper: atc98_subramanian Table 2 (70 cycles average miss handling)"},
)

SGI_INDY_R4400 = Machine(
    name="SGI Indy (R4400SC 150 MHz)", cpu="MIPS R4400", clock_hz=150 * MHz, used_by=("atc98_hjalmtysson",),
    sources={"clock_hz": "assumed: §5.1 names an SGI Indy only; Indys shipped with 100-200 MHz R4000/R4400, "
                         "100-133 MHz R4600 and 150-180 MHz R5000 processors. Only the times in nanoseconds "
                         "depend on the clock, never the overheads"},
)

PENTIUM_PRO_200 = Machine(
    name="Pentium Pro 200 MHz", cpu="Intel Pentium Pro", clock_hz=200 * MHz,
    used_by=("atc98_hawblitzel", "atc98_liedtke", "atc98_bruno", "atc98_ismert", "atc98_fiuczynski"),
    sources={"clock_hz": "datasheet: Intel Pentium Pro processor at 150, 166, 180 and 200 MHz (1995)"},
)

ULTRASPARC_167 = Machine(
    name="Sun UltraSPARC 167 MHz", cpu="Sun UltraSPARC-I", clock_hz=167 * MHz, used_by=("atc98_ghormley",),
    sources={"clock_hz": "paper: atc98_ghormley §3.3 (a 167MHz UltraSPARC running Solaris 2.5.1)"},
)

ETHERNET_10 = Ethernet()  # IEEE 802.3 10 Mbit/s; see pysim.hw.net.Ethernet
FDDI_100_BITS_PER_S = 100e6

CATALOG: dict[str, Machine] = {m.name: m for m in [
    Machine(
        name="DECstation 5000/200", cpu="MIPS R3000", clock_hz=25 * MHz,
        caches=(CacheLevel("L1I", 64 * KiB), CacheLevel("L1D", 64 * KiB)),
        nic="Lance (packet buffers in device memory)", used_by=("sosp93_maeda",),
        sources={"clock_hz": "paper: sosp93_maeda §4 (25 MHz R3000)",
                 "caches": "datasheet: DECstation 5000/200, 64 KB I + 64 KB D direct-mapped"},
    ),
    Machine(
        name="Gateway 486/33", cpu="Intel i486", clock_hz=33 * MHz,
        caches=(CacheLevel("L1", 8 * KiB, 16, 4),),
        nic="3Com 3C503 (8-bit transfers)", used_by=("sosp93_maeda",),
        sources={"clock_hz": "paper: sosp93_maeda §4 (33 MHz i486)",
                 "caches": "datasheet: i486, 8 KB unified 4-way, 16-byte lines"},
    ),
    Machine(
        name="Pentium 4 1.7 GHz", cpu="Intel Pentium 4 (Willamette)", clock_hz=1700 * MHz,
        memory_bytes=128 * MiB,
        caches=(CacheLevel("L1D", 8 * KiB, 64, 4), CacheLevel("L2", 256 * KiB, 64, 8)),
        disk=ULTRASTAR_73LZX_36GB, used_by=("fsl02_purohit",),
        sources={"clock_hz": "paper: fsl02_purohit §4.1", "memory_bytes": "paper: fsl02_purohit §4.1 (128 MB)",
                 "caches": "datasheet: Pentium 4 Willamette, 8 KB L1D, 256 KB L2"},
    ),
    Machine(
        name="AlphaStation 500/400", cpu="Alpha 21164", clock_hz=400 * MHz, memory_bytes=192 * MiB,
        caches=(CacheLevel("L1I", 8 * KiB), CacheLevel("L1D", 8 * KiB), CacheLevel("L2", 96 * KiB),
                CacheLevel("L3", 2 * MiB)),
        used_by=("atc98_banga",),
        sources={"clock_hz": "paper: atc98_banga §3 (400 MHz 21164)", "memory_bytes": "paper: atc98_banga §3 (192 MB)",
                 "caches": "paper: atc98_banga §3 (8 KB I, 8 KB D, 96 KB L2, 2 MB L3)"},
    ),
    PA8000_180,
    # the same processor at a lower clock: only the clock and its source differ
    dataclasses.replace(PA8000_180, name="HP 9000 PA-8000 160 MHz", clock_hz=160 * MHz,
                        sources={**PA8000_180.sources,
                                 "clock_hz": "paper: atc98_subramanian §9 (Verilog-XL on a 160 MHz PA-8000)"}),
]}

def get(name: str) -> Machine:
    """The catalog entry called ``name``; KeyError lists the entries otherwise."""
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(f"no machine {name!r} in the catalog; entries: {sorted(CATALOG)}") from None
