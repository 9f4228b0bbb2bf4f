# SPDX-License-Identifier: MIT
"""vs_trace_edit.py — traces edited with SQL for the Python checks: what
older recordings, other programs or a hostile hand leave, made from a
committed trace.  Scripts in tests/*/ import it after putting tests/ on
sys.path.  Standard library only."""
import shutil
import sqlite3


def apply_sql(path, *sqls):
    """Executes each statement of sqls on the trace at path, in order, and
    commits them."""
    db = sqlite3.connect(path)
    for sql in sqls:
        db.execute(sql)
    db.commit()
    db.close()


def edited_copy(src, dst, *sqls):
    """Copies the trace src to dst and applies sqls to the copy; returns
    dst."""
    shutil.copy(src, dst)
    apply_sql(dst, *sqls)
    return dst
