/*
 * spec.c - what a sweep file means: the validator that turns the loaded
 * document into an sw_spec, and the spec's small helpers.
 *
 * The rules are W&B's (sweeps/config/schema.json and schema.py, as read
 * with yaml.safe_load), so every valid W&B sweep config is valid here with
 * the same meaning, plus sweep's extension keys. Validation never stops at
 * the first problem: each one is recorded in the diags, located at the key
 * (or list item) at fault, in document order. Parameters are checked in
 * document order but kept in W&B's order: keys sorted at every level,
 * depth first.
 */
#include "sweeps/spec.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sweeps/yaml11.h"

#define MAX_PARAM_DEPTH 64

static const char *const dist_names[SW_DIST__COUNT] = {
    "constant",
    "categorical",
    "int_uniform",
    "uniform",
    "q_uniform",
    "log_uniform",
    "log_uniform_values",
    "q_log_uniform",
    "q_log_uniform_values",
    "inv_log_uniform",
    "inv_log_uniform_values",
    "normal",
    "q_normal",
    "log_normal",
    "q_log_normal",
    "beta",
    "q_beta",
};

/* The keys each distribution takes besides `distribution`, and those it
 * requires (W&B's schema.json). */
typedef struct {
    const char *name;
    sw_dist dist;
    const char *keys, *required;
} dist_info;

static const dist_info dists[] = {
    {"constant", SW_DIST_CONSTANT, "value", "value"},
    {"categorical", SW_DIST_CATEGORICAL, "values", "values"},
    {"categorical_w_probabilities", SW_DIST_CATEGORICAL, "values probabilities",
     "values probabilities"},
    {"int_uniform", SW_DIST_INT_UNIFORM, "min max", "min max"},
    {"uniform", SW_DIST_UNIFORM, "min max", "min max"},
    {"q_uniform", SW_DIST_Q_UNIFORM, "min max q", "min max"},
    {"log_uniform", SW_DIST_LOG_UNIFORM, "min max", "min max"},
    {"log_uniform_values", SW_DIST_LOG_UNIFORM_VALUES, "min max", "min max"},
    {"q_log_uniform", SW_DIST_Q_LOG_UNIFORM, "min max q", "min max"},
    {"q_log_uniform_values", SW_DIST_Q_LOG_UNIFORM_VALUES, "min max q",
     "min max"},
    {"inv_log_uniform", SW_DIST_INV_LOG_UNIFORM, "min max", "min max"},
    {"inv_log_uniform_values", SW_DIST_INV_LOG_UNIFORM_VALUES, "min max",
     "min max"},
    {"normal", SW_DIST_NORMAL, "mu sigma", ""},
    {"q_normal", SW_DIST_Q_NORMAL, "mu sigma q", ""},
    {"log_normal", SW_DIST_LOG_NORMAL, "mu sigma", ""},
    {"q_log_normal", SW_DIST_Q_LOG_NORMAL, "mu sigma q", ""},
    {"beta", SW_DIST_BETA, "a b", ""},
    {"q_beta", SW_DIST_Q_BETA, "a b q", ""},
};

#define N_DISTS (sizeof(dists) / sizeof(*dists))
#define ALL_PARAM_KEYS                                                         \
    "value values probabilities min max q mu sigma a b distribution"

/* Indexed by sw_method, in its order; NULL-terminated for want_enum. */
static const char *const method_names[] = {"grid", "random", "bayes", "tpe",
                                           "sobol", NULL};

const char *sw_method_name(sw_method m)
{
    return (unsigned)m < SW_METHOD__COUNT ? method_names[m] : "unknown";
}

const char *sw_dist_name(sw_dist d)
{
    return (unsigned)d < SW_DIST__COUNT ? dist_names[d] : "unknown";
}

bool sw_dist_is_discrete(sw_dist d)
{
    return d == SW_DIST_CONSTANT || d == SW_DIST_CATEGORICAL ||
           d == SW_DIST_INT_UNIFORM || d == SW_DIST_Q_UNIFORM;
}

int sw_spec__key_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const sw_spec__key *)a)->val;
    uintptr_t y = (uintptr_t)((const sw_spec__key *)b)->val;

    return x < y ? -1 : x > y;
}

/* Validation context ------------------------------------------------- */

typedef struct {
    sw_spec *spec;
    sw_diags *diags;
    const sw_spec__keys *keys;
    size_t cap_params;
    size_t *lines; /* offset of each line in spec->source, made on demand */
    bool *ascii;   /* whether each line is ASCII: columns are bytes */
    size_t n_lines;
} ctx;

/* Where a problem with `v` is shown: at its key when it has one. */
static void where(const ctx *c, const sw_value *v, int *line, int *col)
{
    sw_spec__key k = {v, 0, 0};
    const sw_spec__key *found = NULL;

    if (c->keys->len)
        found = bsearch(&k, c->keys->items, c->keys->len, sizeof(k),
                        sw_spec__key_cmp);
    *line = found ? found->line : v->line;
    *col = found ? found->col : v->col;
}

static void report(ctx *c, bool warning, const sw_value *at, bool at_value,
                   const char *path, const char *fmt, va_list ap)
{
    sw_buf b = SW_BUF_INIT;
    va_list aq;
    int line = 0, col = 0, n;

    va_copy(aq, ap);
    n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n > 0) {
        sw_grow(&b.ptr, &b.cap, (size_t)n + 1, 1);
        vsnprintf(b.ptr, (size_t)n + 1, fmt, ap);
        b.len = (size_t)n;
    }
    if (at && at_value) {
        line = at->line;
        col = at->col;
    } else if (at) {
        where(c, at, &line, &col);
    }
    sw_diags_add(c->diags, warning, line, col, path, "%s", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

/* An error about `at`, shown at its key. */
static void err(ctx *c, const sw_value *at, const char *path, const char *fmt,
                ...) SW_PRINTF(4, 5);
static void err(ctx *c, const sw_value *at, const char *path, const char *fmt,
                ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, false, at, false, path, fmt, ap);
    va_end(ap);
}

/* A warning about the value `at` itself (not its key). */
static void warn_value(ctx *c, const sw_value *at, const char *path,
                       const char *fmt, ...) SW_PRINTF(4, 5);
