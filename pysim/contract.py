"""The contract every registered paper keeps, as checks the tests run over each one.

In the manner of scikit-learn's ``parametrize_with_checks``: :func:`checks`
lists named check functions, each taking a :class:`Subject` (a paper with its
quick-mode outputs computed once) and raising :class:`ContractError` with
what is wrong. ``tests/test_contract.py`` runs every check on every paper;
a developer runs them with ``pysim contract <id>``.

The contract (DESIGN sections 6 to 8):

* every Params field declares its provenance and range; calibrated fields
  and CALIBRATION match one to one, input fields and INPUTS too; fits never
  outnumber predictions;
* every CALIBRATION, INPUTS and COUNTERFACTUALS entry names a real ledger
  cell or parameter; every claim names a declared counterfactual and fails
  under it;
* every ledger row and column exists in the model's output; the same seed
  gives identical output; bad parameters are refused with the parameter
  named;
* the model imports only what :data:`pysim.models.ALLOWED_IMPORTS` lists,
  and published values appear in its source only as stated or input
  defaults;
* the notebook is committed clean, starts with the ``parameters`` cell,
  has every section, regenerates every artifact, and has exercises an
  instructor can assign;
* quick-mode outputs equal the golden files, so a refactor proves it
  changed nothing.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import json
import math
import numbers
import re
from pathlib import Path

import pandas as pd

from pysim import claims as sandbox
from pysim import ledger, params as P
from pysim.errors import PysimError
from pysim.models import ALLOWED_IMPORTS, counterfactuals, fitted_cells, input_cells
from pysim.scoring import role_of, run_artifacts

#: The sections of DESIGN section 8, as the notebook's second-level headings, in order.
SECTIONS = ("the setup", "the model", "then vs now", "exercises", "verdict")
#: Cell tags of one exercise, in order: question, the student's prediction, a starter cell, the solution.
EXERCISE_TAGS = ("exercise", "prediction", "starter", "solution")


class ContractError(PysimError):
    """A paper breaks the lab's contract."""


class Subject:
    """A paper under test: its folder, model, and quick-mode outputs (computed once, on demand)."""

    def __init__(self, paper_id: str, *, golden_dir: Path | None = None, seed: int = 0):
        self.id = paper_id
        self.paper = ledger.load(paper_id)
        self.model = self.paper.model()
        self.seed = seed
        self.golden_dir = golden_dir
        self._frames = None

    @property
    def frames(self) -> dict:
        if self._frames is None:
            frames, errors = run_artifacts(self.paper, seed=self.seed, quick=True)
            if errors:
                raise ContractError(f"{self.id}: artifacts fail in quick mode: {errors}")
            self._frames = frames
        return self._frames

    def notebook(self) -> dict:
        path = ledger.root() / "notebooks" / f"{self.id}.ipynb"
        if not path.exists():
            raise ContractError(f"{self.id}: notebook {path} is missing")
        return json.loads(path.read_text())


def _fail(subject, message):
    raise ContractError(f"{subject.id}: {message}")


# --- parameters and declarations -------------------------------------------------

def check_params_declare_provenance(s: Subject):
    """Params derives from ModelParams and every field declares provenance and range."""
    if not (dataclasses.is_dataclass(s.model.Params) and issubclass(s.model.Params, P.ModelParams)):
        _fail(s, "Params must be a frozen dataclass deriving from pysim.params.ModelParams")
    try:
        P.provenance(s.model.Params)
    except ValueError as e:
        _fail(s, str(e))
    s.model.Params()  # the defaults pass their own ranges


def check_bad_parameters_are_refused(s: Subject):
    """A value outside a field's range raises ValueError naming the field, before anything runs."""
    base = s.model.Params()
    for f in dataclasses.fields(base):
        for bad in P.bad_values(f):
            try:
                dataclasses.replace(base, **{f.name: bad})
            except ValueError as e:
                if f.name not in str(e):
                    _fail(s, f"{f.name}={bad!r} is refused, but the message does not name it: {e}")
                continue
            _fail(s, f"{f.name}={bad!r} is outside its range ({P.allowed(f)}) but is accepted")


def _ledger_keys(s: Subject, *, scored_only=True) -> set:
    return {c.key for c in s.paper.cells if not (scored_only and c.source == "doubtful")}


