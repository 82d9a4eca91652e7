"""The Zephyr layer, checked without a Zephyr tree.

The real build is tests/test_twister.py: Twister builds (warnings as errors) and runs
every sample and suite on Zephyr 4.1.0 when a workspace is present, which checks the
samples' CMakeLists.txt, ``nnopt_add_model()``, the generated models compiled with
Zephyr's flags for the Cortex-M3 and M7 targets, ``port/zephyr``, the overlays, Kconfig
resolution against Zephyr's symbols, and the console output. What runs here needs no
Zephyr and still says something the real build does not (or says it without Zephyr):

- ``zephyr/module.yml`` against Zephyr's module schema (pykwalify, as
  ``scripts/zephyr_module.py`` validates it) and the paths it names;
- Kconfig: every option has help text, every ``CONFIG_NNRT_*`` used anywhere is defined;
- the west manifest (imports ignored): the Zephyr release it pins decides the Twister
  file names; the modules the Zephyr layer needs are allow-listed;
- every sample and test yaml: the file name, Twister's schema keys, real board names
  (verified in Zephyr's board.yml files), console harness regexes, board files named
  after real boards;
- what ``nnopt_add_model()`` generates, on the samples' CMakeLists.txt under real CMake
  with a stand-in for ``find_package(Zephyr)`` that provides only what the function
  reads (BOARD, PYTHON_EXECUTABLE, ZEPHYR_NNOPT_MODULE_DIR, CONFIG_NNRT): the plan
  header agrees with the model, the reorder model gains from reordering, swapnn's
  options reach the compiler and its blob is written, CMSIS-NN builds generate without
  specialised kernels. The stand-in runs the generation only: compiling the generated
  model with guessed flags is what Twister does with Zephyr's own (and the bare-metal
  tests with the M3/M7 flags, tests/ops/test_conv_fast.py at -O0), and the tamper
  scenarios, whose model is swapnn.qemu's (swapnn.qemu.fm's), differ only in the blob
  QEMU loads (the tile the firmware's attacker changes), which only a real run shows;
  swapnn's feature-map scenario generates a model that writes feature maps out, to a
  partition the board files and overlays agree on;
- ``west nn-check`` on a fake build directory holding real ARM ELFs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

import pykwalify.core
import pykwalify.errors
import pytest
import yaml
from west.configuration import Configuration
from west.manifest import ImportFlag, Manifest

from conftest import REPO
from nnopt import zephyr_build
from nnopt.boards import load_board
from nnopt.paths import nnrt_include_dirs

SAMPLES = REPO / "samples"
SUITES = REPO / "tests" / "zephyr"
ARM_CC = "arm-none-eabi-gcc"

# ---------------------------------------------------------------------------------
# Facts read from Zephyr's sources (search tool, zephyrproject-rtos/zephyr)
# ---------------------------------------------------------------------------------

# scripts/zephyr_module.py, METADATA_SCHEMA (commit e46ee99c, the form with
# snippet_root). Newer releases add top-level `runners`, `security` and
# `package-managers`; module.yml uses none of them, so it validates in every release
# from this one on. pykwalify is what zephyr_module.py validates with (and a
# dependency of west).
MODULE_SCHEMA = yaml.safe_load("""
type: map
mapping:
  name: {required: false, type: str}
  build:
    required: false
    type: map
    mapping:
      cmake: {required: false, type: str}
      kconfig: {required: false, type: str}
      cmake-ext: {required: false, type: bool}
      kconfig-ext: {required: false, type: bool}
      sysbuild-cmake: {required: false, type: str}
      sysbuild-kconfig: {required: false, type: str}
      sysbuild-cmake-ext: {required: false, type: bool}
      sysbuild-kconfig-ext: {required: false, type: bool}
      depends: {required: false, type: seq, sequence: [{type: str}]}
      settings:
        required: false
        type: map
        mapping:
          board_root: {required: false, type: str}
          dts_root: {required: false, type: str}
          snippet_root: {required: false, type: str}
          soc_root: {required: false, type: str}
          arch_root: {required: false, type: str}
          module_ext_root: {required: false, type: str}
          sca_root: {required: false, type: str}
  tests: {required: false, type: seq, sequence: [{type: str}]}
  samples: {required: false, type: seq, sequence: [{type: str}]}
  boards: {required: false, type: seq, sequence: [{type: str}]}
