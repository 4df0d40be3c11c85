"""Mechanism checks of the NFSv4 Tee model (cmu05_economou): the relay's closed loop against exact MVA and
the open-owner's bound, the namespace tree's counts against the real tree, its layout by hand, and the
Tee's state keeping (Table 2's current file handle, RENAME and REMOVE) on the real structure."""
import dataclasses
import math
import sys

import numpy as np
import pytest

from pysim.models import cmu05_economou as m
from pysim.queueing.closed import asymptotic_bounds
from pysim.workloads.files import Namespace, PostMarkConfig

P = m.Params()
FREE = dataclasses.replace(P, open_owner_serialised=False)
#: A short PostMark run, so that every process cycles through all its transactions many times and the
#: simulated mix is the stream's mean mix (which MVA's demands and the bounds below are computed from).
SHORT = dataclasses.replace(FREE, postmark_transactions=20)


def _transaction_s(stream, attrs):
    """Mean over a stream's transactions of the summed seconds ``attrs`` of each call."""
    return float(np.mean([sum(getattr(c, a) for c in t for a in attrs) for t in stream]))


# --- the relay: the closed loop on the engine ------------------------------------------------------------

@pytest.mark.parametrize(("version", "tee"), [(3, False), (3, True), (4, False), (4, True)])
def test_simulation_meets_exact_mva_where_mva_is_exact(version, tee, seed):
    """With one process nothing queues, so the simulated rate is 1 / the mean transaction time exactly (the
    short stream cycled many times); with many, the busiest CPU bounds both."""
    streams = m.workload_streams(SHORT, version, 1, seed)
    exact = m.mva_throughput(SHORT, version, tee, 16, rng=seed)
    one = m.run_postmark(SHORT, version, tee, 1, seconds=3.0, streams=streams)
    assert one["throughput_per_s"] == pytest.approx(exact.loc[1], rel=0.01)
    demands = [s.demand_s for s in m.stations(SHORT, version, tee, rng=seed) if s.kind == "queue"]
    ceiling = 1.0 / max(demands)
    many = m.run_postmark(SHORT, version, tee, 16, seconds=3.0, streams=streams * 16)
    assert 0.9 * ceiling <= many["throughput_per_s"] <= 1.01 * ceiling
    # MVA's exponential service queues more than the simulation's nearly constant one: it lands below
    assert exact.loc[16] <= ceiling and many["throughput_per_s"] >= 0.97 * exact.loc[16]


def test_simulation_respects_the_asymptotic_bounds(seed):
    d = {s.name: s for s in m.stations(SHORT, 3, True, rng=seed)}
    queues = [s.demand_s for s in d.values() if s.kind == "queue"]
    streams = m.workload_streams(SHORT, 3, 1, seed) * 8
    for n in (2, 4, 8):
        b = asymptotic_bounds(queues, d["network"].demand_s, n)
        x = m.run_postmark(SHORT, 3, True, n, seconds=2.0, streams=streams)["throughput_per_s"]
        assert x <= 1.01 * b["throughput_upper"]


def test_one_process_pays_two_hops_and_two_relay_passes_per_call(seed):
    """Through the Tee, one process's transaction takes longer by exactly each call's extra hop out and back
    and the relay's two passes (nothing queues with one process)."""
    p = dataclasses.replace(P, postmark_transactions=20)
    stream = m.workload_streams(p, 4, 1, seed)[0]
    direct = m.run_postmark(p, 4, False, 1, seconds=3.0, streams=[stream])["throughput_per_s"]
    tee = m.run_postmark(p, 4, True, 1, seconds=3.0, streams=[stream])["throughput_per_s"]
    extra = _transaction_s(stream, ("hop_out_s", "hop_back_s", "relay_request_s", "relay_reply_s"))
    assert 1 / tee - 1 / direct == pytest.approx(extra, rel=0.02)


def test_serialised_opens_bound_nfsv4_by_the_open_owners_round_trips(seed):
    """Every OPEN and CLOSE holds the open-owner for its whole round trip, so however many processes run,
    transactions cannot finish faster than those round trips allow; without the open-owner they do."""
    p = dataclasses.replace(P, postmark_transactions=20)
    streams = m.workload_streams(p, 4, 1, seed) * 16
    for tee in (False, True):
        legs = ["client_send_s", "client_take_s", "server_s", "hop_out_s", "hop_back_s"]
        legs += ["hop_out_s", "hop_back_s", "relay_request_s", "relay_reply_s"] if tee else []
        held = float(np.mean([sum(getattr(c, a) for c in t if c.seqid for a in legs) for t in streams[0]]))
        bound = 1.0 / held
        x = m.run_postmark(p, 4, tee, 16, seconds=3.0, streams=streams)["throughput_per_s"]
        assert 0.85 * bound <= x <= 1.01 * bound
        free = m.run_postmark(SHORT, 4, tee, 16, seconds=3.0, streams=streams)["throughput_per_s"]
        assert free > 1.03 * bound


