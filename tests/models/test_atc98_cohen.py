"""Mechanism checks of the load-time transformation model (atc98_cohen): hand counts of JOIE's work,
the toolkit's transformers against its own rewriter and the real JVM, the corpus against the JDK,
and the real agent."""
import dataclasses
import shutil
import subprocess
import time

import javap_peer
import numpy as np
import pytest

from pysim.jvm import ClassFile, corpus, insn
from pysim.jvm.rewrite import call_on_entry
from pysim.models import atc98_cohen as m

P = m.Params()
JOIE = m.joie_design(P)
needs_jdk = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                               reason="needs a JDK (javac and java)")


def shape(*, utf8=40, utf8_bytes=800, cls=6, nat=8, fref=3, mref=7, string=2, other=0, fields=2, methods=()):
    pool = (("Utf8", utf8), ("Class", cls), ("NameAndType", nat), ("Fieldref", fref), ("Methodref", mref),
            ("String", string), ("other", other))
    pool_bytes = 3 * utf8 + utf8_bytes + 3 * cls + 5 * (nat + fref + mref) + 3 * string + 5 * other
    return m.ClassShape("T", 3000, pool, utf8_bytes, pool_bytes, 1, fields, 16 * fields, tuple(methods), 40)


METHOD = m.MethodShape(False, instructions=50, putfields=3, branches=4, handlers=1, code_bytes=250, other_bytes=16)


# --- JOIE's work, by hand -----------------------------------------------------------------------

def test_marking_a_class_reads_only_its_header_pool_and_interfaces():
    s = shape(methods=(METHOD,))
    t = m.transform(s, ("interface",), P, JOIE)
    parse = t.counts["parse"]
    assert parse["read"] == 16 + (s.pool_bytes - s.utf8_bytes) + 2 * s.interfaces
    assert parse["bulk"] == 40 and parse["copy"] == 800 and parse["char"] == 800
    assert parse["alloc"] == s.pool_entries + 40 + 1          # entries, their Strings, the interface array
    assert set(t.parses) == {"pool", "interfaces"}
    lin = t.counts["linearise"]
    # the tail (fields, methods with their code, attributes) is copied in one bulk write
    tail = s.field_bytes + (16 + 6 + 250) + 40
    marker_utf8 = len(m.MARKER)
    assert lin["copy"] == tail + 800 + marker_utf8
    assert lin["write"] == 16 + (s.pool_bytes + 3 + 3 + marker_utf8) - (800 + marker_utf8) + 2 + 2


def test_linear_searches_scan_each_type_list_as_it_grows():
    k = 3
    s = shape(methods=(METHOD,) * k)
    t = m.transform(s, ("entry",), P, JOIE)
    U, C, N, M, S = 40, 6, 8, 7, 2
    # the Methodref (miss), then Class, Utf8, NameAndType, Utf8, Utf8, Methodref appended after misses;
    # then per method: the Methodref found at the end, a String and a Utf8 appended
    expected = M + C + U + N + (U + 1) + (U + 2) + M + sum((M + 1) + (S + j) + (U + 3 + j) for j in range(k))
    assert t.counts["constant_pool"]["compare"] == expected
    hashed = m.transform(s, ("entry",), P, dataclasses.replace(JOIE, cp_lookup="hashed"))
    assert hashed.counts["constant_pool"]["compare"] == 0
    assert hashed.counts["constant_pool"]["hash"] == 1 + 6 * 2 + k * (1 + 2 + 2)


def test_one_list_for_the_whole_pool_scans_every_entry():
    s = shape(methods=(METHOD,))
    t = m.transform(s, ("interface",), P, dataclasses.replace(JOIE, per_type_lists=False))
    n = s.pool_entries
    assert t.counts["constant_pool"]["compare"] == n + (n + 1)      # Class, then its Utf8, both missing


