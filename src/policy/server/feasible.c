/*
 * Seed 004's per-job feasibility rules: app version for the platform,
 * min_version, disk, memory, one result per user/host per WU, daily quota,
 * results per RPC, homogeneous redundancy, core client version. Pure.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "policy/server/sp_internal.h"

#define MEGA 1e6
#define GIGA 1e9

const char *vs_sp_reason_name(enum vs_sp_reason r)
{
    static const char *const names[VS_SP__NREASONS] = {
        [VS_SP_OK] = "ok",
        [VS_SP_CLIENT_VERSION] = "client_version",
        [VS_SP_NO_WORK_WANTED] = "no_work_wanted",
        [VS_SP_RPC_LIMIT] = "rpc_limit",
        [VS_SP_DUP_USER] = "one_result_per_user",
        [VS_SP_DUP_HOST] = "one_result_per_host",
        [VS_SP_HR_UNKNOWN] = "hr_unknown_class",
        [VS_SP_HR_CLASS] = "hr_other_class",
        [VS_SP_NO_APP_VERSION] = "no_app_version",
        [VS_SP_OLD_APP_VERSION] = "app_version_too_old",
        [VS_SP_NO_GPU] = "no_gpu",
        [VS_SP_JOB_LIMIT] = "job_limit",
        [VS_SP_DAILY_QUOTA] = "daily_quota",
        [VS_SP_MEMORY] = "memory",
        [VS_SP_DISK] = "disk",
        [VS_SP_DEADLINE] = "deadline",
        [VS_SP_WORKLOAD] = "workload",
    };
    if ((unsigned)r >= VS_SP__NREASONS)
        return "unknown";
    return names[r];
}

int vs_sp_version_encode(int major, int minor, int release)
{
    return major * 10000 + minor * 100 + release;
}

enum vs_sp_proc vs_sp_plan_class_proc(const char *pc)
{
    if (!pc || !*pc)
        return VS_SP_CPU;
    /* Plan classes name the vendor anywhere in the name (cuda_fermi,
     * opencl_nvidia_101, ati14, opencl_amd, opencl_intel_gpu_102). */
    if (strstr(pc, "intel_gpu"))
        return VS_SP_INTEL;
    if (strncmp(pc, "cuda", 4) == 0 || strstr(pc, "nvidia"))
        return VS_SP_NVIDIA;
    if (strncmp(pc, "ati", 3) == 0 || strstr(pc, "_ati") || strstr(pc, "amd"))
        return VS_SP_AMD;
    return VS_SP_CPU;
}

double vs_sp_usable_ram(const struct vs_sp_host *h)
{
    /* BOINC assumes 64 MB when the client did not say. */
    double ram = h->m_nbytes > 0 ? h->m_nbytes : 64 * 1048576.0;
    double frac = h->ram_max_used_busy_frac;
    if (h->ram_max_used_idle_frac > frac)
        frac = h->ram_max_used_idle_frac;
    if (frac <= 0 || frac > 1)
        frac = 1;
    return ram * frac;
}

double vs_sp_disk_allowed(const struct vs_sp_host *h)
{
    /* A client that reports no disk at all (0 total, 0 free) is not
     * limited by disk: refusing every job for a missing field would be
     * worse than trusting it. */
    if (h->d_free <= 0 && h->d_total <= 0)
        return VS_SP_DISK_UNKNOWN;
    /* The tightest of the three preferences; each one that is not set
     * (<= 0) does not limit. With none set, the free space is the limit. */
    double x = h->d_free > 0 ? h->d_free : 0;
    if (h->disk_max_used_gb > 0) {
        double x1 = h->disk_max_used_gb * GIGA - h->d_boinc_used_total;
        if (x1 < x)
            x = x1;
    }
    if (h->disk_max_used_pct > 0) {
        double x2 = h->d_total * h->disk_max_used_pct / 100.0 - h->d_boinc_used_total;
        if (x2 < x)
            x = x2;
    }
    if (h->disk_min_free_gb > 0) {
        double x3 = h->d_free - h->disk_min_free_gb * GIGA;
        if (x3 < x)
            x = x3;
    }
    return x;
}

