/* tests/test_schedule.c - ffn.h's thread schedule (ffn__schedule, the function ffn__run
   runs) on every FFN shape of the bench (support/shapes.h: --quick, the default and
   --large) and every thread count T = 1..64, computed without running a kernel, so
   that it needs no more cores than any machine has.

     cc -std=c99 tests/test_schedule.c support/unit.c -lm     (or as part of make test)

   For each call's layers (as ffn.h builds them; features/, FEATURE_SCHEDULE) and each T:
   - the phases take the layers in order, at most T tasks each, whose ranges
     (ffn__task_range) cover every output element of their layers exactly once;
   - in each phase the busiest task has at most 1.15x the mean flops of the tasks;
   - where it has more than 1.15x the mean over all T threads, T is more than the work
     can use: no grid of row x panel ranges (pr x pc <= the tasks the work pays for,
     FFN__TASK_WORK each; units of 1 or FFN__NB panels) may have a busiest task with
     fewer flops (within the schedule's own 1/64 latitude for less traffic).
   One line per call: the worst busiest / mean over T = 1..64, and the thread counts
   that use fewer tasks than threads. */
#include <stdint.h>

#include "../pe.h"
#define FFN_STATIC
#define FFN_IMPLEMENTATION
#include "../ffn.h"
#include "../support/harness.h"
#include "../support/shapes.h"

enum { T_MAX = 64 };

typedef struct {
    char name[96];
    int n;
    ffn__gemm g[3];
} call;

/* distinct addresses for x, the hidden layers and y (the schedule only compares them) */
static float bufs[4];

static void layer(call *c, size_t rows, size_t in, size_t out, const float *x, float *y)
{
    ffn__gemm_init(&c->g[c->n++], NULL, y, x, NULL, FFN__W_PACKED, NULL, rows, in, out);
}

static double task_flops(const ffn__sched *s, const ffn__gemm *g, int p, int i)
{
    double f = 0.0;
    int l;
    for (l = s->ph[p].l0; l < s->ph[p].l1; l++) {
        size_t r0, r1, p0, p1, c0, c1;
        ffn__task_range(&s->ph[p], g, l, i, &r0, &r1, &p0, &p1);
        c0 = p0 * FFN__NR;
        c1 = p1 * FFN__NR < g[l].out ? p1 * FFN__NR : g[l].out;
        if (c1 > c0) f += 2.0 * (double)(r1 - r0) * (double)g[l].in * (double)(c1 - c0);
    }
    return f;
}

/* The busiest task's flops of an explicit grid pr x pc (units of cu panels) over layers
   [l0, l1) that share rows, in and out, computed part by part. */
static double grid_busiest(const ffn__gemm *g, int l0, int l1, size_t pr, size_t pc, size_t cu)
{
    const size_t rows = g[l0].rows, out = g[l0].out;
    const size_t units = ((out + FFN__NR - 1) / FFN__NR + cu - 1) / cu;
    size_t i, rmax = 0, cmax = 0;
    for (i = 0; i < pr; i++) {
        const size_t a = rows * i / pr, b = rows * (i + 1) / pr;
        if (b - a > rmax) rmax = b - a;
    }
    for (i = 0; i < pc; i++) {
        size_t a = units * i / pc * cu * FFN__NR, b = units * (i + 1) / pc * cu * FFN__NR;
        if (b > out) b = out;
        if (a < b && b - a > cmax) cmax = b - a;
    }
    return 2.0 * (double)(l1 - l0) * (double)g[l0].in * (double)rmax * (double)cmax;
}

/* The least busiest task of any grid of a phase with at most `most` tasks. */
static double best_grid(const ffn__gemm *g, int l0, int l1, size_t most)
{
    double best = -1.0;
    size_t pr, pc, k;
    for (k = 0; k < 2; k++)
        for (pr = 1; pr <= most && pr <= g[l0].rows; pr++)
            for (pc = 1; pr * pc <= most; pc++) {
                const size_t cu = k ? 1 : FFN__NB;
                const size_t units = ((g[l0].out + FFN__NR - 1) / FFN__NR + cu - 1) / cu;
                double b;
                if (pc > units) break;
                b = grid_busiest(g, l0, l1, pr, pc, cu);
                if (best < 0.0 || b < best) best = b;
            }
    return best;
}

