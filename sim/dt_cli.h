/* The dtsim command line: subcommand table and dispatch (git's run_builtin pattern). */
#ifndef DT_CLI_H
#define DT_CLI_H

/* Runs dtsim with argv; returns the process exit code: 0 success, 1 simulation finished with a problem
 * (deadlock), 2 bad input or usage. */
int dt_cli_main(int argc, char **argv);

#include "../common/dt_error.h"
#include "../platforms/dt_platform.h"
#include "../replay/dt_degrade.h"
#include "../replay/dt_replay.h"
#include "../traces/dt_trace.h"

#include "../traces/dt_trace_io.h"

#include <stdint.h>
#include <stdio.h>

/* Prints a command's usage text on f with "{algos}" replaced by every algorithm --algo takes but auto
 * (dt_algo_list: the one table the names come from), so that help and errors never drift from it. */
void dt_cli_print_usage(FILE *f, const char *text);

/* Options `run`, `import` and `scale` share for reading captures (getopt_long values; each takes an argument). */
#define IMPORT_LONG_OPTIONS                                                                                    \
  {"format", required_argument, NULL, 'F'}, {"expand", required_argument, NULL, 'E'},                          \
      {"rank", required_argument, NULL, 'R'}, {"dep-window", required_argument, NULL, 'W'},                    \
      {"gaps", required_argument, NULL, 'G'}, {"compute-gap", required_argument, NULL, 'c'},                 \
      {"world", required_argument, NULL, 'w'}, {"group-size", required_argument, NULL, 'z'}

/* getopt_long values of the link faults (docs/whatif.md), clear of the letters, DT_GEN_OPT_BASE and the
 * variability options of dt_cli.c */
enum { DT_OPT_DEGRADE = 2100, DT_OPT_FAIL, DT_OPT_FLAP };

/* The run options `run` and `run --job ...` share (getopt_long rows): --json, --fidelity, --algo, --proto,
 * --cfg, --no-links, --top, --exact, --degrade, --fail, --flap. dt_cli_run_option takes them. */
#define RUN_SHARED_LONG_OPTIONS                                                                                \
  {"json", no_argument, NULL, 'j'}, {"fidelity", required_argument, NULL, 'f'},                                \
      {"algo", required_argument, NULL, 'a'}, {"proto", required_argument, NULL, 'P'},                         \
      {"cfg", required_argument, NULL, 'C'}, {"no-links", no_argument, NULL, 'L'},                             \
      {"top", required_argument, NULL, 'T'}, {"exact", no_argument, NULL, 'X'},                                \
      {"degrade", required_argument, NULL, DT_OPT_DEGRADE}, {"fail", required_argument, NULL, DT_OPT_FAIL},    \
      {"flap", required_argument, NULL, DT_OPT_FLAP}

/* The options of `run` (and of `run --job`) that collect every value given (dt_cli_check_repeats). */
#define RUN_REPEATABLE "cfg log degrade fail flap slow late group-size set"

/* What RUN_SHARED_LONG_OPTIONS set: the replay's options, the link faults, and the report's. */
typedef struct dt_run_shared {
  dt_replay_opts *ro; /* fidelity, algo, proto, exact, links, SimGrid --cfg settings (dt_cli_simgrid_option) */
  dt_faults *faults;  /* --degrade, --fail, --flap (dt_faults_parse) */
  int json;           /* --json */
  size_t top_links;   /* --top N, links in the report (the caller sets the default, 10) */
} dt_run_shared;

/* Takes one of RUN_SHARED_LONG_OPTIONS (opt, its argument arg) into sh. Returns 1 if handled, 0 if opt is not
 * one, -1 on a bad value (the usage error printed, as `dtsim run: ...` and the help hint). */
int dt_cli_run_option(int opt, const char *arg, dt_run_shared *sh);

/* Takes one of IMPORT_LONG_OPTIONS (opt, with getopt's optarg) into io. Returns 1 if handled, 0 if opt is not
 * one, -1 on a bad value (message printed for cmdname). */
int dt_cli_import_option(int opt, const char *cmdname, dt_import_opts *io);

/* The collective-model options `run`, `jobs` and `bench` share, named without their dashes: "fidelity" (flow|step,
 * into *fidelity), "algo" (auto or an algorithm, dt_algo_from_name, into *algo) and "proto" (auto, -1, or a
 * dt_proto, dt_proto_from_name, into *proto). Only the named option's target is written. Returns 0, or -1 with
 * why set to the usage message ("--fidelity expects flow or step, found 'x'"). */
int dt_cli_model_option(const char *name, const char *arg, dt_fidelity *fidelity, dt_algo *algo, int *proto,
                        char *why, size_t why_size);

/* `--cfg KEY:VALUE` (is_log 0, checked against the settings table of dt_cli.c) or `--log CAT.thres:LEVEL` (is_log 1, checked by
 * dt_check_log_setting) of run and jobs: appends "--cfg=arg" or "--log=arg" to ro's SimGrid arguments
 * (ro->simgrid_argv grows; the caller frees each of its ro->simgrid_argc strings and the array). Returns 0, or -1
 * with why set to the usage message and ro untouched. */
