/*
 * load.c - reads a sweep file (YAML or JSON) into a tree of values, each
 * located at the line and column (1-based) it was written, and hands the
 * tree to the validator.
 *
 * YAML is read as W&B reads it, with PyYAML's yaml.safe_load: YAML 1.1
 * scalars (yaml11.c), aliases copied, `<<` merge keys, a duplicate key
 * replacing the earlier one, one document. JSON (a .json file, or text
 * that starts with '{' and parses as JSON) is read as Python's json reads
 * it; cJSON parses it and a small scan of the same text, in the same
 * order, finds where each value was written. This file is the only one
 * that includes <yaml.h> and <cjson/cJSON.h>. Nothing here trusts the
 * input: nesting is capped, and aliases cannot expand without bound.
 */
#include "sweeps/spec.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "sweeps/json.h"
#include "sweeps/yaml11.h"

#define MAX_DEPTH 64            /* nested lists and mappings */
#define MAX_ALIAS_NODES 1000000 /* values made by copying aliases */
#define TAG_MERGE "tag:yaml.org,2002:merge"
#define NUL_PROBLEM                                                            \
    "a NUL character (\\0) is not allowed in a key or value: no command "      \
    "line or file name can carry it"

typedef struct {
    char *key;
    sw_value *val;
    int line, col; /* where the key was written */
} pair;

typedef struct {
    pair *items;
    size_t len, cap;
} pairs;

typedef struct {
    sw_value *v; /* the list or mapping being built */
    char *anchor;
    pairs own, merged; /* a mapping's pairs, in the order read */
    bool has_key, key_merge, key_bad;
    char *key;
    int kline, kcol;
} frame;

typedef struct {
    char *name;
    const sw_value *v; /* borrowed: lives in the tree or the graveyard */
    size_t size;
} anchor;

typedef struct {
    sw_diags *diags;
    sw_spec__keys *keys;
    frame stack[MAX_DEPTH];
    size_t depth;
    anchor *anchors;
    size_t n_anchors, cap_anchors;
    sw_value *grave; /* values dropped while reading, freed at the end */
    size_t alias_nodes;
    size_t docs;
    sw_value *root;
    bool fatal;
} reader;

static void problem(reader *r, bool fatal, int line, int col, const char *msg)
{
    sw_diags_add(r->diags, false, line, col, NULL, "%s", msg);
    if (fatal)
        r->fatal = true;
}

static void bury(reader *r, sw_value *v)
{
    if (v)
        sw_value_list_push(r->grave, v);
}

static size_t count_nodes(const sw_value *v)
{
    size_t i, n = 1;

    if (v->type == SW_LIST)
        for (i = 0; i < v->u.list.len; i++)
            n += count_nodes(v->u.list.items[i]);
    if (v->type == SW_MAP)
        for (i = 0; i < v->u.map.len; i++)
            n += count_nodes(v->u.map.vals[i]);
    return n;
}

/* A copy of `v` made for an alias or a merge, within the budget; NULL
 * (and a fatal problem) past it. */
static sw_value *copy_within_budget(reader *r, const sw_value *v, size_t size,
                                    int line, int col)
{
    if (r->alias_nodes + size > MAX_ALIAS_NODES) {
        problem(r, true, line, col,
                "aliases expand to too many values (more than 1000000)");
        return NULL;
    }
    r->alias_nodes += size;
    return sw_value_clone(v);
}

static void key_at(reader *r, const sw_value *v, int line, int col)
{
    sw_grow(&r->keys->items, &r->keys->cap, r->keys->len + 1,
            sizeof(*r->keys->items));
    r->keys->items[r->keys->len].val = v;
    r->keys->items[r->keys->len].line = line;
    r->keys->items[r->keys->len++].col = col;
}

static void pairs_add(pairs *ps, char *key, sw_value *val, int line, int col)
{
    sw_grow(&ps->items, &ps->cap, ps->len + 1, sizeof(*ps->items));
    ps->items[ps->len].key = key;
    ps->items[ps->len].val = val;
    ps->items[ps->len].line = line;
    ps->items[ps->len++].col = col;
}

