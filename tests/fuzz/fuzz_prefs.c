/*
 * Differential fuzz target: the one-pass reader of global preferences
 * (vs_gprefs_parse, src/common/prefs.c) against the tree reader
 * (vs_gprefs_from_node over vs_xml_parse). On every input the one-pass
 * reader reads inside the input and returns; on an input the XML module
 * accepts it must give the same values, presence and bad bits, for all
 * preferences and for a subset (the scheduler reads six), and with a host
 * venue (vs_gprefs_parse_venue against vs_gprefs_from_node_venue: a
 * <venue name="work"> section read in place of the root). The seed
 * corpus is preferences as BOINC's clients send them (venues, day_prefs,
 * flags, a declaration) and the edges of the one-pass subset (entities,
 * CDATA, comments, attributes, repeats).
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/prefs.h"
#include "volsched/xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct vs_gprefs fast, ref, part, vfast, vref;
    int rc = vs_gprefs_parse(s, size, VS_GP_ALL, &fast);
    /* the host's venue: "work" (a section may apply) */
    bool vfound = false, vref_found = false;
    int vrc = vs_gprefs_parse_venue(s, size, VS_GP_ALL, "work", &vfast, &vfound);
    CHECK(vrc == 0 || vrc == VS_EPARSE);
    if (vrc)
        CHECK(vfast.have == 0 && vfast.bad == 0 && !vfound);
    /* a subset (the scheduler reads six): checked below against the tree */
    const uint32_t want = size > 0 ? (uint32_t)data[0] * 0x1011u & VS_GP_ALL : 0;
    int prc = vs_gprefs_parse(s, size, want, &part);
    CHECK(prc == 0 || prc == VS_EPARSE);
    CHECK(rc == 0 || rc == VS_EPARSE);
    if (rc)
        CHECK(fast.have == 0 && fast.bad == 0);
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_xml_doc doc;
    if (vs_xml_parse(s, size, NULL, 0, &a, &doc, NULL) == 0) {
        vs_gprefs_from_node(doc.root, &ref);
        CHECK(rc == 0);
        CHECK(fast.have == ref.have && fast.bad == ref.bad);
        for (int i = 0; i < VS_GP_COUNT; i++)
            CHECK(memcmp(&fast.v[i], &ref.v[i], sizeof(double)) == 0);
        CHECK(prc == 0 && part.have == (ref.have & want) && part.bad == (ref.bad & want));
        for (int i = 0; i < VS_GP_COUNT; i++)
            CHECK(part.v[i] == ((want >> i & 1u) ? ref.v[i] : 0));
        /* with a venue: the tree's venue reading; without its section, the
         * root's values (those of no venue) */
        vs_gprefs_from_node_venue(doc.root, "work", &vref, &vref_found);
        CHECK(vrc == 0 && vfound == vref_found);
        CHECK(vfast.have == vref.have && vfast.bad == vref.bad);
        for (int i = 0; i < VS_GP_COUNT; i++)
            CHECK(memcmp(&vfast.v[i], &vref.v[i], sizeof(double)) == 0);
        if (!vref_found)
            CHECK(vref.have == ref.have && vref.bad == ref.bad);
    }
    vs_arena_cleanup(&a);
    return 0;
}
