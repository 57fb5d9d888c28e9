/*
 * Timelines: what ran on each CPU, recorded by the host simulator, written
 * as an SVG picture or as CSV rows. Output is a function of the recorded
 * data only (fixed number formats, no dates), so equal runs give equal files.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/sim.h"

void vs_timeline_init(struct vs_timeline *tl)
{
    memset(tl, 0, sizeof(*tl));
}

void vs_timeline_cleanup(struct vs_timeline *tl)
{
    vs_free(tl->seg);
    vs_free(tl->mark);
    vs_free(tl->off);
    vs_timeline_init(tl);
}

#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 256;                                                         \
            (arr) = vs_xreallocarray((arr), (cap), sizeof(*(arr)));                                \
        }                                                                                          \
    } while (0)

void vs_timeline_add_segment(struct vs_timeline *tl, const struct vs_tl_segment *seg)
{
    if (seg->t1 <= seg->t0)
        return;
    GROW(tl->seg, tl->nseg, tl->capseg);
    tl->seg[tl->nseg++] = *seg;
}

void vs_timeline_add_mark(struct vs_timeline *tl, double t, int32_t project, int64_t job)
{
    GROW(tl->mark, tl->nmark, tl->capmark);
    tl->mark[tl->nmark++] = (struct vs_tl_mark){.t = t, .project = project, .job = job};
}

void vs_timeline_add_off(struct vs_timeline *tl, double t0, double t1)
{
    if (t1 <= t0)
        return;
    /* Merge with the previous span when they touch. */
    if (tl->noff && tl->off[tl->noff - 1].t1 >= t0) {
        if (t1 > tl->off[tl->noff - 1].t1)
            tl->off[tl->noff - 1].t1 = t1;
        return;
    }
    GROW(tl->off, tl->noff, tl->capoff);
    tl->off[tl->noff++] = (struct vs_tl_span){t0, t1};
}

