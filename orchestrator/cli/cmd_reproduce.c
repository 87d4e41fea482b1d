/*
 * cmd_reproduce.c - `sweep reproduce RUN [DIR]`: puts the exact code a run
 * started with into DIR (default $SWEEP_HOME/reproduce/RUN), byte for
 * byte, from the commit recorded for its last attempt (the snapshot of a
 * dirty tree, or HEAD), and prints the folder, command line and
 * environment to run it again.
 *
 * The code comes from the repository the run was recorded in, which must
 * still hold the commit: snapshots are kept under refs/sweep/. DIR must not
 * exist or be empty; nothing is overwritten. The export goes through the
 * provenance module (reproduce.h) and the command line and environment
 * through the trial contract (contract.h), so what is printed is what
 * `sweep run` gave the trial. The lines for people and --json are both
 * written from one value, so they never say different things.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/contract.h"
#include "orchestrator/reproduce.h"

static const char help[] =
    "usage: sweep reproduce RUN [DIR] [--json]\n\n"
    "Writes the exact code run RUN started with into DIR (default:\n"
    "$SWEEP_HOME/reproduce/RUN), and prints its command line and the\n"
    "environment sweep gave it. --json prints one object: run, sweep,\n"
    "dir (absolute), commit, snapshot, head, branch, root, cwd,\n"
    "cwd_in_repository, argv, env.\n";

static const char *json_str(const sw_value *m, const char *key)
{
    const sw_value *v = m ? sw_value_map_get(m, key) : NULL;

    return v && v->type == SW_STR ? v->u.s : NULL;
}

/* The run's git facts; NULL, with a message, when it has none. */
static sw_value *run_git(const sw_run_rec *r)
{
    sw_value *v = NULL;

    if (!r->git) {
        fprintf(stderr,
                "sweep reproduce: run %s has no recorded code (it "
                "did not start in a git repository)\n",
                r->id);
        return NULL;
    }
    if (sw_json_parse(&v, r->git, strlen(r->git)) != SW_OK ||
        v->type != SW_MAP || !json_str(v, "root") || !json_str(v, "commit")) {
        fprintf(stderr, "sweep reproduce: run %s: no commit recorded\n", r->id);
        sw_value_free(v);
        return NULL;
    }
    return v;
}

static sw_value *str_value(const char *s)
{
    return s ? sw_value_str(s) : sw_value_null();
}

/* Where the run started: in the exported tree when it was inside the
 * repository, else where it was (*inside false). The caller frees. */
static char *cwd_of(const sw_value *git, const char *sweep_cwd, const char *dir,
                    bool *inside)
{
    const char *root = json_str(git, "root");
    size_t n = strlen(root);

    *inside = true;
    if (strcmp(sweep_cwd, root) == 0)
        return sw_strdup(dir);
    if (strncmp(sweep_cwd, root, n) == 0 && sweep_cwd[n] == '/')
        return sw_aprintf("%s%s", dir, sweep_cwd + n);
    *inside = false;
    return sw_strdup(sweep_cwd);
}

/* The run's argv as a list; null when none is recorded. */
static sw_value *argv_value(const sw_run_rec *r)
{
    char **argv = sw_contract_argv(r->argv);
    sw_value *list;

    if (!argv)
        return sw_value_null();
    list = sw_value_list();
    for (size_t i = 0; argv[i]; i++)
        sw_value_list_push(list, sw_value_str(argv[i]));
    sw_command_free(argv);
    return list;
}

/* The variables sweep adds to a trial's environment, as the trial
 * contract gives them to the run's last attempt (the rest is inherited
 * from the shell that ran `sweep`), as a map in the contract's order. */
static sw_value *env_value(const sw_run_rec *r, const char *home)
{
    sw_contract c = {
        .home = home,
        .sweep_id = r->sweep_id,
        .run_id = r->id,
        .attempt = r->attempts,
    };
    char **env = sw_contract_env(&c);
    sw_value *map = sw_value_map();

    for (size_t i = 0; env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        char *name =
            eq ? sw_strndup(env[i], (size_t)(eq - env[i])) : sw_strdup(env[i]);
        sw_value_map_set(map, name, sw_value_str(eq ? eq + 1 : ""));
        free(name);
    }
    sw_command_free(env);
    return map;
}

/* What reproduce says, as one map: the human lines and --json both come
 * from it (docs/cli.md names its keys). */
