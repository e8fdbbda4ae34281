/* ffn.h - v2.0.0 - the transformer feed-forward block (Linear -> activation -> Linear) in C.
   Public domain or MIT (see the end of the file). No warranty.

   Do this:
      #define FFN_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.
   Link with -lm (for sqrt and sqrtf only; and with -fopenmp if you compile with it).

   QUICK START (weights straight from a PyTorch state_dict, nn.Linear layout)

      ffn_mlp m;                                             // fc2(gelu(fc1(x)))
      m.fc1 = ffn_weight_of(fc1_w, FFN_F32, FFN_OUT_IN);     // or FFN_BF16, FFN_F16 bits
      m.fc2 = ffn_weight_of(fc2_w, FFN_F32, FFN_OUT_IN);
      m.b1 = fc1_b; m.b2 = fc2_b; m.d_model = D; m.hidden = H; m.act = FFN_GELU;
      size_t n = ffn_block_scratch_floats(rows, D, H);
      float *scratch = (float *)malloc(n * sizeof(float));   // you own all memory
      int st = ffn_mlp_forward(y, x, rows, &m, scratch, n);
      if (st < 0) fprintf(stderr, "%s\n", ffn_status_string(st));

   2.0: WEIGHT DESCRIPTORS, AND THE 1.x CALLS
      A weight is an ffn_weight: its data, dtype (float32, bfloat16, float16) and layout
      (nn.Linear's (out, in), Conv1D's (in, out), strided rows, packed). Every call that
      reads a weight has a descriptor form; the blocks take their parameters in a struct:
         1.x call                              2.0 form
         ffn_linear, ffn_linear_packed         ffn_linear_w
         ffn_pack_floats, ffn_pack_weight,     ffn_pack_bytes, ffn_pack
           ffn_pack_weight_in_out, _strided
         ffn_block, ffn_block_act (_packed)    ffn_mlp_forward
         ffn_gated, ffn_gated_packed           ffn_glu_forward
         ffn_block_act_train (_packed)         ffn_mlp_train
         ffn_gated_train (_packed)             ffn_glu_train
         ffn_linear_backward                   ffn_linear_backward_w
         ffn_block_act_backward                ffn_mlp_backward
         ffn_gated_backward                    ffn_glu_backward
      The 1.x calls stay in 2.x, deprecated, and go in 3.0: each is now a few lines that
      build float32 descriptors and call its 2.0 form, so a 1.x program compiles and gives
      the same bits unchanged (a migration table alone would break every build on the day
      of the upgrade, for no gain: the wrappers cost a few lines each and share every
      check and kernel; FFN_WARN_DEPRECATED finds them). The sections below still
      describe each operation under its 1.x name, whose contract (shapes, bits, errors)
      its 2.0 form has.

   THE BITS: THE LIBRARY'S OWN, NOT THE PLATFORM'S
      Every result is a fixed sequence of IEEE operations of this header's own, so the
      bits are the same on every platform, C library, path and thread count:
      - erff, tanhf and expf, inside torch's float pipeline of its scalar CPU kernels
        (GELU, GELU_TANH, SILU, SIGMOID, their backward, GPT-OSS's sigmoid), are the
        header's own and CORRECTLY ROUNDED (to nearest, ties to even) for every float
        input: checked over all 2^32 inputs against MPFR (tools/exhaustive.c, `make
        exhaustive`). Correct rounding is the one definition no two correct
        implementations can disagree on, and the most accurate; C libraries are not
        correctly rounded (glibc 2.36 differs from it for about 1.7% of erff, 10.7% of
        tanhf and 0.07% of expf results on 100,000 samples; musl's, mingw-w64's and newer
        glibc releases' results differ again), so "torch's bits" from libm are a property
        of one libm build. Where torch's libm call returns the correctly rounded value
        (most elements), the activation has torch's bits; elsewhere the call's result is
        1 ulp apart, and the activation by what that ulp becomes through the rest of the
        formula (about 1 ulp of the result).
      - fused multiply-adds (every sum of a Linear, the FFN_FAST forms): the compiler's
        instruction where the flags give one (__FP_FAST_FMAF, __FMA__ on x86,
        __ARM_FEATURE_FMA: aarch64), otherwise the header's own exact fmaf (the float
        product is exact in double; the double sum is rounded to odd, then once to float;
        about 10 double operations). Never the C library's fmaf: mingw-w64's differs from
        the fused result in 29% of random cases. A default x86-64 build (no -mfma) runs
        its scalar path with the software fmaf: that path is the readable specification,
        and what runs on CPUs without AVX2 and FMA, whose libm fmaf was itself software;
        the AVX2 / AVX-512 paths, chosen at run time, use the instruction.
      - AdamW's bias corrections beta^t: powering by squaring in double-double, rounded
        once (the correctly rounded double unless the value is within about t 2^-104 of a
        midpoint between doubles; Python's beta ** step calls the C library's pow).
      - sqrt and sqrtf (AdamW's denominators): IEEE's correctly rounded square roots, the
        only C library functions still used.
      None of this depends on whether the compiler contracts a * b + c into an FMA
      (-ffp-contract): the own functions are correctly rounded with error bounds that
      hold either way, the torch pipelines round each step through its own float object,
      and the sums use explicit FMAs. Nor on FLT_EVAL_METHOD 0 or 1 (float evaluated in
      double: s390x). FLT_EVAL_METHOD 2 (x87 without SSE2: double rounded twice, to 64
      bits and then to 53) is not supported by the software fmaf and the double-double
      paths, whose exact error terms assume one rounding to double: on 32-bit x86 build
      with -msse2 -mfpmath=sse.

   WHAT IT COMPUTES (shapes are PyTorch shapes, row-major, C order)

      ffn_linear   y (rows, out) = x (rows, in) @ weight^T + bias
                   torch.nn.functional.linear(x, weight, bias); weight (out, in) as in
                   nn.Linear.weight, bias (out) or NULL. rows may be batch*seq: torch
                   gives bit-identical results for (B, S, in) and (B*S, in).
      ffn_relu     y = torch.relu(x): NaN stays NaN, -0.0 stays -0.0, -inf gives 0.
                   (x > 0 ? x : 0 and fmaxf(x, 0) both lose NaN.)
      ffn_block    y = fc2(relu(fc1(x))), i.e. nn.Sequential(nn.Linear(d_model, hidden),
                   nn.ReLU(), nn.Linear(hidden, d_model))(x) (the FeedForwardNN module of
                   "Attention is all you need"-style code). x, y (rows, d_model); fc1
                   weight (hidden, d_model), bias (hidden); fc2 weight (d_model, hidden),
                   bias (d_model).
      ffn_activation  y = act(x) elementwise, act one of
                   FFN_RELU       torch.relu(x)
                   FFN_GELU       F.gelu(x) (approximate='none'): x/2 (1 + erf(x/sqrt 2));
                                  nn.GELU() of BERT, ViT
                   FFN_GELU_TANH  F.gelu(x, approximate='tanh'): x/2 (1 + tanh(sqrt(2/pi)
                                  (x + 0.044715 x^3))); GPT-2's MLP. (GPT-2's own
                                  gelu_new spells x^3 as torch.pow(x, 3.0): mathematically
                                  the same, not always the same bits in torch.)
                   FFN_SILU       F.silu(x) = x sigmoid(x); nn.SiLU() of Llama-style blocks
                   FFN_SIGMOID    torch.sigmoid(x) = 1 / (1 + exp(-x)); nn.GLU's gate
                   GELU, GELU_TANH, SILU and SIGMOID are computed as torch's scalar CPU
                   kernels compute them (float arithmetic, operation for operation),
                   with the header's correctly rounded erff, tanhf, expf where torch
                   calls libm's (THE BITS above): torch run with
                   ATEN_CPU_CAPABILITY=default and oneDNN off gives the same bits
                   wherever its libm's call is correctly rounded, and differs by
                   about an ulp elsewhere; torch's default (vectorised) dispatch
                   differs from that by an ulp or so in many elements. Special values
                   as torch: NaN stays NaN, -0.0 gives -0.0, and act(-inf) is NaN for
                   GELU, GELU_TANH and SILU (-inf times 0, as in torch), act(+inf) =
                   +inf; the sigmoid gives 0.5, +0 and 1 for -0.0, -inf and +inf.
                   act | FFN_FAST: the same function through vectorised formulas of
                   this header's own (FAST ACTIVATIONS below).
      ffn_block_act  y = fc2(act(fc1(x))), the block with another activation, e.g.
                   nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d)) (BERT,
                   ViT), GPT-2's MLP with FFN_GELU_TANH, FFN_SILU. The activation is
                   applied to each tile of fc1's output as it is made (the hidden layer
                   is written once). ffn_block_act(.., FFN_RELU, ..) is ffn_block.
      ffn_gated    y = down(act(gate(x)) * up(x)), the gated block of Llama, Mistral,
                   Qwen (SwiGLU: FFN_SILU, no biases), GEGLU (FFN_GELU, FFN_GELU_TANH),
                   ReGLU (FFN_RELU). gate_proj, up_proj (hidden, d_model) and down_proj
                   (d_model, hidden) as in the checkpoint (nn.Linear layout); biases or
                   NULL. Layouts of other checkpoints, by pointer:
                      one fused (2*hidden, d_model) matrix W with the gate first (ggml's
                      swiglu): w_gate = W, w_up = W + hidden * d_model;
                      torch.nn.GLU(Linear(d, 2h)(x)) = first half * sigmoid(second half):
                      act FFN_SIGMOID, w_gate = the second half, w_up = the first (each
                      output's summation order depends on d_model alone, so the halves
                      give the bits one (2h, d) Linear would).
                   GPT-OSS's experts (transformers' GptOssExperts, OpenAI's reference
                   swiglu), act FFN_GPT_OSS: y = down((clamp(up, -7, 7) + 1) * glu),
                   glu = g sigmoid(1.702 g), g = gate.clamp(max=7); gate and up are the
                   even and odd columns of the fused gate_up_proj (d_model, 2 hidden),
                   (in, out) layout, down_proj (hidden, d_model) likewise: pack them
                   with ffn_pack_weight_strided(.., gate_up_proj (+ 1 for up), d_model,
                   hidden, 2, 2 * hidden) and ffn_pack_weight_in_out (OpenAI's own
                   checkpoint stores the rows interleaved, (2 hidden, d_model): strides
                   2 * d_model and 1, up at + d_model; its down as nn.Linear), and pass the
                   bias's even and odd entries as b_gate and b_up (copy them into two
                   arrays of hidden floats). The routing of the mixture of experts (which
                   experts a row goes to, and their weights) is the caller's.
      ffn_pack_weight_strided  packs a weight of any strides (element (o, k) at
                   o * stride_out + k * stride_in): nn.Linear's, Conv1D's, interleaved
                   halves of a fused matrix (GPT-OSS's gate_up_proj).
      ffn_pack_weight_in_out  packs a weight stored (in, out), as GPT-2's Conv1D
                   (transformers' Conv1D: y = x @ W + b), into the same packed layout:
                   a GPT-2 state_dict's c_fc / c_proj weights are used without a
                   transpose (ffn_block_act_packed with FFN_GELU_TANH is GPT-2's MLP).

   FAST ACTIVATIONS (act | FFN_FAST, in every function that takes act)

      FFN_GELU, FFN_GELU_TANH, FFN_SILU and FFN_SIGMOID with FFN_FAST skip torch's
      pipeline and its correctly rounded functions: one exp, erf and erfc of this
      header's own, in float with explicit fused multiply-adds and IEEE division, 8 or
      16 lanes at a time on AVX2 / AVX-512 / NEON. Every path and platform computes the
      same operations, so the bits are the same everywhere (they are not torch's
      pipeline's, so not torch's to the bit). Forms:
         GELU       x/2 (1 + erf(x/sqrt 2)) for |x/sqrt 2| < 7/8, else from
                    erfc(|x|/sqrt 2) (no cancellation of 1 + erf for x << 0)
         GELU_TANH  x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3) (= x/2 (1 +
                    tanh u); no cancellation either)
         SILU       x / (1 + exp(-x));  SIGMOID  1 / (1 + exp(-x))
      (each v / (1 + e) as v - v e / (1 + e), rounded once, where e < 1/2).
      Error: |y - act(x)| <= B max(2^-23 |x|, 2^-149) against float64 over all 2^32
      floats, B = 0.780 (GELU), 0.804 (GELU_TANH), 0.625 (SILU); the sigmoid within
      1.163 * 2^-24. torch's own results are further off: its scalar forms (glibc 2.36) reach
      0.908, 1.213, 0.995 and 1.498 of those units over all floats, its default
      (vectorised) dispatch 2.364, 0.935, 0.983 and 1.492 over one float in 509 (1 + erf
      and 1 + tanh, which torch forms, cancel for x << 0). Special values as in torch:
      NaN -> NaN, -0.0 -> -0.0 (sigmoid 0.5), -inf -> NaN (sigmoid +0),
      +inf -> +inf (sigmoid 1). FFN_RELU | FFN_FAST is FFN_RELU.

   TRAINING (backward passes; more to come)

      ffn_linear_backward  the gradients autograd gives for y = F.linear(x, W, b) and an
                   upstream dy (rows, out): dx (rows, in) = dy @ W, written; dw (out, in)
                   += dy^T @ x and db (out) += dy.sum(0), accumulated as autograd
                   accumulates into .grad (zero them first for a fresh gradient); any of
                   the three may be NULL. Scratch: ffn_linear_backward_scratch_floats().
                   dx and dw run on the GEMM kernels (dy^T and x^T, and W^T at rows >
                   512, packed into the scratch), each sum in the Linear's order over its
                   K (out for dx, rows for dw) with the old dw as the bias: dw =
                   F.linear(dy^T, x^T, dw) in the NUMERICAL CONTRACT's order. db is
                   summed in torch's order (its cascade over the rows: torch's bits from
                   the same dy, and its accuracy, which grows with log(rows)), then
                   added onto db once. The same bits on every path and thread count.
      ffn_activation_backward  dx = dy * act'(x) for x the activation's input: x.grad after
                   act(x).backward(dy); ReLU as torch's threshold_backward (+0 where
                   relu(x) <= 0), the others in the two-term float forms of torch's
                   kernels (GELU Phi + x phi, GELU-tanh (1 + t)/2 + x/2 (1 - t^2) beta (1 +
                   3 kappa x^2), SiLU s (1 + x (1 - s)), sigmoid s (1 - s)) with the
                   header's correctly rounded erff, tanhf, expf.
      ffn_sgd_step, ffn_adamw_step  one step of torch.optim.SGD (momentum, dampening,
                   weight decay, Nesterov) and torch.optim.AdamW (decoupled weight decay,
                   bias correction, eps added to sqrt(v) / sqrt(1 - beta2^t)) on float32
                   parameters, the scalars in double as Python computes them; torch's own
                   argument checks (and finite values, t >= 1) return a status naming the
                   argument, FFN_ERR_LR .. FFN_ERR_STEP (see ERRORS).
      ffn_block_act_train, ffn_block_act_backward  the block fc2(act(fc1(x))) in training.
                   The forward also writes h = fc1(x) (rows, hidden), the pre-activation
                   autograd saves; y has ffn_block_act's bits. The backward takes dy, x, h
                   and the weights, and gives what fc2(act(fc1(x))).backward(dy) leaves in
                   x.grad (written) and in each parameter's .grad (accumulated):
                      a = act(h); dw2 += dy^T a; db2 += dy.sum(0); da = dy w2;
                      dh = da * act'(h); dw1 += dh^T x; db1 += dh.sum(0); dx = dh w1
                   Any of the gradients may be NULL (a frozen layer, no dx for the first
                   block), not all. The bits are those of ffn_activation,
                   ffn_linear_backward (fc2), ffn_activation_backward and
                   ffn_linear_backward (fc1) composed: every path and thread count alike.
      ffn_gated_train, ffn_gated_backward  the same for down(act(gate(x)) * up(x)): the
                   forward saves gate(x) and up(x); the product's backward is autograd's
                   (up's gradient dp * act(gate), act's dp * up), and x.grad is the gate's
                   and the up's contributions added. FFN_GPT_OSS has no backward
                   (FFN_ERR_ARG, in the train forwards too): its gradients would belong to
                   the interleaved (in, out) checkpoint tensors.
                   Scratch: ffn_block_scratch_floats() for ffn_block_act_train,
                   ffn_gated_train_scratch_floats() for ffn_gated_train (the same count),
                   ffn_block_backward_scratch_floats(), ffn_gated_backward_scratch_floats().
      Packed weights: the train forwards have _packed twins (the same bits). The
                   backwards take the weights as nn.Linear stores them (what the optimizer
                   steps update): dx = dh @ w1 is a Linear whose weight is w1^T, i.e. w1
                   read as an (in hidden, out d_model) weight, which packs into panels of
                   d_model features over K = hidden; the forward's packed w1 holds panels
                   of hidden features over K = d_model, so it cannot serve. The backward
                   packs w1^T and w2^T (and x^T, a^T for the weight gradients) into its
                   scratch at each call, as ffn_linear_backward does: O(hidden d_model)
                   copies beside O(rows hidden d_model) flops, never stale after a step.
      A training step of one block (AdamW; m*, v* zeroed once, t = 1, 2, ..):
         ffn_mlp_train(y, h, x, rows, &m, s, ns);   // m: the QUICK START's ffn_mlp
         ... the layers above: dy = dloss/dy ...
         ffn_mlp_grads g = {dx, gw1, gb1, gw2, gb2};
         ffn_mlp_backward(&g, dy, x, h, rows, &m, s2, ns2);  // ffn_block_backward_scratch_floats
         ffn_adamw_step(w1, m1, v1, gw1, H * D, lr, 0.9f, 0.999f, 1e-8f, 0.01f, t);
         ... b1, w2, b2 likewise; then zero gw1, gb1, gw2, gb2 for the next step

   PREPACKED WEIGHTS (pack once, run many times)

      size_t n1 = ffn_pack_bytes(D, H, FFN_F32), n2 = ffn_pack_bytes(H, D, FFN_F32);
      ffn_pack(w1p, n1, FFN_F32, &m.fc1, D, H);  // fc1 is (H, D): in = D, out = H
      ffn_pack(w2p, n2, FFN_F32, &m.fc2, H, D);  // (FFN_BF16: half the bytes)
      m.fc1 = ffn_weight_of(w1p, FFN_F32, FFN_PACKED);
      m.fc2 = ffn_weight_of(w2p, FFN_F32, FFN_PACKED);
      ffn_mlp_forward(y, x, rows, &m, scratch, n);

      The packed layout is the same for every build, path and ISA (a packed buffer can
      be saved and loaded anywhere): the output features are cut into panels of 16, and
      each panel is stored K-major, 16 floats per reduction step, zero padded:
         packed[(p * in + k) * 16 + j] = weight[p * 16 + j][k]    (0 if p*16+j >= out)
      for p < ceil(out / 16), k < in, j < 16. One step of a panel is one 64-byte row of
      16 output features, which is what the SIMD kernels load. The unpacked calls give
      the same bits as the packed ones: they pack small slices on the fly (on the stack).

   NUMERICAL CONTRACT
      Each output element of a Linear is bias + sum_k x_k w_k over K = in terms, summed
      in one fixed order that depends on K alone:
         kb = 8 if K < 64, 16 if K < 256, 32 if K < 1024, else 64
         the steps k = 0..K-1 are cut into blocks of kb; each block is a chain of fused
         multiply-adds from +0: s = 0; s = fmaf(x_k, w_k, s) for k in the block
         sb = 8 consecutive blocks (4 when kb is 64) form a superblock, whose sum is
         its first block's s plus each next block's s in turn
         y = bias (0 without one) plus each superblock's sum in turn
      Every path (scalar, AVX2, AVX-512, NEON), packed or not, computes exactly this,
      for any thread count, tiling or row count, on every platform, so they all give
      the same bits. (The scalar path's fmaf is the FMA instruction where the compiler
      flags give one, else the header's own exact software fmaf: THE BITS.) A NaN result is
      a NaN on every path; which NaN payload it carries is not specified (nor is it by
      torch). Like torch's, a sum of -0.0 products comes out +0.0.
      Error: with S = |b| + sum_k |x_k w_k| and u = 2^-24, any one term goes through at
      most n = min(K, kb) + min(sb, B) - 1 + ceil(B / sb) roundings (B = ceil(K / kb)
      blocks), so |y - exact| <= n u / (1 - n u) * S: n = 79 at K = 3072, 42 at
      K = 700, 13 at K = 33 (one chain of K multiply-adds would be K + 1). In practice,
      with roundings of both signs, the error is far below that; the golden tests
      apply sqrt(K) * 2^-23 * S per layer against torch, and check that ffn.h's largest
      error against a float64 result is no larger than torch's (OpenBLAS), for K from 1
      to 3072.

   ERRORS
      Every function returns FFN_OK (0) or a negative status, and on error writes
      nothing to any output. ffn_status_string() names a status. Checked, in order:
         FFN_ERR_ARG        act is not one of FFN_RELU .. FFN_SIGMOID (| FFN_FAST), or
                            FFN_GPT_OSS (| FFN_FAST) in ffn_gated and ffn_gated_packed
         FFN_ERR_NULL       a required pointer is NULL (only bias pointers may be NULL,
                            and the gradients of the backwards, not all of them); a
                            weight descriptor or its data included
         FFN_ERR_DTYPE      a weight's dtype is not FFN_F32, FFN_BF16 or FFN_F16 (ffn_pack:
                            also the dtype asked for)
         FFN_ERR_LAYOUT     a weight's layout is not one of FFN_OUT_IN .. FFN_PACKED, a
                            FFN_STRIDED one has a stride 0, or ffn_pack's source is packed
         FFN_ERR_ZERO_SIZE  a size argument is 0
         FFN_ERR_OVERFLOW   a buffer's size in bytes does not fit in size_t (a FFN_STRIDED
                            weight's: the span its strides address)
         FFN_ERR_SCRATCH    scratch_floats < ffn_block_scratch_floats(...) (ffn_gated:
                            ffn_gated_scratch_floats(...); ffn_gated_train:
                            ffn_gated_train_scratch_floats(...); the backwards: their own
                            *_scratch_floats(...)), or packed_floats < ffn_pack_floats(...)
         FFN_ERR_ALIAS      an output overlaps an input or the scratch (see below)
      The optimizer steps check NULL, ZERO_SIZE, OVERFLOW, then their hyperparameters in
      the arguments' order, then ALIAS:
         ffn_sgd_step    FFN_ERR_LR, FFN_ERR_MOMENTUM, FFN_ERR_DAMPENING,
                         FFN_ERR_WEIGHT_DECAY, FFN_ERR_NESTEROV
         ffn_adamw_step  FFN_ERR_LR, FFN_ERR_BETA1, FFN_ERR_BETA2, FFN_ERR_EPS,
                         FFN_ERR_WEIGHT_DECAY, FFN_ERR_STEP
      (each listed beside the enum below; until 1.7 all were FFN_ERR_ARG).
      A packed weight is read as ffn_pack_floats(in, out) floats (that much memory
      must be there; its contents are not checked). ffn_set_path() can also return
         FFN_ERR_PATH       no path of that name in this build
         FFN_ERR_CPU        this CPU (or its OS) cannot run that path
      and ffn_set_parallel_for()
         FFN_ERR_THREADS    a pool with n_threads not in 1..1024 (the setting stays)
      The status names the kind of error, not the argument: the header keeps no
      per-call state (no errno-like last error; thread safety), so a failed call's
      only output is its status. Each kind concerns few of the call's arguments
      (NULL: its pointers but the biases; ZERO_SIZE: its sizes; SCRATCH:
      scratch_floats or packed_floats against the size query; ALIAS: y or packed
      against the inputs and the scratch), and the first failing check in the order
      above is the one reported.

   MEMORY, THREADS, ALIASING
      No allocation. The only global state is the cached choice of path (below) and
      the pool of ffn_set_parallel_for; every function is thread-safe on distinct
      outputs. Buffers need float alignment only.
      ffn_relu, ffn_activation, ffn_block* and ffn_gated* accept y == x (the train
      forwards too; their saved pre-activations overlap nothing); ffn_activation_backward
      accepts dx == dy or dx == x; the other backwards and the optimizer steps accept
      no overlap;
      ffn_linear(_packed)'s y and ffn_pack_weight*'s packed must not overlap anything;
      no other overlap is accepted.
      The unpacked calls, and 16-bit packed weights at more rows than a tile (widened
      into it), use a buffer of FFN_STACK_FLOATS floats on the stack of each thread
      that runs them, and up to 8 KiB more (gcc and clang, optimised): 136 KiB in all
      by default on x86-64 with glibc, macOS or Windows (where the build has the
      AVX-512 path; their threads get 512 KiB or more), 72 KiB elsewhere (musl's
      threads get 128 KiB); the rest a few KiB. A pool with smaller stacks: define
      FFN_STACK_FLOATS 16384 (or less; same bits).
      THREADS. The GEMMs of every call (the Linears, the blocks, the gated blocks, and
      the backwards' products) run on T threads: the caller's pool if one is set
      (ffn_set_parallel_for, with or without OpenMP), else, built with OpenMP
      (-fopenmp), omp_get_max_threads() of them (OMP_NUM_THREADS,
      omp_set_num_threads(); inside an active parallel region, the calling thread
      only), else the calling thread. The work is cut into at most T tasks of nearly
      equal flops (the busiest within 1.15x the mean for every shape of the bench and
      T = 1..64): ranges of rows through all the layers when there are at least 256
      rows per thread, else, layer by layer, a grid of row ranges x ranges of output
      features; fewer than T tasks where the work is too small to pay for more threads
      (a task gets at least ~0.5 Mflop of work, each weight it reads counted as 40
      flops: at one row, a slice of ~48 KiB of weights), or where no T tasks would be
      even (16 rows x 256 output features on 5 threads: 4 tasks of 64 features). The
      bits are the same for every T and every pool. Where other programs keep the
      cores busy, threads wait for each other and fewer can be faster. The scalar
      path, the activations and the optimizer steps run on the calling thread.
      A pool of your own (a game engine's, a server's jobs), e.g. for a pool that has
      a parallel-for of its own, my_pool_for(pool, n, fn, arg):
         static void run_tasks(void *pool, int n_tasks, ffn_task_fn task, void *arg)
         {
             my_pool_for((my_pool *)pool, n_tasks, task, arg);  // task(arg, i), i < n;
         }                                                       // returns when done
         ...
         ffn_set_parallel_for(run_tasks, pool, my_pool_threads(pool));
         ffn_block(...);                     // runs its tasks on the pool's threads
         ffn_set_parallel_for(NULL, NULL, 0);        // back to OpenMP / one thread
      ffn_set_parallel_for is thread-safe (calls on other threads see the old setting or
      the new, whole), and so is a call running meanwhile; the pool must outlive the
      calls that use it. A call made inside one of the pool's own tasks calls fn too:
      a pool that cannot nest should run such a parallel-for on the calling thread.
      No pool is built in: threads of its own (their creation, their end, spinning or
      sleeping between calls) are the application's to decide, and a pthreads / Win32
      pool would add a link dependency (-lpthread) to a header that needs only libc;
      tests/test_threads.c holds a pthreads pool of 60 lines to start from.

   PATHS (chosen at run time; the same bits on each)
      "avx512"  x86 with AVX-512F (and the OS saving the zmm state): 7 x 32 tiles.
      "avx2"    x86 with AVX2, FMA and F16C (and the OS saving the ymm state): 6 x 16 tiles.
      "neon"    aarch64 (NEON is always there).
      "scalar"  the plain C loops, which read like the math: the specification that
                the other paths are tested against. Always compiled.
      On x86 with gcc, clang or MSVC, every path is compiled whatever the flags (gcc
      and clang: function-level target attributes), and the first call picks the best
      one that the CPU and the OS support (cpuid and xgetbv), once; that choice is
      cached (an atomic int, so threads racing through their first call are fine).
      A plain `cc -O2` build thus runs AVX-512 or AVX2 code where the CPU has it. If
      the compiler flags already guarantee the best path (e.g. -march=native on an
      AVX-512 machine) it is used without any CPU check. Compilers without target
      attributes (tcc, ...) and FFN_NO_RUNTIME_DISPATCH compile only what the flags
      enable (plus scalar). FFN_BASELINE_SIMD_NAME names the best path the flags alone
      guarantee (not the one calls run: ffn_path()).

      ffn_path()            the name of the path that calls run now
      ffn_set_path(name)    run the named path from now on (NULL or "auto": the best
                            this CPU supports); FFN_ERR_PATH / FFN_ERR_CPU (and the
                            choice unchanged) if it cannot. For tests, benchmarks and
                            checking a new platform; not meant to race with calls on
                            other threads (each call reads the choice once).
      ffn_path_name(i)      the paths of this architecture, best first (i = 0, 1, ..),
                            NULL after the last: e.g. "avx512", "avx2", "scalar".

   OPTIONS (#define before the first include)
      FFN_STATIC       make every function static (private to the file)
      FFN_ASSERT(x)    your assert for internal invariants (default: assert.h)
      FFN_NO_SIMD      compile the plain C path only (the readable specification)
      FFN_NO_RUNTIME_DISPATCH  compile only the paths the compiler flags enable, and
                       never run cpuid (the best of them is used)
      FFN_NO_AVX512    x86: leave the AVX-512 path out (the AVX2 path runs there; the
                       same bits): a smaller build, or coverage on a CPU without it
      FFN_NO_OPENMP    ignore -fopenmp: everything runs on the calling thread (or on
                       the pool of ffn_set_parallel_for)
      FFN_STACK_FLOATS stack buffer of the unpacked calls and of 16-bit weights at many
                       rows, in floats (MEMORY; default 32768 on x86-64 with glibc, macOS
                       or Windows, where AVX-512 then widens k blocks of 1024, float32's,
                       not 512: faster at many rows, README; 16384 elsewhere; same bits)
      FFN_WARN_DEPRECATED  gcc and clang warn at each call of a 1.x function, naming its
                       2.0 form (off by default: a 1.x program builds unchanged)

   CONTENTS (of the implementation: each region opens with a line "==== N. TITLE ====")
      1. CONFIGURATION           the paths this build compiles; compiler portability
      2. COMMON                  checks, sizes, status strings; the types features share
      3. THE LIBRARY'S OWN MATH  expf, erff, tanhf (correctly rounded), fmaf (exact)
      4. BFLOAT16 AND FLOAT16    the weights' 16-bit types: widening (exact), rounding (RNE)
      5. ACTIVATIONS             scalar, FFN_FAST and vector forms; ffn_activation*
      6. EPILOGUE                the activation decided once per call, on finished tiles
      7. GEMM                    sum order, packing, kernel, tiles, threads, ffn_linear*
      8. LINEAR BACKWARD         ffn_linear_backward*
      9. BLOCKS                  ffn_mlp_forward, ffn_glu_forward, ffn_block*, ffn_gated*
     10. TRAINING THE BLOCKS     the forwards that save pre-activations (ffn_*_train); the
                                 backwards (ffn_mlp_backward, ffn_glu_backward, 1.x forms)
     11. OPTIMIZERS              ffn_sgd_step, ffn_adamw_step
     12. PATHS                   each ISA's instances and table; cpuid; ffn_*path*

*/
#ifndef FFN_H_INCLUDED
#define FFN_H_INCLUDED

#include <stddef.h>

#define FFN_VERSION_MAJOR 2
#define FFN_VERSION_MINOR 0
#define FFN_VERSION_PATCH 0
#define FFN_VERSION_STRING "2.0.0"

#ifndef FFNDEF
#ifdef FFN_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define FFNDEF static __attribute__((unused))   /* a file need not call every function */
#else
#define FFNDEF static
#endif
#else
#define FFNDEF extern
#endif
#endif
#if defined(FFN_WARN_DEPRECATED) && defined(__GNUC__)
#define FFN__DEPRECATED(use) __attribute__((deprecated("ffn.h 2.0: use " use)))
#else
#define FFN__DEPRECATED(use)
#endif

/* FFN_BASELINE_SIMD_NAME: the best path the compiler flags alone guarantee, i.e. the
   least this build runs on any CPU it can start on (a plain -O2 x86-64 build: "scalar").
   It is not the path calls run: with run-time dispatch (the default) they run the best
   path the CPU has, which ffn_path() names ("avx512" on an AVX-512 machine).
   FFN_SIMD_NAME is its old name (until 1.7), kept as an alias for one release more. */
#if defined(FFN_NO_SIMD)
#define FFN_BASELINE_SIMD_NAME "scalar"
#elif defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
#define FFN_BASELINE_SIMD_NAME "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
#define FFN_BASELINE_SIMD_NAME "avx2"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define FFN_BASELINE_SIMD_NAME "neon"
#else
#define FFN_BASELINE_SIMD_NAME "scalar"
#endif
#define FFN_SIMD_NAME FFN_BASELINE_SIMD_NAME

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses: 0 or negative. ffn.h's errors are -201..-299 and pe.h's -101..-199, so
   one handler can tell them apart; each header's status_string recognises the other's
   range. */
enum {
    FFN_OK            =    0,
    FFN_ERR_NULL      = -201,
    FFN_ERR_ZERO_SIZE = -202,
    FFN_ERR_OVERFLOW  = -203,
    FFN_ERR_SCRATCH   = -204,
    FFN_ERR_ALIAS     = -205,
    FFN_ERR_PATH      = -206,
    FFN_ERR_CPU       = -207,
    FFN_ERR_ARG       = -208,   /* act: not an activation this function takes */
    /* the optimizer steps' hyperparameters (until 1.7 all of them FFN_ERR_ARG) */
    FFN_ERR_LR           = -209,    /* lr < 0, NaN or infinite */
    FFN_ERR_MOMENTUM     = -210,    /* SGD: momentum < 0, NaN or infinite */
    FFN_ERR_DAMPENING    = -211,    /* SGD: dampening NaN or infinite */
    FFN_ERR_WEIGHT_DECAY = -212,    /* weight_decay < 0, NaN or infinite */
    FFN_ERR_NESTEROV     = -213,    /* SGD: nesterov with momentum 0 or dampening != 0 */
    FFN_ERR_BETA1        = -214,    /* AdamW: beta1 not in [0, 1) */
    FFN_ERR_BETA2        = -215,    /* AdamW: beta2 not in [0, 1) */
    FFN_ERR_EPS          = -216,    /* AdamW: eps < 0, NaN or infinite */
    FFN_ERR_STEP         = -217,    /* AdamW: step < 1 */
    FFN_ERR_THREADS      = -218,    /* ffn_set_parallel_for: n_threads not in 1..1024 */
    FFN_ERR_DTYPE        = -219,    /* a weight's dtype is not FFN_F32, FFN_BF16, FFN_F16 */
    FFN_ERR_LAYOUT       = -220     /* a weight's layout is unknown, or a stride is 0 */
};