/* Colour-blind-friendly first (Okabe-Ito), then a few more distinct ones. */
static const char *const palette[] = {
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999933",
    "#882255", "#44AA99", "#117733", "#AA4499", "#6699CC", "#DDCC77", "#332288", "#88CCEE"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* The colour of project i: the palette, then hues spread by the golden angle. */
static const char *colour(size_t i, char *buf, size_t n)
{
    if (i < NPALETTE)
        return palette[i];
    snprintf(buf, n, "hsl(%d,%d%%,%d%%)", (int)((i * 137) % 360), 45 + (int)(i % 3) * 15,
             35 + (int)(i % 2) * 15);
    return buf;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A tick step (seconds) giving at most about 12 ticks over duration T. */
static double tick_step(double T)
{
    static const double steps[] = {60,       300,     600,     1800,    3600,    7200,
                                   3 * 3600, 21600,   43200,   86400,   172800,  432000,
                                   864000,   1728000, 4320000, 8640000, 31536000};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (T / steps[i] <= 12)
            return steps[i];
    return 31536000.0 * ceil(T / 31536000.0 / 12);
}

static void tick_label(double t, double step, double T, char *buf, size_t n)
{
    if (step >= 86400 && fmod(t, 86400) == 0)
        snprintf(buf, n, "%gd", t / 86400);
    else if (T >= 7200)
        snprintf(buf, n, "%gh", t / 3600);
    else
        snprintf(buf, n, "%gm", t / 60);
}

int vs_timeline_write_svg(const struct vs_timeline *tl, const struct vs_scenario *s,
                          const char *title, FILE *f)
{
    const double left = 80, right = 20, top = 40, row_h = 26, gap = 6, width = 1200;
    bool have_nci = false;
    for (size_t i = 0; i < s->nprojects; i++)
        have_nci |= s->projects[i].non_cpu_intensive;
    int rows = tl->ncpus + (have_nci ? 1 : 0);
    double lanes_h = rows * (row_h + gap);
    double off_y = top + lanes_h;
    double axis_y = off_y + 12;
    double legend_y = axis_y + 36;
    int legend_cols = 6;
    int legend_rows = (int)((s->nprojects + legend_cols - 1) / legend_cols);
    double height = legend_y + legend_rows * 20 + 30;
    double plot_w = width - left - right;
    double T = tl->duration > 0 ? tl->duration : 1;
    double xs = plot_w / T;

    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", left);
    xml_text(f, title ? title : "volsched sim");
    fprintf(f, "</text>\n");

    /* Lanes: a light background and a label per CPU. */
    for (int r = 0; r < rows; r++) {
        double y = top + r * (row_h + gap);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f2f2f2\"/>\n",
                left, y, plot_w, row_h);
        if (r < tl->ncpus)
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">CPU %d</text>\n", left - 8,
                    y + row_h / 2 + 4, r);
        else
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">non-CPU</text>\n", left - 8,
                    y + row_h / 2 + 4);
    }

    /* Host off / suspended: hatched grey across all lanes and a strip below. */
    for (size_t i = 0; i < tl->noff; i++) {
        double x = left + tl->off[i].t0 * xs, w = (tl->off[i].t1 - tl->off[i].t0) * xs;
        fprintf(f,
                "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#bbbbbb\" "
                "opacity=\"0.5\"/>\n",
                x, top - 2, w < 0.3 ? 0.3 : w, lanes_h - gap + 4);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"5\" fill=\"#555555\"/>\n",
                x, off_y, w < 0.3 ? 0.3 : w);
    }

    /* Runs. Each segment is one job on one CPU; thin white edges separate
     * consecutive jobs when there is room to see them. */
    for (size_t i = 0; i < tl->nseg; i++) {
        const struct vs_tl_segment *g = &tl->seg[i];
        int r = g->cpu >= 0 ? g->cpu : tl->ncpus;
        double y = top + r * (row_h + gap);
        double x = left + g->t0 * xs, w = (g->t1 - g->t0) * xs;
        char cbuf[32];
        const char *col = colour((size_t)g->project, cbuf, sizeof(cbuf));
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"", x, y,
                w < 0.3 ? 0.3 : w, row_h, col);
        if (g->missed)
            fprintf(f, " stroke=\"#d00000\" stroke-width=\"1.5\"");
        else if (w > 4)
            fprintf(f, " stroke=\"white\" stroke-width=\"0.5\"");
        fprintf(f, "><title>%s job %lld %.3fh-%.3fh%s</title></rect>\n",
                s->projects[g->project].name, (long long)g->job, g->t0 / 3600, g->t1 / 3600,
                g->missed ? " (missed deadline)" : "");
    }

    /* Deadline misses: red triangles above the lanes. */
    for (size_t i = 0; i < tl->nmark; i++) {
        double x = left + tl->mark[i].t * xs;
        fprintf(f,
                "<path d=\"M%.2f %.1f l-4 -8 h8 z\" fill=\"#d00000\"><title>%s job %lld missed "
                "its deadline</title></path>\n",
                x, top - 2, s->projects[tl->mark[i].project].name, (long long)tl->mark[i].job);
    }

    /* Time axis. */
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"black\"/>\n", left,
            axis_y, left + plot_w, axis_y);
    double step = tick_step(T);
    for (double t = 0; t <= T + 1e-9; t += step) {
        char lab[32];
        double x = left + t * xs;
        tick_label(t, step, T, lab, sizeof(lab));
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>"
                "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, axis_y, x, axis_y + 5, x, axis_y + 18, lab);
    }

    /* Legend. */
    for (size_t i = 0; i < s->nprojects; i++) {
        double x = left + (double)(i % (size_t)legend_cols) * 170;
        double y = legend_y + (double)(i / (size_t)legend_cols) * 20;
        char cbuf[32];
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" fill=\"%s\"/>", x,
                y - 11, colour(i, cbuf, sizeof(cbuf)));
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">", x + 20, y);
        xml_text(f, s->projects[i].name);
        fprintf(f, " (%g, %g, %g)</text>\n", s->projects[i].cpu_time / 3600,
                s->projects[i].delay_bound / 3600, s->projects[i].share);
    }
    double ky = legend_y + legend_rows * 20;
    fprintf(f,
            "<path d=\"M%.0f %.0f l-4 -8 h8 z\" fill=\"#d00000\"/><text x=\"%.0f\" y=\"%.0f\">"
            "deadline missed (%zu)</text>\n",
            left + 4, ky + 2, left + 14, ky + 2, tl->nmark);
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"5\" fill=\"#555555\"/><text "
            "x=\"%.0f\" y=\"%.0f\">host off or suspended</text>\n",
            left + 190, ky - 4, left + 210, ky + 2);
    fprintf(f, "</svg>\n");
    return ferror(f) ? -EIO : 0;
}

int vs_timeline_write_csv(const struct vs_timeline *tl, const struct vs_scenario *s, FILE *f)
{
    fprintf(f, "kind,cpu,project,job,start_h,end_h,missed\n");
    for (size_t i = 0; i < tl->nseg; i++) {
        const struct vs_tl_segment *g = &tl->seg[i];
        fprintf(f, "run,%d,%s,%lld,%.6f,%.6f,%d\n", (int)g->cpu, s->projects[g->project].name,
                (long long)g->job, g->t0 / 3600, g->t1 / 3600, g->missed ? 1 : 0);
    }
    for (size_t i = 0; i < tl->nmark; i++) {
        const struct vs_tl_mark *m = &tl->mark[i];
        fprintf(f, "miss,,%s,%lld,%.6f,%.6f,1\n", s->projects[m->project].name, (long long)m->job,
                m->t / 3600, m->t / 3600);
    }
    for (size_t i = 0; i < tl->noff; i++)
        fprintf(f, "off,,,,%.6f,%.6f,0\n", tl->off[i].t0 / 3600, tl->off[i].t1 / 3600);
    return ferror(f) ? -EIO : 0;
}
