"""environment.yml (conda) must declare what pyproject.toml (pip) declares; README's generated table is current."""
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_ONLY = {"python", "c-compiler"}


def names(specs):
    return {re.split(r"[<>=!~ \[]", s, maxsplit=1)[0].strip().lower() for s in specs}


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_names = names(project["dependencies"]) | names(project["optional-dependencies"]["dev"])
    conda = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_names = names(d for d in conda["dependencies"] if isinstance(d, str)) - CONDA_ONLY
    assert conda_names == pip_names, (sorted(pip_names - conda_names), sorted(conda_names - pip_names))
    assert "conda-forge" in conda["channels"]


def test_readme_table_was_generated_from_the_present_models_and_papers():
    # every verdict is recomputed by `python -m pysim.readme --check` (CI runs it); here the digest of the
    # files the verdicts depend on must be the one the table was generated from
    from pysim import readme

    text = (ROOT / "README.md").read_text()
    assert readme.recorded_digest(text) == readme.inputs_digest(), \
        "README.md is out of date: run python -m pysim.readme"


@pytest.mark.parametrize("paper_id", ["atc98_levy", "atc98_hjalmtysson", "atc98_vahdat"])
def test_readme_rows_are_the_scorecard_recomputed_here(paper_id):
    from pysim import readme
    from pysim.scorecard import scorecard

    entry = scorecard([paper_id], quick=False)["papers"][paper_id]
    assert readme.row(paper_id, entry) in (ROOT / "README.md").read_text().splitlines()


def test_the_digest_changes_with_any_input_file(tmp_path, monkeypatch):
    import shutil

    from pysim import readme

    for folder in ("papers/atc98_levy", "native/include"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.setenv("PYSIM_ROOT", str(tmp_path))
    before = readme.inputs_digest()
    ledger_csv = tmp_path / "papers/atc98_levy/ledger.csv"
    ledger_csv.write_text(ledger_csv.read_text() + "\n")
    changed = readme.inputs_digest()
    assert changed != before
    (tmp_path / "papers/atc98_levy/notes.txt").write_text("not an input")
    assert readme.inputs_digest() == changed
