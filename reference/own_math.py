"""The library's own bits for the goldens whose values come from libm (imported by make_goldens.py).

pe.h and ffn.h run torch's float32 pipelines operation for operation, but where torch calls libm
(sinf, cosf, expf, powf, erff, tanhf; double log, log2, pow) they call their own correctly rounded
functions. The pipelines below take the math library L as an argument:
- GLIBC: glibc through ctypes (float) and Python's math (double): make_goldens.py asserts that the
  pipelines then reproduce torch's dispatch=glibc goldens bit for bit, so they are torch's operations;
- CR: correctly rounded (to nearest even). NumPy's float64 value rounded to float32, except within
  MARGIN_ULPS float64 ulps of a float32 rounding boundary (a midpoint, or the overflow threshold),
  where mpmath at MP_BITS decides; doubles are mpmath's value rounded once. NaN in gives the NaN
  (quiet) back, as glibc does. With `record` a list, CR logs every call (for libm_call_stats)."""
import ctypes
import math

import numpy as np

try:
    import mpmath
except ImportError as e:  # pragma: no cover
    raise SystemExit("make_goldens.py needs mpmath for the library's own bits (Debian: apt-get install "
                     "python3-mpmath)") from e

F32 = np.float32
MP_BITS = 320
MARGIN_ULPS = 16.0  # float64 ulps between NumPy's value and a float32 rounding boundary


def _mp_round(v, prec, emin, emax):
    """mpf v rounded to nearest-even in a binary format with `prec` significand bits, normal exponents
    emin..emax (subnormals below); returns a Python float (exact: prec <= 53), +-inf on overflow.
    Raises when v is too close to a rounding boundary for the working precision to decide."""
    if mpmath.isnan(v):
        return math.nan
    if mpmath.isinf(v):
        return math.copysign(math.inf, float(v))
    if v == 0:
        return 0.0
    sign = -1.0 if v < 0 else 1.0
    a = abs(v)
    _, e = mpmath.frexp(a)                  # a = m 2^e, 1/2 <= m < 1: the leading bit is 2^(e-1)
    q = max(int(e) - 1, emin) - (prec - 1)  # the quantum: 2^q
    n = mpmath.ldexp(a, -q)
    fl = mpmath.floor(n)
    frac = n - fl
    assert abs(frac - mpmath.mpf(0.5)) > mpmath.ldexp(1, -(MP_BITS - 64)), \
        "too close to a rounding boundary to decide at this precision"
    fl = int(fl)
    if frac > 0.5 or (frac == 0.5 and fl % 2 == 1):
        fl += 1
    if fl.bit_length() + q > emax + 1:      # rounded up to 2^(emax+1): overflow
        return sign * math.inf
    return sign * math.ldexp(float(fl), q)


_MP_F = {"sinf": mpmath.sin, "cosf": mpmath.cos, "expf": mpmath.exp, "erff": mpmath.erf,
         "tanhf": mpmath.tanh}
_D = {  # the double functions: (glibc's, through Python's math; mpmath's)
    "log": (math.log, mpmath.log), "log2": (math.log2, lambda x: mpmath.log(x, 2)),
    "pow": (math.pow, mpmath.power), "sqrt": (math.sqrt, mpmath.sqrt)}
_NP = {"sinf": np.sin, "cosf": np.cos, "expf": np.exp, "tanhf": np.tanh, "powf": np.power,
       "erff": np.vectorize(math.erf, otypes=[np.float64])}


def _hard(y64):
    """Where the float32 rounding of the float64 values y64 might differ from that of the exact values:
    y64 within MARGIN_ULPS float64 ulps of a float32 rounding boundary, or beyond FLT_MAX."""
    with np.errstate(all="ignore"):
        r = y64.astype(F32)
    fin = np.isfinite(r)
    rf = np.where(fin, r, F32(0)).astype(F32)
    lo = np.nextafter(rf, F32(-np.inf)).astype(np.float64)
    hi = np.nextafter(rf, F32(np.inf)).astype(np.float64)
    r64 = rf.astype(np.float64)
    dist = np.minimum(np.abs(y64 - (r64 + lo) / 2), np.abs(y64 - (r64 + hi) / 2))
    margin = MARGIN_ULPS * np.spacing(np.abs(y64)) + 2.0 ** -1070
    return ~fin | (dist <= margin)


