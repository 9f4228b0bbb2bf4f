#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Embeds schemas/trace.sql into a C source as vs_trace_schema_sql[]."""
import sys

src, out = sys.argv[1], sys.argv[2]
with open(src, encoding="utf-8") as f:
    text = f.read()
with open(out, "w", encoding="utf-8") as f:
    f.write("/* Generated from schemas/trace.sql by schemas/embed-sql.py. */\n")
    f.write('#include "vs-trace-format.h"\n\n')
    f.write("const char vs_trace_schema_sql[] =\n")
    for line in text.splitlines():
        esc = line.replace("\\", "\\\\").replace('"', '\\"')
        f.write('  "%s\\n"\n' % esc)
    f.write("  ;\n")
