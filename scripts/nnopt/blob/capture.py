"""An op's kernel call as data, taken from its lowering.

The lowerings (:mod:`nnopt.lowering`) are the one place where kernel parameters are
computed; they emit them as C (designated initialisers and a ``return fn(...)``
call). To execute a model without regenerated C, the blob needs the same values in
binary. :func:`capture` runs the op's lowering with a recording context (tensor
pointers become ``NNRT_BLOB_T(<index>)`` markers, extra constant arrays are kept) and
reads the emitted body back with a parser for exactly the forms lowerings emit:

- ``static const <type> <name> = { .field = value, ... };`` (nested structs, arrays,
  integer/float/hex-float literals, identifiers of constant arrays, ``&<name>``,
  ``NULL``);
- ``return <function>(<args>);`` whose arguments are ``&<name>``, tensor markers
  (optionally cast), ``NULL`` and literals.

Anything else raises :class:`~nnopt.errors.UnsupportedError`: a lowering whose body
the blob cannot represent is refused at ``--emit blob`` time, never mis-encoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np

from ..errors import UnsupportedError
from ..ir import Graph, Op
from ..lowering import EmitContext, lowering_for

MARK = "NNRT_BLOB_T"
_SCALAR_TYPES = {"int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32,
                 "float": np.float32}
SCRATCH = "NNRT_BLOB_SCRATCH"

_TOKEN = re.compile(r"""
    (?P<ws>\s+|/\*.*?\*/)
  | (?P<num>0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][+-]?\d+[fF]?
           |(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fFuU]?[lL]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<p>[{}()\[\],;=.&*+-])
""", re.X | re.S)


@dataclass(frozen=True)
class TensorArg:
    index: int  # -1: NULL


@dataclass(frozen=True)
class ArrayRef:
    name: str  # a constant array made by ctx.const_array


@dataclass(frozen=True)
class TensorList:
    """A local array of tensor pointers (``const void *name[n];`` then one assignment
    per element), passed to variable-arity kernels such as CONCATENATION."""

    items: tuple[int, ...]


@dataclass(frozen=True)
class ScratchArg:
    """The op's scratch buffer."""


@dataclass(frozen=True)
class StructRef:
    name: str  # a static const struct declared in the body


Value: TypeAlias = (int | float | ArrayRef | StructRef | TensorArg | ScratchArg | TensorList
                    | list["Value"] | dict[str, "Value"] | None)


@dataclass
class Capture:
    """What the op's body does: structs declared, one kernel call."""

    structs: dict[str, tuple[str, dict[str, Value]]] = field(default_factory=dict)
    function: str = ""
    args: list[Value] = field(default_factory=list)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    no_op: bool = False  # the body is `return NNRT_OK;` (e.g. an empty output)
    lists: dict[str, list[int | None]] = field(default_factory=dict)  # pointer arrays
    scalars: dict[str, np.ndarray] = field(default_factory=dict)  # static const scalars


class _Refuse(Exception):
    pass


