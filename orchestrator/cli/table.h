/*
 * table.h - rows of values printed three ways: aligned for people, CSV,
 * and JSON (one object per line) for scripts.
 */
#ifndef SW_TABLE_H
#define SW_TABLE_H

#include <stdio.h>

#include "sweeps/value.h"

typedef enum { SW_TABLE_HUMAN, SW_TABLE_CSV, SW_TABLE_JSON } sw_table_format;

typedef struct {
    char **cols;
    size_t ncols;
    sw_value **cells; /* rows * ncols values, row-major; owned */
    size_t nrows, cap;
    bool exact;         /* for people too, each number as it is (sweep query) */
    uint32_t json_cols; /* bit c: column c's strings are JSON text, written
                           as they are in JSON (a run's params as stored) */
} sw_table;

/* Starts a table with `ncols` column names (copied). */
void sw_table_init(sw_table *t, size_t ncols, const char *const *cols);
void sw_table_dispose(sw_table *t);
/* Appends a row of ncols values; consumes them. */
void sw_table_add(sw_table *t, sw_value **row);
void sw_table_print(const sw_table *t, sw_table_format f, FILE *out);

#endif
