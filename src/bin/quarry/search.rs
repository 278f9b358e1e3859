//! `quarry search`: run match or parsed queries and print the hits.
//!
//! Also the pieces `bench` shares: query files, sort specs, field lookup.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use quarry::{
    Escape, ExecMode, FieldId, FieldType, HighlightOptions, Hit, Hits, Operator, ParserConfig,
    Query, Schema, SearchOptions, SearchRequest, Searcher, SortKey, SortSpec, Switch, TotalMode,
    Value,
};

use crate::cli::{self, CliError, Cmd};

pub const USAGE: &str = "\
Usage: quarry search DIR QUERY [OPTIONS]
       quarry search DIR... (--query TEXT | --queries FILE.tsv) [OPTIONS]
       quarry search DIR --stats BLOB --shard-id N (--query TEXT | --queries FILE.tsv) [OPTIONS]

Runs each query as a match query (the text is analysed like the indexed
text) on --field, its terms combined with --op, or with --syntax parser in
the query syntax of docs/QUERY-SYNTAX.md. The query is QUERY, --query TEXT,
or each line of --queries FILE.tsv, whose lines are 'class<TAB>query text'
(blank lines and lines starting with '#' are skipped).

Positional arguments: with --query or --queries every one is an index
directory; without them there are exactly two, DIR and QUERY.

