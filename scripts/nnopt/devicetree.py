"""A Zephyr devicetree as nnopt board data: the memory regions, the CPU and its FPU.

The devicetree is an ``edtlib.EDT`` (Zephyr's python-devicetree,
``$ZEPHYR_BASE/scripts/dts/python-devicetree/src/devicetree/edtlib.py``), either the one
a Zephyr build pickled into ``<build>/zephyr/edt.pickle`` (``scripts/dts/gen_edt.py``,
run by ``cmake/modules/dts.cmake``: ``EDT_PICKLE``) or one made from a board's sources
outside a build (:mod:`nnopt.zephyr_tree`). :func:`board_from_edt` reads only what
every EDT offers (``chosen_nodes``, ``nodes``, a node's ``path``, ``name``, ``labels``,
``compats``, ``regs`` and ``props``), so it works on any object of that shape and is
testable without Zephyr.

What becomes a region (``Region.node`` names the devicetree node):

- the chosen nodes ``zephyr,sram`` (region ``sram``, the arena's), ``zephyr,flash``
  (``flash``, ROM), ``zephyr,dtcm``, ``zephyr,itcm`` and ``zephyr,ccm`` (Zephyr's
  ``include/zephyr/linker/devicetree_regions.h`` and the Cortex-M linker scripts place
  sections in these by their chosen names);
- every node with a ``zephyr,memory-region`` property (the ``zephyr,memory-region``
  binding, ``dts/bindings/base/zephyr,memory-common.yaml``), named by that property,
  unless it is a chosen node already or overlaps a region taken before it.

edtlib is imported lazily (:func:`import_edtlib`): the rest of nnopt never needs Zephyr.
"""

from __future__ import annotations

import importlib
import os
import pickle
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from .boards import Board, Region
from .errors import EXIT_USAGE, BoardError, UsageError

#: Chosen node -> (region name, kind), in the order regions are taken.
CHOSEN_REGIONS: tuple[tuple[str, str, str], ...] = (
    ("zephyr,sram", "sram", "ram"),
    ("zephyr,flash", "flash", "rom"),
    ("zephyr,dtcm", "dtcm", "ram"),
    ("zephyr,itcm", "itcm", "ram"),
    ("zephyr,ccm", "ccm", "ram"),
)

#: CPU compatible (Zephyr's dts/bindings/cpu/*.yaml) -> (GCC -mcpu, -mfpu or None).
#: Only the cores whose compatible fixes the FPU carry one: a Cortex-M7 or M33 may have
#: none, a single- or a double-precision unit (the SoC's Kconfig says, not the
#: devicetree), so their FPU is left unknown.
CPU_COMPATIBLES: dict[str, tuple[str, str | None]] = {
    "arm,cortex-m0": ("cortex-m0", None),
    "arm,cortex-m0+": ("cortex-m0plus", None),
    "arm,cortex-m1": ("cortex-m1", None),
    "arm,cortex-m3": ("cortex-m3", None),
    "arm,cortex-m4": ("cortex-m4", None),
    "arm,cortex-m4f": ("cortex-m4", "fpv4-sp-d16"),
    "arm,cortex-m7": ("cortex-m7", None),
    "arm,cortex-m23": ("cortex-m23", None),
    "arm,cortex-m33": ("cortex-m33", None),
    "arm,cortex-m33f": ("cortex-m33", "fpv5-sp-d16"),
    "arm,cortex-m55": ("cortex-m55", None),
    "arm,cortex-m55f": ("cortex-m55", None),
    "arm,cortex-m85": ("cortex-m85", None),
}

PYTHON_DEVICETREE = Path("scripts") / "dts" / "python-devicetree" / "src"


class DevicetreeError(BoardError):
    """A devicetree cannot be read or has no usable memory."""


class UnknownZephyrBoardError(DevicetreeError, UsageError):
    """A board name that is neither nnopt's nor one of the Zephyr tree's (or no tree to
    look in): a usage error, like nnopt's own unknown board."""

    exit_code = EXIT_USAGE


