/* Unit tests for platforms/: the YAML v1 loader (values, defaults, every error class with its position) and
 * the fabric shape rules of DESIGN.md §3. Expected values are hand-computed in the comments. */
#include "dt_test.h"
#include "platforms/dt_platform.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REL_EQ(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-12 * fabs(b), "%s = %.17g, expected %.17g", #a, (a), (b))

/* A valid 4-node platform; line numbers matter: variants replace one line and errors name lines. */
static const char *const base_lines[] = {
    "dtsim_platform: 1",                                                /* 1 */
    "name: t",                                                          /* 2 */
    "gpu: {model: H100, peak: 989TFLOPS}",                              /* 3 */
    "nodes: 4",                                                         /* 4 */
    "gpus_per_node: 8",                                                 /* 5 */
    "intra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}",   /* 6 */
    "nics:",                                                            /* 7 */
    "  per_node: 8",                                                    /* 8 */
    "  bandwidth: 400Gb/s",                                             /* 9 */
    "  latency: 1us",                                                   /* 10 */
    "network:",                                                         /* 11 */
    "  topology: fat-tree",                                             /* 12 */
    "  levels: 2",                                                      /* 13 */
    "  radix: 64",                                                      /* 14 */
    "  link_bandwidth: 400Gb/s",                                        /* 15 */
    "  link_latency: 300ns",                                            /* 16 */
};
#define BASE_N (sizeof base_lines / sizeof base_lines[0])

static char text_buf[8192];

/* The base text with line `line` (1-based) replaced by `repl` (NULL keeps it; "" leaves an empty line so that
 * later lines keep their numbers). Pairs (line, repl) end with 0. */
static const char *variant(int line, ...)
{
  const char *repl[BASE_N + 1] = {0};
  va_list ap;
  va_start(ap, line);
  while (line > 0) {
    repl[line - 1] = va_arg(ap, const char *);
    line = va_arg(ap, int);
  }
  va_end(ap);
  text_buf[0] = '\0';
  for (size_t i = 0; i < BASE_N; i++) {
    strcat(text_buf, repl[i] ? repl[i] : base_lines[i]);
    strcat(text_buf, "\n");
  }
  return text_buf;
}

static dt_platform *parse_ok(const char *text)
{
  dt_platform *p = NULL;
  dt_error e;
  char buf[2048];
  int rc = dt_platform_parse(text, strlen(text), "p.yaml", &p, &e);
  ck_assert_msg(rc == DT_OK, "unexpected error: %s\n--- text:\n%s", dt_error_format(&e, buf, sizeof buf), text);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* Asserts a parse error of file "p.yaml" at line:col (0:0 when the error has no position) whose message
 * contains each of the NULL-terminated substrings. */
static void parse_err(const char *text, long line, long col, ...)
{
  dt_platform *p = (dt_platform *)1;
  dt_error e;
  char buf[2048];
  int rc = dt_platform_parse(text, strlen(text), "p.yaml", &p, &e);
  ck_assert_msg(rc == DT_ERR, "expected an error\n--- text:\n%s", text);
  ck_assert_ptr_null(p);
  dt_error_format(&e, buf, sizeof buf);
  ck_assert_str_eq(e.file, "p.yaml");
  ck_assert_msg(e.line == line && e.col == col, "position %ld:%ld, expected %ld:%ld: %s", e.line, e.col, line, col,
                buf);
  va_list ap;
  va_start(ap, col);
  for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
    ck_assert_msg(strstr(e.msg, s) != NULL, "message lacks \"%s\": %s", s, buf);
  va_end(ap);
}

START_TEST(test_every_key_value)
{
  const char *text = "dtsim_platform: 1\n"
                     "name: dgx-h100-4node\n"
                     "gpu:   {model: H100-SXM, peak: 989TFLOPS, efficiency: 0.45}\n"
                     "nodes: 4\n"
                     "gpus_per_node: 8\n"
                     "intra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1.2us}\n"
                     "nics: {per_node: 4, bandwidth: 400Gb/s, latency: 0.003ms}\n"
                     "network:\n"
                     "  topology: fat-tree\n"
                     "  levels: 3\n"
                     "  radix: 36\n"
                     "  oversubscription: 2\n"
                     "  wiring: rail\n"
                     "  link_bandwidth: 25GiB/s\n"
                     "  link_latency: 500ns\n"
                     "model: {bandwidth_factor: 0.9, network_bandwidth_factor: 0.95, latency_factor: 1.25}\n";
  dt_platform *p = parse_ok(text);
  ck_assert_str_eq(p->name, "dgx-h100-4node");
  ck_assert_str_eq(p->source, "p.yaml");
  ck_assert_str_eq(p->gpu_model, "H100-SXM");
  REL_EQ(p->gpu_peak, 9.89e14);
  REL_EQ(p->gpu_efficiency, 0.45);
  ck_assert_int_eq(p->nodes, 4);
  ck_assert_int_eq(p->gpus_per_node, 8);
  ck_assert_int_eq(p->intra_kind, DT_INTRA_NVSWITCH);
  REL_EQ(p->intra_bandwidth, 4.5e11); /* 450 GB/s = 450e9 bytes/s */
  REL_EQ(p->intra_latency, 1.2e-6);
  ck_assert_int_eq(p->nics_per_node, 4);
  REL_EQ(p->nic_bandwidth, 5e10); /* 400 Gb/s = 400e9 bits/s / 8 */
  REL_EQ(p->nic_latency, 3e-6);   /* 0.003 ms */
  ck_assert_int_eq(p->topology, DT_NET_FAT_TREE);
  ck_assert_int_eq(p->levels, 3);
  ck_assert_int_eq(p->radix, 36);
  ck_assert_int_eq(p->oversubscription, 2);
  ck_assert_int_eq(p->wiring, DT_WIRING_RAIL);
  REL_EQ(p->link_bandwidth, 25.0 * 1073741824.0); /* 25 GiB/s = 25 * 2^30 */
  REL_EQ(p->link_latency, 5e-7);
  REL_EQ(p->bandwidth_factor, 0.9);
  REL_EQ(p->network_bandwidth_factor, 0.95);
  REL_EQ(p->latency_factor, 1.25);
  ck_assert_int_eq(dt_platform_gpu_count(p), 32);
  dt_platform_free(p);

  /* the other spellings of DESIGN.md §3: 400Gbps, single-switch, wiring node */
  p = parse_ok(variant(9, "  bandwidth: 400Gbps", 12, "  topology: single-switch", 13, "", 14, "", 0));
  REL_EQ(p->nic_bandwidth, 5e10);
  ck_assert_int_eq(p->topology, DT_NET_SINGLE_SWITCH);
  dt_platform_free(p);
  p = parse_ok(variant(14, "  radix: 64\n  wiring: node", 0));
  ck_assert_int_eq(p->wiring, DT_WIRING_NODE);
  ck_assert_int_eq(p->levels, 2);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_defaults)
{
  /* one node: nics and network optional; efficiency, factors, oversubscription and wiring default */
  const char *one = "dtsim_platform: 1\n"
                    "name: box\n"
                    "gpu: {model: A100, peak: 312TFLOPS}\n"
                    "nodes: 1\n"
                    "gpus_per_node: 8\n"
                    "intra_node: {kind: nvswitch, bandwidth: 300GB/s, latency: 2us}\n";
  dt_platform *p = parse_ok(one);
  REL_EQ(p->gpu_efficiency, 1.0);
  REL_EQ(p->bandwidth_factor, 1.0);
  ck_assert(p->network_bandwidth_factor == 0); /* not given: NICs use bandwidth_factor */
  REL_EQ(p->latency_factor, 1.0);
  ck_assert_int_eq(p->nics_per_node, 0);
  ck_assert_int_eq(p->topology, DT_NET_NONE);
  ck_assert_int_eq(p->oversubscription, 1);
  ck_assert_int_eq(p->wiring, DT_WIRING_NODE);
  ck_assert_int_eq(dt_platform_nic_of_gpu(p, 5), 0);
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(p, &s, &e), DT_OK);
  ck_assert_int_eq(s.nics, 0);
  ck_assert_int_eq(s.leaves, 0);
  ck_assert_int_eq(s.spines, 0);
  dt_platform_free(p);

  /* multi-node base has no oversubscription, wiring or model keys */
  p = parse_ok(variant(0));
  ck_assert_int_eq(p->oversubscription, 1);
  ck_assert_int_eq(p->wiring, DT_WIRING_NODE);
  REL_EQ(p->gpu_efficiency, 1.0);
  REL_EQ(p->latency_factor, 1.0);
  dt_platform_free(p);
  dt_platform_free(NULL); /* no-op */
}
END_TEST

