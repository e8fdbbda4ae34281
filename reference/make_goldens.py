#!/usr/bin/python3
"""Reference goldens for pe.h and ffn.h, computed by PyTorch running the source documents' code.

Usage: /usr/bin/python3 reference/make_goldens.py --out DIR [--check-seeds SEEDS_DIR]
Writes DIR/*.npy and DIR/MANIFEST.txt (grammar: reference/README.md), removing the old ones first;
two runs on the same machine and software give byte-identical files. --check-seeds also verifies
that every verbatim block of documents.py occurs in its source document.

Made in a child of this script run with ATEN_CPU_CAPABILITY=default (torch calls glibc's libm;
dispatch=glibc): the *_glibc pe_table cases, the RoPE, ALiBi and timestep cases, and the op=act
`expect` with oneDNN off as well (torch's scalar kernels, checked element by element against glibc's
formulas through ctypes); the rest in this process (torch's default dispatch), where every random
tensor is made (the child regenerates its inputs from the same seeds): inputs from NumPy's PCG64,
weights from torch's own init after torch.manual_seed(seed).
"""
import os

# Single-threaded and reproducible; must be set before torch / OpenBLAS are loaded.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
# torch's nn.Linear runs OpenBLAS's sgemm, whose kernel (and so the summation order) OpenBLAS picks
# from the CPU it finds ("Zen" on AMD, "Prescott" on some Intel parts). Pinning one kernel that every
# x86-64 machine with AVX2 runs makes the linear and FFN goldens the same on all of them, so that
# `make reference-check` compares like with like.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import argparse  # noqa: E402
import ast  # noqa: E402
import contextlib  # noqa: E402
import collections  # noqa: E402
import copy  # noqa: E402
import filecmp  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)

SIZE_LIMIT = 16 * 1024 * 1024  # all golden data together must stay below 16 MiB
F32 = np.float32

# The documents' code (verbatim blocks, the one-line fix, the modules) lives in documents.py.
from documents import (DOC003, DOC003_SNIPPET, DOC003_WALKTHROUGH, FeedForwardNN,  # noqa: E402
                       GatedMLP, GPT2MLP, GptOssExpertMLP, PE000_AS_WRITTEN, PE000_FIXED, PE001,
                       act_block, capability, check_seeds, openblas_info, run_doc, table_exact)
import own_math as om  # noqa: E402 -- the library's own bits: torch's pipelines with libm swapped

# ==== Helpers

