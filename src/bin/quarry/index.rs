//! `quarry index`: create an index or append to it from a JSONL file.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quarry::{Document, FieldId, FieldType, IndexWriter, Schema, Value, WriterConfig};

use crate::cli::{self, CliError, Cmd};

pub const USAGE: &str = "\
Usage: quarry index DIR --input DOCS.jsonl [--schema SCHEMA.json] [--deletes TERMS.jsonl]
                      [--segment-docs N] [--threads N] [--merge]

Creates the index at DIR (then --schema is required) or appends to it (a
--schema given for an existing index must equal the index's schema).
Everything is committed once, at the end: when any line is rejected,
nothing of the run is committed and the index stays exactly as it was.

Each line of DOCS.jsonl (use '-' for stdin) is a JSON object keyed by field
names. text fields take a string (or an array of strings, indexed as if
joined), string fields a string, i64 fields an integer in range, f64 fields
any finite number; null means absent; blank lines are skipped. An unknown
key, a wrong type, malformed JSON or invalid UTF-8 aborts the run with the
line number.

Each line of TERMS.jsonl is a JSON object with one key, an indexed string
or i64 field, and its value: {\"id\": 17} deletes every committed document
whose id is 17. Deletes apply before the run's documents are added (so a
run can replace documents) and are committed with them, all or nothing.

Options:
  --input FILE        JSONL documents ('-' reads stdin)
  --deletes FILE      JSONL delete terms, one {\"FIELD\": value} a line
  --schema FILE       schema JSON: {\"fields\":[{\"name\":..,\"type\":\"text|string|i64|f64\",
                      \"stored\":bool,\"indexed\":bool,\"sortable\":bool,
                      \"positions\":bool,\"analyzer\":\"default|english|english_stop|
                      whitespace|keyword\"}, ..]} (positions and analyzer:
                      text fields only; the analyzer is stored in the index
                      and analyses its queries too)
  --segment-docs N    flush a segment every N documents and turn automatic
                      merging off (to get many segments)
  --threads N         analyse and invert documents on N threads beside the
                      one reading the input (default 1; 0: on that thread);
                      documents keep the input order, so searches return
                      what a one-thread build returns
  --merge             force-merge to one segment after the commit
  -h, --help          show this help

Prints a progress line on stderr when stderr is a terminal, and a one-line
summary on stdout.
";

struct Args {
    dir: String,
    schema: Option<String>,
    input: String,
    deletes: Option<String>,
    segment_docs: Option<u32>,
    threads: usize,
    merge: bool,
}

/// The positive integer value of `flag`.
fn positive<T>(p: &mut lexopt::Parser, flag: &str) -> Result<T, CliError>
where
    T: std::str::FromStr + Default + PartialEq,
    T::Err: std::fmt::Display,
{
    let n: T = cli::parsed_value(p, flag, "a positive integer")?;
    if n == T::default() {
        return Err(CliError::usage(
            None,
            format!("invalid value '0' for {flag}: expected a positive integer"),
        ));
    }
    Ok(n)
}

fn parse(p: &mut lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let (mut dir, mut schema, mut input, mut deletes, mut segment_docs, mut merge) =
        (None, None, None, None, None, false);
    let mut threads = 1usize;
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("schema") => schema = Some(cli::string_value(p, "--schema")?),
            Long("input") => input = Some(cli::string_value(p, "--input")?),
            Long("deletes") => deletes = Some(cli::string_value(p, "--deletes")?),
            Long("segment-docs") => segment_docs = Some(positive(p, "--segment-docs")?),
            Long("threads") => threads = cli::parsed_value(p, "--threads", "an integer")?,
            Long("merge") => merge = true,
            Value(v) => cli::positional(&mut dir, v, "DIR")?,
            other => return Err(other.unexpected().into()),
        }
    }
    Ok(Some(Args {
        dir: cli::required(dir, "the index directory DIR")?,
        input: cli::required(input, "--input DOCS.jsonl")?,
        schema,
        deletes,
        segment_docs,
        threads,
        merge,
    }))
}

pub fn run(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::Index, parse, run_args)
}