""")

# scripts/schemas/twister/testsuite-schema.yaml (commit c25a5761): the keys of a
# scenario ("common" or one of "tests") and of harness_config.
SCENARIO_KEYS = frozenset([
    "arch_exclude", "arch_allow", "vendor_exclude", "vendor_allow", "testcases",
    "build_only", "build_on_all", "depends_on", "extra_args", "extra_configs",
    "extra_conf_files", "extra_overlay_confs", "extra_dtc_overlay_files", "extra_sections",
    "expect_reboot", "required_snippets", "filter", "levels", "integration_platforms",
    "integration_toolchains", "ignore_faults", "ignore_qemu_crash", "harness",
    "harness_config", "min_ram", "min_flash", "modules", "platform_exclude",
    "platform_allow", "platform_type", "platform_key", "simulation_exclude", "tags",
    "timeout", "toolchain_exclude", "toolchain_allow", "type", "skip", "slow", "sysbuild",
])
HARNESS_CONFIG_KEYS = frozenset([
    "power_measurements", "shell_commands_file", "shell_commands",
    "display_capture_config", "type", "fixture", "ordered", "pytest_root", "pytest_args",
    "pytest_dut_scope", "ctest_args", "regex", "robot_testsuite", "robot_option", "record",
    "bsim_exe_name", "ztest_suite_repeat", "ztest_test_repeat", "ztest_test_shuffle",
])
INT_KEYS = frozenset({"min_ram", "min_flash", "timeout"})
BOOL_KEYS = frozenset({"build_only", "build_on_all", "skip", "slow", "sysbuild",
                       "ignore_faults", "ignore_qemu_crash", "expect_reboot"})


@dataclass(frozen=True)
class ZephyrBoard:
    board: str  # BOARD
    qualifiers: str  # BOARD_QUALIFIERS (Zephyr >= 4.4 spelling: no leading '/')
    normalized: str  # boards/<normalized>.overlay|.conf


# Board targets the samples and suites use, from each board's board.yml (and twister
# yaml): boards/qemu/cortex_m3/board.yml (soc ti_lm3s6965), boards/arm/mps2/board.yml
# (socs an385, an521...), boards/st/nucleo_f767zi/board.yml (soc stm32f767xx),
# boards/qemu/riscv32/board.yml.
ZEPHYR_BOARDS: dict[str, ZephyrBoard] = {
    "qemu_cortex_m3": ZephyrBoard("qemu_cortex_m3", "ti_lm3s6965", "qemu_cortex_m3"),
    "mps2/an385": ZephyrBoard("mps2", "an385", "mps2_an385"),
    "nucleo_f767zi": ZephyrBoard("nucleo_f767zi", "stm32f767xx", "nucleo_f767zi"),
    # This repository's board extension of mps2 (boards/arm/mps2/board.yml).
    "mps2/an500/qemu": ZephyrBoard("mps2", "an500/qemu", "mps2_an500_qemu"),
    # RV32IMAC on QEMU virt: boards/qemu/riscv32/board.yml (soc qemu_virt_riscv32).
    "qemu_riscv32": ZephyrBoard("qemu_riscv32", "qemu_virt_riscv32", "qemu_riscv32"),
    # The new cores: boards/qemu/cortex_m0/board.yml (soc nrf51822), this repository's
    # mps2 extension (an386/qemu), boards/arm/mps2 (an521, cpucluster cpu0) and
    # boards/arm/mps3/board.yml (soc corstone300, variant an547).
    "qemu_cortex_m0": ZephyrBoard("qemu_cortex_m0", "nrf51822", "qemu_cortex_m0"),
    "mps2/an386/qemu": ZephyrBoard("mps2", "an386/qemu", "mps2_an386_qemu"),
    "mps2/an521/cpu0": ZephyrBoard("mps2", "an521/cpu0", "mps2_an521_cpu0"),
    "mps3/corstone300/an547": ZephyrBoard("mps3", "corstone300/an547",
                                          "mps3_corstone300_an547"),
}
BOARD_ALIASES = {"qemu_cortex_m3/ti_lm3s6965": "qemu_cortex_m3",
                 "nucleo_f767zi/stm32f767xx": "nucleo_f767zi"}

# The generated headers' probe (test_plan_header_agrees_with_the_generated_model) and the
# fake builds' ELFs (west nn-check) are compiled for a Cortex-M3 as C99, Zephyr 4.1's
# default (Kconfig.zephyr, "C Standard": default STD_C99), warnings as errors.
M3_FLAGS = ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"]
WARNINGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Wpointer-arith",
            "-Wformat-security"]


# ---------------------------------------------------------------------------------
# module.yml
# ---------------------------------------------------------------------------------

def _module() -> dict[str, object]:
    data = yaml.safe_load((REPO / "zephyr" / "module.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_module_yml_validates_against_zephyr_schema() -> None:
    pykwalify.core.Core(source_data=_module(), schema_data=MODULE_SCHEMA).validate(
        raise_exception=True)


def test_module_yml_rejects_what_zephyr_rejects() -> None:
    # The schema check is real: a west-commands key (not a module.yml key) fails.
    bad = dict(_module()) | {"west-commands": "scripts/west-commands.yml"}
    with pytest.raises(pykwalify.errors.SchemaError):
        pykwalify.core.Core(source_data=bad, schema_data=MODULE_SCHEMA).validate(
            raise_exception=True)


def test_module_yml_paths_exist() -> None:
    meta = _module()
    build = meta["build"]
    assert isinstance(build, dict)
    # zephyr_module.py: `cmake` is a folder with CMakeLists.txt, `kconfig` a file.
    assert (REPO / build["cmake"] / "CMakeLists.txt").is_file()
    assert (REPO / build["kconfig"]).is_file()
    # cmake/modules/boards.cmake warns about a BOARD_ROOT without boards/.
    assert (REPO / build["settings"]["board_root"] / "boards").is_dir()
    for key in ("samples", "tests"):
        paths = meta[key]
        assert isinstance(paths, list)
        for rel in paths:
            assert (REPO / rel).is_dir(), f"{key}: {rel}"


def test_module_name_gives_the_cmake_variable_the_samples_use() -> None:
    # ZEPHYR_<NAME>_MODULE_DIR, NAME upper-cased with non-alphanumerics -> '_'.
    var = "ZEPHYR_" + re.sub("[^a-zA-Z0-9]", "_", str(_module()["name"])).upper() \
        + "_MODULE_DIR"
    for cml in [*SAMPLES.glob("*/CMakeLists.txt"), *SUITES.glob("*/CMakeLists.txt"),
                *SUITES.glob("common/*.cmake")]:
        text = cml.read_text()
        if "nnopt_add_model" in text:
            assert "${" + var + "}" in text, cml


# ---------------------------------------------------------------------------------
# Kconfig
# ---------------------------------------------------------------------------------

@dataclass
class KconfigEntry:
    kind: str  # config, menuconfig, choice
    name: str
    file: Path
    line: int
    has_help: bool = False


_ENTRY_RE = re.compile(r"^(config|menuconfig|choice)\b\s*(\S*)")
_END_RE = re.compile(r"^(config|menuconfig|choice|endchoice|if|endif|menu|endmenu|comment|"
                     r"source|rsource|osource|orsource|module|module-str)\b")


def parse_kconfig(path: Path) -> Iterator[KconfigEntry]:
    """Entries of a Kconfig file and of the files it rsources (enough for our files:
    an entry runs from its keyword to the next top-level keyword)."""
    entry: KconfigEntry | None = None
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        m = _ENTRY_RE.match(raw)
        if m or (_END_RE.match(raw) and not raw[:1].isspace()):
            if entry is not None:
                yield entry
            entry = KconfigEntry(m.group(1), m.group(2), path, n) if m else None
        if entry is not None and line in ("help", "---help---"):
            entry.has_help = True
        src = re.match(r'^\s*rsource\s+"([^"]+)"', raw)
        if src:
            yield from parse_kconfig((path.parent / src.group(1)).resolve())
    if entry is not None:
        yield entry


def _kconfig_entries() -> list[KconfigEntry]:
    return list(parse_kconfig(REPO / "zephyr" / "Kconfig"))


def test_kconfig_is_reached_from_the_module_entry_point() -> None:
    names = {e.name for e in _kconfig_entries()}
    assert {"NNRT", "NNRT_SWAP", "NNRT_ALLOCATOR_DYNAMIC", "NNRT_CMSIS_NN",
            "NNRT_ELF_CHECK"} <= names


def test_every_kconfig_option_has_help() -> None:
    missing = [f"{e.file.relative_to(REPO)}:{e.line} {e.kind} {e.name}"
               for e in _kconfig_entries() if not e.has_help]
    assert not missing, "without help text: " + ", ".join(missing)


def test_every_nnrt_config_symbol_used_is_defined() -> None:
    defined = {e.name for e in _kconfig_entries() if e.name}
    # subsys/logging/Kconfig.template.log_config defines <module>_LOG_LEVEL and friends.
    defined |= {"NNRT_LOG_LEVEL"}
    used: dict[str, Path] = {}
    roots = [SAMPLES, SUITES, REPO / "zephyr", REPO / "modules" / "nnrt" / "port" / "zephyr",
             REPO / "modules" / "nnrt" / "CMakeLists.txt"]
    for root in roots:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for f in files:
            if f.suffix in (".png", ".bin", ".tflite", ".pyc"):
                continue
            # Whole names only: prose like CONFIG_NNRT_SWAP_CRYPTO_* is a family.
            text = f.read_text(errors="replace")
            for sym in re.findall(r"CONFIG_(NNRT_[A-Z0-9_]*[A-Z0-9])\b(?!\*)", text):
                used.setdefault(sym, f)
    unknown = {s: str(f.relative_to(REPO)) for s, f in used.items() if s not in defined}
    assert not unknown, f"CONFIG_ symbols not in modules/nnrt/Kconfig: {unknown}"


# ---------------------------------------------------------------------------------
# west manifest: the pinned Zephyr and the modules the Zephyr layer needs
# ---------------------------------------------------------------------------------

def _zephyr_project() -> tuple[tuple[int, int], list[str]]:
    manifest = Manifest.from_data((REPO / "west.yml").read_text(),
                                  import_flags=ImportFlag.IGNORE)
    (zephyr,) = manifest.get_projects(["zephyr"], allow_paths=False, only_cloned=False)
    m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+.*", zephyr.revision)
    assert m, f"Zephyr should be pinned to a release tag, not {zephyr.revision!r}"
    raw = yaml.safe_load((REPO / "west.yml").read_text())
    entry = next(p for p in raw["manifest"]["projects"] if p["name"] == "zephyr")
    return (int(m.group(1)), int(m.group(2))), list(entry["import"]["name-allowlist"])


def test_manifest_allowlists_the_modules_the_zephyr_layer_uses() -> None:
    _, allow = _zephyr_project()
    # cmsis: Zephyr 4.1's Cortex-M core (modules/cmsis: HAS_CMSIS_CORE); hal_stm32:
    # nucleo_f767zi; mbedtls: PSA Crypto for CONFIG_NNRT_SWAP (Mbed TLS 3.6 in 4.1);
    # picolibc: the C library of gnuarmemb builds; cmsis-nn: CONFIG_NNRT_CMSIS_NN
    # (modules/cmsis-nn/Kconfig: CMSIS_NN).
    assert {"cmsis", "hal_stm32", "mbedtls", "picolibc", "cmsis-nn"} <= set(allow)


def _twister_names() -> tuple[str, str]:
    """(sample file, test file) names for the pinned Zephyr: 4.4's
    scripts/pylib/twister/twisterlib/testplan.py has SAMPLE_FILENAME='sample.yaml' and
    TESTSUITE_FILENAME='testcase.yaml'; upstream unified both to tests.yaml after 4.4
    (example-application commits 3b6f076b, ddce526b)."""
    version, _ = _zephyr_project()
    return ("sample.yaml", "testcase.yaml") if version <= (4, 4) else ("tests.yaml",) * 2


# ---------------------------------------------------------------------------------
# Twister yaml
# ---------------------------------------------------------------------------------

SAMPLE_DIRS = sorted(p for p in SAMPLES.iterdir() if p.is_dir())
SUITE_DIRS = sorted(p for p in SUITES.iterdir() if p.is_dir() and p.name != "common")
YAML_NAMES = ("sample.yaml", "testcase.yaml", "tests.yaml")


def _yaml_of(d: Path) -> Path:
    found = [d / n for n in YAML_NAMES if (d / n).is_file()]
    assert len(found) == 1, f"{d}: expected one of {YAML_NAMES}, found {found}"
    return found[0]


def test_samples_and_suites_exist() -> None:
    assert {p.name for p in SAMPLE_DIRS} >= {"hello", "reorder", "pingpong", "swapnn"}
    assert {p.name for p in SUITE_DIRS} >= {"allocator", "pingpong", "swap", "model"}


@pytest.mark.parametrize("d", SAMPLE_DIRS + SUITE_DIRS, ids=lambda p: p.name)
def test_twister_file_name_matches_pinned_zephyr(d: Path) -> None:
    sample_name, suite_name = _twister_names()
    want = sample_name if d.parent == SAMPLES else suite_name
    assert _yaml_of(d).name == want


@pytest.mark.parametrize("d", SAMPLE_DIRS, ids=lambda p: p.name)
def test_sample_has_the_usual_files(d: Path) -> None:
    for rel in ("README.md", "CMakeLists.txt", "prj.conf"):
        assert (d / rel).is_file(), rel
    assert (d / "src" / "main.c").is_file() or (d / "src" / "main.cc").is_file()  # TFLM: C++
    data = yaml.safe_load(_yaml_of(d).read_text())
    assert "sample" in data
    if not (data.get("common") or {}).get("modules"):  # TFLM's sample needs no overlay
        assert any((d / "boards").iterdir()), "boards/ is empty"


def _scenarios(path: Path) -> dict[str, dict[str, object]]:
    """Every scenario merged with `common` the way Twister merges: lists extended,
    strings joined, anything else from the scenario."""
    data = yaml.safe_load(path.read_text())
    common = data.get("common") or {}
    out = {}
    for name, sc in (data.get("tests") or {}).items():
        merged = dict(common)
        for k, v in (sc or {}).items():
            if k in merged and isinstance(merged[k], list) and isinstance(v, list):
                merged[k] = merged[k] + v
            else:
                merged[k] = v
        out[name] = merged
    return out


def _as_list(v: object) -> list[str]:
    if v is None:
        return []
    return v.split() if isinstance(v, str) else [str(x) for x in v]  # type: ignore[attr-defined]


@pytest.mark.parametrize("d", SAMPLE_DIRS + SUITE_DIRS, ids=lambda p: p.name)
def test_twister_yaml_is_valid(d: Path) -> None:
    path = _yaml_of(d)
    data = yaml.safe_load(path.read_text())
    assert set(data) <= {"sample", "common", "tests"}, set(data)
    assert data.get("tests"), "no scenarios"
    for part in [data.get("common") or {}, *data["tests"].values()]:
        assert set(part) <= SCENARIO_KEYS, set(part) - SCENARIO_KEYS
        for k in INT_KEYS & set(part):
            assert isinstance(part[k], int), k
        for k in BOOL_KEYS & set(part):
            assert isinstance(part[k], bool), k
        hc = part.get("harness_config") or {}
        assert set(hc) <= HARNESS_CONFIG_KEYS, set(hc) - HARNESS_CONFIG_KEYS
        for rx in hc.get("regex", []):
            re.compile(rx)
    for name, sc in _scenarios(path).items():
        # Scenario ids: dotted words ([A-Za-z0-9_=]), doc/develop/test/twister.rst.
        assert re.fullmatch(r"[A-Za-z0-9_=]+(\.[A-Za-z0-9_=]+)+", name), name
        assert _as_list(sc.get("tags")), f"{name}: tags are required"
        boards = _as_list(sc.get("platform_allow")) + _as_list(sc.get("integration_platforms"))
        assert boards, f"{name}: name the boards it runs on"
        for b in boards:
            assert BOARD_ALIASES.get(b, b) in ZEPHYR_BOARDS, f"{name}: unknown board {b}"
        for b in _as_list(sc.get("integration_platforms")):
            allow = _as_list(sc.get("platform_allow"))
            assert not allow or b in allow, f"{name}: {b} is not in platform_allow"
        if sc.get("harness") == "console":
            hc = sc["harness_config"]
            assert isinstance(hc, dict) and hc.get("regex"), f"{name}: console without regex"
        if d.parent == SUITES:
            assert "harness" not in sc, f"{name}: ztest suites use Twister's ztest harness"


def test_board_files_are_named_after_real_boards() -> None:
    normalized = {b.normalized for b in ZEPHYR_BOARDS.values()}
    for boards in list(SAMPLES.glob("*/boards")) + list(SUITES.glob("*/boards")):
        for f in boards.iterdir():
            assert f.suffix in (".conf", ".overlay"), f
            assert f.stem in normalized, f"{f.relative_to(REPO)}: not a board we use"


def test_every_swapnn_platform_has_the_storage_its_scenario_streams_to() -> None:
    """Each platform a swapnn scenario allows has, in its nnopt board file, the external
    flash the weights stream from (`--swap force` refuses a board without one: the AN386
    was allowed with none and every build failed), and for the feature-map scenarios
    the storage its tiles go to."""
    tests = yaml.safe_load((SAMPLES / "swapnn" / "sample.yaml").read_text())["tests"]
    checked = 0
    for name, scenario in tests.items():
        for platform in scenario.get("platform_allow", []):
            board = load_board(platform)
            assert board.external_flash, f"{name} on {platform}: no external_flash"
            if ".fm" in name:
                assert board.feature_map_storage, f"{name} on {platform}: no storage"
            checked += 1
    assert checked >= 10


def swapnn_qemu_blob_addrs(cml: str) -> dict[str, int]:
    """The QEMU loader address of samples/swapnn's CMakeLists.txt, per board overlay."""
    m = re.search(r'if\(BOARD MATCHES "an500"\)\s*set\(SWAPNN_QEMU_BLOB_ADDR (0x[0-9a-fA-F]+)\)'
                  r"\s*else\(\)\s*set\(SWAPNN_QEMU_BLOB_ADDR (0x[0-9a-fA-F]+)\)", cml)
    assert m, "SWAPNN_QEMU_BLOB_ADDR per board not found in samples/swapnn/CMakeLists.txt"
    return {"mps2_an500_qemu": int(m.group(1), 16), "mps2_an385": int(m.group(2), 16)}


