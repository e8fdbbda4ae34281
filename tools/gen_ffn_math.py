#!/usr/bin/env python3
"""tools/gen_ffn_math.py - the constants of ffn.h's own expf, erff and tanhf (mpmath, 300 bits).

Prints each constant as the shortest decimal that reads back as the double nearest to the
300-bit value (Python's repr of a float), in the order ffn.h lists them:
  ln 2 in three parts: L1 (ln 2 rounded to 42 bits, so that k * L1 is exact for |k| < 2^11),
  L2 = ln 2 - L1 rounded, L3 = ln 2 - L1 - L2 rounded; 1 / ln 2;
  2 / sqrt(pi) as a double-double;
  1 / n! for n = 0..14 (the Taylor coefficients of exp);
  erf's Taylor coefficients at 0, 2/sqrt(pi) (-1)^n / (n! (2n+1)), n = 0..12;
  erf's Taylor coefficients at c = 0.625 + 0.25 j (j = 0..13), degree 15:
  erf(c), then 2/sqrt(pi) e^(-c^2) (-1)^(n-1) H_(n-1)(c) / n! (H: the physicists' Hermite
  polynomials, d^n/dx^n e^(-x^2) = (-1)^n H_n(x) e^(-x^2)).
Run with a Python that has mpmath (Debian: python3-mpmath)."""
from mpmath import mp, mpf, erf, exp, sqrt, pi, log, hermite, factorial

mp.prec = 300


def r(x):
    return repr(float(x))


ln2 = log(2)
L1 = mpf(round(ln2 * 2**42)) / 2**42
L2 = mpf(float(ln2 - L1))
L3 = mpf(float(ln2 - L1 - L2))
for name, v in (("INVLN2", 1 / ln2), ("LN2_1", L1), ("LN2_2", L2), ("LN2_3", L3)):
    print(f"#define FFN__{name}", r(v))
t = 2 / sqrt(pi)
print("2/sqrt(pi):", r(t), r(t - mpf(float(t))))
print("ffn__inv_fact:", ", ".join(r(1 / factorial(n)) for n in range(15)))
print("ffn__erf0:", ", ".join(r((-1)**n * t / (factorial(n) * (2 * n + 1))) for n in range(13)))
print("ffn__erf_tab:")
for j in range(14):
    c = mpf(0.625) + mpf(0.25) * j
    e = t * exp(-c * c)
    a = [erf(c)] + [e * (-1)**(n - 1) * hermite(n - 1, c) / factorial(n) for n in range(1, 16)]
    print("    {" + ", ".join(r(v) for v in a) + "},")
