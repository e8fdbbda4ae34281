#!/usr/bin/python3
"""examples/train_plot.py - the loss curves of examples/train.c (`make example-train`) in one PNG.

Top: the loss per step, C (pe.h + ffn.h) and torch (float32), one colour per run; they lie on top of
each other. Bottom: how far apart they are, |C - torch| per step, beside |torch - torch float64|
(what rounding alone moves torch's own float32 run by).

usage: python3 examples/train_plot.py [--out build/train.png] RUN.tsv [RUN.tsv ...]
Each RUN.tsv is train --tsv's output: step, C loss, torch loss, torch float64 loss (tab-separated);
the run's name is the file's (train_learned.tsv -> learned).
"""
import argparse
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    cols = [[], [], [], []]
    with open(path) as f:
        for line in f:
            for col, v in zip(cols, line.split("\t")):
                col.append(float(v))
    return cols


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/train.png")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    for k, path in enumerate(args.runs):
        name = os.path.splitext(os.path.basename(path))[0].replace("train_", "")
        step, c, t32, t64 = load(path)
        color = f"C{k}"
        top.plot(step, t32, color=color, lw=3, alpha=0.35, label=f"{name}: torch (float32)")
        top.plot(step, c, color=color, lw=1, label=f"{name}: C (pe.h + ffn.h), final {c[-1]:.5f} "
                 f"(torch {t32[-1]:.5f})")
        d32 = [max(abs(a - b), 1e-10) for a, b in zip(c, t32)]
        dref = [max(abs(a - b), 1e-10) for a, b in zip(t32, t64)]
        bottom.plot(step, d32, color=color, ls="", marker=".", ms=3,
                    label=f"{name}: |C - torch|, max {max(d32):.2g} (0 drawn at 1e-10)")
        bottom.plot(step, dref, color=color, lw=1, ls=":",
                    label=f"{name}: |torch - torch float64|, max {max(dref):.2g}")
    top.set_yscale("log")
    top.set_ylabel("cross-entropy loss")
    top.set_title("examples/train.c: y[s] = (x[s] + s) mod 16, AdamW, C beside PyTorch")
    top.legend(fontsize=8)
    top.grid(True, which="both", alpha=0.3)
    bottom.set_yscale("log")
    bottom.set_xlabel("step")
    bottom.set_ylabel("|difference| of the loss")
    bottom.legend(fontsize=7, ncol=2, loc="lower right")
    bottom.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
