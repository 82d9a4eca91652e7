# QEMU for mps2/an500/qemu: Zephyr includes every board directory's board.cmake
# (cmake/modules/kernel.cmake), Zephyr's boards/arm/mps2/board.cmake first; that one
# sets nothing for this variant. The machine is QEMU's mps2-an500 (Cortex-M7).
if(CONFIG_BOARD_MPS2_AN500_QEMU)
  set(SUPPORTED_EMU_PLATFORMS qemu)
  set(QEMU_CPU_TYPE_${ARCH} cortex-m7)
  set(QEMU_FLAGS_${ARCH}
    -cpu ${QEMU_CPU_TYPE_${ARCH}}
    -machine mps2-an500
    -nographic
    -vga none
    )
endif()
