/* Unit tests of the sweep module (sim/dt_sweep.c): SHA-256 against the FIPS 180-2 test vector, derived platforms
 * (a replaced value, a key added with its mappings, a key that names a mapping), grid order, the Latin-hypercube
 * balance, distinct random points, and hashes that change with what a point depends on and nothing else. */
#include "dt_test.h"
#include "sim/dt_sweep.h"
#include "traces/dt_gen.h"

#include <stdio.h>
#include <unistd.h>

static char root[64]; /* every plan's folder is made under it; main removes it */

static const char *base_dir(void)
{
  const char *d = getenv("DTSIM_SOURCE_DIR");
  return d ? d : ".";
}

/* Plans a sweep on tests/data/sweep/base.yaml with the extra --set flags, in a fresh folder. */
static dt_sweep_plan *plan(dt_sweep_spec **spec, const char *const *extra, size_t nextra)
{
  static char dir[128];
  snprintf(dir, sizeof dir, "%s/plan.XXXXXX", root);
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char platform[1024], dirset[256];
  snprintf(platform, sizeof platform, "platform=%s/tests/data/sweep/base.yaml", base_dir());
  snprintf(dirset, sizeof dirset, "dir=%s", dir);
  const char *sets[32] = {platform, dirset, "workload.gen=neox-19m", "workload.dp=8", "workload.global_batch=32"};
  size_t n = 5;
  for (size_t i = 0; i < nextra; i++)
    sets[n++] = extra[i];
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_sweep_spec_load(NULL, sets, n, spec, &err) == DT_OK, "%s", err.msg);
  dt_sweep_plan *p = NULL;
  ck_assert_msg(dt_sweep_plan_make(*spec, NULL, NULL, &p, &err) == DT_OK, "%s", err.msg);
  return p;
}

static dt_platform *load(const char *path)
{
  dt_platform *p = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_platform_load(path, &p, &err) == DT_OK, "%s", err.msg);
  return p;
}

START_TEST(test_sha256_vector)
{
  char hex[65];
  dt_sweep_sha256_hex("abc", 3, hex); /* FIPS 180-2, appendix B.1 */
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(test_derived_values)
{
  dt_sweep_spec *s;
  const char *extra[] = {"axes.nics.bandwidth=50Gb/s,800Gb/s", "axes.network.oversubscription=3"};
  dt_sweep_plan *p = plan(&s, extra, 2);
  ck_assert_uint_eq(p->npoints, 2);
  ck_assert_uint_eq(p->nimpossible, 0);
  dt_platform *a = load(p->points[0].platform_path), *b = load(p->points[1].platform_path);
  ck_assert_double_eq_tol(a->nic_bandwidth, 50e9 / 8, 1e-3);
  ck_assert_double_eq_tol(b->nic_bandwidth, 800e9 / 8, 1e-3);
  ck_assert_int_eq(a->oversubscription, 3);
  /* what no axis touches is the base's */
  ck_assert_double_eq_tol(a->link_latency, 500e-9, 1e-15);
  ck_assert_int_eq(a->nodes, 4);
  ck_assert_str_ne(p->points[0].hash, p->points[1].hash);
  dt_platform_free(a);
  dt_platform_free(b);
  dt_sweep_plan_free(p);
  dt_sweep_spec_free(s);
}
END_TEST

START_TEST(test_derived_added_section)
{
  /* the base has no nccl: section: the axis adds it, which turns the NCCL model on */
  dt_sweep_spec *s;
  const char *extra[] = {"axes.nccl.channels=2,4", "axes.nccl.protocols.LL.latency=9us"};
  dt_sweep_plan *p = plan(&s, extra, 2);
  ck_assert_uint_eq(p->nimpossible, 0);
  dt_platform *a = load(p->points[1].platform_path);
  ck_assert_int_eq(a->nccl, 1);
  ck_assert_int_eq(a->channels, 4);
  ck_assert_double_eq_tol(a->protocols[DT_PROTO_LL].latency, 9e-6, 1e-15);
  ck_assert_double_eq_tol(a->protocols[DT_PROTO_SIMPLE].latency, 8.4e-6, 1e-15); /* the default */
  dt_platform_free(a);
  dt_sweep_plan_free(p);
  dt_sweep_spec_free(s);
}
END_TEST

START_TEST(test_derived_mapping_is_impossible)
{
  dt_sweep_spec *s;
  const char *extra[] = {"axes.nics=1,2", "axes.nics.bandwidth=1Gb/s"};
  dt_sweep_plan *p = plan(&s, extra, 2);
  ck_assert_uint_eq(p->nimpossible, 2);
  ck_assert_ptr_nonnull(strstr(p->points[0].reason, "names a mapping in the base platform"));
  dt_sweep_plan_free(p);
  dt_sweep_spec_free(s);
}
END_TEST

/* A misspelt axis key is an error of the spec, with the nearest platform key, before any point is planned (it
 * made every point impossible, each with the platform loader's message). */
START_TEST(test_misspelt_axis)
{
  const char *sets[] = {"workload.gen=neox-19m", "axes.network.oversubscripton=1,3"};
  dt_sweep_spec *s = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_sweep_spec_load(NULL, sets, 2, &s, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "unknown axis 'network.oversubscripton' (did you mean 'network.oversubscription'?)"),
                "%s", err.msg);
  dt_sweep_spec_free(s);
  const char *sets2[] = {"workload.gen=neox-19m", "axes.tpp=1,2"}; /* a generator key */
  s = NULL;
  ck_assert_int_eq(dt_sweep_spec_load(NULL, sets2, 2, &s, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "did you mean 'tp'?"), "%s", err.msg);
  dt_sweep_spec_free(s);
}
END_TEST

