/* Sweep specifications and plans: the spec's YAML (libyaml) and --set overrides, point sampling, derived
 * platforms (the base platform's YAML document with keys replaced, emitted by libyaml), the per-point content
 * hash (SHA-256, libcrypto) and the points manifest (JSON lines, yajl). docs/sweep.md is the user's view. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dt_sweep.h"

#include "../common/dt_json.h"
#include "../common/dt_outfile.h"
#include "../common/dt_util.h"
#include "../common/dt_yaml.h"
#include "../platforms/dt_platform.h"
#include "../traces/dt_gen.h"
#include "dt_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yaml.h>

#define MAX_POINTS 1000000 /* a sweep larger than this is a mistake more often than a plan */

/* ---- small helpers ---- */

typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const void *data, size_t n)
{
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->s = dt_xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, data, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...) DT_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof tmp) {
    sb_add(b, tmp, (size_t)n);
    return;
  }
  char *big = dt_xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb_add(b, big, (size_t)n);
  free(big);
}

char *dt_sweep_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  sbuf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    sb_add(&b, chunk, n);
  int bad = ferror(f), e = errno; /* a directory opens, then fails to read: EISDIR */
  fclose(f);
  if (bad) {
    free(b.s);
    errno = e ? e : EIO;
    return NULL;
  }
  if (!b.s)
    sb_add(&b, "", 0);
  if (len)
    *len = b.len;
  return b.s;
}

void dt_sweep_sha256_hex(const void *data, size_t len, char hex[65])
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
  for (unsigned int i = 0; i < mdlen && i < 32; i++)
    sprintf(hex + 2 * i, "%02x", md[i]);
  hex[64] = '\0';
}

static int file_sha256(const char *path, char hex[65], dt_error *err)
{
  size_t len;
  char *data = dt_sweep_read_file(path, &len);
  if (!data)
    return dt_error_set(err, NULL, 0, 0, "cannot read '%s': %s", path, strerror(errno));
  dt_sweep_sha256_hex(data, len, hex);
  free(data);
  return DT_OK;
}

static char *join_path(const char *dir, const char *p)
{
  if (!dir || !*dir || p[0] == '/')
    return dt_xstrdup(p);
  size_t n = strlen(dir) + strlen(p) + 2;
  char *s = dt_xmalloc(n);
  snprintf(s, n, "%s/%s", dir, p);
  return s;
}

static void push_str(char ***arr, size_t *n, const char *s)
{
  *arr = dt_xrealloc(*arr, sizeof **arr * (*n + 1));
  (*arr)[(*n)++] = dt_xstrdup(s);
}

static void free_strs(char **arr, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(arr[i]);
  free(arr);
}

/* Writes len bytes to path through a temporary file and rename, so readers never see half a file. */
static int write_atomic(const char *path, const void *data, size_t len, dt_error *err)
{
  if (dt_outfile_write(path, data, len, err) == DT_OK)
    return DT_OK;
  return dt_error_set(err, NULL, 0, 0, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
}

static int make_dir(const char *path, dt_error *err)
{
  char *p = dt_xstrdup(path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      int e = errno;
      int rc = dt_error_set(err, NULL, 0, 0, "cannot create folder '%s': %s", p, strerror(e));
      free(p);
      return rc;
    }
    *s = '/';
  }
  int rc = DT_OK;
  if (mkdir(p, 0777) != 0 && errno != EEXIST)
    rc = dt_error_set(err, NULL, 0, 0, "cannot create folder '%s': %s", p, strerror(errno));
  free(p);
  return rc;
}

/* ---- the spec ---- */

static const char *const run_axis_keys[] = {"algo", "proto", "fidelity", "placement"};

static dt_axis_kind axis_kind(const char *key)
{
  for (size_t i = 0; i < sizeof run_axis_keys / sizeof run_axis_keys[0]; i++)
    if (strcmp(key, run_axis_keys[i]) == 0)
      return DT_AXIS_RUN;
  return dt_gen_is_key(key) ? DT_AXIS_GEN : DT_AXIS_PLATFORM;
}

/* An algorithm (auto, ring, tree, ...) or protocol (auto, LL, LL128, Simple) of a spec, in the one spelling dtsim's
 * files use for every word: exactly as listed, case included (docs/sweep.md "Words"; the platform's
 * nccl.algorithms.ring and nccl.protocols.LL128 keys are spelled so). Returns its id (-1 for auto), or -2. */
static int spec_algo(const char *v)
{
  int a = dt_algo_from_name(v);
  return a >= 0 && strcmp(v, dt_algo_name((dt_algo)a)) == 0 ? a : -2;
}

static int spec_proto(const char *v)
{
  if (strcmp(v, "auto") == 0)
    return -1;
  int p = dt_proto_from_name(v);
  return p >= 0 && strcmp(v, dt_proto_name((dt_proto)p)) == 0 ? p : -2;
}

/* The "did you mean 'x'? " of a word spelled in another case (or nearly), "" when none is near. */
static const char *near_word(const char *v, const char *const *words, size_t n, char *buf, size_t size)
{
  const char *near = dt_nearest_word(v, words, n);
  if (!near)
    return "";
  snprintf(buf, size, "did you mean '%s'? ", near);
  return buf;
}

/* Checks a run option's value (algo, proto, fidelity); placement is checked when the file is read. */
static int check_run_value(const char *key, const char *v, char *why, size_t size)
{
  char names[160], mean[96];
  if (strcmp(key, "algo") == 0 && spec_algo(v) == -2) {
    const char *words[DT_ALGO_COUNT];
    for (int i = 0; i < DT_ALGO_COUNT; i++)
      words[i] = dt_algo_name((dt_algo)i);
    snprintf(why, size, "unknown algorithm '%s' for 'algo' (%sexpected %s, spelled so)", v,
             near_word(v, words, DT_ALGO_COUNT, mean, sizeof mean), dt_algo_list(names, sizeof names, 1, " or "));
  } else if (strcmp(key, "proto") == 0 && spec_proto(v) == -2) {
    const char *words[DT_PROTO_COUNT + 1];
    words[0] = "auto";
    for (int i = 0; i < DT_PROTO_COUNT; i++)
      words[i + 1] = dt_proto_name((dt_proto)i);
    snprintf(why, size, "unknown protocol '%s' for 'proto' (%sexpected auto, LL, LL128 or Simple, spelled so)", v,
             near_word(v, words, DT_PROTO_COUNT + 1, mean, sizeof mean));
  } else if (strcmp(key, "fidelity") == 0 && strcmp(v, "flow") != 0 && strcmp(v, "step") != 0) {
    static const char *const words[] = {"flow", "step"};
    snprintf(why, size, "unknown fidelity '%s' (%sexpected flow or step)", v, near_word(v, words, 2, mean,
                                                                                         sizeof mean));
  } else {
    return 0;
  }
  return -1;
}

typedef struct where {
  const char *file;
  long line, col;
} where;

/* Checks an axis or workload value the way the file it ends up in will read it (a platform key's unit and
 * range, a generator key's range), so that a bad value is reported at the spec's own line and column instead of
 * as an impossible point. Returns 0, or -1 with why. */
static int check_key_value(dt_axis_kind kind, const char *key, const char *v, char *why, size_t size)
{
  if (kind == DT_AXIS_GEN) {
    dt_gen_config c;
    dt_gen_config_init(&c);
    dt_error e;
    dt_error_clear(&e);
    if (dt_gen_set(&c, key, v, &e) != DT_OK)
      return snprintf(why, size, "%.*s", (int)(size > 1 ? size - 1 : 0), e.msg), -1;
    return 0;
  }
  if (kind == DT_AXIS_PLATFORM)
    for (size_t i = 0; i < dt_platform_key_count(); i++)
      if (strcmp(dt_platform_key_path(i), key) == 0)
        return dt_platform_key_check(i, v, why, size);
  return 0;
}

/* What an axis value converts to, as the file or option it ends up in reads it (a platform key's number in SI
 * units, a generator key's number, an algorithm's or protocol's id, a placement file's real path), so that two
 * spellings of one value ("400Gb/s" and "400Gbps", "1GB/s" and "1000MB/s", "25M" and "26214400") are one value. */
static void axis_canon(dt_axis_kind kind, const char *key, const char *v, const char *base_dir, char *canon,
                       size_t size)
{
  snprintf(canon, size, "%s", v);
  if (kind == DT_AXIS_GEN) {
    dt_gen_value_canon(key, v, canon, size);
  } else if (kind == DT_AXIS_PLATFORM) {
    for (size_t i = 0; i < dt_platform_key_count(); i++)
      if (strcmp(dt_platform_key_path(i), key) == 0)
        dt_platform_key_canon(i, v, canon, size);
  } else if (strcmp(key, "placement") == 0) {
    char *path = join_path(base_dir, v), *real = realpath(path, NULL);
    if (real)
      snprintf(canon, size, "%s", real);
    free(real);
    free(path);
  }
}

