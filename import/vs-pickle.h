/* SPDX-License-Identifier: MIT */
/* vs-pickle.h — a restricted reader for Python pickles made for hostile input.
 *
 * Reads pickle protocols 2 to 5 and builds plain data only: dict, list,
 * tuple, str, bytes, int (up to 64 bits), float, bool and None.  Opcodes that
 * would make Python import a name or call anything (GLOBAL, STACK_GLOBAL,
 * REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4)
 * are refused with an error naming the opcode and its offset; nothing is
 * ever executed.  Every length and count is checked against the bytes left,
 * memory is bounded by a multiple of the input size, and neither parsing nor
 * freeing recurses, so deep nesting cannot overflow the C stack.
 *
 * The parsed value graph lives in a few flat arrays owned by VsPickle.
 * Values are addressed by VsPickleRef handles; strings and bytes point into
 * the input buffer, which must outlive the VsPickle (vs_pickle_load_file
 * keeps its own mapping).  Containers may be shared (pickle memo references)
 * and may even contain themselves: walk them with a depth limit.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define VS_PICKLE_ERROR (vs_pickle_error_quark ())
GQuark vs_pickle_error_quark (void);

typedef enum
{
  VS_PICKLE_ERROR_MALFORMED, /* not a pickle, truncated or inconsistent */
  VS_PICKLE_ERROR_REFUSED,   /* an opcode that would execute code */
  VS_PICKLE_ERROR_LIMIT,     /* beyond what the reader accepts */
  VS_PICKLE_ERROR_CANCELLED,
  VS_PICKLE_ERROR_IO,
} VsPickleError;

typedef enum
{
  VS_PICKLE_NONE,
  VS_PICKLE_BOOL,
  VS_PICKLE_INT,
  VS_PICKLE_FLOAT,
  VS_PICKLE_STR,
  VS_PICKLE_BYTES,
  VS_PICKLE_LIST,
  VS_PICKLE_TUPLE,
  VS_PICKLE_DICT,
  VS_PICKLE_TOKEN,  /* a value an append hook took, replaced by its number */
  VS_PICKLE_UINT64, /* an int in [2^63, 2^64): see vs_pickle_get_uint64 */
} VsPickleType;

typedef struct VsPickle VsPickle;

/* A value handle, valid while its VsPickle lives. */
typedef guint32 VsPickleRef;

/* Returned by lookups that find nothing; its type is VS_PICKLE_NONE. */
#define VS_PICKLE_MISSING ((VsPickleRef)0x7fffffffu)

/* Called every few MiB of input; return FALSE to cancel the parse. */
typedef gboolean (*VsPickleProgress) (guint64 done, guint64 total, gpointer data);

/* Maps the file at path and parses it; the mapping lives as long as the
 * result.  Errors as vs_pickle_parse_full, or VS_PICKLE_ERROR_IO. */
VsPickle *vs_pickle_load_file (const char *path, VsPickleProgress progress, gpointer progress_data,
                               GError **error);

typedef enum
{
  VS_PICKLE_APPEND_KEEP,  /* store the items in the list as usual */
  VS_PICKLE_APPEND_TAKEN, /* the hook took them: store nothing */
  VS_PICKLE_APPEND_ERROR, /* stop parsing; the hook set error */
} VsPickleAppend;

/* Called while parsing when APPEND or APPENDS adds items[0..n) to list.
 * A hook that takes the items (a consumer streaming a long list) reads them
 * with the functions below; it may give each container among them a token
 * (vs_pickle_set_token) so that a later memo reference to it reads as that
 * number.  Once taken, the items and everything built only for them are
 * freed, so the hook must not keep their handles.  The list keeps no item
 * and vs_pickle_list_taken() becomes TRUE for it. */
typedef VsPickleAppend (*VsPickleAppendHook) (VsPickle *p, VsPickleRef list,
                                              const VsPickleRef *items, gsize n, gpointer data,
                                              GError **error);

/* vs_pickle_load_file with an append hook (NULL for none).  Memory then
 * stays near what the hook keeps instead of the whole value graph. */
VsPickle *vs_pickle_load_file_full (const char *path, VsPickleProgress progress,
                                    gpointer progress_data, VsPickleAppendHook hook,
                                    gpointer hook_data, GError **error);

/* Largest value a token can hold. */
#define VS_PICKLE_TOKEN_MAX 0x3fffffefu

/* From an append hook only: makes memo references to container v, which
 * must be among (or inside) the items being taken, read as a token holding
 * value (<= VS_PICKLE_TOKEN_MAX).  Returns FALSE, doing nothing, when v is
 * not such a container or value is too large. */
gboolean vs_pickle_set_token (VsPickle *p, VsPickleRef v, guint32 value);

/* vs_pickle_set_token, and more: a dict or list built later whose items
 * are, handle for handle, v's items, all of them stable
 * (vs_pickle_stable), reads as the same token instead of as a new
 * container, as if the pickle had referred to v through its memo.  For
 * tokens that stand for a value's content (a stack frame, a stack), so that
 * repeats of it are recognised while parsing, without building them. */
gboolean vs_pickle_set_token_shared (VsPickle *p, VsPickleRef v, guint32 value);

/* TRUE and *value set when v is a token. */
gboolean vs_pickle_get_token (const VsPickle *p, VsPickleRef v, guint32 *value);

/* TRUE when an append hook took items of list v. */
gboolean vs_pickle_list_taken (const VsPickle *p, VsPickleRef v);

/* Frees p and everything it owns (flat arrays: no recursion).  NULL-safe. */
void vs_pickle_free (VsPickle *p);

