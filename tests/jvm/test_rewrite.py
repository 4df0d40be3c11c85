"""Rewriting real classes: calls inserted on entry and before returns, the constant pool appended to
(hashed or linear lookup), lazy and eager parsing, far jumps widened; the real JVM runs the result."""
import shutil
import subprocess

import pytest

from pysim.jvm import ClassFile, corpus
from pysim.jvm.code import decode, insn
from pysim.jvm.rewrite import call_before_returns, call_on_entry

PROGRAM = """
public class App {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    static int spin(int n) { int k = 0; while (k < n) { k++; } return k; }
    static String safe(Object o) { try { return o.toString(); } catch (RuntimeException e) { return "caught"; } }
    public static void main(String[] a) { System.out.println(fib(5) + " " + spin(3) + " " + safe(null)); }
}
"""
HOOK = """
public class Hook {
    static int entries, exits;
    static { Runtime.getRuntime().addShutdownHook(new Thread(() ->
        System.out.println("entries=" + entries + " exits=" + exits))); }
    public static void enter(String where) { entries++; }
    public static void leave(String where) { exits++; }
}
"""


@pytest.fixture
def app(tmp_path):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (javac and java)")
    for name, text in (("App", PROGRAM), ("Hook", HOOK)):
        (tmp_path / f"{name}.java").write_text(text)
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "App.java"), str(tmp_path / "Hook.java")],
                   check=True)
    return tmp_path


def _run(folder):
    return subprocess.run(["java", "-cp", str(folder), "App"], capture_output=True, text=True, timeout=60,
                          check=True).stdout.split("\n")


def test_hooks_on_entry_and_before_every_return_run_where_they_were_put(app):
    cf = ClassFile.parse((app / "App.class").read_bytes())
    methods = call_on_entry(cf, "Hook", "enter")
    returns = call_before_returns(cf, "Hook", "leave")
    assert methods == 5 and returns == 6  # <init>, fib, spin, safe, main; safe returns in two places
    (app / "App.class").write_bytes(cf.to_bytes())
    out = _run(app)
    # fib(5) makes 15 calls; each call, spin, safe (through its handler) and main enter once and leave once
    assert out[0] == "5 3 caught"
    assert out[1] == "entries=18 exits=18"


def test_appending_finds_existing_entries_and_a_linear_pool_compares_many_more(app):
    data = (app / "App.class").read_bytes()
    counts = {}
    for lookup in ("hashed", "linear"):
        cf = ClassFile.parse(data, lookup=lookup)
        before = len(cf.pool)
        same = cf.pool.add_member_ref("Methodref", "App", "fib", "(I)I")
        assert len(cf.pool) == before and cf.pool.member_ref(same)[2] == "fib"
        call_on_entry(cf, "Hook", "enter")
        counts[lookup] = cf.pool.comparisons
        assert ClassFile.parse(cf.to_bytes()).to_bytes() == cf.to_bytes()
    assert counts["linear"] > 10 * counts["hashed"]


def test_lazy_and_eager_parses_write_the_same_transformed_bytes(app):
    data = (app / "App.class").read_bytes()
    outs = []
    for eager in (False, True):
        cf = ClassFile.parse(data, eager=eager)
        call_on_entry(cf, "Hook", "enter")
        outs.append(cf.to_bytes())
    assert outs[0] == outs[1]
    lazy = ClassFile.parse(data)
    assert sum(e is not None for e in lazy.pool._entries) == 0  # nothing decoded until asked


def test_a_conditional_branch_pushed_beyond_32_kb_is_refused_with_the_reason(app):
    cf = ClassFile.parse((app / "App.class").read_bytes())
    code = cf.method("spin").code()
    body = next(k for k, x in enumerate(code.items) if getattr(x, "name", None) == "iinc")
    code.insert(body, [insn("nop")] * 33_000)  # the loop's exit test must jump over them
    with pytest.raises(OverflowError, match="conditional branch is limited to 32 KB"):
        code.to_bytes()


def test_a_class_built_from_scratch_with_far_jumps_gets_goto_w_and_frames_and_runs(tmp_path):
    if shutil.which("java") is None:
        pytest.skip("java is not installed")
    from pysim.jvm import Code, Label, compute_frames
    cf = ClassFile.new("Far")
    body, check, done = Label(), Label(), Label()
    items = [insn("iconst_0"), insn("istore_1"), insn("goto", check),
             body, insn("iinc", 1, 1), *[insn("nop")] * 33_000,
             check, insn("iload_1"), insn("iconst_3"), insn("if_icmpge", done), insn("goto", body),
             done, insn("iload_1"), insn("ireturn")]
    count = Code(2, 2, items, [], cf.pool, context=("Far", "count", "()I", 0x0009))
    compute_frames(count, count.context)
    assert [f.label for f in count.frames] == [body, check, done]
    cf.add_method("count", "()I", 0x0009, count)
    out = cf.pool.add_member_ref("Fieldref", "java/lang/System", "out", "Ljava/io/PrintStream;")
    println = cf.pool.add_member_ref("Methodref", "java/io/PrintStream", "println", "(I)V")
    me = cf.pool.add_member_ref("Methodref", "Far", "count", "()I")
    main = Code(2, 1, [insn("getstatic", out), insn("invokestatic", me), insn("invokevirtual", println),
                       insn("return")], [], cf.pool, context=("Far", "main", "([Ljava/lang/String;)V", 0x0009))
    cf.add_method("main", "([Ljava/lang/String;)V", 0x0009, main)
    data = cf.to_bytes()
    body_bytes = ClassFile.parse(data).method("count").attribute("Code").data
    ops = [op for _, op, _, _ in decode(body_bytes[8:8 + int.from_bytes(body_bytes[4:8], "big")])]
    assert ops.count(200) == 2  # both gotos widened to goto_w
    (tmp_path / "Far.class").write_bytes(data)
    run = subprocess.run(["java", "-cp", str(tmp_path), "Far"], capture_output=True, text=True, timeout=60,
                         check=True)
    assert run.stdout.strip() == "3"


def test_every_jdk_logging_class_takes_entry_hooks_and_verifies_again():
    from pysim.jvm import Hierarchy, verify
    try:
        h = Hierarchy.jdk()
        classes = list(corpus.jdk_classes(["java.logging"]))
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    changed = 0
    for _, data in classes:
        cf = ClassFile.parse(data)
        changed += call_on_entry(cf, "Hook", "enter")
        again = ClassFile.parse(cf.to_bytes())
        for m in again.methods:
            if m.code() is not None:
                verify(m.code(), (again.name, m.name, m.descriptor, m.access), h)
    assert changed > 500
