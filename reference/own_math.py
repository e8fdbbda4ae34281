"""The library's own bits for the goldens whose values come from libm (imported by make_goldens.py).

pe.h and ffn.h compute torch's float32 pipelines operation for operation; where torch calls libm
(sinf, cosf, expf, powf, erff, tanhf; log, log2, pow in double for parameters) the library calls its
own functions, correctly rounded (round to nearest, ties to even). So the library's bits are those
pipelines with every libm result replaced by the correctly rounded value of the same function at the
same argument. This module evaluates both:

- GLIBC: glibc's functions through ctypes (float) and Python's math (double), one element at a time:
  the pipelines below with GLIBC reproduce torch's dispatch=glibc goldens bit for bit (asserted by
  make_goldens.py), which checks that they are torch's (and pe.h's) operations;
- CR: each float function correctly rounded. NumPy's float64 function of the float argument (within
  a few float64 ulps of the exact value) rounded to float32 is the correctly rounded result unless
  that float64 value lies within 16 float64 ulps of a float32 rounding boundary (a midpoint between
  two floats, or the overflow threshold); those few arguments are decided with mpmath at 320 bits
  (asserted to be far from the midpoint at that precision), with float32's subnormals and overflow.
  Double functions are mpmath's value at 320 bits rounded once to double.

NaN arguments give the argument (quiet) back, as glibc's functions do; infinities give the limits.
Every function records its calls (kind, name, arguments, result) when `record` is a list, so that
make_goldens.py can count how many libm results differ between GLIBC and CR."""
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


def mp_to_f32(v):
    return F32(_mp_round(v, 24, -126, 127))


def mp_to_f64(v):
    return _mp_round(v, 53, -1022, 1023)


_MP_F = {"sinf": mpmath.sin, "cosf": mpmath.cos, "expf": mpmath.exp, "erff": mpmath.erf,
         "tanhf": mpmath.tanh}
_MP_D = {"log": mpmath.log, "log2": lambda x: mpmath.log(x, 2), "exp": mpmath.exp, "sin": mpmath.sin,
         "cos": mpmath.cos, "sqrt": mpmath.sqrt, "pow": lambda x, y: mpmath.power(x, y)}


def _np_f64(name, x64, y64=None):
    with np.errstate(all="ignore"):
        if name == "sinf":
            return np.sin(x64)
        if name == "cosf":
            return np.cos(x64)
        if name == "expf":
            return np.exp(x64)
        if name == "tanhf":
            return np.tanh(x64)
        if name == "erff":
            return np.array([math.erf(v) for v in x64.reshape(-1)], dtype=np.float64).reshape(x64.shape)
        if name == "powf":
            return np.power(x64, y64)
    raise ValueError(name)


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
    """The float functions of a math library, each through the subclass's _f(name, ...)."""

    def sinf(self, x):
        return self._f("sinf", x)

    def cosf(self, x):
        return self._f("cosf", x)

    def expf(self, x):
        return self._f("expf", x)

    def erff(self, x):
        return self._f("erff", x)

    def tanhf(self, x):
        return self._f("tanhf", x)

    def powf(self, x, y):
        return self._f("powf", x, y)