def bits(a):
    a = np.ascontiguousarray(a.detach().numpy() if isinstance(a, torch.Tensor) else a)
    return a.view({4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def bits_equal(a, b):
    return np.array_equal(bits(a), bits(b))  # (False for different shapes)


def err_text(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- recording whatever torch raises is the point
        return f"{type(e).__name__}: {e}".replace("\n", "\\n")
    return "no error"


def f32_from_bits(*words):
    return np.array(words, dtype=np.uint32).view(F32)


FLT_MAX = float(np.finfo(F32).max)
QNAN, NEG_QNAN, PAYLOAD_NAN = f32_from_bits(0x7FC00000, 0xFFC00000, 0x7FC00123)
DENORM_MIN, NEG_DENORM_MIN = f32_from_bits(0x00000001, 0x80000001)
DENORM_MAX = f32_from_bits(0x007FFFFF)[0]
FLT_MIN = float(np.finfo(F32).tiny)

# Special float32 values for the elementwise ops (pe add, relu, embed)
SPECIALS = np.array([QNAN, NEG_QNAN, PAYLOAD_NAN, np.inf, -np.inf, 0.0, -0.0, FLT_MAX, -FLT_MAX, 1e38,
                     -1e38, 3e38, DENORM_MIN, NEG_DENORM_MIN, DENORM_MAX, -DENORM_MAX, FLT_MIN, -FLT_MIN,
                     1e-40, -1e-40, 1.0, -1.0, 0.5, 16777217.0], dtype=F32)


def rng(seed):
    return np.random.default_rng(seed)


def normal(seed, shape, scale=1.0):
    return (rng(seed).standard_normal(shape, dtype=F32) * F32(scale)).astype(F32)


def sprinkle(x, seed, values=SPECIALS):
    """Copy x and put each of `values` at a distinct pseudo-random position."""
    x = np.array(x, dtype=F32, copy=True)
    flat = x.reshape(-1)
    n = min(len(values), flat.size)
    flat[np.sort(rng(seed).permutation(flat.size)[:n])] = values[:n]
    return x


def grad0(seed, shape, acc):
    """A .grad before the backward: normal(seed, shape, 0.5) to accumulate into (acc), else zeros."""
    return normal(seed, shape, 0.5) if acc else np.zeros(shape, F32)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def x_grad(f, x, dy, dtype=torch.float32):
    """x.grad after f(x).backward(dy), x and dy (NumPy) in dtype."""
    xt = t(x).to(dtype).clone().requires_grad_(True)
    f(xt).backward(t(dy).to(dtype))
    return xt.grad


def seeded(seed, make, *args, **kw):
    """make(*args, **kw) right after torch.manual_seed(seed): its init draws from that seed."""
    torch.manual_seed(seed)
    return make(*args, **kw)


class Writer:
    def __init__(self, out):
        self.out, self.lines, self.names = out, [], set()

    def save(self, name, key, arr):
        arr = np.ascontiguousarray(arr)
        assert arr.dtype.str in ("<f4", "<f8", "<i8", "<i4", "<u2"), arr.dtype
        fname = f"{name}.{key}.npy"
        np.save(os.path.join(self.out, fname), arr, allow_pickle=False)
        return fname

    def case(self, name, op, **kv):
        """One manifest line (arrays saved, Python floats as repr); dispatch=default unless given."""
        kv.setdefault("dispatch", "default")
        assert name not in self.names, name
        assert all(c.isalnum() or c in "_-" for c in name), name
        self.names.add(name)
        parts = [f"case {name}", f"op={op}"]
        for k, v in kv.items():
            if isinstance(v, torch.Tensor):
                v = v.detach().numpy()
            if isinstance(v, np.ndarray):
                v = self.save(name, k, v)
            elif isinstance(v, (bool, np.bool_)):
                raise TypeError(k)
            elif isinstance(v, (int, np.integer)):
                v = str(int(v))
            elif isinstance(v, float):
                v = repr(v)
            assert isinstance(v, str) and v and " " not in v, (k, v)
            parts.append(f"{k}={v}")
        self.lines.append(" ".join(parts))


# ==== Sinusoidal tables (pe_table); run in both dispatches

TABLES = [  # (name prefix, max_len, d_model); doc_defaults: PositionalEncoding(512), max_len=5000
    ("doc_defaults", 5000, 512), ("edge_maxlen1", 1, 2), ("edge_d2", 8, 2), ("table", 50, 64),
    ("table", 128, 6), ("edge_large_d", 4, 4096), ("table", 2048, 768), ("edge_long_pos", 100000, 64),
    ("edge_pos_2e20", 2**20 + 32, 4),  # both sides of 2^20, where the _fast table switches to libm
]

SUBSET_RULE = ("tables larger than 1 MiB store a subset of rows: rows 0..63, the last 64 rows, and "
               "every 97th row in between (64, 161, 258, ... < max_len-64); the rows file lists them")


def table_rows(max_len, d):
    if max_len * d * 4 <= 1 << 20:
        return np.arange(max_len, dtype=np.int64)
    r = set(range(64)) | set(range(max_len - 64, max_len)) | set(range(64, max_len - 64, 97))
    return np.array(sorted(r), dtype=np.int64)


def table_torch(max_len, d):
    """The documents' table: 000 (fixed) buffer pe[0] and 001 buffer pe[:, 0, :], asserted identical."""
    kw = {} if max_len == 5000 else {"max_len": max_len}  # 5000: the documents' default argument
    m0, m1 = PE000_FIXED(d, **kw), PE001(d, **kw)
    assert tuple(m0.pe.shape) == (1, max_len, d) and tuple(m1.pe.shape) == (max_len, 1, d)
    assert bits_equal(m0.pe[0], m1.pe[:, 0, :]), f"000-fixed and 001 tables differ at ({max_len}, {d})"
    return m0.pe[0].numpy()


def table_name(prefix, mode, max_len, d, dispatch):
    return f"{prefix}_{mode}_{max_len}x{d}" + ("_glibc" if dispatch == "glibc" else "")


def write_tables(w, dispatch):
    for prefix, max_len, d in TABLES:
        rows = table_rows(max_len, d)
        for mode, fn in (("torch", table_torch), ("exact", table_exact)):
            w.case(table_name(prefix, mode, max_len, d, dispatch), "pe_table", mode=mode, dispatch=dispatch,
                   max_len=max_len, d_model=d, rows=rows, expect=fn(max_len, d)[rows])


# ==== Documents' behaviour: errors, 003's snippets

def doc_checks(comments):
    e = err_text(lambda: PE000_AS_WRITTEN(512))
    assert e == "AttributeError: cannot assign buffer before Module.__init__() call", e
    comments.append(f"# error doc000_as_written PositionalEncoding(512): {e}")
    comments.append("# doc000 fix (one line): super(PositionalEncoding).__init__() -> super().__init__()")

    emb = nn.Embedding(10, 3)
    for label, fn, prefix in [
            ("doc001 PositionalEncoding(5) (odd d_model)", lambda: PE001(5),
             "RuntimeError: The expanded size of the tensor (2) must match the existing size (3)"),
            ("doc000_fixed PositionalEncoding(7, max_len=10) (odd d_model)", lambda: PE000_FIXED(7, max_len=10),
             "RuntimeError:"),
            ("doc001 PositionalEncoding(0, max_len=10)", lambda: PE001(0, max_len=10), ""),
            ("doc000_fixed forward seq 9 > max_len 8", lambda: PE000_FIXED(4, max_len=8)(torch.zeros(1, 9, 4)), ""),
            ("doc001 forward seq 9 > max_len 8", lambda: PE001(4, max_len=8)(torch.zeros(9, 1, 4)), ""),
            ("doc002 nn.Embedding(10,3) id 10 == vocab", lambda: emb(torch.tensor([[10]])), ""),
            ("doc002 nn.Embedding(10,3) id -1", lambda: emb(torch.tensor([[-1]])), "")]:
        e = err_text(fn)
        assert e.startswith(prefix), e
        comments.append(f"# error {label}: {e}")

    # 003's snippet with the setup it names: pe = zeros(max_len, d_model); position either as 001 has
    # it (float) or as 003 suggests, torch.arange(0, max_len).unsqueeze(1) (int64). Same table as 001.
    d_model, max_len = 512, 5000
    ref = PE001(d_model).pe
    for pos_kind, position in (("float", torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)),
                               ("int64", torch.arange(0, max_len).unsqueeze(1))):
        ns = {"torch": torch, "math": math, "d_model": d_model, "pe": torch.zeros(max_len, d_model),
              "position": position}
        run_doc(DOC003_SNIPPET, DOC003, ns)
        assert ns["pe"].shape == (max_len, 1, d_model)
        assert bits_equal(ns["pe"], ref), f"003 snippet (position {pos_kind}) differs from 001's buffer"
    snippet_div = ns["div_term"]
    comments.append("# doc003 snippet (d_model 512, max_len 5000, position float and int64) gives 001's "
                    "buffer bit for bit")

    with contextlib.redirect_stdout(io.StringIO()):  # its print(div_term)
        walk = run_doc(DOC003_WALKTHROUGH, DOC003)
    div = walk["div_term"]
    assert div.dtype == torch.float32 and tuple(div.shape) == (256,)
    assert bits_equal(div, snippet_div), "003 walk-through div_term differs from the module's"
    comments.append("# doc003 walk-through (d_model 512): div_term equals the module's div_term bit for bit; "
                    f"scale_factor = {walk['scale_factor']!r} (the document says ~ -0.02302585, which is "
                    "-ln(10000)/400); "
                    f"div_term[0] = {float(div[0])!r}, div_term[128] = {float(div[128])!r} "
                    f"(document: 1/100 for i = 256), div_term[255] = {float(div[255])!r}")


# ==== pe_add cases

def case_pe_add(w, comments):
    def add(name, seq_first, n0, n1, d, max_len, x=None, table=None, seed=0):
        """000 (fixed) forward on x (batch=n0, seq=n1, d), or 001's on x (seq=n0, batch=n1, d)."""
        m = (PE001 if seq_first else PE000_FIXED)(d, max_len=max_len)
        if table is not None:  # a learned table in the same module
            with torch.no_grad():
                m.pe.copy_(t(table).unsqueeze(1 if seq_first else 0))
        if x is None:
            x = normal(seed, (n0, n1, d))
        y = m(t(x))
        tab = m.pe[:, 0, :] if seq_first else m.pe[0]
        assert bits_equal(y, t(x) + (tab[:n0].unsqueeze(1) if seq_first else tab[:n1].unsqueeze(0)))
        w.case(name, "pe_add_seq_first" if seq_first else "pe_add_batch_first",
               **({"seq": n0, "batch": n1} if seq_first else {"batch": n0, "seq": n1}), d_model=d,
               max_len=max_len, x=x, table=tab.contiguous(), expect=y)

    # a learned table with specials; deliberate pairs with x: FLT_MAX + FLT_MAX = +inf,
    # -inf + inf = NaN, -0.0 + -0.0 = -0.0, 3e38 + -3e38 = 0
    tab = sprinkle(normal(109, (6, 8)), 1109)
    tab[1, 0], tab[2, 1], tab[3, 2], tab[4, 3] = FLT_MAX, -np.inf, -0.0, 3e38
    for seq_first, base in ((0, 100), (1, 200)):
        lay = "seq_first" if seq_first else "batch_first"

        def run(prefix, b, s, d, max_len, seed=0, tail=None, x=None, table=None):
            """Batch b, seq s: PREFIX_<b, s in x's order>_d<d>_<tail or maxlen>; x(shape) or seed"""
            shape = (s, b, d) if seq_first else (b, s, d)
            name = f"{prefix}_" + (f"s{s}_b{b}" if seq_first else f"b{b}_s{s}") + f"_d{d}_"
            add(name + (tail or f"maxlen{max_len}"), seq_first, *shape, max_len,
                x=None if x is None else x(shape), table=table, seed=seed)

        def learned_x(shape):
            x = sprinkle(normal(base + 10, shape), base + 1010)
            v = x if seq_first else x.swapaxes(0, 1)  # (seq, batch, d)
            v[1, :, 0], v[2, :, 1], v[3, :, 2], v[4, :, 3] = FLT_MAX, np.inf, -0.0, -3e38
            return x

        doc, edge = "doc001_add" if seq_first else "doc000_fixed_add", f"edge_add_{lay}"
        for k, (prefix, b, s, d, max_len) in enumerate([
                (doc, 2, 12, 16, 12), (doc, 3, 7, 64, 20), (doc, 8, 4, 256, 16),
                (edge, 1, 1, 512, 8), (edge, 1, 1, 2, 1), (edge + "_large_d", 1, 2, 4096, 2)]):
            run(prefix, b, s, d, max_len, base + 1 + k, tail="seq_eq_maxlen" if k == 0 else None)
        run(f"nan_add_{lay}", 2, 8, 8, 8, x=lambda sh: sprinkle(normal(base + 7, sh), base + 1007))
        run(f"large_add_{lay}", 2, 3, 8, 4, x=lambda sh: normal(base + 8, sh, 1e37))
        run(f"learned_add_{lay}", 3, 5, 8, 6, x=learned_x, table=tab)
        run(f"learned_add_{lay}", 4, 16, 32, 16, base + 11, table=normal(base + 12, (16, 32)))
    # 001/003's module given a batch-first x (B=3, S=5, d=16): it runs, and y[b, s] = x[b, s] + PE[b]
    # (the assertion in add with seq = B)
    add("doc001_batch_first_misuse", 1, 3, 5, 16, 10, seed=220)


# ==== embed (002)

def embed_case(w, name, tok, pos, ids):
    (batch, seq), (vocab, d) = ids.shape, tok.weight.shape
    out = tok(t(ids)) + pos(torch.arange(seq))  # 002: token_embeddings + pos_embeddings
    row_ids = np.unique(ids).astype(np.int64)
    w.case(name, "embed", batch=batch, seq=seq, d_model=d, vocab=vocab, context_length=pos.weight.shape[0],
           ids=ids.astype(np.int64), wte_rows=tok.weight[t(row_ids)], wte_row_ids=row_ids, wpe=pos.weight, expect=out)
    return out


def case_embed(w, comments):
    # 002: vocab 50257 (GPT-2), dim 256, context length 4, batch 8
    torch.manual_seed(123)
    vocab_size, output_dim, context_length = 50257, 256, 4
    token_embedding_layer = nn.Embedding(vocab_size, output_dim)
    pos_embedding_layer = nn.Embedding(context_length, output_dim)
    ids = np.zeros((8, 4), dtype=np.int64)
    ids[0], ids[1], ids[7] = [10, 8, 20, 21], [1, 3, 4, 5], [9, 8, 16, 23]  # rows 0, 1 and 7 as 002 shows them
    ids[2:7] = rng(302).integers(0, vocab_size, size=(5, 4))
    ids[3, 2], ids[5, 1], ids[4, 0] = 0, vocab_size - 1, 10  # [4, 0]: same token, same position as row 0
    out = embed_case(w, "doc002_embed_b8_s4_d256_v50257", token_embedding_layer, pos_embedding_layer, ids)
    assert tuple(out.shape) == (8, 4, 256)
    w0 = token_embedding_layer.weight[0, :5].tolist()
    comments.append("# doc002 torch.manual_seed(123); nn.Embedding(50257,256).weight[0,:5] = "
                    + ",".join(repr(float(F32(v))) for v in w0))

    for seed, name, (vocab, d, ctx), ids in [
            (310, "embed_small_v10_d3_c5_b2_s3", (10, 3, 5), np.array([[0, 9, 3], [3, 3, 7]], dtype=np.int64)),
            (311, "edge_embed_v1_b1_s1_d4", (1, 4, 1), np.zeros((1, 1), dtype=np.int64)),
            (312, "nan_embed_specials_v12_d8_c6_b4_s6", (12, 8, 6), rng(314).integers(0, 12, size=(4, 6)))]:
        torch.manual_seed(seed)
        tok, pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        if name.startswith("nan_"):
            with torch.no_grad():
                tok.weight.copy_(t(sprinkle(tok.weight.detach().numpy(), 1312)))
                pos.weight.copy_(t(sprinkle(pos.weight.detach().numpy(), 1313)))
        embed_case(w, name, tok, pos, ids)

# ==== linear, relu, ffn_block

def ref64_of(m, x):
    """m's output in float64 (a float64 copy of m) from the same float32 inputs."""
    with torch.no_grad():
        return copy.deepcopy(m).double()(t(x).double())


def linear_case(w, name, layer, x, ref64=False):
    """ref64: also store the float64 result from the same float32 inputs, against which the C test
    compares ffn.h's error with torch's."""
    y = layer(t(x)).detach()
    w.case(name, "linear", rows=x.shape[0], **{"in": x.shape[1], "out": layer.out_features}, x=x,
           weight=layer.weight, bias="none" if layer.bias is None else layer.bias, expect=y,
           dispatch="default", **({"ref64": ref64_of(layer, x)} if ref64 else {}))
    return y


def case_linear(w, comments):
    linear_case(w, "edge_linear_rows1_i8_o4", seeded(401, nn.Linear, 8, 4), normal(1401, (1, 8)))
    linear_case(w, "linear_r7_i5_o3", seeded(402, nn.Linear, 5, 3), normal(1402, (7, 5)))
    linear_case(w, "linear_r7_i5_o3_nobias", seeded(403, nn.Linear, 5, 3, bias=False), normal(1403, (7, 5)))
    linear_case(w, "edge_linear_r1_i1_o1", seeded(404, nn.Linear, 1, 1), normal(1404, (1, 1)))
    linear_case(w, "linear_r4_i4096_o16_long_reduction", seeded(405, nn.Linear, 4096, 16), normal(1405, (4, 4096)))
    linear_case(w, "large_linear_1e15_r6_i64_o8", seeded(406, nn.Linear, 64, 8), normal(1406, (6, 64), 1e15))

    # Non-finite inputs. No finite partial sum can overflow (|x| <= ~4, |w| <= 1/4), so each outcome is
    # fixed by which infinities / NaNs enter the sum, whatever the summation order.
    layer = seeded(407, nn.Linear, 16, 5)
    with torch.no_grad():
        layer.weight[1, 3] = float("nan")  # output column 1 is NaN in every row
    assert bool((layer.weight[[0, 2, 3, 4]] != 0).all())
    x = normal(1407, (7, 16))
    x[1, 5], x[2, 2], x[3, 0], x[3, 7], x[4, :], x[6, 9] = np.nan, np.inf, np.inf, -np.inf, -0.0, -np.inf
    x[5, :] = rng(2407).choice(np.array([DENORM_MIN, NEG_DENORM_MIN, DENORM_MAX, 1e-40, -1e-40], F32), 16)
    linear_case(w, "nan_linear_specials_r7_i16_o5", layer, x)

    # All-positive terms, each product finite (<= 1.69e38) but any two sum past FLT_MAX: +inf certainly.
    layer = seeded(408, nn.Linear, 16, 3)
    with torch.no_grad():
        layer.weight.copy_(t((1e19 * (1.0 + 0.3 * rng(1408).random((3, 16)))).astype(F32)))
        layer.bias.fill_(1.0)
    x = (1e19 * (1.0 + 0.3 * rng(2408).random((2, 16)))).astype(F32)
    y = linear_case(w, "nan_linear_overflow_pos_r2_i16_o3", layer, x)
    assert bool(torch.isposinf(y).all())

    # Accuracy against torch: reduction lengths K from 1 to 3072, no size a multiple of any SIMD width
    # (the C test asserts that ffn.h's max error against the float64 result is no larger than torch's).
    for i, (rows, k, out) in enumerate([(7, 1, 37), (9, 3, 45), (19, 33, 45), (19, 129, 37), (7, 700, 45),
                                        (7, 1000, 37), (5, 2500, 37), (5, 3072, 45)]):
        linear_case(w, f"acc_linear_r{rows}_i{k}_o{out}", seeded(420 + i, nn.Linear, k, out),
                    normal(1420 + i, (rows, k)), ref64=True)


def case_relu(w, comments):
    def relu_case(name, x):
        x = np.ascontiguousarray(x, dtype=F32)
        w.case(name, "relu", n=x.size, x=x, expect=torch.relu(t(x)))

    # 69 = 4 * 16 + 5: torch's vector loop takes 16 floats per step, the last 5 go through its scalar path
    x = normal(501, 69)
    x[:len(SPECIALS)] = SPECIALS
    x[-5:] = [NEG_QNAN, QNAN, -0.0, -np.inf, NEG_DENORM_MIN]
    relu_case("nan_relu_specials_n69", x)
    relu_case("relu_random_n4099", sprinkle(normal(502, 4099), 1502))
    relu_case("edge_relu_n1_neg_zero", np.array([-0.0], dtype=F32))
    relu_case("edge_relu_n3_nans", np.array([NEG_QNAN, PAYLOAD_NAN, -np.inf], dtype=F32))


def ffn_case(w, name, m, x2, shared_with_linear=None, ref64=False):
    (rows, d), h = x2.shape, m.fc1.out_features
    y, hidden = run_hidden(m, lambda v: torch.relu(m.fc1(v)), x2)
    assert bits_equal(m.fc2(hidden), y)
    extra = {"ref64": ref64_of(m, x2)} if ref64 else {}
    w.case(name, "ffn_block", rows=rows, d_model=d, hidden=h, x=x2, **weight_keys((m.fc1, m.fc2), "12"),
           hidden_ref=hidden, expect=y, dispatch="default", **extra)
    if shared_with_linear:  # a linear case that is this block's fc1, reusing its x, w1, b1 files
        w.case(shared_with_linear, "linear", rows=rows, **{"in": d, "out": h}, x=f"{name}.x.npy",
               weight=f"{name}.w1.npy", bias=f"{name}.b1.npy", expect=m.fc1(t(x2)))


def case_ffn(w, comments):
    ffn_case(w, "edge_ffn_r1_d2_h3", seeded(601, FeedForwardNN, 2, 3), normal(1601, (1, 2)))
    ffn_case(w, "doc000_ffn_r8_d16_h64", seeded(602, FeedForwardNN, 16, 64), normal(1602, (8, 16)))

    m, x3 = seeded(603, FeedForwardNN, 16, 64), normal(1603, (2, 5, 16))
    assert bits_equal(m(t(x3)).reshape(10, 16), m(t(x3.reshape(10, 16)))), "3-D and 2-D FeedForwardNN outputs differ"
    ffn_case(w, "doc000_ffn_3d_b2_s5_rows10_d16_h64", m, x3.reshape(10, 16))

    ffn_case(w, "doc000_ffn_r32_d256_h1024", seeded(604, FeedForwardNN, 256, 1024), normal(1604, (32, 256)),
             shared_with_linear="linear_r32_i256_o1024_is_ffn_fc1")
    # d 512 is the documents' default; h 256 keeps the weights at 1 MiB (h 2048 alone would be 8 MiB).
    ffn_case(w, "doc000_ffn_r4_d512_h256", seeded(605, FeedForwardNN, 512, 256), normal(1605, (4, 512)))

    ffn_case(w, "nan_ffn_specials_r5_d8_h16", seeded(606, FeedForwardNN, 8, 16), block_x(1606, True, 5, 8))

    # Accuracy against torch (as the acc_linear cases): the second layer's reduction is `hidden` long.
    for i, (rows, d, h) in enumerate([(7, 1, 3), (9, 3, 33), (11, 33, 129), (5, 45, 700), (5, 37, 1000),
                                      (3, 43, 2500), (3, 37, 3072)]):
        ffn_case(w, f"acc_ffn_r{rows}_d{d}_h{h}", seeded(620 + i, FeedForwardNN, d, h), normal(1620 + i, (rows, d)),
                 ref64=True)


# ==== GELU, GELU-tanh, SiLU, sigmoid: op=act (expect from the glibc child), op=ffn_block_act, op=ffn_gated

ACTS = {  # name: torch's function (float32 or float64 tensors); gelu: approximate='none', the erf form
    "relu": torch.relu, "gelu": lambda x: F.gelu(x), "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu, "sigmoid": torch.sigmoid}


def gelu_new(x):
    """GPT-2's activation (Hugging Face's NewGELUActivation / gelu_new), for comparison only."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


# The specials set: where the libm functions overflow, underflow or saturate, and where 1 + tanh and
# 1 + erf cancel. x for gelu_tanh's inner = kBeta * (x + 0.044715 x^3) = 9, 9.0109 (tanhf returns 1
# from 9.010913848876953), 10: 5.1548597, 5.157851, 5.4187074; erff returns 1 from 3.919205904006958,
# i.e. x = 5.5425941 in erff(x * M_SQRT1_2).
ACT_SPECIALS = np.array(list(SPECIALS) + [
    1e-30, -1e-30, 1e-38, -1e-38, 2.5e-39, -2.5e-39, 1e-44, -1e-44, 1e30, -1e30,
    87.0, -87.0, 88.5, -88.5, 88.73, -88.73, 89.0, -89.0, 103.0, -103.0, 104.0, -104.0,  # expf(+-x)
    -87.5, -88.0, -88.7, -88.72283, -88.72284, -89.5, -90.0,  # silu: expf(-x) overflows at 88.72284
    5.1548597, -5.1548597, 5.157851, -5.157851, 5.4187074, -5.4187074,  # tanh saturates
    3.9, -3.9, 3.95, -3.95, 4.0, -4.0, 5.5, -5.5, 5.5425941, -5.5425941, 6.0, -6.0,  # erf saturates
    -10.0, -9.0, -8.0, -7.5, -7.0, -6.5, -5.0], dtype=F32)  # cancellation in 1 + tanh, 1 + erf
# torch's vector loop takes 16 floats per step; the last n % 16 go through its scalar code
ACT_TAIL = np.array([NEG_QNAN, -np.inf, -0.0, -9.0, -100.0], dtype=F32)


def act_input_sets():
    """[(set name, x)]: float32 inputs from NumPy only (the glibc child regenerates them)."""
    pad = 85 - len(ACT_SPECIALS) - len(ACT_TAIL)
    specials = np.concatenate([ACT_SPECIALS, normal(701, pad), ACT_TAIL])
    mags = np.logspace(-40, 38, 1031).astype(F32)  # denormals (from 1e-40) up to 1e38
    sets = [("specials", specials), ("sweep", np.linspace(-12, 12, 4099).astype(F32)),
            ("normal", normal(702, 4099, 3.0)), ("logspace", np.concatenate([mags, -mags]))]
    for _, x in sets:
        assert x.dtype == F32 and x.size % 8 != 0, x.size
    return sets


def act_cases():
    """[(case name, act, set name, x)] of the op=act cases, in manifest order."""
    return [(f"act_{act}_{sname}_n{x.size}", act, sname, x)
            for act in ("gelu", "gelu_tanh", "silu", "sigmoid") for sname, x in act_input_sets()]


def count_diff(a, b):
    return int(np.count_nonzero(bits(a) != bits(b)))


def diff_stats(a, b):
    """(float32 values whose bits differ, NaN == NaN; max |a - b| where both are finite)."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    n = int(np.count_nonzero((bits(a) != bits(b)) & ~(np.isnan(a) & np.isnan(b))))
    fin = np.isfinite(a) & np.isfinite(b)
    return n, float(np.max(np.abs(a[fin].astype(np.float64) - b[fin]))) if fin.any() else 0.0


def gelu_new_stats(x):
    """gelu_new vs F.gelu(approximate='tanh') on finite x, this process's dispatch, as text."""
    n, md = diff_stats(gelu_new(t(x)), ACTS["gelu_tanh"](t(x)))
    return f"{n}/{x.size} differ, max |diff| {md!r}"


def gelu_tanh_fma(x):
    """F.gelu(approximate='tanh') with x + 0.044715f * x_cube as one FMA (emulated: the float32 product
    is exact in float64), the rest torch ops; explains gelu_new vs F.gelu under dispatch=default."""
    x_cube = (x * x * x).astype(F32)
    s = (x.astype(np.float64) + np.float64(om.K_KAPPA) * x_cube.astype(np.float64)).astype(F32)
    inner = (om.K_BETA * s).astype(F32)
    return (F32(0.5) * x * (F32(1) + torch.tanh(t(inner)).numpy())).astype(F32)


def act_glibc(w):
    """In the ATEN_CPU_CAPABILITY=default child: each op=act case's expect (oneDNN off), asserted equal
    bit for bit to torch 1.13's scalar kernels (aten/src/ATen/native/cpu/Activation.cpp, GeluKernelImpl
    and silu_kernel: float32 steps, double constants rounded to float) on glibc's libm: own_math's act
    with GLIBC. Returns ({case name: expect file}, comment lines)."""
    gl = om.GLIBC()
    files, comments, checked, sig = {}, [], {}, []
    with torch.backends.mkldnn.flags(enabled=False), np.errstate(all="ignore"):
        for name, act, _, x in act_cases():
            y, z = ACTS[act](t(x)).numpy(), om.act(gl, act, x)
            nd = count_diff(y, z)
            # torch's sigmoid_kernel (UnaryOpsKernel.cpp) has two forms: the scalar lambda
            # 1 / (1 + std::exp(-a)), run on the last n % 16 elements, and the Vectorized one (generic
            # vec_base under ATEN_CPU_CAPABILITY=default: std::exp per element) 0 - a, exp, 1 + a,
            # reciprocal (1 / a), run on the rest. They differ only in the sign of a NaN result: -NaN
            # flips the sign bit, 0 - NaN keeps it, and glibc's expf returns a NaN argument as x + x.
            if act == "sigmoid":  # vector loop: 16 floats per step (2 x Vectorized<float> of 8)
                nvec = x.size - x.size % 16
                zv = (F32(1) / (F32(1) + gl.expf(F32(0) - x))).astype(F32)
                nv = count_diff(y[:nvec], zv[:nvec]) + count_diff(y[nvec:], z[nvec:])
                assert nv == 0, f"{name}: {nv} elements differ from the scalar / Vectorized formulas"
                dz = bits(y) != bits(z)
                assert not dz[nvec:].any() and np.isnan(x[dz]).all() and np.isnan(y[dz]).all(), name
                assert np.array_equal(bits(y[dz]), bits(z[dz]) ^ np.uint32(0x80000000)), name
                sig.append(f"{name} {nd}" + (f" (elements {np.flatnonzero(dz).tolist()})" if nd else ""))
            else:
                assert nd == 0, f"{name}: {nd} elements of torch's scalar {act} differ from the libm formula"
            checked[act] = checked.get(act, 0) + x.size
            files[name] = w.save(name, "expect", y)
        gn = [f"{sname}: {gelu_new_stats(x)}" for sname, x in act_input_sets() if sname in ("sweep", "normal")]
    comments.append("# act formulas: torch's scalar kernels (ATEN_CPU_CAPABILITY=default, oneDNN off) equal, "
                    "bit for bit in every element (" + ", ".join(f"{a} {n}" for a, n in checked.items()
                                                                 if a != "sigmoid")
                    + "), these float32 formulas on glibc's libm: gelu = x * 0.5f * (1.0f + erff(x * "
                    "(float)M_SQRT1_2)); gelu_tanh = 0.5f * x * (1.0f + tanhf((float)(M_SQRT2 * M_2_SQRTPI * "
                    "0.5) * (x + 0.044715f * (x * x * x)))); silu = x / (1.0f + expf(-x)) (left to right, "
                    "no FMA contraction). torch's sigmoid (" + str(checked["sigmoid"]) + " elements) equals "
                    "1.0f / (1.0f + expf(-x)) (its scalar lambda) in every element except a NaN x outside "
                    "the last n % 16 elements (its vector loop, 16 floats per step), where its Vectorized "
                    "form 1.0f / (1.0f + expf(0.0f - x)) gives the NaN with x's sign and the scalar form "
                    "with the opposite sign (asserted: these are the only differences, in the sign bit "
                    "only); elements that differ from 1.0f / (1.0f + expf(-x)): " + ", ".join(sig))
    comments.append("# gelu_new (GPT-2: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * "
                    "torch.pow(x, 3.0))))) vs F.gelu(x, approximate='tanh'), dispatch=glibc: " + "; ".join(gn))
    return files, comments


def ulp32(r):
    """The float32 ulp at |r| (float64 array): 2^(exponent - 23), at least 2^-149."""
    a = np.abs(r)
    _, e = np.frexp(a)  # a = m 2^e, 0.5 <= m < 1
    e = np.where(a == 0, -1000, e - 1)
    return np.ldexp(1.0, np.maximum(e, -126) - 23)


def err_vs_ref64(v, ref, x, bounded=False):
    """Where ref64 and v are finite: (max |v - ref64|, the same in float32 ulps of |ref64|, the x there,
    in units of max(2^-23 |x|, 2^-149) (bounded: 2^-24), elements whose class (finite/NaN/+-inf) differs)."""
    v = v.astype(np.float64)
    ok = np.isfinite(ref) & np.isfinite(v)
    cls = lambda a: np.where(np.isnan(a), 2, np.where(np.isinf(a), np.sign(a) * 3, 0))  # noqa: E731
    mism = int(np.count_nonzero(cls(v) != cls(ref)))
    if not ok.any():
        return 0.0, 0.0, 0.0, 0.0, mism
    err = np.abs(v[ok] - ref[ok])
    ulps = err / ulp32(ref[ok])
    unit = 2.0**-24 if bounded else np.maximum(np.abs(x[ok].astype(np.float64)) * 2.0**-23, 2.0**-149)
    return (float(err.max()), float(ulps.max()), float(x[ok][np.argmax(ulps)]), float((err / unit).max()), mism)


def case_act(w, expect_files, comments):
    comments.append("# act cases (dispatch=glibc: expect from ATEN_CPU_CAPABILITY=default with oneDNN off; "
                    "torch_vec: default dispatch; ref64: torch float64 from the same float32 x): "
                    "torch_vec bits differing from expect; max |v - ref64| over elements where both are "
                    "finite, in float32 ulps of |ref64| (at x; 2^23..2^24 ulps where float32 gives +-0 or "
                    "keeps no correct bit: 1 + erf and 1 + tanh cancel for x << 0, silu's and sigmoid's "
                    "expf(-x) overflows; less where ref64 is a float32 denormal), and in units u = "
                    "max(2^-23|x|, 2^-149) (sigmoid, whose values lie in [0, 1]: u = 2^-24); the class "
                    "(finite/NaN/+-inf) of both is asserted equal to ref64's")
    for name, act, sname, x in act_cases():
        vec, ref64 = ACTS[act](t(x)).numpy(), ACTS[act](t(x).double()).numpy()
        with torch.backends.mkldnn.flags(enabled=False):
            vec_nodnn = ACTS[act](t(x)).numpy()
        w.case(name, "act", act=act, n=x.size, x=x, expect=expect_files[name], torch_vec=vec, ref64=ref64,
               dispatch="glibc")
        expect = np.load(os.path.join(w.out, expect_files[name]))
        assert expect.dtype == F32 and expect.shape == x.shape
        parts = [f"torch_vec {count_diff(vec, expect)}/{x.size} differ from expect"]
        # sanity only (the numbers themselves are what the C tests use): NaN and +-inf exactly where
        # ref64 has them, and within |x| of it (|act(x)| <= |x|; sigmoid: within 1/2)
        for label, v in (("torch_vec", vec), ("expect", expect)):
            e, u, ux, rx, mism = err_vs_ref64(v, ref64, x, bounded=act == "sigmoid")
            assert mism == 0 and math.isfinite(e) and rx <= 2**23, (name, label, e, rx, mism)
            parts.append(f"{label}-ref64 max {e!r} ({u:.6g} ulps at x={ux!r}; {rx:.6g} u)")
        nn_d = count_diff(vec, vec_nodnn)
        if nn_d:  # F.gelu's erf form runs oneDNN's gelu_erf under dispatch=default
            parts.append(f"default dispatch with oneDNN off: {nn_d} differ from torch_vec, "
                         f"{count_diff(vec_nodnn, expect)} from expect")
        comments.append(f"# act {name}: " + "; ".join(parts))
    gn = [f"{sname}: {gelu_new_stats(x)} (F.gelu vs the same with an FMA for x + 0.044715f * x_cube, emulated: "
          f"{count_diff(gelu_tanh_fma(x), ACTS['gelu_tanh'](t(x)).numpy())} differ)"
          for sname, x in act_input_sets() if sname in ("sweep", "normal")]
    comments.append("# gelu_new vs F.gelu(x, approximate='tanh'), dispatch=default: " + "; ".join(gn))


# (rows, d, h) of op=ffn_block_act and op=ffn_gated; BLOCK_SHAPES[WITH_SPECIALS]'s x has specials
BLOCK_SHAPES, WITH_SPECIALS = [(1, 5, 7), (7, 33, 67), (33, 100, 257), (5, 8, 16)], 3


def block_x(seed, specials, rows, d):
    """normal(seed); with specials a NaN, an inf, a -0.0 row and a row times 1e15."""
    x = normal(seed, (rows, d))
    if specials:
        x[1, 3], x[2, 6], x[3, :] = np.nan, np.inf, -0.0
        x[4, :] *= F32(1e15)
    return x


def case_ffn_act(w, comments):
    """op=ffn_block_act. The relu/gelu/silu blocks of one shape share their seeds (torch 700 + i,
    numpy 1700 + i), so their x and weights are the same files; the GPT-2 blocks use torch 750 + i."""
    for i, (rows, d, h) in enumerate(BLOCK_SHAPES):
        specials = i == WITH_SPECIALS
        tag = ("specials_" if specials else "") + f"r{rows}_d{d}_h{h}"
        x = block_x(1700 + i, specials, rows, d)
        for act in ("relu",) * ((rows, d, h) == (7, 33, 67)) + ("gelu", "gelu_tanh", "silu"):
            if act == "gelu_tanh":
                name, m = f"ffn_gelu_tanh_gpt2_{tag}", GPT2MLP(750 + i, d, h)
                y, hidden = m(t(x)), m.hidden(t(x))
                assert bits_equal(torch.addmm(m.c_proj_b, hidden, m.c_proj_w), y)
                keys = dict(w1=m.c_fc_w.t(), b1=m.c_fc_b, w2=m.c_proj_w.t(), b2=m.c_proj_b, hidden_ref=hidden,
                            expect=y, w1_conv1d=m.c_fc_w, w2_conv1d=m.c_proj_w)
                ref64 = m(t(x).double(), torch.float64)
                comments.append(f"# {name}: hidden with gelu_new instead of F.gelu(approximate='tanh'): "
                                f"{count_diff(m.hidden(t(x), act=gelu_new), hidden)}/{hidden.numel()} differ")
            else:
                name, (m, fc1, fc2) = f"ffn_{act}_{tag}", seeded(700 + i, act_block, act, d, h)
                y, hidden = m(t(x)), ACTS[act](fc1(t(x)))
                assert bits_equal(fc2(hidden), y)
                keys, ref64 = dict(**weight_keys((fc1, fc2), "12"), hidden_ref=hidden, expect=y), ref64_of(m, x)
            if not specials:  # ref64 would be NaN/inf in the special rows; as nan_ffn_specials, none
                keys["ref64"] = ref64
            w.case(name, "ffn_block_act", act=act, rows=rows, d_model=d, hidden=h, x=x, **keys)


def max_abs_err(v, ref):
    return float(np.max(np.abs(np.asarray(v, dtype=np.float64) - np.asarray(ref))))


GATED = ["gate_proj", "up_proj", "down_proj"]


def weight_keys(layers, names, bias=True):
    """{w<name>: weight, b<name>: bias (or none: no biases)} of nn.Linear layers."""
    return {f"{k}{n}": lin.weight if k == "w" else lin.bias if bias else "none"
            for lin, n in zip(layers, names) for k in ("w", "b")}


def gated_weights(m, bias):
    """{w_gate, b_gate, w_up, b_up, w_down, b_down} of a GatedMLP (b_*: none without biases)."""
    return weight_keys(layers_of(m, GATED), ("_gate", "_up", "_down"), bias)


def gpt_oss_weights(m, conv=lambda p: p):
    """A GptOssExpertMLP's weights as the checkpoint stores them (conv: the matrices' 16-bit form)."""
    return dict(w_gate_up=conv(m.gate_up_proj), b_gate_up=m.gate_up_proj_bias, w_down_in_out=conv(m.down_proj),
                b_down=m.down_proj_bias)


def run_hidden(m, hidden, x):
    """m(x) and hidden(x), without autograd."""
    with torch.no_grad():
        return m(t(x)), hidden(t(x))


def ref_err(y, ref64):
    return f"max |expect - ref64| {max_abs_err(y, ref64)!r} (max |ref64| {float(ref64.abs().max())!r})"


def case_ffn_gated(w, comments):
    """op=ffn_gated; the GEGLU and biased SwiGLU blocks reuse the seeds of (7, 33, 67), so they share its x
    (and weights, or w_gate, drawn first). layout=glu: nn.Linear(d, 2h), nn.GLU(dim=-1), nn.Linear(h, d)."""
    comments.append("# ffn_gated (torch default dispatch; max |expect - ref64| over the block's output, "
                    "max |ref64| for scale)")
    for act, bias, i in [("silu", 0, 0), ("silu", 0, 1), ("silu", 0, 2), ("gelu", 0, 1),
                         ("gelu_tanh", 0, 1), ("silu", 1, 1), ("silu", 0, WITH_SPECIALS)]:
        rows, d, h, specials = *BLOCK_SHAPES[i], i == WITH_SPECIALS
        name = f"ffn_gated_{act}{'_bias' * bias}{'_specials' * specials}_r{rows}_d{d}_h{h}"
        x = block_x(1800 + i, specials, rows, d)
        m = seeded(800 + i, GatedMLP, d, h, ACTS[act], bias=bias)
        y, hidden = run_hidden(m, m.hidden, x)
        assert bits_equal(m.down_proj(hidden), y)
        ref64, extra = ref64_of(m, x), {}
        if not specials:  # ref64 NaN/inf in the special rows
            extra["ref64"] = ref64
            comments.append(f"# ffn_gated {name}: {ref_err(y, ref64)}")
        w.case(name, "ffn_gated", act=act, layout="llama", rows=rows, d_model=d, hidden=h, x=x,
               **gated_weights(m, bias), hidden_ref=hidden, expect=y, **extra)

    # nn.GLU(dim=-1)(z) = z[:, :h] * sigmoid(z[:, h:]): in down(act(gate) * up) form gate is the second
    # half of the (2h, d) weight, up the first half.
    rows, d, h = 7, 33, 67
    name = f"ffn_gated_glu_sigmoid_r{rows}_d{d}_h{h}"
    x = block_x(1801, False, rows, d)
    torch.manual_seed(820)
    m = nn.Sequential(nn.Linear(d, 2 * h), nn.GLU(dim=-1), nn.Linear(h, d))
    fc, down = m[0], m[2]
    with torch.no_grad():
        y, z = m(t(x)), fc(t(x))
        hidden = m[1](z)
        assert bits_equal(down(hidden), y)
        up, gate = z[:, :h], z[:, h:]
        # torch computes a * sigmoid(b) = up * act(gate); the product commutes, the bits are the same
        assert bits_equal(hidden, up * torch.sigmoid(gate)), "nn.GLU != up * torch.sigmoid(gate)"
        assert bits_equal(hidden, torch.sigmoid(gate) * up), "nn.GLU != torch.sigmoid(gate) * up"
        ref64 = ref64_of(m, x)
        w_gate, w_up = fc.weight[h:].contiguous(), fc.weight[:h].contiguous()
        b_gate, b_up = fc.bias[h:].contiguous(), fc.bias[:h].contiguous()
        gate_s, up_s = F.linear(t(x), w_gate, b_gate), F.linear(t(x), w_up, b_up)
        hid_s = torch.sigmoid(gate_s) * up_s
    cs, cz = torch.cat([gate_s, up_s], 1), torch.cat([gate, up], 1)
    comments.append(f"# ffn_gated {name}: nn.GLU output == up * torch.sigmoid(gate) == torch.sigmoid(gate) * up "
                    f"bit for bit (asserted); nn.Linear(d, h) on each half of the weight vs the halves of "
                    f"nn.Linear(d, 2h): {count_diff(cs, cz)}/{2 * rows * h} differ (max |diff| "
                    f"{max_abs_err(cs, cz.double())!r}), hidden from them {count_diff(hid_s, hidden)}/{rows * h} "
                    f"differ from hidden_ref; {ref_err(y, ref64)}")
    w.case(name, "ffn_gated", act="sigmoid", layout="glu", rows=rows, d_model=d, hidden=h, x=x,
           w_gate=w_gate, b_gate=b_gate, w_up=w_up, b_up=b_up, w_down=down.weight, b_down=down.bias,
           hidden_ref=hidden, expect=y, ref64=ref64)


def case_ffn_gated_gpt_oss(w, comments):
    """op=ffn_gated act=gpt_oss layout=gpt_oss: GptOssExpertMLP from torch.manual_seed(840 + i), x from numpy
    1840 + i; the weights as the checkpoint stores them (gate_up interleaved, (in, out) layout)."""
    for i, (rows, d, e) in enumerate([(1, 5, 7), (7, 33, 67), (17, 45, 100)]):
        name = f"ffn_gated_gpt_oss_r{rows}_d{d}_h{e}"
        x, m = normal(1840 + i, (rows, d)), seeded(840 + i, GptOssExpertMLP, d, e)
        y, hidden = run_hidden(m, m.hidden, x)
        with torch.no_grad():
            assert bits_equal(hidden @ m.down_proj + m.down_proj_bias, y)
            gate, up = m.pre(t(x))
            g = gate.clamp(max=7.0)
            # the Python scalar 1.702 multiplies in float32, as float32(1.702)
            assert bits_equal(g * m.ALPHA, g * torch.tensor(m.ALPHA, dtype=torch.float32))
            ref64 = ref64_of(m, x)
        n_gate, n_up = int((gate > 7).sum()), int((up.abs() > 7).sum())
        comments.append(f"# ffn_gated {name}: GPT-OSS expert; gate > 7 in {n_gate}, |up| > 7 in {n_up} of "
                        f"{rows * e} hidden units; {ref_err(y, ref64)}")
        w.case(name, "ffn_gated", act="gpt_oss", layout="gpt_oss", rows=rows, d_model=d, hidden=e, x=x,
               **gpt_oss_weights(m), hidden_ref=hidden, expect=y, ref64=ref64)


# ==== 16-bit weights (ffn.h 2.0): a checkpoint's bfloat16 and float16 weights

DTYPES16 = {"bf16": torch.bfloat16, "f16": torch.float16}


def bits16(wt, dtype):
    """wt.to(dtype)'s 16-bit patterns (uint16) and their widening .float()."""
    h = wt.detach().to(dtype)
    return h.view(torch.int16).numpy().view(np.uint16), h.float()


def to16(m, dtype):
    """m with every parameter rounded to dtype and widened back: model.to(dtype) run in float32."""
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(p.to(dtype).float())
    return m


def case_weights16(w, comments):
    """op=weights16: float32 weights, specials among them (NaN, inf, values that round to subnormals,
    to inf, or halfway between two 16-bit values), through w.to(dtype) (bits, as int32) and .float()
    (wide); expect = F.linear(x, wide) in float32."""
    rows, d, h = 3, 21, 37
    w32 = normal(1900, (h, d))
    ties = [1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11]
    edges = [2.0 ** -130, 2.0 ** -133 * 3, -(2.0 ** -126), 2.0 ** -25, 2.0 ** -24 * 1.5, 3e-8,
             6e-5, 65504.0, 65519.0, 65520.0, -70000.0, FLT_MAX, 3.3e38, DENORM_MIN, -0.0,
             2.0 ** -24 * 1.25, -(2.0 ** -24 * 700.375), 2.0 ** -133 * 5.25]   # subnormals rounded down
    sp = np.array(ties + [-v for v in ties] + edges + [np.nan, -np.inf, np.inf], dtype=F32)
    w32.reshape(-1)[::max(1, w32.size // len(sp))][:len(sp)] = sp
    x = normal(1901, (rows, d))
    for name, dt in DTYPES16.items():
        bits, wide = bits16(t(w32), dt)
        w.case(f"weights16_{name}_r{rows}_d{d}_h{h}", "weights16", dtype=name, rows=rows, d_model=d,
               hidden=h, x=x, w=w32, bits=bits, wide=wide, expect=F.linear(t(x), wide))
    comments.append("# weights16: torch's w.to(torch.bfloat16) and w.half() of specials; the C side "
                    "packs the float32 weights to 16 bits and back and runs ffn_linear_w on the bits")


def case_blocks16(w, comments):
    """ffn_block_act and ffn_gated cases with a checkpoint's weights: the module's parameters rounded to
    bf16 or f16 and widened (to16); dtype=, and each weight stored as its 16-bit patterns (uint16): the
    C side runs them as 16-bit weights and as float32 ones widened, which must give the same bits, and
    checks both against torch as the float32 cases. No ref64: the float32 cases bound the error."""
    for dname, dt in DTYPES16.items():
        b16 = lambda p, dt=dt: bits16(p, dt)[0]  # noqa: E731
        # (rows 1: one-row tiles stream the 16-bit weights, 11 panels of them; rows > 7: widened per slab)
        for i, (rows, d, h) in enumerate([(7, 33, 67), (9, 20, 40), (1, 12, 176)]):
            tag, x = f"{dname}_r{rows}_d{d}_h{h}", block_x(1950 + i, False, rows, d)
            keys = dict(dtype=dname, rows=rows, d_model=d, hidden=h, x=x)
            for act in ("relu", "gelu"):
                m, fc1, fc2 = seeded(950 + i, act_block, act, d, h)
                y, hidden = run_hidden(to16(m, dt), lambda v: ACTS[act](fc1(v)), x)
                w.case(f"ffn_{act}_{tag}", "ffn_block_act", act=act, **keys, w1=b16(fc1.weight), b1=fc1.bias,
                       w2=b16(fc2.weight), b2=fc2.bias, hidden_ref=hidden, expect=y)
            m = to16(seeded(960 + i, GatedMLP, d, h, ACTS["silu"]), dt)
            y, hidden = run_hidden(m, m.hidden, x)
            w16 = {f"w_{n}": b16(getattr(m, f"{n}_proj").weight) for n in ("gate", "up", "down")}
            w.case(f"ffn_gated_silu_{tag}", "ffn_gated", act="silu", layout="llama", **keys,
                   **{**gated_weights(m, 0), **w16}, hidden_ref=hidden, expect=y)
        rows, d, e = 7, 33, 67
        x, m = normal(1960, (rows, d)), to16(seeded(970, GptOssExpertMLP, d, e), dt)
        y, hidden = run_hidden(m, m.hidden, x)
        w.case(f"ffn_gated_gpt_oss_{dname}_r{rows}_d{d}_h{e}", "ffn_gated", act="gpt_oss", layout="gpt_oss",
               dtype=dname, rows=rows, d_model=d, hidden=e, x=x, **gpt_oss_weights(m, b16), hidden_ref=hidden, expect=y)


def case_linear_backward(w, comments):
    """op=linear_backward: autograd's x.grad, weight.grad and bias.grad, accumulated into the stored
    dw0 / db0 (zeros, or random); ref64_*: the same in float64."""
    comments.append("# linear_backward (torch default dispatch): dx = dy @ W, dw = dw0 + dy^T @ x, "
                    "db = db0 + dy.sum(0) as autograd computes them; max |expect - ref64| per gradient")
    shapes = [(1, 5, 7, False), (7, 33, 67, True), (33, 40, 45, False), (130, 20, 13, True), (600, 7, 5, True)]
    for i, (rows, k, out, acc) in enumerate(shapes):
        name = f"linear_backward_r{rows}_i{k}_o{out}" + "_acc" * acc
        lin = seeded(860 + i, nn.Linear, k, out)
        x, dy = normal(1860 + i, (rows, k)), normal(2860 + i, (rows, out))
        dw0, db0 = grad0(3860 + i, (out, k), acc), grad0(4860 + i, (out,), acc)
        lin.weight.grad, lin.bias.grad = t(dw0).clone(), t(db0).clone()
        dx = x_grad(lin, x, dy)
        dw, db = lin.weight.grad, lin.bias.grad
        with torch.no_grad():
            w64, x64, dy64 = lin.weight.double(), t(x).double(), t(dy).double()
            ref_dx, ref_dw, ref_db = dy64 @ w64, t(dw0).double() + dy64.T @ x64, t(db0).double() + dy64.sum(0)
        comments.append(f"# linear_backward {name}: max |expect - ref64| dx {max_abs_err(dx, ref_dx)!r}, "
                        f"dw {max_abs_err(dw, ref_dw)!r}, db {max_abs_err(db, ref_db)!r}")
        w.case(name, "linear_backward", rows=rows, in_features=k, out_features=out, x=x, weight=lin.weight, dy=dy,
               dw0=dw0, db0=db0, expect_dx=dx, expect_dw=dw, expect_db=db, ref64_dx=ref_dx, ref64_dw=ref_dw,
               ref64_db=ref_db)


def case_act_backward(w, comments):
    """op=act_backward: autograd's x.grad of act(x).backward(dy) over a sweep, normal values and specials."""
    x = np.concatenate([np.linspace(-12, 12, 601, dtype=F32), normal(5870, (400,), 3.0),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, DENORM_MIN, -DENORM_MIN, 1e30, -1e30,
                                  88.5, -88.5, 1e-20, -1e-20], dtype=F32)]).astype(F32)
    dy = normal(5871, x.shape)
    for act in ("relu", "gelu", "gelu_tanh", "silu", "sigmoid"):
        g, g64 = (x_grad(ACTS[act], x, dy, dtype) for dtype in (torch.float32, torch.float64))
        fin = torch.isfinite(g64) & torch.isfinite(g)
        comments.append(f"# act_backward {act}: max |x.grad - float64 grad| where both are finite "
                        f"{max_abs_err(g[fin], g64[fin])!r}")
        w.case(f"act_backward_{act}_n{x.size}", "act_backward", act=act, n=x.size, x=x, dy=dy,
               expect=g, ref64=g64)


def case_opt_step(w, comments):
    """op=opt_step: each step's inputs (param, state) and outputs, so that the C step starts from torch's
    state every time (no drift)."""
    configs = [("sgd_plain", "sgd", dict(lr=0.1)),
               ("sgd_momentum_wd", "sgd", dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
               ("sgd_nesterov", "sgd", dict(lr=0.02, momentum=0.9, weight_decay=1e-4, nesterov=True)),
               ("sgd_dampening", "sgd", dict(lr=0.03, momentum=0.8, dampening=0.1)),
               ("adamw_default", "adamw", dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)),
               ("adamw_gpt", "adamw", dict(lr=3e-4, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1))]
    n, steps = 257, 3
    state_keys = {"sgd": (("buf", "momentum_buffer"),), "adamw": (("m", "exp_avg"), ("v", "exp_avg_sq"))}
    for i, (name, kind, hp) in enumerate(configs):
        p = torch.nn.Parameter(t(normal(5880 + i, (n,))))
        opt = (torch.optim.SGD if kind == "sgd" else torch.optim.AdamW)([p], **hp)
        hps = {k: int(v) if isinstance(v, bool) else ",".join(map(repr, v)) if isinstance(v, tuple) else float(v)
               for k, v in hp.items()}

        def state(when, st=opt.state[p], kind=kind):  # zeros where torch has no state (yet)
            return {f"{a}_{when}": st[b].clone() if st.get(b) is not None else np.zeros(n, F32)
                    for a, b in state_keys[kind]}
        for s in range(steps):
            grad = t(normal(5890 + 10 * i + s, (n,), 2.0 if kind == "adamw" else 1.0))
            p.grad = grad.clone()
            s_in, p_in = state("in"), p.detach().clone()
            opt.step()
            w.case(f"opt_{name}_step{s + 1}_n{n}", "opt_step", kind=kind, n=n, step=s + 1, **hps,
                   param_in=p_in, grad=grad, **s_in, param_out=p, **state("out"))
    comments.append("# opt_step: torch.optim.SGD / AdamW (foreach=None: the single-tensor loop on CPU), each "
                    "step's inputs and outputs; hyperparameters as given to the optimizer")


# ==== Training the blocks: op=ffn_block_backward, op=ffn_gated_backward (autograd's gradients)

BLOCK_BWD_SHAPES = [(1, 13, 37, False), (7, 13, 37, True), (64, 16, 96, False)]  # rows, d, h, acc


def run_backward(m, layers, x, dy, grads0, dtype):
    """Autograd on a copy of m in dtype, each parameter's .grad starting from grads0 (None: no .grad):
    (x.grad, the .grads, `layers`' outputs in the forward, autograd's gradient of each of those)."""
    m = copy.deepcopy(m).to(dtype)
    params = list(m.parameters())  # each layer's weight and bias (if any), in order
    for p, g0 in zip(params, grads0):
        p.grad = None if g0 is None else t(g0).to(dtype).clone()
    saved, outs = [], []

    def keep(mod, inp, outp):
        saved.append(outp.detach().clone())
        outp.retain_grad()
        outs.append(outp)

    hooks = [lin.register_forward_hook(keep) for lin in layers_of(m, layers)[:-1]]
    dx = x_grad(m, x, dy, dtype)
    for hk in hooks:
        hk.remove()
    return dx.detach(), [p.grad.detach() for p in params], saved, [o.grad.detach() for o in outs]


def layers_of(m, names):
    return [getattr(m, n) if isinstance(n, str) else m[n] for n in names]


def grad_keys(prefix, names, grads, bias):
    """{prefix + 'dw<name>': ..., prefix + 'db<name>': ...} in the parameters' order; none for
    a None gradient or a bias the block lacks."""
    it = iter(grads)
    keys = {f"{prefix}{k}{n}": next(it) if k == "dw" or bias else None
            for n in names for k in ("dw", "db")}
    return {k: "none" if v is None else v for k, v in keys.items()}


def backward_keys(name, comments, m, layers, names, bias, x, dy, grads0, outs):
    """run_backward in float32 and float64 as case keys: dy, the outputs of layers[:-1] (keys outs),
    the .grads before (d*_0), expect_*, autograd's gradients of those outputs (grad_*: the inputs of
    the bias .grads, asserted; none without biases), ref64_*; and the float32 outputs."""
    dx, grads, saved, dpre = run_backward(m, layers, x, dy, grads0, torch.float32)
    dx64, grads64, _, _ = run_backward(m, layers, x, dy, grads0, torch.float64)
    for k, g in enumerate(dpre if bias else []):  # bias .grad = its .grad before + g's row sum
        with torch.no_grad():
            want = g.sum(0) if grads0[2 * k + 1] is None else t(grads0[2 * k + 1]) + g.sum(0)
        assert bits_equal(grads[2 * k + 1], want), f"{name}: bias .grad {k} != its output's grad"
    expect = {"expect_dx": dx, **grad_keys("expect_", names, grads, bias)}
    ref = {"ref64_dx": dx64, **grad_keys("ref64_", names, grads64, bias)}
    errs = [f"{k[len('expect_'):]} {max_abs_err(v, ref['ref64_' + k[len('expect_'):]])!r}"
            for k, v in expect.items() if not isinstance(v, str)]
    comments.append(f"# {name}: max |torch - ref64| " + ", ".join(errs))
    g0 = {k + "_0": v for k, v in grad_keys("", names, grads0, bias).items()}
    return saved, {"dy": dy, **dict(zip(outs, saved)), **g0, **expect,
                   **{f"grad_{o}": g if bias else "none" for o, g in zip(outs, dpre)}, **ref}


def case_ffn_backward(w, comments):
    """op=ffn_block_backward and op=ffn_gated_backward (keys: README.md). The cases of one shape
    (BLOCK_BWD_SHAPES[i]) and op share seeds, so their x, dy, .grad files and (without biases, or
    ffn_block) weights are the same."""
    for op, gated, cases in [
            ("ffn_block_backward", 0, [("relu", 0, 1), ("relu", 1, 1), ("gelu", 1, 1), ("gelu_tanh", 1, 1),
                                       ("silu", 1, 1), ("relu", 2, 1)]),
            ("ffn_gated_backward", 1, [("silu", 0, 0), ("silu", 1, 0), ("gelu_tanh", 1, 0), ("silu", 1, 1)])]:
        comments.append(f"# {op} (torch default dispatch): " + (
            "x.grad and gate/up/down weight.grad (bias.grad) after down(act(gate(x)) * up(x)).backward(dy), "
            "accumulated into *_0 where given" if gated else "x.grad, fc1/fc2 weight.grad and bias.grad after "
            "fc2(act(fc1(x))).backward(dy), accumulated into dw*_0 / db*_0 where given"))
        for act, i, bias in cases:
            rows, d, h, acc = BLOCK_BWD_SHAPES[i]
            name = (f"ffn_{'gated_' * gated}bwd_{act}{'_bias' * (gated and bias)}_r{rows}_d{d}_h{h}"
                    + "_acc" * acc)
            seed = 870 + 10 * gated + i
            if gated:
                m, names, outs = seeded(seed, GatedMLP, d, h, ACTS[act], bias=bias), GATED, ["gate_h", "up_h"]
            else:
                m, outs = seeded(seed, act_block, act, d, h)[0], ["h"]
                names = ["fc1", "fc2"] if act == "relu" else [0, 2]  # FeedForwardNN's, or nn.Sequential's
            x, dy = normal(1000 + seed, (rows, d)), normal(2000 + seed, (rows, d))
            grads0 = [normal((3900 if gated else 3870) + 10 * i + k, tuple(p.shape), 0.5) if acc else None
                      for k, p in enumerate(m.parameters())]
            suffixes = ["_gate", "_up", "_down"] if gated else ["1", "2"]
            saved, keys = backward_keys(name, comments, m, names, suffixes, bias, x, dy, grads0, outs)
            layers = layers_of(m, names)
            with torch.no_grad():
                assert all(bits_equal(sv, lin(t(x))) for sv, lin in zip(saved, layers)), f"{name}: saved outputs"
            w.case(name, op, act=act, **({"layout": "llama"} if gated else {}), rows=rows, d_model=d, hidden=h,
                   x=x, **weight_keys(layers, suffixes, bias), **keys)


def share_identical(out, lines, start):
    """For lines[start:]: a file byte-identical to one named earlier in these lines is removed and the
    case names the earlier file (same inputs and weights across the activations)."""
    seen = {}
    for idx in range(start, len(lines)):
        parts = lines[idx].split()
        for i, kv in enumerate(parts[2:], 2):
            key, val = kv.split("=", 1)
            if not val.endswith(".npy"):
                continue
            with open(os.path.join(out, val), "rb") as f:
                first = seen.setdefault(f.read(), val)
            if first != val:
                os.remove(os.path.join(out, val))
                parts[i] = f"{key}={first}"
        lines[idx] = " ".join(parts)


# ==== RoPE (op=rope) and ALiBi (op=alibi): made in the ATEN_CPU_CAPABILITY=default child (dispatch=glibc)
# Plain-torch references written from the published formulas: HF transformers' default rotary
# embedding (inv_freq, cos/sin from position_ids through a (half, 1) @ (1, seq) matmul, cat((freqs,
# freqs)), rotate_half, apply_rotary_pos_emb with partial rotary as GPT-NeoX / Phi slice it) and Meta
# Llama's apply_rotary_emb written in real arithmetic (pairs (x[2i], x[2i+1])).

def rope_inv_freq(rot, theta, dtype=torch.float32):
    return 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=torch.int64).to(dtype) / rot))


