//! Shards on several machines: `quarry stats DIR --queries FILE --out
//! BLOB` (a shard's corpus statistics), `quarry stats-merge` (the
//! corpus's) and `quarry search-merge` (the shards' tsv pages into the
//! corpus's). docs/SCALE-OUT.md shows the flow.

use std::collections::BTreeMap;
use std::io::Write as _;

use quarry::CorpusStats;

use crate::cli::{self, CliError, Cmd};
use crate::search::{self, PathArgs, QueryArgs};

pub const STATS_MERGE_USAGE: &str = "\
Usage: quarry stats-merge BLOB... --out FILE

Merges the corpus statistics of the shards of one corpus (each made by
'quarry stats DIR --queries FILE --out BLOB' with the same queries and
options), given in shard order: the first BLOB's shards are shards 0, 1,
..., the next one's follow. Documents, token totals and document
frequencies are summed. A shard searched with the result ('quarry search
DIR --stats FILE --shard-id N') scores as the search of every shard does.

Options:
  --out FILE          where to write the merged statistics
  -h, --help          show this help
";

pub const SEARCH_MERGE_USAGE: &str = "\
Usage: quarry search-merge PART... [--k N] [--offset N]

Merges the tsv outputs of 'quarry search DIR --stats BLOB --shard-id I
--format tsv' of every shard of a corpus (the same queries, options and
statistics; each searched with --offset 0 and --k of at least OFFSET+N)
into the output of the search of every shard at once ('quarry search DIR...
--format tsv --offset OFFSET --k N'): per query the parts' hits sorted by
their merge_key, the page [OFFSET, OFFSET+N) of them ranked from OFFSET+1,
the total the parts' sum (a lower bound, '+', when any part's is). With
exact totals (the default --total exact) the output is the same, byte for
byte.

Options:
  --k N               hits per query [default: 10]
  --offset N          hits skipped first [default: 0]
  -h, --help          show this help
";

/// `quarry stats DIR --queries FILE --out BLOB`: the corpus statistics
/// the queries take from the index at `dir`.
pub fn export_stats(dir: &str, q: &QueryArgs, out: &str) -> Result<(), CliError> {
    let searcher = search::open_searcher(dir, &PathArgs::default())?;
    let lines = q.lines()?;
    let queries = q.maker(searcher.schema())?.all(&lines)?;
    let stats = searcher.corpus_stats(&queries)?;
    write_stats(&stats, out)
}

/// Writes `stats` to `path` and says what they hold.
fn write_stats(stats: &CorpusStats, path: &str) -> Result<(), CliError> {
    std::fs::write(path, stats.encode())
        .map_err(|e| CliError::failed(format!("cannot write {path}: {e}")))?;
    cli::print_stdout(&format!(
        "wrote {path}: corpus statistics of {} shard{} ({} documents), {} field{}, {} term{}\n",
        stats.shard_docs().len(),
        plural(stats.shard_docs().len()),
        stats.doc_count(),
        stats.field_count(),
        plural(stats.field_count()),
        stats.term_count(),
        plural(stats.term_count()),
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub fn run_stats_merge(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::StatsMerge, parse_stats_merge, |(parts, out)| {
        let parts = parts
            .iter()
            .map(CorpusStats::read)
            .collect::<Result<Vec<_>, _>>()?;
        write_stats(&CorpusStats::merge(&parts)?, out)
    })
}

/// The blobs and `--out`.
fn parse_stats_merge(p: &mut lexopt::Parser) -> Result<Option<(Vec<String>, String)>, CliError> {
    use lexopt::prelude::*;
    let (mut parts, mut out) = (Vec::new(), None);
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("out") => out = Some(cli::string_value(p, "--out")?),
            Value(v) => parts.push(cli::utf8_arg(v)?),
            other => return Err(other.unexpected().into()),
        }
    }
    if parts.is_empty() {
        return Err(CliError::usage(
            None,
            "missing the statistics BLOB to merge",
        ));
    }
    Ok(Some((parts, cli::required(out, "--out FILE")?)))
}

pub fn run_search_merge(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::SearchMerge, parse_search_merge, search_merge)
}

struct MergeArgs {
    parts: Vec<String>,
    k: usize,
    offset: usize,
}

fn parse_search_merge(p: &mut lexopt::Parser) -> Result<Option<MergeArgs>, CliError> {
    use lexopt::prelude::*;
    let mut a = MergeArgs {
        parts: Vec::new(),
        k: 10,
        offset: 0,
    };
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("k") => a.k = cli::parsed_value(p, "--k", "a non-negative integer")?,
            Long("offset") => {
                a.offset = cli::parsed_value(p, "--offset", "a non-negative integer")?
            }
            Value(v) => a.parts.push(cli::utf8_arg(v)?),
            other => return Err(other.unexpected().into()),
        }
    }
    if a.parts.is_empty() {
        return Err(CliError::usage(None, "missing the tsv PART files to merge"));
    }
    Ok(Some(a))
}