int vs_sp_effective_ncpus(const struct vs_sp_config *cfg, const struct vs_sp_host *h)
{
    int n = h->p_ncpus;
    if (cfg->max_ncpus > 0 && n > cfg->max_ncpus)
        n = cfg->max_ncpus;
    if (n > VS_SP_MAX_NCPUS)
        n = VS_SP_MAX_NCPUS;
    return n < 1 ? 1 : n;
}

static int total_gpus(const struct vs_sp_host *h)
{
    int n = 0;
    for (int p = 1; p < VS_SP_NPROC; p++)
        if (h->gpu_count[p] > 0 && h->gpu_count[p] < 1024)
            n += h->gpu_count[p];
    return n;
}

int vs_sp_max_jobs_per_rpc(const struct vs_sp_config *cfg, const struct vs_sp_host *h)
{
    if (cfg->max_wus_to_send <= 0)
        return VS_SP_MAX_REPLY_JOBS;
    long long mult = vs_sp_effective_ncpus(cfg, h);
    mult += (long long)(cfg->gpu_multiplier > 0 ? cfg->gpu_multiplier : 1) * total_gpus(h);
    long long n = mult * cfg->max_wus_to_send;
    return n > VS_SP_MAX_REPLY_JOBS ? VS_SP_MAX_REPLY_JOBS : (int)n;
}

