/* SPDX-License-Identifier: MIT */
/* vs-analyzer.h — libvramscope: everything a reader of traces needs.
 *
 * Include this one header.  See vs-trace.h for threading and time rules.
 */
#pragma once

#include "vs-trace.h"
#include "vs-summary.h"
#include "vs-stack.h"
#include "vs-timeline.h"
#include "vs-blocks.h"
#include "vs-block-bands.h"
#include "vs-tree.h"
#include "vs-fragmentation.h"
#include "vs-alloc-steps.h"
#include "vs-oom.h"
#include "vs-oom-explain.h"
#include "vs-roles.h"
#include "vs-growth.h"
#include "vs-pool-growth.h"
#include "vs-windowed.h"
#include "vs-settings.h"
#include "vs-diagnose.h"
#include "vs-diff.h"
#include "vs-compare.h"
#include "vs-ranks.h"
#include "vs-activity.h"
#include "vs-table.h"
#include "vs-report.h"
#include "vs-alloc-conf.h"
#include "vs-whatif.h"
#include "vs-whatif-line.h"
#include "vs-predict.h"
#include "vs-predict-line.h"
#include "vs-spool.h"
