/*
 * value.h - the dynamic values of sweep files and trial parameters.
 *
 * A value is null, a boolean, a 64-bit integer, a double, a string, a list
 * or a map with string keys in insertion order. Values are trees: every
 * node has exactly one owner. Containers consume the values added to them.
 * Every value may carry the position it was read from (line 0: none).
 *
 * Values render three ways: as Python's str() (what W&B puts on a command
 * line), as JSON, and canonically (JSON with sorted keys, for hashing).
 */
#ifndef SW_VALUE_H
#define SW_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "sweeps/buf.h"

typedef enum {
    SW_NULL,
    SW_BOOL,
    SW_INT,
    SW_FLOAT,
    SW_STR,
    SW_LIST,
    SW_MAP,
} sw_type;

typedef struct sw_value sw_value;

struct sw_value {
    sw_type type;
    int line, col; /* where it was read from; 0 when made in memory */
    union {
        bool b;
        int64_t i;
        double f;
        char *s;
        struct {
            sw_value **items;
            size_t len, cap;
        } list;
        struct {
            char **keys;
            sw_value **vals;
            size_t len, cap;
        } map;
    } u;
};

sw_value *sw_value_null(void);
sw_value *sw_value_bool(bool b);
sw_value *sw_value_int(int64_t i);
sw_value *sw_value_float(double f);
sw_value *sw_value_str(const char *s);
sw_value *sw_value_strn(const char *s, size_t n);
/* A string value that takes `s` (malloc'd; consumed) instead of a copy. */
sw_value *sw_value_str_take(char *s);
sw_value *sw_value_list(void);
sw_value *sw_value_map(void);
void sw_value_free(sw_value *v);
sw_value *sw_value_clone(const sw_value *v);

/* A hash of a string (FNV-1a), for the tables that index keys. */
size_t sw_str_hash(const char *s);

/* Appends `item` to a list; consumes `item`. */
void sw_value_list_push(sw_value *list, sw_value *item);
/* Sets `key` in a map, replacing (and freeing) any old value; consumes
 * `val`. */
void sw_value_map_set(sw_value *map, const char *key, sw_value *val);
/* Appends `key` and `val` without looking for an equal key (the caller
 * knows there is none); consumes both. */
void sw_value_map_append(sw_value *map, char *key, sw_value *val);
/* The value of `key` in `map`, or NULL (also when `map` is not a map). */
sw_value *sw_value_map_get(const sw_value *map, const char *key);

/* True for SW_INT and SW_FLOAT; *out gets the number as a double. */
bool sw_value_number(const sw_value *v, double *out);
/* Deep equality with types: 1, 1.0 and true are three different values. */
bool sw_value_equal(const sw_value *a, const sw_value *b);

/* Appends Python's str(v): True, None, 1e-05, 3.0, [1, 'a'], {'b': 1}. */
void sw_value_write_py(sw_buf *out, const sw_value *v);
/* Appends Python's repr(v) (strings quoted). */
void sw_value_write_pyrepr(sw_buf *out, const sw_value *v);
/* Appends JSON; `sorted` sorts map keys (the canonical form). Non-finite
 * floats are written as Python's json writes them: NaN, Infinity. */
void sw_value_write_json(sw_buf *out, const sw_value *v, bool sorted);
/* Appends the shortest decimal that reads back as `f`, as Python's repr. */
void sw_float_write_py(sw_buf *out, double f);
/* Appends the shortest round-trip form of `f` as JSON wants it. */
void sw_float_write_json(sw_buf *out, double f);
/* Appends `f` as printf's "%.6g" writes it, byte for byte, without
 * printf for the common magnitudes (1e-4 to 1e6). */
void sw_float_write_g6(sw_buf *out, double f);
/* Appends `i` in decimal, as printf's "%lld". */
void sw_int_write(sw_buf *out, long long i);
/* Writes `s` as a JSON string, quoted and escaped. */
void sw_json_write_string(sw_buf *out, const char *s);

/* A newly allocated Python str() of `v`. */
char *sw_value_to_py(const sw_value *v);

/* 64-bit FNV-1a of `n` bytes, continuing from `h` (start with
 * SW_HASH_SEED). */
#define SW_HASH_SEED UINT64_C(0xcbf29ce484222325)
uint64_t sw_hash(uint64_t h, const void *data, size_t n);

#endif
