"""Data movement: Concat, Reshape family, Transpose, Cast, Pad, Split, Slice, Tile,
Resize, Gather."""

from __future__ import annotations

import numpy as np

from ....cdefs import DType
from ....ir import (
    ConcatOptions,
    GatherOptions,
    MirrorPadOptions,
)
from ..importer import Importer
from ..prepare import Node
from ..values import NHWC, Value, identity, permuted, relative
from .common import (
    concat_copies,
    norm_axis,
    perm_of,
    quant_of,
    slice_tensor,
)
from .registry import handler


@handler("Concat", quant=(-1,))
def concat(im: Importer, node: Node) -> None:
    names = [n for n in node.inputs if n]
    rank = len(im.shape(names[0]))
    axis = norm_axis(int(node.attrs.get("axis", 0)), rank)
    live = [n for n in names if not im.is_const(n)]
    perms = {perm_of(im, n) for n in live}
    perm = perms.pop() if len(perms) == 1 else identity(rank)
    ts = []
    for n in names:
        t = im.act(n, perm)
        if im.qout is not None and im.b.tensors[t].quant != im.qout:
            rq = im.b.tensor(f"{n}.requant", im.b.tensors[t].shape, DType.INT8, im.qout)
            im.b.op("QUANTIZE", [t], [rq])
            t = rq
        ts.append(t)
    y = im.out_tensor(node.outputs[0], permuted(im.shape(node.outputs[0]), perm))
    im.b.op("CONCATENATION", ts, [y], ConcatOptions(perm.index(axis)))
    im.bind(node.outputs[0], y, perm)


def _reads_as_matrix(im: Importer, name: str) -> bool:
    """Every reader of ``name`` (through Q/DQ pairs) is a Gemm/MatMul by a constant."""
    cons = im.p.consumers.get(name, [])
    if not cons or name in im.p.outputs:
        return False
    for k in cons:
        n = im.p.nodes[k]
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            if not _reads_as_matrix(im, n.outputs[0]):
                return False
        elif n.op_type == "Gemm":
            if n.inputs[0] != name or n.attrs.get("transA", 0) or not im.is_const(n.inputs[1]):
                return False
        elif n.op_type == "MatMul":
            if n.inputs[0] != name or not im.is_const(n.inputs[1]):
                return False
        else:
            return False
    return True


@handler("Reshape", "Flatten", "Squeeze", "Unsqueeze", quant=(0,))
def reshape(im: Importer, node: Node) -> None:
    xn, out = node.inputs[0], node.outputs[0]
    xs, ys = im.shape(xn), im.shape(out)
    v = im.value(xn)
    if len(xs) == 4 and v.colperm is None and v.perm == NHWC and len(ys) == 2 \
            and ys[0] == xs[0] and _reads_as_matrix(im, out):
        n, c, h, w = xs
        colperm = np.arange(c * h * w).reshape(c, h, w).transpose(1, 2, 0).reshape(-1)
        t = im._reshape(im.act(xn, NHWC), (n, h * w * c), out)
        if np.array_equal(colperm, np.arange(colperm.size)):
            im.bind(out, t, (0, 1))
        else:
            im.bind(out, t, (0, 1), colperm=colperm, flat_of=xn)
        return
    t = im.act(xn, identity(len(xs)))
    y = im._reshape(t, ys, out)
    if im.qout is not None and y == t:
        y = im._copy(t, out)
    im.bind(out, y, identity(len(ys)))


@handler("Transpose", "Identity", "Dropout")
def transpose(im: Importer, node: Node) -> None:
    """A relabelling of the axis order: no data moves here (a later reader that needs
    another order gets a TRANSPOSE)."""
    xn, out = node.inputs[0], node.outputs[0]
    rank = len(im.shape(xn))
    if node.op_type == "Transpose":
        q = [int(a) for a in node.attrs.get("perm", list(range(rank))[::-1])]
    else:
        q = list(range(rank))
    if im.is_const(xn):
        raise AssertionError("constant transposes are folded")
    v = im.value(xn)
    if v.colperm is not None:
        v = Value(im.act(xn, identity(rank)), identity(rank), "f")
    s = tuple(q.index(p) for p in v.perm)
    im.values[out] = Value(v.tensor, s, v.kind)


# ONNX TensorProto element types -> the IR type a value of it is held in (int64 as
# int32, float64 as float32: the model-boundary narrowing of Importer._graph_input)
_HELD = {1: DType.FLOAT32, 6: DType.INT32, 7: DType.INT32, 9: DType.BOOL, 11: DType.FLOAT32}


