/*
 * yaml11.c - what a YAML scalar means, exactly as PyYAML's SafeLoader
 * (yaml.safe_load, which W&B uses) reads it.
 *
 * The matchers below are PyYAML's implicit-resolver regular expressions
 * (resolver.py) written out by hand; the constructors are SafeConstructor's
 * construct_yaml_int/float/bool/null. Where PyYAML raises (`0b_`, `._`, a
 * plain `=` or `<<` used as a value) we refuse with a message. Known
 * differences: integers beyond 64 bits are refused (PyYAML has bignums),
 * and timestamps (`2020-01-01`) stay strings, whose text is what str() of
 * PyYAML's date gives for plain dates.
 */
#include "sweeps/yaml11.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/buf.h"

#define DIGITS "0123456789"
#define TAG_PREFIX "tag:yaml.org,2002:"

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

/* How many of the first `n` bytes of `s` are in `set`. */
static size_t span(const char *s, size_t n, const char *set)
{
    size_t i = 0;

    while (i < n && s[i] && strchr(set, s[i]))
        i++;
    return i;
}

static bool is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static size_t sign_len(const char *s, size_t n)
{
    return n > 0 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
}

/* Consumes `(?::[0-5]?[0-9])*` from index j; returns where it stopped. */
static size_t sexagesimal(const char *s, size_t n, size_t j)
{
    while (j < n && s[j] == ':') {
        size_t k = j + 1;

        if (k + 1 < n && s[k] >= '0' && s[k] <= '5' && isdig(s[k + 1]))
            k += 2;
        else if (k < n && isdig(s[k]))
            k += 1;
        else
            return j;
        j = k;
    }
    return j;
}

/* `(?:[eE][-+][0-9]+)?$` from index j. */
static bool exponent_to_end(const char *s, size_t n, size_t j)
{
    if (j == n)
        return true;
    if (j + 2 >= n || (s[j] != 'e' && s[j] != 'E') ||
        (s[j + 1] != '-' && s[j + 1] != '+'))
        return false;
    return span(s + j + 2, n - j - 2, DIGITS) == n - j - 2;
}

/* PyYAML's int regex: 0b.., 0.. (octal), decimal, 0x.., sexagesimal. */
static bool match_int(const char *s, size_t n)
{
    size_t i = sign_len(s, n), j;

    if (i + 1 < n && s[i] == '0' && s[i + 1] == 'b')
        return i + 2 < n && span(s + i + 2, n - i - 2, "01_") == n - i - 2;
    if (i + 1 < n && s[i] == '0' && s[i + 1] == 'x')
        return i + 2 < n &&
               span(s + i + 2, n - i - 2, DIGITS "abcdefABCDEF_") == n - i - 2;
    if (i < n && s[i] == '0')
        return span(s + i + 1, n - i - 1, "01234567_") == n - i - 1;
    if (i >= n || s[i] < '1' || s[i] > '9')
        return false;
    j = i + 1 + span(s + i + 1, n - i - 1, DIGITS "_");
    return j == n || (sexagesimal(s, n, j) == n && s[j] == ':');
}

static bool match_float_dot(const char *s, size_t n, size_t i)
{
    const char *r = s + i + 1;
    size_t m = n - i - 1, j;

    if (is(r, m, "inf") || is(r, m, "Inf") || is(r, m, "INF"))
        return true;
    if (i > 0) /* the nan and `.5` forms take no sign */
        return false;
    if (is(r, m, "nan") || is(r, m, "NaN") || is(r, m, "NAN"))
        return true;
    if (m == 0 || !isdig(r[0])) /* PyYAML 6: \.[0-9][0-9_]* */
        return false;
    j = span(r, m, DIGITS "_");
    return exponent_to_end(s, n, 1 + j);
}

/* PyYAML's float regex; note that a dot is always required. */
static bool match_float(const char *s, size_t n)
{
    size_t i = sign_len(s, n), j, k;
    bool sexa;

    if (i < n && s[i] == '.')
        return match_float_dot(s, n, i);
    if (i >= n || !isdig(s[i]))
        return false;
    j = i + 1 + span(s + i + 1, n - i - 1, DIGITS "_");
    k = sexagesimal(s, n, j);
    sexa = k != j;
    if (k >= n || s[k] != '.')
        return false;
    k++;
    k += span(s + k, n - k, DIGITS "_");
    return sexa ? k == n : exponent_to_end(s, n, k);
}

static bool match_bool(const char *s, size_t n, bool *b)
{
    static const char *const t[] = {"yes",  "Yes", "YES", "true", "True",
                                    "TRUE", "on",  "On",  "ON"};
    static const char *const f[] = {"no",    "No",  "NO",  "false", "False",
                                    "FALSE", "off", "Off", "OFF"};
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(*t); i++) {
        if (is(s, n, t[i]) || is(s, n, f[i])) {
            *b = is(s, n, t[i]);
            return true;
        }
    }
    return false;
}

static bool match_null(const char *s, size_t n)
{
    return n == 0 || is(s, n, "~") || is(s, n, "null") || is(s, n, "Null") ||
           is(s, n, "NULL");
}