/* Activations (the act argument; an int, so that any value can be checked). Unlike
   pe.h's enums, which start at 1 so that a zeroed or forgotten argument is an error
   (PE_ERR_ENUM), FFN_RELU is 0 and valid: an act left at 0 runs ReLU, silently. The
   values have been part of the API since ffn.h 1.0 (code and saved configurations hold
   them), so they stay; pass the names, never numbers. */
enum {
    FFN_RELU      = 0,  /* torch.relu(x) */
    FFN_GELU      = 1,  /* F.gelu(x), approximate='none' */
    FFN_GELU_TANH = 2,  /* F.gelu(x, approximate='tanh') */
    FFN_SILU      = 3,  /* F.silu(x) */
    FFN_SIGMOID   = 4,  /* torch.sigmoid(x) (nn.GLU's gate) */
    FFN_GPT_OSS   = 5,  /* ffn_gated* only: GPT-OSS's clamped SwiGLU (see ffn_gated) */
    FFN_FAST      = 16  /* flag, act | FFN_FAST: the vectorised formulas (FAST ACTIVATIONS) */
};

/* ---- weights: where a weight is and how it is stored (ffn.h 2.0) ----
   Element (o, k) of a weight is output feature o, input feature k. A zeroed
   ffn_weight but for data is float32 in nn.Linear's layout. */
enum {                  /* ffn_weight.dtype */
    FFN_F32  = 0,       /* float */
    FFN_BF16 = 1,       /* uint16_t: torch.bfloat16's bits, a float's top half */
    FFN_F16  = 2        /* uint16_t: IEEE binary16, torch.float16 */
};
enum {                  /* ffn_weight.layout */
    FFN_OUT_IN  = 0,    /* (out, in): nn.Linear.weight */
    FFN_IN_OUT  = 1,    /* (in, out): GPT-2's Conv1D.weight */
    FFN_STRIDED = 2,    /* (o, k) at data[o * stride_out + k * stride_in], strides >= 1:
                           GPT-OSS's fused gate_up (in, 2 out): gate (data, 2, 2 out),
                           up (data + 1 element, 2, 2 out) */
    FFN_PACKED  = 3     /* ffn_pack's layout, in dtype: the fastest to read */
};
typedef struct ffn_weight {
    const void *data;               /* the elements (float or uint16_t, as dtype) */
    int dtype;                      /* FFN_F32, FFN_BF16, FFN_F16 */
    int layout;                     /* FFN_OUT_IN, FFN_IN_OUT, FFN_STRIDED, FFN_PACKED */
    size_t stride_out, stride_in;   /* FFN_STRIDED only, in elements */
} ffn_weight;

/* A static English message for a status ("ok", "ffn: ..."); never NULL. */
FFNDEF const char *ffn_status_string(int status);

/* y is (rows, out_features); x (rows, in_features); weight (out_features, in_features);
   bias (out_features) or NULL.  torch: F.linear(x, weight, bias). */
FFNDEF int ffn_linear(float *y, const float *x, const float *weight, const float *bias,
                      size_t rows, size_t in_features, size_t out_features)
                      FFN__DEPRECATED("ffn_linear_w");

/* y, x are (n); y may equal x.  torch: torch.relu(x). */
FFNDEF int ffn_relu(float *y, const float *x, size_t n);

/* y, x are (n); y may equal x. act: FFN_RELU, FFN_GELU, FFN_GELU_TANH, FFN_SILU or
   FFN_SIGMOID, each optionally | FFN_FAST. torch: torch.relu(x), F.gelu(x),
   F.gelu(x, approximate='tanh'), F.silu(x), torch.sigmoid(x). */
FFNDEF int ffn_activation(float *y, const float *x, size_t n, int act);

/* How many floats of scratch ffn_block needs for this shape; 0 if a size is 0 or
   the count overflows. */
FFNDEF size_t ffn_block_scratch_floats(size_t rows, size_t d_model, size_t hidden);

/* y, x are (rows, d_model); w1 (hidden, d_model); b1 (hidden) or NULL;
   w2 (d_model, hidden); b2 (d_model) or NULL. y may equal x.
   torch: fc2(relu(fc1(x))) with fc1 = nn.Linear(d_model, hidden),
   fc2 = nn.Linear(hidden, d_model). */
FFNDEF int ffn_block(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats)
                     FFN__DEPRECATED("ffn_mlp_forward");

/* ffn_block with the activation act (as ffn_activation) in place of the ReLU:
   torch: fc2(act(fc1(x))). Same scratch as ffn_block. */
FFNDEF int ffn_block_act(float *y, const float *x, const float *w1, const float *b1,
                         const float *w2, const float *b2, size_t rows, size_t d_model,
                         size_t hidden, int act, float *scratch, size_t scratch_floats)
                         FFN__DEPRECATED("ffn_mlp_forward");

/* Floats needed to hold weight (out_features, in_features) packed:
   ceil(out_features / 16) * 16 * in_features; 0 if a size is 0 or it overflows. */
FFNDEF size_t ffn_pack_floats(size_t in_features, size_t out_features)
                              FFN__DEPRECATED("ffn_pack_bytes");

/* Packs weight (out_features, in_features), nn.Linear layout, into the layout above.
   packed_floats >= ffn_pack_floats(in_features, out_features). */
FFNDEF int ffn_pack_weight(float *packed, size_t packed_floats, const float *weight,
                           size_t in_features, size_t out_features) FFN__DEPRECATED("ffn_pack");

/* Packs a weight stored (in_features, out_features), the transpose of nn.Linear's: the
   layout of GPT-2's Conv1D.weight (y = x @ W + b; transformers' Conv1D). The same
   packed buffer as ffn_pack_weight of its transpose, so a GPT-2 state_dict needs no
   transpose pass. */
FFNDEF int ffn_pack_weight_in_out(float *packed, size_t packed_floats,
                                  const float *weight_in_out, size_t in_features,
                                  size_t out_features) FFN__DEPRECATED("ffn_pack");

/* Packs a weight whose element (o, k) (output feature o, input feature k) is
   weight[o * stride_out + k * stride_in], into the same layout: nn.Linear's is
   (stride_out, stride_in) = (in_features, 1), Conv1D's (1, out_features). For the
   interleaved projections of GPT-OSS (gate = columns 0, 2, 4.., up = 1, 3, 5.. of the
   fused gate_up weight, (in, 2 * out) as in transformers' GptOssExperts): the gate is
   (gate_up, stride 2, 2 * out) and the up (gate_up + 1, 2, 2 * out). Strides >= 1;
   weight spans (out - 1) * stride_out + (in - 1) * stride_in + 1 floats. */
FFNDEF int ffn_pack_weight_strided(float *packed, size_t packed_floats, const float *weight,
                                   size_t in_features, size_t out_features,
                                   size_t stride_out, size_t stride_in) FFN__DEPRECATED("ffn_pack");

/* ffn_linear with the weight packed by ffn_pack_weight(.., in_features, out_features);
   same result bits as ffn_linear. */
FFNDEF int ffn_linear_packed(float *y, const float *x, const float *packed,
                             const float *bias, size_t rows, size_t in_features,
                             size_t out_features) FFN__DEPRECATED("ffn_linear_w");

/* ffn_block with w1_packed = pack of w1 (in d_model, out hidden) and w2_packed = pack
   of w2 (in hidden, out d_model); same result bits as ffn_block. */
FFNDEF int ffn_block_packed(float *y, const float *x, const float *w1_packed,
                            const float *b1, const float *w2_packed, const float *b2,
                            size_t rows, size_t d_model, size_t hidden, float *scratch,
                            size_t scratch_floats) FFN__DEPRECATED("ffn_mlp_forward");

/* The gated block of Llama-style models: y (rows, d_model) =
   down(act(gate(x)) * up(x)), gate and up (hidden, d_model), down (d_model, hidden),
   each nn.Linear layout, biases b_* (or NULL). act: FFN_SILU (SwiGLU), FFN_GELU or
   FFN_GELU_TANH (GEGLU), FFN_SIGMOID (nn.GLU), FFN_RELU (ReGLU), each | FFN_FAST or
   not, or FFN_GPT_OSS: down((clamp(up, -7, 7) + 1) * glu(gate)) (see the top of the
   file). y may equal x. scratch: ffn_gated_scratch_floats(rows, d_model, hidden)
   floats. */
FFNDEF size_t ffn_gated_scratch_floats(size_t rows, size_t d_model, size_t hidden);
FFNDEF int ffn_gated(float *y, const float *x, const float *w_gate, const float *b_gate,
                     const float *w_up, const float *b_up, const float *w_down,
                     const float *b_down, size_t rows, size_t d_model, size_t hidden,
                     int act, float *scratch, size_t scratch_floats)
                     FFN__DEPRECATED("ffn_glu_forward");
/* ffn_gated with the three weights packed by ffn_pack_weight (gate and up as
   (in d_model, out hidden), down as (in hidden, out d_model)); the same bits. */
FFNDEF int ffn_gated_packed(float *y, const float *x, const float *w_gate_packed,
                            const float *b_gate, const float *w_up_packed, const float *b_up,
                            const float *w_down_packed, const float *b_down, size_t rows,
                            size_t d_model, size_t hidden, int act, float *scratch,
                            size_t scratch_floats) FFN__DEPRECATED("ffn_glu_forward");

/* ffn_block_act with packed weights, as ffn_block_packed. */
FFNDEF int ffn_block_act_packed(float *y, const float *x, const float *w1_packed,
                                const float *b1, const float *w2_packed, const float *b2,
                                size_t rows, size_t d_model, size_t hidden, int act,
                                float *scratch, size_t scratch_floats)
                                FFN__DEPRECATED("ffn_mlp_forward");

/* ---- any weight: float32, bfloat16 or float16, in any layout (ffn.h 2.0) ----
   A 16-bit weight is widened to float32 in registers, exactly, and summed in the same
   order: the result has the bits of the float32 calls on the widened weight, i.e.
   torch's F.linear(x, w.float(), b). Packed, it is half the bytes of float32, and a
   call that reads each weight once (few rows) runs up to twice as fast. */

/* The descriptor {data, dtype, layout} (FFN_OUT_IN, FFN_IN_OUT or FFN_PACKED). */
FFNDEF ffn_weight ffn_weight_of(const void *data, int dtype, int layout);

/* Bytes of a weight (out_features, in_features) packed in dtype: 4 bytes an element
   for FFN_F32, 2 for FFN_BF16 and FFN_F16, out_features rounded up to 16; 0 if a size
   is 0, dtype unknown, or it overflows. */
FFNDEF size_t ffn_pack_bytes(size_t in_features, size_t out_features, int dtype);

/* Packs w (any layout but FFN_PACKED, any dtype) into packed, elements of dtype:
   packed_bytes >= ffn_pack_bytes(in_features, out_features, dtype). Same dtype: the
   same bits. Else the value, widened exactly or rounded to nearest even (float32 to
   bfloat16 is torch's w.to(torch.bfloat16), to float16 w.half(); NaN stays NaN). Read
   it as ffn_weight_of(packed, dtype, FFN_PACKED). */
FFNDEF int ffn_pack(void *packed, size_t packed_bytes, int dtype, const ffn_weight *w,
                    size_t in_features, size_t out_features);

/* ffn_linear with any weight. torch: F.linear(x, w.float(), bias). */
FFNDEF int ffn_linear_w(float *y, const float *x, const ffn_weight *w, const float *bias,
                        size_t rows, size_t in_features, size_t out_features);

/* The blocks' parameters: ffn_block_act's (fc1 (hidden, d_model), fc2 (d_model,
   hidden)) and ffn_gated's (gate, up (hidden, d_model), down (d_model, hidden)); each
   weight its own dtype and layout; biases NULL or float32; act as those functions. */
typedef struct ffn_mlp {
    ffn_weight fc1, fc2;
    const float *b1, *b2;
    size_t d_model, hidden;
    int act;
} ffn_mlp;
typedef struct ffn_glu {
    ffn_weight gate, up, down;
    const float *b_gate, *b_up, *b_down;
    size_t d_model, hidden;
    int act;
} ffn_glu;

/* y, x (rows, d_model); y may equal x. torch: fc2(act(fc1(x))) and
   down(act(gate(x)) * up(x)), with the weights widened to float32. Scratch:
   ffn_block_scratch_floats(rows, d_model, hidden) and ffn_gated_scratch_floats. */
FFNDEF int ffn_mlp_forward(float *y, const float *x, size_t rows, const ffn_mlp *mlp,
                           float *scratch, size_t scratch_floats);
FFNDEF int ffn_glu_forward(float *y, const float *x, size_t rows, const ffn_glu *glu,
                           float *scratch, size_t scratch_floats);

/* ---- training: backward passes (gradients as autograd gives them) ---- */

/* How many floats of scratch ffn_linear_backward needs; 0 if a size is 0 or the count
   overflows. */
FFNDEF size_t ffn_linear_backward_scratch_floats(size_t rows, size_t in_features,
                                                 size_t out_features);

/* The backward of ffn_linear (y = x W^T + b) for dy (rows, out_features):
      dx (rows, in)  = dy @ W            written       x.grad
      dw (out, in)  += dy^T @ x          accumulated   W.grad
      db (out)      += dy.sum(0)         accumulated   b.grad
   Any of dx, dw, db may be NULL (not computed); x is needed for dw, w for dx. dw and db
   are added to (as autograd accumulates into .grad: zero them for a fresh gradient).
   dx's and dw's sums run in the Linear's order (NUMERICAL CONTRACT) over their own K:
   out for dx, rows for dw, with dw's old value as the bias. db is torch's sum over the
   rows, in torch's (cascade) order, added onto db's old value: from the same dy, the
   bits of torch's b.grad. */
FFNDEF int ffn_linear_backward(float *dx, float *dw, float *db, const float *dy,
                               const float *x, const float *w, size_t rows,
                               size_t in_features, size_t out_features, float *scratch,
                               size_t scratch_floats) FFN__DEPRECATED("ffn_linear_backward_w");

/* The backward of ffn_activation: dx (n) = dy * act'(x), x the activation's input (the
   pre-activation), dy the upstream gradient; dx may equal dy or x. act as in
   ffn_activation (FFN_FAST changes nothing here: the derivative of the exact function,
   through the header's correctly rounded erff, tanhf, expf). torch: x.grad after
   act(x).backward(dy); ReLU as torch's threshold_backward: 0 where relu(x) <= 0 (x <= 0,
   -0.0), dy elsewhere (NaN x too). */
FFNDEF int ffn_activation_backward(float *dx, const float *dy, const float *x, size_t n,
                                   int act);

/* ---- training the blocks: forwards that save the pre-activations, and backwards ---- */

/* ffn_block_act that also saves fc1's output before the activation, the tensor autograd
   keeps for the activation's backward: h (rows, hidden) = x @ w1^T + b1 (the bits of
   ffn_linear), and y as ffn_block_act gives it, bit for bit. y may equal x; h must not
   overlap anything. scratch: ffn_block_scratch_floats(rows, d_model, hidden) floats.
   torch: h = fc1(x); y = fc2(act(h)). */
FFNDEF int ffn_block_act_train(float *y, float *h, const float *x, const float *w1,
                               const float *b1, const float *w2, const float *b2,
                               size_t rows, size_t d_model, size_t hidden, int act,
                               float *scratch, size_t scratch_floats)
                               FFN__DEPRECATED("ffn_mlp_train");
/* The same with the weights packed as for ffn_block_act_packed; the same bits. */
FFNDEF int ffn_block_act_train_packed(float *y, float *h, const float *x,
                                      const float *w1_packed, const float *b1,
                                      const float *w2_packed, const float *b2, size_t rows,
                                      size_t d_model, size_t hidden, int act, float *scratch,
                                      size_t scratch_floats) FFN__DEPRECATED("ffn_mlp_train");

/* How many floats of scratch ffn_block_act_backward needs; 0 if a size is 0 or the
   count overflows. */
FFNDEF size_t ffn_block_backward_scratch_floats(size_t rows, size_t d_model, size_t hidden);

/* The backward of y = fc2(act(fc1(x))) for dy (rows, d_model), from x, the saved
   h = fc1(x) (ffn_block_act_train) and the weights w1 (hidden, d_model), w2 (d_model,
   hidden), as autograd computes it:
      a = act(h)                      (the forward's act, FFN_FAST forms included)
      dw2 (d_model, hidden) += dy^T @ a,  db2 (d_model) += dy.sum(0)
      da = dy @ w2,  dh = da * act'(h)     (act' as ffn_activation_backward)
      dw1 (hidden, d_model) += dh^T @ x,  db1 (hidden) += dh.sum(0)
      dx (rows, d_model) = dh @ w1        (written)
   torch: x.grad, fc1.weight.grad, fc1.bias.grad, fc2.weight.grad, fc2.bias.grad after
   fc2(act(fc1(x))).backward(dy) (the .grad accumulated into, as autograd does). Any of
   dx, dw1, db1, dw2, db2 may be NULL (not computed), not all five; dy, x, h, w1, w2 and
   the scratch are required. The bits of
   ffn_activation -> ffn_linear_backward (fc2) -> ffn_activation_backward ->
   ffn_linear_backward (fc1). No output may overlap anything. */
FFNDEF int ffn_block_act_backward(float *dx, float *dw1, float *db1, float *dw2, float *db2,
                                  const float *dy, const float *x, const float *h,
                                  const float *w1, const float *w2, size_t rows,
                                  size_t d_model, size_t hidden, int act, float *scratch,
                                  size_t scratch_floats) FFN__DEPRECATED("ffn_mlp_backward");

/* ffn_gated that also saves the gate's and the up's outputs: gate_h, up_h (rows, hidden)
   = x @ w_gate^T + b_gate, x @ w_up^T + b_up (the bits of ffn_linear), and y as ffn_gated
   gives it. act as ffn_gated's but FFN_GPT_OSS (FFN_ERR_ARG: no backward for it). y may
   equal x; gate_h and up_h must not overlap anything. scratch:
   ffn_gated_train_scratch_floats(rows, d_model, hidden) floats (act(gate) * up; half
   of ffn_gated's, which keeps gate and up in its scratch where this writes gate_h and
   up_h; the same count as ffn_block_scratch_floats, which until 1.7 was the one named).
   torch: g = gate_proj(x); u = up_proj(x); y = down_proj(act(g) * u). */
FFNDEF size_t ffn_gated_train_scratch_floats(size_t rows, size_t d_model, size_t hidden);
FFNDEF int ffn_gated_train(float *y, float *gate_h, float *up_h, const float *x,
                           const float *w_gate, const float *b_gate, const float *w_up,
                           const float *b_up, const float *w_down, const float *b_down,
                           size_t rows, size_t d_model, size_t hidden, int act,
                           float *scratch, size_t scratch_floats) FFN__DEPRECATED("ffn_glu_train");
/* The same with the weights packed as for ffn_gated_packed; the same bits. */
FFNDEF int ffn_gated_train_packed(float *y, float *gate_h, float *up_h, const float *x,
                                  const float *w_gate_packed, const float *b_gate,
                                  const float *w_up_packed, const float *b_up,
                                  const float *w_down_packed, const float *b_down,
                                  size_t rows, size_t d_model, size_t hidden, int act,
                                  float *scratch, size_t scratch_floats)
                                  FFN__DEPRECATED("ffn_glu_train");

/* How many floats of scratch ffn_gated_backward needs; 0 if a size is 0 or the count
   overflows. */
FFNDEF size_t ffn_gated_backward_scratch_floats(size_t rows, size_t d_model, size_t hidden);

/* The backward of y = down(act(gate(x)) * up(x)) for dy (rows, d_model), from x, the
   saved gate_h = gate(x), up_h = up(x) (ffn_gated_train) and the weights (nn.Linear
   layout), as autograd computes it:
      a = act(gate_h),  p = a * up_h
      dw_down (d_model, hidden) += dy^T @ p,  db_down += dy.sum(0),  dp = dy @ w_down
      du = dp * a,  dg = (dp * up_h) * act'(gate_h)
      dw_gate += dg^T @ x,  db_gate += dg.sum(0),  dw_up += du^T @ x,  db_up += du.sum(0)
      dx = dg @ w_gate + du @ w_up        (written; the two products, then their sum)
   torch: x.grad and each projection's weight.grad / bias.grad after
   down_proj(act(gate_proj(x)) * up_proj(x)).backward(dy). act: FFN_RELU .. FFN_SIGMOID
   (| FFN_FAST); FFN_GPT_OSS is FFN_ERR_ARG. Any of the seven outputs may be NULL, not
   all; every input and the scratch are required. No output may overlap anything. */
FFNDEF int ffn_gated_backward(float *dx, float *dw_gate, float *db_gate, float *dw_up,
                              float *db_up, float *dw_down, float *db_down, const float *dy,
                              const float *x, const float *gate_h, const float *up_h,
                              const float *w_gate, const float *w_up, const float *w_down,
                              size_t rows, size_t d_model, size_t hidden, int act,
                              float *scratch, size_t scratch_floats)
                              FFN__DEPRECATED("ffn_glu_backward");

/* ---- training with any weight (ffn.h 2.0) ----
   The calls above with ffn_weight descriptors and the ffn_mlp / ffn_glu parameters: the
   same bits as the float32 calls on the widened weights, whatever the weights' dtype and
   layout. The gradients are float32, dw in nn.Linear's (out, in) layout whatever the
   weight's (the gradient of the widened weight: torch's w.float() as a leaf). A backward
   reads a weight only through its transpose (dx = dy @ W): a packed weight there is
   FFN_ERR_LAYOUT (keep the unpacked one for training; pack for inference). Scratch:
   the 1.x queries (ffn_linear_backward_scratch_floats, ffn_block_scratch_floats,
   ffn_gated_train_scratch_floats, ffn_block_backward_scratch_floats,
   ffn_gated_backward_scratch_floats). */

/* ffn_linear_backward with any unpacked weight (read only for dx). */
FFNDEF int ffn_linear_backward_w(float *dx, float *dw, float *db, const float *dy,
                                 const float *x, const ffn_weight *w, size_t rows,
                                 size_t in_features, size_t out_features, float *scratch,
                                 size_t scratch_floats);

/* ffn_block_act_train and ffn_gated_train (any weights, packed included). */
FFNDEF int ffn_mlp_train(float *y, float *h, const float *x, size_t rows, const ffn_mlp *mlp,
                         float *scratch, size_t scratch_floats);
FFNDEF int ffn_glu_train(float *y, float *gate_h, float *up_h, const float *x, size_t rows,
                         const ffn_glu *glu, float *scratch, size_t scratch_floats);

/* The gradients a backward writes (dx) or adds to (the rest); NULL: not computed. */
typedef struct ffn_mlp_grads {
    float *dx, *dw1, *db1, *dw2, *db2;
} ffn_mlp_grads;
typedef struct ffn_glu_grads {
    float *dx, *dw_gate, *db_gate, *dw_up, *db_up, *dw_down, *db_down;
} ffn_glu_grads;

/* ffn_block_act_backward and ffn_gated_backward (the biases in mlp / glu are not read). */
FFNDEF int ffn_mlp_backward(const ffn_mlp_grads *grads, const float *dy, const float *x,
                            const float *h, size_t rows, const ffn_mlp *mlp, float *scratch,
                            size_t scratch_floats);
FFNDEF int ffn_glu_backward(const ffn_glu_grads *grads, const float *dy, const float *x,
                            const float *gate_h, const float *up_h, size_t rows,
                            const ffn_glu *glu, float *scratch, size_t scratch_floats);

/* ---- optimizer steps (torch.optim, float32 tensors, one step on n parameters) ---- */

/* torch.optim.SGD(lr, momentum, dampening, weight_decay, nesterov).step():
      g = grad + weight_decay * param
      momentum != 0:  buf = first_step ? g : momentum * buf + (1 - dampening) * g
                      g = nesterov ? g + momentum * buf : buf
      param = param - lr * g
   momentum_buf (n) is only used when momentum != 0 (may then not be NULL). */
FFNDEF int ffn_sgd_step(float *param, float *momentum_buf, const float *grad, size_t n,
                        float lr, float momentum, float dampening, float weight_decay,
                        int nesterov, int first_step);

/* torch.optim.AdamW(lr, (beta1, beta2), eps, weight_decay).step() at step t (1, 2, ..;
   the optimizer's state['step'] after its increment), amsgrad off:
      param = param * (1 - lr * weight_decay)
      m = m + (1 - beta1) * (grad - m)
      v = v * beta2 + (1 - beta2) * grad * grad
      param = param - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
   the scalars in double, as Python computes them, then used as floats; every float step
   rounded once, in the order written, never fused. m and v start at zero (torch's
   zeros_like state). The bits follow torch 2.x's single-tensor AdamW: m is
   exp_avg.lerp_(grad, 1 - beta1) in its scalar kernel's form for a weight below 1/2,
   m + w (grad - m); v is exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2),
   ((1 - beta2) grad) grad added to v beta2; the update param.addcdiv_(m, denom,
   value=-step_size) with denom = sqrt(v) / sqrt(1 - beta2^t) + eps. torch 1.13, which made
   the project's goldens (torch 1.13.1, AVX2 dispatch), computes m as
   exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1), i.e. m beta1 rounded, then one fused
   multiply-add of (1 - beta1) grad onto it (all 1542 m values of the opt_adamw goldens
   match that), from which this m differs in the last bits (464 of those 1542 values): the
   tests compare with torch within a few roundings (tests/test_golden.c, run_opt_step). */
FFNDEF int ffn_adamw_step(float *param, float *m, float *v, const float *grad, size_t n,
                          float lr, float beta1, float beta2, float eps, float weight_decay,
                          long step);

/* The path calls run now ("avx512", "avx2", "neon" or "scalar"); picks the best one
   on first use. */
FFNDEF const char *ffn_path(void);

/* Runs the named path from now on; NULL or "auto" picks the best again. FFN_OK,
   FFN_ERR_PATH (not in this build) or FFN_ERR_CPU (this CPU or OS lacks it). */
FFNDEF int ffn_set_path(const char *name);

/* Path i of this architecture, best first, whether or not this build or CPU has it;
   NULL for i past the last. */
FFNDEF const char *ffn_path_name(int i);

/* Threads from the caller's pool (see MEMORY, THREADS): fn(pool, n_tasks, task, arg)
   must call task(arg, i) once for every i in [0, n_tasks), on any of its threads, in
   any order, and return when all have returned. ffn.h calls it from the thread that
   made the call, with 2 <= n_tasks <= n_threads, once per phase of a call. fn NULL:
   no pool (OpenMP's threads where the build has them, else the calling thread).
   FFN_OK, or FFN_ERR_THREADS if fn is set and n_threads is not in 1..1024 (the
   setting in force then stays). */
typedef void (*ffn_task_fn)(void *arg, int i);
typedef void (*ffn_parallel_for_fn)(void *pool, int n_tasks, ffn_task_fn task, void *arg);
FFNDEF int ffn_set_parallel_for(ffn_parallel_for_fn fn, void *pool, int n_threads);

#ifdef __cplusplus
}
#endif
#endif /* FFN_H_INCLUDED */

/* ======================================================================== */
#ifdef FFN_IMPLEMENTATION
#ifndef FFN_IMPLEMENTATION_DONE
#define FFN_IMPLEMENTATION_DONE

/* ==== 1. CONFIGURATION ================================================================ */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef FFN_ASSERT
#include <assert.h>
#define FFN_ASSERT(x) assert(x)
#endif

#if defined(__cplusplus)
#define FFN__RESTRICT __restrict
#else
#define FFN__RESTRICT restrict
#endif

/* ---- which paths this build compiles ----------------------------------
   FFN__HAS_<path>: the path's kernels are compiled. FFN__FLAGS_<path>: the compiler
   flags guarantee that the CPU runs it. FFN__DISPATCH: x86 kernels are compiled
   whatever the flags (target attributes; MSVC needs none) and chosen by cpuid. */
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define FFN__ARCH_X86 1
#endif
#if defined(FFN__ARCH_X86) && !defined(FFN_NO_SIMD)
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define FFN__FLAGS_AVX2 1
#if defined(__AVX512F__) && !defined(FFN_NO_AVX512)
#define FFN__FLAGS_AVX512 1
#endif
#endif
#if !defined(FFN_NO_RUNTIME_DISPATCH) && !defined(FFN__FLAGS_AVX512) &&                  \
    (defined(__clang__) || defined(_MSC_VER) ||                                          \
     (defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 9))))
#define FFN__DISPATCH 1
#endif
#if defined(FFN__DISPATCH) || defined(FFN__FLAGS_AVX2)
#define FFN__HAS_AVX2 1
#endif
#if (defined(FFN__DISPATCH) || defined(FFN__FLAGS_AVX512)) && !defined(FFN_NO_AVX512)
#define FFN__HAS_AVX512 1
#endif
#elif !defined(FFN_NO_SIMD) && defined(__aarch64__) && defined(__ARM_NEON)
#define FFN__HAS_NEON 1
#endif

/* A function compiled for more than the flags give (gcc and clang). */
#if defined(FFN__DISPATCH) && (defined(__GNUC__) || defined(__clang__))
#define FFN__TARGET(isa) __attribute__((target(isa)))
#else
#define FFN__TARGET(isa)
#endif
#ifdef FFN__FLAGS_AVX2
#define FFN__TARGET_AVX2
#else
#define FFN__TARGET_AVX2 FFN__TARGET("avx2,fma,f16c")
#endif
#define FFN__TARGET_AVX512 FFN__TARGET("avx512f,avx2,fma,f16c")
/* (for the small helpers of hot loops: gcc -O2 calls them out of line otherwise) */
#if defined(_MSC_VER) && !defined(__cplusplus)
#define FFN__INLINE __inline
#else
#define FFN__INLINE inline
#endif
#if defined(_MSC_VER)
#define FFN__NOINLINE __declspec(noinline)
#elif defined(__GNUC__) || defined(__clang__)
#define FFN__NOINLINE __attribute__((noinline))
#else
#define FFN__NOINLINE
#endif

#if defined(FFN__HAS_AVX2) || defined(FFN__HAS_AVX512)
#include <immintrin.h>
#endif
#if defined(FFN__HAS_NEON)
#include <arm_neon.h>
#endif

/* ==== 2. COMMON ======================================================================= */

/* Panel width of the packed layout: 16 output features (one 64-byte row per k). */
#define FFN__NR 16

/* ---- argument checks -------------------------------------------------- */

/* *n = a * b * sizeof(float) in bytes; 0 when it does not fit in size_t. */
static int ffn__bytes(size_t *n, size_t a, size_t b)
{
    const size_t max = (size_t)-1;
    if (a > max / b || a * b > max / sizeof(float)) return 0;
    *n = a * b * sizeof(float);
    return 1;
}

/* Byte ranges share a byte; a NULL range (an absent bias) overlaps nothing. Compared
   as integers: relational operators on pointers into different objects are undefined. */
static int ffn__overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    return a && b && ua < ub + bn && ub < ua + an;
}

FFNDEF const char *ffn_status_string(int status)
{
    switch (status) {
    case FFN_OK:            return "ok";
    case FFN_ERR_NULL:      return "ffn: a required pointer argument is NULL";
    case FFN_ERR_ZERO_SIZE: return "ffn: a size argument is zero";
    case FFN_ERR_OVERFLOW:  return "ffn: a buffer size overflows size_t";
    case FFN_ERR_SCRATCH:   return "ffn: the scratch (or packed weight) buffer is too small";
    case FFN_ERR_ALIAS:     return "ffn: an output buffer overlaps an input buffer";
    case FFN_ERR_PATH:      return "ffn: no such path in this build";
    case FFN_ERR_CPU:       return "ffn: this CPU (or its OS) cannot run that path";
    case FFN_ERR_ARG:       return "ffn: act is not an activation this function takes";
    case FFN_ERR_LR:        return "ffn: lr is negative, NaN or infinite";
    case FFN_ERR_MOMENTUM:  return "ffn: momentum is negative, NaN or infinite";
    case FFN_ERR_DAMPENING: return "ffn: dampening is NaN or infinite";
    case FFN_ERR_WEIGHT_DECAY: return "ffn: weight_decay is negative, NaN or infinite";
    case FFN_ERR_NESTEROV:  return "ffn: nesterov needs momentum > 0 and dampening 0";
    case FFN_ERR_BETA1:     return "ffn: beta1 is not in [0, 1)";
    case FFN_ERR_BETA2:     return "ffn: beta2 is not in [0, 1)";
    case FFN_ERR_EPS:       return "ffn: eps is negative, NaN or infinite";
    case FFN_ERR_STEP:      return "ffn: step is less than 1";
    case FFN_ERR_THREADS:   return "ffn: n_threads is not in 1..1024";
    case FFN_ERR_DTYPE:     return "ffn: a weight's dtype is not FFN_F32, FFN_BF16 or FFN_F16";
    case FFN_ERR_LAYOUT:
        return "ffn: a weight's layout is not FFN_OUT_IN .. FFN_PACKED, or a stride is 0";
    default:
        return status <= -101 && status >= -199 ? "ffn: unknown status (a pe.h status?)"
                                                : "ffn: unknown status";
    }
}

/* Floats of a weight packed in float32 (ffn_pack_floats; the 1.x bodies the library calls
   are private: FFN_WARN_DEPRECATED warns at a user's calls of the public names only). */
static size_t ffn__pack_floats(size_t in_features, size_t out_features)
{
    size_t bytes, panels;
    if (!in_features || !out_features) return 0;
    panels = out_features / FFN__NR + (out_features % FFN__NR != 0);
    if (panels > (size_t)-1 / FFN__NR || !ffn__bytes(&bytes, panels * FFN__NR, in_features))
        return 0;
    return panels * FFN__NR * in_features;
}

/* Sizes of a Linear's buffers in bytes, or FFN_ERR_ZERO_SIZE / FFN_ERR_OVERFLOW.
   packed: the weight is in the packed layout (its padded size counts). */
