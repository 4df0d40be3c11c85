"""CONS-ROUTE: recovering from intrusions in the OSPF data plane (Shi, Lu & Reid, CMU 15-712, 2005).

The paper prints no number: its four result figures (success rate on a 22-node campus network and on a
432-node ISP network, CONS-ROUTE's path stretch, its response time) are lost in the text, and Table 1 is a
literature survey. So every artifact here is judged by the paper's claims (papers/cmu05_shi/claims.yaml),
and the ledger is empty. The model regenerates:

* ``figure1`` / ``figure2``: success rate of CONS-ROUTE and of the three baselines of §3.1 (node-disjoint
  path, alternative next hop, one Secure-Traceroute detour) and unsecured OSPF, against the fraction of
  compromised routers, and each one's "ratio of improvement over the non-secured version of OSPF" (§3.4);
* ``figure3``: mean and maximum stretch of the paths CONS-ROUTE recovers (§3.3: against the omniscient
  shortest path that avoids every malicious router);
* ``figure4``: mean and maximum number of failed routes before a working one (§3.3), against the number of
  communicating pairs t, with synchronised intrusion-detection rounds;
* ``optimality`` (a companion the issue asks for): the greedy heuristic of §2.3 against the exact optimum of
  PATH-CONS, solved as an integer program by :func:`pysim.network.topology.shortest_path_avoiding`.

First principles, all of it. A router drops every packet it should forward (a blackhole, §3.2). A pair
routes on the shortest path; when a packet is dropped, the last honest router before the first malicious
one complains about it (Secure Traceroute locates it, §1.3), and every router records the *pair* of the
two as distrusting (§2.1): no path may contain both. A pair then routes on the path CONS-ROUTE's greedy
node deletion finds (:func:`cons_route`, §2.3). Nothing is calibrated and nothing is taken as an input.

Assumed, because the text does not give it: the topologies (Waxman graphs from
:func:`pysim.network.topology.waxman` of the stated sizes stand in for the campus network and AS 3967 of
[1], whose files are not available here), the swept fractions, the share of pairs sampled on the large
network, the fraction compromised in Figure 4 and its values of t, the tie-breaks of the heuristic.

Then vs now (:func:`measure_runtime`): the heuristic and the integer program timed on this machine against
the size of the network; the clock is passed in, so the model stays pure.

Not reproduced: Table 1 (a survey of cited work, produced by no mechanism) and Figures 5-6 (the gadgets of
the hardness proofs: diagrams). The slandering attack is discussed by the paper but not simulated by it.
"""
from __future__ import annotations

import dataclasses
import functools
import heapq
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from pysim.models import Counterfactual
from pysim.network.topology import path_length, shortest_path_avoiding, waxman
from pysim.params import ModelParams, assumed, stated
from pysim.rng import make_rng
from pysim.harness.exclusive import one_core

