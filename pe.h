/* pe.h - v2.0.0 - positional encodings for the input stage of a GPT-style transformer.
   Public domain or MIT (see the end of the file). No warranty.

   Do this:
      #define PE_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

      #include ...
      #define PE_IMPLEMENTATION
      #include "pe.h"

   No C math library is needed (pe.h calls none of its functions: -lm is not required,
   and harmless); link with -fopenmp if you compile with it.

   BITS AND THE PLATFORM
      Every result is the same on every platform, C library, compiler, path, thread count
      and flag set (-O0..-O3, -march=native, FMA contraction on or off, FLT_EVAL_METHOD
      0 or 1). The transcendental functions are pe.h's own, not the C library's:
      sinf, cosf, expf and powf inside torch's float32 formulas are CORRECTLY ROUNDED
      (the float nearest the exact value, ties to even) for every input, Inf and NaN
      as C99's Annex F says; the formulas' double steps (log, exp, pow, log2, sqrt, and
      the exact modes' sin/cos) are evaluated in double-double and rounded once
      (correctly rounded unless the exact value lies within about 2^-100 of a midpoint
      between doubles; none is known). Why: torch's float32 bits come from whatever
      libm it runs on (glibc 2.36's sinf/cosf differ from the correctly rounded value in
      about 1.3% of the table's angles, musl's and Windows' differ again, newer glibc
      releases change), so "torch's bits" are a property of one libm build; the
      correctly rounded value is the one definition that every platform can reproduce,
      and the most accurate. Measured against torch 1.13 run with
      ATEN_CPU_CAPABILITY=default on glibc 2.36, the torch-mode table, RoPE caches and
      timestep embeddings differ from torch by 1 ulp in the values where glibc's
      sinf/cosf/expf/powf are not correctly rounded (and the rotations built on them,
      by what that ulp carries); everything else (the float products and sums, inv_freq
      but for powf, the attention factors, the exact modes, ALiBi) is torch's bit for
      bit. tools/exhaustive.c (make exhaustive) checks sinf, cosf and expf on all 2^32
      inputs and powf on the exponents the library uses plus random pairs, against
      MPFR, and the double functions on random samples.
      The runtime pieces still used are plain IEEE operations: +, -, *, /, conversions,
      memcpy (floor, ceil and sqrt are computed here too). Requirements: double
      arithmetic that rounds to double (not the x87's extended precision: on 32-bit x86
      use -msse2 -mfpmath=sse). With -ffast-math the compiler may rewrite the exact
      arithmetic (the error terms of the double-double steps, the rounding checks):
      results are then close to, but not guaranteed equal to, the correctly rounded ones.

   QUICK START

      float *table = (float *)malloc(MAX_LEN * D * sizeof(float));  // (max_len, d_model)
      pe_sinusoidal_table(table, MAX_LEN, D);          // bit-for-bit PyTorch's buffer
      pe_add_batch_first_inplace(x, table, B, S, D, MAX_LEN);   // x is (B, S, D)
      int st = pe_embed(out, ids, wte, wpe, B, S, D, VOCAB, CTX);   // GPT-2 style
      if (st < 0) fprintf(stderr, "%s\n", pe_status_string(st));

   WHAT IT COMPUTES (shapes are PyTorch shapes, row-major, C order)

      pe_sinusoidal_table        table (max_len, d_model): the buffer `pe` of the usual
                                 PyTorch PositionalEncoding module ("Attention is all
                                 you need"; source documents 000, 001, 003), with its
                                 float32 arithmetic: position = arange(max_len).float(),
                                 div_term = exp(arange(0, d, 2).float() * f32(-ln(10000)/d)),
                                 pe[:, 0::2] = sin(position * div_term),
                                 pe[:, 1::2] = cos(position * div_term); i.e.
                                 s = f32(-ln(10000)/d), div[i] = expf(f32(2i) * s),
                                 pe[p,2i] = sinf(f32(p)*div[i]), pe[p,2i+1] = cosf(..)
                                 (expf, sinf, cosf correctly rounded: see BITS).
      pe_sinusoidal_table_exact  the same formula in double, rounded to float.
      pe_sinusoidal_table_fast   the same function as pe_sinusoidal_table (kept for
                                 the programs that call it; same bits, same speed).
      pe_add_batch_first         out (B,S,D) = x (B,S,D) + table[:S]: torch's
                                 x + pe[:, :S] with pe (1, max_len, D)      (000)
      pe_add_seq_first           out (S,B,D) = x (S,B,D) + table[:S]: torch's
                                 x + pe[:S] with pe (max_len, 1, D) broadcast over
                                 batch                                  (001, 003)
      pe_embed, pe_embed_i64     out (B,S,D) = wte[ids] + wpe[:S]: torch's
                                 tok_emb(ids) + pos_emb(arange(S)), GPT-2 style (002)
      pe_add_batch_first_backward, pe_add_seq_first_backward
                                 dtable (max_len, D) += the table's gradient for dout:
                                 the sum over the batch of dout[.., s, ..], s < S: torch's
                                 table.grad after (x + table[:S]).backward(dout), the
                                 table a Parameter (see TRAINING)
      pe_embed_backward, pe_embed_i64_backward
                                 dwte (vocab, D) += dout's rows at their ids, dwpe (ctx, D)
                                 += the sum over the batch: tok_emb.weight.grad and
                                 pos_emb.weight.grad of 002's pipeline

      pe_rope_inv_freq           inv_freq (rot/2): HF's default rotary inverse
                                 frequencies in float32: 1.0 / (theta ** (torch.arange(
                                 0, rot, 2, dtype=torch.int64).float() / rot)), i.e.
                                 1.0f / powf(f32(theta), f32(2i) / f32(rot)).
      pe_rope_cache              cos, sin (n, rot/2) for the positions start + pos[i] (or
                                 start + i): cosf(f32(p) * inv_freq[j]) * attention_factor;
                                 HF's rotary forward (freqs = inv_freq @ position_ids.float(),
                                 emb = cat((freqs, freqs), -1), emb.cos() * attention_scaling):
                                 its cos[..., :rot/2] (the second half repeats the first).
      pe_rope_cache_exact        the same formula in double (torch float64), rounded once.
      pe_rope_apply              q or k (batch, seq, heads, head_dim) or (batch, heads, seq,
                                 head_dim) rotated with a cache's rows: each pair (a, b) of
                                 the first rot dims becomes (a*c - b*s, b*c + a*s), the
                                 rest passes through. PE_ROPE_HALF: HF's
                                 q * cos + rotate_half(q) * sin (GPT-NeoX, HF Llama);
                                 PE_ROPE_INTERLEAVED: Meta's apply_rotary_emb (GPT-J).
      pe_rope_apply_direct       the same, cos/sin computed per token from inv_freq: the
                                 same bits as pe_rope_cache then pe_rope_apply.
      pe_rope_apply_backward, pe_rope_apply_direct_backward
                                 dx = x.grad of the rotation for dout: each pair rotated
                                 by the opposite angle, the rest copied.
      pe_rope_inv_freq_scaled    inv_freq (rot/2) and the attention factor of HF's long-
                                 context rope types (linear, dynamic, yarn, llama3,
                                 longrope): ROPE_INIT_FUNCTIONS[rope_type](config, device,
                                 seq_len); feed both to pe_rope_cache / _apply_direct.
      pe_rope_scaling_init       a pe_rope_scaling with its type and HF's defaults.
      pe_alibi_slopes            ALiBi's head slopes (heads): the paper's get_slopes
                                 (PE_ALIBI_PAPER) or BLOOM's build_alibi_tensor (PE_ALIBI_BLOOM).
      pe_alibi_bias              bias (heads, q_len, k_len) = -slope * |i + offset - j|,
                                 -inf above the diagonal when causal.
      pe_timestep_embedding      out (n, dim): diffusion models' timestep embedding of float
                                 timesteps (n): diffusers' get_timestep_embedding (flip_sin_to_cos,
                                 downscale_freq_shift, scale, max_period) and ldm's
                                 timestep_embedding (flip 1, shift 0, scale 1), their float32
                                 steps: [sin | cos] or [cos | sin] of f32(scale) * (t * e[k]),
                                 e[k] = expf(f32(-ln max_period) * k / f32(dim/2 - shift)).

   ROTARY EMBEDDINGS (RoPE)
      Usage, HF Llama (half-split) with a KV cache, q (batch, seq, heads, head_dim):
         pe_rope_inv_freq(inv, head_dim, 500000.0);
         pe_rope_cache(cos, sin, inv, head_dim, 1.0f, NULL, 0, max_len);  // (max_len, hd/2)
         pe_rope_apply(q, q, batch, seq, heads, head_dim, head_dim, PE_ROPE_BSHD,
                       PE_ROPE_HALF, cos, sin, max_len, NULL, n_past);
      The pairing and the layout have no default (0 is PE_ERR_ENUM): a checkpoint trained
      with one pairing gives wrong attention with the other and no error, so say which.
      Which model uses which (from each model's published code): HF transformers'
      Llama, Mistral, Qwen2, Gemma, Phi-3, GPT-NeoX: PE_ROPE_HALF (rotate_half; HF
      permutes Meta's checkpoints' q/k weights on conversion so that half-split applies);
      Meta's own Llama code, GPT-J, ggml's "normal" mode: PE_ROPE_INTERLEAVED (ggml's
      NEOX mode is PE_ROPE_HALF). Partial rotary (GPT-NeoX rotary_pct, Phi): rot < head_dim,
      the exponent divided by rot, not by head_dim.
      Positions: token (b, s) uses p = start + (pos ? pos[b*seq + s] : s), pos (batch,
      seq) int64 (HF's position_ids: packed sequences, left padding) or NULL (start =
      tokens already in the KV cache). pe_rope_apply reads cache row p (so p < cache_len;
      a cache built from position P0 takes rows p - P0). Positions are 0..PE_ROPE_MAX_POS.
      Precision, as torch: the angle is f32(p) * inv_freq in float32. Past 2^24 f32(p)
      is not p (2^24 + 1 rounds to 2^24: neighbouring tokens get the same rotation), and
      below that the float32 angle is about p * 2^-24 radians off the exact one (cos/sin
      of the float angle then differ from the formula's by up to ~p * 2^-24). The
      goldens pin this down at positions past 2^16 and 2^24; pe_rope_cache_exact gives
      the formula's value (double angle, rounded once).
      Bits: every RoPE function computes torch's float32 steps (the same float products
      and sums in the same order, never an FMA) with correctly rounded powf, cosf and
      sinf (BITS, at the top), on every path: torch run with ATEN_CPU_CAPABILITY=default
      has the same bits wherever its libm's powf/cosf/sinf are correctly rounded (glibc
      2.36's are not always: 1 ulp apart there, carried on by the rotation). Torch's
      default vector dispatch uses SLEEF's powf/cosf/sinf, 1 ulp off here and there
      (MANIFEST.txt: cos/sin 1 ulp apart in up to ~30% of values, outputs within
      ~2^-21 of |x|). Meta's complex form (torch.polar, complex multiply) equals the
      real form under torch's scalar dispatch and differs from it in some values under
      the default one (both recorded in the goldens). pe_rope_apply with a
      pe_rope_cache_exact cache rotates by the formula's angles. Long-context scaling:
      below.

   LONG-CONTEXT RoPE SCALING (HF transformers' rope types, modeling_rope_utils.py)
      A scaling type changes inv_freq and may set an attention factor (HF's
      attention_scaling: cos and sin are multiplied by it). pe_rope_inv_freq_scaled
      returns both; nothing else changes:
         pe_rope_scaling sc;
         float inv[64], af;
         pe_rope_scaling_init(&sc, PE_ROPE_SCALING_LLAMA3);     // Llama 3.1's config:
         sc.factor = 8.0; sc.low_freq_factor = 1.0; sc.high_freq_factor = 4.0;
         sc.original_max_position_embeddings = 8192;
         pe_rope_inv_freq_scaled(inv, &af, 128, 500000.0, &sc, seq_len);
         pe_rope_cache(cos, sin, inv, 128, af, NULL, 0, max_len);   // then pe_rope_apply
      dim below is rot, the rotary dims: partial rotary divides every exponent by rot,
      not by head_dim (HF: dim = int(head_dim * partial_rotary_factor)). e_i =
      f32(2i) / f32(rot), p_i = powf(f32(theta), e_i) and d_i = 1 / p_i (pe_rope_inv_freq)
      are float32, as HF's tensors; the scalars are Python doubles, rounded to float where
      they enter a float32 tensor op. torch's `scalar / tensor` is the tensor's reciprocal
      times f32(scalar) (not a division: measured), `tensor / scalar` a true division.
      PE_ROPE_SCALING_DEFAULT   "default": d_i, attention factor 1.
      PE_ROPE_SCALING_LINEAR    "linear" (position interpolation: LongChat-13B-16k factor
                                8, Vicuna-13B-v1.5-16k factor 4; CodeLlama raised theta
                                instead, no scaling type): inv_freq /= factor,
                                i.e. d_i / f32(factor); attention factor 1.
      PE_ROPE_SCALING_DYNAMIC   "dynamic" (dynamic NTK): with n = max(seq_len, max_pos),
                                base = theta * ((factor * n / max_pos) - (factor - 1)) **
                                (dim / (dim - 2)) in doubles, then 1 / powf(f32(base),
                                e_i); at or below max_pos this is the default (HF's
                                rotary module resets to it). rot 2 is PE_ERR_ROT (dim -
                                2 = 0). seq_len as a Python int, as the function is
                                documented. dynamic_as_module = 1: as HF's rotary
                                module (dynamic_rope_update) runs it, seq_len =
                                torch.max(position_ids) + 1 a 0-dim int64 tensor:
                                at or below max_pos the default frequencies, above,
                                q = (f32(factor) * f32(seq_len)) / f32(max_pos) -
                                f32(factor - 1) in float32, base = f32(theta) *
                                f32(pow(double(q), dim / (dim - 2))) (torch's pow of a
                                0-dim tensor is std::pow in double). The two differ in
                                the last bit of base for some lengths (then in many
                                frequencies). HF's module also keeps the frequencies of
                                the longest seq_len seen until it falls back below
                                max_pos: pass that length (pe.h keeps no state).
      PE_ROPE_SCALING_YARN      "yarn" (Qwen2.5 with factor 4 / original 32768,
                                DeepSeek-V3, gpt-oss): get_mscale(s, m) = 1 if s <= 1
                                else 0.1 * m * ln(s) + 1; attention factor = the given
                                one, else get_mscale(factor, mscale) /
                                get_mscale(factor, mscale_all_dim) when both are set (not
                                0), else get_mscale(factor). Correction dims: dim(b) =
                                (dim * ln(original / (b * 2 * pi))) / (2 * ln(theta));
                                low = dim(beta_fast), high = dim(beta_slow), floored /
                                ceiled when truncate (HF's default; gpt-oss sets it
                                false), low = max(low, 0), high = min(high, dim - 1),
                                high += 0.001 if equal. ramp_i = clamp((f32(i) - f32(low))
                                / f32(high - low), 0, 1), k_i = 1 - ramp_i; inv_freq =
                                (1 / (f32(factor) * p_i)) * (1 - k_i) + d_i * k_i.
                                The attention factor is HF's final multiplier of cos and
                                sin. ggml/llama.cpp's attn_factor is not: ggml's rope
                                multiplies it again by 1 + 0.1 * ln(1 / freq_scale)
                                internally (when its ext_factor is not 0), so
                                an HF value passed to ggml (or a ggml value passed here)
                                is off by that factor. HF versions differ on the factor
                                of a config that has original_max_position_embeddings
                                (some use max_position_embeddings / that, as DeepSeek-
                                V3's 163840 / 4096 = 40 = its factor): pass the factor
                                your reference uses. beta_fast < beta_slow: HF only
                                warns, and pe.h computes it likewise.
      PE_ROPE_SCALING_LLAMA3    "llama3" (Llama 3.1: factor 8, low 1, high 4, original
                                8192, theta 500000; Llama 3.2: factor 32): wl_i =
                                (1 / d_i) * f32(2 pi); l_i = wl_i > f32(orig / low) ?
                                d_i / f32(factor) : d_i; s_i = ((1 / wl_i) * f32(orig) -
                                f32(low)) / f32(high - low); between the two wavelengths
                                (neither wl_i < f32(orig / high) nor wl_i > f32(orig /
                                low)) inv_freq = ((1 - s_i) * l_i) / f32(factor) + s_i *
                                l_i, else l_i; attention factor 1.
      PE_ROPE_SCALING_LONGROPE  "longrope" (Phi-3 / Phi-3.5 / Phi-4-mini, "su" in early
                                configs): ext = long_factor if seq_len > original (the
                                CURRENT length, largest position + 1, not the allocated
                                context) else short_factor (rot/2 floats each);
                                inv_freq = 1 / (ext_i * p_i); attention factor = the
                                given one, else with s = max_position_embeddings /
                                original (or factor when max_position_embeddings is 0:
                                configs without original_max_position_embeddings), 1 if
                                s <= 1, else sqrt(1 + ln(s) / ln(original)). Older HF
                                versions chose the long factors whenever the model's
                                context exceeded the original, whatever seq_len.
      Bits: inv_freq and the attention factor are the HF formulas' float32 and double
      steps, with correctly rounded powf and pe.h's own logs, pows and sqrt in double
      (BITS, at the top): torch under ATEN_CPU_CAPABILITY=default on glibc 2.36 has the
      same attention factors and the same inv_freq but where glibc's powf is not
      correctly rounded (the op=rope_scaling goldens, positions past the original
      context). The attention factor is returned as a
      float: torch multiplies cos and sin by the Python float rounded to float32.

   ALiBi
      pe_alibi_slopes(slopes, heads, mode): for a power of two n, slope h = 2^(-8(h+1)/n);
      other counts take the closest power of two p's slopes, then every other slope of 2p.
      PE_ALIBI_PAPER: the paper's get_slopes in Python doubles, rounded to float32
      (torch.tensor(get_slopes(n))); PE_ALIBI_BLOOM: float32 torch.pow(base, k) as BLOOM
      (and HF's build_alibi_tensor); they differ in the last bits for 12, 16, 30, 112
      heads (the goldens count them). pe_alibi_bias: query i at position i + offset,
      bias[h,i,j] = slopes[h] * -|i + offset - j| (torch's int distance promoted to
      float32, one product; +0 on the diagonal), and causal = 1 masks j > i + offset with
      -inf (causal = 0: the symmetric form). BLOOM's own tensor is slope * j (per key),
      which softmax turns into the same weights within a causal row.

   TRAINING (the backward functions: autograd's gradients, as .grad holds them)
      x + table, either layout: x.grad is dout itself (nothing to call). The table's
      gradient, accumulated into dtable (max_len, d_model) as autograd accumulates into
      .grad (zero dtable first for the gradient alone):
         pe_add_batch_first_backward(dtable, dout, B, S, D, MAX_LEN);  // dout (B, S, D)
         pe_add_seq_first_backward(dtable, dout, S, B, D, MAX_LEN);    // dout (S, B, D)
      dtable[s,:] += the sum over b of dout at (b, s), for s < S: the sum first, then one
      addition onto dtable, as torch's .grad += sum. Rows s >= S are not written (torch
      adds zeros there, which turns a -0.0 into +0.0 and changes nothing else). The sum
      over the batch is the one torch computes (autograd's sum_to; ATen's cascade_sum),
      in its order, so the bits are torch's. It is a reduction of B rows and n columns:
      batch-first one of n = S * D columns (dout[b] flattened), seq-first one of n = D
      columns per position. Column c < n/32*32 (n/4*4 when n < 8) takes the cascade:
      four float accumulators from +0; the rows in chunks of 2^p (p = max(4,
      ceil(log2 B)/4): chunks of 16 up to 2^19 rows) summed into level 0, which is then
      added into level 1 and cleared; level 1 goes on into level 2 when the rows so far
      are a multiple of 2^2p, level 2 into level 3 at multiples of 2^3p; the rows after
      the last whole chunk go into level 0; the sum is ((l0 + l1) + l2) + l3 (below 16
      rows simply ((0 + x0) + x1) + ...). The other columns take torch's row_sum: the
      column as four interleaved sequences (rows 4i + k), each summed by the cascade,
      the last B % 4 rows added to the first, then ((s0 + s1) + s2) + s3. D = 1 with
      contiguous values (seq-first, or batch-first with S = 1) and B >= 8: 0 plus the
      last B % 8 values in turn, plus the 8 row_sums of x[8v + l] (l = 0..7) in turn.
      (n/32*32: torch's vectors of 8 floats, those of its AVX2 and its scalar "default"
      dispatch; a torch dispatching AVX-512 (16 floats) sums up to 63 more columns of a
      reduction by row_sum. Any two such orders agree within 2 gamma_B S, S = |dtable| +
      the sum of the |values|, gamma_m = m u / (1 - m u), u = 2^-24.)
      The embedding, 002's tok_emb(ids) + pos_emb(arange(S)):
         pe_embed_backward(dwte, dwpe, dout, ids, B, S, D, VOCAB, CTX);
      dwpe as pe_add_batch_first_backward's dtable (torch's bits); dwte[ids[t],:] +=
      dout[t,:] + 0 for every token t = b*S + s in token order ((g + 0) is g, but +0.0
      for -0.0: torch adds the rows onto a zero-filled table). torch
      (embedding_dense_backward) sums each id's rows from zero in token order and adds
      that sum to .grad once: the same bits where dwte starts at zero (zero_grad) or an id
      occurs once; an id that occurs m >= 2 times onto a non-zero dwte gives ((d0 + g1) +
      g2) + .. here, d0 + ((0 + g1) + g2 ..) in torch: within 2 gamma_m (|d0| + sum |g|)
      of each other. For torch's bits while accumulating over micro-batches, run each one
      into a zeroed buffer and add the buffer to the gradient (d0 + T, as torch). Rows no
      token uses are not written. dwte or dwpe may be NULL (a frozen token table; a
      frozen or sinusoidal position table), not both; the ids are checked either way.
      RoPE: pe_rope_apply_backward and pe_rope_apply_direct_backward take pe_rope_apply's
      and pe_rope_apply_direct's arguments with dout in place of x and write dx: each pair
      (ga, gb) of dout becomes (ga*c + gb*s, gb*c - ga*s), the rotation by the opposite
      angle, with the forward's rounded products and sums (the forward's arithmetic with
      the sine negated, exactly). autograd computes these very products and sums for HF's
      q * cos + rotate_half(q) * sin (grad * cos plus rotate_half's transpose of grad *
      sin) and for Meta's real form: the bits are torch's, but for the sign of a zero
      (autograd adds the zero-filled gradients of the slices it took, rotate_half's halves
      and x[..., :rot] / x[..., rot:], where -0.0 + 0 is +0.0). The dims past rot are
      copied: dx = dout there. dx may equal dout.
      No result depends on the path or the thread count: threads take whole columns (the
      sums) or whole rows (RoPE), and each path does the scalar loop's additions lane by
      lane.

   The layout is part of each add's name. 001/003's module silently accepts a
   batch-first tensor and then adds the position of the *batch* index; in C you say
   which layout you have. Any float table works with the adds: sinusoidal or learned.

   THE THREE TABLE MODES
      pe_sinusoidal_table reproduces torch's float32 steps with correctly rounded expf,
      sinf and cosf (BITS, at the top): torch run with ATEN_CPU_CAPABILITY=default has
      the same bits wherever its libm's are correctly rounded (glibc 2.36's sinf/cosf
      are not in about 1.3% of the angles: 1 ulp apart there), and it is within
      2^-22 * max(pos,1) of torch's default vector dispatch (SLEEF's expf is 1 ulp off
      for some div terms, and that error is multiplied by pos). The float32 table is itself about
      pos ulps away from the formula: pe_sinusoidal_table_exact differs from it by up
      to ~1.3 * pos * 2^-24 (about 4e-4 at pos 5000). Choose torch mode to match a
      trained model, exact mode to match the formula.
      The exact mode is torch's float64 code then .float(): the float of the correctly
      rounded double (two roundings, as torch). Neither mode uses the C library, so
      both give the same bits everywhere (-ffast-math: see BITS).
      pe_sinusoidal_table_fast is pe_sinusoidal_table (it was a faster variant whose
      sin/cos were correctly rounded while torch mode's came from libm; torch mode now
      runs that vectorised code, with a check that sends the rare lanes it cannot
      decide to the scalar specification).

   ERRORS
      Every function returns PE_OK (0) or a negative status, and on error writes
      nothing to any output. pe_status_string() names a status. Checked, in order:
         PE_ERR_NULL          a pointer argument is NULL
         PE_ERR_ZERO_SIZE     a size argument is 0
         PE_ERR_OVERFLOW      a buffer's size in bytes does not fit in size_t
         PE_ERR_ODD_D_MODEL   sinusoidal table with odd d_model (torch raises too)
         PE_ERR_SEQ_TOO_LONG  seq > max_len (or > context_length)
         PE_ERR_ALIAS         an output overlaps an input (other than out == x)
         PE_ERR_ID_RANGE      a token id < 0 or >= vocab
         PE_ERR_ROT           RoPE: rot odd or > head_dim
         PE_ERR_ENUM          layout, pairing, ALiBi mode or causal not one of its values
         PE_ERR_PARAM         theta, attention_factor or max_period NaN, infinite or <= 0;
                              a timestep embedding's shift or scale not finite; a RoPE
                              scaling parameter out of its range (pe_rope_inv_freq_scaled:
                              factor, beta_fast, beta_slow, low/high_freq_factor, the
                              factor lists: finite, > 0 and finite as floats; mscale,
                              mscale_all_dim, attention_factor: finite, >= 0 (0: HF's
                              None); low < high; YaRN's theta == 1 or a correction dim
                              past 2^24; a derived base or attention factor not finite)
         PE_ERR_POSITION      a position < 0, > PE_ROPE_MAX_POS, or past the cache
      pe_set_path() can also return
         PE_ERR_PATH          no path of that name in this build
         PE_ERR_CPU           this CPU (or its OS) cannot run that path
      The status names the kind of error, not the argument: the header keeps no
      per-call state (no errno-like last error; thread safety), so a failed call's
      only output is its status. Each kind concerns few of the call's arguments
      (NULL: its pointers; ZERO_SIZE: its sizes; SEQ_TOO_LONG: seq against max_len or
      context_length; ALIAS: out against x, table, wte, wpe, ids; ID_RANGE: the ids,
      all checked before anything is written), and the first failing check in the
      order above is the one reported. The RoPE, ALiBi and timestep functions check
      NULL, ZERO_SIZE, OVERFLOW, ROT, ENUM, PARAM, ALIAS, POSITION in that order
      (positions: every one, before anything is written). pe_rope_inv_freq_scaled checks
      NULL (inv_freq, attention_factor, scaling; longrope: either factor list), ZERO_SIZE
      (rot; dynamic, longrope: seq_len; dynamic: max_position_embeddings; yarn, llama3,
      longrope: original_max_position_embeddings), OVERFLOW, ROT (odd; dynamic: 2), ENUM
      (type; yarn: truncate not 0 or 1), PARAM, ALIAS (the two outputs, the struct,
      longrope's lists) in that order; fields a type does not use are not checked.
      The backward functions check as their forward functions do: the adds' (NULL:
      dtable, dout; ALIAS: the whole (max_len, d_model) dtable against dout), the
      embedding's (NULL: dout, ids, or dwte and dwpe both; ALIAS: each output against
      dout, ids and the other output; ID_RANGE), RoPE's (dx and dout in the places of
      out and x).

   MEMORY, THREADS, ALIASING
      No allocation. The only global state is the cached choice of path (below); every
      function is thread-safe on distinct outputs. Buffers need float alignment only.
      The adds and the RoPE applies (and their backward functions: dx == dout) accept
      out == x (in place); any other overlap between an output and an input (cos and
      sin included) is PE_ERR_ALIAS.
      Built with OpenMP (-fopenmp), every function shares out the rows of a large
      output (256 KiB or more) among omp_get_max_threads() threads, one contiguous
      range each (the table and embedding gradients: their columns, for 256 KiB of
      dout or more); called inside an active parallel region it runs on the calling
      thread only. Cap the threads with OMP_NUM_THREADS / omp_set_num_threads() or
      PE_NO_OPENMP. The bits do not depend on the thread count.

   PATHS (chosen at run time; the same bits on each)
      "avx512"  x86 with AVX-512F (and the OS saving the zmm state)
      "avx2"    x86 with AVX2 and FMA (and the OS saving the ymm state), as ffn.h's
                "avx2"; its kernels use AVX only. Called "avx" until 1.4: pe_set_path
                takes "avx" for "avx2" for one release more (not in pe_path_name's list)
      "sse2"    x86 with SSE2 (every x86-64)
      "neon"    aarch64 (not 32-bit ARM, whose NEON flushes denormals to zero)
      "scalar"  the plain C loops: the specification the others are tested against.
                Always compiled.
      The vector paths run the adds and the embedding (one IEEE add per element, lane
      by lane: the same bits), their gradients' sums (the same additions, lane by lane),
      the RoPE rotation (the same products and sums, lane by lane, never fused), ALiBi's
      bias rows (the same distances, exact in float below 2^24, and products; the scalar
      loop past that) and, on avx2 and avx512, pe_sinusoidal_table_fast's sin and cos
      (the same double operations, 4 and 8 at a time). On x86 with gcc, clang or
      MSVC every path is compiled whatever the flags (gcc and clang: function-level
      target attributes), and the first call picks the best one that the CPU and the
      OS support (cpuid and xgetbv), once; the choice is cached (an atomic int: threads
      racing through their first call are fine). If the flags guarantee the best path
      (e.g. -march=native on an AVX-512 machine) there is no CPU check at all.
      Compilers without target attributes (tcc, ...) and PE_NO_RUNTIME_DISPATCH compile
      only what the flags enable (plus scalar). PE_BASELINE_SIMD_NAME names the best
      path the flags alone guarantee (not the one calls run: pe_path()).

      pe_path()             the name of the path that calls run now
      pe_set_path(name)     run the named path from now on (NULL or "auto": the best
                            this CPU supports); PE_ERR_PATH / PE_ERR_CPU (and the
                            choice unchanged) if it cannot. For tests, benchmarks and
                            checking a new platform; not meant to race with calls on
                            other threads (each call reads the choice once).
      pe_path_name(i)       the paths of this architecture, best first (i = 0, 1, ..),
                            NULL after the last: e.g. "avx512", "avx2", "sse2", "scalar".

   OPTIONS (#define before including)
      PE_STATIC        make every function static (private to the file)
      PE_ASSERT(x)     your assert for internal invariants (default: assert.h)
      PE_NO_SIMD       compile the plain C path only (the readable specification)
      PE_NO_RUNTIME_DISPATCH  compile only the paths the compiler flags enable, and
                       never run cpuid (the best of them is used)
      PE_NO_AVX512     x86: leave the AVX-512 path out (the AVX2 path runs there; the
                       same bits): a smaller build, or coverage on a CPU without it
      PE_NO_OPENMP     ignore -fopenmp: everything runs on the calling thread
      PE_NONTEMPORAL_BYTES  x86: an out-of-place add or an embedding whose output is
                       at least this many bytes (default 16 MiB; 0 = always, SIZE_MAX =
                       never) writes it with non-temporal stores: it goes to memory
                       without being read first and without evicting the inputs from
                       cache (an output that large would not stay in cache anyway).
                       The same bits either way.

   CONTENTS (of the implementation: each region opens with a line "==== N. TITLE ====")
      1. CONFIGURATION                      the paths compiled, their targets, tunables
      2. COMMON                             argument checks, the parallel split, the path type
      3. THE LIBRARY'S OWN MATH             correctly rounded sinf..powf, sin..pow in dd
      4. SINUSOIDAL TABLES                  sin/cos of float angles, every path; tables
      5. ADDING A TABLE                     the add kernels, pe_add_*
      6. TOKEN AND POSITION EMBEDDINGS      pe_embed, pe_embed_i64
      7. TRAINING THE ADDS AND EMBEDDINGS   the gradient kernels, the *_backward
      8. ROTARY POSITION EMBEDDINGS (ROPE)  its kernels, inv_freq, caches, applies
      9. ROPE SCALING                       the scaled inv_freq of HF's rope types
      10. ALIBI                             its row kernels, slopes, bias
      11. TIMESTEP EMBEDDING                diffusion models' timestep embedding
      12. PATHS                             the ISA blocks, cpuid, pe_path, pe_set_path

*/
#ifndef PE_H_INCLUDED
#define PE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define PE_VERSION_MAJOR 2
#define PE_VERSION_MINOR 0
#define PE_VERSION_PATCH 0
#define PE_VERSION_STRING "2.0.0"

