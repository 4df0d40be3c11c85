"""Mechanism checks of the Safe-Tcl model (atc98_levy): call costs as recipes, the policy mechanism,
and the real experiments in Tcl 8.6."""
import dataclasses
import itertools
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from pysim.models import atc98_levy as m

P = m.Params()
TCLSH = shutil.which("tclsh")
needs_tcl = pytest.mark.skipif(TCLSH is None, reason="tclsh (Tcl 8.6) is not installed")


def tcl(script: str) -> str:
    return subprocess.run([TCLSH], input=script, capture_output=True, text=True, timeout=300, check=True).stdout


def us_of(instructions, p=P):
    return instructions * p.cycles_per_instruction / p.clock_hz * 1e6


# --- Table 1: calls as recipes ------------------------------------------------------------

def test_null_procedure_and_its_alias_by_hand():
    t = m.table1()
    null = us_of(P.call_instructions + P.frame_instructions)
    alias = us_of(P.proxy_instructions + P.lookup_instructions + P.marshal_instructions)
    assert t.loc["null proc", "time_us"] == pytest.approx(null, rel=1e-12)
    assert t.loc["alias to null proc", "time_us"] == pytest.approx(null + alias, rel=1e-12)
    assert t.loc["alias to null proc", "ratio_to_null_proc"] == pytest.approx((null + alias) / null, rel=1e-12)


def test_pid_is_a_dispatch_a_trap_and_its_result():
    expected = us_of(P.call_instructions + P.bytecode_instructions) + P.trap_cycles / P.clock_hz * 1e6
    assert m.table1().loc["pid", "time_us"] == pytest.approx(expected, rel=1e-12)


def test_tcl80_alias_adds_the_same_whatever_the_target_and_tcl86_one_marshal_per_word():
    old = m.table1()["overhead_us"]
    aliases = [m.ALIAS + b for b in m.BENCHMARKS]
    assert old[aliases].nunique() == 1  # 8.0 passes the argument vector on: nothing per argument
    new = m.table1(dataclasses.replace(P, **m.TCL86))["overhead_us"]
    per_word = us_of(P.marshal_instructions)
    assert new["alias to 10arg proc"] - new["alias to null proc"] == pytest.approx(10 * per_word, rel=1e-9)
    assert new["alias to lreverse proc"] - new["alias to null proc"] == pytest.approx(per_word, rel=1e-9)
    # and 8.6 drops the lookup by name
    assert new["alias to null proc"] == pytest.approx(old["alias to null proc"] - us_of(P.lookup_instructions)
                                                      + 1 * per_word, rel=1e-9)


def test_the_predicted_ratio_does_not_depend_on_the_fitted_cycles_per_instruction():
    # the fit scales every row alike, so the one prediction (a ratio) owes nothing to the fitted cell
    ratios = [m.table1(dataclasses.replace(P, cycles_per_instruction=c)).loc["alias to null proc",
                                                                             "ratio_to_null_proc"]
              for c in (0.5, 3.0, 20.0)]
    assert max(ratios) - min(ratios) < 1e-12
    times = [m.table1(dataclasses.replace(P, cycles_per_instruction=c)).loc["alias to lreverse proc", "time_us"]
             for c in (1.0, 2.0)]
    assert times[1] > times[0]


@pytest.mark.parametrize("n", [0, 1, 10, 37])
def test_lreverse_counts_by_hand(n):
    old = m.lreverse_recipe(n, compiled_list_commands=False).ops
    assert old == {"bytecode": 7 + 4 * (n + 1) + 9 * n + 2, "call": 1 + 2 * n, "list_command": 1 + 2 * n}
    assert m.lreverse_recipe(n, compiled_list_commands=True).ops == {"bytecode": 8 + 4 * (n + 1) + 7 * n + 5}


def test_breakdown_adds_up_to_the_table():
    total = m.breakdown_us().sum(axis=1)
    pd.testing.assert_series_equal(total, m.table1()["time_us"], check_names=False, rtol=1e-12)


