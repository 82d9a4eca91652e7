"""What an operator definition is (:class:`OpDef`), and the pieces definitions share:
its TFLite options (:class:`Options`: the table, its reader and its writer) and the
spatial access pattern (:class:`Spatial`).

A definition is data: the opcode, how its options are read from a TFLite model and
written back (:mod:`nnopt.tflite_builder`, ``nnopt convert``), its traits (passes ask
these, never the opcode), its spatial access pattern, its MACs, the kind of
instruction-cost formula that applies (``passes.cost``), how its weights slice for
swap, its lowering object (:mod:`nnopt.lowering`; the lowering declares the
kernels' exported checks) and the kernels the model blob calls for it (:class:`Kernel`,
with their blob ids).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from ..arith import ACTIVATION_NAMES, Axis
from ..ir import ActivationOptions, Graph, NoOptions, Op, OpOptions, ReducerOptions
from ..lowering.base import Lowering
from .shapes import ShapeFn

Reader = Callable[[Any], OpOptions]
# an options dataclass -> the fields of its TFLite table (snake_case flatbuffer names;
# enum fields by name, sequences as int32 vectors), as tflite_builder writes them
Writer = Callable[[OpOptions], Mapping[str, Any]]

POINT = "point"
WINDOW = "window"
#: band forms beyond the spatial patterns (:class:`BandForm`): output rows read a
#: computable input row range that is no sliding window (resize, transposed conv)
ROWS = "rows"
#: one output pixel reduced over every input row: per-band partial sums (global pool)
REDUCE = "reduce"


class RowMap(Protocol):
    """Output rows [a, b) -> the input rows [lo, hi) they read (``Axis`` is one)."""

    def span(self, a: int, b: int) -> tuple[int, int]: ...


@dataclass(frozen=True)
class TableRows:
    """Rows read through a table of source rows: output row y reads input rows
    ``pairs[2y]`` and ``pairs[2y + 1]`` (a bilinear resize's lower and upper rows)."""

    pairs: tuple[int, ...]

    def span(self, a: int, b: int) -> tuple[int, int]:
        rows = self.pairs[2 * a:2 * b]
        return (min(rows), max(rows) + 1) if rows else (0, 0)


@dataclass(frozen=True)
class ScatterRows:
    """The input rows of a transposed convolution that reach output rows [a, b): input
    row i reaches output rows ``i * stride - pad + [0, filter)``."""

    size: int  # input rows
    filter: int
    stride: int
    pad: int

    def span(self, a: int, b: int) -> tuple[int, int]:
        if b <= a:
            return 0, 0
        lo = max(0, (a + self.pad - self.filter) // self.stride + 1)
        hi = min(self.size, (b - 1 + self.pad) // self.stride + 1)
        return lo, max(lo, hi)


@dataclass(frozen=True)
class BandForm:
    """How an op runs in row bands when its feature maps live in storage
    (``passes.fm_bands``): the activations read band by band, those read whole by every
    band (a squeeze-excitation block's per-channel vector), and the rows each band
    reads. WINDOW / POINT / ROWS: a band is a range of output rows, reading
    ``rows.span(a, b)`` of each banded input (POINT: the same rows); REDUCE: the output
    is one pixel summed over the input's rows, a band is a range of input rows whose
    partial sums the kernel carries to the next band (``rows``: the input's axis)."""

    kind: str  # WINDOW, POINT, ROWS or REDUCE
    inputs: tuple[int, ...]  # activations read in row bands
    whole: tuple[int, ...]  # activations every band reads whole
    rows: RowMap

    @classmethod
    def of_spatial(cls, sp: Spatial) -> BandForm:
        return cls(sp.kind, sp.inputs, (), sp.h)


@dataclass(frozen=True)
class Spatial:
    """How one op maps output pixels to input pixels (batch 1, NHWC)."""

    op: Op
    kind: str  # WINDOW (conv, depthwise, pool) or POINT (element-wise, channel concat)
    inputs: tuple[int, ...]  # activation inputs read over the same spatial grid
    output: int
    h: Axis
    w: Axis
    macs_per_pixel: int  # multiply-accumulates per output pixel (0 for non-MAC ops)


@dataclass(frozen=True)
class Weights:
    """How a weighted op's constant weights (input 1) slice by output channel, for
    streaming them from external flash (``nnopt.swap``)."""

    axis: int  # axis of the output channels in the weights (-1: the last)
    channel_ranges: bool  # the kernel can compute a range of output channels alone
    contiguous_slice: bool  # with one output row, a channel slice of the output is dense
    # weight rows may also stream in slices along the input depth, the partial sums
    # kept between them (fully connected: nnrt_fully_connected_<t>_depth)
    depth_slices: bool = False


@dataclass(frozen=True)
class OutputViews:
    """Outputs that are byte ranges of one input (split-like ops): output t starts at
    byte ``offset`` of ``source`` and spans its own size. The planner may place them
    there (no copy); the lowering then emits nothing for them."""

    source: int
    outputs: tuple[tuple[int, int], ...]  # (output tensor, byte offset in source)


def no_options(op: Any) -> OpOptions:
    return NoOptions()


def no_fields(o: OpOptions) -> Mapping[str, Any]:
    """The writer of an op whose options nnopt does not read: it has none to write."""
    raise ValueError(f"options object {o!r} does not fit the operator (it takes none "
                     "nnopt writes)")


def writer(cls: type, fields: Callable[[Any], Mapping[str, Any]]) -> Writer:
    """A writer of ``cls`` options (any other options object is a ValueError)."""
    def write(o: OpOptions) -> Mapping[str, Any]:
        if not isinstance(o, cls):
            raise ValueError(f"options object {o!r} does not fit the operator (it takes "
                             f"{cls.__name__})")
        return fields(o)
    return write


def write_fields(cls: type) -> Writer:
    """A writer of a dataclass whose fields are the table's, by the same names."""
    return writer(cls, dataclasses.asdict)


write_activation = writer(ActivationOptions,
                          lambda o: {"fused_activation_function": o.activation})
write_reducer = writer(ReducerOptions, lambda o: {"keep_dims": o.keep_dims})


@dataclass(frozen=True)
class Options:
    """An operator's TFLite options: the builtin options table it is written with
    (``table``: a ``tflite`` options class name; a table with no field nnopt reads is
    still written, as TFLite's converter writes it), how they are read into an
    :mod:`nnopt.ir` options dataclass and written back. ``table`` None: a custom
    operator, whose options are the flexbuffer bytes ``encode`` writes."""

    table: str | None
    read: Reader = no_options
    write: Writer = no_fields
    encode: Callable[[OpOptions], bytes] | None = None


#: Argument kinds of a :class:`Kernel` (the C kernel's parameters, in order).
KERNEL_SCALARS = ("i32", "u32", "f32")
#: ``Kernel.tensor_args`` of a kernel taking a variable number of tensors ("tensors").
VARIABLE_ARGS = 0xFF
#: The tensors of a weighted kernel (conv, fully connected): input, weights, bias, output.
WEIGHTED_ARGS = ("tensor", "tensor", "tensor?", "tensor")


@dataclass(frozen=True)
class Kernel:
    """A C kernel the model blob can call for an op (:mod:`nnopt.blob.schema` builds
    the loader's kernel table from the definitions' kernels).

    ``id``: its kernel id in the blob and the loader's table (``NNRT_BLOB_K_*``), unique
    over the registry; ``function``: the C function; ``args``: its parameters in order
    -- ``struct:<type>`` (pointer to a decoded parameter struct), ``tensor``, ``tensor?``
    (may be NULL), ``tensors`` (a list of 1..MAX_LIST_ARGS), ``i32``/``u32``/``f32``
    (scalars from the record); ``check``: the loader's checker of its record
    (``nnrt_blob_check_<check>``, in ``loader_<family>.c``); ``same``: variants the
    lowering may pick whose results and arguments equal this kernel's, which the blob
    runs as this one (without their scratch)."""

    id: int
    function: str
    args: tuple[str, ...]
    check: str
    same: tuple[str, ...] = ()

    @property
    def tensor_args(self) -> int:
        """Tensor arguments, or VARIABLE_ARGS when one of them is a "tensors" list."""
        if "tensors" in self.args:
            return VARIABLE_ARGS
        return sum(a.startswith("tensor") for a in self.args)

    @property
    def struct(self) -> str | None:
        for a in self.args:
            if a.startswith("struct:"):
                return a.split(":", 1)[1]
        return None

    @property
    def scalars(self) -> tuple[str, ...]:
        return tuple(a for a in self.args if a in KERNEL_SCALARS)


def no_spatial(graph: Graph, op: Op) -> Spatial | None:
    return None


def no_macs(graph: Graph, op: Op) -> int:
    return 0


def no_views(graph: Graph, op: Op) -> OutputViews | None:
    return None


ANY = "any"  # a TFLM kernel that moves bytes whatever the type (reshapes, variables)
NO_KERNEL = ("no kernel in the TFLM revision the workspace pins (nnopt's semantics follow "
             "LiteRT's reference kernel)")


@dataclass(frozen=True)
class TflmKernel:
    """What TFLite Micro's kernel of an operator takes: the element types of its data
    input (the first one; for DEQUANTIZE/QUANTIZE/CAST the source type; index, shape
    and axis operands left out) that the ``Prepare``/``Eval`` type switch of its file
    under ``tensorflow/lite/micro/kernels/`` accepts, audited against the TFLM the
    Zephyr workspace pins; and each of them nnopt refuses, with the reason. Shown by
    ``docs/operators.md`` (:func:`nnopt.oplist.dtype_table`)."""

    source: str | None  # the kernel file (None: no kernel in that TFLM)
    dtypes: tuple[str, ...]  # (ANY,): type-agnostic
    refused: Mapping[str, str] = dataclasses.field(default_factory=dict)


def tflm(source: str | None, *dtypes: str, **refused: str) -> TflmKernel:
    """A :class:`TflmKernel` (``refused``: type name -> why nnopt refuses it)."""
    return TflmKernel(source, tuple(dtypes), refused)


@dataclass(frozen=True)
class OpDef:
    """One TFLite operator (a builtin, or a custom one named by its custom code) as
    nnopt knows it."""

    opcode: str
    label: str  # short name in the memory picture (report.plot)
    lowering: Lowering  # its lowering (checks, scratch, the kernel call as data)
    options: Options | None = None  # its TFLite options table (None: it has none)
    # output = the input's bytes under another shape (planned as an alias)
    alias: bool = False
    # "unary" / "binary": output element i depends only on input element(s) i
    elementwise: str | None = None
    # "conv" / "depthwise" / "pool": a sliding window over NHWC rows and columns
    window: str | None = None
    # a max pool (stride >= filter, VALID) may be folded into it (passes.fuse)
    absorbs_max_pool: bool = False
    # a preceding PAD may become its implicit padding: "zero_point" (the pad value
    # must be the input's zero point) or "below_floor" (the pad value never wins)
    pad_consumer: str | None = None
    # a PAD: may become its consumer's implicit padding (passes.inplace_ops)
    pad: bool = False
    # a concatenation: along channels it is point-wise over pixels
    concat: bool = False
    # a TRANSPOSE: a tiled stage can read its NCHW input through a strided copy
    transpose: bool = False
    # the instruction-cost formula of passes.cost: "gemm", "depthwise", "window_taps"
    # (pools), "reduce_taps" (MEAN), "requant" (int8 ADD/SUB/MUL), "fc", "element"
    cost: str = "element"
    weights: Weights | None = None  # weighted ops: how the weights slice for swap
    blob: bool = True  # the model blob carries its kernel call
    # the kernels the model blob may call for it (their ids: the loader's kernel table)
    kernels: tuple[Kernel, ...] = ()
    # a TFLite custom operator (operator code CUSTOM): ``opcode`` is its custom code
    custom: bool = False
    spatial: Callable[[Graph, Op], Spatial | None] = no_spatial
    # its row-band form where the spatial pattern gives none (broadcast binary ops,
    # global pools, resizes, transposed convolutions): passes.regions.band_of
    band: Callable[[Graph, Op], BandForm | None] | None = None
    macs: Callable[[Graph, Op], int] = no_macs
    # split-like ops: the outputs that are contiguous byte ranges of an input (views)
    output_views: Callable[[Graph, Op], OutputViews | None] = no_views
    # a resource-variable access, "read" or "assign": its input 0 is a VAR_HANDLE's
    # resource, which nnopt.frontend.variables turns into the variable's state tensor
    variable: str | None = None
    # a SELECT_V2: output = condition ? x : y, element by element, values copied raw
    # (nnopt.frontend.control_flow selects an inlined IF's outputs with it)
    select: bool = False
    # evaluates the op on int32/int64/bool values without quantisation or fused
    # activation as TFLM computes them (numpy broadcasting, wrap-around), at compile time
    # (nnopt.frontend.control_flow counts a WHILE's iterations with it); None: not foldable
    fold: Callable[..., Any] | None = None
    # the output shapes from the input shapes (nnopt.ops.shapes: TFLite's Prepare), for
    # a .tflite model run at another input shape than stored (nnopt.frontend.shapes);
    # None: element-wise ops get theirs from ``elementwise``, others cannot be reshaped
    infer_shape: ShapeFn | None = None
    # what TFLM's kernel takes (set by its family module with ``audited``; a test
    # requires one for every definition)
    tflm: TflmKernel | None = None

    def read_options(self, op: Any) -> OpOptions:
        """The op's options from a TFLite operator (``tflite.Operator``)."""
        return self.options.read(op) if self.options is not None else NoOptions()


_Defs = TypeVar("_Defs", bound=tuple[OpDef, ...])


def audited(defs: _Defs, kernels: Mapping[str, TflmKernel]) -> _Defs:
    """The family's definitions with what TFLM's kernels take (KeyError for a definition
    the family's audit misses; an audit entry without a definition is a ValueError)."""
    if set(kernels) != {d.opcode for d in defs}:
        raise ValueError(f"audit entries without a definition: "
                         f"{sorted(set(kernels) - {d.opcode for d in defs})}")
    return cast(_Defs, tuple(dataclasses.replace(d, tflm=kernels[d.opcode]) for d in defs))


# ----- reading TFLite option tables -----

PADDING = {0: "SAME", 1: "VALID"}


def table(cls: Any, op: Any) -> Any:
    """The op's builtin options as an instance of ``cls`` (a tflite options class), or
    None when the model has none."""
    t = op.BuiltinOptions()
    if t is None:
        return None
    opt = cls()
    opt.Init(t.Bytes, t.Pos)
    return opt


def activation(o: Any) -> str:
    """The fused activation of an options table (NONE without one)."""
    return ACTIVATION_NAMES[o.FusedActivationFunction()] if o is not None else "NONE"