WEIGHT = "delay_s"  # the link metric: the Waxman graphs' delay, standing in for the OSPF weights of [1]
ALGORITHMS = ("ospf", "node-disjoint", "next-hop", "traceroute", "cons-route")
BASELINES = ("node-disjoint", "next-hop", "traceroute")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in routers, fractions in [0, 1]."""

    campus_nodes: int = stated(22, "Figure 1 caption: 22 node campus network", ge=3)
    isp_nodes: int = stated(432, "Figures 2-4 captions: 432 node network, ASN 3967", ge=3)
    campus_alpha: float = assumed(0.6, "Waxman alpha for the campus stand-in: mean degree near 4, as a small "
                                       "campus network of routers", le=1)
    campus_beta: float = assumed(0.25, "Waxman beta for the campus stand-in (with alpha, mean degree near 4)")
    isp_alpha: float = assumed(0.4, "Waxman alpha for the AS 3967 stand-in; with beta, mean degree about 6 "
                                    "and almost always connected (Rocketfuel's ISP maps are sparse too)", le=1)
    isp_beta: float = assumed(0.06, "Waxman beta for the AS 3967 stand-in: short links dominate, as in a "
                                    "backbone of PoPs")
    fractions: tuple = assumed((0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
                               "§3.4 sweeps 'various percentage[s] of randomly compromised nodes' without "
                               "giving them; up to a majority, the case §1.3 names (campus network)")
    isp_fractions: tuple = assumed((0.1, 0.2, 0.3, 0.4), "as fractions, on the 432-router network; stopped "
                                                         "below a majority, where the heuristic's cost per "
                                                         "pair grows tenfold (see the notebook)")
    isp_pairs: int = assumed(150, "§3.2 samples 'a certain percentage' of pairs on large networks, not given: "
                                  "150 of the 186,000 ordered pairs", ge=1)
    malicious_draws: int = assumed(3, "random compromised sets per fraction; §3.2 does not say how many", ge=1)
    response_fraction: float = assumed(0.2, "Figure 4's share of compromised routers is not given", lt=1)
    pair_counts: tuple = assumed((1, 2, 4, 8, 16, 32), "§3.3: response time against the number t of "
                                                       "communicating pairs; the values are not given")
    response_pairs: int = assumed(64, "pairs whose default route fails, split into groups of t for every t "
                                      "(so each t sees the same pairs)", ge=1)
    max_rounds: int = assumed(40, "a bound on the synchronised detection rounds; none is reached", ge=1)
    optimality_instances: int = assumed(30, "random PATH-CONS instances per constraint count", ge=1)
    optimality_constraints: tuple = assumed((4, 8, 16, 32), "distrusting pairs drawn at random among the "
                                                            "campus-sized graph's routers")
    complaints: bool = stated(True, "§2.1: when A complains about B, all routers set A and B as distrusting")
    shared_complaints: bool = stated(True, "§2.1, §3.3: a complaint is broadcast to every router and used "
                                           "by every pair")
    route_choice: str = stated("greedy", "§2.3: greedy node deletion; 'shortest' ignores the constraints",
                               choices=("greedy", "shortest"))


COUNTERFACTUALS = (
    Counterfactual("no-complaints", {"complaints": False},
                   "detection finds nothing to act on: CONS-ROUTE keeps the default OSPF route"),
    Counterfactual("private-complaints", {"shared_complaints": False},
                   "each pair uses only its own complaints: no router learns from another pair's failures"),
    Counterfactual("ignore-constraints", {"route_choice": "shortest"},
                   "the shortest path, whatever pairs it joins: the constraints are recorded but never used"),
)


# --- the mechanism ----------------------------------------------------------------------------------------

class Dijkstra:
    """Shortest paths in a graph with some routers deleted; counts the computations (the work of §2.3).

    An A* search over adjacency lists built once, guided by the exact distances to the destination in the
    whole graph (computed once per destination): deleting routers only lengthens paths, so those distances
    are a consistent lower bound and the search returns the true shortest path of the reduced graph while
    visiting few routers. The heuristic recomputes a path for every candidate deletion; a plain search (or
    networkx's, with a weight callback hiding the deleted routers) made the 432-router figures take minutes.
    Paths are remembered: the recovery rounds ask for the same deletions again as the constraints grow
    (two searches in three on the 432-router network). Callers must not modify the paths returned.
    """

    def __init__(self, g: nx.Graph, weight: str = WEIGHT):
        self.g, self.weight, self.calls = g, weight, 0
        self.adj = {u: [(v, d[weight]) for v, d in g.adj[u].items()] for u in g.nodes}
        self._weight = {u: dict(nbrs) for u, nbrs in self.adj.items()}
        self._to, self._paths = {}, {}

    def reset(self):
        """Zero the count and forget the paths found (not the distances to destinations)."""
        self.calls, self._paths = 0, {}

    def length(self, path) -> float:
        """The path's length: :func:`path_length`'s sum, without networkx's edge lookups."""
        w = self._weight
        return sum(w[u][v] for u, v in zip(path, path[1:]))

    def distances(self, source, removed=frozenset(), target=None) -> dict:
        """Exact distances from ``source`` avoiding ``removed``: to every router, or until ``target``."""
        dist, best, heap, seq = {}, {}, [(0.0, 0, source)], 1
        adj = self.adj
        while heap:
            d, _, u = heapq.heappop(heap)
            if u in dist:
                continue
            dist[u] = d
            if u == target:
                break
            for v, w in adj[u]:
                nd = d + w
                if v not in dist and v not in removed and nd < best.get(v, math.inf):
                    best[v] = nd
                    heapq.heappush(heap, (nd, seq, v))
                    seq += 1
        return dist

    def _lower_bound(self, t) -> dict:
        if t not in self._to:
            self._to[t] = self.distances(t)
        return self._to[t]

    def path(self, s, t, removed=frozenset()):
        """The shortest s-t path avoiding ``removed``, or None."""
        self.calls += 1
        key = (s, t, frozenset(removed))
        if key not in self._paths:
            self._paths[key] = self._search(s, t, key[2])
        return self._paths[key]

    def _search(self, s, t, removed):
        if s in removed or t in removed:
            return None
        h = self._lower_bound(t)
        if s not in h:
            return None
        dist, pred, done = {s: 0.0}, {s: None}, set(removed)  # a deleted router is never entered
        heap, seq = [(h[s], 0, s)], 1
        adj, get, pop, push = self.adj, dist.get, heapq.heappop, heapq.heappush
        while heap:
            u = pop(heap)[2]
            if u in done:
                continue
            if u == t:
                out = [t]
                while pred[out[-1]] is not None:
                    out.append(pred[out[-1]])
                return out[::-1]
            done.add(u)
            d = dist[u]
            for v, w in adj[u]:
                if v not in done:
                    nd = d + w
                    if nd < get(v, math.inf):
                        dist[v], pred[v] = nd, u
                        push(heap, (nd + h[v], seq, v))
                        seq += 1
        return None


def _partners(pairs) -> dict:
    out = defaultdict(set)
    for p in pairs:
        u, v = tuple(p)
        out[u].add(v)
        out[v].add(u)
    return out


def violations(path, pairs) -> int:
    """How many distrusting pairs have both routers on ``path``."""
    on = set(path)
    return sum(1 for p in pairs if set(p) <= on)


def _violated(path, partners) -> int:
    on = set(path)
    return sum(len(partners.get(v, set()) & on) for v in on) // 2


def cons_route(g: nx.Graph, s, t, pairs, *, sp: Dijkstra | None = None):
    """CONS-ROUTE's greedy node deletion (§2.3): the path violating fewest distrusting pairs it finds.

    Each round deletes one router that lies on the current shortest path (not ``s`` or ``t``) and belongs
    to a violated pair, the one whose deletion leaves the shortest path with the fewest violations (ties:
    the shorter path, then the smaller router id; the paper gives no tie-break), and drops its pairs. It
    stops when a path violates nothing, or when deleting any candidate would disconnect s from t, and
    returns the best path seen (fewest violations, then shortest). Returns ``(path, violations)``, or
    None when s and t are not connected.
    """
    sp = sp or Dijkstra(g)
    partners = _partners(pairs)
    cur = sp.path(s, t)
    if cur is None:
        return None
    cur_v = _violated(cur, partners)
    best = (cur_v, sp.length(cur), cur)
    deleted = set()
    while cur_v > 0:
        on = set(cur)
        options = []
        for v in sorted(x for x in cur[1:-1] if partners.get(x, set()) & on):
            q = sp.path(s, t, frozenset(deleted | {v}))
            if q is not None:  # q avoids every deleted router, so their pairs cannot count against it
                options.append((_violated(q, partners), sp.length(q), v, q))
        if not options:
            break
        cur_v, length, v, cur = min(options, key=lambda o: o[:3])
        deleted.add(v)
        best = min(best, (cur_v, length, cur), key=lambda b: b[:2])
    return best[2], best[0]


class Recovery:
    """Pairs routing through a network with blackhole routers, in synchronised detection rounds (§3.3).

    Each round every pair without a working route sends on the route it currently chooses; a pair whose
    route meets a malicious router records a failed route, and the honest router just before the first
    malicious one complains about it. At the end of the round the complaints become distrusting pairs,
    seen by every pair (or, with ``shared=False``, only by the pair that made them). A pair stops when its
    route works, or fails for good when no complaint it can see changes any more.
    """

    def __init__(self, g: nx.Graph, malicious, p: Params, sp: Dijkstra | None = None):
        self.g, self.bad, self.p = g, frozenset(malicious), p
        self.sp = sp or Dijkstra(g)

    def choose(self, s, t, pairs):
        if self.p.route_choice == "shortest":
            return self.sp.path(s, t)
        found = cons_route(self.g, s, t, pairs, sp=self.sp)
        return None if found is None else found[0]

    def _first_bad(self, path):
        return next((i for i, v in enumerate(path) if v in self.bad), None)

    def run(self, pairs) -> dict:
        """``{(s, t): (works, failed_routes, path)}`` for pairs that communicate together."""
        if not self.p.shared_complaints and len(pairs) > 1:
            out = {}
            for pair in pairs:
                out.update(self.run([pair]))
            return out
        constraints, pending, failed, out = set(), list(pairs), defaultdict(int), {}
        for _ in range(self.p.max_rounds):
            new, still = set(), []
            for s, t in pending:
                path = self.choose(s, t, constraints)
                i = None if path is None else self._first_bad(path)
                if path is None:
                    out[(s, t)] = (False, failed[(s, t)], None)
                elif i is None:
                    out[(s, t)] = (True, failed[(s, t)], path)
                else:
                    failed[(s, t)] += 1
                    complaint = frozenset((path[i - 1], path[i]))  # path[i-1] is honest: i is the first bad
                    if self.p.complaints and complaint not in constraints:
                        new.add(complaint)
                    still.append((s, t))
            pending = still
            if not new:
                break
            constraints |= new
        for pair in pending:
            out[pair] = (False, failed[pair], None)
        return out


# --- the baselines of §3.1 (one detour each, no memory) ---------------------------------------------------

def _clean(path, bad) -> bool:
    return path is not None and not (set(path) & bad)


def baselines(g: nx.Graph, s, t, bad, sp: Dijkstra) -> dict:
    """Whether each algorithm of §3.1 delivers s -> t when the routers in ``bad`` drop everything."""
    default = sp.path(s, t)
    ok = _clean(default, bad)
    out = {"ospf": ok, "node-disjoint": ok, "next-hop": ok, "traceroute": ok}
    if ok or default is None:
        return out
    # node-disjoint: a path sharing no router with the default route but its ends; no intrusion data
    out["node-disjoint"] = _clean(sp.path(s, t, frozenset(default[1:-1])), bad)
    # alternative next hop: s forwards to another neighbour, whose own shortest path (destination-based
    # routing from there on) must not lead back through s
    best = None
    for n in sorted(g.neighbors(s)):
        if n == default[1]:
            continue
        rest = sp.path(n, t) if n != t else [t]
        if rest is None or s in rest:
            continue
        cand = [s] + rest
        key = (sp.length(cand), n)
        if best is None or key < best[0]:
            best = (key, cand)
    out["next-hop"] = best is not None and _clean(best[1], bad)
    # Secure Traceroute: locate the first malicious router on the default route and detour around it once
    first = next(v for v in default if v in bad)
    out["traceroute"] = _clean(sp.path(s, t, frozenset({first})), bad)
    return out


# --- experiments ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=8)
def _graph(n: int, alpha: float, beta: float, seed: int) -> nx.Graph:
    return waxman(n, alpha=alpha, beta=beta, rng=seed)


def _draw_malicious(nodes, fraction, gen) -> frozenset:
    k = int(round(fraction * len(nodes)))
    return frozenset(int(v) for v in gen.choice(nodes, size=k, replace=False))


def _seed_of(rng) -> int:
    return int(make_rng(rng).integers(2 ** 31))


@functools.lru_cache(maxsize=16)
def _success_runs(p: Params, which: str, seed: int, quick: bool) -> pd.DataFrame:
    """Per (fraction, draw, pair): what every algorithm does, and CONS-ROUTE's stretch."""
    gen_graph, gen_bad, gen_pairs = make_rng(seed).spawn(3)
    if which == "campus":
        g = _graph(p.campus_nodes, p.campus_alpha, p.campus_beta, _seed_of(gen_graph))
    else:
        g = _graph(p.isp_nodes, p.isp_alpha, p.isp_beta, _seed_of(gen_graph))
    nodes = np.array(sorted(g.nodes))
    draws = 1 if quick else p.malicious_draws
    rows = []
    fractions = p.fractions if which == "campus" else p.isp_fractions
    sp = Dijkstra(g)  # one for every draw: the searches do not depend on who is malicious
    for f, d in itertools.product(fractions, range(draws)):
        bad = _draw_malicious(nodes, f, gen_bad)
        good = [int(v) for v in nodes if v not in bad]
        component = {v: k for k, c in enumerate(nx.connected_components(g.subgraph(good))) for v in c}
        if which == "campus":  # §3.2: exhaustive on small networks
            pairs = [(s, t) for s, t in itertools.permutations(good, 2)]
        else:
            n_pairs = min(p.isp_pairs // (5 if quick else 1), len(good) * (len(good) - 1))
            idx = gen_pairs.choice(len(good), size=(n_pairs, 2))
            pairs = [(good[a], good[b]) for a, b in idx if a != b]
        pairs = [(s, t) for s, t in pairs if component[s] == component[t]]  # §3.3: perfect knowledge's pairs
        recovered = Recovery(g, bad, p, sp).run(pairs)
        for s, t in pairs:
            r = baselines(g, s, t, bad, sp)
            works, failed, path = recovered[(s, t)]
            r["cons-route"] = works
            best = sp.distances(s, bad, t)[t]
            rows.append({"compromised_pct": round(100 * f), "draw": d, "s": s, "t": t, **r,
                         "stretch": sp.length(path) / best if works else math.nan,
                         "failed_routes": failed})
    return pd.DataFrame(rows)


def _success_table(runs: pd.DataFrame) -> pd.DataFrame:
    rate = runs.groupby("compromised_pct")[list(ALGORITHMS)].mean()
    out = rate.stack().rename("success_rate").to_frame()
    out.index.names = ["compromised_pct", "algorithm"]
    base = rate["ospf"].reindex(out.index.get_level_values("compromised_pct")).to_numpy()
    out["improvement"] = out["success_rate"].to_numpy() / np.where(base > 0, base, np.nan)
    out["pairs"] = runs.groupby("compromised_pct").size().reindex(
        out.index.get_level_values("compromised_pct")).to_numpy()
    return out


def figure1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 1: success rate on the 22-router campus network, every ordered pair of honest routers.

    Index (compromised_pct, algorithm). Columns: success_rate (delivered over the pairs connected
    through honest routers, §3.3), improvement (success rate over unsecured OSPF's, §3.4), pairs.
    """
    p = params or Params()
    return _success_table(_success_runs(p, "campus", _seed_of(rng), quick))


def figure2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 2: success rate on the 432-router network, sampled pairs. Columns as :func:`figure1`."""
    p = params or Params()
    return _success_table(_success_runs(p, "isp", _seed_of(rng), quick))


def figure3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 3: stretch of CONS-ROUTE's recovered paths on the 432-router network (over the omniscient
    shortest path through honest routers). Index compromised_pct. Columns: mean_stretch, max_stretch,
    recovered_pairs (pairs whose default route failed and which CONS-ROUTE recovered)."""
    p = params or Params()
    runs = _success_runs(p, "isp", _seed_of(rng), quick)
    ok = runs[runs["cons-route"]]
    rec = ok[ok["failed_routes"] > 0]
    g = ok.groupby("compromised_pct")["stretch"]
    out = pd.DataFrame({"mean_stretch": g.mean(), "max_stretch": g.max(),
                        "recovered_pairs": rec.groupby("compromised_pct").size()}).fillna({"recovered_pairs": 0})
    out["recovered_pairs"] = out["recovered_pairs"].astype(int)
    return out


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: failed routes before a working one, on the 432-router network, against the number t of
    pairs communicating at once (the same pairs, in groups of t, for every t). Index pairs.
    Columns: mean_failed_routes, max_failed_routes (over recovered pairs), unrecovered."""
    p = params or Params()
    gen_graph, gen_bad, gen_pairs = make_rng(_seed_of(rng)).spawn(3)
    g = _graph(p.isp_nodes, p.isp_alpha, p.isp_beta, _seed_of(gen_graph))
    nodes = np.array(sorted(g.nodes))
    bad = _draw_malicious(nodes, p.response_fraction, gen_bad)
    good = [int(v) for v in nodes if v not in bad]
    honest, sp = g.subgraph(good), Dijkstra(g)
    want = max(p.pair_counts) if quick else max(p.response_pairs, max(p.pair_counts))
    want = want // max(p.pair_counts) * max(p.pair_counts)  # whole groups for every t
    pairs = []
    while len(pairs) < want:  # pairs that need recovery and can have it (§3.3: failed routes before a working one)
        a, b = (good[i] for i in gen_pairs.choice(len(good), size=2, replace=False))
        default = sp.path(a, b)
        if (a, b) not in pairs and not _clean(default, bad) and nx.has_path(honest, a, b):
            pairs.append((a, b))
    rows = []
    for t in p.pair_counts:
        res = {}
        for k in range(0, len(pairs), t):
            res.update(Recovery(g, bad, p, sp).run(pairs[k:k + t]))
        got = np.array([f for w, f, _ in res.values() if w], dtype=float)
        rows.append({"pairs": t, "mean_failed_routes": got.mean() if got.size else math.nan,
                     "max_failed_routes": got.max() if got.size else math.nan,
                     "unrecovered": sum(1 for w, _, _ in res.values() if not w)})
    return pd.DataFrame(rows).set_index("pairs")


def _random_instance(p: Params, k: int, gen):
    # not _graph: these graphs are never asked for again, and would push the shared ones out of its cache
    g = waxman(p.campus_nodes, alpha=p.campus_alpha, beta=p.campus_beta, rng=int(gen.integers(2 ** 31)))
    nodes = sorted(g.nodes)
    s, t = (int(v) for v in gen.choice(nodes, size=2, replace=False))
    everyone = [c for c in itertools.combinations(nodes, 2) if set(c) != {s, t}]
    picks = gen.choice(len(everyone), size=min(k, len(everyone)), replace=False)
    return g, s, t, [everyone[i] for i in picks]


def route(g: nx.Graph, s, t, pairs, p: Params | None = None):
    """The path the model's routing picks under ``pairs`` (CONS-ROUTE, or plain shortest), or None."""
    p = p or Params()
    if p.route_choice == "shortest":
        return Dijkstra(g).path(s, t)
    found = cons_route(g, s, t, pairs)
    return None if found is None else found[0]


def optimality(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The heuristic against the exact PATH-CONS optimum (an integer program) on random instances:
    campus-sized Waxman graphs, a random source and destination, k random distrusting pairs.

    Index constraints (k). Columns: instances, feasible (a path violating nothing exists), found_pct
    (of the feasible ones, the share where the heuristic's path violates nothing), mean_ratio and
    max_ratio (its length over the optimum's, where both exist).
    """
    p = params or Params()
    gen = make_rng(_seed_of(rng))
    n = max(4, p.optimality_instances // 3) if quick else p.optimality_instances
    rows = []
    for k in p.optimality_constraints:
        feasible, found, ratios = 0, 0, []
        for _ in range(n):
            g, s, t, pairs = _random_instance(p, k, gen)
            exact = shortest_path_avoiding(g, s, t, pairs)
            if exact is None:
                continue
            feasible += 1
            got = route(g, s, t, pairs, p)
            if got is not None and violations(got, pairs) == 0:
                found += 1
                ratios.append(path_length(g, got) / path_length(g, exact))
        rows.append({"constraints": k, "instances": n, "feasible": feasible,
                     "found_pct": 100.0 * found / feasible if feasible else math.nan,
                     "mean_ratio": float(np.mean(ratios)) if ratios else math.nan,
                     "max_ratio": float(np.max(ratios)) if ratios else math.nan})
    return pd.DataFrame(rows).set_index("constraints")


# --- then vs now ------------------------------------------------------------------------------------------

@one_core()
def measure_runtime(clock, *, sizes=(22, 54, 108, 216, 432), constraints: int = 16, instances: int = 3,
                    params: Params | None = None, rng=0, exact_up_to: int = 216) -> pd.DataFrame:
    """Time the heuristic and the integer program on this machine against the network's size.

    ``clock`` is a callable returning seconds (``time.perf_counter``), passed in so the model stays pure.
    Graphs are the ISP stand-in's Waxman family scaled to keep the mean degree; ``constraints`` random
    distrusting pairs. Columns: nodes, instance, heuristic_ms, dijkstra_calls, exact_ms (NaN above
    ``exact_up_to`` nodes), ratio (heuristic length over optimum, when both exist).
    """
    p = params or Params()
    gen = make_rng(rng)
    rows = []
    for n in sizes:
        beta = p.isp_beta * math.sqrt(p.isp_nodes / n)  # same mean degree: density times beta^2 constant
        for i in range(instances):
            g = waxman(n, alpha=p.isp_alpha, beta=min(beta, 1.0), rng=int(gen.integers(2 ** 31)))
            nodes = sorted(g.nodes)
            s, t = (int(v) for v in gen.choice(nodes, size=2, replace=False))
            sp = Dijkstra(g)
            path = sp.path(s, t)
            on = [v for v in path[1:-1]] or nodes
            # distrust pairs within the default route, so the heuristic has work to do
            pairs = {frozenset((int(gen.choice(on)), int(gen.choice(path)))) for _ in range(constraints)}
            pairs = [tuple(c) for c in pairs if len(c) == 2 and set(c) != {s, t}]
            sp.reset()  # so the heuristic's first search is timed, not remembered from the line above
            t0 = clock()
            got = cons_route(g, s, t, pairs, sp=sp)
            h = clock() - t0
            row = {"nodes": n, "instance": i, "heuristic_ms": 1e3 * h, "dijkstra_calls": sp.calls,
                   "exact_ms": math.nan, "ratio": math.nan}
            if n <= exact_up_to:
                t0 = clock()
                exact = shortest_path_avoiding(g, s, t, pairs)
                row["exact_ms"] = 1e3 * (clock() - t0)
                if exact is not None and got is not None and violations(got[0], pairs) == 0:
                    row["ratio"] = path_length(g, got[0]) / path_length(g, exact)
            rows.append(row)
    return pd.DataFrame(rows)


def setup_table(params: Params | None = None, *, rng=0) -> pd.DataFrame:
    """The two stand-in topologies: routers, links, mean degree, diameter in hops."""
    p = params or Params()
    gen_graph = make_rng(_seed_of(rng)).spawn(3)[0]
    seed = _seed_of(gen_graph)
    rows = []
    for name, g in (("campus (Figure 1)", _graph(p.campus_nodes, p.campus_alpha, p.campus_beta, seed)),
                    ("ISP, AS 3967 (Figures 2-4)", _graph(p.isp_nodes, p.isp_alpha, p.isp_beta, seed))):
        rows.append({"network": name, "routers": g.number_of_nodes(), "links": g.number_of_edges(),
                     "mean_degree": 2 * g.number_of_edges() / g.number_of_nodes(),
                     "diameter_hops": nx.diameter(g)})
    return pd.DataFrame(rows).set_index("network")


__all__ = ["Params", "COUNTERFACTUALS", "Dijkstra", "cons_route", "violations", "Recovery", "baselines",
           "route", "figure1", "figure2", "figure3", "figure4", "optimality", "measure_runtime", "setup_table"]
