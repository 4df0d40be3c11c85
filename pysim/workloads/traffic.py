"""Network traffic: web objects with Zipf popularity and heavy-tailed sizes, audio and video streams,
and boot storms.

* :func:`web_objects` gives ``n`` objects with Pareto sizes (capped) and
  Zipf popularity; :func:`web_requests` draws requests for them; and
  :func:`segments` cuts an object into MSS-sized packets.
* :func:`cbr_audio` is a constant-bit-rate voice or audio stream: a frame
  every ``frame_ms`` of ``rate_bps * frame_ms`` bits.
* :func:`video_frames` gives frame sizes of a group-of-pictures stream
  (a large I frame, then smaller P frames), jittered.
* :func:`boot_storm` gives the request times of clients that all boot
  within a window, each fetching its boot files in turn.
* :func:`diurnal_load` and :func:`class_mix` are a day of users: the request
  rate by hour, and the share of each connection class (LAN at work,
  broadband or dial-up at home) by hour.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pysim.rng import make_rng
from pysim.workloads.addresses import zipf_cdf


def web_objects(n: int, *, alpha: float = 0.8, pareto_shape: float = 1.2, min_bytes: int = 1000,
                max_bytes: int = 10_000_000, rng=0) -> pd.DataFrame:
    """``n`` objects ranked by popularity (rank 0 most popular): Zipf(``alpha``) request shares and
    Pareto(``pareto_shape``, ``min_bytes``) sizes capped at ``max_bytes``."""
    if n < 1 or not alpha > 0 or not pareto_shape > 0 or not 0 < min_bytes <= max_bytes:
        raise ValueError("need n >= 1, alpha > 0, pareto_shape > 0 and 0 < min_bytes <= max_bytes")
    gen = make_rng(rng)
    sizes = np.minimum(min_bytes * (1 + gen.pareto(pareto_shape, n)), max_bytes).astype(np.int64)
    cdf = zipf_cdf(n, alpha)
    share = np.diff(np.concatenate([[0.0], cdf]))
    return pd.DataFrame({"bytes": sizes, "share": share}).rename_axis("object")


def web_requests(objects: pd.DataFrame, count: int, *, rng=0) -> np.ndarray:
    """``count`` requests, each an object index drawn by the objects' shares."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count!r}")
    cdf = np.cumsum(objects["share"].to_numpy())
    return np.minimum(np.searchsorted(cdf, make_rng(rng).random(count) * cdf[-1]), len(cdf) - 1)


def segments(nbytes: int, mss: int = 1460) -> np.ndarray:
    """An object's payload cut at the MSS: full segments and one remainder."""
    if nbytes < 0 or mss < 1:
        raise ValueError("need nbytes >= 0 and mss >= 1")
    full, rest = divmod(int(nbytes), mss)
    return np.array([mss] * full + ([rest] if rest else []), dtype=np.int64)


def cbr_audio(rate_bps: float = 64_000, frame_ms: float = 20.0, *, header_bytes: int = 40) -> dict:
    """A voice stream: one packet per frame; payload = rate x frame time (G.711: 64 kbit/s, 20 ms:
    160 bytes), plus the RTP/UDP/IP ``header_bytes``."""
    if not rate_bps > 0 or not frame_ms > 0:
        raise ValueError("rate_bps and frame_ms must be > 0")
    payload = int(round(rate_bps * frame_ms / 1000 / 8))
    return {"packets_per_s": 1000 / frame_ms, "payload_bytes": payload, "packet_bytes": payload + header_bytes,
            "wire_bps": (payload + header_bytes) * 8 * 1000 / frame_ms}


def video_frames(n: int, *, fps: float = 30.0, gop: int = 12, i_bytes: int = 40_000, p_bytes: int = 8_000,
                 jitter: float = 0.2, rng=0) -> pd.DataFrame:
    """``n`` frames at ``fps``: an I frame every ``gop`` frames, P frames between, each size scaled by
    a lognormal factor of spread ``jitter``."""
    if n < 0 or not fps > 0 or gop < 1 or min(i_bytes, p_bytes) < 1 or jitter < 0:
        raise ValueError("need n >= 0, fps > 0, gop >= 1, frame sizes >= 1, jitter >= 0")
    gen = make_rng(rng)
    kind = np.where(np.arange(n) % gop == 0, "I", "P")
    base = np.where(kind == "I", i_bytes, p_bytes)
    size = np.maximum(1, (base * np.exp(jitter * gen.standard_normal(n) - jitter ** 2 / 2)).astype(np.int64))
    return pd.DataFrame({"time_s": np.arange(n) / fps, "kind": kind, "bytes": size}).rename_axis("frame")


def boot_storm(clients: int, window_s: float, files, *, think_s: float = 0.0, rng=0) -> pd.DataFrame:
    """Clients booting at uniform random times within ``window_s``, each requesting ``files`` (a list
    of byte sizes) one after another with ``think_s`` between: the requests' nominal start times (a
    model adds the service time it computes)."""
    if clients < 0 or window_s < 0 or think_s < 0:
        raise ValueError("clients, window_s and think_s must be >= 0")
    gen = make_rng(rng)
    starts = np.sort(gen.uniform(0, window_s, clients)) if window_s else np.zeros(clients)
    rows = [{"client": c, "file": k, "bytes": int(size), "time_s": t0 + k * think_s}
            for c, t0 in enumerate(starts) for k, size in enumerate(files)]
    return pd.DataFrame(rows, columns=["client", "file", "bytes", "time_s"])


# --- the day's users ----------------------------------------------------------------------------------

def diurnal_load(hour: float, *, peak_hour: float, trough_fraction: float) -> float:
    """Request rate at ``hour`` (0-24, wrapping) as a fraction of the peak: a raised cosine from
    ``trough_fraction`` twelve hours from the peak up to 1 at ``peak_hour``."""
    if not 0 <= trough_fraction <= 1:
        raise ValueError(f"trough_fraction must be in [0, 1], got {trough_fraction}")
    return trough_fraction + (1 - trough_fraction) * 0.5 * (1 + math.cos(2 * math.pi * (hour - peak_hour) / 24))


def home_share(hour: float, *, day: float, night: float) -> float:
    """Share of users at home at ``hour``: ``day`` through working hours (9-17 h), ``night`` outside,
    with two-hour ramps (7-9 h and 17-19 h)."""
    h = hour % 24
    ramp = float(np.clip(min(h - 7, 19 - h) / 2, 0, 1))
    return night + (day - night) * ramp


def class_mix(hour: float, *, home_day: float, home_night: float, dialup_of_home: float) -> np.ndarray:
    """Shares of (LAN, broadband, dial-up) users at ``hour``: users away from home are on a LAN; those at
    home are on dial-up with share ``dialup_of_home``, broadband otherwise."""
    for name, v in (("home_day", home_day), ("home_night", home_night), ("dialup_of_home", dialup_of_home)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {v}")
    home = home_share(hour, day=home_day, night=home_night)
    return np.array([1 - home, home * (1 - dialup_of_home), home * dialup_of_home])

