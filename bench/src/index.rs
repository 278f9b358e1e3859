//! Indexing both engines, each in a child process of this binary so that
//! its peak memory (VmHWM) is its own.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use quarry::{Document, FieldFlags, FieldType, IndexWriter, Schema, WriterConfig};
use tantivy::indexer::NoMergePolicy;
use tantivy::schema::{
    FAST, IndexRecordOption, NumericOptions, STORED, Schema as TSchema, TextFieldIndexing,
    TextOptions,
};
use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer};
use tantivy::{Index, TantivyDocument};

use crate::corpus::{CorpusSpec, Doc, Opened};
use crate::util::{cpu_seconds, dir_bytes, vm_hwm_kib, written_bytes};

/// The name the bench registers its analyzer under in tantivy.
pub const TOKENIZER: &str = "quarry";
/// Both engines' memory budget: quarry's default.
pub const MEMORY_BUDGET: usize = 256 << 20;
/// Segments of the "several" layout.
pub const SEVERAL: u64 = 8;

/// Which engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// quarry.
    Quarry,
    /// tantivy.
    Tantivy,
}

impl Engine {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Quarry => "quarry",
            Engine::Tantivy => "tantivy",
        }
    }

    /// The engine of a [`Self::name`].
    pub fn from_name(s: &str) -> Option<Engine> {
        [Engine::Quarry, Engine::Tantivy]
            .into_iter()
            .find(|e| e.name() == s)
    }
}

/// Segment layout of an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Default writer settings, then force-merged to one segment.
    One,
    /// `SEVERAL` segments of N / `SEVERAL` documents, no merging.
    Several,
}

impl Layout {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::One => "one",
            Layout::Several => "several",
        }
    }

    /// Parses [`Layout::name`].
    pub fn from_name(s: &str) -> Option<Layout> {
        match s {
            "one" => Some(Layout::One),
            "several" => Some(Layout::Several),
            _ => None,
        }
    }
}

/// What an indexing child reports.
#[derive(Clone, Debug, Default)]
pub struct IndexReport {
    /// Documents indexed.
    pub docs: u64,
    /// Wall seconds from the first document to the last commit/merge done.
    pub wall_s: f64,
    /// Of which: wall seconds inside add_document (and building the document).
    pub add_s: f64,
    /// Process CPU seconds over the same span (merge threads included).
    pub cpu_s: f64,
    /// Peak resident memory of the child, KiB.
    pub vm_hwm_kib: u64,
    /// Peak resident memory before indexing started (corpus generator etc.), KiB.
    pub vm_hwm_base_kib: u64,
    /// Bytes of the files the last commit references (the index a reader
    /// opens).
    pub bytes: u64,
    /// Bytes of every file in the directory (files of earlier commits that
    /// the engine keeps until a later commit included).
    pub dir_bytes: u64,
    /// Segments in the final index.
    pub segments: usize,
    /// Writer threads.
    pub threads: usize,
    /// Bytes per [`COMPONENTS`] entry (empty when not measured).
    pub components: Vec<u64>,
}

impl IndexReport {
    /// As a JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "docs": self.docs, "wall_s": self.wall_s, "add_s": self.add_s,
            "cpu_s": self.cpu_s, "vm_hwm_kib": self.vm_hwm_kib,
            "vm_hwm_base_kib": self.vm_hwm_base_kib, "bytes": self.bytes,
            "dir_bytes": self.dir_bytes,
            "segments": self.segments, "threads": self.threads,
            "components": COMPONENTS.iter().zip(&self.components)
                .map(|(c, n)| (c.to_string(), serde_json::json!(n)))
                .collect::<serde_json::Map<_, _>>(),
        })
    }

    /// From [`IndexReport::to_json`].
    pub fn from_json(v: &serde_json::Value) -> Option<IndexReport> {
        Some(IndexReport {
            docs: v["docs"].as_u64()?,
            wall_s: v["wall_s"].as_f64()?,
            add_s: v["add_s"].as_f64()?,
            cpu_s: v["cpu_s"].as_f64()?,
            vm_hwm_kib: v["vm_hwm_kib"].as_u64()?,
            vm_hwm_base_kib: v["vm_hwm_base_kib"].as_u64()?,
            bytes: v["bytes"].as_u64()?,
            dir_bytes: v["dir_bytes"].as_u64()?,
            segments: v["segments"].as_u64()? as usize,
            threads: v["threads"].as_u64().unwrap_or(1) as usize,
            components: COMPONENTS
                .iter()
                .map(|c| v["components"][*c].as_u64())
                .collect::<Option<Vec<u64>>>()
                .unwrap_or_default(),
        })
    }

    /// Documents per wall second.
    pub fn docs_per_s(&self) -> f64 {
        self.docs as f64 / self.wall_s
    }
}

