#!/usr/bin/env python3
"""Writes large synthetic captures of the log and trace formats dtsim imports, for bench/import.sh (not tests).

usage: bench/gen_captures.py OUTDIR [MB]   (about MB megabytes of uncompressed input per format, default 100)

Each follows the layout of the real format (see docs/import-*.md): an NCCL INFO log of 8 processes interleaved
in one file (an all-reduce, an all-gather, a reduce-scatter and a grouped all-to-all of Sends/Recvs per step);
NCCL Inspector logs of 8 processes (one JSON record per collective); a DeepSpeed rank-0 verbose log; Chakra
traces of 8 ranks (a compute node and an all-reduce depending on it per step, plus a dependency on the previous
step).
"""
import os
import sys

out = sys.argv[1]
target = int(float(sys.argv[2]) * 1e6) if len(sys.argv) > 2 else 100_000_000
os.makedirs(out, exist_ok=True)
P = 8

# --- NCCL INFO log, one interleaved file
with open(os.path.join(out, "nccl.log"), "w") as f:
    for r in range(P):
        f.write("node1:%d:%d [%d] NCCL INFO ncclCommInitRank comm 0x55d1c0a%05x rank %d nranks %d cudaDev %d "
                "nvmlDev %d busId %x commId 0x5c6b7e9a1f2d3c4b - Init COMPLETE\n" % (2100 + r, 2100 + r, r, r, r, P, r, r, 0x7000 + r))
    step = 0
    size = 0
    while size < target:
        lines = []
        for r in range(P):
            pre = "[default%d]:node1:%d:%d [%d] NCCL INFO " % (r, 2100 + r, 2100 + r, r)
            c = "comm 0x55d1c0a%05x [nranks=%d] stream 0x7f00%04x" % (r, P, r)
            oc = 4 * step
            lines.append(pre + "AllReduce: opCount %x sendbuff 0x7f2a40000000 recvbuff 0x7f2a40000000 count 4194304 datatype 7 op 0 root 0 %s" % (oc, c))
            lines.append(pre + "AllGather: opCount %x sendbuff 0x7f2a50000000 recvbuff 0x7f2a60000000 count 262144 datatype 9 op 0 root 0 %s" % (oc + 1, c))
            lines.append(pre + "ReduceScatter: opCount %x sendbuff 0x7f2a60000000 recvbuff 0x7f2a50000000 count 262144 datatype 9 op 0 root 0 %s" % (oc + 2, c))
            for peer in range(P):
                lines.append(pre + "Send: opCount %x sendbuff (nil) recvbuff 0x7f2a70000000 count 65536 datatype 7 op 0 root %d %s" % (oc + 3, peer, c))
                lines.append(pre + "Recv: opCount %x sendbuff 0x7f2a80000000 recvbuff (nil) count 65536 datatype 7 op 0 root %d %s" % (oc + 3, peer, c))
        s = "\n".join(lines) + "\n"
        f.write(s)
        size += len(s)
        step += 1

# --- NCCL Inspector, one file per process
per = target // P
for r in range(P):
    with open(os.path.join(out, "node1-pid%d.log" % (7000 + r)), "w") as f:
        size = 0
        sn = 0
        buf = []
        while size < per:
            sn += 1
            op, msg = (("AllReduce", 67108864), ("AllGather", 1048576), ("ReduceScatter", 1048576))[sn % 3]
            s = ('{"header":{"id":"0x7f8c496ae9f661","comm_name":"world","rank":%d,"n_ranks":%d,"nnodes":1},'
                 '"metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface",'
                 '"dump_timestamp_us":%d,"hostname":"node1","pid":%d},"coll_perf":{"coll":"%s","coll_sn":%d,'
                 '"coll_msg_size_bytes":%d,"coll_exec_time_us":%d,"coll_timing_source":"kernel_gpu","coll_algobw_gbs":61.0,'
                 '"coll_busbw_gbs":106.7}}\n') % (r, P, 1752867229235059 + sn * 1000, 7000 + r, op, sn, msg, 100 + sn % 50)
            buf.append(s)
            size += len(s)
            if len(buf) > 10000:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))

# --- DeepSpeed rank-0 verbose log
with open(os.path.join(out, "deepspeed.log"), "w") as f:
    size = 0
    i = 0
    buf = []
    ops = (("all_reduce", "64.0 MB"), ("all_gather_into_tensor", "2.0 MB"), ("reduce_scatter_tensor", "16.0 MB"), ("broadcast", "1.12 KB"))
    while size < target:
        op, sz = ops[i % 4]
        s = ("[2024-05-02 10:11:12,345] [INFO] [logging.py:128:log_dist] [Rank 0] comm op: %s | [Caller Func: step] | "
             "time (ms): %.2f | msg size: %s | algbw (Gbps): 565.03 | busbw (Gbps): 988.80\n") % (op, 0.5 + i % 7, sz)
        buf.append(s)
        size += len(s)
        i += 1
        if len(buf) > 10000:
            f.write("".join(buf))
            buf = []
    f.write("".join(buf))

# --- Chakra, one file per rank
def varint(v):
    b = bytearray()
    while True:
        x = v & 0x7F
        v >>= 7
        if v:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)

def ld(fn, p):
    return varint(fn << 3 | 2) + varint(len(p)) + p

def vi(fn, v):
    return varint(fn << 3) + varint(v)

def attr_i(name, fn, v):
    return ld(10, ld(1, name) + vi(fn, v))

for r in range(P):
    with open(os.path.join(out, "trace.%d.et" % r), "wb") as f:
        m = ld(1, b"0.0.4")
        f.write(varint(len(m)) + m)
        size = 0
        k = 0
        buf = []
        while size < per:
            comp = vi(1, 2 * k + 1) + ld(2, b"sm90_gemm") + vi(3, 4) + (ld(4, varint(2 * k)) if k else b"") + vi(6, 10 * k) + vi(7, 50) + ld(10, ld(1, b"is_cpu_op") + vi(27, 0))
            coll = (vi(1, 2 * k + 2) + ld(2, b"nccl:all_reduce") + vi(3, 7) + ld(5, varint(2 * k + 1)) + vi(6, 10 * k + 5) +
                    attr_i(b"comm_type", 9, 0) + attr_i(b"comm_size", 13, 1048576) + ld(10, ld(1, b"pg_name") + ld(29, b"0")))
            s = varint(len(comp)) + comp + varint(len(coll)) + coll
            buf.append(s)
            size += len(s)
            k += 1
            if len(buf) > 10000:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))
