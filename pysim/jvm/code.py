"""Method bodies: instructions decoded, edited through labels, and laid out again.

:func:`decode` reads a code array into ``(offset, opcode, args, wide)``
tuples with absolute branch targets. :class:`Code` turns a ``Code``
attribute into an editable list of :class:`Insn` and :class:`Label` items:
every branch, switch case, exception range, line number, local-variable
range and stack-map frame points at a label, so inserting, appending or
splicing instructions never needs offsets. :meth:`Code.to_bytes` lays the
code out again (switch padding, ``ldc`` to ``ldc_w`` and ``wide`` where an
index grows, ``goto`` to ``goto_w`` where a jump grows) and fixes every
table up. An unedited body is written back as the bytes it came from.

Stack-map frames (``StackMapTable``) are kept as decoded frames at their
labels and re-encoded (in javac's compressed forms) when the code changes; straight-line
insertions that leave the stack and locals as they found them keep them
valid. :func:`pysim.jvm.verify.compute_frames` recomputes them for any edit.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from pysim.jvm import opcodes as O
from pysim.jvm.constants import ClassFormatError, ConstantPool


class Label:
    """A position in a method's code; :attr:`offset` is known after decoding or layout."""

    __slots__ = ("offset",)

    def __init__(self, offset: int | None = None):
        self.offset = offset

    def __repr__(self):
        return f"L{self.offset}" if self.offset is not None else f"L@{id(self):x}"


@dataclass
class Insn:
    """One instruction. Branch targets in ``args`` are Labels (ints only straight out of :func:`decode`)."""

    op: int
    args: tuple = ()
    wide: bool = False

    @property
    def name(self) -> str:
        return O.NAME[self.op]

    def __repr__(self):
        return f"{self.name}{'(wide)' if self.wide else ''}{list(self.args) if self.args else ''}"


def insn(name: str, *args) -> Insn:
    """An instruction by mnemonic: ``insn("getstatic", 12)``, ``insn("goto", label)``."""
    if name not in O.OPCODE:
        raise ValueError(f"unknown instruction {name!r}")
    return Insn(O.OPCODE[name], tuple(args))


@dataclass
class Handler:
    """An exception-table entry: ``[start, end)`` is covered, control goes to ``handler``."""

    start: Label
    end: Label
    handler: Label
    catch_type: int  # a Class pool index; 0 catches everything


def decode(code: bytes) -> list:
    """The instructions of a code array as ``(offset, opcode, args, wide)``, branch targets absolute.

    Raises
    ------
    ClassFormatError
        On an unknown opcode or an instruction cut off by the end of the code.
    """
    out, pc, n = [], 0, len(code)
    u1, s2, u2, s4 = code.__getitem__, struct.Struct(">h").unpack_from, struct.Struct(">H").unpack_from, \
        struct.Struct(">i").unpack_from
    fmt_of = O.FORMAT
    try:
        while pc < n:
            op = u1(pc)
            fmt = fmt_of.get(op)
            if fmt is None:
                raise ClassFormatError(f"unknown opcode {op} at offset {pc}")
            start, wide = pc, False
            if fmt == "":
                args, pc = (), pc + 1
            elif fmt in ("c2",):
                args, pc = (u2(code, pc + 1)[0],), pc + 3
            elif fmt == "l":
                args, pc = (u1(pc + 1),), pc + 2
            elif fmt == "j2":
                args, pc = (start + s2(code, pc + 1)[0],), pc + 3
            elif fmt == "b":
                args, pc = (struct.unpack_from(">b", code, pc + 1)[0],), pc + 2
            elif fmt == "c1":
                args, pc = (u1(pc + 1),), pc + 2
            elif fmt == "s":
                args, pc = (s2(code, pc + 1)[0],), pc + 3
            elif fmt == "i":
                args, pc = (u1(pc + 1), struct.unpack_from(">b", code, pc + 2)[0]), pc + 3
            elif fmt == "iface":
                args, pc = (u2(code, pc + 1)[0], u1(pc + 3)), pc + 5
            elif fmt == "indy":
                args, pc = (u2(code, pc + 1)[0],), pc + 5
            elif fmt == "multi":
                args, pc = (u2(code, pc + 1)[0], u1(pc + 3)), pc + 4
            elif fmt == "atype":
                args, pc = (u1(pc + 1),), pc + 2
            elif fmt == "j4":
                args, pc = (start + s4(code, pc + 1)[0],), pc + 5
            elif fmt == "table":
                p = (pc + 4) & ~3
                default, low, high = struct.unpack_from(">iii", code, p)
                if high < low:
                    raise ClassFormatError(f"tableswitch at {start}: high {high} < low {low}")
                targets = struct.unpack_from(f">{high - low + 1}i", code, p + 12)
                args = (start + default, low, high, tuple(start + t for t in targets))
                pc = p + 12 + 4 * (high - low + 1)
            elif fmt == "lookup":
                p = (pc + 4) & ~3
                default, npairs = struct.unpack_from(">ii", code, p)
                flat = struct.unpack_from(f">{2 * npairs}i", code, p + 8)
                args = (start + default, tuple((flat[2 * k], start + flat[2 * k + 1]) for k in range(npairs)))
                pc = p + 8 + 8 * npairs
            else:  # wide
                op = u1(pc + 1)
                if op not in O.WIDENABLE:
                    raise ClassFormatError(f"wide before {O.NAME.get(op, op)} at offset {start}")
                wide = True
                if op == O.OPCODE["iinc"]:
                    args, pc = (u2(code, pc + 2)[0], s2(code, pc + 4)[0]), pc + 6
                else:
                    args, pc = (u2(code, pc + 2)[0],), pc + 4
            out.append((start, op, args, wide))
    except (struct.error, IndexError):
        raise ClassFormatError(f"an instruction at offset {start} runs past the end of the code") from None
    if pc != n:
        raise ClassFormatError(f"the last instruction runs past the end of the code ({pc} > {n})")
    return out