/// quarry's schema for the bench corpus; `positions` keeps the text
/// fields' token positions (the phrase benchmark).
pub fn quarry_schema(positions: bool) -> Schema {
    let mut s = Schema::new();
    let f = |stored, indexed, sortable| FieldFlags {
        stored,
        indexed,
        sortable,
    };
    s.add_field("id", FieldType::I64, f(true, false, true))
        .expect("id");
    s.add_field("title", FieldType::Text, f(true, false, false))
        .expect("title");
    s.add_field("body", FieldType::Text, f(false, false, false))
        .expect("body");
    s.add_field("year", FieldType::I64, f(false, false, true))
        .expect("year");
    s.add_field("category", FieldType::String, f(false, false, true))
        .expect("category");
    // Without `positions`, no positions, as tantivy's fields are then
    // indexed `WithFreqs`: the queries measured need none, and index sizes
    // compare like for like (with them, tantivy's are `WithFreqsAndPositions`).
    for name in ["title", "body"] {
        let id = s.field(name).expect("text field");
        s.set_positions(id, positions).expect("positions");
    }
    s
}

/// tantivy's analyzer configured like quarry's: split on every char that is
/// not `char::is_alphanumeric`, lowercase char by char, then drop tokens
/// longer than 40 bytes (tantivy's `RemoveLongFilter::limit(n)` keeps
/// tokens *shorter* than n bytes, so the limit is 41; and it runs after the
/// lowercaser because quarry measures the lowercased token).
pub fn tantivy_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .filter(RemoveLongFilter::limit(
            quarry::analysis::MAX_TOKEN_BYTES + 1,
        ))
        .build()
}

/// tantivy's schema for the bench corpus: text fields with freqs and norms,
/// and positions only with `positions` (as quarry's bench schema), title
/// stored, id stored and fast (to map hits back), year and category fast
/// only.
pub fn tantivy_schema(positions: bool) -> TSchema {
    let mut b = TSchema::builder();
    let record = if positions {
        IndexRecordOption::WithFreqsAndPositions
    } else {
        IndexRecordOption::WithFreqs
    };
    let text = |stored: bool| {
        let o = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(record),
        );
        if stored { o.set_stored() } else { o }
    };
    b.add_i64_field("id", NumericOptions::from(STORED) | FAST);
    b.add_text_field("title", text(true));
    b.add_text_field("body", text(false));
    b.add_i64_field("year", FAST);
    b.add_text_field("category", TextOptions::default().set_fast("raw"));
    b.build()
}

/// Opens a tantivy index, or creates one (`Some(positions)`), with the
/// bench analyzer registered.
pub fn tantivy_open(dir: &Path, create: Option<bool>) -> tantivy::Result<Index> {
    let index = match create {
        Some(positions) => Index::create_in_dir(dir, tantivy_schema(positions))?,
        None => Index::open_in_dir(dir)?,
    };
    index.tokenizers().register(TOKENIZER, tantivy_analyzer());
    Ok(index)
}

