/* config.c - see config.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"

static bool name_eq(const char *a, const char *b, size_t bl)
{
	/* '-' and '_' are interchangeable, as in the args parser */
	size_t i = 0;
	for (; i < bl && a[i]; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return !a[i] && i == bl;
}

void config_argv_free(struct config_argv *a)
{
	for (int i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

bool config_file_to_argv(const char *path, const struct arg_opt *opts, struct config_argv *out, struct buf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf_printf(err, "cannot open config file %s: %s", path, strerror(errno));
		return false;
	}
	struct buf text = BUF_INIT;
	int r = buf_read_fd(&text, fd, (1u << 20) - 1);
	int read_errno = errno;
	close(fd);
	if (r != 0) {
		buf_printf(err, "cannot read config file %s: %s", path, r < 0 ? strerror(read_errno) : "larger than 1 MiB");
		buf_free(&text);
		return false;
	}
	bool ok = config_text_to_argv(path, text.data, text.len, opts, out, err);
	buf_free(&text);
	return ok;
}

bool config_text_to_argv(const char *path, const char *text, size_t len, const struct arg_opt *opts,
			 struct config_argv *out, struct buf *err)
{
	struct json_doc doc;
	struct json_error je;
	if (!json_parse(text, len, &doc, &je)) {
		buf_printf(err, "config file %s:%llu:%llu: %s", path, (unsigned long long)je.line,
			   (unsigned long long)je.column, je.msg);
		return false;
	}
	const struct json_value *root = doc.root;
	if (root->type != JV_OBJECT) {
		buf_printf(err, "config file %s: expected a JSON object of flag names to values", path);
		json_doc_free(&doc);
		return false;
	}
	struct config_argv a = {xcalloc(root->len + 1, sizeof(char *)), 0};
	bool ok = true;
	for (uint32_t i = 0; i < root->len && ok; i++) {
		const struct json_member *m = &root->u.members[i];
		const struct arg_opt *o = NULL;
		for (const struct arg_opt *j = opts; j->name; j++)
			if (name_eq(j->name, m->key, m->key_len))
				o = j;
		if (!o || strcmp(o->name, "config") == 0) {
			log_warn("config file %s: ignoring key '%.*s' (not a telemetry setting)", path, (int)m->key_len,
				 m->key);
			continue;
		}
		struct buf arg = BUF_INIT;
		buf_printf(&arg, "--%s=", o->name);
		const struct json_value *v = &m->value;
		if (v->type == JV_BOOL && o->type == ARG_BOOL)
			buf_puts(&arg, v->u.b ? "true" : "false");
		else if (v->type == JV_NUMBER && (o->type == ARG_INT || o->type == ARG_DOUBLE))
			buf_puts(&arg, v->u.num.raw);
		else if (v->type == JV_STRING && o->type == ARG_STRING && strlen(v->u.str) == v->len)
			buf_puts(&arg, v->u.str);
		else {
			buf_printf(err, "config file %s: '%s' wants a %s", path, o->name,
				   o->type == ARG_BOOL     ? "boolean"
				   : o->type == ARG_STRING ? "string"
							   : "number");
			ok = false;
			buf_free(&arg);
			break;
		}
		a.argv[a.argc++] = buf_detach(&arg, NULL);
	}
	json_doc_free(&doc);
	if (!ok) {
		config_argv_free(&a);
		return false;
	}
	*out = a;
	return true;
}
