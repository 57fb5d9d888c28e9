/*
 * Unit tests of the simulator: event queue, figures of merit, timeline
 * writers, and whole runs of the seed scenarios through the client policies.
 */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/metrics.h"
#include "volsched/alloc.h"
#include "volsched/eventq.h"
#include "volsched/scenario.h"
#include "volsched/sim.h"

#include "sim_fixture.h"

/*
 * The server every project ran before the simulated servers called
 * src/policy/server: no deadline rule, up to 1,000 jobs a reply. The tests
 * of seed 000's and seed 002's client behaviour (written for that server)
 * use it, so that they measure the client alone.
 */
static void permissive_servers(struct vs_scenario *s)
{
    for (size_t p = 0; p < s->nprojects; p++) {
        s->projects[p].ignore_delay_bound = true;
        s->projects[p].max_wus_to_send = 1000;
    }
}

/* ---------------------------------------------------------------- eventq */

static void test_eventq(void **state)
{
    (void)state;
    struct vs_eventq q;
    vs_eventq_init(&q);
    /* Many events, some at equal times: pops come out by time, then by
     * insertion order. */
    for (int i = 0; i < 1000; i++)
        vs_eventq_push(&q, (double)((i * 7919) % 100), 0, i, 0);
    assert_int_equal(vs_eventq_size(&q), 1000);
    struct vs_event e, prev = {.t = -1, .a = -1};
    int n = 0;
    while (vs_eventq_pop(&q, &e)) {
        assert_true(e.t > prev.t || (e.t == prev.t && e.a > prev.a));
        prev = e;
        n++;
    }
    assert_int_equal(n, 1000);
    assert_true(isinf(vs_eventq_peek_time(&q)));
    vs_eventq_push(&q, 5, 1, 1, 0);
    vs_eventq_push(&q, 2, 2, 2, 0);
    assert_true(vs_eventq_peek_time(&q) == 2);
    vs_eventq_cleanup(&q);
}

/* ---------------------------------------------------------------- metrics */

static void test_metrics_by_hand(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("A(1, 10, 3) B(1, 10, 1) NCPUS = 2 cpu_scheduling_period = 1", &s);
    struct vs_metrics m;
    vs_metrics_init(&m, &s);
    /* 1 h: A on 2 CPUs. 1 h: host off. 2 h: A and B on one CPU each. */
    int both_a[2] = {2, 0}, none[2] = {0, 0}, one_each[2] = {1, 1};
    vs_metrics_interval(&m, 3600, true, both_a);
    vs_metrics_interval(&m, 3600, false, none);
    vs_metrics_interval(&m, 7200, true, one_each);
    vs_metrics_sent(&m, 0, 3);
    vs_metrics_sent(&m, 1, 1);
    vs_metrics_rpc(&m, 0);
    vs_metrics_rpc(&m, 1);
    vs_metrics_job_end(&m, 0, 3600, true, false);
    vs_metrics_job_end(&m, 0, 7200, true, true);
    vs_metrics_job_end(&m, 1, 1800, false, true);
    vs_metrics_job_reported_late(&m, 0, 7200);
    vs_metrics_preempt(&m, 0);
    vs_metrics_restart_lost(&m, 900);

    struct vs_sim_result r;
    vs_metrics_finish(&m, &r);
    /* F counts only the 3 available hours: 2 CPUs x 3 h. */
    assert_true(fabs(r.capacity - 6 * 3600.0) < 1e-6);
    /* U = A: 2 h + 2 h = 4 h, B: 2 h -> 6 h: nothing idle. */
    assert_true(fabs(r.used - 6 * 3600.0) < 1e-6);
    assert_true(fabs(r.idle_frac) < 1e-12);
    /* Share: A should get 3/4 of 6 h = 4.5 h, got 4; B 1.5, got 2. */
    assert_true(fabs(r.share_violation - (0.5 + 0.5) / 6.0) < 1e-12);
    assert_true(fabs(r.projects[0].cpu_share - 4.0 / 6.0) < 1e-12);
    /* W = 7200 + 1800 s over F. */
    assert_true(fabs(r.wasted_frac - 9000.0 / (6 * 3600.0)) < 1e-12);
    assert_true(fabs(r.wasted_frac_reported - 7200.0 / (6 * 3600.0)) < 1e-12);
    assert_int_equal(r.deadline_misses, 2);
    assert_int_equal(r.jobs_completed, 2);
    assert_int_equal(r.projects[0].deadlines_met, 1);
    assert_true(fabs(r.rpcs_per_job - 2.0 / 4.0) < 1e-12);
    assert_int_equal(r.preemptions, 1);
    assert_true(fabs(r.restart_waste_frac - 900.0 / (6 * 3600.0)) < 1e-12);
    /* Monotony: A always ran except during the off hour (R from 0 to 3600:
     * S = 3600^3 / 3); B idle for the first 2 h (S = 7200^3 / 3). T = 4 h. */
    double T = 4 * 3600.0;
    double rms_a = sqrt(pow(3600.0, 3) / 3 / T), rms_b = sqrt(pow(7200.0, 3) / 3 / T);
    double x = (rms_a + rms_b) / (4 * 3600.0);
    assert_true(fabs(r.monotony - x / (1 + x)) < 1e-12);
    vs_sim_result_cleanup(&r);
    vs_metrics_cleanup(&m);
    vs_scenario_cleanup(&s);
}