START_TEST(test_shipped_files)
{
  dt_platform *p = NULL;
  dt_error e;
  char buf[2048];
  dt_fabric_shape s;

  ck_assert_msg(dt_platform_load("platforms/dgx-a100.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  ck_assert_int_eq(p->nodes, 1);
  ck_assert_int_eq(dt_platform_gpu_count(p), 8);
  REL_EQ(p->intra_bandwidth, 3e11); /* NVLink3: 600 GB/s bidirectional */
  REL_EQ(p->gpu_peak, 3.12e14);
  ck_assert_int_eq(p->topology, DT_NET_NONE);
  ck_assert_str_eq(p->source, "platforms/dgx-a100.yaml");
  dt_platform_free(p);

  ck_assert_msg(dt_platform_load("platforms/dgx-h100-4node.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  ck_assert_int_eq(dt_platform_gpu_count(p), 32);
  REL_EQ(p->intra_bandwidth, 4.5e11);
  REL_EQ(p->nic_bandwidth, 5e10);
  REL_EQ(p->link_latency, 3e-7);
  ck_assert_int_eq(p->wiring, DT_WIRING_RAIL);
  ck_assert_int_eq(dt_platform_fabric_shape(p, &s, &e), DT_OK);
  /* radix 64, 1:1 -> d = u = 32; rail: ceil(4 nodes/32) = 1 leaf per rail, 8 rails -> 8 leaves, 32 spines */
  ck_assert_int_eq(s.nics, 32);
  ck_assert_int_eq(s.down_ports, 32);
  ck_assert_int_eq(s.up_ports, 32);
  ck_assert_int_eq(s.leaves_per_rail, 1);
  ck_assert_int_eq(s.leaves, 8);
  ck_assert_int_eq(s.spines, 32);
  /* 64 leaves at most (a spine has 64 ports), 8 rails of 8 leaves of 32 NICs */
  ck_assert_int_eq(s.capacity, 2048);
  ck_assert_int_eq(dt_platform_leaf_of_nic(p, &s, 2 * 8 + 5), 5); /* node 2, NIC 5: rail 5 */
  dt_platform_free(p);

  ck_assert_msg(dt_platform_load("platforms/fat-tree-oversub.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  ck_assert_int_eq(dt_platform_gpu_count(p), 128);
  REL_EQ(p->nic_bandwidth, 2.5e10); /* HDR 200 Gb/s */
  ck_assert_int_eq(p->oversubscription, 3);
  ck_assert_int_eq(dt_platform_fabric_shape(p, &s, &e), DT_OK);
  /* radix 40, 3:1 -> d = 30, u = 10; 128 NICs -> ceil(128/30) = 5 leaves, 10 spines, at most 40*30 NICs */
  ck_assert_int_eq(s.down_ports, 30);
  ck_assert_int_eq(s.up_ports, 10);
  ck_assert_int_eq(s.leaves, 5);
  ck_assert_int_eq(s.spines, 10);
  ck_assert_int_eq(s.capacity, 1200);
  ck_assert_int_eq(dt_platform_leaf_of_nic(p, &s, 127), 4);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_unknown_key)
{
  parse_err(variant(9, "  bandwith: 400Gb/s", 0), 9, 3, "unknown key 'bandwith' in 'nics'",
            "(did you mean 'bandwidth'?)", NULL);
  parse_err(variant(4, "node: 4", 0), 4, 1, "unknown key 'node' at the top level", "(did you mean 'nodes'?)", NULL);
  /* inside a flow mapping: "intra_node: {kind: nvswitch, " is 29 characters */
  parse_err(variant(6, "intra_node: {kind: nvswitch, bandwdth: 450GB/s, latency: 1us}", 0), 6, 30,
            "unknown key 'bandwdth' in 'intra_node'", "(did you mean 'bandwidth'?)", NULL);
  parse_err(variant(14, "  radix: 64", 15, "  zzzzzzzzzzzz: 1", 0), 15, 3, "unknown key 'zzzzzzzzzzzz' in 'network'",
            "(expected topology, levels, radix, oversubscription, wiring,", NULL); /* the keys allowed (were not named) */
  dt_error e;
  dt_platform *p;
  const char *t = variant(15, "  qqqqqqqqqqqqqq: 1", 0);
  ck_assert_int_eq(dt_platform_parse(t, strlen(t), "p.yaml", &p, &e), DT_ERR);
  ck_assert_ptr_null(strstr(e.msg, "did you mean")); /* nothing near: no hint */
}
END_TEST

START_TEST(test_bare_number)
{
  parse_err(variant(9, "  bandwidth: 400", 0), 9, 14, "'nics.bandwidth'", "bare number '400'", "unit", NULL);
  parse_err(variant(16, "  link_latency: 300", 0), 16, 17, "'network.link_latency'", "bare number '300'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989}", 0), 3, 26, "'gpu.peak'", "bare number '989'", NULL);
}
END_TEST

START_TEST(test_bad_unit)
{
  parse_err(variant(9, "  bandwidth: 400GB", 0), 9, 14, "'nics.bandwidth'", "unit 'GB'", "450GB/s", NULL);
  parse_err(variant(10, "  latency: 1 parsec", 0), 10, 12, "'nics.latency'", "unit 'parsec'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TB/s}", 0), 3, 26, "'gpu.peak'", "unit 'TB/s'", NULL);
  parse_err(variant(15, "  link_bandwidth: fast", 0), 15, 19, "'network.link_bandwidth'", "'fast'", NULL);
  parse_err(variant(15, "  link_bandwidth: 0GB/s", 0), 15, 19, "'network.link_bandwidth'", "above zero", NULL);
  parse_err(variant(16, "  link_latency: -3ns", 0), 16, 17, "'network.link_latency'", "'-3ns'", NULL);
}
END_TEST

START_TEST(test_missing_key)
{
  /* block mapping: its position is its first key, and the message says it is the mapping's (a top-level key at
   * 1:1 read as a position in the file's first line) */
  parse_err(variant(9, "", 0), 8, 3, "missing required key 'bandwidth' in 'nics' (the mapping starting at 8:3)", NULL);
  parse_err(variant(2, "", 0), 1, 1, "missing required key 'name' at the top level (the mapping starting at 1:1)",
            NULL);
  /* flow mapping: its position is the '{' (column 6 after "gpu: ") */
  parse_err(variant(3, "gpu: {model: H100}", 0), 3, 6,
            "missing required key 'peak' in 'gpu' (the mapping starting at 3:6)", NULL);
  parse_err(variant(12, "", 0), 13, 3, "missing required key 'topology' in 'network'", NULL);
  parse_err(variant(14, "", 0), 12, 3, "missing required key 'radix' in 'network'", "fat-tree", NULL);
  parse_err(variant(13, "", 0), 12, 3, "missing required key 'levels' in 'network'", NULL);
  /* nics and network are required when nodes > 1 */
  parse_err(variant(7, "", 8, "", 9, "", 10, "", 0), 1, 1,
            "missing required key 'nics' at the top level (the mapping starting at 1:1; required when 'nodes' is more "
            "than 1)", NULL);
  parse_err(variant(11, "", 12, "", 13, "", 14, "", 15, "", 16, "", 0), 1, 1, "missing required key 'network'",
            NULL);
  /* one node with a network but no NICs */
  parse_err(variant(4, "nodes: 1", 7, "", 8, "", 9, "", 10, "", 0), 1, 1, "missing required key 'nics'",
            "'network' is given", NULL);
  parse_err(variant(6, "intra_node: {bandwidth: 450GB/s, latency: 1us}", 0), 6, 13,
            "missing required key 'kind' in 'intra_node'", NULL);
}
END_TEST

START_TEST(test_wrong_type)
{
  parse_err(variant(7, "nics: 8", 8, "", 9, "", 10, "", 0), 7, 7, "expected a mapping for 'nics'", "found '8'", NULL);
  parse_err(variant(2, "name: {first: a}", 0), 2, 7, "'name'", "found a mapping", NULL);
  parse_err(variant(2, "name:", 0), 2, 6, "'name'", "found nothing", NULL);
  parse_err(variant(4, "nodes: 4.5", 0), 4, 8, "expected a whole number for 'nodes'", "found '4.5'", NULL);
  parse_err(variant(4, "nodes: 0", 0), 4, 8, "expected a whole number from 1 to 1000000 for 'nodes'", "found '0'",
            NULL);
  parse_err(variant(5, "gpus_per_node: -8", 0), 5, 16, "a whole number from 1 to 1024 for 'gpus_per_node'", "'-8'", NULL);
  parse_err(variant(4, "nodes: [1, 2]", 0), 4, 8, "'nodes'", "found a sequence", NULL);
  parse_err(variant(8, "  per_node: eight", 0), 8, 13, "whole number for 'nics.per_node'", "'eight'", NULL);
  parse_err(variant(13, "  levels: 4", 0), 13, 11, "expected 2 or 3 for 'network.levels'", "found '4'", NULL);
  parse_err(variant(14, "  radix: 1", 0), 14, 10, "from 2 to 65536 for 'network.radix'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, efficiency: 1.5}", 0), 3, 49, "'gpu.efficiency'",
            "at most 1", "'1.5'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, efficiency: 45%}", 0), 3, 49,
            "plain number for 'gpu.efficiency'", NULL);
  parse_err(variant(16, "  link_latency: 300ns\nmodel: {bandwidth_factor: 0}", 0), 17, 27,
            "'model.bandwidth_factor'", "above 1e-06 and at most 1e+06", NULL);
  parse_err(variant(16, "  link_latency: 300ns\nmodel: 2", 0), 17, 8, "expected a mapping for 'model'", NULL);
}
END_TEST

START_TEST(test_choices)
{
  /* the kinds exist now: their own keys are missing (position: the '{' of the flow mapping) */
  parse_err(variant(6, "intra_node: {kind: pcie, bandwidth: 64GB/s, latency: 1us}", 0), 6, 13,
            "missing required key 'gpus_per_switch' in 'intra_node' (the mapping starting at 6:13; required for kind "
            "'pcie')", NULL);
  parse_err(variant(6, "intra_node: {kind: nvlink-mesh, bandwidth: 64GB/s, latency: 1us}", 0), 6, 33,
            "key 'bandwidth' in 'intra_node' applies only to kinds 'nvswitch', 'pcie' (not 'nvlink-mesh')", NULL);
  parse_err(variant(6, "intra_node: {kind: nvswich, bandwidth: 64GB/s, latency: 1us}", 0), 6, 20,
            "unknown value 'nvswich' for 'intra_node.kind'", "(did you mean 'nvswitch'?)", NULL);
  parse_err(variant(12, "  topology: dragonfly", 0), 13, 3,
            "key 'levels' in 'network' applies only to topology 'fat-tree' (not 'dragonfly')", NULL);
  parse_err(variant(12, "  topology: fat_tree", 0), 12, 13, "(did you mean 'fat-tree'?)", NULL);
  parse_err(variant(14, "  radix: 64\n  wiring: rails", 0), 15, 11, "unknown value 'rails' for 'network.wiring'",
            "(did you mean 'rail'?)", NULL);
  /* fat-tree-only keys with a single switch */
  parse_err(variant(12, "  topology: single-switch", 13, "", 0), 14, 3,
            "key 'radix' in 'network' applies only to topology 'fat-tree'", NULL);
  parse_err(variant(6, "intra_node: {kind: nvlinkmesh, bandwidth: 64GB/s, latency: 1us}", 0), 6, 20,
            "unknown value 'nvlinkmesh' for 'intra_node.kind'", "(did you mean 'nvlink-mesh'?)", NULL);
}
END_TEST

START_TEST(test_nics_divide)
{
  parse_err(variant(8, "  per_node: 3", 0), 8, 13, "'nics.per_node' (3) does not divide 'gpus_per_node' (8)", NULL);
  parse_err(variant(8, "  per_node: 16", 0), 8, 13, "(16) does not divide", NULL);
  dt_platform *p = parse_ok(variant(8, "  per_node: 2", 0));
  ck_assert_int_eq(p->nics_per_node, 2);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_split_not_whole)
{
  /* radix 64, k = 2: 64*2/3 and 64/3 are not whole; the error points at the oversubscription value */
  parse_err(variant(14, "  radix: 64\n  oversubscription: 2", 0), 15, 21, "'network.radix' 64",
            "'network.oversubscription' 2", "does not split into whole ports", NULL);
  /* radix 10, k = 1 is whole (5 + 5) but a 3-level tree needs an even radix: 9 is odd */
  parse_err(variant(13, "  levels: 3", 14, "  radix: 9\n  oversubscription: 2", 0), 14, 10, "even 'network.radix'",
            NULL);
  dt_platform *p = parse_ok(variant(14, "  radix: 36\n  oversubscription: 2", 0)); /* 24 + 12 */
  dt_platform_free(p);
}
END_TEST

START_TEST(test_tree_too_small)
{
  /* 4 nodes x 8 NICs = 32; radix 4, 1:1 -> d = 2, at most 4 leaves: 8 NICs. Points at the 'network' mapping. */
  parse_err(variant(14, "  radix: 4", 0), 12, 3, "holds at most 8 NICs, the platform has 32", NULL);
  /* rail wiring, radix 8: d = 4, 8 leaves max shared by 8 rails -> 1 leaf per rail -> 4 nodes: 32 NICs fit,
   * 5 nodes (40 NICs) do not */
  dt_platform *p = parse_ok(variant(14, "  radix: 8\n  wiring: rail", 0));
  dt_platform_free(p);
  parse_err(variant(4, "nodes: 5", 14, "  radix: 8\n  wiring: rail", 0), 12, 3,
            "holds at most 32 NICs, the platform has 40", "rail", NULL);
  /* 3 levels, radix 4: d = 2, pods of 2 leaves, 4 pods -> 8 leaves -> 16 NICs < 32 */
  parse_err(variant(13, "  levels: 3", 14, "  radix: 4", 0), 12, 3, "3-level", "holds at most 16 NICs, the platform has 32",
            NULL);
}
END_TEST

START_TEST(test_version)
{
  parse_err(variant(1, "dtsim_platform: 2", 0), 1, 17, "unsupported 'dtsim_platform' version '2'", "version 1", NULL);
  parse_err(variant(1, "dtsim_platform: one", 0), 1, 17, "schema version 1 for 'dtsim_platform'", "'one'", NULL);
  parse_err(variant(1, "", 0), 2, 1, "missing required key 'dtsim_platform'", NULL);
}
END_TEST

/* Power and cost figures (docs/platform.md "Power and cost"): both forms, units, and every error at its position.
 * Columns: "gpu: {model: H100, peak: 989TFLOPS, power: " is 43 characters, so gpu.power's value starts at 44. */
START_TEST(test_power_cost)
{
  dt_platform *p = parse_ok(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, busy: 0.7kW}}", 7,
                                    "nics: {per_node: 8, bandwidth: 400Gb/s, latency: 1us, power: 25W}", 8, "", 9, "",
                                    10, "", 16, "  link_latency: 300ns\n  switch_power: {idle: 1kW, busy: 1.7kW}\n"
                                    "cost: {currency: EUR, gpu_hour: 2.5, nic_hour: 0, switch_hour: 0.86, "
                                    "energy_kwh: 0.1}", 0));
  ck_assert(p->gpu_power.present && p->nic_power.present && p->switch_power.present && p->cost.present);
  REL_EQ(p->gpu_power.idle, 70.0);
  REL_EQ(p->gpu_power.busy, 700.0);
  REL_EQ(p->nic_power.idle, 25.0); /* a scalar: constant power */
  REL_EQ(p->nic_power.busy, 25.0);
  REL_EQ(p->switch_power.idle, 1000.0);
  REL_EQ(p->switch_power.busy, 1700.0);
  ck_assert_str_eq(p->cost.currency, "EUR");
  REL_EQ(p->cost.gpu_hour, 2.5);
  ck_assert(p->cost.nic_hour == 0);
  REL_EQ(p->cost.switch_hour, 0.86);
  REL_EQ(p->cost.energy_kwh, 0.1);
  dt_platform_free(p);
  /* none given: absent; a cost section without currency is in USD */
  p = parse_ok(variant(16, "  link_latency: 300ns\ncost: {gpu_hour: 1}", 0));
  ck_assert(!p->gpu_power.present && !p->nic_power.present && !p->switch_power.present);
  ck_assert_str_eq(p->cost.currency, "USD");
  dt_platform_free(p);

  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: 700W}", 0), 3, 44,
            "expected a mapping {idle: W, busy: W} for 'gpu.power'", "'700W'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70, busy: 700W}}", 0), 3, 51,
            "'gpu.power.idle'", "bare number '70'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, busy: 700J}}", 0), 3, 62,
            "'gpu.power.busy'", "unit 'J'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 800W, busy: 700W}}", 0), 3, 45,
            "'gpu.power.idle' (800 W) is above 'gpu.power.busy' (700 W)", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, bussy: 700W}}", 0), 3, 56,
            "unknown key 'bussy' in 'gpu.power'", "(did you mean 'busy'?)", NULL);
  p = parse_ok(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, busy: 700W, comm: 200W}}", 0));
  ck_assert(p->gpu_power.comm_given && p->gpu_power.comm == 200);
  dt_platform_free(p);
  p = parse_ok(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, busy: 700W}}", 0));
  ck_assert(!p->gpu_power.comm_given && p->gpu_power.comm == 70); /* comm defaults to idle */
  dt_platform_free(p);
  /* "{idle: 70W, busy: 700W, " is 24 characters */
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, busy: 700W, comm: 800W}}", 0), 3, 68,
            "'gpu.power.comm' (800 W) is outside 'idle' to 'busy' (70 W to 700 W)", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 1W, busy: 2W}}", 16,
                    "  link_latency: 300ns\n  switch_power: {idle: 1kW, busy: 2kW, comm: 1kW}", 0),
            17, 40, "unknown key 'comm' in 'network.switch_power'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W}}", 0), 3, 44,
            "missing required key 'busy' in 'gpu.power'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 70W, busy: 2MW}}", 0), 3, 62,
            "above the 1e+06 W", NULL);
  /* "nics: {per_node: 8, bandwidth: 400Gb/s, latency: 1us, " is 54 characters */
  parse_err(variant(7, "nics: {per_node: 8, bandwidth: 400Gb/s, latency: 1us, power: 25W}", 8, "", 9, "", 10, "", 0),
            7, 55, "'nics.power' needs 'gpu.power'", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, power: {idle: 1W, busy: 2W}}", 7,
                    "nics: {per_node: 8, bandwidth: 400Gb/s, latency: 1us, power: [25W]}", 8, "", 9, "", 10, "", 0),
            7, 62, "expected a power such as '25W' or a mapping {idle: W, busy: W} for 'nics.power'", NULL);
  parse_err(variant(16, "  link_latency: 300ns\n  switch_power: 1.7kW", 0), 17, 3,
            "'network.switch_power' needs 'gpu.power'", NULL);
  /* cost: plain numbers, at least one price, a short currency label, energy priced only with power figures */
  parse_err(variant(16, "  link_latency: 300ns\ncost: {gpu_hour: $2.50}", 0), 17, 18, "'cost.gpu_hour'",
            "without a currency sign", "'$2.50'", NULL);
  parse_err(variant(16, "  link_latency: 300ns\ncost: {gpu_hour: -1}", 0), 17, 18, "from 0 to 1e+09", NULL);
  parse_err(variant(16, "  link_latency: 300ns\ncost: {currency: EUR}", 0), 17, 7, "the 'cost' section gives no price",
            NULL);
  parse_err(variant(16, "  link_latency: 300ns\ncost: {currency: US dollars, gpu_hour: 1}", 0), 17, 18,
            "'cost.currency'", "'US dollars'", NULL);
  parse_err(variant(16, "  link_latency: 300ns\ncost: {energy_kwh: 0.1}", 0), 17, 20,
            "'cost.energy_kwh' needs 'gpu.power'", NULL);
  parse_err(variant(16, "  link_latency: 300ns\ncost: {gpu_hours: 1}", 0), 17, 8, "unknown key 'gpu_hours' in 'cost'",
            "(did you mean 'gpu_hour'?)", NULL);
}
END_TEST