Several directories are the shards of one corpus, split by document order
(their schemas must be the same): they are searched as one index holding
their documents in the order given would be, with the same hits, scores
and totals (statistics summed over the shards, ties to the lower shard,
then document), and each hit names its shard (its position among the
directories, from 0). With --stats, DIR is shard N of the corpus whose
statistics BLOB holds (made by 'quarry stats DIR --queries FILE --out
BLOB' on every shard and 'quarry stats-merge'): its hits have the scores
and document numbers of the search of every shard, and 'quarry
search-merge' turns the shards' tsv outputs (each searched with --offset 0
and --k OFFSET+K) into that search's output (docs/SCALE-OUT.md).

Options:
  --query TEXT        the one query (class '-')
  --queries FILE      queries, one 'class<TAB>text' per line
  --stats BLOB        score with the corpus statistics in BLOB, as shard
                      --shard-id of that corpus (one DIR)
  --shard-id N        the shard number of DIR in BLOB's corpus (from 0)
  --syntax terms|parser
                      terms: the text is a bag of words, analysed and
                      combined with --op (any text is valid); parser: the
                      query syntax (fields, +/-, AND/OR/NOT, parentheses,
                      \"phrases\", [a TO b] ranges, prefix*, boosts^2),
                      with --field the default field and --op the default
                      operator; a malformed query fails naming its byte
                      position [default: terms]
  --parse             the same as --syntax parser
  --field NAME        the field searched [default: body]
  --op and|or|phrase  how the query's terms combine [default: or]; phrase:
                      the whole text is one phrase (its tokens in order,
                      see --slop; --syntax terms only)
  --slop N            with --op phrase, how many moves the tokens may be
                      out of place [default: 0]
  --k N               hits per query [default: 10]
  --offset N          hits skipped first (paging) [default: 0]
  --sort SPEC         sort order: a comma list of 'score', 'doc' or a
                      sortable field name, each optionally ':asc' or ':desc'
                      (default desc for score, asc otherwise), e.g.
                      'year:desc,score' or 'category,year:desc'. Ties go to
                      the lower document number.
  --total MODE        exact: count every match; lower-bound: the search
                      may skip documents that cannot enter the page, and
                      the total then counts only what it visited; N: count
                      exactly up to N matches, then as lower-bound
                      [default: exact, so that the output is the same on
                      every path and segment layout; the library's default
                      is 1000]
  --id-field NAME     print this stored field as the hit id [default: the
                      internal document number]
  --exec MODE         execution path: auto, exhaustive or daat [default:
                      $QUARRY_EXEC, else auto]
  --search-threads N  threads one search runs its segments on, sharing
                      the k-th best score: the same hits [default:
                      $QUARRY_SEARCH_THREADS, else 1]
  --path NAME=auto|off
                      the kill switch of one fast path of --exec auto
                      (repeatable; the last one per NAME wins): term-topk
                      (single terms block by block), block-max-or
                      (disjunctions by block-max MaxScore), bulk-and
                      (conjunctions intersected in bulk). off sends the
                      path's queries document-at-a-time: the same hits,
                      only the speed and a lower-bound total may differ
                      [default: $QUARRY_TERM_TOPK, $QUARRY_BLOCK_MAX_OR,
                      $QUARRY_BULK_AND, else auto]
  --format FMT        text, tsv or json [default: text]
  --highlight FIELD   print each hit's excerpt of the stored text or
                      string field FIELD around its best match for the
                      query, matched tokens between --pre and --post (a
                      string value is one token, marked when a query term
                      equals it), at most --highlight-len bytes of the
                      value, --highlight-ellipsis where it is cut (no
                      match: the value's start; no value: empty)
  --pre STR, --post STR
                      the excerpt's markers [default: <b> and </b>]
  --highlight-len N   the excerpt's length limit in bytes of the stored
                      value, not counting markers, ellipses or escapes
                      [default: 200]
  --highlight-ellipsis STR
                      written where the excerpt cuts the value [default: …]
  --highlight-escape none|html
                      html: the stored text in the excerpt is HTML-escaped
                      (& < > \" ' as &amp; &lt; &gt; &quot; &#39;), the
                      markers and the ellipsis are printed as given
                      [default: none, the text as stored]
  -h, --help          show this help

Output formats:
  tsv   a header line, then one line per hit:
          qno class rank id score score_bits total_hits [sort_values]
        (tab-separated); with several DIRs or --stats:
          qno class rank shard shard_doc id score score_bits total_hits
          merge_key [sort_values]
        qno counts queries from 1 in file order; class is
        '-' for a single QUERY; rank counts from 1; shard is the hit's
        shard (from 0), shard_doc its document number in that shard's
        index (id is, by default, its number in the corpus: the shards'
        documents one after the other); merge_key is the hit's merge key
        in hex (hits of one query sort by it, as strings, in their order,
        whichever shard they come from); score is the shortest
        decimal that reads back as the same f32; score_bits its IEEE bits as
        8 hex digits; total_hits the number of matches (followed by '+'
        when it is a lower bound, with --total lower-bound or N). With
        --sort, sort_values holds the hit's sort values joined by '|' (a
        missing value is empty). A query with no hit on the page prints one line
        with rank 0, id '-', score 0 and score_bits 00000000 (and shard,
        shard_doc and merge_key '-'). With
        --highlight, a last column 'excerpt' holds the excerpt. Tabs,
        newlines, '\\' and '|' inside values are escaped as \\t \\n \\\\ \\|.
  json  one JSON object per query and line: qno, class, query, total_hits,
        total_is_exact, hits [{rank, doc, id, score, score_bits, shard?,
        shard_doc?, merge_key?, title?, sort_values?, excerpt?}] (shard,
        shard_doc and merge_key as in tsv, with several DIRs or --stats).
  text  for people: per query a heading, then rank, id, score and the
        stored title (when a stored field named 'title' exists), and with
        --highlight the excerpt on the next line.
";

/// One query of a query file (or the single QUERY).
#[derive(Clone, Debug)]
pub struct QueryLine {
    pub class: String,
    pub text: String,
}

/// Reads a `class<TAB>query text` file.
pub fn read_queries(path: &str) -> Result<Vec<QueryLine>, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::failed(format!("cannot read queries file {path}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        CliError::failed(format!("{path}, line {line}: invalid UTF-8"))
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (class, q) = line.split_once('\t').ok_or_else(|| {
            CliError::failed(format!(
                "{path}, line {}: expected 'class<TAB>query text'",
                i + 1
            ))
        })?;
        out.push(QueryLine {
            class: class.to_owned(),
            text: q.to_owned(),
        });
    }
    if out.is_empty() {
        return Err(CliError::failed(format!("{path}: no queries")));
    }
    Ok(out)
}

/// A sort rule as written on the command line, before the schema is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRule {
    pub key: String,
    pub descending: bool,
}

/// Parses `year:desc,score` into rules (syntax only).
pub fn parse_sort(spec: &str) -> Result<Vec<RawRule>, CliError> {
    let bad =
        |msg: String| CliError::usage(None, format!("invalid value '{spec}' for --sort: {msg}"));
    let mut rules = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad("empty rule".into()));
        }
        let (key, dir) = match part.rsplit_once(':') {
            Some((k, d)) => (k, Some(d)),
            None => (part, None),
        };
        let descending = match dir {
            None => key == "score",
            Some("desc") => true,
            Some("asc") => false,
            Some(d) => return Err(bad(format!("direction '{d}' is not 'asc' or 'desc'"))),
        };
        if key.is_empty() {
            return Err(bad("a rule needs a key".into()));
        }
        rules.push(RawRule {
            key: key.to_owned(),
            descending,
        });
    }
    Ok(rules)
}

/// Resolves rules against the schema: field names must be sortable fields.
pub fn resolve_sort(rules: &[RawRule], schema: &Schema) -> Result<SortSpec, CliError> {
    let mut spec = SortSpec::new();
    for r in rules {
        let key = match r.key.as_str() {
            "score" => SortKey::Score,
            "doc" => SortKey::Doc,
            name => {
                let id = field_id(schema, name, "--sort")?;
                if !schema.def(id).flags.sortable {
                    return Err(CliError::usage(
                        None,
                        format!(
                            "--sort: field '{name}' is not sortable (sortable: {})",
                            sortable_names(schema)
                        ),
                    ));
                }
                SortKey::Field(id)
            }
        };
        spec.push(key, r.descending);
    }
    Ok(spec)
}