/* ---------------------------------------------------------------- timeline */

static char *read_all(FILE *f)
{
    long n = ftell(f);
    rewind(f);
    char *p = vs_xmalloc((size_t)n + 1);
    size_t got = fread(p, 1, (size_t)n, f);
    p[got] = '\0';
    return p;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void test_timeline_writers(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("A(1, 2, 1) B(1, 2, 1) NCPUS = 2", &s);
    memcpy(s.projects[1].name, "B&C", 4); /* not a legal name in the notation */
    struct vs_timeline tl;
    vs_timeline_init(&tl);
    tl.duration = 4 * 3600;
    tl.ncpus = 2;
    struct vs_tl_segment g1 = {.t0 = 0, .t1 = 3600, .cpu = 0, .project = 0, .job = 7};
    struct vs_tl_segment g2 = {.t0 = 0, .t1 = 7200, .cpu = 1, .project = 1, .job = 8, .missed = 1};
    struct vs_tl_segment empty = {.t0 = 5, .t1 = 5, .cpu = 1, .project = 1, .job = 9};
    vs_timeline_add_segment(&tl, &g1);
    vs_timeline_add_segment(&tl, &g2);
    vs_timeline_add_segment(&tl, &empty); /* zero length: dropped */
    vs_timeline_add_mark(&tl, 7200, 1, 8);
    vs_timeline_add_off(&tl, 7200, 9000);
    vs_timeline_add_off(&tl, 9000, 10800); /* touches: merged */
    assert_int_equal(tl.nseg, 2);
    assert_int_equal(tl.noff, 1);

    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(vs_timeline_write_csv(&tl, &s, f), 0);
    char *csv = read_all(f);
    fclose(f);
    assert_string_equal(csv, "kind,cpu,project,job,start_h,end_h,missed\n"
                             "run,0,A,7,0.000000,1.000000,0\n"
                             "run,1,B&C,8,0.000000,2.000000,1\n"
                             "miss,,B&C,8,2.000000,2.000000,1\n"
                             "off,,,,2.000000,3.000000,0\n");
    vs_free(csv);

    f = tmpfile();
    assert_non_null(f);
    assert_int_equal(vs_timeline_write_svg(&tl, &s, "t<1>", f), 0);
    char *svg = read_all(f);
    fclose(f);
    assert_true(strncmp(svg, "<svg ", 5) == 0);
    assert_non_null(strstr(svg, "</svg>\n"));
    assert_non_null(strstr(svg, "t&lt;1&gt;"));        /* title escaped */
    assert_non_null(strstr(svg, "B&amp;C (1, 2, 1)")); /* legend escaped */
    assert_int_equal(count(svg, "missed its deadline</title>"), 1);
    assert_int_equal(count(svg, "<title>A job 7 "), 1);
    assert_int_equal(count(svg, "(missed deadline)"), 1);
    assert_non_null(strstr(svg, ">CPU 1<"));
    assert_non_null(strstr(svg, ">4h<")); /* the axis reaches the end */
    vs_free(svg);
    vs_timeline_cleanup(&tl);
    vs_scenario_cleanup(&s);
}

/* ---------------------------------------------------------------- seed scenarios */

/*
 * Seed 000, scenario 1, under shortfall: one CPU keeps P1's six-minute
 * tasks; P2 and P3 run whole scheduling periods (their one-hour tasks run to
 * completion once started), never switching every six minutes.
 */
static void test_seed000_scenario1(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_load("seed000_scenario1.scn", &s);
    permissive_servers(&s);
    struct vs_sim_result r;
    struct vs_timeline tl;
    simfx_run(&s, "shortfall", 10, &r, &tl);

    assert_int_equal(r.deadline_misses, 0);
    assert_true(r.idle_frac < 0.01);
    assert_true(r.share_violation < 0.05);
    assert_true(r.jobs_completed > 2000);

    /* P1's CPU time: nearly all of it on one CPU. */
    double p1_on[2] = {0, 0};
    /* P2/P3: runs cut short (not the job's last segment), and among those,
     * ones where the other of P2/P3 took the CPU (six-minute switching). */
    size_t cut_runs = 0, p23_switches = 0, p23_segments = 0;
    int64_t *last_seg = vs_xcalloc((size_t)r.jobs_sent + 1, sizeof(int64_t));
    for (size_t i = 0; i < tl.nseg; i++)
        last_seg[tl.seg[i].job] = (int64_t)i;
    for (size_t i = 0; i < tl.nseg; i++) {
        const struct vs_tl_segment *g = &tl.seg[i];
        assert_true(g->cpu >= 0 && g->cpu < 2);
        if (g->project == 0) {
            p1_on[g->cpu] += g->t1 - g->t0;
            continue;
        }
        p23_segments++;
        if (last_seg[g->job] == (int64_t)i)
            continue;
        cut_runs++;
        /* What ran next on this CPU? */
        for (size_t k = 0; k < tl.nseg; k++) {
            const struct vs_tl_segment *h = &tl.seg[k];
            if (h->cpu == g->cpu && fabs(h->t0 - g->t1) < 1e-6 && h->project != 0 &&
                h->job != g->job)
                p23_switches++;
        }
    }
    double p1_total = p1_on[0] + p1_on[1];
    double p1_main = fmax(p1_on[0], p1_on[1]);
    print_message("P1 on its main CPU: %.3f; P2/P3 segments %zu, cut short %zu (by P1 in "
                  "EDF), P2<->P3 switches %zu; preemptions %lld\n",
                  p1_main / p1_total, p23_segments, cut_runs, p23_switches,
                  (long long)r.preemptions);
    assert_true(p1_main / p1_total > 0.9);
    /* No switching between P2 and P3; P1's EDF may cut a P2/P3 run rarely. */
    assert_int_equal(p23_switches, 0);
    assert_true(cut_runs * 50 <= p23_segments);
    assert_true(p23_segments <= (size_t)(r.projects[1].jobs_completed +
                                         r.projects[2].jobs_completed + cut_runs + 2));
    assert_true(r.restart_waste_frac < 0.001);
    /* Each of P2 and P3 near its quarter. */
    assert_true(fabs(r.projects[1].cpu_share - 0.25) < 0.02);
    assert_true(fabs(r.projects[2].cpu_share - 0.25) < 0.02);

    /* The strict debt ordering of seed 002 does switch every six minutes,
     * which is what seed 000 fixes: many short P2/P3 runs there. */
    struct vs_sim_result rd;
    struct vs_timeline tld;
    simfx_run(&s, "debt", 1, &rd, &tld);
    size_t debt_short = 0;
    for (size_t i = 0; i < tld.nseg; i++)
        if (tld.seg[i].project != 0 && tld.seg[i].t1 - tld.seg[i].t0 < 0.2 * s.sched_period)
            debt_short++;
    print_message("debt: %zu P2/P3 runs shorter than 12 minutes in one day\n", debt_short);
    assert_true(debt_short > 10);

    vs_free(last_seg);
    vs_sim_result_cleanup(&rd);
    vs_timeline_cleanup(&tld);
    vs_sim_result_cleanup(&r);
    vs_timeline_cleanup(&tl);
    vs_scenario_cleanup(&s);
}

/*
 * (P1(1000, 2000, .5), P2(1, 10, .5), NCPUS=4): no deadline missed over the
 * scenario's default ten days. Over 100 days, past P1's first 2000-hour
 * deadlines (day 83), P2's ten-hour deadlines are all still met; P1 may miss
 * one (docs/simulator.md, "Findings": the round-robin simulation cannot
 * foresee P2's future work, so a fourth 1000-hour P1 job starts too late).
 */
static void test_seed002_no_miss(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_load("seed002_typical.scn", &s);
    permissive_servers(&s);
    struct vs_sim_result r;
    simfx_run(&s, "shortfall", 10, &r, NULL);
    assert_int_equal(r.deadline_misses, 0);
    assert_true(r.projects[1].jobs_completed > 400);
    assert_true(r.idle_frac < 0.01);
    vs_sim_result_cleanup(&r);

    simfx_run(&s, "shortfall", 100, &r, NULL);
    print_message("100 days: P1 completed %lld missed %lld, P2 completed %lld missed %lld\n",
                  (long long)r.projects[0].jobs_completed, (long long)r.projects[0].deadline_misses,
                  (long long)r.projects[1].jobs_completed,
                  (long long)r.projects[1].deadline_misses);
    assert_true(r.projects[0].jobs_completed >= 2); /* P1 deadlines were at stake */
    assert_int_equal(r.projects[1].deadline_misses, 0);
    assert_true(r.projects[1].jobs_completed > 4000);
    assert_true(r.idle_frac < 0.01);
    vs_sim_result_cleanup(&r);

    /* The old client keeps its buffer full across projects, not just one
     * result each (which left two of the four CPUs idle), and by share. */
    simfx_run(&s, "wrr", 10, &r, NULL);
    assert_true(r.idle_frac < 0.01);
    assert_true(fabs(r.projects[0].cpu_share - 0.5) < 0.02);
    assert_int_equal(r.deadline_misses, 0);
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);
}