START_TEST(test_duplicate_key)
{
  parse_err(variant(5, "nodes: 8", 0), 5, 1, "duplicate key 'nodes' at the top level", "line 4", NULL);
  parse_err(variant(10, "  latency: 1us\n  per_node: 4", 0), 11, 3, "duplicate key 'per_node' in 'nics'", "line 8",
            NULL);
}
END_TEST

START_TEST(test_not_yaml)
{
  parse_err("", 0, 0, "empty", NULL);
  parse_err("# nothing but a comment\n", 0, 0, "empty", NULL);
  parse_err("hello world\n", 1, 1, "expected a mapping", "top level", "'hello world'", NULL);
  parse_err("- a\n- b\n", 1, 1, "expected a mapping", "found a sequence", NULL);
  /* unterminated flow sequence: libyaml reports where it gave up */
  dt_error e;
  dt_platform *p;
  const char *t = "dtsim_platform: 1\nname: [a, b\nnodes: 4\n";
  ck_assert_int_eq(dt_platform_parse(t, strlen(t), "p.yaml", &p, &e), DT_ERR);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(e.msg, "not valid YAML") != NULL, "%s", e.msg);
  ck_assert_int_gt(e.line, 1);
  const char *two = "dtsim_platform: 1\n---\nname: x\n";
  parse_err(two, 2, 1, "one YAML document", NULL); /* at the second document's --- */
}
END_TEST

