# QEMU for mps2/an500/qemu: Zephyr includes every board directory's board.cmake
# (cmake/modules/kernel.cmake), Zephyr's boards/arm/mps2/board.cmake first; that one
# sets nothing for these variants. The machines are QEMU's mps2-an500 (Cortex-M7) and
# mps2-an386 (Cortex-M4 with its FPU), hw/arm/mps2.c.
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
if(CONFIG_BOARD_MPS2_AN386_QEMU)
  set(SUPPORTED_EMU_PLATFORMS qemu)
  set(QEMU_CPU_TYPE_${ARCH} cortex-m4)
  set(QEMU_FLAGS_${ARCH}
    -cpu ${QEMU_CPU_TYPE_${ARCH}}
    -machine mps2-an386
    -nographic
    -vga none
    )
endif()
