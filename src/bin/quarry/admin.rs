//! `quarry merge`, `quarry stats` (the report; the export of corpus
//! statistics is `shards::export_stats`) and `quarry check`.

use std::path::Path;

use quarry::{FieldType, IndexWriter, Searcher, WriterConfig};

use crate::cli::{self, CliError, Cmd};
use crate::search::QueryArgs;

pub const MERGE_USAGE: &str = "\
Usage: quarry merge DIR [--max-segments N]

Merges segments until at most N remain (smallest first; a lone segment with
deleted documents is rewritten without them), and commits.

Options:
  --max-segments N    segments to keep at most [default: 1]
  -h, --help          show this help
";

pub const STATS_USAGE: &str = "\
Usage: quarry stats DIR [--format text|json]
       quarry stats DIR (--query TEXT | --queries FILE.tsv) --out BLOB [QUERY OPTIONS]

Prints the newest commit's generation, documents (live, total, deleted),
segments, per text field the tokens and average length, the bytes per
segment component (postings, terms, norms, stored, sort) summed over the
segments, the segment files' bytes, and the bytes of every file in DIR.

With --query or --queries, writes instead to BLOB the corpus statistics
the queries take from the index (its documents, and the token totals,
document frequencies and expanded terms they look up), read as 'quarry
search' reads them (--field, --op, --slop, --syntax, --parse: give the
same as to the search). Merge every shard's with 'quarry stats-merge';
docs/SCALE-OUT.md shows the flow, docs/FORMAT.md the blob.

Options:
  --format FMT        text or json [default: text]
  --query TEXT        one query
  --queries FILE      queries, one 'class<TAB>text' per line
  --out BLOB          where to write the statistics
  -h, --help          show this help
";

pub const CHECK_USAGE: &str = "\
Usage: quarry check DIR

Verifies the newest commit of the index in DIR: every file's checksum, the
manifest's references (present, with the recorded lengths and document
counts), and each segment's structure (terms sorted and unique, posting
lists decoding to ascending doc ids in range with frequencies of at least
1, skip data and impacts consistent with their blocks, norms, ord arrays,
stored documents, tombstones). Prints every problem found, one per line
as FILE: WHAT, and exits 1 when there is any; prints a summary and exits
0 when the index is clean.

It only reads: no file is changed and no lock is taken, so it may run
beside a live writer (committed files are immutable; a file a commit
removed meanwhile shows as missing: check again).

Options:
  -h, --help          show this help
";

pub fn run_check(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::Check, parse_dir, |dir| check(dir))
}

/// Only the index directory.
fn parse_dir(p: &mut lexopt::Parser) -> Result<Option<String>, CliError> {
    use lexopt::prelude::*;
    let mut dir = None;
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Value(v) => cli::positional(&mut dir, v, "DIR")?,
            other => return Err(other.unexpected().into()),
        }
    }
    Ok(Some(cli::required(dir, "the index directory DIR")?))
}

fn check(dir: &str) -> Result<(), CliError> {
    let r = quarry::check::check_index(dir)?;
    let mut out = String::new();
    for p in &r.problems {
        out += &format!("{p}\n");
    }
    if !r.is_clean() {
        cli::print_stdout(&out)?;
        return Err(CliError::failed(format!(
            "{} problem(s) found in {dir}",
            r.problems.len()
        )));
    }
    cli::print_stdout(&format!(
        "ok: generation {}, {} segments, {} documents ({} deleted), {} terms, {} postings, {} files checked\n",
        r.generation.unwrap_or_default(),
        r.segments,
        r.documents,
        r.deleted,
        r.terms,
        r.postings,
        r.files
    ))
}

pub fn run_merge(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::Merge, parse_merge, |(dir, max_segments)| {
        merge(dir, *max_segments)
    })
}

/// The index directory and --max-segments.
fn parse_merge(p: &mut lexopt::Parser) -> Result<Option<(String, usize)>, CliError> {
    use lexopt::prelude::*;
    let mut dir = None;
    let mut max_segments = 1usize;
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("max-segments") => {
                max_segments = cli::parsed_value(p, "--max-segments", "a positive integer")?;
                if max_segments == 0 {
                    return Err(CliError::usage(
                        None,
                        "invalid value '0' for --max-segments: expected a positive integer",
                    ));
                }
            }
            Value(v) => cli::positional(&mut dir, v, "DIR")?,
            other => return Err(other.unexpected().into()),
        }
    }
    let dir = cli::required(dir, "the index directory DIR")?;
    Ok(Some((dir, max_segments)))
}

fn merge(dir: &str, max_segments: usize) -> Result<(), CliError> {
    let before = segment_count(Path::new(dir))?;
    let config = WriterConfig {
        merge_factor: 0,
        ..WriterConfig::default()
    };
    let mut w = IndexWriter::open(dir, config)?;
    let generation = w.merge(max_segments)?;
    drop(w);
    let after = segment_count(Path::new(dir))?;
    cli::print_stdout(&format!(
        "merged {dir}: {before} segments -> {after}, generation {generation}\n"
    ))
}

fn segment_count(dir: &Path) -> Result<usize, CliError> {
    match quarry::read::latest_manifest(dir)? {
        Some((_, m)) => Ok(m.segments.len()),
        None => Err(quarry::Error::NoIndex(dir.to_owned()).into()),
    }
}

pub fn run_stats(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::Stats, parse_stats, |a| match &a.out {
        Some(out) => crate::shards::export_stats(&a.dir, &a.queries, out),
        None => stats(&a.dir, a.json),
    })
}

