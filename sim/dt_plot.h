/* `dtsim run --plot DIR` (docs/report.md, Pictures): gnuplot data files and scripts for the critical path's split,
 * each rank's compute / exposed communication / rest, the link classes' busy fractions and bytes, and the message
 * sizes per op kind; rendered to PNG when gnuplot is installed. The numbers are the JSON report's. */
#ifndef DT_PLOT_H
#define DT_PLOT_H

#include "dt_report.h"

/* Creates DIR when missing (one level). Returns DT_OK, or DT_ERR (err set) when it cannot be made or is not a
 * directory. Called before the replay, so that a bad DIR costs no simulation. */
int dt_plot_prepare(const char *dir, dt_error *err);

/* Writes NAME.dat and NAME.gp for NAME = critical_path, per_rank, link_classes (when links were counted),
 * histogram, then runs gnuplot on each script in DIR (making NAME.png). A chart with nothing to draw (no critical
 * path, a zero makespan, no link bytes, no messages) is skipped with a note on stderr. *rendered is set to the
 * number of PNGs made (0 when gnuplot is not installed: the scripts stay for later; -1 when no chart had anything to
 * draw). Returns DT_OK, or DT_ERR (err set) when a file cannot be written or gnuplot fails on a script. */
int dt_plot_write(const char *dir, const dt_report_input *in, int *rendered, dt_error *err);

#endif
