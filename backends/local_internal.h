/*
 * local_internal.h - what the two halves of the local executor share: the
 * orchestrator's side (local.c) and the supervisor process that starts
 * and watches trials (local_supervisor.c), and the messages between them;
 * and how the orchestrator's side reads an attempt's folder
 * (local_files.c).
 *
 * The orchestrator writes launch requests on a stream socket without
 * waiting for their replies; the supervisor serves them one at a time
 * and answers each with one reply, in order. It writes one byte to the
 * event pipe each time an attempt ends, to wake the orchestrator; its
 * death shows as end of file on both.
 */
#ifndef SW_LOCAL_INTERNAL_H
#define SW_LOCAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/types.h>

#include "backends/executor.h" /* sw_exit */

/* A launch request: a 4-byte length, then NUL-terminated strings:
 * dir, stdout path, stderr path, cwd ("" for none), the log limit in
 * bytes (decimal, 0: none; the shim copies the trial's output into the
 * logs through pipes when there is one), argc (decimal),
 * argv[0..argc), then the trial's whole environment. */
#define SW_LOCAL_MAX_REQUEST (64u << 20)

/* What the supervisor sends on the socket: the reply to a launch
 * (SW_LOCAL_REPLY, in the order of the requests), or, between replies,
 * the news that one of its trials ended while its exit file cannot be
 * written (SW_LOCAL_UNRECORDED: `pgid` and `start` name the trial, `msg`
 * holds its exit record, "exit N\n" or "signal N\n", and `code` why the
 * file could not be written). */
enum { SW_LOCAL_REPLY = 0, SW_LOCAL_UNRECORDED = 1 };

typedef struct {
    int32_t code;   /* SW_OK or a negative SW_E* code (SW_ESTORAGE: the
                       disk, not the request, failed) */
    int32_t kind;   /* SW_LOCAL_REPLY or SW_LOCAL_UNRECORDED */
    int64_t pgid;   /* the trial's process group; 0 when nothing runs (the
                       program could not be executed: exit 127 recorded) */
    uint64_t start; /* its leader's start time (sw_local__start_time) */
    char msg[512];  /* the error message when code < 0 */
} sw_local__reply;

/* The supervisor's main loop: serves requests on `sock`, reports ends on
 * `events`, and exits when the orchestrator has gone and no trial is
 * left. Never returns. */
_Noreturn void sw_local__supervise(int sock, int events);

/* The shim (local_shim.c) is a program of its own, linked statically,
 * that the supervisor carries in memory (these bytes, written once into
 * a memfd) and starts from its factory (below), or with posix_spawn: a
 * copy of the supervisor's pages per trial would cost more than the
 * trial. Its command line: its name,
 * the descriptors gate, report, dirfd, lockfd and done (decimal, open in
 * it, each as named in sw_local__spawn), the log limit, the supervisor's
 * pid, the trial's cwd ("" for the supervisor's), the full-disk fault
 * flag file ("" for none), then the trial's argv; its environment is the
 * trial's. Its 0, 1 and 2 are the trial's (/dev/null, the logs). */
#define SW_LOCAL_SHIM_ARGS 10
extern const unsigned char sw_local__shim_elf[];
extern const unsigned char sw_local__shim_elf_end[];

/* The shim program's other mode, "sweep-shim --factory FD", started once
 * per supervisor (local_factory.c): it serves, one at a time on the
 * stream socket FD, requests to start a shim. A request is a 4-byte
 * length carrying SW_LOCAL_FACTORY_FDS descriptors (SCM_RIGHTS: the
 * shim's 0, 1 and 2, then its five of SW_LOCAL_SHIM_ARGS in that order),
 * then that many bytes: the shim's argc (decimal), its argv (the five
 * descriptors' numbers in it are replaced by those received), then its
 * environment, each NUL-terminated. The answer is an int32: the new
 * shim's pid, or -errno. The shim is cloned with CLONE_PARENT, the
 * supervisor's child as if spawned by it, for the price of a copy of a
 * small static program's few pages instead of an exec and glibc's start
 * (CPU features read with cpuid, which a virtual machine traps). */
