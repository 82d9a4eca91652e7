"""Build-time evaluation of an ONNX ModelProto: pinned input values, constant folding to a
fixed point, and control flow whose condition or trip count that makes known.

:func:`resolve` repeats, until nothing changes: ONNX shape inference (with data
propagation, so Shape/Gather/Concat chains of pinned shapes get values), evaluation of
every node whose inputs are all constants by ``onnx.reference.ReferenceEvaluator`` (the
ONNX reference semantics, no hand-written numpy per op), inlining of each ``If`` whose
condition became a constant (the branch taken), and unrolling of each ``Loop`` whose
trip count is a constant and whose condition stays true. What is left is a graph
without If/Loop for the importer; an If or Loop that stays dynamic is refused by name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import NnoptError, UnsupportedError

# Never folded: QDQ parameters the importer reads as quantisation, random generators.
NOT_FOLDED = frozenset({"QuantizeLinear", "DequantizeLinear", "RandomNormal",
                        "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Multinomial", "Bernoulli", "If", "Loop", "Scan"})
MAX_UNROLL = 1024  # Loop iterations unrolled at most (each copies the body)
_MAX_ROUNDS = 64


def parse_input_values(specs: Sequence[str]) -> dict[str, tuple[float, ...]]:
    """``NAME=V1,V2,...`` strings -> {name: values} (cast to the input's dtype later)."""
    out: dict[str, tuple[float, ...]] = {}
    for spec in specs:
        name, sep, vals = spec.partition("=")
        try:
            values = tuple(float(v) for v in vals.split(","))
        except ValueError:
            values = ()
        if not sep or not name or not values:
            raise NnoptError(f"--input-value {spec!r} is not NAME=V1,V2,...",
                             hint="e.g. --input-value sr=16000 (the value the input always "
                             "has; a tensor input takes all its elements, row-major)")
        out[name] = values
    return out


def pin_inputs(model: Any, values: Mapping[str, tuple[float, ...]], source: str) -> None:
    """Turn each pinned graph input into an initializer holding its value (in place)."""
    if not values:
        return
    from onnx import helper, numpy_helper

    g = model.graph
    inits = {t.name for t in g.initializer}
    real = {i.name: i for i in g.input if i.name not in inits}
    unknown = sorted(set(values) - set(real))
    if unknown:
        raise NnoptError(f"--input-value names {', '.join(unknown)}, not an input of {source}",
                         hint="inputs: " + ", ".join(real))
    for name, vals in values.items():
        inp = real[name]
        tt = inp.type.tensor_type
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        shape: tuple[int, ...]
        if len(vals) == 1 and all(d in (1, -1) for d in dims):
            shape = tuple(1 for _ in dims)
        elif len(dims) == 1 and dims[0] in (-1, len(vals)):
            shape = (len(vals),)
        elif -1 not in dims and int(np.prod(dims)) == len(vals):
            shape = tuple(dims)
        else:
            raise NnoptError(f"--input-value {name}: {len(vals)} values given for an input "
                             f"of shape {dims}", hint="give one value per element, "
                             "or fix its shape with --input-shape first")
        arr = np.array(vals, dtype=np.float64)
        if dtype.kind in "iub" and not np.all(arr == np.round(arr)):
            raise NnoptError(f"--input-value {name}: input {name!r} is {dtype}, the values "
                             "are not integers", hint="give integer values")
        g.initializer.append(numpy_helper.from_array(arr.astype(dtype).reshape(shape), name))
        g.input.remove(inp)
        if model.ir_version < 4:  # initializers must be declared inputs there
            g.input.append(_declared(name, arr.astype(dtype).reshape(shape)))


def has_control_flow(model: Any) -> bool:
    return any(n.op_type in ("If", "Loop", "Scan") for n in model.graph.node)


def resolve(model: Any, source: str, opset: int) -> Any:
    """Fold, inline and unroll until a fixed point (see the module docstring)."""
    import onnx

    for _ in range(_MAX_ROUNDS):
        with contextlib.suppress(Exception):  # the strict pass after this names the problem
            model = onnx.shape_inference.infer_shapes(model, data_prop=True)
        changed = _fold(model.graph, opset, model.ir_version < 4)
        changed |= _inline_control(model.graph, source)
        if not changed:
            break
    for node in model.graph.node:
        if node.op_type in ("If", "Loop", "Scan"):
            what = {"If": "its condition", "Loop": "its trip count or condition",
                    "Scan": "it"}[node.op_type]
            raise UnsupportedError(
                f"{source}: {node.op_type} node {node.name!r}: {what} depends on the "
                "model's inputs at run time",
                hint="nnopt takes If/Loop whose condition and trip count are known at build "
                "time: pin the input they depend on with --input-value NAME=V (and dynamic "
                "shapes with --input-shape)")
    return model


def _declared(name: str, value: np.ndarray) -> Any:
    from onnx import helper

    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype),
                                         value.shape)


