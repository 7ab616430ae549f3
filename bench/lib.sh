# Shared helpers of the bench scripts (sourced): the timing loop's one run under GNU time, and medians.
# Needs /usr/bin/time (GNU time) and a $tmp directory of the caller's.

# bench_median: the median of the numbers on stdin, one a line (the upper one of an even count's two)
bench_median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bench_time ACC OUT CMD...: runs CMD once, its stdout to OUT and its stderr discarded, and appends to ACC a line
# "CPU RSS": its CPU seconds (user + sys, two decimals) and its peak resident set (KiB). Fails as CMD does.
bench_time() {
  local acc=$1 out=$2 user sys rss
  shift 2
  /usr/bin/time -f "%U %S %M" -o "$tmp/bench_time" "$@" >"$out" 2>/dev/null
  read -r user sys rss <"$tmp/bench_time"
  awk -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN { printf "%.2f %d\n", u + s, m }' >>"$acc"
}

# bench_col N ACC: the median of column N (1: CPU s, 2: RSS KiB) of ACC's lines
bench_col() { cut -d' ' -f"$1" "$2" | bench_median; }
