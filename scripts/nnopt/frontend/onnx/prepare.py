"""An ONNX file made ready for import: parsed, checked, upgraded, shaped and folded.

Uses only the ``onnx`` package: ``onnx.version_converter`` upgrades opsets 6..21 to the
one the importer reads (:data:`TARGET_OPSET`), ``onnx.shape_inference`` gives every
value a shape, ``onnx.reference`` evaluates the nodes whose inputs are all constant
(constant folding; :mod:`.control` first folds to a fixed point with pinned input values
and resolves If/Loop). Identity and Dropout are removed and BatchNormalization is folded
into the convolution or Gemm before it. The result, :class:`Prepared`, is plain data
(nodes in topological order, constants as numpy arrays, static shapes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import ModelError, NnoptError, UnsupportedError
from . import control

MIN_OPSET, MAX_OPSET = 6, 21
#: rounds of shape inference over the folded graph (each can reveal shapes that a Shape,
#: a Reshape or a Pad needed to fold further); a real model settles in one or two
MAX_INFER_ROUNDS = 8
TARGET_OPSET = 21

# Never folded into constants: the QDQ importer reads them as quantisation parameters.
_KEEP_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})
_DROP_OPS = frozenset({"Identity", "Dropout"})
_RANDOM_OPS = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike",
                         "RandomUniformLike", "Multinomial", "Bernoulli"})


@dataclass
class Node:
    op_type: str
    name: str
    inputs: list[str]  # "" marks an absent optional input
    outputs: list[str]
    attrs: dict[str, Any]
    domain: str = ""


@dataclass
class Prepared:
    name: str
    nodes: list[Node]
    consts: dict[str, np.ndarray]
    shapes: dict[str, tuple[int, ...]]
    dtypes: dict[str, np.dtype[Any]]
    inputs: list[str]
    outputs: list[str]
    opset: int  # the model's opset as read (before the upgrade)
    consumers: dict[str, list[int]] = field(default_factory=dict)

    def index_consumers(self) -> None:
        self.consumers = {}
        for k, n in enumerate(self.nodes):
            for name in dict.fromkeys(n.inputs):
                if name:
                    self.consumers.setdefault(name, []).append(k)


def looks_like_onnx(data: bytes) -> bool:
    """True when the bytes start like an ONNX file (field 1, ir_version, a small varint):
    such a file that does not parse is reported as a damaged ONNX model."""
    return len(data) >= 2 and data[0] == 0x08 and 1 <= data[1] <= 32


def is_onnx(data: bytes) -> bool:
    """True when the bytes parse as an ONNX ModelProto with a graph."""
    if not looks_like_onnx(data):
        return False
    try:
        import onnx
        m = onnx.ModelProto()
        m.ParseFromString(data)
    except Exception:
        return False
    return bool(m.HasField("graph"))


def parse_input_shapes(specs: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """``NAME=1,3,32,32`` strings -> {name: shape}."""
    out: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, sep, dims = spec.rpartition("=")
        try:
            shape = tuple(int(d) for d in dims.split(","))
        except ValueError:
            shape = ()
        if not sep or not name or not shape or min(shape) < 1:
            raise NnoptError(f"--input-shape {spec!r} is not NAME=D1,D2,...",
                             hint="e.g. --input-shape input=1,3,32,32 (positive sizes)")
        out[name] = shape
    return out


def prepare(data: bytes, name: str, source: str,
            input_shapes: Mapping[str, tuple[int, ...]] | None = None,
            input_values: Mapping[str, tuple[float, ...]] | None = None) -> Prepared:
    """``input_shapes`` fixes dynamic input dimensions, ``input_values`` pins inputs to a
    value (they become constants and leave the model's inputs: If/Loop on them resolve)."""
    import onnx

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as err:
        raise ModelError(f"{source} is corrupt or truncated (protobuf: {err})",
                         hint="re-export the model (torch.onnx.export); check that the file "
                         "was copied completely") from err
    if not model.HasField("graph"):
        raise ModelError(f"{source} is not an ONNX model (no graph)",
                         hint="pass an ONNX model from torch.onnx.export or a .tflite file")
    opset = _default_opset(model)
    if opset is None:
        raise ModelError(f"{source} imports no default-domain ONNX opset",
                         hint="re-export the model with an opset between "
                         f"{MIN_OPSET} and {MAX_OPSET}")
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise UnsupportedError(
            f"{source} uses ONNX opset {opset}; nnopt reads opsets {MIN_OPSET} to {MAX_OPSET}",
            hint=f"re-export with e.g. torch.onnx.export(..., opset_version={TARGET_OPSET - 3})"
            if opset > MAX_OPSET else "upgrade the model with a newer exporter")
    try:
        onnx.checker.check_model(model)
    except Exception as err:
        raise ModelError(f"{source} is not a valid ONNX model: {_first_line(err)}",
                         hint="re-export the model; a truncated file fails this way too") from err
    g = model.graph
    init_names = {t.name for t in g.initializer}
    real_inputs = [i for i in g.input if i.name not in init_names]
    given = dict(input_shapes or {})
    unknown = sorted(set(given) - {i.name for i in real_inputs})
    if unknown:
        raise NnoptError(f"--input-shape names {', '.join(unknown)}, not an input of {source}",
                         hint="inputs: " + ", ".join(i.name for i in real_inputs))
    for inp in real_inputs:
        if inp.name not in (input_values or {}):
            _fix_input_shape(inp, given.get(inp.name), source)
        elif inp.name in given:
            _fix_input_shape(inp, given[inp.name], source)
    control.pin_inputs(model, input_values or {}, source)
    if control.has_control_flow(model):
        # before the upgrade: the converter leaves If/Loop bodies at the model's opset
        model = control.resolve(model, source, opset)
    if opset < TARGET_OPSET:
        from onnx import version_converter
        try:
            model = version_converter.convert_version(model, TARGET_OPSET)
        except Exception as err:
            raise UnsupportedError(
                f"{source}: upgrading opset {opset} to {TARGET_OPSET} failed: "
                f"{_first_line(err)}", hint="re-export the model with a newer opset") from err
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as err:
        raise ModelError(f"{source}: ONNX shape inference failed: {_first_line(err)}",
                         hint="check the model with onnx.checker.check_model(full_check=True)"
                         ) from err
    prep = _read_graph(model, name, source, opset)
    _fold_constants(prep, source)
    for _ in range(MAX_INFER_ROUNDS):  # shapes that only the folded constants reveal
        if not _infer_again(model, prep):
            break
        _fold_constants(prep, source)
    _drop_identities(prep)
    _fold_batch_norms(prep)
    prep.index_consumers()
    return prep


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


def _default_opset(model: Any) -> int | None:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return None


def _fix_input_shape(inp: Any, shape: tuple[int, ...] | None, source: str) -> None:
    tt = inp.type.tensor_type
    dims = tt.shape.dim
    if shape is not None:
        if len(dims) and len(dims) != len(shape):
            raise NnoptError(f"--input-shape {inp.name}: {len(shape)} dimensions given, the "
                             f"input has {len(dims)}", hint="give every dimension")
        del dims[:]
        for d in shape:
            dims.add().dim_value = d
        return
    bad = [d.dim_param or "?" for d in dims if not d.HasField("dim_value") or d.dim_value < 1]
    if bad or not tt.HasField("shape"):
        shown = [d.dim_param or (str(d.dim_value) if d.HasField("dim_value") else "?")
                 for d in dims]
        raise UnsupportedError(
            f"{source}: input {inp.name!r} has dynamic dimensions [{', '.join(shown)}]",
            hint=f"fix them with --input-shape {inp.name}=" + ",".join(
                f"<{s}>" if s in bad or s == "?" else s for s in shown)
            + " (the sizes you run it at, e.g. 1 for the batch)")


def _np_dtype(elem_type: int) -> np.dtype[Any]:
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def _read_graph(model: Any, name: str, source: str, opset: int) -> Prepared:
    from onnx import helper, numpy_helper

    g = model.graph
    consts: dict[str, np.ndarray] = {}
    for t in g.initializer:
        consts[t.name] = numpy_helper.to_array(t)
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, np.dtype[Any]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            continue
        if tt.elem_type:
            dtypes[vi.name] = _np_dtype(tt.elem_type)
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    for k, a in consts.items():
        shapes[k], dtypes[k] = tuple(a.shape), a.dtype
    nodes = [Node(n.op_type, n.name or f"{n.op_type}_{i}", list(n.input), list(n.output),
                  {a.name: helper.get_attribute_value(a) for a in n.attribute}, n.domain)
             for i, n in enumerate(g.node)]
    inputs = [i.name for i in g.input if i.name not in consts]
    outputs = [o.name for o in g.output]
    return Prepared(name, nodes, consts, shapes, dtypes, inputs, outputs, opset)


def _fold_constants(prep: Prepared, source: str) -> None:
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    kept: list[Node] = []
    for node in prep.nodes:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            proto = helper.make_node("Constant", [], node.outputs, **node.attrs)
            outs = ReferenceEvaluator(proto, opsets={"": TARGET_OPSET}).run(None, {})
            value = next(iter(outs))
            _set_const(prep, node.outputs[0], np.asarray(value))
            continue
        if node.op_type in ("Shape", "Size") and node.inputs and node.inputs[0] in prep.shapes:
            shape = prep.shapes[node.inputs[0]]
            if node.op_type == "Size":
                _set_const(prep, node.outputs[0], np.array(math.prod(shape), dtype=np.int64))
            else:
                start = int(node.attrs.get("start", 0))
                end = node.attrs.get("end")
                stop = None if end is None else int(end)
                sl = shape[start:stop]
                _set_const(prep, node.outputs[0], np.array(sl, dtype=np.int64))
            continue
        foldable = (node.domain in ("", "ai.onnx") and node.op_type not in _KEEP_OPS
                    and node.op_type not in _RANDOM_OPS and node.op_type not in _DROP_OPS
                    and any(node.inputs)
                    and all(not i or i in prep.consts for i in node.inputs))
        if foldable:
            try:
                proto = helper.make_node(node.op_type, node.inputs, node.outputs,
                                         **node.attrs)
                feeds = {i: prep.consts[i] for i in node.inputs if i}
                values = ReferenceEvaluator(proto, opsets={"": TARGET_OPSET}).run(None, feeds)
            except Exception:
                kept.append(node)  # left to the importer, which names the op if unsupported
                continue
            for out, v in zip(node.outputs, values, strict=False):
                if out:
                    _set_const(prep, out, np.asarray(v))
            continue
        kept.append(node)
    prep.nodes = kept
    for out in prep.outputs:
        if out in prep.consts:
            raise UnsupportedError(f"{source}: output {out!r} is a constant",
                                   hint="nnopt compiles graphs whose outputs depend on "
                                   "their inputs")


def _infer_again(model: Any, prep: Prepared) -> bool:
    """ONNX shape inference (with data propagation) once more, over the graph as folded:
    the folded values as initializers, the nodes still to import. A pads, shape or axes
    operand that a chain of constants computes (``torch.onnx.export``'s ``F.pad``:
    ``ConstantOfShape -> Concat -> Reshape -> Slice -> Transpose -> Reshape -> Cast``) is
    a constant now, so its consumer's output gets a static shape. Fills the shapes (and
    dtypes) still missing; True when it found one."""
    import onnx
    from onnx import numpy_helper

    missing = {o for n in prep.nodes for o in n.outputs if o and o not in prep.shapes}
    if not missing:
        return False
    kept = {o for n in prep.nodes for o in n.outputs if o}
    new = onnx.ModelProto()
    new.CopyFrom(model)
    g = new.graph
    nodes = [n for n in model.graph.node if any(o in kept for o in n.output)]
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    have = {t.name for t in g.initializer}
    used = {i for n in nodes for i in n.input if i}
    try:
        for name in sorted((used & prep.consts.keys()) - have):
            g.initializer.append(numpy_helper.from_array(np.asarray(prep.consts[name]), name))
        inferred = onnx.shape_inference.infer_shapes(new, strict_mode=True, data_prop=True)
    except Exception:  # the importer names the value that stays without a shape
        return False
    found = False
    for vi in [*inferred.graph.value_info, *inferred.graph.output]:
        if vi.name not in missing or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            prep.shapes[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
            if tt.elem_type and vi.name not in prep.dtypes:
                prep.dtypes[vi.name] = _np_dtype(tt.elem_type)
            found = True
    return found


def _set_const(prep: Prepared, name: str, value: np.ndarray) -> None:
    prep.consts[name] = value
    prep.shapes[name] = tuple(value.shape)
    prep.dtypes[name] = value.dtype


def _drop_identities(prep: Prepared) -> None:
    """Identity and (inference-mode) Dropout: consumers read the input directly."""
    alias: dict[str, str] = {}
    kept: list[Node] = []
    outputs = set(prep.outputs)
    for node in prep.nodes:
        node.inputs = [alias.get(i, i) for i in node.inputs]
        if node.op_type in _DROP_OPS and node.inputs and node.outputs[0] not in outputs \
                and not (len(node.outputs) > 1 and node.outputs[1]):
            alias[node.outputs[0]] = node.inputs[0]
            continue
        if node.op_type in _DROP_OPS and node.outputs[0] in outputs and node.inputs \
                and node.inputs[0] not in prep.inputs and node.inputs[0] not in outputs:
            # the output keeps its name: rename the producer's output instead
            src = node.inputs[0]
            for prev in kept:
                prev.outputs = [node.outputs[0] if o == src else o for o in prev.outputs]
            for later in kept:
                later.inputs = [node.outputs[0] if i == src else i for i in later.inputs]
            alias[src] = node.outputs[0]
            for k, v in alias.items():  # earlier aliases of src now name the output
                if v == src:
                    alias[k] = node.outputs[0]
            continue
        kept.append(node)
    prep.nodes = kept


def _fold_batch_norms(prep: Prepared) -> None:
    """BatchNormalization after a Conv/Gemm with constant weights, whose output only the
    BN reads, is folded into that op's weights and bias."""
    producer = {o: k for k, n in enumerate(prep.nodes) for o in n.outputs}
    uses: dict[str, int] = {}
    for n in prep.nodes:
        for i in n.inputs:
            uses[i] = uses.get(i, 0) + 1
    drop: set[int] = set()
    for k, bn in enumerate(prep.nodes):
        if bn.op_type != "BatchNormalization" or len(bn.inputs) < 5:
            continue
        if len([o for o in bn.outputs if o]) != 1 or not all(
                i in prep.consts for i in bn.inputs[1:5]):
            continue
        x = bn.inputs[0]
        p = producer.get(x)
        if p is None or uses.get(x, 0) != 1 or x in prep.outputs:
            continue
        conv = prep.nodes[p]
        if conv.op_type not in ("Conv", "ConvTranspose", "Gemm") or len(conv.inputs) < 2 \
                or conv.inputs[1] not in prep.consts \
                or (len(conv.inputs) > 2 and conv.inputs[2]
                    and conv.inputs[2] not in prep.consts):
            continue
        if conv.op_type == "Gemm" and (conv.attrs.get("transA", 0)
                                       or float(conv.attrs.get("alpha", 1.0)) != 1.0
                                       or float(conv.attrs.get("beta", 1.0)) != 1.0):
            continue
        gamma, beta, mean, var = (prep.consts[i].astype(np.float64) for i in bn.inputs[1:5])
        eps = float(bn.attrs.get("epsilon", 1e-5))
        scale = gamma / np.sqrt(var + eps)
        w = prep.consts[conv.inputs[1]].astype(np.float64)
        channels = scale.shape[0]
        if conv.op_type == "Conv":
            w = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
        elif conv.op_type == "ConvTranspose":
            if int(conv.attrs.get("group", 1)) != 1:
                continue
            w = w * scale.reshape((1, -1) + (1,) * (w.ndim - 2))
        else:
            if w.ndim != 2:
                continue
            w = w * (scale[:, None] if conv.attrs.get("transB", 0) else scale[None, :])
        has_bias = len(conv.inputs) > 2 and bool(conv.inputs[2])
        b = prep.consts[conv.inputs[2]].astype(np.float64) if has_bias \
            else np.zeros(channels)
        if b.size not in (1, channels):
            continue
        b = (np.broadcast_to(b.reshape(-1), (channels,)) - mean) * scale + beta
        wname, bname = f"{conv.name}.bn_weight", f"{conv.name}.bn_bias"
        _set_const(prep, wname, w.astype(np.float32))
        _set_const(prep, bname, b.astype(np.float32))
        conv.inputs = [conv.inputs[0], wname, bname]
        conv.outputs = [bn.outputs[0]]
        drop.add(k)
    prep.nodes = [n for k, n in enumerate(prep.nodes) if k not in drop]
