//! Shared plumbing: the error type and exit codes, argument helpers, output.

use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;
use std::str::FromStr;

use lexopt::Parser;

/// The subcommands (for `help` and usage messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    Index,
    Search,
    Bench,
    Merge,
    Stats,
    StatsMerge,
    SearchMerge,
    Check,
}

impl Cmd {
    pub fn from_name(s: &str) -> Option<Cmd> {
        Some(match s {
            "index" => Cmd::Index,
            "search" => Cmd::Search,
            "bench" => Cmd::Bench,
            "merge" => Cmd::Merge,
            "stats" => Cmd::Stats,
            "stats-merge" => Cmd::StatsMerge,
            "search-merge" => Cmd::SearchMerge,
            "check" => Cmd::Check,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Cmd::Index => "index",
            Cmd::Search => "search",
            Cmd::Bench => "bench",
            Cmd::Merge => "merge",
            Cmd::Stats => "stats",
            Cmd::StatsMerge => "stats-merge",
            Cmd::SearchMerge => "search-merge",
            Cmd::Check => "check",
        }
    }

    pub fn usage(self) -> &'static str {
        match self {
            Cmd::Index => crate::index::USAGE,
            Cmd::Search => crate::search::USAGE,
            Cmd::Bench => crate::bench::USAGE,
            Cmd::Merge => crate::admin::MERGE_USAGE,
            Cmd::Stats => crate::admin::STATS_USAGE,
            Cmd::StatsMerge => crate::shards::STATS_MERGE_USAGE,
            Cmd::SearchMerge => crate::shards::SEARCH_MERGE_USAGE,
            Cmd::Check => crate::admin::CHECK_USAGE,
        }
    }
}

/// Why the program stops early.
#[derive(Debug)]
pub enum CliError {
    /// A usage error: exit code 2, with a pointer to the command's help.
    Usage { cmd: Option<Cmd>, msg: String },
    /// A failure (engine error, bad input data, I/O): exit code 1.
    Failed(String),
    /// Exit with this code without printing anything more.
    Silent(u8),
}

impl CliError {
    pub fn usage(cmd: Option<Cmd>, msg: impl Into<String>) -> CliError {
        CliError::Usage {
            cmd,
            msg: msg.into(),
        }
    }

    pub fn failed(msg: impl Into<String>) -> CliError {
        CliError::Failed(msg.into())
    }

    /// Prints the message to stderr and returns the exit code.
    pub fn report(self) -> ExitCode {
        match self {
            CliError::Usage { cmd, msg } => {
                eprintln!("quarry: {msg}");
                match cmd {
                    Some(c) => eprintln!("Try 'quarry {} --help'.", c.name()),
                    None => eprintln!("Try 'quarry --help'."),
                }
                ExitCode::from(2)
            }
            CliError::Failed(msg) => {
                eprintln!("quarry: error: {msg}");
                ExitCode::from(1)
            }
            CliError::Silent(code) => ExitCode::from(code),
        }
    }

    /// Attaches the command to a usage error that has none yet.
    pub fn in_cmd(self, c: Cmd) -> CliError {
        match self {
            CliError::Usage { cmd: None, msg } => CliError::Usage { cmd: Some(c), msg },
            other => other,
        }
    }
}

impl From<quarry::Error> for CliError {
    fn from(e: quarry::Error) -> Self {
        if let quarry::Error::Locked(dir) = &e {
            // The holder writes its pid into LOCK once it holds the lock
            // (the lock is an flock, so only a live process can hold it).
            let lock = dir.join(quarry::format::manifest::LOCK_FILE);
            let pid = std::fs::read_to_string(&lock)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok());
            if let Some(pid) = pid {
                return CliError::Failed(format!(
                    "{e} (process {pid} holds {}; it is released when that process exits)",
                    lock.display()
                ));
            }
        }
        CliError::Failed(e.to_string())
    }
}

