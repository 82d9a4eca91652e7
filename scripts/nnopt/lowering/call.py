"""Kernel calls as data, and the one renderer that writes them as C.

A lowering's ``emit(ctx)`` returns a :data:`Body`: the statements of the op's
function as typed objects, never C text:

- :class:`Params`: a ``static const <ctype> <name>`` parameter struct and its field
  values (:data:`Value`: numbers, nested structs, arrays, :class:`Raw` identifiers of
  constant arrays, :class:`AddressOf` other structs of the body), or a scalar passed
  by address (a pad value);
- :class:`PtrList`: a local array of tensor pointers for variable-arity kernels;
- :class:`Call`: the kernel call whose status is the op's result, with typed arguments
  (:data:`Arg`: a tensor by index, the op's scratch, the address of a struct, a
  constant array or other identifier, a literal, ``NULL``);
- :class:`Done`: nothing to run (an empty output);
- :class:`Code`: C lines that code running an op on sub-views writes around rendered
  calls (``codegen.views`` loops), with its final status.

``lowering.common.c_params`` / ``c_call`` and ``EmitContext.ptr`` build these
objects. :func:`render` writes a body as C (the model emitter, the weight-streaming
code in assignment form); the model-blob writer (:mod:`nnopt.blob.writer`) encodes the
same objects; a specialised function (data too, :data:`SpecDecl`)
declares its op's :class:`Params` under its own name (:func:`render_params`, written by
:mod:`nnopt.codegen.spec`).

Window lowerings (``lowering.conv``, ``lowering.pool``) also return their call as a
:class:`KernelCall` (parameters + call) for the code that runs the op on sub-views
(``codegen.views`` bands, slices and folded padding; ``codegen.stages`` patches): it
changes the call's geometry (``params.fields[geom_key]``) or its pointers
(:meth:`KernelCall.expr`); it never rebuilds the parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import numpy as np

# ----- values of parameter fields -----


@dataclass(frozen=True)
class Raw:
    """A C identifier, in an initialiser or as an argument: a constant array's name
    (``ctx.const_array``), a :class:`PtrList`, an enum constant, ``NULL``."""

    text: str


@dataclass(frozen=True)
class Dec:
    """A float32 value written as a decimal literal (``0.5f``) rather than a hexadecimal
    one (the spelling some kernels' parameters have always had)."""

    value: float


@dataclass(frozen=True)
class Grouped:
    """A nested struct written several fields to a line (``rows`` name them in order)."""

    fields: Mapping[str, Any]
    rows: tuple[tuple[str, ...], ...]


Value: TypeAlias = Any
"""int | float | bool | Raw | Dec | AddressOf | Grouped | None | a list or a mapping of
them."""


# ----- arguments of a call -----


@dataclass(frozen=True)
class TensorArg:
    """The data pointer of tensor ``index`` (activation or constant), optionally cast to
    ``(const) ctype *``."""

    index: int
    ctype: str | None = None
    const: bool = False

    def __str__(self) -> str:
        raise TypeError(f"{self!r} is call data, not C text: pass it to c_call (cast() "
                        "casts it); code writing C around calls uses ctx.c_ptr")


@dataclass(frozen=True)
class ScratchArg:
    """The op's scratch buffer."""

    def __str__(self) -> str:
        raise TypeError("ctx.scratch is call data, not C text: pass it to c_call; code "
                        "writing C around calls uses ctx.c_scratch")


@dataclass(frozen=True)
class AddressOf:
    """``&name``: a :class:`Params` of the same body (an argument, or
    a field pointing to another struct, ``&pool``)."""

    name: str


@dataclass(frozen=True)
class Literal:
    """A number and its C spelling (``12u``, ``0.5f``)."""

    value: int | float
    text: str


@dataclass(frozen=True)
class Expr:
    """A C expression the code around a call computes (a view's pointer): rendered as
    is, not representable in the model blob."""

    text: str


NULL = Raw("NULL")


def lit(v: int) -> Literal:
    """An integer argument (``12``)."""
    return Literal(int(v), str(int(v)))


def lit_f32(v: float) -> Literal:
    """A float32 argument as a decimal literal (``0.2f``)."""
    return Literal(float(v), dec_float(v))

Arg: TypeAlias = TensorArg | ScratchArg | AddressOf | Raw | Literal | Expr


# ----- statements -----


@dataclass(frozen=True)
class Params:
    """``static const <ctype> <name> = {...};``: one field per line (nested structs
    indented), or on one line (``inline``); ``fields`` a number: a scalar constant."""

    ctype: str
    fields: Mapping[str, Value] | int | float
    name: str = "params"
    inline: bool = False


@dataclass(frozen=True)
class PtrList:
    """``const void *name[n];`` (``void *`` for outputs: ``const=False``) and one
    assignment per tensor."""

    name: str
    items: tuple[TensorArg, ...]
    const: bool = True


@dataclass(frozen=True)
class Call:
    """``return fn(args);``: the kernel whose status is the op's. ``wrap``: one argument
    per line when the line would be long; ``note``: a comment line before it."""

    fn: str
    args: tuple[Arg, ...]
    wrap: bool = True
    note: str = ""


@dataclass(frozen=True)
class Done:
    """``return NNRT_OK;``: nothing to run."""

    comment: str = ""


@dataclass(frozen=True)
class Code:
    """C lines written by code that runs an op on sub-views, then ``return <result>;``."""

    lines: tuple[str, ...]
    result: str


Stmt: TypeAlias = Params | PtrList | Call | Done | Code
Body: TypeAlias = list[Stmt]
"""What ``emit(ctx)`` returns."""


# ----- the renderer -----


def c_value(v: Value) -> str:
    """A C99 initialiser for a value: mapping -> designated struct, list -> braces,
    float -> exact hexadecimal float32 literal, int -> decimal, Raw -> as is."""
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Dec):
        return dec_float(v.value)
    if isinstance(v, AddressOf):
        return f"&{v.name}"
    if v is None:
        return "NULL"
    if isinstance(v, Grouped):
        return c_value(v.fields)
    if isinstance(v, Mapping):
        return "{" + ", ".join(f".{k} = {c_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(c_value(x) for x in v) + "}"
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        i = int(v)
        return "(-2147483647 - 1)" if i == -(2**31) else str(i)
    if isinstance(v, (float, np.floating)):
        f = np.float32(v)
        if not np.isfinite(f):
            raise ValueError(f"non-finite float parameter {v}")
        return float(f).hex() + "f"
    raise TypeError(f"no C initialiser for {v!r}")