/* The tasks a phase's work pays for, at most t (ffn.h's rule, restated). */
static size_t tasks_paid(const ffn__gemm *g, int l0, int l1, int t, int fused)
{
    double work = 0.0;
    int l;
    for (l = l0; l < l1; l++)
        work += (double)g[l].in * (double)g[l].out *
                (2.0 * (double)g[l].rows + (fused ? 0.0 : FFN__WEIGHT_COST));
    work /= FFN__TASK_WORK;
    return work < 1.0 ? 1 : work < (double)t ? (size_t)work : (size_t)t;
}

/* Every T: checks one call's schedule; prints its line (once per call: the --quick
   shapes repeat some of the others). */
static void check_call(const call *c)
{
    static char seen[512][96];
    static int nseen;
    double worst = 0.0;
    int t, worst_t = 1, bad = 0, capped_from = 0, capped_n = 0, first_nt = 0, last_nt = 0;
    char why[256] = "";
    for (t = 0; t < nseen; t++)
        if (!strcmp(seen[t], c->name)) return;
    if (nseen < 512) memcpy(seen[nseen++], c->name, sizeof c->name);
    for (t = 1; t <= T_MAX; t++) {
        ffn__sched s;
        int p, l, next = 0, most = 0, capped = 0;
        ffn__schedule(&s, c->g, c->n, t);
        for (p = 0; p < s.nphase && !bad; p++) {
            const ffn__phase *ph = &s.ph[p];
            /* (one phase of row ranges through all the layers: ffn.h's rule, restated) */
            const int nt = ph->pr * ph->pc, fused = t == 1 || c->g[0].rows / (size_t)t >=
                                                                  FFN__FUSE_ROWS;
            double total = 0.0, busiest = 0.0;
            int i, j;
            if (ph->l0 != next || ph->l1 <= ph->l0 || ph->l1 > c->n || nt < 1 || nt > t) {
                snprintf(why, sizeof why, "T=%d phase %d: layers [%d, %d), %d tasks", t, p,
                         ph->l0, ph->l1, nt);
                bad = 1;
                break;
            }
            next = ph->l1;
            if (nt > most) most = nt;
            /* cover: the areas add up, and no two tasks share an element */
            for (l = ph->l0; l < ph->l1 && !bad; l++) {
                const size_t panels = (c->g[l].out + FFN__NR - 1) / FFN__NR;
                double area = 0.0;
                for (i = 0; i < nt && !bad; i++) {
                    size_t a0, a1, b0, b1;
                    ffn__task_range(ph, c->g, l, i, &a0, &a1, &b0, &b1);
                    if (a1 > c->g[l].rows || b1 > panels || a0 > a1 || b0 > b1) bad = 1;
                    area += (double)(a1 - a0) * (double)(b1 - b0);
                    for (j = 0; j < i && !bad; j++) {
                        size_t e0, e1, f0, f1;
                        ffn__task_range(ph, c->g, l, j, &e0, &e1, &f0, &f1);
                        if (a0 < e1 && e0 < a1 && b0 < f1 && f0 < b1) bad = 1;
                    }
                }
                if (bad || area < (double)c->g[l].rows * (double)panels ||
                    area > (double)c->g[l].rows * (double)panels) {
                    snprintf(why, sizeof why, "T=%d phase %d layer %d: the tasks do not cover "
                             "the output exactly once", t, p, l);
                    bad = 1;
                }
            }
            for (i = 0; i < nt && !bad; i++) {
                const double f = task_flops(&s, c->g, p, i);
                total += f;
                if (f > busiest) busiest = f;
            }
            if (bad) break;
            if (busiest > 1.15 * total / nt) {
                snprintf(why, sizeof why, "T=%d phase %d: busiest %.4g flops > 1.15x the mean "
                         "%.4g of %d tasks", t, p, busiest, total / nt, nt);
                bad = 1;
                break;
            }
            if (busiest / (total / nt) > worst) { worst = busiest / (total / nt); worst_t = t; }
            if (busiest > 1.15 * total / t) {
                /* T is more than this phase can use: nothing better with <= T tasks */
                const size_t paid = tasks_paid(c->g, ph->l0, ph->l1, t, fused);
                const double best = fused ? ((double)nt == (double)paid ? busiest : 0.0)
                                          : best_grid(c->g, ph->l0, ph->l1, paid);
                if (!(busiest <= best * (1.0 + 1.0 / 64.0))) {
                    snprintf(why, sizeof why, "T=%d phase %d: %d tasks, busiest %.4g flops, but "
                             "a grid of <= %zu tasks has %.4g", t, p, nt, busiest, paid, best);
                    bad = 1;
                    break;
                }
                if (!capped || nt < capped) capped = nt;
            }
        }
        if (!bad && (next != c->n || most != s.most)) {
            snprintf(why, sizeof why, "T=%d: phases end at layer %d of %d, most %d (%d)", t,
                     next, c->n, s.most, most);
            bad = 1;
        }
        if (bad) break;
        if (capped) {
            if (!capped_from) { capped_from = t; first_nt = capped; }
            capped_n++;
            last_nt = capped;
        }
    }
    if (bad) {
        th_check(0, "schedule %s: %s", c->name, why);
        return;
    }
    if (capped_from)
        snprintf(why, sizeof why, "%d of %d thread counts more than a phase can use (T=%d: %d "
                 "tasks, ..., T=%d: %d)", capped_n, T_MAX, capped_from, first_nt, T_MAX, last_nt);
    else
        snprintf(why, sizeof why, "every T = 1..%d used whole", T_MAX);
    th_check(1, "schedule %s: busiest <= %.3fx the mean (T=%d); %s", c->name, worst, worst_t, why);
}