def branch_targets(op: int, args: tuple) -> tuple:
    """The targets an instruction may jump to (its args' labels or offsets)."""
    fmt = O.FORMAT[op]
    if fmt in ("j2", "j4"):
        return (args[0],)
    if fmt == "table":
        return (args[0], *args[3])
    if fmt == "lookup":
        return (args[0], *(t for _, t in args[1]))
    return ()


# --- stack-map frames ----------------------------------------------------------------------------

# verification types: ("top",) ("int",) ("float",) ("long",) ("double",) ("null",) ("uninit_this",)
# ("object", internal name) ("uninit", Label of the `new`)
_VT = {0: ("top",), 1: ("int",), 2: ("float",), 3: ("double",), 4: ("long",), 5: ("null",), 6: ("uninit_this",)}
_VT_TAG = {v[0]: k for k, v in _VT.items()}


def descriptor_args(descriptor: str) -> list:
    """The parameter types of a method descriptor, as field descriptors: ``(I[JLx;)V`` -> I, [J, Lx;."""
    if not descriptor.startswith("("):
        raise ValueError(f"not a method descriptor: {descriptor!r}")
    out, i = [], 1
    while descriptor[i] != ")":
        j = i
        while descriptor[j] == "[":
            j += 1
        j = descriptor.index(";", j) + 1 if descriptor[j] == "L" else j + 1
        out.append(descriptor[i:j])
        i = j
    return out


def vtype(field_descriptor: str) -> tuple:
    """The verification type of a value of a field descriptor (B, C, S, Z and I are all int)."""
    c = field_descriptor[0]
    if c in "BCSZI":
        return ("int",)
    if c == "F":
        return ("float",)
    if c == "J":
        return ("long",)
    if c == "D":
        return ("double",)
    if c == "L":
        return ("object", field_descriptor[1:-1])
    if c == "[":
        return ("object", field_descriptor)
    raise ValueError(f"not a field descriptor: {field_descriptor!r}")


def initial_locals(class_name: str, method_name: str, descriptor: str, access: int) -> list:
    """The frame's locals on entry, one entry per value (as a stack map lists them)."""
    out = []
    if not access & 0x0008:
        out.append(("uninit_this",) if method_name == "<init>" and class_name != "java/lang/Object"
                   else ("object", class_name))
    out += [vtype(d) for d in descriptor_args(descriptor)]
    return out


@dataclass
class Frame:
    """A stack-map frame: locals and stack at ``label``, one entry per value (long and double too)."""

    label: Label
    locals: list
    stack: list


# --- the Code attribute --------------------------------------------------------------------------