/// The child side: indexes `corpus` with `engine` in `layout` into `dir`
/// on `threads` writer threads and prints the report as one JSON line.
pub fn child_main(
    engine: Engine,
    layout: Layout,
    dir: &Path,
    corpus: &CorpusSpec,
    positions: bool,
    threads: usize,
    commit_every: Option<u64>,
) -> i32 {
    match child_index(
        engine,
        layout,
        dir,
        corpus,
        positions,
        threads,
        commit_every,
    ) {
        Ok(r) => {
            println!("{}", r.to_json());
            0
        }
        Err(e) => {
            eprintln!("indexing with {} failed: {e}", engine.name());
            1
        }
    }
}

fn total_docs(corpus: &CorpusSpec) -> Result<u64, String> {
    match corpus {
        CorpusSpec::Synthetic { docs, .. } => Ok(*docs),
        CorpusSpec::Jsonl { .. } => corpus.for_each(|_, _| {}),
    }
}

/// The corpus fields `(id, title, body, year, category)` of an engine's
/// schema, each looked up by name with `field`.
fn corpus_fields<F>(field: impl Fn(&str) -> F) -> (F, F, F, F, F) {
    (
        field("id"),
        field("title"),
        field("body"),
        field("year"),
        field("category"),
    )
}

/// Hands every document of the corpus to `add`, adding the time spent in
/// `add` to `add_s`; after the first error the remaining documents are
/// skipped and the error is returned. The number of documents otherwise.
fn feed(
    corpus: &Opened<'_>,
    add_s: &mut f64,
    mut add: impl FnMut(&Doc) -> Result<(), String>,
) -> Result<u64, String> {
    let mut err = None;
    let docs = corpus.for_each(|_, d: &Doc| {
        if err.is_some() {
            return;
        }
        let t = Instant::now();
        if let Err(e) = add(d) {
            err = Some(e);
        }
        *add_s += t.elapsed().as_secs_f64();
    })?;
    match err {
        Some(e) => Err(e),
        None => Ok(docs),
    }
}