static void pairs_dispose(pairs *ps)
{
    size_t i;

    for (i = 0; i < ps->len; i++) {
        free(ps->items[i].key);
        sw_value_free(ps->items[i].val);
    }
    free(ps->items);
    memset(ps, 0, sizeof(*ps));
}

/* An index of a mapping's keys while it is assembled, so a mapping of
 * n keys takes O(n), not O(n^2): open addressing over the keys' slots in
 * the map (SIZE_MAX: empty), at most half full. */
typedef struct {
    size_t *slots, mask;
} key_index;

static void key_index_init(key_index *ix, size_t n)
{
    size_t cap = 8, i;

    while (cap < 2 * n)
        cap *= 2;
    ix->slots = sw_malloc(cap * sizeof(*ix->slots));
    for (i = 0; i < cap; i++)
        ix->slots[i] = SIZE_MAX;
    ix->mask = cap - 1;
}

/* The slot of `key` in the index: where `map` holds it, or the empty
 * slot where it would go. */
static size_t *key_slot(const key_index *ix, const sw_value *map,
                        const char *key)
{
    size_t h = sw_str_hash(key) & ix->mask;

    while (ix->slots[h] != SIZE_MAX &&
           strcmp(map->u.map.keys[ix->slots[h]], key) != 0)
        h = (h + 1) & ix->mask;
    return &ix->slots[h];
}

/* Puts one pair into `map`: a key seen before keeps its place and takes
 * the new value, as a Python dict does. Consumes the pair. */
static void put_pair(reader *r, sw_value *map, key_index *ix, pair *p, bool own,
                     bool *owns)
{
    size_t *slot = key_slot(ix, map, p->key), i = *slot;

    if (i != SIZE_MAX) {
        if (own && owns[i])
            sw_diags_add(r->diags, true, p->line, p->col, NULL,
                         "duplicate key '%s': the last one wins, as in W&B",
                         p->key);
        bury(r, map->u.map.vals[i]);
        map->u.map.vals[i] = p->val;
    } else {
        i = *slot = map->u.map.len;
        sw_value_map_append(map, p->key, p->val);
        p->key = NULL; /* the map has it */
    }
    owns[i] = own;
    if (own)
        key_at(r, p->val, p->line, p->col);
    free(p->key);
    p->key = NULL;
    p->val = NULL;
}

/* The frame's pairs, merged ones first, into its mapping. */
static void assemble_map(reader *r, frame *f)
{
    size_t n = f->merged.len + f->own.len, i;
    bool *owns = sw_calloc(n + 1, sizeof(bool));
    key_index ix;

    key_index_init(&ix, n);
    for (i = 0; i < f->merged.len; i++)
        put_pair(r, f->v, &ix, &f->merged.items[i], false, owns);
    for (i = 0; i < f->own.len; i++)
        put_pair(r, f->v, &ix, &f->own.items[i], true, owns);
    f->merged.len = f->own.len = 0;
    free(ix.slots);
    free(owns);
}

static void merge_one(reader *r, frame *f, const sw_value *m, int line, int col)
{
    size_t i;
    sw_value *c;

    for (i = 0; i < m->u.map.len && !r->fatal; i++) {
        c = copy_within_budget(r, m->u.map.vals[i],
                               count_nodes(m->u.map.vals[i]), line, col);
        if (c)
            pairs_add(&f->merged, sw_strdup(m->u.map.keys[i]), c, line, col);
    }
}

/* `<<: value`: a mapping, or a list of mappings where the first listed
 * wins. Consumes `v`. */
static void merge_into(reader *r, frame *f, sw_value *v)
{
    size_t i;
    bool ok = v->type == SW_MAP || v->type == SW_LIST;

    for (i = 0; ok && v->type == SW_LIST && i < v->u.list.len; i++)
        ok = v->u.list.items[i]->type == SW_MAP;
    if (!ok)
        problem(r, false, f->kline, f->kcol,
                "a merge key (<<) takes a mapping or a list of mappings");
    else if (v->type == SW_MAP)
        merge_one(r, f, v, f->kline, f->kcol);
    else
        for (i = v->u.list.len; i-- > 0;)
            merge_one(r, f, v->u.list.items[i], f->kline, f->kcol);
    bury(r, v);
}