/* A slow host, five projects, one with tight deadlines: wrr misses, shortfall does not. */
static void test_wrr_misses_where_shortfall_meets(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_load("tight_deadline.scn", &s);
    permissive_servers(&s);
    struct vs_sim_result rs, rw;
    simfx_run(&s, "shortfall", 10, &rs, NULL);
    simfx_run(&s, "wrr", 10, &rw, NULL);
    print_message("P1 misses: shortfall %lld of %lld, wrr %lld of %lld\n",
                  (long long)rs.projects[0].deadline_misses, (long long)rs.projects[0].jobs_sent,
                  (long long)rw.projects[0].deadline_misses, (long long)rw.projects[0].jobs_sent);
    assert_int_equal(rs.deadline_misses, 0);
    assert_true(rs.projects[0].jobs_completed >= 30);
    assert_true(rw.projects[0].deadline_misses >= 30);
    assert_true(rw.wasted_frac > 0.1);
    vs_sim_result_cleanup(&rs);
    vs_sim_result_cleanup(&rw);
    vs_scenario_cleanup(&s);
}

/* Seed 000's Einstein@home case: switching often wastes CPU on restarts. */
static void test_resume_cost(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_load("einstein_resume.scn", &s);
    struct vs_sim_result rs, rw;
    simfx_run(&s, "shortfall", 5, &rs, NULL);
    simfx_run(&s, "wrr", 5, &rw, NULL);
    print_message("restart waste: shortfall %.4f, wrr %.4f\n", rs.restart_waste_frac,
                  rw.restart_waste_frac);
    assert_true(rs.restart_waste_frac < 0.05);
    assert_true(rw.restart_waste_frac > 0.5);
    assert_true(rw.restart_waste_frac > 10 * rs.restart_waste_frac);
    vs_sim_result_cleanup(&rs);
    vs_sim_result_cleanup(&rw);
    vs_scenario_cleanup(&s);
}