typedef struct { size_t x, y, w, b; } ffn__linear_bytes;

static int ffn__linear_sizes(ffn__linear_bytes *n, size_t rows, size_t in, size_t out,
                             int packed)
{
    if (!rows || !in || !out) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&n->x, rows, in) || !ffn__bytes(&n->y, rows, out) ||
        !ffn__bytes(&n->w, out, in))
        return FFN_ERR_OVERFLOW;
    if (packed) {
        size_t floats = ffn__pack_floats(in, out);
        if (!floats) return FFN_ERR_OVERFLOW;
        n->w = floats * sizeof(float);
    }
    n->b = out * sizeof(float);
    return FFN_OK;
}

static int ffn__linear_check(const float *y, const float *x, const float *w,
                             const float *b, size_t rows, size_t in, size_t out,
                             int packed)
{
    ffn__linear_bytes n;
    int st;
    if (!y || !x || !w) return FFN_ERR_NULL;
    st = ffn__linear_sizes(&n, rows, in, out, packed);
    if (st) return st;
    if (ffn__overlap(y, n.y, x, n.x) || ffn__overlap(y, n.y, w, n.w) ||
        ffn__overlap(y, n.y, b, n.b))
        return FFN_ERR_ALIAS;
    return FFN_OK;
}

/* FFN__NAME(FFN__ISA, _tile): a template's name on the path being instantiated (the
   arguments expanded before they are pasted) */
#define FFN__PASTE(a, b) a##b
#define FFN__NAME(a, b) FFN__PASTE(a, b)

/* The functions an epilogue applies to a row of a finished tile (or ffn_activation to its
   input): each path's table (ffn__isa's fn) holds one row function per value, in this
   order. The public act values (FFN_RELU.., | FFN_FAST) are decoded into these once per
   call (ffn__epi_of); GPT-OSS is two of them, one per projection. */
enum ffn__fn {
    FFN__F_RELU, FFN__F_GELU, FFN__F_GELU_TANH, FFN__F_SILU, FFN__F_SIGMOID, FFN__F_OSS_GLU,
    FFN__F_OSS_UP, FFN__F_GELU_FAST, FFN__F_GELU_TANH_FAST, FFN__F_SILU_FAST,
    FFN__F_SIGMOID_FAST, FFN__F_OSS_GLU_FAST, FFN__NF
};
typedef void (*ffn__row_fn)(float *y, const float *x, size_t n);   /* y = f(x); y may be x */

/* What a GEMM does to its finished tile, decided once per call (ffn__epi_of). */
typedef struct {
    int relu;               /* max(0, .) in the kernel's store */
    ffn__row_fn act;        /* then act on each row of the tile; NULL: none */
    const float *mul;       /* then times mul (rows, out), the gated block's gate; NULL: none */
} ffn__epi;

/* Where an epilogue runs (ffn__epi_of): FFN__E_ROWS, on its own (ffn_activation, the
   training forwards: ReLU a row function too); FFN__E_HIDDEN, a block's hidden layer (fc1,
   the gate: ReLU in the kernel's store, GPT-OSS its gate half); FFN__E_UP, the gated
   block's up layer (times mul, the gate's layer; GPT-OSS's up half first). */
enum { FFN__E_ROWS, FFN__E_HIDDEN, FFN__E_UP };

/* One microkernel call: c (m x 16np, row stride ldc) =
   cin (m x 16np, row stride ldcin; 0 repeats one row, the bias) + x (m x kc, row
   stride ldx) @ w, where panel q's kc x 16 slice starts at w + q * wstride, summed in
   blocks of kb steps and superblocks of ks (the order of ffn__dot; the call starts at
   a superblock's first step). */
typedef struct {
    size_t kc, kb, ks;
    const float *x; size_t ldx;
    const void *w; size_t wstride;     /* (elements of the kernel's weight type) */
    const float *cin; size_t ldcin;
    float *c; size_t ldc;
    int relu;
    int stream;     /* w streams from memory (a packed weight at one row): FFN__XPREF */
} ffn__kargs;
/* Runs the microkernel of an m x 16np tile (a switch over the path's tile shapes). */
typedef void (*ffn__kernel_fn)(int m, int np, const ffn__kargs *a);

/* A path: NULL tile is the scalar path. need: the FFN__CPU_* bits it runs on. */
typedef struct ffn__isa {
    const char *name;
    unsigned need;
    int mr;                     /* main tile height */
    const unsigned char *np;    /* np[m]: most panels in a tile of m rows */
    ffn__kernel_fn kernel[3];   /* the microkernels of m x 16np tiles, by weight type */
    void (*pack)(float *dst, const float *w, size_t in, size_t out, size_t p, size_t np,
                 size_t pc, size_t kb);
    /* a tb x tb block transposed: dst[t * ldd + j] = src[j * lds + t] (NULL: none) */
    void (*tblock)(float *dst, size_t ldd, const float *src, size_t lds);
    int tb;
    /* dst[i] = src[i] widened (wt FFN_BF16 or FFN_F16; n a multiple of 16; NULL: no tiles) */
    void (*widen)(float *dst, const uint16_t *src, int wt, size_t n);
    ffn__row_fn fn[FFN__NF];    /* enum ffn__fn's row functions on this path */
} ffn__isa;

#define FFN__NB 4       /* panels per column block: the widest tile (1 x 64) */
#define FFN__MR_MAX 8   /* the tallest tile of any path (FFN__EACH's rows) */

/* (defined with the paths, at the end, and with the epilogue) */
static const ffn__isa *ffn__current(void);
static ffn__epi ffn__epi_of(const ffn__isa *isa, int act, int where, const float *mul);

/* ==== 3. THE LIBRARY'S OWN MATH ======================================================= */

/* ---- the library's own math: expf, erff, tanhf (correctly rounded), fmaf (exact) ----
   The activations' bits must not depend on the C library (libms differ from each other and
   between releases, see the top of the file), so these are the header's own, and each
   returns the correctly rounded (round to nearest, ties to even) value for every float
   input: the one result every correct implementation agrees on. tools/exhaustive.c checks
   all 2^32 inputs against MPFR (`make exhaustive`).

   Method (CORE-MATH's): a double evaluation d with a proven relative error bound e
   (|d - f(x)| <= e |f(x)|); if both ends of [d - e' |d|, d + e' |d|] round to the same
   float (e' = e (1 + 2^-4) also covers 1 / (1 - e) and the rounding of the two ends), that
   float is f(x) correctly rounded. Otherwise (about 2^25 e of the inputs: a few hundred of
   2^32) f(x) lies too close to a midpoint between two floats, and a double-double
   evaluation (error below 2^-80) decides, rounded to odd in double and then once to float
   (53 bits >= 24 + 2, so that single rounding is correct, subnormal results included).
   The bounds hold whether or not the compiler contracts a * b + c into a fused multiply-add
   (one rounding where the analysis counts two), and with more precision than double
   (FLT_EVAL_METHOD 2): each bound counts every operation's rounding as one of u = 2^-53
   relative, and a margin of 6x or more covers the rest. (The double-double slow paths and
   the software fmaf need each double operation rounded once: FLT_EVAL_METHOD 0 or 1.) In the
   double-double primitives every product whose rounding matters goes through a volatile
   (a contracting compiler could otherwise fuse it into the next addition, which would make
   the error term inconsistent with the rounded product); the other products there are
   exact (Veltkamp halves) or approximations whose fusion only helps. The tables are
   Taylor coefficients from 300-bit values (tools/gen_ffn_math.py), each rounded once. */
typedef struct { double hi, lo; } ffn__dd;
static float ffn__f32(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static uint32_t ffn__u32(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
static uint64_t ffn__u64(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
static double ffn__f64(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }
static double ffn__pow2(int k) { return ffn__f64((uint64_t)(k + 1023) << 52); } /* |k| < 1023 */
static ffn__dd ffn__dd2(double hi, double lo) { ffn__dd r; r.hi = hi; r.lo = lo; return r; }

/* s + e = a + b exactly, s = a + b rounded (additions only: nothing to contract). */
static FFN__INLINE ffn__dd ffn__two_sum(double a, double b)
{
    const double s = a + b, bb = s - a;
    return ffn__dd2(s, (a - (s - bb)) + (b - bb));
}
/* The same where |a| >= |b| (or a = 0). */
static ffn__dd ffn__fast_two_sum(double a, double b)
{
    const double s = a + b;
    return ffn__dd2(s, b - (s - a));
}
/* a = *hi + *lo, 26 bits each (Veltkamp): their products are exact. */
static void ffn__split(double a, double *hi, double *lo)
{
    volatile double tv = 134217729.0 * a;     /* 2^27 + 1 */
    const double t = tv;
    *hi = t - (t - a);
    *lo = a - *hi;
}
/* p + e = a b exactly, p = a b rounded (Dekker). */
static ffn__dd ffn__two_prod(double a, double b)
{
    volatile double pv = a * b;
    const double p = pv;
    double ah, al, bh, bl;
    ffn__split(a, &ah, &al);
    ffn__split(b, &bh, &bl);
    return ffn__dd2(p, (((ah * bh - p) + ah * bl) + al * bh) + al * bl);
}
static ffn__dd ffn__dd_add(ffn__dd a, ffn__dd b)
{
    const ffn__dd s = ffn__two_sum(a.hi, b.hi), t = ffn__two_sum(a.lo, b.lo);
    const ffn__dd r = ffn__fast_two_sum(s.hi, s.lo + t.hi);
    return ffn__fast_two_sum(r.hi, r.lo + t.lo);
}
static ffn__dd ffn__dd_neg(ffn__dd a) { return ffn__dd2(-a.hi, -a.lo); }
static ffn__dd ffn__dd_mul(ffn__dd a, ffn__dd b)
{
    const ffn__dd p = ffn__two_prod(a.hi, b.hi);
    return ffn__fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
static ffn__dd ffn__dd_div_d(ffn__dd a, double d)
{
    const double q1 = a.hi / d;
    const ffn__dd p = ffn__two_prod(q1, d);
    return ffn__fast_two_sum(q1, (((a.hi - p.hi) - p.lo) + a.lo) / d);
}
static ffn__dd ffn__dd_div(ffn__dd a, ffn__dd b)
{
    const double q1 = a.hi / b.hi;
    ffn__dd r = ffn__dd_add(a, ffn__dd_neg(ffn__dd_mul(b, ffn__dd2(q1, 0.0))));
    const double q2 = r.hi / b.hi;
    r = ffn__dd_add(r, ffn__dd_neg(ffn__dd_mul(b, ffn__dd2(q2, 0.0))));
    return ffn__dd_add(ffn__fast_two_sum(q1, q2), ffn__dd2(r.hi / b.hi, 0.0));
}
/* hi + lo (hi = hi + lo rounded) rounded once to float: hi rounded to odd (moved one ulp
   toward lo where lo != 0 and hi's last bit is 0), then converted. */
static FFN__INLINE float ffn__dd_to_float(double hi, double lo)
{
    uint64_t u = ffn__u64(hi);
    if ((lo < 0.0 || lo > 0.0) && !(u & 1u)) {      /* (u even: u - 1 does not wrap) */
        if ((lo > 0.0) == (hi > 0.0)) u += 1u;
        else u -= 1u;
    }
    return (float)ffn__f64(u);
}
/* *y = d rounded to float, if that is f(x) rounded, d within e |f(x)| (see above). Where
   the float is normal (|d| in [2^-125, 2^127)), on d's bits: with d in [2^E, 2^(E+1)),
   f(x) is within e' |d| < e' 2^53 ulp(d) <= K ulp(d) of d, K = e' 2^53 + 1 (e' as above),
   and the midpoints between floats are where d's 29 bits below float precision are
   1 followed by 28 zeros; if those bits are more than K from that pattern, no midpoint
   lies between d and f(x) (nor does one of the binade below, 2^(E-25) under 2^E), and
   both round to the same float. (Cheaper than the two conversions; the same decision up
   to K's rounding.) Elsewhere (subnormal results, overflow) on the two ends' floats. */
static FFN__INLINE int ffn__rounds(double d, double e, float *y)
{
    const uint64_t u = ffn__u64(d), ea = u >> 52 & 0x7ffu;
    if (ea > 1023u - 126u && ea < 1023u + 127u) {
        const uint64_t k = (uint64_t)(e * 9007199254740992.0) + 1u;    /* e 2^53 + 1 */
        *y = (float)d;
        const uint64_t b = u & 0x1fffffffu;                         /* |bits - 2^28| > k */
        return b > 0x10000000u ? b - 0x10000000u > k : 0x10000000u - b > k;
    } else {
        const double m = (d < 0.0 ? -d : d) * e;
        const float lo = (float)(d - m), hi = (float)(d + m);
        *y = lo;
        return ffn__u32(lo) == ffn__u32(hi);
    }
}

/* The software fused multiply-add: a b + c rounded once. The product of two floats (24 bits
   each) is exact in double; p + c rounded to double and then to float could round twice
   (a sum just off a float midpoint rounding onto it), so the double sum is rounded to odd
   with its exact error term (two_sum) and converted once. Infinities and NaN come out of
   the double operations as IEEE's fmaf gives them; the finite sum never overflows double
   (|a b| < 2^256), and a zero sum is exact (every term is a multiple of 2^-298), so its
   sign is IEEE's too. Contraction is harmless: p is exact, so fma(a, b, c) in double equals
   p + c rounded. Always compiled (tools/exhaustive.c checks it against the hardware's);
   FFN__FMAF below picks it where the compiler has no FMA instruction (where it has one,
   nothing else calls it: hence the attribute). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static FFN__INLINE float ffn__fmaf_soft(float a, float b, float c)
{
    const double p = (double)a * (double)b, cd = (double)c;
    const ffn__dd s = ffn__two_sum(p, cd);
    if ((ffn__u64(s.hi) >> 52 & 0x7ffu) == 0x7ffu) return (float)s.hi;   /* Inf, NaN */
    return ffn__dd_to_float(s.hi, s.lo);
}
/* The scalar path's fused multiply-add: the instruction where the compiler has one (gcc and
   clang define __FP_FAST_FMAF, or __FMA__ / __ARM_FEATURE_FMA, where fmaf compiles to it),
   otherwise ffn__fmaf_soft: never the C library's fmaf, which is not exact everywhere
   (mingw-w64's differed from the fused result in 29% of random cases). */
#if (defined(__GNUC__) || defined(__clang__)) &&                                         \
    (defined(__FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA))
#define FFN__FMAF(a, b, c) __builtin_fmaf(a, b, c)
#else
#define FFN__FMAF(a, b, c) ffn__fmaf_soft(a, b, c)
#endif

/* The fast paths' exponential, for |v| <= 150: exp(v) = 2^k T (1 + p), T = 2^(j/64),
   p = expm1(r), r = v - m ln 2 / 64, m = 64 k + j rounded from v 64 / ln 2 (branch-free:
   the offset makes the truncation a floor), |r| <= ln 2 / 128 (1 + 2^-40). ln 2 / 64 =
   Q1 + Q2: Q1 has 38 bits, so m Q1 is exact (|m| < 2^14) and so is v - m Q1 (both are
   multiples of 2^-44 there: v is a float >= 0.0054 when m != 0; the difference is below
   2^-7); Q1 + Q2 is within 2^-97 of ln 2 / 64. p: Taylor to degree 6, truncation below
   2^-57.5 |p|; the roundings of its evaluation, of its coefficients and of r give
   |p~ - p| <= 2.2 u |p| + 2^-80 (u = 2^-53). The table holds T - 1 (rounded once), so that
   expm1 keeps its relative accuracy where T 2^k is near 1. Returns p; *k, *tm1 = T - 1. */
#define FFN__INVLN2 1.4426950408889634
#define FFN__LN2_1 0.6931471805598903
#define FFN__LN2_2 5.497923018708371e-14
#define FFN__LN2_3 1.94704509238075e-31
static const double ffn__inv_fact[15] = {       /* 1 / n! */
    1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333,
    0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05,
    2.7557319223985893e-06, 2.755731922398589e-07, 2.505210838544172e-08,
    2.08767569878681e-09, 1.6059043836821613e-10, 1.1470745597729725e-11};
#define FFN__INV_Q 92.33248261689366            /* 64 / ln 2 */
#define FFN__Q1 0.010830424696223417
#define FFN__Q2 2.572804622327669e-14
static const double ffn__exp2m1_64[64] = {      /* 2^(j/64) - 1 */
    0.0, 0.01088928605170046, 0.02189714865411668, 0.03302487902122842, 0.04427378242741384,
    0.05564517836055716, 0.06714040067682361, 0.07876079775711979, 0.09050773266525766,
    0.10238258330784095, 0.11438674259589254, 0.1265216186082419, 0.13878863475669165,
    0.1511892299529827, 0.1637248587775775, 0.17639699165028128, 0.18920711500272105,
    0.20215673145270313, 0.21524735998046887, 0.22848053610687, 0.24185781207348406,
    0.2553807570246911, 0.2690509571917332, 0.28287001607877826, 0.29683955465100964,
    0.31096121152476436, 0.32523664315974127, 0.339667524053303, 0.3542555469368927,
    0.3690024229745906, 0.38390988196383197, 0.3989796725383111, 0.41421356237309503,
    0.42961333839197, 0.4451808069770466, 0.460917794180647, 0.4768261459394993,
    0.49290772829126484, 0.5091644275934227, 0.5255981507445383, 0.5422108254079409,
    0.5590044002378369, 0.5759808451078865, 0.5931421513422669, 0.6104903319492543,
    0.6280274218573477, 0.6457554781539648, 0.6636765803267365, 0.6817928305074291,
    0.7001063537185235, 0.7186192981224779, 0.7373338352737062, 0.7562521603732995,
    0.7753764925265213, 0.7947090750031072, 0.8142521755003987, 0.8340080864093424,
    0.8539791250833856, 0.8741676341102999, 0.8945759815869656, 0.9152065613971473,
    0.9360617934922945, 0.9571441241754003, 0.9784560263879509};
static FFN__INLINE double ffn__exp_red(double v, int *k, double *tm1)
{
    const int mo = (int)(v * FFN__INV_Q + 16384.5);   /* m + 16384, >= 0 */
    const double m = (double)(mo - 16384);
    const double r = (v - m * FFN__Q1) - m * FFN__Q2;
    const double *c = ffn__inv_fact, r2 = r * r;    /* (Estrin's scheme: shorter chains) */
    *k = (mo >> 6) - 256;
    *tm1 = ffn__exp2m1_64[mo & 63];
    return r + r2 * ((c[2] + r * c[3]) + r2 * ((c[4] + r * c[5]) + r2 * c[6]));
}
/* For the slow paths: k = v / ln 2 rounded (|v| <= 150). */
static int ffn__exp_k(double v)
{
    const double t = v * FFN__INVLN2;
    return (int)(t < 0.0 ? t - 0.5 : t + 0.5);
}
/* The slow paths' expm1, in double-double: exp(v) = 2^k (1 + P), P = expm1(r),
   r = v - k ln 2, |r| <= ln 2 / 2 (1 + 2^-40), ln 2 = L1 + L2 + L3 (within 2^-150): L1 has
   42 bits, so k L1 is exact and so is v - k L1 for float v (multiples of 2^-43 below 2^42
   of them: v is a float >= 0.34 when k != 0); P: Taylor to degree 27 (truncation below
   2^-139) as r (1 + r/2 (1 + r/3 (1 + ...))): relative error below 2^-98. */
static ffn__dd ffn__expm1_dd(double v, int *k)
{
    const double n = (double)(*k = ffn__exp_k(v));
    const ffn__dd r = ffn__dd_add(ffn__dd2(v - n * FFN__LN2_1, 0.0),
                                  ffn__dd_mul(ffn__dd2(FFN__LN2_2, FFN__LN2_3),
                                              ffn__dd2(-n, 0.0)));
    ffn__dd t = ffn__dd2(1.0, 0.0);
    int m;
    for (m = 27; m >= 2; m--)
        t = ffn__dd_add(ffn__dd2(1.0, 0.0), ffn__dd_div_d(ffn__dd_mul(t, r), (double)m));
    return ffn__dd_mul(t, r);
}

/* expf: 2^k (T + T p) for |x| <= 104 (exp(-104) < 2^-150 rounds to +0, exp(104) to +inf,
   and 2^k stays a normal double). T = 1 + (T - 1) rounds once (u), T p twice (and p's own
   2.2 u |p|, |p| <= 0.0055), the sum once: |d - exp(x)| < 2.1 u exp(x); tested with
   e = 2^-48 (> 15x margin). */
#define FFN__E48 3.552713678800501e-15          /* 2^-48 */
#define FFN__E46 1.4210854715202004e-14         /* 2^-46 */
static FFN__NOINLINE float ffn__expf_slow(float x)
{
    int k;
    const ffn__dd p = ffn__dd_add(ffn__dd2(1.0, 0.0), ffn__expm1_dd((double)x, &k));
    const double s = ffn__pow2(k);
    return ffn__dd_to_float(p.hi * s, p.lo * s);
}
static float ffn__expf(float x)
{
    const uint32_t ax = ffn__u32(x) & 0x7fffffffu;
    float y;
    int k;
    double p, tm1, t;
    if (ax > 0x7f800000u) return x + x;                        /* NaN */
    if (ax > 0x42d00000u) return x < 0.0f ? 0.0f : ffn__f32(0x7f800000u);  /* |x| > 104 */
    p = ffn__exp_red((double)x, &k, &tm1);
    t = 1.0 + tm1;
    if (ffn__rounds((t + t * p) * ffn__pow2(k), 1.0625 * FFN__E48, &y)) return y;
    return ffn__expf_slow(x);
}

/* tanhf = sign(x) E / (E + 2), E = expm1(2 |x|) = 2^k S + (2^k - 1), S = (T - 1) + T p,
   for |x| <= 10 (beyond, 1 - tanh < 2^-26: the result is +-1). S's relative error: where
   j = 0, S = p exactly (T = 1): 2.2 u; otherwise T - 1 >= 0.0108 and |T p| <= 0.0056, so
   the sum cancels by at most 3.1x: (u 0.0109 + 4.2 u 0.0056) / 0.0053 + u < 7.5 u. E: S
   itself where k = 0; else (2^k - 1) is exact and 2^k |S| <= 0.66 E (k = 1 the worst),
   so below 7.5 u 0.66 + u < 6 u. E / (E + 2) has E's relative error times 2 / (E + 2)
   <= 1, plus u for the sum and u for the quotient: below 10 u; tested with e = 2^-46
   (> 8x margin). */
static FFN__NOINLINE float ffn__tanhf_slow(float x)
{
    const double a = (double)(x < 0.0f ? -x : x);
    int k;
    const ffn__dd p = ffn__expm1_dd(2.0 * a, &k);
    const double s = ffn__pow2(k);
    const ffn__dd e = ffn__dd_add(ffn__dd2(p.hi * s, p.lo * s), ffn__dd2(s - 1.0, 0.0));
    const ffn__dd t = ffn__dd_div(e, ffn__dd_add(e, ffn__dd2(2.0, 0.0)));
    return x < 0.0f ? ffn__dd_to_float(-t.hi, -t.lo) : ffn__dd_to_float(t.hi, t.lo);
}
/* Out of line, as ffn__erff: inlined into the activations' row loops, the exact GELU and
   GELU-tanh blocks ran 10-13% slower (make bench PREV=, Zen 5). */
static FFN__NOINLINE float ffn__tanhf(float x)
{
    const uint32_t ax = ffn__u32(x) & 0x7fffffffu;
    const double a = (double)ffn__f32(ax);
    double p, s, tm1;
    float y;
    int k;
    if (ax > 0x7f800000u) return x + x;                        /* NaN */
    if (ax == 0u) return x;                                    /* +-0 */
    if (ax > 0x41200000u) return x < 0.0f ? -1.0f : 1.0f;      /* |x| > 10 */
    p = ffn__exp_red(2.0 * a, &k, &tm1);
    s = ffn__pow2(k);
    p = s * (tm1 + (1.0 + tm1) * p) + (s - 1.0);
    if (!ffn__rounds(p / (p + 2.0), 1.0625 * FFN__E46, &y))
        return ffn__tanhf_slow(x);
    return x < 0.0f ? -y : y;
}

/* erff for |x| < 4 (beyond, 1 - erf < 2^-25.9: the result is +-1). |x| < 1/2: x times the
   Taylor series in z = x^2 (exact) to degree 12 (truncation below 2^-63); else Taylor at
   the center c = 0.625 + 0.25 j of [0.5 + 0.25 j, 0.75 + 0.25 j) to degree 15 in
   h = |x| - c (exact; |h| <= 1/8; truncation below 2^-62). In both, the terms after the
   first add up to less than 0.36 of the result (erf(c) >= 0.52 at |x| >= 1/2), each
   within 6 u of its value after Estrin's roundings and its coefficient's, and the first
   is rounded once more: below 4 u (5 u with the product by x); tested with e = 2^-48
   (> 6x margin).
   The slow path sums erf's series at 0, 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)), in
   double-double: its terms reach 2^22.6 at |x| = 4, so its error stays below 2^-80. */
static const double ffn__erf0[16] = {
    1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131252,
    0.005223977625442188, -0.0008548327023450853, 0.00012055332981789664,
    -1.492565035840625e-05, 1.6462114365889248e-06, -1.6365844691234924e-07,
    1.4807192815879218e-08, -1.2290555301717928e-09, 9.422759064650411e-11, 0.0, 0.0, 0.0};
static const double ffn__erf_tab[14][16] = {
    {0.623240882188418, 0.7634995357606049, -0.47718720985037805, -0.055671841149210775,
     0.1764598536425877, -0.027413411065883696, -0.04134483366596429, 0.01391000864651355,
     0.0066861683631174625, -0.0036333583983661714, -0.0007344823536473329,
     0.0006780134599198432, 4.06588030230971e-05, -9.952678309989107e-05,
     3.5247195209829643e-06, 1.2028636995142695e-05},
    {0.7840750610598597, 0.5247450452901482, -0.45915191462887966, 0.09292360177013041,
     0.11239656243519451, -0.0672158773833572, -0.010367785745906018, 0.018595726765847267,
     -0.0018461468559063715, -0.0032568627602662854, 0.000898154868541066,
     0.0003900529044120407, -0.00019296678621782653, -2.903116273391371e-05,
     2.9075064952881173e-05, 2.0224352255317938e-07},
    {0.8883882317017078, 0.3182739585007693, -0.35805820331336546, 0.16245233298476766,
     0.027973297133856677, -0.061323683605665806, 0.015536835449762896, 0.009606894225829976,
     -0.006031260883106729, -0.0003601919898013683, 0.0011532673547020597,
     -0.0001769550878579247, -0.0001415583990117997, 4.9455696834570095e-05,
     1.0718804636659436e-05, -7.730906970255213e-06},
    {0.9481700727820903, 0.1703597736875156, -0.23424468882033395, 0.15793770685613426,
     -0.03050061052348098, -0.030605976268925736, 0.022161235262852557, -0.001419062360662139,
     -0.004261033441276509, 0.001577911232741016, 0.00032359146722315554,
     -0.0003391015230725006, 2.8681755518788118e-05, 4.175471522740388e-05,
     -1.1984028581486832e-05, -2.9725595025012275e-06},
    {0.9784437332399837, 0.08047225902251116, -0.13076742091158064, 0.11484061964670864,
     -0.049718863159090555, -0.0021349248406037306, 0.014414781131084502,
     -0.006184261515478821, -0.000576525430283408, 0.0014106850333898903,
     -0.00035597922602355293, -0.00012566368868411414, 8.79701620524859e-05,
     -4.270738262797687e-06, -1.0609039547562964e-05, 2.8273833059374034e-06},
    {0.9919900576701199, 0.03354582842421607, -0.06289842829540514, 0.0674410925611844,
     -0.04225988151097533, 0.011462583364876176, 0.004105187133212477, -0.004928393908239107,
     0.001430501687370122, 0.00036225644575338666, -0.0003901575782455417,
     7.37299378240623e-05, 3.607417901263836e-05, -2.0803824921141647e-05,
     8.154185088040366e-07, 2.3718570297022424e-06},
    {0.9973459706405177, 0.012340820614333696, -0.026224243805459103, 0.033037405186289164,
     -0.026360828408612536, 0.012495482591433906, -0.0018214125933023405,
     -0.0018692572567887945, 0.0013833456162338344, -0.0002897798521792673,
     -0.00012277167237649306, 9.485303104752515e-05, -1.4992013287438935e-05,
     -8.475474393501074e-06, 4.549880654612466e-06, -2.397884034210181e-07},
    {0.9992170617821089, 0.004006477861670219, -0.009515384921466771, 0.013730533505098981,
     -0.013133213563482782, 0.00835739283377895, -0.0031140790431462596, 0.0001232696283780691,
     0.0005941113102532914, -0.00033752784148497275, 5.4705936215888043e-05,
     3.1608810695225705e-05, -2.0800599114722e-05, 3.1425661169499264e-06,
     1.6767083573168686e-06, -9.200372609631897e-07},
    {0.9997946242638588, 0.001147875125882675, -0.003013172205442022, 0.004890426317562647,
     -0.005414293806653633, 0.004217880601717521, -0.0022468338447285286,
     0.0006808680974231771, 3.464470636501039e-05, -0.00015260043098965162,
     7.395616736023192e-05, -1.0326282078167697e-05, -6.687731493867075e-06,
     4.157085191239199e-06, -6.770082881827777e-07, -2.7773383709897626e-07},
    {0.9999521451602562, 0.00029022828286249803, -0.0008344063132296819, 0.001502536006069391,
     -0.001881760070981522, 0.0017132632798079331, -0.0011400746242208634,
     0.0005285700413700108, -0.00013560801204451028, -1.6139055904620542e-05,
     3.338804817529197e-05, -1.4811906943601079e-05, 2.0385768990676424e-06,
     1.1871804277151051e-06, -7.564152887325688e-07, 1.429749505827574e-07},
    {0.9999901032653747, 6.475868323471298e-05, -0.00020237088510847805, 0.0004000197828977583,
     -0.0005575739490749213, 0.0005769615014743242, -0.00045231517761577534,
     0.00026648105109162697, -0.00011126364024766743, 2.5450656904174918e-05,
     3.873542145587109e-06, -6.36552916703948e-06, 2.7284794494107734e-06,
     -4.1406613481371433e-07, -1.7494853479255093e-07, 1.241605538071656e-07},
    {0.9999981847185726, 1.2751740799765088e-05, -4.303712519920718e-05, 9.258295143162778e-05,
     -0.00014188802214113615, 0.00016377394446104548, -0.0001464088816143732,
     0.0001021861966850395, -5.484627167849354e-05, 2.126516551455692e-05,
     -4.603538423927069e-06, -6.548557786086127e-07, 1.0658621972744764e-06,
     -4.6107699262719935e-07, 8.175172180466655e-08, 2.0297448084600926e-08},
    {0.9999997048598075, 2.2159202846331124e-06, -8.032711031795032e-06,
     1.8673744898626958e-05, -3.1168592284829685e-05, 3.959233534341495e-05,
     -3.952911393067182e-05, 3.151412148928749e-05, -2.0089148185951398e-05,
     1.0055179082432725e-05, -3.7186007128168107e-06, 8.055029835948156e-07,
     7.676629783825506e-08, -1.5640854840393676e-07, 7.087425570853251e-08,
     -1.4891022361493784e-08},
    {0.999999957486056, 3.398223817809154e-07, -1.3168117294010471e-06, 3.2884895070257334e-06,
     -5.9325111767286764e-06, 8.208845471821727e-06, -9.021089087308752e-06,
     8.033147329562849e-06, -5.849020956804992e-06, 3.4746560653893003e-06,
     -1.6530325028002647e-06, 5.960564526364828e-07, -1.3449365553980958e-07,
     -3.880333287181606e-09, 1.9883468745269102e-08, -9.792703301880837e-09}};
/* sum_i c[i] h^i, i < 16, by Estrin's scheme (pairs, then powers h^2, h^4, h^8: chains of
   4 multiply-adds where Horner's has 15) */
static FFN__INLINE double ffn__estrin16(const double *c, double h)
{
    const double h2 = h * h, h4 = h2 * h2, h8 = h4 * h4;
    const double q0 = (c[0] + c[1] * h) + h2 * (c[2] + c[3] * h);
    const double q1 = (c[4] + c[5] * h) + h2 * (c[6] + c[7] * h);
    const double q2 = (c[8] + c[9] * h) + h2 * (c[10] + c[11] * h);
    const double q3 = (c[12] + c[13] * h) + h2 * (c[14] + c[15] * h);
    return (q0 + h4 * q1) + h8 * (q2 + h4 * q3);
}
static FFN__NOINLINE float ffn__erff_slow(float x)
{
    const double a = (double)(x < 0.0f ? -x : x), z = a * a;
    ffn__dd term = ffn__dd2(a, 0.0), s = term;
    long i;
    for (i = 1;; i++) {
        const double n = (double)i;
        ffn__dd u;
        term = ffn__dd_div_d(ffn__dd_mul(term, ffn__dd2(z, 0.0)), n);
        u = ffn__dd_div_d(term, 2.0 * n + 1.0);
        s = ffn__dd_add(s, (i & 1) ? ffn__dd_neg(u) : u);
        if (n > z && u.hi < s.hi * 7.703719777548943e-34) break;
    }
    s = ffn__dd_mul(s, ffn__dd2(1.1283791670955126, 1.533545961316588e-17));  /* 2/sqrt(pi) */
    return x < 0.0f ? ffn__dd_to_float(-s.hi, -s.lo) : ffn__dd_to_float(s.hi, s.lo);
}
static FFN__NOINLINE float ffn__erff(float x)
{
    const uint32_t ax = ffn__u32(x) & 0x7fffffffu;
    const double a = (double)ffn__f32(ax);
    double p;
    float y;
    if (ax > 0x7f800000u) return x + x;                        /* NaN */
    if (ax == 0u) return x;                                    /* +-0 */
    if (ax >= 0x40800000u) return x < 0.0f ? -1.0f : 1.0f;     /* |x| >= 4 */
    if (ax < 0x3f000000u) {                                    /* |x| < 1/2 */
        p = a * ffn__estrin16(ffn__erf0, a * a);
    } else {
        const int j = (int)((a - 0.5) * 4.0);
        p = ffn__estrin16(ffn__erf_tab[j], a - (0.625 + 0.25 * (double)j));
    }
    if (!ffn__rounds(p, 1.0625 * FFN__E48, &y)) return ffn__erff_slow(x);
    return x < 0.0f ? -y : y;
}

/* x^n for n >= 1: by squaring in double-double (relative error about 2 n 2^-104, so
   correctly rounded but for values within that of a midpoint between doubles), rounded
   once. The bias corrections of AdamW (Python's beta ** step, C's pow) need nothing more. */
static double ffn__powi(double x, long n)
{
    ffn__dd r = ffn__dd2(1.0, 0.0), b = ffn__dd2(x, 0.0);
    for (;;) {
        if (n & 1) r = ffn__dd_mul(r, b);
        n >>= 1;
        if (!n) break;
        b = ffn__dd_mul(b, b);
    }
    return r.hi;
}

/* For tools/exhaustive.c: the own functions, X(libm name, function), and the software fmaf. */
#define FFN__OWN_MATH(X) X(expf, ffn__expf) X(erff, ffn__erff) X(tanhf, ffn__tanhf)
#define FFN__OWN_FMAF ffn__fmaf_soft
#define FFN__OWN_ROUND16(X) X(bf16, ffn__f32_bf16, ffn__bf16_f32) X(f16, ffn__f32_f16, ffn__f16_f32)

/* ==== 4. BFLOAT16 AND FLOAT16 ========================================================= */

/* bfloat16 (torch.bfloat16: a float's top 16 bits) and IEEE binary16 (torch.float16).
   Widening is exact: every 16-bit value is a float. Narrowing rounds to nearest, ties
   to even, as torch's .to(torch.bfloat16) and .half() do; a NaN stays a NaN (quiet,
   its sign and top payload bits kept: torch's own NaN bits differ between its scalar
   and vector code and between versions, so no test can ask for more). tools/exhaustive.c
   checks every float's rounding against MPFR (FFN__OWN_ROUND16, `make exhaustive`); the
   goldens check torch's bits on the edge cases. */
static float ffn__bf16_f32(uint16_t h) { return ffn__f32((uint32_t)h << 16); }

static uint16_t ffn__f32_bf16(float f)
{
    const uint32_t u = ffn__u32(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);   /* (carries into Inf) */
}

static float ffn__f16_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F)                          /* Inf, NaN (made quiet, as F16C's widening) */
        return ffn__f32(sign | 0x7F800000u | m << 13 | (m ? 0x400000u : 0));
    if (e) return ffn__f32(sign | (e + 112) << 23 | m << 13);            /* normal */
    return ffn__f32(sign | ffn__u32((float)m * 5.9604644775390625e-8f)); /* m 2^-24: exact */
}

static uint16_t ffn__f32_f16(float f)
{
    const uint32_t u = ffn__u32(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    const uint32_t e = a >> 23;
    uint32_t q, rest;
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u | (a >> 13 & 0x3FFu));   /* NaN */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);   /* >= 65520: rounds to Inf */
    if (e < 113) {          /* below 2^-14: a multiple of 2^-24, rounded (0 from 2^-25 down) */
        const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
        uint32_t half;
        if (e < 102) return (uint16_t)sign;
        half = 1u << (125 - e);
        q = m >> (126 - e);
        rest = m & ((1u << (126 - e)) - 1);
        return (uint16_t)(sign | (q + (rest > half || (rest == half && (q & 1)))));
    }
    q = (a - (112u << 23)) >> 13;             /* exponent and mantissa, truncated */
    rest = a & 0x1FFFu;
    return (uint16_t)(sign | (q + (rest > 0x1000u || (rest == 0x1000u && (q & 1)))));
}