/* PE_BASELINE_SIMD_NAME: the best path the compiler flags alone guarantee, i.e. the
   least this build runs on any CPU it can start on (a plain -O2 x86-64 build: "sse2").
   It is not the path calls run: with run-time dispatch (the default) they run the best
   path the CPU has, which pe_path() names ("avx512" on an AVX-512 machine).
   PE_SIMD_NAME is its old name (until 1.4), kept as an alias for one release more. */
#if defined(PE_NO_SIMD)
#define PE_BASELINE_SIMD_NAME "scalar"
#elif defined(__AVX512F__)
#define PE_BASELINE_SIMD_NAME "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
#define PE_BASELINE_SIMD_NAME "avx2"
#elif defined(__SSE2__) || defined(_M_X64)
#define PE_BASELINE_SIMD_NAME "sse2"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define PE_BASELINE_SIMD_NAME "neon"
#else
#define PE_BASELINE_SIMD_NAME "scalar"
#endif
#define PE_SIMD_NAME PE_BASELINE_SIMD_NAME

#ifndef PEDEF
#ifdef PE_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define PEDEF static __attribute__((unused))   /* a file need not call every function */
#else
#define PEDEF static
#endif
#else
#define PEDEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses: 0 or negative. pe.h's errors are -101..-199 and ffn.h's -201..-299, so
   one handler can tell them apart; each header's status_string recognises the other's
   range. */
enum {
    PE_OK               =    0,
    PE_ERR_NULL         = -101,
    PE_ERR_ZERO_SIZE    = -102,
    PE_ERR_OVERFLOW     = -103,
    PE_ERR_ODD_D_MODEL  = -104,
    PE_ERR_SEQ_TOO_LONG = -105,
    PE_ERR_ALIAS        = -106,
    PE_ERR_ID_RANGE     = -107,
    PE_ERR_PATH         = -108,
    PE_ERR_CPU          = -109,
    PE_ERR_ROT          = -110,
    PE_ERR_PARAM        = -111,
    PE_ERR_POSITION     = -112,
    PE_ERR_ENUM         = -113
};

/* RoPE's two pairings, and the two layouts of q and k (no default: say which). */
enum {
    PE_ROPE_INTERLEAVED = 1,    /* pairs (x[2i], x[2i+1]): Meta Llama, GPT-J, ggml "normal" */
    PE_ROPE_HALF        = 2     /* pairs (x[i], x[i+rot/2]): GPT-NeoX, HF rotate_half */
};
enum {
    PE_ROPE_BSHD = 1,           /* (batch, seq, heads, head_dim) */
    PE_ROPE_BHSD = 2            /* (batch, heads, seq, head_dim) */
};
/* ALiBi's two ways to compute the slopes. */
enum {
    PE_ALIBI_PAPER = 1,         /* the paper's get_slopes in double, rounded to float */
    PE_ALIBI_BLOOM = 2          /* BLOOM's build_alibi_tensor: float32 powers */
};
/* The largest position a RoPE function accepts: 2^53, where a double stops counting. */
#define PE_ROPE_MAX_POS ((int64_t)1 << 53)

/* A static English message for a status ("ok", "pe: ..."); never NULL. */
PEDEF const char *pe_status_string(int status);

/* table is (max_len, d_model), as torch computes it in float32 (000, 001, 003).
   torch: PositionalEncoding(d_model, max_len).pe.view(max_len, d_model). d_model even. */
PEDEF int pe_sinusoidal_table(float *table, size_t max_len, size_t d_model);

/* The same as pe_sinusoidal_table (same bits): kept for the programs that call it. */
PEDEF int pe_sinusoidal_table_fast(float *table, size_t max_len, size_t d_model);

/* table is (max_len, d_model): the same formula in double, rounded once to float.
   torch: the module's code with dtype=torch.float64 throughout, then .float(). */
PEDEF int pe_sinusoidal_table_exact(float *table, size_t max_len, size_t d_model);

/* out, x are (batch, seq, d_model); table is (max_len, d_model); seq <= max_len.
   out[b,s,:] = x[b,s,:] + table[s,:].  torch (000): x + pe[:, :seq]. out may equal x. */
PEDEF int pe_add_batch_first(float *out, const float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len);
PEDEF int pe_add_batch_first_inplace(float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len);

/* out, x are (seq, batch, d_model); table is (max_len, d_model); seq <= max_len.
   out[s,b,:] = x[s,b,:] + table[s,:].  torch (001/003): x + pe[:seq] with pe
   (max_len, 1, d_model). out may equal x. */
PEDEF int pe_add_seq_first(float *out, const float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len);
PEDEF int pe_add_seq_first_inplace(float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len);

/* out is (batch, seq, d_model); ids (batch, seq); wte (vocab, d_model);
   wpe (context_length, d_model); seq <= context_length; 0 <= ids < vocab.
   out[b,s,:] = wte[ids[b,s],:] + wpe[s,:].
   torch (002): tok_emb(ids) + pos_emb(torch.arange(seq)). Ids are validated before
   anything is written. */
PEDEF int pe_embed(float *out, const int32_t *ids, const float *wte, const float *wpe,
                   size_t batch, size_t seq, size_t d_model, size_t vocab,
                   size_t context_length);
PEDEF int pe_embed_i64(float *out, const int64_t *ids, const float *wte, const float *wpe,
                       size_t batch, size_t seq, size_t d_model, size_t vocab,
                       size_t context_length);

/* Training (see TRAINING at the top). The gradient of x in the adds is dout itself
   (x.grad = dout: nothing to compute). */

/* dtable (max_len, d_model) += the table's gradient for dout (batch, seq, d_model):
   dtable[s,:] += sum over b of dout[b,s,:] for s < seq, in torch's summation order (rows
   s >= seq untouched). torch: table.grad after (x + table[:seq]).backward(dout) (000's
   x + pe[:, :seq] with pe a Parameter), accumulated as autograd accumulates into .grad. */
PEDEF int pe_add_batch_first_backward(float *dtable, const float *dout, size_t batch,
                                      size_t seq, size_t d_model, size_t max_len);

/* dtable (max_len, d_model) += the table's gradient for dout (seq, batch, d_model):
   dtable[s,:] += sum over b of dout[s,b,:] for s < seq, in torch's order. torch:
   pe.grad after (x + pe[:seq]).backward(dout), pe (max_len, 1, d_model) a Parameter
   (001/003). */
PEDEF int pe_add_seq_first_backward(float *dtable, const float *dout, size_t seq,
                                    size_t batch, size_t d_model, size_t max_len);

/* The embedding's gradients for dout (batch, seq, d_model): dwte (vocab, d_model) +=
   dout[b,s,:] on row ids[b,s] for every token in token order, dwpe (context_length,
   d_model) += sum over b of dout[b,s,:] on row s < seq (as pe_add_batch_first_backward).
   dwte or dwpe may be NULL (a frozen or a sinusoidal table), not both. Ids are validated
   before anything is written. torch (002): tok_emb.weight.grad and pos_emb.weight.grad
   after (tok_emb(ids) + pos_emb(torch.arange(seq))).backward(dout). */
PEDEF int pe_embed_backward(float *dwte, float *dwpe, const float *dout, const int32_t *ids,
                            size_t batch, size_t seq, size_t d_model, size_t vocab,
                            size_t context_length);
PEDEF int pe_embed_i64_backward(float *dwte, float *dwpe, const float *dout,
                                const int64_t *ids, size_t batch, size_t seq, size_t d_model,
                                size_t vocab, size_t context_length);

/* inv_freq (rot/2): HF's default rotary inverse frequencies in float32,
   torch: 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=torch.int64).float() / rot)).
   rot even (the rotary dims, <= head_dim: partial rotary divides by rot); theta > 0. */
PEDEF int pe_rope_inv_freq(float *inv_freq, size_t rot, double theta);

/* cos_out, sin_out (n, rot/2): row i for position p = start + (pos ? pos[i] : i),
   cos_out[i,j] = cos(f32(p) * inv_freq[j]) * attention_factor (sin likewise).
   torch (HF): freqs = position_ids.float()[:, None] * inv_freq[None, :];
   emb = cat((freqs, freqs), -1); cos = emb.cos() * attention_scaling, i.e. cos[..., :rot/2]
   (the second half repeats it). attention_factor 1.0f for the default rope type. */
PEDEF int pe_rope_cache(float *cos_out, float *sin_out, const float *inv_freq, size_t rot,
                        float attention_factor, const int64_t *pos, int64_t start, size_t n);

/* The same cache from the formula in double, rounded once: cos(p * theta^(-2j/rot)).
   torch: the code above in float64 (arange(...).double()), then .float(). */
PEDEF int pe_rope_cache_exact(float *cos_out, float *sin_out, size_t rot, double theta,
                              const int64_t *pos, int64_t start, size_t n);

/* out, x: (batch, seq, heads, head_dim) (PE_ROPE_BSHD) or (batch, heads, seq, head_dim)
   (PE_ROPE_BHSD). The first rot dims of each head rotate by pairing, the rest pass
   through; token (b, s) has position p = start + (pos ? pos[b*seq + s] : s), pos
   (batch, seq) or NULL, and takes row p of cos_c / sin_c (cache_len, rot/2), p < cache_len.
   Each pair (a, b) becomes (a*c - b*s, b*c + a*s), products and sums each rounded.
   torch: PE_ROPE_HALF: q * cos + rotate_half(q) * sin on q[..., :rot] (HF);
   PE_ROPE_INTERLEAVED: Meta's apply_rotary_emb in real arithmetic. out may equal x. */
PEDEF int pe_rope_apply(float *out, const float *x, size_t batch, size_t seq, size_t heads,
                        size_t head_dim, size_t rot, int layout, int pairing,
                        const float *cos_c, const float *sin_c, size_t cache_len,
                        const int64_t *pos, int64_t start);

/* pe_rope_apply with each token's cos/sin computed here from inv_freq (rot/2) and
   attention_factor as pe_rope_cache computes them: the same bits as building the cache
   and applying it; positions up to PE_ROPE_MAX_POS. */
PEDEF int pe_rope_apply_direct(float *out, const float *x, size_t batch, size_t seq,
                               size_t heads, size_t head_dim, size_t rot, int layout,
                               int pairing, const float *inv_freq, float attention_factor,
                               const int64_t *pos, int64_t start);

/* dx = the gradient of pe_rope_apply's x for dout (x's shape and layout), written: each
   pair (ga, gb) of dout becomes (ga*c + gb*s, gb*c - ga*s) (the rotation by the
   opposite angle), the dims past rot are copied. The same arguments as pe_rope_apply,
   dout in place of x; dx may equal dout. torch: x.grad after apply(x).backward(dout),
   apply HF's q * cos + rotate_half(q) * sin (PE_ROPE_HALF) or Meta's apply_rotary_emb in
   real arithmetic (PE_ROPE_INTERLEAVED). */
PEDEF int pe_rope_apply_backward(float *dx, const float *dout, size_t batch, size_t seq,
                                 size_t heads, size_t head_dim, size_t rot, int layout,
                                 int pairing, const float *cos_c, const float *sin_c,
                                 size_t cache_len, const int64_t *pos, int64_t start);

/* pe_rope_apply_backward with each token's cos/sin computed from inv_freq and
   attention_factor, as pe_rope_apply_direct: the same bits as the cache's. */
PEDEF int pe_rope_apply_direct_backward(float *dx, const float *dout, size_t batch,
                                        size_t seq, size_t heads, size_t head_dim, size_t rot,
                                        int layout, int pairing, const float *inv_freq,
                                        float attention_factor, const int64_t *pos,
                                        int64_t start);

/* Long-context RoPE scaling: HF transformers' rope types (modeling_rope_utils.py). */
enum {
    PE_ROPE_SCALING_DEFAULT  = 1,   /* "default": pe_rope_inv_freq, attention factor 1 */
    PE_ROPE_SCALING_LINEAR   = 2,   /* "linear": position interpolation */
    PE_ROPE_SCALING_DYNAMIC  = 3,   /* "dynamic": dynamic NTK */
    PE_ROPE_SCALING_YARN     = 4,   /* "yarn" */
    PE_ROPE_SCALING_LLAMA3   = 5,   /* "llama3" */
    PE_ROPE_SCALING_LONGROPE = 6    /* "longrope" (Phi-3's "su"/"longrope") */
};

/* One rope_scaling entry of an HF config. Fields a type does not use are ignored; a
   double 0 stands for HF's None where the comment says so. pe_rope_scaling_init sets
   HF's defaults. */
typedef struct {
    int type;                   /* PE_ROPE_SCALING_* */
    double factor;              /* linear, dynamic, yarn, llama3: > 0; longrope: s, used
                                   only when max_position_embeddings is 0 */
    size_t max_position_embeddings;          /* dynamic: the config's; longrope: the
                                                extended context (s = max / original) */
    size_t original_max_position_embeddings; /* yarn, llama3, longrope */
    double attention_factor;    /* yarn, longrope: given (> 0), or 0 (None): derived */
    double beta_fast, beta_slow;             /* yarn: > 0 (HF defaults 32, 1) */
    double mscale, mscale_all_dim;           /* yarn: >= 0; 0 is None (the default) */
    int truncate;               /* yarn: 1 (HF's default) floors/ceils the ramp's ends, 0 not */
    double low_freq_factor, high_freq_factor; /* llama3: 0 < low < high */
    const float *short_factor, *long_factor; /* longrope: rot/2 floats each, > 0 */
    int dynamic_as_module;      /* dynamic: 0 (default) the function with seq_len a Python
                                   int; 1 as HF's rotary module runs it (seq_len a tensor) */
} pe_rope_scaling;

/* Zeroes *s and sets its type and HF's defaults: beta_fast 32, beta_slow 1, truncate 1
   (factor stays 0: HF requires one, so do the scaling functions). PE_ERR_NULL,
   PE_ERR_ENUM (unknown type; *s untouched) or PE_OK. */
PEDEF int pe_rope_scaling_init(pe_rope_scaling *s, int type);

/* inv_freq (rot/2) and *attention_factor (the multiplier of cos and sin: pass both to
   pe_rope_cache or pe_rope_apply_direct) of an HF rope type, as HF's
   ROPE_INIT_FUNCTIONS[rope_type](config, device, seq_len) computes them (float32 tensor
   arithmetic, Python doubles for the scalars; see the top of the file for each
   formula). seq_len: the current sequence length (largest position + 1); dynamic and
   longrope depend on it (> 0), the others ignore it. rot even; theta > 0. */
PEDEF int pe_rope_inv_freq_scaled(float *inv_freq, float *attention_factor, size_t rot,
                                  double theta, const pe_rope_scaling *scaling,
                                  size_t seq_len);

/* slopes (heads): ALiBi's head slopes, any head count. PE_ALIBI_PAPER: the paper's
   get_slopes(heads) as torch.tensor(get_slopes(heads)) (float32); PE_ALIBI_BLOOM: BLOOM's
   build_alibi_tensor slopes (float32 torch.pow). */
PEDEF int pe_alibi_slopes(float *slopes, size_t heads, int mode);

/* bias (heads, q_len, k_len): query i sits at position i + offset (offset = keys already
   cached), key j at j; bias[h,i,j] = -(slopes[h] * |i + offset - j|), and with causal = 1,
   -inf where j > i + offset. torch: d = arange(k)[None, :] - (arange(q)[:, None] + offset);
   slopes[:, None, None] * -d.abs(), then .masked_fill(d > 0, -inf) if causal. */
PEDEF int pe_alibi_bias(float *bias, const float *slopes, size_t heads, size_t q_len,
                        size_t k_len, size_t offset, int causal);

/* out (n, dim): the sinusoidal timestep embedding of diffusion models for float
   timesteps (n). diffusers' get_timestep_embedding(timesteps, dim, flip_sin_to_cos,
   downscale_freq_shift, scale, max_period), in its float32 steps:
   e[k] = exp(f32(-ln(max_period)) * k / f32(dim/2 - downscale_freq_shift)),
   a = f32(scale) * (t * e[k]); out = [sin a | cos a], or [cos a | sin a] with
   flip_sin_to_cos = 1; odd dim: a last column of zeros. ldm's timestep_embedding(t, dim,
   max_period) is flip_sin_to_cos = 1, downscale_freq_shift = 0, scale = 1. */
PEDEF int pe_timestep_embedding(float *out, const float *timesteps, size_t n, size_t dim,
                                int flip_sin_to_cos, double downscale_freq_shift,
                                double scale, double max_period);

/* The path calls run now ("avx512", "avx2", "sse2", "neon" or "scalar"); picks the
   best one on first use. */
PEDEF const char *pe_path(void);

/* Runs the named path from now on; NULL or "auto" picks the best again. PE_OK,
   PE_ERR_PATH (not in this build) or PE_ERR_CPU (this CPU or OS lacks it). */
PEDEF int pe_set_path(const char *name);

/* Path i of this architecture, best first, whether or not this build or CPU has it;
   NULL for i past the last. */
PEDEF const char *pe_path_name(int i);

#ifdef __cplusplus
}
#endif
#endif /* PE_H_INCLUDED */

/* ======================================================================== */
#ifdef PE_IMPLEMENTATION
#ifndef PE_IMPLEMENTATION_DONE
#define PE_IMPLEMENTATION_DONE

/* ==== 1. CONFIGURATION ================================================================ */

#include <float.h>
#include <math.h>
#include <string.h>

#ifndef PE_ASSERT
#include <assert.h>
#define PE_ASSERT(x) assert(x)
#endif

/* ---- which paths this build compiles ----------------------------------
   PE__HAS_<path>: the path is compiled. PE__FLAGS_<path>: the compiler flags guarantee
   that the CPU runs it. PE__DISPATCH: x86 paths are compiled whatever the flags
   (target attributes; MSVC needs none) and chosen by cpuid. The loops that a plain -O2
   build would not vectorise (or not well) have a kernel per path: the adds, the
   embedding and their gradients' sums, the RoPE rotation, ALiBi's rows and the sin/cos
   of the table, the RoPE caches and the timestep embedding; the rest is plain C. */
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define PE__ARCH_X86 1
#endif
#if defined(PE__ARCH_X86) && !defined(PE_NO_SIMD)
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define PE__FLAGS_SSE2 1
#endif
/* the avx2 path: CPUs with AVX2 and FMA, as ffn.h's (every AVX-512 CPU has them) */
#if (defined(__AVX2__) && defined(__FMA__)) || defined(__AVX512F__)
#define PE__FLAGS_AVX 1
#endif
#if defined(__AVX512F__) && !defined(PE_NO_AVX512)
#define PE__FLAGS_AVX512 1
#endif
#if !defined(PE_NO_RUNTIME_DISPATCH) && !defined(PE__FLAGS_AVX512) &&                    \
    (defined(__clang__) || defined(_MSC_VER) ||                                          \
     (defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 9))))
#define PE__DISPATCH 1
#endif
#if defined(PE__DISPATCH) || defined(PE__FLAGS_SSE2)
#define PE__HAS_SSE2 1
#endif
#if defined(PE__DISPATCH) || defined(PE__FLAGS_AVX)
#define PE__HAS_AVX 1
#endif
#if (defined(PE__DISPATCH) || defined(PE__FLAGS_AVX512)) && !defined(PE_NO_AVX512)
#define PE__HAS_AVX512 1
#endif
#elif !defined(PE_NO_SIMD) && defined(__aarch64__) && defined(__ARM_NEON)
#define PE__HAS_NEON 1      /* not 32-bit ARM: AArch32 NEON flushes denormals to zero */
#endif

/* A function compiled for more than the flags give (gcc and clang). */
#if defined(PE__DISPATCH) && (defined(__GNUC__) || defined(__clang__))
#define PE__TARGET(isa) __attribute__((target(isa)))
#else
#define PE__TARGET(isa)
#endif
#ifdef PE__FLAGS_SSE2
#define PE__TARGET_SSE2
#else
#define PE__TARGET_SSE2 PE__TARGET("sse2")
#endif
#ifdef PE__FLAGS_AVX
#define PE__TARGET_AVX
#else
#define PE__TARGET_AVX PE__TARGET("avx")
#endif
#define PE__TARGET_AVX512 PE__TARGET("avx512f")
#if defined(_MSC_VER) && !defined(__cplusplus)
#define PE__INLINE __inline
#else
#define PE__INLINE inline
#endif

#if defined(PE__HAS_AVX) || defined(PE__HAS_AVX512)
#include <immintrin.h>
#elif defined(PE__HAS_SSE2)
#include <emmintrin.h>
#elif defined(PE__HAS_NEON)
#include <arm_neon.h>
#endif
#ifndef PE_NONTEMPORAL_BYTES
#define PE_NONTEMPORAL_BYTES ((size_t)16 << 20)
#endif
/* (a variable, not the macro, in the comparisons: a threshold of 0 must not warn) */
static const size_t pe__nontemporal_bytes = PE_NONTEMPORAL_BYTES;
/* A read hint for a cache line (no effect on results; none where unknown). */
#if defined(__GNUC__) || defined(__clang__)
#define PE__PREFETCH(p) __builtin_prefetch(p)
#elif defined(_MSC_VER) && defined(PE__HAS_SSE2)
#define PE__PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define PE__PREFETCH(p) ((void)(p))
#endif

/* ==== 2. COMMON ======================================================================= */

/* ---- argument checks -------------------------------------------------- */

/* *n = a * b * sizeof(float) in bytes; 0 when it does not fit in size_t. */
static int pe__bytes(size_t *n, size_t a, size_t b)
{
    const size_t max = (size_t)-1;
    if (a > max / b || a * b > max / sizeof(float)) return 0;
    *n = a * b * sizeof(float);
    return 1;
}

/* Byte ranges [a, a+an) and [b, b+bn) share a byte. Compared as integers: relational
   operators on pointers into different objects are undefined in C. */
static int pe__overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    return ua < ub + bn && ub < ua + an;
}

PEDEF const char *pe_status_string(int status)
{
    switch (status) {
    case PE_OK:               return "ok";
    case PE_ERR_NULL:         return "pe: a pointer argument is NULL";
    case PE_ERR_ZERO_SIZE:    return "pe: a size argument is zero";
    case PE_ERR_OVERFLOW:     return "pe: a buffer size overflows size_t";
    case PE_ERR_ODD_D_MODEL:  return "pe: the sinusoidal table needs an even d_model";
    case PE_ERR_SEQ_TOO_LONG: return "pe: seq is longer than the position table";
    case PE_ERR_ALIAS:        return "pe: an output buffer overlaps an input buffer";
    case PE_ERR_ID_RANGE:     return "pe: a token id is negative or >= vocab";
    case PE_ERR_PATH:         return "pe: no such path in this build";
    case PE_ERR_CPU:          return "pe: this CPU (or its OS) cannot run that path";
    case PE_ERR_ROT:          return "pe: rotary dims must be even and <= head_dim";
    case PE_ERR_PARAM:
        return "pe: theta, a factor, period, shift, scale or RoPE scaling parameter is "
               "out of range";
    case PE_ERR_POSITION:     return "pe: a position is negative, past the cache or past 2^53";
    case PE_ERR_ENUM:         return "pe: layout, pairing, mode or causal is not one of its values";
    default:
        return status <= -201 && status >= -299 ? "pe: unknown status (an ffn.h status?)"
                                                : "pe: unknown status";
    }
}

/* ---- the parallel split ------------------------------------------------ */

/* pe__split runs fn(ctx, lo, hi) over [first, n): with OpenMP, once on each thread
   with a contiguous share of the range, when `floats` (the work's size) is at least
   PE__PARALLEL_FLOATS (256 KiB of floats; below that a parallel region costs more
   than it saves). Every function that uses it computes each element the same way
   whatever the share, so no bit depends on the thread count. */
#ifndef PE__PARALLEL_FLOATS
#define PE__PARALLEL_FLOATS 65536.0
#endif
#if defined(_OPENMP) && !defined(PE_NO_OPENMP)
#include <omp.h>
#endif
typedef void (*pe__range_fn)(void *ctx, size_t lo, size_t hi);

static void pe__split(size_t first, size_t n, double floats, pe__range_fn fn, void *ctx)
{
#if defined(_OPENMP) && !defined(PE_NO_OPENMP)
    if (floats >= PE__PARALLEL_FLOATS && !omp_in_parallel()) {
        const size_t m = n - first;
#pragma omp parallel
        {
            const size_t t = (size_t)omp_get_thread_num();
            const size_t nt = (size_t)omp_get_num_threads(), q = m / nt, r = m % nt;
            const size_t lo = first + q * t + (t < r ? t : r);
            fn(ctx, lo, lo + q + (t < r));
        }
        return;
    }
#else
    (void)floats;
#endif
    fn(ctx, first, n);
}

/* ---- the vector loops' barriers ---------------------------------------- */

