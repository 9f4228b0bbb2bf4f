// snapshot-viz.mjs — reads a PyTorch memory snapshot pickle the way a
// browser viewer such as memory_viz does, in JavaScript, and prints what
// its memory timeline shows per device as JSON.
//
// The pickle is decoded by a small unpickler written from the pickle
// format's documented opcodes (Python's pickletools): only the opcodes
// that plain dicts, lists, tuples, strings, numbers, booleans and None
// need, and the memo; any other opcode is an error, so a snapshot that
// relies on anything else fails here.  Then, per device, the allocations
// live before the history are found by replaying device_traces backwards
// from the blocks active in `segments`, and the history is replayed
// forwards: allocated bytes rise at `alloc` and fall at `free_completed`,
// reserved bytes follow segment_alloc/map and segment_free/unmap.
//
// Usage: node snapshot-viz.mjs SNAPSHOT.pickle
// Prints {"DEVICE": {"peak_allocated_bytes": …, "peak_reserved_bytes": …,
//   "final_allocated_bytes": …, "final_reserved_bytes": …, "alloc_count": …,
//   "failed_alloc_count": …}, …}; exits 1 with one line on a bad pickle.
import { readFileSync } from "node:fs";

function unpickle(buf) {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const stack = [];
  const marks = [];
  const memo = new Map();
  let pos = 0;
  const need = (n) => {
    if (pos + n > buf.length) throw new Error("truncated pickle at byte " + pos);
  };
  const u8 = () => (need(1), buf[pos++]);
  const u16 = () => (need(2), (pos += 2), view.getUint16(pos - 2, true));
  const u32 = () => (need(4), (pos += 4), view.getUint32(pos - 4, true));
  const i32 = () => (need(4), (pos += 4), view.getInt32(pos - 4, true));
  const u64 = () => {
    need(8);
    const v = view.getBigUint64(pos, true);
    pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error("length too large");
    return Number(v);
  };
  const str = (n) => {
    need(n);
    const s = utf8.decode(buf.subarray(pos, pos + n));
    pos += n;
    return s;
  };
  const popMark = () => {
    if (marks.length === 0) throw new Error("no MARK");
    const m = marks.pop();
    return stack.splice(m);
  };
  const top = () => {
    if (stack.length === 0) throw new Error("empty stack");
    return stack[stack.length - 1];
  };
  const setItems = (d, items) => {
    if (items.length % 2) throw new Error("odd SETITEMS");
    for (let i = 0; i < items.length; i += 2) d[items[i]] = items[i + 1];
  };
  for (;;) {
    const op = u8();
    switch (op) {
      case 0x80: u8(); break;                       // PROTO
      case 0x95: u64(); break;                      // FRAME
      case 0x2e: {                                  // STOP
        if (stack.length !== 1 || marks.length) throw new Error("bad stack at STOP");
        return stack[0];
      }
      case 0x28: marks.push(stack.length); break;   // MARK
      case 0x7d: stack.push({}); break;             // EMPTY_DICT
      case 0x5d: stack.push([]); break;             // EMPTY_LIST
      case 0x29: stack.push([]); break;             // EMPTY_TUPLE
      case 0x73: { const v = stack.pop(), k = stack.pop(); top()[k] = v; break; } // SETITEM
      case 0x75: { const items = popMark(); setItems(top(), items); break; }      // SETITEMS
      case 0x61: { const v = stack.pop(); top().push(v); break; }                 // APPEND
      case 0x65: { const items = popMark(); top().push(...items); break; }        // APPENDS
      case 0x74: stack.push(popMark()); break;      // TUPLE
      case 0x85: stack.push([stack.pop()]); break;  // TUPLE1
      case 0x86: { const b = stack.pop(), a = stack.pop(); stack.push([a, b]); break; }
      case 0x87: { const c = stack.pop(), b = stack.pop(), a = stack.pop(); stack.push([a, b, c]); break; }
      case 0x4e: stack.push(null); break;           // NONE
      case 0x88: stack.push(true); break;           // NEWTRUE
      case 0x89: stack.push(false); break;          // NEWFALSE
      case 0x4a: stack.push(i32()); break;          // BININT
      case 0x4b: stack.push(u8()); break;           // BININT1
      case 0x4d: stack.push(u16()); break;          // BININT2
      case 0x8a: {                                  // LONG1
        const n = u8();
        need(n);
        let v = 0n;
        for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(buf[pos + i]);
        if (n > 0 && buf[pos + n - 1] & 0x80) v -= 1n << BigInt(8 * n);
        pos += n;
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER))
          throw new Error("integer beyond 2^53 at byte " + pos);
        stack.push(Number(v));
        break;
      }
      case 0x47: { need(8); stack.push(view.getFloat64(pos, false)); pos += 8; break; } // BINFLOAT
      case 0x58: stack.push(str(u32())); break;     // BINUNICODE
      case 0x8c: stack.push(str(u8())); break;      // SHORT_BINUNICODE
      case 0x8d: stack.push(str(u64())); break;     // BINUNICODE8
      case 0x71: memo.set(u8(), top()); break;      // BINPUT
      case 0x72: memo.set(u32(), top()); break;     // LONG_BINPUT
      case 0x94: memo.set(memo.size, top()); break; // MEMOIZE
      case 0x68:                                    // BINGET
      case 0x6a: {                                  // LONG_BINGET
        const k = op === 0x68 ? u8() : u32();
        if (!memo.has(k)) throw new Error("memo " + k + " missing");
        stack.push(memo.get(k));
        break;
      }
      default:
        throw new Error("opcode 0x" + op.toString(16) + " at byte " + (pos - 1) + " is not supported");
    }
  }
}