struct StatsArgs {
    dir: String,
    /// --format json.
    json: bool,
    /// The queries whose statistics are exported, and where (--out).
    queries: QueryArgs,
    out: Option<String>,
}

fn parse_stats(p: &mut lexopt::Parser) -> Result<Option<StatsArgs>, CliError> {
    use lexopt::prelude::*;
    let mut dir = None;
    let mut format = None;
    let mut queries = QueryArgs::default();
    let mut out = None;
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("format") => {
                format = Some(cli::choice_value(
                    p,
                    "--format",
                    "'text' or 'json'",
                    |s| match s {
                        "text" => Some(false),
                        "json" => Some(true),
                        _ => None,
                    },
                )?)
            }
            Long("out") => out = Some(cli::string_value(p, "--out")?),
            Long(name) if QueryArgs::FLAGS.contains(&name) => {
                let name = name.to_owned();
                queries.take(&name, p)?;
            }
            Value(v) => cli::positional(&mut dir, v, "DIR")?,
            other => return Err(other.unexpected().into()),
        }
    }
    let dir = cli::required(dir, "the index directory DIR")?;
    queries.finish()?;
    match (queries.given(), &out, format) {
        (true, None, _) => {
            return Err(CliError::usage(
                None,
                "exporting statistics needs --out BLOB",
            ));
        }
        (false, Some(_), _) => {
            return Err(CliError::usage(
                None,
                "--out needs the queries: --query TEXT or --queries FILE.tsv",
            ));
        }
        (true, Some(_), Some(_)) => {
            return Err(CliError::usage(
                None,
                "--format is for the report, not for exported statistics",
            ));
        }
        _ => {}
    }
    Ok(Some(StatsArgs {
        dir,
        json: format.unwrap_or(false),
        queries,
        out,
    }))
}

fn stats(dir: &str, json: bool) -> Result<(), CliError> {
    if !Path::new(dir).is_dir() {
        return Err(CliError::failed(format!(
            "no index at {dir} (not a directory)"
        )));
    }
    let s = Searcher::open(dir)?;
    let snap = s.snapshot();
    let total = s.max_doc();
    let live = s.num_docs();

    let components = snap.section_sizes();
    let segment_bytes: u64 = snap
        .segments()
        .iter()
        .map(|seg| seg.reader.file_len() as u64)
        .sum();
    let mut disk_bytes = 0u64;
    let mut files = 0u64;
    let rd =
        std::fs::read_dir(dir).map_err(|e| CliError::failed(format!("cannot list {dir}: {e}")))?;
    for e in rd.flatten() {
        if let Ok(md) = e.metadata()
            && md.is_file()
        {
            disk_bytes += md.len();
            files += 1;
        }
    }
    let text_fields: Vec<(String, u64)> = s
        .schema()
        .iter()
        .filter(|(_, d)| d.ty == FieldType::Text)
        .map(|(id, d)| {
            let tokens = snap
                .segments()
                .iter()
                .map(|seg| seg.reader.total_tokens(id))
                .sum();
            (d.name.clone(), tokens)
        })
        .collect();

    if json {
        let v = serde_json::json!({
            "dir": dir,
            "generation": s.generation(),
            "segments": snap.segments().len(),
            "documents": {"live": live, "total": total, "deleted": total - live},
            "segment_docs": snap.segments().iter().map(|g| g.entry.doc_count).collect::<Vec<_>>(),
            "text_fields": text_fields.iter().map(|(n, t)| serde_json::json!({
                "name": n, "tokens": t, "avg_len": if total > 0 { *t as f64 / total as f64 } else { 0.0 },
            })).collect::<Vec<_>>(),
            "bytes": {
                "components": components.iter().map(|(c, n)| ((*c).to_owned(), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
                "segment_files": segment_bytes,
                "on_disk": disk_bytes,
            },
            "files_on_disk": files,
        });
        return cli::print_stdout(&format!("{v}\n"));
    }
    let mut out = String::new();
    out.push_str(&format!("index:       {dir}\n"));
    out.push_str(&format!("generation:  {}\n", s.generation()));
    out.push_str(&format!(
        "documents:   {live} live, {total} total, {} deleted\n",
        total - live
    ));
    out.push_str(&format!("segments:    {}\n", snap.segments().len()));
    out.push_str("fields:\n");
    for (_, d) in s.schema().iter() {
        let mut flags = Vec::new();
        if d.flags.stored {
            flags.push("stored");
        }
        if d.is_indexed() {
            flags.push("indexed");
        }
        if d.flags.sortable {
            flags.push("sortable");
        }
        let extra = text_fields
            .iter()
            .find(|(n, _)| *n == d.name)
            .map(|(_, t)| {
                format!(
                    "; {t} tokens, avg length {:.2}",
                    if total > 0 {
                        *t as f64 / total as f64
                    } else {
                        0.0
                    }
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "  {:<16} {:<7} {}{extra}\n",
            d.name,
            d.ty.name(),
            flags.join(" ")
        ));
    }
    out.push_str("bytes (summed over segments):\n");
    for (c, n) in &components {
        out.push_str(&format!("  {c:<16} {n:>14}\n"));
    }
    out.push_str(&format!("  {:<16} {segment_bytes:>14}\n", "segment files"));
    out.push_str(&format!(
        "  {:<16} {disk_bytes:>14}  ({files} files in {dir})\n",
        "on disk"
    ));
    cli::print_stdout(&out)
}