START_TEST(test_open_fail)
{
  dt_platform *p = (dt_platform *)1;
  dt_error e;
  ck_assert_int_eq(dt_platform_load("platforms/no-such-platform.yaml", &p, &e), DT_ERR);
  ck_assert_ptr_null(p);
  ck_assert_str_eq(e.file, "platforms/no-such-platform.yaml");
  ck_assert_msg(strstr(e.msg, "cannot open platform file: ") != NULL, "%s", e.msg);
  ck_assert_msg(strstr(e.msg, "No such file") != NULL, "%s", e.msg);
}
END_TEST

/* A platform value for the shape tests, without going through YAML. */
static dt_platform tree(int nodes, int nics, int levels, int radix, int k, dt_wiring wiring)
{
  dt_platform p;
  memset(&p, 0, sizeof p);
  p.nodes = nodes;
  p.gpus_per_node = 8;
  p.nics_per_node = nics;
  p.topology = DT_NET_FAT_TREE;
  p.levels = levels;
  p.radix = radix;
  p.oversubscription = k;
  p.wiring = wiring;
  return p;
}

START_TEST(test_shape_node_wiring)
{
  /* 4 nodes x 8 NICs = 32 NICs, radix 16, 1:1: d = u = 8; ceil(32/8) = 4 leaves, 8 spines; 16*8 = 128 fit */
  dt_platform p = tree(4, 8, 2, 16, 1, DT_WIRING_NODE);
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.nics, 32);
  ck_assert_int_eq(s.down_ports, 8);
  ck_assert_int_eq(s.up_ports, 8);
  ck_assert_int_eq(s.leaves, 4);
  ck_assert_int_eq(s.leaves_per_rail, 4);
  ck_assert_int_eq(s.spines, 8);
  ck_assert_int_eq(s.pods, 0);
  ck_assert_int_eq(s.aggs_per_pod, 0);
  ck_assert_int_eq(s.capacity, 128);
  /* consecutive ports: NICs 0-7 (node 0) on leaf 0, 8-15 on leaf 1, ..., 31 on leaf 3 */
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 0), 0);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 7), 0);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 8), 1);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 31), 3);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 32), -1);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, -1), -1);
  /* NICs that do not fill the last leaf: 5 nodes x 2 NICs = 10 on d = 8 -> 2 leaves (8 + 2) */
  p = tree(5, 2, 2, 16, 1, DT_WIRING_NODE);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.leaves, 2);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 7), 0);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 8), 1); /* node 4, NIC 0 */
}
END_TEST

