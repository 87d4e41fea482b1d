/*
 * spec.c - what a sweep file means: the validator that turns the loaded
 * document into an sw_spec. This half checks the top level (method,
 * metric, early_terminate, command, the W&B keys sweep ignores and sweep's
 * extensions) and owns the validation context that params.c, the other
 * half, shares through spec_internal.h: where a value was written, how a
 * problem is reported there, and the type checks.
 *
 * The rules are W&B's (sweeps/config/schema.json and schema.py, as read
 * with yaml.safe_load), so every valid W&B sweep config is valid here with
 * the same meaning, plus sweep's extension keys. Validation never stops at
 * the first problem: each one is recorded in the diags, located at the key
 * (or list item) at fault, in document order.
 */
#include "sweeps/spec.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sweeps/gpus.h"
#include "sweeps/spec_internal.h"
#include "sweeps/yaml11.h"

/* Indexed by sw_method, in its order; NULL-terminated for want_enum. */
static const char *const method_names[] = {"grid",  "random", "bayes", "tpe",
                                           "sobol", "pbt",    NULL};

const char *sw_method_name(sw_method m)
{
    return (unsigned)m < SW_METHOD__COUNT ? method_names[m] : "unknown";
}

int sw_spec__key_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const sw_spec__key *)a)->val;
    uintptr_t y = (uintptr_t)((const sw_spec__key *)b)->val;

    return x < y ? -1 : x > y;
}

/* Validation context ------------------------------------------------- */

/* Where a problem with `v` is shown: at its key when it has one. */
void sw_spec__where(const sw_spec__ctx *c, const sw_value *v, int *line,
                    int *col)
{
    sw_spec__key k = {v, 0, 0};
    const sw_spec__key *found = NULL;

    if (c->keys->len)
        found = bsearch(&k, c->keys->items, c->keys->len, sizeof(k),
                        sw_spec__key_cmp);
    *line = found ? found->line : v->line;
    *col = found ? found->col : v->col;
}

static void report(sw_spec__ctx *c, bool warning, const sw_value *at,
                   bool at_value, const char *path, const char *fmt, va_list ap)
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
        sw_spec__where(c, at, &line, &col);
    }
    sw_diags_add(c->diags, warning, line, col, path, "%s", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

/* An error about `at`, shown at its key. */
void sw_spec__err(sw_spec__ctx *c, const sw_value *at, const char *path,
                  const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, false, at, false, path, fmt, ap);
    va_end(ap);
}

/* A warning about the value `at` itself (not its key). */
void sw_spec__warn_value(sw_spec__ctx *c, const sw_value *at, const char *path,
                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, true, at, true, path, fmt, ap);
    va_end(ap);
}

void sw_spec__warn(sw_spec__ctx *c, const sw_value *at, const char *path,
                   const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report(c, true, at, false, path, fmt, ap);
    va_end(ap);
}

char *sw_spec__join(const char *path, const char *key)
{
    return path[0] ? sw_aprintf("%s.%s", path, key) : sw_strdup(key);
}

static void index_lines(sw_spec__ctx *c)
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
        if (!s[i]) {
            c->src_end = i;
            break;
        }
        if ((unsigned char)s[i] >= 0x80)
            c->ascii[c->n_lines - 1] = false;
    }
}

/* The length of line `k` (0-based), without its newline. */
static size_t line_len(const sw_spec__ctx *c, size_t k)
{
    size_t end = k + 1 < c->n_lines ? c->lines[k + 1] - 1 : c->src_end;

    return end - c->lines[k];
}

/* The source text where `v` was written, or "" when unknown. Constant
 * time on an ASCII line; on another, the walk to the column starts where
 * the last one on that line ended, so the items of a long one-line list,
 * asked for in order, cost linear time in all. */
const char *sw_spec__source_at(sw_spec__ctx *c, const sw_value *v)
{
    const char *s, *line;
    int col = 1;

    if (!c->spec->source || v->line <= 0)
        return "";
    if (!c->lines)
        index_lines(c);
    if ((size_t)v->line > c->n_lines)
        return "";
    line = c->spec->source + c->lines[v->line - 1];
    if (c->ascii[v->line - 1])
        return (size_t)v->col - 1 <= line_len(c, (size_t)v->line - 1)
                   ? line + v->col - 1
                   : "";
    s = line;
    if (c->at && c->at_line == v->line && c->at_col <= v->col) {
        s = c->at;
        col = c->at_col;
    }
    for (; *s && col < v->col; s++)
        col += ((unsigned char)s[1] & 0xC0) != 0x80;
    c->at = s;
    c->at_line = v->line;
    c->at_col = col;
    return s;
}