START_TEST(test_grid_order)
{
  dt_sweep_spec *s;
  const char *extra[] = {"axes.nics.latency=1us,2us", "axes.network.link_latency=1ns,2ns,3ns"};
  dt_sweep_plan *p = plan(&s, extra, 2);
  ck_assert_uint_eq(p->npoints, 6);
  for (size_t i = 0; i < 6; i++) { /* the last axis varies fastest */
    ck_assert_uint_eq(p->points[i].choice[0], i / 3);
    ck_assert_uint_eq(p->points[i].choice[1], i % 3);
  }
  dt_sweep_plan_free(p);
  dt_sweep_spec_free(s);
}
END_TEST

START_TEST(test_lhs_balance)
{
  /* 12 points over axes of 3 and 4 values: every value of each axis is used 12/3 and 12/4 times */
  dt_sweep_spec *s;
  const char *extra[] = {"axes.nics.latency=1us,2us,3us", "axes.network.link_latency=1ns,2ns,3ns,4ns",
                         "sample.method=lhs", "sample.points=12", "sample.seed=42"};
  dt_sweep_plan *p = plan(&s, extra, 5);
  ck_assert_uint_eq(p->npoints, 12);
  size_t c0[3] = {0}, c1[4] = {0};
  for (size_t i = 0; i < 12; i++) {
    c0[p->points[i].choice[0]]++;
    c1[p->points[i].choice[1]]++;
  }
  for (int v = 0; v < 3; v++)
    ck_assert_uint_eq(c0[v], 4);
  for (int v = 0; v < 4; v++)
    ck_assert_uint_eq(c1[v], 3);
  dt_sweep_plan_free(p);
  dt_sweep_spec_free(s);
}
END_TEST

START_TEST(test_random_distinct)
{
  dt_sweep_spec *s;
  const char *extra[] = {"axes.nics.latency=1us,2us,3us,4us,5us", "axes.network.link_latency=1ns,2ns,3ns,4ns",
                         "sample.method=random", "sample.points=19", "sample.seed=5"};
  dt_sweep_plan *p = plan(&s, extra, 5);
  ck_assert_uint_eq(p->npoints, 19);
  int seen[20] = {0};
  for (size_t i = 0; i < 19; i++) {
    size_t g = p->points[i].choice[0] * 4 + p->points[i].choice[1];
    ck_assert_int_eq(seen[g], 0);
    seen[g] = 1;
    if (i)
      ck_assert_uint_gt(g, p->points[i - 1].choice[0] * 4 + p->points[i - 1].choice[1]); /* grid order */
  }
  dt_sweep_plan_free(p);
  dt_sweep_spec_free(s);
}
END_TEST

