"""The lab's contract over every registered paper, and proof that each check catches what it is for.

Every check of pysim.contract runs on every paper in quick mode (the
scikit-learn ``parametrize_with_checks`` pattern). The demo paper in
tests/fixtures passes all of them; each deliberately broken copy of it fails
exactly the check its breakage targets.
"""
import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from pysim import contract, ledger

GOLDEN = Path(__file__).parent / "golden"
PAPERS = ledger.paper_ids()
_subjects = {}


def subject(paper_id):
    if paper_id not in _subjects:
        _subjects[paper_id] = contract.Subject(paper_id, golden_dir=GOLDEN)
    return _subjects[paper_id]


@pytest.mark.parametrize("check", contract.CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("paper_id", PAPERS)
def test_every_paper_keeps_the_contract(paper_id, check):
    check(subject(paper_id))


# --- the demo paper, whole and broken --------------------------------------------------

DEMO = Path(__file__).parent / "fixtures" / "demo_model.py"


@pytest.fixture
def demo(lab_root, tmp_path, monkeypatch):
    """The demo paper with its model copied to a module of its own, so a breakage can edit its source."""
    src = tmp_path / "src"
    src.mkdir()
    monkeypatch.syspath_prepend(str(src))
    state = {"n": 0}

    def use_model(text):
        state["n"] += 1
        name = f"demo_variant_{state['n']}"
        (src / f"{name}.py").write_text(text)
        sys.modules.pop(name, None)
        paper_yaml = lab_root / "papers" / "zz99_demo" / "paper.yaml"
        paper_yaml.write_text(re.sub(r"module: \w+", f"module: {name}", paper_yaml.read_text()))
        return name

    use_model(DEMO.read_text())

    class Demo:
        root = lab_root
        model_source = DEMO.read_text()

        @staticmethod
        def model(text):
            return use_model(text)

        @staticmethod
        def subject():
            return contract.Subject("zz99_demo", golden_dir=lab_root / "golden")

        @staticmethod
        def edit(name, fn):
            path = lab_root / "papers" / "zz99_demo" / name
            path.write_text(fn(path.read_text()))

        @staticmethod
        def edit_notebook(fn):
            path = lab_root / "notebooks" / "zz99_demo.ipynb"
            nb = json.loads(path.read_text())
            fn(nb)
            path.write_text(json.dumps(nb))

    yield Demo
    for name in list(sys.modules):
        if name.startswith("demo_variant_"):
            sys.modules.pop(name)


def test_the_demo_paper_keeps_every_check(demo):
    results = contract.run("zz99_demo", golden_dir=demo.root / "golden")
    assert [r for r in results if r[1]] == []
    assert len(results) == len(contract.CHECKS)


def _replace(old, new):
    def edit(text):
        assert old in text, old
        return text.replace(old, new)
    return edit


def _drop_heading(nb):
    for c in nb["cells"]:
        c["source"] = "".join(c["source"]).replace("## Verdict", "## Scores")


def _add_output(nb):
    nb["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    nb["cells"][2]["execution_count"] = 1


def _untag_solution(nb):
    for c in nb["cells"]:
        tags = c.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            tags.remove("solution")


BREAKAGES = {
    "check_params_declare_provenance": (
        "model", _replace('b: float = assumed(0.5, "a small curvature, for the claims to test", ge=0)',
                          "b: float = 0.5"), "Params.b has no provenance"),
    "check_bad_parameters_are_refused": (
        "model", _replace("class Params(ModelParams):", "class Params(ModelParams):\n"
                          "    def __post_init__(self):\n        pass\n"), "is outside its range"),
    "check_calibration_names_real_cells": (
        "model", _replace('Fit("a", "table1", "1", "y"', 'Fit("a", "table1", "9", "y"'),
        "not a scored ledger cell"),
    "check_inputs_name_real_cells": (
        "model", _replace("COUNTERFACTUALS =", 'from pysim.models import Inputs\n'
                          'INPUTS = (Inputs(("a",), (("table1", "2", "y"),), "echo"),)\nCOUNTERFACTUALS ='),
        "not a Params field declared with given()"),
    "check_fits_never_outnumber_predictions": (
        "ledger.csv", _replace("table1,2,y,5.25,s,printed,0.1,\ntable1,3,y,7.0,s,printed,0.1,\n", ""),
        "1 fitted cells against 0 predicted"),
    "check_counterfactuals_are_real": (
        "model", _replace('Counterfactual("straight", {"b": 0.0}', 'Counterfactual("straight", {"c": 0.0}'),
        "changes unknown parameters ['c']"),
    "check_model_imports": (
        "model", _replace("import pandas as pd", "import pandas as pd\nfrom pysim import ledger"),
        "imports 'pysim.ledger'"),
    "check_no_published_results_in_source": (
        "model", _replace("def broken(", "EXPECTED_ROW_2 = 5.25\n\n\ndef broken("),
        "the literal 5.25 is the published table1[2, y]"),
    "check_ledger_cells_exist_in_outputs": (
        "ledger.csv", lambda t: t + "table1,7,y,1.0,s,printed,0.1,\n", "row '7' not in the model's output"),
    "check_same_seed_same_output": (
        "model", lambda t: _replace("for x in (1, 2, 3)]}", "for x in (1, 2, 3)], \"noise\": np.random.random(3)}")(
            _replace("import pandas as pd", "import numpy as np\nimport pandas as pd")(t)),
        "differs between two runs"),
    "check_claims_fail_under_their_counterfactual": (
        "claims.yaml", lambda t: t + ("- id: grows\n  artifacts: [table1]\n  section: x\n  quote: y grows\n"
                                      "  check: monotone_increasing(table1['y'])\n  counterfactual: straight\n"),
        "claim 'grows' holds under its counterfactual 'straight' too"),
    "check_notebook_is_clean_and_complete": ("notebook", _drop_heading, "no '## Verdict' section"),
    "check_exercises_are_teachable": ("notebook", _untag_solution, "exercise 1 lacks cells tagged solution"),
    "check_outputs_match_golden": (
        "golden", _replace("3,10", "3,10.5"), "table1 differs from"),
}


def test_every_check_has_a_breakage():
    assert set(BREAKAGES) == {c.__name__ for c in contract.CHECKS}


@pytest.mark.parametrize("check_name", sorted(BREAKAGES))
def test_a_broken_paper_fails_the_check_its_breakage_targets(demo, check_name):
    where, breakage, message = BREAKAGES[check_name]
    if where == "model":
        demo.model(breakage(demo.model_source))
    elif where == "notebook":
        demo.edit_notebook(breakage)
    elif where == "golden":
        path = demo.root / "golden" / "zz99_demo" / "table1.csv"
        path.write_text(breakage(path.read_text()))
    else:
        demo.edit(where, breakage)
    results = dict(contract.run("zz99_demo", golden_dir=demo.root / "golden"))
    assert results[check_name] is not None, f"{check_name} passed on a paper broken for it"
    assert message in results[check_name]


def test_a_notebook_with_outputs_breaks_the_contract(demo):
    demo.edit_notebook(_add_output)
    results = dict(contract.run("zz99_demo", golden_dir=demo.root / "golden"))
    assert "committed with outputs" in results["check_notebook_is_clean_and_complete"]


def test_bad_values_cover_each_kind_of_range():
    from pysim.params import ModelParams, assumed, bad_values

    @dataclasses.dataclass(frozen=True)
    class Params(ModelParams):
        rate: float = assumed(1.0, "x")
        share: float = assumed(0.5, "x", ge=0, le=1)
        mode: str = assumed("fifo", "x", choices=("fifo", "lifo"))

    fields = {f.name: f for f in dataclasses.fields(Params)}
    assert bad_values(fields["share"])[1:] == [-1, 2]
    for name, f in fields.items():
        for bad in bad_values(f):
            with pytest.raises(ValueError, match=name):
                Params(**{name: bad})
