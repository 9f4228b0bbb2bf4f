/* vs-symbol-cache.c — symbolization results kept per build-id
 * (vs-symbol-cache.h).
 *
 * File format, one per module: a first line "vramscope-symbols 1", then
 * one line per address: its offset into the module in hex, the count of
 * entries, and per entry three tab-separated fields: function and file
 * ("-" for none, else "+" and the text with \ t n escaped as \\ \t \n)
 * and line ("-" or the number).  Unreadable lines are skipped: the
 * address is then symbolized again.
 */
#include "vs-symbol-cache.h"
#include "vs-trace-writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VS_SYMBOL_CACHE_HEADER "vramscope-symbols 1"

typedef struct
{
  uint64_t off;
  int n;
  VsSymbolCacheEntry *e;
} VsCachedAddress;

struct VsSymbolCache
{
  char *path;
  VsCachedAddress *a;
  size_t n, cap;
  bool sorted, dirty;
};

static char *cache_dir;

void
vs_symbol_cache_set_dir (const char *dir)
{
  free (cache_dir);
  cache_dir = dir != NULL && dir[0] != '\0' ? strdup (dir) : NULL;
}

char *
vs_symbol_cache_default_dir (void)
{
  const char *env = getenv ("VRAMSCOPE_CACHE_DIR");
  const char *xdg = getenv ("XDG_CACHE_HOME");
  const char *home = getenv ("HOME");
  char buf[4096];
  int len;
  if (env != NULL && env[0] != '\0')
    len = snprintf (buf, sizeof buf, "%s/symbols", env);
  else if (xdg != NULL && xdg[0] == '/')
    len = snprintf (buf, sizeof buf, "%s/vramscope/symbols", xdg);
  else if (home != NULL && home[0] == '/')
    len = snprintf (buf, sizeof buf, "%s/.cache/vramscope/symbols", home);
  else
    return NULL;
  return len > 0 && (size_t)len < sizeof buf ? strdup (buf) : NULL;
}

/* mkdir -p for the cache folder; false when it cannot be made. */
static bool
make_dirs (const char *dir)
{
  char p[4096];
  if (snprintf (p, sizeof p, "%s", dir) >= (int)sizeof p)
    return false;
  for (char *s = p + 1; *s; s++)
    if (*s == '/')
      {
        *s = '\0';
        if (mkdir (p, 0755) != 0 && errno != EEXIST)
          return false;
        *s = '/';
      }
  return mkdir (p, 0755) == 0 || errno == EEXIST;
}

/* Appends text escaped to f ("-" for NULL). */
static void
put_text (FILE *f, const char *text)
{
  if (text == NULL)
    {
      fputs ("\t-", f);
      return;
    }
  fputs ("\t+", f);
  for (const char *p = text; *p; p++)
    {
      if (*p == '\\')
        fputs ("\\\\", f);
      else if (*p == '\t')
        fputs ("\\t", f);
      else if (*p == '\n')
        fputs ("\\n", f);
      else
        fputc (*p, f);
    }
}

/* The next tab-separated field of *cur as a malloc'd string (unescaped;
 * *ok false when malformed); NULL for "-". */
static char *
get_text (char **cur, bool *ok)
{
  char *field = strsep (cur, "\t");
  if (field == NULL || (field[0] != '-' && field[0] != '+') || (field[0] == '-' && field[1]))
    {
      *ok = false;
      return NULL;
    }
  if (field[0] == '-')
    return NULL;
  char *out = malloc (strlen (field));
  if (out == NULL)
    {
      *ok = false;
      return NULL;
    }
  size_t o = 0;
  for (const char *p = field + 1; *p; p++)
    {
      if (*p != '\\')
        out[o++] = *p;
      else if (p[1] == '\\' || p[1] == 't' || p[1] == 'n')
        {
          p++;
          out[o++] = *p == 't' ? '\t' : *p == 'n' ? '\n' : '\\';
        }
      else
        *ok = false;
    }
  out[o] = '\0';
  return out;
}

static void
free_entries (VsSymbolCacheEntry *e, int n)
{
  for (int k = 0; k < n; k++)
    {
      free (e[k].function);
      free (e[k].file);
    }
  free (e);
}

static bool
append (VsSymbolCache *c, uint64_t off, VsSymbolCacheEntry *e, int n)
{
  if (c->n == c->cap)
    {
      size_t cap = c->cap ? 2 * c->cap : 256;
      VsCachedAddress *a = realloc (c->a, cap * sizeof *a);
      if (a == NULL)
        return false;
      c->a = a;
      c->cap = cap;
    }
  c->a[c->n++] = (VsCachedAddress){ off, n, e };
  c->sorted = false;
  return true;
}

