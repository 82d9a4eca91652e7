/**
 * @file port.h
 * @brief The platform API: the only calls the runtime and the harness make to the
 *        outside world.
 *
 * Implemented by `port/host/` (hosted C library, stdio) and `port/baremetal/`
 * (Cortex-M under QEMU: semihosting for files and console, SysTick for the counter,
 * fault handlers). Nothing else in nnrt does I/O.
 *
 * On bare metal the port also owns the C entry: its reset handler sets up memory,
 * takes the command line from the debugger (semihosting SYS_GET_CMDLINE), splits it
 * into `argc`/`argv` (whitespace separated; double quotes group, backslash escapes `"`
 * and `\` inside quotes) and calls `int main(int argc, char **argv)`; the value main
 * returns is passed to nnrt_port_exit(). So the same `main()` runs on both ports.
 */
#ifndef NNRT_PORT_H_
#define NNRT_PORT_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NNRT_NORETURN __attribute__((noreturn))
#else
#define NNRT_NORETURN
#endif

/** Exit code of a program stopped by a CPU fault (bare metal: HardFault, BusFault...). */
#define NNRT_PORT_EXIT_FAULT 100
/** Exit code when the stack guard at the bottom of the stack was overwritten. */
#define NNRT_PORT_EXIT_STACK 101

/**
 * Read a whole file whose length must be exactly @p bytes.
 *
 * @param path        file name (host path; on QEMU semihosting paths are the host's)
 * @param buf         destination, @p bytes long (may be NULL when @p bytes is 0)
 * @param bytes       expected file length in bytes
 * @param file_bytes  if not NULL, receives the actual file length when it is known
 *                    (set on NNRT_OK and NNRT_ERR_FORMAT)
 * @return NNRT_OK; NNRT_ERR_IO if the file cannot be opened or read;
 *         NNRT_ERR_FORMAT if its length differs from @p bytes (nothing is read).
 */
nnrt_status_t nnrt_port_read_file(const char *path, void *buf, size_t bytes,
                                  size_t *file_bytes);

/**
 * Read @p bytes bytes at byte @p offset of a file whose length must be exactly
 * @p file_size (one of several records of that file: the harness's k inputs).
 *
 * @param path        file name
 * @param offset      first byte to read
 * @param buf         destination, @p bytes long (may be NULL when @p bytes is 0)
 * @param bytes       bytes to read
 * @param file_size   the length the file must have (>= offset + bytes)
 * @param file_bytes  if not NULL, receives the actual file length when it is known
 * @return NNRT_OK; NNRT_ERR_IO if the file cannot be opened, positioned or read;
 *         NNRT_ERR_FORMAT if its length differs from @p file_size (nothing is read);
 *         NNRT_ERR_ARG if offset + bytes exceeds @p file_size; NNRT_ERR_UNSUPPORTED
 *         on ports without files.
 */
nnrt_status_t nnrt_port_read_file_at(const char *path, size_t offset, void *buf,
                                     size_t bytes, size_t file_size, size_t *file_bytes);

/**
 * Write @p bytes bytes to a file.
 *
 * @param path    file name
 * @param data    bytes to write (may be NULL when @p bytes is 0)
 * @param bytes   number of bytes
 * @param append  0: create or truncate the file first; non-zero: append to it
 *                (creating it if absent)
 * @return NNRT_OK or NNRT_ERR_IO.
 */
nnrt_status_t nnrt_port_write_file(const char *path, const void *data, size_t bytes,
                                   int append);

/**
 * Print one line (a newline is added) on the console's standard output.
 * @param line NUL-terminated text without the trailing newline
 */
void nnrt_port_log(const char *line);

/**
 * Print one line (a newline is added) on the console's error output.
 * On QEMU semihosting it is the same stream as nnrt_port_log() unless the emulator
 * separates them; callers must not rely on the split.
 * @param line NUL-terminated text without the trailing newline
 */
void nnrt_port_log_error(const char *line);

/**
 * A monotonic counter for measuring work.
 *
 * Bare metal under `qemu -icount shift=0`: executed instructions, derived from SysTick
 * on the processor clock (ticks x NNRT_PORT_INSTR_PER_TICK, so a resolution of that
 * many instructions) with the 24-bit wrap extended by the SysTick interrupt.
 * Host: 0 (use valgrind/callgrind to count host instructions).
 *
 * @return the counter; only differences between two calls are meaningful.
 */
uint64_t nnrt_port_counter(void);

/**
 * What nnrt_port_counter() counts.
 * @return "instructions" on QEMU bare metal, or NULL when the port has no counter
 *         (host).
 */
const char *nnrt_port_counter_unit(void);

/**
 * Deepest stack use so far, in bytes, measured against the stack painted at reset.
 * @return bytes of stack touched, or 0 when the port cannot tell (host).
 */
size_t nnrt_port_stack_used(void);

/**
 * Stop the program with an exit code that reaches the parent process (QEMU's exit
 * status through semihosting SYS_EXIT_EXTENDED). On bare metal, a corrupted stack
 * guard turns the code into NNRT_PORT_EXIT_STACK with a message.
 * @param code 0 for success, 1..255 for failures
 */
void nnrt_port_exit(int code) NNRT_NORETURN;

#ifdef __cplusplus
}
#endif

#endif /* NNRT_PORT_H_ */