fn child_index(
    engine: Engine,
    layout: Layout,
    dir: &Path,
    corpus: &CorpusSpec,
    positions: bool,
    threads: usize,
    commit_every: Option<u64>,
) -> Result<IndexReport, String> {
    let n = total_docs(corpus)?;
    let mut added = 0u64;
    // Whether to commit after the document just added.
    let mut commit_now = move || {
        added += 1;
        commit_every.is_some_and(|n| added.is_multiple_of(n))
    };
    let per_segment = n.div_ceil(SEVERAL).max(1);
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // The generator's vocabulary is built before the clocks start; its
    // memory is in the base.
    let corpus = corpus.open();
    let base_kib = vm_hwm_kib();
    let mut add_s = 0.0;
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let docs;
    match engine {
        Engine::Quarry => {
            let schema = quarry_schema(positions);
            let (id, title, body, year, category) =
                corpus_fields(|name| schema.field(name).expect("field"));
            let mut config = WriterConfig {
                indexing_threads: threads,
                ..WriterConfig::default()
            };
            if layout == Layout::Several {
                config.max_docs_per_segment = Some(per_segment as u32);
                config.merge_factor = 0;
            }
            let mut w = IndexWriter::create(dir, &schema, config).map_err(|e| e.to_string())?;
            let mut qd = Document::new();
            docs = feed(&corpus, &mut add_s, |d| {
                qd.clear();
                qd.add_i64(id, d.id)
                    .add_str(title, &d.title)
                    .add_str(body, &d.body)
                    .add_i64(year, d.year)
                    .add_str(category, &d.category);
                w.add_document(&qd).map_err(|e| e.to_string())?;
                if commit_now() {
                    w.commit().map_err(|e| e.to_string())?;
                }
                Ok(())
            })?;
            w.commit().map_err(|e| e.to_string())?;
            if commit_every.is_some() {
                // What the merge policy leaves, once its merges are done.
                let report = |when: &str| -> Result<(), String> {
                    eprintln!(
                        "quarry-bench: {} segments {when}, {:.1} s, {} bytes written",
                        quarry_segments(dir)?,
                        t0.elapsed().as_secs_f64(),
                        written_bytes()
                    );
                    Ok(())
                };
                report("after the last commit")?;
                w.wait_merges().map_err(|e| e.to_string())?;
                report("after its merges")?;
            }
            if layout == Layout::One {
                w.merge(1).map_err(|e| e.to_string())?;
            }
        }
        Engine::Tantivy => {
            let index = tantivy_open(dir, Some(positions)).map_err(|e| e.to_string())?;
            let s = index.schema();
            let (id, title, body, year, category) =
                corpus_fields(|name| s.get_field(name).expect("field"));
            let mut w = index
                .writer_with_num_threads::<TantivyDocument>(threads, MEMORY_BUDGET)
                .map_err(|e| e.to_string())?;
            if layout == Layout::Several {
                w.set_merge_policy(Box::new(NoMergePolicy));
            }
            let mut since_commit = 0u64;
            docs = feed(&corpus, &mut add_s, |d| {
                let mut td = TantivyDocument::new();
                td.add_i64(id, d.id);
                td.add_text(title, &d.title);
                td.add_text(body, &d.body);
                td.add_i64(year, d.year);
                td.add_text(category, &d.category);
                let mut r = w.add_document(td).map(drop).map_err(|e| e.to_string());
                since_commit += 1;
                if commit_now() || layout == Layout::Several && since_commit == per_segment {
                    since_commit = 0;
                    if let Err(e) = w.commit() {
                        r = Err(e.to_string());
                    }
                }
                r
            })?;
            w.commit().map_err(|e| e.to_string())?;
            if layout == Layout::One {
                // The default merge policy may be merging some of these
                // segments in the background: a merge of a list it made
                // stale fails, and is retried with the list as it is then.
                loop {
                    let ids = index.searchable_segment_ids().map_err(|e| e.to_string())?;
                    if ids.len() <= 1 {
                        break;
                    }
                    match w.merge(&ids).wait() {
                        Ok(_) => break,
                        Err(tantivy::TantivyError::InvalidArgument(_)) => {
                            std::thread::sleep(std::time::Duration::from_millis(100));
                        }
                        Err(e) => return Err(e.to_string()),
                    }
                }
            }
            w.wait_merging_threads().map_err(|e| e.to_string())?;
        }
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = cpu_seconds() - cpu0;
    if commit_every.is_some() {
        eprintln!("quarry-bench: {} bytes written in all", written_bytes());
    }
    let segments = match engine {
        Engine::Quarry => quarry_segments(dir)?,
        Engine::Tantivy => tantivy_open(dir, None)
            .and_then(|i| i.searchable_segment_ids())
            .map_err(|e| e.to_string())?
            .len(),
    };
    Ok(IndexReport {
        docs,
        wall_s,
        add_s,
        cpu_s,
        vm_hwm_kib: vm_hwm_kib(),
        vm_hwm_base_kib: base_kib,
        bytes: live_bytes(engine, dir)?,
        dir_bytes: dir_bytes(dir),
        segments,
        threads,
        components: Vec::new(),
    })
}

/// Bytes of the files the newest commit of the index at `dir` references.
pub fn live_bytes(engine: Engine, dir: &Path) -> Result<u64, String> {
    let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
    match engine {
        Engine::Quarry => {
            use quarry::format::manifest::{manifest_name, segment_name, tombstone_name};
            let (_, m) = quarry::read::latest_manifest(dir)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no manifest in {}", dir.display()))?;
            let mut total = size(&manifest_name(m.generation));
            for e in &m.segments {
                total += size(&segment_name(e.id));
                if e.del_gen != 0 {
                    total += size(&tombstone_name(e.id, e.del_gen));
                }
            }
            Ok(total)
        }
        Engine::Tantivy => {
            let index = tantivy_open(dir, None).map_err(|e| e.to_string())?;
            let live: Vec<String> = index
                .searchable_segment_metas()
                .map_err(|e| e.to_string())?
                .iter()
                .map(|m| m.id().uuid_string())
                .collect();
            let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            Ok(rd
                .flatten()
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n == "meta.json" || live.iter().any(|u| n.starts_with(u.as_str()))
                })
                .map(|e| e.metadata().map_or(0, |m| m.len()))
                .sum())
        }
    }
}

