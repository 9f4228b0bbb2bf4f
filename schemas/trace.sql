-- vramscope trace schema, version 4.  Version 1 lacks alloc_event.before_trace
-- and summary.before_trace_*; versions 1 and 2 store kernels in one table
-- `kernel` of the view's shape below; versions 1 to 3 lack the tables of a
-- windowed recording (detail_interval, window_slice, window_site,
-- window_count).  The finalizer brings any of them to version 4 when it runs
-- on one; readers read all four as they are.  Version 5 is version 4
-- compacted (vs-trace-compact.c, the last step of record, recover and
-- import): alloc_event, mem_event, kernel_exec, series and block are moved
-- into column chunks, tables <name>_chunk (seq INTEGER PRIMARY KEY,
-- row_count INTEGER NOT NULL, zone BLOB NOT NULL, data BLOB NOT NULL), and
-- read under their names below through virtual tables (vs-chunk-vtab.c);
-- the view kernel is then a temporary view readers create.
--
-- One SQLite file per recorded run.  The collector and the importer write the
-- raw tables (meta … range); vs_trace_finalize() derives the tables below the
-- "derived" line (block, series, series_level, summary) and the indexes that
-- make readers fast.  Every table and column is documented in
-- schemas/README.md; keep the two in step.
--
-- Conventions
--   * Times are integer nanoseconds on the clock named by meta 'clock'
--     (CLOCK_REALTIME for recorded traces).  Reports print them relative to
--     meta 'start_ns'.
--   * Sizes are integer bytes.  NULL means "the trace cannot know", never 0.
--   * Addresses are device virtual addresses stored as signed 64-bit integers
--     (SQLite has no unsigned type); the bit pattern is the address.
--   * stack_id 0 or NULL means "no stack was captured".

PRAGMA application_id = 1448234323;  -- 0x56524D53, 'VRMS'
PRAGMA user_version = 4;

-- Key/value facts about the run and the recording.
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value ANY
) WITHOUT ROWID;

