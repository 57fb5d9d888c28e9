/*
 * Bounded XML reader (on expat) and XML writer (into a vs_buf).
 *
 * The reader parses a whole document into a tree of nodes allocated in a
 * caller-owned arena: element name, attributes, the element's own character
 * data (CDATA included, entities decoded) and the byte span of the element in
 * the input, so that a subtree can be passed on verbatim (BOINC's global
 * preferences). Everything a hostile peer could grow is capped by
 * struct vs_xml_limits; DOCTYPE declarations and entity declarations are
 * rejected outright, so there is no entity expansion at all.
 *
 * The writer emits BOINC-style XML: one element per line, four-space indent,
 * text escaped. Errors (the buffer's cap) are sticky: check
 * vs_xml_writer_error() once at the end.
 */
#ifndef VOLSCHED_XML_H
#define VOLSCHED_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/error.h"

/* Default limits (struct vs_xml_limits, vs_xml_limits_default()). */
#define VS_XML_MAX_INPUT    (8u * 1024u * 1024u) /* bytes of one document */
#define VS_XML_MAX_DEPTH    32                   /* element nesting */
#define VS_XML_MAX_ELEMENTS 100000u              /* elements in one document */
#define VS_XML_MAX_TEXT     (1024u * 1024u)      /* character data of one element */
#define VS_XML_MAX_ATTRS    16                   /* attributes of one element */
#define VS_XML_MAX_NAME     128                  /* bytes of an element or attribute name */

struct vs_xml_limits {
    size_t max_input;
    int max_depth;
    size_t max_elements;
    size_t max_text;
};

/* Fills *l with the VS_XML_MAX_* defaults. */
void vs_xml_limits_default(struct vs_xml_limits *l);

/* Flags for vs_xml_parse(). */
enum {
    /*
     * Accept a document whose open elements are never closed (BOINC's upload
     * header ends with "<data>\n" and raw bytes, no end tags). Only a prefix
     * of a well-formed document is required.
     */
    VS_XML_ALLOW_UNCLOSED = 1u << 0,
    /*
     * If the input is not valid UTF-8 or holds control characters that XML
     * forbids (app stderr inside a scheduler request often does), parse a
     * copy where each such byte is replaced by '?' instead of failing. Byte
     * offsets (raw_off/raw_len) then refer to that copy (doc->input).
     */
    VS_XML_REPAIR_BYTES = 1u << 1,
};

struct vs_xml_attr {
    const char *name;
    const char *value;
};

struct vs_xml_node {
    const char *name;
    const char *text; /* own character data, NUL-terminated, never NULL */
    size_t text_len;
    const struct vs_xml_attr *attrs;
    size_t n_attrs;
    struct vs_xml_node *parent;
    struct vs_xml_node *child; /* first child element */
    struct vs_xml_node *next;  /* next sibling element */
    size_t raw_off;            /* byte span of the element (tags included) in doc->input */
    size_t raw_len;
    unsigned line; /* 1-based line of the start tag */
    bool closed;   /* false only under VS_XML_ALLOW_UNCLOSED */
};

struct vs_xml_doc {
    struct vs_xml_node *root;
    const char *input; /* borrowed: the caller's input, or an arena copy after repair */
    size_t input_len;
    size_t n_elements;
    bool repaired; /* VS_XML_REPAIR_BYTES changed some bytes */
};

struct vs_xml_error {
    int code; /* VS_EPARSE, VS_ELIMIT or VS_EUNSUPPORTED (DOCTYPE / entities) */
    unsigned line;
    unsigned column;
    char msg[160]; /* "line 3: element nesting deeper than 32" */
};

/*
 * Parses data[0..len) into a tree allocated in arena. limits may be NULL (the
 * defaults). Returns 0 and fills *out_doc, or a negative VS_E* code and, when
 * out_err is not NULL, a message in *out_err. The tree borrows from data (raw
 * spans) unless doc->repaired; it lives as long as the arena and data.
 */
VS_MUST_CHECK int vs_xml_parse(const char *data, size_t len, const struct vs_xml_limits *limits,
                               unsigned flags, struct vs_arena *arena, struct vs_xml_doc *out_doc,
                               struct vs_xml_error *out_err);

/* Tree helpers. Every one accepts a NULL node and then returns NULL / "" / default. */

