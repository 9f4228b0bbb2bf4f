/* SPDX-License-Identifier: MIT */
/* vs-rc-box.h — the boxed type and the reference counting of a struct
 * allocated with g_atomic_rc_box_new0() (the viewer's immutable query
 * results, shared between threads by reference).  Header only.
 */
#pragma once

#include <glib-object.h>

/* Defines TypeName's boxed GType (type_name_get_type()) and
 * type_name_ref() / type_name_unref() (declared in TypeName's header):
 * the last unref calls clear, a GDestroyNotify, on the contents and frees
 * the box.  Use after clear is declared. */
#define VS_DEFINE_RC_BOX_TYPE(TypeName, type_name, clear)                                          \
  G_DEFINE_BOXED_TYPE (TypeName, type_name, type_name##_ref, type_name##_unref)                    \
                                                                                                   \
  TypeName *type_name##_ref (TypeName *box) { return g_atomic_rc_box_acquire (box); }              \
                                                                                                   \
  void type_name##_unref (TypeName *box) { g_atomic_rc_box_release_full (box, clear); }
