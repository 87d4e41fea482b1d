/*
 * bench_export.c - the speed of `sweep export wandb`, end to end.
 *
 * Writes a store of one finished sweep of 100 runs x 10,000 steps (two
 * metrics a step: 2,000,000 metric rows, 1,000,000 history lines), starts
 * the fake W&B server (tests/cli/fake_wandb.py) in its sink mode (it reads
 * every body and answers as W&B does, without parsing history), and times
 * the real `sweep` binary exporting it. Beside that, in the same run:
 *
 *   - the server's own ceiling: a bare socket client POSTing the same
 *     number of bodies of the same sizes to the same server, so the
 *     figure above can be read as "bounded by the server" or not;
 *   - our own side alone: the same export with --dry-run to /dev/null
 *     (reading the store, building every line and request, no network).
 *
 *   build/release/tests/bench/bench_export [RUNS [STEPS]]
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/store/store.h"
#include "sweeps/buf.h"
#include "testutil.h"

extern char **environ;

#define KEY "bench0123456789abcdef0123456789abcdef0123"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t fake_pid; /* the fake server, stopped on the way out */

static void die(const char *what)
{
    fprintf(stderr, "bench_export: %s: %s\n", what, sw_error_last());
    if (fake_pid > 0) {
        kill(fake_pid, SIGTERM);
        waitpid(fake_pid, NULL, 0);
    }
    exit(1);
}

/* One finished sweep "bench001" of `runs` runs x `steps` steps. */
static void make_store(const char *path, int runs, int steps)
{
    sw_sweep_rec s = {.id = "bench001",
                      .file = "bench.yaml",
                      .config = "method: grid\nparameters:\n  x: {values: "
                                "[1]}\n",
                      .method = "grid",
                      .metric = "loss",
                      .goal = "minimize",
                      .state = "finished",
                      .cwd = "/",
                      .parallel = 1,
                      .created_at = 1.7e9};
    sw_store *st;
    char id[32], params[64];

    if (sw_store_open(&st, path, true) || sw_store_begin(st) ||
        sw_store_put_sweep(st, &s) || sw_store_commit(st))
        die("store");
    for (int r = 0; r < runs; r++) {
        snprintf(id, sizeof(id), "bench001-%d", r + 1);
        snprintf(params, sizeof(params), "{\"x\": %d, \"lr\": 0.01}", r);
        sw_run_rec run = {.id = id,
                          .sweep_id = "bench001",
                          .idx = r,
                          .cell = id,
                          .params = params,
                          .argv = "[\"t\"]",
                          .state = SW_RUN_FINISHED,
                          .has_exit = true,
                          .attempts = 1,
                          .created_at = 1.7e9,
                          .started_at = 1.7e9,
                          .ended_at = 1.7e9 + steps};
        if (sw_store_begin(st) || sw_store_put_run(st, &run))
            die("store");
        for (int i = 0; i < steps; i++)
            if (sw_store_put_metric(st, id, i, "loss", 1.0 / (i + 1) + r,
                                    1.7e9 + i * 0.25) ||
                sw_store_put_metric(st, id, i, "acc", i / (double)steps,
                                    1.7e9 + i * 0.25))
                die("store");
        if (sw_store_commit(st))
            die("store");
    }
    sw_store_close(st);
}

/* Runs argv with stdout to `out` (NULL: /dev/null); its exit status. */
static int run(const char *const *argv, const char *out)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ))
        return -1;
    posix_spawn_file_actions_destroy(&fa);
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static pid_t start_fake(const char *port_file, int *port)
{
    const char *argv[] = {
        "/usr/bin/python3", FAKE_WANDB, "serve", "--sink", "--port-file",
        port_file,          "--key",    KEY,     NULL};
    struct timespec ts = {0, 10000000};
    pid_t pid;
    char *text = NULL;

    if (posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)argv, environ))
        die("cannot start the fake server");
    fake_pid = pid;
    for (int i = 0; i < 1000 && !(text = sw_test_slurp(port_file, NULL)); i++)
        nanosleep(&ts, NULL);
    if (!text)
        die("the fake server did not start");
    *port = (int)strtol(text, NULL, 10);
    free(text);
    return pid;
}

/* Reads one HTTP answer (headers, then Content-Length bytes). */
static int read_answer(int fd, sw_buf *in)
{
    char chunk[65536], *end, *cl;
    ssize_t n;
    size_t need;

    in->len = 0;
    for (;;) {
        sw_buf_putc(in, 0);
        in->len--;
        if ((end = strstr(in->ptr, "\r\n\r\n")) != NULL &&
            (cl = strstr(in->ptr, "Content-Length:")) != NULL) {
            need = (size_t)(end + 4 - in->ptr) + strtoul(cl + 15, NULL, 10);
            if (in->len >= need)
                return strncmp(in->ptr, "HTTP/1.1 200", 12) == 0 ? 0 : -1;
        }
        if ((n = read(fd, chunk, sizeof(chunk))) <= 0)
            return -1;
        sw_buf_put(in, chunk, (size_t)n);
    }
}