-- Lookup tables: the names of the integer codes used below.
CREATE TABLE mem_kind (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO mem_kind VALUES
  (1, 'device'), (2, 'pinned'), (3, 'managed'), (4, 'static'),
  (5, 'async'), (6, 'vmm'), (7, 'pageable'), (8, 'array'), (9, 'managed_static');

CREATE TABLE mem_op (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO mem_op VALUES (1, 'alloc'), (2, 'free');

CREATE TABLE alloc_op (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO alloc_op VALUES
  (1, 'alloc'), (2, 'free_requested'), (3, 'free_completed'),
  (4, 'segment_alloc'), (5, 'segment_free'), (6, 'segment_map'),
  (7, 'segment_unmap');

CREATE TABLE pool_op (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO pool_op VALUES
  (1, 'created'), (2, 'destroyed'), (3, 'trimmed'), (4, 'sample');

CREATE TABLE frame_kind (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO frame_kind VALUES
  (1, 'native'), (2, 'python'), (3, 'inline'), (4, 'label');

-- Every process of the run that used CUDA.
CREATE TABLE process (
  id                   INTEGER PRIMARY KEY,
  pid                  INTEGER NOT NULL,
  ppid                 INTEGER,
  host                 TEXT,
  rank                 INTEGER,
  local_rank           INTEGER,
  world_size           INTEGER,
  cuda_visible_devices TEXT,
  command_line         TEXT,
  start_ns             INTEGER,
  end_ns               INTEGER,
  exit_status          INTEGER
);

-- Every GPU seen by any process, identified across processes by uuid.
CREATE TABLE device (
  id          INTEGER PRIMARY KEY,
  idx         INTEGER NOT NULL,
  uuid        TEXT UNIQUE,
  name        TEXT,
  total_bytes INTEGER
);

-- Allocators that hand out memory inside what they reserve.
CREATE TABLE allocator (
  id         INTEGER PRIMARY KEY,
  device_id  INTEGER NOT NULL REFERENCES device(id),
  process_id INTEGER REFERENCES process(id),
  kind       TEXT NOT NULL CHECK (kind IN ('pytorch', 'pool', 'nvtx', 'cupy', 'xla')),
  name       TEXT NOT NULL,
  handle     INTEGER,
  settings   TEXT
);

-- Loaded modules of a process, for symbolization.
CREATE TABLE module (
  id           INTEGER PRIMARY KEY,
  process_id   INTEGER REFERENCES process(id),
  path         TEXT NOT NULL,
  build_id     TEXT,
  load_address INTEGER,
  size         INTEGER
);

-- Frames, deduplicated.  A native frame has module_id and address (and
-- function/file/line once symbolized); a Python frame has file, line and
-- function; a label frame only function (e.g. 'backward pass').
CREATE TABLE frame (
  id        INTEGER PRIMARY KEY,
  kind      INTEGER NOT NULL REFERENCES frame_kind(id),
  module_id INTEGER REFERENCES module(id),
  address   INTEGER,
  function  TEXT,
  file      TEXT,
  line      INTEGER
);

-- Stacks as a trie: a node is (parent, frame); the root's parent is 0.
-- Walking parent links from a stack id gives the frames innermost first.
CREATE TABLE stack (
  id        INTEGER PRIMARY KEY,
  parent_id INTEGER NOT NULL,
  frame_id  INTEGER NOT NULL REFERENCES frame(id),
  UNIQUE (parent_id, frame_id)
);

-- NVTX ranges (push/pop and start/end), per thread.
CREATE TABLE nvtx_range (
  id         INTEGER PRIMARY KEY,
  process_id INTEGER REFERENCES process(id),
  tid        INTEGER,
  domain     TEXT,
  name       TEXT NOT NULL,
  start_ns   INTEGER NOT NULL,
  end_ns     INTEGER,
  parent_id  INTEGER,
  depth      INTEGER NOT NULL DEFAULT 0
);

-- Device-level memory events: what a process takes from and returns to CUDA.
CREATE TABLE mem_event (
  id            INTEGER PRIMARY KEY,
  ts            INTEGER NOT NULL,
  process_id    INTEGER NOT NULL REFERENCES process(id),
  tid           INTEGER,
  device_id     INTEGER REFERENCES device(id),
  context       INTEGER,
  stream        INTEGER,
  kind          INTEGER NOT NULL REFERENCES mem_kind(id),
  op            INTEGER NOT NULL REFERENCES mem_op(id),
  address       INTEGER NOT NULL,
  bytes         INTEGER NOT NULL,
  pool_id       INTEGER REFERENCES allocator(id),
  pool_size     INTEGER,
  pool_utilized INTEGER,
  correlation   INTEGER,
  stack_id      INTEGER,
  range_id      INTEGER
);

-- Stream-ordered pool life and size changes.
CREATE TABLE pool_event (
  id                INTEGER PRIMARY KEY,
  ts                INTEGER NOT NULL,
  process_id        INTEGER NOT NULL REFERENCES process(id),
  device_id         INTEGER REFERENCES device(id),
  pool_id           INTEGER NOT NULL REFERENCES allocator(id),
  op                INTEGER NOT NULL REFERENCES pool_op(id),
  size              INTEGER,
  utilized          INTEGER,
  release_threshold INTEGER,
  min_bytes_to_keep INTEGER,
  correlation       INTEGER,
  stack_id          INTEGER
);

-- Allocator-level events: blocks handed out inside reserved memory, and the
-- allocator's segments (its reserved memory).
CREATE TABLE alloc_event (
  id              INTEGER PRIMARY KEY,
  ts              INTEGER NOT NULL,
  process_id      INTEGER NOT NULL REFERENCES process(id),
  tid             INTEGER,
  device_id       INTEGER NOT NULL REFERENCES device(id),
  allocator_id    INTEGER NOT NULL REFERENCES allocator(id),
  op              INTEGER NOT NULL REFERENCES alloc_op(id),
  address         INTEGER NOT NULL,
  requested_bytes INTEGER,
  block_bytes     INTEGER,
  segment_address INTEGER,
  stream          INTEGER,
  stack_id        INTEGER,
  range_id        INTEGER,
  before_trace    INTEGER
);

-- Allocation requests that failed.  allocator_id NULL: a device-level API.
CREATE TABLE failed_alloc (
  id                 INTEGER PRIMARY KEY,
  ts                 INTEGER NOT NULL,
  process_id         INTEGER NOT NULL REFERENCES process(id),
  tid                INTEGER,
  device_id          INTEGER REFERENCES device(id),
  allocator_id       INTEGER REFERENCES allocator(id),
  api                TEXT NOT NULL,
  requested_bytes    INTEGER NOT NULL,
  error              INTEGER,
  error_name         TEXT,
  device_free_bytes  INTEGER,
  device_total_bytes INTEGER,
  correlation        INTEGER,
  stack_id           INTEGER,
  range_id           INTEGER
);

-- Kernels.  A program launches the same few kernels with the same few
-- configurations over and over: each distinct name and configuration is
-- stored once in kernel_config, each execution in kernel_exec (clustered
-- on its start: no index of its own), and the view kernel joins them back
-- into one row per execution.
CREATE TABLE kernel_config (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  static_shared  INTEGER,
  dynamic_shared INTEGER,
  registers      INTEGER
);

CREATE TABLE kernel_exec (
  start_ns    INTEGER NOT NULL,
  id          INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  process_id  INTEGER NOT NULL REFERENCES process(id),
  device_id   INTEGER REFERENCES device(id),
  context     INTEGER,
  stream      INTEGER,
  correlation INTEGER,
  config_id   INTEGER NOT NULL REFERENCES kernel_config(id),
  PRIMARY KEY (start_ns, id)
) WITHOUT ROWID;

CREATE VIEW kernel AS
  SELECT e.id, e.start_ns, e.start_ns + e.duration_ns AS end_ns, e.process_id,
         e.device_id, e.context, e.stream, e.correlation, c.name,
         c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,
         c.static_shared, c.dynamic_shared, c.registers
  FROM kernel_exec e LEFT JOIN kernel_config c ON c.id = e.config_id;

CREATE TABLE memcpy (
  id          INTEGER PRIMARY KEY,
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  process_id  INTEGER NOT NULL REFERENCES process(id),
  device_id   INTEGER REFERENCES device(id),
  stream      INTEGER,
  correlation INTEGER,
  copy_kind   TEXT,
  src_kind    TEXT,
  dst_kind    TEXT,
  bytes       INTEGER NOT NULL
);

CREATE TABLE memset (
  id          INTEGER PRIMARY KEY,
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  process_id  INTEGER NOT NULL REFERENCES process(id),
  device_id   INTEGER REFERENCES device(id),
  stream      INTEGER,
  correlation INTEGER,
  bytes       INTEGER NOT NULL,
  value       INTEGER,
  mem_kind    INTEGER REFERENCES mem_kind(id)
);

-- A windowed recording (`record --window`): where the trace holds every
-- event, and what it keeps of the rest.  Empty in a complete trace.
-- Full detail on a device holds inside its detail intervals; outside them,
-- allocations freed before the window were dropped, and the finalizer draws
-- the series from window_slice instead of its running sums there.
CREATE TABLE detail_interval (
  device_id INTEGER NOT NULL REFERENCES device(id),
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER NOT NULL,
  why       TEXT NOT NULL,          -- window, peak, failure (joined by ',')
  PRIMARY KEY (device_id, start_ns)
) WITHOUT ROWID;

-- The whole run in fixed time slices [start_ns, end_ns), per device and
-- allocator (0 = all), as the complete trace's series and blocks give them:
-- highest, lowest and last state in the slice (the state entering it
-- included), allocations and frees, failed requests.
CREATE TABLE window_slice (
  device_id             INTEGER NOT NULL,
  allocator_id          INTEGER NOT NULL,
  start_ns              INTEGER NOT NULL,
  end_ns                INTEGER NOT NULL,
  peak_reserved_bytes   INTEGER NOT NULL,
  peak_allocated_bytes  INTEGER NOT NULL,
  peak_device_bytes     INTEGER,
  min_reserved_bytes    INTEGER NOT NULL,
  min_allocated_bytes   INTEGER NOT NULL,
  final_reserved_bytes  INTEGER NOT NULL,
  final_allocated_bytes INTEGER NOT NULL,
  alloc_count           INTEGER NOT NULL,
  alloc_bytes           INTEGER NOT NULL,
  free_count            INTEGER NOT NULL,
  free_bytes            INTEGER NOT NULL,
  failed_alloc_count    INTEGER NOT NULL,
  PRIMARY KEY (device_id, allocator_id, start_ns)
) WITHOUT ROWID;

-- Growth per allocation site and slice: bytes allocated in the slice by
-- the site minus bytes freed in it of blocks the site allocated (rows with
-- a net change only).  Summed over slices: the site's bytes still live.
CREATE TABLE window_site (
  device_id    INTEGER NOT NULL,
  allocator_id INTEGER NOT NULL,
  start_ns     INTEGER NOT NULL,
  stack_id     INTEGER NOT NULL,
  net_bytes    INTEGER NOT NULL,
  net_count    INTEGER NOT NULL,
  PRIMARY KEY (device_id, allocator_id, start_ns, stack_id)
) WITHOUT ROWID;

-- The whole run's counts per device and allocator: the finalizer puts them
-- in summary, whose own count covers only the blocks kept.
CREATE TABLE window_count (
  device_id          INTEGER NOT NULL,
  allocator_id       INTEGER NOT NULL,
  alloc_count        INTEGER NOT NULL,
  free_count         INTEGER NOT NULL,
  failed_alloc_count INTEGER NOT NULL,
  PRIMARY KEY (device_id, allocator_id)
) WITHOUT ROWID;

-- ---------------------------------------------------------------- derived --
-- Written by vs_trace_finalize(); readers never need the raw tables above
-- for memory accounting.  'seq' is the position of an event in the single
-- replay order (ts, then event order) shared by block, series and summary.

-- Every allocation paired with its release.  level 1: device-level
-- (mem_event), level 2: allocator-level block, level 3: allocator segment.
CREATE TABLE block (
  id             INTEGER PRIMARY KEY,
  level          INTEGER NOT NULL,
  device_id      INTEGER,
  allocator_id   INTEGER,
  process_id     INTEGER,
  kind           INTEGER NOT NULL,
  address        INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  block_bytes    INTEGER,
  alloc_seq      INTEGER,
  free_seq       INTEGER,
  alloc_ts       INTEGER,
  free_ts        INTEGER,
  alloc_event_id INTEGER,
  free_event_id  INTEGER,
  stack_id       INTEGER,
  free_stack_id  INTEGER,
  range_id       INTEGER,
  owner_id       INTEGER,
  span_bin       INTEGER NOT NULL
);

-- Step series of memory per device and allocator (allocator_id 0 = all).
-- seq grows with ts, so the key orders rows by time and by seq alike.
CREATE TABLE series (
  seq             INTEGER NOT NULL,
  device_id       INTEGER NOT NULL,
  allocator_id    INTEGER NOT NULL,
  ts              INTEGER NOT NULL,
  reserved_bytes  INTEGER NOT NULL,
  allocated_bytes INTEGER NOT NULL,
  device_bytes    INTEGER,
  static_bytes    INTEGER,
  pinned_bytes    INTEGER,
  managed_bytes   INTEGER,
  PRIMARY KEY (device_id, allocator_id, ts, seq)
) WITHOUT ROWID;

-- Summary levels of series for fast zoomed-out timelines.  At level L a
-- bucket covers 2^shift ns of time, bucket = (ts - meta start_ns) >> shift.
CREATE TABLE series_level (
  shift         INTEGER NOT NULL,
  device_id     INTEGER NOT NULL,
  allocator_id  INTEGER NOT NULL,
  bucket        INTEGER NOT NULL,
  min_reserved  INTEGER NOT NULL,
  max_reserved  INTEGER NOT NULL,
  last_reserved INTEGER NOT NULL,
  min_allocated INTEGER NOT NULL,
  max_allocated INTEGER NOT NULL,
  last_allocated INTEGER NOT NULL,
  max_device    INTEGER,
  PRIMARY KEY (device_id, allocator_id, shift, bucket)
) WITHOUT ROWID;

-- One row per device and allocator (allocator_id 0 = all).
CREATE TABLE summary (
  device_id              INTEGER NOT NULL,
  allocator_id           INTEGER NOT NULL,
  peak_reserved_bytes    INTEGER NOT NULL,
  peak_reserved_ts       INTEGER,
  peak_reserved_seq      INTEGER,
  peak_allocated_bytes   INTEGER NOT NULL,
  peak_allocated_ts      INTEGER,
  peak_allocated_seq     INTEGER,
  final_reserved_bytes   INTEGER NOT NULL,
  final_allocated_bytes  INTEGER NOT NULL,
  alloc_count            INTEGER NOT NULL,
  free_count             INTEGER NOT NULL,
  failed_alloc_count     INTEGER NOT NULL,
  peak_device_bytes      INTEGER,
  peak_device_ts         INTEGER,
  static_bytes           INTEGER,
  peak_pinned_bytes      INTEGER,
  peak_managed_bytes     INTEGER,
  series_allocator_id    INTEGER NOT NULL,
  before_trace_bytes     INTEGER,
  before_trace_count     INTEGER,
  PRIMARY KEY (device_id, allocator_id)
) WITHOUT ROWID;