static int spec_fail(dt_error *err, where w, const char *fmt, ...) DT_PRINTF(3, 4);
static int spec_fail(dt_error *err, where w, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  return dt_error_vset(err, w.file, w.line, w.col, fmt, ap);
}

int dt_sweep_parse_count(const char *v, long lo, long hi, long *out)
{
  long long x;
  if (dt_parse_whole(v, lo, hi, &x) != 0)
    return -1;
  *out = (long)x;
  return 0;
}

/* Records where key was given (the last time), for spec_check's checks of keys that go together. */
static void note_given(dt_sweep_spec *s, const char *key, where w)
{
  size_t i = 0;
  while (i < s->ngiven && strcmp(s->given[i].key, key) != 0)
    i++;
  if (i == s->ngiven) {
    s->given = dt_xrealloc(s->given, sizeof *s->given * (s->ngiven + 1));
    s->given[s->ngiven++].key = dt_xstrdup(key);
  }
  s->given[i].file = strcmp(w.file, "--set") == 0 ? "--set" : s->source;
  s->given[i].line = w.line;
  s->given[i].col = w.col;
}

/* Fails at where key was given (the spec file alone when it was not), with the message. Returns DT_ERR. */
static int fail_at_key(const dt_sweep_spec *s, dt_error *err, const char *key, const char *fmt, ...) DT_PRINTF(4, 5);
static int fail_at_key(const dt_sweep_spec *s, dt_error *err, const char *key, const char *fmt, ...)
{
  const dt_sweep_given *g = NULL;
  for (size_t i = 0; i < s->ngiven && !g; i++)
    if (strcmp(s->given[i].key, key) == 0)
      g = &s->given[i];
  va_list ap;
  va_start(ap, fmt);
  dt_error_vset(err, g ? g->file : s->source, g ? g->line : 0, g ? g->col : 0, fmt, ap);
  va_end(ap);
  return DT_ERR;
}

/* An error writing in the sweep folder: err's message, then where the folder's name came from, so that the user
 * knows what moves it (was: "cannot write 'x/manifest.jsonl': ..." without a word of --dir). Returns DT_ERR. */
static int dir_error(const dt_sweep_spec *s, dt_error *err)
{
  const dt_sweep_given *g = NULL;
  for (size_t i = 0; i < s->ngiven && !g; i++)
    if (strcmp(s->given[i].key, "dir") == 0)
      g = &s->given[i];
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%s", err->msg);
  if (!g)
    return dt_error_set(err, NULL, 0, 0, "%s (the sweep folder '%s' is the spec's default: give one you can write "
                        "with --dir DIR)", msg, s->dir);
  if (strcmp(g->file, "--set") == 0)
    return dt_error_set(err, NULL, 0, 0, "%s (the sweep folder '%s' given by --dir: give one you can write)", msg,
                        s->dir);
  return dt_error_set(err, NULL, 0, 0, "%s (the sweep folder '%s' given by 'dir' at %s:%ld:%ld: give one you can "
                      "write there or with --dir DIR)", msg, s->dir, g->file, g->line, g->col);
}

/* Records where sample key i (0 method, 1 points, 2 seed) was given, for spec_check's combination checks. */
static void sample_given(dt_sweep_spec *s, int i, where w)
{
  s->sample_at[i].file = strcmp(w.file, "--set") == 0 ? "--set" : s->source;
  s->sample_at[i].line = w.line;
  s->sample_at[i].col = w.col;
}

static void set_str(char **slot, const char *v)
{
  free(*slot);
  *slot = dt_xstrdup(v);
}

static const char *const top_keys[] = {"dtsim_sweep", "platform", "workload", "run", "axes", "sample", "dir"};
static const char *const run_keys[] = {"algo", "proto", "fidelity", "placement", "cfg"};
static const char *const sample_keys[] = {"method", "points", "seed"};

static int unknown_key(dt_error *err, where w, const char *key, const char *in, const char *const *cands,
                       size_t n)
{
  const char *near = dt_nearest_word(key, cands, n);
  if (near)
    return spec_fail(err, w, "unknown key '%s'%s%s (did you mean '%s'?)", key, in ? " in " : "", in ? in : "",
                     near);
  char list[512] = "";
  for (size_t i = 0; i < n; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
             cands[i]);
  return spec_fail(err, w, "unknown key '%s'%s%s (expected %s)", key, in ? " in " : "", in ? in : "", list);
}

static int is_platform_key(const char *key)
{
  for (size_t i = 0; i < dt_platform_key_count(); i++)
    if (strcmp(dt_platform_key_path(i), key) == 0)
      return 1;
  return 0;
}

/* An axis that is no platform key (dotted), generator key or run option, with the nearest of them all. */
static int unknown_axis(dt_error *err, where w, const char *name)
{
  size_t np = dt_platform_key_count(), ng = dt_gen_key_count(), nr = sizeof run_axis_keys / sizeof run_axis_keys[0];
  const char **cands = dt_xmalloc(sizeof *cands * (np + ng + nr));
  size_t n = 0;
  for (size_t i = 0; i < np; i++)
    cands[n++] = dt_platform_key_path(i);
  for (size_t i = 0; i < ng; i++)
    cands[n++] = dt_gen_key_name(i);
  for (size_t i = 0; i < nr; i++)
    cands[n++] = run_axis_keys[i];
  const char *near = dt_nearest_word(name, cands, n);
  int rc;
  if (near)
    rc = spec_fail(err, w, "unknown axis '%s' (did you mean '%s'?)", name, near);
  else
    rc = spec_fail(err, w, "unknown axis '%s': expected a platform key (dotted, as 'nics.bandwidth'), a generator "
                           "key (as 'tp') or a run option (algo, proto, fidelity, placement)", name);
  free(cands);
  return rc;
}

/* Sets one spec key (dotted, "workload.tp", "axes.nics.bandwidth") to its values (list = 1 when given as a
 * sequence or comma list). Values are checked here, where their position is known: w, or vw[i] for value i
 * when vw is not NULL. */
