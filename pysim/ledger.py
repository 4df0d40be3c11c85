"""What each paper says (papers/<id>/), loaded and checked.

* ``paper.yaml``: title, authors, venue, year, link, setup, and the artifacts
  (id, caption, function, kind: table | plot | diagram-only); optionally
  ``not_modelled`` artifacts, each with why.
* ``ledger.csv``: published numbers, one per row:
  ``artifact,row,column,value,unit,source,tolerance,note``. ``row`` and
  ``column`` label a cell of the model's DataFrame; ``source`` is printed,
  reconstructed, doubtful (never scored) or repeated (a number the paper prints
  again, as in a reprinted row: kept, scored once where the note says);
  ``tolerance`` is relative, in (0, 1].
* ``claims.yaml``: the paper's qualitative claims as sandboxed expressions
  over the artifacts' DataFrames (see :mod:`pysim.claims`), each with the
  counterfactual under which it must be false.
* ``deviations.yaml``: why the model misses a cell (stating whether it lands
  above or below the paper, which the lab checks) or a claim.

Hygiene the loader enforces: a doubtful or reconstructed cell says why in
its note, about the reading of the text and never about the model; a
tolerance above 0.15 is justified in the note (``tolerance: ...``); a claim
whose check holds a number other than 0 or 1 says where that band comes
from. Scoring lives in :mod:`pysim.scoring`.
"""
from __future__ import annotations

import csv
import importlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pysim import claims as claims_sandbox
from pysim.errors import LedgerError

SOURCES = ("printed", "reconstructed", "doubtful", "repeated")
KINDS = ("table", "plot", "diagram-only")
LEDGER_COLUMNS = ["artifact", "row", "column", "value", "unit", "source", "tolerance", "note"]
PAPER_KEYS = ("title", "authors", "venue", "year", "link", "setup", "artifacts")
CLAIM_KEYS = ("id", "artifacts", "quote", "section", "check", "counterfactual")
DIRECTIONS = ("above", "below")
#: A tolerance above this needs a justification in the cell's note.
WIDE_TOLERANCE = 0.15
# A reason that leans on the model is no reason to doubt or rebuild a published number.
_ABOUT_THE_MODEL = re.compile(r"\b(model\w*|simulat\w*|calibrat\w*|fitted|our (?:result|run)s?)\b", re.I)


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


# --- the records --------------------------------------------------------------

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

    @property
    def key(self) -> tuple:
        return (self.artifact, self.row, self.column)


@dataclass(frozen=True)
class Claim:
    id: str
    artifacts: tuple
    quote: str
    section: str
    check: str
    counterfactual: str
    band: str
    line: int


@dataclass(frozen=True)
class Deviation:
    """Why the model misses a published cell (``cell``) or a claim (``claim``)."""

    why: str
    cell: tuple | None = None     # (artifact, row, column)
    direction: str | None = None  # "above" or "below": where the model lands against the paper
    claim: str | None = None
    line: int = 0


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
    deviations: tuple = ()

    def model(self):
        """The paper's model module: pysim.models.<id> unless paper.yaml names another."""
        return importlib.import_module(self.module or f"pysim.models.{self.id}")

    def cell(self, artifact: str, row: str, column: str) -> Cell | None:
        """The scored reading of one cell (a doubtful second reading only if there is no other)."""
        found = [c for c in self.cells if c.key == (artifact, row, column)]
        found.sort(key=lambda c: c.source in ("doubtful", "repeated"))
        return found[0] if found else None


# --- loading ------------------------------------------------------------------

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


def _load_paper_yaml(path: Path) -> dict:
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
        arts[a["id"]] = Artifact(str(a["id"]), a["caption"], a.get("function"), a["kind"])
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


