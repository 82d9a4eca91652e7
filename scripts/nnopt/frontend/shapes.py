"""Dynamic .tflite shapes -> the shapes of one run (``--input-shape NAME=D1,D2,...``).

A model exported with dynamic dimensions stores every tensor at the shape the
converter traced (openWakeWord's mel front end: input [1,1]) and marks the dynamic ones
-1 in ``shape_signature`` ([-1,-1]); the full TFLite runtime resizes the input and
re-runs each kernel's Prepare. Here the graph inputs named by ``--input-shape`` take
their shapes (rank and the signature's fixed dimensions must agree), and every op, in
file order, whose input shapes changed or whose outputs are dynamic beyond the batch
dimension (the stored size of a -1 dimension is the converter's placeholder) gets its
output shapes from its definition (:mod:`nnopt.ops.shapes`: the element-wise trait, or
``OpDef.infer_shape``); constant
operands (a RESHAPE's new shape, a MEAN's axes) are read as they are.

A graph input dynamic beyond its batch dimension needs ``--input-shape`` (refused
without, naming it with its stored shape and signature); the batch dimension keeps its
stored size unless given. Refused by name: an unknown input name, a rank or fixed dimension that
disagrees, an op whose output shape nnopt cannot infer or whose inputs do not fit
(its definition's reason), an output that would contradict its signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..errors import NnoptError, UnsupportedError
from ..ir import Op, Tensor
from ..ops import DEFINITIONS
from ..ops.shapes import Shape, ShapeError, ShapeQuery, output_shapes

_HINT = "pass --input-shape NAME=D1,D2,... for each dynamic input (e.g. {example})"


def _example(tensors: list[Tensor], inputs: tuple[int, ...],
             signatures: Mapping[int, Shape]) -> str:
    parts = []
    for t in inputs:
        if t in signatures:
            dims = ",".join("N" if d < 0 else str(d) for d in signatures[t])
            parts.append(f"--input-shape {tensors[t].name}={dims}")
    return "; ".join(parts) or "--input-shape input=1,1280"


def resolve(tensors: list[Tensor], ops: list[Op], inputs: tuple[int, ...],
            signatures: Mapping[int, Shape], input_shapes: Mapping[str, Shape],
            source: str) -> None:
    """Set the graph inputs' shapes from ``input_shapes`` and propagate them through
    ``ops`` (``tensors`` updated in place)."""
    by_name = {tensors[t].name: t for t in inputs}
    changed: set[int] = set()
    for name, shape in input_shapes.items():
        if name not in by_name:
            raise NnoptError(f"--input-shape {name}: the model has no input of that name",
                             hint="its inputs: " + ", ".join(by_name))
        t = by_name[name]
        sig = signatures.get(t, tensors[t].shape)
        _check_against(tensors[t], shape, sig, f"--input-shape {name}", source)
        if shape != tensors[t].shape:
            tensors[t] = replace(tensors[t], shape=shape)
            changed.add(t)
    missing = [t for t in inputs if _dynamic(signatures.get(t, ()))
               and tensors[t].name not in input_shapes]
    if missing:
        t = missing[0]
        raise UnsupportedError(
            f"{source}: graph input {t} ({tensors[t].name}) has a dynamic shape (stored "
            f"{list(tensors[t].shape)}, signature {list(signatures[t])})",
            hint=_HINT.format(example=_example(tensors, inputs, signatures)))
    for op in ops:
        if not any(t in changed for t in op.inputs if t >= 0) \
                and not any(_dynamic(signatures.get(t, ())) for t in op.outputs):
            continue
        d = DEFINITIONS.get(op.opcode)
        what = f"{source}: op {op.index} ({op.opcode})"
        q = ShapeQuery(op, tuple(tensors[t].shape if t >= 0 else None for t in op.inputs),
                       tuple(tensors[t].array() if t >= 0 and tensors[t].data is not None
                             else None for t in op.inputs))
        try:
            shapes = output_shapes(d.infer_shape if d else None,
                                   d.elementwise if d else None, q)
        except ShapeError as err:
            raise UnsupportedError(f"{what}: at the --input-shape sizes {err}",
                                   hint="check the --input-shape values") from err
        if shapes is None:
            why = ("at another input shape than the model stores" if input_shapes else
                   "(its output is dynamic: shape signature "
                   f"{list(signatures.get(op.outputs[0], ()))})")
            raise UnsupportedError(
                f"{what}: nnopt cannot infer its output shape {why}",
                hint="export the model at the input shape you run it with (fixed "
                "shapes)" + (", or drop --input-shape" if input_shapes else ""))
        for t, shape in zip(op.outputs, shapes, strict=True):
            _check_against(tensors[t], shape, signatures.get(t, tensors[t].shape),
                           f"op {op.index} ({op.opcode}) output", source)
            if shape != tensors[t].shape:
                tensors[t] = replace(tensors[t], shape=shape)
                changed.add(t)


def _dynamic(sig: Shape) -> bool:
    """-1 beyond the batch dimension (a stored batch of 1 is the one nnopt runs)."""
    return any(d < 0 for d in sig[1:])


def _check_against(t: Tensor, shape: Shape, sig: Shape, what: str, source: str) -> None:
    if len(shape) != len(sig) or any(s >= 0 and s != d for s, d in zip(sig, shape, strict=True)):
        raise NnoptError(f"{source}: {what}: shape {list(shape)} does not fit tensor "
                         f"{t.index} ({t.name}), signature {list(sig)} (-1: any size)",
                         hint="give as many dimensions as the tensor has; only its -1 "
                         "dimensions may change")
