"""The benchmark's comparisons check agreement before they report a ratio."""
import shutil

import pytest

from pysim import bench


@pytest.mark.skipif(shutil.which("cc") is None, reason="the plain-C baseline needs a C compiler")
def test_the_page_cache_and_a_plain_c_lru_hit_alike_on_the_benchmark_trace(tmp_path):
    out = bench.bench_pagecache(200_000, tmp_path, lambda msg: None, capacity=512, rounds=1)
    impl = out["implementations"]
    assert out["same_result"] and impl["pagecache"]["hits"] == impl["plain_c"]["hits"]
    assert 0 < impl["plain_c"]["hits"] < 200_000  # some hits, some misses: the comparison means something
    assert out["ratios"]["pagecache.vs_plain_c"] > 0
