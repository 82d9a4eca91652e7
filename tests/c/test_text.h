/* The C test programs' text output without printf (host and QEMU firmware):
 * characters appended at a cursor into a line buffer the caller sizes. */
#ifndef TEST_TEXT_H_
#define TEST_TEXT_H_

#include <stddef.h>
#include <stdint.h>

/* Append the decimal digits of v at *p (advanced past them). */
static inline void put_u64(char **p, uint64_t v)
{
    char digits[21];
    size_t n = 0;

    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (n > 0) {
        *(*p)++ = digits[--n];
    }
}

/* Append the characters of s (without its terminator) at *p. */
static inline void put_str(char **p, const char *s)
{
    while (*s != '\0') {
        *(*p)++ = *s++;
    }
}

/* Append v in decimal, with a '-' when negative, at *p. */
static inline void put_i64(char **p, int64_t v)
{
    if (v < 0) {
        *(*p)++ = '-';
        put_u64(p, (uint64_t)(-v));
    } else {
        put_u64(p, (uint64_t)v);
    }
}

#endif /* TEST_TEXT_H_ */
