/*
 * HTTPS in the HTTP front end: the TLS listener (its certificate and key
 * read from PEM files, GnuTLS priorities allowing TLS 1.2+ with
 * forward-secret AEAD suites only) and the https scheduler URL the master
 * page advertises, and the conditions of <https_only> checked at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/http_int.h"
#include "volsched/alloc.h"
#include "volsched/str.h"

/* TLS 1.2 and 1.3 only, and in 1.2 only forward-secret key exchanges
 * (ECDHE) with AEAD ciphers: no TLS 1.0/1.1, no static-RSA key exchange
 * (whose recorded traffic the server's key decrypts later), no CBC. Every
 * client of the last decade has these (BOINC 7.20's libcurl with OpenSSL
 * 3 takes ECDHE-RSA-AES-GCM or TLS 1.3). GnuTLS priority syntax. */
const char vs_http__tls_priorities[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-RSA:+ECDHE-ECDSA:"
    "-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:%SERVER_PRECEDENCE";

/* HTTPS's conditions, checked before anything listens. https_only needs a
 * certificate and an https upload URL (the plain listener refuses
 * uploads); an http master URL is allowed (the plain master page then
 * names the https scheduler) but warned about: a middleman can rewrite the
 * page a volunteer fetches on attach. With HTTPS, an http upload URL is
 * warned about: volsched clients pin a project whose scheduler is https
 * and refuse to upload to it over http. */
int vs_http__check_https(const struct vs_http_config *cfg, const char *upload_url)
{
    bool tls = cfg->tls_cert_file && cfg->tls_key_file;
    bool https_ul = vs_str_has_prefix(upload_url, "https://");
    if (tls && !https_ul && !cfg->https_only)
        VS_LOG(cfg->log, VS_LOG_WARN,
               "https: the upload URL %s is http: volsched clients refuse to upload there for a "
               "project whose scheduler is https, and uploads travel in clear; set <upload_url> "
               "to the https listener's (docs/server.md, \"HTTPS\")",
               upload_url);
    if (!cfg->https_only)
        return 0;
    if (!tls) {
        VS_LOG(cfg->log, VS_LOG_ERROR,
               "https_only: no certificate; set <https_cert> and <https_key> (docs/server.md, "
               "\"HTTPS\")");
        return VS_ECONFIG;
    }
    if (!https_ul) {
        VS_LOG(cfg->log, VS_LOG_ERROR,
               "https_only: the upload URL %s is not https (the plain listener refuses uploads); "
               "set <upload_url> to the https listener's (docs/server.md, \"HTTPS\")",
               upload_url);
        return VS_ECONFIG;
    }
    if (!vs_str_has_prefix(cfg->master_url, "https://"))
        VS_LOG(cfg->log, VS_LOG_WARN,
               "https_only: the master URL %s is http: a volunteer who attaches with it can be "
               "given a rewritten master page on the way; make the master URL https "
               "(docs/server.md, \"HTTPS\")",
               cfg->master_url);
    return 0;
}

/* Reads a PEM file (certificate or key) whole; NULL on error (logged). */
static char *read_pem(const struct vs_http_config *cfg, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    char chunk[4096];
    ssize_t n = 0;
    int rc = fd < 0 ? -errno : 0;
    while (rc == 0 && (n = read(fd, chunk, sizeof(chunk))) > 0)
        rc = vs_buf_append(&b, chunk, (size_t)n);
    if (rc == 0 && n < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && b.len == 0)
        rc = VS_EPARSE;
    if (rc != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: cannot read %s: %s", path, vs_strerror(rc));
        vs_buf_cleanup(&b);
        return NULL;
    }
    return vs_buf_take(&b, NULL);
}

/* The HTTPS daemon, and the https scheduler URL the master page names:
 * the master URL's host with the HTTPS port and the scheduler's path. */
int vs_http__start_tls(struct vs_http *h, const struct vs_http_config *cfg, const char *host,
                       struct sockaddr_storage *ss, bool v6)
{
    if (!cfg->tls_cert_file || !cfg->tls_key_file) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: both a certificate and a key are needed");
        return VS_ECONFIG;
    }
    if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: libmicrohttpd was built without TLS");
        return VS_EUNSUPPORTED;
    }
    h->tls_cert = read_pem(cfg, cfg->tls_cert_file);
    h->tls_key = read_pem(cfg, cfg->tls_key_file);
    if (!h->tls_cert || !h->tls_key)
        return VS_ECONFIG;
    h->tls_d = vs_http__start_daemon(h, cfg, ss, v6, cfg->https_port, VS_LISTEN_TLS);
    if (!h->tls_d) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: cannot listen on %s:%u (or bad certificate/key)",
               host, (unsigned)cfg->https_port);
        return VS_ENET;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->tls_d, MHD_DAEMON_INFO_BIND_PORT);
    const char *hp = strstr(h->master_url, "://") + 3; /* url_paths checked "://" */
    size_t hl = strcspn(hp, "/");
    /* The host without its port ("[v6]:p" keeps its brackets). */
    size_t k = hl;
    while (k > 0 && hp[k - 1] != ':' && hp[k - 1] != ']')
        k--;
    if (k > 0 && hp[k - 1] == ':')
        hl = k - 1;
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = vs_buf_printf(&b, "https://%.*s:%u", (int)hl, hp, di ? (unsigned)di->port : 0u);
    if (rc == 0)
        h->https_base = vs_xstrdup(vs_buf_str(&b));
    if (rc == 0)
        rc = vs_buf_puts(&b, h->sched_path);
    if (rc == 0)
        h->https_sched_url = vs_buf_take(&b, NULL);
    vs_buf_cleanup(&b);
    return rc;
}
