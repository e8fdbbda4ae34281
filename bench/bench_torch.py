#!/usr/bin/python3
"""bench/bench_torch.py - PyTorch on the shapes of bench/bench.c, in the same output format.

The modules are reference/documents.py's (the documents' own code, act_block on GPT-2 small's MLP,
GatedMLP on TinyLlama's); the backwards are autograd on the same graphs. Limits (FMA peak, STREAM on
the same byte counts) come from `bench --limits-only`, run in the same invocation.

With --lib build/libpeffn.so the child also runs pe.h and ffn.h through ctypes (about a microsecond
more per call than C): at one thread their repeats interleaved with torch's (impl "*_paired"), at
more right after torch's (impl "*_after", after a 0.2 s pause: OpenBLAS's pool spins a while after a
call and would take a core from ours). At one row an FFN op's weights are also compared with a
STREAM-like read of as many bytes.

Each thread count runs in its own child process with OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
MKL_NUM_THREADS set before torch is imported (torch.set_num_threads does not limit OpenBLAS, which
Debian's torch uses for nn.Linear).
"""
import argparse
import ctypes as C
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- shapes: the same as bench.c ---------------------------------------------------

def shapes(quick, large=False):
    # the FFN shapes of support/shapes.h: every FFN op at each of ffn_rows, each thread count
    return {
        "ffn_rows": [1, 16, 128] if quick else [1, 4, 16, 512] + [4096] * large,
        "ffn_dh": [(256, 1024)] if quick else [(256, 1024), (512, 2048), (768, 3072)],
        # ffn_block_act_* and the backwards: GPT-2 small's MLP; ffn_gated_silu: TinyLlama's
        # (and Llama 7B's with --large)
        "act_dh": (256, 1024) if quick else (768, 3072),
        "gated_dh": [(512, 1408)] if quick else [(2048, 5632)] + [(4096, 11008)] * large,
        # the gated block with 16-bit weights (ffn_glu_silu_w16): a decode step, a small
        # batch, a prefill
        "w16_rows": [1, 32] if quick else [1, 32, 512],
        "add": [(8, 1024, 768)] if quick else
               [(4, 512, 512), (8, 1024, 768), (32, 512, 512), (16, 2048, 1024)],
        "embed": [(8, 1024, 768)] if quick else [(8, 1024, 768), (32, 1024, 768)],
        "table": [(1024, 512)] if quick else [(5000, 512), (1024, 768)],
        # RoPE on q (batch, seq, heads, head_dim): a decoding step and two prefills
        "rope": [(1, 1, 32, 128), (8, 1024, 32, 128)] if quick else
                [(1, 1, 32, 128), (8, 1024, 32, 128), (1, 4096, 32, 128)],
        # the backward rows of bench.c (the adds' and the embedding's memory-bound shapes)
        "add_bwd": [(8, 1024, 768)] if quick else [(8, 1024, 768), (32, 512, 512)],
    }

MAX_LEN = 5000
VOCAB, CTX = 50257, 1024

# ---- timing: the policy of bench.c --------------------------------------------------

class Timer:
    def __init__(self, quick, budget, full):
        # bench.c's budget for the fast paths and OpenBLAS (8 x its --budget)
        self.budget = 8 * (budget if budget else (0.5 if quick else 5.0))
        self.full = full
        self.min_sample, self.target, self.min_reps, self.max_reps = (
            (0.002, 0.03, 3, 5) if quick else (0.01, 0.25, 5, 15))

    def calibrate(self, fn, est=0.0):
        """(inner, reps) for fn, or a skip reason. One warm-up call; short calls are
        batched so a timed repeat lasts >= min_sample."""
        now = time.perf_counter
        if not self.full and est > 0 and est * (self.min_reps + 1) > self.budget:
            return "skipped: est. %.3g s/call (--full)" % est
        t0 = now(); fn(); t1 = now() - t0
        if not self.full and t1 * self.min_reps > self.budget:
            return "skipped: 1 call = %.3g s (--full)" % t1
        inner = 1
        if t1 < self.min_sample:
            inner = int(self.min_sample / max(t1, 1e-7)) + 1
            t0 = now()
            for _ in range(inner):
                fn()
            t1 = (now() - t0) / inner
            inner = int(self.min_sample / max(t1, 1e-9)) + 1
        return inner, min(max(int(self.target / (t1 * inner)), self.min_reps), self.max_reps)

    def measure(self, fns, est=0.0):
        """Median seconds per call of each fn (or a skip reason), their repeats
        interleaved: one repeat of each in turn, as bench.c's run_group."""
        now = time.perf_counter
        plans = [self.calibrate(fn, est) for fn in fns]
        samples = [[] for _ in fns]
        for r in range(max([p[1] for p in plans if not isinstance(p, str)] or [0])):
            for fn, p, smp in zip(fns, plans, samples):
                if isinstance(p, str) or r >= p[1]:
                    continue
                t0 = now()
                for _ in range(p[0]):
                    fn()
                smp.append((now() - t0) / p[0])
        return [{"skipped": p} if isinstance(p, str) else
                {"median_s": statistics.median(smp), "min_s": min(smp), "max_s": max(smp),
                 "repeats": p[1], "calls_per_repeat": p[0]} for p, smp in zip(plans, samples)]


# ---- the C libraries through ctypes ----------------------------------------------------

