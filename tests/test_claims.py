"""The claims sandbox: the read-only operations claims need work; hostile claims are refused."""
import pandas as pd
import pytest

from pysim import claims
from pysim.errors import LedgerError


@pytest.fixture
def frames():
    t = pd.DataFrame({"x": [1, 2, 3], "y": [2.0, 4.5, 9.0]}).set_index("x")
    f = pd.DataFrame({"a": [1.0, 3.0]}, index=pd.Index(["lo", "hi"], name="load"))
    return {"table1": t, "figure2": f}


@pytest.mark.parametrize("check, expected", [
    ("monotone_increasing(table1['y'])", True),
    ("table1.loc[3, 'y'] > 4 * table1.loc[1, 'y']", True),
    ("table1['y'].max() == 9.0 and table1['y'].idxmax() == 3", True),
    ("abs(table1['y'].pct_change().iloc[-1] - 1.0) < 0.01", True),
    ("figure2.loc['hi', 'a'] / figure2.loc['lo', 'a'] >= 3", True),
    ("table1['y'].between(1, 10).all()", True),
    ("2 ** 3 == 8 and 3 * 3 == 9", True),
    ("linear_fit_r2(table1.index, table1['y']) > 0.99", False),
    ("'lo' in figure2.index", True),
    ("table1.shape[0] == 3 if not table1.empty else False", True),
    ("(table1['y'].values > 1).all()", True),  # NumPy imports lazily inside: it must find the import machinery
])
def test_read_only_claims_evaluate(frames, check, expected):
    assert claims.evaluate(check, frames) is expected


@pytest.mark.parametrize("check, message", [
    # writing files and running pandas' own evaluators: methods outside the read-only set
    ("table1.to_csv('/tmp/pwned.csv') is None", r"attribute 'to_csv' is not one of the read-only operations"),
    ("table1.eval('y * 2').sum() > 0", r"attribute 'eval' is not one"),
    ("table1.query('y > 0').empty", r"attribute 'query' is not one"),
    ("table1.pipe(len) > 0", r"attribute 'pipe' is not one"),
    ("table1['y'].apply(abs).sum() > 0", r"attribute 'apply' is not one"),
    ("table1.to_pickle('/tmp/x') is None", r"attribute 'to_pickle'"),
    # reaching builtins, dunders and other names
    ("__import__('os').system('true') == 0", r"leading underscore"),
    ("table1.__class__ is None", r"leading underscore"),
    ("open('/etc/passwd') is None", r"name 'open' is neither one of the claim's artifacts"),
    ("getattr(table1, 'to_csv') is None", r"name 'getattr' is neither"),
    ("os.system('true') == 0", r"attribute 'system' is not one of the read-only"),
    ("os.index == 0", r"name 'os' is neither one of the claim's artifacts"),
    ("table1['y'].max()(1) == 0", r"a claim may call only named helpers and read-only methods"),
    # calling what an expression returns, keyword tricks, comprehensions, lambdas, assignment
    ("table1.loc[1]['y'].max(engine='python') > 0", r"keyword 'engine' is not allowed"),
    ("sorted(table1['y'], reverse=True)[0] > 0", r"keyword 'reverse' is not allowed"),
    ("table1.values.all.__self__ is None", r"leading underscore"),
    ("max(**table1) > 0", r"keyword None is not allowed"),
    ("[x for x in table1['y']] == []", r"ListComp is not allowed"),
    ("(lambda: 1)() == 1", r"Lambda is not allowed"),
    ("(y := 1) == 1", r"NamedExpr is not allowed"),
    ("f'{table1}' == ''", r"JoinedStr is not allowed"),
    ("{'a': 1} == {}", r"Dict is not allowed"),
    ("'" + "x" * 300 + "' == ''", r"a string in a claim may not exceed 200"),
])
def test_hostile_claims_are_refused_before_they_run(frames, check, message):
    with pytest.raises(LedgerError, match=message):
        claims.parse(check, tuple(frames))
    with pytest.raises(LedgerError):
        claims.evaluate(check, frames)


@pytest.mark.parametrize("check, message", [
    ("10 ** 10 ** 10 > 0", r"a power in a claim may not exceed 64"),
    ("len('x' * 1000000000) > 0", r"repeating a string or a sequence"),
    ("len([1] * 1000000000) > 0", r"repeating a string or a sequence"),
    ("table1.values.tolist() * 10 == []", r"repeating a string or a sequence"),
    # attributes are taken only from frames, series, indexes and numbers: not from what a method returns
    ("table1['y'].max.name == ''", r"attribute 'name' taken from a method"),
])
def test_hostile_claims_are_stopped_as_they_run(frames, check, message):
    with pytest.raises(LedgerError, match=message):
        claims.evaluate(check, frames)


def test_a_claim_that_raises_is_an_error_not_false(frames):
    with pytest.raises(LedgerError, match="KeyError"):
        claims.evaluate("table1.loc[7, 'y'] > 0", frames)


def test_numbers_in_a_check_are_the_bands_it_needs_reasons_for():
    assert claims.numbers_in("0.35 <= a.loc[1, 'x'] / a.loc[0, 'x'] <= 0.53 and b > 0 and c < 1") == [0.35, 0.53]
