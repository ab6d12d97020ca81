#!/usr/bin/env python3
"""Generates the C API's NULL-argument test from the public headers.

Usage: gen_null_test.py CC [CFLAGS...] > build/tests/null_args.c

Runs `CC -E` on include/ember/ember.h (so the functions the op table's
X-macros declare are included, exactly as the compiler sees them), takes
every exported function's prototype, and writes one C test case per pointer
parameter: the function is called with NULL there and valid values elsewhere
(fresh tensors, arrays of sizes, a generator, a graph node, ...), and must
return its error value (NULL, a nonzero status, -1, ...) with em_last_error()
saying what is NULL, without crashing (the test runs under ASan + UBSan too).
An array of tensor pointers is also passed with a NULL element.

A pointer that may be NULL by contract (a header says so) is listed in
NULLABLE below with the reason: its case still runs (it must not crash) but
need not fail. SKIP lists the positions not called, with the reason. A new pointer type, or a function returning a type the tool
has no error value for, stops the generator: decide, then extend the tables.
"""
import re
import subprocess
import sys

# ---- pointer positions that may be NULL by contract ---------------------
# (function regex, parameter regex, reason). Matched with re.fullmatch.
NULLABLE = [
    ("em_retain|em_release", "t", "NULL-safe like free(NULL) (core.h)"),
    ("em_generator_free|em_safetensors_free", "g|st", "NULL-safe like free(NULL)"),
    ("em_zip_close|em_zip_writer_free|em_pickle_free|em_torch_legacy_free", "z|w|p|t", "NULL-safe like free(NULL)"),
    ("em_zip_writer_new", "ctx", "the write sink's own context, passed through (serialize.h)"),
    ("em_node_retain|em_node_release", "n", "NULL-safe like free(NULL) (autograd.h)"),
    ("em_.*", "g", "NULL is the default generator (random.h)"),
    ("em_from_blob|em_storage_move_|em_storage_context", "deleter|ctx",
     "NULL deleter: the caller keeps ownership (core.h)"),
    ("em_from_blob", "strides", "NULL means contiguous (core.h)"),
    ("em_set_binding", "obj", "NULL clears the binding (core.h)"),
    ("em_set_grad", "grad", "NULL clears .grad (autograd.h)"),
    ("em_node_next", "input_nr", "not wanted (autograd.h)"),
    ("em_set_saved_tensors_hooks", "hooks|prev", "NULL: no hooks / previous ones not wanted (autograd_hooks.h)"),
    ("em_set_anomaly_hooks", "hooks", "NULL clears them (autograd_hooks.h)"),
    ("em_profiler_events", "count", "not wanted (profiler.h)"),
    ("em_profiler_set_stack_provider", "fn", "NULL removes the provider (profiler.h)"),
    ("em_register_hook|em_register_post_accumulate_grad_hook", "ctx|free_ctx",
     "the hook's context, and its destructor, may be NULL (autograd.h)"),
    ("em_function_apply", "user", "user data may be NULL (autograd.h)"),
    ("em_safetensors_write", "ctx", "the sink's context is the caller's (serialize.h)"),
    ("em_backward", "grad_tensors(\\[\\])?", "NULL (or NULL entries): implicit ones (autograd.h)"),
    ("em_autograd_grad", "grad_outputs(\\[\\])?", "NULL (or NULL entries): implicit ones (autograd.h)"),
    ("em_index|em_index_put_?", "indices\\[\\]", "a NULL index is a full slice ':' (index.h)"),
    ("em_ctx_save_for_backward", "tensors\\[\\]", "a saved NULL is allowed (autograd.h)"),
    ("em_(conv\\w*|convolution\\w*)", "stride|padding|dilation|output_padding|bias",
     "NULL: the default / no bias (conv.h)"),
    ("em_(im2col|col2im)", "dilation|padding|stride", "NULL: the default (conv.h)"),
    ("em_(linear|bilinear)\\w*", "bias", "no bias (nn.h)"),
    ("em_\\w*", "weight|bias|running_mean|running_var|pos_weight|per_sample_weights",
     "optional tensors: NULL when absent (loss.h, norm.h, nnact.h)"),
    ("em_\\w*scaled_dot_product_attention\\w*|em_attention_weights", "attn_mask|grad_lse", "optional (attention.h)"),
    ("em_(max_pool|adaptive_max_pool|fractional_max_pool)", "indices", "not wanted (pool.h)"),
    ("em_max_unpool", "output_size", "NULL: the default size (pool.h)"),
    ("em_upsample\\w*", "scales", "NULL: no scale factors (pool.h)"),
    ("em_scatter\\w*", "reduce", "NULL: no reduction (index.h)"),
    ("em_searchsorted\\w*", "sorter|side", "optional (sort.h)"),
    ("em_unique\\w*", "inverse|counts", "not wanted (sort.h)"),
    ("em_histogram\\w*", "range|weight", "NULL: the data's range / no weights (sort.h)"),
    ("em_bincount", "weights", "optional (sort.h)"),
    ("em_diff\\w*", "prepend|append", "optional (shape.h)"),
    ("em_meshgrid", "indexing", "NULL means \"ij\" (shape.h)"),
    ("em_argmax\\w*|em_argmin\\w*", "dim", "NULL: the flattened input (reduce.h)"),
    ("em_random_from_", "to", "NULL: the dtype's range (random.h)"),
    ("em_native_dropout", "mask", "not wanted (nnact.h)"),
    ("em_embedding_bag", "offset2bag|bag_size|max_indices", "not wanted (nnact.h)"),
    ("em_embedding_bag_backward", "offset2bag|bag_size|max_indices", "per mode (nnact.h)"),
    ("em_(batch|layer|group)_norm_backward", "grads\\[\\]|save_mean|save_invstd", "per mask (norm.h)"),
    ("em_rnn_layer", "batch_sizes|cx|cy", "padded input / not an LSTM (rnn.h)"),
    ("em_rnn_recurrence", "batch_sizes|cx|b_hh|w_hr|cy|workspace", "optional (rnn.h)"),
    ("em_rnn_recurrence_backward", "grad_output|grad_hy|grad_cy|batch_sizes|cx|w_hr|workspace",
     "optional: zeros / absent (rnn.h)"),
    ("em_(lstm|gru|rnn_tanh|rnn_relu)_cell", "b_ih|b_hh|hx|cx", "optional biases and states (rnn.h)"),
    ("em_\\w*_gates\\w*", "grad_\\w*|cx|hx", "optional (rnn.h)"),
]