@dataclass
class Code:
    """A decoded Code attribute; ``items`` holds the instructions with their labels in place."""

    max_stack: int
    max_locals: int
    items: list
    handlers: list
    pool: ConstantPool = field(repr=False)
    lines: list = field(default_factory=list)        # (Label, line)
    local_vars: dict = field(default_factory=dict)   # table name -> [(start, end, name_idx, desc_idx, index)]
    frames: list | None = None                       # [Frame] once decoded
    other: list = field(default_factory=list)        # [(name_index, raw)] attributes kept as they came
    context: tuple | None = None                     # (class, method, descriptor, access)
    _raw_frames: bytes | None = field(default=None, repr=False)
    _frames_name: int = 0
    _original: bytes | None = field(default=None, repr=False)
    _layout: tuple | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, data: bytes, pool: ConstantPool, context: tuple | None = None) -> "Code":
        """Decode a Code attribute's bytes (``context`` gives the method, for its stack-map frames)."""
        max_stack, max_locals, length = struct.unpack_from(">HHI", data, 0)
        code = data[8:8 + length]
        raw = decode(code)
        labels = {}

        def at(offset):
            if not 0 <= offset <= length:
                raise ClassFormatError(f"a label at {offset} lies outside the code (0..{length})")
            lab = labels.get(offset)
            if lab is None:
                lab = labels[offset] = Label(offset)
            return lab

        insns = []
        for off, op, args, wide in raw:
            fmt = O.FORMAT[op]
            if fmt in ("j2", "j4"):
                args = (at(args[0]),)
            elif fmt == "table":
                args = (at(args[0]), args[1], args[2], tuple(at(t) for t in args[3]))
            elif fmt == "lookup":
                args = (at(args[0]), tuple((k, at(t)) for k, t in args[1]))
            insns.append((off, Insn(op, args, wide)))
        p = 8 + length
        (n,) = struct.unpack_from(">H", data, p)
        handlers = []
        for k in range(n):
            s, e, h, t = struct.unpack_from(">HHHH", data, p + 2 + 8 * k)
            handlers.append(Handler(at(s), at(e), at(h), t))
        p += 2 + 8 * n
        self = cls(max_stack, max_locals, [], handlers, pool, context=context)
        (nattr,) = struct.unpack_from(">H", data, p)
        p += 2
        for _ in range(nattr):
            name_index, alen = struct.unpack_from(">HI", data, p)
            body = data[p + 6:p + 6 + alen]
            p += 6 + alen
            name = pool.utf8(name_index)
            if name == "LineNumberTable":
                (m,) = struct.unpack_from(">H", body, 0)
                entries = struct.unpack_from(f">{2 * m}H", body, 2)
                self.lines.append((name_index, [(at(entries[2 * i]), entries[2 * i + 1]) for i in range(m)]))
            elif name in ("LocalVariableTable", "LocalVariableTypeTable"):
                (m,) = struct.unpack_from(">H", body, 0)
                rows = []
                for i in range(m):
                    s, ln, nm, desc, idx = struct.unpack_from(">HHHHH", body, 2 + 10 * i)
                    rows.append((at(s), at(s + ln), nm, desc, idx))
                self.local_vars[name_index] = rows
            elif name == "StackMapTable":
                self._raw_frames, self._frames_name = bytes(body), name_index
                for off in _frame_offsets(body):
                    at(off)
            else:
                self.other.append((name_index, bytes(body)))
        items = []
        for off, ins in insns:
            if off in labels:
                items.append(labels[off])
            items.append(ins)
        if length in labels:
            items.append(labels[length])
        self.items = items
        self._labels_by_offset = labels
        self._original = bytes(data)
        self._layout = self._offsets()
        return self

    # --- views ------------------------------------------------------------------------------------
    def instructions(self) -> list:
        """The instructions alone, in order."""
        return [i for i in self.items if isinstance(i, Insn)]

    def decoded_frames(self) -> list:
        """The stack-map frames as :class:`Frame` objects (decoded on first use; needs ``context``)."""
        if self.frames is None:
            if self._raw_frames is None:
                self.frames = []
                return self.frames
            else:
                if self.context is None:
                    raise ValueError("decoding stack-map frames needs the method's context "
                                     "(class, name, descriptor, access)")
                self.frames = _decode_frames(self._raw_frames, self.pool, self._labels_by_offset,
                                             initial_locals(*self.context))
        return self.frames

    # --- editing ----------------------------------------------------------------------------------
    def index_of(self, label: Label) -> int:
        """The position of ``label`` in :attr:`items`."""
        for k, item in enumerate(self.items):
            if item is label:
                return k
        raise ValueError(f"{label!r} is not in this method's code")

    def insert(self, position: int, new_items) -> None:
        """Insert instructions (and labels) before ``items[position]``."""
        self.decoded_frames()  # frames must be held by label before offsets move
        self.items[position:position] = list(new_items)

    def insert_at_entry(self, new_items) -> None:
        """Insert at the method's entry, ahead of every label (so no branch or handler covers it)."""
        self.insert(0, new_items)

    def insert_before_returns(self, make_items) -> int:
        """Insert ``make_items()`` before every return instruction; returns how many there were."""
        self.decoded_frames()
        returns = {O.OPCODE[n] for n in ("ireturn", "lreturn", "freturn", "dreturn", "areturn", "return")}
        out, n = [], 0
        for item in self.items:
            if isinstance(item, Insn) and item.op in returns:
                out.extend(make_items())
                n += 1
            out.append(item)
        self.items = out
        return n

    def splice(self, start: Label, end: Label, new_items) -> list:
        """Replace the items between labels ``start`` and ``end`` (exclusive) and return the old ones."""
        self.decoded_frames()
        i, j = self.index_of(start) + 1, self.index_of(end)
        if j < i:
            raise ValueError("the end label comes before the start label")
        old = self.items[i:j]
        self.items[i:j] = list(new_items)
        return old

    # --- layout -------------------------------------------------------------------------------------
    def _offsets(self) -> tuple:
        return tuple(id(x) for x in self.items), tuple(
            getattr(x, "offset", None) for x in self.items if isinstance(x, Label))

    def _lay_out(self) -> int:
        """Give every label and instruction an offset; widen goto/jsr that no longer reach. Returns length."""
        far = set()
        while True:
            pc, pcs = 0, []
            for item in self.items:
                if isinstance(item, Label):
                    item.offset = pc
                    continue
                pcs.append(pc)
                pc += _size(item, pc, id(item) in far, self.pool)
            changed = False
            k = 0
            for item in self.items:
                if isinstance(item, Insn):
                    if O.FORMAT[item.op] == "j2" and id(item) not in far:
                        delta = item.args[0].offset - pcs[k]
                        if not -32768 <= delta <= 32767:
                            if item.op not in (O.OPCODE["goto"], O.OPCODE["jsr"]):
                                raise OverflowError(f"a {item.name} at {pcs[k]} cannot reach {item.args[0].offset}: "
                                                    f"a conditional branch is limited to 32 KB")
                            far.add(id(item))
                            changed = True
                    k += 1
            if not changed:
                self._far = far
                return pc

    def to_bytes(self) -> bytes:
        """The Code attribute's bytes (the original ones if nothing moved)."""
        length = self._lay_out()
        if self._original is not None and self._offsets() == self._layout and not self._far:
            return self._original
        if length > 65535:
            raise OverflowError(f"the method's code is {length} bytes; the JVM allows 65535")
        code = bytearray()
        for item in self.items:
            if isinstance(item, Insn):
                code += _encode(item, len(code), id(item) in self._far, self.pool)
        out = bytearray(struct.pack(">HHI", self.max_stack, self.max_locals, len(code)))
        out += code
        out += struct.pack(">H", len(self.handlers))
        for h in self.handlers:
            out += struct.pack(">HHHH", h.start.offset, h.end.offset, h.handler.offset, h.catch_type)
        attrs = []
        for name_index, rows in self.lines:
            body = struct.pack(">H", len(rows)) + b"".join(struct.pack(">HH", lab.offset, line) for lab, line in rows)
            attrs.append((name_index, body))
        for name_index, rows in self.local_vars.items():
            body = struct.pack(">H", len(rows)) + b"".join(
                struct.pack(">HHHHH", s.offset, e.offset - s.offset, nm, desc, idx) for s, e, nm, desc, idx in rows)
            attrs.append((name_index, body))
        frames = self.decoded_frames() if (self._raw_frames is not None or self.frames) else []
        if frames:
            name = self._frames_name or self.pool.add_utf8("StackMapTable")
            attrs.append((name, _encode_frames(frames, self.pool, initial_locals(*self.context))))
        # attributes we cannot fix up (type annotations on code) point at old offsets: drop them
        out += struct.pack(">H", len(attrs))
        for name_index, body in attrs:
            out += struct.pack(">HI", name_index, len(body)) + body
        return bytes(out)


