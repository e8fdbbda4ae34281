/* tests/test_threads.c - ffn.h and pe.h on threads (pthreads; built with
   -fsanitize=thread in CI's tsan leg, tools/sanitize.sh):

     cc -std=c99 -O1 -g -fsanitize=thread tests/test_threads.c support/unit.c -lm -lpthread

   1. Many threads make their first call to pe.h and ffn.h at one moment (a barrier):
      each header's path and the bits of an add and a small Linear, the same in every
      thread and in a call made after them (the path picked on first use, race-free).
   2. ffn.h on a pool of the caller's (3 workers and the calling thread) lent as 2, 3,
      4, 7 and 16 threads: every GEMM-running call of features/ (FEATURE_THREADS_CALLS)
      the bits of the calling thread alone, each task index once per parallel-for, never
      more tasks than threads.
   3. The pool lent and taken back 200 times at least while 4 threads call the Linear:
      the same bits in every result.
   4. The stack ffn.h documents (MEMORY): on every path, the calls of 2 (among them
      unpacked weights, packed into FFN_STACK_FLOATS' buffer, and 16-bit packed ones at
      more rows than a tile, widened into it) run on a thread with that much stack and
      16 KiB for this test's own frames: the calling thread's bits. Optimised builds
      without AddressSanitizer only: at -O0 gcc and clang give the tiles frames of
      60-180 KiB, and ASan puts red zones around every local array.
   The pool (pool_for, the ffn_parallel_for_fn) is a plain one to start from: one job at
   a time, tasks handed out under a mutex, the caller working beside its workers. */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t under -std=c99 */
#endif
#include <pthread.h>

#include "../pe.h"
#include "../ffn.h"
#include "../support/harness.h"

enum { THREADS = 8, D = 40, ROWS = 3, OUT = 20 };

/* ---- a thread pool of the caller's -------------------------------------------------- */
enum { WORKERS = 3, MAX_TASKS = 1024 };

typedef struct pool {
    pthread_mutex_t one;            /* one parallel-for at a time (callers queue here) */
    pthread_mutex_t mu;             /* the job below */
    pthread_cond_t work, done;
    pthread_t th[WORKERS];
    int threads;                    /* what it is lent as */
    ffn_task_fn task;
    void *arg;
    int n, next, finished, stop;
    long job;                       /* a new job: workers wake on a change */
    int runs[MAX_TASKS];            /* how often each index ran in this job */
    long jobs, bad;                 /* jobs run; jobs with a wrong n or index count */
} pool;

/* Takes tasks of the current job while there are any (pool mutex held). */
static void pool_take(pool *p)
{
    while (p->next < p->n) {
        const int i = p->next++;
        p->runs[i]++;
        pthread_mutex_unlock(&p->mu);
        p->task(p->arg, i);
        pthread_mutex_lock(&p->mu);
        if (++p->finished == p->n) pthread_cond_broadcast(&p->done);
    }
}

static void *pool_worker(void *arg)
{
    pool *p = (pool *)arg;
    long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->job == seen && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        seen = p->job;
        pool_take(p);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The ffn_parallel_for_fn: task(arg, i) for i < n on the workers and the caller. */
static void pool_for(void *pool_arg, int n, ffn_task_fn task, void *arg)
{
    pool *p = (pool *)pool_arg;
    int i, wrong = n < 2 || n > p->threads || n > MAX_TASKS;
    pthread_mutex_lock(&p->one);
    pthread_mutex_lock(&p->mu);
    p->task = task;
    p->arg = arg;
    p->n = wrong ? 0 : n;
    p->next = p->finished = 0;
    for (i = 0; i < p->n; i++) p->runs[i] = 0;
    p->job++;
    pthread_cond_broadcast(&p->work);
    pool_take(p);
    while (p->finished < p->n) pthread_cond_wait(&p->done, &p->mu);
    for (i = 0; i < p->n; i++) wrong |= p->runs[i] != 1;
    p->jobs++;
    p->bad += wrong;
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->one);
}

static int pool_start(pool *p)
{
    int i, ok = 1;
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->one, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (i = 0; i < WORKERS; i++) ok = ok && pthread_create(&p->th[i], NULL, pool_worker, p) == 0;
    return ok;
}

static void pool_stop(pool *p)
{
    int i;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < WORKERS; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->one);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
}

/* ---- ffn.h's calls on the pool ------------------------------------------------------ */

