/* sink.c - the sink table, built from publish/list.h. */
#include "sink.h"

#define SINK(n) extern const struct sink sink_##n;
#include "daemon/publish/list.h"
#undef SINK

const struct sink *const sinks[] = {
#define SINK(n) &sink_##n,
#include "daemon/publish/list.h"
#undef SINK
};
const size_t nsinks = sizeof sinks / sizeof sinks[0];
