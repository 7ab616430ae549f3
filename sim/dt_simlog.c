/* Checks `dtsim run --log` settings against dtsim's log categories (the replay/ files define them) and SimGrid's
 * priority names, so that a typo is exit 2 with the accepted words instead of an abort inside SimGrid. */
#include "dt_simlog.h"

#include <stdio.h>
#include <string.h>

static const char *const categories[] = {"dtsim",         "dtsim_replay",   "dtsim_coll",
                                         "dtsim_critpath", "dtsim_timeline", "dtsim_platform"};
static const char *const levels[] = {"trace", "debug", "verbose", "info", "warning", "error", "critical"};

static int one_of(const char *s, size_t n, const char *const *words, size_t nwords)
{
  for (size_t i = 0; i < nwords; i++)
    if (strlen(words[i]) == n && strncmp(s, words[i], n) == 0)
      return 1;
  return 0;
}

int dt_check_log_setting(const char *s, char *why, size_t why_size)
{
  size_t ncat = strcspn(s, ".");
  if (!one_of(s, ncat, categories, sizeof categories / sizeof categories[0])) {
    snprintf(why, why_size, "--log expects CATEGORY.thres:LEVEL with CATEGORY one of dtsim, dtsim_replay, "
             "dtsim_coll, dtsim_critpath, dtsim_timeline, dtsim_platform, found '%.*s' in '%s'", (int)ncat, s, s);
    return -1;
  }
  const char *p = s + ncat;
  size_t nkey = p[0] == '.' ? strcspn(p + 1, ":=") : 0;
  if (p[0] != '.' || !((nkey == 5 && strncmp(p + 1, "thres", 5) == 0) ||
                       (nkey == 9 && strncmp(p + 1, "threshold", 9) == 0)) || p[1 + nkey] == '\0') {
    snprintf(why, why_size, "--log expects CATEGORY.thres:LEVEL (a threshold), found '%s'", s);
    return -1;
  }
  const char *level = p + 2 + nkey;
  if (!one_of(level, strlen(level), levels, sizeof levels / sizeof levels[0])) {
    snprintf(why, why_size, "--log: expected a level trace, debug, verbose, info, warning, error or critical, "
             "found '%s' in '%s'", level, s);
    return -1;
  }
  return 0;
}
