#!/usr/bin/python3
"""bench/plot.py - plot the JSON Lines of bench (and bench_torch.py) into one PNG.

Panel 1: the FFN block's GFLOP/s against rows (one thread by default): the library paths, the
plain C loop, OpenBLAS (default and forced core), PyTorch, and the FMA peak measured in
the same run. Colour = implementation, line style = (d_model, hidden).
Panel 2: GB/s of the memory-bound forward ops of shape (batch, seq, d_model) (the PE adds,
the embedding) beside the STREAM-like limit
measured on the same byte count (black bar outline).
The default (-O2) build's rows and the PREV=<rev> build's rows are not drawn: the bench's
last summaries compare them.

usage: python3 bench/plot.py [--out build/bench.png] [--threads 1] FILE.jsonl [FILE.jsonl ...]
"""
import argparse
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"fast": "tab:blue", "fast_packed": "tab:cyan", "table_fast": "tab:purple", "scalar": "tab:gray",
          "plain_c": "tab:olive", "openblas": "tab:orange", "openblas_forced": "tab:red",
          "torch": "tab:purple", "torch_out": "tab:pink"}
STYLES = ["-", "--", ":", "-."]


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(line) for line in f if line.strip()]
    return [r for r in recs if r.get("op") != "_meta"], [r for r in recs if r.get("op") == "_meta"]


def paired(r):
    """Ours again, measured beside OpenBLAS or torch, or the -O2 build or the previous version
    (PREV) beside the native one, or the ReLU block beside another activation (_vs_act), for
    their ratio: not a curve of its own."""
    return (r["impl"].endswith(("_paired", "_vs_prev", "_vs_act"))
            or r["impl"].startswith(("o2", "prev")))


def ffn_op(recs):
    """The FFN block's rows: the op measured against the plain C loop on (rows, d_model,
    hidden) (the rows are matched by their shape, not by a function's name)."""
    return next((r["op"] for r in recs if r["impl"] == "plain_c"
                 and set(r["shape"]) == {"rows", "d_model", "hidden"}), None)


def memory_ops(recs):
    """The memory-bound forward ops on (batch, seq, d_model): their rows have a STREAM
    limit; in the order of the file (the bench's op order)."""
    return list(dict.fromkeys(r["op"] for r in recs if str(r.get("limit_kind") or "").startswith("stream")
                              and "batch" in r["shape"] and "d_model" in r["shape"]
                              and not r["op"].endswith("_backward")))


def plot_ffn(ax, recs, threads):
    op = ffn_op(recs)
    rows_recs = [r for r in recs if r["op"] == op and r["threads"] == threads
                 and r.get("gflops") and not paired(r)]
    dhs = sorted({(r["shape"]["d_model"], r["shape"]["hidden"]) for r in rows_recs})
    for impl in dict.fromkeys(r["impl"] for r in rows_recs):
        labelled = False
        for k, dh in enumerate(dhs):
            pts = sorted((r["shape"]["rows"], r["gflops"], r.get("label") or r["impl"]) for r in rows_recs
                         if r["impl"] == impl and (r["shape"]["d_model"], r["shape"]["hidden"]) == dh)
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], STYLES[k % len(STYLES)],
                    marker="o", ms=3, color=COLORS.get(impl), label=None if labelled else pts[0][2])
            labelled = True
    peaks = [r["flops"] / r["min_s"] / 1e9 for r in recs
             if r["op"] == "fma_peak" and r["threads"] == threads and r.get("min_s")]
    if peaks:
        ax.axhline(max(peaks), color="black", lw=1.2, label="FMA peak %.0f GFLOP/s" % max(peaks))
    for k, dh in enumerate(dhs):
        ax.plot([], [], STYLES[k % len(STYLES)], color="black", lw=0.8, label="d=%d h=%d" % dh)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("rows (batch x seq)")
    ax.set_ylabel("GFLOP/s (4 * rows * d * h per call)")
    ax.set_title("%s, %d thread%s" % (op, threads, "" if threads == 1 else "s"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")


def plot_memory(ax, recs, threads):
    mem_ops = memory_ops(recs)
    mem = [r for r in recs if r["op"] in mem_ops and r["threads"] == threads and r.get("gbps")
           and not paired(r) and not r.get("dispatch_probe")]  # probes have no STREAM limit
    groups = sorted(dict.fromkeys((r["op"], json.dumps(r["shape"], sort_keys=True)) for r in mem),
                    key=lambda g: mem_ops.index(g[0]))
    impls = list(dict.fromkeys(r["impl"] for r in mem))
    width = 0.8 / max(len(impls), 1)
    seen = set()
    for gi, (op, shp) in enumerate(groups):
        limit = None
        for ii, impl in enumerate(impls):
            rs = [r for r in mem if r["op"] == op and json.dumps(r["shape"], sort_keys=True) == shp
                  and r["impl"] == impl]
            if not rs:
                continue
            r = rs[0]
            x = gi - 0.4 + (ii + 0.5) * width
            ax.bar(x, r["gbps"], width, color=COLORS.get(impl),
                   label=impl if impl not in seen else None)
            seen.add(impl)
            # the C bench's own limit when present (torch rows borrow one measured later)
            if r.get("limit") and (limit is None or not impl.startswith("torch")):
                limit = r["limit"]
        if limit:
            ax.hlines(limit, gi - 0.45, gi + 0.45, color="black", lw=2,
                      label="STREAM (same bytes)" if "stream" not in seen else None)
            seen.add("stream")
    names = []
    for op, shp in groups:  # (memory_ops: every shape has batch and d_model)
        s = json.loads(shp)
        order = ("seq", "batch", "d_model") if op.startswith("pe_add_seq") else ("batch", "seq", "d_model")
        dims = "x".join(str(s[k]) for k in order if k in s)
        names.append("%s\n%s" % (op.replace("pe_add_", "").replace("_inplace", " inpl."), dims))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(names, fontsize=6, rotation=60, ha="right")
    ax.set_ylabel("GB/s (bytes moved once / median time)")
    ax.set_title("memory-bound ops vs STREAM-like limit, %d thread%s" % (threads, "" if threads == 1 else "s"))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    ap = argparse.ArgumentParser(description="plot bench JSON Lines")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default="build/bench.png")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    recs, metas = load(args.files)
    if not recs:
        sys.exit("plot.py: no measurements in %s" % " ".join(args.files))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(16, 6.5))
    plot_ffn(a1, recs, args.threads)
    plot_memory(a2, recs, args.threads)
    cpu = next((m.get("cpu") for m in metas if m.get("cpu")), "")
    fig.suptitle("pe.h / ffn.h bench  %s  (%s)" % (cpu, ", ".join(args.files)), fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote %s" % args.out)


if __name__ == "__main__":
    main()