@pytest.mark.parametrize("board", ["mps2_an385", "mps2_an500_qemu"])
def test_swapnn_qemu_loader_address_is_the_overlay_region(board: str) -> None:
    """QEMU's loader writes the blob where the board's overlay puts the flash simulator:
    the PSRAM, at 0x21000000 on the AN385 and 0x60000000 on the AN500 (QEMU hw/arm/mps2.c);
    at the AN385's address the AN500 firmware read zeros ("no weight blob")."""
    addr = swapnn_qemu_blob_addrs((SAMPLES / "swapnn" / "CMakeLists.txt").read_text())[board]
    overlay = (SAMPLES / "swapnn" / "boards" / f"{board}.overlay").read_text()
    node = re.search(r"nnrt_xflash_mem: memory@([0-9a-fA-F]+)\s*\{[^}]*reg = <(0x[0-9a-fA-F]+)",
                     overlay)
    assert node, "nnrt_xflash_mem not found in the overlay"
    assert addr == int(node.group(1), 16) == int(node.group(2), 16)
    psram = {"mps2_an385": 0x21000000, "mps2_an500_qemu": 0x60000000}[board]
    assert addr == psram, f"{board}: the flash simulator is not on the PSRAM"


def _merged_scenarios(yml: Path) -> Iterator[tuple[str, dict[str, object]]]:
    data = yaml.safe_load(yml.read_text())
    common = data.get("common") or {}
    for name, sc in (data.get("tests") or {}).items():
        yield name, {**common, **(sc or {})}


