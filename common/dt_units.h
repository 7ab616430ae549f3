/* Unit strings at the edges: "450GB/s", "400Gb/s", "1.2us", "989TFLOPS" into bytes/s, seconds, FLOP/s.
 * SI prefixes (k M G T P) are powers of 10, binary prefixes (Ki Mi Gi Ti) powers of 2 (DESIGN.md §3).
 * A bare number where a unit is required is an error. */
#ifndef DT_UNITS_H
#define DT_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Each parser converts text into *out and returns 0, or returns -1 (-2 for a nonzero value below DT_NONZERO_MIN,
 * so that a consumer with a higher minimum can state its own range instead) and writes into why (size why_size)
 * what was expected, e.g. "expected a bandwidth with a unit such as '450GB/s' or '400Gb/s', found '12'".
 * The whole string must be consumed (surrounding spaces allowed). The value must be finite, >= 0 and at most
 * the maximum below once the unit is applied, and a nonzero value at least DT_NONZERO_MIN; the message of a value
 * outside states the range. Consumers add their own lower bounds (a platform bandwidth is at least
 * DT_BANDWIDTH_MIN, ...). */

/* The ranges of converted quantities (docs/platform.md "Ranges", docs/trace-format.md). They keep every derived
 * time finite and far below the replay's deadlock horizon (DT_REPLAY_HORIZON_S in replay/dt_replay.c): a
 * transfer of DT_BYTES_MAX at DT_BANDWIDTH_MIN takes 9e15 s. */
#define DT_BANDWIDTH_MIN 1.0    /* B/s, platform links */
#define DT_BANDWIDTH_MAX 1e18   /* B/s (1 EB/s) */
#define DT_TIME_MAX 1e6         /* s (11.6 days): latencies, op durations, options */
#define DT_FLOP_RATE_MIN 1.0    /* FLOP/s, platform gpu.peak */
#define DT_FLOP_RATE_MAX 1e24   /* FLOP/s */
#define DT_FLOP_MAX 1e30        /* FLOP of one compute op */
#define DT_BYTES_MAX ((uint64_t)1 << 53) /* bytes of one op: exact as a double (DT_TRACE_MAX_BYTES) */
#define DT_POWER_MAX 1e6        /* W of one device (GPU, NIC, switch): 1 MW */
/* The smallest magnitude of a nonzero number, in the SI unit once a unit is applied: "1e-400s" would read as 0 and
 * "1e-310" as a subnormal double (precision lost, and a division by it overflows), so a nonzero literal below it is
 * out of range in every unit and for every plain number; 0 itself is written 0. */
#define DT_NONZERO_MIN 1e-300
#define DT_NONZERO_MIN_TEXT "1e-300" /* the same, for messages */

/* Bandwidth in bytes per second. Units: B/s, Bps (bytes) and b/s, bit/s, bps, Gbps-style (bits; /8),
 * with optional prefixes k,K,M,G,T,P or Ki,Mi,Gi,Ti. "400Gb/s" = 5e10 B/s; "25GiB/s" = 25*2^30 B/s. */
int dt_parse_bandwidth(const char *text, double *out_bytes_per_s, char *why, size_t why_size);

/* Time in seconds. Units: s, ms, us (or µs), ns, ps. "1.2us" = 1.2e-6 s. */
int dt_parse_time(const char *text, double *out_seconds, char *why, size_t why_size);

/* Compute rate in FLOP per second: FLOPS or FLOP/s with prefixes (k M G T P E). "989TFLOPS" = 9.89e14. */
int dt_parse_flop_rate(const char *text, double *out_flop_per_s, char *why, size_t why_size);

/* Power in watts: W with an optional prefix m, k, M ("700W", "0.7kW", "1.7 kW", "25W"), at most DT_POWER_MAX
 * (docs/platform.md "Power and cost"). A bare number is an error, as for every quantity. */
int dt_parse_power(const char *text, double *out_watts, char *why, size_t why_size);

/* A plain decimal number ("0.45", "1e-3", "-2"): digits, '.', an exponent, a '-' sign; no '+' in front, no space,
 * no inf, nan or hex (docs/platform.md "Units"). Returns 0 with *out set, -1 when text is not one, or -2 (*out
 * untouched) when it is a nonzero number of magnitude below DT_NONZERO_MIN ("1e-400" would read as 0, "1e-310" as
 * a subnormal): the caller says it is out of range, naming DT_NONZERO_MIN. A number too large for a double
 * ("1e400") reads as +-HUGE_VAL (infinity), so that the caller's range check, which must have a finite maximum,
 * names the range. */
int dt_parse_real(const char *text, double *out);

/* Whether the number that text starts with (after spaces) has a nonzero digit before its exponent: "0.0e5" and
 * "0" are zero, "1e-400" is not (though it reads as 0). */
int dt_number_is_nonzero(const char *text);

/* Byte count: a plain non-negative integer (no unit, no sign), e.g. "8388608", at most DT_BYTES_MAX. Used for
 * trace `bytes=` and `splits=`. */
int dt_parse_bytes(const char *text, uint64_t *out_bytes, char *why, size_t why_size);

/* Formats seconds with a readable unit ("1.25 ms", "830 us", "2.5 s") into buf. Returns buf. */
const char *dt_format_time(double seconds, char *buf, size_t size);

/* Formats joules with a decimal unit ("830 J", "12.5 kJ", "3.2 MJ", "1.1 GJ") into buf. Returns buf. */
const char *dt_format_energy(double joules, char *buf, size_t size);

/* Formats a byte count with binary units ("306.7 MiB", "512 B") into buf. Returns buf. */
const char *dt_format_bytes(double bytes, char *buf, size_t size);

#endif