static void warn_value(ctx *c, const sw_value *at, const char *path,
                       const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, true, at, true, path, fmt, ap);
    va_end(ap);
}

static void warn(ctx *c, const sw_value *at, const char *path, const char *fmt,
                 ...) SW_PRINTF(4, 5);
static void warn(ctx *c, const sw_value *at, const char *path, const char *fmt,
                 ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, true, at, false, path, fmt, ap);
    va_end(ap);
}

static char *join(const char *path, const char *key)
{
    return path[0] ? sw_aprintf("%s.%s", path, key) : sw_strdup(key);
}

static void index_lines(ctx *c)
{
    const char *s = c->spec->source;
    size_t i, cap = 0, cap2 = 0;

    for (i = 0;; i++) {
        if (i == 0 || s[i - 1] == '\n') {
            sw_grow(&c->lines, &cap, c->n_lines + 1, sizeof(size_t));
            sw_grow(&c->ascii, &cap2, c->n_lines + 1, sizeof(bool));
            c->lines[c->n_lines] = i;
            c->ascii[c->n_lines++] = true;
        }
        if (!s[i])
            break;
        if ((unsigned char)s[i] >= 0x80)
            c->ascii[c->n_lines - 1] = false;
    }
}

/* The source text where `v` was written, or "" when unknown. */
static const char *source_at(ctx *c, const sw_value *v)
{
    const char *s, *line;
    size_t n;
    int col = 1;

    if (!c->spec->source || v->line <= 0)
        return "";
    if (!c->lines)
        index_lines(c);
    if ((size_t)v->line > c->n_lines)
        return "";
    line = c->spec->source + c->lines[v->line - 1];
    if (c->ascii[v->line - 1]) {
        n = strcspn(line, "\n");
        return (size_t)v->col - 1 <= n ? line + v->col - 1 : "";
    }
    for (s = line; *s && col < v->col; s++)
        col += ((unsigned char)s[1] & 0xC0) != 0x80;
    return s;
}

/* True when `v` was written as a plain scalar (no quotes, tag or anchor):
 * then YAML 1.1 decided its type, perhaps not as the user meant. */
static bool written_plain(ctx *c, const sw_value *v)
{
    const char *s = source_at(c, v);

    return *s && !strchr("'\"!&*|>", *s);
}

/* Types --------------------------------------------------------------- */

static void describe(sw_buf *b, const sw_value *v)
{
    static const char *const names[] = {"null",     "a boolean", "an integer",
                                        "a float",  "a string",  "a list",
                                        "a mapping"};

    sw_buf_puts(b, names[v->type]);
    if (v->type == SW_STR) {
        sw_buf_puts(b, " ");
        sw_value_write_pyrepr(b, v);
    } else if (v->type != SW_LIST && v->type != SW_MAP && v->type != SW_NULL) {
        sw_buf_puts(b, " (");
        sw_value_write_py(b, v);
        sw_buf_puts(b, ")");
    }
}

/* "must be <what>, not <v>", with the YAML 1.1 hint where it applies. */
static void wrong_type(ctx *c, const sw_value *v, const char *path,
                       const char *what)
{
    sw_buf b = SW_BUF_INIT;
    char *fix;

    if (v->type == SW_STR && written_plain(c, v) &&
        sw_yaml11__looks_numeric(v->u.s) &&
        (fix = sw_yaml11__float_spelling(v->u.s)) != NULL) {
        err(c, v, path,
            "must be %s; %s is read as a string (YAML 1.1, as W&B reads "
            "it): write %s",
            what, v->u.s, fix);
        free(fix);
        return;
    }
    describe(&b, v);
    err(c, v, path, "must be %s, not %s", what, sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

static bool want(ctx *c, const sw_value *v, const char *path, sw_type t)
{
    static const char *const names[] = {"null",     "a boolean", "an integer",
                                        "a number", "a string",  "a list",
                                        "a mapping"};

    if (v->type == t || (t == SW_FLOAT && v->type == SW_INT))
        return true;
    wrong_type(c, v, path, names[t]);
    return false;
}

static bool want_number(ctx *c, const sw_value *v, const char *path,
                        double *out)
{
    if (!want(c, v, path, SW_FLOAT))
        return false;
    sw_value_number(v, out);
    if (isfinite(*out))
        return true;
    err(c, v, path, "must be a finite number");
    return false;
}

/* An integer >= lo. */
static bool want_int(ctx *c, const sw_value *v, const char *path, int64_t lo,
                     int64_t *out)
{
    if (!want(c, v, path, SW_INT))
        return false;
    if (v->u.i < lo) {
        err(c, v, path, "must be at least %lld", (long long)lo);
        return false;
    }
    *out = v->u.i;
    return true;
}

/* A string from an allowed list ("a|b|c"); NULL when not. */
static const char *want_enum(ctx *c, const sw_value *v, const char *path,
                             const char *what, const char *const *allowed)
{
    sw_buf b = SW_BUF_INIT;
    size_t i, n;

    if (!want(c, v, path, SW_STR))
        return NULL;
    for (n = 0; allowed[n]; n++)
        if (strcmp(v->u.s, allowed[n]) == 0)
            return allowed[n];
    for (i = 0; i < n; i++)
        sw_buf_printf(&b, "%s%s", i ? (i + 1 < n ? ", " : " or ") : "",
                      allowed[i]);
    err(c, v, path, "unknown %s '%s' (expected %s)", what, v->u.s,
        sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return NULL;
}

static void set_str(ctx *c, const sw_value *v, const char *path, char **dst)
{
    if (want(c, v, path, SW_STR)) {
        free(*dst);
        *dst = sw_strdup(v->u.s);
    }
}

/* Calls `fn` on each key of `map` in document order, with its path. */
typedef void (*key_fn)(ctx *c, const char *key, const sw_value *v,
                       const char *path, void *arg);

static void each_key(ctx *c, const sw_value *map, const char *path, key_fn fn,
                     void *arg)
{
    size_t i;
    char *p;

    for (i = 0; i < map->u.map.len; i++) {
        p = join(path, map->u.map.keys[i]);
        fn(c, map->u.map.keys[i], map->u.map.vals[i], p, arg);
        free(p);
    }
}

static void unknown_key(ctx *c, const sw_value *v, const char *path,
                        const char *allowed)
{
    err(c, v, path, "unknown key (expected one of: %s)", allowed);
}

/* Levenshtein distance, capped: enough to suggest a misspelt key. */
static size_t distance(const char *a, const char *b)
{
    size_t row[65], i, j, prev, tmp, n = strlen(b);

    if (strlen(a) > 64 || n > 64)
        return 99;
    for (j = 0; j <= n; j++)
        row[j] = j;
    for (i = 1; a[i - 1]; i++) {
        prev = row[0];
        row[0] = i;
        for (j = 1; j <= n; j++) {
            tmp = row[j];
            row[j] = a[i - 1] == b[j - 1] ? prev : 1 + prev;
            if (row[j] > tmp + 1)
                row[j] = tmp + 1;
            if (row[j] > row[j - 1] + 1)
                row[j] = row[j - 1] + 1;
            prev = tmp;
        }
    }
    return row[n];
}

/* The word of the space-separated `list` closest to `key`, or NULL. */
static char *closest(const char *key, const char *list)
{
    char *copy = sw_strdup(list), *w, *best = NULL, *save = NULL;
    size_t d, best_d = 3;

    for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        d = distance(key, w);
        if (d < best_d && d * 3 <= strlen(w)) {
            best_d = d;
            best = w;
        }
    }
    best = best ? sw_strdup(best) : NULL;
    free(copy);
    return best;
}

/* "unknown key", with a suggestion from `list` when one is close. */
static void unknown_key_in(ctx *c, const char *key, const sw_value *v,
                           const char *path, const char *list)
{
    char *near = closest(key, list);

    if (near)
        err(c, v, path, "unknown key (did you mean '%s'?)", near);
    else
        unknown_key(c, v, path, list);
    free(near);
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *p = list;

    while (n && (p = strstr(p, word)) != NULL) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
        p += n;
    }
    return false;
}

/* Parameters ---------------------------------------------------------- */

typedef struct {
    const char *comps[MAX_PARAM_DEPTH];
    size_t depth;
} param_path;

static const dist_info *find_dist(const char *name)
{
    size_t i;

    for (i = 0; i < N_DISTS; i++)
        if (strcmp(dists[i].name, name) == 0)
            return &dists[i];
    return NULL;
}

/* W&B's rule for parameter names: ^[A-Za-z_][A-Za-z0-9_.-]*$. */
static bool valid_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                     "0123456789_.-") == strlen(s);
}