def load_lib(path):
    """pe.h and ffn.h from the shared object, with their signatures; None without one."""
    if not path:
        return None
    lib = C.CDLL(os.path.abspath(path))
    P, Z, I = C.c_void_p, C.c_size_t, C.c_int
    sigs = [(Z, [Z, Z], "ffn_pack_floats"),
            (Z, [Z, Z, Z], "ffn_block_scratch_floats ffn_gated_scratch_floats ffn_block_backward_scratch_floats "
                           "ffn_linear_backward_scratch_floats ffn_gated_backward_scratch_floats"),
            (I, [P, Z, P, Z, Z], "ffn_pack_weight"),
            (Z, [Z, Z, I], "ffn_pack_bytes"),
            (I, [P, Z, I, P, Z, Z], "ffn_pack"),
            (I, [P, P, Z, P, P, Z], "ffn_glu_forward"),
            (I, [P] * 6 + [Z, Z, Z, P, Z], "ffn_block_packed ffn_linear_backward"),
            (I, [P, P, P, P, Z, Z, Z], "ffn_linear_packed"),
            (I, [P] * 6 + [Z, Z, Z, I, P, Z], "ffn_block_act_packed"),
            (I, [P] * 8 + [Z, Z, Z, I, P, Z], "ffn_gated_packed"),
            (I, [P] * 10 + [Z, Z, Z, I, P, Z], "ffn_block_act_backward"),
            (I, [P] * 14 + [Z, Z, Z, I, P, Z], "ffn_gated_backward"),
            (I, [P, P, P, Z, Z, Z, Z], "pe_add_batch_first pe_add_seq_first"),
            (I, [P, P, Z, Z, Z, Z], "pe_add_batch_first_inplace pe_add_seq_first_inplace "
                                    "pe_add_batch_first_backward pe_add_seq_first_backward"),
            (I, [P, P, P, P, Z, Z, Z, Z, Z], "pe_embed pe_embed_i64 pe_embed_backward pe_embed_i64_backward"),
            (I, [P, Z, Z], "pe_sinusoidal_table_fast pe_sinusoidal_table_exact"),
            (I, [P, Z, C.c_double], "pe_rope_inv_freq"),
            (I, [P, P, P, Z, C.c_float, P, C.c_int64, Z], "pe_rope_cache"),
            (I, [P, P, Z, Z, Z, Z, Z, I, I, P, P, Z, P, C.c_int64], "pe_rope_apply pe_rope_apply_backward")]
    for res, args, names in sigs:
        for name in names.split():
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
    return lib


def c_call(f, *args):
    """A no-argument callable for f(*args) (tensors and ctypes structures by address), checked
    once."""
    addr = tuple(a.data_ptr() if hasattr(a, "data_ptr") else
                 C.addressof(a) if isinstance(a, C.Structure) else a for a in args)
    st = f(*addr)
    if st != 0:
        raise RuntimeError("%s returned %d" % (f.__name__, st))

    def call():
        return f(*addr)
    call.keep = args  # the tensors must outlive their addresses
    return call

def glu_c(lib, mod, x, dtype):
    """ffn_glu_forward (SiLU) on the GatedMLP's weights (bfloat16 or float32) packed in their
    dtype (FFN_BF16 = 1, FFN_F32 = 0), x and y float32."""
    import torch

    class Weight(C.Structure):
        _fields_ = [("data", C.c_void_p), ("dtype", C.c_int), ("layout", C.c_int),
                    ("stride_out", C.c_size_t), ("stride_in", C.c_size_t)]

    class Glu(C.Structure):
        _fields_ = [("gate", Weight), ("up", Weight), ("down", Weight), ("b_gate", C.c_void_p),
                    ("b_up", C.c_void_p), ("b_down", C.c_void_p), ("d_model", C.c_size_t),
                    ("hidden", C.c_size_t), ("act", C.c_int)]
    packed, ws = [], []
    for lin in (mod.gate_proj, mod.up_proj, mod.down_proj):
        n = lib.ffn_pack_bytes(lin.in_features, lin.out_features, dtype)
        packed.append(torch.empty(n, dtype=torch.uint8))
        src = Weight(lin.weight.data_ptr(), dtype, 0)       # FFN_OUT_IN
        c_call(lib.ffn_pack, packed[-1], n, dtype, src, lin.in_features, lin.out_features)
        ws.append(Weight(packed[-1].data_ptr(), dtype, 3))  # FFN_PACKED
    rows, d, h = x.shape[0], mod.gate_proj.in_features, mod.gate_proj.out_features
    glu = Glu(*ws, None, None, None, d, h, 3)               # FFN_SILU
    ns = lib.ffn_gated_scratch_floats(rows, d, h)
    call = c_call(lib.ffn_glu_forward, torch.empty(rows, d), x, rows, glu, torch.empty(ns), ns)
    call.keep += (packed,)
    return call

# ---- child: the measurements ---------------------------------------------------------

def pin_malloc(mode):
    """glibc's malloc maps a large block fresh (page faults on every first touch) until a free
    raises its threshold (up to 32 MiB), so whether torch's outputs page-fault depends on what
    the process freed before; pin one state for every op. warm: as after a free of 32 MiB (blocks
    up to 32 MiB reused: torch's best with glibc); fresh: glibc's initial state (every block over
    128 KiB a fresh map); as-is: no pinning."""
    if mode == "as-is":
        return True
    try:
        libc = C.CDLL(None)
        if mode == "warm":  # as glibc's own adjustment does: trim at twice the threshold
            return (libc.mallopt(-3, 32 << 20) == 1 and  # M_MMAP_THRESHOLD
                    libc.mallopt(-1, 64 << 20) == 1)     # M_TRIM_THRESHOLD
        return libc.mallopt(-3, 128 << 10) == 1
    except (OSError, AttributeError):
        return False