def dec_float(x: float) -> str:
    """A decimal C float literal that parses to exactly float32(x)."""
    v = float(np.float32(x))
    if not np.isfinite(v):
        raise ValueError(f"no finite C literal for {x}")
    return f"{v!r}f"


def _field_lines(fields: Mapping[str, Value], indent: str) -> list[str]:
    lines = []
    for k, v in fields.items():
        if isinstance(v, Grouped):
            lines.append(f"{indent}.{k} = {{")
            lines += [indent + "    " + " ".join(f".{n} = {c_value(v.fields[n])},"
                                                 for n in row) for row in v.rows]
            lines.append(f"{indent}}},")
        elif isinstance(v, Mapping):
            lines.append(f"{indent}.{k} = {{")
            lines += _field_lines(v, indent + "    ")
            lines.append(f"{indent}}},")
        else:
            lines.append(f"{indent}.{k} = {c_value(v)},")
    return lines


def render_params(p: Params, name: str | None = None) -> list[str]:
    """The declaration of a parameter struct (under ``name`` if given)."""
    ident = p.name if name is None else name
    if not isinstance(p.fields, Mapping):
        return [f"static const {p.ctype} {ident} = {c_value(p.fields)};"]
    if p.inline:
        body = ", ".join(f".{k} = {c_value(v)}" for k, v in p.fields.items())
        return [f"static const {p.ctype} {ident} = {{{body}}};"]
    return [f"static const {p.ctype} {ident} = {{", *_field_lines(p.fields, "    "), "};"]


@dataclass(frozen=True)
class Pointers:
    """How a body's tensors and scratch are written: the emitter's pointer expressions."""

    ptr: Callable[[int], str]
    scratch: str = "NULL"


def render_arg(a: Arg, at: Pointers) -> str:
    if isinstance(a, TensorArg):
        p = at.ptr(a.index)
        if a.ctype is None:
            return p
        return f"({'const ' if a.const else ''}{a.ctype} *){p}"
    if isinstance(a, ScratchArg):
        return at.scratch
    if isinstance(a, AddressOf):
        return f"&{a.name}"
    return a.text


def call_expr(c: Call, at: Pointers) -> str:
    """``fn(args)`` on one line."""
    return f"{c.fn}({', '.join(render_arg(a, at) for a in c.args)})"


def _call_lines(c: Call, at: Pointers, prefix: str) -> list[str]:
    args = [render_arg(a, at) for a in c.args]
    line = f"return {c.fn}({', '.join(args)});"
    if not c.wrap or len(line) <= 96 or not args:
        return [f"{prefix}{c.fn}({', '.join(args)});"]
    pad = " " * len(f"return {c.fn}(")  # continuation lines align under the return form
    out = [f"{prefix}{c.fn}({args[0]},"]
    out += [f"{pad}{a}," for a in args[1:-1]]
    out.append(f"{pad}{args[-1]});")
    return out


