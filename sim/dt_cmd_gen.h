/* `dtsim gen` and the generator flags `dtsim run --gen` shares with it (docs/generator.md). */
#ifndef DT_CMD_GEN_H
#define DT_CMD_GEN_H

#include "../common/dt_error.h"
#include "../traces/dt_gen.h"

#include <getopt.h>
#include <stdio.h>

/* getopt_long values of the generator flags start here (above any short option). */
#define DT_GEN_OPT_BASE 1000

/* The generator flags (--workload, --tp, --pp, ... --set KEY=VALUE), terminated by a zero row. */
extern const struct option dt_gen_long_options[];
/* Their help text, one line per flag. */
extern const char dt_gen_flags_help[];

/* Generator flags in command-line order, applied after the preset or workload file. */
typedef struct dt_gen_flags {
  const char *source;      /* preset name or workload file, NULL until given */
  const char *source_flag; /* how it was given: "--workload", "--gen" or "PRESET" (the positional argument) */
  size_t n, cap;
  char **keys, **values; /* owned */
  const char **flags;    /* the flag that set each key ("--tp", "--set"), for messages; static strings */
} dt_gen_flags;

/* Takes generator option opt (a dt_gen_long_options value) with its argument. Returns 1 when opt is a generator
 * flag, 0 when it is not, -1 (message printed for cmdname) for a malformed --set or a key set twice (--tp 2
 * --set tp=4; '-' and '_' alike; an argument-less flag repeated with its same value is taken once). */
int dt_gen_flags_take(dt_gen_flags *f, int opt, const char *arg, const char *cmdname);
/* Sets the preset or workload file from `flag` ("--workload", "--gen", "PRESET"). A second one, by any of
 * them, is an error naming both (message printed for cmdname), as for every option given twice. Returns 1,
 * or -1. */
int dt_gen_flags_source(dt_gen_flags *f, const char *flag, const char *arg, const char *cmdname);
/* Builds the configuration: preset or workload file (--workload always reads a file; --gen and PRESET read one
 * when the name ends with .yaml / .yml or is not a preset but names a path), then the flags in order, then
 * Megatron's adjustments (dt_gen_resolve; its note goes to stderr). Returns DT_OK or DT_ERR. */
int dt_gen_flags_config(const dt_gen_flags *f, dt_gen_config *c, dt_error *err);
/* After the configuration built from f failed a check of several keys together (dt_gen_validate, dt_gen_build:
 * "tensor parallel size 3 does not divide the 8 attention heads"), appends the generator flags the command line
 * gave, as given (" (given on the command line: --tp 3 --set seq=4096)"), so that the error names its flags.
 * Nothing when f has none or err has a file position. */
void dt_gen_flags_context(const dt_gen_flags *f, dt_error *err);
/* Frees the flags' copies and leaves f empty (reusable); source and source_flag are borrowed from argv. */
void dt_gen_flags_free(dt_gen_flags *f);

/* Prints the --summary tables for c and its trace t. */
int dt_gen_print_summary(FILE *out, const dt_gen_config *c, const dt_trace *t, dt_error *err);

/* `dtsim gen`: argv[0] is "gen". Returns the exit code (0, or 2 for bad input or usage). */
int dt_cmd_gen(int argc, char **argv);
extern const char dt_gen_usage[];

#endif