function timeline(snapshot) {
  const out = {};
  const devices = new Set();
  snapshot.segments.forEach((s) => devices.add(s.device ?? 0));
  snapshot.device_traces.forEach((t, d) => { if (t.length) devices.add(d); });
  for (const dev of [...devices].sort((a, b) => a - b)) {
    const trace = snapshot.device_traces[dev] ?? [];
    // The state at the end: active blocks and reserved bytes.
    const live = new Map();
    let reserved = 0;
    for (const seg of snapshot.segments) {
      if ((seg.device ?? 0) !== dev) continue;
      reserved += seg.total_size;
      for (const b of seg.blocks)
        if (b.state === "active_allocated" || b.state === "active_pending_free")
          live.set(b.address, b.requested_size);
    }
    // Backwards to the state before the first entry.
    for (let i = trace.length - 1; i >= 0; i--) {
      const e = trace[i];
      if (e.action === "alloc") live.delete(e.addr);
      else if (e.action === "free_completed") live.set(e.addr, e.size);
      else if (e.action === "segment_alloc" || e.action === "segment_map") reserved -= e.size;
      else if (e.action === "segment_free" || e.action === "segment_unmap") reserved += e.size;
    }
    let allocated = 0;
    for (const v of live.values()) allocated += v;
    let peakAllocated = allocated, peakReserved = reserved;
    let allocs = live.size, ooms = 0;
    for (const e of trace) {
      switch (e.action) {
        case "alloc": allocated += e.size; allocs++; break;
        case "free_completed": allocated -= e.size; break;
        case "segment_alloc": case "segment_map": reserved += e.size; break;
        case "segment_free": case "segment_unmap": reserved -= e.size; break;
        case "oom": ooms++; break;
      }
      peakAllocated = Math.max(peakAllocated, allocated);
      peakReserved = Math.max(peakReserved, reserved);
    }
    out[dev] = {
      peak_allocated_bytes: peakAllocated,
      peak_reserved_bytes: peakReserved,
      final_allocated_bytes: allocated,
      final_reserved_bytes: reserved,
      alloc_count: allocs,
      failed_alloc_count: ooms,
    };
  }
  return out;
}

try {
  const snapshot = unpickle(readFileSync(process.argv[2]));
  if (!snapshot || !Array.isArray(snapshot.segments) || !Array.isArray(snapshot.device_traces))
    throw new Error("not a memory snapshot (no segments and device_traces lists)");
  console.log(JSON.stringify(timeline(snapshot)));
} catch (e) {
  console.error("snapshot-viz: " + process.argv[2] + ": " + e.message);
  process.exit(1);
}