START_TEST(test_shape_rail_wiring)
{
  /* 20 nodes x 4 NICs, radix 16 1:1: d = 8; ceil(20/8) = 3 leaves per rail, 4 rails -> 12 leaves <= 16 */
  dt_platform p = tree(20, 4, 2, 16, 1, DT_WIRING_RAIL);
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.nics, 80);
  ck_assert_int_eq(s.leaves_per_rail, 3);
  ck_assert_int_eq(s.leaves, 12);
  ck_assert_int_eq(s.spines, 8);
  /* 16 leaves / 4 rails = 4 per rail, each 8 NICs, 4 rails: 128 */
  ck_assert_int_eq(s.capacity, 128);
  /* rail-major numbering: NIC i of node n -> leaf i*3 + n/8 */
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 0), 0);          /* node 0, rail 0 */
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 1), 3);          /* node 0, rail 1 */
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 17 * 4 + 2), 8); /* node 17, rail 2: 2*3 + 2 */
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 8 * 4 + 3), 10); /* node 8, rail 3: 3*3 + 1 */
  /* 33 nodes: 5 leaves per rail -> 20 leaves > 16: does not fit */
  p = tree(33, 4, 2, 16, 1, DT_WIRING_RAIL);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_ERR);
  ck_assert_msg(strstr(e.msg, "holds at most 128 NICs, the platform has 132") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(test_shape_three_levels)
{
  /* radix 8, 1:1: d = u = 4, pods of 8/2 = 4 leaves, 4 aggregation switches per pod, at most 8 pods:
   * capacity 8 * 4 * 4 = 128. 12 nodes x 4 NICs = 48 NICs -> 12 leaves -> 3 pods, cores u*R/2 = 16 */
  dt_platform p = tree(12, 4, 3, 8, 1, DT_WIRING_NODE);
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.leaves, 12);
  ck_assert_int_eq(s.pods, 3);
  ck_assert_int_eq(s.aggs_per_pod, 4);
  ck_assert_int_eq(s.spines, 16);
  ck_assert_int_eq(s.capacity, 128);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 47), 11);
  /* one pod used: no cores */
  p = tree(4, 4, 3, 8, 1, DT_WIRING_NODE);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.leaves, 4);
  ck_assert_int_eq(s.pods, 1);
  ck_assert_int_eq(s.spines, 0);
  /* 33 nodes x 4 = 132 > 128 */
  p = tree(33, 4, 3, 8, 1, DT_WIRING_NODE);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_ERR);
  ck_assert_msg(strstr(e.msg, "holds at most 128 NICs, the platform has 132") != NULL, "%s", e.msg);
  /* 3 levels, rail wiring, radix 8 1:1: 8 nodes x 2 rails -> ceil(8/4) = 2 leaves per rail, 4 leaves, 1 pod */
  p = tree(8, 2, 3, 8, 1, DT_WIRING_RAIL);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.leaves, 4);
  ck_assert_int_eq(s.pods, 1);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 7 * 2 + 1), 3); /* node 7, rail 1: 1*2 + 7/4 */
}
END_TEST

START_TEST(test_shape_oversubscribed)
{
  /* radix 40, 3:1: d = 30, u = 10; 16 nodes x 8 NICs = 128 -> 5 leaves, 10 spines; 40 leaves * 30 = 1200 */
  dt_platform p = tree(16, 8, 2, 40, 3, DT_WIRING_NODE);
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.down_ports, 30);
  ck_assert_int_eq(s.up_ports, 10);
  ck_assert_int_eq(s.leaves, 5);
  ck_assert_int_eq(s.spines, 10);
  ck_assert_int_eq(s.capacity, 1200);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 29), 0);
  ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, 30), 1);
  /* radix 36, 2:1: d = 24, u = 12 */
  p = tree(16, 8, 2, 36, 2, DT_WIRING_NODE);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.down_ports, 24);
  ck_assert_int_eq(s.up_ports, 12);
  ck_assert_int_eq(s.leaves, 6); /* ceil(128/24) */
  /* radix 64, 2:1: 64/3 is not whole */
  p = tree(16, 8, 2, 64, 2, DT_WIRING_NODE);
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_ERR);
  ck_assert_msg(strstr(e.msg, "does not split into whole ports") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(test_shape_single_switch)
{
  dt_platform p = tree(4, 2, 0, 0, 1, DT_WIRING_NODE);
  p.topology = DT_NET_SINGLE_SWITCH;
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(&p, &s, &e), DT_OK);
  ck_assert_int_eq(s.nics, 8);
  ck_assert_int_eq(s.down_ports, 8);
  ck_assert_int_eq(s.up_ports, 0);
  ck_assert_int_eq(s.leaves, 1);
  ck_assert_int_eq(s.spines, 0);
  for (int n = 0; n < 8; n++)
    ck_assert_int_eq(dt_platform_leaf_of_nic(&p, &s, n), 0);
}
END_TEST

START_TEST(test_nic_of_gpu)
{
  dt_platform p = tree(2, 2, 2, 16, 1, DT_WIRING_NODE);
  /* 8 GPUs, 2 NICs: floor(g*2/8): GPUs 0-3 -> NIC 0, 4-7 -> NIC 1 */
  ck_assert_int_eq(dt_platform_nic_of_gpu(&p, 0), 0);
  ck_assert_int_eq(dt_platform_nic_of_gpu(&p, 3), 0);
  ck_assert_int_eq(dt_platform_nic_of_gpu(&p, 4), 1);
  ck_assert_int_eq(dt_platform_nic_of_gpu(&p, 7), 1);
  p.nics_per_node = 8;
  for (int g = 0; g < 8; g++)
    ck_assert_int_eq(dt_platform_nic_of_gpu(&p, g), g);
  p.nics_per_node = 0;
  ck_assert_int_eq(dt_platform_nic_of_gpu(&p, 6), 0);
  ck_assert_int_eq(dt_platform_gpu_count(&p), 16);
}
END_TEST

/* ---- nvlink-mesh, pcie and dragonfly (issue 3, "platforms users own") ---- */

/* base with line `line` (1-based) replaced by repl (NULL: none), one replacement */
static const char *with_line(const char *const *base, size_t n, int line, const char *repl)
{
  text_buf[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    strcat(text_buf, (int)i + 1 == line ? repl : base[i]);
    strcat(text_buf, "\n");
  }
  return text_buf;
}

static const char *const mesh_lines[] = {
    "dtsim_platform: 1",                                          /* 1 */
    "name: m",                                                    /* 2 */
    "gpu: {model: V100, peak: 125TFLOPS}",                        /* 3 */
    "nodes: 1",                                                   /* 4 */
    "gpus_per_node: 4",                                           /* 5 */
    "intra_node:",                                                /* 6 */
    "  kind: nvlink-mesh",                                        /* 7 */
    "  link_bandwidth: 25GB/s",                                   /* 8 */
    "  latency: 2us",                                             /* 9 */
    "  links: [[0,1,2],[0,2,1],[0,3,1],[1,2,1],[3,1,1],[2,3,2]]", /* 10 */
};
#define MESH(line, repl) with_line(mesh_lines, sizeof mesh_lines / sizeof mesh_lines[0], line, repl)

