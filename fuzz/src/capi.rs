//! Fuzz target `capi`: the input is a program for the C API. Each step
//! reads an opcode and its arguments from the bytes and calls one
//! `quarry_*` export as a C host would: strings of fuzzed length and
//! content (invalid UTF-8 included), NULL pointers, handles that are valid
//! but empty (an empty schema, a boolean query without clauses, a sort
//! without rules), unknown enum values, huge offsets and limits; queries of
//! every kind (term, match, boolean, prefix, the three ranges, all, none,
//! boosted copies) and query-syntax text pieced from syntax tokens and
//! fuzzed bytes into `quarry_query_parse`. Every call
//! must come back with a known status and never `QUARRY_INTERNAL` (a
//! caught panic); a failure must leave a message.
//!
//! Paths are never taken from the input: the index lives in a scratch
//! directory, which a step may replace by a missing or non-UTF-8 one.

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};

use quarry::capi::hits::*;
use quarry::capi::indexer::*;
use quarry::capi::query::*;
use quarry::capi::schema::*;
use quarry::capi::searcher::*;
use quarry::capi::sort::*;
use quarry::capi::status::*;

/// The bytes of a program, read front to back; zeros once exhausted.
struct Program<'a>(&'a [u8]);

impl<'a> Program<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u64(&mut self) -> u64 {
        let n = self.0.len().min(8);
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(head);
        u64::from_le_bytes(b)
    }

    /// A count or index: mostly small, sometimes anything.
    fn size(&mut self) -> usize {
        match self.byte() {
            0xff => self.u64() as usize,
            b => usize::from(b % 32),
        }
    }

    /// Up to 31 bytes of the program.
    fn bytes(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte() % 32).min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }

    /// A string argument as `(ptr, len)`: NULL, a field name of the schemas
    /// the programs build, or fuzzed bytes.
    fn string(&mut self) -> (*const c_char, usize) {
        const NAMES: [&str; 4] = ["id", "body", "tag", "n"];
        let s: &[u8] = match self.byte() % 8 {
            0 => return (null(), self.size()),
            1..=4 => NAMES[usize::from(self.byte()) % 4].as_bytes(),
            _ => self.bytes(),
        };
        (s.as_ptr().cast(), s.len())
    }

    /// Text for the query parser: up to seven pieces, each a token of the
    /// syntax (so that mutations start from well-formed queries) or up to
    /// 31 fuzzed bytes (invalid UTF-8 included).
    fn query_text(&mut self) -> Vec<u8> {
        const TOKENS: [&str; 24] = [
            "whale", "sea", "body:", "tag:", "id:", "n:", "w*", "r*", "*", " ", "AND", "OR", "NOT",
            "(", ")", "\"", "+", "-", "^2", "~1", "[1 TO 5]", "{a TO *}", "[* TO 2]", ":",
        ];
        let mut text = Vec::new();
        for _ in 0..self.byte() % 8 {
            match self.byte() {
                b @ 0..0x80 => text.extend_from_slice(TOKENS[usize::from(b) % 24].as_bytes()),
                _ => text.extend_from_slice(self.bytes()),
            }
        }
        text
    }
}

/// Checks a status: known, never a caught panic, and with a message when
/// it is a failure.
fn check(status: quarry_status) -> bool {
    assert!(status <= QUARRY_TOO_MANY_TERMS, "unknown status {status}");
    assert_ne!(status, QUARRY_INTERNAL, "a panic inside the C API");
    if status != QUARRY_OK {
        // SAFETY: the message is a NUL-terminated string valid until the
        // next call into the library on this thread; it is read at once.
        let msg = unsafe { CStr::from_ptr(quarry_last_error_message()) };
        assert!(!msg.is_empty(), "status {status} without a message");
    }
    status == QUARRY_OK
}

/// The handles a program works with. Each is NULL or live; dropping frees
/// them all.
struct Handles {
    schema: *mut quarry_schema,
    indexer: *mut quarry_indexer,
    doc: *mut quarry_doc,
    searcher: *mut quarry_searcher,
    queries: Vec<*mut quarry_query>,
    sort: *mut quarry_sort,
    hits: *mut quarry_hits,
}

