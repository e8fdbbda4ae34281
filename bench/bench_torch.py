#!/usr/bin/python3
"""bench/bench_torch.py - PyTorch on the shapes of bench/bench.c, in the same output format.

The modules are the source documents' own code: FeedForwardNN (000), PositionalEncoding
(000 with its one-line super() fix: batch-first; 001/003: seq-first), and GPT-2 style
nn.Embedding lookups (002). Limits (FMA peak, STREAM on the same byte counts) come from
the C bench (`bench --limits-only`), run in the same invocation.

Thread counts: each count runs in its own child process with OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS and MKL_NUM_THREADS set before torch is imported (torch.set_num_threads
does not limit OpenBLAS, which Debian's torch uses for nn.Linear).

usage: /usr/bin/python3 bench/bench_torch.py [--bench build/bench] [--quick] [--json]
           [--jsonl FILE] [--threads 1,2] [--filter op,op] [--budget S]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- shapes: the same as bench.c ---------------------------------------------------

def shapes(quick):
    return {
        "ffn_rows": [1, 32, 512] if quick else [1, 32, 512, 4096],
        "ffn_dh": [(256, 1024)] if quick else [(256, 1024), (512, 2048), (768, 3072)],
        "add": [(8, 1024, 768)] if quick else
               [(4, 512, 512), (8, 1024, 768), (32, 512, 512), (16, 2048, 1024)],
        "embed": [(8, 1024, 768)] if quick else [(8, 1024, 768), (32, 1024, 768)],
        "table": [(1024, 512)] if quick else [(5000, 512), (1024, 768)],
    }

MAX_LEN = 5000
VOCAB, CTX = 50257, 1024

# ---- timing: the policy of bench.c --------------------------------------------------

class Timer:
    def __init__(self, quick, budget, full):
        # bench.c's budget for the fast paths and OpenBLAS (8 x its --budget)
        self.budget = 8 * (budget if budget else (0.5 if quick else 5.0))
        self.full = full
        if quick:
            self.min_sample, self.target, self.min_reps, self.max_reps = 0.002, 0.03, 3, 5
        else:
            self.min_sample, self.target, self.min_reps, self.max_reps = 0.01, 0.25, 5, 15

    def measure(self, fn, est=0.0):
        """Median seconds per call, or a skip reason. One warm-up call; short calls are
        batched so a timed repeat lasts >= min_sample."""
        now = time.perf_counter
        if not self.full and est > 0 and est * (self.min_reps + 1) > self.budget:
            return {"skipped": "skipped: est. %.3g s/call (--full)" % est}
        t0 = now(); fn(); t1 = now() - t0
        if not self.full and t1 * self.min_reps > self.budget:
            return {"skipped": "skipped: 1 call = %.3g s (--full)" % t1}
        inner = 1
        if t1 < self.min_sample:
            inner = int(self.min_sample / max(t1, 1e-7)) + 1
            t0 = now()
            for _ in range(inner):
                fn()
            t1 = (now() - t0) / inner
            inner = int(self.min_sample / max(t1, 1e-9)) + 1
        reps = min(max(int(self.target / (t1 * inner)), self.min_reps), self.max_reps)
        samples = []
        for _ in range(reps):
            t0 = now()
            for _ in range(inner):
                fn()
            samples.append((now() - t0) / inner)
        return {"median_s": statistics.median(samples), "min_s": min(samples),
                "max_s": max(samples), "repeats": reps, "calls_per_repeat": inner}

# ---- child: the measurements ---------------------------------------------------------

def child(args):
    import torch
    import torch.nn as nn

    t = args.threads[0]
    torch.set_num_threads(t)
    torch.manual_seed(0)
    timer = Timer(args.quick, args.budget, args.full)
    sh = shapes(args.quick)
    out = []

    def want(op):
        return not args.filter or any(f and f in op for f in args.filter.split(","))

    def emit(op, shape, impl, kind, fn, flops=0.0, nbytes=0.0, est=0.0):
        rec = {"op": op, "shape": shape, "impl": impl, "threads": t, "kind": kind}
        if flops:
            rec["flops"] = flops
        else:
            rec["bytes"] = nbytes
        rec.update(timer.measure(fn, est))
        out.append(rec)
        print(json.dumps(rec), flush=True)
        sys.stderr.write("\r[bench_torch t=%d] %s %s %s\033[K" % (t, op, shape, impl)
                         if sys.stderr.isatty() else "")
        return rec

    # The documents' own modules, exec'd from their verbatim text (reference/documents.py,
    # which the golden generator uses too):
    # 000 FeedForwardNN, 000 PositionalEncoding (batch-first, with its one-line super()
    # fix), 001/003 PositionalEncoding (seq-first), and the exact-mode formula in float64.
    sys.path.insert(0, os.path.join(HERE, "..", "reference"))
    import documents
    FeedForwardNN = documents.FeedForwardNN
    PositionalEncoding = documents.PE000_FIXED
    PositionalEncodingSeqFirst = documents.PE001

    def table_exact(d_model, max_len):
        return documents.table_exact(max_len, d_model)

    memo = {}  # seconds per flop of the previous shape, to skip hopeless ones

    with torch.no_grad():
        # ---- FFN ----
        for d, h in sh["ffn_dh"]:
            ffn = FeedForwardNN(d, h).eval()
            for rows in sh["ffn_rows"]:
                if t > 1 and rows < 512:
                    continue
                x = torch.randn(rows, d)
                flops = 4.0 * rows * d * h
                if want("ffn_block"):
                    r = emit("ffn_block", {"rows": rows, "d_model": d, "hidden": h}, "torch",
                             "compute", lambda: ffn(x), flops=flops,
                             est=memo.get("ffn", 0.0) * flops)
                    if "median_s" in r:
                        memo["ffn"] = r["median_s"] / flops
                if want("ffn_linear") and (d, h) == sh["ffn_dh"][-1]:
                    fc1 = ffn.fc1
                    emit("ffn_linear", {"rows": rows, "in": d, "out": h}, "torch", "compute",
                         lambda: fc1(x), flops=flops / 2, est=memo.get("ffn", 0.0) * flops / 2)

        # ---- PE adds ----
        for B, S, D in sh["add"]:
            n = B * S * D
            nbytes = 4.0 * (2.0 * n + S * D)
            pe_bf = PositionalEncoding(D, MAX_LEN)
            pe_sf = PositionalEncodingSeqFirst(D, MAX_LEN)
            xb = torch.rand(B, S, D) * 2 - 1
            xs = torch.rand(S, B, D) * 2 - 1
            ob = torch.empty_like(xb)
            os_ = torch.empty_like(xs)
            tb = pe_bf.pe[:, :S]
            ts = pe_sf.pe[:S]
            bf = {"batch": B, "seq": S, "d_model": D, "max_len": MAX_LEN}
            sf = {"seq": S, "batch": B, "d_model": D, "max_len": MAX_LEN}
            if want("pe_add_batch_first"):
                emit("pe_add_batch_first", bf, "torch", "memory", lambda: pe_bf(xb), nbytes=nbytes)
                emit("pe_add_batch_first", bf, "torch_out", "memory",
                     lambda: torch.add(xb, tb, out=ob), nbytes=nbytes)
            if want("pe_add_batch_first_inplace"):
                emit("pe_add_batch_first_inplace", bf, "torch", "memory", lambda: xb.add_(tb),
                     nbytes=nbytes)
            if want("pe_add_seq_first"):
                emit("pe_add_seq_first", sf, "torch", "memory", lambda: pe_sf(xs), nbytes=nbytes)
                emit("pe_add_seq_first", sf, "torch_out", "memory",
                     lambda: torch.add(xs, ts, out=os_), nbytes=nbytes)
            if want("pe_add_seq_first_inplace"):
                emit("pe_add_seq_first_inplace", sf, "torch", "memory", lambda: xs.add_(ts),
                     nbytes=nbytes)
            xb = xs = ob = os_ = None  # free before the next shape

        # ---- embedding (002): wte(ids) + wpe(pos) ----
        if want("pe_embed"):
            wte = nn.Embedding(VOCAB, 768)
            wpe = nn.Embedding(CTX, 768)
            for B, S, D in sh["embed"]:
                n = B * S * D
                moved = 4.0 * (2.0 * n + S * D)
                ids64 = torch.randint(0, VOCAB, (B, S), dtype=torch.int64)
                ids32 = ids64.to(torch.int32)
                shp = {"batch": B, "seq": S, "d_model": D, "vocab": VOCAB, "context_length": CTX}

                def fwd(ids):
                    return wte(ids) + wpe(torch.arange(ids.size(1)))

                for op, ids, idb in (("pe_embed", ids32, 4.0), ("pe_embed_i64", ids64, 8.0)):
                    if not want(op):
                        continue
                    try:
                        fwd(ids)
                    except Exception as e:  # int32 indices need a newer torch
                        out.append({"op": op, "shape": shp, "impl": "torch", "threads": t,
                                    "kind": "memory", "bytes": moved + idb * B * S,
                                    "skipped": "torch: %s" % str(e).split("\n")[0][:60]})
                        print(json.dumps(out[-1]), flush=True)
                        continue
                    emit(op, shp, "torch", "memory", lambda: fwd(ids), nbytes=moved + idb * B * S)

        # ---- sinusoidal tables: the module's constructor, and the float64 formula ----
        for L, D in sh["table"]:
            shp = {"max_len": L, "d_model": D}
            if want("pe_sinusoidal_table"):
                emit("pe_sinusoidal_table", shp, "torch", "none",
                     lambda: PositionalEncoding(D, L), nbytes=4.0 * L * D)
            if want("pe_sinusoidal_table_exact"):
                emit("pe_sinusoidal_table_exact", shp, "torch", "none",
                     lambda: table_exact(D, L), nbytes=4.0 * L * D)
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")

# ---- parent: children per thread count, limits from the C bench, output --------------

def torch_info():
    code = r"""