# ---- positions not called at all: (function regex, parameter regex, reason)
SKIP = [
    ("em_safetensors_write", "write", "crashes on NULL: src/io is reworked on another branch, which adds the check"),
]

# ---- valid values, by parameter type ------------------------------------
# Expressions of the preamble below; a case frees what they made.
VALUES = {
    "const em_tensor *": "T()", "em_tensor *": "T()",
    "em_tensor **": "OUTS()",
    "const em_tensor *const *": "TL()", "em_tensor *const *": "TL()",
    "const int64_t *": "I64S", "const int *": "INTS", "const double *": "F64S",
    "const _Bool *": "BOOLS", "const char *": '""', "const char *const *": "STRS",
    "int *": "&int_slot", "double *": "&f64_slot", "_Bool *": "&bool_slot",
    "void *": "BUF", "const void *": "BUF",
    "em_generator *": "gen", "const em_generator *": "gen",
    "em_node *": "node", "const em_node *": "node",
    "em_function_ctx *": "ctx", "const em_function_ctx *": "ctx",
    "const em_function *": "&probe_fn",
    "const em_pool_params *": "&pool_params", "const em_optim_options *": "&optim_options",
    "const em_optim_group *": "&optim_group", "const em_rnn_weights *": "&rnn_weights",
    "em_rnn_grads *": "GRADS()",
    # hook tables: NULL is the valid "none" (a zeroed table would install NULL callbacks)
    "const em_saved_hooks *": "NULL", "em_saved_hooks *": "NULL", "const em_anomaly_hooks *": "NULL",
    "void (*)(void *)": "noop_free", "em_grad_hook_fn": "hook_fn",
    "em_post_accumulate_hook_fn": "post_hook_fn", "em_write_fn": "write_sink",
    # readers' handles need a file to exist: NULL, so their other pointer
    # positions fail on the handle first (counted, not failed)
    "em_zip *": "NULL", "const em_zip *": "NULL", "em_zip_writer *": "NULL",
    "em_pickle *": "NULL", "const em_pickle *": "NULL",
    "em_torch_legacy *": "NULL", "const em_torch_legacy *": "NULL",
    "char *(*)(void)": "NULL",
    "int": "1", "int64_t": "1", "uint64_t": "1", "size_t": "16", "double": "1.0",
    "_Bool": "0", "em_dtype": "EM_F32", "em_device": "EM_DEVICE_CPU", "em_memory_format": "EM_CHANNELS_LAST", "em_status": "EM_ERR_VALUE",
}
ENUMS = {"em_reduction", "em_pad_mode", "em_grid_mode", "em_grid_padding", "em_rnn_mode", "em_optimizer",
         "em_qr_mode", "em_lstsq_driver"}
