/*
 * json_valid.c - whether a text is one JSON document (RFC 8259), without
 * building anything: no allocation, one pass. For readers that print
 * stored JSON as it is (`sweep ls`, `sweep best`) and need only to know
 * that it is JSON. Nesting past SW_JSON_VALID_DEPTH levels is refused, as
 * sw_json_parse() refuses it.
 */
#include "sweeps/json.h"

#include <string.h>

#define SW_JSON_VALID_DEPTH 64

typedef struct {
    const char *p, *end;
} cursor;

static void space(cursor *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
           (ch >= 'A' && ch <= 'F');
}

static bool string(cursor *c)
{
    for (c->p++; c->p < c->end; c->p++) {
        unsigned char ch = (unsigned char)*c->p;

        if (ch == '"') {
            c->p++;
            return true;
        }
        if (ch < 0x20)
            return false;
        if (ch != '\\')
            continue;
        if (++c->p >= c->end)
            return false;
        if (*c->p == 'u') {
            if (c->end - c->p < 5 || !hex(c->p[1]) || !hex(c->p[2]) ||
                !hex(c->p[3]) || !hex(c->p[4]))
                return false;
            c->p += 4;
        } else if (!strchr("\"\\/bfnrt", *c->p)) {
            return false;
        }
    }
    return false;
}

static bool digits(cursor *c)
{
    const char *start = c->p;

    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > start;
}

static bool number(cursor *c)
{
    if (*c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (!digits(c))
        return false;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!digits(c))
            return false;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (!digits(c))
            return false;
    }
    return true;
}

static bool word(cursor *c, const char *w, size_t n)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool value(cursor *c, int depth);

/* An object or an array, from its opening bracket. */
static bool container(cursor *c, int depth, bool object)
{
    char close = object ? '}' : ']';

    if (depth >= SW_JSON_VALID_DEPTH)
        return false;
    c->p++;
    space(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return true;
    }
    for (;;) {
        if (object) {
            if (c->p >= c->end || *c->p != '"' || !string(c))
                return false;
            space(c);
            if (c->p >= c->end || *c->p++ != ':')
                return false;
        }
        if (!value(c, depth + 1))
            return false;
        space(c);
        if (c->p >= c->end)
            return false;
        if (*c->p == close) {
            c->p++;
            return true;
        }
        if (*c->p++ != ',')
            return false;
        space(c);
    }
}

static bool value(cursor *c, int depth)
{
    space(c);
    if (c->p >= c->end)
        return false;
    switch (*c->p) {
    case '{':
        return container(c, depth, true);
    case '[':
        return container(c, depth, false);
    case '"':
        return string(c);
    case 't':
        return word(c, "true", 4);
    case 'f':
        return word(c, "false", 5);
    case 'n':
        return word(c, "null", 4);
    default:
        return number(c);
    }
}

bool sw_json_valid(const char *text, size_t len)
{
    cursor c = {text, text + len};

    if (!text || !value(&c, 0))
        return false;
    space(&c);
    return c.p == c.end;
}