/* The AVX and AVX-512 kernels clear the upper halves of the vector registers
   (vzeroupper) themselves before they call a scalar function: gcc (12, -O2, -fipa-ra)
   leaves the vzeroupper out before a call of a function of this file compiled for the
   base ISA, and the SSE code that runs next (the scalar tail, the caller, libm) is then
   slower with the upper halves dirty: the cosf/sinf calls of pe_rope_apply_direct took
   twice as long in a plain -O2 build. */
#define PE__ZEROUPPER_AVX() _mm256_zeroupper()
#define PE__ZEROUPPER_NONE() ((void)0)

#if defined(__GNUC__) || defined(__clang__)
#ifndef PE__ZMM     /* (any of zmm0-31; a build that emulates AVX-512 says "m") */
#define PE__ZMM "v"
#endif
#define PE__OPAQUE_X86(v) __asm__("" : "+x"(v))
#define PE__OPAQUE_ZMM(v) __asm__("" : "+" PE__ZMM(v))
#define PE__OPAQUE_NEON(v) __asm__("" : "+w"(v))
#define PE__IN_ORDER_X86() __asm__ __volatile__("" ::: "memory")
#define PE__PIN4_X86(a, b, c, d)                                                      \
    __asm__ __volatile__("" : "+x"(a), "+x"(b), "+x"(c), "+x"(d) : : "memory")
#define PE__PIN4_ZMM(a, b, c, d)                                                      \
    __asm__ __volatile__("" : "+" PE__ZMM(a), "+" PE__ZMM(b), "+" PE__ZMM(c), "+" PE__ZMM(d) \
                         : : "memory")
#else   /* MSVC does not contract intrinsics (nor has it a barrier of this kind) */
#define PE__OPAQUE_X86(v) ((void)0)
#define PE__OPAQUE_ZMM(v) ((void)0)
#define PE__OPAQUE_NEON(v) ((void)0)
#define PE__IN_ORDER_X86() ((void)0)
#define PE__PIN4_X86(a, b, c, d) ((void)0)
#define PE__PIN4_ZMM(a, b, c, d) ((void)0)
#endif

/* ---- the paths' kernels ----
   Their types (each feature's region says what its kernels compute), and a path: its
   kernel of each. The paths themselves, and the choice among them (pe__current: the
   path calls run now), are at the end (PATHS). */
typedef void (*pe__sincos_fn)(float *s, float *c, const float *a, size_t n);
typedef void (*pe__span_fn)(float *out, const float *a, const float *b, size_t n);
typedef void (*pe__rope_half_fn)(float *o1, float *o2, const float *x1, const float *x2,
                                 const float *c, const float *s, size_t n, float sg);
typedef void (*pe__rope_pairs_fn)(float *o, const float *x, const float *c, const float *s,
                                  size_t n, float sg);
typedef void (*pe__alibi_fn)(float *row, size_t j0, size_t j1, size_t qp, float slope,
                             int causal);
typedef void (*pe__colsum_fn)(float *out, const float *x, size_t stride, size_t rows,
                              size_t cols);

/* A path: its add loops (plain and non-temporal: the same bits), the table's row
   function and its sin/cos of an array of angles (the RoPE caches, the timestep
   embedding), the RoPE rotations, the gradient loops and the ALiBi rows. need: the
   PE__CPU_* bits it runs on. */
typedef struct {
    const char *name;
    unsigned need;
    pe__span_fn add, add_nt;
    void (*table_row_fast)(float *table, size_t p, size_t half);
    pe__sincos_fn sincos;
    pe__rope_half_fn rope_half;
    pe__rope_pairs_fn rope_pairs;
    pe__span_fn accz;
    pe__colsum_fn colsum;
    pe__alibi_fn alibi;
} pe__isa;

static const pe__isa *pe__current(void);

/* ==== 3. THE LIBRARY'S OWN MATH ======================================================= */
/* Every transcendental value pe.h computes comes from here, not from the C library, so
   the bits are the same on every platform, compiler and flag set (see BITS AND THE
   PLATFORM at the top). The float functions (pe__sinf, pe__cosf, pe__sincosf, pe__expf,
   pe__powf) are correctly rounded (to nearest, ties to even) for every input; the double
   ones (pe__sin, pe__cos, pe__exp, pe__log, pe__log2, pe__pow) evaluate in double-double
   (about 100 bits) and round once: correctly rounded unless the exact value lies within
   about 2^-100 of a midpoint between doubles (none is known; tools/exhaustive.c counts).

   How a float function is correctly rounded: a fast evaluation in double with a proven
   relative error below 2^-50, whose result y is accepted when every value within 2^-48 |y|
   of it rounds to the same float (then the exact value does too); otherwise (about 2^-22
   of the inputs) a slow evaluation in double-double, rounded once through round-to-odd
   (pe__dd_to_f). The bounds hold whether or not the compiler fuses a product and a sum
   (FMA contraction only removes roundings), so the result is the same either way; the
   double-double arithmetic keeps every product it needs rounded, or exact, behind
   PE__HOLD (an empty asm, or a volatile), so contraction cannot change it either. Double
   arithmetic must round to double (FLT_EVAL_METHOD 0 or 1; 32-bit x86 needs -msse2
   -mfpmath=sse); -ffast-math lets the compiler simplify the exact error terms away (the
   results are then near, not necessarily equal to, the correctly rounded ones). */

typedef struct { double h, l; } pe__dd;    /* h + l, |l| <= ulp(h)/2 */

/* (the single-valued wrappers that only tools/exhaustive.c calls) */
#if defined(__GNUC__) || defined(__clang__)
#define PE__UNUSED __attribute__((unused))
#else
#define PE__UNUSED
#endif

#if (defined(__GNUC__) || defined(__clang__)) &&                                          \
    (defined(__x86_64__) || (defined(__i386__) && defined(__SSE2_MATH__)))
#define PE__HOLD(v) __asm__("" : "+x"(v))
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
#define PE__HOLD(v) __asm__("" : "+w"(v))
#else
static double pe__hold(double v)
{
    volatile double r = v;
    return r;
}
#define PE__HOLD(v) ((v) = pe__hold(v))
#endif

static uint64_t pe__dbits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
static double pe__bitsd(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }
static uint32_t pe__fbits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
/* 2^k for -1022 <= k <= 1023 */
static double pe__pow2(int k) { return pe__bitsd((uint64_t)(k + 1023) << 52); }
static double pe__absd(double x) { return pe__bitsd(pe__dbits(x) & 0x7FFFFFFFFFFFFFFFull); }
static int pe__nonzero(double x) { return x < 0.0 || x > 0.0; }
static double pe__nan(void) { return pe__bitsd(0x7FF8000000000000ull); }   /* a quiet NaN */
static int pe__isnan(double x)
{
    return (pe__dbits(x) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}

/* floor and ceil without the C library (exact, as the IEEE operations) */
static double pe__floor(double x)
{
    double t;
    if (!(pe__absd(x) < 4503599627370496.0)) return x;     /* 2^52: integral (or NaN) */
    t = (double)(int64_t)x;                                 /* toward zero */
    if (t > x) t -= 1.0;
    return pe__nonzero(t) ? t : x * 0.0;                    /* floor(-0.0) = -0.0 */
}
static double pe__ceil(double x) { return -pe__floor(-x); }
static int pe__is_int(double x) { return !(x < pe__floor(x)) && !(x > pe__floor(x)); }

/* ---- double-double arithmetic (error-free transformations) ---- */
static pe__dd pe__dd_make(double h, double l)
{
    pe__dd r;
    r.h = h;
    r.l = l;
    return r;
}
static pe__dd pe__dd_neg(pe__dd a) { return pe__dd_make(-a.h, -a.l); }
static pe__dd pe__two_sum(double a, double b)           /* a + b = s + e exactly */
{
    const double s = a + b, bb = s - a;
    return pe__dd_make(s, (a - (s - bb)) + (b - bb));
}
static pe__dd pe__fast_two_sum(double a, double b)      /* |a| >= |b| (or a = 0) */
{
    const double s = a + b;
    return pe__dd_make(s, b - (s - a));
}
/* a * b = p + e exactly (Dekker): the halves have 26 bits, so their products are exact
   and fusing them changes nothing; p and the splitting products are held rounded. */
static pe__dd pe__two_prod(double a, double b)
{
    double p = a * b, c, ah, al, bh, bl;
    PE__HOLD(p);
    c = 134217729.0 * a;
    PE__HOLD(c);
    ah = c - (c - a);
    al = a - ah;
    c = 134217729.0 * b;
    PE__HOLD(c);
    bh = c - (c - b);
    bl = b - bh;
    return pe__dd_make(p, ((ah * bh - p) + ah * bl + al * bh) + al * bl);
}
static pe__dd pe__dd_add(pe__dd a, pe__dd b)
{
    pe__dd s = pe__two_sum(a.h, b.h), t = pe__two_sum(a.l, b.l);
    s = pe__fast_two_sum(s.h, s.l + t.h);
    return pe__fast_two_sum(s.h, s.l + t.l);
}
static pe__dd pe__dd_mul(pe__dd a, pe__dd b)
{
    const pe__dd p = pe__two_prod(a.h, b.h);
    double t = a.h * b.l, u = a.l * b.h;
    PE__HOLD(t);
    PE__HOLD(u);
    return pe__fast_two_sum(p.h, p.l + (t + u));
}
static pe__dd pe__dd_mul_d(pe__dd a, double b)
{
    const pe__dd p = pe__two_prod(a.h, b);
    double t = a.l * b;
    PE__HOLD(t);
    return pe__fast_two_sum(p.h, p.l + t);
}
static pe__dd pe__dd_div(pe__dd a, pe__dd b)             /* one correction step */
{
    const double q1 = a.h / b.h;
    const pe__dd r = pe__dd_add(a, pe__dd_neg(pe__dd_mul_d(b, q1)));
    return pe__fast_two_sum(q1, r.h / b.h);
}

/* The float nearest h + l: h + l rounded to odd in 53 bits (h moved one ulp toward l when
   l is not 0 and h's last bit is 0), then to float: rounding to odd first keeps the final
   rounding correct, subnormal floats included (53 >= 24 + 2). */
static float pe__dd_to_f(pe__dd v)
{
    uint64_t u = pe__dbits(v.h);
    if (pe__nonzero(v.l) && !(u & 1u)) {            /* (u even: u - 1 does not wrap) */
        if ((v.l > 0.0) == (v.h > 0.0)) u += 1u;
        else u -= 1u;
    }
    return (float)pe__bitsd(u);
}

/* y, a double within 2^-50 |y| of a value: is the float nearest that value known? It is
   when y - 2^-48 |y| and y + 2^-48 |y| round to the same float. */
static int pe__f_decided(double y)
{
    const double e = pe__absd(y) * 3.552713678800501e-15;      /* 2^-48 */
    return pe__fbits((float)(y - e)) == pe__fbits((float)(y + e));
}

/* Constants: 1/k! (k = 0..30) and 1/(2k+1) (k = 0..23) as double-doubles. */
static const double pe__ifact[31][2] = {
    {1.0, 0.0},
    {1.0, 0.0},
    {0.5, 0.0},
    {0.16666666666666666, 9.25185853854297e-18},
    {0.041666666666666664, 2.3129646346357427e-18},
    {0.008333333333333333, 1.1564823173178714e-19},
    {0.001388888888888889, -5.300543954373577e-20},
    {0.0001984126984126984, 1.7209558293420705e-22},
    {2.48015873015873e-05, 2.1511947866775882e-23},
    {2.7557319223985893e-06, -1.858393274046472e-22},
    {2.755731922398589e-07, 2.3767714622250297e-23},
    {2.505210838544172e-08, -1.448814070935912e-24},
    {2.08767569878681e-09, -1.20734505911326e-25},
    {1.6059043836821613e-10, 1.2585294588752098e-26},
    {1.1470745597729725e-11, 2.0655512752830745e-28},
    {7.647163731819816e-13, 7.03872877733453e-30},
    {4.779477332387385e-14, 4.399205485834081e-31},
    {2.8114572543455206e-15, 1.6508842730861433e-31},
    {1.5619206968586225e-16, 1.1910679660273754e-32},
    {8.22063524662433e-18, 2.2141894119604265e-34},
    {4.110317623312165e-19, 1.4412973378659527e-36},
    {1.9572941063391263e-20, -1.3643503830087908e-36},
    {8.896791392450574e-22, -7.911402614872376e-38},
    {3.868170170630684e-23, -8.843177655482344e-40},
    {1.6117375710961184e-24, -3.6846573564509766e-41},
    {6.446950284384474e-26, -1.9330404233703465e-42},
    {2.4795962632247976e-27, -1.2953730964765229e-43},
    {9.183689863795546e-29, 1.4303150396787322e-45},
    {3.279889237069838e-30, 1.5117542744029879e-46},
    {1.1309962886447716e-31, 1.0498015412959506e-47},
    {3.7699876288159054e-33, 2.5870347832750324e-49}};
static const double pe__iodd[24][2] = {
    {1.0, 0.0},
    {0.3333333333333333, 1.850371707708594e-17},
    {0.2, -1.1102230246251566e-17},
    {0.14285714285714285, 7.93016446160826e-18},
    {0.1111111111111111, 6.1679056923619804e-18},
    {0.09090909090909091, -2.523234146875356e-18},
    {0.07692307692307693, -4.270088556250602e-18},
    {0.06666666666666667, 9.251858538542971e-19},
    {0.058823529411764705, 8.163404592832033e-19},
    {0.05263157894736842, 2.921639538487254e-18},
    {0.047619047619047616, 2.64338815386942e-18},
    {0.043478260869565216, 1.206764157201257e-18},
    {0.04, -8.326672684688674e-19},
    {0.037037037037037035, 2.05596856412066e-18},
    {0.034482758620689655, 4.785444071660157e-19},
    {0.03225806451612903, 8.953411488912552e-19},
    {0.030303030303030304, -8.410780489584519e-19},
    {0.02857142857142857, 8.921435019309293e-19},
    {0.02702702702702703, -1.50030138462859e-18},
    {0.02564102564102564, 8.896017825522087e-19},
    {0.024390243902439025, -8.46206573647223e-19},
    {0.023255813953488372, 3.2273925134452225e-19},
    {0.022222222222222223, -8.480870326997723e-19},
    {0.02127659574468085, 5.167261417803255e-19}};
static pe__dd pe__cdd(const double c[2]) { return pe__dd_make(c[0], c[1]); }
#define PE__PIO2_H 1.5707963267948966      /* pi/2 = PE__PIO2_H + PE__PIO2_L */
#define PE__PIO2_L 6.123233995736766e-17
#define PE__LN2_H 0.6931471805599453       /* ln 2 */
#define PE__LN2_L 2.3190468138462996e-17
#define PE__LOG2E_H 1.4426950408889634     /* 1 / ln 2 */
#define PE__LOG2E_L 2.0355273740931033e-17
/* pi/2 in four parts, the first three of 33 bits (n * part exact for n < 2^20), and ln 2
   in three, the first two of 33 bits (k * part exact for |k| < 2^20) */
static const double pe__pio2_4[4] = {1.5707963267341256, 6.077100506303966e-11,
                                     2.0222662487111665e-21, 8.4784276603689e-32};
static const double pe__ln2_3[3] = {0.6931471804855391, 7.440617109802979e-11,
                                    2.0941744292700725e-21};

/* 2/pi's bits after the binary point, 32 a word (1280 bits: enough for any double). */
static const uint32_t pe__2opi[40] = {
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
    0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
    0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
    0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
    0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
    0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du};

/* Bit i (0: the least significant) of the little-endian word array w (n words). */
static unsigned pe__bit(const uint32_t *w, int n, int i)
{
    return i < 0 || i >= 32 * n ? 0u : (unsigned)(w[i / 32] >> (i % 32)) & 1u;
}

/* Bits i - 63 .. i of the 9-word little-endian number w (bits below 0 read as 0). */
static uint64_t pe__bits64(const uint32_t *w, int i)
{
    uint64_t r = 0;
    int k;
    for (k = 0; k < 9; k++) {
        const int at = 32 * k - (i - 63);       /* where word k's bit 0 lands in r */
        if (at <= -32 || at >= 64) continue;
        r |= at >= 0 ? (uint64_t)w[k] << at : (uint64_t)w[k] >> -at;
    }
    return r;
}

/* Payne-Hanek: x >= 2^20 finite. x 2/pi = n + f with n an integer, |f| <= 1/2; returns
   n mod 4 and f as a double-double (106 bits after f's leading one). x = m 2^e (m < 2^53);
   the bits of 2/pi whose products with m 2^e are multiples of 4 are skipped; seven words
   after them bound the error by m 2^-b < 2^-138 (b >= 191 bits below the binary point of
   the product). */
static unsigned pe__reduce_big(double x, pe__dd *f)
{
    const uint64_t u = pe__dbits(x);
    const uint64_t m = (u & 0xFFFFFFFFFFFFFull) | 0x10000000000000ull;
    const int e = (int)((u >> 52) & 0x7FF) - 1075;             /* x = m 2^e */
    const int j0 = e >= 2 ? (e - 2) / 32 : 0, b = 32 * (j0 + 7) - e;
    const uint64_t m0 = m & 0xFFFFFFFFu, m1 = m >> 32;
    uint32_t p[9];
    uint64_t acc, carry = 0, hi, lo;
    unsigned q;
    int k, top, neg;
    for (k = 0; k < 9; k++) {                   /* p = m0 * words (little-endian) */
        acc = carry + (k < 7 ? m0 * pe__2opi[j0 + 6 - k] : 0u);
        p[k] = (uint32_t)acc;
        carry = acc >> 32;
    }
    carry = 0;
    for (k = 1; k < 9; k++) {                   /* + (m1 * words) << 32 */
        acc = carry + p[k] + (k < 8 ? m1 * pe__2opi[j0 + 7 - k] : 0u);
        p[k] = (uint32_t)acc;
        carry = acc >> 32;
    }
    q = pe__bit(p, 9, b) | pe__bit(p, 9, b + 1) << 1;
    neg = (int)pe__bit(p, 9, b - 1);            /* f >= 1/2: n + 1, f - 1 */
    if (neg) {                                  /* the fraction's magnitude: -p mod 2^b */
        q = (q + 1) & 3u;
        carry = 1;
        for (k = 0; k < 9; k++) {
            acc = (uint64_t)(uint32_t)~p[k] + carry;
            p[k] = (uint32_t)acc;
            carry = acc >> 32;
        }
    }
    /* the fraction's leading one: the first non-zero 64 bits below b, then its top bit */
    top = b - 1;
    while (top >= 63 && !pe__bits64(p, top)) top -= 64;
    hi = pe__bits64(p, top);
    if (!hi) {                                  /* (no float or double gets here) */
        *f = pe__dd_make(0.0, 0.0);
        return q;
    }
    while (!(hi >> 63)) {
        hi <<= 1;
        top--;
    }
    hi = pe__bits64(p, top) >> 11;              /* bits top .. top - 52 */
    lo = pe__bits64(p, top - 53) >> 11;         /* the next 53 */
    /* the leading one at bit top: f = hi 2^(top - 52 - b) + lo 2^(top - 105 - b) */
    *f = pe__dd_make((double)hi * pe__pow2(top - 52 - b), (double)lo * pe__pow2(top - 105 - b));
    if (neg) *f = pe__dd_neg(*f);
    return q;
}

/* x - n pi/2 in double-double for 0 <= x < 2^20 (n = the nearest integer, mod 4 in *q), or
   by pe__reduce_big beyond. */
static pe__dd pe__reduce_dd(double x, unsigned *q)
{
    pe__dd r;
    if (x < 1048576.0) {
        const double n = pe__floor(x * 0.63661977236758134 + 0.5);
        r = pe__two_sum(x - n * pe__pio2_4[0], -(n * pe__pio2_4[1]));     /* both exact */
        r = pe__dd_add(r, pe__dd_make(-(n * pe__pio2_4[2]), 0.0));
        r = pe__dd_add(r, pe__dd_neg(pe__two_prod(n, pe__pio2_4[3])));
        *q = (unsigned)n & 3u;
    } else {
        pe__dd f;
        *q = pe__reduce_big(x, &f);
        r = pe__dd_mul(f, pe__dd_make(PE__PIO2_H, PE__PIO2_L));
    }
    return r;
}

/* sin x and cos x of a finite double in double-double (Taylor series of the reduced
   argument, |r| <= pi/4: the first omitted terms, r^31/31! and r^30/30!, are below
   2^-110 relative). */
static void pe__sincos_dd(double x, pe__dd *s, pe__dd *c)
{
    unsigned q;
    const pe__dd r = pe__reduce_dd(pe__absd(x), &q), z = pe__dd_mul(r, r);
    pe__dd ps = pe__cdd(pe__ifact[29]), pc = pe__cdd(pe__ifact[28]), vs, vc;
    int k;
    for (k = 13; k >= 1; k--) {     /* sum_k (-1)^k z^(k-1) / (2k+1)!, / (2k)! */
        const pe__dd fs = pe__cdd(pe__ifact[2 * k + 1]), fc = pe__cdd(pe__ifact[2 * k]);
        ps = pe__dd_add(pe__dd_mul(ps, z), k % 2 ? pe__dd_neg(fs) : fs);
        pc = pe__dd_add(pe__dd_mul(pc, z), k % 2 ? pe__dd_neg(fc) : fc);
    }
    ps = pe__dd_add(r, pe__dd_mul(pe__dd_mul(r, z), ps));
    pc = pe__dd_add(pe__dd_make(1.0, 0.0), pe__dd_mul(z, pc));
    vs = q & 1u ? pc : ps;                          /* sin x: sin r, cos r, -sin r, -cos r */
    vc = q & 1u ? ps : pc;                          /* cos x: cos r, -sin r, -cos r, sin r */
    if (q == 2u || q == 3u) vs = pe__dd_neg(vs);
    if (q == 1u || q == 2u) vc = pe__dd_neg(vc);
    *s = (pe__dbits(x) >> 63) ? pe__dd_neg(vs) : vs;
    *c = vc;
}

/* ---- sinf, cosf: the fast evaluation ----
   For |x| < 2^20 (x a float, exact in double): n = the integer nearest x 2/pi (or one off
   near a half: |r| <= pi/4 + 2^-30), r = ((x - n P1) - n P2) - n P3 with P1, P2 of 33 bits
   (both products exact, x - n P1 exact) and P3 the next 53: r is within 2^-52 |r| + 2^-100
   of x - n pi/2, and |r| >= 2^-29 for every such float x that is not 0 (exhaustive), so
   within 2^-51.9 |r|. Beyond 2^20, r = pe__reduce_big's f times pi/2 rounded to double
   (within 2^-52 |r|). Taylor polynomials of sin r to r^15 and cos r to r^16 in double
   (truncation below 2^-53.7 relative, evaluation below 3 * 2^-53): y is within 2^-50.5 |y|
   of sin x (cos x). Float inputs below 2^-26 give sin x = x and cos x = 1 through the
   same code exactly. */
#define PE__PIO2_1 1.5707963267341256      /* 33 bits of pi/2 */
#define PE__PIO2_2 6.077100506303966e-11   /* the next 33 bits */
#define PE__PIO2_3 2.0222662487959506e-21  /* the next 53 */
#define PE__2_PI 0.63661977236758134       /* 2/pi */
#define PE__FAST_MAX 1048576.0             /* 2^20: where n * part stops being exact */
/* Taylor coefficients in z = r^2, highest order first (Horner):
   sin r = r + r z (-1/3! + z (1/5! + ... )),  cos r = 1 - z/2! + z^2/4! - ... */
static const double pe__sin_k[7] = {
    -1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800, 1.0 / 362880,
    -1.0 / 5040, 1.0 / 120, -1.0 / 6};
static const double pe__cos_k[9] = {
    1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800,
    1.0 / 40320, -1.0 / 720, 1.0 / 24, -1.0 / 2, 1.0};

/* Is the float nearest sin (cos) known from y, the fast double? pe__f_decided's test on
   y's bits: the low 29 bits (what rounding to float drops) at least 32 ulps (2^-48 |y|)
   away from the midpoint 0x10000000. Valid where the float result is normal: |sin a| >=
   2^-27 unless |a| < 2^-26, where y is the float a itself (x^3/6 is below half an ulp of
   a double), low bits 0; |cos a| >= 2^-27 for every float a. */
static int pe__sc_decided(double y)
{
    const uint64_t b = pe__dbits(y) & 0x1FFFFFFFu;  /* |b - 2^28| > 32, without a wrap */
    return b > 0x10000000u + 32u || b < 0x10000000u - 32u;
}

/* sin a and cos a, correctly rounded: the scalar specification of every path's sin/cos. */
static void pe__sincosf(float a, float *s, float *c)
{
    const double x = (double)a, ax = pe__absd(x);
    double r, z, sr, cr, ys, yc;
    unsigned q;
    if (!(ax < PE__FAST_MAX)) {
        pe__dd f;
        if (!(ax <= (double)FLT_MAX)) {         /* NaN -> NaN; sin, cos of +-inf: NaN */
            *s = *c = (float)(x - x);
            return;
        }
        q = pe__reduce_big(ax, &f);
        r = pe__dd_mul(f, pe__dd_make(PE__PIO2_H, PE__PIO2_L)).h;
    } else {
        /* (ax 2/pi + 0.5 > 0: truncation is the floor) */
        const double n = (double)(int32_t)(ax * PE__2_PI + 0.5);
        r = ((ax - n * PE__PIO2_1) - n * PE__PIO2_2) - n * PE__PIO2_3;
        q = (unsigned)(int32_t)n & 3u;
    }
    z = r * r;
    /* (Horner's steps written out: gcc -O2 keeps the loops rolled) */
    sr = ((((((pe__sin_k[0] * z + pe__sin_k[1]) * z + pe__sin_k[2]) * z + pe__sin_k[3]) * z +
            pe__sin_k[4]) * z + pe__sin_k[5]) * z + pe__sin_k[6]);
    sr = r + r * z * sr;
    cr = ((((((((pe__cos_k[0] * z + pe__cos_k[1]) * z + pe__cos_k[2]) * z + pe__cos_k[3]) * z +
              pe__cos_k[4]) * z + pe__cos_k[5]) * z + pe__cos_k[6]) * z + pe__cos_k[7]) * z +
          pe__cos_k[8]);
    ys = q & 1u ? cr : sr;
    yc = q & 1u ? sr : cr;
    if (q == 2u || q == 3u) ys = -ys;
    if (q == 1u || q == 2u) yc = -yc;
    if (pe__dbits(x) >> 63) ys = -ys;           /* sin(-x) = -sin x (-0 too) */
    if (pe__sc_decided(ys) && pe__sc_decided(yc)) {
        *s = (float)ys;
        *c = (float)yc;
    } else {                                    /* near a rounding boundary: 106 bits */
        pe__dd ds, dc;
        pe__sincos_dd(x, &ds, &dc);
        *s = pe__dd_to_f(ds);
        *c = pe__dd_to_f(dc);
    }
}
static PE__UNUSED float pe__sinf(float a) { float s, c; pe__sincosf(a, &s, &c); return s; }
static PE__UNUSED float pe__cosf(float a) { float s, c; pe__sincosf(a, &s, &c); return c; }

/* The exact modes: f32(f64(sin x)) and f32(f64(cos x)) of a double x, i.e. torch's float64
   value rounded to float (two roundings, as torch's .float() of a float64 tensor), with
   the double correctly rounded. The fast evaluation above (a double x: |r| >= 2^-40 is
   required, x - n P1 is exact for x >= pi/4 with 53 bits too) is within 2^-50.5 |y|, 8
   ulps of y: when no double within 16 ulps of y is a midpoint between floats, every double
   there rounds to the same float, the correctly rounded double among them. */
static int pe__d2f_decided(double y)
{
    const uint64_t b = pe__dbits(y) & 0x1FFFFFFFu;  /* |b - 2^28| > 16, without a wrap */
    return b > 0x10000000u + 16u || b < 0x10000000u - 16u;
}
static void pe__sincos_d2f(double x, float *s, float *c)
{
    const double ax = pe__absd(x);
    if (ax < PE__FAST_MAX) {
        const double n = pe__floor(ax * PE__2_PI + 0.5);
        const double r = ((ax - n * PE__PIO2_1) - n * PE__PIO2_2) - n * PE__PIO2_3;
        const unsigned q = (unsigned)n & 3u;
        if (ax < 1.4901161193847656e-08) {      /* 2^-26: sin x = x, cos x = 1 */
            *s = (float)x;
            *c = 1.0f;
            return;
        }
        if (pe__absd(r) > 9.094947017729282e-13) {     /* 2^-40 */
            const double z = r * r;
            double sr = pe__sin_k[0], cr = pe__cos_k[0], ys, yc;
            int k;
            for (k = 1; k < 7; k++) sr = sr * z + pe__sin_k[k];
            sr = r + r * z * sr;
            for (k = 1; k < 9; k++) cr = cr * z + pe__cos_k[k];
            ys = q & 1u ? cr : sr;
            yc = q & 1u ? sr : cr;
            if (q == 2u || q == 3u) ys = -ys;
            if (q == 1u || q == 2u) yc = -yc;
            if (x < 0.0) ys = -ys;
            if (pe__d2f_decided(ys) && pe__d2f_decided(yc)) {
                *s = (float)ys;
                *c = (float)yc;
                return;
            }
        }
    } else if (!(ax <= DBL_MAX)) {
        *s = *c = (float)(x - x);
        return;
    }
    {
        pe__dd ds, dc;
        pe__sincos_dd(x, &ds, &dc);
        *s = (float)(ds.h);     /* h: the double nearest, then the float nearest it */
        *c = (float)(dc.h);
    }
}

static PE__UNUSED double pe__sin(double x)
{
    pe__dd s, c;
    if (!(pe__absd(x) <= DBL_MAX)) return x - x;
    if (pe__absd(x) < 1.4901161193847656e-08) return x;      /* 2^-26 */
    pe__sincos_dd(x, &s, &c);
    return s.h;
}
static PE__UNUSED double pe__cos(double x)
{
    pe__dd s, c;
    if (!(pe__absd(x) <= DBL_MAX)) return x - x;
    pe__sincos_dd(x, &s, &c);
    return c.h;
}

/* ---- sqrt: IEEE's correctly rounded square root, without the C library ----
   Newton's iteration to within an ulp, then the candidate c moved until x lies between the
   squares of the midpoints around c. Each comparison is exact in sign: x - (c + h)^2 is a
   non-zero multiple of h^2 (h half an ulp of c), far above the error of the
   double-double sum that computes it. */
static int pe__sq_cmp(double x, double c, double h)     /* the sign of x - (c + h)^2 */
{
    const pe__dd p = pe__two_prod(c, c);
    const pe__dd r = pe__dd_add(pe__two_sum(x - p.h, -p.l),    /* x - c^2 (x - p.h exact) */
                                pe__dd_make(-2.0 * c * h, -(h * h)));
    return r.h > 0.0 ? 1 : r.h < 0.0 ? -1 : 0;
}

static double pe__sqrt(double x)
{
    double y;
    int k, sub = 0;
    if (!(x > 0.0) || !(x <= DBL_MAX)) return x < 0.0 ? pe__nan() : x;
    if (x < 1.0e-270) {                         /* small (h^2 would underflow): */
        x *= pe__pow2(1000);                    /* sqrt(x 2^1000) 2^-500 */
        sub = 1;
    }
    y = pe__bitsd((pe__dbits(x) >> 1) + 0x1FF8000000000000ull);    /* within 6% */
    for (k = 0; k < 6; k++) y = 0.5 * (y + x / y);
    for (k = 0; k < 4; k++) {
        const uint64_t u = pe__dbits(y);
        const double h = pe__pow2((int)(u >> 52) - 1023 - 53);      /* half an ulp above */
        const double hb = (u & 0xFFFFFFFFFFFFFull) ? h : 0.5 * h;  /* below (2^k: half) */
        if (pe__sq_cmp(x, y, h) > 0) y = pe__bitsd(u + 1u);
        else if (pe__sq_cmp(x, y, -hb) < 0) y = pe__bitsd(u - 1u);
        else break;
    }
    return sub ? y * pe__pow2(-500) : y;
}

/* ---- exp ----
   e^t = 2^k e^r, k the integer nearest t / ln 2, r = t - k ln 2 with ln 2 in three parts
   (|r| <= 0.35). In double-double: the Taylor series of e^r to r^22 (the rest is below
   2^-109). Returns e^r; *k set. t.h within +-800. */
static pe__dd pe__exp_dd(pe__dd t, int *k)
{
    const double kd = pe__floor(t.h * PE__LOG2E_H + 0.5);
    pe__dd r = pe__two_sum(t.h - kd * pe__ln2_3[0], t.l), e = pe__cdd(pe__ifact[22]);
    int j;
    r = pe__dd_add(r, pe__dd_make(-(kd * pe__ln2_3[1]), 0.0));
    r = pe__dd_add(r, pe__dd_neg(pe__two_prod(kd, pe__ln2_3[2])));
    for (j = 21; j >= 0; j--) e = pe__dd_add(pe__dd_mul(e, r), pe__cdd(pe__ifact[j]));
    *k = (int)kd;
    return e;
}

/* x 2^k rounded once (x a double in [0.5, 2], -2000 <= k <= 2000): in two steps, the
   first exact. */
static double pe__scale(double x, int k)
{
    if (k > 1000) return x * pe__pow2(1000) * pe__pow2(k - 1000);
    if (k < -1000) return x * pe__pow2(-1000) * pe__pow2(k + 1000);
    return x * pe__pow2(k);
}

/* v 2^k as the double nearest (v a double-double, v.h in [0.5, 2], k > -1100) */
static double pe__dd_scale_round(pe__dd v, int k)
{
    double sc, t;
    pe__dd f;
    /* normal (v.h 2^k >= 2^-1022, compared exactly): v.h is the nearest, scaled exactly */
    if (k > -1000 || v.h >= pe__pow2(-1022 - k)) return pe__scale(v.h, k);
    /* subnormal: the integer nearest v 2^(k + 1074) (ties to even), times 2^-1074 */
    sc = pe__pow2(k + 1074);
    t = pe__floor(v.h * sc);
    f = pe__two_sum(v.h * sc - t, v.l * sc);                /* the fraction, exactly */
    if (f.h > 0.5 || (f.h >= 0.5 && (f.l > 0.0 || (!(f.l < 0.0) && !pe__is_int(0.5 * t)))))
        t += 1.0;
    return t * pe__pow2(-52) * pe__pow2(-1022);
}

static double pe__exp(double x)
{
    pe__dd e;
    int k;
    if (pe__isnan(x)) return x + x;
    if (x <= -746.0) return 0.0;                            /* e^-746 < 2^-1075 */
    if (!(x < 710.0)) return x * 1.79e308;                 /* +inf (or NaN) */
    if (pe__absd(x) < 5.551115123125783e-17) return 1.0 + x;   /* 2^-54 */
    e = pe__exp_dd(pe__dd_make(x, 0.0), &k);
    return pe__dd_scale_round(e, k);
}

/* The fast expf: r = (x - k L1) - k L2 (L1 33 bits: exact; |k| <= 150), the Taylor
   polynomial of e^r to r^13 in double (truncation below 2^-57, evaluation and r's errors
   below 3.5 * 2^-53): y within 2^-51 |y|. */
static const double pe__exp_k[14] = {
    1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
    1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
    1.0 / 6.0, 0.5, 1.0, 1.0};
static float pe__expf(float a)
{
    const double x = (double)a;
    double kd, r, p, y;
    pe__dd e;
    int k, j;
    if (pe__isnan(x)) return (float)(x + x);
    if (x >= 89.0) return HUGE_VALF;            /* e^89 > 2^128 */
    if (x <= -104.0) return 0.0f;               /* e^-104 < 2^-150: rounds to 0 */
    kd = pe__floor(x * PE__LOG2E_H + 0.5);
    r = (x - kd * pe__ln2_3[0]) - kd * (pe__ln2_3[1] + pe__ln2_3[2]);
    p = pe__exp_k[0];
    for (j = 1; j < 14; j++) p = p * r + pe__exp_k[j];
    k = (int)kd;
    y = p * pe__pow2(k);
    if (pe__f_decided(y)) return (float)y;
    e = pe__exp_dd(pe__dd_make(x, 0.0), &k);
    return pe__dd_to_f(pe__dd_make(e.h * pe__pow2(k), e.l * pe__pow2(k)));
}

/* ---- logarithms ----
   x = 2^e m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1) / (m + 1)
   (|s| <= 0.172), the series s (1 + s^2/3 + s^4/5 + ...) to s^43 (the rest below 2^-111),
   in double-double. x > 0 finite. */
static pe__dd pe__log_m(double x, int *e)
{
    uint64_t u;
    double m;
    pe__dd s, z, acc;
    int k, ex = 0;
    if (x < 2.2250738585072014e-308) {          /* subnormal */
        x *= 18014398509481984.0;               /* 2^54 */
        ex = -54;
    }
    u = pe__dbits(x);
    ex += (int)(u >> 52) - 1023;
    m = pe__bitsd((u & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        ex++;
    }
    *e = ex;
    s = pe__dd_div(pe__dd_make(m - 1.0, 0.0), pe__two_sum(m, 1.0));   /* m - 1 exact */
    z = pe__dd_mul(s, s);
    acc = pe__cdd(pe__iodd[21]);
    for (k = 20; k >= 0; k--) acc = pe__dd_add(pe__dd_mul(acc, z), pe__cdd(pe__iodd[k]));
    acc = pe__dd_mul(s, acc);
    return pe__dd_make(2.0 * acc.h, 2.0 * acc.l);
}

/* ln x in double-double, x > 0 finite */
static pe__dd pe__log_dd(double x)
{
    int e;
    const pe__dd lm = pe__log_m(x, &e);
    const pe__dd el = pe__dd_mul_d(pe__dd_make(PE__LN2_H, PE__LN2_L), (double)e);
    return pe__dd_add(el, lm);
}

static int pe__is_zero(double x) { return x >= 0.0 && x <= 0.0; }

static double pe__log(double x)
{
    if (!(x > 0.0)) return x < 0.0 ? pe__nan() : x >= 0.0 ? -HUGE_VAL : x + x;
    if (!(x <= DBL_MAX)) return x;
    return pe__log_dd(x).h;
}

static double pe__log2(double x)
{
    int e;
    pe__dd lm;
    if (!(x > 0.0)) return x < 0.0 ? pe__nan() : x >= 0.0 ? -HUGE_VAL : x + x;
    if (!(x <= DBL_MAX)) return x;
    lm = pe__log_m(x, &e);
    return pe__dd_add(pe__dd_make((double)e, 0.0),
                      pe__dd_mul(lm, pe__dd_make(PE__LOG2E_H, PE__LOG2E_L))).h;
}

/* ---- pow ----
   |x|^y = e^(y ln|x|) in double-double (y ln|x| within 2^-104 of its value, so the result
   within about |y ln x| 2^-104, below 2^-94 where it is finite). Exact results that are
   midpoints between floats (doubles) exist: x^y then has 25 (54) bits, which needs y =
   Y / 2^j with j <= 3 (5), 0 < y < 64, and |x| a perfect 2^j-th power; there x^y is
   computed as (|x|^(1/2^j))^Y by exact products (pe__pow_exact), which a midpoint's
   few bits keep exact. Returns 1 with a special case's value in *special (C99 Annex F),
   else 0 with |x^y| = v 2^k (k = 9999: overflow, -9999: underflow) and *neg. */
static int pe__pow_exact(double ax, double y, int jmax, pe__dd *v)
{
    double t = y, q;
    int j = 0;
    unsigned long n;
    pe__dd acc, base;
    if (!(y > 0.0 && y < 64.0)) return 0;
    while (j < jmax && !pe__is_int(t)) {
        t *= 2.0;
        j++;
    }
    if (!pe__is_int(t)) return 0;
    q = ax;
    if (j) {                                    /* the 2^j-th root, if it is a double */
        int k, i;
        pe__dd l = pe__log_dd(ax);
        l = pe__dd_make(l.h * pe__pow2(-j), l.l * pe__pow2(-j));
        acc = pe__exp_dd(l, &k);
        q = pe__scale(acc.h, k);
        base = pe__dd_make(q, 0.0);
        for (i = 0; i < j; i++) {
            base = pe__two_prod(base.h, base.h);
            if (pe__nonzero(base.l)) return 0;
        }
        if (!(base.h >= ax && base.h <= ax)) return 0;
    }
    n = (unsigned long)t;
    acc = pe__dd_make(1.0, 0.0);
    base = pe__dd_make(q, 0.0);
    for (;;) {
        if (n & 1u) acc = pe__dd_mul(acc, base);
        n >>= 1;
        if (!n) break;
        base = pe__dd_mul(base, base);
    }
    *v = acc;
    return 1;
}

/* |x| = 2^m (a normal power of two): x^y = 2^(m y), exact where m y is an integer, also
   for y < 0 and y >= 64, where pe__pow_exact does not look. A midpoint between subnormals
   can have a single bit (2^-150 lies halfway between 0 and 2^-149; 2^-1075 between 0 and
   2^-1074): only the exact value rounds it to even. */
static int pe__pow_two(double ax, double y, pe__dd *v, int *k)
{
    const uint64_t b = pe__dbits(ax);
    const unsigned ex = (unsigned)(b >> 52 & 0x7FFu);
    pe__dd p;
    if ((b & 0xFFFFFFFFFFFFFull) || ex == 0u) return 0;
    p = pe__two_prod((double)((int)ex - 1023), y);
    if (pe__nonzero(p.l) || !pe__is_int(p.h) || !(p.h > -2000.0 && p.h < 2000.0)) return 0;
    *v = pe__dd_make(1.0, 0.0);
    *k = (int)p.h;
    return 1;
}

static int pe__pow_core(double x, double y, int jmax, double *special, pe__dd *v, int *k,
                        int *neg)
{
    const double ax = pe__absd(x), ay = pe__absd(y);
    int yint, yodd;
    pe__dd t;
    *neg = 0;
    if (pe__is_zero(y) || (x >= 1.0 && x <= 1.0)) { *special = 1.0; return 1; }
    if (pe__isnan(x) || pe__isnan(y)) { *special = x + y; return 1; }
    yint = pe__is_int(y);
    yodd = yint && ay < 9007199254740992.0 && !pe__is_int(y * 0.5);
    if (ay > DBL_MAX) {
        if (ax >= 1.0 && ax <= 1.0) *special = 1.0;
        else *special = (ax < 1.0) == (y > 0.0) ? 0.0 : HUGE_VAL;
        return 1;
    }
    if (pe__is_zero(x) || ax > DBL_MAX) {       /* 0^y and inf^y */
        const double r = (pe__is_zero(x) == (y < 0.0)) ? HUGE_VAL : 0.0;
        *special = yodd && (pe__dbits(x) >> 63) ? -r : r;      /* (-0 too) */
        return 1;
    }
    if (x < 0.0) {
        if (!yint) { *special = pe__nan(); return 1; }
        *neg = yodd;
    }
    if (pe__pow_two(ax, y, v, k)) return 0;
    t = pe__log_dd(ax);
    if (t.h * y > 800.0) { *k = 9999; return 0; }       /* (y ln|x| past the range: no */
    if (t.h * y < -800.0) { *k = -9999; return 0; }     /* double-double product) */
    t = pe__dd_mul_d(t, y);
    if (t.h > -600.0 && t.h < 600.0 && pe__pow_exact(ax, y, jmax, v)) {
        *k = 0;
        return 0;
    }
    *v = pe__exp_dd(t, k);
    return 0;
}

static double pe__pow(double x, double y)
{
    double sp, r;
    pe__dd v;
    int k, neg;
    if (pe__pow_core(x, y, 5, &sp, &v, &k, &neg)) return sp;
    if (k == 0) r = v.h;                        /* (exact path: v.h is the nearest) */
    else r = k > 1100 ? HUGE_VAL : k < -1200 ? 0.0 : pe__dd_scale_round(v, k);
    return neg ? -r : r;
}

static float pe__powf(float xf, float yf)
{
    double sp;
    pe__dd v;
    int k, neg;
    float r;
    if (pe__pow_core((double)xf, (double)yf, 3, &sp, &v, &k, &neg)) return (float)sp;
    if (k > 200) r = HUGE_VALF;
    else if (k < -200) r = 0.0f;
    else r = pe__dd_to_f(pe__dd_make(v.h * pe__pow2(k), v.l * pe__pow2(k)));
    return neg ? -r : r;
}

/* For tools/exhaustive.c: the own functions and the C library names they replace. */
#define PE__OWN_MATH(X) X(sinf, pe__sinf) X(cosf, pe__cosf) X(expf, pe__expf)
#define PE__OWN_POWF pe__powf
#define PE__OWN_MATH_D(X) X(sin, pe__sin) X(cos, pe__cos) X(exp, pe__exp) X(log, pe__log) \
    X(log2, pe__log2) X(sqrt, pe__sqrt)
#define PE__OWN_POW pe__pow

/* ==== 4. SINUSOIDAL TABLES ============================================================ */

static int pe__table_check(const float *table, size_t max_len, size_t d_model)
{
    size_t bytes;
    if (!table) return PE_ERR_NULL;
    if (!max_len || !d_model) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, max_len, d_model)) return PE_ERR_OVERFLOW;
    if (d_model % 2) return PE_ERR_ODD_D_MODEL;
    return PE_OK;
}