int dt_cli_simgrid_option(int is_log, const char *arg, dt_replay_opts *ro, char *why, size_t why_size);

/* Checks one `--cfg KEY:VALUE` as run does (the settings table of dt_cli.c, their spellings and ranges), for a
 * sweep spec's `run.cfg`, checked when the spec is read. Returns 0, or -1 with why set ("--cfg KEY: expected ..."). */
int dt_cli_check_cfg(const char *kv, char *why, size_t why_size);

/* The one rule for an option given twice (docs/cli.md, "Options given twice"): an option that takes a value
 * takes one, so a second one is a usage error naming the option and both values (was: the last one silently
 * won, and `sweep -o - -o -` printed the table twice); an option without a value (--json) may be repeated and
 * means the same; the options named in repeatable (space-separated long names without their dashes, "cfg set")
 * collect every value. Scans argc/argv with getopt_long as the caller's loop will (optstring and longopts as
 * it passes them; argv itself is left as it was: the scan permutes a copy), before it, and leaves optind 0 for a
 * fresh scan. Returns 0, or -1 after printing "dtsim CMDNAME: --top given twice ('5' and '7'): ..." with the help
 * hint. Unknown options and missing values are left to the caller's loop. */
#include <getopt.h>
int dt_cli_check_repeats(const char *cmdname, int argc, char **argv, const char *optstring,
                         const struct option *longopts, const char *repeatable);

/* Reports what getopt_long rejected (opterr is 0 and optstrings start with ':' so that getopt prints nothing):
 * opt ':' a missing value, '?' an unknown option, with argv[optind - 1] the word at fault. With the option table,
 * a long option says more: a value given to a flag that takes none (`--json=1`), an abbreviation that matches
 * several (`--time`: --timeline, --timeline-ranks), the nearest name of a misspelt one (`--timline`: did you mean
 * '--timeline'?). Prints "dtsim CMDNAME: ..." and the help hint; returns 2. */
int dt_cli_bad_option(const char *cmdname, int opt, char **argv, const struct option *longopts);

/* Names the option of a file that could not be written or read (outputs; --placement): when err is about path (or, for a directory output, a file in it)
 * and says no line, its message becomes "FLAG PATH: what went wrong" (the file's own name kept after PATH when
 * it is one inside a directory), so that a write error at the end of a run says which option wrote where
 * (was: "/dev/full: cannot write the timeline file: ..."). Any other err is left alone. */
void dt_cli_name_output(dt_error *err, const char *flag, const char *path);

/* Checks, before the work, that output path (given with option flag, "--timeline", "-o") can be written as
 * dt_outfile writes it (a temporary file next to it, renamed over it). DT_OK, or DT_ERR with err naming the
 * option, the path, what it would hold (what: "the timeline") and why not: a directory, a missing folder, a
 * folder where no file can be created (read-only, /proc) with the reason. */
int dt_cli_output_check(const char *flag, const char *path, const char *what, dt_error *err);

/* -o OUT of import and scale (cmd names it in the message) when OUT ends with '/' (one .dtt per rank): a directory
 * that already holds .dtt files is refused unless force (a run of the directory reads every .dtt in it, so an
 * earlier run's trace.7.dtt would join a new 4-rank trace). With clear (and force), those .dtt files are removed
 * (other files stay) and a note says how many. Call without clear before the work and with it just before
 * writing. A missing directory or another OUT is DT_OK. Returns DT_OK or DT_ERR with err set. */
int dt_cli_out_dir(const char *cmd, const char *out, int force, int clear, dt_error *err);

/* Why s is not a list of ranks or nodes below limit (dt_parse_rank_list's form), the item at fault first: "'5-2'
 * is a reversed range (write 2-5)", "'9' is past the last, 7", else the form expected. Writes the reason (no
 * leading or trailing words) into why (size bytes). Returns why. */
const char *dt_cli_rank_list_why(const char *s, long limit, char *why, size_t size);

/* --max-output SIZE of import and gen (dt_bench_parse_size: digits, then K, M, G or T = 1024, an optional B).
 * Returns 0 with *out in bytes, or -1 after printing the usage error (the form, the units, examples). */
int dt_cli_max_output(const char *cmdname, const char *arg, uint64_t *out);

/* DT_OK when the native text of t (at least dt_trace_native_size_bound bytes) fits max_output bytes, else
 * DT_ERR with err naming out, the bound and how to raise the limit (`CMD --max-output SIZE`). import and gen call
 * it before writing, so that a large --expand is refused instead of filling the disk. */
int dt_check_output_size(const dt_trace *t, const char *out, uint64_t max_output, const char *cmd, dt_error *err);
/* Writes t to out (dt_trace_write_native) after dt_check_output_size, stopping once the bytes written pass
 * max_output (dt_trace_write_native_limit): then nothing is left under out nor a temporary, and err says how far
 * it got, the whole size estimated from the bytes per op written so far and its lower bound, and how to raise
 * the limit (`CMD --max-output SIZE`). Returns DT_OK or DT_ERR. */
int dt_write_output(const dt_trace *t, const char *out, uint64_t max_output, const char *cmd, dt_error *err);

#endif
