/*
 * The shared part of the benchmark applications (bench_io.h): one copy of the inputs'
 * handling, of the timed inference loop and of the console lines, compiled into both,
 * so that both sides are driven and counted by the same code.
 */
#include <string.h>

#include <zephyr/arch/common/semihost.h>
#include <zephyr/fatal.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>
#include <zephyr/sys_clock.h>

#include "bench_io.h"

/*
 * Arm semihosting SYS_EXIT (operation 0x18) with the reason ADP_Stopped_ApplicationExit
 * (0x20026): QEMU exits with status 0 for that reason and 1 for any other
 * (semihosting/arm-compat-semi.c, TARGET_SYS_EXIT; on AArch32 the reason is the
 * argument itself, not a pointer to a block). Zephyr's enum semihost_instr
 * (include/zephyr/arch/common/semihost.h) does not name the operation; semihost_exec()
 * passes any operation number on (arch/arm/core/cortex_m/semihost.c).
 */
#define BENCH_SYS_EXIT 0x18
#define BENCH_ADP_APPLICATION_EXIT 0x20026
#define BENCH_ADP_RUNTIME_ERROR 0x20023

static FUNC_NORETURN void bench_exit(long reason)
{
	semihost_exec((enum semihost_instr)BENCH_SYS_EXIT, (void *)reason);
	/* Without a semihosting host there is nowhere to go: idle (k_cpu_idle(),
	 * include/zephyr/kernel.h), also from the fatal error handler's context. */
	for (;;) {
		k_cpu_idle();
	}
}

void bench_log_value(const char *key, uint64_t value)
{
	/* printk (include/zephyr/sys/printk.h); %llu: CONFIG_CBPRINTF_FULL_INTEGRAL */
	printk("bench: %s=%llu\n", key, (unsigned long long)value);
}

void bench_fail(const char *what)
{
	printk("bench: failed %s\n", what);
	bench_exit(BENCH_ADP_RUNTIME_ERROR);
}

static void read_input(uint32_t i, uint32_t k, void *dst, size_t bytes)
{
	const struct bench_blob *b = &bench_inputs[i];

	if ((size_t)(b->end - b->data) != (size_t)bench_invocations * bytes) {
		bench_fail("input size");
	}
	memcpy(dst, b->data + (size_t)k * bytes, bytes);
}

static void print_output(uint32_t o, uint32_t k, const uint8_t *p, size_t bytes)
{
	static const char hex[] = "0123456789abcdef";
	char line[2 * 32 + 1];

	for (size_t off = 0; off < bytes; off += 32) {
		size_t n = MIN(bytes - off, (size_t)32);

		for (size_t j = 0; j < n; ++j) {
			line[2 * j] = hex[p[off + j] >> 4];
			line[2 * j + 1] = hex[p[off + j] & 0xfu];
		}
		line[2 * n] = '\0';
		printk("bench: out %u %u %u %s\n", (unsigned int)o, (unsigned int)k,
		       (unsigned int)off, line);
	}
}

/*
 * The main thread's stack use: k_thread_stack_space_get() (include/zephyr/kernel.h)
 * reads the painting CONFIG_INIT_STACKS left; the size is in stack_info
 * (CONFIG_THREAD_STACK_INFO, include/zephyr/kernel/thread.h).
 */
static size_t stack_used(void)
{
	size_t unused = 0;
	const struct k_thread *self = k_current_get();

	if (k_thread_stack_space_get(self, &unused) != 0) {
		return 0;
	}
	return self->stack_info.size - unused;
}

/*
 * The counter around invoke(): k_cycle_get_32() (include/zephyr/kernel.h), on this
 * board the Cortex-M SysTick driver's cycle count plus the SysTick counter's current
 * value (drivers/timer/cortex_m_systick.c, sys_clock_cycle_get_32), in cycles of
 * sys_clock_hw_cycles_per_sec() (include/zephyr/sys_clock.h), i.e.
 * CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC (25 MHz on mps2, soc/arm/mps2/Kconfig.defconfig).
 * It wraps after 2^32 cycles, far beyond an inference; the difference is unsigned.
 */
void bench_run(const struct bench_model *m)
{
	uint32_t first = 0;
	uint64_t total = 0;

	if (m->n_inputs != bench_n_inputs) {
		bench_fail("input count");
	}
	for (uint32_t k = 0; k < bench_invocations; ++k) {
		for (uint32_t i = 0; i < m->n_inputs; ++i) {
			size_t bytes = 0;
			void *dst = m->input(m->ctx, i, &bytes);

			read_input(i, k, dst, bytes);
		}
		uint32_t t0 = k_cycle_get_32();
		int status = m->invoke(m->ctx);
		uint32_t t1 = k_cycle_get_32();

		if (status != 0) {
			bench_fail("invoke");
		}
		if (k == 0) {
			first = t1 - t0;
		}
		total += t1 - t0;
		for (uint32_t o = 0; o < m->n_outputs; ++o) {
			size_t bytes = 0;
			const void *src = m->output(m->ctx, o, &bytes);

			print_output(o, k, src, bytes);
		}
	}
	bench_log_value("hz", sys_clock_hw_cycles_per_sec());
	bench_log_value("cycles", first);
	bench_log_value("cycles_total", total);
	bench_log_value("stack", stack_used());
	printk("bench: done\n");
	bench_exit(BENCH_ADP_APPLICATION_EXIT);
}

/*
 * A CPU fault or a kernel oops ends the run at once instead of halting the CPU while
 * QEMU keeps going: the weak default of include/zephyr/fatal.h
 * (k_sys_fatal_error_handler, kernel/fatal.c) replaced.
 */
void k_sys_fatal_error_handler(unsigned int reason, const struct arch_esf *esf)
{
	ARG_UNUSED(esf);
	printk("bench: failed fatal error %u\n", reason);
	bench_exit(BENCH_ADP_RUNTIME_ERROR);
}