def _check_note(where: str, r: dict, tol: float) -> None:
    note = r["note"].strip()
    if r["source"] == "repeated" and not note:
        raise LedgerError(f"{where}: field note: a repeated number must say where the paper first prints it")
    if r["source"] in ("doubtful", "reconstructed"):
        what = "a doubtful cell must say why the reading of the text is in doubt" if r["source"] == "doubtful" \
            else "a reconstructed value must say how it was recovered from the text"
        if not note:
            raise LedgerError(f"{where}: field note: {what}")
        m = _ABOUT_THE_MODEL.search(note)
        if m:
            raise LedgerError(f"{where}: field note: {what}, not lean on the model ({m.group(0)!r}); "
                              f"a number's source is the paper's text")
    if tol > WIDE_TOLERANCE and "tolerance:" not in note.lower():
        raise LedgerError(f"{where}: field note: a tolerance of {tol:g} (above {WIDE_TOLERANCE}) must be "
                          f"justified in the note as 'tolerance: <why>'")


def _load_ledger(path: Path, artifacts: dict) -> tuple:
    if not path.exists():
        return ()
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != LEDGER_COLUMNS:
            raise LedgerError(f"{path}:1: header must be {','.join(LEDGER_COLUMNS)}, "
                              f"got {','.join(reader.fieldnames or [])}")
        cells, seen = [], {}
        for n, r in enumerate(reader, start=2):
            where = f"{path}:{n}"
            if None in r or any(v is None for v in r.values()):
                raise LedgerError(f"{where}: expected {len(LEDGER_COLUMNS)} fields")
            if r["artifact"] not in artifacts:
                raise LedgerError(f"{where}: field artifact: unknown artifact {r['artifact']!r}; "
                                  f"paper.yaml lists {', '.join(artifacts)}")
            if artifacts[r["artifact"]].kind == "diagram-only":
                raise LedgerError(f"{where}: field artifact: {r['artifact']!r} is diagram-only and has no cells")
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
            _check_note(where, r, tol)
            key = (r["artifact"], r["row"], r["column"], r["source"] in ("doubtful", "repeated"))
            if key in seen:
                raise LedgerError(f"{where}: cell {r['artifact']}[{r['row']}, {r['column']}] is already on "
                                  f"line {seen[key]}")
            seen[key] = n
            cells.append(Cell(r["artifact"], r["row"], r["column"], value, r["unit"], r["source"], tol,
                              r["note"], n))
    return tuple(cells)


def _item_lines(path: Path) -> list:
    """The line on which each item of a YAML list starts (1-based)."""
    node = yaml.compose(path.read_text())
    return [item.start_mark.line + 1 for item in node.value] if isinstance(node, yaml.SequenceNode) else []


def _load_claims(path: Path, artifacts: dict) -> tuple:
    if not path.exists():
        return ()
    raw = _yaml(path) or []
    if not isinstance(raw, list):
        raise LedgerError(f"{path}: expected a list of claims")
    lines = _item_lines(path)
    out, ids = [], set()
    for i, c in enumerate(raw):
        line = lines[i]
        where = f"{path}:{line}"
        if not isinstance(c, dict) or not set(CLAIM_KEYS) <= set(c):
            got = ", ".join(sorted(c)) if isinstance(c, dict) else type(c).__name__
            raise LedgerError(f"{where}: a claim needs {', '.join(CLAIM_KEYS)} (got {got})")
        if c["id"] in ids:
            raise LedgerError(f"{where}: duplicate claim id {c['id']!r}")
        ids.add(c["id"])
        arts = tuple(c["artifacts"]) if isinstance(c["artifacts"], list) else (c["artifacts"],)
        for a in arts:
            if a not in artifacts:
                raise LedgerError(f"{where}: field artifacts: unknown artifact {a!r}")
        try:
            claims_sandbox.parse(str(c["check"]), arts)
            bands = claims_sandbox.numbers_in(str(c["check"]))
        except LedgerError as e:
            raise LedgerError(f"{where}: field check: {e}") from None
        band = str(c.get("band") or "").strip()
        if bands and not band:
            raise LedgerError(f"{where}: field band: the check compares with {', '.join(map(str, bands))}; "
                              f"say where each number comes from (the paper's words, its resolution)")
        if not str(c["counterfactual"]).strip():
            raise LedgerError(f"{where}: field counterfactual: name the model's counterfactual under which "
                              f"this claim must be false")
        out.append(Claim(str(c["id"]), arts, str(c["quote"]), str(c["section"]), str(c["check"]),
                         str(c["counterfactual"]), band, line))
    return tuple(out)


