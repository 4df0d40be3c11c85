"""Topologies and constrained routes: the integer program against brute force over every simple path."""
import itertools
import math

import networkx as nx
import pytest

from pysim.rng import make_rng
from pysim.network.topology import grid, path_length, shortest_path_avoiding, stretch, waxman

pytest.importorskip("pulp")


def _brute_force(g, s, t, pairs):
    best = None
    for path in nx.all_simple_paths(g, s, t):
        on = set(path)
        if any(u in on and v in on for u, v in pairs):
            continue
        if best is None or path_length(g, path) < path_length(g, best) - 1e-12:
            best = path
    return best


@pytest.mark.parametrize("case", range(12))
def test_the_integer_program_finds_what_brute_force_finds(case):
    g = waxman(9, alpha=0.7, beta=0.4, rng=case)
    nodes = sorted(g.nodes)
    s, t = nodes[0], nodes[-1]
    pairs = list(itertools.islice(((u, v) for u, v in itertools.combinations(nodes[1:-1], 2)
                                   if (u * 7 + v * 3 + case) % 5 == 0), 6))
    exact, brute = shortest_path_avoiding(g, s, t, pairs), _brute_force(g, s, t, pairs)
    if brute is None:
        assert exact is None
    else:
        assert path_length(g, exact) == pytest.approx(path_length(g, brute))
        assert not any(u in exact and v in exact for u, v in pairs)


def test_avoiding_pairs_costs_stretch_and_an_impossible_route_is_none():
    g = grid(3, 3)
    for v in g.neighbors(4):  # the centre's links are fast: the best route crosses the centre
        g.edges[4, v]["delay_s"] = 0.2e-3
    free = shortest_path_avoiding(g, 0, 8, [])
    assert 4 in free and stretch(g, free) == pytest.approx(1.0)
    around = shortest_path_avoiding(g, 0, 8, [(0, 4)])  # the source distrusts the centre
    assert 4 not in around and stretch(g, around) > 1.5
    assert shortest_path_avoiding(g, 0, 8, [(0, 1), (0, 3)]) is None  # every path leaves 0 by 1 or 3
    assert shortest_path_avoiding(g, 0, 8, [(0, 8)]) is None


def test_waxman_graphs_are_connected_and_reproducible():
    a, b = waxman(30, rng=5), waxman(30, rng=5)
    assert nx.is_connected(a) and sorted(a.edges) == sorted(b.edges)
    with pytest.raises(ValueError, match="alpha"):
        waxman(5, alpha=0)


def test_waxman_draws_each_pair_in_turn_from_the_stream_as_its_definition_does():
    def one_pair_at_a_time(n, alpha, beta, seed):  # the definition, one draw per pair, redrawn until connected
        gen = make_rng(seed)
        while True:
            pos = gen.random((n, 2))
            g = nx.Graph()
            g.add_nodes_from(range(n))
            for u in range(n):
                for v in range(u + 1, n):
                    d = math.dist(pos[u], pos[v])
                    if gen.random() < alpha * math.exp(-d / (beta * math.sqrt(2))):
                        g.add_edge(u, v, delay_s=d * 1e-2)
            if nx.is_connected(g):
                return g

    for seed in range(4):  # small beta: some seeds need redraws
        got, want = waxman(40, alpha=0.5, beta=0.15, rng=seed), one_pair_at_a_time(40, 0.5, 0.15, seed)
        assert sorted(got.edges(data="delay_s")) == sorted(want.edges(data="delay_s"))
