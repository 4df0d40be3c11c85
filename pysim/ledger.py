"""What each paper says (papers/<id>/), checked against what its model computes.

* ``paper.yaml``: title, authors, venue, year, link, setup, and the artifacts
  (id, caption, function, kind: table | plot | diagram-only).
* ``ledger.csv``: published numbers, one per row:
  ``artifact,row,column,value,unit,source,tolerance,note``. ``row`` and
  ``column`` label a cell of the model's DataFrame; ``source`` is printed,
  reconstructed or doubtful (never scored); ``tolerance`` is relative, in (0, 1].
* ``claims.yaml``: the paper's qualitative claims as expressions over the
  artifacts' DataFrames (see :func:`evaluate_claim`).

Verdicts are computed here, never typed. Cells a model was calibrated on
(its ``CALIBRATION``) count as fits, apart from the predictions.
"""
from __future__ import annotations

import ast
import csv
import importlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from pysim.errors import LedgerError

SOURCES = ("printed", "reconstructed", "doubtful")
KINDS = ("table", "plot", "diagram-only")
VERDICTS = ("replicated", "partly replicated", "not replicated", "not applicable", "error")
LEDGER_COLUMNS = ["artifact", "row", "column", "value", "unit", "source", "tolerance", "note"]
PAPER_KEYS = ("title", "authors", "venue", "year", "link", "setup", "artifacts")


def root() -> Path:
    """The lab's top folder (PYSIM_ROOT, or the checkout this package sits in)."""
    return Path(os.environ.get("PYSIM_ROOT", Path(__file__).resolve().parents[1]))


def papers_dir() -> Path:
    return root() / "papers"


def paper_ids() -> list[str]:
    """Every paper with a papers/<id>/paper.yaml: the registry."""
    d = papers_dir()
    return sorted(p.parent.name for p in d.glob("*/paper.yaml")) if d.is_dir() else []


def check_id(paper_id: str) -> str:
    """``paper_id`` if it is registered; LedgerError listing the valid ids otherwise."""
    ids = paper_ids()
    if paper_id not in ids:
        raise LedgerError(f"unknown paper {paper_id!r}; valid: {', '.join(ids) or '(none)'}")
    return paper_id


# --- loading and validating ---------------------------------------------------

@dataclass(frozen=True)
class Artifact:
    id: str
    caption: str
    function: str | None
    kind: str


@dataclass(frozen=True)
class Cell:
    artifact: str
    row: str
    column: str
    value: float
    unit: str
    source: str
    tolerance: float
    note: str
    line: int


@dataclass(frozen=True)
class Claim:
    id: str
    artifacts: tuple
    quote: str
    section: str
    check: str
    line: int


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    authors: tuple
    venue: str
    year: int
    link: str
    setup: str
    artifacts: dict  # id -> Artifact
    cells: tuple
    claims: tuple
    folder: Path = field(compare=False)
    module: str = ""
    not_modelled: tuple = ()  # ((id, caption, why), ...): artifacts the lab does not regenerate, and why

    def model(self):
        """The paper's model module: pysim.models.<id> unless paper.yaml names another."""
        return importlib.import_module(self.module or f"pysim.models.{self.id}")


def _yaml(path: Path):
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except FileNotFoundError:
        raise LedgerError(f"{path}: missing") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise LedgerError(f"{path}{where}: not valid YAML ({getattr(e, 'problem', e)})") from None