def _static_shapes(g: Any) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    return shapes


def _fold(g: Any, opset: int, listed: bool) -> bool:
    """Evaluate every node of ``g`` whose inputs are constants; True when any was.
    ``listed`` (IR version < 4): every initializer is also declared a graph input."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    consts: dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    shapes = _static_shapes(g)
    kept, changed = [], False
    for node in g.node:
        values: list[np.ndarray] | None = None
        if node.domain in ("", "ai.onnx") and node.op_type not in NOT_FOLDED:
            if node.op_type in ("Shape", "Size") and node.input[0] not in consts \
                    and node.input[0] in shapes:
                values = _shape_value(node, shapes[node.input[0]])
            elif all(not i or i in consts for i in node.input):
                try:
                    feeds = {i: consts[i] for i in node.input if i}
                    ev = ReferenceEvaluator(_alone(node, feeds, opset))
                    values = [np.asarray(v) for v in ev.run(None, feeds)]
                except Exception:
                    values = None  # left to the importer, which names the op if unsupported
        if values is None:
            kept.append(node)
            continue
        changed = True
        for out, v in zip(node.output, values, strict=False):
            if out:
                consts[out] = v
                g.initializer.append(numpy_helper.from_array(v, out))
                if listed:
                    g.input.append(_declared(out, v))
    if changed:
        del g.node[:]
        g.node.extend(kept)
    return changed


def _alone(node: Any, feeds: Mapping[str, np.ndarray], opset: int) -> Any:
    """A one-node model of ``node`` at ``opset`` (a bare NodeProto is evaluated at the
    newest opset by ReferenceEvaluator, whatever ``opsets`` says)."""
    from onnx import helper

    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                         a.shape) for n, a in feeds.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    g = helper.make_graph([node], "fold", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _shape_value(node: Any, shape: tuple[int, ...]) -> list[np.ndarray]:
    from onnx import helper

    if node.op_type == "Size":
        return [np.array(int(np.prod(shape)), dtype=np.int64)]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    start, end = int(attrs.get("start", 0)), attrs.get("end")
    return [np.array(shape[start:None if end is None else int(end)], dtype=np.int64)]


def _inline_control(g: Any, source: str) -> bool:
    """Replace each If with a constant condition by its branch and each Loop with a
    constant trip count by its unrolled body; True when any was."""
    from onnx import helper, numpy_helper

    consts = {t.name: t for t in g.initializer}
    new_nodes: list[Any] = []
    changed = False
    for node in g.node:
        attrs = {a.name: a for a in node.attribute}
        if node.op_type == "If" and node.input[0] in consts:
            cond = bool(numpy_helper.to_array(consts[node.input[0]]).reshape(-1)[0])
            branch = helper.get_attribute_value(attrs["then_branch" if cond
                                                      else "else_branch"])
            g.initializer.extend(branch.initializer)
            g.value_info.extend(branch.value_info)
            new_nodes.extend(branch.node)
            for src, dst in zip(branch.output, node.output, strict=True):
                new_nodes.append(helper.make_node("Identity", [src.name], [dst],
                                                  name=f"{node.name}/out/{dst}"))
            changed = True
            continue
        if node.op_type == "Loop" and (not node.input[0] or node.input[0] in consts) and (
                len(node.input) < 2 or not node.input[1] or node.input[1] in consts):
            body = helper.get_attribute_value(attrs["body"])
            new_nodes.extend(_unroll(node, body, consts, source))
            changed = True
            continue
        new_nodes.append(node)
    if changed:
        del g.node[:]
        g.node.extend(new_nodes)
    return changed


def _unroll(node: Any, body: Any, consts: Mapping[str, Any], source: str) -> list[Any]:
    """The nodes of ``body`` once per iteration, renamed, wired iteration to iteration."""
    from onnx import helper, numpy_helper

    def refuse(what: str) -> UnsupportedError:
        return UnsupportedError(f"{source}: Loop node {node.name!r}: {what}",
                                hint="nnopt unrolls Loops with a trip count known at build "
                                f"time (at most {MAX_UNROLL}) and a condition that stays true")

    trip = int(numpy_helper.to_array(consts[node.input[0]]).reshape(-1)[0]) \
        if node.input[0] else None
    cond0 = bool(numpy_helper.to_array(consts[node.input[1]]).reshape(-1)[0]) \
        if len(node.input) > 1 and node.input[1] else True
    if trip is None:
        raise refuse("no trip count (a while loop)")
    if trip > MAX_UNROLL:
        raise refuse(f"trip count {trip}")
    if not cond0:
        trip = 0
    carried = list(node.input[2:])
    n_car = len(carried)
    b_in = [i.name for i in body.input]
    b_out = [o.name for o in body.output]
    if trip > 0 and not _stays_true(body, b_in[1], b_out[0]):
        raise refuse("its condition is computed in the body")
    if trip == 0 and len(b_out) > 1 + n_car:
        raise refuse("zero iterations with scan outputs")
    defined = set(b_in) | {t.name for t in body.initializer} | {
        o for n in body.node for o in n.output if o}
    nodes: list[Any] = []
    cur = carried
    scans: list[list[str]] = [[] for _ in b_out[1 + n_car:]]
    for it in range(trip):
        sfx = f"__{node.name}__it{it}"
        ren = {n: n + sfx for n in defined}
        ren[b_in[0]] = f"{node.name}__iter{it}"
        nodes.append(helper.make_node("Constant", [], [ren[b_in[0]]],
                                      value=numpy_helper.from_array(np.array(it, np.int64))))
        ren[b_in[1]] = f"{node.name}__cond{it}"
        nodes.append(helper.make_node("Constant", [], [ren[b_in[1]]],
                                      value=numpy_helper.from_array(np.array(True))))
        for k, name in enumerate(b_in[2:]):
            ren[name] = cur[k]
        for t in body.initializer:
            c = type(t)()
            c.CopyFrom(t)
            c.name = ren[t.name]
            nodes.append(helper.make_node("Constant", [], [c.name], value=c))
        for n in body.node:
            nodes.append(_renamed(n, ren))
        cur = [ren.get(o, o) for o in b_out[1:1 + n_car]]
        for k, o in enumerate(b_out[1 + n_car:]):
            scans[k].append(ren.get(o, o))
    for src, dst in zip(cur, node.output[:n_car], strict=True):
        if dst:
            nodes.append(helper.make_node("Identity", [src], [dst]))
    axes = f"{node.name}__scan_axes"
    if scans:
        nodes.append(helper.make_node("Constant", [], [axes],
                                      value=numpy_helper.from_array(np.array([0], np.int64))))
    for k, (parts, dst) in enumerate(zip(scans, node.output[n_car:], strict=True)):
        ups = []
        for j, p in enumerate(parts):
            u = f"{dst}__scan{k}_{j}"
            nodes.append(helper.make_node("Unsqueeze", [p, axes], [u]))
            ups.append(u)
        nodes.append(helper.make_node("Concat", ups, [dst], axis=0))
    return nodes


def _stays_true(body: Any, cond_in: str, cond_out: str) -> bool:
    """True when the body's condition output is its condition input (possibly through
    Identity nodes) or a constant true."""
    from onnx import helper, numpy_helper

    prod = {o: n for n in body.node for o in n.output}
    name = cond_out
    for _ in range(len(body.node) + 1):
        if name == cond_in:
            return True
        for t in body.initializer:
            if t.name == name:
                return bool(numpy_helper.to_array(t).reshape(-1)[0])
        n = prod.get(name)
        if n is None:
            return False
        if n.op_type == "Identity":
            name = n.input[0]
            continue
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            return bool(numpy_helper.to_array(
                helper.get_attribute_value(n.attribute[0])).reshape(-1)[0])
        return False
    return False


def _renamed(node: Any, ren: Mapping[str, str]) -> Any:
    """A copy of ``node`` with inputs and outputs renamed (also inside its subgraphs)."""
    c = type(node)()
    c.CopyFrom(node)
    _rename_in_place(c, ren)
    return c


def _rename_in_place(node: Any, ren: Mapping[str, str]) -> None:
    for k, i in enumerate(node.input):
        if i in ren:
            node.input[k] = ren[i]
    for k, o in enumerate(node.output):
        if o in ren:
            node.output[k] = ren[o]
    for a in node.attribute:
        graphs = [a.g] if a.HasField("g") else list(a.graphs)
        for sub in graphs:
            for n in sub.node:
                _rename_in_place(n, ren)
            for o in sub.output:
                if o.name in ren:
                    o.name = ren[o.name]