START_TEST(test_hash_depends)
{
  /* the same point planned twice hashes the same; a generator key or a run option changes it */
  dt_sweep_spec *s1, *s2, *s3;
  const char *e1[] = {"axes.nics.latency=1us"};
  const char *e2[] = {"axes.nics.latency=1us", "run.algo=ring"};
  dt_sweep_plan *a = plan(&s1, e1, 1), *b = plan(&s2, e1, 1), *c = plan(&s3, e2, 2);
  ck_assert_str_eq(a->points[0].hash, b->points[0].hash);
  ck_assert_str_ne(a->points[0].hash, c->points[0].hash);
  dt_sweep_plan_free(a);
  dt_sweep_plan_free(b);
  dt_sweep_plan_free(c);
  dt_sweep_spec_free(s1);
  dt_sweep_spec_free(s2);
  dt_sweep_spec_free(s3);
}
END_TEST

/* Writes a sweep spec on tests/data/sweep/base.yaml whose axes are `axes` (YAML lines, indented) into the test
 * folder and loads it; returns the load's status, err filled. The spec's line 5 is the first axis line. */
static int load_spec(const char *axes, dt_sweep_spec **s, dt_error *err)
{
  char path[128], text[4096];
  static int n;
  snprintf(path, sizeof path, "%s/spec%d.yaml", root, n++);
  snprintf(text, sizeof text, "dtsim_sweep: 1\nplatform: %s/tests/data/sweep/base.yaml\nworkload: {gen: neox-19m, dp: 8, "
           "global_batch: 32}\naxes:\n%s", base_dir(), axes);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  *s = NULL;
  dt_error_clear(err);
  return dt_sweep_spec_load(path, NULL, 0, s, err);
}

/* Expects the spec with these axis lines to be refused at line:col with want in the message. */
static void spec_refused(const char *axes, long line, long col, const char *want)
{
  dt_sweep_spec *s;
  dt_error err;
  ck_assert_msg(load_spec(axes, &s, &err) == DT_ERR, "accepted:\n%s", axes);
  ck_assert_msg(err.line == line && err.col == col, "at %ld:%ld, expected %ld:%ld: %s", err.line, err.col, line, col,
                err.msg);
  ck_assert_msg(strstr(err.msg, want), "message lacks \"%s\": %s", want, err.msg);
  dt_sweep_spec_free(s);
}

/* Sweep specs and workload files refuse anchors, aliases and merge keys as platform files do (an aliased list of
 * axis values was read twice). */
START_TEST(test_yaml_aliases)
{
  spec_refused("  nics.bandwidth: &b [50Gb/s, 200Gb/s]\n  network.link_bandwidth: *b\n", 5, 19,
               "expected a sequence for 'axes.nics.bandwidth' without an anchor, found a sequence with the anchor '&b'");
  spec_refused("  nodes: [2, 4]\n  tp: [1, *x]\n", 6, 11, "expected a plain value for 'axes.tp', found the alias '*x'");
  spec_refused("  <<: {nodes: [2]}\n", 5, 3, "expected a plain key in 'axes', found the merge key '<<'");
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error err;
  dt_error_clear(&err);
  static const char w[] = "dtsim_workload: 1\npreset: neox-19m\ntraining: {global_batch: &b 16}\nparallel: {tp: 2}\n";
  ck_assert_int_eq(dt_gen_parse_yaml(w, strlen(w), "w.yaml", &c, &err), DT_ERR);
  ck_assert_msg(err.line == 3 && err.col == 26 && strstr(err.msg, "expected a plain value for 'training.global_batch', "
                "found a value with the anchor '&b'"), "%ld:%ld: %s", err.line, err.col, err.msg);
  static const char m[] = "dtsim_workload: 1\npreset: neox-19m\nparallel:\n  <<: {tp: 2}\n  dp: 2\n";
  dt_gen_config_init(&c);
  ck_assert_int_eq(dt_gen_parse_yaml(m, strlen(m), "w.yaml", &c, &err), DT_ERR);
  ck_assert_msg(err.line == 4 && err.col == 3 && strstr(err.msg, "found the merge key '<<'"), "%ld:%ld: %s", err.line,
                err.col, err.msg);
}
END_TEST