def _size(item: Insn, pc: int, far: bool, pool: ConstantPool) -> int:
    fmt = O.FORMAT[item.op]
    if fmt == "table":
        return (3 - pc % 4) + 1 + 12 + 4 * len(item.args[3])
    if fmt == "lookup":
        return (3 - pc % 4) + 1 + 8 + 8 * len(item.args[1])
    if fmt == "j2":
        return 5 if far else 3
    if fmt == "l":
        return 4 if item.wide or item.args[0] > 255 else 2
    if fmt == "i":
        return 6 if item.wide or item.args[0] > 255 or not -128 <= item.args[1] <= 127 else 3
    if fmt == "c1":
        return 3 if item.args[0] > 255 else 2
    return {"": 1, "b": 2, "s": 3, "c2": 3, "j4": 5, "iface": 5, "indy": 5, "multi": 4, "atype": 2}[fmt]


def _encode(item: Insn, pc: int, far: bool, pool: ConstantPool) -> bytes:
    op, a, fmt = item.op, item.args, O.FORMAT[item.op]
    if fmt == "":
        return bytes((op,))
    if fmt == "b":
        return struct.pack(">Bb", op, a[0])
    if fmt == "s":
        return struct.pack(">Bh", op, a[0])
    if fmt == "c1":
        return struct.pack(">BH", O.OPCODE["ldc_w"], a[0]) if a[0] > 255 else bytes((op, a[0]))
    if fmt == "c2":
        return struct.pack(">BH", op, a[0])
    if fmt == "l":
        if item.wide or a[0] > 255:
            return struct.pack(">BBH", O.OPCODE["wide"], op, a[0])
        return bytes((op, a[0]))
    if fmt == "i":
        if item.wide or a[0] > 255 or not -128 <= a[1] <= 127:
            return struct.pack(">BBHh", O.OPCODE["wide"], op, a[0], a[1])
        return struct.pack(">BBb", op, a[0], a[1])
    if fmt == "j2":
        if far:
            wide_op = O.OPCODE["goto_w"] if op == O.OPCODE["goto"] else O.OPCODE["jsr_w"]
            return struct.pack(">Bi", wide_op, a[0].offset - pc)
        return struct.pack(">Bh", op, a[0].offset - pc)
    if fmt == "j4":
        return struct.pack(">Bi", op, a[0].offset - pc)
    if fmt == "iface":
        return struct.pack(">BHBB", op, a[0], a[1], 0)
    if fmt == "indy":
        return struct.pack(">BHH", op, a[0], 0)
    if fmt == "multi":
        return struct.pack(">BHB", op, a[0], a[1])
    if fmt == "atype":
        return bytes((op, a[0]))
    pad = b"\0" * (3 - pc % 4)
    if fmt == "table":
        default, low, high, targets = a
        return bytes((op,)) + pad + struct.pack(f">iii{len(targets)}i", default.offset - pc, low, high,
                                                  *(t.offset - pc for t in targets))
    default, pairs = a
    flat = [v for k, t in pairs for v in (k, t.offset - pc)]
    return bytes((op,)) + pad + struct.pack(f">ii{len(flat)}i", default.offset - pc, len(pairs), *flat)


