/* jsonlog.c - see jsonlog.h. */
#include "jsonlog.h"

#include <math.h>
#include <stdio.h>

#include "core/clock.h"
#include "core/json.h"

void jsonlog_render(struct frame *f, enum jsonlog_mode mode, struct buf *out)
{
	char ts[40];
	clock_fmt_iso8601(ts, sizeof ts, f->wall_ns);
	frame_sort(f);
	struct jw w;
	jw_init(&w, out);
	if (mode == JSONLOG_UPSTREAM) {
		buf_printf(out, "time = %s data = ", ts);
	} else {
		jw_obj_begin(&w);
		jw_key(&w, "time");
		jw_str(&w, ts);
		jw_key(&w, "data");
	}
	jw_obj_begin(&w);
	for (size_t i = 0; i < f->n; i++) {
		const struct frame_value *v = &f->vals[i];
		jw_key(&w, frame_key(f, v));
		switch (v->type) {
		case FV_INT: jw_i64(&w, v->v.i); break;
		case FV_UINT: jw_u64(&w, v->v.u); break;
		case FV_STRING: jw_str(&w, f->names.data + v->sval); break;
		case FV_FLOAT:
			if (mode == JSONLOG_UPSTREAM) {
				char t[64];
				if (isnan(v->v.f))
					snprintf(t, sizeof t, "nan");
				else
					snprintf(t, sizeof t, "%.3f", v->v.f);
				jw_str(&w, t);
			} else {
				jw_f64(&w, v->v.f);
			}
			break;
		}
	}
	jw_obj_end(&w);
	if (mode == JSONLOG_JSONL)
		jw_obj_end(&w);
	buf_putc(out, '\n');
}
