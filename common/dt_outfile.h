/* Output files that appear whole or not at all: each is written to a temporary file next to its final name
 * (same directory, so that the rename is atomic) and renamed over it once complete. A failed write, an
 * out-of-memory exit (dt_oom) and a terminating signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ) remove the
 * temporary file, so an interrupted run leaves neither half a file nor a stray temporary. */
#ifndef DT_OUTFILE_H
#define DT_OUTFILE_H

#include "dt_error.h"

#include <stddef.h>
#include <stdio.h>

typedef struct dt_outfile dt_outfile;

/* Opens path for writing through the temporary "PATH.tmp.PID.N" (created exclusively, mode 0666 less the
 * umask, as fopen makes files). path "-" is stdout (no temporary; commit flushes it). A path that exists and is
 * not a regular file (a device such as /dev/null, a FIFO) is written in place: renaming over it would replace
 * the device. A symbolic link is followed: the file it names is replaced, the link stays. Returns NULL when the
 * temporary cannot be created, with err = "PATH: cannot write: REASON" and errno kept for the caller's own
 * wording. At most 64 outputs are open at once (the 65th open fails with EMFILE). The first open installs the
 * signal handlers that remove unfinished temporaries (only for signals whose handler is still the default: a
 * caller's own handler, or an ignored SIGXFSZ, is left alone). */
dt_outfile *dt_outfile_open(const char *path, dt_error *err);

/* The stream to write to (owned by o). For stdout and for a device or a pipe written in place it is a stream
 * that counts the bytes it passes on: ftello on it gives the bytes written so far, where the pipe itself has no
 * position (so that a writer can stop at a size limit there too). */
FILE *dt_outfile_stream(const dt_outfile *o);

/* Checks, before a long run, that path can be written as dt_outfile_open will write it: opens it (its
 * temporary) and discards it at once, so that a directory, a missing folder or a read-only place is an error
 * before the work instead of after it. An existing file is untouched; a device or a FIFO is not tried (opening
 * it would block or consume it). Returns DT_OK, or DT_ERR with err as dt_outfile_open fills it. */
int dt_outfile_check(const char *path, dt_error *err);

/* The name o's bytes go to until commit: the temporary, or the final name when written in place ("-" for
 * stdout). For a file another program writes (gnuplot's pictures): open, have it write this name, then commit
 * (the rename) or discard. Owned by o. */
const char *dt_outfile_target(const dt_outfile *o);

/* Finishes o: flushes, checks that every write succeeded, closes and renames the temporary onto the final
 * name (no fsync: a crash of the machine may lose the file, never leave half of it under its name). Frees o,
 * also on failure, when it removes the temporary and fills err ("PATH: cannot write: REASON"). Returns DT_OK
 * or DT_ERR. o NULL returns DT_ERR with err untouched (the open failed and said why). */
int dt_outfile_commit(dt_outfile *o, dt_error *err);

/* Abandons o: closes and removes the temporary, frees o; the final name is untouched. NULL is a no-op. */
void dt_outfile_discard(dt_outfile *o);

/* Writes len bytes of data to path whole or not at all (open, one write, commit). Returns DT_OK or DT_ERR with
 * err filled as above. */
int dt_outfile_write(const char *path, const void *data, size_t len, dt_error *err);

/* The same for code that holds a FILE *: dt_outfile_fopen returns the stream of a new dt_outfile (NULL as
 * dt_outfile_open), dt_outfile_fclose commits it and dt_outfile_fdiscard abandons it (both find it by its
 * stream; stdout is only flushed). */
FILE *dt_outfile_fopen(const char *path, dt_error *err);
int dt_outfile_fclose(FILE *f, dt_error *err);
void dt_outfile_fdiscard(FILE *f);

/* Removes the temporaries of this process's outputs not yet committed. Async-signal-safe: the signal handlers
 * and dt_oom call it just before the process ends. */
void dt_outfile_remove_unfinished(void);

#endif