static char *render(const struct vs_scenario *s, const struct vs_sim_options *o)
{
    struct vs_sim_result r;
    struct vs_timeline tl;
    assert_int_equal(vs_sim_run(s, o, &r, &tl), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    fprintf(f, "%.17g %.17g %.17g %.17g %lld %lld\n", r.idle_frac, r.wasted_frac, r.monotony,
            r.share_violation, (long long)r.jobs_completed, (long long)r.preemptions);
    assert_int_equal(vs_timeline_write_csv(&tl, s, f), 0);
    assert_int_equal(vs_timeline_write_svg(&tl, s, "x", f), 0);
    char *out = read_all(f);
    fclose(f);
    vs_sim_result_cleanup(&r);
    vs_timeline_cleanup(&tl);
    return out;
}

/* Same inputs and seed: the same bytes. Another seed: another run. */
static void test_determinism(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(0.1, 1, .5, job_spread = 0.5) P2(1, 24, .25, server_avail = 0.8)"
                " P3(1, 24, .25, checkpoint_period = 10m, resume_cost = 1m)"
                " NCPUS = 2 on_frac = 0.7 active_frac = 0.9 avail_cycle = 6",
                &s);
    for (const char *const *p = vs_sim_policies; *p; p++) {
        struct vs_sim_options o = {.policy = *p, .duration = 3 * 86400};
        char *a = render(&s, &o);
        char *b = render(&s, &o);
        assert_string_equal(a, b);
        o.seed_set = true;
        o.seed = 99;
        char *c = render(&s, &o);
        assert_true(strcmp(a, c) != 0);
        vs_free(a);
        vs_free(b);
        vs_free(c);
    }
    vs_scenario_cleanup(&s);
}

