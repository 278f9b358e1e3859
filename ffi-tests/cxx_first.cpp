// A first C++ program against quarry, written from the README and the
// header alone: handles owned by std::unique_ptr with the library's free
// functions as deleters, every status checked (an exception carrying
// quarry_last_error_message()), a ranked and a sorted search.
//
// Usage: cxx_first DIR (an empty scratch directory). Exits 0 when every
// check passed.

#include <quarry.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <typename T, void (*Free)(T *)>
struct Deleter {
    void operator()(T *p) const { Free(p); }
};

using Schema = std::unique_ptr<quarry_schema, Deleter<quarry_schema, quarry_schema_free>>;
using Indexer = std::unique_ptr<quarry_indexer, Deleter<quarry_indexer, quarry_indexer_free>>;
using Doc = std::unique_ptr<quarry_doc, Deleter<quarry_doc, quarry_doc_free>>;
using Searcher = std::unique_ptr<quarry_searcher, Deleter<quarry_searcher, quarry_searcher_free>>;
using QueryH = std::unique_ptr<quarry_query, Deleter<quarry_query, quarry_query_free>>;
using Sort = std::unique_ptr<quarry_sort, Deleter<quarry_sort, quarry_sort_free>>;
using Hits = std::unique_ptr<quarry_hits, Deleter<quarry_hits, quarry_hits_free>>;

void check(quarry_status s, const char *what) {
    if (s != QUARRY_OK) {
        throw std::runtime_error(std::string(what) + ": " + quarry_last_error_message());
    }
}

void expect(bool ok, const std::string &what) {
    if (!ok) {
        throw std::runtime_error("check failed: " + what);
    }
}

struct Passage {
    const char *title;
    const char *body;
    int64_t year;
};

const std::vector<Passage> kPassages = {
    {"Emma", "Emma Woodhouse handsome clever and rich", 1815},
    {"Persuasion", "she had been forced into prudence in her youth", 1817},
    {"Address 1801", "the state of the union is one of peace and prudence", 1801},
    {"Address 1862", "the union must be preserved with prudence and resolve", 1862},
};

std::vector<std::string> titles(const quarry_hits *hits) {
    std::vector<std::string> out;
    for (size_t i = 0; i < quarry_hits_len(hits); i++) {
        const char *text = nullptr;
        size_t len = 0;
        check(quarry_hits_stored_str(hits, i, "title", 5, &text, &len), "stored title");
        out.emplace_back(text, len);
    }
    return out;
}

void run(const std::string &dir) {
    quarry_schema *raw_schema = nullptr;
    check(quarry_schema_new(&raw_schema), "schema");
    Schema schema(raw_schema);
    check(quarry_schema_add_field(schema.get(), "title", 5, QUARRY_FIELD_STRING, QUARRY_FIELD_STORED),
          "title field");
    check(quarry_schema_add_field(schema.get(), "body", 4, QUARRY_FIELD_TEXT, 0), "body field");
    check(quarry_schema_add_field(schema.get(), "year", 4, QUARRY_FIELD_I64,
                                  QUARRY_FIELD_STORED | QUARRY_FIELD_SORTABLE),
          "year field");

    {
        quarry_indexer *raw = nullptr;
        check(quarry_indexer_open(dir.data(), dir.size(), schema.get(), &raw), "indexer");
        Indexer ix(raw);
        for (const Passage &p : kPassages) {
            quarry_doc *raw_doc = nullptr;
            check(quarry_doc_new(&raw_doc), "doc");
            Doc doc(raw_doc);
            check(quarry_doc_add_string(doc.get(), "title", 5, p.title, std::strlen(p.title)), "title");
            check(quarry_doc_add_text(doc.get(), "body", 4, p.body, std::strlen(p.body)), "body");
            check(quarry_doc_add_i64(doc.get(), "year", 4, p.year), "year");
            check(quarry_indexer_add_doc(ix.get(), doc.get()), "add");
        }
        check(quarry_indexer_commit(ix.get()), "commit");
    }

    quarry_searcher *raw_searcher = nullptr;
    check(quarry_searcher_open(dir.data(), dir.size(), &raw_searcher), "searcher");
    Searcher searcher(raw_searcher);
    expect(quarry_searcher_doc_count(searcher.get()) == kPassages.size(), "document count");

    const std::string text = "union prudence";
    quarry_query *raw_query = nullptr;
    check(quarry_query_match("body", 4, text.data(), text.size(), QUARRY_OPERATOR_AND, &raw_query),
          "query");
    QueryH query(raw_query);

    // Ranked: both addresses hold both words once; the shorter (1862) ranks
    // first.
    quarry_hits *raw_hits = nullptr;
    check(quarry_searcher_search(searcher.get(), query.get(), nullptr, 0, 10, &raw_hits), "search");
    Hits hits(raw_hits);
    expect(quarry_hits_total(hits.get()) == 2, "two matches");
    std::vector<std::string> ranked = titles(hits.get());
    expect(ranked.size() == 2, "two hits");
    float first = 0, second = 0;
    check(quarry_hits_score(hits.get(), 0, &first), "score 0");
    check(quarry_hits_score(hits.get(), 1, &second), "score 1");
    expect(first >= second && second > 0, "scores descend");

    // Sorted by year, newest first.
    quarry_sort *raw_sort = nullptr;
    check(quarry_sort_new(&raw_sort), "sort");
    Sort sort(raw_sort);
    check(quarry_sort_add_field(sort.get(), "year", 4, QUARRY_SORT_DESC), "sort rule");
    quarry_hits *raw_sorted = nullptr;
    check(quarry_searcher_search(searcher.get(), query.get(), sort.get(), 0, 10, &raw_sorted),
          "sorted search");
    Hits sorted(raw_sorted);
    std::vector<std::string> by_year = titles(sorted.get());
    expect(by_year == std::vector<std::string>{"Address 1862", "Address 1801"}, "newest first");

    // Errors are statuses with a message, and freeing keeps the message.
    quarry_query *bad = nullptr;
    const char invalid[] = {'\xff', '\xfe'};
    quarry_status s = quarry_query_match("body", 4, invalid, sizeof invalid, QUARRY_OPERATOR_OR, &bad);
    expect(s == QUARRY_INVALID_UTF8 && bad == nullptr, "invalid UTF-8 is refused");
    quarry_query_free(nullptr);
    expect(std::strlen(quarry_last_error_message()) > 0, "the message survives a free");

    for (const std::string &t : ranked) {
        std::printf("%s\n", t.c_str());
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    try {
        run(argv[1]);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cxx_first: %s\n", e.what());
        return 1;
    }
    return 0;
}
