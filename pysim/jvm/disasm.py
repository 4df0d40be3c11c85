"""A disassembler that prints what ``javap -c`` prints: offsets, mnemonics, operands, switch tables.

>>> from pysim.jvm.classfile import ClassFile
>>> from pysim.jvm.code import Code, insn
>>> cf = ClassFile.new("demo/A")
>>> body = Code(1, 1, [insn("iconst_1"), insn("ireturn")], [], cf.pool)
>>> _ = cf.add_method("one", "()I", 0x0009, body)
>>> print(listing(cf.method("one")))
   0: iconst_1
   1: ireturn
"""
from __future__ import annotations

from pysim.jvm import opcodes as O
from pysim.jvm.code import decode


def operands(op: int, args: tuple, wide: bool = False) -> tuple:
    """An instruction's mnemonic and operand fields as javap writes them (comments left out)."""
    fmt, name = O.FORMAT[op], O.NAME[op]
    if wide:
        name += "_w"
    if fmt in ("c1", "c2"):
        return name, (f"#{args[0]}",)
    if fmt == "iface":
        return name, (f"#{args[0]}", str(args[1]))
    if fmt == "indy":
        return name, (f"#{args[0]}", "0")
    if fmt == "multi":
        return name, (f"#{args[0]}", str(args[1]))
    if fmt == "atype":
        return name, (O.ARRAY_TYPES.get(args[0], str(args[0])),)
    if fmt == "table":
        default, low, high, targets = args
        cases = tuple(f"{low + k}:{t}" for k, t in enumerate(targets))
        return name, (f"{low}to{high}", *cases, f"default:{default}")
    if fmt == "lookup":
        default, pairs = args
        return name, (str(len(pairs)), *(f"{k}:{t}" for k, t in pairs), f"default:{default}")
    return name, tuple(str(a) for a in args)


def instructions(method) -> list:
    """``(offset, mnemonic, operands)`` for every instruction of a method (empty without code)."""
    attr = method.attribute("Code")
    if attr is None:
        return []
    data = attr.data  # as written: an edited body is seen once set_code has stored it
    length = int.from_bytes(data[4:8], "big")
    return [(off, *operands(op, args, wide)) for off, op, args, wide in decode(data[8:8 + length])]


def listing(method) -> str:
    """The method's code as text, one instruction a line, with the pool entries described."""
    lines = []
    pool = method.pool
    for off, name, ops in instructions(method):
        text = f"{off:4d}: {name}"
        if ops and ops[0].startswith("#"):
            text += f" {', '.join(ops)}  // {pool.describe(int(ops[0][1:]))}"
        elif ops:
            text += " " + ", ".join(ops)
        lines.append(text)
    return "\n".join(lines)
