/*
 * value.c - dynamic values: construction, ownership, comparison and the
 * three renderings (Python str(), JSON, canonical JSON).
 *
 * The Python rendering is exact: floats use the shortest digits that read
 * back as the same double, laid out as CPython's float.__repr__ lays them
 * out, because W&B puts str(value) on the trial's command line and users
 * compare those lines.
 */
#include "sweeps/value.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sw_value *make(sw_type t)
{
    sw_value *v = sw_calloc(1, sizeof(*v));

    v->type = t;
    return v;
}

sw_value *sw_value_null(void)
{
    return make(SW_NULL);
}

sw_value *sw_value_bool(bool b)
{
    sw_value *v = make(SW_BOOL);

    v->u.b = b;
    return v;
}

sw_value *sw_value_int(int64_t i)
{
    sw_value *v = make(SW_INT);

    v->u.i = i;
    return v;
}

sw_value *sw_value_float(double f)
{
    sw_value *v = make(SW_FLOAT);

    v->u.f = f;
    return v;
}

sw_value *sw_value_str(const char *s)
{
    return sw_value_strn(s, strlen(s));
}

sw_value *sw_value_strn(const char *s, size_t n)
{
    sw_value *v = make(SW_STR);

    v->u.s = sw_strndup(s, n);
    return v;
}

sw_value *sw_value_str_take(char *s)
{
    sw_value *v = make(SW_STR);

    v->u.s = s;
    return v;
}

sw_value *sw_value_list(void)
{
    return make(SW_LIST);
}

sw_value *sw_value_map(void)
{
    return make(SW_MAP);
}

void sw_value_free(sw_value *v)
{
    size_t i;

    if (!v)
        return;
    if (v->type == SW_STR)
        free(v->u.s);
    if (v->type == SW_LIST) {
        for (i = 0; i < v->u.list.len; i++)
            sw_value_free(v->u.list.items[i]);
        free(v->u.list.items);
    }
    if (v->type == SW_MAP) {
        for (i = 0; i < v->u.map.len; i++) {
            free(v->u.map.keys[i]);
            sw_value_free(v->u.map.vals[i]);
        }
        free(v->u.map.keys);
        free(v->u.map.vals);
    }
    free(v);
}

sw_value *sw_value_clone(const sw_value *v)
{
    sw_value *c;
    size_t i;

    if (!v)
        return NULL;
    if (v->type == SW_STR)
        c = sw_value_str(v->u.s);
    else if (v->type == SW_LIST || v->type == SW_MAP)
        c = make(v->type);
    else {
        c = make(v->type);
        c->u = v->u;
    }
    c->line = v->line;
    c->col = v->col;
    if (v->type == SW_LIST)
        for (i = 0; i < v->u.list.len; i++)
            sw_value_list_push(c, sw_value_clone(v->u.list.items[i]));
    if (v->type == SW_MAP)
        for (i = 0; i < v->u.map.len; i++)
            sw_value_map_set(c, v->u.map.keys[i],
                             sw_value_clone(v->u.map.vals[i]));
    return c;
}

void sw_value_list_push(sw_value *list, sw_value *item)
{
    sw_grow(&list->u.list.items, &list->u.list.cap, list->u.list.len + 1,
            sizeof(sw_value *));
    list->u.list.items[list->u.list.len++] = item;
}

void sw_value_map_set(sw_value *map, const char *key, sw_value *val)
{
    size_t i;

    for (i = 0; i < map->u.map.len; i++) {
        if (strcmp(map->u.map.keys[i], key) == 0) {
            sw_value_free(map->u.map.vals[i]);
            map->u.map.vals[i] = val;
            return;
        }
    }
    sw_value_map_append(map, sw_strdup(key), val);
}

size_t sw_str_hash(const char *s)
{
    size_t h = (size_t)1469598103934665603u; /* FNV-1a */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (size_t)1099511628211u;
    return h;
}

void sw_value_map_append(sw_value *map, char *key, sw_value *val)
{
    size_t cap = map->u.map.cap;

    sw_grow(&map->u.map.keys, &cap, map->u.map.len + 1, sizeof(char *));
    cap = map->u.map.cap;
    sw_grow(&map->u.map.vals, &cap, map->u.map.len + 1, sizeof(sw_value *));
    map->u.map.cap = cap;
    map->u.map.keys[map->u.map.len] = key;
    map->u.map.vals[map->u.map.len++] = val;
}