/* A copy of `s` without underscores, as PyYAML's value.replace('_', ''). */
static char *strip_underscores(const char *s, size_t n)
{
    char *c = sw_malloc(n + 1);
    size_t i, j = 0;

    for (i = 0; i < n; i++)
        if (s[i] != '_')
            c[j++] = s[i];
    c[j] = '\0';
    return c;
}

static int digit_of(char c)
{
    if (isdig(c))
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

/* Python's int(s, base) on digits only, into *out; false when `s` is not
 * all digits of `base` (or empty). Sets *over on overflow. */
static bool parse_uint(const char *s, int base, uint64_t *out, bool *over)
{
    uint64_t v = 0;
    int d;

    if (!*s)
        return false;
    for (; *s; s++) {
        d = digit_of(*s);
        if (d >= base)
            return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            *over = true;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

/* construct_yaml_int's sexagesimal branch: parts in base 60. */
static bool parse_sexagesimal_int(char *s, uint64_t *out, bool *over)
{
    uint64_t v = 0, part;
    char *colon;

    for (;;) {
        colon = strchr(s, ':');
        if (colon)
            *colon = '\0';
        if (!parse_uint(s, 10, &part, over))
            return false;
        if (v > (UINT64_MAX - part) / 60)
            *over = true;
        v = v * 60 + part;
        if (!colon)
            break;
        s = colon + 1;
    }
    *out = v;
    return true;
}

/* The magnitude of an unsigned int text per construct_yaml_int. */
static bool int_magnitude(char *t, uint64_t *mag, bool *over)
{
    if (strcmp(t, "0") == 0) {
        *mag = 0;
        return true;
    }
    if (strncmp(t, "0b", 2) == 0)
        return parse_uint(t + 2, 2, mag, over);
    if (strncmp(t, "0x", 2) == 0)
        return parse_uint(t + 2, 16, mag, over);
    if (t[0] == '0')
        return parse_uint(t, 8, mag, over);
    if (strchr(t, ':'))
        return parse_sexagesimal_int(t, mag, over);
    return parse_uint(t, 10, mag, over);
}

static int construct_int(sw_value **out, const char *s, size_t n)
{
    char *c = strip_underscores(s, n), *t = c;
    bool neg = false, over = false, ok;
    uint64_t mag = 0;
    int error = SW_OK;

    if (*t == '-' || *t == '+')
        neg = *t++ == '-';
    ok = int_magnitude(t, &mag, &over);
    if (!ok)
        error = sw_error_set(SW_EINVALID, "cannot read '%.*s' as an integer",
                             (int)n, s);
    else if (over || mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        error = sw_error_set(SW_EOVERFLOW,
                             "integer %.*s is out of range (beyond 64 bits)",
                             (int)n, s);
    else if (neg)
        *out = sw_value_int(mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN
                                                            : -(int64_t)mag);
    else
        *out = sw_value_int((int64_t)mag);
    free(c);
    return error;
}

/* Python's float(s) for the forms that can reach it; strtod is used in
 * the "C" locale, which is what sweep runs in. */
static bool parse_double(const char *s, double *out)
{
    char *end;

    if (!*s || strchr(s, 'x') || isspace((unsigned char)*s))
        return false;
    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0';
}

/* construct_yaml_float's sexagesimal branch, in PyYAML's order. */
static bool parse_sexagesimal_float(char *s, double *out)
{
    size_t n = 0, parts = 1;
    double *digits, base = 1.0, v = 0.0;
    bool ok = true;
    char *p, *colon;

    for (p = s; *p; p++)
        parts += *p == ':';
    digits = sw_calloc(parts, sizeof(*digits));
    for (p = s; ok && p; p = colon ? colon + 1 : NULL) {
        colon = strchr(p, ':');
        if (colon)
            *colon = '\0';
        ok = parse_double(p, &digits[n++]);
    }
    while (ok && n-- > 0) {
        v += digits[n] * base;
        base *= 60;
    }
    free(digits);
    *out = v;
    return ok;
}

static int construct_float(sw_value **out, const char *s, size_t n)
{
    char *c = strip_underscores(s, n), *t = c, *p;
    double sign = 1.0, v = 0.0;
    bool ok = true;

    for (p = c; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (*t == '-' || *t == '+')
        sign = *t++ == '-' ? -1.0 : 1.0;
    if (strcmp(t, ".inf") == 0)
        v = INFINITY;
    else if (strcmp(t, ".nan") == 0)
        v = NAN, sign = 1.0;
    else if (strchr(t, ':'))
        ok = parse_sexagesimal_float(t, &v);
    else
        ok = parse_double(t, &v);
    free(c);
    if (!ok)
        return sw_error_set(SW_EINVALID, "cannot read '%.*s' as a number",
                            (int)n, s);
    *out = sw_value_float(sign * v);
    return SW_OK;
}

int sw_yaml11__plain(sw_value **out, const char *s, size_t n)
{
    bool b;

    *out = NULL;
    if (match_bool(s, n, &b))
        *out = sw_value_bool(b);
    else if (match_null(s, n))
        *out = sw_value_null();
    else if (match_float(s, n))
        return construct_float(out, s, n);
    else if (match_int(s, n))
        return construct_int(out, s, n);
    else if (is(s, n, "=") || is(s, n, "<<"))
        return sw_error_set(SW_EINVALID,
                            "a plain '%.*s' is not a value in YAML 1.1 "
                            "(quote it)",
                            (int)n, s);
    else
        *out = sw_value_strn(s, n);
    return SW_OK;
}

static int construct_bool(sw_value **out, const char *s, size_t n)
{
    char buf[8];
    size_t i;
    bool b;

    for (i = 0; i < n && i < sizeof(buf) - 1; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    buf[i] = '\0';
    if (n < sizeof(buf) && match_bool(buf, n, &b)) {
        *out = sw_value_bool(b);
        return SW_OK;
    }
    return sw_error_set(SW_EINVALID, "cannot read '%.*s' as a boolean", (int)n,
                        s);
}

int sw_yaml11__tagged(sw_value **out, const char *tag, const char *s, size_t n)
{
    const char *t = tag;

    *out = NULL;
    if (strcmp(tag, "!") == 0) /* PyYAML resolves it as if plain */
        return sw_yaml11__plain(out, s, n);
    if (strncmp(t, TAG_PREFIX, strlen(TAG_PREFIX)) == 0)
        t += strlen(TAG_PREFIX);
    else
        t = "";
    if (strcmp(t, "str") == 0)
        *out = sw_value_strn(s, n);
    else if (strcmp(t, "null") == 0)
        *out = sw_value_null();
    else if (strcmp(t, "bool") == 0)
        return construct_bool(out, s, n);
    else if (strcmp(t, "int") == 0)
        return n ? construct_int(out, s, n)
                 : sw_error_set(SW_EINVALID, "an empty !!int");
    else if (strcmp(t, "float") == 0)
        return n ? construct_float(out, s, n)
                 : sw_error_set(SW_EINVALID, "an empty !!float");
    else
        return sw_error_set(SW_EINVALID,
                            "the tag %s is not supported (W&B's "
                            "yaml.safe_load refuses it too, or gives a "
                            "type sweep does not have)",
                            tag);
    return SW_OK;
}

bool sw_yaml11__looks_numeric(const char *s)
{
    size_t n = strlen(s);
    char *c;
    double d;
    bool ok;

    if (n == 0 || !strchr("+-.0123456789", s[0]) ||
        span(s, n, DIGITS "+-.eE_") != n || span(s, n, "+-.eE_") == n ||
        !strpbrk(s, DIGITS) || match_int(s, n) || match_float(s, n))
        return false;
    c = strip_underscores(s, n);
    ok = parse_double(c, &d);
    free(c);
    return ok;
}

/* The parts of a decimal number: [sign] int [. frac] [e [esign] exp]. */
typedef struct {
    const char *sign, *ip, *fp, *e, *esign, *ep;
    size_t nsign, nip, nfp, nesign, nep;
    bool dot;
} number_parts;

static bool split_number(const char *s, number_parts *p)
{
    memset(p, 0, sizeof(*p));
    p->sign = s;
    p->nsign = sign_len(s, strlen(s));
    p->ip = s + p->nsign;
    p->nip = span(p->ip, strlen(p->ip), DIGITS);
    s = p->ip + p->nip;
    if (*s == '.') {
        p->dot = true;
        p->fp = ++s;
        p->nfp = span(s, strlen(s), DIGITS);
        s += p->nfp;
    }
    if (*s == 'e' || *s == 'E') {
        p->e = s++;
        p->esign = s;
        p->nesign = sign_len(s, strlen(s));
        p->ep = s + p->nesign;
        p->nep = span(p->ep, strlen(p->ep), DIGITS);
        s = p->ep + p->nep;
    }
    return *s == '\0' && (p->nip || p->nfp) && (!p->e || p->nep);
}

char *sw_yaml11__float_spelling(const char *s)
{
    sw_buf b = SW_BUF_INIT;
    number_parts p;
    char *out;

    if (!split_number(s, &p))
        return NULL;
    sw_buf_put(&b, p.sign, p.nsign);
    if (!p.dot && !p.e) { /* 09: the integer 9 */
        while (p.nip > 1 && p.ip[0] == '0')
            p.ip++, p.nip--;
        sw_buf_put(&b, p.ip, p.nip);
    } else {
        sw_buf_put(&b, p.nip ? p.ip : "0", p.nip ? p.nip : 1);
        sw_buf_putc(&b, '.');
        sw_buf_put(&b, p.nfp ? p.fp : "0", p.nfp ? p.nfp : 1);
        if (p.e) {
            sw_buf_putc(&b, *p.e);
            sw_buf_putc(&b, p.nesign ? *p.esign : '+');
            sw_buf_put(&b, p.ep, p.nep);
        }
    }
    out = sw_buf_detach(&b);
    if (!match_float(out, strlen(out)) && !match_int(out, strlen(out))) {
        free(out);
        return NULL;
    }
    return out;
}

bool sw_yaml11__word_bool(const char *s, size_t n)
{
    bool b;

    return match_bool(s, n, &b) && strchr("yYnNoO", s[0]) != NULL;
}