/* One axis in two spellings (nested and dotted) is refused at the second, in either order: the later one was
 * kept silently and the first's values never planned. */
START_TEST(test_axis_twice)
{
  spec_refused("  network: {wiring: [node, rail], oversubscription: [1, 3]}\n  network.wiring: [rail]\n", 6, 3,
               "axis 'network.wiring' given twice (first at 5:13)");
  spec_refused("  network.wiring: [rail]\n  network:\n    oversubscription: [1, 3]\n    wiring: [node, rail]\n", 8, 5,
               "axis 'network.wiring' given twice (first at 5:3)");
  dt_sweep_spec *s;
  dt_error err;
  ck_assert_msg(load_spec("  network: {wiring: [node, rail]}\n  network.oversubscription: [1, 3]\n", &s, &err) == DT_OK,
                "%s", err.msg);
  ck_assert_int_eq(s->naxes, 2);
  dt_sweep_spec_free(s);
}
END_TEST

/* Two spellings of one value on an axis are refused with both positions (they gave duplicate grid points, each run
 * twice); values that differ after conversion stay. */
START_TEST(test_equal_after_conversion)
{
  spec_refused("  nics.bandwidth: [400Gb/s, 200Gb/s, 400Gbps]\n", 5, 38, "axis 'nics.bandwidth' lists one value twice: "
               "'400Gbps' is '400Gb/s' (both 50000000000 B/s; the first at 5:20)");
  spec_refused("  nics.bandwidth: [1GB/s, 1000MB/s]\n", 5, 27, "'1000MB/s' is '1GB/s' (both 1000000000 B/s");
  spec_refused("  nics.latency: [1us, 1000ns]\n", 5, 23, "'1000ns' is '1us' (both 1e-06 s; the first at 5:18)");
  spec_refused("  bucket: [1GB, 1000MB]\n", 5, 17, "'1000MB' is '1GB' (both 1000000000 bytes; the first at 5:12)");
  spec_refused("  bucket: [25M, 26214400]\n", 5, 17, "(both 26214400 bytes");
  spec_refused("  tp: [1, 2, 01]\n", 5, 14, "'01' is '1' (both 1; the first at 5:8)");
  spec_refused("  proto: [LL128, Simple, LL]\n  algo: [ring, tree, ring]\n", 6, 22,
               "axis 'algo' lists the value 'ring' twice (the first at 6:10)");
  spec_refused("  gpu.efficiency: [0.5, 0.50, 5e-1]\n", 5, 25, "'0.50' is '0.5'");
  spec_refused("  nodes: [4, 4]\n", 5, 14, "axis 'nodes' lists the value '4' twice (the first at 5:11)");
  dt_sweep_spec *s;
  dt_error err;
  ck_assert_msg(load_spec("  nics.bandwidth: [400Gb/s, 400GB/s]\n  sp: [true, false]\n  nics.latency: [1us, 1ms]\n", &s,
                          &err) == DT_OK, "%s", err.msg);
  ck_assert_int_eq(s->naxes, 3);
  dt_sweep_spec_free(s);
  /* run.cfg is checked as run checks --cfg, and an empty file name is refused, at the value (each point failed) */
  spec_refused("  nodes: [4]\nrun: {cfg: [contexts/stack-size:1e3]}\n", 6, 13,
               "'run.cfg': --cfg contexts/stack-size: expected a whole number of KiB from 64 to 1048576");
  spec_refused("  nodes: [4]\nrun: {cfg: [network/model:LV08]}\n", 6, 13, "--cfg accepts only the SimGrid settings");
  spec_refused("  nodes: [4]\n---\n", 6, 1, "expected one YAML document, found a second one");
  /* --set lists have no positions: the message says which value came first */
  const char *sets[] = {"workload.gen=neox-19m", "axes.network.link_latency=1us,1000ns"};
  dt_error_clear(&err);
  s = NULL;
  ck_assert_int_eq(dt_sweep_spec_load(NULL, sets, 2, &s, &err), DT_ERR);
  ck_assert_msg(strstr(err.msg, "'1000ns' is '1us' (both 1e-06 s; the first is value 1)"), "%s", err.msg);
  dt_sweep_spec_free(s);
}
END_TEST

