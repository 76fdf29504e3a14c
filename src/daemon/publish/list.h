/*
 * list.h - every sink, one row each (no include guard: expanded with a
 * different SINK() each time, see sink.c).  The order is the publish order
 * and the order of the self-metrics; a sink that shows the self-metrics
 * (Prometheus) comes after those whose statistics it shows.
 */
SINK(jsonlog)
SINK(history)
SINK(otlp)
SINK(prometheus)
