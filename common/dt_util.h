/* Small helpers every stage shares: allocation that never returns NULL, string copies, growable arrays,
 * and the nearest-word lookup used for "did you mean" hints. */
#ifndef DT_UTIL_H
#define DT_UTIL_H

#include <stddef.h>

/* Allocation wrappers: abort the process with a message on out-of-memory (there is no sensible recovery
 * inside a simulation). dt_xstrdup(NULL) returns NULL. The caller frees with free(). */
void *dt_xmalloc(size_t size);
void *dt_xcalloc(size_t count, size_t size);
void *dt_xrealloc(void *ptr, size_t size);
char *dt_xstrdup(const char *s);
char *dt_xstrndup(const char *s, size_t n);

/* Grows an array so that index `need` fits: *cap doubles (from at least 8). elem is sizeof one element.
 * Returns the (possibly moved) array; new elements are zeroed. */
void *dt_grow(void *array, size_t *cap, size_t need, size_t elem);

/* Returns the candidate closest to word by edit distance (case-insensitive), or NULL when none is within
 * max(2, strlen(word)/3) edits. cands has n entries. */
const char *dt_nearest_word(const char *word, const char *const *cands, size_t n);

#endif