/* True when `v` was written as a plain scalar (no quotes, tag or anchor):
 * then YAML 1.1 decided its type, perhaps not as the user meant. */
bool sw_spec__written_plain(sw_spec__ctx *c, const sw_value *v)
{
    const char *s = sw_spec__source_at(c, v);

    return *s && !strchr("'\"!&*|>", *s);
}

/* Types --------------------------------------------------------------- */

void sw_spec__describe(sw_buf *b, const sw_value *v)
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
static void wrong_type(sw_spec__ctx *c, const sw_value *v, const char *path,
                       const char *what)
{
    sw_buf b = SW_BUF_INIT;
    char *fix;

    if (v->type == SW_STR && sw_spec__written_plain(c, v) &&
        sw_yaml11__looks_numeric(v->u.s) &&
        (fix = sw_yaml11__float_spelling(v->u.s)) != NULL) {
        sw_spec__err(
            c, v, path,
            "must be %s; %s is read as a string (YAML 1.1, as W&B reads "
            "it): write %s",
            what, v->u.s, fix);
        free(fix);
        return;
    }
    sw_spec__describe(&b, v);
    sw_spec__err(c, v, path, "must be %s, not %s", what, sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

bool sw_spec__want(sw_spec__ctx *c, const sw_value *v, const char *path,
                   sw_type t)
{
    static const char *const names[] = {"null",     "a boolean", "an integer",
                                        "a number", "a string",  "a list",
                                        "a mapping"};

    if (v->type == t || (t == SW_FLOAT && v->type == SW_INT))
        return true;
    wrong_type(c, v, path, names[t]);
    return false;
}

bool sw_spec__want_number(sw_spec__ctx *c, const sw_value *v, const char *path,
                          double *out)
{
    if (!sw_spec__want(c, v, path, SW_FLOAT))
        return false;
    sw_value_number(v, out);
    if (isfinite(*out))
        return true;
    sw_spec__err(c, v, path, "must be a finite number");
    return false;
}

/* An integer >= lo. */
static bool want_int(sw_spec__ctx *c, const sw_value *v, const char *path,
                     int64_t lo, int64_t *out)
{
    if (!sw_spec__want(c, v, path, SW_INT))
        return false;
    if (v->u.i < lo) {
        sw_spec__err(c, v, path, "must be at least %lld", (long long)lo);
        return false;
    }
    *out = v->u.i;
    return true;
}

/* An integer >= lo where W&B's schema says "integer": JSON Schema (Draft
 * 7, as W&B validates) counts an integral float such as 2.0 as one. A
 * float past int64 is taken as the largest int64. */
static bool want_schema_int(sw_spec__ctx *c, const sw_value *v,
                            const char *path, int64_t lo, int64_t *out)
{
    double f;

    if (v->type != SW_FLOAT)
        return want_int(c, v, path, lo, out);
    f = v->u.f;
    if (!isfinite(f) || f != floor(f)) {
        wrong_type(c, v, path, "an integer");
        return false;
    }
    if (f < (double)lo) {
        sw_spec__err(c, v, path, "must be at least %lld", (long long)lo);
        return false;
    }
    *out = f < 0x1.0p63 ? (int64_t)f : INT64_MAX;
    return true;
}

/* A string from an allowed list ("a|b|c"); NULL when not. */
static const char *want_enum(sw_spec__ctx *c, const sw_value *v,
                             const char *path, const char *what,
                             const char *const *allowed)
{
    sw_buf b = SW_BUF_INIT;
    size_t i, n;

    if (!sw_spec__want(c, v, path, SW_STR))
        return NULL;
    for (n = 0; allowed[n]; n++)
        if (strcmp(v->u.s, allowed[n]) == 0)
            return allowed[n];
    for (i = 0; i < n; i++)
        sw_buf_printf(&b, "%s%s", i ? (i + 1 < n ? ", " : " or ") : "",
                      allowed[i]);
    sw_spec__err(c, v, path, "unknown %s '%s' (expected %s)", what, v->u.s,
                 sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return NULL;
}

static void set_str(sw_spec__ctx *c, const sw_value *v, const char *path,
                    char **dst)
{
    if (sw_spec__want(c, v, path, SW_STR)) {
        free(*dst);
        *dst = sw_strdup(v->u.s);
    }
}

void sw_spec__each_key(sw_spec__ctx *c, const sw_value *map, const char *path,
                       sw_spec__key_fn fn, void *arg)
{
    size_t i;
    char *p;

    for (i = 0; i < map->u.map.len; i++) {
        p = sw_spec__join(path, map->u.map.keys[i]);
        fn(c, map->u.map.keys[i], map->u.map.vals[i], p, arg);
        free(p);
    }
}

static void unknown_key(sw_spec__ctx *c, const sw_value *v, const char *path,
                        const char *allowed)
{
    sw_spec__err(c, v, path, "unknown key (expected one of: %s)", allowed);
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
char *sw_spec__closest(const char *key, const char *list)
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
void sw_spec__unknown_key_in(sw_spec__ctx *c, const char *key,
                             const sw_value *v, const char *path,
                             const char *list)
{
    char *near = sw_spec__closest(key, list);

    if (near)
        sw_spec__err(c, v, path, "unknown key (did you mean '%s'?)", near);
    else
        unknown_key(c, v, path, list);
    free(near);
}

/* Top-level keys ------------------------------------------------------ */

typedef void (*top_fn)(sw_spec__ctx *c, const sw_value *v, const char *path);

static void top_program(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->program);
}

static void top_name(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->name);
}

static void top_description(sw_spec__ctx *c, const sw_value *v,
                            const char *path)
{
    set_str(c, v, path, &c->spec->description);
}

static void top_project(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->project);
}

static void top_entity(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    set_str(c, v, path, &c->spec->entity);
}

/* W&B keys that mean nothing to sweep: checked for type, then ignored. */
static void top_ignored(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    sw_spec__want(c, v, path, SW_STR);
}

static void top_kind(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    static const char *const kinds[] = {"sweep", NULL};

    want_enum(c, v, path, "kind", kinds);
}

static void controller_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                           const char *path, void *arg)
{
    static const char *const types[] = {"local", "cloud", NULL};

    (void)arg;
    if (strcmp(key, "type") == 0)
        want_enum(c, v, path, "controller type", types);
    else
        sw_spec__unknown_key_in(c, key, v, path, "type");
}