static float *pattern(size_t n, unsigned seed)
{
    float *v = (float *)malloc(n * sizeof *v);
    size_t i;
    unsigned s = seed * 2654435761u + 1u;
    for (i = 0; v && i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)(s >> 9) / 8388608.0f - 1.0f;     /* [-1, 1) in steps of 2^-23 */
    }
    return v;
}

/* One shape's inputs (w1, wu: (h, d); w2: (d, h); *p: packed), a scratch of the most
   that any call needs, and every output of the calls (all in one buffer, so that one
   memcmp compares them). */
typedef struct {
    size_t rows, d, h, nout, ns;
    float *x, *w1, *wu, *w2, *b1, *bu, *b2, *w1p, *wup, *w2p, *dy, *scratch, *out;
} work;

/* A feature's calls (rows of features/, FEATURE_THREADS_CALLS): out and scratch: the
   floats they write and the scratch they need for a shape; run: the calls into o (the
   gradients from zero), the OR of their statuses. */
typedef struct {
    size_t (*out)(size_t rows, size_t d, size_t h);
    size_t (*scratch)(size_t rows, size_t d, size_t h);
    int (*run)(const work *k, float *o);
} thr_calls;

#define FEATURE_THREADS
#include "../features/all.inc"
#undef FEATURE_THREADS

static const thr_calls calls_all[] = {
#define FEATURE_THREADS_CALLS
#include "../features/all.inc"
#undef FEATURE_THREADS_CALLS
};
#define N_CALLS (sizeof calls_all / sizeof calls_all[0])

static int work_make(work *k, size_t rows, size_t d, size_t h)
{
    size_t i, n;
    k->rows = rows; k->d = d; k->h = h;
    k->x = pattern(rows * d, 1); k->w1 = pattern(h * d, 2); k->wu = pattern(h * d, 3);
    k->w2 = pattern(d * h, 4); k->b1 = pattern(h, 5); k->bu = pattern(h, 6);
    k->b2 = pattern(d, 7); k->dy = pattern(rows * (d > h ? d : h), 8);  /* (rows, d) or (rows, h) */
    k->w1p = thr_packed(k->w1, d, h);
    k->wup = thr_packed(k->wu, d, h);
    k->w2p = thr_packed(k->w2, h, d);
    for (k->ns = k->nout = 0, i = 0; i < N_CALLS; i++) {
        n = calls_all[i].scratch(rows, d, h);
        k->ns = n > k->ns ? n : k->ns;
        k->nout += calls_all[i].out(rows, d, h);
    }
    k->scratch = (float *)calloc(k->ns, sizeof(float));
    k->out = (float *)malloc(k->nout * sizeof(float));
    return k->x && k->w1 && k->wu && k->w2 && k->b1 && k->bu && k->b2 && k->dy && k->w1p &&
           k->wup && k->w2p && k->scratch && k->out;
}

static void work_free(work *k)
{
    free(k->x); free(k->w1); free(k->wu); free(k->w2); free(k->b1); free(k->bu); free(k->b2);
    free(k->dy); free(k->w1p); free(k->wup); free(k->w2p); free(k->scratch); free(k->out);
}

/* Every call of features/ into k->out; the OR of their statuses. */
static int work_run(work *k)
{
    float *o = k->out;
    size_t i;
    int st = 0;
    memset(k->out, 0, k->nout * sizeof(float));
    for (i = 0; i < N_CALLS; i++) {
        st |= calls_all[i].run(k, o);
        o += calls_all[i].out(k->rows, k->d, k->h);
    }
    return st;
}