sw_value *sw_value_map_get(const sw_value *map, const char *key)
{
    size_t i;

    if (!map || map->type != SW_MAP)
        return NULL;
    for (i = 0; i < map->u.map.len; i++)
        if (strcmp(map->u.map.keys[i], key) == 0)
            return map->u.map.vals[i];
    return NULL;
}

bool sw_value_number(const sw_value *v, double *out)
{
    if (v && v->type == SW_INT) {
        *out = (double)v->u.i;
        return true;
    }
    if (v && v->type == SW_FLOAT) {
        *out = v->u.f;
        return true;
    }
    return false;
}

bool sw_value_equal(const sw_value *a, const sw_value *b)
{
    size_t i;

    if (a->type != b->type)
        return false;
    switch (a->type) {
    case SW_NULL:
        return true;
    case SW_BOOL:
        return a->u.b == b->u.b;
    case SW_INT:
        return a->u.i == b->u.i;
    case SW_FLOAT:
        return a->u.f == b->u.f || (isnan(a->u.f) && isnan(b->u.f));
    case SW_STR:
        return strcmp(a->u.s, b->u.s) == 0;
    case SW_LIST:
        if (a->u.list.len != b->u.list.len)
            return false;
        for (i = 0; i < a->u.list.len; i++)
            if (!sw_value_equal(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    case SW_MAP:
        if (a->u.map.len != b->u.map.len)
            return false;
        for (i = 0; i < a->u.map.len; i++) {
            sw_value *o = sw_value_map_get(b, a->u.map.keys[i]);
            if (!o || !sw_value_equal(a->u.map.vals[i], o))
                return false;
        }
        return true;
    }
    return false;
}

/*
 * Shortest digits: the fewest significant digits (1..17) that strtod reads
 * back as `f`. Fills `digits` (no dot, no trailing zeros) and returns the
 * decimal exponent of the first digit.
 *
 * Any decimal of 15 significant digits or fewer that reads back as `f` is
 * f rounded to 15 digits (their spacing is wider than a double's), so when
 * f rounded to 15 digits reads back, its digits less trailing zeros are
 * the shortest; otherwise 16 digits, then 17 (always enough). Three tries
 * at most instead of up to seventeen, the same digits. (Not so for
 * subnormals, whose spacing is wider: they try every length.)
 */
static int shortest_digits(double f, char digits[32])
{
    char tmp[40];
    int p, exp10 = 0;
    size_t n = 0;
    char *e;

    /* subnormals are sparser than 15 digits: try every length there */
    for (p = fabs(f) < DBL_MIN ? 1 : 15; p <= 17; p++) {
        snprintf(tmp, sizeof(tmp), "%.*e", p - 1, f);
        if (p == 17 || strtod(tmp, NULL) == f)
            break;
    }
    for (e = tmp; *e && *e != 'e'; e++)
        if (*e >= '0' && *e <= '9')
            digits[n++] = *e;
    if (*e == 'e')
        exp10 = (int)strtol(e + 1, NULL, 10);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return exp10;
}

void sw_int_write(sw_buf *out, long long i)
{
    char d[24];
    unsigned long long u =
        i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;
    int n = (int)sizeof(d);

    do
        d[--n] = (char)('0' + u % 10);
    while (u /= 10);
    if (i < 0)
        d[--n] = '-';
    sw_buf_put(out, d + n, sizeof(d) - (size_t)n);
}

/* "%.6g" of a finite f with 1e-4 <= |f| < 1e6, into `out`: its six
 * significant digits m (100000..999999) from f scaled by a power of ten,
 * which is exact to within 1e-9 of a unit of m, so the rounding is
 * printf's unless the scaled value lies within 1e-7 of a half; then, or
 * when the rounding carries f to 1e6 (printf's exponent form), false. */
static bool g6_fast(double f, char out[32])
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5,
                                 1e6, 1e7, 1e8, 1e9, 1e10};
    double a = fabs(f), scaled, whole, frac;
    int e = (int)floor(log10(a)), k, i, n = 0, len;
    long m;
    char d[6];

    for (i = 0; i < 2; i++) { /* log10 may be one off near a power of 10 */
        k = 5 - e;
        if (k < 0 || k > 10)
            return false;
        scaled = a * p10[k];
        if (scaled < 100000)
            e--;
        else if (scaled >= 1000000)
            e++;
        else
            break;
    }
    if (i == 2)
        return false;
    whole = floor(scaled);
    frac = scaled - whole;
    if (fabs(frac - 0.5) < 1e-7)
        return false;
    m = (long)whole + (frac > 0.5);
    if (m > 999999) /* rounded up to the next power of ten */
        m /= 10, e++;
    if (e < -4 || e > 5)
        return false;
    for (i = 5; i >= 0; i--, m /= 10)
        d[i] = (char)('0' + m % 10);
    for (len = 6; len > 1 && d[len - 1] == '0' && len > e + 1; len--)
        ;
    if (signbit(f))
        out[n++] = '-';
    if (e < 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (i = -1; i > e; i--)
            out[n++] = '0';
        for (i = 0; i < len; i++)
            out[n++] = d[i];
    } else {
        for (i = 0; i <= e; i++)
            out[n++] = d[i];
        if (len > e + 1)
            out[n++] = '.';
        for (; i < len; i++)
            out[n++] = d[i];
    }
    out[n] = '\0';
    return true;
}