def test_twister_min_ram_does_not_filter_out_mps2_an385() -> None:
    # mps2/an385's board yaml has no ram: key; Twister then assumes 128 KB
    # (zephyr scripts/pylib/twister/twisterlib/platform.py: data.get("ram", 128)) and
    # drops every scenario whose min_ram is larger: min_ram 192 meant "never on QEMU".
    checked = 0
    for yml in [*SAMPLES.glob("*/sample.yaml"), *SUITES.glob("*/testcase.yaml")]:
        for name, sc in _merged_scenarios(yml):
            allowed = sc.get("platform_allow") or []
            if "mps2/an385" in allowed:  # type: ignore[operator]
                checked += 1
                assert int(sc.get("min_ram", 0)) <= 128, (  # type: ignore[call-overload]
                    f"{yml.relative_to(REPO)} {name}: min_ram {sc['min_ram']} filters out "
                    "mps2/an385 (Twister assumes 128 KB for it)")
    assert checked >= 4  # reorder, swiftnet_like, swapnn.qemu, the swap suites


def test_spi_nor_clock_is_within_the_read_data_command_limit() -> None:
    # Zephyr's spi_nor reads with 0x03 (Read Data, drivers/flash/spi_nor.c); the W25Q128JV
    # (JEDEC id ef 40 18) allows 50 MHz for it.
    overlay = (SAMPLES / "swapnn" / "boards" / "nucleo_f767zi.overlay").read_text()
    node = re.search(r'compatible = "jedec,spi-nor";(.*?)\};', overlay, re.S)
    assert node and re.search(r"jedec-id = \[ef 40 18\]", node.group(1))
    (freq,) = re.findall(r"spi-max-frequency = <(\d+)>", node.group(1))
    assert int(freq) <= 50_000_000


