//! `quarry`: the command-line front end of the quarry search core.
//!
//! It uses only the crate's public Rust API. Subcommands:
//!
//! - `index`  — create or append to an index from a JSONL file
//! - `search` — run match queries, print hits as text, TSV or JSON
//! - `bench`  — closed-loop latency / CPU benchmark per query class
//! - `merge`  — force-merge segments
//! - `stats`  — documents, segments and bytes per component; with
//!   `--queries`, a shard's corpus statistics for them
//! - `stats-merge` — the corpus statistics of several shards
//! - `search-merge` — several shards' tsv pages as the corpus's
//! - `check`  — verify every file's checksum and structure
//!
//! Exit codes: 0 success, 1 a failure (engine error, bad input data, I/O),
//! 2 a usage error (unknown flag, bad flag value, missing argument).

mod admin;
mod bench;
mod cli;
mod index;
mod search;
mod shards;

use std::process::ExitCode;

use cli::{CliError, Cmd};

const USAGE: &str = "\
quarry — full-text search core

Usage: quarry <COMMAND> [ARGS]

Commands:
  index   Create an index or append documents to it from a JSONL file
  search  Run match queries and print the hits (text, tsv or json)
  bench   Closed-loop benchmark per query class (CPU ms/query, p50, p99)
  merge   Merge segments
  stats   Documents, segments, generation and bytes per component; with
          --queries, a shard's corpus statistics for them (--out BLOB)
  stats-merge   Merge the corpus statistics of a corpus's shards
  search-merge  Merge shards' tsv search outputs into the corpus's
  check   Verify every file of the index (checksums, structure); read-only
  help    Show the usage of a command

Run 'quarry <COMMAND> --help' for the options of a command.

Exit status: 0 on success, 1 on a failure (engine error, bad input, I/O),
2 on a usage error.
";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

fn run() -> Result<(), CliError> {
    let mut p = lexopt::Parser::from_env();
    use lexopt::prelude::*;
    let cmd = match p.next()? {
        None => {
            return Err(CliError::usage(
                None,
                "missing a command (index, search, bench, merge, stats, stats-merge, search-merge, check or help)",
            ));
        }
        Some(Short('h') | Long("help")) => return cli::print_stdout(USAGE),
        Some(Short('V') | Long("version")) => {
            return cli::print_stdout(&format!("quarry {}\n", env!("CARGO_PKG_VERSION")));
        }
        Some(Value(v)) => v
            .into_string()
            .map_err(|_| CliError::usage(None, "the command name is not valid UTF-8"))?,
        Some(other) => return Err(CliError::usage(None, other.unexpected().to_string())),
    };
    match cmd.as_str() {
        "index" => index::run(&mut p),
        "search" => search::run(&mut p),
        "bench" => bench::run(&mut p),
        "merge" => admin::run_merge(&mut p),
        "stats" => admin::run_stats(&mut p),
        "stats-merge" => shards::run_stats_merge(&mut p),
        "search-merge" => shards::run_search_merge(&mut p),
        "check" => admin::run_check(&mut p),
        "help" => match p.next()? {
            None => cli::print_stdout(USAGE),
            Some(Value(v)) => {
                let name = v.to_string_lossy().into_owned();
                match Cmd::from_name(&name) {
                    Some(c) => cli::print_stdout(c.usage()),
                    None => Err(CliError::usage(None, format!("unknown command '{name}'"))),
                }
            }
            Some(other) => Err(CliError::usage(None, other.unexpected().to_string())),
        },
        other => Err(CliError::usage(
            None,
            format!(
                "unknown command '{other}' (index, search, bench, merge, stats, stats-merge, search-merge, check, help)"
            ),
        )),
    }
}
