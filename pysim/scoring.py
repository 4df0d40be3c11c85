"""Scoring a paper: its model's outputs against its ledger, claims and deviations.

Every published cell has one role. A cell the model was calibrated on is a
*fit*; a cell the model takes as given, or that follows from given values by
arithmetic alone, is an *input*; a doubtful reading is never scored, nor is a
number the paper merely prints again (*repeated*: it counts once, where it is
first printed); every other cell is a *prediction*, and only predictions count
towards a verdict.

Every claim is evaluated twice: on the model's outputs and on the outputs of
the counterfactual it names. A claim that holds under both *cannot fail*: it
is listed by name and never counted as held. A verdict counts predictions
and the claims that can fail:

* **replicated**: every scored prediction within tolerance, every such claim held;
* **not replicated**: none of them;
* **partly replicated**: some;
* **not applicable**: nothing to score (a diagram, or only fits and inputs).
"""
from __future__ import annotations

import math

import pandas as pd

from pysim import claims as sandbox
from pysim.errors import LedgerError
from pysim.ledger import Paper, load, lookup
from pysim.models import counterfactuals, fitted_cells, input_cells

VERDICTS = ("replicated", "partly replicated", "not replicated", "not applicable", "error")
ROLES = ("prediction", "fit", "input", "repeated", "doubtful")
COMPARE_COLUMNS = ["row", "column", "published", "simulated", "unit", "rel_error", "tolerance", "within", "role",
                   "source"]
COUNT_KEYS = ("predictions_scored", "predictions_within", "fits", "inputs", "repeated", "doubtful", "claims",
              "claims_held", "claims_can_fail")


def role_of(cell, fits: set, inputs: set) -> str:
    """prediction, fit, input, repeated or doubtful."""
    if cell.source in ("doubtful", "repeated"):
        return cell.source
    if cell.key in fits:
        return "fit"
    if cell.key in inputs:
        return "input"
    return "prediction"


def relative_error(simulated: float, published: float) -> float:
    if published != 0:
        return (simulated - published) / abs(published)
    return 0.0 if simulated == 0 else math.inf


def compare(paper: Paper | str, artifact: str, df: pd.DataFrame) -> pd.DataFrame:
    """One row per published cell of ``artifact``: published, simulated, relative error, within tolerance, role.

    Rows come worst first among the predictions, then fits, inputs and doubtful readings.
    """
    paper = load(paper) if isinstance(paper, str) else paper
    if artifact not in paper.artifacts:
        raise LedgerError(f"unknown artifact {artifact!r}; {paper.id} has {', '.join(paper.artifacts)}")
    model = paper.model()
    fits, inputs = fitted_cells(model), input_cells(model)
    rows = []
    for c in paper.cells:
        if c.artifact != artifact:
            continue
        try:
            sim = lookup(df, c.row, c.column)
        except KeyError as e:
            raise LedgerError(f"{paper.folder / 'ledger.csv'}:{c.line}: {e.args[0]}") from None
        rel = relative_error(sim, c.value)
        rows.append({"row": c.row, "column": c.column, "published": c.value, "simulated": sim, "unit": c.unit,
                     "rel_error": rel, "tolerance": c.tolerance, "within": abs(rel) <= c.tolerance,
                     "role": role_of(c, fits, inputs), "source": c.source})
    out = pd.DataFrame(rows, columns=COMPARE_COLUMNS)
    if len(out):
        order = out["role"].map({r: i for i, r in enumerate(ROLES)})
        badness = -(out["rel_error"].abs() / out["tolerance"])
        out = out.assign(_o=order, _b=badness).sort_values(["_o", "_b"], kind="stable").drop(columns=["_o", "_b"])
        out = out.reset_index(drop=True)
    return out


def verdict_of(scored: int, within: int, claims: int, held: int) -> str:
    """replicated / partly replicated / not replicated / not applicable, from the counts
    (predictions scored and within; claims that can fail and those held)."""
    total, good = scored + claims, within + held
    if total == 0:
        return "not applicable"
    if good == total:
        return "replicated"
    return "not replicated" if good == 0 else "partly replicated"


# --- computing the artifacts ----------------------------------------------------