static void top_controller(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    sw_spec__each_key(c, v, path, controller_key, NULL);
    if (!sw_value_map_get(v, "type"))
        sw_spec__err(c, v, path, "needs a type (local or cloud)");
}

static void top_unsupported(sw_spec__ctx *c, const sw_value *v,
                            const char *path)
{
    if (strcmp(path, "metrics") == 0)
        sw_spec__err(c, v, path,
                     "several metrics (W&B's custom method) are not "
                     "supported by sweep; use metric");
    else
        sw_spec__err(c, v, path,
                     "W&B's launch scheduler is not supported by sweep");
}

static void top_method(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    size_t i;
    const char *m;

    if (v->type == SW_STR && strcmp(v->u.s, "custom") == 0) {
        sw_spec__err(c, v, path,
                     "W&B's custom method is not supported by sweep");
        return;
    }
    m = want_enum(c, v, path, "method", method_names);
    for (i = 0; m && method_names[i]; i++)
        if (strcmp(m, method_names[i]) == 0)
            c->spec->method = (sw_method)i;
}

static void metric_key(sw_spec__ctx *c, const char *key, const sw_value *v,
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
        m->has_target = sw_spec__want_number(c, v, path, &m->target);
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
        sw_spec__unknown_key_in(c, key, v, path,
                                "name goal target impute impute_while_running");
    }
}

static void top_metric(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    sw_spec__each_key(c, v, path, metric_key, NULL);
    if (!sw_value_map_get(v, "name"))
        sw_spec__err(c, v, path, "needs a name: the metric to optimize");
}

/* Hyperband's s: W&B takes a number; it counts brackets, so an integral
 * one. */
static void et_s(sw_spec__ctx *c, const sw_value *v, const char *path,
                 int64_t *s)
{
    double d;

    if (!sw_spec__want_number(c, v, path, &d))
        return;
    if (d < 0 || d > 1e9 || d != floor(d))
        sw_spec__err(c, v, path, "must be a whole number, at least 0");
    else
        *s = (int64_t)d;
}

