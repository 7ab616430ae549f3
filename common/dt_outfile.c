/* Output files written to a temporary name and renamed once complete (dt_outfile.h), and the registry of
 * unfinished temporaries that the signal handlers and the out-of-memory exit remove. */
#define _GNU_SOURCE /* realpath, fopencookie */
#include "dt_outfile.h"

#include "dt_util.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

struct dt_outfile {
  FILE *f;
  FILE *inner;    /* stdout or a device or pipe written in place: what f (a counting stream) writes into */
  uint64_t count; /* bytes f has passed to inner, its position for ftello */
  char *path; /* final name */
  char *tmp;  /* NULL for stdout and for a file written in place */
  int direct; /* written in place (not a regular file: a device or a pipe), closed by commit */
  int slot;   /* index in the registry, -1 for stdout */
  int werr;   /* errno of the first write into inner that failed (0: none): a later fflush of f sees only the
               * stream's error flag, and errno 0 would read "Success" */
  pid_t pid;  /* the process that opened it (and created tmp): dt_outfile_fclose finds only its own */
};

/* The outputs being written, read by the signal handlers: a slot is filled (with a whole record) and emptied
 * with the handled signals blocked. The pid guards against a forked child (dt_fork.c) removing its parent's
 * files when it exits. */
#define MAX_OPEN 64
static dt_outfile *volatile slots[MAX_OPEN];
static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
#define NHANDLED (sizeof handled / sizeof *handled)
static int handlers_installed;

void dt_outfile_remove_unfinished(void)
{
  pid_t me = getpid();
  for (int i = 0; i < MAX_OPEN; i++) {
    dt_outfile *o = slots[i];
    if (o && o->tmp && o->pid == me)
      unlink(o->tmp);
  }
}

static void on_signal(int sig)
{
  dt_outfile_remove_unfinished();
  /* the handler was installed with SA_RESETHAND: the default action (end the process) follows */
  raise(sig);
}

