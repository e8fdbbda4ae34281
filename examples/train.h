/* examples/train.h - the toy model that examples/train.c trains, in the style of llm.c's
   train_gpt2.c: each layer one plain call, shapes in comments, output first. One copy of
   the model: examples/train.c (the program) and tests/test_golden.c (op=train: the loss
   curve against torch's, from reference/make_goldens.py) both include this file.

   The model, per position (it mixes no positions: no attention), in PyTorch terms:
      e      = wte(ids) + wpe(arange(S))        token + position table (B, S, D)
               (or + a fixed sinusoidal table: 000's PositionalEncoding buffer)
      h      = e + ffn(e)                       ffn = 000's FeedForwardNN: fc2(relu(fc1(e)))
      logits = head(h)                          nn.Linear(D, V)            (B, S, V)
      loss   = F.cross_entropy(logits.view(-1, V), y.view(-1))   the mean over B*S tokens
   trained with torch.optim.AdamW on every parameter. The residual h = e + ffn(e) is the
   transformer block's form (x + mlp(x)): the embeddings get their gradient through the
   identity as well as through the block, so the training runs smoothly from torch's
   default initialisation; ffn(e) alone would make every step go through fc1 and fc2.
   The task needs the position table: y[s] = (x[s] + s) mod V for random tokens x, so the
   same token has another target at each position.

   Include pe.h and ffn.h (declarations at least) and <stdint.h> before this file.
   Everything here is static: the file is meant for one program at a time. */
#ifndef EXAMPLES_TRAIN_H
#define EXAMPLES_TRAIN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The run: the same numbers as reference/make_goldens.py's TRAIN_CONFIG (the golden's
   manifest line repeats them and tests/test_golden.c checks that they agree). */
typedef struct {
    size_t vocab, seq, d_model, hidden, batch;  /* V, S, D, H, B */
    long steps;
    int sinusoidal;                 /* 1: a fixed sinusoidal position table, 0: learned */
    float lr, beta1, beta2, eps, weight_decay;  /* torch.optim.AdamW's */
    uint32_t seed;                  /* the batches' generator (train_batch) */
} train_config;

static train_config train_default_config(int sinusoidal)
{
    train_config c;
    c.vocab = 16;
    c.seq = 8;
    c.d_model = 16;
    c.hidden = 32;
    c.batch = 8;
    c.steps = 300;
    c.sinusoidal = sinusoidal;
    c.lr = 0.01f;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.eps = 1e-8f;
    c.weight_decay = 0.01f;
    c.seed = 1;
    return c;
}

/* The parameters, in the order of the torch model's .parameters(): wte, wpe (learned table
   only), fc1.weight, fc1.bias, fc2.weight, fc2.bias, head.weight, head.bias. One block of
   n_params floats each for the values, the gradients and AdamW's m and v. */
#define TRAIN_NUM_TENSORS 8
typedef struct {
    train_config c;
    size_t sizes[TRAIN_NUM_TENSORS];    /* floats per tensor (wpe's is 0 if sinusoidal) */
    size_t n_params;
    float *params, *grads, *m, *v;
    float *wte, *wpe, *w1, *b1, *w2, *b2, *wh, *bh;         /* into params */
    float *dwte, *dwpe, *dw1, *db1, *dw2, *db2, *dwh, *dbh; /* into grads */
    float *table;           /* (S, D): wpe, or the sinusoidal table */
    /* one batch's activations, N = B*S rows */
    int32_t *ids, *targets; /* (B, S) */
    float *e;               /* (N, D)  wte[ids] + table[s] */
    float *pre;             /* (N, H)  fc1(e), saved for the backward */
    float *f;               /* (N, D)  ffn(e) */
    float *h;               /* (N, D)  e + ffn(e) */
    float *logits;          /* (N, V) */
    float *dlogits;         /* (N, V) */
    float *dh;              /* (N, D)  loss's gradient at h, then at e */
    float *dx;              /* (N, D)  the block's x.grad */
    float *scratch;
    size_t n_scratch;
    uint32_t rng;           /* the batch generator's state */
    long step;              /* AdamW's step count (state['step']) */
    float *block;           /* the allocations: the floats, */
    int32_t *ints;          /* the ids and targets */
} train_model;

/* One status for both headers (pe.h's are -1xx, ffn.h's -2xx); -1: out of memory. */
static const char *train_status_string(int status)
{
    if (status == -1) return "out of memory";
    return status > -200 ? pe_status_string(status) : ffn_status_string(status);
}

/* The batches: a 32-bit LCG (Numerical Recipes' constants), each token its bits 16..31
   mod V, y[s] = (x[s] + s) mod V. reference/make_goldens.py has the same generator, so
   no batch needs storing. */
static void train_batch(train_model *m)
{
    const train_config *c = &m->c;
    size_t b, s;
    for (b = 0; b < c->batch; b++)
        for (s = 0; s < c->seq; s++) {
            m->rng = m->rng * 1664525u + 1013904223u;
            m->ids[b * c->seq + s] = (int32_t)((m->rng >> 16) % c->vocab);
            m->targets[b * c->seq + s] = (int32_t)(((m->rng >> 16) % c->vocab + s) % c->vocab);
        }
}

