"""Cache hierarchies against cachegrind on a real program traced by lackey, synthetic traces by hand,
and a NUMA node's remote cache defeated by a stream."""
import re
import shutil
import subprocess

import numpy as np
import pytest

from pysim.harness.memtrace import lackey
from pysim.hw.hierarchy import DATA, Hierarchy, NumaNode, line_refs
from pysim.workloads.memtrace import fft, parse_lackey, pointer_chase, stencil

PROGRAM = r"""
#include <stdio.h>
#define N 128
static double a[N][N], b[N][N];
int main(void) {
    double s = 0;
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) a[i][j] = i + j;
    for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) b[i][j] = a[i][j] * 2;
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += b[i][j];
    printf("%g\n", s);
    return 0;
}
"""
GEOMETRY = {"l1i": (32768, 64, 8), "l1d": (16384, 64, 4), "ll": (131072, 64, 8)}


def _cachegrind(exe):
    g = GEOMETRY
    args = [f"--I1={g['l1i'][0]},{g['l1i'][2]},64", f"--D1={g['l1d'][0]},{g['l1d'][2]},64",
            f"--LL={g['ll'][0]},{g['ll'][2]},64"]
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", *args, "--cachegrind-out-file=/dev/null",
                          str(exe)], capture_output=True, text=True, check=True).stderr

    def count(label):
        return int(re.search(rf"{label}\s+misses:\s+([\d,]+)", out).group(1).replace(",", ""))
    return {"l1i_misses": count("I1 "), "l1d_misses": count("D1 "), "ll_instruction_misses": count("LLi"),
            "ll_data_misses": count("LLd")}


@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("gcc") is None, reason="needs valgrind and gcc")
def test_a_real_programs_misses_match_cachegrinds_on_the_same_geometry(tmp_path):
    (tmp_path / "p.c").write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(tmp_path / "p.c")], check=True)
    trace = lackey([exe])
    assert trace.available, trace.reason
    ours = Hierarchy(**GEOMETRY).run(trace.kinds, trace.addrs, trace.sizes)
    theirs = _cachegrind(exe)
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, rel=0.02, abs=20), key
    assert theirs["l1d_misses"] > 10_000  # the column-order loop really misses


def test_lackey_lines_parse_and_an_access_across_a_line_touches_both():
    k, a, s = parse_lackey("==1== header\nI  04000d7d4,3\n L 1ffefffd58,8\n M 0601038,4\n S 0601040,8\n")
    assert k.tolist() == [0, 1, 1, 1, 1] and a[3] == 0x601038 and s.tolist() == [3, 8, 4, 4, 8]
    kinds, lines = line_refs(np.array([DATA, DATA]), np.array([60, 128]), np.array([8, 8]), 64)
    assert lines.tolist() == [0, 64, 128] and kinds.tolist() == [DATA] * 3
    with pytest.raises(ValueError, match="no lackey"):
        parse_lackey("nothing here")


def test_synthetic_traces_miss_as_their_shapes_say():
    h = Hierarchy(l1i=(32768, 64, 8), l1d=(32768, 64, 8), ll=(1 << 20, 64, 16))
    chase = h.run(*pointer_chase(8192, 3 * 8192, node_bytes=64, rng=1))  # 512 KB of nodes: over L1, under LL
    assert chase["l1d_misses"] > 0.95 * 3 * 8192 and chase["ll_data_misses"] == 8192
    h.reset()
    k, a, s = stencil(512, 64, elem_bytes=8)  # rows of 4 KB: three rows fit L1 easily, every line comes in once
    assert h.run(k, a, s)["l1d_misses"] == pytest.approx(512 * 64 * 8 / 64, rel=0.01)
    k, a, s = fft(1024, elem_bytes=16)
    assert len(a) == 4 * 512 * 10  # 10 stages of 512 butterflies, each 4 references


def test_a_stream_over_remote_data_defeats_a_remote_cache_that_it_exceeds():
    node = NumaNode(0, cache=(32768, 64, 8), remote_cache=(1 << 20, 64, 8), home=lambda a: (a >> 20) % 4)
    small = np.tile(np.arange(1 << 20, (1 << 20) + (512 << 10), 64, dtype=np.uint64), 3)  # 512 KB on node 1
    out = node.run(small)
    assert out["remote"] == out["cache_misses"] and out["remote_cache_misses"] == (512 << 10) // 64
    node = NumaNode(0, cache=(32768, 64, 8), remote_cache=(1 << 20, 64, 8), home=lambda a: np.ones_like(a))
    big = np.tile(np.arange(0, 4 << 20, 64, dtype=np.uint64), 2)  # 4 MB of remote data, twice
    assert node.run(big)["remote_cache_misses"] == big.size  # LRU over a larger loop: every line misses