fn sortable_names(schema: &Schema) -> String {
    let v: Vec<&str> = schema
        .fields()
        .iter()
        .filter(|f| f.flags.sortable)
        .map(|f| f.name.as_str())
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The id of the field `name`, or a usage error listing the fields.
pub fn field_id(schema: &Schema, name: &str, flag: &str) -> Result<FieldId, CliError> {
    schema.field(name).ok_or_else(|| {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name.as_str()).collect();
        CliError::usage(
            None,
            format!(
                "{flag}: no field '{name}' in the index (fields: {})",
                names.join(", ")
            ),
        )
    })
}

/// The field a match query runs on: text, or an indexed string field.
pub fn search_field(schema: &Schema, name: &str) -> Result<FieldId, CliError> {
    let id = field_id(schema, name, "--field")?;
    let def = schema.def(id);
    if !(def.ty == FieldType::Text || (def.ty == FieldType::String && def.flags.indexed)) {
        return Err(CliError::usage(
            None,
            format!(
                "--field: '{name}' is {}; match queries need a text or indexed string field",
                def.ty.name()
            ),
        ));
    }
    Ok(id)
}

pub fn parse_op(s: &str) -> Option<Operator> {
    match s {
        "and" | "AND" => Some(Operator::And),
        "or" | "OR" => Some(Operator::Or),
        _ => None,
    }
}

/// The value of `--exec`.
pub fn exec_value(p: &mut lexopt::Parser) -> Result<ExecMode, CliError> {
    cli::choice_value(
        p,
        "--exec",
        "'auto', 'exhaustive' or 'daat'",
        ExecMode::from_name,
    )
}

/// A fast path of `--exec auto` with a kill switch (`--path NAME=...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    TermTopk,
    BlockMaxOr,
    BulkAnd,
}

impl FastPath {
    pub const ALL: [FastPath; 3] = [FastPath::TermTopk, FastPath::BlockMaxOr, FastPath::BulkAnd];

    pub fn name(self) -> &'static str {
        match self {
            FastPath::TermTopk => "term-topk",
            FastPath::BlockMaxOr => "block-max-or",
            FastPath::BulkAnd => "bulk-and",
        }
    }

    fn from_name(s: &str) -> Option<FastPath> {
        FastPath::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The path's switch in `o`.
    pub fn get(self, o: &SearchOptions) -> Switch {
        match self {
            FastPath::TermTopk => o.term_topk,
            FastPath::BlockMaxOr => o.block_max_or,
            FastPath::BulkAnd => o.bulk_and,
        }
    }

    /// The path's switch in `o`, to set it.
    pub fn switch(self, o: &mut SearchOptions) -> &mut Switch {
        match self {
            FastPath::TermTopk => &mut o.term_topk,
            FastPath::BlockMaxOr => &mut o.block_max_or,
            FastPath::BulkAnd => &mut o.bulk_and,
        }
    }
}

/// `auto` or `off`, as `--path` prints it.
pub fn switch_name(s: Switch) -> &'static str {
    match s {
        Switch::Auto => "auto",
        Switch::Off => "off",
    }
}

/// The value of `--search-threads`: a count from 1.
pub fn threads_value(p: &mut lexopt::Parser) -> Result<usize, CliError> {
    let n: usize = cli::parsed_value(p, "--search-threads", "a count from 1")?;
    if n == 0 {
        return Err(CliError::usage(
            None,
            "invalid value '0' for --search-threads: expected a count from 1".to_string(),
        ));
    }
    Ok(n)
}

/// The value of `--path`: `NAME=auto|off`.
pub fn path_value(p: &mut lexopt::Parser) -> Result<(FastPath, Switch), CliError> {
    let s = cli::string_value(p, "--path")?;
    let names = FastPath::ALL.map(FastPath::name).join(", ");
    let bad = |msg: String| CliError::usage(None, format!("invalid value '{s}' for --path: {msg}"));
    let Some((name, value)) = s.split_once('=') else {
        return Err(bad(format!("expected NAME=auto|off, NAME one of {names}")));
    };
    let path = FastPath::from_name(name)
        .ok_or_else(|| bad(format!("unknown path '{name}' (paths: {names})")))?;
    let switch = Switch::from_name(value)
        .ok_or_else(|| bad(format!("expected 'auto' or 'off' after '=', not '{value}'")))?;
    Ok((path, switch))
}

/// `--exec` and `--path` as given: overrides of the environment's options.
#[derive(Clone, Debug, Default)]
pub struct PathArgs {
    pub exec: Option<ExecMode>,
    /// `--search-threads`.
    pub threads: Option<usize>,
    /// In command-line order (a later setting of a path wins).
    pub paths: Vec<(FastPath, Switch)>,
}

impl PathArgs {
    /// `o` with these overrides.
    pub fn apply(&self, mut o: SearchOptions) -> SearchOptions {
        if let Some(m) = self.exec {
            o.exec = m;
        }
        if let Some(n) = self.threads {
            o.threads = n;
        }
        for &(path, switch) in &self.paths {
            *path.switch(&mut o) = switch;
        }
        o
    }
}

/// Opens the searcher, with `--exec` and `--path` (when given) overriding
/// the environment.
pub fn open_searcher(dir: &str, paths: &PathArgs) -> Result<Searcher, CliError> {
    open_shards(std::slice::from_ref(&dir.to_owned()), paths)
}

