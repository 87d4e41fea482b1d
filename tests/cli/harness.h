/*
 * harness.h - running the real `sweep` binary from tests: a temporary
 * sweep home, a sweep file written there, commands run with their output
 * captured, and SQL answers read back through `sweep query --csv`.
 */
#ifndef SW_TEST_HARNESS_H
#define SW_TEST_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    char *dir; /* the temporary folder; the sweep home is dir/home */
    char *home;
} sw_h;

void sw_h_init(sw_h *h);
void sw_h_dispose(sw_h *h);
/* Writes `text` to dir/NAME; returns the path (caller frees). */
char *sw_h_file(const sw_h *h, const char *name, const char *text);
/* Starts `sweep ARGS...` (NULL-terminated) in the background. */
pid_t sw_h_start(const sw_h *h, const char *const *args);
/* Waits for pid at most `secs`; returns its exit status (-1 on timeout,
 * after killing it). */
int sw_h_wait(pid_t pid, double secs);
/* Runs `sweep ARGS...` to its end; *out gets its stdout (caller frees;
 * may be NULL). Returns the exit status. */
int sw_h_run(const sw_h *h, const char *const *args, char **out);
/* The first field of the first row of `sweep query SQL --csv`, as an
 * integer; -1 when the query fails. */
long sw_h_count(const sw_h *h, const char *sql);
/* The toy trainer's absolute path. */
const char *sw_h_toy(void);

#endif