/* The sample's keys: points and seed mean nothing to a grid and are refused where they are given (they were
 * ignored); random and lhs without points is an error at the method's position (it had none); an unknown key lists
 * the keys allowed. --set sample=grid over a file's random sample drops its points and seed. */
START_TEST(test_sample_keys)
{
  spec_refused("  nodes: [4]\nsample: {method: grid, points: 5}\n", 6, 32,
               "'sample.points' does not apply to the sampling method 'grid', which runs every point: a grid takes "
               "only 'method'; 'points' and 'seed' are for 'random' and 'lhs'");
  spec_refused("  nodes: [4]\nsample: {seed: 3}\n", 6, 16, "'sample.seed' does not apply to the sampling method "
               "'grid' (the default)");
  spec_refused("  nodes: [4]\nsample: random\n", 6, 9, "sampling method 'random' needs 'sample.points', a whole "
               "number of points from 1 to 1000000");
  spec_refused("  nodes: [4]\nsample:\n  seed: 1\n  method: lhs\n", 8, 11, "sampling method 'lhs' needs");
  spec_refused("  nodes: [4]\nsample: {method: random, points: 5, count: 2}\n", 6, 37,
               "unknown key 'count' in 'sample' (expected method, points or seed)");
  /* unknown keys are reported at the key, not at its value */
  spec_refused("  nodes: [4]\nrun: {algo: ring, proot: LL}\n", 6, 19, "unknown key 'proot' in 'run' (did you mean "
               "'proto'?)");
  spec_refused("  nodes: [4]\nrun: {zzzzzz: 1}\n", 6, 7, "unknown key 'zzzzzz' in 'run' (expected algo, proto, "
               "fidelity, placement or cfg)");
  spec_refused("  nodes: [4]\n  nics.bandwith: [1us]\n", 6, 3, "unknown axis 'nics.bandwith' (did you mean "
               "'nics.bandwidth'?)");
  spec_refused("  nodes: [4]\nsample: {method: Random, points: 5}\n", 6, 18,
               "unknown sampling method 'Random' (did you mean 'random'? expected grid, random or lhs)");
  dt_sweep_spec *s;
  dt_error err;
  ck_assert_msg(load_spec("  nodes: [4]\nsample: {method: lhs, points: 5, seed: 9}\n", &s, &err) == DT_OK, "%s",
                err.msg);
  ck_assert(s->method == DT_SAMPLE_LHS && s->npoints == 5 && s->seed == 9);
  dt_sweep_spec_free(s);
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/sweep/base.yaml", base_dir());
  char plat[4200];
  snprintf(plat, sizeof plat, "platform=%s", path);
  const char *grid[] = {plat, "workload.gen=neox-19m", "axes.nodes=4", "sample.method=random", "sample.points=4",
                        "sample=grid"};
  s = NULL;
  ck_assert_msg(dt_sweep_spec_load(NULL, grid, 6, &s, &err) == DT_OK, "%s", err.msg);
  ck_assert(s->method == DT_SAMPLE_GRID && s->npoints == 0);
  dt_sweep_spec_free(s);
  const char *pts[] = {plat, "workload.gen=neox-19m", "axes.nodes=4", "sample.points=4"};
  s = NULL;
  ck_assert_int_eq(dt_sweep_spec_load(NULL, pts, 4, &s, &err), DT_ERR);
  ck_assert_msg(strcmp(err.file, "--set") == 0 && strstr(err.msg, "'sample.points' does not apply"), "%s", err.msg);
  dt_sweep_spec_free(s);
}
END_TEST

/* Keys that cannot go together are refused at the second one's position (they had none): a generator key or axis
 * with traces, two workloads, run.placement with a placement axis. The spec's line 3 is what `workload` holds. */
static void combo_refused(const char *rest, long line, long col, const char *want)
{
  char path[128], text[4096];
  static int n;
  snprintf(path, sizeof path, "%s/combo%d.yaml", root, n++);
  snprintf(text, sizeof text, "dtsim_sweep: 1\nplatform: %s/tests/data/sweep/base.yaml\n%s", base_dir(), rest);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  dt_sweep_spec *s = NULL;
  dt_error err;
  dt_error_clear(&err);
  ck_assert_msg(dt_sweep_spec_load(path, NULL, 0, &s, &err) == DT_ERR, "accepted:\n%s", rest);
  ck_assert_msg(err.line == line && err.col == col, "at %ld:%ld, expected %ld:%ld: %s", err.line, err.col, line, col,
                err.msg);
  ck_assert_msg(strstr(err.msg, want), "message lacks \"%s\": %s", want, err.msg);
  dt_sweep_spec_free(s);
}

