/* SPDX-License-Identifier: MIT */
/* vs-cli-options.c — the option parsing every subcommand that reads
 * traces shares (vs-cli.h): its name in messages, its --help, its
 * entries, and a usage error (status 2) for options it does not take.
 */
#include "vs-cli.h"

int
vs_cli_parse_options (const char *command, const char *parameters, const char *summary,
                      const char *description, GOptionEntry *entries, int *argc, char ***argv,
                      const char *usage_line)
{
  g_autofree char *prgname = g_strconcat ("vramscope ", command, NULL);
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;

  g_set_prgname (prgname);
  context = g_option_context_new (parameters);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, description);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, argc, argv, &error))
    return vs_cli_usage_error (command, usage_line, error->message);
  return 0;
}