int vs_sp_host_in_progress_cap(const struct vs_sp_config *cfg, const struct vs_sp_host *h)
{
    if (cfg->host_in_progress_per_cpu <= 0)
        return 0;
    /* GPUs count like CPUs here, capped as max_ncpus caps CPUs: the
     * counts are the client's word. */
    int gpus = total_gpus(h);
    int max_gpus = cfg->max_ncpus > 0 ? cfg->max_ncpus : VS_SP_MAX_NCPUS;
    long long mult = vs_sp_effective_ncpus(cfg, h);
    mult += (long long)(cfg->gpu_multiplier > 0 ? cfg->gpu_multiplier : 1) *
            (gpus > max_gpus ? max_gpus : gpus);
    long long n = mult * cfg->host_in_progress_per_cpu;
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* ---- homogeneous redundancy ---- */

/* BOINC-COMPAT: HR class = os code + cpu code, the values stored in
 * workunit.hr_class (OS codes are multiples of 128, CPU codes 1..22). */
enum {
    OS_NONE = 128,
    OS_LINUX = 256,
    OS_WINDOWS = 384,
    OS_DARWIN = 512,
    OS_FREEBSD = 640,
    OS_ANDROID = 768
};
enum { CPU_NONE = 1, CPU_INTEL = 2, CPU_AMD = 3, CPU_PPC_MAC = 4, CPU_ARM = 22 };

static bool has(const char *s, const char *needle)
{
    return s && strcasestr(s, needle) != NULL;
}

static int os_code(const struct vs_sp_host *h)
{
    static const struct {
        const char *name;
        int code;
    } os[] = {{"Linux", OS_LINUX},
              {"Windows", OS_WINDOWS},
              {"Darwin", OS_DARWIN},
              {"FreeBSD", OS_FREEBSD},
              {"Android", OS_ANDROID}};
    for (size_t i = 0; i < sizeof os / sizeof os[0]; i++)
        if (has(h->os_name, os[i].name))
            return os[i].code;
    return OS_NONE;
}

static int cpu_coarse(const struct vs_sp_host *h)
{
    /* AMD shares Intel's coarse class: both are x86 and agree numerically
     * for the purposes coarse HR was made for. */
    if (has(h->p_vendor, "Intel") || has(h->p_vendor, "AMD"))
        return CPU_INTEL;
    if (has(h->p_vendor, "Macintosh"))
        return CPU_PPC_MAC;
    if (has(h->p_vendor, "ARM") || (h->p_model && strstr(h->p_model, "ARM")))
        return CPU_ARM;
    return CPU_NONE;
}

/* A model substring and the class it selects; first match wins. */
struct model_rule {
    const char *sub;
    int code;
};

static int match_model(const char *model, const struct model_rule *r, size_t n, int dflt)
{
    for (size_t i = 0; i < n; i++)
        if (has(model, r[i].sub))
            return r[i].code;
    return dflt;
}

static int cpu_fine(const struct vs_sp_host *h)
{
    /* BOINC-COMPAT: the fine CPU classes 5..21 of BOINC's HR code. */
    static const struct model_rule celeron[] = {{" M ", 18}, {" D ", 17}, {"III", 15}};
    static const struct model_rule pentium[] = {
        {"III", 15}, {"II", 14}, {" 4 ", 16}, {" D ", 17}, {" M ", 18}};
    static const struct model_rule family[] = {
        {"Family 6 Model 6", 12},  {"Family 6 Model 9", 18},  {"Family 6 Model 10", 11},
        {"Family 5 Model 1", 13},  {"Family 5 Model 2", 13},  {"Family 6 Model 1", 13},
        {"Family 15 Model 1", 16}, {"Family 15 Model 2", 16}, {"Family 6 Model 7", 15},
        {"Family 6 Model 8", 15},  {"Family 6 Model 11", 15}, {"Family 6 Model 3", 14},
        {"Family 6 Model 5", 14}};
    static const struct model_rule amd[] = {
        {"Duron", 6}, {"Opteron", 8}, {"Sempron", 7}, {"Turion", 20}};
    static const struct model_rule athlon[] = {{"XP", 10}, {"MP", 19}, {"64", 9}};
    const char *m = h->p_model;

    if (has(h->p_vendor, "Intel")) {
        if (has(m, "Xeon"))
            return 11;
        if (has(m, "Celeron"))
            return match_model(m, celeron, sizeof celeron / sizeof celeron[0], 12);
        if (has(m, "Core"))
            return 21;
        if (has(m, "Pentium"))
            return match_model(m, pentium, sizeof pentium / sizeof pentium[0], 13);
        if (has(m, "x86"))
            return match_model(m, family, sizeof family / sizeof family[0], CPU_INTEL);
        return CPU_INTEL;
    }
    if (has(h->p_vendor, "AMD")) {
        int c = match_model(m, amd, sizeof amd / sizeof amd[0], 0);
        if (c)
            return c;
        if (has(m, "Athlon"))
            return match_model(m, athlon, sizeof athlon / sizeof athlon[0], 5);
        return CPU_AMD;
    }
    if (has(h->p_vendor, "Macintosh"))
        return CPU_PPC_MAC;
    if (has(h->p_vendor, "ARM"))
        return CPU_ARM;
    return CPU_NONE;
}

int vs_sp_hr_class(const struct vs_sp_host *h, int hr_type)
{
    int os = os_code(h);
    if (hr_type == 1) {
        int cpu = cpu_fine(h);
        if (os == OS_NONE || cpu == CPU_NONE)
            return 0;
        return os + cpu;
    }
    if (hr_type == 2) {
        int cpu = cpu_coarse(h);
        /* Coarse HR only knows Windows, Linux and Intel/PPC Macs. */
        if (os == OS_WINDOWS || os == OS_LINUX)
            return os + cpu;
        if (os == OS_DARWIN && (cpu == CPU_INTEL || cpu == CPU_PPC_MAC))
            return os + cpu;
        return 0;
    }
    return 0;
}

enum vs_sp_reason vs_sp__check_hr(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                  struct vs_sp_verdict *v)
{
    int type = job->app->hr_type ? job->app->hr_type : st->cfg->homogeneous_redundancy;
    if (type != 1 && type != 2)
        return VS_SP_OK;
    int cls = st->hr_class[type];
    if (cls == 0)
        return VS_SP_HR_UNKNOWN;
    if (job->hr_class != 0 && job->hr_class != cls) {
        v->need = job->hr_class;
        v->have = cls;
        return VS_SP_HR_CLASS;
    }
    v->hr_class = cls;
    return VS_SP_OK;
}

/* ---- one result per user / host per WU ---- */

static bool contains(const int64_t *a, int n, int64_t x)
{
    for (int i = 0; i < n; i++)
        if (a[i] == x)
            return true;
    return false;
}

enum vs_sp_reason vs_sp__check_dup(const struct vs_sp_state *st, const struct vs_sp_job *job)
{
    const struct vs_sp_config *c = st->cfg;
    if (!c->one_result_per_user_per_wu && !c->one_result_per_host_per_wu)
        return VS_SP_OK;
    enum vs_sp_reason why = c->one_result_per_user_per_wu ? VS_SP_DUP_USER : VS_SP_DUP_HOST;
    /* Two results of one WU in the same reply go to the same host. */
    if (contains(st->sent_wus,
                 st->njobs_sent < VS_SP_MAX_REPLY_JOBS ? st->njobs_sent : VS_SP_MAX_REPLY_JOBS,
                 job->wu_id))
        return why;
    if (c->one_result_per_user_per_wu &&
        contains(job->result_userids, job->n_result_userids, st->host->userid))
        return VS_SP_DUP_USER;
    if (c->one_result_per_host_per_wu &&
        contains(job->result_hostids, job->n_result_hostids, st->host->id))
        return VS_SP_DUP_HOST;
    return VS_SP_OK;
}

/* ---- memory and disk ---- */

enum vs_sp_reason vs_sp__check_memory(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                      struct vs_sp_verdict *v)
{
    if (job->rsc_memory_bound > st->usable_ram) {
        v->need = job->rsc_memory_bound;
        v->have = st->usable_ram;
        return VS_SP_MEMORY;
    }
    return VS_SP_OK;
}

enum vs_sp_reason vs_sp__check_disk(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                    struct vs_sp_verdict *v)
{
    if (job->rsc_disk_bound > st->disk_left) {
        v->need = job->rsc_disk_bound;
        v->have = st->disk_left;
        return VS_SP_DISK;
    }
    return VS_SP_OK;
}

/* ---- core client version ---- */

enum vs_sp_reason vs_sp_check_client(const struct vs_sp_config *cfg, const struct vs_sp_host *host,
                                     struct vs_sp_verdict *out)
{
    enum vs_sp_reason r = VS_SP_OK;
    if (cfg->min_core_client_version > 0 &&
        host->core_client_version < cfg->min_core_client_version)
        r = VS_SP_CLIENT_VERSION;
    if (out) {
        memset(out, 0, sizeof *out);
        out->reason = r;
        out->need = cfg->min_core_client_version;
        out->have = host->core_client_version;
    }
    return r;
}

/* ---- daily quota ---- */

static uint64_t mix64(uint64_t x)
{
    /* splitmix64's finaliser: a fixed, well-spread function of the host id. */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int64_t vs_sp_quota_day(int64_t hostid, double t)
{
    /* Each host's day starts at its own second of the UTC day, so the
     * quotas of a whole population do not reset in one burst. */
    double offset = (double)(mix64((uint64_t)hostid) % 86400u);
    return (int64_t)floor((t + offset) / VS_SP_DAY);
}

int64_t vs_sp_quota_day_start(int64_t hostid, double t)
{
    double offset = (double)(mix64((uint64_t)hostid) % 86400u);
    return (int64_t)((double)vs_sp_quota_day(hostid, t) * VS_SP_DAY - offset);
}

bool vs_sp_quota_new_day(int64_t hostid, double prev, double now)
{
    return vs_sp_quota_day(hostid, prev) != vs_sp_quota_day(hostid, now);
}

static int eff_mjpd(const struct vs_sp_hav *hav, int quota)
{
    return hav->max_jobs_per_day > 0 ? hav->max_jobs_per_day : quota;
}

int vs_sp_quota_limit(const struct vs_sp_config *cfg, const struct vs_sp_host *h,
                      const struct vs_sp_hav *hav, enum vs_sp_proc proc, int ncpus)
{
    int quota = cfg->daily_result_quota;
    if (quota <= 0)
        return 0;
    long long m = hav ? eff_mjpd(hav, quota) : quota;
    /* A host punished down to one job a day stays there, whatever its size. */
    if (m == 1)
        return 1;
    long long mult;
    if (proc == VS_SP_CPU) {
        mult = ncpus < 1 ? 1 : ncpus;
    } else {
        int g = h->gpu_count[proc] > 0 ? h->gpu_count[proc] : 1;
        mult = (long long)g * (cfg->gpu_multiplier > 0 ? cfg->gpu_multiplier : 1);
    }
    long long lim = m * mult;
    return lim > INT_MAX ? INT_MAX : (int)lim;
}

int vs_sp_state_day_quota(const struct vs_sp_state *st, int64_t app_version_id,
                          enum vs_sp_proc proc)
{
    const struct vs_sp_hav *hav = vs_sp__hav_find(st, app_version_id);
    return vs_sp_quota_limit(st->cfg, st->host, hav, proc, st->ncpus);
}

void vs_sp_hav_on_success(struct vs_sp_hav *hav, int quota)
{
    if (quota <= 0)
        return;
    long long m = 2LL * eff_mjpd(hav, quota);
    hav->max_jobs_per_day = m > quota ? quota : (int)m;
}

static void decrement(struct vs_sp_hav *hav, int quota)
{
    hav->consecutive_valid = 0;
    if (quota <= 0)
        return;
    int m = eff_mjpd(hav, quota);
    if (m > quota)
        m = quota;
    hav->max_jobs_per_day = m - 1 < 1 ? 1 : m - 1;
}

void vs_sp_hav_on_error(struct vs_sp_hav *hav, int quota)
{
    decrement(hav, quota);
}

void vs_sp_hav_on_timeout(struct vs_sp_hav *hav, int quota)
{
    decrement(hav, quota);
}

void vs_sp_hav_on_valid(struct vs_sp_hav *hav, int quota)
{
    /* BOINC's validator raises the quota by one, without the cap that a
     * reported success has; a host can earn more than daily_result_quota. */
    hav->consecutive_valid++;
    if (quota <= 0)
        return;
    int m = eff_mjpd(hav, quota);
    hav->max_jobs_per_day = m < INT_MAX ? m + 1 : m;
}

void vs_sp_hav_on_invalid(struct vs_sp_hav *hav, int quota)
{
    hav->consecutive_valid = 0;
    if (quota > 0 && hav->max_jobs_per_day > quota)
        hav->max_jobs_per_day--;
}

struct vs_sp_hav *vs_sp__hav_find(const struct vs_sp_state *st, int64_t app_version_id)
{
    for (int i = 0; i < st->n_havs; i++)
        if (st->havs[i].app_version_id == app_version_id)
            return &st->havs[i];
    return NULL;
}

/* ---- app version selection ---- */

double vs_sp__av_flops(const struct vs_sp_host *h, const struct vs_sp_app_version *av)
{
    if (av->flops > 0)
        return av->flops;
    double cpu = h->p_fpops > 0 ? h->p_fpops : 1e9;
    if (av->proc == VS_SP_CPU)
        return cpu * (av->avg_ncpus > 0 ? av->avg_ncpus : 1);
    /* Without a measured GPU speed, BOINC's conservative guess: a GPU is
     * worth ten CPUs. */
    double gpu = h->gpu_peak_flops[av->proc] > 0 ? h->gpu_peak_flops[av->proc] : 10 * cpu;
    return gpu * (av->gpu_usage > 0 ? av->gpu_usage : 1);
}

static bool on_platform(const struct vs_sp_state *st, const char *platform)
{
    if (!platform)
        return false;
    for (int i = 0; i < st->n_platforms; i++)
        if (strcmp(st->platforms[i], platform) == 0)
            return true;
    return false;
}

enum vs_sp_reason vs_sp__choose_version(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                        struct vs_sp_verdict *v)
{
    const struct vs_sp_app *app = job->app;
    const struct vs_sp_app_version *best = NULL;
    double best_flops = 0;
    /* What stopped the versions that run here, most specific last. */
    bool old = false, nogpu = false, unrequested = false, limit = false, quota = false;
    enum vs_sp_proc gpu_missing = VS_SP_CPU;
    int quota_lim = 0;
    int ccv = st->host->core_client_version;

    for (int i = 0; i < app->n_versions; i++) {
        const struct vs_sp_app_version *av = &app->versions[i];
        if (!on_platform(st, av->platform))
            continue;
        if (job->app_version_num && av->version_num != job->app_version_num)
            continue;
        /* The client cannot run it: skipped without a message, as BOINC. */
        if (av->min_core_version && ccv < av->min_core_version)
            continue;
        if (av->max_core_version && ccv > av->max_core_version)
            continue;
        if (app->min_version && av->version_num < app->min_version) {
            old = true;
            continue;
        }
        enum vs_sp_proc p = (unsigned)av->proc < VS_SP_NPROC ? av->proc : VS_SP_CPU;
        if (p != VS_SP_CPU && st->host->gpu_count[p] <= 0) {
            nogpu = true;
            gpu_missing = p;
            continue;
        }
        if (!vs_sp__requested(st, p)) {
            unrequested = true;
            continue;
        }
        if (vs_sp_limits_exceeded(st, app->limit_index, p)) {
            limit = true;
            continue;
        }
        if (st->cfg->daily_result_quota > 0) {
            const struct vs_sp_hav *hav = vs_sp__hav_find(st, av->id);
            int lim = vs_sp_quota_limit(st->cfg, st->host, hav, p, st->ncpus);
            if (hav && hav->n_jobs_today >= lim) {
                quota = true;
                quota_lim = lim;
                continue;
            }
        }
        double f = vs_sp__av_flops(st->host, av);
        if (!best || f > best_flops || (f == best_flops && av->version_num > best->version_num)) {
            best = av;
            best_flops = f;
        }
    }
    if (best) {
        v->av = best;
        v->proc = (unsigned)best->proc < VS_SP_NPROC ? best->proc : VS_SP_CPU;
        return VS_SP_OK;
    }
    if (limit)
        return VS_SP_JOB_LIMIT;
    if (quota) {
        v->limit = quota_lim;
        return VS_SP_DAILY_QUOTA;
    }
    if (unrequested)
        return VS_SP_NO_WORK_WANTED;
    if (nogpu) {
        v->proc = gpu_missing;
        return VS_SP_NO_GPU;
    }
    if (old) {
        v->limit = app->min_version;
        return VS_SP_OLD_APP_VERSION;
    }
    return VS_SP_NO_APP_VERSION;
}

enum vs_sp_reason vs_sp__choose_version_memo(struct vs_sp_state *st, const struct vs_sp_job *job,
                                             struct vs_sp_verdict *v)
{
    /* The choice depends on the app, a pinned version number and state that
     * only a commit changes (request left, limits, quota rows), so a cache
     * scan of many jobs of few apps chooses once per app (BOINC memoizes
     * its best app versions per request too). */
    for (int i = 0; i < st->n_memo; i++) {
        if (st->memo[i].app == job->app && st->memo[i].app_version_num == job->app_version_num) {
            v->av = st->memo[i].av;
            v->proc = st->memo[i].proc;
            v->limit = st->memo[i].limit;
            return st->memo[i].reason;
        }
    }
    enum vs_sp_reason r = vs_sp__choose_version(st, job, v);
    if (st->n_memo < (int)(sizeof st->memo / sizeof st->memo[0])) {
        int i = st->n_memo++;
        st->memo[i].app = job->app;
        st->memo[i].app_version_num = job->app_version_num;
        st->memo[i].reason = r;
        st->memo[i].av = v->av;
        st->memo[i].proc = v->proc;
        st->memo[i].limit = v->limit;
    }
    return r;
}
