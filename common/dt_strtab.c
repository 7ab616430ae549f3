/* dt_strtab.h: interned strings behind an open-addressing index (linear probing, FNV-1a). */
#include "dt_strtab.h"

#include "dt_util.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bits (Fowler, Noll and Vo's hash; offset basis and prime from its definition). */
static uint64_t hash_bytes(const char *s, size_t len)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The slot holding s[0 .. len), or the empty slot where it would go. */
static size_t slot_of(const dt_strtab *tab, const char *s, size_t len)
{
  size_t mask = tab->nslots - 1, k = (size_t)hash_bytes(s, len) & mask;
  for (; tab->slots[k]; k = (k + 1) & mask) {
    const char *c = tab->s[tab->slots[k] - 1];
    if (strncmp(c, s, len) == 0 && c[len] == '\0')
      break;
  }
  return k;
}

int32_t dt_strtab_find(const dt_strtab *tab, const char *s, size_t len)
{
  if (!tab->nslots)
    return -1;
  int32_t v = tab->slots[slot_of(tab, s, len)];
  return v - 1;
}

int32_t dt_strtab_intern(dt_strtab *tab, const char *s, size_t len)
{
  if ((tab->n + 1) * 2 > tab->nslots) { /* grow before the insert could pass half full */
    size_t ns = tab->nslots ? tab->nslots * 2 : 64;
    int32_t *slots = dt_xcalloc(ns, sizeof *slots);
    for (size_t i = 0; i < tab->n; i++) {
      size_t k = (size_t)hash_bytes(tab->s[i], strlen(tab->s[i])) & (ns - 1);
      while (slots[k])
        k = (k + 1) & (ns - 1);
      slots[k] = (int32_t)i + 1;
    }
    free(tab->slots);
    tab->slots = slots;
    tab->nslots = ns;
  }
  size_t k = slot_of(tab, s, len);
  if (tab->slots[k])
    return tab->slots[k] - 1;
  tab->s = dt_grow(tab->s, &tab->cap, tab->n, sizeof *tab->s);
  tab->s[tab->n] = dt_xstrndup(s, len);
  tab->slots[k] = (int32_t)tab->n + 1;
  return (int32_t)tab->n++;
}

void dt_strtab_free(dt_strtab *tab)
{
  for (size_t i = 0; i < tab->n; i++)
    free(tab->s[i]);
  free(tab->s);
  free(tab->slots);
  memset(tab, 0, sizeof *tab);
}
