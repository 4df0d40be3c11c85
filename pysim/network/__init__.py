"""A packet network in C: hosts and routers, links of many kinds, output queues with schedulers,
TCP Reno and UDP traffic; tables of what happened.

>>> net = Network(rng=1)
>>> a, b = net.host("a"), net.host("b")
>>> _ = net.link(a, b, 10e6, 5e-3)
>>> net.route_shortest()
>>> f = net.tcp(a, b, bytes=1_000_000)
>>> net.run(10.0)
>>> bool(net.flows().loc[f, "done_s"] > 0)
True

A node's CPU handles every packet it receives, forwards or sends
(``cpu_packet_s`` plus ``cpu_byte_s`` per byte, one at a time): store and
forward. Links carry one
direction; :meth:`Network.link` makes both directions of a full-duplex link.
Link kinds set the bytes on the wire (:data:`LINK_KINDS`); a shared
segment (:meth:`Network.shared_segment`) makes stations contend by CSMA/CD
(Ethernet) or CSMA with collisions seen only at the end of a frame
(WaveLAN). Queue disciplines come from :mod:`pysim.network.queues`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pysim import _native
from pysim.network import queues
from pysim.rng import make_rng

#: Link kinds (wire bytes for a packet of ``s`` bytes): "p2p" s; "ethernet" s + 38 (preamble, header,
#: FCS, gap; padded to the 64-byte frame); "atm" 53 per 48 bytes of s + 16 (LLC/SNAP, AAL5 trailer);
#: "hdlc" (s + 4) x 63/62 + 1 (address, control, FCS, bit stuffing, flag); "wavelan" an Ethernet frame
#: behind a 16-byte radio preamble; "myrinet" s + 8 (route, type, CRC).
LINK_KINDS = {"p2p": 0, "ethernet": 1, "atm": 2, "hdlc": 3, "wavelan": 4, "myrinet": 5}
MEDIA = {"dedicated": 0, "csma/cd": 1, "csma": 2}
UDP_PATTERNS = {"cbr": 0, "poisson": 1, "onoff": 2, "rpc": 3}


def wire_bytes(kind: str, size: int) -> int:
    """Bytes a packet of ``size`` takes on a link of ``kind`` (see :data:`LINK_KINDS`)."""
    if kind not in LINK_KINDS:
        raise ValueError(f"kind must be one of {sorted(LINK_KINDS)}, got {kind!r}")
    if kind == "p2p":
        return size
    if kind == "ethernet":
        return 8 + 14 + max(size, 46) + 4 + 12
    if kind == "atm":
        return (size + 16 + 47) // 48 * 53
    if kind == "hdlc":
        return -(-(size + 4) * 63 // 62) + 1
    if kind == "wavelan":
        return 16 + 14 + max(size, 46) + 4
    return size + 8


class Network:
    """A network under construction, then run; nodes and links are numbered as they are added."""

    def __init__(self, *, rng=0):
        self._gen = make_rng(rng)
        self._net = _native.PacketNet(self._gen.bit_generator.capsule)
        self.names, self.link_ends, self._links, self.flow_kinds = [], [], [], []
        self._segments = 0

    # --- topology -----------------------------------------------------------------------------------
    def host(self, name: str = "", *, cpu_packet_s: float = 0.0, cpu_byte_s: float = 0.0) -> int:
        """A node; a router is a host whose routes send packets on (see :meth:`route`)."""
        node = self._net.add_node(cpu_packet_s, cpu_byte_s)
        self.names.append(name or f"n{node}")
        return node

    router = host

    def one_way(self, a: int, b: int, bits_per_s: float, delay_s: float, *, kind: str = "p2p", queue=None,
                mtu: int = 0, extra_bytes: int = 0) -> int:
        """One direction of a link from ``a`` to ``b``; returns the link's number."""
        if kind not in LINK_KINDS:
            raise ValueError(f"kind must be one of {sorted(LINK_KINDS)}, got {kind!r}")
        spec = {"from": a, "to": b, "kind": LINK_KINDS[kind], "bits_per_s": float(bits_per_s),
                "delay_s": float(delay_s), "mtu": int(mtu), "extra_bytes": int(extra_bytes),
                "queue": queue or queues.fifo()}
        link = self._net.add_link(spec)
        self.link_ends.append((a, b))
        self._links.append({"kind": kind, "bits_per_s": bits_per_s, "delay_s": delay_s})
        return link

    def link(self, a: int, b: int, bits_per_s: float, delay_s: float, *, kind: str = "p2p", queue=None,
             queue_back=None, mtu: int = 0) -> tuple:
        """A full-duplex link: (a to b, b to a); ``queue_back`` defaults to ``queue``'s kind of FIFO."""
        ab = self.one_way(a, b, bits_per_s, delay_s, kind=kind, queue=queue, mtu=mtu)
        ba = self.one_way(b, a, bits_per_s, delay_s, kind=kind, queue=queue_back, mtu=mtu)
        return ab, ba

    def shared_segment(self, nodes, hub: int, bits_per_s: float = 10e6, delay_s: float = 25e-6, *,
                       medium: str = "csma/cd", kind: str = "ethernet", slot_s: float = 51.2e-6,
                       queue=None) -> list:
        """Stations ``nodes`` sending to ``hub`` over one shared medium: their links contend (the hub's
        replies travel on a dedicated link each way back, as a switch port's would). Returns the links."""
        if medium not in MEDIA or medium == "dedicated":
            raise ValueError(f"medium must be 'csma/cd' or 'csma', got {medium!r}")
        segment = self._segments
        self._segments += 1
        out = []
        for n in nodes:
            spec = {"from": n, "to": hub, "kind": LINK_KINDS[kind], "bits_per_s": float(bits_per_s),
                    "delay_s": float(delay_s), "medium": MEDIA[medium], "segment": segment, "slot_s": slot_s,
                    "queue": queue or queues.fifo()}
            out.append(self._net.add_link(spec))
            self.link_ends.append((n, hub))
            self._links.append({"kind": kind, "bits_per_s": bits_per_s, "delay_s": delay_s})
        return out

    def route(self, node: int, dst: int, link: int) -> None:
        """Packets at ``node`` for ``dst`` leave on ``link``."""
        self._net.route(node, dst, link)

    def route_shortest(self, weight: str = "hops") -> None:
        """Routes along shortest paths (by hop count, or by ``"delay"``), for every pair of nodes."""
        import networkx as nx
        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.names)))
        for k, (a, b) in enumerate(self.link_ends):
            w = 1.0 if weight == "hops" else self._links[k]["delay_s"] + 1e-12
            if not g.has_edge(a, b) or g[a][b]["w"] > w:
                g.add_edge(a, b, w=w, link=k)
        for src, paths in nx.all_pairs_dijkstra_path(g, weight="w"):
            for dst, path in paths.items():
                if len(path) > 1:
                    self._net.route(src, dst, g[path[0]][path[1]]["link"])

    def classify(self, link: int, classifier) -> None:
        """Choose the class of every packet queued on ``link`` with ``classifier``: a Numba cfunc of
        signature ``int32(uint32 flow, uint32 src, uint32 dst, uint32 size, uint32 kind)``."""
        address = getattr(classifier, "address", None)
        if address is None:
            raise TypeError("the classifier must be a numba.cfunc (it has an .address)")
        self._net.set_classifier(link, address, classifier)

    # --- traffic ------------------------------------------------------------------------------------------
    def tcp(self, src: int, dst: int, *, bytes: int = -1, start_s: float = 0.0, mss: int = 1460,  # noqa: A002
            header_bytes: int = 40, initial_cwnd: float = 1, max_window: float = 64, min_rto_s: float = 0.2,
            initial_rto_s: float = 1.0, delayed_ack: bool = False, ack_delay_s: float = 0.1, ecn: bool = False,
            cls: int = 0) -> int:
        """A TCP Reno connection sending ``bytes`` (forever if negative); returns the flow's number."""
        flow = self._net.add_tcp({"src": src, "dst": dst, "bytes": int(bytes), "start_s": float(start_s),
                                  "mss": int(mss), "header_bytes": int(header_bytes),
                                  "initial_cwnd": float(initial_cwnd), "max_window": float(max_window),
                                  "min_rto_s": float(min_rto_s), "initial_rto_s": float(initial_rto_s),
                                  "delayed_ack": int(delayed_ack), "ack_delay_s": float(ack_delay_s),
                                  "ecn": int(ecn), "cls": int(cls)})
        self.flow_kinds.append("tcp")
        return flow

    def udp(self, src: int, dst: int, *, pattern: str = "cbr", rate_pps: float = 0.0, size: int = 1000,
            start_s: float = 0.0, stop_s: float = 0.0, on_s: float = 0.0, off_s: float = 0.0,
            reply_size: int = 0, service_s: float = 0.0, outstanding: int = 0, cls: int = 0) -> int:
        """UDP traffic: ``"cbr"``, ``"poisson"`` or ``"onoff"`` at ``rate_pps``, or ``"rpc"``:
        ``outstanding`` requests of ``size`` bytes kept in flight, each answered with ``reply_size``
        bytes after ``service_s`` of the destination's CPU."""
        if pattern not in UDP_PATTERNS:
            raise ValueError(f"pattern must be one of {sorted(UDP_PATTERNS)}, got {pattern!r}")
        flow = self._net.add_udp({"src": src, "dst": dst, "pattern": UDP_PATTERNS[pattern],
                                  "rate_pps": float(rate_pps), "size": int(size), "start_s": float(start_s),
                                  "stop_s": float(stop_s), "on_s": float(on_s), "off_s": float(off_s),
                                  "reply_size": int(reply_size), "service_s": float(service_s),
                                  "outstanding": int(outstanding), "cls": int(cls)})
        self.flow_kinds.append(f"udp/{pattern}")
        return flow

    def trace_queues(self, interval_s: float, samples: int) -> None:
        """Sample every queue's length (packets) every ``interval_s``, up to ``samples`` times."""
        self._net.trace_queues(float(interval_s), int(samples))

    # --- running and results ------------------------------------------------------------------------------
    def run(self, until_s: float) -> None:
        self._net.run(float(until_s))

    @property
    def now(self) -> float:
        return self._net.now

    @property
    def packets_moved(self) -> int:
        """Packet transmissions on links so far (the speed figure of ``make bench``)."""
        return self._net.packets_moved

    def flows(self) -> pd.DataFrame:
        """Per flow: what was sent and delivered, goodput (bit/s of payload between the first and the
        last delivery), mean one-way delay, retransmissions, and TCP's final window and RTT estimate."""
        rows = []
        for f, kind in enumerate(self.flow_kinds):
            s = self._net.flow_stats(f)
            span = s["last_s"] - s["first_s"]
            s["goodput_bps"] = 8 * s["delivered_bytes"] / span if span > 0 else float("nan")
            s["mean_delay_s"] = s["delay_sum_s"] / s["delivered_packets"] if s["delivered_packets"] else float("nan")
            rows.append({"kind": kind, **s})
        return pd.DataFrame(rows).rename_axis("flow")

    def queues(self) -> pd.DataFrame:
        """Per link: arrivals, drops, ECN marks, departures, time-average length (packets and bytes),
        utilisation and collisions."""
        rows = []
        now = self.now
        for k, (a, b) in enumerate(self.link_ends):
            q = self._net.queue_stats(k)
            ln = self._net.link_stats(k)
            rows.append({"from": self.names[a], "to": self.names[b], "arrivals": q["arrivals"], "drops": q["drops"],
                         "marks": q["marks"], "departures": q["departures"], "bytes_out": q["bytes_out"],
                         "mean_packets": q["area_packets"] / now if now > 0 else float("nan"),
                         "mean_bytes": q["area_bytes"] / now if now > 0 else float("nan"),
                         "utilisation": ln["busy_s"] / now if now > 0 else float("nan"),
                         "collisions": ln["collisions"]})
        return pd.DataFrame(rows).rename_axis("link")

    def class_stats(self, link: int, classes: int) -> pd.DataFrame:
        """Per class of a link's scheduler: packets and bytes sent, drops."""
        q = self._net.queue_stats(link)
        return pd.DataFrame({"departures": q["class_departures"][:classes], "bytes": q["class_bytes"][:classes],
                             "drops": q["class_drops"][:classes]}).rename_axis("class")

    def queue_trace(self, link: int) -> np.ndarray:
        """The samples of :meth:`trace_queues` for one link (packets)."""
        return np.frombuffer(self._net.queue_trace(link), dtype=np.uint32).copy()
