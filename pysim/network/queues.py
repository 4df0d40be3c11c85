"""Output-queue specifications for :class:`pysim.network.Network` links.

Each function returns the specification the C network takes; the link's
queue applies it to every packet leaving on that link.

* :func:`fifo`: first in, first out, dropping arrivals when full (tail drop).
* :func:`red`: Random Early Detection (Floyd and Jacobson 1993), with ns-2's
  defaults, the "gentle" variant and ECN marking.
* :func:`sfq`: Stochastic Fairness Queueing (McKenney 1990): flows hashed
  into buckets served round robin; a full queue drops from the longest.
* :func:`drr`: Deficit Round Robin (Shreedhar and Varghese 1995), a quantum
  of bytes per class and round.
* :func:`wfq`: weighted fair queueing, self-clocked (Golestani 1994).
* :func:`tbf`: a token bucket shaping to a rate with a burst.
* :func:`cbq`: Class-Based Queueing (Floyd and Jacobson 1995, as ALTQ and
  ns-2 implement it): a tree of classes, each with its share of the link,
  a priority, permission to borrow from its parent, and a maximum burst;
  an estimator of each class's idle time decides when it is over its
  share, and an overlimit class waits for the kernel timer's next tick.

Classes (DRR, WFQ, CBQ) are chosen by the flow's ``cls`` unless a
classifier is set on the link (:meth:`pysim.network.Network.classify`).
"""
from __future__ import annotations

from dataclasses import dataclass

KINDS = {"fifo": 0, "red": 1, "sfq": 2, "drr": 3, "wfq": 4, "tbf": 5, "cbq": 6}
MAX_CLASSES = 64


def _limits(limit_packets, limit_bytes):
    if limit_packets is not None and limit_packets < 1:
        raise ValueError(f"limit_packets must be >= 1, got {limit_packets!r}")
    if limit_bytes is not None and limit_bytes < 1:
        raise ValueError(f"limit_bytes must be >= 1, got {limit_bytes!r}")
    return {"limit_packets": int(limit_packets or 0), "limit_bytes": int(limit_bytes or 0)}


def fifo(limit_packets: int | None = 50, limit_bytes: int | None = None) -> dict:
    """Tail drop once ``limit_packets`` (or ``limit_bytes``) are queued; None: no limit."""
    return {"kind": KINDS["fifo"], **_limits(limit_packets, limit_bytes)}


def red(min_th: float = 5, max_th: float = 15, *, max_p: float = 0.1, wq: float = 0.002,
        limit_packets: int | None = 50, gentle: bool = False, ecn: bool = False, in_bytes: bool = False,
        mean_pkt_bytes: float = 1000) -> dict:
    """RED with thresholds in packets (or bytes with ``in_bytes``); the defaults are ns-2's
    (``thresh_ 5``, ``maxthresh_ 15``, ``linterm_ 10``, ``q_weight_ 0.002``, ``mean_pktsize_ 1000``)."""
    if not (0 <= min_th < max_th) or not 0 < max_p <= 1 or not 0 < wq <= 1 or not mean_pkt_bytes > 0:
        raise ValueError("RED needs 0 <= min_th < max_th, 0 < max_p <= 1, 0 < wq <= 1 and mean_pkt_bytes > 0")
    return {"kind": KINDS["red"], **_limits(limit_packets, None), "red_min": float(min_th),
            "red_max": float(max_th), "red_max_p": float(max_p), "red_wq": float(wq), "red_gentle": int(gentle),
            "red_ecn": int(ecn), "red_bytes": int(in_bytes), "mean_pkt_bytes": float(mean_pkt_bytes)}


def sfq(buckets: int = 16, limit_packets: int | None = 50) -> dict:
    """Flows hashed into ``buckets`` (at most 64) served one packet each in turn."""
    if not 1 <= buckets <= MAX_CLASSES:
        raise ValueError(f"buckets must be in [1, {MAX_CLASSES}], got {buckets!r}")
    return {"kind": KINDS["sfq"], **_limits(limit_packets, None), "sfq_buckets": int(buckets)}