static sw_param *new_param(ctx *c, const sw_value *v, const param_path *pp)
{
    sw_spec *spec = c->spec;
    sw_param *p;
    sw_buf name = SW_BUF_INIT;
    size_t i;

    sw_grow(&spec->params, &c->cap_params, spec->n_params + 1,
            sizeof(*spec->params));
    p = &spec->params[spec->n_params++];
    memset(p, 0, sizeof(*p));
    p->depth = pp->depth;
    p->path = sw_calloc(pp->depth, sizeof(char *));
    for (i = 0; i < pp->depth; i++) {
        p->path[i] = sw_strdup(pp->comps[i]);
        sw_buf_printf(&name, "%s%s", i ? "." : "", pp->comps[i]);
    }
    p->name = sw_buf_detach(&name);
    p->sigma = p->q = p->a = p->b = 1.0;
    where(c, v, &p->line, &p->col);
    return p;
}

/* Warns about a plain scalar YAML 1.1 read otherwise than it looks. */
static void warn_scalar(ctx *c, const sw_value *v, const char *path)
{
    const char *src;
    char *fix;

    if (!written_plain(c, v))
        return;
    if (v->type == SW_STR && sw_yaml11__looks_numeric(v->u.s)) {
        fix = sw_yaml11__float_spelling(v->u.s);
        warn_value(c, v, path,
                   "read as the string '%s' (YAML 1.1, as W&B reads it); "
                   "write %s for a number",
                   v->u.s, fix ? fix : "it with a dot");
        free(fix);
    } else if (v->type == SW_BOOL) {
        src = source_at(c, v);
        if (sw_yaml11__word_bool(src, strspn(src, "yesnoYESNOfFO")))
            warn_value(c, v, path,
                       "%.*s is read as the boolean %s (YAML 1.1, as W&B "
                       "reads it); quote it for a string",
                       (int)strspn(src, "yesnoYESNOfFO"), src,
                       v->u.b ? "True" : "False");
    }
}

/* Checks the probabilities of `n` values; a new array, or NULL. */
static double *check_probs(ctx *c, const sw_value *pr, const char *path,
                           size_t n)
{
    double *probs, sum = 0.0;
    size_t i;
    bool ok = true;
    char *ip;

    if (!want(c, pr, path, SW_LIST))
        return NULL;
    if (pr->u.list.len != n) {
        err(c, pr, path,
            "has %zu entries and values has %zu: they must "
            "match one to one",
            pr->u.list.len, n);
        return NULL;
    }
    probs = sw_calloc(n, sizeof(double));
    for (i = 0; i < n; i++) {
        ip = sw_aprintf("%s[%zu]", path, i);
        if (!want_number(c, pr->u.list.items[i], ip, &probs[i]))
            ok = false;
        else if (probs[i] < 0.0 || probs[i] > 1.0) {
            err(c, pr->u.list.items[i], ip, "must be between 0 and 1");
            ok = false;
        }
        sum += probs[i];
        free(ip);
    }
    /* numpy.isclose(sum, 1.0), as W&B checks it */
    if (ok && fabs(sum - 1.0) > 1e-8 + 1e-5) {
        err(c, pr, path, "must sum to 1, and they sum to %.10g", sum);
        ok = false;
    }
    if (!ok) {
        free(probs);
        return NULL;
    }
    return probs;
}

/* A hash that agrees with sw_value_equal: equal values hash alike (0.0
 * and -0.0, every NaN; a mapping whatever its key order). */