/* Rows [lo, hi) of a table, one row function per mode. */
typedef struct {
    float *table;
    size_t half;
    void (*row)(float *table, size_t p, size_t half);
} pe__rows_ctx;

static void pe__rows(void *ctx, size_t lo, size_t hi)
{
    const pe__rows_ctx *c = (const pe__rows_ctx *)ctx;
    size_t p;
    for (p = lo; p < hi; p++) c->row(c->table, p, c->half);
}

/* ---- sin and cos of float angles, every path ------------------------------------
   The scalar specification is pe__sincosf (correctly rounded). The vector kernels run its
   fast evaluation on 4 (AVX) or 8 (AVX-512) angles in double, then check each lane as the
   scalar code does: a lane out of the fast range (|a| >= 2^20, inf, NaN) or whose double
   lies within 32 ulps of a midpoint between floats (2^-48 relative, as pe__f_decided) is
   computed again by pe__sincosf. Every other lane's double is within 2^-50.5 of the exact
   value and no midpoint lies between them: its float is the correctly rounded one, so
   every path gives the same bits. The checks are on the double's bits: its low 29 bits
   are what rounding to float drops, 0x10000000 is the midpoint (valid for normal float
   results: |sin a| >= 2^-27 unless |a| < 2^-26, where the double is the float a itself). */

/* s[i], c[i] = sin a[i], cos a[i] for i < n; callers pass angles PE__SINCOS_CHUNK at a
   time from the stack */
#define PE__SINCOS_CHUNK 64

static void pe__sincos_scalar(float *s, float *c, const float *a, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) pe__sincosf(a[i], s + i, c + i);
}

/* The lanes of mask m (bit l: lane l) again through the specification. */
static PE__UNUSED void pe__sincos_fix(float *s, float *c, const float *a, unsigned m)
{
    unsigned l;
    for (l = 0; m; l++, m >>= 1)
        if (m & 1u) pe__sincosf(a[l], s + l, c + l);
}

/* Row p of the table (torch mode; pe_sinusoidal_table_fast is the same function), with
   div_term parked in row 0's even slots. */
static void pe__table_row_fast(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    const float pos = (float)p;
    size_t i;
    for (i = 0; i < half; i++) pe__sincosf(pos * table[2 * i], row + 2 * i, row + 2 * i + 1);
}

#ifdef PE__HAS_AVX
/* The lanes of 4 doubles that may not round to the correctly rounded float: their low 29
   bits within 32 of 0x10000000 (the low dwords of the four, gathered into one SSE2
   register: AVX without AVX2 has no 256-bit integer operations). */
static PE__TARGET_AVX unsigned pe__amb4(__m256d y)
{
    const __m256 b = _mm256_castpd_ps(y);
    const __m128i w = _mm_castps_si128(_mm_shuffle_ps(_mm256_castps256_ps128(b),
                                                      _mm256_extractf128_ps(b, 1),
                                                      _MM_SHUFFLE(2, 0, 2, 0)));
    const __m128i t = _mm_sub_epi32(_mm_and_si128(w, _mm_set1_epi32(0x1FFFFFFF)),
                                    _mm_set1_epi32(0x10000000 - 32));
    const __m128i bad = _mm_andnot_si128(_mm_cmpgt_epi32(t, _mm_set1_epi32(64)),
                                         _mm_cmpgt_epi32(t, _mm_set1_epi32(-1)));
    return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(bad));
}
#endif

#ifdef PE__HAS_AVX512
/* The lanes of 8 doubles that may not round to the correctly rounded float (pe__amb4). */
static PE__TARGET_AVX512 __mmask8 pe__amb8(__m512d y)
{
    const __m512i t = _mm512_sub_epi64(_mm512_and_epi64(_mm512_castpd_si512(y),
                                                        _mm512_set1_epi64(0x1FFFFFFF)),
                                       _mm512_set1_epi64(0x10000000 - 32));
    return _mm512_cmp_epu64_mask(t, _mm512_set1_epi64(64), _MM_CMPINT_LE);
}

/* floor(t) where 0 <= t < 2^31 (the lanes outside are redone by the scalar code): the
   truncation, through int32. (_mm512_maskz_roundscale_pd is a macro at -O0 whose mask
   conversion trips -Wsign-conversion.) */
static PE__TARGET_AVX512 __m512d pe__floor8(__m512d t)
{
    return _mm512_maskz_cvtepi32_pd(0xFF, _mm512_maskz_cvttpd_epi32(0xFF, t));
}
#endif

/* The sin/cos kernels of the avx2 and avx512 paths, written once over the primitives of
   the ISA being instantiated (PATHS): PE__DW angles at once, pe__sincosf's fast
   evaluation in doubles (PE__DVEC), checked; PE__HVEC holds PE__DW floats (PE__HLD,
   PE__HST, PE__HSET1, PE__HMUL; PE__HSHUF gathers the div terms from the even slots of
   two loads, PE__HUNPACKLO/HI interleave the (s, c) pairs back in order); PE__DADD,
   PE__DSUB, PE__DMUL, PE__DSET1, PE__DFLOOR (exact below 2^31), PE__DCVT / PE__DCVTF
   (float to double and back); PE__DCMP(a, b, predicate) gives a PE__DMASK, PE__DMOR
   joins two; PE__DSEL(m, yes, no); PE__DSIGN (of type PE__DSIGN_T), the sign bit that
   PE__DABS clears and PE__DSIGNS(vs, vc, neg_s, neg_c, xs, sign) sets where the quadrant
   says (and in vs, a's sign); PE__DUNDECIDED(x, vs, vc), the lanes out of the fast range
   or undecided (pe__amb4, pe__amb8).
   FAST(a, s, c): the PE__DW angles a; ROW: row p of the table (as pe__table_row_fast);
   ARRAY: as pe__sincos_scalar. The AVX-512 path has its own instance (8 doubles), so that
   a default build (compiled for "avx512f") and a native one run the same wide code (the
   AVX row compiled with -march=native had the 32 vector registers and ternary logic of
   AVX-512, the default build's not); its primitives are AVX-512F instructions only: the
   quadrant's choices as masked moves and integer xors of the sign, the zero-masked forms
   of the conversions and roundings (g++ 12 warns about the undefined vectors that the
   unmasked intrinsics start from).
   Horner's steps are written out: gcc -O2 leaves a loop of 8 steps rolled (a broadcast
   and a branch per step), which cost ~8% against -O3. */
#define PE__SINCOS_HORNER(acc, k, coef)                                               \
    (acc) = PE__DADD(PE__DMUL((acc), z), PE__DSET1((coef)[k]))
#define PE__DEFINE_SINCOS(FAST, ROW, ARRAY)                                           \
    static PE__VTARGET void FAST(PE__HVEC a, PE__HVEC *s, PE__HVEC *c)                \
    {                                                                                 \
        /* on |a|, as the scalar code: the sine's sign from a's at the end */         \
        const PE__DSIGN_T sign = PE__DSIGN;                                           \
        const PE__DVEC xs = PE__DCVT(a), x = PE__DABS(xs, sign);                      \
        const PE__DVEC n = PE__DFLOOR(PE__DADD(PE__DMUL(x, PE__DSET1(PE__2_PI)),      \
                                               PE__DSET1(0.5)));                      \
        const PE__DVEC r = PE__DSUB(PE__DSUB(PE__DSUB(x,                              \
                               PE__DMUL(n, PE__DSET1(PE__PIO2_1))),                   \
                               PE__DMUL(n, PE__DSET1(PE__PIO2_2))),                   \
                               PE__DMUL(n, PE__DSET1(PE__PIO2_3)));                   \
        const PE__DVEC z = PE__DMUL(r, r);                                            \
        /* n mod 4 as a double, and the three facts the quadrant decides */           \
        const PE__DVEC q = PE__DSUB(n, PE__DMUL(PE__DSET1(4.0),                       \
                               PE__DFLOOR(PE__DMUL(n, PE__DSET1(0.25)))));            \
        const PE__DVEC one = PE__DSET1(1.0), two = PE__DSET1(2.0);                    \
        const PE__DMASK q1 = PE__DCMP(q, one, _CMP_EQ_OQ);                            \
        const PE__DMASK swap = PE__DMOR(q1, PE__DCMP(q, PE__DSET1(3.0), _CMP_EQ_OQ)); \
        const PE__DMASK neg_s = PE__DCMP(q, two, _CMP_GE_OQ);                         \
        const PE__DMASK neg_c = PE__DMOR(q1, PE__DCMP(q, two, _CMP_EQ_OQ));           \
        PE__DVEC sr = PE__DSET1(pe__sin_k[0]), cr = PE__DSET1(pe__cos_k[0]), vs, vc;  \
        unsigned m;                                                                   \
        PE__SINCOS_HORNER(sr, 1, pe__sin_k); PE__SINCOS_HORNER(sr, 2, pe__sin_k);     \
        PE__SINCOS_HORNER(sr, 3, pe__sin_k); PE__SINCOS_HORNER(sr, 4, pe__sin_k);     \
        PE__SINCOS_HORNER(sr, 5, pe__sin_k); PE__SINCOS_HORNER(sr, 6, pe__sin_k);     \
        sr = PE__DADD(r, PE__DMUL(PE__DMUL(r, z), sr));                               \
        PE__SINCOS_HORNER(cr, 1, pe__cos_k); PE__SINCOS_HORNER(cr, 2, pe__cos_k);     \
        PE__SINCOS_HORNER(cr, 3, pe__cos_k); PE__SINCOS_HORNER(cr, 4, pe__cos_k);     \
        PE__SINCOS_HORNER(cr, 5, pe__cos_k); PE__SINCOS_HORNER(cr, 6, pe__cos_k);     \
        PE__SINCOS_HORNER(cr, 7, pe__cos_k); PE__SINCOS_HORNER(cr, 8, pe__cos_k);     \
        vs = PE__DSEL(swap, cr, sr);                                                  \
        vc = PE__DSEL(swap, sr, cr);                                                  \
        PE__DSIGNS(vs, vc, neg_s, neg_c, xs, sign);                                   \
        *s = PE__DCVTF(vs);                                                           \
        *c = PE__DCVTF(vc);                                                           \
        m = PE__DUNDECIDED(x, vs, vc);                                                \
        if (m) {                            /* rare: those lanes as the scalar code */ \
            float sa[PE__DW], ca[PE__DW], aa[PE__DW];                                 \
            PE__HST(aa, a);                                                           \
            PE__HST(sa, *s);                                                          \
            PE__HST(ca, *c);                                                          \
            pe__sincos_fix(sa, ca, aa, m);                                            \
            *s = PE__HLD(sa);                                                         \
            *c = PE__HLD(ca);                                                         \
        }                                                                             \
    }                                                                                 \
    static PE__VTARGET void ROW(float *table, size_t p, size_t half)                  \
    {                                                                                 \
        float *row = table + p * 2 * half;                                            \
        const float pos = (float)p;                                                   \
        const PE__HVEC vpos = PE__HSET1(pos);                                         \
        size_t i;                                                                     \
        for (i = 0; i + PE__DW <= half; i += PE__DW) {                                \
            /* div_term[i..] from the even slots, then the same float products */     \
            const PE__HVEC d = PE__HSHUF(PE__HLD(table + 2 * i),                      \
                                         PE__HLD(table + 2 * i + PE__DW));            \
            PE__HVEC s, c;                                                            \
            FAST(PE__HMUL(vpos, d), &s, &c);                                          \
            PE__HST(row + 2 * i, PE__HUNPACKLO(s, c));                                \
            PE__HST(row + 2 * i + PE__DW, PE__HUNPACKHI(s, c));                       \
        }                                                                             \
        PE__ZEROUPPER();                                                              \
        for (; i < half; i++)                                                         \
            pe__sincosf(pos * table[2 * i], row + 2 * i, row + 2 * i + 1);            \
    }                                                                                 \
    static PE__VTARGET void ARRAY(float *s, float *c, const float *a, size_t n)       \
    {                                                                                 \
        size_t i;                                                                     \
        for (i = 0; i + PE__DW <= n; i += PE__DW) {                                   \
            PE__HVEC vs, vc;                                                          \
            FAST(PE__HLD(a + i), &vs, &vc);                                           \
            PE__HST(s + i, vs);                                                       \
            PE__HST(c + i, vc);                                                       \
        }                                                                             \
        PE__ZEROUPPER();                                                              \
        for (; i < n; i++) pe__sincosf(a[i], s + i, c + i);                           \
    }