def _load_deviations(path: Path, artifacts: dict, claim_ids: set) -> tuple:
    if not path.exists():
        return ()
    raw = _yaml(path) or []
    if not isinstance(raw, list):
        raise LedgerError(f"{path}: expected a list of deviations")
    lines = _item_lines(path)
    out = []
    for i, d in enumerate(raw):
        line = lines[i]
        where = f"{path}:{line}"
        if not isinstance(d, dict) or not str(d.get("why", "")).strip() or ("cell" in d) == ("claim" in d):
            raise LedgerError(f"{where}: a deviation names one cell (with direction) or one claim, and says why")
        if "claim" in d:
            if d["claim"] not in claim_ids:
                raise LedgerError(f"{where}: field claim: unknown claim {d['claim']!r}")
            out.append(Deviation(str(d["why"]).strip(), claim=str(d["claim"]), line=line))
            continue
        cell = d["cell"]
        if not (isinstance(cell, list) and len(cell) == 3):
            raise LedgerError(f"{where}: field cell: expected [artifact, row, column], got {cell!r}")
        cell = tuple(str(x) for x in cell)
        if cell[0] not in artifacts:
            raise LedgerError(f"{where}: field cell: unknown artifact {cell[0]!r}")
        if d.get("direction") not in DIRECTIONS:
            raise LedgerError(f"{where}: field direction: say where the model lands against the paper: "
                              f"{' or '.join(DIRECTIONS)}, got {d.get('direction')!r}")
        out.append(Deviation(str(d["why"]).strip(), cell=cell, direction=d["direction"], line=line))
    return tuple(out)


def load(paper_id: str) -> Paper:
    """Load and validate papers/<id>/; LedgerError names the file, line and field at fault."""
    check_id(paper_id)
    folder = papers_dir() / paper_id
    meta = _load_paper_yaml(folder / "paper.yaml")
    arts = meta["artifacts"]
    cells = _load_ledger(folder / "ledger.csv", arts)
    claims = _load_claims(folder / "claims.yaml", arts)
    deviations = _load_deviations(folder / "deviations.yaml", arts, {c.id for c in claims})
    known = {c.key for c in cells}
    for d in deviations:
        if d.cell is not None and d.cell not in known:
            raise LedgerError(f"{folder / 'deviations.yaml'}:{d.line}: field cell: {list(d.cell)} is not a ledger cell")
    return Paper(paper_id, str(meta["title"]), tuple(meta["authors"]), str(meta["venue"]), int(meta["year"]),
                 str(meta["link"]), str(meta["setup"]), arts, cells, claims, folder, str(meta.get("module", "")),
                 meta["not_modelled"], deviations)


# --- reading a model's output --------------------------------------------------

def row_label(index_value) -> str:
    """The ledger's text for a DataFrame index value (tuples joined with ' / ')."""
    if isinstance(index_value, tuple):
        return " / ".join(str(v) for v in index_value)
    return str(index_value)


def lookup(df, row: str, column: str) -> float:
    """The model's value at (row, column); KeyError says which label is missing."""
    if column not in df.columns:
        raise KeyError(f"column {column!r} not in the model's output (columns: {', '.join(map(str, df.columns))})")
    labels = [row_label(i) for i in df.index]
    if row not in labels:
        raise KeyError(f"row {row!r} not in the model's output (rows: {', '.join(labels)})")
    return float(df.iloc[labels.index(row)][column])