static uint64_t value_hash(const sw_value *v)
{
    uint64_t h = sw_hash(SW_HASH_SEED, &v->type, sizeof(v->type)), x = 0;
    double f;
    size_t i;

    if (v->type == SW_BOOL || v->type == SW_INT)
        x = v->type == SW_BOOL ? (uint64_t)v->u.b : (uint64_t)v->u.i;
    if (v->type == SW_FLOAT) {
        f = isnan(v->u.f) ? NAN : v->u.f == 0.0 ? 0.0 : v->u.f;
        memcpy(&x, &f, sizeof(x));
    }
    if (v->type == SW_STR)
        return sw_hash(h, v->u.s, strlen(v->u.s));
    for (i = 0; v->type == SW_LIST && i < v->u.list.len; i++)
        x = x * 31 + value_hash(v->u.list.items[i]);
    for (i = 0; v->type == SW_MAP && i < v->u.map.len; i++)
        x += sw_hash(value_hash(v->u.map.vals[i]), v->u.map.keys[i],
                     strlen(v->u.map.keys[i]));
    return sw_hash(h, &x, sizeof(x));
}

/* The index among p->values of a value equal to `item`, or n_values
 * after adding it. `slots` (a power of two, 0 for empty) finds them. */
static size_t find_or_add(sw_param *p, size_t *slots, size_t mask,
                          const sw_value *item)
{
    size_t i = (size_t)value_hash(item) & mask;

    for (; slots[i]; i = (i + 1) & mask)
        if (sw_value_equal(p->values[slots[i] - 1], item))
            return slots[i] - 1;
    slots[i] = p->n_values + 1;
    p->values[p->n_values++] = sw_value_clone(item);
    return p->n_values - 1;
}

/* Keeps the first of equal values (typed equality); a repeated value's
 * probability goes to its first occurrence. */
static void collapse_values(ctx *c, sw_param *p, const sw_value *vals,
                            const char *path, const double *probs)
{
    size_t i, j, k, n = vals->u.list.len, mask = 1;
    size_t *slots;
    char *ip;

    while (mask < 2 * n)
        mask <<= 1;
    slots = sw_calloc(mask, sizeof(size_t));
    mask -= 1;
    p->values = sw_calloc(n, sizeof(sw_value *));
    p->probs = probs ? sw_calloc(n, sizeof(double)) : NULL;
    for (i = 0; i < n; i++) {
        ip = sw_aprintf("%s[%zu]", path, i);
        warn_scalar(c, vals->u.list.items[i], ip);
        k = p->n_values;
        j = find_or_add(p, slots, mask, vals->u.list.items[i]);
        if (j < k)
            warn_value(c, vals->u.list.items[i], ip,
                       "a repeated value: kept once (W&B's random search "
                       "would draw it more often)");
        if (probs)
            p->probs[j] += probs[i];
        free(ip);
    }
    free(slots);
}

static void fill_values(ctx *c, sw_param *p, const sw_value *v,
                        const char *path)
{
    const sw_value *vals = sw_value_map_get(v, "values");
    const sw_value *pr = sw_value_map_get(v, "probabilities");
    char *pv = join(path, "values"), *pp = join(path, "probabilities");
    double *probs = NULL;

    if (vals && want(c, vals, pv, SW_LIST)) {
        if (vals->u.list.len == 0) {
            err(c, vals, pv, "must not be empty");
        } else {
            if (pr)
                probs = check_probs(c, pr, pp, vals->u.list.len);
            if (!pr || probs)
                collapse_values(c, p, vals, pv, probs);
        }
    }
    free(probs);
    free(pv);
    free(pp);
}

/* A number from key `key` of `v` into *out when present; false on a
 * problem. `lo` is an exclusive (gt) or inclusive lower bound. */
static bool fill_number(ctx *c, const sw_value *v, const char *path,
                        const char *key, double *out, double lo, bool gt)
{
    const sw_value *x = sw_value_map_get(v, key);
    char *kp;
    bool ok = true;

    if (!x)
        return true;
    kp = join(path, key);
    if (!want_number(c, x, kp, out))
        ok = false;
    else if (gt ? !(*out > lo) : !(*out >= lo)) {
        err(c, x, kp, "must be %s %g", gt ? "greater than" : "at least", lo);
        ok = false;
    }
    free(kp);
    return ok;
}