void sw_float_write_g6(sw_buf *out, double f)
{
    char s[32];

    if (isfinite(f) && fabs(f) >= 1e-4 && fabs(f) < 1e6 && g6_fast(f, s))
        sw_buf_puts(out, s);
    else
        sw_buf_printf(out, "%.6g", f);
}

void sw_float_write_py(sw_buf *out, double f)
{
    char d[32];
    int exp10, decpt, nd, i;

    if (isnan(f)) {
        sw_buf_puts(out, "nan");
        return;
    }
    if (isinf(f)) {
        sw_buf_puts(out, f < 0 ? "-inf" : "inf");
        return;
    }
    if (signbit(f)) {
        sw_buf_putc(out, '-');
        f = -f;
    }
    if (f == 0) {
        sw_buf_puts(out, "0.0");
        return;
    }
    exp10 = shortest_digits(f, d);
    decpt = exp10 + 1; /* digits are 0.d1d2... x 10^decpt */
    nd = (int)strlen(d);
    if (decpt <= -4 || decpt > 16) {
        sw_buf_putc(out, d[0]);
        if (nd > 1) {
            sw_buf_putc(out, '.');
            sw_buf_puts(out, d + 1);
        }
        sw_buf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (decpt <= 0) {
        sw_buf_puts(out, "0.");
        for (i = decpt; i < 0; i++)
            sw_buf_putc(out, '0');
        sw_buf_puts(out, d);
    } else if (decpt >= nd) {
        sw_buf_puts(out, d);
        for (i = nd; i < decpt; i++)
            sw_buf_putc(out, '0');
        sw_buf_puts(out, ".0");
    } else {
        sw_buf_put(out, d, (size_t)decpt);
        sw_buf_putc(out, '.');
        sw_buf_puts(out, d + decpt);
    }
}

void sw_float_write_json(sw_buf *out, double f)
{
    if (isnan(f))
        sw_buf_puts(out, "NaN");
    else if (isinf(f))
        sw_buf_puts(out, f < 0 ? "-Infinity" : "Infinity");
    else
        sw_float_write_py(out, f);
}

static void write_pystr(sw_buf *out, const char *s)
{
    char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
    const unsigned char *p;

    sw_buf_putc(out, q);
    for (p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' || *p == (unsigned char)q) {
            sw_buf_putc(out, '\\');
            sw_buf_putc(out, (char)*p);
        } else if (*p == '\n')
            sw_buf_puts(out, "\\n");
        else if (*p == '\r')
            sw_buf_puts(out, "\\r");
        else if (*p == '\t')
            sw_buf_puts(out, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            sw_buf_printf(out, "\\x%02x", *p);
        else
            sw_buf_putc(out, (char)*p);
    }
    sw_buf_putc(out, q);
}

static void write_py(sw_buf *out, const sw_value *v, bool repr)
{
    size_t i;

    switch (v->type) {
    case SW_NULL:
        sw_buf_puts(out, "None");
        break;
    case SW_BOOL:
        sw_buf_puts(out, v->u.b ? "True" : "False");
        break;
    case SW_INT:
        sw_int_write(out, (long long)v->u.i);
        break;
    case SW_FLOAT:
        sw_float_write_py(out, v->u.f);
        break;
    case SW_STR:
        if (repr)
            write_pystr(out, v->u.s);
        else
            sw_buf_puts(out, v->u.s);
        break;
    case SW_LIST:
        sw_buf_putc(out, '[');
        for (i = 0; i < v->u.list.len; i++) {
            if (i)
                sw_buf_puts(out, ", ");
            write_py(out, v->u.list.items[i], true);
        }
        sw_buf_putc(out, ']');
        break;
    case SW_MAP:
        sw_buf_putc(out, '{');
        for (i = 0; i < v->u.map.len; i++) {
            if (i)
                sw_buf_puts(out, ", ");
            write_pystr(out, v->u.map.keys[i]);
            sw_buf_puts(out, ": ");
            write_py(out, v->u.map.vals[i], true);
        }
        sw_buf_putc(out, '}');
        break;
    }
}

void sw_value_write_py(sw_buf *out, const sw_value *v)
{
    write_py(out, v, false);
}

void sw_value_write_pyrepr(sw_buf *out, const sw_value *v)
{
    write_py(out, v, true);
}

char *sw_value_to_py(const sw_value *v)
{
    sw_buf b = SW_BUF_INIT;

    sw_value_write_py(&b, v);
    return sw_buf_detach(&b);
}

void sw_json_write_string(sw_buf *out, const char *s)
{
    const unsigned char *p;

    sw_buf_putc(out, '"');
    for (p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            sw_buf_putc(out, '\\');
            sw_buf_putc(out, (char)*p);
        } else if (*p == '\n')
            sw_buf_puts(out, "\\n");
        else if (*p == '\r')
            sw_buf_puts(out, "\\r");
        else if (*p == '\t')
            sw_buf_puts(out, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            sw_buf_printf(out, "\\u%04x", *p);
        else
            sw_buf_putc(out, (char)*p);
    }
    sw_buf_putc(out, '"');
}

/* Key order of a map: insertion order, or sorted (insertion sort: maps
 * are small, and this keeps no global state). The caller frees. */
static size_t *key_order(const sw_value *v, bool sorted)
{
    size_t i, j, t, *idx = sw_calloc(v->u.map.len, sizeof(size_t));
    char **k = v->u.map.keys;

    for (i = 0; i < v->u.map.len; i++) {
        idx[i] = i;
        for (j = i; sorted && j > 0 && strcmp(k[idx[j - 1]], k[idx[j]]) > 0;
             j--) {
            t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    }
    return idx;
}

void sw_value_write_json(sw_buf *out, const sw_value *v, bool sorted)
{
    size_t i, *idx;

    switch (v->type) {
    case SW_NULL:
        sw_buf_puts(out, "null");
        break;
    case SW_BOOL:
        sw_buf_puts(out, v->u.b ? "true" : "false");
        break;
    case SW_INT:
        sw_buf_printf(out, "%lld", (long long)v->u.i);
        break;
    case SW_FLOAT:
        sw_float_write_json(out, v->u.f);
        break;
    case SW_STR:
        sw_json_write_string(out, v->u.s);
        break;
    case SW_LIST:
        sw_buf_putc(out, '[');
        for (i = 0; i < v->u.list.len; i++) {
            if (i)
                sw_buf_puts(out, ", ");
            sw_value_write_json(out, v->u.list.items[i], sorted);
        }
        sw_buf_putc(out, ']');
        break;
    case SW_MAP:
        idx = key_order(v, sorted);
        sw_buf_putc(out, '{');
        for (i = 0; i < v->u.map.len; i++) {
            if (i)
                sw_buf_puts(out, ", ");
            sw_json_write_string(out, v->u.map.keys[idx[i]]);
            sw_buf_puts(out, ": ");
            sw_value_write_json(out, v->u.map.vals[idx[i]], sorted);
        }
        sw_buf_putc(out, '}');
        free(idx);
        break;
    }
}

uint64_t sw_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t i;

    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