@needs_tcl
def test_tcl86_bytecode_counts_match_its_disassembly():
    # a real peer: Tcl 8.6 lists the instructions it compiled each procedure into
    out = tcl(m.BENCHMARK_PROCS + "puts [tcl::unsupported::disassemble proc lreverse]\nputs ====\n"
              "puts [tcl::unsupported::disassemble proc add10]\n")
    lreverse, add10 = out.split("====")

    def count(listing):
        return sum(1 for line in listing.splitlines() if line.strip().startswith("(") and ")" in line)

    static = sum(part["bytecode"] for part in m.LREVERSE_PARTS[True])
    assert count(lreverse) == static
    assert count(add10) == m.direct_recipe("10add proc", P).ops["bytecode"]


# --- the policy mechanism ---------------------------------------------------------------------

def test_every_decision_is_what_the_paper_says():
    assert m.policies()["allowed"].to_dict() == m.PAPER_SAYS


@pytest.mark.parametrize("name, flipped", [
    ("policies-compose", {"second policy after home", "reader, then send the file outside"}),
    ("no-trust-map", {"policy trusted", "policy javascript, other origin"}),
    ("unchecked-aliases", {"socket bisque.eng 80", "socket an unknown host", "home: fetch from www.cnet.com",
                           "outside: fetch from the applet's home", "output past the byte limit"}),
])
def test_each_switch_opens_exactly_its_own_holes(name, flipped):
    cf = {c.name: c for c in m.COUNTERFACTUALS}[name]
    base, other = m.policies()["allowed"], m.policies(cf.apply(P))["allowed"]
    assert set(base.index[base != other]) == flipped
    assert (other[list(flipped)] == 1).all()


def test_only_composed_policies_leak_a_local_file():
    assert m.policies()["leaked"].sum() == 0
    composed = m.policies(dataclasses.replace(P, one_policy_per_applet=False))
    assert list(composed.index[composed["leaked"] == 1]) == ["reader, then send the file outside"]


def test_an_ordinary_interpreter_hides_nothing():
    d = m.policies(dataclasses.replace(P, safe_interpreter=False))
    assert d.loc[["open a local file", "exec a program", "invoke the hidden socket itself"], "allowed"].all()


def test_figure2_table_decides_sockets():
    p = dataclasses.replace(P, safe_sockets=(("bisque.eng", (80,)),))
    d = m.policies(p)
    assert d.loc["socket bisque.eng 80", "allowed"] == 1 and d.loc["socket bisque.eng 4000", "allowed"] == 0


@needs_tcl
def test_string_match_agrees_with_tcl():
    rng = np.random.default_rng(0)
    alphabet = "ab/*?"
    pairs = [("".join(rng.choice(list(alphabet), rng.integers(0, 6))),
              "".join(rng.choice(list("ab/"), rng.integers(0, 7)))) for _ in range(300)]
    script = "".join(f"puts [string match {{{p}}} {{{s}}}]\n" for p, s in pairs)
    real = [line == "1" for line in tcl(script).split()]
    assert real == [m.string_match(p, s) for p, s in pairs]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="safe_sockets"):
        dataclasses.replace(P, safe_sockets=(("sage.eng", (70000,)),))
    with pytest.raises(ValueError, match="cycles_per_instruction"):
        dataclasses.replace(P, cycles_per_instruction=0.0)
    with pytest.raises(ValueError, match="iterations"):
        m.timing_script(iterations=0)
    with pytest.raises(ValueError, match="TIME"):
        m.parse_timings("nothing here\n")
    with pytest.raises(ValueError, match="RESULT"):
        m.parse_policy_results("LEAK\t0\n")


# --- the analysis of real timings, on timings made up from known costs ------------------------------

