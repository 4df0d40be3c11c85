"""Load-time transformations of the kind bytecode transformers make, built on the toolkit.

:func:`call_on_entry` and :func:`call_before_returns` insert a static call
(optionally passing the method's name) into every method with code: the
constant-pool entries are appended (or found), the code is inserted through
labels, ``max_stack`` grows if the call needs it, and the stack-map frames
stay valid because the inserted code is straight-line and leaves the stack
and locals as it found them. Each returns how many places it changed.
"""
from __future__ import annotations

from pysim.jvm.code import insn


def _call(cf, owner: str, name: str, with_name: bool, method) -> list:
    if with_name:
        ref = cf.pool.add_member_ref("Methodref", owner, name, "(Ljava/lang/String;)V")
        label = f"{cf.name}.{method.name}{method.descriptor}"
        return [insn("ldc_w", cf.pool.add_string(label)), insn("invokestatic", ref)]
    return [insn("invokestatic", cf.pool.add_member_ref("Methodref", owner, name, "()V"))]


def _methods(cf, include):
    for m in cf.methods:
        code = m.code()
        if code is not None and (include is None or include(m)):
            yield m, code


def call_on_entry(cf, owner: str, name: str, *, with_name: bool = True, include=None) -> int:
    """Call ``owner.name(String)`` (or ``owner.name()``) first thing in every method with code
    (those ``include(method)`` accepts, if given). Returns the number of methods changed."""
    n = 0
    for m, code in _methods(cf, include):
        code.insert_at_entry(_call(cf, owner, name, with_name, m))
        code.max_stack = max(code.max_stack, 1 if with_name else 0)
        m.set_code(code)
        n += 1
    return n


def call_before_returns(cf, owner: str, name: str, *, with_name: bool = True, include=None) -> int:
    """Call ``owner.name(...)`` before every return instruction. Returns the number of returns.

    The call runs with the return value on the stack, so ``max_stack`` grows by what it pushes.
    """
    n = 0
    for m, code in _methods(cf, include):
        k = code.insert_before_returns(lambda m=m: _call(cf, owner, name, with_name, m))
        if k:
            code.max_stack += 1 if with_name else 0
            m.set_code(code)
            n += k
    return n
