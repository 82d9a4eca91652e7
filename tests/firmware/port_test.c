/*
 * Test program for the nnrt ports (host and bare metal), driven by tests/test_firmware.py.
 *
 *   port_test copy IN OUT N     read exactly N bytes of IN, transform, write OUT
 *   port_test args OUT A B ...  write the arguments after OUT, one per line, to OUT
 *   port_test exit CODE         exit with CODE
 *   port_test fault [ADDR]      read an unmapped address (Cortex-M: BusFault; RISC-V:
 *                               an illegal instruction)
 *   port_test loop N            count the instructions of N iterations of a 2-instruction
 *                               loop; prints "nnrt: instructions=<n>"
 *   port_test stack N           recurse N levels deep, 256 bytes of stack each
 *   port_test log               one line on stdout, one on stderr
 *
 * Optional: -DTEST_BSS_BYTES=n adds an n-byte .bss array, -DTEST_ARENA_BYTES=n an
 * n-byte array in NNRT_ARENA (symbol test_arena), -DTEST_WEIGHTS adds a const table in
 * NNRT_WEIGHTS (symbol test_weights), -DTEST_DTCM_BYTES=n an array in NNRT_DTCM.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/port.h"
#include "nnrt/sections.h"

#define MAX_BYTES 4096

static uint8_t in_buf[MAX_BYTES];
static uint8_t out_buf[MAX_BYTES];

#ifdef TEST_BSS_BYTES
uint8_t test_bss[TEST_BSS_BYTES];
#endif
#ifdef TEST_ARENA_BYTES
uint8_t test_arena[TEST_ARENA_BYTES] NNRT_ARENA;
#endif
#ifdef TEST_DTCM_BYTES
uint8_t test_dtcm[TEST_DTCM_BYTES] NNRT_DTCM;
#endif
#ifdef TEST_WEIGHTS
const int8_t test_weights[64] NNRT_WEIGHTS = {
    1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16,
};
#endif

static int parse_uint(const char *s, unsigned long *out)
{
    unsigned long v = 0;

    if (s == NULL || *s == '\0') {
        return -1;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return -1;
        }
        v = v * 10u + (unsigned long)(*s - '0');
    }
    *out = v;
    return 0;
}

static void log_number(const char *prefix, uint64_t v)
{
    char line[64];
    char digits[24];
    size_t n = 0;
    size_t len = strlen(prefix);

    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    memcpy(line, prefix, len);
    while (n > 0) {
        line[len++] = digits[--n];
    }
    line[len] = '\0';
    nnrt_port_log(line);
}

static int cmd_copy(int argc, char **argv)
{
    unsigned long n;
    size_t actual = 0;
    size_t i;
    nnrt_status_t st;
    volatile float scale = 0.5f;

    if (argc != 5 || parse_uint(argv[4], &n) != 0 || n > MAX_BYTES) {
        nnrt_port_log_error("usage: copy IN OUT N (N <= 4096)");
        return 2;
    }
    st = nnrt_port_read_file(argv[2], in_buf, n, &actual);
    if (st == NNRT_ERR_FORMAT) {
        log_number("wrong input size: ", actual);
        return 3;
    }
    if (st != NNRT_OK) {
        nnrt_port_log_error("cannot read the input");
        return 3;
    }
    for (i = 0; i < n; i++) {
        float f = (float)in_buf[i] * scale; /* exact in binary32: exercises the FPU */
        out_buf[i] = (uint8_t)((uint8_t)(in_buf[i] * 3u + i) ^ (uint8_t)f);
    }
    if (nnrt_port_write_file(argv[3], out_buf, n, 0) != NNRT_OK) {
        nnrt_port_log_error("cannot write the output");
        return 4;
    }
    return 0;
}

static int cmd_args(int argc, char **argv)
{
    int i;

    if (argc < 3) {
        return 2;
    }
    if (nnrt_port_write_file(argv[2], "", 0, 0) != NNRT_OK) {
        return 4;
    }
    for (i = 3; i < argc; i++) {
        if (nnrt_port_write_file(argv[2], argv[i], strlen(argv[i]), 1) != NNRT_OK ||
            nnrt_port_write_file(argv[2], "\n", 1, 1) != NNRT_OK) {
            return 4;
        }
    }
    return 0;
}

