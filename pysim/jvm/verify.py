"""A type-inference verifier (JVMS 4.10.2's dataflow), and stack-map frames computed from it.

:func:`verify` runs Kildall's worklist algorithm over a method's basic
blocks: a frame (locals and operand stack, each value a verification type)
is kept at every block's first instruction, each block is executed
abstractly, and its successors' frames are merged until nothing changes.
Every instruction's operands are checked on the way; the first violation
raises :class:`VerifyError` with the offset and the reason. Reference types
are compared and merged through a :class:`pysim.jvm.hierarchy.Hierarchy`.

:class:`VerifyStats` counts the work (blocks visited, instructions run,
frames kept, their peak size in words), for models of verifiers on small
machines. :func:`compute_frames` turns the inferred frames into the
``StackMapTable`` a class of version 50 or later needs after an edit.

Types are tuples: ``("int",)``, ``("float",)``, ``("long",)``, ``("double",)``,
``("null",)``, ``("top",)``, ``("uninit_this",)``, ``("object", name)``,
``("uninit", offset)``. A long or double takes two slots (the second is top).
Subroutines (``jsr``/``ret``, gone since class version 50) are refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pysim.jvm import opcodes as O
from pysim.jvm.code import Frame, Insn, Label, _size, branch_targets, descriptor_args, vtype
from pysim.jvm.hierarchy import OBJECT, Hierarchy

TOP, INT, FLOAT, LONG, DOUBLE, NULL = ("top",), ("int",), ("float",), ("long",), ("double",), ("null",)
UNINIT_THIS = ("uninit_this",)
STRING, CLASS, THROWABLE = ("object", "java/lang/String"), ("object", "java/lang/Class"), \
    ("object", "java/lang/Throwable")
_WIDE = (LONG, DOUBLE)


class VerifyError(Exception):
    """The method breaks a rule of the JVM's type system; ``offset`` is where."""

    def __init__(self, offset, message):
        super().__init__(f"at offset {offset}: {message}")
        self.offset = offset


@dataclass
class VerifyStats:
    """The work of one verification."""

    blocks: int = 0               # basic blocks (each keeps one frame)
    block_visits: int = 0         # times a block was executed (Kildall's iterations)
    instructions: int = 0         # instructions executed abstractly
    merges: int = 0               # frames merged into a successor
    changes: int = 0              # merges that changed the successor's frame
    peak_frame_words: int = 0     # the largest frame kept (locals + stack slots)
    frame_words: int = 0          # all frames kept, in slots


@dataclass
class Result:
    """The frames at each block's start (by offset) and the work done."""

    frames: dict
    stats: VerifyStats
    reachable: set = field(default_factory=set)


def _is_ref(t) -> bool:
    return t[0] in ("object", "null", "uninit", "uninit_this")


def _array_of(t) -> str:
    if t[0] == "object":
        return "[" + (t[1] if t[1].startswith("[") else f"L{t[1]};")
    return "[" + {"int": "I", "float": "F", "long": "J", "double": "D"}[t[0]]


def _words(ts) -> list:
    out = []
    for t in ts:
        out.append(t)
        if t in _WIDE:
            out.append(TOP)
    return out


class _Checker:
    def __init__(self, hierarchy: Hierarchy):
        self.h = hierarchy

    def assignable(self, a, b) -> bool:
        """Is a value of type ``a`` acceptable where ``b`` is expected?"""
        if a == b or b == TOP:
            return True
        if b[0] == "object":
            if a == NULL:
                return True
            if a[0] == "object":
                return self.h.is_subclass(a[1], b[1])
        return False

    def merge(self, a, b, *, on_stack: bool, offset: int):
        if a == b:
            return a
        if a[0] in ("object", "null") and b[0] in ("object", "null"):
            if a == NULL:
                return b
            if b == NULL:
                return a
            return ("object", self.h.common_superclass(a[1], b[1]))
        if on_stack:
            raise VerifyError(offset, f"the stack holds {a} on one path and {b} on another")
        return TOP