# --- StackMapTable encoding ---------------------------------------------------------------------------

def _frame_offsets(body: bytes) -> list:
    """The offsets a StackMapTable refers to: its frames' and its uninitialised objects' ``new``s."""
    out, p, prev = [], 2, -1
    news = []

    def _skip_vt(body, p):
        if body[p] == 8:
            news.append(struct.unpack_from(">H", body, p + 1)[0])
        return p + (3 if body[p] in (7, 8) else 1)

    (n,) = struct.unpack_from(">H", body, 0)
    for _ in range(n):
        ft = body[p]
        p += 1
        if ft < 64:
            delta = ft
        elif ft < 128:
            delta, p = ft - 64, _skip_vt(body, p)
        elif ft == 247:
            delta = struct.unpack_from(">H", body, p)[0]
            p = _skip_vt(body, p + 2)
        elif 248 <= ft <= 251:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
        elif 252 <= ft <= 254:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
            for _ in range(ft - 251):
                p = _skip_vt(body, p)
        elif ft == 255:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
            for _ in range(2):
                (k,) = struct.unpack_from(">H", body, p)
                p += 2
                for _ in range(k):
                    p = _skip_vt(body, p)
        else:
            raise ClassFormatError(f"reserved stack-map frame type {ft}")
        prev = prev + delta + 1
        out.append(prev)
    return out + news