/* The host off half the time: F halves, and nothing runs while it is off. */
static void test_availability(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(1, 48, 1) P2(1, 48, 1) NCPUS = 2 on_frac = 0.5 avail_cycle = 4", &s);
    struct vs_sim_result r;
    struct vs_timeline tl;
    simfx_run(&s, "shortfall", 30, &r, &tl);
    double full = 2 * 30 * 86400.0;
    print_message("capacity %.3f of full\n", r.capacity / full);
    assert_true(r.capacity / full > 0.4 && r.capacity / full < 0.6);
    assert_true(r.used <= r.capacity + 1e-6);
    assert_true(r.idle_frac < 0.05);
    double off = 0;
    for (size_t i = 0; i < tl.noff; i++)
        off += tl.off[i].t1 - tl.off[i].t0;
    assert_true(fabs((30 * 86400.0 - off) * 2 - r.capacity) < 1.0);
    for (size_t i = 0; i < tl.nseg; i++)
        for (size_t k = 0; k < tl.noff; k++)
            assert_false(tl.seg[i].t0 < tl.off[k].t1 - 1e-6 && tl.seg[i].t1 > tl.off[k].t0 + 1e-6);
    vs_sim_result_cleanup(&r);
    vs_timeline_cleanup(&tl);
    vs_scenario_cleanup(&s);
}