PSA_CONFS = (SAMPLES / "swapnn" / "prj.conf", SUITES / "swap" / "prj.conf")


@pytest.mark.parametrize("conf", PSA_CONFS, ids=lambda p: p.parent.name)
def test_mbedtls_heap_is_sized_for_what_psa_allocates(conf: Path) -> None:
    text = conf.read_text()
    # Zephyr's PSA config defines MBEDTLS_PSA_ASSUME_EXCLUSIVE_BUFFERS: no buffer copies.
    assert "MBEDTLS_PSA_ASSUME_EXCLUSIVE_BUFFERS" in text
    assert not re.search(r"cop(y|ies) the buffers", text)
    (heap,) = re.findall(r"^CONFIG_MBEDTLS_HEAP_SIZE=(\d+)$", text, re.M)
    assert 2048 <= int(heap) <= 8192  # key slots + key + one cipher context, with headroom


def _conf_values(*confs: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in confs:
        if c.is_file():
            out.update(re.findall(r"^(CONFIG_\w+)=(.*)$", c.read_text(), re.M))
    return out


@pytest.mark.parametrize("build", [(SAMPLES / "swapnn", "mps2_an385"),
                                   (SUITES / "swap", "mps2_an385")],
                         ids=lambda b: b[0].name)
def test_flash_simulator_builds_allow_unaligned_reads(build: tuple[Path, str]) -> None:
    # The swap driver reads chunks at any offset and length; flash_sim_read() returns
    # -EINVAL for reads not aligned to write-block-size unless this is set
    # (drivers/flash/flash_simulator.c).
    d, board = build
    conf = _conf_values(d / "prj.conf", d / "boards" / f"{board}.conf")
    assert conf.get("CONFIG_FLASH_SIMULATOR") == "y"
    assert conf.get("CONFIG_FLASH_SIMULATOR_UNALIGNED_READ") == "y"


def test_dma_burst_lengths_are_ones_the_stm32_driver_takes() -> None:
    # drivers/dma/dma_stm32_v1.c (the F7's st,stm32-dma-v1): stm32_dma_get_mburst() and
    # stm32_dma_get_pburst() take 1, 4, 8 or 16 beats, anything else logs an error.
    src = (REPO / "modules" / "nnrt" / "port" / "zephyr" / "nnrt_extflash_zephyr.c").read_text()
    values = re.findall(r"\.(?:source|dest)_burst_length = ([^;]+);", src)
    assert len(values) == 2
    for v in values:
        assert v.strip() in ("1", "4", "8", "16"), f"burst length {v!r}"


# ---------------------------------------------------------------------------------
# nnopt_add_model(): the samples' CMakeLists.txt under real CMake
# ---------------------------------------------------------------------------------

# The stand-in for find_package(Zephyr). Everything else (the sample's CMakeLists.txt,
# zephyr/cmake/nnopt.cmake, the compiler, the compilers) is the real thing.
STUB = """\
cmake_minimum_required(VERSION 3.20)
project(nnopt_zephyr_stand_in LANGUAGES C)
macro(find_package name)
  if("${{name}}" STREQUAL "Zephyr")
    set(BOARD "{board}")
    set(BOARD_QUALIFIERS "{qualifiers}")
    set(PYTHON_EXECUTABLE "{python}")
    set(ZEPHYR_NNOPT_MODULE_DIR "{root}")
    set(CONFIG_NNRT y)
    # what modules/nnrt/CMakeLists.txt (the Zephyr module's library) exports for the
    # generated sources: the kernels' private include directory
    set_property(GLOBAL PROPERTY NNRT_GENERATED_INCLUDE_DIRECTORIES
                 "{root}/modules/nnrt/kernels")
    include("{root}/zephyr/cmake/nnopt.cmake")
    add_library(app STATIC)
    target_include_directories(app PRIVATE "{root}/modules/nnrt/include")
  else()
    _find_package(${{ARGV}})
  endif()
endmacro()
add_subdirectory("{sample}" sample)
"""


@dataclass(frozen=True)
class Scenario:
    sample: Path
    name: str
    board: str
    defines: tuple[str, ...]


@dataclass
class BuildResult:
    ok: bool
    log: str
    model_c: Path | None = None
    generated: list[Path] = field(default_factory=list)


def _is_tamper_scenario(sc: dict[str, object]) -> bool:
    # samples/swapnn: SWAPNN_TAMPER changes the blob QEMU loads, SWAPNN_FM=bitflip/stale
    # what the firmware's attacker does to a written tile, SWAPNN_FM=disk the device the
    # tiles go to, SWAPNN_WEIGHTS=disk the device the blob is read from and
    # SWAPNN_FM_ASYNC=1 when tiles move, not what is generated (swapnn.qemu's model,
    # swapnn.qemu.fm's).
    return any(a.startswith("SWAPNN_TAMPER")
               or a in ("SWAPNN_FM=bitflip", "SWAPNN_FM=stale", "SWAPNN_FM=disk",
                        "SWAPNN_WEIGHTS=disk", "SWAPNN_FM_ASYNC=1")
               for a in _as_list(sc.get("extra_args")))


def _sample_scenarios() -> list[Scenario]:
    out = []
    for d in SAMPLE_DIRS:
        for name, sc in _scenarios(_yaml_of(d)).items():
            if sc.get("skip") or _is_tamper_scenario(sc):
                continue
            if sc.get("modules"):  # TFLM's sample: C++ and the tflite-micro module, which
                continue           # the stand-in build does not emulate (Twister builds it)
            boards = _as_list(sc.get("integration_platforms")) or _as_list(sc.get("platform_allow"))
            defines = tuple(a for a in _as_list(sc.get("extra_args")) if "=" in a)
            out.append(Scenario(d, name, BOARD_ALIASES.get(boards[0], boards[0]), defines))
    return out


SCENARIOS = _sample_scenarios()


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("ZEPHYR_BASE", None)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def _build(sc: Scenario, work: Path) -> BuildResult:
    zb = ZEPHYR_BOARDS[sc.board]
    src = work / "src"
    bld = work / "build"
    src.mkdir(parents=True)
    (src / "CMakeLists.txt").write_text(STUB.format(
        board=zb.board, qualifiers=zb.qualifiers, python=Path(sys.executable).as_posix(),
        root=REPO.as_posix(), sample=sc.sample.as_posix()))
    cfg = _run(["cmake", "-G", "Ninja", "-S", str(src), "-B", str(bld),
                "-DCMAKE_SYSTEM_NAME=Generic", f"-DCMAKE_C_COMPILER={ARM_CC}",
                "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY",
                *[f"-D{d}" for d in sc.defines]], work)
    if cfg.returncode != 0:
        return BuildResult(False, cfg.stdout + cfg.stderr)
    targets = _run(["ninja", "-C", str(bld), "-t", "targets", "all"], work).stdout
    # nnopt_add_model()'s custom commands: the generation and <name>_plan.h. Nothing is
    # compiled (main.c includes Zephyr headers; the generated model is compiled by the
    # real builds, see the module docstring).
    # (Ninja lists each also under its absolute path.)
    outputs = [t.split(":")[0] for t in targets.splitlines()
               if re.search(r"_(model\.c|plan\.h): CUSTOM_COMMAND", t) and t[:1] != "/"]
    if len(outputs) != 2:
        return BuildResult(False, f"expected a generated model and plan header, got "
                           f"{outputs}\n" + targets)
    b = _run(["ninja", "-C", str(bld), *outputs], work)
    # nnopt_add_model's OUTPUT_DIR: <build>/sample/nnopt by default; samples/swapnn
    # sets its own under the build directory
    gen = sorted(p for p in bld.rglob("*_model.c") if "CMakeFiles" not in p.parts)
    return BuildResult(b.returncode == 0, b.stdout + b.stderr, gen[0] if gen else None,
                       sorted(gen[0].parent.rglob("*.h")) if gen else [])


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BuildResult]:
    for tool in ("cmake", "ninja", ARM_CC):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found")
    base = tmp_path_factory.mktemp("zephyr_stand_in")
    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        futures = {sc.name: pool.submit(_build, sc, base / sc.name) for sc in SCENARIOS}
        return {name: f.result() for name, f in futures.items()}


