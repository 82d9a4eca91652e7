"""Emit ``<name>_model.c`` and ``<name>_model.h`` from a PlannedModel.

The generated file holds: constant weights (``NNRT_WEIGHTS``: flash), one statically
sized arena (``NNRT_ARENA``, exactly ``plan.arena_bytes``), one ``op_<k>`` function per
operator (its body: the op's lowering's kernel call, written by
:func:`nnopt.lowering.call.render`), ``invoke()`` calling them in planned order,
``<name>_prepare()`` (each kernel's exported argument check on the parameter struct its
op runs with, :func:`nnopt.lowering.call.prepare_of`; those structs at file scope) and
the ``nnrt_model_t`` descriptor. Everything is emitted from here; lowerings only supply
op bodies, as data.

With ``allocator="dynamic"`` the planned offsets are not used: every buffer is a handle
of nnrt's defragmenting allocator (``nnrt/alloc.h``), ``ptr(t)`` is
``nnrt_dyn_ptr(&<name>_heap, H_T<root>)`` (read inside the op, so never kept across a
compaction), and ``invoke()`` allocates each op's outputs before it and frees and
compacts after it, in the sequence :mod:`nnopt.passes.dynamic` predicted (the dynamic
plan the planned model carries, ``PlannedModel.facts``); the arena is that mode's
high-water mark (the aligned live-sum peak).

An :class:`Extension` adds to a model without subclassing the emitter: functions for
ops it writes itself, file-scope declarations, headers, the descriptor's ``attach``,
an ``invoke()`` wrapper and header lines (weight streaming, :mod:`nnopt.swap.codegen`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .. import __version__
from ..boards import spare_flash
from ..cdefs import ARRAY_C_TYPE, DType
from ..errors import PlanError
from ..firmware.cores import weight_layouts
from ..ir import Graph, Op, Tensor
from ..lowering import EmitContext
from ..lowering.call import (
    Call,
    Pointers,
    SpecDecl,
    prepare_of,
    render,
    render_params,
    render_prepare,
)
from ..lowering.fc import fit_flash
from ..ops import lowering_for
from ..plan import FeatureMapEntry, StoredEntry
from ..planfacts import ALLOCATORS, DynamicPlan
from ..planner import PlannedModel
from .bands import BandCalls
from .header_doc import io_macros, sources_comment, usage_block
from .spec import render_spec
from .stages import StageCalls
from .views import ViewLowerings


@dataclass(frozen=True)
class GeneratedSources:
    c_file: Path
    h_file: Path
    symbol: str  # the nnrt_model_t symbol, e.g. vww_96_int8_model
    specialized: tuple[int, ...] = ()  # ops with a <name>_spec_op<k> function (--specialize)


def _c_float(x: np.float32) -> str:
    """A C float32 literal of ``x``: decimal when finite; ``INFINITY``, ``-INFINITY``,
    ``NAN`` or ``-NAN`` (<math.h>, which :func:`_has_non_finite` arrays need) when not.
    A NaN keeps its sign, not its payload (C has no literal for one)."""
    if np.isnan(x):
        return "-NAN" if np.signbit(x) else "NAN"
    if np.isinf(x):
        return "-INFINITY" if x < 0 else "INFINITY"
    s = repr(float(x))
    return s + "f" if ("." in s or "e" in s) else s + ".0f"


def _has_non_finite(arr: np.ndarray) -> bool:
    """Whether float array ``arr`` holds an infinity or a NaN (its C needs <math.h>)."""
    return arr.dtype == np.float32 and not bool(np.isfinite(arr).all())


def _c_literal_list(arr: np.ndarray) -> str:
    flat = arr.reshape(-1)
    if flat.dtype == np.float32:
        items = [_c_float(x) for x in flat]
    elif flat.dtype == np.bool_:
        items = [str(int(x)) for x in flat]
    else:
        items = [str(int(x)) for x in flat.tolist()]
        if flat.dtype == np.int32:
            items = [f"({x})" if x == str(-(2**31)) else x for x in items]
            items = ["(-2147483647 - 1)" if x == "(-2147483648)" else x for x in items]
        if flat.dtype == np.int64:
            items = [f"INT64_C({x})" for x in items]
    lines = []
    for i in range(0, len(items), 24):
        lines.append("    " + ", ".join(items[i:i + 24]) + ",")
    return "\n".join(lines) if lines else "    0"


def _dtype_enum(t: Tensor) -> str:
    return f"NNRT_{DType(t.dtype).name}"


@dataclass(frozen=True)
class Extension:
    """What an extension adds to the generated model (see the module doc)."""

    attach: str = "NULL"  # the descriptor's attach function
    headers: tuple[str, ...] = ()
    # ops whose functions the extension writes: op_function(emitter, op) -> C text
    # (the emitter writes every other op, over the graph without these)
    own_ops: frozenset[int] = frozenset()
    op_function: Callable[[ModelEmitter, Op], str] | None = None
    declarations: Callable[[], list[str]] = list  # file scope, after the op functions' own
    external: frozenset[int] = frozenset()  # tensors no op but the extension's may use
    # the ops' invoke() is renamed to inner_invoke and wrapper(inner_invoke) becomes
    # <name>_invoke()
    inner_invoke: str | None = None
    invoke_wrapper: Callable[[str], list[str]] | None = None
    header_lines: tuple[str, ...] = field(default=())  # after the model's declaration
    check: Callable[[ModelEmitter], None] | None = None  # before any op is written


class ModelEmitter:
    """Writes the C of one planned model (``c_source``, ``h_source``)."""

    def __init__(self, planned: PlannedModel, name: str, allocator: str = "static",
                 extension: Extension | None = None) -> None:
        self.ext = extension or Extension()
        self.pm = planned
        self.g: Graph = planned.graph
        self.plan = planned.plan
        self.name = name
        self.offsets = {b.tensor: b.offset for b in self.plan.buffers}
        self.state = {e.tensor: e.offset for e in self.plan.state}  # persistent region
        self.scratch = {s.op: s.offset for s in self.plan.scratch}
        # several arenas (passes.region_place): the arena of each buffer in another RAM
        # region than the board's arena region
        self.region_of = {b.tensor: b.region for b in self.plan.buffers if b.region}
        self.scratch_region = {s.op: s.region for s in self.plan.scratch if s.region}
        # feature maps out of core (Plan.feature_maps): a tensor's offset depends on the
        # schedule position being emitted (cur_pos): the segment it is resident in
        self.pos_of = {idx: i for i, idx in enumerate(self.plan.schedule)}
        self.cur_pos: int | None = None
        self.fm_by_tensor: dict[int, list[FeatureMapEntry]] = {}
        for e in sorted(self.plan.feature_maps, key=lambda e: e.tile):
            self.fm_by_tensor.setdefault(e.tensor, []).append(e)
        self.const_decls: list[str] = []
        self.extra_decls: list[str] = []
        # the kernels' argument checks <name>_prepare() runs, and the parameter structs
        # they read (at file scope: the objects the op functions pass)
        self.checks: list[Call] = []
        self.checked_params: list[str] = []
        # --specialize (nnopt.lowering.specialize): recorded in the plan's options
        self.specialize: str = str(self.plan.options.get("specialize", "auto"))
        self.specialized: list[int] = []  # ops that got a <name>_spec_op<k> function
        # the weight layouts that pay on the plan's board's core (None: any layout),
        # those that widen the weights only where its flash holds them
        in_flash = sum(w.size for w in self.plan.weights if w.pool == "flash")
        self.core_layouts = fit_flash(self.g, weight_layouts(self.plan.board),
                                      spare_flash(self.plan.board, in_flash))
        self.headers: set[str] = set()
        self.non_finite = False  # a float constant is infinite or NaN: <math.h>
        self.weight_names: dict[int, str] = {}
        # constant tensors written in a lowering's layout (laid_out_weight): tensor ->
        # layout name; nothing else may then name their array
        self.weight_layouts: dict[int, str] = {}
        # RESHAPE-like ops whose output the plan stores in their input's buffer.
        # The plan facts the planner recorded (nnopt.planfacts): nothing is re-derived.
        facts = planned.facts
        self.root_of = {b.tensor: b.alias_of for b in self.plan.buffers
                        if b.alias_of is not None}
        self.aliased_ops = facts.aliased_ops
        # Ops the plan runs on sub-views (folded padding, row by row, in place, tiles).
        self.views = ViewLowerings(self.plan, self.g, facts)
        self.stages = StageCalls(self.plan, self.g, facts)
        # ops in row bands, feature maps stored as row chunks (passes.fm_bands)
        self.bands = BandCalls(self.plan, self.g, facts, f"{name}_fm")
        self.out_of_core = bool(self.plan.feature_maps or self.plan.stored)
        if allocator not in ALLOCATORS:
            raise ValueError(f"unknown allocator {allocator!r}")
        self.dyn: DynamicPlan | None = (
            facts.dynamic_for(allocator) if allocator != "static" else None)
        if self.out_of_core and allocator != "static":
            raise PlanError(f"the plan of {self.plan.model} moves feature maps out of core "
                            f"at fixed arena offsets; the {allocator} allocator moves them",
                            hint="use --allocator static")
        if self.plan.arenas and allocator != "static":
            raise PlanError(f"the plan of {self.plan.model} spreads activations over "
                            f"{len(self.plan.arenas) + 1} RAM regions; the {allocator} "
                            "allocator manages one arena",
                            hint="use --allocator static for this board")

    # ----- context callbacks -----
    def ptr(self, t: int) -> str:
        if t in self.ext.external:
            raise PlanError(f"tensor {t} is in external flash: only its streamed op may "
                            "use it")
        tensor = self.g.tensors[t]
        if tensor.is_constant:
            return f"((const void *){self._weight(tensor)})"
        if t in self.state:
            return f"((void *)({self.name}_state + {self.state[t]}u))"
        if self.dyn is not None:
            h = self.dyn.blocks[self.dyn.handle_of[t]]
            # a view (split output) sits at its byte offset within its root's block
            delta = self.offsets[t] - self.offsets[self.root_of.get(t, t)]
            if delta:
                return (f"((void *)((uint8_t *)nnrt_dyn_ptr(&{self.name}_heap, {h.name})"
                        f" + {delta}u))")
            return f"nnrt_dyn_ptr(&{self.name}_heap, {h.name})"
        seg = self.bands.segment(t, self.cur_pos) if self.cur_pos is not None else None
        if seg is not None:  # a stored feature map, whole at this position
            return f"((void *)({self.name}_arena + {seg}u))"
        if t in self.bands.stored:
            raise PlanError(f"tensor {t} is in storage as row chunks at this point: only "
                            "its banded ops may use it")
        off = self.offsets[t]
        if t in self.fm_by_tensor and self.cur_pos is not None:
            for e in self.fm_by_tensor[t]:
                if e.read_before <= self.cur_pos:
                    off = e.dst_offset  # read back into its later segment
        return f"((void *)({self.arena_name(self.region_of.get(t, ''))} + {off}u))"

    def fm_calls(self, pos: int, when: str) -> list[str]:
        """The tile store's calls around the op at schedule position ``pos``: read back
        (``before``) or seal and write (``after``) the evicted feature maps there."""
        out = []
        for e in sorted(self.plan.feature_maps, key=lambda e: e.tile):
            if when == "before" and e.read_before == pos:
                call = (f"nnrt_fmstore_get(&{self.name}_fm, {e.tile}u, "
                        f"{self.name}_arena + {e.dst_offset}u, {e.bytes}u)")
            elif when == "after" and e.write_after == pos:
                call = (f"nnrt_fmstore_put(&{self.name}_fm, {e.tile}u, "
                        f"{self.name}_arena + {e.src_offset}u, {e.bytes}u)")
            else:
                continue
            out += [f"    /* tensor {e.tensor}: tile {e.tile} ({e.bytes} B) "
                    f"{'read back from' if when == 'before' else 'sealed and written to'} "
                    f"{e.device} */", f"    s = {call};",
                    "    if (s != NNRT_OK) {", "        return s;", "    }"]
        return out + self.bands.whole(pos, when, f"{self.name}_arena")

    def fm_state(self) -> list[str]:
        """The tile store and ``<name>_fm_attach()`` when feature maps go out of core."""
        if not self.out_of_core:
            return []
        n = max([e.tile + 1 for e in self.plan.feature_maps]
                + [m.first_tile + m.chunks for m in self.plan.stored])
        name = self.name
        return [
            f"/* Feature maps out of core: {n} sealed tiles per inference "
            "(nnrt/fmstore.h). */",
            f"static nnrt_fmstore_t {name}_fm;",
            f"static uint32_t {name}_fm_offsets[{n}];",
            f"static uint32_t {name}_fm_lengths[{n}];", "",
            f"nnrt_status_t {name}_fm_attach(nnrt_tiledev_t *dev, const uint8_t *key, "
            "size_t key_len,",
            "                                uint32_t algorithm, const uint8_t salt[4])",
            "{",
            "    nnrt_fmstore_config_t cfg;",
            "",
            "    memset(&cfg, 0, sizeof(cfg));",
            "    cfg.dev = dev;",
            "    cfg.key = key;",
            "    cfg.key_len = key_len;",
            "    cfg.algorithm = algorithm;",
            "    memcpy(cfg.salt, salt, sizeof(cfg.salt));",
            f"    cfg.offsets = {name}_fm_offsets;",
            f"    cfg.lengths = {name}_fm_lengths;",
            f"    cfg.n_tiles = {n}u;",
            f"    return nnrt_fmstore_open(&{name}_fm, &cfg);",
            "}", "", *self.input_writers()]

    def app_inputs(self) -> list[tuple[int, StoredEntry]]:
        """(input number, stored entry) of the graph inputs that live in storage."""
        return [(i, self.bands.stored[t]) for i, t in enumerate(self.g.inputs)
                if t in self.bands.stored
                and self.bands.stored[t].written_by == "application"]

    def input_writers(self) -> list[str]:
        """``<name>_input_write()``: the application seals a stored graph input's row
        chunks as it writes them (nnrt_fmstore_input_write), one chunk at a time in the
        arena (free between inferences)."""
        ins = self.app_inputs()
        if not ins:
            return []
        name = self.name
        out = []
        at = 0
        for i, m in ins:
            total = m.chunk_bytes * (m.chunks - 1) + m.last_bytes
            out += [f"/* Graph input {i} (tensor {m.tensor}, {total} B) lives in {m.device}: "
                    f"{m.chunks} row chunks, tiles {m.first_tile}..{m.first_tile + m.chunks - 1},",
                    f" * written by the application through {name}_input_write(). */",
                    f"static nnrt_fm_input_t {name}_in{i} = {{{m.first_tile}u, {m.chunks}u, "
                    f"{m.chunk_bytes}u, {total}u, {name}_arena + {at}u, 0u}};"]
            at += (m.chunk_bytes + 16 + 15) // 16 * 16
        if at > max(self.plan.arena_bytes, 16):
            raise PlanError(f"the stored inputs' chunk buffers ({at} B) exceed the arena "
                            f"({self.plan.arena_bytes} B)",
                            hint="plan with a larger --sram budget")
        out += ["", f"nnrt_status_t {name}_input_write(uint32_t i, const void *data, size_t len)",
                "{"]
        for i, _ in ins:
            out += [f"    if (i == {i}u) {{",
                    f"        return nnrt_fmstore_input_write(&{name}_fm, &{name}_in{i}, "
                    "data, len);", "    }"]
        out += ["    return NNRT_ERR_ARG;", "}", ""]
        return out

    def arena_name(self, region: str) -> str:
        """The C array of an arena: ``<name>_arena`` (the board's arena region) or
        ``<name>_arena_<region>``."""
        return f"{self.name}_arena_{region}" if region else f"{self.name}_arena"

    def region_arenas(self) -> list[str]:
        """One declaration per arena in another region: the DTCM one in ``NNRT_DTCM``
        (nnrt/sections.h: the bare-metal ``.dtcm`` section; on Zephyr
        ``__dtcm_bss_section``, include/zephyr/linker/section_tags.h)."""
        out = []
        for region, size in sorted(self.plan.arenas.items()):
            if region != "dtcm":
                raise PlanError(f"no section for an arena in RAM region {region!r}",
                                hint="the generated code places extra arenas in dtcm only")
            out.append(f"/* Activation arena in {region}: {size} bytes "
                       "(passes.region_place). */")
            out.append(f"NNRT_DTCM static uint8_t {self.arena_name(region)}[{max(size, 16)}];")
        return out

    def weight_array(self, t: int) -> str | None:
        """The array of constant tensor t in the model source (None: not a constant
        here, or streamed from external flash)."""
        tensor = self.g.tensors[t]
        if not tensor.is_constant or t in self.ext.external:
            return None
        return self._weight(tensor)

    def laid_out_weight_for(self, op_index: int) -> Callable[[int, str, np.ndarray],
                                                              str | None]:
        def laid_out_weight(t: int, layout: str, arr: np.ndarray) -> str | None:
            """Constant tensor t written as ``arr`` (:attr:`EmitContext.laid_out_weight`):
            only when op ``op_index`` alone reads t and nothing has written t yet."""
            tensor = self.g.tensors[t]
            if self.weight_layouts.get(t) == layout and self.g.consumers.get(t) == (op_index,):
                return self.weight_names[t]  # the same op again (same layout, same bytes)
            if (not tensor.is_constant or t in self.ext.external or t in self.weight_names
                    or self.g.consumers.get(t, ()) != (op_index,) or t in self.g.outputs):
                return None
            plain = tensor.array()
            widened = plain.dtype == np.int8 and arr.dtype == np.int16  # lowering.fc
            # rows zero-padded to whole chunks of 4 (lowering.gemm_pairs.padded_depth)
            rows = plain.shape[0] if plain.ndim else 1
            padded = (arr.size > plain.size and arr.size % rows == 0
                      and arr.size // rows - plain.size // rows <= 3)
            if (arr.dtype != plain.dtype and not widened) or (arr.size != plain.size
                                                              and not padded):
                raise PlanError(f"tensor {t}: its {layout} layout has {arr.size} "
                                f"{arr.dtype} values, the tensor {plain.size} {plain.dtype}")
            self.weight_layouts[t] = layout
            return self._weight(tensor, arr, f" in the {layout} layout")
        return laid_out_weight

    def scratch_ptr(self, op_index: int) -> str:
        if op_index not in self.scratch:
            return "NULL"
        if self.dyn is not None:
            h = self.dyn.blocks[self.dyn.scratch_handle[op_index]]
            return f"nnrt_dyn_ptr(&{self.name}_heap, {h.name})"
        region = self.scratch_region.get(op_index, "")
        return f"((void *)({self.arena_name(region)} + {self.scratch[op_index]}u))"

    def _weight(self, tensor: Tensor, laid_out: np.ndarray | None = None,
                note: str = "") -> str:
        if tensor.index in self.weight_layouts and laid_out is None:
            raise PlanError(f"tensor {tensor.index} is written in the "
                            f"{self.weight_layouts[tensor.index]} layout of the op that "
                            "reads it: nothing else may read its array")
        if tensor.index not in self.weight_names:
            arr = tensor.array() if laid_out is None else laid_out
            ident = f"w{tensor.index}"
            ctype = ARRAY_C_TYPE[arr.dtype.name]
            self.non_finite |= _has_non_finite(arr)
            self.const_decls.append(
                f"/* tensor {tensor.index}: {tensor.name[:60]} {list(tensor.shape)}{note} */\n"
                f"NNRT_WEIGHTS static const {ctype} {ident}[{max(arr.size, 1)}] = {{\n"
                f"{_c_literal_list(arr)}\n}};")
            self.weight_names[tensor.index] = ident
        return self.weight_names[tensor.index]

    def const_array_for(self, op_index: int):  # type: ignore[no-untyped-def]
        def const_array(suffix: str, arr: np.ndarray) -> str:
            a = np.asarray(arr)
            ident = f"op{op_index}_{suffix}"
            ctype = ARRAY_C_TYPE[a.dtype.name]
            self.non_finite |= _has_non_finite(a)
            self.extra_decls.append(
                f"NNRT_WEIGHTS static const {ctype} {ident}[{max(a.size, 1)}] = {{\n"
                f"{_c_literal_list(a)}\n}};")
            return ident
        return const_array

    def decl_for(self, op_index: int):  # type: ignore[no-untyped-def]
        def decl(spec: SpecDecl) -> None:
            self.headers.add("nnrt/kernels/spec.h")
            if op_index not in self.specialized:
                self.specialized.append(op_index)
            self.extra_decls.append("\n".join(render_spec(spec)))
        return decl

    # ----- files -----
    def op_functions(self) -> list[str]:
        if self.ext.check is not None:
            self.ext.check(self)
        self.headers.update(self.ext.headers)
        own = self.ext.own_ops
        g = self.g if not own else replace(
            self.g, ops=tuple(op for op in self.g.ops if op.index not in own))
        out = []
        for op in g.ops:
            if op.index in self.aliased_ops or self.stages.call(op.index) is not None \
                    or self.bands.call(op.index) is not None:
                continue  # aliased (shares its input's bytes) or run by a tiled stage
            self.cur_pos = self.pos_of.get(op.index)
            defined = lowering_for(op)  # its definition's (the checks of its kernels)
            low = self.views.lowering_for(op) or defined
            self.headers.update(low.headers)
            ctx = EmitContext(
                graph=g, op=op, c_ptr=self.ptr,
                const_array=self.const_array_for(op.index),
                c_scratch=self.scratch_ptr(op.index),
                specialize=self.specialize, model=self.name, decl=self.decl_for(op.index),
                weight_array=self.weight_array,
                laid_out_weight=self.laid_out_weight_for(op.index),
                weight_layouts=self.core_layouts,
            )
            run, structs, checks = prepare_of(low.emit(ctx), f"op{op.index}_",
                                               defined.checks)
            self.headers.update(c.header for c in defined.checks
                                if any(call.fn == c.check for call in checks))
            for st in structs:
                self.checked_params += render_params(st)
            self.checks += checks
            body = render(run, ctx.pointers)
            self.cur_pos = None
            out.append(f"/* op {op.index}: {op.opcode} */\n"
                       f"static nnrt_status_t op_{op.index}(void)\n{{\n"
                       + "\n".join("    " + line if line else "" for line in body)
                       + "\n}\n")
        def ctx_for(op: Op) -> EmitContext:
            return EmitContext(graph=g, op=op, c_ptr=self.ptr,
                               const_array=self.const_array_for(op.index),
                               c_scratch=self.scratch_ptr(op.index),
                               specialize=self.specialize, model=self.name,
                               decl=self.decl_for(op.index),
                               weight_array=self.weight_array,
                               laid_out_weight=self.laid_out_weight_for(op.index),
                               weight_layouts=self.core_layouts)

        def arena_at(off: int) -> str:
            return f"((void *)({self.name}_arena + {off}u))"

        emitters: list[Callable[[], tuple[list[str], list[str], set[str]]]] = [
            lambda: self.stages.emit(ctx_for, arena_at, self.ptr, dynamic=self.dyn is not None),
            lambda: self.bands.emit(ctx_for, arena_at, self.ptr)]  # ops in row bands
        for emit in emitters:  # each one's constants, then its tables, in this order
            decls, funcs, headers = emit()
            self.extra_decls += decls
            self.headers.update(headers)
            out += funcs
        if self.ext.op_function is not None:
            for op in self.g.ops:
                if op.index in own:
                    self.cur_pos = self.pos_of.get(op.index)  # out-of-core offsets
                    out.append(self.ext.op_function(self, op))
            self.cur_pos = None
        self.extra_decls += self.ext.declarations()
        return out

    def prepare(self) -> str:
        """``<name>_prepare()``: each kernel's exported argument check on the parameters
        its op runs with, once before the first inference (TFLM's Prepare)."""
        return "\n".join(render_prepare(self.name, self.checks, Pointers(self.ptr)))

    def invoke(self) -> str:
        if self.dyn is not None:
            return self.dyn_invoke(self.dyn)
        inner = self.ext.inner_invoke or f"{self.name}_invoke"
        lines = [f"static nnrt_status_t {inner}(void)", "{",
                 "    nnrt_status_t s = NNRT_OK;", *self.state_check()]
        if self.out_of_core and self.app_inputs():
            lines += [f"    s = nnrt_fmstore_start(&{self.name}_fm); /* begun by "
                      f"{self.name}_input_write() */", "    if (s != NNRT_OK) {",
                      "        return s;", "    }"]
            for i, _ in self.app_inputs():
                lines += [f"    s = nnrt_fmstore_input_done(&{self.name}_fm, "
                          f"&{self.name}_in{i}); /* every byte written */",
                          "    if (s != NNRT_OK) {", "        return s;", "    }"]
        elif self.out_of_core:
            lines += [f"    s = nnrt_fmstore_begin(&{self.name}_fm); /* NNRT_ERR_ARG: not "
                      "attached */", "    if (s != NNRT_OK) {", "        return s;", "    }"]
        for pos, idx in enumerate(self.plan.schedule):
            op = self.g.op_by_index[idx]
            self.cur_pos = pos
            lines += self.fm_calls(pos, "before")
            staged = self.stages.call(idx)
            if staged == "":
                lines.append(f"    /* op {idx} ({op.opcode}): in a tiled stage */")
                continue
            if idx in self.aliased_ops:
                lines.append(f"    /* op {idx} ({op.opcode}): aliased, no code */")
            else:
                lines.append(f"    s = {staged or self.bands.call(idx) or f'op_{idx}'}();")
                lines.append("    if (s != NNRT_OK) {")
                lines.append("        return s;")
                lines.append("    }")
            lines += self.trace_outputs(op)
            lines += self.fm_calls(pos, "after")
        self.cur_pos = None
        lines += ["    return s;", "}"]  # s is read even when every op was aliased away
        if self.ext.invoke_wrapper is not None and self.ext.inner_invoke is not None:
            lines += ["", *self.ext.invoke_wrapper(self.ext.inner_invoke)]
        return "\n".join(lines)

    def trace_outputs(self, op: Op) -> list[str]:
        """Under NNRT_TRACE, after ``op``: its outputs (and state) to the tracer."""
        lines = ["#ifdef NNRT_TRACE"]
        for t in op.outputs:
            if self.views.is_view(t):
                continue  # strided inside a concatenation's output: traced there
            if self.cur_pos is not None and self.bands.in_storage(t, self.cur_pos):
                continue  # written band by band to storage: never whole in RAM
            lines.append(f"    nnrt_trace_tensor({t}u, {self.ptr(t)}, "
                         f"{self.g.tensors[t].nbytes}u);")
        return [*lines, *self.trace_state(op), "#endif"]

    def trace_state(self, op: Op) -> list[str]:
        """Trace lines for the state an op updated in place (its variable inputs)."""
        return [f"    nnrt_trace_tensor({t}u, {self.ptr(t)}, {self.g.tensors[t].nbytes}u);"
                for t in dict.fromkeys(op.inputs) if t in self.state]

    def state_check(self) -> list[str]:
        """invoke()'s first lines in a stateful model: the state is set (reset) before
        the first inference, as TFLM sets it when it allocates the tensors."""
        if not self.plan.state:
            return []
        return [f"    if (!{self.name}_state_ready) {{", f"        (void){self.name}_reset();",
                "    }"]

    def state_region(self) -> list[str]:
        """The persistent state region and ``<name>_reset()`` (stateful models only)."""
        p, name = self.plan, self.name
        if not p.state:
            return []
        lines = [f"/* Persistent state: {p.state_bytes} bytes, {len(p.state)} variable "
                 "tensor(s) kept across invocations, outside the arena. */",
                 f"NNRT_ARENA static uint8_t {name}_state[{max(p.state_bytes, 16)}];",
                 f"static uint8_t {name}_state_ready; /* 1: set by {name}_reset() */", "",
                 f"nnrt_status_t {name}_reset(void)", "{"]
        inits: list[str] = []  # reset contents other than one byte (CALL_ONCE's constants)
        body: list[str] = []
        for e in p.state:
            t = self.g.tensors[e.tensor]
            body.append(f"    /* tensor {e.tensor}: {t.name[:60]} {list(t.shape)} "
                        f"{t.dtype.name.lower()} */")
            if e.init_data:
                ident = f"{name}_state_init{e.tensor}"
                raw = np.frombuffer(bytes.fromhex(e.init_data), dtype=np.uint8)
                inits += [f"NNRT_WEIGHTS static const uint8_t {ident}[{raw.size}] = {{",
                          _c_literal_list(raw), "};"]
                body.append(f"    (void)memcpy({name}_state + {e.offset}u, {ident}, "
                            f"{e.size}u);")
            else:
                body.append(f"    (void)memset({name}_state + {e.offset}u, {e.init}, "
                            f"{e.size}u);")
        lines = [*lines[:3], *inits, *lines[3:], *body,
                 f"    {name}_state_ready = 1u;", "    return NNRT_OK;", "}", ""]
        return lines

    def dyn_state(self, dyn: DynamicPlan) -> list[str]:
        """Handles, allocator state and the prologue (graph inputs) of dynamic mode."""
        n, name = len(dyn.blocks), self.name
        lines = ["/* Allocator handles: root buffers (H_T<tensor>) and scratch (H_S<op>). */",
                 "enum {"]
        lines += [f"    {b.name} = {b.handle}, /* {b.size} bytes, steps {b.first}..{b.last} */"
                  for b in dyn.blocks]
        lines += [f"    {name.upper()}_N_HANDLES = {n}", "};", "",
                  f"static nnrt_dyn_t {name}_heap;",
                  f"static nnrt_dyn_block_t {name}_blocks[{max(n, 1)}];",
                  f"static nnrt_dyn_handle_t {name}_order[{max(n, 1)}];",
                  f"static uint8_t {name}_ready; /* 1: inputs allocated for the next invoke() */",
                  "",
                  f"const nnrt_dyn_t *{name}_allocator(void)", "{",
                  f"    return &{name}_heap;", "}", "",
                  "/* Start an inference: empty arena, zeroed counters, graph inputs allocated. */",
                  f"static nnrt_status_t {name}_begin(void)", "{",
                  "    nnrt_status_t s;", "",
                  f"    if ({name}_ready) {{", "        return NNRT_OK;", "    }",
                  f"    s = nnrt_dyn_init(&{name}_heap, {name}_arena, sizeof({name}_arena), "
                  f"{name}_blocks, {name}_order, {name.upper()}_N_HANDLES);",
                  "    if (s != NNRT_OK) {", "        return s;", "    }"]
        for h in dyn.prologue:
            lines += self._dyn_alloc(dyn, h)
        lines += [f"    {name}_ready = 1u;", "    return NNRT_OK;", "}"]
        return lines

    def _dyn_alloc(self, dyn: DynamicPlan, h: int) -> list[str]:
        b = dyn.blocks[h]
        return [f"    s = nnrt_dyn_alloc(&{self.name}_heap, {b.name}, {b.size}u);",
                "    if (s != NNRT_OK) {", "        return s;", "    }"]

    def dyn_invoke(self, dyn: DynamicPlan) -> str:
        name = self.name
        lines = [f"static nnrt_status_t {name}_invoke(void)", "{",
                 "    nnrt_status_t s;", "",
                 f"    s = {name}_begin();", "    if (s != NNRT_OK) {", "        return s;",
                 "    }", f"    {name}_ready = 0u; /* the next input() starts a new inference */",
                 *self.state_check()]
        for step in dyn.steps:
            idx = step.op
            op = self.g.op_by_index[idx]
            lines.append(f"    /* step {step.position}: op {idx} ({op.opcode}), "
                         f"{step.top_bytes} bytes live */")
            for h in step.alloc:
                lines += self._dyn_alloc(dyn, h)
            if idx in self.aliased_ops:
                lines.append("    /* aliased: its output is its input's handle, no code */")
            else:
                lines += [f"    s = op_{idx}();", "    if (s != NNRT_OK) {",
                          "        return s;", "    }"]
            lines += self.trace_outputs(op)
            for h in step.free:
                lines += [f"    s = nnrt_dyn_free(&{name}_heap, {dyn.blocks[h].name});",
                          "    if (s != NNRT_OK) {", "        return s;", "    }"]
            if step.compact:
                lines.append(f"    (void)nnrt_dyn_compact(&{name}_heap);")
        lines += ["#ifdef NNRT_TRACE",
                  "    {",
                  "        /* allocator statistics: high water, capacity, bytes moved, "
                  "compactions */",
                  "        uint32_t st[5];", "",
                  f"        st[0] = {name}_heap.high_water;",
                  f"        st[1] = {name}_heap.capacity;",
                  f"        st[2] = (uint32_t){name}_heap.bytes_moved;",
                  f"        st[3] = (uint32_t)({name}_heap.bytes_moved >> 32);",
                  f"        st[4] = {name}_heap.compactions;",
                  "        nnrt_trace_tensor(NNRT_DYN_TRACE_STATS, st, sizeof(st));",
                  "    }",
                  "#endif",
                  "    return NNRT_OK;", "}"]
        return "\n".join(lines)

    def descriptors(self, kind: str, tensors: tuple[int, ...]) -> str:
        rows = []
        for t in tensors:
            tt = self.g.tensors[t]
            dims = list(tt.shape) + [0] * (6 - len(tt.shape))
            scale = tt.quant.scale[0] if tt.quant else 0.0
            zp = tt.quant.zero_point[0] if tt.quant else 0
            name = tt.name.replace("\\", "/").replace('"', "'")
            rows.append(f'    {{"{name}", {_dtype_enum(tt)}, {len(tt.shape)}u, '
                        f"{{{', '.join(map(str, dims))}}}, {float(scale)!r}f, {zp}, "
                        f"{tt.nbytes}u}},")
        body = "\n".join(rows) if rows else "    {0}"
        return (f"static const nnrt_tensor_desc_t {self.name}_{kind}[{max(len(tensors), 1)}] "
                f"= {{\n{body}\n}};")

    def accessor(self, kind: str, tensors: tuple[int, ...]) -> str:
        lines = [f"static void *{self.name}_{kind}_ptr(uint32_t i)", "{"]
        if self.dyn is not None and kind == "input":
            lines += [f"    if ({self.name}_begin() != NNRT_OK) {{", "        return NULL;",
                      "    }"]
        app = {i for i, _ in self.app_inputs()} if kind == "input" else set()
        for i, t in enumerate(tensors):
            if i in app:
                lines += [f"    /* input {i} lives in storage: {self.name}_input_write() */",
                          "    (void)i;"]
                continue
            lines.append(f"    if (i == {i}u) {{")
            lines.append(f"        return {self.ptr(t)};")
            lines.append("    }")
        lines += ["    return NULL;", "}"]
        return "\n".join(lines)

    def c_source(self) -> str:
        ops = self.op_functions()
        g, plan, name = self.g, self.plan, self.name
        if self.dyn is not None:
            self.headers.add("nnrt/alloc.h")
        if self.out_of_core:
            self.headers.add("nnrt/fmstore.h")
        arena_bytes = self.dyn.arena_bytes if self.dyn is not None else plan.arena_bytes
        head = [
            f"/* Generated by nnopt {__version__} from model '{plan.model}'"
            + (f" (sha256 {plan.source_sha256[:16]})" if plan.source_sha256 else "")
            + ". Do not edit. */",
            f'#include "{name}_model.h"',
            "",
            "#include <stddef.h>",
            "#include <stdint.h>",
            *(["#include <math.h>"] if self.non_finite else []),
            *(["#include <string.h>"] if plan.state or self.out_of_core else []),
            "",
            '#include "nnrt/sections.h"',
        ] + [f'#include "{h}"' for h in sorted(self.headers)] + [
            "",
            f"/* Activation arena: {plan.arena_bytes} bytes, {plan.arena_strategy} plan, "
            f"live-sum peak {plan.peak_live_bytes} bytes. */"
            if self.dyn is None else
            f"/* Activation arena: {arena_bytes} bytes for the dynamic allocator (aligned "
            f"live-sum peak; {self.dyn.bytes_moved} bytes moved per inference). */",
            f"NNRT_ARENA static uint8_t {name}_arena[{max(arena_bytes, 16)}];",
            *self.region_arenas(),
            "",
            *self.state_region(),
            *self.fm_state(),
        ] + ([*self.dyn_state(self.dyn), ""] if self.dyn is not None else [])
        tail = [
            self.prepare(), "",
            self.invoke(), "",
            self.descriptors("inputs", g.inputs),
            self.descriptors("outputs", g.outputs), "",
            self.accessor("input", g.inputs), "",
            self.accessor("output", g.outputs), "",
            f"const nnrt_model_t {name}_model = {{",
            f'    "{name}", {len(g.inputs)}u, {len(g.outputs)}u, {name}_inputs, '
            f"{name}_outputs,",
            f"    {arena_bytes}u, {name}_input_ptr, {name}_output_ptr, {name}_invoke,",
            f"    {self.ext.attach}, {f'{name}_reset' if plan.state else 'NULL'},",
            f"    {name}_prepare,",
            "};", "",
        ]
        checked = [*self.checked_params, ""] if self.checked_params else []
        return "\n".join(head + self.const_decls + self.extra_decls + [""] + checked + ops
                         + tail)

    def h_source(self, c_text: str | None = None) -> str:
        """The header; ``c_text`` (the generated .c) lists the nnrt sources it needs."""
        guard = f"{self.name.upper()}_MODEL_H_"
        p = self.plan
        arena_bytes = self.dyn.arena_bytes if self.dyn is not None else p.arena_bytes
        dyn_decl = [] if self.dyn is None else [
            "/** The model's dynamic allocator (high-water mark, bytes moved ...). */",
            f"const nnrt_dyn_t *{self.name}_allocator(void);", ""]
        return "\n".join([
            f"/* Generated by nnopt {__version__}. Do not edit. */",
            f"#ifndef {guard}", f"#define {guard}", "",
            '#include "nnrt/model.h"', *(['#include "nnrt/alloc.h"'] if self.dyn else []), "",
            f"#define {self.name.upper()}_ARENA_BYTES {arena_bytes}u",
            f"#define {self.name.upper()}_WEIGHT_BYTES {p.weight_bytes}u",
            *([f"#define {self.name.upper()}_STATE_BYTES {p.state_bytes}u"] if p.state
              else []), "",
            *io_macros(self.g, self.name), "",
            *usage_block(self.g, self.name), "",
            *([*sources_comment(c_text), ""] if c_text is not None else []),
            "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
            f"/** {p.model}: {len(p.schedule)} ops, arena {arena_bytes} B, "
            f"weights {p.weight_bytes} B. */",
            f"extern const nnrt_model_t {self.name}_model;", "",
            "/** The kernels' argument checks on the model's parameters (TFLM's Prepare): "
            "NNRT_OK, or", " *  the first failing check's status. Run once before the first "
            "invoke() (the", " *  descriptor's prepare). */",
            f"nnrt_status_t {self.name}_prepare(void);",
            *(["", f"/** Set the model's persistent state ({p.state_bytes} B) as at start: "
               "each variable", " *  tensor to its zero point (int8) or 0, as TFLM's "
               "ResetVariableTensors does. */",
               f"nnrt_status_t {self.name}_reset(void);"] if p.state else []),
            *(["", *self.ext.header_lines] if self.ext.header_lines else []), "", *dyn_decl,
            *(["#include \"nnrt/fmstore.h\"", "",
               "/** Open the tile store the model's evicted feature maps go to (before the "
               "first", " *  invoke(); invoke() returns NNRT_ERR_ARG until then): a "
               "device, an AEAD key", " *  (NNRT_SWAP_ALG_*), a salt unique per key and "
               "power cycle. */",
               f"nnrt_status_t {self.name}_fm_attach(nnrt_tiledev_t *dev, const uint8_t "
               "*key, size_t key_len,",
               "                                uint32_t algorithm, const uint8_t salt[4]);",
               ""] if self.out_of_core else []),
            *(["/** Write the next len bytes of graph input i, which lives in storage "
               "(input(i) is", " *  NULL): row-major, in order, in pieces of any size; "
               "each complete row chunk is", " *  sealed and written. All of it before "
               "every invoke() (NNRT_ERR_ARG otherwise). */",
               f"nnrt_status_t {self.name}_input_write(uint32_t i, const void *data, "
               "size_t len);", ""] if self.app_inputs() else []),
            "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", "",
        ])


def generate(planned: PlannedModel, out_dir: Path, name: str | None = None,
             allocator: str = "static") -> GeneratedSources:
    """Write ``<name>_model.c/.h`` into out_dir; ``allocator``: "static" (planned
    offsets), "dynamic" (nnrt's defragmenting allocator, compaction after every op) or
    "dynamic-lazy" (compaction when an allocation needs it)."""
    ident = name or planned.plan.model
    out_dir.mkdir(parents=True, exist_ok=True)
    em = ModelEmitter(planned, ident, allocator)
    c_text = em.c_source()
    c_file = out_dir / f"{ident}_model.c"
    h_file = out_dir / f"{ident}_model.h"
    c_file.write_text(c_text)
    h_file.write_text(em.h_source(c_text))
    return GeneratedSources(c_file, h_file, f"{ident}_model", tuple(em.specialized))