/* 2. the pool lent as several thread counts against the calling thread alone */
static void test_pool(pool *p)
{
    /* (small: valgrind runs this too) one row, whose weights' cost splits it most;
       8 rows, a grid; 600 rows, row ranges through both layers at 2 threads; 37 rows */
    static const size_t shapes[][3] = {{1, 256, 1024}, {8, 128, 1024}, {600, 32, 48},
                                       {37, 100, 333}};
    static const int lent[] = {2, 3, 4, 7, 16};
    size_t si;
    int li;
    for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        work k;
        float *ref;
        int st, ok;
        if (!work_make(&k, shapes[si][0], shapes[si][1], shapes[si][2]) ||
            !(ref = (float *)malloc(k.nout * sizeof(float)))) {
            th_check(0, "pool: out of memory");
            work_free(&k);
            return;
        }
        lend(NULL, NULL, 0);
        st = work_run(&k);
        memcpy(ref, k.out, k.nout * sizeof(float));
        for (li = 0; li < (int)(sizeof lent / sizeof lent[0]); li++) {
            long jobs0 = p->jobs;
            p->threads = lent[li];
            ok = lend(pool_for, p, lent[li]) == FFN_OK;
            st |= work_run(&k);
            lend(NULL, NULL, 0);
            /* (the scalar path runs on the calling thread: no parallel-for there) */
            th_check(ok && !st && !memcmp(ref, k.out, k.nout * sizeof(float)) && !p->bad &&
                         (p->jobs > jobs0 || !strcmp(th_ffn.now(), "scalar")),
                     "pool of %d threads lent as %d: rows %zu d %zu h %zu, every call the "
                     "bits of one thread (%ld parallel-fors, %ld wrong)", WORKERS + 1, lent[li],
                     k.rows, k.d, k.h, p->jobs - jobs0, p->bad);
        }
        free(ref);
        work_free(&k);
    }
    th_check(lend(pool_for, p, 0) == FFN_ERR_THREADS &&
                 lend(pool_for, p, 1025) == FFN_ERR_THREADS &&
                 lend(NULL, NULL, 0) == FFN_OK,
             "lending: n_threads 0 and 1025 are FFN_ERR_THREADS");
}

/* 3. the pool set and unset while other threads call */
typedef struct {
    const work *k;
    float y[16 * 256];
    int status, same;
} caller;

static pthread_barrier_t go;
static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;
static int race_done, race_sets;    /* callers finished, settings made (race_mu) */
static float race_ref[16 * 256];

static void *race_caller(void *arg)
{
    caller *c = (caller *)arg;
    int r, sets = 0;
    const work *k = c->k;
    pthread_barrier_wait(&go);
    c->same = 1;
    for (r = 0; r < 10 || sets < 200; r++) {     /* while the settings change */
        c->status |= op_linear(c->y, k->x, k->w1, k->b1, k->rows, k->d, k->h, 0);
        c->same = c->same && !memcmp(c->y, race_ref, k->rows * k->h * sizeof(float));
        pthread_mutex_lock(&race_mu);
        sets = race_sets;
        pthread_mutex_unlock(&race_mu);
    }
    pthread_mutex_lock(&race_mu);
    race_done++;
    pthread_mutex_unlock(&race_mu);
    return NULL;
}

static void test_race(pool *p)
{
    enum { CALLERS = 4 };
    static caller c[CALLERS];
    pthread_t t[CALLERS];
    work k;
    int i, n, sets, started = 1, ok = 1;
    if (!work_make(&k, 16, 256, 256)) {
        th_check(0, "race: out of memory");
        work_free(&k);
        return;
    }
    lend(NULL, NULL, 0);
    ok = !op_linear(race_ref, k.x, k.w1, k.b1, k.rows, k.d, k.h, 0);
    p->threads = 4;
    pthread_barrier_init(&go, NULL, CALLERS + 1);
    for (i = 0; i < CALLERS; i++) {
        c[i].k = &k;
        started = started && pthread_create(&t[i], NULL, race_caller, &c[i]) == 0;
    }
    if (!started) {
        th_check(0, "race: %d threads started", CALLERS);
        exit(th_summary());
    }
    pthread_barrier_wait(&go);
    for (i = 0, n = 0; n < CALLERS; i++) {     /* until the callers are done */
        lend(i % 2 ? NULL : pool_for, i % 2 ? NULL : p, 4);
        pthread_mutex_lock(&race_mu);
        n = race_done;
        race_sets = i + 1;
        pthread_mutex_unlock(&race_mu);
    }
    sets = i;
    for (i = 0; i < CALLERS; i++) {
        pthread_join(t[i], NULL);
        ok = ok && !c[i].status && c[i].same;
    }
    lend(NULL, NULL, 0);
    pthread_barrier_destroy(&go);
    th_check(ok && !p->bad, "pool set and unset %d times while %d threads call the Linear "
             "(16 x 256 -> 256) all the while: the same bits", sets, CALLERS);
    work_free(&k);
}

/* 4. the documented stack */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACK_ASAN 1
#endif
#endif
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(STACK_ASAN)
#define STACK_TEST 1
enum { SR = 16, SD = 768, SH = 72 };    /* more rows than a tile; 3 superblocks; 4.5 panels */
typedef struct {
    work *k;
    int status;
} stack_job;

static void *stack_thread(void *arg)
{
    stack_job *j = (stack_job *)arg;
    j->status = work_run(j->k);
    return NULL;
}

