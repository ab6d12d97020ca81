/* The intra-op thread pool is OpenMP's; OpenBLAS (its OpenMP build) runs on
 * the same threads, so one setting sizes both. */
#include "internal.h"
#include <omp.h>

void em_set_num_threads(int n)
{
    if (n < 1) n = 1;
    omp_set_num_threads(n);
}

int em_get_num_threads(void) { return omp_get_max_threads(); }