#define SW_LOCAL_FACTORY_FDS 8

/* Starts the factory from the shim program `shimfd` (a memfd): *pid, and
 * the supervisor's end of its socket, or -1 with errno. */
int sw_local__factory_start(int shimfd, pid_t *pid);

/* Asks the factory on `sock` for a shim with command line av,
 * environment envp and descriptors fds: 0 and *pid, the errno it could
 * not start one with (nothing was started), or -1 when the factory
 * cannot be used any more (a shim may have been started: its gate is to
 * be closed). */
int sw_local__factory_ask(int sock, char *const *av, char *const *envp,
                          const int fds[SW_LOCAL_FACTORY_FDS], pid_t *pid);

/* What the shim of a trial is given, parsed from its command line. */
typedef struct {
    char **argv;       /* the trial's; its environment is the shim's */
    const char *cwd;   /* NULL: the supervisor's */
    int64_t log_limit; /* > 0: the trial's 1 and 2 are pipes, which the
                          shim copies into its own 1 and 2 (the logs,
                          O_APPEND), each up to this size, then one
                          SW_LOG_LIMIT_MARK line */
    int gate;          /* read end: a byte once the pid file is in place */
    int report;        /* write end: an exec's errno, when it fails */
    int dirfd;         /* the attempt folder */
    int lockfd; /* the pid file, flock()ed (shared with the supervisor) */
    int done;   /* write end: the shim's words (below) */
    pid_t supervisor;
} sw_local__spawn;

/* What a shim says on `done`: the trial's pid once forked (the word,
 * then a pid_t), then one of the two others. A shim that ended without
 * either was killed: its own end is not the trial's. */
enum {
    SW_LOCAL_SHIM_TRIAL = 't',    /* forked: its pid follows */
    SW_LOCAL_SHIM_RECORDED = 'r', /* the exit file is written */
    SW_LOCAL_SHIM_DISK = 'd',     /* before 'r' or 'm': the disk failed the
                                     trial (its record says "disk") */
    SW_LOCAL_SHIM_MIRRORS = 'm'   /* it could not write it: the shim ends
                                     as the trial ended, for the
                                     supervisor to record */
};

/* ---- a trial's output into its logs (local_logs.c, in the shim) ---- */

typedef struct {
    int in;        /* the pipe's read end; -1 once at its end */
    int out;       /* the log (the shim's 1 or 2) */
    int64_t size;  /* the log's size */
    char last;     /* its last byte ('\n' when empty) */
    bool cut;      /* the limit was reached: the rest is dropped */
    bool dropping; /* a write failed: the rest is dropped */
    const char *name;
} sw_local__stream;

typedef struct {
    int64_t limit;
    sw_local__stream s[2]; /* stdout, stderr */
    int disk_errno;        /* the first write the disk refused: its errno */
} sw_local__logs;

/* Sets up copying into the shim's 1 and 2 (the logs) up to `limit`. */
void sw_local__logs_init(sw_local__logs *lg, int64_t limit);

/* Makes the two pipes: w gets the write ends, the trial's 1 and 2
 * (close-on-exec, as are the read ends). -1 with errno. */
int sw_local__logs_pipes(sw_local__logs *lg, int w[2]);

/* Fills p (2 entries at most) with the pipes still open; how many. */
int sw_local__logs_fds(const sw_local__logs *lg, struct pollfd *p);

/* Copies what the pipes that poll() found ready in p[n] hold. */
void sw_local__logs_copy(sw_local__logs *lg, const struct pollfd *p, int n);

/* Copies what is left in the pipes, without waiting, and closes them:
 * once the trial and all its descendants are gone. */
void sw_local__logs_drain(sw_local__logs *lg);

/* Writes `text` as dirfd/name through name.tmp and rename. Returns the
 * open descriptor of the file when `keep` (flock()ed), else 0; -1 with
 * errno on failure. */