#ifdef PE__HAS_NEON
/* Two angles at once (AArch64 NEON, 2 doubles): pe__sincosf's fast evaluation on |a|,
   checked as pe__sincos4 (the quadrant's choices as bit selects, the check on the
   doubles' low 29 bits). *bad: the lanes to compute again. */
static void pe__sincos2_neon(float64x2_t xs, float64x2_t *ys, float64x2_t *yc, uint64x2_t *bad)
{
    const uint64x2_t sign = vdupq_n_u64(0x8000000000000000ull);
    const float64x2_t x = vabsq_f64(xs);
    const float64x2_t n = vrndmq_f64(vaddq_f64(vmulq_f64(x, vdupq_n_f64(PE__2_PI)),
                                               vdupq_n_f64(0.5)));
    const float64x2_t r = vsubq_f64(vsubq_f64(vsubq_f64(x, vmulq_f64(n, vdupq_n_f64(PE__PIO2_1))),
                                              vmulq_f64(n, vdupq_n_f64(PE__PIO2_2))),
                                    vmulq_f64(n, vdupq_n_f64(PE__PIO2_3)));
    const float64x2_t z = vmulq_f64(r, r);
    /* n mod 4 (n < 2^20 in the lanes that count; the others are recomputed) */
    const uint64x2_t q = vandq_u64(vreinterpretq_u64_s64(vcvtq_s64_f64(n)), vdupq_n_u64(3));
    const uint64x2_t swap = vtstq_u64(q, vdupq_n_u64(1));
    const uint64x2_t neg_s = vandq_u64(vtstq_u64(q, vdupq_n_u64(2)), sign);
    const uint64x2_t neg_c = vandq_u64(vtstq_u64(vaddq_u64(q, vdupq_n_u64(1)), vdupq_n_u64(2)),
                                       sign);
    float64x2_t sr = vdupq_n_f64(pe__sin_k[0]), cr = vdupq_n_f64(pe__cos_k[0]), vs, vc;
    uint64x2_t t1, t2;
    int k;
    for (k = 1; k < 7; k++) sr = vaddq_f64(vmulq_f64(sr, z), vdupq_n_f64(pe__sin_k[k]));
    sr = vaddq_f64(r, vmulq_f64(vmulq_f64(r, z), sr));
    for (k = 1; k < 9; k++) cr = vaddq_f64(vmulq_f64(cr, z), vdupq_n_f64(pe__cos_k[k]));
    vs = vbslq_f64(swap, cr, sr);
    vc = vbslq_f64(swap, sr, cr);
    vs = vreinterpretq_f64_u64(veorq_u64(vreinterpretq_u64_f64(vs),
                                         veorq_u64(neg_s, vandq_u64(vreinterpretq_u64_f64(xs),
                                                                    sign))));
    vc = vreinterpretq_f64_u64(veorq_u64(vreinterpretq_u64_f64(vc), neg_c));
    /* out of range (or NaN): not x < 2^20; undecided: low 29 bits within 32 of 2^28 */
    t1 = vsubq_u64(vandq_u64(vreinterpretq_u64_f64(vs), vdupq_n_u64(0x1FFFFFFF)),
                   vdupq_n_u64(0x10000000 - 32));
    t2 = vsubq_u64(vandq_u64(vreinterpretq_u64_f64(vc), vdupq_n_u64(0x1FFFFFFF)),
                   vdupq_n_u64(0x10000000 - 32));
    *bad = vorrq_u64(veorq_u64(vcltq_f64(x, vdupq_n_f64(PE__FAST_MAX)), vdupq_n_u64(~0ull)),
                     vorrq_u64(vcleq_u64(t1, vdupq_n_u64(64)), vcleq_u64(t2, vdupq_n_u64(64))));
    *ys = vs;
    *yc = vc;
}

static void pe__sincos_neon(float *s, float *c, const float *a, size_t n)
{
    size_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(a + i);
        float64x2_t sl, cl, sh, ch;
        uint64x2_t bl, bh;
        pe__sincos2_neon(vcvt_f64_f32(vget_low_f32(v)), &sl, &cl, &bl);
        pe__sincos2_neon(vcvt_high_f64_f32(v), &sh, &ch, &bh);
        vst1q_f32(s + i, vcvt_high_f32_f64(vcvt_f32_f64(sl), sh));
        vst1q_f32(c + i, vcvt_high_f32_f64(vcvt_f32_f64(cl), ch));
        if (vmaxvq_u32(vreinterpretq_u32_u64(vorrq_u64(bl, bh)))) {    /* rare */
            uint64_t mb[4];
            vst1q_u64(mb, bl);
            vst1q_u64(mb + 2, bh);
            pe__sincos_fix(s + i, c + i, a + i,
                           (unsigned)(mb[0] & 1u) | (unsigned)(mb[1] & 1u) << 1 |
                               (unsigned)(mb[2] & 1u) << 2 | (unsigned)(mb[3] & 1u) << 3);
        }
    }
    for (; i < n; i++) pe__sincosf(a[i], s + i, c + i);
}

/* Row p of the table through pe__sincos_neon, PE__SINCOS_CHUNK angles at a time (row 0
   holds the div terms: each chunk reads its angles before it writes). */
static void pe__table_row_fast_neon(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    const float pos = (float)p;
    float a[PE__SINCOS_CHUNK], sv[PE__SINCOS_CHUNK], cv[PE__SINCOS_CHUNK];
    size_t i = 0, j;
    while (i < half) {
        size_t m = half - i;
        if (m > PE__SINCOS_CHUNK) m = PE__SINCOS_CHUNK;
        for (j = 0; j < m; j++) a[j] = pos * table[2 * (i + j)];
        pe__sincos_neon(sv, cv, a, m);
        for (j = 0; j < m; j++) {
            row[2 * (i + j)] = sv[j];
            row[2 * (i + j) + 1] = cv[j];
        }
        i += m;
    }
}
#endif

/* ---- the sinusoidal tables ---------------------------------------------- */

/* The document's code, in float32 step by step:
     div_term = exp(arange(0, d, 2).float() * f32(-log(10000.0) / d))
     pe[:, 0::2] = sin(position * div_term);  pe[:, 1::2] = cos(position * div_term)
   torch rounds the Python double scale to float32 before the float32 product; doing
   the product in double changes 44 of 256 div terms at d = 512.
   div_term is parked in row 0's even slots (row 0 is sin(0)=0, cos(0)=1 whatever
   div is) so that each of the d/2 expf calls is made once, without scratch memory. */
static int pe__table_float(float *table, size_t max_len, size_t d_model,
                           void (*row)(float *table, size_t p, size_t half))
{
    size_t i, half = d_model / 2;
    float scale;
    pe__rows_ctx c = {table, half, row};
    int st = pe__table_check(table, max_len, d_model);
    if (st) return st;

    scale = (float)(-pe__log(10000.0) / (double)d_model);
    for (i = 0; i < half; i++)
        table[2 * i] = pe__expf((float)(2 * i) * scale);
    pe__split(1, max_len, (double)max_len * (double)d_model, pe__rows, &c);
    row(table, 0, half);                    /* last: it held div_term until now */
    return PE_OK;
}

PEDEF int pe_sinusoidal_table(float *table, size_t max_len, size_t d_model)
{
    return pe__table_float(table, max_len, d_model, pe__current()->table_row_fast);
}

PEDEF int pe_sinusoidal_table_fast(float *table, size_t max_len, size_t d_model)
{
    return pe__table_float(table, max_len, d_model, pe__current()->table_row_fast);
}

/* Row p of the double table; row 0 holds the double div terms (memcpy: no alignment
   or aliasing assumptions). */
static void pe__table_row_exact(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    size_t i;
    for (i = 0; i < half; i++) {
        double div, arg;
        memcpy(&div, table + 2 * i, sizeof div);
        arg = (double)p * div;
        pe__sincos_d2f(arg, row + 2 * i, row + 2 * i + 1);
    }
}

/* The formula of 001/003 in double: pe[p,2i] = sin(p / 10000^(2i/d)), rounded once.
   Row 0 parks the d/2 double div terms (d floats hold them exactly) as above. */
PEDEF int pe_sinusoidal_table_exact(float *table, size_t max_len, size_t d_model)
{
    size_t i, half = d_model / 2;
    double scale;
    pe__rows_ctx c = {table, half, pe__table_row_exact};
    int st = pe__table_check(table, max_len, d_model);
    if (st) return st;

    scale = -pe__log(10000.0) / (double)d_model;
    for (i = 0; i < half; i++) {
        double div = pe__exp((double)(2 * i) * scale);
        memcpy(table + 2 * i, &div, sizeof div);
    }
    pe__split(1, max_len, (double)max_len * (double)d_model, pe__rows, &c);
    pe__table_row_exact(table, 0, half);
    return PE_OK;
}

/* ==== 5. ADDING A TABLE =============================================================== */

/* out[i] = a[i] + b[i] for i < n; out may equal a (each step loads before it stores).
   The scalar loop is the specification; the vector loops do the same IEEE additions
   lane by lane, so every path gives the same bits. */

static void pe__add_scalar(float *out, const float *a, const float *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* The vector loops, written once over the primitives of the ISA being instantiated:
   PE__VEC of PE__W floats, PE__LD, PE__ST, PE__STNT (a non-temporal store), PE__ADD.
   Four vectors per step keep more loads in flight, which the embedding's gather of
   table rows from memory needs.
   NAME_nt stores non-temporally (x86): vector streaming stores need aligned
   addresses, so the elements before out's first vector boundary and after its last go
   one at a time through the scalar streaming store (movnti), and no cache line of out
   is ever half written through the cache (that line would be read from memory first,
   and the point is to avoid reading out). The caller issues an sfence once after the
   last call, to order the streaming stores before whatever comes next.
   On x86 the eight loads, the four additions and the four stores go in one order,
   pinned by compiler barriers (PE__IN_ORDER between memory accesses, PE__PIN4 after
   the sums): the order gcc's tuning for the Zen cores picks, which a plain -O2 build
   (generic tuning) did not, and in which in-place adds ran 3-9% faster (README,
   Performance). So every build runs the same loop, whatever its flags. */
#define PE__ADD4(ST, out, a, b, i)                                                    \
    do {                                                                              \
        const float *a_ = (a) + (i), *b_ = (b) + (i);                                 \
        float *o_ = (out) + (i);                                                      \
        PE__VEC a0_, a1_, a2_, a3_, b1_, b2_, b3_, s0_, s1_, s2_, s3_;                \
        a1_ = PE__LD(a_ + PE__W); PE__IN_ORDER();                                     \
        a2_ = PE__LD(a_ + 2 * PE__W); PE__IN_ORDER();                                 \
        a3_ = PE__LD(a_ + 3 * PE__W); PE__IN_ORDER();                                 \
        b1_ = PE__LD(b_ + PE__W); PE__IN_ORDER();                                     \
        b2_ = PE__LD(b_ + 2 * PE__W); PE__IN_ORDER();                                 \
        b3_ = PE__LD(b_ + 3 * PE__W); PE__IN_ORDER();                                 \
        a0_ = PE__LD(a_);                                                             \
        s0_ = PE__ADD(a0_, PE__LD(b_));                                               \
        s1_ = PE__ADD(a1_, b1_);                                                      \
        s2_ = PE__ADD(a2_, b2_);                                                      \
        s3_ = PE__ADD(a3_, b3_);                                                      \
        PE__PIN4(s0_, s1_, s2_, s3_);                                                 \
        ST(o_ + PE__W, s1_); PE__IN_ORDER();                                          \
        ST(o_ + 2 * PE__W, s2_); PE__IN_ORDER();                                      \
        ST(o_ + 3 * PE__W, s3_); PE__IN_ORDER();                                      \
        ST(o_, s0_);                                                                  \
    } while (0)
#define PE__DEFINE_SPAN(NAME)                                                         \
    static PE__VTARGET void NAME(float *out, const float *a, const float *b, size_t n) \
    {                                                                                 \
        const size_t nv = n / (4 * PE__W) * (4 * PE__W);                              \
        size_t i;                                                                     \
        for (i = 0; i < nv; i += 4 * PE__W) PE__ADD4(PE__ST, out, a, b, i);           \
        for (i = nv; i < n; i++) out[i] = a[i] + b[i];                                \
    }
#define PE__STREAM1(p, v)                                                             \
    do {                                                                              \
        float v_ = (v);                                                               \
        int bits_;                                                                    \
        memcpy(&bits_, &v_, sizeof bits_);                                            \
        _mm_stream_si32((int *)(void *)(p), bits_);                                   \
    } while (0)
#define PE__DEFINE_SPAN_NT(NAME)                                                      \
    static PE__VTARGET void NAME(float *out, const float *a, const float *b, size_t n) \
    {                                                                                 \
        size_t i, head = (size_t)(-(uintptr_t)out / sizeof(float)) % PE__W, nv;       \
        if (head > n) head = n;                                                       \
        for (i = 0; i < head; i++) PE__STREAM1(out + i, a[i] + b[i]);                 \
        nv = head + (n - head) / (4 * PE__W) * (4 * PE__W);                           \
        for (i = head; i < nv; i += 4 * PE__W) PE__ADD4(PE__STNT, out, a, b, i);      \
        for (i = nv; i < n; i++) PE__STREAM1(out + i, a[i] + b[i]);                   \
    }

#ifdef PE__HAS_SSE2
/* Orders the non-temporal stores before anything the caller does next. */
static PE__TARGET_SSE2 void pe__sfence(void) { _mm_sfence(); }
#endif

/* Orders a range's non-temporal stores (x86 paths only write any). */
static void pe__fence(const pe__isa *isa)
{
#ifdef PE__HAS_SSE2
    if (isa->add_nt != isa->add) pe__sfence();
#else
    (void)isa;
#endif
}

/* ---- the adds ------------------------------------------------------------- */

/* Rows [lo, hi) of an add: row r of x and out (rows of d floats in memory order)
   takes table row (r / inner) % seq, added by the path's loop `add`. */
typedef struct {
    float *out;
    const float *x, *table;
    size_t seq, inner, d;
    const pe__isa *isa;
    pe__span_fn add;
} pe__add_ctx;

/* Row r of x and out with table row t. */
static void pe__add_row_at(const pe__add_ctx *c, size_t r, size_t t)
{
    const size_t d = c->d;
    c->add(c->out + r * d, c->x + r * d, c->table + t * d, d);
}

static void pe__add_rows(void *ctx, size_t lo, size_t hi)
{
    const pe__add_ctx *c = (const pe__add_ctx *)ctx;
    const size_t seq = c->seq;
    size_t r = lo;
    if (c->inner == 1) {
        /* Batch-first: two batches side by side, so each table row read from L2/L3
           serves a second row from L1 (seq-first rows get this from their layout).
           Rows up to the first batch boundary, and a last lone batch, go one by one. */
        const size_t head = (lo % seq == 0) ? 0 : seq - lo % seq;
        for (; r < hi && r < lo + head; r++) pe__add_row_at(c, r, r % seq);
        for (; r + 2 * seq <= hi; r += 2 * seq) {
            size_t t;
            for (t = 0; t < seq; t++) {
                pe__add_row_at(c, r + t, t);
                pe__add_row_at(c, r + seq + t, t);
            }
        }
    }
    for (; r < hi; r++) pe__add_row_at(c, r, r / c->inner % seq);
    if (c->add == c->isa->add_nt) pe__fence(c->isa);
}

/* Both layouts are (outer, seq, inner, d) with the position on the seq axis:
   batch-first is (batch, seq, 1, d), seq-first is (1, seq, batch, d). */
static int pe__add(float *out, const float *x, const float *table, size_t outer,
                   size_t seq, size_t inner, size_t d_model, size_t max_len)
{
    size_t bytes, table_bytes, rows = outer * inner;
    pe__add_ctx c = {out, x, table, seq, inner, d_model, NULL, NULL};
    if (!out || !x || !table) return PE_ERR_NULL;
    if (!outer || !seq || !inner || !d_model || !max_len) return PE_ERR_ZERO_SIZE;
    if (rows / outer != inner || !pe__bytes(&bytes, rows, seq) ||
        !pe__bytes(&bytes, rows * seq, d_model) ||
        !pe__bytes(&table_bytes, max_len, d_model))
        return PE_ERR_OVERFLOW;
    if (seq > max_len) return PE_ERR_SEQ_TOO_LONG;
    if (pe__overlap(out, bytes, table, table_bytes) ||
        (out != x && pe__overlap(out, bytes, x, bytes)))
        return PE_ERR_ALIAS;

    /* Non-temporal stores only out of place: in place, the row's cache lines were
       just read, and writing them back through the cache is best. */
    c.isa = pe__current();
    c.add = out != x && bytes >= pe__nontemporal_bytes ? c.isa->add_nt : c.isa->add;
    pe__split(0, rows * seq, (double)(rows * seq) * (double)d_model, pe__add_rows, &c);
    return PE_OK;
}

PEDEF int pe_add_batch_first(float *out, const float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len)
{
    return pe__add(out, x, table, batch, seq, 1, d_model, max_len);
}

PEDEF int pe_add_batch_first_inplace(float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len)
{
    return pe__add(x, x, table, batch, seq, 1, d_model, max_len);
}

PEDEF int pe_add_seq_first(float *out, const float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len)
{
    return pe__add(out, x, table, 1, seq, batch, d_model, max_len);
}

PEDEF int pe_add_seq_first_inplace(float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len)
{
    return pe__add(x, x, table, 1, seq, batch, d_model, max_len);
}

/* ==== 6. TOKEN AND POSITION EMBEDDINGS ================================================ */
/* Learned token and position tables added: 002's tok_emb(ids) + pos_emb(arange(seq)). */

static int64_t pe__id(const int32_t *ids32, const int64_t *ids64, size_t i)
{
    return ids32 ? (int64_t)ids32[i] : ids64[i];
}

/* Rows [lo, hi) of an embedding: out row `at` = wte[ids[at]] + wpe[at % seq]. */
typedef struct {
    float *out;
    const int32_t *ids32;
    const int64_t *ids64;
    const float *wte, *wpe;
    size_t seq, d;
    const pe__isa *isa;
    pe__span_fn add;
} pe__embed_ctx;

static void pe__embed_rows(void *ctx, size_t lo, size_t hi)
{
    const pe__embed_ctx *c = (const pe__embed_ctx *)ctx;
    const size_t d = c->d, chunk = 128; /* floats: 8 cache lines */
    size_t at, j, k;
    const float *tok = lo < hi ? c->wte + (size_t)pe__id(c->ids32, c->ids64, lo) * d : NULL;
    for (at = lo; at < hi; at++) {
        /* Rows of wte are gathered from all over memory: ask for the next token's row
           while this one is added, so its cache misses overlap this row's work. A few
           lines per chunk of this row rather than the whole row at once: a burst of
           48 prefetches fills the miss buffers and stalls the loads of this row. */
        const float *next = at + 1 < hi ? c->wte + (size_t)pe__id(c->ids32, c->ids64, at + 1) * d
                                         : NULL;
        const float *pos = c->wpe + at % c->seq * d;
        float *out = c->out + at * d;
        /* And the first line of the row three tokens on: each row is on a new page, and
           this starts its TLB walk early. */
        if (at + 3 < hi) PE__PREFETCH(c->wte + (size_t)pe__id(c->ids32, c->ids64, at + 3) * d);
        for (j = 0; j < d; j += chunk) {
            const size_t m = d - j < chunk ? d - j : chunk;
            if (next)
                for (k = j; k < j + m; k += 64 / sizeof(float)) PE__PREFETCH(next + k);
            c->add(out + j, tok + j, pos + j, m);
        }
        tok = next;
    }
    if (c->add == c->isa->add_nt) pe__fence(c->isa);
}

/* Exactly one of ids32 / ids64 is used; the public wrappers pass the other as NULL. */
static int pe__embed(float *out, const int32_t *ids32, const int64_t *ids64,
                     const float *wte, const float *wpe, size_t batch, size_t seq,
                     size_t d_model, size_t vocab, size_t context_length)
{
    size_t b, n, bytes, wte_bytes, wpe_bytes, id_size;
    pe__embed_ctx c = {out, ids32, ids64, wte, wpe, seq, d_model, NULL, NULL};
    const void *ids = ids32 ? (const void *)ids32 : (const void *)ids64;
    if (!out || !ids || !wte || !wpe) return PE_ERR_NULL;
    if (!batch || !seq || !d_model || !vocab || !context_length) return PE_ERR_ZERO_SIZE;
    id_size = ids32 ? sizeof *ids32 : sizeof *ids64;
    if (!pe__bytes(&bytes, batch, seq) || !pe__bytes(&bytes, batch * seq, d_model) ||
        !pe__bytes(&wte_bytes, vocab, d_model) ||
        !pe__bytes(&wpe_bytes, context_length, d_model) ||
        batch * seq > (size_t)-1 / id_size)
        return PE_ERR_OVERFLOW;
    if (seq > context_length) return PE_ERR_SEQ_TOO_LONG;
    n = batch * seq;
    if (pe__overlap(out, bytes, ids, n * id_size) || pe__overlap(out, bytes, wte, wte_bytes) ||
        pe__overlap(out, bytes, wpe, wpe_bytes))
        return PE_ERR_ALIAS;
    for (b = 0; b < n; b++) {
        int64_t id = pe__id(ids32, ids64, b);
        if (id < 0 || (uint64_t)id >= (uint64_t)vocab) return PE_ERR_ID_RANGE;
    }

    c.isa = pe__current();
    c.add = bytes >= pe__nontemporal_bytes ? c.isa->add_nt : c.isa->add;
    pe__split(0, n, (double)n * (double)d_model, pe__embed_rows, &c);
    return PE_OK;
}

PEDEF int pe_embed(float *out, const int32_t *ids, const float *wte, const float *wpe,
                   size_t batch, size_t seq, size_t d_model, size_t vocab,
                   size_t context_length)
{
    return pe__embed(out, ids, NULL, wte, wpe, batch, seq, d_model, vocab, context_length);
}

PEDEF int pe_embed_i64(float *out, const int64_t *ids, const float *wte, const float *wpe,
                       size_t batch, size_t seq, size_t d_model, size_t vocab,
                       size_t context_length)
{
    return pe__embed(out, NULL, ids, wte, wpe, batch, seq, d_model, vocab, context_length);
}

/* ==== 7. TRAINING THE ADDS AND EMBEDDINGS ============================================= */

/* ---- gradient kernels (training) ---------------------------------------------------
   Two loops for the backward functions, each a scalar specification and vector loops
   that do the same IEEE operations lane by lane (the same bits on every path):
   pe__accz_*: out[i] = a[i] + (b[i] + 0): the embedding's token rows added onto dwte
   ((b + 0) is b but for -0.0, which becomes +0.0: torch adds each row to a zero-filled
   table, see pe_embed_backward);
   pe__colsum_*: out[c] += the sum of column c of x (rows at `stride` floats) in torch's
   cascade order (pe__cascade below), for the columns c < cols. */

static void pe__accz_scalar(float *out, const float *a, const float *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        const float g = b[i] + 0.0f;
        out[i] = a[i] + g;
    }
}

/* The chunk length of torch's cascade over n values: 2^max(4, CeilLog2(n) / 4), with
   CeilLog2(n) = 1 for n <= 2, else the number of bits of n - 1 (ATen's utils). */
static unsigned pe__level_power(size_t n)
{
    unsigned bits = 0;
    size_t v;
    if (n <= 2) return 4;   /* CeilLog2 1 */
    for (v = n - 1; v; v >>= 1) bits++;
    return bits / 4 > 4 ? bits / 4 : 4;
}

/* torch's sum of n floats x[0], x[stride], .. (multi_row_sum of ATen's SumKernel.cpp, one
   column): four float accumulators from +0; chunks of 2^p values are summed into level
   0, which is then added into level 1 and cleared; level 1 moves on into level 2 when
   the count of values so far is a multiple of 2^2p, level 2 into level 3 at multiples of
   2^3p; the values after the last whole chunk go into level 0; the result is
   ((l0 + l1) + l2) + l3. Below 16 values: ((0 + x0) + x1) + ... Every step is its own
   float (rounded even where float expressions are evaluated in double). */
static float pe__cascade(const float *x, size_t stride, size_t n)
{
    const unsigned p = pe__level_power(n);
    const size_t step = (size_t)1 << p, mask = step - 1;
    float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f, l3 = 0.0f;
    size_t i = 0, j;
    while (n - i >= step) {
        for (j = 0; j < step; j++, i++) l0 += x[i * stride];
        l1 += l0;
        l0 = 0.0f;
        if (!(i & mask << p)) {
            l2 += l1;
            l1 = 0.0f;
            if (!(i & mask << 2 * p)) {
                l3 += l2;
                l2 = 0.0f;
            }
        }
    }
    for (; i < n; i++) l0 += x[i * stride];
    l0 += l1;
    l0 += l2;
    l0 += l3;
    return l0;
}

static void pe__colsum_scalar(float *out, const float *x, size_t stride, size_t rows,
                              size_t cols)
{
    size_t c;
    for (c = 0; c < cols; c++) {
        const float s = pe__cascade(x + c, stride, rows);
        out[c] += s;
    }
}

/* The vector loops over the primitives of one ISA (as PE__DEFINE_SPAN): PE__ZERO, a
   vector of +0. pe__colsum_* runs the cascade of pe__cascade on PE__W columns at once. */
#define PE__DEFINE_ACCZ(NAME)                                                         \
    static PE__VTARGET void NAME(float *out, const float *a, const float *b, size_t n) \
    {                                                                                 \
        size_t i;                                                                     \
        for (i = 0; i + 2 * PE__W <= n; i += 2 * PE__W) {                             \
            PE__VEC g0 = PE__ADD(PE__LD(b + i), PE__ZERO);                            \
            PE__VEC g1 = PE__ADD(PE__LD(b + i + PE__W), PE__ZERO);                    \
            PE__VEC a0 = PE__LD(a + i), a1 = PE__LD(a + i + PE__W);                   \
            PE__ST(out + i, PE__ADD(a0, g0));                                         \
            PE__ST(out + i + PE__W, PE__ADD(a1, g1));                                 \
        }                                                                             \
        pe__accz_scalar(out + i, a + i, b + i, n - i);                                \
    }
/* pe__colsum_*: 4 vectors of columns at a time, then one, the four levels of each in
   registers (vector variables a, b, c, d for levels 0..3: no array on the stack), so
   every row contributes a contiguous span of 4 vectors. Below 2^p rows (the usual batch)
   only level 0 is used: the other levels would add +0 (the partial sums are never -0.0,
   so that changes nothing). PE__CS_EACH(M) applies M to the vectors of one step. */
