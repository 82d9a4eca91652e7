"""ONNX nodes -> nnopt IR ops (float32, and int8 where a QDQ graph says so).

The graph is walked once in topological order; every ONNX value becomes a
:class:`~.values.Value` (an IR tensor plus the axis order it is held in). Handlers, one
per ONNX op type (:data:`.handlers.HANDLERS`), emit IR ops through :class:`Importer`'s helpers.

QDQ (``QuantizeLinear``/``DequantizeLinear`` around ops, as
``onnxruntime.quantization.quantize_static`` writes): a node whose data inputs are all
dequantised int8 values (or int8 constants behind a DequantizeLinear) and whose only
consumer is a QuantizeLinear runs as the int8 IR op with that output quantisation
(TFLM's integer arithmetic); every other node runs in float32, with DEQUANTIZE/QUANTIZE
at the boundaries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ...cdefs import DType
from ...errors import UnsupportedError
from ...ir import Graph, Quant
from .builder import GraphBuilder
from .prepare import Node, Prepared
from .values import Value, identity, is_memory_noop, permuted, relative

FLT_LOWEST = float(np.finfo(np.float32).min)
# the model-boundary types held narrower inside: an int64 / float64 input is cast to
# int32 / float32 on entry (CAST, checked: a value that does not fit fails the run), an
# output back to the type the model declares
_NARROWED = {np.dtype(np.int64): (DType.INT64, DType.INT32),
             np.dtype(np.float64): (DType.FLOAT64, DType.FLOAT32)}
Handler = Callable[["Importer", Node], None]


class Importer:
    def __init__(self, prep: Prepared, source: str, handlers: Mapping[str, Handler],
                 quant_inputs: Mapping[str, tuple[int, ...]]) -> None:
        """``handlers``: ONNX op type -> its import function; ``quant_inputs``: the op
        types importable as int8 ops and their data inputs (:mod:`.handlers`)."""
        self.p = prep
        self.handlers = handlers
        self.quant_inputs = quant_inputs
        self.source = source
        self.b = GraphBuilder(prep.name)
        self.values: dict[str, Value] = {}
        # DequantizeLinear of a constant: (integer data, scales, zero points, axis)
        self.qconst: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}
        self._cache: dict[tuple[Any, ...], int] = {}
        self.qout: Quant | None = None  # set while a node is imported as an int8 op
        self.qname: str | None = None  # ... and the QuantizeLinear output it writes
        self.qact = "NONE"  # ... and the Relu/Clip between the op and it, fused
        self._act_node: int | None = None
        self.skip: set[int] = set()  # node positions already imported (fused Q nodes)
        self.node: Node | None = None

    # ----- errors -----

    def refuse(self, what: str, supported: str) -> UnsupportedError:
        n = self.node
        where = f"{n.op_type} node {n.name!r}" if n is not None else "the graph"
        return UnsupportedError(f"{self.source}: {where}: {what}", hint=f"supported: {supported}")

    # ----- shapes and constants -----

    def shape(self, name: str) -> tuple[int, ...]:
        if name in self.p.shapes:
            return self.p.shapes[name]
        raise self.refuse(f"value {name!r} has no static shape after shape inference",
                          "static shapes (fix dynamic inputs with --input-shape NAME=D1,...)")

    def is_const(self, name: str) -> bool:
        return bool(name) and name in self.p.consts

    def const(self, name: str) -> np.ndarray:
        if name not in self.p.consts:
            raise self.refuse(f"input {name!r} must be a constant", "constant weights/params")
        return self.p.consts[name]

    def opt_input(self, node: Node, k: int) -> str:
        return node.inputs[k] if len(node.inputs) > k else ""

    # ----- tensors in a layout -----

    def _reshape(self, src: int, shape: tuple[int, ...], name: str) -> int:
        x = self.b.tensors[src]
        if x.shape == shape:
            return src
        out = self.b.tensor(name, shape, x.dtype, x.quant)
        shp = self.b.const(f"{name}.shape", np.array(shape, dtype=np.int32))
        self.b.op("RESHAPE", [src, shp], [out])
        return out

    def _transpose(self, src: int, perm: tuple[int, ...], name: str) -> int:
        x = self.b.tensors[src]
        shape = permuted(x.shape, perm)
        if perm == identity(len(perm)):
            return src
        if is_memory_noop(x.shape, perm):
            return self._reshape(src, shape, name)
        if len(perm) > MAX_TRANSPOSE_RANK:
            # TFLM's TRANSPOSE takes 5-D: without the size-1 axes and with the axes
            # that stay neighbours merged, the same data movement may need fewer
            red_shape, red_perm = collapse_transpose(x.shape, perm)
            if len(red_perm) <= MAX_TRANSPOSE_RANK:
                flat = self._reshape(src, red_shape, f"{name}.collapsed")
                moved = self._transpose(flat, red_perm, f"{name}.moved")
                return self._reshape(moved, shape, name)
        out = self.b.tensor(name, shape, x.dtype, x.quant)
        p = self.b.const(f"{name}.perm", np.array(perm, dtype=np.int32))
        self.b.op("TRANSPOSE", [src, p], [out])
        return out

    def act(self, name: str, perm: Sequence[int] | None = None) -> int:
        """The IR tensor of ONNX value ``name`` held in layout ``perm`` (default: its
        current one); int8 while importing an int8 op, float32 otherwise."""
        if name in self.p.consts:
            rank = len(self.shape(name))
            return self.const_tensor(name, tuple(perm) if perm is not None else identity(rank))
        if name not in self.values:
            raise self.refuse(f"input {name!r} is not produced by any imported node",
                              "graphs in topological order")
        v = self.values[name]
        want = tuple(perm) if perm is not None else v.perm
        if v.colperm is not None:  # undo the column order (Gemm reads v.tensor directly)
            assert v.flat_of is not None
            src = self.act(v.flat_of, identity(len(self.shape(v.flat_of))))
            return self._cached(("flat", name, self.qout is not None), lambda: self._reshape(
                src, permuted(self.shape(name), want), f"{name}.flat"))
        t = v.tensor
        if v.kind == "dq" and self.qout is None:
            t = self._cached(("deq", name), lambda: self._dequantize(v.tensor, name))
        elif v.kind == "f" and self.qout is not None:
            raise AssertionError("float input to an int8 op")
        r = relative(v.perm, want)
        return self._cached(("perm", name, r, self.b.tensors[t].dtype),
                            lambda: self._transpose(t, r, f"{name}.t"))

    def _cached(self, key: tuple[Any, ...], make: Callable[[], int]) -> int:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def _dequantize(self, t: int, name: str) -> int:
        x = self.b.tensors[t]
        out = self.b.tensor(f"{name}.float", x.shape, DType.FLOAT32)
        self.b.op("DEQUANTIZE", [t], [out])
        return out

    def const_tensor(self, name: str, perm: tuple[int, ...], rank: int | None = None) -> int:
        """A constant operand in layout ``perm`` (after broadcasting to ``rank``): int8
        with its quantisation while importing an int8 op, float32 otherwise."""
        arr = self.const(name)
        r = rank if rank is not None else arr.ndim
        key = ("const", name, perm, r, self.qout is not None)
        if key in self._cache:
            return self._cache[key]
        if self.qout is not None:
            q, scale, zp, _ = self.qconst_of(name)
            if scale.size != 1:
                raise self.refuse(f"constant {name!r} is quantised per channel",
                                  "per-tensor quantised constant operands")
            data = q.reshape((1,) * (r - q.ndim) + q.shape).transpose(perm)
            t = self.b.const(name, data, Quant((float(scale.reshape(-1)[0]),),
                                               (int(zp.reshape(-1)[0]),)))
        else:
            data = arr.astype(np.float32).reshape((1,) * (r - arr.ndim) + arr.shape)
            t = self.b.const(name, data.transpose(perm))
        self._cache[key] = t
        return t

    def int_const(self, name: str, perm: tuple[int, ...], rank: int) -> int:
        """An integer constant operand as int32 (the type int64 values are held in),
        refused when a value does not fit."""
        arr = self.const(name)
        if arr.dtype.kind not in "iub":
            raise self.refuse(f"constant {name!r} is {arr.dtype} beside int32 operands",
                              "integer constants with integer operands")
        lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise self.refuse(f"constant {name!r} holds values outside int32 "
                              f"[{int(arr.min())}, {int(arr.max())}]",
                              "int64 constants within int32's range (nnopt computes "
                              "int64 tensors in int32)")
        key = ("iconst", name, perm, rank)
        if key not in self._cache:
            data = arr.astype(np.int32).reshape((1,) * (rank - arr.ndim) + arr.shape)
            self._cache[key] = self.b.const(name, data.transpose(perm))
        return self._cache[key]

    def qconst_of(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        if name not in self.qconst:
            raise self.refuse(f"constant {name!r} is not quantised", "int8 QDQ constants")
        return self.qconst[name]

    # ----- outputs -----

    def out_tensor(self, name: str, ir_shape: tuple[int, ...],
                   quant: Quant | None = None, dtype: DType = DType.FLOAT32) -> int:
        """A new activation for ONNX output ``name``: ``dtype`` (float32, or int32 where
        the op computes on integers), or int8 with ``quant`` (default: the
        QuantizeLinear's) while importing an int8 op."""
        if self.qout is None:
            return self.b.tensor(name, ir_shape, dtype)
        return self.b.tensor(name, ir_shape, DType.INT8, quant or self.qout)

    def bind(self, name: str, t: int, perm: tuple[int, ...], **kw: Any) -> None:
        """ONNX value ``name`` is IR tensor ``t`` in layout ``perm``. While importing an
        int8 op, the tensor is requantised to the QuantizeLinear's parameters if it has
        others, and the QuantizeLinear's output is bound instead."""
        if self.qout is None:
            self.values[name] = Value(t, perm, "f", **kw)
            return
        x = self.b.tensors[t]
        if x.quant != self.qout:
            y = self.b.tensor(f"{name}.requant", x.shape, DType.INT8, self.qout)
            self.b.op("QUANTIZE", [t], [y])
            t = y
        assert self.qname is not None
        self.values[self.qname] = Value(t, perm, "q", **kw)

    def value(self, name: str) -> Value:
        if name in self.values:
            return self.values[name]
        if name in self.p.consts:
            return Value(-1, identity(len(self.shape(name))))
        raise self.refuse(f"input {name!r} is not produced by any imported node",
                          "graphs in topological order")

    # ----- the walk -----

    def run(self) -> Graph:
        HANDLERS, QUANT_INPUTS = self.handlers, self.quant_inputs
        graph_inputs: list[int] = []
        for name in self.p.inputs:
            graph_inputs.append(self._graph_input(name))
        unknown: dict[str, list[str]] = {}
        for node in self.p.nodes:
            if node.op_type not in HANDLERS or node.domain not in ("", "ai.onnx"):
                key = node.op_type if node.domain in ("", "ai.onnx") \
                    else f"{node.domain}.{node.op_type}"
                unknown.setdefault(key, []).append(node.name)
        if unknown:
            listing = "; ".join(f"{op} (node {', '.join(repr(n) for n in names[:3])}"
                                f"{', …' if len(names) > 3 else ''})"
                                for op, names in unknown.items())
            raise UnsupportedError(
                f"{self.source} uses ONNX operators nnopt does not import: {listing}",
                hint="supported ONNX operators: " + ", ".join(sorted(HANDLERS)))
        for k, node in enumerate(self.p.nodes):
            if k in self.skip:
                continue
            self.node = node
            qnode = self._quant_consumer(node, QUANT_INPUTS.get(node.op_type))
            if qnode is not None and not _quant_fits(node, self._quant_params(
                    self.p.nodes[qnode])):
                qnode = None
            if qnode is not None:
                self.qout, self.qname = self._quant_params(self.p.nodes[qnode]), \
                    self.p.nodes[qnode].outputs[0]
                self.skip.add(qnode)
                if self._act_node is not None:
                    self.skip.add(self._act_node)
            else:
                self.qout, self.qname, self.qact = None, None, "NONE"
            HANDLERS[node.op_type](self, node)
            self.qout = None
        self.node = None
        graph_outputs: list[int] = []
        for name in self.p.outputs:
            v = self.value(name)
            t = self.act(name, identity(len(self.shape(name))))
            dt = self.p.dtypes.get(name)
            if dt == np.uint8 and self.b.tensors[t].dtype == DType.INT8:
                t = self._boundary(t, name, DType.UINT8)  # uint8 at the boundary (.uint8)
            elif dt in _NARROWED and self.b.tensors[t].dtype == _NARROWED[dt][1]:
                t = self._widen(t, name, _NARROWED[dt][0])  # the declared int64 / float64
            elif t in graph_inputs or self.b.tensors[t].is_constant or t in graph_outputs:
                t = self._copy(t, name)
            del v
            graph_outputs.append(t)
        graph = self.b.graph(graph_inputs, graph_outputs)
        return _drop_unused(graph)

    def _graph_input(self, name: str) -> int:
        """The IR input of ONNX input ``name``: float32 as it is; uint8 (what a QDQ
        model's DequantizeLinear reads) as uint8, converted to the int8 of the shifted
        zero point (:mod:`.uint8`) by a QUANTIZE."""
        dt = self.p.dtypes.get(name)
        shape = self.shape(name)
        if dt == np.uint8:
            q = self._dequantized_input(name)
            t = self.b.tensor(name, shape, DType.UINT8,
                              Quant(q.scale, (q.zero_point[0] + 128,)))
            y = self.b.tensor(f"{name}.int8", shape, DType.INT8, q)
            self.b.op("QUANTIZE", [t], [y])
            self.values[name] = Value(y, identity(len(shape)), "q")
            return t
        if dt in _NARROWED:  # int64 / float64: the caller's type, narrowed on entry
            wide, narrow = _NARROWED[dt]
            t = self.b.tensor(name, shape, wide)
            y = self.b.tensor(f"{name}.{narrow.name.lower()}", shape, narrow)
            self.b.op("CAST", [t], [y])  # checked: a value that does not fit fails the run
            self.values[name] = Value(y, identity(len(shape)))
            return t
        if dt not in (np.float32, np.int32):
            raise UnsupportedError(f"{self.source}: input {name!r} is {dt}",
                                   hint="supported: float32, float64, int32 and int64 model "
                                   "inputs, uint8 inputs that DequantizeLinear reads; an "
                                   "input with a fixed value (e.g. a sample rate) can be "
                                   f"pinned at build time: --input-value {name}=V")
        t = self.b.tensor(name, shape, DType.FLOAT32 if dt == np.float32 else DType.INT32)
        self.values[name] = Value(t, identity(len(shape)))
        return t

    def _dequantized_input(self, name: str) -> Quant:
        """The one per-tensor quantisation that every reader of uint8 input ``name``
        (each a DequantizeLinear) gives it."""
        readers = [self.p.nodes[k] for k in self.p.consumers.get(name, [])]
        quants = set()
        for r in readers:
            if r.op_type != "DequantizeLinear" or r.inputs[0] != name:
                raise UnsupportedError(
                    f"{self.source}: uint8 input {name!r} is read by {r.op_type} node "
                    f"{r.name!r}", hint="supported: uint8 inputs read by DequantizeLinear")
            self.node = r
            quants.add(self._quant_params(r))
        self.node = None
        if len(quants) != 1:
            raise UnsupportedError(
                f"{self.source}: uint8 input {name!r} is dequantised with "
                f"{len(quants)} different parameters", hint="supported: uint8 inputs read "
                "by DequantizeLinear nodes of one scale and zero point")
        return quants.pop()

    def _boundary(self, t: int, name: str, dtype: DType) -> int:
        """int8 tensor ``t`` as ``dtype`` (uint8: the zero point 128 up) for output
        ``name``."""
        x = self.b.tensors[t]
        assert x.quant is not None
        out = self.b.tensor(f"{name}.{dtype.name.lower()}", x.shape, dtype,
                            Quant(x.quant.scale, (x.quant.zero_point[0] + 128,)))
        self.b.op("QUANTIZE", [t], [out])
        return out

    def _widen(self, t: int, name: str, dtype: DType) -> int:
        """Output ``name`` as the model declares it (int64, float64): ``t`` cast, exactly."""
        x = self.b.tensors[t]
        out = self.b.tensor(f"{name}.{dtype.name.lower()}", x.shape, dtype)
        self.b.op("CAST", [t], [out])
        return out

    def _copy(self, t: int, name: str) -> int:
        x = self.b.tensors[t]
        out = self.b.tensor(f"{name}.copy", x.shape, x.dtype, x.quant)
        shp = self.b.const(f"{name}.copy.shape", np.array(x.shape, dtype=np.int32))
        self.b.op("RESHAPE", [t, shp], [out])
        return out

    # ----- QDQ -----

    def _quant_consumer(self, node: Node, data_inputs: Sequence[int] | None) -> int | None:
        """The QuantizeLinear that makes ``node`` an int8 op, or None."""
        if data_inputs is None or len([o for o in node.outputs if o]) != 1:
            return None
        out = node.outputs[0]
        cons = self.p.consumers.get(out, [])
        if len(cons) != 1 or out in self.p.outputs:
            return None
        q = self.p.nodes[cons[0]]
        self.qact, self._act_node = "NONE", None
        act = _fusable_activation(self, q) if node.op_type in _ACT_FUSING else None
        if act is not None:  # Conv -> Relu -> QuantizeLinear (PyTorch PT2E): fused
            relu_out = q.outputs[0]
            rc = self.p.consumers.get(relu_out, [])
            if len(rc) != 1 or relu_out in self.p.outputs:
                return None
            self.qact, self._act_node = act, cons[0]
            q = self.p.nodes[rc[0]]
            cons = rc
            out = relu_out
        if q.op_type != "QuantizeLinear" or q.inputs[0] != out:
            self.qact, self._act_node = "NONE", None
            return None
        if node.op_type in _CONST_WEIGHTS and (
                self.opt_input(node, 1) not in self.qconst
                or np.any(self.qconst[self.opt_input(node, 1)][2] != 0)):
            # asymmetric weights (uint8 weights: quantize_static's weight_type=QUInt8)
            # have no int8 kernel: the op runs in float32 on the dequantized weights
            return None
        if node.op_type == "Gemm" and (float(node.attrs.get("alpha", 1.0)) != 1.0
                                       or float(node.attrs.get("beta", 1.0)) != 1.0):
            return None  # a scaled Gemm (torch's Linear after a Mul folded in): float32
        try:
            self._quant_params(q)
        except UnsupportedError:
            return None
        idx = range(len(node.inputs)) if data_inputs == (-1,) else data_inputs
        seen = False
        for k in idx:
            name = self.opt_input(node, k)
            if not name:
                continue
            if name in self.qconst or (k == 2 and node.op_type in _CONST_WEIGHTS
                                       and self.is_const(name)):
                continue  # int8 constants; a float bias is quantised at in * w scale
            v = self.values.get(name)
            if v is None or v.kind != "dq":
                return None
            seen = True
        return cons[0] if seen else None

    def _quant_params(self, q: Node) -> Quant:
        scale = self.const(q.inputs[1]).astype(np.float64).reshape(-1)
        zp_name = self.opt_input(q, 2)
        zp = self.const(zp_name) if zp_name else np.zeros(1, dtype=np.uint8)
        if zp.dtype != np.int8:
            raise self.refuse(f"QuantizeLinear {q.name!r} quantises to {zp.dtype}",
                              "int8 activations (quantize_static(..., "
                              "activation_type=QuantType.QInt8))")
        if scale.size != 1:
            raise self.refuse(f"QuantizeLinear {q.name!r} is per channel",
                              "per-tensor quantised activations")
        return Quant((float(np.float32(scale[0])),), (int(zp.reshape(-1)[0]),))


_ACT_FUSING = frozenset({"Conv", "Gemm", "MatMul", "Add", "Sub", "Mul"})
_CONST_WEIGHTS = frozenset({"Conv", "Gemm", "MatMul", "ConvTranspose"})


def _fusable_activation(im: Importer, node: Node) -> str | None:
    """RELU/RELU6 for a Relu or Clip(0, 6)/Clip(0, inf) node, else None."""
    if node.op_type == "Relu":
        return "RELU"
    if node.op_type != "Clip":
        return None
    try:
        lo_n, hi_n = im.opt_input(node, 1), im.opt_input(node, 2)
        lo = float(im.const(lo_n).reshape(-1)[0]) if lo_n else node.attrs.get("min")
        hi = float(im.const(hi_n).reshape(-1)[0]) if hi_n else node.attrs.get("max")
    except UnsupportedError:
        return None
    if lo == 0.0 and hi == 6.0:
        return "RELU6"
    if lo == 0.0 and hi is None:
        return "RELU"
    return None


# TFLM's int8 kernels for these fix the output quantisation; with another one the
# QuantizeLinear asks for, a requantisation after them would round twice, so the op
# runs in float32 between DEQUANTIZE and QUANTIZE instead (as onnxruntime computes it).
_FIXED_OUTPUT_QUANT = {"Sigmoid": Quant((1.0 / 256,), (-128,)),
                       "Softmax": Quant((1.0 / 256,), (-128,)),
                       "Tanh": Quant((1.0 / 128,), (0,))}


def _quant_fits(node: Node, q: Quant) -> bool:
    want = _FIXED_OUTPUT_QUANT.get(node.op_type)
    return want is None or (np.float32(want.scale[0]) == np.float32(q.scale[0])
                            and want.zero_point == q.zero_point)


def _drop_unused(graph: Graph) -> Graph:
    """Remove tensors no op reads or writes (materialised but unused), renumbering."""
    used: set[int] = set(graph.inputs) | set(graph.outputs)
    for op in graph.ops:
        used.update(t for t in op.inputs if t >= 0)
        used.update(op.outputs)
    if len(used) == len(graph.tensors):
        return graph
    from dataclasses import replace

    order = sorted(used)
    new = {old: k for k, old in enumerate(order)}
    tensors = tuple(replace(graph.tensors[old], index=k) for k, old in enumerate(order))

    def m(ts: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(new[t] if t >= 0 else t for t in ts)

    ops = tuple(replace(op, inputs=m(op.inputs), outputs=m(op.outputs)) for op in graph.ops)
    return Graph(graph.name, tensors, ops, m(graph.inputs), m(graph.outputs))


MAX_TRANSPOSE_RANK = 5  # TFLM's TRANSPOSE (nnopt's lowering refuses more)


def collapse_transpose(shape: Sequence[int], perm: Sequence[int]
                       ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The smallest transpose moving the same bytes as ``perm`` on ``shape``: size-1
    axes dropped and axes that stay neighbours (in order) merged. Returns the input
    shape and the permutation of the reduced problem."""
    keep = [a for a in range(len(shape)) if shape[a] != 1]
    pos = {a: i for i, a in enumerate(keep)}
    groups: list[list[int]] = []  # input axes, in output order
    for a in perm:
        if shape[a] == 1:
            continue
        if groups and pos[a] == pos[groups[-1][-1]] + 1:
            groups[-1].append(a)
        else:
            groups.append([a])
    by_input = sorted(groups, key=lambda g: pos[g[0]])
    red_shape = tuple(math.prod(shape[a] for a in g) for g in by_input) or (1,)
    red_perm = tuple(by_input.index(g) for g in groups) or (0,)
    return red_shape, red_perm


def same_padding(size: int, k: int, s: int, d: int) -> tuple[int, int]:
    """TFLite's SAME padding (before, after) of one spatial axis."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def onnx_pads(node: Node, spatial: Sequence[int], kernel: Sequence[int],
              strides: Sequence[int], dil: Sequence[int]) -> list[tuple[int, int]]:
    """ONNX ``pads``/``auto_pad`` as (begin, end) per spatial axis."""
    n = len(spatial)
    auto = node.attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(n):
            b, e = same_padding(spatial[i], kernel[i], strides[i], dil[i])
            out.append((b, e) if auto == "SAME_UPPER" else (e, b))
        return out
    if auto == "VALID":
        return [(0, 0)] * n
    pads = list(node.attrs.get("pads", [0] * (2 * n)))
    return [(int(pads[i]), int(pads[i + n])) for i in range(n)]


def window_padding(pads: Sequence[tuple[int, int]], spatial: Sequence[int],
                   kernel: Sequence[int], strides: Sequence[int],
                   dil: Sequence[int]) -> str | None:
    """"VALID", "SAME" when the ONNX pads are exactly TFLite's, else None (explicit PAD)."""
    if all(b == 0 and e == 0 for b, e in pads):
        return "VALID"
    if all(tuple(p) == same_padding(spatial[i], kernel[i], strides[i], dil[i])
           for i, p in enumerate(pads)):
        return "SAME"
    return None


def prod(xs: Sequence[int]) -> int:
    return math.prod(xs)
