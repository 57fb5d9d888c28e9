/*
 * BOINC's global preferences (<global_preferences>): the one reader of the
 * values volsched uses, for the client (global_prefs.xml and its override,
 * src/client/prefs.c) and the scheduler (the preferences in a request,
 * src/server/policy_input.c).
 *
 * What is read: the root element's direct children of the names below
 * (BOINC-COMPAT: the tags of lib/prefs.cpp), so a <venue>'s values (the
 * preferences of another location) never count, unless the caller names
 * the host's venue (vs_gprefs_*_venue); when a name repeats, the
 * last one counts, as in BOINC's parser. A value is the element's text
 * without the white space around it, a number (vs_parse_double, at most 63
 * characters) or, for leave_apps_in_memory, a boolean (empty = set).
 *
 * Two ways in, which give the same answer (tests/fuzz/fuzz_prefs.c holds
 * them to it): vs_gprefs_from_node() reads a tree of the XML module, and
 * vs_gprefs_parse() reads text in one pass without building a tree (the
 * scheduler reads preferences in every request), handing anything outside
 * its subset of XML (comments, CDATA, entities, attributes on the values)
 * to vs_xml_parse() and the tree.
 */
#ifndef VOLSCHED_PREFS_H
#define VOLSCHED_PREFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/xml.h"

enum vs_gpref {
    VS_GP_WORK_BUF_MIN_DAYS,
    VS_GP_WORK_BUF_ADDITIONAL_DAYS,
    VS_GP_CPU_SCHEDULING_PERIOD_MINUTES,
    VS_GP_LEAVE_APPS_IN_MEMORY, /* a boolean: 1 or 0 */
    VS_GP_MAX_NCPUS_PCT,
    VS_GP_CPU_USAGE_LIMIT,
    VS_GP_DISK_INTERVAL,
    VS_GP_DISK_MAX_USED_GB,
    VS_GP_DISK_MAX_USED_PCT,
    VS_GP_DISK_MIN_FREE_GB,
    VS_GP_RAM_MAX_USED_BUSY_PCT,
    VS_GP_RAM_MAX_USED_IDLE_PCT,
    VS_GP_COUNT
};

struct vs_gprefs {
    double
        v[VS_GP_COUNT]; /* the value when its `have` bit is set and its `bad` bit is not; else 0 */
    uint32_t have;      /* bit i: element i is present */
    uint32_t bad;       /* bit i: present, but its text is not a value */
};

/* The tag name of a preference ("work_buf_min_days"); "" for an invalid one. */
const char *vs_gpref_name(enum vs_gpref p);

/* Whether preference p was given with a usable value. */
static inline bool vs_gprefs_ok(const struct vs_gprefs *g, enum vs_gpref p)
{
    return (g->have >> p & 1u) && !(g->bad >> p & 1u);
}

/* Reads the preferences from root's children into *out (every field
 * written). root may be NULL: nothing present. */
void vs_gprefs_from_node(const struct vs_xml_node *root, struct vs_gprefs *out);

/* All preferences, for vs_gprefs_parse's want. */
#define VS_GP_ALL    ((1u << VS_GP_COUNT) - 1)
#define VS_GP_BIT(p) (1u << (p))

/*
 * Reads the preferences in want (VS_GP_BIT()s, or VS_GP_ALL; the others
 * stay absent) from the document xml[0..len) (its root element is not
 * checked) into *out. Returns 0, or VS_EPARSE when the text is not
 * well-formed XML (*out then has nothing present). A document vs_xml_parse
 * accepts gives what vs_gprefs_from_node gives for its root, less what is
 * not in want.
 */
VS_MUST_CHECK int vs_gprefs_parse(const char *xml, size_t len, uint32_t want,
                                  struct vs_gprefs *out);

/*
 * The same for a host whose venue is venue (BOINC-COMPAT: GLOBAL_PREFS::
 * parse with the host's venue). When the root has a <venue name="VENUE">
 * child, the first such is read in place of the root: its own children
 * alone, the root's values counting for nothing (BOINC starts again from
 * its defaults there), and *out_found is set. Otherwise, or for a NULL or
 * "" venue (never a section's name here), the root's children as above,
 * *out_found false. The two ways in agree (tests/fuzz/fuzz_prefs.c);
 * vs_gprefs_parse_venue reads a document with a "<venue" in it through
 * the tree.
 */
void vs_gprefs_from_node_venue(const struct vs_xml_node *root, const char *venue,
                               struct vs_gprefs *out, bool *out_found);
VS_MUST_CHECK int vs_gprefs_parse_venue(const char *xml, size_t len, uint32_t want,
                                        const char *venue, struct vs_gprefs *out, bool *out_found);

#endif
