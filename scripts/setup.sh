#!/usr/bin/env bash
# The newcomer's one command: install everything, then run the main job on the
# embedded default, the MLPerf Tiny visual-wake-words model shipped in models/:
# plan it for the nucleo_f767zi, report memory, generate C into build/nn, and run it
# as Cortex-M7 firmware under QEMU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
MODEL=${1:-models/vww_96_int8.tflite}
BOARD=${2:-nucleo_f767zi}
.venv/bin/nnopt optimize "$MODEL" --board "$BOARD" -o build/nn
.venv/bin/nnopt run "$MODEL" --board "$BOARD" --target qemu-m7 --seed 1