impl Drop for Handles {
    fn drop(&mut self) {
        // SAFETY: each handle is NULL or live and owned here, and none is
        // used after this.
        unsafe {
            quarry_hits_free(self.hits);
            quarry_sort_free(self.sort);
            for &q in &self.queries {
                quarry_query_free(q);
            }
            quarry_searcher_free(self.searcher);
            quarry_doc_free(self.doc);
            quarry_indexer_free(self.indexer);
            quarry_schema_free(self.schema);
        }
    }
}

/// Runs one program (at most 64 steps) against a fresh index directory.
pub fn capi(data: &[u8]) -> super::Reached {
    let mut reached = super::Reached::default();
    super::SCRATCH.with(|dir| {
        let root = dir.path().join("capi");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("scratch directory");
        let index = root.join("index");
        let index = index.to_str().expect("scratch paths are UTF-8").as_bytes();
        // A path in a missing directory, and one that is not UTF-8.
        let missing = root.join("missing/index");
        let missing = missing.to_str().expect("UTF-8").as_bytes().to_vec();
        let mut bad = index.to_vec();
        bad.push(0xff);
        let paths: [&[u8]; 3] = [index, &missing, &bad];

        let mut p = Program(data);
        let mut clauses_added = 0;
        let mut h = Handles {
            schema: null_mut(),
            indexer: null_mut(),
            doc: null_mut(),
            searcher: null_mut(),
            queries: Vec::new(),
            sort: null_mut(),
            hits: null_mut(),
        };
        // SAFETY (for every call below): each handle argument is NULL or a
        // live handle owned by `h`; each out-pointer is NULL or a local
        // that is written at most once; each `(ptr, len)` string is NULL or
        // borrows `len` bytes of `data`, of a path above, of a static, or
        // of a local vector that outlives the call.
        // A handle is freed only when replaced or by `Handles::drop`.
        unsafe {
            for _ in 0..64 {
                if p.0.is_empty() {
                    break;
                }
                match p.byte() % 24 {
                    0 => {
                        quarry_schema_free(h.schema);
                        h.schema = null_mut();
                        check(quarry_schema_new(&mut h.schema));
                    }
                    1 => {
                        let (name, len) = p.string();
                        check(quarry_schema_add_field(
                            h.schema,
                            name,
                            len,
                            u32::from(p.byte() % 6),
                            u32::from(p.byte() % 9),
                        ));
                    }
                    2 => {
                        let json = p.bytes();
                        let mut s = null_mut();
                        if check(quarry_schema_from_json(
                            json.as_ptr().cast(),
                            json.len(),
                            &mut s,
                        )) {
                            quarry_schema_free(h.schema);
                            h.schema = s;
                        }
                    }
                    3 | 4 => {
                        let path = paths[usize::from(p.byte()) % 3];
                        let mut w = null_mut();
                        let f = if p.byte() % 2 == 0 {
                            quarry_indexer_create
                        } else {
                            quarry_indexer_open
                        };
                        if check(f(path.as_ptr().cast(), path.len(), h.schema, &mut w)) {
                            quarry_indexer_free(h.indexer);
                            h.indexer = w;
                        }
                    }
                    5 => {
                        quarry_doc_free(h.doc);
                        h.doc = null_mut();
                        check(quarry_doc_new(&mut h.doc));
                    }
                    6 => {
                        let (f, flen) = p.string();
                        let (v, vlen) = p.string();
                        let add = if p.byte() % 2 == 0 {
                            quarry_doc_add_text
                        } else {
                            quarry_doc_add_string
                        };
                        check(add(h.doc, f, flen, v, vlen));
                    }
                    7 => {
                        let (f, flen) = p.string();
                        let v = p.u64();
                        if p.byte() % 2 == 0 {
                            check(quarry_doc_add_i64(h.doc, f, flen, v as i64));
                        } else {
                            check(quarry_doc_add_f64(h.doc, f, flen, f64::from_bits(v)));
                        }
                    }
                    8 => {
                        check(quarry_doc_clear(h.doc));
                    }
                    9 => {
                        check(quarry_indexer_add_doc(h.indexer, h.doc));
                    }
                    10 => {
                        let (f, flen) = p.string();
                        if p.byte() % 2 == 0 {
                            let (v, vlen) = p.string();
                            check(quarry_indexer_delete_term_string(
                                h.indexer, f, flen, v, vlen,
                            ));
                        } else {
                            let v = p.u64() as i64;
                            check(quarry_indexer_delete_term_i64(h.indexer, f, flen, v));
                        }
                    }
                    11 => {
                        if p.byte() % 2 == 0 {
                            check(quarry_indexer_commit(h.indexer));
                        } else {
                            check(quarry_indexer_merge(h.indexer, p.size()));
                        }
                    }
                    12 => {
                        let mut s = null_mut();
                        let ok = if p.byte() % 2 == 0 {
                            let path = paths[usize::from(p.byte()) % 3];
                            check(quarry_searcher_open(
                                path.as_ptr().cast(),
                                path.len(),
                                &mut s,
                            ))
                        } else {
                            check(quarry_searcher_reopen(h.searcher, &mut s))
                        };
                        if ok {
                            quarry_searcher_free(h.searcher);
                            h.searcher = s;
                        }
                    }
                    13 => {
                        let mut q = null_mut();
                        let (f, flen) = p.string();
                        // A bound kind, unknown ones included.
                        let kind = |p: &mut Program| u32::from(p.byte() % 4);
                        let ok = match p.byte() % 12 {
                            0 => {
                                let (t, tlen) = p.string();
                                check(quarry_query_term(f, flen, t, tlen, &mut q))
                            }
                            1 => check(quarry_query_term_i64(f, flen, p.u64() as i64, &mut q)),
                            2 => {
                                let (t, tlen) = p.string();
                                let op = u32::from(p.byte() % 4);
                                check(quarry_query_match(f, flen, t, tlen, op, &mut q))
                            }
                            3 => check(quarry_query_boolean(&mut q)),
                            4 => {
                                let (t, tlen) = p.string();
                                check(quarry_query_prefix(f, flen, t, tlen, &mut q))
                            }
                            5 => {
                                let (lo, lk) = (p.u64() as i64, kind(&mut p));
                                let (hi, hk) = (p.u64() as i64, kind(&mut p));
                                check(quarry_query_range_i64(f, flen, lo, lk, hi, hk, &mut q))
                            }
                            6 => {
                                // Any bits: NaN and infinities included.
                                let (lo, lk) = (f64::from_bits(p.u64()), kind(&mut p));
                                let (hi, hk) = (f64::from_bits(p.u64()), kind(&mut p));
                                check(quarry_query_range_f64(f, flen, lo, lk, hi, hk, &mut q))
                            }
                            7 => {
                                let ((lo, lolen), lk) = (p.string(), kind(&mut p));
                                let ((hi, hilen), hk) = (p.string(), kind(&mut p));
                                check(quarry_query_range_str(
                                    f, flen, lo, lolen, lk, hi, hilen, hk, &mut q,
                                ))
                            }
                            8 => check(quarry_query_all(&mut q)),
                            9 => check(quarry_query_none(&mut q)),
                            10 => {
                                let inner = pick(&h.queries, p.byte());
                                let boost = f32::from_bits(p.u64() as u32);
                                check(quarry_query_boost(inner, boost, &mut q))
                            }
                            _ => {
                                // `f` is the default field.
                                let text = p.query_text();
                                let op = u32::from(p.byte() % 4);
                                check(quarry_query_parse(
                                    h.searcher,
                                    text.as_ptr().cast(),
                                    text.len(),
                                    f,
                                    flen,
                                    op,
                                    &mut q,
                                ))
                            }
                        };
                        if ok && h.queries.len() < 16 {
                            h.queries.push(q);
                        } else if ok {
                            quarry_query_free(q);
                        }
                    }
                    14 if clauses_added < 8 => {
                        // Bounded: adding a query to itself doubles it.
                        clauses_added += 1;
                        let b = pick(&h.queries, p.byte());
                        let c = pick(&h.queries, p.byte());
                        check(quarry_query_add_clause(b, u32::from(p.byte() % 6), c));
                    }
                    15 => {
                        quarry_sort_free(h.sort);
                        h.sort = null_mut();
                        check(quarry_sort_new(&mut h.sort));
                    }
                    16 => {
                        let order = u32::from(p.byte() % 4);
                        match p.byte() % 3 {
                            0 => check(quarry_sort_add_score(h.sort, order)),
                            1 => check(quarry_sort_add_doc(h.sort, order)),
                            _ => {
                                let (f, flen) = p.string();
                                check(quarry_sort_add_field(h.sort, f, flen, order))
                            }
                        };
                    }
                    17 | 18 => {
                        let q = pick(&h.queries, p.byte());
                        let sort = if p.byte() % 2 == 0 {
                            h.sort
                        } else {
                            null_mut()
                        };
                        let (offset, limit) = (p.size(), p.size());
                        let mut hits = null_mut();
                        let ok = match p.byte() % 3 {
                            0 => check(quarry_searcher_search(
                                h.searcher, q, sort, offset, limit, &mut hits,
                            )),
                            1 => check(quarry_searcher_search_flags(
                                h.searcher,
                                q,
                                sort,
                                offset,
                                limit,
                                u32::from(p.byte() % 3),
                                &mut hits,
                            )),
                            _ => check(quarry_searcher_search_total(
                                h.searcher,
                                q,
                                sort,
                                offset,
                                limit,
                                p.u64(),
                                &mut hits,
                            )),
                        };
                        if ok {
                            reached.searches += 1;
                            quarry_hits_free(h.hits);
                            h.hits = hits;
                        }
                    }
                    19 => {
                        let _ = quarry_hits_len(h.hits);
                        let _ = quarry_hits_total(h.hits);
                        let _ = quarry_hits_total_is_exact(h.hits);
                        let _ = quarry_hits_sort_value_count(h.hits);
                        let i = p.size();
                        let (mut d, mut s) = (0u64, 0f32);
                        check(quarry_hits_doc(h.hits, i, &mut d));
                        check(quarry_hits_score(h.hits, i, &mut s));
                    }
                    20 => {
                        let i = p.size();
                        let (f, flen) = p.string();
                        let (mut ptr, mut len) = (null(), 0usize);
                        let (mut n, mut x) = (0i64, 0f64);
                        match p.byte() % 3 {
                            0 => check(quarry_hits_stored_str(
                                h.hits, i, f, flen, &mut ptr, &mut len,
                            )),
                            1 => check(quarry_hits_stored_i64(h.hits, i, f, flen, &mut n)),
                            _ => check(quarry_hits_stored_f64(h.hits, i, f, flen, &mut x)),
                        };
                    }
                    21 => {
                        let (i, rule) = (p.size(), p.size());
                        let (mut ptr, mut len) = (null(), 0usize);
                        let (mut t, mut n, mut x) = (0u32, 0i64, 0f64);
                        match p.byte() % 4 {
                            0 => check(quarry_hits_sort_value_type(h.hits, i, rule, &mut t)),
                            1 => check(quarry_hits_sort_value_i64(h.hits, i, rule, &mut n)),
                            2 => check(quarry_hits_sort_value_f64(h.hits, i, rule, &mut x)),
                            _ => check(quarry_hits_sort_value_str(
                                h.hits, i, rule, &mut ptr, &mut len,
                            )),
                        };
                    }
                    22 => {
                        let (a, b) = (u32::from(p.byte() % 5), u32::from(p.byte() % 4));
                        let mut sw = 0u32;
                        match p.byte() % 4 {
                            0 => check(quarry_searcher_set_exec_mode(h.searcher, a)),
                            1 => check(quarry_searcher_set_path(h.searcher, a, b)),
                            2 => check(quarry_searcher_path(h.searcher, a, &mut sw)),
                            // 0 is refused; small limits make expansions fail.
                            _ => check(quarry_searcher_set_max_expansions(h.searcher, p.size())),
                        };
                        let _ = quarry_searcher_exec_mode(h.searcher);
                        let _ = quarry_searcher_doc_count(h.searcher);
                        let _ = quarry_searcher_generation(h.searcher);
                    }
                    _ => {
                        // NULL out-pointers and NULL handles.
                        check(quarry_schema_new(null_mut()));
                        check(quarry_query_boolean(null_mut()));
                        check(quarry_hits_doc(h.hits, 0, null_mut()));
                        check(quarry_searcher_search(
                            h.searcher,
                            null(),
                            null(),
                            0,
                            1,
                            null_mut(),
                        ));
                    }
                }
            }
        }
        reached.opened = !h.searcher.is_null();
    });
    reached
}

/// One of the program's queries, or NULL.
fn pick(queries: &[*mut quarry_query], b: u8) -> *mut quarry_query {
    queries
        .get(usize::from(b) % (queries.len() + 1))
        .copied()
        .unwrap_or(null_mut())
}
