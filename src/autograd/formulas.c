/* The formula table: one slot per op, filled from formulas.def (the ops
 * that have an EM_BACKWARD definition in formulas_*.c; a listed op without
 * one is a link error). Recording a differentiable op whose slot is empty is
 * a "not implemented" error, and tests/c/test_autograd.c reports every
 * EM_F_DIFF op still missing here. */
#include "autograd.h"

#define EM_FORMULA(op)                                                                  \
    em_status em_bw_##op(const em_node *, em_tensor *const *, em_tensor **);           \
    extern const uint32_t em_saves_##op;
#include "formulas.def"
#undef EM_FORMULA

const em_formula em_formulas[EM_OP_COUNT] = {
#define EM_FORMULA(op) [EM_OP_##op] = {em_bw_##op, &em_saves_##op},
#include "formulas.def"
#undef EM_FORMULA
};
