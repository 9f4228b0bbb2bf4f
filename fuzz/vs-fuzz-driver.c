/* SPDX-License-Identifier: MIT */
/* vs-fuzz-driver.c — runs LLVMFuzzerTestOneInput over files, without
 * libFuzzer: the corpus smoke test of a normal build.
 *
 * Arguments are files or folders (every regular file directly inside), or
 * `--random COUNT SEED`: COUNT inputs of 1 to 512 random bytes drawn from
 * SEED (a bounded fuzzing run for CI that any failure can be replayed
 * from: input i is printed with its test line), or `--mutate COUNT SEED
 * FILE|FOLDER...`: COUNT mutants of those files (each one of them with 1
 * to 8 bytes changed, inserted or removed, or cut short), drawn from SEED
 * likewise — random bytes rarely get past a format's first check, a
 * mutant of a valid input does.  Exits 0 when every input
 * was handled without a crash; a crash or a failed assertion in the
 * harness ends the process as usual.  Prints a TAP plan.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int count;

static int
run_file (const char *path)
{
  gchar *data = NULL;
  gsize len = 0;
  GError *error = NULL;
  if (!g_file_get_contents (path, &data, &len, &error))
    {
      printf ("not ok %d - %s: %s\n", ++count, path, error->message);
      g_error_free (error);
      return 1;
    }
  LLVMFuzzerTestOneInput ((const uint8_t *)data, len);
  g_free (data);
  printf ("ok %d - %s\n", ++count, path);
  return 0;
}

/* Runs count random inputs drawn from seed. */
static int
run_random (guint n_inputs, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);

  printf ("1..%u\n", n_inputs);
  for (guint i = 0; i < n_inputs; i++)
    {
      gsize len = (gsize)g_rand_int_range (rand, 1, 513);
      guint8 *data = g_malloc (len);
      GString *hex = g_string_new (NULL);

      for (gsize k = 0; k < len; k++)
        {
          data[k] = (guint8)g_rand_int_range (rand, 0, 256);
          if (k < 32)
            g_string_append_printf (hex, "%02x", data[k]);
        }
      /* Printed before the run, so the input of a crash is known. */
      printf ("# input %u (seed %u): %zu bytes, %s…\n", i, seed, len, hex->str);
      fflush (stdout);
      LLVMFuzzerTestOneInput (data, len);
      printf ("ok %u - random input %u\n", i + 1, i);
      fflush (stdout);
      g_string_free (hex, TRUE);
      g_free (data);
    }
  g_rand_free (rand);
  return 0;
}

/* One mutation of buf (*len bytes, room for *len + 8): a byte changed
 * (often to 0, 0xff or a neighbour value), inserted or removed, or the end
 * cut off. */
static void
mutate_once (GRand *rand, guint8 *buf, gsize *len)
{
  gsize at = *len ? (gsize)g_rand_int_range (rand, 0, (gint32)*len) : 0;
  static const guint8 special[] = { 0, 1, 0x7f, 0x80, 0xff };

  switch (g_rand_int_range (rand, 0, 6))
    {
    case 0:
    case 1:
      if (*len)
        buf[at] = (guint8)g_rand_int_range (rand, 0, 256);
      break;
    case 2:
      if (*len)
        buf[at] = special[g_rand_int_range (rand, 0, G_N_ELEMENTS (special))];
      break;
    case 3:
      if (*len)
        buf[at] += g_rand_boolean (rand) ? 1 : 0xff;
      break;
    case 4:
      memmove (buf + at + 1, buf + at, *len - at);
      buf[at] = (guint8)g_rand_int_range (rand, 0, 256);
      (*len)++;
      break;
    default:
      if (*len > 1 && g_rand_boolean (rand))
        *len = at ? at : 1;
      else if (*len)
        {
          memmove (buf + at, buf + at + 1, *len - at - 1);
          (*len)--;
        }
      break;
    }
}

/* Runs count mutants of files drawn from seed. */
static int
run_mutants (guint n_inputs, guint32 seed, GPtrArray *files)
{
  GRand *rand = g_rand_new_with_seed (seed);
  GPtrArray *seeds = g_ptr_array_new_with_free_func ((GDestroyNotify)g_bytes_unref);
  GPtrArray *names = g_ptr_array_new ();

  for (guint i = 0; i < files->len; i++)
    {
      gchar *data = NULL;
      gsize len = 0;
      if (g_file_get_contents (files->pdata[i], &data, &len, NULL))
        {
          g_ptr_array_add (seeds, g_bytes_new_take (data, len));
          g_ptr_array_add (names, files->pdata[i]);
        }
    }
  if (seeds->len == 0)
    {
      printf ("1..1\nnot ok 1 - no inputs to mutate\n");
      g_ptr_array_unref (seeds);
      g_ptr_array_unref (names);
      g_rand_free (rand);
      return 1;
    }
  printf ("1..%u\n", n_inputs);
  for (guint i = 0; i < n_inputs; i++)
    {
      guint pick = (guint)g_rand_int_range (rand, 0, (gint32)seeds->len);
      gsize len = 0;
      const guint8 *orig = g_bytes_get_data (seeds->pdata[pick], &len);
      guint n_mut = (guint)g_rand_int_range (rand, 1, 9);
      guint8 *buf = g_malloc (len + n_mut + 1);

      memcpy (buf, orig, len);
      for (guint m = 0; m < n_mut; m++)
        mutate_once (rand, buf, &len);
      /* Printed before the run, so the input of a crash is known. */
      printf ("# mutant %u (seed %u) of %s: %u changes, %zu bytes\n", i, seed,
              (const char *)names->pdata[pick], n_mut, len);
      fflush (stdout);
      LLVMFuzzerTestOneInput (buf, len);
      printf ("ok %u - mutant %u\n", i + 1, i);
      fflush (stdout);
      g_free (buf);
    }
  g_ptr_array_unref (seeds);
  g_ptr_array_unref (names);
  g_rand_free (rand);
  return 0;
}

static gint
compare_paths (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *)a, *(char *const *)b);
}

int
main (int argc, char **argv)
{
  int failed = 0;
  if (argc == 4 && g_strcmp0 (argv[1], "--random") == 0)
    return run_random ((guint)g_ascii_strtoull (argv[2], NULL, 10),
                       (guint32)g_ascii_strtoull (argv[3], NULL, 10));
  gboolean mutate = argc >= 5 && g_strcmp0 (argv[1], "--mutate") == 0;
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  for (int i = mutate ? 4 : 1; i < argc; i++)
    {
      if (g_file_test (argv[i], G_FILE_TEST_IS_DIR))
        {
          GDir *d = g_dir_open (argv[i], 0, NULL);
          const char *name;
          while (d && (name = g_dir_read_name (d)))
            g_ptr_array_add (files, g_build_filename (argv[i], name, NULL));
          if (d)
            g_dir_close (d);
        }
      else
        g_ptr_array_add (files, g_strdup (argv[i]));
    }
  if (mutate)
    {
      /* the same order on every file system, so a seed replays */
      g_ptr_array_sort (files, compare_paths);
      failed = run_mutants ((guint)g_ascii_strtoull (argv[2], NULL, 10),
                            (guint32)g_ascii_strtoull (argv[3], NULL, 10), files);
      g_ptr_array_free (files, TRUE);
      return failed;
    }
  if (files->len == 0)
    {
      printf ("1..1\nnot ok 1 - no inputs\n");
      return 1;
    }
  printf ("1..%u\n", files->len);
  for (guint i = 0; i < files->len; i++)
    failed |= run_file (files->pdata[i]);
  g_ptr_array_free (files, TRUE);
  return failed;
}