def synthetic_timings(proxy=0.06, per_word=0.003, repeats=8, jitter=0.0):
    """Timings as tclsh would print them, for a machine whose alias costs proxy + per_word per word."""
    p86 = dataclasses.replace(P, **m.TCL86)
    direct = {"pid": 0.2, "null proc": 0.1, "10arg proc": 0.17, "10add proc": 0.26, "lreverse proc": 0.7}
    rows = []
    for rep, (row, where) in itertools.product(range(repeats), [("empty", "safe"), ("empty", "trusted")]):
        rows.append({"row": row, "where": where, "repeat": rep, "time_us": 0.05 + jitter * rep})
    for rep, b in itertools.product(range(repeats), m.BENCHMARKS):
        alias = direct[b] + proxy + per_word * m.marshalled_words(b, p86)
        for row, where, t in ((b, "safe", direct[b]), (b, "trusted", direct[b]), (m.ALIAS + b, "safe", alias)):
            rows.append({"row": row, "where": where, "repeat": rep, "time_us": t + 0.05 + jitter * rep})
    return pd.DataFrame(rows)


def test_alias_fit_recovers_known_costs_and_predicts_the_rest():
    fit = m.alias_fit(synthetic_timings())
    assert fit.attrs["proxy_us"] == pytest.approx(0.06, abs=1e-12)
    assert fit.attrs["marshal_us"] == pytest.approx(0.003, abs=1e-12)
    assert np.allclose(fit["rel_error"], 0.0, atol=1e-9)


def test_net_times_take_the_fastest_repeat_and_the_loop_off():
    t = synthetic_timings(jitter=0.01)   # later repeats slower: the first is the code's own cost
    now = m.net_us(t)
    assert now["null proc"] == pytest.approx(0.1, abs=1e-12)
    text = "".join(f"TIME\t{r.row}\t{r.where}\t{r.repeat}\t{r.time_us}\n" for r in t.itertuples())
    pd.testing.assert_frame_equal(m.parse_timings(text), t[["row", "where", "repeat", "time_us"]])


def test_a_safe_interpreter_slower_than_an_ordinary_one_fails_the_statement():
    t = synthetic_timings(jitter=0.001)
    t.loc[(t["row"] == "10add proc") & (t["where"] == "safe"), "time_us"] += 0.05
    s = m.statements_now(t)
    assert not s.loc["§10.2: policies add overhead only to code that uses aliases", "holds"]
    assert s.loc["§10.2: policies add overhead only to code that uses aliases", "measured"] == pytest.approx(0.05)


def test_statements_on_a_machine_where_marshalling_is_all_of_the_difference():
    # pid and the null procedure cost the same; the alias to pid pays for its result: the paper's reading
    t = synthetic_timings()
    t.loc[t["row"] == "pid", "time_us"] = 0.15
    t.loc[t["row"] == "alias to pid", "time_us"] = 0.15 + 0.06 + 0.006 + 0.05
    s = m.statements_now(t)
    assert s.loc["§9.1: the null alias against the alias to pid shows the cost of marshalling", "holds"]
    assert s.loc["§10.2: policies add overhead only to code that uses aliases", "holds"]


# --- the real experiments ---------------------------------------------------------------------

@needs_tcl
def test_real_policies_decide_as_the_model(tmp_path):
    secret = tmp_path / "notes.txt"
    secret.write_text("private\n")
    decisions, channels, leaked = m.parse_policy_results(tcl(m.policy_script(secret_file=str(secret))))
    assert decisions["allowed"].to_dict() == m.policies()["allowed"].to_dict()
    assert leaked == 0
    assert channels["usable by the applet"].tolist() == [1, 0]   # §4: only the hidden socket's channel
    composed, _, leaked = m.parse_policy_results(tcl(m.policy_script(secret_file=str(secret), compose=True)))
    assert composed.loc["reader, then send the file outside", "allowed"] == 1
    assert leaked == len("private\n")


@needs_tcl
def test_real_timings_in_a_safe_interpreter():
    t = m.parse_timings(tcl(m.timing_script(**m.timing_settings(quick=True))))
    assert set(t["row"]) == {"empty", *m.ROWS}
    now = m.net_us(t)
    for b in ("pid", "null proc", "10arg proc"):   # an alias costs more than the call it makes
        assert now[m.ALIAS + b] > now[b] > 0
    table = m.then_and_now(t)
    assert (table["speedup"] > 10).all()      # a 233 MHz Pentium with Tcl 8.0 against any machine today
    assert m.alias_fit(t).attrs["proxy_us"] > 0
