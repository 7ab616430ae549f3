/* Small helpers every stage shares: allocation that never returns NULL, string copies, growable arrays,
 * and the nearest-word lookup used for "did you mean" hints. */
#ifndef DT_UTIL_H
#define DT_UTIL_H

#include "dt_error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What dtsim is doing, named by the out-of-memory message: "dtsim: out of memory (asked for 96.0 GiB) while
 * building the trace of capture.json". Set at phase boundaries (reading a file, building the platform,
 * replaying, writing the report) with a printf-style fragment that follows "while"; fmt NULL clears it. The
 * text is copied (at most 255 bytes). dt_phase_get returns it ("" when none). */
void dt_phase(const char *fmt, ...) DT_PRINTF(1, 2);
const char *dt_phase_get(void);

/* Ends the process after an allocation of size bytes failed: prints "dtsim: out of memory (asked for SIZE)
 * while PHASE" on stderr, flushes stdout and stderr, removes the temporary files of unfinished outputs
 * (dt_outfile.h), and exits with status 2 (bad input: the input asked for more than the machine has; DESIGN.md
 * "never a signal"). It uses _exit, so no atexit handler or static destructor runs: called from inside a
 * SimGrid actor, those would wait for the engine the actor runs in. For tests (tests/e2e_limits.sh), the
 * environment variable DTSIM_TEST_ALLOC_LIMIT=BYTES makes every dt_x* request above BYTES fail this way, and
 * DTSIM_TEST_ALLOC_PHASE=PREFIX limits that to phases whose text starts with PREFIX ("replaying": inside the
 * actors). */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void dt_oom(size_t size);

/* Ends the process with exit status 2 from anywhere, a SimGrid actor included, after the caller printed why:
 * flushes stdout and stderr, removes unfinished output files (dt_outfile), then _exit as dt_oom does. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void dt_exit2(void);

/* Allocation wrappers: on out-of-memory they end the process through dt_oom (exit status 2 and a message naming
 * the request and dt_phase; there is no sensible recovery inside a simulation). dt_xstrdup(NULL) returns NULL. dt_xstrndup copies exactly n bytes of s (s must hold n
 * readable bytes; it does not stop at a NUL, unlike strndup) and adds a NUL after them. The caller frees with
 * free(). */
void *dt_xmalloc(size_t size);
void *dt_xcalloc(size_t count, size_t size);
void *dt_xrealloc(void *ptr, size_t size);
char *dt_xstrdup(const char *s);
char *dt_xstrndup(const char *s, size_t n);

/* The one spelling of a whole number dtsim accepts, on the command line and in its own files (platform, workload,
 * sweep spec, placement, CSV tables): decimal digits alone, the whole of s. No sign ('+8' and '-0' are refused),
 * no spaces, no base prefix, no digit separators; leading zeros are decimal ('010' is ten). Returns 0 with *out
 * set when s is one in [lo, hi] (lo >= 0), -1 when s is not such a number, -2 when it is one outside [lo, hi]
 * (also when it does not fit 63 bits). */
int dt_parse_whole(const char *s, long long lo, long long hi, long long *out);
/* The same spelling for a count that may need all 64 bits (NCCL's element counts, Inspector's byte sizes):
 * returns 0 with *out set when s is a whole number at most hi, -1 when it is not one, -2 when it is above hi (also
 * when it does not fit 64 bits). */
int dt_parse_whole_u64(const char *s, uint64_t hi, uint64_t *out);

/* A list of ranks or nodes "0-7,9": comma-separated whole numbers (dt_parse_whole's spelling: digits alone) and
 * ranges first-last (first <= last), every one below limit, no empty item. Returns 0 with *out, a new array of
 * the *n (>= 1) values in the order written (repeats kept; the caller frees), or -1 with *out NULL and *n 0 when
 * s is not such a list. */
int dt_parse_rank_list(const char *s, int32_t limit, int32_t **out, size_t *n);

/* The most bytes a platform, workload or sweep spec file, or an nccl-tests output, may hold: 64 MiB (the shipped
 * ones are a few KiB). Read through dt_read_file, so that a device such as /dev/zero or a huge file ends in a
 * clear error, not in memory following the input. */
#define DT_CONFIG_FILE_MAX ((size_t)64 << 20)

/* Reads the whole file at path into a new buffer (*out, NUL-terminated, the caller frees; *len its bytes without
 * the NUL), reading no more than max + 1 bytes, so that an endless device or pipe ends too. Returns 0; -1 with errno
 * when it cannot be opened or read (EISDIR for a directory), *out NULL; -2 when it holds more than max bytes,
 * *out NULL. */
int dt_read_file(const char *path, size_t max, char **out, size_t *len);

/* Reads a configuration input (a platform, workload or sweep spec file, an nccl-tests output) through dt_read_file,
 * up to DT_CONFIG_FILE_MAX bytes. `what` names the kind in errors, without its article ("platform file"). Returns
 * DT_OK with *out (NUL-terminated, the caller frees) and *len, or DT_ERR with *out NULL and err set, one wording
 * for every kind, after the path: "path: cannot open WHAT: reason", "path: is a directory, not a WHAT", "path: holds more than
 * 64 MiB, the most a WHAT may (a device such as /dev/zero is read up to that)" ("an" before "nccl-tests"). */
int dt_read_config(const char *path, const char *what, char **out, size_t *len, dt_error *err);

/* Grows an array so that index `need` fits: *cap doubles (from at least 8). elem is sizeof one element.
 * Returns the (possibly moved) array; new elements are zeroed. */
void *dt_grow(void *array, size_t *cap, size_t need, size_t elem);

/* Returns the candidate closest to word by edit distance (case-insensitive), or NULL when none is within
 * max(2, strlen(word)/3) edits. cands has n entries. */
const char *dt_nearest_word(const char *word, const char *const *cands, size_t n);

/* Scrambles a 64-bit key for an open-addressing table (MurmurHash3's 64-bit finaliser): mask the result with
 * the table's power-of-two capacity minus one. */
static inline uint64_t dt_mix64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  return x ^ (x >> 33);
}

/* Wall-clock seconds from an arbitrary origin (CLOCK_MONOTONIC), for progress lines and estimates of long runs. */
double dt_wall_now(void);

/* Quantile q in [0, 1] of the n values v, sorted ascending, by linear interpolation between order statistics
 * (Hyndman and Fan's definition 7: the value at position q (n - 1)); 0 when n is 0. */
double dt_quantile_sorted(const double *v, size_t n, double q);

/* Sorts the n values of v ascending, in place (qsort; a NaN compares equal to every value, so the order around
 * one is unspecified: keep them out). */
void dt_sort_doubles(double *v, size_t n);

/* Median of the n values v, sorted ascending: the middle value for odd n, the mean of the two middle ones for
 * even n; NAN when n is 0. */
double dt_median_sorted(const double *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