/// Opens one searcher over the index directories `dirs` (shards of one
/// corpus when there are several), with `--exec` and `--path` overriding
/// the environment.
pub fn open_shards(dirs: &[String], paths: &PathArgs) -> Result<Searcher, CliError> {
    for dir in dirs {
        if !Path::new(dir).is_dir() {
            return Err(CliError::failed(format!(
                "no index at {dir} (not a directory)"
            )));
        }
    }
    let s = Searcher::open_many(dirs)?;
    let options = paths.apply(s.options().clone());
    Ok(s.with_options(options))
}

/// How a query's text is read (`--syntax`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    /// A match query: analysed words combined with `--op`.
    Terms,
    /// The query parser.
    Parser,
}

/// Where the queries come from and how their text becomes a query: the
/// options `search` and `stats` share (`--query`, `--queries`, `--field`,
/// `--op`, `--slop`, `--syntax`, `--parse`).
#[derive(Clone, Debug)]
pub struct QueryArgs {
    /// `--query TEXT`, or the QUERY of `quarry search DIR QUERY`.
    pub query: Option<String>,
    /// `--queries FILE`.
    pub queries: Option<String>,
    field: String,
    op: Operator,
    /// `--op phrase`: the text is one phrase with this slop.
    phrase: Option<u32>,
    slop: Option<u32>,
    syntax: Syntax,
}

impl Default for QueryArgs {
    fn default() -> Self {
        QueryArgs {
            query: None,
            queries: None,
            field: "body".into(),
            op: Operator::Or,
            phrase: None,
            slop: None,
            syntax: Syntax::Terms,
        }
    }
}

impl QueryArgs {
    /// The long options these arguments take (without their dashes).
    pub const FLAGS: [&'static str; 7] =
        ["query", "queries", "field", "op", "slop", "syntax", "parse"];

    /// Reads option `name` (one of [`Self::FLAGS`]) and its value.
    pub fn take(&mut self, name: &str, p: &mut lexopt::Parser) -> Result<(), CliError> {
        match name {
            "query" => self.query = Some(cli::string_value(p, "--query")?),
            "queries" => self.queries = Some(cli::string_value(p, "--queries")?),
            "field" => self.field = cli::string_value(p, "--field")?,
            "op" => {
                let op = cli::choice_value(p, "--op", "'and', 'or' or 'phrase'", |s| match s {
                    "phrase" | "PHRASE" => Some(None),
                    _ => parse_op(s).map(Some),
                })?;
                match op {
                    Some(op) => (self.op, self.phrase) = (op, None),
                    None => self.phrase = Some(0),
                }
            }
            "slop" => self.slop = Some(cli::parsed_value(p, "--slop", "a non-negative integer")?),
            "syntax" => {
                self.syntax =
                    cli::choice_value(p, "--syntax", "'terms' or 'parser'", |s| match s {
                        "terms" => Some(Syntax::Terms),
                        "parser" => Some(Syntax::Parser),
                        _ => None,
                    })?
            }
            "parse" => self.syntax = Syntax::Parser,
            other => unreachable!("--{other} is not a query option"),
        }
        Ok(())
    }

    /// Whether `--query` or `--queries` was given.
    pub fn given(&self) -> bool {
        self.query.is_some() || self.queries.is_some()
    }

    /// Checks the options together, once all are read.
    pub fn finish(&mut self) -> Result<(), CliError> {
        match (self.phrase, self.slop) {
            (None, Some(_)) => return Err(CliError::usage(None, "--slop needs --op phrase")),
            (Some(_), slop) => {
                if self.syntax == Syntax::Parser {
                    return Err(CliError::usage(
                        None,
                        "--op phrase reads the text as one phrase, so it needs --syntax terms (quote phrases with --parse)",
                    ));
                }
                self.phrase = Some(slop.unwrap_or(0));
            }
            (None, None) => {}
        }
        if self.query.is_some() && self.queries.is_some() {
            return Err(CliError::usage(
                None,
                "give one query (QUERY or --query TEXT) or --queries FILE.tsv, not both",
            ));
        }
        Ok(())
    }

    /// The queries: the one query (class `-`) or the lines of the file.
    pub fn lines(&self) -> Result<Vec<QueryLine>, CliError> {
        match (&self.query, &self.queries) {
            (Some(q), _) => Ok(vec![QueryLine {
                class: "-".into(),
                text: q.clone(),
            }]),
            (None, Some(path)) => read_queries(path),
            (None, None) => Err(CliError::usage(
                None,
                "give a query: --query TEXT or --queries FILE.tsv",
            )),
        }
    }

    /// What turns the lines into queries of `schema`.
    pub fn maker<'a>(&'a self, schema: &'a Schema) -> Result<QueryMaker<'a>, CliError> {
        let field = match self.syntax {
            Syntax::Terms => search_field(schema, &self.field)?,
            Syntax::Parser => field_id(schema, &self.field, "--field")?,
        };
        Ok(QueryMaker {
            args: self,
            schema,
            field,
            config: ParserConfig::new(field, self.op),
        })
    }
}

/// Turns query lines into queries of one schema ([`QueryArgs::maker`]).
pub struct QueryMaker<'a> {
    args: &'a QueryArgs,
    schema: &'a Schema,
    field: FieldId,
    config: ParserConfig,
}