def child(args):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    if not pin_malloc(args.malloc):
        sys.stderr.write("bench_torch: could not pin malloc's state (not glibc?): "
                         "torch's fresh outputs may or may not page-fault\n")

    t = args.threads[0]
    torch.set_num_threads(t)
    torch.manual_seed(0)
    timer = Timer(args.quick, args.budget, args.full)
    sh = shapes(args.quick, args.large)

    def want(op):
        return not args.filter or any(f and f in op for f in args.filter.split(","))

    lib = load_lib(args.lib)

    memo = {}  # seconds per flop of the previous shape, to skip hopeless ones

    def emit(op, shape, impl, kind, fn, flops=0.0, nbytes=0.0, est=0.0, pair=None,
             read_bytes=0.0, learn=None):
        """Measures torch's fn; with pair = (impl, make_fn), also the C library's call:
        at one thread interleaved with it, at more right after it (impl *_after).
        make_fn builds the call (buffers, packing). read_bytes: a call at one row, which
        streams that many bytes of weights (compared with the STREAM read). learn: the memo
        key whose seconds per flop estimate this call and are updated from it."""
        if learn:
            est = memo.get(learn, 0.0) * flops
        groups = [[(impl, fn)]]
        if pair and lib is not None and t == 1:
            groups[0].append((pair[0], pair[1]()))
        elif pair and lib is not None:
            groups.append([(pair[0].replace("_paired", "_after"), pair[1]())])
        recs = []
        for k, rows in enumerate(groups):
            if k:
                time.sleep(0.2)     # OpenBLAS's threads stop spinning
            for (name, _), m in zip(rows, timer.measure([f for _, f in rows], est)):
                rec = {"op": op, "shape": shape, "impl": name, "threads": t, "kind": kind,
                       **({"flops": flops} if flops else {"bytes": nbytes}),
                       **({"read_bytes": read_bytes} if read_bytes else {}), **m}
                recs.append(rec)
                print(json.dumps(rec), flush=True)
        sys.stderr.write("\r[bench_torch t=%d] %s %s %s\033[K" % (t, op, shape, impl)
                         if sys.stderr.isatty() else "")
        if learn and "median_s" in recs[0]:
            memo[learn] = recs[0]["median_s"] / flops

    # reference/documents.py: the documents' modules (exec'd from their verbatim text, as the goldens
    # use them) and the blocks written from published formulas
    sys.path.insert(0, os.path.join(HERE, "..", "reference"))
    from documents import (FeedForwardNN, GatedMLP, PE000_FIXED as PositionalEncoding,
                           PE001 as PositionalEncodingSeqFirst, act_block, table_exact)

    def linears(mod):
        """The module's nn.Linear layers: fc1, fc2 (FeedForwardNN, act_block) or gate, up, down (GatedMLP)."""
        if hasattr(mod, "gate_proj"):
            return mod.gate_proj, mod.up_proj, mod.down_proj
        return (mod.fc1, mod.fc2) if hasattr(mod, "fc1") else (mod[0], mod[2])

    def fwd_c(mod, x, act=None, linear=False):
        """ffn.h's packed forward on the module's own weights (packed once per module): the block (act
        None), the block with act, the gated block, or (linear) the first Linear alone."""
        lins = linears(mod)
        if not hasattr(mod, "packed_c"):
            mod.packed_c = []
            for lin in lins:
                n_in, n_out = lin.in_features, lin.out_features
                mod.packed_c.append(torch.empty(lib.ffn_pack_floats(n_in, n_out)))
                c_call(lib.ffn_pack_weight, mod.packed_c[-1], mod.packed_c[-1].numel(),
                       lin.weight.detach().contiguous(), n_in, n_out)
        wb = [a for lin, w in zip(lins, mod.packed_c) for a in (w, lin.bias)]
        rows, d, h = x.shape[0], lins[0].in_features, lins[0].out_features
        if linear:
            return c_call(lib.ffn_linear_packed, torch.empty(rows, h), x, *wb[:2], rows, d, h)
        gated = len(lins) == 3
        ns = (lib.ffn_gated_scratch_floats if gated else lib.ffn_block_scratch_floats)(rows, d, h)
        f = lib.ffn_gated_packed if gated else lib.ffn_block_packed if act is None else lib.ffn_block_act_packed
        return c_call(f, torch.empty(rows, d), x, *wb, rows, d, h, *[act] * (act is not None),
                      torch.empty(ns), ns)

    def bwd_c(mod, x, dy, act):
        """ffn.h's backward from fc1's (gate's, up's) output: every gradient the module has."""
        rows = x.shape[0]
        lins = (mod,) if isinstance(mod, nn.Linear) else linears(mod)
        d, h = lins[0].in_features, lins[0].out_features
        grads = [g for lin in lins for g in (torch.zeros_like(lin.weight),
                                             None if lin.bias is None else torch.zeros_like(lin.bias))]
        ws = [lin.weight for lin in lins]
        if len(lins) == 1:
            ns = lib.ffn_linear_backward_scratch_floats(rows, d, h)
            return c_call(lib.ffn_linear_backward, torch.empty(rows, d), *grads, dy, x, *ws, rows, d, h,
                          torch.empty(ns), ns)
        gated = len(lins) == 3
        ns = (lib.ffn_gated_backward_scratch_floats if gated else lib.ffn_block_backward_scratch_floats)(rows, d, h)
        return c_call(lib.ffn_gated_backward if gated else lib.ffn_block_act_backward, torch.empty(rows, d),
                      *grads, dy, x, *[lin(x) for lin in lins[:1 + gated]], *ws, rows, d, h, act,
                      torch.empty(ns), ns)

    with torch.no_grad():
        # ---- FFN ----
        for d, h in sh["ffn_dh"]:
            ffn = FeedForwardNN(d, h).eval()
            for rows in sh["ffn_rows"]:
                x = torch.randn(rows, d)
                flops = 4.0 * rows * d * h
                if want("ffn_block"):
                    emit("ffn_block", {"rows": rows, "d_model": d, "hidden": h}, "torch",
                         "compute", lambda: ffn(x), flops=flops, learn="ffn",
                         pair=("fast_packed_paired", lambda: fwd_c(ffn, x)),
                         read_bytes=8.0 * d * h if rows == 1 else 0.0)
                if want("ffn_linear") and (d, h) == sh["ffn_dh"][-1]:
                    emit("ffn_linear", {"rows": rows, "in": d, "out": h}, "torch", "compute",
                         lambda: ffn.fc1(x), flops=flops / 2, est=memo.get("ffn", 0.0) * flops / 2,
                         pair=("fast_packed_paired", lambda: fwd_c(ffn, x, linear=True)),
                         read_bytes=4.0 * d * h if rows == 1 else 0.0)

        # ---- FFN with GELU, GELU-tanh, SiLU (act 1, 2, 3), and Llama's gated MLP (SiLU): every
        # row and thread count, as bench.c ----
        d, h = sh["act_dh"]
        # act | FFN_FAST (16): ffn.h's vectorised forms
        variants = [("ffn_block_act_" + a + sfx, d, h, lambda a=a, d=d, h=h: act_block(a, d, h)[0], code + fast)
                    for sfx, fast in (("", 0), ("_fast", 16))
                    for a, code in (("gelu", 1), ("gelu_tanh", 2), ("silu", 3))]
        variants += [("ffn_gated_silu" + sfx, gd, gh, lambda gd=gd, gh=gh: GatedMLP(gd, gh, F.silu), 3 + fast)
                     for gd, gh in sh["gated_dh"] for sfx, fast in (("", 0), ("_fast", 16))]
        for op, d, h, make, act in variants:
            if not want(op):
                continue
            mod = make().eval()
            block = op.startswith("ffn_block")
            for rows in sh["ffn_rows"]:
                x = torch.randn(rows, d)
                flops = (4.0 if block else 6.0) * rows * d * h
                emit(op, {"rows": rows, "d_model": d, "hidden": h}, "torch", "compute",
                     lambda: mod(x), flops=flops, learn=op,
                     pair=("fast_packed_paired", lambda: fwd_c(mod, x, act)),
                     read_bytes=(8.0 if block else 12.0) * d * h if rows == 1 else 0.0)
            mod = None

        # ---- the gated block with bfloat16 weights: torch's module in bfloat16 (model.to(
        # torch.bfloat16), x and y bfloat16: its bf16 Linears) beside ffn_glu_forward on the
        # same weights packed in bfloat16 (x, y float32; bench.c's ffn_glu_silu_w16 rows), at a
        # decode step, a small batch and a prefill ----
        if want("ffn_glu_silu_w16"):
            for gd, gh in sh["gated_dh"]:
                mod = GatedMLP(gd, gh, F.silu).eval().to(torch.bfloat16)
                for rows in sh["w16_rows"]:
                    x = torch.randn(rows, gd)
                    xb = x.bfloat16()
                    emit("ffn_glu_silu_w16", {"rows": rows, "d_model": gd, "hidden": gh}, "torch",
                         "compute", lambda: mod(xb), flops=6.0 * rows * gd * gh, learn="w16",
                         pair=("bf16_packed_paired", lambda: glu_c(lib, mod, x, 1)),
                         read_bytes=6.0 * gd * gh if rows == 1 else 0.0)
                mod = None

        # ---- the Linear's and the blocks' backward: autograd on nn.Linear(768, 3072,
        # bias=False) (dx and dW, what bench.c's ffn_linear_backward rows compute) and on
        # the same modules (FeedForwardNN, GPT-2's MLP with GELU-tanh, GatedMLP) at bench.c's
        # shape, every row and thread count; the forward runs once, each timed call is
        # y.backward(dy, retain_graph=True) (every .grad accumulates, x's too); beside it
        # ffn.h's backward, every gradient the module has ----
        bd, bh = sh["act_dh"]
        backwards = [  # (op, flops per row d h, act, the module)
            ("ffn_linear_backward", 4.0, 0, lambda: nn.Linear(bd, bh, bias=False)),
            ("ffn_backward_block_relu", 8.0, 0, lambda: act_block("relu", bd, bh)[0]),
            ("ffn_backward_block_gelu_tanh", 8.0, 2, lambda: act_block("gelu_tanh", bd, bh)[0]),
            ("ffn_backward_gated_silu", 12.0, 3, lambda: GatedMLP(bd, bh, F.silu))]
        for op, fpr, act, make in backwards:
            if not want(op):
                continue
            linear = op == "ffn_linear_backward"
            for brows in sh["ffn_rows"]:
                shape = ({"rows": brows, "in": bd, "out": bh} if linear else
                         {"rows": brows, "d_model": bd, "hidden": bh})
                with torch.enable_grad():
                    mod = make()
                    xg = torch.randn(brows, bd, requires_grad=True)
                    dy = torch.randn(brows, bh if linear else bd)
                    yg = mod(xg)

                def bwd_torch(yg=yg, dy=dy):
                    with torch.enable_grad():
                        yg.backward(dy, retain_graph=True)

                flops = fpr * brows * bd * bh
                emit(op, shape, "torch", "compute", bwd_torch, flops=flops, learn=op,
                     pair=("fast_paired", lambda: bwd_c(mod, xg.detach(), dy, act)))
                mod = xg = yg = None

        # ---- PE adds: pe.h's calls each on their own table and output (x read by both) ----
        for first, op, dims, S, D, shp, nbytes in add_rows(sh["add"], 2.0, 1.0, ""):
            pe = (PositionalEncoding if first else PositionalEncodingSeqFirst)(D, MAX_LEN)
            x, o = torch.rand(*dims, D) * 2 - 1, None
            tab = pe.pe[:, :S] if first else pe.pe[:S]
            tab_c = pe.pe.reshape(MAX_LEN, D).clone()
            if want(op):
                emit(op, shp, "torch", "memory", lambda: pe(x), nbytes=nbytes,
                     pair=("fast_paired", lambda: c_call(getattr(lib, op), torch.empty_like(x), x, tab_c,
                                                         *dims, D, MAX_LEN)))
                o = torch.empty_like(x)
                emit(op, shp, "torch_out", "memory", lambda: torch.add(x, tab, out=o), nbytes=nbytes)
            if want(op + "_inplace"):
                emit(op + "_inplace", shp, "torch", "memory", lambda: x.add_(tab), nbytes=nbytes,
                     pair=("fast_paired", lambda: c_call(getattr(lib, op + "_inplace"), x.clone(), tab_c,
                                                         *dims, D, MAX_LEN)))
            x = o = None  # free before the next shape

        # ---- embedding (002): wte(ids) + wpe(pos) ----
        if want("pe_embed"):
            wte, wpe = nn.Embedding(VOCAB, 768), nn.Embedding(CTX, 768)
            for B, S, D, op, ids, shp, moved in embed_rows(sh, want, ("pe_embed", "pe_embed_i64"), 2.0, 1.0):
                if torch_runs(op, shp, t, moved, lambda: wte(ids) + wpe(torch.arange(S))) is None:
                    continue
                emb_c = getattr(lib, op, None)
                emit(op, shp, "torch", "memory", lambda: wte(ids) + wpe(torch.arange(S)), nbytes=moved,
                     pair=("fast_paired", lambda: c_call(emb_c, torch.empty(B, S, D), ids, wte.weight,
                                                         wpe.weight, B, S, D, VOCAB, CTX)))
                # torch's kernels without allocation: the gather and the add into
                # reused buffers (not the document's code, which allocates both)
                tmp, o = torch.empty(B * S, D), torch.empty(B, S, D)
                emit(op, shp, "torch_out", "memory",
                     lambda: torch.add(torch.index_select(wte.weight, 0, ids.view(-1), out=tmp)
                                       .view(B, S, D), wpe.weight[:S], out=o), nbytes=moved)

        # ---- RoPE: HF's apply_rotary_pos_emb on q (B, S, H, D) from a cache's cos/sin rows,
        # against pe_rope_apply in place from the same cache (PE_ROPE_BSHD, PE_ROPE_HALF = 2) ----
        if t == 1 and want("pe_rope_apply_inplace"):
            for B, S, H, D, start, shp, nbytes, (cos_t, sin_t, cc, sc) in rope_rows(sh):
                q = torch.rand(B, S, H, D) * 2 - 1
                qc = q.clone()
                emit("pe_rope_apply_inplace", shp, "torch", "memory" if S > 1 else "none",
                     lambda: hf_rope(q, cos_t, sin_t, start), nbytes=nbytes,
                     pair=("fast_paired", lambda: c_call(lib.pe_rope_apply, qc, qc, B, S, H, D, D, 1,
                                                         2, cc, sc, ROPE_L, None, start)))

    # ---- training: the backward of the adds (000's / 001's forward with the table a
    # Parameter), of the embedding (002: nn.Embedding + a learned position table) and of
    # HF's RoPE, each autograd.grad of a graph built once (retain_graph: the backward alone,
    # no accumulation into .grad), one thread, beside pe.h's call (accumulating into zeroed
    # buffers; its values grow across calls, its time does not) ----
    if t == 1:
        with torch.enable_grad():
            backward_rows(sh, lib, emit, want)
    with torch.no_grad():
        # ---- sinusoidal tables: the module's constructor, and the float64 formula ----
        for L, D in sh["table"]:
            for op, make, impl, c_op in (
                    ("pe_sinusoidal_table", lambda: PositionalEncoding(D, L), "table_fast_paired",
                     "pe_sinusoidal_table_fast"),
                    ("pe_sinusoidal_table_exact", lambda: table_exact(L, D), "fast_paired",
                     "pe_sinusoidal_table_exact")):
                if want(op):
                    emit(op, {"max_len": L, "d_model": D}, "torch", "none", make,
                         nbytes=4.0 * L * D,
                         pair=(impl, lambda: c_call(getattr(lib, c_op), torch.empty(L, D), L, D)))
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")