/* Project job budgets, non-CPU-intensive projects, server outages. */
static void test_project_options(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("A(1, 24, 1, jobs = 3) B(0.5, 24, 1, server_avail = 0.5, server_outage = 2)"
                " NET(2, 24, 1, non_cpu_intensive = true) NCPUS = 2",
                &s);
    struct vs_sim_result r;
    simfx_run(&s, "shortfall", 5, &r, NULL);
    assert_int_equal(r.projects[0].jobs_sent, 3);
    assert_int_equal(r.projects[0].jobs_completed, 3);
    /* The non-CPU project completes jobs but takes no CPU share. */
    assert_true(r.projects[2].jobs_completed > 20);
    assert_true(r.projects[2].cpu_share == 0);
    /* B's server is down half the time: it still gets work, with backoff RPCs. */
    assert_true(r.projects[1].jobs_completed > 50);
    assert_true(r.projects[1].rpcs > r.projects[0].rpcs);
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);

    struct vs_sim_options bad = {.policy = "fifo"};
    simfx_parse("A(1, 2, 1)", &s);
    assert_int_equal(vs_sim_run(&s, &bad, &r, NULL), VS_EINVAL);
    vs_scenario_cleanup(&s);
}

/*
 * The simulated servers run src/policy/server. Seed 004's deadline rule: a
 * 10-hour job with an 8-hour delay bound is never sent (the project gets
 * no work at all), unless the project sets ignore_delay_bound, and then
 * every job misses. Seed 000's EDF check (workload_sim) on top refuses a
 * job that the seed 004 rule lets through at its boundary.
 */
static void test_server_rules(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(10, 8, 1) duration = 3", &s);
    struct vs_sim_result r;
    simfx_run(&s, "shortfall", 3, &r, NULL);
    assert_int_equal(r.jobs_sent, 0);
    assert_true(r.idle_frac > 0.999);
    vs_sim_result_cleanup(&r);
    s.projects[0].ignore_delay_bound = true;
    simfx_run(&s, "shortfall", 3, &r, NULL);
    assert_true(r.jobs_sent >= 7);
    assert_true(r.deadline_misses >= r.jobs_sent - 1); /* the last may still run */
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);

    simfx_parse("P1(2, 4, 1) P2(2, 4, 1)", &s);
    struct vs_sim_result without, with;
    /* The first five minutes: P1 gets a job; P2's asks next, with 2 hours
     * queued ahead: 2 + 2 hours fit its 4 (seed 004 sends), but the job
     * would end after its deadline less min_queue (the EDF check refuses). */
    simfx_run(&s, "shortfall", 300 / 86400.0, &without, NULL);
    for (size_t p = 0; p < s.nprojects; p++)
        s.projects[p].workload_sim = true;
    simfx_run(&s, "shortfall", 300 / 86400.0, &with, NULL);
    assert_int_equal(without.jobs_sent, 2);
    assert_int_equal(with.jobs_sent, 1);
    vs_sim_result_cleanup(&without);
    vs_sim_result_cleanup(&with);

    /* A job limit: max_in_progress = 2 on 4 CPUs keeps two CPUs idle. */
    vs_scenario_cleanup(&s);
    simfx_parse("P1(1, 100, 1, max_in_progress = 2) NCPUS = 4 min_queue = 10", &s);
    simfx_run(&s, "shortfall", 2, &r, NULL);
    /* No more: after a refusal the client backs off its work requests
     * (src/policy/client's rule, BOINC's 1-2 minutes doubling to 4 hours),
     * but a job that ends clears the backoff (BOINC's rule for this very
     * case, the client daemon's at a finished upload), so the freed CPU
     * gets the next job at once. Before the clear: 0.68 idle. */
    assert_true(r.idle_frac > 0.5 - 1e-9 && r.idle_frac < 0.51);
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eventq),
        cmocka_unit_test(test_metrics_by_hand),
        cmocka_unit_test(test_timeline_writers),
        cmocka_unit_test(test_seed000_scenario1),
        cmocka_unit_test(test_seed002_no_miss),
        cmocka_unit_test(test_wrr_misses_where_shortfall_meets),
        cmocka_unit_test(test_resume_cost),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_availability),
        cmocka_unit_test(test_project_options),
        cmocka_unit_test(test_server_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