def render(body: Sequence[Stmt], at: Pointers, assign: str | None = None) -> list[str]:
    """The C statements of a body. ``assign``: a status variable that takes the result
    (``s = kernel(...);``) instead of returning it (a streamed chunk)."""
    prefix = "return " if assign is None else f"{assign} = "
    out: list[str] = []
    for st in body:
        if isinstance(st, Params):
            out += render_params(st)
        elif isinstance(st, PtrList):
            out.append(f"{'const ' if st.const else ''}void *{st.name}[{len(st.items)}];")
            out += [f"{st.name}[{i}] = {render_arg(t, at)};" for i, t in enumerate(st.items)]
        elif isinstance(st, Call):
            out += [f"/* {st.note} */"] if st.note else []
            out += _call_lines(st, at, prefix)
        elif isinstance(st, Done):
            out.append(f"{prefix}NNRT_OK;" + (f" /* {st.comment} */" if st.comment else ""))
        elif isinstance(st, Code):
            out += [*st.lines, f"{prefix}{st.result};"]
        else:
            raise TypeError(f"{st!r} is not a statement of a body: build bodies with "
                            "c_params, c_call and Done (lowering.call)")
    return out


def params_of(body: Sequence[Stmt]) -> dict[str, Params]:
    return {st.name: st for st in body if isinstance(st, Params)}


def call_of(body: Sequence[Stmt]) -> Call | None:
    """The body's kernel call (None: nothing to run, or code around calls)."""
    calls = [st for st in body if isinstance(st, Call)]
    return calls[-1] if calls else None


# ----- a function specialised to one op (--specialize, lowering.specialize) -----


@dataclass(frozen=True)
class ConvGemmSpec:
    """What the specialised matrix-core convolution of one op needs: its bias,
    multiplier and shift arrays, or (records_ident) its channel records instead."""

    op_index: int
    model: str
    params: Params  # the op's `nnrt_conv_s8_params_t`, declared as params_name
    params_name: str
    depth: int
    channels: int
    filter_ident: str
    bias_ident: str | None
    mult_ident: str
    shift_ident: str
    per_channel: bool
    output_offset: int
    act_min: int
    act_max: int
    shifts: Sequence[int]
    records_ident: str | None = None
    # the records' biases with the input offset's term (Helium builds read them)
    bias_off: tuple[int, ...] | None = None
    # the weights are in the pair-row layout (lowering.gemm_pairs; the records hold the
    # mixed start values): the core's pairs run nnrt_gemm_pair_body_rp()
    pair_rows: bool = False
    # the weights are widened to int16 (lowering.gemm_pairs.int16_rows; the records
    # hold the biases): the core's pairs run nnrt_gemm_pair_body_w16()
    int16_rows: bool = False


@dataclass(frozen=True)
class FcSpec:
    """What the specialised int8 fully connected op of one op needs (nnrt/kernels/spec.h):
    its parameters, weights and bias arrays and shifts; ``pairs_depth``: the weights are
    in the row-pair layout (``nnrt_fc_pairs_body()``, with an input buffer of that many
    int16 on the function's stack)."""

    op_index: int
    model: str
    params: Params  # the op's `nnrt_fc_s8_params_t`, declared as params_name
    params_name: str
    weights_ident: str
    bias_ident: str | None
    shifts: Sequence[int]
    pairs_depth: int | None = None
    # the weights are int32 words in the packed layout (``nnrt_fc_pack23_body()``, an
    # input buffer of that many int16 on the function's stack; lowering.fc.pack23_layout)
    pack23_depth: int | None = None
    # the weights are int16 in the widened layout (``nnrt_fc_int16_body()``, an input
    # buffer of that many int16 on the function's stack; lowering.fc.int16_layout)
    int16_depth: int | None = None


SpecDecl: TypeAlias = ConvGemmSpec | FcSpec
"""A specialised function as data: what a lowering gives ``EmitContext.decl``; code
generation writes it (:func:`nnopt.codegen.spec.render_spec`)."""


# ----- the kernels' argument checks (their Prepare), run once before the first inference -----

@dataclass(frozen=True)
class KernelCheck:
    """An exported argument check (``nnrt_*_check()`` in nnrt/kernels/*.h, TFLM's
    Prepare) of the kernels ``kernels``: the conditions each tests inline on every call,
    with one definition (the header predicate both use). A lowering declares the checks
    of the kernels it calls (``Lowering.checks``).

    The check's arguments are the call's arguments at positions ``picks`` then the
    literals ``extra``. A picked parameter struct (``&params``) is the one object the op
    and its check read, so it moves to file scope; ``member`` passes the address of one
    of its members instead (``&params.shape``)."""

    kernels: tuple[str, ...]
    check: str
    header: str  # the nnrt header declaring it ("nnrt/kernels/conv.h")
    picks: tuple[int, ...] = (0,)
    extra: tuple[Arg, ...] = ()
    member: str = ""