@handler("Cast")
def cast(im: Importer, node: Node) -> None:
    """A relabelling where the held types agree; else TFLite's CAST (float32, int32 and
    bool, as the values are held)."""
    xn, out = node.inputs[0], node.outputs[0]
    to = int(node.attrs.get("to", 1))
    if im.p.dtypes.get(xn) == np.float32 and to == 1:
        transpose(im, node)
        return
    if im.is_const(xn) or xn not in im.values or to not in _HELD or im.qout is not None:
        raise im.refuse(f"a cast to ONNX type {to}", "Cast between float32, float64, int32, "
                        "int64 and bool values computed at run time")
    v = im.value(xn)
    src = im.b.tensors[v.tensor].dtype
    if src == _HELD[to] or v.kind != "f":
        if src != _HELD[to]:
            raise im.refuse(f"a cast of a quantised value to ONNX type {to}",
                            "Cast of float32, int32 and bool values")
        transpose(im, node)
        return
    if src not in _HELD.values():
        raise im.refuse(f"a cast from {src.name.lower()}", "Cast between float32, float64, "
                        "int32, int64 and bool values")
    x = im.act(xn)
    y = im.out_tensor(out, im.b.tensors[x].shape, dtype=_HELD[to])
    im.b.op("CAST", [x], [y])
    im.bind(out, y, v.perm)


@handler("Pad", quant=(0,))
def pad(im: Importer, node: Node) -> None:
    mode = node.attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise im.refuse(f"mode {mode!r}", "Pad modes 'constant', 'reflect', 'edge', 'wrap'")
    xn = node.inputs[0]
    xs = im.shape(xn)
    rank = len(xs)
    pads = [int(p) for p in im.const(node.inputs[1]).reshape(-1)] if im.opt_input(node, 1) \
        else [int(p) for p in node.attrs.get("pads", [])]
    axes_in = im.opt_input(node, 3)
    axes = [norm_axis(int(a), rank) for a in im.const(axes_in).reshape(-1)] if axes_in \
        else list(range(rank))
    per = {a: (pads[i], pads[i + len(axes)]) for i, a in enumerate(axes)}
    if any(p < 0 for pr in per.values() for p in pr):
        raise im.refuse(f"negative pads {pads}", "non-negative pads")
    if mode == "reflect":
        for a, (b, e) in per.items():
            if max(b, e) >= xs[a]:
                raise im.refuse(f"reflect pads {b}, {e} of an axis of {xs[a]}",
                                "reflect pads smaller than the axis")
    perm = perm_of(im, xn)
    if mode in ("edge", "wrap"):
        cur = im.act(xn, perm)
        for i, p in enumerate(perm):
            b, e = per.get(p, (0, 0))
            if b or e:
                cur = _edge_pad(im, cur, i, b, e, mode, node.outputs[0])
        im.bind(node.outputs[0], cur, perm)
        return
    x = im.act(xn, perm)
    xt = im.b.tensors[x]
    paddings = np.array([per.get(p, (0, 0)) for p in perm], dtype=np.int32)
    ir = tuple(xt.shape[i] + int(paddings[i].sum()) for i in range(rank))
    y = im.out_tensor(node.outputs[0], ir, xt.quant if im.qout is not None else None)
    pt = im.b.const(f"{node.name}.paddings", paddings)
    value_in = im.opt_input(node, 2)
    value = float(im.const(value_in).reshape(-1)[0]) if value_in else 0.0
    if mode == "reflect":  # TFLite's own operator: one op, which TFLM runs as well
        im.b.op("MIRROR_PAD", [x, pt], [y], MirrorPadOptions("REFLECT"))
    elif value == 0.0:
        im.b.op("PAD", [x, pt], [y])
    else:
        if im.qout is not None:
            q = quant_of(im, x)
            vq = int(np.clip(np.round(value / q.scale[0]) + q.zero_point[0], -128, 127))
            vt = im.b.const(f"{node.name}.value", np.array([vq], np.int8), q)
        else:
            vt = im.b.const(f"{node.name}.value", np.array([value], np.float32))
        im.b.op("PADV2", [x, pt, vt], [y])
    im.bind(node.outputs[0], y, perm)