static bool int_bound(ctx *c, const sw_value *x, const char *path, int64_t *out)
{
    sw_buf b = SW_BUF_INIT;

    if (x->type == SW_INT) {
        *out = x->u.i;
        return true;
    }
    describe(&b, x);
    err(c, x, path, "int_uniform needs an integer, not %s", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return false;
}

static void check_order(ctx *c, sw_param *p, const sw_value *mn,
                        const sw_value *mx, const char *pmin)
{
    bool bad = p->dist == SW_DIST_INT_UNIFORM ? p->imin >= p->imax
                                              : !(p->min < p->max);
    char *a, *b;

    if (!bad)
        return;
    a = sw_value_to_py(mn);
    b = sw_value_to_py(mx);
    err(c, mn, pmin, "min (%s) must be less than max (%s)", a, b);
    free(a);
    free(b);
}

static bool takes_values(sw_dist d)
{
    return d == SW_DIST_LOG_UNIFORM_VALUES ||
           d == SW_DIST_Q_LOG_UNIFORM_VALUES ||
           d == SW_DIST_INV_LOG_UNIFORM_VALUES;
}

static void fill_range(ctx *c, sw_param *p, const sw_value *v, const char *path)
{
    const sw_value *mn = sw_value_map_get(v, "min");
    const sw_value *mx = sw_value_map_get(v, "max");
    char *pmin = join(path, "min"), *pmax = join(path, "max");
    bool ok = mn && mx;

    if (mn && !want_number(c, mn, pmin, &p->min))
        ok = false;
    if (mx && !want_number(c, mx, pmax, &p->max))
        ok = false;
    if (ok && p->dist == SW_DIST_INT_UNIFORM) {
        ok = int_bound(c, mn, pmin, &p->imin);
        ok = int_bound(c, mx, pmax, &p->imax) && ok;
    }
    if (ok)
        check_order(c, p, mn, mx, pmin);
    if (ok && takes_values(p->dist) && !(p->min > 0))
        err(c, mn, pmin,
            "must be greater than 0 (%s takes the values "
            "themselves, not their logarithms)",
            sw_dist_name(p->dist));
    free(pmin);
    free(pmax);
}

static void fill_leaf(ctx *c, sw_param *p, const sw_value *v, const char *path)
{
    const sw_value *q = sw_value_map_get(v, "q");
    char *vp;

    switch (p->dist) {
    case SW_DIST_CONSTANT:
        p->value = sw_value_clone(sw_value_map_get(v, "value"));
        vp = join(path, "value");
        if (p->value)
            warn_scalar(c, p->value, vp);
        free(vp);
        break;
    case SW_DIST_CATEGORICAL:
        fill_values(c, p, v, path);
        break;
    case SW_DIST_NORMAL:
    case SW_DIST_Q_NORMAL:
    case SW_DIST_LOG_NORMAL:
    case SW_DIST_Q_LOG_NORMAL:
        fill_number(c, v, path, "mu", &p->mu, -INFINITY, true);
        fill_number(c, v, path, "sigma", &p->sigma, 0.0, false);
        break;
    case SW_DIST_BETA:
    case SW_DIST_Q_BETA:
        fill_number(c, v, path, "a", &p->a, 0.0, true);
        fill_number(c, v, path, "b", &p->b, 0.0, true);
        break;
    default:
        fill_range(c, p, v, path);
    }
    if (q && fill_number(c, v, path, "q", &p->q, 0.0, true))
        p->q_int = q->type == SW_INT;
}

/* The distribution a parameter declares, or the one W&B infers from its
 * keys; NULL (with the problems recorded) when there is none. */
static const dist_info *infer_dist(ctx *c, const sw_value *v, const char *path)
{
    const sw_value *mn = sw_value_map_get(v, "min");
    const sw_value *mx = sw_value_map_get(v, "max");
    bool unknown = false;
    size_t i;
    char *kp;

    if (sw_value_map_get(v, "value"))
        return find_dist("constant");
    if (sw_value_map_get(v, "values"))
        return find_dist(sw_value_map_get(v, "probabilities")
                             ? "categorical_w_probabilities"
                             : "categorical");
    if (mn && mx)
        return find_dist(mn->type == SW_INT && mx->type == SW_INT
                             ? "int_uniform"
                             : "uniform");
    for (i = 0; i < v->u.map.len; i++) {
        if (has_word(ALL_PARAM_KEYS, v->u.map.keys[i]))
            continue;
        kp = join(path, v->u.map.keys[i]);
        unknown_key_in(c, v->u.map.keys[i], v->u.map.vals[i], kp,
                       ALL_PARAM_KEYS);
        free(kp);
        unknown = true;
    }
    if (unknown)
        return NULL;
    if (mn || mx)
        err(c, v, path, "%s is missing: min and max go together",
            mn ? "max" : "min");
    else if (v->u.map.len)
        err(c, v, path,
            "needs a distribution: W&B infers only constant "
            "(value), categorical (values) and int_uniform or uniform "
            "(min and max)");
    else
        err(c, v, path,
            "needs value, values, or min and max (or a "
            "distribution)");
    return NULL;
}

static const dist_info *param_dist(ctx *c, const sw_value *v, const char *path)
{
    const sw_value *d = sw_value_map_get(v, "distribution");
    const dist_info *info = NULL;
    sw_buf words = SW_BUF_INIT, list = SW_BUF_INIT;
    char *dp, *near;
    size_t i;

    if (!d)
        return infer_dist(c, v, path);
    dp = join(path, "distribution");
    if (want(c, d, dp, SW_STR) && !(info = find_dist(d->u.s))) {
        for (i = 0; i < N_DISTS; i++) {
            sw_buf_printf(&words, "%s%s", i ? " " : "", dists[i].name);
            sw_buf_printf(&list, "%s%s", i ? ", " : "", dists[i].name);
        }
        near = closest(d->u.s, sw_buf_cstr(&words));
        if (near)
            err(c, d, dp, "unknown distribution '%s' (did you mean '%s'?)",
                d->u.s, near);
        else
            err(c, d, dp, "unknown distribution '%s' (expected one of: %s)",
                d->u.s, sw_buf_cstr(&list));
        free(near);
    }
    sw_buf_dispose(&words);
    sw_buf_dispose(&list);
    free(dp);
    return info;
}

/* "a b c" -> "a, b, c". */
static void comma_list(sw_buf *out, const char *words)
{
    size_t n;

    for (; *words; words += n + (words[n] == ' ')) {
        n = strcspn(words, " ");
        sw_buf_printf(out, "%s%.*s", out->len ? ", " : "", (int)n, words);
    }
}

/* True when every word of `words` is a key of `map`. */
static bool has_all(const sw_value *map, const char *words)
{
    char *copy = sw_strdup(words), *w, *save = NULL;
    bool all = true;

    for (w = strtok_r(copy, " ", &save); w && all;
         w = strtok_r(NULL, " ", &save))
        all = sw_value_map_get(map, w) != NULL;
    free(copy);
    return all;
}

/* The keys of a leaf parameter: each must belong to its distribution, and
 * the required ones must be there. */
static void check_leaf_keys(ctx *c, const sw_value *v, const char *path,
                            const dist_info *d)
{
    sw_buf allowed = SW_BUF_INIT, required = SW_BUF_INIT;
    const char *k;
    char *kp;
    size_t i;

    comma_list(&allowed, d->keys);
    comma_list(&required, d->required);
    for (i = 0; i < v->u.map.len; i++) {
        k = v->u.map.keys[i];
        if (strcmp(k, "distribution") == 0 || has_word(d->keys, k))
            continue;
        kp = join(path, k);
        if (strcmp(k, "probabilities") == 0)
            err(c, v->u.map.vals[i], kp,
                "needs distribution "
                "categorical_w_probabilities, or none (as in W&B)");
        else if (has_word(ALL_PARAM_KEYS, k))
            err(c, v->u.map.vals[i], kp, "%s parameters take only %s", d->name,
                sw_buf_cstr(&allowed));
        else
            unknown_key_in(c, k, v->u.map.vals[i], kp, d->keys);
        free(kp);
    }
    if (!has_all(v, d->required))
        err(c, v, path, "%s parameters need %s", d->name,
            sw_buf_cstr(&required));
    sw_buf_dispose(&allowed);
    sw_buf_dispose(&required);
}

static void check_leaf(ctx *c, const sw_value *v, const char *path,
                       const param_path *pp)
{
    const dist_info *d = param_dist(c, v, path);
    sw_param *p;
    char *dp;

    if (!d)
        return;
    check_leaf_keys(c, v, path, d);
    p = new_param(c, v, pp);
    p->dist = d->dist;
    fill_leaf(c, p, v, path);
    if (p->dist == SW_DIST_LOG_UNIFORM || p->dist == SW_DIST_Q_LOG_UNIFORM ||
        p->dist == SW_DIST_INV_LOG_UNIFORM) {
        dp = join(path, "distribution");
        warn(c, sw_value_map_get(v, "distribution"), dp,
             "%s takes exponents of e as min and max; W&B deprecates it "
             "for %s_values, which takes the values themselves",
             d->name, d->name);
        free(dp);
    }
}

static void check_params(ctx *c, const sw_value *map, const char *path,
                         param_path *pp);

static void check_param(ctx *c, const sw_value *v, const char *path,
                        param_path *pp)
{
    const sw_value *nested;
    char *np;
    size_t i;

    if (!want(c, v, path, SW_MAP))
        return;
    nested = sw_value_map_get(v, "parameters");
    if (!nested) {
        check_leaf(c, v, path, pp);
        return;
    }
    for (i = 0; i < v->u.map.len; i++) { /* in document order */
        np = join(path, v->u.map.keys[i]);
        if (v->u.map.vals[i] == nested)
            check_params(c, nested, np, pp);
        else
            err(c, v->u.map.vals[i], np,
                "a parameter with nested parameters takes no other key");
        free(np);
    }
}

static void param_key(ctx *c, const char *key, const sw_value *v,
                      const char *path, void *arg)
{
    param_path *pp = arg;

    if (!valid_name(key)) {
        err(c, v, path,
            "a parameter name must match "
            "[A-Za-z_][A-Za-z0-9_.-]* (W&B's rule)");
        return;
    }
    if (pp->depth == MAX_PARAM_DEPTH) {
        err(c, v, path, "parameters nested too deep");
        return;
    }
    pp->comps[pp->depth++] = key;
    check_param(c, v, path, pp);
    pp->depth--;
}

static void check_params(ctx *c, const sw_value *map, const char *path,
                         param_path *pp)
{
    if (!want(c, map, path, SW_MAP))
        return;
    if (map->u.map.len == 0) {
        err(c, map, path, "must declare at least one parameter");
        return;
    }
    each_key(c, map, path, param_key, pp);
}

/* W&B's order: keys sorted at every level, depth first. */
static int param_cmp(const void *a, const void *b)
{
    const sw_param *x = a, *y = b;
    size_t i;
    int r;

    for (i = 0; i < x->depth && i < y->depth; i++)
        if ((r = strcmp(x->path[i], y->path[i])) != 0)
            return r;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* Top-level keys ------------------------------------------------------ */

typedef void (*top_fn)(ctx *c, const sw_value *v, const char *path);

static void top_program(ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->program);
}

static void top_name(ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->name);
}

