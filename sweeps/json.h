/*
 * json.h - JSON text to values, for what trials send (metric lines and
 * requests) and what the store keeps (params, argv). The sweep-file
 * loader (load.c) implements it: one reader, which keeps integers and
 * floats apart as Python's json does (3 is an int, 3.0 a float) and
 * records where each value was written.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include "sweeps/value.h"

/* Parses `len` bytes of JSON (one document, at most 64 levels deep) into
 * *out (the caller frees). Fails with SW_EINVALID and a message saying
 * where the text stops being JSON. */
int sw_json_parse(sw_value **out, const char *text, size_t len);

/* True when `len` bytes of `text` are one JSON document (RFC 8259, at
 * most 64 levels deep), checked without building it (json_valid.c). This
 * function can't fail. */
bool sw_json_valid(const char *text, size_t len);

#endif
