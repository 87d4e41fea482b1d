/*
 * command.c - rendering a trial's argv as W&B's agent does.
 *
 * Two steps, in W&B's order: first every ${envvar:NAME} is replaced inside
 * any token (an unset variable becomes its own name, as in W&B); then a
 * token that is exactly ${macro} is replaced by zero or more tokens. Any
 * other text is copied literally, so a macro inside a longer token stays
 * as it is. Values are rendered with Python's str().
 *
 * With keep_envvars the first step is put off until launch: the argv that
 * is stored and shown keeps ${envvar:NAME}, so that a secret passed that
 * way is never written down. A token holding a reference is then kept
 * whole, never taken for a macro.
 */
#include "sweeps/command.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const sw_command_default[] = {"${env}", "${interpreter}",
                                          "${program}", "${args}"};
const size_t sw_command_default_len = 4;

typedef struct {
    char **v;
    size_t len, cap;
} argv_b;

static void push(argv_b *a, char *s)
{
    sw_grow(&a->v, &a->cap, a->len + 2, sizeof(char *));
    a->v[a->len++] = s;
    a->v[a->len] = NULL;
}

/* The kinds of argument list; each renders one parameter. */
typedef enum {
    ARGS,            /* --name=v */
    ARGS_NO_HYPHENS, /* name=v */
    ARGS_NO_BOOLS,   /* --name for True, nothing for False */
    ARGS_NO_EQUALS,  /* --name v */
    ARGS_HYDRA_ADD,  /* +name=v */
    ARGS_HYDRA_SET,  /* ++name=v */
} args_kind;

static const struct {
    const char *macro;
    args_kind kind;
} arg_macros[] = {
    {"args", ARGS},
    {"args_no_hyphens", ARGS_NO_HYPHENS},
    {"args_no_boolean_flags", ARGS_NO_BOOLS},
    {"args_no_equals", ARGS_NO_EQUALS},
    {"args_append_hydra", ARGS_HYDRA_ADD},
    {"args_override_hydra", ARGS_HYDRA_SET},
};

static const char *const other_macros[] = {
    "env",       "interpreter",    "program",
    "args_json", "args_json_file", "args_dict"};

static void push_arg(argv_b *a, args_kind kind, const char *name,
                     const sw_value *v)
{
    static const char *const prefix[] = {"--", "", "--", "--", "+", "++"};
    char *text = sw_value_to_py(v);

    if (kind == ARGS_NO_BOOLS && v->type == SW_BOOL) {
        if (v->u.b)
            push(a, sw_aprintf("--%s", name));
        free(text);
        return;
    }
    if (kind == ARGS_NO_EQUALS) {
        push(a, sw_aprintf("--%s", name));
        push(a, text);
        return;
    }
    push(a, sw_aprintf("%s%s=%s", prefix[kind], name, text));
    free(text);
}

static void push_args(argv_b *a, args_kind kind, const sw_value *params)
{
    size_t i;

    for (i = 0; params && i < params->u.map.len; i++)
        push_arg(a, kind, params->u.map.keys[i], params->u.map.vals[i]);
}

/* ${args_dict}: W&B's agent extends the argv list with a dict of the
 * parameters, and a Python list extended by a dict takes its keys. */
static void push_names(argv_b *a, const sw_value *params)
{
    size_t i;

    for (i = 0; params && i < params->u.map.len; i++)
        push(a, sw_strdup(params->u.map.keys[i]));
}

char *sw_command_args_json(const sw_value *params)
{
    sw_buf b = SW_BUF_INIT;

    sw_value_write_json(&b, params, false);
    return sw_buf_detach(&b);
}

static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    char *copy, *dir, *save = NULL, *full;
    bool found = false;

    if (!path)
        return false;
    copy = sw_strdup(path);
    for (dir = strtok_r(copy, ":", &save); dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        full = sw_aprintf("%s/%s", dir[0] ? dir : ".", prog);
        found = access(full, X_OK) == 0;
        free(full);
    }
    free(copy);
    return found;
}

const char *sw_command_interpreter(void)
{
    const char *env = getenv("SWEEP_INTERPRETER");

    if (env && env[0])
        return env;
    return on_path("python") ? "python" : "python3";
}

static bool is_envvar_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Step 1: ${envvar:NAME} anywhere in a token. */
static char *expand_envvars(const char *tok, const sw_command_opts *o)
{
    static const char open[] = "${envvar:";
    sw_buf b = SW_BUF_INIT;
    const char *p = tok, *hit, *end;
    const char *val;
    char *name;

    while ((hit = strstr(p, open))) {
        for (end = hit + sizeof(open) - 1; is_envvar_char(*end); end++)
            ;
        sw_buf_put(&b, p, (size_t)(hit - p));
        if (*end != '}') { /* not W&B's pattern: keep it literally */
            sw_buf_put(&b, hit, (size_t)(end - hit));
            p = end;
            continue;
        }
        name = sw_strndup(hit + sizeof(open) - 1,
                          (size_t)(end - hit) - (sizeof(open) - 1));
        val = o->getenv ? o->getenv(name) : getenv(name);
        sw_buf_puts(&b, val ? val : name);
        free(name);
        p = end + 1;
    }
    sw_buf_puts(&b, p);
    return sw_buf_detach(&b);
}

/* Whether `tok` holds a ${envvar:NAME} that expand_envvars replaces. */
static bool has_envvar(const char *tok)
{
    static const char open[] = "${envvar:";
    const char *hit, *end;

    for (; (hit = strstr(tok, open)); tok = end) {
        for (end = hit + sizeof(open) - 1; is_envvar_char(*end); end++)
            ;
        if (*end == '}')
            return true;
    }
    return false;
}

