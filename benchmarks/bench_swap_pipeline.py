"""Pipelining across frames (SwapNN's third level) in the weight swap driver, measured.

With ``NNRT_SWAP_PIPELINE_FRAMES=1`` (Zephyr: ``CONFIG_NNRT_SWAP_PIPELINE_FRAMES``) the
driver starts reading the next inference's chunk 0 as soon as an inference's last chunk
is waited for, so it loads during that inference's tail and whatever the application
does between frames. This runs K inferences in sequence on bare-metal QEMU (Cortex-M7,
nucleo_f767zi's figures; the semihosting file stands for the external flash with the
board's bandwidth model, modules/nnrt/port/baremetal/extflash_semihost.c) with and
without it, and prints the driver's stall (the modelled cycles the CPU waited in
read_wait(), ``nnrt: swap_stall``) and the instructions, side by side.

    PYTHONPATH=scripts python benchmarks/bench_swap_pipeline.py [-k 4]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from nnopt.boards import load_board  # noqa: E402
from nnopt.firmware.toolchain import run  # noqa: E402
from nnopt.frontend.tflite import load_model_bytes  # noqa: E402
from nnopt.planner import PlannedModel, PlanOptions, plan_model  # noqa: E402
from nnopt.runner import RuntimeExtras, build_planned  # noqa: E402
from nnopt.swap.pipeline import plan_swap_for  # noqa: E402
from nnopt.testing.big_models import Layer, conv_chain  # noqa: E402
from nnopt.testing.harness import random_inputs  # noqa: E402

BOARD = load_board("nucleo_f767zi")
KEY = bytes(range(32))
_STALL = re.compile(r"nnrt: swap_reads=(\d+) swap_bytes=(\d+) swap_stall=(\d+)")
_TOTAL = re.compile(r"nnrt: instructions_total=(\d+)")


def models() -> dict[str, tuple[bytes, str]]:
    """(model, swap mode): the feature-map sample's conv chain (samples/swapnn
    fm_model.py's layers), every convolution streamed, the first op's weights first;
    MobileNetV2, whose first streamed op comes after most of the network."""
    c = 24
    chain = conv_chain((1, 24, 24, c), [Layer(c), Layer(c), Layer(c), Layer(c, skip_from=1),
                                        Layer(c, skip_from=0), Layer(c, skip_from=-1),
                                        Layer(8, stride=2)], seed=4, name="swapnn_fm")
    out = {"conv_chain_24 (--swap force)": (chain, "force")}
    mnv2 = ROOT / "models" / "mobilenet_v2_quantized_1x3x224x224.tflite"
    if mnv2.is_file():
        out["mobilenet_v2_int8_224 (--swap auto)"] = (mnv2.read_bytes(), "auto")
    return out


def planned(data: bytes, name: str, mode: str) -> PlannedModel:
    """As ``nnopt optimize --board nucleo_f767zi --swap MODE`` plans it (its default
    tiling and in-place ops: MobileNetV2's arena then fits the SRAM)."""
    g = load_model_bytes(data, name=name)
    opts = PlanOptions(board=BOARD, tiling="auto", inplace_ops="auto")
    return plan_swap_for(plan_model(g, opts, source_bytes=data), BOARD, mode)


def measure(pm: PlannedModel, data: bytes, k: int, pipeline: bool,
            work: Path) -> tuple[int, int, int]:
    """(chunk reads, modelled stall cycles, instructions) of k inferences."""
    extras = RuntimeExtras(defines={"NNRT_SWAP_PIPELINE_FRAMES": "1" if pipeline else "0"})
    exe = build_planned(pm, "qemu-m7", work / "gen", board=BOARD, swap_key=KEY,
                        extras=extras)
    args = ["-b", str(work / "gen" / f"{pm.plan.model}_swap.bin"), "-n", str(k)]
    for i, x in enumerate(random_inputs(data)):
        p = work / f"in{i}.bin"
        p.write_bytes(x.tobytes() * k)
        args += ["-i", str(p)]
    res = run(exe, "qemu-m7", args, board=BOARD, timeout_s=3600)
    m, t = _STALL.search(res.stdout), _TOTAL.search(res.stdout)
    if res.exit_code != 0 or m is None:
        raise SystemExit(f"run failed ({res.exit_code}):\n{res.stdout}\n{res.stderr}")
    return int(m[1]), int(m[3]), int(t[1]) if t else (res.instructions or 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", type=int, default=4, help="inferences in sequence (default 4)")
    ap.add_argument("--model", action="append", help="only this model (its first word)")
    args = ap.parse_args()
    print(f"## Pipelining across frames: {args.k} inferences, QEMU mps2-an500 as "
          "nucleo_f767zi (modelled SPI NOR stall)\n")
    print("| model | chunks/inf | stall cycles off | stall cycles on | stall saved/inf | "
          "instructions off | instructions on |")
    print("|---|---|---|---|---|---|---|")
    for name, (data, mode) in models().items():
        if args.model and name.split()[0] not in args.model:
            continue
        pm = planned(data, name.split()[0], mode)
        with tempfile.TemporaryDirectory(prefix="nnopt-pipe-") as tmp:
            off = measure(pm, data, args.k, False, Path(tmp) / "off")
            on = measure(pm, data, args.k, True, Path(tmp) / "on")
        print(f"| {name} | {off[0] // args.k} | {off[1]:,} | {on[1]:,} | "
              f"{(off[1] - on[1]) / args.k:,.0f} | {off[2]:,} | {on[2]:,} |")
    print()


if __name__ == "__main__":
    main()
