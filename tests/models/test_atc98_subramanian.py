"""Mechanism checks of the page-size model (atc98_subramanian)."""
import dataclasses
from collections import OrderedDict

import numpy as np
import pytest

from pysim.hw import TLB
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
    # 5 MB free: a 4 MB hint is lowered to 1 MB, as in the paper's example (§7.1)
    assert m.choose_page(4 << 20, 0, m.Region("big", 4096), 4096, 5 * 2 ** 20) == 1 << 20


def test_layout_covers_every_page_and_rounds_only_the_heap():
    bench = m.program("apsi", P)
    for hint in m.SIZES.values():
        mappings, mapped = m.layout(bench, hint, P)
        for r in bench.regions:
            covered = sum(size // m.PAGE for name, _, size in mappings if name == r.name)
            assert covered == mapped[r.name]
            step = hint // m.PAGE
            expected = -(-r.pages // step) * step if r.name == "heap" else r.pages  # hand calculation
            assert mapped[r.name] == expected


def test_memory_growth_is_the_heap_rounded_up_to_the_hint():
    # compress's heap is 8800 pages (its 8917 less 117 pages of other regions): at a 1 MB hint
    # (256 pages) it rounds up to 35 steps, 8960 pages, 160 more than at 4 KB
    row = m.run("compress", "1MB", P)
    assert row["mem_usage_4KB_pages"] - m.run("compress", "4KB", P)["mem_usage_4KB_pages"] == 160
    off = m.run("compress", "1MB", dataclasses.replace(P, heap_rounding=False))
    assert off["mem_usage_4KB_pages"] == P.compress_pages


def test_uniform_references_miss_as_one_minus_entries_over_pages():
    # independent uniform references to N pages through a fully associative LRU TLB of E entries:
    # the hit ratio is E/N (every page is equally likely to be among the E most recent)
    n_pages, entries = 400, 96
    bench = m.Benchmark("flat", (m.Region("heap", n_pages, True, True),), "heap", 180e6, ("4KB",))
    p = dataclasses.replace(P, trace_length=200_000, cluster_pages=1, uniform_fraction=1e-9)
    rate = m.simulate(bench, m.PAGE, 0.0, p.trace_length, p.uniform_fraction, p.cluster_pages, entries,
                      p.free_memory_bytes)[0]
    assert rate == pytest.approx(1 - entries / n_pages, abs=0.01)


def lru_misses(addrs, sizes, entries):
    """An obviously correct LRU TLB over (page base, size) translations, for the C one to match."""
    held, misses = OrderedDict(), 0
    for a, s in zip(addrs.tolist(), sizes.tolist()):
        key = next((k for k in held if k[1] == s and k[0] == a // s * s), None)
        if key is None:
            misses += 1
            key = (a // s * s, s)
            held[key] = True
            if len(held) > entries:
                held.popitem(last=False)
        held.move_to_end(key)
    return misses


def test_tlb_with_mixed_page_sizes_matches_a_python_lru(seed):
    bench = m.program("vortex", P)
    mappings, _ = m.layout(bench, 64 * 1024, P)
    addrs, bases = m.trace(bench, 1.0, dataclasses.replace(P, trace_length=4000, uniform_fraction=0.3),
                           rng=seed)
    sizes = m.page_sizes_for(addrs, bases, mappings)
    assert len(set(sizes.tolist())) > 1  # the trace really mixes page sizes
    got = TLB(16).run(addrs, sizes)["misses"]
    assert got == lru_misses(addrs, sizes, 16)


def test_page_sizes_for_maps_addresses_through_the_layout():
    bench = m.program("apsi", P)
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
    with pytest.raises(ValueError, match="apsi_data_pages"):
        dataclasses.replace(P, apsi_pages=500)  # 414 pages of data and 140 of the rest leave no heap
    assert np.isfinite(m.run("apsi", "4KB", P)["total_s"])


# --- compress: the LZW probe stream ---------------------------------------------------------

def lzw_decode(codes):
    """A textbook LZW decoder (dictionary of strings, CLEAR = 256, the KwKwK case), independent of
    the model's compress 4.0 transcription: decoding its codes must give back the text."""
    table = {i: bytes([i]) for i in range(256)}
    nxt, prev, out = 257, None, bytearray()
    for code in codes:
        if code == 256:
            table, nxt, prev = {i: bytes([i]) for i in range(256)}, 257, None
            continue
        entry = table[code] if code in table else table[prev] + table[prev][:1]
        out += entry
        if prev is not None and nxt < 1 << 16:
            table[nxt] = table[prev] + entry[:1]
            nxt += 1
        prev = code
    return bytes(out)


def sample_text(n, seed):
    gen = np.random.default_rng(seed)
    return m.markov_text(m.text_source(P.compress_text_skew, gen), 0, gen.random(n)) + 32


def test_lzw_codes_decode_to_the_text(seed):
    text = sample_text(300_000, seed)  # long enough to fill the table and clear it
    _, _, codes, packed = m.lzw_compress_refs(text, P.lzw_hash_entries)
    assert (codes == 256).any()
    assert lzw_decode(codes.tolist()) == text.tobytes()
    assert 0.3 < packed / text.size < 0.8


def test_compress_probes_cover_more_than_the_4kb_reach_and_less_than_the_16kb_one():
    # the cliff between 4 KB and 16 KB pages: the tables' pages the coder touches
    targets, offsets, _ = m.lzw_passes(800_000, P.compress_text_skew, P.lzw_hash_entries, 0)[0]
    bench = m.program("compress", P)
    addrs = m.lzw_addresses(targets, offsets, bench, P)
    tables = addrs[(targets == m.HTAB) | (targets == m.CODETAB)]
    assert np.unique(tables // 4096).size > P.tlb_entries
    assert np.unique(tables // 16384).size < P.tlb_entries // 2


def test_text_skew_gives_the_compressed_size_the_memory_use_implies():
    # derived, not fitted: LZW's ratio on the text is what the given 4 KB memory leaves for comp
    buf = m.compress_buffers(m.program("compress", P), P)
    ratio = m.lzw_passes(P.compress_sample_bytes, P.compress_text_skew, P.lzw_hash_entries, 0)[2]
    assert ratio == pytest.approx(buf["comp_bytes"] / buf["text_bytes"], rel=0.02)


def test_uncompress_references_are_one_output_byte_each():
    passes = m.lzw_passes(800_000, P.compress_text_skew, P.lzw_hash_entries, 0)
    targets, offsets, _ = passes[1]
    out = offsets[targets == m.NEW]
    assert out.size == 800_000 and (np.diff(out) == 1).all()  # written once each, in order


def test_uniform_probes_over_more_pages_than_entries_miss_as_one_minus_entries_over_pages(seed):
    # the closed form behind compress's 4 KB count: N pages probed uniformly through E LRU entries
    gen = np.random.default_rng(seed)
    n_pages, entries = 120, 96
    addrs = (gen.integers(0, n_pages, 300_000) * 4096).astype(np.uint64)
    tlb = m.tlb_for(entries, "lru", seed)
    warm = tlb.run(addrs[:50_000], 4096)["misses"]
    rate = (tlb.run(addrs[50_000:], 4096)["misses"] - warm) / 250_000
    assert rate == pytest.approx(1 - entries / n_pages, abs=0.01)