class CR(_Float):
    """Correctly rounded float32 functions of float32 arrays; double functions of Python floats."""
    kind = "cr"

    def __init__(self, record=None):
        self.record = record
        self.hard_cases = 0

    def _f(self, name, x, y=None):
        x = np.asarray(x, F32)
        x64 = x.astype(np.float64)
        y64 = None if y is None else np.broadcast_to(np.asarray(y, F32), x.shape).astype(np.float64)
        if y64 is not None:
            x64, y64 = np.broadcast_arrays(x64, y64)
        v64 = _np_f64(name, x64, y64)
        with np.errstate(all="ignore"):
            out = v64.astype(F32)
        args_fin = np.isfinite(x64) if y64 is None else (np.isfinite(x64) & np.isfinite(y64))
        hard = args_fin & _hard(v64) & ~np.isinf(v64)   # (a float64 overflow is a float32 one too)
        for idx in zip(*np.nonzero(hard)):
            self.hard_cases += 1
            with mpmath.workprec(MP_BITS):
                a = mpmath.mpf(float(x64[idx]))
                v = mpmath.power(a, mpmath.mpf(float(y64[idx]))) if name == "powf" else _MP_F[name](a)
                out[idx] = mp_to_f32(v)
        nan = np.isnan(x64) if y64 is None else (np.isnan(x64) | np.isnan(y64))
        if nan.any() and y64 is None:   # NaN in, the same NaN (quiet) out, as glibc's x + x
            with np.errstate(all="ignore"):
                out[nan] = (x[nan] + x[nan]).astype(F32)
        if self.record is not None:
            self.record.append((name, x.copy(), None if y is None else np.asarray(y, F32).copy(), out.copy()))
        return out

    def d(self, name, *args):
        """A double function (log, log2, pow, exp, sin, cos, sqrt) correctly rounded."""
        with mpmath.workprec(MP_BITS):
            v = mp_to_f64(_MP_D[name](*[mpmath.mpf(float(a)) for a in args]))
        if self.record is not None:
            self.record.append((name, args, None, v))
        return v


class GLIBC(_Float):
    """glibc's float functions through ctypes, one element at a time; Python's math for doubles."""
    kind = "glibc"

    def __init__(self, record=None):
        self.record = record
        libm = ctypes.CDLL("libm.so.6")
        self.fns = {}
        for fname in ("sinf", "cosf", "expf", "erff", "tanhf"):
            fn = getattr(libm, fname)
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
            self.fns[fname] = fn
        fn = libm.powf
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
        self.fns["powf"] = fn

    def _f(self, name, x, y=None):
        x = np.asarray(x, F32)
        fn = self.fns[name]
        if y is None:
            flat = [fn(float(v)) for v in x.reshape(-1)]
            out = np.array(flat, dtype=F32).reshape(x.shape)
        else:
            xb, yb = np.broadcast_arrays(x, np.asarray(y, F32))
            flat = [fn(float(a), float(b)) for a, b in zip(xb.reshape(-1), yb.reshape(-1))]
            out = np.array(flat, dtype=F32).reshape(xb.shape)
        return out

    def d(self, name, *args):
        f = {"log": math.log, "log2": math.log2, "exp": math.exp, "sin": math.sin, "cos": math.cos,
             "sqrt": math.sqrt, "pow": math.pow}[name]
        return f(*args)


def libm_call_stats(record, glibc):
    """{name: [calls, differing, max ulps]}: each recorded CR call evaluated again with glibc."""
    stats = {}
    for name, x, y, out in record:
        st = stats.setdefault(name, [0, 0, 0])
        if name in ("log", "log2", "exp", "sin", "cos", "sqrt", "pow"):
            g = glibc.d(name, *x)
            st[0] += 1
            if not (g == out or (math.isnan(g) and math.isnan(out))):
                st[1] += 1
                a, b = np.array([g, out]).view(np.int64)
                st[2] = max(st[2], int(abs(int(a) - int(b))))
            continue
        g = glibc.powf(x, y) if name == "powf" else getattr(glibc, name)(x)
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

def f32(v):
    return F32(v)