static int spec_set(dt_sweep_spec *s, const char *key, char **vals, size_t nvals, int list, where w,
                    const where *vw, where kw, dt_error *err)
{
  note_given(s, key, w);
  if (strncmp(key, "axes.", 5) == 0) {
    const char *name = key + 5;
    if (!*name)
      return spec_fail(err, w, "an axis needs a key name, as 'axes.nics.bandwidth'");
    if (nvals == 0)
      return spec_fail(err, w, "axis '%s' has no values", name);
    dt_axis_kind kind = axis_kind(name);
    if (kind == DT_AXIS_PLATFORM && !is_platform_key(name)) /* was: every point impossible, one by one */
      return unknown_axis(err, kw, name);
    size_t a;
    for (a = 0; a < s->naxes; a++)
      if (strcmp(s->axes[a].key, name) == 0)
        break;
    if (a == s->naxes) {
      s->axes = dt_xrealloc(s->axes, sizeof *s->axes * (s->naxes + 1));
      memset(&s->axes[a], 0, sizeof s->axes[a]);
      s->axes[a].key = dt_xstrdup(name);
      s->naxes++;
    } else {
      free_strs(s->axes[a].values, s->axes[a].nvalues);
      free_strs(s->axes[a].labels, s->axes[a].nvalues);
      s->axes[a].values = s->axes[a].labels = NULL;
      s->axes[a].nvalues = 0;
    }
    dt_sweep_axis *ax = &s->axes[a];
    ax->kind = kind;
    char (*canon)[256] = dt_xmalloc(sizeof *canon * nvals);
    int rc = DT_OK;
    for (size_t i = 0; i < nvals && rc == DT_OK; i++) {
      char why[256];
      where wi = vw ? vw[i] : w;
      if (!*vals[i]) {
        rc = spec_fail(err, wi, "axis '%s' has an empty value", name);
        break;
      }
      if ((kind == DT_AXIS_RUN && check_run_value(name, vals[i], why, sizeof why) < 0) ||
          check_key_value(kind, name, vals[i], why, sizeof why) < 0) {
        rc = spec_fail(err, wi, "%s", why);
        break;
      }
      /* a value given twice, in the same or another spelling, would give duplicate points */
      axis_canon(kind, name, vals[i], s->base_dir, canon[i], sizeof canon[i]);
      for (size_t j = 0; j < i && rc == DT_OK; j++) {
        if (strcmp(canon[i], canon[j]) != 0)
          continue;
        char first[96];
        if (vw)
          snprintf(first, sizeof first, "the first at %ld:%ld", vw[j].line, vw[j].col);
        else
          snprintf(first, sizeof first, "the first is value %zu", j + 1);
        if (strcmp(vals[i], vals[j]) == 0)
          rc = spec_fail(err, wi, "axis '%s' lists the value '%s' twice (%s): its points would run twice", name,
                         vals[i], first);
        else
          rc = spec_fail(err, wi, "axis '%s' lists one value twice: '%s' is '%s' (both %s; %s): its points would run "
                         "twice", name, vals[i], vals[j], canon[i], first);
      }
      if (rc != DT_OK)
        break;
      size_t n = ax->nvalues;
      push_str(&ax->labels, &n, vals[i]);
      char *v = kind == DT_AXIS_RUN && strcmp(name, "placement") == 0 ? join_path(s->base_dir, vals[i])
                                                                       : dt_xstrdup(vals[i]);
      ax->values = dt_xrealloc(ax->values, sizeof *ax->values * (ax->nvalues + 1));
      ax->values[ax->nvalues++] = v;
    }
    free(canon);
    return rc;
  }
  if (strcmp(key, "workload.traces") == 0 || strcmp(key, "run.cfg") == 0) {
    char ***arr = key[0] == 'w' ? &s->traces : &s->cfg;
    size_t *n = key[0] == 'w' ? &s->ntraces : &s->ncfg;
    free_strs(*arr, *n);
    *arr = NULL;
    *n = 0;
    for (size_t i = 0; i < nvals; i++) {
      char why[512];
      if (key[0] == 'r' && !strchr(vals[i], ':'))
        return spec_fail(err, vw ? vw[i] : w, "'run.cfg' expects SimGrid settings KEY:VALUE, found '%s'", vals[i]);
      if (key[0] == 'r' && dt_cli_check_cfg(vals[i], why, sizeof why) != 0) /* was: every point failed, one by one */
        return spec_fail(err, vw ? vw[i] : w, "'run.cfg': %s", why);
      char *p = key[0] == 'w' ? join_path(s->base_dir, vals[i]) : dt_xstrdup(vals[i]);
      *arr = dt_xrealloc(*arr, sizeof **arr * (*n + 1));
      (*arr)[(*n)++] = p;
    }
    if (*n == 0)
      return spec_fail(err, w, "'%s' is empty", key);
    return DT_OK;
  }
  if (list || nvals != 1)
    return spec_fail(err, w, "expected one value for '%s', found a list (lists of values belong under 'axes')",
                     key);
  const char *v = vals[0];
  if (strcmp(key, "dtsim_sweep") == 0) {
    if (strcmp(v, "1") != 0)
      return spec_fail(err, w, "unsupported 'dtsim_sweep' version '%s' (this dtsim reads version 1)", v);
    return DT_OK;
  }
  if ((strcmp(key, "platform") == 0 || strcmp(key, "workload.gen") == 0 || strcmp(key, "workload.workload") == 0 ||
       strcmp(key, "run.placement") == 0) && !*v) /* was: "cannot open ''", without the spec's position */
    return spec_fail(err, vw ? vw[0] : w, "'%s' is empty: give a %s", key,
                     key[0] == 'p' ? "platform file" : key[4] == 'p' ? "placement file" : "preset or workload file");
  if (strcmp(key, "platform") == 0) {
    free(s->platform);
    s->platform = join_path(s->base_dir, v);
    return DT_OK;
  }
  if (strcmp(key, "dir") == 0) {
    if (!*v) /* join_path("", "") is "/": an empty dir wrote the sweep into the root folder */
      return spec_fail(err, w, "%s", "'dir' is empty: give the sweep folder's name");
    free(s->dir);
    s->dir = join_path(s->base_dir, v);
    return DT_OK;
  }
  if (strncmp(key, "workload.", 9) == 0) {
    const char *k = key + 9;
    if (strcmp(k, "gen") == 0 || strcmp(k, "workload") == 0) {
      char **slot = k[0] == 'g' ? &s->gen : &s->workload;
      free(*slot);
      /* a preset name stays as it is; anything else names a file beside the spec */
      int preset = 0;
      for (size_t i = 0; i < dt_gen_preset_count(); i++)
        preset |= strcmp(v, dt_gen_preset_name(i)) == 0;
      *slot = preset && k[0] == 'g' ? dt_xstrdup(v) : join_path(s->base_dir, v);
      return DT_OK;
    }
    if (!dt_gen_is_key(k)) {
      static const char *const wk[] = {"gen", "workload", "traces", "tp", "pp", "dp", "zero", "microbatch",
                                       "seq", "global_batch", "sp", "recompute", "schedule"};
      if (dt_nearest_word(k, wk, sizeof wk / sizeof wk[0]))
        return unknown_key(err, kw, k, "'workload'", wk, sizeof wk / sizeof wk[0]);
      return spec_fail(err, kw, "unknown key '%s' in 'workload' (expected gen, workload, traces or a generator key "
                       "of docs/generator.md: tp, pp, dp, zero, microbatch, seq, global_batch, sp, recompute, "
                       "schedule, ...)", k);
    }
    char why[256];
    if (check_key_value(DT_AXIS_GEN, k, v, why, sizeof why) < 0)
      return spec_fail(err, vw ? vw[0] : w, "%s", why);
    for (size_t i = 0; i < s->ngen; i++)
      if (strcmp(s->gen_keys[i], k) == 0) {
        set_str(&s->gen_values[i], v);
        return DT_OK;
      }
    size_t n = s->ngen;
    push_str(&s->gen_keys, &n, k);
    push_str(&s->gen_values, &s->ngen, v);
    return DT_OK;
  }
  if (strncmp(key, "run.", 4) == 0) {
    const char *k = key + 4;
    char why[256];
    char **slot = strcmp(k, "algo") == 0       ? &s->algo
                  : strcmp(k, "proto") == 0    ? &s->proto
                  : strcmp(k, "fidelity") == 0 ? &s->fidelity
                  : strcmp(k, "placement") == 0 ? &s->placement
                                                : NULL;
    if (!slot)
      return unknown_key(err, kw, k, "'run'", run_keys, sizeof run_keys / sizeof run_keys[0]);
    if (check_run_value(k, v, why, sizeof why) < 0)
      return spec_fail(err, w, "%s", why);
    free(*slot);
    *slot = slot == &s->placement ? join_path(s->base_dir, v) : dt_xstrdup(v);
    return DT_OK;
  }
  if (strcmp(key, "sample") == 0 || strcmp(key, "sample.method") == 0) {
    if (strcmp(v, "grid") == 0)
      s->method = DT_SAMPLE_GRID;
    else if (strcmp(v, "random") == 0)
      s->method = DT_SAMPLE_RANDOM;
    else if (strcmp(v, "lhs") == 0)
      s->method = DT_SAMPLE_LHS;
    else {
      static const char *const words[] = {"grid", "random", "lhs"};
      char mean[96];
      return spec_fail(err, w, "unknown sampling method '%s' (%sexpected grid, random or lhs)", v,
                       near_word(v, words, 3, mean, sizeof mean));
    }
    sample_given(s, 0, w);
    /* --set sample=grid over a file's random or lhs sample runs the whole grid: its points and seed go with it */
    if (s->method == DT_SAMPLE_GRID && strcmp(w.file, "--set") == 0) {
      s->sample_at[1].file = s->sample_at[2].file = NULL;
      s->npoints = 0;
      s->seed = 0;
    }
    return DT_OK;
  }
  if (strcmp(key, "sample.points") == 0) {
    long x;
    if (dt_sweep_parse_count(v, 1, MAX_POINTS, &x) < 0)
      return spec_fail(err, w, "expected a whole number of points from 1 to %d for 'sample.points', found '%s'",
                       MAX_POINTS, v);
    s->npoints = (size_t)x;
    sample_given(s, 1, w);
    return DT_OK;
  }
  if (strcmp(key, "sample.seed") == 0) {
    long long x;
    if (dt_parse_whole(v, 0, INT64_MAX, &x) != 0)
      return spec_fail(err, w, "expected a whole number from 0 to 9223372036854775807 (2^63-1) for 'sample.seed', "
                       "found '%s'", v);
    s->seed = (uint64_t)x;
    sample_given(s, 2, w);
    return DT_OK;
  }
  if (strncmp(key, "sample.", 7) == 0)
    return unknown_key(err, kw, key + 7, "'sample'", sample_keys, sizeof sample_keys / sizeof sample_keys[0]);
  char top[64];
  snprintf(top, sizeof top, "%.*s", (int)strcspn(key, "."), key);
  return unknown_key(err, kw, top, NULL, top_keys, sizeof top_keys / sizeof top_keys[0]);
}

/* ---- YAML spec file ---- */

typedef struct yspec {
  yaml_document_t doc;
  const char *file;
  dt_sweep_spec *s;
  dt_error *err;
  char **seen;      /* the full dotted keys given so far ("axes.network.wiring"), owned */
  where *seen_at;   /* where each was given (its key's position) */
  size_t nseen;
} yspec;

static where node_where(yspec *Y, const yaml_node_t *n)
{
  where w = {Y->file, (long)n->start_mark.line + 1, (long)n->start_mark.column + 1};
  return w;
}

static const char *scalar(const yaml_node_t *n)
{
  return (const char *)n->data.scalar.value;
}

/* Whether the value of spec key (dotted: "axes.nodes", "workload.tp", "sample.points") is a number or a
 * boolean, which the platform and workload files it ends up in write unquoted. */