def run_artifacts(paper: Paper, *, seed=0, quick=False, params=None, only=None) -> tuple[dict, dict]:
    """Compute the non-diagram artifacts (those in ``only``, if given): (frames, errors by artifact)."""
    model = paper.model()
    frames, errors = {}, {}
    for a in paper.artifacts.values():
        if a.kind == "diagram-only" or (only is not None and a.id not in only):
            continue
        try:
            fn = getattr(model, a.function)
            frames[a.id] = fn(params, rng=seed, quick=quick) if params is not None else fn(rng=seed, quick=quick)
        except Exception as e:  # one broken artifact must not hide the others
            errors[a.id] = f"{type(e).__name__}: {e}"
    return frames, errors


def counterfactual_frames(paper: Paper, *, seed=0, quick=False) -> dict:
    """``{counterfactual name: (frames, errors)}`` for every counterfactual the claims name,
    computing only the artifacts those claims read."""
    model = paper.model()
    known = counterfactuals(model)
    needed = {}
    for c in paper.claims:
        needed.setdefault(c.counterfactual, set()).update(c.artifacts)
    out = {}
    for name, arts in needed.items():
        if name not in known:
            out[name] = ({}, {a: f"unknown counterfactual {name!r}; the model declares "
                                 f"{', '.join(sorted(known)) or 'none'}" for a in arts})
            continue
        try:
            params = known[name].apply(model.Params())
        except Exception as e:  # a counterfactual the Params refuse is the model's error
            out[name] = ({}, {a: f"counterfactual {name!r}: {type(e).__name__}: {e}" for a in arts})
            continue
        out[name] = run_artifacts(paper, seed=seed, quick=quick, params=params, only=arts)
    return out


def evaluate_claim(claim, frames: dict, errors: dict, cf_frames: dict) -> dict:
    """A claim under the model and under its counterfactual: held, not held, cannot fail, or error."""
    result = {"id": claim.id, "counterfactual": claim.counterfactual}
    missing = [a for a in claim.artifacts if a not in frames]
    if missing:
        return {**result, "status": "error", "error": f"artifact(s) {missing} failed: "
                + "; ".join(errors.get(a, "") for a in missing)}
    try:
        holds = sandbox.evaluate(claim.check, {a: frames[a] for a in claim.artifacts})
    except LedgerError as e:
        return {**result, "status": "error", "error": str(e)}
    cf, cf_errors = cf_frames.get(claim.counterfactual, ({}, {}))
    missing = [a for a in claim.artifacts if a not in cf]
    if missing:
        return {**result, "holds": holds, "status": "error",
                "error": f"under counterfactual {claim.counterfactual!r}: "
                + "; ".join(cf_errors.get(a, f"{a} was not computed") for a in missing)}
    try:
        holds_cf = sandbox.evaluate(claim.check, {a: cf[a] for a in claim.artifacts})
    except LedgerError as e:
        return {**result, "holds": holds, "status": "error", "error": f"under counterfactual: {e}"}
    status = "not held" if not holds else ("cannot fail" if holds_cf else "held")
    return {**result, "holds": holds, "holds_counterfactual": holds_cf, "status": status}


# --- scoring ----------------------------------------------------------------------

def score_artifact(paper: Paper, artifact, frames: dict, errors: dict, claim_results: dict) -> dict:
    """Counts and verdict of one artifact; a claim is scored with the first artifact it lists."""
    out = {k: 0 for k in COUNT_KEYS}
    out.update(verdict="not applicable", claims_cannot_fail=[])
    if artifact.kind == "diagram-only":
        return out
    if artifact.id in errors:
        return {**out, "verdict": "error", "error": errors[artifact.id]}
    cmp = compare(paper, artifact.id, frames[artifact.id])
    pred = cmp[cmp["role"] == "prediction"]
    out.update(predictions_scored=int(len(pred)), predictions_within=int(pred["within"].sum()),
               fits=int((cmp["role"] == "fit").sum()), inputs=int((cmp["role"] == "input").sum()),
               repeated=int((cmp["role"] == "repeated").sum()), doubtful=int((cmp["role"] == "doubtful").sum()))
    mine = [claim_results[c.id] for c in paper.claims if c.artifacts[0] == artifact.id]
    out["claims"] = len(mine)
    out["claims_cannot_fail"] = [r["id"] for r in mine if r["status"] == "cannot fail"]
    out["claims_can_fail"] = sum(r["status"] in ("held", "not held", "error") for r in mine)
    out["claims_held"] = sum(r["status"] == "held" for r in mine)
    out["claim_results"] = mine
    bad = [r for r in mine if r["status"] == "error"]
    if bad:
        out["verdict"] = "error"
        out["error"] = "; ".join(f"{r['id']}: {r['error']}" for r in bad)
    else:
        out["verdict"] = verdict_of(out["predictions_scored"], out["predictions_within"],
                                    out["claims_can_fail"], out["claims_held"])
    return out