ENUMS.add("em_fft_norm")
FUNC_PTR_TYPEDEFS = {"em_grad_hook_fn", "em_post_accumulate_hook_fn", "em_write_fn"}

# ---- what a failed call returns, by return type -------------------------
# (test that it failed, or None: only em_last_error() tells; cleanup of a result)
RETURNS = {
    "em_tensor *": ("r == NULL", "em_release(r)"),
    "em_status": ("r != EM_OK", None),
    "int": ("r < 0 || r > 0", None),
    "int64_t": ("r == -1", None),
    "em_dtype": ("r == EM_DTYPE_NONE", None),
    "em_memory_format": ("r == EM_CONTIGUOUS_FORMAT", None),
    "em_generator *": ("r == NULL", "em_generator_free(r)"),
    "em_safetensors *": ("r == NULL", "em_safetensors_free(r)"),
    "em_zip *": ("r == NULL", "em_zip_close(r)"), "em_zip_writer *": ("r == NULL", "em_zip_writer_free(r)"),
    "em_pickle *": ("r == NULL", "em_pickle_free(r)"),
    "em_torch_legacy *": ("r == NULL", "em_torch_legacy_free(r)"),
    "_Bool": (None, None), "uint64_t": (None, None), "size_t": (None, None),
    "unsigned": (None, None), "em_device": ("r.type < 0", None), "void": (None, None),
}
POINTER_RETURN = ("r == NULL", None)  # other pointers: borrowed or data


def declarations(pp):
    """Top-level declarations of the preprocessed text (bodies dropped)."""
    pp = re.sub(r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)", "", pp)
    out, cur, depth = [], [], 0
    for ch in pp:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and ch == ";":
            out.append(" ".join("".join(cur).split()))
            cur = []
        elif depth == 0:
            cur.append(ch)
    return out


def split_params(s):
    parts, cur, depth = [], "", 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [] if parts == ["void"] else parts


def param_type(p):
    """(type text without the name, name) of one parameter."""
    m = re.match(r"^(.*)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", p)
    if m:  # function pointer: void (*deleter)(void *ctx)
        args = ", ".join(re.sub(r"\s*\b\w+$", "", a).strip() for a in split_params(m.group(3)))
        return f"{m.group(1).strip()} (*)({args})", m.group(2)
    m = re.match(r"^(.*?)(\w+)$", p)
    t = re.sub(r"\s*\*\s*", " *", m.group(1).strip())  # "T * const*" -> "T *const *"
    t = re.sub(r"\*const\b\s*", "*const ", t)
    return re.sub(r"\*\s+\*", "**", " ".join(t.split())), m.group(2)


