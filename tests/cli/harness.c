/*
 * harness.c - see harness.h. Output goes through files, not pipes, so a
 * test never deadlocks on a full pipe.
 */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweeps/buf.h"
#include "testutil.h"

extern char **environ;

void sw_h_init(sw_h *h)
{
    char tmpl[] = "/tmp/sweep-test-XXXXXX";

    h->dir = sw_strdup(mkdtemp(tmpl));
    h->home = sw_aprintf("%s/home", h->dir);
    setenv("SWEEP_HOME", h->home, 1);
    /* the same on a machine with GPUs: NVML off unless a test loads one */
    setenv("SWEEP_NVML_LIBRARY", "", 0);
}

void sw_h_dispose(sw_h *h)
{
    sw_test_rm_tree(h->dir);
    free(h->dir);
    free(h->home);
}

char *sw_h_file(const sw_h *h, const char *name, const char *text)
{
    char *path = sw_aprintf("%s/%s", h->dir, name);
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

static pid_t spawn(const sw_h *h, const char *const *args, const char *out)
{
    const char *argv[32];
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    char *err = sw_aprintf("%s/stderr.txt", h->dir);
    int n = 0;

    argv[n++] = getenv("SW_BIN");
    while (args[n - 1] && n < 31) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ))
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    free(err);
    return pid;
}

pid_t sw_h_start(const sw_h *h, const char *const *args)
{
    char *out = sw_aprintf("%s/bg.txt", h->dir);
    pid_t pid = spawn(h, args, out);

    free(out);
    /* never hand back -1 (or 0): a test that then kills "the sweep"
     * would signal every process it may (kill(-1, ...)) */
    if (pid <= 0) {
        fprintf(stderr, "harness: cannot start %s (is SW_BIN set?)\n",
                getenv("SW_BIN") ? getenv("SW_BIN") : "sweep");
        exit(1);
    }
    return pid;
}

int sw_h_wait(pid_t pid, double secs)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    int status, waited = 0;

    if (pid <= 0)
        return -1; /* kill() below must never see -1 or 0 */
    while (waited < (int)(secs * 100)) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status)
                                     : 128 + WTERMSIG(status);
        nanosleep(&ts, NULL);
        waited++;
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int sw_h_run(const sw_h *h, const char *const *args, char **out)
{
    char *path = sw_aprintf("%s/out.txt", h->dir);
    pid_t pid = spawn(h, args, path);
    int rc = pid > 0 ? sw_h_wait(pid, 120) : -1;
    char *text = sw_test_slurp(path, NULL);

    if (out)
        *out = text ? text : sw_strdup("");
    else
        free(text);
    free(path);
    return rc;
}

long sw_h_count(const sw_h *h, const char *sql)
{
    const char *args[] = {"query", sql, "--csv", NULL};
    char *out = NULL, *nl;
    long v = -1;

    if (sw_h_run(h, args, &out) == 0 && (nl = strchr(out, '\n')))
        v = strtol(nl + 1, NULL, 10);
    free(out);
    return v;
}

const char *sw_h_toy(void)
{
    static char path[4096];

    snprintf(path, sizeof(path), "%s/../examples/trainers/toy.sh",
             getenv("SW_TEST_DATA"));
    return path;
}
