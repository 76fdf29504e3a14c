/* args.c - see args.h. */
#include "args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool name_eq(const char *a, size_t alen, const char *b)
{
	size_t i = 0;
	for (; i < alen && b[i]; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return i == alen && !b[i];
}

static const struct arg_opt *find_long(const struct arg_opt *o, const char *n, size_t len)
{
	for (; o->name; o++)
		if (name_eq(n, len, o->name))
			return o;
	return NULL;
}

static bool parse_bool(const char *v, bool *out)
{
	static const char *t[] = {"1", "true", "yes", "on"}, *f[] = {"0", "false", "no", "off"};
	for (int i = 0; i < 4; i++) {
		if (strcmp(v, t[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcmp(v, f[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

static int set_value(const struct arg_opt *o, const char *v, struct args *a)
{
	switch (o->type) {
	case ARG_BOOL:
		if (!parse_bool(v, o->ptr)) {
			buf_printf(&a->error, "--%s: '%s' is not a boolean (true/false)", o->name, v);
			return ARGS_ERROR;
		}
		break;
	case ARG_INT: {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 0);
		if (!*v || *end || errno) {
			buf_printf(&a->error, "--%s: '%s' is not an integer", o->name, v);
			return ARGS_ERROR;
		}
		if ((o->min || o->max) && (x < o->min || x > o->max)) {
			buf_printf(&a->error, "--%s: %lld is out of range [%lld, %lld]", o->name, x,
				   (long long)o->min, (long long)o->max);
			return ARGS_ERROR;
		}
		*(int64_t *)o->ptr = x;
		break;
	}
	case ARG_DOUBLE: {
		char *end;
		errno = 0;
		double x = strtod(v, &end);
		if (!*v || *end || errno) {
			buf_printf(&a->error, "--%s: '%s' is not a number", o->name, v);
			return ARGS_ERROR;
		}
		*(double *)o->ptr = x;
		break;
	}
	case ARG_STRING: *(const char **)o->ptr = v; break;
	}
	if (o->seen)
		*o->seen = true;
	return ARGS_OK;
}

static char *keep(struct args *a, char *s)
{
	a->owned = xrealloc(a->owned, sizeof(char *) * (size_t)(a->nowned + 1));
	a->owned[a->nowned++] = s;
	return s;
}

static int parse_list(const struct arg_opt *opts, int argc, char **argv, struct args *a, int depth);

static int read_flagfile(const struct arg_opt *opts, const char *path, struct args *a, int depth)
{
	if (depth > 4) {
		buf_printf(&a->error, "--flagfile nested too deeply at '%s'", path);
		return ARGS_ERROR;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		buf_printf(&a->error, "--flagfile: cannot open '%s': %s", path, strerror(errno));
		return ARGS_ERROR;
	}
	char **list = NULL;
	int n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
			line[--len] = 0;
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		list = xrealloc(list, sizeof(char *) * (size_t)(n + 1));
		list[n++] = keep(a, xstrdup(s));
	}
	free(line);
	fclose(f);
	int rc = parse_list(opts, n, list, a, depth + 1);
	free(list);
	return rc;
}

static void add_pos(struct args *a, char *s, const struct arg_opt *after_bool)
{
	a->pos = xrealloc(a->pos, sizeof(char *) * (size_t)(a->npos + 1));
	a->pos_after_bool = xrealloc(a->pos_after_bool, sizeof(char *) * (size_t)(a->npos + 1));
	a->pos_after_bool[a->npos] = after_bool ? after_bool->name : NULL;
	a->pos[a->npos++] = s;
}

static int parse_list(const struct arg_opt *opts, int argc, char **argv, struct args *a, int depth)
{
	const struct arg_opt *bool_before = NULL; /* argv[i - 1] was this boolean option, without =value */
	for (int i = 0; i < argc; i++) {
		char *s = argv[i];
		const struct arg_opt *after_bool = bool_before;
		bool_before = NULL;
		if (strcmp(s, "--") == 0) {
			for (i++; i < argc; i++)
				add_pos(a, argv[i], NULL);
			break;
		}
		if (s[0] != '-' || s[1] == 0) {
			add_pos(a, s, after_bool);
			continue;
		}
		if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)
			return ARGS_HELP;
		const struct arg_opt *o = NULL;
		const char *val = NULL;
		bool negated = false;
		if (s[1] == '-') {
			const char *n = s + 2, *eq = strchr(n, '=');
			size_t len = eq ? (size_t)(eq - n) : strlen(n);
			if (name_eq(n, len, "flagfile")) {
				const char *path = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
				if (!path) {
					buf_printf(&a->error, "--flagfile needs a file name");
					return ARGS_ERROR;
				}
				int rc = read_flagfile(opts, path, a, depth);
				if (rc != ARGS_OK)
					return rc;
				continue;
			}
			o = find_long(opts, n, len);
			if (!o && !eq) { /* --noflag / --no-flag */
				const char *m = NULL;
				if (len > 3 && strncmp(n, "no-", 3) == 0)
					m = n + 3;
				else if (len > 2 && strncmp(n, "no", 2) == 0)
					m = n + 2;
				if (m) {
					o = find_long(opts, m, strlen(m));
					if (o && o->type == ARG_BOOL)
						negated = true;
					else
						o = NULL;
				}
			}
			if (!o) {
				buf_printf(&a->error, "unknown option '--%.*s' (see --help)", (int)len, n);
				return ARGS_ERROR;
			}
			if (eq)
				val = eq + 1;
		} else {
			for (const struct arg_opt *p = opts; p->name; p++)
				if (p->short_name && p->short_name == s[1] && s[2] == 0)
					o = p;
			/* -j4: a short option's value attached, as getopt takes it
			 * (and as make -j1 is written); not for a flag */
			for (const struct arg_opt *p = opts; !o && p->name; p++)
				if (p->short_name && p->short_name == s[1] && s[2] && p->type != ARG_BOOL) {
					o = p;
					val = s + 2;
				}
			if (!o) {
				buf_printf(&a->error, "unknown option '%s' (see --help)", s);
				return ARGS_ERROR;
			}
		}
		if (o->type == ARG_BOOL && !val) {
			*(bool *)o->ptr = !negated;
			if (o->seen)
				*o->seen = true;
			bool_before = o;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc) {
				buf_printf(&a->error, "option '--%s' needs a value", o->name);
				return ARGS_ERROR;
			}
			val = argv[++i];
		}
		if (set_value(o, val, a) != ARGS_OK)
			return ARGS_ERROR;
	}
	return ARGS_OK;
}

int args_parse(const struct arg_opt *opts, int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof *a);
	buf_init(&a->error);
	return parse_list(opts, argc, argv, a, 0);
}

void args_free(struct args *a)
{
	for (int i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	free(a->owned);
	free(a->pos);
	free(a->pos_after_bool);
	buf_free(&a->error);
	memset(a, 0, sizeof *a);
}

void args_help(FILE *f, const char *usage, const char *description, const struct arg_opt *opts)
{
	fprintf(f, "usage: %s\n", usage);
	if (description && *description)
		fprintf(f, "\n%s\n", description);
	if (!opts || !opts->name)
		return;
	fprintf(f, "\noptions:\n");
	for (const struct arg_opt *o = opts; o->name; o++) {
		struct buf l = BUF_INIT;
		if (o->short_name)
			buf_printf(&l, "  -%c, --%s", o->short_name, o->name);
		else
			buf_printf(&l, "      --%s", o->name);
		if (o->type != ARG_BOOL)
			buf_printf(&l, "=%s", o->metavar ? o->metavar : "VALUE");
		fprintf(f, "%-40s %s", l.data, o->help ? o->help : "");
		/* a help text that says its default in words ("the first
		 * selected") is not followed by the sentinel's number too */
		bool says_default = o->help && (strstr(o->help, "(default") || strstr(o->help, "default:"));
		switch (o->type) {
		case ARG_BOOL:
			if (*(bool *)o->ptr)
				fprintf(f, " (default: on)");
			break;
		case ARG_INT:
			if (!says_default)
				fprintf(f, " (default: %lld)", (long long)*(int64_t *)o->ptr);
			break;
		case ARG_DOUBLE:
			if (!says_default)
				fprintf(f, " (default: %g)", *(double *)o->ptr);
			break;
		case ARG_STRING:
			if (!says_default && *(const char **)o->ptr && **(const char **)o->ptr)
				fprintf(f, " (default: %s)", *(const char **)o->ptr);
			break;
		}
		fputc('\n', f);
		buf_free(&l);
	}
	/* the parser takes --flagfile for every table (gflags' rule), so the
	 * help says so too */
	fprintf(f, "%-40s %s\n", "      --flagfile=FILE", "read more options from FILE, one per line ('#' comments)");
	fprintf(f, "%-40s %s\n", "  -h, --help", "show this help");
}

int args_cmd(const struct arg_cmd *c, int argc, char **argv, struct args *a)
{
	int rc = args_parse(c->opts, argc - 1, argv + 1, a);
	if (rc == ARGS_HELP) {
		args_help(stdout, c->usage, c->description, c->opts);
		args_free(a);
		return 0;
	}
	if (rc != ARGS_OK)
		fprintf(stderr, "%s: %s\n", c->prog, a->error.data);
	else if (a->npos < c->min_pos)
		fprintf(stderr, "%s: %s\n", c->prog, c->missing_error ? c->missing_error : "missing argument (see --help)");
	else if (c->max_pos != ARGS_ANY && a->npos > c->max_pos) {
		/* One too many: blame a value given to a flag that takes none
		 * ("--top 3") before blaming whatever came last. */
		int k = c->max_pos;
		for (int i = 0; i < a->npos; i++)
			if (a->pos_after_bool[i]) {
				k = i;
				break;
			}
		if (a->pos_after_bool[k])
			fprintf(stderr, "%s: unexpected argument '%s': --%s takes no value (see --help)\n", c->prog,
				a->pos[k], a->pos_after_bool[k]);
		else
			fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", c->prog, a->pos[k]);
	} else
		return -1;
	args_free(a);
	return 2;
}