static void spin(uint32_t n)
{
#if defined(__arm__)
    /* exactly two instructions per iteration (Thumb-1 too: a low register; GCC hands
     * Thumb-1 inline assembly over in divided syntax) */
    __asm__ volatile(".syntax unified\n\t"
                     "1:\n\t"
                     "subs %0, %0, #1\n\t"
                     "bne 1b\n\t"
                     : "+l"(n)
                     :
                     : "cc");
#elif defined(__riscv)
    /* exactly two instructions per iteration */
    __asm__ volatile("1:\n\t"
                     "addi %0, %0, -1\n\t"
                     "bnez %0, 1b\n\t"
                     : "+r"(n));
#else
    volatile uint32_t i;
    for (i = 0; i < n; i++) {
    }
#endif
}

static int cmd_loop(int argc, char **argv)
{
    unsigned long n;
    uint64_t t0;
    uint64_t t1;

    if (argc != 3 || parse_uint(argv[2], &n) != 0 || n == 0) {
        return 2;
    }
    t0 = nnrt_port_counter();
    spin((uint32_t)n);
    t1 = nnrt_port_counter();
    log_number("nnrt: instructions=", t1 - t0);
    return 0;
}

static uint32_t recurse(uint32_t depth)
{
    volatile uint8_t frame[256];
    uint32_t i;

    for (i = 0; i < sizeof(frame); i++) {
        frame[i] = (uint8_t)(depth + i);
    }
    if (depth == 0) {
        return frame[3];
    }
    return recurse(depth - 1) + frame[depth % sizeof(frame)];
}

static int cmd_stack(int argc, char **argv)
{
    unsigned long n;

    if (argc != 3 || parse_uint(argv[2], &n) != 0) {
        return 2;
    }
    log_number("result=", recurse((uint32_t)n));
    log_number("stack_used=", nnrt_port_stack_used());
    return 0;
}

int main(int argc, char **argv)
{
#ifdef TEST_BSS_BYTES
    ((volatile uint8_t *)test_bss)[TEST_BSS_BYTES - 1] = 1;
#endif
#ifdef TEST_ARENA_BYTES
    ((volatile uint8_t *)test_arena)[TEST_ARENA_BYTES - 1] = 1;
#endif
#ifdef TEST_DTCM_BYTES
    ((volatile uint8_t *)test_dtcm)[TEST_DTCM_BYTES - 1] = 1;
#endif
#ifdef TEST_WEIGHTS
    if (((const volatile int8_t *)test_weights)[1] != -2) {
        return 9;
    }
#endif
    if (argc < 2) {
        nnrt_port_log_error("usage: port_test copy|args|exit|fault|loop|stack|log ...");
        return 2;
    }
    if (strcmp(argv[1], "copy") == 0) {
        return cmd_copy(argc, argv);
    }
    if (strcmp(argv[1], "args") == 0) {
        return cmd_args(argc, argv);
    }
    if (strcmp(argv[1], "exit") == 0) {
        unsigned long code;
        if (argc != 3 || parse_uint(argv[2], &code) != 0) {
            return 2;
        }
        nnrt_port_exit((int)code);
    }
    if (strcmp(argv[1], "fault") == 0) {
#if defined(__riscv)
        /* RISC-V: an illegal instruction (the all-zero word), the same on every machine. */
        __asm__ volatile(".option push\n\t.option norvc\n\t.word 0\n\t.option pop");
#endif
        /* Default: unmapped on QEMU mps2 (nothing between 0x21000000+16MB and
         * 0x40000000); other machines pass an address unmapped on theirs. */
        unsigned long addr = 0x30000000ul;
        uint32_t v;
        if (argc == 3 && parse_uint(argv[2], &addr) != 0) {
            return 2;
        }
        v = *(volatile uint32_t *)(uintptr_t)addr;
        log_number("read ", v);
        return 0;
    }
    if (strcmp(argv[1], "loop") == 0) {
        return cmd_loop(argc, argv);
    }
    if (strcmp(argv[1], "stack") == 0) {
        return cmd_stack(argc, argv);
    }
    if (strcmp(argv[1], "log") == 0) {
        nnrt_port_log("hello stdout");
        nnrt_port_log_error("hello stderr");
        return 0;
    }
    nnrt_port_log_error("unknown command");
    return 2;
}
