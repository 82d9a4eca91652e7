/*
 * Arm semihosting (the debugger-call interface QEMU implements with
 * `-semihosting-config enable=on,target=native`): internal to the bare-metal port.
 * Operation numbers and parameter blocks from the Arm "Semihosting for AArch32 and
 * AArch64" specification, v2.0; RISC-V uses the same operations and blocks (the RISC-V
 * Semihosting specification), only the trap differs (riscv/semihost_call.h).
 */
#ifndef NNRT_PORT_BAREMETAL_SEMIHOST_H_
#define NNRT_PORT_BAREMETAL_SEMIHOST_H_

#include <stdint.h>

#define NNRT_SH_SYS_OPEN 0x01u
#define NNRT_SH_SYS_CLOSE 0x02u
#define NNRT_SH_SYS_WRITE0 0x04u
#define NNRT_SH_SYS_WRITE 0x05u
#define NNRT_SH_SYS_READ 0x06u
#define NNRT_SH_SYS_SEEK 0x0Au
#define NNRT_SH_SYS_FLEN 0x0Cu
#define NNRT_SH_SYS_GET_CMDLINE 0x15u
#define NNRT_SH_SYS_EXIT 0x18u
#define NNRT_SH_SYS_EXIT_EXTENDED 0x20u

/* SYS_OPEN modes (index into the ISO C fopen mode table). */
#define NNRT_SH_MODE_RB 1u
#define NNRT_SH_MODE_W 4u
#define NNRT_SH_MODE_WB 5u
#define NNRT_SH_MODE_A 8u
#define NNRT_SH_MODE_AB 9u

/* Reason code of a normal application exit (ADP_Stopped_ApplicationExit). */
#define NNRT_SH_ADP_APPLICATION_EXIT 0x20026u

#if defined(__riscv)
#include "riscv/semihost_call.h"
#else
/** One semihosting call: `op` in r0, `arg` (a value or a block address) in r1. */
static inline int32_t nnrt_semihost(uint32_t op, uintptr_t arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register uintptr_t r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (int32_t)r0;
}
#endif

/** Write a NUL-terminated string to the debug console (SYS_WRITE0). */
void nnrt_semihost_write0(const char *text);

#endif /* NNRT_PORT_BAREMETAL_SEMIHOST_H_ */
