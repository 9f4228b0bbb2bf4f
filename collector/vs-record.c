/* vs-record.c — `vramscope record`: run a program under the collector.
 *
 * Finds the collector library, starts the program with it injected
 * (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH) and a private spool
 * directory where each CUDA-using process of the run writes its own trace,
 * forwards termination signals, waits, merges the process traces into one,
 * finalizes it, prints a short summary and returns the program's own exit
 * status (128 + signal when a signal killed it).
 *
 * Plain C, no GLib: `vramscope` runs on GPU servers that have only libc,
 * the CUDA driver and libsqlite3.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vs-config.h"
#include "vs-merge.h"

int vs_cmd_record(int argc, char **argv);

#define COLLECTOR_NAME "libvramscope-collector.so"

static volatile sig_atomic_t child_pid;

static void
usage(FILE *f)
{
  fprintf(f,
          "Usage: vramscope record [-o FILE] [--kernels|--no-kernels] [--quiet] "
          "-- PROGRAM [ARGS...]\n"
          "\n"
          "Runs PROGRAM with the collector injected and writes one trace of every\n"
          "process of the run that uses CUDA.  Exits with PROGRAM's exit status.\n"
          "\n"
          "  -o, --output FILE   trace to write (default vramscope-%%h-%%p.db);\n"
          "                      %%p: pid of record, %%h: host name, %%q{VAR}: the\n"
          "                      value of environment variable VAR, %%%%: a %%\n"
          "  --kernels           record kernels, copies and memsets (default)\n"
          "  --no-kernels        record memory only\n"
          "  -q, --quiet         print nothing unless something fails\n");
}

static int64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Expands %p, %h, %q{VAR} and %% in pattern.  Returns false (with a
 * message) on a malformed pattern or an over-long result. */
static bool
expand_output(const char *pattern, char *out, size_t len)
{
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  size_t o = 0;
  for (const char *p = pattern; *p; p++) {
    char buf[64];
    const char *add = NULL;
    size_t addlen = 0;
    if (*p != '%') {
      add = p;
      addlen = 1;
    } else if (p[1] == 'p') {
      snprintf(buf, sizeof buf, "%ld", (long)getpid());
      add = buf;
      p++;
    } else if (p[1] == 'h') {
      add = host;
      p++;
    } else if (p[1] == '%') {
      add = "%";
      p++;
    } else if (p[1] == 'q' && p[2] == '{') {
      const char *end = strchr(p + 3, '}');
      if (end == NULL || end == p + 3) {
        fprintf(stderr, "vramscope record: malformed %%q{VAR} in output name '%s'\n", pattern);
        return false;
      }
      char var[256];
      size_t n = (size_t)(end - (p + 3));
      if (n >= sizeof var)
        n = sizeof var - 1;
      memcpy(var, p + 3, n);
      var[n] = '\0';
      add = getenv(var);
      if (add == NULL)
        add = "";
      p = end;
    } else {
      fprintf(stderr, "vramscope record: unknown %%%c in output name '%s' "
              "(use %%p, %%h, %%q{VAR} or %%%%)\n", p[1] ? p[1] : ' ', pattern);
      return false;
    }
    if (addlen == 0)
      addlen = strlen(add);
    if (o + addlen >= len) {
      fprintf(stderr, "vramscope record: output name too long\n");
      return false;
    }
    memcpy(out + o, add, addlen);
    o += addlen;
  }
  out[o] = '\0';
  if (o == 0) {
    fprintf(stderr, "vramscope record: empty output name\n");
    return false;
  }
  return true;
}

/* Finds the collector library: $VRAMSCOPE_COLLECTOR, then next to this
 * executable, then ../collector (build tree), then ../lib/vramscope
 * (installed).  Returns false when none exists. */
static bool
find_collector(char *out, size_t len)
{
  const char *env = getenv("VRAMSCOPE_COLLECTOR");
  if (env != NULL && env[0] != '\0') {
    if (realpath(env, out) != NULL && access(out, R_OK) == 0)
      return true;
    fprintf(stderr, "vramscope record: VRAMSCOPE_COLLECTOR=%s is not readable\n", env);
    return false;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return false;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL)
    return false;
  *slash = '\0';
  static const char *rel[] = {"", "/../collector", "/../lib/vramscope",
                              "/../lib/x86_64-linux-gnu/vramscope"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char cand[PATH_MAX + 64];
    snprintf(cand, sizeof cand, "%s%s/" COLLECTOR_NAME, exe, rel[i]);
    if (access(cand, R_OK) == 0 && realpath(cand, out) != NULL && strlen(out) < len)
      return true;
  }
  return false;
}

/* Forwards a termination signal to the program, unless it came from the
 * terminal: the terminal already sent it to the whole process group. */
static void
forward_signal(int sig, siginfo_t *info, void *ctx)
{
  (void)ctx;
  if (child_pid > 0 && (info == NULL || info->si_code != SI_KERNEL))
    kill((pid_t)child_pid, sig);
}

