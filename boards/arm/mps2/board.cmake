# QEMU for mps2/an500/qemu and mps2/an386/qemu: Zephyr includes every board directory's
# board.cmake (cmake/modules/kernel.cmake), Zephyr's boards/arm/mps2/board.cmake first;
# that one sets nothing for these variants. The machines are QEMU's mps2-an500
# (Cortex-M7) and mps2-an386 (Cortex-M4 with its FPU), hw/arm/mps2.c.
if(CONFIG_BOARD_MPS2_AN500_QEMU)
  set(NNOPT_MPS2_QEMU cortex-m7 mps2-an500)
elseif(CONFIG_BOARD_MPS2_AN386_QEMU)
  set(NNOPT_MPS2_QEMU cortex-m4 mps2-an386)
endif()
if(DEFINED NNOPT_MPS2_QEMU)
  list(GET NNOPT_MPS2_QEMU 0 QEMU_CPU_TYPE_${ARCH})
  list(GET NNOPT_MPS2_QEMU 1 NNOPT_MPS2_QEMU_MACHINE)
  set(SUPPORTED_EMU_PLATFORMS qemu)
  set(QEMU_FLAGS_${ARCH}
    -cpu ${QEMU_CPU_TYPE_${ARCH}}
    -machine ${NNOPT_MPS2_QEMU_MACHINE}
    -nographic
    -vga none
    )
endif()
