"""B-tree page layout: how many entries a page holds, and how many pages and levels a tree needs.

A page of ``page_bytes`` loses a header, a trailer (a checksum or a
per-page crypto area) and keeps entries, each an item plus a slot in the
page's index; pages are filled to ``fill`` (bulk loading fills them, random
inserts leave them about 69% full). Interior entries are a key and a child
pointer, leaf entries a key and a value (or a pointer to an overflow page
when the item is too big to keep four to a page).

>>> lay = PageLayout(page_bytes=4096, header_bytes=26, slot_bytes=2, pointer_bytes=4)
>>> lay.fanout(key_bytes=8)
290
>>> shape(lay, 1_000_000, key_bytes=8, value_bytes=100).levels
3
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PageLayout:
    """The bytes of one page: header, trailer, per-entry slot, child pointer; the fill factor."""

    page_bytes: int
    header_bytes: int
    slot_bytes: int = 2
    pointer_bytes: int = 4
    trailer_bytes: int = 0
    entry_overhead_bytes: int = 0  # per item, beyond key and value (lengths, flags)
    fill: float = 1.0

    def __post_init__(self):
        if self.page_bytes <= self.header_bytes + self.trailer_bytes:
            raise ValueError(f"a {self.page_bytes}-byte page has no room after its header and trailer")
        if not 0 < self.fill <= 1:
            raise ValueError(f"fill must be in (0, 1], got {self.fill!r}")
        for name in ("header_bytes", "slot_bytes", "pointer_bytes", "trailer_bytes", "entry_overhead_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")

    @property
    def usable_bytes(self) -> float:
        return (self.page_bytes - self.header_bytes - self.trailer_bytes) * self.fill

    def _per_page(self, item_bytes: int) -> int:
        n = int(self.usable_bytes // (item_bytes + self.slot_bytes + self.entry_overhead_bytes))
        if n < 2:
            raise ValueError(f"an item of {item_bytes} bytes leaves fewer than two per {self.page_bytes}-byte page")
        return n

    def fanout(self, key_bytes: int) -> int:
        """Children per interior page."""
        return self._per_page(key_bytes + self.pointer_bytes)

    def leaf_capacity(self, key_bytes: int, value_bytes: int) -> int:
        """Records per leaf page; a value too large to keep four to a page moves to overflow pages
        and leaves a pointer behind."""
        if (key_bytes + value_bytes + self.slot_bytes + self.entry_overhead_bytes) * 4 > self.usable_bytes:
            value_bytes = self.pointer_bytes
        return self._per_page(key_bytes + value_bytes)

    def overflow_pages(self, key_bytes: int, value_bytes: int) -> int:
        """Overflow pages per record (0 when the value stays in the leaf)."""
        if (key_bytes + value_bytes + self.slot_bytes + self.entry_overhead_bytes) * 4 <= self.usable_bytes:
            return 0
        return math.ceil(value_bytes / (self.page_bytes - self.header_bytes - self.trailer_bytes))


@dataclass(frozen=True)
class Shape:
    """A tree's pages: leaves, interior pages per level (bottom up), overflow pages, levels."""

    leaves: int
    interior: tuple
    overflow: int

    @property
    def levels(self) -> int:
        return 1 + len(self.interior)

    @property
    def pages(self) -> int:
        return self.leaves + sum(self.interior) + self.overflow


def shape(layout: PageLayout, records: int, *, key_bytes: int, value_bytes: int) -> Shape:
    """The tree holding ``records`` records."""
    if records < 0:
        raise ValueError(f"records must be >= 0, got {records!r}")
    leaves = max(1, math.ceil(records / layout.leaf_capacity(key_bytes, value_bytes)))
    fan, interior, level = layout.fanout(key_bytes), [], leaves
    while level > 1:
        level = math.ceil(level / fan)
        interior.append(level)
    return Shape(leaves, tuple(interior), records * layout.overflow_pages(key_bytes, value_bytes))
