"""Writes reference/goldens/llama_mlp.safetensors: one Llama-style MLP layer in bfloat16, an
input and torch's output, for examples/llama_mlp.c (which reads it with examples/safetensors.h).

    /usr/bin/python3 reference/make_safetensors.py --out reference/goldens

The model: documents.GatedMLP(d_model=64, hidden=172, F.silu) (transformers' LlamaMLP: three
nn.Linear without bias; y = down_proj(silu(gate_proj(x)) * up_proj(x))), initialised by
torch.manual_seed(0), its weights converted with .to(torch.bfloat16). The tensors:

    model.layers.0.mlp.gate_proj.weight   BF16 (172, 64)
    model.layers.0.mlp.up_proj.weight     BF16 (172, 64)
    model.layers.0.mlp.down_proj.weight   BF16 (64, 172)
    x                                     F32  (5, 64)    torch.randn after the weights
    y_torch                               F32  (5, 64)

y_torch is the same module in float32 with each weight the bfloat16 one widened (w.float(),
exact): down_proj(silu(gate_proj(x)) * up_proj(x)) = F.linear(F.silu(F.linear(x, g.float())) *
F.linear(x, u.float()), d.float()), torch's default CPU dispatch, one thread, OpenBLAS's Haswell
kernel pinned as in make_goldens.py. That is the computation ffn.h runs on the bfloat16 weights
(it widens them exactly and sums in float32), in another summation order.

The file is written here byte by byte (Debian has no safetensors package; the format is small):
an 8-byte little-endian header length N, N bytes of JSON (keys sorted, as the safetensors
library writes them, padded with spaces to a multiple of 8 so the data are aligned), then each
tensor's little-endian bytes in the header's order. Deterministic: two runs give the same bytes.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import argparse  # noqa: E402
import json  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from documents import GatedMLP  # noqa: E402

torch.set_num_threads(1)
D_MODEL, HIDDEN, ROWS, SEED = 64, 172, 5, 0
NAME = "llama_mlp.safetensors"


def tensors():
    torch.manual_seed(SEED)
    mlp = GatedMLP(D_MODEL, HIDDEN, F.silu)
    x = torch.randn(ROWS, D_MODEL, dtype=torch.float32)
    w = {n: getattr(mlp, n).weight.detach().to(torch.bfloat16) for n in ("gate_proj", "up_proj", "down_proj")}
    with torch.no_grad():
        for n, t in w.items():              # the module on the widened weights
            getattr(mlp, n).weight.copy_(t.float())
        y = mlp(x)
        g, u, d = (w[n].float() for n in ("gate_proj", "up_proj", "down_proj"))
        assert torch.equal(y, F.linear(F.silu(F.linear(x, g)) * F.linear(x, u), d))
    return {**{f"model.layers.0.mlp.{n}.weight": t for n, t in w.items()}, "x": x, "y_torch": y}


def raw(t):
    """The tensor's little-endian bytes and the format's dtype name."""
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().astype("<i2").tobytes(), "BF16"
    assert t.dtype == torch.float32
    return t.contiguous().numpy().astype("<f4").tobytes(), "F32"


def safetensors_bytes(ts, metadata):
    header, blobs, off = {"__metadata__": metadata}, [], 0
    for name in sorted(ts):
        b, dtype = raw(ts[name])
        header[name] = {"dtype": dtype, "shape": list(ts[name].shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    h += b" " * (-(8 + len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    meta = {"format": "pt", "made_by": "reference/make_safetensors.py",
            "torch": torch.__version__.split("+")[0], "y_torch": "F.linear(F.silu(F.linear(x, g.float())) * "
            "F.linear(x, u.float()), d.float())"}
    data = safetensors_bytes(tensors(), meta)
    path = os.path.join(out, NAME)
    with open(path, "wb") as f:
        f.write(data)
    print(f"{path}: {len(data)} bytes")


if __name__ == "__main__":
    main()
