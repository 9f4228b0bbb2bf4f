/* SPDX-License-Identifier: MIT */
/* vs-import-error.h — the errors of a snapshot's import (VS_IMPORT_ERROR),
 * included by vs-import.h; vs-import-error.c sets them for the import's
 * parts (vs-import-private.h). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define VS_IMPORT_ERROR (vs_import_error_quark ())
GQuark vs_import_error_quark (void);

typedef enum
{
  VS_IMPORT_ERROR_NOT_SNAPSHOT, /* a pickle, but not a memory snapshot */
  VS_IMPORT_ERROR_WRITE,        /* writing the trace failed */
  VS_IMPORT_ERROR_CANCELLED,
} VsImportError;

G_END_DECLS