static sw_value *result_value(const sw_run_rec *r, const sw_sweep_rec *s,
                              const sw_value *git, const char *dir,
                              const char *home)
{
    sw_value *v = sw_value_map();
    bool inside;
    char *cwd = cwd_of(git, s->cwd, dir, &inside);

    sw_value_map_set(v, "run", sw_value_str(r->id));
    sw_value_map_set(v, "sweep", sw_value_str(r->sweep_id));
    sw_value_map_set(v, "dir", sw_value_str(dir));
    sw_value_map_set(v, "commit", sw_value_str(json_str(git, "commit")));
    sw_value_map_set(v, "snapshot", str_value(json_str(git, "snapshot")));
    sw_value_map_set(v, "head", str_value(json_str(git, "head")));
    sw_value_map_set(v, "branch", str_value(json_str(git, "branch")));
    sw_value_map_set(v, "root", sw_value_str(json_str(git, "root")));
    sw_value_map_set(v, "cwd", sw_value_str(cwd));
    sw_value_map_set(v, "cwd_in_repository", sw_value_bool(inside));
    sw_value_map_set(v, "argv", argv_value(r));
    sw_value_map_set(v, "env", env_value(r, home));
    free(cwd);
    return v;
}

/* The command line as a shell would need it typed. */
static void print_command(const sw_value *argv)
{
    char **words = sw_calloc(argv->u.list.len + 1, sizeof(char *));
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; i < argv->u.list.len; i++)
        words[i] = argv->u.list.items[i]->u.s;
    sw_cli_quote_argv(&b, words);
    printf("command  %s\n", sw_buf_cstr(&b));
    free(words);
    sw_buf_dispose(&b);
}

/* A string of the result for a person; "-" where it has none. */
static const char *text_of(const sw_value *v, const char *key)
{
    const char *s = json_str(v, key);

    return s ? s : "-";
}

static void print_human(const sw_value *v)
{
    const sw_value *argv = sw_value_map_get(v, "argv");
    const sw_value *env = sw_value_map_get(v, "env");
    const char *head = json_str(v, "head"), *branch = json_str(v, "branch");

    printf("run      %s\ncode     %s\ncommit   %s", text_of(v, "run"),
           text_of(v, "dir"), text_of(v, "commit"));
    if (json_str(v, "snapshot"))
        printf(" (a snapshot of the work tree over %.12s%s%s)",
               head ? head : "no commit", branch ? " on " : "",
               branch ? branch : "");
    printf("\nfrom     %s\ncwd      %s%s\n", text_of(v, "root"),
           text_of(v, "cwd"),
           sw_value_map_get(v, "cwd_in_repository")->u.b
               ? ""
               : " (outside the repository)");
    if (argv->type == SW_LIST)
        print_command(argv);
    for (size_t i = 0; i < env->u.map.len; i++)
        printf("%-9s%s=%s\n", i ? "" : "env", env->u.map.keys[i],
               env->u.map.vals[i]->u.s);
}

static void print_json(const sw_value *v)
{
    sw_buf b = SW_BUF_INIT;

    sw_value_write_json(&b, v, false);
    printf("%s\n", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

static int reproduce(sw_store *st, const char *id, const char *dir_arg,
                     bool json)
{
    sw_run_rec r = {0};
    sw_sweep_rec s = {0};
    sw_value *git = NULL, *result;
    char *home = realpath(sw_contract_home(), NULL), *dir = NULL, *abs;
    int status = SW_EXIT_FAIL;

    if (!home)
        home = sw_strdup(sw_contract_home());
    if (sw_store_get_run(st, id, &r) ||
        sw_store_get_sweep(st, r.sweep_id, &s)) {
        fprintf(stderr, "sweep reproduce: %s\n", sw_error_last());
        goto done;
    }
    if (!(git = run_git(&r)))
        goto done;
    dir = dir_arg ? sw_strdup(dir_arg)
                  : sw_aprintf("%s/reproduce/%s", home, r.id);
    if (sw_provenance_export(r.git, dir) != SW_OK) {
        fprintf(stderr, "sweep reproduce: %s\n", sw_error_last());
        goto done;
    }
    if ((abs = realpath(dir, NULL)) != NULL) { /* usable from anywhere */
        free(dir);
        dir = abs;
    }
    result = result_value(&r, &s, git, dir, home);
    if (json)
        print_json(result);
    else
        print_human(result);
    sw_value_free(result);
    status = SW_EXIT_OK;
done:
    sw_value_free(git);
    sw_run_rec_dispose(&r);
    sw_sweep_rec_dispose(&s);
    free(home);
    free(dir);
    return status;
}

int sw_cmd_reproduce(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {NULL, 0, NULL, 0}};
    sw_store *st = NULL;
    bool json = false;
    int c, status;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return SW_EXIT_OK;
        }
        if (c != 'j')
            return sw_cli_usage("reproduce", "unknown option");
        json = true;
    }
    if (optind >= argc || argc - optind > 2)
        return sw_cli_usage("reproduce", "expected a run id and an "
                                         "optional folder");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    status = reproduce(st, argv[optind],
                       argc - optind == 2 ? argv[optind + 1] : NULL, json);
    sw_store_close(st);
    return status;
}