#define PE__CS_DECL(k) PE__VEC a##k = PE__ZERO, b##k = PE__ZERO, c##k = PE__ZERO, d##k = PE__ZERO;
#define PE__CS_ROW(k) a##k = PE__ADD(a##k, PE__LD(r_ + (k) * PE__W));
#define PE__CS_UP1(k) b##k = PE__ADD(b##k, a##k); a##k = PE__ZERO;
#define PE__CS_UP2(k) c##k = PE__ADD(c##k, b##k); b##k = PE__ZERO;
#define PE__CS_UP3(k) d##k = PE__ADD(d##k, c##k); c##k = PE__ZERO;
#define PE__CS_OUT(k)                                                                 \
    {                                                                                 \
        PE__VEC t_ = a##k;                                                            \
        if (rows >= step) t_ = PE__ADD(PE__ADD(PE__ADD(t_, b##k), c##k), d##k);       \
        PE__ST(out + col + (k) * PE__W, PE__ADD(PE__LD(out + col + (k) * PE__W), t_)); \
    }
#define PE__CS_EACH4(M) M(0) M(1) M(2) M(3)
#define PE__CS_EACH1(M) M(0)
/* columns [col, col + NV * PE__W) of x, all rows */
#define PE__CS_COLUMNS(EACH)                                                          \
    {                                                                                 \
        const float *xc_ = x + col;                                                   \
        size_t i_ = 0, j_;                                                            \
        EACH(PE__CS_DECL)                                                             \
        while (rows - i_ >= step) {                                                   \
            for (j_ = 0; j_ < step; j_++, i_++) {                                     \
                const float *r_ = xc_ + i_ * stride;                                  \
                EACH(PE__CS_ROW)                                                      \
            }                                                                         \
            EACH(PE__CS_UP1)                                                          \
            if (!(i_ & mask << p)) {                                                  \
                EACH(PE__CS_UP2)                                                      \
                if (!(i_ & mask << 2 * p)) { EACH(PE__CS_UP3) }                       \
            }                                                                         \
        }                                                                             \
        for (; i_ < rows; i_++) {                                                     \
            const float *r_ = xc_ + i_ * stride;                                      \
            EACH(PE__CS_ROW)                                                          \
        }                                                                             \
        EACH(PE__CS_OUT)                                                              \
    }
#define PE__DEFINE_COLSUM(NAME)                                                       \
    static PE__VTARGET void NAME(float *out, const float *x, size_t stride,           \
                                 size_t rows, size_t cols)                            \
    {                                                                                 \
        const unsigned p = pe__level_power(rows);                                     \
        const size_t step = (size_t)1 << p, mask = step - 1;                          \
        size_t col;                                                                   \
        for (col = 0; cols - col >= 4 * PE__W; col += 4 * PE__W) PE__CS_COLUMNS(PE__CS_EACH4) \
        for (; cols - col >= PE__W; col += PE__W) PE__CS_COLUMNS(PE__CS_EACH1)        \
        pe__colsum_scalar(out + col, x + col, stride, rows, cols - col);              \
    }

/* ---- training: the gradients of the adds and of the embedding ---------------------- */

/* torch's sum over a broadcast dimension, the sum that autograd's x + table[:seq] and
   tok_emb(ids) + pos_emb(arange(seq)) give the table (sum_to, a sum over the batch
   dimension; ATen's SumKernel.cpp, cascade_sum): a reduction of `rows` (the batch) rows
   of n columns, one output per column. Its order per column c depends on where c is:
   the first pe__cascade_cols(n) columns take the cascade (pe__cascade; vectorised there,
   8 floats per vector in torch's AVX2 and default dispatch), the others row_sum below;
   a reduction over contiguous values (n == 1: d_model 1) of 8 rows or more takes the
   lane-wise sum of pe__sum_inner. */
static size_t pe__cascade_cols(size_t n) { return n == 1 ? 0 : n >= 8 ? n / 32 * 32 : n / 4 * 4; }

/* torch's row_sum: the n values as four interleaved sequences x[4i + k], each summed by
   the cascade (over n / 4 values), the last n % 4 values added to the first sum, then
   ((s0 + s1) + s2) + s3. */
static float pe__sum_row(const float *x, size_t stride, size_t n)
{
    const size_t q = n / 4;
    float s0 = pe__cascade(x, 4 * stride, q), s1, s2, s3;
    size_t i;
    s1 = pe__cascade(x + stride, 4 * stride, q);
    s2 = pe__cascade(x + 2 * stride, 4 * stride, q);
    s3 = pe__cascade(x + 3 * stride, 4 * stride, q);
    for (i = 4 * q; i < n; i++) s0 += x[i * stride];
    s0 += s1;
    s0 += s2;
    s0 += s3;
    return s0;
}

/* torch's vectorized_inner_sum (8-float vectors): lane l sums x[8v + l], v < n / 8, by
   row_sum; the result is 0 plus the last n % 8 values in turn, plus the 8 lanes in turn. */
static float pe__sum_inner(const float *x, size_t n)
{
    const size_t nv = n / 8;
    float t = 0.0f;
    size_t i;
    for (i = 8 * nv; i < n; i++) t += x[i];
    for (i = 0; i < 8; i++) {
        const float lane = pe__sum_row(x + i, 8, nv);
        t += lane;
    }
    return t;
}

/* out[c] += the sum over the rows of column c of x (row r at x + r * stride), for the
   columns [c0, c1) of a reduction of n columns, each in torch's order for its column. */
static void pe__tsum(const pe__isa *isa, float *out, const float *x, size_t stride,
                     size_t rows, size_t n, size_t c0, size_t c1)
{
    const size_t nc = pe__cascade_cols(n);
    size_t c;
    if (c0 < nc) isa->colsum(out + c0, x + c0, stride, rows, (c1 < nc ? c1 : nc) - c0);
    for (c = c0 > nc ? c0 : nc; c < c1; c++) {
        const float s = n == 1 && rows >= 8 ? pe__sum_inner(x, rows)
                                            : pe__sum_row(x + c, stride, rows);
        out[c] += s;
    }
}

/* A table's gradient: groups of n columns (batch-first: one group, the seq * d_model
   values of dout[b]; seq-first: one group per position, its d_model values), each column
   summed over `rows` rows (the batch) at `stride` floats, groups `gstride` floats apart
   in dout and n apart in dtable. The work is cut into units of a group's PE__TBLK
   columns; a column's order depends on its place in its group only, not on the units. */
#define PE__TBLK 256
typedef struct {
    float *dtable;
    const float *dout;
    size_t rows, n, stride, gstride, nblk;
    const pe__isa *isa;
} pe__tgrad_ctx;

static void pe__tgrad_units(void *ctx, size_t lo, size_t hi)
{
    const pe__tgrad_ctx *c = (const pe__tgrad_ctx *)ctx;
    size_t u;
    for (u = lo; u < hi; u++) {
        const size_t g = u / c->nblk, c0 = u % c->nblk * PE__TBLK;
        const size_t c1 = c->n - c0 < PE__TBLK ? c->n : c0 + PE__TBLK;
        pe__tsum(c->isa, c->dtable + g * c->n, c->dout + g * c->gstride, c->stride, c->rows,
                 c->n, c0, c1);
    }
}

/* dout is (outer, seq, inner, d) as in pe__add: batch-first (batch, seq, 1, d), seq-first
   (1, seq, batch, d). Checked by the caller. */
static void pe__tgrad(float *dtable, const float *dout, size_t outer, size_t seq,
                      size_t inner, size_t d_model)
{
    pe__tgrad_ctx c;
    size_t groups;
    c.dtable = dtable;
    c.dout = dout;
    c.isa = pe__current();
    if (inner == 1) {               /* batch-first: one group of seq * d columns */
        groups = 1;
        c.rows = outer;
        c.n = c.stride = seq * d_model;
        c.gstride = 0;
    } else {                        /* seq-first: a group of d columns per position */
        groups = seq;
        c.rows = inner;
        c.n = c.stride = d_model;
        c.gstride = inner * d_model;
    }
    c.nblk = (c.n + PE__TBLK - 1) / PE__TBLK;
    pe__split(0, groups * c.nblk, (double)(outer * seq * inner) * (double)d_model,
              pe__tgrad_units, &c);
}

static int pe__add_backward(float *dtable, const float *dout, size_t outer, size_t seq,
                            size_t inner, size_t d_model, size_t max_len)
{
    size_t bytes, table_bytes, rows = outer * inner;
    if (!dtable || !dout) return PE_ERR_NULL;
    if (!outer || !seq || !inner || !d_model || !max_len) return PE_ERR_ZERO_SIZE;
    if (rows / outer != inner || !pe__bytes(&bytes, rows, seq) ||
        !pe__bytes(&bytes, rows * seq, d_model) || !pe__bytes(&table_bytes, max_len, d_model))
        return PE_ERR_OVERFLOW;
    if (seq > max_len) return PE_ERR_SEQ_TOO_LONG;
    if (pe__overlap(dtable, table_bytes, dout, bytes)) return PE_ERR_ALIAS;
    pe__tgrad(dtable, dout, outer, seq, inner, d_model);
    return PE_OK;
}

PEDEF int pe_add_batch_first_backward(float *dtable, const float *dout, size_t batch,
                                      size_t seq, size_t d_model, size_t max_len)
{
    return pe__add_backward(dtable, dout, batch, seq, 1, d_model, max_len);
}

PEDEF int pe_add_seq_first_backward(float *dtable, const float *dout, size_t seq,
                                    size_t batch, size_t d_model, size_t max_len)
{
    return pe__add_backward(dtable, dout, 1, seq, batch, d_model, max_len);
}

/* The embedding's dwte: every token's row of dout added onto its id's row of dwte, in
   token order, by the path's pe__accz loop; the columns are cut into blocks of
   PE__EBLK floats (a cache line), and each thread takes a contiguous range of blocks
   over all the tokens, so every element sees the same additions in the same order. */
#define PE__EBLK 16
typedef struct {
    float *dwte;
    const float *dout;
    const int32_t *ids32;
    const int64_t *ids64;
    size_t n, d;
    const pe__isa *isa;
} pe__ebwd_ctx;

static void pe__ebwd_cols(void *ctx, size_t lo, size_t hi)
{
    const pe__ebwd_ctx *c = (const pe__ebwd_ctx *)ctx;
    const size_t d = c->d, c0 = lo * PE__EBLK, c1 = hi * PE__EBLK < d ? hi * PE__EBLK : d;
    const size_t chunk = 128;   /* floats: 8 cache lines, as in pe__embed_rows */
    size_t t, j, k;
    float *row = c->dwte + (size_t)pe__id(c->ids32, c->ids64, 0) * d;
    if (c0 >= c1) return;       /* (a thread without a block) */
    for (t = 0; t < c->n; t++) {
        /* the next token's row, a few lines per chunk of this one, as pe__embed_rows */
        float *next = t + 1 < c->n ? c->dwte + (size_t)pe__id(c->ids32, c->ids64, t + 1) * d
                                   : NULL;
        const float *g = c->dout + t * d;
        for (j = c0; j < c1; j += chunk) {
            const size_t m = c1 - j < chunk ? c1 - j : chunk;
            if (next)
                for (k = j; k < j + m; k += 64 / sizeof(float)) PE__PREFETCH(next + k);
            c->isa->accz(row + j, row + j, g + j, m);
        }
        row = next;
    }
}

/* Exactly one of ids32 / ids64 is used; the public wrappers pass the other as NULL. */
static int pe__embed_backward(float *dwte, float *dwpe, const float *dout,
                              const int32_t *ids32, const int64_t *ids64, size_t batch,
                              size_t seq, size_t d_model, size_t vocab, size_t context_length)
{
    size_t b, n, bytes, wte_bytes, wpe_bytes, id_size;
    const void *ids = ids32 ? (const void *)ids32 : (const void *)ids64;
    if (!dout || !ids || (!dwte && !dwpe)) return PE_ERR_NULL;
    if (!batch || !seq || !d_model || !vocab || !context_length) return PE_ERR_ZERO_SIZE;
    id_size = ids32 ? sizeof *ids32 : sizeof *ids64;
    if (!pe__bytes(&bytes, batch, seq) || !pe__bytes(&bytes, batch * seq, d_model) ||
        !pe__bytes(&wte_bytes, vocab, d_model) ||
        !pe__bytes(&wpe_bytes, context_length, d_model) ||
        batch * seq > (size_t)-1 / id_size)
        return PE_ERR_OVERFLOW;
    if (seq > context_length) return PE_ERR_SEQ_TOO_LONG;
    n = batch * seq;
    if ((dwte && (pe__overlap(dwte, wte_bytes, dout, bytes) ||
                  pe__overlap(dwte, wte_bytes, ids, n * id_size) ||
                  (dwpe && pe__overlap(dwte, wte_bytes, dwpe, wpe_bytes)))) ||
        (dwpe && (pe__overlap(dwpe, wpe_bytes, dout, bytes) ||
                  pe__overlap(dwpe, wpe_bytes, ids, n * id_size))))
        return PE_ERR_ALIAS;
    for (b = 0; b < n; b++) {
        int64_t id = pe__id(ids32, ids64, b);
        if (id < 0 || (uint64_t)id >= (uint64_t)vocab) return PE_ERR_ID_RANGE;
    }

    if (dwte) {
        pe__ebwd_ctx c;
        c.dwte = dwte; c.dout = dout; c.ids32 = ids32; c.ids64 = ids64;
        c.n = n; c.d = d_model; c.isa = pe__current();
        pe__split(0, (d_model + PE__EBLK - 1) / PE__EBLK, (double)n * (double)d_model,
                  pe__ebwd_cols, &c);
    }
    /* dwpe: pos_emb(arange(seq)) broadcast over the batch: the batch-first table's */
    if (dwpe) pe__tgrad(dwpe, dout, batch, seq, 1, d_model);
    return PE_OK;
}

PEDEF int pe_embed_backward(float *dwte, float *dwpe, const float *dout, const int32_t *ids,
                            size_t batch, size_t seq, size_t d_model, size_t vocab,
                            size_t context_length)
{
    return pe__embed_backward(dwte, dwpe, dout, ids, NULL, batch, seq, d_model, vocab,
                              context_length);
}

PEDEF int pe_embed_i64_backward(float *dwte, float *dwpe, const float *dout,
                                const int64_t *ids, size_t batch, size_t seq, size_t d_model,
                                size_t vocab, size_t context_length)
{
    return pe__embed_backward(dwte, dwpe, dout, NULL, ids, batch, seq, d_model, vocab,
                              context_length);
}

/* ==== 8. ROTARY POSITION EMBEDDINGS (ROPE) ============================================ */

/* ---- rotating pairs (RoPE) ------------------------------------------------------------
   Each pair (a, b) of a head with the cos c and sin s of its frequency becomes
   (a*c - b*s, b*c + a*s): four float products, each rounded, then one subtraction and
   one addition, each rounded. That is what torch computes for HF's
   q * cos + rotate_half(q) * sin (separate mul and add kernels; rotate_half negates
   b exactly, and a + (-bs) is a - bs) and for Meta's form in real arithmetic. Fusing a
   product into the sum (an FMA) rounds once less and changes the bits, so the products
   are kept opaque: in the scalar loop through volatile floats (gcc contracts across
   statements with -ffp-contract=fast, its default outside strict ISO modes, and
   ignores #pragma STDC FP_CONTRACT), in the vector loops through an empty asm that the
   compiler cannot see into (gcc's intrinsics are plain vector expressions, which it
   contracts as well; AVX-512F has the FMA instructions).
   pe__rope_half: pairs (x1[i], x2[i]) (GPT-NeoX / HF rotate_half, x2 = x1 + rot/2);
   pe__rope_pairs: pairs (x[2i], x[2i+1]) (Meta Llama / GPT-J). n pairs; o may equal x
   (every step loads its pairs before it stores them). sg, 1 or -1, multiplies each sine
   first (exactly): -1 is the rotation by the opposite angle, the backward functions'
   (a*c - b*(-s) is a*c + b*s and b*c + a*(-s) is b*c - a*s, bit for bit). */

/* One pair, the specification: *o1 = a*c - b*s, *o2 = b*c + a*s. */
static void pe__rot1(float *o1, float *o2, float a, float b, float c, float s)
{
    volatile float ac = a * c, bs = b * s, bc = b * c, as = a * s;
    const float r1 = (float)(ac - bs), r2 = (float)(bc + as);
    *o1 = r1;
    *o2 = r2;
}

static void pe__rope_half_scalar(float *o1, float *o2, const float *x1, const float *x2,
                                 const float *c, const float *s, size_t n, float sg)
{
    size_t i;
    for (i = 0; i < n; i++) pe__rot1(o1 + i, o2 + i, x1[i], x2[i], c[i], s[i] * sg);
}

static void pe__rope_pairs_scalar(float *o, const float *x, const float *c, const float *s,
                                  size_t n, float sg)
{
    size_t i;
    for (i = 0; i < n; i++)
        pe__rot1(o + 2 * i, o + 2 * i + 1, x[2 * i], x[2 * i + 1], c[i], s[i] * sg);
}

/* The half-split loop over the primitives of one ISA (as PE__DEFINE_SPAN): PE__MUL,
   PE__SUB, PE__ADD, PE__SET1 (a vector of one float), PE__OPAQUE (the barrier above),
   PE__ZEROUPPER (AVX and AVX-512: vzeroupper before the scalar tail, see COMMON's
   barriers). */
#define PE__DEFINE_ROPE_HALF(NAME)                                                    \
    static PE__VTARGET void NAME(float *o1, float *o2, const float *x1, const float *x2, \
                                 const float *c, const float *s, size_t n, float sg) \
    {                                                                                 \
        const PE__VEC vsg = PE__SET1(sg);                                             \
        size_t i;                                                                     \
        for (i = 0; i + PE__W <= n; i += PE__W) {                                     \
            PE__VEC a = PE__LD(x1 + i), b = PE__LD(x2 + i);                           \
            PE__VEC vc = PE__LD(c + i), vs = PE__MUL(PE__LD(s + i), vsg);             \
            PE__VEC ac = PE__MUL(a, vc), bs = PE__MUL(b, vs);                         \
            PE__VEC bc = PE__MUL(b, vc), as = PE__MUL(a, vs);                         \
            PE__OPAQUE(ac); PE__OPAQUE(bs); PE__OPAQUE(bc); PE__OPAQUE(as);           \
            PE__ST(o1 + i, PE__SUB(ac, bs));                                          \
            PE__ST(o2 + i, PE__ADD(bc, as));                                          \
        }                                                                             \
        PE__ZEROUPPER();                                                              \
        pe__rope_half_scalar(o1 + i, o2 + i, x1 + i, x2 + i, c + i, s + i, n - i, sg); \
    }

#ifdef PE__HAS_SSE2
/* Interleaved: p = x * (c0 c0 c1 c1), q = swap(x) * (s0 s0 s1 s1) = (b0s0 a0s0 ..);
   the result is p - q in even lanes and p + q in odd ones: p + (q with the even lanes'
   sign flipped), the same bits as a subtraction. */
static PE__TARGET_SSE2 void pe__rope_pairs_sse2(float *o, const float *x, const float *c,
                                                const float *s, size_t n, float sg)
{
    const __m128 even = _mm_castsi128_ps(_mm_set_epi32(0, INT32_MIN, 0, INT32_MIN));
    const __m128 vsg = _mm_set1_ps(sg);
    size_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        __m128 x0 = _mm_loadu_ps(x + 2 * i), x1 = _mm_loadu_ps(x + 2 * i + 4);
        __m128 vc = _mm_loadu_ps(c + i), vs = _mm_mul_ps(_mm_loadu_ps(s + i), vsg);
        __m128 c0 = _mm_unpacklo_ps(vc, vc), c1 = _mm_unpackhi_ps(vc, vc);
        __m128 s0 = _mm_unpacklo_ps(vs, vs), s1 = _mm_unpackhi_ps(vs, vs);
        __m128 p0 = _mm_mul_ps(x0, c0), p1 = _mm_mul_ps(x1, c1);
        __m128 q0 = _mm_mul_ps(_mm_shuffle_ps(x0, x0, _MM_SHUFFLE(2, 3, 0, 1)), s0);
        __m128 q1 = _mm_mul_ps(_mm_shuffle_ps(x1, x1, _MM_SHUFFLE(2, 3, 0, 1)), s1);
        PE__OPAQUE_X86(p0); PE__OPAQUE_X86(p1); PE__OPAQUE_X86(q0); PE__OPAQUE_X86(q1);
        _mm_storeu_ps(o + 2 * i, _mm_add_ps(p0, _mm_xor_ps(q0, even)));
        _mm_storeu_ps(o + 2 * i + 4, _mm_add_ps(p1, _mm_xor_ps(q1, even)));
    }
    pe__rope_pairs_scalar(o + 2 * i, x + 2 * i, c + i, s + i, n - i, sg);
}
#endif

#ifdef PE__HAS_AVX
/* As the SSE2 loop, 8 lanes: addsub is p - q in even lanes, p + q in odd ones. */
static PE__TARGET_AVX void pe__rope_pairs_avx(float *o, const float *x, const float *c,
                                              const float *s, size_t n, float sg)
{
    const __m128 vsg = _mm_set1_ps(sg);
    size_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        __m256 vx = _mm256_loadu_ps(x + 2 * i);
        __m128 vc = _mm_loadu_ps(c + i), vs = _mm_mul_ps(_mm_loadu_ps(s + i), vsg);
        __m256 c2 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_unpacklo_ps(vc, vc)),
                                         _mm_unpackhi_ps(vc, vc), 1);
        __m256 s2 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_unpacklo_ps(vs, vs)),
                                         _mm_unpackhi_ps(vs, vs), 1);
        __m256 p = _mm256_mul_ps(vx, c2), q = _mm256_mul_ps(_mm256_permute_ps(vx, 0xB1), s2);
        PE__OPAQUE_X86(p); PE__OPAQUE_X86(q);
        _mm256_storeu_ps(o + 2 * i, _mm256_addsub_ps(p, q));
    }
    PE__ZEROUPPER_AVX();
    pe__rope_pairs_scalar(o + 2 * i, x + 2 * i, c + i, s + i, n - i, sg);
}
#endif

#ifdef PE__HAS_AVX512
/* 16 lanes; AVX-512 has no addsub: the sum, with the even lanes replaced by the
   difference (a masked subtraction). */
static PE__TARGET_AVX512 void pe__rope_pairs_avx512(float *o, const float *x, const float *c,
                                                    const float *s, size_t n, float sg)
{
    const __m512i dup = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const __m512 vsg = _mm512_set1_ps(sg);
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) {
        __m512 vx = _mm512_loadu_ps(x + 2 * i);
        __m512 c2 = _mm512_maskz_permutexvar_ps(0xFFFF, dup, _mm512_maskz_loadu_ps(0xFF, c + i));
        __m512 s2 = _mm512_mul_ps(_mm512_maskz_permutexvar_ps(0xFFFF, dup,
                                                              _mm512_maskz_loadu_ps(0xFF, s + i)),
                                  vsg);
        __m512 p = _mm512_mul_ps(vx, c2), q = _mm512_mul_ps(_mm512_maskz_permute_ps(0xFFFF, vx, 0xB1), s2);
        PE__OPAQUE_ZMM(p); PE__OPAQUE_ZMM(q);
        _mm512_storeu_ps(o + 2 * i, _mm512_mask_sub_ps(_mm512_add_ps(p, q), 0x5555, p, q));
    }
    PE__ZEROUPPER_AVX();
    pe__rope_pairs_scalar(o + 2 * i, x + 2 * i, c + i, s + i, n - i, sg);
}
#endif

#ifdef PE__HAS_NEON
/* vld2q/vst2q de-interleave and re-interleave the pairs: then as the half-split loop. */
static void pe__rope_pairs_neon(float *o, const float *x, const float *c, const float *s,
                                size_t n, float sg)
{
    const float32x4_t vsg = vdupq_n_f32(sg);
    size_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        float32x4x2_t v = vld2q_f32(x + 2 * i), r;
        float32x4_t vc = vld1q_f32(c + i), vs = vmulq_f32(vld1q_f32(s + i), vsg);
        float32x4_t ac = vmulq_f32(v.val[0], vc), bs = vmulq_f32(v.val[1], vs);
        float32x4_t bc = vmulq_f32(v.val[1], vc), as = vmulq_f32(v.val[0], vs);
        PE__OPAQUE_NEON(ac); PE__OPAQUE_NEON(bs); PE__OPAQUE_NEON(bc); PE__OPAQUE_NEON(as);
        r.val[0] = vsubq_f32(ac, bs);
        r.val[1] = vaddq_f32(bc, as);
        vst2q_f32(o + 2 * i, r);
    }
    pe__rope_pairs_scalar(o + 2 * i, x + 2 * i, c + i, s + i, n - i, sg);
}
#endif

/* ---- rotary position embeddings (RoPE) -------------------------------------------- */

/* Every position comes from one rule: start + (pos ? pos[i] : i). PE_OK, or
   PE_ERR_POSITION if one is negative or above PE_ROPE_MAX_POS (limit: the cache's
   length, when below that). */
static int pe__positions_ok(const int64_t *pos, int64_t start, size_t n, uint64_t limit)
{
    size_t i;
    if (start < 0 || (uint64_t)start > limit) return PE_ERR_POSITION;
    if (!pos) return n - 1 > limit - (uint64_t)start ? PE_ERR_POSITION : PE_OK;
    for (i = 0; i < n; i++)
        if (pos[i] < 0 || (uint64_t)pos[i] > limit - (uint64_t)start) return PE_ERR_POSITION;
    return PE_OK;
}

static int64_t pe__position(const int64_t *pos, int64_t start, size_t i)
{
    return start + (pos ? pos[i] : (int64_t)i);
}

/* A finite, positive double (theta) or float (attention factor); NaN fails both. */
static int pe__positive(double v) { return v > 0.0 && v <= DBL_MAX; }
/* a == b (NaN equal to nothing), spelled without == so that -Wfloat-equal builds stay quiet */
static int pe__same(double a, double b) { return a <= b && b <= a; }

PEDEF int pe_rope_inv_freq(float *inv_freq, size_t rot, double theta)
{
    size_t i;
    float base, r;
    size_t bytes;
    if (!inv_freq) return PE_ERR_NULL;
    if (!rot) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, rot / 2 ? rot / 2 : 1, 1)) return PE_ERR_OVERFLOW;
    if (rot % 2) return PE_ERR_ROT;
    if (!pe__positive(theta) || !pe__positive((double)(float)theta)) return PE_ERR_PARAM;
    /* torch: 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=torch.int64).float() / rot)):
       the exponent is a float32 quotient; theta ** e is float32 pow with theta rounded to
       float (std::pow(float, float): powf under torch's scalar dispatch); 1.0 / t is
       t.reciprocal() * 1.0, i.e. one float32 division. */
    base = (float)theta;
    r = (float)rot;
    for (i = 0; i < rot / 2; i++) {
        const float e = (float)(2 * i) / r, p = pe__powf(base, e);
        inv_freq[i] = 1.0f / p;
    }
    return PE_OK;
}

/* The checks of a cache: cos and sin (n, rot/2), the input `in` (inv_freq), param
   (attention factor or theta), positions. */
static int pe__cache_check(const float *cos_out, const float *sin_out, const void *in,
                           size_t in_bytes, size_t rot, double param, size_t n,
                           const int64_t *pos, int64_t start)
{
    size_t bytes;
    if (!cos_out || !sin_out || !in) return PE_ERR_NULL;
    if (!rot || !n) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, n, rot / 2 ? rot / 2 : 1) || n > (size_t)-1 / sizeof *pos)
        return PE_ERR_OVERFLOW;
    if (rot % 2) return PE_ERR_ROT;
    if (!pe__positive(param)) return PE_ERR_PARAM;
    if (pe__overlap(cos_out, bytes, sin_out, bytes) ||
        pe__overlap(cos_out, bytes, in, in_bytes) || pe__overlap(sin_out, bytes, in, in_bytes) ||
        (pos && (pe__overlap(cos_out, bytes, pos, n * sizeof *pos) ||
                 pe__overlap(sin_out, bytes, pos, n * sizeof *pos))))
        return PE_ERR_ALIAS;
    return pe__positions_ok(pos, start, n, PE_ROPE_MAX_POS);
}

/* One row of the torch-mode cache: HF's freqs = position.float() * inv_freq (a float32
   product; HF's matmul of (half, 1) by (1, seq) has one term), cos/sin of that float
   angle (correctly rounded: pe__sincosf on every path), times the attention factor
   (exact when it is 1). */
static void pe__cache_row(float *c, float *s, const float *inv_freq, size_t lo, size_t hi,
                          int64_t position, float factor)
{
    const pe__sincos_fn sincos = pe__current()->sincos;
    const float p = (float)position;
    float a[PE__SINCOS_CHUNK];
    size_t i = lo, j;
    while (i < hi) {
        size_t m = hi - i;
        if (m > PE__SINCOS_CHUNK) m = PE__SINCOS_CHUNK;
        for (j = 0; j < m; j++) a[j] = p * inv_freq[i + j];
        sincos(s + (i - lo), c + (i - lo), a, m);
        for (j = i - lo; j < i - lo + m; j++) {
            c[j] = c[j] * factor;
            s[j] = s[j] * factor;
        }
        i += m;
    }
}

typedef struct {
    float *cos_out, *sin_out;
    const float *inv_freq;
    double theta;
    const int64_t *pos;
    int64_t start;
    size_t half;
    float factor;
} pe__cache_ctx;

static void pe__cache_rows(void *ctx, size_t lo, size_t hi)
{
    const pe__cache_ctx *c = (const pe__cache_ctx *)ctx;
    size_t r;
    for (r = lo; r < hi; r++)
        pe__cache_row(c->cos_out + r * c->half, c->sin_out + r * c->half, c->inv_freq, 0,
                      c->half, pe__position(c->pos, c->start, r), c->factor);
}

PEDEF int pe_rope_cache(float *cos_out, float *sin_out, const float *inv_freq, size_t rot,
                        float attention_factor, const int64_t *pos, int64_t start, size_t n)
{
    pe__cache_ctx c;
    int st = pe__cache_check(cos_out, sin_out, inv_freq, rot / 2 * sizeof(float), rot,
                             (double)attention_factor, n, pos, start);
    if (st) return st;
    c.cos_out = cos_out; c.sin_out = sin_out; c.inv_freq = inv_freq; c.theta = 0.0;
    c.pos = pos; c.start = start; c.half = rot / 2; c.factor = attention_factor;
    pe__split(0, n, (double)n * (double)rot, pe__cache_rows, &c);
    return PE_OK;
}

/* The formula in double: theta^(-2i/rot) as torch computes it in float64
   (1.0 / theta ** (arange(0, rot, 2).double() / rot)), times the position, cos and sin
   rounded once to float. */
