"""A sandbox for a paper's claims: expressions over its artifacts' DataFrames.

Claims come from paper folders that instructors and students write, so a
claim may use only a named set of read-only operations:

* names: the artifacts it lists, and the helpers in :data:`FUNCTIONS`;
* attributes: those in :data:`ATTRIBUTES` (properties such as ``loc`` and
  ``index``) and :data:`METHODS` (read-only reductions such as ``max``), and
  only on DataFrames, Series, indexes, their indexers and NumPy values;
* keywords: those in :data:`KEYWORDS`;
* operators: arithmetic, comparisons, ``and``/``or``/``not``, subscripts,
  conditional expressions, tuples and lists.

Everything else is refused when the claim is loaded, with the reason;
checks that depend on values (the type an attribute is taken from, the
size of a power, repetition of a sequence) are made as the claim runs. No
builtins are reachable, no name or attribute may start with ``_``, and the
claim is compiled from a rewritten tree in which every attribute access and
every ``*`` and ``**`` goes through a checking function.
"""
from __future__ import annotations

import ast
import numbers

import numpy as np
import pandas as pd

from pysim.errors import LedgerError


def _monotone(s, sign):
    d = np.diff(np.asarray(s, dtype=float))
    return bool(np.all(d * sign >= 0))


def _r2(x, y):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    total = np.sum((y - y.mean()) ** 2)
    return float(1 - np.sum(resid ** 2) / total) if total > 0 else 1.0


def _ratio(a, b):
    return float(a) / float(b)


#: The only functions a claim may call by name: pure helpers, no builtins.
FUNCTIONS = {
    "abs": abs, "min": min, "max": max, "len": len, "all": all, "any": any, "round": round,
    "sorted": sorted, "sum": sum, "float": float, "int": int,
    "monotone_increasing": lambda s: _monotone(s, 1),
    "monotone_decreasing": lambda s: _monotone(s, -1),
    "linear_fit_r2": _r2,
    "ratio": _ratio,
}

#: Read-only properties a claim may take.
ATTRIBUTES = frozenset({
    "loc", "iloc", "at", "iat", "index", "columns", "values", "shape", "size", "empty", "name",
    "is_monotonic_increasing", "is_monotonic_decreasing", "T",
})

#: Read-only methods a claim may call.
METHODS = frozenset({
    "max", "min", "mean", "median", "sum", "prod", "std", "var", "abs", "idxmax", "idxmin", "argmax", "argmin",
    "diff", "pct_change", "cumsum", "cumprod", "round", "all", "any", "count", "nunique", "quantile",
    "shift", "between", "isna", "notna", "dropna", "head", "tail", "nlargest", "nsmallest", "item",
    "tolist", "to_numpy", "corr", "clip", "rank", "sort_values", "get", "xs", "get_level_values",
})

#: Keyword arguments a claim may pass.
KEYWORDS = frozenset({"axis", "skipna", "ddof", "periods", "decimals", "q", "inclusive", "lower", "upper",
                      "ascending", "n", "method", "default", "level", "drop_level", "key"})

#: Types whose attributes a claim may take (indexers are pandas' _LocIndexer and friends).
_RECEIVERS = (pd.DataFrame, pd.Series, pd.Index, np.ndarray, np.generic, numbers.Number)
_INDEXER_NAMES = ("_LocIndexer", "_iLocIndexer", "_AtIndexer", "_iAtIndexer")

_NODES = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Constant,
          ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List,
          ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd, ast.Add, ast.Sub, ast.Mult, ast.Div,
          ast.FloorDiv, ast.Mod, ast.Pow, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
          ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.IfExp, ast.keyword)
MAX_STRING = 200
MAX_POWER = 64


def _checked_attribute(obj, name):
    if not (isinstance(obj, _RECEIVERS) or type(obj).__name__ in _INDEXER_NAMES):
        raise LedgerError(f"attribute {name!r} taken from a {type(obj).__name__}; claims may take attributes "
                          f"only of DataFrames, Series, indexes and numbers")
    return getattr(obj, name)


def _checked_mult(a, b):
    for x in (a, b):
        if isinstance(x, (str, bytes, list, tuple)):
            raise LedgerError("repeating a string or a sequence with * is not allowed in a claim")
    return a * b