/* First child element named name, or NULL. */
const struct vs_xml_node *vs_xml_child(const struct vs_xml_node *n, const char *name);
/* Next sibling after n with the same name as n, or NULL. */
const struct vs_xml_node *vs_xml_next_same(const struct vs_xml_node *n);
/* Value of attribute name, or NULL. */
const char *vs_xml_attr(const struct vs_xml_node *n, const char *name);
/* Text of the first child named name (NULL if there is no such child). */
const char *vs_xml_child_text(const struct vs_xml_node *n, const char *name);
/*
 * Text with leading and trailing whitespace removed, copied into arena
 * ("" for NULL n).
 */
const char *vs_xml_text_trim(const struct vs_xml_node *n, struct vs_arena *arena);
/* Parses the node's text as a number / integer / boolean ("1"/"0", empty element = true). */
VS_MUST_CHECK int vs_xml_get_double(const struct vs_xml_node *n, double *out);
VS_MUST_CHECK int vs_xml_get_int64(const struct vs_xml_node *n, int64_t *out);
VS_MUST_CHECK int vs_xml_get_bool(const struct vs_xml_node *n, bool *out);
/* The element's verbatim bytes (start tag to end tag) in doc->input. */
const char *vs_xml_raw(const struct vs_xml_doc *doc, const struct vs_xml_node *n, size_t *out_len);
/* The bytes between the element's start and end tags (verbatim inner XML). */
const char *vs_xml_inner_raw(const struct vs_xml_doc *doc, const struct vs_xml_node *n,
                             size_t *out_len);

/* ---- writer ---- */

struct vs_xml_writer {
    struct vs_buf *out; /* borrowed */
    int depth;
    const char *stack[VS_XML_MAX_DEPTH];
    bool indent; /* four spaces per level (default true) */
    int err;
};

void vs_xml_writer_init(struct vs_xml_writer *w, struct vs_buf *out);
/* "<name>\n", and later children are indented one more level. */
void vs_xml_open(struct vs_xml_writer *w, const char *name);
/* "<name attr=\"value\">\n" (value escaped). */
void vs_xml_open_attr(struct vs_xml_writer *w, const char *name, const char *attr,
                      const char *value);
/* Closes the innermost open element. name must be a string literal or outlive the writer. */
void vs_xml_close(struct vs_xml_writer *w);
/* "<name>escaped text</name>\n"; a NULL s writes nothing. */
void vs_xml_str(struct vs_xml_writer *w, const char *name, const char *s);
void vs_xml_strn(struct vs_xml_writer *w, const char *name, const char *s, size_t n);
/* Same with one attribute: <message priority="low">text</message>. */
void vs_xml_str_attr(struct vs_xml_writer *w, const char *name, const char *attr,
                     const char *attr_value, const char *s);
/* "<name>N</name>" */
void vs_xml_int(struct vs_xml_writer *w, const char *name, int64_t v);
/*
 * "<name>V</name>" with V printed like BOINC's %f ("1.000000"), falling back
 * to %.17g when %f would lose the value, so write -> parse is exact.
 */
void vs_xml_double(struct vs_xml_writer *w, const char *name, double v);
/* "<name/>" */
void vs_xml_flag(struct vs_xml_writer *w, const char *name);
/* Verbatim bytes (already XML), e.g. a stored <global_preferences> subtree. */
void vs_xml_raw_write(struct vs_xml_writer *w, const char *s, size_t n);
/* "<![CDATA[...]]>" splitting any "]]>" inside s so the section stays intact. */
void vs_xml_cdata(struct vs_xml_writer *w, const char *s, size_t n);
/* Returns 0 or the first error (VS_ELIMIT from the buffer cap, VS_EINVAL misuse). */
int vs_xml_writer_error(const struct vs_xml_writer *w);

/* Appends s[0..n) to b with & < > " ' escaped. */
VS_MUST_CHECK int vs_xml_escape(struct vs_buf *b, const char *s, size_t n);
/* Formats v as vs_xml_double() does into dst (size >= 40); returns the length. */
size_t vs_xml_format_double(char *dst, size_t size, double v);

/*
 * Length (1..4) of the UTF-8 character at s[0..n) when it is valid and one
 * XML allows (tab, newline and carriage return the only control bytes),
 * else 0. It is the check by which VS_XML_REPAIR_BYTES decides what to
 * replace, and the scheduler request's one-pass reader
 * (src/proto/request_direct.c) decides what it may take without expat.
 */
size_t vs_xml_char_len(const unsigned char *s, size_t n);

#endif
