/*
 * metrics.c - parsing metric reports. A report is all or nothing: one bad
 * value refuses the whole report, so a run never holds half of one.
 */
#include "orchestrator/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "sweeps/json.h"

void sw_metric_batch_init(sw_metric_batch *b)
{
    b->items = NULL;
    b->len = b->cap = 0;
}

void sw_metric_batch_dispose(sw_metric_batch *b)
{
    size_t i;

    for (i = 0; i < b->len; i++)
        free(b->items[i].name);
    free(b->items);
    sw_metric_batch_init(b);
}

static void add(sw_metric_batch *b, int64_t step, const char *name, double v)
{
    sw_grow(&b->items, &b->cap, b->len + 1, sizeof(*b->items));
    b->items[b->len].step = step;
    b->items[b->len].name = sw_strdup(name);
    b->items[b->len].value = v;
    b->len++;
}

static int parse_object(sw_metric_batch *b, const sw_value *obj)
{
    const sw_value *step = sw_value_map_get(obj, "step");
    int64_t s = -1;
    double d;
    size_t i;

    if (obj->type != SW_MAP)
        return sw_error_set(SW_EINVALID, "a report is a JSON object");
    if (step && (step->type != SW_INT || step->u.i < 0))
        return sw_error_set(SW_EINVALID,
                            "step must be a non-negative integer");
    if (step)
        s = step->u.i;
    for (i = 0; i < obj->u.map.len; i++) {
        const sw_value *v = obj->u.map.vals[i];
        if (strcmp(obj->u.map.keys[i], "step") == 0)
            continue;
        if (v->type == SW_BOOL)
            add(b, s, obj->u.map.keys[i], v->u.b ? 1.0 : 0.0);
        else if (sw_value_number(v, &d))
            add(b, s, obj->u.map.keys[i], d);
    }
    return SW_OK;
}

int sw_metrics_parse(sw_metric_batch *b, const char *json, size_t len)
{
    sw_value *v = NULL;
    size_t start = b->len, i;
    int error;

    if ((error = sw_json_parse(&v, json, len)) != SW_OK)
        return error;
    if (v->type == SW_LIST) {
        for (i = 0; i < v->u.list.len && !error; i++)
            error = parse_object(b, v->u.list.items[i]);
    } else {
        error = parse_object(b, v);
    }
    sw_value_free(v);
    while (error && b->len > start)
        free(b->items[--b->len].name);
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
