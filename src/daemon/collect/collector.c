/* collector.c - the collector table, built from collect/list.h. */
#include "collector.h"

#define COLLECTOR(n) extern const struct collector collector_##n;
#include "daemon/collect/list.h"
#undef COLLECTOR

const struct collector *const collectors[] = {
#define COLLECTOR(n) &collector_##n,
#include "daemon/collect/list.h"
#undef COLLECTOR
};
const size_t ncollectors = sizeof collectors / sizeof collectors[0];