def import_edtlib(zephyr_base: Path | None = None) -> ModuleType:
    """Zephyr's ``devicetree.edtlib``: installed (``pip install devicetree``), else from
    ``zephyr_base`` (or ``$ZEPHYR_BASE``)'s ``scripts/dts/python-devicetree/src``."""
    base = zephyr_base or (Path(os.environ["ZEPHYR_BASE"])
                           if os.environ.get("ZEPHYR_BASE") else None)
    if base is not None:
        src = os.fspath(base / PYTHON_DEVICETREE)
        if (base / PYTHON_DEVICETREE).is_dir() and src not in sys.path:
            # Zephyr's copy first: an edt.pickle names the classes of the edtlib that
            # wrote it, and a build's is that tree's.
            sys.path.insert(0, src)
    try:
        return importlib.import_module("devicetree.edtlib")
    except ImportError as err:
        where = (f"{base / PYTHON_DEVICETREE} has no importable devicetree package"
                 if base is not None else "ZEPHYR_BASE is not set")
        raise DevicetreeError(
            f"cannot import Zephyr's python-devicetree (edtlib): {where} ({err})",
            hint="set ZEPHYR_BASE to a Zephyr tree (its scripts/dts/python-devicetree/src "
                 "has edtlib), or pip install devicetree") from err


def load_edt_pickle(path: Path, zephyr_base: Path | None = None) -> Any:
    """The ``edtlib.EDT`` a Zephyr build pickled (``<build>/zephyr/edt.pickle``)."""
    import_edtlib(zephyr_base)
    try:
        with path.open("rb") as f:
            # The build's own file, written by Zephyr's gen_edt.py (write_pickled_edt).
            return pickle.load(f)
    except OSError as err:
        raise DevicetreeError(f"cannot read {path}: {err.strerror or err}",
                              hint="pass a Zephyr build's zephyr/edt.pickle "
                                   "(it exists once CMake has configured the build)") from err
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as err:
        raise DevicetreeError(f"{path} is not a pickled devicetree ({err})",
                              hint="pass <build>/zephyr/edt.pickle of a Zephyr build; "
                                   "ZEPHYR_BASE must be the tree that made it") from err


def _reg(node: Any) -> tuple[int, int] | None:
    regs = getattr(node, "regs", None) or []
    if not regs:
        return None
    addr, size = regs[0].addr, regs[0].size
    if addr is None or not size:
        return None
    return int(addr), int(size)


