"""The compile driver: load -> plan -> swap -> generate -> write, as a library API.

A :class:`CompileRequest` (the model, the planning options, the swap step's options,
the swap key configuration and what to write where) goes in; :func:`compile_model`
returns a :class:`CompileResult` (the planned model, the dynamic allocator's plan, what
was written, and the budget verdict). The steps are also callable one by one:

- :func:`load`: the model file as a Graph (and its bytes, hashed into the Plan);
- :func:`plan`: the planning passes, the swap step (``nnopt.swap.pipeline``) and the
  dynamic allocator's plan (recorded in the planned model's facts, computed once:
  codegen and the blob writer read it), pure; with ``--emit blob`` also the plan the
  model blob carries (:func:`plan_for_blob`: a second plan when the first uses what
  nnrt's loader does not run, said in the progress and in ``Compiled.blob_replanned``);
  with an output directory, a key id without a configured key is refused here, before
  anything is written;
- :func:`generate`: the C sources of a planned model (``nnopt.codegen.c_model``, or
  ``nnopt.swap.codegen`` with the sealed blob when weights stream), in a directory;
- :func:`write`: every output of ``nnopt optimize`` (plan, report, picture, sources,
  model blob); the only step that writes.

Callers: ``nnopt optimize`` and ``nnopt run`` (``nnopt.commands``: parse the
arguments, call the driver, print), ``west nn-optimize`` (through ``nnopt optimize``),
the CMake build step of ``nnopt_add_model()`` (``zephyr/cmake/nnopt.cmake`` runs
``nnopt optimize``), the runner (:func:`nnopt.runner.build_planned` calls
:func:`generate`) and the benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .blob.writer import write_blob
from .codegen.c_model import GeneratedSources
from .codegen.c_model import generate as generate_c
from .errors import BudgetError, NnoptError, PlanError
from .frontend.onnx import internal_layout, is_onnx
from .frontend.tflite import load_model
from .ir import Graph
from .memory_budget import check_budget
from .planfacts import DynamicPlan
from .planner import PlannedModel, PlanOptions, plan_model, with_dynamic
from .report.plot import render
from .swap.codegen import generate_swapped
from .swap.pipeline import configured_key, plan_swap_for, swap_of, write_new_key
from .swap.provision import KeyStoreError
from .swap.sealed_blob import algorithm_id, generate_key
from .tflm.emit import TflmEmit, emit_tflite

#: What ``write`` can emit into the output directory: the generated C sources, a model
#: blob for nnrt's loader, the .tflite reordered and offline-planned for stock TFLM.
EMIT_KINDS: tuple[str, ...] = ("c", "blob", "tflite")


def _quiet(msg: str) -> None:
    """The default progress and warning sink: nothing."""


@dataclass(frozen=True)
class SwapKey:
    """Where the AEAD key of streamed weights comes from (``--swap-key``,
    ``--swap-key-file``, else ``$NNOPT_SWAP_KEY``/``$NNOPT_SWAP_KEY_FILE``), and the PSA
    key id the generated code opens the blob by (``--swap-key-id``: no key byte in the
    sources)."""

    hex: str | None = None
    file: Path | None = None
    key_id: int | None = None


@dataclass(frozen=True)
class CompileRequest:
    """Everything one compilation needs. ``out_dir``/``report_path``/``plot_path`` and
    ``emit`` only matter to :func:`write`."""

    model: Path
    options: PlanOptions = field(default_factory=PlanOptions)
    swap: str = "auto"  # nnopt.swap.placement.SWAP_MODES
    swap_staging: int | None = None  # bytes per staging buffer; None: the cost model's
    allocator: str = "static"  # nnopt.planfacts.ALLOCATORS
    key: SwapKey = SwapKey()
    out_dir: Path | None = None  # sources, <name>_plan.json, _report.json, _memory.png
    emit: tuple[str, ...] = ()  # EMIT_KINDS to write into out_dir; () = ("c",)
    report_path: Path | None = None  # the JSON report (also into out_dir)
    plot_path: Path | None = None  # the memory picture (also into out_dir)
    # fixed sizes of dynamic input dimensions (--input-shape NAME=D1,...): ONNX, .tflite
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    # ONNX models: inputs pinned to a value at build time (--input-value NAME=V1,...)
    input_values: tuple[tuple[str, tuple[float, ...]], ...] = ()


@dataclass(frozen=True)
class LoadedModel:
    graph: Graph
    data: bytes  # the file's bytes (b"" when it is not a regular file)


@dataclass(frozen=True)
class Compiled:
    """The request, the model as loaded and as planned (swap step included) and the dynamic
    allocator's plan: what :func:`write` needs."""

    request: CompileRequest
    loaded: LoadedModel
    planned: PlannedModel
    dynamic: DynamicPlan | None  # the dynamic allocator's plan (allocator != static)
    # the plan the model blob carries (with ``--emit blob``; :func:`plan_for_blob`), and
    # whether it is a second plan of its own (in-place ops and tiling off)
    blob_planned: PlannedModel | None = None
    blob_replanned: bool = False

    @property
    def arena_bytes(self) -> int:
        """The arena the build needs: the dynamic allocator's when it is used."""
        if self.dynamic is not None:
            return self.dynamic.arena_bytes
        return self.planned.plan.arena_bytes

    def budget_error(self) -> BudgetError | None:
        """The BudgetError of this plan against its board's budgets, None when it fits."""
        try:
            check_budget(replace(self.planned.plan, arena_bytes=self.arena_bytes),
                         self.request.options.board)
        except BudgetError as err:
            return err
        return None