/* ==== 5. ACTIVATIONS ================================================================== */

/* ---- the scalar path: the readable specification ------------------------ */

/* torch.relu is clamp_min(x, 0): only values below zero change. NaN and -0.0 compare
   false and pass through, as torch's do. Under -ffast-math the compiler may assume no
   NaN and ignore the sign of zero, and fold the comparison into max(v, 0), which loses
   both; there the sign bit and the magnitude are tested as integers instead. */
#if defined(__FAST_MATH__)
static float ffn__relu1(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return (u >> 31) && (u & 0x7fffffffu) - 1u < 0x7f800000u ? 0.0f : v;
}
#else
static float ffn__relu1(float v) { return v < 0.0f ? 0.0f : v; }
#endif

/* torch's scalar CPU kernels (aten/src/ATen/native/cpu/Activation.cpp), operation for
   operation in float: each step is its own float object, and each constant a float
   variable (not a literal, which may keep double precision there), so that a target
   that evaluates float expressions in double (FLT_EVAL_METHOD 1: s390x) rounds where
   torch does. The one product that feeds an addition goes through a volatile: gcc contracts
   a * b + c into an FMA across statements whenever FMA is enabled (its default
   -ffp-contract=fast outside strict ISO modes), which would change the bits. */
static float ffn__gelu1(float x)
{
    const float alpha = 0.70710678118654752440f; /* M_SQRT1_2, as a float */
    const float half = x * 0.5f, e = ffn__erff(x * alpha), one = 1.0f + e;
    return (float)(half * one);
}

static float ffn__gelu_tanh1(float x)
{
    const float beta = 0.7978845608028654f, kappa = 0.044715f; /* sqrt(2/pi) */
    const float x2 = x * x, x3 = x2 * x;
    volatile float t = kappa * x3;
    const float s = x + t, inner = beta * s, one = 1.0f + ffn__tanhf(inner), half = 0.5f * x;
    return (float)(half * one);
}

static float ffn__silu1(float x)
{
    const float one = 1.0f + ffn__expf(-x);
    return (float)(x / one);
}

static float ffn__sigmoid1(float x)
{
    const float one = 1.0f + ffn__expf(-x);
    return (float)(1.0f / one);
}

/* FFN_FAST: the activations from one exp, one erf and one erfc of this header's own, in
   float with explicit fused multiply-adds (nothing left for the compiler to contract),
   so that the SIMD paths can compute the very same operations 8 or 16 lanes at a time.
   Polynomial coefficients: least squares on Chebyshev nodes against 40-digit values,
   rounded to float one coefficient at a time (the rest refitted after each).
   exp(a) = 2^n p(r): n = rint(a / ln 2) (the 1.5 * 2^23 trick: the FMA rounds to an
   integer), r = a - n ln 2 in two steps (ln 2's high part has 9 bits, so n * hi is
   exact), p(r) = 1 + r q(r) with q of degree 6 (relative error 5e-10 on
   |r| <= ln 2 / 2). 2^n is applied as two powers of 2 of the float range, 2^n1 2^n2:
   the first multiplication is exact, the second rounds once, also into denormals or
   +inf. a is clamped to [-104, 89] first (exp(-104) rounds to 0 even times 1.42, and
   exp(89) is +inf); a NaN passes the clamps and gives NaN. */
#define FFN__EXP_LO (-104.0f)
#define FFN__EXP_HI 89.0f
#define FFN__LOG2E 1.44269502f
#define FFN__MAGIC 12582912.0f                   /* 1.5 * 2^23 */
#define FFN__MAGIC_K (0x4B400000u - 150u)        /* its bits, minus 150 */
#define FFN__MLN2_HI (-0.693359375f)
#define FFN__MLN2_LO 0.000212194442f
#define FFN__MLN2 (-0.693147182f)                /* -ln 2 */
#define FFN__RSQRT2 0.707106769f
#define FFN__BIG 3.40282347e+38f                 /* FLT_MAX */
#define FFN__KAPPA 0.044715f
#define FFN__M2BETA (-1.59576917f)               /* -2 sqrt(2/pi) */
static const float ffn__exp_q[7] = {0.000197528556f, 0.00139354402f, 0.00833355915f,
                                    0.041666463f, 0.166666657f, 0.5f, 1.0f};

/* exp(a) = *q * *s (both finite; *q exact). */
static void ffn__exp2(float a, float *q, float *s)
{
    const float lo = FFN__EXP_LO, hi = FFN__EXP_HI, log2e = FFN__LOG2E, magic = FFN__MAGIC;
    const float mln2_hi = FFN__MLN2_HI, mln2_lo = FFN__MLN2_LO;
    float t, n, r, p;
    uint32_t k;
    int i;
    a = a < lo ? lo : a;
    a = a > hi ? hi : a;
    t = FFN__FMAF(a, log2e, magic);
    n = t - magic;
    r = FFN__FMAF(n, mln2_hi, a);
    r = FFN__FMAF(n, mln2_lo, r);
    p = ffn__exp_q[0];
    for (i = 1; i < 7; i++) p = FFN__FMAF(p, r, ffn__exp_q[i]);
    p = FFN__FMAF(p, r, 1.0f);
    k = ffn__u32(t) - FFN__MAGIC_K;              /* n + 150, in [0, 279] */
    *q = p * ffn__f32(((k >> 1) + 52u) << 23);  /* 2^(floor(n / 2)) */
    *s = ffn__f32((k - (k >> 1) + 52u) << 23);   /* 2^(n - floor(n / 2)) */
}

/* v / (1 + exp(a)), the form of SiLU, GELU-tanh and the sigmoid. The denominator is
   rounded once from 1 + p 2^n. For a < -ln 2 (e = exp(a) < 1/2, the result near v) it
   is v - v (e / (1 + e)), rounded once: the correction is small, so its own error is
   too, where v / (1 + e) would add the rounding of 1 + e to that of the quotient (the
   threshold: the smaller maximum error of the sigmoid over floats, measured). v is
   clamped to FLT_MAX in the product so that v = +inf gives inf, not inf - inf. */
static float ffn__xsig(float v, float a)
{
    const float big = FFN__BIG, mln2 = FFN__MLN2;
    float q, s, den, e, r;
    ffn__exp2(a, &q, &s);
    den = FFN__FMAF(q, s, 1.0f);
    if (!(a < mln2)) return v / den;
    e = q * s;
    r = e / den;
    return FFN__FMAF(-(v > big ? big : v), r, v);
}

/* GELU = x Phi(x), Phi(x) = (1 + erf(z)) / 2, z = x / sqrt 2. For |z| < 7/8:
   erf(z) = z e(z^2), and y = h + h erf(z) with h = x / 2, rounded once. Beyond, from
   erfc(|z|) = exp(-z^2) c(t), t = 1 / (1 + |z| / 2) (the erfc of Numerical Recipes'
   form; relative error 1e-9 of the fit): y = h erfc(|z|) for x < 0, which keeps its
   relative accuracy where 1 + erf(z) cancels, and x - h erfc(z) for x > 0. */
static const float ffn__erf_e[6] = {-0.000601038919f, 0.00499160914f, -0.0267604738f,
                                    0.112814233f, -0.376124114f, 1.12837911f};
static const float ffn__erfc_c[10] = {-0.0659728646f, 0.320055574f, -0.561114788f,
                                      0.361221164f, -0.0826300085f, 0.226141602f,
                                      0.236999646f, 0.283325583f, 0.282006294f,
                                      2.78066204e-06f};
static float ffn__gelu_fast1(float x)
{
    const float rsqrt2 = FFN__RSQRT2, half = 0.5f, big = FFN__BIG;
    const float h = half * x, z = x * rsqrt2, az = fabsf(z);
    float y, p;
    int i;
    if (az < 0.875f) {
        const float z2 = z * z;
        p = ffn__erf_e[0];
        for (i = 1; i < 6; i++) p = FFN__FMAF(p, z2, ffn__erf_e[i]);
        y = FFN__FMAF(h, z * p, h);
    } else {
        const float t = 1.0f / FFN__FMAF(half, az, 1.0f);
        float q, s, c;
        p = ffn__erfc_c[0];
        for (i = 1; i < 10; i++) p = FFN__FMAF(p, t, ffn__erfc_c[i]);
        ffn__exp2(-(az * az), &q, &s);
        c = q * p;
        c = c * s;
        /* h = +inf (x = +inf) would make inf * 0 = NaN of erfc(inf) = 0 */
        y = x < 0.0f ? h * c : FFN__FMAF(-(h > big ? big : h), c, x);
    }
    return (ffn__u32(x) << 1) == 0u ? x : y;     /* +-0.0 gives itself, as in torch */
}

/* GELU-tanh: h (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3). */
static float ffn__gelu_tanh_fast1(float x)
{
    const float kappa = FFN__KAPPA, m2beta = FFN__M2BETA;
    const float x2 = x * x, k2 = kappa * x2, s = FFN__FMAF(k2, x, x);
    return ffn__xsig(x, s * m2beta);
}

static float ffn__silu_fast1(float x) { return ffn__xsig(x, -x); }
static float ffn__sigmoid_fast1(float x) { return ffn__xsig(1.0f, -x); }

/* act | FFN_FAST is accepted for every act (ReLU has no other form); FFN_GPT_OSS only by
   the gated blocks. */
static int ffn__act_ok(int act, int gated)
{
    const int base = act & ~FFN_FAST;
    return base >= FFN_RELU && base <= (gated ? FFN_GPT_OSS : FFN_SIGMOID);
}

/* GPT-OSS's gated activation, split over the two projections' output stages as torch
   computes it (transformers' GptOssExperts; OpenAI's reference swiglu): the gate's tile
   becomes glu = g sigmoid(1.702 g) with g = gate.clamp(max=7), the up's tile
   (up.clamp(-7, 7) + 1) * glu. torch's clamp keeps a NaN, as the comparisons here do. */
static float ffn__oss_gate(float x)
{
    const float limit = 7.0f;
    return x > limit ? limit : x;
}

static float ffn__oss_glu1(float x)
{
    const float alpha = 1.702f;
    const float g = ffn__oss_gate(x), v = g * alpha, s = ffn__sigmoid1(v);
    return (float)(g * s);
}

static float ffn__oss_glu_fast1(float x)
{
    const float alpha = 1.702f;
    const float g = ffn__oss_gate(x), v = g * alpha, s = ffn__sigmoid_fast1(v);
    return (float)(g * s);
}

static float ffn__oss_up1(float x)
{
    const float lo = -7.0f, hi = 7.0f;
    const float u = x < lo ? lo : x > hi ? hi : x;
    return (float)(u + 1.0f);
}

/* y[i] = ffn__<f>1(x[i]): the scalar path's rows, and the other paths' for the functions
   they have no vector form of (and for their last n % FFN__VL floats). */
#define FFN__SCALAR_ROW(f)                                                               \
    static void ffn__scalar_row_##f(float *y, const float *x, size_t n)                  \
    {                                                                                    \
        size_t i;                                                                        \
        for (i = 0; i < n; i++) y[i] = ffn__##f##1(x[i]);                                \
    }
FFN__SCALAR_ROW(relu)
FFN__SCALAR_ROW(gelu)
FFN__SCALAR_ROW(gelu_tanh)
FFN__SCALAR_ROW(silu)
FFN__SCALAR_ROW(sigmoid)
FFN__SCALAR_ROW(oss_glu)
FFN__SCALAR_ROW(oss_up)
FFN__SCALAR_ROW(gelu_fast)
FFN__SCALAR_ROW(gelu_tanh_fast)
FFN__SCALAR_ROW(silu_fast)
FFN__SCALAR_ROW(sigmoid_fast)
FFN__SCALAR_ROW(oss_glu_fast)
/* A path's table, enum ffn__fn's order: P's vector forms of FFN_FAST's functions, the
   scalar ones of the rest (P = ffn__scalar: all scalar). */
#define FFN__ROW_FNS(P)                                                                  \
    ffn__scalar_row_relu, ffn__scalar_row_gelu, ffn__scalar_row_gelu_tanh,               \
    ffn__scalar_row_silu, ffn__scalar_row_sigmoid, ffn__scalar_row_oss_glu,              \
    ffn__scalar_row_oss_up, P##_row_gelu_fast, P##_row_gelu_tanh_fast, P##_row_silu_fast, \
    P##_row_sigmoid_fast, P##_row_oss_glu_fast

/* FFN_FAST's activations, FFN__VL lanes at a time: the scalar functions' operations in
   their order (so the same bits), in the kernel's primitives (6. GEMM) plus FFN__VSET
   (a constant in every lane), FFN__VSUB, FFN__VMUL, FFN__VDIV, FFN__VNEG and FFN__VABS
   (the sign bit), FFN__VSEL(m, a, b) (a where m, else b) over the masks FFN__VLT(a, b)
   (a < b) and FFN__VEQ, and the float's bits as uint32 lanes (FFN__VU: FFN__VBITS,
   FFN__VFLOAT, FFN__VUSET, FFN__VUADD, FFN__VUSUB, FFN__VUSHR, FFN__VUSHL). A ternary
   of the scalar code is an FFN__VSEL of both sides; the last n % FFN__VL floats take
   the scalar functions themselves. */
#define FFN__DEFINE_ACT_FAST()                                                           \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _exp2)(FFN__VEC a, FFN__VEC *s)     \
    {                                                                                    \
        const FFN__VEC lo = FFN__VSET(FFN__EXP_LO), hi = FFN__VSET(FFN__EXP_HI);         \
        const FFN__VEC magic = FFN__VSET(FFN__MAGIC);                                    \
        FFN__VEC t, n, r, p;                                                             \
        FFN__VU k;                                                                       \
        int i;                                                                           \
        a = FFN__VSEL(FFN__VLT(a, lo), lo, a);                                           \
        a = FFN__VSEL(FFN__VLT(hi, a), hi, a);                                           \
        t = FFN__VFMA(a, FFN__VSET(FFN__LOG2E), magic);                                  \
        n = FFN__VSUB(t, magic);                                                         \
        r = FFN__VFMA(n, FFN__VSET(FFN__MLN2_HI), a);                                    \
        r = FFN__VFMA(n, FFN__VSET(FFN__MLN2_LO), r);                                    \
        p = FFN__VSET(ffn__exp_q[0]);                                                    \
        for (i = 1; i < 7; i++) p = FFN__VFMA(p, r, FFN__VSET(ffn__exp_q[i]));           \
        p = FFN__VFMA(p, r, FFN__VSET(1.0f));                                            \
        k = FFN__VUSUB(FFN__VBITS(t), FFN__VUSET(FFN__MAGIC_K));                         \
        *s = FFN__VFLOAT(FFN__VUSHL(FFN__VUADD(FFN__VUSUB(k, FFN__VUSHR(k, 1)),          \
                                               FFN__VUSET(52u)), 23));                   \
        return FFN__VMUL(p, FFN__VFLOAT(FFN__VUSHL(FFN__VUADD(FFN__VUSHR(k, 1),          \
                                                               FFN__VUSET(52u)), 23)));  \
    }                                                                                    \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _xsig)(FFN__VEC v, FFN__VEC a)      \
    {                                                                                    \
        const FFN__VEC big = FFN__VSET(FFN__BIG);                                        \
        FFN__VEC s, q = FFN__NAME(FFN__ISA, _exp2)(a, &s);                               \
        const FFN__VEC den = FFN__VFMA(q, s, FFN__VSET(1.0f));                           \
        const FFN__VEC r = FFN__VDIV(FFN__VMUL(q, s), den);                              \
        const FFN__VEC vb = FFN__VSEL(FFN__VLT(big, v), big, v);                         \
        return FFN__VSEL(FFN__VLT(a, FFN__VSET(FFN__MLN2)), FFN__VFMA(FFN__VNEG(vb), r, v), \
                         FFN__VDIV(v, den));                                             \
    }                                                                                    \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _gelu)(FFN__VEC x)                  \
    {                                                                                    \
        const FFN__VEC half = FFN__VSET(0.5f), one = FFN__VSET(1.0f), zero = FFN__VSET(0.0f); \
        const FFN__VEC big = FFN__VSET(FFN__BIG);                                        \
        const FFN__VEC h = FFN__VMUL(half, x), z = FFN__VMUL(x, FFN__VSET(FFN__RSQRT2));  \
        const FFN__VEC az = FFN__VABS(z), z2 = FFN__VMUL(z, z);                          \
        FFN__VEC p, t, q, s, c, ys, yl;                                                  \
        int i;                                                                           \
        p = FFN__VSET(ffn__erf_e[0]);                                                    \
        for (i = 1; i < 6; i++) p = FFN__VFMA(p, z2, FFN__VSET(ffn__erf_e[i]));          \
        ys = FFN__VFMA(h, FFN__VMUL(z, p), h);                                           \
        t = FFN__VDIV(one, FFN__VFMA(half, az, one));                                    \
        p = FFN__VSET(ffn__erfc_c[0]);                                                   \
        for (i = 1; i < 10; i++) p = FFN__VFMA(p, t, FFN__VSET(ffn__erfc_c[i]));         \
        q = FFN__NAME(FFN__ISA, _exp2)(FFN__VNEG(FFN__VMUL(az, az)), &s);                \
        c = FFN__VMUL(FFN__VMUL(q, p), s);                                               \
        yl = FFN__VSEL(FFN__VLT(x, zero), FFN__VMUL(h, c),                               \
                       FFN__VFMA(FFN__VNEG(FFN__VSEL(FFN__VLT(big, h), big, h)), c, x)); \
        return FFN__VSEL(FFN__VEQ(x, zero), x,                                           \
                         FFN__VSEL(FFN__VLT(az, FFN__VSET(0.875f)), ys, yl));            \
    }                                                                                    \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _gelu_tanh)(FFN__VEC v)             \
    {                                                                                    \
        const FFN__VEC k2 = FFN__VMUL(FFN__VSET(FFN__KAPPA), FFN__VMUL(v, v));           \
        const FFN__VEC a = FFN__VMUL(FFN__VFMA(k2, v, v), FFN__VSET(FFN__M2BETA));       \
        return FFN__NAME(FFN__ISA, _xsig)(v, a);                                         \
    }                                                                                    \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _silu)(FFN__VEC v)                  \
    {                                                                                    \
        return FFN__NAME(FFN__ISA, _xsig)(v, FFN__VNEG(v));                              \
    }                                                                                    \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _sigmoid)(FFN__VEC v)               \
    {                                                                                    \
        return FFN__NAME(FFN__ISA, _xsig)(FFN__VSET(1.0f), FFN__VNEG(v));                \
    }                                                                                    \
    static FFN__VTARGET FFN__VEC FFN__NAME(FFN__ISA, _oss_glu)(FFN__VEC v)               \
    {                                                                                    \
        const FFN__VEC lim = FFN__VSET(7.0f);                                            \
        const FFN__VEC g = FFN__VSEL(FFN__VLT(lim, v), lim, v);                          \
        const FFN__VEC a = FFN__VNEG(FFN__VMUL(g, FFN__VSET(1.702f)));                   \
        return FFN__VMUL(g, FFN__NAME(FFN__ISA, _xsig)(FFN__VSET(1.0f), a));             \
    }                                                                                    \
    FFN__VECTOR_ROW(gelu_fast, _gelu)                                                    \
    FFN__VECTOR_ROW(gelu_tanh_fast, _gelu_tanh)                                          \
    FFN__VECTOR_ROW(silu_fast, _silu)                                                    \
    FFN__VECTOR_ROW(sigmoid_fast, _sigmoid)                                              \
    FFN__VECTOR_ROW(oss_glu_fast, _oss_glu)
/* FFN__ISA##_row_<f>: y = f(x), FFN__VL lanes at a time by the vector form v, the last
   n % FFN__VL floats by the scalar row of the same function. */
#define FFN__VECTOR_ROW(f, v)                                                            \
    static FFN__VTARGET void FFN__NAME(FFN__ISA, _row_##f)(float *y, const float *x,     \
                                                           size_t n)                     \
    {                                                                                    \
        const size_t nv = n - n % FFN__VL;                                               \
        size_t i;                                                                        \
        for (i = 0; i < nv; i += FFN__VL)                                                \
            FFN__VSTORE(y + i, FFN__NAME(FFN__ISA, v)(FFN__VLOAD(x + i)));               \
        ffn__scalar_row_##f(y + nv, x + nv, n - nv);                                     \
    }

FFNDEF int ffn_activation(float *y, const float *x, size_t n, int act)
{
    size_t bytes;
    if (!ffn__act_ok(act, 0)) return FFN_ERR_ARG;
    if (!y || !x) return FFN_ERR_NULL;
    if (!n) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&bytes, n, 1)) return FFN_ERR_OVERFLOW;
    if (y != x && ffn__overlap(y, bytes, x, bytes)) return FFN_ERR_ALIAS;
    ffn__epi_of(ffn__current(), act, FFN__E_ROWS, NULL).act(y, x, n);
    return FFN_OK;
}

FFNDEF int ffn_relu(float *y, const float *x, size_t n)
{
    return ffn_activation(y, x, n, FFN_RELU);
}

/* act'(x) times dy, in float, in the forms torch's CPU kernels use (each a product of
   dy and a sum of two terms): GELU Phi(x) + x phi(x); GELU-tanh (1 + t)/2 + (x/2)(1 - t^2)
   beta (1 + 3 kappa x^2) with t = tanh(beta (x + kappa x^3)); SiLU s (1 + x (1 - s)) and
   the sigmoid (1 - s) s, s = 1 / (1 + exp(-x)). Each step is its own float object (see
   the forward activations: where float expressions are evaluated in double, s390x, a
   step of two operations would round once where torch rounds twice), and no product
   feeds an addition unguarded. */
static float ffn__act_grad1(float x, float dy, int act)
{
    const float one = 1.0f, half = 0.5f;
    switch (act & ~FFN_FAST) {
    case FFN_RELU:
        return ffn__relu1(x) <= 0.0f ? 0.0f : dy;
    case FFN_GELU: {
        const float alpha = 0.70710678118654752440f;          /* 1 / sqrt 2 */
        const float kpdf = 0.39894228040143267794f;           /* 1 / sqrt(2 pi) */
        const float ax = x * alpha, erfv = ffn__erff(ax), onee = one + erfv, cdf = half * onee;
        const float x2 = x * x, e = ffn__expf(-half * x2), ke = kpdf * e;
        volatile float xp = x * ke;
        const float d = cdf + xp;
        return dy * d;
    }
    case FFN_GELU_TANH: {
        const float beta = 0.7978845608028654f, kappa = 0.044715f, three = 3.0f;
        const float x2 = x * x, x3 = x2 * x;
        volatile float kx3 = kappa * x3, t2v;
        const float sum = x + kx3, inner = beta * sum, t = ffn__tanhf(inner), opt = one + t;
        const float left_d = half * opt, hx = half * x;
        float k3 = three * kappa, opk, inner_d, tanh_d, d;
        volatile float k3x2 = k3 * x2, right_d;
        opk = one + k3x2;
        inner_d = beta * opk;
        t2v = t * t;
        tanh_d = one - t2v;
        right_d = hx * tanh_d;
        right_d = right_d * inner_d;
        d = left_d + right_d;
        return dy * d;
    }
    case FFN_SILU: {
        const float s = ffn__sigmoid1(x), oms = one - s;
        volatile float xo = x * oms;
        const float opx = one + xo, d = s * opx;
        return dy * d;
    }
    default: {  /* FFN_SIGMOID */
        const float s = ffn__sigmoid1(x), oms = one - s;
        const float d = oms * s;
        return dy * d;
    }
    }
}

FFNDEF int ffn_activation_backward(float *dx, const float *dy, const float *x, size_t n,
                                   int act)
{
    size_t bytes, i;
    if (!ffn__act_ok(act, 0)) return FFN_ERR_ARG;
    if (!dx || !dy || !x) return FFN_ERR_NULL;
    if (!n) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&bytes, n, 1)) return FFN_ERR_OVERFLOW;
    if ((dx != dy && ffn__overlap(dx, bytes, dy, bytes)) ||
        (dx != x && ffn__overlap(dx, bytes, x, bytes)))
        return FFN_ERR_ALIAS;
    for (i = 0; i < n; i++) dx[i] = ffn__act_grad1(x[i], dy[i], act);
    return FFN_OK;
}

/* ==== 6. EPILOGUE ===================================================================== */

/* The epilogue of act (FFN_RELU.., | FFN_FAST; valid) on the path, at where. */
static ffn__epi ffn__epi_of(const ffn__isa *isa, int act, int where, const float *mul)
{
    const int fast = (act & FFN_FAST) != 0;
    ffn__epi e;
    int f;
    switch (act & ~FFN_FAST) {
    case FFN_GELU:      f = fast ? FFN__F_GELU_FAST : FFN__F_GELU; break;
    case FFN_GELU_TANH: f = fast ? FFN__F_GELU_TANH_FAST : FFN__F_GELU_TANH; break;
    case FFN_SILU:      f = fast ? FFN__F_SILU_FAST : FFN__F_SILU; break;
    case FFN_SIGMOID:   f = fast ? FFN__F_SIGMOID_FAST : FFN__F_SIGMOID; break;
    case FFN_GPT_OSS:
        f = where == FFN__E_UP ? FFN__F_OSS_UP : fast ? FFN__F_OSS_GLU_FAST : FFN__F_OSS_GLU;
        break;
    default:            f = FFN__F_RELU; break;     /* (ReLU has no other form) */
    }
    e.relu = where == FFN__E_HIDDEN && f == FFN__F_RELU;
    e.act = e.relu || (where == FFN__E_UP && f != FFN__F_OSS_UP) ? NULL : isa->fn[f];
    e.mul = mul;
    return e;
}

/* A tile whose last k block ends in an epilogue (act, the gate product: on the finished
   tile, in L1; e NULL: none), or that runs past out_features (y has n of its columns):
   the latter computed into a padded local tile, finished there and copied out, so
   nothing outside any caller buffer is touched. a: the tile's arguments, on y (cin the
   bias row when ldcin is 0); mul: the tile's part of e->mul, as a->c. Out of line: the
   padded tiles would make every tile's stack frame large. */
static FFN__NOINLINE void ffn__tile_edge(ffn__kernel_fn kernel, ffn__kargs *a, int m, int np,
                                         size_t n, const ffn__epi *e, const float *mul)
{
    const size_t width = (size_t)np * FFN__NR, ldy = a->ldc, lds = a->ldcin;
    const int pad = n < width;
    float *y = a->c, cin[FFN__MR_MAX * FFN__NB * FFN__NR], c[FFN__MR_MAX * FFN__NB * FFN__NR];
    size_t i, j;
    if (pad) {
        const float *src = a->cin;
        for (i = 0; i < (lds ? (size_t)m : 1); i++)
            for (j = 0; j < width; j++) cin[i * width + j] = j < n ? src[i * lds + j] : 0.0f;
        a->cin = cin;
        a->ldcin = lds ? width : 0;
        a->c = c;
        a->ldc = width;
    } else {
        n = width;
    }
    kernel(m, np, a);
    for (i = 0; i < (size_t)m; i++) {
        float *row = a->c + i * a->ldc;
        if (e && e->act) e->act(row, row, n);
        if (mul)
            for (j = 0; j < n; j++) row[j] *= mul[i * ldy + j];
        if (pad)
            for (j = 0; j < n; j++) y[i * ldy + j] = row[j];
    }
}

/* ==== 7. GEMM ========================================================================= */

/* The summation order (NUMERICAL CONTRACT above): blocks of ffn__kb(n) steps, each a
   chain of fused multiply-adds from zero; superblocks of ffn__ks(n) steps, each the sum
   of its first block plus each next one in turn; the total is the bias plus each
   superblock's sum in turn. A function of n alone, so every path, tiling and thread
   count computes the same bits. Shorter blocks are more accurate, longer ones faster
   (a block costs one more addition per output): 64 from n = 1024 on. */
static size_t ffn__kb(size_t n) { return n < 64 ? 8 : n < 256 ? 16 : n < 1024 ? 32 : 64; }
static size_t ffn__ks(size_t n) { return ffn__kb(n) < 32 ? 8 * ffn__kb(n) : 256; }

/* Element i of a weight of element type wt (FFN_F32, FFN_BF16, FFN_F16), as a float. */
static float ffn__wget(const void *w, int wt, size_t i)
{
    if (wt == FFN_BF16) return ffn__bf16_f32(((const uint16_t *)w)[i]);
    if (wt == FFN_F16) return ffn__f16_f32(((const uint16_t *)w)[i]);
    return ((const float *)w)[i];
}

/* bias + sum_k x[k] w[k * stride] in that order (w's elements of type wt, widened). */
static float ffn__dot(const float *x, const void *w, int wt, size_t stride, size_t n,
                      float bias)
{
    const size_t kb = ffn__kb(n), ks = ffn__ks(n);
    float total = bias, sup = 0.0f;
    size_t s0, b0, k;
    for (s0 = 0; s0 < n; s0 += ks) {
        for (b0 = s0; b0 < n && b0 < s0 + ks; b0 += kb) {
            float blk = 0.0f;
            for (k = b0; k < n && k < b0 + kb; k++)
                blk = FFN__FMAF(x[k], ffn__wget(w, wt, k * stride), blk);
            sup = b0 == s0 ? blk : sup + blk;
        }
        total = total + sup;
    }
    return total;
}

/* One Linear: y (rows, out) = x (rows, in) @ W^T + bias, optionally ReLU'd. W is
   either in nn.Linear layout or packed (ffn_pack_weight); every path takes this. */
struct ffn__isa;
typedef struct {
    const struct ffn__isa *isa;     /* the path */
    float *y;
    const float *x, *bias;          /* bias may be NULL */
    const void *w;
    int layout;                     /* FFN__W_*: how w is stored */
    int wt;                         /* its element type: FFN_F32, FFN_BF16, FFN_F16 */
    size_t so, si;                  /* not packed: (o, k) is w[o * so + k * si] */
    size_t rows, in, out;
    size_t kb;                      /* ffn__kb(in): the summation order's block */
    ffn__epi epi;                   /* on the finished y (none unless set) */
    int acc;                        /* 1: y's own values take the bias's place (y +=) */
} ffn__gemm;
/* A weight is packed (ffn_pack), or nn.Linear's (out, in), or its transpose (in, out)
   (Conv1D's, the backward's W^T), or strided: the last three packed on the fly, a k
   block of a column block at a time (float32 (out, in) and (in, out) by each path's
   fast packing, the others element by element). */
enum { FFN__W_OUT_IN = 0, FFN__W_PACKED = 1, FFN__W_IN_OUT = 2, FFN__W_STRIDED = 3 };

/* Bytes an element of a weight of dtype wt (FFN_F32, FFN_BF16 or FFN_F16). */
static size_t ffn__esize(int wt) { return wt == FFN_F32 ? sizeof(float) : sizeof(uint16_t); }

