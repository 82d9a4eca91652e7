/*
 * nnrt platform layer on Zephyr: the nnrt/port.h functions.
 *
 * Console lines go through printk (the console of the board, e.g. usart3 on
 * nucleo_f767zi, uart0 on the QEMU boards); errors also go through the logging
 * subsystem when it is enabled (CONFIG_LOG), under the module "nnrt" whose level is
 * CONFIG_NNRT_LOG_LEVEL. There is no file system here: the file calls report
 * NNRT_ERR_UNSUPPORTED (the harness that uses them runs on the bare-metal and host
 * ports only).
 */
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/printk.h>

#include "nnrt/port.h"

LOG_MODULE_REGISTER(nnrt, CONFIG_NNRT_LOG_LEVEL);

nnrt_status_t nnrt_port_read_file(const char *path, void *buf, size_t bytes,
				  size_t *file_bytes)
{
	ARG_UNUSED(path);
	ARG_UNUSED(buf);
	ARG_UNUSED(bytes);
	ARG_UNUSED(file_bytes);
	return NNRT_ERR_UNSUPPORTED;
}

nnrt_status_t nnrt_port_read_file_at(const char *path, size_t offset, void *buf,
				     size_t bytes, size_t file_size, size_t *file_bytes)
{
	ARG_UNUSED(path);
	ARG_UNUSED(offset);
	ARG_UNUSED(buf);
	ARG_UNUSED(bytes);
	ARG_UNUSED(file_size);
	ARG_UNUSED(file_bytes);
	return NNRT_ERR_UNSUPPORTED;
}

nnrt_status_t nnrt_port_write_file(const char *path, const void *data, size_t bytes,
				   int append)
{
	ARG_UNUSED(path);
	ARG_UNUSED(data);
	ARG_UNUSED(bytes);
	ARG_UNUSED(append);
	return NNRT_ERR_UNSUPPORTED;
}

void nnrt_port_log(const char *line)
{
	printk("%s\n", line != NULL ? line : "(null)");
}

void nnrt_port_log_error(const char *line)
{
	const char *text = line != NULL ? line : "(null)";

	if (IS_ENABLED(CONFIG_LOG)) {
		LOG_ERR("%s", text);
	} else {
		printk("%s\n", text);
	}
}

/*
 * The hardware cycle counter of the system timer (k_cycle_get_*: on Cortex-M with the
 * SysTick driver, CPU clock cycles). Without a 64-bit counter the 32-bit one is
 * extended in software; that needs a call at least once per wrap (about 20 s at
 * 216 MHz), which holds for timing an inference.
 */
uint64_t nnrt_port_counter(void)
{
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cycle_get_64();
#else
	static struct k_spinlock lock;
	static uint32_t last;
	static uint64_t high;
	k_spinlock_key_t key = k_spin_lock(&lock);
	uint32_t now = k_cycle_get_32();
	uint64_t value;

	if (now < last) {
		high += (uint64_t)1 << 32;
	}
	last = now;
	value = high | now;
	k_spin_unlock(&lock, key);
	return value;
#endif
}

const char *nnrt_port_counter_unit(void)
{
	return "cycles";
}

/*
 * Stack use of the calling thread, from the stack painting that CONFIG_INIT_STACKS
 * does at thread creation (k_thread_stack_space_get() needs it and
 * CONFIG_THREAD_STACK_INFO); 0 when either is off.
 */
size_t nnrt_port_stack_used(void)
{
#if defined(CONFIG_INIT_STACKS) && defined(CONFIG_THREAD_STACK_INFO)
	size_t unused = 0;
	const struct k_thread *self = k_current_get();

	if (k_thread_stack_space_get(self, &unused) != 0) {
		return 0;
	}
	return self->stack_info.size - unused;
#else
	return 0;
#endif
}

/*
 * There is no process to return to: report the code and park the calling thread.
 * Other threads (shell, logging) keep running.
 */
void nnrt_port_exit(int code)
{
	printk("nnrt: exit %d\n", code);
	for (;;) {
		k_sleep(K_FOREVER);
	}
}
