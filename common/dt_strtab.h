/* The one string-keyed table: interned strings numbered in order of first appearance, found through an
 * open-addressing index of their FNV-1a hashes. Importers intern repeated names (kernels, nodes) and key their
 * process and communicator tables with it; a trace finds its groups by name with it. */
#ifndef DT_STRTAB_H
#define DT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A zeroed dt_strtab is an empty table. Fields are read-only outside dt_strtab.c, but s[i] may be read. */
typedef struct dt_strtab {
  char **s;       /* s[i]: the string of index i, NUL-terminated; owned */
  size_t n, cap;  /* strings held; capacity of s */
  int32_t *slots; /* open addressing: index + 1, 0 empty; nslots a power of two, kept at most half full */
  size_t nslots;
} dt_strtab;

/* Index of the first len bytes of s (no NUL needed among them; they should hold none), added as index n (a copy)
 * when the table does not hold them yet: a caller keeping a parallel array appends to it when the index returned
 * equals its count. At most INT32_MAX strings. */
int32_t dt_strtab_intern(dt_strtab *tab, const char *s, size_t len);

/* Index of the first len bytes of s, or -1 when the table does not hold them. */
int32_t dt_strtab_find(const dt_strtab *tab, const char *s, size_t len);

/* Frees the strings and the index; the table is empty (zeroed) afterwards. */
void dt_strtab_free(dt_strtab *tab);

#ifdef __cplusplus
}
#endif

#endif