@dataclass(frozen=True)
class GeneratedModel:
    sources: GeneratedSources
    blob: Path | None  # <name>_swap.bin next to the sources when weights stream


@dataclass(frozen=True)
class ModelBlob:
    path: Path
    bytes: int
    arena_bytes: int  # the arena nnrt's loader needs for it


@dataclass(frozen=True)
class Written:
    """What :func:`write` wrote."""

    plan_json: Path | None = None
    generated: GeneratedModel | None = None
    new_key: Path | None = None  # a random key written because none was configured
    model_blob: ModelBlob | None = None
    reports: tuple[Path, ...] = ()
    plots: tuple[Path, ...] = ()
    report: dict[str, Any] = field(default_factory=dict)  # the JSON report's content
    tflm: TflmEmit | None = None  # --emit tflite: what TFLM needs before and after


@dataclass(frozen=True)
class CompileResult:
    compiled: Compiled
    written: Written
    budget_error: BudgetError | None  # the plan does not fit its board (exit 2)


def load(path: Path, *, progress: Callable[[str], None] = _quiet,
         input_shapes: Mapping[str, tuple[int, ...]] | None = None,
         input_values: Mapping[str, tuple[float, ...]] | None = None) -> LoadedModel:
    """The model file (.tflite, or ONNX recognised by content) as a Graph (ModelError when
    unreadable or neither); ``input_shapes`` fixes dynamic ONNX input dimensions,
    ``input_values`` pins ONNX inputs to a value."""
    progress(f"reading {path}")
    data = path.read_bytes() if path.is_file() else b""
    return LoadedModel(load_model(path, input_shapes or None,
                                  input_values=input_values or None), data)


def plan(request: CompileRequest, loaded: LoadedModel | None = None, *,
         progress: Callable[[str], None] = _quiet) -> Compiled:
    """Plan the model, then the swap step, then (allocator != static) the dynamic plan;
    with an output directory and a key id, resolve the key now so that a key id without
    a key is refused before anything is written."""
    model = loaded if loaded is not None else load(request.model,
                                                   input_shapes=dict(request.input_shapes),
                                                   input_values=dict(request.input_values))
    opts = request.options
    progress(f"planning {len(model.graph.ops)} ops")
    planned = plan_swap_for(plan_model(model.graph, opts, source_bytes=model.data),
                            opts.board, request.swap, request.swap_staging)
    if request.allocator != "static":
        planned = with_dynamic(planned, request.allocator)  # the one dynamic plan
    blob_planned = None
    if request.out_dir and "blob" in request.emit:
        blob_planned = plan_for_blob(planned, model, opts, progress=progress)
    compiled = Compiled(request, model, planned, planned.facts.dynamic, blob_planned,
                        blob_planned is not None and blob_planned.plan is not planned.plan)
    if request.out_dir and request.key.key_id is not None and swap_of(planned.plan) \
            and configured_swap_key(compiled) is None:
        raise _no_key_for_id()
    return compiled


def plan_for_blob(planned: PlannedModel, loaded: LoadedModel, options: PlanOptions, *,
                  progress: Callable[[str], None] = _quiet) -> PlannedModel:
    """The plan a model blob carries, with its dynamic plan (the request's when it has
    one). nnrt's loader runs the classic plan: overlapping buffers, in-place ops and
    tiles are static-plan techniques, so a plan using them is planned again from
    ``options`` with ``inplace_ops`` and ``tiling`` off (a second :func:`~nnopt.planner.plan_model`,
    named in the progress)."""
    plan_ = planned.plan
    if plan_.overlaps or plan_.inplace_ops or plan_.stages:
        progress("planning the model blob again: in-place ops and tiling off (nnrt's "
                 "loader runs the classic plan)")
        opts = replace(options, inplace_ops="off", tiling="off")
        planned = plan_model(loaded.graph, opts, source_bytes=loaded.data)
    return with_dynamic(planned, "any")


