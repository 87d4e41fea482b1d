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
 * `sweep run` gave the trial.
 */
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/contract.h"
#include "orchestrator/reproduce.h"

static const char help[] =
    "usage: sweep reproduce RUN [DIR]\n\n"
    "Writes the exact code run RUN started with into DIR (default:\n"
    "$SWEEP_HOME/reproduce/RUN), and prints its command line and the\n"
    "environment sweep gave it.\n";

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

static void print_code(const sw_value *git, const char *dir)
{
    const char *head = json_str(git, "head"), *branch = json_str(git, "branch");

    printf("code     %s\n", dir);
    printf("commit   %s", json_str(git, "commit"));
    if (json_str(git, "snapshot"))
        printf(" (a snapshot of the work tree over %.12s%s%s)",
               head ? head : "no commit", branch ? " on " : "",
               branch ? branch : "");
    printf("\nfrom     %s\n", json_str(git, "root"));
}

/* Where the run started, in the exported tree when it was inside the
 * repository. */
static void print_cwd(const sw_value *git, const char *sweep_cwd,
                      const char *dir)
{
    const char *root = json_str(git, "root");
    size_t n = strlen(root);

    if (strcmp(sweep_cwd, root) == 0)
        printf("cwd      %s\n", dir);
    else if (strncmp(sweep_cwd, root, n) == 0 && sweep_cwd[n] == '/')
        printf("cwd      %s%s\n", dir, sweep_cwd + n);
    else
        printf("cwd      %s (outside the repository)\n", sweep_cwd);
}

static void print_argv(const sw_run_rec *r)
{
    char **argv = sw_contract_argv(r->argv);
    sw_buf b = SW_BUF_INIT;

    if (!argv)
        return;
    sw_cli_quote_argv(&b, argv);
    printf("command  %s\n", sw_buf_cstr(&b));
    sw_command_free(argv);
    sw_buf_dispose(&b);
}

/* The variables sweep adds to a trial's environment, as the trial
 * contract gives them to the run's last attempt (the rest is inherited
 * from the shell that ran `sweep`). */
static void print_env(const sw_run_rec *r, const char *home)
{
    sw_contract c = {
        .home = home,
        .sweep_id = r->sweep_id,
        .run_id = r->id,
        .attempt = r->attempts,
    };
    char **env = sw_contract_env(&c);

    for (size_t i = 0; env[i]; i++)
        printf("%-9s%s\n", i ? "" : "env", env[i]);
    sw_command_free(env);
}

static int reproduce(sw_store *st, const char *id, const char *dir_arg)
{
    sw_run_rec r = {0};
    sw_sweep_rec s = {0};
    sw_value *git = NULL;
    char *home = realpath(sw_contract_home(), NULL), *dir = NULL;
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
    printf("run      %s\n", r.id);
    print_code(git, dir);
    print_cwd(git, s.cwd, dir);
    print_argv(&r);
    print_env(&r, home);
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
    sw_store *st = NULL;
    int status;

    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(help, stdout);
        return SW_EXIT_OK;
    }
    if (argc < 2 || argc > 3 || argv[1][0] == '-')
        return sw_cli_usage("reproduce", "expected a run id and an "
                                         "optional folder");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    status = reproduce(st, argv[1], argc == 3 ? argv[2] : NULL);
    sw_store_close(st);
    return status;
}