START_TEST(test_key_combinations)
{
  combo_refused("workload: {traces: [t.dtt], tp: 2}\naxes: {nodes: [4]}\n", 3, 33,
                "generator key 'tp' in 'workload' needs a generated workload, not traces");
  combo_refused("workload: {traces: [t.dtt]}\naxes:\n  nodes: [4]\n  tp: [1, 2]\n", 6, 7,
                "axis 'tp' is a generator key: it needs a generated workload, not traces");
  combo_refused("workload:\n  gen: neox-19m\n  traces: [t.dtt]\naxes: {nodes: [4]}\n", 5, 11,
                "give one workload: 'workload.gen' and 'workload.traces' both give one");
  combo_refused("workload: {traces: [t.dtt]}\nrun: {placement: a.txt}\naxes: {placement: [b.txt]}\n", 5, 19,
                "'run.placement' and the axis 'placement' both set the run option --placement");
  /* every run option, at the later of the two (was: placement alone; run.proto beside a proto axis passed) */
  combo_refused("workload: {gen: neox-19m}\nrun: {proto: Simple}\naxes: {proto: [Simple, LL]}\n", 5, 15,
                "'run.proto' and the axis 'proto' both set the run option --proto");
  combo_refused("workload: {gen: neox-19m}\naxes: {algo: [ring, tree]}\nrun: {algo: ring}\n", 5, 13,
                "'run.algo' and the axis 'algo' both set the run option --algo");
}
END_TEST

/* A workload file's unknown key without a near one lists the keys of its section (it named none). */
START_TEST(test_workload_unknown_key)
{
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error err;
  dt_error_clear(&err);
  static const char w[] = "dtsim_workload: 1\npreset: neox-19m\nparallel: {tp: 2, qqqqqqqq: 2}\n";
  ck_assert_int_eq(dt_gen_parse_yaml(w, strlen(w), "w.yaml", &c, &err), DT_ERR);
  ck_assert_msg(err.line == 3 && err.col == 19 && strstr(err.msg, "unknown key 'qqqqqqqq' in 'parallel' (expected tp, "
                "pp, dp, zero,") && strstr(err.msg, " or param_gather_prefetch)"), "%ld:%ld: %s", err.line, err.col,
                err.msg);
}
END_TEST

/* Words are case-sensitive in a spec, as in platform and workload files: algo and proto too, spelled as listed
 * (was: 'Ring' accepted as ring, so [ring, Ring] was refused as a duplicate while [full, Full] was an unknown
 * recompute). */
START_TEST(test_word_case)
{
  spec_refused("  algo: [ring, Ring]\n", 5, 16, "unknown algorithm 'Ring' for 'algo' (did you mean 'ring'? expected "
               "auto, ring, tree");
  spec_refused("  proto: [ll]\n", 5, 11, "unknown protocol 'll' for 'proto' (did you mean 'LL'? expected auto, LL, "
               "LL128 or Simple, spelled so)");
  spec_refused("  nodes: [4]\nrun: {proto: AUTO}\n", 6, 14, "unknown protocol 'AUTO'");
  spec_refused("  nodes: [4]\nrun: {fidelity: Flow}\n", 6, 17, "unknown fidelity 'Flow' (did you mean 'flow'?");
  spec_refused("  recompute: [full, Full]\n", 5, 21, "'recompute' expects none, full or selective, found 'Full'");
  spec_refused("  network.wiring: [node, Node]\n", 5, 26, "unknown value 'Node' for 'network.wiring'");
  dt_sweep_spec *s;
  dt_error err;
  ck_assert_msg(load_spec("  algo: [auto, ring, nvls-tree]\n  proto: [auto, LL, LL128, Simple]\n", &s, &err) == DT_OK,
                "%s", err.msg);
  dt_sweep_spec_free(s);
}
END_TEST