/* Which keys each stopping rule takes: a bit per sw_stop_rule. */
#define HB (1u << SW_STOP_HYPERBAND)
#define ASHA (1u << SW_STOP_ASHA)
#define MEDIAN (1u << SW_STOP_MEDIAN)

static const struct {
    const char *key;
    unsigned rules;
} et_keys[] = {
    {"type", HB | ASHA | MEDIAN},
    {"min_iter", HB | ASHA},
    {"max_iter", HB | ASHA},
    {"s", HB},
    {"eta", HB | ASHA},
    {"strict", HB},
    {"warmup", MEDIAN},
    {"min_runs", MEDIAN},
    {"grace", HB | ASHA | MEDIAN},
    {"promote", ASHA},
    {"brackets", ASHA},
    {"extrapolate", ASHA},
    {"drain", ASHA},
};

#define N_ET_KEYS (sizeof(et_keys) / sizeof(*et_keys))

/* Indexed by sw_stop_rule; NULL-terminated past the first for want_enum. */
static const char *const rule_names[] = {"none", "hyperband", "asha", "median",
                                         NULL};

/* The keys `rule` takes, space-separated, into `b`. */
static void et_keys_of(sw_buf *b, unsigned rules)
{
    size_t i;

    for (i = 0; i < N_ET_KEYS; i++)
        if (et_keys[i].rules & rules)
            sw_buf_printf(b, "%s%s", b->len ? " " : "", et_keys[i].key);
}

/* Whether `key` is one of early_terminate's; reports it when it is not,
 * or when the rule (known from `type`, else any) does not take it. */
static bool et_known(sw_spec__ctx *c, const char *key, const sw_value *v,
                     const char *path, sw_stop_rule rule)
{
    unsigned want = rule ? 1u << rule : HB | ASHA | MEDIAN;
    sw_buf b = SW_BUF_INIT;
    size_t i;

    for (i = 0; i < N_ET_KEYS && strcmp(et_keys[i].key, key) != 0; i++)
        ;
    if (i < N_ET_KEYS && (et_keys[i].rules & want))
        return true;
    et_keys_of(&b, want);
    if (i == N_ET_KEYS)
        sw_spec__unknown_key_in(c, key, v, path, sw_buf_cstr(&b));
    else
        sw_spec__err(c, v, path, "%s does not take %s (its keys: %s)",
                     rule_names[rule], key, sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return false;
}

/* A whole number of iterations or runs, at least `lo`. */
static void et_count(sw_spec__ctx *c, const sw_value *v, const char *path,
                     int64_t lo, int64_t *out)
{
    if (sw_spec__want(c, v, path, SW_INT) && v->u.i < lo)
        sw_spec__err(c, v, path, "must be at least %lld", (long long)lo);
    else if (v->type == SW_INT)
        *out = v->u.i;
}

static void et_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                   const char *path, void *arg)
{
    sw_early_terminate *et = &c->spec->early_terminate;
    const char *s;

    if (!et_known(c, key, v, path, *(sw_stop_rule *)arg))
        return;
    if (strcmp(key, "type") == 0) {
        if ((s = want_enum(c, v, path, "early_terminate type", rule_names + 1)))
            et->type = sw_strdup(s);
    } else if (strcmp(key, "min_iter") == 0) {
        want_schema_int(c, v, path, 1, &et->min_iter);
    } else if (strcmp(key, "max_iter") == 0) {
        want_schema_int(c, v, path, 1, &et->max_iter);
    } else if (strcmp(key, "s") == 0) {
        et_s(c, v, path, &et->s);
    } else if (strcmp(key, "eta") == 0) {
        if (sw_spec__want_number(c, v, path, &et->eta) && !(et->eta > 1.0))
            sw_spec__err(c, v, path, "must be greater than 1");
    } else if (strcmp(key, "strict") == 0) {
        if (sw_spec__want(c, v, path, SW_BOOL))
            et->strict = v->u.b;
    } else if (strcmp(key, "warmup") == 0) {
        et_count(c, v, path, 0, &et->warmup);
    } else if (strcmp(key, "min_runs") == 0) {
        et_count(c, v, path, 1, &et->min_runs);
    } else if (strcmp(key, "promote") == 0) {
        if (sw_spec__want(c, v, path, SW_BOOL))
            et->promote = v->u.b;
    } else if (strcmp(key, "brackets") == 0) {
        et_count(c, v, path, 1, &et->brackets);
    } else if (strcmp(key, "extrapolate") == 0) {
        if (sw_spec__want(c, v, path, SW_BOOL))
            et->extrapolate = v->u.b;
    } else if (strcmp(key, "drain") == 0) {
        if (sw_spec__want(c, v, path, SW_BOOL))
            et->drain = v->u.b;
    } else if (strcmp(key, "grace") == 0) {
        if (sw_spec__want_number(c, v, path, &et->grace) && et->grace < 0)
            sw_spec__err(c, v, path, "must be a number of seconds, at least 0");
    }
}