import ctypes, json, re, torch
m = re.search(r"CPU capability usage: *(\S+)", torch.__config__.show())
info = {"torch": torch.__version__, "capability": m.group(1) if m else "?", "blas_core": None}
torch.nn.functional.linear(torch.ones(64, 64), torch.ones(64, 64))
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "openblas" in p and ".so" in p:
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            info["blas_core"] = lib.openblas_get_corename().decode()
            info["blas_lib"] = p
        except Exception:
            pass
        break
print(json.dumps(info))
"""
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:
        return {"torch": "?", "error": str(e)}


def default_threads():
    n = os.cpu_count() or 1
    return [1] if n == 1 else [1, n]


def run_limits(bench, threads, byte_counts):
    """FMA peak per thread count and STREAM copy/add/update at the given byte counts,
    measured by the C bench. Returns (peaks {t: flops/s}, streams {(bytes, t): {...}})."""
    peaks, streams = {}, {}
    if not bench or not os.path.exists(bench):
        sys.stderr.write("bench_torch: no C bench binary (%s): no limits\n" % bench)
        return peaks, streams
    cmd = [bench, "--limits-only", "--json", "--threads", ",".join(map(str, threads))]
    if byte_counts:
        cmd += ["--stream-bytes", ",".join("%d" % b for b in sorted(byte_counts))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write("bench_torch: %s failed: %s\n" % (" ".join(cmd), r.stderr))
        return peaks, streams
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("op") == "fma_peak" and rec.get("min_s"):
            g = rec["flops"] / rec["min_s"]
            peaks[rec["threads"]] = max(peaks.get(rec["threads"], 0.0), g)
        elif rec.get("op", "").startswith("stream_") and rec.get("min_s"):
            key = (float(rec["shape"]["bytes"]), rec["threads"])
            streams.setdefault(key, {})[rec["op"]] = rec["bytes"] / rec["min_s"]
    return peaks, streams


def fmt_time(s):
    if s < 1e-6:
        return "%.1f ns" % (s * 1e9)
    if s < 1e-3:
        return "%.2f us" % (s * 1e6)
    if s < 1.0:
        return "%.2f ms" % (s * 1e3)
    return "%.3f s" % s


def short_shape(shape):
    names = {"d_model": "d", "hidden": "h", "batch": "B", "seq": "S", "max_len": "L"}
    parts = []
    for k, v in shape.items():
        if k in ("vocab", "context_length") or (k == "max_len" and len(shape) > 2):
            continue
        parts.append("%s=%d" % (names.get(k, k), v))
    return " ".join(parts)


OP_ORDER = ["ffn_block", "ffn_linear", "pe_add_batch_first", "pe_add_batch_first_inplace",
            "pe_add_seq_first", "pe_add_seq_first_inplace", "pe_embed", "pe_embed_i64",
            "pe_sinusoidal_table", "pe_sinusoidal_table_exact"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join("build", "bench"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--jsonl")
    ap.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--filter")
    ap.add_argument("--budget", type=float, default=0.0)
    ap.add_argument("--compare", help="JSON Lines of the C bench: print speed-up ratios")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    threads = args.threads or default_threads()
    t_start = time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    info = torch_info()
    recs = []
    for t in threads:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(t), OMP_NUM_THREADS=str(t),
                   MKL_NUM_THREADS=str(t))
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--threads", str(t)]
        cmd += ["--quick"] * args.quick + ["--full"] * args.full
        if args.filter:
            cmd += ["--filter", args.filter]
        if args.budget:
            cmd += ["--budget", str(args.budget)]
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        if r.returncode:
            sys.exit("bench_torch: child for %d threads failed" % t)
        recs += [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]

    byte_counts = {r["bytes"] for r in recs if r["kind"] == "memory"}
    peaks, streams = run_limits(args.bench, threads, byte_counts)
    for r in recs:
        r["label"] = r["impl"] + (" [openblas %s]" % info.get("blas_core") if r["op"].startswith("ffn")
                                  and info.get("blas_core") else "")
        if r["impl"] == "torch_out":
            r["label"] = "torch add(out=) reused out"
        r["path"] = "torch " + info.get("torch", "?")
        med = r.get("median_s")
        r["limit"] = r["pct_of_limit"] = r["limit_kind"] = None
        # as bench.c: the limit at t threads is the best measured at <= t threads
        if "flops" in r:
            r["gflops"] = r["flops"] / med / 1e9 if med else None
            cands = [(g, t) for t, g in peaks.items() if t <= r["threads"]]
            if med and cands:
                g, t = max(cands)
                r["limit"] = g / 1e9
                r["limit_kind"] = "fma_peak" + ("" if t == r["threads"] else "@%dt" % t)
        else:
            r["gbps"] = r["bytes"] / med / 1e9 if med else None
            best = None
            for (b, t), st in streams.items():
                if b != float(int(r["bytes"])) or t > r["threads"] or r["kind"] != "memory":
                    continue
                if r["op"].endswith("_inplace"):
                    kind = "stream_update"
                else:
                    kind = "stream_add" if st.get("stream_add", 0) > st.get("stream_copy", 0) else "stream_copy"
                if st.get(kind) and (best is None or st[kind] > best[0]):
                    best = (st[kind], kind + ("" if t == r["threads"] else "@%dt" % t))
            if med and best:
                r["limit"], r["limit_kind"] = best[0] / 1e9, best[1]
        if r["limit"]:
            r["pct_of_limit"] = 100.0 * (r.get("gflops") or r.get("gbps")) / r["limit"]

    # Print order: op, shape (in first-measured order), implementation, threads.
    first_seen = {}
    for i, r in enumerate(recs):
        first_seen.setdefault((r["op"], json.dumps(r["shape"])), i)
    recs.sort(key=lambda r: (OP_ORDER.index(r["op"]) if r["op"] in OP_ORDER else 99,
                             first_seen[(r["op"], json.dumps(r["shape"]))], r["impl"], r["threads"]))

    meta = {"op": "_meta", "impl": "torch", "torch": info.get("torch"),
            "capability": info.get("capability"), "blas_core": info.get("blas_core"),
            "python": platform.python_version(), "threads": threads, "quick": args.quick,
            "loadavg_start": load,
            "outputs_reused": "torch: fresh outputs (allocated per call); torch_out: reused"}
    lines = [json.dumps(meta)]
    for r in recs:
        r = dict(r)
        r.pop("kind", None)
        lines.append(json.dumps(r))
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.json:
        print("\n".join(lines))
        return

    print("bench_torch: torch %s (python %s), ATen CPU capability %s, nn.Linear via OpenBLAS core %s"
          % (info.get("torch"), platform.python_version(), info.get("capability"),
             info.get("blas_core")))
    if load is not None:
        print("load average at start %.2f%s" % (load, "  WARNING: other processes share the cores;"
              " figures are unreliable" if load > 0.5 * (os.cpu_count() or 1) else ""))
    print("threads measured: %s (OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = torch.set_num_threads = t)"
          % " ".join(map(str, threads)))
    print("timing: as bench.c (median of >= 5 repeats after warm-up, short calls batched);")
    print("        'torch' rows allocate a fresh output per call, as the modules do;")
    print("        'torch_out' rows write into a reused output (torch.add(..., out=)).")
    print("limits: from %s --limits-only (FMA peak; STREAM on the same byte counts)" % args.bench)
    print()
    print("%-27s %-24s %-30s %3s %10s %14s %14s %7s  %s" % (
        "op", "shape", "implementation", "thr", "median", "rate", "limit", "%limit", "note"))
    prev = None
    for r in recs:
        if r["op"] != prev:
            print()
            prev = r["op"]
        unit = "GFLOP/s" if "flops" in r else "GB/s"
        rate = r.get("gflops") if "flops" in r else r.get("gbps")
        if r.get("skipped"):
            print("%-27s %-24s %-30s %3d %10s %14s %14s %7s  %s" % (
                r["op"], short_shape(r["shape"]), r["label"], r["threads"], "-", "-", "-", "-",
                r["skipped"]))
            continue
        print("%-27s %-24s %-30s %3d %10s %14s %14s %7s  %s" % (
            r["op"], short_shape(r["shape"]), r["label"], r["threads"], fmt_time(r["median_s"]),
            "%.1f %s" % (rate, unit),
            "%.1f %s" % (r["limit"], unit) if r["limit"] else "-",
            "%.1f%%" % r["pct_of_limit"] if r["pct_of_limit"] else "-",
            r["limit_kind"] if r["limit_kind"] and "bytes" in r else ""))
    if args.compare and os.path.exists(args.compare):
        compare(args.compare, recs)
    print("\ntotal %.0f s" % (time.perf_counter() - t_start))


def compare(path, torch_recs):
    """Speed-up of the C libraries over torch on the same op, shape and threads: time of
    torch / time of ours (> 1: ours is faster). The two runs are separate processes, run
    at different moments: on a shared machine, compare them with that in mind."""
    c = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("median_s"):
                c[(r["op"], json.dumps(r["shape"]), r["impl"], r["threads"])] = r
    print("\nspeed-up of the C library over torch (torch time / C time; from %s):" % path)
    print("%-27s %-24s %3s %-12s %10s %10s %9s" % ("op", "shape", "thr", "C impl", "C", "torch",
                                                  "speed-up"))
    for r in torch_recs:
        if r["impl"] != "torch" or not r.get("median_s"):
            continue
        key = (r["op"], json.dumps(r["shape"]))
        cands = [c.get(key + (impl, r["threads"]))
                 for impl in ("fast", "fast_packed", "table_fast")]
        cands = [x for x in cands if x]
        if not cands:
            continue
        best = min(cands, key=lambda x: x["median_s"])
        print("%-27s %-24s %3d %-12s %10s %10s %8.2fx" % (
            r["op"], short_shape(r["shape"]), r["threads"], best["impl"],
            fmt_time(best["median_s"]), fmt_time(r["median_s"]), r["median_s"] / best["median_s"]))


if __name__ == "__main__":
    main()
