"""reference/documents.py - the source documents' code, verbatim, as runnable modules.

Imported by make_goldens.py (the goldens) and bench/bench_torch.py (PyTorch timings), so that
both run the very same code. Importing it imports torch: set thread and OpenBLAS environment
variables before the import.
"""
import ctypes
import math
import os
import sys

import torch

# ==== The documents' code, verbatim. Each block is kept as source text and run with exec() in
# its own namespace: 000 and 001 both define a class named PositionalEncoding, and 001's
# `super(PositionalEncoding, self)` looks the name up in its module globals at call time, so the two
# cannot share one namespace. compile() is given the document's file name, so a traceback names the
# document. `--check-seeds DIR` checks each block (VERBATIM: document, source, whether only the
# indentation was restored) against DIR.
DOC000, DOC001 = "000_eb947d452197119b.txt", "001_1d432134037b932b.txt"
DOC003 = "003_1550c5983f83bc16.txt"
VERBATIM = []


def verbatim(doc, src, indent_restored=False):
    VERBATIM.append((doc, src, indent_restored))
    return src


DOC000_PE = verbatim(DOC000, r'''
import torch
import torch.nn as nn
import math

class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super(PositionalEncoding).__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)  # shape: (1, max_len, d_model)
        self.register_buffer('pe', pe)

    def forward(self, x):
        # x is expected to be of shape (batch_size, seq_len, d_model)
        seq_len = x.size(1)
        x = x + self.pe[:, :seq_len]
        return x
''')

DOC000_FFN = verbatim(DOC000, r'''
class FeedForwardNN(nn.Module):
    def __init__(self, d_model, hidden_dim):
        super().__init__()
        self.fc1 = nn.Linear(d_model, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, d_model)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x)
        return x
''')

# 001: the page lost the indentation; only the indentation is restored
DOC001_PE = verbatim(DOC001, r'''
import torch
import math
class PositionalEncoding(torch.nn.Module):
    def __init__(self, d_model, max_len=5000):
        super(PositionalEncoding, self).__init__()
        # Create a long matrix to hold positional encodings
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        # Apply sine to even indices in the embedding dimension
        pe[:, 0::2] = torch.sin(position * div_term)
        # Apply cosine to odd indices in the embedding dimension
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)
    def forward(self, x):
        # Add the positional encodings to the input
        return x + self.pe[:x.size(0), :]
''', indent_restored=True)

# 003's "Code Snippet" (needs d_model, pe, position)
DOC003_SNIPPET = verbatim(DOC003, r'''
div_term = torch.exp(torch.arange(0, d_model, 2).float() *
                                 (-math.log(10000.0) / d_model))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term)
pe = pe.unsqueeze(0).transpose(0, 1)
''')

# 003's div_term walk-through (d_model 512)
DOC003_WALKTHROUGH = verbatim(DOC003, r'''
import torch
import math

d_model = 512  # Example value
indices = torch.arange(0, d_model, 2).float()
scale_factor = -math.log(10000.0) / d_model
scaled_indices = indices * scale_factor
div_term = torch.exp(scaled_indices)

print(div_term)
''')

# 002 shows no code, only the pipeline in words and matrices: torch.manual_seed(123), a token embedding
# nn.Embedding(50257, 256), a position embedding nn.Embedding(context_length=4, 256), an (8, 4) id
# matrix whose rows 0, 1 and 7 are shown ([10,8,20,21], [1,3,4,5], [9,8,16,23]), and
# input_embeddings = token_embeddings + pos_embeddings (8 x 4 x 256). It is reconstructed in case_embed.

# --- one-line fix of 000 (NOT verbatim): super(PositionalEncoding).__init__() -> super().__init__() ---
DOC000_BAD_LINE = "super(PositionalEncoding).__init__()"
assert DOC000_PE.count(DOC000_BAD_LINE) == 1
DOC000_PE_FIXED = DOC000_PE.replace(DOC000_BAD_LINE, "super().__init__()")


def run_doc(src, filename, ns=None):
    ns = {} if ns is None else ns
    exec(compile(src, filename, "exec"), ns)
    return ns


NS000 = run_doc(DOC000_PE, DOC000)
run_doc(DOC000_FFN, DOC000, NS000)  # FeedForwardNN uses 000's torch / nn imports
NS000_FIXED = run_doc(DOC000_PE_FIXED, DOC000 + " (one-line fix)")
NS001 = run_doc(DOC001_PE, DOC001)

PE000_AS_WRITTEN = NS000["PositionalEncoding"]
PE000_FIXED = NS000_FIXED["PositionalEncoding"]
FeedForwardNN = NS000["FeedForwardNN"]
PE001 = NS001["PositionalEncoding"]


def check_seeds(seed_dir):
    for doc, src, dedent in VERBATIM:
        with open(os.path.join(seed_dir, doc), encoding="utf-8") as f:
            text = f.read()
        body = src.strip("\n")
        if dedent:
            text = "\n".join(line.lstrip() for line in text.splitlines())
            body = "\n".join(line.lstrip() for line in body.splitlines())
        if body not in text:
            sys.exit(f"verbatim block not found in {doc}:\n{src}")
    print(f"check-seeds: all {len(VERBATIM)} verbatim blocks occur in their documents")


