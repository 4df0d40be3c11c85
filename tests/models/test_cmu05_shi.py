"""Mechanism checks of the CONS-ROUTE model (cmu05_shi): the search against networkx, the greedy deletion
against brute force and against the exact integer program, hand-built networks for the baselines, and the
recovery rounds' invariants."""
import dataclasses
import itertools

import networkx as nx
import pytest

from pysim.models import cmu05_shi as m
from pysim.network.topology import grid, path_length, shortest_path_avoiding, waxman

pytest.importorskip("pulp")


@pytest.mark.parametrize("case", range(6))
def test_the_guided_search_finds_networkx_shortest_paths_with_routers_deleted(case):
    g = waxman(60, alpha=0.5, beta=0.15, rng=case)
    sp = m.Dijkstra(g)
    nodes = sorted(g.nodes)
    for k, (s, t) in enumerate(itertools.islice(itertools.permutations(nodes, 2), 0, 400, 37)):
        removed = frozenset(v for v in nodes if (v * 7 + k + case) % 9 == 0) - {s, t}
        h = g.subgraph(set(nodes) - removed)
        got = sp.path(s, t, removed)
        if not nx.has_path(h, s, t):
            assert got is None
        else:
            assert not set(got) & removed and got[0] == s and got[-1] == t
            assert path_length(g, got) == pytest.approx(nx.dijkstra_path_length(h, s, t, weight="delay_s"))
            assert sp.path(s, t, set(removed)) is got  # remembered, whatever the set's type
            assert sp.length(got) == path_length(g, got)


@pytest.mark.parametrize("case", range(3))
def test_the_plain_search_gives_networkx_distances_bit_for_bit(case):
    g = waxman(60, alpha=0.5, beta=0.15, rng=case)
    sp = m.Dijkstra(g)
    for s in sorted(g.nodes)[::7]:
        removed = frozenset(v for v in g.nodes if (v * 5 + case) % 7 == 0) - {s}
        h = g.subgraph(set(g.nodes) - removed)
        assert sp.distances(s, removed) == nx.single_source_dijkstra_path_length(h, s, weight="delay_s")
        for t in sorted(h.nodes)[::11]:
            if nx.has_path(h, s, t):
                assert sp.distances(s, removed, t)[t] == nx.dijkstra_path_length(h, s, t, weight="delay_s")


def _fewest_violations(g, s, t, pairs):
    return min(m.violations(p, pairs) for p in nx.all_simple_paths(g, s, t))


@pytest.mark.parametrize("case", range(10))
def test_the_heuristic_returns_a_real_path_and_never_beats_brute_force(case):
    g = waxman(9, alpha=0.7, beta=0.4, rng=case)
    nodes = sorted(g.nodes)
    s, t = nodes[0], nodes[-1]
    pairs = [(u, v) for u, v in itertools.combinations(nodes, 2) if (u * 5 + v * 3 + case) % 4 == 0 and {u, v} != {s, t}]
    path, viol = m.cons_route(g, s, t, pairs)
    assert path[0] == s and path[-1] == t and len(set(path)) == len(path)
    assert all(g.has_edge(u, v) for u, v in zip(path, path[1:]))
    assert viol == m.violations(path, pairs)  # the count it reports is the path's
    assert viol >= _fewest_violations(g, s, t, pairs)


@pytest.mark.parametrize("case", range(8))
def test_a_feasible_heuristic_path_is_never_shorter_than_the_integer_programs(case):
    g = waxman(18, alpha=0.6, beta=0.3, rng=100 + case)
    nodes = sorted(g.nodes)
    s, t = nodes[1], nodes[-2]
    pairs = [(u, v) for u, v in itertools.combinations(nodes, 2) if (u * 11 + v + case) % 13 == 0 and {u, v} != {s, t}]
    path, viol = m.cons_route(g, s, t, pairs)
    exact = shortest_path_avoiding(g, s, t, pairs)
    if viol == 0:
        assert exact is not None
        assert path_length(g, path) >= path_length(g, exact) - 1e-12


