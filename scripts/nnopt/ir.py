"""The graph IR: immutable tensors, operators and graphs.

A :class:`Graph` is subgraph 0 of a TFLite model as data. Passes never mutate it; they
return new graphs (``dataclasses.replace``). :meth:`Graph.verify` checks the invariants
every pass must keep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .cdefs import DTYPE_SIZE, DType
from .errors import PlanError

NUMPY_DTYPE: Mapping[DType, type[np.generic]] = {
    DType.FLOAT32: np.float32, DType.INT8: np.int8, DType.UINT8: np.uint8,
    DType.INT16: np.int16, DType.INT32: np.int32, DType.INT64: np.int64, DType.BOOL: np.bool_,
    DType.FLOAT64: np.float64, DType.UINT32: np.uint32,
}


@dataclass(frozen=True)
class Quant:
    """Affine quantisation: real = scale * (q - zero_point), per tensor or per channel."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1


@dataclass(frozen=True, eq=False)
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: DType
    quant: Quant | None = None
    data: bytes | None = None  # constant data (weights, bias, shape operands); None = activation
    # A variable tensor (TFLite ``is_variable``: SVDF's activation state, an LSTM's cell
    # and output state): state an op reads and updates in place, kept across
    # invocations in the persistent region (``Plan.state``), never in the arena.
    variable: bool = False
    # A resource variable's contents at reset (:mod:`nnopt.frontend.variables`: TFLM's
    # default fill overlaid by the constants CALL_ONCE's init subgraph assigns); None:
    # the reset rule of :func:`nnopt.passes.state.reset_byte`.
    init: bytes | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def is_state(self) -> bool:
        """A variable tensor: persistent state, neither a constant nor an activation."""
        return self.variable and self.data is None

    @property
    def num_elements(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.num_elements * DTYPE_SIZE[self.dtype]

    def array(self) -> np.ndarray:
        """The constant data as a numpy array of the tensor's shape."""
        if self.data is None:
            raise PlanError(f"tensor {self.index} ({self.name}) is not constant")
        return np.frombuffer(self.data, dtype=NUMPY_DTYPE[self.dtype]).reshape(self.shape)


# ----- operator options (typed, one dataclass per options family) -----

Activation = str  # "NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH", "SIGN_BIT"
Padding = str  # "SAME" or "VALID"


@dataclass(frozen=True)
class NoOptions:
    pass


@dataclass(frozen=True)
class PoolOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    activation: Activation = "NONE"
    # Set by passes.inplace_ops (PAD folding): (top, bottom, left, right) implicit padding
    # of a VALID window over the unpadded input; the padded tensor never exists.
    explicit_padding: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class ConvOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    dilation_h: int = 1
    dilation_w: int = 1
    activation: Activation = "NONE"
    depth_multiplier: int = 1  # depthwise only
    # Set by the fusion pass (Unlu 2020): a VALID max-pool with stride >= filter that
    # consumed this conv's output is folded in; the op's output is then the pooled tensor
    # and the full conv output never exists.
    fused_max_pool: PoolOptions | None = None
    # Set by passes.inplace_ops (PAD folding), as PoolOptions.explicit_padding.
    explicit_padding: tuple[int, int, int, int] | None = None
    # Set by the planner (memory first): the kernel's scratch would raise the arena at
    # this op, so the lowering picks a variant that needs none (slower, same results).
    scratch_free: bool = False


@dataclass(frozen=True)
class FullyConnectedOptions:
    activation: Activation = "NONE"
    keep_num_dims: bool = False


@dataclass(frozen=True)
class ActivationOptions:
    """Element-wise binary ops (ADD, SUB, MUL, ...) with a fused activation."""

    activation: Activation = "NONE"


@dataclass(frozen=True)
class ConcatOptions:
    axis: int
    activation: Activation = "NONE"


@dataclass(frozen=True)
class SoftmaxOptions:
    beta: float = 1.0


@dataclass(frozen=True)
class ReducerOptions:
    keep_dims: bool = False


@dataclass(frozen=True)
class LeakyReluOptions:
    alpha: float = 0.2


@dataclass(frozen=True)
class SqueezeOptions:
    squeeze_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class StridedSliceOptions:
    begin_mask: int = 0
    end_mask: int = 0
    ellipsis_mask: int = 0
    new_axis_mask: int = 0
    shrink_axis_mask: int = 0
    offset: bool = False


@dataclass(frozen=True)
class ResizeOptions:
    align_corners: bool = False
    half_pixel_centers: bool = False


@dataclass(frozen=True)
class DetectionPostProcessOptions:
    """The flexbuffer options of the TFLite_Detection_PostProcess custom op, as TFLM's
    kernel reads them (a missing key reads as 0 / false, except detections_per_class:
    100); the floats are float32 values."""

    max_detections: int = 0
    max_classes_per_detection: int = 0
    detections_per_class: int = 100
    use_regular_nms: bool = False
    nms_score_threshold: float = 0.0
    nms_iou_threshold: float = 0.0
    num_classes: int = 0
    y_scale: float = 0.0
    x_scale: float = 0.0
    h_scale: float = 0.0
    w_scale: float = 0.0


@dataclass(frozen=True)
class SvdfOptions:
    rank: int = 1
    activation: Activation = "NONE"


@dataclass(frozen=True)
class LstmOptions:
    """UNIDIRECTIONAL_SEQUENCE_LSTM: the cell gate's activation, clips, layout."""

    activation: Activation = "NONE"  # as TFLM without options (it refuses NONE)
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    time_major: bool = False


@dataclass(frozen=True)
class SplitOptions:
    """SPLIT and SPLIT_V: the number of outputs."""

    num_splits: int = 0


@dataclass(frozen=True)
class PackOptions:
    """PACK (values_count) and UNPACK (num): the number of tensors, and the axis."""

    count: int = 0
    axis: int = 0


@dataclass(frozen=True)
class BatchMatMulOptions:
    adj_x: bool = False
    adj_y: bool = False


@dataclass(frozen=True)
class GatherOptions:
    axis: int = 0
    batch_dims: int = 0


@dataclass(frozen=True)
class TransposeConvOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    activation: Activation = "NONE"
    # Set by the planner (memory first), as ConvOptions.scratch_free.
    scratch_free: bool = False


@dataclass(frozen=True)
class CumsumOptions:
    exclusive: bool = False
    reverse: bool = False


@dataclass(frozen=True)
class BlockSizeOptions:
    """DEPTH_TO_SPACE / SPACE_TO_DEPTH."""

    block_size: int = 1


@dataclass(frozen=True)
class MirrorPadOptions:
    mode: str = "REFLECT"  # or "SYMMETRIC"


@dataclass(frozen=True)
class VarHandleOptions:
    """VAR_HANDLE: which resource variable (TFLM's ``CreateIdIfNoneFound``); resolved by
    the frontend (:mod:`nnopt.frontend.variables`), never planned."""

    container: str = ""
    shared_name: str = ""


@dataclass(frozen=True)
class CallOnceOptions:
    """CALL_ONCE: the subgraph run at the first invocation; applied at reset by the
    frontend (:mod:`nnopt.frontend.variables`), never planned."""

    init_subgraph_index: int = 0


@dataclass(frozen=True)
class IfOptions:
    """IF: the subgraphs run when the condition is true / false; inlined by the
    frontend (:mod:`nnopt.frontend.control_flow`), never planned."""

    then_subgraph_index: int = 0
    else_subgraph_index: int = 0


@dataclass(frozen=True)
class WhileOptions:
    """WHILE: the condition and body subgraphs; inlined (the body once per iteration, the
    trip count evaluated at compile time) by :mod:`nnopt.frontend.control_flow`."""

    cond_subgraph_index: int = 0
    body_subgraph_index: int = 0


OpOptions = (
    NoOptions | ConvOptions | PoolOptions | FullyConnectedOptions | ActivationOptions
    | ConcatOptions | SoftmaxOptions | ReducerOptions | LeakyReluOptions | SqueezeOptions
    | StridedSliceOptions | ResizeOptions | SvdfOptions | LstmOptions | SplitOptions
    | PackOptions | BatchMatMulOptions | GatherOptions | CumsumOptions | BlockSizeOptions
    | MirrorPadOptions | TransposeConvOptions | DetectionPostProcessOptions
    | VarHandleOptions | CallOnceOptions | IfOptions | WhileOptions
)


@dataclass(frozen=True)
class Op:
    index: int
    opcode: str  # TFLite builtin name, e.g. "CONV_2D"
    inputs: tuple[int, ...]  # tensor indices; -1 marks an absent optional input
    outputs: tuple[int, ...]
    options: OpOptions = field(default_factory=NoOptions)


@dataclass(frozen=True)
class Expansion:
    """Weights the frontend stored wider than the file does (``kind`` "float16":
    float16 constants expanded to float32, :mod:`nnopt.frontend.float16`): ``tensors``
    constants, ``file_bytes`` as stored, ``rom_bytes`` as emitted."""

    kind: str
    tensors: int
    file_bytes: int
    rom_bytes: int

    @property
    def cost_bytes(self) -> int:
        """The ROM the expansion adds over the file's encoding."""
        return self.rom_bytes - self.file_bytes

    def to_json(self) -> dict[str, int | str]:
        return {"kind": self.kind, "tensors": self.tensors, "file_bytes": self.file_bytes,
                "rom_bytes": self.rom_bytes, "cost_bytes": self.cost_bytes}


@dataclass(frozen=True, eq=False)
class Graph:
    name: str
    tensors: tuple[Tensor, ...]
    ops: tuple[Op, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    # build-time weight expansions the frontend made (float16 -> float32, densified
    # sparse weights): what they cost in ROM, for the report; passes do not keep it
    expansions: tuple[Expansion, ...] = ()

    @cached_property
    def producer(self) -> Mapping[int, int]:
        """tensor index -> index of the op that writes it."""
        return {t: op.index for op in self.ops for t in op.outputs}

    @cached_property
    def consumers(self) -> Mapping[int, tuple[int, ...]]:
        """tensor index -> indices of the ops that read it (each op once)."""
        out: dict[int, list[int]] = {}
        for op in self.ops:
            for t in dict.fromkeys(op.inputs):
                if t >= 0:
                    out.setdefault(t, []).append(op.index)
        return {t: tuple(v) for t, v in out.items()}

    def activations(self, op: Op) -> tuple[int, ...]:
        """The distinct activation tensors an op reads (neither constant nor state)."""
        return tuple(t for t in dict.fromkeys(op.inputs)
                     if t >= 0 and not self.tensors[t].is_constant
                     and not self.tensors[t].is_state)

    @cached_property
    def state(self) -> tuple[int, ...]:
        """The variable tensors the ops read (persistent state), in tensor order."""
        used = {t for op in self.ops for t in op.inputs if t >= 0}
        return tuple(t.index for t in self.tensors if t.is_state and t.index in used)

    @property
    def state_bytes(self) -> int:
        return sum(self.tensors[t].nbytes for t in self.state)

    def op_bound(self, op: Op) -> int:
        """Bytes of an op's non-constant inputs plus outputs (distinct tensors)."""
        ts = dict.fromkeys(self.activations(op) + op.outputs)
        return sum(self.tensors[t].nbytes for t in ts)

    @cached_property
    def op_by_index(self) -> Mapping[int, Op]:
        """Ops by their index in the .tflite subgraph (fusion removes some indices)."""
        return {op.index: op for op in self.ops}

    @property
    def weight_bytes(self) -> int:
        used = {t for op in self.ops for t in op.inputs if t >= 0}
        return sum(t.nbytes for t in self.tensors if t.is_constant and t.index in used)

    def verify(self) -> None:
        """Check the IR invariants; raise PlanError naming the first broken one."""
        n = len(self.tensors)
        for i, tensor in enumerate(self.tensors):
            if tensor.index != i:
                raise PlanError(f"tensor at position {i} has index {tensor.index}")
            if any(d < 0 for d in tensor.shape):
                raise PlanError(f"tensor {i} ({tensor.name}) has a dynamic shape {tensor.shape}")
            if tensor.data is not None and len(tensor.data) != tensor.nbytes:
                raise PlanError(f"tensor {i} ({tensor.name}): {len(tensor.data)} data bytes, "
                                f"shape needs {tensor.nbytes}")
        writers: dict[int, int] = {}
        for k, op in enumerate(self.ops):
            if k and op.index <= self.ops[k - 1].index:
                raise PlanError(f"op indices not ascending at position {k} ({op.index})")
            for t in op.inputs:
                if t < -1 or t >= n:
                    raise PlanError(f"op {k} ({op.opcode}) reads tensor {t}, out of range")
            for t in op.outputs:
                if not 0 <= t < n:
                    raise PlanError(f"op {k} ({op.opcode}) writes tensor {t}, out of range")
                if t in writers:
                    raise PlanError(f"tensor {t} is written by ops {writers[t]} and {k}")
                if self.tensors[t].is_constant:
                    raise PlanError(f"op {k} ({op.opcode}) writes constant tensor {t}")
                if self.tensors[t].is_state:
                    raise PlanError(f"op {k} ({op.opcode}) writes variable tensor {t} as an "
                                    "output (state is updated in place by the op reading it)")
                writers[t] = k
        for t in self.inputs:
            if t in writers:
                raise PlanError(f"graph input {t} is written by op {writers[t]}")
        for t in (*self.inputs, *self.outputs):
            if self.tensors[t].is_state:
                raise PlanError(f"variable tensor {t} ({self.tensors[t].name}) is a graph "
                                "input or output")
        for op in self.ops:
            for t in op.inputs:
                if (t >= 0 and not self.tensors[t].is_constant and t not in writers
                        and not self.tensors[t].is_state and t not in self.inputs):
                    raise PlanError(f"op {op.index} ({op.opcode}) reads tensor {t} "
                                    "that nothing produces")
        for t in self.outputs:
            if t not in writers and t not in self.inputs:
                raise PlanError(f"graph output {t} is never produced")
