"""Mechanism checks of the bytecode-similarity model (atc98_baker): the listing, the offset encoding,
siff, dup and diff against hand counts, brute force and real peers (javac, javap, GNU diff)."""
import dataclasses
import itertools
import re
import shutil
import subprocess
import zipfile

import numpy as np
import pytest

from pysim.jvm import ClassFile, Code, Label, corpus, insn
from pysim.models import atc98_baker as m

P = m.Params()
TODAY = dataclasses.replace(P, pool_order="first use", pooled_constants=False)
needs_javac = pytest.mark.skipif(shutil.which("javac") is None, reason="javac is not installed")


def one_method_listing(items, params=P, max_locals=6):
    cf = ClassFile.new("t/T")
    cf.add_method("f", "()V", 0x0001, Code(4, max_locals, items, [], cf.pool))
    return m.class_listing(cf.to_bytes(), params)


# --- Figures 1 and 2, the listing, the encoding --------------------------------------------------

FIGURE1 = ("o182 c106 o153 j+17 o025 v4 o180 c253 o025 v5 o182 c102 o025 v4 o180 c253 o025 v4 o182 c260 "
           "o025 v5 o180 c253").split()
FIGURE2 = ("o182 c-26 o153 j+17 o025 v-10 o180 c-10 o025 v-10 o182 c-26 o025 v-8 o180 c-8 o025 v-4 o182 c-26 "
           "o025 v-12 o180 c-8").split()


def test_figures_1_and_2_come_out_of_real_class_file_bytes_as_printed():
    assert list(m.figure1()["item"]) == FIGURE1
    assert list(m.figure2()["item"]) == FIGURE2
    # the other jump convention (from the opcode's line) would print j+18 for the same bytes
    other = dataclasses.replace(P, jump_lines_from="opcode line")
    assert m.figure1(other).loc["4", "item"] == "j+18"


def test_jumps_are_counted_in_lines_both_ways():
    top, end = Label(), Label()
    # line: 0 iload_1 | 1 ifeq 2 j | 3 iinc 4 v 5 i | 6 goto 7 j | 8 return
    lst = one_method_listing([top, insn("iload_1"), insn("ifeq", end), insn("iinc", 1, 1), insn("goto", top),
                              end, insn("return")])
    assert lst.raw_text().split() == ["o027", "o153", "j+6", "o132", "v1", "i1", "o167", "j-7", "o177"]
    assert lst.target[2] == 8 and lst.target[7] == 0


def test_the_offset_encoding_by_hand_and_under_a_renumbering():
    lst = m.Listing(("o", "c", "o", "v", "o", "c", "o", "v", "c"), (180, 7, 25, 4, 180, 9, 25, 4, 7), (-1,) * 9)
    enc = m.encode_offsets(lst, P)
    assert [v for k, v in enc if k in "cv"] == [0, 0, 0, -4, -7]
    # §3.4: 'if two files are the same except that indices in one file are always one larger ..., the
    # encodings of the two files will be identical'
    shifted = m.Listing(lst.kinds, tuple(v + 1 if k in "cv" else v for k, v in zip(lst.kinds, lst.values, strict=True)),
                        lst.target)
    assert m.encode_offsets(shifted, P) == enc
    assert m.encode_offsets(shifted, dataclasses.replace(P, offset_encoding=False)) != enc


@pytest.mark.parametrize("case", range(4))
def test_one_inserted_statement_changes_the_next_use_of_every_index_live_across_it(case):
    # an exact count. `this.f = 43;` goes at the top of a method, f a field the methods before it use, so
    # the raw listing gains five lines and nothing else moves (today's pool: no renumbering). The encoded
    # lines that change are then, for every pool or local index used both before and after the
    # insertion, its first use after it.
    prog = m.ProgramWriter(TODAY, case).program("Live", 160)
    k = len(prog.methods) // 2
    earlier = dataclasses.replace(prog, methods=prog.methods[:k]).source()
    field = next(f for f in prog.fields if f" {f}" in earlier or f"({f}" in earlier or f".{f}" in earlier)
    method = prog.methods[k]
    body = method.body[:1] + (("put", field, ("const", 43)),) + method.body[1:]
    edited = dataclasses.replace(prog, methods=prog.methods[:k] + (dataclasses.replace(method, body=body),)
                                 + prog.methods[k + 1:])
    a = m.class_listing(m.Compiler(TODAY).compile(prog), TODAY)
    b = m.class_listing(m.Compiler(TODAY).compile(edited), TODAY)
    raw_a, raw_b = a.raw_text().split(), b.raw_text().split()
    raw = m.diff_stats(raw_a, raw_b)
    assert (raw.deleted, raw.added) == (0, 5)
    cut = next(i for i, (x, y) in enumerate(zip(raw_a, raw_b, strict=False)) if x != y)   # the insertion point
    before = {(kk, v) for kk, v in zip(a.kinds[:cut], a.values[:cut], strict=True) if kk in "cv"}
    after = {(kk, v) for kk, v in zip(a.kinds[cut:], a.values[cut:], strict=True) if kk in "cv"}
    st = m.diff_stats(a.text(TODAY).split(), b.text(TODAY).split())
    assert st.deleted == len(before & after) > 5
    assert st.added == st.deleted + 5