/* The rule `type` names, or SW_STOP_NONE when it names none. */
static sw_stop_rule et_rule(const sw_value *type)
{
    sw_stop_rule r;

    for (r = SW_STOP_HYPERBAND; type && type->type == SW_STR && rule_names[r];
         r++)
        if (strcmp(type->u.s, rule_names[r]) == 0)
            return r;
    return SW_STOP_NONE;
}

/* Hyperband with max_iter and s: W&B's first band is max_iter / eta,
 * and with none (s 0, or max_iter < eta) it stops nothing. Valid for
 * W&B, so only a warning here. */
static void et_check_bands(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    const sw_early_terminate *et = &c->spec->early_terminate;

    if (et->max_iter > 0 && et->s >= 0 &&
        (et->s == 0 || (double)et->max_iter / et->eta < 1))
        sw_spec__warn(c, v, path,
                      "hyperband with max_iter %lld, s %lld and eta %g has "
                      "no band (the first is max_iter / eta, and s counts "
                      "them): it will stop no run",
                      (long long)et->max_iter, (long long)et->s, et->eta);
}

/* Brackets start at rungs, so there are at most as many as rungs; they
 * only mean something to promotion ASHA. */
static void et_check_brackets(sw_spec__ctx *c, const sw_value *v)
{
    const sw_early_terminate *et = &c->spec->early_terminate;
    const char *path = "early_terminate.brackets";
    int64_t rungs = 1;
    double it;

    if (!v || v->type != SW_INT)
        return;
    if (!et->promote) {
        sw_spec__err(c, v, path,
                     "brackets need promote: true (they start runs at "
                     "later rungs)");
        return;
    }
    for (it = (double)et->min_iter * et->eta; it < (double)et->max_iter;
         it *= et->eta)
        rungs++;
    if (et->brackets > rungs + 1)
        sw_spec__err(c, v, path,
                     "must be at most %lld, the number of rungs from "
                     "min_iter %lld to max_iter %lld by eta %g",
                     (long long)rungs + 1, (long long)et->min_iter,
                     (long long)et->max_iter, et->eta);
}

static void top_early_terminate(sw_spec__ctx *c, const sw_value *v,
                                const char *path)
{
    sw_early_terminate *et = &c->spec->early_terminate;
    sw_stop_rule rule;

    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    rule = et_rule(sw_value_map_get(v, "type"));
    sw_spec__each_key(c, v, path, et_key, &rule);
    et->rule = et->type ? rule : SW_STOP_NONE;
    if (!sw_value_map_get(v, "type"))
        sw_spec__err(c, v, path, "needs a type (hyperband, asha or median)");
    else if (rule == SW_STOP_HYPERBAND && !sw_value_map_get(v, "min_iter") &&
             !(sw_value_map_get(v, "max_iter") && sw_value_map_get(v, "s")))
        sw_spec__err(c, v, path, "hyperband needs min_iter, or max_iter and s");
    else if (rule == SW_STOP_HYPERBAND)
        et_check_bands(c, v, path);
    else if (rule == SW_STOP_ASHA && !sw_value_map_get(v, "min_iter"))
        sw_spec__err(c, v, path, "asha needs min_iter: its first rung");
    else if (rule == SW_STOP_ASHA && et->promote && !et->max_iter)
        sw_spec__err(c, v, path,
                     "asha with promote needs max_iter: the iteration a "
                     "promoted run trains to last");
    else if (rule == SW_STOP_ASHA && et->max_iter &&
             et->max_iter <= et->min_iter)
        sw_spec__err(c, sw_value_map_get(v, "max_iter"),
                     "early_terminate.max_iter",
                     "must be greater than min_iter (%lld), the first rung",
                     (long long)et->min_iter);
    else if (rule == SW_STOP_ASHA && et->extrapolate && !et->promote)
        sw_spec__err(c, sw_value_map_get(v, "extrapolate"),
                     "early_terminate.extrapolate",
                     "extrapolate needs promote: true (it ranks the runs "
                     "paused at a rung)");
    else if (rule == SW_STOP_ASHA && sw_value_map_get(v, "drain") &&
             !et->promote)
        sw_spec__err(c, sw_value_map_get(v, "drain"), "early_terminate.drain",
                     "drain needs promote: true (it promotes paused runs)");
    else if (rule == SW_STOP_ASHA)
        et_check_brackets(c, sw_value_map_get(v, "brackets"));
}

