/*
 * params.c - the `parameters` of a sweep file: each parameter's form (a
 * leaf, or nested parameters), its distribution (declared, or inferred as
 * W&B infers it), the keys and values that distribution takes, and the
 * probabilities of categorical values; then the way back from one value
 * per leaf to the nested map a trial gets (sw_spec_nest).
 *
 * The other half of the validator in spec.c, whose context and reporting
 * helpers it uses (spec_internal.h). Parameters are checked in document
 * order but kept in W&B's order: keys sorted at every level, depth first.
 * Nested parameters become flat leaves with a path; repeated values of a
 * parameter are kept once, each with the sum of its probabilities.
 */
#include "sweeps/spec_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

const char *sw_dist_name(sw_dist d)
{
    return (unsigned)d < SW_DIST__COUNT ? dist_names[d] : "unknown";
}

bool sw_dist_is_discrete(sw_dist d)
{
    return d == SW_DIST_CONSTANT || d == SW_DIST_CATEGORICAL ||
           d == SW_DIST_INT_UNIFORM || d == SW_DIST_Q_UNIFORM;
}

/* Parameters ---------------------------------------------------------- */

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

static sw_param *new_param(sw_spec__ctx *c, const sw_value *v,
                           const param_path *pp)
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
    sw_spec__where(c, v, &p->line, &p->col);
    return p;
}

/* Warns about a plain scalar YAML 1.1 read otherwise than it looks. */
static void warn_scalar(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    const char *src;
    char *fix;

    if (!sw_spec__written_plain(c, v))
        return;
    if (v->type == SW_STR && sw_yaml11__looks_numeric(v->u.s)) {
        fix = sw_yaml11__float_spelling(v->u.s);
        sw_spec__warn_value(
            c, v, path,
            "read as the string '%s' (YAML 1.1, as W&B reads it); "
            "write %s for a number",
            v->u.s, fix ? fix : "it with a dot");
        free(fix);
    } else if (v->type == SW_BOOL) {
        src = sw_spec__source_at(c, v);
        if (sw_yaml11__word_bool(src, strspn(src, "yesnoYESNOfFO")))
            sw_spec__warn_value(
                c, v, path,
                "%.*s is read as the boolean %s (YAML 1.1, as W&B "
                "reads it); quote it for a string",
                (int)strspn(src, "yesnoYESNOfFO"), src,
                v->u.b ? "True" : "False");
    }
}