/* The top-level value. */
VsPickleRef vs_pickle_root (const VsPickle *p);

VsPickleType vs_pickle_type (const VsPickle *p, VsPickleRef v);

/* TRUE and *out set when v is an int or a bool that fits 64 signed bits
 * (FALSE for a VS_PICKLE_UINT64). */
gboolean vs_pickle_get_int (const VsPickle *p, VsPickleRef v, gint64 *out);

/* TRUE and *out set when v is an int in [0, 2^64) or a bool: PyTorch
 * writes unsigned 64-bit values (SIZE_MAX for "no limit"). */
gboolean vs_pickle_get_uint64 (const VsPickle *p, VsPickleRef v, guint64 *out);

/* TRUE and *out set when v is a float or an int. */
gboolean vs_pickle_get_double (const VsPickle *p, VsPickleRef v, double *out);

/* The bytes of a str (UTF-8 as pickled, not validated, not NUL-terminated)
 * or bytes value, or NULL for any other type. */
const char *vs_pickle_get_str (const VsPickle *p, VsPickleRef v, gsize *len);

/* TRUE when v is a str equal to s. */
gboolean vs_pickle_str_equal (const VsPickle *p, VsPickleRef v, const char *s);

/* Number of items of a list or tuple, of pairs of a dict; 0 otherwise. */
gsize vs_pickle_len (const VsPickle *p, VsPickleRef v);

/* For dicts: the value of the last pair whose key is the str key, or
 * VS_PICKLE_MISSING. */
VsPickleRef vs_pickle_dict_get (const VsPickle *p, VsPickleRef dict, const char *key);

/* Iteration over a list, tuple (items) or dict (key, value pairs).  The
 * iterator holds no memory; any other type iterates over nothing. */
typedef struct
{
  const VsPickle *p;
  guint32 chunk, pos, left, remaining;
} VsPickleIter;

void vs_pickle_iter_init (VsPickleIter *it, const VsPickle *p, VsPickleRef v);
gboolean vs_pickle_iter_next (VsPickleIter *it, VsPickleRef *item);
gboolean vs_pickle_iter_next_pair (VsPickleIter *it, VsPickleRef *key, VsPickleRef *value);

/* A dict value fetched by vs_pickle_dict_fetch, decoded in the same call:
 * ref is VS_PICKLE_MISSING (type VS_PICKLE_NONE) when the key is absent;
 * i is set for ints and bools (for a VS_PICKLE_UINT64, its bits), s and
 * len for str and bytes. */
typedef struct
{
  VsPickleRef ref;
  VsPickleType type;
  guint32 len;
  gint64 i;
  const char *s;
} VsPickleValue;

#define VS_PICKLE_KEYS_MAX 8

/* A set of str keys to fetch from many dicts of one VsPickle, with a cache
 * of the addresses (in the input) of strs already found equal or unequal to
 * them, so that a key written once and referenced through the memo is
 * matched by address instead of by its bytes.  Set up with
 * vs_pickle_keys_init; the fields are private.  The cache is emptied when
 * keys is used with another VsPickle than the last. */
typedef struct
{
  guint serial; /* of the VsPickle the cache is for */
  gsize n;
  const char *names[VS_PICKLE_KEYS_MAX];
  guint32 lens[VS_PICKLE_KEYS_MAX];
  const char *seen[VS_PICKLE_KEYS_MAX];
  const char *other[VS_PICKLE_KEYS_MAX];
  guint32 other_len[VS_PICKLE_KEYS_MAX];
  guint next_other;
  guint guess; /* the key expected next: dicts repeat their key order */
} VsPickleKeys;

/* Sets up keys for names[0..n), n <= VS_PICKLE_KEYS_MAX; the strings must
 * outlive keys. */
void vs_pickle_keys_init (VsPickleKeys *keys, const char *const *names, gsize n);

/* For a dict: fills values[i] with the value of the last pair whose key is
 * the str names[i] of keys (as vs_pickle_dict_get would, for every key in
 * one pass) and returns TRUE.  For anything else returns FALSE, values[]
 * all missing. */
gboolean vs_pickle_dict_fetch (const VsPickle *p, VsPickleRef dict, VsPickleKeys *keys,
                               VsPickleValue *values);

/* For a list or tuple whose items form one run, the items; for such a
 * dict, its keys and values alternating.  Valid until the reader next
 * changes the graph (the next parse step or hook call); *n the number of
 * handles.  NULL for other types and for containers built in several runs
 * (use an iterator). */
const VsPickleRef *vs_pickle_items (const VsPickle *p, VsPickleRef v, gsize *n);

/* TRUE when each of the handles v[0..n) denotes the same value for the
 * rest of p's life, so
 * that a consumer may remember what it read by the handle alone: handles
 * of values built before the last taken append (an append hook may free
 * and reuse newer ones), ints, None, bools, tokens, and every handle once
 * parsing has ended.  A container's items may still grow. */
gboolean vs_pickle_stable (const VsPickle *p, const VsPickleRef *v, gsize n);

/* Parses the pickle in data[0..len), calling hook (NULL for none) as
 * vs_pickle_load_file_full does.  data must stay valid and unchanged for
 * the life of the result.  Returns NULL with error set on malformed or
 * refused input, on exceeding the memory bound, or when cancelled. */
VsPickle *vs_pickle_parse_full (const guint8 *data, gsize len, VsPickleProgress progress,
                                gpointer progress_data, VsPickleAppendHook hook, gpointer hook_data,
                                GError **error);

/* The name of a pickle opcode byte, or NULL when it is not one. */
const char *vs_pickle_opcode_name (guint8 op);

G_END_DECLS