@pytest.mark.skipif(shutil.which("javap") is None, reason="javap is not installed")
def test_the_listing_agrees_with_javap_on_real_jdk_classes(tmp_path):
    import javap_peer

    try:
        classes = list(itertools.islice(corpus.jdk_classes(["java.base"], every=400), 12))
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    paths = []
    for k, (_, data) in enumerate(classes):
        paths.append(tmp_path / f"C{k}.class")
        paths[-1].write_bytes(data)
    for (_, data), listed in zip(classes, javap_peer.run(paths), strict=True):
        methods = [mm for mm in ClassFile.parse(data).methods if mm.attribute("Code") is not None]
        assert len(methods) == len(listed)
        for method, insns in zip(methods, listed, strict=True):
            lst = m.listing([method], P)
            opcodes = [v for k, v in zip(lst.kinds, lst.values, strict=True) if k == "o"]
            assert len(opcodes) == len(insns)
            pool = [v for k, v in zip(lst.kinds, lst.values, strict=True) if k == "c"]
            theirs = [int(ops[0][1:]) for _, _, ops in insns if ops and ops[0].startswith("#")]
            assert pool == theirs


# --- siff ----------------------------------------------------------------------------------------

def test_siff_keeps_a_sample_wherever_it_appears_and_is_asymmetric():
    rng = np.random.default_rng(1)
    a = bytes(rng.integers(32, 127, 4000, dtype=np.uint8))
    b = a + bytes(rng.integers(32, 127, 4000, dtype=np.uint8))   # B holds A and as much again
    fa, fb = m.fingerprints(a, P), m.fingerprints(b, P)
    assert m.siff_similarity(fa, fb) == 100.0       # §2.1: a sample of A is taken in B too
    assert m.siff_similarity(fb, fa) == pytest.approx(50.0, abs=5.0)   # §4.2: 'B is 50% similar to A'
    assert m.siff_similarity(fa, fa) == 100.0
    # the rule keeps about one block in sample_modulus
    assert len(fa) == pytest.approx((len(a) - P.block_bytes + 1) / P.sample_modulus, rel=0.2)


def test_all_against_all_siff_equals_the_pairwise_measure():
    rng = np.random.default_rng(2)
    base = [bytes(rng.integers(97, 101, 600, dtype=np.uint8)) for _ in range(6)]
    files = base + [base[0][:300] + base[1][:300], base[2] + base[3]]
    prints = [m.fingerprints(f, P) for f in files]
    for threshold in (10.0, 50.0):
        got = {(a, b): s for a, b, s in m.siff_pairs(prints, threshold).itertuples(index=False)}
        want = {(a, b): m.siff_similarity(prints[a], prints[b]) for a in range(len(files))
                for b in range(len(files)) if a != b and m.siff_similarity(prints[a], prints[b]) >= threshold}
        assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k]) for k in got)


# --- dup -----------------------------------------------------------------------------------------

def test_the_p_encoding_of_section_2_2():
    # §2.2: u(x,y)=(x>y)?x:y; and v(w,z)=(w>z)?w:z; both encode as 0(0,0)=(6>6)?5:5;
    def encode(text, names):
        toks = list(text)
        lst = m.Listing(tuple("c" if t in names else "o" for t in toks),
                        tuple(ord(t) for t in toks), (-1,) * len(toks))
        t = m.dup_tokens(lst, P)
        return [int(p) if par else toks[i] for i, (p, par) in enumerate(zip(t.prev, t.param, strict=True))]

    first = encode("u(x,y)=(x>y)?x:y;", "uxy")
    assert "".join(map(str, first)) == "0(0,0)=(6>6)?5:5;"
    assert encode("v(w,z)=(w>z)?w:z;", "vwz") == first


def brute_force_pmatches(a, b, threshold):
    """Maximal p-matches by definition: equal exact parts and a consistent one-to-one renaming."""
    def pmatch(i, j, n):
        fwd, back = {}, {}
        for t in range(n):
            (ka, va), (kb, vb) = a[i + t], b[j + t]
            if ka != kb:
                return False
            if ka == "o":
                if va != vb:
                    return False
            elif fwd.setdefault((ka, va), vb) != vb or back.setdefault((kb, vb), va) != va:
                return False
        return True

    found = set()
    for i in range(len(a)):
        for j in range(len(b)):
            n = 0
            while i + n < len(a) and j + n < len(b) and pmatch(i, j, n + 1):
                n += 1
            left = i > 0 and j > 0 and pmatch(i - 1, j - 1, n + 1)
            if n >= threshold and not left:
                found.add((i, j, n))
    return found