fn run_args(args: &Args) -> Result<(), CliError> {
    let dir = PathBuf::from(&args.dir);

    let schema = match &args.schema {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::failed(format!("cannot read schema file {path}: {e}")))?;
            Some(
                Schema::from_json(&text)
                    .map_err(|e| CliError::failed(format!("schema file {path}: {e}")))?,
            )
        }
        None => None,
    };

    // What the directory holds before the run, so that a failed run can be
    // undone completely (the writer commits an empty index on creation, and
    // segments flushed mid-run stay on disk until the next commit).
    let before = Before::look(&dir)?;
    if !before.has_index && schema.is_none() {
        return Err(CliError::usage(
            Some(Cmd::Index),
            format!("no index at {}; give --schema to create one", dir.display()),
        ));
    }

    let deletes = match &args.deletes {
        Some(path) => Some(
            std::fs::File::open(path)
                .map_err(|e| CliError::failed(format!("cannot open delete terms {path}: {e}")))?,
        ),
        None => None,
    };
    let input: Box<dyn Read> = if args.input == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(&args.input)
                .map_err(|e| CliError::failed(format!("cannot open input {}: {e}", args.input)))?,
        )
    };

    let mut config = WriterConfig {
        indexing_threads: args.threads,
        ..WriterConfig::default()
    };
    if let Some(n) = args.segment_docs {
        config.max_docs_per_segment = Some(n);
        config.merge_factor = 0;
    }
    let start = Instant::now();
    // Open or create as `before` found DIR, not as it is by now: the undo
    // of a failed run removes everything of a new index, so the run must
    // not append to an index another writer created in the meantime (that
    // is then IndexExists).
    let opened = if before.has_index {
        IndexWriter::open(&dir, config).and_then(|w| match &schema {
            Some(s) if s != w.schema() => Err(quarry::Error::Schema(format!(
                "the schema given differs from the schema of the index at {}",
                dir.display()
            ))),
            _ => Ok(w),
        })
    } else {
        let s = schema
            .as_ref()
            .expect("checked above: a new index needs a schema");
        IndexWriter::create(&dir, s, config)
    };
    let mut writer = match opened {
        Ok(w) => w,
        Err(e) => {
            // Locked or IndexExists: another writer is at work in DIR, and
            // nothing there is this run's to remove.
            if !matches!(e, quarry::Error::Locked(_) | quarry::Error::IndexExists(_)) {
                before.undo_failed_open(&dir);
            }
            return Err(e.into());
        }
    };
    let deleted = match &deletes {
        Some(file) => {
            match load_deletes(&mut writer, file, args.deletes.as_deref().unwrap_or("")) {
                Ok(n) => Some(n),
                Err(e) => {
                    before.undo(&dir, writer);
                    return Err(e);
                }
            }
        }
        None => None,
    };
    let added = match load(&mut writer, input, &args.input) {
        Ok(n) => n,
        Err(e) => {
            before.undo(&dir, writer);
            return Err(e);
        }
    };
    if let Err(e) = writer.commit() {
        // A commit can fail after publishing (e.g. in the automatic merge
        // that follows): then the documents are in, and nothing is undone.
        let published = writer.generation() > before.generation.unwrap_or(1);
        if published {
            return Err(CliError::failed(format!(
                "the documents were committed (generation {}), but then: {e}",
                writer.generation()
            )));
        }
        before.undo(&dir, writer);
        return Err(e.into());
    }
    if args.merge {
        writer.merge(1)?;
    }
    let generation = writer.generation();
    drop(writer);
    let secs = start.elapsed().as_secs_f64();
    let (segments, live) = match quarry::read::latest_manifest(&dir)? {
        Some((_, m)) => (
            m.segments.len(),
            m.segments
                .iter()
                .map(|s| u64::from(s.doc_count - s.del_count))
                .sum::<u64>(),
        ),
        None => (0, 0),
    };
    let deleted = deleted.map_or(String::new(), |n| format!(", {n} delete terms"));
    cli::print_stdout(&format!(
        "indexed {added} docs{deleted} in {secs:.3} s ({:.0} docs/s); index {}: {live} docs, {segments} segments, generation {generation}\n",
        added as f64 / secs.max(1e-9),
        dir.display(),
    ))
}

/// The state of the index directory before the run.
struct Before {
    has_index: bool,
    /// The generation of the index before the run.
    generation: Option<u64>,
    dir_existed: bool,
    names: HashSet<std::ffi::OsString>,
}

impl Before {
    fn look(dir: &Path) -> Result<Before, CliError> {
        let dir_existed = dir.exists();
        let mut names = HashSet::new();
        let mut generation = None;
        if dir_existed {
            generation = quarry::read::latest_manifest(dir)?.map(|(_, m)| m.generation);
            let rd = std::fs::read_dir(dir)
                .map_err(|e| CliError::failed(format!("cannot list {}: {e}", dir.display())))?;
            for e in rd.flatten() {
                names.insert(e.file_name());
            }
        }
        Ok(Before {
            has_index: generation.is_some(),
            generation,
            dir_existed,
            names,
        })
    }