/* Checks the probabilities of `n` values; a new array, or NULL. */
static double *check_probs(sw_spec__ctx *c, const sw_value *pr,
                           const char *path, size_t n)
{
    double *probs, sum = 0.0;
    size_t i;
    bool ok = true;
    char *ip;

    if (!sw_spec__want(c, pr, path, SW_LIST))
        return NULL;
    if (pr->u.list.len != n) {
        sw_spec__err(c, pr, path,
                     "has %zu entries and values has %zu: they must "
                     "match one to one",
                     pr->u.list.len, n);
        return NULL;
    }
    probs = sw_calloc(n, sizeof(double));
    for (i = 0; i < n; i++) {
        ip = sw_aprintf("%s[%zu]", path, i);
        if (!sw_spec__want_number(c, pr->u.list.items[i], ip, &probs[i]))
            ok = false;
        else if (probs[i] < 0.0 || probs[i] > 1.0) {
            sw_spec__err(c, pr->u.list.items[i], ip, "must be between 0 and 1");
            ok = false;
        }
        sum += probs[i];
        free(ip);
    }
    /* numpy.isclose(sum, 1.0), as W&B checks it */
    if (ok && fabs(sum - 1.0) > 1e-8 + 1e-5) {
        sw_spec__err(c, pr, path, "must sum to 1, and they sum to %.10g", sum);
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

/* A value as W&B's grid hashes it at the top (yaml_hash): an integral
 * float is made an int first, so 1.0 is 1 there (True is not). True when
 * `v` is an integer then, in *out; past int64 a float stays a float. */
static bool grid_int(const sw_value *v, int64_t *out)
{
    if (v->type == SW_INT) {
        *out = v->u.i;
        return true;
    }
    if (v->type != SW_FLOAT || v->u.f != floor(v->u.f) ||
        !(v->u.f >= -0x1.0p63 && v->u.f < 0x1.0p63))
        return false;
    *out = (int64_t)v->u.f;
    return true;
}

/* Whether yaml.dump writes `a` and `b` alike: typed equality, but a float
 * is written with its sign (-0.0) and every NaN as .nan. */
static bool dump_equal(const sw_value *a, const sw_value *b)
{
    const sw_value *o;
    size_t i;

    if (a->type != b->type)
        return false;
    if (a->type == SW_FLOAT)
        return (isnan(a->u.f) && isnan(b->u.f)) ||
               (a->u.f == b->u.f && !signbit(a->u.f) == !signbit(b->u.f));
    if (a->type == SW_LIST && a->u.list.len == b->u.list.len) {
        for (i = 0; i < a->u.list.len; i++)
            if (!dump_equal(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    }
    if (a->type == SW_MAP && a->u.map.len == b->u.map.len) {
        for (i = 0; i < a->u.map.len; i++)
            if (!(o = sw_value_map_get(b, a->u.map.keys[i])) ||
                !dump_equal(a->u.map.vals[i], o))
                return false;
        return true;
    }
    return a->type != SW_LIST && a->type != SW_MAP && sw_value_equal(a, b);
}

/* Equality as W&B's grid sees it: equal yaml_hash. */
static bool grid_equal(const sw_value *a, const sw_value *b)
{
    int64_t x = 0, y = 0;
    bool ia = grid_int(a, &x), ib = grid_int(b, &y);

    if (ia || ib)
        return ia && ib && x == y;
    return dump_equal(a, b);
}

/* A hash that agrees with grid_equal (and value_hash elsewhere). */
static uint64_t grid_hash(const sw_value *v)
{
    int64_t i;

    if (grid_int(v, &i))
        return sw_hash(SW_HASH_SEED, &i, sizeof(i));
    return value_hash(v);
}

/* The index among p->values of a value equal to `item`, or n_values
 * after adding it. `slots` (a power of two, 0 for empty) finds them.
 * Equal is typed, or W&B's grid equality when `grid`. */
static size_t find_or_add(sw_param *p, size_t *slots, size_t mask,
                          const sw_value *item, bool grid)
{
    size_t i = (size_t)(grid ? grid_hash(item) : value_hash(item)) & mask;
    const sw_value *v;

    for (; slots[i]; i = (i + 1) & mask) {
        v = p->values[slots[i] - 1];
        if (grid ? grid_equal(v, item) : sw_value_equal(v, item))
            return slots[i] - 1;
    }
    slots[i] = p->n_values + 1;
    p->values[p->n_values++] = sw_value_clone(item);
    return p->n_values - 1;
}

/* A repeated value in a grid: W&B's grid keeps the value written last,
 * in the place of the first. */
static void grid_repeat(sw_spec__ctx *c, sw_param *p, size_t j,
                        const sw_value *item, const char *ip)
{
    char *was, *now;

    if (sw_value_equal(p->values[j], item)) {
        sw_spec__warn_value(c, item, ip,
                            "a repeated value: tried once (as in W&B's "
                            "grid)");
    } else {
        was = sw_value_to_py(p->values[j]);
        now = sw_value_to_py(item);
        sw_spec__warn_value(c, item, ip,
                            "equal to %s for W&B's grid (a whole float is "
                            "its integer there): tried once, in the first "
                            "one's place, as %s (written last)",
                            was, now);
        free(was);
        free(now);
    }
    sw_value_free(p->values[j]);
    p->values[j] = sw_value_clone(item);
}

/* Keeps one of equal values, in the first one's place; a repeated
 * value's probability goes there. Equal is typed, and the first value
 * is kept; in a grid, equal is W&B's grid's (1 == 1.0) and the value
 * written last is kept, as W&B's grid_search_next_runs does (a dict
 * from hash to value, over itertools.product of the hashes). */
static void collapse_values(sw_spec__ctx *c, sw_param *p, const sw_value *vals,
                            const char *path, const double *probs)
{
    size_t i, j, k, n = vals->u.list.len, mask = 1;
    const sw_value *item;
    size_t *slots;
    char *ip;

    while (mask < 2 * n)
        mask <<= 1;
    slots = sw_calloc(mask, sizeof(size_t));
    mask -= 1;
    p->values = sw_calloc(n, sizeof(sw_value *));
    p->probs = probs ? sw_calloc(n, sizeof(double)) : NULL;
    for (i = 0; i < n; i++) {
        item = vals->u.list.items[i];
        ip = sw_aprintf("%s[%zu]", path, i);
        warn_scalar(c, item, ip);
        k = p->n_values;
        j = find_or_add(p, slots, mask, item, c->grid);
        if (j < k && c->grid)
            grid_repeat(c, p, j, item, ip);
        else if (j < k)
            sw_spec__warn_value(c, item, ip,
                                "a repeated value: kept once (W&B's random "
                                "search would draw it more often)");
        if (probs)
            p->probs[j] += probs[i];
        free(ip);
    }
    free(slots);
}

static void fill_values(sw_spec__ctx *c, sw_param *p, const sw_value *v,
                        const char *path)
{
    const sw_value *vals = sw_value_map_get(v, "values");
    const sw_value *pr = sw_value_map_get(v, "probabilities");
    char *pv = sw_spec__join(path, "values"),
         *pp = sw_spec__join(path, "probabilities");
    double *probs = NULL;

    if (vals && sw_spec__want(c, vals, pv, SW_LIST)) {
        if (vals->u.list.len == 0) {
            sw_spec__err(c, vals, pv, "must not be empty");
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
static bool fill_number(sw_spec__ctx *c, const sw_value *v, const char *path,
                        const char *key, double *out, double lo, bool gt)
{
    const sw_value *x = sw_value_map_get(v, key);
    char *kp;
    bool ok = true;

    if (!x)
        return true;
    kp = sw_spec__join(path, key);
    if (!sw_spec__want_number(c, x, kp, out))
        ok = false;
    else if (gt ? !(*out > lo) : !(*out >= lo)) {
        sw_spec__err(c, x, kp, "must be %s %g",
                     gt ? "greater than" : "at least", lo);
        ok = false;
    }
    free(kp);
    return ok;
}

static bool int_bound(sw_spec__ctx *c, const sw_value *x, const char *path,
                      int64_t *out)
{
    sw_buf b = SW_BUF_INIT;

    if (x->type == SW_INT) {
        *out = x->u.i;
        return true;
    }
    sw_spec__describe(&b, x);
    sw_spec__err(c, x, path, "int_uniform needs an integer, not %s",
                 sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return false;
}

static void check_order(sw_spec__ctx *c, sw_param *p, const sw_value *mn,
                        const sw_value *mx, const char *pmin)
{
    bool bad = p->dist == SW_DIST_INT_UNIFORM ? p->imin >= p->imax
                                              : !(p->min < p->max);
    char *a, *b;

    if (!bad)
        return;
    a = sw_value_to_py(mn);
    b = sw_value_to_py(mx);
    sw_spec__err(c, mn, pmin, "min (%s) must be less than max (%s)", a, b);
    free(a);
    free(b);
}

static bool takes_values(sw_dist d)
{
    return d == SW_DIST_LOG_UNIFORM_VALUES ||
           d == SW_DIST_Q_LOG_UNIFORM_VALUES ||
           d == SW_DIST_INV_LOG_UNIFORM_VALUES;
}

static void fill_range(sw_spec__ctx *c, sw_param *p, const sw_value *v,
                       const char *path)
{
    const sw_value *mn = sw_value_map_get(v, "min");
    const sw_value *mx = sw_value_map_get(v, "max");
    char *pmin = sw_spec__join(path, "min"), *pmax = sw_spec__join(path, "max");
    bool ok = mn && mx;

    if (mn && !sw_spec__want_number(c, mn, pmin, &p->min))
        ok = false;
    if (mx && !sw_spec__want_number(c, mx, pmax, &p->max))
        ok = false;
    if (ok && p->dist == SW_DIST_INT_UNIFORM) {
        ok = int_bound(c, mn, pmin, &p->imin);
        ok = int_bound(c, mx, pmax, &p->imax) && ok;
    }
    if (ok)
        check_order(c, p, mn, mx, pmin);
    if (ok && takes_values(p->dist) && !(p->min > 0))
        sw_spec__err(c, mn, pmin,
                     "must be greater than 0 (%s takes the values "
                     "themselves, not their logarithms)",
                     sw_dist_name(p->dist));
    free(pmin);
    free(pmax);
}

static void fill_leaf(sw_spec__ctx *c, sw_param *p, const sw_value *v,
                      const char *path)
{
    const sw_value *q = sw_value_map_get(v, "q");
    char *vp;

    switch (p->dist) {
    case SW_DIST_CONSTANT:
        p->value = sw_value_clone(sw_value_map_get(v, "value"));
        vp = sw_spec__join(path, "value");
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
static const dist_info *infer_dist(sw_spec__ctx *c, const sw_value *v,
                                   const char *path)
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
        kp = sw_spec__join(path, v->u.map.keys[i]);
        sw_spec__unknown_key_in(c, v->u.map.keys[i], v->u.map.vals[i], kp,
                                ALL_PARAM_KEYS);
        free(kp);
        unknown = true;
    }
    if (unknown)
        return NULL;
    if (mn || mx)
        sw_spec__err(c, v, path, "%s is missing: min and max go together",
                     mn ? "max" : "min");
    else if (v->u.map.len)
        sw_spec__err(c, v, path,
                     "needs a distribution: W&B infers only constant "
                     "(value), categorical (values) and int_uniform or uniform "
                     "(min and max)");
    else
        sw_spec__err(c, v, path,
                     "needs value, values, or min and max (or a "
                     "distribution)");
    return NULL;
}

static const dist_info *param_dist(sw_spec__ctx *c, const sw_value *v,
                                   const char *path)
{
    const sw_value *d = sw_value_map_get(v, "distribution");
    const dist_info *info = NULL;
    sw_buf words = SW_BUF_INIT, list = SW_BUF_INIT;
    char *dp, *near;
    size_t i;

    if (!d)
        return infer_dist(c, v, path);
    dp = sw_spec__join(path, "distribution");
    if (sw_spec__want(c, d, dp, SW_STR) && !(info = find_dist(d->u.s))) {
        for (i = 0; i < N_DISTS; i++) {
            sw_buf_printf(&words, "%s%s", i ? " " : "", dists[i].name);
            sw_buf_printf(&list, "%s%s", i ? ", " : "", dists[i].name);
        }
        near = sw_spec__closest(d->u.s, sw_buf_cstr(&words));
        if (near)
            sw_spec__err(c, d, dp,
                         "unknown distribution '%s' (did you mean '%s'?)",
                         d->u.s, near);
        else
            sw_spec__err(c, d, dp,
                         "unknown distribution '%s' (expected one of: %s)",
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
static void check_leaf_keys(sw_spec__ctx *c, const sw_value *v,
                            const char *path, const dist_info *d)
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
        kp = sw_spec__join(path, k);
        if (strcmp(k, "probabilities") == 0)
            sw_spec__err(c, v->u.map.vals[i], kp,
                         "needs distribution "
                         "categorical_w_probabilities, or none (as in W&B)");
        else if (has_word(ALL_PARAM_KEYS, k))
            sw_spec__err(c, v->u.map.vals[i], kp, "%s parameters take only %s",
                         d->name, sw_buf_cstr(&allowed));
        else
            sw_spec__unknown_key_in(c, k, v->u.map.vals[i], kp, d->keys);
        free(kp);
    }
    if (!has_all(v, d->required))
        sw_spec__err(c, v, path, "%s parameters need %s", d->name,
                     sw_buf_cstr(&required));
    sw_buf_dispose(&allowed);
    sw_buf_dispose(&required);
}

static void check_leaf(sw_spec__ctx *c, const sw_value *v, const char *path,
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
        dp = sw_spec__join(path, "distribution");
        sw_spec__warn(
            c, sw_value_map_get(v, "distribution"), dp,
            "%s takes exponents of e as min and max; W&B deprecates it "
            "for %s_values, which takes the values themselves",
            d->name, d->name);
        free(dp);
    }
}

static void check_params(sw_spec__ctx *c, const sw_value *map, const char *path,
                         param_path *pp);

static void check_param(sw_spec__ctx *c, const sw_value *v, const char *path,
                        param_path *pp)
{
    const sw_value *nested;
    char *np;
    size_t i;

    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    nested = sw_value_map_get(v, "parameters");
    if (!nested) {
        check_leaf(c, v, path, pp);
        return;
    }
    for (i = 0; i < v->u.map.len; i++) { /* in document order */
        np = sw_spec__join(path, v->u.map.keys[i]);
        if (v->u.map.vals[i] == nested)
            check_params(c, nested, np, pp);
        else
            sw_spec__err(
                c, v->u.map.vals[i], np,
                "a parameter with nested parameters takes no other key");
        free(np);
    }
}

static void param_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                      const char *path, void *arg)
{
    param_path *pp = arg;

    if (!valid_name(key)) {
        sw_spec__err(c, v, path,
                     "a parameter name must match "
                     "[A-Za-z_][A-Za-z0-9_.-]* (W&B's rule)");
        return;
    }
    if (pp->depth == MAX_PARAM_DEPTH) {
        sw_spec__err(c, v, path, "parameters nested too deep");
        return;
    }
    pp->comps[pp->depth++] = key;
    check_param(c, v, path, pp);
    pp->depth--;
}

static void check_params(sw_spec__ctx *c, const sw_value *map, const char *path,
                         param_path *pp)
{
    if (!sw_spec__want(c, map, path, SW_MAP))
        return;
    if (map->u.map.len == 0) {
        sw_spec__err(c, map, path, "must declare at least one parameter");
        return;
    }
    sw_spec__each_key(c, map, path, param_key, pp);
}

/* W&B's order: keys sorted at every level, depth first. */
int sw_spec__param_cmp(const void *a, const void *b)
{
    const sw_param *x = a, *y = b;
    size_t i;
    int r;

    for (i = 0; i < x->depth && i < y->depth; i++)
        if ((r = strcmp(x->path[i], y->path[i])) != 0)
            return r;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

void sw_spec__top_parameters(sw_spec__ctx *c, const sw_value *v,
                             const char *path)
{
    param_path pp;

    pp.depth = 0;
    check_params(c, v, path, &pp);
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