#undef HB
#undef ASHA
#undef MEDIAN

/* W&B renders each token with str(), so any value is a token. */
static void top_command(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    sw_spec *spec = c->spec;
    size_t i;

    if (!sw_spec__want(c, v, path, SW_LIST))
        return;
    if (v->u.list.len == 0) {
        sw_spec__err(c, v, path,
                     "must not be empty (leave it out for W&B's "
                     "default command)");
        return;
    }
    spec->command = sw_calloc(v->u.list.len, sizeof(char *));
    for (i = 0; i < v->u.list.len; i++)
        spec->command[i] = sw_value_to_py(v->u.list.items[i]);
    spec->n_command = v->u.list.len;
}

static void top_run_cap(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    want_schema_int(c, v, path, 1, &c->spec->run_cap);
}

static void top_parallel(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    want_int(c, v, path, 1, &c->spec->parallel);
}

static void top_retries(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    want_int(c, v, path, 0, &c->spec->retries);
}

static void top_timeout(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (sw_spec__want_number(c, v, path, &c->spec->timeout) &&
        !(c->spec->timeout > 0))
        sw_spec__err(c, v, path, "must be a number of seconds greater than 0");
}

/* A size at `path`: "1GiB", "512MiB" or a number of bytes; 0 says none
 * (*out: SW_LOG_UNLIMITED). */
static void want_size(sw_spec__ctx *c, const sw_value *v, const char *path,
                      int64_t *out)
{
    double mib = 0, bytes = 0;

    if (v->type == SW_STR && sw_gpus_parse_size(v->u.s, false, &mib))
        bytes = mib * 1048576.0;
    else if (v->type != SW_STR && sw_spec__want_number(c, v, path, &bytes))
        ;
    else if (v->type != SW_STR)
        return;
    else
        bytes = -1;
    if (!(bytes >= 0 && bytes < 9e18 && bytes == floor(bytes)))
        sw_spec__err(c, v, path,
                     "must be a size such as 1GiB or 512MiB, a whole "
                     "number of bytes, or 0 for no limit");
    else
        *out = bytes == 0 ? SW_LOG_UNLIMITED : (int64_t)bytes;
}

/* `log_limit`: the bytes each of a run's logs may hold; 0: none
 * (docs/sweep-file.md). */
static void top_log_limit(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    want_size(c, v, path, &c->spec->log_limit);
}

/* `metrics_backlog`: the most of an ended attempt's output left to read
 * for its @metrics lines; 0: no bound (docs/metrics.md). */
static void top_metrics_backlog(sw_spec__ctx *c, const sw_value *v,
                                const char *path)
{
    want_size(c, v, path, &c->spec->metrics_backlog);
}

/* Where trials run: the work tree as it is (default), or a checkout of
 * the code recorded at sweep start (docs/provenance.md). */
static void top_code(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    static const char *const modes[] = {"worktree", "snapshot", NULL};
    const char *m = want_enum(c, v, path, "code mode", modes);

    c->spec->code_snapshot = m && strcmp(m, "snapshot") == 0;
}

/* `multi_fidelity: false`: bayes and tpe fit on the ended runs' values
 * only, not on what the rungs showed (docs/search.md). */
static void top_multi_fidelity(sw_spec__ctx *c, const sw_value *v,
                               const char *path)
{
    if (sw_spec__want(c, v, path, SW_BOOL))
        c->spec->no_multi_fidelity = !v->u.b;
}