def test_every_call_serialised_caps_nfsv4_at_one_process(seed):
    p = dataclasses.replace(P, every_call_serialised=True, postmark_transactions=20)
    streams = m.workload_streams(p, 4, 1, seed) * 8
    one = m.run_postmark(p, 4, True, 1, seconds=3.0, streams=streams)["throughput_per_s"]
    eight = m.run_postmark(p, 4, True, 8, seconds=3.0, streams=streams)["throughput_per_s"]
    assert eight <= 1.02 * one


def test_postmark_transactions_follow_postmark(seed):
    cfg = PostMarkConfig(files=200, transactions=4000, min_size=512, max_size=10_000)
    tx = m.postmark_transactions(cfg, rng=seed)
    assert len(tx) == 4000
    kinds = [k for t in tx for k, _ in t]
    n = len(tx)
    # each transaction: a read or an append (unless the pool ran dry), and a create or a delete
    assert all(t[-1][0] in ("create", "delete") for t in tx)
    for pair, bias in ((("read", "append"), 0.5), (("create", "delete"), 0.5)):
        share = kinds.count(pair[0]) / (kinds.count(pair[0]) + kinds.count(pair[1]))
        assert share == pytest.approx(bias, abs=4 * math.sqrt(0.25 / n))
    created = [b for t in tx for k, b in t if k == "create"]
    assert min(created) >= 512 and max(created) <= 10_000


def test_nfs_calls_open_and_close_only_under_nfsv4():
    steps = [("read", 20_000), ("create", 700), ("delete", 0), ("append", 100)]
    v4 = [c.name for c in m.nfs_calls(P, 4, steps)]
    v3 = [c.name for c in m.nfs_calls(P, 3, steps)]
    assert v4 == ["OPEN", "READ", "CLOSE", "OPEN", "WRITE", "CLOSE", "REMOVE", "OPEN", "WRITE", "CLOSE"]
    assert v3 == ["GETATTR", "READ", "LOOKUP", "CREATE", "WRITE", "REMOVE", "GETATTR", "WRITE"]
    assert [c.name for c in m.nfs_calls(P, 4, [("append", 70_000)])] == ["OPEN", "WRITE", "WRITE", "WRITE",
                                                                         "COMMIT", "CLOSE"]
    assert all(c.seqid == (c.name in ("OPEN", "CLOSE")) for c in m.nfs_calls(P, 4, steps))
    for calls in m.relay_workload(P, transactions=20):  # OPEN and CLOSE carry the seqid, in pairs
        assert sum(seqid for *_, seqid in calls) % 2 == 0 and calls[-1][2] in (True, False)
        assert all(request >= P.header_bytes and reply >= P.header_bytes for request, reply, _ in calls)


def test_counterfactuals_move_figure5_the_way_the_claims_need():
    base = m.figure5(quick=True)
    mature = m.figure5(m.COUNTERFACTUALS[1].apply(P), quick=True)
    assert base["direct_per_s"].max() < 1.5 * base.loc["1", "direct_per_s"]
    assert mature["direct_per_s"].max() > 2 * mature.loc["1", "direct_per_s"]
    independent = m.figure5(m.COUNTERFACTUALS[0].apply(P), quick=True)
    assert independent["tee_pct_of_direct"].max() > base["tee_pct_of_direct"].max()


# --- the namespace tree --------------------------------------------------------------------------------

def test_entry_layout_by_hand():
    """glibc on IA-32: a 4-byte size word, chunks in 8-byte steps, 16 bytes at least."""
    assert [m.chunk_bytes(P, n) for n in (1, 12, 13, 20, 21)] == [16, 16, 24, 24, 32]
    node = 6 * 4 + 16 + 8 + 8  # parent, child, sibling, name, SUT node, SUT handle; stateid4, verifier4, cookie
    by_hand = {"reference node": 64, "SUT node": 24, "name": 24, "SUT file handle": 32, "hash entry": 40,
               "hash bucket": 4}
    assert node + 4 <= 64 < node + 4 + 8
    assert m.entry_layout(P).to_dict() == by_hand
    assert m.entry_bytes(P) == sum(by_hand.values())


