"""The random-number contract: one Generator(PCG64) per experiment.

Every function that draws takes ``rng``: an int seed, a SeedSequence, a
Generator or None (SPEC 7). Components get independent child streams with
:func:`spawn`, so adding a component never changes another one's draws. C code
draws from the same bit generator through its capsule (see :func:`native_rng`).
"""
from __future__ import annotations

import contextlib
import secrets

import numpy as np

__all__ = ["make_rng", "spawn", "resolve_seed", "native_rng"]


def make_rng(rng=0) -> np.random.Generator:
    """Turn an int | SeedSequence | Generator into a Generator on PCG64.

    A Generator is passed through unchanged (its stream goes on); anything
    else seeds a new PCG64 Generator, pinned so that a seed means the same
    stream across NumPy versions.

    Raises
    ------
    TypeError
        If ``rng`` is none of the accepted kinds.
    ValueError
        If an int seed is negative.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        raise TypeError("rng=None is explicit unseeded use: call resolve_seed(None) first and record the seed")
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        raise TypeError(f"rng must be an int seed, a SeedSequence or a Generator, got {type(rng).__name__}")
    if isinstance(rng, (int, np.integer)) and rng < 0:
        raise ValueError(f"rng seed must be >= 0, got {rng}")
    return np.random.Generator(np.random.PCG64(rng))


def resolve_seed(rng=0):
    """Return ``(generator, seed)``; for ``rng=None`` pick a fresh seed and report it.

    The seed is what a reader passes back to reproduce the run; it is None
    when a Generator was given (its history is the caller's).
    """
    if rng is None:
        rng = secrets.randbits(63)
    seed = int(rng) if isinstance(rng, (int, np.integer)) else None
    return make_rng(rng), seed


def spawn(rng, n: int) -> list[np.random.Generator]:
    """``n`` independent child Generators of ``rng`` (SeedSequence.spawn)."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    return list(make_rng(rng).spawn(int(n)))


@contextlib.contextmanager
def native_rng(gen: np.random.Generator):
    """Lend a Generator's bit generator to C: yields its capsule, holding its lock.

    C consumes the very stream Python does, so a seed fixes Python and C draws
    alike.
    """
    bg = gen.bit_generator
    with bg.lock:
        yield bg.capsule
