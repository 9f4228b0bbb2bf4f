/* SPDX-License-Identifier: MIT */
/* vs-record-launch.c — `vramscope record`'s launcher (vs-record-launch.h).
 *
 * The spool sits beside the output, so a large run fills the disk the user
 * chose; the collector finds it through VRAMSCOPE_SPOOL_DIR.  PyTorch
 * programs get the folder of the PyTorch hook (python/sitecustomize.py,
 * beside the collector) first on PYTHONPATH.  Termination signals are
 * forwarded to the program, unless the terminal sent them to its whole
 * process group already.
 */
#include "vs-record-launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "vs-clock.h"
#include "vs-config.h"
#include "vs-output.h"
#include "vs-spool.h"
#include "vs-spool-run.h"
#include "vs-window-live.h"

static volatile sig_atomic_t child_pid;

static const int forwarded[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* Finds the collector library: $VRAMSCOPE_COLLECTOR, then next to this
 * executable, then where an install puts it relative to this executable
 * (bindir/../libdir/vramscope: right under any prefix or DESTDIR), then
 * ../collector (build tree), then the configured install directory
 * (prefix/libdir/vramscope).  Returns false when none exists. */
static bool
find_collector (char *out, size_t len)
{
  const char *env = getenv ("VRAMSCOPE_COLLECTOR");
  if (env != NULL && env[0] != '\0')
    {
      if (realpath (env, out) != NULL && access (out, R_OK) == 0)
        return true;
      fprintf (stderr, "vramscope record: VRAMSCOPE_COLLECTOR=%s is not readable\n", env);
      return false;
    }
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return false;
  exe[n] = '\0';
  char *slash = strrchr (exe, '/');
  if (slash == NULL)
    return false;
  *slash = '\0';
  /* Beside this program, installed relative to it, in the build tree, then
   * at the configured prefix (meson's libdir, which is multiarch on
   * Debian). */
  char installed_dir[PATH_MAX + 256], build_dir[PATH_MAX + 16];
  snprintf (installed_dir, sizeof installed_dir, "%s/%s", exe, VS_COLLECTOR_RELATIVE_DIR);
  snprintf (build_dir, sizeof build_dir, "%s/../collector", exe);
  const char *dirs[] = { exe, VS_COLLECTOR_RELATIVE_DIR[0] ? installed_dir : exe, build_dir,
                         VS_COLLECTOR_INSTALL_DIR };
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
    {
      char cand[PATH_MAX + 64];
      snprintf (cand, sizeof cand, "%s/" VS_RECORD_COLLECTOR_NAME, dirs[i]);
      if (access (cand, R_OK) == 0 && realpath (cand, out) != NULL && strlen (out) < len)
        return true;
    }
  return false;
}

/* Forwards a termination signal to the program, unless it came from the
 * terminal: the terminal already sent it to the whole process group. */
static void
forward_signal (int sig, siginfo_t *info, void *ctx)
{
  (void)ctx;
  if (child_pid > 0 && (info == NULL || info->si_code != SI_KERNEL))
    kill ((pid_t)child_pid, sig);
}

/* How often the allocator streams are read while the program runs, in
 * ms: $VRAMSCOPE_TORCH_FOLLOW_MS (0: not while it runs, all of each
 * stream once it has exited), 250 by default. */
static int
follow_interval_ms (void)
{
  const char *env = getenv ("VRAMSCOPE_TORCH_FOLLOW_MS");
  if (env == NULL || env[0] == '\0')
    return 250;
  return atoi (env) > 0 ? atoi (env) : 0;
}

/* Whether the followed imports hand their rows to the finalizer as they
 * write them (vs-fin-given.h): not $VRAMSCOPE_TORCH_FOLLOW_GIVE=0 (the
 * finalizer then reads every row back, as before), and not under a
 * window, which keeps the post-run path that reads the tables. */
static bool
follow_gives (int64_t window_ns)
{
  const char *env = getenv ("VRAMSCOPE_TORCH_FOLLOW_GIVE");
  return window_ns == 0 && (env == NULL || strcmp (env, "0") != 0);
}

/* The folder of the PyTorch hook beside the collector: python/ next to it
 * (build tree and installed alike).  False when it is missing. */
static bool
find_torch_hook (const char *collector, char *out, size_t len)
{
  char dir[PATH_MAX];
  snprintf (dir, sizeof dir, "%s", collector);
  char *slash = strrchr (dir, '/');
  if (slash == NULL)
    return false;
  *slash = '\0';
  char file[PATH_MAX + 64];
  snprintf (file, sizeof file, "%s/python/sitecustomize.py", dir);
  if (access (file, R_OK) != 0)
    return false;
  return (size_t)snprintf (out, len, "%s/python", dir) < len;
}

/* Makes the spool beside l->out (after the hint about leftovers of
 * killed recordings there).  False with the reason printed. */
static bool
make_spool (VsRecordLaunch *l)
{
  char outdir[PATH_MAX];
  snprintf (outdir, sizeof outdir, "%s", l->out);
  char *slash = strrchr (outdir, '/');
  if (slash == outdir)
    outdir[1] = '\0';
  else if (slash != NULL)
    *slash = '\0';
  else
    snprintf (outdir, sizeof outdir, ".");
  if (!l->quiet)
    vs_spool_run_hint_leftovers (outdir);
  snprintf (l->spool, sizeof l->spool, "%s/" VS_SPOOL_PREFIX "%ld-XXXXXX", outdir, (long)getpid ());
  if (mkdtemp (l->spool) == NULL)
    {
      fprintf (stderr, "vramscope record: cannot create a directory in %s: %s\n", outdir,
               strerror (errno));
      return false;
    }
  if (realpath (l->spool, l->spool_abs) == NULL)
    snprintf (l->spool_abs, sizeof l->spool_abs, "%s", l->spool);
  return true;
}

/* The environment the collector and the PyTorch hook read in every
 * process of the run. */
static void
set_environment (VsRecordLaunch *l)
{
  setenv ("CUDA_INJECTION64_PATH", l->collector, 1);
  setenv ("NVTX_INJECTION64_PATH", l->collector, 1);
  setenv ("VRAMSCOPE_SPOOL_DIR", l->spool_abs, 1);
  setenv ("VRAMSCOPE_KERNELS", l->kernels ? "1" : "0", 1);
  /* Every process of the run writes it into its meta (vs-identity.h). */
  if (l->job != NULL)
    setenv ("VRAMSCOPE_JOB_ID", l->job, 1);
  unsetenv ("VRAMSCOPE_OUTPUT");
  /* With a window the streams' records are given back to the disk as they
   * are imported (vs-window-live.h): their length then costs no disk, and
   * the default limit would end a days-long run's allocator level within
   * the hour.  A limit the user set is kept. */
  if (l->window_ns > 0 && l->torch && follow_interval_ms () > 0
      && getenv ("VRAMSCOPE_TORCH_STREAM_MAX_MB") == NULL
      && vs_window_live_can_give_back (l->spool_abs))
    setenv ("VRAMSCOPE_TORCH_STREAM_MAX_MB", G_STRINGIFY (VS_WINDOW_STREAM_MAX_MB), 1);
  char hook[PATH_MAX];
  if (l->torch && find_torch_hook (l->collector, hook, sizeof hook))
    {
      const char *old = getenv ("PYTHONPATH");
      size_t plen = strlen (hook) + (old ? strlen (old) : 0) + 2;
      char *path = malloc (plen);
      if (path != NULL)
        {
          snprintf (path, plen, "%s%s%s", hook, old && old[0] ? ":" : "", old && old[0] ? old : "");
          setenv ("PYTHONPATH", path, 1);
          free (path);
        }
      setenv ("VRAMSCOPE_TORCH", "1", 1);
    }
  else
    {
      if (l->torch)
        fprintf (stderr,
                 "vramscope record: the PyTorch hook (python/sitecustomize.py beside "
                 "%s) is missing: PyTorch's allocator level is not recorded\n",
                 l->collector);
      setenv ("VRAMSCOPE_TORCH", "0", 1);
    }
}

/* In the child: the signals as they were, then the program; an exec that
 * fails writes its errno into the pipe. */
static void
exec_program (VsRecordLaunch *l, int errpipe[2], const sigset_t *saved_mask)
{
  close (errpipe[0]);
  for (int k = 0; k < 4; k++)
    sigaction (forwarded[k], &l->old[k], NULL);
  sigprocmask (SIG_SETMASK, saved_mask, NULL);
  execvp (l->prog[0], l->prog);
  int e = errno;
  if (write (errpipe[1], &e, sizeof e) < 0)
    _exit (127);
  _exit (e == ENOENT ? 127 : 126);
}

/* Forks the program with the forwarding handlers in place, and starts
 * the threads beside it.  False with the reason printed. */
static bool
start_program (VsRecordLaunch *l)
{
  l->start_ns = vs_clock_ns (CLOCK_REALTIME);
  int errpipe[2];
  if (pipe2 (errpipe, O_CLOEXEC) != 0)
    {
      fprintf (stderr, "vramscope record: %s\n", strerror (errno));
      return false;
    }
  /* Handlers go in before the fork, with the signals blocked until the
   * child's pid is known, so a signal sent at once is forwarded, not lost
   * and not fatal to record. */
  struct sigaction sa;
  sigset_t block, saved_mask;
  sigemptyset (&block);
  for (int k = 0; k < 4; k++)
    sigaddset (&block, forwarded[k]);
  sigprocmask (SIG_BLOCK, &block, &saved_mask);
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset (&sa.sa_mask);
  for (int k = 0; k < 4; k++)
    sigaction (forwarded[k], &sa, &l->old[k]);
  pid_t pid = fork ();
  if (pid < 0)
    {
      fprintf (stderr, "vramscope record: cannot start %s: %s\n", l->prog[0], strerror (errno));
      for (int k = 0; k < 4; k++)
        sigaction (forwarded[k], &l->old[k], NULL);
      sigprocmask (SIG_SETMASK, &saved_mask, NULL);
      close (errpipe[0]);
      close (errpipe[1]);
      return false;
    }
  if (pid == 0)
    exec_program (l, errpipe, &saved_mask);
  close (errpipe[1]);
  l->errpipe = errpipe[0];
  l->pid = pid;
  child_pid = pid;
  /* PyTorch's allocator streams are imported as they grow, while record
   * waits (vs-torch-follow.c); its thread starts with the forwarded
   * signals blocked, so they all reach this one. */
  VsTorchFollowMode mode = l->window_ns > 0              ? VS_TORCH_FOLLOW_WINDOW
                           : follow_gives (l->window_ns) ? VS_TORCH_FOLLOW_GATHER
                                                         : VS_TORCH_FOLLOW_PLAIN;
  l->follow = !l->torch || follow_interval_ms () <= 0
                  ? NULL
                  : vs_torch_follow_start (l->spool_abs, follow_interval_ms (), mode);
  /* With a window, the window is applied as the program runs
   * (vs-window-rounds.h); its thread too starts with the signals blocked. */
  l->rounds = l->window_ns > 0 ? vs_window_rounds_start (l->spool_abs, l->window_ns) : NULL;
  sigprocmask (SIG_SETMASK, &saved_mask, NULL);
  return true;
}

int
vs_record_launch (VsRecordLaunch *l)
{
  if (!find_collector (l->collector, sizeof l->collector))
    {
      fprintf (stderr,
               "vramscope record: cannot find %s next to this program, in "
               "its folder's %s, ../collector or %s (set VRAMSCOPE_COLLECTOR)\n",
               VS_RECORD_COLLECTOR_NAME, VS_COLLECTOR_RELATIVE_DIR, VS_COLLECTOR_INSTALL_DIR);
      return 1;
    }
  if (!make_spool (l))
    return 1;
  set_environment (l);
  if (!start_program (l))
    {
      vs_spool_run_remove (l->spool);
      return 1;
    }
  vs_spool_run_write_info (l->spool_abs, (long)l->pid, (long long)l->start_ns, l->out,
                           (long long)l->window_ns);
  /* Each process writes its own file in the spool; the viewer can follow
   * one while it is written.  The program's own file is named after it. */
  if (!l->quiet)
    fprintf (stderr,
             "vramscope: recording; follow it live with: vramscope view %s/process-%ld-*.db\n",
             l->spool_abs, (long)l->pid);
  return 0;
}

void
vs_record_wait (VsRecordLaunch *l)
{
  int exec_errno = 0;
  ssize_t got;
  do
    got = read (l->errpipe, &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  close (l->errpipe);
  l->exec_errno = got == (ssize_t)sizeof exec_errno ? exec_errno : 0;

  int status = 0;
  while (waitpid (l->pid, &status, 0) < 0 && errno == EINTR)
    ;
  child_pid = 0;
  for (int k = 0; k < 4; k++)
    sigaction (forwarded[k], &l->old[k], NULL);
  l->end_ns = vs_clock_ns (CLOCK_REALTIME);
  if (WIFEXITED (status))
    l->code = WEXITSTATUS (status);
  else if (WIFSIGNALED (status))
    l->code = 128 + WTERMSIG (status);
  else
    l->code = 1;
  /* The round under way, if any, is cancelled: the end does the rest. */
  memset (&l->rounds_st, 0, sizeof l->rounds_st);
  vs_window_rounds_stop (l->rounds, &l->rounds_st);
  l->rounds = NULL;
  if (l->rounds_st.error[0] != '\0')
    fprintf (stderr,
             "vramscope record: the window stopped being applied while the program ran (%s); "
             "it is applied at the end\n",
             l->rounds_st.error);
}