/// The columns of a part's rows (`search::SHARD_TSV_COLUMNS`).
const RANK: usize = 2;
const TOTAL: usize = 8;
const KEY: usize = 9;
const COLUMNS: usize = 10;

/// One query's lines in one part.
#[derive(Default)]
struct PartQuery {
    class: String,
    total: u64,
    exact: bool,
    /// Its hits' rows, split into columns.
    rows: Vec<Vec<String>>,
}

fn search_merge(a: &MergeArgs) -> Result<(), CliError> {
    let mut header: Option<String> = None;
    // Per query number, per part.
    let mut queries: BTreeMap<u64, Vec<PartQuery>> = BTreeMap::new();
    for (pi, path) in a.parts.iter().enumerate() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::failed(format!("cannot read {path}: {e}")))?;
        let mut lines = text.lines();
        let head = lines.next().unwrap_or_default();
        if !head.starts_with(search::SHARD_TSV_COLUMNS) {
            return Err(CliError::failed(format!(
                "{path}: not the tsv output of a shard's search (its header must start with {:?})",
                search::SHARD_TSV_COLUMNS
            )));
        }
        match &header {
            Some(h) if h != head => {
                return Err(CliError::failed(format!(
                    "{path}: its columns differ from {}'s",
                    a.parts[0]
                )));
            }
            Some(_) => {}
            None => header = Some(head.to_owned()),
        }
        let width = head.split('\t').count();
        for (li, line) in lines.enumerate() {
            let bad = |what: &str| CliError::failed(format!("{path}, line {}: {what}", li + 2));
            let cols: Vec<String> = line.split('\t').map(str::to_owned).collect();
            if cols.len() != width {
                return Err(bad(&format!("{} columns, not {width}", cols.len())));
            }
            let qno: u64 = cols[0].parse().map_err(|_| bad("no query number"))?;
            let (total, exact) = match cols[TOTAL].strip_suffix('+') {
                Some(n) => (n, false),
                None => (cols[TOTAL].as_str(), true),
            };
            let total: u64 = total.parse().map_err(|_| bad("no total"))?;
            let slot = queries.entry(qno).or_default();
            if slot.len() < pi {
                return Err(bad(&format!(
                    "query {qno} is missing from the parts before"
                )));
            }
            if slot.len() == pi {
                slot.push(PartQuery {
                    class: cols[1].clone(),
                    total,
                    exact,
                    rows: Vec::new(),
                });
            }
            let pq = &mut slot[pi];
            if pq.class != cols[1] || pq.total != total || pq.exact != exact {
                return Err(bad(&format!("query {qno}'s class or total changes")));
            }
            if cols[RANK] == "0" {
                continue;
            }
            if cols[RANK] != (pq.rows.len() + 1).to_string() {
                return Err(bad(
                    "ranks do not count from 1: search each shard with --offset 0",
                ));
            }
            pq.rows.push(cols);
        }
    }
    let header = header.expect("a part was read");
    let extra = header.split('\t').count() - COLUMNS;
    let want = a.offset.saturating_add(a.k);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    out.write_all(header.as_bytes())?;
    out.write_all(b"\n")?;
    for (qno, parts) in &queries {
        if parts.len() != a.parts.len() {
            return Err(CliError::failed(format!(
                "query {qno} is missing from {}",
                a.parts[parts.len()]
            )));
        }
        for (pq, path) in parts.iter().zip(&a.parts) {
            if pq.rows.len() < want && (pq.rows.len() as u64) < pq.total {
                return Err(CliError::failed(format!(
                    "{path}: query {qno} has {} hits of {}: search each shard with --k {want} \
                     (--offset plus --k of the merge) to merge this page",
                    pq.rows.len(),
                    pq.total
                )));
            }
        }
        let total = search::total_text(
            parts.iter().map(|p| p.total).sum(),
            parts.iter().all(|p| p.exact),
        );
        let mut rows: Vec<&Vec<String>> = parts.iter().flat_map(|p| &p.rows).collect();
        rows.sort_by(|x, y| x[KEY].cmp(&y[KEY]));
        let page: Vec<&Vec<String>> = rows.into_iter().skip(a.offset).take(a.k).collect();
        if page.is_empty() {
            let line = search::tsv_no_hit(&qno.to_string(), &parts[0].class, &total, true, extra);
            out.write_all(line.as_bytes())?;
        }
        for (r, row) in page.into_iter().enumerate() {
            let mut cols: Vec<&str> = row.iter().map(String::as_str).collect();
            let rank = (a.offset + r + 1).to_string();
            cols[RANK] = &rank;
            cols[TOTAL] = &total;
            out.write_all(cols.join("\t").as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}