def check_calibration_names_real_cells(s: Subject):
    """Calibrated fields and CALIBRATION match one to one; each fit names a scored ledger cell."""
    kinds = P.provenance(s.model.Params)
    calibrated = {n for n, (k, _) in kinds.items() if k == "calibrated"}
    fits = getattr(s.model, "CALIBRATION", ())
    named = [f.parameter for f in fits]
    if len(named) != len(set(named)):
        _fail(s, f"a parameter is fitted twice in CALIBRATION: {named}")
    if set(named) != calibrated:
        _fail(s, f"calibrated fields {sorted(calibrated)} and CALIBRATION {sorted(named)} differ")
    keys = _ledger_keys(s)
    for f in fits:
        if f.cell not in keys:
            _fail(s, f"CALIBRATION fits {f.parameter} on {f.cell}, which is not a scored ledger cell")


def check_inputs_name_real_cells(s: Subject):
    """Input fields and INPUTS match; every input cell is in the ledger; no cell is both fit and input."""
    kinds = P.provenance(s.model.Params)
    inputs = {n for n, (k, _) in kinds.items() if k == "input"}
    declared = set()
    keys = _ledger_keys(s, scored_only=False)
    for i in getattr(s.model, "INPUTS", ()):
        for p in i.parameters:
            if kinds.get(p, (None,))[0] != "input":
                _fail(s, f"INPUTS names {p!r}, which is not a Params field declared with given()")
            declared.add(p)
        for c in i.cells:
            if c not in keys:
                _fail(s, f"INPUTS names the cell {c}, which is not in the ledger")
    if inputs - declared:
        _fail(s, f"fields declared with given() but named in no INPUTS: {sorted(inputs - declared)}")
    both = fitted_cells(s.model) & input_cells(s.model)
    if both:
        _fail(s, f"cells both fitted and taken as inputs: {sorted(both)}")


def check_fits_never_outnumber_predictions(s: Subject):
    """Fit as few cells as possible, never more than are predicted."""
    fits, inputs = fitted_cells(s.model), input_cells(s.model)
    roles = [role_of(c, fits, inputs) for c in s.paper.cells]
    n_fit, n_pred = roles.count("fit"), roles.count("prediction")
    if n_fit > n_pred:
        _fail(s, f"{n_fit} fitted cells against {n_pred} predicted: fit fewer, predict more")


def check_counterfactuals_are_real(s: Subject):
    """Every counterfactual changes real parameters to allowed values; every claim names one."""
    known = counterfactuals(s.model)
    fields = {f.name for f in dataclasses.fields(s.model.Params)}
    base = s.model.Params()
    for name, cf in known.items():
        unknown = set(cf.changes) - fields
        if unknown:
            _fail(s, f"counterfactual {name!r} changes unknown parameters {sorted(unknown)}")
        try:
            cf.apply(base)
        except ValueError as e:
            _fail(s, f"counterfactual {name!r} is refused by Params: {e}")
        if all(getattr(base, k) == v for k, v in cf.changes.items()):
            _fail(s, f"counterfactual {name!r} sets every parameter to its default: it changes nothing")
    for c in s.paper.claims:
        if c.counterfactual not in known:
            _fail(s, f"claim {c.id!r} names counterfactual {c.counterfactual!r}; the model declares "
                     f"{sorted(known) or 'none'}")


def check_claims_fail_under_their_counterfactual(s: Subject):
    """Each claim evaluates, and is false under the counterfactual it names (quick mode)."""
    known = counterfactuals(s.model)
    cache = {}
    for c in s.paper.claims:
        try:
            sandbox.evaluate(c.check, {a: s.frames[a] for a in c.artifacts})
        except PysimError as e:
            _fail(s, f"claim {c.id!r} cannot be evaluated: {e}")
        if c.counterfactual not in cache:
            cf_params = known[c.counterfactual].apply(s.model.Params())
            frames, errors = run_artifacts(s.paper, seed=s.seed, quick=True, params=cf_params)
            cache[c.counterfactual] = (frames, errors)
        frames, errors = cache[c.counterfactual]
        if any(a in errors for a in c.artifacts):
            _fail(s, f"claim {c.id!r}: its counterfactual {c.counterfactual!r} breaks the model: {errors}")
        if sandbox.evaluate(c.check, {a: frames[a] for a in c.artifacts}):
            _fail(s, f"claim {c.id!r} holds under its counterfactual {c.counterfactual!r} too: it cannot fail")


# --- outputs ------------------------------------------------------------------------

