/* The start of the row-pair fully connected property program (tests/ops/test_fc_pairs.py
 * writes the rest): each case's weights twice, row-major for the generic kernel and in
 * the row-pair layout for the specialised function code generation emits, and a main()
 * calling check_fc() (property_report.h) on each. The generic kernel (bit-exact with
 * the tflite-micro interpreter: tests/ops/test_fc.py) is the reference. */
#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/spec.h"

#include "property_report.h"
