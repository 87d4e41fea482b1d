/*
 * metrics.h - metric reports in a trial's output: a line
 * `@metrics {"step": 3, "loss": 0.41}` (or an array of such objects).
 */
#ifndef SW_METRICS_H
#define SW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t step; /* -1: none given */
    char *name;
    double value;
    double time; /* the trial's own `_timestamp` (Unix seconds), as W&B's
                    wandb.log records one; 0: none given */
} sw_metric_point;

typedef struct {
    sw_metric_point *items;
    size_t len, cap;
    size_t refused; /* names skipped: not UTF-8, or control characters */
    bool strict;    /* refuse the whole report over a value or name that
                       would be skipped (HTTP reports say why they fail) */
} sw_metric_batch;

/* Limits on one report (one POST or one `@metrics` line, array
 * included): a name is 1 to SW_METRICS_NAME_MAX bytes, and a report holds
 * at most SW_METRICS_VALUES_MAX values. */
#define SW_METRICS_NAME_MAX 256
#define SW_METRICS_VALUES_MAX 10000

void sw_metric_batch_init(sw_metric_batch *b);
void sw_metric_batch_dispose(sw_metric_batch *b);

/* Parses one report (the JSON after `@metrics`) into `b`, in time linear
 * in its length. Numbers and booleans count; other values (strings,
 * maps) are skipped, and so are names that are empty, longer than
 * SW_METRICS_NAME_MAX, not valid UTF-8 or hold control characters
 * (counted in b->refused). Fails with SW_EINVALID (and adds nothing) when
 * the report is not a JSON object or an array of objects, `step` is not
 * a non-negative integer, or the text holds a NUL (raw or `\u0000`); with
 * b->strict, also over a value that is not a number or a boolean, or a
 * name that would be skipped. Fails with SW_EOVERFLOW when the report
 * holds more than SW_METRICS_VALUES_MAX values. */
int sw_metrics_parse(sw_metric_batch *b, const char *json, size_t len);

/* When `line` (without its newline) is a `@metrics` line, returns a
 * pointer to its JSON part; else NULL. */
const char *sw_metrics_line(const char *line, size_t len);

#endif
