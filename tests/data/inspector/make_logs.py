#!/usr/bin/env python3
"""Writes the hand-made NCCL Inspector logs of tests/data/inspector/ (run from that folder).

Layout of NCCL's Inspector plugin (plugins/profiler/inspector/ in NVIDIA/nccl, output format v4.0): one file per
process, <hostname>-pid<pid>.log, one JSON object per line and per completed operation:
{"header": {"id", "comm_name", "rank", "n_ranks", "nnodes"}, "metadata": {"inspector_output_format_version",
"git_rev", "rec_mechanism", "dump_timestamp_us", "hostname", "pid"}, "coll_perf": {"coll", "coll_sn",
"coll_msg_size_bytes", "coll_exec_time_us", "coll_timing_source", "coll_algobw_gbs", "coll_busbw_gbs"}} (or
"p2p_perf" with p2p, p2p_sn, p2p_peer, p2p_msg_size_bytes, ...). coll_msg_size_bytes is NCCL's count times the
type size: the per-rank send count of an all-gather, the per-rank receive count of a reduce-scatter.
"""
import json

def rec(host, pid, cid, cname, rank, nranks, op, sn, size, us, ts, p2p_peer=None, verbose=False):
    perf_key = "p2p_perf" if p2p_peer is not None else "coll_perf"
    pre = "p2p" if p2p_peer is not None else "coll"
    perf = {pre: op, pre + "_sn": sn}
    if p2p_peer is not None:
        perf["p2p_peer"] = p2p_peer
    perf.update({pre + "_msg_size_bytes": size, pre + "_exec_time_us": us, pre + "_timing_source": "kernel_gpu",
                 pre + "_algobw_gbs": round(size / us / 1e3, 6), pre + "_busbw_gbs": round(size / us / 1e3, 6)})
    if verbose:
        perf["event_trace_sn"] = {"coll_start_sn": 1, "coll_stop_sn": 2,
                                  "kernel_events": [{"channel_id": 0, "kernel_start_sn": 3, "kernel_stop_sn": 5, "kernel_record_sn": 4}]}
        perf["event_trace_ts"] = {"coll_start_ts": ts, "coll_stop_ts": ts + 3,
                                  "kernel_events": [{"channel_id": 0, "kernel_start_ts": ts + 10, "kernel_stop_ts": ts + 10 + us, "kernel_record_ts": ts + 10 + us}]}
    return json.dumps({"header": {"id": cid, "comm_name": cname, "rank": rank, "n_ranks": nranks, "nnodes": 1},
                       "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "", "rec_mechanism": "nccl_profiler_interface",
                                    "dump_timestamp_us": ts + 500, "hostname": host, "pid": pid},
                       perf_key: perf}, separators=(",", ":"))

MiB = 1 << 20
# world4: 4 processes on one communicator: all-reduce 64 MiB (sn 1), all-gather of a 1 MiB shard (sn 2), and an
# all-reduce (sn 3) that rank 3's log lacks (the Inspector missed it): left out with a warning.
for r in range(4):
    host, pid = "node1", 7100 + r
    lines = [rec(host, pid, "0x7f8c496ae9f661", "world", r, 4, "AllReduce", 1, 64 * MiB, 1100 + 7 * r, 1752867229235059, verbose=(r == 0)),
             rec(host, pid, "0x7f8c496ae9f661", "world", r, 4, "AllGather", 2, MiB, 40 + r, 1752867229236400)]
    if r != 3:
        lines.append(rec(host, pid, "0x7f8c496ae9f661", "world", r, 4, "AllReduce", 3, 8 * MiB, 160, 1752867229237000))
    open("world4/%s-pid%d.log" % (host, pid), "w").write("\n".join(lines) + "\n")

# tp: the same 4 processes, plus two 2-rank communicators ({0,1} and {2,3}) each reduce-scattering a 2 MiB
# per-rank output (a 4 MiB input), and a send of 1 MiB from rank 0 to 1 on a third communicator.
for r in range(4):
    host, pid = "node1", 7200 + r
    lines = [rec(host, pid, "0x1a2b3c4d5e6f7081", "world", r, 4, "AllReduce", 1, 16 * MiB, 300, 1752867229235059)]
    tp = "0x2222aaaa0000000%d" % (r // 2)
    lines.append(rec(host, pid, tp, "tp%d" % (r // 2), r % 2, 2, "ReduceScatter", 1, 2 * MiB, 25, 1752867229236000))
    if r < 2:
        lines.append(rec(host, pid, "0x3333bbbb00000001", "pp", r, 2, "Send" if r == 0 else "Recv", 1, MiB, 15,
                         1752867229237000, p2p_peer=1 - r))
    open("tp/%s-pid%d.log" % (host, pid), "w").write("\n".join(lines) + "\n")
