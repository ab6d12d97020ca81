/* Thread-local error state of the C API, and message formatting helpers. */
#include "internal.h"
#include <stdarg.h>
#include <stdio.h>

static _Thread_local em_status err_code;
static _Thread_local char err_msg[1024];

static void set_error(em_status code, const char *fmt, va_list ap)
{
    err_code = code;
    vsnprintf(err_msg, sizeof err_msg, fmt, ap);
}

void *em_error(em_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(code, fmt, ap);
    va_end(ap);
    return NULL;
}

em_status em_fail(em_status code, const char *fmt, ...)
{
    if (!fmt) return em_null_arg(__func__, "fmt"), code;
    va_list ap;
    va_start(ap, fmt);
    set_error(code, fmt, ap);
    va_end(ap);
    return code;
}

bool em_null_arg(const char *function, const char *argument)
{
    em_error(EM_ERR_VALUE, "%s: %s is NULL", function, argument);
    return true;
}

bool em_null_list(const char *function, const char *argument, int n, const void *const *list)
{
    if (n > 0 && !list) return em_null_arg(function, argument);
    for (int k = 0; k < n; k++)
        if (!list[k]) return em_error(EM_ERR_VALUE, "%s: %s[%d] is NULL", function, argument, k), true;
    return false;
}

const char *em_last_error(void) { return err_msg; }
em_status em_error_code(void) { return err_code; }

void em_clear_error(void)
{
    err_code = EM_OK;
    err_msg[0] = 0;
}

const char *em_shape_str(int ndim, const int64_t *sizes)
{
    static _Thread_local char ring[4][EM_MAX_DIMS * 22 + 4];
    static _Thread_local int next;
    char *s = ring[next++ & 3];
    int len = 0;
    s[len++] = '[';
    for (int i = 0; i < ndim; i++)
        len += snprintf(s + len, sizeof ring[0] - len, i ? ", %lld" : "%lld", (long long)sizes[i]);
    s[len++] = ']';
    s[len] = 0;
    return s;
}
