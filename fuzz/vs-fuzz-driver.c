/* vs-fuzz-driver.c — runs LLVMFuzzerTestOneInput over files, without
 * libFuzzer: the corpus smoke test of a normal build.
 *
 * Arguments are files or folders (every regular file directly inside).
 * Exits 0 when every input was handled without a crash; a crash or a failed
 * assertion in the harness ends the process as usual.  Prints a TAP plan.
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

int
main (int argc, char **argv)
{
  int failed = 0;
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
