/*
 * metrics.c - parsing metric reports. A report is all or nothing: one bad
 * value refuses the whole report, so a run never holds half of one.
 *
 * Reports are JSON as Python's json.dumps writes it, which includes NaN,
 * Infinity and -Infinity for a loss that diverged: those are read as the
 * floats they name (so is a string holding exactly one of them).
 *
 * Names are stored and printed as JSON later, so a name must be valid
 * UTF-8 without control characters, and 1 to SW_METRICS_NAME_MAX bytes
 * long; one that is not is skipped, not the report (over HTTP, which can
 * say why, it refuses the report). A report holds at most
 * SW_METRICS_VALUES_MAX values, so one report cannot hold the loop for
 * long; the reader is linear in the report's length. A NUL refuses the
 * report: the JSON reader would stop at it and read a cut key or value
 * as if it were whole.
 */
#include "orchestrator/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/json.h"

void sw_metric_batch_init(sw_metric_batch *b)
{
    b->items = NULL;
    b->len = b->cap = 0;
    b->refused = 0;
    b->strict = false;
}

void sw_metric_batch_dispose(sw_metric_batch *b)
{
    size_t i;

    for (i = 0; i < b->len; i++)
        free(b->items[i].name);
    free(b->items);
    bool strict = b->strict;

    sw_metric_batch_init(b);
    b->strict = strict;
}

static void add(sw_metric_batch *b, int64_t step, const char *name, double v,
                double time)
{
    sw_grow(&b->items, &b->cap, b->len + 1, sizeof(*b->items));
    b->items[b->len].step = step;
    b->items[b->len].name = sw_strdup(name);
    b->items[b->len].value = v;
    b->items[b->len].time = time;
    b->len++;
}

/* The object's `_timestamp`: Unix seconds, a finite number above 0; 0
 * when it has none. SW_EINVALID for one that is not such a number. */
static int timestamp_of(const sw_value *obj, double *out)
{
    const sw_value *t = sw_value_map_get(obj, "_timestamp");

    *out = 0;
    if (!t)
        return SW_OK;
    if (!sw_value_number(t, out) || !isfinite(*out) || *out <= 0) {
        *out = 0;
        return sw_error_set(SW_EINVALID,
                            "_timestamp must be seconds since 1970, a "
                            "number above 0");
    }
    return SW_OK;
}

/* The length of the UTF-8 sequence a lead byte starts (0: not a lead
 * byte), and the smallest code point that length may encode. */
static size_t seq_len(unsigned char c, uint32_t *min)
{
    static const uint32_t mins[] = {0, 0, 0x80, 0x800, 0x10000};
    size_t n = 0; /* a continuation byte, 0xc0/0xc1 (overlong), 0xf5+ */

    if (c < 0x80)
        n = 1;
    else if (c >= 0xc2 && c < 0xe0)
        n = 2;
    else if (c >= 0xe0 && c < 0xf0)
        n = 3;
    else if (c >= 0xf0 && c < 0xf5)
        n = 4;
    *min = mins[n];
    return n;
}

/* Whether `name` is 1 to SW_METRICS_NAME_MAX bytes of valid UTF-8 (no
 * overlong forms, surrogates or code points past U+10FFFF) free of C0 and
 * C1 controls and DEL. */
