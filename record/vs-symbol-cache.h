/* SPDX-License-Identifier: MIT */
/* vs-symbol-cache.h — what symbolizing found, kept per module build-id.
 *
 * Symbolizing a run's stacks opens each module a stack goes through and
 * its symbol tables; for PyTorch's libraries that takes seconds, after
 * every run, for the same few hundred addresses.  The answers depend only
 * on the module's contents (its build-id) and the separate debug info
 * installed for it, so they are kept in an SQLite file in a cache folder,
 * keyed by build-id (a second key when /usr/lib/debug holds debug info
 * for it), and a later run with the same modules opens none of them.
 * Plain C, like vs-symbolize.c.
 */
#pragma once

#include <stdint.h>

/* The most entries one address keeps (longer lines are not read). */
#define VS_SYMBOL_CACHE_MAX_ENTRIES 64

typedef struct VsSymbolCache VsSymbolCache;

/* One frame an address expands into (innermost first, as lookup()
 * gives them); function and file may be NULL, line VS_UNKNOWN. */
typedef struct
{
  char *function;
  char *file;
  int64_t line;
} VsSymbolCacheEntry;

/* The folder the cache uses from now on (created when first written);
 * NULL or "" turns it off.  Off until called.  Not thread-safe: set it
 * before symbolizing starts. */
void vs_symbol_cache_set_dir (const char *dir);

/* The default folder, malloc'd: $VRAMSCOPE_CACHE_DIR/symbols, else
 * $XDG_CACHE_HOME/vramscope/symbols, else ~/.cache/vramscope/symbols;
 * NULL when none can be named. */
char *vs_symbol_cache_default_dir (void);

/* The cache of the module with build-id build_id (hex), loaded from the
 * cache file if it holds the module; NULL when the cache is off or
 * build_id is not a build-id.  A cache file that cannot be read (corrupt,
 * from a newer version) is treated as empty. */
VsSymbolCache *vs_symbol_cache_open (const char *build_id);

/* The entries kept for the address at offset off into the module: their
 * count (0: nothing was found there), *entries pointing into the cache;
 * -1 when off is not in the cache. */
int vs_symbol_cache_find (VsSymbolCache *c, uint64_t off, const VsSymbolCacheEntry **entries);

/* Keeps n entries for off (copied). */
void vs_symbol_cache_add (VsSymbolCache *c, uint64_t off, const VsSymbolCacheEntry *entries, int n);

/* Stores the added entries in the cache file (one transaction: concurrent
 * runs never see half a module; an address another run stored meanwhile
 * keeps its entries) and frees c.  A corrupt cache file is replaced.  NULL
 * is accepted. */
void vs_symbol_cache_close (VsSymbolCache *c);
