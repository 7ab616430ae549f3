/* The front door for trace files: a table of importers (name, content sniffer, import function, stated
 * assumptions), the sniffing that picks one from a file's first bytes (or --format forcing one), and the load
 * that hands all the files to it and validates the result, so that replay only sees checked traces. */
#include "dt_trace_io.h"

#include "../common/dt_util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* Bytes of (decompressed) content the sniffers see. */
#define SNIFF_BYTES 65536

void dt_import_opts_init(dt_import_opts *o)
{
  memset(o, 0, sizeof *o);
  o->format = NULL;
  o->dep_window_s = 5e-6;
  o->host_timeline = 1;
  o->keep_gaps = 1;
  o->expand = 0;
  o->rank = -1;
  o->compute_gap_s = -1;
  o->world = 0;
  o->ngroup_sizes = 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Helpers for sniffers */

/* First non-blank line that is not a '#' comment, skipping a UTF-8 byte-order mark; NULL when none. */
static const char *first_content_line(const char *head)
{
  const char *p = head;
  if ((unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
    p += 3;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      p++;
    if (*p != '#')
      return *p ? p : NULL;
    p += strcspn(p, "\n");
  }
  return NULL;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Native and Kineto rows */

static int sniff_native(const char *head, size_t len, const char *path)
{
  (void)len;
  (void)path;
  const char *p = first_content_line(head);
  return p && strncmp(p, "dtsim_trace", 11) == 0 && (p[11] == '\0' || isspace((unsigned char)p[11])) ? 2 : 0;
}

static int import_native(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                         dt_error *err)
{
  (void)opts;
  return dt_trace_read_native(paths, npaths, out, err);
}

/* Whether the content from p on names one of an NCCL Inspector record's keys. */
static int inspector_record(const char *p)
{
  return strstr(p, "\"coll_perf\"") || strstr(p, "\"p2p_perf\"") || strstr(p, "\"inspector_output_format_version\"");
}

/* A JSON object that is not an NCCL Inspector record: Kineto's Chrome trace. Certain when one of its
 * top-level keys is in the head, plausible for any other object. */
static int sniff_kineto(const char *head, size_t len, const char *path)
{
  (void)len;
  (void)path;
  const char *p = first_content_line(head);
  if (!p || *p != '{')
    return 0;
  if (inspector_record(p))
    return 0;
  if (strstr(p, "\"traceEvents\"") || strstr(p, "\"schemaVersion\"") || strstr(p, "\"deviceProperties\"") ||
      strstr(p, "\"distributedInfo\""))
    return 2;
  return 1;
}

static int import_kineto(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                         dt_error *err)
{
  return dt_kineto_import_many(paths, npaths, opts, out, err);
}

/* NCCL INFO lines: "<host>:<pid>:<tid> [<dev>] NCCL INFO ", anywhere in a line (launchers add prefixes). */
static int sniff_nccl_log(const char *head, size_t len, const char *path)
{
  (void)len;
  (void)path;
  return strstr(head, "] NCCL INFO ") ? 2 : 0;
}

/* DeepSpeed's comms logger: its verbose "comm op:" lines or its summary table header. */
static int sniff_deepspeed(const char *head, size_t len, const char *path)
{
  (void)len;
  (void)path;
  if (strstr(head, "comm op: ") && strstr(head, "msg size: "))
    return 2;
  return strstr(head, "Comm. Op") && strstr(head, "Message Size") && strstr(head, "Avg Latency(ms)") ? 2 : 0;
}

/* Chakra: binary, a varint length, then a GlobalMetadata whose first field is the version string (field 1,
 * wire type 2: byte 0x0A) or its attributes (field 2: 0x12). Certain with an .et / .et.gz name. */
static int sniff_chakra(const char *head, size_t len, const char *path)
{
  const unsigned char *p = (const unsigned char *)head;
  size_t i = 0;
  uint64_t n = 0;
  for (int shift = 0; i < len && i < 5; shift += 7) {
    n |= (uint64_t)(p[i] & 0x7f) << shift;
    if (!(p[i++] & 0x80))
      break;
  }
  if (i == 0 || i >= len || (p[i - 1] & 0x80) || n == 0 || (p[i] != 0x0A && p[i] != 0x12))
    return 0;
  size_t pl = strlen(path);
  int named = (pl > 3 && strcmp(path + pl - 3, ".et") == 0) || (pl > 6 && strcmp(path + pl - 6, ".et.gz") == 0);
  return named ? 2 : 1;
}

/* NCCL Inspector: JSON records with coll_perf / p2p_perf sections. */
static int sniff_inspector(const char *head, size_t len, const char *path)
{
  (void)len;
  (void)path;
  const char *p = first_content_line(head);
  if (!p || *p != '{')
    return 0;
  return inspector_record(p) ? 2 : 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* The table */

static const dt_importer importers[] = {
    {"native", "dtsim native trace (first line 'dtsim_trace 1': .dtt, per-rank files or their directory)", sniff_native,
     import_native, "none: the trace states its ops, sizes and groups itself\n",
     0},
    {"kineto", "PyTorch profiler / Kineto Chrome-trace JSON (.json, .json.gz)", sniff_kineto, import_kineto,
     "GPU compute kernels, memcpy and memset keep their captured durations as compute\n"
     "NCCL kernels' captured durations are never used as their cost (they include waiting for peers)\n"
     "the nccl:* annotation or the kernel's Collective name decides the op, never the kernel name\n"
     "each host thread that launched GPU work is replayed as a stream: its CPU time between launches as delay "
     "ops, each GPU op waiting for its launch (correlation id), each blocking call (cudaStreamSynchronize, "
     "cudaEventSynchronize, cudaDeviceSynchronize, synchronous or pageable copies) waiting for the GPU ops it "
     "covered; GPU idle gaps are not replayed (--gaps keep|drop replay the GPU streams alone, their gaps kept "
     "as delays or dropped)\n"
     "cudaStreamSynchronize/cudaEventSynchronize cover the latest-ending op launched before the call that ended "
     "inside it (the capture records no stream); one that waited for nothing stays CPU time\n"
     "an op starting within --dep-window after another stream's op ended depends on it\n"
     "vintage 2 sizes: the first tensor of Input Dims x Input type of the enclosing nccl:* annotation or "
     "record_param_comms; no size anywhere: captured kernel duration x 100 GB/s / busbw factor (an upper bound, "
     "said per op)\n"
     "NCCL kernels without a launch in the file (before the capture window) are kept as 0-byte 'other'\n"
     "kernels without a process group span all ranks\n"
     "broadcast and reduce roots are group rank 0 (Kineto records none)\n"
     "a single-rank capture is expanded to every rank by symmetry\n"
     "several files are one capture per rank of one run (rank from distributedInfo or a rank-N name), merged "
     "without expansion; collectives match by Seq where every member has it, else by issue order per group; "
     "an all-to-all whose sizes differ across ranks becomes all-to-allv, split evenly per rank\n",
     DT_IMPORT_USES_EXPAND | DT_IMPORT_USES_RANK | DT_IMPORT_USES_GAPS | DT_IMPORT_USES_DEP_WINDOW},
    {"nccl-log", "NCCL debug log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL), one or many files",
     sniff_nccl_log, dt_nccl_log_import,
     "every rank's lines are in the files given (one per process, or interleaved with launcher prefixes)\n"
     "a rank is one host:pid and [cudaDev]; its global rank is its rank in its largest (world) communicator\n"
     "members of a communicator share its commId; a split communicator is its parent's group and color\n"
     "each call's count follows NCCL: all-gather per-rank send, reduce-scatter per-rank receive, all-to-all "
     "per peer, others the whole buffer\n"
     "Send/Recv name the peer in 'root' (a rank of their communicator); the buffers do not tell send from "
     "recv\n"
     "sends/recvs of one process on one communicator with the same opCount were launched in one group: one "
     "batch\n"
     "calls on one CUDA stream run in log order; each stream pointer is a stream\n"
     "the log has no durations: zero compute between calls unless --compute-gap is given\n",
     DT_IMPORT_USES_COMPUTE_GAP},
    {"nccl-inspector", "NCCL Inspector logs (NCCL's profiler plugin, NCCL 2.28+), one per process",
     sniff_inspector, dt_nccl_inspector_import,
     "every process's log is given; records of one communicator share its header id\n"
     "a process is hostname:pid driving one GPU; its global rank is its rank in its largest communicator\n"
     "message sizes follow NCCL's count: all-gather per-rank send, reduce-scatter per-rank receive (x ranks), "
     "others the whole buffer\n"
     "a communicator's collectives run in sequence-number order on one stream per communicator (the records "
     "give no order between communicators)\n"
     "a collective whose sequence number is not in every member's log is left out (sampling, size filter)\n"
     "point-to-point records of one communicator are posted together as one batch\n"
     "measured execution times are reported beside the simulated ones, never used as cost\n"
     "the records hold no compute: zero compute between operations unless --compute-gap is given\n",
     DT_IMPORT_USES_COMPUTE_GAP},
    {"deepspeed", "DeepSpeed comms logger output (verbose 'comm op:' lines or the log_summary table)",
     sniff_deepspeed, dt_deepspeed_import,
     "the log is rank 0's: the world size comes from --world, and every rank runs rank 0's ops\n"
     "an op runs on groups of --group-size KIND=N contiguous ranks tiling the world (default: the world)\n"
     "msg size is the input tensor (all-gather the shard, reduce-scatter and all-to-all the whole input), "
     "rounded to two decimals of powers of 1024\n"
     "send/recv name no peer: kept as opaque 'other' collectives on groups of 2 ranks\n"
     "logged times are measured (and include waiting): reported beside the simulated ones, never used as cost\n"
     "the log has no compute: zero compute between calls unless --compute-gap is given\n",
     DT_IMPORT_USES_COMPUTE_GAP | DT_IMPORT_USES_WORLD | DT_IMPORT_USES_GROUP_SIZE},
    {"chakra", "MLCommons Chakra execution traces (<prefix>.<rank>.et, plain or gzipped), one per rank",
     sniff_chakra, dt_chakra_import,
     "a node runs after its ctrl_deps and data_deps; nodes without an order between them run in start-time order\n"
     "GPU compute (and memory) nodes run in order on one compute stream with their duration_micros\n"
     "host nodes (is_cpu_op) and other node types are host time on one host stream\n"
     "collectives and sends/recvs of one pg_name run in order on one stream per process group\n"
     "a pg_name's group is the ranks whose files use it; a collective without one runs on every rank\n"
     "comm_size is the whole buffer: all-reduce, broadcast, reduce-scatter and all-to-all input, all-gather "
     "output (divided by the group size for our per-rank shard)\n"
     "comm_src / comm_dst of sends and recvs are global ranks; broadcast and reduce roots are group rank 0\n",
     0},
};
#define NIMPORTERS (sizeof importers / sizeof importers[0])

size_t dt_importer_count(void)
{
  return NIMPORTERS;
}

const dt_importer *dt_importer_at(size_t i)
{
  return i < NIMPORTERS ? &importers[i] : NULL;
}

const dt_importer *dt_importer_find(const char *name)
{
  for (size_t i = 0; i < NIMPORTERS; i++)
    if (strcmp(importers[i].name, name) == 0)
      return &importers[i];
  return NULL;
}

static void supported_list(char *buf, size_t size)
{
  size_t used = (size_t)snprintf(buf, size, "supported:");
  for (size_t i = 0; i < NIMPORTERS && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s %s (--format %s)", i ? ";" : "", importers[i].label,
                             importers[i].name);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Sniffing */

/* Describes content no importer claims, for the error message. */
static void describe(const char *head, size_t len, int gz, char *what, size_t wsize)
{
  const char *p = first_content_line(head);
  if (len == 0) {
    snprintf(what, wsize, "an empty file");
    return;
  }
  if (!p) { /* not empty: blank lines and '#' comments only (a truncated capture keeps its header) */
    snprintf(what, wsize, "only blank lines and '#' comments (%zu bytes read), no trace content", len);
    return;
  }
  int binary = 0;
  for (size_t i = 0; i < len && i < 64; i++) {
    unsigned char c = (unsigned char)head[i];
    binary |= c == 0 || (c < 32 && !isspace(c));
  }
  size_t n = strcspn(p, "\r\n");
  if (n > 40)
    n = 40;
  if (*p == '[')
    snprintf(what, wsize, "a JSON array (a Chrome trace without the Kineto top-level object?)");
  else if (binary)
    snprintf(what, wsize, "binary data%s that is no Chakra execution trace", gz ? " inside gzip" : "");
  else
    snprintf(what, wsize, "text starting with '%.*s'", (int)n, p);
}

int dt_trace_sniff(const char *path, const dt_importer **imp, dt_error *err)
{
  struct stat st;
  *imp = NULL;
  if (stat(path, &st) != 0)
    return dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
  if (S_ISDIR(st.st_mode)) { /* a directory of per-rank .dtt files, as dt_trace_write_native writes them */
    DIR *dir = opendir(path);
    if (!dir)
      return dt_error_set(err, path, 0, 0, "cannot open directory: %s", strerror(errno));
    int dtt = 0;
    for (struct dirent *de; !dtt && (de = readdir(dir));) {
      size_t n = strlen(de->d_name);
      dtt = n > 4 && strcmp(de->d_name + n - 4, ".dtt") == 0;
    }
    closedir(dir);
    if (!dtt) /* most likely a folder of NCCL logs, Inspector logs or Chakra traces */
      return dt_error_set(err, path, 0, 0, "is a directory without '.dtt' files: a directory is read as a native "
                                           "per-rank trace; for captures of other formats give the files "
                                           "themselves (e.g. %s/*.log or %s/*.et)", path, path);
    *imp = dt_importer_find("native");
    return DT_OK;
  }
  if (!S_ISREG(st.st_mode)) /* sniffing reads the start and the importer opens the file again */
    return dt_error_set(err, path, 0, 0, "is not a regular file (a pipe or a device): save the trace to a file "
                                         "first");
  FILE *raw = fopen(path, "rb");
  if (!raw)
    return dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
  unsigned char magic[2] = {0, 0};
  size_t got = fread(magic, 1, 2, raw);
  fclose(raw);
  int gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  gzFile f = gzopen(path, "rb");
  if (!f)
    return dt_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
  char *head = dt_xmalloc(SNIFF_BYTES + 1);
  int n = gzread(f, head, SNIFF_BYTES);
  int zerr = Z_OK;
  gzerror(f, &zerr);
  gzclose(f);
  size_t len = n > 0 ? (size_t)n : 0;
  head[len] = '\0';
  int best = 0;
  for (size_t i = 0; i < NIMPORTERS; i++) {
    int s = importers[i].sniff ? importers[i].sniff(head, len, path) : 0;
    if (s > best) {
      best = s;
      *imp = &importers[i];
    }
  }
  if (!*imp) {
    char what[256], sup[1024];
    if (gz && len == 0 && zerr != Z_OK && zerr != Z_STREAM_END)
      snprintf(what, sizeof what, "a truncated or corrupt gzip file");
    else
      describe(head, len, gz, what, sizeof what);
    supported_list(sup, sizeof sup);
    free(head);
    return dt_error_set(err, path, 0, 0, "unrecognised trace format: found %s; %s", what, sup);
  }
  free(head);
  return DT_OK;
}

/* ---------------------------------------------------------------------------------------------------- */
/* A capture option the chosen format does not read is refused before any work: given, it was meant to change the
 * trace, and a run without its effect would answer another question (`--expand 32` on a native trace ran its 8
 * ranks, said only in a note). Returns DT_OK, or DT_ERR naming the first such option and the formats that read it. */
static int refuse_unused_options(const dt_importer *imp, const dt_import_opts *o, const char *path, dt_error *err)
{
  dt_import_opts d;
  dt_import_opts_init(&d);
  unsigned given = (o->expand != d.expand ? DT_IMPORT_USES_EXPAND : 0) |
                   (o->rank != d.rank ? DT_IMPORT_USES_RANK : 0) |
                   (o->keep_gaps != d.keep_gaps || o->host_timeline != d.host_timeline ? DT_IMPORT_USES_GAPS : 0) |
                   (o->dep_window_s != d.dep_window_s ? DT_IMPORT_USES_DEP_WINDOW : 0) |
                   (o->compute_gap_s != d.compute_gap_s ? DT_IMPORT_USES_COMPUTE_GAP : 0) |
                   (o->world != d.world ? DT_IMPORT_USES_WORLD : 0) |
                   (o->ngroup_sizes ? DT_IMPORT_USES_GROUP_SIZE : 0);
  unsigned unused = given & ~imp->uses;
  if (!unused)
    return DT_OK;
  static const char *const names[] = {"--expand", "--rank", "--gaps", "--dep-window", "--compute-gap", "--world",
                                      "--group-size"};
  int b = 0;
  while (!(unused & (1u << b)))
    b++;
  char list[160] = "";
  size_t n = 0, k = 0;
  for (size_t i = 0; i < NIMPORTERS; i++)
    n += (importers[i].uses >> b) & 1u;
  for (size_t i = 0; i < NIMPORTERS; i++)
    if ((importers[i].uses >> b) & 1u)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k++ == 0 ? "" : k == n ? " and " : ", ",
               importers[i].name);
  return dt_error_set(err, path, 0, 0, "%s does not apply to format '%s': only %s read%s it (leave it out)", names[b],
                      imp->name, list, n == 1 ? "s" : "");
}

/* ---------------------------------------------------------------------------------------------------- */

/* One file given twice (by any name) would be read as two ranks, or its calls counted twice: an error for every
 * format, found here once instead of in each importer. Returns 1 with err set when two paths name one file. Files
 * that cannot be stat'ed are left to the importer, which says why. */
static int same_file_twice(const char *const *paths, size_t npaths, dt_error *err)
{
  if (npaths < 2)
    return 0;
  struct stat *st = dt_xcalloc(npaths, sizeof *st);
  int *ok = dt_xcalloc(npaths, sizeof *ok);
  int found = 0;
  for (size_t i = 0; i < npaths && !found; i++) {
    ok[i] = stat(paths[i], &st[i]) == 0;
    for (size_t j = 0; ok[i] && j < i && !found; j++)
      if (ok[j] && st[j].st_dev == st[i].st_dev && st[j].st_ino == st[i].st_ino) {
        dt_error_set(err, paths[i], 0, 0, "is the same file as '%s': give each file once", paths[j]);
        found = 1;
      }
  }
  free(ok);
  free(st);
  return found;
}

int dt_trace_load(const char *const *paths, size_t npaths, const dt_import_opts *opts, dt_trace **out,
                  dt_error *err)
{
  dt_import_opts defaults;
  if (!opts) {
    dt_import_opts_init(&defaults);
    opts = &defaults;
  }
  *out = NULL;
  if (npaths == 0)
    return dt_error_set(err, "", 0, 0, "no trace file given");
  if (same_file_twice(paths, npaths, err))
    return DT_ERR;
  const dt_importer *imp = NULL;
  if (!opts->format || strcmp(opts->format, "auto") == 0) {
    for (size_t i = 0; i < npaths; i++) {
      const dt_importer *fi;
      if (dt_trace_sniff(paths[i], &fi, err) != DT_OK)
        return DT_ERR;
      if (i > 0 && fi != imp)
        return dt_error_set(err, paths[i], 0, 0,
                            "is %s but '%s' is %s: the files of one trace must be of one format", fi->label,
                            paths[0], imp->label);
      imp = fi;
    }
  } else if (!(imp = dt_importer_find(opts->format))) {
    char names[512];
    size_t used = 0;
    for (size_t i = 0; i < NIMPORTERS; i++)
      used += (size_t)snprintf(names + used, sizeof names - used, ", %s", importers[i].name);
    return dt_error_set(err, "", 0, 0, "unknown trace format '%s': expected auto%s", opts->format, names);
  }
  if (refuse_unused_options(imp, opts, paths[0], err) != DT_OK)
    return DT_ERR;
  dt_trace *t = NULL;
  /* named by an out-of-memory exit: "... while building the trace of capture.json" */
  if (npaths > 1)
    dt_phase("building the trace of %s (and %zu more file%s)", paths[0], npaths - 1, npaths > 2 ? "s" : "");
  else
    dt_phase("building the trace of %s", paths[0]);
  if (imp->import(paths, npaths, opts, &t, err) != DT_OK)
    return DT_ERR;
  t->format = imp->name;
  dt_phase("checking the trace of %s%s", paths[0], npaths > 1 ? " and the other files" : "");
  if (dt_trace_validate(t, err) != DT_OK) {
    dt_trace_free(t);
    return DT_ERR;
  }
  *out = t;
  return DT_OK;
}