/* The shapes of the bench that a call's layers take: the blocks', the gated blocks',
   the backwards'. */
enum { SCH_BLOCK, SCH_GATED, SCH_BWD };

/* A feature's calls (FEATURE_SCHEDULE_CALLS rows): build names call i of a shape and
   adds its layers; 0 past its last. */
typedef struct {
    int shapes;
    int (*build)(call *c, int i, size_t rows, size_t d, size_t h);
} sched_calls;

#define FEATURE_SCHEDULE
#include "../features/all.inc"
#undef FEATURE_SCHEDULE

static const sched_calls calls_all[] = {
#define FEATURE_SCHEDULE_CALLS
#include "../features/all.inc"
#undef FEATURE_SCHEDULE_CALLS
};

static void check_all(size_t rows, size_t d, size_t h, int shapes)
{
    size_t k;
    int i;
    call c;
    for (k = 0; k < sizeof calls_all / sizeof calls_all[0]; k++)
        for (i = 0; calls_all[k].shapes == shapes; i++) {
            memset(&c, 0, sizeof c);
            if (!calls_all[k].build(&c, i, rows, d, h)) break;
            check_call(&c);
        }
}

int main(void)
{
    bench_shapes sh[2];
    int v, r, k;
    bench_shapes_get(&sh[0], 1, 0);
    bench_shapes_get(&sh[1], 0, 1);     /* the default run's shapes and --large's */
    printf("# FFN__TASK_WORK %.0f, FFN__WEIGHT_COST %.0f, FFN__FUSE_ROWS %d, FFN__NB %d\n",
           FFN__TASK_WORK, FFN__WEIGHT_COST, FFN__FUSE_ROWS, FFN__NB);
    for (v = 0; v < 2; v++)
        for (r = 0; r < sh[v].nrows; r++) {
            const size_t rows = sh[v].rows[r];
            for (k = 0; k < sh[v].nblock; k++)
                check_all(rows, sh[v].block[k][0], sh[v].block[k][1], SCH_BLOCK);
            if (sh[v].act[0] != sh[v].block[sh[v].nblock - 1][0] ||
                sh[v].act[1] != sh[v].block[sh[v].nblock - 1][1])
                check_all(rows, sh[v].act[0], sh[v].act[1], SCH_BLOCK);
            for (k = 0; k < sh[v].ngated; k++)
                check_all(rows, sh[v].gated[k][0], sh[v].gated[k][1], SCH_GATED);
            check_all(rows, sh[v].bwd[0], sh[v].bwd[1], SCH_BWD);
        }
    return th_summary();
}
