/*
 * command.h - a trial's command line, rendered from the sweep's `command`
 * and the trial's parameters exactly as W&B's agent renders it.
 *
 * The result is an argv array, never a shell string: a parameter value
 * such as `x; rm -rf ~` is one literal element.
 */
#ifndef SW_COMMAND_H
#define SW_COMMAND_H

#include "sweeps/spec.h"

typedef struct {
    unsigned int version;
    const char *interpreter;    /* ${interpreter}; NULL: "python" */
    const char *args_json_file; /* ${args_json_file}; NULL: left as is */
    /* Looks up ${envvar:NAME}; NULL: the process environment. */
    const char *(*getenv)(const char *name);
    /* Leaves every ${envvar:NAME} as it is (a token holding one is not a
     * macro), for the argv that is stored and shown: a variable may hold
     * a secret. sw_command_expand_envvars expands it at launch. */
    bool keep_envvars;
} sw_command_opts;

#define SW_COMMAND_OPTS_VERSION 2
#define SW_COMMAND_OPTS_INIT                                                   \
    {                                                                          \
        SW_COMMAND_OPTS_VERSION, NULL, NULL, NULL, false                       \
    }

/* What ${interpreter} is on this machine: $SWEEP_INTERPRETER, else
 * `python` when it is on PATH (W&B's choice), else `python3` (Debian and
 * others ship no `python`). Borrowed. */
const char *sw_command_interpreter(void);

/* The default command, W&B's: ${env} ${interpreter} ${program} ${args}. */
extern const char *const sw_command_default[];
extern const size_t sw_command_default_len;

/* Renders the argv of a trial with nested parameter map `params`. *out is
 * a NULL-terminated array the caller frees with sw_command_free; *argc
 * (may be NULL) gets its length. `opts` may be NULL. */
int sw_command_render(char ***out, size_t *argc, const sw_spec *spec,
                      const sw_value *params, const sw_command_opts *opts);
void sw_command_free(char **argv);

/* A copy of `argv` (NULL-terminated) with every ${envvar:NAME} replaced
 * as sw_command_render replaces it (an unset variable becomes NAME), for
 * the argv of a trial rendered with keep_envvars. The caller frees with
 * sw_command_free. `opts` may be NULL; only its getenv is used. */
char **sw_command_expand_envvars(char *const *argv,
                                 const sw_command_opts *opts);

/* The text ${args_json} expands to: json.dumps of the parameters.
 * The caller frees. */
char *sw_command_args_json(const sw_value *params);

/* Adds to `diags` what is wrong with the spec's command: ${program} used
 * without a `program` (an error), a macro W&B does not know (a warning:
 * W&B drops it, and so do we). */
void sw_command_check(const sw_spec *spec, sw_diags *diags);

#endif