@pytest.mark.parametrize("case", range(6))
def test_dup_finds_exactly_the_maximal_p_matches(case):
    rng = np.random.default_rng(case)

    def random_items(n):
        return [("o", int(rng.integers(3))) if rng.random() < 0.5 else ("c", int(rng.integers(4)))
                for _ in range(n)]

    a = random_items(40)
    b = a[5:30] + random_items(6) + [(k, (v + 1) % 4 if k == "c" else v) for k, v in a[10:35]]  # a renamed copy
    la = m.Listing(tuple(k for k, _ in a), tuple(v for _, v in a), (-1,) * len(a))
    lb = m.Listing(tuple(k for k, _ in b), tuple(v for _, v in b), (-1,) * len(b))
    got = set(m.pmatches(m.dup_tokens(la, P), m.dup_tokens(lb, P), 8, 4))
    assert got == brute_force_pmatches(a, b, 8)
    assert any(n >= 25 for _, _, n in got)   # the renamed copy of a[10:35] is found whole


def test_all_against_all_dup_finds_what_pairwise_dup_finds():
    p = dataclasses.replace(P, dup_threshold_lines=60)
    progs = [m.ProgramWriter(p, s).program(f"D{s}", 80) for s in range(3)]
    variants = progs + [dataclasses.replace(progs[0], methods=progs[0].methods[::-1]),
                        m.insert_statement(progs[1], np.random.default_rng(0), "extra")]
    toks = [m.compile_program(v, p).tokens for v in variants]
    table = m.dup_pairs(toks, 60, p.dup_seed_lines, common_cap=10 ** 9)
    got = {(a, b): n for a, b, n in zip(table["a"], table["b"], table["longest_lines"], strict=True)}
    want = {}
    for a, b in itertools.permutations(range(len(toks)), 2):
        ms = m.pmatches(toks[a], toks[b], 60, p.dup_seed_lines)
        if ms:
            want[(a, b)] = max(x[2] for x in ms)
    assert got == want and (3, 0) in got and (4, 1) in got


def test_labels_let_dup_match_across_jumps_that_span_an_insertion():
    tl = m.tools(quick=True)
    fixed = m.tools(dataclasses.replace(P, dup_jump_labels=False), quick=True)
    assert tl.loc["jump over insertion", "dup_pct"] == 100.0
    assert fixed.loc["jump over insertion", "dup_pct"] < 100.0


# --- diff ----------------------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("diff") is None, reason="GNU diff is not installed")
@pytest.mark.parametrize("case", range(40))
def test_diff_finds_a_shortest_edit_script_as_gnu_diff_does(case, tmp_path):
    rng = np.random.default_rng(case)
    a = [str(x) for x in rng.integers(0, 6, int(rng.integers(0, 50)))]
    b = list(a)
    for _ in range(int(rng.integers(0, 12))):
        r = rng.random()
        if r < 0.4 and b:
            del b[int(rng.integers(len(b)))]
        elif r < 0.8:
            b.insert(int(rng.integers(len(b) + 1)), str(rng.integers(0, 6)))
        elif b:
            b[int(rng.integers(len(b)))] = str(rng.integers(0, 6))
    ops = m.diff_script(a, b)
    i = j = 0
    for op in ops:   # the script turns a into b, keeping only equal lines
        if op == 0:
            assert a[i] == b[j]
            i, j = i + 1, j + 1
        elif op == 1:
            i += 1
        else:
            j += 1
    assert (i, j) == (len(a), len(b))
    (tmp_path / "a").write_text("".join(x + "\n" for x in a))
    (tmp_path / "b").write_text("".join(x + "\n" for x in b))
    out = subprocess.run(["diff", "--minimal", str(tmp_path / "a"), str(tmp_path / "b")], capture_output=True,
                         text=True).stdout.splitlines()
    assert m.diff_stats(a, b).changed == sum(line[:1] in "<>" for line in out if line)


def test_diff_output_of_isolated_changes_is_four_lines_each():
    a = [f"l{k}" for k in range(30)]
    b = list(a)
    b[5], b[20] = "x", "y"
    st = m.diff_stats(a, b)
    assert (st.deleted, st.added, st.output_lines, st.common_blocks) == (2, 2, 8, 3)


# --- programs, the compiler and the edits ------------------------------------------------------------