/* The server's ceiling: `requests` POSTs of `bytes` in all, over one
 * kept-alive connection, from a client that does nothing else. */
static double raw_posts(int port, long requests, long bytes)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    size_t size = (size_t)(bytes / (requests ? requests : 1));
    char *body = malloc(size + 1), head[256];
    sw_buf in = SW_BUF_INIT;
    int fd = socket(AF_INET, SOCK_STREAM, 0), hn;
    double t0;

    memset(body, 'x', size);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        die("connect");
    t0 = now();
    for (long i = 0; i < requests; i++) {
        hn = snprintf(head, sizeof(head),
                      "POST /files/e/p/r/file_stream HTTP/1.1\r\nHost: b\r\n"
                      "Content-Type: application/json\r\nContent-Length: "
                      "%zu\r\n\r\n",
                      size);
        if (sw_write_all(fd, head, (size_t)hn) ||
            sw_write_all(fd, body, size) || read_answer(fd, &in))
            die("raw POST");
    }
    t0 = now() - t0;
    close(fd);
    free(body);
    sw_buf_dispose(&in);
    return t0;
}

/* The fake's counters, from GET /_fake/state with the same client. */
static void fake_counts(int port, long *requests, long *bytes)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    const char req[] = "GET /_fake/state HTTP/1.1\r\nHost: b\r\n\r\n";
    sw_buf in = SW_BUF_INIT;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char *p;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        sw_write_all(fd, req, sizeof(req) - 1) || read_answer(fd, &in))
        die("state");
    p = strstr(in.ptr, "\"requests\": ");
    *requests = p ? strtol(p + 12, NULL, 10) : 0;
    p = strstr(in.ptr, "\"bytes\": ");
    *bytes = p ? strtol(p + 9, NULL, 10) : 0;
    close(fd);
    sw_buf_dispose(&in);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 100;
    int steps = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 10000;
    char tmpl[] = "/tmp/sweep-bench-export-XXXXXX", *dir = mkdtemp(tmpl);
    char *home = sw_aprintf("%s/home", dir), *db, *port_file, *url, *out;
    const char *exp[] = {SW_BIN,     "export", "wandb",     "bench001",
                         "--entity", "e",      "--project", "p",
                         NULL,       NULL,     NULL};
    long requests = 0, bytes = 0, rows = (long)runs * steps;
    double t_make, t_exp, t_raw, t_dry;
    int port;
    pid_t fake;

    mkdir(home, 0700);
    db = sw_aprintf("%s/sweep.db", home);
    port_file = sw_aprintf("%s/port", dir);
    out = sw_aprintf("%s/out.txt", dir);
    setenv("SWEEP_HOME", home, 1);
    setenv("WANDB_API_KEY", KEY, 1);
    t_make = now();
    make_store(db, runs, steps);
    t_make = now() - t_make;
    fake = start_fake(port_file, &port);
    url = sw_aprintf("http://127.0.0.1:%d", port);
    setenv("WANDB_BASE_URL", url, 1);

    /* an untimed dry run first, so that both timed runs find the store
     * in the page cache; each run exports to a project of its own */
    exp[7] = "warm-up";
    exp[8] = "--dry-run";
    exp[9] = "--quiet";
    if (run(exp, NULL) != 0)
        die("sweep export --dry-run failed");
    exp[7] = "p";
    exp[8] = NULL;
    t_exp = now();
    if (run(exp, out) != 0)
        die("sweep export failed");
    t_exp = now() - t_exp;
    fake_counts(port, &requests, &bytes);
    t_raw = raw_posts(port, requests, bytes);
    exp[7] = "dry";
    exp[8] = "--dry-run";
    t_dry = now();
    if (run(exp, NULL) != 0)
        die("sweep export --dry-run failed");
    t_dry = now() - t_dry;

    printf("export of %d runs x %d steps: %ld history rows, %ld metric "
           "values (store written in %.1f s)\n",
           runs, steps, rows, rows * 2, t_make);
    printf("  %-44s %10.0f rows/s  %6.2f s  %ld requests, %.1f MB\n",
           "sweep export wandb -> fake W&B (sink)", rows / t_exp, t_exp,
           requests, bytes / 1e6);
    printf("  %-44s %10.0f rows/s  %6.2f s  same requests and bytes, "
           "%.0f MB/s\n",
           "reference: fake W&B alone, bare client", rows / t_raw, t_raw,
           bytes / 1e6 / t_raw);
    printf("  %-44s %10.0f rows/s  %6.2f s  no network\n",
           "reference: sweep export --dry-run", rows / t_dry, t_dry);
    printf("  bounded by: %s\n",
           t_raw > 0.8 * t_exp ? "the server (within 20% of its ceiling)"
                               : "sweep's side (the server could go faster)");
    kill(fake, SIGTERM);
    waitpid(fake, NULL, 0);
    if (getenv("BENCH_EXPORT_KEEP"))
        printf("  (kept %s)\n", dir);
    else
        sw_test_rm_tree(dir);
    free(home);
    free(db);
    free(port_file);
    free(out);
    free(url);
    return 0;
}