def _scan_positions(tee, paths):
    """Children examined looking up each path in the real list-mode tree: the 1-based position of each
    component among its parent's children, summed."""
    total = 0
    for path in paths:
        node = tee.root
        for name in path.split("/"):
            k = next(i for i, kid in enumerate(node.children, 1) if kid.name == name)
            total += k
            node = node.children[k - 1]
    return total


@pytest.mark.parametrize("fpd", [3.0, 12.0])
def test_tree_stats_count_what_the_real_tree_scans(fpd, seed):
    ns = Namespace.generate(3000, files_per_dir=fpd, subdirs_per_dir=2.0, rng=seed)
    paths = [p for p, _ in ns.paths()]
    tee = m.TeeNamespace(hashed_directories=False)
    entries = m.build(tee, ns)
    s = m.tree_stats(ns)
    assert s.files == len(paths) == 3000 and s.entries == entries == len(tee)
    assert s.components == sum(p.count("/") + 1 for p in paths)
    assert s.examined == _scan_positions(tee, paths)
    hashed = m.tree_stats(ns, hashed=True)
    assert hashed.examined == hashed.components == s.components
    flat = m.tree_stats(ns, flat=True)
    assert flat.examined / flat.files == pytest.approx((entries + 1) / 2, rel=1e-3)


def test_lookup_cost_by_hand():
    s = m.TreeStats(files=10, entries=12, components=30, examined=70)
    misses = 2 + 2 * 70 / 10
    assert m.lookup_cost_us(P, s) == pytest.approx(P.getfh_us + misses * P.miss_ns / 1000)


def test_figure6_and_7_grow_with_the_file_systems():
    f6, f7 = m.figure6(quick=True), m.figure7(quick=True)
    assert f6["files"].is_monotonic_increasing and f6["memory_MB"].is_monotonic_increasing
    assert f6.loc["workstation", "files"] == P.workstation_files
    assert (f6["bytes_per_file"] > m.entry_bytes(P)).all()  # directories are entries too
    assert f7["total_s"].is_monotonic_increasing
    flat = m.figure7(m.COUNTERFACTUALS[3].apply(P), quick=True)
    assert flat.loc["workstation", "lookup_us"] > 100 * f7.loc["workstation", "lookup_us"]
    hashed = m.figure7(m.COUNTERFACTUALS[2].apply(P), quick=True)
    assert (hashed["examined_per_lookup"] == hashed["mean_depth"]).all()
    assert (hashed["lookup_us"] < f7["lookup_us"]).all()


# --- the Tee's state (Table 2, §4.2) on the real structure --------------------------------------------

def _values(tag):
    return m.SutValues(f"sut-{tag}".encode(), f"stateid-{tag}".encode(), b"verifier", 0)


@pytest.mark.parametrize("hashed", [True, False])
def test_current_filehandle_follows_table2(hashed):
    tee = m.TeeNamespace(hashed_directories=hashed)
    c = m.TeeClient(tee)
    c.apply("PUTROOTFH")
    c.apply("LOOKUP", "home", (b"ref-home", _values("home")))
    c.apply("SAVEFH")
    got = c.apply("OPEN", "a", (b"ref-a", _values("a")))
    assert got.stateid == b"stateid-a" and got.fh == b"sut-a"  # Figure 3: the SUT's values, not the reference's
    for op in ("READ", "WRITE", "GETATTR", "GETFH", "CLOSE"):  # not in Table 2: the current file stays
        assert c.apply(op).fh == b"sut-a"
    assert c.apply("LOOKUPP").fh == b"sut-home"
    assert c.apply("RESTOREFH").fh == b"sut-home"
    c.apply("PUTROOTFH")
    assert c.current is tee.root
    c.apply("PUTFH", b"ref-a")
    assert c.current.name == "a" and tee.lookup("home/a") is c.current
    assert tee.root.children and tee.sut_root.children  # both trees learnt the files


