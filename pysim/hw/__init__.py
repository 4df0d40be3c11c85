"""Hardware: component models (CPU costs, caches and TLBs, disks, networks) and the period catalog."""
from pysim.hw.catalog import CATALOG, get
from pysim.hw.cpu import CpuCostModel
from pysim.hw.disk import Disk, DiskSpec
from pysim.hw.memory import TLB, Cache
from pysim.hw.net import Ethernet

__all__ = ["CATALOG", "get", "CpuCostModel", "Cache", "TLB", "Disk", "DiskSpec", "Ethernet"]