static void pe__cache_rows_exact(void *ctx, size_t lo, size_t hi)
{
    const pe__cache_ctx *c = (const pe__cache_ctx *)ctx;
    const double rot = (double)(2 * c->half);
    double inv[PE__SINCOS_CHUNK];
    size_t r, i, i0, m;
    /* the frequencies a chunk at a time (each pow once), then the rows */
    for (i0 = 0; i0 < c->half; i0 += m) {
        m = c->half - i0;
        if (m > PE__SINCOS_CHUNK) m = PE__SINCOS_CHUNK;
        for (i = 0; i < m; i++) inv[i] = 1.0 / pe__pow(c->theta, (double)(2 * (i0 + i)) / rot);
        for (r = lo; r < hi; r++) {
            const double p = (double)pe__position(c->pos, c->start, r);
            for (i = 0; i < m; i++)
                pe__sincos_d2f(p * inv[i], c->sin_out + r * c->half + i0 + i,
                               c->cos_out + r * c->half + i0 + i);
        }
    }
}

PEDEF int pe_rope_cache_exact(float *cos_out, float *sin_out, size_t rot, double theta,
                              const int64_t *pos, int64_t start, size_t n)
{
    pe__cache_ctx c;
    int st = pe__cache_check(cos_out, sin_out, cos_out, 0, rot, theta, n, pos, start);
    if (st) return st;
    c.cos_out = cos_out; c.sin_out = sin_out; c.inv_freq = NULL; c.theta = theta;
    c.pos = pos; c.start = start; c.half = rot / 2; c.factor = 1.0f;
    pe__split(0, n, (double)n * (double)rot, pe__cache_rows_exact, &c);
    return PE_OK;
}

/* Applying: rows of head_dim floats in memory order; row r is (b, s, h) of BSHD or
   (b, h, s) of BHSD, and its token (b, s) takes position start + (pos ? pos[b,s] : s). */
typedef struct {
    float *out;
    const float *x, *cos_c, *sin_c, *inv_freq;
    const int64_t *pos;
    int64_t start;
    size_t seq, heads, hd, half;
    int bhsd, half_split, inverse;
    float factor;
    const pe__isa *isa;
} pe__rope_ctx;

static size_t pe__rope_token(const pe__rope_ctx *c, size_t r)
{
    return c->bhsd ? r / (c->heads * c->seq) * c->seq + r % c->seq : r / c->heads;
}

/* The position of token t = (b, s): start + pos[b, s], or start + s. */
static int64_t pe__rope_pos(const pe__rope_ctx *c, size_t t)
{
    return c->start + (c->pos ? c->pos[t] : (int64_t)(t % c->seq));
}

/* Rotates the pairs [lo, hi) of row r with cos cc / sin sc (hi - lo of each). Inline
   (with pe__rope_pass): called for each head of each token, on a row of 64 pairs, and
   gcc -O2 kept the call, which the direct apply's default build paid for (README,
   Performance). */
static PE__INLINE void pe__rope_span(const pe__rope_ctx *c, size_t r, size_t lo, size_t hi,
                                     const float *cc, const float *sc)
{
    const float *x = c->x + r * c->hd;
    float *o = c->out + r * c->hd;
    const float sg = c->inverse ? -1.0f : 1.0f;
    if (c->half_split)
        c->isa->rope_half(o + lo, o + c->half + lo, x + lo, x + c->half + lo, cc, sc, hi - lo,
                          sg);
    else
        c->isa->rope_pairs(o + 2 * lo, x + 2 * lo, cc, sc, hi - lo, sg);
}

/* The dims past rot pass through (nothing to do in place). */
static PE__INLINE void pe__rope_pass(const pe__rope_ctx *c, size_t r)
{
    const size_t rot = 2 * c->half;
    if (c->out != c->x && c->hd > rot)
        memcpy(c->out + r * c->hd + rot, c->x + r * c->hd + rot, (c->hd - rot) * sizeof(float));
}

static void pe__rope_rows_cache(void *ctx, size_t lo, size_t hi)
{
    const pe__rope_ctx *c = (const pe__rope_ctx *)ctx;
    size_t r;
    for (r = lo; r < hi; r++) {
        const size_t p = (size_t)pe__rope_pos(c, pe__rope_token(c, r));
        pe__rope_span(c, r, 0, c->half, c->cos_c + p * c->half, c->sin_c + p * c->half);
        pe__rope_pass(c, r);
    }
}

/* Direct: the cache row of each token computed here, PE__ROPE_CHUNK frequencies at a
   time on the stack (no allocation), by pe__cache_row: the same bits as the cache. In
   BSHD the heads of a token are consecutive rows and share each chunk. */
#define PE__ROPE_CHUNK 64
static void pe__rope_rows_direct(void *ctx, size_t lo, size_t hi)
{
    const pe__rope_ctx *c = (const pe__rope_ctx *)ctx;
    float cc[PE__ROPE_CHUNK], sc[PE__ROPE_CHUNK];
    size_t r = lo, k, i;
    while (r < hi) {
        const size_t tok = pe__rope_token(c, r);
        const int64_t p = pe__rope_pos(c, tok);
        /* the rows of this token: its heads, consecutive in BSHD (and in BHSD with seq
           1); in BHSD each row is a token of its own (found without a division per row) */
        size_t r2 = c->bhsd && c->seq > 1 ? r + 1 : (tok + 1) * c->heads;
        if (r2 > hi) r2 = hi;
        for (i = 0; i < c->half; i += PE__ROPE_CHUNK) {
            const size_t e = c->half - i < PE__ROPE_CHUNK ? c->half : i + PE__ROPE_CHUNK;
            pe__cache_row(cc, sc, c->inv_freq, i, e, p, c->factor);
            for (k = r; k < r2; k++) pe__rope_span(c, k, i, e, cc, sc);
        }
        for (k = r; k < r2; k++) pe__rope_pass(c, k);
        r = r2;
    }
}

/* The checks and the call shared by the applies and their backward functions: direct
   (a = inv_freq) or from a cache (a = cos, b = sin, cache_len rows); inverse: the
   rotation by -angle (the backward functions: out = dx, x = dout). */
static int pe__rope(float *out, const float *x, size_t batch, size_t seq, size_t heads,
                    size_t head_dim, size_t rot, int layout, int pairing, int direct,
                    int inverse, const float *a, const float *b, size_t cache_len,
                    float factor, const int64_t *pos, int64_t start)
{
    size_t bytes, tab_bytes, tokens;
    pe__rope_ctx c;
    int st;
    if (!out || !x || !a || !b) return PE_ERR_NULL;
    if (!batch || !seq || !heads || !head_dim || !rot || !cache_len) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, batch, seq) || !pe__bytes(&bytes, batch * seq, heads) ||
        !pe__bytes(&bytes, batch * seq * heads, head_dim) ||
        !pe__bytes(&tab_bytes, cache_len, rot / 2 ? rot / 2 : 1) ||
        batch * seq > (size_t)-1 / sizeof *pos)
        return PE_ERR_OVERFLOW;
    if (rot % 2 || rot > head_dim) return PE_ERR_ROT;
    if ((layout != PE_ROPE_BSHD && layout != PE_ROPE_BHSD) ||
        (pairing != PE_ROPE_INTERLEAVED && pairing != PE_ROPE_HALF))
        return PE_ERR_ENUM;
    if (!pe__positive((double)factor)) return PE_ERR_PARAM;
    tokens = batch * seq;
    if (pe__overlap(out, bytes, a, tab_bytes) || pe__overlap(out, bytes, b, tab_bytes) ||
        (pos && pe__overlap(out, bytes, pos, tokens * sizeof *pos)) ||
        (out != x && pe__overlap(out, bytes, x, bytes)))
        return PE_ERR_ALIAS;
    /* every token's position is checked before anything is written */
    st = pe__positions_ok(pos, start, pos ? tokens : seq,
                          direct ? (uint64_t)PE_ROPE_MAX_POS : (uint64_t)cache_len - 1);
    if (st) return st;

    c.out = out; c.x = x; c.pos = pos; c.start = start;
    c.seq = seq; c.heads = heads; c.hd = head_dim; c.half = rot / 2;
    c.bhsd = layout == PE_ROPE_BHSD; c.half_split = pairing == PE_ROPE_HALF;
    c.inverse = inverse; c.factor = factor; c.isa = pe__current();
    c.cos_c = direct ? NULL : a;
    c.sin_c = direct ? NULL : b;
    c.inv_freq = direct ? a : NULL;
    pe__split(0, tokens * heads, (double)bytes / (double)sizeof(float),
              direct ? pe__rope_rows_direct : pe__rope_rows_cache, &c);
    return PE_OK;
}

PEDEF int pe_rope_apply(float *out, const float *x, size_t batch, size_t seq, size_t heads,
                        size_t head_dim, size_t rot, int layout, int pairing,
                        const float *cos_c, const float *sin_c, size_t cache_len,
                        const int64_t *pos, int64_t start)
{
    return pe__rope(out, x, batch, seq, heads, head_dim, rot, layout, pairing, 0, 0, cos_c,
                    sin_c, cache_len, 1.0f, pos, start);
}

PEDEF int pe_rope_apply_direct(float *out, const float *x, size_t batch, size_t seq,
                               size_t heads, size_t head_dim, size_t rot, int layout,
                               int pairing, const float *inv_freq, float attention_factor,
                               const int64_t *pos, int64_t start)
{
    /* inv_freq is a table of one row of rot/2 floats */
    return pe__rope(out, x, batch, seq, heads, head_dim, rot, layout, pairing, 1, 0, inv_freq,
                    inv_freq, 1, attention_factor, pos, start);
}

/* The gradient of a rotation is the rotation by the opposite angle: the forward's
   products and sums with the sine negated (the kernels' sg, see pe_rope_apply_backward). */
PEDEF int pe_rope_apply_backward(float *dx, const float *dout, size_t batch, size_t seq,
                                 size_t heads, size_t head_dim, size_t rot, int layout,
                                 int pairing, const float *cos_c, const float *sin_c,
                                 size_t cache_len, const int64_t *pos, int64_t start)
{
    return pe__rope(dx, dout, batch, seq, heads, head_dim, rot, layout, pairing, 0, 1, cos_c,
                    sin_c, cache_len, 1.0f, pos, start);
}

PEDEF int pe_rope_apply_direct_backward(float *dx, const float *dout, size_t batch,
                                        size_t seq, size_t heads, size_t head_dim, size_t rot,
                                        int layout, int pairing, const float *inv_freq,
                                        float attention_factor, const int64_t *pos,
                                        int64_t start)
{
    return pe__rope(dx, dout, batch, seq, heads, head_dim, rot, layout, pairing, 1, 1, inv_freq,
                    inv_freq, 1, attention_factor, pos, start);
}

/* ==== 9. ROPE SCALING ================================================================= */
/* HF transformers' rope types. */

/* A value rounded on its own: torch runs each product, quotient and sum as a separate
   kernel, so a product that feeds a sum must not be fused with it (gcc contracts across
   statements with -ffp-contract=fast; the volatile store stops it). */
static float pe__f32(float v)
{
    volatile float r = v;
    return r;
}

static double pe__f64(double v)
{
    volatile double r = v;
    return r;
}

/* A finite double > 0 whose float is finite and > 0 too (Python's float becomes a
   float32 scalar in a float32 tensor op). */
static int pe__positive_f(double v) { return pe__positive(v) && v <= (double)FLT_MAX && (float)v > 0.0f; }

#define PE__PI 3.141592653589793    /* Python's math.pi, the double nearest pi */

/* YaRN's get_mscale(scale, mscale): 1 if scale <= 1, else 0.1 * mscale * ln(scale) + 1
   (Python doubles, in that order). */
static double pe__yarn_mscale(double scale, double mscale)
{
    if (scale <= 1.0) return 1.0;
    return pe__f64(pe__f64(0.1 * mscale) * pe__log(scale)) + 1.0;
}

/* YaRN's find_correction_dim: (dim * ln(max_pos / (rotations * 2 * pi))) / (2 * ln(base)). */
static double pe__yarn_dim(double rotations, size_t rot, double theta, size_t orig)
{
    const double turns = pe__f64(rotations * 2.0) * PE__PI;
    return pe__f64((double)rot * pe__log((double)orig / turns)) / pe__f64(2.0 * pe__log(theta));
}

/* The float32 exponent's power of HF's inv_freq: base ** (arange(0, rot, 2).float() / rot). */
static float pe__pos_freq(float base, size_t i, size_t rot)
{
    const float e = (float)(2 * i) / (float)rot;
    return pe__powf(base, e);
}

PEDEF int pe_rope_scaling_init(pe_rope_scaling *s, int type)
{
    if (!s) return PE_ERR_NULL;
    if (type < PE_ROPE_SCALING_DEFAULT || type > PE_ROPE_SCALING_LONGROPE) return PE_ERR_ENUM;
    s->type = type;
    s->factor = 0.0;
    s->max_position_embeddings = 0;
    s->original_max_position_embeddings = 0;
    s->attention_factor = 0.0;
    s->beta_fast = 32.0;
    s->beta_slow = 1.0;
    s->mscale = 0.0;
    s->mscale_all_dim = 0.0;
    s->truncate = 1;
    s->low_freq_factor = 0.0;
    s->high_freq_factor = 0.0;
    s->short_factor = NULL;
    s->long_factor = NULL;
    s->dynamic_as_module = 0;
    return PE_OK;
}

/* Everything a type computes in Python doubles, checked: *af the attention factor,
   *base the (dynamic NTK) base, lo/hi YaRN's ramp ends. PE_OK or PE_ERR_PARAM. */
static int pe__scaling_params(const pe_rope_scaling *sc, size_t rot, double theta,
                              size_t seq_len, double *af, double *base, double *lo, double *hi)
{
    const int t = sc->type;
    const size_t orig = sc->original_max_position_embeddings, half = rot / 2;
    size_t i;
    *af = 1.0;
    *base = theta;
    *lo = *hi = 0.0;
    if (!pe__positive_f(theta)) return PE_ERR_PARAM;
    if (t != PE_ROPE_SCALING_DEFAULT && t != PE_ROPE_SCALING_LONGROPE &&
        !pe__positive_f(sc->factor))
        return PE_ERR_PARAM;
    if (t == PE_ROPE_SCALING_DYNAMIC) {
        /* base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2)) with
           seq_len = max(seq_len, max_pos): at or below max_pos the bracket is 1 (or
           within an ulp of it, as in Python). */
        const size_t mp = sc->max_position_embeddings;
        const double seq = (double)(seq_len > mp ? seq_len : mp);
        if (!sc->dynamic_as_module) {
            const double q = pe__f64(sc->factor * seq) / (double)mp - (sc->factor - 1.0);
            *base = theta * pe__pow(q, (double)rot / (double)(rot - 2));
        } else if (seq_len > mp) {
            /* HF's dynamic_rope_update passes seq_len = torch.max(position_ids) + 1, a 0-dim
               int64 tensor: the bracket is float32 tensor arithmetic (f32(factor) *
               f32(seq_len), / f32(max_pos), - f32(factor - 1)); its power of a Python float
               is std::pow in double of that float (torch's kernel for a 0-dim tensor),
               rounded; times f32(theta) in float32 */
            const float q = pe__f32(pe__f32((float)sc->factor * (float)seq_len) / (float)mp) -
                            (float)(sc->factor - 1.0);
            const double pw = pe__pow((double)q, (double)rot / (double)(rot - 2));
            if (!(pw <= (double)FLT_MAX)) return PE_ERR_PARAM;
            *base = (double)((float)theta * (float)pw);
        }   /* (at or below max_pos the module keeps its original, default, frequencies) */
        if (!pe__positive_f(*base)) return PE_ERR_PARAM;
    } else if (t == PE_ROPE_SCALING_YARN) {
        double l, h;
        if (!pe__positive(sc->beta_fast) || !pe__positive(sc->beta_slow) || pe__same(theta, 1.0) ||
            !(sc->mscale >= 0.0 && sc->mscale <= DBL_MAX) ||
            !(sc->mscale_all_dim >= 0.0 && sc->mscale_all_dim <= DBL_MAX) ||
            !(sc->attention_factor >= 0.0 && sc->attention_factor <= DBL_MAX))
            return PE_ERR_PARAM;
        if (sc->attention_factor > 0.0)
            *af = sc->attention_factor;
        else if (!pe__same(sc->mscale, 0.0) && !pe__same(sc->mscale_all_dim, 0.0))
            *af = pe__yarn_mscale(sc->factor, sc->mscale) /
                  pe__yarn_mscale(sc->factor, sc->mscale_all_dim);
        else
            *af = pe__yarn_mscale(sc->factor, 1.0);
        /* find_correction_range: the dims where beta_fast and beta_slow rotations fit in
           the original context, floored / ceiled when truncate, clamped to [0, dim - 1] */
        l = pe__yarn_dim(sc->beta_fast, rot, theta, orig);
        h = pe__yarn_dim(sc->beta_slow, rot, theta, orig);
        /* (a ramp end far outside the dims only comes from absurd betas; bounding it keeps
           its float32 conversion exact and defined) */
        if (!(fabs(l) <= 16777216.0 && fabs(h) <= 16777216.0)) return PE_ERR_PARAM;
        if (sc->truncate) {
            l = pe__floor(l);
            h = pe__ceil(h);
        }
        *lo = l < 0.0 ? 0.0 : l;
        *hi = h > (double)(rot - 1) ? (double)(rot - 1) : h;
        if (pe__same(*lo, *hi)) *hi += 0.001;   /* HF's linear_ramp_factor: no division by zero */
    } else if (t == PE_ROPE_SCALING_LLAMA3) {
        const double lf = sc->low_freq_factor, hf = sc->high_freq_factor;
        if (!pe__positive_f(lf) || !pe__positive_f(hf) || !(hf > lf) ||
            !pe__positive_f((double)orig / lf) || !pe__positive_f((double)orig / hf) ||
            !pe__positive_f(hf - lf))
            return PE_ERR_PARAM;
    } else if (t == PE_ROPE_SCALING_LONGROPE) {
        double s = sc->factor;
        if (!(sc->attention_factor >= 0.0 && sc->attention_factor <= DBL_MAX))
            return PE_ERR_PARAM;
        for (i = 0; i < half; i++)
            if (!pe__positive_f((double)sc->short_factor[i]) ||
                !pe__positive_f((double)sc->long_factor[i]))
                return PE_ERR_PARAM;
        if (sc->attention_factor > 0.0) {
            *af = sc->attention_factor;
        } else {
            /* s = max_pos / original_max_pos (Phi-3), or rope_scaling's factor when the
               config has no original_max_position_embeddings (max_position_embeddings 0) */
            if (sc->max_position_embeddings)
                s = (double)sc->max_position_embeddings / (double)orig;
            else if (!pe__positive(s))
                return PE_ERR_PARAM;
            if (s > 1.0 && orig == 1) return PE_ERR_PARAM;     /* ln(1) = 0: Python raises */
            *af = s <= 1.0 ? 1.0 : pe__sqrt(1.0 + pe__log(s) / pe__log((double)orig));
        }
    }
    return pe__positive_f(*af) ? PE_OK : PE_ERR_PARAM;
}

PEDEF int pe_rope_inv_freq_scaled(float *inv_freq, float *attention_factor, size_t rot,
                                  double theta, const pe_rope_scaling *scaling,
                                  size_t seq_len)
{
    const pe_rope_scaling *sc = scaling;
    size_t i, half, bytes;
    double af, based, lo, hi;
    float base;
    int t, st;
    if (!inv_freq || !attention_factor || !sc) return PE_ERR_NULL;
    t = sc->type;
    if (t == PE_ROPE_SCALING_LONGROPE && (!sc->short_factor || !sc->long_factor))
        return PE_ERR_NULL;
    if (!rot || ((t == PE_ROPE_SCALING_DYNAMIC || t == PE_ROPE_SCALING_LONGROPE) && !seq_len) ||
        (t == PE_ROPE_SCALING_DYNAMIC && !sc->max_position_embeddings) ||
        ((t == PE_ROPE_SCALING_YARN || t == PE_ROPE_SCALING_LLAMA3 ||
          t == PE_ROPE_SCALING_LONGROPE) && !sc->original_max_position_embeddings))
        return PE_ERR_ZERO_SIZE;
    half = rot / 2;
    if (!pe__bytes(&bytes, half ? half : 1, 1)) return PE_ERR_OVERFLOW;
    /* dynamic NTK's exponent dim / (dim - 2) divides by zero at rot 2 (Python raises) */
    if (rot % 2 || (t == PE_ROPE_SCALING_DYNAMIC && rot == 2)) return PE_ERR_ROT;
    if (t < PE_ROPE_SCALING_DEFAULT || t > PE_ROPE_SCALING_LONGROPE ||
        (t == PE_ROPE_SCALING_YARN && sc->truncate != 0 && sc->truncate != 1))
        return PE_ERR_ENUM;
    st = pe__scaling_params(sc, rot, theta, seq_len, &af, &based, &lo, &hi);
    if (st) return st;
    if (pe__overlap(inv_freq, bytes, sc, sizeof *sc) ||
        pe__overlap(attention_factor, sizeof *attention_factor, sc, sizeof *sc) ||
        pe__overlap(inv_freq, bytes, attention_factor, sizeof *attention_factor) ||
        (t == PE_ROPE_SCALING_LONGROPE &&
         (pe__overlap(inv_freq, bytes, sc->short_factor, bytes) ||
          pe__overlap(inv_freq, bytes, sc->long_factor, bytes) ||
          pe__overlap(attention_factor, sizeof *attention_factor, sc->short_factor, bytes) ||
          pe__overlap(attention_factor, sizeof *attention_factor, sc->long_factor, bytes))))
        return PE_ERR_ALIAS;

    base = (float)based;
    for (i = 0; i < half; i++) {
        const float p = pe__pos_freq(base, i, rot), v = 1.0f / p;   /* HF's default */
        switch (t) {
        case PE_ROPE_SCALING_LINEAR:
            inv_freq[i] = v / (float)sc->factor;    /* inv_freq /= factor: a true division */
            break;
        case PE_ROPE_SCALING_YARN: {
            /* inv_freq_extrapolation = 1.0 / pos_freqs; inv_freq_interpolation =
               1.0 / (factor * pos_freqs); ramp = clamp((arange(dim // 2) - low) / (high -
               low), 0, 1); e = 1 - ramp; inv = interp * (1 - e) + extrap * e */
            const float interp = 1.0f / pe__f32((float)sc->factor * p);
            float ramp = pe__f32((float)i - (float)lo) / (float)(hi - lo), e;
            ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
            e = 1.0f - ramp;
            inv_freq[i] = pe__f32(interp * pe__f32(1.0f - e)) + pe__f32(v * e);
            break;
        }
        case PE_ROPE_SCALING_LLAMA3: {
            /* wavelen = 2 * pi / inv_freq (a Python scalar over a tensor: reciprocal
               times the scalar, as torch computes it); long wavelengths divided by
               factor, short ones kept, the band between blended by smooth_factor */
            const double orig = (double)sc->original_max_position_embeddings;
            const float fac = (float)sc->factor, low_wl = (float)(orig / sc->low_freq_factor);
            const float high_wl = (float)(orig / sc->high_freq_factor);
            const float wl = pe__f32(1.0f / v) * (float)(2.0 * PE__PI);
            const float l = wl > low_wl ? v / fac : v;
            /* every float32 step rounded where torch rounds it (each pe__f32), also
               where float expressions are evaluated in double (FLT_EVAL_METHOD 1) */
            const float s = pe__f32(pe__f32(pe__f32(1.0f / wl) * (float)orig) -
                                    (float)sc->low_freq_factor) /
                            (float)(sc->high_freq_factor - sc->low_freq_factor);
            const float sm = pe__f32(pe__f32(pe__f32(1.0f - s) * l) / fac) + pe__f32(s * l);
            inv_freq[i] = !(wl < high_wl) && !(wl > low_wl) ? sm : l;
            break;
        }
        case PE_ROPE_SCALING_LONGROPE: {
            /* the long factors once the sequence passes the original context */
            const float *ext = seq_len > sc->original_max_position_embeddings
                               ? sc->long_factor : sc->short_factor;
            inv_freq[i] = 1.0f / pe__f32(ext[i] * p);
            break;
        }
        default:    /* default; dynamic (its base changed above) */
            inv_freq[i] = v;
            break;
        }
    }
    *attention_factor = (float)af;
    return PE_OK;
}

/* ==== 10. ALIBI ======================================================================= */

/* ---- ALiBi rows ---------------------------------------------------------------------
   Keys [j0, j1) of a row of pe_alibi_bias for the query at position qp: slope * -|j - qp|
   (torch's integer distance, converted to float and negated: +0 at distance 0), and
   -inf where causal and j > qp. The scalar loop is the specification. The vector loops
   take the keys while j and qp are below 2^24, where they are exact floats: the negated
   distance min(j, qp) - max(j, qp) is then exact (+0 at j = qp, a subtraction of equal
   values), the float the scalar loop negates, and the same float product follows (no
   sum: nothing to fuse). The keys past 2^24 (and every key of a query past it) take the
   scalar loop. */
#define PE__ALIBI_EXACT ((size_t)1 << 24)

static void pe__alibi_scalar(float *row, size_t j0, size_t j1, size_t qp, float slope,
                             int causal)
{
    size_t j;
    for (j = j0; j < j1; j++) {
        const size_t dist = j > qp ? j - qp : qp - j;
        /* (torch negates the integer distance: 0 stays +0) */
        row[j] = causal && j > qp ? -INFINITY : slope * (dist ? -(float)dist : 0.0f);
    }
}

/* The vector loop over the primitives of one ISA (as PE__DEFINE_ROPE_HALF), and PE__MIN,
   PE__MAX, PE__ABOVE(v, a, b) (v, with -inf in the lanes where a > b). The lanes' keys
   start at j + 0, 1, .. (pe__iota) and step by PE__W, exactly; not causal, the bound is
   +inf, which no key exceeds. */
static const float pe__iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#define PE__DEFINE_ALIBI(NAME)                                                        \
    static PE__VTARGET void NAME(float *row, size_t j0, size_t j1, size_t qp, float slope, \
                                 int causal)                                          \
    {                                                                                 \
        size_t j = j0;                                                                \
        if (qp < PE__ALIBI_EXACT && j0 < PE__ALIBI_EXACT) {                           \
            const size_t jv = j1 < PE__ALIBI_EXACT ? j1 : PE__ALIBI_EXACT;            \
            const PE__VEC vs = PE__SET1(slope), vq = PE__SET1((float)qp);             \
            const PE__VEC lim = causal ? vq : PE__SET1(INFINITY);                     \
            const PE__VEC step = PE__SET1((float)PE__W);                              \
            PE__VEC vj = PE__ADD(PE__SET1((float)j0), PE__LD(pe__iota));              \
            for (; j + PE__W <= jv; j += PE__W) {                                     \
                const PE__VEC nd = PE__SUB(PE__MIN(vj, vq), PE__MAX(vj, vq));         \
                PE__ST(row + j, PE__ABOVE(PE__MUL(vs, nd), vj, lim));                 \
                vj = PE__ADD(vj, step);                                               \
            }                                                                         \
        }                                                                             \
        PE__ZEROUPPER();                                                              \
        pe__alibi_scalar(row, j, j1, qp, slope, causal);                              \
    }

/* ---- ALiBi ------------------------------------------------------------------------- */

/* The paper's get_slopes in Python doubles (start = 2 ** (-2 ** -(log2(n) - 3)),
   slope i = start * start ** i; other counts: the closest power of two's slopes, then
   every other slope of twice that power: get_slopes(2p)[0::2][i - p], whose 2p is a
   power of two), each rounded to float as torch.tensor(list) does. */
static double pe__alibi_paper(size_t n, size_t i)
{
    size_t p = 1;
    double start;
    while (p <= n / 2) p *= 2;
    if (i >= p) {
        i = 2 * (i - p);
        p *= 2;
    }
    start = pe__pow(2.0, -pe__pow(2.0, -(pe__log2((double)p) - 3.0)));
    return start * pe__pow(start, (double)i);
}

