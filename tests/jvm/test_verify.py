"""The verifier: it accepts what javac and the JDK's build produce, agrees with javac's stack maps,
rejects broken code where the real JVM does, and computes frames the real JVM accepts."""
import os
import shutil
import subprocess

import pytest

from pysim.jvm import ClassFile, Hierarchy, VerifyError, compute_frames, corpus, verify
from pysim.jvm.code import insn
from pysim.jvm.verify import stack_map_types

FULL = os.environ.get("PYSIM_JVM_CORPUS") == "full"
needs_java = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                reason="needs a JDK (javac and java)")

PROGRAM = """
public class Prog {
    static int sum(int[] xs) { int s = 0; for (int x : xs) s += x; return s; }
    static Object last(String[] xs) { Object o = null; for (String x : xs) o = x; return o; }
    static long mix(long a, int b) { long r = a; if (b > 2) r = r * b; else r = r - b; return r; }
    static String pick(Object o) { try { return o.toString(); } catch (NullPointerException e) { return "null"; } }
    static float half(int v) { int k = 1; float f = v / 2.0f; return f + k; }
    public static void main(String[] args) {
        StringBuilder sb = new StringBuilder(args.length > 0 ? args[0] : "");
        System.out.println(sum(new int[]{1, 2, 3}) + " " + mix(10L, 3) + " " + pick(null) + " " + half(5) + sb);
    }
}
"""


@pytest.fixture(scope="module")
def hierarchy():
    try:
        return Hierarchy.jdk()
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture
def prog(tmp_path):
    if shutil.which("javac") is None:
        pytest.skip("javac is not installed")
    (tmp_path / "Prog.java").write_text(PROGRAM)
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "Prog.java")], check=True)
    return tmp_path


def _context(cf, m):
    return cf.name, m.name, m.descriptor, m.access


def _assignable(h, a, b):
    if a == b or b == ("top",):
        return True
    if b[0] == "uninit" and a[0] == "uninit":
        return a[1] == b[1].offset
    return b[0] == "object" and (a == ("null",) or (a[0] == "object" and h.is_subclass(a[1], b[1])))


def test_every_sampled_jdk_method_verifies_and_every_javac_frame_admits_the_inferred_one(hierarchy):
    methods = frames = 0
    for _, data in corpus.jdk_classes(every=1 if FULL else 25):
        cf = ClassFile.parse(data)
        for m in cf.methods:
            code = m.code()
            if code is None:
                continue
            result = verify(code, _context(cf, m), hierarchy, every_instruction=True)
            methods += 1
            for f in code.decoded_frames():
                locals_, stack = (stack_map_types(x) for x in result.frames[f.label.offset])
                assert len(stack) == len(f.stack), f"{cf.name}.{m.name} at {f.label.offset}"
                assert all(_assignable(hierarchy, a, b) for a, b in zip(stack, f.stack, strict=True))
                declared = list(f.locals) + [("top",)] * max(0, len(locals_) - len(f.locals))
                inferred = locals_ + [("top",)] * (len(declared) - len(locals_))
                assert all(_assignable(hierarchy, a, b) for a, b in zip(inferred, declared, strict=True)), \
                    f"{cf.name}.{m.name} at {f.label.offset}: ours {inferred}, javac's {declared}"
                frames += 1
    print(f"verified {methods} methods; {frames} javac frames admit the inferred ones")
    assert methods > 7000 and frames > 7000


def test_the_work_counts_grow_with_the_loops_a_method_holds(prog, hierarchy):
    cf = ClassFile.parse((prog / "Prog.class").read_bytes())
    straight = verify(cf.method("half").code(), _context(cf, cf.method("half")), hierarchy).stats
    ints = verify(cf.method("sum").code(), _context(cf, cf.method("sum")), hierarchy).stats
    refs = verify(cf.method("last").code(), _context(cf, cf.method("last")), hierarchy).stats
    assert straight.blocks == 1 and straight.block_visits == 1
    # a loop over ints settles at once; one whose local goes from null to String visits its head again
    assert ints.blocks > 1 and ints.block_visits == ints.blocks
    assert refs.block_visits > refs.blocks
    assert ints.peak_frame_words >= cf.method("sum").code().max_locals


def _mutate(prog, method, edit):
    cf = ClassFile.parse((prog / "Prog.class").read_bytes())
    m = cf.method(method)
    code = m.code()
    code.decoded_frames()
    edit(code, cf)
    m.set_code(code)
    return cf


def _replace(name, new):
    def edit(code, cf):
        k = next(i for i, x in enumerate(code.items) if getattr(x, "name", None) == name)
        code.items[k:k + 1] = new(cf)
    return edit


MUTANTS = {
    "fadd on ints": ("sum", _replace("iadd", lambda cf: [insn("fadd")]), "expected"),
    "a missing operand": ("half", _replace("iload_0", lambda cf: []), "stack"),
    "an int returned as a reference": ("sum", _replace("ireturn", lambda cf: [insn("areturn")]), "areturn"),
    "a float stored where an int is read": ("half", _replace("istore_1", lambda cf: [insn("pop"), insn("fconst_1"),
                                                                                     insn("fstore_1")]), "iload"),
}


@needs_java
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_broken_method_is_refused_by_the_verifier_and_by_the_real_jvm(prog, hierarchy, mutant):
    method, edit, words = MUTANTS[mutant]
    cf = _mutate(prog, method, edit)
    m = cf.method(method)
    with pytest.raises(VerifyError, match=words):
        verify(m.code(), _context(cf, m), hierarchy)
    (prog / "Prog.class").write_bytes(cf.to_bytes())
    run = subprocess.run(["java", "-cp", str(prog), "Prog"], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode != 0 and "VerifyError" in run.stderr


@needs_java
def test_frames_computed_from_scratch_are_accepted_by_the_real_jvm(prog, hierarchy):
    cf = ClassFile.parse((prog / "Prog.class").read_bytes())
    for m in cf.methods:
        code = m.code()
        if code is None:
            continue
        javacs = [(f.label.offset, f.locals, f.stack) for f in code.decoded_frames()]
        code.frames = []
        compute_frames(code, _context(cf, m), hierarchy)
        assert [f.label.offset for f in code.frames] == [off for off, _, _ in javacs]
        m.set_code(code)
    (prog / "Prog.class").write_bytes(cf.to_bytes())
    out = subprocess.run(["java", "-Xshare:off", "-cp", str(prog), "Prog"], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "6 30 null 3.5"


def test_bad_class_bytes_are_refused_with_the_reason():
    from pysim.jvm import ClassFormatError
    with pytest.raises(ClassFormatError, match="magic"):
        ClassFile.parse(b"\x00" * 16)
    good = ClassFile.new("x/Y").to_bytes()
    with pytest.raises(ClassFormatError, match="truncated"):
        ClassFile.parse(good[:-3])
    with pytest.raises(ClassFormatError, match="after the end"):
        ClassFile.parse(good + b"\0")