def _read_vt(body, p, pool, labels):
    tag = body[p]
    if tag == 7:
        return ("object", pool.class_name(struct.unpack_from(">H", body, p + 1)[0])), p + 3
    if tag == 8:
        off = struct.unpack_from(">H", body, p + 1)[0]
        return ("uninit", labels[off]), p + 3
    if tag not in _VT:
        raise ClassFormatError(f"unknown verification type tag {tag}")
    return _VT[tag], p + 1


def _decode_frames(body: bytes, pool, labels: dict, start_locals: list) -> list:
    out, p, prev, locals_ = [], 2, -1, list(start_locals)
    (n,) = struct.unpack_from(">H", body, 0)
    for _ in range(n):
        ft = body[p]
        p += 1
        stack = []
        if ft < 64:
            delta = ft
        elif ft < 128:
            delta = ft - 64
            vt, p = _read_vt(body, p, pool, labels)
            stack = [vt]
        elif ft == 247:
            delta = struct.unpack_from(">H", body, p)[0]
            vt, p = _read_vt(body, p + 2, pool, labels)
            stack = [vt]
        elif 248 <= ft <= 250:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
            locals_ = locals_[:len(locals_) - (251 - ft)]
        elif ft == 251:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
        elif 252 <= ft <= 254:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
            locals_ = list(locals_)
            for _ in range(ft - 251):
                vt, p = _read_vt(body, p, pool, labels)
                locals_.append(vt)
        else:
            delta, p = struct.unpack_from(">H", body, p)[0], p + 2
            lists = []
            for _ in range(2):
                (k,) = struct.unpack_from(">H", body, p)
                p += 2
                items = []
                for _ in range(k):
                    vt, p = _read_vt(body, p, pool, labels)
                    items.append(vt)
                lists.append(items)
            locals_, stack = lists
        prev = prev + delta + 1
        out.append(Frame(labels[prev], list(locals_), stack))
    return out


def _write_vt(vt, pool) -> bytes:
    if vt[0] == "object":
        return struct.pack(">BH", 7, pool.add_class(vt[1]))
    if vt[0] == "uninit":
        return struct.pack(">BH", 8, vt[1].offset)
    return bytes((_VT_TAG[vt[0]],))


def _encode_frames(frames: list, pool, start_locals: list) -> bytes:
    """A StackMapTable in the smallest form for each frame, chosen as javac chooses it."""
    out, prev, last = bytearray(struct.pack(">H", len(frames))), -1, list(start_locals)
    for f in sorted(frames, key=lambda f: f.label.offset):
        delta = f.label.offset - prev - 1
        if delta < 0:
            raise ClassFormatError(f"two stack-map frames at offset {f.label.offset}")
        locals_, stack = list(f.locals), list(f.stack)
        k = len(locals_) - len(last)
        if locals_ == last and not stack:
            out += bytes((delta,)) if delta < 64 else struct.pack(">BH", 251, delta)
        elif locals_ == last and len(stack) == 1:
            vt = _write_vt(stack[0], pool)
            out += (bytes((64 + delta,)) if delta < 64 else struct.pack(">BH", 247, delta)) + vt
        elif not stack and -3 <= k < 0 and locals_ == last[:len(locals_)]:
            out += struct.pack(">BH", 251 + k, delta)
        elif not stack and 0 < k <= 3 and locals_[:len(last)] == last:
            out += struct.pack(">BH", 251 + k, delta) + b"".join(_write_vt(v, pool) for v in locals_[len(last):])
        else:
            out += struct.pack(">BHH", 255, delta, len(locals_))
            out += b"".join(_write_vt(v, pool) for v in locals_)
            out += struct.pack(">H", len(stack)) + b"".join(_write_vt(v, pool) for v in stack)
        prev, last = f.label.offset, locals_
    return bytes(out)
