"""The lab's scorecard: every paper's computed verdict and honest counts.

The headline is predictions within tolerance over predictions scored.
Fits and inputs are counted apart, claims are counted only when they can
fail, and the claims that cannot fail are listed by name (see pysim.scoring).
"""
from __future__ import annotations

import copy
import datetime as dt
import functools

from pysim import ledger
from pysim.parallel import executor_for
from pysim.scoring import COUNT_KEYS, score_paper, totals_of


def scorecard(ids, *, quick: bool, seed: int = 0, jobs: int = 1, executor=None, entries=None) -> dict:
    """The scorecard for ``ids``: per paper and per artifact, verdicts and counts. Papers are scored
    ``jobs`` at a time in a pool of processes (or on ``executor``), each independently of the others.
    ``entries`` may give some papers' rows already computed for the same seed and profile (as each
    notebook computes its own, see :func:`pysim.notebook.Score`); the others are scored here."""
    card = {"generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "profile": "quick" if quick else "full", "seed": seed, "papers": {}}
    ids = list(ids)
    known = dict(entries or {})
    todo = [pid for pid in ids if pid not in known]
    if executor is None and jobs <= 1:
        computed = [paper_entry(pid, seed=seed, quick=quick) for pid in todo]
    else:
        with executor_for(jobs=jobs, executor=executor) as pool:
            computed = list(pool.map(functools.partial(paper_entry, seed=seed, quick=quick), todo))
    known.update(zip(todo, computed, strict=True))
    card["papers"] = {pid: known[pid] for pid in ids}
    return card


def paper_entry(pid: str, *, seed: int, quick: bool) -> dict:
    """One paper's row of the scorecard; a broken ledger or model is an error row, not a crash."""
    try:
        entry = score_paper(pid, seed=seed, quick=quick)
    except Exception as e:
        entry = {"title": pid, "verdict": "error", "artifacts": {}, "error": f"{type(e).__name__}: {e}",
                 "deviations": {"stale": [], "unexplained": []}, **totals_of([])}
    return finish_entry(pid, entry)


def finish_entry(pid: str, entry: dict) -> dict:
    """A scored paper as the scorecard keeps it: without per-claim detail, with what is not modelled."""
    entry = copy.deepcopy(entry)
    for a in entry["artifacts"].values():
        a.pop("claim_results", None)
    entry["not_modelled"] = [{"id": i, "caption": c, "why": w} for i, c, w in _not_modelled(pid)]
    return entry


def totals(card: dict) -> dict:
    """Counts over the whole scorecard."""
    t = {"papers": len(card["papers"])}
    t.update({k: sum(p.get(k, 0) for p in card["papers"].values()) for k in COUNT_KEYS})
    t["claims_cannot_fail"] = [f"{pid}: {c}" for pid, p in card["papers"].items()
                               for c in p.get("claims_cannot_fail", [])]
    t["verdicts"] = {}
    for p in card["papers"].values():
        t["verdicts"][p["verdict"]] = t["verdicts"].get(p["verdict"], 0) + 1
    return t


def headline(t: dict) -> str:
    """One line: predictions within / scored, fits, inputs, claims held / claims that can fail."""
    return (f"predictions within tolerance {t['predictions_within']} / {t['predictions_scored']}; "
            f"fits {t['fits']}; inputs {t['inputs']}; claims held {t['claims_held']} / {t['claims_can_fail']} "
            f"that can fail ({len(t['claims_cannot_fail'])} cannot fail)")


def _not_modelled(pid: str) -> tuple:
    try:
        return ledger.load(pid).not_modelled
    except Exception:  # a malformed paper already shows as an error row
        return ()


def markdown(card: dict) -> str:
    """scorecard.md: the headline, then a row per paper and per artifact."""
    t = totals(card)
    lines = [f"# Scorecard ({card['profile']} profile, seed {card.get('seed', 0)}, {card['generated']})", "",
             f"{t['papers']} papers; {headline(t)}.", "",
             "| paper | artifact | verdict | predictions within / scored | fits | inputs | claims held / can fail "
             "| cannot fail |",
             "|---|---|---|---|---|---|---|---|"]
    for pid, p in card["papers"].items():
        lines.append(f"| **{pid}** | | **{p['verdict']}** | {p['predictions_within']} / {p['predictions_scored']} | "
                     f"{p['fits']} | {p['inputs']} | {p['claims_held']} / {p['claims_can_fail']} | "
                     f"{len(p['claims_cannot_fail'])} |")
        for aid, a in p["artifacts"].items():
            lines.append(f"| | {aid} | {a['verdict']} | {a['predictions_within']} / {a['predictions_scored']} | "
                         f"{a['fits']} | {a['inputs']} | {a['claims_held']} / {a['claims_can_fail']} | "
                         f"{', '.join(a['claims_cannot_fail'])} |")
        for nm in p.get("not_modelled", []):
            lines.append(f"| | {nm['id']} | not modelled: {nm['why']} | | | | | |")
        if p.get("error"):
            lines.append(f"| | | error: {p['error']} | | | | | |")
    if t["claims_cannot_fail"]:
        lines += ["", "Claims that cannot fail (they hold under their own counterfactual, so they are not counted):",
                  ""] + [f"- {c}" for c in t["claims_cannot_fail"]]
    return "\n".join(lines) + "\n"
