/*
 * local_internal.h - what the two halves of the local executor share: the
 * orchestrator's side (local.c) and the supervisor process that starts
 * and watches trials (local_supervisor.c), and the messages between them.
 *
 * The orchestrator writes launch requests on a stream socket without
 * waiting for their replies; the supervisor serves them one at a time
 * and answers each with one reply, in order. It writes one byte to the
 * event pipe each time an attempt ends, to wake the orchestrator; its
 * death shows as end of file on both.
 */
#ifndef SW_LOCAL_INTERNAL_H
#define SW_LOCAL_INTERNAL_H

#include <stdint.h>

/* A launch request: a 4-byte length, then NUL-terminated strings:
 * dir, stdout path, stderr path, cwd ("" for none), argc (decimal),
 * argv[0..argc), then the trial's whole environment. */
#define SW_LOCAL_MAX_REQUEST (64u << 20)

/* The reply to a launch. */
typedef struct {
    int32_t code; /* SW_OK or a negative SW_E* code */
    int32_t unused;
    int64_t pgid;  /* the trial's process group; 0 when nothing runs (the
                      program could not be executed: exit 127 recorded) */
    char msg[512]; /* the error message when code < 0 */
} sw_local__reply;

/* The supervisor's main loop: serves requests on `sock`, reports ends on
 * `events`, and exits when the orchestrator has gone and no trial is
 * left. Never returns. */
_Noreturn void sw_local__supervise(int sock, int events);

#endif