static int takes_number(const char *key)
{
  if (strcmp(key, "dtsim_sweep") == 0 || strcmp(key, "sample.points") == 0 || strcmp(key, "sample.seed") == 0)
    return 1;
  const char *name = strncmp(key, "axes.", 5) == 0 ? key + 5 : strncmp(key, "workload.", 9) == 0 ? key + 9 : NULL;
  if (!name)
    return 0;
  if (dt_gen_is_key(name))
    return dt_gen_key_numeric(name);
  for (size_t i = 0; i < dt_platform_key_count(); i++)
    if (strcmp(dt_platform_key_path(i), name) == 0)
      return dt_platform_key_numeric(i);
  return 0;
}

/* One policy with the platform and workload files (README "Conventions"): no YAML tags, and numbers and
 * booleans unquoted (`nodes: ["4"]` was passed on as the text 4). */
static int check_plain(yspec *Y, const yaml_node_t *n, const char *key)
{
  char tagbuf[160];
  const char *not_plain = dt_yaml_not_plain(n, tagbuf, sizeof tagbuf);
  if (!not_plain)
    return DT_OK;
  if (not_plain == tagbuf)
    return spec_fail(Y->err, node_where(Y, n), "expected a plain value for '%s', found %s '%s' (sweep files use "
                     "no YAML tags)", key, not_plain, scalar(n));
  if (takes_number(key))
    return spec_fail(Y->err, node_where(Y, n), "expected an unquoted number or boolean for '%s', found %s '%s' "
                     "(numbers and booleans are written unquoted, as 'nodes: [4, 8]')", key, not_plain, scalar(n));
  return DT_OK;
}

/* Walks a mapping: prefix is the dotted path so far ("" at the top). workload/run/sample open one level,
 * axes any number (nested mappings join with dots). */
static int walk_map(yspec *Y, yaml_node_t *map, const char *prefix, int depth)
{
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(&Y->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(&Y->doc, pr->value);
    if (k->type != YAML_SCALAR_NODE)
      return spec_fail(Y->err, node_where(Y, k), "expected a key name%s%s", *prefix ? " in " : "", prefix);
    /* repeated keys are errors, as in platform files */
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pr; q++) {
      yaml_node_t *qk = yaml_document_get_node(&Y->doc, q->key);
      if (qk->type == YAML_SCALAR_NODE && strcmp(scalar(qk), scalar(k)) == 0)
        return spec_fail(Y->err, node_where(Y, k), "duplicate key '%s'%s%s (first given at line %ld)", scalar(k),
                         *prefix ? " in " : "", prefix, (long)qk->start_mark.line + 1);
    }
    char key[1024];
    snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", scalar(k));
    int in_axes = strncmp(key, "axes", 4) == 0 && (key[4] == '\0' || key[4] == '.');
    /* one key in two spellings ("network: {wiring: ...}" and "network.wiring: ...") would silently keep the
     * later one: an error at the second, naming the first */
    int opens_map = v->type == YAML_MAPPING_NODE;
    if (!opens_map) {
      for (size_t i = 0; i < Y->nseen; i++)
        if (strcmp(Y->seen[i], key) == 0)
          return spec_fail(Y->err, node_where(Y, k), "%s '%s' given twice (first at %ld:%ld)",
                           in_axes ? "axis" : "key", in_axes ? key + 5 : key, Y->seen_at[i].line,
                           Y->seen_at[i].col);
      Y->seen = dt_xrealloc(Y->seen, sizeof *Y->seen * (Y->nseen + 1));
      Y->seen_at = dt_xrealloc(Y->seen_at, sizeof *Y->seen_at * (Y->nseen + 1));
      Y->seen[Y->nseen] = dt_xstrdup(key);
      Y->seen_at[Y->nseen++] = node_where(Y, k);
    }
    if (depth == 0) {
      int known = 0;
      for (size_t i = 0; i < sizeof top_keys / sizeof top_keys[0]; i++)
        known |= strcmp(scalar(k), top_keys[i]) == 0;
      if (!known)
        return unknown_key(Y->err, node_where(Y, k), scalar(k), NULL, top_keys,
                           sizeof top_keys / sizeof top_keys[0]);
    }
    int opens = v->type == YAML_MAPPING_NODE &&
                ((depth == 0 && (strcmp(key, "workload") == 0 || strcmp(key, "run") == 0 ||
                                 strcmp(key, "sample") == 0 || strcmp(key, "axes") == 0)) ||
                 (in_axes && depth > 0));
    if (opens) {
      if (walk_map(Y, v, key, depth + 1) != DT_OK)
        return DT_ERR;
      continue;
    }
    if (depth == 0 && strcmp(key, "axes") == 0)
      return spec_fail(Y->err, node_where(Y, v), "expected a mapping of axes for 'axes', as "
                                                 "'{nics.bandwidth: [200Gb/s, 400Gb/s]}'");
    if (depth == 0 && (strcmp(key, "workload") == 0 || strcmp(key, "run") == 0))
      return spec_fail(Y->err, node_where(Y, v), "expected a mapping for '%s'", key);
    char **vals = NULL;
    where *vw = NULL;
    size_t nvals = 0;
    int list = 0;
    if (v->type == YAML_SCALAR_NODE) {
      if (check_plain(Y, v, key) != DT_OK)
        return DT_ERR;
      vw = dt_xmalloc(sizeof *vw);
      vw[0] = node_where(Y, v);
      push_str(&vals, &nvals, scalar(v));
    } else if (v->type == YAML_SEQUENCE_NODE) {
      list = 1;
      size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
      vw = dt_xmalloc(sizeof *vw * (n ? n : 1));
      for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        yaml_node_t *e = yaml_document_get_node(&Y->doc, *it);
        if (e->type != YAML_SCALAR_NODE) {
          free_strs(vals, nvals);
          free(vw);
          return spec_fail(Y->err, node_where(Y, e), "expected a plain value in the list for '%s'", key);
        }
        if (check_plain(Y, e, key) != DT_OK) {
          free_strs(vals, nvals);
          free(vw);
          return DT_ERR;
        }
        vw[nvals] = node_where(Y, e);
        push_str(&vals, &nvals, scalar(e));
      }
    } else {
      return spec_fail(Y->err, node_where(Y, v), "expected a value or a list for '%s', found a mapping", key);
    }
    /* an axis given a single value is a one-value axis (a fixed override with its own column) */
    int rc = spec_set(Y->s, key, vals, nvals, list || in_axes, node_where(Y, v), vw, node_where(Y, k), Y->err);
    free_strs(vals, nvals);
    free(vw);
    if (rc != DT_OK)
      return DT_ERR;
  }
  return DT_OK;
}

static int load_yaml(const char *path, dt_sweep_spec *s, dt_error *err)
{
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return dt_error_set(err, path, 0, 0, "is a directory: expected a sweep spec file (YAML starting with "
                                         "'dtsim_sweep: 1', docs/sweep.md)");
  size_t len;
  char *text;
  if (dt_read_config(path, "sweep spec", &text, &len, err) != DT_OK)
    return DT_ERR;
  if (dt_yaml_check(text, len, path, err) != DT_OK) { /* nesting and tags, as for platform and workload files */
    free(text);
    return DT_ERR;
  }
  yaml_parser_t parser;
  yspec Y = {.file = path, .s = s, .err = err};
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  int rc = DT_OK;
  if (!yaml_parser_load(&parser, &Y.doc)) {
    rc = dt_error_set(err, path, (long)parser.problem_mark.line + 1, (long)parser.problem_mark.column + 1,
                      "not valid YAML: %s", parser.problem ? parser.problem : "parse error");
    yaml_parser_delete(&parser);
    free(text);
    return rc;
  }
  yaml_node_t *root = yaml_document_get_root_node(&Y.doc);
  if (!root)
    rc = dt_error_set(err, path, 0, 0, "the sweep file is empty: expected a mapping starting with 'dtsim_sweep: 1'");
  else if (root->type != YAML_MAPPING_NODE)
    rc = dt_error_set(err, path, 1, 1, "expected a mapping of sweep keys at the top level");
  else {
    int versioned = 0;
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
      yaml_node_t *k = yaml_document_get_node(&Y.doc, pr->key);
      versioned |= k->type == YAML_SCALAR_NODE && strcmp(scalar(k), "dtsim_sweep") == 0;
    }
    char map[64];
    s->line = (long)root->start_mark.line + 1;
    s->col = (long)root->start_mark.column + 1;
    if (!versioned)
      rc = dt_error_set(err, path, s->line, s->col, "missing required key 'dtsim_sweep' at the top level (%s; the "
                        "spec's version, 1)", dt_yaml_mapping_at(root, map, sizeof map));
    else
      rc = walk_map(&Y, root, "", 0);
  }
  yaml_document_delete(&Y.doc);
  yaml_parser_delete(&parser);
  free_strs(Y.seen, Y.nseen);
  free(Y.seen_at);
  free(text);
  return rc;
}

