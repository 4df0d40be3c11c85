"""Java sources mutated the way programmers change them, for studies of similar bytecode.

:func:`mutate` applies one edit to a compilation unit and returns the new
text, or None when the source offers no place for that edit:

* ``"constant"``: an integer literal changed to another value;
* ``"insert"``: a new local statement at the start of a method body;
* ``"rename"``: a local variable renamed everywhere in its method;
* ``"swap"``: two adjacent methods of a class exchanged.

The edits work on tokens (comments, strings and characters are never
touched) and are chosen with ``rng``. They are meant to compile; callers that
need certainty compile the result (the tests do, with javac).
"""
from __future__ import annotations

import re

from pysim.rng import make_rng

KINDS = ("constant", "insert", "rename", "swap")
_TOKEN = re.compile(r"""
    (?P<space>\s+) | (?P<comment>//[^\n]*|/\*.*?\*/) | (?P<text>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*') |
    (?P<number>\b\d[\w.]*) | (?P<word>[A-Za-z_$][\w$]*) | (?P<op>.)""", re.S | re.X)
_KEYWORDS = frozenset("""abstract assert boolean break byte case catch char class const continue default do double
else enum extends final finally float for goto if implements import instanceof int interface long native new package
private protected public return short static strictfp super switch synchronized this throw throws transient try void
volatile while var record yield true false null""".split())
_TYPES = frozenset("int long short byte char boolean float double var String Object".split())


def tokens(source: str) -> list:
    """``(kind, text, start)`` for every token that is not space or a comment."""
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup
        if kind not in ("space", "comment"):
            out.append((kind, m.group(), m.start()))
    return out


def _method_bodies(toks) -> list:
    """(open brace index, close brace index) of each method body: a ``{`` after ``) [throws ...]``."""
    bodies, depth_stack = [], []
    for i, (_, text, _) in enumerate(toks):
        if text == "{":
            j = i - 1
            while j >= 0 and (toks[j][0] == "word" and toks[j][1] not in _KEYWORDS or toks[j][1] in (",", ".")
                              or toks[j][1] == "throws"):
                j -= 1
            is_method = j >= 0 and toks[j][1] == ")" and not _is_control(toks, j)
            depth_stack.append((i, is_method))
        elif text == "}" and depth_stack:
            start, is_method = depth_stack.pop()
            if is_method and not any(m for _, m in depth_stack):
                bodies.append((start, i))
    return bodies


def _is_control(toks, close) -> bool:
    """True if the ``)`` at ``close`` ends the head of an if/for/while/switch/catch/synchronized."""
    depth = 0
    for j in range(close, -1, -1):
        if toks[j][1] == ")":
            depth += 1
        elif toks[j][1] == "(":
            depth -= 1
            if depth == 0:
                return j > 0 and toks[j - 1][1] in ("if", "for", "while", "switch", "catch", "synchronized", "try")
    return False


def _replace(source: str, edits) -> str:
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def _fresh(source: str, stem: str, gen) -> str:
    while True:
        name = f"{stem}{gen.integers(1000, 9999)}"
        if name not in source:
            return name


def _in_case_label(toks, i) -> bool:
    """Whether token ``i`` lies in a case label (``case 1, 2 ->`` or ``case 3:``): changing it could
    make two labels equal."""
    j = i - 1
    while j >= 0 and toks[j][1] not in (";", "{", "}", ":"):
        if toks[j][1] == "case":
            return True
        j -= 1
    return False


def _after_constructor_call(toks, a) -> int:
    """Where a statement may go in the body opening at token ``a``: after a leading ``super(...);``
    or ``this(...);``, which must stay the constructor's first statement."""
    if a + 2 < len(toks) and toks[a + 1][1] in ("super", "this") and toks[a + 2][1] == "(":
        depth, j = 0, a + 2
        while j < len(toks):
            depth += {"(": 1, ")": -1}.get(toks[j][1], 0)
            if depth == 0 and toks[j][1] == ";":
                return toks[j][2] + 1
            j += 1
    return toks[a][2] + 1


def mutate(source: str, kind: str, *, rng=0) -> str | None:
    """``source`` with one edit of ``kind`` (see the module's list), or None if it has no place for one."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    gen = make_rng(rng)
    toks = tokens(source)
    bodies = _method_bodies(toks)
    if kind == "constant":
        inside = {i for a, b in bodies for i in range(a, b)}
        sites = [t for i, t in enumerate(toks) if i in inside and t[0] == "number" and t[1].isdigit()
                 and toks[i - 1][1] != "-" and not _in_case_label(toks, i)]
        if not sites:
            return None
        _, text, start = sites[gen.integers(len(sites))]
        value = int(text)
        return _replace(source, [(start, start + len(text), str(value + int(gen.integers(1, 10))))])
    if kind == "insert":
        if not bodies:
            return None
        a, _ = bodies[gen.integers(len(bodies))]
        pos = _after_constructor_call(toks, a)
        name = _fresh(source, "extra", gen)
        return _replace(source, [(pos, pos, f" int {name} = {int(gen.integers(0, 100))};")])
    if kind == "rename":
        sites = []
        for a, b in bodies:
            for i in range(a + 1, b - 1):
                k, text, _ = toks[i]
                if (k == "word" and text not in _KEYWORDS and toks[i - 1][1] in _TYPES
                        and toks[i + 1][1] in ("=", ";", ":") and toks[i - 2][1] != "."):
                    sites.append((a, b, text))
        if not sites:
            return None
        a, b, old = sites[gen.integers(len(sites))]
        new = _fresh(source, old, gen)
        edits = [(s, s + len(old), new) for i, (k, t, s) in enumerate(toks[a:b], a)
                 if k == "word" and t == old and toks[i - 1][1] != "." and toks[i + 1][1] != "("]
        return _replace(source, edits)
    # swap: two adjacent methods in the same class; a method starts after the previous member ends
    spans = []
    for a, b in bodies:
        j = a - 1
        while j > 0 and toks[j - 1][1] not in (";", "{", "}"):
            j -= 1
        spans.append((toks[j][2], toks[b][2] + 1))
    pairs = [(x, y) for x, y in zip(spans, spans[1:], strict=False) if source[x[1]:y[0]].strip() == ""]
    if not pairs:
        return None
    (s1, e1), (s2, e2) = pairs[gen.integers(len(pairs))]
    return source[:s1] + source[s2:e2] + source[e1:s2] + source[s1:e1] + source[e2:]