def capability():
    """The CPU capability torch dispatches to."""
    fn = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    if fn is not None:
        return str(fn())
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split("CPU capability usage:", 1)[1].strip()
    return "unknown"


def openblas_info():
    """(the BLAS libraries this process has loaded, OpenBLAS's core name)."""
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # make sure the BLAS is loaded
    with open("/proc/self/maps") as f:
        libs = {p[-1] for p in map(str.split, f) if len(p) >= 6 and "blas" in p[-1]}
    core = "unknown"
    for lib in sorted(libs):
        try:
            fn = ctypes.CDLL(lib).openblas_get_corename
            fn.restype = ctypes.c_char_p
            core = fn().decode()
            break
        except (OSError, AttributeError):
            continue
    return " ".join(sorted(libs)) or "unknown", core


def table_exact(max_len, d):
    """The formula evaluated by torch in float64, rounded once to float32."""
    position = torch.arange(0, max_len, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(max_len, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.float().numpy()


# ==== The blocks ffn.h also implements, written from their published formulas (not from the
# documents); one definition for the goldens and the bench.

def act_block(act, d, h):
    """(module, fc1, fc2): 000's FeedForwardNN for relu, else nn.Sequential(nn.Linear, act, nn.Linear);
    both draw fc1's init, then fc2's."""
    if act == "relu":
        m = FeedForwardNN(d, h)
        return m, m.fc1, m.fc2
    a = {"gelu": torch.nn.GELU, "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh"),
         "silu": torch.nn.SiLU}[act]()
    m = torch.nn.Sequential(torch.nn.Linear(d, h), a, torch.nn.Linear(h, d))
    return m, m[0], m[2]


class GatedMLP(torch.nn.Module):
    """The gated block of Llama / Mistral / Qwen (transformers' LlamaMLP; SwiGLU: act = F.silu, no
    biases) and GEGLU (act = F.gelu or its tanh form): y = down_proj(act(gate_proj(x)) * up_proj(x))."""

    def __init__(self, d, h, act, bias=False):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d, h, bias=bias)
        self.up_proj = torch.nn.Linear(d, h, bias=bias)
        self.down_proj = torch.nn.Linear(h, d, bias=bias)
        self.act = act

    def hidden(self, x):
        return self.act(self.gate_proj(x)) * self.up_proj(x)

    def forward(self, x):
        return self.down_proj(self.hidden(x))


class GPT2MLP:
    """GPT-2's MLP with Hugging Face's Conv1D layout: weights (in, out), y = addmm(b, x, W); weights
    normal(std=0.02) as GPT-2's init, the biases (zero in GPT-2) too, so that they matter; the
    activation F.gelu(approximate='tanh') (gelu_pytorch_tanh)."""

    def __init__(self, seed, d, h):
        torch.manual_seed(seed)
        self.c_fc_w = torch.nn.init.normal_(torch.empty(d, h), std=0.02)
        self.c_proj_w = torch.nn.init.normal_(torch.empty(h, d), std=0.02)
        self.c_fc_b = torch.nn.init.normal_(torch.zeros(h), std=0.02)
        self.c_proj_b = torch.nn.init.normal_(torch.zeros(d), std=0.02)

    def hidden(self, x, dtype=torch.float32, act=lambda x: torch.nn.functional.gelu(x, approximate="tanh")):
        return act(torch.addmm(self.c_fc_b.to(dtype), x.view(-1, x.size(-1)), self.c_fc_w.to(dtype)))

    def __call__(self, x, dtype=torch.float32):
        return torch.addmm(self.c_proj_b.to(dtype), self.hidden(x, dtype), self.c_proj_w.to(dtype))


class GptOssExpertMLP(torch.nn.Module):
    """One expert of GPT-OSS's mixture-of-experts block (transformers' GptOssExperts, OpenAI's swiglu):
    gate_up_proj (d, 2e) in (in, out) layout, even columns the gate, odd ones up;
    y = ((up.clamp(-7, 7) + 1) * glu) @ down_proj + down_proj_bias, glu = g * sigmoid(g * 1.702) with
    g = gate.clamp(max=7). Weights 4x the usual scale, so that many pre-activations pass the clamps."""

    ALPHA, LIMIT = 1.702, 7.0

    def __init__(self, d, e):
        super().__init__()
        self.gate_up_proj = torch.nn.Parameter(torch.randn(d, 2 * e) * (4.0 / math.sqrt(d)))
        self.gate_up_proj_bias = torch.nn.Parameter(torch.randn(2 * e))
        self.down_proj = torch.nn.Parameter(torch.randn(e, d) / math.sqrt(e))
        self.down_proj_bias = torch.nn.Parameter(torch.randn(d) * 0.1)

    def pre(self, x):
        gate_up = x @ self.gate_up_proj + self.gate_up_proj_bias
        return gate_up[..., ::2], gate_up[..., 1::2]

    def hidden(self, x):
        gate, up = self.pre(x)
        gate = gate.clamp(min=None, max=self.LIMIT)
        up = up.clamp(min=-self.LIMIT, max=self.LIMIT)
        return (up + 1) * (gate * torch.sigmoid(gate * self.ALPHA))

    def forward(self, x):
        return self.hidden(x) @ self.down_proj + self.down_proj_bias