/* `sim:` (docs/simulation.md): how `--backend sim` simulates; ignored by
 * the other backends, so one file serves both. */
static void sim_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                    const char *path, void *arg)
{
    double *rate = &c->spec->sim_fail_rate, *secs;

    (void)arg;
    if (strcmp(key, "fail_rate") == 0) {
        if (sw_spec__want_number(c, v, path, rate) &&
            !(*rate >= 0 && *rate <= 1))
            sw_spec__err(c, v, path, "must be a probability from 0 to 1");
        return;
    }
    secs = strcmp(key, "startup") == 0      ? &c->spec->sim_startup
           : strcmp(key, "read_delay") == 0 ? &c->spec->sim_read_delay
                                            : NULL;
    if (!secs)
        sw_spec__unknown_key_in(c, key, v, path,
                                "fail_rate startup read_delay");
    else if (sw_spec__want_number(c, v, path, secs) &&
             !(*secs >= 0 && *secs <= 86400))
        sw_spec__err(c, v, path, "must be seconds from 0 to 86400");
}

static void top_sim(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (sw_spec__want(c, v, path, SW_MAP))
        sw_spec__each_key(c, v, path, sim_key, NULL);
}

static void top_seed(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    int64_t seed;

    if (want_int(c, v, path, 0, &seed)) {
        c->spec->has_seed = true;
        c->spec->seed = (uint64_t)seed;
    }
}

static const struct {
    const char *key;
    top_fn fn;
} top_keys[] = {
    {"program", top_program},
    {"method", top_method},
    {"metric", top_metric},
    {"parameters", sw_spec__top_parameters},
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
    {"log_limit", top_log_limit},
    {"metrics_backlog", top_metrics_backlog},
    {"seed", top_seed},
    {"resources", sw_spec__top_resources},
    {"gpus", sw_spec__top_gpus},
    {"slurm", sw_spec__top_slurm},
    {"code", top_code},
    {"multi_fidelity", top_multi_fidelity},
    {"sim", top_sim},
    {"budget", sw_spec__top_budget},
    {"pbt", sw_spec__top_pbt},
};

#define N_TOP_KEYS (sizeof(top_keys) / sizeof(*top_keys))

static void top_key(sw_spec__ctx *c, const char *key, const sw_value *v,
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
        char *near = sw_spec__closest(key, sw_buf_cstr(&words));

        if (near)
            sw_spec__err(c, v, path, "unknown key (did you mean '%s'?)", near);
        else
            sw_spec__err(c, v, path, "unknown key");
        free(near);
    }
    sw_buf_dispose(&words);
}

/* `multi_fidelity: true` where it can do nothing is worth a word. */
static void check_multi_fidelity(sw_spec__ctx *c, const sw_value *doc)
{
    const sw_value *mf = sw_value_map_get(doc, "multi_fidelity");
    const sw_spec *spec = c->spec;
    sw_stop_rule rule = spec->early_terminate.rule;

    if (!mf || mf->type != SW_BOOL || !mf->u.b)
        return;
    if (spec->method != SW_METHOD_BAYES && spec->method != SW_METHOD_TPE)
        sw_spec__warn(c, mf, "multi_fidelity",
                      "only bayes and tpe learn from rungs: it does "
                      "nothing for method %s",
                      sw_method_name(spec->method));
    else if (rule != SW_STOP_HYPERBAND && rule != SW_STOP_ASHA)
        sw_spec__warn(c, mf, "multi_fidelity",
                      "it needs rungs: early_terminate of type hyperband "
                      "or asha; it does nothing here");
}

/* What must be there, and what the method and stopping rule need. */
static void check_required(sw_spec__ctx *c, const sw_value *doc)
{
    const sw_value *method = sw_value_map_get(doc, "method");
    const sw_value *et = sw_value_map_get(doc, "early_terminate");
    bool metric = sw_value_map_get(doc, "metric") != NULL;

    if (!method)
        sw_spec__err(c, doc, "method",
                     "missing: a sweep needs a method (grid, "
                     "random, bayes, tpe, sobol or pbt)");
    if (!sw_value_map_get(doc, "parameters"))
        sw_spec__err(c, doc, "parameters", "missing: a sweep needs parameters");
    if (method && method->type == SW_STR && !metric &&
        (c->spec->method == SW_METHOD_BAYES ||
         c->spec->method == SW_METHOD_TPE || c->spec->method == SW_METHOD_PBT))
        sw_spec__err(c, method, "method", "%s needs a metric to optimize",
                     method->u.s);
    if (et && !metric)
        sw_spec__err(c, et, "early_terminate",
                     "needs a metric to compare runs by");
    check_multi_fidelity(c, doc);
}