def test_figure1_copies_the_array_once_per_putfield_and_a_list_allocates_nodes():
    n, k, f = METHOD.instructions, METHOD.putfields, 2
    s = shape(fields=f, methods=(METHOD, dataclasses.replace(METHOD, static=True)))
    arrays = m.transform(s, ("observable",), P, JOIE)
    expected = 4 * (f + 1) + sum(4 * (n + 3 * i + 3) for i in range(k))   # the field list, then each putfield
    assert arrays.counts["insert"]["copy"] == expected
    assert arrays.counts["insert"]["alloc"] == 1 + k
    linked = m.transform(s, ("observable",), P, dataclasses.replace(JOIE, instructions_as="linked"))
    assert linked.counts["insert"]["copy"] == 0 and linked.counts["insert"]["alloc"] == 1 + 3 * k
    # Figure 1 scans only the non-static method; through an iterator each step costs two more calls
    assert arrays.counts["splice"]["virtual_call"] == n
    assert linked.counts["splice"]["virtual_call"] == 3 * n


def test_parse_state_kept_parses_each_element_once_and_bytes_between_parse_again():
    s = shape(methods=(METHOD,) * 4)
    kept = m.transform(s, ("interface", "entry", "observable"), P, JOIE)
    assert max(kept.parses.values()) == 1
    again = m.transform(s, ("interface", "entry", "observable"), P, dataclasses.replace(JOIE, keep_state=False))
    assert again.parses["pool"] == 3 and again.parses[("code", 0)] == 2     # entry and observable need code
    eager = m.transform(s, ("interface",), P, dataclasses.replace(JOIE, lazy=False))
    assert set(eager.parses) == {"pool", "interfaces", "fields", "methods", *(("code", i) for i in range(4))}


def test_a_stage_costs_its_counts_times_the_cycles_of_each_operation():
    s = shape(methods=(METHOD,))
    t = m.transform(s, ("interface",), P, JOIE)
    c = t.counts["parse"]
    cycles = ((c["read"] + c["write"] + c["bulk"]) * (P.virtual_call_cycles + P.lock_cycles + P.stream_work_cycles)
              + c["alloc"] * P.alloc_cycles + c["call"] * P.call_cycles + c["char"] * P.char_cycles
              + c["copy"] * P.copy_cycles_per_byte)
    assert m.stage_ms(t, P)["parse_ms"] == pytest.approx(1e3 * cycles / P.clock_hz, rel=1e-12)
    tuned = dataclasses.replace(P, synchronized_streams=False)
    saved = (c["read"] + c["bulk"]) * P.lock_cycles / P.clock_hz * 1e3
    assert m.stage_ms(t, P)["parse_ms"] - m.stage_ms(t, tuned)["parse_ms"] == pytest.approx(saved, rel=1e-9)


def test_costs_scale_inversely_with_the_clock():
    fast = dataclasses.replace(P, clock_hz=2 * P.clock_hz)
    a, b = m.section44(rng=1, quick=True), m.section44(fast, rng=1, quick=True)
    assert np.allclose(a["total_ms"], 2 * b["total_ms"], rtol=1e-12)


# --- §4.3 ---------------------------------------------------------------------------------------

def test_relocation_picks_shortcuts_explicit_forms_and_wide():
    assert m.relocate(insn("iload_3"), 5).name == "iload" and m.relocate(insn("iload_3"), 5).args == (5,)
    assert m.relocate(insn("astore", 9), 1).name == "astore_1"
    assert m.encoded_bytes(insn("dload", 255)) == 2 and m.encoded_bytes(insn("dload", 256)) == 4  # wide dload
    assert m.encoded_bytes(m.relocate(insn("lstore_0"), 300)) == 4
    with pytest.raises(ValueError, match="frame"):
        m.relocate(insn("iadd"), 2)


# --- the corpus -----------------------------------------------------------------------------------

def test_same_seed_same_corpus_and_another_seed_another():
    assert m.synthetic_shapes(P, 20, rng=3) == m.synthetic_shapes(P, 20, rng=3)
    assert m.synthetic_shapes(P, 20, rng=3) != m.synthetic_shapes(P, 20, rng=4)