/* MEMORY's figure: FFN_STACK_FLOATS' default (128 KiB on x86-64 glibc, macOS and
   Windows where the build has the AVX-512 path, whatever the CPU; else 64 KiB) and 8 KiB */
static size_t stack_documented(void)
{
    size_t kib = 64 + 8;
#if (defined(__x86_64__) || defined(_M_X64)) &&                                          \
    (defined(__GLIBC__) || defined(__APPLE__) || defined(_WIN32))
    if (ffn_set_path("avx512") != FFN_ERR_PATH) kib = 128 + 8;
    ffn_set_path(NULL);
#endif
    return kib * 1024;
}

static void test_stack(void)
{
    const size_t bytes = stack_documented() + 16 * 1024;
    const char *names[TH_MAX_PATHS];
    const int np = th_paths(&th_ffn, names, NULL);
    work k;
    stack_job job;
    float *ref;
    int p;
    if (!work_make(&k, SR, SD, SH) || !(ref = (float *)malloc(k.nout * sizeof(float)))) {
        th_check(0, "stack: out of memory");
        work_free(&k);
        return;
    }
    job.k = &k;
    for (p = 0; p < np; p++) {
        pthread_attr_t attr;
        pthread_t t;
        int st, started;
        th_use(&th_ffn, names[p]);
        st = work_run(&k);
        memcpy(ref, k.out, k.nout * sizeof(float));
        job.status = -1;
        started = !pthread_attr_init(&attr) && !pthread_attr_setstacksize(&attr, bytes) &&
                  !pthread_create(&t, &attr, stack_thread, &job);
        if (started) pthread_join(t, NULL);
        pthread_attr_destroy(&attr);
        th_check(started && !st && !job.status && !memcmp(ref, k.out, k.nout * sizeof(float)),
                 "%s: every call of 2 (rows %d, d %d, h %d) on a thread of %zu KiB of stack: "
                 "the calling thread's bits", names[p], SR, SD, SH, bytes / 1024);
    }
    ffn_set_path(NULL);
    free(ref);
    work_free(&k);
}
#endif

typedef struct {
    const char *pe, *ffn;
    float add[D], y[ROWS * OUT];
    int status;
} seen;

static pthread_barrier_t start;
static float x[ROWS * D], table[D], w[OUT * D], b[OUT];

static void calls(seen *s)
{
    s->pe = th_pe.now();
    s->ffn = th_ffn.now();
    s->status = thr_add(s->add, x, table, D) | op_linear(s->y, x, w, b, ROWS, D, OUT, 0);
}

static void *worker(void *arg)
{
    pthread_barrier_wait(&start);
    calls((seen *)arg);
    return NULL;
}

int main(void)
{
    static seen s[THREADS + 1];
    pthread_t t[THREADS];
    int i, started = 1;
    for (i = 0; i < ROWS * D; i++) x[i] = (float)(i % 13) / 8.0f - 0.75f;
    for (i = 0; i < D; i++) table[i] = (float)(i % 5) / 4.0f;
    for (i = 0; i < OUT * D; i++) w[i] = (float)(i % 7) / 16.0f - 0.1875f;
    for (i = 0; i < OUT; i++) b[i] = (float)i / 32.0f;
    pthread_barrier_init(&start, NULL, THREADS);
    for (i = 0; i < THREADS; i++)
        started = started && pthread_create(&t[i], NULL, worker, &s[i]) == 0;
    th_check(started, "%d threads started", THREADS);
    if (!started) return th_summary();
    for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    calls(&s[THREADS]);
    printf("# first calls chose: pe %s, ffn %s\n", s[THREADS].pe, s[THREADS].ffn);
    for (i = 0; i < THREADS; i++)
        th_check(s[i].status == 0 && strcmp(s[i].pe, s[THREADS].pe) == 0 &&
                     strcmp(s[i].ffn, s[THREADS].ffn) == 0 &&
                     memcmp(s[i].add, s[THREADS].add, sizeof s[i].add) == 0 &&
                     memcmp(s[i].y, s[THREADS].y, sizeof s[i].y) == 0,
                 "thread %d: the same paths (pe %s, ffn %s) and the same bits", i, s[i].pe,
                 s[i].ffn);
    {
        pool p;
        if (!pool_start(&p)) {
            th_check(0, "a pool of %d workers started", WORKERS);
            return th_summary();
        }
        test_pool(&p);
        test_race(&p);
        pool_stop(&p);
    }
#ifdef STACK_TEST
    test_stack();
#endif
    return th_summary();
}