@handler("Split")
def split(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    xs = im.shape(xn)
    axis = norm_axis(int(node.attrs.get("axis", 0)), len(xs))
    outs = [o for o in node.outputs]
    sizes = [im.shape(o)[axis] for o in outs]
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    ax = perm.index(axis)
    shape = list(im.b.tensors[x].shape)
    start = 0
    for o, n in zip(outs, sizes, strict=True):
        begin = [0] * len(shape)
        size = list(shape)
        begin[ax], size[ax] = start, n
        y = slice_tensor(im, x, begin, size, o)
        if y == x:
            y = im._copy(x, o)
        if o:
            im.bind(o, y, perm)
        start += n


@handler("Slice")
def slice_(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    xs = im.shape(xn)
    rank = len(xs)

    def ints(k: int, attr: str) -> list[int] | None:
        n = im.opt_input(node, k)
        if n:
            return [int(v) for v in im.const(n).reshape(-1)]
        return [int(v) for v in node.attrs[attr]] if attr in node.attrs else None

    starts, ends = ints(1, "starts"), ints(2, "ends")
    axes = ints(3, "axes") or list(range(len(starts or [])))
    steps = ints(4, "steps") or [1] * len(axes)
    if starts is None or ends is None or any(s != 1 for s in steps):
        raise im.refuse(f"steps {steps}", "Slice with constant starts/ends and step 1")
    begin = [0] * rank
    size = list(xs)
    for a, s, e in zip(axes, starts, ends, strict=True):
        a = norm_axis(a, rank)
        n = xs[a]
        s = max(0, min(n, s + n if s < 0 else s))
        e = max(0, min(n, e + n if e < 0 else e))
        begin[a], size[a] = s, max(0, e - s)
    if min(size) < 1:
        raise im.refuse("an empty slice", "non-empty slices")
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    y = slice_tensor(im, x, [begin[p] for p in perm], [size[p] for p in perm], node.outputs[0])
    if y == x:
        y = im._copy(x, node.outputs[0])
    im.bind(node.outputs[0], y, perm)


@handler("Tile")
def tile(im: Importer, node: Node) -> None:
    xn = node.inputs[0]
    reps = [int(r) for r in im.const(node.inputs[1]).reshape(-1)]
    perm = perm_of(im, xn)
    cur = im.act(xn, perm)
    for i, p in enumerate(perm):
        if reps[p] > 1:
            cur = concat_copies(im, [cur] * reps[p], i, f"{node.outputs[0]}.tile{i}")
    if cur == im.act(xn, perm):
        cur = im._copy(cur, node.outputs[0])
    im.bind(node.outputs[0], cur, perm)


def _edge_pad(im: Importer, x: int, ax: int, before: int, after: int, mode: str,
              name: str) -> int:
    """Edge or wrap padding of one axis: slices of width 1 concatenated around x (wrap:
    the axis repeated periodically, as numpy's ``np.pad(mode="wrap")``, pads of any
    width)."""
    shape = list(im.b.tensors[x].shape)
    n = shape[ax]

    def col(i: int) -> int:
        begin = [0] * len(shape)
        size = list(shape)
        begin[ax], size[ax] = i, 1
        return slice_tensor(im, x, begin, size, f"{name}.col{i}")

    if mode == "wrap":
        left = [col((k - before) % n) for k in range(before)]
        right = [col(k % n) for k in range(after)]
        return concat_copies(im, [*left, x, *right], ax, f"{name}.ax{ax}")
    left = [col(0) for _ in range(before)]
    right = [col(n - 1) for _ in range(after)]
    return concat_copies(im, [*left, x, *right], ax, f"{name}.ax{ax}")


@handler("Resize", "Upsample", quant=(0,))
def resize(im: Importer, node: Node) -> None:
    """Nearest-neighbour upsampling by integer factors (PyTorch's nn.Upsample(mode=
    'nearest')): each pixel repeated, as concatenations of copies."""
    xn = node.inputs[0]
    xs, ys = im.shape(xn), im.shape(node.outputs[0])
    mode = node.attrs.get("mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    ctm = node.attrs.get("coordinate_transformation_mode", b"half_pixel")
    ctm = ctm.decode() if isinstance(ctm, bytes) else str(ctm)
    factors = [o // i if i and o % i == 0 else 0 for i, o in zip(xs, ys, strict=True)]
    if mode != "nearest" or ctm not in ("half_pixel", "asymmetric", "pytorch_half_pixel") \
            or len(xs) != 4 or factors[:2] != [1, 1] or 0 in factors:
        raise im.refuse(f"mode {mode!r}, coordinates {ctm!r}, {list(xs)} -> {list(ys)}",
                        "nearest upsampling of NCHW by integer factors")
    x = im.act(xn, NHWC)
    n, h, w, c = im.b.tensors[x].shape
    fh, fw = factors[2], factors[3]
    cur = x
    if fw > 1:
        v = im._reshape(cur, (n * h, w, 1, c), f"{node.name}.vw")
        cur = im._reshape(concat_copies(im, [v] * fw, 2, f"{node.name}.rw"),
                          (n, h, w * fw, c), f"{node.name}.w")
    if fh > 1:
        v = im._reshape(cur, (n, h, 1, w * fw * c), f"{node.name}.vh")
        cur = im._reshape(concat_copies(im, [v] * fh, 2, f"{node.name}.rh"),
                          (n, h * fh, w * fw, c), f"{node.name}.h")
    if cur == x:
        cur = im._copy(x, node.outputs[0])
    im.bind(node.outputs[0], cur, NHWC)


@handler("Gather")
def gather(im: Importer, node: Node) -> None:
    """Gather with constant indices: slices of the data (concatenated for an index
    vector; a scalar index drops the axis); with indices computed at run time (an int64
    model input, held as int32): TFLite's GATHER."""
    xn, idn = node.inputs
    if not im.is_const(idn):
        _gather_at_run_time(im, node)
        return
    xs = im.shape(xn)
    rank = len(xs)
    axis = norm_axis(int(node.attrs.get("axis", 0)), rank)
    idx = im.const(idn).astype(np.int64)
    if idx.ndim > 1:
        raise im.refuse(f"indices of rank {idx.ndim}", "scalar or 1-D indices")
    flat = [int(i) + xs[axis] if i < 0 else int(i) for i in idx.reshape(-1)]
    if any(not 0 <= i < xs[axis] for i in flat):
        raise im.refuse(f"indices {flat} out of range for axis {axis} of {xs[axis]}",
                        "indices within the axis")
    perm = perm_of(im, xn)
    x = im.act(xn, perm)
    ax = perm.index(axis)
    shape = list(im.b.tensors[x].shape)
    parts = []
    for k, i in enumerate(flat):
        begin = [0] * rank
        size = list(shape)
        begin[ax], size[ax] = i, 1
        parts.append(slice_tensor(im, x, begin, size, f"{node.outputs[0]}.g{k}"))
    cur = concat_copies(im, parts, ax, f"{node.outputs[0]}.cat")
    if cur == x:
        cur = im._copy(x, node.outputs[0])
    if idx.ndim == 0:  # the axis goes: the output is in ONNX order of the rest
        t = im._transpose(cur, relative(perm, identity(rank)), f"{node.outputs[0]}.onnx")
        out_shape = im.shape(node.outputs[0])
        y = im._reshape(t, out_shape, node.outputs[0])
        if y == t:
            y = im._copy(t, node.outputs[0])
        im.bind(node.outputs[0], y, identity(len(out_shape)))
        return
    im.bind(node.outputs[0], cur, perm)


def _gather_at_run_time(im: Importer, node: Node) -> None:
    """GATHER of the data (float32, in ONNX order) at int32 indices computed at run time.
    An index outside [0, axis size) fails the invocation (the kernel's NNRT_ERR_ARG):
    ONNX's negative indices are not wrapped."""
    xn, idn = node.inputs
    xs, cs = im.shape(xn), im.shape(idn)
    axis = norm_axis(int(node.attrs.get("axis", 0)), len(xs))
    c = im.act(idn, identity(len(cs)))
    if im.b.tensors[c].dtype != DType.INT32:
        raise im.refuse(f"indices {idn!r} are {im.b.tensors[c].dtype.name.lower()}",
                        "int32 or int64 indices")
    if xs[axis] < 1 or not cs:
        raise im.refuse(f"indices of shape {list(cs)} into axis {axis} of {list(xs)}",
                        "indices of rank >= 1 into a non-empty axis")
    x = im.act(xn, identity(len(xs)))
    ys = im.shape(node.outputs[0])
    y = im.out_tensor(node.outputs[0], ys, dtype=im.b.tensors[x].dtype)
    im.b.op("GATHER", [x, c], [y], GatherOptions(axis, 0))
    im.bind(node.outputs[0], y, identity(len(ys)))
