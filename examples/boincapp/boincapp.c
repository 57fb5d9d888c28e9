/*
 * boincapp: an example app built against Debian's BOINC API library
 * (libboinc-app-dev), for the client tests and as a template.
 *
 * Input file `in` (opened through boinc_resolve_filename): "STEPS MS [trickle|sleep|half]".
 * It does STEPS steps of about MS milliseconds of CPU work each (with
 * "sleep": MS milliseconds of wall-clock time asleep each, so that a job
 * lasts as long whatever else loads the machine: the scaled-clock tests;
 * with "half": MS of CPU work then MS asleep, a job that gets half the CPU
 * time of its wall time: the client's cpu_efficiency test), reports
 * its fraction done after every step, checkpoints (file `checkpoint` in the
 * slot: the next step and a running checksum) whenever the API says it is
 * time (init_data's checkpoint_period, the client's disk_interval), and on
 * a restart resumes from that checkpoint. With "trickle" it sends one
 * trickle-up message (variety "progress") halfway; any trickle-down that
 * arrives is copied to stderr. Output `out`: "steps N checksum C".
 *
 * Exit: boinc_finish(0), or boinc_finish(1) on bad input.
 */
#include <boinc/boinc_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* About ms milliseconds of CPU; the result feeds the checksum so it is not optimised away. */
static unsigned long long work(double ms, unsigned long long x)
{
    double t0 = cpu_now();
    while ((cpu_now() - t0) * 1000 < ms)
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* About ms milliseconds asleep; the checksum still advances. */
static unsigned long long nap(double ms, unsigned long long x)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    /* the API's timer signal interrupts it: sleep what is left */
    while (nanosleep(&ts, &ts) != 0)
        ;
    return x * 6364136223846793005ull + 1442695040888963407ull;
}

int main(void)
{
    if (boinc_init() != 0)
        return 1;
    char path[1024];
    boinc_resolve_filename("in", path, sizeof(path));
    FILE *f = fopen(path, "r");
    long steps = 0;
    double ms = 0;
    char mode[32] = "";
    if (!f || fscanf(f, "%ld %lf %31s", &steps, &ms, mode) < 2 || steps <= 0 || steps > 1000000 ||
        ms < 0 || ms > 60000) {
        fprintf(stderr, "boincapp: bad input (want \"STEPS MS [trickle|sleep|half]\")\n");
        if (f)
            fclose(f);
        boinc_finish(1);
        return 1;
    }
    fclose(f);
    long step = 0;
    unsigned long long sum = 1;
    FILE *ck = fopen("checkpoint", "r");
    if (ck) {
        if (fscanf(ck, "%ld %llu", &step, &sum) != 2 || step < 0 || step > steps) {
            step = 0;
            sum = 1;
        } else {
            fprintf(stderr, "boincapp: resuming at step %ld\n", step);
        }
        fclose(ck);
    }
    int trickled = 0;
    for (; step < steps; step++) {
        sum = strcmp(mode, "sleep") == 0 ? nap(ms, sum) : work(ms, sum);
        if (strcmp(mode, "half") == 0)
            sum = nap(ms, sum);
        boinc_fraction_done((double)(step + 1) / (double)steps);
        if (strcmp(mode, "trickle") == 0 && !trickled && step + 1 >= steps / 2) {
            char text[128];
            snprintf(text, sizeof(text), "<step>%ld</step>", step + 1);
            boinc_send_trickle_up((char *)"progress", text);
            trickled = 1;
        }
        /* the API names the file the client wrote; the app reads and removes it */
        char down[1024];
        if (boinc_receive_trickle_down(down, sizeof(down))) {
            FILE *td = fopen(down, "r");
            char text[4096] = "";
            size_t tn = td ? fread(text, 1, sizeof(text) - 1, td) : 0;
            if (td)
                fclose(td);
            text[tn] = '\0';
            fprintf(stderr, "boincapp: trickle-down: %s\n", text);
            remove(down);
        }
        if (boinc_time_to_checkpoint()) {
            FILE *o = fopen("checkpoint.tmp", "w");
            if (o) {
                fprintf(o, "%ld %llu\n", step + 1, sum);
                if (fclose(o) == 0)
                    rename("checkpoint.tmp", "checkpoint");
            }
            boinc_checkpoint_completed();
        }
    }
    boinc_resolve_filename("out", path, sizeof(path));
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "boincapp: cannot write %s\n", path);
        boinc_finish(1);
        return 1;
    }
    fprintf(out, "steps %ld checksum %llu\n", steps, sum);
    fclose(out);
    boinc_finish(0);
    return 0;
}
