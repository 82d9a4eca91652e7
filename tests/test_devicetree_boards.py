"""Board data from a Zephyr devicetree (nnopt.devicetree, nnopt.zephyr_tree).

The EDT-reading part runs on synthetic devicetree objects (the attributes edtlib's
``EDT`` and ``Node`` have), so it needs no Zephyr. The rest reads real boards from a
Zephyr tree (``ZEPHYR_BASE``, or ``NNOPT_ZEPHYR_WORKSPACE``'s ``zephyr/``) and skips with
the reason without one.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from nnopt.boards import Board, load_board
from nnopt.devicetree import (
    DevicetreeError,
    board_data,
    board_from_edt,
    board_from_edt_pickle,
    budget_table,
)
from nnopt.errors import BoardError
from nnopt.zephyr_tree import (
    edt_for_board,
    find_board,
    find_zephyr_base,
    resolve_target,
    zephyr_board,
)

REPO = Path(__file__).resolve().parents[1]


def _node(path: str, reg: tuple[int, int] | None = None, *, labels: tuple[str, ...] = (),
          compats: tuple[str, ...] = (), props: dict[str, Any] | None = None,
          parent: Any = None, regs: list[tuple[int | None, int | None]] | None = None) -> Any:
    entries = regs if regs is not None else ([reg] if reg else [])
    return SimpleNamespace(
        path=path, name=path.rsplit("/", 1)[-1], labels=list(labels), compats=list(compats),
        regs=[SimpleNamespace(addr=a, size=s, name=None) for a, s in entries],
        props={k: SimpleNamespace(val=v) for k, v in (props or {}).items()}, parent=parent)


def _edt(chosen: dict[str, Any], nodes: list[Any]) -> Any:
    return SimpleNamespace(chosen_nodes=chosen, nodes=nodes)


def _h7_like() -> Any:
    sram = _node("/memory@24000000", (0x24000000, 512 * 1024), labels=("sram0",),
                 compats=("mmio-sram",))
    flash = _node("/soc/flash-controller@52002000/flash@8000000", (0x08000000, 2 << 20),
                  labels=("flash0",), compats=("st,stm32-nv-flash", "soc-nv-flash"))
    dtcm = _node("/memory@20000000", (0x20000000, 128 * 1024), labels=("dtcm",),
                 compats=("zephyr,memory-region", "arm,dtcm"),
                 props={"zephyr,memory-region": "DTCM"})
    sram1 = _node("/memory@30000000", (0x30000000, 128 * 1024), labels=("sram1",),
                  compats=("zephyr,memory-region", "mmio-sram"),
                  props={"zephyr,memory-region": "SRAM1"})
    alias = _node("/memory@24010000", (0x24010000, 4096),
                  compats=("zephyr,memory-region",), props={"zephyr,memory-region": "ALIAS"})
    cpu = _node("/cpus/cpu@0", (0, 0), compats=("arm,cortex-m7",),
                props={"clock-frequency": 480_000_000})
    return _edt({"zephyr,sram": sram, "zephyr,flash": flash, "zephyr,dtcm": dtcm},
                [cpu, sram, flash, dtcm, sram1, alias])


def test_chosen_nodes_and_memory_regions_become_regions() -> None:
    board = board_from_edt(_h7_like(), "nucleo_h743zi")
    assert list(board.regions) == ["sram", "flash", "dtcm", "sram1"]
    assert board.sram_bytes == 524_288 and board.arena_region == "sram"
    assert board.regions["flash"].kind == "rom" and board.regions["dtcm"].kind == "ram"
    assert board.regions["dtcm"].size == 131_072
    assert board.regions["sram"].node == "sram0: /memory@24000000"
    # a memory-region node inside a region taken before it is not a second region
    assert "alias" not in board.regions
    assert (board.cpu, board.fpu, board.clock_hz) == ("cortex-m7", None, 480_000_000)
    assert board.emulation is None and board.zephyr_board == "nucleo_h743zi"


def test_cpu_compatible_gives_the_fpu_where_it_is_fixed() -> None:
    sram = _node("/soc/memory@20000000", (0x20000000, 256 * 1024))
    m4f = _node("/cpus/cpu@0", compats=("arm,cortex-m4f",))
    rv = _node("/cpus/cpu@0", compats=("sifive,e31", "riscv"))
    assert (board_from_edt(_edt({"zephyr,sram": sram}, [m4f, sram]), "x").fpu
            == "fpv4-sp-d16")
    assert board_from_edt(_edt({"zephyr,sram": sram}, [rv, sram]), "x").cpu == "riscv"
    assert board_from_edt(_edt({"zephyr,sram": sram}, [sram]), "x").cpu == "unknown"


def test_spi_nor_flash_is_read_through_its_controllers_window() -> None:
    spi = _node("/soc/spi@10014000", regs=[(0x10014000, 0x1000), (0x20400000, 0xC00000)])
    flash = _node("/soc/spi@10014000/flash@0", regs=[(0, None)], parent=spi,
                  compats=("issi,is25lp128", "jedec,spi-nor"), props={"size": 134217728})
    dtim = _node("/soc/dtim@80000000", (0x80000000, 16384), labels=("dtim",))
    board = board_from_edt(_edt({"zephyr,sram": dtim, "zephyr,flash": flash},
                                [dtim, flash, spi]), "hifive1")
    assert board.sram_bytes == 16384 and board.regions["sram"].node.startswith("dtim:")
    # 128 Mbit = 16 MB part, 12 MB of it mapped
    assert (board.regions["flash"].origin, board.regions["flash"].size) == (0x20400000,
                                                                            0xC00000)


def test_a_devicetree_without_sram_is_an_error_with_a_hint() -> None:
    flash = _node("/flash@0", (0, 1 << 20))
    with pytest.raises(DevicetreeError, match="zephyr,sram") as err:
        board_from_edt(_edt({"zephyr,flash": flash}, [flash]), "nosram")
    assert err.value.hint


def test_board_data_round_trips_through_the_board_file_format() -> None:
    board = board_from_edt(_h7_like(), "nucleo_h743zi", source="devicetree test")
    again = Board.from_data(json.loads(json.dumps(board_data(board))))
    assert again == board
    table = budget_table(board)
    assert "524,288" in table and "<- arena" in table and "dtcm" in table


def test_builtin_board_files_win_for_their_zephyr_targets() -> None:
    """boards/nnopt/*.yaml are overrides: the board file, not the devicetree, for its
    Zephyr board target with qualifiers or a revision."""
    assert find_board("nucleo_f767zi/stm32f767xx").source.endswith("nucleo_f767zi.yaml")
    assert find_board("nucleo_f767zi@1").name == "nucleo_f767zi"
    assert find_board("mps2/an385") == load_board("mps2_an385")
    with pytest.raises(BoardError, match="unknown board"):
        load_board("nrf52840dk/nrf52840")  # the board files alone


def test_unknown_board_without_a_zephyr_tree_says_how(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ZEPHYR_BASE", "NNOPT_ZEPHYR_WORKSPACE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BoardError, match="no Zephyr tree") as err:
        find_board("nrf52840dk/nrf52840")
    assert err.value.hint and "ZEPHYR_BASE" in err.value.hint
    assert "nucleo_f767zi" in err.value.hint


def test_cli_unknown_board_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ZEPHYR_BASE", "NNOPT_ZEPHYR_WORKSPACE")}
    env["PYTHONPATH"] = os.fspath(REPO / "scripts")
    proc = subprocess.run([sys.executable, "-m", "nnopt", "optimize",
                           os.fspath(REPO / "models" / "hello_world_int8.tflite"),
                           "--board", "nrf52840dk/nrf52840", "-o", os.fspath(tmp_path)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 64  # an unknown board is a usage error
    assert "Traceback" not in proc.stderr and "hint: set ZEPHYR_BASE" in proc.stderr


def test_resolve_target_gives_the_single_soc_and_names_close_boards() -> None:
    from nnopt.zephyr_tree import ZephyrBoard

    boards = {"nucleo_h743zi": ZephyrBoard("nucleo_h743zi", (), ("stm32h743xx",)),
              "nrf5340dk": ZephyrBoard("nrf5340dk", (), ("nrf5340/cpuapp", "nrf5340/cpunet"))}
    assert resolve_target("nucleo_h743zi", boards)[1] == "stm32h743xx"
    assert resolve_target("nucleo_h743zi@1/stm32h743xx", boards)[1] == "stm32h743xx"
    with pytest.raises(DevicetreeError) as err:
        resolve_target("nucleo_h743z", boards)
    assert err.value.hint and "nucleo_h743zi" in err.value.hint
    with pytest.raises(DevicetreeError, match="no qualifiers") as err:
        resolve_target("nrf5340dk/nrf5340/cpuxyz", boards)
    assert err.value.hint and "nrf5340dk/nrf5340/cpuapp" in err.value.hint


# -- real boards: a Zephyr tree ---------------------------------------------------------

def _zephyr_base() -> Path | None:
    base = find_zephyr_base(os.environ)
    return base if base is not None and (base / "VERSION").is_file() else None


needs_zephyr = pytest.mark.skipif(
    _zephyr_base() is None,
    reason="no Zephyr tree: set ZEPHYR_BASE or NNOPT_ZEPHYR_WORKSPACE (a Zephyr 4.1 "
           "workspace, ../shared/zephyr/make-workspace.sh) to read real boards' devicetrees")


@pytest.fixture
def zephyr_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    base = _zephyr_base()
    assert base is not None
    monkeypatch.setenv("ZEPHYR_BASE", os.fspath(base))
    monkeypatch.setenv("NNOPT_CACHE_DIR", os.fspath(tmp_path / "cache"))
    return dict(os.environ)


@needs_zephyr
@pytest.mark.parametrize(("target", "sram", "node", "extra"), [
    ("hifive1", 16_384, "dtim", {}),
    ("nucleo_h743zi", 524_288, "sram0", {"dtcm": 131_072}),
    ("nrf52840dk/nrf52840", 262_144, "sram0", {}),
])
def test_real_boards_budget_from_the_devicetree(zephyr_env: dict[str, str], target: str,
                                                sram: int, node: str,
                                                extra: dict[str, int]) -> None:
    board = zephyr_board(target, env=zephyr_env)
    assert board.sram_bytes == sram
    assert board.regions["sram"].node.startswith(node + ":")
    for name, size in extra.items():
        assert board.regions[name].size == size
    cached = list((Path(zephyr_env["NNOPT_CACHE_DIR"]) / "boards").glob("*.json"))
    assert len(cached) == 1
    assert zephyr_board(target, env=zephyr_env) == Board.from_data(
        json.loads(cached[0].read_text()), source=board.source)


@needs_zephyr
def test_cli_board_from_the_devicetree_sets_the_plan_budget(zephyr_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    env = {**zephyr_env, "PYTHONPATH": os.fspath(REPO / "scripts")}
    proc = subprocess.run([sys.executable, "-m", "nnopt", "optimize",
                           os.fspath(REPO / "models" / "hello_world_int8.tflite"),
                           "--board", "nrf52840dk/nrf52840", "-o", os.fspath(tmp_path),
                           "--table", "none"],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads((tmp_path / "hello_world_int8_plan.json").read_text())
    assert (plan["board"], plan["sram_budget_bytes"]) == ("nrf52840dk/nrf52840", 262_144)


@needs_zephyr
def test_unknown_zephyr_board_names_close_matches(zephyr_env: dict[str, str]) -> None:
    with pytest.raises(DevicetreeError, match="not in the Zephyr tree") as err:
        zephyr_board("nucleo_h743z", env=zephyr_env)
    assert err.value.hint and "nucleo_h743zi" in err.value.hint


@needs_zephyr
def test_a_pickled_edt_gives_the_same_board(zephyr_env: dict[str, str],
                                            tmp_path: Path) -> None:
    """What a build's edt.pickle holds (gen_edt.py pickles the EDT, protocol 4)."""
    base = _zephyr_base()
    assert base is not None
    from nnopt.zephyr_tree import zephyr_modules

    edt = edt_for_board(base, "frdm_k64f", zephyr_modules(base, zephyr_env))
    path = tmp_path / "edt.pickle"
    path.write_bytes(pickle.dumps(edt, protocol=4))
    board = board_from_edt_pickle(path, "frdm_k64f", base)
    assert board.regions == zephyr_board("frdm_k64f", env=zephyr_env).regions
    assert board.cpu == "cortex-m4" and board.fpu == "fpv4-sp-d16"
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(DevicetreeError, match="not a pickled devicetree"):
        board_from_edt_pickle(bad, "x", base)


def test_a_build_without_a_board_file_is_checked_against_its_devicetree(
        tmp_path: Path) -> None:
    """west nn-check's choice (nnopt.zephyr_build.budget_of_build): the board file for
    a board that has one, else the build's edt.pickle and its cache's ZEPHYR_BASE."""
    from nnopt.zephyr_build import BuildDirError, budget_of_build

    def build(board: str, edt: bool) -> Path:
        d = tmp_path / board.replace("/", "_")
        (d / "zephyr").mkdir(parents=True)
        (d / "CMakeCache.txt").write_text(f"CACHED_BOARD:STRING={board}\n"
                                          "ZEPHYR_BASE:PATH=/z/zephyr\n"
                                          "ZEPHYR_TOOLCHAIN_VARIANT:STRING=gnuarmemb\n")
        if edt:
            (d / "zephyr" / "edt.pickle").write_bytes(b"")
        return d

    nrf = build("nrf52840dk/nrf52840", True)
    assert budget_of_build(nrf) == ("nrf52840dk/nrf52840", nrf / "zephyr" / "edt.pickle",
                                    Path("/z/zephyr"))
    assert budget_of_build(build("nucleo_f767zi/stm32f767xx", True)) == (
        "nucleo_f767zi", None, None)
    with pytest.raises(BuildDirError, match="no nnopt board"):
        budget_of_build(build("frdm_k64f", False))