/* Removes the spool directory and the files the collector left in it. */
static void
remove_spool(const char *dir)
{
  DIR *d = opendir(dir);
  if (d != NULL) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.')
        continue;
      char p[PATH_MAX + 256];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static int
compare_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The process traces in the spool directory, sorted by name (pid, then
 * start time).  Returns the count; *out is malloc'd. */
static size_t
list_spool(const char *dir, char ***out)
{
  size_t n = 0, cap = 16;
  char **v = malloc(cap * sizeof *v);
  DIR *d = opendir(dir);
  if (d == NULL || v == NULL) {
    if (d)
      closedir(d);
    *out = v;
    return 0;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 4 || strcmp(e->d_name + l - 3, ".db") != 0)
      continue;
    if (n == cap) {
      char **nv = realloc(v, 2 * cap * sizeof *v);
      if (nv == NULL)
        break;
      v = nv;
      cap *= 2;
    }
    size_t plen = strlen(dir) + l + 2;
    v[n] = malloc(plen);
    if (v[n] == NULL)
      break;
    snprintf(v[n], plen, "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  qsort(v, n, sizeof *v, compare_names);
  *out = v;
  return n;
}

typedef struct {
  bool tty;
  const char *what;
  int last;
} VsProgress;

static bool
show_progress(uint64_t done, uint64_t total, void *data)
{
  VsProgress *p = data;
  if (!p->tty || total == 0)
    return true;
  int pct = (int)(done * 100 / total);
  if (pct > 100)
    pct = 100;
  if (pct != p->last) {
    fprintf(stderr, "\rvramscope: %s… %3d%%", p->what, pct);
    p->last = pct;
  }
  return true;
}

static void
human(int64_t bytes, char *out, size_t len)
{
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(out, len, "%lld B", (long long)bytes);
  else
    snprintf(out, len, "%.2f %s", v, units[u]);
}

/* Prints where the trace is and, per device, the peaks and failures. */
static void
print_summary(const char *path)
{
  static const char *sql =
    "SELECT d.idx, d.name, s.peak_reserved_bytes, s.peak_allocated_bytes,"
    " s.peak_device_bytes, s.failed_alloc_count, s.alloc_count"
    " FROM summary s JOIN device d ON d.id = s.device_id"
    " WHERE s.allocator_id = 0 ORDER BY d.idx, d.id";
  static const char *procs_sql = "SELECT count(*) FROM process";
  sqlite3 *db = NULL;
  sqlite3_stmt *s = NULL;
  fprintf(stderr, "vramscope: trace written to %s\n", path);
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  int procs = 0;
  if (sqlite3_prepare_v2(db, procs_sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    procs = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  s = NULL;
  if (procs == 0)
    fprintf(stderr, "vramscope: no process of the run used CUDA: the trace holds no events\n");
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
    while (sqlite3_step(s) == SQLITE_ROW) {
      char res[32], alloc[32], dev[32];
      human(sqlite3_column_int64(s, 2), res, sizeof res);
      human(sqlite3_column_int64(s, 3), alloc, sizeof alloc);
      human(sqlite3_column_int64(s, 4), dev, sizeof dev);
      const char *name = (const char *)sqlite3_column_text(s, 1);
      int64_t failed = sqlite3_column_int64(s, 5);
      fprintf(stderr, "  GPU %d %s: peak %s reserved, %s allocated (%s held from CUDA), "
              "%lld allocations", sqlite3_column_int(s, 0), name ? name : "",
              res, alloc, dev, (long long)sqlite3_column_int64(s, 6));
      if (failed > 0)
        fprintf(stderr, ", %lld failed", (long long)failed);
      fputc('\n', stderr);
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
}

/* The program's command line as one string, for the trace's meta. */
static char *
join_args(char **argv)
{
  size_t len = 1;
  for (char **a = argv; *a; a++)
    len += strlen(*a) + 1;
  char *s = malloc(len);
  if (s == NULL)
    return NULL;
  s[0] = '\0';
  for (char **a = argv; *a; a++) {
    if (a != argv)
      strcat(s, " ");
    strcat(s, *a);
  }
  return s;
}

/* `vramscope record`: see the file comment.  argv[0] is "record". */
int
vs_cmd_record(int argc, char **argv)
{
  const char *pattern = "vramscope-%h-%p.db";
  bool kernels = true, quiet = false;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "vramscope record: %s needs a file name\n", a);
        return 1;
      }
      pattern = argv[++i];
    } else if (strncmp(a, "--output=", 9) == 0) {
      pattern = a + 9;
    } else if (strcmp(a, "--kernels") == 0) {
      kernels = true;
    } else if (strcmp(a, "--no-kernels") == 0) {
      kernels = false;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "vramscope record: unknown option %s (see vramscope record --help)\n", a);
      return 1;
    } else {
      break;
    }
  }
  if (i >= argc) {
    fprintf(stderr, "vramscope record: no program given (usage: vramscope record "
            "[-o FILE] -- PROGRAM [ARGS...])\n");
    return 1;
  }
  char **prog = argv + i;

  char out[PATH_MAX], collector[PATH_MAX];
  if (!expand_output(pattern, out, sizeof out))
    return 1;
  if (!find_collector(collector, sizeof collector)) {
    fprintf(stderr, "vramscope record: cannot find %s next to this program, in "
            "../collector or ../lib/vramscope (set VRAMSCOPE_COLLECTOR)\n", COLLECTOR_NAME);
    return 1;
  }

  /* The spool sits beside the output so large runs fill the disk the user
   * chose, not /tmp. */
  char outdir[PATH_MAX], spool[PATH_MAX + 64];
  snprintf(outdir, sizeof outdir, "%s", out);
  char *slash = strrchr(outdir, '/');
  if (slash == outdir)
    outdir[1] = '\0';
  else if (slash != NULL)
    *slash = '\0';
  else
    snprintf(outdir, sizeof outdir, ".");
  snprintf(spool, sizeof spool, "%s/.vramscope-spool-%ld-XXXXXX", outdir, (long)getpid());
  if (mkdtemp(spool) == NULL) {
    fprintf(stderr, "vramscope record: cannot create a directory in %s: %s\n", outdir,
            strerror(errno));
    return 1;
  }
  char spool_abs[PATH_MAX + 64];
  if (realpath(spool, spool_abs) == NULL)
    snprintf(spool_abs, sizeof spool_abs, "%s", spool);

  setenv("CUDA_INJECTION64_PATH", collector, 1);
  setenv("NVTX_INJECTION64_PATH", collector, 1);
  setenv("VRAMSCOPE_SPOOL_DIR", spool_abs, 1);
  setenv("VRAMSCOPE_KERNELS", kernels ? "1" : "0", 1);
  unsetenv("VRAMSCOPE_OUTPUT");

  int64_t start = now_ns();
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    fprintf(stderr, "vramscope record: %s\n", strerror(errno));
    remove_spool(spool);
    return 1;
  }
  /* Handlers go in before the fork, with the signals blocked until the
   * child's pid is known, so a signal sent at once is forwarded, not lost
   * and not fatal to record. */
  struct sigaction sa, old[4];
  static const int fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  sigset_t block, saved_mask;
  sigemptyset(&block);
  for (int k = 0; k < 4; k++)
    sigaddset(&block, fwd[k]);
  sigprocmask(SIG_BLOCK, &block, &saved_mask);
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int k = 0; k < 4; k++)
    sigaction(fwd[k], &sa, &old[k]);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "vramscope record: cannot start %s: %s\n", prog[0], strerror(errno));
    for (int k = 0; k < 4; k++)
      sigaction(fwd[k], &old[k], NULL);
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
    remove_spool(spool);
    return 1;
  }
  if (pid == 0) {
    close(errpipe[0]);
    for (int k = 0; k < 4; k++)
      sigaction(fwd[k], &old[k], NULL);
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
    execvp(prog[0], prog);
    int e = errno;
    if (write(errpipe[1], &e, sizeof e) < 0)
      _exit(127);
    _exit(e == ENOENT ? 127 : 126);
  }
  close(errpipe[1]);
  child_pid = pid;
  sigprocmask(SIG_SETMASK, &saved_mask, NULL);

  int exec_errno = 0;
  ssize_t got;
  do
    got = read(errpipe[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  close(errpipe[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  child_pid = 0;
  for (int k = 0; k < 4; k++)
    sigaction(fwd[k], &old[k], NULL);
  int64_t end = now_ns();

  int code;
  if (WIFEXITED(status))
    code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    code = 128 + WTERMSIG(status);
  else
    code = 1;
  if (got == (ssize_t)sizeof exec_errno) {
    fprintf(stderr, "vramscope record: cannot run %s: %s\n", prog[0], strerror(exec_errno));
    remove_spool(spool);
    return code;
  }

  char **files = NULL;
  size_t n = list_spool(spool, &files);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  char *cmd = join_args(prog);
  VsMergeRun run = {.main_pid = pid, .exit_status = code, .start_ns = start,
                    .end_ns = end, .command_line = cmd, .host = host,
                    .tool_version = VS_VERSION};
  VsProgress progress = {.tty = !quiet && isatty(2), .what = "writing the trace", .last = -1};
  char err[1024] = "";
  int rc = vs_merge_traces(out, (const char *const *)files, n, &run, show_progress,
                           &progress, err, sizeof err);
  if (progress.tty && progress.last >= 0)
    fprintf(stderr, "\r\033[K");
  free(cmd);
  for (size_t k = 0; k < n; k++)
    free(files[k]);
  free(files);
  if (rc != 0) {
    fprintf(stderr, "vramscope record: cannot write %s: %s (process traces kept in %s)\n",
            out, err, spool);
    return code != 0 ? code : 1;
  }
  remove_spool(spool);
  if (!quiet)
    print_summary(out);
  return code;
}