def test_every_runnable_sample_scenario_is_checked() -> None:
    names = {sc.name for sc in SCENARIOS}
    assert {"sample.nnopt.hello", "sample.nnopt.reorder", "sample.nnopt.pingpong",
            "sample.nnopt.pingpong.int8", "sample.nnopt.pingpong.onnx"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: s.name)
def test_plan_header_agrees_with_the_generated_model(sc: Scenario,
                                                     builds: dict[str, BuildResult],
                                                     tmp_path: Path) -> None:
    r = builds[sc.name]
    assert r.ok and r.model_c is not None, r.log[-2000:]
    name = r.model_c.name.removesuffix("_model.c")
    up = name.upper()
    probe = tmp_path / "probe.c"
    probe.write_text(
        f'#include "{name}_model.h"\n#include "{name}_plan.h"\n'
        f"_Static_assert({up}_PLAN_ARENA_BYTES == {up}_ARENA_BYTES, \"arena\");\n"
        f"_Static_assert({up}_PLAN_WEIGHT_BYTES == {up}_WEIGHT_BYTES, \"weights\");\n"
        f"_Static_assert({up}_PLAN_PEAK_BYTES <= {up}_PLAN_PEAK_FILE_ORDER_BYTES, \"peak\");\n"
        f"const char *strategy = {up}_PLAN_ARENA_STRATEGY;\n")
    cc = _run([ARM_CC, *M3_FLAGS, *WARNINGS,
               *(f"-I{d}" for d in nnrt_include_dirs()), "-I", str(r.model_c.parent),
               "-c", str(probe), "-o", str(tmp_path / "probe.o")], tmp_path)
    assert cc.returncode == 0, cc.stderr[-3000:]


@pytest.mark.slow
def test_reorder_sample_model_really_gains_from_reordering(
        builds: dict[str, BuildResult]) -> None:
    r = builds["sample.nnopt.reorder"]
    assert r.ok, r.log[-2000:]
    plan_h = next(p for p in r.generated if p.name.endswith("_plan.h")).read_text()
    peak = int(re.search(r"_PLAN_PEAK_BYTES (\d+)u", plan_h).group(1))  # type: ignore[union-attr]
    shipped = int(re.search(r"_PLAN_PEAK_FILE_ORDER_BYTES (\d+)u",  # type: ignore[union-attr]
                            plan_h).group(1))
    assert peak < shipped


@pytest.mark.slow
def test_swapnn_generation_streams_and_writes_the_blob(
        builds: dict[str, BuildResult]) -> None:
    """samples/swapnn (`nnopt optimize --swap force`, issue 5): the sample's OPTIONS
    reach the compiler (the model streams weights through the generated
    <name>_swap_attach()) and EXTRA_OUTPUTS names the blob the sample loads. The
    descriptor's layout is tests/test_swap_cli.py's; that the blob authenticates and
    the model runs from it, Twister's sample.nnopt.swapnn.qemu."""
    r = builds["sample.nnopt.swapnn.qemu"]
    assert r.ok and r.model_c is not None, r.log[-4000:]
    name = r.model_c.name.removesuffix("_model.c")
    assert f"nnrt_status_t {name}_swap_attach(nnrt_extflash_t *dev)" in r.model_c.read_text()
    blob = r.model_c.parent / f"{name}_swap.bin"
    assert blob.is_file() and blob.read_bytes()[:4] == b"NNSW"


