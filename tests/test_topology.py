"""Topologies and constrained routes: the integer program against brute force over every simple path."""
import itertools

import networkx as nx
import pytest

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