def configured_swap_key(compiled: Compiled) -> bytes | None:
    """The configured key (``SwapKey``, else the environment) when weights stream, else
    None; a malformed or unreadable key is a BlobError."""
    swap = swap_of(compiled.planned.plan)
    if swap is None:
        return None
    key = compiled.request.key
    cfg = configured_key(swap, key_hex=key.hex, key_file=key.file)
    return cfg[0] if cfg is not None else None


def _no_key_for_id() -> KeyStoreError:
    return KeyStoreError(
        "--swap-key-id: the blob must be sealed with the key the device holds under "
        "that id, and no key is configured",
        hint="pass it with --swap-key HEX, --swap-key-file PATH or $NNOPT_SWAP_KEY "
        "(the build machine's copy; the sources will not contain it)")


def generate(planned: PlannedModel, out_dir: Path, *, allocator: str = "static",
             key: bytes | None = None, key_id: int | None = None) -> GeneratedModel:
    """``<name>_model.c/.h`` (and ``<name>_swap.bin`` when the plan streams weights,
    sealed with ``key``) in ``out_dir``. With ``key_id`` the sources open the blob by
    that PSA key id (the device holds the key) and contain no key byte."""
    swap = swap_of(planned.plan)
    if swap is None:
        if allocator != "static":  # kept when driver.plan recorded it
            planned = with_dynamic(planned, allocator)
        return GeneratedModel(generate_c(planned, out_dir, allocator=allocator), None)
    if allocator != "static":
        raise PlanError(f"streamed weights need the static allocator, not {allocator!r}",
                        hint="drop --allocator dynamic, or use --swap off")
    if key is None:
        raise PlanError("a model with streamed weights needs a swap key",
                        hint="pass --swap-key HEX or --swap-key-file PATH")
    out = generate_swapped(planned, out_dir, swap, key, key_id=key_id)
    return GeneratedModel(out.sources, out.blob)


def run_key(compiled: Compiled, *, blob: Path | None = None,
            progress: Callable[[str], None] = _quiet) -> bytes | None:
    """The key ``nnopt run`` builds with: the configured key; without one, a random key
    for the run's own blob (with a key id: only when ``blob`` replaces that blob, the
    program holds no key)."""
    swap = swap_of(compiled.planned.plan)
    key_id = compiled.request.key.key_id
    if swap is None:
        if blob is not None or key_id is not None:
            raise NnoptError(f"{'--blob' if blob is not None else '--swap-key-id'} "
                             "given but this plan streams no weights",
                             hint="add --swap force (or --swap auto on a board whose weights "
                             "exceed its internal flash)")
        return None
    key = configured_swap_key(compiled)
    if key is not None:
        return key
    if key_id is not None:
        if blob is None:
            raise NnoptError("--swap-key-id: this run's blob must be sealed with the key "
                             "the key store holds under that id, and no key is configured",
                             hint="pass it with --swap-key HEX / --swap-key-file PATH / "
                             "$NNOPT_SWAP_KEY, or run on an existing blob with --blob PATH")
        # the program opens --blob by key id; the generated blob is never read
        return generate_key(algorithm_id(swap.algorithm))
    if blob is not None:
        raise NnoptError(f"--blob {blob}: no swap key configured",
                         hint="pass the key the blob was sealed with: --swap-key HEX or "
                         "--swap-key-file PATH (e.g. the <name>_swap.key next to it)")
    progress("no swap key configured: sealing this run's blob with a random key")
    return generate_key(algorithm_id(swap.algorithm))


def report_json(compiled: Compiled) -> dict[str, Any]:
    """The JSON report: the Plan's JSON, the source ops, the allocator and its plan."""
    pm = compiled.planned
    d = pm.plan.to_json()
    d["ops"] = {str(op.index): op.opcode for op in pm.source.ops}
    d["allocator"] = compiled.request.allocator
    if compiled.loaded.graph.expansions:  # build-time weight expansions and their ROM cost
        d["expansions"] = [e.to_json() for e in compiled.loaded.graph.expansions]
    if is_onnx(compiled.loaded.data):
        d["layout"] = internal_layout(pm.graph)  # inside; the interface keeps ONNX's
    if compiled.dynamic is not None:
        d["dynamic"] = compiled.dynamic.to_json()
    return d


