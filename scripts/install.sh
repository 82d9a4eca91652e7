#!/usr/bin/env bash
# Installs everything nnopt needs on Debian 12 / Ubuntu (idempotent):
#   - Debian packages: the Arm cross toolchain + newlib, QEMU for Cortex-M, a host C
#     compiler, Python venv support, mbedTLS (AEAD for swapped weights);
#   - a Python virtual environment in .venv with nnopt installed editable, plus the
#     development tools (pytest, mypy, ruff, west, the tflite-micro oracle), at the
#     versions constraints.txt pins;
#   - with NNOPT_ZEPHYR=1, also the Python packages of a Zephyr workspace.
# Needs root (or sudo) only when a Debian package is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gcc libc6-dev make dpkg-dev
              git python3-venv libmbedtls-dev valgrind cmake
              # TFLM under Zephyr (samples/tflm_offline): C++ with the toolchain's picolibc
              picolibc-arm-none-eabi libstdc++-arm-none-eabi-picolibc
              # RISC-V firmware (boards qemu_riscv32, hifive1): RV32IMAC compiler with the
              # rv32imac/ilp32 multilib, its C library, qemu-system-riscv32
              gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "nnopt install: Debian packages to install: ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "nnopt install: creating .venv with $($PY --version)"
    $PY -m venv .venv
fi
stamp=.venv/.nnopt-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
    echo "nnopt install: installing nnopt and its Python dependencies into .venv"
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -c constraints.txt -e '.[dev]'  # pinned versions
    touch "$stamp"
fi
# Optional (NNOPT_ZEPHYR=1): west's and Twister's Python packages for a Zephyr workspace.
if [ "${NNOPT_ZEPHYR:-0}" = 1 ]; then
    echo "nnopt install: installing Zephyr's Python packages (scripts/zephyr-requirements.txt)"
    .venv/bin/python -m pip install -q -r scripts/zephyr-requirements.txt
fi
echo "nnopt install: ready ($(.venv/bin/nnopt --version), $(arm-none-eabi-gcc -dumpversion) arm-none-eabi-gcc, $(qemu-system-arm --version | head -1))"
