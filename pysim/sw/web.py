"""A web page as a browser loads it over TCP, and the statistics browser timings are read with.

:func:`transfer_s` is a transfer under slow start on a path of a given
round trip and bottleneck; :func:`page_load` is one page view: DNS and
connect, the request, the server's time (a dynamic page may flush its static
head first), the HTML, then the embedded objects over ``connections``
persistent connections sharing the bottleneck, then the browser's layout;
:class:`PageTiming` holds its first byte, HTML done and ``onload``.
:func:`trimmed_mean` drops the slow tail of a right-skewed latency sample.

The settings of a page and a browser are read off any object that has them
by name (``html_bytes``, ``connections``, ``mss_bytes``, ``initial_cwnd``,
``dns_s``, ``head_s``, ``flush_head``, ``object_server_s``,
``render_cpu_s``): a :class:`Browser`, or a model's own parameters.

>>> round(transfer_s(1460, rtt_s=0.1, bits_per_s=1e6)[0], 4)  # one segment: its serialisation + half an RTT
0.0617
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Browser:
    """A page and the browser that loads it (the defaults: a 2002 news page in IE 5/6)."""

    html_bytes: int = 40_000
    connections: int = 2          # RFC 2616's two persistent connections per server
    mss_bytes: int = 1460
    initial_cwnd: int = 2         # RFC 2581
    dns_s: float = 0.1
    head_s: float = 0.02          # a dynamic page's static head leaves after this
    flush_head: bool = True
    object_server_s: float = 0.02
    render_cpu_s: float = 0.3


def transfer_s(nbytes: int, rtt_s: float, bits_per_s: float, *, cwnd: float = 2, mss: int = 1460,
               max_cwnd: float = 64) -> tuple:
    """Time from the first data segment leaving the sender to the last byte reaching the receiver, under
    slow start from ``cwnd`` segments (doubling each round trip, at most ``max_cwnd``), on a path of
    ``rtt_s`` and bottleneck ``bits_per_s``; and the congestion window afterwards.

    Each round sends min(cwnd, remaining) segments; a round lasts max(RTT, its serialisation), and the last
    round ends when its last byte arrives: its serialisation plus the one-way delay."""
    if nbytes < 0 or not rtt_s > 0 or not bits_per_s > 0 or not cwnd >= 1:
        raise ValueError(f"need nbytes >= 0, rtt_s > 0, bits_per_s > 0, cwnd >= 1; got {nbytes}, {rtt_s}, "
                         f"{bits_per_s}, {cwnd}")
    segs = math.ceil(nbytes / mss)
    t, w = 0.0, float(cwnd)
    while segs > 0:
        send = min(int(w), segs)
        ser = send * mss * 8 / bits_per_s
        segs -= send
        if segs == 0:
            t += ser + rtt_s / 2
        else:
            t += max(rtt_s, ser)
            w = min(2 * w, max_cwnd)
    return t, w


@dataclass(frozen=True)
class PageTiming:
    """One page view's events, seconds from the click."""

    first_byte_s: float
    html_done_s: float
    onload_s: float

    @property
    def fetch_s(self) -> float:
        return self.html_done_s

    @property
    def render_s(self) -> float:
        return self.onload_s - self.html_done_s


def page_load(p, rtt_s: float, bits_per_s: float, object_bytes, *, server_s: float = 0.0,
              object_server_s: float | None = None, object_rtt_s: float | None = None,
              setup_extra_s: float = 0.0) -> PageTiming:
    """A page view under the settings ``p`` (a :class:`Browser`, or anything with its fields): DNS and connect (plus ``setup_extra_s``, e.g. a SYN retry), the request, the server's
    ``server_s`` (the static head leaves after ``p.head_s`` when ``p.flush_head``), the HTML, then the
    uncached ``object_bytes`` over ``p.connections`` persistent connections (the first reuses the HTML's,
    the others open on demand), each object a round trip plus its server time plus its transfer, the
    connections sharing the bottleneck; ``onload`` after the browser's layout. ``object_rtt_s`` and
    ``object_server_s`` place the objects elsewhere (a CDN)."""
    o_rtt = rtt_s if object_rtt_s is None else object_rtt_s
    o_srv = p.object_server_s if object_server_s is None else object_server_s
    req_at = p.dns_s + rtt_s + setup_extra_s + rtt_s / 2          # the request reaches the server
    head = min(p.head_s, server_s) if p.flush_head else server_s
    first_byte = req_at + head + p.mss_bytes * 8 / bits_per_s + rtt_s / 2
    html_t, cwnd = transfer_s(p.html_bytes, rtt_s, bits_per_s, cwnd=p.initial_cwnd, mss=p.mss_bytes)
    tail = min(p.html_bytes, 8 * p.mss_bytes) * 8 / bits_per_s  # what is left to send once generation ends
    html_done = max(req_at + head + html_t, req_at + server_s + tail + rtt_s / 2)
    k = p.connections
    share_bps = bits_per_s / k if len(object_bytes) > 1 else bits_per_s
    same_path = object_rtt_s is None
    free = [html_done] + [html_done + o_rtt + (p.dns_s if not same_path else 0.0)] * (k - 1)
    windows = [cwnd if same_path else p.initial_cwnd] + [p.initial_cwnd] * (k - 1)
    if not same_path:
        free[0] = html_done + p.dns_s + o_rtt
    done = html_done
    for b in object_bytes:
        i = int(np.argmin(free))
        t, windows[i] = transfer_s(int(b), o_rtt, share_bps, cwnd=windows[i], mss=p.mss_bytes)
        free[i] += o_rtt / 2 + o_srv + t
        done = max(done, free[i])
    return PageTiming(first_byte, html_done, done + p.render_cpu_s)



def trimmed_mean(x: np.ndarray, share: float = 0.05) -> float:
    """Mean after dropping the top ``share`` of values (the paper's "extreme n%" of a right-skewed
    latency: the slow tail)."""
    x = np.sort(np.asarray(x, dtype=float))
    keep = len(x) - int(math.floor(share * len(x)))
    return float(x[:keep].mean())