def torch_runs(op, shp, t, nbytes, fn):
    """fn(), or None after printing a skipped row for op (int32 indices need a newer torch)."""
    try:
        return fn()
    except Exception as e:
        print(json.dumps({"op": op, "shape": shp, "impl": "torch", "threads": t, "kind": "memory",
                          "bytes": nbytes, "skipped": "torch: %s" % str(e).split("\n")[0][:60]}), flush=True)
        return None


def add_rows(shapes, x_floats, tab_floats, suffix):
    """(batch first?, op, dims, S, D, shape, bytes) of the adds' rows, batch first then seq first;
    bytes: 4 (x_floats B S D + tab_floats S D)."""
    for B, S, D in shapes:
        for first, dims, names in ((True, (B, S), ("batch", "seq")), (False, (S, B), ("seq", "batch"))):
            yield (first, "pe_add_%s%s" % ("batch_first" if first else "seq_first", suffix), dims, S, D,
                   dict(zip(names, dims), d_model=D, max_len=MAX_LEN),
                   4.0 * (x_floats * B * S * D + tab_floats * S * D))


def embed_rows(sh, want, ops, n_floats, row_floats):
    """(B, S, D, op, ids, shape, bytes moved) of the wanted embedding rows: ops[0] with int32 ids,
    ops[1] with int64; bytes: 4 (n_floats B S D + row_floats S D) + the ids."""
    import torch
    for B, S, D in sh["embed"]:
        ids64 = torch.randint(0, VOCAB, (B, S), dtype=torch.int64)
        shp = {"batch": B, "seq": S, "d_model": D, "vocab": VOCAB, "context_length": CTX}
        for op, ids in zip(ops, (ids64.to(torch.int32), ids64)):
            if want(op):
                yield (B, S, D, op, ids, shp,
                       4.0 * (n_floats * B * S * D + row_floats * S * D) + ids.element_size() * B * S)


