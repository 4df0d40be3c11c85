"""Standard scenarios on the packet network, shared by the tests, the benchmarks and the papers."""
from __future__ import annotations

from pysim.network import Network, queues


def red_dumbbell(flows: int = 4, until_s: float = 50.0, *, rng=0, bottleneck_bps: float = 10e6,
                 delay_s: float = 20e-3) -> tuple:
    """``flows`` TCP Reno flows (1000-byte segments, window 64) from hosts 1, 2, ... ms away through a
    RED bottleneck (5/15 packets, w 0.002, max_p 0.1, limit 50) to hosts 1 ms beyond it. Runs it and
    returns (network, bottleneck link)."""
    net = Network(rng=rng)
    r1, r2 = net.router("r1"), net.router("r2")
    srcs = [net.host(f"s{i}") for i in range(flows)]
    dsts = [net.host(f"d{i}") for i in range(flows)]
    for i in range(flows):
        net.link(srcs[i], r1, 100e6, 1e-3 * (i + 1), queue=queues.fifo(1000))
        net.link(r2, dsts[i], 100e6, 1e-3, queue=queues.fifo(1000))
    bottleneck, _ = net.link(r1, r2, bottleneck_bps, delay_s, queue=queues.red(5, 15, mean_pkt_bytes=1040),
                             queue_back=queues.fifo(1000))
    net.route_shortest()
    for i in range(flows):
        net.tcp(srcs[i], dsts[i], mss=1000, max_window=64)
    net.run(until_s)
    return net, bottleneck