static void register_anchor(reader *r, char *name, const sw_value *v, int line,
                            int col)
{
    size_t i;

    for (i = 0; i < r->n_anchors; i++) {
        if (strcmp(r->anchors[i].name, name) == 0) {
            problem(r, true, line, col,
                    "this anchor is defined twice (PyYAML refuses it)");
            free(name);
            return;
        }
    }
    sw_grow(&r->anchors, &r->cap_anchors, r->n_anchors + 1,
            sizeof(*r->anchors));
    r->anchors[r->n_anchors].name = name;
    r->anchors[r->n_anchors].v = v;
    r->anchors[r->n_anchors++].size = count_nodes(v);
}

/* Hands a finished value to its parent (or makes it the document).
 * Consumes `v` and `anchor_name`. */
static void deliver(reader *r, sw_value *v, char *anchor_name)
{
    frame *f;

    if (anchor_name)
        register_anchor(r, anchor_name, v, v->line, v->col);
    if (r->depth == 0) {
        bury(r, r->root);
        r->root = v;
        return;
    }
    f = &r->stack[r->depth - 1];
    if (f->v->type == SW_LIST) {
        sw_value_list_push(f->v, v);
    } else if (!f->has_key) { /* a list or mapping used as a key */
        problem(r, false, v->line, v->col,
                "a key must be a scalar (W&B cannot read this key)");
        bury(r, v);
        f->has_key = f->key_bad = true;
    } else {
        if (f->key_bad)
            bury(r, v);
        else if (f->key_merge)
            merge_into(r, f, v);
        else
            pairs_add(&f->own, f->key, v, f->kline, f->kcol);
        f->key = NULL;
        f->has_key = f->key_merge = f->key_bad = false;
    }
}

static void mark_of(const yaml_mark_t *m, int *line, int *col)
{
    *line = m->line + 1 > (size_t)INT32_MAX ? INT32_MAX : (int)m->line + 1;
    *col = m->column + 1 > (size_t)INT32_MAX ? INT32_MAX : (int)m->column + 1;
}

static char *dup_anchor(const yaml_char_t *a)
{
    return a ? sw_strdup((const char *)a) : NULL;
}

/* A scalar's value, as PyYAML composes and constructs it. */
static sw_value *scalar_value(reader *r, const yaml_event_t *ev, int line,
                              int col)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    sw_value *v = NULL;
    int error;

    if (memchr(s, '\0', n)) {
        problem(r, false, line, col, NUL_PROBLEM);
        v = sw_value_null();
        v->line = line;
        v->col = col;
        return v;
    }
    if (tag)
        error = sw_yaml11__tagged(&v, tag, s, n);
    else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        error = sw_yaml11__plain(&v, s, n);
    else
        v = sw_value_strn(s, n), error = SW_OK;
    if (error) {
        problem(r, false, line, col, sw_error_last());
        v = sw_value_null();
    }
    v->line = line;
    v->col = col;
    return v;
}

/* The text a non-string key stands for, as json.dumps writes a key. */
static char *key_text(const sw_value *k)
{
    sw_buf b = SW_BUF_INIT;

    if (k->type == SW_STR)
        return sw_strdup(k->u.s);
    sw_value_write_json(&b, k, true);
    return sw_buf_detach(&b);
}

static void on_key(reader *r, frame *f, const yaml_event_t *ev, int line,
                   int col)
{
    const char *s = (const char *)ev->data.scalar.value;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    sw_value *k;

    f->has_key = true;
    f->kline = line;
    f->kcol = col;
    if ((plain && !tag && strcmp(s, "<<") == 0) ||
        (tag && strcmp(tag, TAG_MERGE) == 0)) {
        f->key_merge = true;
        return;
    }
    if (plain && !tag && strcmp(s, "=") == 0) /* PyYAML: a str key */
        k = sw_value_str("=");
    else
        k = scalar_value(r, ev, line, col);
    f->key = key_text(k);
    if (ev->data.scalar.anchor)
        register_anchor(r, dup_anchor(ev->data.scalar.anchor), k, line, col);
    bury(r, k);
}

