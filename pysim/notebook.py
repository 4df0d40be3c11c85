"""Helpers a paper's notebook calls: versions and seed, comparisons, explanations, the score.

When ``pysim reproduce`` runs a notebook it sets PYSIM_RESULTS_DIR, and
:func:`save_table` / :func:`save_figure` write there (CSV; PNG and SVG), as
:class:`Score` writes the paper's scorecard row (``scorecard_entry.json``,
which the run's scorecard takes instead of scoring the paper again). In the
browser they only return what they were given.

Prose in a notebook never restates a number the model computes: the
comparison tables, :func:`explain` and :class:`Score` show them from code.
"""
from __future__ import annotations

import io
import json
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from pysim import __version__, ledger, params, scoring
from pysim.harness import slots
from pysim.results import ENTRY_FILE, write_bytes_atomic, write_text_atomic


def about(seed=0, quick=False) -> str:
    """One line with the versions and the seed, printed and returned. Under ``pysim reproduce``, first
    waits for a CPU slot (:mod:`pysim.harness.slots`), so that no more notebooks compute than there are
    cores."""
    slots.take()
    line = (f"pysim {__version__} | numpy {np.__version__} | pandas {pd.__version__} | "
            f"python {platform.python_version()} | seed={seed} | quick={quick}")
    print(line)
    return line


def results_dir() -> Path | None:
    d = os.environ.get("PYSIM_RESULTS_DIR")
    return Path(d) if d else None


def save_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Write a regenerated table as <name>.csv under the results folder (when reproducing)."""
    d = results_dir()
    if d is not None:
        write_text_atomic(d / f"{name}.csv", df.to_csv())
    return df


def save_figure(fig, name: str):
    """Write a figure as <name>.png and <name>.svg under the results folder (when reproducing)."""
    d = results_dir()
    if d is not None:
        for fmt in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, bbox_inches="tight")
            write_bytes_atomic(d / f"{name}.{fmt}", buf.getvalue())
    return fig


def compare(paper_id: str, artifact: str, df: pd.DataFrame, *, rows: int | None = 25):
    """The model's cells beside the published ones, worst predictions first (see pysim.scoring.compare).

    Long comparisons show their first ``rows`` rows; the whole table goes to
    ``compare_<artifact>.csv`` when reproducing.
    """
    cmp = scoring.compare(paper_id, artifact, df)
    save_table(cmp, f"compare_{artifact}")
    shown = cmp.head(rows) if rows is not None and len(cmp) > rows else cmp
    if not len(shown):
        return shown
    return shown.style.format({"published": "{:.4g}", "simulated": "{:.4g}", "rel_error": "{:+.1%}",
                               "tolerance": "{:.0%}"}).apply(_shade, axis=1)


def _shade(row):
    color = "" if row["role"] != "prediction" else ("background-color: #e6f4ea" if row["within"]
                                                   else "background-color: #fce8e6")
    return [color] * len(row)


def explain(paper_id: str, artifact: str, df: pd.DataFrame):
    """Why the model misses each missed prediction of ``artifact``, with the numbers computed now.

    Reads ``papers/<id>/deviations.yaml``. An explanation whose stated
    direction no longer matches the model is marked STALE; a miss with no
    explanation is listed as unexplained.
    """
    from IPython.display import Markdown

    paper = ledger.load(paper_id)
    cmp = scoring.compare(paper, artifact, df)
    why = {d.cell: d for d in paper.deviations if d.cell is not None and d.cell[0] == artifact}
    lines = []
    for r in cmp.itertuples():
        d = why.get((artifact, r.row, r.column))
        if r.role in ("doubtful", "repeated") or (d is None and (r.within or r.role != "prediction")):
            continue
        side = "above" if r.simulated > r.published else "below"
        head = f"**{r.row} / {r.column}**: model {r.simulated:.4g} vs paper {r.published:.4g} {r.unit} ({r.rel_error:+.1%})"
        if d is None:
            lines.append(f"- {head}: *unexplained*")
        elif r.within:
            lines.append(f"- {head}: now within tolerance; the explanation below is STALE. {d.why}")
        elif d.direction != side:
            lines.append(f"- {head}: STALE, the explanation says the model is {d.direction}. {d.why}")
        else:
            lines.append(f"- {head}, {side} the paper: {d.why}")
    return Markdown("\n".join(lines) if lines else "Every predicted cell of this artifact is within tolerance.")


class Score:
    """A paper's claims and verdict on a notebook's frames, each claim also under its counterfactual.

    >>> score = Score("atc98_banga", frames, seed=seed, quick=quick)   # doctest: +SKIP
    >>> score.claims()                                                   # doctest: +SKIP
    >>> score.verdict()                                                  # doctest: +SKIP
    """

    def __init__(self, paper_id: str, frames: dict, *, seed=0, quick=False):
        self.paper = ledger.load(paper_id)
        self.frames = frames
        self.entry = scoring.score_paper(paper_id, seed=seed, quick=quick, frames=frames)
        d = results_dir()
        if d is not None:
            from pysim.scorecard import finish_entry

            row = {"paper": paper_id, "seed": seed, "quick": bool(quick), "entry": finish_entry(paper_id, self.entry)}
            write_text_atomic(d / ENTRY_FILE, json.dumps(row, indent=1))

    def claims(self) -> pd.DataFrame:
        """Each claim: its quote, the counterfactual it must fail under, and how it came out."""
        results = {r["id"]: r for a in self.entry["artifacts"].values() for r in a.get("claim_results", [])}
        why = {d.claim: d.why for d in self.paper.deviations if d.claim is not None}
        rows = []
        for c in self.paper.claims:
            r = results.get(c.id, {"status": "error", "error": "not scored"})
            rows.append({"claim": c.id, "section": c.section, "paper says": c.quote,
                         "counterfactual": c.counterfactual, "model": _yes_no(r.get("holds")),
                         "under counterfactual": _yes_no(r.get("holds_counterfactual")),
                         "status": r["status"] if r["status"] != "error" else f"error: {r.get('error')}",
                         "why not": why.get(c.id, "") if r["status"] == "not held" else ""})
        return pd.DataFrame(rows).set_index("claim")

    def verdict(self) -> pd.DataFrame:
        """The paper's scorecard as the lab computes it: one row per artifact."""
        rows = [{"artifact": a, "verdict": v["verdict"],
                 "predictions within / scored": f"{v['predictions_within']} / {v['predictions_scored']}",
                 "fits": v["fits"], "inputs": v["inputs"],
                 "claims held / can fail": f"{v['claims_held']} / {v['claims_can_fail']}",
                 "cannot fail": ", ".join(v["claims_cannot_fail"])}
                for a, v in self.entry["artifacts"].items()]
        e = self.entry
        print(f"{self.paper.id}: {e['verdict']} | predictions {e['predictions_within']} / {e['predictions_scored']}"
              f" | fits {e['fits']} | inputs {e['inputs']} | claims {e['claims_held']} / {e['claims_can_fail']}")
        return pd.DataFrame(rows).set_index("artifact")