ROPE_L = 4096  # the cache's positions


def rope_rows(sh):
    """(B, S, H, D, start, shape, bytes, rope_cache(D)) of the RoPE rows: a decoding step at the
    cache's last position, prefills from 0."""
    for B, S, H, D in sh["rope"]:
        yield (B, S, H, D, 0 if S > 1 else ROPE_L - 1, {"batch": B, "seq": S, "heads": H, "head_dim": D},
               4.0 * (2.0 * B * S * H * D + B * S * D), rope_cache(D))


def rope_cache(D, theta=10000.0):
    """HF's rotary cache: cos, sin (ROPE_L, D) with the halves repeated, and pe.h's (ROPE_L, D/2)."""
    import torch
    inv = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    freqs = torch.arange(ROPE_L).float()[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos_t, sin_t = emb.cos(), emb.sin()
    return cos_t, sin_t, cos_t[:, :D // 2].contiguous(), sin_t[:, :D // 2].contiguous()


def hf_rope(q, cos_t, sin_t, start):
    """HF's apply_rotary_pos_emb (rotate_half) on q (B, S, H, D) at positions start.. of the cache."""
    import torch
    S, half = q.shape[1], q.shape[-1] // 2
    cos, sin = cos_t[start:start + S].unsqueeze(1), sin_t[start:start + S].unsqueeze(1)
    return (q * cos) + (torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin)


def backward_rows(sh, lib, emit, want):
    import torch
    import torch.nn as nn

    def grad_of(out, wrt, g):
        return lambda: torch.autograd.grad(out, wrt, g, retain_graph=True)

    for first, op, dims, S, D, shp, nbytes in add_rows(sh["add_bwd"], 1.0, 2.0, "_backward"):
        if not want(op):
            continue
        pe = nn.Parameter(torch.rand(*((1, MAX_LEN, D) if first else (MAX_LEN, 1, D))))  # 000's / 001's
        g = torch.rand(*dims, D) * 2 - 1
        out = torch.rand(*dims, D) + (pe[:, :S] if first else pe[:S])
        dt = torch.zeros(MAX_LEN, D)
        emit(op, shp, "torch", "memory", grad_of(out, pe, g), nbytes=nbytes,
             pair=("fast_paired", lambda: c_call(getattr(lib, op), dt, g, *dims, D, MAX_LEN)))
        out = pe = None

    ops = ("pe_embed_backward", "pe_embed_i64_backward")
    if any(map(want, ops)):
        wte, wpe = nn.Embedding(VOCAB, 768), nn.Embedding(CTX, 768)
        dwte, dwpe = torch.zeros(VOCAB, 768), torch.zeros(CTX, 768)
    for B, S, D, op, ids, shp, moved in embed_rows(sh, want, ops, 3.0, 2.0):
        g = torch.rand(B, S, D) * 2 - 1
        out = torch_runs(op, shp, 1, moved, lambda: wte(ids) + wpe(torch.arange(S)))
        if out is None:
            continue
        emit(op, shp, "torch", "memory", grad_of(out, (wte.weight, wpe.weight), g), nbytes=moved,
             pair=("fast_paired", lambda: c_call(getattr(lib, op), dwte, dwpe, g, ids, B, S, D, VOCAB, CTX)))
        out = None

    if want("pe_rope_apply_backward_inplace"):
        for B, S, H, D, start, shp, nbytes, (cos_t, sin_t, cc, sc) in rope_rows(sh):
            q = (torch.rand(B, S, H, D) * 2 - 1).requires_grad_(True)
            out = hf_rope(q, cos_t, sin_t, start)
            g = torch.rand(B, S, H, D) * 2 - 1
            gc = g.clone()
            emit("pe_rope_apply_backward_inplace", shp, "torch", "memory" if S > 1 else "none",
                 grad_of(out, q, g), nbytes=nbytes,
                 pair=("fast_paired", lambda: c_call(lib.pe_rope_apply_backward, gc, gc, B, S, H, D, D,
                                                     1, 2, cc, sc, ROPE_L, None, start)))
            out = q = None


# ---- parent: children per thread count, limits from the C bench, output --------------

def torch_info():
    """torch's version, CPU capability and OpenBLAS core, from a process of their own."""
    code = ("import json, sys; sys.path.insert(0, %r); import torch, documents as d; _, core = d.openblas_info(); "
            "print(json.dumps({'torch': torch.__version__, 'capability': d.capability(), "
            "'blas_core': None if core == 'unknown' else core}))" % os.path.join(HERE, "..", "reference"))
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:
        return {"torch": "?", "error": str(e)}


def run_limits(bench, threads, byte_counts, read_counts=()):
    """FMA peak per thread count, STREAM copy/add/update at the given byte counts and the
    STREAM read at read_counts, measured by the C bench. Returns (peaks {t: flops/s},
    streams {(bytes, t): {...}})."""
    peaks, streams = {}, {}
    if not bench or not os.path.exists(bench):
        sys.stderr.write("bench_torch: no C bench binary (%s): no limits\n" % bench)
        return peaks, streams
    cmd = [bench, "--limits-only", "--json", "--threads", ",".join(map(str, threads))]
    for flag, counts in (("--stream-bytes", byte_counts), ("--read-bytes", read_counts)):
        if counts:
            cmd += [flag, ",".join("%d" % b for b in sorted(counts))]
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
    return " ".join("%s=%d" % (names.get(k, k), v) for k, v in shape.items()
                    if k not in ("vocab", "context_length") and not (k == "max_len" and len(shape) > 2))


OP_ORDER = ["ffn_block", "ffn_block_act_gelu", "ffn_block_act_gelu_tanh", "ffn_block_act_silu",
            "ffn_block_act_gelu_fast", "ffn_block_act_gelu_tanh_fast", "ffn_block_act_silu_fast",
            "ffn_gated_silu_fast", "ffn_gated_silu", "ffn_glu_silu_w16", "ffn_linear", "ffn_linear_backward",
            "ffn_backward_block_relu", "ffn_backward_block_gelu_tanh", "ffn_backward_gated_silu",
            "pe_add_batch_first", "pe_add_batch_first_inplace", "pe_add_seq_first", "pe_add_seq_first_inplace",
            "pe_embed", "pe_embed_i64", "pe_sinusoidal_table", "pe_sinusoidal_table_exact",
            "pe_rope_apply_inplace", "pe_add_batch_first_backward", "pe_add_seq_first_backward",
            "pe_embed_backward", "pe_embed_i64_backward", "pe_rope_apply_backward_inplace"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join("build", "bench"))
    ap.add_argument("--lib", help="build/libpeffn.so: pe.h and ffn.h beside torch (ctypes)")
    ap.add_argument("--malloc", choices=("warm", "fresh", "as-is"), default="warm",
                    help="glibc malloc state for torch's allocations (see pin_malloc)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--large", action="store_true",
                    help="also 4096 rows and Llama 7B's gated block (bench.c --large)")
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
    ncpu = os.cpu_count() or 1
    threads = args.threads or ([1] if ncpu == 1 else [1, ncpu])
    t_start = time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    info = torch_info()
    recs = []
    for t in threads:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(t), OMP_NUM_THREADS=str(t),
                   MKL_NUM_THREADS=str(t))
        # the same arguments (the child reads the ones that shape the run), its thread count last
        cmd = [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--child",
               "--threads", str(t)]
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        if r.returncode:
            sys.exit("bench_torch: child for %d threads failed" % t)
        recs += [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]

    byte_counts = {r["bytes"] for r in recs if r["kind"] == "memory"}
    read_counts = {r["read_bytes"] for r in recs if r.get("read_bytes")}
    peaks, streams = run_limits(args.bench, threads, byte_counts, read_counts)
    for r in recs:
        base, _, how = r["impl"].rpartition("_")
        blas = " [openblas %s]" % info["blas_core"] if r["op"].startswith("ffn") and info.get("blas_core") else ""
        r["label"] = {"paired": base + ", beside torch", "after": base + ", after torch",
                      "out": "torch, reused outputs (out=)"}.get(how, r["impl"] + blas)
        r["path"] = "ctypes" if how in ("paired", "after") else "torch " + info.get("torch", "?")
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
            kinds = [("stream_update" if r["op"].endswith("_inplace") else "stream_add"
                      if st.get("stream_add", 0) > st.get("stream_copy", 0) else "stream_copy", t, st)
                     for (b, t), st in streams.items()
                     if b == float(int(r["bytes"])) and t <= r["threads"] and r["kind"] == "memory"]
            cands = [(st[k], k + ("" if t == r["threads"] else "@%dt" % t)) for k, t, st in kinds if st.get(k)]
            if med and cands:  # the first of the fastest
                g, r["limit_kind"] = max(cands, key=lambda c: c[0])
                r["limit"] = g / 1e9
        if r["limit"]:
            r["pct_of_limit"] = 100.0 * (r.get("gflops") or r.get("gbps")) / r["limit"]
        if r.get("read_bytes") and med:
            # one row: its weights' bytes against the best STREAM read of as many, <= t threads
            cands = [(st["stream_read"], t) for (b, t), st in streams.items()
                     if b == float(int(r["read_bytes"])) and t <= r["threads"]
                     and st.get("stream_read")]
            if cands:
                g, t = max(cands)
                r["read_limit_gbps"] = g / 1e9
                r["pct_of_read"] = 100.0 * r["read_bytes"] / med / g
                r["read_limit_threads"] = t

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
            "outputs_reused": "torch: fresh outputs (allocated per call); torch_out: reused",
            "malloc": args.malloc}
    lines = [json.dumps(meta)] + [json.dumps({k: v for k, v in r.items() if k != "kind"}) for r in recs]
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.json:
        print("\n".join(lines))
        return

    print("bench_torch: torch %s (python %s), ATen CPU capability %s, nn.Linear via OpenBLAS core %s"
          % (info.get("torch"), platform.python_version(), info.get("capability"), info.get("blas_core")))
    if load is not None:
        print("load average at start %.2f%s" % (load, "  WARNING: other processes share the cores;"
              " figures are unreliable" if load > 0.5 * ncpu else ""))
    print("threads measured: %s (OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = torch.set_num_threads = t)\n"
          "timing: as bench.c (median of >= 5 repeats after warm-up, short calls batched);\n"
          "        'torch' rows allocate a fresh output per call, as the modules do;\n"
          "        'torch_out' rows write into reused outputs (out=); glibc malloc state: %s\n"
          "        (warm: blocks <= 32 MiB reused; fresh: every block > 128 KiB a new map)\n"
          "limits: from %s --limits-only (FMA peak; STREAM on the same byte counts)\n"
          % (" ".join(map(str, threads)), args.malloc, args.bench))
    row = "%-27s %-24s %-30s %3s %10s %14s %14s %7s  %s"
    print(row % ("op", "shape", "implementation", "thr", "median", "rate", "limit", "%limit", "note"))
    prev = None
    for r in recs:
        if r["op"] != prev:
            print()
            prev = r["op"]
        unit = "GFLOP/s" if "flops" in r else "GB/s"
        rate = r.get("gflops") if "flops" in r else r.get("gbps")
        print(row % (r["op"], short_shape(r["shape"]), r["label"], r["threads"], *(
            ["-"] * 4 + [r["skipped"]] if r.get("skipped") else
            [fmt_time(r["median_s"]), "%.1f %s" % (rate, unit),
             "%.1f %s" % (r["limit"], unit) if r["limit"] else "-",
             "%.1f%%" % r["pct_of_limit"] if r["pct_of_limit"] else "-",
             (r["limit_kind"] if r["limit_kind"] and "bytes" in r else "") +
             ("weights %.0f%% of stream_read%s" % (r["pct_of_read"], "" if r["read_limit_threads"]
              == r["threads"] else "@%dt" % r["read_limit_threads"]) if r.get("pct_of_read") else "")])))
    if (args.compare and os.path.exists(args.compare)) or args.lib:
        compare(args.compare, recs)
    print("\ntotal %.0f s" % (time.perf_counter() - t_start))