def check_ledger_cells_exist_in_outputs(s: Subject):
    """Every ledger row and column exists in the model's quick-mode output, and is a finite number
    where a scored cell sits."""
    for c in s.paper.cells:
        df = s.frames.get(c.artifact)
        if df is None:
            _fail(s, f"ledger line {c.line}: artifact {c.artifact} has no output")
        if not isinstance(df, pd.DataFrame):
            _fail(s, f"{c.artifact} returns {type(df).__name__}, not a DataFrame")
        try:
            v = ledger.lookup(df, c.row, c.column)
        except KeyError as e:
            _fail(s, f"ledger line {c.line}: {e.args[0]}")
        except (TypeError, ValueError):
            _fail(s, f"ledger line {c.line}: {c.artifact}[{c.row}, {c.column}] is not a number")
        if c.source != "doubtful" and not math.isfinite(v):
            _fail(s, f"ledger line {c.line}: {c.artifact}[{c.row}, {c.column}] is {v}")


def check_same_seed_same_output(s: Subject):
    """Running every artifact again with the same seed gives identical DataFrames."""
    again, errors = run_artifacts(s.paper, seed=s.seed, quick=True)
    for aid, df in s.frames.items():
        try:
            pd.testing.assert_frame_equal(df, again[aid], check_exact=True)
        except AssertionError as e:
            _fail(s, f"{aid} differs between two runs with seed {s.seed}: {str(e).splitlines()[0]}")


def golden_path(golden_dir: Path, paper_id: str, artifact: str) -> Path:
    return Path(golden_dir) / paper_id / f"{artifact}.csv"


def write_golden(s: Subject) -> list:
    """Write the quick-mode outputs as golden CSV files; returns the paths."""
    out = []
    for aid, df in s.frames.items():
        path = golden_path(s.golden_dir, s.id, aid)
        path.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(path, float_format="%.17g")
        out.append(path)
    return out


def check_outputs_match_golden(s: Subject):
    """Quick-mode outputs equal tests/golden/<id>/<artifact>.csv (regenerate on purpose with
    ``pysim contract --write-golden``, and say why in the commit)."""
    if s.golden_dir is None:
        return
    for aid, df in s.frames.items():
        path = golden_path(s.golden_dir, s.id, aid)
        if not path.exists():
            _fail(s, f"no golden output {path}: write it with pysim contract {s.id} --write-golden")
        expected = pd.read_csv(path, index_col=list(range(df.index.nlevels)))
        got = pd.read_csv(io.StringIO(df.to_csv(float_format="%.17g")),
                          index_col=list(range(df.index.nlevels)))
        try:
            pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-9, atol=1e-12,
                                          check_dtype=False)
        except AssertionError as e:
            _fail(s, f"{aid} differs from {path}:\n{e}")


# --- the model's source ---------------------------------------------------------------

def _source_tree(s: Subject):
    return ast.parse(inspect.getsource(s.model))


