/* One simulation per child process, its result read back through a pipe (dt_fork.h). */
#include "dt_fork.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
  char *p = buf;
  while (len > 0) {
    ssize_t r = read(fd, p, len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    p += r;
    len -= (size_t)r;
  }
  return 0;
}

int dt_run_forked(dt_forked_fn fn, void *arg, void *out, size_t out_len, const char *what, dt_error *err)
{
  int fds[2];
  if (pipe(fds) != 0)
    return dt_error_set(err, "", 0, 0, "cannot create a pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return dt_error_set(err, "", 0, 0, "cannot fork: %s", strerror(errno));
  }
  if (pid == 0) { /* child: the status, then the result or the error record */
    close(fds[0]);
    dt_error e;
    dt_error_clear(&e);
    int status = fn(arg, out, &e);
    int ok = write_all(fds[1], &status, sizeof status) == 0 &&
             (status == DT_OK ? write_all(fds[1], out, out_len) : write_all(fds[1], &e, sizeof e)) == 0;
    close(fds[1]);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  int status = DT_ERR, rc = DT_ERR;
  if (read_all(fds[0], &status, sizeof status) != 0)
    dt_error_set(err, "", 0, 0, "%s ended without a result", what);
  else if (status == DT_OK)
    rc = read_all(fds[0], out, out_len) == 0 ? DT_OK : dt_error_set(err, "", 0, 0, "%s ended before its result", what);
  else if (read_all(fds[0], err, sizeof *err) != 0)
    dt_error_set(err, "", 0, 0, "%s failed without a message", what);
  close(fds[0]);
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
    ;
  if (rc == DT_OK && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0))
    rc = dt_error_set(err, "", 0, 0, "%s ended abnormally", what);
  return rc;
}