/// The parent side: runs the child for `engine`/`layout`/`threads` and
/// parses its report.
pub fn run_child(
    engine: Engine,
    layout: Layout,
    dir: &Path,
    corpus: &CorpusSpec,
    positions: bool,
    threads: usize,
) -> Result<IndexReport, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("__index")
        .arg(engine.name())
        .arg(layout.name())
        .arg(dir)
        .args(corpus.to_args())
        .args(positions.then_some("--positions"))
        .arg("--index-threads")
        .arg(threads.to_string())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start the indexing child: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "indexing {} ({}) failed: {}",
            engine.name(),
            layout.name(),
            out.status
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| format!("bad report from the indexing child ({e}): {line:?}"))?;
    let mut r = IndexReport::from_json(&v)
        .ok_or_else(|| format!("bad report from the indexing child: {line}"))?;
    // Here, not in the child: reading the index would count it in the
    // writer's peak memory.
    r.components = components(engine, dir)?;
    Ok(r)
}

/// The segments of the quarry index at `dir`, from its manifest alone:
/// opening a searcher would map every segment and check its CRC, which
/// reads all of it and counts the index's size in this process's peak
/// RSS (VmHWM), which is meant to be the writer's.
fn quarry_segments(dir: &Path) -> Result<usize, String> {
    match quarry::read::latest_manifest(dir).map_err(|e| e.to_string())? {
        Some((_, m)) => Ok(m.segments.len()),
        None => Err(format!("no manifest in {}", dir.display())),
    }
}

/// The components an index's bytes are reported by, in both engines:
/// what each engine's own accounting calls them is in [`components`].
pub const COMPONENTS: [&str; 7] = [
    "terms",
    "postings",
    "positions",
    "norms",
    "stored",
    "sort columns",
    "other",
];

/// The bytes of the index at `dir` per [`COMPONENTS`] entry, summed over
/// its segments. quarry: its segments' sections (`quarry stats`'s
/// accounting); "other" is the rest of the live files (segment headers,
/// metadata sections and directories, the manifest, tombstones). tantivy:
/// its `space_usage` (term dictionary, postings, positions, field norms,
/// doc store, fast fields; "other" is the rest of the live files: meta.json,
/// delete bitsets, footers). Opening the index reads it, so this runs
/// after the writer's peak memory is taken.
pub fn components(engine: Engine, dir: &Path) -> Result<Vec<u64>, String> {
    let mut out = vec![0u64; COMPONENTS.len()];
    let slot = |name: &str| {
        COMPONENTS
            .iter()
            .position(|c| *c == name)
            .expect("a listed component")
    };
    match engine {
        Engine::Quarry => {
            let s = quarry::Searcher::open(dir).map_err(|e| e.to_string())?;
            for (name, n) in s.snapshot().section_sizes() {
                let name = if name == "sort" { "sort columns" } else { name };
                out[slot(name)] += n;
            }
        }
        Engine::Tantivy => {
            let index = tantivy_open(dir, None).map_err(|e| e.to_string())?;
            let reader = index.reader().map_err(|e| e.to_string())?;
            let usage = reader.searcher().space_usage().map_err(|e| e.to_string())?;
            for seg in usage.segments() {
                let parts = [
                    ("terms", seg.termdict().total()),
                    ("postings", seg.postings().total()),
                    ("positions", seg.positions().total()),
                    ("norms", seg.fieldnorms().total()),
                    ("stored", seg.store().total()),
                    ("sort columns", seg.fast_fields().total()),
                ];
                for (name, n) in parts {
                    out[slot(name)] += n.get_bytes();
                }
            }
        }
    }
    let named: u64 = out.iter().sum();
    out[slot("other")] = live_bytes(engine, dir)?.saturating_sub(named);
    Ok(out)
}
