/*
 * main() and the static arena of bench_firmware.py's TFLM firmware: the C entry the
 * bare-metal port calls (modules/nnrt/port/baremetal/startup.c), handing over to the C++
 * harness generated from tflm_harness.cc.in. The arena's size is a define of this file
 * (-DNNOPT_TFLM_ARENA_BYTES=N), so that a probe build and the measured build differ in
 * this file only.
 */
#include <stddef.h>
#include <stdint.h>

#ifndef NNOPT_TFLM_ARENA_BYTES
#error "define NNOPT_TFLM_ARENA_BYTES to the arena size in bytes"
#endif

int nnopt_tflm_main(int argc, char **argv);

__attribute__((aligned(16))) uint8_t nnopt_tflm_arena[NNOPT_TFLM_ARENA_BYTES];
const size_t nnopt_tflm_arena_bytes = NNOPT_TFLM_ARENA_BYTES;

int main(int argc, char **argv)
{
    return nnopt_tflm_main(argc, argv);
}
