/* Small helpers every stage shares: allocation that never returns NULL, string copies, growable arrays,
 * and the nearest-word lookup used for "did you mean" hints. */
#ifndef DT_UTIL_H
#define DT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Allocation wrappers: abort the process with a message on out-of-memory (there is no sensible recovery
 * inside a simulation). dt_xstrdup(NULL) returns NULL. dt_xstrndup copies exactly n bytes of s (s must hold n
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

#endif
