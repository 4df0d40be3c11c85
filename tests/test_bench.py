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


def test_the_time_split_gives_each_sample_to_its_innermost_owner():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bank_time_split", bench.BENCH_DIR / "bank_time_split.py")
    split = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(split)
    frame = "\t{:x} {} ({})"
    stacks = "\n\n".join("\n".join(frame.format(i, sym, dso) for i, (sym, dso) in enumerate(block)) for block in [
        # the binding allocating for a timeout the scenario asked for: the binding's
        [("_PyObject_Malloc", "libpython"), ("event_alloc", "_native.so"), ("_PyEval_EvalFrameDefault", "libpython"),
         ("process_resume", "_native.so"), ("Env_run", "_native.so")],
        # a random draw inside the scenario's generator: the scenario's
        [("genrand_uint32", "_random.so"), ("_PyEval_EvalFrameDefault", "libpython"), ("process_resume", "_native.so"),
         ("Env_run", "_native.so")],
        # importing, before env.run(): not counted
        [("_PyEval_EvalFrameDefault", "libpython"), ("Py_RunMain", "libpython")],
    ])
    assert split.split(stacks) == {"binding": 1, "python": 1, "other": 0}