def table(L, rows, d):
    """pe_sinusoidal_table (torch mode), rows `rows`: s = f32(-ln(10000)/d), div = expf(f32(2i) s),
    pe[p, 2i] = sinf(f32(p) div), pe[p, 2i+1] = cosf(f32(p) div)."""
    s = f32(-L.d("log", 10000.0) / d)
    div = L.expf(np.arange(0, d, 2).astype(F32) * s)
    arg = np.asarray(rows).astype(F32)[:, None] * div[None, :]
    out = np.empty((len(rows), d), F32)
    out[:, 0::2] = L.sinf(arg)
    out[:, 1::2] = L.cosf(arg)[:, :d // 2]
    return out


def rope_inv_freq(L, rot, theta):
    e = np.arange(0, rot, 2).astype(F32) / F32(rot)
    return (F32(1) / L.powf(np.full(e.shape, F32(theta)), e)).astype(F32)


def rope_cache(L, inv, positions, factor):
    """cos, sin (len(positions), half): cosf(f32(p) inv) * f32(factor)."""
    a = np.asarray(positions, np.int64).astype(F32)[:, None] * inv[None, :]
    return (L.cosf(a) * F32(factor)).astype(F32), (L.sinf(a) * F32(factor)).astype(F32)


def rope_apply(x, cos, sin, rot, bhsd, pairing):
    """HF's (x * cos) + (rotate_half(x) * sin) or Meta's real form; cos, sin (b, s, half)."""
    half = rot // 2
    c = cos[:, None, :, :] if bhsd else cos[:, :, None, :]
    s = sin[:, None, :, :] if bhsd else sin[:, :, None, :]
    out = np.array(x, F32, copy=True)
    with np.errstate(all="ignore"):
        if pairing == "half":
            x1, x2 = x[..., :half], x[..., half:rot]
            out[..., :half] = x1 * c + (-x2) * s
            out[..., half:rot] = x2 * c + x1 * s
        else:
            a, b = x[..., 0:rot:2], x[..., 1:rot:2]
            out[..., 0:rot:2] = a * c - b * s
            out[..., 1:rot:2] = a * s + b * c
    return out


def timestep(L, t, dim, flip, shift, scale, max_period):
    half = dim // 2
    out = np.zeros((len(t), dim), F32)
    if half == 0:
        return out
    lnp = f32(-L.d("log", max_period))
    div = f32(half - shift)
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
        if mode == "paper":
            q, k = (p, i) if i < p else (2 * p, 2 * (i - p))
            start = L.d("pow", 2.0, -L.d("pow", 2.0, -(L.d("log2", float(q)) - 3.0)))
            out[i] = f32(start * L.d("pow", start, float(k)))
        else:
            q = p if i < p else 2 * p
            base = f32(L.d("pow", 2.0, -L.d("pow", 2.0, -(L.d("log2", float(q)) - 3.0))))
            k = F32(i + 1 if i < p else 2 * (i - p) + 1)
            out[i] = L.powf(np.array([base]), np.array([k]))[0]
    return out


def alibi_bias(slopes, q_len, k_len, offset, causal):
    d = np.arange(k_len)[None, :] - (np.arange(q_len)[:, None] + offset)
    bias = (slopes[:, None, None] * (-np.abs(d)).astype(F32)[None]).astype(F32)
    if causal:
        bias = np.where((d > 0)[None], F32(-np.inf), bias).astype(F32)
    return bias


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
    """pe_rope_inv_freq_scaled: (inv_freq (rot/2) float32, attention factor double) of HF's rope types,
    as pe.h computes them (HF's Python doubles and float32 tensor steps; make_goldens.py's
    scaled_inv_freq_ref is HF's code in torch, which these equal bit for bit with GLIBC)."""
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
            q = f32(f32(f32(factor) * f32(seq_len)) / f32(mp)) - f32(factor - 1.0)
            pw = L.d("pow", float(q), float(rot) / float(rot - 2))
            based = float(f32(f32(theta) * f32(pw)))
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
    base = f32(based)
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
            fac, low_wl = F32(factor), F32(orig / cfg["low"])
            high_wl = F32(orig / cfg["high"])
            wl = (F32(1) / v).astype(F32) * F32(2.0 * math.pi)
            lv = np.where(wl > low_wl, v / fac, v).astype(F32)
            sm_ = (((F32(1) / wl).astype(F32) * F32(orig)).astype(F32) - F32(cfg["low"])).astype(F32) \
                / F32(cfg["high"] - cfg["low"])
            sm_ = sm_.astype(F32)
            sm = (((F32(1) - sm_) * lv).astype(F32) / fac).astype(F32) + (sm_ * lv).astype(F32)
            inv = np.where(~(wl < high_wl) & ~(wl > low_wl), sm, lv)
        elif t == "longrope":
            ext = cfg["long"] if seq_len > cfg["orig"] else cfg["short"]
            inv = F32(1) / (np.asarray(ext, F32) * p).astype(F32)
        else:
            inv = v
    return np.asarray(inv, F32), af