class _Float:
    """The float functions of a math library (L.sinf(x), L.powf(x, y), ...), each the subclass's _f."""


for _name in _NP:
    setattr(_Float, _name, lambda self, x, y=None, _name=_name: self._f(_name, x, y))


class CR(_Float):
    """Correctly rounded float32 functions of float32 arrays; double functions of Python floats."""

    def __init__(self, record=None):
        self.record = record
        self.hard_cases = 0

    def _f(self, name, x, y=None):
        x = np.asarray(x, F32)
        x64 = x.astype(np.float64)
        y64 = None if y is None else np.broadcast_to(np.asarray(y, F32), x.shape).astype(np.float64)
        with np.errstate(all="ignore"):
            v64 = _NP[name](x64) if y64 is None else np.power(x64, y64)
            out = v64.astype(F32)
        args_fin = np.isfinite(x64) if y64 is None else (np.isfinite(x64) & np.isfinite(y64))
        hard = args_fin & _hard(v64) & ~np.isinf(v64)   # (a float64 overflow is a float32 one too)
        for idx in zip(*np.nonzero(hard)):
            self.hard_cases += 1
            with mpmath.workprec(MP_BITS):
                a = mpmath.mpf(float(x64[idx]))
                v = mpmath.power(a, mpmath.mpf(float(y64[idx]))) if name == "powf" else _MP_F[name](a)
                out[idx] = _mp_round(v, 24, -126, 127)  # binary32
        nan = np.isnan(x64) if y64 is None else (np.isnan(x64) | np.isnan(y64))
        if nan.any() and y64 is None:   # NaN in, the same NaN (quiet) out, as glibc's x + x
            with np.errstate(all="ignore"):
                out[nan] = (x[nan] + x[nan]).astype(F32)
        if self.record is not None:
            self.record.append((name, x.copy(), None if y is None else np.asarray(y, F32).copy(), out.copy()))
        return out

    def d(self, name, *args):
        """A double function (log, log2, pow, sqrt) correctly rounded."""
        with mpmath.workprec(MP_BITS):
            v = _mp_round(_D[name][1](*[mpmath.mpf(float(a)) for a in args]), 53, -1022, 1023)
        if self.record is not None:
            self.record.append((name, args, None, v))
        return v


class GLIBC(_Float):
    """glibc's float functions through ctypes, one element at a time; Python's math for doubles."""

    def __init__(self):
        libm = ctypes.CDLL("libm.so.6")
        self.fns = {n: getattr(libm, n) for n in _NP}
        for n, fn in self.fns.items():
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float] * (2 if n == "powf" else 1)

    def _f(self, name, x, y=None):
        args = np.broadcast_arrays(*[np.asarray(a, F32) for a in ((x,) if y is None else (x, y))])
        flat = [self.fns[name](*map(float, a)) for a in zip(*[b.reshape(-1) for b in args])]
        return np.array(flat, dtype=F32).reshape(args[0].shape)

    def d(self, name, *args):
        return _D[name][0](*args)


def libm_call_stats(record, glibc):
    """{name: [calls, differing, max ulps]}: each recorded CR call evaluated again with glibc."""
    stats = {}
    for name, x, y, out in record:
        st = stats.setdefault(name, [0, 0, 0])
        if name in _D:
            g = glibc.d(name, *x)
            st[0] += 1
            if not (g == out or (math.isnan(g) and math.isnan(out))):
                st[1] += 1
                a, b = np.array([g, out]).view(np.int64)
                st[2] = max(st[2], int(abs(int(a) - int(b))))
            continue
        g = getattr(glibc, name)(x, y)
        both_nan = np.isnan(g) & np.isnan(out)
        diff = (g.view(np.uint32) != out.view(np.uint32)) & ~both_nan
        st[0] += out.size
        st[1] += int(np.count_nonzero(diff))
        if diff.any():
            st[2] = max(st[2], int(np.max(ulps(g[diff], out[diff]))))
    return stats