START_TEST(test_mesh_loads)
{
  dt_platform *p = parse_ok(MESH(0, NULL));
  ck_assert_int_eq(p->intra_kind, DT_INTRA_NVLINK_MESH);
  REL_EQ(p->nvlink_bandwidth, 25e9);
  REL_EQ(p->intra_latency, 2e-6);
  ck_assert_int_eq(p->n_nvlinks, 6);
  ck_assert_int_eq(p->nvlinks[0].a, 0);
  ck_assert_int_eq(p->nvlinks[0].b, 1);
  ck_assert_int_eq(p->nvlinks[0].count, 2);
  /* [3,1,1] is stored a < b */
  ck_assert_int_eq(p->nvlinks[4].a, 1);
  ck_assert_int_eq(p->nvlinks[4].b, 3);
  dt_platform_free(p);
  /* block sequence form */
  p = parse_ok(MESH(10, "  links:\n  - [0, 1, 1]\n  - [1, 2, 1]\n  - [2, 3, 1]"));
  ck_assert_int_eq(p->n_nvlinks, 3);
  int *d = dt_platform_mesh_distances(p);
  ck_assert_int_eq(d[0 * 4 + 3], 3); /* a chain 0-1-2-3 */
  ck_assert_int_eq(d[3 * 4 + 1], 2);
  free(d);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_mesh_errors)
{
  parse_err(MESH(8, "  link_bandwith: 25GB/s"), 8, 3, "unknown key 'link_bandwith' in 'intra_node'",
            "(did you mean 'link_bandwidth'?)", NULL);
  parse_err(MESH(8, "  link_bandwidth: 25"), 8, 19, "'intra_node.link_bandwidth'", "bare number '25'", NULL);
  parse_err(MESH(8, "  link_bandwidth: 25GB"), 8, 19, "'intra_node.link_bandwidth'", "unit 'GB'", NULL);
  /* "  links: [" is 10 characters: the first entry starts at column 11, the second at 19 */
  parse_err(MESH(10, "  links: [[0,1,2],[0,4,1]]"), 10, 22, "GPU 4 in 'intra_node.links' is out of range",
            "GPUs 0 to 3", NULL);
  parse_err(MESH(10, "  links: [[0,1,2],[2,2,1]]"), 10, 19, "link from GPU 2 to itself", NULL);
  parse_err(MESH(10, "  links: [[0,1,2],[1,2,1],[2,3,1],[1,0,1]]"), 10, 35, "duplicate link between GPUs 0 and 1",
            "first given at line 10", NULL);
  parse_err(MESH(10, "  links: [[0,1,2],[2,3,1]]"), 10, 10, "the NVLink mesh is not connected",
            "no path from GPU 0 to GPU 2", NULL);
  parse_err(MESH(10, "  links: [[0,1,0]]"), 10, 16, "a whole number of NVLinks from 1 to 1024", "found '0'", NULL);
  parse_err(MESH(10, "  links: [[0,1,1.5]]"), 10, 16, "whole number of NVLinks from 1 to 1024", "'1.5'", NULL);
  parse_err(MESH(10, "  links: [[-1,1,1]]"), 10, 12, "a GPU index", "'-1'", NULL);
  parse_err(MESH(10, "  links: [[0,1]]"), 10, 11, "expected an entry [gpu, gpu, count]", NULL);
  parse_err(MESH(10, "  links: 3"), 10, 10, "expected a sequence of [gpu, gpu, count]", "found '3'", NULL);
  parse_err(MESH(10, "  links: []"), 10, 10, "expected a sequence of [gpu, gpu, count]", NULL);
  parse_err(MESH(10, ""), 7, 3, "missing required key 'links' in 'intra_node'", "required for kind 'nvlink-mesh')",
            NULL);
  parse_err(MESH(8, ""), 7, 3, "missing required key 'link_bandwidth'", NULL);
  /* keys of another kind */
  parse_err(MESH(9, "  latency: 2us\n  bandwidth: 300GB/s"), 10, 3,
            "key 'bandwidth' in 'intra_node' applies only to kinds 'nvswitch', 'pcie' (not 'nvlink-mesh')", NULL);
  parse_err(MESH(7, "  kind: nvswitch"), 8, 3, "key 'link_bandwidth' in 'intra_node' applies only to kind "
            "'nvlink-mesh' (not 'nvswitch')", NULL);
  parse_err(MESH(9, "  latency: 2us\n  gpus_per_switch: 2"), 10, 3, "key 'gpus_per_switch'",
            "applies only to kind 'pcie'", NULL);
}
END_TEST

static const char *const pcie_lines[] = {
    "dtsim_platform: 1",                   /* 1 */
    "name: pc",                            /* 2 */
    "gpu: {model: A100, peak: 312TFLOPS}", /* 3 */
    "nodes: 1",                            /* 4 */
    "gpus_per_node: 8",                    /* 5 */
    "intra_node:",                         /* 6 */
    "  kind: pcie",                        /* 7 */
    "  gpus_per_switch: 4",                /* 8 */
    "  bandwidth: 32GB/s",                 /* 9 */
    "  latency: 2us",                      /* 10 */
    "  cpu_bandwidth: 32GB/s",             /* 11 */
    "  cpu_latency: 1us",                  /* 12 */
};
#define PCIE(line, repl) with_line(pcie_lines, sizeof pcie_lines / sizeof pcie_lines[0], line, repl)

START_TEST(test_pcie_loads)
{
  dt_platform *p = parse_ok(PCIE(0, NULL));
  ck_assert_int_eq(p->intra_kind, DT_INTRA_PCIE);
  ck_assert_int_eq(p->gpus_per_switch, 4);
  ck_assert_int_eq(dt_platform_pcie_switches(p), 2);
  REL_EQ(p->intra_bandwidth, 32e9);
  REL_EQ(p->cpu_bandwidth, 32e9);
  REL_EQ(p->cpu_latency, 1e-6);
  dt_platform_free(p);
  /* one switch: the CPU keys may be left out */
  text_buf[0] = '\0';
  for (int i = 0; i < 10; i++)
    strcat(strcat(text_buf, i == 7 ? "  gpus_per_switch: 8" : pcie_lines[i]), "\n");
  p = parse_ok(text_buf);
  ck_assert_int_eq(dt_platform_pcie_switches(p), 1);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_pcie_errors)
{
  parse_err(PCIE(8, "  gpus_per_switch: 3"), 8, 20,
            "'intra_node.gpus_per_switch' (3) does not divide 'gpus_per_node' (8)", NULL);
  parse_err(PCIE(8, "  gpus_per_switch: 0"), 8, 20, "a whole number from 1 to 1024 for 'intra_node.gpus_per_switch'", NULL);
  parse_err(PCIE(11, ""), 7, 3, "missing required key 'cpu_bandwidth' in 'intra_node'",
            "(the mapping starting at 7:3; required for kind 'pcie' with more than one switch)", NULL);
  parse_err(PCIE(9, ""), 7, 3, "missing required key 'bandwidth' in 'intra_node'", "; required for kind 'pcie')",
            NULL);
  parse_err(PCIE(8, ""), 7, 3, "missing required key 'gpus_per_switch'", NULL);
  parse_err(PCIE(12, "  cpu_latency: 1"), 12, 16, "'intra_node.cpu_latency'", "bare number '1'", NULL);
  parse_err(PCIE(11, "  cpu_bandwith: 32GB/s"), 11, 3, "unknown key 'cpu_bandwith' in 'intra_node'",
            "(did you mean 'cpu_bandwidth'?)", NULL);
  parse_err(PCIE(7, "  kind: nvswitch"), 8, 3, "key 'gpus_per_switch' in 'intra_node' applies only to kind 'pcie'",
            NULL);
  parse_err(PCIE(12, "  cpu_latency: 1us\n  links: [[0,1,1]]"), 13, 3, "key 'links'",
            "applies only to kind 'nvlink-mesh' (not 'pcie')", NULL);
}
END_TEST

