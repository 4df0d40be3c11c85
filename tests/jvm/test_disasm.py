"""The disassembler against javap, instruction by instruction, on real bytecode.

By default a sample: every 25th class of the JDK's jmods and every class of
java.util compiled here from the JDK's sources. PYSIM_JVM_CORPUS=full checks
every class of every jmod and of several compiled packages (``make jvm-corpus``).
"""
import os
import tempfile
from pathlib import Path

import javap_peer
import pytest

from pysim.jvm import corpus, disasm
from pysim.jvm.classfile import ClassFile

FULL = os.environ.get("PYSIM_JVM_CORPUS") == "full"
SOURCE_PACKAGES = ("java.base/java/util",) + (
    ("java.base/java/util/concurrent", "java.base/java/util/stream", "java.base/java/util/regex", "java.base/java/time",
     "java.base/java/time/format", "java.base/java/text", "java.base/java/io", "java.base/java/math",
     "java.base/java/lang", "java.base/java/net", "java.base/java/nio/file", "java.base/java/util/function",
     "java.base/java/util/zip", "java.base/java/util/concurrent/locks", "java.base/java/util/concurrent/atomic",
     "java.base/java/nio", "java.base/java/nio/channels", "java.base/java/security", "java.base/java/lang/reflect",
     "java.base/java/lang/invoke", "java.base/java/time/temporal", "java.base/java/time/chrono",
     "java.logging/java/util/logging", "java.sql/java/sql") if FULL else ())

pytestmark = pytest.mark.skipif(not javap_peer.available(), reason="javap is not installed")


def _compare(classes) -> tuple:
    """Disassemble each (name, bytes) ourselves and with javap; return (classes, methods, instructions)."""
    n_methods = n_insns = 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, (_, data) in enumerate(classes):
            p = Path(tmp) / f"c{k}.class"
            p.write_bytes(data)
            paths.append(p)
        theirs = javap_peer.run(paths)
    for (name, data), listing in zip(classes, theirs):
        cf = ClassFile.parse(data)
        ours = [disasm.instructions(m) for m in cf.methods if m.attribute("Code") is not None]
        assert len(ours) == len(listing), f"{name}: {len(ours)} methods with code, javap lists {len(listing)}"
        for mine, peer in zip(ours, listing):
            for a, b in zip(mine, peer):
                assert a == b, f"{name}: ours {a} against javap's {b}"
            assert len(mine) == len(peer), f"{name}: {len(mine)} instructions, javap has {len(peer)}"
            n_methods += 1
            n_insns += len(mine)
    return len(classes), n_methods, n_insns


def test_every_sampled_jdk_class_disassembles_as_javap_does():
    try:
        classes = list(corpus.jdk_classes(every=1 if FULL else 25))
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    n, methods, insns = _compare(classes)
    print(f"jmods: {n} classes, {methods} methods, {insns} instructions identical to javap")
    assert n > (20_000 if FULL else 800)


def test_every_class_compiled_from_the_jdk_sources_disassembles_as_javap_does():
    try:
        folder = corpus.compiled_sources(SOURCE_PACKAGES)
    except corpus.CorpusUnavailable as e:
        pytest.skip(str(e))
    classes = [(str(p.relative_to(folder)), p.read_bytes()) for p in sorted(folder.rglob("*.class"))]
    n, methods, insns = _compare(classes)
    print(f"compiled sources: {n} classes, {methods} methods, {insns} instructions identical to javap")
    assert n > (2500 if FULL else 400)


def test_a_class_round_trips_byte_for_byte_and_a_re_laid_body_equals_javacs():
    classes = list(corpus.jdk_classes(["java.logging"]))
    for _, data in classes:
        cf = ClassFile.parse(data)
        for m in cf.methods:
            code = m.code()
            if code is None:
                continue
            code.decoded_frames()
            code._original = None  # force a fresh layout and a fresh StackMapTable
            assert code.to_bytes() == m.attribute("Code").data, f"{cf.name}.{m.name}"
        assert cf.to_bytes() == data
    assert len(classes) > 50
