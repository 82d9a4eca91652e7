/*
 * The RISC-V semihosting trap (internal to the bare-metal port, included by
 * ../semihost.h): the RISC-V Semihosting specification (riscv-non-isa/riscv-semihosting,
 * v0.2) keeps Arm's operation numbers and parameter blocks, the operation in a0 and its
 * argument in a1, result in a0, and marks the call with an `ebreak` between two
 * architectural no-ops:
 *
 *     slli x0, x0, 0x1f    # entry NOP
 *     ebreak
 *     srai x0, x0, 7       # exit NOP (the semihosting number)
 *
 * The three must be uncompressed 32-bit instructions (QEMU compares the words before
 * and after the ebreak with these encodings: target/riscv/insn_trans/trans_privileged.c.inc),
 * hence `.option norvc`. The specification also asks that they not straddle a page
 * for debuggers with virtual memory; nnrt's firmware runs in machine mode with no MMU,
 * and a `.balign` here would defeat the linker's relaxation, so none is forced.
 */
#ifndef NNRT_PORT_BAREMETAL_RISCV_SEMIHOST_CALL_H_
#define NNRT_PORT_BAREMETAL_RISCV_SEMIHOST_CALL_H_

#include <stdint.h>

/** One semihosting call: `op` in a0, `arg` (a value or a block address) in a1. */
static inline int32_t nnrt_semihost(uint32_t op, uintptr_t arg)
{
    register uint32_t a0 __asm__("a0") = op;
    register uintptr_t a1 __asm__("a1") = arg;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     "slli x0, x0, 0x1f\n\t"
                     "ebreak\n\t"
                     "srai x0, x0, 7\n\t"
                     ".option pop"
                     : "+r"(a0)
                     : "r"(a1)
                     : "memory");
    return (int32_t)a0;
}

#endif /* NNRT_PORT_BAREMETAL_RISCV_SEMIHOST_CALL_H_ */
