"""Out of core on nucleo_f767zi (issue 39): activations over SRAM + DTCM, and the
feature-map swap plan for models larger than its RAM.

Two tables:

1. **Measured, several arenas**: models whose activations exceed SRAM but fit SRAM +
   DTCM, run as Cortex-M7 firmware under QEMU (mps2-an500) twice: planned for
   nucleo_f767zi (two arenas, sram + dtcm) and for the same part with a 1 MB SRAM (one
   arena: the "everything in emulated RAM" run, same CPU, FPU and kernels).
   Instructions of one inference, bytes moved to or from storage (none), outputs
   compared with the tflite-micro interpreter.
2. **Predicted, feature maps out of core** (nnopt.swap.fmap; planned, not yet run: the
   runtime write path is future work): per model, RAM and ROM as planned, bytes written
   and read per inference on the board's feature-map device (the SD card), predicted
   slowdown against all in RAM, wear and I/O energy. With ``--realworld`` also the
   MediaPipe models of ../shared/models/realworld.

With ``--only bands``: the models whose ops run in row bands (VGG16, ResNet-50, the
MediaPipe models with ``--realworld``), measured out of core on QEMU; ``--baseline``
runs each again with its feature maps all in RAM (a 1 MB or 3.5 MB arena on
mps2-an500, a 64 MB one on mps3-an547 for VGG16: the same M7 build) for the measured
slowdown.

Also prints MobileNetV2's weight-swap figures on nucleo_f767zi (they must stay what
scripts/nnopt/swap/README.md records).

    PYTHONPATH=scripts python benchmarks/bench_out_of_core.py [--no-qemu] [--realworld]
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from nnopt.boards import Board, Emulation, load_board  # noqa: E402
from nnopt.frontend.tflite import load_model_bytes  # noqa: E402
from nnopt.planner import PlannedModel, PlanOptions, plan_model  # noqa: E402
from nnopt.runner import run_planned  # noqa: E402
from nnopt.swap.fmap import plan_feature_maps, plan_traffic  # noqa: E402
from nnopt.swap.pipeline import plan_swap_for  # noqa: E402
from nnopt.testing.big_models import (  # noqa: E402
    Layer,
    band_forms,
    conv_chain,
    resnet50,
    resnet_layers,
    vgg16,
    vgg_layers,
)
from nnopt.testing.fm_model import SWAP_KEY, build_fm_model, run_fm_model, weight_blob  # noqa: E402
from nnopt.testing.harness import random_inputs, run_litert, run_tflm  # noqa: E402

NUCLEO = load_board("nucleo_f767zi")
# The same part with one 1 MB SRAM arena (the "everything in emulated RAM" run: same
# CPU, FPU and kernels; sram 0x20000000..0x20100000 and dtcm above it on mps2-an500)
ONE_ARENA = replace(NUCLEO, name="nucleo_f767zi_1mb_sram", activation_regions=(), regions={
    **NUCLEO.regions, "sram": replace(NUCLEO.regions["sram"], size=1 << 20)})
# The same part with a 1 MB SRAM: MediaPipe's selfie segmentation runs in row bands with
# its 786,432 B float32 input whole in RAM (on the real part's 384 KB SRAM the input is
# stored instead, written by the application: the "mp_selfie_segmentation" row)
SELFIE_1MB = replace(ONE_ARENA, name="nucleo_f767zi_1mb_sram_selfie")
# The same part with a 3.5 MB SRAM arena (mps2-an500's 4 MB SSRAM2/3 at 0x20000000,
# the DTCM moved to its top): feature maps all in RAM for models up to ResNet-50 at
# 224 (2.4 MB live); weights beyond the 2 MB flash still stream as planned
assert NUCLEO.emulation is not None
BIG_RAM = replace(
    NUCLEO, name="nucleo_f767zi_3p5mb_sram", activation_regions=(),
    regions={**NUCLEO.regions, "sram": replace(NUCLEO.regions["sram"], size=0x380000)},
    emulation=replace(NUCLEO.emulation,
                      origins={**NUCLEO.emulation.origins, "dtcm": 0x20380000}))
# The same Cortex-M7 build with 64 MB of RAM, for models whose live feature maps exceed
# 3.5 MB (VGG16 at 224: 25.7 MB): no mps2 machine has that much, so QEMU's mps3-an547
# runs it. Its Cortex-M55 executes the M7's Armv7E-M + FPv5-D16 instructions (the
# firmware is built for -mcpu=cortex-m7 all the same); hw/arm/mps2-tz.c: ITCM 512 KB at
# 0 (init_svtor 0: the vector table, so flash is 512 KB here and more weights stream
# than on the 2 MB part), DTCM at 0x20000000 (secure alias 0x30000000), 2 GB of DDR at
# 0x60000000. The same vgg_like_f32_64 build counts 1,998,879,440 instructions on
# mps2-an500 and 1,998,923,594 on mps3-an547 (0.002 % apart, both bit-exact).
DDR_RAM = replace(
    NUCLEO, name="nucleo_f767zi_64mb_ddr", activation_regions=(),
    regions={**NUCLEO.regions,
             "flash": replace(NUCLEO.regions["flash"], size=512 << 10),
             "sram": replace(NUCLEO.regions["sram"], size=64 << 20)},
    emulation=Emulation("mps3-an547", {"flash": 0x10000000, "sram": 0x60000000,
                                       "dtcm": 0x30000000}))


def two_region_models() -> dict[str, bytes]:
    skips = [Layer(48), Layer(48), Layer(48, skip_from=0), Layer(48, skip_from=-1),
             Layer(32, stride=2), Layer(16)]
    return {
        "skip48_int8": conv_chain((1, 48, 48, 48), skips, seed=1, name="skip48_int8"),
        "skip24_f32": conv_chain((1, 48, 48, 12), [Layer(12), Layer(12), Layer(12, skip_from=0),
                                                   Layer(12, skip_from=-1), Layer(8, stride=2)],
                                 dtype="float32", seed=1, name="skip24_f32"),
    }


def vgg_like_f32_64() -> bytes:
    return conv_chain((1, 64, 64, 3), vgg_layers(0.5), dtype="float32", seed=3,
                      name="vgg_like_f32_64")


def big_models() -> dict[str, bytes]:
    return {
        "vgg_like_f32_64": vgg_like_f32_64(),
        "resnet_like_int8_96": conv_chain((1, 96, 96, 3), resnet_layers(0.5), seed=3,
                                          name="resnet_like_int8_96"),
        "vgg16_like_f32_224": conv_chain((1, 224, 224, 3), vgg_layers(1.0), dtype="float32",
                                         seed=3, name="vgg16_like_f32_224"),
        "resnet_like_int8_224": conv_chain((1, 224, 224, 3), resnet_layers(1.0), seed=3,
                                           name="resnet_like_int8_224"),
    }


def plan(data: bytes, name: str, board=NUCLEO) -> PlannedModel:  # type: ignore[no-untyped-def]
    g = load_model_bytes(data, name=name)
    return plan_model(g, PlanOptions(board=board, order="file", schedule_time_budget_s=2.0),
                      source_bytes=data)


def measured(qemu: bool) -> None:
    print("## Several arenas (measured, QEMU mps2-an500, Cortex-M7)\n")
    print("| model | peak live B | sram arena | dtcm arena | bytes to/from storage | "
          "instr. nucleo (2 arenas) | instr. one 1 MB SRAM arena | ratio | bit-exact |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, data in two_region_models().items():
        pm = plan(data, name)
        one = plan(data, name, ONE_ARENA)
        row = [name, f"{pm.plan.peak_live_bytes:,}", f"{pm.plan.arena_bytes:,}",
               f"{pm.plan.arenas.get('dtcm', 0):,}", "0"]
        if qemu and shutil.which("qemu-system-arm"):
            ins = random_inputs(data, 5)
            ref, _ = run_tflm(data, ins)
            with tempfile.TemporaryDirectory() as tmp:
                a = run_planned(pm, [x.tobytes() for x in ins], target="qemu-m7", board=NUCLEO,
                                workdir=Path(tmp) / "a")
                b = run_planned(one, [x.tobytes() for x in ins], target="qemu-m7", board=ONE_ARENA,
                                workdir=Path(tmp) / "b")
            exact = all(np.frombuffer(o, dtype=r.dtype).tobytes() == r.tobytes()
                        for o, r in zip(a.outputs, ref, strict=True))
            ia, ib = a.instructions or 0, b.instructions or 0
            row += [f"{ia:,}", f"{ib:,}", f"{ia / ib:.3f}" if ib else "-", str(exact)]
        else:
            row += ["-", "-", "-", "-"]
        print("| " + " | ".join(row) + " |")
    print()


def fm_models() -> dict[str, bytes]:
    five = [Layer(48), Layer(48), Layer(48), Layer(48, skip_from=1), Layer(48, skip_from=0),
            Layer(48, skip_from=-1), Layer(16, stride=2)]
    return {"skip5_int8": conv_chain((1, 48, 48, 48), five, seed=4, name="skip5_int8"),
            "skip5_f32": conv_chain((1, 36, 36, 24), [
                Layer(24), Layer(24), Layer(24), Layer(24, skip_from=1), Layer(24, skip_from=0),
                Layer(24, skip_from=-1), Layer(8, stride=2)],
                dtype="float32", seed=4, name="skip5_f32")}


def measured_fm(qemu: bool) -> None:
    print("## Feature maps out of core (measured, QEMU mps2-an500, Cortex-M7, tiles "
          "through the semihosting file)\n")
    print("| model | peak live B | SRAM arena | tiles/inf | written B/inf | read B/inf | "
          "instr. out of core | instr. one 1 MB SRAM arena | measured ratio | "
          "predicted AEAD ratio | predicted slowdown (SD over SPI) | bit-exact |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, data in fm_models().items():
        g = load_model_bytes(data, name=name)
        pm = plan_model(g, PlanOptions(board=NUCLEO, feature_maps="auto"), source_bytes=data)
        one = plan(data, name, ONE_ARENA)
        fms = pm.plan.feature_maps
        nbytes = sum(e.bytes + 16 for e in fms)
        fm = plan_feature_maps(pm.graph, one.plan, NUCLEO,
                               ram_bytes=NUCLEO.sram_bytes - pm.plan.state_bytes)
        row = [name, f"{pm.plan.peak_live_bytes:,}", f"{pm.plan.arena_bytes:,}",
               str(len(fms)), f"{nbytes:,}", f"{nbytes:,}"]
        if qemu and shutil.which("qemu-system-arm") and fms:
            ins = random_inputs(data, 5)
            ref, _ = run_tflm(data, ins)
            with tempfile.TemporaryDirectory() as tmp:
                t = Path(tmp)
                exe = build_fm_model(pm, t / "gen", "qemu-m7", NUCLEO)
                r = run_fm_model(exe, "qemu-m7", NUCLEO, t, ins)
                b = run_planned(one, [x.tobytes() for x in ins], target="qemu-m7",
                                board=ONE_ARENA, workdir=t / "b")
            ia, ib = r.instructions or 0, b.instructions or 0
            aead = (fm.compute_s + fm.aead_s) / fm.compute_s if fm.compute_s else 1.0
            row += [f"{ia:,}", f"{ib:,}", f"{ia / ib:.3f}" if ib else "-", f"{aead:.3f}",
                    f"{fm.slowdown:.2f}", str(r.output == ref[0].tobytes())]
        else:
            row += ["-"] * 6
        print("| " + " | ".join(row) + " |")
    print()


def band_models() -> dict[str, tuple[Callable[[], bytes], int | None]]:
    """Models whose ops exceed the RAM alone (row bands): (its builder, --sram budget or
    None for the board's)."""
    small = [Layer(16), Layer(16, stride=2), Layer(16, skip_from=1), Layer(8),
             Layer(8, stride=2)]
    return {
        "bands_int8_40 (14,000 B budget)": (lambda: conv_chain(
            (1, 40, 40, 4), small, seed=5, name="bands_int8"), 14_000),
        # one op of each band form beyond sliding windows (tests/test_swap_fm_band_forms.py)
        **{f"band_{k}_int8 ({b:,} B budget)": (partial(band_forms, k, dtype="int8", seed=3), b)
           for k, b in (("se", 6_000), ("se_mean", 6_000), ("resize", 25_000),
                        ("tconv", 25_000))},
        "vgg_like_f32_64": (vgg_like_f32_64, None),
        "resnet_like_int8_224_w2": (lambda: conv_chain(
            (1, 224, 224, 3), resnet_layers(0.5), seed=3, name="resnet_like_int8_224_w2"),
            None),
        # ResNet-50 at full width: 25.6 MB of weights, beyond the 16 MB NOR: the blob goes
        # to the board's SD card (weight_storage)
        "resnet50_int8_224": (lambda: resnet50(224, seed=50, name="resnet50_int8_224"), None),
        # VGG16 float32 at 224 (138.4 M parameters, 553 MB): its 602,112-byte input
        # written to the SD card by the application, its convolutions in row bands with
        # their weights streamed band by band, its fully connected rows in depth slices,
        # the chunk table read on demand
        "vgg16_f32_224": (lambda: vgg16(224, seed=16, name="vgg16_f32_224"), None),
    }


def band_selection(realworld: bool, only: list[str] | None
                   ) -> dict[str, tuple[Callable[[], bytes], int | None]]:
    """band_models() (only those named by their first word, if any) and, with
    ``realworld``, MediaPipe's face detector and selfie segmentation
    (on nucleo_f767zi, its input stored; ``mp_selfie_segmentation_1mb``: on a 1 MB SRAM,
    its input whole): each model's builder and SRAM override."""
    models = {k: v for k, v in band_models().items() if not only or k.split()[0] in only}
    face = ROOT.parent / "shared" / "models" / "realworld" / "mp_face_detection_short_range.tflite"
    if realworld and face.is_file() and (not only or "mp_face_detection_short_range" in only):
        models["mp_face_detection_short_range"] = (face.read_bytes, None)
    selfie = face.with_name("mp_selfie_segmentation.tflite")
    if realworld and selfie.is_file() and (not only or "mp_selfie_segmentation" in only):
        # on nucleo_f767zi itself its input is stored, written by the application
        models["mp_selfie_segmentation"] = (selfie.read_bytes, None)
    if realworld and selfie.is_file() and (not only or "mp_selfie_segmentation_1mb" in only):
        models["mp_selfie_segmentation_1mb (1 MB SRAM, input whole)"] = (selfie.read_bytes,
                                                                         None)
    return models


def board_of(name: str) -> Board:
    """The part a band model is planned for: nucleo_f767zi, or its 1 MB-SRAM variant."""
    return SELFIE_1MB if name.startswith("mp_selfie_segmentation_1mb") else NUCLEO


def measured_bands(qemu: bool, realworld: bool, only: list[str] | None = None,
                   big: bool = False) -> None:
    print("## Ops in row bands, feature maps in storage (measured, QEMU mps2-an500, "
          "Cortex-M7, tiles through the semihosting file; weights streamed from the "
          "semihosting NOR where they exceed internal flash)\n")
    print("| model | weights internal / streamed B | peak live B | SRAM arena B | banded ops "
          "| tiles written/inf | written B/inf (measured / planned) | read B/inf (measured / "
          "planned) | weight B streamed/inf | instr. out of core | instr. all in RAM | "
          "measured ratio | predicted AEAD ratio | predicted compute ms | predicted ms (SD) "
          "| predicted slowdown "
          "| weight-swap slowdown | erase cycles/block/inf | life @1/s | I/O energy mJ/inf "
          "| bit-exact |")
    print("|" + "---|" * 21)
    sizes: list[str] = []
    for name, (make, sram) in band_selection(realworld, only).items():
        data = make()
        mname = name.split()[0].removesuffix("_1mb")  # the model's own name in the C
        g = load_model_bytes(data, name=mname)
        board = board_of(name)
        opts = PlanOptions(board=board, sram=sram, order="file", feature_maps="auto")
        # the cost model's staging pick for every model (ResNet-50: 16 KB, 1,556 chunks;
        # a layer's chunks run in one loop over a const table, so their code no longer
        # grows with the chunk count: nnopt.swap.codegen)
        staging = None
        pm = plan_swap_for(plan_model(g, opts, source_bytes=data), board,
                           staging_bytes=staging)
        p = pm.plan
        fm = plan_traffic(pm.graph, p, NUCLEO)
        s = p.swap
        internal = s.internal_weight_bytes if s is not None else p.weight_bytes
        external = s.external_weight_bytes if s is not None else 0
        tiles = sum(m.chunks for m in p.stored)
        life = "-" if math.isinf(fm.life_years) else f"{fm.life_years:,.2f} y"
        row = [name, f"{internal:,} / {external:,}", f"{p.peak_live_bytes:,}",
               f"{p.arena_bytes:,}", str(len(p.bands)), str(tiles)]
        meas = ["-"] * 5
        exact = "-"
        if qemu and shutil.which("qemu-system-arm"):
            ins = random_inputs(data, 5)
            mp = name.startswith("mp_")  # float16 weights: LiteRT's reference kernels
            # (the selfie model's Convolution2DTransposeBias only in LiteRT's default
            # resolver, XNNPACK: a tolerance, not bit-exactness)
            xnn = name.startswith("mp_selfie")
            ref = (run_litert(data, ins, reference=not xnn)[0] if mp
                   else run_tflm(data, ins)[0])
            with tempfile.TemporaryDirectory() as tmp:
                t = Path(tmp)
                exe = build_fm_model(pm, t / "gen", "qemu-m7", board)
                r = run_fm_model(exe, "qemu-m7", board, t, ins, weight_blob(pm, t / "gen"),
                                 outputs=len(ref), timeout_s=7200)  # VGG16: ~100 G instr.
                m = re.search(r"swap_bytes=(\d+)", r.text)
                base = "-"
                ratio = "-"
                if p.peak_live_bytes < ONE_ARENA.sram_bytes and not external:
                    one = plan(data, mname, ONE_ARENA)
                    b = run_planned(one, [x.tobytes() for x in ins], target="qemu-m7",
                                    board=ONE_ARENA, workdir=t / "b")
                    base = f"{b.instructions or 0:,}"
                    ratio = f"{(r.instructions or 0) / max(b.instructions or 1, 1):.3f}"
                elif big and p.peak_live_bytes <= DDR_RAM.sram_bytes:
                    # feature maps all in a 3.5 MB arena (a 64 MB one on mps3-an547
                    # beyond that); weights stream as they must
                    bb = BIG_RAM if p.peak_live_bytes <= BIG_RAM.sram_bytes else DDR_RAM
                    # on the 512 KB ITCM every weight streams (VGG16: 53,672 B stay, the
                    # code and the chunk table take the rest; on the 2 MB part 0.2 % of
                    # its weights are internal)
                    one = plan_swap_for(plan(data, mname, bb), bb, staging_bytes=staging,
                                        mode="auto" if bb is BIG_RAM else "force")
                    b = run_planned(one, [x.tobytes() for x in ins], target="qemu-m7",
                                    board=bb, workdir=t / "b", swap_key=SWAP_KEY,
                                    timeout_s=14400)
                    bs = one.plan.swap
                    where = ("3.5 MB arena" if bb is BIG_RAM else
                             f"{one.plan.arena_bytes / 2**20:.1f} MB arena in DDR, mps3-an547")
                    exact_b = all(o == x.tobytes()
                                  for o, x in zip(b.outputs, ref, strict=True))
                    base = (f"{b.instructions or 0:,} ({where}, "
                            f"{bs.external_weight_bytes if bs else 0:,} B of weights "
                            f"streamed{'' if exact_b else ', NOT bit-exact'})")
                    ratio = f"{(r.instructions or 0) / max(b.instructions or 1, 1):.3f}"
                sizes.append(f"{name}: " + _size(exe))
            meas = [f"{r.written_bytes:,} / {fm.written_bytes:,}",
                    f"{r.read_bytes:,} / {fm.read_bytes:,}",
                    f"{int(m[1]):,}" if m else "0", f"{r.instructions or 0:,}", base]
            meas.append(ratio)
            exact = str(r.exit_code == 0 and all(
                o == x.tobytes() for o, x in zip(r.outputs, ref, strict=True)))
            if xnn and r.exit_code == 0:
                diff = max(float(np.abs(np.frombuffer(o, x.dtype) - x.reshape(-1)).max())
                           for o, x in zip(r.outputs, ref, strict=True))
                exact = f"max abs diff {diff:.2g} (LiteRT XNNPACK)"
            elif r.exit_code == 0 and exact == "False" and ref[0].dtype == np.float32:
                got = np.frombuffer(r.outputs[0], np.float32)
                exact = f"max abs diff {np.abs(got - ref[0].reshape(-1)).max():.3g}"
            elif r.exit_code != 0:
                exact = f"exit {r.exit_code}"
        else:
            meas = [f"- / {fm.written_bytes:,}", f"- / {fm.read_bytes:,}", "-", "-", "-", "-"]
        row += meas
        aead = (fm.compute_s + fm.aead_s) / fm.compute_s if fm.compute_s else 1.0
        row += [f"{aead:.3f}", f"{fm.compute_s * 1e3:,.0f}", f"{fm.predicted_s * 1e3:,.0f}",
                f"{fm.slowdown:.2f}",
                f"{s.predicted_slowdown:.3f}" if s is not None and s.enabled else "-",
                f"{fm.erase_cycles_per_inference:.3g}", life,
                f"{fm.energy_mj_per_inference:,.1f}", exact]
        print("| " + " | ".join(row) + " |")
    print()
    for line in sizes:
        print(line)
    print()


def _size(exe: Path) -> str:
    """Flash and RAM of a firmware (arm-none-eabi-size -A: sections by address)."""
    out = subprocess.run(["arm-none-eabi-size", "-A", str(exe)], capture_output=True,
                         text=True, check=False).stdout
    regions = {"flash": 0, "sram": 0, "dtcm": 0}
    origins = NUCLEO.emulation.origins if NUCLEO.emulation else {}
    for line in out.splitlines():
        f = line.split()
        if len(f) != 3 or not f[1].isdigit() or not f[0].startswith("."):
            continue
        size, addr = int(f[1]), int(f[2])
        if not size or f[0].startswith((".debug", ".comment", ".ARM.attributes")):
            continue
        region = "dtcm" if addr >= origins.get("dtcm", 1 << 40) else (
            "sram" if addr >= origins.get("sram", 1 << 40) else "flash")
        regions[region] += size
    return ", ".join(f"{k} {v:,} B" for k, v in regions.items())


def predicted(realworld: bool) -> None:
    print("## Feature maps out of core (predicted by nnopt.swap.fmap, device: "
          f"{NUCLEO.feature_map_storage})\n")
    print("| model | weights B | peak live B | RAM B | written B/inf | read B/inf | banded ops | "
          "compute ms | predicted ms | slowdown | erase cycles/block/inf | life @1/s | "
          "I/O energy mJ/inf |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    models = dict(big_models())
    if realworld:
        rw = ROOT.parent / "shared" / "models" / "realworld"
        for f in ("mp_selfie_segmentation.tflite", "mp_face_detection_short_range.tflite"):
            if (rw / f).is_file():
                models[Path(f).stem] = (rw / f).read_bytes()
    mnv2 = ROOT / "models" / "mobilenet_v2_quantized_1x3x224x224.tflite"
    if mnv2.is_file():
        models["mobilenet_v2_int8_224"] = mnv2.read_bytes()
    for name, data in models.items():
        pm = plan(data, name)
        fm = plan_feature_maps(pm.graph, pm.plan, NUCLEO)
        life = "-" if math.isinf(fm.life_years) else f"{fm.life_years:,.2f} y"
        print(f"| {name} | {pm.plan.weight_bytes:,} | {pm.plan.peak_live_bytes:,} | "
              f"{fm.ram_bytes:,} | {fm.written_bytes:,} | {fm.read_bytes:,} | "
              f"{len(fm.banded_ops)} | {fm.compute_s * 1e3:,.0f} | {fm.predicted_s * 1e3:,.0f} | "
              f"{fm.slowdown:.2f} | {fm.erase_cycles_per_inference:.3g} | {life} | "
              f"{fm.energy_mj_per_inference:,.1f} |")
    print()


def overlap(realworld: bool, only: list[str] | None = None) -> None:
    """What double buffering of feature-map tiles saves, by the cost model
    (nnopt.swap.fmap.plan_traffic): synchronous put/get cost compute + I/O + AEAD per op;
    double-buffered, max(compute, I/O) + AEAD (the transfer hidden behind the op's
    compute, the CPU's AEAD never). The runtime half is CONFIG_NNRT_SWAP_FM_ASYNC (Zephyr)."""
    print("## Double buffering of feature-map tiles (predicted by nnopt.swap.fmap."
          f"plan_traffic, device: {NUCLEO.feature_map_storage})\n")
    print("| model | written B/inf | read B/inf | compute ms | I/O ms | AEAD ms | "
          "synchronous ms | double-buffered ms | saved ms | slowdown sync -> double |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (make, sram) in band_selection(realworld, only).items():
        data = make()
        g = load_model_bytes(data, name=name.split()[0].removesuffix("_1mb"))
        opts = PlanOptions(board=board_of(name), sram=sram, order="file",
                           feature_maps="auto")
        pm = plan_model(g, opts, source_bytes=data)
        fm = plan_traffic(pm.graph, pm.plan, NUCLEO)
        sync = fm.compute_s + fm.io_s + fm.aead_s
        c = fm.compute_s or 1.0
        print(f"| {name} | {fm.written_bytes:,} | {fm.read_bytes:,} | "
              f"{fm.compute_s * 1e3:,.0f} | {fm.io_s * 1e3:,.0f} | {fm.aead_s * 1e3:,.0f} | "
              f"{sync * 1e3:,.0f} | {fm.predicted_s * 1e3:,.0f} | "
              f"{(sync - fm.predicted_s) * 1e3:,.0f} | {sync / c:.2f} -> {fm.slowdown:.2f} |")
    print()


def mobilenet_swap() -> None:
    mnv2 = ROOT / "models" / "mobilenet_v2_quantized_1x3x224x224.tflite"
    if not mnv2.is_file():
        return
    data = mnv2.read_bytes()
    g = load_model_bytes(data, name="mobilenet_v2")
    pm = plan_swap_for(plan_model(g, PlanOptions(board=NUCLEO), source_bytes=data), NUCLEO)
    s = pm.plan.swap
    assert s is not None
    print("## MobileNetV2 weight swap on nucleo_f767zi (must match swap/README.md)\n")
    print(f"internal {s.internal_weight_bytes:,} B, external {s.external_weight_bytes:,} B, "
          f"{len(s.chunks)} chunks, staging {s.staging_bytes:,} B, swap RAM {s.sram_bytes:,} B, "
          f"predicted slowdown {s.predicted_slowdown:.3f}, arena {pm.plan.arena_bytes:,} B\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-qemu", action="store_true", help="plan only, run nothing")
    ap.add_argument("--realworld", action="store_true",
                    help="also the MediaPipe models of ../shared/models/realworld")
    ap.add_argument("--only", choices=("regions", "evict", "bands", "predicted", "overlap"),
                    help="one table only (and MobileNetV2's swap line)")
    ap.add_argument("--baseline", action="store_true",
                    help="the bands table: also run models above 1 MB of activations with "
                    "their feature maps in a 3.5 MB arena, or a 64 MB one on QEMU's "
                    "mps3-an547 (VGG16), weights streamed as they must")
    ap.add_argument("--model", action="append",
                    help="the bands table: only this model (repeatable), e.g. "
                    "resnet50_int8_224")
    args = ap.parse_args()
    if args.only in (None, "regions"):
        measured(not args.no_qemu)
    if args.only in (None, "evict"):
        measured_fm(not args.no_qemu)
    if args.only in (None, "bands"):
        measured_bands(not args.no_qemu, args.realworld, args.model, args.baseline)
    if args.only in (None, "overlap"):
        overlap(args.realworld, args.model)
    if args.only not in (None, "predicted"):
        mobilenet_swap()
        return
    predicted(args.realworld)
    mobilenet_swap()


if __name__ == "__main__":
    main()