def _checked_pow(a, b):
    if isinstance(b, numbers.Number) and abs(b) > MAX_POWER:
        raise LedgerError(f"a power in a claim may not exceed {MAX_POWER}, got {b!r}")
    return a ** b


class _Rewrite(ast.NodeTransformer):
    """Attribute access, * and ** become calls of the checking functions."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(ast.Name("__attribute__", ast.Load()),
                                          [node.value, ast.Constant(node.attr)], []), node)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        helper = {ast.Mult: "__mult__", ast.Pow: "__pow__"}.get(type(node.op))
        if helper is None:
            return node
        return ast.copy_location(ast.Call(ast.Name(helper, ast.Load()), [node.left, node.right], []), node)


def parse(expr: str, names=()) -> ast.Expression:
    """Check a claim's expression; LedgerError says what is not allowed.

    ``names`` are the artifact names the claim may refer to (besides the helpers).
    """
    if not isinstance(expr, str):
        raise LedgerError(f"a check must be text, got {type(expr).__name__}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise LedgerError(f"not a valid expression ({e.msg})") from None
    allowed_names = set(FUNCTIONS) | set(names)
    nodes = list(ast.walk(tree))
    for node in nodes:  # the most basic refusal first: a construct claims never use
        if not isinstance(node, _NODES):
            raise LedgerError(f"{type(node).__name__} is not allowed in a claim")
    for node in nodes:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name.startswith("_"):
            kind = "name" if isinstance(node, ast.Name) else "attribute"
            raise LedgerError(f"{kind} {name!r} is not allowed (leading underscore)")
    for node in nodes:
        if isinstance(node, ast.Name) and names and node.id not in allowed_names:
            raise LedgerError(f"name {node.id!r} is neither one of the claim's artifacts "
                              f"({', '.join(names)}) nor a helper ({', '.join(sorted(FUNCTIONS))})")
        if isinstance(node, ast.Attribute) and node.attr not in ATTRIBUTES | METHODS:
            raise LedgerError(f"attribute {node.attr!r} is not one of the read-only operations a claim "
                              f"may use (see pysim.claims.ATTRIBUTES and METHODS)")
    for node in nodes:
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                if f.id not in FUNCTIONS:
                    raise LedgerError(f"{f.id}() is not a function a claim may call")
            elif isinstance(f, ast.Attribute):
                if f.attr not in METHODS:
                    raise LedgerError(f".{f.attr}() is not a method a claim may call")
            else:
                raise LedgerError("a claim may call only named helpers and read-only methods")
            for k in node.keywords:
                if k.arg is None or k.arg not in KEYWORDS:
                    raise LedgerError(f"keyword {k.arg!r} is not allowed in a claim")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, (str, bytes)) and len(node.value) > MAX_STRING:
                raise LedgerError(f"a string in a claim may not exceed {MAX_STRING} characters")
    return tree


def numbers_in(expr: str) -> list:
    """The numeric constants of a claim other than 0 and 1 (each is a band that needs its reasoning)."""
    tree = parse(expr)
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, numbers.Number) and not isinstance(n.value, bool) and n.value not in (0, 1)]


def evaluate(expr: str, frames: dict) -> bool:
    """Evaluate a claim over ``frames`` (artifact id -> DataFrame).

    Raises
    ------
    LedgerError
        If the expression is not allowed, fails, or does not give a truth value.
    """
    tree = _Rewrite().visit(parse(expr, tuple(frames)))
    ast.fix_missing_locations(tree)
    # the only builtin: the import machinery, which NumPy's C code looks up in the running frame when it
    # imports lazily (ndarray.all() does); a claim cannot name it (no leading underscores)
    env = {"__builtins__": {"__import__": __import__}, "__attribute__": _checked_attribute,
           "__mult__": _checked_mult, "__pow__": _checked_pow}
    env.update(FUNCTIONS)
    env.update(frames)
    try:
        result = eval(compile(tree, "<claim>", "eval"), env, {})  # noqa: S307 (restricted above)
    except LedgerError as e:
        raise LedgerError(f"claim {expr!r} refused: {e}") from None
    except Exception as e:  # a claim that cannot be evaluated is an error, never "held"
        raise LedgerError(f"claim {expr!r} failed: {type(e).__name__}: {e}") from None
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    raise LedgerError(f"claim {expr!r} gave {type(result).__name__}, not True/False")
