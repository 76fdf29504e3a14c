/*
 * par.h - compat: removed once analyze/ is merged.  par_for moved to
 * src/core/par.h (it is generic fork-join, not trace-specific); this file
 * only forwards for the two includers outside the trace library that are
 * being rewritten elsewhere.
 */
#ifndef DYNO_TRACE_PAR_H
#define DYNO_TRACE_PAR_H

#include "core/par.h"

#endif