def check_for(checks: Sequence[KernelCheck], fn: str) -> KernelCheck | None:
    """The check of kernel ``fn`` among ``checks``, or None."""
    return next((c for c in checks if fn in c.kernels), None)


def prepare_of(body: Sequence[Stmt], prefix: str, checks: Sequence[KernelCheck] = ()
               ) -> tuple[list[Stmt], list[Params], list[Call]]:
    """The body as the op function runs it, the parameter structs its checks read, and
    the check calls for ``<model>_prepare()``.

    A kernel with an exported check among ``checks``: a picked parameter struct that is
    one of the body's :class:`Params` moves to file scope as ``<prefix><name>`` (the one
    object both the op and its check read) and the check is called on it; picked scalars
    are passed as they are. A body without such a call, or whose picked arguments are
    not constants of the body (a tensor, a view's pointer), is returned as is, with no
    checks.
    """
    call = call_of(body)
    check = check_for(checks, call.fn) if call is not None else None
    if call is None or check is None or len(call.args) <= max(check.picks):
        return list(body), [], []
    structs = params_of(body)
    picked = [call.args[i] for i in check.picks]
    hoisted: Params | None = None
    args: list[Arg] = []
    for a in picked:
        if isinstance(a, AddressOf) and a.name in structs and hoisted is None:
            hoisted = structs[a.name]
            args.append(AddressOf(prefix + a.name + (f".{check.member}" if check.member
                                                     else "")))
        elif isinstance(a, Literal | Raw) and a != NULL:
            args.append(a)
        else:
            return list(body), [], []
    if hoisted is None:
        return list(body), [], [Call(check.check, (*args, *check.extra))]
    if any(isinstance(v, AddressOf) for p in structs.values()
           if isinstance(p.fields, Mapping) for v in p.fields.values()):
        return list(body), [], []  # a struct pointing to another (kept together, unchecked)
    name = prefix + hoisted.name
    run_args = [AddressOf(name) if isinstance(x, AddressOf) and x.name == hoisted.name else x
                for x in call.args]
    kept: list[Stmt] = [st for st in body if st is not hoisted and st is not call]
    kept.append(replace(call, args=tuple(run_args)))
    return kept, [replace(hoisted, name=name)], [Call(check.check, (*args, *check.extra))]


def render_prepare(name: str, checks: Sequence[Call], at: Pointers) -> list[str]:
    """``nnrt_status_t <name>_prepare(void)``: every check once, the first failing
    status returned (NNRT_OK when all pass)."""
    lines = [f"nnrt_status_t {name}_prepare(void)", "{"]
    if checks:
        lines.append("    nnrt_status_t s = NNRT_OK;")
    for c in checks:
        lines += [f"    s = {call_expr(c, at)};", "    if (s != NNRT_OK) {",
                  "        return s;", "    }"]
    lines += ["    return NNRT_OK;", "}"]
    return lines


# ----- a window op's call, for code that runs it on sub-views -----


@dataclass(frozen=True)
class KernelCall:
    """A window kernel: its parameters and its call over whole tensors
    (``fn(&params, x, <weights>, y, <scratch>)``)."""

    params: Params
    call: Call
    elem: str  # C element type of input/output
    geom_key: str = "geom"  # name of the geometry member

    @property
    def fn(self) -> str:
        return self.call.fn

    @property
    def ptype(self) -> str:
        return self.params.ctype

    @property
    def fields(self) -> Mapping[str, Value]:
        f = self.params.fields
        assert isinstance(f, Mapping)
        return f

    def on(self, params: str, x: str, y: str) -> Call:
        """The call with parameters at ``&params`` on the pointer expressions x, y."""
        args = list(self.call.args)
        args[0] = AddressOf(params)
        args[1] = Expr(x)
        args[self.y_at] = Expr(y)
        return replace(self.call, args=tuple(args))

    @property
    def y_at(self) -> int:
        """The position of the output pointer in ``call.args``."""
        n = len(self.call.args)
        return n - 1 - sum(isinstance(a, ScratchArg) for a in self.call.args)

    def scratch_expr(self, at: Pointers) -> str:
        """The scratch pointer the call passes, or ``NULL``."""
        return at.scratch if any(isinstance(a, ScratchArg) for a in self.call.args) else "NULL"

    def expr(self, params: str, x: str, y: str, at: Pointers) -> str:
        """``fn(&params, x, <weights>, y, <scratch>)`` as one C expression."""
        return call_expr(self.on(params, x, y), at)
