/*
 * test_catalog.c - the metric catalog's walk over a frame (catalog_rows),
 * which both the Prometheus and the OTLP sink render from: which values
 * each sink exports, under what name, with which label and scaled value,
 * in which order.
 */
#include <math.h>
#include <string.h>

#include "daemon/publish/catalog.h"
#include "test.h"

static const struct catalog_row *find(const struct catalog_rows *r, const char *name, const char *label)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->row[i].name, name) == 0 &&
		    (label ? r->row[i].label && strcmp(r->row[i].label, label) == 0 : !r->row[i].label))
			return &r->row[i];
	return NULL;
}

static void fill(struct frame *f)
{
	frame_reset(f, 0);
	frame_int(f, "cpu_u_ms.cpu3", 1500);    /* 0: counter, ms -> s, "cpu" stripped */
	frame_float(f, "gpu_power.0", 250.5);    /* 1: uncatalogued */
	frame_int(f, "cpu_u_ms", 99);            /* 2: aggregate: neither sink */
	frame_uint(f, "rx_bytes.eth0", 100);     /* 3 */
	frame_str(f, "proc_job_id.12", "77");    /* 4: strings: never rows */
	frame_float(f, "build_info", 3);         /* 5: Prometheus name would clash */
	frame_uint(f, "rx_bytes.lo", 5);         /* 6: same family as 3, after it */
	frame_float(f, "9x-y.a.b", 1);           /* 7: sanitized for Prometheus only */
	frame_float(f, "cpu_util", NAN);         /* 8: NaN kept: the sink decides */
	/* the kernel's totals: Prometheus only (node_exporter's names) */
	frame_float(f, "@cpu_user_s.cpu3", 1.5); /* 9 */
	frame_uint(f, "@rx_bytes.eth0", 100);    /* 10 */
	frame_uint(f, "@rx_bytes.lo", 5);        /* 11 */
}

TEST(catalog_rows_prometheus)
{
	struct frame f;
	frame_init(&f);
	fill(&f);
	struct catalog_rows r;
	catalog_rows(&f, CATALOG_PROM, &r);
	CHECK_INT(r.n, 6);
	const struct catalog_row *c = find(&r, "node_cpu_seconds_total", "3");
	REQUIRE(c);
	CHECK_STR(c->suffix, "cpu3");
	CHECK(c->d && c->d->kind == MK_TOTAL && c->value == 1.5 && c->idx == 9);
	c = find(&r, "dynolog_gpu_power", "0");
	REQUIRE(c);
	CHECK(!c->d && c->value == 250.5);
	c = find(&r, "dynolog__x_y", "a.b"); /* first character may not be a digit */
	CHECK(c && !c->d);
	c = find(&r, "dynolog_cpu_utilization_ratio", NULL);
	CHECK(c && isnan(c->value));
	CHECK(find(&r, "dynolog_build_info", NULL) == NULL);
	/* sorted by name; frame order within a name */
	for (size_t i = 1; i < r.n; i++) {
		int cmp = strcmp(r.row[i - 1].name, r.row[i].name);
		CHECK(cmp < 0 || (cmp == 0 && r.row[i - 1].idx < r.row[i].idx));
	}
	c = find(&r, "node_network_receive_bytes_total", "eth0");
	CHECK(c && c->idx == 10 && c + 1 < r.row + r.n && strcmp(c[1].label, "lo") == 0);
	catalog_rows_free(&r);
	frame_free(&f);
}

/* scaled values are the doubles nearest the decimal result, so the sinks
 * print "3.53", not "3.5300000000000002" (3530 * 0.001) */
TEST(catalog_rows_scale_exact)
{
	struct frame f;
	frame_init(&f);
	frame_reset(&f, 0);
	frame_uint(&f, "@disk_read_ms.sda", 3530);
	struct catalog_rows r;
	catalog_rows(&f, CATALOG_PROM, &r);
	const struct catalog_row *c = find(&r, "node_disk_read_time_seconds_total", "sda");
	REQUIRE(c);
	CHECK(c->value == 3.53);
	catalog_rows_free(&r);
	frame_free(&f);
}

TEST(catalog_rows_otlp)
{
	struct frame f;
	frame_init(&f);
	fill(&f);
	struct catalog_rows r;
	catalog_rows(&f, CATALOG_OTLP, &r);
	CHECK_INT(r.n, 7);
	const struct catalog_row *c = find(&r, "system.cpu.time", "3");
	CHECK(c && c->value == 1.5);
	CHECK(find(&r, "dynolog.gpu_power", "0") != NULL);
	CHECK(find(&r, "dynolog.build_info", NULL) != NULL); /* no clash rule in OTLP */
	CHECK(find(&r, "dynolog.9x-y", "a.b") != NULL);     /* names are not sanitized */
	CHECK(find(&r, "system.network.io", "eth0") && find(&r, "system.network.io", "lo"));
	catalog_rows_free(&r);

	frame_reset(&f, 0); /* an empty frame: no rows, nothing to free but the rows */
	catalog_rows(&f, CATALOG_OTLP, &r);
	CHECK_INT(r.n, 0);
	catalog_rows_free(&r);
	frame_free(&f);
}