def _pool_type(pool, index, offset):
    kind = pool.get(index)[0]
    if kind == "Integer":
        return INT
    if kind == "Float":
        return FLOAT
    if kind == "Long":
        return LONG
    if kind == "Double":
        return DOUBLE
    if kind == "String":
        return STRING
    if kind == "Class":
        return CLASS
    if kind == "MethodType":
        return ("object", "java/lang/invoke/MethodType")
    if kind == "MethodHandle":
        return ("object", "java/lang/invoke/MethodHandle")
    if kind == "Dynamic":
        return vtype(pool.name_and_type(pool.get(index)[2])[1])
    raise VerifyError(offset, f"ldc of a {kind} constant")


_BINARY = {}
for _t, _names in ((INT, "iadd isub imul idiv irem iand ior ixor ishl ishr iushr"),
                   (LONG, "ladd lsub lmul ldiv lrem land lor lxor"), (FLOAT, "fadd fsub fmul fdiv frem"),
                   (DOUBLE, "dadd dsub dmul ddiv drem")):
    for _n in _names.split():
        _BINARY[O.OPCODE[_n]] = (_t, _t, _t)
for _n in ("lshl", "lshr", "lushr"):
    _BINARY[O.OPCODE[_n]] = (LONG, INT, LONG)
for _n, _ts in (("lcmp", (LONG, LONG, INT)), ("fcmpl", (FLOAT, FLOAT, INT)), ("fcmpg", (FLOAT, FLOAT, INT)),
                ("dcmpl", (DOUBLE, DOUBLE, INT)), ("dcmpg", (DOUBLE, DOUBLE, INT))):
    _BINARY[O.OPCODE[_n]] = _ts
_UNARY = {O.OPCODE["ineg"]: (INT, INT), O.OPCODE["lneg"]: (LONG, LONG), O.OPCODE["fneg"]: (FLOAT, FLOAT),
          O.OPCODE["dneg"]: (DOUBLE, DOUBLE)}
_CODES = {"i": INT, "l": LONG, "f": FLOAT, "d": DOUBLE}
for _a in "ilfd":
    for _b in "ilfd":
        if _a != _b:
            _UNARY[O.OPCODE[f"{_a}2{_b}"]] = (_CODES[_a], _CODES[_b])
for _n in ("i2b", "i2c", "i2s"):
    _UNARY[O.OPCODE[_n]] = (INT, INT)
_CONST = {"aconst_null": NULL, "lconst_0": LONG, "lconst_1": LONG, "fconst_0": FLOAT, "fconst_1": FLOAT,
          "fconst_2": FLOAT, "dconst_0": DOUBLE, "dconst_1": DOUBLE, "bipush": INT, "sipush": INT}
_CONST.update({f"iconst_{k}": INT for k in ("m1", "0", "1", "2", "3", "4", "5")})
_CONST = {O.OPCODE[k]: v for k, v in _CONST.items()}
_LOAD, _STORE = {}, {}
for _p, _t in (("i", INT), ("l", LONG), ("f", FLOAT), ("d", DOUBLE), ("a", None)):
    _LOAD[O.OPCODE[f"{_p}load"]] = (_t, None)
    _STORE[O.OPCODE[f"{_p}store"]] = (_t, None)
    for _k in range(4):
        _LOAD[O.OPCODE[f"{_p}load_{_k}"]] = (_t, _k)
        _STORE[O.OPCODE[f"{_p}store_{_k}"]] = (_t, _k)
_ALOAD = {O.OPCODE["iaload"]: ("[I", INT), O.OPCODE["laload"]: ("[J", LONG), O.OPCODE["faload"]: ("[F", FLOAT),
          O.OPCODE["daload"]: ("[D", DOUBLE), O.OPCODE["caload"]: ("[C", INT), O.OPCODE["saload"]: ("[S", INT),
          O.OPCODE["baload"]: ("[B", INT), O.OPCODE["aaload"]: (None, None)}
_ASTORE = {O.OPCODE["iastore"]: ("[I", INT), O.OPCODE["lastore"]: ("[J", LONG), O.OPCODE["fastore"]: ("[F", FLOAT),
           O.OPCODE["dastore"]: ("[D", DOUBLE), O.OPCODE["castore"]: ("[C", INT), O.OPCODE["sastore"]: ("[S", INT),
           O.OPCODE["bastore"]: ("[B", INT), O.OPCODE["aastore"]: (None, None)}
