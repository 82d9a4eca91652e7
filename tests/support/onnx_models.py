"""Small ONNX models built with ``onnx.helper`` (no torch): the shapes and op
combinations ``torch.onnx.export`` writes for CNNs and MLPs, with seeded random weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class OnnxBuilder:
    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.k = 0

    def w(self, *shape: int, scale: float = 0.3) -> str:
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32))

    def const(self, arr: np.ndarray) -> str:
        self.k += 1
        name = f"c{self.k}"
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: object) -> str:
        self.k += 1
        outs = [f"{op.lower()}{self.k}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=f"{op}_{self.k}",
                                           **attrs))
        return outs[0]

    def model(self, inputs: dict[str, Sequence[int | str]], outputs: Sequence[str],
              opset: int = 17) -> bytes:
        g = helper.make_graph(
            self.nodes, "g",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
             for n, s in inputs.items()],
            [helper.make_empty_tensor_value_info(o) for o in outputs], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        inferred = onnx.shape_inference.infer_shapes(m)
        known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
        for o in m.graph.output:
            o.CopyFrom(known[o.name])
        return m.SerializeToString()


def cnn_model(seed: int = 0) -> bytes:
    """Conv+BN+ReLU, depthwise SAME_UPPER, grouped dilated conv, max/avg pool, residual
    Add with broadcast Mul, Concat, GlobalAveragePool, Flatten, Gemm, Softmax."""
    b = OnnxBuilder(seed)
    x = "input"
    c1 = b.node("Conv", [x, b.w(8, 3, 3, 3), b.w(8)], pads=[1, 1, 1, 1], strides=[2, 2])
    bn = b.node("BatchNormalization", [c1, b.const(np.linspace(0.5, 1.5, 8, dtype=np.float32)),
                                       b.w(8), b.w(8), b.const(np.full(8, 0.7, np.float32))])
    r1 = b.node("Relu", [bn])
    dw = b.node("Conv", [r1, b.w(8, 1, 3, 3), b.w(8)], group=8, auto_pad="SAME_UPPER")
    c6 = b.node("Clip", [dw, b.const(np.array(0, np.float32)), b.const(np.array(6, np.float32))])
    g2 = b.node("Conv", [c6, b.w(8, 4, 3, 3)], group=2, pads=[2, 2, 2, 2], dilations=[2, 2])
    add = b.node("Add", [g2, b.node("Mul", [r1, b.w(8, 1, 1)])])
    mp = b.node("MaxPool", [add], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    ap = b.node("AveragePool", [add], kernel_shape=[2, 2], strides=[2, 2])
    cat = b.node("Concat", [mp, ap], axis=1)
    lk = b.node("LeakyRelu", [cat], alpha=0.1)
    gp = b.node("GlobalAveragePool", [lk])
    fl = b.node("Flatten", [gp])
    fc = b.node("Gemm", [fl, b.w(10, 16), b.w(10)], transB=1)
    sm = b.node("Softmax", [fc], axis=1)
    return b.model({x: (1, 3, 16, 16)}, [sm])


def lenet_like_model(seed: int = 1) -> bytes:
    """Conv/ReLU/MaxPool twice, then Reshape to a matrix (the channel-major flatten
    nnopt folds into the first Gemm's weights) and Gemm/Tanh/Sigmoid/HardSwish/MatMul."""
    b = OnnxBuilder(seed)
    x = "input"
    c1 = b.node("Relu", [b.node("Conv", [x, b.w(4, 1, 5, 5), b.w(4)])])
    p1 = b.node("MaxPool", [c1], kernel_shape=[2, 2], strides=[2, 2])
    c2 = b.node("Relu", [b.node("Conv", [p1, b.w(6, 4, 3, 3), b.w(6)])])
    p2 = b.node("MaxPool", [c2], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    fl = b.node("Reshape", [p2, b.const(np.array([1, -1], np.int64))])
    f1 = b.node("Tanh", [b.node("Gemm", [fl, b.w(6 * 3 * 3, 20), b.w(20)])])
    f2 = b.node("HardSwish", [b.node("Gemm", [f1, b.w(12, 20), b.w(12)], transB=1, alpha=0.5)])
    f3 = b.node("MatMul", [f2, b.w(12, 5)])
    out = b.node("Sigmoid", [b.node("Sub", [f3, b.w(5)])])
    return b.model({x: (1, 1, 18, 18)}, [out])


def sequence_model(seed: int = 2) -> bytes:
    """1-D convolution and pooling (NCL), Pad, Transpose, ReduceMean, Div, PRelu, and two
    outputs, one of them NCL."""
    b = OnnxBuilder(seed)
    x = "input"
    c = b.node("Conv", [x, b.w(6, 2, 3), b.w(6)], pads=[1, 1])
    pr = b.node("PRelu", [c, b.const(np.full((6, 1), 0.25, np.float32))])
    pd = b.node("Pad", [pr, b.const(np.array([0, 0, 2, 0, 0, 1], np.int64))])
    mp = b.node("MaxPool", [pd], kernel_shape=[2], strides=[2])
    t = b.node("Transpose", [mp], perm=[0, 2, 1])
    m = b.node("ReduceMean", [t, b.const(np.array([1], np.int64))], keepdims=0)
    d = b.node("Div", [m, b.const(np.array([2.0], np.float32))])
    return b.model({x: (1, 2, 20)}, [d, mp], opset=18)


def dynamic_model() -> bytes:
    """A conv whose input has a symbolic batch and size (needs --input-shape)."""
    b = OnnxBuilder(3)
    y = b.node("Relu", [b.node("Conv", ["input", b.w(4, 3, 3, 3), b.w(4)])])
    return b.model({"input": ("batch", 3, "h", "w")}, [y])


def unsupported_model() -> bytes:
    b = OnnxBuilder(4)
    y = b.node("Erf", [b.node("Relu", ["input"])])
    return b.model({"input": (1, 4)}, [y])


def opset_model(opset: int) -> bytes:
    b = OnnxBuilder(5)
    y = b.node("Relu", ["input"])
    return b.model({"input": (1, 4)}, [y], opset=opset)


def decoder_model(seed: int = 6) -> bytes:
    """A decoder: ConvTranspose with stride 2, padding and output padding, nearest
    Resize by 2, Concat of both, Sigmoid (what UNet-like PyTorch models export)."""
    b = OnnxBuilder(seed)
    x = "input"
    c = b.node("Relu", [b.node("Conv", [x, b.w(4, 2, 3, 3), b.w(4)], pads=[1, 1, 1, 1])])
    up = b.node("ConvTranspose", [c, b.w(4, 3, 3, 3), b.w(3)], strides=[2, 2],
                pads=[1, 1, 1, 1], output_padding=[1, 1])
    rs = b.node("Resize", [c, "", b.const(np.array([1, 1, 2, 2], np.float32))],
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor")
    cat = b.node("Concat", [up, rs], axis=1)
    out = b.node("Sigmoid", [b.node("Conv", [cat, b.w(2, 7, 1, 1), b.w(2)])])
    return b.model({x: (1, 2, 6, 5)}, [out], opset=13)


def pt2e_qdq_model(seed: int = 7) -> bytes:
    """An int8 QDQ graph as PyTorch's PT2E export writes it: float weights quantised in
    the graph (QuantizeLinear per channel -> DequantizeLinear), Conv -> Relu ->
    QuantizeLinear (the ReLU between the op and its quantisation), Gemm -> Q."""
    b = OnnxBuilder(seed)

    def qdq(x: str, scale: float, zp: int) -> str:
        s = b.const(np.array(scale, np.float32))
        z = b.const(np.array(zp, np.int8))
        return b.node("DequantizeLinear", [b.node("QuantizeLinear", [x, s, z]), s, z])

    def wqdq(w: np.ndarray, axis: int) -> str:
        red = tuple(i for i in range(w.ndim) if i != axis)
        scale = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        s = b.const(scale)
        z = b.const(np.zeros(scale.shape, np.int8))
        q = b.node("QuantizeLinear", [b.const(w), s, z], axis=axis)
        return b.node("DequantizeLinear", [q, s, z], axis=axis)

    x = qdq("input", 0.03, 0)
    w1 = (b.rng.standard_normal((6, 3, 3, 3)) * 0.3).astype(np.float32)
    c1 = b.node("Relu", [b.node("Conv", [x, wqdq(w1, 0), b.w(6)], pads=[1, 1, 1, 1])])
    a1 = qdq(c1, 0.02, -128)
    w2 = (b.rng.standard_normal((6, 1, 3, 3)) * 0.3).astype(np.float32)
    c2 = b.node("Clip", [b.node("Conv", [a1, wqdq(w2, 0), b.w(6)], group=6, strides=[2, 2]),
                         b.const(np.array(0, np.float32)), b.const(np.array(6, np.float32))])
    a2 = qdq(c2, 0.025, -128)
    fl = qdq(b.node("Flatten", [a2]), 0.025, -128)
    w3 = (b.rng.standard_normal((5, 6 * 4 * 4)) * 0.2).astype(np.float32)
    y = qdq(b.node("Gemm", [fl, wqdq(w3, 0), b.w(5)], transB=1), 0.05, 3)
    return b.model({"input": (1, 3, 10, 10)}, [y], opset=17)


def gather_model(seed: int = 8) -> bytes:
    """Gather with a scalar index on an NCHW activation (channel picked) and an index
    vector on a matrix, as indexing in PyTorch exports."""
    b = OnnxBuilder(seed)
    c = b.node("Conv", ["input", b.w(4, 2, 3, 3), b.w(4)])
    g1 = b.node("Gather", [c, b.const(np.array(2, np.int64))], axis=1)
    fl = b.node("Reshape", [c, b.const(np.array([1, -1], np.int64))])
    g2 = b.node("Gather", [fl, b.const(np.array([5, 0, -1], np.int64))], axis=1)
    return b.model({"input": (1, 2, 5, 5)}, [g1, g2])


def issue14_ops_model(seed: int = 14) -> bytes:
    """The ONNX ops that map onto issue 14's builtins: ReduceMax/ReduceMin (several axes,
    keepdims or not), PRelu (per-channel slope), Elu, LogSoftmax, Floor, Ceil, Round,
    Sin, Cos, ReduceSum."""
    b = OnnxBuilder(seed)
    c = b.node("Conv", ["input", b.w(4, 3, 3, 3), b.w(4)])
    p = b.node("PRelu", [c, b.const((b.rng.standard_normal((4, 1, 1)) * 0.3).astype(
        np.float32))])
    e = b.node("Elu", [p])
    mx = b.node("ReduceMax", [e], axes=[2, 3], keepdims=1)
    mn = b.node("ReduceMin", [e], axes=[1], keepdims=0)
    sm = b.node("ReduceSum", [e, b.const(np.array([1, 3], np.int64))], keepdims=0)
    ls = b.node("LogSoftmax", [b.node("Flatten", [e])], axis=1)
    # on the graph input times 3 (exact in both): no conv rounding next to a step
    scaled = b.node("Mul", ["input", b.const(np.array(3.0, np.float32))])
    fl, ce, ro = (b.node(op, [scaled]) for op in ("Floor", "Ceil", "Round"))
    si, co = b.node("Sin", [c]), b.node("Cos", [c])
    return b.model({"input": (1, 3, 7, 6)}, [mx, mn, sm, ls, fl, ce, ro, si, co], opset=13)


def pad_modes_model(seed: int = 19) -> bytes:
    """Pad in its non-constant modes on an NCHW activation: 'wrap' (pads wider than the
    axis too), 'reflect' and 'edge' (opset 19, where 'wrap' was added)."""
    b = OnnxBuilder(seed)
    c = b.node("Conv", ["input", b.w(3, 2, 3, 3), b.w(3)])  # (1, 3, 3, 4)
    wr = b.node("Pad", [c, b.const(np.array([0, 0, 4, 1, 0, 0, 2, 5], np.int64))],
                mode="wrap")
    rf = b.node("Pad", [c, b.const(np.array([0, 0, 2, 1, 0, 0, 1, 3], np.int64))],
                mode="reflect")
    ed = b.node("Pad", [c, b.const(np.array([0, 1, 1, 0, 0, 0, 0, 2], np.int64))],
                mode="edge")
    return b.model({"input": (1, 2, 5, 6)}, [wr, rf, ed], opset=19)


def wide_concat_model(seed: int = 23) -> bytes:
    """A Concat of 23 inputs and an 'edge' Pad of 13 columns (14 pieces): more than
    TFLM's CONCATENATION takes (10), so nnopt builds them as trees of concatenations;
    and a 'reflect' Pad (TFLite's MIRROR_PAD)."""
    b = OnnxBuilder(seed)
    parts = [b.node("Mul", ["input", b.const(np.array(0.5 + k, np.float32))])
             for k in range(23)]
    cat = b.node("Concat", parts, axis=1)  # (1, 23 * 4, 6)
    edge = b.node("Pad", ["input", b.const(np.array([0, 0, 0, 0, 0, 13], np.int64))],
                  mode="edge")
    refl = b.node("Pad", ["input", b.const(np.array([0, 1, 2, 0, 2, 5], np.int64))],
                  mode="reflect")
    return b.model({"input": (1, 4, 6)}, [cat, edge, refl])


def torch_pad_chain_model(seed: int = 44, pad: int = 8, length: int = 64,
                          shape_of_pad: bool = True) -> bytes:
    """``F.pad(x, (pad, pad), mode='reflect')`` as ``torch.onnx.export`` writes it (Silero
    VAD's STFT front): the pads come from ``Constant -> ConstantOfShape -> Concat ->
    Reshape -> Slice (step -1, end INT64_MIN+1) -> Transpose -> Reshape -> Cast``, which
    ONNX's shape inference does not see through; then an Unsqueeze and a strided Conv
    read the padded signal."""
    b = OnnxBuilder(seed)

    def constant(arr: np.ndarray) -> str:
        b.k += 1
        out = f"const{b.k}"
        b.nodes.append(helper.make_node("Constant", [], [out], name=f"Constant_{b.k}",
                                        value=numpy_helper.from_array(arr)))
        return out

    p = constant(np.array([pad, pad], np.int64))
    zeros = b.node("ConstantOfShape", [constant(np.array([4], np.int64))],
                   value=numpy_helper.from_array(np.zeros(1, np.int64)))
    cat = b.node("Concat", [p, zeros], axis=0)
    rows = b.node("Reshape", [cat, constant(np.array([-1, 2], np.int64))])
    rev = b.node("Slice", [rows, constant(np.array([-1], np.int64)),
                           constant(np.array([-(2**63) + 1], np.int64)),
                           constant(np.array([0], np.int64)),
                           constant(np.array([-1], np.int64))])
    tr = b.node("Transpose", [rev], perm=[1, 0])
    flat = b.node("Reshape", [tr, constant(np.array([-1], np.int64))])
    pads = b.node("Cast", [flat], to=TensorProto.INT64)
    x = b.node("Unsqueeze", ["input", constant(np.array([1], np.int64))])  # (1, 1, L)
    padded = b.node("Pad", [x, pads], mode="reflect")  # (1, 1, L + 2 pad)
    u = b.node("Unsqueeze", [padded, constant(np.array([2], np.int64))])  # (1, 1, 1, L')
    conv = b.node("Conv", [u, b.w(6, 1, 1, 16), b.w(6)], strides=[1, 8])
    if not shape_of_pad:
        return b.model({"input": (1, length)}, [conv], opset=17)
    # the Reshape's shape is read off the padded value (Shape -> Slice -> Concat), which
    # folds once the re-inference gave the Pad its shape
    n = b.node("Slice", [b.node("Shape", [padded]), constant(np.array([2], np.int64)),
                         constant(np.array([3], np.int64))])
    flat = b.node("Reshape", [padded, b.node("Concat", [constant(np.array([1], np.int64)), n],
                                             axis=0)])
    return b.model({"input": (1, length)}, [conv, b.node("Tanh", [flat])], opset=17)


def quantize_static_default(model: bytes, seed: int = 0, samples: int = 8,
                            weights_uint8: bool = False, per_channel: bool = False) -> bytes:
    """``model`` quantised by ``onnxruntime.quantization.quantize_static`` as its older
    releases do by default (and most published QDQ models are): QDQ, **uint8
    activations** (``QuantType.QUInt8``; onnxruntime 1.32's default is QInt8, so it is
    asked for), int8 weights (uint8 with ``weights_uint8``), min/max calibration over
    ``samples`` seeded normal inputs."""
    import logging
    import tempfile
    from pathlib import Path

    from onnxruntime import quantization as q

    m = onnx.load_model_from_string(model)
    shapes = {i.name: [int(d.dim_value) for d in i.type.tensor_type.shape.dim]
              for i in m.graph.input}
    rng = np.random.default_rng(seed)
    data = [{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
            for _ in range(samples)]

    class Reader(q.CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.it = iter(data)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with tempfile.TemporaryDirectory() as d:
            src, dst = Path(d) / "f.onnx", Path(d) / "q.onnx"
            src.write_bytes(model)
            q.quantize_static(str(src), str(dst), Reader(), per_channel=per_channel,
                              activation_type=q.QuantType.QUInt8,
                              weight_type=q.QuantType.QUInt8 if weights_uint8
                              else q.QuantType.QInt8)
            return dst.read_bytes()
    finally:
        root.setLevel(level)


def uint8_boundary(qdq: bytes) -> bytes:
    """A QDQ model whose input QuantizeLinear and output DequantizeLinears are cut off:
    it takes its input and gives those outputs as uint8 (as a camera or a codec hands
    them)."""
    m = onnx.load_model_from_string(qdq)
    g = m.graph
    (inp,) = g.input
    q = next(n for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] == inp.name)
    for n in g.node:
        n.input[:] = [inp.name if i == q.output[0] else i for i in n.input]
    inp.type.tensor_type.elem_type = TensorProto.UINT8
    cut = [q]
    for out in g.output:
        dq = next((n for n in g.node if n.op_type == "DequantizeLinear"
                   and n.output[0] == out.name), None)
        if dq is None:  # an output the quantiser left in float32
            continue
        if not any(dq.output[0] in n.input for n in g.node):
            cut.append(dq)
        out.name = dq.input[0]
        out.type.tensor_type.elem_type = TensorProto.UINT8
    keep = [n for n in g.node if all(n is not c for c in cut)]
    del g.node[:]
    g.node.extend(keep)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def depth_model(seed: int = 45, ceil_mode: int = 0) -> bytes:
    """3-D ops (NCDHW) as a video or volumetric model writes them: a padded, strided,
    dilated Conv3d, a padded MaxPool3d and an AveragePool3d, then a 6-D Transpose of a
    pixel-shuffle (size-1 axes that collapse to 4-D)."""
    b = OnnxBuilder(seed)
    c = b.node("Conv", ["input", b.w(4, 2, 3, 3, 3), b.w(4)], pads=[1, 1, 0, 1, 0, 1],
               strides=[2, 1, 1], dilations=[1, 1, 2])  # (1, 4, 3, 5, 3)
    r = b.node("Relu", [c])
    mp = b.node("MaxPool", [r], kernel_shape=[2, 2, 2], strides=[1, 2, 2],
                pads=[1, 0, 0, 0, 0, 0], ceil_mode=ceil_mode)  # (1, 4, 3, 2, 1)
    ap = b.node("AveragePool", [mp], kernel_shape=[3, 1, 1])  # (1, 4, 1, 2, 1)
    sq = b.node("Reshape", [ap, b.const(np.array([1, 1, 2, 2, 2, 1], np.int64))])
    t = b.node("Transpose", [sq], perm=[0, 1, 4, 2, 5, 3])  # (1, 1, 2, 2, 1, 2)
    return b.model({"input": (1, 2, 5, 6, 6)}, [t, mp], opset=17)
