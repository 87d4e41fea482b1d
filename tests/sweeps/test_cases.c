/*
 * test_cases.c - the data-driven sweep-file cases: each cases/NAME.yaml
 * (or .json) beside NAME.expected. The real `sweep` binary runs with the
 * case's arguments and the case file, in the cases folder, and its exit
 * status, stdout and stderr are compared with the expectation:
 *
 *     args: plan --json -n 6
 *     exit: 0
 *     --- stdout
 *     ...exact lines...
 *     --- stderr
 *     ...exact lines...
 *
 * The case file comes after the arguments, or where the word FILE stands
 * in them (`args: plan FILE -- python train.py`). A section that is
 * absent is not compared. `file: NAME` names the case file when it is
 * not NAME.yaml or NAME.json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweeps/buf.h"

extern char **environ;

typedef struct {
    char *name; /* NAME */
    char *file; /* the case file */
    char *args; /* space-separated */
    int exit_code;
    char *out, *err; /* NULL: not compared */
} sw_case;

/* Splits the .expected text into its header fields and sections. */
static void parse_expected(sw_case *c, char *text)
{
    char *line = text, *next, **section = NULL;
    sw_buf sec = SW_BUF_INIT;

    for (; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strcmp(line, "--- stdout") == 0 ||
            strcmp(line, "--- stderr") == 0) {
            if (section)
                *section = sw_buf_detach(&sec);
            section = line[4] == 's' && line[7] == 'o' ? &c->out : &c->err;
            continue;
        }
        if (section) {
            sw_buf_puts(&sec, line);
            sw_buf_putc(&sec, '\n');
        } else if (strncmp(line, "args:", 5) == 0) {
            free(c->args);
            c->args = sw_strdup(line + 5 + strspn(line + 5, " "));
        } else if (strncmp(line, "exit:", 5) == 0) {
            c->exit_code = (int)strtol(line + 5, NULL, 10);
        } else if (strncmp(line, "file:", 5) == 0) {
            free(c->file);
            c->file = sw_strdup(line + 5 + strspn(line + 5, " "));
        }
    }
    if (section)
        *section = sw_buf_detach(&sec);
}

/* Runs the binary on the case; returns its exit status. */
static int run_case(const sw_case *c, const char *dir, char **out, char **err)
{
    char *argv[64], *args = sw_strdup(c->args), *save = NULL, *tok;
    char *outp = sw_aprintf("%s/.case-%s.out", dir, c->name);
    char *errp = sw_aprintf("%s/.case-%s.err", dir, c->name);
    posix_spawn_file_actions_t fa;
    int argc = 0, status = -1;
    pid_t pid;

    bool placed = false; /* the word FILE in args stands for the file */

    argv[argc++] = getenv("SW_BIN");
    for (tok = strtok_r(args, " ", &save); tok && argc < 60;
         tok = strtok_r(NULL, " ", &save)) {
        placed = placed || strcmp(tok, "FILE") == 0;
        argv[argc++] = strcmp(tok, "FILE") == 0 ? c->file : tok;
    }
    if (!placed)
        argv[argc++] = c->file;
    argv[argc] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    assert_int_equal(chdir(dir), 0);
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0)
        waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    *out = sw_test_slurp(outp, NULL);
    *err = sw_test_slurp(errp, NULL);
    unlink(outp);
    unlink(errp);
    free(outp);
    free(errp);
    free(args);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_case(void **state)
{
    const sw_case *c = *state;
    const char *dir = getenv("SW_CASES_DIR");
    char *out = NULL, *err = NULL;
    int code = run_case(c, dir, &out, &err);

    if (c->out && strcmp(c->out, out) != 0)
        fail_msg("%s: stdout differs\n--- want\n%s--- got\n%s", c->name, c->out,
                 out);
    if (c->err && strcmp(c->err, err) != 0)
        fail_msg("%s: stderr differs\n--- want\n%s--- got\n%s", c->name, c->err,
                 err);
    if (code != c->exit_code)
        fail_msg("%s: exit %d, want %d\nstderr: %s", c->name, code,
                 c->exit_code, err);
    free(out);
    free(err);
}

static sw_case *load_case(const char *dir, const char *expected)
{
    sw_case *c = sw_calloc(1, sizeof(*c));
    size_t n = strlen(expected) - strlen(".expected");
    char *path = sw_aprintf("%s/%s", dir, expected),
         *text = sw_test_slurp(path, NULL);
    struct stat st;
    char *yaml;

    c->name = sw_strndup(expected, n);
    yaml = sw_aprintf("%s/%s.yaml", dir, c->name);
    c->file = stat(yaml, &st) == 0 ? sw_aprintf("%s.yaml", c->name)
                                   : sw_aprintf("%s.json", c->name);
    c->args = sw_strdup("validate");
    parse_expected(c, text ? text : sw_strdup(""));
    free(yaml);
    free(text);
    free(path);
    return c;
}

static void free_case(sw_case *c)
{
    free(c->name);
    free(c->file);
    free(c->args);
    free(c->out);
    free(c->err);
    free(c);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct CMUnitTest *)a)->name,
                  ((const struct CMUnitTest *)b)->name);
}

int main(void)
{
    char *dir = sw_aprintf("%s/sweeps/cases", getenv("SW_TEST_DATA"));
    struct CMUnitTest *tests = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    DIR *d = opendir(dir);
    sw_case *c;
    int rc;

    setenv("SW_CASES_DIR", dir, 1);
    setenv("SWEEP_INTERPRETER", "python", 1);
    setenv("SW_TEST_SECRET", "hunter2", 1); /* never in a case's output */
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 10 || strcmp(e->d_name + len - 9, ".expected") != 0)
            continue;
        c = load_case(dir, e->d_name);
        sw_grow(&tests, &cap, n + 1, sizeof(*tests));
        memset(&tests[n], 0, sizeof(tests[n]));
        tests[n].name = c->name;
        tests[n].test_func = test_case;
        tests[n].initial_state = c;
        n++;
    }
    if (d)
        closedir(d);
    if (n == 0) {
        fprintf(stderr, "no cases in %s\n", dir);
        free(dir);
        return 1;
    }
    qsort(tests, n, sizeof(*tests), by_name);
    rc = _cmocka_run_group_tests("sweep-file cases", tests, n, NULL, NULL);
    while (n--)
        free_case((sw_case *)tests[n].initial_state);
    free(tests);
    free(dir);
    return rc;
}