_RETURN = {O.OPCODE["ireturn"]: INT, O.OPCODE["lreturn"]: LONG, O.OPCODE["freturn"]: FLOAT,
           O.OPCODE["dreturn"]: DOUBLE, O.OPCODE["areturn"]: ("object", OBJECT), O.OPCODE["return"]: None}
_IF1 = {O.OPCODE[n] for n in ("ifeq", "ifne", "iflt", "ifge", "ifgt", "ifle")}
_IF2 = {O.OPCODE[n] for n in ("if_icmpeq", "if_icmpne", "if_icmplt", "if_icmpge", "if_icmpgt", "if_icmple")}
_IFA = {O.OPCODE[n] for n in ("if_acmpeq", "if_acmpne")}
_IFNULL = {O.OPCODE["ifnull"], O.OPCODE["ifnonnull"]}
_INVOKES = {O.OPCODE[n] for n in ("invokevirtual", "invokespecial", "invokestatic", "invokeinterface")}
_FIELDS = {O.OPCODE[n]: n for n in ("getstatic", "putstatic", "getfield", "putfield")}


class _Run:
    """The abstract interpreter for one method."""

    def __init__(self, code, context, hierarchy):
        self.code, self.pool = code, code.pool
        self.cls, self.method, self.desc, self.access = context
        self.check = _Checker(hierarchy)
        ret = self.desc[self.desc.index(")") + 1:]
        self.ret = None if ret == "V" else vtype(ret)
        self.max_locals, self.max_stack = code.max_locals, code.max_stack

    # a frame is (locals list, stack list), both in words
    def entry_frame(self):
        locals_ = []
        if not self.access & 0x0008:
            locals_.append(UNINIT_THIS if self.method == "<init>" and self.cls != OBJECT else ("object", self.cls))
        locals_ += _words(vtype(d) for d in descriptor_args(self.desc))
        if len(locals_) > self.max_locals:
            raise VerifyError(0, f"the arguments need {len(locals_)} locals; max_locals is {self.max_locals}")
        return locals_ + [TOP] * (self.max_locals - len(locals_)), []

    def pop(self, stack, expected, offset):
        if not stack:
            raise VerifyError(offset, "the stack is empty")
        if expected in _WIDE:
            if len(stack) < 2 or stack[-1] != TOP or stack[-2] != expected:
                raise VerifyError(offset, f"expected {expected[0]} on the stack, found {stack[-2:]}")
            del stack[-2:]
            return expected
        t = stack.pop()
        if expected is None:  # any reference
            if not _is_ref(t):
                raise VerifyError(offset, f"expected a reference on the stack, found {t}")
        elif not self.check.assignable(t, expected):
            raise VerifyError(offset, f"expected {expected} on the stack, found {t}")
        return t

    def push(self, stack, t, offset):
        stack.extend(_words([t]))
        if len(stack) > self.max_stack:
            raise VerifyError(offset, f"the stack grows past max_stack {self.max_stack}")

    def local(self, locals_, index, offset, width=1):
        if index + width > self.max_locals:
            raise VerifyError(offset, f"local {index} is past max_locals {self.max_locals}")

    def execute(self, ins: Insn, offset: int, locals_, stack, *, next_offset):
        """Run one instruction on (locals, stack) in place."""
        op, a = ins.op, ins.args
        pop, push = self.pop, self.push
        if op in _CONST:
            push(stack, _CONST[op], offset)
        elif op in _LOAD:
            t, k = _LOAD[op]
            k = a[0] if k is None else k
            self.local(locals_, k, offset, 2 if t in _WIDE else 1)
            have = locals_[k]
            if t is None:
                if not _is_ref(have):
                    raise VerifyError(offset, f"aload of local {k}, which holds {have}")
                push(stack, have, offset)
            else:
                if have != t or (t in _WIDE and locals_[k + 1] != TOP):
                    raise VerifyError(offset, f"{ins.name} of local {k}, which holds {have}")
                push(stack, t, offset)
        elif op in _STORE:
            t, k = _STORE[op]
            k = a[0] if k is None else k
            width = 2 if t in _WIDE else 1
            self.local(locals_, k, offset, width)
            v = pop(stack, t, offset)
            if k > 0 and locals_[k - 1] in _WIDE:  # overwriting the second half of a long or double
                locals_[k - 1] = TOP
            if width == 1 and locals_[k] in _WIDE:
                locals_[k + 1] = TOP
            locals_[k] = v
            if width == 2:
                locals_[k + 1] = TOP
        elif op in _BINARY:
            a1, a2, r = _BINARY[op]
            pop(stack, a2, offset)
            pop(stack, a1, offset)
            push(stack, r, offset)
        elif op in _UNARY:
            src, dst = _UNARY[op]
            pop(stack, src, offset)
            push(stack, dst, offset)
        elif op in (O.OPCODE["ldc"], O.OPCODE["ldc_w"]):
            t = _pool_type(self.pool, a[0], offset)
            if t in _WIDE:
                raise VerifyError(offset, "ldc of a long or double (that is ldc2_w)")
            push(stack, t, offset)
        elif op == O.OPCODE["ldc2_w"]:
            t = _pool_type(self.pool, a[0], offset)
            if t not in _WIDE:
                raise VerifyError(offset, f"ldc2_w of a {t[0]}")
            push(stack, t, offset)
        elif op in _ALOAD:
            arr_desc, t = _ALOAD[op]
            pop(stack, INT, offset)
            arr = pop(stack, None, offset)
            if arr == NULL:
                push(stack, NULL if t is None else t, offset)
            else:
                self._check_array(arr, arr_desc, offset, ins)
                push(stack, vtype(arr[1][1:]) if t is None else t, offset)
        elif op in _ASTORE:
            arr_desc, t = _ASTORE[op]
            pop(stack, t, offset) if t is not None else pop(stack, None, offset)
            pop(stack, INT, offset)
            arr = pop(stack, None, offset)
            if arr != NULL:
                self._check_array(arr, arr_desc, offset, ins)
        elif op == O.OPCODE["iinc"]:
            self.local(locals_, a[0], offset)
            if locals_[a[0]] != INT:
                raise VerifyError(offset, f"iinc of local {a[0]}, which holds {locals_[a[0]]}")
        elif op in _IF1 or op in (O.OPCODE["tableswitch"], O.OPCODE["lookupswitch"]):
            pop(stack, INT, offset)
        elif op in _IF2:
            pop(stack, INT, offset)
            pop(stack, INT, offset)
        elif op in _IFA:
            pop(stack, None, offset)
            pop(stack, None, offset)
        elif op in _IFNULL:
            pop(stack, None, offset)
        elif op in (O.OPCODE["goto"], O.OPCODE["goto_w"], O.OPCODE["nop"]):
            pass
        elif op in _RETURN:
            want = _RETURN[op]
            if (want is None) != (self.ret is None) or (want is not None and want[0] != self.ret[0]):
                raise VerifyError(offset, f"{ins.name} in a method returning {self.ret}")
            if want is not None:
                pop(stack, self.ret, offset)
            if self.method == "<init>" and UNINIT_THIS in locals_:
                raise VerifyError(offset, "the constructor returns before calling super() or this()")
        elif op in _FIELDS:
            self._field(_FIELDS[op], a[0], offset, stack)
        elif op in _INVOKES or op == O.OPCODE["invokedynamic"]:
            self._invoke(ins, offset, locals_, stack, next_offset)
        elif op == O.OPCODE["new"]:
            push(stack, ("uninit", offset), offset)
        elif op == O.OPCODE["newarray"]:
            pop(stack, INT, offset)
            push(stack, ("object", "[" + "ZCFDBSIJ"[a[0] - 4]), offset)
        elif op == O.OPCODE["anewarray"]:
            pop(stack, INT, offset)
            push(stack, ("object", _array_of(("object", self.pool.class_name(a[0])))), offset)
        elif op == O.OPCODE["multianewarray"]:
            for _ in range(a[1]):
                pop(stack, INT, offset)
            push(stack, ("object", self.pool.class_name(a[0])), offset)
        elif op == O.OPCODE["arraylength"]:
            arr = pop(stack, None, offset)
            if arr != NULL and not (arr[0] == "object" and arr[1].startswith("[")):
                raise VerifyError(offset, f"arraylength of {arr}")
            push(stack, INT, offset)
        elif op == O.OPCODE["athrow"]:
            pop(stack, THROWABLE, offset)
        elif op == O.OPCODE["checkcast"]:
            pop(stack, None, offset)
            push(stack, ("object", self.pool.class_name(a[0])), offset)
        elif op == O.OPCODE["instanceof"]:
            pop(stack, None, offset)
            push(stack, INT, offset)
        elif op in (O.OPCODE["monitorenter"], O.OPCODE["monitorexit"]):
            pop(stack, None, offset)
        elif op in (O.OPCODE["jsr"], O.OPCODE["jsr_w"], O.OPCODE["ret"]):
            raise VerifyError(offset, "subroutines (jsr/ret) are not supported; javac stopped emitting them "
                                      "with class version 50")
        else:
            self._stack_op(ins, offset, stack)

    def _check_array(self, arr, desc, offset, ins):
        if arr[0] != "object" or not arr[1].startswith("["):
            raise VerifyError(offset, f"{ins.name} on {arr}, not an array")
        if desc is None:
            if arr[1][1] not in "L[":
                raise VerifyError(offset, f"{ins.name} on {arr[1]}, an array of primitives")
        elif arr[1] != desc and not (desc == "[B" and arr[1] == "[Z"):
            raise VerifyError(offset, f"{ins.name} on {arr[1]}")

    def _stack_op(self, ins, offset, stack):
        name = ins.name
        n = len(stack)

        def cat1(k):  # the word k from the top is a whole category-1 value
            return n >= k and stack[-k] != TOP and stack[-k] not in _WIDE

        def need(k):
            if n < k:
                raise VerifyError(offset, f"{name} needs {k} words on the stack, it holds {n}")

        if name == "pop":
            need(1)
            if not cat1(1):
                raise VerifyError(offset, "pop of half a long or double")
            stack.pop()
        elif name == "pop2":
            need(2)
            del stack[-2:]
        elif name == "dup":
            need(1)
            if not cat1(1):
                raise VerifyError(offset, "dup of half a long or double")
            stack.append(stack[-1])
        elif name == "dup_x1":
            need(2)
            stack.insert(n - 2, stack[-1])
        elif name == "dup_x2":
            need(3)
            stack.insert(n - 3, stack[-1])
        elif name == "dup2":
            need(2)
            stack.extend(stack[-2:])
        elif name == "dup2_x1":
            need(3)
            stack[n - 3:n - 3] = stack[-2:]
        elif name == "dup2_x2":
            need(4)
            stack[n - 4:n - 4] = stack[-2:]
        elif name == "swap":
            need(2)
            if not (cat1(1) and cat1(2)):
                raise VerifyError(offset, "swap of a long or double")
            stack[-1], stack[-2] = stack[-2], stack[-1]
        else:
            raise VerifyError(offset, f"{name} is not supported by this verifier")
        if len(stack) > self.max_stack:
            raise VerifyError(offset, f"the stack grows past max_stack {self.max_stack}")

    def _field(self, kind, index, offset, stack):
        _, owner, _, desc = self.pool.member_ref(index)
        t = vtype(desc)
        if kind == "getstatic":
            self.push(stack, t, offset)
        elif kind == "putstatic":
            self.pop(stack, t, offset)
        elif kind == "getfield":
            self.pop(stack, ("object", owner), offset)
            self.push(stack, t, offset)
        else:
            self.pop(stack, t, offset)
            target = stack[-1] if stack else None
            if target == UNINIT_THIS and owner == self.cls:  # a constructor sets its own fields first
                stack.pop()
            else:
                self.pop(stack, ("object", owner), offset)

    def _invoke(self, ins, offset, locals_, stack, next_offset):
        op = ins.op
        if op == O.OPCODE["invokedynamic"]:
            name, desc = self.pool.name_and_type(self.pool.get(ins.args[0])[2])
            owner = None
        else:
            _, owner, name, desc = self.pool.member_ref(ins.args[0])
        for d in reversed(descriptor_args(desc)):
            self.pop(stack, vtype(d), offset)
        if op == O.OPCODE["invokespecial"] and name == "<init>":
            if not stack:
                raise VerifyError(offset, "invokespecial <init> with no object on the stack")
            target = stack.pop()
            if target == UNINIT_THIS:
                done = ("object", self.cls)
            elif target[0] == "uninit":
                done = ("object", owner)
            else:
                raise VerifyError(offset, f"<init> called on {target}, which is already initialised")
            for lst in (locals_, stack):
                for k, v in enumerate(lst):
                    if v == target:
                        lst[k] = done
        elif op not in (O.OPCODE["invokestatic"], O.OPCODE["invokedynamic"]):
            expected = ("object", OBJECT) if owner.startswith("[") else ("object", owner)
            self.pop(stack, expected, offset)
        ret = desc[desc.index(")") + 1:]
        if ret != "V":
            self.push(stack, vtype(ret), offset)