def rope_cos_sin(inv_freq, position_ids, factor=1.0, dtype=torch.float32):
    """HF's rotary forward: cos, sin (batch, seq, rot) with the halves repeated."""
    b = position_ids.shape[0]
    inv_exp = inv_freq[None, :, None].to(dtype).expand(b, -1, 1)
    pos_exp = position_ids[:, None, :].to(dtype)
    freqs = (inv_exp @ pos_exp).transpose(1, 2)
    assert bits_equal(freqs, position_ids.to(dtype)[:, :, None] * inv_freq[None, None, :])
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * factor, emb.sin() * factor


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_apply_half(x, cos, sin, rot, bhsd):
    cos, sin = cos.unsqueeze(1 if bhsd else 2), sin.unsqueeze(1 if bhsd else 2)
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    return torch.cat(((x_rot * cos) + (rotate_half(x_rot) * sin), x_pass), dim=-1)


def rope_apply_interleaved(x, cos, sin, rot, bhsd):
    """Meta's xq_ * freqs_cis with xq_ = view_as_complex(x.reshape(..., -1, 2)), in real arithmetic."""
    half = rot // 2
    c, s = (a[..., :half].unsqueeze(1 if bhsd else 2) for a in (cos, sin))
    xr = x[..., :rot].reshape(*x.shape[:-1], half, 2)
    a, b = xr[..., 0], xr[..., 1]
    out = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
    return torch.cat((out, x[..., rot:]), dim=-1)