/* What the method itself needs of the parameters: a grid enumerates
 * values, so it takes no continuous parameter, and no probabilities
 * (W&B refuses them too); bayes needs something to search (the bayes
 * search refuses a space of constants, and so does W&B's). The search
 * checks the same for specs made in memory. */
static void check_method(sw_spec__ctx *c, const sw_value *doc)
{
    const sw_spec *spec = c->spec;
    const sw_param *p;
    size_t i, searchable = 0;

    for (i = 0; i < spec->n_params; i++)
        searchable += spec->params[i].dist != SW_DIST_CONSTANT;
    if (spec->method == SW_METHOD_BAYES && searchable == 0)
        sw_spec__err(c, sw_value_map_get(doc, "parameters"), "parameters",
                     "bayes needs at least one parameter that is not a "
                     "constant (W&B refuses it too)");
    for (i = 0; spec->method == SW_METHOD_GRID && i < spec->n_params; i++) {
        p = &spec->params[i];
        if (!sw_dist_is_discrete(p->dist))
            sw_diags_add(c->diags, false, p->line, p->col, NULL,
                         "parameters.%s: grid search needs discrete values, "
                         "and %s is continuous (use values, int_uniform or "
                         "q_uniform)",
                         p->name, sw_dist_name(p->dist));
        else if (p->probs)
            sw_diags_add(c->diags, false, p->line, p->col, NULL,
                         "parameters.%s: grid search cannot use "
                         "probabilities (W&B refuses them too)",
                         p->name);
    }
}

void sw_spec__build(sw_spec *spec, const sw_spec__keys *keys, sw_diags *diags)
{
    sw_spec__ctx c = {.spec = spec, .diags = diags, .keys = keys};
    const sw_value *doc = spec->doc, *method;
    size_t errors = diags->errors;
    sw_buf b = SW_BUF_INIT;

    spec->metric.goal = SW_GOAL_MINIMIZE;
    spec->early_terminate.eta = 3.0;
    spec->early_terminate.strict = true;
    spec->early_terminate.brackets = 1;
    spec->early_terminate.drain = true;
    spec->early_terminate.s = -1;
    spec->early_terminate.min_runs = SW_STOP_DEFAULT_MIN_RUNS;
    spec->early_terminate.grace = SW_STOP_DEFAULT_GRACE;
    spec->pbt.quantile = SW_PBT_DEFAULT_QUANTILE;
    spec->pbt.resample_probability = SW_PBT_DEFAULT_RESAMPLE;
    spec->sim_startup = spec->sim_read_delay = -1;
    if (!doc || doc->type == SW_NULL) {
        sw_diags_add(diags, false, doc ? doc->line : 0, doc ? doc->col : 0,
                     NULL, "the sweep file is empty");
        return;
    }
    if (doc->type != SW_MAP) {
        sw_spec__describe(&b, doc);
        sw_diags_add(diags, false, doc->line, doc->col, NULL,
                     "a sweep file must be a mapping (method: ..., "
                     "parameters: ...), not %s",
                     sw_buf_cstr(&b));
        sw_buf_dispose(&b);
        return;
    }
    method = sw_value_map_get(doc, "method");
    c.grid =
        method && method->type == SW_STR && strcmp(method->u.s, "grid") == 0;
    sw_spec__each_key(&c, doc, "", top_key, NULL);
    check_required(&c, doc);
    sw_spec__check_pbt(&c, doc);
    if (spec->n_params > 1)
        qsort(spec->params, spec->n_params, sizeof(*spec->params),
              sw_spec__param_cmp);
    if (diags->errors == errors) /* the method and parameters are sound */
        check_method(&c, doc);
    free(c.lines);
    free(c.ascii);
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
    free(spec->pbt.factors);
    free(spec->gpus);
    for (i = 0; i < spec->n_slurm_args; i++)
        free(spec->slurm_args[i]);
    free(spec->slurm_args);
    free(spec);
}
