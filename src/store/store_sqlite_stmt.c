/*
 * The SQLite backend's statements: the SQLite side of each call of the
 * statement layer (store_db.h), which includes no backend's header. Each
 * is SQLite's own call, its return code handed through: VS_DB_* are
 * numbered as SQLite's codes, which the assertions below hold to.
 */
#include <sqlite3.h>

#include "store/store_db.h"

_Static_assert(VS_DB_OK == SQLITE_OK, "VS_DB_OK");
_Static_assert(VS_DB_ERROR == SQLITE_ERROR, "VS_DB_ERROR");
_Static_assert(VS_DB_BUSY == SQLITE_BUSY, "VS_DB_BUSY");
_Static_assert(VS_DB_LOCKED == SQLITE_LOCKED, "VS_DB_LOCKED");
_Static_assert(VS_DB_IOERR == SQLITE_IOERR, "VS_DB_IOERR");
_Static_assert(VS_DB_CONSTRAINT == SQLITE_CONSTRAINT, "VS_DB_CONSTRAINT");
_Static_assert(VS_DB_RANGE == SQLITE_RANGE, "VS_DB_RANGE");
_Static_assert(VS_DB_ROW == SQLITE_ROW, "VS_DB_ROW");
_Static_assert(VS_DB_DONE == SQLITE_DONE, "VS_DB_DONE");
_Static_assert(VS_DB_CONSTRAINT_FOREIGNKEY == SQLITE_CONSTRAINT_FOREIGNKEY,
               "VS_DB_CONSTRAINT_FOREIGNKEY");
_Static_assert(VS_DB_CONSTRAINT_UNIQUE == SQLITE_CONSTRAINT_UNIQUE, "VS_DB_CONSTRAINT_UNIQUE");
_Static_assert(VS_DB_INTEGER == SQLITE_INTEGER, "VS_DB_INTEGER");
_Static_assert(VS_DB_NULL == SQLITE_NULL, "VS_DB_NULL");

int vs_sqst_bind_i64(sqlite3_stmt *q, int i, int64_t v)
{
    return sqlite3_bind_int64(q, i, v);
}

int vs_sqst_bind_int(sqlite3_stmt *q, int i, int v)
{
    return sqlite3_bind_int(q, i, v);
}

int vs_sqst_bind_double(sqlite3_stmt *q, int i, double v)
{
    return sqlite3_bind_double(q, i, v);
}

int vs_sqst_bind_text(sqlite3_stmt *q, int i, const char *v, int n, void (*destructor)(void *))
{
    /* VS_DB_STATIC and VS_DB_TRANSIENT are SQLite's two markers, by value. */
    return sqlite3_bind_text(q, i, v, n, destructor);
}

int vs_sqst_bind_null(sqlite3_stmt *q, int i)
{
    return sqlite3_bind_null(q, i);
}

int vs_sqst_step(sqlite3_stmt *q)
{
    return sqlite3_step(q);
}

void vs_sqst_reset(sqlite3_stmt *q)
{
    sqlite3_reset(q);
}

void vs_sqst_clear_bindings(sqlite3_stmt *q)
{
    sqlite3_clear_bindings(q);
}

int64_t vs_sqst_column_int64(sqlite3_stmt *q, int col)
{
    return sqlite3_column_int64(q, col);
}

int vs_sqst_column_int(sqlite3_stmt *q, int col)
{
    return sqlite3_column_int(q, col);
}

double vs_sqst_column_double(sqlite3_stmt *q, int col)
{
    return sqlite3_column_double(q, col);
}

const unsigned char *vs_sqst_column_text(sqlite3_stmt *q, int col)
{
    return sqlite3_column_text(q, col);
}

int vs_sqst_column_bytes(sqlite3_stmt *q, int col)
{
    return sqlite3_column_bytes(q, col);
}

int vs_sqst_column_type(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col);
}

void vs_sqst_finalize(sqlite3_stmt *q)
{
    sqlite3_finalize(q);
}