int sw_local__put_file(int dirfd, const char *name, const char *text,
                       bool keep);

/* Closes every descriptor from 3 up but the n in `keep` (-1 ignored). */
void sw_local__close_except(const int *keep, int n);

/* Whether status files are to fail with ENOSPC now (the fault tests, in
 * builds with SW_FAULT_INJECTION: while the file SWEEP_FAULT_NOSPACE names
 * exists). The shim is told the file instead, by sw_local__fault_nospace_at
 * (NULL or "": none); other builds: never. */
bool sw_local__fault_nospace(void);
void sw_local__fault_nospace_at(const char *flag);

/* ---- the attempt's folder (local_files.c) ---- */

/* Writes "dir/name" into buf[n]; SW_EINVALID when it does not fit. */
int sw_local__join(char *buf, size_t n, const char *dir, const char *name);

/* Reads the small file dir/name into text[size], NUL-terminated (at most
 * size - 1 bytes): 1, 0 when it does not exist, or a negative code. */
int sw_local__read_small(const char *dir, const char *name, char *text,
                         size_t size);

/* Parses an exit record, "exit N\n" or "signal N\n", then "disk\n" when
 * the machine's disk failed it (sw_exit.disk), of the attempt in
 * dir; SW_EIO when it is malformed. */
int sw_local__parse_exit(const char *dir, const char *s, sw_exit *out);

/* 1 and *out filled when `<dir>/exit` exists, 0 when it does not, or a
 * negative code (SW_EIO for a malformed record). */
int sw_local__read_exit(const char *dir, sw_exit *out);

/* Parses a job handle, "SUPERVISOR_PID TRIAL_PGID STARTTIME" (no
 * newline): the supervisor (> 0), the trial's process group (0 when
 * nothing ran; never 1) and its leader's start time (0 exactly when the
 * group is 0). The older "SUPERVISOR_PID TRIAL_PGID" is taken with
 * *start 0: not recorded. False, the outputs untouched, when malformed. */
bool sw_local__parse_handle(const char *s, pid_t *pid, pid_t *pgid,
                            uint64_t *start);

/* The start time of process pid (field 22 of /proc/PID/stat, clock ticks
 * since boot) into *start, and its process group into *pgrp: 1, or 0 when
 * it is gone or /proc cannot say. */
int sw_local__start_time(pid_t pid, uint64_t *start, pid_t *pgrp);

/* Reads /proc/PID/stat into buf and returns the fields after the name
 * (state, ppid, pgrp, session, ...), which the name itself may not be
 * told from otherwise; NULL when pid is gone. */
const char *sw_local__proc_stat(long pid, char *buf, size_t size);

/* Whether some living process (not a zombie) is in process group pgid;
 * it looks through /proc. */
bool sw_local__group_alive(pid_t pgid);

/* The children of process pid, every thread's (from
 * /proc/PID/task/TID/children: what the kernel knows of pid alone, no
 * scan of /proc), into kids[cap]; how many, at most cap. */
size_t sw_local__children(pid_t pid, pid_t *kids, size_t cap);

/* The boot id (/proc/sys/kernel/random/boot_id) into id[size], without
 * its newline; "" when it cannot be read. */
void sw_local__boot_id(char *id, size_t size);

/* SW_OK when process group pgid is still the trial of the attempt in
 * `dir`, so it may be signalled: its leader lives (or is an unreaped
 * zombie) with start time `start`, in the boot the pid file names; for a
 * handle without a start time, only while a supervisor watches it. Else
 * SW_ERROR, with a message saying why nothing may be signalled. */
int sw_local__check_group(const char *dir, pid_t pgid, uint64_t start);

/* Whether some supervisor still holds the lock on `<dir>/pid`; false when
 * that file cannot be opened. Never blocks. */
bool sw_local__watched(const char *dir);

/* Whether some supervisor holds the lock on the folder `dir` itself: it
 * is starting an attempt there, whose pid file is not in place yet.
 * False when the folder cannot be opened. Never blocks. */
bool sw_local__launching(const char *dir);

#endif