def write(compiled: Compiled, *, progress: Callable[[str], None] = _quiet,
          warn: Callable[[str], None] = _quiet) -> Written:
    """Write every output the request asks for: into ``out_dir`` the plan, the sources
    (with the sealed blob and, without a configured key, a new key file) or the model
    blob, the JSON report and the picture; ``report_path`` and ``plot_path`` too."""
    request = compiled.request
    unknown = sorted(set(request.emit) - set(EMIT_KINDS))
    if unknown:
        raise NnoptError(f"unknown output kind(s) {', '.join(unknown)}",
                         hint="emit " + " or ".join(EMIT_KINDS))
    if request.emit and not request.out_dir:
        raise NnoptError("--emit needs an output directory", hint="add -o OUTDIR")
    pm = compiled.planned
    plan_ = pm.plan
    report = report_json(compiled)
    json_paths = [request.report_path] if request.report_path else []
    plot_paths = [request.plot_path] if request.plot_path else []
    plan_json = generated = new_key = model_blob = tflm = None
    out = request.out_dir
    if out:
        out.mkdir(parents=True, exist_ok=True)
        json_paths.append(out / f"{plan_.model}_report.json")
        plot_paths.append(out / f"{plan_.model}_memory.png")
        plan_json = out / f"{plan_.model}_plan.json"
        plan_json.write_text(json.dumps(plan_.to_json(), indent=1))
        emit = request.emit or ("c",)
        if "c" in emit:
            progress("generating C sources")
            key = configured_swap_key(compiled)
            if key is None and swap_of(plan_) is not None:
                if request.key.key_id is not None:
                    raise _no_key_for_id()
                new_key = out / f"{plan_.model}_swap.key"
                swap = swap_of(plan_)
                assert swap is not None
                key = write_new_key(swap, new_key)
                warn(f"no swap key configured: generated a random key in {new_key}; pass "
                     "--swap-key or --swap-key-file (or set $NNOPT_SWAP_KEY) for "
                     "reproducible builds")
            generated = generate(pm, out, allocator=request.allocator, key=key,
                                 key_id=request.key.key_id)
            report["specialized_ops"] = list(generated.sources.specialized)
        if "blob" in emit:
            progress("writing the model blob")
            model_blob = _write_model_blob(compiled, out)
        if "tflite" in emit:
            tflm = _write_tflm_model(compiled, out, progress)
            report["tflm_arena_bytes_before"] = tflm.arena_before
            report["tflm_arena_bytes_after"] = tflm.arena_after
            report["tflm_emit"] = tflm.to_json()
    for path in json_paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1))
    for path in plot_paths:
        render(plan_, pm.graph, path)
    return Written(plan_json, generated, new_key, model_blob, tuple(json_paths),
                   tuple(plot_paths), report, tflm)


def _write_tflm_model(compiled: Compiled, out: Path,
                      progress: Callable[[str], None]) -> TflmEmit:
    """<name>_nnopt.tflite for stock TFLM (nnopt.tflm.emit): nnopt's order and offline
    memory plan, or the fallback TFLM runs in less; nothing when none is no worse."""
    if is_onnx(compiled.loaded.data):
        raise NnoptError("--emit tflite rewrites a .tflite model; this one is ONNX",
                         hint="convert it to .tflite first, or emit c / blob")
    progress("planning for TFLM and measuring its arena (tflite-micro interpreter)")
    return emit_tflite(compiled.loaded.data, compiled.planned.plan.model, out,
                       time_budget_s=compiled.request.options.schedule_time_budget_s)


def _write_model_blob(compiled: Compiled, out: Path) -> ModelBlob:
    """<name>.nnmb for nnrt's loader, of the plan :func:`plan` made for it."""
    bpm = compiled.blob_planned
    static = bpm.plan if bpm is not None else compiled.planned.plan
    if static.arenas or static.feature_maps or static.stored:
        what = (f"spreads its activations over {len(static.arenas) + 1} RAM regions ("
                + ", ".join(["the arena region", *sorted(static.arenas)]) + ")"
                if static.arenas else "moves feature maps out of core (tile store)")
        raise PlanError(f"the model blob cannot carry this plan: {static.model} "
                        f"{what}, and nnrt's blob loader runs one arena in one region",
                        hint="emit C instead (--emit c, the static allocator: one arena "
                        "per RAM region, the tile store's calls in invoke())")
    if bpm is None:
        raise PlanError("no plan for the model blob: this Compiled was not made by "
                        "driver.plan with 'blob' in the request's emit",
                        hint="plan with CompileRequest(emit=('blob',), out_dir=...)")
    blob = write_blob(bpm)
    path = out / f"{compiled.planned.plan.model}.nnmb"
    path.write_bytes(blob)
    return ModelBlob(path, len(blob), bpm.facts.dynamic_events().arena_bytes)


def compile_model(request: CompileRequest, *, progress: Callable[[str], None] = _quiet,
                  warn: Callable[[str], None] = _quiet) -> CompileResult:
    """load -> plan -> swap -> generate -> write; the budget verdict in the result (a
    plan over budget is still written, as ``nnopt optimize`` does, then exits 2)."""
    compiled = plan(request, progress=progress)
    written = write(compiled, progress=progress, warn=warn)
    return CompileResult(compiled, written, compiled.budget_error())
