/* Prints docs/ops.md, the list of Ember's ops, from the op table itself
 * (include/ember/ops.def), so the list cannot drift from the code: `make
 * docs` writes it and `make test` fails when the committed copy is stale. */
#include "../src/autograd/autograd.h"
#include <stdio.h>


static const char *kind_name(const em_op_info *o)
{
    if (o->flags & EM_F_COMPOSITE) return "composite";
    switch (o->kind) {
    case EM_KIND_UNARY: return "pointwise unary";
    case EM_KIND_BINARY: return "pointwise binary";
    case EM_KIND_TERNARY: return "pointwise ternary";
    default: return "op";
    }
}

int main(void)
{
    int diff = 0, total = 0;
    for (int op = 0; op < EM_OP_COUNT; op++) total++, diff += (em_ops[op].flags & EM_F_DIFF) != 0;
    printf("# Ember's ops\n\nGenerated from the op table (`include/ember/ops.def`) by `make docs`; do not edit.\n\n");
    printf("%d ops, %d differentiable. Pointwise ops have `em_<op>`, `em_<op>_` (in place, unless marked) and "
           "`em_<op>_out`; the others are declared in their family header.\n\n", total, diff);
    printf("| op | kind | in place | autograd |\n|---|---|---|---|\n");
    for (int op = 0; op < EM_OP_COUNT; op++) {
        const em_op_info *o = &em_ops[op];
        const char *grad = !(o->flags & EM_F_DIFF) ? "-"
                           : (o->flags & (EM_F_COMPOSITE | EM_F_GRAD_PARTS)) ? "through its parts"
                           : em_formulas[op].fn ? "formula" : "missing";
        printf("| %s | %s | %s | %s |\n", o->name, kind_name(o),
               o->kind == EM_KIND_OTHER ? "" : (o->flags & EM_F_NO_INPLACE) ? "no" : "yes", grad);
    }
    return 0;
}