def check_deviations(paper: Paper, frames: dict, claim_results: dict) -> dict:
    """Explanations that no longer match the model, and misses with no explanation.

    A cell's explanation is *stale* when the cell is now within tolerance or
    the model lands on the other side of the paper than it says; a claim's
    when the claim now holds. *Unexplained* are predictions outside tolerance
    and claims not held that have no explanation.
    """
    explained_cells = {d.cell: d for d in paper.deviations if d.cell is not None}
    explained_claims = {d.claim for d in paper.deviations if d.claim is not None}
    stale, unexplained = [], []
    for aid, df in frames.items():
        cmp = compare(paper, aid, df)
        for r in cmp.itertuples():
            key = (aid, r.row, r.column)
            d = explained_cells.get(key)
            if d is not None and r.role not in ("doubtful", "repeated"):
                side = "above" if r.simulated > r.published else "below"
                if r.within:
                    stale.append(f"{aid}[{r.row}, {r.column}]: explained as a miss, but now within tolerance "
                                 f"({r.rel_error:+.1%})")
                elif side != d.direction:
                    stale.append(f"{aid}[{r.row}, {r.column}]: the explanation says the model is {d.direction} "
                                 f"the paper, but it is {side} ({r.rel_error:+.1%})")
            elif r.role == "prediction" and not r.within:
                unexplained.append(f"{aid}[{r.row}, {r.column}] ({r.rel_error:+.1%})")
    for cid, r in claim_results.items():
        if cid in explained_claims and r["status"] == "held":
            stale.append(f"claim {cid}: explained as not held, but it now holds")
        elif r["status"] == "not held" and cid not in explained_claims:
            unexplained.append(f"claim {cid}")
    return {"stale": stale, "unexplained": unexplained}


def score_paper(paper_id: str, *, seed=0, quick=False, frames=None, errors=None, cf_frames=None) -> dict:
    """The scorecard entry of one paper: title, verdict, per-artifact counts, and deviation checks."""
    paper = load(paper_id)
    errors = dict(errors or {})
    if frames is None:
        frames, errors = run_artifacts(paper, seed=seed, quick=quick)
    if cf_frames is None:
        cf_frames = counterfactual_frames(paper, seed=seed, quick=quick)
    claim_results = {c.id: evaluate_claim(c, frames, errors, cf_frames) for c in paper.claims}
    arts = {a.id: score_artifact(paper, a, frames, errors, claim_results) for a in paper.artifacts.values()}
    verdicts = [v["verdict"] for v in arts.values() if v["verdict"] != "not applicable"]
    if "error" in verdicts:
        overall = "error"
    elif not verdicts:
        overall = "not applicable"
    elif all(v == "replicated" for v in verdicts):
        overall = "replicated"
    elif all(v == "not replicated" for v in verdicts):
        overall = "not replicated"
    else:
        overall = "partly replicated"
    entry = {"title": paper.title, "verdict": overall, "artifacts": arts,
             "deviations": check_deviations(paper, frames, claim_results)}
    entry.update(totals_of(arts.values()))
    return entry


def totals_of(artifact_entries) -> dict:
    """Sums of the counts over artifacts, and the names of the claims that cannot fail."""
    t = {k: 0 for k in COUNT_KEYS}
    cannot = []
    for a in artifact_entries:
        for k in COUNT_KEYS:
            t[k] += a.get(k, 0)
        cannot += a.get("claims_cannot_fail", [])
    t["claims_cannot_fail"] = cannot
    return t
