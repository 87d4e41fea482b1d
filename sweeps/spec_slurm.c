/*
 * spec_slurm.c - the sweep file's `slurm:` section: what every job of the
 * sweep asks Slurm for when it runs with `--backend slurm` (partition,
 * account, QoS, time limit, CPUs, memory, constraint, and `extra` sbatch
 * options), as sbatch arguments in document order. The same checks serve
 * `sweep run --slurm-arg`. Other backends ignore the section, so one file
 * runs anywhere. docs/slurm.md says what each key becomes.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/spec_internal.h"

/* Options sweep sets itself, each job being named by its run and writing
 * into its folder. */
static const char *const owned[] = {
    "--job-name", "-J",          "--output", "-o", "--error",
    "-e",         "--open-mode", "--chdir",  "-D", "--export",
    "--parsable", "--input",     "-i",
};

/* Options that would take a job out of sweep's hands, and why. */
static const char *const unwatched[][2] = {
    {"--array", "sweep submits one job per attempt and watches each; "
                "`parallel` says how many run at once"},
    {"-a", "sweep submits one job per attempt and watches each; `parallel` "
           "says how many run at once"},
    {"--wrap", "the job's command is the sweep's `command`"},
    {"--wait", "sweep never waits for a job: it polls them all"},
    {"-W", "sweep never waits for a job: it polls them all"},
    {"--test-only", "it would submit nothing"},
    {"--hold", "a held job would never start"},
    {"-H", "a held job would never start"},
};

/* The option's name in `arg`: up to '=' for a long one, two characters
 * for a short one. */
static size_t name_len(const char *arg)
{
    if (arg[1] == '-')
        return strcspn(arg, "=");
    return 2;
}

/* Options that ask for GPUs: the sweep's `resources.gpus` does, so that
 * the store and `sweep report` count what each job holds. */
static const char *const gpu_options[] = {
    "--gpus", "-G", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket",
    "--gres",
};

/* Whether option `out` (its name `len` long) asks for GPUs: --gpus and
 * its kin, or a --gres naming gpu or shard. */
static bool asks_gpus(const char *out, size_t len)
{
    const char *v = out + len + (out[len] == '=');
    size_t i;

    for (i = 0; i < sizeof(gpu_options) / sizeof(gpu_options[0]); i++)
        if (len == strlen(gpu_options[i]) &&
            strncmp(out, gpu_options[i], len) == 0)
            return strcmp(gpu_options[i], "--gres") != 0 || strstr(v, "gpu") ||
                   strstr(v, "shard");
    return false;
}

/* Refuses option `out` (as written: `text`) when sweep cannot leave it to
 * the user; the message says why. */
static bool refused(const char *text, const char *out)
{
    size_t i, len = name_len(out);

    for (i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        if (len == strlen(owned[i]) && strncmp(out, owned[i], len) == 0) {
            sw_error_set(SW_EINVALID,
                         "'%s': sweep sets %s itself (each trial's job is "
                         "named by its run and writes into its folder)",
                         text, owned[i]);
            return true;
        }
    for (i = 0; i < sizeof(unwatched) / sizeof(unwatched[0]); i++)
        if (len == strlen(unwatched[i][0]) &&
            strncmp(out, unwatched[i][0], len) == 0) {
            sw_error_set(SW_EINVALID, "'%s': %s cannot be used: %s", text,
                         unwatched[i][0], unwatched[i][1]);
            return true;
        }
    if (asks_gpus(out, len)) {
        sw_error_set(SW_EINVALID,
                     "'%s': ask for GPUs with `resources: {gpus: N}` "
                     "instead (sweep gives each job --gres=gpu:N from it, "
                     "and counts them in the store and `sweep report`; a "
                     "request of its own here would hold GPUs sweep does "
                     "not count)",
                     text);
        return true;
    }
    return false;
}

char *sw_spec_slurm_arg(const char *text)
{
    const char *s = text ? text : "";
    size_t i, n, gap;
    char *out;

    while (isspace((unsigned char)*s))
        s++;
    if (strncmp(s, "#SBATCH", 7) == 0)
        for (s += 7; isspace((unsigned char)*s); s++)
            ;
    n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n < 2 || s[0] != '-' || s[1] == ' ') {
        sw_error_set(SW_EINVALID,
                     "'%s' is not an sbatch option (e.g. --constraint=a100)",
                     text ? text : "");
        return NULL;
    }
    out = sw_strndup(s, n);
    /* "--opt value" and "-p value" become one word, as sbatch reads it */
    gap = strcspn(out, " \t=");
    if (out[gap] == ' ' || out[gap] == '\t') {
        i = gap;
        while (out[i] == ' ' || out[i] == '\t')
            i++;
        if (out[1] == '-')
            out[gap++] = '=';
        memmove(out + gap, out + i, strlen(out + i) + 1);
    }
    if (refused(text, out)) {
        free(out);
        return NULL;
    }
    return out;
}

static void add_arg(sw_spec__ctx *c, char *arg)
{
    sw_spec *sp = c->spec;

    sw_grow(&sp->slurm_args, &sp->cap_slurm_args, sp->n_slurm_args + 2,
            sizeof(char *));
    sp->slurm_args[sp->n_slurm_args++] = arg;
    sp->slurm_args[sp->n_slurm_args] = NULL;
}