PEDEF int pe_alibi_slopes(float *slopes, size_t heads, int mode)
{
    size_t i, p = 1, bytes;
    if (!slopes) return PE_ERR_NULL;
    if (!heads) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, heads, 1)) return PE_ERR_OVERFLOW;
    if (mode != PE_ALIBI_PAPER && mode != PE_ALIBI_BLOOM) return PE_ERR_ENUM;
    while (p <= heads / 2) p *= 2;
    for (i = 0; i < heads; i++) {
        if (mode == PE_ALIBI_PAPER) {
            slopes[i] = (float)pe__alibi_paper(heads, i);
        } else {
            /* BLOOM's build_alibi_tensor: a float32 base 2 ** -(2 ** -(log2(p) - 3)) to the
               int32 powers 1..p (float32 pow: powf under torch's scalar dispatch), then for
               the rest the base of 2p to the odd powers 1, 3, 5, ... */
            const size_t q = i < p ? p : 2 * p;
            const float base = (float)pe__pow(2.0, -pe__pow(2.0, -(pe__log2((double)q) - 3.0)));
            const float k = (float)(i < p ? i + 1 : 2 * (i - p) + 1);
            slopes[i] = pe__powf(base, k);
        }
    }
    return PE_OK;
}

PEDEF int pe_alibi_bias(float *bias, const float *slopes, size_t heads, size_t q_len,
                        size_t k_len, size_t offset, int causal)
{
    size_t bytes, h, i;
    const pe__isa *isa;
    if (!bias || !slopes) return PE_ERR_NULL;
    if (!heads || !q_len || !k_len) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, heads, q_len) || !pe__bytes(&bytes, heads * q_len, k_len) ||
        offset > (size_t)-1 - q_len)
        return PE_ERR_OVERFLOW;
    if (causal != 0 && causal != 1) return PE_ERR_ENUM;
    if (pe__overlap(bias, bytes, slopes, heads * sizeof *slopes)) return PE_ERR_ALIAS;
    /* torch: d = arange(k_len)[None, :] - (arange(q_len)[:, None] + offset) (int64);
       bias = slopes[:, None, None] * -d.abs() (the int promoted to float32, one float32
       product); causal: bias.masked_fill(d > 0, -inf). A row per query: pe__alibi_scalar. */
    isa = pe__current();
    for (h = 0; h < heads; h++)
        for (i = 0; i < q_len; i++)
            isa->alibi(bias + (h * q_len + i) * k_len, 0, k_len, i + offset, slopes[h], causal);
    return PE_OK;
}

/* ==== 11. TIMESTEP EMBEDDING ========================================================== */
/* The timestep embedding of diffusion models. */

/* Row i of the embedding, with the frequencies e[k] (half of them) at freq. The sines go
   to the first half (flip: the second), the cosines to the other: the halves chosen once
   per row, not per value (a select per value made the loop ~15% slower at -O2, which does
   not unswitch loops). */
static void pe__timestep_angles(float *a, float t, const float *freq, size_t m, float scale)
{
    size_t j;
    for (j = 0; j < m; j++) {
        const float ta = t * freq[j];
        a[j] = scale * ta;
    }
}

static void pe__timestep_row(float *row, float t, const float *freq, size_t half, size_t dim,
                             int flip, float scale)
{
    const pe__sincos_fn sincos = pe__current()->sincos;
    float *sh = flip ? row + half : row, *ch = flip ? row : row + half;
    float a[PE__SINCOS_CHUNK];
    size_t k, m;
    for (k = 0; k < half; k += m) {
        m = half - k;
        if (m > PE__SINCOS_CHUNK) m = PE__SINCOS_CHUNK;
        pe__timestep_angles(a, t, freq + k, m, scale);
        sincos(sh + k, ch + k, a, m);
    }
    if (dim % 2) row[dim - 1] = 0.0f;
}

PEDEF int pe_timestep_embedding(float *out, const float *timesteps, size_t n, size_t dim,
                                int flip_sin_to_cos, double downscale_freq_shift,
                                double scale, double max_period)
{
    size_t bytes, i, k, half = dim / 2;
    float lnp, div, sc, t0;
    if (!out || !timesteps) return PE_ERR_NULL;
    if (!n || !dim) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, n, dim)) return PE_ERR_OVERFLOW;
    if (flip_sin_to_cos != 0 && flip_sin_to_cos != 1) return PE_ERR_ENUM;
    if (!pe__positive(max_period) || !(fabs(downscale_freq_shift) <= DBL_MAX) ||
        !(fabs(scale) <= (double)FLT_MAX))
        return PE_ERR_PARAM;
    if (pe__overlap(out, bytes, timesteps, n * sizeof *timesteps)) return PE_ERR_ALIAS;
    /* torch: exponent = -math.log(max_period) * arange(half, float32) (the double rounded
       to float, then a float32 product), / (half - shift) (the Python number rounded to
       float, a float32 division), exp; t[:, None].float() * e; scale * that. The e[k]
       are parked in row 0 (dim >= 2 half floats fit) until the other rows are done. */
    lnp = (float)-pe__log(max_period);
    div = (float)((double)half - downscale_freq_shift);
    sc = (float)scale;
    t0 = timesteps[0];
    for (k = 0; k < half; k++) {
        /* each step its own float object: rounded where torch rounds even where float
           expressions are evaluated in double (FLT_EVAL_METHOD 1: s390x) */
        const float pk = lnp * (float)k, ek = pk / div;
        out[k] = pe__expf(ek);
    }
    for (i = 1; i < n; i++)
        pe__timestep_row(out + i * dim, timesteps[i], out, half, dim, flip_sin_to_cos, sc);
    {
        /* row 0 last: its own values overwrite the parked frequencies, so compute them
           from a copy held PE__ROPE_CHUNK at a time on the stack */
        float a[PE__ROPE_CHUNK], row[2 * PE__ROPE_CHUNK];
        for (k = 0; k < half;) {
            size_t j, m = half - k;
            if (m > PE__ROPE_CHUNK) m = PE__ROPE_CHUNK;
            pe__timestep_angles(a, t0, out + k, m, sc);
            pe__current()->sincos(row, row + PE__ROPE_CHUNK, a, m);
            /* out[k..k+m) holds frequencies still needed only for this chunk; the cos half
               lies beyond every parked frequency */
            for (j = 0; j < m; j++) {
                out[k + j] = flip_sin_to_cos ? row[PE__ROPE_CHUNK + j] : row[j];
                out[half + k + j] = flip_sin_to_cos ? row[j] : row[PE__ROPE_CHUNK + j];
            }
            k += m;
        }
        if (dim % 2) out[dim - 1] = 0.0f;
    }
    return PE_OK;
}

/* ==== 12. PATHS ======================================================================= */

/* ---- the vector paths ---------------------------------------------------------------
   Each ISA's primitives once (the union of what the feature regions' PE__DEFINE_*
   templates name), and those templates instantiated for it: the adds, RoPE's half-split
   rotation, the gradient kernels and ALiBi's rows. (The kernels written out per ISA, the
   table's sin/cos and RoPE's interleaved rotation, stand in their features' regions.) */
#ifdef PE__HAS_SSE2
#define PE__VTARGET PE__TARGET_SSE2
#define PE__W 4
#define PE__VEC __m128
#define PE__LD _mm_loadu_ps
#define PE__ST _mm_storeu_ps
#define PE__STNT _mm_stream_ps
#define PE__ADD _mm_add_ps
#define PE__ZERO _mm_setzero_ps()
#define PE__MUL _mm_mul_ps
#define PE__SUB _mm_sub_ps
#define PE__MIN _mm_min_ps
#define PE__MAX _mm_max_ps
#define PE__SET1 _mm_set1_ps
#define PE__ABOVE(v, a, b)                                                            \
    _mm_or_ps(_mm_andnot_ps(_mm_cmpgt_ps(a, b), v),                                   \
              _mm_and_ps(_mm_cmpgt_ps(a, b), _mm_set1_ps(-INFINITY)))
#define PE__OPAQUE PE__OPAQUE_X86
#define PE__IN_ORDER PE__IN_ORDER_X86
#define PE__PIN4 PE__PIN4_X86
#define PE__ZEROUPPER PE__ZEROUPPER_NONE
PE__DEFINE_SPAN(pe__add_sse2)
PE__DEFINE_SPAN_NT(pe__add_sse2_nt)
PE__DEFINE_ROPE_HALF(pe__rope_half_sse2)
PE__DEFINE_ACCZ(pe__accz_sse2)
PE__DEFINE_COLSUM(pe__colsum_sse2)
PE__DEFINE_ALIBI(pe__alibi_sse2)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
#undef PE__ZERO
#undef PE__MUL
#undef PE__SUB
#undef PE__MIN
#undef PE__MAX
#undef PE__SET1
#undef PE__ABOVE
#undef PE__OPAQUE
#undef PE__IN_ORDER
#undef PE__PIN4
#undef PE__ZEROUPPER
#endif

#ifdef PE__HAS_AVX
#define PE__VTARGET PE__TARGET_AVX
#define PE__W 8
#define PE__VEC __m256
#define PE__LD _mm256_loadu_ps
#define PE__ST _mm256_storeu_ps
#define PE__STNT _mm256_stream_ps
#define PE__ADD _mm256_add_ps
#define PE__ZERO _mm256_setzero_ps()
#define PE__MUL _mm256_mul_ps
#define PE__SUB _mm256_sub_ps
#define PE__MIN _mm256_min_ps
#define PE__MAX _mm256_max_ps
#define PE__SET1 _mm256_set1_ps
/* (and/andnot/or rather than blendv, as in pe__sincos4) */
#define PE__ABOVE(v, a, b)                                                            \
    _mm256_or_ps(_mm256_andnot_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), v),                \
                 _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_set1_ps(-INFINITY)))
#define PE__OPAQUE PE__OPAQUE_X86
#define PE__IN_ORDER PE__IN_ORDER_X86
#define PE__PIN4 PE__PIN4_X86
#define PE__ZEROUPPER PE__ZEROUPPER_AVX
/* the sin/cos kernels' (PE__DEFINE_SINCOS): 4 doubles, 4 floats; and/andnot/or rather
   than blendv: gcc turns a blendv on a compare's mask into an integer sign test, which
   AVX without AVX2 does element by element */
#define PE__DW 4
#define PE__DVEC __m256d
#define PE__DMASK __m256d
#define PE__HVEC __m128
#define PE__HLD _mm_loadu_ps
#define PE__HST _mm_storeu_ps
#define PE__HSET1 _mm_set1_ps
#define PE__HMUL _mm_mul_ps
#define PE__HSHUF(a, b) _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))
#define PE__HUNPACKLO _mm_unpacklo_ps
#define PE__HUNPACKHI _mm_unpackhi_ps
#define PE__DADD _mm256_add_pd
#define PE__DSUB _mm256_sub_pd
#define PE__DMUL _mm256_mul_pd
#define PE__DSET1 _mm256_set1_pd
#define PE__DFLOOR _mm256_floor_pd
#define PE__DCVT _mm256_cvtps_pd
#define PE__DCVTF _mm256_cvtpd_ps
#define PE__DCMP _mm256_cmp_pd
#define PE__DMOR _mm256_or_pd
#define PE__DSEL(m, yes, no) _mm256_or_pd(_mm256_andnot_pd(m, no), _mm256_and_pd(m, yes))
#define PE__DSIGN_T __m256d
#define PE__DSIGN _mm256_set1_pd(-0.0)
#define PE__DABS(v, sign) _mm256_andnot_pd(sign, v)
#define PE__DSIGNS(vs, vc, neg_s, neg_c, xs, sign)                                    \
    ((vs) = _mm256_xor_pd((vs), _mm256_xor_pd(_mm256_and_pd(neg_s, sign),             \
                                              _mm256_and_pd(xs, sign))),              \
     (vc) = _mm256_xor_pd((vc), _mm256_and_pd(neg_c, sign)))
#define PE__DUNDECIDED(x, vs, vc)                                                     \
    ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd(x, _mm256_set1_pd(PE__FAST_MAX),      \
                                                 _CMP_NLT_UQ)) |                      \
     pe__amb4(vs) | pe__amb4(vc))
PE__DEFINE_SPAN(pe__add_avx)
PE__DEFINE_SPAN_NT(pe__add_avx_nt)
PE__DEFINE_ROPE_HALF(pe__rope_half_avx)
PE__DEFINE_ACCZ(pe__accz_avx)
PE__DEFINE_COLSUM(pe__colsum_avx)
PE__DEFINE_ALIBI(pe__alibi_avx)
PE__DEFINE_SINCOS(pe__sincos4, pe__table_row_fast_avx, pe__sincos_avx)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
#undef PE__ZERO
#undef PE__MUL
#undef PE__SUB
#undef PE__MIN
#undef PE__MAX
#undef PE__SET1
#undef PE__ABOVE
#undef PE__OPAQUE
#undef PE__IN_ORDER
#undef PE__PIN4
#undef PE__ZEROUPPER
#undef PE__DW
#undef PE__DVEC
#undef PE__DMASK
#undef PE__HVEC
#undef PE__HLD
#undef PE__HST
#undef PE__HSET1
#undef PE__HMUL
#undef PE__HSHUF
#undef PE__HUNPACKLO
#undef PE__HUNPACKHI
#undef PE__DADD
#undef PE__DSUB
#undef PE__DMUL
#undef PE__DSET1
#undef PE__DFLOOR
#undef PE__DCVT
#undef PE__DCVTF
#undef PE__DCMP
#undef PE__DMOR
#undef PE__DSEL
#undef PE__DSIGN_T
#undef PE__DSIGN
#undef PE__DABS
#undef PE__DSIGNS
#undef PE__DUNDECIDED
#endif

#ifdef PE__HAS_AVX512
#define PE__VTARGET PE__TARGET_AVX512
#define PE__W 16
#define PE__VEC __m512
#define PE__LD _mm512_loadu_ps
#define PE__ST _mm512_storeu_ps
#define PE__STNT _mm512_stream_ps
#define PE__ADD _mm512_add_ps
#define PE__ZERO _mm512_setzero_ps()
#define PE__MUL _mm512_mul_ps
#define PE__SUB _mm512_sub_ps
#define PE__MIN(a, b) _mm512_maskz_min_ps(0xFFFF, a, b)  /* (zero-masked: see pe__sincos8) */
#define PE__MAX(a, b) _mm512_maskz_max_ps(0xFFFF, a, b)
#define PE__SET1 _mm512_set1_ps
#define PE__ABOVE(v, a, b)                                                            \
    _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), _mm512_set1_ps(-INFINITY))
#define PE__OPAQUE PE__OPAQUE_ZMM
#define PE__IN_ORDER PE__IN_ORDER_X86
#define PE__PIN4 PE__PIN4_ZMM
#define PE__ZEROUPPER PE__ZEROUPPER_AVX
/* the sin/cos kernels' (PE__DEFINE_SINCOS): 8 doubles, 8 floats; PE__HSHUF works within
   128-bit lanes: the div terms come as i + (0 1 4 5 | 2 3 6 7), and the unpacks put the
   (s, c) pairs back in order: lo (0 1 | 2 3), hi (4 5 | 6 7) */
#define PE__DW 8
#define PE__DVEC __m512d
#define PE__DMASK __mmask8
#define PE__HVEC __m256
#define PE__HLD _mm256_loadu_ps
#define PE__HST _mm256_storeu_ps
#define PE__HSET1 _mm256_set1_ps
#define PE__HMUL _mm256_mul_ps
#define PE__HSHUF(a, b) _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))
#define PE__HUNPACKLO _mm256_unpacklo_ps
#define PE__HUNPACKHI _mm256_unpackhi_ps
#define PE__DADD _mm512_add_pd
#define PE__DSUB _mm512_sub_pd
#define PE__DMUL _mm512_mul_pd
#define PE__DSET1 _mm512_set1_pd
#define PE__DFLOOR pe__floor8
#define PE__DCVT(a) _mm512_maskz_cvtps_pd(0xFF, a)
#define PE__DCVTF(v) _mm512_maskz_cvtpd_ps(0xFF, v)
#define PE__DCMP _mm512_cmp_pd_mask
#define PE__DMOR(a, b) (__mmask8)((a) | (b))
#define PE__DSEL(m, yes, no) _mm512_mask_mov_pd(no, m, yes)
#define PE__DSIGN_T __m512i
#define PE__DSIGN _mm512_set1_epi64((long long)0x8000000000000000ull)
#define PE__DABS(v, sign)                                                             \
    _mm512_castsi512_pd(_mm512_maskz_andnot_epi64(0xFF, sign, _mm512_castpd_si512(v)))
#define PE__DSIGNS(vs, vc, neg_s, neg_c, xs, sign)                                    \
    ((vs) = _mm512_castsi512_pd(_mm512_mask_xor_epi64(_mm512_castpd_si512(vs), neg_s,  \
                                                      _mm512_castpd_si512(vs), sign)), \
     (vs) = _mm512_castsi512_pd(_mm512_xor_epi64(                                     \
                _mm512_castpd_si512(vs), _mm512_and_epi64(_mm512_castpd_si512(xs), sign))), \
     (vc) = _mm512_castsi512_pd(_mm512_mask_xor_epi64(_mm512_castpd_si512(vc), neg_c,  \
                                                      _mm512_castpd_si512(vc), sign)))
#define PE__DUNDECIDED(x, vs, vc)                                                     \
    (unsigned)(_mm512_cmp_pd_mask(x, _mm512_set1_pd(PE__FAST_MAX), _CMP_NLT_UQ) |     \
               pe__amb8(vs) | pe__amb8(vc))
PE__DEFINE_SPAN(pe__add_avx512)
PE__DEFINE_SPAN_NT(pe__add_avx512_nt)
PE__DEFINE_ROPE_HALF(pe__rope_half_avx512)
PE__DEFINE_ACCZ(pe__accz_avx512)
PE__DEFINE_COLSUM(pe__colsum_avx512)
PE__DEFINE_ALIBI(pe__alibi_avx512)
PE__DEFINE_SINCOS(pe__sincos8, pe__table_row_fast_avx512, pe__sincos_avx512)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
#undef PE__ZERO
#undef PE__MUL
#undef PE__SUB
#undef PE__MIN
#undef PE__MAX
#undef PE__SET1
#undef PE__ABOVE
#undef PE__OPAQUE
#undef PE__IN_ORDER
#undef PE__PIN4
#undef PE__ZEROUPPER
#undef PE__DW
#undef PE__DVEC
#undef PE__DMASK
#undef PE__HVEC
#undef PE__HLD
#undef PE__HST
#undef PE__HSET1
#undef PE__HMUL
#undef PE__HSHUF
#undef PE__HUNPACKLO
#undef PE__HUNPACKHI
#undef PE__DADD
#undef PE__DSUB
#undef PE__DMUL
#undef PE__DSET1
#undef PE__DFLOOR
#undef PE__DCVT
#undef PE__DCVTF
#undef PE__DCMP
#undef PE__DMOR
#undef PE__DSEL
#undef PE__DSIGN_T
#undef PE__DSIGN
#undef PE__DABS
#undef PE__DSIGNS
#undef PE__DUNDECIDED
#endif

#ifdef PE__HAS_NEON
#define PE__VTARGET
#define PE__W 4
#define PE__VEC float32x4_t
#define PE__LD vld1q_f32
#define PE__ST vst1q_f32
#define PE__ADD vaddq_f32
#define PE__ZERO vdupq_n_f32(0.0f)
#define PE__MUL vmulq_f32
#define PE__SUB vsubq_f32
#define PE__MIN vminq_f32
#define PE__MAX vmaxq_f32
#define PE__SET1 vdupq_n_f32
#define PE__ABOVE(v, a, b) vbslq_f32(vcgtq_f32(a, b), vdupq_n_f32(-INFINITY), v)
#define PE__OPAQUE PE__OPAQUE_NEON
/* (the x86 loops' pinned order was measured on x86 only: NEON's is the compiler's) */
#define PE__IN_ORDER() ((void)0)
#define PE__PIN4(a, b, c, d) ((void)0)
#define PE__ZEROUPPER PE__ZEROUPPER_NONE
PE__DEFINE_SPAN(pe__add_neon)
PE__DEFINE_ROPE_HALF(pe__rope_half_neon)
PE__DEFINE_ACCZ(pe__accz_neon)
PE__DEFINE_COLSUM(pe__colsum_neon)
PE__DEFINE_ALIBI(pe__alibi_neon)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
#undef PE__ZERO
#undef PE__MUL
#undef PE__SUB
#undef PE__MIN
#undef PE__MAX
#undef PE__SET1
#undef PE__ABOVE
#undef PE__OPAQUE
#undef PE__IN_ORDER
#undef PE__PIN4
#undef PE__ZEROUPPER
#endif

/* ---- choosing the path ------------------------------------------------------ */

enum { PE__CPU_SSE2 = 1, PE__CPU_AVX = 2, PE__CPU_AVX512 = 4 };

#ifdef PE__HAS_SSE2
static const pe__isa pe__isa_sse2 = {"sse2", PE__CPU_SSE2, pe__add_sse2, pe__add_sse2_nt,
                                     pe__table_row_fast, pe__sincos_scalar, pe__rope_half_sse2,
                                     pe__rope_pairs_sse2, pe__accz_sse2, pe__colsum_sse2,
                                     pe__alibi_sse2};
#endif
#ifdef PE__HAS_AVX
static const pe__isa pe__isa_avx = {"avx2", PE__CPU_SSE2 | PE__CPU_AVX, pe__add_avx,
                                    pe__add_avx_nt, pe__table_row_fast_avx, pe__sincos_avx,
                                    pe__rope_half_avx, pe__rope_pairs_avx, pe__accz_avx,
                                    pe__colsum_avx, pe__alibi_avx};
#endif
#ifdef PE__HAS_AVX512
static const pe__isa pe__isa_avx512 = {"avx512", PE__CPU_SSE2 | PE__CPU_AVX | PE__CPU_AVX512,
                                       pe__add_avx512, pe__add_avx512_nt,
                                       pe__table_row_fast_avx512, pe__sincos_avx512,
                                       pe__rope_half_avx512,
                                       pe__rope_pairs_avx512, pe__accz_avx512,
                                       pe__colsum_avx512, pe__alibi_avx512};
#endif
#ifdef PE__HAS_NEON
static const pe__isa pe__isa_neon = {"neon", 0, pe__add_neon, pe__add_neon,
                                     pe__table_row_fast_neon, pe__sincos_neon,
                                     pe__rope_half_neon,
                                     pe__rope_pairs_neon, pe__accz_neon, pe__colsum_neon,
                                     pe__alibi_neon};
#endif
static const pe__isa pe__isa_scalar = {"scalar", 0, pe__add_scalar, pe__add_scalar,
                                       pe__table_row_fast, pe__sincos_scalar,
                                       pe__rope_half_scalar,
                                       pe__rope_pairs_scalar, pe__accz_scalar,
                                       pe__colsum_scalar, pe__alibi_scalar};

#ifdef PE__DISPATCH
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void pe__cpuid(unsigned leaf, unsigned r[4])
{
    int v[4];
    __cpuidex(v, (int)leaf, 0);
    r[0] = (unsigned)v[0]; r[1] = (unsigned)v[1]; r[2] = (unsigned)v[2]; r[3] = (unsigned)v[3];
}
static unsigned pe__xcr0(void) { return (unsigned)_xgetbv(0); }
#else
#include <cpuid.h>
static void pe__cpuid(unsigned leaf, unsigned r[4])
{
    unsigned a, b, c, d;
    __cpuid_count(leaf, 0, a, b, c, d);
    r[0] = a; r[1] = b; r[2] = c; r[3] = d;
}
static unsigned pe__xcr0(void)      /* xgetbv(0), spelled out for older assemblers */
{
    unsigned a, d;
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(a), "=d"(d) : "c"(0));
    return a;
}
#endif
/* The instructions (cpuid) and the OS saving the registers they use (xgetbv: the
   ymm state for AVX; also the opmask and zmm states for AVX-512). The avx2 path's
   kernels only use AVX, but it runs where ffn.h's avx2 does (AVX, AVX2 and FMA), so that
   one name means one kind of CPU in both headers. */
static unsigned pe__cpu_detect(void)
{
    unsigned r0[4], r1[4], r7[4] = {0, 0, 0, 0}, xcr0 = 0, avx, avx512;
    pe__cpuid(0, r0);
    pe__cpuid(1, r1);
    if (r0[0] >= 7) pe__cpuid(7, r7);
    if (r1[2] >> 27 & 1) xcr0 = pe__xcr0();                            /* OSXSAVE */
    avx = (r1[2] >> 28 & 1) && (r1[2] >> 12 & 1) && (r7[1] >> 5 & 1) && (xcr0 & 6) == 6;
    avx512 = avx && (r7[1] >> 16 & 1) && (xcr0 & 0xe6) == 0xe6;
    return (r1[3] >> 26 & 1 ? (unsigned)PE__CPU_SSE2 : 0u) | (avx ? (unsigned)PE__CPU_AVX : 0u) |
           (avx512 ? (unsigned)PE__CPU_AVX512 : 0u);
}
#endif

/* The PE__CPU_* bits this machine has: what the flags guarantee, plus cpuid. */
static unsigned pe__cpu(void)
{
    unsigned have = 0;
#ifdef PE__FLAGS_SSE2
    have |= PE__CPU_SSE2;
#endif
#ifdef PE__FLAGS_AVX
    have |= PE__CPU_AVX;
#endif
#ifdef PE__FLAGS_AVX512
    have |= PE__CPU_AVX512;
#endif
#ifdef PE__DISPATCH
    have |= pe__cpu_detect();
#endif
    return have;
}

/* The paths of this architecture, best first; NULL: not compiled in this build. */
#ifdef PE__HAS_AVX512
#define PE__ISA_AVX512 &pe__isa_avx512
#else
#define PE__ISA_AVX512 NULL
#endif
#ifdef PE__HAS_AVX
#define PE__ISA_AVX &pe__isa_avx
#else
#define PE__ISA_AVX NULL
#endif
#ifdef PE__HAS_SSE2
#define PE__ISA_SSE2 &pe__isa_sse2
#else
#define PE__ISA_SSE2 NULL
#endif
#ifdef PE__HAS_NEON
#define PE__ISA_NEON &pe__isa_neon
#else
#define PE__ISA_NEON NULL
#endif
static const struct { const char *name; const pe__isa *isa; } pe__paths[] = {
#if defined(PE__ARCH_X86)
    {"avx512", PE__ISA_AVX512}, {"avx2", PE__ISA_AVX}, {"sse2", PE__ISA_SSE2},
#elif defined(__aarch64__)
    {"neon", PE__ISA_NEON},
#endif
    {"scalar", &pe__isa_scalar}};
#define PE__NPATHS (sizeof pe__paths / sizeof pe__paths[0])

/* PE_OK if path i is compiled and a CPU with the PE__CPU_* bits `have` runs it. */
static int pe__path_ok(size_t i, unsigned have)
{
    if (!pe__paths[i].isa) return PE_ERR_PATH;
    return (pe__paths[i].isa->need & ~have) ? PE_ERR_CPU : PE_OK;
}

/* The cached choice: 0 until the first call picks, then 1 + its index in pe__paths.
   Threads that race through their first call all store the same value; the atomic
   access keeps that a well-defined program (ThreadSanitizer agrees). */
static long pe__chosen;
#if defined(__ATOMIC_RELAXED)
#define PE__LOAD(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define PE__STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#elif defined(_MSC_VER)
#define PE__LOAD(p) _InterlockedOr(p, 0)
#define PE__STORE(p, v) ((void)_InterlockedExchange(p, v))
#else
#define PE__LOAD(p) (*(p))
#define PE__STORE(p, v) ((void)(*(p) = (v)))
#endif

static long pe__best(void)
{
    const unsigned have = pe__cpu();
    size_t i = 0;
    while (pe__path_ok(i, have) != PE_OK) i++;      /* scalar, the last, always is */
    return (long)i + 1;
}

static const pe__isa *pe__current(void)
{
    long i = PE__LOAD(&pe__chosen);
    if (!i) {
        i = pe__best();
        PE__STORE(&pe__chosen, i);
    }
    return pe__paths[i - 1].isa;
}

PEDEF const char *pe_path(void) { return pe__current()->name; }

PEDEF const char *pe_path_name(int i)
{
    return i >= 0 && (size_t)i < PE__NPATHS ? pe__paths[i].name : NULL;
}

PEDEF int pe_set_path(const char *name)
{
    size_t i;
    if (!name || strcmp(name, "auto") == 0) {
        PE__STORE(&pe__chosen, pe__best());
        return PE_OK;
    }
    if (strcmp(name, "avx") == 0) name = "avx2";    /* its name until 1.4: one release more */
    for (i = 0; i < PE__NPATHS; i++)
        if (strcmp(name, pe__paths[i].name) == 0) {
            int st = pe__path_ok(i, pe__cpu());
            if (st == PE_OK) PE__STORE(&pe__chosen, (long)i + 1);
            return st;
        }
    return PE_ERR_PATH;
}

#endif /* PE_IMPLEMENTATION_DONE */
#endif /* PE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the pe.h and ffn.h authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright law, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication for the benefit of the public at large and to
the detriment of our heirs and successors. We intend this dedication to be an
overt act of relinquishment in perpetuity of all present and future rights to
this software under copyright law.
------------------------------------------------------------------------------
*/