def rope_apply_complex(x, position_ids, inv, rot, bhsd):
    """Meta's own complex form (torch.polar, complex multiply), for the comparison comments only."""
    freqs = position_ids.float()[:, :, None] * inv[None, None, :]
    fc = torch.polar(torch.ones_like(freqs), freqs).unsqueeze(1 if bhsd else 2)
    xc = torch.view_as_complex(x[..., :rot].reshape(*x.shape[:-1], rot // 2, 2).contiguous())
    return torch.cat((torch.view_as_real(xc * fc).flatten(-2), x[..., rot:]), dim=-1)


class Rope(collections.namedtuple("Rope", "name b s h d rot layout pairing pos theta factor specials",
                                  defaults=(10000.0, 1.0, False))):
    """pos: an int start (positions start + arange(seq)), or the (batch, seq) positions."""
    bhsd = property(lambda c: c.layout == "bhsd")
    shape = property(lambda c: (c.b, c.h, c.s, c.d) if c.bhsd else (c.b, c.s, c.h, c.d))

    def position_ids(self):
        """(batch, seq) int64."""
        if isinstance(self.pos, int):
            return torch.arange(self.pos, self.pos + self.s, dtype=torch.int64)[None, :].expand(self.b, self.s)
        return t(np.array(self.pos, dtype=np.int64))

    def keys(self):
        """The case keys of op=rope and op=rope_backward: start and pos (explicit positions or none)."""
        start, pos = (self.pos, "none") if isinstance(self.pos, int) else (0, np.array(self.pos, dtype=np.int64))
        return dict(batch=self.b, seq=self.s, heads=self.h, head_dim=self.d, rot=self.rot, theta=self.theta,
                    layout=self.layout, pairing=self.pairing, start=start, factor=self.factor, pos=pos)

    def rotate(self, x, cos, sin):
        apply = rope_apply_half if self.pairing == "half" else rope_apply_interleaved
        return apply(x, cos, sin, self.rot, self.bhsd)

    def complex_form(self, x, inv):
        return rope_apply_complex(x, self.position_ids(), inv, self.rot, self.bhsd)


TWO16, TWO24 = 2 ** 16, 2 ** 24
ROPE_CASES = [
    Rope("rope_half_bshd_b2_s7_h3_d10", 2, 7, 3, 10, 10, "bshd", "half", 0),
    Rope("rope_interleaved_bshd_b2_s7_h3_d10", 2, 7, 3, 10, 10, "bshd", "interleaved", 0),
    Rope("rope_half_bhsd_partial_b2_s5_h3_d24_r16_start3", 2, 5, 3, 24, 16, "bhsd", "half", 3),
    Rope("rope_interleaved_bhsd_partial_b1_s5_h5_d24_r12", 1, 5, 5, 24, 12, "bhsd", "interleaved", 0),
    Rope("rope_half_bshd_llama3_theta_b1_s3_h5_d128", 1, 3, 5, 128, 128, "bshd", "half", 17, theta=500000.0),
    Rope("rope_interleaved_bshd_d128_b1_s3_h3", 1, 3, 3, 128, 128, "bshd", "interleaved", 1000),
    Rope("rope_half_bshd_left_padding_b2_s6_h3_d20", 2, 6, 3, 20, 20, "bshd", "half",
         [[0, 1, 2, 3, 4, 5], [1, 1, 0, 1, 2, 3]]),
    Rope("rope_interleaved_bhsd_packed_b1_s9_h3_d18_r14", 1, 9, 3, 18, 14, "bhsd", "interleaved",
         [[0, 1, 2, 3, 0, 1, 0, 1, 2]], theta=1000000.0),
    Rope("rope_half_odd_head_dim_b1_s4_h7_d9_r6", 1, 4, 7, 9, 6, "bshd", "half", 5),
    Rope("edge_rope_rot2_b1_s1_h1_d2", 1, 1, 1, 2, 2, "bshd", "interleaved", 7),
    Rope("rope_half_past_2e16_b1_s13_h3_d64", 1, 13, 3, 64, 64, "bhsd", "half", TWO16 - 6),
    Rope("rope_interleaved_past_2e24_b1_s11_h3_d32", 1, 11, 3, 32, 32, "bshd", "interleaved",
         [[TWO24 + k for k in range(-3, 8)]]),
    Rope("rope_half_past_2e24_b2_s4_h3_d16_r8", 2, 4, 3, 16, 8, "bhsd", "half",
         [[TWO24 + k for k in (1, 3, 5, 7)], [TWO24 + k for k in (9, 11, 13, 15)]]),
    Rope("rope_half_attention_factor_b1_s5_h3_d16", 1, 5, 3, 16, 16, "bshd", "half", 2, factor=0.9),
    Rope("nan_rope_specials_half_b2_s4_h3_d16", 2, 4, 3, 16, 16, "bshd", "half", 0, specials=True),
    Rope("nan_rope_specials_interleaved_b2_s4_h3_d16", 2, 4, 3, 16, 16, "bhsd", "interleaved", 0, specials=True),
]


def rope_setup(c):
    """inv_freq, cos, sin of a Rope case in float32 by this process's dispatch."""
    inv = rope_inv_freq(c.rot, c.theta)
    return (inv, *rope_cos_sin(inv, c.position_ids(), c.factor))


def rope_rows(c, a):
    """cos or sin (batch, seq, rot) as the (batch * seq, rot / 2) rows the goldens store."""
    return a[..., :c.rot // 2].reshape(c.b * c.s, c.rot // 2).contiguous()


def write_rope(w, comments):
    for i, c in enumerate(ROPE_CASES):
        half = c.rot // 2
        x = normal(900 + i, c.shape, 2.0)
        if c.specials:
            x = sprinkle(x, 1900 + i)
        inv, cos, sin = rope_setup(c)
        assert bits_equal(cos[..., :half], cos[..., half:]) and bits_equal(sin[..., :half], sin[..., half:])
        cos64, sin64 = rope_cos_sin(rope_inv_freq(c.rot, c.theta, torch.float64), c.position_ids(), 1.0, torch.float64)
        y = c.rotate(t(x), cos, sin)
        if not c.specials and c.factor == 1.0 and c.pairing == "interleaved":
            n = count_diff(c.complex_form(t(x), inv), y)
            comments.append(f"# rope {c.name}: Meta's complex form (torch.polar, complex multiply) vs its real "
                            f"form, dispatch=glibc: {n}/{y.numel()} values differ")
        w.case(c.name, "rope", **c.keys(), x=x, inv_freq=inv, cos=rope_rows(c, cos), sin=rope_rows(c, sin),
               cos_exact=rope_rows(c, cos64).float(), sin_exact=rope_rows(c, sin64).float(),
               expect=y.contiguous(), dispatch="glibc")


def alibi_slopes_paper(n):
    """The ALiBi paper's reference code (get_slopes), Python doubles."""
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + alibi_slopes_paper(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


def alibi_slopes_bloom(num_heads):
    """BLOOM's build_alibi_tensor, the slopes part (float32 torch.pow)."""
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes


def alibi_bias(slopes, q_len, k_len, offset, causal):
    d = torch.arange(k_len)[None, :] - (torch.arange(q_len)[:, None] + offset)
    bias = slopes[:, None, None] * -d.abs()
    return bias.masked_fill(d > 0, float("-inf")) if causal else bias


ALIBI_CASES = [  # (heads, q_len, k_len, offset, causal)
    (8, 5, 5, 0, 1), (12, 3, 7, 4, 1), (5, 4, 9, 2, 0), (1, 3, 3, 0, 1), (16, 1, 13, 12, 1), (112, 2, 3, 1, 0),
    (30, 6, 4, 0, 0),
]


def write_alibi(w, comments):
    diff = []
    for heads, q, k, off, causal in ALIBI_CASES:
        paper, bloom = torch.tensor(alibi_slopes_paper(heads), dtype=torch.float32), alibi_slopes_bloom(heads)
        diff.append(f"{heads} heads {count_diff(paper, bloom)}")
        for mode, slopes in (("paper", paper), ("bloom", bloom)):
            w.case(f"alibi_{mode}_h{heads}_q{q}_k{k}_off{off}_{'causal' if causal else 'sym'}", "alibi",
                   mode=mode, heads=heads, q_len=q, k_len=k, offset=off, causal=causal, slopes=slopes,
                   expect=alibi_bias(slopes, q, k, off, causal), dispatch="glibc")
    comments.append("# alibi slopes, paper (float64 get_slopes rounded to float32) vs BLOOM (float32 torch.pow), "
                    "values differing: " + ", ".join(diff))


# ==== RoPE scaling (op=rope_scaling): HF's long-context rope types, made in the glibc child
# Plain-torch implementations written from the published formulas of HF transformers'
# modeling_rope_utils.py (rope_type linear, dynamic, yarn, llama3, longrope): the scalars in Python
# doubles, the frequencies in float32 tensors, as HF computes them. Each case is then run through HF's
# rotary forward (cos/sin times attention_scaling, rotate_half) at positions up to seq_len - 1, past
# the original context where the type has one.

def scaled_inv_freq_ref(rot, theta, cfg, seq_len):
    """(inv_freq float32 (rot/2), attention_factor Python float, a note) of one rope_scaling config."""
    kind = cfg["type"]
    shape = torch.arange(0, rot, 2, dtype=torch.int64).float() / rot    # the exponents 2i/rot
    default = 1.0 / (theta ** shape)
    if kind == "default":
        return default, 1.0, ""
    if kind == "linear":                     # position interpolation: every frequency / factor
        return default / cfg["factor"], 1.0, ""
    if kind == "dynamic":                    # NTK: a larger base once seq_len passes max_pos
        factor, max_pos = cfg["factor"], cfg["max_pos"]
        if cfg.get("dynamic_as_module"):
            # HF's dynamic_rope_update: the default frequencies up to max_pos; past it the function
            # with seq_len = torch.max(position_ids) + 1, a 0-dim int64 tensor
            if seq_len <= max_pos:
                return default, 1.0, "the module's original (default) frequencies"
            seq = torch.maximum(torch.tensor(seq_len), torch.tensor(max_pos, dtype=torch.int64))
        else:
            seq = max(seq_len, max_pos)
        base = theta * ((factor * seq / max_pos) - (factor - 1)) ** (rot / (rot - 2))
        inv = 1.0 / (base ** shape)
        note = f"base {float(base)!r}, {'equal to' if bits_equal(inv, default) else 'not'} the default"
        if isinstance(base, torch.Tensor):
            b64 = theta * ((factor * seq_len / max_pos) - (factor - 1)) ** (rot / (rot - 2))
            n = count_diff(inv, 1.0 / (b64 ** shape))
            note += f"; the Python-int path's base {b64!r}: {n} of {rot // 2} frequencies differ"
        return inv, 1.0, note
    if kind == "yarn":
        factor, orig, ms, msa = cfg["factor"], cfg["orig"], cfg.get("mscale"), cfg.get("mscale_all_dim")

        def mscale_of(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
        att = cfg.get("attention_factor")
        if att is None:
            att = float(mscale_of(factor, ms) / mscale_of(factor, msa)) if ms and msa else mscale_of(factor)

        def dim_of(rotations):               # the dim whose wavelength fits `rotations` times in orig
            return (rot * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(theta))
        low, high = dim_of(cfg.get("beta_fast", 32)), dim_of(cfg.get("beta_slow", 1))
        if cfg.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, rot - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(rot // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        interp = 1.0 / (factor * theta ** shape)
        keep = 1 - ramp                      # 1: the original frequency (default), 0: interpolated
        return (interp * (1 - keep) + default * keep, att,
                f"ramp low {low!r} high {high!r}, {int((ramp > 0).sum() - (ramp == 1).sum())} frequencies blended")
    if kind == "llama3":
        factor, lo, hi, orig = cfg["factor"], cfg["low"], cfg["high"], cfg["orig"]
        long_wl, short_wl = orig / lo, orig / hi
        wl = 2 * math.pi / default
        scaled = torch.where(wl > long_wl, default / factor, default)
        smooth = (orig / wl - lo) / (hi - lo)
        blended = (1 - smooth) * scaled / factor + smooth * scaled
        middle = ~(wl < short_wl) * ~(wl > long_wl)
        return (torch.where(middle, blended, scaled), 1.0,
                f"{int(middle.sum())} frequencies in the blended band, {int((wl > long_wl).sum())} divided by factor")
    if kind == "longrope":
        orig = cfg["orig"]
        att = cfg.get("attention_factor")
        if att is None:
            s = cfg["max_pos"] / orig
            att = 1.0 if s <= 1.0 else math.sqrt(1 + math.log(s) / math.log(orig))
        ext = torch.tensor([float(v) for v in cfg["long" if seq_len > orig else "short"]], dtype=torch.float32)
        return 1.0 / (ext * theta ** shape), att, "long factors" if seq_len > orig else "short factors"
    raise ValueError(kind)


ROPE_SCALING_CASES = [  # (name, head_dim, rot, theta, seq_len, "type key=value ...": cfg)
    ("linear_f4_d128", 128, 128, 10000.0, 16384, "linear factor=4.0"),
    ("linear_f2p5_partial_d80_r32", 80, 32, 10000.0, 5000, "linear factor=2.5"),
    ("dynamic_f2_below_max_d64", 64, 64, 10000.0, 1000, "dynamic factor=2.0 max_pos=2048"),
    ("dynamic_f2_above_max_d64", 64, 64, 10000.0, 5000, "dynamic factor=2.0 max_pos=2048"),
    # as HF's rotary module runs it (seq_len a tensor): below max_pos the default; above, a float32 bracket
    ("dynamic_module_f2_above_max_d64", 64, 64, 10000.0, 5000,
     "dynamic factor=2.0 max_pos=2048 dynamic_as_module=True"),
    ("dynamic_module_f2_below_max_d64", 64, 64, 10000.0, 1000,
     "dynamic factor=2.0 max_pos=2048 dynamic_as_module=True"),
    ("dynamic_module_f3_rot4_d8", 8, 4, 10000.0, 70001, "dynamic factor=3.0 max_pos=4096 dynamic_as_module=True"),
    # (a length where torch's double pow of the 0-dim bracket and a float powf give different bases)
    ("dynamic_module_f2p7_partial_d128_r96", 128, 96, 500000.0, 10433,
     "dynamic factor=2.7 max_pos=8192 dynamic_as_module=True"),
    ("dynamic_f3_partial_d64_r24", 64, 24, 500000.0, 9001, "dynamic factor=3.0 max_pos=4096"),
    ("yarn_qwen25_f4_d128", 128, 128, 1000000.0, 131072, "yarn factor=4.0 orig=32768"),
    ("yarn_qwen25_f4_d128_notruncate", 128, 128, 1000000.0, 131072, "yarn factor=4.0 orig=32768 truncate=False"),
    ("yarn_gptoss_f32_d64_notruncate", 64, 64, 150000.0, 131072,
     "yarn factor=32.0 orig=4096 beta_fast=32.0 beta_slow=1.0 truncate=False"),
    ("yarn_deepseekv3_f40_r64_mscale", 192, 64, 10000.0, 163840,
     "yarn factor=40.0 orig=4096 beta_fast=32 beta_slow=1 mscale=1.0 mscale_all_dim=1.0"),
    ("yarn_f8_d64_mscale_ratio", 64, 64, 10000.0, 20000, "yarn factor=8.0 orig=2048 mscale=1.0 mscale_all_dim=0.8"),
    ("yarn_f3_partial_d96_r48_given_af", 96, 48, 10000.0, 7000,
     "yarn factor=3.0 orig=2048 beta_fast=24.0 beta_slow=2.0 attention_factor=1.25"),
    # beta_fast == beta_slow without truncate: low == high, HF's high += 0.001
    ("yarn_equal_betas_notruncate_d64", 64, 64, 10000.0, 9000,
     "yarn factor=4.0 orig=2048 beta_fast=8.0 beta_slow=8.0 truncate=False"),
    # beta_fast 4 < beta_slow 5 (HF warns, computes): floor(15.29) == ceil(14.51) == 15, low == high exactly;
    # without the 0.001 frequency 15 would be 0 / 0
    ("yarn_reversed_betas_low_eq_high_d64", 64, 64, 10000.0, 9000,
     "yarn factor=4.0 orig=2048 beta_fast=4.0 beta_slow=5.0"),
    # high clamped to dim - 1 (a large original context for a small base)
    ("yarn_clamped_d16_theta100", 16, 16, 100.0, 2000000, "yarn factor=2.0 orig=1000000"),
    ("llama3_llama31_f8_d128", 128, 128, 500000.0, 131072, "llama3 factor=8.0 low=1.0 high=4.0 orig=8192"),
    ("llama3_llama32_f32_d64", 64, 64, 500000.0, 131072, "llama3 factor=32.0 low=1.0 high=4.0 orig=8192"),
    ("llama3_f3_partial_d48_r40_orig100", 48, 40, 10000.0, 400, "llama3 factor=3.0 low=1.5 high=3.5 orig=100"),
    # wide blended bands: there torch's `2 * math.pi / inv_freq` (reciprocal times 2 pi) and a true
    # division round differently for a few frequencies
    ("llama3_wide_band_d256", 256, 256, 10000.0, 70000, "llama3 factor=8.0 low=1.0 high=64.0 orig=8192"),
    ("llama3_wide_band_partial_d192_r160", 192, 160, 10000.0, 20000, "llama3 factor=5.0 low=0.5 high=40.0 orig=3000"),
    ("longrope_phi3_short_d96", 96, 96, 10000.0, 4096, "longrope orig=4096 max_pos=131072 lists=5"),
    ("longrope_phi3_long_d96", 96, 96, 10000.0, 4097, "longrope orig=4096 max_pos=131072 lists=5"),
    ("longrope_phi4mini_partial_d128_r96_long", 128, 96, 10000.0, 20000, "longrope orig=4096 max_pos=131072 lists=6"),
    ("longrope_given_af_short_d32", 32, 32, 10000.0, 100,
     "longrope orig=2048 max_pos=8192 attention_factor=1.1 lists=7"),
]


def rope_scaling_case(i):
    """(name, head_dim, rot, theta, seq_len, cfg with longrope's lists, extra files) of case i."""
    name, hd, rot, theta, seq_len, spec = ROPE_SCALING_CASES[i]
    typ, *kvs = spec.split()
    cfg, kv = {"type": typ, **{k: ast.literal_eval(v) for k, v in (a.split("=") for a in kvs)}}, {}
    if cfg["type"] == "longrope":  # Phi-3-like factor lists: short near 1, long rising to ~40
        half, r = rot // 2, rng(3000 + cfg.pop("lists"))
        cfg["short"] = (1.0 + 0.05 * r.random(half)).astype(F32)
        rise = (np.arange(half) / max(half - 1, 1)) ** 2
        cfg["long"] = (1.0 + 39.0 * rise + 0.25 * r.random(half)).astype(F32)
        kv = {"short_factor": cfg["short"], "long_factor": cfg["long"]}
    return name, hd, rot, theta, seq_len, cfg, kv


def rope_scaling_torch(i, x):
    """Case i by HF's code in this process's dispatch at positions seq_len-3..seq_len-1: ({inv_freq, cos,
    sin, expect} as the goldens store them, attention factor, a note)."""
    _, _, rot, theta, seq_len, cfg, _ = rope_scaling_case(i)
    inv, att, note = scaled_inv_freq_ref(rot, theta, cfg, seq_len)
    cos, sin = rope_cos_sin(inv, torch.arange(seq_len - 3, seq_len, dtype=torch.int64)[None, :], att)
    return {"inv_freq": inv, "cos": cos[0, :, :rot // 2], "sin": sin[0, :, :rot // 2],
            "expect": rope_apply_half(t(x), cos, sin, rot, False)}, att, note


def write_rope_scaling(w, comments):
    for i in range(len(ROPE_SCALING_CASES)):
        name, hd, rot, theta, seq_len, cfg, kv = rope_scaling_case(i)
        x = normal(4000 + i, (1, 3, 1, hd), 2.0)
        r, att, note = rope_scaling_torch(i, x)
        if note:
            comments.append(f"# rope_scaling_{name}: {note}")
        assert r["inv_freq"].dtype == torch.float32 and r["inv_freq"].shape == (rot // 2,)
        params = {("given_attention_factor" if k == "attention_factor" else k): int(v) if isinstance(v, bool) else v
                  for k, v in cfg.items() if k not in ("type", "short", "long")}
        w.case(f"rope_scaling_{name}", "rope_scaling", type=cfg["type"], head_dim=hd, rot=rot,
               theta=theta, seq_len=seq_len, **params, **kv, inv_freq=r["inv_freq"],
               attention_factor=np.array([att], dtype=np.float64), x=x, cos=r["cos"], sin=r["sin"],
               expect=r["expect"], dispatch="glibc")
    comments.append("# rope_scaling: HF rope types' inv_freq (float32) and attention_factor (the Python float, "
                    "stored as float64), then HF's rotary forward (cos/sin * attention_factor, rotate_half) at "
                    "positions seq_len-3..seq_len-1, batch 1, 1 head, BSHD")


# ==== Timestep embedding of diffusion models (op=timestep): made in the ATEN_CPU_CAPABILITY=default child
# diffusers' get_timestep_embedding and ldm's timestep_embedding, written from their published code.

def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1, scale=1,
                           max_period=10000):
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    if embedding_dim % 2 == 1:
        emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))
    return emb


def ldm_timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    args = timesteps[:, None].float() * freqs[None]
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
    return embedding


TIMESTEP_CASES = [  # (name, timesteps, dim, flip, shift, scale, max_period)
    ("timestep_diffusers_defaults_n5_d320", [0, 1, 250, 999, 500], 320, 0, 1, 1, 10000),
    ("timestep_sd_unet_n4_d320", [981, 1, 0, 500], 320, 1, 0, 1, 10000),
    ("timestep_float_t_n6_d33", [0.5, 999.75, 1e-3, 37.125, 1e4, 0.0], 33, 0, 1, 1, 10000),
    ("timestep_scale1000_shift0_n3_d64", [0.25, 0.5, 0.999], 64, 1, 0, 1000, 10000),
    ("timestep_max_period_n3_d18", [3, 700, 65536], 18, 0, 1.5, 1, 100),
    ("edge_timestep_d1_n2", [5, 7], 1, 0, 1, 1, 10000),
    ("edge_timestep_d2_shift1_nan_n2", [5, 7], 2, 0, 1, 1, 10000),
    ("timestep_large_t_n3_d16", [1e6, 16777217.0, 3e7], 16, 1, 0, 1, 10000),
]


def write_timestep(w, comments):
    for name, ts, dim, flip, shift, scale, max_period in TIMESTEP_CASES:
        t32 = torch.tensor(ts, dtype=torch.float32)
        y = get_timestep_embedding(t32, dim, bool(flip), shift, scale, max_period)
        if flip and shift == 0 and scale == 1:
            assert bits_equal(y, ldm_timestep_embedding(t32, dim, max_period)), name
        w.case(name, "timestep", n=len(ts), dim=dim, flip_sin_to_cos=flip, downscale_freq_shift=float(shift),
               scale=float(scale), max_period=float(max_period), t=t32, expect=y, dispatch="glibc")
    comments.append("# timestep: diffusers' get_timestep_embedding; the flip=1, shift=0, scale=1 cases are asserted "
                    "bit-identical to ldm's timestep_embedding")


# ==== pe.h training: the gradients of the adds, the embedding and RoPE (op=pe_add_batch_first_backward,
# op=pe_add_seq_first_backward, op=embed_backward; op=rope_backward in the glibc child)
# torch's sum over the broadcast batch dimension (autograd's sum_to: x.sum(dims, keepdim=True); ATen's
# SumKernel.cpp, cascade_sum), written out so that the script asserts torch computed exactly this.
# The reduction is (rows, n): rows = the batch, n = seq * d (batch-first: dout[b] flattened) or d
# (seq-first: one reduction per position). The first cascade_cols(n) columns are summed by
# multi_row_sum (the cascade), the rest by row_sum (four interleaved cascades), and a reduction over
# contiguous values (n == 1) of 8 rows or more by vectorized_inner_sum; 8-float vectors, the width of
# torch's AVX2 and default dispatch.

def torch_cascade(x):
    """multi_row_sum over the rows of x (rows, k), every column at once, in float32."""
    rows = x.shape[0]
    p = max(4, (rows - 1).bit_length() // 4)  # level_power = max(4, CeilLog2(rows) / 4)
    step, mask = 1 << p, (1 << p) - 1
    lev = [np.zeros(x.shape[1:], F32) for _ in range(4)]
    i = 0
    with np.errstate(all="ignore"):
        while i + step <= rows:
            for _ in range(step):
                lev[0] = lev[0] + x[i]
                i += 1
            for j in range(1, 4):
                lev[j] = lev[j] + lev[j - 1]
                lev[j - 1] = np.zeros_like(lev[j - 1])
                if i & (mask << (j * p)):
                    break
        while i < rows:
            lev[0] = lev[0] + x[i]
            i += 1
        for j in range(1, 4):
            lev[0] = lev[0] + lev[j]
    return lev[0].astype(F32)


def torch_row_sum(x):
    """row_sum over the rows of x (rows, k): four interleaved cascades, the tail into the first."""
    rows, q = x.shape[0], x.shape[0] // 4
    s = [torch_cascade(x[k:4 * q:4]) for k in range(4)]
    with np.errstate(all="ignore"):
        for i in range(4 * q, rows):
            s[0] = s[0] + x[i]
        for k in range(1, 4):
            s[0] = s[0] + s[k]
    return s[0].astype(F32)


def torch_inner_sum(v):
    """vectorized_inner_sum of the contiguous values v (8-float vectors)."""
    nv = v.size // 8
    lanes = torch_row_sum(v[:8 * nv].reshape(nv, 8))
    acc = F32(0)
    with np.errstate(all="ignore"):
        for a in list(v[8 * nv:]) + list(lanes):
            acc = F32(acc + a)
    return acc


def torch_batch_sum(g):
    """torch's sum over the rows (the batch) of g (rows, n), column by column in its order."""
    rows, n = g.shape
    if n == 1:
        return np.array([torch_inner_sum(g[:, 0]) if rows >= 8 else torch_row_sum(g)[0]], F32)
    nc = n // 32 * 32 if n >= 8 else n // 4 * 4
    return np.concatenate([torch_cascade(g[:, :nc]), torch_row_sum(g[:, nc:])]).astype(F32)


def same_or_both_nan(a, b, zero_sign=False):
    """Same bits or both NaN (zero_sign: or both zero, of either sign)."""
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return bool(np.all((bits(a) == bits(b)) | (np.isnan(a) & np.isnan(b)) | (zero_sign & (a == 0) & (b == 0))))


class LearnedPE(nn.Module):
    """000's and 001's modules with a learned table: the same forward expressions, pe a Parameter
    ((1, max_len, d) batch-first as 000's buffer, (max_len, 1, d) seq-first as 001's); any d."""
    def __init__(self, table, seq_first):
        super().__init__()
        self.seq_first = seq_first
        self.pe = nn.Parameter(t(table).unsqueeze(1 if seq_first else 0).clone())

    def forward(self, x):
        if self.seq_first:
            return x + self.pe[:x.size(0), :]  # 001
        return x + self.pe[:, :x.size(1)]      # 000


ADD_BACKWARD_CASES = [  # (name, seq_first, batch, seq, d, max_len, acc, specials)
    ("edge_add_bwd_batch_first_b1_s1_d1_maxlen3", 0, 1, 1, 1, 3, 1, 0),
    ("add_bwd_batch_first_b3_s5_d7_maxlen9_acc", 0, 3, 5, 7, 9, 1, 0),
    ("add_bwd_batch_first_b8_s4_d9_maxlen6_acc", 0, 8, 4, 9, 6, 1, 0),
    ("add_bwd_batch_first_b17_s3_d13_maxlen3", 0, 17, 3, 13, 3, 0, 0),
    ("add_bwd_batch_first_b37_s2_d40_maxlen5_acc", 0, 37, 2, 40, 5, 1, 0),
    ("add_bwd_batch_first_b300_s1_d5_maxlen2_acc", 0, 300, 1, 5, 2, 1, 0),
    ("add_bwd_batch_first_b4100_s1_d4_maxlen1", 0, 4100, 1, 4, 1, 0, 0),
    ("edge_add_bwd_batch_first_d1_b20_s1_maxlen2_acc", 0, 20, 1, 1, 2, 1, 0),
    ("edge_add_bwd_batch_first_d1_b5_s1_maxlen1", 0, 5, 1, 1, 1, 0, 0),
    ("add_bwd_batch_first_b2_s12_d16_seq_eq_maxlen", 0, 2, 12, 16, 12, 0, 0),
    ("nan_add_bwd_batch_first_b6_s4_d8_maxlen7_acc", 0, 6, 4, 8, 7, 1, 1),
    ("add_bwd_seq_first_s5_b3_d7_maxlen6_acc", 1, 3, 5, 7, 6, 1, 0),
    ("add_bwd_seq_first_s4_b8_d40_maxlen4_acc", 1, 8, 4, 40, 4, 1, 0),
    ("add_bwd_seq_first_s3_b17_d36_maxlen5", 1, 17, 3, 36, 5, 0, 0),
    ("edge_add_bwd_seq_first_d1_s6_b20_maxlen8_acc", 1, 20, 6, 1, 8, 1, 0),
    ("edge_add_bwd_seq_first_d1_s3_b5_maxlen3", 1, 5, 3, 1, 3, 0, 0),
    ("edge_add_bwd_seq_first_s1_b1_d2_maxlen1", 1, 1, 1, 2, 1, 0, 0),
    ("nan_add_bwd_seq_first_s4_b6_d8_maxlen5_acc", 1, 6, 4, 8, 5, 1, 1),
]


def case_add_backward(w, comments):
    """op=pe_add_{batch,seq}_first_backward: table.grad of LearnedPE accumulated into dtable0; specials
    put -0.0 in dtable0's rows past seq too, which torch's d0 + 0 turns into +0.0."""
    comments.append("# pe_add_*_backward: table.grad = dtable0 + sum over the batch of dout, in torch's order "
                    "(SumKernel.cpp cascade_sum; asserted: the first n//32*32 of the n = seq*d (batch-first) "
                    "or d (seq-first) columns by multi_row_sum, the rest by row_sum, n == 1 by "
                    "vectorized_inner_sum); rows >= seq: dtable0 + 0")
    for i, (name, seq_first, batch, seq, d, max_len, acc, specials) in enumerate(ADD_BACKWARD_CASES):
        shape = (seq, batch, d) if seq_first else (batch, seq, d)
        dout, d0 = normal(3000 + i, shape), grad0(3100 + i, (max_len, d), acc)
        if specials:
            dout, d0 = sprinkle(dout, 3200 + i), sprinkle(d0, 3300 + i)
            d0[seq:] = -0.0
        m = LearnedPE(normal(3400 + i, (max_len, d)), seq_first)
        if acc:
            m.pe.grad = t(d0).reshape(m.pe.shape).clone()
        m(t(normal(3500 + i, shape))).backward(t(dout))
        got = m.pe.grad.reshape(max_len, d).numpy()
        s = (np.stack([torch_batch_sum(dout[p]) for p in range(seq)]) if seq_first
             else torch_batch_sum(dout.reshape(batch, seq * d)).reshape(seq, d))
        with np.errstate(all="ignore"):  # rows >= seq: d0 + 0
            assert same_or_both_nan(got, d0 + np.pad(s, ((0, max_len - seq), (0, 0)))), name
        if name == "add_bwd_batch_first_b2_s12_d16_seq_eq_maxlen":
            # 000's own module, its buffer made a Parameter: the same .grad bits
            m0 = PE000_FIXED(d, max_len=max_len)
            m0.pe = nn.Parameter(m0._buffers.pop("pe").clone())
            m0(t(normal(3500 + i, shape))).backward(t(dout))
            assert bits_equal(m0.pe.grad.reshape(max_len, d), got), name
            comments.append(f"# pe_add_backward {name}: 000's module (buffer made a Parameter) gives these bits")
        w.case(name, "pe_add_seq_first_backward" if seq_first else "pe_add_batch_first_backward",
               **({"seq": seq, "batch": batch} if seq_first else {"batch": batch, "seq": seq}),
               d_model=d, max_len=max_len, dout=dout, dtable0=d0, expect=got)


EMBED_BACKWARD_CASES = [  # (name, vocab, d, ctx, ids: a list, (batch, seq) to draw or ("distinct", batch, seq),
    # acc, specials)
    ("embed_bwd_v10_d3_c5_b2_s3_repeats", 10, 3, 5, [[0, 9, 3], [3, 3, 7]], 0, 0),
    ("embed_bwd_v10_d3_c5_b2_s3_repeats_acc", 10, 3, 5, [[0, 9, 3], [3, 3, 7]], 1, 0),
    ("embed_bwd_v50_d40_c8_b8_s8_repeats", 50, 40, 8, (8, 8), 0, 0),
    ("embed_bwd_v12_d17_c6_b4_s6_repeats_acc", 12, 17, 6, (4, 6), 1, 0),
    ("embed_bwd_v30_d9_c9_b3_s7_distinct_acc", 30, 9, 9, ("distinct", 3, 7), 1, 0),
    ("edge_embed_bwd_v1_b1_s1_d4", 1, 4, 1, [[0]], 0, 0),
    ("nan_embed_bwd_specials_v12_d8_c6_b2_s4_distinct_acc", 12, 8, 6, ("distinct", 2, 4), 1, 1),
    ("nan_embed_bwd_specials_v5_d8_c4_b4_s4_repeats", 5, 8, 4, (4, 4), 0, 1),
]


def case_embed_backward(w, comments):
    """op=embed_backward: the .grads of 002's tok_emb(ids) + pos_emb(arange(seq)), accumulated into
    dwte0 / dwpe0."""
    comments.append("# embed_backward: dwte = dwte0 + T, T[k] = ((0 + g_i1) + g_i2) + ... over the tokens "
                    "with id k in token order (embedding_dense_backward: a zero table, one add per token; "
                    "asserted), dwpe = dwpe0 + the batch sum of pe_add_batch_first_backward (asserted)")
    for i, (name, vocab, d, ctx, idspec, acc, specials) in enumerate(EMBED_BACKWARD_CASES):
        if isinstance(idspec, list):
            ids = np.array(idspec)
        elif idspec[0] == "distinct":
            ids = rng(4000 + i).permutation(vocab)[:idspec[1] * idspec[2]].reshape(idspec[1:])
        else:
            ids = rng(4000 + i).integers(0, vocab, size=idspec)
        ids = ids.astype(np.int64)
        batch, seq = ids.shape
        dout = normal(3700 + i, (batch, seq, d))
        dwte0, dwpe0 = grad0(3800 + i, (vocab, d), acc), grad0(3900 + i, (ctx, d), acc)
        if specials:
            dout = sprinkle(dout, 4100 + i)
            if acc:
                dwte0 = sprinkle(dwte0, 4200 + i)
                # -0.0 + -0.0 on a row used once: torch's zero table makes it -0.0 + (0 + -0.0) = +0.0
                dwte0[int(ids[0, 0]), 1], dout[0, 0, 1] = -0.0, -0.0
        torch.manual_seed(3600 + i)
        tok, pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        if acc:
            tok.weight.grad, pos.weight.grad = t(dwte0).clone(), t(dwpe0).clone()
        (tok(t(ids)) + pos(torch.arange(seq))).backward(t(dout))
        gte, gpe = tok.weight.grad.detach().numpy(), pos.weight.grad.detach().numpy()
        flat, g2 = ids.reshape(-1), dout.reshape(-1, d)
        tsum, cord = np.zeros((vocab, d), F32), dwte0.copy()
        with np.errstate(all="ignore"):
            for j, k in enumerate(flat):
                tsum[k] = tsum[k] + g2[j]
                cord[k] = cord[k] + (g2[j] + F32(0))
            assert same_or_both_nan(gte, dwte0 + tsum), name
            s = torch_batch_sum(dout.reshape(batch, seq * d)).reshape(seq, d)
            assert same_or_both_nan(gpe, dwpe0 + np.pad(s, ((0, ctx - seq), (0, 0)))), name
        counts = np.bincount(flat, minlength=vocab)
        used = counts > 0
        comments.append(f"# embed_backward {name}: ids repeat up to {int(counts.max())} times; dwte0 "
                        f"{'non-zero' if acc else 'zero'}: token-order accumulation onto dwte0 "
                        f"(dwte0 + (g_i1 + 0)) + (g_i2 + 0) ..., pe.h's order, differs from torch's in "
                        f"{diff_stats(gte[used], cord[used])[0]}/{gte[used].size} values of the {int(used.sum())} rows "
                        "used")
        w.case(name, "embed_backward", batch=batch, seq=seq, d_model=d, vocab=vocab, context_length=ctx,
               ids=ids, dout=dout, dwte0=dwte0, dwpe0=dwpe0, expect_dwte=gte, expect_dwpe=gpe)


# ==== A training run (op=train): examples/train.h's toy model and task, torch's loss at every step

# examples/train.h's train_default_config(); the scalars as the float32 values C passes to
# ffn_adamw_step, so that torch's Python arithmetic on them starts from the same numbers.
TRAIN_CONFIG = dict(vocab=16, seq=8, d_model=16, hidden=32, batch=8, steps=300, seed=1,
                    lr=float(F32(0.01)), beta1=float(F32(0.9)), beta2=float(F32(0.999)),
                    eps=float(F32(1e-8)), weight_decay=float(F32(0.01)))


def train_batches(cfg):
    """examples/train.h's train_batch: a 32-bit LCG, token = (state >> 16) % vocab, y[s] = (x[s] + s) % vocab."""
    state, v, s, b = cfg["seed"], cfg["vocab"], cfg["seq"], cfg["batch"]
    while True:
        ids = np.empty(b * s, np.int64)
        for i in range(b * s):
            state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
            ids[i] = (state >> 16) % v
        ids = ids.reshape(b, s)
        yield t(ids), t((ids + np.arange(s)) % v)


class TrainModel(nn.Module):
    """e = wte(ids) + wpe(arange(S)) (or 000's PositionalEncoding: e = pe(wte(ids))), h = e + ffn(e)
    with 000's FeedForwardNN, logits = head(h); parameters in examples/train.h's order."""

    def __init__(self, cfg, sinusoidal):
        super().__init__()
        v, s, d = cfg["vocab"], cfg["seq"], cfg["d_model"]
        self.wte = nn.Embedding(v, d)
        self.wpe = None if sinusoidal else nn.Embedding(s, d)
        self.ffn = FeedForwardNN(d, cfg["hidden"])
        self.head = nn.Linear(d, v)
        self.pe = PE000_FIXED(d, max_len=s) if sinusoidal else None

    def forward(self, ids):
        tok = self.wte(ids)
        e = self.pe(tok) if self.pe is not None else tok + self.wpe(torch.arange(ids.shape[1]))
        h = e + self.ffn(e)
        return self.head(h)


def train_run(model, cfg, dtype):
    """torch's loop: per step a batch, the loss, zero_grad, backward, AdamW step; the losses."""
    m = copy.deepcopy(model).to(dtype)
    opt = torch.optim.AdamW(m.parameters(), lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"],
                            weight_decay=cfg["weight_decay"])
    batches, losses = train_batches(cfg), []
    for _ in range(cfg["steps"]):
        x, y = next(batches)
        loss = F.cross_entropy(m(x).reshape(-1, cfg["vocab"]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses, dtype=np.float64)


def case_train(w, comments, glibc_table):
    """op=train (keys: README.md). The sinusoidal table is the glibc child's (pe_sinusoidal_table's bits),
    so that C and torch start from the same values."""
    cfg = TRAIN_CONFIG
    default_table = table_torch(cfg["seq"], cfg["d_model"])
    ulps = np.abs(bits(default_table).astype(np.int64) - bits(glibc_table).astype(np.int64))
    comments.append(f"# train_sinusoidal's table ({cfg['seq']}, {cfg['d_model']}): the glibc child's "
                    f"(ATEN_CPU_CAPABILITY=default); the default dispatch's differs in "
                    f"{int(np.count_nonzero(ulps))}/{ulps.size} values, by up to {int(ulps.max())} ulps")
    for k, pos in enumerate(["learned", "sinusoidal"]):
        model = seeded(4400 + k, TrainModel, cfg, pos == "sinusoidal")
        if model.pe is not None:
            with torch.no_grad():
                model.pe.pe[0].copy_(t(glibc_table))
        params = np.concatenate([p.detach().numpy().reshape(-1) for p in model.parameters()])
        l32, l64 = train_run(model, cfg, torch.float32), train_run(model, cfg, torch.float64)
        d = np.abs(l32 - l64)
        comments.append(f"# train_{pos}: torch32 loss {l32[0]!r} -> {l32[-1]!r}, torch64 {l64[0]!r} -> "
                        f"{l64[-1]!r}; max |torch32 - torch64| {d.max()!r} at step {int(d.argmax())}")
        w.case(f"train_{pos}", "train", pos=pos, act="relu", **cfg, params=params, loss32=l32.astype(F32), loss64=l64)


ROPE_BACKWARD_CASES = [
    Rope("rope_bwd_half_bshd_b2_s7_h3_d10", 2, 7, 3, 10, 10, "bshd", "half", 0),
    Rope("rope_bwd_interleaved_bhsd_partial_b1_s5_h5_d24_r12_start3", 1, 5, 5, 24, 12, "bhsd", "interleaved", 3),
    Rope("rope_bwd_half_bhsd_partial_left_padding_b2_s6_h3_d20_r16", 2, 6, 3, 20, 16, "bhsd", "half",
         [[0, 1, 2, 3, 4, 5], [1, 1, 0, 1, 2, 3]], theta=500000.0),
    Rope("rope_bwd_interleaved_bshd_b1_s9_h3_d18_r14_packed", 1, 9, 3, 18, 14, "bshd", "interleaved",
         [[0, 1, 2, 3, 0, 1, 0, 1, 2]], theta=1000000.0),
    Rope("rope_bwd_half_odd_head_dim_b1_s4_h7_d9_r6_start5", 1, 4, 7, 9, 6, "bshd", "half", 5),
    Rope("rope_bwd_half_attention_factor_b1_s5_h3_d16", 1, 5, 3, 16, 16, "bhsd", "half", 2, factor=0.9),
    Rope("rope_bwd_interleaved_past_2e24_b1_s4_h2_d8", 1, 4, 2, 8, 8, "bshd", "interleaved",
         [[TWO24 + k for k in (-1, 0, 1, 3)]]),
    Rope("edge_rope_bwd_rot2_b1_s1_h1_d2", 1, 1, 1, 2, 2, "bshd", "interleaved", 7),
    Rope("nan_rope_bwd_specials_half_b2_s4_h3_d16_r12", 2, 4, 3, 16, 12, "bshd", "half", 0, specials=True),
    Rope("nan_rope_bwd_specials_interleaved_b2_s4_h3_d16", 2, 4, 3, 16, 16, "bhsd", "interleaved", 0, specials=True),
]


def write_rope_backward(w, comments):
    """op=rope_backward (in the glibc child, as op=rope): x.grad for dout from numpy 4300 + i; x from
    numpy 4400 + i (the gradient does not depend on it)."""
    comments.append("# rope_backward: x.grad equals the forward applied to dout with sin negated (the inverse "
                    "rotation, asserted) up to the sign of zero: autograd adds the zero-filled gradients of "
                    "x's slices (rotate_half, x[..., :rot], x[..., rot:]), which turns -0.0 into +0.0")
    for i, c in enumerate(ROPE_BACKWARD_CASES):
        dout = normal(4300 + i, c.shape)
        if c.specials:
            dout = sprinkle(dout, 4500 + i)
            # a pair of -0.0 at position 1 (its first output -0.0 here, +0.0 in autograd's sum with
            # the zero-filled slice gradients) and, past rot, a -0.0 that passes through
            at = (0, 0, 1) if c.bhsd else (0, 1, 0)
            dout[at + (0,)] = -0.0
            dout[at + (c.rot // 2 if c.pairing == "half" else 1,)] = -0.0
            if c.rot < c.d:
                dout[0, 0, 0, c.rot] = -0.0
        inv, cos, sin = rope_setup(c)
        dx = x_grad(lambda v: c.rotate(v, cos, sin), normal(4400 + i, c.shape, 2.0), dout).detach()
        with torch.no_grad():
            inverse = c.rotate(t(dout), cos, -sin)
        assert same_or_both_nan(dx, inverse, zero_sign=True), c.name
        nz = int(np.count_nonzero((bits(dx) != bits(inverse)) & (dx.numpy() == 0)))
        extra = ""
        if c.pairing == "interleaved" and not c.specials:
            dxc = x_grad(lambda v: c.complex_form(v, inv), normal(4400 + i, c.shape, 2.0), dout)
            extra = (f"; Meta's complex form's x.grad vs the real form's: {count_diff(dxc, dx)}/"
                     f"{dx.numel()} differ")
        comments.append(f"# rope_backward {c.name}: {nz} zeros of x.grad have the other sign than the inverse "
                        f"rotation's{extra}")
        w.case(c.name, "rope_backward", **c.keys(), dout=dout, inv_freq=inv, expect=dx.contiguous(), dispatch="glibc")


def case_files(lines):
    """{case name: {key: value}} from manifest case lines."""
    return {line.split()[1]: dict(kv.split("=", 1) for kv in line.split()[2:]) for line in lines}


def loader(out, lines):
    """load(case name, key): the array that the case's key names."""
    files = case_files(lines)
    return lambda name, key: np.load(os.path.join(out, files[name][key]))


def dedupe_glibc(out, line):
    """Drop a *_glibc file that is byte-identical to the default-dispatch one; point the case at that."""
    parts = line.split()
    for i, kv in enumerate(parts[2:], 2):
        key, val = kv.split("=", 1)
        if val.endswith(".npy") and "_glibc." in val:
            twin = val.replace("_glibc.", ".")
            a, b = os.path.join(out, val), os.path.join(out, twin)
            if os.path.exists(b) and filecmp.cmp(a, b, shallow=False):
                os.remove(a)
                parts[i] = f"{key}={twin}"
    return " ".join(parts)


def dispatch_stats(out, lines, comments):
    """The default-dispatch pe tables, and torch's default dispatch (this process) on the RoPE and RoPE
    scaling inputs, against the glibc-dispatch goldens (deterministic, so safe in the manifest): how far
    pe.h, which equals the latter, is from what most users' torch computes."""
    load = loader(out, lines)
    comments.append("# dispatch comparison (stored rows only): values differing default vs glibc, max |diff|; "
                    "torch vs exact max |diff| per dispatch")
    for prefix, max_len, d in TABLES:
        tab = {(mode, disp): load(table_name(prefix, mode, max_len, d, disp), "expect")
               for mode in ("torch", "exact") for disp in ("default", "glibc")}
        parts = []
        for mode in ("torch", "exact"):
            n, md = diff_stats(tab[mode, "default"], tab[mode, "glibc"])
            parts.append(f"{mode}: {n}/{tab[mode, 'glibc'].size} differ, max {md!r}")
        for disp in ("default", "glibc"):
            parts.append(f"torch-exact[{disp}] max {diff_stats(tab['torch', disp], tab['exact', disp])[1]!r}")
        comments.append(f"# dispatch {max_len}x{d}: " + "; ".join(parts))
    comments.append("# rope vs torch's default dispatch (this process, SLEEF cosf/sinf): values of cos / of the "
                    "output differing from the dispatch=glibc golden, max |diff| over finite values")
    for c in ROPE_CASES:
        x, exp, c_gl = (load(c.name, k) for k in ("x", "expect", "cos"))
        default = own_rope_default(c, x=x)
        y = default["expect"]
        (ny, md), (nc, mc) = diff_stats(y, exp), diff_stats(default["cos"], c_gl)
        extra = ""
        if c.pairing == "interleaved" and not c.specials:
            yc = c.complex_form(t(x), rope_inv_freq(c.rot, c.theta))
            extra = f"; Meta's complex form vs the real form here: {count_diff(yc, y)}/{y.size} differ"
        comments.append(f"# rope {c.name} vs default dispatch: cos {nc}/{c_gl.size} differ (max {mc!r}); "
                        f"output {ny}/{exp.size} differ (max {md!r}){extra}")
    n = [0, 0, 0, 0]  # inv_freq differing, total; rotated q differing, total
    worst, worst_name = 0.0, ""
    for i, (name, *_) in enumerate(ROPE_SCALING_CASES):
        gold, x, ye = (load(f"rope_scaling_{name}", k) for k in ("inv_freq", "x", "expect"))
        r = rope_scaling_torch(i, x)[0]
        (ni, _), (no, d) = diff_stats(r["inv_freq"], gold), diff_stats(r["expect"], ye)
        n = [n[0] + ni, n[1] + gold.size, n[2] + no, n[3] + ye.size]
        if d > worst:
            worst, worst_name = d, name
    comments.append(f"# rope_scaling, torch's default dispatch vs these glibc-dispatch goldens: inv_freq "
                    f"{n[0]}/{n[1]} values differ (SLEEF's powf); rotated q {n[2]}/{n[3]} differ, max |diff| "
                    f"{worst!r} ({worst_name}: an inv_freq ulp times the position, and SLEEF's cosf/sinf)")


# ==== The library's own bits (own_* keys): torch's pipelines with every libm call correctly rounded
# (own_math.py); add_own's first manifest comment says what the own_KEY files hold. The golden
# arrays themselves stay torch's.

OWN_PREFIX = "# own "


def own_compare(acc, own, other, zero_sign=False):
    """acc [differing, max ulps, max abs]: own vs other (NaN == NaN; zero_sign: +0 == -0)."""
    own, other = np.asarray(own, F32).reshape(-1), np.asarray(other, F32).reshape(-1)
    diff = (bits(own) != bits(other)) & ~(np.isnan(own) & np.isnan(other))
    if zero_sign:
        diff &= ~((own == 0) & (other == 0))
    acc[0] += int(np.count_nonzero(diff))
    fin = diff & np.isfinite(own) & np.isfinite(other)
    if fin.any():
        acc[1] = max(acc[1], int(np.max(om.ulps(own[fin], other[fin]))))
        acc[2] = max(acc[2], float(np.max(np.abs(own[fin].astype(np.float64) - other[fin]))))
    assert not (diff & ~fin).any(), "own bits differ from torch's in a non-finite value"


def own_rope(L, c, x=None, dout=None):
    """The case with L's libm: inv_freq, cos and sin by own_math, then torch's rotation."""
    inv = om.rope_scaled(L, c.rot, c.theta, {"type": "default"}, 0)[0]
    cs, sn = (a.reshape(c.b, c.s, c.rot // 2)
              for a in om.rope_cache(L, inv, c.position_ids().numpy().reshape(-1), c.factor))
    cos, sin = (t(np.concatenate([a, a], -1)) for a in (cs, sn))  # HF's cat((freqs, freqs))
    if x is None:  # the backward: the inverse rotation of dout
        return {"inv_freq": inv, "expect": c.rotate(t(dout), cos, -sin).numpy()}
    return {"inv_freq": inv, "cos": cs, "sin": sn, "expect": c.rotate(t(x), cos, sin).numpy()}


def own_rope_default(c, x=None, dout=None):
    """torch's default dispatch (this process) for the same case."""
    inv, cos, sin = rope_setup(c)
    if x is None:  # the backward
        dx = x_grad(lambda v: c.rotate(v, cos, sin), np.zeros_like(dout), dout)
        return {"inv_freq": inv.numpy(), "expect": dx.numpy()}
    return {"inv_freq": inv.numpy(), "cos": rope_rows(c, cos).numpy(),
            "sin": rope_rows(c, sin).numpy(), "expect": c.rotate(t(x), cos, sin).numpy()}


def own_rope_scaling(L, i, x):
    _, _, rot, theta, seq_len, cfg, _ = rope_scaling_case(i)
    inv, af = om.rope_scaled(L, rot, theta, cfg, seq_len)
    c, sn = om.rope_cache(L, inv, np.arange(seq_len - 3, seq_len), F32(af))
    y = rope_apply_half(t(x), *(t(np.concatenate([a, a], -1))[None] for a in (c, sn)), rot, False)
    return {"inv_freq": inv, "cos": c, "sin": sn, "expect": y.numpy()}, af


def add_own(out, lines, comments):
    """Append own_KEY=FILE (or own_KEY=same) to the case lines of every libm-dependent golden and the
    per-family counts to comments (lines starting OWN_PREFIX)."""
    files, load, record = case_files(lines), loader(out, lines), []
    cr, gl = om.CR(record=record), om.GLIBC()
    libs, fam = (gl, cr), {}
    rope_specs = {spec.name: spec for spec in ROPE_CASES + ROPE_BACKWARD_CASES}
    scaling = {f"rope_scaling_{c[0]}": i for i, c in enumerate(ROPE_SCALING_CASES)}
    steps = {c[0]: c for c in TIMESTEP_CASES}
    for idx, line in enumerate(lines):  # got: [glibc's, the library's] {key: array}; default: torch's
        parts = line.split()
        name, op = parts[1], parts[2][len("op="):]
        kv, zero_sign = files[name], False
        if op == "pe_table" and kv["mode"] == "torch" and kv["dispatch"] == "glibc":
            family, rows = op, load(name, "rows")
            got = [{"expect": om.table(L, rows, int(kv["d_model"]))} for L in libs]
            default = {"expect": load(name.replace("_glibc", ""), "expect")}
        elif op in ("rope", "rope_backward"):
            key = "x" if op == "rope" else "dout"
            family, spec, zero_sign, arr = op, rope_specs[name], key == "dout", {key: load(name, key)}
            got = [own_rope(L, spec, **arr) for L in libs]
            default = own_rope_default(spec, **arr)
        elif op == "rope_scaling":
            family, x = op, load(name, "x")
            (r_gl, af_gl), (r_cr, af_cr) = (own_rope_scaling(L, scaling[name], x) for L in libs)
            assert af_gl == float(load(name, "attention_factor")[0]), name
            assert af_cr == af_gl, f"{name}: the attention factor changes with correctly rounded logs"
            got = [r_gl, r_cr]
            default = {k: v.numpy() for k, v in rope_scaling_torch(scaling[name], x)[0].items()}
        elif op == "timestep":
            _, ts, dim, flip, shift, scale, max_period = steps[name]
            family, tt = op, load(name, "t")
            got = [{"expect": om.timestep(L, tt, dim, flip, shift, scale, max_period)} for L in libs]
            y = get_timestep_embedding(torch.tensor(ts, dtype=torch.float32), dim, bool(flip), shift, scale, max_period)
            default = {"expect": y.numpy()}
        elif op == "alibi":
            family, mode = f"alibi_{kv['mode']}", kv["mode"]
            heads, q, k, off, causal = (int(kv[a]) for a in ("heads", "q_len", "k_len", "offset", "causal"))
            got = [{"slopes": sl, "expect": alibi_bias(t(sl), q, k, off, causal).numpy()}
                   for sl in (om.alibi_slopes(L, heads, mode) for L in libs)]
            sl = (torch.tensor(alibi_slopes_paper(heads), dtype=torch.float32) if mode == "paper"
                  else alibi_slopes_bloom(heads))
            default = {"slopes": sl.numpy(), "expect": alibi_bias(sl, q, k, off, causal).numpy()}
        elif op == "act":
            family, x = f"act_{kv['act']}", load(name, "x")
            got = [{"expect": om.act(L, kv["act"], x)} for L in libs]
            default = {"expect": load(name, "torch_vec")}
        else:
            continue
        for key in got[1]:
            golden = load(name, key)
            g, o = (r[key].reshape(golden.shape) for r in got)
            sign_free = zero_sign or (op == "act" and kv["act"] == "sigmoid")  # sigmoid: the NaN's sign (act_glibc)
            ok = same_or_both_nan(g, golden, zero_sign) if sign_free else bits_equal(g, golden)
            assert ok, f"{name}.{key}: the pipeline with glibc's libm is not torch's dispatch=glibc golden"
            change = (bits(g) != bits(o)) & ~(np.isnan(g) & np.isnan(o))
            own = np.where(change, o, golden)
            at = np.flatnonzero(change.reshape(-1))
            fname = f"{name}.own_{key}.npy" if at.size else "same"
            if at.size:
                patch = np.stack([at, bits(own).reshape(-1)[at].astype(np.int64)], axis=1).astype(np.int64)
                np.save(os.path.join(out, fname), patch, allow_pickle=False)
            parts.append(f"own_{key}={fname}")
            st = fam.setdefault((family, key), {"n": 0, "cases": 0, "dn": 0, "g": [0, 0, 0.0], "d": [0, 0, 0.0]})
            st["n"] += golden.size
            st["cases"] += 1
            own_compare(st["g"], own, golden, zero_sign)
            if key in default:
                st["dn"] += golden.size
                own_compare(st["d"], own, np.asarray(default[key]).reshape(golden.shape), zero_sign)
        lines[idx] = " ".join(parts)

    comments.append(OWN_PREFIX + "bits: pe.h and ffn.h call their own correctly rounded (round to nearest even) "
                    "sinf/cosf/expf/powf/erff/tanhf and double log/log2/pow where torch calls libm, in torch's float32 "
                    "pipeline otherwise. own_KEY=FILE on a case: int64 (k, 2) rows (flat index into KEY's array, "
                    "the library's float32 bits there) where they differ from torch's golden; own_KEY=same: none "
                    "differ. Made by reference/own_math.py: the same pipeline with glibc's functions is asserted "
                    "equal to torch's dispatch=glibc golden bit for bit (rope_backward: up to the sign of zero; "
                    "sigmoid: a NaN's sign); correctly rounded values from NumPy float64, decided with mpmath at "
                    f"{om.MP_BITS} bits within {om.MARGIN_ULPS:g} float64 ulps of a float32 rounding boundary "
                    f"({cr.hard_cases} arguments)")
    comments.append(OWN_PREFIX + "per family and array: values where the library's bits differ from torch's "
                    "scalar dispatch on glibc (ATEN_CPU_CAPABILITY=default, oneDNN off: the golden) and from "
                    "torch's default dispatch (SLEEF vector math, oneDNN's GELU; made in this process), max "
                    "difference in float32 ulps and absolute")
    for (family, key), st in fam.items():
        g, d = st["g"], st["d"]
        txt = (f"{OWN_PREFIX}{family} {key}: {st['cases']} cases; vs glibc {g[0]}/{st['n']} differ (max {g[1]} ulp, "
               f"{g[2]!r})")
        if st["dn"]:
            txt += f"; vs default {d[0]}/{st['dn']} differ (max {d[1]} ulp, {d[2]!r})"
        comments.append(txt)
    calls = om.libm_call_stats(record, gl)
    comments.append(OWN_PREFIX + "libm calls of these pipelines, correctly rounded vs glibc "
                    f"{'-'.join(platform.libc_ver())} at the same arguments: "
                    + "; ".join(f"{n} {c[1]}/{c[0]} differ (max {c[2]} ulp)" for n, c in sorted(calls.items())))
    seq, d = TRAIN_CONFIG["seq"], TRAIN_CONFIG["d_model"]
    tgl, tcr = om.table(gl, np.arange(seq), d), om.table(cr, np.arange(seq), d)
    nt = count_diff(tgl, tcr)
    comments.append(f"{OWN_PREFIX}train_sinusoidal: the library's ({seq}, {d}) table differs from the glibc one "
                    f"torch trained with in {nt}/{tgl.size} values "
                    f"(max {int(np.max(om.ulps(tgl, tcr))) if nt else 0} ulp)")


def own_only(out):
    """--own-only DIR: redo the own_* files, keys and comments of an existing goldens directory."""
    path = os.path.join(out, "MANIFEST.txt")
    with open(path, encoding="ascii") as f:
        text = f.read().splitlines()
    head = [ln for ln in text if not ln.startswith("case ") and not ln.startswith(OWN_PREFIX)]
    lines = [" ".join(p for p in ln.split() if not p.startswith("own_")) for ln in text if ln.startswith("case ")]
    for f in os.listdir(out):
        if ".own_" in f and f.endswith(".npy"):
            os.remove(os.path.join(out, f))
    comments = []
    add_own(out, lines, comments)
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("\n".join(head + comments + lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--glibc-child", action="store_true",
                    help="internal: write the dispatch=glibc goldens only, the *_glibc pe_table cases and the "
                    "act cases' expect files (run with ATEN_CPU_CAPABILITY=default)")
    ap.add_argument("--check-seeds", metavar="DIR", help="verify the verbatim blocks against the documents")
    ap.add_argument("--own-only", action="store_true",
                    help="only redo the library's own bits (own_* files, keys and comments) of the goldens in --out")
    args = ap.parse_args()
    out = args.out
    if args.own_only:
        assert "ATEN_CPU_CAPABILITY" not in os.environ, "--own-only compares with the default dispatch"
        return own_only(out)

    if args.glibc_child:
        assert os.environ.get("ATEN_CPU_CAPABILITY") == "default", "internal mode needs ATEN_CPU_CAPABILITY=default"
        w = Writer(out)
        write_tables(w, "glibc")
        act_files, act_comments = act_glibc(w)
        for write in (write_rope, write_alibi, write_timestep, write_rope_scaling, write_rope_backward):
            write(w, act_comments)
        return json.dump({"capability": capability(), "lines": w.lines, "act_expect": act_files,
                          "act_comments": act_comments,
                          "train_table": table_torch(TRAIN_CONFIG["seq"], TRAIN_CONFIG["d_model"]).tolist()},
                         sys.stdout)

    if "ATEN_CPU_CAPABILITY" in os.environ:
        sys.exit("make_goldens.py: unset ATEN_CPU_CAPABILITY; the script sets it itself for the *_glibc goldens")
    if args.check_seeds:
        check_seeds(args.check_seeds)

    os.makedirs(out, exist_ok=True)
    for f in sorted(os.listdir(out)):
        if f.endswith(".npy") or f == "MANIFEST.txt":
            os.remove(os.path.join(out, f))

    comments = []
    doc_checks(comments)

    w = Writer(out)
    write_tables(w, "default")

    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--out", out, "--glibc-child"],
                          env=dict(os.environ, ATEN_CPU_CAPABILITY="default"), stdout=subprocess.PIPE, check=True)
    child = json.loads(proc.stdout)
    assert child["capability"] != capability(), "ATEN_CPU_CAPABILITY=default did not change the dispatch"
    for line in child["lines"]:
        name = line.split()[1]
        assert name not in w.names
        w.names.add(name)
        w.lines.append(dedupe_glibc(out, line))
    dispatch_stats(out, w.lines, comments)
    comments.append("# a *_glibc file byte-identical to its default-dispatch counterpart is not stored: the "
                    "glibc case names the default file (all rows files and all mode=exact tables here)")

    for case in (case_pe_add, case_embed, case_linear, case_relu, case_ffn):
        case(w, comments)
    first = len(w.lines)
    case_ffn_act(w, comments)
    comments.extend(child["act_comments"])
    case_act(w, child["act_expect"], comments)
    for case in (case_ffn_gated, case_ffn_gated_gpt_oss, case_weights16, case_blocks16, case_linear_backward,
                 case_act_backward):
        case(w, comments)
    share_identical(out, w.lines, first)
    case_opt_step(w, comments)
    first = len(w.lines)
    case_ffn_backward(w, comments)
    share_identical(out, w.lines, first)
    case_add_backward(w, comments)
    case_embed_backward(w, comments)
    case_train(w, comments, np.array(child["train_table"], dtype=F32))
    add_own(out, w.lines, comments)  # last: its comments sit just above the case lines (own_only)

    blas_libs, blas_core = openblas_info()
    header = [
        "# Goldens for pe.h / ffn.h, made by reference/make_goldens.py (do not edit; `make reference`).",
        "# Lines: `case NAME op=OP key=value ...`; file values are .npy paths relative to this directory.",
        f"# torch_version={torch.__version__}", f"# numpy_version={np.__version__}",
        f"# python_version={platform.python_version()}", f"# libc={'-'.join(platform.libc_ver())}",
        f"# blas={blas_libs} openblas_core={blas_core}",
        "# threads=1 (torch.set_num_threads(1), OMP/OPENBLAS/MKL_NUM_THREADS=1)",
        f"# dispatch=default: torch CPU capability {capability()} (ATEN_CPU_CAPABILITY unset); all non-table "
        "cases and the pe_table cases with dispatch=default",
        f"# dispatch=glibc: torch CPU capability {child['capability']}, made with ATEN_CPU_CAPABILITY=default "
        "(glibc expf/sinf/cosf); the *_glibc pe_table cases, and the act cases' expect (there also with "
        "oneDNN off, torch.backends.mkldnn.flags(enabled=False): glibc erff/tanhf/expf)",
        "# pe_table mode=torch: the documents' module buffer (000 fixed pe[0] == 001 pe[:,0,:], asserted); "
        "mode=exact: the formula in float64 (torch), rounded once to float32",
        f"# {SUBSET_RULE}",
        "# random inputs: numpy PCG64 default_rng(seed) float32; weights/embeddings: torch.manual_seed(seed) then "
        "the module's own init",
    ]
    with open(os.path.join(out, "MANIFEST.txt"), "w", encoding="ascii", newline="\n") as f:
        f.write("\n".join(header + comments + w.lines) + "\n")

    # every referenced file exists; nothing else is in the directory
    referenced = {kv.split("=", 1)[1] for line in w.lines for kv in line.split()[2:] if kv.endswith(".npy")}
    present = {f for f in os.listdir(out) if f.endswith(".npy")}
    assert referenced == present, (sorted(referenced - present), sorted(present - referenced))
    total = sum(os.path.getsize(os.path.join(out, f)) for f in present | {"MANIFEST.txt"})
    print(f"{len(w.lines)} cases, {len(present)} files, {total} bytes ({total / 2**20:.2f} MiB) in {out}")
    assert total < SIZE_LIMIT, f"goldens total {total} bytes >= 16 MiB"


if __name__ == "__main__":
    main()