/* A word with no spaces: partition, account, qos, constraint, mem. */
static bool want_word(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (v->type == SW_INT)
        return true;
    if (!sw_spec__want(c, v, path, SW_STR))
        return false;
    if (!v->u.s[0] || strpbrk(v->u.s, " \t\n")) {
        sw_spec__err(c, v, path, "must be one word, not '%s'", v->u.s);
        return false;
    }
    return true;
}

/* Minutes, or Slurm's "MM:SS", "HH:MM:SS", "D-HH[:MM[:SS]]". */
static bool valid_time(const char *s)
{
    size_t digits = 0, colons = 0, dashes = 0;

    if (strcmp(s, "UNLIMITED") == 0 || strcmp(s, "INFINITE") == 0)
        return true;
    for (; *s; s++) {
        if (isdigit((unsigned char)*s))
            digits++;
        else if (*s == ':' && digits && colons < 2)
            colons++, digits = 0;
        else if (*s == '-' && digits && !colons && !dashes)
            dashes++, digits = 0;
        else
            return false;
    }
    return digits > 0;
}

static void time_key(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (v->type == SW_INT && v->u.i > 0) {
        add_arg(c, sw_aprintf("--time=%lld", (long long)v->u.i));
        return;
    }
    if (v->type == SW_STR && valid_time(v->u.s)) {
        add_arg(c, sw_aprintf("--time=%s", v->u.s));
        return;
    }
    sw_spec__err(c, v, path,
                 "must be minutes (a positive integer) or a Slurm time such "
                 "as \"2:00:00\" or \"1-12:00:00\"");
}

static void extra_key(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    size_t i;
    char *arg;

    if (v->type == SW_STR) {
        if ((arg = sw_spec_slurm_arg(v->u.s)) != NULL)
            add_arg(c, arg);
        else
            sw_spec__err(c, v, path, "%s", sw_error_last());
        return;
    }
    if (!sw_spec__want(c, v, path, SW_LIST))
        return;
    for (i = 0; i < v->u.list.len; i++)
        extra_key(c, v->u.list.items[i], path);
}

/* sweep's own keys of the section, for the Slurm executor (not sbatch):
 * submit_rate (sbatch calls a second, above 0) and pending_notice (the
 * seconds a job may wait in the queue before it is said), as
 * --sweep-submit-rate=N and --sweep-pending-notice=N. */
static void own_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                    const char *path)
{
    bool rate = strcmp(key, "submit_rate") == 0;
    double x = -1;

    if (!sw_value_number(v, &x) || !(rate ? x > 0 : x >= 0) || x > 1e6) {
        sw_spec__err(c, v, path,
                     rate ? "must be a number of sbatch calls a second, "
                            "above 0"
                          : "must be a number of seconds, from 0");
        return;
    }
    add_arg(c, sw_aprintf("--sweep-%s=%g",
                          rate ? "submit-rate" : "pending-notice", x));
}

static const struct {
    const char *key, *option;
} words[] = {
    {"partition", "--partition"},
    {"account", "--account"},
    {"qos", "--qos"},
    {"constraint", "--constraint"},
    {"mem", "--mem"},
    {"cpus_per_task", "--cpus-per-task"},
};

/* Whether `s` is a whole number above 0, as digits. */
static bool positive_digits(const char *s)
{
    size_t n = strspn(s, "0123456789");

    return n > 0 && !s[n] && strspn(s, "0") < n;
}

/* What sbatch takes for --mem: a number of megabytes, with an optional
 * unit K, M, G or T ("16G", "500M"). */
static bool mem_size(const char *s)
{
    size_t n = strspn(s, "0123456789");

    return n > 0 && (!s[n] || (strchr("KMGTkmgt", s[n]) && !s[n + 1]));
}

/* A word that sbatch would refuse for its option: said, true. */
static bool bad_word(sw_spec__ctx *c, const char *key, const sw_value *v,
                     const char *path)
{
    if (v->type != SW_STR)
        return false;
    if (strcmp(key, "cpus_per_task") == 0 && !positive_digits(v->u.s)) {
        sw_spec__err(c, v, path, "must be a whole number above 0, not '%s'",
                     v->u.s);
        return true;
    }
    if (strcmp(key, "mem") == 0 && !mem_size(v->u.s)) {
        sw_spec__err(c, v, path,
                     "must be megabytes or a size with a unit K, M, G or T "
                     "(sbatch's --mem, such as 16G), not '%s'",
                     v->u.s);
        return true;
    }
    return false;
}

static void slurm_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                      const char *path, void *arg)
{
    size_t i;

    (void)arg;
    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcmp(key, words[i].key) != 0)
            continue;
        if (bad_word(c, key, v, path))
            return;
        if (v->type == SW_INT && v->u.i > 0)
            add_arg(c,
                    sw_aprintf("%s=%lld", words[i].option, (long long)v->u.i));
        else if (v->type == SW_INT)
            sw_spec__err(c, v, path, "must be above 0");
        else if (want_word(c, v, path))
            add_arg(c, sw_aprintf("%s=%s", words[i].option, v->u.s));
        return;
    }
    if (strcmp(key, "time") == 0)
        time_key(c, v, path);
    else if (strcmp(key, "submit_rate") == 0 ||
             strcmp(key, "pending_notice") == 0)
        own_key(c, key, v, path);
    else if (strcmp(key, "extra") == 0)
        extra_key(c, v, path);
    else
        sw_spec__unknown_key_in(c, key, v, path,
                                "partition account qos time constraint mem "
                                "cpus_per_task extra submit_rate "
                                "pending_notice");
}

void sw_spec__top_slurm(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    sw_spec__each_key(c, v, path, slurm_key, NULL);
}
