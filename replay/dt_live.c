/* The replay's live collective instances and send/recv pairs: a hash table keyed by (group, sequence) or
 * (src, dst, tag, sequence), holding a record only from its first member's arrival to its last member's
 * completion, so that memory follows the instances in flight, not the trace's length. Each record carries a
 * small id, recycled when it is freed, that names its mailboxes (SimGrid never frees a mailbox). */
#include "dt_replay_internal.h"

#include "../common/dt_util.h"

#include <simgrid/barrier.h>

#include <stdlib.h>
#include <string.h>

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) ^ (c * 0xC2B2AE3D27D4EB4Full);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static size_t home(const rp_table *tb, const rp_live *l)
{
  return hash3(l->key[0], l->key[1], l->key[2]) & (tb->cap - 1);
}

static void insert(rp_table *tb, rp_live *l)
{
  size_t i = home(tb, l);
  while (tb->slots[i])
    i = (i + 1) & (tb->cap - 1);
  tb->slots[i] = l;
}

rp_live *rp_live_get(rp_table *tb, uint64_t a, uint64_t b, uint64_t c, int32_t n)
{
  if (tb->cap) {
    size_t i = hash3(a, b, c) & (tb->cap - 1);
    for (rp_live *l; (l = tb->slots[i]); i = (i + 1) & (tb->cap - 1))
      if (l->key[0] == a && l->key[1] == b && l->key[2] == c)
        return l;
  }
  if ((tb->n + 1) * 2 > tb->cap) {
    size_t old_cap = tb->cap;
    rp_live **old = tb->slots;
    tb->cap = old_cap ? old_cap * 2 : 64;
    tb->slots = dt_xcalloc(tb->cap, sizeof *tb->slots);
    for (size_t i = 0; i < old_cap; i++)
      if (old[i])
        insert(tb, old[i]);
    free(old);
  }
  rp_live *l = tb->nspare ? tb->spare[--tb->nspare] : dt_xmalloc(sizeof *l);
  memset(l, 0, sizeof *l);
  l->key[0] = a;
  l->key[1] = b;
  l->key[2] = c;
  l->n = n;
  l->op_rank = -1;
  l->id = tb->nfree > 0 ? tb->free_ids[--tb->nfree] : tb->next_id++;
  insert(tb, l);
  if (++tb->n > tb->peak)
    tb->peak = tb->n;
  return l;
}

void rp_live_remove(rp_table *tb, rp_live *l)
{
  size_t i = home(tb, l);
  while (tb->slots[i] != l)
    i = (i + 1) & (tb->cap - 1);
  /* backward-shift deletion: pull later entries of the probe run into the hole, no tombstones */
  size_t j = i;
  for (;;) {
    j = (j + 1) & (tb->cap - 1);
    if (!tb->slots[j])
      break;
    size_t h = home(tb, tb->slots[j]);
    /* the entry at j may move to i when its home is not in the cyclic range (i, j] */
    if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
      tb->slots[i] = tb->slots[j];
      i = j;
    }
  }
  tb->slots[i] = NULL;
  tb->n--;
  tb->free_ids = dt_grow(tb->free_ids, &tb->free_cap, tb->nfree, sizeof *tb->free_ids);
  tb->free_ids[tb->nfree++] = l->id;
  if (l->bar)
    sg_barrier_destroy(l->bar);
  tb->spare = dt_grow(tb->spare, &tb->spare_cap, tb->nspare, sizeof *tb->spare);
  tb->spare[tb->nspare++] = l; /* at most the peak of records in flight */
}

void rp_table_free(rp_table *tb)
{
  for (size_t i = 0; i < tb->cap; i++)
    if (tb->slots[i]) {
      if (tb->slots[i]->bar)
        sg_barrier_destroy(tb->slots[i]->bar);
      free(tb->slots[i]);
    }
  for (size_t i = 0; i < tb->nspare; i++)
    free(tb->spare[i]);
  free(tb->spare);
  free(tb->slots);
  free(tb->free_ids);
  memset(tb, 0, sizeof *tb);
}
