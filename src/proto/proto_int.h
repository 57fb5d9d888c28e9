/*
 * Internal helpers of src/proto: table-driven fields, so that each message
 * struct has one table that both its parser and its writer use (what is
 * parsed is exactly what is written, in BOINC's order).
 */
#ifndef VOLSCHED_PROTO_INT_H
#define VOLSCHED_PROTO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/proto.h"
#include "volsched/xml.h"

enum vs_proto__ftype {
    F_STR,     /* const char *, trimmed; written when not NULL */
    F_BLOCK,   /* const char *, trimmed; written as "<x>\ntext\n</x>" (keys, signatures) */
    F_DBL,     /* double, always written */
    F_DBL_OPT, /* double, written when non-zero */
    F_INT,     /* int, always written */
    F_INT_OPT, /* int, written when non-zero */
    F_I64,     /* int64_t, always written */
    F_I64_OPT, /* int64_t, written when non-zero */
    F_BOOL,    /* bool written as 0/1 */
    F_FLAG,    /* bool written as <x/> when true */
};

struct vs_proto__field {
    const char *name;
    enum vs_proto__ftype type;
    size_t off;
    size_t name_len; /* strlen(name), for the one-pass reader's lookup */
};

#define FLD(T, name, type)                                                                         \
    {                                                                                              \
#name, type, offsetof(T, name), sizeof(#name) - 1                                          \
    }

/* A field table with its length, for tables shared between files. */
struct vs_proto__table {
    const struct vs_proto__field *f;
    size_t n;
};

/* Expands to the two arguments (tab, n_tab) the helpers below take. */
#define VS_PROTO__TAB(t) (t).f, (t).n

/*
 * A list container's entries: <outer><inner>...</inner>...</outer>, each
 * entry a struct read with one field table (app versions, other results,
 * in-progress results, file refs). Other children of the container are
 * skipped.
 */
struct vs_proto__list {
    const char *inner; /* element name of one entry */
    struct vs_proto__table fields;
    size_t size;               /* bytes of one entry */
    size_t max;                /* most entries accepted (else VS_ELIMIT) */
    const char *what;          /* the entries, for the limit's message */
    void (*init)(void *entry); /* defaults set before the fields are read, or NULL */
};

struct vs_proto__ctx {
    struct vs_arena *arena;
    const struct vs_xml_doc *doc;
    struct vs_proto_error *err;
    int rc;
};

/* Records the first error (code and message); returns code. */
int vs_proto__fail(struct vs_proto__ctx *c, int code, const char *fmt, ...) VS_PRINTF(3, 4);

/*
 * If n's name is in the table, stores its value into base and returns true
 * (a malformed value sets c->rc). Returns false for names not in the table.
 */
bool vs_proto__field_parse(struct vs_proto__ctx *c, const struct vs_proto__field *tab, size_t n_tab,
                           const struct vs_xml_node *n, void *base);
/* The field of tab named name[0..len) (len >= 1, name not NUL-terminated), or NULL. */
const struct vs_proto__field *vs_proto__field_find(const struct vs_proto__field *tab, size_t n_tab,
                                                   const char *name, size_t len);
/* Stores n's value into base as field f (a malformed value sets c->rc). */
void vs_proto__field_set(struct vs_proto__ctx *c, const struct vs_proto__field *f,
                         const struct vs_xml_node *n, void *base);
void vs_proto__fields_write(struct vs_xml_writer *w, const struct vs_proto__field *tab,
                            size_t n_tab, const void *base);
/* Reads every child of n that tab names into base; skips the rest. */
void vs_proto__struct_parse(struct vs_proto__ctx *c, const struct vs_proto__field *tab,
                            size_t n_tab, const struct vs_xml_node *n, void *base);
/* Writes "<name>", the table's fields of base, "</name>". */
void vs_proto__struct_write(struct vs_xml_writer *w, const char *name,
                            const struct vs_proto__field *tab, size_t n_tab, const void *base);
/*
 * Reads the entries of the list container n into a new arena array (counted
 * first, so at most l->max are allocated); returns it (NULL when empty or on
 * error, c->rc then set) and their number in *out_n.
 */
void *vs_proto__list_parse(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                           const struct vs_proto__list *l, size_t *out_n);
/* Clears *err (may be NULL) before a parse: code 0, empty message. */
void vs_proto__error_clear(struct vs_proto_error *err);

/* Trimmed text of n copied to the arena, at most max bytes (else c->rc = VS_ELIMIT). */
const char *vs_proto__str(struct vs_proto__ctx *c, const struct vs_xml_node *n, size_t max);
/* Verbatim XML of n (start to end tag) copied to the arena, at most max bytes. */
const char *vs_proto__raw(struct vs_proto__ctx *c, const struct vs_xml_node *n, size_t max);
/* Number of children of parent named name (all children when name is NULL). */
size_t vs_proto__count(const struct vs_xml_node *parent, const char *name);
/* Allocates count zeroed elements of size in the arena, or fails with VS_ELIMIT over max. */
void *vs_proto__array(struct vs_proto__ctx *c, size_t count, size_t size, size_t max,
                      const char *what);
/*
 * Parses s[0..len) (NUL-terminated) as a number exactly as vs_parse_double()
 * does, with a fast path for plain decimals. Returns 0 or VS_EPARSE.
 */
int vs_proto__number(const char *s, size_t len, double *out);
/* Writes "<name>\ntext\n</name>" (text trimmed by the parser). */
void vs_proto__block_write(struct vs_xml_writer *w, const char *name, const char *text);
/* Parses XML with the proto limits into c->doc; fills c->err on failure. */
int vs_proto__parse_xml(struct vs_proto__ctx *c, const char *body, size_t len, size_t max_len,
                        unsigned flags, struct vs_xml_doc *doc);

/*
 * The reply's tables the stored job documents' one-pass reader (job_doc.c)
 * shares with the reply parser (reply.c): <file_info> (its <name>, the
 * rest), <file_ref>, <workunit>, <result>, and the URL element names by
 * enum vs_proto_url_kind.
 */
extern const struct vs_proto__table vs_proto__rp_fi_head, vs_proto__rp_fi, vs_proto__rp_fref,
    vs_proto__rp_wu, vs_proto__rp_res;
extern const char *const vs_proto__rp_url_tags[4];

#define VS_NELEM(a) (sizeof(a) / sizeof((a)[0]))

#endif