impl QueryMaker<'_> {
    /// The query of line `q`, the `qno`-th (from 1, for errors).
    pub fn query(&self, qno: usize, q: &QueryLine) -> Result<Query, CliError> {
        let field = self.field;
        Ok(match self.args.syntax {
            Syntax::Terms => match self.args.phrase {
                Some(slop) => Query::Phrase {
                    field,
                    text: q.text.clone(),
                    slop,
                },
                None => Query::matching(field, &q.text, self.args.op),
            },
            Syntax::Parser => Query::parse(&q.text, self.schema, &self.config)
                .map_err(|e| CliError::Failed(format!("query {qno} ({:?}): {e}", q.text)))?,
        })
    }

    /// Every line's query.
    pub fn all(&self, lines: &[QueryLine]) -> Result<Vec<Query>, CliError> {
        lines
            .iter()
            .enumerate()
            .map(|(i, q)| self.query(i + 1, q))
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Tsv,
    Json,
}

struct Args {
    dirs: Vec<String>,
    q: QueryArgs,
    /// `--stats BLOB` and `--shard-id N`: the one DIR is shard N of the
    /// corpus whose statistics BLOB holds.
    stats: Option<String>,
    shard_id: Option<u32>,
    k: usize,
    offset: usize,
    sort: Option<Vec<RawRule>>,
    total: TotalMode,
    id_field: Option<String>,
    paths: PathArgs,
    format: Format,
    /// `--highlight FIELD`, and how its excerpts are made.
    highlight: Option<String>,
    highlight_options: HighlightOptions,
}

/// The value of `--total`: `exact`, `lower-bound` or a number N (exact up
/// to N matches).
pub fn total_value(p: &mut lexopt::Parser) -> Result<TotalMode, CliError> {
    cli::choice_value(
        p,
        "--total",
        "'exact', 'lower-bound' or a number of matches to count exactly",
        TotalMode::from_name,
    )
}

fn parse(p: &mut lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let mut a = Args {
        dirs: Vec::new(),
        q: QueryArgs::default(),
        stats: None,
        shard_id: None,
        k: 10,
        offset: 0,
        sort: None,
        total: TotalMode::Exact,
        id_field: None,
        paths: PathArgs::default(),
        format: Format::Text,
        highlight: None,
        highlight_options: HighlightOptions::default(),
    };
    let mut positional = Vec::new();
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long(name) if QueryArgs::FLAGS.contains(&name) => {
                let name = name.to_owned();
                a.q.take(&name, p)?;
            }
            Long("stats") => a.stats = Some(cli::string_value(p, "--stats")?),
            Long("shard-id") => {
                a.shard_id = Some(cli::parsed_value(p, "--shard-id", "a shard number from 0")?)
            }
            Long("k") => a.k = cli::parsed_value(p, "--k", "a non-negative integer")?,
            Long("offset") => {
                a.offset = cli::parsed_value(p, "--offset", "a non-negative integer")?
            }
            Long("sort") => a.sort = Some(parse_sort(&cli::string_value(p, "--sort")?)?),
            Long("total") => a.total = total_value(p)?,
            Long("id-field") => a.id_field = Some(cli::string_value(p, "--id-field")?),
            Long("exec") => a.paths.exec = Some(exec_value(p)?),
            Long("path") => a.paths.paths.push(path_value(p)?),
            Long("search-threads") => a.paths.threads = Some(threads_value(p)?),
            Long("highlight") => a.highlight = Some(cli::string_value(p, "--highlight")?),
            Long("pre") => a.highlight_options.pre = cli::string_value(p, "--pre")?,
            Long("post") => a.highlight_options.post = cli::string_value(p, "--post")?,
            Long("highlight-ellipsis") => {
                a.highlight_options.ellipsis = cli::string_value(p, "--highlight-ellipsis")?
            }
            Long("highlight-escape") => {
                a.highlight_options.escape =
                    cli::choice_value(p, "--highlight-escape", "'none' or 'html'", |s| match s {
                        "none" => Some(Escape::None),
                        "html" => Some(Escape::Html),
                        _ => None,
                    })?
            }
            Long("highlight-len") => {
                a.highlight_options.max_bytes =
                    cli::parsed_value(p, "--highlight-len", "a positive integer")?;
                if a.highlight_options.max_bytes == 0 {
                    return Err(CliError::usage(
                        None,
                        "--highlight-len: the excerpt needs at least 1 byte",
                    ));
                }
            }
            Long("format") => {
                a.format =
                    cli::choice_value(p, "--format", "'text', 'tsv' or 'json'", |s| match s {
                        "text" => Some(Format::Text),
                        "tsv" => Some(Format::Tsv),
                        "json" => Some(Format::Json),
                        _ => None,
                    })?
            }
            Value(v) => positional.push(cli::utf8_arg(v)?),
            other => return Err(other.unexpected().into()),
        }
    }
    // With --query or --queries every positional argument is a directory;
    // without, the two are DIR and QUERY.
    if !a.q.given() {
        match positional.len() {
            0 => return Err(CliError::usage(None, "missing the index directory DIR")),
            1 => {
                return Err(CliError::usage(
                    None,
                    "give a QUERY, --query TEXT or --queries FILE.tsv",
                ));
            }
            2 => a.q.query = positional.pop(),
            _ => {
                return Err(CliError::usage(
                    None,
                    "with several index directories give the query with --query TEXT or --queries FILE.tsv",
                ));
            }
        }
    }
    if positional.is_empty() {
        return Err(CliError::usage(None, "missing the index directory DIR"));
    }
    if positional.len() > 1
        && let Some(p) = positional.iter().find(|p| !Path::new(p).is_dir())
    {
        return Err(CliError::usage(
            None,
            format!(
                "{p:?} is not a directory: with --query or --queries every positional \
                 argument is an index directory (give one query as DIR QUERY, or with --query)"
            ),
        ));
    }
    a.dirs = positional;
    a.q.finish()?;
    match (&a.stats, a.shard_id) {
        (Some(_), None) => return Err(CliError::usage(None, "--stats needs --shard-id N")),
        (None, Some(_)) => return Err(CliError::usage(None, "--shard-id needs --stats BLOB")),
        (Some(_), Some(_)) if a.dirs.len() > 1 => {
            return Err(CliError::usage(
                None,
                "--stats searches one shard: give one DIR",
            ));
        }
        _ => {}
    }
    Ok(Some(a))
}