@pytest.mark.slow
def test_swapnn_fm_generation_writes_feature_maps_out(
        builds: dict[str, BuildResult]) -> None:
    """samples/swapnn's feature-map scenario (SWAPNN_FM=ok): the model fm_model.py writes
    at configure time is planned with --feature-maps auto for 50,000 B; the generated
    code attaches a tile store and puts/gets tiles, the plan header counts them, and the
    partition of fm_partition.overlay holds twice the sealed bytes of one inference (the
    ring never overwrites a live tile). That the tiles go to the flash simulator and come
    back bit-exact, Twister's sample.nnopt.swapnn.qemu.fm."""
    r = builds["sample.nnopt.swapnn.qemu.fm"]
    assert r.ok and r.model_c is not None, r.log[-4000:]
    name = r.model_c.name.removesuffix("_model.c")
    code = r.model_c.read_text()
    assert f"nnrt_status_t {name}_fm_attach(nnrt_tiledev_t *dev" in code
    assert "nnrt_fmstore_put(" in code and "nnrt_fmstore_get(" in code
    plan = json.loads((r.model_c.parent / f"{name}_plan.json").read_text())
    tiles = plan["feature_maps"]
    assert tiles and {t["device"] for t in tiles} == {"sim_flash"}
    plan_h = (r.model_c.parent / f"{name}_plan.h").read_text()
    assert f"_PLAN_FM_TILES {len(tiles)}u" in plan_h
    assert plan["arena_bytes"] <= 50_000 < plan["peak_live_bytes"]
    sealed = sum(t["bytes"] + 16 for t in tiles)
    (_, size) = _fm_partition()
    assert 2 * sealed <= size


def _fm_partition() -> tuple[int, int]:
    """(offset, size) of nnrt_fm_partition in samples/swapnn/fm_partition.overlay."""
    text = (SAMPLES / "swapnn" / "fm_partition.overlay").read_text()
    m = re.search(r"nnrt_fm_partition: partition@([0-9a-f]+)\s*\{[^}]*"
                  r"reg = <(0x[0-9a-fA-F]+) (0x[0-9a-fA-F]+)>", text)
    assert m, "nnrt_fm_partition not found"
    assert int(m.group(1), 16) == int(m.group(2), 16)
    return int(m.group(2), 16), int(m.group(3), 16)


@pytest.mark.parametrize("board", ["mps2_an385", "mps2_an500_qemu"])
def test_swapnn_fm_partition_lies_in_the_flash_simulator(board: str) -> None:
    """The feature-map partition (fm_partition.overlay, on flash_sim0 of the board's
    overlay) lies within the simulated flash, on its erase blocks, clear of the weight
    blob's start, and is what the nnopt board file declares as feature_map_storage
    (the planner's figures)."""
    overlay = (SAMPLES / "swapnn" / "boards" / f"{board}.overlay").read_text()
    m = re.search(r"flash_sim0: flash_sim@0 \{[^}]*reg = <0x0+ DT_SIZE_M\((\d+)\)>;\s*"
                  r"erase-block-size = <(\d+)>;\s*write-block-size = <(\d+)>", overlay)
    assert m, "flash_sim0 not found"
    flash, erase, write = int(m.group(1)) << 20, int(m.group(2)), int(m.group(3))
    off, size = _fm_partition()
    assert off % erase == 0 and size % erase == 0 and off + size <= flash
    assert off >= 8 << 20  # the weight scenarios' blob (3.5 MB) starts at 0
    nnopt_board = load_board(board.removesuffix("_qemu"))
    dev = nnopt_board.storage[nnopt_board.feature_map_storage]
    assert (dev.kind, dev.size, dev.erase_block, dev.program_unit) == (
        "flash_simulator", size, erase, write)


@pytest.mark.parametrize("cmsis_nn", [False, True])
def test_cmsis_nn_builds_generate_without_specialised_kernels(tmp_path: Path,
                                                              cmsis_nn: bool) -> None:
    """With CONFIG_NNRT_CMSIS_NN the kernels hand calls to CMSIS-NN at nnrt's entry
    points; kernels specialised into the model would bypass them, so nnopt_add_model()
    generates with --specialize off (and only then)."""
    for tool in ("cmake", "ninja", ARM_CC):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found")
    # int8 LeNet-5: `auto` specialises its three FCs (hello_world's tiny ones are not
    # worth a specialised FC's 620 B, FC_SPEC in lowering/fc.py)
    lenet = next(sc for sc in SCENARIOS if sc.name == "sample.nnopt.pingpong.int8")
    extra = ("CONFIG_NNRT_CMSIS_NN=y",) if cmsis_nn else ()
    r = _build(replace(lenet, defines=lenet.defines + extra), tmp_path)
    assert r.ok and r.model_c is not None, r.log[-3000:]
    ninja = (tmp_path / "build" / "build.ninja").read_text()
    command = next(line for line in ninja.splitlines() if " optimize " in line)
    assert ("--specialize off" in command) == cmsis_nn, command
    assert ("_spec_" in r.model_c.read_text()) != cmsis_nn


def test_board_mapping_accepts_both_qualifier_spellings(tmp_path: Path) -> None:
    # BOARD_QUALIFIERS lost its leading '/' in Zephyr 4.4 (migration-guide-4.4.rst).
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found")
    cases = [("mps2", "an385", "mps2_an385"), ("mps2", "/an385", "mps2_an385"),
             ("nucleo_f767zi", "stm32f767xx", "nucleo_f767zi"),
             ("qemu_cortex_m3", "/ti_lm3s6965", "qemu_cortex_m3"),
             ("mps2", "an521/cpu0", "mps2_an521"), ("mps2", "an386/qemu", "mps2_an386"),
             ("frdm_k64f", "", "")]
    lines = [f'include("{(REPO / "zephyr" / "cmake" / "nnopt.cmake").as_posix()}")']
    for board, quals, _ in cases:
        lines += [f'set(BOARD "{board}")', f'set(BOARD_QUALIFIERS "{quals}")',
                  "nnopt_board_for_zephyr_board(b)", 'message(STATUS "map=[${b}]")']
    script = tmp_path / "map.cmake"
    script.write_text("\n".join(lines) + "\n")
    out = _run(["cmake", "-P", str(script)], tmp_path)
    assert out.returncode == 0, out.stderr
    got = re.findall(r"map=\[([^\]]*)\]", out.stdout + out.stderr)
    assert got == [want for _, _, want in cases]


