/* int8 -> int8 through a 256-entry table computed at build time. */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_table_lookup_s8(const int8_t *table, const int8_t *input, int8_t *output,
                                   int32_t size)
{
    if (input == NULL || output == NULL || table == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        output[i] = table[(uint8_t)input[i]];
    }
    return NNRT_OK;
}
