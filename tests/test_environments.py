"""environment.yml (conda) must declare what pyproject.toml (pip) declares."""
import re
import tomllib
from pathlib import Path

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


def test_readme_table_is_generated_from_the_registry_and_current():
    from pysim import readme

    text = (ROOT / "README.md").read_text()
    assert readme.render(text) == text, "README.md is out of date: run python -m pysim.readme"