def test_the_synthetic_corpus_is_shaped_like_java_base():
    try:
        real = [m.shape_of(ClassFile.parse(d), len(d)) for _, d in corpus.jdk_classes(["java.base"], every=10)]
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    ours, theirs = m.corpus_quantiles(m.corpus(P)), m.corpus_quantiles(real)
    # the generator's parameters were read off java.base: medians and 90th percentiles within a factor 1.5
    for col in ("bytes", "pool", "instructions"):
        for q in ("median", "p90"):
            assert 1 / 1.5 <= ours.loc[q, col] / theirs.loc[q, col] <= 1.5, (col, q)
    assert ours.loc["median", "methods"] == pytest.approx(theirs.loc["median", "methods"], abs=1)


def test_shape_of_counts_putfields_and_branches_as_javap_lists_them(tmp_path):
    if not javap_peer.available():
        pytest.skip("javap is not installed")
    data = _jdk_class("java/util/ArrayList.class")
    path = tmp_path / "ArrayList.class"
    path.write_bytes(data)
    [methods] = javap_peer.run([path])
    words = [name for method in methods for _, name, _ in method]
    s = m.shape_of(ClassFile.parse(data), len(data))
    jumps = {"goto", "goto_w", "jsr", "jsr_w", "tableswitch", "lookupswitch"}
    assert sum(x.putfields for x in s.methods) == words.count("putfield") > 0
    assert sum(x.branches for x in s.methods) == sum(1 for w in words if w.startswith("if") or w in jumps)
    assert s.instructions == len(words)
    assert len([x for x in s.methods if x.has_code]) == len(methods)


# --- the toolkit as the transformer ---------------------------------------------------------------

def _jdk_class(suffix):
    try:
        return next(d for n, d in corpus.jdk_classes(["java.base"]) if n.endswith(suffix))
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))


def test_the_staged_entry_transformer_writes_what_the_toolkits_rewriter_writes():
    data = _jdk_class("java/util/HashMap.class")
    ours = ClassFile.parse(data)
    for mm, code in m._entry_in_place(ours):
        mm.set_code(code)
    theirs = ClassFile.parse(data)
    call_on_entry(theirs, *m.HOOK[:2])
    assert ours.to_bytes() == theirs.to_bytes()


def test_figure1_loop_and_one_pass_place_the_same_splices():
    data = _jdk_class("java/util/ArrayList.class")
    outs = []
    for place in (m.figure1_loop, m.one_pass):
        cf = ClassFile.parse(data)
        make = m.observable_splice(cf)
        for mm, code in m._non_static(m._with_code(cf)):
            place(code, make)
            code.max_stack += 2
            mm.set_code(code)
        outs.append(cf.to_bytes())
    assert outs[0] == outs[1]


def test_measuring_the_pipeline_times_every_stage_with_the_clock_given():
    try:
        classes = list(corpus.jdk_classes(["java.base"], every=400))
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    ticks = iter(range(10 ** 6))
    df = m.measure_pipeline(classes, clock=lambda: float(next(ticks)))
    assert len(df) == len(classes)
    # a counting clock: every stage timed once per class is one tick, the two chains and markers once each
    for col in ("parse_s", "decode_s", "constant_pool_s", "insert_s", "linearise_s", "eager_parse_s",
                "constant_pool_linear_s", "figure1_s", "one_pass_s", "chain_shared_s", "chain_bytes_s"):
        assert (df[col] == 1.0).all(), col
    assert (df["linear_comparisons"] > 10 * df["hashed_comparisons"]).all()
    with pytest.raises(ValueError, match="at least one class"):
        m.measure_pipeline([], clock=time.perf_counter)