static int set_flag(dt_sweep_spec *s, const char *set, dt_error *err)
{
  where w = {"--set", 0, 0};
  const char *eq = strchr(set, '=');
  if (!eq || eq == set)
    return spec_fail(err, w, "expected KEY=VALUE, found '%s'", set);
  char *key = dt_xstrndup(set, (size_t)(eq - set));
  int listy = strncmp(key, "axes.", 5) == 0 || strcmp(key, "workload.traces") == 0 || strcmp(key, "run.cfg") == 0;
  char **vals = NULL;
  size_t nvals = 0;
  if (listy) {
    const char *p = eq + 1;
    for (;;) {
      size_t n = strcspn(p, ",");
      char *v = dt_xstrndup(p, n);
      vals = dt_xrealloc(vals, sizeof *vals * (nvals + 1));
      vals[nvals++] = v;
      if (!p[n])
        break;
      p += n + 1;
    }
  } else {
    push_str(&vals, &nvals, eq + 1);
  }
  int rc = spec_set(s, key, vals, nvals, listy, w, NULL, w, err);
  free_strs(vals, nvals);
  free(key);
  return rc;
}

/* The key of a and b given later (a --set after the file, else the later line:col); NULL when neither was given. */
static const char *later_key(const dt_sweep_spec *s, const char *a, const char *b)
{
  const dt_sweep_given *ga = NULL, *gb = NULL;
  for (size_t i = 0; i < s->ngiven; i++) {
    if (strcmp(s->given[i].key, a) == 0)
      ga = &s->given[i];
    if (strcmp(s->given[i].key, b) == 0)
      gb = &s->given[i];
  }
  if (!ga || !gb)
    return ga ? a : gb ? b : NULL;
  int sa = strcmp(ga->file, "--set") == 0, sb = strcmp(gb->file, "--set") == 0;
  if (sa != sb)
    return sa ? a : b;
  return ga->line > gb->line || (ga->line == gb->line && ga->col > gb->col) ? a : b;
}

/* A file the spec names opens for reading as a file (or a pipe or device, read as the platform loader reads
 * them), else the error at the key that names it: spec:line:col, the file, the system's reason. */
static int check_named_file(const dt_sweep_spec *s, const char *key, const char *path, const char *what,
                            dt_error *err)
{
  struct stat st;
  int fd = open(path, O_RDONLY | O_NONBLOCK); /* O_NONBLOCK: a FIFO's open must not wait for a writer */
  if (fd < 0)
    return fail_at_key(s, err, key, "cannot open the %s '%s': %s", what, path, strerror(errno));
  int dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  close(fd);
  if (dir)
    return fail_at_key(s, err, key, "the %s '%s' is a directory: expected a file%s", what, path,
                       strcmp(key, "workload.traces") == 0 ? " (list the directory's trace files: 'traces: "
                       "[DIR/trace.0.dtt, DIR/trace.1.dtt]')" : "");
  return DT_OK;
}

/* The files the spec names, each opened once before any point is planned (was: a missing platform said "cannot
 * open" without the spec's position; a missing workload or placement file made every point impossible, one by
 * one), and the platform that names the spec itself. */
