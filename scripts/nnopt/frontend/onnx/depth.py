"""3-D Conv, MaxPool and AveragePool (rank-5 NCDHW) as 2-D ops over depth slices.

nnopt's kernels (and TFLM's) are 2-D. A 3-D window op is exactly a combination of 2-D
ones over the depth axis: output depth ``od`` reads the input depth slices
``id = od * stride - pad_begin + kd * dilation`` for each kernel depth ``kd`` in range
(a slice in the depth padding contributes nothing: zeros for Conv, -inf for MaxPool, and
for AveragePool only with ``count_include_pad`` or no depth padding). So

- Conv: the sum over ``kd`` of the 2-D convolution of slice ``id`` with the weights'
  depth ``kd`` (the bias on the first term);
- MaxPool: the Max over ``kd`` of the 2-D max-pool of slice ``id``;
- AveragePool: the Sum over ``kd`` of the 2-D average pool of slice ``id``, times
  ``1 / kernel depth``;

and the output depths are concatenated. The rewrite is done on the prepared ONNX nodes
(Slice, Squeeze, 2-D Conv/MaxPool/AveragePool, Add/Max/Sum/Mul, Unsqueeze, Concat), which
the importer then reads as any other; float32 sums in another order than onnxruntime's,
within the float tolerance. Left as they are (and refused by the importer, naming the
rank): auto_pad, ceil_mode, a MaxPool's indices output, non-float32 or quantised
inputs, non-constant weights, more than :data:`MAX_SLICE_OPS` 2-D ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .prepare import Node, Prepared

#: a 3-D op needing more 2-D ops than this stays refused (the graph would grow too much)
MAX_SLICE_OPS = 512

_OPS = ("Conv", "MaxPool", "AveragePool")


def _ints(attrs: dict[str, Any], key: str, default: list[int]) -> list[int]:
    return [int(v) for v in attrs.get(key, default)]


def _auto_pad(attrs: dict[str, Any]) -> str:
    a = attrs.get("auto_pad", b"NOTSET")
    return a.decode() if isinstance(a, bytes) else str(a)


class _Rewriter:
    def __init__(self, prep: Prepared, node: Node) -> None:
        self.p = prep
        self.node = node
        self.nodes: list[Node] = []
        self.k = 0
        self.slices: dict[int, str] = {}

    def name(self, what: str) -> str:
        self.k += 1
        return f"{self.node.name}.depth{self.k}.{what}"

    def const(self, value: np.ndarray) -> str:
        n = self.name("const")
        self.p.consts[n] = value
        self.p.shapes[n] = tuple(value.shape)
        self.p.dtypes[n] = value.dtype
        return n

    def emit(self, op: str, inputs: list[str], shape: tuple[int, ...], **attrs: Any) -> str:
        out = self.name(op.lower())
        self.nodes.append(Node(op, out, inputs, [out], attrs))
        self.p.shapes[out] = shape
        self.p.dtypes[out] = np.dtype(np.float32)
        return out

    def slice(self, x: str, d: int) -> str:
        """Input depth slice ``d`` as [N, C, H, W]."""
        if d not in self.slices:
            n, c, _, h, w = self.p.shapes[x]
            one = np.array([2], np.int64)
            s = self.emit("Slice", [x, self.const(np.array([d], np.int64)),
                                    self.const(np.array([d + 1], np.int64)),
                                    self.const(one)], (n, c, 1, h, w))
            self.slices[d] = self.emit("Squeeze", [s, self.const(one)], (n, c, h, w))
        return self.slices[d]


def _out_size(size: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (size + p0 + p1 - d * (k - 1) - 1) // s + 1


def _rewrite(prep: Prepared, node: Node) -> list[Node] | None:
    """The 2-D nodes for 3-D ``node``, or None to leave it (module docstring)."""
    x = node.inputs[0] if node.inputs else ""
    xs = prep.shapes.get(x)
    if xs is None or len(xs) != 5 or prep.dtypes.get(x) != np.float32 \
            or _auto_pad(node.attrs) != "NOTSET" or int(node.attrs.get("ceil_mode", 0)) \
            or len([o for o in node.outputs if o]) != 1:
        return None
    if node.op_type == "Conv":
        if len(node.inputs) < 2 or node.inputs[1] not in prep.consts:
            return None
        w = prep.consts[node.inputs[1]].astype(np.float32)
        kernel = list(w.shape[2:])
        bias = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
        if bias and bias not in prep.consts:
            return None
    else:
        kernel = _ints(node.attrs, "kernel_shape", [])
    if len(kernel) != 3:
        return None
    strides = _ints(node.attrs, "strides", [1, 1, 1])
    dil = _ints(node.attrs, "dilations", [1, 1, 1])
    pads = _ints(node.attrs, "pads", [0] * 6)
    if len(strides) != 3 or len(dil) != 3 or len(pads) != 6 or min(strides + dil) < 1 \
            or min(pads) < 0:
        return None
    n, c, depth, h, wd = xs
    kd_, kh, kw = kernel
    d_out = _out_size(depth, kd_, strides[0], dil[0], pads[0], pads[3])
    h_out = _out_size(h, kh, strides[1], dil[1], pads[1], pads[4])
    w_out = _out_size(wd, kw, strides[2], dil[2], pads[2], pads[5])
    if min(d_out, h_out, w_out) < 1 or d_out * kd_ > MAX_SLICE_OPS:
        return None
    if node.op_type == "AveragePool" and (pads[0] or pads[3]) \
            and not int(node.attrs.get("count_include_pad", 0)):
        return None  # the divisor would change with the depth
    taps = [[(kd, od * strides[0] - pads[0] + kd * dil[0]) for kd in range(kd_)]
            for od in range(d_out)]
    taps = [[(kd, i) for kd, i in t if 0 <= i < depth] for t in taps]
    if any(not t for t in taps):
        return None
    r = _Rewriter(prep, node)
    oc = int(w.shape[0]) if node.op_type == "Conv" else c
    plane = (n, oc, h_out, w_out)
    attrs2: dict[str, Any] = {"strides": strides[1:], "pads": [pads[1], pads[2], pads[4],
                                                               pads[5]]}
    pooled: dict[int, str] = {}
    depths: list[str] = []
    for t in taps:
        terms: list[str] = []
        for j, (kd, i) in enumerate(t):
            xi = r.slice(x, i)
            if node.op_type == "Conv":
                ins = [xi, r.const(np.ascontiguousarray(w[:, :, kd]))]
                if bias and j == 0:
                    ins.append(bias)
                terms.append(r.emit("Conv", ins, plane, kernel_shape=[kh, kw],
                                    dilations=dil[1:],
                                    group=int(node.attrs.get("group", 1)), **attrs2))
            else:
                if i not in pooled:
                    extra = ({"dilations": dil[1:]} if node.op_type == "MaxPool" else
                             {"count_include_pad": int(node.attrs.get("count_include_pad",
                                                                      0))})
                    pooled[i] = r.emit(node.op_type, [xi], plane, kernel_shape=[kh, kw],
                                       **attrs2, **extra)
                terms.append(pooled[i])
        if node.op_type == "Conv":
            acc = terms[0]
            for term in terms[1:]:
                acc = r.emit("Add", [acc, term], plane)
        elif node.op_type == "MaxPool":
            acc = terms[0] if len(terms) == 1 else r.emit("Max", terms, plane)
        else:
            acc = terms[0] if len(terms) == 1 else r.emit("Sum", terms, plane)
            if kd_ != 1:
                acc = r.emit("Mul", [acc, r.const(np.array(1.0 / kd_, np.float32))], plane)
        depths.append(r.emit("Unsqueeze", [acc, r.const(np.array([2], np.int64))],
                             (n, oc, 1, h_out, w_out)))
    out = node.outputs[0]
    last = r.nodes[-1]
    if len(depths) == 1:
        last.outputs = [out]
    else:
        r.nodes.append(Node("Concat", r.name("concat"), depths, [out], {"axis": 2}))
    prep.shapes[out] = (n, oc, d_out, h_out, w_out)
    prep.dtypes[out] = np.dtype(np.float32)
    return r.nodes


def split_depth(prep: Prepared) -> None:
    """Rewrite every 3-D Conv/MaxPool/AveragePool of ``prep`` that can be (module
    docstring) into 2-D ops, in place."""
    nodes: list[Node] = []
    for node in prep.nodes:
        new = _rewrite(prep, node) if node.op_type in _OPS \
            and node.domain in ("", "ai.onnx") else None
        nodes.extend(new if new is not None else [node])
    prep.nodes = nodes