def is_pointer(t):
    return "*" in t or t in FUNC_PTR_TYPEDEFS


def is_list(t):
    return t in ("const em_tensor *const *", "em_tensor *const *")


def nullable(fn, name):
    for fre, pre, why in NULLABLE:
        if re.fullmatch(fre, fn) and re.fullmatch(pre, name):
            return why
    return None


def skipped(fn, name):
    return any(re.fullmatch(f, fn) and re.fullmatch(p, name) for f, p, _ in SKIP)


def value(t, fn):
    if t in VALUES:
        return VALUES[t]
    if t in ENUMS:
        return f"({t})0"
    sys.exit(f"gen_null_test.py: {fn}: no valid value for a parameter of type '{t}': add one to VALUES")


def main():
    cc = sys.argv[1:] or ["cc", "-Iinclude"]
    pp = subprocess.run(cc + ["-E", "-P", "-x", "c", "include/ember/ember.h"], check=True,
                        capture_output=True, text=True).stdout
    funcs = []
    for d in declarations(pp):
        if d.startswith(("typedef", "extern")):
            continue
        m = re.match(r"^(.*?)\b(em_\w+)\s*\((.*)\)$", d)
        if not m:
            continue
        ret = " ".join(re.sub(r"\s*\*", " *", m.group(1)).split())
        params = [param_type(p) for p in split_params(m.group(3)) if p != "..."]
        funcs.append((ret, m.group(2), params))

    cases = []  # (function, label, nullable reason or None, C body)
    for ret, fn, params in funcs:
        positions = [(i, False) for i, (t, _) in enumerate(params) if is_pointer(t)]
        positions += [(i, True) for i, (t, _) in enumerate(params) if is_list(t)]
        for i, element in positions:
            t, name = params[i]
            label = f"{name}[]" if element else name
            if skipped(fn, label):
                continue
            args = []
            for j, (tj, nj) in enumerate(params):
                if j == i:
                    args.append(f"({tj})TL_NULL()" if element else f"({tj})NULL")
                else:
                    args.append(f"({tj}){value(tj, fn)}")
            call = f"{fn}({', '.join(args)})"
            check, cleanup = RETURNS.get(ret, POINTER_RETURN if "*" in ret else (None, None))
            if ret not in RETURNS and "*" not in ret:
                sys.exit(f"gen_null_test.py: {fn} returns '{ret}': add its error value to RETURNS")
            if ret == "void":
                body = f"    {call};\n    done(\"{fn}\", \"{label}\", true);"
            else:
                rt = ret if ret != "_Bool" else "bool"
                body = f"    {rt} r = {call};\n"
                body += f"    bool failed = {check or 'true'};\n"
                if cleanup:
                    body += f"    if (r) {cleanup};\n"
                body += "    (void)r;\n"
                body += f"    done(\"{fn}\", \"{label}\", failed);"
            needs_ctx = any("em_function_ctx" in tj for tj, _ in params)
            cases.append((fn, label, nullable(fn, label), body, needs_ctx))

    w = sys.stdout.write
    w("/* Generated by tools/gen_null_test.py from the public headers: do not edit. */\n")
    w('#include "null_args.h"\n\n')
    for k, (fn, label, why, body, _) in enumerate(cases):
        w(f"static void case_{k}(em_function_ctx *ctx) /* {fn}: {label}"
          f"{' (nullable: ' + why + ')' if why else ''} */\n{{\n    (void)ctx;\n{body}\n}}\n")
    w("\nconst null_case null_cases[] = {\n")
    for k, (fn, label, why, _, needs_ctx) in enumerate(cases):
        w(f'    {{"{fn}", "{label}", case_{k}, {"true" if why else "false"}, {"true" if needs_ctx else "false"}}},\n')
    w("};\n")
    w(f"const int null_ncases = {len(cases)};\n")
    w(f"const int null_nfunctions = {len({c[0] for c in cases})};\n")


if __name__ == "__main__":
    main()