def test_greedy_deletion_steps_around_a_distrusted_centre():
    """A 3x3 grid whose centre is fast: the shortest 0->8 route crosses it; distrust (1, 4) and (3, 4)
    and the heuristic must delete the centre (it is in both violated pairs) and go round."""
    g = grid(3, 3)
    for v in g.neighbors(4):
        g.edges[4, v]["delay_s"] = 0.2e-3
    assert 4 in m.Dijkstra(g).path(0, 8)
    path, viol = m.cons_route(g, 0, 8, [(1, 4), (3, 4), (4, 5), (4, 7)])
    assert viol == 0 and 4 not in path and path_length(g, path) == pytest.approx(4e-3)


def test_the_baselines_on_a_ring_with_one_blackhole():
    """A ring 0-1-2-3-4-5-0: 0 -> 2 goes 0-1-2; with 1 malicious, the node-disjoint path 0-5-4-3-2, the
    other next hop 5 and the traceroute detour around 1 all deliver; OSPF does not."""
    g = nx.cycle_graph(6)
    nx.set_edge_attributes(g, 1.0, "delay_s")
    got = m.baselines(g, 0, 2, frozenset({1}), m.Dijkstra(g))
    assert got == {"ospf": False, "node-disjoint": True, "next-hop": True, "traceroute": True}
    # a second blackhole on the way round defeats the one-shot detours
    got = m.baselines(g, 0, 2, frozenset({1, 4}), m.Dijkstra(g))
    assert not any(got.values())


def test_a_traceroute_detour_finds_only_the_first_blackhole_but_cons_route_keeps_going():
    """Two parallel two-hop routes joined by a ladder: each detour meets a new blackhole; the one-shot
    traceroute detour fails where CONS-ROUTE's rounds, complaint by complaint, succeed."""
    g = nx.Graph()
    for u, v, w in [("s", "a", 1), ("a", "t", 1), ("s", "b", 1.5), ("b", "t", 1.5), ("s", "c", 3), ("c", "t", 3)]:
        g.add_edge(u, v, delay_s=w)
    bad = frozenset({"a", "b"})
    assert m.baselines(g, "s", "t", bad, m.Dijkstra(g))["traceroute"] is False
    works, failed, path = m.Recovery(g, bad, m.Params()).run([("s", "t")])[("s", "t")]
    assert works and failed == 2 and path == ["s", "c", "t"]


def test_recovery_without_blackholes_never_fails_and_complaints_only_name_honest_malicious_pairs(seed):
    g = waxman(40, alpha=0.5, beta=0.2, rng=seed)
    pairs = [(s, t) for s, t in itertools.permutations(sorted(g.nodes), 2)][::29]
    out = m.Recovery(g, frozenset(), m.Params()).run(pairs)
    assert all(w and f == 0 for w, f, _ in out.values())
    bad = frozenset(range(0, 40, 5))
    honest = g.subgraph(set(g.nodes) - bad)
    pairs = [(s, t) for s, t in pairs if s not in bad and t not in bad and nx.has_path(honest, s, t)]
    out = m.Recovery(g, bad, m.Params()).run(pairs)
    for w, f, path in out.values():
        if w:
            assert not set(path) & bad


def test_private_complaints_make_the_response_time_independent_of_the_group_size():
    p = dataclasses.replace(m.Params(), shared_complaints=False)
    f4 = m.figure4(p, rng=0, quick=True)
    assert f4["mean_failed_routes"].nunique() == 1 and f4["max_failed_routes"].nunique() == 1


def test_ignoring_the_constraints_is_plain_ospf():
    p = dataclasses.replace(m.Params(), route_choice="shortest")
    f1 = m.figure1(p, rng=0, quick=True)
    rate = f1["success_rate"].unstack("algorithm")
    assert (rate["cons-route"] == rate["ospf"]).all()