static void train_free(train_model *m)
{
    free(m->block);
    free(m->ints);
    memset(m, 0, sizeof *m);
}

/* Allocates the model for config c, everything zero but the sinusoidal table (made here);
   the caller then fills m->params (n_params floats, in .parameters() order). 0 or a
   status. */
static int train_init(train_model *m, const train_config *c)
{
    const size_t V = c->vocab, S = c->seq, D = c->d_model, H = c->hidden, N = c->batch * c->seq;
    size_t ns1 = ffn_block_scratch_floats(N, D, H), ns2 = ffn_block_backward_scratch_floats(N, D, H);
    size_t ns3 = ffn_linear_backward_scratch_floats(N, D, V), i, floats;
    float *p;
    int st;
    memset(m, 0, sizeof *m);
    m->c = *c;
    m->sizes[0] = V * D;
    m->sizes[1] = c->sinusoidal ? 0 : S * D;
    m->sizes[2] = H * D;
    m->sizes[3] = H;
    m->sizes[4] = D * H;
    m->sizes[5] = D;
    m->sizes[6] = V * D;
    m->sizes[7] = V;
    for (i = 0; i < TRAIN_NUM_TENSORS; i++) m->n_params += m->sizes[i];
    m->n_scratch = ns1 > ns2 ? ns1 : ns2;
    if (ns3 > m->n_scratch) m->n_scratch = ns3;
    floats = 4 * m->n_params + S * D + N * (5 * D + H + 2 * V) + m->n_scratch;
    m->block = (float *)calloc(floats, sizeof(float));
    m->ints = (int32_t *)calloc(2 * N, sizeof(int32_t));
    if (!m->block || !m->ints) {
        train_free(m);
        return -1;
    }
    p = m->block;
    m->params = p; p += m->n_params;
    m->grads = p; p += m->n_params;
    m->m = p; p += m->n_params;
    m->v = p; p += m->n_params;
    {
        float **pp[TRAIN_NUM_TENSORS] = {&m->wte, &m->wpe, &m->w1, &m->b1, &m->w2, &m->b2, &m->wh, &m->bh};
        float **gp[TRAIN_NUM_TENSORS] = {&m->dwte, &m->dwpe, &m->dw1, &m->db1, &m->dw2, &m->db2, &m->dwh, &m->dbh};
        size_t off = 0;
        for (i = 0; i < TRAIN_NUM_TENSORS; i++) {
            *pp[i] = m->sizes[i] ? m->params + off : NULL;
            *gp[i] = m->sizes[i] ? m->grads + off : NULL;
            off += m->sizes[i];
        }
    }
    m->table = c->sinusoidal ? p : m->wpe; p += S * D;
    m->e = p; p += N * D;
    m->pre = p; p += N * H;
    m->f = p; p += N * D;
    m->h = p; p += N * D;
    m->logits = p; p += N * V;
    m->dlogits = p; p += N * V;
    m->dh = p; p += N * D;
    m->dx = p; p += N * D;
    m->scratch = p;
    m->ids = m->ints;
    m->targets = m->ints + N;
    if (c->sinusoidal && (st = pe_sinusoidal_table(m->table, S, D)) < 0) {
        train_free(m);
        return st;
    }
    m->rng = c->seed;
    return 0;
}

/* loss = mean over the n rows of -log_softmax(logits)[target], and dlogits = its gradient,
   (softmax - onehot) / n: F.cross_entropy and its backward, in float as torch's kernels:
   log-sum-exp with the row's max subtracted, logp = (l - max) - log(sum exp(l - max)),
   softmax = exp(logp). The mean is summed in double and rounded once. Each float step is
   a statement of its own: C rounds an assignment to float even where it evaluates float
   expressions in double (s390x). expf and logf are the C library's: the loss's last bits
   are the platform's (pe.h's and ffn.h's are not). */
static float train_cross_entropy(float *dlogits, const float *logits, const int32_t *targets,
                                 size_t n, size_t vocab)
{
    double total = 0.0;
    size_t r, j;
    for (r = 0; r < n; r++) {
        const float *l = logits + r * vocab;
        float *dl = dlogits + r * vocab, mx = l[0], sum = 0.0f, lse;
        for (j = 1; j < vocab; j++)
            if (l[j] > mx) mx = l[j];
        j = 0;
        do {                                /* vocab >= 1 */
            const float z = l[j] - mx;
            sum += expf(z);
        } while (++j < vocab);
        lse = logf(sum);                    /* sum >= 1: the max's term is 1 */
        for (j = 0; j < vocab; j++) {
            const float z = l[j] - mx;
            const float logp = z - lse;
            const float p = expf(logp);     /* softmax */
            const float g = p - ((int32_t)j == targets[r] ? 1.0f : 0.0f);
            dl[j] = g / (float)n;
            if ((int32_t)j == targets[r]) total -= (double)logp;
        }
    }
    return (float)(total / (double)n);
}

