use quarry::*;

mod common;

#[test]
fn index_search_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let (id, body) = common::add_id_and_body(&mut schema, true);
    let mut w = IndexWriter::create(dir.path(), &schema, WriterConfig::default()).unwrap();
    for (i, text) in ["the quick brown fox", "the lazy dog", "quick quick dog"]
        .iter()
        .enumerate()
    {
        let mut d = Document::new();
        d.add_i64(id, i as i64).add_str(body, text);
        w.add_document(&d).unwrap();
    }
    w.commit().unwrap();
    let s = Searcher::open(dir.path()).unwrap();
    assert_eq!(s.num_docs(), 3);
    let hits = s
        .search(
            &Query::matching(body, "quick dog", Operator::Or),
            &SearchRequest::top(10),
        )
        .unwrap();
    assert_eq!(hits.total_hits, 3);
    assert_eq!(hits.hits[0].doc, 2);
    let stored = s.stored(hits.hits[0].doc).unwrap();
    assert_eq!(
        stored,
        vec![
            (id, Value::I64(2)),
            (body, Value::Str("quick quick dog".into()))
        ]
    );
    w.delete_term(id, &Value::I64(2)).unwrap();
    w.commit().unwrap();
    let s2 = s.reopen().unwrap();
    let hits = s2
        .search(
            &Query::matching(body, "quick dog", Operator::Or),
            &SearchRequest::top(10),
        )
        .unwrap();
    assert_eq!(hits.total_hits, 2);
    let hits = s
        .search(
            &Query::matching(body, "quick dog", Operator::Or),
            &SearchRequest::top(10),
        )
        .unwrap();
    assert_eq!(
        hits.total_hits, 3,
        "the old searcher still sees its snapshot"
    );
}

#[test]
fn handles_have_the_promised_thread_safety() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Searcher>();
    send_sync::<Hits>();
    send::<IndexWriter>();
}