def _yes_no(v):
    return "" if v is None else ("holds" if v else "does not hold")


def params_table(model, paper_id: str | None = None) -> pd.DataFrame:
    """The model's Params: value, provenance, source, allowed range, and for a calibrated
    one the published value it was fitted to (read from the paper's ledger)."""
    fits = getattr(model, "CALIBRATION", ())
    targets = {}
    if paper_id is not None:
        paper = ledger.load(paper_id)
        for fit in fits:
            c = paper.cell(*fit.cell)
            if c is not None:
                targets[fit.parameter] = f"{c.value:g} {c.unit}"
    return params.table(model.Params(), fits, targets)


def published(paper_id: str, artifact: str) -> pd.DataFrame:
    """The ledger's cells of one artifact as a table: one row per (row, column)."""
    paper = ledger.load(paper_id)
    rows = [{"row": c.row, "column": c.column, "value": c.value, "source": c.source}
            for c in paper.cells if c.artifact == artifact]
    return pd.DataFrame(rows, columns=["row", "column", "value", "source"])


def not_modelled(paper_id: str) -> pd.DataFrame:
    """The artifacts the lab does not regenerate, and why."""
    return pd.DataFrame(ledger.load(paper_id).not_modelled, columns=["artifact", "caption", "why"]).set_index(
        "artifact")


def parity_plot(cmp: pd.DataFrame, title: str, unit: str, *, ax=None):
    """Simulated against published for every compared cell, with the y = x line and tolerance band."""
    from pysim import plotting

    fig, ax = plotting.figure(title, f"published ({unit})", f"model ({unit})", ax=ax)
    lo = float(min(cmp["published"].min(), cmp["simulated"].min())) * 0.8
    hi = float(max(cmp["published"].max(), cmp["simulated"].max())) * 1.2
    tol = float(cmp["tolerance"].median()) if len(cmp) else 0.1
    xs = [lo, hi]
    ax.plot(xs, xs, color="0.3", linewidth=1)
    ax.fill_between(xs, [x * (1 - tol) for x in xs], [x * (1 + tol) for x in xs], color="0.85", label=f"±{tol:.0%}")
    for role, marker in (("prediction", "o"), ("fit", "s"), ("input", "^"), ("doubtful", "x")):
        sel = cmp[cmp["role"] == role]
        if len(sel):
            ax.plot(sel["published"], sel["simulated"], marker=marker, linestyle="none",
                    markerfacecolor="none" if role != "doubtful" else None, label=role)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend()
    return fig