static const char *const df_lines[] = {
    "dtsim_platform: 1",                                              /* 1 */
    "name: df",                                                       /* 2 */
    "gpu: {model: MI250X, peak: 191TFLOPS}",                          /* 3 */
    "nodes: 12",                                                      /* 4 */
    "gpus_per_node: 8",                                               /* 5 */
    "intra_node: {kind: nvswitch, bandwidth: 100GB/s, latency: 1us}", /* 6 */
    "nics: {per_node: 4, bandwidth: 200Gb/s, latency: 1us}",          /* 7 */
    "network:",                                                       /* 8 */
    "  topology: dragonfly",                                          /* 9 */
    "  groups: 3",                                                    /* 10 */
    "  routers_per_group: 2",                                         /* 11 */
    "  nodes_per_router: 2",                                          /* 12 */
    "  global_links_per_router: 1",                                   /* 13 */
    "  link_bandwidth: 200Gb/s",                                      /* 14 */
    "  link_latency: 300ns",                                          /* 15 */
    "  local_bandwidth: 200Gb/s",                                     /* 16 */
    "  local_latency: 300ns",                                         /* 17 */
    "  global_bandwidth: 25GB/s",                                     /* 18 */
    "  global_latency: 500ns",                                        /* 19 */
};
#define DF(line, repl) with_line(df_lines, sizeof df_lines / sizeof df_lines[0], line, repl)

START_TEST(test_dragonfly_loads)
{
  dt_platform *p = parse_ok(DF(0, NULL));
  ck_assert_int_eq(p->topology, DT_NET_DRAGONFLY);
  ck_assert_int_eq(p->groups, 3);
  ck_assert_int_eq(p->routers_per_group, 2);
  ck_assert_int_eq(p->nodes_per_router, 2);
  ck_assert_int_eq(p->global_links_per_router, 1);
  REL_EQ(p->local_bandwidth, 25e9);
  REL_EQ(p->global_bandwidth, 25e9);
  REL_EQ(p->local_latency, 3e-7);
  REL_EQ(p->global_latency, 5e-7);
  dt_fabric_shape s;
  dt_error e;
  ck_assert_int_eq(dt_platform_fabric_shape(p, &s, &e), DT_OK);
  /* 3 groups x 2 routers = 6 routers of 2 nodes x 4 NICs; a*h = 2 global ports per group, 2 other groups:
   * floor(2/2) = 1 link per pair of groups */
  ck_assert_int_eq(s.leaves, 6);
  ck_assert_int_eq(s.groups, 3);
  ck_assert_int_eq(s.routers_per_group, 2);
  ck_assert_int_eq(s.global_per_pair, 1);
  ck_assert_int_eq(s.down_ports, 8);
  ck_assert_int_eq(s.capacity, 48);
  ck_assert_int_eq(dt_platform_leaf_of_nic(p, &s, 5 * 4 + 1), 2); /* node 5 -> router 5/2 */
  ck_assert_int_eq(dt_platform_leaf_of_nic(p, &s, 11 * 4 + 3), 5);
  dt_platform_free(p);
}
END_TEST

START_TEST(test_dragonfly_errors)
{
  parse_err(DF(4, "nodes: 13"), 9, 3, "holds at most 12 nodes, the platform has 13", NULL);
  parse_err(DF(13, "  global_links_per_router: 0"), 9, 3, "a dragonfly of 3 groups needs at least 2 global links per "
            "group", "2 x 0 = 0", NULL);
  parse_err(DF(10, ""), 9, 3, "missing required key 'groups' in 'network' (the mapping starting at 9:3; required for topology 'dragonfly')", NULL);
  parse_err(DF(19, ""), 9, 3, "missing required key 'global_latency'", NULL);
  parse_err(DF(18, "  global_bandwidth: 25"), 18, 21, "'network.global_bandwidth'", "bare number '25'", NULL);
  parse_err(DF(17, "  local_latency: 3 furlongs"), 17, 18, "'network.local_latency'", NULL);
  parse_err(DF(12, "  node_per_router: 2"), 12, 3, "unknown key 'node_per_router' in 'network'",
            "(did you mean 'nodes_per_router'?)", NULL);
  parse_err(DF(10, "  groups: 0"), 10, 11, "a whole number from 1 to 100000 for 'network.groups'", NULL);
  parse_err(DF(11, "  routers_per_group: two"), 11, 22, "whole number for 'network.routers_per_group'", NULL);
  parse_err(DF(13, "  global_links_per_router: 1\n  radix: 64"), 14, 3,
            "key 'radix' in 'network' applies only to topology 'fat-tree' (not 'dragonfly')", NULL);
  parse_err(variant(16, "  link_latency: 300ns\n  groups: 4", 0), 17, 3,
            "key 'groups' in 'network' applies only to topology 'dragonfly' (not 'fat-tree')", NULL);
}
END_TEST