pub fn run(p: &mut lexopt::Parser) -> Result<(), CliError> {
    cli::run_cmd(p, Cmd::Search, parse, run_args)
}

/// What to fetch from stored fields for printing.
struct Printer<'a> {
    searcher: &'a Searcher,
    id_field: Option<FieldId>,
    title_field: Option<FieldId>,
    sort: Option<&'a SortSpec>,
    /// Hits skipped (ranks count from offset + 1).
    offset: usize,
    /// The field `--highlight` names, and the excerpts' options.
    highlight: Option<(FieldId, &'a HighlightOptions)>,
    /// Whether hits name their shards (several directories, or `--stats`).
    sharded: bool,
}

impl Printer<'_> {
    /// (id, title) of a hit: the stored id value (or the doc number) and the stored title.
    fn lookup(&self, doc: u64, want_title: bool) -> Result<(Value, Option<String>), CliError> {
        let title_field = self.title_field.filter(|_| want_title);
        if self.id_field.is_none() && title_field.is_none() {
            return Ok((Value::I64(doc as i64), None));
        }
        let stored = self.searcher.stored(doc)?;
        let get = |f: Option<FieldId>| {
            f.and_then(|f| stored.iter().find(|(g, _)| *g == f).map(|(_, v)| v.clone()))
        };
        let id = get(self.id_field).unwrap_or(Value::I64(doc as i64));
        let title = get(title_field).map(|v| v.to_string());
        Ok((id, title))
    }

    /// The excerpt of a hit for `query` (`Some("")` for a document
    /// without a value of the field), when `--highlight` asks for one.
    fn excerpt(&self, query: &Query, doc: u64) -> Result<Option<String>, CliError> {
        let Some((field, options)) = self.highlight else {
            return Ok(None);
        };
        Ok(Some(
            self.searcher
                .highlight(query, doc, field, options)?
                .unwrap_or_default(),
        ))
    }

    /// The sort values of a hit as text (score values as f32).
    fn sort_text(&self, hit: &Hit, out: &mut String) {
        let Some(spec) = self.sort else { return };
        for (i, rule) in spec.rules.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            match (rule.key, hit.sort_values.get(i).and_then(|v| v.as_ref())) {
                (_, None) => {}
                (SortKey::Score, Some(Value::F64(v))) => {
                    let _ = write!(out, "{}", *v as f32);
                }
                (_, Some(v)) => write_value(v, out),
            }
        }
    }

    fn sort_json(&self, hit: &Hit) -> serde_json::Value {
        let Some(spec) = self.sort else {
            return serde_json::Value::Null;
        };
        spec.rules
            .iter()
            .enumerate()
            .map(
                |(i, rule)| match (rule.key, hit.sort_values.get(i).and_then(|v| v.as_ref())) {
                    (_, None) => serde_json::Value::Null,
                    (SortKey::Score, Some(Value::F64(v))) => f32_json(*v as f32),
                    (_, Some(v)) => value_json(v),
                },
            )
            .collect()
    }
}