static void on_scalar(reader *r, const yaml_event_t *ev, int line, int col)
{
    frame *f = r->depth ? &r->stack[r->depth - 1] : NULL;

    if (f && f->v->type == SW_MAP && !f->has_key)
        on_key(r, f, ev, line, col);
    else
        deliver(r, scalar_value(r, ev, line, col),
                dup_anchor(ev->data.scalar.anchor));
}

static void on_alias(reader *r, const yaml_event_t *ev, int line, int col)
{
    const char *name = (const char *)ev->data.alias.anchor;
    frame *f = r->depth ? &r->stack[r->depth - 1] : NULL;
    sw_value *v;
    size_t i;

    for (i = 0; i < r->n_anchors; i++)
        if (strcmp(r->anchors[i].name, name) == 0)
            break;
    if (i == r->n_anchors) {
        problem(r, true, line, col,
                "an alias to an anchor not defined before it");
        return;
    }
    v = copy_within_budget(r, r->anchors[i].v, r->anchors[i].size, line, col);
    if (!v)
        return;
    if (f && f->v->type == SW_MAP && !f->has_key && v->type != SW_LIST &&
        v->type != SW_MAP) {
        f->has_key = true;
        f->kline = line;
        f->kcol = col;
        f->key = key_text(v);
        sw_value_free(v);
        return;
    }
    deliver(r, v, NULL);
}

/* Tags a collection may carry: none, "!", or its own kind. */
static bool collection_tag_ok(const yaml_char_t *tag, bool map)
{
    const char *t = (const char *)tag;

    return !t || strcmp(t, "!") == 0 ||
           strcmp(t, map ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq") ==
               0;
}

static void on_start(reader *r, const yaml_event_t *ev, bool map, int line,
                     int col)
{
    const yaml_char_t *tag =
        map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    const yaml_char_t *anc =
        map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    frame *f;

    if (r->depth == MAX_DEPTH) {
        problem(r, true, line, col, "nested deeper than 64 levels");
        return;
    }
    if (!collection_tag_ok(tag, map))
        problem(r, false, line, col,
                "this tag is not supported (only !!map and !!seq on "
                "mappings and lists)");
    f = &r->stack[r->depth++];
    memset(f, 0, sizeof(*f));
    f->v = map ? sw_value_map() : sw_value_list();
    f->v->line = line;
    f->v->col = col;
    f->anchor = dup_anchor(anc);
}

static void on_end(reader *r)
{
    frame *f = &r->stack[--r->depth];

    if (f->v->type == SW_MAP)
        assemble_map(r, f);
    pairs_dispose(&f->own);
    pairs_dispose(&f->merged);
    free(f->key);
    deliver(r, f->v, f->anchor);
}

static void on_event(reader *r, const yaml_event_t *ev)
{
    int line, col;

    mark_of(&ev->start_mark, &line, &col);
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (r->docs++ > 0)
            problem(r, true, line, col,
                    "a second document: a sweep file holds one");
        break;
    case YAML_SCALAR_EVENT:
        on_scalar(r, ev, line, col);
        break;
    case YAML_ALIAS_EVENT:
        on_alias(r, ev, line, col);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        on_start(r, ev, ev->type == YAML_MAPPING_START_EVENT, line, col);
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        on_end(r);
        break;
    default:
        break;
    }
}

