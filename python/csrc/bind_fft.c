/* The DFT primitives (include/ember/fft.h) as private functions of
 * ember._C; python/ember/fft.py builds torch.fft on them. */
#include "emp.h"

EMP_BIND(_fft_c2c, "_fft_c2c(Tensor input, int[] axes, int norm, bool forward)")
{
    return emp_wrap(em_fft_c2c(a->t[0], a->nlist[1], a->list[1], (em_fft_norm)a->i[2], a->i[3]));
}
EMP_BIND(_fft_r2c, "_fft_r2c(Tensor input, int[] axes, int norm, bool onesided)")
{
    return emp_wrap(em_fft_r2c(a->t[0], a->nlist[1], a->list[1], (em_fft_norm)a->i[2], a->i[3]));
}
EMP_BIND(_fft_c2r, "_fft_c2r(Tensor input, int[] axes, int norm, int last_dim_size)")
{
    return emp_wrap(em_fft_c2r(a->t[0], a->nlist[1], a->list[1], (em_fft_norm)a->i[2], a->i[3]));
}

PyMethodDef emp_fft_functions[] = {
    EMP_FUNCTION(_fft_c2c),
    EMP_FUNCTION(_fft_r2c),
    EMP_FUNCTION(_fft_c2r),
    {NULL},
};
