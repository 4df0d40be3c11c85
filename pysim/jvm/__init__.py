"""A JVM class-file toolkit: parse, disassemble, rewrite and verify real bytecode.

* :mod:`pysim.jvm.classfile`: class files parsed lazily or eagerly and written back byte for byte;
* :mod:`pysim.jvm.constants`: the constant pool, read as needed and appended to (hashed or linear lookup);
* :mod:`pysim.jvm.code`: method bodies as instructions and labels; insert, append and splice with
  branch, exception-table, line, local-variable and stack-map fix-ups;
* :mod:`pysim.jvm.disasm`: a disassembler that prints what ``javap -c`` prints (checked against it);
* :mod:`pysim.jvm.verify`: a type-inference verifier (Kildall's dataflow) with counts of its work,
  and stack-map frames computed from it;
* :mod:`pysim.jvm.hierarchy`: class hierarchies for comparing and merging reference types;
* :mod:`pysim.jvm.rewrite`: load-time transformations (calls on entry and before returns);
* :mod:`pysim.jvm.corpus`: real bytecode: the JDK's jmods and JDK sources compiled by javac here.
"""
from pysim.jvm.classfile import ClassFile, Member
from pysim.jvm.code import Code, Insn, Label, insn
from pysim.jvm.constants import ClassFormatError, ConstantPool
from pysim.jvm.hierarchy import Hierarchy
from pysim.jvm.verify import VerifyError, compute_frames, verify

__all__ = ["ClassFile", "ClassFormatError", "Code", "ConstantPool", "Hierarchy", "Insn", "Label", "Member",
           "VerifyError", "compute_frames", "insn", "verify"]
