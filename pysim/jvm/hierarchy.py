"""Which class extends which: the facts a verifier needs to compare and merge reference types.

A :class:`Hierarchy` maps internal class names to their superclass and
whether they are interfaces. Build one from class files
(:meth:`Hierarchy.of`), or from the installed JDK's jmods
(:meth:`Hierarchy.jdk`, cached on disk), and add a program's own classes to it.

>>> h = Hierarchy({"A": ("java/lang/Object", False), "B": ("A", False), "C": ("A", False)})
>>> h.common_superclass("B", "C")
'A'
>>> h.is_subclass("B", "A"), h.is_subclass("A", "B")
(True, False)
"""
from __future__ import annotations

import hashlib
import json

OBJECT = "java/lang/Object"
# arrays are assignable to these besides Object (JVMS 4.10.1.2)
ARRAY_SUPERTYPES = frozenset({OBJECT, "java/lang/Cloneable", "java/io/Serializable"})


class Hierarchy:
    """Superclass and interface flag by class name; unknown classes are reported, not guessed."""

    def __init__(self, classes: dict | None = None):
        self.classes = dict(classes or {})  # name -> (superclass or None, is_interface)
        self.unresolved = 0                 # questions about classes this hierarchy does not hold

    @classmethod
    def of(cls, class_files) -> "Hierarchy":
        """The hierarchy of some parsed :class:`pysim.jvm.classfile.ClassFile` objects."""
        h = cls()
        h.add(class_files)
        return h

    def add(self, class_files) -> None:
        for cf in class_files:
            self.classes[cf.name] = (cf.super_name, bool(cf.access & 0x0200))

    @classmethod
    def jdk(cls) -> "Hierarchy":
        """The hierarchy of every class in the installed JDK's jmods (cached by JDK)."""
        from pysim.harness.runners import cache_dir
        from pysim.jvm import corpus
        from pysim.jvm.classfile import ClassFile

        home = corpus.java_home()
        stamp = sum(p.stat().st_size for p in corpus.jmods())
        key = hashlib.sha256(f"{home}:{stamp}".encode()).hexdigest()[:16]
        path = cache_dir() / f"jdk-hierarchy-{key}.json"
        if path.exists():
            return cls({k: tuple(v) for k, v in json.loads(path.read_text()).items()})
        h = cls.of(ClassFile.parse(data) for _, data in corpus.jdk_classes())
        path.write_text(json.dumps(h.classes))
        return h

    def knows(self, name: str) -> bool:
        return name in self.classes

    def is_interface(self, name: str) -> bool:
        entry = self.classes.get(name)
        if entry is None:
            self.unresolved += 1
            return False
        return entry[1]

    def supers(self, name: str) -> list:
        """``name`` and its superclasses up to Object (as far as the hierarchy knows them)."""
        out = [name]
        while name in self.classes and self.classes[name][0] is not None:
            name = self.classes[name][0]
            out.append(name)
        if out[-1] != OBJECT:
            self.unresolved += 1
            out.append(OBJECT)
        return out

    def is_subclass(self, sub: str, sup: str) -> bool:
        """True if ``sub`` is ``sup`` or extends it (interfaces count as Object, as the verifier has it)."""
        if sub == sup or sup == OBJECT or self.is_interface(sup):
            return True
        if sub.startswith("["):
            if sup in ARRAY_SUPERTYPES:
                return True
            if not sup.startswith("["):
                return False
            a, b = sub[1:], sup[1:]
            if a[0] in "L[" and b[0] in "L[":
                return self.is_subclass(_element(a), _element(b))
            return a == b
        if sup.startswith("["):
            return False
        return sup in self.supers(sub)

    def common_superclass(self, a: str, b: str) -> str:
        """The nearest class both extend (Object for interfaces, as ASM and the verifier have it)."""
        if a == b:
            return a
        if a.startswith("[") or b.startswith("["):
            if a.startswith("[") and b.startswith("["):
                ea, eb = a[1:], b[1:]
                if ea[0] in "L[" and eb[0] in "L[":
                    common = self.common_superclass(_element(ea), _element(eb))
                    return "[" + (common if common.startswith("[") else f"L{common};")
            return OBJECT
        if self.is_interface(a) or self.is_interface(b):
            return OBJECT
        chain = self.supers(a)
        for s in self.supers(b):
            if s in chain:
                return s
        return OBJECT


def _element(descriptor: str) -> str:
    """An array's element as an internal name (``Lx;`` -> ``x``; ``[I`` stays ``[I``)."""
    return descriptor[1:-1] if descriptor.startswith("L") else descriptor