def verify(code, context: tuple, hierarchy: Hierarchy | None = None, *, every_instruction: bool = False) -> Result:
    """Verify one method body; ``context`` is (class, method name, descriptor, access).

    The result holds the frame at each block's start, or with ``every_instruction`` at every
    reachable instruction (one more pass once the frames have settled).

    Raises
    ------
    VerifyError
        At the first instruction that breaks a rule, with its offset and the reason.
    """
    hierarchy = hierarchy or Hierarchy()
    run = _Run(code, context, hierarchy)
    insns, pcs, index_of = _layout(code)
    if not insns:
        raise VerifyError(0, "the method has no code")
    n = len(insns)

    def target(lab):
        k = index_of.get(id(lab))
        if k is None or k >= n:
            raise VerifyError(-1, f"a branch to {lab!r}, which is not an instruction of this method")
        return k

    handlers = [(index_of[id(h.start)], index_of[id(h.end)], target(h.handler),
                 ("object", code.pool.class_name(h.catch_type)) if h.catch_type else THROWABLE)
                for h in code.handlers]
    leaders = {0} | {h[2] for h in handlers}
    for k, ins in enumerate(insns):
        ts = branch_targets(ins.op, ins.args)
        if ts:
            leaders.update(target(t) for t in ts)
            if k + 1 < n:
                leaders.add(k + 1)
        elif ins.op in O.ENDS_BLOCK and k + 1 < n:
            leaders.add(k + 1)
    covering = [[h for h in handlers if h[0] <= k < h[1]] for k in range(n)]
    stats = VerifyStats(blocks=len(leaders))
    frames = {0: run.entry_frame()}
    work = [0]
    queued = {0}
    check = run.check

    def merge_into(k, locals_, stack, at):
        stats.merges += 1
        old = frames.get(k)
        if old is None:
            frames[k] = (list(locals_), list(stack))
            stats.changes += 1
        else:
            if len(old[1]) != len(stack):
                raise VerifyError(pcs[k], f"the stack is {len(stack)} words deep on one path and "
                                          f"{len(old[1])} on another")
            new_l = [check.merge(x, y, on_stack=False, offset=pcs[k]) for x, y in zip(old[0], locals_, strict=True)]
            new_s = [check.merge(x, y, on_stack=True, offset=pcs[k]) for x, y in zip(old[1], stack, strict=True)]
            for i in range(len(new_l)):  # a half of a long whose first half merged away is no longer usable
                if new_l[i] in _WIDE and (i + 1 >= len(new_l) or new_l[i + 1] != TOP):
                    new_l[i] = TOP
            if new_l == old[0] and new_s == old[1]:
                return
            frames[k] = (new_l, new_s)
            stats.changes += 1
        if k not in queued:
            queued.add(k)
            work.append(k)

    reachable = set()
    while work:
        k = work.pop()
        queued.discard(k)
        stats.block_visits += 1
        locals_, stack = (list(x) for x in frames[k])
        while True:
            reachable.add(k)
            ins = insns[k]
            for h in covering[k]:
                merge_into(h[2], locals_, [h[3]], pcs[k])
            stats.instructions += 1
            run.execute(ins, pcs[k], locals_, stack, next_offset=pcs[k + 1] if k + 1 < n else None)
            if covering[k] and (ins.op in _STORE or ins.op == O.OPCODE["iinc"]):
                for h in covering[k]:
                    merge_into(h[2], locals_, [h[3]], pcs[k])
            for t in branch_targets(ins.op, ins.args):
                merge_into(target(t), locals_, stack, pcs[k])
            if ins.op in O.ENDS_BLOCK:
                break
            if k + 1 >= n:
                raise VerifyError(pcs[k], "control falls off the end of the code")
            if k + 1 in leaders:
                merge_into(k + 1, locals_, stack, pcs[k])
                break
            k += 1
    for f in frames.values():
        words = len(f[0]) + len(f[1])
        stats.frame_words += words
        stats.peak_frame_words = max(stats.peak_frame_words, words)
    by_offset = {pcs[k]: f for k, f in frames.items()}
    if every_instruction:
        for k0, (locals0, stack0) in frames.items():
            locals_, stack, k = list(locals0), list(stack0), k0
            while True:
                by_offset[pcs[k]] = (list(locals_), list(stack))
                run.execute(insns[k], pcs[k], locals_, stack, next_offset=None)
                if insns[k].op in O.ENDS_BLOCK or k + 1 >= n or k + 1 in leaders:
                    break
                k += 1
    return Result(by_offset, stats, {pcs[k] for k in reachable})