/* The workload reader's values (traces/dt_gen_config.c), shared by workload files, gen flags and sweep axes:
 * booleans are true or false (yes, on, 1 were taken too), sizes are plain decimals (0x10M was 16 MiB) at most
 * 2^53 bytes, with the range in the message (1e400M said only what a size looks like). */
START_TEST(test_workload_values)
{
  static const struct {
    const char *key, *value, *want;
  } bad[] = {
      {"sp", "yes", "'sp' expects true or false, found 'yes'"},
      {"sp", "1", "'sp' expects true or false, found '1'"},
      {"dp_overlap", "off", "expects true or false"},
      {"bucket", "0x10M", "'bucket' expects a size such as 25M"},
      {"bucket", "1e400M", "'bucket' is out of range: at most 2^53 bytes (9007199254740992, what one op may move)"},
      {"bucket", "9000T", "'bucket' is out of range: at most 2^53 bytes"},
      {"bucket", "-1M", "expects a size"},
      {"bucket", "inf", "expects a size"},
      {"bucket", "1e-400M", "'bucket' is out of range: a nonzero size is at least 1 byte (write 0 for none)"},
      {"bucket", "0.3", "a nonzero size is at least 1 byte"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dt_gen_config c;
    dt_gen_config_init(&c);
    dt_error err;
    dt_error_clear(&err);
    ck_assert_msg(dt_gen_set(&c, bad[i].key, bad[i].value, &err) == DT_ERR, "%s=%s accepted", bad[i].key,
                  bad[i].value);
    ck_assert_msg(strstr(err.msg, bad[i].want), "%s=%s: %s", bad[i].key, bad[i].value, err.msg);
  }
  dt_gen_config c;
  dt_gen_config_init(&c);
  dt_error err;
  dt_error_clear(&err);
  ck_assert_int_eq(dt_gen_set(&c, "bucket", "1.5K", &err), DT_OK);
  ck_assert_int_eq(c.bucket_bytes, 1536);
  ck_assert_int_eq(dt_gen_set(&c, "bucket", "80MB", &err), DT_OK);
  ck_assert_int_eq(c.bucket_bytes, 80000000);
  ck_assert_int_eq(dt_gen_set(&c, "sp", "true", &err), DT_OK);
  ck_assert_int_eq(c.sp, 1);
  /* in a workload file, at the value's position */
  static const char w[] = "dtsim_workload: 1\npreset: neox-19m\nparallel: {tp: 2, sp: yes}\n";
  dt_gen_config_init(&c);
  ck_assert_int_eq(dt_gen_parse_yaml(w, strlen(w), "w.yaml", &c, &err), DT_ERR);
  ck_assert_msg(err.line == 3 && err.col == 23 && strstr(err.msg, "expects true or false"), "%ld:%ld: %s", err.line,
                err.col, err.msg);
}
END_TEST

int main(void)
{
  const dt_test_case cases[] = {
      {"sha256_vector", test_sha256_vector, 1},
      {"derived_values", test_derived_values, 1},
      {"derived_added_section", test_derived_added_section, 1},
      {"derived_mapping_is_impossible", test_derived_mapping_is_impossible, 1},
      {"misspelt_axis", test_misspelt_axis, 1},
      {"grid_order", test_grid_order, 1},
      {"lhs_balance", test_lhs_balance, 1},
      {"random_distinct", test_random_distinct, 1},
      {"hash_depends", test_hash_depends, 1},
      {"yaml_aliases", test_yaml_aliases, 1},
      {"axis_twice", test_axis_twice, 1},
      {"equal_after_conversion", test_equal_after_conversion, 1},
      {"workload_values", test_workload_values, 1},
      {"sample_keys", test_sample_keys, 1},
      {"word_case", test_word_case, 1},
      {"key_combinations", test_key_combinations, 1},
      {"workload_unknown_key", test_workload_unknown_key, 1},
  };
  snprintf(root, sizeof root, "/tmp/check_sweep.XXXXXX");
  if (!mkdtemp(root))
    return EXIT_FAILURE;
  int rc = dt_test_run(dt_test_suite("sweep", cases, sizeof cases / sizeof cases[0], 0));
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0)
    fprintf(stderr, "check_sweep: could not remove %s\n", root);
  return rc;
}