static void syntax_error(reader *r, const yaml_parser_t *p)
{
    const yaml_mark_t *m = &p->problem_mark;
    sw_buf b = SW_BUF_INIT;
    int line, col;

    mark_of(m, &line, &col);
    sw_buf_printf(&b, "invalid YAML: %s",
                  p->problem ? p->problem : "cannot read it");
    if (p->context)
        sw_buf_printf(&b, " (%s at line %d)", p->context,
                      (int)p->context_mark.line + 1);
    problem(r, true, line, col, sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

static void read_yaml(reader *r, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    bool done = false;

    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!done && !r->fatal) {
        if (!yaml_parser_parse(&parser, &ev)) {
            syntax_error(r, &parser);
            break;
        }
        on_event(r, &ev);
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
}

/* JSON ---------------------------------------------------------------- */

/* A cursor over the JSON text, kept in step with cJSON's tree. */
typedef struct {
    const char *s;
    size_t len, pos;
    int line, col;
} scan;

static void advance(scan *sc, size_t n)
{
    for (; n > 0 && sc->pos < sc->len; n--, sc->pos++) {
        unsigned char c = (unsigned char)sc->s[sc->pos];

        if (c == '\n') {
            sc->line++;
            sc->col = 1;
        } else if ((c & 0xC0) != 0x80) {
            sc->col++;
        }
    }
}

/* cJSON's skip_whitespace: every byte up to ' '. */
static void skip_ws(scan *sc)
{
    while (sc->pos < sc->len && (unsigned char)sc->s[sc->pos] <= ' ')
        advance(sc, 1);
}

/* Whether the string at sc->pos ("...") holds a NUL, raw or written as
 * \u0000: cJSON would hand it over cut at the NUL. */
static bool string_has_nul(const scan *sc)
{
    size_t i;

    for (i = sc->pos + 1; i < sc->len && sc->s[i] != '"'; i++) {
        if (sc->s[i] == '\0')
            return true;
        if (sc->s[i] != '\\' || i + 1 >= sc->len)
            continue;
        if (sc->s[i + 1] == 'u' && i + 6 <= sc->len &&
            memcmp(sc->s + i + 2, "0000", 4) == 0)
            return true;
        i++; /* the escaped character */
    }
    return false;
}

/* Skips "...", as cJSON's parse_string finds its end. */
static void skip_string(scan *sc)
{
    size_t n = 1;

    while (sc->pos + n < sc->len && sc->s[sc->pos + n] != '"')
        n += sc->s[sc->pos + n] == '\\' ? 2 : 1;
    advance(sc, n + 1);
}

static sw_value *json_value(reader *r, scan *sc, const cJSON *node,
                            size_t depth);

static sw_value *json_number(reader *r, scan *sc, const cJSON *node)
{
    size_t n = strspn(sc->s + sc->pos, "0123456789+-.eE");
    char *tok, *end;
    sw_value *v = NULL;
    long long i;

    if (n > sc->len - sc->pos)
        n = sc->len - sc->pos;
    tok = sw_strndup(sc->s + sc->pos, n);
    if (strpbrk(tok, ".eE")) {
        v = sw_value_float(node->valuedouble);
    } else {
        errno = 0;
        i = strtoll(tok, &end, 10);
        if (errno == ERANGE || *end) {
            problem(r, false, sc->line, sc->col,
                    "integer out of range (beyond 64 bits)");
            v = sw_value_null();
        } else {
            v = sw_value_int((int64_t)i);
        }
    }
    free(tok);
    advance(sc, n);
    return v;
}

static sw_value *json_object(reader *r, scan *sc, const cJSON *node,
                             size_t depth)
{
    frame f;
    const cJSON *c;
    int kl, kc;
    sw_value *v;

    memset(&f, 0, sizeof(f));
    f.v = sw_value_map();
    advance(sc, 1); /* { */
    for (c = node->child; c && !r->fatal; c = c->next) {
        skip_ws(sc);
        kl = sc->line;
        kc = sc->col;
        if (string_has_nul(sc))
            problem(r, false, kl, kc, NUL_PROBLEM);
        skip_string(sc);
        skip_ws(sc);
        advance(sc, 1); /* : */
        v = json_value(r, sc, c, depth + 1);
        if (v)
            pairs_add(&f.own, sw_strdup(c->string ? c->string : ""), v, kl, kc);
        skip_ws(sc);
        advance(sc, 1); /* , or } */
    }
    if (!node->child) {
        skip_ws(sc);
        advance(sc, 1);
    }
    assemble_map(r, &f);
    pairs_dispose(&f.own);
    return f.v;
}

static sw_value *json_array(reader *r, scan *sc, const cJSON *node,
                            size_t depth)
{
    sw_value *list = sw_value_list(), *v;
    const cJSON *c;

    advance(sc, 1); /* [ */
    for (c = node->child; c && !r->fatal; c = c->next) {
        v = json_value(r, sc, c, depth + 1);
        if (v)
            sw_value_list_push(list, v);
        skip_ws(sc);
        advance(sc, 1); /* , or ] */
    }
    if (!node->child) {
        skip_ws(sc);
        advance(sc, 1);
    }
    return list;
}

static sw_value *json_value(reader *r, scan *sc, const cJSON *node,
                            size_t depth)
{
    int line, col;
    sw_value *v;

    skip_ws(sc);
    line = sc->line;
    col = sc->col;
    if (depth >= MAX_DEPTH) {
        problem(r, true, line, col, "nested deeper than 64 levels");
        return NULL;
    }
    if (cJSON_IsObject(node))
        v = json_object(r, sc, node, depth);
    else if (cJSON_IsArray(node))
        v = json_array(r, sc, node, depth);
    else if (cJSON_IsString(node)) {
        if (string_has_nul(sc))
            problem(r, false, line, col, NUL_PROBLEM);
        v = sw_value_str(node->valuestring ? node->valuestring : "");
        skip_string(sc);
    } else if (cJSON_IsNumber(node))
        v = json_number(r, sc, node);
    else if (cJSON_IsBool(node)) {
        v = sw_value_bool(cJSON_IsTrue(node));
        advance(sc, cJSON_IsTrue(node) ? 4 : 5);
    } else {
        v = sw_value_null();
        advance(sc, 4);
    }
    v->line = line;
    v->col = col;
    return v;
}

static void json_error(reader *r, const char *text, size_t len, const char *at,
                       const char *what)
{
    scan sc = {text, len, 0, 1, 1};

    if (at && at >= text && at <= text + len)
        advance(&sc, (size_t)(at - text));
    problem(r, true, sc.line, sc.col, what);
}

/* Reads JSON; false when the text is not JSON (nothing recorded when
 * `quiet`, so the caller can read it as YAML instead). */
static bool read_json(reader *r, const char *text, size_t len, bool quiet)
{
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
    scan sc = {text, len, 0, 1, 1};

    if (doc && end) {
        sc.pos = (size_t)(end - text);
        while (sc.pos < len && (unsigned char)text[sc.pos] <= ' ')
            sc.pos++;
    }
    if (!doc || sc.pos < len) {
        if (!quiet)
            json_error(r, text, len, doc ? text + sc.pos : end,
                       doc ? "invalid JSON: text after the document"
                           : "invalid JSON");
        cJSON_Delete(doc);
        return false;
    }
    sc.pos = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    r->root = json_value(r, &sc, doc, 0);
    cJSON_Delete(doc);
    return true;
}

/* Loading ------------------------------------------------------------- */

#define NOT_REGULAR                                                            \
    "not a regular file (a sweep file cannot be a FIFO, a "                    \
    "device or a directory)"
#define TOO_LARGE "larger than 16 MiB, the limit for a sweep file"

/* Records that `path` cannot be read, as one problem, and returns `code`. */
static int cannot_read(const char *path, sw_diags *diags, const char *why,
                       int code)
{
    sw_diags_add(diags, false, 0, 0, NULL, "cannot read it: %s", why);
    return sw_error_set(code, "%s: cannot read it: %s", path, why);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void read_any(reader *r, const char *name, const char *text, size_t len)
{
    size_t i = 0;

    while (i < len && (unsigned char)text[i] <= ' ')
        i++;
    if (ends_with(name, ".json") || ends_with(name, ".JSON")) {
        read_json(r, text, len, false);
        return;
    }
    if (i < len && text[i] == '{' && !ends_with(name, ".yaml") &&
        !ends_with(name, ".yml") && read_json(r, text, len, true))
        return;
    read_yaml(r, text, len);
}

static void reader_dispose(reader *r)
{
    size_t i;

    while (r->depth > 0) {
        frame *f = &r->stack[--r->depth];

        pairs_dispose(&f->own);
        pairs_dispose(&f->merged);
        free(f->key);
        free(f->anchor);
        sw_value_free(f->v);
    }
    for (i = 0; i < r->n_anchors; i++)
        free(r->anchors[i].name);
    free(r->anchors);
    sw_value_free(r->grave);
    sw_value_free(r->root);
}

/* One JSON reader for sweep files and for what trials send (json.h). */
int sw_json_parse(sw_value **out, const char *text, size_t len)
{
    sw_spec__keys keys = {NULL, 0, 0};
    sw_diags diags;
    reader r;
    char *first;
    int error = SW_OK;

    memset(&r, 0, sizeof(r));
    sw_diags_init(&diags, "JSON");
    r.diags = &diags;
    r.keys = &keys;
    r.grave = sw_value_list();
    if (!text || !read_json(&r, text, len, false) || diags.errors || !r.root) {
        first = sw_diags_first_error(&diags);
        error =
            sw_error_set(SW_EINVALID, "%s", first[0] ? first : "invalid JSON");
        free(first);
    } else {
        *out = r.root;
        r.root = NULL;
    }
    reader_dispose(&r);
    free(keys.items);
    sw_diags_dispose(&diags);
    return error;
}

static sw_spec *spec_new(const char *name, const char *text, size_t len)
{
    sw_spec *spec = sw_calloc(1, sizeof(*spec));

    spec->file = sw_strdup(name);
    spec->source = sw_malloc(len + 1);
    if (len)
        memcpy(spec->source, text, len);
    spec->source[len] = '\0';
    return spec;
}

int sw_spec_parse(sw_spec **out, const char *name, const char *text, size_t len,
                  sw_diags *diags)
{
    sw_spec__keys keys = {NULL, 0, 0};
    size_t errors = diags->errors;
    sw_spec *spec =
        spec_new(name ? name : "<input>", text ? text : "", text ? len : 0);
    reader r;
    char *first;

    memset(&r, 0, sizeof(r));
    r.diags = diags;
    r.keys = &keys;
    r.grave = sw_value_list();
    read_any(&r, spec->file, spec->source, text ? len : 0);
    if (diags->errors == errors) {
        spec->doc = r.root;
        r.root = NULL;
        if (keys.len > 1)
            qsort(keys.items, keys.len, sizeof(*keys.items), sw_spec__key_cmp);
        sw_spec__build(spec, &keys, diags);
    }
    reader_dispose(&r);
    free(keys.items);
    *out = NULL;
    if (diags->errors == errors) {
        *out = spec;
        return SW_OK;
    }
    sw_spec_free(spec);
    first = sw_diags_first_error(diags);
    sw_error_set(SW_EINVALID, "%s", first);
    free(first);
    return SW_EINVALID;
}

/* Reads all of `fd` (at most SW_SPEC_MAX_BYTES + 1 bytes, so a file that
 * grows while read is still caught) into *out, NUL-terminated. */
static int read_fd(int fd, const char *path, sw_buf *out, sw_diags *diags)
{
    char chunk[65536];
    ssize_t n;

    while (out->len <= SW_SPEC_MAX_BYTES) {
        n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cannot_read(path, diags, strerror(errno), SW_EIO);
        if (n == 0)
            return SW_OK;
        sw_buf_put(out, chunk, (size_t)n);
    }
    return cannot_read(path, diags, TOO_LARGE, SW_EINVALID);
}

/* The whole regular file at `path` into *out. Anything else (a FIFO, a
 * device such as /dev/zero, a directory) is refused without reading, and
 * so is a file over SW_SPEC_MAX_BYTES: O_NONBLOCK keeps open() from
 * waiting for a FIFO's writer. */
static int read_file(const char *path, sw_buf *out, sw_diags *diags)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int error;

    if (fd < 0)
        return cannot_read(path, diags, strerror(errno), SW_EIO);
    if (fstat(fd, &st) != 0)
        error = cannot_read(path, diags, strerror(errno), SW_EIO);
    else if (!S_ISREG(st.st_mode))
        error = cannot_read(path, diags, NOT_REGULAR, SW_EINVALID);
    else if (st.st_size > SW_SPEC_MAX_BYTES)
        error = cannot_read(path, diags, TOO_LARGE, SW_EINVALID);
    else
        error = read_fd(fd, path, out, diags);
    close(fd);
    return error;
}

int sw_spec_load(sw_spec **out, const char *path, sw_diags *diags)
{
    sw_buf text = SW_BUF_INIT;
    int error;

    *out = NULL;
    error = read_file(path, &text, diags);
    if (!error)
        error = sw_spec_parse(out, path, sw_buf_cstr(&text), text.len, diags);
    sw_buf_dispose(&text);
    return error;
}