def _load_paper_yaml(path: Path, paper_id: str) -> dict:
    meta = _yaml(path)
    if not isinstance(meta, dict):
        raise LedgerError(f"{path}: expected a mapping with keys {', '.join(PAPER_KEYS)}")
    missing = [k for k in PAPER_KEYS if k not in meta]
    if missing:
        raise LedgerError(f"{path}: missing field(s) {', '.join(missing)}")
    arts = {}
    for i, a in enumerate(meta["artifacts"] or []):
        where = f"{path}: artifacts[{i}]"
        if not isinstance(a, dict) or not {"id", "caption", "kind"} <= set(a):
            raise LedgerError(f"{where}: expected id, caption, kind (and function unless diagram-only)")
        if a["kind"] not in KINDS:
            raise LedgerError(f"{where}: kind {a['kind']!r} is not one of {', '.join(KINDS)}")
        if a["kind"] != "diagram-only" and not a.get("function"):
            raise LedgerError(f"{where}: a {a['kind']} needs the model function that regenerates it")
        if a["id"] in arts:
            raise LedgerError(f"{where}: duplicate artifact id {a['id']!r}")
        arts[a["id"]] = Artifact(a["id"], a["caption"], a.get("function"), a["kind"])
    meta["artifacts"] = arts
    skipped = []
    for i, a in enumerate(meta.get("not_modelled") or []):
        if not isinstance(a, dict) or not {"id", "caption", "why"} <= set(a):
            raise LedgerError(f"{path}: not_modelled[{i}]: expected id, caption and why")
        if a["id"] in arts:
            raise LedgerError(f"{path}: not_modelled[{i}]: {a['id']!r} is also listed as an artifact")
        skipped.append((a["id"], a["caption"], a["why"]))
    meta["not_modelled"] = tuple(skipped)
    return meta


def _load_ledger(path: Path, artifacts: dict) -> tuple:
    if not path.exists():
        return ()
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != LEDGER_COLUMNS:
            raise LedgerError(f"{path}:1: header must be {','.join(LEDGER_COLUMNS)}, got {','.join(reader.fieldnames or [])}")
        cells = []
        for n, r in enumerate(reader, start=2):
            where = f"{path}:{n}"
            if None in r or any(v is None for v in r.values()):
                raise LedgerError(f"{where}: expected {len(LEDGER_COLUMNS)} fields")
            if r["artifact"] not in artifacts:
                raise LedgerError(f"{where}: field artifact: unknown artifact {r['artifact']!r}; "
                                  f"paper.yaml lists {', '.join(artifacts)}")
            try:
                value = float(r["value"])
            except ValueError:
                raise LedgerError(f"{where}: field value: {r['value']!r} is not a number") from None
            if not math.isfinite(value):
                raise LedgerError(f"{where}: field value: {r['value']!r} is not finite")
            if r["source"] not in SOURCES:
                raise LedgerError(f"{where}: field source: {r['source']!r} is not one of {', '.join(SOURCES)}")
            try:
                tol = float(r["tolerance"])
            except ValueError:
                raise LedgerError(f"{where}: field tolerance: {r['tolerance']!r} is not a number") from None
            if not 0 < tol <= 1:
                raise LedgerError(f"{where}: field tolerance: {tol} is outside (0, 1]")
            if r["source"] == "reconstructed" and not r["note"].strip():
                raise LedgerError(f"{where}: field note: a reconstructed value must say how it was recovered")
            cells.append(Cell(r["artifact"], r["row"], r["column"], value, r["unit"], r["source"], tol, r["note"], n))
    return tuple(cells)


def _load_claims(path: Path, artifacts: dict) -> tuple:
    if not path.exists():
        return ()
    raw = _yaml(path) or []
    if not isinstance(raw, list):
        raise LedgerError(f"{path}: expected a list of claims")
    text = path.read_text().splitlines()
    claims = []
    for i, c in enumerate(raw):
        line = next((n for n, t in enumerate(text, 1) if t.lstrip("- ").startswith(f"id: {c.get('id')}")), 0) \
            if isinstance(c, dict) else 0
        where = f"{path}:{line}" if line else f"{path}: claim {i}"
        if not isinstance(c, dict) or not {"id", "artifacts", "quote", "section", "check"} <= set(c):
            raise LedgerError(f"{where}: a claim needs id, artifacts, quote, section and check")
        arts = tuple(c["artifacts"]) if isinstance(c["artifacts"], list) else (c["artifacts"],)
        for a in arts:
            if a not in artifacts:
                raise LedgerError(f"{where}: field artifacts: unknown artifact {a!r}")
        try:
            _check_expression(str(c["check"]))
        except LedgerError as e:
            raise LedgerError(f"{where}: field check: {e}") from None
        claims.append(Claim(str(c["id"]), arts, str(c["quote"]), str(c["section"]), str(c["check"]), line))
    return tuple(claims)