def ordered(a):
    """float32 bits on the ordered integer line (-0 == +0)."""
    u = np.asarray(a, F32).view(np.uint32).astype(np.int64)
    return np.where(u >> 31, 0x80000000 - (u & 0x7FFFFFFF), u + 0x80000000)


def ulps(a, b):
    return np.abs(ordered(a) - ordered(b))


# =====================================================================================================
# The pipelines (numpy float32, each operation rounded as torch and pe.h / ffn.h round it)
# =====================================================================================================

def table(L, rows, d):
    """The sinusoidal table (torch mode), rows `rows`: s = F32(-ln(10000)/d), div = expf(F32(2i) s),
    pe[p, 2i] = sinf(F32(p) div), pe[p, 2i+1] = cosf(F32(p) div)."""
    s = F32(-L.d("log", 10000.0) / d)
    div = L.expf(np.arange(0, d, 2).astype(F32) * s)
    arg = np.asarray(rows).astype(F32)[:, None] * div[None, :]
    out = np.empty((len(rows), d), F32)
    out[:, 0::2] = L.sinf(arg)
    out[:, 1::2] = L.cosf(arg)[:, :d // 2]
    return out


def rope_cache(L, inv, positions, factor):
    """cos, sin (len(positions), half): cosf(F32(p) inv) * F32(factor)."""
    a = np.asarray(positions, np.int64).astype(F32)[:, None] * inv[None, :]
    return (L.cosf(a) * F32(factor)).astype(F32), (L.sinf(a) * F32(factor)).astype(F32)


def timestep(L, t, dim, flip, shift, scale, max_period):
    half = dim // 2
    out = np.zeros((len(t), dim), F32)
    if half == 0:
        return out
    lnp = F32(-L.d("log", max_period))
    div = F32(half - shift)
    with np.errstate(all="ignore"):
        ek = (lnp * np.arange(half).astype(F32)).astype(F32) / div
        e = L.expf(ek)
        a = (F32(scale) * (np.asarray(t, F32)[:, None] * e[None, :])).astype(F32)
    s, c = L.sinf(a), L.cosf(a)
    out[:, :half], out[:, half:2 * half] = (c, s) if flip else (s, c)
    return out


def alibi_slopes(L, heads, mode):
    p = 1
    while p <= heads // 2:
        p *= 2
    out = np.empty(heads, F32)
    for i in range(heads):
        q = p if i < p else 2 * p
        start = L.d("pow", 2.0, -L.d("pow", 2.0, -(L.d("log2", float(q)) - 3.0)))
        if mode == "paper":  # Python doubles: start * start ** k
            out[i] = F32(start * L.d("pow", start, float(i if i < p else 2 * (i - p))))
        else:                # BLOOM: float32 torch.pow(base, k)
            k = F32(i + 1 if i < p else 2 * (i - p) + 1)
            out[i] = L.powf(np.array([F32(start)]), np.array([k]))[0]
    return out


K_BETA = F32(math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5)  # M_SQRT2 * M_2_SQRTPI * 0.5
K_KAPPA = F32(0.044715)
K_ALPHA = F32(math.sqrt(0.5))                                 # M_SQRT1_2


def act(L, name, x):
    """torch 1.13's scalar kernels (ffn.h's non-FAST activations), float32 step by step."""
    x = np.asarray(x, F32)
    half, one = F32(0.5), F32(1)
    with np.errstate(all="ignore"):
        if name == "gelu":
            return (x * half * (one + L.erff(x * K_ALPHA))).astype(F32)
        if name == "gelu_tanh":
            inner = K_BETA * (x + K_KAPPA * (x * x * x))
            return (half * x * (one + L.tanhf(inner))).astype(F32)
        if name == "silu":
            return (x / (one + L.expf(-x))).astype(F32)
        if name == "sigmoid":
            return (one / (one + L.expf(-x))).astype(F32)
    raise ValueError(name)


def rope_scaled(L, rot, theta, cfg, seq_len):
    """(inv_freq (rot/2) float32, attention factor double) of HF's rope types (type "default": plain
    RoPE's), HF's Python doubles and float32 tensor steps (make_goldens.py's scaled_inv_freq_ref)."""
    t = cfg["type"]
    half = rot // 2
    af, based, lo, hi = 1.0, theta, 0.0, 0.0
    factor = cfg.get("factor", 0.0)
    if t == "dynamic":
        mp = cfg["max_pos"]
        seq = float(max(seq_len, mp))
        if not cfg.get("dynamic_as_module", 0):
            q = (factor * seq) / float(mp) - (factor - 1.0)
            based = theta * L.d("pow", q, float(rot) / float(rot - 2))
        elif seq_len > mp:
            q = F32(F32(F32(factor) * F32(seq_len)) / F32(mp)) - F32(factor - 1.0)
            pw = L.d("pow", float(q), float(rot) / float(rot - 2))
            based = float(F32(F32(theta) * F32(pw)))
    elif t == "yarn":
        def mscale(scale, m):
            return 1.0 if scale <= 1.0 else (0.1 * m) * L.d("log", scale) + 1.0
        ga, ms, msa = cfg.get("attention_factor", 0.0), cfg.get("mscale", 0.0), cfg.get("mscale_all_dim", 0.0)
        if ga > 0.0:
            af = ga
        elif ms != 0.0 and msa != 0.0:
            af = mscale(factor, ms) / mscale(factor, msa)
        else:
            af = mscale(factor, 1.0)
        orig = cfg["orig"]

        def dim_of(r):
            turns = (r * 2.0) * math.pi
            return (float(rot) * L.d("log", float(orig) / turns)) / (2.0 * L.d("log", theta))
        lo_, hi_ = dim_of(cfg.get("beta_fast", 32.0)), dim_of(cfg.get("beta_slow", 1.0))
        if cfg.get("truncate", 1):
            lo_, hi_ = math.floor(lo_), math.ceil(hi_)
        lo = 0.0 if lo_ < 0.0 else float(lo_)
        hi = float(rot - 1) if hi_ > rot - 1 else float(hi_)
        if lo == hi:
            hi += 0.001
    elif t == "longrope":
        ga = cfg.get("attention_factor", 0.0)
        if ga > 0.0:
            af = ga
        else:
            s = float(cfg["max_pos"]) / float(cfg["orig"]) if cfg.get("max_pos") else factor
            af = 1.0 if s <= 1.0 else L.d("sqrt", 1.0 + L.d("log", s) / L.d("log", float(cfg["orig"])))
    base = F32(based)
    e = (np.arange(half) * 2).astype(F32) / F32(rot)
    p = L.powf(np.full(half, base), e)
    v = (F32(1) / p).astype(F32)
    with np.errstate(all="ignore"):
        if t == "linear":
            inv = v / F32(factor)
        elif t == "yarn":
            interp = F32(1) / (F32(factor) * p).astype(F32)
            ramp = (np.arange(half).astype(F32) - F32(lo)).astype(F32) / F32(hi - lo)
            ramp = np.clip(ramp, F32(0), F32(1)).astype(F32)
            ee = (F32(1) - ramp).astype(F32)
            inv = (interp * (F32(1) - ee)).astype(F32) + (v * ee).astype(F32)
        elif t == "llama3":
            orig = float(cfg["orig"])
            fac, low_wl, high_wl = F32(factor), F32(orig / cfg["low"]), F32(orig / cfg["high"])
            wl = (F32(1) / v).astype(F32) * F32(2.0 * math.pi)
            lv = np.where(wl > low_wl, v / fac, v).astype(F32)
            sm_ = ((((F32(1) / wl).astype(F32) * F32(orig)).astype(F32) - F32(cfg["low"])).astype(F32)
                   / F32(cfg["high"] - cfg["low"])).astype(F32)
            sm = (((F32(1) - sm_) * lv).astype(F32) / fac).astype(F32) + (sm_ * lv).astype(F32)
            inv = np.where(~(wl < high_wl) & ~(wl > low_wl), sm, lv)
        elif t == "longrope":
            ext = cfg["long"] if seq_len > cfg["orig"] else cfg["short"]
            inv = F32(1) / (np.asarray(ext, F32) * p).astype(F32)
        else:
            inv = v
    return np.asarray(inv, F32), af