/* y[r,o] = b[o] + sum_k x[r,k] w[o,k], summed in ffn__dot's order; w[o,k] is
   w[o * in + k], w[k * out + o] (in, out), or in the packed layout panel o / 16, step
   k, lane o % 16. */
static void ffn__linear_scalar(const ffn__gemm *g)
{
    const size_t in = g->in, out = g->out;
    const int packed = g->layout == FFN__W_PACKED;
    const size_t stride = packed ? FFN__NR : g->si;
    const size_t esize = ffn__esize(g->wt);
    size_t r, o;
    for (r = 0; r < g->rows; r++)
        for (o = 0; o < out; o++) {
            const size_t first = packed ? o / FFN__NR * in * FFN__NR + o % FFN__NR : o * g->so;
            g->y[r * out + o] = ffn__dot(g->x + r * in, (const char *)g->w + first * esize, g->wt,
                                         stride, in,
                                         g->acc ? g->y[r * out + o] : g->bias ? g->bias[o] : 0.0f);
        }
    if (g->epi.relu) ffn__scalar_row_relu(g->y, g->y, g->rows * out);
    if (g->epi.act) g->epi.act(g->y, g->y, g->rows * out);
    if (g->epi.mul)
        for (r = 0; r < g->rows * out; r++) g->y[r] *= g->epi.mul[r];
}

FFNDEF size_t ffn_pack_floats(size_t in_features, size_t out_features)
{
    return ffn__pack_floats(in_features, out_features);
}

/* Packing, element by element: dst[(q * kb + k) * 16 + j] = w[(16 (p + q) + j) * in +
   pc + k] for q < np, k in [k0, kb), j < 16; zero where 16 (p + q) + j >= out. The SIMD
   paths transpose the full blocks of [0, k0) and leave the rest to this. */
static void ffn__pack_rest(float *FFN__RESTRICT dst, const float *FFN__RESTRICT w,
                           size_t in, size_t out, size_t p, size_t pc, size_t k0, size_t kb)
{
    const size_t o0 = p * FFN__NR;
    size_t j, k;
    for (j = 0; j < FFN__NR; j++)
        for (k = k0; k < kb; k++)
            dst[k * FFN__NR + j] = o0 + j < out ? w[(o0 + j) * in + pc + k] : 0.0f;
}

static void ffn__pack_scalar(float *dst, const float *w, size_t in, size_t out, size_t p,
                             size_t np, size_t pc, size_t kb)
{
    size_t q;
    for (q = 0; q < np; q++) ffn__pack_rest(dst + q * kb * FFN__NR, w, in, out, p + q, pc, 0, kb);
}

/* The packed layout of a weight whose element (o, k) is w[o * so + k * si] (in k steps,
   out outputs): ffn_pack_weight_strided, the backward's W^T and x^T, and a k block of an
   (in, out) weight packed on the fly (so = 1). */
static void ffn__pack_strided(float *packed, const float *w, size_t in, size_t out, size_t so,
                              size_t si)
{
    size_t p, k, j, k0, k1;
    /* 16 steps of k across all panels at a time: with so = 1 (an (in, out) weight) each
       source row is read once from end to end, not one line per panel pass. */
    for (k0 = 0; k0 < in; k0 = k1)
        for (k1 = in - k0 < 16 ? in : k0 + 16, p = 0; p * FFN__NR < out; p++) {
            const size_t n = out - p * FFN__NR < FFN__NR ? out - p * FFN__NR : FFN__NR;
            for (k = k0; k < k1; k++) {
                float *dst = packed + (p * in + k) * FFN__NR;
                const float *src = w + p * FFN__NR * so + k * si;
                if (so == 1 && n == FFN__NR) memcpy(dst, src, sizeof(float) * FFN__NR);
                else for (j = 0; j < n; j++) dst[j] = src[j * so];
                for (j = n; j < FFN__NR; j++) dst[j] = 0.0f;
            }
        }
}

/* Panels [p, p + np), k steps [pc, pc + kb) of a weight of element type wt whose
   element (o, k) is w[o * so + k * si], packed into dst of element type dt: the same
   bits where the types are equal, else through the float value (widened exactly, then
   rounded to nearest even). The 16-bit weights' packing, on the fly (dt FFN_F32) and
   ahead of time; zero past out. */
static void ffn__pack_any(void *dst, int dt, const void *w, int wt, size_t out, size_t so,
                          size_t si, size_t p, size_t np, size_t pc, size_t kb)
{
    size_t q, k, j;
    for (q = 0; q < np; q++)
        for (k = 0; k < kb; k++)
            for (j = 0; j < FFN__NR; j++) {
                const size_t o = (p + q) * FFN__NR + j, i = (q * kb + k) * FFN__NR + j;
                const size_t src = o < out ? o * so + (pc + k) * si : 0;
                if (dt == wt && dt != FFN_F32) {
                    ((uint16_t *)dst)[i] = o < out ? ((const uint16_t *)w)[src] : 0;
                } else {
                    const float v = o < out ? ffn__wget(w, wt, src) : 0.0f;
                    if (dt == FFN_F32) ((float *)dst)[i] = v;
                    else ((uint16_t *)dst)[i] = dt == FFN_BF16 ? ffn__f32_bf16(v) : ffn__f32_f16(v);
                }
            }
}

#if defined(FFN__HAS_AVX2) || defined(FFN__HAS_AVX512)
/* Packing and transposing on x86: 8 x 8 blocks through a ymm transpose (AVX-512F
   implies AVX2, so the avx512 path uses it too). dst[t * ldd + j] = src[j * lds + t] for
   t, j < 8. */
static FFN__INLINE FFN__TARGET_AVX2 void ffn__transpose8(float *dst, size_t ldd,
                                                         const float *src, size_t lds)
{
    __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + lds);
    __m256 r2 = _mm256_loadu_ps(src + 2 * lds), r3 = _mm256_loadu_ps(src + 3 * lds);
    __m256 r4 = _mm256_loadu_ps(src + 4 * lds), r5 = _mm256_loadu_ps(src + 5 * lds);
    __m256 r6 = _mm256_loadu_ps(src + 6 * lds), r7 = _mm256_loadu_ps(src + 7 * lds);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst + 0 * ldd, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(dst + 1 * ldd, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(dst + 2 * ldd, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(dst + 3 * ldd, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(dst + 4 * ldd, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(dst + 5 * ldd, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(dst + 6 * ldd, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(dst + 7 * ldd, _mm256_permute2f128_ps(s3, s7, 0x31));
}

/* Full panels 8 rows at a time along k (few streams for the prefetchers), then the
   k tail and the last, partial panel element by element. */
static FFN__TARGET_AVX2 void ffn__pack_x86(float *dst, const float *w, size_t in,
                                           size_t out, size_t p, size_t np, size_t pc,
                                           size_t kb)
{
    size_t q, j, k;
    for (q = 0; q < np; q++, dst += kb * FFN__NR) {
        const size_t o0 = (p + q) * FFN__NR, kfull = o0 + FFN__NR <= out ? kb - kb % 8 : 0;
        for (j = 0; j < FFN__NR; j += 8)
            for (k = 0; k < kfull; k += 8)
                ffn__transpose8(dst + k * FFN__NR + j, FFN__NR, w + (o0 + j) * in + pc + k, in);
        ffn__pack_rest(dst, w, in, out, p + q, pc, kfull, kb);
    }
}
#endif

#ifdef FFN__HAS_NEON
/* dst[t * ldd + j] = src[j * lds + t] for t, j < 4 */
static FFN__INLINE void ffn__transpose4(float *dst, size_t ldd, const float *src, size_t lds)
{
    float32x4_t r0 = vld1q_f32(src), r1 = vld1q_f32(src + lds);
    float32x4_t r2 = vld1q_f32(src + 2 * lds), r3 = vld1q_f32(src + 3 * lds);
    float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(r0, r1));
    float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(r0, r1));
    float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(r2, r3));
    float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(r2, r3));
    vst1q_f32(dst + 0 * ldd, vreinterpretq_f32_f64(vtrn1q_f64(t0, t2)));
    vst1q_f32(dst + 1 * ldd, vreinterpretq_f32_f64(vtrn1q_f64(t1, t3)));
    vst1q_f32(dst + 2 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(t0, t2)));
    vst1q_f32(dst + 3 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(t1, t3)));
}

static void ffn__pack_neon(float *dst, const float *w, size_t in, size_t out, size_t p,
                           size_t np, size_t pc, size_t kb)
{
    size_t q, j, k;
    for (q = 0; q < np; q++, dst += kb * FFN__NR) {
        const size_t o0 = (p + q) * FFN__NR, kfull = o0 + FFN__NR <= out ? kb - kb % 4 : 0;
        for (j = 0; j < FFN__NR; j += 4)
            for (k = 0; k < kfull; k += 4)
                ffn__transpose4(dst + k * FFN__NR + j, FFN__NR, w + (o0 + j) * in + pc + k, in);
        ffn__pack_rest(dst, w, in, out, p + q, pc, kfull, kb);
    }
}
#endif

static int ffn__pack_weight(float *packed, size_t packed_floats, const float *weight,
                            size_t in_features, size_t out_features)
{
    size_t wbytes, need, p;
    const ffn__isa *isa;
    if (!packed || !weight) return FFN_ERR_NULL;
    if (!in_features || !out_features) return FFN_ERR_ZERO_SIZE;
    need = ffn__pack_floats(in_features, out_features);
    if (!ffn__bytes(&wbytes, out_features, in_features) || !need) return FFN_ERR_OVERFLOW;
    if (packed_floats < need) return FFN_ERR_SCRATCH;
    if (ffn__overlap(packed, need * sizeof(float), weight, wbytes)) return FFN_ERR_ALIAS;
    isa = ffn__current();
    for (p = 0; p * FFN__NR < out_features; p++)
        isa->pack(packed + p * in_features * FFN__NR, weight, in_features, out_features, p,
                  1, 0, in_features);
    return FFN_OK;
}

static int ffn__pack_weight_strided(float *packed, size_t packed_floats, const float *weight,
                                    size_t in_features, size_t out_features,
                                    size_t stride_out, size_t stride_in)
{
    const size_t max = (size_t)-1, in = in_features, out = out_features;
    size_t a, b, need;
    if (!packed || !weight) return FFN_ERR_NULL;
    if (!in || !out || !stride_out || !stride_in) return FFN_ERR_ZERO_SIZE;
    need = ffn__pack_floats(in, out);
    if (!need || out - 1 > max / stride_out || in - 1 > max / stride_in) return FFN_ERR_OVERFLOW;
    a = (out - 1) * stride_out;     /* the span is a + b + 1 floats */
    b = (in - 1) * stride_in;
    if (a > max - b || a + b >= max / sizeof(float)) return FFN_ERR_OVERFLOW;
    if (packed_floats < need) return FFN_ERR_SCRATCH;
    if (ffn__overlap(packed, need * sizeof(float), weight, (a + b + 1) * sizeof(float)))
        return FFN_ERR_ALIAS;
    ffn__pack_strided(packed, weight, in, out, stride_out, stride_in);
    return FFN_OK;
}

FFNDEF int ffn_pack_weight(float *packed, size_t packed_floats, const float *weight,
                           size_t in_features, size_t out_features)
{
    return ffn__pack_weight(packed, packed_floats, weight, in_features, out_features);
}

FFNDEF int ffn_pack_weight_strided(float *packed, size_t packed_floats, const float *weight,
                                   size_t in_features, size_t out_features,
                                   size_t stride_out, size_t stride_in)
{
    return ffn__pack_weight_strided(packed, packed_floats, weight, in_features, out_features,
                                    stride_out, stride_in);
}

FFNDEF int ffn_pack_weight_in_out(float *packed, size_t packed_floats,
                                  const float *weight_in_out, size_t in_features,
                                  size_t out_features)
{
    return ffn__pack_weight_strided(packed, packed_floats, weight_in_out, in_features,
                                    out_features, 1, out_features);
}

/* ---- the SIMD paths ------------------------------------------------------
   How they work (the Goto/BLIS structure, see also the packed layout above):
   - A microkernel computes an m x (16 np) tile of y over kc steps of k: per step it
     loads one 16-wide row of each of np packed panels and, for each of the m rows,
     broadcasts x[i][k] and issues fused multiply-adds into accumulators that stay in
     registers. They hold one block's chain (the summation order above); at the end of
     each block the chain joins its superblock's sum, kept in registers where the
     register file has room for both (AVX-512) and in a tile on the stack otherwise,
     and each superblock's sum joins the total, which starts from the bias (first k
     block) or from the partial sums already in y (later k blocks; reloading a float is
     exact, so k blocking does not change any bit). The last k block stores with ReLU
     if asked (fc1 of the block: the hidden layer is written once, already ReLU'd).
   - The microkernel is written once (FFN__TILE_BODY) over a few vector primitives;
     each ISA defines them and instantiates it for its list of tile shapes.
   - Driver (ffn__gemm_loops): row blocks of FFN__MC -> column blocks of FFN__NB
     panels (also the threads' unit of work for few rows) -> k blocks of FFN__KC ->
     panels -> tiles down the rows, of nearly equal heights (32 rows: 7 7 6 6 6, not
     7 7 7 7 4: a short tile does fewer multiply-adds per weight loaded). An unpacked
     weight is packed on the fly, a column block's k block at a time, into a buffer on
     the stack.
   - Few rows (decode-like, rows <= MR) use wide tiles over several panels (1 x 64):
     the weight streams once, with enough independent accumulators to hide the FMA
     latency. Nothing is reused between their tiles, so a packed weight goes as one
     slab of all of k for the whole row of tiles, and on AVX-512 one row takes x four
     steps per load and asks for a large weight's lines ahead (FFN__OP_XPREF). One row
     with an unpacked weight packs 2 panels of a superblock at a time, which are still
     in L1 when the tile reads them.
   - Edges: rows are never padded (a tile reads only its own rows of x); a panel
     that runs past out_features computes into a local padded tile that is then
     copied out, so nothing outside any caller buffer is read or written
     (ffn__tile_edge, out of line). */

#if defined(__GNUC__) || defined(__clang__)
#define FFN__ALIGNED __attribute__((aligned(64)))
#else
#define FFN__ALIGNED
#endif

/* Fully unroll the loops over tile rows and vectors (constant trip counts), so the
   accumulators become registers. gcc -O2 does not do it by itself. */
#if defined(__clang__)
#define FFN__UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define FFN__UNROLL _Pragma("GCC unroll 16")
#else
#define FFN__UNROLL
#endif

/* The microkernel for M rows and NP panels (constants), in the primitives of the ISA
   being instantiated: FFN__VEC, a vector of FFN__VL floats; FFN__VLOAD, FFN__VBCAST
   (one float to every lane), FFN__VZERO, FFN__VFMA(a, b, c) = a * b + c rounded once,
   FFN__VADD, FFN__VSTORE, FFN__VRELU (v < 0 ? 0 : v, keeping NaN and -0.0); and
   FFN__SUM_REGS, 1 if the superblock sums live in registers beside the accumulators.
   Each y element is summed in ffn__dot's order: acc holds a block's chain, sum (or
   sumt) its superblock's, and tot the total, which starts from cin.
   The code is straight-line over the tile's vectors, each named by constant indices:
   FFN__EACH(OP, M, NP) writes OP(i, j) for every row i < M and vector j < NP * FFN__NV,
   row by row, j in order (FFN__EACH_J(OP, NP): row 0's). (Loops over them would need
   the compiler to unroll them all: gcc -O2 leaves some rolled, and an accumulator
   indexed by a variable then lives in memory.) Each OP still tests FFN__IN, which is
   then always true: until ffn.h 1.7 FFN__EACH wrote the ISA's largest tile for every
   tile and the tests folded the rest away, but the compiler still parsed all of it,
   which was most of a TU's compile time (README: Compile time). */
#define FFN__NV (FFN__NR / FFN__VL) /* vectors per 16-wide panel row */
#define FFN__NJ 16                  /* the most vectors in a tile row (NEON, 4 panels) */
/* Row i's panels 0 .. NP-1, each as the ISA's FFN__PANEL(OP, i, p): OP(i, j) for the
   FFN__NV vectors j of panel p. */
#define FFN__PANELS_1(OP, i) FFN__PANEL(OP, i, 0)
#define FFN__PANELS_2(OP, i) FFN__PANELS_1(OP, i) FFN__PANEL(OP, i, 1)
#define FFN__PANELS_3(OP, i) FFN__PANELS_2(OP, i) FFN__PANEL(OP, i, 2)
#define FFN__PANELS_4(OP, i) FFN__PANELS_3(OP, i) FFN__PANEL(OP, i, 3)
#define FFN__ROW(OP, i, NP) FFN__PANELS_##NP(OP, i)
#define FFN__ROWS_1(OP, NP) FFN__ROW(OP, 0, NP)
#define FFN__ROWS_2(OP, NP) FFN__ROWS_1(OP, NP) FFN__ROW(OP, 1, NP)
#define FFN__ROWS_3(OP, NP) FFN__ROWS_2(OP, NP) FFN__ROW(OP, 2, NP)
#define FFN__ROWS_4(OP, NP) FFN__ROWS_3(OP, NP) FFN__ROW(OP, 3, NP)
#define FFN__ROWS_5(OP, NP) FFN__ROWS_4(OP, NP) FFN__ROW(OP, 4, NP)
#define FFN__ROWS_6(OP, NP) FFN__ROWS_5(OP, NP) FFN__ROW(OP, 5, NP)
#define FFN__ROWS_7(OP, NP) FFN__ROWS_6(OP, NP) FFN__ROW(OP, 6, NP)
#define FFN__ROWS_8(OP, NP) FFN__ROWS_7(OP, NP) FFN__ROW(OP, 7, NP)
#define FFN__EACH(OP, M, NP) FFN__ROWS_##M(OP, NP)
#define FFN__EACH_J(OP, NP) FFN__ROW(OP, 0, NP)
#define FFN__IN(i, j) ((i) < ffn__m && (j) < ffn__nj)
#define FFN__T(t, i, j) ((t) + ((i) * ffn__nj + (j)) * FFN__VL)  /* vector (i, j) of a tile */
#define FFN__SUM(i, j) (FFN__SUM_REGS ? sum[i][j] : FFN__VLOAD(FFN__T(sumt, i, j)))
#define FFN__OP_ZERO(i, j) if (FFN__IN(i, j)) acc[i][j] = FFN__VZERO();
#define FFN__OP_WLOAD(i, j)                                                              \
    if ((j) < ffn__nj) {                                                                 \
        if (!FFN__PAIR16 || (int)ffn__wt != FFN_BF16)                                    \
            wv[j] = FFN__WLOAD(w + (j) / FFN__NV * ws + (j) % FFN__NV * FFN__VL);        \
        else if ((j) % 2 == 0)                                                           \
            FFN__VLOAD2_BF16(w + (j) / FFN__NV * ws, wv[j], wv[(j) + 1]);                \
    }
/* A panel row's two vectors of bfloat16 weights (FFN__NV == 2) from one load, where the
   path widens a pair cheaper than one vector at a time (FFN__PAIR16, AVX2: a shift and a
   mask of one load, instead of a zero-extension and a shift for each vector): fewer
   instructions per byte, more loads in flight at rows = 1. The pair's lanes come out
   permuted; the products and sums follow them, and FFN__UNPERM2 puts each chain's sums
   back in order before they leave the registers. Every output's chain is the same
   sequence of FMAs: the same bits. */
#define FFN__OP_UNPERM(i, j)                                                             \
    if (FFN__PAIR16 && (int)ffn__wt == FFN_BF16 && FFN__IN(i, j) && (j) % 2 == 0)        \
        FFN__UNPERM2(acc[i][j], acc[i][(j) + 1]);
/* A vector of weights, widened to float (exactly: the same products as the widened
   weight's float32 path). T, the tile's weight type: f32, bf16 or f16. */
#define FFN__WTYPE_f32 float
#define FFN__WTYPE_bf16 uint16_t
#define FFN__WTYPE_f16 uint16_t
#define FFN__WT_f32 FFN_F32
#define FFN__WT_bf16 FFN_BF16
#define FFN__WT_f16 FFN_F16
#define FFN__WLOAD(p)                                                                    \
    ((int)ffn__wt == FFN_BF16  ? FFN__VLOAD_BF16((const uint16_t *)(const void *)(p))    \
     : (int)ffn__wt == FFN_F16 ? FFN__VLOAD_F16((const uint16_t *)(const void *)(p))     \
                               : FFN__VLOAD((const float *)(const void *)(p)))
/* (the broadcast just before its row's multiply-adds: all broadcasts first would need
   more registers than there are) */
#define FFN__OP_FMA(i, j)                                                                \
    if (FFN__IN(i, j)) {                                                                 \
        if ((j) == 0) xi = FFN__VBCAST(x + (i) * ldx);                                   \
        acc[i][j] = FFN__VFMA(xi, wv[j], acc[i][j]);                                     \
    }
#define FFN__OP_SUM_SET(i, j)                                                            \
    if (FFN__IN(i, j)) {                                                                 \
        if (FFN__SUM_REGS) sum[i][j] = acc[i][j];                                        \
        else FFN__VSTORE(FFN__T(sumt, i, j), acc[i][j]);                                 \
    }
#define FFN__OP_SUM_ADD(i, j)                                                            \
    if (FFN__IN(i, j)) {                                                                 \
        if (FFN__SUM_REGS) sum[i][j] = FFN__VADD(sum[i][j], acc[i][j]);                  \
        else FFN__VSTORE(FFN__T(sumt, i, j), FFN__VADD(FFN__VLOAD(FFN__T(sumt, i, j)), acc[i][j])); \
    }
#define FFN__OP_TOT_SET(i, j)                                                            \
    if (FFN__IN(i, j)) FFN__VSTORE(FFN__T(tot, i, j), FFN__VLOAD(a->cin + (i) * ldin + (j) * FFN__VL));
#define FFN__OP_TOT_ADD(i, j)                                                            \
    if (FFN__IN(i, j))                                                                   \
        FFN__VSTORE(FFN__T(tot, i, j), FFN__VADD(FFN__VLOAD(FFN__T(tot, i, j)), FFN__SUM(i, j)));
#define FFN__OP_OUT(i, j)                                                                \
    if (FFN__IN(i, j))                                                                   \
        FFN__VSTORE(c + (i) * ldc + (j) * FFN__VL,                                       \
                    FFN__VADD(FFN__VLOAD(FFN__T(tot, i, j)), FFN__SUM(i, j)));
#define FFN__OP_OUT_RELU(i, j)                                                           \
    if (FFN__IN(i, j))                                                                   \
        FFN__VSTORE(c + (i) * ldc + (j) * FFN__VL,                                       \
                    FFN__VRELU(FFN__VADD(FFN__VLOAD(FFN__T(tot, i, j)), FFN__SUM(i, j))));
/* A tile of 4 rows or more (1-3 panels, each weight row used by every row of the
   tile) asks for each panel's row FFN__WPREF_STEPS (48) ahead: the hardware
   prefetcher alone brings it too late, on the first pass over a slice above all,
   which comes from L3. In its last 48 steps it asks for the slab's first rows instead,
   which the next tile down reads first: no address it forms leaves the slab (past it,
   a pointer would be undefined behaviour even unread), at no cost measured (README,
   Performance).
   A tile of fewer rows streams 4 panels, each weight used once: there the hardware
   prefetcher keeps up by itself, and software prefetches only take load slots from
   the weight's own loads (measured: README, Performance). And the output
   tile's lines before the last superblock: stores to lines that are not in cache hold
   up the stores behind them (the sums') until they arrive. */
#define FFN__WPREF_STEPS 48
#if defined(__GNUC__) || defined(__clang__)
#define FFN__OP_WPREF(i, j)                                                              \
    if (ffn__m > 3 && (j) < ffn__nj && (j) % FFN__NV == 0)                               \
        __builtin_prefetch(w + (j) / FFN__NV * ws + wpref, 0, 3);
#define FFN__OP_CPREF(i, j)                                                              \
    if (FFN__IN(i, j) && (j) * FFN__VL % 16 == 0) __builtin_prefetch(c + (i) * ldc + (j) * FFN__VL, 1, 3);
#else
#define FFN__OP_WPREF(i, j) (void)wpref;
#define FFN__OP_CPREF(i, j)
#endif
/* Where the path sets FFN__XPREF, the one-row loop over a packed weight also asks for
   each panel's lines FFN__XPREF bytes ahead (those of the four steps that far on, never
   past the tile's slab). At one row a core keeps only so many vector operations waiting
   on loads, fewer the more each cache line feeds (a 16-bit line: two widenings and two
   multiply-adds), and a prefetch waits on nothing: on an Intel core it took bfloat16
   from 80-88% of the STREAM read to 99-120% (README, Performance). */
#define FFN__OP_XPREF(i, j)                                                              \
    if ((j) < ffn__nj && (j) % FFN__NV == 0) {                                           \
        const char *ffn__p = (const char *)(w + (j) / FFN__NV * ws) + FFN__XPREF;        \
        FFN__PREFETCH(ffn__p);                                                           \
        FFN__PREFETCH(ffn__p + 64);                                                      \
        if (sizeof(ffn__wtype) == 4) {          /* (four steps: 256 bytes, not 128) */   \
            FFN__PREFETCH(ffn__p + 128);                                                 \
            FFN__PREFETCH(ffn__p + 192);                                                 \
        }                                                                                \
    }
/* One row, where the ISA sets FFN__XLANES (AVX-512), or with 16-bit weights where it
   widens bfloat16 in pairs (FFN__PAIR16, AVX2; float16 there too, float32 keeps its
   broadcasts, as NEON does): x four steps at a time, each step's x spread from a register
   (FFN__VLANE4) instead of broadcast from memory. The weight streams through once, and
   loads are what limits this tile: at rows = 1 a core keeps only so many vector
   operations waiting on them, and 16-bit weights need a widening for every multiply-add.
   With pairs, each weight vector's multiply-add follows its load (all loads first: 8
   widened vectors live beside 8 sums, and gcc spills on AVX2's 16 registers). Every
   chain: the same bits. */
#define FFN__OP_FMA_XI(i, j) if (FFN__IN(i, j)) acc[i][j] = FFN__VFMA(xi, wv[j], acc[i][j]);
#define FFN__OP_WLOAD_FMA_XI(i, j) FFN__OP_WLOAD(i, j) FFN__OP_FMA_XI(i, j)
#define FFN__XI_OPS_0(NP) FFN__EACH_J(FFN__OP_WLOAD, NP) FFN__EACH_J(FFN__OP_FMA_XI, NP)
#define FFN__XI_OPS_1(NP) FFN__EACH_J(FFN__OP_WLOAD_FMA_XI, NP)
#define FFN__XI_OPS_(pair, NP) FFN__XI_OPS_##pair(NP)
#define FFN__XI_OPS(pair, NP) FFN__XI_OPS_(pair, NP)    /* (pair: FFN__PAIR16, 0 or 1) */
#define FFN__STEP_XI(v, NP) xi = (v); FFN__XI_OPS(FFN__PAIR16, NP) w += FFN__NR;
#define FFN__STEP4_XI(NP)                                                                \
    {                                                                                    \
        const FFN__VEC xq = FFN__VBCAST4(x);                                             \
        const FFN__VEC x0 = FFN__VLANE4(xq, 0), x1 = FFN__VLANE4(xq, 1);                 \
        const FFN__VEC x2 = FFN__VLANE4(xq, 2), x3 = FFN__VLANE4(xq, 3);                 \
        FFN__VEC xi;                                                                     \
        FFN__STEP_XI(x0, NP) FFN__STEP_XI(x1, NP)                                        \
        FFN__STEP_XI(x2, NP) FFN__STEP_XI(x3, NP)                                        \
    }
/* acc = the chain of fused multiply-adds from zero over steps [k, e) (x and w move) */
#define FFN__CHAIN(e, M, NP)                                                             \
    FFN__EACH(FFN__OP_ZERO, M, NP)                                                       \
    end = (e);                                                                           \
    if (ffn__m == 1 && (FFN__XLANES || (FFN__PAIR16 && (int)ffn__wt != FFN_F32))) {      \
        for (; k < xpref_end && end - k >= 4; k += 4, x += 4) {                          \
            FFN__STEP4_XI(NP)                                                            \
            FFN__EACH_J(FFN__OP_XPREF, NP)                                               \
        }                                                                                \
        for (; end - k >= 4; k += 4, x += 4) FFN__STEP4_XI(NP)                           \
    }                                                                                    \
    while (k < end) {       /* (FFN__OP_WPREF's offset: ahead, else wrapped) */        \
        const size_t ffn__d = FFN__WPREF_STEPS;                                          \
        const size_t e1 = kc > ffn__d && k + ffn__d < kc && end > kc - ffn__d            \
                              ? kc - ffn__d : end;                                       \
        const ptrdiff_t wpref = (kc <= ffn__d ? 0 : k + ffn__d < kc ? (ptrdiff_t)ffn__d  \
                                 : (ptrdiff_t)ffn__d - (ptrdiff_t)kc) * FFN__NR;         \
        for (; k < e1; k++, x++, w += FFN__NR) {                                         \
            FFN__VEC xi;                                                                 \
            FFN__EACH_J(FFN__OP_WLOAD, NP)                                               \
            FFN__EACH(FFN__OP_FMA, M, NP)                                                \
            FFN__EACH_J(FFN__OP_WPREF, NP)                                               \
        }                                                                                \
    }                                                                                    \
    FFN__EACH(FFN__OP_UNPERM, M, NP)
#define FFN__TILE_BODY(M, NP, T)                                                          \
    {                                                                                    \
        /* (ffn__fits: a tile larger than the ISA's largest does not compile) */         \
        enum { ffn__m = (M), ffn__nj = (NP) * FFN__NV,                                   \
               ffn__fits = 1 / FFN__EACH_FITS(M, (NP) * FFN__NV) };                       \
        FFN__VEC acc[FFN__MR_MAX][FFN__NJ], sum[FFN__MR_MAX][FFN__NJ], wv[FFN__NJ];      \
        /* (the tiles as large as any path's largest: the vectors of FFN__EACH that      \
           FFN__IN rules out then have addresses in bounds too, for analysers) */        \
        float sumt[FFN__MR_MAX * FFN__NJ * FFN__VL] FFN__ALIGNED,                        \
            tot[FFN__MR_MAX * FFN__NJ * FFN__VL] FFN__ALIGNED;                           \
        typedef FFN__WTYPE_##T ffn__wtype;                                                \
        enum { ffn__wt = FFN__WT_##T,       /* (FFN__WLOAD's choice, made at compile time) */ \
               ffn__xpref_steps = FFN__XPREF / (FFN__NR * sizeof(ffn__wtype)) };          \
        const float *x = a->x;                                                           \
        const ffn__wtype *w = (const ffn__wtype *)a->w;                                  \
        const size_t kc = a->kc, kb = a->kb, ks = a->ks, ldx = a->ldx, ws = a->wstride;  \
        const size_t ldc = a->ldc, ldin = a->ldcin;                                      \
        float *c = a->c;                                                                 \
        size_t k = 0, end;                                                               \
        /* (FFN__OP_XPREF while k < xpref_end: the lines it asks for are the slab's) */  \
        const size_t xpref_end = FFN__XPREF && a->stream && kc > 7 + ffn__xpref_steps    \
                                     ? kc - 7 - ffn__xpref_steps : 0;                    \
        FFN__EACH(FFN__OP_TOT_SET, M, NP)                                                \
        for (;;) {                                                                       \
            const size_t s1 = kc - k < ks ? kc : k + ks;            /* superblock [k, s1) */ \
            if (s1 == kc) { FFN__EACH(FFN__OP_CPREF, M, NP) }                            \
            FFN__CHAIN(s1 - k < kb ? s1 : k + kb, M, NP)            /* its first block */ \
            FFN__EACH(FFN__OP_SUM_SET, M, NP)                                            \
            while (k < s1) {                                                             \
                FFN__CHAIN(s1 - k < kb ? s1 : k + kb, M, NP)                             \
                FFN__EACH(FFN__OP_SUM_ADD, M, NP)                                        \
            }                                                                            \
            if (k == kc) break;                                                          \
            FFN__EACH(FFN__OP_TOT_ADD, M, NP)                                            \
        }                                                                                \
        if (a->relu) {                                                                   \
            FFN__EACH(FFN__OP_OUT_RELU, M, NP)                                           \
        } else {                                                                         \
            FFN__EACH(FFN__OP_OUT, M, NP)                                                \
        }                                                                                \
    }

/* Instantiates the microkernel as FFN__ISA##_T_MxNP for every shape of FFN__TILES and
   weight type T, and FFN__ISA##_T_kernel(m, np, a), which runs the one asked for. A
   switch, not pointers to the tiles: called once each, the tiles are inlined into it,
   and so compiled they stream cold weights faster at rows = 1 (by 5% with gcc 12; README,
   "Performance"). */
