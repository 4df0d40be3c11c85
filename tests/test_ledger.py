"""Ledgers, claims and verdicts: each malformed input is refused with file, line and field."""
import pytest

from pysim import ledger
from pysim.errors import LedgerError


def rewrite(root, name, text):
    (root / "papers" / "zz99_demo" / name).write_text(text)


HEADER = "artifact,row,column,value,unit,source,tolerance,note\n"


def test_the_demo_paper_loads(lab_root):
    p = ledger.load("zz99_demo")
    assert p.title == "A demonstration paper" and set(p.artifacts) == {"figure1", "table1"}
    assert len(p.cells) == 4 and len(p.claims) == 2


@pytest.mark.parametrize("line, message", [
    ("table9,1,y,2.0,s,printed,0.1,", r"ledger.csv:2: field artifact: unknown artifact 'table9'"),
    ("table1,1,y,two,s,printed,0.1,", r"ledger.csv:2: field value: 'two' is not a number"),
    ("table1,1,y,2.0,s,measured,0.1,", r"ledger.csv:2: field source: 'measured' is not one of"),
    ("table1,1,y,2.0,s,printed,1.5,", r"ledger.csv:2: field tolerance: 1.5 is outside \(0, 1\]"),
    ("table1,1,y,2.0,s,printed,0,", r"ledger.csv:2: field tolerance: 0.0 is outside"),
    ("table1,1,y,2.0,s,reconstructed,0.1,", r"ledger.csv:2: field note: a reconstructed value must say how"),
    ("table1,1,y,2.0,s", r"ledger.csv:2: expected 8 fields"),
])
def test_malformed_ledger_rows_are_refused(lab_root, line, message):
    rewrite(lab_root, "ledger.csv", HEADER + line + "\n")
    with pytest.raises(LedgerError, match=message):
        ledger.load("zz99_demo")


def test_bad_header_is_refused(lab_root):
    rewrite(lab_root, "ledger.csv", "artifact,row,value\n")
    with pytest.raises(LedgerError, match=r"ledger.csv:1: header must be"):
        ledger.load("zz99_demo")


def test_row_or_column_missing_from_the_model_names_the_line(lab_root):
    rewrite(lab_root, "ledger.csv", HEADER + "table1,1,y,2.0,s,printed,0.1,\ntable1,7,y,2.0,s,printed,0.1,\n")
    p = ledger.load("zz99_demo")
    with pytest.raises(LedgerError, match=r"ledger.csv:3: row '7' not in the model's output"):
        ledger.compare(p, "table1", p.model().table1())
    rewrite(lab_root, "ledger.csv", HEADER + "table1,1,z,2.0,s,printed,0.1,\n")
    with pytest.raises(LedgerError, match=r"ledger.csv:2: column 'z' not in the model's output"):
        ledger.compare(ledger.load("zz99_demo"), "table1", p.model().table1())


@pytest.mark.parametrize("yaml_text, message", [
    ("title: x\n", "missing field"),
    ("title: [unclosed\n", "not valid YAML"),
])
def test_malformed_paper_yaml_is_refused(lab_root, yaml_text, message):
    rewrite(lab_root, "paper.yaml", yaml_text)
    with pytest.raises(LedgerError, match=message):
        ledger.load("zz99_demo")


@pytest.mark.parametrize("check, message", [
    ("__import__('os').system('true')", "leading underscore"),
    ("table1.__class__", "leading underscore"),
    ("[x for x in table1['y']]", "ListComp is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("open('/etc/passwd')", None),  # parses, but no builtins: fails when evaluated
])
def test_claims_cannot_reach_outside_their_frames(lab_root, check, message):
    text = f"- id: bad\n  artifacts: [table1]\n  section: x\n  quote: x\n  check: \"{check}\"\n"
    rewrite(lab_root, "claims.yaml", text)
    if message:
        with pytest.raises(LedgerError, match=message):
            ledger.load("zz99_demo")
    else:
        card = ledger.score_paper("zz99_demo")
        assert card["artifacts"]["table1"]["verdict"] == "error"
        assert "NameError" in card["artifacts"]["table1"]["error"]


def test_a_claim_that_is_not_a_truth_value_is_an_error_not_held(lab_root):
    rewrite(lab_root, "claims.yaml", "- id: v\n  artifacts: [table1]\n  section: x\n  quote: x\n  check: \"table1['y'].sum()\"\n")
    a = ledger.score_paper("zz99_demo")["artifacts"]["table1"]
    assert a["verdict"] == "error" and a["claims_held"] == 0


def test_verdict_counts_fits_apart_and_skips_doubtful_cells(lab_root):
    card = ledger.score_paper("zz99_demo")
    t1 = card["artifacts"]["table1"]
    # row 1 is the fit; row 2 (4.1 vs 4) within 10%; row 3 (9 vs 6) outside; the doubtful x cell unscored
    assert (t1["cells_fitted"], t1["cells_scored"], t1["cells_within"]) == (1, 2, 1)
    assert (t1["claims"], t1["claims_held"]) == (2, 1)
    assert t1["verdict"] == "partly replicated"
    assert card["artifacts"]["figure1"]["verdict"] == "not applicable"


@pytest.mark.parametrize("counts, verdict", [((2, 2, 1, 1), "replicated"), ((2, 0, 1, 0), "not replicated"),
                                             ((2, 1, 0, 0), "partly replicated"), ((0, 0, 0, 0), "not applicable")])
def test_verdict_rules(counts, verdict):
    assert ledger.verdict_of(*counts) == verdict


def test_a_failing_model_function_is_an_error_verdict(lab_root):
    text = (lab_root / "papers" / "zz99_demo" / "paper.yaml").read_text().replace("function: table1", "function: broken")
    rewrite(lab_root, "paper.yaml", text)
    a = ledger.score_paper("zz99_demo")["artifacts"]["table1"]
    assert a["verdict"] == "error" and "always fails" in a["error"]


def test_unknown_paper_lists_the_valid_ids(lab_root):
    with pytest.raises(LedgerError, match="unknown paper 'nope'; valid: zz97_hangs, zz98_raises, zz99_demo"):
        ledger.load("nope")