static int check_named_files(const dt_sweep_spec *s, dt_error *err)
{
  if (check_named_file(s, "platform", s->platform, "platform file", err) != DT_OK)
    return DT_ERR;
  struct stat a, b;
  if (strcmp(s->source, "--set") != 0 && stat(s->source, &a) == 0 && stat(s->platform, &b) == 0 &&
      a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    return fail_at_key(s, err, "platform", "'platform' names this sweep spec, '%s': expected the base platform's "
                       "YAML file (dtsim_platform: 1)", s->platform);
  int preset = 0;
  for (size_t i = 0; s->gen && i < dt_gen_preset_count(); i++)
    preset |= strcmp(s->gen, dt_gen_preset_name(i)) == 0;
  if (s->gen && !preset && check_named_file(s, "workload.gen", s->gen, "workload file", err) != DT_OK)
    return DT_ERR;
  if (s->workload && check_named_file(s, "workload.workload", s->workload, "workload file", err) != DT_OK)
    return DT_ERR;
  for (size_t i = 0; i < s->ntraces; i++)
    if (check_named_file(s, "workload.traces", s->traces[i], "trace file", err) != DT_OK)
      return DT_ERR;
  if (s->placement && check_named_file(s, "run.placement", s->placement, "placement file", err) != DT_OK)
    return DT_ERR;
  for (size_t a = 0; a < s->naxes; a++)
    for (size_t v = 0; s->axes[a].kind == DT_AXIS_RUN && strcmp(s->axes[a].key, "placement") == 0 &&
                       v < s->axes[a].nvalues; v++)
      if (check_named_file(s, "axes.placement", s->axes[a].values[v], "placement file", err) != DT_OK)
        return DT_ERR;
  return DT_OK;
}

static int spec_check(dt_sweep_spec *s, dt_error *err)
{
  const char *f = s->source;
  if (!s->platform && s->line > 0) /* at the spec's top-level mapping (a --set platform=... would have given it) */
    return dt_error_set(err, f, s->line, s->col, "missing required key 'platform' at the top level (the mapping "
                        "starting at %ld:%ld; the base platform file)", s->line, s->col);
  if (!s->platform)
    return dt_error_set(err, f, 0, 0, "missing required key 'platform' (the base platform file)");
  int sources = !!s->gen + !!s->workload + (s->ntraces > 0);
  if (sources == 0)
    return dt_error_set(err, f, s->line, s->col, "missing workload: give 'workload.gen' (a preset or workload file), "
                        "'workload.workload' or 'workload.traces'%s", s->line > 0 ? " (in the mapping starting here)" : "");
  if (sources > 1) { /* at the later of the two (the keys are given in this order in the docs) */
    const char *second = s->ntraces ? "workload.traces" : "workload.workload";
    return fail_at_key(s, err, second, "give one workload: '%s' and '%s' both give one (expected one of "
                       "'workload.gen', 'workload.workload' or 'workload.traces')", s->gen ? "workload.gen" :
                       "workload.workload", second);
  }
  if (s->ntraces && s->ngen) {
    char key[160];
    snprintf(key, sizeof key, "workload.%s", s->gen_keys[0]);
    return fail_at_key(s, err, key, "generator key '%s' in 'workload' needs a generated workload, not traces",
                       s->gen_keys[0]);
  }
  for (size_t a = 0; a < s->naxes; a++) {
    char key[1024];
    snprintf(key, sizeof key, "axes.%s", s->axes[a].key);
    if (s->axes[a].kind == DT_AXIS_GEN && s->ntraces)
      return fail_at_key(s, err, key, "axis '%s' is a generator key: it needs a generated workload, not traces",
                         s->axes[a].key);
    const char *name = s->axes[a].key;
    const char *fixed = s->axes[a].kind != DT_AXIS_RUN  ? NULL
                        : strcmp(name, "algo") == 0     ? s->algo
                        : strcmp(name, "proto") == 0    ? s->proto
                        : strcmp(name, "fidelity") == 0 ? s->fidelity
                                                        : s->placement;
    if (fixed) { /* one value per run option (was: only placement refused; run.proto beside a proto axis passed) */
      char run[1024];
      snprintf(run, sizeof run, "run.%s", name);
      const char *later = later_key(s, run, key);
      return fail_at_key(s, err, later ? later : key, "'%s' and the axis '%s' both set the run option --%s: give it "
                         "in one place (a fixed value under 'run' or the values of an axis)", run, name, name);
    }
  }
  /* the sample's keys: points and seed draw a random or lhs sample and mean nothing to a grid (was: ignored) */
  const char *mname = s->method == DT_SAMPLE_RANDOM ? "random" : s->method == DT_SAMPLE_LHS ? "lhs" : "grid";
  if (s->method != DT_SAMPLE_GRID && s->npoints == 0) {
    const char *mf = s->sample_at[0].file ? s->sample_at[0].file : f;
    return dt_error_set(err, mf, s->sample_at[0].line, s->sample_at[0].col, "sampling method '%s' needs "
                        "'sample.points', a whole number of points from 1 to %d (as 'sample: {method: %s, points: 20, "
                        "seed: 1}')", mname, MAX_POINTS, mname);
  }
  for (int i = 1; i <= 2 && s->method == DT_SAMPLE_GRID; i++)
    if (s->sample_at[i].file)
      return dt_error_set(err, s->sample_at[i].file, s->sample_at[i].line, s->sample_at[i].col,
                          "'sample.%s' does not apply to the sampling method 'grid'%s, which runs every point: a "
                          "grid takes only 'method'; 'points' and 'seed' are for 'random' and 'lhs'",
                          i == 1 ? "points" : "seed", s->sample_at[0].file ? "" : " (the default)");
  if (check_named_files(s, err) != DT_OK)
    return DT_ERR;
  if (!s->dir) {
    if (strcmp(s->source, "--set") == 0) {
      s->dir = dt_xstrdup("dtsim-sweep");
    } else {
      const char *base = strrchr(s->source, '/');
      base = base ? base + 1 : s->source;
      size_t n = strcspn(base, ".");
      char name[512];
      snprintf(name, sizeof name, "%.*s.sweep", (int)(n ? n : strlen(base)), base);
      s->dir = join_path(s->base_dir, name);
    }
  }
  return DT_OK;
}

int dt_sweep_spec_load(const char *path, const char *const *sets, size_t nsets, dt_sweep_spec **out,
                       dt_error *err)
{
  dt_sweep_spec *s = dt_xcalloc(1, sizeof *s);
  *out = NULL;
  s->source = dt_xstrdup(path ? path : "--set");
  s->base_dir = dt_xstrdup("");
  if (path) {
    const char *slash = strrchr(path, '/');
    if (slash) {
      free(s->base_dir);
      s->base_dir = dt_xstrndup(path, (size_t)(slash - path));
      if (!*s->base_dir) {
        free(s->base_dir);
        s->base_dir = dt_xstrdup("/");
      }
    }
    if (load_yaml(path, s, err) != DT_OK)
      goto fail;
  }
  /* --set paths are relative to the current folder */
  char *saved = s->base_dir;
  s->base_dir = dt_xstrdup("");
  for (size_t i = 0; i < nsets; i++)
    if (set_flag(s, sets[i], err) != DT_OK) {
      free(s->base_dir);
      s->base_dir = saved;
      goto fail;
    }
  free(s->base_dir);
  s->base_dir = saved;
  if (spec_check(s, err) != DT_OK)
    goto fail;
  *out = s;
  return DT_OK;
fail:
  dt_sweep_spec_free(s);
  return DT_ERR;
}

void dt_sweep_spec_free(dt_sweep_spec *s)
{
  if (!s)
    return;
  free(s->source);
  free(s->base_dir);
  free(s->platform);
  free(s->gen);
  free(s->workload);
  free_strs(s->traces, s->ntraces);
  free_strs(s->gen_keys, s->ngen);
  free_strs(s->gen_values, s->ngen);
  free(s->algo);
  free(s->proto);
  free(s->fidelity);
  free(s->placement);
  free_strs(s->cfg, s->ncfg);
  for (size_t a = 0; a < s->naxes; a++) {
    free(s->axes[a].key);
    free_strs(s->axes[a].values, s->axes[a].nvalues);
    free_strs(s->axes[a].labels, s->axes[a].nvalues);
  }
  free(s->axes);
  free(s->dir);
  for (size_t i = 0; i < s->ngiven; i++)
    free(s->given[i].key);
  free(s->given);
  free(s);
}

/* ---- sampling ---- */

/* splitmix64 (Steele, Lea, Flood 2014): a small generator whose stream is the same on every platform, so a
 * seeded sample is reproducible anywhere. */
static uint64_t next_rand(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform integer in [0, n) by rejection (no modulo bias). */
static uint64_t rand_below(uint64_t *state, uint64_t n)
{
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do
    x = next_rand(state);
  while (x >= limit);
  return x % n;
}

static double rand_unit(uint64_t *state)
{
  return (double)(next_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Mixed-radix decoding of grid index g: the last axis varies fastest. */
static void decode(const dt_sweep_spec *s, uint64_t g, size_t *choice)
{
  for (size_t a = s->naxes; a-- > 0;) {
    choice[a] = (size_t)(g % s->axes[a].nvalues);
    g /= s->axes[a].nvalues;
  }
}

/* Fills *choices (npoints x naxes) for the spec's method. */
static int sample(const dt_sweep_spec *s, size_t *npoints, size_t **choices, char *note, size_t note_size,
                  dt_error *err)
{
  uint64_t total = 1;
  int huge = 0;
  for (size_t a = 0; a < s->naxes; a++) {
    if (total > (UINT64_C(1) << 62) / s->axes[a].nvalues)
      huge = 1;
    else
      total *= s->axes[a].nvalues;
  }
  size_t na = s->naxes ? s->naxes : 1;
  note[0] = '\0';
  if (s->method == DT_SAMPLE_GRID || (s->method == DT_SAMPLE_RANDOM && !huge && s->npoints >= total)) {
    if (huge || total > MAX_POINTS)
      return dt_error_set(err, s->source, 0, 0, "the grid has more than %d points: sample it ('sample: {method: "
                                                "lhs, points: N}') or give fewer values", MAX_POINTS);
    if (s->method == DT_SAMPLE_RANDOM)
      snprintf(note, note_size, "random sample of %zu points covers the whole grid of %llu points: the grid runs",
               s->npoints, (unsigned long long)total);
    *npoints = (size_t)total;
    *choices = dt_xcalloc((size_t)total * na, sizeof **choices);
    for (uint64_t g = 0; g < total; g++)
      decode(s, g, *choices + g * na);
    return DT_OK;
  }
  uint64_t state = s->seed;
  size_t n = s->npoints;
  *npoints = n;
  *choices = dt_xcalloc(n * na, sizeof **choices);
  if (s->method == DT_SAMPLE_RANDOM) {
    if (huge) { /* too many combinations to index: draw each axis on its own */
      for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < s->naxes; a++)
          (*choices)[i * na + a] = (size_t)rand_below(&state, s->axes[a].nvalues);
      return DT_OK;
    }
    /* n distinct grid indices (Floyd's algorithm), in increasing order */
    uint64_t *picked = dt_xmalloc(sizeof *picked * n);
    size_t cap = 16;
    while (cap < 2 * n)
      cap *= 2;
    uint64_t *set = dt_xmalloc(sizeof *set * cap);
    memset(set, 0xff, sizeof *set * cap);
    size_t k = 0;
    for (uint64_t j = total - n; j < total; j++) {
      uint64_t t = rand_below(&state, j + 1);
      uint64_t pick = t;
      for (int pass = 0; pass < 2; pass++) {
        size_t h = (size_t)((pick * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
        int found = 0;
        while (set[h] != UINT64_MAX) {
          if (set[h] == pick) {
            found = 1;
            break;
          }
          h = (h + 1) & (cap - 1);
        }
        if (!found) {
          set[h] = pick;
          break;
        }
        pick = j; /* t was taken: take j, which cannot be */
      }
      picked[k++] = pick;
    }
    qsort(picked, n, sizeof *picked, cmp_u64);
    for (size_t i = 0; i < n; i++)
      decode(s, picked[i], *choices + i * na);
    free(set);
    free(picked);
    return DT_OK;
  }
  /* Latin hypercube (McKay, Beckman, Conover 1979): per axis, a random permutation puts one point in each of n
   * strata of [0, 1); the stratum's point maps onto the axis's values, so each value gets n/values points. */
  size_t *perm = dt_xmalloc(sizeof *perm * n);
  for (size_t a = 0; a < s->naxes; a++) {
    for (size_t i = 0; i < n; i++)
      perm[i] = i;
    for (size_t i = n; i-- > 1;) {
      size_t j = (size_t)rand_below(&state, i + 1), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
      double x = ((double)perm[i] + rand_unit(&state)) / (double)n;
      size_t c = (size_t)(x * (double)s->axes[a].nvalues);
      (*choices)[i * na + a] = c < s->axes[a].nvalues ? c : s->axes[a].nvalues - 1;
    }
  }
  free(perm);
  return DT_OK;
}

/* ---- derived platforms ---- */

static int emit_handler(void *data, unsigned char *buffer, size_t size)
{
  sb_add((sbuf *)data, buffer, size);
  return 1;
}

static yaml_node_pair_t *find_pair(yaml_document_t *d, int map, const char *key)
{
  yaml_node_t *m = yaml_document_get_node(d, map);
  for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(d, pr->key);
    if (k->type == YAML_SCALAR_NODE && strcmp(scalar(k), key) == 0)
      return pr;
  }
  return NULL;
}

static int add_scalar(yaml_document_t *d, const char *v)
{
  return yaml_document_add_scalar(d, NULL, (yaml_char_t *)v, (int)strlen(v), YAML_ANY_SCALAR_STYLE);
}

/* Sets dotted key to value in document d (creating missing mappings). Returns 0, or -1 with why. */
static int override(yaml_document_t *d, const char *key, const char *value, char *why, size_t size)
{
  int map = 1; /* the root node */
  char *path = dt_xstrdup(key);
  int rc = 0;
  for (char *seg = path, *next; seg; seg = next) {
    next = strchr(seg, '.');
    if (next)
      *next++ = '\0';
    if (!*seg) {
      snprintf(why, size, "axis '%s' is not a key path (empty part)", key);
      rc = -1;
      break;
    }
    yaml_node_pair_t *pr = find_pair(d, map, seg);
    if (!next) {
      int v = add_scalar(d, value);
      pr = find_pair(d, map, seg); /* adding may move the node table */
      if (pr) {
        yaml_node_t *old = yaml_document_get_node(d, pr->value);
        if (old->type != YAML_SCALAR_NODE) {
          snprintf(why, size, "axis '%s' names a %s in the base platform, not a value", key,
                   old->type == YAML_MAPPING_NODE ? "mapping" : "list");
          rc = -1;
          break;
        }
        pr->value = v;
      } else {
        yaml_document_append_mapping_pair(d, map, add_scalar(d, seg), v);
      }
      break;
    }
    if (pr) {
      yaml_node_t *sub = yaml_document_get_node(d, pr->value);
      if (sub->type != YAML_MAPPING_NODE) {
        snprintf(why, size, "axis '%s': '%s' is a value in the base platform, not a mapping", key, seg);
        rc = -1;
        break;
      }
      map = pr->value;
    } else {
      int k = add_scalar(d, seg);
      int m = yaml_document_add_mapping(d, NULL, YAML_FLOW_MAPPING_STYLE);
      yaml_document_append_mapping_pair(d, map, k, m);
      map = m;
    }
  }
  free(path);
  return rc;
}

/* The derived platform text of choice: the base document with the platform axes' values, emitted by libyaml
 * after a comment naming the overrides. Returns 0 and fills out, or -1 with why. */
static int derive_platform(const dt_sweep_spec *s, const char *base, size_t base_len, const size_t *choice,
                           sbuf *out, char *why, size_t size)
{
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)base, base_len);
  if (!yaml_parser_load(&parser, &doc)) {
    snprintf(why, size, "%s:%lu:%lu: not valid YAML: %s", s->platform, (unsigned long)parser.problem_mark.line + 1,
             (unsigned long)parser.problem_mark.column + 1, parser.problem ? parser.problem : "parse error");
    yaml_parser_delete(&parser);
    return -1;
  }
  yaml_parser_delete(&parser);
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    snprintf(why, size, "%s: expected a mapping of platform keys at the top level", s->platform);
    yaml_document_delete(&doc);
    return -1;
  }
  sb_add(out, "# derived by dtsim sweep from ", 30);
  const char *base_name = strrchr(s->platform, '/');
  base_name = base_name ? base_name + 1 : s->platform;
  sb_add(out, base_name, strlen(base_name));
  int any = 0;
  for (size_t a = 0; a < s->naxes; a++) {
    if (s->axes[a].kind != DT_AXIS_PLATFORM)
      continue;
    sb_printf(out, "%s %s=%s", any ? "," : " with", s->axes[a].key, s->axes[a].values[choice[a]]);
    any = 1;
    if (override(&doc, s->axes[a].key, s->axes[a].values[choice[a]], why, size) < 0) {
      yaml_document_delete(&doc);
      return -1;
    }
  }
  sb_add(out, "\n", 1);
  yaml_emitter_t em;
  yaml_emitter_initialize(&em);
  yaml_emitter_set_output(&em, emit_handler, out);
  yaml_emitter_set_unicode(&em, 1);
  int ok = yaml_emitter_open(&em) && yaml_emitter_dump(&em, &doc) && yaml_emitter_close(&em) && yaml_emitter_flush(&em);
  /* yaml_emitter_dump deletes the document, whether it succeeds or not */
  if (!ok)
    snprintf(why, size, "cannot write the derived platform: %s", em.problem ? em.problem : "emitter error");
  yaml_emitter_delete(&em);
  return ok ? 0 : -1;
}

/* ---- plan ---- */

typedef struct file_hash {
  char *path;
  char hex[65];
} file_hash;

typedef struct hasher {
  file_hash *files;
  size_t n;
} hasher;

static const char *hash_of(hasher *H, const char *path, dt_error *err)
{
  for (size_t i = 0; i < H->n; i++)
    if (strcmp(H->files[i].path, path) == 0)
      return H->files[i].hex;
  char hex[65];
  if (file_sha256(path, hex, err) != DT_OK)
    return NULL;
  H->files = dt_xrealloc(H->files, sizeof *H->files * (H->n + 1));
  H->files[H->n].path = dt_xstrdup(path);
  memcpy(H->files[H->n].hex, hex, 65);
  return H->files[H->n++].hex;
}

static void argv_push(dt_sweep_point *pt, const char *a)
{
  push_str(&pt->argv, &pt->argc, a);
}

/* The generator configuration of a point, checked as `dtsim run --gen` would, plus world = GPUs. */
static int check_gen(const dt_sweep_spec *s, const size_t *choice, int64_t gpus, char *why, size_t size)
{
  dt_gen_config c;
  dt_error e;
  dt_error_clear(&e);
  dt_gen_config_init(&c);
  const char *src = s->gen ? s->gen : s->workload;
  int is_preset = 0;
  for (size_t i = 0; i < dt_gen_preset_count(); i++)
    is_preset |= strcmp(src, dt_gen_preset_name(i)) == 0;
  int rc = !s->workload && is_preset ? dt_gen_preset(src, &c, &e) : dt_gen_load_yaml(src, &c, &e);
  for (size_t i = 0; rc == DT_OK && i < s->ngen; i++)
    rc = dt_gen_set(&c, s->gen_keys[i], s->gen_values[i], &e);
  for (size_t a = 0; rc == DT_OK && a < s->naxes; a++)
    if (s->axes[a].kind == DT_AXIS_GEN)
      rc = dt_gen_set(&c, s->axes[a].key, s->axes[a].values[choice[a]], &e);
  if (rc == DT_OK) {
    char note[512];
    dt_gen_resolve(&c, note, sizeof note);
    rc = dt_gen_validate(&c, gpus, &e);
  }
  if (rc != DT_OK) {
    char buf[1400];
    snprintf(why, size, "workload: %s", dt_error_format(&e, buf, sizeof buf));
    return -1;
  }
  if (dt_gen_world(&c) != gpus) {
    snprintf(why, size, "workload: tp*pp*dp = %d*%d*%d = %lld ranks, the platform has %lld GPUs", (int)c.tp,
             (int)c.pp, (int)c.dp, (long long)dt_gen_world(&c), (long long)gpus);
    return -1;
  }
  return 0;
}

static const char *axis_value(const dt_sweep_spec *s, const size_t *choice, const char *key)
{
  for (size_t a = 0; a < s->naxes; a++)
    if (s->axes[a].kind == DT_AXIS_RUN && strcmp(s->axes[a].key, key) == 0)
      return s->axes[a].values[choice[a]];
  return NULL;
}

/* Derives, checks, and hashes point pt. Returns DT_OK (pt->reason set when it cannot run) or DT_ERR for a
 * problem of the whole sweep. */
static int plan_point(dt_sweep_plan *P, dt_sweep_point *pt, const char *base, size_t base_len, hasher *H,
                      const char *exe_hex, dt_error *err)
{
  const dt_sweep_spec *s = P->spec;
  char why[1600];
  sbuf text = {0};
  if (derive_platform(s, base, base_len, pt->choice, &text, why, sizeof why) < 0) {
    free(text.s);
    pt->reason = dt_xstrdup(why);
    return DT_OK;
  }
  char phex[65];
  dt_sweep_sha256_hex(text.s, text.len, phex);
  size_t n = strlen(s->dir) + 100;
  pt->platform_path = dt_xmalloc(n);
  snprintf(pt->platform_path, n, "%s/platforms/%s.yaml", s->dir, phex);
  struct stat st;
  if (stat(pt->platform_path, &st) != 0 && write_atomic(pt->platform_path, text.s, text.len, err) != DT_OK) {
    free(text.s);
    return dir_error(s, err);
  }
  dt_platform *plat = NULL;
  dt_error e;
  dt_error_clear(&e);
  if (dt_platform_parse(text.s, text.len, pt->platform_path, &plat, &e) != DT_OK) {
    snprintf(why, sizeof why, "platform: %s", e.msg);
    pt->reason = dt_xstrdup(why);
    free(text.s);
    return DT_OK;
  }
  free(text.s);
  int64_t gpus = dt_platform_gpu_count(plat);
  dt_platform_free(plat);
  if ((s->gen || s->workload) && check_gen(s, pt->choice, gpus, why, sizeof why) < 0) {
    pt->reason = dt_xstrdup(why);
    return DT_OK;
  }

  /* the argv, and beside it the text that is hashed: each argument, a file's content hash after it */
  sbuf key = {0};
  sb_printf(&key, "dtsim sweep point 1\nversion %s\nexe %s\nplatform %s\n", DTSIM_VERSION, exe_hex, phex);
  const char *placement = s->placement ? s->placement : axis_value(s, pt->choice, "placement");
  const char *algo = axis_value(s, pt->choice, "algo"), *proto = axis_value(s, pt->choice, "proto"),
             *fidelity = axis_value(s, pt->choice, "fidelity");
  algo = algo ? algo : s->algo;
  proto = proto ? proto : s->proto;
  fidelity = fidelity ? fidelity : s->fidelity;
  argv_push(pt, "run");
  argv_push(pt, "--json");
  const char *opt_names[] = {"--fidelity", "--algo", "--proto"};
  const char *opt_vals[] = {fidelity, algo, proto};
  for (int i = 0; i < 3; i++)
    if (opt_vals[i]) {
      argv_push(pt, opt_names[i]);
      argv_push(pt, opt_vals[i]);
    }
  for (size_t i = 0; i < s->ncfg; i++) {
    argv_push(pt, "--cfg");
    argv_push(pt, s->cfg[i]);
  }
  int rc = DT_OK;
  for (size_t i = 0; i < pt->argc; i++)
    sb_printf(&key, "arg %s\n", pt->argv[i]);
  if (placement) {
    const char *h = hash_of(H, placement, err);
    if (!h) {
      snprintf(why, sizeof why, "placement: %s", err->msg);
      pt->reason = dt_xstrdup(why);
      dt_error_clear(err);
      goto done;
    }
    argv_push(pt, "--placement");
    argv_push(pt, placement);
    sb_printf(&key, "placement %s\n", h);
  }
  argv_push(pt, pt->platform_path);
  if (s->ntraces) {
    for (size_t i = 0; i < s->ntraces; i++) {
      const char *h = hash_of(H, s->traces[i], err);
      if (!h) {
        rc = DT_ERR;
        goto done;
      }
      argv_push(pt, s->traces[i]);
      /* the path is hashed too: a capture's notes name it */
      sb_printf(&key, "trace %s %s\n", s->traces[i], h);
    }
  } else {
    const char *src = s->gen ? s->gen : s->workload;
    argv_push(pt, s->gen ? "--gen" : "--workload");
    argv_push(pt, src);
    struct stat sb;
    if (s->workload || stat(src, &sb) == 0) {
      const char *h = hash_of(H, src, err);
      if (!h) {
        rc = DT_ERR;
        goto done;
      }
      sb_printf(&key, "workload-file %s\n", h);
    } else {
      sb_printf(&key, "preset %s\n", src);
    }
    char kv[2048];
    for (size_t i = 0; i < s->ngen; i++) {
      snprintf(kv, sizeof kv, "%s=%s", s->gen_keys[i], s->gen_values[i]);
      int by_axis = 0; /* an axis of the same key sets it below: run refuses a key given twice */
      for (size_t a = 0; a < s->naxes; a++)
        by_axis |= s->axes[a].kind == DT_AXIS_GEN && strcmp(s->axes[a].key, s->gen_keys[i]) == 0;
      if (!by_axis) {
        argv_push(pt, "--set");
        argv_push(pt, kv);
      }
      sb_printf(&key, "set %s\n", kv); /* hashed as before, so that cached points stay cached */
    }
    for (size_t a = 0; a < s->naxes; a++)
      if (s->axes[a].kind == DT_AXIS_GEN) {
        snprintf(kv, sizeof kv, "%s=%s", s->axes[a].key, s->axes[a].values[pt->choice[a]]);
        argv_push(pt, "--set");
        argv_push(pt, kv);
        sb_printf(&key, "set %s\n", kv);
      }
  }
  dt_sweep_sha256_hex(key.s, key.len, pt->hash);
done:
  free(key.s);
  return rc;
}

int dt_sweep_plan_make(dt_sweep_spec *spec, int (*want)(size_t index, void *arg), void *arg, dt_sweep_plan **out,
                       dt_error *err)
{
  *out = NULL;
  dt_sweep_plan *P = dt_xcalloc(1, sizeof *P);
  P->spec = spec;
  hasher H = {0};
  char *base = NULL;
  size_t *choices = NULL;
  int rc = DT_ERR;
  ssize_t n = readlink("/proc/self/exe", P->exe, sizeof P->exe - 1);
  if (n <= 0) {
    dt_error_set(err, NULL, 0, 0, "cannot find the dtsim binary (/proc/self/exe): %s", strerror(errno));
    goto done;
  }
  P->exe[n] = '\0';
  char exe_hex[65];
  if (file_sha256(P->exe, exe_hex, err) != DT_OK)
    goto done;
  size_t base_len;
  int got = dt_read_file(spec->platform, DT_CONFIG_FILE_MAX, &base, &base_len); /* was unbounded: /dev/zero
                                                                                    * ran out of memory */
  if (got == -2) {
    fail_at_key(spec, err, "platform", "the platform file '%s' holds more than %zu MiB, the most a platform file may",
                spec->platform, DT_CONFIG_FILE_MAX >> 20);
    goto done;
  }
  if (got != 0) {
    fail_at_key(spec, err, "platform", "cannot read the platform file '%s': %s", spec->platform, strerror(errno));
    goto done;
  }
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/platforms", spec->dir);
  if (make_dir(sub, err) != DT_OK) {
    dir_error(spec, err);
    goto done;
  }
  snprintf(sub, sizeof sub, "%s/results", spec->dir);
  if (make_dir(sub, err) != DT_OK) {
    dir_error(spec, err);
    goto done;
  }
  if (sample(spec, &P->npoints, &choices, P->note, sizeof P->note, err) != DT_OK)
    goto done;
  size_t na = spec->naxes ? spec->naxes : 1;
  P->points = dt_xcalloc(P->npoints, sizeof *P->points);
  for (size_t i = 0; i < P->npoints; i++) {
    dt_sweep_point *pt = &P->points[i];
    pt->index = i;
    pt->choice = dt_xmalloc(sizeof *pt->choice * na);
    memcpy(pt->choice, choices + i * na, sizeof *pt->choice * na);
    if (want && !want(i, arg))
      continue;
    if (plan_point(P, pt, base, base_len, &H, exe_hex, err) != DT_OK)
      goto done;
    if (pt->reason)
      P->nimpossible++;
  }
  rc = DT_OK;
done:
  free(choices);
  free(base);
  for (size_t i = 0; i < H.n; i++)
    free(H.files[i].path);
  free(H.files);
  if (rc != DT_OK)
    dt_sweep_plan_free(P);
  else
    *out = P;
  return rc;
}

void dt_sweep_plan_free(dt_sweep_plan *p)
{
  if (!p)
    return;
  for (size_t i = 0; i < p->npoints; i++) {
    free(p->points[i].choice);
    free(p->points[i].reason);
    free(p->points[i].platform_path);
    free_strs(p->points[i].argv, p->points[i].argc);
  }
  free(p->points);
  free(p);
}

const char *dt_sweep_point_label(const dt_sweep_plan *p, const dt_sweep_point *pt, char *buf, size_t size)
{
  size_t used = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < p->spec->naxes && used < size; a++) {
    int n = snprintf(buf + used, size - used, "%s%s=%s", a ? " " : "", p->spec->axes[a].key,
                     p->spec->axes[a].labels[pt->choice[a]]);
    if (n < 0)
      break;
    used += (size_t)n;
  }
  return buf;
}