static void install_handlers(void)
{
  handlers_installed = 1;
  for (size_t i = 0; i < NHANDLED; i++) {
    struct sigaction old;
    if (sigaction(handled[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
      continue; /* the caller handles or ignores it */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    /* past a file-size limit (ulimit -f) the write fails with EFBIG instead, which the writer reports as exit 2
     * naming the output and removes the temporary: the documented end, never a signal */
    sa.sa_handler = handled[i] == SIGXFSZ ? SIG_IGN : on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(handled[i], &sa, NULL);
  }
}

static void block(sigset_t *old)
{
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < NHANDLED; i++)
    sigaddset(&set, handled[i]);
  sigprocmask(SIG_BLOCK, &set, old);
}

static int enlist(dt_outfile *o)
{
  sigset_t old;
  block(&old);
  int slot = -1;
  for (int i = 0; i < MAX_OPEN && slot < 0; i++)
    if (!slots[i]) {
      slots[i] = o;
      slot = i;
    }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return slot;
}

static void delist(int slot)
{
  if (slot < 0)
    return;
  sigset_t old;
  block(&old);
  slots[slot] = NULL;
  sigprocmask(SIG_SETMASK, &old, NULL);
}

static void release(dt_outfile *o)
{
  delist(o->slot);
  free(o->tmp);
  free(o->path);
  free(o);
}

/* The counting stream of stdout and of a file written in place: a pipe or a device has no position, so that a
 * writer that measures its output with ftello (the native writer's --max-output) saw nothing; this stream's
 * position is the count of bytes it passed on. */
static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
  dt_outfile *o = cookie;
  size_t n = fwrite(buf, 1, size, o->inner);
  o->count += n;
  if (n != size && !o->werr)
    o->werr = errno ? errno : EIO;
  return n == size ? (ssize_t)n : -1; /* the stream's error flag: commit reports it */
}

static int count_seek(void *cookie, off64_t *offset, int whence)
{
  dt_outfile *o = cookie;
  if (whence != SEEK_CUR || *offset != 0) {
    errno = ESPIPE;
    return -1;
  }
  *offset = (off64_t)o->count;
  return 0;
}

/* Puts the counting stream in front of o->inner (o->f). 0, or -1 with errno. */
static int counted(dt_outfile *o)
{
  cookie_io_functions_t io = {.read = NULL, .write = count_write, .seek = count_seek, .close = NULL};
  o->f = fopencookie(o, "w", io);
  return o->f ? 0 : -1;
}

/* Closes o's stream: the counting stream (its bytes passed on) and the file written in place; stdout is flushed,
 * not closed. 0, or -1 with errno when a write failed. */
static int close_stream(dt_outfile *o)
{
  int bad = 0, e = 0;
  errno = 0;
  if (o->inner) {
    if (fclose(o->f) != 0)
      bad = 1, e = errno;
    if (fflush(o->inner) != 0 || ferror(o->inner)) {
      if (!bad)
        e = errno;
      bad = 1;
    }
    if (o->inner != stdout && fclose(o->inner) != 0 && !bad)
      bad = 1, e = errno;
  } else if (fclose(o->f) != 0)
    bad = 1, e = errno;
  o->f = NULL;
  if (bad && !e)
    e = o->werr;
  errno = e ? e : (bad ? EIO : 0);
  return bad ? -1 : 0;
}

dt_outfile *dt_outfile_open(const char *path, dt_error *err)
{
  if (!handlers_installed)
    install_handlers();
  dt_phase("writing %s", path);
  dt_outfile *o = dt_xcalloc(1, sizeof *o);
  o->path = dt_xstrdup(path);
  o->slot = -1;
  o->pid = getpid(); /* also for a device written in place: find() matches on it (was set for tmp files only, so
                      * dt_outfile_fclose of '-o /dev/full' took its internal-error path and lost errno) */
  if (strcmp(path, "-") == 0) {
    o->inner = stdout;
    if (counted(o) != 0) {
      int e = errno;
      dt_error_set(err, "", 0, 0, "cannot write to standard output: %s", strerror(e));
      release(o);
      errno = e;
      return NULL;
    }
    return o;
  }
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    /* a symbolic link: the file it names is replaced, not the link */
    char *real = realpath(path, NULL);
    if (real) {
      free(o->path);
      o->path = dt_xstrdup(real);
      free(real);
      path = o->path;
    }
  }
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* was only "Is a directory" */
    dt_error_set(err, path, 0, 0, "cannot write: it is a directory (expected the name of a file to write, as "
                 "'%s/NAME')", path);
    release(o);
    errno = EISDIR;
    return NULL;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    /* a device, a pipe or a socket (-o /dev/null, a FIFO): written in place, since renaming over it would
     * replace the device with a file */
    o->inner = fopen(path, "w");
    if (!o->inner || counted(o) != 0) {
      int e = errno;
      if (o->inner)
        fclose(o->inner);
      dt_error_set(err, path, 0, 0, "cannot write: %s", strerror(e));
      release(o);
      errno = e;
      return NULL;
    }
    o->direct = 1;
    if ((o->slot = enlist(o)) < 0) {
      close_stream(o);
      dt_error_set(err, path, 0, 0, "cannot write: %s", strerror(EMFILE));
      release(o);
      errno = EMFILE;
      return NULL;
    }
    return o;
  }
  size_t n = strlen(path) + 48;
  o->tmp = dt_xmalloc(n);
  int fd = -1, e = 0;
  for (unsigned k = 0; k < 1000; k++) {
    snprintf(o->tmp, n, "%s.tmp.%ld.%u", path, (long)o->pid, k);
    /* enlisted before the file exists, so that no signal between the two leaves it behind */
    if ((o->slot = enlist(o)) < 0) {
      e = EMFILE;
      break;
    }
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd >= 0)
      break;
    e = errno;
    delist(o->slot);
    o->slot = -1;
    if (e != EEXIST)
      break;
  }
  if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
    e = errno;
    close(fd);
    unlink(o->tmp);
  }
  if (!o->f) {
    dt_error_set(err, path, 0, 0, "cannot write: %s", strerror(e));
    release(o);
    errno = e;
    return NULL;
  }
  return o;
}