/* The block (fc1, fc2) as ffn.h's descriptor: float32 weights in nn.Linear's layout. */
static ffn_mlp train_block(const train_model *m)
{
    ffn_mlp b;
    b.fc1 = ffn_weight_of(m->w1, FFN_F32, FFN_OUT_IN);
    b.fc2 = ffn_weight_of(m->w2, FFN_F32, FFN_OUT_IN);
    b.b1 = m->b1;
    b.b2 = m->b2;
    b.d_model = m->c.d_model;
    b.hidden = m->c.hidden;
    b.act = FFN_RELU;
    return b;
}

/* Forward on the batch in m->ids / m->targets; *loss gets the mean cross-entropy and
   m->dlogits its gradient. 0 or a status. */
static int train_forward(train_model *m, float *loss)
{
    const train_config *c = &m->c;
    const size_t V = c->vocab, S = c->seq, D = c->d_model, B = c->batch;
    const size_t N = B * S;
    const ffn_mlp block = train_block(m);
    const ffn_weight head = ffn_weight_of(m->wh, FFN_F32, FFN_OUT_IN);
    size_t i;
    int st;
    /* e (B, S, D) = wte[ids] + table[s] */
    if ((st = pe_embed(m->e, m->ids, m->wte, m->table, B, S, D, V, S)) < 0) return st;
    /* f (N, D) = fc2(relu(fc1(e))), pre (N, H) = fc1(e) kept for the backward */
    if ((st = ffn_mlp_train(m->f, m->pre, m->e, N, &block, m->scratch, m->n_scratch)) < 0)
        return st;
    /* h (N, D) = e + f */
    for (i = 0; i < N * D; i++) m->h[i] = m->e[i] + m->f[i];
    /* logits (N, V) = h @ wh^T + bh */
    if ((st = ffn_linear_w(m->logits, m->h, &head, m->bh, N, D, V)) < 0) return st;
    *loss = train_cross_entropy(m->dlogits, m->logits, m->targets, N, V);
    return 0;
}

/* Backward from m->dlogits: every gradient, as loss.backward() leaves .grad after
   optimizer.zero_grad() (zeroed here, then accumulated into). 0 or a status. */
static int train_backward(train_model *m)
{
    const train_config *c = &m->c;
    const size_t V = c->vocab, S = c->seq, D = c->d_model, B = c->batch;
    const size_t N = B * S;
    const ffn_mlp block = train_block(m);
    const ffn_weight head = ffn_weight_of(m->wh, FFN_F32, FFN_OUT_IN);
    ffn_mlp_grads g;
    size_t i;
    int st;
    g.dx = m->dx;
    g.dw1 = m->dw1;
    g.db1 = m->db1;
    g.dw2 = m->dw2;
    g.db2 = m->db2;
    memset(m->grads, 0, m->n_params * sizeof(float));
    /* head: dh (N, D) = dlogits @ wh; dwh (V, D) += dlogits^T @ h; dbh (V) += sum */
    if ((st = ffn_linear_backward_w(m->dh, m->dwh, m->dbh, m->dlogits, m->h, &head, N, D, V,
                                    m->scratch, m->n_scratch)) < 0) return st;
    /* the block, dy = dh: dx (N, D) its x.grad; dw1, db1, dw2, db2 accumulated */
    if ((st = ffn_mlp_backward(&g, m->dh, m->e, m->pre, N, &block, m->scratch,
                               m->n_scratch)) < 0) return st;
    /* de (N, D) = dh + dx: the residual's identity plus the block's (into dh) */
    for (i = 0; i < N * D; i++) m->dh[i] += m->dx[i];
    /* dwte (V, D) += de's rows at their ids; dwpe (S, D) += de summed over the batch
       (NULL for the sinusoidal table: not a parameter) */
    return pe_embed_backward(m->dwte, m->dwpe, m->dh, m->ids, B, S, D, V, S);
}

/* optimizer.step(): AdamW on each tensor. 0 or a status. */
static int train_update(train_model *m)
{
    const train_config *c = &m->c;
    size_t i, off = 0;
    m->step++;
    for (i = 0; i < TRAIN_NUM_TENSORS; i++) {
        if (m->sizes[i]) {
            const int st = ffn_adamw_step(m->params + off, m->m + off, m->v + off, m->grads + off,
                                          m->sizes[i], c->lr, c->beta1, c->beta2, c->eps,
                                          c->weight_decay, m->step);
            if (st < 0) return st;
        }
        off += m->sizes[i];
    }
    return 0;
}

/* One training step, torch's loop body:
      x, y = batch(); loss = F.cross_entropy(model(x)...); optimizer.zero_grad();
      loss.backward(); optimizer.step()
   *loss gets the step's loss (before the update). 0 or a status. */
static int train_step(train_model *m, float *loss)
{
    int st;
    train_batch(m);
    if ((st = train_forward(m, loss)) < 0) return st;
    if ((st = train_backward(m)) < 0) return st;
    return train_update(m);
}

#endif /* EXAMPLES_TRAIN_H */