def check_model_imports(s: Subject):
    """The model imports only the core, shared mechanisms, workloads and the scientific stack."""
    for node in ast.walk(_source_tree(s)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names = [f"{module}.{a.name}" for a in node.names] if module == "pysim" else [module]
        else:
            continue
        for n in names:
            if not any(n == ok or n.startswith(ok + ".") for ok in ALLOWED_IMPORTS):
                _fail(s, f"line {node.lineno}: imports {n!r}; a model may import only {', '.join(ALLOWED_IMPORTS)}")


def _significant_digits(text: str) -> int:
    return len(re.sub(r"[^0-9]", "", text.split("e")[0].lstrip("0.").replace(".", "")))


def _unit_like(value) -> bool:
    """Powers of ten and of two are unit conversions (100 for per cent, 1024, 4096), not results."""
    v = abs(float(value))
    if v == 0 or not float(v).is_integer() and v > 1:
        return False
    exp10, exp2 = math.log10(v), math.log2(v)
    return abs(exp10 - round(exp10)) < 1e-12 or abs(exp2 - round(exp2)) < 1e-12


def check_no_published_results_in_source(s: Subject):
    """A published value (3 or more significant digits, not a power of ten or two) appears in the
    model's source only as the default of a stated or input field, never as a result."""
    published = {}
    for c in s.paper.cells:
        if c.source != "doubtful":
            raw = f"{c.value:g}"
            if _significant_digits(raw) >= 3 and not _unit_like(c.value):
                published.setdefault(c.value, c)
    if not published:
        return
    tree = _source_tree(s)
    allowed_lines = set()
    kinds = P.provenance(s.model.Params)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Params":
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                        and kinds.get(stmt.target.id, ("",))[0] in ("stated", "input"):
                    allowed_lines.update(range(stmt.lineno, stmt.end_lineno + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, numbers.Real) \
                and not isinstance(node.value, bool) and node.value in published \
                and node.lineno not in allowed_lines:
            c = published[node.value]
            _fail(s, f"line {node.lineno}: the literal {node.value!r} is the published "
                     f"{c.artifact}[{c.row}, {c.column}]; declare it as a stated or input parameter, "
                     f"or compute it")


# --- the notebook ---------------------------------------------------------------------

def _text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell) -> list:
    return cell.get("metadata", {}).get("tags", [])


def check_notebook_is_clean_and_complete(s: Subject):
    """Committed without outputs; the parameters cell first; every section of DESIGN section 8 in
    order; every artifact regenerated by a call to its model function."""
    nb = s.notebook()
    cells = nb.get("cells", [])
    code = [c for c in cells if c["cell_type"] == "code"]
    if any(c.get("outputs") or c.get("execution_count") is not None for c in code):
        _fail(s, "the notebook is committed with outputs or execution counts")
    if not code or "parameters" not in _tags(code[0]):
        _fail(s, "the first code cell must be tagged 'parameters'")
    names = {line.split("=")[0].strip() for line in _text(code[0]).splitlines() if "=" in line}
    if names != {"seed", "quick"}:
        _fail(s, f"the parameters cell must set seed and quick and nothing else, sets {sorted(names)}")
    if not cells or not _text(cells[0]).lstrip().startswith("# "):
        _fail(s, "the notebook must open with the paper's title as a first-level heading")
    headings = [line[3:].strip().lower() for c in cells if c["cell_type"] == "markdown"
                for line in _text(c).splitlines() if line.startswith("## ")]
    at = -1
    for sec in SECTIONS:
        found = [i for i, h in enumerate(headings) if h.startswith(sec)]
        if not found:
            _fail(s, f"no '## {sec.capitalize()}' section (DESIGN section 8 lists {', '.join(SECTIONS)})")
        if found[0] < at:
            _fail(s, f"section '{sec}' is out of order")
        at = found[0]
    source = "\n".join(_text(c) for c in code)
    for a in s.paper.artifacts.values():
        if a.kind != "diagram-only" and not re.search(rf"\b{re.escape(a.function)}\(", source):
            _fail(s, f"no code cell calls {a.function}() to regenerate {a.id}")


def exercises(nb: dict) -> list:
    """The notebook's exercises: for each, the cells tagged exercise, prediction, starter, solution."""
    out, current = [], None
    for c in nb.get("cells", []):
        tags = [t for t in _tags(c) if t in EXERCISE_TAGS]
        if not tags:
            continue
        if tags[0] == "exercise" and c["cell_type"] == "markdown":
            current = {"exercise": c}
            out.append(current)
        elif current is not None and tags[0] not in current:
            current[tags[0]] = c
    return out


def check_exercises_are_teachable(s: Subject):
    """At least one exercise, each with a question, a place for the prediction, a starter cell that
    sets up its parameters without touching module globals, and a solution."""
    found = exercises(s.notebook())
    if not found:
        _fail(s, "no exercise (a markdown cell tagged 'exercise')")
    for i, ex in enumerate(found, 1):
        missing = [t for t in EXERCISE_TAGS if t not in ex]
        if missing:
            _fail(s, f"exercise {i} lacks cells tagged {', '.join(missing)}")
        if ex["prediction"]["cell_type"] != "markdown" or ex["starter"]["cell_type"] != "code" \
                or ex["solution"]["cell_type"] != "code":
            _fail(s, f"exercise {i}: the prediction is markdown, the starter and solution are code")
        for tag in ("starter", "solution"):
            if re.search(r"^\s*model\.\w+\s*=", _text(ex[tag]), re.M):
                _fail(s, f"exercise {i}: the {tag} cell assigns to a module global; use dataclasses.replace")


CHECKS = (
    check_params_declare_provenance,
    check_bad_parameters_are_refused,
    check_calibration_names_real_cells,
    check_inputs_name_real_cells,
    check_fits_never_outnumber_predictions,
    check_counterfactuals_are_real,
    check_model_imports,
    check_no_published_results_in_source,
    check_ledger_cells_exist_in_outputs,
    check_same_seed_same_output,
    check_claims_fail_under_their_counterfactual,
    check_notebook_is_clean_and_complete,
    check_exercises_are_teachable,
    check_outputs_match_golden,
)


def run(paper_id: str, *, golden_dir: Path | None = None) -> list:
    """Run every check on one paper; returns [(check name, None or the error message)]."""
    try:
        subject = Subject(paper_id, golden_dir=golden_dir)
    except PysimError as e:
        return [("loads", str(e))]
    results = []
    for check in CHECKS:
        try:
            check(subject)
            results.append((check.__name__, None))
        except (ContractError, PysimError, ValueError, TypeError, KeyError) as e:
            results.append((check.__name__, str(e)))
    return results