#define FFN__TILE_FN(M, NP, T)                                                           \
    static FFN__VTARGET void FFN__NAME(FFN__ISA, _##T##_##M##x##NP)(const ffn__kargs *a) \
    FFN__TILE_BODY(M, NP, T)
#define FFN__TILE_CASE(M, NP, T)                                                         \
    case (M) * 8 + (NP): FFN__NAME(FFN__ISA, _##T##_##M##x##NP)(a); return;
#define FFN__TILE_FN_f32(M, NP) FFN__TILE_FN(M, NP, f32)
#define FFN__TILE_FN_bf16(M, NP) FFN__TILE_FN(M, NP, bf16)
#define FFN__TILE_FN_f16(M, NP) FFN__TILE_FN(M, NP, f16)
#define FFN__TILE_CASE_f32(M, NP) FFN__TILE_CASE(M, NP, f32)
#define FFN__TILE_CASE_bf16(M, NP) FFN__TILE_CASE(M, NP, bf16)
#define FFN__TILE_CASE_f16(M, NP) FFN__TILE_CASE(M, NP, f16)
#define FFN__DEFINE_KERNEL(T)                                                            \
    FFN__TILES(FFN__TILE_FN_##T)                                                         \
    static void FFN__NAME(FFN__ISA, _##T##_kernel)(int m, int np, const ffn__kargs *a)   \
    {                                                                                    \
        switch (m * 8 + np) {                                                            \
        FFN__TILES(FFN__TILE_CASE_##T)                                                   \
        default: FFN_ASSERT(0 && "ffn: no such tile");                                   \
        }                                                                                \
    }
#define FFN__DEFINE_KERNELS()                                                            \
    FFN__DEFINE_KERNEL(f32) FFN__DEFINE_KERNEL(bf16) FFN__DEFINE_KERNEL(f16)

/* ffn__isa's widen on the path: a 16-bit weight's slab widened once, for many rows. */
#define FFN__DEFINE_WIDEN()                                                              \
    static FFN__VTARGET void FFN__NAME(FFN__ISA, _widen)(float *dst, const uint16_t *src, \
                                                        int wt, size_t n)               \
    {                                                                                    \
        size_t i;                                                                        \
        if (wt == FFN_BF16)                                                              \
            for (i = 0; i < n; i += FFN__VL) FFN__VSTORE(dst + i, FFN__VLOAD_BF16(src + i)); \
        else                                                                             \
            for (i = 0; i < n; i += FFN__VL) FFN__VSTORE(dst + i, FFN__VLOAD_F16(src + i)); \
    }
#define FFN__KERNELS(isa) {isa##_f32_kernel, isa##_bf16_kernel, isa##_f16_kernel}

/* -- the driver ------------------------------------------------------------- */

/* Blocking (for 32-48 KiB of L1d and 512 KiB-2 MiB of L2 per core):
   FFN__KC   k block with a packed weight. A tile streams its kc x 16 panel slices
             from L2 (64 bytes per k step, 6 cycles of FMAs: L2 keeps up easily);
             long blocks mean fewer reloads of the partial sums and kernel calls.
   FFN__MC   row block: its x rows stay in L2/L3 while all column blocks use them;
             an unpacked weight is packed once per row block.
   FFN__XPREF_MIN  the least packed weight (bytes) that one row asks for ahead, where
             the path sets FFN__XPREF: a smaller one is likely in L2 already, where
             prefetches only take load slots (1 MB of float32: 0.89x with them).
   FFN_STACK_FLOATS  the stack buffer into which 16-bit weights are widened for many
             rows, and the unpacked calls pack their weight (in FFN__PACK_FLOATS of it:
             larger slabs ran them slower at few rows, README): k blocks of up to
             FFN__KC, as many as fit of the widest tile's panels (one: AVX2's and NEON's
             main tiles; two: AVX-512's), or of FFN__NB panels (rows < MR); one row packs
             2 panels of one superblock only. 128 KiB by default on x86-64 builds
             with the AVX-512 path where a thread's default stack is 512 KiB or more
             (glibc, macOS, Windows): AVX-512's two panels of a 16-bit weight get
             FFN__KC's 1024 steps, not 512 (README, Performance). 64 KiB elsewhere:
             musl's threads get 128 KiB of stack. Smaller works too, a little slower,
             down to one panel of one superblock (16 x 256 floats).
   k blocks always start at a superblock, so that a kernel call sums whole ones. */
#define FFN__KC 1024
#define FFN__MC 512
#define FFN__XPREF_MIN ((size_t)4 << 20)
#define FFN__SLAB_FLOATS 16384      /* 64 KiB: the default, and the unpacked calls' most */
#ifndef FFN_STACK_FLOATS
#if defined(FFN__HAS_AVX512) && (defined(__x86_64__) || defined(_M_X64)) &&             \
    (defined(__GLIBC__) || defined(__APPLE__) || defined(_WIN32))
#define FFN_STACK_FLOATS (2 * FFN__SLAB_FLOATS)
#else
#define FFN_STACK_FLOATS FFN__SLAB_FLOATS
#endif
#endif
#define FFN__KS_MAX 256             /* the longest superblock (ffn__ks) */
#define FFN__WBUF (FFN_STACK_FLOATS < FFN__NR * FFN__KS_MAX ? FFN__NR * FFN__KS_MAX \
                                                            : FFN_STACK_FLOATS)
#define FFN__PACK_FLOATS (FFN__WBUF < FFN__SLAB_FLOATS ? FFN__WBUF : FFN__SLAB_FLOATS)

static const float ffn__zeros[FFN__NB * FFN__NR] = {0};

/* A k block of panels ready for the kernel: k in [pc, pc + kb); panel p0 + q's
   kb x 16 slice starts at w + q * ws. */
typedef struct {
    size_t p0, pc, kb, ws;
    const void *w;
    int wt;                 /* its element type (a weight packed on the fly: FFN_F32) */
    int stream;             /* the caller's packed weight, read once (one row) */
} ffn__slab;

/* Rows [r0, r0 + mb) x the slab's np panels, in t tiles of nearly equal height (h or
   h + 1 rows, at most MR), rows innermost (a panel slice stays in cache while the rows
   run over it), as many panels per tile as the taller one's registers allow. A common
   tile only places itself and calls the kernel (the invariants in locals: the kernel
   could write anything it can reach, as far as the compiler knows): a few-rows call
   runs a tile per 64 columns, and the cost of the loops is per tile. */
static void ffn__tiles(const ffn__gemm *g, const ffn__slab *s, size_t r0, size_t mb,
                       size_t np)
{
    const ffn__isa *isa = g->isa;
    const size_t mr = (size_t)isa->mr, in = g->in, ldy = g->out, ws = s->ws;
    const size_t col0 = s->p0 * FFN__NR;
    const float *x = g->x + s->pc, *bias = g->bias;
    const char *w = (const char *)s->w;
    const size_t esize = ffn__esize(s->wt);
    float *y = g->y;
    const int sums = s->pc || g->acc;   /* cin: y's partial sums, not the bias row */
    /* the last k block's epilogue (but ReLU, in the kernel's store): out of line */
    const int last = s->pc + s->kb == in;
    const ffn__epi *e = last && (g->epi.act || g->epi.mul) ? &g->epi : NULL;
    const ffn__kernel_fn kernel = isa->kernel[s->wt];
    size_t t = 1, h = mb, big = 0, i, r, most, q, n;     /* (no division for one tile) */
    ffn__kargs a;
    if (mb > mr) {
        t = (mb + mr - 1) / mr;
        h = mb / t;
        big = mb % t;
    }
    a.kc = s->kb;
    a.kb = g->kb;
    a.ks = ffn__ks(in);
    a.ldx = in;
    a.wstride = ws;
    a.relu = g->epi.relu && last;
    a.stream = s->stream;
    most = isa->np[big ? h + 1 : h];
    for (q = 0; q < np; q += n) {
        const size_t col = col0 + q * FFN__NR;
        n = np - q < most ? np - q : most;
        for (i = 0, r = r0; i < t; r += h + (i < big), i++) {
            const int m = (int)(h + (i < big));
            a.x = x + r * in;
            a.w = w + q * ws * esize;
            a.c = y + r * ldy + col;
            a.ldc = ldy;
            a.cin = sums ? a.c : bias ? bias + col : ffn__zeros;
            a.ldcin = sums ? ldy : 0;
            if (e || col + n * FFN__NR > ldy) {
                ffn__tile_edge(kernel, &a, m, (int)n, ldy - col, e,
                               e && e->mul ? e->mul + r * ldy + col : NULL);
                continue;
            }
            kernel(m, (int)n, &a);
        }
    }
}

/* A block size that cuts n into nearly equal blocks of at most max (no thin leftover
   block), each a multiple of unit (but the last); unit is a power of two, and max a
   multiple of it unless n <= max. */
static size_t ffn__even_split(size_t n, size_t max, size_t unit)
{
    size_t blocks, b;
    if (n <= max) return n;     /* (one block, without the divisions: few-rows calls are short) */
    blocks = (n + max - 1) / max;
    b = (n + blocks - 1) / blocks;
    b = (b + unit - 1) & ~(unit - 1);
    return b < max ? b : max;
}

/* Rows [r0, r1) x panels [p0, p1) of y: row blocks of FFN__MC, then column blocks of
   FFN__NB panels (the last one of the range may be shorter), then k blocks. x is read
   in place; its row block stays in L2/L3 for all column blocks, and a column block's
   partial sums stay in L1/L2 over its k blocks. This is the one place that tells a
   packed weight from one packed on the fly: wbuf (NULL for packed weights) gets npk
   panels x kc at a time, as many panels as the widest tile in use, once per row block. */
static void ffn__gemm_loops(const ffn__gemm *g, size_t r0, size_t r1, size_t p0,
                            size_t p1, float *wbuf)
{
    const size_t in = g->in;
    const int mr = g->isa->mr, one = r1 - r0 <= (size_t)mr;
    /* a 16-bit packed weight, for more rows than a tile: each slab widened into wbuf
       once, then read as float by every row (the widening costs the kernel load slots) */
    const int widen = g->layout == FFN__W_PACKED && g->wt != FFN_F32 && !one;
    const int packed = g->layout == FFN__W_PACKED && !widen;
    const int want = packed || r1 - r0 < (size_t)mr ? FFN__NB : g->isa->np[mr];
    const size_t ks = ffn__ks(in);
    /* Panels per slab (npk) and its k block (kc, superblocks whole):
       - packed and one tile high (decoding): nothing is reused between tiles, so the
         whole row of tiles is one slab over all of k (the loops below cost as much per
         slab as a short tile's own work);
       - packed otherwise: a column block, k blocks of up to FFN__KC;
       - packed on the fly: as many panels as the widest tile, each getting at least a
         superblock of the buffer; but a single row reads each weight once, right after
         packing it, and 2 panels of a superblock (32 KB at most) are still in L1 then. */
    const int row = packed && one;
    const size_t bstep = row ? p1 - p0 : FFN__NB;
    const size_t esize = ffn__esize(g->wt);
    size_t npk = row ? bstep : (size_t)want, kmax = row ? in : FFN__KC, kc, ic, b;
    ffn__slab s;
    s.stream = row && in * g->out * esize >= FFN__XPREF_MIN;
    if (!packed) {
        const size_t buf = widen ? FFN__WBUF : FFN__PACK_FLOATS;
        const size_t fit = buf / (FFN__NR * ks), most = r1 - r0 == 1 ? 2 : (size_t)want;
        npk = fit >= most ? most : fit;
        kmax = r1 - r0 == 1 ? ks : buf / (FFN__NR * npk) / ks * ks;
        if (kmax > FFN__KC) kmax = FFN__KC;
    }
    kc = ffn__even_split(in, kmax, ks);
    for (ic = r0; ic < r1; ic += FFN__MC) {
        const size_t mb = r1 - ic < FFN__MC ? r1 - ic : FFN__MC;
        for (b = p0; b < p1; b += bstep) {
            const size_t pend = p1 - b < bstep ? p1 : b + bstep;
            for (s.pc = 0; s.pc < in; s.pc += kc) {
                s.kb = in - s.pc < kc ? in - s.pc : kc;
                for (s.p0 = b; s.p0 < pend; s.p0 += npk) {
                    const size_t np = pend - s.p0 < npk ? pend - s.p0 : npk;
                    if (packed) {
                        s.w = (const char *)g->w + (s.p0 * in + s.pc) * FFN__NR * esize;
                        s.ws = in * FFN__NR;
                        s.wt = g->wt;
                    } else {
                        const size_t o0 = s.p0 * FFN__NR, nw = np * FFN__NR;
                        s.wt = FFN_F32;
                        if (widen) {
                            size_t q;
                            for (q = 0; q < np; q++) {
                                const uint16_t *src = (const uint16_t *)g->w;
                                g->isa->widen(wbuf + q * s.kb * FFN__NR,
                                              src + ((s.p0 + q) * in + s.pc) * FFN__NR, g->wt,
                                              s.kb * FFN__NR);
                            }
                        } else if (g->wt != FFN_F32 || g->layout == FFN__W_STRIDED)
                            ffn__pack_any(wbuf, FFN_F32, g->w, g->wt, g->out, g->so, g->si,
                                          s.p0, np, s.pc, s.kb);
                        else if (g->layout == FFN__W_IN_OUT)   /* k block pc, outputs o0.. */
                            ffn__pack_strided(wbuf, (const float *)g->w + s.pc * g->out + o0,
                                              s.kb, g->out - o0 < nw ? g->out - o0 : nw, 1, g->out);
                        else g->isa->pack(wbuf, (const float *)g->w, in, g->out, s.p0, np, s.pc,
                                          s.kb);
                        s.w = wbuf;
                        s.ws = s.kb * FFN__NR;
                    }
                    ffn__tiles(g, &s, ic, mb, np);
                }
            }
        }
    }
}

/* Only the unpacked calls need the packing buffer on their stack (out of line: a
   compiler that inlines it gives every call the buffer). */
static FFN__NOINLINE void ffn__gemm_unpacked(const ffn__gemm *g, size_t r0, size_t r1,
                                             size_t p0, size_t p1)
{
    float wbuf[FFN__WBUF] FFN__ALIGNED;
    ffn__gemm_loops(g, r0, r1, p0, p1, wbuf);
}

static size_t ffn__panels(const ffn__gemm *g) { return (g->out + FFN__NR - 1) / FFN__NR; }

/* ---- threads: the schedule, and who runs it ------------------------------------
   A call's layers are cut into phases, each done before the next starts (a barrier),
   and each phase into tasks of nearly equal flops, at most one per thread, every task
   a rectangle of y: a range of rows x a range of panels (16 output features) of each
   of the phase's layers. Which task, tile shape or block computes an element never
   changes its bits: the summation order is a function of K alone (k is not split
   between tasks: a k split would need each superblock's sum kept apart until they
   are added in order, more memory and another pass, and rows x panels already give
   every shape of the bench an even split, tests/test_schedule.c).
   - Many rows (at least FFN__FUSE_ROWS per thread): one phase, tasks of rows through
     all the layers (a task's block of the hidden layer stays in its cache; no
     barrier).
   - Otherwise a phase per layer (layers that read the same x into the same width, the
     gate and the up projections, share one), each split into pr row ranges x pc panel
     ranges (units of FFN__NB panels, the widest tile, or of 1 where that splits more
     evenly): of the grids of at most T tasks, one whose busiest task has the fewest
     flops (within 1/64), and of those the one that reads the least (x once per column
     range, the weights once per row range).
   - A task has at least FFN__TASK_WORK units of work, flops plus FFN__WEIGHT_COST per
     weight read (a weight streamed from memory costs about as much as that many flops
     of a core): T is capped where the work is too small to pay for more threads.
   ffn__schedule is the one place that decides it: ffn__run runs what it returns, and
   tests/test_schedule.c checks it for every shape of the bench and T = 1..64. */
#ifndef FFN__FUSE_ROWS
#define FFN__FUSE_ROWS 256
#endif
#ifndef FFN__TASK_WORK
#define FFN__TASK_WORK 524288.0
#endif
#ifndef FFN__WEIGHT_COST
#define FFN__WEIGHT_COST 40.0
#endif
#define FFN__MAX_THREADS 1024   /* (more threads than any machine gives one call) */

typedef struct {
    int l0, l1;         /* layers [l0, l1) */
    int pr, pc;         /* task i: row range i / pc of pr, panel range i % pc of pc */
    int cu;             /* panels per column unit */
} ffn__phase;

typedef struct {
    int nphase;
    int most;           /* the most tasks of any phase */
    ffn__phase ph[3];
} ffn__sched;

/* Part i of n nearly equal parts of [0, total): [ffn__cut(total, n, i),
   ffn__cut(total, n, i + 1)), the first ones the larger (ceil(total i / n), without
   overflow). */
static size_t ffn__cut(size_t total, size_t n, size_t i)
{
    return total / n * i + (total % n * i + n - 1) / n;
}

/* Phase ph's split (layers [l0, l1), a grid of pr x pc tasks) for t threads. */
static void ffn__grid(ffn__phase *ph, const ffn__gemm *g, int l0, int l1, int t)
{
    const size_t rows = g[l0].rows, out = g[l0].out, panels = ffn__panels(&g[l0]);
    const double nl = (double)(l1 - l0), in = (double)g[l0].in;
    const double work = nl * in * (2.0 * (double)rows + FFN__WEIGHT_COST) * (double)out;
    const double most = work / FFN__TASK_WORK < (double)t ? work / FFN__TASK_WORK : (double)t;
    const size_t cap = most < 1.0 ? 1 : (size_t)most;
    double mmin = 0.0, bt = 0.0;
    size_t bp = 0;
    int pass, k;
    ph->l0 = l0;
    ph->l1 = l1;
    ph->pr = ph->pc = ph->cu = 1;
    /* pass 0: the fewest cells (rows x output features) in the busiest task; pass 1:
       of the grids within 1/64 of that, the least traffic, then the fewest tasks, the
       unit of FFN__NB panels first */
    for (pass = 0; pass < 2; pass++)
        for (k = 0; k < 2; k++) {
            const size_t cu = k ? 1 : FFN__NB, units = (panels + cu - 1) / cu;
            size_t pr;
            for (pr = 1; pr <= cap && pr <= rows; pr++) {
                size_t pc = cap / pr < units ? cap / pr : units, c, rmax, cmax;
                double m, traffic;
                c = (units + pc - 1) / pc;        /* units in the largest column range */
                pc = (units + c - 1) / c;         /* the fewest ranges that large */
                rmax = (rows + pr - 1) / pr;      /* rows in the largest row range */
                cmax = c * cu * FFN__NR < out ? c * cu * FFN__NR : out;
                m = (double)rmax * (double)cmax;
                if (pass == 0) {
                    if (!(mmin > 0.0) || m < mmin) mmin = m;
                    continue;
                }
                if (m > mmin + mmin / 64.0) continue;
                traffic = (double)pc * (double)rows + (double)pr * (double)out;
                if (bp == 0 || traffic < bt || (!(traffic > bt) && pr * pc < bp)) {
                    bt = traffic;
                    bp = pr * pc;
                    ph->pr = (int)pr;
                    ph->pc = (int)pc;
                    ph->cu = (int)cu;
                }
            }
        }
}

/* The schedule of layers g[0..n) (each reading what the ones before wrote) on at most
   `threads` threads. */
static void ffn__schedule(ffn__sched *s, const ffn__gemm *g, int n, int threads)
{
    const size_t rows = g[0].rows;
    int l0, l1;
    if (threads > FFN__MAX_THREADS) threads = FFN__MAX_THREADS;
    s->nphase = 0;
    s->most = 1;
    if (threads <= 1 || rows / (size_t)threads >= FFN__FUSE_ROWS) {
        double flops = 0.0, most;
        int i;
        for (i = 0; i < n; i++) flops += 2.0 * (double)rows * (double)g[i].in * (double)g[i].out;
        most = flops / FFN__TASK_WORK < (double)threads ? flops / FFN__TASK_WORK : (double)threads;
        s->ph[0].l0 = 0;
        s->ph[0].l1 = n;
        s->ph[0].pr = most < 1.0 ? 1 : (int)most;
        s->ph[0].pc = s->ph[0].cu = 1;
        s->nphase = 1;
        s->most = s->ph[0].pr;
        return;
    }
    for (l0 = 0; l0 < n; l0 = l1) {
        ffn__phase *ph = &s->ph[s->nphase++];
        for (l1 = l0 + 1; l1 < n && g[l1].x == g[l0].x && g[l1].in == g[l0].in &&
                          g[l1].out == g[l0].out;
             l1++) {}
        ffn__grid(ph, g, l0, l1, threads);
        if (ph->pr * ph->pc > s->most) s->most = ph->pr * ph->pc;
    }
}

/* Task i of phase ph: rows [*r0, *r1) x panels [*p0, *p1) of layer l (never empty:
   pr <= rows and pc <= the layer's units of cu panels, and only the last unit can be
   short). */
static void ffn__task_range(const ffn__phase *ph, const ffn__gemm *g, int l, int i,
                            size_t *r0, size_t *r1, size_t *p0, size_t *p1)
{
    const size_t pr = (size_t)ph->pr, pc = (size_t)ph->pc, cu = (size_t)ph->cu;
    const size_t ir = (size_t)i / pc, ic = (size_t)i % pc;
    const size_t panels = ffn__panels(&g[l]), units = (panels + cu - 1) / cu;
    *r0 = ffn__cut(g[l].rows, pr, ir);
    *r1 = ffn__cut(g[l].rows, pr, ir + 1);
    *p0 = ffn__cut(units, pc, ic) * cu;
    *p1 = ffn__cut(units, pc, ic + 1) * cu;
    if (*p1 > panels) *p1 = panels;
}

/* What a task needs: the layers and its phase. */
typedef struct {
    const ffn__gemm *g;
    const ffn__phase *ph;
} ffn__work;

/* Task i of a phase: its rows, FFN__MC at a time through the phase's layers (that part
   of a hidden layer stays in cache from one layer to the next), each layer on the
   task's panels. */
static void ffn__task(void *arg, int i)
{
    const ffn__work *w = (const ffn__work *)arg;
    size_t r0, r1, p0, p1, r, re;
    int l;
    ffn__task_range(w->ph, w->g, w->ph->l0, i, &r0, &r1, &p0, &p1);
    for (r = r0; r < r1; r = re) {
        re = r1 - r < FFN__MC ? r1 : r + FFN__MC;
        for (l = w->ph->l0; l < w->ph->l1; l++) {
            const ffn__gemm *gl = &w->g[l];
            size_t q0, q1;  /* (the layer's own panels; the rows are the phase's) */
            ffn__task_range(w->ph, w->g, l, i, &q0, &q1, &p0, &p1);
            /* (the stack buffer: packed on the fly, or 16-bit widened for many rows) */
            if (gl->layout == FFN__W_PACKED && (gl->wt == FFN_F32 || re - r <= (size_t)gl->isa->mr))
                ffn__gemm_loops(gl, r, re, p0, p1, NULL);
            else ffn__gemm_unpacked(gl, r, re, p0, p1);
        }
    }
}

/* The caller's thread pool (ffn_set_parallel_for): read and written under a spin
   lock, so that a call sees the function, the pool and the count of one setting. */
typedef struct {
    ffn_parallel_for_fn fn;
    void *pool;
    int threads;
} ffn__hook;
static ffn__hook ffn__hook_set;
static long ffn__hook_lock;
#if defined(__ATOMIC_ACQUIRE)
static void ffn__lock(void)
{
    long free = 0;
    while (!__atomic_compare_exchange_n(&ffn__hook_lock, &free, 1L, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
        free = 0;
}
static void ffn__unlock(void) { __atomic_store_n(&ffn__hook_lock, 0L, __ATOMIC_RELEASE); }
#elif defined(_MSC_VER)
static void ffn__lock(void)
{
    while (_InterlockedCompareExchange(&ffn__hook_lock, 1, 0) != 0) {}
}
static void ffn__unlock(void) { (void)_InterlockedExchange(&ffn__hook_lock, 0); }
#else   /* (no atomics known: set the pool before other threads call) */
static void ffn__lock(void) {}
static void ffn__unlock(void) {}
#endif

FFNDEF int ffn_set_parallel_for(ffn_parallel_for_fn fn, void *pool, int n_threads)
{
    if (fn && (n_threads < 1 || n_threads > FFN__MAX_THREADS)) return FFN_ERR_THREADS;
    ffn__lock();
    ffn__hook_set.fn = fn;
    ffn__hook_set.pool = fn ? pool : NULL;
    ffn__hook_set.threads = fn ? n_threads : 0;
    ffn__unlock();
    return FFN_OK;
}

#if defined(_OPENMP) && !defined(FFN_NO_OPENMP)
#include <omp.h>
#define FFN__OMP 1
#else
#define FFN__OMP 0
#endif

/* Every Linear and block comes here: the layers g[0..n) in turn, each reading what the
   ones before wrote (a block: fc1 into the hidden buffer, then fc2). The one dispatch
   point between the scalar path and the SIMD ones, and between the threads: the
   caller's pool when one is set, else OpenMP's (outside a parallel region), else the
   calling thread, all running ffn__schedule's tasks. */
static void ffn__run(const ffn__gemm *g, int n)
{
    ffn__sched s;
    ffn__work w;
    ffn__hook hook;
    int threads = 1, p, i;
    if (!g[0].isa->kernel[FFN_F32]) {
        for (p = 0; p < n; p++) ffn__linear_scalar(&g[p]);
        return;
    }
    ffn__lock();
    hook = ffn__hook_set;
    ffn__unlock();
    if (hook.fn) threads = hook.threads;
#if FFN__OMP
    else if (!omp_in_parallel()) threads = omp_get_max_threads();
#endif
    ffn__schedule(&s, g, n, threads);
    w.g = g;
    if (s.most > 1 && hook.fn) {
        for (p = 0; p < s.nphase; p++) {
            w.ph = &s.ph[p];
            if (s.ph[p].pr * s.ph[p].pc > 1)
                hook.fn(hook.pool, s.ph[p].pr * s.ph[p].pc, ffn__task, &w);
            else ffn__task(&w, 0);
        }
        return;
    }
#if FFN__OMP
    if (s.most > 1) {
#pragma omp parallel num_threads(s.most) private(p, i) firstprivate(w)
        for (p = 0; p < s.nphase; p++) {
            const int nt = s.ph[p].pr * s.ph[p].pc;
            w.ph = &s.ph[p];
            /* (each loop's implicit barrier: the phase is written) */
#pragma omp for schedule(dynamic, 1)
            for (i = 0; i < nt; i++) ffn__task(&w, i);
        }
        return;
    }
#endif
    for (p = 0; p < s.nphase; p++) {
        w.ph = &s.ph[p];
        for (i = 0; i < s.ph[p].pr * s.ph[p].pc; i++) ffn__task(&w, i);
    }
}

/* ---- the Linear ---------------------------------------------------------- */

/* layout: FFN__W_*; the public calls' packed flag (0 or 1) is FFN__W_OUT_IN or _PACKED */
static void ffn__gemm_init(ffn__gemm *g, const ffn__isa *isa, float *y, const float *x,
                           const float *w, int layout, const float *bias, size_t rows,
                           size_t in, size_t out)
{
    g->epi.relu = 0;
    g->epi.act = NULL;
    g->epi.mul = NULL;
    g->acc = 0;
    g->isa = isa;
    g->y = y;
    g->x = x;
    g->w = w;
    g->wt = FFN_F32;
    g->bias = bias;
    g->layout = layout;
    g->so = layout == FFN__W_IN_OUT ? 1 : in;
    g->si = layout == FFN__W_IN_OUT ? out : 1;
    g->rows = rows;
    g->in = in;
    g->out = out;
    g->kb = ffn__kb(in);
}

static void ffn__linear_any(float *y, const float *x, const float *w, int packed,
                            const float *bias, size_t rows, size_t in, size_t out)
{
    ffn__gemm g;
    ffn__gemm_init(&g, ffn__current(), y, x, w, packed, bias, rows, in, out);
    ffn__run(&g, 1);
}

FFNDEF int ffn_linear(float *y, const float *x, const float *weight, const float *bias,
                      size_t rows, size_t in_features, size_t out_features)
{
    int st = ffn__linear_check(y, x, weight, bias, rows, in_features, out_features, 0);
    if (st) return st;
    ffn__linear_any(y, x, weight, 0, bias, rows, in_features, out_features);
    return FFN_OK;
}

FFNDEF int ffn_linear_packed(float *y, const float *x, const float *packed,
                             const float *bias, size_t rows, size_t in_features,
                             size_t out_features)
{
    int st = ffn__linear_check(y, x, packed, bias, rows, in_features, out_features, 1);
    if (st) return st;
    ffn__linear_any(y, x, packed, 1, bias, rows, in_features, out_features);
    return FFN_OK;
}

/* ---- any weight (ffn_weight) ---------------------------------------------- */

FFNDEF ffn_weight ffn_weight_of(const void *data, int dtype, int layout)
{
    ffn_weight w;
    w.data = data;
    w.dtype = dtype;
    w.layout = layout;
    w.stride_out = w.stride_in = 0;
    return w;
}

FFNDEF size_t ffn_pack_bytes(size_t in_features, size_t out_features, int dtype)
{
    const size_t floats = ffn__pack_floats(in_features, out_features);
    if (dtype == FFN_BF16 || dtype == FFN_F16) return floats * sizeof(uint16_t);
    return dtype == FFN_F32 && floats <= (size_t)-1 / sizeof(float) ? floats * sizeof(float) : 0;
}

/* w's checks in the ERRORS order (NULL, DTYPE, LAYOUT): a weight a call can read. */
static int ffn__weight_ok(const ffn_weight *w)
{
    if (!w || !w->data) return FFN_ERR_NULL;
    if (w->dtype != FFN_F32 && w->dtype != FFN_BF16 && w->dtype != FFN_F16) return FFN_ERR_DTYPE;
    if (w->layout < FFN_OUT_IN || w->layout > FFN_PACKED ||
        (w->layout == FFN_STRIDED && (!w->stride_out || !w->stride_in)))
        return FFN_ERR_LAYOUT;
    return FFN_OK;
}

/* n weights' DTYPE, then LAYOUT: each kind of check for every weight before the next
   (their data already checked for NULL). */
static int ffn__weights_ok(const ffn_weight *w, int n)
{
    int st = FFN_OK, i;
    for (i = 0; i < n; i++)
        if ((st = ffn__weight_ok(&w[i])) == FFN_ERR_DTYPE) return st;
    for (i = 0, st = FFN_OK; i < n && st == FFN_OK; i++) st = ffn__weight_ok(&w[i]);
    return st;
}

/* Where element (o, i) of an unpacked weight (out, in) is: o * *so + i * *si. */
static void ffn__strides(const ffn_weight *w, size_t in, size_t out, size_t *so, size_t *si)
{
    *so = w->layout == FFN_STRIDED ? w->stride_out : w->layout == FFN_IN_OUT ? 1 : in;
    *si = w->layout == FFN_STRIDED ? w->stride_in : w->layout == FFN_IN_OUT ? out : 1;
}

/* The bytes a valid weight (out, in) spans (in, out >= 1), or FFN_ERR_OVERFLOW. */
static int ffn__weight_span(const ffn_weight *w, size_t in, size_t out, size_t *bytes)
{
    const size_t max = (size_t)-1, es = ffn__esize(w->dtype);
    size_t a, b;
    if (w->layout == FFN_PACKED) {
        *bytes = ffn_pack_bytes(in, out, w->dtype);
        return *bytes ? FFN_OK : FFN_ERR_OVERFLOW;
    }
    ffn__strides(w, in, out, &a, &b);
    if (out - 1 > max / a || in - 1 > max / b) return FFN_ERR_OVERFLOW;
    a *= out - 1;
    b *= in - 1;
    if (a > max - b - 1 || a + b + 1 > max / es) return FFN_ERR_OVERFLOW;
    *bytes = (a + b + 1) * es;
    return FFN_OK;
}

/* A Linear over weight w (checked). */
static void ffn__gemm_init_w(ffn__gemm *g, const ffn__isa *isa, float *y, const float *x,
                             const ffn_weight *w, const float *bias, size_t rows, size_t in,
                             size_t out)
{
    static const int layout[4] = {FFN__W_OUT_IN, FFN__W_IN_OUT, FFN__W_STRIDED, FFN__W_PACKED};
    ffn__gemm_init(g, isa, y, x, NULL, layout[w->layout], bias, rows, in, out);
    g->w = w->data;
    g->wt = w->dtype;
    if (w->layout == FFN_STRIDED) {
        g->so = w->stride_out;
        g->si = w->stride_in;
    }
}

FFNDEF int ffn_pack(void *packed, size_t packed_bytes, int dtype, const ffn_weight *w,
                    size_t in_features, size_t out_features)
{
    const size_t in = in_features, out = out_features;
    size_t need, wbytes, so, si;
    int st;
    if (!packed || !w || !w->data) return FFN_ERR_NULL;
    if (dtype != FFN_F32 && dtype != FFN_BF16 && dtype != FFN_F16) return FFN_ERR_DTYPE;
    if ((st = ffn__weight_ok(w)) != FFN_OK) return st;
    if (w->layout == FFN_PACKED) return FFN_ERR_LAYOUT;
    if (!in || !out) return FFN_ERR_ZERO_SIZE;
    if ((st = ffn__weight_span(w, in, out, &wbytes)) != FFN_OK) return st;
    need = ffn_pack_bytes(in, out, dtype);
    if (!need) return FFN_ERR_OVERFLOW;
    if (packed_bytes < need) return FFN_ERR_SCRATCH;
    if (ffn__overlap(packed, need, w->data, wbytes)) return FFN_ERR_ALIAS;
    if (dtype == FFN_F32 && w->dtype == FFN_F32 && w->layout == FFN_OUT_IN)
        return ffn__pack_weight((float *)packed, need / sizeof(float), (const float *)w->data,
                                in, out);    /* (the path's fast transposes) */
    ffn__strides(w, in, out, &so, &si);
    ffn__pack_any(packed, dtype, w->data, w->dtype, out, so, si, 0, (out + FFN__NR - 1) / FFN__NR,
                  0, in);
    return FFN_OK;
}

FFNDEF int ffn_linear_w(float *y, const float *x, const ffn_weight *w, const float *bias,
                        size_t rows, size_t in_features, size_t out_features)
{
    ffn__linear_bytes n;
    ffn__gemm g;
    size_t wbytes;
    int st;
    if (!y || !x) return FFN_ERR_NULL;
    if ((st = ffn__weight_ok(w)) != FFN_OK ||
        (st = ffn__linear_sizes(&n, rows, in_features, out_features, 0)) != FFN_OK ||
        (st = ffn__weight_span(w, in_features, out_features, &wbytes)) != FFN_OK)
        return st;
    if (ffn__overlap(y, n.y, x, n.x) || ffn__overlap(y, n.y, w->data, wbytes) ||
        ffn__overlap(y, n.y, bias, n.b))
        return FFN_ERR_ALIAS;
    ffn__gemm_init_w(&g, ffn__current(), y, x, w, bias, rows, in_features, out_features);
    ffn__run(&g, 1);
    return FFN_OK;
}

/* ==== 8. LINEAR BACKWARD ============================================================== */

/* Scratch of ffn_linear_backward: a packed weight (W^T for dx, x^T for dw: the larger),
   then dy^T (out, rows); 0 if that many floats' bytes overflow. */
static size_t ffn__bwd_floats(size_t rows, size_t in, size_t out)
{
    const size_t p1 = ffn__pack_floats(out, in), p2 = ffn__pack_floats(rows, in);
    const size_t p = p1 > p2 ? p1 : p2;
    size_t t;
    if (!p1 || !p2 || !ffn__bytes(&t, out, rows) || p > (size_t)-1 / sizeof(float) - out * rows)
        return 0;
    return p + out * rows;
}

/* dst (cols, rows) = src (rows, cols; rows lds apart) transposed, the path's tb x tb
   register transposes where they fit, in blocks of 256 rows x 16 columns: a block
   reads one line of each of its rows and writes runs of 256 floats to 16 output rows.
   (Blocks of 16 x 16 wrote 64 bytes per output row and moved on: at 4096 rows those
   runs are 16 KiB apart, and the stores stall.) */
static void ffn__transpose(const ffn__isa *isa, float *dst, const float *src, size_t rows,
                           size_t cols, size_t lds)
{
    const size_t tb = isa->tblock ? (size_t)isa->tb : 16;
    size_t i0, j0, i1, j1, i, j;
    for (i0 = 0; i0 < rows; i0 = i1)
        for (i1 = rows - i0 < 256 ? rows : i0 + 256, j0 = 0; j0 < cols; j0 = j1) {
            j1 = cols - j0 < 16 ? cols : j0 + 16;
            for (i = i0; i < i1; i += tb)
                for (j = j0; j < j1; j += tb)
                    if (isa->tblock && i + tb <= i1 && j + tb <= j1)
                        isa->tblock(dst + j * rows + i, rows, src + i * lds + j, lds);
                    else {
                        size_t ii, jj;
                        for (ii = i; ii < i1 && ii < i + tb; ii++)
                            for (jj = j; jj < j1 && jj < j + tb; jj++)
                                dst[jj * rows + ii] = src[ii * lds + jj];
                    }
        }
}

/* The bias gradient, db += dy.sum(0), summed in torch's order (ATen's SumKernel.cpp: the
   cascade_sum of a reduction over dim 0 of a contiguous (rows, n) float tensor, which is
   what autograd's sum_to computes for the broadcast bias), so that from the same dy the
   bits are torch's, and the error is the cascade's: it grows with log(rows) where one
   chain of additions grows with rows (torch's is 1.1-1.3x smaller at 257-1000 rows than
   the Linear's blocked order that the previous versions used here). pe.h's table gradient
   (pe__cascade, pe__tsum) is the same sum; see there for the details of torch's code.

   The chunk length of the cascade over n values: 2^max(4, CeilLog2(n) / 4), CeilLog2(n) =
   1 for n <= 2, else the number of bits of n - 1. */
static unsigned ffn__level_power(size_t n)
{
    unsigned bits = 0;
    size_t v;
    if (n <= 2) return 4;
    for (v = n - 1; v; v >>= 1) bits++;
    return bits / 4 > 4 ? bits / 4 : 4;
}

/* s[i] = torch's cascade sum of the n values v[r * st + i], r < n, for i < m <= 64 (the
   columns side by side, so the additions of one step run across columns and vectorise):
   four levels from +0; chunks of 2^p values go into level 0, which is then added into
   level 1 and cleared; level 1 moves into level 2 when the count so far is a multiple of
   2^2p, level 2 into level 3 at multiples of 2^3p; the values after the last whole chunk
   go into level 0; the sum is ((l0 + l1) + l2) + l3. (Below 2^p values that is
   ((0 + v0) + v1) + ..., plus +0s, which change nothing: the sum is never -0.0.) */
static void ffn__cascade(float *s, const float *v, size_t st, size_t n, size_t m)
{
    const unsigned p = ffn__level_power(n);
    const size_t step = (size_t)1 << p, mask = step - 1;
    float l0[64], l1[64], l2[64], l3[64];
    size_t r = 0, j, i;
    for (i = 0; i < m; i++) l0[i] = l1[i] = l2[i] = l3[i] = 0.0f;
    while (n - r >= step) {
        for (j = 0; j < step; j++, r++)
            for (i = 0; i < m; i++) l0[i] = l0[i] + v[r * st + i];
        for (i = 0; i < m; i++) { l1[i] = l1[i] + l0[i]; l0[i] = 0.0f; }
        if (!(r & mask << p)) {
            for (i = 0; i < m; i++) { l2[i] = l2[i] + l1[i]; l1[i] = 0.0f; }
            if (!(r & mask << 2 * p))
                for (i = 0; i < m; i++) { l3[i] = l3[i] + l2[i]; l2[i] = 0.0f; }
        }
    }
    for (; r < n; r++)
        for (i = 0; i < m; i++) l0[i] = l0[i] + v[r * st + i];
    for (i = 0; i < m; i++) {
        float t = l0[i] + l1[i];
        t = t + l2[i];
        s[i] = t + l3[i];
    }
}

/* torch's row_sum of the columns i < m (<= 64): each column as four interleaved sequences
   (rows 4q + k), each summed by the cascade, the last n % 4 values added to the first sum,
   then ((s0 + s1) + s2) + s3. */
static void ffn__row_sum(float *s, const float *v, size_t st, size_t n, size_t m)
{
    const size_t q = n / 4;
    float s1[64], s2[64], s3[64];
    size_t r, i;
    ffn__cascade(s, v, 4 * st, q, m);
    ffn__cascade(s1, v + st, 4 * st, q, m);
    ffn__cascade(s2, v + 2 * st, 4 * st, q, m);
    ffn__cascade(s3, v + 3 * st, 4 * st, q, m);
    for (r = 4 * q; r < n; r++)
        for (i = 0; i < m; i++) s[i] = s[i] + v[r * st + i];
    for (i = 0; i < m; i++) {
        float t = s[i] + s1[i];
        t = t + s2[i];
        s[i] = t + s3[i];
    }
}

/* db[i] += sum_r v[r * ld + i] for i < n, in torch's order for the column: the first
   n / 32 * 32 columns (n / 4 * 4 when n < 8; torch's 8-float vectors, as its AVX2 and its
   scalar "default" dispatch have them) by the cascade, the others by row_sum, and n = 1
   with 8 rows or more (a contiguous reduction) by torch's vectorized_inner_sum: lane l
   sums v[8 k + l], k < rows / 8, by row_sum; the result is 0 plus the last rows % 8
   values in turn, plus the 8 lanes in turn. The sum first, then one addition onto db, as
   autograd's .grad += sum. (A torch dispatching AVX-512 sums up to 63 more columns by
   row_sum; any two of these orders agree within 2 gamma_rows S, S = sum |v|.) */
static void ffn__colsum_add(float *db, const float *v, size_t rows, size_t n, size_t ld)
{
    const size_t nc = n == 1 ? 0 : n >= 8 ? n / 32 * 32 : n / 4 * 4;
    float s[64];
    size_t i0, i, m;
    if (n == 1 && rows >= 8) {
        const size_t nv = rows / 8;
        float t = 0.0f;
        for (i = 8 * nv; i < rows; i++) t = t + v[i * ld];
        ffn__row_sum(s, v, 8 * ld, nv, 8);  /* ld is 1 here: the 8 lanes side by side */
        for (i = 0; i < 8; i++) t = t + s[i];
        db[0] = db[0] + t;
        return;
    }
    for (i0 = 0; i0 < n; i0 += m) {
        m = (i0 < nc ? nc : n) - i0;
        if (m > 64) m = 64;
        if (i0 < nc) ffn__cascade(s, v + i0, ld, rows, m);
        else ffn__row_sum(s, v + i0, ld, rows, m);
        for (i = 0; i < m; i++) db[i0 + i] = db[i0 + i] + s[i];
    }
}

FFNDEF size_t ffn_linear_backward_scratch_floats(size_t rows, size_t in_features,
                                                 size_t out_features)
{
    if (!rows || !in_features || !out_features) return 0;
    return ffn__bwd_floats(rows, in_features, out_features);
}

/* The gradients of a Linear over a checked weight w (unpacked) into checked buffers;
   scratch holds need floats (ffn_linear_backward_scratch_floats).
   dx = dy W is a Linear of dy with the weight W^T, element (i, o) = W(o, i): w with its
   strides swapped (an (out, in) weight read as (in, out)), packed on the fly, or in
   advance (into float32) when more than one row block reads it. dw = dy^T x is a Linear
   of dy^T (out, rows) with the weight x^T, element (i, r) = x[r * in + i] (strides
   (1, in)), and dw's own values as the bias. */
static void ffn__linear_bwd(float *dx, float *dw, float *db, const float *dy, const float *x,
                            const ffn_weight *w, size_t rows, size_t in, size_t out,
                            float *scratch, size_t need)
{
    const ffn__isa *isa = ffn__current();
    ffn__gemm g;
    if (dx) {
        ffn_weight wt = *w;
        size_t so, si;
        ffn__strides(w, in, out, &so, &si);
        wt.layout = FFN_STRIDED;
        wt.stride_out = si;
        wt.stride_in = so;
        if (rows > FFN__MC) {
            if (w->dtype == FFN_F32) ffn__pack_strided(scratch, (const float *)w->data, out, in, si, so);
            else ffn__pack_any(scratch, FFN_F32, w->data, w->dtype, in, si, so, 0,
                               (in + FFN__NR - 1) / FFN__NR, 0, out);
            wt = ffn_weight_of(scratch, FFN_F32, FFN_PACKED);
        } else if (w->layout == FFN_OUT_IN) {
            wt.layout = FFN_IN_OUT;     /* (the strided loop's fast case) */
        }
        ffn__gemm_init_w(&g, isa, dx, dy, &wt, NULL, rows, out, in);
        ffn__run(&g, 1);
    }
    if (dw) {
        float *dyt = scratch + need - out * rows;
        ffn__transpose(isa, dyt, dy, rows, out, out);
        ffn__pack_strided(scratch, x, rows, in, 1, in);
        ffn__gemm_init(&g, isa, dw, dyt, scratch, 1, NULL, out, rows, in);
        g.acc = 1;          /* dw's own values in the bias's place */
        ffn__run(&g, 1);
    }
    if (db) ffn__colsum_add(db, dy, rows, out, out);
}

/* A backward's weight (read for dx) in the ERRORS order: packed is FFN_ERR_LAYOUT (its
   transpose is not read). */
static int ffn__bwd_weight_ok(const ffn_weight *w)
{
    int st = ffn__weight_ok(w);
    return st == FFN_OK && w->layout == FFN_PACKED ? FFN_ERR_LAYOUT : st;
}

FFNDEF int ffn_linear_backward_w(float *dx, float *dw, float *db, const float *dy,
                                 const float *x, const ffn_weight *w, size_t rows,
                                 size_t in_features, size_t out_features, float *scratch,
                                 size_t scratch_floats)
{
    const size_t in = in_features, out = out_features;
    const void *o[3], *ip[4];
    size_t ob[3], ib[4], need, wb = 0;
    ffn__linear_bytes n;
    int st, a, c;
    if (!dy || !scratch || (!dx && !dw && !db) || (dx && (!w || !w->data)) || (dw && !x))
        return FFN_ERR_NULL;
    if (dx && (st = ffn__bwd_weight_ok(w)) != FFN_OK) return st;
    if ((st = ffn__linear_sizes(&n, rows, in, out, 0)) != FFN_OK) return st;
    /* w is read for dx only, and then checked; given without dx, it is still not to be
       written */
    if (w && w->data && ffn__bwd_weight_ok(w) == FFN_OK &&
        (st = ffn__weight_span(w, in, out, &wb)) != FFN_OK && dx)
        return st;
    need = ffn_linear_backward_scratch_floats(rows, in, out);
    if (!need) return FFN_ERR_OVERFLOW;
    if (scratch_floats < need) return FFN_ERR_SCRATCH;
    /* outputs (dx, dw, db) against the inputs, the scratch, each other */
    o[0] = dx; ob[0] = n.x; o[1] = dw; ob[1] = n.w; o[2] = db; ob[2] = n.b;
    ip[0] = dy; ib[0] = n.y; ip[1] = x; ib[1] = n.x; ip[2] = wb ? w->data : NULL; ib[2] = wb;
    ip[3] = scratch; ib[3] = need * sizeof(float);
    for (a = 0; a < 3; a++) {
        for (c = 0; c < 4; c++)
            if (ffn__overlap(o[a], ob[a], ip[c], ib[c])) return FFN_ERR_ALIAS;
        for (c = a + 1; c < 3; c++)
            if (ffn__overlap(o[a], ob[a], o[c], ob[c])) return FFN_ERR_ALIAS;
        if (ffn__overlap(scratch, ib[3], ip[a], ib[a])) return FFN_ERR_ALIAS;  /* dy, x, w */
    }
    ffn__linear_bwd(dx, dw, db, dy, x, w, rows, in, out, scratch, need);
    return FFN_OK;
}

FFNDEF int ffn_linear_backward(float *dx, float *dw, float *db, const float *dy,
                               const float *x, const float *w, size_t rows,
                               size_t in_features, size_t out_features, float *scratch,
                               size_t scratch_floats)
{
    const ffn_weight wd = ffn_weight_of(w, FFN_F32, FFN_OUT_IN);
    return ffn_linear_backward_w(dx, dw, db, dy, x, &wd, rows, in_features, out_features,
                                 scratch, scratch_floats);
}

/* ==== 9. BLOCKS ======================================================================= */

FFNDEF size_t ffn_block_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    size_t bytes;
    if (!rows || !d_model || !hidden || !ffn__bytes(&bytes, rows, hidden)) return 0;
    return rows * hidden;
}

FFNDEF size_t ffn_gated_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    size_t n = ffn_block_scratch_floats(rows, d_model, hidden);
    return n && n <= (size_t)-1 / (2 * sizeof(float)) ? 2 * n : 0;
}

/* The blocks: nw = 2 (ffn_block*: w[0] fc1, w[1] fc2) or 3 (ffn_gated*: w[0] gate,
   w[1] up, w[2] down); the last weight is (d, h), the others (h, d). Checks in the
   ERRORS order, then the layers: each hidden layer into its rows x h part of the
   scratch, the gated block's up times the gate there, the last one into y. y may be
   x: x is read completely by the first layers before the last writes y. */
static int ffn__blocks(float *y, const float *x, const ffn_weight *w,
                       const float *const *b, int nw, size_t rows, size_t d, size_t h,
                       int act, float *scratch, size_t scratch_floats)
{
    ffn__linear_bytes n1, n2;
    const ffn__isa *isa;
    ffn__gemm g[3];
    size_t need, sb, wb[3];
    int st, i;
    if (!ffn__act_ok(act, nw == 3)) return FFN_ERR_ARG;
    if (!y || !x || !scratch) return FFN_ERR_NULL;
    for (i = 0; i < nw; i++)
        if (!w[i].data) return FFN_ERR_NULL;
    if ((st = ffn__weights_ok(w, nw)) != FFN_OK) return st;
    if ((st = ffn__linear_sizes(&n1, rows, d, h, 0)) != FFN_OK ||
        (st = ffn__linear_sizes(&n2, rows, h, d, 0)) != FFN_OK)
        return st;
    for (i = 0; i < nw; i++)
        if ((st = ffn__weight_span(&w[i], i < nw - 1 ? d : h, i < nw - 1 ? h : d, &wb[i])))
            return st;
    need = nw == 2 ? ffn_block_scratch_floats(rows, d, h) : ffn_gated_scratch_floats(rows, d, h);
    if (!need) return FFN_ERR_OVERFLOW;
    if (scratch_floats < need) return FFN_ERR_SCRATCH;
    sb = need * sizeof(float);
    if ((y != x && ffn__overlap(y, n2.y, x, n1.x)) || ffn__overlap(scratch, sb, y, n2.y) ||
        ffn__overlap(scratch, sb, x, n1.x))
        return FFN_ERR_ALIAS;
    for (i = 0; i < nw; i++) {
        const size_t bb = i < nw - 1 ? n1.b : n2.b;
        if (ffn__overlap(y, n2.y, w[i].data, wb[i]) || ffn__overlap(y, n2.y, b[i], bb) ||
            ffn__overlap(scratch, sb, w[i].data, wb[i]) || ffn__overlap(scratch, sb, b[i], bb))
            return FFN_ERR_ALIAS;
    }
    isa = ffn__current();
    ffn__gemm_init_w(&g[0], isa, scratch, x, &w[0], b[0], rows, d, h);
    g[0].epi = ffn__epi_of(isa, act, FFN__E_HIDDEN, NULL);
    if (nw == 3) {
        ffn__gemm_init_w(&g[1], isa, scratch + rows * h, x, &w[1], b[1], rows, d, h);
        g[1].epi = ffn__epi_of(isa, act, FFN__E_UP, scratch);
    }
    ffn__gemm_init_w(&g[nw - 1], isa, y, scratch + (size_t)(nw - 2) * rows * h, &w[nw - 1],
                     b[nw - 1], rows, h, d);
    ffn__run(g, nw);
    return FFN_OK;
}

/* The 1.x calls: float32 weights, all nn.Linear's or all packed. */
static int ffn__block_any(float *y, const float *x, const float *const *w,
                          const float *const *b, int nw, size_t rows, size_t d, size_t h,
                          int act, float *scratch, size_t scratch_floats, int packed)
{
    ffn_weight wd[3];
    int i;
    for (i = 0; i < nw; i++) wd[i] = ffn_weight_of(w[i], FFN_F32, packed ? FFN_PACKED : FFN_OUT_IN);
    return ffn__blocks(y, x, wd, b, nw, rows, d, h, act, scratch, scratch_floats);
}

FFNDEF int ffn_mlp_forward(float *y, const float *x, size_t rows, const ffn_mlp *mlp,
                           float *scratch, size_t scratch_floats)
{
    const float *b[2];
    ffn_weight w[2];
    if (!mlp) return FFN_ERR_NULL;
    w[0] = mlp->fc1; w[1] = mlp->fc2;
    b[0] = mlp->b1; b[1] = mlp->b2;
    return ffn__blocks(y, x, w, b, 2, rows, mlp->d_model, mlp->hidden, mlp->act, scratch,
                       scratch_floats);
}

FFNDEF int ffn_glu_forward(float *y, const float *x, size_t rows, const ffn_glu *glu,
                           float *scratch, size_t scratch_floats)
{
    const float *b[3];
    ffn_weight w[3];
    if (!glu) return FFN_ERR_NULL;
    w[0] = glu->gate; w[1] = glu->up; w[2] = glu->down;
    b[0] = glu->b_gate; b[1] = glu->b_up; b[2] = glu->b_down;
    return ffn__blocks(y, x, w, b, 3, rows, glu->d_model, glu->hidden, glu->act, scratch,
                       scratch_floats);
}

FFNDEF int ffn_block_act(float *y, const float *x, const float *w1, const float *b1,
                         const float *w2, const float *b2, size_t rows, size_t d_model,
                         size_t hidden, int act, float *scratch, size_t scratch_floats)
{
    const float *w[2], *b[2];
    w[0] = w1; w[1] = w2;
    b[0] = b1; b[1] = b2;
    return ffn__block_any(y, x, w, b, 2, rows, d_model, hidden, act, scratch,
                          scratch_floats, 0);
}

FFNDEF int ffn_block_act_packed(float *y, const float *x, const float *w1_packed,
                                const float *b1, const float *w2_packed, const float *b2,
                                size_t rows, size_t d_model, size_t hidden, int act,
                                float *scratch, size_t scratch_floats)
{
    const float *w[2], *b[2];
    w[0] = w1_packed; w[1] = w2_packed;
    b[0] = b1; b[1] = b2;
    return ffn__block_any(y, x, w, b, 2, rows, d_model, hidden, act, scratch,
                          scratch_floats, 1);
}

FFNDEF int ffn_block(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats)
{
    const float *w[2], *b[2];
    w[0] = w1; w[1] = w2;
    b[0] = b1; b[1] = b2;
    return ffn__block_any(y, x, w, b, 2, rows, d_model, hidden, FFN_RELU, scratch,
                          scratch_floats, 0);
}

FFNDEF int ffn_block_packed(float *y, const float *x, const float *w1_packed,
                            const float *b1, const float *w2_packed, const float *b2,
                            size_t rows, size_t d_model, size_t hidden, float *scratch,
                            size_t scratch_floats)
{
    const float *w[2], *b[2];
    w[0] = w1_packed; w[1] = w2_packed;
    b[0] = b1; b[1] = b2;
    return ffn__block_any(y, x, w, b, 2, rows, d_model, hidden, FFN_RELU, scratch,
                          scratch_floats, 1);
}

FFNDEF int ffn_gated(float *y, const float *x, const float *w_gate, const float *b_gate,
                     const float *w_up, const float *b_up, const float *w_down,
                     const float *b_down, size_t rows, size_t d_model, size_t hidden,
                     int act, float *scratch, size_t scratch_floats)
{
    const float *w[3], *b[3];
    w[0] = w_gate; w[1] = w_up; w[2] = w_down;
    b[0] = b_gate; b[1] = b_up; b[2] = b_down;
    return ffn__block_any(y, x, w, b, 3, rows, d_model, hidden, act, scratch,
                          scratch_floats, 0);
}

FFNDEF int ffn_gated_packed(float *y, const float *x, const float *w_gate_packed,
                            const float *b_gate, const float *w_up_packed, const float *b_up,
                            const float *w_down_packed, const float *b_down, size_t rows,
                            size_t d_model, size_t hidden, int act, float *scratch,
                            size_t scratch_floats)
{
    const float *w[3], *b[3];
    w[0] = w_gate_packed; w[1] = w_up_packed; w[2] = w_down_packed;
    b[0] = b_gate; b[1] = b_up; b[2] = b_down;
    return ffn__block_any(y, x, w, b, 3, rows, d_model, hidden, act, scratch,
                          scratch_floats, 1);
}

/* ==== 10. TRAINING THE BLOCKS ========================================================= */

FFNDEF size_t ffn_gated_train_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    return ffn_block_scratch_floats(rows, d_model, hidden);
}

/* A buffer for the overlap checks: n bytes at p (NULL: absent). */
typedef struct { const void *p; size_t n; } ffn__span;

/* FFN_ERR_ALIAS if one of the written buffers out[] overlaps another one or one of the
   read buffers in[] (inputs may share memory). */
static int ffn__spans_alias(const ffn__span *out, int nout, const ffn__span *in, int nin)
{
    int a, b;
    for (a = 0; a < nout; a++) {
        for (b = a + 1; b < nout; b++)
            if (ffn__overlap(out[a].p, out[a].n, out[b].p, out[b].n)) return FFN_ERR_ALIAS;
        for (b = 0; b < nin; b++)
            if (ffn__overlap(out[a].p, out[a].n, in[b].p, in[b].n)) return FFN_ERR_ALIAS;
    }
    return FFN_OK;
}

/* The forwards that save (nw = 2: ffn_mlp_train, pre[0] = h; nw = 3: ffn_glu_train,
   pre[0] = gate_h, pre[1] = up_h). Checks in the ERRORS order, then the first layer(s)
   into pre without the activation, act (times up) into the scratch, and the last layer
   from there into y: ffn__blocks's operations in separate passes instead of on each tile,
   so the same bits. y may be x: x is read completely before y is written. */
static int ffn__train_any(float *y, float *const *pre, const float *x, const ffn_weight *w,
                          const float *const *b, int nw, size_t rows, size_t d, size_t h,
                          int act, float *scratch, size_t scratch_floats)
{
    ffn__linear_bytes n1, n2;
    ffn__span out[4], in[7];
    const ffn__isa *isa;
    ffn__gemm g[2];
    size_t need, wb[3];
    int st, k, nin = 0;
    if (!ffn__act_ok(act, 0)) return FFN_ERR_ARG;
    if (!y || !x || !scratch) return FFN_ERR_NULL;
    for (k = 0; k < nw; k++)
        if (!w[k].data || (k < nw - 1 && !pre[k])) return FFN_ERR_NULL;
    if ((st = ffn__weights_ok(w, nw)) != FFN_OK) return st;
    if ((st = ffn__linear_sizes(&n1, rows, d, h, 0)) != FFN_OK ||
        (st = ffn__linear_sizes(&n2, rows, h, d, 0)) != FFN_OK)
        return st;
    for (k = 0; k < nw; k++)
        if ((st = ffn__weight_span(&w[k], k < nw - 1 ? d : h, k < nw - 1 ? h : d, &wb[k])))
            return st;
    need = rows * h;                    /* ffn_block_scratch_floats: n1.y fits */
    if (scratch_floats < need) return FFN_ERR_SCRATCH;
    out[0].p = y; out[0].n = n2.y;
    out[1].p = scratch; out[1].n = n1.y;
    out[2].p = pre[0]; out[2].n = n1.y;
    out[3].p = nw == 3 ? pre[1] : NULL; out[3].n = n1.y;
    if (y != x) { in[nin].p = x; in[nin++].n = n1.x; }   /* y == x: y's checks are x's */
    for (k = 0; k < nw; k++) {
        in[nin].p = w[k].data; in[nin++].n = wb[k];
        in[nin].p = b[k]; in[nin++].n = k < nw - 1 ? n1.b : n2.b;
    }
    if ((st = ffn__spans_alias(out, 4, in, nin)) != FFN_OK) return st;
    isa = ffn__current();
    for (k = 0; k < nw - 1; k++) ffn__gemm_init_w(&g[k], isa, pre[k], x, &w[k], b[k], rows, d, h);
    ffn__run(g, nw - 1);
    ffn__epi_of(isa, act, FFN__E_ROWS, NULL).act(scratch, pre[0], need);
    if (nw == 3) {  /* up times act(gate), as ffn__blocks's up tiles multiply */
        size_t i;
        for (i = 0; i < need; i++) scratch[i] = pre[1][i] * scratch[i];
    }
    ffn__gemm_init_w(&g[0], isa, y, scratch, &w[nw - 1], b[nw - 1], rows, h, d);
    ffn__run(g, 1);
    return FFN_OK;
}

FFNDEF int ffn_mlp_train(float *y, float *h, const float *x, size_t rows, const ffn_mlp *mlp,
                         float *scratch, size_t scratch_floats)
{
    float *pre[1];
    const float *b[2];
    ffn_weight w[2];
    if (!mlp) return FFN_ERR_NULL;
    pre[0] = h;
    w[0] = mlp->fc1; w[1] = mlp->fc2;
    b[0] = mlp->b1; b[1] = mlp->b2;
    return ffn__train_any(y, pre, x, w, b, 2, rows, mlp->d_model, mlp->hidden, mlp->act,
                          scratch, scratch_floats);
}

FFNDEF int ffn_glu_train(float *y, float *gate_h, float *up_h, const float *x, size_t rows,
                         const ffn_glu *glu, float *scratch, size_t scratch_floats)
{
    float *pre[2];
    const float *b[3];
    ffn_weight w[3];
    if (!glu) return FFN_ERR_NULL;
    pre[0] = gate_h; pre[1] = up_h;
    w[0] = glu->gate; w[1] = glu->up; w[2] = glu->down;
    b[0] = glu->b_gate; b[1] = glu->b_up; b[2] = glu->b_down;
    return ffn__train_any(y, pre, x, w, b, 3, rows, glu->d_model, glu->hidden, glu->act,
                          scratch, scratch_floats);
}

/* The 1.x forms: float32 weights, all nn.Linear's or all packed. */
static ffn_mlp ffn__mlp_of(const float *w1, const float *b1, const float *w2, const float *b2,
                           size_t d, size_t h, int act, int packed)
{
    ffn_mlp m;
    m.fc1 = ffn_weight_of(w1, FFN_F32, packed ? FFN_PACKED : FFN_OUT_IN);
    m.fc2 = ffn_weight_of(w2, FFN_F32, packed ? FFN_PACKED : FFN_OUT_IN);
    m.b1 = b1; m.b2 = b2; m.d_model = d; m.hidden = h; m.act = act;
    return m;
}

static ffn_glu ffn__glu_of(const float *wg, const float *bg, const float *wu, const float *bu,
                           const float *wd, const float *bd, size_t d, size_t h, int act,
                           int packed)
{
    ffn_glu g;
    const int layout = packed ? FFN_PACKED : FFN_OUT_IN;
    g.gate = ffn_weight_of(wg, FFN_F32, layout);
    g.up = ffn_weight_of(wu, FFN_F32, layout);
    g.down = ffn_weight_of(wd, FFN_F32, layout);
    g.b_gate = bg; g.b_up = bu; g.b_down = bd; g.d_model = d; g.hidden = h; g.act = act;
    return g;
}

FFNDEF int ffn_block_act_train(float *y, float *h, const float *x, const float *w1,
                               const float *b1, const float *w2, const float *b2,
                               size_t rows, size_t d_model, size_t hidden, int act,
                               float *scratch, size_t scratch_floats)
{
    const ffn_mlp m = ffn__mlp_of(w1, b1, w2, b2, d_model, hidden, act, 0);
    return ffn_mlp_train(y, h, x, rows, &m, scratch, scratch_floats);
}

FFNDEF int ffn_block_act_train_packed(float *y, float *h, const float *x,
                                      const float *w1_packed, const float *b1,
                                      const float *w2_packed, const float *b2, size_t rows,
                                      size_t d_model, size_t hidden, int act, float *scratch,
                                      size_t scratch_floats)
{
    const ffn_mlp m = ffn__mlp_of(w1_packed, b1, w2_packed, b2, d_model, hidden, act, 1);
    return ffn_mlp_train(y, h, x, rows, &m, scratch, scratch_floats);
}

FFNDEF int ffn_gated_train(float *y, float *gate_h, float *up_h, const float *x,
                           const float *w_gate, const float *b_gate, const float *w_up,
                           const float *b_up, const float *w_down, const float *b_down,
                           size_t rows, size_t d_model, size_t hidden, int act,
                           float *scratch, size_t scratch_floats)
{
    const ffn_glu g = ffn__glu_of(w_gate, b_gate, w_up, b_up, w_down, b_down, d_model, hidden,
                                  act, 0);
    return ffn_glu_train(y, gate_h, up_h, x, rows, &g, scratch, scratch_floats);
}

FFNDEF int ffn_gated_train_packed(float *y, float *gate_h, float *up_h, const float *x,
                                  const float *w_gate_packed, const float *b_gate,
                                  const float *w_up_packed, const float *b_up,
                                  const float *w_down_packed, const float *b_down,
                                  size_t rows, size_t d_model, size_t hidden, int act,
                                  float *scratch, size_t scratch_floats)
{
    const ffn_glu g = ffn__glu_of(w_gate_packed, b_gate, w_up_packed, b_up, w_down_packed,
                                  b_down, d_model, hidden, act, 1);
    return ffn_glu_train(y, gate_h, up_h, x, rows, &g, scratch, scratch_floats);
}

/* Scratch of the block backwards: (gated only) rows * max(d, h) floats, two rows * h
   buffers, then the larger of the two layer shapes' ffn_linear_backward scratch (*lin).
   0 if a size is 0 or the count's bytes overflow. rows * d fits whenever
   ffn_linear_backward_scratch_floats(rows, d, h) is not 0 (it holds x^T packed). */
static size_t ffn__bwd_need(size_t rows, size_t d, size_t h, int gated, size_t *lin)
{
    const size_t max = (size_t)-1 / sizeof(float);
    const size_t l1 = ffn_linear_backward_scratch_floats(rows, d, h);
    const size_t l2 = ffn_linear_backward_scratch_floats(rows, h, d);
    const size_t n = ffn_block_scratch_floats(rows, d, h);
    size_t lead;
    if (!l1 || !l2 || !n) return 0;
    lead = gated ? rows * (d > h ? d : h) : 0;
    *lin = l1 > l2 ? l1 : l2;
    if (n > (max - lead) / 2 || *lin > max - lead - 2 * n) return 0;
    return lead + 2 * n + *lin;
}

FFNDEF size_t ffn_block_backward_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    size_t lin;
    return ffn__bwd_need(rows, d_model, hidden, 0, &lin);
}

FFNDEF size_t ffn_gated_backward_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    size_t lin;
    return ffn__bwd_need(rows, d_model, hidden, 1, &lin);
}

/* The backwards are the public calls composed (checked here first, so they all succeed),
   each layer's gradients through ffn_linear_backward (the GEMM kernels, whatever they
   become), in autograd's order. */
static void ffn__must(int st)
{
    (void)st;                           /* (unused where FFN_ASSERT is compiled out) */
    FFN_ASSERT(st == FFN_OK);
}

/* The backwards' checks in the ERRORS order: act; NULL (the saved tensors, the weights,
   the scratch; every output NULL); each weight's dtype, then layout (packed:
   FFN_ERR_LAYOUT); sizes; scratch; no output overlapping anything. nw weights w (the last
   (d, h), the others (h, d)), nsv saved (rows, h) tensors sv, the outputs o[0] dx, then
   (dw, db) per weight. *lin: the linear backwards' scratch. */
static int ffn__bwd_check(float *const *o, const float *dy, const float *x,
                          const float *const *sv, int nsv, const ffn_weight *w, int nw,
                          size_t rows, size_t d, size_t h, int act, const float *scratch,
                          size_t scratch_floats, size_t *lin)
{
    ffn__linear_bytes n1, n2;
    ffn__span out[8], in[8];
    size_t need;
    int st, k, any = 0;
    if (!ffn__act_ok(act, 0)) return FFN_ERR_ARG;
    for (k = 0; k < 2 * nw + 1; k++) any |= o[k] != NULL;
    if (!dy || !x || !scratch || !any) return FFN_ERR_NULL;
    for (k = 0; k < nsv; k++)
        if (!sv[k]) return FFN_ERR_NULL;
    for (k = 0; k < nw; k++)
        if (!w[k].data) return FFN_ERR_NULL;
    for (k = 0; k < nw; k++)
        if ((st = ffn__weight_ok(&w[k])) == FFN_ERR_DTYPE) return st;
    for (k = 0; k < nw; k++)
        if ((st = ffn__bwd_weight_ok(&w[k])) != FFN_OK) return st;
    if ((st = ffn__linear_sizes(&n1, rows, d, h, 0)) != FFN_OK ||
        (st = ffn__linear_sizes(&n2, rows, h, d, 0)) != FFN_OK)
        return st;
    for (k = 0; k < nw; k++) {
        const int last = k == nw - 1;
        if ((st = ffn__weight_span(&w[k], last ? h : d, last ? d : h, &in[2 + k].n)))
            return st;
        in[2 + k].p = w[k].data;
        out[1 + 2 * k].p = o[1 + 2 * k]; out[1 + 2 * k].n = last ? n2.w : n1.w;
        out[2 + 2 * k].p = o[2 + 2 * k]; out[2 + 2 * k].n = last ? n2.b : n1.b;
    }
    need = ffn__bwd_need(rows, d, h, nw == 3, lin);
    if (!need) return FFN_ERR_OVERFLOW;
    if (scratch_floats < need) return FFN_ERR_SCRATCH;
    out[0].p = o[0]; out[0].n = n1.x;
    in[0].p = dy; in[0].n = n2.y;
    in[1].p = x; in[1].n = n1.x;
    for (k = 0; k < nsv; k++) { in[2 + nw + k].p = sv[k]; in[2 + nw + k].n = n1.y; }
    out[2 * nw + 1].p = scratch; out[2 * nw + 1].n = need * sizeof(float);
    return ffn__spans_alias(out, 2 * nw + 2, in, 2 + nw + nsv);
}

FFNDEF int ffn_mlp_backward(const ffn_mlp_grads *grads, const float *dy, const float *x,
                            const float *h, size_t rows, const ffn_mlp *mlp, float *scratch,
                            size_t scratch_floats)
{
    float *o[5];
    ffn_weight w[2];
    size_t lin, n;
    float *a, *g;
    int st, first;
    if (!grads || !mlp) return FFN_ERR_NULL;
    o[0] = grads->dx; o[1] = grads->dw1; o[2] = grads->db1; o[3] = grads->dw2; o[4] = grads->db2;
    w[0] = mlp->fc1; w[1] = mlp->fc2;
    st = ffn__bwd_check(o, dy, x, &h, 1, w, 2, rows, mlp->d_model, mlp->hidden, mlp->act,
                        scratch, scratch_floats, &lin);
    if (st) return st;
    n = rows * mlp->hidden;
    a = scratch;                        /* act(h) */
    g = a + n;                          /* da, then dh */
    first = o[0] || o[1] || o[2];       /* fc1's gradients (they need dh) */
    if (o[3]) ffn__must(ffn_activation(a, h, n, mlp->act));
    ffn__linear_bwd(first ? g : NULL, o[3], o[4], dy, o[3] ? a : NULL, &w[1], rows,
                    mlp->hidden, mlp->d_model, g + n, lin);
    if (first) {
        ffn__must(ffn_activation_backward(g, g, h, n, mlp->act));
        ffn__linear_bwd(o[0], o[1], o[2], g, x, &w[0], rows, mlp->d_model, mlp->hidden, g + n,
                        lin);
    }
    return FFN_OK;
}

FFNDEF int ffn_glu_backward(const ffn_glu_grads *grads, const float *dy, const float *x,
                            const float *gate_h, const float *up_h, size_t rows,
                            const ffn_glu *glu, float *scratch, size_t scratch_floats)
{
    const float *sv[2];
    float *o[7], *t, *p, *q;
    ffn_weight w[3];
    size_t lin, n, m, i, d, hd;
    int st, gate_l, up_l;
    if (!grads || !glu) return FFN_ERR_NULL;
    o[0] = grads->dx;
    o[1] = grads->dw_gate; o[2] = grads->db_gate;
    o[3] = grads->dw_up; o[4] = grads->db_up;
    o[5] = grads->dw_down; o[6] = grads->db_down;
    w[0] = glu->gate; w[1] = glu->up; w[2] = glu->down;
    sv[0] = gate_h; sv[1] = up_h;
    d = glu->d_model;
    hd = glu->hidden;
    st = ffn__bwd_check(o, dy, x, sv, 2, w, 3, rows, d, hd, glu->act, scratch, scratch_floats,
                        &lin);
    if (st) return st;
    n = rows * hd;
    m = rows * (d > hd ? d : hd);
    t = scratch;                        /* act(gate), then the up branch's dx */
    p = t + m;                          /* act(gate) * up, then du */
    q = p + n;                          /* dp, then dg */
    gate_l = o[0] || o[1] || o[2];
    up_l = o[0] || o[3] || o[4];
    if (o[5] || up_l) ffn__must(ffn_activation(t, gate_h, n, glu->act));
    if (o[5])
        for (i = 0; i < n; i++) p[i] = up_h[i] * t[i];
    ffn__linear_bwd(gate_l || up_l ? q : NULL, o[5], o[6], dy, o[5] ? p : NULL, &w[2], rows, hd,
                    d, q + n, lin);
    if (up_l)                           /* mul's backward: du = dp * a, da = dp * up */
        for (i = 0; i < n; i++) p[i] = q[i] * t[i];
    if (gate_l) {
        for (i = 0; i < n; i++) q[i] = q[i] * up_h[i];
        ffn__must(ffn_activation_backward(q, q, gate_h, n, glu->act));
        ffn__linear_bwd(o[0], o[1], o[2], q, x, &w[0], rows, d, hd, q + n, lin);
    }
    if (up_l) ffn__linear_bwd(o[0] ? t : NULL, o[3], o[4], p, x, &w[1], rows, d, hd, q + n, lin);
    if (o[0])                           /* x.grad: the two branches' sum */
        for (i = 0; i < rows * d; i++) o[0][i] = o[0][i] + t[i];
    return FFN_OK;
}

FFNDEF int ffn_block_act_backward(float *dx, float *dw1, float *db1, float *dw2, float *db2,
                                  const float *dy, const float *x, const float *h,
                                  const float *w1, const float *w2, size_t rows,
                                  size_t d_model, size_t hidden, int act, float *scratch,
                                  size_t scratch_floats)
{
    const ffn_mlp m = ffn__mlp_of(w1, NULL, w2, NULL, d_model, hidden, act, 0);
    ffn_mlp_grads g;
    g.dx = dx; g.dw1 = dw1; g.db1 = db1; g.dw2 = dw2; g.db2 = db2;
    return ffn_mlp_backward(&g, dy, x, h, rows, &m, scratch, scratch_floats);
}

FFNDEF int ffn_gated_backward(float *dx, float *dw_gate, float *db_gate, float *dw_up,
                              float *db_up, float *dw_down, float *db_down, const float *dy,
                              const float *x, const float *gate_h, const float *up_h,
                              const float *w_gate, const float *w_up, const float *w_down,
                              size_t rows, size_t d_model, size_t hidden, int act,
                              float *scratch, size_t scratch_floats)
{
    const ffn_glu m = ffn__glu_of(w_gate, NULL, w_up, NULL, w_down, NULL, d_model, hidden, act,
                                  0);
    ffn_glu_grads g;
    g.dx = dx; g.dw_gate = dw_gate; g.db_gate = db_gate; g.dw_up = dw_up; g.db_up = db_up;
    g.dw_down = dw_down; g.db_down = db_down;
    return ffn_glu_backward(&g, dy, x, gate_h, up_h, rows, &m, scratch, scratch_floats);
}

/* ==== 11. OPTIMIZERS ================================================================== */

/* n floats at each of the pointers (NULL ones skipped) overlap nowhere. */
static int ffn__disjoint(const float *const *p, int np, size_t bytes)
{
    int a, b;
    for (a = 0; a < np; a++)
        for (b = a + 1; b < np; b++)
            if (ffn__overlap(p[a], bytes, p[b], bytes)) return 0;
    return 1;
}

/* v finite (not NaN, not infinite). v != 0 below is ffn__nonzero: exactly v != 0.0f, NaN
   included, spelled without == so that -Wfloat-equal builds stay quiet. */
static int ffn__finite(float v) { return fabsf(v) <= FLT_MAX; }
static int ffn__nonzero(float v) { return !(v <= 0.0f && v >= 0.0f); }

FFNDEF int ffn_sgd_step(float *param, float *momentum_buf, const float *grad, size_t n,
                        float lr, float momentum, float dampening, float weight_decay,
                        int nesterov, int first_step)
{
    const float damp = (float)(1.0 - (double)dampening);
    const float *p[3];
    size_t bytes, i;
    if (!param || !grad || (ffn__nonzero(momentum) && !momentum_buf)) return FFN_ERR_NULL;
    if (!n) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&bytes, n, 1)) return FFN_ERR_OVERFLOW;
    /* torch.optim.SGD's own checks, and finite values, in the arguments' order */
    if (!ffn__finite(lr) || lr < 0.0f) return FFN_ERR_LR;
    if (!ffn__finite(momentum) || momentum < 0.0f) return FFN_ERR_MOMENTUM;
    if (!ffn__finite(dampening)) return FFN_ERR_DAMPENING;
    if (!ffn__finite(weight_decay) || weight_decay < 0.0f) return FFN_ERR_WEIGHT_DECAY;
    if (nesterov && (momentum <= 0.0f || ffn__nonzero(dampening))) return FFN_ERR_NESTEROV;
    p[0] = param; p[1] = ffn__nonzero(momentum) ? momentum_buf : NULL; p[2] = grad;
    if (!ffn__disjoint(p, 3, bytes)) return FFN_ERR_ALIAS;
    /* each product that feeds a sum through a volatile: the bits must not depend on
       whether the compiler fuses it (see the activations) */
    for (i = 0; i < n; i++) {
        volatile float wd_p = weight_decay * param[i], lg;
        float g = ffn__nonzero(weight_decay) ? grad[i] + wd_p : grad[i];
        if (ffn__nonzero(momentum)) {
            volatile float mbv;
            float b = g;                /* the first step: buf = g (buf not read) */
            if (!first_step) {
                volatile float mb = momentum_buf[i] * momentum, dg = damp * g;
                b = mb + dg;
            }
            mbv = momentum * b;
            momentum_buf[i] = b;
            g = nesterov ? g + mbv : b;
        }
        lg = lr * g;
        param[i] = param[i] - lg;
    }
    return FFN_OK;
}