/* The macro name of a whole-token macro ("args" for "${args}"), or NULL. */
static char *macro_name(const char *tok)
{
    size_t n = strlen(tok);

    if (n < 3 || strncmp(tok, "${", 2) != 0 || tok[n - 1] != '}')
        return NULL;
    return sw_strndup(tok + 2, n - 3);
}

static bool expand_macro(argv_b *a, const char *m, const sw_spec *spec,
                         const sw_value *params, const sw_command_opts *o)
{
    size_t i;

    for (i = 0; i < sizeof(arg_macros) / sizeof(arg_macros[0]); i++) {
        if (strcmp(m, arg_macros[i].macro) == 0) {
            push_args(a, arg_macros[i].kind, params);
            return true;
        }
    }
    if (strcmp(m, "env") == 0)
        push(a, sw_strdup("/usr/bin/env"));
    else if (strcmp(m, "interpreter") == 0)
        push(a, sw_strdup(o->interpreter ? o->interpreter : "python"));
    else if (strcmp(m, "program") == 0 && spec->program)
        push(a, sw_strdup(spec->program));
    else if (strcmp(m, "args_json") == 0)
        push(a, sw_command_args_json(params));
    else if (strcmp(m, "args_dict") == 0)
        push_names(a, params);
    else if (strcmp(m, "args_json_file") == 0)
        push(a, sw_strdup(o->args_json_file ? o->args_json_file
                                            : "${args_json_file}"));
    else
        return false;
    return true;
}

int sw_command_render(char ***out, size_t *argc, const sw_spec *spec,
                      const sw_value *params, const sw_command_opts *opts)
{
    static const sw_command_opts defaults = SW_COMMAND_OPTS_INIT;
    const sw_command_opts *o = opts ? opts : &defaults;
    const char *const *tokens =
        spec->command ? (const char *const *)spec->command : sw_command_default;
    size_t n = spec->command ? spec->n_command : sw_command_default_len;
    argv_b a = {NULL, 0, 0};
    size_t i;
    char *tok, *m;

    push(&a, NULL); /* ensure a terminated array even when empty */
    a.len = 0;
    for (i = 0; i < n; i++) {
        if (o->keep_envvars && has_envvar(tokens[i])) {
            push(&a, sw_strdup(tokens[i]));
            continue;
        }
        tok = expand_envvars(tokens[i], o);
        m = macro_name(tok);
        if (m && expand_macro(&a, m, spec, params, o))
            free(tok);
        else if (m)
            free(tok); /* an unknown macro expands to nothing, as in W&B */
        else
            push(&a, tok);
        free(m);
    }
    if (a.len == 0) {
        sw_command_free(a.v);
        return sw_error_set(SW_EINVALID, "the command renders to nothing");
    }
    *out = a.v;
    if (argc)
        *argc = a.len;
    return SW_OK;
}

void sw_command_free(char **argv)
{
    size_t i;

    for (i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

char **sw_command_expand_envvars(char *const *argv, const sw_command_opts *opts)
{
    static const sw_command_opts defaults = SW_COMMAND_OPTS_INIT;
    const sw_command_opts *o = opts ? opts : &defaults;
    argv_b a = {NULL, 0, 0};

    push(&a, NULL);
    a.len = 0;
    for (; *argv; argv++)
        push(&a, expand_envvars(*argv, o));
    return a.v;
}

static bool known_macro(const char *m)
{
    size_t i;

    for (i = 0; i < sizeof(arg_macros) / sizeof(arg_macros[0]); i++)
        if (strcmp(m, arg_macros[i].macro) == 0)
            return true;
    for (i = 0; i < sizeof(other_macros) / sizeof(other_macros[0]); i++)
        if (strcmp(m, other_macros[i]) == 0)
            return true;
    return false;
}

void sw_command_check(const sw_spec *spec, sw_diags *diags)
{
    const char *const *tokens =
        spec->command ? (const char *const *)spec->command : sw_command_default;
    size_t n = spec->command ? spec->n_command : sw_command_default_len;
    const sw_value *cmd = sw_value_map_get(spec->doc, "command");
    int line = cmd ? cmd->line : 0, col = cmd ? cmd->col : 0;
    size_t i;
    char *m;

    if (!spec->command && !spec->program) {
        /* valid for W&B: a file for wandb.agent(function=...) */
        sw_diags_add(diags, true, 0, 0, NULL,
                     "the file has neither `program` nor `command`: "
                     "`sweep run FILE -- COMMAND...` gives the trial's "
                     "command");
        return;
    }
    for (i = 0; i < n; i++) {
        m = macro_name(tokens[i]);
        if (m && strcmp(m, "program") == 0 && !spec->program)
            sw_diags_add(diags, false, line, col, "command",
                         "${program} is used but the sweep has no program");
        else if (m && strcmp(m, "args_dict") == 0)
            sw_diags_add(diags, true, line, col, "command",
                         "${args_dict} expands to the parameter names "
                         "alone, one token each, as W&B's agent does (it "
                         "extends the command with a dict); ${args_json} "
                         "gives names and values");
        else if (m && strncmp(m, "envvar:", 7) != 0 && !known_macro(m))
            sw_diags_add(diags, true, line, col, "command",
                         "unknown macro ${%s} expands to nothing (as in "
                         "W&B)",
                         m);
        free(m);
    }
}