START_TEST(test_new_shipped_files)
{
  dt_platform *p = NULL;
  dt_error e;
  char buf[2048];
  dt_fabric_shape s;

  ck_assert_msg(dt_platform_load("platforms/dgx1-v100.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  ck_assert_int_eq(p->intra_kind, DT_INTRA_NVLINK_MESH);
  ck_assert_int_eq(p->n_nvlinks, 16); /* 12 cube edges + 4 face diagonals */
  int per_gpu[8] = {0}, nv2 = 0;
  for (int i = 0; i < p->n_nvlinks; i++) {
    per_gpu[p->nvlinks[i].a] += p->nvlinks[i].count;
    per_gpu[p->nvlinks[i].b] += p->nvlinks[i].count;
    nv2 += p->nvlinks[i].count == 2;
  }
  for (int g = 0; g < 8; g++)
    ck_assert_msg(per_gpu[g] == 6, "GPU %d has %d NVLinks, a V100 has 6", g, per_gpu[g]);
  ck_assert_int_eq(nv2, 8);
  REL_EQ(p->nvlink_bandwidth, 25e9);
  dt_platform_free(p);

  ck_assert_msg(dt_platform_load("platforms/pcie-8gpu.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  ck_assert_int_eq(p->intra_kind, DT_INTRA_PCIE);
  ck_assert_int_eq(dt_platform_pcie_switches(p), 2);
  ck_assert_int_eq(dt_platform_pcie_switch_of_nic(p, 0), 0);
  ck_assert_int_eq(dt_platform_pcie_switch_of_nic(p, 1), 1);
  REL_EQ(p->intra_bandwidth, 31.5e9);
  dt_platform_free(p);

  ck_assert_msg(dt_platform_load("platforms/frontier-like.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  ck_assert_int_eq(p->intra_kind, DT_INTRA_NVLINK_MESH);
  ck_assert_int_eq(p->topology, DT_NET_DRAGONFLY);
  int gcd_links[8] = {0};
  for (int i = 0; i < p->n_nvlinks; i++) {
    gcd_links[p->nvlinks[i].a] += p->nvlinks[i].count;
    gcd_links[p->nvlinks[i].b] += p->nvlinks[i].count;
  }
  for (int g = 0; g < 8; g++) /* 4 to the sibling GCD + 2 + 1 to other packages */
    ck_assert_int_eq(gcd_links[g], 7);
  REL_EQ(p->nic_bandwidth, 25e9);
  ck_assert_int_eq(dt_platform_fabric_shape(p, &s, &e), DT_OK);
  /* 4 routers x 2 global links = 8 ports per group, 3 other groups: 2 parallel links per pair */
  ck_assert_int_eq(s.global_per_pair, 2);
  ck_assert_int_eq(s.leaves, 16);
  ck_assert_int_eq(s.capacity, 256);
  dt_platform_free(p);

  ck_assert_msg(dt_platform_load("platforms/dgx-b200.yaml", &p, &e) == DT_OK, "%s",
                dt_error_format(&e, buf, sizeof buf));
  REL_EQ(p->intra_bandwidth, 9e11); /* NVLink5: 1.8 TB/s bidirectional */
  REL_EQ(p->nic_bandwidth, 5e10);
  REL_EQ(p->gpu_peak, 2.25e15);
  ck_assert_int_eq(dt_platform_fabric_shape(p, &s, &e), DT_OK);
  ck_assert_int_eq(s.leaves, 8); /* one leaf per rail */
  ck_assert_int_eq(s.spines, 32);
  dt_platform_free(p);
}
END_TEST

/* Anchors, aliases and merge keys are refused where they are written (they were accepted: `gpus_per_node: &g 8`
 * read as 8, and an alias expanded wherever it was used). */
START_TEST(test_yaml_aliases)
{
  parse_err(variant(5, "gpus_per_node: &g 8", 0), 5, 16,
            "expected a plain value for 'gpus_per_node', found a value with the anchor '&g'", "no anchors, aliases", NULL);
  parse_err(variant(4, "nodes: *g", 0), 4, 8, "expected a plain value for 'nodes', found the alias '*g'", NULL);
  parse_err(variant(9, "  bandwidth: &bw 400Gb/s", 15, "  link_bandwidth: *bw", 0), 9, 14,
            "for 'nics.bandwidth', found a value with the anchor '&bw'", NULL);
  parse_err(variant(7, "nics: &n", 0), 7, 7, "expected a mapping for 'nics' without an anchor, found a mapping with the "
                                             "anchor '&n'", NULL);
  parse_err(variant(7, "nics:", 8, "  <<: {per_node: 8}", 0), 8, 3,
            "expected a plain key in 'nics', found the merge key '<<'", NULL);
  parse_err(variant(6, "intra_node: !!map {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}", 0), 6, 13,
            "expected a mapping for 'intra_node' without a tag, found a mapping with the tag '!!map'", NULL);
}
END_TEST

/* A number past a double's range (1e400) is out of range with the key's range at its position, for every kind of
 * value (it said "expected a bandwidth with a unit" or "expected a plain number"). */
START_TEST(test_number_overflow)
{
  parse_err(variant(9, "  bandwidth: 1e400GB/s", 0), 9, 14, "bad value for 'nics.bandwidth': bandwidth '1e400GB/s' is "
            "out of range: above the 1e+18 B/s dtsim accepts", NULL);
  parse_err(variant(10, "  latency: 1e400us", 0), 10, 12, "time '1e400us' is out of range: above the 1e+06 s", NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 1e400TFLOPS}", 0), 3, 26, "out of range: above the 1e+24 FLOP/s",
            NULL);
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, efficiency: 1e400}", 0), 3, 49,
            "expected a number above 0.001 and at most 1 for 'gpu.efficiency', found '1e400'", NULL);
  /* a nonzero value too small to read, below a range that starts higher: that range alone (the message said
   * "(nonzero, but below 1e-300 ...)" beside "from 1 B/s", two limits) */
  parse_err(variant(3, "gpu: {model: H100, peak: 989TFLOPS, efficiency: 1e-400}", 0), 3, 49,
            "expected a number above 0.001 and at most 1 for 'gpu.efficiency', found '1e-400'", NULL);
  const char *one_range[][2] = {
      {"gpu: {model: H100, peak: 989TFLOPS, efficiency: 1e-400}", "found '1e-400'"},
      {"gpu: {model: H100, peak: 1e-400TFLOPS}", "found '1e-400TFLOPS' (below 1 FLOP/s)"},
  };
  for (size_t i = 0; i < 2; i++) {
    dt_platform *p = NULL;
    dt_error e;
    const char *text = variant(3, one_range[i][0], 0);
    ck_assert_int_eq(dt_platform_parse(text, strlen(text), "p.yaml", &p, &e), DT_ERR);
    ck_assert_msg(strstr(e.msg, one_range[i][1]) && !strstr(e.msg, "1e-300") && !strstr(e.msg, "nonzero"), "%s",
                  e.msg);
  }
  parse_err(variant(9, "  bandwidth: 1e-400GB/s", 0), 9, 14,
            "expected a bandwidth from 1 B/s to 1e+18 B/s for 'nics.bandwidth', found '1e-400GB/s' (below 1 B/s)", NULL);
  parse_err(variant(4, "nodes: 1e400", 0), 4, 8, "expected a whole number for 'nodes', found '1e400'", NULL);
  parse_err(variant(4, "nodes: 99999999999999999999999", 0), 4, 8, "expected a whole number from 1 to 1000000 for 'nodes', found '99999999999999999999999'", NULL);
}
END_TEST

/* nccl.version: NCCL's numbering (MAJOR.MINOR[.PATCH][-REV], no leading zeros) inside the releases dtsim models,
 * 2.17 to 2.32.x ("2.023" read as 2.23 and "2.0" as a model dtsim does not have). */
START_TEST(test_nccl_version)
{
  static const struct {
    const char *v;
    int code;
  } good[] = {{"2.17", 21700}, {"\"2.17.1\"", 21701}, {"2.17.1-1", 21701}, {"2.23.4", 22304}, {"2.32", 23200},
              {"2.32.3", 23203}, {"\"2.20\"", 22000}, {"2.18.0", 21800}};
  char line[128];
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    snprintf(line, sizeof line, "intra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\nnccl: {version: %s}",
             good[i].v);
    dt_platform *p = parse_ok(variant(6, line, 0));
    ck_assert_msg(p->nccl_version == good[i].code, "%s: %d", good[i].v, p->nccl_version);
    dt_platform_free(p);
  }
  static const char *const malformed[] = {"2.023", "2.017.1", "2.17.01", "02.17", "2", "2.", "2.17.", "2.17.1.1",
                                          "v2.17", "2.17.1-", "'2.17 '", "3.1", "2.1e1"};
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    snprintf(line, sizeof line, "intra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\nnccl: {version: %s}",
             malformed[i]);
    parse_err(variant(6, line, 0), 7, 17, "expected an NCCL version such as '2.17.1' or '2.32' for 'nccl.version'",
              "without leading zeros", NULL);
  }
  static const char *const outside[] = {"2.0", "2.16.5", "2.4", "2.33", "2.99.1"};
  for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
    snprintf(line, sizeof line, "intra_node: {kind: nvswitch, bandwidth: 450GB/s, latency: 1us}\nnccl: {version: %s}",
             outside[i]);
    parse_err(variant(6, line, 0), 7, 17, "for 'nccl.version' is outside the releases dtsim models, 2.17 to 2.32.x",
              NULL);
  }
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"every_key_value", test_every_key_value, 1},
      {"defaults", test_defaults, 1},
      {"shipped_files", test_shipped_files, 1},
      {"unknown_key", test_unknown_key, 1},
      {"bare_number", test_bare_number, 1},
      {"bad_unit", test_bad_unit, 1},
      {"missing_key", test_missing_key, 1},
      {"wrong_type", test_wrong_type, 1},
      {"choices", test_choices, 1},
      {"nics_divide", test_nics_divide, 1},
      {"split_not_whole", test_split_not_whole, 1},
      {"tree_too_small", test_tree_too_small, 1},
      {"version", test_version, 1},
      {"duplicate_key", test_duplicate_key, 1},
      {"power_cost", test_power_cost, 1},
      {"not_yaml", test_not_yaml, 1},
      {"open_fail", test_open_fail, 1},
      {"shape_node_wiring", test_shape_node_wiring, 1},
      {"shape_rail_wiring", test_shape_rail_wiring, 1},
      {"shape_three_levels", test_shape_three_levels, 1},
      {"shape_oversubscribed", test_shape_oversubscribed, 1},
      {"shape_single_switch", test_shape_single_switch, 1},
      {"nic_of_gpu", test_nic_of_gpu, 1},
      {"mesh_loads", test_mesh_loads, 1},
      {"mesh_errors", test_mesh_errors, 1},
      {"pcie_loads", test_pcie_loads, 1},
      {"pcie_errors", test_pcie_errors, 1},
      {"dragonfly_loads", test_dragonfly_loads, 1},
      {"dragonfly_errors", test_dragonfly_errors, 1},
      {"new_shipped_files", test_new_shipped_files, 1},
      {"yaml_aliases", test_yaml_aliases, 1},
      {"number_overflow", test_number_overflow, 1},
      {"nccl_version", test_nccl_version, 1},
  };
  return dt_test_run(dt_test_suite("platform", cases, sizeof cases / sizeof cases[0], 0));
}