FFNDEF int ffn_adamw_step(float *param, float *m, float *v, const float *grad, size_t n,
                          float lr, float beta1, float beta2, float eps, float weight_decay,
                          long step)
{
    const float *p[4];
    size_t bytes, i;
    float decay, w1, w2, step_size, bc2_sqrt;
    if (!param || !m || !v || !grad) return FFN_ERR_NULL;
    if (!n) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&bytes, n, 1)) return FFN_ERR_OVERFLOW;
    /* torch.optim.AdamW's own checks, finite values and t >= 1, in the arguments' order */
    if (!ffn__finite(lr) || lr < 0.0f) return FFN_ERR_LR;
    if (!(beta1 >= 0.0f && beta1 < 1.0f)) return FFN_ERR_BETA1;
    if (!(beta2 >= 0.0f && beta2 < 1.0f)) return FFN_ERR_BETA2;
    if (!ffn__finite(eps) || eps < 0.0f) return FFN_ERR_EPS;
    if (!ffn__finite(weight_decay) || weight_decay < 0.0f) return FFN_ERR_WEIGHT_DECAY;
    if (step < 1) return FFN_ERR_STEP;
    p[0] = param; p[1] = m; p[2] = v; p[3] = grad;
    if (!ffn__disjoint(p, 4, bytes)) return FFN_ERR_ALIAS;
    /* Python's double arithmetic on the scalars, each rounded to float where torch passes
       it to a float32 kernel */
    decay = (float)(1.0 - (double)lr * (double)weight_decay);
    w1 = (float)(1.0 - (double)beta1);
    w2 = (float)(1.0 - (double)beta2);
    step_size = (float)((double)lr / (1.0 - ffn__powi((double)beta1, step)));
    bc2_sqrt = (float)sqrt(1.0 - ffn__powi((double)beta2, step));
    for (i = 0; i < n; i++) {
        const float g = grad[i], gm = g - m[i];    /* (one operation a step: see */
        volatile float t1, t2, t3;                 /*  ffn__act_grad1) */
        float pi = param[i] * decay, mi, vi, den;
        t1 = w1 * gm;
        mi = m[i] + t1;
        t2 = v[i] * beta2;
        t3 = w2 * g;
        t3 = t3 * g;
        vi = t2 + t3;
        den = sqrtf(vi) / bc2_sqrt;
        den = den + eps;
        t1 = step_size * mi;
        t1 = t1 / den;
        param[i] = pi - t1;
        m[i] = mi;
        v[i] = vi;
    }
    return FFN_OK;
}