static void top_description(ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->description);
}

static void top_project(ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->project);
}

static void top_entity(ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->entity);
}

/* W&B keys that mean nothing to sweep: checked for type, then ignored. */
static void top_ignored(ctx *c, const sw_value *v, const char *path)
{
    want(c, v, path, SW_STR);
}

static void top_kind(ctx *c, const sw_value *v, const char *path)
{
    static const char *const kinds[] = {"sweep", NULL};

    want_enum(c, v, path, "kind", kinds);
}

static void controller_key(ctx *c, const char *key, const sw_value *v,
                           const char *path, void *arg)
{
    static const char *const types[] = {"local", "cloud", NULL};

    (void)arg;
    if (strcmp(key, "type") == 0)
        want_enum(c, v, path, "controller type", types);
    else
        unknown_key_in(c, key, v, path, "type");
}

static void top_controller(ctx *c, const sw_value *v, const char *path)
{
    if (!want(c, v, path, SW_MAP))
        return;
    each_key(c, v, path, controller_key, NULL);
    if (!sw_value_map_get(v, "type"))
        err(c, v, path, "needs a type (local or cloud)");
}

static void top_unsupported(ctx *c, const sw_value *v, const char *path)
{
    if (strcmp(path, "metrics") == 0)
        err(c, v, path,
            "several metrics (W&B's custom method) are not "
            "supported by sweep; use metric");
    else
        err(c, v, path, "W&B's launch scheduler is not supported by sweep");
}

static void top_method(ctx *c, const sw_value *v, const char *path)
{
    size_t i;
    const char *m;

    if (v->type == SW_STR && strcmp(v->u.s, "custom") == 0) {
        err(c, v, path, "W&B's custom method is not supported by sweep");
        return;
    }
    m = want_enum(c, v, path, "method", method_names);
    for (i = 0; m && method_names[i]; i++)
        if (strcmp(m, method_names[i]) == 0)
            c->spec->method = (sw_method)i;
}

static void top_parameters(ctx *c, const sw_value *v, const char *path)
{
    param_path pp;

    pp.depth = 0;
    check_params(c, v, path, &pp);
}

static void metric_key(ctx *c, const char *key, const sw_value *v,
                       const char *path, void *arg)
{
    static const char *const goals[] = {"minimize", "maximize", NULL};
    static const char *const imputes[] = {"latest", "best", "worst", NULL};
    static const char *const running[] = {"latest", "best", "worst", "false",
                                          NULL};
    sw_metric *m = &c->spec->metric;
    const char *s;

    (void)arg;
    if (strcmp(key, "name") == 0) {
        set_str(c, v, path, &m->name);
    } else if (strcmp(key, "goal") == 0) {
        if ((s = want_enum(c, v, path, "goal", goals)) != NULL)
            m->goal = s[1] == 'a' ? SW_GOAL_MAXIMIZE : SW_GOAL_MINIMIZE;
    } else if (strcmp(key, "target") == 0) {
        m->has_target = want_number(c, v, path, &m->target);
    } else if (strcmp(key, "impute") == 0) {
        if ((s = want_enum(c, v, path, "impute", imputes)) != NULL)
            m->impute = sw_strdup(s);
    } else if (strcmp(key, "impute_while_running") == 0) {
        if (v->type == SW_BOOL && !v->u.b) /* `false` read as a bool */
            s = "false";
        else
            s = want_enum(c, v, path, "impute_while_running", running);
        if (s)
            m->impute_while_running = sw_strdup(s);
    } else {
        unknown_key_in(c, key, v, path,
                       "name goal target impute impute_while_running");
    }
}

