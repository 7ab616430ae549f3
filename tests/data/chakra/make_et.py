#!/usr/bin/env python3
"""Writes the hand-made Chakra execution traces of tests/data/chakra/ (run from that folder).

They follow the public MLCommons Chakra schema 0.0.4 (schema/protobuf/et_def.proto): a file is a stream of
protobuf messages, each preceded by its length as a varint; first GlobalMetadata (version = field 1, attr = 2),
then Nodes (id 1, name 2, type 3, ctrl_deps 4, data_deps 5, start_time_micros 6, duration_micros 7, attr 10;
AttributeProto: name 1, int64_val 9, uint64_val 13, bool_val 27, string_val 29). Node types: 4 COMP_NODE,
7 COMM_COLL_NODE; collective types: 0 ALL_REDUCE, 2 ALL_GATHER. The encoder below is written by hand (no protobuf
package needed) so that the integer kind of each attribute is chosen on purpose.
"""
import gzip

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

def key(field, wire):
    return varint(field << 3 | wire)

def ld(field, payload):
    return key(field, 2) + varint(len(payload)) + payload

def vint(field, v):
    return key(field, 0) + varint(v)

def attr(name, kind, value):
    body = ld(1, name.encode())
    if kind == "int64":
        body += vint(9, value)
    elif kind == "uint64":
        body += vint(13, value)
    elif kind == "bool":
        body += vint(27, 1 if value else 0)
    elif kind == "string":
        body += ld(29, value.encode())
    return body

def node(nid, name, ntype, ctrl=(), data=(), start=0, dur=0, attrs=()):
    body = vint(1, nid) + ld(2, name.encode()) + vint(3, ntype)
    if ctrl:
        body += ld(4, b"".join(varint(d) for d in ctrl))  # packed repeated uint64
    if data:
        body += ld(5, b"".join(varint(d) for d in data))
    if start:
        body += vint(6, start)
    if dur:
        body += vint(7, dur)
    for a in attrs:
        body += ld(10, attr(*a))
    return body

def write(path, version, nodes, gz=False):
    msgs = [ld(1, version.encode()) + ld(2, attr("schema", "string", "1.0.3-chakra.0.0.4"))] + nodes
    data = b"".join(varint(len(m)) + m for m in msgs)
    if gz:
        with gzip.GzipFile(path + ".gz", "wb", mtime=0) as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)

MiB = 1 << 20
# sub8: ranks 4-7 all-reduce 4 MiB on process group "1" (their sub-communicator), then all eight all-gather on
# group "0" with comm_size = the gathered output, 8 MiB (1 MiB per rank). Ranks 3 and 6 gzipped.
for r in range(8):
    ns = []
    deps = ()
    if r >= 4:
        ns.append(node(10, "nccl:all_reduce", 7, start=100, attrs=[("comm_type", "int64", 0), ("comm_size", "int64", 4 * MiB),
                                                                  ("pg_name", "string", "1"), ("is_cpu_op", "bool", False)]))
        deps = (10,)
    ns.append(node(11, "nccl:_all_gather_base", 7, ctrl=deps, start=200, attrs=[("comm_type", "int64", 2), ("comm_size", "int64", 8 * MiB),
                                                                              ("pg_name", "string", "0"), ("is_cpu_op", "bool", False)]))
    write("sub8.%d.et" % r, "0.0.4", ns, gz=r in (3, 6))

# u64: comm_size as an unsigned 64-bit field (uint64_val); a 100 us GPU kernel, then the all-reduce that
# depends on it (data_deps), and a host op before both.
for r in range(2):
    write("u64.%d.et" % r, "0.0.4", [
        node(1, "aten::empty", 4, start=1, dur=20, attrs=[("is_cpu_op", "bool", True)]),
        node(2, "sm80_xmma_gemm", 4, ctrl=(1,), start=30, dur=100, attrs=[("is_cpu_op", "bool", False)]),
        node(3, "nccl:all_reduce", 7, data=(2,), start=140, attrs=[("comm_type", "int64", 0), ("comm_size", "uint64", 64 * MiB),
                                                                  ("is_cpu_op", "bool", False)])])

# cycle: 5 -> 6 -> 7 -> 5 (ctrl_deps), after a valid node 4
write("cycle.0.et", "0.0.4", [node(4, "a", 4, dur=1), node(5, "b", 4, ctrl=(4, 7), dur=1), node(6, "c", 4, ctrl=(5,), dur=1),
                              node(7, "d", 4, ctrl=(6,), dur=1)])

# missing: node 2 depends on node 99, which is not in the file; an unknown schema version "0.0.5"
with open("missing.0.et", "wb") as f:
    msgs = [ld(1, b"0.0.5"), node(1, "a", 4, dur=5), node(2, "b", 4, ctrl=(1, 99), dur=5)]
    f.write(b"".join(varint(len(m)) + m for m in msgs))
