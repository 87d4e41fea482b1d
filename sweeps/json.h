/*
 * json.h - JSON text to values, for what trials send (metric lines and
 * requests). Sweep files have their own loader, which keeps positions.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include "sweeps/value.h"

/* Parses `len` bytes of JSON into *out (the caller frees). Fails with
 * SW_EINVALID and a message saying where the text stops being JSON. */
int sw_json_parse(sw_value **out, const char *text, size_t len);

#endif