/* ==== 12. PATHS ======================================================================= */

enum { FFN__CPU_AVX2 = 1, FFN__CPU_AVX512 = 2 };

/* Tile shapes X(m, np): the accumulator budget is what the register file holds next
   to the loaded weight vectors, m * np * NV <= 12 of 16 ymm (AVX2) or <= 24 of 32 q
   registers (NEON), their superblock sums in a tile on the stack; AVX-512 keeps the
   sums in registers too, 2 m np <= 28 of 32 zmm. The main tile is MR rows high;
   smaller m (rows < MR) take more panels per tile. */
#define FFN__TILES_6(X) \
    X(6,1) X(5,1) X(4,1) X(3,1) X(3,2) X(2,1) X(2,2) X(2,3) X(1,1) X(1,2) X(1,3) X(1,4)
static const unsigned char ffn__np_6[7] = {0, 4, 3, 2, 1, 1, 1};

#ifdef FFN__HAS_AVX2
#define FFN__ISA ffn__avx2
#define FFN__VTARGET FFN__TARGET_AVX2
#define FFN__TILES FFN__TILES_6
#define FFN__SUM_REGS 0
#define FFN__XLANES 0
#define FFN__XPREF 0     /* (on Zen 3 they cost more than they gave: README) */
#define FFN__PREFETCH(p) _mm_prefetch((p), _MM_HINT_T0)
#define FFN__PANEL(OP, i, p) OP(i, 2 * (p)) OP(i, 2 * (p) + 1)
#define FFN__EACH_FITS(m, nj) ((m) <= 6 && (nj) <= 8)
#define FFN__VEC __m256
#define FFN__VL 8
#define FFN__VLOAD(p) _mm256_loadu_ps(p)
#define FFN__VLOAD_BF16(p)                                                               \
    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(                         \
        _mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
#define FFN__VLOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
/* 16 bfloat16 from one load: each 32-bit lane's low word shifted into a float's top
   half (a: the even elements 0, 2, .., 14), its high word with the low one masked off
   (b: the odd ones), exactly as one shift per element would give them;
   FFN__UNPERM2 interleaves them back (0-7 in a, 8-15 in b). */
#define FFN__PAIR16 1
#define FFN__VLOAD2_BF16(p, a, b)                                                        \
    do {                                                                                 \
        const __m256i v_ = _mm256_loadu_si256((const __m256i *)(const void *)(p));      \
        (a) = _mm256_castsi256_ps(_mm256_slli_epi32(v_, 16));                            \
        (b) = _mm256_castsi256_ps(_mm256_and_si256(v_, _mm256_set1_epi32(-65536)));      \
    } while (0)
#define FFN__UNPERM2(a, b)                                                               \
    do {                                                                                 \
        const __m256 lo_ = _mm256_unpacklo_ps((a), (b)), hi_ = _mm256_unpackhi_ps((a), (b)); \
        (a) = _mm256_permute2f128_ps(lo_, hi_, 0x20);                                    \
        (b) = _mm256_permute2f128_ps(lo_, hi_, 0x31);                                    \
    } while (0)
#define FFN__VBCAST(p) _mm256_broadcast_ss(p)
#define FFN__VBCAST4(p) _mm256_broadcast_ps((const __m128 *)(const void *)(p))
#define FFN__VLANE4(q, t) _mm256_permute_ps(q, (t) * 0x55)
#define FFN__VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FFN__VSTORE(p, v) _mm256_storeu_ps(p, v)
#define FFN__VZERO() _mm256_setzero_ps()
#define FFN__VADD(a, b) _mm256_add_ps(a, b)
#define FFN__VRELU(v) _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ), v)
#define FFN__VSET(c) _mm256_set1_ps(c)
#define FFN__VSUB(a, b) _mm256_sub_ps(a, b)
#define FFN__VMUL(a, b) _mm256_mul_ps(a, b)
#define FFN__VDIV(a, b) _mm256_div_ps(a, b)
#define FFN__VNEG(a) _mm256_xor_ps(a, _mm256_set1_ps(-0.0f))
#define FFN__VABS(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a)
#define FFN__VLT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define FFN__VEQ(a, b) _mm256_cmp_ps(a, b, _CMP_EQ_OQ)
#define FFN__VSEL(m, a, b) _mm256_blendv_ps(b, a, m)
#define FFN__VU __m256i
#define FFN__VBITS(a) _mm256_castps_si256(a)
#define FFN__VFLOAT(u) _mm256_castsi256_ps(u)
#define FFN__VUSET(c) _mm256_set1_epi32((int)(c))
#define FFN__VUADD(a, b) _mm256_add_epi32(a, b)
#define FFN__VUSUB(a, b) _mm256_sub_epi32(a, b)
#define FFN__VUSHR(a, n) _mm256_srli_epi32(a, n)
#define FFN__VUSHL(a, n) _mm256_slli_epi32(a, n)
FFN__DEFINE_KERNELS()
FFN__DEFINE_ACT_FAST()
FFN__DEFINE_WIDEN()
#undef FFN__ISA
#undef FFN__VTARGET
#undef FFN__TILES
#undef FFN__SUM_REGS
#undef FFN__XLANES
#undef FFN__XPREF
#undef FFN__PREFETCH
#undef FFN__PANEL
#undef FFN__EACH_FITS
#undef FFN__VEC
#undef FFN__VL
#undef FFN__VLOAD
#undef FFN__VLOAD_BF16
#undef FFN__VLOAD_F16
#undef FFN__PAIR16
#undef FFN__VLOAD2_BF16
#undef FFN__UNPERM2
#undef FFN__VBCAST
#undef FFN__VBCAST4
#undef FFN__VLANE4
#undef FFN__VFMA
#undef FFN__VSTORE
#undef FFN__VZERO
#undef FFN__VADD
#undef FFN__VRELU
#undef FFN__VSET
#undef FFN__VSUB
#undef FFN__VMUL
#undef FFN__VDIV
#undef FFN__VNEG
#undef FFN__VABS
#undef FFN__VLT
#undef FFN__VEQ
#undef FFN__VSEL
#undef FFN__VU
#undef FFN__VBITS
#undef FFN__VFLOAT
#undef FFN__VUSET
#undef FFN__VUADD
#undef FFN__VUSUB
#undef FFN__VUSHR
#undef FFN__VUSHL
static const ffn__isa ffn__isa_avx2 = {"avx2", FFN__CPU_AVX2, 6, ffn__np_6, FFN__KERNELS(ffn__avx2),
                                       ffn__pack_x86, ffn__transpose8, 8,
                                       ffn__avx2_widen, {FFN__ROW_FNS(ffn__avx2)}};
#endif

#ifdef FFN__HAS_AVX512
#define FFN__ISA ffn__avx512
#define FFN__VTARGET FFN__TARGET_AVX512
#define FFN__TILES(X)                                                                    \
    X(7,1) X(7,2) X(6,1) X(6,2) X(5,1) X(5,2) X(4,1) X(4,2) X(4,3)                       \
    X(3,1) X(3,2) X(3,3) X(3,4) X(2,1) X(2,2) X(2,3) X(2,4) X(1,1) X(1,2) X(1,3) X(1,4)
#define FFN__SUM_REGS 1
#define FFN__XLANES 1
#define FFN__XPREF 1024
#define FFN__PREFETCH(p) _mm_prefetch((p), _MM_HINT_T0)
#define FFN__PANEL(OP, i, p) OP(i, p)
#define FFN__EACH_FITS(m, nj) ((m) <= 7 && (nj) <= 4)
#define FFN__VEC __m512
#define FFN__VL 16
#define FFN__VLOAD(p) _mm512_loadu_ps(p)
#define FFN__VLOAD_BF16(p)                                                               \
    _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(     \
        0xFFFF, _mm256_loadu_si256((const __m256i *)(const void *)(p))), 16))
#define FFN__VLOAD_F16(p)                                                                \
    _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define FFN__PAIR16 0   /* (one vector a panel row, or no cheaper pair) */
#define FFN__VLOAD2_BF16(p, a, b) ((void)0)
#define FFN__UNPERM2(a, b) ((void)0)
#define FFN__VBCAST(p) _mm512_set1_ps(*(p))
/* (maskz forms, here and below: g++ 12 warns of the plain ones' undefined pass-through
   operand) */
#define FFN__VBCAST4(p) _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_loadu_ps(p))
#define FFN__VLANE4(q, t) _mm512_maskz_permute_ps(0xFFFF, q, (t) * 0x55)
#define FFN__VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FFN__VSTORE(p, v) _mm512_storeu_ps(p, v)
#define FFN__VZERO() _mm512_setzero_ps()
#define FFN__VADD(a, b) _mm512_add_ps(a, b)
#define FFN__VRELU(v) _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), \
                                         _CMP_LT_OQ), _mm512_setzero_ps())
#define FFN__VSET(c) _mm512_set1_ps(c)
#define FFN__VSUB(a, b) _mm512_sub_ps(a, b)
#define FFN__VMUL(a, b) _mm512_mul_ps(a, b)
#define FFN__VDIV(a, b) _mm512_div_ps(a, b)
#define FFN__VNEG(a) FFN__VFLOAT(_mm512_xor_si512(FFN__VBITS(a), FFN__VUSET(0x80000000u)))
#define FFN__VABS(a) _mm512_abs_ps(a)
#define FFN__VLT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define FFN__VEQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)
#define FFN__VSEL(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define FFN__VU __m512i
#define FFN__VBITS(a) _mm512_castps_si512(a)
#define FFN__VFLOAT(u) _mm512_castsi512_ps(u)
#define FFN__VUSET(c) _mm512_set1_epi32((int)(c))
#define FFN__VUADD(a, b) _mm512_add_epi32(a, b)
#define FFN__VUSUB(a, b) _mm512_sub_epi32(a, b)
#define FFN__VUSHR(a, n) _mm512_maskz_srli_epi32(0xFFFF, a, n)
#define FFN__VUSHL(a, n) _mm512_maskz_slli_epi32(0xFFFF, a, n)
FFN__DEFINE_KERNELS()
FFN__DEFINE_ACT_FAST()
FFN__DEFINE_WIDEN()
#undef FFN__ISA
#undef FFN__VTARGET
#undef FFN__TILES
#undef FFN__SUM_REGS
#undef FFN__XLANES
#undef FFN__XPREF
#undef FFN__PREFETCH
#undef FFN__PANEL
#undef FFN__EACH_FITS
#undef FFN__VEC
#undef FFN__VL
#undef FFN__VLOAD
#undef FFN__VLOAD_BF16
#undef FFN__VLOAD_F16
#undef FFN__PAIR16
#undef FFN__VLOAD2_BF16
#undef FFN__UNPERM2
#undef FFN__VBCAST
#undef FFN__VBCAST4
#undef FFN__VLANE4
#undef FFN__VFMA
#undef FFN__VSTORE
#undef FFN__VZERO
#undef FFN__VADD
#undef FFN__VRELU
#undef FFN__VSET
#undef FFN__VSUB
#undef FFN__VMUL
#undef FFN__VDIV
#undef FFN__VNEG
#undef FFN__VABS
#undef FFN__VLT
#undef FFN__VEQ
#undef FFN__VSEL
#undef FFN__VU
#undef FFN__VBITS
#undef FFN__VFLOAT
#undef FFN__VUSET
#undef FFN__VUADD
#undef FFN__VUSUB
#undef FFN__VUSHR
#undef FFN__VUSHL
/* main tile 7 x 32: 14 zmm accumulators and 14 sums, 2 loads + 7 broadcasts per k */
static const unsigned char ffn__np_7[8] = {0, 4, 4, 4, 3, 2, 2, 2};
static const ffn__isa ffn__isa_avx512 = {"avx512", FFN__CPU_AVX2 | FFN__CPU_AVX512, 7,
                                         ffn__np_7, FFN__KERNELS(ffn__avx512), ffn__pack_x86,
                                         ffn__transpose8, 8, ffn__avx512_widen,
                                         {FFN__ROW_FNS(ffn__avx512)}};
#endif

#ifdef FFN__HAS_NEON
#define FFN__ISA ffn__neon
#define FFN__VTARGET
#define FFN__TILES FFN__TILES_6
#define FFN__SUM_REGS 0
#define FFN__XLANES 0
#define FFN__XPREF 0
#define FFN__PREFETCH(p) ((void)(p))
#define FFN__PANEL(OP, i, p) OP(i, 4 * (p)) OP(i, 4 * (p) + 1) OP(i, 4 * (p) + 2) OP(i, 4 * (p) + 3)
#define FFN__EACH_FITS(m, nj) ((m) <= 6 && (nj) <= 16)
#define FFN__VEC float32x4_t
#define FFN__VL 4
#define FFN__VLOAD(p) vld1q_f32(p)
#define FFN__VLOAD_BF16(p) vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16))
#define FFN__VLOAD_F16(p) vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)))
#define FFN__PAIR16 0   /* (one vector a panel row, or no cheaper pair) */
#define FFN__VLOAD2_BF16(p, a, b) ((void)0)
#define FFN__UNPERM2(a, b) ((void)0)
#define FFN__VBCAST(p) vld1q_dup_f32(p)
#define FFN__VBCAST4(p) vld1q_f32(p)
#define FFN__VLANE4(q, t) vdupq_laneq_f32(q, t)
#define FFN__VFMA(a, b, c) vfmaq_f32(c, a, b)
#define FFN__VSTORE(p, v) vst1q_f32(p, v)
#define FFN__VZERO() vdupq_n_f32(0.0f)
#define FFN__VADD(a, b) vaddq_f32(a, b)
#define FFN__VRELU(v) vbslq_f32(vcltq_f32(v, vdupq_n_f32(0.0f)), vdupq_n_f32(0.0f), v)
#define FFN__VSET(c) vdupq_n_f32(c)
#define FFN__VSUB(a, b) vsubq_f32(a, b)
#define FFN__VMUL(a, b) vmulq_f32(a, b)
#define FFN__VDIV(a, b) vdivq_f32(a, b)
#define FFN__VNEG(a) vnegq_f32(a)
#define FFN__VABS(a) vabsq_f32(a)
#define FFN__VLT(a, b) vcltq_f32(a, b)
#define FFN__VEQ(a, b) vceqq_f32(a, b)
#define FFN__VSEL(m, a, b) vbslq_f32(m, a, b)
#define FFN__VU uint32x4_t
#define FFN__VBITS(a) vreinterpretq_u32_f32(a)
#define FFN__VFLOAT(u) vreinterpretq_f32_u32(u)
#define FFN__VUSET(c) vdupq_n_u32(c)
#define FFN__VUADD(a, b) vaddq_u32(a, b)
#define FFN__VUSUB(a, b) vsubq_u32(a, b)
#define FFN__VUSHR(a, n) vshrq_n_u32(a, n)
#define FFN__VUSHL(a, n) vshlq_n_u32(a, n)
FFN__DEFINE_KERNELS()
FFN__DEFINE_ACT_FAST()
FFN__DEFINE_WIDEN()
#undef FFN__ISA
#undef FFN__VTARGET
#undef FFN__TILES
#undef FFN__SUM_REGS
#undef FFN__XLANES
#undef FFN__XPREF
#undef FFN__PREFETCH
#undef FFN__PANEL
#undef FFN__EACH_FITS
#undef FFN__VEC
#undef FFN__VL
#undef FFN__VLOAD
#undef FFN__VLOAD_BF16
#undef FFN__VLOAD_F16
#undef FFN__PAIR16
#undef FFN__VLOAD2_BF16
#undef FFN__UNPERM2
#undef FFN__VBCAST
#undef FFN__VBCAST4
#undef FFN__VLANE4
#undef FFN__VFMA
#undef FFN__VSTORE
#undef FFN__VZERO
#undef FFN__VADD
#undef FFN__VRELU
#undef FFN__VSET
#undef FFN__VSUB
#undef FFN__VMUL
#undef FFN__VDIV
#undef FFN__VNEG
#undef FFN__VABS
#undef FFN__VLT
#undef FFN__VEQ
#undef FFN__VSEL
#undef FFN__VU
#undef FFN__VBITS
#undef FFN__VFLOAT
#undef FFN__VUSET
#undef FFN__VUADD
#undef FFN__VUSUB
#undef FFN__VUSHR
#undef FFN__VUSHL
static const ffn__isa ffn__isa_neon = {"neon", 0, 6, ffn__np_6, FFN__KERNELS(ffn__neon),
                                       ffn__pack_neon, ffn__transpose4, 4,
                                       ffn__neon_widen, {FFN__ROW_FNS(ffn__neon)}};
#endif

static const ffn__isa ffn__isa_scalar = {"scalar", 0, 0, NULL, {NULL, NULL, NULL}, ffn__pack_scalar,
                                         NULL, 0,
                                         NULL, {FFN__ROW_FNS(ffn__scalar)}};

/* ---- choosing the path ------------------------------------------------------ */

#ifdef FFN__DISPATCH
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void ffn__cpuid(unsigned leaf, unsigned r[4])
{
    int v[4];
    __cpuidex(v, (int)leaf, 0);
    r[0] = (unsigned)v[0]; r[1] = (unsigned)v[1]; r[2] = (unsigned)v[2]; r[3] = (unsigned)v[3];
}
static unsigned ffn__xcr0(void) { return (unsigned)_xgetbv(0); }
#else
#include <cpuid.h>
static void ffn__cpuid(unsigned leaf, unsigned r[4])
{
    unsigned a, b, c, d;
    __cpuid_count(leaf, 0, a, b, c, d);
    r[0] = a; r[1] = b; r[2] = c; r[3] = d;
}
static unsigned ffn__xcr0(void)     /* xgetbv(0), spelled out for older assemblers */
{
    unsigned a, d;
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(a), "=d"(d) : "c"(0));
    return a;
}
#endif
/* The instructions (cpuid) and the OS saving the registers they use (xgetbv: the
   ymm state for AVX2; also the opmask and zmm states for AVX-512). */
static unsigned ffn__cpu_detect(void)
{
    unsigned r0[4], r1[4], r7[4] = {0, 0, 0, 0}, xcr0 = 0, avx2, avx512;
    ffn__cpuid(0, r0);
    ffn__cpuid(1, r1);
    if (r0[0] >= 7) ffn__cpuid(7, r7);
    if (r1[2] >> 27 & 1) xcr0 = ffn__xcr0();                           /* OSXSAVE */
    avx2 = (r1[2] >> 28 & 1) && (r1[2] >> 12 & 1) && (r1[2] >> 29 & 1) && (r7[1] >> 5 & 1) &&
           (xcr0 & 6) == 6;                         /* AVX, FMA, F16C, AVX2; ymm state */
    avx512 = avx2 && (r7[1] >> 16 & 1) && (xcr0 & 0xe6) == 0xe6;
    return (avx2 ? (unsigned)FFN__CPU_AVX2 : 0u) | (avx512 ? (unsigned)FFN__CPU_AVX512 : 0u);
}
#endif

/* The FFN__CPU_* bits this machine has: what the flags guarantee, plus cpuid. */
static unsigned ffn__cpu(void)
{
    unsigned have = 0;
#ifdef FFN__FLAGS_AVX2
    have |= FFN__CPU_AVX2;
#endif
#ifdef FFN__FLAGS_AVX512
    have |= FFN__CPU_AVX512;
#endif
#ifdef FFN__DISPATCH
    have |= ffn__cpu_detect();
#endif
    return have;
}

/* The paths of this architecture, best first; NULL: not compiled in this build. */
static const struct { const char *name; const ffn__isa *isa; } ffn__paths[] = {
#if defined(FFN__ARCH_X86)
#ifdef FFN__HAS_AVX512
    {"avx512", &ffn__isa_avx512},
#else
    {"avx512", NULL},
#endif
#ifdef FFN__HAS_AVX2
    {"avx2", &ffn__isa_avx2},
#else
    {"avx2", NULL},
#endif
#elif defined(__aarch64__)
#ifdef FFN__HAS_NEON
    {"neon", &ffn__isa_neon},
#else
    {"neon", NULL},
#endif
#endif
    {"scalar", &ffn__isa_scalar}};
#define FFN__NPATHS (sizeof ffn__paths / sizeof ffn__paths[0])

/* FFN_OK if path i is compiled and a CPU with the FFN__CPU_* bits `have` runs it. */
static int ffn__path_ok(size_t i, unsigned have)
{
    if (!ffn__paths[i].isa) return FFN_ERR_PATH;
    return (ffn__paths[i].isa->need & ~have) ? FFN_ERR_CPU : FFN_OK;
}

/* The cached choice: 0 until the first call picks, then 1 + its index in ffn__paths.
   Threads that race through their first call all store the same value; the atomic
   access keeps that a well-defined program (ThreadSanitizer agrees). */
static long ffn__chosen;
#if defined(__ATOMIC_RELAXED)
#define FFN__LOAD(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define FFN__STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#elif defined(_MSC_VER)
#define FFN__LOAD(p) _InterlockedOr(p, 0)
#define FFN__STORE(p, v) ((void)_InterlockedExchange(p, v))
#else
#define FFN__LOAD(p) (*(p))
#define FFN__STORE(p, v) ((void)(*(p) = (v)))
#endif

static long ffn__best(void)
{
    const unsigned have = ffn__cpu();
    size_t i = 0;
    while (ffn__path_ok(i, have) != FFN_OK) i++;    /* scalar, the last, always is */
    return (long)i + 1;
}

static const ffn__isa *ffn__current(void)
{
    long i = FFN__LOAD(&ffn__chosen);
    if (!i) {
        i = ffn__best();
        FFN__STORE(&ffn__chosen, i);
    }
    return ffn__paths[i - 1].isa;
}

FFNDEF const char *ffn_path(void) { return ffn__current()->name; }

FFNDEF const char *ffn_path_name(int i)
{
    return i >= 0 && (size_t)i < FFN__NPATHS ? ffn__paths[i].name : NULL;
}

FFNDEF int ffn_set_path(const char *name)
{
    size_t i;
    if (!name || strcmp(name, "auto") == 0) {
        FFN__STORE(&ffn__chosen, ffn__best());
        return FFN_OK;
    }
    for (i = 0; i < FFN__NPATHS; i++)
        if (strcmp(name, ffn__paths[i].name) == 0) {
            int st = ffn__path_ok(i, ffn__cpu());
            if (st == FFN_OK) FFN__STORE(&ffn__chosen, (long)i + 1);
            return st;
        }
    return FFN_ERR_PATH;
}

#endif /* FFN_IMPLEMENTATION_DONE */
#endif /* FFN_IMPLEMENTATION */

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
