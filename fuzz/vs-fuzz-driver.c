/* vs-fuzz-driver.c — runs LLVMFuzzerTestOneInput over files, without
 * libFuzzer: the corpus smoke test of a normal build.
 *
 * Arguments are files or folders (every regular file directly inside), or
 * `--random COUNT SEED`: COUNT inputs of 1 to 512 random bytes drawn from
 * SEED (a bounded fuzzing run for CI that any failure can be replayed
 * from: input i is printed with its test line).  Exits 0 when every input
 * was handled without a crash; a crash or a failed assertion in the
 * harness ends the process as usual.  Prints a TAP plan.
 */
#include <stdint.h>
#include <stdio.h>

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

int
main (int argc, char **argv)
{
  int failed = 0;
  if (argc == 4 && g_strcmp0 (argv[1], "--random") == 0)
    return run_random ((guint)g_ascii_strtoull (argv[2], NULL, 10),
                       (guint32)g_ascii_strtoull (argv[3], NULL, 10));
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  for (int i = 1; i < argc; i++)
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