def _layout(code) -> tuple:
    """The instructions, their offsets, and each label's instruction index (after a fresh layout)."""
    code._lay_out()
    insns, pcs, index_of, pending, pc = [], [], {}, [], 0
    for item in code.items:
        if isinstance(item, Label):
            pending.append(item)
            continue
        for lab in pending:
            index_of[id(lab)] = len(insns)
        pending = []
        insns.append(item)
        pcs.append(pc)
        pc += _size(item, pc, id(item) in code._far, code.pool)
    for lab in pending:
        index_of[id(lab)] = len(insns)
    return insns, pcs, index_of


def stack_map_types(words: list) -> list:
    """Slots as a stack map lists them: a long or double once, trailing tops dropped."""
    out, i = [], 0
    while i < len(words):
        out.append(words[i])
        i += 2 if words[i] in _WIDE else 1
    while out and out[-1] == TOP:
        out.pop()
    return out


def compute_frames(code, context: tuple, hierarchy: Hierarchy | None = None) -> list:
    """The stack-map frames the code needs (at every branch target, handler and instruction after
    an unconditional jump), from :func:`verify`'s inference; stores them in ``code.frames``.

    Raises
    ------
    VerifyError
        If the code does not verify, or holds unreachable code (which no frame can describe).
    """
    result = verify(code, context, hierarchy, every_instruction=True)
    insns, pcs, _ = _layout(code)
    need = {h.handler.offset for h in code.handlers}
    for k, ins in enumerate(insns):
        need.update(t.offset for t in branch_targets(ins.op, ins.args))
        if ins.op in O.ENDS_BLOCK and k + 1 < len(insns):
            need.add(pcs[k + 1])
    uninit = {t[1] for off in need if off in result.frames for part in result.frames[off] for t in part
              if t[0] == "uninit"}
    _label_offsets(code, need | uninit)
    labels_at = {}
    for item in code.items:
        if isinstance(item, Label):
            labels_at.setdefault(item.offset, item)
    frames = []
    for off in sorted(need):
        if off not in result.frames:
            raise VerifyError(off, "unreachable code: no frame describes it (remove it)")
        locals_, stack = result.frames[off]
        frames.append(Frame(labels_at[off], _labelled(stack_map_types(locals_), labels_at),
                            _labelled(stack_map_types(stack), labels_at)))
    code.frames = frames
    return frames


def _label_offsets(code, offsets: set) -> None:
    """Put a label before each instruction at one of ``offsets`` that has none yet."""
    insns, pcs, _ = _layout(code)
    have = {item.offset for item in code.items if isinstance(item, Label)}
    at = {id(ins): pc for ins, pc in zip(insns, pcs, strict=True)}
    items = []
    for item in code.items:
        if isinstance(item, Insn) and at[id(item)] in offsets and at[id(item)] not in have:
            items.append(Label(at[id(item)]))
            have.add(at[id(item)])
        items.append(item)
    code.items = items


def _labelled(types, labels_at):
    return [("uninit", labels_at[t[1]]) if t[0] == "uninit" else t for t in types]
