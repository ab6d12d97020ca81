/* The CPU device: one kernel per op of the table. A missing cpu_<op> is a
 * link error, so no op can be declared without a CPU kernel. */
#include "cpu.h"

#define EM_COMPOSITE(name, flags)
const em_device_impl em_cpu_device = {
    .name = "cpu",
    .kernels = {
#define EM_OP(name, flags) [EM_OP_##name] = cpu_##name,
#include "ember/ops.def"
#undef EM_OP
#undef EM_COMPOSITE
    },
};