/* ---- manifest ---- */

int dt_sweep_manifest_write(const dt_sweep_plan *p, dt_error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);
  if (!g)
    return dt_error_set(err, NULL, 0, 0, "cannot allocate the JSON generator");
  yajl_gen_config(g, yajl_gen_validate_utf8, 0);
  sbuf out = {0};
  const dt_sweep_spec *s = p->spec;
  for (size_t i = 0; i < p->npoints; i++) {
    const dt_sweep_point *pt = &p->points[i];
    yajl_gen_map_open(g);
    dt_json_string(g, "point");
    yajl_gen_integer(g, (long long)pt->index);
    dt_json_string(g, "params");
    yajl_gen_map_open(g);
    for (size_t a = 0; a < s->naxes; a++) {
      dt_json_string(g, s->axes[a].key);
      dt_json_string(g, s->axes[a].labels[pt->choice[a]]);
    }
    yajl_gen_map_close(g);
    dt_json_string(g, "status");
    dt_json_string(g, pt->reason ? "impossible" : "run");
    if (pt->reason) {
      dt_json_string(g, "reason");
      dt_json_string(g, pt->reason);
    } else {
      dt_json_string(g, "hash");
      dt_json_string(g, pt->hash);
      dt_json_string(g, "platform");
      dt_json_string(g, pt->platform_path);
      dt_json_string(g, "argv");
      yajl_gen_array_open(g);
      dt_json_string(g, "dtsim");
      for (size_t k = 0; k < pt->argc; k++)
        dt_json_string(g, pt->argv[k]);
      yajl_gen_array_close(g);
    }
    yajl_gen_map_close(g);
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(g, &buf, &len);
    sb_add(&out, buf, len);
    sb_add(&out, "\n", 1);
    yajl_gen_clear(g);
    yajl_gen_reset(g, NULL);
  }
  yajl_gen_free(g);
  char path[4200];
  snprintf(path, sizeof path, "%s/manifest.jsonl", s->dir);
  int rc = write_atomic(path, out.s ? out.s : "", out.len, err);
  if (rc != DT_OK)
    dir_error(s, err);
  free(out.s);
  return rc;
}