def load(paper_id: str) -> Paper:
    """Load and validate papers/<id>/; LedgerError names the file, line and field at fault."""
    check_id(paper_id)
    folder = papers_dir() / paper_id
    meta = _load_paper_yaml(folder / "paper.yaml", paper_id)
    arts = meta["artifacts"]
    return Paper(paper_id, str(meta["title"]), tuple(meta["authors"]), str(meta["venue"]), int(meta["year"]),
                 str(meta["link"]), str(meta["setup"]), arts, _load_ledger(folder / "ledger.csv", arts),
                 _load_claims(folder / "claims.yaml", arts), folder, str(meta.get("module", "")),
                 meta["not_modelled"])


# --- claims -------------------------------------------------------------------

#: The only functions a claim may call: pure helpers, no builtins.
CLAIM_FUNCTIONS = {"abs": abs, "min": min, "max": max, "len": len, "all": all, "any": any, "round": round,
                   "sorted": sorted, "sum": sum, "float": float, "int": int,
                   "monotone_increasing": lambda s: bool(np.all(np.diff(np.asarray(s, dtype=float)) >= 0)),
                   "monotone_decreasing": lambda s: bool(np.all(np.diff(np.asarray(s, dtype=float)) <= 0)),
                   "linear_fit_r2": lambda x, y: _r2(x, y)}

_ALLOWED_NODES = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Constant,
                  ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List,
                  ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd, ast.Add, ast.Sub, ast.Mult, ast.Div,
                  ast.FloorDiv, ast.Mod, ast.Pow, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
                  ast.In, ast.NotIn, ast.BitAnd, ast.BitOr, ast.Invert, ast.IfExp, ast.keyword)


def _r2(x, y):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    total = np.sum((y - y.mean()) ** 2)
    return float(1 - np.sum(resid ** 2) / total) if total > 0 else 1.0