def _classes(values, what):
    values = list(values)
    if not 1 <= len(values) <= MAX_CLASSES or not all(v > 0 for v in values):
        raise ValueError(f"{what}: 1 to {MAX_CLASSES} classes, each > 0; got {values}")
    return [{"rate_share": float(v), "parent": -1} for v in values]


def drr(quanta_bytes, *, limit_packets: int | None = 100, default_class: int = 0) -> dict:
    """Deficit round robin: class k gets ``quanta_bytes[k]`` bytes a round."""
    classes = _classes(quanta_bytes, "drr")
    _check_default(default_class, classes)
    return {"kind": KINDS["drr"], **_limits(limit_packets, None), "classes": classes,
            "default_class": default_class}


def wfq(weights, *, limit_packets: int | None = 100, default_class: int = 0) -> dict:
    """Weighted fair queueing: class k's share is ``weights[k] / sum(weights)`` while backlogged."""
    classes = _classes(weights, "wfq")
    _check_default(default_class, classes)
    return {"kind": KINDS["wfq"], **_limits(limit_packets, None), "classes": classes,
            "default_class": default_class}


def tbf(rate_bps: float, bucket_bytes: float, *, limit_packets: int | None = 100) -> dict:
    """A token bucket: ``rate_bps`` on average, bursts up to ``bucket_bytes``."""
    if not rate_bps > 0 or not bucket_bytes > 0:
        raise ValueError("a token bucket needs rate_bps > 0 and bucket_bytes > 0")
    return {"kind": KINDS["tbf"], **_limits(limit_packets, None), "tbf_rate_bps": float(rate_bps),
            "tbf_bucket_bytes": float(bucket_bytes)}


@dataclass(frozen=True)
class CbqClass:
    """A CBQ class: its ``share`` of the link, the class it may borrow from (``parent``; -1 for the
    root, which stands for the link), ``priority`` (0 first), ``borrow`` and ``maxburst`` (packets)."""

    share: float
    parent: int = 0
    priority: int = 1
    borrow: bool = True
    maxburst: int = 16
    limit_packets: int = 0


def cbq(classes, *, timer_s: float = 0.0, gain_shift: int = 5, mean_pkt_bytes: float = 1000,
        limit_packets: int | None = 100, default_class: int | None = None) -> dict:
    """Class-based queueing over ``classes`` (:class:`CbqClass`, the first usually the root: share
    1, parent -1). ``timer_s`` is the kernel timer an overlimit class waits for (0: exact; ALTQ's
    BSD kernels tick every 10 ms); ``gain_shift`` sets the estimator's filter gain 2**-k (ALTQ: 5)."""
    classes = list(classes)
    if not 1 <= len(classes) <= MAX_CLASSES:
        raise ValueError(f"cbq: 1 to {MAX_CLASSES} classes, got {len(classes)}")
    if timer_s < 0 or not 1 <= gain_shift <= 16 or not mean_pkt_bytes > 0:
        raise ValueError("cbq: timer_s >= 0, gain_shift in [1, 16], mean_pkt_bytes > 0")
    specs = []
    for k, c in enumerate(classes):
        if not 0 < c.share <= 1 or not -1 <= c.parent < len(classes) or c.parent == k or not 0 <= c.priority <= 7 \
                or c.maxburst < 1:
            raise ValueError(f"cbq class {k}: share in (0, 1], parent -1 or another class, priority 0-7, "
                             f"maxburst >= 1; got {c}")
        specs.append({"rate_share": float(c.share), "parent": int(c.parent), "priority": int(c.priority),
                      "borrow": int(c.borrow), "maxburst": int(c.maxburst), "limit": int(c.limit_packets)})
    leaves = [k for k in range(len(classes)) if all(c.parent != k for c in classes)]
    if default_class is None:
        default_class = leaves[-1]
    if default_class not in leaves:
        raise ValueError(f"cbq: the default class must be a leaf; leaves are {leaves}")
    return {"kind": KINDS["cbq"], **_limits(limit_packets, None), "classes": specs, "default_class": default_class,
            "cbq_timer_s": float(timer_s), "cbq_gain_shift": int(gain_shift), "mean_pkt_bytes": float(mean_pkt_bytes)}


def _check_default(default_class, classes):
    if not 0 <= default_class < len(classes):
        raise ValueError(f"default_class must name one of the {len(classes)} classes, got {default_class}")