class _Parser:
    lists: dict[str, list[int | None]]

    def __init__(self, text: str) -> None:
        self.lists = {}
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise _Refuse(f"unexpected {text[pos:pos + 20]!r}")
            pos = m.end()
            kind = m.lastgroup
            assert kind is not None
            if kind != "ws":
                self.toks.append((kind, m.group()))
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.toks[j][1] if j < len(self.toks) else ""

    def take(self, want: str | None = None) -> str:
        if self.i >= len(self.toks):
            raise _Refuse("unexpected end of the body")
        tok = self.toks[self.i][1]
        if want is not None and tok != want:
            raise _Refuse(f"expected {want!r}, found {tok!r}")
        self.i += 1
        return tok

    def kind(self) -> str:
        return self.toks[self.i][0] if self.i < len(self.toks) else ""

    def ident(self) -> str:
        if self.kind() != "id":
            raise _Refuse(f"expected a name, found {self.peek()!r}")
        return self.take()

    # ----- values -----
    def number(self) -> int | float:
        tok = self.take()
        t = tok.rstrip("uUlL")
        if t[:2] in ("0x", "0X") and ("p" in t or "P" in t):
            return float.fromhex(t.rstrip("fF"))
        if t.endswith(("f", "F")) or "." in t or (("e" in t or "E" in t) and "x" not in t):
            return float(t.rstrip("fF"))
        return int(t)

    def expr(self) -> Value:
        """A scalar initialiser or argument."""
        tok = self.peek()
        if tok == "(":
            # a cast `(const T *)x`, or `(-2147483647 - 1)`
            if self.peek(1) == "-" or self.toks[self.i + 1][0] == "num":
                self.take("(")
                v = self.arith()
                self.take(")")
                return v
            self.take("(")
            while self.peek() != ")":
                if self.peek() not in ("const", "*") and self.kind() != "id":
                    raise _Refuse(f"unexpected {self.peek()!r} in a cast")
                self.take()
            self.take(")")
            return self.expr()
        if tok == "&":
            self.take()
            return StructRef(self.ident())
        if tok == "-" or self.kind() == "num":
            return self.arith()
        name = self.ident()
        if name == "NULL":
            return None
        if name == MARK:
            self.take("(")
            v = self.number()
            self.take(")")
            if not isinstance(v, int):
                raise _Refuse("bad tensor marker")
            return TensorArg(v)
        if name == SCRATCH:
            return ScratchArg()
        if name in self.lists:
            items = self.lists[name]
            if any(t is None for t in items):
                raise _Refuse(f"{name} has unset elements")
            return TensorList(tuple(t for t in items if t is not None))
        return ArrayRef(name)

    def arith(self) -> int | float:
        """A literal, negated, or `a - b` of literals (INT32_MIN's spelling)."""
        neg = False
        if self.peek() == "-":
            self.take()
            neg = True
        v = self.number()
        v = -v if neg else v
        while self.peek() in ("-", "+") and self.toks[self.i + 1][0] == "num":
            op = self.take()
            w = self.number()
            v = v - w if op == "-" else v + w
        return v

    def init(self) -> Value:
        if self.peek() != "{":
            return self.expr()
        self.take("{")
        if self.peek() == ".":
            d: dict[str, Value] = {}
            while self.peek() != "}":
                self.take(".")
                name = self.ident()
                self.take("=")
                d[name] = self.init()
                if self.peek() == ",":
                    self.take()
            self.take("}")
            return d
        items: list[Value] = []
        while self.peek() != "}":
            items.append(self.init())
            if self.peek() == ",":
                self.take()
        self.take("}")
        return items

    # ----- statements -----
    def body(self, cap: Capture) -> None:
        while self.i < len(self.toks):
            tok = self.peek()
            if tok == "static":
                self.take()
                self.take("const")
                ctype = self.ident()
                name = self.ident()
                self.take("=")
                v = self.init()
                self.take(";")
                if isinstance(v, (int, float)) and ctype in _SCALAR_TYPES:
                    # e.g. a pad value passed by address: a one-element constant
                    cap.scalars[name] = np.array([v], dtype=_SCALAR_TYPES[ctype])
                    continue
                if not isinstance(v, dict):
                    raise _Refuse(f"{name} is not a struct")
                cap.structs[name] = (ctype, v)
            elif tok == "const" and self.peek(1) == "void":
                # const void *name[n];
                self.take()
                self.take("void")
                self.take("*")
                name = self.ident()
                self.take("[")
                n = self.number()
                self.take("]")
                self.take(";")
                if not isinstance(n, int) or not 0 < n <= 256:
                    raise _Refuse(f"pointer array {name}[{n}]")
                self.lists[name] = [None] * n
            elif tok in self.lists and self.peek(1) == "[":
                # name[i] = <tensor>;
                name = self.take()
                self.take("[")
                i = self.number()
                self.take("]")
                self.take("=")
                v = self.expr()
                self.take(";")
                if not isinstance(i, int) or not 0 <= i < len(self.lists[name]) or not \
                        isinstance(v, TensorArg):
                    raise _Refuse(f"{name}[{i}] = {v!r}")
                self.lists[name][i] = v.index
            elif tok == "return":
                self.take()
                fn = self.ident()
                if fn == "NNRT_OK" and self.peek() == ";":
                    self.take(";")
                    cap.no_op = True
                    continue
                self.take("(")
                while self.peek() != ")":
                    cap.args.append(self.expr())
                    if self.peek() == ",":
                        self.take()
                self.take(")")
                self.take(";")
                if cap.function:
                    raise _Refuse("more than one kernel call")
                cap.function = fn
            else:
                raise _Refuse(f"statement starting with {tok!r}")
        if not cap.function and not cap.no_op:
            raise _Refuse("no kernel call")


def capture(graph: Graph, op: Op) -> Capture:
    """The op's kernel call as data (see the module doc)."""
    cap = Capture()

    def const_array(suffix: str, arr: np.ndarray) -> str:
        name = f"blob_{suffix}_{len(cap.arrays)}"
        cap.arrays[name] = np.asarray(arr)
        return name

    low = lowering_for(op)
    ctx = EmitContext(graph=graph, op=op, ptr=lambda t: f"{MARK}({t})",
                      const_array=const_array, scratch=SCRATCH)
    body = "\n".join(low.emit(ctx))
    try:
        _Parser(body).body(cap)
    except (_Refuse, IndexError, ValueError) as err:
        raise UnsupportedError(
            f"op {op.index} ({op.opcode}): the model blob cannot represent its kernel "
            f"call ({err})", hint="use the generated C (--emit c) for this model") from None
    return cap