@needs_jdk
def test_automatic_observable_sets_dirty_in_the_real_jvm(tmp_path):
    (tmp_path / "Point.java").write_text(
        "public class Point {\n"
        "  int x;\n"
        "  void move(int d) { x += d; }\n"
        "  public static void main(String[] a) throws Exception {\n"
        "    Point p = new Point();\n"
        "    java.lang.reflect.Field f = Point.class.getField(\"dirty\");\n"
        "    boolean before = f.getBoolean(p);\n"
        "    p.move(3);\n"
        "    System.out.println(before + \" \" + f.getBoolean(p) + \" \" + p.x);\n"
        "  }\n"
        "}\n")
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "Point.java")], check=True)
    path = tmp_path / "Point.class"
    cf = ClassFile.parse(path.read_bytes())
    make = m.observable_splice(cf)
    for mm, code in m._non_static(m._with_code(cf)):
        if m.figure1_loop(code, make)[0]:
            code.max_stack += 2
            mm.set_code(code)
    path.write_bytes(cf.to_bytes())
    out = subprocess.run(["java", "-Xverify:all", "-cp", str(tmp_path), "Point"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    # the constructor stores no field, so dirty starts false; move()'s putfield sets it
    assert out.stdout.split() == ["false", "true", "3"]


# --- the agent ----------------------------------------------------------------------------------------

def _agent_or_skip(**kw):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (javac and java)")
    if not all(m._readable(j) for j in m.ASM_JARS):
        pytest.skip("needs ASM (Debian package libasm-java)")
    runs = m.agent_experiment(**kw)
    assert runs.available, runs.reason       # with the tools present, a failure is a failure
    return runs


def test_the_agent_transforms_every_class_and_the_jvm_accepts_them():
    runs = _agent_or_skip(quick=True, modes=("plain", "entry"), tries=1)
    entry = runs.modes.loc["entry"]
    assert entry["failures"] == 0 and entry["classes"] > 50
    assert entry["growth"] > 1.0               # an ldc, a call and a String per method
    assert (runs.classes.loc["entry", "bytes_out"] > runs.classes.loc["entry", "bytes_in"]).mean() > 0.9


def test_the_agents_entry_call_runs_in_a_transformed_program(tmp_path):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (javac and java)")
    folder, why = m.build_agent()
    if folder is None:
        pytest.skip(why)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "Work.java").write_text(
        "public class Work { public static int twice(int x) { return 2 * x; } }\n")
    (tmp_path / "Main.java").write_text(
        "public class Main { public static void main(String[] a) throws Exception {\n"
        "  java.net.URLClassLoader l = new java.net.URLClassLoader(new java.net.URL[]{\n"
        "    new java.io.File(a[0]).toURI().toURL()}, ClassLoader.getPlatformClassLoader());\n"
        "  Class<?> w = Class.forName(\"Work\", true, l);\n"
        "  for (int i = 0; i < 5; i++) w.getMethod(\"twice\", int.class).invoke(null, i);\n"
        "  System.out.println(Class.forName(\"joie.Hook\").getField(\"calls\").getLong(null)); } }\n")
    subprocess.run(["javac", "-d", str(tmp_path / "lib"), str(tmp_path / "lib" / "Work.java")], check=True)
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "Main.java")], check=True)
    out = subprocess.run(["java", f"-javaagent:{folder / 'agent.jar'}=entry", "-cp", str(tmp_path), "Main",
                          str(tmp_path / "lib")], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 5     # twice() five times; Work is never constructed; Main is not transformed


# --- bad input ------------------------------------------------------------------------------------

def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="chain"):
        m.transform(shape(), ("compress",), P, JOIE)
    with pytest.raises(ValueError, match="pool_shares"):
        dataclasses.replace(P, pool_shares=(("Utf8", 1.0),))
    with pytest.raises(ValueError, match="relocation_example"):
        dataclasses.replace(P, relocation_example=(3, -5))
    with pytest.raises(ValueError, match="cp_lookup"):
        dataclasses.replace(P, cp_lookup="binary")
    with pytest.raises(ValueError, match="modes"):
        m.agent_experiment(modes=("plain", "turbo"))


def test_slope_recovers_a_power_law():
    x = np.linspace(10, 1000, 50)
    b, r2 = m._slope(x, 3 * x ** 2)
    assert b == pytest.approx(2.0, abs=1e-9) and r2 == pytest.approx(1.0)


def test_without_a_jdk_the_experiments_say_not_available(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    runs = m.agent_experiment(quick=True)
    assert not runs.available and runs.reason.startswith("not available:")
    table = m.then_and_now(None, runs, rng=0, quick=True)
    assert table["now_agent"].isna().all() and table["now_toolkit"].isna().all()
    assert table["holds_now"].isna().all()
    assert m.agent_scaling(runs).empty
