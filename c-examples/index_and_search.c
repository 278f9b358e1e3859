/*
 * index_and_search: index a JSON Lines corpus with quarry, then run a few
 * AND / OR / boolean queries and print the hits with their stored titles.
 *
 *   index_and_search [DATA.jsonl [INDEX_DIR]]
 *
 * Defaults: ../data/sample.jsonl and ./example-index. Each line of the
 * corpus is a flat JSON object such as
 *   {"id": 1, "title": "...", "body": "...", "year": 1811, "category": "Austen"}
 * (the schema of data/schema.json). Re-running updates the index in place:
 * a document replaces the one with the same id (delete by term, then add).
 *
 * Build: see Makefile (`make run`), or with an installed library:
 *   cc -std=c99 index_and_search.c $(pkg-config --cflags --libs quarry)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quarry.h"

/* ---- errors ------------------------------------------------------------ */

static void die(const char *what, quarry_status st) {
    fprintf(stderr, "%s failed: %s (%u): %s\n", what, quarry_status_str(st), (unsigned)st,
            quarry_last_error_message());
    exit(1);
}

#define TRY(call)                                         \
    do {                                                  \
        quarry_status st_ = (call);                       \
        if (st_ != QUARRY_OK) die(#call, st_);            \
    } while (0)

/* A string literal as (pointer, length). */
#define S(lit) (lit), (sizeof(lit) - 1)

/* ---- a growable byte buffer -------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
} buf;

static void buf_push(buf *b, char c) {
    if (b->len == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        char *p = (char *)realloc(b->data, cap);
        if (p == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        b->data = p;
        b->cap = cap;
    }
    b->data[b->len++] = c;
}

/* Reads one line (without its newline) into `b`; 0 at end of file. */
static int read_line(FILE *f, buf *b) {
    int c;
    b->len = 0;
    while ((c = getc(f)) != EOF && c != '\n') buf_push(b, (char)c);
    if (c == EOF && b->len == 0) return 0;
    if (b->len > 0 && b->data[b->len - 1] == '\r') b->len--;
    return 1;
}

/* ---- a minimal JSON reader for flat objects ------------------------------
 * Values may be strings, numbers, true, false or null; nested objects and
 * arrays are rejected. Strings are decoded, escapes included (\" \\ \/ \b
 * \f \n \r \t and \uXXXX with UTF-16 surrogate pairs), into UTF-8.       */

typedef struct {
    const char *p, *end;
    const char *error;
} json;

static void ws(json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int fail(json *j, const char *why) {
    if (j->error == NULL) j->error = why;
    return 0;
}

static int hex4(json *j, unsigned *out) {
    unsigned v = 0;
    int i;
    if (j->end - j->p < 4) return fail(j, "truncated \\u escape");
    for (i = 0; i < 4; i++) {
        char c = *j->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return fail(j, "bad hex digit in \\u escape");
    }
    *out = v;
    return 1;
}

static void put_utf8(buf *b, unsigned cp) {
    if (cp < 0x80) {
        buf_push(b, (char)cp);
    } else if (cp < 0x800) {
        buf_push(b, (char)(0xC0 | (cp >> 6)));
        buf_push(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        buf_push(b, (char)(0xE0 | (cp >> 12)));
        buf_push(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_push(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        buf_push(b, (char)(0xF0 | (cp >> 18)));
        buf_push(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        buf_push(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_push(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Parses a string at j->p (at its opening quote) into `out`. */
static int string(json *j, buf *out) {
    out->len = 0;
    if (j->p >= j->end || *j->p != '"') return fail(j, "expected a string");
    j->p++;
    while (j->p < j->end) {
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"') return 1;
        if (c < 0x20) return fail(j, "control character in a string");
        if (c != '\\') {
            buf_push(out, (char)c); /* UTF-8 passes through; quarry validates it */
            continue;
        }
        if (j->p >= j->end) break;
        switch (*j->p++) {
        case '"': buf_push(out, '"'); break;
        case '\\': buf_push(out, '\\'); break;
        case '/': buf_push(out, '/'); break;
        case 'b': buf_push(out, '\b'); break;
        case 'f': buf_push(out, '\f'); break;
        case 'n': buf_push(out, '\n'); break;
        case 'r': buf_push(out, '\r'); break;
        case 't': buf_push(out, '\t'); break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(j, &cp)) return 0;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* a high surrogate must be followed by \u and a low one */
                if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                    return fail(j, "unpaired high surrogate");
                j->p += 2;
                if (!hex4(j, &lo)) return 0;
                if (lo < 0xDC00 || lo > 0xDFFF) return fail(j, "bad low surrogate");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(j, "unpaired low surrogate");
            }
            put_utf8(out, cp);
            break;
        }
        default:
            return fail(j, "unknown escape");
        }
    }
    return fail(j, "unterminated string");
}

enum value_kind { V_STRING, V_INT, V_FLOAT, V_OTHER };

typedef struct {
    enum value_kind kind;
    long long i;
    double f;
} value;

static int scalar(json *j, buf *s, value *v) {
    ws(j);
    if (j->p >= j->end) return fail(j, "expected a value");
    if (*j->p == '"') {
        v->kind = V_STRING;
        return string(j, s);
    }
    if (*j->p == '{' || *j->p == '[') return fail(j, "nested values are not supported");
    if (j->end - j->p >= 4 && (memcmp(j->p, "true", 4) == 0 || memcmp(j->p, "null", 4) == 0)) {
        j->p += 4;
        v->kind = V_OTHER;
        return 1;
    }
    if (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0) {
        j->p += 5;
        v->kind = V_OTHER;
        return 1;
    }
    {
        /* a number: copy it out so strtoll/strtod stop at our end */
        char num[64];
        size_t n = 0;
        int is_float = 0;
        char *endp;
        while (j->p < j->end && n < sizeof num - 1 && strchr("+-0123456789.eE", *j->p) != NULL) {
            if (*j->p == '.' || *j->p == 'e' || *j->p == 'E') is_float = 1;
            num[n++] = *j->p++;
        }
        num[n] = 0;
        if (n == 0) return fail(j, "unexpected character");
        errno = 0;
        if (is_float) {
            v->kind = V_FLOAT;
            v->f = strtod(num, &endp);
        } else {
            v->kind = V_INT;
            v->i = strtoll(num, &endp, 10);
        }
        if (*endp != 0 || errno != 0) return fail(j, "bad number");
        return 1;
    }
}

/* ---- indexing ---------------------------------------------------------- */

static quarry_schema *make_schema(void) {
    quarry_schema *s = NULL;
    TRY(quarry_schema_new(&s));
    TRY(quarry_schema_add_field(s, S("id"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_INDEXED));
    TRY(quarry_schema_add_field(s, S("title"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    TRY(quarry_schema_add_field(s, S("body"), QUARRY_FIELD_TEXT, QUARRY_FIELD_STORED));
    TRY(quarry_schema_add_field(s, S("year"), QUARRY_FIELD_I64, QUARRY_FIELD_STORED | QUARRY_FIELD_SORTABLE));
    TRY(quarry_schema_add_field(s, S("category"), QUARRY_FIELD_STRING,
                                QUARRY_FIELD_STORED | QUARRY_FIELD_SORTABLE | QUARRY_FIELD_INDEXED));
    return s;
}

/* Fills `doc` from one JSON line; returns 0 (with j->error set) if the line is malformed. */
static int parse_doc(json *j, quarry_doc *doc, buf *key, buf *str, long long *id) {
    value v;
    int have_id = 0;
    ws(j);
    if (j->p >= j->end || *j->p++ != '{') return fail(j, "expected '{'");
    ws(j);
    if (j->p < j->end && *j->p == '}') return fail(j, "empty object");
    for (;;) {
        quarry_status st = QUARRY_OK;
        ws(j);
        if (!string(j, key)) return 0;
        ws(j);
        if (j->p >= j->end || *j->p++ != ':') return fail(j, "expected ':'");
        if (!scalar(j, str, &v)) return 0;
#define KEY_IS(lit) (key->len == sizeof(lit) - 1 && memcmp(key->data, lit, key->len) == 0)
        if ((KEY_IS("id") || KEY_IS("year")) && v.kind == V_INT) {
            st = quarry_doc_add_i64(doc, key->data, key->len, v.i);
            if (KEY_IS("id")) {
                *id = v.i;
                have_id = 1;
            }
        } else if ((KEY_IS("title") || KEY_IS("body")) && v.kind == V_STRING) {
            st = quarry_doc_add_text(doc, key->data, key->len, str->data ? str->data : "", str->len);
        } else if (KEY_IS("category") && v.kind == V_STRING) {
            st = quarry_doc_add_string(doc, key->data, key->len, str->data ? str->data : "", str->len);
        } /* other keys and types are ignored */
#undef KEY_IS
        if (st != QUARRY_OK) return fail(j, quarry_last_error_message());
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            break;
        }
        return fail(j, "expected ',' or '}'");
    }
    ws(j);
    if (j->p != j->end) return fail(j, "text after the object");
    if (!have_id) return fail(j, "no integer \"id\"");
    return 1;
}

static void index_file(const char *data_path, const char *index_dir) {
    FILE *f = fopen(data_path, "rb");
    quarry_schema *schema;
    quarry_indexer *ix = NULL;
    quarry_doc *doc = NULL;
    buf line = {NULL, 0, 0}, key = {NULL, 0, 0}, str = {NULL, 0, 0};
    long lineno = 0, added = 0, skipped = 0;

    if (f == NULL) {
        fprintf(stderr, "cannot open %s: %s\n", data_path, strerror(errno));
        exit(1);
    }
    schema = make_schema();
    /* Creates the index, or opens it (checking the schema) when it exists. */
    TRY(quarry_indexer_open(index_dir, strlen(index_dir), schema, &ix));
    quarry_schema_free(schema); /* the indexer keeps its own copy */
    TRY(quarry_doc_new(&doc));

    while (read_line(f, &line)) {
        json j;
        long long id = 0;
        lineno++;
        if (line.len == 0) continue;
        j.p = line.data;
        j.end = line.data + line.len;
        j.error = NULL;
        TRY(quarry_doc_clear(doc));
        if (!parse_doc(&j, doc, &key, &str, &id)) {
            fprintf(stderr, "%s:%ld: skipped: %s\n", data_path, lineno, j.error);
            skipped++;
            continue;
        }
        /* An update is a delete by the unique id, then an add. */
        TRY(quarry_indexer_delete_term_i64(ix, S("id"), id));
        TRY(quarry_indexer_add_doc(ix, doc));
        added++;
    }
    fclose(f);
    TRY(quarry_indexer_commit(ix));
    quarry_doc_free(doc);
    quarry_indexer_free(ix); /* releases the writer lock */
    free(line.data);
    free(key.data);
    free(str.data);
    printf("indexed %ld documents from %s (%ld lines skipped)\n", added, data_path, skipped);
}

/* ---- searching --------------------------------------------------------- */

static void print_hits(const char *label, const quarry_searcher *searcher, const quarry_query *query) {
    quarry_hits *hits = NULL;
    size_t i, n;
    TRY(quarry_searcher_search(searcher, query, NULL, 0, 5, &hits));
    n = quarry_hits_len(hits);
    printf("\n%s: %llu matching documents%s\n", label, (unsigned long long)quarry_hits_total(hits),
           quarry_hits_total_is_exact(hits) ? "" : " or more");
    for (i = 0; i < n; i++) {
        const char *title = NULL;
        size_t title_len = 0;
        int64_t id = 0, year = 0;
        float score = 0;
        TRY(quarry_hits_score(hits, i, &score));
        TRY(quarry_hits_stored_i64(hits, i, S("id"), &id));
        /* Stored strings are borrowed from `hits`: valid until it is freed. */
        if (quarry_hits_stored_str(hits, i, S("title"), &title, &title_len) != QUARRY_OK) {
            title = "(no title)";
            title_len = strlen(title);
        }
        if (quarry_hits_stored_i64(hits, i, S("year"), &year) != QUARRY_OK) year = 0;
        printf("  %zu. [id %lld] %.3f  %.*s (%lld)\n", i + 1, (long long)id, score, (int)title_len, title,
               (long long)year);
    }
    quarry_hits_free(hits);
}

static quarry_query *match(const char *field, const char *text, quarry_operator op) {
    quarry_query *q = NULL;
    TRY(quarry_query_match(field, strlen(field), text, strlen(text), op, &q));
    return q;
}

static void add_clause(quarry_query *boolean, quarry_occur occur, quarry_query *clause) {
    TRY(quarry_query_add_clause(boolean, occur, clause)); /* copies the clause */
    quarry_query_free(clause);
}

int main(int argc, char **argv) {
    const char *data = argc > 1 ? argv[1] : "../data/sample.jsonl";
    const char *index_dir = argc > 2 ? argv[2] : "example-index";
    quarry_searcher *searcher = NULL;
    quarry_query *q;

    if (quarry_version_number() != QUARRY_VERSION_NUMBER) {
        fprintf(stderr, "quarry.h is version %s but the library is %s\n", QUARRY_VERSION_STRING,
                quarry_version_string());
        return 1;
    }
    index_file(data, index_dir);

    TRY(quarry_searcher_open(index_dir, strlen(index_dir), &searcher));
    printf("searching %llu documents (quarry %s)\n", (unsigned long long)quarry_searcher_doc_count(searcher),
           quarry_version_string());

    q = match("body", "dear sister", QUARRY_OPERATOR_AND);
    print_hits("body:(dear AND sister)", searcher, q);
    quarry_query_free(q);

    q = match("body", "foreign commerce", QUARRY_OPERATOR_OR);
    print_hits("body:(foreign OR commerce)", searcher, q);
    quarry_query_free(q);

    /* letter, among Austen's passages, without Elizabeth */
    TRY(quarry_query_boolean(&q));
    add_clause(q, QUARRY_OCCUR_MUST, match("body", "letter", QUARRY_OPERATOR_OR));
    {
        quarry_query *t = NULL;
        TRY(quarry_query_term(S("category"), S("Austen"), &t));
        add_clause(q, QUARRY_OCCUR_FILTER, t);
    }
    add_clause(q, QUARRY_OCCUR_MUST_NOT, match("body", "elizabeth", QUARRY_OPERATOR_OR));
    print_hits("+body:letter +filter(category:Austen) -body:elizabeth", searcher, q);
    quarry_query_free(q);

    /* either of two phrasings, title matches counting as well */
    TRY(quarry_query_boolean(&q));
    add_clause(q, QUARRY_OCCUR_SHOULD, match("body", "public debt", QUARRY_OPERATOR_AND));
    add_clause(q, QUARRY_OCCUR_SHOULD, match("body", "national defense", QUARRY_OPERATOR_AND));
    add_clause(q, QUARRY_OCCUR_SHOULD, match("title", "debt defense", QUARRY_OPERATOR_OR));
    print_hits("(public AND debt) OR (national AND defense) OR title:(debt OR defense)", searcher, q);
    quarry_query_free(q);

    quarry_searcher_free(searcher);
    return 0;
}