static void top_metric(ctx *c, const sw_value *v, const char *path)
{
    if (!want(c, v, path, SW_MAP))
        return;
    each_key(c, v, path, metric_key, NULL);
    if (!sw_value_map_get(v, "name"))
        err(c, v, path, "needs a name: the metric to optimize");
}

/* Hyperband's s: W&B takes a number; it counts brackets, so an integral
 * one. */
static void et_s(ctx *c, const sw_value *v, const char *path, int64_t *s)
{
    double d;

    if (!want_number(c, v, path, &d))
        return;
    if (d < 0 || d > 1e9 || d != floor(d))
        err(c, v, path, "must be a whole number, at least 0");
    else
        *s = (int64_t)d;
}

static void et_key(ctx *c, const char *key, const sw_value *v, const char *path,
                   void *arg)
{
    static const char *const types[] = {"hyperband", NULL};
    sw_early_terminate *et = &c->spec->early_terminate;
    const char *s;

    (void)arg;
    if (strcmp(key, "type") == 0) {
        if ((s = want_enum(c, v, path, "early_terminate type", types)))
            et->type = sw_strdup(s);
    } else if (strcmp(key, "min_iter") == 0) {
        want_int(c, v, path, 1, &et->min_iter);
    } else if (strcmp(key, "max_iter") == 0) {
        want_int(c, v, path, 1, &et->max_iter);
    } else if (strcmp(key, "s") == 0) {
        et_s(c, v, path, &et->s);
    } else if (strcmp(key, "eta") == 0) {
        if (want_number(c, v, path, &et->eta) && !(et->eta > 1.0))
            err(c, v, path, "must be greater than 1");
    } else if (strcmp(key, "strict") == 0) {
        if (want(c, v, path, SW_BOOL))
            et->strict = v->u.b;
    } else {
        unknown_key_in(c, key, v, path,
                       "type min_iter max_iter s eta "
                       "strict");
    }
}

static void top_early_terminate(ctx *c, const sw_value *v, const char *path)
{
    if (!want(c, v, path, SW_MAP))
        return;
    each_key(c, v, path, et_key, NULL);
    if (!sw_value_map_get(v, "type"))
        err(c, v, path, "needs a type (hyperband)");
    else if (!sw_value_map_get(v, "min_iter") &&
             !(sw_value_map_get(v, "max_iter") && sw_value_map_get(v, "s")))
        err(c, v, path, "hyperband needs min_iter, or max_iter and s");
}

/* W&B renders each token with str(), so any value is a token. */
static void top_command(ctx *c, const sw_value *v, const char *path)
{
    sw_spec *spec = c->spec;
    size_t i;

    if (!want(c, v, path, SW_LIST))
        return;
    if (v->u.list.len == 0) {
        err(c, v, path,
            "must not be empty (leave it out for W&B's "
            "default command)");
        return;
    }
    spec->command = sw_calloc(v->u.list.len, sizeof(char *));
    for (i = 0; i < v->u.list.len; i++)
        spec->command[i] = sw_value_to_py(v->u.list.items[i]);
    spec->n_command = v->u.list.len;
}

static void top_run_cap(ctx *c, const sw_value *v, const char *path)
{
    want_int(c, v, path, 1, &c->spec->run_cap);
}

static void top_parallel(ctx *c, const sw_value *v, const char *path)
{
    want_int(c, v, path, 1, &c->spec->parallel);
}

static void top_retries(ctx *c, const sw_value *v, const char *path)
{
    want_int(c, v, path, 0, &c->spec->retries);
}

static void top_timeout(ctx *c, const sw_value *v, const char *path)
{
    if (want_number(c, v, path, &c->spec->timeout) && !(c->spec->timeout > 0))
        err(c, v, path, "must be a number of seconds greater than 0");
}

/* Where trials run: the work tree as it is (default), or a checkout of
 * the code recorded at sweep start (docs/provenance.md). */
static void top_code(ctx *c, const sw_value *v, const char *path)
{
    static const char *const modes[] = {"worktree", "snapshot", NULL};
    const char *m = want_enum(c, v, path, "code mode", modes);

    c->spec->code_snapshot = m && strcmp(m, "snapshot") == 0;
}

static void top_seed(ctx *c, const sw_value *v, const char *path)
{
    int64_t seed;

    if (want_int(c, v, path, 0, &seed)) {
        c->spec->has_seed = true;
        c->spec->seed = (uint64_t)seed;
    }
}

/* "10GB", "512 MiB", "1.5g": megabytes, in binary units as nvidia-smi
 * counts them (10GB = 10240 MB). */
static bool parse_memory(const char *s, double *mb)
{
    static const struct {
        const char *unit;
        double mb;
    } units[] = {{"", 1},         {"m", 1},       {"mb", 1},
                 {"mib", 1},      {"g", 1024},    {"gb", 1024},
                 {"gib", 1024},   {"t", 1048576}, {"tb", 1048576},
                 {"tib", 1048576}};
    char *end;
    double x;
    size_t i;

    if (!((*s >= '0' && *s <= '9') || *s == '.'))
        return false;
    x = strtod(s, &end);
    while (*end == ' ')
        end++;
    for (i = 0; i < sizeof(units) / sizeof(*units); i++) {
        if (strcasecmp(end, units[i].unit) == 0) {
            *mb = x * units[i].mb;
            return true;
        }
    }
    return false;
}

static void gpu_memory(ctx *c, const sw_value *v, const char *path)
{
    double mb = 0;

    if (v->type == SW_STR) {
        if (!parse_memory(v->u.s, &mb)) {
            err(c, v, path,
                "must be a size such as 10GB or 512MB, or a "
                "number of MB");
            return;
        }
    } else if (!want_number(c, v, path, &mb)) {
        return;
    }
    if (!(mb >= 0 && mb < 9e15)) {
        err(c, v, path, "must be a size of at least 0 MB");
        return;
    }
    c->spec->resources.gpu_memory_mb = (int64_t)ceil(mb);
}