def _check_expression(expr: str) -> ast.Expression:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise LedgerError(f"not a valid expression ({e.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise LedgerError(f"{type(node).__name__} is not allowed in a claim")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise LedgerError(f"name {node.id!r} is not allowed (leading underscore)")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise LedgerError(f"attribute {node.attr!r} is not allowed (leading underscore)")
    return tree


def evaluate_claim(check: str, frames: dict) -> bool:
    """Evaluate a claim over ``frames`` (artifact id -> DataFrame).

    The expression sees only the frames and :data:`CLAIM_FUNCTIONS`: no
    builtins, no imports, no attribute or name starting with ``_``.

    Raises
    ------
    LedgerError
        If the expression is not allowed, fails, or does not give a truth value.
    """
    tree = _check_expression(check)
    env = {"__builtins__": {}}
    env.update(CLAIM_FUNCTIONS)
    env.update(frames)
    try:
        result = eval(compile(tree, "<claim>", "eval"), env, {})  # noqa: S307 (restricted above)
    except Exception as e:  # a claim that cannot be evaluated is an error, never "held"
        raise LedgerError(f"claim {check!r} failed: {type(e).__name__}: {e}") from None
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    raise LedgerError(f"claim {check!r} gave {type(result).__name__}, not True/False")


# --- comparing and scoring ----------------------------------------------------

def row_label(index_value) -> str:
    """The ledger's text for a DataFrame index value (tuples joined with ' / ')."""
    if isinstance(index_value, tuple):
        return " / ".join(str(v) for v in index_value)
    return str(index_value)


def lookup(df: pd.DataFrame, row: str, column: str) -> float:
    """The model's value at (row, column); KeyError says which label is missing."""
    if column not in df.columns:
        raise KeyError(f"column {column!r} not in the model's output (columns: {', '.join(map(str, df.columns))})")
    labels = [row_label(i) for i in df.index]
    if row not in labels:
        raise KeyError(f"row {row!r} not in the model's output (rows: {', '.join(labels)})")
    return float(df.iloc[labels.index(row)][column])


def fitted_cells(model) -> set:
    """(artifact, row, column) of every cell the model was calibrated on."""
    return {(f.artifact, f.row, f.column) for f in getattr(model, "CALIBRATION", ())}


def compare(paper: Paper | str, artifact: str, df: pd.DataFrame) -> pd.DataFrame:
    """One row per published cell: published, simulated, relative error, within tolerance, role."""
    paper = load(paper) if isinstance(paper, str) else paper
    if artifact not in paper.artifacts:
        raise LedgerError(f"unknown artifact {artifact!r}; {paper.id} has {', '.join(paper.artifacts)}")
    fits = fitted_cells(paper.model())
    rows = []
    for c in paper.cells:
        if c.artifact != artifact:
            continue
        try:
            sim = lookup(df, c.row, c.column)
        except KeyError as e:
            raise LedgerError(f"{paper.folder / 'ledger.csv'}:{c.line}: {e.args[0]}") from None
        rel = (sim - c.value) / abs(c.value) if c.value != 0 else (0.0 if sim == 0 else math.inf)
        role = "doubtful" if c.source == "doubtful" else ("fit" if (c.artifact, c.row, c.column) in fits
                                                          else "prediction")
        rows.append({"row": c.row, "column": c.column, "published": c.value, "simulated": sim, "unit": c.unit,
                     "rel_error": rel, "tolerance": c.tolerance, "within": abs(rel) <= c.tolerance,
                     "role": role, "source": c.source})
    return pd.DataFrame(rows, columns=["row", "column", "published", "simulated", "unit", "rel_error",
                                       "tolerance", "within", "role", "source"])


def verdict_of(scored: int, within: int, claims: int, held: int) -> str:
    """replicated / partly replicated / not replicated / not applicable, from the counts."""
    total, good = scored + claims, within + held
    if total == 0:
        return "not applicable"
    if good == total:
        return "replicated"
    return "not replicated" if good == 0 else "partly replicated"


def score_artifact(paper: Paper, artifact: Artifact, frames: dict, errors: dict) -> dict:
    """Counts and verdict of one artifact, given the frames computed so far."""
    empty = {"verdict": "not applicable", "cells_scored": 0, "cells_within": 0, "cells_fitted": 0,
             "claims": 0, "claims_held": 0}
    if artifact.kind == "diagram-only":
        return empty
    if artifact.id in errors:
        return {**empty, "verdict": "error", "error": errors[artifact.id]}
    cmp = compare(paper, artifact.id, frames[artifact.id])
    pred = cmp[cmp["role"] == "prediction"]
    out = {"cells_scored": int(len(pred)), "cells_within": int(pred["within"].sum()),
           "cells_fitted": int((cmp["role"] == "fit").sum()), "claims": 0, "claims_held": 0}
    claim_results = []
    for cl in paper.claims:
        if cl.artifacts[0] != artifact.id:  # a claim is scored with its first artifact
            continue
        out["claims"] += 1
        missing = [a for a in cl.artifacts if a not in frames]
        if missing:
            claim_results.append({"id": cl.id, "held": False, "error": f"artifact(s) {missing} failed"})
            continue
        try:
            held = evaluate_claim(cl.check, {a: frames[a] for a in cl.artifacts})
            out["claims_held"] += held
            claim_results.append({"id": cl.id, "held": held})
        except LedgerError as e:
            claim_results.append({"id": cl.id, "held": False, "error": str(e)})
    bad_claims = [c for c in claim_results if "error" in c]
    out["verdict"] = "error" if bad_claims else verdict_of(out["cells_scored"], out["cells_within"],
                                                           out["claims"], out["claims_held"])
    if bad_claims:
        out["error"] = "; ".join(c["error"] for c in bad_claims)
    out["claim_results"] = claim_results
    return out


def run_artifacts(paper: Paper, *, seed=0, quick=False) -> tuple[dict, dict]:
    """Compute every non-diagram artifact: (frames, errors by artifact)."""
    model = paper.model()
    frames, errors = {}, {}
    for a in paper.artifacts.values():
        if a.kind == "diagram-only":
            continue
        try:
            frames[a.id] = getattr(model, a.function)(rng=seed, quick=quick)
        except Exception as e:  # one broken artifact must not hide the others
            errors[a.id] = f"{type(e).__name__}: {e}"
    return frames, errors


def score_paper(paper_id: str, *, seed=0, quick=False, frames=None) -> dict:
    """The scorecard entry of one paper: title, verdict and per-artifact counts."""
    paper = load(paper_id)
    errors = {}
    if frames is None:
        frames, errors = run_artifacts(paper, seed=seed, quick=quick)
    arts = {a.id: score_artifact(paper, a, frames, errors) for a in paper.artifacts.values()}
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
    return {"title": paper.title, "verdict": overall, "artifacts": arts}