impl From<lexopt::Error> for CliError {
    fn from(e: lexopt::Error) -> Self {
        CliError::usage(None, e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    /// Only for writes to stdout: a closed pipe ends the program quietly.
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::Silent(0)
        } else {
            CliError::Failed(format!("writing output: {e}"))
        }
    }
}

/// Prints `text` to stdout.
pub fn print_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Runs a subcommand: `parse` reads its arguments (`None`: help was asked
/// for, so the command's usage is printed instead), then `body` runs on
/// them. Usage errors from either are attributed to `cmd`.
pub fn run_cmd<A>(
    p: &mut Parser,
    cmd: Cmd,
    parse: impl FnOnce(&mut Parser) -> Result<Option<A>, CliError>,
    body: impl FnOnce(&A) -> Result<(), CliError>,
) -> Result<(), CliError> {
    match parse(p).map_err(|e| e.in_cmd(cmd))? {
        Some(args) => body(&args).map_err(|e| e.in_cmd(cmd)),
        None => print_stdout(cmd.usage()),
    }
}

/// The next option value as UTF-8.
pub fn string_value(p: &mut Parser, flag: &str) -> Result<String, CliError> {
    p.value()?.into_string().map_err(|v| {
        CliError::usage(
            None,
            format!("invalid value {v:?} for {flag}: not valid UTF-8"),
        )
    })
}

/// The next option value parsed as `T`; `what` describes what is expected.
pub fn parsed_value<T: FromStr>(p: &mut Parser, flag: &str, what: &str) -> Result<T, CliError>
where
    T::Err: Display,
{
    let s = string_value(p, flag)?;
    s.parse().map_err(|e| {
        CliError::usage(
            None,
            format!("invalid value '{s}' for {flag}: expected {what} ({e})"),
        )
    })
}

/// A positive, finite number of seconds.
pub fn seconds_value(p: &mut Parser, flag: &str) -> Result<f64, CliError> {
    let v: f64 = parsed_value(p, flag, "a number of seconds")?;
    if !v.is_finite() || v < 0.0 {
        return Err(CliError::usage(
            None,
            format!("invalid value '{v}' for {flag}: expected a non-negative number of seconds"),
        ));
    }
    Ok(v)
}

/// One of `choices` (for error messages), mapped by `f`.
pub fn choice_value<T>(
    p: &mut Parser,
    flag: &str,
    choices: &str,
    f: impl Fn(&str) -> Option<T>,
) -> Result<T, CliError> {
    let s = string_value(p, flag)?;
    f(&s).ok_or_else(|| {
        CliError::usage(
            None,
            format!("invalid value '{s}' for {flag}: expected {choices}"),
        )
    })
}

/// Stores a positional argument in `slot`, or errors when it is taken.
pub fn positional(
    slot: &mut Option<String>,
    v: std::ffi::OsString,
    what: &str,
) -> Result<(), CliError> {
    if slot.is_some() {
        return Err(CliError::usage(
            None,
            format!("unexpected extra argument {v:?} ({what} was already given)"),
        ));
    }
    *slot = Some(utf8_arg(v)?);
    Ok(())
}

/// A positional argument as UTF-8.
pub fn utf8_arg(v: std::ffi::OsString) -> Result<String, CliError> {
    v.into_string()
        .map_err(|v| CliError::usage(None, format!("argument {v:?} is not valid UTF-8")))
}

/// Errors when a required argument is missing.
pub fn required<T>(v: Option<T>, what: &str) -> Result<T, CliError> {
    v.ok_or_else(|| CliError::usage(None, format!("missing {what}")))
}

/// Escapes a value for one TSV cell: backslash, tab, newline, carriage
/// return and (inside the `sort_values` column) `|` become `\\`, `\t`,
/// `\n`, `\r` and `\|`.
pub fn tsv_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '|' => out.push_str("\\|"),
            c => out.push(c),
        }
    }
}
