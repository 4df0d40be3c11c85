"""Mechanism checks of the page-size model (atc98_subramanian)."""
import dataclasses

import numpy as np
import pytest

from pysim.models import atc98_subramanian as m

P = m.Params()
HEAP = m.Region("heap", 100, True, True)
TEXT = m.Region("text", 100)
LIB = m.Region("shlib", 100, False)


def test_page_choice_takes_the_largest_aligned_block_inside_the_region():
    assert m.choose_page(256 * 1024, 0, TEXT, 100, 1e9) == 256 * 1024    # pages 0-63 fit
    assert m.choose_page(256 * 1024, 70, TEXT, 100, 1e9) == 64 * 1024    # 64-127 does not; 64-79 does
    assert m.choose_page(256 * 1024, 97, TEXT, 100, 1e9) == 16 * 1024    # the block 96-99 fits
    assert m.choose_page(256 * 1024, 97, TEXT, 99, 1e9) == 4096          # in 99 pages only the page itself
    assert m.choose_page(256 * 1024, 0, LIB, 100, 1e9) == 4096           # not chatr'ed


def test_hint_is_lowered_while_free_memory_is_below_four_times_the_size():
    # 5 MB free: a 4 MB hint is lowered to 1 MB, as in the paper's example
    assert m.choose_page(4 << 20, 0, m.Region("big", 4096), 4096, 5 * 2 ** 20) == 1 << 20


def test_layout_covers_every_page_and_heap_rounds_up_to_the_hint():
    bench = m.BENCHMARKS["apsi"]
    for hint in m.SIZES.values():
        mappings, mapped = m.layout(bench, hint, P)
        for r in bench.regions:
            covered = sum(size // m.PAGE for name, _, size in mappings if name == r.name)
            assert covered == mapped[r.name] >= r.pages
        assert mapped["heap"] - 60 < max(hint // m.PAGE, 1)  # waste below one hint-sized step


def test_larger_pages_never_raise_the_miss_count_on_the_same_trace():
    misses = [m.run("vortex", s, P)["tlb_misses_thousands"] for s in m.TABLE3_SIZES]
    assert misses == sorted(misses, reverse=True)


def test_tlb_time_is_misses_times_the_miss_cost():
    r = m.run("compress", "16KB", P)
    assert r["tlb_time_s"] == pytest.approx(r["tlb_misses_thousands"] * 1000 * 70 / 180e6)


def test_memory_grows_with_the_page_size_and_only_by_rounding():
    mem = [m.run("Verilog-XL", s, P)["mem_usage_4KB_pages"] for s in m.TABLE5_SIZES]
    assert mem == sorted(mem) and mem[0] == sum(r.pages for r in m.BENCHMARKS["Verilog-XL"].regions)


def test_page_sizes_for_maps_addresses_through_the_layout():
    bench = m.BENCHMARKS["apsi"]
    mappings, _ = m.layout(bench, 64 * 1024, P)
    addrs, bases = m.trace(bench, 1.0, dataclasses.replace(P, trace_length=5000), rng=1)
    sizes = m.page_sizes_for(addrs, bases, mappings)
    lookup = {(n, s): z for n, s, z in mappings}
    for a, z in zip(addrs[:200], sizes[:200]):
        name = max((n for n in bases if bases[n] <= a), key=bases.get)
        page = int(a - bases[name]) // m.PAGE
        start = max(s for (n, s) in lookup if n == name and s <= page)
        assert lookup[(name, start)] == z


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="benchmark"):
        m.run("gcc", "4KB", P)
    with pytest.raises(ValueError, match="chatr"):
        m.run("apsi", "8KB", P)
    with pytest.raises(ValueError, match="uniform_fraction"):
        dataclasses.replace(P, uniform_fraction=1.5)
    assert np.isfinite(m.run("apsi", "4KB", P)["total_s"])
