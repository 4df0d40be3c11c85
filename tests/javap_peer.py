"""The peer for the disassembler: ``javap -c -p`` run over class files, its output parsed.

Each class's listing becomes a list of methods with code, in class-file order,
each a list of ``(offset, mnemonic, operands)`` in the form
:func:`pysim.jvm.disasm.operands` gives, so the two compare field by field.
"""
from __future__ import annotations

import re
import shutil
import subprocess

_INSN = re.compile(r"^\s+(\d+): (\w+)\s*(.*)$")
_CASE = re.compile(r"^\s+(-?\d+|default): (-?\d+)$")


def available() -> bool:
    return shutil.which("javap") is not None


def run(paths, *, batch: int = 400, timeout_s: float = 600) -> list:
    """javap's listing of each class file (one entry per path, in order): a list of methods."""
    out = []
    for k in range(0, len(paths), batch):
        chunk = [str(p) for p in paths[k:k + batch]]
        r = subprocess.run(["javap", "-c", "-p", *chunk], capture_output=True, text=True, timeout=timeout_s,
                           check=True)
        classes = _split(r.stdout)
        if len(classes) != len(chunk):
            raise RuntimeError(f"javap listed {len(classes)} classes for {len(chunk)} files")
        out += [parse_class(c) for c in classes]
    return out


def _split(text: str) -> list:
    classes, current = [], []
    for line in text.split("\n"):  # not splitlines(): string constants may hold U+2028
        current.append(line)
        if line == "}":
            classes.append(current)
            current = []
    return classes


def parse_class(lines: list) -> list:
    methods, current, switch = [], None, None
    for line in lines:
        if line.strip() == "Code:":
            current = []
            methods.append(current)
            continue
        if current is None:
            continue
        if switch is not None:
            if line.strip() == "}":
                current.append((switch[0], switch[1], tuple(switch[2])))
                switch = None
                continue
            m = _CASE.match(line)
            switch[2].append(f"{m.group(1)}:{m.group(2)}")
            continue
        m = _INSN.match(line)
        if not m:
            if line.strip() and not line.startswith("      "):
                current = None  # the end of this method's code (a member or the exception table follows)
            continue
        off, name, rest = int(m.group(1)), m.group(2), m.group(3).split("//")[0].strip()
        if name in ("tableswitch", "lookupswitch"):
            bounds = m.group(3).split("//", 1)[1].strip()  # "0 to 3" or "2"
            switch = (off, name, [bounds.replace(" ", "")])
            continue
        ops = tuple(x for x in re.split(r"[,\s]+", rest) if x)
        current.append((off, name, ops))
    return methods