/// A value for tsv and text output: strings escaped ([`cli::tsv_escape`]),
/// f64 as the shortest decimal that round-trips, in exponent form outside
/// 1e-5..1e16 (so 1e-300 is not three hundred zeros).
fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Str(s) => cli::tsv_escape(s, out),
        Value::I64(i) => {
            let _ = write!(out, "{i}");
        }
        Value::F64(f) => {
            let a = f.abs();
            if a == 0.0 || (1e-5..1e16).contains(&a) {
                let _ = write!(out, "{f}");
            } else {
                let _ = write!(out, "{f:e}");
            }
        }
    }
}

/// An f32 as a JSON number with its shortest round-trip decimal (serde_json
/// would print the f64 widening, e.g. 0.10000000149011612 for 0.1f32).
fn f32_json(x: f32) -> serde_json::Value {
    match format!("{x}").parse::<f64>() {
        Ok(v) => serde_json::json!(v),
        Err(_) => serde_json::Value::Null,
    }
}

fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Str(s) => serde_json::Value::String(s.clone()),
        Value::I64(i) => serde_json::json!(i),
        Value::F64(f) => serde_json::json!(f),
    }
}

fn run_args(a: &Args) -> Result<(), CliError> {
    let mut searcher = open_shards(&a.dirs, &a.paths)?;
    if let (Some(path), Some(shard)) = (&a.stats, a.shard_id) {
        searcher = searcher.with_stats(quarry::CorpusStats::read(path)?, shard)?;
    }
    let schema = searcher.schema().clone();
    let maker = a.q.maker(&schema)?;
    let sort = a
        .sort
        .as_ref()
        .map(|r| resolve_sort(r, &schema))
        .transpose()?;
    let id_field = match &a.id_field {
        Some(name) => {
            let id = field_id(&schema, name, "--id-field")?;
            if !schema.def(id).flags.stored {
                return Err(CliError::usage(
                    None,
                    format!("--id-field: field '{name}' is not stored"),
                ));
            }
            Some(id)
        }
        None => None,
    };
    let title_field = schema
        .field("title")
        .filter(|&f| schema.def(f).flags.stored);
    let highlight = match &a.highlight {
        Some(name) => {
            let id = field_id(&schema, name, "--highlight")?;
            let def = schema.def(id);
            if !matches!(def.ty, FieldType::Text | FieldType::String) || !def.flags.stored {
                return Err(CliError::usage(
                    None,
                    format!("--highlight: field '{name}' is not a stored text or string field"),
                ));
            }
            Some((id, &a.highlight_options))
        }
        None => None,
    };
    let queries = a.q.lines()?;
    let req = SearchRequest {
        offset: a.offset,
        limit: a.k,
        sort: sort.clone(),
        total: a.total,
    };
    let printer = Printer {
        searcher: &searcher,
        id_field,
        title_field,
        sort: sort.as_ref(),
        offset: a.offset,
        highlight,
        sharded: a.dirs.len() > 1 || a.stats.is_some(),
    };

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if a.format == Format::Tsv {
        out.write_all(tsv_header(printer.sharded, sort.is_some(), highlight.is_some()).as_bytes())?;
    }
    let mut line = String::new();
    for (i, q) in queries.iter().enumerate() {
        let qno = i + 1;
        let query = maker.query(qno, q)?;
        let hits = searcher.search(&query, &req)?;
        line.clear();
        let answer = Answer {
            qno,
            query: q,
            parsed: &query,
            hits: &hits,
        };
        match a.format {
            Format::Tsv => tsv(&printer, answer, &mut line)?,
            Format::Text => text(&printer, answer, &mut line)?,
            Format::Json => json(&printer, answer, &mut line)?,
        }
        out.write_all(line.as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// One query's page of hits, as `tsv`, `text` and `json` print it.
#[derive(Clone, Copy)]
struct Answer<'a> {
    /// The query's number (from 1) in the query file.
    qno: usize,
    query: &'a QueryLine,
    /// The query searched (for excerpts).
    parsed: &'a Query,
    hits: &'a Hits,
}

/// The columns of tsv output before the optional ones, with several
/// shards (`sharded`) or one index.
pub const TSV_COLUMNS: &str = "qno\tclass\trank\tid\tscore\tscore_bits\ttotal_hits";
/// [`TSV_COLUMNS`] of hits that name their shards.
pub const SHARD_TSV_COLUMNS: &str =
    "qno\tclass\trank\tshard\tshard_doc\tid\tscore\tscore_bits\ttotal_hits\tmerge_key";

/// The tsv header line.
fn tsv_header(sharded: bool, sorted: bool, excerpts: bool) -> String {
    let mut h = String::from(if sharded {
        SHARD_TSV_COLUMNS
    } else {
        TSV_COLUMNS
    });
    if sorted {
        h.push_str("\tsort_values");
    }
    if excerpts {
        h.push_str("\texcerpt");
    }
    h.push('\n');
    h
}

/// The line of a query without a hit on its page: rank 0, the other
/// per-hit columns `-` (or 0), `total` and an empty cell per optional
/// column (`extra`). `class` is escaped already.
pub fn tsv_no_hit(qno: &str, class: &str, total: &str, sharded: bool, extra: usize) -> String {
    let mut s = if sharded {
        format!("{qno}\t{class}\t0\t-\t-\t-\t0\t00000000\t{total}\t-")
    } else {
        format!("{qno}\t{class}\t0\t-\t0\t00000000\t{total}")
    };
    (0..extra).for_each(|_| s.push('\t'));
    s.push('\n');
    s
}

/// The total column: the count, then `+` when it is a lower bound.
pub fn total_text(total: u64, exact: bool) -> String {
    format!("{total}{}", if exact { "" } else { "+" })
}

fn tsv(pr: &Printer, a: Answer, out: &mut String) -> Result<(), CliError> {
    let Answer {
        qno, query, hits, ..
    } = a;
    let mut class = String::new();
    cli::tsv_escape(&query.class, &mut class);
    let total = total_text(hits.total_hits, hits.total_is_exact);
    if hits.hits.is_empty() {
        let extra = usize::from(pr.sort.is_some()) + usize::from(pr.highlight.is_some());
        out.push_str(&tsv_no_hit(
            &qno.to_string(),
            &class,
            &total,
            pr.sharded,
            extra,
        ));
        return Ok(());
    }
    for (r, hit) in hits.hits.iter().enumerate() {
        let (id, _) = pr.lookup(hit.doc, false)?;
        let _ = write!(out, "{qno}\t{class}\t{}\t", pr.offset + r + 1);
        if pr.sharded {
            let _ = write!(out, "{}\t{}\t", hit.shard, hit.shard_doc);
        }
        write_value(&id, out);
        let _ = write!(out, "\t{}\t{:08x}\t{total}", hit.score, hit.score.to_bits());
        if pr.sharded {
            out.push('\t');
            hex(&hit.merge_key(pr.sort), out);
        }
        if pr.sort.is_some() {
            out.push('\t');
            pr.sort_text(hit, out);
        }
        if let Some(e) = pr.excerpt(a.parsed, hit.doc)? {
            out.push('\t');
            cli::tsv_escape(&e, out);
        }
        out.push('\n');
    }
    Ok(())
}

/// `bytes` as lowercase hex digits.
fn hex(bytes: &[u8], out: &mut String) {
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

fn text(pr: &Printer, a: Answer, out: &mut String) -> Result<(), CliError> {
    let Answer {
        qno, query, hits, ..
    } = a;
    let _ = writeln!(
        out,
        "#{qno} [{}] {:?}: {} hit{}{}",
        query.class,
        query.text,
        hits.total_hits,
        if hits.total_hits == 1 { "" } else { "s" },
        if hits.total_is_exact {
            ""
        } else {
            " (at least)"
        },
    );
    if hits.hits.is_empty() {
        out.push_str("    (no hits)\n");
    }
    for (r, hit) in hits.hits.iter().enumerate() {
        let (id, title) = pr.lookup(hit.doc, true)?;
        let _ = write!(out, "{:5}. id ", pr.offset + r + 1);
        write_value(&id, out);
        if pr.sharded {
            let _ = write!(out, "  shard {}", hit.shard);
        }
        let _ = write!(out, "  score {}", hit.score);
        if pr.sort.is_some() {
            out.push_str("  sort ");
            pr.sort_text(hit, out);
        }
        if let Some(t) = title {
            let _ = write!(out, "  {t}");
        }
        out.push('\n');
        if let Some(e) = pr.excerpt(a.parsed, hit.doc)? {
            let _ = writeln!(out, "       {}", e.replace('\n', " "));
        }
    }
    Ok(())
}

fn json(pr: &Printer, a: Answer, out: &mut String) -> Result<(), CliError> {
    let Answer {
        qno, query, hits, ..
    } = a;
    let mut list = Vec::with_capacity(hits.hits.len());
    for (r, hit) in hits.hits.iter().enumerate() {
        let (id, title) = pr.lookup(hit.doc, true)?;
        let mut h = serde_json::json!({
            "rank": pr.offset + r + 1,
            "doc": hit.doc,
            "id": value_json(&id),
            "score": f32_json(hit.score),
            "score_bits": format!("{:08x}", hit.score.to_bits()),
        });
        if pr.sharded {
            let mut key = String::new();
            hex(&hit.merge_key(pr.sort), &mut key);
            h["shard"] = serde_json::json!(hit.shard);
            h["shard_doc"] = serde_json::json!(hit.shard_doc);
            h["merge_key"] = serde_json::Value::String(key);
        }
        if let Some(t) = title {
            h["title"] = serde_json::Value::String(t);
        }
        if pr.sort.is_some() {
            h["sort_values"] = pr.sort_json(hit);
        }
        if let Some(e) = pr.excerpt(a.parsed, hit.doc)? {
            h["excerpt"] = serde_json::Value::String(e);
        }
        list.push(h);
    }
    let v = serde_json::json!({
        "qno": qno,
        "class": query.class,
        "query": query.text,
        "total_hits": hits.total_hits,
        "total_is_exact": hits.total_is_exact,
        "hits": list,
    });
    let _ = writeln!(out, "{v}");
    Ok(())
}