@needs_javac
def test_the_compiler_emits_what_javac_emits_for_the_generated_programs(tmp_path):
    for seed in range(4):
        prog = m.ProgramWriter(TODAY, seed).program("Gen", 182)
        (tmp_path / "Gen.java").write_text(prog.source())
        (tmp_path / "Sink.java").write_text("public class Sink { public void put(int x) {} "
                                            "public void say(String s) {} }\n")
        subprocess.run(["javac", "-d", str(tmp_path / "out"), str(tmp_path / "Gen.java"),
                        str(tmp_path / "Sink.java")], check=True, capture_output=True)
        ours = ClassFile.parse(m.Compiler(TODAY).compile(prog))
        theirs = {mm.name: mm for mm in ClassFile.parse((tmp_path / "out" / "Gen.class").read_bytes()).methods}
        for method in ours.methods:
            a, b = m.listing([method], TODAY), m.listing([theirs[method.name]], TODAY)
            # everything but the pool indices, which follow each compiler's own pool
            assert [x for x in zip(a.kinds, a.values, strict=True) if x[0] != "c"] == \
                   [x for x in zip(b.kinds, b.values, strict=True) if x[0] != "c"]


def test_the_sorted_pool_renumbers_everything_after_a_lost_entry_and_today_nothing_moves():
    prog = m.ProgramWriter(P, 7).program("E", P.source_lines)
    before, after = m.constant_edit(prog, P, np.random.default_rng(7))
    assert m.constants_used(before).count(P.edited_from) == P.constant_edits
    assert P.edited_from not in m.constants_used(after)

    def raw_changes(p):
        a, b = (m.class_listing(m.Compiler(p).compile(x), p) for x in (before, after))
        return m.diff_stats(a.raw_text().split(), b.raw_text().split()).deleted, a

    today, _ = raw_changes(TODAY)
    then, lst = raw_changes(P)
    assert today == P.constant_edits          # iconst_4 -> iconst_5, nothing else
    pool_lines = sum(k == "c" for k in lst.kinds)
    assert then >= 0.95 * pool_lines           # every reference behind the lost entry moved


def test_a_renamed_local_changes_the_source_and_not_one_byte_of_code():
    prog = m.ProgramWriter(P, 3).program("R", 120)
    renamed = m.rename_local(prog, np.random.default_rng(3))
    assert renamed.source() != prog.source()
    assert m.Compiler(P).compile(renamed) == m.Compiler(P).compile(prog)


def test_generated_programs_have_the_lines_asked_for():
    for lines in (40, 182, 400):
        assert len(m.ProgramWriter(P, lines).program("L", lines).source().splitlines()) == lines


# --- bad input -------------------------------------------------------------------------------------

def test_bad_parameters_and_scenarios_are_refused():
    with pytest.raises(ValueError, match="edited_to"):
        dataclasses.replace(P, edited_to=P.edited_from)
    with pytest.raises(ValueError, match="dup_seed_lines"):
        dataclasses.replace(P, dup_seed_lines=300)
    with pytest.raises(ValueError, match="jump_lines_from"):
        dataclasses.replace(P, jump_lines_from="somewhere")
    with pytest.raises(ValueError, match="scenario"):
        m.scenario_pair("deleted everything", m.ProgramWriter(P, 0).program("X", 60), P, np.random.default_rng(0))
    with pytest.raises(ValueError, match="pool index"):
        m.excerpt_class(dataclasses.replace(P, figure1_excerpt=(("getfield", 3),)))


# --- the real measurement ------------------------------------------------------------------------

@needs_javac
def test_javac_mutants_of_real_jdk_sources(tmp_path):
    try:
        archive = corpus.source_zip()
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    with zipfile.ZipFile(archive) as z:
        sources = {path: z.read(path).decode() for path in m.MUTATION_SOURCES[:2]}
    plan = m.mutation_plan(sources, 0, quick=True)
    units = m.units_of(plan)
    files = []
    for pkg, (cls, text) in units.items():
        (tmp_path / pkg).mkdir()
        files.append(tmp_path / pkg / f"{cls}.java")
        files[-1].write_text(text)
    run = subprocess.run(["javac", "-nowarn", "-implicit:none", "-d", str(tmp_path / "out"), *map(str, files)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]   # every planned mutant compiles
    classes = {pkg: {f.name: f.read_bytes() for f in (tmp_path / "out" / pkg).glob("*.class")} for pkg in units}
    res = m.mutation_results(plan, classes)
    assert len(res) == len(plan) - len(sources)
    assert (res.loc[res["mix"] == "rename", "bytecode_pct"] == 100.0).all()   # names never reach the code
    assert (res.loc[res["mix"] == "rename", "source_pct"] < 100.0).all()
    assert res["bytecode_pct"].between(0, 100).all() and res["made"].gt(0).all()
    assert (res.loc[res["mix"] == "mixed", "made"] == res.loc[res["mix"] == "mixed", "edits"]).all()
    assert not re.search(r"error", run.stderr)