# ---------------------------------------------------------------------------------
# west nn-check
# ---------------------------------------------------------------------------------

def _nn_check() -> ModuleType:
    path = REPO / "scripts" / "west_commands" / "nn_check.py"
    spec = importlib.util.spec_from_file_location("nn_check_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_board_targets_map_to_nnopt_boards() -> None:
    m = zephyr_build
    table = {"mps2_an385": "mps2/an385", "nucleo_f767zi": "nucleo_f767zi",
             "qemu_cortex_m3": "qemu_cortex_m3"}
    assert m.nnopt_board_for("mps2/an385", table) == "mps2_an385"
    assert m.nnopt_board_for("nucleo_f767zi/stm32f767xx", table) == "nucleo_f767zi"
    assert m.nnopt_board_for("nucleo_f767zi@B/stm32f767xx", table) == "nucleo_f767zi"
    assert m.nnopt_board_for("qemu_cortex_m3", table) == "qemu_cortex_m3"
    assert m.nnopt_board_for("mps2/an521/cpu0", table) is None
    assert m.nnopt_board_for("frdm_k64f", table) is None


def test_cmake_cache_parsing(tmp_path: Path) -> None:
    m = zephyr_build
    cache = tmp_path / "CMakeCache.txt"
    cache.write_text("# comment\n//doc\nCACHED_BOARD:STRING=mps2/an385\n"
                     "ZEPHYR_TOOLCHAIN_VARIANT:STRING=gnuarmemb\nEMPTY:STRING=\n")
    entries = m.read_cmake_cache(cache)
    assert entries["CACHED_BOARD"] == "mps2/an385"
    assert entries["EMPTY"] == ""
    assert m.is_zephyr_build(tmp_path)
    assert m.find_build_dir(None, None, tmp_path) == tmp_path  # cwd is a build
    assert m.find_build_dir(None, "out/{board}", tmp_path) == tmp_path
    assert m.find_build_dir("b2", None, tmp_path) == Path("b2")


LINKER = """\
MEMORY {{ FLASH (rx) : ORIGIN = 0x0, LENGTH = 1M
         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 1M }}
SECTIONS {{
  .text : {{ KEEP(*(.vectors)) *(.text*) *(.rodata*) }} > FLASH
  .data : {{ *(.data*) }} > RAM AT > FLASH
  .bss (NOLOAD) : {{ *(.bss*) *(COMMON) }} > RAM
}}
"""
FIRMWARE = """\
#include <stdint.h>
volatile uint8_t big[{bss}];
void Reset_Handler(void) {{ for (;;) {{ big[0]++; }} }}
__attribute__((section(".vectors"), used)) const uintptr_t vectors[2] = {{
    0x20000000u + {bss}u + 1024u, (uintptr_t)&Reset_Handler }};
"""


def _fake_build(tmp: Path, board: str, bss: int) -> Path:
    """A directory that looks like a Zephyr build: CMakeCache.txt, zephyr/.config, and
    zephyr/zephyr.elf (a real Cortex-M3 ELF whose .bss is `bss` bytes)."""
    build = tmp / f"build_{bss}"
    (build / "zephyr").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(
        f"CACHED_BOARD:STRING={board}\nZEPHYR_TOOLCHAIN_VARIANT:STRING=gnuarmemb\n")
    (build / "zephyr" / ".config").write_text('CONFIG_KERNEL_BIN_NAME="zephyr"\n')
    (tmp / "fw.ld").write_text(LINKER.format())
    (tmp / f"fw_{bss}.c").write_text(FIRMWARE.format(bss=bss))
    cc = _run([ARM_CC, *M3_FLAGS, "-nostdlib", "-Os", "-T", str(tmp / "fw.ld"),
               str(tmp / f"fw_{bss}.c"), "-o", str(build / "zephyr" / "zephyr.elf")], tmp)
    assert cc.returncode == 0, cc.stderr
    return build


def _west_nn_check(args: list[str], topdir: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    m = _nn_check()
    monkeypatch.setenv("WEST_CONFIG_GLOBAL", os.fspath(topdir / "global.cfg"))
    monkeypatch.setenv("WEST_CONFIG_SYSTEM", os.fspath(topdir / "system.cfg"))
    cmd = m.NnCheck()
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd.add_parser(sub)
    ns = parser.parse_args(["nn-check", *args])
    try:
        cmd.run(ns, [], topdir=os.fspath(topdir), config=Configuration(topdir=os.fspath(topdir)))
    except SystemExit as err:
        return int(err.code or 0)
    except Exception as err:  # west's CommandError carries the exit status
        code = getattr(err, "returncode", None)
        if code is None:
            raise
        return int(code)
    return 0


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if shutil.which(ARM_CC) is None:
        pytest.skip(f"{ARM_CC} not found")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_nn_check_passes_a_build_within_budget(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    build = _fake_build(in_tmp, "qemu_cortex_m3", 1024)
    assert _west_nn_check(["-d", str(build)], in_tmp, monkeypatch) == 0
    assert "qemu_cortex_m3" in capsys.readouterr().out


def test_nn_check_finds_build_by_default_and_fails_over_budget(
        in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # 100 KB of .bss on qemu_cortex_m3 (64 KB of SRAM): over budget, exit 2 like
    # `nnopt check-elf`, with the report on stdout.
    built = _fake_build(in_tmp, "qemu_cortex_m3/ti_lm3s6965", 100 * 1024)
    built.rename(in_tmp / "build")
    assert _west_nn_check([], in_tmp, monkeypatch) == 2
    assert "over" in capsys.readouterr().out.lower()


def test_nn_check_explains_a_missing_build(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert _west_nn_check(["-d", str(in_tmp / "nope")], in_tmp, monkeypatch) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "Hint:" in err


def test_nn_check_explains_an_unknown_board(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    build = _fake_build(in_tmp, "frdm_k64f", 1024)
    assert _west_nn_check(["-d", str(build)], in_tmp, monkeypatch) == 1
    err = capsys.readouterr().err
    assert "frdm_k64f" in err and "--board" in err
    # --board overrides the mapping.
    assert _west_nn_check(["-d", str(build), "--board", "mps2_an385"], in_tmp,
                          monkeypatch) == 0