/* Reads one address line into c; false when it is malformed. */
static bool
parse_line (VsSymbolCache *c, char *line)
{
  char *cur = line, *end = NULL;
  char *f_off = strsep (&cur, "\t"), *f_n = strsep (&cur, "\t");
  if (f_off == NULL || f_n == NULL)
    return false;
  errno = 0;
  uint64_t off = strtoull (f_off, &end, 16);
  if (errno != 0 || end == f_off || *end != '\0')
    return false;
  long n = strtol (f_n, &end, 10);
  if (end == f_n || *end != '\0' || n < 0 || n > VS_SYMBOL_CACHE_MAX_ENTRIES)
    return false;
  VsSymbolCacheEntry *e = n > 0 ? calloc ((size_t)n, sizeof *e) : NULL;
  if (n > 0 && e == NULL)
    return false;
  bool ok = true;
  for (long k = 0; k < n && ok; k++)
    {
      e[k].function = get_text (&cur, &ok);
      e[k].file = ok ? get_text (&cur, &ok) : NULL;
      char *f_line = ok ? strsep (&cur, "\t") : NULL;
      if (f_line == NULL)
        ok = false;
      else if (strcmp (f_line, "-") == 0)
        e[k].line = VS_UNKNOWN;
      else
        {
          e[k].line = strtoll (f_line, &end, 10);
          ok = end != f_line && *end == '\0';
        }
    }
  if (!ok || cur != NULL || !append (c, off, e, (int)n))
    {
      free_entries (e, (int)n);
      return false;
    }
  return true;
}

VsSymbolCache *
vs_symbol_cache_open (const char *build_id)
{
  if (cache_dir == NULL || build_id == NULL)
    return NULL;
  size_t len = strlen (build_id);
  if (len < 8 || len > 128 || strspn (build_id, "0123456789abcdef") != len)
    return NULL;
  /* Debug info installed later gives other answers: another file. */
  char debug[512];
  struct stat st;
  snprintf (debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
  bool has_debug = stat (debug, &st) == 0;
  VsSymbolCache *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  size_t plen = strlen (cache_dir) + len + 16;
  c->path = malloc (plen);
  if (c->path == NULL)
    {
      free (c);
      return NULL;
    }
  snprintf (c->path, plen, "%s/%s%s", cache_dir, build_id, has_debug ? ".dbg" : "");
  FILE *f = fopen (c->path, "r");
  if (f == NULL)
    return c;
  char *line = NULL;
  size_t cap = 0;
  ssize_t got = getline (&line, &cap, f);
  bool header = got > 0 && strncmp (line, VS_SYMBOL_CACHE_HEADER "\n", (size_t)got) == 0;
  while (header && (got = getline (&line, &cap, f)) > 0)
    {
      if (line[got - 1] != '\n')
        break; /* cut short: ignored */
      line[got - 1] = '\0';
      parse_line (c, line);
    }
  free (line);
  fclose (f);
  return c;
}

static int
compare_off (const void *a, const void *b)
{
  uint64_t x = ((const VsCachedAddress *)a)->off, y = ((const VsCachedAddress *)b)->off;
  return x < y ? -1 : x > y;
}

int
vs_symbol_cache_find (VsSymbolCache *c, uint64_t off, const VsSymbolCacheEntry **entries)
{
  if (c == NULL || c->n == 0)
    return -1;
  if (!c->sorted)
    {
      qsort (c->a, c->n, sizeof *c->a, compare_off);
      c->sorted = true;
    }
  VsCachedAddress key = { .off = off };
  const VsCachedAddress *hit = bsearch (&key, c->a, c->n, sizeof *c->a, compare_off);
  if (hit == NULL)
    return -1;
  *entries = hit->e;
  return hit->n;
}

void
vs_symbol_cache_add (VsSymbolCache *c, uint64_t off, const VsSymbolCacheEntry *entries, int n)
{
  if (c == NULL || n < 0)
    return;
  VsSymbolCacheEntry *e = n > 0 ? calloc ((size_t)n, sizeof *e) : NULL;
  if (n > 0 && e == NULL)
    return;
  for (int k = 0; k < n; k++)
    {
      e[k].function = entries[k].function ? strdup (entries[k].function) : NULL;
      e[k].file = entries[k].file ? strdup (entries[k].file) : NULL;
      e[k].line = entries[k].line;
    }
  if (append (c, off, e, n))
    c->dirty = true;
  else
    free_entries (e, n);
}

void
vs_symbol_cache_close (VsSymbolCache *c)
{
  if (c == NULL)
    return;
  if (c->dirty && make_dirs (cache_dir))
    {
      size_t tlen = strlen (c->path) + 32;
      char *tmp = malloc (tlen);
      FILE *f = NULL;
      if (tmp != NULL)
        {
          snprintf (tmp, tlen, "%s.%ld.tmp", c->path, (long)getpid ());
          f = fopen (tmp, "w");
        }
      if (f != NULL)
        {
          if (!c->sorted)
            qsort (c->a, c->n, sizeof *c->a, compare_off);
          fputs (VS_SYMBOL_CACHE_HEADER "\n", f);
          for (size_t i = 0; i < c->n; i++)
            {
              /* One line per address, the first of duplicates kept. */
              if (i > 0 && c->a[i].off == c->a[i - 1].off)
                continue;
              fprintf (f, "%llx\t%d", (unsigned long long)c->a[i].off, c->a[i].n);
              for (int k = 0; k < c->a[i].n; k++)
                {
                  const VsSymbolCacheEntry *e = &c->a[i].e[k];
                  put_text (f, e->function);
                  put_text (f, e->file);
                  if (e->line == VS_UNKNOWN)
                    fputs ("\t-", f);
                  else
                    fprintf (f, "\t%lld", (long long)e->line);
                }
              fputc ('\n', f);
            }
          if (fclose (f) == 0)
            rename (tmp, c->path);
          else
            unlink (tmp);
        }
      free (tmp);
    }
  for (size_t i = 0; i < c->n; i++)
    free_entries (c->a[i].e, c->a[i].n);
  free (c->a);
  free (c->path);
  free (c);
}
