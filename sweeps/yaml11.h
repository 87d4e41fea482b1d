/*
 * yaml11.h - YAML 1.1 scalar resolution, as PyYAML's SafeLoader does it.
 *
 * Internal to sweeps/. W&B reads sweep files with yaml.safe_load, so a
 * scalar means what PyYAML's implicit resolvers and SafeConstructor make
 * of it: `yes` is True, `1e-3` is the string '1e-3', `010` is 8, `1:30`
 * is 90. These functions take the scalar's text (not NUL-terminated;
 * `n` bytes) and never look at anything else.
 */
#ifndef SW_YAML11_H
#define SW_YAML11_H

#include <stdbool.h>
#include <stddef.h>

#include "sweeps/value.h"

/* Resolves an untagged plain scalar. On success *out is a new value; on
 * failure (SW_EINVALID, SW_EOVERFLOW) the message is set and *out NULL. */
int sw_yaml11__plain(sw_value **out, const char *s, size_t n);

/* Constructs a scalar with an explicit tag (full form, such as
 * "tag:yaml.org,2002:int"); "!" resolves as a plain scalar would, as
 * PyYAML does, whatever the style. Other tags
 * than str, int, float, bool and null are refused (SW_EINVALID). */
int sw_yaml11__tagged(sw_value **out, const char *tag, const char *s, size_t n);

/* True when `s`, written plain, is read as a string although a person
 * (or YAML 1.2, or Python's float()) reads a number: 1e-3, 1E5, -.5. */
bool sw_yaml11__looks_numeric(const char *s);

/* A newly allocated spelling of the number `s` (one that
 * sw_yaml11__looks_numeric accepts) that YAML 1.1 reads as a float:
 * "1e-3" -> "1.0e-3"; NULL when there is none. */
char *sw_yaml11__float_spelling(const char *s);

/* True when the plain scalar `s` is one of the words YAML 1.1 reads as a
 * boolean although it is not true/false: yes, no, on, off (any case form
 * PyYAML accepts). */
bool sw_yaml11__word_bool(const char *s, size_t n);

#endif