static void resources_key(ctx *c, const char *key, const sw_value *v,
                          const char *path, void *arg)
{
    sw_resources *r = &c->spec->resources;

    (void)arg;
    if (strcmp(key, "gpus") == 0) {
        if (want_number(c, v, path, &r->gpus) && r->gpus < 0)
            err(c, v, path, "must be at least 0");
    } else if (strcmp(key, "gpu_memory") == 0) {
        gpu_memory(c, v, path);
    } else {
        unknown_key_in(c, key, v, path, "gpus gpu_memory");
    }
}

static void top_resources(ctx *c, const sw_value *v, const char *path)
{
    if (want(c, v, path, SW_MAP))
        each_key(c, v, path, resources_key, NULL);
}

static const struct {
    const char *key;
    top_fn fn;
} top_keys[] = {
    {"program", top_program},
    {"method", top_method},
    {"metric", top_metric},
    {"parameters", top_parameters},
    {"early_terminate", top_early_terminate},
    {"command", top_command},
    {"run_cap", top_run_cap},
    {"name", top_name},
    {"description", top_description},
    {"project", top_project},
    {"entity", top_entity},
    /* W&B's, accepted and ignored */
    {"controller", top_controller},
    {"job", top_ignored},
    {"image_uri", top_ignored},
    {"apiVersion", top_ignored},
    {"kind", top_kind},
    {"metrics", top_unsupported},
    {"scheduler", top_unsupported},
    /* sweep's extensions */
    {"parallel", top_parallel},
    {"retries", top_retries},
    {"timeout", top_timeout},
    {"seed", top_seed},
    {"resources", top_resources},
    {"code", top_code},
};

#define N_TOP_KEYS (sizeof(top_keys) / sizeof(*top_keys))

static void top_key(ctx *c, const char *key, const sw_value *v,
                    const char *path, void *arg)
{
    sw_buf words = SW_BUF_INIT;
    size_t i;

    (void)arg;
    for (i = 0; i < N_TOP_KEYS; i++) {
        if (strcmp(key, top_keys[i].key) == 0) {
            top_keys[i].fn(c, v, path);
            sw_buf_dispose(&words);
            return;
        }
        sw_buf_printf(&words, "%s%s", i ? " " : "", top_keys[i].key);
    }
    {
        char *near = closest(key, sw_buf_cstr(&words));

        if (near)
            err(c, v, path, "unknown key (did you mean '%s'?)", near);
        else
            err(c, v, path, "unknown key");
        free(near);
    }
    sw_buf_dispose(&words);
}

/* What must be there, and what the method and stopping rule need. */
static void check_required(ctx *c, const sw_value *doc)
{
    const sw_value *method = sw_value_map_get(doc, "method");
    const sw_value *et = sw_value_map_get(doc, "early_terminate");
    bool metric = sw_value_map_get(doc, "metric") != NULL;

    if (!method)
        err(c, doc, "method",
            "missing: a sweep needs a method (grid, "
            "random, bayes, tpe or sobol)");
    if (!sw_value_map_get(doc, "parameters"))
        err(c, doc, "parameters", "missing: a sweep needs parameters");
    if (method && method->type == SW_STR && !metric &&
        (c->spec->method == SW_METHOD_BAYES ||
         c->spec->method == SW_METHOD_TPE))
        err(c, method, "method", "%s needs a metric to optimize",
            method->u.s);
    if (et && !metric)
        err(c, et, "early_terminate", "needs a metric to compare runs by");
}

void sw_spec__build(sw_spec *spec, const sw_spec__keys *keys, sw_diags *diags)
{
    ctx c = {spec, diags, keys, 0, NULL, NULL, 0};
    const sw_value *doc = spec->doc;
    sw_buf b = SW_BUF_INIT;

    spec->metric.goal = SW_GOAL_MINIMIZE;
    spec->early_terminate.eta = 3.0;
    spec->early_terminate.strict = true;
    if (!doc || doc->type == SW_NULL) {
        sw_diags_add(diags, false, doc ? doc->line : 0, doc ? doc->col : 0,
                     NULL, "the sweep file is empty");
        return;
    }
    if (doc->type != SW_MAP) {
        describe(&b, doc);
        sw_diags_add(diags, false, doc->line, doc->col, NULL,
                     "a sweep file must be a mapping (method: ..., "
                     "parameters: ...), not %s",
                     sw_buf_cstr(&b));
        sw_buf_dispose(&b);
        return;
    }
    each_key(&c, doc, "", top_key, NULL);
    check_required(&c, doc);
    free(c.lines);
    free(c.ascii);
    if (spec->n_params > 1)
        qsort(spec->params, spec->n_params, sizeof(*spec->params), param_cmp);
}

/* The spec --------------------------------------------------------------- */

static void param_dispose(sw_param *p)
{
    size_t i;

    for (i = 0; i < p->depth; i++)
        free(p->path[i]);
    free(p->path);
    free(p->name);
    sw_value_free(p->value);
    for (i = 0; i < p->n_values; i++)
        sw_value_free(p->values[i]);
    free(p->values);
    free(p->probs);
}

void sw_spec_free(sw_spec *spec)
{
    size_t i;

    if (!spec)
        return;
    for (i = 0; i < spec->n_params; i++)
        param_dispose(&spec->params[i]);
    free(spec->params);
    for (i = 0; i < spec->n_command; i++)
        free(spec->command[i]);
    free(spec->command);
    free(spec->file);
    free(spec->source);
    sw_value_free(spec->doc);
    free(spec->program);
    free(spec->name);
    free(spec->description);
    free(spec->project);
    free(spec->entity);
    free(spec->metric.name);
    free(spec->metric.impute);
    free(spec->metric.impute_while_running);
    free(spec->early_terminate.type);
    free(spec);
}

sw_value *sw_spec_nest(const sw_spec *spec, sw_value **values)
{
    sw_value *root = sw_value_map(), *m, *next, *val;
    const sw_param *p;
    size_t i, d;

    for (i = 0; i < spec->n_params; i++) {
        p = &spec->params[i];
        val = values[i] ? values[i] : sw_value_null();
        values[i] = NULL;
        for (m = root, d = 0; d + 1 < p->depth; d++, m = next) {
            next = sw_value_map_get(m, p->path[d]);
            if (!next || next->type != SW_MAP) {
                next = sw_value_map();
                sw_value_map_set(m, p->path[d], next);
            }
        }
        sw_value_map_set(m, p->path[p->depth - 1], val);
    }
    return root;
}