def compare(path, torch_recs):
    """Speed-up of the C libraries over torch (torch's time / ours). from: "beside" interleaved in
    torch's process ("same process" for torch_out, right after that pair), "after, same process"
    right after torch's row, "C run" the C bench's JSON Lines (another process at another moment)."""
    c = {}
    if path and os.path.exists(path):
        with open(path) as f:
            c = {(r["op"], json.dumps(r["shape"]), r["impl"], r["threads"]): r
                 for r in map(json.loads, f) if r.get("median_s")}
    paired = {(r["op"], json.dumps(r["shape"]), r["threads"]): r for r in torch_recs
              if r["impl"].endswith(("_paired", "_after")) and r.get("median_s")}
    print("\nspeed-up of the C library over torch (torch time / C time; beside = interleaved in"
          " one process, C run = from %s):" % path)
    print("%-27s %-24s %3s %-19s %10s %-9s %10s %9s  %s" % (
        "op", "shape", "thr", "C impl", "C", "torch", "", "speed-up", "from"))
    for r in torch_recs:
        if r["impl"] not in ("torch", "torch_out") or not r.get("median_s"):
            continue
        key = (r["op"], json.dumps(r["shape"]))
        best = paired.get(key + (r["threads"],))
        src = "beside" if r["impl"] == "torch" else "same process"
        if best and best["impl"].endswith("_after"):
            src = "after, same process"
        if not best:
            cands = [x for x in (c.get(key + (impl, r["threads"])) for impl in ("fast", "fast_packed", "table_fast"))
                     if x]
            if not cands:
                continue
            best, src = min(cands, key=lambda x: x["median_s"]), "C run"
        print("%-27s %-24s %3d %-19s %10s %-9s %10s %8.2fx  %s" % (
            r["op"], short_shape(r["shape"]), r["threads"], best["impl"],
            fmt_time(best["median_s"]), r["impl"], fmt_time(r["median_s"]),
            r["median_s"] / best["median_s"], src))


if __name__ == "__main__":
    main()