@pytest.mark.parametrize("hashed", [True, False])
def test_rename_and_remove_move_both_trees_and_the_hash(hashed):
    tee = m.TeeNamespace(hashed_directories=hashed)
    c = m.TeeClient(tee)
    m.populate(tee, ["src/lib/x.c", "src/lib/y.c", "dst/keep"])
    c.apply("PUTFH", tee.lookup("src").fh)
    c.apply("SAVEFH")
    c.apply("PUTFH", tee.lookup("dst").fh)
    fh_x = tee.lookup("src/lib/x.c").fh
    c.apply("RENAME", ("lib", "moved"))
    assert tee.lookup("src/lib") is None and tee.lookup("dst/moved/x.c").fh == fh_x
    assert tee.by_handle(fh_x) is tee.lookup("dst/moved/x.c")
    moved = tee.lookup("dst/moved")
    assert moved.peer.parent is tee.lookup("dst").peer  # the SUT's tree moved too
    c.apply("REMOVE", "moved")
    assert tee.lookup("dst/moved") is None and fh_x not in tee.by_fh and len(tee) == 3
    with pytest.raises(ValueError, match="below itself"):
        tee.rename(tee.lookup("src"), tee.lookup("src"), "again")


@pytest.mark.parametrize("shape", [1, 2, 3])
def test_hashed_and_listed_directories_agree(shape, seed):
    ns = Namespace.generate(800, files_per_dir=3.0 * shape, subdirs_per_dir=float(shape), rng=seed)
    paths = [p for p, _ in ns.paths()]
    trees = [m.TeeNamespace(hashed_directories=h) for h in (True, False)]
    for tee in trees:
        m.populate(tee, paths)
        assert m.getfh_all(tee, paths) == len(paths)
    rng = np.random.default_rng(seed)
    for path in rng.choice(paths, 50):
        a, b = (t.lookup(str(path)) for t in trees)
        assert a.fh == b.fh and a.values.fh == b.values.fh and a.peer.fh == b.peer.fh


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="min_file_bytes"):
        m.Params(min_file_bytes=20_000)
    with pytest.raises(ValueError, match="clients"):
        m.Params(clients=(1, 0))
    with pytest.raises(ValueError, match="workloads"):
        m.Params(workloads=(("/var", 10, 1.0, 1.0),))
    with pytest.raises(ValueError, match="version"):
        m.nfs_calls(P, 2, [("read", 10)])
    with pytest.raises(ValueError, match="seconds"):
        m.run_postmark(P, 4, False, 1, seconds=0)
    with pytest.raises(ValueError, match="clients"):
        m.run_postmark(P, 4, False, 0, seconds=1)
    with pytest.raises(ValueError, match="opens"):
        m.measure_relay(sys.executable, opens=("sometimes",))
    tee = m.TeeNamespace()
    with pytest.raises(ValueError, match="current file handle"):
        m.TeeClient(tee).apply("LOOKUP", "x")
    with pytest.raises(ValueError, match="root"):
        tee.remove(tee.root)


# --- then vs now: the programs run for real ----------------------------------------------------------------

def test_parse_rows_reads_the_programs_lines():
    text = "noise\nrow\tmode=hash\tfiles=12\tbytes=3.5\trow\nrow\tsource=/a=b\n"
    assert m.parse_rows(text) == [{"mode": "hash", "files": 12, "bytes": 3.5, "row": ""}, {"source": "/a=b"}]


def test_tree_measured_for_real():
    tr = m.measure_tree(sys.executable, [2000, ("/no/such/directory", 0)], max_lookups=500)
    missing = tr.loc["/no/such/directory (walked)", "note"]
    assert missing.str.startswith("not available: ValueError").all()
    tr = tr.drop(index="/no/such/directory (walked)", level="source")
    assert not tr["note"].astype(bool).any(), tr["note"].tolist()
    for mode in ("hash", "list"):
        x = tr.loc[("generated, 2,000 files", mode)]
        assert x["files"] == 2000 and x["entries"] > 2000
        assert 50 < x["bytes_per_entry"] < 5000 and x["lookups_per_s"] > 1000
    assert tr.xs("list", level="mode")["examined_per_lookup"].iloc[0] > \
        tr.xs("hash", level="mode")["examined_per_lookup"].iloc[0]


def test_relay_measured_for_real():
    r = m.measure_relay(sys.executable, clients=(2,), opens=("serialised",), seconds=0.2, rounds=1)
    x = r.loc[("serialised", 2)]
    assert x["note"] == "" and x["rounds"] == 1
    assert x["direct_per_s"] > 0 and x["tee_per_s"] > 0 and 0 < x["tee_pct_of_direct"] < 200
    # the relay's own CPU per call: a user-level pass of two messages, more than a microsecond, less than
    # the whole run; the server's includes its 100 us of work per call
    assert 1 < r.attrs["relay_cpu_us_per_call"] < 200_000
    assert r.attrs["server_cpu_us_per_call"] >= 90
