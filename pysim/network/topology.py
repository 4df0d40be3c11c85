"""Topologies on networkx, and routes with constraints solved exactly as integer programs (PuLP).

* :func:`waxman` and :func:`grid` make graphs with a ``delay_s`` on every edge.
* :func:`shortest_path_avoiding` finds the shortest path from ``s`` to ``t``
  that never uses both nodes of a forbidden pair (the paths a router can
  trust when some pairs of routers are suspected of colluding). The problem
  is NP-complete; this solves it exactly with an integer program over edge
  and node variables (flow conservation from ``s`` to ``t``, a node on the
  path iff an edge enters it, at most one node of each pair).
* :func:`stretch` compares a path's length with the unconstrained shortest.
"""
from __future__ import annotations

import math

import networkx as nx

from pysim.rng import make_rng


def waxman(n: int, *, alpha: float = 0.4, beta: float = 0.2, rng=0, connected: bool = True) -> nx.Graph:
    """Waxman's random graph (1988): nodes uniform in the unit square, an edge between u and v with
    probability ``alpha * exp(-d / (beta * L))``; ``delay_s`` is the distance in milliseconds-per-unit.
    With ``connected`` the generator draws again until the graph is connected."""
    if n < 2 or not 0 < alpha <= 1 or not beta > 0:
        raise ValueError("need n >= 2, 0 < alpha <= 1 and beta > 0")
    gen = make_rng(rng)
    for _ in range(1000):
        pos = gen.random((n, 2))
        g = nx.Graph()
        for u in range(n):
            g.add_node(u, pos=tuple(pos[u]))
        scale = beta * math.sqrt(2)
        xy = pos.tolist()
        draws = gen.random(n * (n - 1) // 2).tolist()  # the stream of one draw per pair, in pair order, at once
        k = 0
        for u in range(n):
            for v in range(u + 1, n):
                d = math.dist(xy[u], xy[v])
                if draws[k] < alpha * math.exp(-d / scale):
                    g.add_edge(u, v, delay_s=d * 1e-2)
                k += 1
        if not connected or nx.is_connected(g):
            return g
    raise ValueError("no connected Waxman graph in 1000 draws: raise alpha or beta")


def grid(rows: int, cols: int, *, delay_s: float = 1e-3) -> nx.Graph:
    """A rows x cols grid with nodes numbered row by row."""
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, cols))
    nx.set_edge_attributes(g, delay_s, "delay_s")
    return g


def shortest_path_avoiding(g: nx.Graph, s, t, forbidden_pairs, *, weight: str = "delay_s", time_limit_s=60):
    """The shortest s-t path using at most one node of each forbidden pair, or None if none exists.

    Raises
    ------
    RuntimeError
        If the solver stops without an optimal answer (time limit).
    """
    import warnings

    import pulp

    with warnings.catch_warnings():  # PuLP 3.3 deprecates the calls PuLP 2 needs; both are supported
        warnings.simplefilter("ignore", DeprecationWarning)
        return _solve_avoiding(pulp, g, s, t, forbidden_pairs, weight, time_limit_s)


def _solve_avoiding(pulp, g, s, t, forbidden_pairs, weight, time_limit_s):
    if s == t:
        return [s]
    pairs = [tuple(p) for p in forbidden_pairs]
    if any(s in p and t in p for p in pairs):
        return None
    arcs = [(u, v) for u, v in g.edges] + [(v, u) for u, v in g.edges]
    prob = pulp.LpProblem("avoiding", pulp.LpMinimize)
    x = {a: pulp.LpVariable(f"x_{k}", cat="Binary") for k, a in enumerate(arcs)}
    y = {v: pulp.LpVariable(f"y_{k}", cat="Binary") for k, v in enumerate(g.nodes)}
    prob += pulp.lpSum(g.edges[a][weight] * x[a] for a in arcs)
    for v in g.nodes:
        out_ = pulp.lpSum(x[(v, w)] for w in g.neighbors(v))
        in_ = pulp.lpSum(x[(w, v)] for w in g.neighbors(v))
        prob += out_ - in_ == (1 if v == s else -1 if v == t else 0)
        prob += (in_ if v != s else out_) == y[v]          # on the path iff the path passes through it
        prob += in_ <= 1
    for u, v in pairs:
        if u in y and v in y:
            prob += y[u] + y[v] <= 1
    status = prob.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s))
    if pulp.LpStatus[status] == "Infeasible":
        return None
    if pulp.LpStatus[status] != "Optimal":
        raise RuntimeError(f"the solver stopped with status {pulp.LpStatus[status]}")
    nxt = {u: v for (u, v), var in x.items() if var.value() > 0.5}
    path, node = [s], s
    while node != t:  # subtours cannot be cheaper than the path when weights are positive
        node = nxt[node]
        path.append(node)
    return path


def path_length(g: nx.Graph, path, weight: str = "delay_s") -> float:
    return sum(g.edges[u, v][weight] for u, v in zip(path, path[1:], strict=False))


def stretch(g: nx.Graph, path, weight: str = "delay_s") -> float:
    """A path's length over the unconstrained shortest path's between its ends."""
    best = nx.shortest_path_length(g, path[0], path[-1], weight=weight)
    return path_length(g, path, weight) / best if best > 0 else 1.0