    /// Puts the directory back as it was after the run failed before
    /// committing: removes the files this run created (uncommitted segments
    /// and tombstones; for a new index, everything). Everything is removed
    /// while `writer` still holds the lock, so no other writer's files can
    /// be mistaken for this run's.
    fn undo(&self, dir: &Path, mut writer: IndexWriter) {
        if self.has_index {
            // The index's last commit is the one from before the run: the
            // writer removes every file it does not reference. (The listing
            // in `self.names` is not used: it was taken before the lock, and
            // a writer that committed in between owns files it lacks.)
            writer.rollback();
            return;
        }
        // A new index: this run created every quarry file in DIR, once its
        // indexing threads stopped writing them.
        writer.discard();
        if !self.dir_existed {
            let _ = std::fs::remove_dir_all(dir);
        } else {
            self.remove_new(dir);
        }
        drop(writer);
    }

    /// Undoes what a failed creation of a new index left (the directory,
    /// LOCK, a partial first commit). An existing index is left alone.
    fn undo_failed_open(&self, dir: &Path) {
        if self.has_index {
            return;
        }
        if !self.dir_existed {
            let _ = std::fs::remove_dir_all(dir);
        } else {
            self.remove_new(dir);
        }
    }

    fn remove_new(&self, dir: &Path) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let s = name.to_string_lossy();
            let ours = s.starts_with("seg-") || s.starts_with("manifest-") || s == "LOCK";
            if ours && !self.names.contains(&name) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Reads the delete terms and queues their deletes. Returns their number.
fn load_deletes(
    writer: &mut IndexWriter,
    file: &std::fs::File,
    name: &str,
) -> Result<u64, CliError> {
    let schema = writer.schema().clone();
    let mut terms = 0u64;
    for_each_line(BufReader::new(file), name, |text, at| {
        let (field, value) = to_delete_term(text, &schema).map_err(at)?;
        writer
            .delete_term(field, &value)
            .map_err(|e| at(e.to_string()))?;
        terms += 1;
        Ok(())
    })?;
    Ok(terms)
}

/// Calls `f` with each non-blank line of `reader` (the input named
/// `name`) and a function that turns a message into an error naming the
/// line; stops at the first error. Invalid UTF-8 is an error naming the
/// line and byte.
fn for_each_line(
    mut reader: impl BufRead,
    name: &str,
    mut f: impl FnMut(&str, &dyn Fn(String) -> CliError) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let mut line = Vec::new();
    let mut lineno = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| {
            CliError::failed(format!("{name}: read error after line {lineno}: {e}"))
        })?;
        if n == 0 {
            return Ok(());
        }
        lineno += 1;
        let at = |msg: String| CliError::failed(format!("{name}, line {lineno}: {msg}"));
        let text = std::str::from_utf8(&line).map_err(|e| {
            at(format!(
                "invalid UTF-8 at byte {} of the line",
                e.valid_up_to()
            ))
        })?;
        if text.trim().is_empty() {
            continue;
        }
        f(text, &at)?;
    }
}

/// Parses one JSONL line, its error naming the column.
fn parse_json_line(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text.trim_end_matches(['\n', '\r'])).map_err(|e| {
        // serde_json's message ends with its own " at line 1 column N".
        let msg = e.to_string();
        let msg = msg
            .rsplit_once(" at line ")
            .map_or(msg.as_str(), |(m, _)| m);
        format!("malformed JSON at column {}: {msg}", e.column())
    })
}

/// Parses one delete-term line: `{"FIELD": value}`.
fn to_delete_term(text: &str, schema: &Schema) -> Result<(FieldId, Value), String> {
    let v = parse_json_line(text)?;
    let serde_json::Value::Object(map) = v else {
        return Err(format!(
            "expected a JSON object with one field, got {}",
            kind(&v)
        ));
    };
    let mut entries = map.into_iter();
    let (Some((key, value)), None) = (entries.next(), entries.next()) else {
        return Err("a delete term is an object with exactly one field".into());
    };
    let id = schema
        .field(&key)
        .ok_or_else(|| format!("unknown field {key:?}"))?;
    let def = schema.get(id).expect("field from the schema");
    if !def.flags.indexed || !matches!(def.ty, FieldType::String | FieldType::I64) {
        return Err(format!(
            "field {key:?} cannot be deleted by: deletes need an indexed string or i64 field"
        ));
    }
    let value = match (def.ty, value) {
        (FieldType::String, serde_json::Value::String(s)) => Value::Str(s),
        (FieldType::I64, serde_json::Value::Number(n)) if n.as_i64().is_some() => {
            Value::I64(n.as_i64().expect("checked"))
        }
        (FieldType::I64, serde_json::Value::Number(n)) => {
            return Err(format!(
                "field {key:?} is i64, got {n}, which is not an integer in the i64 range"
            ));
        }
        (ty, other) => {
            return Err(format!(
                "field {key:?} is {}, got {}",
                ty.name(),
                kind(&other)
            ));
        }
    };
    Ok((id, value))
}

