/*
 * Between the two halves of running apps: proc.c (slot set-up, start,
 * control) and task.c (poll, exit judgement, recovery).
 */
#ifndef VOLSCHED_CLIENT_PROC_INT_H
#define VOLSCHED_CLIENT_PROC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "volsched/client.h"

/* BOINC-COMPAT: the 8192-byte channel file, 8 channels of 1024 bytes (notes 3.1) */
#define SHM_SIZE        8192
#define CH_PROC_REQ     0x0000
#define CH_HEARTBEAT    0x1000
#define CH_APP_STATUS   0x1400
#define CH_TRICKLE_UP   0x1800
#define CH_TRICKLE_DOWN 0x1C00
#define MAX_PREMATURE   100 /* BOINC-COMPAT: exits without finish file before an error */
#define STDERR_TAIL     (63 * 1024)

/* DIR/slots/SLOT/NAME. */
int vs_client__slot_path(const struct vs_client *c, int slot, const char *name, char *out,
                         size_t size);
/* Sends msg on channel off unless its unread flag is set; true if sent. */
bool vs_client__ch_send(struct cl_result *r, size_t off, const char *msg);
/* Takes the message of channel off if its flag is set; true if one was there. */
bool vs_client__ch_recv(struct cl_result *r, size_t off, char *out, size_t size);
void vs_client__shm_unmap(struct cl_result *r);
/* SIGKILL to pid and its descendants (from /proc; never by process group). */
void vs_client__kill_tree(pid_t pid);
/* A task is over for good: state, exit status, the report's stderr, slot freed. */
void vs_client__finish_result(struct vs_client *c, size_t ri, int state, int exit_status,
                              const char *message);

#endif