static bool good_name(const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    uint32_t cp, min;
    size_t n, k;

    if (!*name || strnlen(name, SW_METRICS_NAME_MAX + 1) > SW_METRICS_NAME_MAX)
        return false;
    while (*p) {
        if ((n = seq_len(*p, &min)) == 0)
            return false;
        cp = n == 1 ? *p : *p & (0x7f >> n);
        for (k = 1; k < n; k++) {
            if ((p[k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[k] & 0x3f);
        }
        if ((n > 1 && cp < min) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp < 0x20 ||
            (cp >= 0x7f && cp < 0xa0))
            return false;
        p += n;
    }
    return true;
}

/* Whether JSON text holds a NUL, raw or written as the escape \u0000. */
static bool has_nul(const char *s, size_t len)
{
    size_t i;

    if (memchr(s, '\0', len))
        return true;
    for (i = 0; i + 6 <= len; i++) {
        if (s[i] != '\\')
            continue;
        if (s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0)
            return true;
        i++; /* an escaped character, perhaps a backslash */
    }
    return false;
}

/* The float a value names: a number, a boolean (1 or 0), or one of
 * Python's non-finite spellings. False for anything else. */
static bool metric_value(const sw_value *v, double *d)
{
    if (v->type == SW_BOOL) {
        *d = v->u.b ? 1.0 : 0.0;
        return true;
    }
    if (sw_value_number(v, d))
        return true;
    if (v->type != SW_STR)
        return false;
    if (strcmp(v->u.s, "NaN") == 0)
        *d = NAN;
    else if (strcmp(v->u.s, "Infinity") == 0)
        *d = INFINITY;
    else if (strcmp(v->u.s, "-Infinity") == 0)
        *d = -INFINITY;
    else
        return false;
    return true;
}

/* Copies JSON text with Python's bare NaN, Infinity and -Infinity (not
 * JSON) quoted, so the JSON reader takes them as strings. */
static void quote_specials(sw_buf *out, const char *s, size_t len)
{
    static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
    bool in_str = false;
    size_t i = 0, k, n;

    while (i < len) {
        if (in_str || s[i] == '"') {
            if (in_str && s[i] == '\\' && i + 1 < len) {
                sw_buf_put(out, s + i, 2);
                i += 2;
                continue;
            }
            in_str = s[i] == '"' ? !in_str : in_str;
            sw_buf_putc(out, s[i++]);
            continue;
        }
        for (k = 0; k < 3; k++) {
            n = strlen(words[k]);
            if (len - i >= n && memcmp(s + i, words[k], n) == 0)
                break;
        }
        if (k < 3) {
            sw_buf_printf(out, "\"%s\"", words[k]);
            i += strlen(words[k]);
        } else {
            sw_buf_putc(out, s[i++]);
        }
    }
}

/* Adds one report object's values; *values counts the report's names so
 * far, over all its objects. */
static int parse_object(sw_metric_batch *b, const sw_value *obj, size_t *values)
{
    const sw_value *step;
    int64_t s = -1;
    double d, at;
    size_t i;

    if (obj->type != SW_MAP)
        return sw_error_set(SW_EINVALID, "a report is a JSON object");
    step = sw_value_map_get(obj, "step");
    if (step && (step->type != SW_INT || step->u.i < 0))
        return sw_error_set(SW_EINVALID, "step must be a non-negative integer");
    if (step)
        s = step->u.i;
    if (timestamp_of(obj, &at) != SW_OK && b->strict)
        return SW_EINVALID;
    for (i = 0; i < obj->u.map.len; i++) {
        const sw_value *v = obj->u.map.vals[i];
        if (strcmp(obj->u.map.keys[i], "step") == 0 ||
            strcmp(obj->u.map.keys[i], "_timestamp") == 0)
            continue;
        if (++*values > SW_METRICS_VALUES_MAX)
            return sw_error_set(SW_EOVERFLOW,
                                "a report holds at most %d values",
                                SW_METRICS_VALUES_MAX);
        if (!good_name(obj->u.map.keys[i]) && b->strict)
            return sw_error_set(SW_EINVALID,
                                "a metric name must be 1 to %d bytes of "
                                "UTF-8 without control characters",
                                SW_METRICS_NAME_MAX);
        if (!good_name(obj->u.map.keys[i]))
            b->refused++;
        else if (metric_value(v, &d))
            add(b, s, obj->u.map.keys[i], d, at);
        else if (b->strict)
            return sw_error_set(SW_EINVALID,
                                "metric \"%.200s\" is not a number",
                                obj->u.map.keys[i]);
    }
    return SW_OK;
}

int sw_metrics_parse(sw_metric_batch *b, const char *json, size_t len)
{
    sw_buf text = SW_BUF_INIT;
    sw_value *v = NULL;
    size_t start = b->len, refused = b->refused, values = 0, i;
    int error;

    if (has_nul(json, len))
        return sw_error_set(SW_EINVALID, "a report holds a NUL character");
    quote_specials(&text, json, len);
    error = sw_json_parse(&v, sw_buf_cstr(&text), text.len);
    sw_buf_dispose(&text);
    if (error != SW_OK)
        return error;
    if (v->type == SW_LIST) {
        for (i = 0; i < v->u.list.len && !error; i++)
            error = parse_object(b, v->u.list.items[i], &values);
    } else {
        error = parse_object(b, v, &values);
    }
    sw_value_free(v);
    while (error && b->len > start)
        free(b->items[--b->len].name);
    if (error)
        b->refused = refused;
    return error;
}

const char *sw_metrics_line(const char *line, size_t len)
{
    static const char tag[] = "@metrics";
    size_t n = sizeof(tag) - 1;

    if (len <= n || strncmp(line, tag, n) != 0 ||
        (line[n] != ' ' && line[n] != '\t'))
        return NULL;
    return line + n + 1;
}