/// How a JSON key maps to the schema.
struct FieldSlot {
    id: FieldId,
    ty: FieldType,
}

/// Reads every line and adds its document. Returns the number of documents.
fn load(writer: &mut IndexWriter, input: Box<dyn Read>, input_name: &str) -> Result<u64, CliError> {
    let schema = writer.schema().clone();
    let slots: HashMap<String, FieldSlot> = schema
        .iter()
        .map(|(id, def)| (def.name.clone(), FieldSlot { id, ty: def.ty }))
        .collect();
    let mut doc = Document::new();
    let mut added = 0u64;
    let progress = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut last_report = start;
    for_each_line(
        BufReader::with_capacity(1 << 20, input),
        input_name,
        |text, at| {
            to_document(text, &schema, &slots, &mut doc).map_err(at)?;
            writer.add_document(&doc).map_err(|e| at(e.to_string()))?;
            added += 1;
            if progress
                && added.is_multiple_of(1024)
                && last_report.elapsed() >= Duration::from_millis(250)
            {
                last_report = Instant::now();
                let secs = start.elapsed().as_secs_f64();
                eprint!(
                    "\r{input_name}: {added} docs, {:.0} docs/s\x1b[K",
                    added as f64 / secs.max(1e-9)
                );
                let _ = std::io::stderr().flush();
            }
            Ok(())
        },
    )?;
    if progress {
        eprint!("\r\x1b[K");
        let _ = std::io::stderr().flush();
    }
    Ok(added)
}

/// Parses one JSONL line into `doc`.
fn to_document(
    text: &str,
    schema: &Schema,
    slots: &HashMap<String, FieldSlot>,
    doc: &mut Document,
) -> Result<(), String> {
    let v = parse_json_line(text)?;
    let serde_json::Value::Object(map) = v else {
        return Err(format!("expected a JSON object, got {}", kind(&v)));
    };
    doc.clear();
    for (key, value) in map {
        let Some(slot) = slots.get(&key) else {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name.as_str()).collect();
            return Err(format!(
                "unknown field {key:?} (the schema has: {})",
                names.join(", ")
            ));
        };
        let wrong =
            |v: &serde_json::Value| format!("field {key:?} is {}, got {}", slot.ty.name(), kind(v));
        match (slot.ty, value) {
            (_, serde_json::Value::Null) => {}
            (FieldType::Text | FieldType::String, serde_json::Value::String(s)) => {
                doc.add(slot.id, Value::Str(s));
            }
            (FieldType::Text, serde_json::Value::Array(items)) => {
                for item in items {
                    match item {
                        serde_json::Value::String(s) => {
                            doc.add(slot.id, Value::Str(s));
                        }
                        serde_json::Value::Null => {}
                        other => {
                            return Err(format!(
                                "field {key:?} is text, got an array holding {}",
                                kind(&other)
                            ));
                        }
                    }
                }
            }
            (FieldType::I64, serde_json::Value::Number(n)) => {
                let v = if let Some(i) = n.as_i64() {
                    i
                } else if n.is_u64()
                    || n.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18)
                {
                    return Err(format!(
                        "field {key:?} is i64, got {n}, which is outside the i64 range"
                    ));
                } else {
                    return Err(format!(
                        "field {key:?} is i64, got the non-integer number {n}"
                    ));
                };
                doc.add(slot.id, Value::I64(v));
            }
            (FieldType::F64, serde_json::Value::Number(n)) => {
                let v = n.as_f64().filter(|v| v.is_finite()).ok_or_else(|| {
                    format!("field {key:?} is f64, got the non-finite number {n}")
                })?;
                doc.add(slot.id, Value::F64(v));
            }
            (_, other) => return Err(wrong(&other)),
        }
    }
    Ok(())
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(n) if n.is_f64() => "a non-integer number",
        serde_json::Value::Number(_) => "an integer",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