def _spi_nor_window(node: Any) -> tuple[int, int] | None:
    """A ``jedec,spi-nor`` flash (``reg`` = its chip select) read through its controller's
    memory-mapped window: the parent's second ``reg`` entry (e.g. SiFive FE310's spi0,
    ``dts/riscv/sifive/riscv32-fe310.dtsi``), its size capped by the part's ``size``
    property, which is in bits (``dts/bindings/mtd/jedec,spi-nor-common.yaml``)."""
    if "jedec,spi-nor" not in (getattr(node, "compats", None) or []):
        return None
    parent = getattr(node, "parent", None)
    regs = getattr(parent, "regs", None) or []
    if len(regs) < 2 or regs[1].addr is None or not regs[1].size:
        return None
    bits = _prop(node, "size")
    size = int(regs[1].size)
    if isinstance(bits, int) and bits > 0:
        size = min(size, bits // 8)
    return int(regs[1].addr), size


def _prop(node: Any, name: str) -> Any:
    prop = (getattr(node, "props", None) or {}).get(name)
    return None if prop is None else prop.val


def _node_label(node: Any) -> str:
    labels = list(getattr(node, "labels", None) or [])
    return f"{labels[0]}: {node.path}" if labels else str(node.path)


def _region_name(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", text).lower()


def _kind(node: Any, name: str) -> str:
    compats = list(getattr(node, "compats", None) or [])
    flashy = any("flash" in c for c in compats) or "flash" in name.lower()
    return "rom" if flashy else "ram"


def _cpu(nodes: Iterable[Any]) -> tuple[str, str | None, int]:
    """(cpu, fpu, clock_hz) of the first CPU node (``/cpus/cpu@0`` in every Zephyr
    devicetree with one core); ``("unknown", None, 0)`` without one."""
    cpus = sorted((n for n in nodes if str(n.path).startswith("/cpus/cpu")),
                  key=lambda n: str(n.path))
    if not cpus:
        return "unknown", None, 0
    cpu = cpus[0]
    compats = list(getattr(cpu, "compats", None) or [])
    clock = _prop(cpu, "clock-frequency")
    clock_hz = int(clock) if isinstance(clock, int) else 0
    for c in compats:
        if c in CPU_COMPATIBLES:
            name, fpu = CPU_COMPATIBLES[c]
            return name, fpu, clock_hz
    for c in compats:
        if "riscv" in c or c.startswith(("sifive,", "starfive,")):
            return "riscv", None, clock_hz
    return (compats[0].split(",", 1)[-1] if compats else "unknown"), None, clock_hz


def cpu_arch(cpu: str) -> str:
    """Zephyr's ``ARCH`` for a :func:`board_from_edt` CPU name (``arm``, ``riscv``...)."""
    if cpu.startswith("cortex-"):
        return "arm64" if cpu.startswith("cortex-a") and "53" in cpu else "arm"
    return "riscv" if cpu == "riscv" else "unknown"


def board_from_edt(edt: Any, name: str, *, description: str | None = None,
                   source: str = "devicetree") -> Board:
    """The :class:`~nnopt.boards.Board` of a devicetree (an ``edtlib.EDT`` or any object
    with its ``chosen_nodes`` and ``nodes``). ``name`` is the Zephyr board target."""
    chosen: Mapping[str, Any] = getattr(edt, "chosen_nodes", None) or {}
    nodes = list(getattr(edt, "nodes", None) or [])
    regions: dict[str, Region] = {}
    taken: set[str] = set()
    spans: list[tuple[int, int]] = []

    def add(region_name: str, kind: str, node: Any) -> None:
        reg = _reg(node) or (_spi_nor_window(node) if kind == "rom" else None)
        if reg is None or region_name in regions or str(node.path) in taken:
            return
        origin, size = reg
        if any(origin < end and start < origin + size for start, end in spans):
            return  # overlaps a region taken before (a chosen node's alias, a bank)
        regions[region_name] = Region(region_name, kind, origin, size, node=_node_label(node))
        taken.add(str(node.path))
        spans.append((origin, origin + size))

    for prop, region_name, kind in CHOSEN_REGIONS:
        node = chosen.get(prop)
        if node is not None:
            add(region_name, kind, node)
    for node in sorted(nodes, key=lambda n: str(n.path)):
        mr = _prop(node, "zephyr,memory-region")
        if isinstance(mr, str) and mr:
            add(_region_name(mr), _kind(node, mr), node)
    if "sram" not in regions:
        raise DevicetreeError(
            f"the devicetree of {name} has no usable zephyr,sram chosen node "
            "(a node with a reg address and size)",
            hint="pick a board with RAM in its devicetree, or describe it in "
                 "boards/nnopt/<name>.yaml")
    cpu, fpu, clock_hz = _cpu(nodes)
    sram = regions["sram"]
    return Board(
        name=name,
        description=description or (f"Zephyr board {name} ({cpu}, from its devicetree: "
                                    f"{sram.size} B SRAM at {sram.node})"),
        zephyr_board=name,
        cpu=cpu,
        fpu=fpu,
        clock_hz=clock_hz,
        regions=regions,
        arena_region="sram",
        emulation=None,
        source=source,
    )


def board_from_edt_pickle(path: Path, name: str | None = None,
                          zephyr_base: Path | None = None) -> Board:
    """The board of a Zephyr build's ``edt.pickle`` (named ``name``, default ``devicetree``)."""
    edt = load_edt_pickle(path, zephyr_base)
    return board_from_edt(edt, name or "devicetree", source=f"devicetree {path}")


def board_data(board: Board) -> dict[str, Any]:
    """``board`` in the board-file format :meth:`Board.from_data` reads back (the cache)."""
    return {
        "name": board.name,
        "description": board.description,
        "zephyr_board": board.zephyr_board,
        "cpu": board.cpu,
        "fpu": board.fpu,
        "clock_hz": board.clock_hz,
        "regions": {r.name: {"kind": r.kind, "origin": r.origin, "size": r.size,
                             "node": r.node} for r in board.regions.values()},
        "arena_region": board.arena_region,
        "source": board.source,
    }


def budget_table(board: Board) -> str:
    """The board's regions as a table (what a Zephyr build prints at configure time)."""
    lines = [f"{board.name}: {board.cpu}" + (f" + {board.fpu}" if board.fpu else "")
             + (f" at {board.clock_hz / 1e6:g} MHz" if board.clock_hz else "")]
    lines.append(f"  {'region':<16} {'kind':<4} {'origin':>10} {'size (B)':>12}  node")
    for r in board.regions.values():
        arena = "  <- arena" if r.name == board.arena_region else ""
        lines.append(f"  {r.name:<16} {r.kind:<4} {r.origin:#010x} {r.size:>12,}  "
                     f"{r.node}{arena}")
    return "\n".join(lines)