FILE *dt_outfile_stream(const dt_outfile *o)
{
  return o->f;
}

int dt_outfile_check(const char *path, dt_error *err)
{
  if (strcmp(path, "-") == 0)
    return DT_OK;
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return DT_OK; /* a device or a FIFO: opening one to try it would block or consume it */
  dt_outfile *o = dt_outfile_open(path, err);
  if (!o)
    return DT_ERR;
  dt_outfile_discard(o);
  return DT_OK;
}

const char *dt_outfile_target(const dt_outfile *o)
{
  return o->tmp ? o->tmp : o->path;
}

int dt_outfile_commit(dt_outfile *o, dt_error *err)
{
  if (!o)
    return DT_ERR;
  errno = 0;
  int bad = fflush(o->f) != 0 || ferror(o->f);
  int e = errno ? errno : o->werr;
  if (o->inner) { /* stdout (flushed, not closed) or a device or pipe written in place (closed) */
    if (close_stream(o) != 0 && !bad) {
      bad = 1;
      e = errno;
    }
    int rc = !bad        ? DT_OK
             : o->direct ? dt_error_set(err, o->path, 0, 0, "cannot write: %s", strerror(e ? e : EIO))
                         : dt_error_set(err, "", 0, 0, "cannot write to standard output: %s", strerror(e ? e : EIO));
    release(o);
    if (bad)
      errno = e ? e : EIO;
    return rc;
  }
  if (fclose(o->f) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (!bad && rename(o->tmp, o->path) != 0) {
    bad = 1;
    e = errno;
  }
  int rc = DT_OK;
  if (bad) {
    unlink(o->tmp);
    rc = dt_error_set(err, o->path, 0, 0, "cannot write: %s", strerror(e ? e : EIO));
  }
  release(o);
  if (bad)
    errno = e ? e : EIO; /* for the caller's own wording */
  return rc;
}

void dt_outfile_discard(dt_outfile *o)
{
  if (!o)
    return;
  if (o->tmp) {
    fclose(o->f);
    unlink(o->tmp);
  } else if (o->inner)
    close_stream(o); /* what was written stays written: a pipe cannot take it back */
  release(o);
}

int dt_outfile_write(const char *path, const void *data, size_t len, dt_error *err)
{
  dt_outfile *o = dt_outfile_open(path, err);
  if (!o)
    return DT_ERR;
  if (len && fwrite(data, 1, len, o->f) != len) {
    int e = errno;
    dt_outfile_discard(o);
    dt_error_set(err, path, 0, 0, "cannot write: %s", strerror(e ? e : EIO));
    errno = e ? e : EIO;
    return DT_ERR;
  }
  return dt_outfile_commit(o, err);
}

FILE *dt_outfile_fopen(const char *path, dt_error *err)
{
  if (strcmp(path, "-") == 0)
    return stdout;
  dt_outfile *o = dt_outfile_open(path, err);
  return o ? o->f : NULL;
}

static dt_outfile *find(FILE *f)
{
  for (int i = 0; i < MAX_OPEN; i++)
    if (slots[i] && slots[i]->f == f && slots[i]->pid == getpid())
      return slots[i];
  return NULL;
}

int dt_outfile_fclose(FILE *f, dt_error *err)
{
  if (f == stdout)
    return fflush(f) != 0 || ferror(f) ? dt_error_set(err, "", 0, 0, "cannot write to standard output") : DT_OK;
  dt_outfile *o = f ? find(f) : NULL;
  if (!o) {
    if (f)
      fclose(f);
    return dt_error_set(err, "", 0, 0, "internal error: dt_outfile_fclose of a stream it did not open");
  }
  return dt_outfile_commit(o, err);
}

void dt_outfile_fdiscard(FILE *f)
{
  if (f && f != stdout)
    dt_outfile_discard(find(f));
}
